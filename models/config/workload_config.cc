// tasks: the task set, in rt-app's shape (a task runs its phases in order,
// each phase repeats its event list `loop` times). Rules that span tasks
// (unique names, resume targets) are checked once every task is read.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>

#include "models/config/policy_names.h"
#include "models/config/yaml_loaders.h"

namespace schedlab::config {
namespace {

using Kind = EventSpec::Kind;

constexpr int kMaxInstances = 4096;
constexpr Time kMinSlice = Time::us(100);  // the kernel clamps sched_runtime to [0.1ms, 100ms]
constexpr Time kMaxSlice = Time::ms(100);

// What an event's value must be.
enum class Arg { kDuration, kName, kTimer, kWait, kNone, kTask, kCall, kRpm, kUclamp, kCgroup, kCpuUclamp, kCpuWeight, kCpuIdle,
                 kSetScheduler, kNice, kCpus };

struct EventKind {
  std::string name;
  Kind kind;
  Arg arg;
  CallSpec::Op op = {};  // Arg::kCall: which call (devices_config.cc reads its value)
};

const std::vector<EventKind>& event_kinds() {
  static const std::vector<EventKind> kinds = {
      {"run", Kind::kRun, Arg::kDuration},        {"runtime", Kind::kRuntime, Arg::kDuration},
      {"sleep", Kind::kSleep, Arg::kDuration},    {"timer", Kind::kTimer, Arg::kTimer},
      {"iowait", Kind::kIowait, Arg::kDuration},
      {"lock", Kind::kLock, Arg::kName},          {"unlock", Kind::kUnlock, Arg::kName},
      {"wait", Kind::kWait, Arg::kWait},          {"signal", Kind::kSignal, Arg::kName},
      {"broad", Kind::kBroad, Arg::kName},        {"barrier", Kind::kBarrier, Arg::kName},
      {"yield", Kind::kYield, Arg::kNone},        {"suspend", Kind::kSuspend, Arg::kNone},
      {"resume", Kind::kResume, Arg::kTask},
      {"queue_work", Kind::kCall, Arg::kCall, CallSpec::Op::kQueueWork},
      {"kthread_queue_work", Kind::kCall, Arg::kCall, CallSpec::Op::kKthreadQueueWork},
      {"submit_job", Kind::kCall, Arg::kCall, CallSpec::Op::kSubmitJob},
      {"rpm", Kind::kCall, Arg::kRpm},
      {"binder_call", Kind::kCall, Arg::kCall, CallSpec::Op::kBinderCall},
      {"cancel_work", Kind::kCall, Arg::kCall, CallSpec::Op::kCancelWork},
      {"flush_work", Kind::kCall, Arg::kCall, CallSpec::Op::kFlushWork},
      {"uclamp", Kind::kUclamp, Arg::kUclamp},
      {"cgroup", Kind::kCgroup, Arg::kCgroup},
      {"cpu_uclamp", Kind::kCpuUclamp, Arg::kCpuUclamp},
      {"cpu_weight", Kind::kCpuWeight, Arg::kCpuWeight},
      {"cpu_idle", Kind::kCpuIdle, Arg::kCpuIdle},
      {"setscheduler", Kind::kSetScheduler, Arg::kSetScheduler},
      {"nice", Kind::kNice, Arg::kNice},
      {"setaffinity", Kind::kSetAffinity, Arg::kCpus},
  };
  return kinds;
}

std::vector<std::string> event_kind_names() {
  std::vector<std::string> names;
  for (const EventKind& k : event_kinds()) names.push_back(k.name);
  return names;
}

const EventKind* find_event_kind(std::string_view name) {
  for (const EventKind& k : event_kinds())
    if (k.name == name) return &k;
  return nullptr;
}

// An event naming something other events or tasks must match, seen while
// reading; checked once every task is read: a `resume`'s task (an error if
// unknown; a `setaffinity`'s too), a `wait`'s condition (a warning if no task signals it), a
// `timer`'s period (a warning if another use gives another period).
struct EventRef {
  EventSpec::Kind kind;
  std::string name;  // kCall: the work item of a work call
  Time period;  // kTimer
  YAML::Node node;
  std::string path;
  CallSpec::Op op = {};  // kCall
  bool flag = false;     // kCall: cancel_work's sync, flush_work's delayed
};

// What reading one task needs to know beyond its own YAML.
struct TaskContext {
  const YamlDoc& doc;
  const PlatformParams& platform;
  const KernelParams& kernel;
  std::vector<EventRef>& refs;
  const CallTargets* targets = nullptr;
};

std::string non_empty_name(const YamlDoc& doc, const YAML::Node& node, const std::string& path, std::string_view what) {
  std::string name = as_string(doc, node, path);
  if (name.empty()) fail(doc, node, path, fmt::format("expected {} name, got an empty string", what));
  return name;
}

EventSpec load_timer(const YamlDoc& doc, const YAML::Node& node, const std::string& path) {
  MapReader r(doc, node, path, timer_params());
  r.require("ref");
  r.require("period");
  EventSpec e;
  e.kind = Kind::kTimer;
  e.name = non_empty_name(doc, *r.find("ref"), r.path("ref"), "a timer");
  e.duration = as_duration(doc, *r.find("period"), r.path("period"), Bound::kPositive);
  std::string mode = "absolute";
  r.read_choice("mode", mode, {"absolute", "relative"});
  e.timer_mode = mode == "relative" ? TimerMode::kRelative : TimerMode::kAbsolute;
  return e;
}

EventSpec load_wait(const YamlDoc& doc, const YAML::Node& node, const std::string& path) {
  MapReader r(doc, node, path, wait_params());
  r.require("ref");
  r.require("mutex");
  EventSpec e;
  e.kind = Kind::kWait;
  e.name = non_empty_name(doc, *r.find("ref"), r.path("ref"), "a condition");
  e.mutex = non_empty_name(doc, *r.find("mutex"), r.path("mutex"), "a mutex");
  return e;
}

// `uclamp: {min: N, max: M}`: sched_setattr() of the clamps at this point
// (uclamp_validate(): 0..1024, min <= max, CONFIG_UCLAMP_TASK).
EventSpec load_uclamp_event(const TaskContext& ctx, const YAML::Node& node, const std::string& path) {
  MapReader r(ctx.doc, node, path, uclamp_event_params());
  if (!ctx.kernel.uclamp)
    fail(ctx.doc, node, path,
         "a uclamp event needs CONFIG_UCLAMP_TASK: set 'kernel: {uclamp: {enabled: true}}' "
         "(sched_setattr() fails with EOPNOTSUPP without it)");
  EventSpec e;
  e.kind = Kind::kUclamp;
  for (const char* key : {"min", "max"})
    if (auto n = r.find(key))
      (std::string_view(key) == "min" ? e.uclamp_min : e.uclamp_max) =
          static_cast<uint32_t>(as_int(ctx.doc, *n, r.path(key), 0, 1024));
  if (!e.uclamp_min && !e.uclamp_max) r.fail_here("expected 'min', 'max' or both (0..1024)");
  if (e.uclamp_min && e.uclamp_max && *e.uclamp_min > *e.uclamp_max)
    fail(ctx.doc, *r.find("min"), r.path("min"),
         fmt::format("min {} exceeds max {} (sched_setattr() rejects it: EINVAL)", *e.uclamp_min, *e.uclamp_max));
  return e;
}

// `setscheduler: {policy: fifo, priority: 10}` / `{policy: other}`:
// sched_setscheduler() (or pthread_setschedparam()) of this task at this
// point. It carries no nice: the task keeps its own (6.12
// _sched_setscheduler() passes PRIO_TO_NICE(p->static_prio)); `nice:` sets
// that.
EventSpec load_setscheduler_event(const YamlDoc& doc, const YAML::Node& node, const std::string& path) {
  MapReader r(doc, node, path, setscheduler_event_params());
  r.require("policy");
  EventSpec e;
  e.kind = Kind::kSetScheduler;
  const YAML::Node policy = *r.find("policy");
  if (policy.IsScalar() && (policy.Scalar() == "SCHED_DEADLINE" || policy.Scalar() == "deadline"))
    fail(doc, policy, r.path("policy"),
         fmt::format("SCHED_DEADLINE is not modelled (valid: {})", join(policy_names(true))));
  const std::string text = as_choice(doc, policy, r.path("policy"), policy_names(true));
  e.policy = *policy_from_name(text, true);
  if (auto n = r.find("priority")) {
    if (is_fair_policy(e.policy)) {
      // sched_param.sched_priority must be 0 for these (EINVAL otherwise).
      if (as_int(doc, *n, r.path("priority"), 0, 99) != 0)
        fail(doc, *n, r.path("priority"),
             fmt::format("priority applies to SCHED_FIFO/SCHED_RR; {} takes 0 or none (sched_setscheduler() "
                         "rejects a non-zero one: EINVAL; a `nice:` event sets the nice)",
                         policy_text(e.policy)));
    } else {
      e.rt_priority = static_cast<int>(as_int(doc, *n, r.path("priority"), 1, 99));
    }
  } else if (!is_fair_policy(e.policy)) {
    r.fail_here(fmt::format("{} needs 'priority: 1..99'", policy_text(e.policy)));
  }
  return e;
}

// `setaffinity: [4, 5]` (this task) or `setaffinity: {task: bg, cpus:
// "0-3"}` (every thread of another task, or of this one):
// sched_setaffinity() at this point.
EventSpec load_setaffinity_event(TaskContext& ctx, const YAML::Node& node, const std::string& path) {
  EventSpec e;
  e.kind = Kind::kSetAffinity;
  if (!node.IsMap()) {
    e.cpus = load_cpu_list(ctx.doc, node, path, ctx.platform.cpus);
    return e;
  }
  MapReader r(ctx.doc, node, path, setaffinity_event_params());
  r.require("cpus");
  e.cpus = load_cpu_list(ctx.doc, *r.find("cpus"), r.path("cpus"), ctx.platform.cpus);
  if (auto n = r.find("task")) {
    e.name = non_empty_name(ctx.doc, *n, r.path("task"), "a task");
    ctx.refs.push_back({e.kind, e.name, Time::zero(), *n, r.path("task")});
  }
  return e;
}

// `yield`, `yield:` and `yield: {}` all mean the same.
void require_no_value(const YamlDoc& doc, const YAML::Node& node, const std::string& path, const std::string& kind) {
  bool empty = node.IsNull() || (node.IsMap() && node.size() == 0);
  if (!empty) fail(doc, node, path, fmt::format("'{}' takes no value (write '{}' or '{}: {{}}'), got {}", kind, kind,
                                                kind, describe_node(node)));
}

EventSpec load_event_value(TaskContext& ctx, const EventKind& k, const YAML::Node& value, const std::string& path) {
  EventSpec e;
  e.kind = k.kind;
  switch (k.arg) {
    case Arg::kDuration: e.duration = as_duration(ctx.doc, value, path, Bound::kNonNegative); break;
    case Arg::kName:
      e.name = non_empty_name(ctx.doc, value, path, "a");
      if (k.kind == Kind::kSignal || k.kind == Kind::kBroad) ctx.refs.push_back({k.kind, e.name, Time::zero(), value, path});
      break;
    case Arg::kTimer:
      e = load_timer(ctx.doc, value, path);
      ctx.refs.push_back({e.kind, e.name, e.duration, value, path});
      break;
    case Arg::kWait:
      e = load_wait(ctx.doc, value, path);
      ctx.refs.push_back({e.kind, e.name, Time::zero(), value, path});
      break;
    case Arg::kNone: require_no_value(ctx.doc, value, path, k.name); break;
    case Arg::kTask:
      e.name = non_empty_name(ctx.doc, value, path, "a task");
      ctx.refs.push_back({e.kind, e.name, Time::zero(), value, path});
      break;
    case Arg::kCall:
      e = load_call_event(ctx.doc, value, path, k.op, ctx.targets, ctx.platform.cpus);
      if (!e.call.work.empty())
        ctx.refs.push_back({e.kind, e.call.work, Time::zero(), value, path, k.op,
                            k.op == CallSpec::Op::kFlushWork ? e.call.delayed : e.call.sync});
      break;
    case Arg::kRpm: e = load_rpm_event(ctx.doc, value, path, ctx.targets); break;
    case Arg::kUclamp: e = load_uclamp_event(ctx, value, path); break;
    case Arg::kCgroup: e = load_cgroup_event(ctx.doc, value, path, ctx.kernel); break;
    case Arg::kCpuUclamp: e = load_cpu_uclamp_event(ctx.doc, value, path, ctx.kernel); break;
    case Arg::kCpuWeight: e = load_cpu_weight_event(ctx.doc, value, path, ctx.kernel); break;
    case Arg::kCpuIdle: e = load_cpu_idle_event(ctx.doc, value, path, ctx.kernel); break;
    case Arg::kSetScheduler: e = load_setscheduler_event(ctx.doc, value, path); break;
    case Arg::kNice: e.nice = static_cast<int>(as_int(ctx.doc, value, path, -20, 19)); break;
    case Arg::kCpus: e = load_setaffinity_event(ctx, value, path); break;
  }
  return e;
}

[[noreturn]] void fail_unknown_event(const YamlDoc& doc, const YAML::Node& at, const std::string& path,
                                     const std::string& name) {
  std::string guess = closest_name(name, event_kind_names());
  fail(doc, at, path,
       fmt::format("unknown event '{}' (valid events: {}){}", name, join(event_kind_names()),
                   guess.empty() ? "" : fmt::format("; did you mean '{}'?", guess)));
}

// An event is a single-key map (`run: 3ms`) or a bare `yield` / `suspend`.
EventSpec load_event(TaskContext& ctx, const YAML::Node& node, const std::string& path) {
  if (node.IsScalar()) {
    const EventKind* k = find_event_kind(node.Scalar());
    if (k == nullptr) fail_unknown_event(ctx.doc, node, path, node.Scalar());
    if (k->arg != Arg::kNone)
      fail(ctx.doc, node, child_path(path, k->name), fmt::format("'{}' needs a value, e.g. '{}: {}'", k->name, k->name,
                                                                 k->arg == Arg::kDuration ? "3ms" : "name"));
    return load_event_value(ctx, *k, YAML::Node(), path);
  }
  if (!node.IsMap() || node.size() != 1)
    fail(ctx.doc, node, path,
         fmt::format("expected one event: a single-key map such as 'run: 3ms' or a bare 'yield', got {}{}",
                     describe_node(node), node.IsMap() ? fmt::format(" with {} keys", node.size()) : ""));
  const YAML::Node key = node.begin()->first, value = node.begin()->second;
  std::string name = key.IsScalar() ? key.Scalar() : describe_node(key);
  const EventKind* k = find_event_kind(name);
  if (k == nullptr) fail_unknown_event(ctx.doc, key, child_path(path, name), name);
  return load_event_value(ctx, *k, value, child_path(path, name));
}

std::vector<EventSpec> load_events(TaskContext& ctx, const YAML::Node& node, const std::string& path) {
  if (!node.IsSequence() || node.size() == 0)
    fail(ctx.doc, node, path, fmt::format("expected a non-empty sequence of events, got {}", describe_node(node)));
  std::vector<EventSpec> events;
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string at = index_path(path, i);
    events.push_back(load_event(ctx, node[i], at));
    events.back().origin = location(ctx.doc, node[i], at);
  }
  return events;
}

// loop: -1 repeats forever; 0 would never run, which is always a mistake.
void read_loop(const MapReader& r, int64_t& out) {
  auto n = r.find("loop");
  if (!n) return;
  out = as_int(r.doc(), *n, r.path("loop"), -1, std::numeric_limits<int64_t>::max());
  if (out == 0) fail(r.doc(), *n, r.path("loop"), "loop 0 never runs (expected -1 for forever, or a count >= 1)");
}

PhaseSpec load_phase(TaskContext& ctx, const YAML::Node& node, const std::string& path) {
  MapReader r(ctx.doc, node, path, phase_params());
  r.require("events");
  std::string label;  // names a phase for the reader of the file only
  r.read("name", label);
  PhaseSpec p;
  read_loop(r, p.loop);
  p.events = load_events(ctx, *r.find("events"), r.path("events"));
  return p;
}

std::vector<PhaseSpec> load_phases(TaskContext& ctx, const MapReader& r) {
  if (r.has("events") == r.has("phases"))
    r.fail_here(r.has("events") ? "give either 'events' or 'phases', not both"
                                : "missing 'events' (one phase) or 'phases' (a sequence of {loop, events})");
  if (auto events = r.find("events")) {
    PhaseSpec p;  // `events:` is shorthand for one phase run once per task loop
    p.events = load_events(ctx, *events, r.path("events"));
    return {p};
  }
  const YAML::Node phases = *r.find("phases");
  if (!phases.IsSequence() || phases.size() == 0)
    fail(ctx.doc, phases, r.path("phases"), fmt::format("expected a non-empty sequence of phases, got {}",
                                                        describe_node(phases)));
  std::vector<PhaseSpec> out;
  for (size_t i = 0; i < phases.size(); ++i) out.push_back(load_phase(ctx, phases[i], index_path(r.path("phases"), i)));
  return out;
}

std::string load_task_name(const MapReader& r) {
  r.require("name");
  const YAML::Node node = *r.find("name");
  std::string name = non_empty_name(r.doc(), node, r.path("name"), "a task");
  // Names end up in traces and in `resume:` references, where blanks would split them.
  auto blank =
      std::find_if(name.begin(), name.end(), [](unsigned char c) { return std::isspace(c) || std::iscntrl(c); });
  if (blank != name.end()) {
    // Shown escaped: a raw control character would garble the terminal
    // (ESC) or cut the message (NUL).
    std::string shown;
    for (unsigned char c : name) shown += std::iscntrl(c) ? fmt::format("\\x{:02x}", c) : std::string(1, static_cast<char>(c));
    fail(r.doc(), node, r.path("name"),
         std::iscntrl(static_cast<unsigned char>(*blank)) && !std::isspace(static_cast<unsigned char>(*blank))
             ? fmt::format("task name '{}' contains a control character", shown)
             : fmt::format("task name '{}' contains whitespace (use - or _ instead)", shown));
  }
  return name;
}

void load_scheduling(const MapReader& r, TaskSpec& t) {
  if (auto n = r.find("policy")) {
    std::vector<std::string> valid = policy_names(true);
    std::string text = as_choice(r.doc(), *n, r.path("policy"), valid);
    t.policy = *policy_from_name(text, true);
  }
  bool fair = is_fair_policy(t.policy);
  if (auto n = r.find("nice")) t.nice = load_nice(r, *n, t.policy, "task");
  if (auto n = r.find("priority")) {
    if (fair)
      fail(r.doc(), *n, r.path("priority"), fmt::format("priority applies to SCHED_FIFO/SCHED_RR; a {} task takes "
                                                        "'nice: -20..19' instead", policy_text(t.policy)));
    t.rt_priority = static_cast<int>(as_int(r.doc(), *n, r.path("priority"), 1, 99));
  } else if (!fair) {
    r.fail_here(fmt::format("a {} task needs 'priority: 1..99'", policy_text(t.policy)));
  }
}

// "0-3,6" -> {0,1,2,3,6}; nullopt and *why on malformed text.
std::optional<std::vector<int>> parse_cpu_list(std::string_view text, std::string* why) {
  std::vector<int> cpus;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = std::min(text.find(',', pos), text.size());
    std::string_view item = text.substr(pos, end - pos);
    size_t dash = item.find('-');
    int first = 0, last = 0;
    auto num = [](std::string_view s, int& v) {
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      return ec == std::errc() && p == s.data() + s.size() && !s.empty();
    };
    bool ok = dash == std::string_view::npos ? num(item, first) && num(item, last)
                                             : num(item.substr(0, dash), first) && num(item.substr(dash + 1), last);
    if (!ok || first > last) {
      *why = fmt::format("'{}' is not a CPU list (expected e.g. \"0-3,6\"): bad item '{}'", text, item);
      return std::nullopt;
    }
    for (int c = first; c <= last; ++c) cpus.push_back(c);
    pos = end + 1;
  }
  return cpus;
}

}  // namespace

