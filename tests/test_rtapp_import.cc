// rt-app JSON import: the tolerant grammar (comments, trailing commas,
// repeated and numbered keys), the mapping to TaskSpec, and warnings for
// whatever cannot be modelled.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "models/config/config.h"
#include "models/config/json.h"
#include "models/system.h"

using namespace schedlab;
using namespace schedlab::time_literals;
using Kind = EventSpec::Kind;

namespace {

ScenarioParams import(const std::string& text) { return import_rtapp_json(text, "test.json"); }

ConfigError error_of(const std::string& text) {
  try {
    import(text);
  } catch (const ConfigError& e) {
    return e;
  }
  FAIL("expected a ConfigError for:\n" << text);
  throw std::logic_error("unreachable");
}

// The warning that mentions `needle`, or "" if none does.
std::string warning_with(const ScenarioParams& s, const std::string& needle) {
  for (const schedlab::config::ConfigWarning& cw : s.warnings)
    if (std::string w = cw.text(); w.find(needle) != std::string::npos) return w;
  return "";
}

const TaskSpec& task(const ScenarioParams& s, const std::string& name) {
  auto it = std::find_if(s.tasks.begin(), s.tasks.end(), [&](const TaskSpec& t) { return t.name == name; });
  REQUIRE(it != s.tasks.end());
  return *it;
}

}  // namespace

TEST_CASE("Comments, trailing commas and repeated keys import with events in file order", "[config][rtapp]") {
  const std::string text = R"(/* block comment before the object */
{
  // line comment
  "global": { "duration": 3, },
  "tasks": {
    "t": {
      "run": 1000,
      "sleep1": 2000,   /* numbered key */
      "run0": 3000,
      "run": 4000,      // the same key again
      "runtime": 500,
      "sleep": 6000,
    },
  },
}
)";
  ScenarioParams s = import(text);
  CHECK(s.duration == 3_s);
  REQUIRE(s.tasks.size() == 1);
  const TaskSpec& t = s.tasks[0];
  CHECK(t.name == "t");
  REQUIRE(t.phases.size() == 1);
  const std::vector<EventSpec>& ev = t.phases[0].events;
  REQUIRE(ev.size() == 6);
  CHECK((ev[0].kind == Kind::kRun && ev[0].duration == 1_ms));
  CHECK((ev[1].kind == Kind::kSleep && ev[1].duration == 2_ms));
  CHECK((ev[2].kind == Kind::kRun && ev[2].duration == 3_ms));
  CHECK((ev[3].kind == Kind::kRun && ev[3].duration == 4_ms));
  CHECK((ev[4].kind == Kind::kRuntime && ev[4].duration == 500_us));
  CHECK((ev[5].kind == Kind::kSleep && ev[5].duration == 6_ms));
  CHECK(s.warnings.empty());
}

TEST_CASE("Unsupported keys produce warnings that name the key path", "[config][rtapp]") {
  const std::string text = R"({
  "global": { "duration": 1, "frag": 1, "logdir": "./", "gnuplot": true },
  "tasks": {
    "t": {
      "dl-runtime": 1000,
      "nodes_membind": [0],
      "mystery": 1,
      "priorty": 5,
      "run": 100,
      "mem": 4096,
      "iorun": 10,
      "fork": "t",
      "sleep": 100
    }
  },
  "extra": {}
})";
  ScenarioParams s = import(text);
  CHECK_THAT(warning_with(s, "global.frag"), Catch::Contains("unknown global key"));
  CHECK_THAT(warning_with(s, "tasks.t.dl-runtime"), Catch::Contains("not modelled"));
  CHECK_THAT(warning_with(s, "tasks.t.nodes_membind"), Catch::Contains("not modelled"));
  CHECK_THAT(warning_with(s, "tasks.t.mystery"), Catch::Contains("unknown key") && !Catch::Contains("did you mean"));
  CHECK_THAT(warning_with(s, "tasks.t.priorty"), Catch::EndsWith("unknown key, ignored; did you mean 'priority'?"));
  CHECK_THAT(warning_with(s, "tasks.t.mem"), Catch::Contains("not modelled"));
  CHECK_THAT(warning_with(s, "tasks.t.iorun"), Catch::Contains("not modelled"));
  CHECK_THAT(warning_with(s, "tasks.t.fork"), Catch::Contains("not modelled"));
  CHECK_THAT(warning_with(s, ": extra:"), Catch::Contains("unknown top-level key"));
  // Warnings carry file and position so they can be found.
  CHECK_THAT(warning_with(s, "tasks.t.dl-runtime"), Catch::StartsWith("test.json:5:7: "));
  // Logging keys are accepted with no effect and no warning.
  CHECK(warning_with(s, "logdir").empty());
  CHECK(warning_with(s, "gnuplot").empty());
  // The modelled events survive in order.
  REQUIRE(s.tasks.size() == 1);
  REQUIRE(s.tasks[0].phases[0].events.size() == 2);
  CHECK(s.tasks[0].phases[0].events[0].kind == Kind::kRun);
  CHECK(s.tasks[0].phases[0].events[1].kind == Kind::kSleep);
}

