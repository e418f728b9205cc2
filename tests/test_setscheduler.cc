// The `setscheduler` and `nice` events: a task changing its own policy,
// RT priority and nice while it runs (sched_setscheduler() and
// setpriority(), i.e. __sched_setscheduler() and set_user_nice(), 6.12
// kernel/sched/syscalls.c, models/kernel/sched/setscheduler.cc).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "config_test_util.h"
#include "models/config/config.h"
#include "models/kernel/sched/weights.h"
#include "sched_test_util.h"

using namespace schedlab;
using namespace schedlab::testing;

namespace {

EventSpec ev_setscheduler(Policy policy, int rt_priority = 0) {
  EventSpec e;
  e.kind = EventSpec::Kind::kSetScheduler;
  e.policy = policy;
  e.rt_priority = rt_priority;
  return e;
}

EventSpec ev_nice(int nice) {
  EventSpec e;
  e.kind = EventSpec::Kind::kNice;
  e.nice = nice;
  return e;
}

struct PrioChange {
  Time t;
  std::string comm;
  int from, to;
  bool operator==(const PrioChange&) const = default;
};

class PrioLog : public SchedObserver {
 public:
  void on_prio_change(Time t, const Task& p, int from, int to, bool) override { log.push_back({t, p.comm, from, to}); }
  std::vector<PrioChange> log;
};

// Runs `p` (seed 1) to its end with its switches and priority changes.
struct ObservedRun {
  explicit ObservedRun(const ScenarioParams& p) : sys(p, 1) {
    sys.add_observer(&sw);
    sys.add_observer(&prio);
    sys.run();
  }
  System sys;
  SwitchLog sw;
  PrioLog prio;
};

}  // namespace

TEST_CASE("setscheduler and nice events in YAML", "[setscheduler][config]") {
  ScenarioParams s = load_scenario_yaml(
      "tasks:\n  - name: t\n    events: [setscheduler: {policy: fifo, priority: 10}, run: 1ms,\n"
      "             setscheduler: {policy: SCHED_IDLE}, nice: -7]\n",
      "test.yaml");
  const auto& ev = s.tasks.at(0).phases.at(0).events;
  REQUIRE(ev.size() == 4);
  CHECK(ev[0].kind == EventSpec::Kind::kSetScheduler);
  CHECK(ev[0].policy == Policy::kFifo);
  CHECK(ev[0].rt_priority == 10);
  CHECK(ev[2].policy == Policy::kIdle);
  CHECK(ev[2].rt_priority == 0);
  CHECK(ev[3].kind == EventSpec::Kind::kNice);
  CHECK(ev[3].nice == -7);

  auto bad = [](const std::string& event) {
    return error_of("tasks:\n  - name: t\n    events: [" + event + ", run: 1ms]\n");
  };
  ConfigError no_prio = bad("setscheduler: {policy: rr}");
  CHECK(no_prio.key_path() == "tasks[0].events[0].setscheduler");
  CHECK_THAT(no_prio.message(), Catch::Contains("SCHED_RR needs 'priority: 1..99'"));
  ConfigError fair_prio = bad("setscheduler: {policy: other, priority: 3}");
  CHECK(fair_prio.key_path() == "tasks[0].events[0].setscheduler.priority");
  CHECK_THAT(fair_prio.message(), Catch::Contains("a `nice:` event sets the nice"));
  ConfigError policy = bad("setscheduler: {policy: deadline}");
  CHECK(policy.key_path() == "tasks[0].events[0].setscheduler.policy");
  CHECK_THAT(policy.message(), Catch::Contains("SCHED_FIFO"));
  CHECK(bad("setscheduler: {priority: 3}").key_path() == "tasks[0].events[0].setscheduler");
  CHECK(bad("setscheduler: {policy: fifo, priority: 100}").key_path() == "tasks[0].events[0].setscheduler.priority");
  CHECK(bad("nice: 20").key_path() == "tasks[0].events[0].nice");
}