std::vector<int> load_cpu_list(const YamlDoc& doc, const YAML::Node& node, const std::string& path,
                               int platform_cpus) {
  std::vector<int> cpus;
  if (node.IsSequence()) {
    for (size_t i = 0; i < node.size(); ++i)
      cpus.push_back(static_cast<int>(as_int(doc, node[i], index_path(path, i), 0, platform_cpus - 1)));
  } else if (node.IsScalar()) {
    std::string why;
    auto parsed = parse_cpu_list(node.Scalar(), &why);
    if (!parsed) fail(doc, node, path, why);
    cpus = *parsed;
    for (int c : cpus)
      if (c >= platform_cpus)
        fail(doc, node, path, fmt::format("CPU {} does not exist (platform.cpus is {}: valid 0..{})", c,
                                          platform_cpus, platform_cpus - 1));
  } else {
    fail(doc, node, path, fmt::format("expected a list of CPU numbers or a string like \"0-3,6\", got {}",
                                      describe_node(node)));
  }
  if (cpus.empty()) fail(doc, node, path, "the affinity must name at least one CPU (omit cpus for all CPUs)");
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

namespace {

void load_slice(const TaskContext& ctx, const MapReader& r, TaskSpec& t) {
  auto n = r.find("slice");
  if (!n) return;
  Time slice = as_duration(ctx.doc, *n, r.path("slice"), Bound::kPositive);
  if (slice < kMinSlice || slice > kMaxSlice)
    fail(ctx.doc, *n, r.path("slice"),
         fmt::format("slice {} is out of range (expected 0.1ms..100ms)", duration_text(slice)));
  if (!is_fair_policy(t.policy))
    fail(ctx.doc, *n, r.path("slice"), fmt::format("slice applies to fair tasks; a {} task has no custom slice",
                                                   policy_text(t.policy)));
  // sched_attr.sched_runtime sets the fair slice from 6.12 (commit 857b158dc5e8).
  if (version_number(ctx.kernel.version) < 612)
    fail(ctx.doc, *n, r.path("slice"),
         fmt::format("kernel {} has no custom slices (sched_attr.sched_runtime sets the slice from 6.12)",
                     ctx.kernel.version));
  t.slice = slice;
}

// prctl(PR_SET_TIMERSLACK) or a write of /proc/PID/timerslack_ns (Android's
// task profiles set 40 ms for background threads: TimerSlackHigh). The
// kernel ignores it for RT tasks; a scenario asking for it is a mistake.
void load_timer_slack(const TaskContext& ctx, const MapReader& r, TaskSpec& t) {
  auto n = r.find("timer_slack");
  if (!n) return;
  const Time slack = as_duration(ctx.doc, *n, r.path("timer_slack"), Bound::kNonNegative);
  if (slack > Time::s(10))
    fail(ctx.doc, *n, r.path("timer_slack"),
         fmt::format("timer_slack {} is out of range (expected 0..10s; 0 = kernel.overheads.timer_slack)",
                     duration_text(slack)));
  if (!is_fair_policy(t.policy))
    fail(ctx.doc, *n, r.path("timer_slack"),
         fmt::format("timer_slack applies to fair tasks; a {} task has none (6.12 __setscheduler_params() zeroes "
                     "it and PR_SET_TIMERSLACK ignores RT tasks)",
                     policy_text(t.policy)));
  t.timer_slack = slack;
}

// sched_setattr() with SCHED_FLAG_UTIL_CLAMP_MIN / _MAX: uclamp_validate()
// (0..1024, min <= max, and CONFIG_UCLAMP_TASK, else EOPNOTSUPP).
void load_uclamp(const TaskContext& ctx, const MapReader& r, TaskSpec& t) {
  for (const char* key : {"uclamp_min", "uclamp_max"}) {
    auto n = r.find(key);
    if (!n) continue;
    if (!ctx.kernel.uclamp)
      fail(ctx.doc, *n, r.path(key),
           fmt::format("{} needs CONFIG_UCLAMP_TASK: set 'kernel: {{uclamp: {{enabled: true}}}}' "
                       "(sched_setattr() fails with EOPNOTSUPP without it)",
                       key));
    const auto v = static_cast<uint32_t>(as_int(ctx.doc, *n, r.path(key), 0, 1024));
    (std::string_view(key) == "uclamp_min" ? t.uclamp_min : t.uclamp_max) = v;
  }
  if (t.uclamp_min && t.uclamp_max && *t.uclamp_min > *t.uclamp_max)
    fail(ctx.doc, *r.find("uclamp_min"), r.path("uclamp_min"),
         fmt::format("uclamp_min {} exceeds uclamp_max {} (sched_setattr() rejects it: EINVAL)", *t.uclamp_min,
                     *t.uclamp_max));
}

TaskSpec load_task(TaskContext& ctx, const YAML::Node& node, const std::string& path) {
  MapReader r(ctx.doc, node, path, task_params());
  TaskSpec t;
  t.name = load_task_name(r);
  r.read("instances", t.instances, 1, kMaxInstances);
  load_scheduling(r, t);
  if (auto n = r.find("cpus")) t.cpus = load_cpu_list(ctx.doc, *n, r.path("cpus"), ctx.platform.cpus);
  load_slice(ctx, r, t);
  load_timer_slack(ctx, r, t);
  load_uclamp(ctx, r, t);
  load_task_cgroup(ctx.doc, r, ctx.kernel, t.cgroup);
  r.read("delay", t.delay, Bound::kNonNegative);
  r.read("start_jitter", t.start_jitter);
  read_loop(r, t.loop);
  r.read("kernel_thread", t.kernel_thread);
  t.phases = load_phases(ctx, r);
  return t;
}

void check_cross_task_refs(const YamlDoc& doc, const YAML::Node& node, const std::string& path,
                           const std::vector<TaskSpec>& tasks, const std::vector<EventRef>& refs) {
  std::vector<std::string> names;
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (std::find(names.begin(), names.end(), tasks[i].name) != names.end())
      fail(doc, node[i]["name"], child_path(index_path(path, i), "name"),
           fmt::format("duplicate task name '{}'", tasks[i].name));
    names.push_back(tasks[i].name);
  }
  // The threads' names (comms), which reports and metrics key on: a task
  // with instances is name-0, name-1, ..., which another task's name may
  // not repeat.
  std::vector<std::pair<std::string, size_t>> comms;  // comm, task index
  for (size_t i = 0; i < tasks.size(); ++i) {
    const TaskSpec& t = tasks[i];
    for (int n = 0; n < t.instances; ++n) {
      const std::string comm = t.thread_name(n);
      auto it = std::find_if(comms.begin(), comms.end(), [&](const auto& c) { return c.first == comm; });
      if (it != comms.end()) {
        const TaskSpec& other = tasks[it->second];
        const bool this_expanded = t.instances > 1;
        const TaskSpec& expanded = this_expanded ? t : other;
        fail(doc, node[i]["name"], child_path(index_path(path, i), "name"),
             fmt::format("task name '{}' is also a thread of task '{}' (instances: {} are named {}-0 .. {}-{})",
                         comm, expanded.name, expanded.instances, expanded.name, expanded.name,
                         expanded.instances - 1));
      }
      comms.emplace_back(comm, i);
    }
  }
  for (const EventRef& ref : refs)
    if ((ref.kind == Kind::kResume || ref.kind == Kind::kSetAffinity) &&
        std::find(names.begin(), names.end(), ref.name) == names.end()) {
      std::string guess = closest_name(ref.name, names);
      fail(doc, ref.node, ref.path,
           fmt::format("{} names unknown task '{}' (tasks: {}){}",
                       ref.kind == Kind::kResume ? "resume" : "setaffinity", ref.name, join(names),
                       guess.empty() ? "" : fmt::format("; did you mean '{}'?", guess)));
    }
  // cancel_work / flush_work name a work item some event queues, of a
  // kind that has the call.
  std::vector<std::string> queued, kthread_works;  // work items queued by events; those by kthread_queue_work
  for (const EventRef& o : refs) {
    if (o.kind != Kind::kCall || (o.op != CallSpec::Op::kQueueWork && o.op != CallSpec::Op::kKthreadQueueWork))
      continue;
    if (std::find(queued.begin(), queued.end(), o.name) == queued.end()) queued.push_back(o.name);
    if (o.op == CallSpec::Op::kKthreadQueueWork) kthread_works.push_back(o.name);
  }
  for (const EventRef& ref : refs) {
    if (ref.kind != Kind::kCall || (ref.op != CallSpec::Op::kCancelWork && ref.op != CallSpec::Op::kFlushWork))
      continue;
    const char* call = ref.op == CallSpec::Op::kCancelWork ? "cancel_work" : "flush_work";
    const bool kthread = std::find(kthread_works.begin(), kthread_works.end(), ref.name) != kthread_works.end();
    if (std::find(queued.begin(), queued.end(), ref.name) == queued.end()) {
      std::string guess = closest_name(ref.name, queued);
      fail(doc, ref.node, ref.path,
           fmt::format("{} names work item '{}', which no queue_work or kthread_queue_work event queues (work items: "
                       "{}){}",
                       call, ref.name, queued.empty() ? "none" : join(queued),
                       guess.empty() ? "" : fmt::format("; did you mean '{}'?", guess)));
    }
    if (kthread && ref.op == CallSpec::Op::kFlushWork && ref.flag)
      fail(doc, ref.node, ref.path,
           fmt::format("flush_work: '{}' is a kthread_work (kthread_queue_work), which has kthread_flush_work() "
                       "only (no delayed form): drop delayed",
                       ref.name));
    if (kthread && ref.op == CallSpec::Op::kCancelWork && !ref.flag)
      fail(doc, ref.node, ref.path,
           fmt::format("cancel_work: '{}' is a kthread_work (kthread_queue_work), which has only "
                       "kthread_cancel_(delayed_)work_sync(): write sync: true",
                       ref.name));
  }
  // Likely mistakes that still run (rt-app runs them too): warned once each.
  std::vector<std::string> warned;
  auto once = [&](const std::string& key) {
    if (std::find(warned.begin(), warned.end(), key) != warned.end()) return false;
    warned.push_back(key);
    return true;
  };
  for (const EventRef& ref : refs) {
    if (ref.kind == Kind::kWait &&
        std::none_of(refs.begin(), refs.end(), [&](const EventRef& o) {
          return (o.kind == Kind::kSignal || o.kind == Kind::kBroad) && o.name == ref.name;
        }) &&
        once("wait:" + ref.name))
      warn(doc, ref.node, ref.path,
           fmt::format("no task signals or broadcasts condition '{}': a task waiting on it sleeps for good", ref.name));
    if (ref.kind == Kind::kTimer) {
      auto other = std::find_if(refs.begin(), refs.end(), [&](const EventRef& o) {
        return o.kind == Kind::kTimer && o.name == ref.name && o.period != ref.period;
      });
      if (other != refs.end() && once("timer:" + ref.name))
        warn(doc, ref.node, ref.path,
             fmt::format("timer '{}' is used with periods {} and {}: each use advances the shared expiry by its own "
                         "period (rt-app's semantics), which is rarely what is meant",
                         ref.name, format_time(ref.period), format_time(other->period)));
    }
  }
}

}  // namespace