TEST_CASE("rt-app util_min / util_max become the task's uclamp request and enable CONFIG_UCLAMP_TASK",
          "[config][rtapp][uclamp]") {
  const std::string text = R"({
  "global": { "duration": 1 },
  "tasks": {
    "boosted": { "util_min": 300, "util_max": 800, "run": 10 },
    "plain":   { "run": 10 }
  }
})";
  ScenarioParams s = import(text);
  CHECK(s.warnings.empty());
  CHECK(s.kernel.uclamp);
  REQUIRE(s.tasks.size() == 2);
  CHECK(s.tasks[0].uclamp_min == std::optional<uint32_t>(300));
  CHECK(s.tasks[0].uclamp_max == std::optional<uint32_t>(800));
  CHECK_FALSE(s.tasks[1].uclamp_min.has_value());
  CHECK_THROWS_WITH(import(R"({"tasks": {"t": {"util_min": 900, "util_max": 100, "run": 10}}})"),
                    Catch::Contains("util_min 900 exceeds util_max 100"));
  CHECK_THROWS_WITH(import(R"({"tasks": {"t": {"util_max": 2000, "run": 10}}})"), Catch::Contains("util_max"));
}

TEST_CASE("Priority maps to nice for fair policies and to the RT priority otherwise", "[config][rtapp]") {
  const std::string text = R"({
  "global": { "duration": 1, "default_policy": "SCHED_FIFO" },
  "tasks": {
    "fifo_default": { "run": 10 },
    "fifo_prio":    { "priority": 42, "run": 10 },
    "rr":           { "policy": "SCHED_RR", "priority": 7, "run": 10 },
    "other":        { "policy": "SCHED_OTHER", "priority": -3, "run": 10 },
    "idle":         { "policy": "SCHED_IDLE", "run": 10 },
    "batch":        { "policy": "SCHED_BATCH", "priority": 19, "run": 10 }
  }
})";
  ScenarioParams s = import(text);
  CHECK(task(s, "fifo_default").policy == Policy::kFifo);
  CHECK(task(s, "fifo_default").rt_priority == 10);  // rt-app's default RT priority
  CHECK(task(s, "fifo_prio").rt_priority == 42);
  CHECK(task(s, "rr").policy == Policy::kRr);
  CHECK(task(s, "rr").rt_priority == 7);
  CHECK(task(s, "other").policy == Policy::kNormal);
  CHECK(task(s, "other").nice == -3);
  CHECK(task(s, "other").rt_priority == 0);
  CHECK(task(s, "idle").policy == Policy::kIdle);
  CHECK(task(s, "idle").nice == 0);
  CHECK(task(s, "batch").nice == 19);

  ConfigError nice = error_of(R"({"tasks": {"t": {"priority": 20, "run": 1}}})");
  CHECK(nice.key_path() == "tasks.t.priority");
  CHECK_THAT(nice.message(), Catch::Contains("expected -20..19"));
  ConfigError rt = error_of(R"({"tasks": {"t": {"policy": "SCHED_FIFO", "priority": 0, "run": 1}}})");
  CHECK_THAT(rt.message(), Catch::Contains("expected 1..99"));
}

TEST_CASE("SCHED_DEADLINE and unknown policies are clear errors", "[config][rtapp]") {
  ConfigError dl = error_of(R"({"tasks": {"t": {"policy": "SCHED_DEADLINE", "dl-runtime": 1000, "run": 1}}})");
  CHECK(dl.key_path() == "tasks.t.policy");
  CHECK(dl.line() == 1);
  CHECK_THAT(dl.message(), Catch::Contains("SCHED_DEADLINE is not modelled"));
  ConfigError bad = error_of(R"({"global": {"default_policy": "SCHED_FAST"}, "tasks": {"t": {"run": 1}}})");
  CHECK(bad.key_path() == "global.default_policy");
  CHECK_THAT(bad.message(), Catch::Contains("SCHED_OTHER, SCHED_NORMAL"));
}