// One CPU, HZ 1000. `a` (SCHED_OTHER) starts alone, runs 100 us and makes
// itself SCHED_FIFO 10 (prio 120 -> 89); `hog`, started at 1 ms, waits: a
// fair task does not preempt an RT one (6.12's fair server would run it
// only after about 950 ms of starvation). At 5.1 ms `a` goes back to
// SCHED_OTHER (89 -> 120; switched_to_fair() reschedules it) and from then
// shares the CPU with `hog`: its last 5 ms of work end after 10.1 ms.
TEST_CASE("a task that makes itself SCHED_FIFO is not preempted by fair tasks until it goes back", "[setscheduler]") {
  ScenarioParams p = exact_scenario("6.12", 1000);
  p.duration = Time::ms(40);
  TaskSpec a = task("a", {ev_run(Time::us(100)), ev_setscheduler(Policy::kFifo, 10), ev_run(Time::ms(5)),
                          ev_setscheduler(Policy::kNormal), ev_run(Time::ms(5)), ev_sleep(Time::s(1))});
  a.loop = 1;
  a.phases[0].loop = 1;
  TaskSpec h = hog("hog");
  h.delay = Time::ms(1);
  p.tasks = {a, h};
  ObservedRun run(p);
  const SwitchLog& sw = run.sw;
  const PrioLog& prio = run.prio;
  CHECK(prio.log == std::vector<PrioChange>{{Time::us(100), "a", 120, 89}, {Time::us(5100), "a", 89, 120}});
  const Time hog_first = sw.first_run("hog");
  CHECK(hog_first >= Time::us(5100));
  Time a_sleeps = Time::max();
  for (const SwitchRecord& r : sw.log)
    if (r.prev == "a" && r.prev_state == 'S') a_sleeps = std::min(a_sleeps, r.t);
  CHECK(a_sleeps > Time::us(10100));
  CHECK(hog_first < a_sleeps);
}

// sched_setscheduler() keeps the nice (the kernel passes the task's own
// static priority): a nice -5 task made SCHED_FIFO and back is nice -5
// again. A nice set while RT (set_user_nice() of an RT task) is only
// recorded, and is the weight it returns with.
TEST_CASE("the nice survives a trip through SCHED_FIFO and a nice set meanwhile is the one it returns with",
          "[setscheduler]") {
  ScenarioParams p = exact_scenario("6.12", 1000);
  p.duration = Time::ms(10);
  TaskSpec a = task("a",
                    {ev_run(Time::ms(1)), ev_setscheduler(Policy::kFifo, 10), ev_run(Time::ms(1)),
                     ev_setscheduler(Policy::kNormal), ev_run(Time::ms(1)), ev_setscheduler(Policy::kRr, 20),
                     ev_nice(10), ev_run(Time::ms(1)), ev_setscheduler(Policy::kNormal), ev_run(Time::ms(1)),
                     ev_nice(19), ev_run(Time::ms(1)), ev_sleep(Time::s(1))},
                    Policy::kNormal, -5);
  p.tasks = {a};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  const Task& t = find_task(k, "a");
  struct Expect {
    Time at;
    Policy policy;
    int prio, nice;
  };
  // Sampled mid-way through each 1 ms run (the task is alone: no waits).
  for (const Expect& e : {Expect{Time::us(500), Policy::kNormal, 115, -5}, Expect{Time::us(1500), Policy::kFifo, 89, -5},
                          Expect{Time::us(2500), Policy::kNormal, 115, -5}, Expect{Time::us(3500), Policy::kRr, 79, 10},
                          Expect{Time::us(4500), Policy::kNormal, 130, 10}, Expect{Time::us(5500), Policy::kNormal, 139, 19}}) {
    k.run_until(e.at);
    CAPTURE(e.at.count());
    CHECK(t.policy == e.policy);
    CHECK(t.prio == e.prio);
    CHECK(t.nice() == e.nice);
    if (e.policy == Policy::kNormal) CHECK(t.se.weight == nice_to_weight(e.nice));
  }
}

