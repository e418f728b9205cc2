// rt-app events -> EventSpec. Where rt-app implements an event as a short
// sequence of pthread operations (sync, suspend, resume), the import emits
// the same sequence of model events, so the model sees what the threads do.
#include <fmt/format.h>

#include "models/config/rtapp_context.h"

namespace schedlab::config::rtapp {
namespace {

using Kind = EventSpec::Kind;

// rt-app's matching order (src/rt-app_parse_config.c): "runtime" before "run".
const std::vector<std::string> kEventPrefixes = {"lock",  "unlock",  "wait",    "signal",  "broad", "sync",
                                                 "sleep", "runtime", "run",     "timer",   "suspend",
                                                 "resume", "mem",    "iorun",   "yield",   "barrier", "fork"};

EventSpec named(Kind kind, const std::string& name) {
  EventSpec e;
  e.kind = kind;
  e.name = name;
  return e;
}

Kind simple_kind(const std::string& kind) {
  if (kind == "run") return Kind::kRun;
  if (kind == "runtime") return Kind::kRuntime;
  if (kind == "sleep") return Kind::kSleep;
  if (kind == "lock") return Kind::kLock;
  if (kind == "unlock") return Kind::kUnlock;
  if (kind == "signal") return Kind::kSignal;
  if (kind == "broad") return Kind::kBroad;
  return Kind::kBarrier;
}

// rt-app's default mode is relative; any "absolute" use makes the timer
// absolute (the mode belongs to the timer), which unify_timer_modes applies.
TimerMode read_timer_mode(Context& ctx, const Value& timer, const std::string& path, const std::string& name) {
  TimerUse& use = ctx.timers()[name];
  const Value* mode = timer.find("mode");
  if (mode == nullptr) return TimerMode::kRelative;
  std::string text = ctx.get_string(*mode, child(path, "mode"));
  if (text == "absolute") {
    use.absolute = true;
    return TimerMode::kAbsolute;
  }
  if (text == "relative") use.explicit_relative = true;
  else ctx.warn(*mode, child(path, "mode"), fmt::format("unknown mode '{}' (absolute, relative); relative used", text));
  return TimerMode::kRelative;
}

EventSpec read_timer(Context& ctx, const Value& v, const std::string& path, const std::string& task) {
  if (!v.is(Type::kObject)) ctx.fail(v, path, expected("an object {\"ref\", \"period\", \"mode\"}", v));
  const Value* ref = v.find("ref");
  const Value* period = v.find("period");
  if (ref == nullptr) ctx.fail(v, path, "timer needs \"ref\" (the timer's name)");
  if (period == nullptr) ctx.fail(v, path, "timer needs \"period\" (microseconds > 0)");
  EventSpec e = named(Kind::kTimer, ctx.get_string(*ref, child(path, "ref")));
  // rt-app gives each thread its own timer when the ref starts with "unique".
  if (e.name.compare(0, 6, "unique") == 0) e.name += "@" + task;
  e.duration = ctx.get_usec(*period, child(path, "period"), 1);
  e.timer_mode = read_timer_mode(ctx, v, path, e.name);
  for (const Member& k : v.members)
    if (k.key != "ref" && k.key != "period" && k.key != "mode") ctx.warn(k, child(path, k.key), "unknown key, ignored");
  return e;
}

EventSpec read_wait(Context& ctx, const Value& v, const std::string& path) {
  if (!v.is(Type::kObject)) ctx.fail(v, path, expected("an object {\"ref\", \"mutex\"}", v));
  const Value* ref = v.find("ref");
  const Value* mutex = v.find("mutex");
  if (ref == nullptr || mutex == nullptr) ctx.fail(v, path, "needs both \"ref\" (condition) and \"mutex\"");
  EventSpec e = named(Kind::kWait, ctx.get_string(*ref, child(path, "ref")));
  e.mutex = ctx.get_string(*mutex, child(path, "mutex"));
  return e;
}

// sync is pthread_cond_signal then pthread_cond_wait; the mutex is already
// held through the file's own lock/unlock around it.
void append_sync(const EventSpec& wait, std::vector<EventSpec>& out) {
  out.push_back(named(Kind::kSignal, wait.name));
  out.push_back(wait);
}

// suspend/resume name a wake-up point, not a task: several tasks may
// suspend on one name, and a resume nobody waits for is lost. rt-app runs
// them on the mutex and condition of that name:
//   suspend X = lock X, wait {X, X}, unlock X;  resume X = lock X, broad X, unlock X.
void append_suspend(const std::string& point, std::vector<EventSpec>& out) {
  EventSpec wait = named(Kind::kWait, point);
  wait.mutex = point;
  out.push_back(named(Kind::kLock, point));
  out.push_back(wait);
  out.push_back(named(Kind::kUnlock, point));
}

void append_resume(const std::string& point, std::vector<EventSpec>& out) {
  out.push_back(named(Kind::kLock, point));
  out.push_back(named(Kind::kBroad, point));
  out.push_back(named(Kind::kUnlock, point));
}

}  // namespace

const std::vector<std::string>& rtapp_event_prefixes() { return kEventPrefixes; }

std::string event_kind_of(const std::string& key) {
  for (const std::string& prefix : kEventPrefixes)
    if (key.compare(0, prefix.size(), prefix) == 0) return prefix;
  return "";
}

void read_event(Context& ctx, const Member& m, const std::string& path, const std::string& task,
                std::vector<EventSpec>& out) {
  const std::string kind = event_kind_of(m.key);
  const Value& v = m.value;
  if (kind == "run" || kind == "runtime" || kind == "sleep") {
    EventSpec e = named(simple_kind(kind), "");
    e.duration = ctx.get_usec(v, path);
    out.push_back(e);
  } else if (kind == "lock" || kind == "unlock" || kind == "signal" || kind == "broad" || kind == "barrier") {
    out.push_back(named(simple_kind(kind), ctx.get_string(v, path)));
  } else if (kind == "timer") {
    out.push_back(read_timer(ctx, v, path, task));
  } else if (kind == "wait") {
    out.push_back(read_wait(ctx, v, path));
  } else if (kind == "sync") {
    append_sync(read_wait(ctx, v, path), out);
  } else if (kind == "suspend") {
    // An empty name is the task's own, which is what workgen fills in.
    std::string point = ctx.get_string(v, path, /*allow_empty=*/true);
    append_suspend(point.empty() ? task : point, out);
  } else if (kind == "resume") {
    append_resume(ctx.get_string(v, path), out);
  } else if (kind == "yield") {
    out.push_back(named(Kind::kYield, ""));  // rt-app ignores the value
  } else {  // mem, iorun, fork
    ctx.warn(m, path, fmt::format("'{}' events are not modelled, event dropped", kind));
  }
}

void unify_timer_modes(Context& ctx) {
  for (const auto& [name, use] : ctx.timers()) {
    if (!use.absolute) continue;
    if (use.explicit_relative)
      ctx.warn(fmt::format("timer '{}' is used both as absolute and relative; rt-app makes it absolute everywhere",
                           name));
    for (TaskSpec& t : ctx.out().tasks)
      for (PhaseSpec& p : t.phases)
        for (EventSpec& e : p.events)
          if (e.kind == Kind::kTimer && e.name == name) e.timer_mode = TimerMode::kAbsolute;
  }
}

}  // namespace schedlab::config::rtapp
