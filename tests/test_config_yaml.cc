// YAML scenario loading: typed values, and errors that name the file,
// line, column, key path and what was expected.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "config_test_util.h"
#include "models/config/config.h"
#include "models/config/feature_names.h"

using namespace schedlab;
using namespace schedlab::testing;
using namespace schedlab::time_literals;
using Kind = EventSpec::Kind;

namespace {

ScenarioParams load(const std::string& yaml) { return load_scenario_yaml(yaml, "test.yaml"); }

}  // namespace

TEST_CASE("A valid scenario loads with every value typed", "[config][yaml]") {
  const std::string yaml = R"(
name: full
duration: 3s
warmup: 250ms
seed: 42
pi_enabled: false
platform:
  cpus: 4
  name: quad
kernel:
  version: "6.6"
  hz: 1000
  preempt: voluntary
  features:
    RUN_TO_PARITY: false
    NEXT_BUDDY: true
  base_slice: 3ms
  sched_latency: 24ms
  min_granularity: 3ms
  wakeup_granularity: 4ms
  tunable_scaling: none
  rt_runtime: unlimited
  rt_period: 500ms
  rr_timeslice: 10ms
  fair_server: false
  fair_server_runtime: 20ms
  fair_server_period: 200ms
  overheads:
    context_switch: 2us
    wakeup: 1500ns
    ipi: 3us
    timer_slack: 0
tasks:
  - name: ui
    instances: 2
    policy: SCHED_BATCH
    nice: -5
    cpus: [1, 0]
    delay: 5ms
    loop: 3
    kernel_thread: true
    phases:
      - name: busy
        loop: 4
        events:
          - run: 3ms
          - runtime: 2ms
          - sleep: 750us
      - events:
          - timer: {ref: vsync, period: 16ms, mode: relative}
          - lock: m
          - wait: {ref: c, mutex: m}
          - unlock: m
          - signal: c
          - broad: c
          - barrier: b
          - yield
          - suspend: {}
          - resume: audio
  - name: audio
    policy: fifo
    priority: 80
    cpus: "0-2,3"
    events:
      - run: 1ms
      - timer: {ref: t1, period: 5ms}
      - suspend
      - yield: {}
)";
  ScenarioParams s = load(yaml);
  CHECK(s.source == "test.yaml");
  CHECK(s.duration == 3_s);
  CHECK(s.warmup == 250_ms);
  CHECK(s.seed == 42);
  CHECK_FALSE(s.pi_enabled);
  CHECK(s.platform.cpus == 4);
  CHECK(s.platform.name == "quad");
  // Every key loads; CFS's tunables, which EEVDF (6.6) does not have, are
  // said to change nothing, each at its line.
  REQUIRE(s.warnings.size() == 3);
  CHECK_THAT(s.warnings[0].text(), Catch::Contains("test.yaml:18:") && Catch::Contains("kernel.sched_latency") &&
                                Catch::Contains("sched_latency is CFS's (before 6.6; EEVDF's slice is base_slice): "
                                                "on 6.6 it changes nothing"));
  CHECK_THAT(s.warnings[1].text(), Catch::Contains("kernel.min_granularity"));
  CHECK_THAT(s.warnings[2].text(), Catch::Contains("kernel.wakeup_granularity"));

  const KernelParams& k = s.kernel;
  CHECK(k.version == "6.6");
  CHECK(k.hz == 1000);
  CHECK(k.preempt == PreemptModel::kVoluntary);
  CHECK(k.features == std::map<std::string, bool>{{"RUN_TO_PARITY", false}, {"NEXT_BUDDY", true}});
  CHECK(k.base_slice == 3_ms);
  CHECK(k.sched_latency == 24_ms);
  CHECK(k.min_granularity == 3_ms);
  CHECK(k.wakeup_granularity == 4_ms);
  CHECK(k.tunable_scaling == "none");
  CHECK(k.rt_runtime < Time::zero());
  CHECK(k.rt_period == 500_ms);
  CHECK(k.rr_timeslice == 10_ms);
  CHECK(k.fair_server == false);
  CHECK(k.fair_server_runtime == 20_ms);
  CHECK(k.fair_server_period == 200_ms);
  CHECK(k.context_switch_cost == 2_us);
  CHECK(k.wakeup_cost == 1500_ns);
  CHECK(k.ipi_latency == 3_us);
  CHECK(k.timer_slack == Time::zero());

  REQUIRE(s.tasks.size() == 2);
  const TaskSpec& ui = s.tasks[0];
  CHECK(ui.name == "ui");
  CHECK(ui.instances == 2);
  CHECK(ui.policy == Policy::kBatch);
  CHECK(ui.nice == -5);
  CHECK(ui.cpus == std::vector<int>{0, 1});
  CHECK(ui.delay == 5_ms);
  CHECK(ui.loop == 3);
  CHECK(ui.kernel_thread);
  REQUIRE(ui.phases.size() == 2);
  CHECK(ui.phases[0].loop == 4);
  REQUIRE(ui.phases[0].events.size() == 3);
  CHECK(ui.phases[0].events[0].kind == Kind::kRun);
  CHECK(ui.phases[0].events[0].duration == 3_ms);
  CHECK(ui.phases[0].events[1].kind == Kind::kRuntime);
  CHECK(ui.phases[0].events[1].duration == 2_ms);
  CHECK(ui.phases[0].events[2].kind == Kind::kSleep);
  CHECK(ui.phases[0].events[2].duration == 750_us);

  const std::vector<EventSpec>& ev = ui.phases[1].events;
  CHECK(ui.phases[1].loop == 1);
  REQUIRE(ev.size() == 10);
  CHECK(ev[0].kind == Kind::kTimer);
  CHECK(ev[0].name == "vsync");
  CHECK(ev[0].duration == 16_ms);
  CHECK(ev[0].timer_mode == TimerMode::kRelative);
  CHECK((ev[1].kind == Kind::kLock && ev[1].name == "m"));
  CHECK((ev[2].kind == Kind::kWait && ev[2].name == "c" && ev[2].mutex == "m"));
  CHECK((ev[3].kind == Kind::kUnlock && ev[3].name == "m"));
  CHECK((ev[4].kind == Kind::kSignal && ev[4].name == "c"));
  CHECK((ev[5].kind == Kind::kBroad && ev[5].name == "c"));
  CHECK((ev[6].kind == Kind::kBarrier && ev[6].name == "b"));
  CHECK(ev[7].kind == Kind::kYield);
  CHECK(ev[8].kind == Kind::kSuspend);
  CHECK((ev[9].kind == Kind::kResume && ev[9].name == "audio"));

  const TaskSpec& audio = s.tasks[1];
  CHECK(audio.policy == Policy::kFifo);
  CHECK(audio.rt_priority == 80);
  CHECK(audio.cpus == std::vector<int>{0, 1, 2, 3});
  CHECK(audio.loop == -1);
  REQUIRE(audio.phases.size() == 1);
  CHECK(audio.phases[0].events[1].timer_mode == TimerMode::kAbsolute);
  CHECK(audio.phases[0].events[2].kind == Kind::kSuspend);
  CHECK(audio.phases[0].events[3].kind == Kind::kYield);
}

