// Metric names for experiments and sweeps, and their value in one run.
//
//   task:NAME.FIELD    one task (its comm: ui_main, bg_hog-0)
//   group:NAME.FIELD   a task spec's instances together (bg_hog)
//   cpu:N.FIELD        one CPU
//   cluster:NAME.FIELD one cluster of the platform (little, mid, big)
//   total.FIELD        the whole machine
// NAME or N may be `*`: one metric per task / group / CPU of the scenario,
// in pid / first-pid / index order. FIELD is one of the lists below
// (metric_fields()); distributions are FIELD = DIST.STAT, e.g.
// wakeup_latency.p99. Every metric is a number per run (nullopt when the
// run has nothing to measure, e.g. a P99 without samples); experiments
// compare the runs' values.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "experiments/lib/aggregate.h"
#include "models/config/experiment_params.h"
#include "models/metrics/run_result.h"
#include "models/scenario.h"

namespace schedlab {

// drm: a DRM GPU scheduler (all its entities) or one "sched/entity";
// wq: a workqueue or kthread_worker by name;
// rpm: D sleeps in rpm_resume()/rpm_suspend() of a task group, on every
//      device ("rpm:ui.resume_d_state.p90") or one ("rpm:ui/gpu. ...");
// frames: a layer's FrameTimeline counts ("frames:systemui.app_missed"),
//      jank % and frames per second;
// cluster: a platform cluster's CPUs together ("cluster:little.residency_s.1":
//      seconds in cpu_idle state 1, -1 = running; energy, power).
enum class MetricScope { kTask, kGroup, kCpu, kTotal, kDrm, kWq, kRpm, kFrames, kCluster };

enum class MetricUnit {
  kMicroseconds,  // latencies
  kFraction,      // cpu_share: 1.0 = one CPU for the whole window
  kPercent,
  kPerRun,        // counts in one run
  kSeconds,
  kMilliJoules,
  kMilliWatts,
};

const char* unit_label(MetricUnit u);  // "us", "", "%", "/run", "s", "mJ", "mW"
// Decimals of a value in JSON and CSV files (docs/outputs.md conventions):
// fractions 6, seconds 9, everything else (us, %, counts, mJ, mW) 3.
int unit_decimals(MetricUnit u);

// One field of a scope, with its unit and a line of documentation.
struct MetricField {
  std::string name;
  MetricUnit unit;
  std::string description;
};
// The fields of a scope (task and group share theirs), in documentation order.
const std::vector<MetricField>& metric_fields(MetricScope scope);

struct MetricName {
  MetricScope scope = MetricScope::kTotal;
  std::string object;  // task/group name, CPU index, "*", or empty for total
  std::string field;   // "wakeup_latency.p99"
  std::string text() const;  // "task:ui_main.wakeup_latency.p99"
};

// Parses a metric name; nullopt with *why ("unknown field 'p100' ...") when
// it is not one. Object names are checked against a run by expand_metrics.
std::optional<MetricName> parse_metric_name(const std::string& text, std::string* why);

struct Metric {
  MetricName name;
  MetricUnit unit;
  std::string text;  // name.text()
};

// The metrics `requests` stand for in a scenario whose runs look like
// `sample` (a run of the baseline): wildcards expanded, names checked. An
// unknown name, field, task, group or CPU is a ConfigError at the request's
// origin that lists the valid choices. Duplicates are dropped.
std::vector<Metric> expand_metrics(const std::vector<MetricRequest>& requests, const RunResult& sample);
// The same from the run's aggregate (RunMetrics::aggregate()), already
// computed. Explicitly named tasks, groups and CPUs are also accepted when
// one of `also` has them (compare: a task only a variant has).
std::vector<Metric> expand_metrics(const std::vector<MetricRequest>& requests, const Aggregate& sample,
                                   const std::vector<const Aggregate*>& also = {});
// A metric's unit (the field must exist).
MetricUnit metric_unit(const MetricName& name);
// drm:, wq:, rpm:, frames: and cluster: objects come from the runs (a
// workqueue's row appears with its first item): one named explicitly in
// `requests` that neither `runs` nor `params` (the scenarios they ran) has
// is a misspelling, a ConfigError at the request's origin listing the valid
// names. Declared objects no run used stay legal (they read n/a).
void check_named_objects(const std::vector<MetricRequest>& requests, const std::vector<const ScenarioParams*>& params,
                         const std::vector<const RunResult*>& runs);

// One run's metrics, computed once per run.
class RunMetrics {
 public:
  explicit RunMetrics(const RunResult& run);
  std::optional<double> value(const MetricName& name) const;
  const Aggregate& aggregate() const { return agg_; }

 private:
  const RunResult* run_;
  Aggregate agg_;  // of this run alone
};

// A drm:/wq:/rpm:/frames: metric over every run's samples pooled, as the
// kernel threads compute theirs (one P99 over all work items of all runs);
// counts are per run (pooled count / runs), frames: percentages and fps
// are ratios of sums over runs. Built once from the runs, it gives the
// statistic of any multiset of them (a bootstrap resample: run r taken
// weights[r] times) without pooling the samples again.
class PooledMetric {
 public:
  // nullopt for scopes that are not pooled. One run gives that run's value
  // (RunMetrics::value() reads drm:/wq:/rpm:/frames: metrics this way).
  static std::optional<PooledMetric> of(std::span<const RunResult> runs, const MetricName& name);
  static std::optional<PooledMetric> of(const std::vector<RunResult>& runs, const MetricName& name) {
    return of(std::span<const RunResult>(runs), name);
  }
  size_t runs() const { return runs_; }
  // The statistic over every run once (no weights) or run r weights[r]
  // times; nullopt when nothing was measured.
  std::optional<double> value(const std::vector<uint32_t>& weights = {}) const;

 private:
  enum class Form { kSampleStat, kPerRun, kPercent, kPerSecond };
  int64_t order_statistic(size_t k, size_t n, const std::vector<uint32_t>& weights) const;

  Form form_ = Form::kPerRun;
  bool found_ = false;  // some run has the object
  size_t runs_ = 0;
  // Ratio forms: per run, the numerator and denominator of the sums.
  std::vector<int64_t> num_, den_;
  // Sample statistics: "mean", "max" or a percentile (percentile_ > 0);
  // every run's samples merged in ascending order with their run, and each
  // run's sample count, sum and maximum.
  std::string stat_;
  double percentile_ = 0;
  std::vector<int64_t> sorted_;
  std::vector<uint32_t> sorted_run_;
  std::vector<uint64_t> run_samples_;
  std::vector<int64_t> run_sum_, run_max_;
};
std::optional<double> pooled_metric_value(const std::vector<RunResult>& runs, const MetricName& name);

// Machine totals of a run that are not sums of tasks or CPUs. Energy and
// power are nullopt on a platform without a power model (RunResult::has_power()).
struct RunTotals {
  std::optional<double> energy_mj, avg_power_mw;
};
RunTotals run_totals(const RunResult& run);

// Time the CPUs of `cluster` spent in cpu_idle state `state` in one run,
// summed; state -1 is time in no idle state (running).
Time cluster_idle_time(const RunResult& run, const ClusterMetrics& cluster, int state);

// Formats a value in its unit for tables: latencies like `schedlab run`
// (two decimals below 100 us, one above), fractions with 3 decimals,
// percents with 1, counts per run with 2 below 100.
std::string format_metric_value(double v, MetricUnit unit);
// "-0.00" -> "0.00": a value that rounds to zero has no sign.
std::string without_negative_zero(std::string s);

}  // namespace schedlab
