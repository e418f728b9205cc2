// The teo tick study (experiments/teo_tick/): the work counter and its
// work_rate metric, the frames fps / jank % metrics, the cluster residency
// metrics, and the two study scenarios under each teo version. Expected
// values are worked out beside each check.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "experiment_test_util.h"
#include "experiments/lib/metrics.h"
#include "experiments/lib/runner.h"
#include "models/config/config.h"
#include "models/metrics/rpm_frame_recorder.h"
#include "sched_test_util.h"
#include "sim/rng.h"

using namespace schedlab;
using namespace schedlab::testing;

namespace {

// One CPU of capacity 1024 whose userspace governor holds it at 500 of
// 1000 MHz: work runs at half speed (rate 2^19 per ns), exactly.
ScenarioParams half_speed_cpu() {
  ScenarioParams p = exact_scenario("6.12", 1000, 1);
  // An energy model, so EAS has one (no warning).
  ClusterParams c = cluster_1024("solo", 1, {{500000, 600000, 0}, {1000000, 800000, 0}});
  c.cpufreq_governor = "userspace";
  c.userspace_freq_khz = 500000;
  p.platform.name = "half";
  p.platform.clusters = {c};
  p.platform.cpus = 1;
  p.duration = Time::ms(50);
  return p;
}

std::optional<double> metric(const RunResult& r, const std::string& text) {
  std::string why;
  auto name = parse_metric_name(text, &why);
  INFO(why);
  REQUIRE(name);
  return RunMetrics(r).value(*name);
}

}  // namespace

TEST_CASE("a task running 3 ms of work at half speed is credited 3 ms of work", "[teo_study][metrics]") {
  SECTION("a run event: 3 ms of work takes 6 ms and counts 3 ms") {
    ScenarioParams p = half_speed_cpu();
    p.tasks = {task("t", {ev_run(Time::ms(3)), ev_sleep(Time::ms(100))})};
    const RunResult r = run_result(p);
    const TaskMetrics& t = metrics_of(r, "t");
    CHECK(t.cpu_time == Time::ms(6));       // 3 ms of work at rate 1/2
    CHECK(t.work_done == 3'000'000);        // capacity-ns
    // 3 ms of work in a 50 ms window: 0.06 work-seconds per second.
    CHECK(*metric(r, "task:t.work_rate") == Approx(0.06));
    CHECK(*metric(r, "group:t.work_done_s") == Approx(0.003));
  }
  SECTION("a window starting inside the burst counts only the part after it") {
    // Warmup 2 ms: the burst runs [0, 6 ms); (6 - 2) ms at half speed = 2 ms
    // of work in the window, over a 48 ms window.
    ScenarioParams p = half_speed_cpu();
    p.warmup = Time::ms(2);
    p.tasks = {task("t", {ev_run(Time::ms(3)), ev_sleep(Time::ms(100))})};
    const RunResult r = run_result(p);
    CHECK(metrics_of(r, "t").work_done == 2'000'000);
    CHECK(*metric(r, "task:t.work_rate") == Approx(2.0 / 48.0));
  }
  SECTION("a window ending inside the burst counts the part before it") {
    // Duration 4 ms: 4 ms at half speed = 2 ms of work, 1 ms still to do.
    ScenarioParams p = half_speed_cpu();
    p.duration = Time::ms(4);
    p.tasks = {task("t", {ev_run(Time::ms(3)), ev_sleep(Time::ms(100))})};
    CHECK(metrics_of(run_result(p), "t").work_done == 2'000'000);
  }
  SECTION("a runtime event counts what it executed in its wall time") {
    // runtime 4 ms: busy 4 ms of wall time at half speed = 2 ms of work.
    ScenarioParams p = half_speed_cpu();
    EventSpec rt;
    rt.kind = EventSpec::Kind::kRuntime;
    rt.duration = Time::ms(4);
    p.tasks = {task("t", {rt, ev_sleep(Time::ms(100))})};
    CHECK(metrics_of(run_result(p), "t").work_done == 2'000'000);
  }
  SECTION("two tasks sharing the CPU split its work, and their group adds up") {
    // Two instances of a 3 ms burst share one CPU at half speed: both finish
    // by 12 ms, 3 ms of work each, 6 ms together; the CPU did 12 ms x 1/2.
    ScenarioParams p = half_speed_cpu();
    TaskSpec t = task("w", {ev_run(Time::ms(3)), ev_sleep(Time::ms(100))});
    t.instances = 2;
    p.tasks = {t};
    const RunResult r = run_result(p);
    CHECK(metrics_of(r, "w-0").work_done == 3'000'000);
    CHECK(metrics_of(r, "w-1").work_done == 3'000'000);
    CHECK(*metric(r, "group:w.work_rate") == Approx(6.0 / 50.0));
  }
}