TEST_CASE("Omitted keys keep the documented defaults", "[config][yaml]") {
  ScenarioParams s = load(kOneTask);
  CHECK(s.duration == 10_s);
  CHECK(s.warmup == Time::zero());
  CHECK(s.seed == 1);
  CHECK(s.pi_enabled);
  CHECK(s.platform.cpus == 1);
  CHECK(s.kernel.version == "6.12");
  CHECK(s.kernel.hz == 250);
  CHECK(s.kernel.preempt == PreemptModel::kFull);
  CHECK_FALSE(s.kernel.base_slice.has_value());
  CHECK_FALSE(s.kernel.fair_server.has_value());
  const TaskSpec& t = s.tasks.at(0);
  CHECK(t.policy == Policy::kNormal);
  CHECK(t.nice == 0);
  CHECK(t.instances == 1);
  CHECK(t.cpus.empty());
  CHECK(t.loop == -1);
  CHECK_FALSE(t.slice.has_value());
  CHECK(t.phases.size() == 1);
}

TEST_CASE("An unknown key is an error that lists the valid keys with its line and column", "[config][yaml]") {
  ConfigError e = error_of(std::string("kernel:\n  version: \"6.12\"\n  hzz: 250\n") + kOneTask);
  CHECK(e.file() == "test.yaml");
  CHECK(e.line() == 3);
  CHECK(e.column() == 3);
  CHECK(e.key_path() == "kernel.hzz");
  CHECK_THAT(e.message(), Catch::Contains("unknown key 'hzz'"));
  CHECK_THAT(e.message(), Catch::Contains("hz, preempt, features"));
  CHECK_THAT(e.message(), Catch::Contains("did you mean 'hz'?"));
  CHECK_THAT(std::string(e.what()), Catch::StartsWith("test.yaml:3:3: kernel.hzz: unknown key 'hzz'"));

  ConfigError top = error_of(std::string("durration: 1s\n") + kOneTask);
  CHECK(top.key_path() == "durration");
  CHECK(top.line() == 1);
  CHECK_THAT(top.message(), Catch::Contains("name, duration, warmup, seed, pi_enabled, platform, kernel, tasks"));

  ConfigError in_task = error_of("tasks:\n  - name: t\n    nicee: 3\n    events: [run: 1ms]\n");
  CHECK(in_task.key_path() == "tasks[0].nicee");
  CHECK(in_task.line() == 3);
  CHECK(in_task.column() == 5);
}

TEST_CASE("A value of the wrong type says what was expected", "[config][yaml]") {
  ConfigError cpus = error_of(std::string("platform:\n  cpus: two\n") + kOneTask);
  CHECK(cpus.key_path() == "platform.cpus");
  CHECK(cpus.line() == 2);
  CHECK(cpus.column() == 9);
  CHECK_THAT(cpus.message(), Catch::Contains("expected an integer, got 'two'"));

  ConfigError seq = error_of(std::string("duration: [1s]\n") + kOneTask);
  CHECK(seq.key_path() == "duration");
  CHECK_THAT(seq.message(), Catch::Contains("expected a duration"));
  CHECK_THAT(seq.message(), Catch::Contains("got a sequence"));

  ConfigError boolean = error_of(std::string("pi_enabled: yes\n") + kOneTask);
  CHECK_THAT(boolean.message(), Catch::Contains("expected true or false, got 'yes'"));

  ConfigError platform = error_of(std::string("platform: 4\n") + kOneTask);
  CHECK(platform.key_path() == "platform");
  CHECK_THAT(platform.message(), Catch::Contains("expected a map with keys cpus, name"));
}

