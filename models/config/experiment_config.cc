// Experiment files (schedlab compare) and sweep files (schedlab sweep): a
// base scenario, variants as overlays, replications, metrics, published
// figures, and for sweeps a grid of key paths. Keys are declared once below
// (rendered into docs/experiments.md by experiment_schema_markdown()), and
// every overlay is tried on the scenario while loading, so a typo in a key
// path fails at once with the experiment file's line and column.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <filesystem>
#include <set>
#include <tuple>

#include "models/config/config.h"
#include "models/config/overlay.h"
#include "models/config/yaml_util.h"

namespace schedlab {
namespace config {
namespace {

constexpr int kMaxRuns = 1000000;
constexpr size_t kMaxAxisValues = 100000;  // a range that would generate more is a mistake

enum class FileKind { kExperiment, kSweep };

const std::vector<ParamDecl>& common_decls(FileKind kind) {
  static const std::vector<ParamDecl> experiment = {
      {"name", "string", "file stem", "the experiment's name in reports"},
      {"description", "string", "-", "one line for the reader"},
      {"scenario", "path", "required", "base scenario (YAML), relative to this file"},
      {"runs", fmt::format("int 1..{}", kMaxRuns), "10", "replications per variant (schedlab compare --runs overrides)"},
      {"seed", "uint64", "1", "base seed: run i of every variant uses derive_seed(seed, i)"},
      {"duration", "duration > 0", "the scenario's", "simulated time per run (an overlay on `duration`)"},
      {"warmup", "duration < duration", "the scenario's", "metrics ignore [0, warmup) (an overlay on `warmup`)"},
      {"start_jitter", "duration", "0",
       "each run delays each task's start (but a task's with start_jitter: false) by a random time in "
       "[0, start_jitter) drawn from the run's seed"},
      {"set", "map KEY.PATH: value", "-", "overlays applied to every variant, before the variant's own"},
      {"variants", "list of variants", "required (>= 2)", "the variants; the first is the baseline (see variants[])"},
      {"metrics", "list of metric names",
       "group:*.wakeup_latency.mean, group:*.wakeup_latency.p99, group:*.cpu_share, cpu:*.busy_pct, "
       "total.avg_power_mw",
       "rows of the table (docs/experiments.md: metric names)"},
      {"published", "map METRIC: {VARIANT: value}", "-", "published figures printed beside the simulated ones"},
  };
  static const std::vector<ParamDecl> sweep = [] {
    std::vector<ParamDecl> d;
    for (const ParamDecl& p : experiment) {
      if (p.key == "published") continue;
      if (p.key == "variants") {
        d.push_back({"variants", "list of variants", "one variant 'base' without overlays",
                     "each variant is swept over the whole grid; curves get one line per variant"});
        continue;
      }
      if (p.key == "runs") {
        d.push_back({"runs", p.unit, "10", "replications per point"});
        continue;
      }
      if (p.key == "seed") {
        d.push_back({"seed", p.unit, "1", "base seed: run i of every point uses derive_seed(seed, i)"});
        continue;
      }
      if (p.key == "metrics") {
        d.push_back({"metrics", p.unit, "group:*.wakeup_latency.mean, group:*.wakeup_latency.p99, group:*.cpu_share",
                     "what each run records (docs/experiments.md: metric names)"});
        continue;
      }
      d.push_back(p);
    }
    d.push_back({"grid", "map KEY.PATH: list | {from, to, step}", "required",
                 "swept key paths; points are the cartesian product (first key slowest)"});
    return d;
  }();
  return kind == FileKind::kSweep ? sweep : experiment;
}

const std::vector<ParamDecl>& variant_decls() {
  static const std::vector<ParamDecl> decls = {
      {"name", "string of [A-Za-z0-9_.+-]", "required", "the variant's name in tables and file names"},
      {"description", "string", "-", "one line for the reader"},
      {"set", "map KEY.PATH: value", "-", "overlays of this variant (none: the base scenario as is)"},
  };
  return decls;
}

const std::vector<ParamDecl>& range_decls() {
  static const std::vector<ParamDecl> decls = {
      {"from", "number or duration", "required", "first value"},
      {"to", "number or duration", "required", "last value (included when the steps land on it)"},
      {"step", "number or duration, != 0", "required", "increment (negative to count down)"},
  };
  return decls;
}

SourcePos pos_of(const YamlDoc& doc, const YAML::Node& node) {
  YAML::Mark m = node.Mark();
  if (m.is_null() || m.line < 0) return {doc.file, 0, 0};
  return {doc.file, m.line + 1, m.column + 1};
}

bool valid_variant_name(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '-' || c == '.' || c == '+';
  });
}

// Calls use(key path, value, origin) for each entry of a `KEY.PATH: value`
// map (`set:`, `grid:`) in order, once its key is known to be a key path
// not seen before and well formed (its meaning is checked when applied).
// With `repeatable_append`, a path ending in [+] may come again (each
// appends one more element, in order).
template <typename Use>
void for_each_key_path(const YamlDoc& doc, const YAML::Node& node, const std::string& path, bool repeatable_append,
                       Use use) {
  std::set<std::string> seen;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const YAML::Node key = it->first, value = it->second;
    if (!key.IsScalar()) fail(doc, key, path, fmt::format("keys must be key paths, got {}", describe_node(key)));
    const std::string& key_path = key.Scalar();
    const SourcePos origin = pos_of(doc, key);
    if (!seen.insert(key_path).second && !(repeatable_append && key_path.ends_with("[+]")))
      fail(doc, key, child_path(path, key_path), "duplicate key path");
    parse_key_path(key_path, origin);
    use(key_path, value, origin);
  }
}

