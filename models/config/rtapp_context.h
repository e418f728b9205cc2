// Shared pieces of the rt-app importer (rtapp_import.cc reads the file's
// structure, rtapp_events.cc its events): the diagnostics and typed value
// readers of one import. Internal to models/config.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "models/config/json.h"
#include "models/scenario.h"

namespace schedlab::config::rtapp {

using json::Member;
using json::Value;
using Type = json::Value::Type;

// How the uses of one named timer asked for its mode (see unify_timer_modes).
struct TimerUse {
  bool absolute = false;           // some use says "absolute"
  bool explicit_relative = false;  // some use says "relative" in so many words
};

// One import: where messages point, where warnings and results go.
class Context {
 public:
  Context(const std::string& file, ScenarioParams& out) : file_(file), out_(out) {}

  [[noreturn]] void fail(const Value& at, const std::string& path, const std::string& message) const;
  [[noreturn]] void fail(const Member& at, const std::string& path, const std::string& message) const;
  void warn(const Value& at, const std::string& path, const std::string& message);
  void warn(const Member& at, const std::string& path, const std::string& message);
  void warn(const std::string& message);  // about the file as a whole

  int64_t get_int(const Value& v, const std::string& path, int64_t lo, int64_t hi) const;
  Time get_usec(const Value& v, const std::string& path, int64_t min_us = 0) const;
  bool get_bool(const Value& v, const std::string& path) const;
  std::string get_string(const Value& v, const std::string& path, bool allow_empty = false) const;
  // SCHED_DEADLINE is a clear error: the model has no deadline class.
  Policy get_policy(const Value& v, const std::string& path) const;

  ScenarioParams& out() { return out_; }
  const std::string& file() const { return file_; }
  std::map<std::string, TimerUse>& timers() { return timers_; }

 private:
  const std::string& file_;
  ScenarioParams& out_;
  std::map<std::string, TimerUse> timers_;
};

std::string child(const std::string& parent, const std::string& key);  // "tasks" + "t" -> "tasks.t"
std::string expected(const std::string& what, const Value& got);       // "expected X, got an array"

// rtapp_events.cc: the event kind a key names by rt-app's prefix rule
// ("run0" -> "run", "runtime" before "run"), or "" for a non-event key.
std::string event_kind_of(const std::string& key);
// The event key prefixes, in rt-app's matching order.
const std::vector<std::string>& rtapp_event_prefixes();
// Appends the events `m` stands for (none for unmodelled kinds, with a warning).
void read_event(Context& ctx, const Member& m, const std::string& path, const std::string& task,
                std::vector<EventSpec>& out);
// Applies rt-app's per-timer mode to every event of each timer.
void unify_timer_modes(Context& ctx);

}  // namespace schedlab::config::rtapp