TEST_CASE("A nice value outside -20..19 is rejected", "[config][yaml]") {
  ConfigError e = error_of("tasks:\n  - name: t\n    nice: 20\n    events: [run: 1ms]\n");
  CHECK(e.key_path() == "tasks[0].nice");
  CHECK(e.line() == 3);
  CHECK_THAT(e.message(), Catch::Contains("20 is out of range (expected -20..19)"));
  CHECK_NOTHROW(load("tasks:\n  - name: t\n    nice: -20\n    events: [run: 1ms]\n"));
}

TEST_CASE("An unknown policy lists the valid choices", "[config][yaml]") {
  ConfigError e = error_of("tasks:\n  - name: t\n    policy: SCHED_DEADLINE\n    events: [run: 1ms]\n");
  CHECK(e.key_path() == "tasks[0].policy");
  CHECK(e.line() == 3);
  CHECK(e.column() == 13);
  CHECK_THAT(e.message(), Catch::Contains("'SCHED_DEADLINE' is not valid"));
  CHECK_THAT(e.message(), Catch::Contains("SCHED_OTHER, SCHED_NORMAL, SCHED_BATCH, SCHED_IDLE, SCHED_FIFO, SCHED_RR"));
}

TEST_CASE("Priority is required for RT policies and refused for fair ones", "[config][yaml]") {
  ConfigError missing = error_of("tasks:\n  - name: t\n    policy: SCHED_RR\n    events: [run: 1ms]\n");
  CHECK(missing.key_path() == "tasks[0]");
  CHECK_THAT(missing.message(), Catch::Contains("needs 'priority: 1..99'"));

  ConfigError fair = error_of("tasks:\n  - name: t\n    priority: 10\n    events: [run: 1ms]\n");
  CHECK(fair.key_path() == "tasks[0].priority");
  CHECK_THAT(fair.message(), Catch::Contains("nice: -20..19"));

  ConfigError nice = error_of("tasks:\n  - name: t\n    policy: fifo\n    priority: 5\n    nice: 1\n"
                              "    events: [run: 1ms]\n");
  CHECK(nice.key_path() == "tasks[0].nice");

  ConfigError range = error_of("tasks:\n  - name: t\n    policy: fifo\n    priority: 100\n    events: [run: 1ms]\n");
  CHECK_THAT(range.message(), Catch::Contains("expected 1..99"));

  ScenarioParams rr = load("tasks:\n  - name: t\n    policy: SCHED_RR\n    priority: 99\n    events: [run: 1ms]\n");
  CHECK(rr.tasks[0].policy == Policy::kRr);
  CHECK(rr.tasks[0].rt_priority == 99);
}

TEST_CASE("An unknown scheduler feature lists the known features", "[config][yaml]") {
  ConfigError e = error_of(std::string("kernel:\n  features:\n    RUN_TO_PARTY: false\n") + kOneTask);
  CHECK(e.key_path() == "kernel.features.RUN_TO_PARTY");
  CHECK(e.line() == 3);
  CHECK(e.column() == 5);
  CHECK_THAT(e.message(), Catch::Contains("unknown scheduler feature 'RUN_TO_PARTY'"));
  for (const std::string& name : known_sched_features()) CHECK_THAT(e.message(), Catch::Contains(name));
  CHECK_THAT(e.message(), Catch::Contains("did you mean 'RUN_TO_PARITY'?"));

  ConfigError value = error_of(std::string("kernel:\n  features:\n    HRTICK: 1\n") + kOneTask);
  CHECK_THAT(value.message(), Catch::Contains("expected true or false"));
}

// A switch the model does not implement may be named (false, its default
// in every modelled version) but not turned on: silently ignoring it would
// report a kernel that was not simulated.
TEST_CASE("HRTICK and RT_RUNTIME_SHARE cannot be turned on: they are not modelled", "[config][yaml]") {
  for (const char* name : {"HRTICK", "RT_RUNTIME_SHARE"}) {
    CAPTURE(name);
    ConfigError e = error_of(std::string("kernel:\n  features:\n    ") + name + ": true\n" + kOneTask);
    CHECK(e.key_path() == std::string("kernel.features.") + name);
    CHECK(e.line() == 3);
    CHECK_THAT(e.message(), Catch::Contains(std::string(name) + " is not modelled"));
    CHECK_THAT(e.message(), Catch::Contains("only false"));
    ScenarioParams off = load(std::string("kernel:\n  features:\n    ") + name + ": false\n" + kOneTask);
    CHECK(off.kernel.features.at(name) == false);
  }
}

