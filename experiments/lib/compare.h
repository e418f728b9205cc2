// `schedlab compare`: every variant of an experiment x every run, in
// parallel, then per metric the variants' means over runs and each
// variant's change against the baseline with a paired bootstrap interval
// (bootstrap.h), and the "who pays" rows: every task group's wakeup
// latency mean and P99 and CPU share, plus total power and energy.
#pragma once

#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "experiments/lib/aggregate.h"
#include "experiments/lib/bootstrap.h"
#include "experiments/lib/metrics.h"
#include "experiments/lib/wakegraph.h"
#include "models/config/experiment_params.h"
#include "models/scenario.h"

namespace schedlab {

struct CompareOptions {
  int jobs = 1;
  std::optional<int> runs;  // overrides the experiment's runs
  bool wakegraph = false;
  bool why = false;  // count the kernel's decisions by reason (RunResult::decisions)
  // (runs done, runs total) after each run, one thread at a time.
  std::function<void(size_t, size_t)> progress;
  // Each distinct warning of loading the variants' scenarios, before any run.
  std::function<void(const std::string&)> warning;
  bool strict = false;  // --strict: a warning stops the command before any run
};

// One metric in one variant.
struct MetricCell {
  std::vector<std::optional<double>> values;  // per run (nullopt: nothing measured in that run)
  int n = 0;                                  // runs with a value
  double mean = NAN, sd = 0, min = NAN, max = NAN;
  Change change;          // against the baseline (variants after the first)
  std::string published;  // as written in the experiment, or empty
  std::optional<double> pooled;  // drm:/wq:/rpm:/frames: the statistic over all runs' samples pooled
  // The pooled statistic's change against the baseline's (variants after
  // the first), its interval bootstrapping the pooled statistic itself.
  std::optional<Change> pooled_change;
};

struct MetricRow {
  Metric metric;
  std::vector<MetricCell> cells;  // per variant, baseline first
};

// The trade-off rows of one task group.
struct GroupTradeoff {
  std::string group;
  int tasks = 0;
  MetricRow latency_mean, latency_p99, cpu_share;
};

struct Comparison {
  ExperimentSpec spec;
  int runs = 0;
  std::vector<ScenarioInfo> scenarios;           // per variant, as run
  std::vector<std::vector<RunResult>> results;   // [variant][run]
  std::vector<WakeGraph> wakegraphs;             // per variant (when asked for)
  std::vector<MetricRow> metrics;                // the experiment's metrics
  std::vector<GroupTradeoff> who_pays;           // every group of the baseline
  std::vector<MetricRow> totals;                 // total.avg_power_mw, total.energy_mj
};

// The default metric list when an experiment names none.
std::vector<MetricRequest> default_compare_metrics(const std::string& file);

// Runs everything. Throws ConfigError (overlays, metric names, published
// values) and ModelError.
Comparison run_comparison(const ExperimentSpec& spec, const CompareOptions& options);

// The statistics of one metric from per-variant, per-run values (exposed
// for tests): means over runs, changes and intervals against cell 0.
MetricRow summarize_metric(const Metric& metric, std::vector<std::vector<std::optional<double>>> values,
                           const std::vector<std::string>& variant_names);

}  // namespace schedlab
