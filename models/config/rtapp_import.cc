// rt-app JSON -> ScenarioParams: the file's structure (global, tasks,
// phases, scheduling keys); rtapp_events.cc reads the events. Follows
// rt-app's grammar (doc/tutorial.txt, src/rt-app_parse_config.c): values
// are microseconds, a task without "phases" is one phase. Whatever the
// model cannot represent becomes a warning naming the key; keys that only
// steer rt-app's own logging are accepted with no effect (both lists are in
// configs/README.md); structural mistakes are ConfigErrors.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <optional>
#include <set>
#include <string_view>

#include "models/config/config.h"
#include "models/config/diagnostics.h"
#include "models/config/policy_names.h"
#include "models/config/rtapp_context.h"
#include "sim/names.h"

namespace schedlab {
namespace config::rtapp {
namespace {

constexpr int kMaxInstances = 4096;
constexpr int kMaxCpu = 255;
constexpr int kDefaultRtPriority = 10;  // rt-app's DEFAULT_THREAD_PRIORITY

// Keys that only affect rt-app's logging, calibration or memory handling.
const std::set<std::string> kNoEffectGlobals = {"calibration", "logdir",    "log_basename", "log_size",
                                                "lock_pages",  "ftrace",    "gnuplot",      "io_device",
                                                "mem_buffer_size", "cumulative_slack"};
// Scheduling attributes the model has no counterpart for.
const std::set<std::string> kUnmodelledKeys = {"dl-runtime",
                                               "dl-period", "dl-deadline", "period",    "deadline",
                                               "nodes_membind", "membind_nodes"};

// What a key at task or phase level is.
enum class Role { kEvent, kLoop, kSched, kTaskOnly, kUnmodelled, kUnknown };

Role role_of(const std::string& key) {
  // Before events: "membind_nodes" would otherwise match the "mem" prefix.
  if (kUnmodelledKeys.count(key)) return Role::kUnmodelled;
  if (key == "loop") return Role::kLoop;
  if (key == "policy" || key == "priority" || key == "cpus" || key == "util_min" || key == "util_max" ||
      key == "taskgroup")
    return Role::kSched;
  if (key == "instance" || key == "delay" || key == "phases") return Role::kTaskOnly;
  if (!event_kind_of(key).empty()) return Role::kEvent;
  return Role::kUnknown;
}

// The keys role_of() knows, for "did you mean" (events by their prefix).
const std::vector<std::string>& known_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k = {"loop",     "policy",   "priority", "cpus",  "util_min",
                                  "util_max", "taskgroup", "instance", "delay", "phases"};
    k.insert(k.end(), rtapp_event_prefixes().begin(), rtapp_event_prefixes().end());
    return k;
  }();
  return keys;
}

class Importer {
 public:
  Importer(const Value& root, const std::string& file) : root_(root), file_(file), ctx_(file, out_) {}

  ScenarioParams run() {
    out_.source = file_;
    out_.pi_enabled = false;  // rt-app's default, unlike a YAML scenario's
    if (!root_.is(Type::kObject)) ctx_.fail(root_, "", expected("an object with \"tasks\"", root_));
    read_root();
    unify_timer_modes(ctx_);
    out_.platform.cpus = std::max(out_.platform.cpus, max_cpu_ + 1);
    return std::move(out_);
  }

 private:
  // ---- top level and global ----------------------------------------------
  void read_root() {
    const Value* tasks = root_.find("tasks");
    if (tasks == nullptr) ctx_.fail(root_, "", "missing required key \"tasks\"");
    if (const Value* global = root_.find("global")) read_global(*global);
    else ctx_.warn(root_, "global", "absent: rt-app's default duration -1 runs until every task ends; " +
                                        keeps_default_duration());
    for (const Member& m : root_.members)
      if (m.key != "global" && m.key != "tasks" && m.key != "resources")  // resources: rt-app creates them on use
        ctx_.warn(m, m.key, "unknown top-level key, ignored");
    warn_duplicates(root_, "");
    read_tasks(*tasks);
  }

