// Kernel execution contexts and devices: `workqueue:` (the subsystem's
// tunables), `workqueues:` (alloc_workqueue() calls), `kthread_workers:`,
// `binder_procs:`, `devices:` (each naming its `model` from a registry:
// gpu, drm_sched), and the values of the events that call into them
// (queue_work, kthread_queue_work, submit_job, binder_call). Cross references (a scheduler's gpu,
// submit workqueue or kthread_worker; an event's target) are checked here,
// with the valid names.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <utility>

#include "models/config/policy_names.h"
#include "models/config/yaml_loaders.h"
#include "models/hw/platform.h"
#include "models/kernel/workqueue/workqueue.h"

namespace schedlab::config {

std::string unique_name(const YamlDoc& doc, const MapReader& r, std::vector<std::string>& seen, std::string_view what) {
  r.require("name");
  const YAML::Node n = *r.find("name");
  std::string name = as_string(doc, n, r.path("name"));
  if (name.empty()) fail(doc, n, r.path("name"), fmt::format("expected a {} name, got an empty string", what));
  if (std::any_of(name.begin(), name.end(), [](unsigned char c) { return std::isspace(c) || std::iscntrl(c); }))
    fail(doc, n, r.path("name"), fmt::format("{} name '{}' contains whitespace", what, name));
  if (std::find(seen.begin(), seen.end(), name) != seen.end())
    fail(doc, n, r.path("name"), fmt::format("duplicate {} name '{}'", what, name));
  seen.push_back(name);
  return name;
}

// A reference to a name of `valid`, or an error listing them.
std::string ref_name(const YamlDoc& doc, const MapReader& r, std::string_view key, const std::vector<std::string>& valid,
                     std::string_view what) {
  const YAML::Node n = *r.find(key);
  std::string name = as_string(doc, n, r.path(key));
  if (std::find(valid.begin(), valid.end(), name) == valid.end())
    fail(doc, n, r.path(key),
         fmt::format("unknown {} '{}' ({}){}", what, name, valid.empty() ? "none declared" : "valid: " + join(valid),
                     did_you_mean(name, valid)));
  return name;
}

const YAML::Node& sequence(const YamlDoc& doc, const YAML::Node& node, const std::string& path, std::string_view what) {
  if (!node.IsSequence())
    fail(doc, node, path, fmt::format("expected a sequence of {}, got {}", what, describe_node(node)));
  return node;
}

namespace {

const std::vector<std::string> kScopes = {"cpu", "smt", "cache", "numa", "system"};
const std::vector<std::string> kWqScopes = {"default", "cpu", "smt", "cache", "numa", "system"};
const std::vector<std::string> kFollow = {"none", "min_nice", "fifo"};
const std::vector<std::string> kDists = {"fixed", "uniform", "exponential", "lognormal"};

struct FlagName {
  const char* name;
  unsigned flag;
};
const std::vector<FlagName>& wq_flag_names() {
  static const std::vector<FlagName> flags = {
      {"WQ_UNBOUND", kWqUnbound},           {"WQ_FREEZABLE", kWqFreezable},
      {"WQ_MEM_RECLAIM", kWqMemReclaim},    {"WQ_HIGHPRI", kWqHighpri},
      {"WQ_CPU_INTENSIVE", kWqCpuIntensive}, {"WQ_SYSFS", kWqSysfs},
      {"WQ_POWER_EFFICIENT", kWqPowerEfficient}, {"WQ_RTPRI", kWqRtpri},
  };
  return flags;
}
std::vector<std::string> wq_flag_list() {
  std::vector<std::string> v;
  for (const auto& f : wq_flag_names()) v.push_back(f.name);
  return v;
}

void load_subsys(const YamlDoc& doc, const YAML::Node& node, WorkqueueSubsysParams& w) {
  MapReader r(doc, node, "workqueue", workqueue_subsys_params());
  r.read("create_worker_delay", w.create_worker_delay, Bound::kNonNegative);
  r.read("idle_timeout", w.idle_timeout, Bound::kPositive);
  r.read_choice("default_affinity_scope", w.default_affinity_scope, kScopes);
}

WorkqueueParams load_workqueue(const YamlDoc& doc, const YAML::Node& node, const std::string& path, int cpus,
                               std::vector<std::string>& seen) {
  MapReader r(doc, node, path, workqueue_params());
  WorkqueueParams w;
  w.name = unique_name(doc, r, seen, "workqueue");
  const auto& sys = WorkqueueSystem::system_workqueue_names();
  if (std::find(sys.begin(), sys.end(), w.name) != sys.end())
    fail(doc, *r.find("name"), r.path("name"),
         fmt::format("'{}' is a system workqueue, which exists already (system workqueues: {})", w.name, join(sys)));
  if (auto n = r.find("flags")) {
    const YAML::Node& list = sequence(doc, *n, r.path("flags"), "WQ_* flags");
    for (size_t i = 0; i < list.size(); ++i) {
      std::string f = as_choice(doc, list[i], index_path(r.path("flags"), i), wq_flag_list());
      for (const auto& fn : wq_flag_names())
        if (f == fn.name) w.flags |= fn.flag;
    }
  }
  bool ordered = false;
  r.read("ordered", ordered);
  if (ordered) w.flags |= kWqOrdered | kWqUnbound;
  r.read("max_active", w.max_active, 0, kWqMaxActive);
  if (ordered && w.max_active > 1)
    fail(doc, *r.find("max_active"), r.path("max_active"), "an ordered workqueue has max_active 1");
  const bool unbound = w.flags & kWqUnbound, rt = w.flags & kWqRtpri;
  if (rt && (w.flags & kWqHighpri))
    fail(doc, *r.find("flags"), r.path("flags"), "WQ_RTPRI and WQ_HIGHPRI are exclusive (the workers are SCHED_FIFO)");
  // workqueue_sysfs_register() (6.12 workqueue.c) refuses an ordered
  // workqueue (WARN_ON(__WQ_ORDERED), -EINVAL): alloc_workqueue() fails.
  if (ordered && (w.flags & kWqSysfs))
    fail(doc, *r.find("flags"), r.path("flags"),
         "an ordered workqueue cannot be WQ_SYSFS (the kernel's workqueue_sysfs_register() refuses it and "
         "alloc_workqueue() fails): drop WQ_SYSFS or 'ordered'");
  if (auto n = r.find("nice")) {
    const char* const attr = "nice is the sysfs attribute /sys/devices/virtual/workqueue/NAME/nice of WQ_UNBOUND | "
                             "WQ_SYSFS workqueues";
    if (rt)
      fail(doc, *n, r.path("nice"), fmt::format("{}; a WQ_RTPRI workqueue's workers are SCHED_FIFO (set rt_priority)", attr));
    std::vector<std::string> missing;
    if (!unbound) missing.push_back("WQ_UNBOUND");
    if (!(w.flags & kWqSysfs)) missing.push_back("WQ_SYSFS");
    if (!missing.empty()) fail(doc, *n, r.path("nice"), fmt::format("{}: this one lacks {}", attr, join(missing, " and ")));
    w.nice = static_cast<int>(as_int(doc, *n, r.path("nice"), -20, 19));
  }
  if (auto n = r.find("cpumask")) {
    if (!unbound) fail(doc, *n, r.path("cpumask"), "cpumask applies to WQ_UNBOUND workqueues");
    w.cpumask = load_cpu_list(doc, *n, r.path("cpumask"), cpus);
  }
  r.read_choice("affinity_scope", w.affinity_scope, kWqScopes);
  r.read("affinity_strict", w.affinity_strict);
  if (auto n = r.find("rt_priority")) {
    if (!rt) fail(doc, *n, r.path("rt_priority"), "rt_priority applies to WQ_RTPRI workqueues");
    w.rt_priority = static_cast<int>(as_int(doc, *n, r.path("rt_priority"), 1, 99));
  }
  if (auto n = r.find("max_workers")) {
    if (!rt) fail(doc, *n, r.path("max_workers"), "max_workers (the driver's thread cap) applies to WQ_RTPRI workqueues");
    w.max_workers = static_cast<int>(as_int(doc, *n, r.path("max_workers"), 0, 4096));
  }
  return w;
}

KthreadWorkerParams load_kthread_worker(const YamlDoc& doc, const YAML::Node& node, const std::string& path, int cpus,
                                        std::vector<std::string>& seen) {
  MapReader r(doc, node, path, kthread_worker_params());
  KthreadWorkerParams k;
  k.name = unique_name(doc, r, seen, "kthread_worker");
  const bool has_priority = load_thread_policy(r, k.policy, k.nice, k.rt_priority, "worker");
  if (!is_fair_policy(k.policy) && !has_priority)
    r.fail_here(fmt::format("a {} worker needs 'priority: 1..99'", policy_text(k.policy)));
  if (auto n = r.find("cpus")) k.cpus = load_cpu_list(doc, *n, r.path("cpus"), cpus);
  std::string follow = "none";
  r.read_choice("follow", follow, kFollow);
  k.follow = follow == "fifo" ? KthreadFollow::kFifo : follow == "min_nice" ? KthreadFollow::kMinNice : KthreadFollow::kNone;
  return k;
}

BinderProcParams load_binder_proc(const YamlDoc& doc, const YAML::Node& node, const std::string& path, int cpus,
                                  std::vector<std::string>& seen, const KernelParams& kernel) {
  MapReader r(doc, node, path, binder_proc_params());
  BinderProcParams b;
  b.name = unique_name(doc, r, seen, "binder process");
  if (auto n = r.find("threads")) b.threads = static_cast<int>(as_int(doc, *n, r.path("threads"), 1, 256));
  if (auto n = r.find("nice")) b.nice = static_cast<int>(as_int(doc, *n, r.path("nice"), -20, 19));
  if (auto n = r.find("min_nice")) b.min_nice = static_cast<int>(as_int(doc, *n, r.path("min_nice"), -20, 19));
  if (auto n = r.find("cpus")) b.cpus = load_cpu_list(doc, *n, r.path("cpus"), cpus);
  load_task_cgroup(doc, r, kernel, b.cgroup);
  r.read("android", b.android);
  r.read("inherit_rt", b.inherit_rt);
  if (auto n = r.find("min_policy")) {
    const std::vector<std::string> kMinPolicies = {"SCHED_OTHER", "SCHED_NORMAL", "SCHED_BATCH", "SCHED_FIFO", "SCHED_RR"};
    b.min_policy = *policy_from_name(as_choice(doc, *n, r.path("min_policy"), kMinPolicies), false);
  }
  const bool rt_node = !is_fair_policy(b.min_policy);
  // INHERIT_RT and a node policy exist only in the Android Common Kernel's
  // binder (their mainline values, false and SCHED_OTHER, may be spelled
  // out, so an overlay can switch a process back to mainline).
  const char* const android_only = "is an Android Common Kernel node flag: set 'android: true' on this binder process";
  if (!b.android && b.inherit_rt) fail(doc, *r.find("inherit_rt"), r.path("inherit_rt"), android_only);
  if (!b.android && b.min_policy != Policy::kNormal) fail(doc, *r.find("min_policy"), r.path("min_policy"), android_only);
  if (auto n = r.find("min_rt_priority")) {
    if (!rt_node) fail(doc, *n, r.path("min_rt_priority"), "applies with min_policy SCHED_FIFO or SCHED_RR");
    b.min_rt_priority = static_cast<int>(as_int(doc, *n, r.path("min_rt_priority"), 1, 99));
  } else if (rt_node) {
    r.fail_here(fmt::format("min_policy {} needs 'min_rt_priority: 1..99'", policy_text(b.min_policy)));
  }
  return b;
}

}  // namespace

bool load_thread_policy(const MapReader& r, Policy& policy, int& nice, int& rt_priority, std::string_view what) {
  const YamlDoc& doc = r.doc();
  if (auto n = r.find("policy")) {
    policy = *policy_from_name(as_choice(doc, *n, r.path("policy"), policy_names(true)), true);
    nice = 0;
    rt_priority = is_fair_policy(policy) ? 0 : 1;
  }
  const bool fair = is_fair_policy(policy);
  if (auto n = r.find("nice")) nice = load_nice(r, *n, policy, what);
  auto n = r.find("priority");
  if (n) {
    if (fair) fail(doc, *n, r.path("priority"), fmt::format("priority applies to a SCHED_FIFO/SCHED_RR {}", what));
    rt_priority = static_cast<int>(as_int(doc, *n, r.path("priority"), 1, 99));
  }
  return n.has_value();
}

void load_thread_comm(const MapReader& r, std::string& comm) {
  const auto n = r.find("comm");
  if (!n) return;
  comm = as_string(r.doc(), *n, r.path("comm"));
  if (comm.empty() || comm.find_first_of(" \t\n") != std::string::npos)
    fail(r.doc(), *n, r.path("comm"), "expected a thread name without blanks");
}

int load_nice(const MapReader& r, const YAML::Node& node, Policy policy, std::string_view what) {
  const int nice = static_cast<int>(as_int(r.doc(), node, r.path("nice"), -20, 19));
  if (!is_fair_policy(policy) && nice != 0)
    fail(r.doc(), node, r.path("nice"),
         fmt::format("nice applies to SCHED_OTHER/BATCH/IDLE; a {} {} takes 'priority: 1..99' instead (nice: 0 is "
                     "accepted: an overlay that makes a nice {} {} sets its nice to 0 too)",
                     policy_text(policy), what, what, policy_text(policy)));
  return nice;
}

Distribution load_distribution(const YamlDoc& doc, const YAML::Node& node, const std::string& path) {
  Distribution d;
  if (node.IsScalar()) {  // a bare duration: fixed
    d.mean = as_duration(doc, node, path, Bound::kPositive);
    return d;
  }
  MapReader r(doc, node, path, distribution_params());
  std::string dist = "fixed";
  r.read_choice("dist", dist, kDists);
  d.kind = dist == "uniform" ? Distribution::Kind::kUniform
           : dist == "exponential" ? Distribution::Kind::kExponential
           : dist == "lognormal" ? Distribution::Kind::kLognormal
                                 : Distribution::Kind::kFixed;
  if (d.kind == Distribution::Kind::kUniform) {
    r.require("min");
    r.require("max");
    r.read("min", d.min, Bound::kPositive);
    r.read("max", d.max, Bound::kPositive);
    if (d.max < d.min) fail(doc, *r.find("max"), r.path("max"), "max must be >= min");
    if (r.has("mean")) fail(doc, *r.find("mean"), r.path("mean"), "a uniform distribution takes min and max, not mean");
  } else {
    r.require("mean");
    r.read("mean", d.mean, Bound::kPositive);
    for (const char* k : {"min", "max"})
      if (r.has(k)) fail(doc, *r.find(k), r.path(k), fmt::format("{} applies to dist: uniform", k));
  }
  if (auto n = r.find("sigma")) {
    if (d.kind != Distribution::Kind::kLognormal) fail(doc, *n, r.path("sigma"), "sigma applies to dist: lognormal");
    YAML::Node v = *n;
    try {
      d.sigma = v.as<double>();
    } catch (const YAML::Exception&) {
      fail(doc, v, r.path("sigma"), fmt::format("expected a number > 0, got {}", describe_node(v)));
    }
    if (!(d.sigma > 0) || d.sigma > 10) fail(doc, v, r.path("sigma"), "sigma must be in (0, 10]");
  }
  return d;
}

void require_drm_sched_workqueues(const MapReader& r, const std::string& key, const std::string& kernel_version) {
  if (version_number(kernel_version) >= 608) return;
  fail(r.doc(), *r.find(key), r.path(key),
       fmt::format("kernel {} runs the DRM GPU scheduler in a kthread per scheduler (drm_sched_main(), SCHED_FIFO "
                   "1), which is not modelled: the model's run_job and free_job work items are 6.8's design "
                   "(kernel.version 6.12 or 6.18)",
                   kernel_version));
}

namespace {

// The device model registry: each model's declarations (load_devices() calls its loader).
struct DeviceModel {
  std::string name;
  const std::vector<ParamDecl>& (*decls)();
};
const std::vector<DeviceModel>& device_models() {
  static const std::vector<DeviceModel> models = {
      {"gpu", &gpu_params}, {"drm_sched", &drm_sched_params}, {"display", &display_params}};
  return models;
}
std::vector<std::string> device_model_names() {
  std::vector<std::string> v;
  for (const auto& m : device_models()) v.push_back(m.name);
  return v;
}

GpuParams load_gpu(const MapReader& r, int cpus, const ScenarioParams& s) {
  GpuParams g;
  r.read("slots", g.slots, 1, 64);
  if (auto n = r.find("service_time")) g.service_time = load_distribution(r.doc(), *n, r.path("service_time"));
  r.read("irq_cpu", g.irq_cpu, 0, cpus - 1);
  r.read("irq_latency", g.irq_latency, Bound::kNonNegative);
  r.read("fw_ack_latency", g.fw_ack_latency, Bound::kNonNegative);
  if (auto n = r.find("irq_thread")) {
    MapReader t(r.doc(), *n, r.path("irq_thread"), irq_thread_params());
    IrqThreadParams& p = g.irq_thread;
    p.enabled = true;
    load_thread_comm(t, p.comm);
    load_thread_policy(t, p.policy, p.nice, p.rt_priority, "IRQ thread");
    t.read("cost", p.cost, Bound::kNonNegative);
  }
  if (r.has("retire_worker"))
    g.retire_worker = ref_name(r.doc(), r, "retire_worker", call_targets(s).kthread_workers, "kthread_worker");
  r.read("retire_cost", g.retire_cost, Bound::kNonNegative);
  r.read("idle_work_delay", g.idle_work_delay, Bound::kNonNegative);
  r.read("idle_work_cost", g.idle_work_cost, Bound::kNonNegative);
  if (g.idle_work_delay > Time::zero() && g.retire_worker.empty())
    fail(r.doc(), *r.find("idle_work_delay"), r.path("idle_work_delay"),
         "idle_work_delay needs retire_worker: the idle work runs on the GPU's retire kthread_worker");
  return g;
}

// `gpus`: the names of the scenario's gpu devices, all of them (references may point forward).
DrmSchedParams load_drm(const MapReader& r, const std::string& name, const std::vector<std::string>& gpus,
                        ScenarioParams& s, std::vector<std::string>& entities_seen) {
  const YamlDoc& doc = r.doc();
  DrmSchedParams d;
  r.require("gpu");
  require_drm_sched_workqueues(r, "gpu", s.kernel.version);
  d.gpu = ref_name(doc, r, "gpu", gpus, "gpu");
  // The workqueues (system ones included) and kthread_workers declared so far.
  CallTargets declared = call_targets(s);
  std::vector<std::string>& wqs = declared.workqueues;
  const bool has_wq = r.has("submit_wq"), has_kw = r.has("kthread_worker");
  std::string submit = has_kw && !has_wq ? "kthread_worker" : "workqueue";
  if (has_wq && has_kw && !r.has("submit"))
    r.fail_here("with both submit_wq and kthread_worker, say which one runs the jobs: submit: workqueue | kthread_worker");
  r.read_choice("submit", submit, {"workqueue", "kthread_worker"});
  if (has_kw) d.kthread_worker = ref_name(doc, r, "kthread_worker", declared.kthread_workers, "kthread_worker");
  if (submit == "kthread_worker") {
    if (!has_kw) fail(doc, *r.find("submit"), r.path("submit"), "submit: kthread_worker needs kthread_worker: NAME");
    d.path = DrmSubmitPath::kKthreadWorker;
  }
  if (has_wq) {
    d.submit_wq = ref_name(doc, r, "submit_wq", wqs, "workqueue");
  } else if (d.path == DrmSubmitPath::kWorkqueue) {
    // drm_sched_init() with no submit_wq: alloc_ordered_workqueue(name, WQ_MEM_RECLAIM).
    if (std::find(wqs.begin(), wqs.end(), name) != wqs.end())
      r.fail_here(fmt::format("without submit_wq the scheduler allocates an ordered workqueue named '{}', "
                              "but that name is taken; give submit_wq", name));
    WorkqueueParams w;
    w.name = name;
    w.flags = kWqOrdered | kWqUnbound | kWqMemReclaim;
    s.workqueue.workqueues.push_back(w);
    d.submit_wq = name;
    wqs.push_back(name);
  }
  if (r.has("fence_wq")) d.fence_wq = ref_name(doc, r, "fence_wq", wqs, "workqueue");
  r.require("entities");
  // A copy (a YAML::Node is a handle): sequence() returns the node it was
  // given, and here that is inside the temporary optional find() returns.
  const std::optional<YAML::Node> entities = r.find("entities");
  const YAML::Node list = sequence(doc, *entities, r.path("entities"), "entity names");
  if (list.size() == 0) fail(doc, list, r.path("entities"), "a scheduler needs at least one entity");
  for (size_t i = 0; i < list.size(); ++i) {
    std::string e = as_string(doc, list[i], index_path(r.path("entities"), i));
    if (e.empty()) fail(doc, list[i], index_path(r.path("entities"), i), "expected an entity name");
    if (std::find(entities_seen.begin(), entities_seen.end(), e) != entities_seen.end())
      fail(doc, list[i], index_path(r.path("entities"), i), fmt::format("duplicate entity name '{}'", e));
    entities_seen.push_back(e);
    d.entities.push_back(e);
  }
  r.read("credit_limit", d.credit_limit, 1, 1 << 20);
  r.read("select_cost", d.select_cost);
  r.read("run_job_cost", d.run_job_cost);
  r.read("free_job_cost", d.free_job_cost);
  r.read("fence_cost", d.fence_cost);
  r.read("fw_ack_events_cost", d.fw_ack_events_cost, Bound::kNonNegative);
  r.read("fw_ack_poll", d.fw_ack_poll, Bound::kNonNegative);
  for (auto [key, cost] : {std::pair<const char*, Time*>{"signal_work_cost", &d.signal_work_cost},
                           {"sync_update_work_cost", &d.sync_update_work_cost},
                           {"idle_tick_cost", &d.idle_tick_cost}}) {
    r.read(key, *cost, Bound::kNonNegative);
    if (*cost > Time::zero() && d.fence_wq.empty())
      fail(r.doc(), *r.find(key), r.path(key),
           fmt::format("{} needs fence_wq: panthor's chain runs on the workqueue the interrupt's fence work uses",
                       key));
  }
  return d;
}

std::string model_of(const YamlDoc& doc, const YAML::Node& node, const std::string& path) {
  if (!node.IsMap()) fail(doc, node, path, fmt::format("expected a device (a map with name and model), got {}",
                                                       describe_node(node)));
  const YAML::Node m = node["model"];
  if (!m.IsDefined())
    fail(doc, node, path, fmt::format("missing 'model' (valid models: {})", join(device_model_names())));
  return as_choice(doc, m, child_path(path, "model"), device_model_names());
}

}  // namespace

void load_devices(const YamlDoc& doc, const MapReader& top, ScenarioParams& s) {
  const int cpus = platform_nr_cpus(s.platform);
  if (auto n = top.find("workqueue")) load_subsys(doc, *n, s.workqueue);
  std::vector<std::string> seen;
  if (auto n = top.find("workqueues")) {
    const YAML::Node& list = sequence(doc, *n, "workqueues", "workqueues");
    for (size_t i = 0; i < list.size(); ++i)
      s.workqueue.workqueues.push_back(load_workqueue(doc, list[i], index_path("workqueues", i), cpus, seen));
  }
  std::vector<std::string> kseen;
  if (auto n = top.find("kthread_workers")) {
    const YAML::Node& list = sequence(doc, *n, "kthread_workers", "kthread_workers");
    for (size_t i = 0; i < list.size(); ++i)
      s.kthread_workers.push_back(load_kthread_worker(doc, list[i], index_path("kthread_workers", i), cpus, kseen));
  }
  std::vector<std::string> bseen;
  if (auto n = top.find("binder_procs")) {
    const YAML::Node& list = sequence(doc, *n, "binder_procs", "binder_procs");
    for (size_t i = 0; i < list.size(); ++i)
      s.binder_procs.push_back(load_binder_proc(doc, list[i], index_path("binder_procs", i), cpus, bseen, s.kernel));
  }
  auto n = top.find("devices");
  if (!n) return;
  const YAML::Node& list = sequence(doc, *n, "devices", "devices");
  std::vector<std::string> gpus;  // every gpu's name before any device is loaded
  for (size_t i = 0; i < list.size(); ++i) {
    std::string path = index_path("devices", i);
    if (model_of(doc, list[i], path) == "gpu" && list[i]["name"].IsDefined() && list[i]["name"].IsScalar())
      gpus.push_back(list[i]["name"].Scalar());
  }
  std::vector<std::string> dseen, entities;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string path = index_path("devices", i);
    const std::string model = model_of(doc, list[i], path);
    const auto& entry = *std::find_if(device_models().begin(), device_models().end(),
                                      [&](const DeviceModel& m) { return m.name == model; });
    MapReader r(doc, list[i], path, entry.decls());
    DeviceParams d;
    d.name = unique_name(doc, r, dseen, "device");
    d.model = model;
    if (model == "gpu")
      d.params = load_gpu(r, cpus, s);
    else if (model == "display")
      d.params = load_display(r, gpus, s);
    else
      d.params = load_drm(r, d.name, gpus, s, entities);
    s.devices.push_back(std::move(d));
  }
}

