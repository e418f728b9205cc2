#include "experiments/lib/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "experiments/lib/parallel.h"
#include "experiments/lib/runner.h"
#include "models/config/config.h"
#include "sim/rng.h"

namespace schedlab {


std::vector<MetricRequest> default_compare_metrics(const std::string& file) {
  std::vector<MetricRequest> m;
  for (const char* name : {"group:*.wakeup_latency.mean", "group:*.wakeup_latency.p99", "group:*.cpu_share",
                           "cpu:*.busy_pct", "total.avg_power_mw"})
    m.push_back({name, {file, 0, 0}});
  return m;
}

MetricRow summarize_metric(const Metric& metric, std::vector<std::vector<std::optional<double>>> values,
                           const std::vector<std::string>& variant_names) {
  MetricRow row;
  row.metric = metric;
  for (size_t v = 0; v < values.size(); ++v) {
    MetricCell cell;
    cell.values = std::move(values[v]);
    std::vector<double> present;
    for (const auto& x : cell.values)
      if (x) present.push_back(*x);
    summarize_values(cell, present);
    row.cells.push_back(std::move(cell));
  }
  for (size_t v = 1; v < row.cells.size(); ++v)
    row.cells[v].change = compare_runs(row.cells[0].values, row.cells[v].values,
                                       bootstrap_seed("compare/" + variant_names[v]));
  return row;
}

namespace {

// values[variant][run] of one metric.
std::vector<std::vector<std::optional<double>>> collect(const MetricName& name,
                                                        const std::vector<std::vector<RunMetrics>>& runs) {
  std::vector<std::vector<std::optional<double>>> out(runs.size());
  for (size_t v = 0; v < runs.size(); ++v) {
    out[v].reserve(runs[v].size());
    for (const RunMetrics& r : runs[v]) out[v].push_back(r.value(name));
  }
  return out;
}

// The pooled statistic of a drm:/wq:/rpm:/frames: metric in each variant
// and its change against the baseline, with a paired bootstrap over runs
// of the same pooled statistic (run i of both variants drawn together), so
// the interval is the pooled value's own.
void add_pooled(MetricRow& row, const MetricName& name, const std::vector<std::vector<RunResult>>& results,
                const std::vector<std::string>& variant_names) {
  std::vector<PooledMetric> pooled;
  for (size_t v = 0; v < results.size(); ++v) {
    std::optional<PooledMetric> m = PooledMetric::of(results[v], name);
    if (!m) return;
    row.cells[v].pooled = m->value();
    pooled.push_back(std::move(*m));
  }
  const size_t nr = results[0].size();
  for (size_t v = 1; v < pooled.size(); ++v) {
    MetricCell& cell = row.cells[v];
    if (!row.cells[0].pooled || !cell.pooled) continue;
    std::vector<double> a_star, b_star;
    if (nr >= 2) {
      std::vector<uint32_t> weights(nr);
      for (const auto& idx : shared_resamples(nr, kBootstrapResamples, bootstrap_seed("compare/" + variant_names[v]))) {
        std::fill(weights.begin(), weights.end(), 0);
        for (size_t i : idx) ++weights[i];
        a_star.push_back(pooled[0].value(weights).value_or(NAN));
        b_star.push_back(pooled[v].value(weights).value_or(NAN));
      }
    }
    cell.pooled_change = make_change(*row.cells[0].pooled, *cell.pooled, a_star, b_star, static_cast<int>(nr));
  }
}

Metric make_metric(MetricScope scope, const std::string& object, const std::string& field) {
  MetricName n{scope, object, field};
  return {n, metric_unit(n), n.text()};
}

}  // namespace

Comparison run_comparison(const ExperimentSpec& spec, const CompareOptions& options) {
  Comparison c;
  c.spec = spec;
  c.runs = options.runs.value_or(spec.runs);
  if (c.runs < 1) throw std::invalid_argument(fmt::format("runs must be at least 1 (got {})", c.runs));
  const size_t nv = spec.variants.size();
  const size_t nr = static_cast<size_t>(c.runs);

  std::vector<std::string> names;
  std::vector<ScenarioParams> params;
  for (const VariantSpec& v : spec.variants) {
    std::vector<Overlay> all = spec.common;
    all.insert(all.end(), v.overlays.begin(), v.overlays.end());
    params.push_back(load_scenario_with_overlays(spec.scenario, all, fmt::format("variant '{}'", v.name)));
    check_start_jitter(spec.start_jitter, spec.start_jitter_origin, params.back(), fmt::format("variant '{}'", v.name));
    names.push_back(v.name);
    c.scenarios.push_back(scenario_info(params.back()));
  }
  report_warnings(params, options.warning, options.strict);

  // Job j = (variant j / runs, run j % runs); run i of every variant uses
  // the same seed, which pairs the runs for the bootstrap.
  c.results.assign(nv, std::vector<RunResult>(nr));
  if (options.wakegraph) c.wakegraphs.assign(nv, WakeGraph{});
  std::vector<std::vector<WakeGraph>> wakes(options.wakegraph ? nv : 0, std::vector<WakeGraph>(nr));
  std::vector<std::vector<std::optional<RunMetrics>>> metrics(nv, std::vector<std::optional<RunMetrics>>(nr));
  size_t done = 0;
  parallel_for(
      nv * nr, options.jobs,
      [&](size_t j) {
        const size_t v = j / nr, r = j % nr;
        const uint64_t seed = derive_seed(spec.seed, r);
        c.results[v][r] = simulate_run(with_start_jitter(params[v], spec.start_jitter, seed), seed, {},
                                       options.wakegraph ? &wakes[v][r] : nullptr,
                                       fmt::format("variant {}, run {}", names[v], r), options.why);
        metrics[v][r].emplace(c.results[v][r]);  // per-run summaries are the costly part: do them here too
      },
      [&](size_t) {
        ++done;
        if (options.progress) options.progress(done, nv * nr);
      });
  for (size_t v = 0; v < wakes.size(); ++v)
    for (const WakeGraph& w : wakes[v]) c.wakegraphs[v].merge(w);

  std::vector<std::vector<RunMetrics>> runs(nv);
  for (size_t v = 0; v < nv; ++v)
    for (auto& m : metrics[v]) runs[v].push_back(std::move(*m));

  const std::vector<MetricRequest> requests = spec.metrics.empty() ? default_compare_metrics(spec.source) : spec.metrics;
  // Wildcards expand against the baseline's first run (every run has the same tasks).
  std::vector<const Aggregate*> others;
  for (size_t v = 1; v < nv; ++v) others.push_back(&runs[v][0].aggregate());
  const std::vector<Metric> expanded = expand_metrics(requests, runs[0][0].aggregate(), others);
  std::vector<const ScenarioParams*> scenarios;
  for (const ScenarioParams& p : params) scenarios.push_back(&p);
  std::vector<const RunResult*> all_runs;
  for (const auto& variant : c.results)
    for (const RunResult& r : variant) all_runs.push_back(&r);
  check_named_objects(requests, scenarios, all_runs);
  for (const Metric& m : expanded) {
    c.metrics.push_back(summarize_metric(m, collect(m.name, runs), names));
    add_pooled(c.metrics.back(), m.name, c.results, names);
  }

  for (const PublishedValue& p : spec.published) {
    auto row = std::find_if(c.metrics.begin(), c.metrics.end(), [&](const MetricRow& r) { return r.metric.text == p.metric; });
    if (row == c.metrics.end()) {
      std::vector<std::string> rows;
      for (const MetricRow& r : c.metrics) rows.push_back(r.metric.text);
      throw ConfigError(p.origin.file, p.origin.line, p.origin.column, "published",
                        fmt::format("'{}' is not one of the experiment's metrics ({})", p.metric,
                                    fmt::join(rows, ", ")));
    }
    const size_t v = static_cast<size_t>(
        std::find(names.begin(), names.end(), p.variant) - names.begin());
    row->cells[v].published = p.text;
  }

  // Who pays: every group of the baseline's first run, then those only
  // another variant has (a WQ_HIGHPRI variant's nice -20 kworker pool):
  // n/a against the baseline, but listed, so no thread goes unseen.
  std::vector<const GroupAggregate*> groups;
  for (size_t v = 0; v < nv; ++v)
    for (const GroupAggregate& g : runs[v][0].aggregate().groups)
      if (std::none_of(groups.begin(), groups.end(), [&](const GroupAggregate* x) { return x->name == g.name; }))
        groups.push_back(&g);
  for (const GroupAggregate* gp : groups) {
    const GroupAggregate& g = *gp;
    GroupTradeoff t;
    t.group = g.name;
    t.tasks = g.instances;
    const Metric mean = make_metric(MetricScope::kGroup, g.name, "wakeup_latency.mean");
    const Metric p99 = make_metric(MetricScope::kGroup, g.name, "wakeup_latency.p99");
    const Metric share = make_metric(MetricScope::kGroup, g.name, "cpu_share");
    t.latency_mean = summarize_metric(mean, collect(mean.name, runs), names);
    t.latency_p99 = summarize_metric(p99, collect(p99.name, runs), names);
    t.cpu_share = summarize_metric(share, collect(share.name, runs), names);
    c.who_pays.push_back(std::move(t));
  }
  for (const char* field : {"avg_power_mw", "energy_mj"}) {
    const Metric m = make_metric(MetricScope::kTotal, "", field);
    c.totals.push_back(summarize_metric(m, collect(m.name, runs), names));
  }
  return c;
}

}  // namespace schedlab
