// The `setaffinity` event: a task changing its own CPU mask, or another
// task's threads', while it runs (sched_setaffinity(): 6.12
// __set_cpus_allowed_ptr_locked(), affine_move_task() and the stopper's
// migration_cpu_stop(), models/kernel/sched/affinity.cc).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "config_test_util.h"
#include "models/config/config.h"
#include "models/errors.h"
#include "sched_test_util.h"

using namespace schedlab;
using namespace schedlab::testing;

namespace {

EventSpec ev_setaffinity(std::vector<int> cpus, const std::string& task = "") {
  EventSpec e;
  e.kind = EventSpec::Kind::kSetAffinity;
  e.cpus = std::move(cpus);
  e.name = task;
  return e;
}

// `events` once, then a long sleep.
TaskSpec once(const std::string& name, std::vector<EventSpec> events, Policy policy = Policy::kNormal, int prio = 0) {
  events.push_back(ev_sleep(Time::s(1)));
  TaskSpec t = task(name, std::move(events), policy, prio);
  t.loop = 1;
  t.phases[0].loop = 1;
  return t;
}

struct Migration {
  Time t;
  std::string comm;
  int from, to;
  bool operator==(const Migration&) const = default;
};

class MigrationLog : public SchedObserver {
 public:
  void on_migrate(Time t, const Task& p, int from, int to) override { log.push_back({t, p.comm, from, to}); }
  std::vector<Migration> log;
};

struct AffinityRun {
  explicit AffinityRun(const ScenarioParams& p) : sys(p, 1) {
    sys.add_observer(&sw);
    sys.add_observer(&mig);
    sys.run();
  }
  // The switches on `cpu` as (time, prev, prev_state, next).
  std::vector<std::tuple<Time, std::string, char, std::string>> switches_on(int cpu) const {
    std::vector<std::tuple<Time, std::string, char, std::string>> v;
    for (const SwitchRecord& r : sw.log)
      if (r.cpu == cpu) v.emplace_back(r.t, r.prev, r.prev_state, r.next);
    return v;
  }
  System sys;
  SwitchLog sw;
  MigrationLog mig;
};

// Two CPUs, no overheads. `a` starts on CPU 0 (its mask), runs 1 ms, asks
// for CPU 1 only, runs 1 ms, widens its mask to both CPUs (its CPU stays
// allowed: nothing moves), runs 1 ms, asks for CPU 0 only, runs 1 ms and
// sleeps.
ScenarioParams round_trip(PreemptModel preempt) {
  ScenarioParams p = exact_scenario("6.12", 1000, 2);
  p.kernel.preempt = preempt;
  p.duration = Time::ms(10);
  TaskSpec a = on_cpus(task("a", {ev_run(Time::ms(1)), ev_setaffinity({1}), ev_run(Time::ms(1)),
                                  ev_setaffinity({0, 1}), ev_run(Time::ms(1)), ev_setaffinity({0}),
                                  ev_run(Time::ms(1)), ev_sleep(Time::s(1))}),
                       {0});
  a.loop = 1;
  a.phases[0].loop = 1;
  p.tasks = {a};
  return p;
}

}  // namespace

TEST_CASE("setaffinity events in YAML", "[setaffinity][config]") {
  ScenarioParams s = load_scenario_yaml(
      "platform: {cpus: 4}\ntasks:\n  - name: t\n    events: [setaffinity: [3, 1], run: 1ms, setaffinity: \"0-2\"]\n",
      "test.yaml");
  const auto& ev = s.tasks.at(0).phases.at(0).events;
  REQUIRE(ev.size() == 3);
  CHECK(ev[0].kind == EventSpec::Kind::kSetAffinity);
  CHECK(ev[0].cpus == std::vector<int>{1, 3});
  CHECK(ev[2].cpus == std::vector<int>{0, 1, 2});

  auto bad = [](const std::string& event) {
    return error_of("platform: {cpus: 4}\ntasks:\n  - name: t\n    events: [" + event + ", run: 1ms]\n");
  };
  ConfigError beyond = bad("setaffinity: [4]");
  CHECK(beyond.key_path() == "tasks[0].events[0].setaffinity[0]");
  ConfigError empty = bad("setaffinity: []");
  CHECK(empty.key_path() == "tasks[0].events[0].setaffinity");
  CHECK_THAT(empty.message(), Catch::Contains("at least one CPU"));
  CHECK(bad("setaffinity: {cpus: [5]}").key_path() == "tasks[0].events[0].setaffinity.cpus[0]");
  CHECK(bad("setaffinity: {task: t}").key_path() == "tasks[0].events[0].setaffinity");
  ConfigError unknown = bad("setaffinity: {task: u, cpus: [1]}");
  CHECK(unknown.key_path() == "tasks[0].events[0].setaffinity.task");
  CHECK_THAT(unknown.message(), Catch::Contains("setaffinity names unknown task 'u'"));

  ScenarioParams other = load_scenario_yaml(
      "platform: {cpus: 4}\ntasks:\n  - name: t\n    events: [setaffinity: {task: t, cpus: \"2-3\"}, "
      "setaffinity: {cpus: [1]}, run: 1ms]\n",
      "test.yaml");
  const auto& oe = other.tasks.at(0).phases.at(0).events;
  CHECK(oe.at(0).name == "t");
  CHECK(oe.at(0).cpus == std::vector<int>{2, 3});
  CHECK(oe.at(1).name.empty());
  CHECK(oe.at(1).cpus == std::vector<int>{1});
}