CallTargets call_targets(const ScenarioParams& s) {
  CallTargets t;
  for (const auto& w : s.workqueue.workqueues) t.workqueues.push_back(w.name);
  for (const auto& w : WorkqueueSystem::system_workqueue_names()) t.workqueues.push_back(w);
  for (const auto& k : s.kthread_workers) t.kthread_workers.push_back(k.name);
  for (const auto& b : s.binder_procs) t.binder_procs.push_back(b.name);
  for (const auto& d : s.devices)
    if (const auto* p = std::get_if<DrmSchedParams>(&d.params))
      for (const auto& e : p->entities) t.entities.push_back(e);
  for (const auto& d : s.pm_runtime.devices) t.rpm_devices.push_back(d.name);
  return t;
}

namespace {

// A call event's keys, the key naming its target, the names the target may
// take and what they are called in messages.
struct CallKind {
  CallSpec::Op op;
  const std::vector<ParamDecl>& (*decls)();
  const char* target_key;
  std::vector<std::string> CallTargets::*targets;
  const char* what;
};
const CallKind& call_kind(CallSpec::Op op) {
  static const CallKind kinds[] = {
      {CallSpec::Op::kQueueWork, &queue_work_params, "wq", &CallTargets::workqueues, "workqueue"},
      {CallSpec::Op::kKthreadQueueWork, &kthread_queue_work_params, "worker", &CallTargets::kthread_workers,
       "kthread_worker"},
      {CallSpec::Op::kSubmitJob, &submit_job_params, "entity", &CallTargets::entities, "entity"},
      {CallSpec::Op::kBinderCall, &binder_call_params, "proc", &CallTargets::binder_procs, "binder process"},
      // The kernel calls take the work item only.
      {CallSpec::Op::kCancelWork, &cancel_work_params, nullptr, nullptr, "work item"},
      {CallSpec::Op::kFlushWork, &flush_work_params, nullptr, nullptr, "work item"},
  };
  return *std::find_if(std::begin(kinds), std::end(kinds), [&](const CallKind& k) { return k.op == op; });
}

}  // namespace