TEST_CASE("Negative and unit-less durations are rejected", "[config][yaml]") {
  ConfigError negative = error_of("tasks:\n  - name: t\n    events:\n      - sleep: -3ms\n");
  CHECK(negative.key_path() == "tasks[0].events[0].sleep");
  CHECK(negative.line() == 4);
  CHECK(negative.column() == 16);
  CHECK_THAT(negative.message(), Catch::Contains("negative"));

  ConfigError unitless = error_of("tasks:\n  - name: t\n    delay: 5\n    events: [run: 1ms]\n");
  CHECK(unitless.key_path() == "tasks[0].delay");
  CHECK_THAT(unitless.message(), Catch::Contains("no unit"));
  CHECK_THAT(unitless.message(), Catch::Contains("ns, us, ms, s"));

  ConfigError unknown_unit = error_of(std::string("duration: 3min\n") + kOneTask);
  CHECK_THAT(unknown_unit.message(), Catch::Contains("unknown unit 'min'"));

  ConfigError zero_period = error_of("tasks:\n  - name: t\n    events:\n      - timer: {ref: a, period: 0}\n");
  CHECK(zero_period.key_path() == "tasks[0].events[0].timer.period");
  CHECK_THAT(zero_period.message(), Catch::Contains("> 0"));

  ConfigError zero_duration = error_of(std::string("duration: 0\n") + kOneTask);
  CHECK(zero_duration.key_path() == "duration");

  // A bare 0 needs no unit.
  ScenarioParams ok = load("tasks:\n  - name: t\n    delay: 0\n    events: [sleep: 0, run: 1.5ms]\n");
  CHECK(ok.tasks[0].delay == Time::zero());
  CHECK(ok.tasks[0].phases[0].events[1].duration == 1500_us);
}

TEST_CASE("A YAML syntax error reports its line and column", "[config][yaml]") {
  ConfigError e = error_of("duration: 1s\ntasks:\n  - name: t\n    events: [run: 1ms\n");
  CHECK(e.file() == "test.yaml");
  CHECK(e.line() >= 4);
  CHECK(e.column() > 0);
  CHECK(e.key_path().empty());
  CHECK_THAT(e.message(), Catch::StartsWith("YAML syntax error"));

  ConfigError indent = error_of("platform:\n  cpus: 2\n name: x\n");
  CHECK(indent.line() == 3);
}

TEST_CASE("YAML nested past yaml-cpp's depth limit is named as such, not as a bad file", "[config][yaml]") {
  const std::string deep = "tasks: " + std::string(3000, '[') + std::string(3000, ']') + "\n";
  const ConfigError e = error_of(deep);
  CHECK(e.line() == 1);
  CHECK_THAT(e.message(), Catch::StartsWith("YAML nested too deeply: yaml-cpp stops past its depth limit"));
  CHECK_THAT(e.message(), !Catch::Contains("bad file"));
}

TEST_CASE("The kernel version is compared as written so 6.10 is not 6.1", "[config][yaml]") {
  CHECK(load(std::string("kernel:\n  version: 6.1\n") + kOneTask).kernel.version == "6.1");
  CHECK(load(std::string("kernel:\n  version: \"6.18\"\n") + kOneTask).kernel.version == "6.18");
  ConfigError e = error_of(std::string("kernel:\n  version: 6.10\n") + kOneTask);
  CHECK(e.key_path() == "kernel.version");
  CHECK_THAT(e.message(), Catch::Contains("'6.10' is not valid (expected one of: 6.1, 6.6, 6.12, 6.18)"));
}

TEST_CASE("Kernel choices and bandwidth limits are validated", "[config][yaml]") {
  CHECK_THAT(error_of(std::string("kernel:\n  hz: 200\n") + kOneTask).message(),
             Catch::Contains("expected one of: 100, 250, 300, 1000"));
  CHECK_THAT(error_of(std::string("kernel:\n  preempt: rt\n") + kOneTask).message(),
             Catch::Contains("none, voluntary, full, lazy"));
  CHECK(load(std::string("kernel:\n  rt_runtime: -1\n") + kOneTask).kernel.rt_runtime < Time::zero());
  ConfigError over = error_of(std::string("kernel:\n  rt_runtime: 2s\n") + kOneTask);
  CHECK(over.key_path() == "kernel.rt_runtime");
  CHECK_THAT(over.message(), Catch::Contains("exceeds rt_period"));
  CHECK_THAT(error_of(std::string("kernel:\n  overheads:\n    ipi: -1us\n") + kOneTask).key_path(),
             Catch::Equals("kernel.overheads.ipi"));
}

TEST_CASE("Affinity accepts lists and range strings within the platform", "[config][yaml]") {
  ScenarioParams s = load("platform: {cpus: 8}\ntasks:\n  - name: t\n    cpus: \"0-3,6\"\n    events: [run: 1ms]\n");
  CHECK(s.tasks[0].cpus == std::vector<int>{0, 1, 2, 3, 6});

  ConfigError beyond = error_of("platform: {cpus: 2}\ntasks:\n  - name: t\n    cpus: [0, 2]\n    events: [run: 1ms]\n");
  CHECK(beyond.key_path() == "tasks[0].cpus[1]");
  CHECK_THAT(beyond.message(), Catch::Contains("expected 0..1"));

  ConfigError range = error_of("platform: {cpus: 2}\ntasks:\n  - name: t\n    cpus: \"0-3\"\n    events: [run: 1ms]\n");
  CHECK_THAT(range.message(), Catch::Contains("CPU 2 does not exist"));

  ConfigError junk = error_of("tasks:\n  - name: t\n    cpus: \"0-\"\n    events: [run: 1ms]\n");
  CHECK_THAT(junk.message(), Catch::Contains("not a CPU list"));
}

TEST_CASE("Task names must be unique and free of blanks", "[config][yaml]") {
  ConfigError blank = error_of("tasks:\n  - name: my task\n    events: [run: 1ms]\n");
  CHECK(blank.key_path() == "tasks[0].name");
  CHECK_THAT(blank.message(), Catch::Contains("whitespace"));

  ConfigError dup = error_of("tasks:\n  - name: a\n    events: [run: 1ms]\n  - name: a\n    events: [run: 1ms]\n");
  CHECK(dup.key_path() == "tasks[1].name");
  CHECK(dup.line() == 4);

  ConfigError missing = error_of("tasks:\n  - events: [run: 1ms]\n");
  CHECK_THAT(missing.message(), Catch::Contains("missing required key 'name'"));
}