// `set:` maps: free-form key paths, checked against the scenario when the
// variants are tried.
std::vector<Overlay> load_overlay_map(const YamlDoc& doc, const YAML::Node& node, const std::string& path) {
  std::vector<Overlay> out;
  if (node.IsNull()) return out;
  if (!node.IsMap())
    fail(doc, node, path, fmt::format("expected a map of KEY.PATH: value (e.g. kernel.hz: 1000), got {}",
                                      describe_node(node)));
  for_each_key_path(doc, node, path, /*repeatable_append=*/true, [&](const std::string& key_path,
                                                                     const YAML::Node& value, const SourcePos& origin) {
    out.push_back({key_path, yaml_flow_text(value), origin});
  });
  return out;
}

std::optional<int64_t> integer_of(const std::string& text) {
  std::string_view t = text;
  if (!t.empty() && t.front() == '+') t.remove_prefix(1);
  int64_t v = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || ec != std::errc() || end != t.data() + t.size()) return std::nullopt;
  return v;
}

std::optional<double> double_of(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v)) return std::nullopt;
  // Reject spellings YAML would not read as numbers either ("nan", "inf", hex).
  if (std::any_of(text.begin(), text.end(), [](unsigned char c) { return std::isalpha(c) && c != 'e' && c != 'E'; }))
    return std::nullopt;
  return v;
}

// A swept value's number: integers and decimals as they are, durations in seconds.
AxisValue axis_value(const YAML::Node& node, bool* is_duration) {
  AxisValue v;
  v.text = yaml_flow_text(node);
  if (!node.IsScalar()) return v;
  const std::string& s = node.Scalar();
  if (auto i = integer_of(s)) {
    v.number = static_cast<double>(*i);
  } else if (auto d = double_of(s)) {
    v.number = *d;
  } else if (auto t = parse_duration(s)) {
    v.number = t->to_s();
    *is_duration = true;
  }
  return v;
}

