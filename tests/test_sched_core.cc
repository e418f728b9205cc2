// Core paths: preemption models, overheads, yield, determinism of a run.
#include <catch2/catch.hpp>

#include "models/config/config.h"
#include "sched_test_util.h"

using namespace schedlab;
using namespace schedlab::testing;

// A kernel thread K runs 10 ms chunks of kernel code; W (new, fair) arrives
// at 1.5 ms with the earlier deadline (1.875 ms vs K's 2.25 ms; base slice
// 0.75 ms on one CPU), so pick_eevdf() chooses W and K must be preempted:
//   full       -> at once (1.5 ms)
//   none/vol.  -> K is not preemptible in the kernel: at its next
//                 cond_resched(), the end of its 10 ms chunk
//   lazy       -> the fair wakeup sets only NEED_RESCHED_LAZY; the tick at
//                 4 ms turns it into a real reschedule
// A user-space K is preempted at once under every model: the interrupt
// that woke W returns to user space and reschedules.
TEST_CASE("the preemption model decides when a kernel thread gives way", "[core][preempt]") {
  auto first_w = [](PreemptModel model, bool kernel_thread) {
    ScenarioParams p = exact_scenario("6.12", 250);
    p.kernel.preempt = model;
    p.duration = Time::ms(30);
    TaskSpec k = hog("K");
    k.phases[0].events = {ev_run(Time::ms(10))};
    k.kernel_thread = kernel_thread;
    TaskSpec w = task("W", {ev_run(Time::ms(1)), ev_sleep(Time::s(1))});
    w.delay = Time::us(1500);
    p.tasks = {k, w};
    System sys(p, 1);
    SwitchLog log;
    sys.add_observer(&log);
    sys.run();
    return log.first_run("W");
  };
  CHECK(first_w(PreemptModel::kFull, true) == Time::us(1500));
  CHECK(first_w(PreemptModel::kNone, true) == Time::ms(10));
  CHECK(first_w(PreemptModel::kVoluntary, true) == Time::ms(10));
  CHECK(first_w(PreemptModel::kLazy, true) == Time::ms(4));
  CHECK(first_w(PreemptModel::kNone, false) == Time::us(1500));
  CHECK(first_w(PreemptModel::kLazy, false) == Time::us(1500));
}

// Under PREEMPT_LAZY two kernel-thread hogs (one 100 ms chunk of kernel
// code each: no cond_resched() boundary) share a CPU at HZ 250 on 6.18.
// K1 runs first (K2, forked, does not preempt); the tick at 4 ms finds
// its slice (0.70 ms) over and raises only NEED_RESCHED_LAZY, which
// sched_tick() turns into a real reschedule at the next tick, 8 ms, before
// task_tick(). K2 then runs until the tick after the one that ends its
// slice: 16 ms. User-space hogs return to user space from the 4 ms tick
// and switch there.
TEST_CASE("a kernel thread's lazy reschedule raised by a tick waits for the next tick", "[core][preempt]") {
  auto switches = [](bool kernel_thread) {
    ScenarioParams p = exact_scenario("6.18", 250);
    p.kernel.preempt = PreemptModel::kLazy;
    p.duration = Time::ms(20);
    std::vector<TaskSpec> ts;
    for (const char* name : {"K1", "K2"}) {
      TaskSpec t = hog(name);
      t.phases[0].events = {ev_run(Time::ms(100))};
      t.kernel_thread = kernel_thread;
      ts.push_back(t);
    }
    p.tasks = ts;
    return run_logging_switches(p).runs_until(Time::ms(17));
  };
  using Runs = std::vector<std::pair<int64_t, std::string>>;
  CHECK(switches(true) == Runs{{0, "K1"}, {8000000, "K2"}, {16000000, "K1"}});
  CHECK(switches(false) == Runs{{0, "K1"}, {4000000, "K2"}, {8000000, "K1"}, {12000000, "K2"}, {16000000, "K1"}});
}

TEST_CASE("wake-up cost and context-switch cost show in the metrics", "[core][overheads]") {
  ScenarioParams p = exact_scenario("6.12", 250);
  p.kernel.wakeup_cost = Time::us(2);
  p.kernel.context_switch_cost = Time::us(3);
  p.duration = Time::ms(100);
  p.tasks = {task("fifo", {ev_run(Time::ms(1)), ev_sleep(Time::ms(9))}, Policy::kFifo, 10)};
  System sys(p, 1);
  sys.run();
  RunResult r = sys.result();
  const TaskMetrics& m = metrics_of(r, "fifo");
  // Each cycle: 3 us switch-in cost + 1 ms of work, then 9 ms asleep; the
  // wake-up is enqueued 2 us after sched_waking and runs at once.
  REQUIRE(m.wakeup_latency.size() >= 5);
  for (int64_t v : m.wakeup_latency.values()) CHECK(v == 2000);
  CHECK(m.periods == 0);
}