  std::string keeps_default_duration() const {
    return "simulating the scenario default " + duration_text(out_.duration) + " (or run --duration)";
  }

  // Every key of `global` rt-app reads, for "did you mean".
  static const std::vector<std::string>& global_keys() {
    static const std::vector<std::string> keys = [] {
      std::vector<std::string> k = {"duration", "default_policy", "pi_enabled"};
      k.insert(k.end(), kNoEffectGlobals.begin(), kNoEffectGlobals.end());
      return k;
    }();
    return keys;
  }

  void read_global(const Value& g) {
    if (!g.is(Type::kObject)) ctx_.fail(g, "global", expected("an object", g));
    for (const Member& m : g.members) {
      std::string path = child("global", m.key);
      if (m.key == "duration") read_duration(m.value, path);
      else if (m.key == "default_policy") default_policy_ = ctx_.get_policy(m.value, path);
      else if (m.key == "pi_enabled") out_.pi_enabled = ctx_.get_bool(m.value, path);
      else if (!kNoEffectGlobals.count(m.key)) ctx_.warn(m, path, "unknown global key, ignored" + did_you_mean(m.key, global_keys()));
    }
    if (g.find("duration") == nullptr)
      ctx_.warn(g, "global.duration", "absent: rt-app runs until every task ends; " + keeps_default_duration());
    warn_duplicates(g, "global");
  }

  void read_duration(const Value& v, const std::string& path) {
    int64_t seconds = ctx_.get_int(v, path, -1, 365LL * 24 * 3600);
    if (seconds == 0) ctx_.fail(v, path, "0 s would simulate nothing (expected seconds > 0, or -1)");
    if (seconds > 0) out_.duration = Time::s(seconds);
    else ctx_.warn(v, path, "-1 (run until every task ends) cannot be simulated open-ended; " +
                                keeps_default_duration());
  }

  // json-c keeps the last of repeated keys; say so for everything but
  // events, whose repetition is the point (workgen renames them run1, ...).
  void warn_duplicates(const Value& obj, const std::string& path) {
    std::set<std::string> seen;
    for (const Member& m : obj.members)
      if (role_of(m.key) != Role::kEvent && !seen.insert(m.key).second)
        ctx_.warn(m, child(path, m.key), "repeated key: the last one is used");
  }

  // ---- tasks -------------------------------------------------------------
  void read_tasks(const Value& tasks) {
    if (!tasks.is(Type::kObject)) ctx_.fail(tasks, "tasks", expected("an object of task name: {...}", tasks));
    std::set<std::string> names;
    for (const Member& m : tasks.members) {
      if (!names.insert(m.key).second) ctx_.fail(m, child("tasks", m.key), fmt::format("duplicate task '{}'", m.key));
      read_task(m);
    }
    if (out_.tasks.empty()) ctx_.fail(tasks, "tasks", "no task that the model can run");
  }

  void check_task_name(const Member& m, const std::string& path) const {
    if (m.key.empty()) ctx_.fail(m, path, "a task needs a non-empty name");
    for (unsigned char c : m.key)
      if (std::isspace(c) || std::iscntrl(c))
        ctx_.fail(m, path,
                  fmt::format("task name '{}' contains {}, which task names cannot carry", m.key,
                              std::isspace(c) ? "whitespace" : "a control character"));
  }

  void read_task(const Member& m) {
    taskgroup_seen_ = false;
    std::string path = child("tasks", m.key);
    check_task_name(m, path);
    const Value& obj = m.value;
    if (!obj.is(Type::kObject)) ctx_.fail(obj, path, expected("a task object", obj));
    TaskSpec t;
    t.name = m.key;
    t.policy = default_policy_;
    if (!is_fair_policy(t.policy)) t.rt_priority = kDefaultRtPriority;
    apply_sched(obj, path, t);
    if (!read_task_keys(obj, path, t)) return;
    if (const Value* phases = obj.find("phases")) read_phased(obj, *phases, path, t);
    else read_single_phase(obj, path, t);
    warn_duplicates(obj, path);
    if (t.phases.empty()) {
      ctx_.warn(m, path, "no phase has an event the model can run; task skipped");
      return;
    }
    warn_shared_unique_timers(m, path, t);
    out_.tasks.push_back(std::move(t));
  }