// PREEMPT_FULL: at 1 ms the stopper's wake-up preempts `a` (still
// runnable: prev_state R) and moves it, queued, to CPU 1, which runs it at
// once; the mask widened at 2 ms keeps it there; at 3 ms it is moved back.
// Its work is not delayed: it sleeps at 4 ms.
TEST_CASE("a task that takes its CPU out of its mask is moved at once by the stopper", "[setaffinity]") {
  AffinityRun run(round_trip(PreemptModel::kFull));
  CHECK(run.mig.log == std::vector<Migration>{{Time::ms(1), "a", 0, 1}, {Time::ms(3), "a", 1, 0}});
  using S = std::vector<std::tuple<Time, std::string, char, std::string>>;
  CHECK(run.switches_on(0) == S{{Time::zero(), "idle", 'R', "a"},
                               {Time::ms(1), "a", 'R', "idle"},
                               {Time::ms(3), "idle", 'R', "a"},
                               {Time::ms(4), "a", 'S', "idle"}});
  CHECK(run.switches_on(1) == S{{Time::ms(1), "idle", 'R', "a"}, {Time::ms(3), "a", 'R', "idle"}});
  const Task& a = find_task(run.sys.kernel(), "a");
  CHECK(a.nr_cpus_allowed == 1);
  CHECK(a.cpus_allowed[0]);
  CHECK(a.work_done == Time::ms(4).count());
}

// PREEMPT_NONE: nothing preempts the caller; it sleeps in
// wait_for_completion() (TASK_UNINTERRUPTIBLE: prev_state D), the stopper
// sets its wake_cpu to the destination and wakes it: select_task_rq()
// places it from there (here the mask's only CPU).
TEST_CASE("under PREEMPT_NONE the caller sleeps until the stopper wakes it on an allowed CPU", "[setaffinity]") {
  AffinityRun run(round_trip(PreemptModel::kNone));
  CHECK(run.mig.log == std::vector<Migration>{{Time::ms(1), "a", 0, 1}, {Time::ms(3), "a", 1, 0}});
  using S = std::vector<std::tuple<Time, std::string, char, std::string>>;
  CHECK(run.switches_on(0) == S{{Time::zero(), "idle", 'R', "a"},
                               {Time::ms(1), "a", 'D', "idle"},
                               {Time::ms(3), "idle", 'R', "a"},
                               {Time::ms(4), "a", 'S', "idle"}});
  CHECK(run.switches_on(1) == S{{Time::ms(1), "idle", 'R', "a"}, {Time::ms(3), "a", 'D', "idle"}});
}

