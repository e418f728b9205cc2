// kernel: version, tick, preemption model, sched_feat overrides, sysctl
// tunables and the overheads the model charges. Defaults come from
// KernelParams itself so the documented defaults are the real ones.
#include <fmt/format.h>

#include <algorithm>

#include "models/config/feature_names.h"
#include "models/config/yaml_loaders.h"
#include "models/kernel/cpuidle/governor.h"
#include "models/kernel/sched/features.h"
#include "models/kernel/sched/kernel_versions.h"
#include "models/kernel/sched/uclamp.h"

namespace schedlab::config {
namespace {

const std::vector<std::string> kHzChoices = {"100", "250", "300", "1000"};
const std::vector<std::string> kPreemptChoices = {"none", "voluntary", "full", "lazy"};
const std::vector<std::string> kScalingChoices = {"none", "log", "linear"};

std::string preempt_text(PreemptModel m) {
  switch (m) {
    case PreemptModel::kNone: return "none";
    case PreemptModel::kVoluntary: return "voluntary";
    case PreemptModel::kFull: return "full";
    case PreemptModel::kLazy: return "lazy";
  }
  return "?";
}

PreemptModel preempt_from(const std::string& text) {
  if (text == "none") return PreemptModel::kNone;
  if (text == "voluntary") return PreemptModel::kVoluntary;
  if (text == "lazy") return PreemptModel::kLazy;
  return PreemptModel::kFull;
}

std::string choices_unit(const std::vector<std::string>& choices) { return join(choices, " | "); }

// "none" (no cpuidle) and the governors of cpuidle::make_governor().
const std::vector<std::string>& cpuidle_governor_choices() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v = {"none"};
    for (std::string_view n : cpuidle::governor_names()) v.emplace_back(n);
    return v;
  }();
  return names;
}

void load_cpuidle(const YamlDoc& doc, const YAML::Node& node, const std::string& path, KernelParams& k) {
  MapReader r(doc, node, path, cpuidle_params());
  r.read_choice("governor", k.cpuidle_governor, cpuidle_governor_choices());
  r.read("governor_cost", k.cpuidle_governor_cost);
  r.read("sleep_length_cost", k.cpuidle_sleep_length_cost);
  if (auto n = r.find("latency_req")) {
    if (n->IsScalar() && n->Scalar() == "none")
      k.cpuidle_latency_req.reset();
    else
      k.cpuidle_latency_req = as_duration(doc, *n, r.path("latency_req"), Bound::kNonNegative);
  }
  // A value for every CPU, or one list entry per CPU (the count is checked
  // against the platform when the kernel is built).
  auto per_cpu = [&](std::string_view key, auto& out, auto read_one) {
    const auto n = r.find(key);
    if (!n) return;
    out.clear();
    if (n->IsSequence()) {
      for (size_t i = 0; i < n->size(); ++i) out.push_back(read_one((*n)[i], index_path(r.path(key), i)));
      if (out.empty()) fail(doc, *n, r.path(key), "expected a value or a list of one value per CPU, got an empty list");
    } else {
      out.push_back(read_one(*n, r.path(key)));
    }
  };
  // The sysctls' limits: 0..1 s (NSEC_PER_SEC), util 0..1000.
  auto duration = [&](const YAML::Node& n, const std::string& at) {
    const Time t = as_duration(doc, n, at, Bound::kNonNegative);
    if (t > Time::s(1)) fail(doc, n, at, "expected a duration of at most 1s (the sysctl's limit)");
    return t;
  };
  per_cpu("walt_busy_hyst", k.walt_busy_hyst, duration);
  per_cpu("walt_util_busy_hyst", k.walt_util_busy_hyst, duration);
  per_cpu("walt_util_busy_hyst_util", k.walt_util_busy_hyst_util,
          [&](const YAML::Node& n, const std::string& at) { return static_cast<uint32_t>(as_int(doc, n, at, 0, 1000)); });
  if (!k.walt_util_busy_hyst_util.empty() && k.walt_util_busy_hyst.empty())
    fail(doc, *r.find("walt_util_busy_hyst_util"), r.path("walt_util_busy_hyst_util"),
         "has no effect without walt_util_busy_hyst (the hysteresis time)");
}