  // rt-app gives every thread of a task its own "unique" timer; the model
  // scopes timers by name only, so the instances of one task share it.
  void warn_shared_unique_timers(const Member& m, const std::string& path, const TaskSpec& t) {
    if (t.instances <= 1) return;
    std::set<std::string> names;
    for (const PhaseSpec& p : t.phases)
      for (const EventSpec& e : p.events)
        if (e.kind == EventSpec::Kind::kTimer && e.name.size() > t.name.size() &&
            e.name.compare(e.name.size() - t.name.size() - 1, std::string::npos, "@" + t.name) == 0)
          names.insert(e.name);
    for (const std::string& name : names)
      ctx_.warn(m, path, fmt::format("timer '{}' is per thread in rt-app but shared by the {} instances here", name,
                                     t.instances));
  }

  // instance and delay, and warnings for keys only rt-app understands.
  // Returns false when the task creates no thread.
  bool read_task_keys(const Value& obj, const std::string& path, TaskSpec& t) {
    for (const Member& m : obj.members) {
      std::string key_path = child(path, m.key);
      if (m.key == "instance") {
        int64_t n = ctx_.get_int(m.value, key_path, 0, kMaxInstances);
        if (n == 0) {
          ctx_.warn(m, key_path, "instance 0 creates no thread (only a fork event starts it, which is not "
                                 "modelled); task skipped");
          return false;
        }
        t.instances = static_cast<int>(n);
      } else if (m.key == "delay") {
        t.delay = ctx_.get_usec(m.value, key_path);
      } else {
        warn_unmodelled(m, key_path, /*task_level=*/true);
      }
    }
    return true;
  }

  void warn_unmodelled(const Member& m, const std::string& path, bool task_level) {
    Role role = role_of(m.key);
    if (role == Role::kUnmodelled) ctx_.warn(m, path, "not modelled, ignored");
    else if (role == Role::kUnknown) ctx_.warn(m, path, "unknown key, ignored" + did_you_mean(m.key, known_keys()));
    else if (role == Role::kTaskOnly && !task_level)
      ctx_.warn(m, path, "only meaningful on a task, ignored in a phase");
  }

  // Policy, priority and affinity set in `obj` (a task, or its only phase).
  void apply_sched(const Value& obj, const std::string& path, TaskSpec& t) {
    if (const Value* policy = obj.find("policy")) {
      t.policy = ctx_.get_policy(*policy, child(path, "policy"));
      // A policy without a priority starts from rt-app's default for it.
      t.nice = 0;
      t.rt_priority = is_fair_policy(t.policy) ? 0 : kDefaultRtPriority;
    }
    // rt-app's "priority" is the nice value for fair policies, the RT priority otherwise.
    if (const Value* priority = obj.find("priority")) {
      std::string key_path = child(path, "priority");
      if (is_fair_policy(t.policy)) t.nice = static_cast<int>(ctx_.get_int(*priority, key_path, -20, 19));
      else t.rt_priority = static_cast<int>(ctx_.get_int(*priority, key_path, 1, 99));
    }
    if (const Value* cpus = obj.find("cpus")) t.cpus = read_cpus(*cpus, child(path, "cpus"));
    read_util_clamps(obj, path, t.uclamp_min, t.uclamp_max);
    // check_taskgroup_policy_dep(): the task's taskgroup (from the task,
    // or its lone phase) against the policy in effect, which a lone phase
    // may set after the task's own.
    const Value* tg = taskgroup_of(obj, path);
    if (tg) t.cgroup = read_taskgroup(*tg, child(path, "taskgroup"));
    check_taskgroup_policy(obj, path, tg, t.policy);
  }

  // The "taskgroup" key of `obj`, or nullptr when absent or "" (rt-app's
  // parse_taskgroup_data(): an empty name is no taskgroup).
  const Value* taskgroup_of(const Value& obj, const std::string& path) const {
    const Value* v = obj.find("taskgroup");
    if (!v || ctx_.get_string(*v, child(path, "taskgroup"), /*allow_empty=*/true).empty()) return nullptr;
    return v;
  }