TEST_CASE("Events are checked for kind, value and references", "[config][yaml]") {
  ConfigError unknown = error_of("tasks:\n  - name: t\n    events:\n      - spin: 1ms\n");
  CHECK(unknown.key_path() == "tasks[0].events[0].spin");
  CHECK_THAT(unknown.message(), Catch::Contains("valid events: run, runtime, sleep, timer"));

  ConfigError bare = error_of("tasks:\n  - name: t\n    events:\n      - run\n");
  CHECK_THAT(bare.message(), Catch::Contains("'run' needs a value"));

  ConfigError two = error_of("tasks:\n  - name: t\n    events:\n      - {run: 1ms, sleep: 1ms}\n");
  CHECK_THAT(two.message(), Catch::Contains("single-key map"));

  ConfigError resume = error_of("tasks:\n  - name: t\n    events:\n      - resume: ghost\n");
  CHECK(resume.key_path() == "tasks[0].events[0].resume");
  CHECK(resume.line() == 4);
  CHECK_THAT(resume.message(), Catch::Contains("unknown task 'ghost'"));

  ConfigError mode = error_of("tasks:\n  - name: t\n    events:\n      - timer: {ref: a, period: 1ms, mode: abs}\n");
  CHECK(mode.key_path() == "tasks[0].events[0].timer.mode");
  CHECK_THAT(mode.message(), Catch::Contains("absolute, relative"));

  ConfigError wait = error_of("tasks:\n  - name: t\n    events:\n      - wait: {ref: c}\n");
  CHECK_THAT(wait.message(), Catch::Contains("missing required key 'mutex'"));

  ConfigError yield = error_of("tasks:\n  - name: t\n    events:\n      - yield: 3\n");
  CHECK_THAT(yield.message(), Catch::Contains("takes no value"));

  ConfigError both = error_of("tasks:\n  - name: t\n    events: [run: 1ms]\n    phases: [{events: [run: 1ms]}]\n");
  CHECK_THAT(both.message(), Catch::Contains("not both"));

  ConfigError loop = error_of("tasks:\n  - name: t\n    loop: 0\n    events: [run: 1ms]\n");
  CHECK_THAT(loop.message(), Catch::Contains("never runs"));
}

TEST_CASE("A custom slice must be 0.1ms to 100ms on a fair task", "[config][yaml]") {
  CHECK(load("tasks:\n  - name: t\n    slice: 0.1ms\n    events: [run: 1ms]\n").tasks[0].slice == 100_us);
  CHECK_THAT(error_of("tasks:\n  - name: t\n    slice: 50us\n    events: [run: 1ms]\n").message(),
             Catch::Contains("0.1ms..100ms"));
  CHECK_THAT(error_of("tasks:\n  - name: t\n    policy: fifo\n    priority: 1\n    slice: 1ms\n"
                      "    events: [run: 1ms]\n").message(),
             Catch::Contains("fair tasks"));
  ConfigError old =
      error_of("kernel: {version: \"6.6\"}\ntasks:\n  - name: t\n    slice: 1ms\n    events: [run: 1ms]\n");
  CHECK(old.key_path() == "tasks[0].slice");
  CHECK_THAT(old.message(), Catch::Contains("from 6.12"));
}

TEST_CASE("A task's timer_slack is a duration up to 10 s on a fair task", "[config][yaml]") {
  CHECK(load("tasks:\n  - name: t\n    timer_slack: 40ms\n    events: [run: 1ms]\n").tasks[0].timer_slack == 40_ms);
  CHECK_FALSE(load("tasks:\n  - name: t\n    events: [run: 1ms]\n").tasks[0].timer_slack.has_value());
  ConfigError rt = error_of("tasks:\n  - name: t\n    policy: fifo\n    priority: 1\n    timer_slack: 1ms\n"
                            "    events: [run: 1ms]\n");
  CHECK(rt.key_path() == "tasks[0].timer_slack");
  CHECK(rt.line() == 5);
  CHECK_THAT(rt.message(), Catch::Contains("applies to fair tasks"));
  CHECK_THAT(error_of("tasks:\n  - name: t\n    timer_slack: 11s\n    events: [run: 1ms]\n").message(),
             Catch::Contains("expected 0..10s"));
  CHECK_THAT(error_of("tasks:\n  - name: t\n    timer_slack: -1ms\n    events: [run: 1ms]\n").key_path(),
             Catch::Equals("tasks[0].timer_slack"));
}

TEST_CASE("A duplicate key is an error rather than a silent override", "[config][yaml]") {
  ConfigError e = error_of(std::string("seed: 1\nseed: 2\n") + kOneTask);
  CHECK(e.key_path() == "seed");
  CHECK(e.line() == 2);
  CHECK_THAT(e.message(), Catch::Contains("duplicate key"));
}