TEST_CASE("sched_yield hands the CPU to an equal-priority RT task", "[core][yield]") {
  ScenarioParams p = exact_scenario("6.12", 250);
  p.duration = Time::ms(10);
  EventSpec y;
  y.kind = EventSpec::Kind::kYield;
  p.tasks = {task("a", {ev_run(Time::ms(1)), y}, Policy::kFifo, 10), task("b", {ev_run(Time::ms(1)), y}, Policy::kFifo, 10)};
  System sys(p, 1);
  SwitchLog log;
  sys.add_observer(&log);
  sys.run();
  std::vector<std::pair<int64_t, std::string>> expected = {{0, "a"}, {1000000, "b"}, {2000000, "a"}, {3000000, "b"}};
  CHECK(log.runs_until(Time::ms(3)) == expected);
}

TEST_CASE("a periodic task reports each period's response and its misses", "[core][timer]") {
  ScenarioParams p = exact_scenario("6.12", 250);
  p.duration = Time::ms(100);
  // 12 ms of work per 10 ms period: every period ends late.
  p.tasks = {task("late", {ev_run(Time::ms(12)), ev_timer("t", Time::ms(10))}, Policy::kFifo, 10),
             task("ok", {ev_run(Time::ms(2)), ev_timer("u", Time::ms(20))}, Policy::kFifo, 20)};
  System sys(p, 1);
  sys.run();
  RunResult r = sys.result();
  const TaskMetrics& late = metrics_of(r, "late");
  CHECK(late.periods > 3);
  CHECK(late.deadline_misses == late.periods);
  const TaskMetrics& ok = metrics_of(r, "ok");
  CHECK(ok.periods == 4);  // timers at 20, 40, 60, 80 ms end periods 1..4
  CHECK(ok.deadline_misses == 0);
  for (int64_t v : ok.response.values()) CHECK(v == 2000000);
}

// __schedule() clears TIF_NEED_RESCHED after pick_next_task() (6.1, 6.12,
// 6.18): a reschedule raised while the CPU picks is answered by that pick,
// not by a second __schedule(). rq->sched_count (schedstat) counts the
// calls.
TEST_CASE("a reschedule raised while __schedule() picks is answered by that pick", "[core][preempt]") {
  SECTION("update_curr() of a task that blocks at the end of its slice") {
    // One CPU, base slice 0.75 ms. A (forked first) runs 0.75 ms and
    // sleeps: dequeue's update_curr() finds its vruntime at its deadline
    // (update_deadline()) with B queued, and reschedules; the same pick
    // then chooses B. Calls on CPU 0: idle -> A at 0, A -> B at 0.75 ms.
    ScenarioParams p = exact_scenario("6.12", 1000);
    p.duration = Time::ms(2);
    p.tasks = {task("A", {ev_run(Time::us(750)), ev_sleep(Time::ms(10))}), hog("B")};
    System sys(p, 1);
    SwitchLog log;
    sys.add_observer(&log);
    Kernel& k = sys.kernel();
    k.run_until(Time::us(900));
    std::vector<std::pair<int64_t, std::string>> expected = {{0, "A"}, {750000, "B"}};
    CHECK(log.runs_until(Time::us(900)) == expected);
    CHECK(k.rq(0).curr == &find_task(k, "B"));
    CHECK_FALSE(k.rq(0).need_resched);
    CHECK(k.rq(0).sched_count == 2);
  }
  SECTION("a newly idle CPU's pull preempts the task that is leaving") {
    // delayed_pull_scenario(): CPU 0 runs C (pinned) for 2.8 ms; on CPU 1,
    // B sleeps at 1.8 ms with lag < 0, so its dequeue is delayed, and A
    // (pinned) runs. When C sleeps, CPU 0's newidle pass pulls the delayed
    // B, and attach_task()'s wakeup_preempt() reschedules C, still CPU 0's
    // current task. The pick that follows dequeues B for good and finds
    // nothing: CPU 0 goes idle. Its __schedule() calls: idle -> C at 0,
    // C -> idle at 2.8 ms.
    System sys(delayed_pull_scenario(), 1);
    Kernel& k = sys.kernel();
    k.run_until(Time::us(2900));
    Task& b = find_task(k, "B");
    REQUIRE(b.cpu == 0);  // pulled
    CHECK(k.rq(0).curr->is_idle_task);
    CHECK_FALSE(k.rq(0).need_resched);
    CHECK(k.rq(0).sched_count == 2);
  }
}