TEST_CASE("fps and jank % come from a layer's presented and missed frames", "[teo_study][metrics]") {
  RunResult r;
  r.window_start = Time::s(1);
  r.window_end = Time::s(3);  // a 2 s window
  FrameMetrics f;
  f.layer = "feed";
  f.frames = 200;
  f.dropped = 20;
  f.app_missed = 10;
  f.sf_missed = 6;
  f.janky = 14;  // 2 frames missed both deadlines
  r.frames = {f};
  CHECK(*metric(r, "frames:feed.fps") == Approx(90.0));       // (200 - 20) / 2 s
  CHECK(*metric(r, "frames:feed.jank_pct") == Approx(7.0));   // 14 / 200
  CHECK(*metric(r, "frames:feed.janky") == Approx(14.0));
  CHECK(*metric(r, "frames:feed.app_missed_pct") == Approx(5.0));
  CHECK_FALSE(metric(r, "frames:other.fps").has_value());     // n/a, not 0

  SECTION("pooled over runs: every run's frames over every run's window") {
    RunResult r2 = r;
    r2.frames[0].frames = 100;
    r2.frames[0].dropped = 0;
    r2.frames[0].janky = 1;
    std::string why;
    auto fps = parse_metric_name("frames:feed.fps", &why);
    auto jank = parse_metric_name("frames:feed.jank_pct", &why);
    REQUIRE(fps);
    REQUIRE(jank);
    CHECK(*pooled_metric_value({r, r2}, *fps) == Approx(280.0 / 4.0));   // (180 + 100) / (2 + 2) s
    CHECK(*pooled_metric_value({r, r2}, *jank) == Approx(100.0 * 15.0 / 300.0));
  }
  SECTION("the recorder sums FrameTimeline's verdicts: a frame that missed both deadlines is janky once") {
    RpmFrameRecorder rec(Time::zero());
    FrameEvent e;
    e.layer = "feed";
    e.vsync = Time::ms(10);
    e.app_end = Time::ms(20);
    e.app_missed = true;
    e.sf_missed = true;
    e.janky = true;
    rec.on_frame(Time::ms(30), e);
    e.sf_missed = false;
    rec.on_frame(Time::ms(40), e);
    e.app_missed = false;
    e.janky = false;
    e.buffer_stuffing = true;  // Buffer Stuffing alone: not janky
    rec.on_frame(Time::ms(50), e);
    RunResult out;
    rec.fill(out, Time::ms(60));
    REQUIRE(out.frames.size() == 1);
    CHECK(out.frames[0].frames == 3);
    CHECK(out.frames[0].janky == 2);
    CHECK(out.frames[0].app_missed == 2);
    CHECK(out.frames[0].sf_missed == 1);
    CHECK(out.frames[0].buffer_stuffing == 1);
  }
}