const std::vector<ParamDecl>& task_params() {
  static const std::vector<ParamDecl> decls = [] {
    const TaskSpec d;
    return std::vector<ParamDecl>{
        {"name", "string, no blanks", "required", "task name; instances are called name-0, name-1, ..."},
        {"instances", fmt::format("int 1..{}", kMaxInstances), std::to_string(d.instances), "identical copies"},
        {"policy", join(policy_names(false), " | ") + " (or other, normal, batch, idle, fifo, rr)", "SCHED_OTHER",
         "scheduling policy"},
        {"nice", "int -20..19", std::to_string(d.nice), "nice value (SCHED_OTHER/BATCH/IDLE; an RT policy accepts 0)"},
        {"priority", "int 1..99", "required for FIFO/RR", "RT priority (SCHED_FIFO/SCHED_RR only)"},
        {"cpus", "list of int, or \"0-3,6\"", "all CPUs", "affinity; each CPU < platform.cpus"},
        {"slice", "duration 0.1ms..100ms", "base_slice", "custom EEVDF slice (sched_attr.sched_runtime, 6.12+)"},
        {"timer_slack", "duration 0..10s", "kernel.overheads.timer_slack",
         "slack of its sleeps (prctl(PR_SET_TIMERSLACK); 0 = the default; fair tasks only)"},
        {"uclamp_min", "int 0..1024", "0 (RT: kernel.uclamp.min_rt_default)",
         "utilization floor (sched_attr.sched_util_min; needs kernel.uclamp.enabled)"},
        {"uclamp_max", "int 0..1024", "1024", "utilization cap (sched_attr.sched_util_max; needs kernel.uclamp.enabled)"},
        {"cgroup", "a cgroups[] name, or /", "/", "the cpu cgroup it starts in (its clamps apply: uclamp_tg_restrict())"},
        {"delay", "duration", duration_text(d.delay), "start delay; the task is then forked from CPU 0 (assumption: its parent runs there) and placed by the fork path"},
        {"start_jitter", "bool", d.start_jitter ? "true" : "false",
         "false: an experiment's start_jitter leaves its start as it is (a task in phase with a device's "
         "clock, e.g. the display's animations, which are not jittered)"},
        {"loop", "int, -1 = forever", std::to_string(d.loop), "repeats of the whole phase list"},
        {"kernel_thread", "bool", d.kernel_thread ? "true" : "false",
         "runs in kernel mode (matters for preempt none/voluntary)"},
        {"events", "list of events", "-", "one phase, looped once per task loop (exclusive with phases)"},
        {"phases", "list of phases", "-", "phases run in order (exclusive with events)"},
    };
  }();
  return decls;
}

