#include "experiments/lib/sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "experiments/lib/atomic_file.h"
#include "experiments/lib/bootstrap.h"
#include "experiments/lib/json_writer.h"
#include "experiments/lib/report_json.h"
#include "experiments/lib/metrics.h"
#include "experiments/lib/parallel.h"
#include "experiments/lib/progress.h"
#include "experiments/lib/report_csv.h"
#include "experiments/lib/report_table.h"
#include "experiments/lib/report_format.h"
#include "experiments/lib/runner.h"
#include "experiments/lib/text_table.h"
#include "models/config/config.h"
// The reader of rt-app files is a plain JSON parser with line numbers; the
// sweep reads its own result files back with it (they are not configuration).
#include "models/config/json.h"
#include "sim/rng.h"

namespace schedlab {

namespace fs = std::filesystem;

namespace {

constexpr const char* kManifestFormat = "schedlab.sweep.manifest";
constexpr const char* kPointFormat = "schedlab.sweep.point";
constexpr const char* kSweepFormat = "schedlab.sweep";
constexpr int kFormatVersion = 1;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw SweepError(fmt::format("cannot read '{}'", p.string()));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Exact spelling of a double: the shortest text that reads back to the
// same bits, so point files round-trip and aggregates computed from them
// match whatever computed them in memory.
std::string exact(double v) { return fmt::format("{}", v); }

MetricUnit unit_of(const std::string& metric) {
  std::string why;
  auto n = parse_metric_name(metric, &why);
  return n ? metric_unit(*n) : MetricUnit::kPerRun;
}

int decimals_of(const std::string& metric) { return unit_decimals(unit_of(metric)); }

// Points, variants x grid values.
size_t grid_size(const std::vector<SweepAxis>& axes) {
  size_t grid = 1;
  for (const SweepAxis& a : axes) grid *= a.values.size();
  return grid;
}

// The variants and their overlays, under `key` ("set" in the manifest,
// "overlays" in sweep.json).
void write_variants(JsonWriter& w, const SweepManifest& m, const char* key) {
  w.object_array("variants", m.variants, [&](const SweepManifest::Variant& v) {
    w.field("name", v.name);
    write_overlays_json(w, key, v.overlays);
  });
}

// The members a point has in the manifest and in sweep.json: its id,
// variant and axis values.
void write_point_head(JsonWriter& w, const SweepManifest& m, const SweepManifest::Point& p) {
  w.field("id", p.id);
  w.field("variant", m.variants[p.variant].name);
  w.key("values");
  w.begin_array();
  for (size_t a = 0; a < m.axes.size(); ++a) w.value(m.value_text(p, a));
  w.end_array();
}

// --- reading our JSON back -------------------------------------------------

[[noreturn]] void bad(const std::string& file, const std::string& why) {
  throw SweepError(fmt::format("{}: {}", file, why));
}

const json::Value& member(const json::Value& v, const char* key, json::Value::Type type, const std::string& file) {
  const json::Value* m = v.find(key);
  if (!m || !m->is(type)) bad(file, fmt::format("missing or malformed '{}'", key));
  return *m;
}

std::string str_member(const json::Value& v, const char* key, const std::string& file) {
  return member(v, key, json::Value::Type::kString, file).text;
}

int64_t int_member(const json::Value& v, const char* key, const std::string& file) {
  return member(v, key, json::Value::Type::kInt, file).integer;
}

std::optional<Time> opt_seconds(const json::Value& v, const char* key, const std::string& file) {
  const json::Value* m = v.find(key);
  if (!m || m->is(json::Value::Type::kNull)) return std::nullopt;
  if (!m->is(json::Value::Type::kString)) bad(file, fmt::format("malformed '{}'", key));
  auto t = parse_duration(m->text);
  if (!t) bad(file, fmt::format("malformed duration '{}'", m->text));
  return *t;
}

std::vector<Overlay> read_overlays(const json::Value& arr, const std::string& file) {
  std::vector<Overlay> out;
  for (const json::Value& o : arr.items)
    out.push_back({str_member(o, "path", file), str_member(o, "value", file), {}});
  return out;
}

std::string time_text(Time t) {
  // Exact and parseable by parse_duration: nanoseconds.
  return fmt::format("{}ns", t.count());
}

}  // namespace

// --- manifest ---------------------------------------------------------------

std::vector<Overlay> SweepManifest::overlays_of(const Point& p) const {
  std::vector<Overlay> out = common;
  const Variant& v = variants[p.variant];
  out.insert(out.end(), v.overlays.begin(), v.overlays.end());
  for (size_t a = 0; a < axes.size(); ++a) out.push_back({axes[a].path, value_text(p, a), axes[a].origin});
  return out;
}

std::string SweepManifest::label_of(const Point& p) const {
  std::string out;
  for (size_t a = 0; a < axes.size(); ++a) out += fmt::format("{}{}={}", a ? ", " : "", axes[a].path, value_text(p, a));
  return out;
}

std::string SweepManifest::describe(const Point& p) const {
  return variants[p.variant].name + (axes.empty() ? "" : ": " + label_of(p));
}

// The key covers everything the points' contents depend on: the manifest
// without key and paths (a sweep given as ./x.yaml or /abs/x.yaml is the
// same sweep), the input files' text and the model's sources; hashed.
static std::string manifest_key(const SweepManifest& m, std::string_view inputs_text, std::string_view model) {
  SweepManifest unkeyed = m;
  unkeyed.key.clear();
  unkeyed.source.clear();
  unkeyed.scenario.clear();
  const uint64_t h = fnv1a64(render_manifest(unkeyed)) ^ splitmix64(fnv1a64(inputs_text)) ^
                     splitmix64(fnv1a64(model) + 1);
  return fmt::format("{:016x}", h);
}

SweepManifest make_manifest(const ExperimentSpec& spec, const std::string& scenario_text, std::string_view model,
                            bool why) {
  SweepManifest m;
  m.why = why;
  m.name = spec.name;
  m.source = spec.source;
  m.scenario = spec.scenario;
  m.runs = spec.runs;
  m.base_seed = spec.seed;
  m.start_jitter = spec.start_jitter;
  m.duration = spec.duration;
  m.warmup = spec.warmup;
  m.common = spec.common;
  for (const MetricRequest& r : spec.metrics) m.metrics.push_back(r.name);
  if (m.metrics.empty())
    m.metrics = {"group:*.wakeup_latency.mean", "group:*.wakeup_latency.p99", "group:*.cpu_share"};
  m.axes = spec.grid;
  for (const VariantSpec& v : spec.variants) m.variants.push_back({v.name, v.overlays});
  // Points: variant-major, then the grid with the first axis slowest.
  const size_t grid = grid_size(m.axes);
  size_t index = 0;
  for (size_t v = 0; v < m.variants.size(); ++v) {
    for (size_t g = 0; g < grid; ++g) {
      SweepManifest::Point p;
      p.variant = v;
      p.values.resize(m.axes.size());
      size_t rest = g;
      for (size_t a = m.axes.size(); a-- > 0;) {
        p.values[a] = rest % m.axes[a].values.size();
        rest /= m.axes[a].values.size();
      }
      p.id = fmt::format("p{:06d}", index++);
      m.points.push_back(std::move(p));
    }
  }
  m.key = manifest_key(m, scenario_text, model);
  return m;
}

std::string render_manifest(const SweepManifest& m) {
  JsonWriter w;
  w.begin_object();
  w.field("format", kManifestFormat);
  w.field("format_version", kFormatVersion);
  w.field("key", m.key);
  w.field("name", m.name);
  w.field("source", m.source);
  w.field("scenario", m.scenario);
  w.field("runs", m.runs);
  // A string: uint64 seeds do not fit every JSON reader's integers.
  w.field("base_seed", std::to_string(m.base_seed));
  w.field("start_jitter", time_text(m.start_jitter));
  w.key("duration");
  m.duration ? w.value(time_text(*m.duration)) : w.null();
  w.key("warmup");
  m.warmup ? w.value(time_text(*m.warmup)) : w.null();
  write_overlays_json(w, "set", m.common);
  w.key("metrics");
  w.begin_array();
  for (const std::string& s : m.metrics) w.value(s);
  w.end_array();
  if (m.why) w.field("why", true);  // absent without --why: older sweep folders keep their key
  w.object_array("axes", m.axes, [&](const SweepAxis& a) {
    w.field("path", a.path);
    w.field("duration", a.duration);
    w.object_array("values", a.values, [&](const AxisValue& v) {
      w.field("text", v.text);
      w.number_field("number", v.number ? exact(*v.number) : "");
    });
  });
  write_variants(w, m, "set");
  w.object_array("points", m.points, [&](const SweepManifest::Point& p) { write_point_head(w, m, p); });
  w.end_object();
  return w.str() + "\n";
}

SweepManifest parse_manifest(const std::string& text, const std::string& file) {
  json::Value root;
  try {
    root = json::parse(text, file);
  } catch (const std::exception& e) {
    throw SweepError(e.what());
  }
  using T = json::Value::Type;
  if (!root.is(T::kObject) || str_member(root, "format", file) != kManifestFormat)
    bad(file, "not a schedlab sweep manifest");
  if (int_member(root, "format_version", file) != kFormatVersion)
    bad(file, "written by an incompatible version of schedlab");
  SweepManifest m;
  m.key = str_member(root, "key", file);
  m.name = str_member(root, "name", file);
  m.source = str_member(root, "source", file);
  m.scenario = str_member(root, "scenario", file);
  const int64_t runs = int_member(root, "runs", file);
  if (runs < 1 || runs > std::numeric_limits<int>::max()) bad(file, fmt::format("runs {} out of range", runs));
  m.runs = static_cast<int>(runs);
  {
    const std::string s = str_member(root, "base_seed", file);
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), m.base_seed);
    if (ec != std::errc() || end != s.data() + s.size()) bad(file, "malformed base_seed");
  }
  m.start_jitter = opt_seconds(root, "start_jitter", file).value_or(Time::zero());
  m.duration = opt_seconds(root, "duration", file);
  m.warmup = opt_seconds(root, "warmup", file);
  m.common = read_overlays(member(root, "set", T::kArray, file), file);
  for (const json::Value& s : member(root, "metrics", T::kArray, file).items) {
    if (!s.is(T::kString)) bad(file, "malformed metrics");
    m.metrics.push_back(s.text);
  }
  if (const json::Value* why = root.find("why")) {
    if (!why->is(T::kBool)) bad(file, "malformed 'why'");
    m.why = why->boolean;
  }
  for (const json::Value& a : member(root, "axes", T::kArray, file).items) {
    SweepAxis axis;
    axis.path = str_member(a, "path", file);
    axis.duration = member(a, "duration", T::kBool, file).boolean;
    for (const json::Value& v : member(a, "values", T::kArray, file).items) {
      AxisValue av;
      av.text = str_member(v, "text", file);
      const json::Value* n = v.find("number");
      if (n && (n->is(T::kInt) || n->is(T::kDouble))) av.number = n->number;
      axis.values.push_back(std::move(av));
    }
    if (axis.values.empty()) bad(file, "an axis without values");
    m.axes.push_back(std::move(axis));
  }
  for (const json::Value& v : member(root, "variants", T::kArray, file).items)
    m.variants.push_back({str_member(v, "name", file), read_overlays(member(v, "set", T::kArray, file), file)});
  for (const json::Value& p : member(root, "points", T::kArray, file).items) {
    SweepManifest::Point pt;
    pt.id = str_member(p, "id", file);
    const std::string vname = str_member(p, "variant", file);
    auto it = std::find_if(m.variants.begin(), m.variants.end(), [&](const auto& v) { return v.name == vname; });
    if (it == m.variants.end()) bad(file, fmt::format("point {} names an unknown variant", pt.id));
    pt.variant = static_cast<size_t>(it - m.variants.begin());
    const auto& vals = member(p, "values", T::kArray, file).items;
    if (vals.size() != m.axes.size()) bad(file, fmt::format("point {} has {} values for {} axes", pt.id, vals.size(), m.axes.size()));
    for (size_t a = 0; a < vals.size(); ++a) {
      const auto& axv = m.axes[a].values;
      auto vt = std::find_if(axv.begin(), axv.end(), [&](const AxisValue& x) { return x.text == vals[a].text; });
      if (vt == axv.end()) bad(file, fmt::format("point {}: value '{}' not on its axis", pt.id, vals[a].text));
      pt.values.push_back(static_cast<size_t>(vt - axv.begin()));
    }
    m.points.push_back(std::move(pt));
  }
  return m;
}