TEST_CASE("A JSON syntax error reports line and column", "[config][rtapp]") {
  ConfigError missing_comma = error_of("{\n  \"tasks\": {\n    \"t\": { \"run\": 1 \"sleep\": 2 }\n  }\n}\n");
  CHECK(missing_comma.file() == "test.json");
  CHECK(missing_comma.line() == 3);
  CHECK(missing_comma.column() == 21);
  CHECK_THAT(missing_comma.message(), Catch::Contains("expected ',' or '}'"));

  ConfigError comment = error_of("{\n  /* never closed\n  \"tasks\": {}\n}\n");
  CHECK(comment.line() == 2);
  CHECK(comment.column() == 3);
  CHECK_THAT(comment.message(), Catch::Contains("unterminated /* comment"));

  ConfigError word = error_of("{\"tasks\": {\"t\": {\"run\": tru}}}");
  CHECK(word.line() == 1);
  CHECK(word.column() == 25);

  ConfigError eof = error_of("{\"tasks\": {");
  CHECK_THAT(eof.message(), Catch::Contains("end of file"));
}

TEST_CASE("Durations are integer microseconds and types are checked", "[config][rtapp]") {
  ConfigError fraction = error_of(R"({"tasks": {"t": {"run": 1.5}}})");
  CHECK(fraction.key_path() == "tasks.t.run");
  CHECK_THAT(fraction.message(), Catch::Contains("integer number of microseconds"));
  ConfigError negative = error_of(R"({"tasks": {"t": {"sleep": -5}}})");
  CHECK(negative.key_path() == "tasks.t.sleep");
  ConfigError period = error_of(R"({"tasks": {"t": {"timer": {"ref": "a", "period": 0}}}})");
  CHECK(period.key_path() == "tasks.t.timer.period");
  ConfigError lock = error_of(R"({"tasks": {"t": {"lock": 3}}})");
  CHECK_THAT(lock.message(), Catch::Contains("expected a string"));
}

TEST_CASE("Loop counts follow rt-app for tasks with and without phases", "[config][rtapp]") {
  const std::string text = R"({
  "global": { "duration": 1 },
  "tasks": {
    "flat_forever": { "run": 10 },
    "flat_counted": { "loop": 5, "run": 10 },
    "phased": {
      "loop": 2,
      "phases": {
        "p0": { "loop": 3, "run": 10 },
        "p1": { "sleep": 10 }
      }
    }
  }
})";
  ScenarioParams s = import(text);
  CHECK(task(s, "flat_forever").loop == -1);
  CHECK(task(s, "flat_forever").phases.at(0).loop == 1);
  CHECK(task(s, "flat_counted").loop == 1);
  CHECK(task(s, "flat_counted").phases.at(0).loop == 5);
  const TaskSpec& phased = task(s, "phased");
  CHECK(phased.loop == 2);
  REQUIRE(phased.phases.size() == 2);
  CHECK(phased.phases[0].loop == 3);
  CHECK(phased.phases[1].loop == 1);
  CHECK(phased.phases[1].events.at(0).kind == Kind::kSleep);
}

TEST_CASE("Task settings import: instances, delay, affinity and the CPU count", "[config][rtapp]") {
  ScenarioParams s = import(R"({"global": {"duration": 1},
    "tasks": {"t": {"instance": 3, "delay": 2500, "cpus": [3, 1], "run": 10}}})");
  const TaskSpec& t = s.tasks.at(0);
  CHECK(t.instances == 3);
  CHECK(t.delay == 2500_us);
  CHECK(t.cpus == std::vector<int>{1, 3});
  CHECK(s.platform.cpus == 4);  // the highest CPU named, plus one
  CHECK_FALSE(s.pi_enabled);    // rt-app's default

  ScenarioParams zero = import(R"({"global": {"duration": 1},
    "tasks": {"spawned": {"instance": 0, "run": 10}, "t": {"run": 10}}})");
  CHECK(zero.tasks.size() == 1);
  CHECK_THAT(warning_with(zero, "tasks.spawned.instance"), Catch::Contains("task skipped"));
}