void load_uclamp(const YamlDoc& doc, const YAML::Node& node, const std::string& path, KernelParams& k) {
  MapReader r(doc, node, path, uclamp_params());
  r.read("enabled", k.uclamp);
  r.read("buckets", k.uclamp_buckets, 5, kUclampMaxBuckets);
  int64_t v = k.uclamp_util_min;
  r.read("util_min", v, 0, kUclampScale);
  k.uclamp_util_min = static_cast<uint32_t>(v);
  v = k.uclamp_util_max;
  r.read("util_max", v, 0, kUclampScale);
  k.uclamp_util_max = static_cast<uint32_t>(v);
  v = k.uclamp_min_rt_default;
  r.read("min_rt_default", v, 0, kUclampScale);
  k.uclamp_min_rt_default = static_cast<uint32_t>(v);
  // sysctl_sched_uclamp_handler() rejects util_min > util_max (EINVAL).
  if (k.uclamp_util_min > k.uclamp_util_max) {
    const std::string key = r.has("util_min") ? "util_min" : "util_max";
    fail(doc, *r.find(key), r.path(key),
         fmt::format("util_min {} exceeds util_max {} (the kernel rejects this sysctl write)", k.uclamp_util_min,
                     k.uclamp_util_max));
  }
  const bool sysctls = r.has("buckets") || r.has("util_min") || r.has("util_max") || r.has("min_rt_default");
  if (sysctls && !k.uclamp) {
    const std::string key = r.has("buckets") ? "buckets" : r.has("util_min") ? "util_min" : r.has("util_max") ? "util_max" : "min_rt_default";
    fail(doc, *r.find(key), r.path(key), "needs 'enabled: true' (these exist only with CONFIG_UCLAMP_TASK)");
  }
}

void load_features(const YamlDoc& doc, const YAML::Node& node, const std::string& path,
                   std::map<std::string, bool>& out) {
  const std::vector<std::string>& known = known_sched_features();
  if (node.IsNull()) return;
  if (!node.IsMap())
    fail(doc, node, path, fmt::format("expected a map of FEATURE: true|false, got {}", describe_node(node)));
  for (auto it = node.begin(); it != node.end(); ++it) {
    const YAML::Node key = it->first, value = it->second;  // copies: *it is a temporary
    const std::string name = key.IsScalar() ? key.Scalar() : describe_node(key);
    std::string key_path = child_path(path, name);
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string guess = closest_name(name, known);
      fail(doc, key, key_path,
           fmt::format("unknown scheduler feature '{}' (valid: {}){}", name, join(known),
                       guess.empty() ? "" : fmt::format("; did you mean '{}'?", guess)));
    }
    if (out.count(name)) fail(doc, key, key_path, fmt::format("duplicate feature '{}'", name));
    out[name] = as_bool(doc, value, key_path);
    if (out[name])
      if (const char* why = sched_feature_unmodelled(name))
        fail(doc, value, key_path,
             fmt::format("{} {}: only false (every modelled version's default) is accepted", name, why));
  }
}

// sched_rt_runtime_us takes -1 for "no RT throttling" (RLIM_INFINITY).
Time load_rt_runtime(const YamlDoc& doc, const YAML::Node& node, const std::string& path) {
  if (node.IsScalar() && (node.Scalar() == "-1" || node.Scalar() == "unlimited")) return Time::ns(-1);
  return as_duration(doc, node, path, Bound::kNonNegative);
}

void load_overheads(const YamlDoc& doc, const YAML::Node& node, const std::string& path, KernelParams& k) {
  MapReader r(doc, node, path, overhead_params());
  r.read("context_switch", k.context_switch_cost);
  r.read("wakeup", k.wakeup_cost);
  r.read("ipi", k.ipi_latency);
  r.read("newidle_balance", k.newidle_balance_cost);
  r.read("timer_slack", k.timer_slack);
}