TEST_CASE("A task name may not repeat a thread name another task's instances make", "[config][yaml]") {
  // Reports and metrics key on thread names: a-0 and a's instance 0 would
  // be two rows called a-0.
  ConfigError e = error_of(
      "tasks:\n  - name: a-0\n    events: [run: 1ms]\n  - name: a\n    instances: 2\n    events: [run: 1ms]\n");
  CHECK(e.key_path() == "tasks[1].name");
  CHECK(e.line() == 4);
  CHECK_THAT(e.message(), Catch::Contains("task name 'a-0' is also a thread of task 'a' (instances: 2 are named a-0 .. a-1)"));
  // Distinct names with instances are fine.
  CHECK_NOTHROW(load_scenario_yaml(
      "tasks:\n  - name: a\n    instances: 2\n    events: [run: 1ms]\n  - name: a-2\n    events: [run: 1ms]\n",
      "test.yaml"));
}

TEST_CASE("Warmup must leave time to measure", "[config][yaml]") {
  ConfigError e = error_of(std::string("duration: 1s\nwarmup: 1s\n") + kOneTask);
  CHECK(e.key_path() == "warmup");
}

TEST_CASE("ConfigError prints as one line with file, position and key path", "[config]") {
  ConfigError full("a.yaml", 3, 7, "kernel.hz", "bad");
  CHECK(std::string(full.what()) == "a.yaml:3:7: kernel.hz: bad");
  ConfigError nowhere("a.yaml", 0, 0, "", "cannot read file");
  CHECK(std::string(nowhere.what()) == "a.yaml: cannot read file");
}

TEST_CASE("An unreadable scenario file is a ConfigError naming the file", "[config]") {
  try {
    load_scenario_file("/nonexistent/scenario.yaml");
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK(e.file() == "/nonexistent/scenario.yaml");
    CHECK_THAT(e.message(), Catch::Contains("cannot read file"));
  }
}

#ifdef SCHEDLAB_SOURCE_DIR
TEST_CASE("Every example scenario in configs/scenarios loads without warnings", "[config][examples]") {
  namespace fs = std::filesystem;
  int count = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(SCHEDLAB_SOURCE_DIR) / "configs" / "scenarios")) {
    if (entry.path().extension() != ".yaml") continue;
    INFO(entry.path().string());
    ScenarioParams s = load_scenario_file(entry.path().string());
    CHECK_FALSE(s.tasks.empty());
    CHECK(s.warnings.empty());
    ++count;
  }
  CHECK(count >= 3);
}

TEST_CASE("Every shipped experiment and sweep loads with its variants", "[config][examples]") {
  // load_experiment_file() / load_sweep_file() apply every variant's
  // overlays to the scenario, so a key path or value the scenario refuses
  // (e.g. an Android-only binder flag without android: true) fails here.
  namespace fs = std::filesystem;
  int count = 0;
  for (const char* folder : {"experiments", "sweeps"}) {
    for (const auto& entry : fs::directory_iterator(fs::path(SCHEDLAB_SOURCE_DIR) / "configs" / folder)) {
      if (entry.path().extension() != ".yaml") continue;
      INFO(entry.path().string());
      const ExperimentSpec e = std::string(folder) == "sweeps" ? load_sweep_file(entry.path().string())
                                                               : load_experiment_file(entry.path().string());
      CHECK_FALSE(e.variants.empty());
      ++count;
    }
  }
  CHECK(count >= 10);
}

TEST_CASE("The example scenarios have the shapes their comments promise", "[config][examples]") {
  const std::string dir = std::string(SCHEDLAB_SOURCE_DIR) + "/configs/scenarios/";
  ScenarioParams hogs = load_scenario_file(dir + "two_hogs.yaml");
  CHECK(hogs.platform.cpus == 1);
  REQUIRE(hogs.tasks.size() == 2);
  for (const TaskSpec& t : hogs.tasks) {
    CHECK(t.nice == 0);
    CHECK(t.cpus == std::vector<int>{0});
  }

  ScenarioParams mixed = load_scenario_file(dir + "mixed_2cpu.yaml");
  CHECK(mixed.platform.cpus == 2);
  int threads = 0;
  for (const TaskSpec& t : mixed.tasks) threads += t.instances;
  CHECK(threads == 10);
}

TEST_CASE("The README key reference matches the loader declarations", "[config][docs]") {
  std::ifstream in(std::string(SCHEDLAB_SOURCE_DIR) + "/configs/README.md");
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  // Regenerate with yaml_schema_markdown() when a declaration changes.
  CHECK_THAT(text.str(), Catch::Contains(yaml_schema_markdown()));
}
#endif

TEST_CASE("A guess is offered only when one valid name is closest", "[config][names]") {
  // "6.10" is one edit from 6.1, 6.12 and 6.18: suggesting 6.1, the very
  // confusion the docs warn about, would mislead; the choices are listed.
  ConfigError tie = error_of(std::string("kernel: {version: \"6.10\"}\n") + kOneTask);
  CHECK_THAT(tie.message(), Catch::Contains("expected one of: 6.1, 6.6, 6.12, 6.18"));
  CHECK_THAT(tie.message(), !Catch::Contains("did you mean"));
  ConfigError one = error_of(std::string("kernel: {version: \"6.122\"}\n") + kOneTask);
  CHECK_THAT(one.message(), Catch::Contains("did you mean '6.12'?"));
}