  // "taskgroup": "/a/b" (rt-app_taskgroups.c): a cpu cgroup of cgroup v1's
  // cpu controller, each level made with mkdir (a new group's cpu.shares is
  // 1024: a level of the fair hierarchy), the thread attached through the
  // group's `tasks` file (sched_move_task()). Returns the model's name of
  // the group, its path without the leading '/' ("a/b"; "" for "/", the
  // root group), creating the levels not made yet.
  std::string read_taskgroup(const Value& v, const std::string& path) {
    taskgroup_seen_ = true;
    const std::string text = ctx_.get_string(v, path);
    if (text.empty() || text[0] != '/')
      ctx_.fail(v, path, fmt::format("taskgroup '{}' must start with '/' (rt-app refuses it)", text));
    // rt-app keeps one entry per distinct taskgroup string, at most
    // max_nbr_tgs = 32 (rt-app_taskgroups.c alloc_taskgroup()).
    taskgroup_strings_.insert(text);
    if (taskgroup_strings_.size() > 32)
      ctx_.fail(v, path, "a 33rd taskgroup: rt-app allows at most 32 (max_nbr_tgs)");
    std::string name;
    size_t i = 0;
    while (i < text.size()) {
      while (i < text.size() && text[i] == '/') ++i;  // rt-app's mkdir loop skips repeated slashes
      if (i == text.size()) break;
      const size_t end = std::min(text.find('/', i), text.size());
      const std::string_view part(text.data() + i, end - i);
      if (part == "." || part == "..")
        ctx_.fail(v, path, fmt::format("taskgroup '{}': '.' and '..' are not resolved (write the group's own path)",
                                       text));
      const std::string parent = name;
      if (!name.empty()) name.push_back('/');
      name.append(text, i, end - i);
      auto& groups = out_.kernel.cgroups;
      if (std::none_of(groups.begin(), groups.end(), [&](const KernelParams::CpuCgroup& g) { return g.name == name; })) {
        KernelParams::CpuCgroup g;
        g.name = name;
        g.parent = parent;
        g.cpu_shares = 1024;  // a new cgroup v1 cpu group's cpu.shares
        groups.push_back(g);
      }
      i = end;
    }
    return name;
  }

  // check_taskgroup_policy_dep() (rt-app_parse_config.c) after `obj` (a
  // task or a phase, whose taskgroup is `tg`) set its attributes: rt-app
  // refuses a task in a taskgroup ("/" included) while its policy is
  // SCHED_FIFO or SCHED_RR. Named at the key that made it so.
  void check_taskgroup_policy(const Value& obj, const std::string& path, const Value* tg, Policy policy) {
    const Value* at = tg ? tg : obj.find("policy");
    if (taskgroup_seen_ && at && !is_fair_policy(policy))
      ctx_.fail(*at, child(path, tg ? "taskgroup" : "policy"),
                fmt::format("a taskgroup with {} (rt-app: \"No taskgroup support for policy\"; only SCHED_OTHER, "
                            "SCHED_BATCH and SCHED_IDLE tasks may be in one)",
                            policy_text(policy)));
  }

  // util_min / util_max of `obj`, which rt-app sets with sched_setattr()'s
  // util clamps (uclamp_validate(): 0..1024, min <= max): the imported
  // kernel has CONFIG_UCLAMP_TASK then.
  void read_util_clamps(const Value& obj, const std::string& path, std::optional<uint32_t>& min,
                        std::optional<uint32_t>& max) {
    for (const char* key : {"util_min", "util_max"}) {
      const Value* v = obj.find(key);
      if (!v) continue;
      (std::string_view(key) == "util_min" ? min : max) =
          static_cast<uint32_t>(ctx_.get_int(*v, child(path, key), 0, 1024));
      out_.kernel.uclamp = true;
    }
    if (min && max && *min > *max)
      ctx_.fail(*obj.find("util_min"), child(path, "util_min"),
                fmt::format("util_min {} exceeds util_max {} (sched_setattr() rejects it: EINVAL)", *min, *max));
  }

