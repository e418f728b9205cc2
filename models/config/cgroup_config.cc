// cgroups: the cpu cgroup hierarchy (cpu.uclamp.min / cpu.uclamp.max,
// CONFIG_UCLAMP_TASK_GROUP), tasks' `cgroup` key, and the two events that
// act on it at run time: `cgroup` (a task moves itself, like a write of
// its tid to cgroup.procs) and `cpu_uclamp` (a write of a group's clamps,
// as Android's power HAL does on touch).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "models/config/yaml_loaders.h"
#include "models/kernel/sched/uclamp.h"

namespace schedlab::config {
namespace {

constexpr const char* kPercentType = "percent 0..100 (two decimals) or max";

// capacity_from_percent()'s parse: "max", or cgroup_parse_float(buf, 2):
// a whole part and an optional fraction, rounded to two decimals
// (DIV_ROUND_CLOSEST); more than 100.00 is ERANGE. Returns 1/100 percent.
int64_t as_uclamp_percent(const YamlDoc& doc, const YAML::Node& node, const std::string& path) {
  auto bad = [&](const std::string& why) {
    fail(doc, node, path, fmt::format("expected {} (cpu.uclamp.* syntax), got {}{}", kPercentType,
                                      describe_node(node), why.empty() ? "" : " (" + why + ")"));
  };
  if (!node.IsScalar()) bad("");
  const std::string text = node.Scalar();
  if (text == "max") return kUclampPercentScale;
  size_t i = 0;
  int64_t whole = 0, frac = 0;
  int frac_digits = 0;
  if (i == text.size() || !std::isdigit(static_cast<unsigned char>(text[i]))) bad("");
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
    whole = whole * 10 + (text[i] - '0');
    if (whole > 100) bad("more than 100%: the kernel answers ERANGE");
  }
  if (i < text.size() && text[i] == '.') {
    for (++i; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
      if (frac_digits < 18) {
        frac = frac * 10 + (text[i] - '0');
        ++frac_digits;
      }
    }
  }
  if (i != text.size()) bad("");
  int64_t scale = 1;
  for (int d = 0; d < frac_digits; ++d) scale *= 10;
  if (frac_digits < 2)
    frac *= frac_digits == 0 ? 100 : 10;
  else
    frac = (frac + scale / 200) / (scale / 100);  // DIV_ROUND_CLOSEST to two decimals
  const int64_t percent = whole * 100 + frac;
  if (percent > kUclampPercentScale) bad("more than 100%: the kernel answers ERANGE");
  return percent;
}

std::vector<std::string> group_names(const KernelParams& k) {
  std::vector<std::string> names{"/"};
  for (const auto& c : k.cgroups) names.push_back(c.name);
  return names;
}

// An event's `group`: a cgroup that is a level of the fair hierarchy (a
// cpu weight or cpu.idle), the only ones with cpu.weight / cpu.idle files
// in the model.
std::string fair_level_group(const YamlDoc& doc, const YAML::Node& node, const std::string& path,
                             const MapReader& r, const KernelParams& k, std::string_view event) {
  r.require("group");
  std::vector<std::string> levels;
  for (const auto& c : k.cgroups)
    if (c.fair_level()) levels.push_back(c.name);
  if (levels.empty())
    fail(doc, node, path,
         fmt::format("a {} event needs a cgroup with cpu_weight, cpu_shares or cpu_idle in cgroups[] (a level of "
                     "the fair hierarchy)",
                     event));
  return ref_name(doc, r, "group", levels, "cgroup with a cpu weight");
}

void require_uclamp(const YamlDoc& doc, const YAML::Node& node, const std::string& path, const KernelParams& k,
                    std::string_view what) {
  if (!k.uclamp)
    fail(doc, node, path,
         fmt::format("{} needs CONFIG_UCLAMP_TASK_GROUP: set 'kernel: {{uclamp: {{enabled: true}}}}' (the model's "
                     "cpu cgroups carry utilization clamps only)",
                     what));
}

}  // namespace

const std::vector<ParamDecl>& cgroup_params() {
  static const std::vector<ParamDecl> decls = {
      {"name", "string, no blanks, not /", "required", "the cgroup (e.g. top-app, foreground, background)"},
      {"parent", "name of an earlier cgroup, or /", "/", "where it is created"},
      {"uclamp_min", kPercentType, "0 (not written)", "cpu.uclamp.min: the group's utilization floor (needs kernel.uclamp.enabled)"},
      {"uclamp_max", kPercentType, "max (not written)", "cpu.uclamp.max: the group's utilization cap (needs kernel.uclamp.enabled)"},
      {"cpu_weight", "integer 1..10000", "not written (no level of its own)",
       "cpu.weight (cgroup v2; 100 = 1024 shares): the group becomes a level of the fair hierarchy "
       "(CONFIG_FAIR_GROUP_SCHED; kernels 6.1, 6.6, 6.12 and 6.18, docs/fair_group_sched.md)"},
      {"cpu_shares", "integer 2..262144", "not written (no level of its own)",
       "cpu.shares (cgroup v1; 1024 = a nice-0 task's weight); instead of cpu_weight"},
      {"cpu_idle", "boolean", "false (not written)",
       "cpu.idle: the group is a level whose entity is idle (weight WEIGHT_IDLEPRIO, 3 shares; preempted by "
       "any wake-up from outside it, never a buddy) and whose tasks count as SCHED_IDLE ones to placement and "
       "balancing; instead of cpu_weight and cpu_shares"},
  };
  return decls;
}