// --- point files --------------------------------------------------------------

std::string render_point(const SweepManifest& m, const SweepManifest::Point& p, const PointRecord& rec) {
  JsonWriter w;
  w.begin_object();
  w.field("format", kPointFormat);
  w.field("format_version", kFormatVersion);
  w.field("key", m.key);
  w.field("point", p.id);
  w.field("variant", m.variants[p.variant].name);
  w.object_array("runs", rec.runs, [&](const RunRecord& r) {
    w.field("run", r.run);
    w.key("values");
    w.begin_object();
    for (const auto& [name, value] : r.values)
      w.number_field(name, value && std::isfinite(*value) ? exact(*value) : "");
    w.end_object();
    if (m.why) write_decisions_json(w, r.decisions);
  });
  w.end_object();
  return w.str() + "\n";
}

std::optional<PointRecord> parse_point(const std::string& text, const std::string& file, const SweepManifest& m,
                                       const SweepManifest::Point& p, std::string* why) {
  using T = json::Value::Type;
  auto fail = [&](const std::string& w) -> std::optional<PointRecord> {
    if (why) *why = w;
    return std::nullopt;
  };
  json::Value root;
  try {
    root = json::parse(text, file);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  auto s = [&](const char* k) -> std::string {
    const json::Value* v = root.find(k);
    return v && v->is(T::kString) ? v->text : std::string();
  };
  if (!root.is(T::kObject) || s("format") != kPointFormat) return fail("not a sweep point file");
  if (s("key") != m.key) return fail("written by a different sweep (key mismatch)");
  if (s("point") != p.id) return fail("names another point");
  const json::Value* runs = root.find("runs");
  if (!runs || !runs->is(T::kArray)) return fail("no runs");
  PointRecord rec;
  for (const json::Value& r : runs->items) {
    const json::Value* idx = r.find("run");
    const json::Value* vals = r.find("values");
    if (!idx || !idx->is(T::kInt) || !vals || !vals->is(T::kObject)) return fail("malformed run");
    if (idx->integer < 0 || idx->integer >= m.runs) return fail("run index out of range");
    RunRecord rr;
    rr.run = static_cast<int>(idx->integer);
    for (const json::Member& mv : vals->members) {
      if (mv.value.is(T::kNull))
        rr.values.emplace_back(mv.key, std::nullopt);
      else if (mv.value.is(T::kInt) || mv.value.is(T::kDouble))
        rr.values.emplace_back(mv.key, mv.value.number);
      else
        return fail("malformed value");
    }
    if (m.why) {
      const json::Value* ds = r.find("decisions");
      if (!ds || !ds->is(T::kArray)) return fail("a run without decision counts (the sweep counts them: --why)");
      for (const json::Value& d : ds->items) {
        const json::Value* kind = d.find("kind");
        const json::Value* group = d.find("group");
        const json::Value* reason = d.find("reason");
        const json::Value* count = d.find("count");
        if (!kind || !kind->is(T::kString) || DecisionTally::rank(kind->text) == kDecisionKinds.size() || !group ||
            !group->is(T::kString) || !reason || !reason->is(T::kString) || !count || !count->is(T::kInt) ||
            count->integer < 0)
          return fail("malformed decision count");
        rr.decisions.push_back({kind->text, group->text, reason->text, static_cast<uint64_t>(count->integer)});
      }
    }
    if (!rec.runs.empty() && rec.runs.back().run >= rr.run) return fail("runs out of order");
    rec.runs.push_back(std::move(rr));
  }
  return rec;
}

std::optional<std::pair<int, int>> parse_shard(const std::string& text) {
  const size_t slash = text.find('/');
  if (slash == std::string::npos) return std::nullopt;
  int i = 0, n = 0;
  auto a = std::from_chars(text.data(), text.data() + slash, i);
  auto b = std::from_chars(text.data() + slash + 1, text.data() + text.size(), n);
  if (a.ec != std::errc() || a.ptr != text.data() + slash || slash == 0) return std::nullopt;
  if (b.ec != std::errc() || b.ptr != text.data() + text.size() || slash + 1 == text.size()) return std::nullopt;
  if (n < 1 || i < 0 || i >= n) return std::nullopt;
  return std::pair{i, n};
}

namespace {

// --- aggregates -----------------------------------------------------------

// The metric names (first seen first), each point's statistics and the
// sensitivities of a complete sweep, into `s` (whose manifest is set).
void aggregate(const std::vector<PointRecord>& records, SweepSummary& s) {
  const SweepManifest& m = s.manifest;
  std::set<std::string> seen;
  for (const PointRecord& rec : records)
    for (const RunRecord& r : rec.runs)
      for (const auto& [name, v] : r.values)
        if (seen.insert(name).second) s.metric_names.push_back(name);

  if (m.why) {
    s.decisions.resize(m.points.size());
    for (size_t p = 0; p < m.points.size(); ++p) {
      DecisionTally tally;
      for (const RunRecord& r : records[p].runs) tally.add(r.decisions);
      s.decisions[p] = tally.sorted();
    }
  }

  s.stats.resize(m.points.size());
  for (size_t p = 0; p < m.points.size(); ++p) {
    for (const std::string& metric : s.metric_names) {
      std::vector<double> xs;
      for (const RunRecord& r : records[p].runs)
        for (const auto& [name, v] : r.values)
          if (name == metric && v) xs.push_back(*v);
      PointStats st;
      st.metric = metric;
      summarize_values(st, xs);
      if (xs.size() >= 2) {
        Interval ci = bootstrap_mean(xs, shared_resamples(xs.size(), kBootstrapResamples,
                                                        bootstrap_seed("sweep/" + m.points[p].id)));
        st.ci = std::pair{ci.low, ci.high};
      }
      s.stats[p].push_back(st);
    }
  }

  // Sensitivity per variant over its points, for the numeric axes that vary.
  std::vector<size_t> numeric;
  for (size_t ax = 0; ax < m.axes.size(); ++ax) {
    const auto& vals = m.axes[ax].values;
    const bool all_numbers = std::all_of(vals.begin(), vals.end(), [](const AxisValue& v) { return v.number.has_value(); });
    if (all_numbers && vals.size() >= 2) numeric.push_back(ax);
  }
  if (numeric.empty()) return;
  std::vector<std::string> params;
  for (size_t ax : numeric) params.push_back(m.axes[ax].path);
  for (size_t v = 0; v < m.variants.size(); ++v) {
    std::vector<size_t> pts;
    for (size_t p = 0; p < m.points.size(); ++p)
      if (m.points[p].variant == v) pts.push_back(p);
    std::vector<std::vector<double>> x;
    for (size_t p : pts) {
      std::vector<double> row;
      for (size_t ax : numeric) row.push_back(*m.axes[ax].values[m.points[p].values[ax]].number);
      x.push_back(std::move(row));
    }
    for (size_t k = 0; k < s.metric_names.size(); ++k) {
      std::vector<std::optional<double>> y;
      for (size_t p : pts) {
        const PointStats& st = s.stats[p][k];
        y.push_back(st.n > 0 ? std::optional<double>(st.mean) : std::nullopt);
      }
      s.sensitivity.push_back({m.variants[v].name, s.metric_names[k], fit_sensitivity(params, x, y)});
    }
  }
}

// A point's mean, sd, min, max and interval with `d` decimals; empty
// without runs (or, for the interval, below two).
std::array<std::pair<const char*, std::string>, 6> point_stats_text(const PointStats& st, int d) {
  auto text = [&](double x) { return st.n ? fixed_text(x, d) : ""; };
  return {{{"mean", text(st.mean)},
           {"sd", text(st.sd)},
           {"min", text(st.min)},
           {"max", text(st.max)},
           {"ci_low", st.ci ? fixed_text(st.ci->first, d) : ""},
           {"ci_high", st.ci ? fixed_text(st.ci->second, d) : ""}}};
}

std::string axis_header(const SweepManifest& m) {
  std::string out;
  for (const SweepAxis& ax : m.axes) {
    out += ',';
    out += csv_field(ax.path);
  }
  return out;
}

std::string axis_cells(const SweepManifest& m, const SweepManifest::Point& p) {
  std::string out;
  for (size_t a = 0; a < m.axes.size(); ++a) {
    out += ',';
    out += csv_field(m.value_text(p, a));
  }
  return out;
}

std::string render_runs_csv(const SweepSummary& s, const std::vector<PointRecord>& records) {
  const SweepManifest& m = s.manifest;
  std::string out = "point,variant" + axis_header(m) + ",run,seed";
  for (const std::string& name : s.metric_names) {
    out += ',';
    out += csv_field(name);
  }
  out += "\n";
  for (size_t p = 0; p < m.points.size(); ++p) {
    const SweepManifest::Point& pt = m.points[p];
    for (const RunRecord& r : records[p].runs) {
      out += pt.id + "," + csv_field(m.variants[pt.variant].name) + axis_cells(m, pt) + "," + std::to_string(r.run) +
             "," + std::to_string(derive_seed(m.base_seed, static_cast<uint64_t>(r.run)));
      for (const std::string& name : s.metric_names) {
        out += ",";
        for (const auto& [n, v] : r.values)
          if (n == name && v) out += fixed_text(*v, decimals_of(name));
      }
      out += "\n";
    }
  }
  return out;
}

std::string render_points_csv(const SweepSummary& s) {
  const SweepManifest& m = s.manifest;
  std::string out = "point,variant" + axis_header(m) + ",metric,unit,runs,mean,sd,min,max,ci_low,ci_high\n";
  for (size_t p = 0; p < m.points.size(); ++p) {
    const SweepManifest::Point& pt = m.points[p];
    for (const PointStats& st : s.stats[p]) {
      const MetricUnit u = unit_of(st.metric);
      out += pt.id + "," + csv_field(m.variants[pt.variant].name) + axis_cells(m, pt) + "," + csv_field(st.metric) +
             "," + csv_field(unit_label(u)) + "," + std::to_string(st.n);
      for (const auto& stat : point_stats_text(st, unit_decimals(u))) out += "," + stat.second;
      out += "\n";
    }
  }
  return out;
}

// decisions.csv (--why): a row per point and (kind, group, reason), summed
// over the point's runs, with the count per run and the reason's share of
// the group's decisions of that kind at that point.
std::string render_decisions_csv(const SweepSummary& s) {
  const SweepManifest& m = s.manifest;
  std::string out = "point,variant" + axis_header(m) + ",decision,group,reason,count,per_run,share_pct\n";
  for (size_t p = 0; p < m.points.size(); ++p) {
    const SweepManifest::Point& pt = m.points[p];
    auto totals = DecisionTally::group_totals(s.decisions[p]);
    for (const DecisionCount& d : s.decisions[p]) {
      out += pt.id + "," + csv_field(m.variants[pt.variant].name) + axis_cells(m, pt) + "," + csv_field(d.kind) + "," +
             csv_field(d.group) + "," + csv_field(d.reason) + "," + std::to_string(d.count) + "," +
             fixed_text(static_cast<double>(d.count) / m.runs, 3) + "," +
             fixed_text(100.0 * static_cast<double>(d.count) / static_cast<double>(totals[{d.kind, d.group}]), 3) +
             "\n";
    }
  }
  return out;
}

std::string render_sensitivity_csv(const SweepSummary& s) {
  std::string out = "variant,metric,points,r2,parameter,slope,elasticity,standardized,note\n";
  for (const SensitivityRow& row : s.sensitivity) {
    const std::string head = csv_field(row.variant) + "," + csv_field(row.metric) + "," +
                             std::to_string(row.fit.points) + "," + fixed_text(row.fit.r2, 6);
    if (!row.fit.ok()) {
      out += head + ",,,,," + csv_field(row.fit.note) + "\n";
      continue;
    }
    for (const ParameterFit& p : row.fit.parameters)
      out += head + "," + csv_field(p.parameter) + "," + fixed_text(p.slope, 6) + "," + fixed_text(p.elasticity, 6) +
             "," + fixed_text(p.standardized, 6) + ",\n";
  }
  return out;
}

std::string render_sweep_json(const SweepSummary& s) {
  const SweepManifest& m = s.manifest;
  JsonWriter w;
  w.begin_object();
  w.field("format", kSweepFormat);
  w.field("format_version", kFormatVersion);
  w.key("sweep");
  w.begin_object();
  w.field("name", m.name);
  w.field("source", m.source);
  w.field("scenario", m.scenario);
  w.field("key", m.key);
  w.field("runs", m.runs);
  w.field("base_seed", std::to_string(m.base_seed));
  w.number_field("start_jitter_s", seconds_text(m.start_jitter));
  w.number_field("duration_s", m.duration ? seconds_text(*m.duration) : "");
  w.number_field("warmup_s", m.warmup ? seconds_text(*m.warmup) : "");
  write_bootstrap_json(w, "bootstrap of the mean over runs, expanded percentile interval");
  w.end_object();
  w.object_array("axes", m.axes, [&](const SweepAxis& ax) {
    w.field("path", ax.path);
    w.field("unit", ax.duration ? "s" : "");
    w.key("values");
    w.begin_array();
    for (const AxisValue& v : ax.values) w.value(v.text);
    w.end_array();
    w.key("numbers");
    w.begin_array();
    for (const AxisValue& v : ax.values) w.number_text(v.number ? exact(*v.number) : "");
    w.end_array();
  });
  write_variants(w, m, "overlays");
  w.object_array("metrics", s.metric_names, [&](const std::string& name) {
    w.field("name", name);
    w.field("unit", unit_label(unit_of(name)));
  });
  w.key("points");
  w.begin_array();
  for (size_t p = 0; p < m.points.size(); ++p) {
    w.begin_object();
    write_point_head(w, m, m.points[p]);
    w.object_array("metrics", s.stats[p], [&](const PointStats& st) {
      w.field("name", st.metric);
      w.field("runs", st.n);
      for (const auto& [k, text] : point_stats_text(st, decimals_of(st.metric))) w.number_field(k, text);
    });
    if (m.why) write_decisions_json(w, s.decisions[p]);  // summed over the point's runs
    w.end_object();
  }
  w.end_array();
  w.object_array("sensitivity", s.sensitivity, [&](const SensitivityRow& row) {
    w.field("variant", row.variant);
    w.field("metric", row.metric);
    w.field("points", row.fit.points);
    w.number_field("r2", fixed_text(row.fit.r2, 6));
    w.key("note");
    row.fit.ok() ? w.null() : w.value(row.fit.note);
    w.object_array("parameters", row.fit.parameters, [&](const ParameterFit& p) {
      w.field("parameter", p.parameter);
      w.number_field("slope", fixed_text(p.slope, 6));
      w.number_field("elasticity", fixed_text(p.elasticity, 6));
      w.number_field("standardized", fixed_text(p.standardized, 6));
    });
  });
  w.end_object();
  return w.str() + "\n";
}

fs::path point_path(const fs::path& dir, const SweepManifest::Point& p) { return dir / "points" / (p.id + ".json"); }

// The point file of `p` in `dir`; SweepError when it is not one of this sweep.
PointRecord read_point(const fs::path& dir, const SweepManifest& m, const SweepManifest::Point& p) {
  const fs::path f = point_path(dir, p);
  std::string why;
  auto rec = parse_point(read_file(f), f.string(), m, p, &why);
  if (!rec) throw SweepError(fmt::format("{}: {}", f.string(), why));
  return std::move(*rec);
}

// Reads the manifest and every point file of a complete sweep folder and
// writes the aggregates: only what is on disk counts, so a resumed, merged
// or straight sweep writes the same bytes.
void write_aggregates(const fs::path& dir, SweepSummary& summary) {
  const fs::path mf = dir / "manifest.json";
  summary.manifest = parse_manifest(read_file(mf), mf.string());
  const SweepManifest& m = summary.manifest;
  std::vector<PointRecord> records;
  records.reserve(m.points.size());
  for (const SweepManifest::Point& p : m.points) {
    PointRecord rec = read_point(dir, m, p);
    if (rec.runs.size() != static_cast<size_t>(m.runs))
      throw SweepError(fmt::format("{}: {} of {} runs", point_path(dir, p).string(), rec.runs.size(), m.runs));
    records.push_back(std::move(rec));
  }
  aggregate(records, summary);
  AtomicFile runs((dir / "runs.csv").string()), points((dir / "points.csv").string()),
      sens((dir / "sensitivity.csv").string()), json((dir / "sweep.json").string());
  runs.write(render_runs_csv(summary, records));
  points.write(render_points_csv(summary));
  sens.write(render_sensitivity_csv(summary));
  json.write(render_sweep_json(summary));
  std::vector<AtomicFile*> files{&runs, &points, &sens, &json};
  std::optional<AtomicFile> decisions;
  if (m.why) {
    decisions.emplace((dir / "decisions.csv").string());
    decisions->write(render_decisions_csv(summary));
    files.push_back(&*decisions);
  }
  commit_all(files);
  summary.complete = true;
}

std::string shard_text(int shard, int shards) {
  return fmt::format("{{\n  \"format\": \"schedlab.sweep.shard\",\n  \"shard\": {},\n  \"shards\": {}\n}}\n", shard, shards);
}

// Creates `dir` and its manifest, or checks that an existing one holds this
// sweep (and the same shard).
void prepare_dir(const fs::path& dir, const SweepManifest& m, const std::string& manifest_text, int shard, int shards) {
  std::error_code ec;
  // A folder that holds no sweep must hold no file either (empty folders,
  // such as a --plot folder made inside it, are fine; shard.json is written
  // just before the manifest): a sweep or merge never mixes its files into
  // someone else's.
  if (fs::is_directory(dir, ec) && !fs::exists(dir / "manifest.json", ec))
    for (const fs::directory_entry& e : fs::recursive_directory_iterator(dir, ec))
      if (!e.is_directory(ec) && e.path() != dir / "shard.json")
        throw SweepError(fmt::format("'{}' holds files but no sweep (no manifest.json; e.g. '{}'): use a new --out "
                                     "folder, or an empty one",
                                     dir.string(), e.path().string()));
  fs::create_directories(dir / "points", ec);
  if (ec) throw OutputError(fmt::format("cannot create '{}': {}", (dir / "points").string(), ec.message()));
  const fs::path mf = dir / "manifest.json";
  if (fs::exists(mf)) {
    const std::string old = read_file(mf);
    SweepManifest prev;
    try {
      prev = parse_manifest(old, mf.string());
    } catch (const SweepError& e) {
      throw SweepError(fmt::format("{} (use a new --out folder or delete this one)", e.what()));
    }
    if (prev.key != m.key)
      throw SweepError(fmt::format(
          "'{}' holds another sweep ('{}', key {}; this one is '{}', key {}): the sweep file, its scenario or platform "
          "file, the options (--why, --set-file) or the simulator's model (another build) differ. Use a new --out "
          "folder, or delete the old one to start over",
          dir.string(), prev.name, prev.key, m.name, m.key));
  }
  const fs::path sf = dir / "shard.json";
  const bool has_shard = fs::exists(sf);
  if (shards > 1) {
    if (has_shard && read_file(sf) != shard_text(shard, shards))
      throw SweepError(fmt::format("'{}' holds another shard ({}); use one folder per shard", dir.string(),
                                   sf.string()));
    if (!has_shard && fs::exists(mf))
      throw SweepError(fmt::format("'{}' holds an unsharded sweep; use one folder per shard", dir.string()));
  } else if (has_shard) {
    throw SweepError(fmt::format("'{}' holds a shard ({}); merge shards with `schedlab merge`, or use a new folder",
                                 dir.string(), sf.string()));
  }
  // shard.json first: a folder with a manifest and no shard.json is unsharded.
  if (shards > 1 && !has_shard) write_file_atomically(sf.string(), shard_text(shard, shards));
  if (!fs::exists(mf)) write_file_atomically(mf.string(), manifest_text);
}

// What a sweep that fails before writing any point leaves: nothing. A new
// folder's manifest (and shard file) go, and the folders if empty; a
// folder that held this sweep already is left as it was.
class NewFolderGuard {
 public:
  explicit NewFolderGuard(const fs::path& dir) : dir_(dir), fresh_(!fs::exists(dir / "manifest.json")) {}
  ~NewFolderGuard() {
    if (!fresh_ || kept_) return;
    std::error_code ec;
    fs::remove(dir_ / "shard.json", ec);
    fs::remove(dir_ / "manifest.json", ec);
    fs::remove(dir_ / "points", ec);  // only if empty
    fs::remove(dir_, ec);             // only if empty
  }
  void keep() { kept_ = true; }
  NewFolderGuard(const NewFolderGuard&) = delete;
  NewFolderGuard& operator=(const NewFolderGuard&) = delete;

 private:
  fs::path dir_;
  bool fresh_;
  bool kept_ = false;
};
}  // namespace

std::string sweep_inputs_text(const SweepManifest& m, const std::string& scenario_text) {
  std::string out = scenario_text;
  // Only overlays at or below `platform` can change which file a point
  // loads: one look-up per distinct set of them (usually just the base's).
  std::set<std::string> asked, files;
  for (const SweepManifest::Point& p : m.points) {
    std::vector<Overlay> platform_overlays;
    std::string set_key;
    for (const Overlay& ov : m.overlays_of(p))
      if (is_platform_path(ov.path)) {
        platform_overlays.push_back(ov);
        set_key += ov.path + '=' + ov.value + '\n';
      }
    if (!asked.insert(set_key).second) continue;
    const std::string file = scenario_platform_file(m.scenario, platform_overlays);
    if (file.empty() || !files.insert(fs::weakly_canonical(file).string()).second) continue;
    try {
      out += "\n\x1f platform file\n" + read_file(file);  // its text, not its path (./x and /abs/x are one sweep)
    } catch (const SweepError&) {
      // unreadable: loading the point reports it
    }
  }
  return out;
}

SweepSummary run_sweep(const ExperimentSpec& spec, const SweepOptions& options) {
  if (options.shards < 1 || options.shard < 0 || options.shard >= options.shards)
    throw std::invalid_argument("bad shard");
  std::string scenario_text;
  try {
    scenario_text = read_file(spec.scenario);
  } catch (const SweepError&) {
    throw ConfigError(spec.scenario, 0, 0, "", "cannot read file");
  }
  SweepSummary summary;
  summary.manifest = make_manifest(spec, scenario_text, model_source_hash(), options.why);
  // The platform files the points load are inputs like the scenario: key
  // the manifest by their text too (a sweep on an inline platform keeps
  // its key).
  summary.manifest.key =
      manifest_key(summary.manifest, sweep_inputs_text(summary.manifest, scenario_text), model_source_hash());
  summary.out = options.out;
  const SweepManifest& m = summary.manifest;
  const fs::path dir(options.out);
  const std::string manifest_text = render_manifest(m);
  NewFolderGuard guard(dir);
  prepare_dir(dir, m, manifest_text, options.shard, options.shards);

  // This shard's runs of each point.
  const size_t R = static_cast<size_t>(m.runs);
  std::vector<std::vector<int>> slice(m.points.size());
  for (size_t p = 0; p < m.points.size(); ++p)
    for (size_t r = 0; r < R; ++r)
      if ((p * R + r) % static_cast<size_t>(options.shards) == static_cast<size_t>(options.shard))
        slice[p].push_back(static_cast<int>(r));

  // Resume: a point whose file matches this sweep and holds exactly its
  // slice's runs is done; any other file (damaged, truncated, stale) is redone.
  std::vector<size_t> todo_points;
  std::vector<std::string> notes;
  for (size_t p = 0; p < m.points.size(); ++p) {
    if (slice[p].empty()) continue;
    const fs::path f = point_path(dir, m.points[p]);
    if (fs::exists(f)) {
      std::string why;
      auto rec = parse_point(read_file(f), f.string(), m, m.points[p], &why);
      bool match = rec && rec->runs.size() == slice[p].size();
      for (size_t k = 0; match && k < slice[p].size(); ++k) match = rec->runs[k].run == slice[p][k];
      if (match) {
        ++summary.points_skipped;
        continue;
      }
      notes.push_back(fmt::format("redoing {}: {}", f.string(), rec ? "its runs do not match this shard" : why));
    }
    todo_points.push_back(p);
  }

  // Scenario of every point to run, loaded now so a bad combination fails
  // before any simulation.
  std::vector<ScenarioParams> params(m.points.size());
  for (size_t p : todo_points) {
    const std::string label = fmt::format("sweep point {} ({})", m.points[p].id, m.describe(m.points[p]));
    params[p] = load_scenario_with_overlays(m.scenario, m.overlays_of(m.points[p]), label);
    check_start_jitter(m.start_jitter, spec.start_jitter_origin, params[p], label);
  }
  report_warnings(params, options.warning, options.strict);

  struct Job {
    size_t point;
    size_t k;  // index into slice[point]
  };
  std::vector<Job> jobs;
  for (size_t p : todo_points)
    for (size_t k = 0; k < slice[p].size(); ++k) jobs.push_back({p, k});

  std::vector<MetricRequest> requests;
  for (const std::string& s : m.metrics) requests.push_back({s, {spec.source, 0, 0}});
  for (const MetricRequest& r : spec.metrics)  // keep the file positions for messages
    for (MetricRequest& q : requests)
      if (q.name == r.name) q.origin = r.origin;

  std::vector<PointRecord> records(m.points.size());
  for (size_t p : todo_points) records[p].runs.resize(slice[p].size());
  std::vector<size_t> remaining(m.points.size());
  for (size_t p : todo_points) remaining[p] = slice[p].size();

  Progress progress("runs", jobs.size(), options.progress, options.tty);
  for (const std::string& n : notes) progress.note(n);
  size_t done = 0;
  parallel_for(
      jobs.size(), options.jobs,
      [&](size_t j) {
        const Job& job = jobs[j];
        const int run = slice[job.point][job.k];
        const uint64_t seed = derive_seed(m.base_seed, static_cast<uint64_t>(run));
        const RunResult result =
            simulate_run(with_start_jitter(params[job.point], m.start_jitter, seed), seed, {}, nullptr,
                         fmt::format("point {}, run {}", m.points[job.point].id, run), m.why);
        // A misspelt wq:/drm:/rpm:/frames:/cluster: object, found with the
        // point's first run (before its file is written).
        if (job.k == 0) check_named_objects(requests, {&params[job.point]}, {&result});
        const RunMetrics rm(result);
        RunRecord rec;
        rec.run = run;
        for (const Metric& metric : expand_metrics(requests, rm.aggregate()))
          rec.values.emplace_back(metric.text, rm.value(metric.name));
        rec.decisions = result.decisions;
        records[job.point].runs[job.k] = std::move(rec);
      },
      [&](size_t j) {
        // Under parallel_for's lock: the last run of a point writes its file.
        const size_t p = jobs[j].point;
        ++done;
        if (--remaining[p] == 0) {
          write_file_atomically(point_path(dir, m.points[p]).string(), render_point(m, m.points[p], records[p]));
          guard.keep();
          ++summary.points_written;
          if (!options.tty)
            progress.note(fmt::format("point {} done ({}, {} run{})", m.points[p].id, m.describe(m.points[p]),
                                      slice[p].size(), slice[p].size() == 1 ? "" : "s"));
          records[p] = PointRecord{};  // written: free the memory
        }
        progress.update(done);
      });
  progress.finish();
  summary.runs_done = jobs.size();
  guard.keep();  // a folder with its manifest and every point: resumable even if the aggregates fail

  if (options.shards == 1) write_aggregates(dir, summary);
  return summary;
}

SweepSummary merge_sweeps(const std::vector<std::string>& dirs, const std::string& out) {
  if (dirs.empty()) throw SweepError("merge needs at least one shard folder");
  for (size_t i = 0; i < dirs.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (fs::exists(dirs[i]) && fs::exists(dirs[j]) && fs::equivalent(fs::path(dirs[i]), fs::path(dirs[j])))
        throw SweepError(fmt::format("'{}' is given twice (as '{}' too)", dirs[i], dirs[j]));
  SweepSummary summary;
  summary.out = out;
  std::string manifest_text;
  for (const std::string& d : dirs) {
    const fs::path mf = fs::path(d) / "manifest.json";
    if (!fs::exists(mf)) throw SweepError(fmt::format("'{}' is not a sweep folder (no manifest.json)", d));
    const std::string text = read_file(mf);
    const SweepManifest m = parse_manifest(text, mf.string());
    if (manifest_text.empty()) {
      manifest_text = text;  // written as it is: the first folder's spelling of the paths
      summary.manifest = m;
    } else if (m.key != summary.manifest.key) {
      throw SweepError(fmt::format("'{}' holds another sweep than '{}' (keys {} and {})", d, dirs[0], m.key,
                                   summary.manifest.key));
    }
  }
  for (const std::string& d : dirs)
    if (fs::exists(out) && fs::exists(d) && fs::equivalent(fs::path(d), fs::path(out)))
      throw SweepError(fmt::format("--out '{}' is one of the folders being merged; use a new folder", out));
  const SweepManifest& m = summary.manifest;

  // Union of every shard's runs per point; a run found twice must agree.
  std::vector<std::map<int, RunRecord>> runs(m.points.size());
  for (const std::string& d : dirs) {
    for (size_t p = 0; p < m.points.size(); ++p) {
      if (!fs::exists(point_path(d, m.points[p]))) continue;
      const PointRecord rec = read_point(d, m, m.points[p]);
      for (const RunRecord& r : rec.runs) {
        auto [it, inserted] = runs[p].try_emplace(r.run, r);
        if (!inserted && (it->second.values != r.values || it->second.decisions != r.decisions))
          throw SweepError(fmt::format("run {} of point {} differs between shards (is one from another build?)",
                                       r.run, m.points[p].id));
      }
    }
  }
  for (size_t p = 0; p < m.points.size(); ++p) {
    if (runs[p].size() == static_cast<size_t>(m.runs)) continue;
    std::vector<std::string> missing;
    for (int r = 0; r < m.runs && missing.size() < 8; ++r)
      if (!runs[p].count(r)) missing.push_back(std::to_string(r));
    throw SweepError(fmt::format("point {} lacks run{} {}{}: a shard is missing or unfinished (re-run it; finished "
                                 "points are kept)",
                                 m.points[p].id, missing.size() == 1 ? "" : "s", fmt::join(missing, ", "),
                                 m.runs - static_cast<int>(runs[p].size()) > 8 ? ", ..." : ""));
  }

  const fs::path dir(out);
  prepare_dir(dir, m, manifest_text, 0, 1);
  for (size_t p = 0; p < m.points.size(); ++p) {
    PointRecord rec;
    for (auto& [r, rr] : runs[p]) rec.runs.push_back(std::move(rr));
    write_file_atomically(point_path(dir, m.points[p]).string(), render_point(m, m.points[p], rec));
    ++summary.points_written;
  }
  write_aggregates(dir, summary);
  return summary;
}

std::string render_sweep_summary(const SweepSummary& s) {
  const SweepManifest& m = s.manifest;
  std::string out;
  const size_t grid = grid_size(m.axes);
  out += fmt::format("{}: {} point{} ({} variant{} x {} grid value{}) x {} run{}, seed {}{}\n", m.name, m.points.size(),
                     m.points.size() == 1 ? "" : "s", m.variants.size(), m.variants.size() == 1 ? "" : "s", grid,
                     grid == 1 ? "" : "s", m.runs, m.runs == 1 ? "" : "s", m.base_seed,
                     m.start_jitter.count() > 0 ? fmt::format(", start jitter {}", format_time(m.start_jitter)) : "");
  out += fmt::format("{}: ran {} run{}, wrote {} point file{}, kept {} finished point{}\n", s.out, s.runs_done,
                     s.runs_done == 1 ? "" : "s", s.points_written, s.points_written == 1 ? "" : "s", s.points_skipped,
                     s.points_skipped == 1 ? "" : "s");
  if (!s.complete) return out;

  // Per point: the first metrics' means (all of them are in points.csv).
  constexpr size_t kMaxColumns = 6;
  const size_t shown = std::min(kMaxColumns, s.metric_names.size());
  TextTable t;
  t.add_column("point", true);
  if (m.variants.size() > 1) t.add_column("variant", true);
  for (const SweepAxis& a : m.axes) t.add_column(a.path);
  for (size_t k = 0; k < shown; ++k) {
    const MetricUnit u = unit_of(s.metric_names[k]);
    t.add_column(fmt::format("{}{}", s.metric_names[k], *unit_label(u) ? fmt::format(" ({})", unit_label(u)) : ""));
  }
  for (size_t p = 0; p < m.points.size(); ++p) {
    std::vector<std::string> row{m.points[p].id};
    if (m.variants.size() > 1) row.push_back(m.variants[m.points[p].variant].name);
    for (size_t a = 0; a < m.axes.size(); ++a) row.push_back(m.value_text(m.points[p], a));
    for (size_t k = 0; k < shown; ++k) {
      const PointStats& st = s.stats[p][k];
      row.push_back(st.n ? format_metric_value(st.mean, unit_of(st.metric)) : "n/a");
    }
    t.add_row(std::move(row));
  }
  out += "\nmean over runs per point";
  if (s.metric_names.size() > shown) out += fmt::format(" ({} more metrics in points.csv)", s.metric_names.size() - shown);
  out += ":\n" + t.render();

  if (!s.sensitivity.empty()) {
    TextTable st;
    st.add_column("metric", true);
    if (m.variants.size() > 1) st.add_column("variant", true);
    std::vector<std::string> params;
    for (const ParameterFit& p : s.sensitivity.front().fit.parameters) params.push_back(p.parameter);
    if (params.empty())
      for (const SweepAxis& a : m.axes) params.push_back(a.path);
    for (const std::string& p : params) {
      // A duration is swept in seconds: say so, or a slope of 2.6e+06 us
      // per second reads as nonsense.
      const auto axis = std::find_if(m.axes.begin(), m.axes.end(), [&](const SweepAxis& a) { return a.path == p; });
      st.add_column(fmt::format("{} slope{}", p, axis != m.axes.end() && axis->duration ? " (per s)" : ""));
      st.add_column("elasticity");
      st.add_column("std. coef");
    }
    st.add_column("R^2");
    st.add_column("points");
    for (const SensitivityRow& row : s.sensitivity) {
      std::vector<std::string> cells{row.metric};
      if (m.variants.size() > 1) cells.push_back(row.variant);
      if (!row.fit.ok()) {
        for (size_t i = 0; i < params.size() * 3; ++i) cells.push_back("-");
        cells.push_back("-");
        cells.push_back(std::to_string(row.fit.points));
      } else {
        for (const ParameterFit& p : row.fit.parameters) {
          cells.push_back(fmt::format("{:.4g}", p.slope));
          cells.push_back(p.elasticity ? fmt::format("{:.3f}", *p.elasticity) : "n/a");
          cells.push_back(p.standardized ? fmt::format("{:.3f}", *p.standardized) : "n/a");
        }
        cells.push_back(row.fit.r2 ? fmt::format("{:.3f}", *row.fit.r2) : "n/a");
        cells.push_back(std::to_string(row.fit.points));
      }
      st.add_row(std::move(cells));
    }
    out += "\nsensitivity: least-squares fit of each metric's point means on the numeric swept values (slope per "
           "unit;\nelasticity = slope * mean(x) / mean(y); std. coef = slope * sd(x) / sd(y)):\n" +
           st.render();
    const auto first_bad = std::find_if(s.sensitivity.begin(), s.sensitivity.end(),
                                        [](const SensitivityRow& r) { return !r.fit.ok(); });
    if (first_bad != s.sensitivity.end()) out += fmt::format("(no fit where '-': {})\n", first_bad->fit.note);
  }
  if (m.why) {
    // Points side by side while a table stays readable: all in one, else
    // one table per variant, else none (decisions.csv has every point).
    // A column is named by the point's values (and variant).
    constexpr size_t kMaxDecisionColumns = 8;
    auto table_of = [&](const std::vector<size_t>& points, bool with_variant) {
      std::vector<DecisionColumn> columns;
      for (size_t p : points) {
        const SweepManifest::Point& pt = m.points[p];
        std::vector<std::string> parts;
        if (with_variant) parts.push_back(m.variants[pt.variant].name);
        for (size_t a = 0; a < m.axes.size(); ++a) parts.push_back(m.value_text(pt, a));
        columns.push_back({parts.empty() ? pt.id : fmt::format("{}", fmt::join(parts, " ")), s.decisions[p],
                           static_cast<size_t>(m.runs)});
      }
      return render_decisions_side_by_side(columns);
    };
    std::vector<std::string> axis_paths;
    for (const SweepAxis& a : m.axes) axis_paths.push_back(a.path);
    const std::string columns_are =
        axis_paths.empty() ? "" : fmt::format("; columns: {}", fmt::join(axis_paths, ", "));
    const std::string head = "\nwhy: decisions by reason (share of the group's decisions of that kind, and count per run)";
    std::vector<std::vector<size_t>> by_variant(m.variants.size());
    for (size_t p = 0; p < m.points.size(); ++p) by_variant[m.points[p].variant].push_back(p);
    if (m.points.size() <= kMaxDecisionColumns) {
      std::vector<size_t> all(m.points.size());
      for (size_t p = 0; p < all.size(); ++p) all[p] = p;
      const bool with_variant = m.variants.size() > 1;
      out += head + (with_variant ? fmt::format("; columns: variant{}{}", axis_paths.empty() ? "" : ", ",
                                                fmt::join(axis_paths, ", "))
                                  : columns_are) +
             "\n" + table_of(all, with_variant);
    } else if (by_variant.front().size() <= kMaxDecisionColumns) {
      for (size_t v = 0; v < m.variants.size(); ++v)
        out += head + fmt::format(", variant {}{}", m.variants[v].name, columns_are) + "\n" +
               table_of(by_variant[v], false);
    } else {
      out += fmt::format("\nwhy: the decisions of {} points by reason are in decisions.csv (a table shows up to {})\n",
                         m.points.size(), kMaxDecisionColumns);
    }
  }
  out += fmt::format("\nwrote {}/runs.csv, points.csv, sensitivity.csv, sweep.json{}\n", s.out,
                     m.why ? ", decisions.csv" : "");
  return out;
}

}  // namespace schedlab