EventSpec load_call_event(const YamlDoc& doc, const YAML::Node& node, const std::string& path, CallSpec::Op op,
                          const CallTargets* targets, int platform_cpus) {
  const CallKind& kind = call_kind(op);
  MapReader r(doc, node, path, kind.decls());
  EventSpec e;
  e.kind = EventSpec::Kind::kCall;
  CallSpec& c = e.call;
  c.op = op;
  if (op == CallSpec::Op::kCancelWork || op == CallSpec::Op::kFlushWork) {
    // Which work item: check_cross_task_refs() checks that an event queues it.
    r.require("work");
    c.work = as_string(doc, *r.find("work"), r.path("work"));
    if (c.work.empty()) fail(doc, *r.find("work"), r.path("work"), "expected a work item name");
    if (op == CallSpec::Op::kCancelWork)
      r.read("sync", c.sync);
    else
      r.read("delayed", c.delayed);
    return e;
  }
  r.require(kind.target_key);
  if (targets)
    c.target = ref_name(doc, r, kind.target_key, targets->*kind.targets, kind.what);
  else
    c.target = as_string(doc, *r.find(kind.target_key), r.path(kind.target_key));
  if (op == CallSpec::Op::kSubmitJob) {
    r.read("gpu_time", c.gpu_time, Bound::kNonNegative);
    return e;
  }
  if (op == CallSpec::Op::kBinderCall) {
    r.read("work", c.cost, Bound::kNonNegative);
    r.read("oneway", c.oneway);
    if (const auto then = r.find("then")) {
      c.nested = std::make_shared<const CallSpec>(
          load_call_event(doc, *then, r.path("then"), CallSpec::Op::kBinderCall, targets, platform_cpus).call);
      // A synchronous call back into a process of the chain goes, in the
      // kernel, to the thread of that chain waiting for its reply
      // (binder_transaction() walks the transaction stack): not modelled.
      // A one-way call goes to the process's queue like any other, and
      // its server starts a chain of its own (one-way transactions are
      // not on the stack); each level checks its own chain.
      // The error names the offending call, however deep (the YAML nodes
      // are walked beside the loaded chain).
      YAML::Node at;
      at.reset(*then);
      std::string at_path = r.path("then");
      for (const CallSpec* n = c.nested.get(); n && !n->oneway; n = n->nested.get()) {
        if (n->target == c.target)
          fail(doc, at, at_path,
               fmt::format("a synchronous nested call back into '{}', which is already in the call chain, is not "
                           "modelled (the kernel hands it to that chain's waiting thread)",
                           c.target));
        if (!n->nested) break;
        at.reset(std::as_const(at)["then"]);  // rebind the handle (operator= would rewrite the document)
        at_path = child_path(at_path, "then");
      }
      r.read("work_after", c.cost_after, Bound::kNonNegative);
    } else if (r.has("work_after")) {
      r.fail_here("work_after needs a nested call (then)");
    }
    return e;
  }
  r.require("work");
  c.work = as_string(doc, *r.find("work"), r.path("work"));
  if (c.work.empty()) fail(doc, *r.find("work"), r.path("work"), "expected a work item name");
  r.read("cost", c.cost);
  r.read("sleep", c.sleep);
  r.read("delay", c.delay);
  if (op == CallSpec::Op::kQueueWork) r.read("cpu", c.cpu, 0, platform_cpus - 1);
  r.read("mod", c.mod);
  return e;
}