  std::vector<int> read_cpus(const Value& v, const std::string& path) {
    if (!v.is(Type::kArray) || v.items.empty()) ctx_.fail(v, path, expected("a non-empty array of CPU numbers", v));
    std::vector<int> cpus;
    for (size_t i = 0; i < v.items.size(); ++i) {
      int cpu = static_cast<int>(ctx_.get_int(v.items[i], fmt::format("{}[{}]", path, i), 0, kMaxCpu));
      cpus.push_back(cpu);
      max_cpu_ = std::max(max_cpu_, cpu);  // rt-app files do not describe the machine
    }
    std::sort(cpus.begin(), cpus.end());
    cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
    return cpus;
  }

  // loop: -1 forever, >= 1 a count; 0 would skip the body entirely.
  int64_t read_loop(const Value& v, const std::string& path) const {
    int64_t loop = ctx_.get_int(v, path, -1, std::numeric_limits<int32_t>::max());
    if (loop == 0) ctx_.fail(v, path, "loop 0 never runs (expected -1 for forever, or a count >= 1)");
    return loop;
  }

  // ---- phases ------------------------------------------------------------
  // No "phases": the task object is its only phase. rt-app then reads "loop"
  // as that phase's count and runs the task once, or forever if loop is absent.
  void read_single_phase(const Value& obj, const std::string& path, TaskSpec& t) {
    PhaseSpec p;
    t.loop = -1;
    if (const Value* loop = obj.find("loop")) {
      p.loop = read_loop(*loop, child(path, "loop"));
      t.loop = 1;
    }
    if (read_events(obj, path, t.name, p.events)) t.phases.push_back(std::move(p));
  }

  void read_phased(const Value& obj, const Value& phases, const std::string& path, TaskSpec& t) {
    std::string phases_path = child(path, "phases");
    if (!phases.is(Type::kObject) || phases.members.empty())
      ctx_.fail(phases, phases_path, expected("a non-empty object of phase name: {...}", phases));
    if (const Value* loop = obj.find("loop")) t.loop = read_loop(*loop, child(path, "loop"));
    for (const Member& m : obj.members)
      if (role_of(m.key) == Role::kEvent)
        ctx_.warn(m, child(path, m.key), "event beside \"phases\" is ignored (rt-app reads only the phases)");
    bool only_phase = phases.members.size() == 1;
    const std::vector<std::optional<EventSpec>> affinity =
        only_phase ? std::vector<std::optional<EventSpec>>(1) : phase_affinities(phases, phases_path, t);
    Policy policy = t.policy;  // the policy in effect as each phase begins (first pass)
    for (size_t i = 0; i < phases.members.size(); ++i) {
      const Member& m = phases.members[i];
      read_phase(m, child(phases_path, m.key), only_phase, t, policy, affinity[i]);
    }
    // Attribute changes alone would loop in no time: such a task is one
    // whose phases were all skipped.
    const bool any_events = std::any_of(t.phases.begin(), t.phases.end(), [](const PhaseSpec& ph) {
      return std::any_of(ph.events.begin(), ph.events.end(), [](const EventSpec& e) {
        return e.kind != EventSpec::Kind::kSetScheduler && e.kind != EventSpec::Kind::kNice &&
               e.kind != EventSpec::Kind::kUclamp && e.kind != EventSpec::Kind::kCgroup &&
               e.kind != EventSpec::Kind::kSetAffinity;
      });
    });
    if (!any_events) t.phases.clear();
  }