TEST_CASE("Timers default to relative and any absolute use makes the whole timer absolute", "[config][rtapp]") {
  const std::string text = R"({
  "global": { "duration": 1 },
  "tasks": {
    "a": { "run": 10, "timer": { "ref": "shared", "period": 1000 } },
    "b": { "run": 10, "timer": { "ref": "shared", "period": 1000, "mode": "absolute" } },
    "c": { "run": 10, "timer": { "ref": "own", "period": 2000 } },
    "d": { "run": 10, "timer": { "ref": "unique", "period": 3000 } },
    "e": { "run": 10, "timer": { "ref": "unique", "period": 3000 } }
  }
})";
  ScenarioParams s = import(text);
  const EventSpec& a = task(s, "a").phases[0].events[1];
  CHECK(a.kind == Kind::kTimer);
  CHECK(a.name == "shared");
  CHECK(a.duration == 1_ms);
  CHECK(a.timer_mode == TimerMode::kAbsolute);
  CHECK(task(s, "b").phases[0].events[1].timer_mode == TimerMode::kAbsolute);
  CHECK(task(s, "c").phases[0].events[1].timer_mode == TimerMode::kRelative);
  // "unique" timers belong to their task, so d and e do not share one.
  CHECK(task(s, "d").phases[0].events[1].name != task(s, "e").phases[0].events[1].name);
  CHECK(s.warnings.empty());

  // rt-app's unique timers are per thread; instances share one in the model, which is said.
  ScenarioParams shared = import(R"({"global": {"duration": 1},
    "tasks": {"t": {"instance": 2, "run": 10, "timer": {"ref": "unique", "period": 1000}}}})");
  CHECK_THAT(warning_with(shared, "tasks.t:"), Catch::Contains("shared by the 2 instances"));
}

TEST_CASE("Synchronisation events import as the operations rt-app performs", "[config][rtapp]") {
  const std::string text = R"({
  "global": { "duration": 1, "pi_enabled": true },
  "tasks": {
    "waker": {
      "lock": "m", "sync": { "ref": "c", "mutex": "m" }, "unlock": "m",
      "signal": "c", "broad": "c", "barrier": "b", "yield": "",
      "resume": "point"
    },
    "sleeper": {
      "wait": { "ref": "c", "mutex": "m" },
      "barrier": "b",
      "suspend": "point",
      "suspend1": ""
    }
  }
})";
  ScenarioParams s = import(text);
  CHECK(s.pi_enabled);
  const std::vector<EventSpec>& w = task(s, "waker").phases[0].events;
  std::vector<Kind> kinds;
  for (const EventSpec& e : w) kinds.push_back(e.kind);
  CHECK(kinds == std::vector<Kind>{Kind::kLock, Kind::kSignal, Kind::kWait, Kind::kUnlock, Kind::kSignal,
                                   Kind::kBroad, Kind::kBarrier, Kind::kYield, Kind::kLock, Kind::kBroad,
                                   Kind::kUnlock});
  CHECK((w[2].name == "c" && w[2].mutex == "m"));
  CHECK(w[9].name == "point");

  const std::vector<EventSpec>& sl = task(s, "sleeper").phases[0].events;
  REQUIRE(sl.size() == 8);
  CHECK((sl[0].kind == Kind::kWait && sl[0].name == "c" && sl[0].mutex == "m"));
  CHECK(sl[1].kind == Kind::kBarrier);
  // suspend "point": wait on the condition "point" under the mutex "point".
  CHECK((sl[2].kind == Kind::kLock && sl[2].name == "point"));
  CHECK((sl[3].kind == Kind::kWait && sl[3].name == "point" && sl[3].mutex == "point"));
  CHECK((sl[4].kind == Kind::kUnlock && sl[4].name == "point"));
  // An empty suspend waits on the task's own name, as workgen fills it in.
  CHECK((sl[6].kind == Kind::kWait && sl[6].name == "sleeper"));
}

TEST_CASE("Phases with only unmodelled events are skipped with a warning", "[config][rtapp]") {
  ScenarioParams s = import(R"({"global": {"duration": 1}, "tasks": {
    "t": {"phases": {"io": {"iorun": 100}, "cpu": {"run": 100}}}}})");
  REQUIRE(s.tasks.at(0).phases.size() == 1);
  CHECK(s.tasks[0].phases[0].events.at(0).kind == Kind::kRun);
  CHECK_THAT(warning_with(s, "tasks.t.phases.io:"), Catch::Contains("phase skipped"));

  ConfigError none = error_of(R"({"tasks": {"t": {"mem": 10}}})");
  CHECK_THAT(none.message(), Catch::Contains("no task that the model can run"));
}