const std::vector<ParamDecl>& phase_params() {
  static const std::vector<ParamDecl> decls = {
      {"name", "string", "-", "label for the reader; not used by the model"},
      {"loop", "int, -1 = forever", std::to_string(PhaseSpec{}.loop), "repeats of the event list"},
      {"events", "list of events", "required", "the events, in order"},
  };
  return decls;
}

const std::vector<ParamDecl>& event_params() {
  static const std::vector<ParamDecl> decls = {
      {"run", "duration", "-", "work: CPU time at capacity 1024 and the highest frequency"},
      {"runtime", "duration", "-", "busy until this much wall time has passed"},
      {"sleep", "duration", "-", "sleep relative to now"},
      {"iowait", "duration", "-",
       "io_schedule(): sleep in D until an I/O completes `duration` later (its interrupt on the CPU the task "
       "slept on; schedutil's iowait boost, menu's nr_iowait)"},
      {"timer", "map (see timer)", "-", "wait for the next expiry of the periodic timer `ref`"},
      {"lock", "mutex name", "-", "lock a mutex (rt_mutex with PI when pi_enabled)"},
      {"unlock", "mutex name", "-", "unlock a mutex"},
      {"wait", "map (see wait)", "-", "wait on condition `ref`, releasing `mutex` meanwhile"},
      {"signal", "condition name", "-", "wake one waiter of the condition"},
      {"broad", "condition name", "-", "wake every waiter of the condition"},
      {"barrier", "barrier name", "-", "wait until every task using the barrier has arrived"},
      {"yield", "none", "-", "sched_yield(); write `yield` or `yield: {}`"},
      {"suspend", "none", "-", "sleep until another task resumes this one; `suspend` or `suspend: {}`"},
      {"resume", "task name", "-", "wake the named task from its suspend (the task must exist)"},
      {"uclamp", "map (see uclamp)", "-",
       "sched_setattr() of this task's clamps from here on (needs kernel.uclamp.enabled)"},
      {"cgroup", "cgroups[] name, or /", "-",
       "this task moves itself to that cpu cgroup (cgroup.procs write; sched_move_task())"},
      {"cpu_uclamp", "map (see cpu_uclamp)", "-",
       "write a cpu cgroup's cpu.uclamp.min / .max (as a power HAL does; needs kernel.uclamp.enabled)"},
      {"cpu_weight", "map (see cpu_weight)", "-",
       "write a weighted cpu cgroup's cpu.weight or cpu.shares at run time (sched_group_set_shares())"},
      {"cpu_idle", "map (see cpu_idle)", "-",
       "write a cpu cgroup's cpu.idle at run time (sched_group_set_idle())"},
      {"setscheduler", "map (see setscheduler)", "-",
       "sched_setscheduler() of this task from here on: a new policy and RT priority, its nice kept "
       "(__sched_setscheduler(); never below the priority of its top PI waiter)"},
      {"nice", "int -20..19", "-",
       "setpriority() of this task's nice from here on (set_user_nice(); an RT task only records it)"},
      {"setaffinity", "list of int, or \"0-3,6\"; or map (see setaffinity)", "-",
       "sched_setaffinity() of this task (or, as a map with `task`, of every thread of that task) from here on: "
       "a task running on a CPU it may no longer use is moved by that CPU's stopper once it can be preempted "
       "(the caller of another task's change sleeps until then; its own change preempts it, under PREEMPT_NONE "
       "it sleeps); a queued one is moved, a sleeping one wakes within its new mask"},
      {"queue_work", "map (see queue_work)", "-", "queue a work item on a workqueue (queue_work_on / queue_delayed_work / mod_delayed_work)"},
      {"kthread_queue_work", "map (see kthread_queue_work)", "-", "queue a work item on a kthread_worker (kthread_queue_work / kthread_queue_delayed_work / kthread_mod_delayed_work)"},
      {"cancel_work", "map (see cancel_work)", "-", "take a queued work item back (cancel_(delayed_)work), or also wait for its execution (cancel_(delayed_)work_sync, kthread_cancel_(delayed_)work_sync)"},
      {"flush_work", "map (see flush_work)", "-", "wait for a work item's execution (flush_work / flush_delayed_work / kthread_flush_work)"},
      {"submit_job", "map (see submit_job)", "-", "push a GPU job to a DRM scheduler entity (the submit ioctl)"},
      {"rpm", "map (see rpm)", "-", "a pm_runtime_*() call on a device (get_sync may sleep in D)"},
      {"binder_call", "map (see binder_call)", "-",
       "a binder transaction to a server process (synchronous: sleeps until the reply)"},
  };
  return decls;
}