  // rt-app's set_thread_affinity() as each phase of several begins
  // (rt-app.c): the phase's "cpus", else the task's, else the thread's
  // starting mask (every CPU), set by pthread_setaffinity_np() when it
  // differs from the mask rt-app set last. The masks being fixed, the
  // setaffinity event is written where the mask changes: from the task's
  // start (the task-level cpus, which the model's task starts with) into
  // the first phase, and from each phase into the next, including from
  // the last back into the first when the phases repeat. Empty = every CPU.
  // The events carry the place of the phase's "cpus" (or of the phase,
  // when it takes the task's), for errors found when the run is built.
  std::vector<std::optional<EventSpec>> phase_affinities(const Value& phases, const std::string& phases_path,
                                                         const TaskSpec& t) {
    std::vector<std::vector<int>> masks;
    std::vector<std::string> origins;
    for (const Member& m : phases.members) {
      const Value* cpus = m.value.is(Type::kObject) ? m.value.find("cpus") : nullptr;
      const std::string phase_path = child(phases_path, m.key);
      masks.push_back(cpus ? read_cpus(*cpus, child(phase_path, "cpus")) : t.cpus);
      origins.push_back(cpus ? format_location(ctx_.file(), cpus->line, cpus->column, child(phase_path, "cpus"))
                             : format_location(ctx_.file(), m.line, m.column, phase_path));
    }
    std::vector<std::optional<EventSpec>> events(masks.size());
    for (size_t i = 0; i < masks.size(); ++i) {
      const bool from_start = i == 0 && masks[0] != t.cpus;
      const bool from_previous = i > 0 ? masks[i] != masks[i - 1] : t.loop != 1 && masks[0] != masks.back();
      if (!from_start && !from_previous) continue;
      EventSpec set;
      set.kind = EventSpec::Kind::kSetAffinity;
      set.cpus = masks[i];
      set.origin = origins[i];
      events[i] = std::move(set);
    }
    return events;
  }

  // A later phase's policy / priority as rt-app's set_thread_param()
  // applies them when the phase begins (rt-app.c; parse_sched_data() in
  // rt-app_parse_config.c): a phase without "policy" keeps the policy in
  // effect ("same", resolved once, at its first application), and without
  // "priority" changes nothing unless a policy is given (then rt-app's
  // default: 10 for SCHED_FIFO/RR, nice 0 otherwise). SCHED_FIFO/RR:
  // pthread_setschedparam(), i.e. sched_setscheduler(); SCHED_OTHER:
  // sched_setscheduler() when the policy changes, then setpriority() of the
  // nice; SCHED_IDLE: sched_setscheduler() only (rt-app before c9d45bd,
  // 2025, which changed how the nice is set). The setscheduler event is
  // written for every application, where rt-app skips a repeat of what it
  // applied last, and calls sched_setscheduler() for a fair policy only on
  // a policy change: the model's call changes nothing then (its early
  // return; set_user_nice() of the same nice likewise).
  void read_phase_sched(const Value& obj, const std::string& path, Policy& policy, std::vector<EventSpec>& out) {
    const Value* policy_v = obj.find("policy");
    const Value* priority_v = obj.find("priority");
    if (!policy_v && !priority_v) return;
    if (policy_v) policy = ctx_.get_policy(*policy_v, child(path, "policy"));
    const bool fair = is_fair_policy(policy);
    int priority = fair ? 0 : kDefaultRtPriority;
    if (priority_v) {
      // Checked against the policy it applies to, named (for a phase
      // without "policy", the one in effect).
      const std::string key_path = child(path, "priority");
      const int64_t v = ctx_.get_int(*priority_v, key_path, std::numeric_limits<int32_t>::min(),
                                     std::numeric_limits<int32_t>::max());
      const int lo = fair ? -20 : 1, hi = fair ? 19 : 99;
      if (v < lo || v > hi)
        ctx_.fail(*priority_v, key_path,
                  fmt::format("priority {} out of range for {}{} (expected {}..{}, {})", v, policy_text(policy),
                              policy_v ? "" : ", the policy in effect", lo, hi,
                              fair ? "a nice value" : "an RT priority"));
      priority = static_cast<int>(v);
    }
    EventSpec set;
    set.kind = EventSpec::Kind::kSetScheduler;
    set.policy = policy;
    set.rt_priority = fair ? 0 : priority;
    out.push_back(set);
    if (policy == Policy::kIdle && priority_v)
      ctx_.warn(*priority_v, child(path, "priority"), "ignored: rt-app sets no nice for SCHED_IDLE");
    // SCHED_BATCH: rt-app 1cf8c77, the first to accept it, sets its nice too.
    if (policy == Policy::kNormal || policy == Policy::kBatch) {
      EventSpec nice;
      nice.kind = EventSpec::Kind::kNice;
      nice.nice = priority;
      out.push_back(nice);
    }
  }