std::vector<AxisValue> load_range(const YamlDoc& doc, const YAML::Node& node, const std::string& path,
                                  bool* is_duration) {
  MapReader r(doc, node, path, range_decls());
  for (const char* k : {"from", "to", "step"}) r.require(k);
  const YAML::Node from = *r.find("from"), to = *r.find("to"), step = *r.find("step");
  auto text = [&](const YAML::Node& n, const std::string& key) { return as_string(doc, n, r.path(key)); };
  const std::string f = text(from, "from"), t = text(to, "to"), s = text(step, "step");
  std::vector<AxisValue> out;
  auto too_many = [&] {
    fail(doc, step, r.path("step"), fmt::format("the range would have more than {} values", kMaxAxisValues));
  };
  if (auto fi = integer_of(f), ti = integer_of(t), si = integer_of(s); fi && ti && si) {
    if (*si == 0) fail(doc, step, r.path("step"), "step 0 never reaches 'to'");
    if ((*ti - *fi) / *si < 0) fail(doc, step, r.path("step"), fmt::format("step {} goes away from {} to {}", *si, *fi, *ti));
    for (int64_t v = *fi; *si > 0 ? v <= *ti : v >= *ti; v += *si) {
      if (out.size() >= kMaxAxisValues) too_many();
      out.push_back({std::to_string(v), static_cast<double>(v)});
    }
    return out;
  }
  const bool durations = !double_of(f) || !double_of(t) || !double_of(s);
  if (durations) {
    // Exact integer nanoseconds, so 1ms..4ms step 1ms hits 4ms.
    const Time tf = as_duration(doc, from, r.path("from"), Bound::kAny);
    const Time tt = as_duration(doc, to, r.path("to"), Bound::kAny);
    const Time ts = as_duration(doc, step, r.path("step"), Bound::kAny);
    if (ts == Time::zero()) fail(doc, step, r.path("step"), "step 0 never reaches 'to'");
    if ((tt - tf).count() / ts.count() < 0) fail(doc, step, r.path("step"), "the step goes away from 'to'");
    for (Time v = tf; ts > Time::zero() ? v <= tt : v >= tt; v += ts) {
      if (out.size() >= kMaxAxisValues) too_many();
      out.push_back({duration_text(v), v.to_s()});
    }
    *is_duration = true;
    return out;
  }
  const double df = *double_of(f), dt = *double_of(t), ds = *double_of(s);
  if (ds == 0) fail(doc, step, r.path("step"), "step 0 never reaches 'to'");
  const double n = std::floor((dt - df) / ds + 1e-9);
  if (n < 0) fail(doc, step, r.path("step"), "the step goes away from 'to'");
  if (n >= static_cast<double>(kMaxAxisValues)) too_many();
  for (int64_t k = 0; k <= static_cast<int64_t>(n); ++k) {
    // k * step from `from` (no accumulated error), printed with 12
    // significant digits so 0.1 steps read 0.3, not 0.30000000000000004.
    const double v = df + static_cast<double>(k) * ds;
    std::string txt = fmt::format("{:.12g}", v);
    out.push_back({txt, *double_of(txt)});
  }
  return out;
}

std::vector<SweepAxis> load_grid(const YamlDoc& doc, const YAML::Node& node, const std::string& path) {
  if (!node.IsMap() || node.size() == 0)
    fail(doc, node, path, fmt::format("expected a map of KEY.PATH: [values] or {{from, to, step}}, got {}",
                                      describe_node(node)));
  std::vector<SweepAxis> axes;
  for_each_key_path(doc, node, path, /*repeatable_append=*/false, [&](const std::string& axis_path,
                                                                      const YAML::Node& value, const SourcePos& origin) {
    SweepAxis axis;
    axis.path = axis_path;
    axis.origin = origin;
    const std::string key_path = child_path(path, axis.path);
    if (value.IsSequence()) {
      if (value.size() == 0) fail(doc, value, key_path, "an empty list sweeps nothing");
      for (size_t i = 0; i < value.size(); ++i) {
        axis.values.push_back(axis_value(value[i], &axis.duration));
        // The same value twice would run the same points twice under two ids.
        for (size_t j = 0; j + 1 < axis.values.size(); ++j)
          if (axis.values[j].text == axis.values.back().text)
            fail(doc, value[i], index_path(key_path, i),
                 fmt::format("'{}' is listed twice (first at {})", axis.values.back().text, index_path(key_path, j)));
      }
    } else if (value.IsMap()) {
      axis.values = load_range(doc, value, key_path, &axis.duration);
      if (axis.values.empty()) fail(doc, value, key_path, "the range is empty");
    } else {
      fail(doc, value, key_path, fmt::format("expected a list of values or {{from, to, step}}, got {}",
                                             describe_node(value)));
    }
    axes.push_back(std::move(axis));
  });
  return axes;
}