// The destination is cpumask_any_and_distribute() on the caller's CPU:
// the first CPU of the new mask after the one that CPU's previous call
// returned (0 at boot). From CPU 0, mask {1,2,3}: CPU 1. From CPU 1, mask
// {0}: CPU 0. From CPU 0 again, mask {1,2,3}: after 1, CPU 2.
// Under PREEMPT_NONE the same: the stopper leaves the destination as the
// sleeping caller's wake_cpu, where select_task_rq() starts.
TEST_CASE("the stopper's destination rotates through the new mask per calling CPU", "[setaffinity]") {
  const PreemptModel model = GENERATE(PreemptModel::kFull, PreemptModel::kNone);
  ScenarioParams p = exact_scenario("6.12", 1000, 4);
  p.kernel.preempt = model;
  p.duration = Time::ms(10);
  TaskSpec a = on_cpus(task("a", {ev_run(Time::ms(1)), ev_setaffinity({1, 2, 3}), ev_run(Time::ms(1)),
                                  ev_setaffinity({0}), ev_run(Time::ms(1)), ev_setaffinity({1, 2, 3}),
                                  ev_run(Time::ms(1)), ev_sleep(Time::s(1))}),
                       {0});
  a.loop = 1;
  a.phases[0].loop = 1;
  p.tasks = {a};
  AffinityRun run(p);
  CHECK(run.mig.log ==
        std::vector<Migration>{{Time::ms(1), "a", 0, 1}, {Time::ms(2), "a", 1, 0}, {Time::ms(3), "a", 0, 2}});
}

// After the move the mask holds: `a` and the hog `b` (pinned) share CPU 1
// while CPU 0 idles, and no balance (newly idle, nohz idle, periodic)
// pulls `a` back until it widens its mask again, after its 20 ms of work
// at half the CPU (about 41 ms): then one soon does.
TEST_CASE("a mask set at run time keeps balancing away until it is widened", "[setaffinity]") {
  ScenarioParams p = exact_scenario("6.12", 1000, 2);
  p.duration = Time::ms(200);
  TaskSpec a = task("a", {ev_run(Time::ms(1)), ev_setaffinity({1}), ev_run(Time::ms(20)), ev_setaffinity({0, 1}),
                          ev_run(Time::s(10))});
  a.loop = 1;
  a.phases[0].loop = 1;
  p.tasks = {on_cpus(a, {0}), on_cpus(hog("b"), {1})};
  AffinityRun run(p);
  REQUIRE(run.mig.log.size() >= 2);
  CHECK(run.mig.log[0] == Migration{Time::ms(1), "a", 0, 1});
  CHECK(run.mig.log[1].comm == "a");
  CHECK(run.mig.log[1].from == 1);
  CHECK(run.mig.log[1].to == 0);
  CHECK(run.mig.log[1].t > Time::ms(40));
  CHECK(run.mig.log[1].t < Time::ms(100));
  for (const SwitchRecord& r : run.sw.log)
    if (r.cpu == 0 && r.t > Time::ms(1) && r.t < Time::ms(40)) CHECK(r.next == "idle");
}

// An RT task that moves itself to one CPU stays there: preempted by a
// higher-priority one, it waits although CPU 0 is idle (pushable needs
// nr_cpus_allowed > 1 in enqueue_task_rt() and put_prev_task_rt()). Given
// CPUs 1 and 2 instead, it is pushed to the idle CPU 2 at once.
TEST_CASE("an RT task that moves itself to one CPU waits there, given two it is pushed", "[setaffinity][rt]") {
  auto run_with = [](std::vector<int> mask) {
    ScenarioParams p = exact_scenario("6.12", 1000, 3);
    p.duration = Time::ms(20);
    TaskSpec a = once("a", {ev_run(Time::ms(1)), ev_setaffinity(std::move(mask)), ev_run(Time::ms(5))},
                      Policy::kFifo, 10);
    TaskSpec b = on_cpus(once("b", {ev_run(Time::ms(1))}, Policy::kFifo, 20), {1});
    b.delay = Time::ms(2);
    p.tasks = {on_cpus(a, {0}), b};
    return AffinityRun(p);
  };
  AffinityRun pinned = run_with({1});
  CHECK(pinned.mig.log == std::vector<Migration>{{Time::ms(1), "a", 0, 1}});
  using S = std::vector<std::tuple<Time, std::string, char, std::string>>;
  CHECK(pinned.switches_on(1) == S{{Time::ms(1), "idle", 'R', "a"},
                                  {Time::ms(2), "a", 'R', "b"},
                                  {Time::ms(3), "b", 'S', "a"},
                                  {Time::ms(7), "a", 'S', "idle"}});
  // CPUs 1 and 2: the stopper's destination is CPU 1 (the cursor's next
  // after 0); preempted there at 2 ms, `a` is pushable and pushed to CPU 2.
  AffinityRun two = run_with({1, 2});
  CHECK(two.mig.log == std::vector<Migration>{{Time::ms(1), "a", 0, 1}, {Time::ms(2), "a", 1, 2}});
  CHECK(find_task(two.sys.kernel(), "a").nr_cpus_allowed == 2);
}

