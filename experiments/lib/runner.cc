#include "experiments/lib/runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <stdexcept>

#include "experiments/lib/parallel.h"
#include "models/config/config.h"
#include "models/system.h"
#include "sim/log.h"
#include "sim/rng.h"

namespace schedlab {

namespace {

const char* preempt_name(PreemptModel m) {
  switch (m) {
    case PreemptModel::kNone: return "none";
    case PreemptModel::kVoluntary: return "voluntary";
    case PreemptModel::kFull: return "full";
    case PreemptModel::kLazy: return "lazy";
  }
  return "?";
}

// The scenario's own name when ScenarioParams carries one (the YAML `name`
// key), else the file stem of its source.
template <typename P>
std::string scenario_name(const P& params) {
  if constexpr (requires { params.name; }) {
    if (!params.name.empty()) return params.name;
  }
  if (params.source.empty()) return "scenario";
  std::string stem = std::filesystem::path(params.source).stem().string();
  return stem.empty() ? std::string("scenario") : stem;
}

}  // namespace

ScenarioParams effective_params(const ScenarioParams& params, const RunOptions& options) {
  ScenarioParams p = params;
  if (options.duration) p.duration = *options.duration;
  if (options.warmup) p.warmup = *options.warmup;
  if (options.seed) p.seed = *options.seed;
  return p;
}

ScenarioInfo scenario_info(const ScenarioParams& params) {
  ScenarioInfo info;
  info.source = params.source;
  info.name = scenario_name(params);
  info.kernel_version = params.kernel.version;
  info.hz = params.kernel.hz;
  info.preempt = preempt_name(params.kernel.preempt);
  info.cpus = params.platform.cpus;
  info.duration = params.duration;
  info.warmup = params.warmup;
  const KernelParams& k = params.kernel;
  info.overheads_modelled = k.context_switch_cost > Time::zero() || k.wakeup_cost > Time::zero() ||
                            k.ipi_latency > Time::zero();
  return info;
}

ScenarioParams with_start_jitter(const ScenarioParams& params, Time jitter, uint64_t run_seed) {
  if (jitter <= Time::zero()) return params;
  ScenarioParams p = params;
  for (TaskSpec& t : p.tasks) {
    if (!t.start_jitter) continue;  // in phase with something the jitter does not move
    RngStream rng(run_seed, "start_jitter/" + t.name);
    t.delay += Time::ns(rng.uniform_int(0, jitter.count() - 1));
  }
  return p;
}

bool runs_identical(const RunSet& set) {
  if (set.runs.empty()) return true;
  const RunResult& first = set.runs.front();
  auto same_tasks = [](const TaskMetrics& a, const TaskMetrics& b) {
    return a.cpu_time == b.cpu_time && a.runnable_time == b.runnable_time && a.sleep_time == b.sleep_time &&
           a.blocked_time == b.blocked_time && a.wakeups == b.wakeups && a.switches_in == b.switches_in;
  };
  auto same_cpus = [](const CpuMetrics& a, const CpuMetrics& b) {
    return a.busy == b.busy && a.context_switches == b.context_switches;
  };
  for (const RunResult& r : set.runs) {
    if (r.tasks.size() != first.tasks.size() || r.cpus.size() != first.cpus.size()) return false;
    if (!std::equal(r.tasks.begin(), r.tasks.end(), first.tasks.begin(), same_tasks)) return false;
    if (!std::equal(r.cpus.begin(), r.cpus.end(), first.cpus.begin(), same_cpus)) return false;
  }
  return true;
}

void report_warnings(const std::vector<ScenarioParams>& params, const std::function<void(const std::string&)>& warn,
                     bool strict) {
  std::set<std::string> seen;
  for (const ScenarioParams& p : params)
    for (const config::ConfigWarning& w : p.warnings)
      if (std::string text = w.text(); seen.insert(text).second && warn) warn(text);
  if (strict && !seen.empty())
    throw StrictWarningsError(fmt::format("--strict: nothing was run ({} warning{} above)",
                                          seen.size(), seen.size() == 1 ? "" : "s"));
}

void check_start_jitter(Time jitter, const SourcePos& origin, const ScenarioParams& params, const std::string& label) {
  if (jitter <= Time::zero() || jitter < params.duration) return;
  throw ConfigError(origin.file, origin.line, origin.column, "start_jitter",
                    fmt::format("{} is not shorter than the run ({}) of {}: tasks would start after it ended",
                                format_time(jitter), format_time(params.duration), label));
}

RunResult simulate_run(const ScenarioParams& params, uint64_t seed, const std::vector<SchedObserver*>& observers,
                       WakeGraph* wake, std::string_view label, bool why) {
  SL_DEBUG("=== {}{}{}, seed {} ===", params.name, label.empty() ? "" : ", ", label, seed);
  RunResult result;
  std::optional<WakeGraphRecorder> wake_recorder;
  {
    System system(params, seed);
    if (why) system.count_decisions();
    for (SchedObserver* o : observers) system.add_observer(o);
    if (wake) {
      wake_recorder.emplace(params.warmup);
      system.add_observer(&*wake_recorder);
    }
    system.run();
    result = system.result();
  }
  result.seed = seed;
  if (wake) *wake = wake_recorder->graph();
  return result;
}

RunSet run_scenario(const ScenarioParams& params_in, const RunOptions& options) {
  if (options.runs < 1) throw std::invalid_argument(fmt::format("runs must be at least 1 (got {})", options.runs));
  const ScenarioParams params = effective_params(params_in, options);
  if (params.duration <= params.warmup)
    throw std::invalid_argument(fmt::format("duration {} is not longer than the warmup {}", format_time(params.duration),
                                            format_time(params.warmup)));

  RunSet set;
  set.scenario = scenario_info(params);
  set.base_seed = params.seed;
  set.start_jitter = options.start_jitter;
  const size_t n = static_cast<size_t>(options.runs);
  set.runs.resize(n);
  std::vector<WakeGraph> wakes(options.wakegraph ? n : 0);
  int done = 0;
  parallel_for(
      n, options.jobs,
      [&](size_t i) {
        const uint64_t seed = derive_seed(set.base_seed, static_cast<uint64_t>(i));
        std::vector<SchedObserver*> observers;
        if (i == 0) observers = options.run0_observers;
        set.runs[i] = simulate_run(with_start_jitter(params, options.start_jitter, seed), seed, observers,
                                   options.wakegraph ? &wakes[i] : nullptr, fmt::format("run {}", i), options.why);
      },
      [&](size_t) {
        ++done;
        if (options.progress) options.progress(done, options.runs);
      });
  if (options.wakegraph) {
    *options.wakegraph = WakeGraph{};
    for (const WakeGraph& w : wakes) options.wakegraph->merge(w);
  }
  set.aggregate = aggregate_runs(set.runs);
  return set;
}

}  // namespace schedlab