// ---------------------------------------------------------------- declarations

const std::vector<ParamDecl>& workqueue_subsys_params() {
  static const std::vector<ParamDecl> decls = [] {
    const WorkqueueSubsysParams d;
    return std::vector<ParamDecl>{
        {"create_worker_delay", "duration", duration_text(d.create_worker_delay),
         "create_worker(): the manager sleeps this long in D, then the new kworker starts (assumption)"},
        {"idle_timeout", "duration > 0", duration_text(d.idle_timeout),
         "IDLE_WORKER_TIMEOUT: idle workers beyond the pool's needs are reaped after this"},
        {"default_affinity_scope", join(kScopes, " | "), d.default_affinity_scope,
         "workqueue.default_affinity_scope: pods of unbound pools (cache = one per last-level cache)"},
    };
  }();
  return decls;
}

const std::vector<ParamDecl>& workqueue_params() {
  static const std::vector<ParamDecl> decls = [] {
    const WorkqueueParams d;
    return std::vector<ParamDecl>{
        {"name", "string, no blanks", "required", "the workqueue's name (not a system workqueue's)"},
        {"flags", "list of " + join(wq_flag_list(), " | "), "[]",
         "alloc_workqueue() flags; WQ_RTPRI = SCHED_FIFO workers (the DRM thread's proposal)"},
        {"ordered", "bool", "false", "alloc_ordered_workqueue(): WQ_UNBOUND, one item at a time in queue order"},
        {"max_active", fmt::format("int 0..{}", kWqMaxActive), "0",
         fmt::format("items active at once (per CPU if bound); 0 = {}; WQ_RTPRI: at most CPUs/2", kWqDflActive)},
        {"nice", "int -20..19", "0 (-20 with WQ_HIGHPRI)",
         "/sys/devices/virtual/workqueue/NAME/nice (WQ_UNBOUND and WQ_SYSFS)"},
        {"cpumask", "list of int, or \"0-3,6\"", "all CPUs", "sysfs cpumask of a WQ_UNBOUND workqueue"},
        {"affinity_scope", join(kWqScopes, " | "), d.affinity_scope, "sysfs affinity_scope: pods of a WQ_UNBOUND workqueue"},
        {"affinity_strict", "bool", "false", "sysfs affinity_strict: workers stay inside their pod"},
        {"rt_priority", "int 1..99", std::to_string(d.rt_priority),
         "WQ_RTPRI: the workers' SCHED_FIFO priority (assumption: sched_set_fifo_low())"},
        {"max_workers", "int >= 0", "0", "WQ_RTPRI: the driver's cap on the workqueue's threads, per pool (per CPU if bound, per cache pod if unbound; 0 = none)"},
    };
  }();
  return decls;
}