TEST_CASE("A lone phase's scheduling keys are the task's", "[config][rtapp]") {
  ScenarioParams one = import(R"({"global": {"duration": 1}, "tasks": {
    "t": {"phases": {"only": {"policy": "SCHED_FIFO", "priority": 5, "cpus": [1], "run": 100}}}}})");
  CHECK(one.tasks[0].policy == Policy::kFifo);
  CHECK(one.tasks[0].rt_priority == 5);
  CHECK(one.tasks[0].cpus == std::vector<int>{1});
  CHECK(one.tasks[0].phases.size() == 1);
  CHECK(one.warnings.empty());

}

namespace {
// The setaffinity events of the first task, as (phase index, mask).
std::vector<std::pair<size_t, std::vector<int>>> affinity_events(const ScenarioParams& s) {
  std::vector<std::pair<size_t, std::vector<int>>> out;
  const auto& phases = s.tasks.at(0).phases;
  for (size_t i = 0; i < phases.size(); ++i)
    for (const EventSpec& e : phases[i].events)
      if (e.kind == Kind::kSetAffinity) out.emplace_back(i, e.cpus);
  return out;
}
}  // namespace

// rt-app's set_thread_affinity() as each phase begins: the phase's cpus,
// else the task's, else every CPU (empty), set where the mask changes --
// into the first phase from the task's start mask, between phases, and
// from the last phase back into the first when the phases repeat.
TEST_CASE("rt-app per-phase cpus set the affinity as each phase begins", "[config][rtapp]") {
  using A = std::vector<std::pair<size_t, std::vector<int>>>;
  // Repeating (the default loop -1): "a" is reached again from "b".
  ScenarioParams two = import(R"({"global": {"duration": 1}, "tasks": {
    "t": {"phases": {"a": {"run": 100}, "b": {"cpus": [1], "run": 100}}}}})");
  CHECK(two.warnings.empty());
  CHECK(two.tasks[0].cpus.empty());
  REQUIRE(two.tasks[0].phases.size() == 4);
  CHECK(affinity_events(two) == A{{0, {}}, {2, {1}}});
  // Once through, from the task's cpus [0, 1]: "a" keeps them (no event),
  // "b" and "c" share [2, 3] (one event), "d" goes back to the task's.
  ScenarioParams once = import(R"({"global": {"duration": 1}, "tasks": {
    "t": {"loop": 1, "cpus": [1, 0], "phases": {"a": {"run": 100}, "b": {"cpus": [3, 2], "run": 100},
          "c": {"cpus": [2, 3], "run": 100}, "d": {"run": 100}}}}})");
  CHECK(once.tasks[0].cpus == std::vector<int>{0, 1});
  CHECK(affinity_events(once) == A{{1, {2, 3}}, {4, {0, 1}}});
  // Once through, the first phase's cpus differing from the task's: set
  // as it begins; the event names the phase's "cpus".
  ScenarioParams first = import(R"({"global": {"duration": 1}, "tasks": {
    "t": {"loop": 1, "cpus": [0, 1], "phases": {"a": {"cpus": [2], "run": 100}, "b": {"cpus": [2], "run": 100}}}}})");
  CHECK(affinity_events(first) == A{{0, {2}}});
  CHECK_THAT(first.tasks[0].phases[0].events[0].origin, Catch::Contains("tasks.t.phases.a.cpus"));
  // The affinity comes first in a phase's attributes, before its policy.
  ScenarioParams order = import(R"({"global": {"duration": 1}, "tasks": {
    "t": {"phases": {"a": {"run": 100}, "b": {"cpus": [1], "policy": "SCHED_FIFO", "priority": 3, "run": 100}}}}})");
  const auto& attrs = order.tasks.at(0).phases.at(2).events;
  REQUIRE(attrs.size() == 2);
  CHECK(attrs[0].kind == Kind::kSetAffinity);
  CHECK(attrs[1].kind == Kind::kSetScheduler);
}

namespace {
// The events of phase `i` of the first task, as (kind, policy, priority
// or nice) for the attribute events.
std::vector<std::tuple<Kind, Policy, int>> attr_events(const ScenarioParams& s, size_t i) {
  std::vector<std::tuple<Kind, Policy, int>> out;
  for (const EventSpec& e : s.tasks.at(0).phases.at(i).events)
    out.emplace_back(e.kind, e.policy, e.kind == Kind::kNice ? e.nice : e.rt_priority);
  return out;
}
}  // namespace