TEST_CASE("A wait nobody signals and a timer used with two periods are warned about", "[config][yaml]") {
  const ScenarioParams s = load_scenario_yaml(
      "tasks:\n"
      "  - name: a\n"
      "    events: [{timer: {ref: vs, period: 10ms}}, {lock: m}, {wait: {ref: c, mutex: m}}, {unlock: m}]\n"
      "  - name: b\n"
      "    events: [{run: 1ms}, {timer: {ref: vs, period: 20ms}}, {wait: {ref: d, mutex: n}}]\n"
      "  - name: c\n"
      "    events: [{run: 1ms}, {signal: d}, {sleep: 1ms}]\n",
      "test.yaml");
  REQUIRE(s.warnings.size() == 2);
  CHECK_THAT(s.warnings[0].text(), Catch::Contains("test.yaml:3:") && Catch::Contains("timer 'vs' is used with periods 10.000ms and 20.000ms"));
  CHECK_THAT(s.warnings[1].text(), Catch::Contains("tasks[0].events[2].wait") &&
                                Catch::Contains("no task signals or broadcasts condition 'c'"));
}

// A cpuidle governor on a platform without idle states (the generic
// {cpus: N}) has nothing to choose: a warning at the key, with the file's
// line, like every other configuration warning.
TEST_CASE("a cpuidle governor on a platform without idle states is warned about at its key", "[config][cpuidle]") {
  const ScenarioParams s = load("platform: {cpus: 2}\nkernel:\n  cpuidle: {governor: teo}\n"
                                "tasks: [{name: a, events: [{run: 1ms}, {sleep: 1ms}]}]\n");
  REQUIRE(s.warnings.size() == 1);
  CHECK_THAT(s.warnings[0].text(), Catch::Contains("test.yaml:3:") && Catch::Contains("kernel.cpuidle.governor") &&
                                Catch::Contains("governor 'teo' has no idle states to choose from"));
  CHECK(load("platform: gs101\nkernel:\n  cpuidle: {governor: teo}\n"
             "tasks: [{name: a, events: [{run: 1ms}, {sleep: 1ms}]}]\n")
            .warnings.empty());
}

TEST_CASE("an empty task list is called empty", "[config]") {
  const ConfigError e = error_of("tasks: []\n");
  CHECK(e.key_path() == "tasks");
  CHECK_THAT(e.message(), Catch::Contains("expected a non-empty sequence of tasks, got an empty sequence"));
}

TEST_CASE("a control character in a task name is shown escaped", "[config]") {
  // A raw ESC would garble the terminal and a NUL would cut the message.
  const ConfigError esc = error_of("tasks:\n  - {name: \"a\\eb\", events: [{run: 1ms}]}\n");
  CHECK(esc.key_path() == "tasks[0].name");
  CHECK(esc.message() == "task name 'a\\x1bb' contains a control character");
  const ConfigError nul = error_of("tasks:\n  - {name: \"a\\0b\", events: [{run: 1ms}]}\n");
  CHECK(nul.message() == "task name 'a\\x00b' contains a control character");
}

// Found by fuzzing the loaders: each of these was refused only later, by the
// model, without a file, line or key (or with a message cut short), or not
// at all.
TEST_CASE("bad platform and display and device and rt-app inputs are refused at their key", "[config]") {
  const std::string head = "name: t\nduration: 20ms\n";
  SECTION("a cluster whose capacity rounds down to 0") {
    const ConfigError e = error_of(head +
                                   "platform:\n"
                                   "  clusters:\n"
                                   "    - {name: little, cpus: 1, capacity_dmips_mhz: 1, opps: [{freq: 1GHz}]}\n"
                                   "    - {name: big, cpus: 1, capacity_dmips_mhz: 1024, opps: [{freq: 3GHz}]}\n" +
                                   kOneTask);
    CHECK_THAT(e.what(), Catch::StartsWith("test.yaml:5:51: platform.clusters[0].capacity_dmips_mhz: cluster 'little' "
                                           "gets capacity 0"));
  }
  SECTION("frequencies and capacity-dmips-mhz beyond any CPU") {
    CHECK_THAT(error_of(head + "platform:\n  clusters:\n    - {name: c, cpus: 1, opps: [{freq: 4294967296kHz}]}\n" +
                        kOneTask)
                   .what(),
               Catch::Contains("platform.clusters[0].opps[0].freq: '4294967296kHz' is too high"));
    CHECK_THAT(error_of(head +
                        "platform:\n  clusters:\n    - {name: c, cpus: 1, capacity_dmips_mhz: 4294967295, opps: "
                        "[{freq: 1GHz}]}\n" +
                        kOneTask)
                   .what(),
               Catch::Contains("platform.clusters[0].capacity_dmips_mhz:"));
  }
  SECTION("more idle states than CPUIDLE_STATE_MAX") {
    std::string states;
    for (int i = 0; i < 11; ++i)
      states += fmt::format("{}{{name: s{}, entry_latency: 0, exit_latency: {}us, min_residency: {}us}}", i ? ", " : "", i, i + 1, i + 1);
    const ConfigError e = error_of(head + "platform:\n  clusters:\n    - {name: c, cpus: 1, opps: [{freq: 1GHz}], "
                                          "cpu_idle_states: [" + states + "]}\n" + kOneTask);
    CHECK_THAT(e.what(), Catch::Contains("platform.clusters[0].cpu_idle_states: 11 idle states, more than "
                                         "CPUIDLE_STATE_MAX (10) allows"));
  }
  SECTION("a refresh rate that makes the default animation shorter than a vsync period") {
    const ConfigError e =
        error_of(head + "platform: {cpus: 2}\ndevices: [{name: s, model: display, refresh_rate: 1Hz}]\n" + kOneTask);
    CHECK_THAT(e.what(), Catch::Contains("devices[0].refresh_rate: an animation must last at least one vsync period") &&
                             Catch::Contains("(the default 'animation')"));
  }
  SECTION("a runtime PM device that is its own parent") {
    const ConfigError e = error_of(head + "platform: {cpus: 1}\npm_runtime:\n  devices: [{name: d, parent: d}]\n" +
                                   kOneTask);
    CHECK_THAT(e.what(), Catch::Contains("pm_runtime.devices[0].parent: device 'd' cannot be its own parent"));
  }
  SECTION("an rt-app task name with a NUL or an escape: the message is whole, the character escaped") {
    try {
      import_rtapp_json("{\"tasks\": {\"t\\u0000x\": {\"run\": 1000, \"sleep\": 1000}}}", "n.json");
      FAIL("expected a ConfigError");
    } catch (const ConfigError& e) {
      CHECK_THAT(e.what(), Catch::Contains("tasks.t\\x00x: task name 't\\x00x' contains a control character"));
    }
  }
  SECTION("rt-app JSON may start with a byte order mark, as YAML may") {
    const ScenarioParams p = import_rtapp_json("\xEF\xBB\xBF{\"tasks\": {\"t\": {\"run\": 1000, \"sleep\": 1000}}}", "b.json");
    CHECK(p.tasks.size() == 1);
  }
}