const std::vector<ParamDecl>& kthread_worker_params() {
  static const std::vector<ParamDecl> decls = {
      {"name", "string, no blanks", "required", "the worker thread's comm"},
      {"policy", kThreadPolicyChoices, "SCHED_OTHER",
       "the thread's own policy"},
      {"nice", "int -20..19", "0", "nice (fair policies; an RT policy accepts 0)"},
      {"priority", "int 1..99", "required for FIFO/RR", "RT priority"},
      {"cpus", "list of int, or \"0-3,6\"", "all CPUs", "affinity"},
      {"follow", join(kFollow, " | "), "none",
       "follow the priority of the queuers of pending work: min_nice = up to SCHED_OTHER nice -20, fifo = up to "
       "their SCHED_FIFO priority (the DRM RFC)"},
  };
  return decls;
}

const std::vector<ParamDecl>& device_common_params() {
  static const std::vector<ParamDecl> decls = [] {
    return std::vector<ParamDecl>{
        {"name", "string, no blanks", "required", "the device's name"},
        {"model", join(device_model_names(), " | "), "required", "the device model; its keys follow"},
    };
  }();
  return decls;
}

const std::vector<ParamDecl>& gpu_params() {
  static const std::vector<ParamDecl> decls = [] {
    const GpuParams d;
    std::vector<ParamDecl> v = device_common_params();
    v.insert(v.end(), {
                          {"slots", "int 1..64", std::to_string(d.slots), "jobs the GPU executes at once"},
                          {"service_time", "duration, or map (see service_time)", duration_text(d.service_time.mean),
                           "GPU time of a job whose submit_job gives no gpu_time"},
                          {"irq_cpu", "int", std::to_string(d.irq_cpu), "CPU taking the job interrupt"},
                          {"irq_latency", "duration", duration_text(d.irq_latency), "job end -> interrupt handler"},
                          {"irq_thread", "map (see irq_thread)", "none",
                           "the job interrupt's handler is threaded (request_threaded_irq())"},
                          {"fw_ack_latency", "duration", "0 (requests not modelled)",
                           "CSF firmware (panthor): a driver request rung on a CSG doorbell -> its "
                           "acknowledgement, which raises the job interrupt (panthor's tick asks for the "
                           "group's status and waits for it)"},
                          {"retire_worker", "kthread_worker name", "none",
                           "the driver signals the jobs' fences and retires them (runtime PM put) in this "
                           "kthread_worker's retire work (drm/msm gpu-worker); none: both in the interrupt's context"},
                          {"retire_cost", "duration", duration_text(d.retire_cost),
                           "CPU work per retire-work run (capacity 1024, f_max)"},
                          {"idle_work_delay", "duration", "0 (none)",
                           "drm/msm devfreq idle work (needs retire_worker): queued there this long after the last "
                           "active job retires; a new job first cancels the timer (msm: 1ms)"},
                          {"idle_work_cost", "duration", duration_text(d.idle_work_cost),
                           "CPU work per idle-work run (capacity 1024, f_max)"},
                      });
    return v;
  }();
  return decls;
}