// rt-app's set_thread_param() as each phase begins (rt-app.c,
// parse_sched_data()): a phase's policy and priority become a one-pass
// phase before it. "b" gives only a priority: the policy in effect
// (SCHED_FIFO, from "a") stays; "c" gives SCHED_OTHER without a priority:
// rt-app's default nice 0, set by setpriority() after the policy; "d"
// gives neither: nothing is set; "e" a nice alone: the policy stays
// (SCHED_OTHER).
TEST_CASE("rt-app phases change policy and priority as they begin", "[config][rtapp]") {
  ScenarioParams s = import(R"({"global": {"duration": 1}, "tasks": {
    "t": {"priority": -3, "phases": {
      "a": {"policy": "SCHED_FIFO", "priority": 20, "run": 100},
      "b": {"priority": 10, "run": 100},
      "c": {"policy": "SCHED_OTHER", "run": 100, "util_min": 200},
      "d": {"run": 100},
      "e": {"priority": 5, "run": 100}}}}})");
  CHECK(s.warnings.empty());
  const TaskSpec& t = s.tasks.at(0);
  CHECK(t.policy == Policy::kNormal);
  CHECK(t.nice == -3);
  REQUIRE(t.phases.size() == 9);
  using V = std::vector<std::tuple<Kind, Policy, int>>;
  CHECK(attr_events(s, 0) == V{{Kind::kSetScheduler, Policy::kFifo, 20}});
  CHECK(attr_events(s, 2) == V{{Kind::kSetScheduler, Policy::kFifo, 10}});
  const V c = attr_events(s, 4);
  REQUIRE(c.size() == 3);
  CHECK(V(c.begin(), c.begin() + 2) == V{{Kind::kSetScheduler, Policy::kNormal, 0}, {Kind::kNice, Policy::kNormal, 0}});
  CHECK(t.phases[4].events[2].kind == Kind::kUclamp);
  CHECK(t.phases[6].events.at(0).kind == Kind::kRun);  // "d": no attributes
  CHECK(attr_events(s, 7) == V{{Kind::kSetScheduler, Policy::kNormal, 0}, {Kind::kNice, Policy::kNormal, 5}});
  for (size_t i : {0, 2, 4, 7}) CHECK(t.phases[i].loop == 1);

  // SCHED_BATCH takes its nice as SCHED_OTHER does; SCHED_IDLE sets none.
  ScenarioParams bi = import(R"({"global": {"duration": 1}, "tasks": {
    "t": {"phases": {"a": {"run": 100}, "b": {"policy": "SCHED_BATCH", "priority": 7, "run": 100},
                     "c": {"policy": "SCHED_IDLE", "priority": 3, "run": 100}}}}})");
  CHECK(attr_events(bi, 1) == V{{Kind::kSetScheduler, Policy::kBatch, 0}, {Kind::kNice, Policy::kNormal, 7}});
  CHECK(attr_events(bi, 3) == V{{Kind::kSetScheduler, Policy::kIdle, 0}});
  CHECK_THAT(warning_with(bi, "tasks.t.phases.c.priority"), Catch::Contains("no nice for SCHED_IDLE"));

  // Priorities are checked against the policy they apply to.
  ConfigError rt = error_of(R"({"tasks": {"t": {"phases": {
      "a": {"run": 100}, "b": {"policy": "SCHED_RR", "priority": 0, "run": 100}}}}})");
  CHECK(rt.key_path() == "tasks.t.phases.b.priority");
  CHECK_THAT(rt.message(), Catch::Contains("out of range for SCHED_RR (expected 1..99"));
  ConfigError nice = error_of(R"({"tasks": {"t": {"phases": {
      "a": {"run": 100}, "b": {"priority": 25, "run": 100}}}}})");
  CHECK(nice.key_path() == "tasks.t.phases.b.priority");
  CHECK_THAT(nice.message(), Catch::Contains("SCHED_OTHER, the policy in effect (expected -20..19, a nice value)"));
  // A task whose phases are all skipped is skipped, attributes or not.
  ScenarioParams skipped = import(R"({"global": {"duration": 1}, "tasks": {
    "io": {"phases": {"a": {"iorun": 100}, "b": {"policy": "SCHED_FIFO", "iorun": 100}}},
    "t": {"run": 100}}})");
  REQUIRE(skipped.tasks.size() == 1);
  CHECK(skipped.tasks[0].name == "t");
}

