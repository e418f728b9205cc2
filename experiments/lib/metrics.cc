#include "experiments/lib/metrics.h"

#include "sim/names.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>
#include <cmath>
#include <functional>
#include <set>

#include "models/config/config.h"
#include "models/kernel/workqueue/workqueue.h"

namespace schedlab {
namespace {

using TaskGetter = std::function<std::optional<double>(const TaskStats&)>;
using CpuGetter = std::function<std::optional<double>(const CpuAggregate&)>;
using TotalGetter = std::function<std::optional<double>(const RunResult&, const Aggregate&)>;

struct TaskFieldDef {
  MetricField field;
  TaskGetter get;
};
struct CpuFieldDef {
  MetricField field;
  CpuGetter get;
};
struct TotalFieldDef {
  MetricField field;
  TotalGetter get;
};

std::optional<double> us_of(const Summary& s, double Summary::*stat) {
  if (s.count == 0) return std::nullopt;
  return s.*stat / 1e3;
}

double seconds(Time t) { return t.to_s(); }

const std::vector<TaskFieldDef>& task_field_defs() {
  static const std::vector<TaskFieldDef> defs = [] {
    std::vector<TaskFieldDef> d;
    struct Dist {
      const char* name;
      Summary TaskStats::*member;
      const char* what;
    };
    const Dist dists[] = {
        {"wakeup_latency", &TaskStats::wakeup_latency, "sched_waking -> switched in"},
        {"runnable_wait", &TaskStats::runnable_wait, "each stretch in R before being switched in"},
        {"response", &TaskStats::response, "per period of a timer-driven task: period start -> timer reached again"},
    };
    struct Stat {
      const char* name;
      double Summary::*member;
    };
    const Stat stats[] = {{"mean", &Summary::mean}, {"min", &Summary::min}, {"p50", &Summary::p50},
                          {"p90", &Summary::p90},   {"p95", &Summary::p95}, {"p98", &Summary::p98},
                          {"p99", &Summary::p99},   {"max", &Summary::max}};
    for (const Dist& dist : dists) {
      d.push_back({{fmt::format("{}.count", dist.name), MetricUnit::kPerRun, fmt::format("samples of {}", dist.what)},
                   [m = dist.member](const TaskStats& s) { return static_cast<double>((s.*m).count); }});
      for (const Stat& st : stats)
        d.push_back({{fmt::format("{}.{}", dist.name, st.name), MetricUnit::kMicroseconds,
                      fmt::format("{} of {} (percentiles interpolate linearly)", st.name, dist.what)},
                     [m = dist.member, sm = st.member](const TaskStats& s) { return us_of(s.*m, sm); }});
    }
    d.push_back({{"cpu_share", MetricUnit::kFraction, "cpu time / window (1.0 = one CPU all the time)"},
                 [](const TaskStats& s) { return s.cpu_share(); }});
    struct TimeField {
      const char* name;
      Time TaskStats::*member;
      const char* what;
    };
    const TimeField times[] = {{"cpu_time_s", &TaskStats::cpu_time, "time on a CPU"},
                               {"runnable_time_s", &TaskStats::runnable_time, "time runnable, not running"},
                               {"sleep_time_s", &TaskStats::sleep_time, "time sleeping (S)"},
                               {"blocked_time_s", &TaskStats::blocked_time, "time blocked (D)"}};
    for (const TimeField& t : times)
      d.push_back({{t.name, MetricUnit::kSeconds, t.what}, [m = t.member](const TaskStats& s) { return seconds(s.*m); }});
    struct CountField {
      const char* name;
      uint64_t TaskStats::*member;
      const char* what;
    };
    const CountField counts[] = {{"wakeups", &TaskStats::wakeups, "wakeups"},
                                 {"preemptions", &TaskStats::preemptions, "involuntary switches out"},
                                 {"switches_in", &TaskStats::switches_in, "times switched in"},
                                 {"migrations", &TaskStats::migrations, "moves to another CPU"},
                                 {"periods", &TaskStats::periods, "periods of a timer-driven task"},
                                 {"deadline_misses", &TaskStats::deadline_misses, "periods whose response exceeded the period"}};
    for (const CountField& c : counts)
      d.push_back({{c.name, MetricUnit::kPerRun, c.what},
                   [m = c.member](const TaskStats& s) { return static_cast<double>(s.*m); }});
    d.push_back({{"deadline_miss_pct", MetricUnit::kPercent, "deadline_misses / periods"},
                 [](const TaskStats& s) -> std::optional<double> {
                   if (s.periods == 0) return std::nullopt;
                   return 100.0 * static_cast<double>(s.deadline_misses) / static_cast<double>(s.periods);
                 }});
    return d;
  }();
  return defs;
}

// Task and group fields read from the run's TaskMetrics (the task, or every
// task of the group) rather than the aggregate: the work counter.
struct TaskRunFieldDef {
  MetricField field;
  std::function<std::optional<double>(const std::vector<const TaskMetrics*>&, Time elapsed)> get;
};

int64_t work_done(const std::vector<const TaskMetrics*>& ts) {
  int64_t w = 0;
  for (const TaskMetrics* t : ts) w += t->work_done;
  return w;
}

const std::vector<TaskRunFieldDef>& task_run_field_defs() {
  static const std::vector<TaskRunFieldDef> defs = {
      {{"work_rate", MetricUnit::kFraction,
        "CPU work done / window: work-seconds (capacity 1024 at f_max) per second; a benchmark's throughput"},
       [](const std::vector<const TaskMetrics*>& ts, Time elapsed) -> std::optional<double> {
         if (elapsed <= Time::zero()) return std::nullopt;
         return static_cast<double>(work_done(ts)) / static_cast<double>(elapsed.count());
       }},
      {{"work_done_s", MetricUnit::kSeconds, "CPU work done in the window, seconds at capacity 1024 and f_max"},
       [](const std::vector<const TaskMetrics*>& ts, Time) -> std::optional<double> {
         return static_cast<double>(work_done(ts)) / 1e9;
       }},
  };
  return defs;
}

// Cluster fields (cluster:NAME.FIELD): its CPUs together, per run.
// residency_s.STATE: seconds summed over the cluster's CPUs in cpu_idle
// state STATE (the CPU's states 0..n-1, then the cluster's n..), -1 = in no
// idle state (running, or the idle task's own runs such as the governor),
// as the seed threads' residency tables count them.
constexpr int kMaxResidencyState = 19;  // CPU states + cluster states < 2 x CPUIDLE_STATE_MAX

const std::vector<MetricField>& cluster_field_list() {
  static const std::vector<MetricField> f = [] {
    std::vector<MetricField> v;
    for (int st = -1; st <= kMaxResidencyState; ++st)
      v.push_back({fmt::format("residency_s.{}", st), MetricUnit::kSeconds,
                   st < 0 ? std::string("time in no idle state (cpu_idle -1: running), summed over the cluster's CPUs")
                          : fmt::format("time in cpu_idle state {}, summed over the cluster's CPUs", st)});
    v.push_back({"busy_s", MetricUnit::kSeconds, "time running a task, summed over the cluster's CPUs"});
    v.push_back({"energy_mj", MetricUnit::kMilliJoules, "energy of the cluster (its CPUs and static power)"});
    v.push_back({"avg_power_mw", MetricUnit::kMilliWatts, "cluster energy / window"});
    return v;
  }();
  return f;
}

std::optional<double> cluster_value(const RunResult& r, const std::string& name, const std::string& field) {
  const ClusterMetrics* cl = nullptr;
  for (const ClusterMetrics& c : r.clusters)
    if (c.name == name) cl = &c;
  if (!cl) return std::nullopt;
  if (field == "energy_mj") return cl->energy_mj();
  if (field == "avg_power_mw")
    return r.elapsed() > Time::zero() ? std::optional<double>(cl->energy_mj() / r.elapsed().to_s()) : std::nullopt;
  if (field == "busy_s") {
    Time sum;
    for (int cpu : cl->cpus) sum += r.cpus[static_cast<size_t>(cpu)].busy;
    return sum.to_s();
  }
  const std::string prefix = "residency_s.";
  if (field.rfind(prefix, 0) != 0) return std::nullopt;
  return cluster_idle_time(r, *cl, std::atoi(field.c_str() + prefix.size())).to_s();
}

const std::vector<CpuFieldDef>& cpu_field_defs() {
  static const std::vector<CpuFieldDef> defs = {
      {{"busy_pct", MetricUnit::kPercent, "busy / window"}, [](const CpuAggregate& c) { return 100.0 * c.busy_fraction(); }},
      {{"idle_pct", MetricUnit::kPercent, "idle / window"}, [](const CpuAggregate& c) { return 100.0 * c.idle_fraction(); }},
      {{"busy_s", MetricUnit::kSeconds, "time running a task"}, [](const CpuAggregate& c) { return seconds(c.busy); }},
      {{"idle_s", MetricUnit::kSeconds, "idle time"}, [](const CpuAggregate& c) { return seconds(c.idle); }},
      {{"context_switches", MetricUnit::kPerRun, "context switches"},
       [](const CpuAggregate& c) { return static_cast<double>(c.context_switches); }},
  };
  return defs;
}

const std::vector<TotalFieldDef>& total_field_defs() {
  static const std::vector<TotalFieldDef> defs = {
      {{"busy_pct", MetricUnit::kPercent, "busy time of all CPUs / (CPUs x window)"},
       [](const RunResult&, const Aggregate& a) -> std::optional<double> {
         Time busy, elapsed;
         for (const CpuAggregate& c : a.cpus) {
           busy += c.busy;
           elapsed += c.elapsed;
         }
         if (elapsed.count() <= 0) return std::nullopt;
         return 100.0 * static_cast<double>(busy.count()) / static_cast<double>(elapsed.count());
       }},
      {{"context_switches", MetricUnit::kPerRun, "context switches on all CPUs"},
       [](const RunResult&, const Aggregate& a) {
         uint64_t n = 0;
         for (const CpuAggregate& c : a.cpus) n += c.context_switches;
         return static_cast<double>(n);
       }},
      {{"wakeups", MetricUnit::kPerRun, "wakeups of all tasks"},
       [](const RunResult&, const Aggregate& a) {
         uint64_t n = 0;
         for (const TaskAggregate& t : a.tasks) n += t.stats.wakeups;
         return static_cast<double>(n);
       }},
      {{"migrations", MetricUnit::kPerRun, "migrations of all tasks"},
       [](const RunResult&, const Aggregate& a) {
         uint64_t n = 0;
         for (const TaskAggregate& t : a.tasks) n += t.stats.migrations;
         return static_cast<double>(n);
       }},
      // n/a until the platform has a power model (run_totals()).
      {{"energy_mj", MetricUnit::kMilliJoules, "energy of all clusters in the window (n/a without a power model)"},
       [](const RunResult& r, const Aggregate&) { return run_totals(r).energy_mj; }},
      {{"avg_power_mw", MetricUnit::kMilliWatts, "energy / window (n/a without a power model)"},
       [](const RunResult& r, const Aggregate&) { return run_totals(r).avg_power_mw; }},
  };
  return defs;
}

const char* scope_word(MetricScope s) {
  switch (s) {
    case MetricScope::kTask: return "task";
    case MetricScope::kGroup: return "group";
    case MetricScope::kCpu: return "cpu";
    case MetricScope::kTotal: return "total";
    case MetricScope::kDrm: return "drm";
    case MetricScope::kWq: return "wq";
    case MetricScope::kRpm: return "rpm";
    case MetricScope::kFrames: return "frames";
    case MetricScope::kCluster: return "cluster";
  }
  return "";
}
constexpr MetricScope kNamedScopes[] = {MetricScope::kTask,   MetricScope::kGroup,  MetricScope::kCpu,
                                        MetricScope::kCluster, MetricScope::kDrm,   MetricScope::kWq,
                                        MetricScope::kRpm,    MetricScope::kFrames};

// Thresholds of the `BASE.ge_X` count fields: samples >= X per run (the
// thread's "waits >= 2 ms / run").
struct Threshold {
  const char* name;
  int64_t ns;
};
constexpr Threshold kThresholds[] = {{"ge_1ms", 1'000'000}, {"ge_2ms", 2'000'000}, {"ge_5ms", 5'000'000},
                                     {"ge_10ms", 10'000'000}};

// Fields of the drm: and wq: scopes: percentiles of pooled samples (us).
static const char* const kPctNames[] = {"mean", "p50", "p90", "p95", "p98", "p99", "max"};
static std::vector<MetricField> sample_fields(std::initializer_list<const char*> bases, const char* count_name,
                                              const char* what) {
  std::vector<MetricField> f;
  for (const char* base : bases)
    for (const char* p : kPctNames)
      f.push_back({fmt::format("{}.{}", base, p), MetricUnit::kMicroseconds, fmt::format("{} {} (us)", base, p)});
  for (const char* base : bases)
    for (const Threshold& th : kThresholds)
      f.push_back({fmt::format("{}.{}", base, th.name), MetricUnit::kPerRun,
                   fmt::format("{} samples >= {} per run", base, th.name + 3)});
  f.push_back({count_name, MetricUnit::kPerRun, what});
  return f;
}

std::vector<std::string> field_names(MetricScope scope) {
  std::vector<std::string> names;
  for (const MetricField& f : metric_fields(scope)) names.push_back(f.name);
  return names;
}

std::string list(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

const MetricField* find_field(MetricScope scope, const std::string& name) {
  for (const MetricField& f : metric_fields(scope))
    if (f.name == name) return &f;
  return nullptr;
}

}  // namespace

int unit_decimals(MetricUnit u) {
  switch (u) {
    case MetricUnit::kFraction: return 6;
    case MetricUnit::kSeconds: return 9;
    case MetricUnit::kMicroseconds:
    case MetricUnit::kPercent:
    case MetricUnit::kPerRun:
    case MetricUnit::kMilliJoules:
    case MetricUnit::kMilliWatts: return 3;
  }
  return 3;
}

const char* unit_label(MetricUnit u) {
  switch (u) {
    case MetricUnit::kMicroseconds: return "us";
    case MetricUnit::kFraction: return "";
    case MetricUnit::kPercent: return "%";
    case MetricUnit::kPerRun: return "/run";
    case MetricUnit::kSeconds: return "s";
    case MetricUnit::kMilliJoules: return "mJ";
    case MetricUnit::kMilliWatts: return "mW";
  }
  return "";
}

const std::vector<MetricField>& metric_fields(MetricScope scope) {
  static const std::vector<MetricField> task = [] {
    std::vector<MetricField> f;
    for (const auto& d : task_field_defs()) f.push_back(d.field);
    for (const auto& d : task_run_field_defs()) f.push_back(d.field);
    return f;
  }();
  static const std::vector<MetricField> cpu = [] {
    std::vector<MetricField> f;
    for (const auto& d : cpu_field_defs()) f.push_back(d.field);
    return f;
  }();
  static const std::vector<MetricField> total = [] {
    std::vector<MetricField> f;
    for (const auto& d : total_field_defs()) f.push_back(d.field);
    return f;
  }();
  static const std::vector<MetricField> drm =
      sample_fields({"push_to_run"}, "jobs", "jobs run (drm_sched_entity_push_job -> drm_run_job)");
  static const std::vector<MetricField> wq =
      sample_fields({"cpu_wait", "runnable_wait", "idle_exit_wait", "exec"}, "items", "work items executed");
  static const std::vector<MetricField> rpm =
      sample_fields({"resume_d_state", "resume_waker_wait", "resume_wait_d_state", "resume_wait_waker_wait",
                     "suspend_d_state", "suspend_waker_wait"},
                    "resume_waits", "D sleeps inside rpm_resume() woken by another context (not a timer) per run");
  static const std::vector<MetricField> frames = {
      {"frames", MetricUnit::kPerRun, "frames presented or dropped per run"},
      {"app_missed", MetricUnit::kPerRun, "FrameTimeline App Deadline Missed per run"},
      {"sf_missed", MetricUnit::kPerRun, "FrameTimeline SurfaceFlinger deadline missed per run"},
      {"buffer_stuffing", MetricUnit::kPerRun, "FrameTimeline Buffer Stuffing (late behind the previous buffer) per run"},
      {"dropped", MetricUnit::kPerRun, "frames dropped (a newer buffer replaced them) per run"},
      {"app_missed_pct", MetricUnit::kPercent, "app-missed frames, % of frames"},
      {"janky", MetricUnit::kPerRun, "janky frames per run (FrameTimeline jank TimeStats counts: not Buffer Stuffing alone)"},
      {"jank_pct", MetricUnit::kPercent, "janky frames, % of frames"},
      {"fps", MetricUnit::kFraction, "presented frames (frames - dropped) per second of the window"},
  };
  switch (scope) {
    case MetricScope::kTask:
    case MetricScope::kGroup: return task;
    case MetricScope::kCpu: return cpu;
    case MetricScope::kTotal: return total;
    case MetricScope::kDrm: return drm;
    case MetricScope::kWq: return wq;
    case MetricScope::kRpm: return rpm;
    case MetricScope::kFrames: return frames;
    case MetricScope::kCluster: return cluster_field_list();
  }
  return total;
}

std::string MetricName::text() const {
  if (scope == MetricScope::kTotal) return fmt::format("total.{}", field);
  return fmt::format("{}:{}.{}", scope_word(scope), object, field);
}

std::optional<MetricName> parse_metric_name(const std::string& text, std::string* why) {
  auto fail = [&](const std::string& w) -> std::optional<MetricName> {
    if (why) *why = w;
    return std::nullopt;
  };
  MetricName m;
  std::string rest;
  if (text.rfind("total.", 0) == 0) {
    m.scope = MetricScope::kTotal;
    m.field = text.substr(6);
  } else {
    const size_t colon = text.find(':');
    if (colon == std::string::npos)
      return fail(fmt::format("'{}' is not a metric name (expected task:NAME.FIELD, group:NAME.FIELD, cpu:N.FIELD "
                              "or total.FIELD)",
                              text));
    const std::string scope = text.substr(0, colon);
    bool known = false;
    for (MetricScope s : kNamedScopes)
      if (scope == scope_word(s)) m.scope = s, known = true;
    if (!known)
      return fail(fmt::format("unknown metric scope '{}' in '{}' (valid: task, group, cpu, cluster, drm, wq, rpm, frames, total)",
                              scope, text));
    rest = text.substr(colon + 1);
    // The object is everything up to the first '.' after which a valid
    // field follows, so names may contain dots (Android's comm of SystemUI's
    // main thread is "ndroid.systemui"); without such a split, the first '.'.
    size_t dot = rest.find('.');
    for (size_t d = dot; d != std::string::npos; d = rest.find('.', d + 1))
      if (d > 0 && find_field(m.scope, rest.substr(d + 1))) {
        dot = d;
        break;
      }
    if (dot == std::string::npos || dot == 0)
      return fail(fmt::format("'{}' lacks {}:NAME.FIELD", text, scope_word(m.scope)));
    m.object = rest.substr(0, dot);
    m.field = rest.substr(dot + 1);
    if (m.scope == MetricScope::kCpu && m.object != "*" &&
        m.object.find_first_not_of("0123456789") != std::string::npos)
      return fail(fmt::format("'{}': a CPU is a number or * (cpu:0.busy_pct, cpu:*.busy_pct)", text));
  }
  if (!find_field(m.scope, m.field)) {
    const std::vector<std::string> names = field_names(m.scope);
    const char* scope = scope_word(m.scope);
    return fail(fmt::format("unknown {} field '{}' in '{}' (valid: {}){}", scope, m.field, text, list(names),
                            did_you_mean(m.field, names)));
  }
  return m;
}

MetricUnit metric_unit(const MetricName& name) {
  const MetricField* f = find_field(name.scope, name.field);
  return f ? f->unit : MetricUnit::kPerRun;
}

std::vector<Metric> expand_metrics(const std::vector<MetricRequest>& requests, const RunResult& sample) {
  return expand_metrics(requests, aggregate_runs({sample}));
}

std::vector<Metric> expand_metrics(const std::vector<MetricRequest>& requests, const Aggregate& agg,
                                   const std::vector<const Aggregate*>& also) {
  // Wildcards expand over `agg`; explicit names may come from any of them.
  std::vector<std::string> tasks, groups, cpus, all_tasks, all_groups, all_cpus;
  for (const TaskAggregate& t : agg.tasks) tasks.push_back(t.name);
  for (const GroupAggregate& g : agg.groups) groups.push_back(g.name);
  for (const CpuAggregate& c : agg.cpus) cpus.push_back(std::to_string(c.cpu));
  all_tasks = tasks, all_groups = groups, all_cpus = cpus;
  auto add_unique = [](std::vector<std::string>& v, const std::string& s) {
    if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
  };
  for (const Aggregate* a : also) {
    for (const TaskAggregate& t : a->tasks) add_unique(all_tasks, t.name);
    for (const GroupAggregate& g : a->groups) add_unique(all_groups, g.name);
    for (const CpuAggregate& c : a->cpus) add_unique(all_cpus, std::to_string(c.cpu));
  }

  std::vector<Metric> out;
  std::set<std::string> seen;
  auto add = [&](MetricName n) {
    Metric m{n, metric_unit(n), n.text()};
    if (seen.insert(m.text).second) out.push_back(std::move(m));
  };
  for (const MetricRequest& req : requests) {
    auto fail = [&](const std::string& message) {
      throw ConfigError(req.origin.file, req.origin.line, req.origin.column, "metrics", message);
    };
    std::string why;
    auto name = parse_metric_name(req.name, &why);
    if (!name) fail(why);
    // Totals, and drm:/wq: objects (known only once something ran: an
    // absent one reads n/a).
    if (name->scope == MetricScope::kTotal || name->scope == MetricScope::kDrm || name->scope == MetricScope::kWq ||
        name->scope == MetricScope::kRpm || name->scope == MetricScope::kFrames ||
        name->scope == MetricScope::kCluster) {
      add(*name);
      continue;
    }
    const std::vector<std::string>& objects =
        name->scope == MetricScope::kTask ? tasks : name->scope == MetricScope::kGroup ? groups : cpus;
    const char* what = name->scope == MetricScope::kTask ? "task" : name->scope == MetricScope::kGroup ? "group" : "CPU";
    if (name->object == "*") {
      for (const std::string& o : objects) {
        MetricName n = *name;
        n.object = o;
        add(n);
      }
      continue;
    }
    const std::vector<std::string>& valid = name->scope == MetricScope::kTask    ? all_tasks
                                            : name->scope == MetricScope::kGroup ? all_groups
                                                                                 : all_cpus;
    if (std::find(valid.begin(), valid.end(), name->object) == valid.end())
      fail(fmt::format("no {} '{}' in the scenario ({}s: {}){}", what, name->object, what, list(valid),
                       did_you_mean(name->object, valid)));
    add(*name);
  }
  return out;
}

// Declared names from the scenarios, the rest from the runs.
void check_named_objects(const std::vector<MetricRequest>& requests, const std::vector<const ScenarioParams*>& params,
                         const std::vector<const RunResult*>& runs) {
  for (const MetricRequest& req : requests) {
    const auto name = parse_metric_name(req.name, nullptr);
    if (!name || name->object.empty() || name->object == "*") continue;
    std::vector<std::string> valid;
    auto add = [&](const std::string& s) {
      if (std::find(valid.begin(), valid.end(), s) == valid.end()) valid.push_back(s);
    };
    const char* what = nullptr;
    switch (name->scope) {
      case MetricScope::kWq:
        what = "workqueue";
        for (const std::string& w : WorkqueueSystem::system_workqueue_names()) add(w);
        for (const ScenarioParams* sp : params)
          for (const auto& w : sp->workqueue.workqueues) add(w.name);
        for (const RunResult* r : runs)
          for (const WorkQueueMetrics& w : r->workqueues) add(w.name);
        break;
      case MetricScope::kDrm:
        what = "DRM scheduler or entity";
        for (const ScenarioParams* sp : params)
          for (const auto& d : sp->devices)
            if (const auto* drm = std::get_if<DrmSchedParams>(&d.params)) {
              add(d.name);
              for (const std::string& e : drm->entities) add(d.name + "/" + e);
            }
        break;
      case MetricScope::kRpm:
        what = "task group (or group/device) with runtime PM sleeps";
        for (const RunResult* r : runs) {
          for (const TaskMetrics& t : r->tasks) add(t.group);
          for (const RpmSleepMetrics& s : r->rpm_sleeps) add(s.group), add(s.group + "/" + s.device);
        }
        if (const size_t slash = name->object.find('/'); slash != std::string::npos) {
          // group/device: the group is checked; the device must be one of the scenario's.
          const std::string group = name->object.substr(0, slash);
          const std::string device = name->object.substr(slash + 1);
          bool known_device = false;
          for (const ScenarioParams* sp : params)
            for (const auto& d : sp->pm_runtime.devices) known_device |= d.name == device;
          if (known_device && std::find(valid.begin(), valid.end(), group) != valid.end()) add(name->object);
        }
        break;
      case MetricScope::kFrames:
        what = "display layer";
        for (const ScenarioParams* sp : params)
          for (const auto& d : sp->devices)
            if (const auto* disp = std::get_if<DisplayParams>(&d.params)) add(disp->layer);
        break;
      case MetricScope::kCluster:
        what = "cluster";
        for (const ScenarioParams* sp : params)
          for (const ClusterParams& c : sp->platform.clusters) add(c.name);
        break;
      default: break;
    }
    if (!what || std::find(valid.begin(), valid.end(), name->object) != valid.end()) continue;
    throw ConfigError(req.origin.file, req.origin.line, req.origin.column, "metrics",
                      fmt::format("no {} '{}' in the experiment ({}){}", what, name->object,
                                  valid.empty() ? std::string("none") : fmt::format("{}", fmt::join(valid, ", ")),
                                  did_you_mean(name->object, valid)));
  }
}

RunTotals run_totals(const RunResult& run) {
  RunTotals t;
  // Energy needs the platform's power model (configs/platforms/*.yaml); a
  // platform of identical CPUs (`platform: {cpus: N}`) has none: n/a, not 0.
  if (run.has_power()) {
    t.energy_mj = run.total_energy_mj();
    t.avg_power_mw = run.avg_power_mw();
  }
  return t;
}

Time cluster_idle_time(const RunResult& run, const ClusterMetrics& cluster, int state) {
  Time sum;
  for (int cpu : cluster.cpus) {
    const CpuMetrics& c = run.cpus[static_cast<size_t>(cpu)];
    if (state < 0)
      sum += c.cpuidle_running;
    else if (static_cast<size_t>(state) < c.cpuidle_residency.size())
      sum += c.cpuidle_residency[static_cast<size_t>(state)];
  }
  return sum;
}

namespace {

// The samples a drm:/wq:/rpm: metric reads in one run and the count it
// reports (found: the run has the scheduler, workqueue or task group).
struct ScopeSamples {
  Samples samples;
  uint64_t count = 0;
  bool found = false;
};

ScopeSamples scope_samples(const RunResult& run, const MetricName& name) {
  ScopeSamples x;
  const std::string base = name.field.substr(0, name.field.find('.'));
  if (name.scope == MetricScope::kDrm) {
    for (const DrmEntityMetrics& d : run.drm_entities) {
      // "sched/entity": match the whole name or the scheduler part.
      if (d.name != name.object && d.name.substr(0, d.name.find('/')) != name.object) continue;
      x.found = true;
      x.samples.append(d.push_to_run);
      x.count += d.jobs;
    }
  } else if (name.scope == MetricScope::kWq) {
    for (const WorkQueueMetrics& w : run.workqueues) {
      if (w.name != name.object) continue;
      x.found = true;
      x.samples.append(base == "cpu_wait"         ? w.cpu_wait
                       : base == "runnable_wait"  ? w.runnable_wait
                       : base == "idle_exit_wait" ? w.idle_exit_wait
                                                  : w.exec);
      x.count += w.items;
    }
  } else if (name.scope == MetricScope::kRpm) {
    // "group" pools every device; "group/device" one.
    // resume_wait_*: only sleeps woken by a task (waiting for another
    // context's transition, e.g. the pm_wq worker), as a waker query sees them.
    const bool resume = base.rfind("resume", 0) == 0;
    const bool waker = base.find("waker_wait") != std::string::npos;
    const bool by_task_only = base.rfind("resume_wait_", 0) == 0;
    for (const RpmSleepMetrics& s : run.rpm_sleeps) {
      if (s.group != name.object && s.group + "/" + s.device != name.object) continue;
      x.found = true;
      if (s.in_resume && s.woken_by_task) x.count += s.d_state.size();
      if (s.in_resume == resume && (!by_task_only || s.woken_by_task)) x.samples.append(waker ? s.waker_wait : s.d_state);
    }
  }
  return x;
}

}  // namespace

std::optional<PooledMetric> PooledMetric::of(std::span<const RunResult> runs, const MetricName& name) {
  if (name.scope != MetricScope::kDrm && name.scope != MetricScope::kWq && name.scope != MetricScope::kRpm &&
      name.scope != MetricScope::kFrames)
    return std::nullopt;
  PooledMetric m;
  m.runs_ = runs.size();
  m.num_.assign(runs.size(), 0);
  m.den_.assign(runs.size(), 0);
  const size_t dot = name.field.find('.');
  const std::string stat = dot == std::string::npos ? std::string() : name.field.substr(dot + 1);
  if (name.scope == MetricScope::kFrames) {
    // Counts per run, or ratios of sums: app_missed_pct and jank_pct over
    // all frames, fps over every run's window.
    m.form_ = name.field == "fps"                                           ? Form::kPerSecond
              : name.field == "app_missed_pct" || name.field == "jank_pct" ? Form::kPercent
                                                                            : Form::kPerRun;
    for (size_t r = 0; r < runs.size(); ++r) {
      for (const FrameMetrics& f : runs[r].frames) {
        if (f.layer != name.object) continue;
        m.found_ = true;
        const uint64_t missed = name.field == "jank_pct" ? f.janky : f.app_missed;
        switch (m.form_) {
          case Form::kPercent: m.num_[r] += static_cast<int64_t>(missed), m.den_[r] += static_cast<int64_t>(f.frames); break;
          case Form::kPerSecond: m.num_[r] += static_cast<int64_t>(f.frames - f.dropped); break;
          default:
            m.num_[r] += static_cast<int64_t>(name.field == "frames"      ? f.frames
                                              : name.field == "app_missed" ? f.app_missed
                                              : name.field == "sf_missed"  ? f.sf_missed
                                              : name.field == "dropped"    ? f.dropped
                                              : name.field == "buffer_stuffing" ? f.buffer_stuffing
                                                                           : f.janky);
        }
      }
      if (m.form_ == Form::kPerSecond) m.den_[r] = runs[r].elapsed().count();
      if (m.form_ == Form::kPerRun) m.den_[r] = 1;
    }
    return m;
  }
  const auto threshold = std::find_if(std::begin(kThresholds), std::end(kThresholds),
                                      [&](const Threshold& th) { return stat == th.name; });
  m.form_ = dot == std::string::npos || threshold != std::end(kThresholds) ? Form::kPerRun : Form::kSampleStat;
  std::vector<std::pair<int64_t, uint32_t>> all;  // (value, run)
  m.run_samples_.assign(runs.size(), 0);
  m.run_sum_.assign(runs.size(), 0);
  m.run_max_.assign(runs.size(), 0);
  for (size_t r = 0; r < runs.size(); ++r) {
    const ScopeSamples x = scope_samples(runs[r], name);
    m.found_ = m.found_ || x.found;
    m.den_[r] = 1;
    if (m.form_ == Form::kPerRun) {
      m.num_[r] = static_cast<int64_t>(threshold != std::end(kThresholds) ? x.samples.count_at_least(threshold->ns)
                                                                          : x.count);
      continue;
    }
    for (int64_t v : x.samples.values()) {
      all.emplace_back(v, static_cast<uint32_t>(r));
      m.run_sum_[r] += v;
      m.run_max_[r] = m.run_samples_[r] == 0 ? v : std::max(m.run_max_[r], v);
      ++m.run_samples_[r];
    }
  }
  if (m.form_ == Form::kSampleStat) {
    std::sort(all.begin(), all.end());
    m.sorted_.reserve(all.size());
    m.sorted_run_.reserve(all.size());
    for (const auto& [v, r] : all) {
      m.sorted_.push_back(v);
      m.sorted_run_.push_back(r);
    }
    m.stat_ = stat;
    for (const char* p : {"p50", "p90", "p95", "p98", "p99"})
      if (stat == p) m.percentile_ = std::atof(p + 1);
  }
  return m;
}

int64_t PooledMetric::order_statistic(size_t k, size_t n, const std::vector<uint32_t>& weights) const {
  // The k-th smallest (0-based) of n pooled samples where run r's samples
  // count weights[r] times: walk the merged sorted samples from the nearer
  // end, adding each sample's weight.
  auto w = [&](size_t i) -> uint64_t { return weights.empty() ? 1 : weights[sorted_run_[i]]; };
  uint64_t seen = 0;
  if (k < n / 2) {
    for (size_t i = 0; i < sorted_.size(); ++i)
      if ((seen += w(i)) > k) return sorted_[i];
  } else {
    const size_t from_top = n - 1 - k;
    for (size_t i = sorted_.size(); i-- > 0;)
      if ((seen += w(i)) > from_top) return sorted_[i];
  }
  return sorted_.empty() ? 0 : sorted_.back();
}

std::optional<double> PooledMetric::value(const std::vector<uint32_t>& weights) const {
  if (!found_) return std::nullopt;
  auto w = [&](size_t r) -> int64_t { return weights.empty() ? 1 : weights[r]; };
  if (form_ != Form::kSampleStat) {
    int64_t num = 0, den = 0;
    for (size_t r = 0; r < runs_; ++r) {
      num += w(r) * num_[r];
      den += w(r) * den_[r];
    }
    if (form_ == Form::kPerRun) return static_cast<double>(num) / static_cast<double>(den);
    if (den == 0) return std::nullopt;
    if (form_ == Form::kPercent) return 100.0 * static_cast<double>(num) / static_cast<double>(den);
    return static_cast<double>(num) / Time::ns(den).to_s();
  }
  // The statistics of Samples::summarize() over the pooled samples.
  uint64_t n = 0;
  __int128 sum = 0;
  int64_t max = 0;
  bool any = false;
  for (size_t r = 0; r < runs_; ++r) {
    if (w(r) == 0 || run_samples_[r] == 0) continue;
    n += static_cast<uint64_t>(w(r)) * run_samples_[r];
    sum += static_cast<__int128>(w(r)) * run_sum_[r];
    max = any ? std::max(max, run_max_[r]) : run_max_[r];
    any = true;
  }
  if (n == 0) return std::nullopt;
  double v;
  if (stat_ == "mean") {
    v = static_cast<double>(static_cast<long double>(sum) / static_cast<long double>(n));
  } else if (percentile_ > 0) {
    const double rank = percentile_ / 100.0 * static_cast<double>(n - 1);
    const size_t lo = static_cast<size_t>(std::floor(rank));
    const size_t hi = std::min<size_t>(lo + 1, n - 1);
    const int64_t at_lo = order_statistic(lo, n, weights);
    const int64_t at_hi = hi == lo ? at_lo : order_statistic(hi, n, weights);
    v = static_cast<double>(at_lo) + (rank - static_cast<double>(lo)) * (static_cast<double>(at_hi) - static_cast<double>(at_lo));
  } else {
    v = static_cast<double>(max);
  }
  return v / 1000.0;
}

std::optional<double> pooled_metric_value(const std::vector<RunResult>& runs, const MetricName& name) {
  if (runs.empty()) return std::nullopt;
  const std::optional<PooledMetric> m = PooledMetric::of(runs, name);
  return m ? m->value() : std::nullopt;
}

RunMetrics::RunMetrics(const RunResult& run) : run_(&run), agg_(aggregate_runs({run})) {}

std::optional<double> RunMetrics::value(const MetricName& name) const {
  switch (name.scope) {
    case MetricScope::kTask:
    case MetricScope::kGroup: {
      const TaskStats* stats = nullptr;
      if (name.scope == MetricScope::kTask) {
        for (const TaskAggregate& t : agg_.tasks)
          if (t.name == name.object) stats = &t.stats;
      } else {
        for (const GroupAggregate& g : agg_.groups)
          if (g.name == name.object) stats = &g.stats;
      }
      if (!stats) return std::nullopt;
      for (const TaskRunFieldDef& d : task_run_field_defs()) {
        if (d.field.name != name.field) continue;
        std::vector<const TaskMetrics*> ts;
        for (const TaskMetrics& t : run_->tasks)
          if ((name.scope == MetricScope::kTask ? t.name : t.group) == name.object) ts.push_back(&t);
        return d.get(ts, run_->elapsed());
      }
      for (const TaskFieldDef& d : task_field_defs())
        if (d.field.name == name.field) return d.get(*stats);
      return std::nullopt;
    }
    case MetricScope::kCpu: {
      const int cpu = std::atoi(name.object.c_str());
      if (cpu < 0 || static_cast<size_t>(cpu) >= agg_.cpus.size()) return std::nullopt;
      for (const CpuFieldDef& d : cpu_field_defs())
        if (d.field.name == name.field) return d.get(agg_.cpus[static_cast<size_t>(cpu)]);
      return std::nullopt;
    }
    case MetricScope::kTotal:
      for (const TotalFieldDef& d : total_field_defs())
        if (d.field.name == name.field) return d.get(*run_, agg_);
      return std::nullopt;
    case MetricScope::kDrm:
    case MetricScope::kWq:
    case MetricScope::kRpm:
    case MetricScope::kFrames: {
      // The pooled statistic of this one run.
      const std::optional<PooledMetric> m = PooledMetric::of(std::span<const RunResult>(run_, 1), name);
      return m ? m->value() : std::nullopt;
    }
    case MetricScope::kCluster:
      return cluster_value(*run_, name.object, name.field);
  }
  return std::nullopt;
}

std::string without_negative_zero(std::string s) {
  if (!s.empty() && s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);
  return s;
}

static std::string format_metric_value_raw(double v, MetricUnit unit) {
  switch (unit) {
    case MetricUnit::kMicroseconds:
    case MetricUnit::kPerRun:
      return std::fabs(v) < 100.0 ? fmt::format("{:.2f}", v) : fmt::format("{:.1f}", v);
    case MetricUnit::kFraction: return fmt::format("{:.3f}", v);
    case MetricUnit::kPercent: return fmt::format("{:.1f}", v);
    case MetricUnit::kSeconds: return fmt::format("{:.3f}", v);
    case MetricUnit::kMilliJoules:
    case MetricUnit::kMilliWatts: return fmt::format("{:.1f}", v);
  }
  return fmt::format("{}", v);
}

std::string format_metric_value(double v, MetricUnit unit) {
  if (!std::isfinite(v)) return "n/a";
  return without_negative_zero(format_metric_value_raw(v, unit));
}

}  // namespace schedlab