// The model charges no time for sched_yield(). A task whose loop is only
// `yield` never lets simulated time advance once it is picked again (alone
// on its CPU; or, under EEVDF before 6.17, ahead of a task that is not
// eligible yet: in the kernel the yield syscalls themselves take the time
// that makes it eligible). That is an error naming the task, not a hang.
// Where a yield does hand the CPU over (RT round robin, 6.17+ EEVDF), the
// other task's work goes on.
TEST_CASE("a task that only yields is an error naming it instead of a hang", "[core][yield]") {
  EventSpec y;
  y.kind = EventSpec::Kind::kYield;
  auto run = [](const std::string& version, std::vector<TaskSpec> tasks) {
    ScenarioParams p = exact_scenario(version, 250);
    p.duration = Time::ms(10);
    p.tasks = std::move(tasks);
    System sys(p, 1);
    sys.run();
    return sys.result();
  };
  SECTION("alone on its CPU") {
    CHECK_THROWS_WITH(run("6.12", {task("a", {y})}),
                      Catch::StartsWith("task a makes no progress: at t=0ns") && Catch::Contains("yields"));
    CHECK_THROWS_WITH(run("6.12", {task("a", {y}, Policy::kFifo, 10)}), Catch::StartsWith("task a makes no progress"));
  }
  SECTION("re-picked ahead of an ineligible task (EEVDF, 6.12)") {
    // b runs 1 ms, then a is the only eligible task from t = 1 ms on.
    CHECK_THROWS_WITH(run("6.12", {task("a", {y}), task("b", {ev_run(Time::ms(1)), y})}),
                      Catch::StartsWith("task a makes no progress: at t=1.000ms"));
  }
  SECTION("two tasks that only yield to each other") {
    CHECK_THROWS_WITH(run("6.12", {task("a", {y}), task("b", {y})}), Catch::Contains("(with task "));
  }
  SECTION("a yield that hands the CPU over keeps the other task running") {
    RunResult rt = run("6.12", {task("a", {y}, Policy::kFifo, 10), task("b", {ev_run(Time::ms(1)), y}, Policy::kFifo, 10)});
    CHECK(metrics_of(rt, "b").cpu_time == Time::ms(10));
    RunResult fair = run("6.18", {task("a", {y}), task("b", {ev_run(Time::ms(1)), y})});
    CHECK(metrics_of(fair, "b").cpu_time == Time::ms(10));
  }
  SECTION("the message says which zero-time events loop") {
    CHECK_THROWS_WITH(run("6.12", {task("a", {ev_run(Time::zero())})}),
                      Catch::StartsWith("task a makes no progress") && Catch::Contains("run of no work"));
  }
}

// The same for every other event that takes no time: a task whose events
// are only those repeats them forever at one instant. Each is an error
// naming the task (found by fuzzing the loaders, where each one hung).
TEST_CASE("a task whose events all take no time is an error naming it instead of a hang", "[core]") {
  auto run_yaml = [](const std::string& yaml) {
    System sys(load_scenario_yaml(yaml, "test.yaml"), 1);
    sys.run();
  };
  const std::string head = "name: t\nduration: 1ms\nplatform: {cpus: 2}\n";
  for (const char* events : {"[{sleep: 0}]", "[{signal: c}]", "[{broad: c}]", "[{lock: m}, {unlock: m}]",
                             "[{barrier: b}]", "[{resume: a}]", "[{queue_work: {wq: events, work: w}}]"}) {
    CAPTURE(events);
    CHECK_THROWS_WITH(run_yaml(head + "tasks:\n  - name: a\n    events: " + events + "\n"),
                      Catch::StartsWith("task a makes no progress: at t=0ns"));
  }
  // The simulator's backstop (an instant that never ends, whatever loops):
  // the kernel counts each task's actions, switch-ins and wake-ups between
  // its two calls and names the busiest. Here the probe watches 10 ms of a
  // task waking every millisecond beside a hog.
  {
    ScenarioParams p = exact_scenario("6.12", 250);
    p.duration = Time::ms(20);
    p.tasks = {task("sleeper", {ev_run(Time::us(100)), ev_sleep(Time::us(900))}), hog("hog")};
    System sys(p, 1);
    Kernel& k = sys.kernel();
    k.run_until(Time::ms(5));
    k.on_long_instant(k.now(), false);
    k.run_until(Time::ms(15));
    CHECK_THROWS_WITH(k.on_long_instant(k.now(), true),
                      Catch::StartsWith("task sleeper makes no progress: at t=15.000ms time stops") &&
                          Catch::Contains("busiest tasks by actions, switch-ins and wake-ups: sleeper (") &&
                          Catch::Contains("hog ("));
  }
  // A synchronous binder call without work: client and looper thread hand
  // the CPUs to each other forever.
  CHECK_THROWS_WITH(run_yaml(head + "binder_procs: [{name: p, threads: 1}]\n"
                                    "tasks:\n  - name: a\n    events: [{binder_call: {proc: p, work: 0}}]\n"),
                    Catch::Contains("makes no progress: at t=0ns the CPUs reschedule"));
}
