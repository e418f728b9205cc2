// schedlab_bench_sweep: the experiment engine's parallel speed-up.
//
// 2 variants (RUN_TO_PARITY on / off) x 100 runs of the standard 2-CPU,
// 10-task scenario (configs/scenarios/mixed_2cpu.yaml, its own 10 s per
// run, 16.666 ms start jitter), run through run_comparison() once with one
// thread and once with two; prints the wall times, the speed-up (target
// >= 1.8x on 2 cores) and whether both gave the same JSON report (they
// must: results are gathered by index).
//
// Output is ONE line on stdout:
//   sweep-bench: variants=2 runs=100 sim_s=2000 reps=3 wall_s_j1=.. wall_s_j2=.. speedup=.. (target >= 1.8) identical=yes
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <string>

#include "experiments/lib/compare.h"
#include "experiments/lib/report_compare.h"
#include "sim/memory.h"

namespace {

using Clock = std::chrono::steady_clock;

schedlab::ExperimentSpec make_spec(int runs) {
  schedlab::ExperimentSpec s;
  s.name = "bench_sweep";
  s.source = "bench_sweep";
  s.scenario = std::string(SCHEDLAB_SOURCE_DIR) + "/configs/scenarios/mixed_2cpu.yaml";
  s.runs = runs;
  s.seed = 1;
  s.start_jitter = schedlab::Time::us(16666);
  s.variants = {{"rtp_on", "", {{"kernel.features.RUN_TO_PARITY", "true", {}}}, {}},
                {"rtp_off", "", {{"kernel.features.RUN_TO_PARITY", "false", {}}}, {}}};
  s.metrics = {{"group:*.wakeup_latency.mean", {}}, {"group:*.wakeup_latency.p99", {}}, {"group:*.cpu_share", {}}};
  return s;
}

struct Timed {
  double seconds;
  std::string json;
};

Timed run(const schedlab::ExperimentSpec& spec, int jobs) {
  schedlab::CompareOptions o;
  o.jobs = jobs;
  const auto t0 = Clock::now();
  const schedlab::Comparison c = schedlab::run_comparison(spec, o);
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  return {s, schedlab::render_compare_json(c)};
}

}  // namespace

int main(int argc, char** argv) {
  schedlab::retain_freed_memory();  // as the schedlab CLI does
  int runs = 100, reps = 3;
  for (int i = 1; i < argc; ++i) {
    if ((!std::strcmp(argv[i], "--runs") || !std::strcmp(argv[i], "--reps")) && i + 1 < argc) {
      int& target = argv[i][3] == 'u' ? runs : reps;
      target = std::atoi(argv[++i]);
      if (target < 1) {
        std::fprintf(stderr, "schedlab_bench_sweep: %s needs a positive integer\n", argv[i - 1]);
        return 2;
      }
    } else {
      std::fprintf(stderr, "usage: schedlab_bench_sweep [--runs N] [--reps R]   (default 100 runs per variant, 3 reps)\n");
      return std::strcmp(argv[i], "--help") ? 2 : 0;
    }
  }
  try {
    const schedlab::ExperimentSpec spec = make_spec(runs);
    double best1 = 1e300, best2 = 1e300;
    std::string json;
    bool identical = true;
    for (int r = 0; r < reps; ++r) {
      for (int jobs : {1, 2}) {
        const Timed t = run(spec, jobs);
        (jobs == 1 ? best1 : best2) = std::min(jobs == 1 ? best1 : best2, t.seconds);
        if (json.empty()) json = t.json;
        identical = identical && t.json == json;
      }
    }
    std::printf("sweep-bench: variants=2 runs=%d sim_s=%d reps=%d wall_s_j1=%.3f wall_s_j2=%.3f speedup=%.2f "
                "(target >= 1.8) identical=%s\n",
                runs, 2 * runs * 10, reps, best1, best2, best1 / best2, identical ? "yes" : "NO");
    return identical ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "schedlab_bench_sweep: %s\n", e.what());
    return 1;
  }
}