VariantSpec load_variant(const YamlDoc& doc, const YAML::Node& node, const std::string& path) {
  MapReader r(doc, node, path, variant_decls());
  r.require("name");
  VariantSpec v;
  v.origin = pos_of(doc, node);
  r.read("name", v.name);
  if (!valid_variant_name(v.name))
    fail(doc, *r.find("name"), r.path("name"),
         fmt::format("variant name '{}' must be letters, digits, '_', '-', '.' or '+' (it names columns and files)",
                     v.name));
  r.read("description", v.description);
  if (auto n = r.find("set")) v.overlays = load_overlay_map(doc, *n, r.path("set"));
  return v;
}

void load_published(const YamlDoc& doc, const YAML::Node& node, const std::string& path, ExperimentSpec& e) {
  if (node.IsNull()) return;
  if (!node.IsMap())
    fail(doc, node, path, fmt::format("expected a map METRIC: {{VARIANT: value}}, got {}", describe_node(node)));
  std::vector<std::string> names;
  for (const VariantSpec& v : e.variants) names.push_back(v.name);
  for (auto it = node.begin(); it != node.end(); ++it) {
    const YAML::Node key = it->first, values = it->second;
    const std::string metric = as_string(doc, key, path);
    const std::string mpath = child_path(path, metric);
    if (!values.IsMap())
      fail(doc, values, mpath, fmt::format("expected a map VARIANT: value, got {}", describe_node(values)));
    for (auto jt = values.begin(); jt != values.end(); ++jt) {
      const YAML::Node vkey = jt->first, vvalue = jt->second;
      const std::string variant = as_string(doc, vkey, mpath);
      if (std::find(names.begin(), names.end(), variant) == names.end())
        fail(doc, vkey, child_path(mpath, variant),
             fmt::format("unknown variant '{}' (variants: {}){}", variant, join(names), did_you_mean(variant, names)));
      e.published.push_back({metric, variant, as_string(doc, vvalue, child_path(mpath, variant)), pos_of(doc, vkey)});
    }
  }
}

std::string resolve_against(const std::string& file, const std::string& path) {
  std::filesystem::path p(path);
  if (p.is_absolute()) return p.lexically_normal().string();
  std::filesystem::path base = std::filesystem::path(file).parent_path();
  return (base / p).lexically_normal().string();
}