// The cursor moves at every changed mask, also when the task stays: from
// CPU 0, mask {0..3} (no move; cursor -> 1), then {1,2,3}: CPU 2.
TEST_CASE("the destination cursor advances even when the task stays", "[setaffinity]") {
  ScenarioParams p = exact_scenario("6.12", 1000, 4);
  p.duration = Time::ms(10);
  p.tasks = {on_cpus(once("a", {ev_run(Time::ms(1)), ev_setaffinity({0, 1, 2, 3}), ev_run(Time::ms(1)),
                                ev_setaffinity({1, 2, 3}), ev_run(Time::ms(1))}),
                     {0})};
  AffinityRun run(p);
  CHECK(run.mig.log == std::vector<Migration>{{Time::ms(2), "a", 0, 2}});
}

// PREEMPT_NONE with delayed dequeue: `a` has run past its share on CPU 0
// (negative lag against the hog) when it asks for CPU 1 at 7.5 ms, so its
// sleep in wait_for_completion() leaves it queued, delayed; the stopper
// moves it queued and the wake-up requeues it there. It never runs on
// CPU 0 again. (Timeline: a alone 0-1 ms, hog 1-4 ms, a 4-7.5 ms.)
TEST_CASE("under PREEMPT_NONE a caller left delayed by its sleep is moved queued", "[setaffinity]") {
  ScenarioParams p = exact_scenario("6.12", 250, 2);
  p.kernel.preempt = PreemptModel::kNone;
  p.duration = Time::ms(20);
  TaskSpec hogt = on_cpus(hog("hog"), {0});
  hogt.delay = Time::ms(1);
  p.tasks = {on_cpus(once("a", {ev_run(Time::us(4500)), ev_setaffinity({1}), ev_run(Time::ms(1))}), {0}), hogt};
  AffinityRun run(p);
  CHECK(run.mig.log == std::vector<Migration>{{Time::us(7500), "a", 0, 1}});
  using S = std::vector<std::tuple<Time, std::string, char, std::string>>;
  CHECK(run.switches_on(1) == S{{Time::us(7500), "idle", 'R', "a"}, {Time::us(8500), "a", 'S', "idle"}});
  for (const SwitchRecord& r : run.sw.log)
    if (r.cpu == 0 && r.t >= Time::us(7500)) CHECK(r.next != "a");
}

// A kernel thread under PREEMPT_VOLUNTARY whose setaffinity is the first
// event after it wakes (reached inside the __schedule() that switched it
// in) still leaves for the stopper: wait_for_completion()'s might_resched().
TEST_CASE("a kernel thread under PREEMPT_VOLUNTARY leaves at once for the stopper", "[setaffinity]") {
  ScenarioParams p = exact_scenario("6.12", 1000, 2);
  p.kernel.preempt = PreemptModel::kVoluntary;
  p.duration = Time::ms(20);
  TaskSpec a = on_cpus(once("a", {ev_sleep(Time::ms(1)), ev_setaffinity({1}), ev_run(Time::ms(1))}), {0});
  a.kernel_thread = true;
  p.tasks = {a};
  AffinityRun run(p);
  CHECK(run.mig.log == std::vector<Migration>{{Time::ms(1), "a", 0, 1}});
  CHECK(find_task(run.sys.kernel(), "a").work_done == Time::ms(1).count());
}

// set_cpus_allowed_fair() refreshes p->max_allowed_capacity (the misfit
// test's "biggest CPU it may use"); an RT task's change does not, until
// switched_to_fair() (6.10+). gs101: CPUs 0-3 little, 4-5 mid, 6-7 big.
TEST_CASE("max_allowed_capacity follows a run-time mask into the fair class", "[setaffinity]") {
  ScenarioParams p = gs101_scenario(
      "duration: 20ms\ntasks:\n"
      "  - name: f\n    events: [run: 1ms, setaffinity: \"0-3\", run: 1ms, sleep: 1s]\n"
      "  - name: r\n    policy: fifo\n    priority: 10\n"
      "    events: [run: 1ms, setaffinity: [4, 5], setscheduler: {policy: other}, run: 1ms, sleep: 1s]\n");
  System sys(p, 1);
  sys.run();
  Kernel& k = sys.kernel();
  CHECK(k.max_allowed_capacity(find_task(k, "f")) == k.rq(0).capacity);
  CHECK(k.max_allowed_capacity(find_task(k, "r")) == k.rq(4).capacity);
  CHECK(k.rq(4).capacity < k.rq(7).capacity);
}