TEST_CASE("Global duration is in seconds and -1 keeps the default with a warning", "[config][rtapp]") {
  CHECK(import(R"({"global": {"duration": 7}, "tasks": {"t": {"run": 1}}})").duration == 7_s);
  ScenarioParams forever = import(R"({"global": {"duration": -1}, "tasks": {"t": {"run": 1}}})");
  CHECK(forever.duration == 10_s);
  CHECK_THAT(warning_with(forever, "global.duration"), Catch::Contains("10s"));
  ScenarioParams absent = import(R"({"tasks": {"t": {"run": 1}}})");
  CHECK_THAT(warning_with(absent, "global"), Catch::Contains("the scenario default 10s (or run --duration)"));
  // A misspelt global key is named with the one meant (and the default kept).
  ScenarioParams typo = import(R"({"global": {"duraton": 7}, "tasks": {"t": {"run": 1}}})");
  CHECK(typo.duration == 10_s);
  CHECK_THAT(warning_with(typo, "global.duraton"),
             Catch::Contains("unknown global key, ignored; did you mean 'duration'?"));
}

TEST_CASE("The JSON reader keeps duplicate keys in order with their positions", "[config][json]") {
  json::Value v = json::parse("{\"a\": 1,\n \"a\": [true, null, \"x\\u00e9\"], \"b\": -2.5e1,}", "t.json");
  REQUIRE(v.is(json::Value::Type::kObject));
  REQUIRE(v.members.size() == 3);
  CHECK(v.members[0].key == "a");
  CHECK(v.members[0].value.integer == 1);
  CHECK(v.members[1].key == "a");
  CHECK(v.members[1].line == 2);
  CHECK(v.members[1].column == 2);
  const json::Value& arr = v.members[1].value;
  REQUIRE(arr.items.size() == 3);
  CHECK(arr.items[0].boolean);
  CHECK(arr.items[1].is(json::Value::Type::kNull));
  CHECK(arr.items[2].text == "x\xc3\xa9");
  CHECK(v.members[2].value.is(json::Value::Type::kDouble));
  CHECK(v.members[2].value.number == -25.0);
  // Like json-c, a lookup finds the last of repeated keys.
  CHECK(v.find("a")->is(json::Value::Type::kArray));
}

#ifdef SCHEDLAB_SOURCE_DIR
TEST_CASE("The example rt-app file imports through load_scenario_file", "[config][rtapp][examples]") {
  ScenarioParams s = load_scenario_file(std::string(SCHEDLAB_SOURCE_DIR) + "/configs/rtapp/example.json");
  CHECK(s.warnings.empty());
  CHECK(s.duration == 5_s);
  CHECK(s.pi_enabled);
  CHECK(s.platform.cpus == 2);
  REQUIRE(s.tasks.size() == 4);
  const TaskSpec& video = task(s, "video");
  CHECK(video.nice == -5);
  REQUIRE(video.phases.size() == 2);
  CHECK(video.phases[0].loop == 10);
  REQUIRE(video.phases[0].events.size() == 5);
  CHECK(video.phases[0].events[2].duration == 500_us);  // the repeated "run"
  CHECK(video.phases[0].events[4].name == task(s, "compositor").phases[0].events[2].name);  // shared timer
  CHECK(task(s, "audio").policy == Policy::kFifo);
  CHECK(task(s, "worker").instances == 2);
  CHECK(task(s, "worker").nice == 10);
}
#endif