// Cross-field rules the kernel itself enforces when the sysctls are written.
void check_bandwidths(const MapReader& r, const KernelParams& k) {
  if (k.rt_runtime >= Time::zero() && k.rt_runtime > k.rt_period) {
    std::string key = r.has("rt_runtime") ? "rt_runtime" : "rt_period";
    fail(r.doc(), *r.find(key), r.path(key),
         fmt::format("rt_runtime {} exceeds rt_period {} (the kernel rejects this; use -1 for unlimited)",
                     duration_text(k.rt_runtime), duration_text(k.rt_period)));
  }
  if (k.fair_server_runtime > k.fair_server_period) {
    std::string key = r.has("fair_server_runtime") ? "fair_server_runtime" : "fair_server_period";
    fail(r.doc(), *r.find(key), r.path(key),
         fmt::format("fair_server_runtime {} exceeds fair_server_period {}", duration_text(k.fair_server_runtime),
                     duration_text(k.fair_server_period)));
  }
}

// Switches and tunables the chosen version does not have load (a sweep
// over versions may set them for the others) but change nothing: say so,
// where they are set (the kernel itself would refuse them; one, 6.6's
// PLACE_DEADLINE_INITIAL, exists but has no lasting effect). 6.12's EEVDF
// switches set on 6.6 to other than 6.6's behaviour are modelled, with a
// warning that 6.6 has no such switch.
void warn_inert_settings(const MapReader& r, const KernelParams& k) {
  const std::optional<KernelVersionInfo> info = kernel_version_info(k.version);
  if (!info) return;
  const YamlDoc& doc = r.doc();
  if (auto n = r.find("features"); n && n->IsMap())
    for (auto it = n->begin(); it != n->end(); ++it) {
      const std::string name = it->first.Scalar();
      const auto v = k.features.find(name);
      if (const char* why = sched_feature_inert(name, *info))
        warn(doc, it->first, child_path(r.path("features"), name),
             fmt::format("{} {}: on {} setting it changes nothing", name, why, k.version));
      else if (const char* later = v == k.features.end() ? nullptr
                                                          : sched_feature_from_later_version(name, v->second, *info))
        warn(doc, it->first, child_path(r.path("features"), name),
             fmt::format("{} {}: modelled on {} anyway", name, later, k.version));
    }
  if (info->eevdf) {
    for (const char* key : {"sched_latency", "min_granularity", "wakeup_granularity"})
      if (auto n = r.find(key))
        warn(doc, *n, r.path(key),
             fmt::format("{} is CFS's (before 6.6; EEVDF's slice is base_slice): on {} it changes nothing", key,
                         k.version));
  } else if (auto n = r.find("base_slice")) {
    warn(doc, *n, r.path("base_slice"),
         fmt::format("base_slice is EEVDF's (6.6+; CFS slices by sched_latency and min_granularity): on {} it "
                     "changes nothing",
                     k.version));
  }
  if (k.preempt == PreemptModel::kLazy && !info->preempt_lazy)
    warn(doc, *r.find("preempt"), r.path("preempt"),
         fmt::format("lazy exists from Linux 6.13; modelled on {} anyway", k.version));
}

}  // namespace