TEST_CASE("a second YAML document in a file is an error, not ignored", "[config]") {
  const ConfigError e = error_of(std::string("name: t\nplatform: {cpus: 1}\n") + kOneTask + "---\nname: u\n");
  CHECK_THAT(e.what(), Catch::StartsWith("test.yaml:8:1: a second YAML document ('---')"));
}

// Switches and tunables a version does not have load, with a warning at
// their line saying they change nothing (the kernel would refuse them).
TEST_CASE("kernel switches and tunables the version lacks load with a warning", "[config][yaml]") {
  auto warnings_of = [](const std::string& kernel) {
    return load_scenario_yaml("kernel: " + kernel + "\ntasks:\n  - {name: t, events: [{run: 1ms}, {sleep: 1ms}]}\n",
                              "k.yaml")
        .warnings;
  };
  auto texts = [](const std::vector<schedlab::config::ConfigWarning>& ws) {
    std::vector<std::string> out;
    for (const auto& x : ws) out.push_back(x.text());
    return out;
  };
  std::vector<std::string> w = texts(warnings_of("{version: \"6.1\", features: {NEXT_BUDDY: true, RUN_TO_PARITY: false}}"));
  REQUIRE(w.size() == 1);
  CHECK_THAT(w[0], Catch::Contains("k.yaml:1:") && Catch::Contains("kernel.features.RUN_TO_PARITY") &&
                       Catch::Contains("RUN_TO_PARITY is EEVDF's (6.6+); this version's CFS has no such switch: on "
                                       "6.1 setting it changes nothing"));
  w = texts(warnings_of("{version: \"6.6\", features: {GENTLE_FAIR_SLEEPERS: false, PICK_BUDDY: true}}"));
  REQUIRE(w.size() == 2);
  CHECK_THAT(w[0], Catch::Contains("GENTLE_FAIR_SLEEPERS is CFS's (before 6.6)"));
  CHECK_THAT(w[1], Catch::Contains("PICK_BUDDY is 6.12's; this version picks the next buddy by NEXT_BUDDY"));
  w = texts(warnings_of("{version: \"6.6\", features: {DELAY_DEQUEUE: true, RUN_TO_PARITY: false}}"));
  REQUIRE(w.size() == 1);
  CHECK_THAT(w[0], Catch::Contains("kernel.features.DELAY_DEQUEUE") &&
                       Catch::Contains("DELAY_DEQUEUE came with 6.12; 6.6 has no such switch: modelled on 6.6 anyway"));
  CHECK(warnings_of("{version: \"6.6\", features: {DELAY_DEQUEUE: false, PREEMPT_SHORT: false}}").empty());
  CHECK(warnings_of("{version: \"6.12\", features: {PICK_BUDDY: false}}").empty());
  CHECK(warnings_of("{version: \"6.18\", features: {PICK_BUDDY: false, DELAY_DEQUEUE: false}}").empty());
  w = texts(warnings_of("{version: \"6.1\", base_slice: 3ms, sched_latency: 24ms}"));
  REQUIRE(w.size() == 1);
  CHECK_THAT(w[0], Catch::Contains("kernel.base_slice") && Catch::Contains("on 6.1 it changes nothing"));
  w = texts(warnings_of("{version: \"6.12\", wakeup_granularity: 4ms}"));
  REQUIRE(w.size() == 1);
  CHECK_THAT(w[0], Catch::Contains("kernel.wakeup_granularity: wakeup_granularity is CFS's"));
  w = texts(warnings_of("{version: \"6.6\", preempt: lazy}"));
  REQUIRE(w.size() == 1);
  CHECK_THAT(w[0], Catch::Contains("k.yaml:1:") && Catch::Contains("kernel.preempt: lazy exists from Linux 6.13"));
  CHECK(warnings_of("{version: \"6.18\", preempt: lazy, base_slice: 3ms}").empty());
}