  void read_phase(const Member& m, const std::string& path, bool only_phase, TaskSpec& t, Policy& policy,
                  const std::optional<EventSpec>& affinity) {
    const Value& obj = m.value;
    if (!obj.is(Type::kObject)) ctx_.fail(obj, path, expected("a phase object", obj));
    PhaseSpec p;
    if (const Value* loop = obj.find("loop")) p.loop = read_loop(*loop, child(path, "loop"));
    // A lone phase's settings apply from the task's start: they are the task's.
    if (only_phase) apply_sched(obj, path, t);
    // A later phase's policy, priority, util_min / util_max: what rt-app
    // sets as the phase starts (its policy first, then the clamps).
    std::vector<EventSpec> attrs;
    EventSpec clamps;
    clamps.kind = EventSpec::Kind::kUclamp;
    clamps.uclamp_if_changed = true;
    if (!only_phase) {
      // set_thread_affinity() first, then set_thread_param().
      if (affinity) attrs.push_back(*affinity);
      read_phase_sched(obj, path, policy, attrs);
      read_util_clamps(obj, path, clamps.uclamp_min, clamps.uclamp_max);
      if (clamps.uclamp_min || clamps.uclamp_max) attrs.push_back(clamps);
      // set_thread_taskgroup() after the policy and clamps: a cgroup
      // event (rt-app skips a repeat of the group it set last; moving a
      // task to the group it is in changes nothing either).
      const Value* tg = taskgroup_of(obj, path);
      if (tg) {
        EventSpec move;
        move.kind = EventSpec::Kind::kCgroup;
        move.name = read_taskgroup(*tg, child(path, "taskgroup"));
        if (move.name.empty()) move.name = "/";
        attrs.push_back(move);
      }
      check_taskgroup_policy(obj, path, tg, policy);
    }
    for (const Member& k : obj.members) {
      std::string key_path = child(path, k.key);
      if (!only_phase && role_of(k.key) == Role::kSched) continue;  // read above
      warn_unmodelled(k, key_path, /*task_level=*/false);
    }
    warn_duplicates(obj, path);
    // rt-app applies a phase's attributes once as the phase begins: a
    // one-pass phase of their own before it (kept when the phase's own
    // events cannot be modelled: rt-app still sets them).
    if (!attrs.empty()) t.phases.push_back(PhaseSpec{1, std::move(attrs)});
    if (read_events(obj, path, t.name, p.events)) {
      t.phases.push_back(std::move(p));
    } else {
      ctx_.warn(m, path, "no event the model can run; phase skipped");
    }
  }

  // Every event key of `obj` in file order; false when none can be modelled
  // (or there are none, which rt-app itself refuses).
  bool read_events(const Value& obj, const std::string& path, const std::string& task, std::vector<EventSpec>& out) {
    for (const Member& m : obj.members) {
      if (role_of(m.key) != Role::kEvent) continue;
      const size_t first = out.size();
      const std::string at = child(path, m.key);
      read_event(ctx_, m, at, task, out);
      // The model events one rt-app event becomes share its place in the file.
      const std::string origin = format_location(ctx_.file(), m.line, m.column, at);
      for (size_t i = first; i < out.size(); ++i) out[i].origin = origin;
    }
    return !out.empty();
  }

  bool taskgroup_seen_ = false;  // the task being read is in a taskgroup ("/" included)
  std::set<std::string> taskgroup_strings_;  // every distinct taskgroup string of the file
  const Value& root_;
  const std::string& file_;
  ScenarioParams out_;
  Context ctx_;
  Policy default_policy_ = Policy::kNormal;
  int max_cpu_ = -1;
};

}  // namespace
}  // namespace config::rtapp

ScenarioParams import_rtapp_json(std::string_view text, const std::string& name) {
  json::Value root = json::parse(text, name);
  return config::rtapp::Importer(root, name).run();
}

}  // namespace schedlab