const std::vector<ParamDecl>& kernel_params() {
  static const std::vector<ParamDecl> decls = [] {
    const KernelParams d;
    return std::vector<ParamDecl>{
        {"version", choices_unit(known_kernel_versions()), d.version,
         "kernel release whose scheduler is modelled (compared as written: 6.10 is not 6.1)"},
        {"hz", choices_unit(kHzChoices), std::to_string(d.hz), "CONFIG_HZ: scheduler tick rate"},
        {"preempt", choices_unit(kPreemptChoices), preempt_text(d.preempt), "preemption model (CONFIG_PREEMPT_*)"},
        {"features", "map NAME: bool", "version default", "sched_feat overrides (kernel/sched/features.h); HRTICK and RT_RUNTIME_SHARE, not modelled, take only false; a switch the version lacks (CFS's on 6.6+, EEVDF's on 6.1) loads with a warning: it changes nothing"},
        {"base_slice", "duration > 0", "version default", "sysctl_sched_base_slice (EEVDF), before tunable scaling"},
        {"sched_latency", "duration > 0", "version default", "sysctl_sched_latency (CFS before 6.6)"},
        {"min_granularity", "duration > 0", "version default", "sysctl_sched_min_granularity (CFS before 6.6)"},
        {"wakeup_granularity", "duration > 0", "version default",
         "sysctl_sched_wakeup_granularity (CFS before 6.6)"},
        {"tunable_scaling", choices_unit(kScalingChoices), d.tunable_scaling,
         "sysctl_sched_tunable_scaling: how tunables grow with the CPU count"},
        {"rt_runtime", "duration | -1 | unlimited", duration_text(d.rt_runtime),
         "sched_rt_runtime_us: RT time allowed per rt_period; -1 = no RT throttling"},
        {"rt_period", "duration > 0", duration_text(d.rt_period), "sched_rt_period_us"},
        {"rr_timeslice", "duration > 0", duration_text(d.rr_timeslice), "sched_rr_timeslice_ms: SCHED_RR quantum"},
        {"fair_server", "bool", "version default (on from 6.12)",
         "dl_server that reserves time for fair tasks under RT load"},
        {"fair_server_runtime", "duration", duration_text(d.fair_server_runtime), "fair server budget per period"},
        {"fair_server_period", "duration > 0", duration_text(d.fair_server_period), "fair server period"},
        {"fair_server_lazy_stop", "bool", "version default (on from 6.18)",
         "the fair server stays started when the CPU's last fair task leaves, until a pick finds none (6.17+; "
         "android16-6.12 and 6.12.92+ backport it)"},
        {"fair_group_sched", "bool", d.fair_group_sched ? "true" : "false",
         "CONFIG_FAIR_GROUP_SCHED (as GKI builds it); tasks in the root cpu cgroup unless their cgroup has a cpu weight: "
         "task_h_load() from the root cfs_rq's h_load, a migrating non-fair task's fair signals aged (set_task_rq_fair())"},
        {"overheads", "map", "-", "costs the model charges (kernel.overheads)"},
        {"cpuidle", "map", "-", "cpuidle governor, its costs and the PM QoS limit (kernel.cpuidle)"},
        {"uclamp", "map", "-", "utilization clamping: CONFIG_UCLAMP_TASK and its sysctls (kernel.uclamp)"},
    };
  }();
  return decls;
}

const std::vector<ParamDecl>& overhead_params() {
  static const std::vector<ParamDecl> decls = [] {
    const KernelParams d;
    return std::vector<ParamDecl>{
        {"context_switch", "duration", duration_text(d.context_switch_cost), "CPU time lost per context switch"},
        {"wakeup", "duration", duration_text(d.wakeup_cost), "try_to_wake_up() until the task is enqueued (one CPU's wake-ups run in turn)"},
        {"ipi", "duration", duration_text(d.ipi_latency), "delivery of a remote reschedule IPI"},
        {"newidle_balance", "duration", duration_text(d.newidle_balance_cost),
         "what one newidle balance pass measures (max_newidle_lb_cost, compared with avg_idle); not charged"},
        {"timer_slack", "duration", duration_text(d.timer_slack),
         "init_task's timer slack: a fair task's sleep ends in [t, t + slack], at the first hrtimer interrupt of its CPU there (RT tasks get none)"},
    };
  }();
  return decls;
}

const std::vector<ParamDecl>& cpuidle_params() {
  static const std::vector<ParamDecl> decls = [] {
    const KernelParams d;
    return std::vector<ParamDecl>{
        {"governor", choices_unit(cpuidle_governor_choices()), d.cpuidle_governor,
         "cpuidle governor (teo: v6.5; teo_tick: + the July 2023 tick fixes; teo_tick_rfc: + the RFC of 1 Aug "
         "2023; teo_v6.6: as merged in 6.6, with tick statistics; teo_v6.12, teo_v6.18: the 6.12 and 6.18 files; menu: 6.12; menu_v6.18: the 6.18 file; "
         "qcom-cpu-lpm: Qualcomm's vendor governor of Snapdragon phones, with its cluster governor); none = no cpuidle: an "
         "idle CPU is "
         "in state 0 at once, with no latency"},
        {"governor_cost", "duration", duration_text(d.cpuidle_governor_cost),
         "assumption: idle-task CPU time of each governor run before the state is entered"},
        {"sleep_length_cost", "duration", duration_text(d.cpuidle_sleep_length_cost),
         "assumption: CPU time of tick_nohz_get_sleep_length(), charged when the governor calls it"},
        {"latency_req", "duration | none", "none",
         "PM QoS CPU latency limit (cpu_latency_qos): deepest allowed exit latency"},
        {"walt_busy_hyst", "duration <= 1s, or a list of one per CPU", "none",
         "qcom-cpu-lpm's WALT LPM bias: sched_busy_hyst_ns of the CPUs in sched_busy_hysteresis_enable_cpus (0 "
         "elsewhere): WFI for this long after a drop below 3 runnable tasks or a dequeue at util > capacity / 10"},
        {"walt_util_busy_hyst", "duration <= 1s, or a list of one per CPU", "none",
         "qcom-cpu-lpm's WALT LPM bias: sched_util_busy_hyst_cpu_ns of the CPUs in "
         "sched_util_busy_hysteresis_enable_cpus (0 elsewhere): WFI for this long after a dequeue while the CPUs' "
         "summed util reaches walt_util_busy_hyst_util"},
        {"walt_util_busy_hyst_util", "int 0..1000, or a list of one per CPU", "15 (WALT's default)",
         "sched_util_busy_hyst_cpu_util: the summed util (PELT standing in for WALT's) that triggers it"},
    };
  }();
  return decls;
}