// rt_effective_prio(): an owner that lowers itself keeps the priority of
// its top PI waiter. Two CPUs. A (FIFO 50, CPU 0) takes m at 0 and holds
// it 7 ms; B (FIFO 30, CPU 1) blocks on m at 1 ms (no boost: A is above
// it). At 2 ms A makes itself SCHED_OTHER: it stays at B's priority, 69,
// an RT priority, so the fair hog on CPU 0 still waits, and A unlocks at
// 7 ms (as SCHED_OTHER sharing with the hog it would take 5 ms more).
// Unlocked, A drops to its own 120.
TEST_CASE("a lock owner lowering itself keeps its PI waiter's priority", "[setscheduler][pi]") {
  ScenarioParams p = exact_scenario("6.12", 1000, 2);
  p.duration = Time::ms(30);
  TaskSpec a = on_cpus(task("a", {ev_lock("m"), ev_run(Time::ms(2)), ev_setscheduler(Policy::kNormal),
                                  ev_run(Time::ms(5)), ev_unlock("m"), ev_run(Time::ms(1)), ev_sleep(Time::s(1))},
                            Policy::kFifo, 50),
                       {0});
  TaskSpec b = on_cpus(task("b", {ev_lock("m"), ev_run(Time::ms(1)), ev_unlock("m"), ev_sleep(Time::s(1))},
                            Policy::kFifo, 30),
                       {1});
  b.delay = Time::ms(1);
  p.tasks = {a, b, on_cpus(hog("hog"), {0})};
  ObservedRun run(p);
  const SwitchLog& sw = run.sw;
  const PrioLog& prio = run.prio;
  std::vector<PrioChange> a_changes;
  for (const PrioChange& c : prio.log)
    if (c.comm == "a") a_changes.push_back(c);
  CHECK(a_changes == std::vector<PrioChange>{{Time::ms(2), "a", 49, 69}, {Time::ms(7), "a", 69, 120}});
  CHECK(sw.first_run("hog") >= Time::ms(7));
  CHECK(sw.first_run("b", Time::ms(2)) == Time::ms(7));
}

// The reschedule a setscheduler raises is taken on the way back to user
// space, before the task's next call. One CPU: A (FIFO 50) runs 2 ms, then
// lowers itself to FIFO 10 below the queued B (FIFO 30, started at 1 ms)
// and at once asks for FIFO 50 again. B runs first (2 to 3 ms); A's second
// call comes only when it runs again, at 3 ms.
TEST_CASE("a setscheduler that lets another task in hands over the CPU before the next event",
          "[setscheduler]") {
  ScenarioParams p = exact_scenario("6.12", 1000);
  p.duration = Time::ms(10);
  TaskSpec a = task("a",
                    {ev_run(Time::ms(2)), ev_setscheduler(Policy::kFifo, 10), ev_setscheduler(Policy::kFifo, 50),
                     ev_run(Time::ms(1)), ev_sleep(Time::s(1))},
                    Policy::kFifo, 50);
  TaskSpec b = task("b", {ev_run(Time::ms(1)), ev_sleep(Time::s(1))}, Policy::kFifo, 30);
  b.delay = Time::ms(1);
  p.tasks = {a, b};
  ObservedRun run(p);
  const SwitchLog& sw = run.sw;
  const PrioLog& prio = run.prio;
  CHECK(prio.log == std::vector<PrioChange>{{Time::ms(2), "a", 49, 89}, {Time::ms(3), "a", 89, 49}});
  CHECK(sw.first_run("b") == Time::ms(2));
  CHECK(sw.first_run("a", Time::ms(1)) == Time::ms(3));
}

TEST_CASE("setscheduler takes priority 0 for a fair policy and names SCHED_DEADLINE as not modelled",
          "[setscheduler][config]") {
  ScenarioParams s = load_scenario_yaml(
      "tasks:\n  - name: t\n    events: [setscheduler: {policy: batch, priority: 0}, run: 1ms]\n", "test.yaml");
  CHECK(s.tasks.at(0).phases.at(0).events.at(0).policy == Policy::kBatch);
  ConfigError dl = error_of("tasks:\n  - name: t\n    events: [setscheduler: {policy: deadline}, run: 1ms]\n");
  CHECK(dl.key_path() == "tasks[0].events[0].setscheduler.policy");
  CHECK_THAT(dl.message(), Catch::Contains("SCHED_DEADLINE is not modelled"));
}