TEST_CASE("cluster residency metrics add up the cluster's CPUs per cpu_idle state, -1 running",
          "[teo_study][metrics]") {
  RunResult r;
  r.window_start = Time::zero();
  r.window_end = Time::s(10);
  auto cpu = [](Time running, std::vector<Time> states, Time busy, double energy) {
    CpuMetrics c;
    c.cpuidle_running = running;
    c.cpuidle_residency = std::move(states);
    c.busy = busy;
    c.busy_energy_mj = energy;
    return c;
  };
  // little: CPUs 0 and 1; big: CPU 2 (only a state 0 was ever recorded).
  r.cpus = {cpu(Time::s(2), {Time::s(5), Time::s(3)}, Time::s(2), 100.0),
            cpu(Time::s(1), {Time::s(1), Time::s(8)}, Time::s(1), 50.0),
            cpu(Time::s(4), {Time::s(6)}, Time::s(4), 900.0)};
  ClusterMetrics little, big;
  little.name = "little";
  little.cpus = {0, 1};
  little.cpu_energy_mj = 150.0;
  little.static_energy_mj = 50.0;
  big.name = "big";
  big.cpus = {2};
  big.cpu_energy_mj = 900.0;
  r.clusters = {little, big};
  CHECK(*metric(r, "cluster:little.residency_s.-1") == Approx(3.0));   // 2 + 1
  CHECK(*metric(r, "cluster:little.residency_s.0") == Approx(6.0));    // 5 + 1
  CHECK(*metric(r, "cluster:little.residency_s.1") == Approx(11.0));   // 3 + 8
  CHECK(*metric(r, "cluster:big.residency_s.1") == Approx(0.0));       // never entered
  CHECK(*metric(r, "cluster:big.residency_s.-1") == Approx(4.0));
  CHECK(*metric(r, "cluster:little.busy_s") == Approx(3.0));
  CHECK(*metric(r, "cluster:little.energy_mj") == Approx(200.0));      // CPUs + static
  CHECK(*metric(r, "cluster:little.avg_power_mw") == Approx(20.0));    // 200 mJ / 10 s
  CHECK_FALSE(metric(r, "cluster:mid.residency_s.0").has_value());     // no such cluster: n/a

  std::string why;
  CHECK_FALSE(parse_metric_name("cluster:little.residency_s.x", &why));
  CHECK_THAT(why, Catch::Contains("unknown cluster field 'residency_s.x'"));
  CHECK_THAT(why, Catch::Contains("residency_s.-1"));
  const auto m = parse_metric_name("cluster:little.residency_s.-1", &why);
  REQUIRE(m);
  CHECK(m->scope == MetricScope::kCluster);
  CHECK(m->object == "little");
  CHECK(metric_unit(*m) == MetricUnit::kSeconds);
}

TEST_CASE("the teo study scenarios run under each teo version and conserve time", "[teo_study]") {
  const std::string governor =
      GENERATE(std::string("teo"), std::string("teo_tick"), std::string("teo_tick_rfc"), std::string("teo_v6.12"),
               std::string("teo_v6.18"));
  const std::string file = GENERATE(std::string("geekbench6_gs101"), std::string("jetnews_gs101"));
  CAPTURE(governor, file);
  ScenarioParams p = load_scenario_file(repo_path("configs/scenarios/" + file + ".yaml"));
  p.kernel.cpuidle_governor = governor;
  // Geekbench: past the first single-core workload (2 s), its gap (5 s) and
  // into the multi-core workload; JetNews: two flings.
  p.duration = file == "geekbench6_gs101" ? Time::s(9) : Time::s(4);
  p.warmup = Time::ms(500);
  System sys(p, 7);
  sys.run();
  const RunResult r = sys.result();
  const Time elapsed = r.elapsed();
  REQUIRE(r.cpus.size() == 8);
  for (size_t c = 0; c < r.cpus.size(); ++c) {
    CAPTURE(c);
    const CpuMetrics& m = r.cpus[c];
    CHECK(m.busy + m.idle == elapsed);
    Time in_states = m.cpuidle_running;
    for (Time t : m.cpuidle_residency) in_states += t;
    CHECK(in_states == elapsed);
    CHECK(m.cpuidle_residency.size() == 2);  // gs101: WFI and c2, no cluster states
  }
  if (file == "geekbench6_gs101") {
    // The single-core workload runs for 2 s of CPU time from t = 0, part of
    // it before the window (how much depends on where it waited), on a CPU
    // of capacity <= 1024 at <= f_max: some work, at most its CPU time in
    // the window, which is at most 2 s.
    const TaskMetrics& sc = metrics_of(r, "AsyncTask_1");
    CHECK(sc.work_done > 0);
    CHECK(sc.cpu_time > Time::zero());
    CHECK(sc.cpu_time <= Time::s(2));
    CHECK(sc.work_done <= sc.cpu_time.count());
    int64_t mc = 0;
    for (const TaskMetrics& t : r.tasks)
      if (t.group == "gb_mc") mc += t.work_done;
    CHECK(mc > 0);  // the multi-core workload started at 7 s
    // No task executes more work than its time on a CPU at capacity 1024 and f_max.
    for (const TaskMetrics& t : r.tasks) CHECK(t.work_done <= t.cpu_time.count());
  } else {
    REQUIRE(r.frames.size() == 1);
    CHECK(r.frames[0].layer == "jetnews");
    CHECK(r.frames[0].frames > 200);  // 90 Hz over about 3.3 s of flings
    CHECK(*metric(r, "frames:jetnews.fps") > 0);
  }
}