TEST_CASE("a setaffinity naming a CPU the platform lacks is refused when the run is built", "[setaffinity]") {
  ScenarioParams p = exact_scenario("6.12", 1000, 2);
  TaskSpec a = task("a", {ev_run(Time::ms(1)), ev_setaffinity({5})});
  a.phases[0].events[1].origin = "x.json:3:4: tasks.a.phases.b";
  p.tasks = {a};
  CHECK_THROWS_WITH(System(p, 1), Catch::Contains("x.json:3:4: tasks.a.phases.b: task a: setaffinity: CPU 5 does "
                                                  "not exist (the platform has 2 CPUs)"));
}

// Another task's mask (cpuset-like moves of other threads). Asleep: only
// its next wake-up moves it. `b` sleeps from 0.5 ms to 2.5 ms on CPU 0;
// `a` gives it CPU 1 at 1 ms and goes on without waiting.
TEST_CASE("a sleeping task given a new mask wakes within it", "[setaffinity]") {
  ScenarioParams p = exact_scenario("6.12", 1000, 2);
  p.duration = Time::ms(10);
  p.tasks = {on_cpus(once("a", {ev_run(Time::ms(1)), ev_setaffinity({1}, "b"), ev_run(Time::ms(1))}), {1}),
             on_cpus(once("b", {ev_run(Time::us(500)), ev_sleep(Time::ms(2)), ev_run(Time::ms(1))}), {0})};
  AffinityRun run(p);
  CHECK(run.mig.log == std::vector<Migration>{{Time::us(2500), "b", 0, 1}});
  using S = std::vector<std::tuple<Time, std::string, char, std::string>>;
  CHECK(run.switches_on(1) == S{{Time::zero(), "idle", 'R', "a"},
                               {Time::ms(2), "a", 'S', "idle"},
                               {Time::us(2500), "idle", 'R', "b"},
                               {Time::us(3500), "b", 'S', "idle"}});
}

// Queued: moved at once (affine_move_task()'s move_queued_task()). The
// hog `b` waits on CPU 0 behind the FIFO task `a`, which gives it CPU 1.
TEST_CASE("a queued task given a new mask is moved at once", "[setaffinity]") {
  ScenarioParams p = exact_scenario("6.12", 1000, 2);
  p.duration = Time::ms(10);
  p.tasks = {on_cpus(once("a", {ev_run(Time::ms(1)), ev_setaffinity({1}, "b"), ev_run(Time::ms(1))}, Policy::kFifo, 10),
                     {0}),
             on_cpus(hog("b"), {0})};
  AffinityRun run(p);
  CHECK(run.mig.log == std::vector<Migration>{{Time::ms(1), "b", 0, 1}});
  CHECK(run.sw.first_run("b") == Time::ms(1));
  using S = std::vector<std::tuple<Time, std::string, char, std::string>>;
  CHECK(run.switches_on(0) == S{{Time::zero(), "idle", 'R', "a"}, {Time::ms(2), "a", 'S', "idle"}});
}

// Running on another CPU: that CPU's stopper preempts it and moves it,
// and the caller sleeps in D until the stopper's complete_all(). With no
// IPI cost all happens at 1 ms; with a 10 us IPI the stopper runs when
// its wake-up's IPI reaches CPU 1, and `a` waits until then.
TEST_CASE("a running task given a new mask is moved by its CPU's stopper while the caller waits", "[setaffinity]") {
  auto scenario = [](Time ipi) {
    ScenarioParams p = exact_scenario("6.12", 1000, 3);
    p.kernel.ipi_latency = ipi;
    p.duration = Time::ms(10);
    p.tasks = {on_cpus(once("a", {ev_run(Time::ms(1)), ev_setaffinity({2}, "b"), ev_run(Time::ms(1))}), {0}),
               on_cpus(hog("b"), {1})};
    return p;
  };
  AffinityRun run(scenario(Time::zero()));
  CHECK(run.mig.log == std::vector<Migration>{{Time::ms(1), "b", 1, 2}});
  using S = std::vector<std::tuple<Time, std::string, char, std::string>>;
  CHECK(run.switches_on(0) == S{{Time::zero(), "idle", 'R', "a"},
                               {Time::ms(1), "a", 'D', "idle"},
                               {Time::ms(1), "idle", 'R', "a"},
                               {Time::ms(2), "a", 'S', "idle"}});
  CHECK(run.switches_on(1) == S{{Time::zero(), "idle", 'R', "b"}, {Time::ms(1), "b", 'R', "idle"}});
  CHECK(run.switches_on(2) == S{{Time::ms(1), "idle", 'R', "b"}});

  AffinityRun late(scenario(Time::us(10)));
  REQUIRE(late.mig.log.size() == 1);
  CHECK(late.mig.log[0] == Migration{Time::us(1010), "b", 1, 2});
  CHECK(late.sw.first_run("a", Time::ms(1) + Time::ns(1)) >= Time::us(1010));
}