const std::vector<ParamDecl>& cpu_uclamp_event_params() {
  static const std::vector<ParamDecl> decls = {
      {"group", "a cgroup name", "required", "whose files are written"},
      {"min", kPercentType, "not written", "written to cpu.uclamp.min (first)"},
      {"max", kPercentType, "not written", "written to cpu.uclamp.max (then)"},
  };
  return decls;
}

const std::vector<ParamDecl>& cpu_weight_event_params() {
  static const std::vector<ParamDecl> decls = {
      {"group", "a cgroup with cpu_weight, cpu_shares or cpu_idle", "required",
       "whose file is written (not while it is idle: the kernel's EINVAL, an error at run time)"},
      {"weight", "integer 1..10000", "-", "written to cpu.weight (cgroup v2; 100 = 1024 shares)"},
      {"shares", "integer 2..262144", "-", "written to cpu.shares (cgroup v1), instead of weight"},
  };
  return decls;
}

const std::vector<ParamDecl>& cpu_idle_event_params() {
  static const std::vector<ParamDecl> decls = {
      {"group", "a cgroup with cpu_weight, cpu_shares or cpu_idle", "required", "whose cpu.idle is written"},
      {"idle", "boolean", "required",
       "the value written: true makes the group idle at WEIGHT_IDLEPRIO; false makes it a plain level at 1024 "
       "shares (cpu.weight 100), whatever its weight was before"},
  };
  return decls;
}

void load_cgroups(const YamlDoc& doc, const MapReader& top, ScenarioParams& s) {
  auto n = top.find("cgroups");
  if (!n) return;
  const YAML::Node& list = sequence(doc, *n, "cgroups", "cgroups");
  std::vector<std::string> seen{"/"};
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string path = index_path("cgroups", i);
    MapReader r(doc, list[i], path, cgroup_params());
    KernelParams::CpuCgroup c;
    r.require("name");
    const YAML::Node name_node = *r.find("name");
    if (name_node.IsScalar() && name_node.Scalar() == "/")
      fail(doc, name_node, r.path("name"), "'/' is the root group, which exists already");
    c.name = unique_name(doc, r, seen, "cgroup");
    if (c.name.find('/') != std::string::npos)
      fail(doc, name_node, r.path("name"), fmt::format("cgroup name '{}' contains '/' (nest with 'parent')", c.name));
    if (r.has("parent")) {
      const std::vector<std::string> earlier(seen.begin(), seen.end() - 1);  // not itself
      c.parent = ref_name(doc, r, "parent", earlier, "cgroup");
      if (c.parent == "/") c.parent.clear();
    }
    for (const char* key : {"uclamp_min", "uclamp_max"}) {
      auto v = r.find(key);
      if (!v) continue;
      require_uclamp(doc, *v, r.path(key), s.kernel,
                     std::string_view(key) == "uclamp_min" ? "cpu.uclamp.min" : "cpu.uclamp.max");
      (std::string_view(key) == "uclamp_min" ? c.uclamp_min_pct : c.uclamp_max_pct) =
          as_uclamp_percent(doc, *v, r.path(key));
    }
    // cpu.weight / cpu.shares: ranges as the kernel's writes take them.
    if (r.has("cpu_weight") && r.has("cpu_shares"))
      fail(doc, *r.find("cpu_shares"), r.path("cpu_shares"),
           "give cpu_weight (cgroup v2) or cpu_shares (v1), not both");
    if (r.has("cpu_idle")) {
      r.read("cpu_idle", c.cpu_idle);
      if (c.cpu_idle && !s.kernel.fair_group_sched)
        fail(doc, *r.find("cpu_idle"), r.path("cpu_idle"),
             "cpu_idle needs CONFIG_FAIR_GROUP_SCHED: set 'kernel: {fair_group_sched: true}'");
      if (c.cpu_idle && (r.has("cpu_weight") || r.has("cpu_shares"))) {
        const char* key = r.has("cpu_weight") ? "cpu_weight" : "cpu_shares";
        fail(doc, *r.find(key), r.path(key),
             "an idle group's weight is WEIGHT_IDLEPRIO and the kernel refuses cpu.weight and cpu.shares writes to "
             "it (EINVAL): give cpu_idle or a cpu weight, not both");
      }
    }
    if (r.has("cpu_weight") || r.has("cpu_shares")) {
      const YAML::Node& v = *r.find(r.has("cpu_weight") ? "cpu_weight" : "cpu_shares");
      const std::string key = r.has("cpu_weight") ? "cpu_weight" : "cpu_shares";
      if (!s.kernel.fair_group_sched)
        fail(doc, v, r.path(key),
             fmt::format("{} needs CONFIG_FAIR_GROUP_SCHED: set 'kernel: {{fair_group_sched: true}}'", key));
      int64_t value = 0;
      if (key == "cpu_weight") {
        r.read("cpu_weight", value, 1, 10000);
        c.cpu_weight = value;
      } else {
        r.read("cpu_shares", value, 2, int64_t{1} << 18);
        c.cpu_shares = value;
      }
    }
    s.kernel.cgroups.push_back(c);
  }
}