// rt-app's taskgroup (rt-app_taskgroups.c): cgroup v1 cpu groups made
// level by level with mkdir (cpu.shares 1024 each: levels of the fair
// hierarchy), the thread attached at its start (task level) or as a phase
// begins (a cgroup event after the phase's policy and clamps); "/" is the
// root group. rt-app refuses a taskgroup for an RT policy.
TEST_CASE("rt-app taskgroups become cpu cgroups and cgroup moves", "[config][rtapp][cgroup]") {
  ScenarioParams s = import(R"({"global": {"duration": 1}, "tasks": {
    "t": {"taskgroup": "/a", "phases": {
      "p0": {"run": 100},
      "p1": {"taskgroup": "/a//b/", "util_min": 100, "run": 100},
      "p2": {"taskgroup": "/", "run": 100}}},
    "u": {"taskgroup": "/c", "run": 100}}})");
  CHECK(s.warnings.empty());
  REQUIRE(s.kernel.cgroups.size() == 3);
  CHECK(s.kernel.cgroups[0].name == "a");
  CHECK(s.kernel.cgroups[0].parent.empty());
  CHECK(s.kernel.cgroups[1].name == "a/b");
  CHECK(s.kernel.cgroups[1].parent == "a");
  CHECK(s.kernel.cgroups[2].name == "c");
  for (const auto& g : s.kernel.cgroups) CHECK(g.cpu_shares == std::optional<int64_t>(1024));
  const TaskSpec& t = s.tasks.at(0);
  CHECK(t.cgroup == "a");
  CHECK(s.tasks.at(1).cgroup == "c");
  REQUIRE(t.phases.size() == 5);
  REQUIRE(t.phases[1].events.size() == 2);
  CHECK(t.phases[1].events[0].kind == Kind::kUclamp);
  CHECK(t.phases[1].events[1].kind == Kind::kCgroup);
  CHECK(t.phases[1].events[1].name == "a/b");
  REQUIRE(t.phases[3].events.size() == 1);
  CHECK(t.phases[3].events[0].name == "/");
  // It runs: the moves find their groups.
  System sys(s, 1);
  sys.run();

  // Each group is a level of the fair hierarchy: two hogs in /a share one
  // entity of weight 1024 against the root's hog (1 CPU, 1 s: about 1/4,
  // 1/4 and 1/2 of the CPU).
  ScenarioParams shares = import(R"({"global": {"duration": 1}, "tasks": {
    "x": {"taskgroup": "/a", "run": 1000000}, "y": {"taskgroup": "/a", "run": 1000000},
    "z": {"run": 1000000}}})");
  System share_sys(shares, 1);
  share_sys.run();
  const RunResult r = share_sys.result();
  auto cpu_ms = [&](const std::string& name) {
    for (const TaskMetrics& m : r.tasks)
      if (m.name == name) return m.cpu_time.count() / 1000000.0;
    return -1.0;
  };
  CHECK(cpu_ms("z") == Approx(500).margin(20));
  CHECK(cpu_ms("x") == Approx(250).margin(20));
  CHECK(cpu_ms("y") == Approx(250).margin(20));

  // As rt-app: "" is no taskgroup; a lone phase's RT policy is refused
  // with the task's taskgroup; '.' and '..' are not resolved.
  ScenarioParams none = import(R"({"global": {"duration": 1}, "tasks": {"t": {"taskgroup": "", "run": 100}}})");
  CHECK(none.warnings.empty());
  CHECK(none.kernel.cgroups.empty());
  CHECK(none.tasks.at(0).cgroup.empty());
  ConfigError lone = error_of(R"({"tasks": {"t": {"taskgroup": "/x", "phases": {
      "only": {"policy": "SCHED_FIFO", "run": 100}}}}})");
  CHECK(lone.key_path() == "tasks.t.phases.only.policy");
  CHECK(error_of(R"({"tasks": {"t": {"taskgroup": "/a/../b", "run": 100}}})").key_path() == "tasks.t.taskgroup");
  // rt-app keeps at most 32 distinct taskgroup strings.
  auto groups = [](int n) {
    std::string text = R"({"global": {"duration": 1}, "tasks": {)";
    for (int i = 0; i < n; ++i)
      text += (i ? "," : "") + std::string(R"("t)") + std::to_string(i) + R"(": {"taskgroup": "/g)" +
              std::to_string(i) + R"(", "run": 100})";
    return text + "}}";
  };
  CHECK(import(groups(32)).kernel.cgroups.size() == 32);
  ConfigError many = error_of(groups(33));
  CHECK(many.key_path() == "tasks.t32.taskgroup");
  CHECK_THAT(many.message(), Catch::Contains("at most 32"));

  ConfigError rt = error_of(R"({"tasks": {"t": {"policy": "SCHED_FIFO", "phases": {
      "a": {"run": 100}, "b": {"taskgroup": "/x", "run": 100}}}}})");
  CHECK(rt.key_path() == "tasks.t.phases.b.taskgroup");
  CHECK_THAT(rt.message(), Catch::Contains("No taskgroup support for policy"));
  ConfigError later_rt = error_of(R"({"tasks": {"t": {"taskgroup": "/x", "phases": {
      "a": {"run": 100}, "b": {"policy": "SCHED_RR", "run": 100}}}}})");
  CHECK(later_rt.key_path() == "tasks.t.phases.b.policy");
  ConfigError relative = error_of(R"({"tasks": {"t": {"taskgroup": "x", "run": 100}}})");
  CHECK(relative.key_path() == "tasks.t.taskgroup");
  CHECK_THAT(relative.message(), Catch::Contains("must start with '/'"));
}
