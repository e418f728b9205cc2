// Runs a scenario N times and aggregates the results.
//
// Seeds: run i uses derive_seed(base_seed, i) (sim/rng.h) for every i,
// including run 0 of a single run, so the result of a given run index does
// not depend on how many runs were asked for: `--runs 1` reproduces run 0 of
// `--runs 10` exactly.
//
// Parallelism: runs are independent and go to `jobs` threads; results are
// gathered by run index, so every output is identical for every -j.
//
// Tracing: only run 0 is traced. One trace of one run is what a viewer can
// show; the other runs feed the statistics.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "experiments/lib/aggregate.h"
#include "experiments/lib/wakegraph.h"
#include "models/kernel/sched/observer.h"
#include "models/scenario.h"
#include "models/config/experiment_params.h"
#include "sim/time.h"

namespace schedlab {

struct RunOptions {
  std::optional<uint64_t> seed;      // base seed; default: the scenario's seed
  int runs = 1;                      // N >= 1
  std::optional<Time> duration;      // overrides the scenario's duration
  std::optional<Time> warmup;        // overrides the scenario's warmup
  bool why = false;                  // count decisions by reason (RunResult::decisions)
  std::vector<SchedObserver*> run0_observers;  // trace writers: attached to run 0 only
  int jobs = 1;                      // threads
  Time start_jitter = Time::zero();  // see with_start_jitter()
  WakeGraph* wakegraph = nullptr;    // when set: filled with the wake graph of all runs
  // Called after each run with (runs done, runs total), from one thread at a time.
  std::function<void(int, int)> progress;
};

// The scenario with the options' overrides applied (what is actually run).
ScenarioParams effective_params(const ScenarioParams& params, const RunOptions& options);
ScenarioInfo scenario_info(const ScenarioParams& params);

// Start jitter: every task spec's start `delay` grows by a random time in
// [0, jitter), drawn from the run's seed and the task's name (so a variant
// that adds or drops a task does not move the others); a spec with
// `start_jitter: false` keeps its delay (in phase with a device, e.g. the
// display's animations, which the jitter does not move). The model itself is
// deterministic: without jitter every run of a scenario is identical, and
// intervals over runs collapse to points. With it, runs see different
// phase relations between periodic tasks, as repeated boots of a device do.
ScenarioParams with_start_jitter(const ScenarioParams& params, Time jitter, uint64_t run_seed);

// Whether every run of `set` has run 0's schedule: the same CPU, runnable
// and sleep time, wake-ups and switches for every task, and the same busy
// time and switches on every CPU (a scenario nothing random enters).
bool runs_identical(const RunSet& set);

// Thrown by report_warnings() under --strict, after every warning went out:
// the command stops before any run, with exit code 2.
struct StrictWarningsError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Calls `warn` once for each distinct loader warning of `params` (variants
// or sweep points share most of theirs), in order of first appearance
// (`warn` may be empty). With `strict`, a StrictWarningsError follows if there was any.
void report_warnings(const std::vector<ScenarioParams>& params, const std::function<void(const std::string&)>& warn,
                     bool strict = false);

// A jitter not shorter than the run would start tasks after it ended (and
// drop them from every table): a ConfigError at `origin`, naming the run
// (`label`: "variant 'x'", "sweep point p000003 (...)"). The experiment
// file checks its own duration when it loads; this catches what changes
// it later (--duration, --set-file).
void check_start_jitter(Time jitter, const SourcePos& origin, const ScenarioParams& params, const std::string& label);

// One run: System with the seed, observers attached, run, result. Throws
// ModelError like System. `wake` (optional) receives the run's wake graph.
// `label` names the run in the debug log's header line ("run 3",
// "variant highpri, run 3"), so that one log of many runs can be read.
// `why`: count the kernel's decisions by reason (RunResult::decisions).
RunResult simulate_run(const ScenarioParams& params, uint64_t seed, const std::vector<SchedObserver*>& observers = {},
                       WakeGraph* wake = nullptr, std::string_view label = {}, bool why = false);

// Throws ModelError for parameters the model rejects, std::invalid_argument
// for options out of range (runs < 1, duration <= warmup).
RunSet run_scenario(const ScenarioParams& params, const RunOptions& options);

}  // namespace schedlab