// Every thread of the task named, one after another: `a` waits for each
// running instance's stopper in turn (two D sleeps); both go to the only
// CPU of the mask.
TEST_CASE("setaffinity of a task with instances moves each thread in turn", "[setaffinity]") {
  ScenarioParams p = exact_scenario("6.12", 1000, 4);
  p.duration = Time::ms(10);
  TaskSpec b = on_cpus(hog("b"), {1, 2});
  b.instances = 2;
  p.tasks = {on_cpus(once("a", {ev_run(Time::ms(1)), ev_setaffinity({3}, "b"), ev_run(Time::ms(1))}), {0}), b};
  AffinityRun run(p);
  REQUIRE(run.mig.log.size() >= 2);
  std::vector<std::string> moved;
  for (const Migration& m : run.mig.log)
    if (m.t == Time::ms(1) && m.to == 3) moved.push_back(m.comm);
  std::sort(moved.begin(), moved.end());
  CHECK(moved == std::vector<std::string>{"b-0", "b-1"});
  int waits = 0;
  for (const SwitchRecord& r : run.sw.log)
    if (r.prev == "a" && r.prev_state == 'D') ++waits;
  CHECK(waits == 2);
  CHECK(find_task(run.sys.kernel(), "b-0").nr_cpus_allowed == 1);
}

// A thread not started yet (its task's delay) keeps the mask it is given:
// it starts within it.
TEST_CASE("a task given a mask before it starts starts within it", "[setaffinity]") {
  ScenarioParams p = exact_scenario("6.12", 1000, 4);
  p.duration = Time::ms(10);
  TaskSpec b = once("b", {ev_run(Time::ms(1))});
  b.delay = Time::ms(2);
  p.tasks = {on_cpus(once("a", {ev_setaffinity({3}, "b"), ev_run(Time::ms(1))}), {0}), b};
  AffinityRun run(p);
  CHECK(run.switches_on(3) == std::vector<std::tuple<Time, std::string, char, std::string>>{
                                  {Time::ms(2), "idle", 'R', "b"}, {Time::ms(3), "b", 'S', "idle"}});
}

// Caught TASK_WAKING: `b` is woken on CPU 0 by `w` at 1 ms with a 50 us
// wake-up cost (placed at once, enqueued 50 us later); `a` gives it CPU 1
// at 1.01 ms. It is moved as its enqueue lands and never runs on CPU 0.
TEST_CASE("a task given a new mask while it is being woken is moved as it lands", "[setaffinity]") {
  ScenarioParams p = exact_scenario("6.12", 1000, 3);
  p.kernel.wakeup_cost = Time::us(50);
  p.duration = Time::ms(10);
  TaskSpec b = on_cpus(once("b", {ev_suspend(), ev_run(Time::ms(1))}), {0});
  TaskSpec w = on_cpus(once("w", {ev_run(Time::ms(1)), ev_resume("b")}), {2});
  TaskSpec a = on_cpus(once("a", {ev_run(Time::us(1010)), ev_setaffinity({1}, "b")}), {1});
  p.tasks = {b, w, a};
  AffinityRun run(p);
  for (const SwitchRecord& r : run.sw.log)
    if (r.cpu == 0 && r.t > Time::ms(1)) CHECK(r.next != "b");
  REQUIRE(run.mig.log.size() == 1);
  CHECK(run.mig.log[0].comm == "b");
  CHECK(run.mig.log[0].to == 1);
  CHECK(run.sw.first_run("b", Time::ms(1)) < Time::ms(3));
}
