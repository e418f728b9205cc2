// Runs a scenario N times and aggregates the results.
//
// Seeds: run i uses derive_seed(base_seed, i) (sim/rng.h) for every i,
// including run 0 of a single run, so the result of a given run index does
// not depend on how many runs were asked for: `--runs 1` reproduces run 0 of
// `--runs 10` exactly.
//
// Tracing: only run 0 is traced. One trace of one run is what a viewer can
// show; the other runs feed the statistics.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "experiments/lib/aggregate.h"
#include "models/kernel/sched/observer.h"
#include "models/scenario.h"
#include "sim/time.h"

namespace schedlab {

struct RunOptions {
  std::optional<uint64_t> seed;      // base seed; default: the scenario's seed
  int runs = 1;                      // N >= 1
  std::optional<Time> duration;      // overrides the scenario's duration
  SchedObserver* trace = nullptr;    // attached to run 0 only
  // Called after each run with (runs done, runs total).
  std::function<void(int, int)> progress;
};

// The scenario with the options' overrides applied (what is actually run).
ScenarioParams effective_params(const ScenarioParams& params, const RunOptions& options);
ScenarioInfo scenario_info(const ScenarioParams& params);

// Throws ModelError for parameters the model rejects, std::invalid_argument
// for options out of range (runs < 1, duration <= warmup).
RunSet run_scenario(const ScenarioParams& params, const RunOptions& options);

}  // namespace schedlab