const std::vector<ParamDecl>& irq_thread_params() {
  static const std::vector<ParamDecl> decls = [] {
    const IrqThreadParams d;
    return std::vector<ParamDecl>{
        {"comm", "string, no blanks", "irq/<gpu name>", "the thread's name"},
        {"policy", kThreadPolicyChoices, "SCHED_FIFO",
         "its policy (setup_irq_thread(): sched_set_fifo())"},
        {"nice", "int -20..19", "0", "fair policies"},
        {"priority", "int 1..99", std::to_string(d.rt_priority), "SCHED_FIFO / SCHED_RR (MAX_RT_PRIO / 2)"},
        {"cost", "duration", duration_text(d.cost),
         "CPU work per handler run (capacity 1024, f_max), before it calls back the jobs' owners"},
    };
  }();
  return decls;
}

const std::vector<ParamDecl>& drm_sched_params() {
  static const std::vector<ParamDecl> decls = [] {
    const DrmSchedParams d;
    std::vector<ParamDecl> v = device_common_params();
    v.insert(v.end(),
             {
                 {"gpu", "device name", "required", "the gpu device it feeds"},
                 {"submit", "workqueue | kthread_worker", "the one given",
                  "which of submit_wq / kthread_worker runs run_job and free_job"},
                 {"submit_wq", "workqueue name", "an ordered workqueue named after the scheduler",
                  "where run_job / free_job work runs (drm_sched_init()'s submit_wq)"},
                 {"kthread_worker", "kthread_worker name", "-", "a kthread_worker to run them on instead (the RFC)"},
                 {"fence_wq", "workqueue name", "- (fences signal in the interrupt)",
                  "workqueue where the interrupt's fence work runs (panthor: its scheduler workqueue)"},
                 {"entities", "list of names", "required", "drm_sched_entity names: the userspace queues it serves"},
                 {"credit_limit", "int >= 1", std::to_string(d.credit_limit), "jobs in flight on the GPU ring (assumption)"},
                 {"select_cost", "duration", duration_text(d.select_cost),
                  "CPU work of a run_job execution before drm_run_job (assumption)"},
                 {"run_job_cost", "duration", duration_text(d.run_job_cost),
                  "CPU work of ops->run_job(): ring write and doorbell (assumption)"},
                 {"free_job_cost", "duration", duration_text(d.free_job_cost), "CPU work of ops->free_job() (assumption)"},
                 {"fence_cost", "duration", duration_text(d.fence_cost),
                  "CPU work of the fence work (with fence_wq) (assumption)"},
                 {"fw_ack_events_cost", "duration", duration_text(d.fw_ack_events_cost),
                  "panthor: CPU work of a fw-events run that finds only a firmware acknowledgement (the gpu's "
                  "fw_ack_latency) (assumption)"},
                 {"fw_ack_poll", "duration", duration_text(d.fw_ack_poll),
                  "panthor: how long the tick busy-polls for the firmware's acknowledgement before it sleeps "
                  "(6.18: 10,000 uncached reads) (assumption)"},
                 {"signal_work_cost", "duration", "0 (the fence work signals)",
                  "panthor: CPU work of group_sync_upd_work, queued by the fence work, which signals the fences"},
                 {"sync_update_work_cost", "duration", "0 (none)",
                  "panthor: CPU work of the scheduler's sync_upd_work, queued by the fence work"},
                 {"idle_tick_cost", "duration", "0 (none)",
                  "panthor: CPU work of tick_work, queued by the fence work when no job is left on the GPU"},
             });
    return v;
  }();
  return decls;
}

