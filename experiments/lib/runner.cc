#include "experiments/lib/runner.h"

#include <fmt/format.h>

#include <filesystem>
#include <stdexcept>

#include "models/system.h"
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
  return info;
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
  set.runs.reserve(static_cast<size_t>(options.runs));
  for (int i = 0; i < options.runs; ++i) {
    const uint64_t seed = derive_seed(set.base_seed, static_cast<uint64_t>(i));
    RunResult result;
    {
      System system(params, seed);
      if (i == 0 && options.trace) system.add_observer(options.trace);
      system.run();
      result = system.result();
    }
    result.seed = seed;
    set.runs.push_back(std::move(result));
    if (options.progress) options.progress(i + 1, options.runs);
  }
  set.aggregate = aggregate_runs(set.runs);
  return set;
}

}  // namespace schedlab