const std::vector<ParamDecl>& timer_params() {
  static const std::vector<ParamDecl> decls = {
      {"ref", "string", "required", "timer name; events with the same ref share one timer"},
      {"period", "duration > 0", "required", "timer period"},
      {"mode", "absolute | relative", "absolute",
       "absolute: expiries stay on the grid set at first use; "
       "relative: an expiry already past restarts the grid from now"},
  };
  return decls;
}

const std::vector<ParamDecl>& uclamp_event_params() {
  static const std::vector<ParamDecl> decls = {
      {"min", "int 0..1024", "unchanged", "new uclamp_min (sched_attr.sched_util_min)"},
      {"max", "int 0..1024", "unchanged", "new uclamp_max (sched_attr.sched_util_max)"},
  };
  return decls;
}

const std::vector<ParamDecl>& setscheduler_event_params() {
  static const std::vector<ParamDecl> decls = {
      {"policy", join(policy_names(false), " | ") + " (or other, normal, batch, idle, fifo, rr)", "required",
       "the new policy"},
      {"priority", "int 1..99 (0 for the other policies)", "required for SCHED_FIFO/RR", "the new RT priority"},
  };
  return decls;
}

const std::vector<ParamDecl>& setaffinity_event_params() {
  static const std::vector<ParamDecl> decls = {
      {"cpus", "list of int, or \"0-3,6\"", "required", "the new mask; each CPU < platform.cpus"},
      {"task", "tasks[] name", "the calling thread",
       "the task whose threads (every instance; the caller's own task: the caller included) get the mask"},
  };
  return decls;
}

const std::vector<ParamDecl>& wait_params() {
  static const std::vector<ParamDecl> decls = {
      {"ref", "string", "required", "condition name"},
      {"mutex", "string", "required", "mutex held around the wait"},
  };
  return decls;
}

std::vector<TaskSpec> load_tasks(const YamlDoc& doc, const YAML::Node& node, const std::string& path,
                                 const PlatformParams& platform, const KernelParams& kernel,
                                 const CallTargets* targets) {
  if (!node.IsSequence() || node.size() == 0)
    fail(doc, node, path, fmt::format("expected a non-empty sequence of tasks, got {}", describe_node(node)));
  std::vector<EventRef> refs;
  TaskContext ctx{doc, platform, kernel, refs, targets};
  std::vector<TaskSpec> tasks;
  for (size_t i = 0; i < node.size(); ++i) tasks.push_back(load_task(ctx, node[i], index_path(path, i)));
  check_cross_task_refs(doc, node, path, tasks, refs);
  return tasks;
}

}  // namespace schedlab::config