const std::vector<ParamDecl>& distribution_params() {
  static const std::vector<ParamDecl> decls = {
      {"dist", join(kDists, " | "), "fixed", "the distribution"},
      {"mean", "duration > 0", "required (not uniform)", "fixed value; mean of exponential and lognormal"},
      {"min", "duration > 0", "required (uniform)", "uniform lower bound"},
      {"max", "duration > 0", "required (uniform)", "uniform upper bound"},
      {"sigma", "number in (0, 10]", "0.5", "lognormal: standard deviation of the log"},
  };
  return decls;
}

const std::vector<ParamDecl>& queue_work_params() {
  static const std::vector<ParamDecl> decls = {
      {"wq", "workqueue name", "required", "declared under workqueues, or a system workqueue (events, ...)"},
      {"work", "string", "required", "the work item; a pending item is not queued again (unless mod)"},
      {"cost", "duration", "0", "CPU work of the item"},
      {"sleep", "duration", "0", "then an uninterruptible sleep inside the item"},
      {"delay", "duration", "0", "queue_delayed_work(): queued when this timer_list expires (rounded up to jiffies and to the timer wheel's bucket)"},
      {"mod", "bool", "false", "mod_delayed_work(): the item is queued with this delay whether or not it was pending (a pending one is taken back first, off its timer or its queue; an executing one is queued again)"},
      {"cpu", "int", "- (WORK_CPU_UNBOUND)", "queue_work_on() CPU"},
  };
  return decls;
}

const std::vector<ParamDecl>& kthread_queue_work_params() {
  static const std::vector<ParamDecl> decls = {
      {"worker", "kthread_worker name", "required", "declared under kthread_workers"},
      {"work", "string", "required", "the work item; a pending item is not queued again (unless mod)"},
      {"cost", "duration", "0", "CPU work of the item"},
      {"sleep", "duration", "0", "then an uninterruptible sleep inside the item"},
      {"delay", "duration", "0", "kthread_queue_delayed_work(): queued when this timer_list expires (rounded up to jiffies and to the timer wheel's bucket)"},
      {"mod", "bool", "false", "kthread_mod_delayed_work(): the item is queued with this delay whether or not it was pending (a pending one is taken back first: an idle timer re-armed; with delay 0 a queued one moves to the list's tail; an executing one is queued again)"},
  };
  return decls;
}