// `cgroup: NAME` on a task: the group it starts in.
void load_task_cgroup(const YamlDoc& doc, const MapReader& r, const KernelParams& k, std::string& out) {
  if (!r.has("cgroup")) return;
  out = ref_name(doc, r, "cgroup", group_names(k), "cgroup");
  if (out == "/") out.clear();
}

// `cgroup: NAME` event: the task moves itself to group NAME.
EventSpec load_cgroup_event(const YamlDoc& doc, const YAML::Node& node, const std::string& path,
                            const KernelParams& k) {
  EventSpec e;
  e.kind = EventSpec::Kind::kCgroup;
  e.name = as_string(doc, node, path);
  const std::vector<std::string> valid = group_names(k);
  if (std::find(valid.begin(), valid.end(), e.name) == valid.end())
    fail(doc, node, path, fmt::format("unknown cgroup '{}' (cgroups: {}){}", e.name, join(valid),
                                      did_you_mean(e.name, valid)));
  return e;
}

// `cpu_uclamp: {group: NAME, min: P, max: P}`.
EventSpec load_cpu_uclamp_event(const YamlDoc& doc, const YAML::Node& node, const std::string& path,
                                const KernelParams& k) {
  MapReader r(doc, node, path, cpu_uclamp_event_params());
  require_uclamp(doc, node, path, k, "a cpu_uclamp event");
  r.require("group");
  std::vector<std::string> valid = group_names(k);
  valid.erase(valid.begin());  // the root group has no cpu.uclamp files
  EventSpec e;
  e.kind = EventSpec::Kind::kCpuUclamp;
  e.name = ref_name(doc, r, "group", valid, "cgroup");
  if (auto v = r.find("min")) e.uclamp_min = static_cast<uint32_t>(as_uclamp_percent(doc, *v, r.path("min")));
  if (auto v = r.find("max")) e.uclamp_max = static_cast<uint32_t>(as_uclamp_percent(doc, *v, r.path("max")));
  if (!e.uclamp_min && !e.uclamp_max) r.fail_here(fmt::format("expected 'min', 'max' or both ({})", kPercentType));
  return e;
}

// `cpu_weight: {group: NAME, weight: W}` or `{group: NAME, shares: S}`:
// only a group that is a level of the fair hierarchy (one with a cpu
// weight in cgroups[]) has the file in the model.
EventSpec load_cpu_weight_event(const YamlDoc& doc, const YAML::Node& node, const std::string& path,
                                const KernelParams& k) {
  MapReader r(doc, node, path, cpu_weight_event_params());
  EventSpec e;
  e.kind = EventSpec::Kind::kCpuWeight;
  e.name = fair_level_group(doc, node, path, r, k, "cpu_weight");
  if (r.has("weight") == r.has("shares")) r.fail_here("expected 'weight' (cpu.weight) or 'shares' (cpu.shares), one of them");
  if (r.has("weight")) {
    r.read("weight", e.cpu_weight, 1, 10000);
  } else {
    r.read("shares", e.cpu_weight, 2, int64_t{1} << 18);
    e.cpu_weight_is_shares = true;
  }
  return e;
}

// `cpu_idle: {group: NAME, idle: BOOL}`: only a group that is a level of
// the fair hierarchy has the file in the model.
EventSpec load_cpu_idle_event(const YamlDoc& doc, const YAML::Node& node, const std::string& path,
                              const KernelParams& k) {
  MapReader r(doc, node, path, cpu_idle_event_params());
  EventSpec e;
  e.kind = EventSpec::Kind::kCpuIdle;
  e.name = fair_level_group(doc, node, path, r, k, "cpu_idle");
  r.require("idle");
  r.read("idle", e.cpu_idle);
  return e;
}

}  // namespace schedlab::config