// Tries every variant and, for sweeps, every grid value on the scenario,
// so errors surface before any simulation. A sweep's point is what the
// engine applies (SweepManifest::overlays_of()): the common overlays, the
// variant's, then one value per axis. Each variant is tried at the grid's
// first point, and each grid value with the first variant and the other
// axes' first values: every overlay once, in the company it runs in (a
// variant that needs a grid value, e.g. an RT policy whose priority is
// swept, is not tried without one).
// Returns the shortest run duration among the variants.
Time check_overlays(const ExperimentSpec& e) {
  auto point = [&](const VariantSpec& v, size_t axis, size_t value) {
    std::vector<Overlay> all = e.common;
    all.insert(all.end(), v.overlays.begin(), v.overlays.end());
    for (size_t a = 0; a < e.grid.size(); ++a) {
      const SweepAxis& x = e.grid[a];
      all.push_back({x.path, x.values[a == axis ? value : 0].text, x.origin});
    }
    return all;
  };
  auto grid_label = [&](size_t axis, size_t value) {
    std::string out;
    for (size_t a = 0; a < e.grid.size(); ++a)
      out += fmt::format(", {}={}", e.grid[a].path, e.grid[a].values[a == axis ? value : 0].text);
    return out;
  };
  Time shortest = Time::max();
  for (const VariantSpec& v : e.variants)
    shortest = std::min(shortest, load_scenario_with_overlays(e.scenario, point(v, SIZE_MAX, 0),
                                                              fmt::format("variant '{}'{}", v.name,
                                                                          grid_label(SIZE_MAX, 0)))
                                      .duration);
  for (size_t a = 0; a < e.grid.size(); ++a)
    for (size_t i = 1; i < e.grid[a].values.size(); ++i)
      load_scenario_with_overlays(e.scenario, point(e.variants[0], a, i),
                                  fmt::format("variant '{}'{}", e.variants[0].name, grid_label(a, i)));
  return shortest;
}

ExperimentSpec load_spec(std::string_view text, const std::string& name, FileKind kind) {
  ExperimentSpec e;
  e.source = name;
  YamlDoc doc{name, nullptr};
  const YAML::Node root = parse_yaml_document(text, name);
  // A file for another command: say which command runs it.
  if (root.IsMap()) {
    if (root["tasks"] && !root["scenario"])
      fail(doc, root["tasks"], "tasks",
           "this is a scenario file ('tasks:'): run it with 'schedlab run' (an experiment or sweep file names its "
           "scenario with 'scenario:')");
    if (kind == FileKind::kExperiment && root["grid"] && !root["variants"])
      fail(doc, root["grid"], "grid", "this is a sweep file ('grid:'): run it with 'schedlab sweep'");
    if (kind == FileKind::kSweep && root["variants"] && !root["grid"])
      fail(doc, root["variants"], "variants",
           "this is an experiment file ('variants:' and no 'grid:'): run it with 'schedlab compare'");
  }
  MapReader r(doc, root, "", common_decls(kind));
  r.require("scenario");
  if (kind == FileKind::kExperiment) r.require("variants");
  if (kind == FileKind::kSweep) r.require("grid");
  e.name = std::filesystem::path(name).stem().string();
  r.read("name", e.name);
  r.read("description", e.description);
  r.read("scenario", e.scenario_as_written);
  if (e.scenario_as_written.empty()) fail(doc, *r.find("scenario"), "scenario", "expected a scenario file path");
  e.scenario = resolve_against(name, e.scenario_as_written);
  {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(e.scenario, ec))
      fail(doc, *r.find("scenario"), "scenario",
           fmt::format("no scenario file '{}' (paths are relative to the experiment file's directory)", e.scenario));
  }
  r.read("runs", e.runs, 1, kMaxRuns);
  r.read("seed", e.seed);
  // duration and warmup are overlays like any other, so the scenario loader
  // checks them (warmup < duration) and errors point here.
  for (auto [key, out, bound] : {std::tuple{"duration", &e.duration, Bound::kPositive},
                                 std::tuple{"warmup", &e.warmup, Bound::kNonNegative}}) {
    if (auto n = r.find(key)) {
      *out = as_duration(doc, *n, key, bound);
      e.common.push_back({key, duration_text(**out), pos_of(doc, *n)});
    }
  }
  r.read("start_jitter", e.start_jitter, Bound::kNonNegative);
  if (auto n = r.find("start_jitter")) e.start_jitter_origin = pos_of(doc, *n);
  if (auto n = r.find("set")) {
    std::vector<Overlay> set = load_overlay_map(doc, *n, "set");
    e.common.insert(e.common.end(), set.begin(), set.end());
  }
  if (auto n = r.find("variants")) {
    if (!n->IsSequence() || n->size() == 0)
      fail(doc, *n, "variants", fmt::format("expected a list of variants ({{name, set}}), got {}", describe_node(*n)));
    for (size_t i = 0; i < n->size(); ++i) {
      VariantSpec v = load_variant(doc, (*n)[i], index_path("variants", i));
      for (const VariantSpec& other : e.variants)
        if (other.name == v.name)
          fail(doc, (*n)[i]["name"], child_path(index_path("variants", i), "name"),
               fmt::format("duplicate variant name '{}'", v.name));
      e.variants.push_back(std::move(v));
    }
    if (kind == FileKind::kExperiment && e.variants.size() < 2)
      fail(doc, *n, "variants", "a comparison needs at least two variants (the first is the baseline)");
  }
  if (e.variants.empty()) e.variants.push_back({"base", "the scenario as it is", {}, {name, 0, 0}});
  if (auto n = r.find("metrics")) {
    if (!n->IsSequence())
      fail(doc, *n, "metrics", fmt::format("expected a list of metric names, got {}", describe_node(*n)));
    for (size_t i = 0; i < n->size(); ++i)
      e.metrics.push_back({as_string(doc, (*n)[i], index_path("metrics", i)), pos_of(doc, (*n)[i])});
  }
  if (auto n = r.find("published")) load_published(doc, *n, "published", e);
  if (auto n = r.find("grid")) e.grid = load_grid(doc, *n, "grid");
  const Time shortest = check_overlays(e);
  // A task whose start is delayed past the run's end never runs, and
  // would vanish from every table.
  if (auto n = r.find("start_jitter"); n && e.start_jitter >= shortest)
    fail(doc, *n, "start_jitter",
         fmt::format("{} is not shorter than a run ({}): tasks would start after it ended",
                     duration_text(e.start_jitter), duration_text(shortest)));
  return e;
}