const std::vector<ParamDecl>& cancel_work_params() {
  static const std::vector<ParamDecl> decls = {
      {"work", "string", "required", "the work item (queued by a queue_work or kthread_queue_work event)"},
      {"sync", "bool", "false",
       "cancel_(delayed_)work_sync(): also wait (D) until an execution in progress returns, queuing refused "
       "meanwhile; false = cancel_(delayed_)work(), which only takes a pending item back (its timer deleted or off "
       "its queue). A kthread_work has only the sync form (kthread_cancel_(delayed_)work_sync())"},
  };
  return decls;
}

const std::vector<ParamDecl>& flush_work_params() {
  static const std::vector<ParamDecl> decls = {
      {"work", "string", "required", "the work item (queued by a queue_work or kthread_queue_work event)"},
      {"delayed", "bool", "false",
       "flush_delayed_work(): an item waiting for its delay is queued at once and waited for; false = "
       "flush_work(), which waits (D) for the queued item's execution, else the one in progress, and not for a "
       "timer (kthread_flush_work() of a kthread_work: the same, and a model error while its delay runs: the "
       "kernel's flush would never return)"},
  };
  return decls;
}

const std::vector<ParamDecl>& binder_proc_params() {
  static const std::vector<ParamDecl> decls = [] {
    const BinderProcParams d;
    return std::vector<ParamDecl>{
        {"name", "string, no blanks", "required", "the server process; its threads are binder:NAME_1 .. binder:NAME_N"},
        {"threads", "int 1..256", std::to_string(d.threads), "looper threads in its binder pool, as grown: max_threads + the threads that joined it"},
        {"nice", "int -20..19", std::to_string(d.nice),
         "the process's nice (proc->default_priority): its threads' nice while they wait for work"},
        {"min_nice", "int -20..19", std::to_string(d.min_nice),
         "its node's min_priority: the highest nice a synchronous transaction runs at (0: background "
         "scheduling disabled, as system_server; libbinder's default 19; mainline stores it as a u8, so a "
         "negative value raises nothing there; unused with an RT min_policy)"},
        {"cpus", "list of int, or \"0-3,6\"", "all CPUs", "the threads' affinity"},
        {"cgroup", "a cgroups[] name, or /", "/", "the cpu cgroup its threads run in"},
        {"android", "bool", "false",
         "the Android Common Kernel's priority rules (binder_transaction_priority()): policy and RT priority "
         "pass too, set before the thread's wake-up"},
        {"inherit_rt", "bool", "false",
         "android only: FLAT_BINDER_FLAG_INHERIT_RT, an RT caller's thread runs RT (else at nice 0)"},
        {"min_policy", "SCHED_OTHER | SCHED_BATCH | SCHED_FIFO | SCHED_RR", "SCHED_OTHER",
         "android only: the node's minimum policy (libbinder setMinSchedulerPolicy())"},
        {"min_rt_priority", "int 1..99", "required with an RT min_policy", "android only: the node's minimum RT priority"},
    };
  }();
  return decls;
}

const std::vector<ParamDecl>& binder_call_params() {
  static const std::vector<ParamDecl> decls = {
      {"proc", "binder_procs[] name", "required", "the server process"},
      {"work", "duration", "0", "CPU work of the transaction in a server thread (capacity time at 1024 and f_max)"},
      {"oneway", "bool", "false",
       "TF_ONE_WAY: the caller goes on at once; else it sleeps (S) until the reply (both wake-ups WF_SYNC)"},
      {"then", "map (a binder_call)", "none",
       "a nested call the server thread makes after `work` (e.g. system_server calling a HAL): it calls at the "
       "priority it runs at and, unless oneway, sleeps until that reply; not back into a process of the chain"},
      {"work_after", "duration", "0", "with then: the server thread's work after the nested call, before it replies"},
  };
  return decls;
}

const std::vector<ParamDecl>& submit_job_params() {
  static const std::vector<ParamDecl> decls = {
      {"entity", "entity name", "required", "a drm_sched device's entity"},
      {"gpu_time", "duration", "0", "the job's GPU time; 0 = drawn from the GPU's service_time"},
  };
  return decls;
}

std::vector<ParamSection> devices_schema() {
  return {
      {"workqueue", "the workqueue subsystem (kernel/workqueue.c, 6.12)", &workqueue_subsys_params()},
      {"workqueues[]", "one alloc_workqueue()", &workqueue_params()},
      {"kthread_workers[]", "one kthread_worker (kernel/kthread.c)", &kthread_worker_params()},
      {"binder_procs[]", "one binder server process and its thread pool (drivers/android/binder.c)",
       &binder_proc_params()},
      {"devices[] (model: gpu)", "a GPU", &gpu_params()},
      {"devices[] (model: drm_sched)", "a DRM GPU scheduler (drivers/gpu/drm/scheduler/)", &drm_sched_params()},
      {"devices[] (model: display)", "an app layer's display pipeline: vsync, UI thread, RenderThread, "
       "SurfaceFlinger, FrameTimeline", &display_params()},
      {"display thread", "ui_thread / render_thread / sf_thread of a display", &display_thread_params()},
      {"display adpf", "a display's HWUI ADPF hint session (models/devices/adpf.h; the Pixel power HAL's PID)",
       &display_adpf_params()},
      {"display sf_adpf", "a display's SurfaceFlinger ADPF hint session (models/devices/adpf.h)",
       &display_sf_adpf_params()},
      {"service_time", "a distribution (a bare duration is fixed)", &distribution_params()},
      {"irq_thread", "a GPU's threaded job-interrupt handler (irq/NN-name; kernel/irq/manage.c)", &irq_thread_params()},
      {"queue_work", "value of a queue_work event", &queue_work_params()},
      {"kthread_queue_work", "value of a kthread_queue_work event", &kthread_queue_work_params()},
      {"submit_job", "value of a submit_job event", &submit_job_params()},
      {"binder_call", "value of a binder_call event", &binder_call_params()},
      {"cancel_work", "value of a cancel_work event", &cancel_work_params()},
      {"flush_work", "value of a flush_work event", &flush_work_params()},
  };
}

}  // namespace schedlab::config