const std::vector<ParamDecl>& uclamp_params() {
  static const std::vector<ParamDecl> decls = [] {
    const KernelParams d;
    return std::vector<ParamDecl>{
        {"enabled", "bool", d.uclamp ? "true" : "false",
         "CONFIG_UCLAMP_TASK (Kconfig default n); needed for tasks' uclamp_min / uclamp_max"},
        {"buckets", "int 5..20", std::to_string(d.uclamp_buckets), "CONFIG_UCLAMP_BUCKETS_COUNT (Kconfig default 5)"},
        {"util_min", "int 0..1024", std::to_string(d.uclamp_util_min),
         "sched_util_clamp_min: the most boost any task may get"},
        {"util_max", "int 0..1024", std::to_string(d.uclamp_util_max),
         "sched_util_clamp_max: the highest cap any task may ask for"},
        {"min_rt_default", "int 0..1024", std::to_string(d.uclamp_min_rt_default),
         "sched_util_clamp_min_rt_default: RT tasks' uclamp_min unless set (Pixel devices write 0: device/google/gs201 conf/init.gs201.rc)"},
    };
  }();
  return decls;
}

KernelParams load_kernel(const YamlDoc& doc, const YAML::Node& node, const std::string& path) {
  MapReader r(doc, node, path, kernel_params());
  KernelParams k;
  r.read_choice("version", k.version, known_kernel_versions());
  std::string hz = std::to_string(k.hz);
  r.read_choice("hz", hz, kHzChoices);
  k.hz = std::stoi(hz);
  std::string preempt = preempt_text(k.preempt);
  r.read_choice("preempt", preempt, kPreemptChoices);
  k.preempt = preempt_from(preempt);
  if (auto n = r.find("features")) load_features(doc, *n, r.path("features"), k.features);
  r.read("base_slice", k.base_slice, Bound::kPositive);
  r.read("sched_latency", k.sched_latency, Bound::kPositive);
  r.read("min_granularity", k.min_granularity, Bound::kPositive);
  r.read("wakeup_granularity", k.wakeup_granularity, Bound::kPositive);
  r.read_choice("tunable_scaling", k.tunable_scaling, kScalingChoices);
  if (auto n = r.find("rt_runtime")) k.rt_runtime = load_rt_runtime(doc, *n, r.path("rt_runtime"));
  r.read("rt_period", k.rt_period, Bound::kPositive);
  r.read("rr_timeslice", k.rr_timeslice, Bound::kPositive);
  r.read("fair_server", k.fair_server);
  r.read("fair_server_runtime", k.fair_server_runtime);
  r.read("fair_server_period", k.fair_server_period, Bound::kPositive);
  r.read("fair_server_lazy_stop", k.fair_server_lazy_stop);
  r.read("fair_group_sched", k.fair_group_sched);
  if (auto n = r.find("overheads")) load_overheads(doc, *n, r.path("overheads"), k);
  if (auto n = r.find("cpuidle")) load_cpuidle(doc, *n, r.path("cpuidle"), k);
  if (auto n = r.find("uclamp")) load_uclamp(doc, *n, r.path("uclamp"), k);
  check_bandwidths(r, k);
  warn_inert_settings(r, k);
  return k;
}

}  // namespace schedlab::config