void render_decls(std::string& out, const std::string& title, const std::vector<ParamDecl>& decls) {
  out += fmt::format("#### {}\n\n", title) + params_table_markdown(decls);
}

}  // namespace
}  // namespace config

ExperimentSpec load_experiment_yaml(std::string_view text, const std::string& name) {
  return config::load_spec(text, name, config::FileKind::kExperiment);
}

ExperimentSpec load_sweep_yaml(std::string_view text, const std::string& name) {
  return config::load_spec(text, name, config::FileKind::kSweep);
}

ExperimentSpec load_experiment_file(const std::string& path) {
  return load_experiment_yaml(config::read_text_file(path), path);
}

ExperimentSpec load_sweep_file(const std::string& path) { return load_sweep_yaml(config::read_text_file(path), path); }

std::vector<Overlay> load_overlay_file(const std::string& path) {
  using namespace config;
  const YamlDoc doc{path, nullptr};
  const YAML::Node root = parse_yaml_document(read_text_file(path, "cannot read overlay file"), path);
  if (root.IsNull()) throw ConfigError(path, 1, 1, "", "an overlay file holds a map of KEY.PATH: value; this one is empty");
  return load_overlay_map(doc, root, "");  // refuses anything but a map
}

void add_overlay_file(ExperimentSpec& e, const std::string& file) {
  std::vector<Overlay> overlays = load_overlay_file(file);
  e.common.insert(e.common.end(), overlays.begin(), overlays.end());
  e.set_files.push_back({file, std::move(overlays)});
  config::check_overlays(e);
}

std::string experiment_schema_markdown() {
  using namespace config;
  std::string out;
  render_decls(out, "experiment file (`schedlab compare`): top level", common_decls(FileKind::kExperiment));
  render_decls(out, "sweep file (`schedlab sweep`): top level", common_decls(FileKind::kSweep));
  render_decls(out, "`variants[]`: one variant", variant_decls());
  render_decls(out, "`grid.KEY.PATH` as a range", range_decls());
  return out;
}

}  // namespace schedlab