TEST_CASE("the teo study experiments load with the thread's three kernels and three later ones", "[teo_study]") {
  for (const char* f : {"configs/experiments/teo_tick_geekbench.yaml", "configs/experiments/teo_tick_jetnews.yaml"}) {
    CAPTURE(f);
    const ExperimentSpec e = load_experiment_file(repo_path(f));
    REQUIRE(e.variants.size() == 6);
    CHECK(e.variants[0].name == "teo");
    CHECK(e.variants[1].name == "teo_tick");
    CHECK(e.variants[2].name == "teo_tick_rfc");
    CHECK(e.variants[3].name == "teo_v6.6");
    CHECK(e.variants[4].name == "teo_v6.12");
    CHECK(e.variants[5].name == "teo_v6.18");
    CHECK_FALSE(e.published.empty());
  }
}

TEST_CASE("the gs201 idle-power what-if puts each figure on gs101's OPP of that frequency", "[teo_study][energy]") {
  // gs201's pixel-em idle_power (uW) at the frequencies gs101 shares with it.
  const std::vector<std::vector<std::pair<uint64_t, double>>> expect = {
      {{300000, 2}, {1098000, 2}, {1197000, 3}, {1598000, 4}, {1803000, 5}},
      {{400000, 4}, {553000, 5}, {1328000, 7}, {1836000, 11}, {2253000, 19}},
      {{500000, 15}, {851000, 17}, {1826000, 29}, {2401000, 48}, {2802000, 83}}};
  const ScenarioParams p = load_scenario_with_overlays(
      repo_path("configs/scenarios/geekbench6_gs101.yaml"),
      load_overlay_file(repo_path("configs/overlays/gs101_idle_power_gs201.yaml")), "what-if");
  REQUIRE(p.platform.clusters.size() == 3);
  CHECK(p.warnings.empty());  // every idle power below gs101's C * V^2 * f at its OPP
  for (size_t c = 0; c < 3; ++c) {
    const ClusterParams& cl = p.platform.clusters[c];
    CAPTURE(cl.name);
    CHECK(cl.bill_idle_transitions);
    for (size_t i = 0; i < cl.opps.size(); ++i) {
      CHECK(cl.opps[i].idle_power_mw > 0);
      if (i > 0) CHECK(cl.opps[i].idle_power_mw >= cl.opps[i - 1].idle_power_mw);  // rises with the voltage
    }
    for (const auto& [khz, mw] : expect[c]) {
      CAPTURE(khz);
      const auto it = std::find_if(cl.opps.begin(), cl.opps.end(), [&](const Opp& o) { return o.freq_khz == khz; });
      REQUIRE(it != cl.opps.end());
      CHECK(it->idle_power_mw == mw);
    }
  }
}

// Regression (run 0 of the study's teo_tick Geekbench variant): a gb_mc
// worker blocked at the mc_step barrier on a little CPU at a tick, and in
// that instant the nohz balance it kicked active-balanced it as misfit to a
// big CPU before __schedule() had dequeued it. It ran on past the barrier,
// arrived twice in one generation, and from 9.4 s the barrier never
// released: AsyncTask_1 waited at mc_end for good. A task that has just
// blocked is not active-balanced (the kernel's stopper finds it dequeued),
// so the workload completes and AsyncTask_1 starts its next single-core
// workload after the 5 s gap.
TEST_CASE("a worker that just blocked at a barrier is not active-balanced past it", "[teo_study][balance]") {
  ScenarioParams p = load_scenario_file(repo_path("configs/scenarios/geekbench6_gs101.yaml"));
  p.kernel.cpuidle_governor = "teo_tick";
  p.duration = Time::s(16);
  const uint64_t seed = derive_seed(1, 0);  // the experiment's seed, run 0
  const SwitchLog log = run_logged<SwitchLog>(with_start_jitter(p, Time::s(1), seed), seed);
  CHECK(log.first_run("gb_mc-2", Time::s(9)) < Time::ms(9400));  // the last generation runs
  CHECK(log.first_run("AsyncTask_1", Time::s(14)) < Time::s(16));  // past mc_end and the gap
}
