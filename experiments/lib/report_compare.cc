#include "experiments/lib/report_compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>

#include "experiments/lib/json_writer.h"
#include "experiments/lib/report_json.h"
#include "experiments/lib/report_csv.h"
#include "experiments/lib/report_format.h"
#include "experiments/lib/report_power.h"
#include "experiments/lib/report_table.h"
#include "experiments/lib/text_table.h"

namespace schedlab {
namespace {

constexpr int kPctDecimalsOut = 3;  // changes and intervals in JSON/CSV

std::string signed_pct(double v, int decimals) {
  std::string s = without_negative_zero(fmt::format("{:.{}f}", v, decimals));
  return (s[0] == '-' ? s : "+" + s);
}

std::string value_cell(const MetricCell& cell, MetricUnit unit) {
  if (cell.n == 0) return "n/a";
  return format_metric_value(cell.mean, unit);
}

std::string overlay_list(const std::vector<Overlay>& overlays) {
  if (overlays.empty()) return "(the scenario as is)";
  std::string out;
  for (const Overlay& o : overlays) out += (out.empty() ? "" : ", ") + o.path + "=" + o.value;
  return out;
}

std::string header(const Comparison& c) {
  const ScenarioInfo& s = c.scenarios[0];
  std::string out = fmt::format(
      "{}: {} (kernel {}, HZ={}, preempt={}, {} CPU{}), {} variants x {} run{}, duration {}{}, seed {}{}\n",
      c.spec.name, s.name, s.kernel_version, s.hz, s.preempt, s.cpus, s.cpus == 1 ? "" : "s", c.spec.variants.size(),
      c.runs, c.runs == 1 ? "" : "s", format_time(s.duration),
      s.warmup.count() > 0 ? fmt::format(" (warmup {})", format_time(s.warmup)) : std::string(), c.spec.seed,
      c.spec.start_jitter.count() > 0 ? fmt::format(", start jitter {}", format_time(c.spec.start_jitter))
                                      : std::string());
  out += overheads_note(s);
  if (!c.spec.description.empty()) out += c.spec.description + "\n";
  // A what-if file may set dozens of paths (one per OPP): the first few
  // here, every one in the JSON's set_files.
  constexpr size_t kShownSetFileOverlays = 4;
  for (const ExperimentSpec::SetFile& f : c.spec.set_files) {
    const size_t n = f.overlays.size(), shown = n > kShownSetFileOverlays + 1 ? kShownSetFileOverlays : n;
    const std::vector<Overlay> head(f.overlays.begin(), f.overlays.begin() + static_cast<std::ptrdiff_t>(shown));
    out += fmt::format("  every variant, from --set-file {} ({} key path{}; a variant's own value wins): {}{}\n", f.file,
                       n, n == 1 ? "" : "s", overlay_list(head),
                       shown < n ? fmt::format(", and {} more (--json lists them in set_files)", n - shown) : "");
  }
  for (size_t v = 0; v < c.spec.variants.size(); ++v)
    out += fmt::format("  {}{}: {}\n", c.spec.variants[v].name, v == 0 ? " (baseline)" : "",
                       overlay_list(c.spec.variants[v].overlays));
  out += fmt::format(
      "value: mean over runs; change: % of the baseline's mean; 95% CI: paired bootstrap over runs of that "
      "change (expanded percentile, B={}); ~ = the CI includes 0 (noise)\n",
      kBootstrapResamples);
  if (c.runs == 1) out += "(one run: no intervals; use --runs N or `runs:` for them)\n";
  if (c.spec.start_jitter.count() == 0 && c.runs > 1)
    out += "(no start_jitter: the model is deterministic, so every run of a variant is identical and intervals are points)\n";
  return out;
}

bool any_published(const Comparison& c, size_t v) {
  for (const MetricRow& r : c.metrics)
    if (!r.cells[v].published.empty()) return true;
  return false;
}

std::string render_metric_table(const Comparison& c) {
  const size_t nv = c.spec.variants.size();
  TextTable t;
  t.add_span("", 2);
  const bool pub0 = any_published(c, 0);
  t.add_span(c.spec.variants[0].name, pub0 ? 2 : 1);
  for (size_t v = 1; v < nv; ++v) t.add_span(c.spec.variants[v].name, any_published(c, v) ? 4 : 3);
  t.add_column("metric", true);
  t.add_column("unit", true);
  t.add_column("value");
  if (pub0) t.add_column("published");
  for (size_t v = 1; v < nv; ++v) {
    t.add_column("value");
    t.add_column("change");
    t.add_column("95% CI", true);
    if (any_published(c, v)) t.add_column("published");
  }
  for (const MetricRow& r : c.metrics) {
    std::vector<std::string> row{r.metric.text, unit_label(r.metric.unit), value_cell(r.cells[0], r.metric.unit)};
    if (pub0) row.push_back(r.cells[0].published);
    for (size_t v = 1; v < nv; ++v) {
      row.push_back(value_cell(r.cells[v], r.metric.unit));
      row.push_back(format_change(r.cells[v].change));
      row.push_back(format_interval(r.cells[v].change));
      if (any_published(c, v)) row.push_back(r.cells[v].published);
    }
    t.add_row(std::move(row));
  }
  return t.render();
}

std::string change_with_interval(const Change& ch) {
  if (!ch.defined) return "n/a";
  if (!ch.ci_pct) return format_change(ch);
  return format_change(ch) + " " + format_interval(ch);
}

// A who-pays change cell. A group one side lacks (the workers WQ_HIGHPRI
// creates, a pool a variant stops using) has no change: the cell says so,
// with this variant's own value where only it has one.
std::string who_pays_cell(const MetricCell& base, const MetricCell& var, MetricUnit unit) {
  if (var.change.defined || (base.n > 0) == (var.n > 0)) return change_with_interval(var.change);
  if (base.n == 0) return fmt::format("{} (only here)", value_cell(var, unit));
  return "none here";
}

std::string render_who_pays(const Comparison& c) {
  const size_t nv = c.spec.variants.size();
  std::string out = fmt::format("who pays: every task group against '{}'\n", c.spec.variants[0].name);
  TextTable t;
  t.add_span("", 2);
  t.add_span(c.spec.variants[0].name, 3);
  for (size_t v = 1; v < nv; ++v) t.add_span(fmt::format("{}: change [95% CI]", c.spec.variants[v].name), 3);
  t.add_column("group", true);
  t.add_column("tasks");
  t.add_column("wakeup mean us");
  t.add_column("wakeup P99 us");
  t.add_column("CPUs used");
  for (size_t v = 1; v < nv; ++v) {
    t.add_column("wakeup mean", true);
    t.add_column("wakeup P99", true);
    t.add_column("CPUs used", true);
  }
  for (const GroupTradeoff& g : c.who_pays) {
    std::vector<std::string> row{g.group, std::to_string(g.tasks),
                                 value_cell(g.latency_mean.cells[0], MetricUnit::kMicroseconds),
                                 value_cell(g.latency_p99.cells[0], MetricUnit::kMicroseconds),
                                 value_cell(g.cpu_share.cells[0], MetricUnit::kFraction)};
    for (size_t v = 1; v < nv; ++v) {
      row.push_back(who_pays_cell(g.latency_mean.cells[0], g.latency_mean.cells[v], MetricUnit::kMicroseconds));
      row.push_back(who_pays_cell(g.latency_p99.cells[0], g.latency_p99.cells[v], MetricUnit::kMicroseconds));
      row.push_back(who_pays_cell(g.cpu_share.cells[0], g.cpu_share.cells[v], MetricUnit::kFraction));
    }
    t.add_row(std::move(row));
  }
  out += t.render();
  for (const MetricRow& r : c.totals) {
    const bool none = std::all_of(r.cells.begin(), r.cells.end(), [](const MetricCell& x) { return x.n == 0; });
    std::string label = r.metric.name.field == "avg_power_mw" ? "total power" : "total energy";
    if (none) {
      out += fmt::format("{}: n/a (the platform has no power model)\n", label);
      continue;
    }
    out += fmt::format("{}: {} {}", label, value_cell(r.cells[0], r.metric.unit), unit_label(r.metric.unit));
    for (size_t v = 1; v < nv; ++v)
      out += fmt::format("; {}: {}", c.spec.variants[v].name, change_with_interval(r.cells[v].change));
    out += "\n";
  }
  if (!c.results.empty() && !c.results[0].empty()) out += idle_power_note(c.results[0][0]);
  return out;
}

// A change's numbers as the JSON and CSV files spell them: empty (null)
// where the change or its interval is undefined.
struct ChangeText {
  std::string pct, ci_low, ci_high;
  bool noise = false;
};

ChangeText change_text(const Change& ch) {
  const bool ci = ch.defined && ch.ci_pct;
  return {ch.defined ? fixed_text(ch.pct, kPctDecimalsOut) : "",
          ci ? fixed_text(ch.ci_pct->low, kPctDecimalsOut) : "",
          ci ? fixed_text(ch.ci_pct->high, kPctDecimalsOut) : "", ci && ch.noise};
}

// A cell's mean, sd, min and max with `d` decimals; empty without runs.
std::array<std::pair<const char*, std::string>, 4> cell_stats_text(const MetricCell& cell, int d) {
  auto text = [&](double x) { return cell.n > 0 ? fixed_text(x, d) : ""; };
  return {{{"mean", text(cell.mean)}, {"sd", text(cell.sd)}, {"min", text(cell.min)}, {"max", text(cell.max)}}};
}

void write_change_json(JsonWriter& w, const Change& ch) {
  const ChangeText t = change_text(ch);
  w.number_field("change_pct", t.pct);
  w.number_field("ci_low_pct", t.ci_low);
  w.number_field("ci_high_pct", t.ci_high);
  w.field("noise", t.noise);
  w.field("paired_runs", ch.pairs);
}

void write_row_json(JsonWriter& w, const Comparison& c, const MetricRow& r) {
  const int d = unit_decimals(r.metric.unit);
  w.begin_object();
  w.field("name", r.metric.text);
  w.field("unit", unit_label(r.metric.unit));
  w.key("variants");
  w.begin_array();
  for (size_t v = 0; v < r.cells.size(); ++v) {
    const MetricCell& cell = r.cells[v];
    w.begin_object();
    w.field("variant", c.spec.variants[v].name);
    w.field("runs", cell.n);
    for (const auto& [k, text] : cell_stats_text(cell, d)) w.number_field(k, text);
    w.key("values");
    w.begin_array();
    for (const auto& x : cell.values) w.number_text(fixed_text(x, d));
    w.end_array();
    if (v > 0) write_change_json(w, cell.change);
    // The statistic over all runs' samples (drm:, wq:, rpm:, frames: metrics).
    w.number_field("pooled", fixed_text(cell.pooled, d));
    if (v > 0 && cell.pooled) {
      const ChangeText t = cell.pooled_change ? change_text(*cell.pooled_change) : ChangeText{};
      w.number_field("pooled_change_pct", t.pct);
      w.number_field("pooled_ci_low_pct", t.ci_low);
      w.number_field("pooled_ci_high_pct", t.ci_high);
      w.field("pooled_noise", t.noise);
    }
    w.key("published");
    if (cell.published.empty())
      w.null();
    else
      w.value(cell.published);
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

}  // namespace

std::string format_change(const Change& c) {
  if (!c.defined) return "n/a";
  const std::string s = signed_pct(c.pct, 1) + "%";
  return c.ci_pct && c.noise ? "~" + s : s;
}

std::string format_interval(const Change& c) {
  if (!c.defined || !c.ci_pct) return "-";
  auto bound = [](double x) { return std::isinf(x) ? std::string(x < 0 ? "-inf" : "+inf") : signed_pct(x, 1); };
  return fmt::format("[{}, {}]", bound(c.ci_pct->low), bound(c.ci_pct->high));
}

namespace {
// A variant's decision counts summed over its runs, in report order.
std::vector<DecisionCount> variant_decisions(const Comparison& c, size_t v) {
  DecisionTally tally;
  for (const RunResult& r : c.results[v]) tally.add(r.decisions);
  return tally.sorted();
}
}  // namespace

std::string render_compare_decisions(const Comparison& c) {
  std::vector<DecisionColumn> columns;
  for (size_t v = 0; v < c.results.size(); ++v)
    columns.push_back({c.spec.variants[v].name, variant_decisions(c, v), c.results[v].size()});
  const std::string table = render_decisions_side_by_side(columns);
  if (table.empty()) return "";
  return "why: each variant's decisions by reason (share of the group's decisions of that kind, and count per run)\n" +
         table;
}

std::string render_compare_report(const Comparison& c) {
  std::string out = header(c) + "\n" + render_metric_table(c) + "\n" + render_who_pays(c);
  const std::string why = render_compare_decisions(c);
  if (!why.empty()) out += "\n" + why;
  return out;
}

std::string render_compare_json(const Comparison& c) {
  JsonWriter w;
  w.begin_object();
  w.field("format", kCompareJsonFormat);
  w.field("format_version", kCompareJsonFormatVersion);
  w.key("experiment");
  w.begin_object();
  w.field("name", c.spec.name);
  w.field("source", c.spec.source);
  w.field("scenario", c.spec.scenario);
  w.field("scenario_name", c.scenarios[0].name);
  w.field("runs", c.runs);
  w.field("base_seed", c.spec.seed);
  w.number_field("duration_s", seconds_text(c.scenarios[0].duration));
  w.number_field("warmup_s", seconds_text(c.scenarios[0].warmup));
  w.number_field("start_jitter_s", seconds_text(c.spec.start_jitter));
  write_bootstrap_json(w,
                       "paired bootstrap over runs of the relative change (of the means; of the pooled statistic "
                       "for pooled values), expanded percentile interval");
  if (!c.spec.set_files.empty()) {  // a what-if: its --set-file overlays, for every variant
    w.key("set_files");
    w.begin_array();
    for (const ExperimentSpec::SetFile& f : c.spec.set_files) {
      w.begin_object();
      w.field("file", f.file);
      write_overlays_json(w, "overlays", f.overlays);
      w.end_object();
    }
    w.end_array();
  }
  w.end_object();
  w.key("variants");
  w.begin_array();
  for (size_t v = 0; v < c.spec.variants.size(); ++v) {
    const VariantSpec& vs = c.spec.variants[v];
    w.begin_object();
    w.field("name", vs.name);
    w.field("baseline", v == 0);
    write_overlays_json(w, "overlays", vs.overlays);
    // --why: the variant's decision counts summed over its runs.
    const std::vector<DecisionCount> decisions = variant_decisions(c, v);
    if (!decisions.empty()) write_decisions_json(w, decisions);
    w.end_object();
  }
  w.end_array();
  auto write_rows = [&](const char* key, const std::vector<MetricRow>& rows) {
    w.key(key);
    w.begin_array();
    for (const MetricRow& r : rows) write_row_json(w, c, r);
    w.end_array();
  };
  write_rows("metrics", c.metrics);
  w.object_array("who_pays", c.who_pays, [&](const GroupTradeoff& g) {
    w.field("group", g.group);
    w.field("tasks", g.tasks);
    w.key("wakeup_latency_mean");
    write_row_json(w, c, g.latency_mean);
    w.key("wakeup_latency_p99");
    write_row_json(w, c, g.latency_p99);
    w.key("cpu_share");
    write_row_json(w, c, g.cpu_share);
  });
  write_rows("totals", c.totals);
  w.end_object();
  return w.str() + "\n";
}

std::string render_compare_csv(const Comparison& c) {
  std::string out =
      "table,metric,unit,variant,baseline,runs,mean,sd,min,max,change_pct,ci_low_pct,ci_high_pct,noise,paired_runs,"
      "published\n";
  auto rows = [&](const char* table, const MetricRow& r) {
    const int d = unit_decimals(r.metric.unit);
    for (size_t v = 0; v < r.cells.size(); ++v) {
      const MetricCell& cell = r.cells[v];
      const bool base = v == 0;
      const ChangeText ch = base ? ChangeText{} : change_text(cell.change);
      std::vector<std::string> f{table, r.metric.text, unit_label(r.metric.unit), c.spec.variants[v].name,
                                 base ? "true" : "false", std::to_string(cell.n)};
      for (const auto& stat : cell_stats_text(cell, d)) f.push_back(stat.second);
      f.insert(f.end(), {ch.pct, ch.ci_low, ch.ci_high});
      f.push_back(base ? "" : (ch.noise ? "true" : "false"));
      f.push_back(base ? "" : std::to_string(cell.change.pairs));
      f.push_back(cell.published);
      std::string line;
      for (size_t i = 0; i < f.size(); ++i) {
        if (i) line += ',';
        line += csv_field(f[i]);
      }
      out += line + "\n";
    }
  };
  for (const MetricRow& r : c.metrics) rows("metrics", r);
  for (const GroupTradeoff& g : c.who_pays) {
    rows("who_pays", g.latency_mean);
    rows("who_pays", g.latency_p99);
    rows("who_pays", g.cpu_share);
  }
  for (const MetricRow& r : c.totals) rows("totals", r);
  return out;
}

std::string render_compare_plot_data(const Comparison& c) {
  // Quantile levels: dense in the tail, where scheduling changes show.
  std::vector<double> levels;
  for (int i = 0; i < 90; i += 2) levels.push_back(i);
  for (double q = 90; q < 99; q += 0.5) levels.push_back(q);
  for (double q = 99; q < 100; q += 0.1) levels.push_back(q);
  levels.push_back(100);

  JsonWriter w;
  w.begin_object();
  w.field("format", "schedlab.compare.plotdata");
  w.field("format_version", 1);
  w.field("experiment", c.spec.name);
  w.field("scenario", c.scenarios[0].name);
  w.field("runs", c.runs);
  w.key("variants");
  w.begin_array();
  for (const VariantSpec& v : c.spec.variants) w.value(v.name);
  w.end_array();
  w.key("latency_quantiles");
  w.begin_array();
  // One entry per group (pooled over runs), for every group with wakeups in the baseline.
  for (const GroupTradeoff& g : c.who_pays) {
    if (g.latency_mean.cells[0].n == 0) continue;
    w.begin_object();
    w.field("group", g.group);
    w.key("levels_pct");
    w.begin_array();
    for (double q : levels) w.number_text(fixed_text(q, 1));
    w.end_array();
    w.key("variants");
    w.begin_array();
    for (size_t v = 0; v < c.results.size(); ++v) {
      std::vector<int64_t> pooled;
      for (const RunResult& r : c.results[v])
        for (const TaskMetrics& t : r.tasks)
          if ((t.group.empty() ? t.name : t.group) == g.group)
            pooled.insert(pooled.end(), t.wakeup_latency.values().begin(), t.wakeup_latency.values().end());
      std::sort(pooled.begin(), pooled.end());
      w.begin_object();
      w.field("variant", c.spec.variants[v].name);
      w.field("samples", static_cast<uint64_t>(pooled.size()));
      w.key("latency_us");
      w.begin_array();
      for (double q : levels) {
        if (pooled.empty())
          w.null();
        else
          w.number_text(fixed_text(percentile_sorted(pooled, q) / 1e3, 3));
      }
      w.end_array();
      w.end_object();
    }
    w.end_array();
    w.end_object();
  }
  w.end_array();
  w.key("changes");
  w.begin_array();
  for (const MetricRow& r : c.metrics) {
    for (size_t v = 1; v < r.cells.size(); ++v) {
      const Change& ch = r.cells[v].change;
      w.begin_object();
      w.field("metric", r.metric.text);
      w.field("variant", c.spec.variants[v].name);
      write_change_json(w, ch);
      w.end_object();
    }
  }
  w.end_array();
  w.end_object();
  return w.str() + "\n";
}

}  // namespace schedlab
