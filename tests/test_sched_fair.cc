// Fair-class behaviour with schedules worked out by hand from
// kernel/sched/fair.c (6.12 EEVDF, 6.1 CFS). Every scenario uses one CPU,
// HZ=1000 (a tick per ms) and no overheads unless it says otherwise; all
// tasks are nice 0 (weight 1024), so vruntime advances 1:1 with time.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>

#include "models/kernel/sched/pelt.h"
#include "models/kernel/sched/weights.h"
#include "experiments/lib/report_json.h"
#include "experiments/lib/runner.h"
#include "models/kernel/sched/kernel_versions.h"
#include "sched_test_util.h"

using namespace schedlab;
using namespace schedlab::testing;

TEST_CASE("the weight tables and calc_delta_fair match the kernel's", "[fair][weights]") {
  CHECK(nice_to_weight(0) == 1024);
  CHECK(nice_to_weight(-5) == 3121);
  CHECK(nice_to_weight(19) == 15);
  CHECK(nice_to_wmult(0) == 4194304);
  // nice 0 is exact; nice 5 (weight 335) scales 1 ms by 1024/335 = 3.0567 ms,
  // computed with the inverse weight 12820798 and a 32-bit shift:
  // 1000000 * (1024 * 12820798 >> 1... ) -> 3056716 ns (floor).
  CHECK(calc_delta_fair(1000000, 1024, 4194304) == 1000000);
  CHECK(calc_delta_fair(1000000, 335, 12820798) == 3056716);
}

TEST_CASE("two nice-0 hogs on one CPU split it 50/50", "[fair]") {
  for (std::string version : {"6.18", "6.12", "6.6", "6.1"}) {
    ScenarioParams p = exact_scenario(version, 250);
    p.duration = Time::s(10);
    p.tasks = {hog("a"), hog("b")};
    System sys(p, 1);
    sys.run();
    RunResult r = sys.result();
    INFO("kernel " << version);
    // Each switch happens on a 4 ms tick, so the split is exact to a tick.
    CHECK(std::abs(metrics_of(r, "a").cpu_time.to_s() - 5.0) <= 0.004);
    CHECK(metrics_of(r, "a").cpu_time + metrics_of(r, "b").cpu_time == Time::s(10));
  }
}

TEST_CASE("nice -5 against nice 0 splits the CPU 3121:1024", "[fair]") {
  for (std::string version : {"6.12", "6.1"}) {
    ScenarioParams p = exact_scenario(version, 250);
    p.duration = Time::s(10);
    p.tasks = {hog("heavy", Policy::kNormal, -5), hog("light")};
    System sys(p, 1);
    sys.run();
    RunResult r = sys.result();
    double share = metrics_of(r, "heavy").cpu_time.to_s() / 10.0;
    INFO("kernel " << version << " share " << share);
    // 3121 / (3121 + 1024) = 0.75296; tick granularity leaves < 0.1%.
    CHECK(share == Approx(3121.0 / 4145.0).margin(0.001));
  }
}

namespace {
// Three hogs A, B (t=0) and C (t=5 ms), base slice 3 ms: who runs from
// when, for 13 ms.
std::vector<std::pair<int64_t, std::string>> run_abc(const std::string& version) {
  ScenarioParams p = exact_scenario(version);
  p.kernel.base_slice = Time::ms(3);
  TaskSpec c = hog("C");
  c.delay = Time::ms(5);
  p.tasks = {hog("A"), hog("B"), c};
  p.duration = Time::ms(13);
  return run_logging_switches(p).runs_until(Time::ms(13));
}
}  // namespace

// Three hogs A, B (t=0) and C (t=5 ms), base slice 3 ms (1 CPU: factor 1).
//  t=0  A, B placed at V=0 with deadline 1.5 ms (half slice, new tasks);
//       A first (inserted first).
//  t=2  A: v=2 >= d=1.5 -> d=5, resched; A is not eligible (v=2 > V=1),
//       B (v=0, d=1.5) is -> B.
//  t=4  B: v=2 -> d=5; V=2: A and B both eligible, same deadline; A is in
//       the tree and curr wins only with a strictly earlier deadline -> A.
//  t=5  C arrives: A v=3, B v=2 -> V=2.5; C at v=2.5, d=4; A ineligible,
//       C eligible with the earliest deadline -> C preempts A.
//  t=7  C: v=4.5 >= 4 -> d=7.5; V=(3+2+4.5)/3: A, B eligible with d=5;
//       B went into the tree before A (A was put back at t=5) -> B.
//  t=10 B: v=5 -> d=8; V=4.17: A (v=3) eligible, C (4.5) not -> A.
//  t=12 A: v=5 -> d=8; V=4.83: C (v=4.5, d=7.5) is the eligible earliest -> C.
TEST_CASE("EEVDF: lag placement, eligibility and deadline order decide who runs", "[fair][eevdf]") {
  std::vector<std::pair<int64_t, std::string>> expected = {
      {0, "A"}, {2000000, "B"}, {4000000, "A"}, {5000000, "C"}, {7000000, "B"}, {10000000, "A"}, {12000000, "C"}};
  CHECK(run_abc("6.12") == expected);
}

// The same three hogs on 6.6. wake_up_new_task() enqueues without
// ENQUEUE_INITIAL, so each new task's first deadline is a whole slice away
// (3 ms): A, B at v=0, d=3.
//  t=0  -> A (queued first: the tree's root, its deadline its subtree's
//       minimum).
//  t=3  A: v=3 -> d=6; V=1.5: A ineligible -> B (v=0, d=3).
//  t=5  C arrives: A v=3, B v=2 -> V=2.5; C at v=2.5, d=5.5. B keeps the
//       CPU: eligible, and RUN_TO_PARITY (its deadline is still the one
//       stashed at its pick).
//  t=6  B: v=3 -> d=6; V=2.83: B and the tree's root A (v=3) ineligible,
//       the search goes left to C (v=2.5, d=5.5) -> C.
//  t=9  C: v=5.5 -> d=8.5; V=3.83: root A (v=3, d=6 = its subtree's
//       minimum; B, v=3, d=6, right of it) -> A.
//  t=12 A: v=6 -> d=9; V=4.83: root B (v=3, d=6) -> B.
TEST_CASE("EEVDF 6.6: a new task's first deadline is a whole slice away", "[fair][eevdf]") {
  std::vector<std::pair<int64_t, std::string>> expected = {
      {0, "A"}, {3000000, "B"}, {6000000, "C"}, {9000000, "A"}, {12000000, "B"}};
  CHECK(run_abc("6.6") == expected);
}

// Three hogs started together on 6.6 (d=3 each; the tree B(root) with A
// left and C right). 6.6's pick_eevdf() starts from curr and takes a
// queued entity only for a strictly earlier deadline (6.12: the queued
// one wins a tie), so curr keeps the CPU on a tie:
//  t=0  root B eligible (d=3), its left subtree A ties -> the subtree: A.
//  t=3  A: v=3 -> d=6; V=1 -> B (v=0, d=3: the root, A gone); A goes in.
//  t=6  B: v=3 -> d=6; V=2 -> C (v=0, d=3), the root.
//  t=9  C: v=3 -> d=6; V=3: C eligible; the tree A (root, v=3, d=6) and B
//       (right) tie its deadline -> C stays.
//  t=12 C: v=6 -> d=9; V=4 -> A (v=3, d=6), the root.
//  t=15 A: v=6 -> d=9; V=5 -> B (v=3, d=6), the root now.
//  t=18 B: v=6 -> d=9; V=6: root C (v=6, d=9) ties -> B stays.
//  t=21 B: v=9 -> d=12; V=7 -> C (v=6, d=9), the root.
TEST_CASE("EEVDF 6.6: curr keeps the CPU when a queued task's deadline only ties its own", "[fair][eevdf]") {
  ScenarioParams p = exact_scenario("6.6");
  p.kernel.base_slice = Time::ms(3);
  p.tasks = {hog("A"), hog("B"), hog("C")};
  p.duration = Time::ms(22);
  const SwitchLog log = run_logging_switches(p);
  std::vector<std::pair<int64_t, std::string>> expected = {{0, "A"},        {3000000, "B"},  {6000000, "C"},
                                                           {12000000, "A"}, {15000000, "B"}, {21000000, "C"}};
  CHECK(log.runs_until(Time::ms(22)) == expected);
}

// A wakee whose deadline only ties curr's does not preempt on 6.6. Hog A
// alone from t=0 (d=3); W starts at t=3 ms: A's update_curr() brings it to
// v=3, past its deadline -> d=6 (alone: no resched). W is placed at V=3
// with 6.6's full first slice: d=6, the same as A's. wakeup_preempt's
// pick_eevdf(): curr A is eligible (v=3 = V), its stashed deadline (3) is
// not its deadline any more (no RUN_TO_PARITY), W's deadline only ties ->
// A keeps the CPU until its deadline at t=6 (v=6, V=4.5: A ineligible) ->
// W. On 6.12, W's first deadline is half a slice away (d=4.5), earlier than
// A's: W preempts at once.
TEST_CASE("EEVDF 6.6: a wakee whose deadline only ties curr's does not preempt", "[fair][eevdf]") {
  auto first_w = [](const std::string& version) {
    ScenarioParams p = exact_scenario(version);
    p.kernel.base_slice = Time::ms(3);
    TaskSpec w = hog("W");
    w.delay = Time::ms(3);
    p.tasks = {hog("A"), w};
    p.duration = Time::ms(8);
    return run_logging_switches(p).first_run("W");
  };
  CHECK(first_w("6.6") == Time::ms(6));
  CHECK(first_w("6.12") == Time::ms(3));
}

// Continuing the case above, D (custom slice 0.5 ms) starts at t=10.5 ms
// while A runs with its deadline stashed at pick (d=5, v=3.5, eligible):
// D lands at V=4.33 with d=V+0.25. With RUN_TO_PARITY A keeps the CPU until
// its deadline update at t=12 (then D, the earliest eligible, runs);
// without it D preempts at once. PREEMPT_SHORT (6.12 default) lets the
// shorter-slice D cancel A's protection, so it preempts at once too.
namespace {
// The four-task case: A, B (t=0), C (5 ms) and D (10.5 ms, custom slice
// 0.5 ms), all hogs, base slice 3 ms; returns the schedule.
SwitchLog run_abcd(const std::string& version, std::map<std::string, bool> features) {
  ScenarioParams p = exact_scenario(version);
  p.kernel.base_slice = Time::ms(3);
  p.kernel.features = std::move(features);
  TaskSpec c = hog("C");
  c.delay = Time::ms(5);
  TaskSpec d = hog("D");
  d.delay = Time::us(10500);
  d.slice = Time::us(500);
  p.tasks = {hog("A"), hog("B"), c, d};
  p.duration = Time::ms(14);
  return run_logging_switches(p);
}
}  // namespace

TEST_CASE("RUN_TO_PARITY and PREEMPT_SHORT change who runs as in 6.12", "[fair][eevdf]") {
  auto run = [](bool parity, bool preempt_short) {
    return run_abcd("6.12", {{"RUN_TO_PARITY", parity}, {"PREEMPT_SHORT", preempt_short}}).first_run("D");
  };
  CHECK(run(true, false) == Time::ms(12));
  CHECK(run(false, false) == Time::us(10500));
  CHECK(run(true, true) == Time::us(10500));
}

// 6.18.35 (slice protection since 6.17; check_preempt_wakeup_fair() by
// actions): a forked task never preempts by EEVDF order. C (forked at 5,
// placed at V = 2.5 with d = 4) waits: A (picked at 4, v2 d5) is
// protected up to its deadline (all queued slices are 3 ms) and runs to
// the 7 ms tick (v5: a new deadline 8); then C, the earliest eligible
// deadline (V 3.17; B v2 d5, C v2.5 d4), to the 9 ms tick (v4.5, d7.5);
// then B, the only eligible one (V 3.83). D forks at 10.5 (V 4.33, d =
// 4.58). Without PREEMPT_SHORT, the fork returns before any pick: B keeps
// its protection to its deadline at the 12 ms tick, where D (d 4.58,
// eligible at V 4.71) is picked. With PREEMPT_SHORT, the shorter-slice D is
// judged by a pick without B's protection: D's deadline is the earliest
// eligible, so it runs at 10.5 ms.
TEST_CASE("6.18: a forked task waits out the protected slice, a shorter-slice wakee is judged without it", "[fair][eevdf]") {
  auto run = [](bool preempt_short) {
    SwitchLog log = run_abcd("6.18", {{"PREEMPT_SHORT", preempt_short}});
    return std::make_pair(log.first_run("D"), log.runs_until(Time::ms(10)));
  };
  std::vector<std::pair<int64_t, std::string>> same_until_10 = {
      {0, "A"}, {2000000, "B"}, {4000000, "A"}, {7000000, "C"}, {9000000, "B"}};
  CHECK(run(false).second == same_until_10);
  CHECK(run(true).second == same_until_10);
  CHECK(run(false).first == Time::ms(12));
  CHECK(run(true).first == Time::us(10500));
}

// 6.18.35, a wake-up that is not a fork: D (slice 0.5 ms) forks at 0
// beside A and B, runs nothing and sleeps 8.5 ms. A and B alternate as
// above (A 0, B 2, A 4 to 7, then B, picked at v2 d5 and protected to its
// deadline). D wakes at 8.5: B (v3.5) is eligible (V 4.25), D lands at
// v4.25 with d 4.75. Without PREEMPT_SHORT the pick keeps protected B, and
// update_protect_slice() shrinks B's protection to the smallest queued
// slice: vprot = min(5, 3.5 + 0.5) = 4, reached at the 9 ms tick, where D
// (eligible at V 4.42, d 4.75 before B's 5) is picked; unshrunk, B would
// run to 10. With PREEMPT_SHORT the pick ignores B's protection and D, the
// earliest eligible deadline, preempts at once.
TEST_CASE("6.18: a waking shorter-slice task shrinks current's protection to its slice", "[fair][eevdf]") {
  auto first_d = [](bool preempt_short) {
    ScenarioParams p = exact_scenario("6.18");
    p.kernel.base_slice = Time::ms(3);
    p.kernel.features = {{"PREEMPT_SHORT", preempt_short}};
    TaskSpec d = task("D", {ev_sleep(Time::us(8500)), ev_run(Time::ms(10))});
    d.slice = Time::us(500);
    p.tasks = {hog("A"), hog("B"), d};
    p.duration = Time::ms(14);
    return run_logging_switches(p).first_run("D", Time::ms(1));
  };
  CHECK(first_d(false) == Time::ms(9));
  CHECK(first_d(true) == Time::us(8500));
}

// B starts first and runs 1.8 ms of work, then sleeps 5 ms. At t=1.8 B has
// v=1.8 while A (not yet run) has v=0: V=0.9, B's lag is -0.9 ms.
//  DELAY_DEQUEUE (6.12): B is ineligible, so it stays queued ("delayed")
//  until the pick at t=4 (A's deadline update) chooses it: then it is
//  dequeued for good, its lag (V=2.0 - 1.8 > 0) zeroed by DELAY_ZERO.
//  Without it: B leaves at once carrying lag -0.9 ms (clamp is 6 ms).
TEST_CASE("with DELAY_DEQUEUE a task sleeping with negative lag stays queued until picked", "[fair][eevdf]") {
  auto build = [](bool delay) {
    ScenarioParams p = exact_scenario("6.12");
    p.kernel.base_slice = Time::ms(3);
    p.kernel.features["DELAY_DEQUEUE"] = delay;
    p.tasks = {task("B", {ev_run(Time::us(1800)), ev_sleep(Time::ms(5))}), hog("A")};
    p.duration = Time::ms(10);
    return p;
  };
  SECTION("on") {
    System sys(build(true), 1);
    Kernel& k = sys.kernel();
    k.run_until(Time::ms(3));
    Task& b = find_task(k, "B");
    CHECK(b.state == TaskState::kInterruptible);
    CHECK(b.on_rq);
    CHECK(b.se.sched_delayed);
    k.run_until(Time::us(4500));
    CHECK_FALSE(b.on_rq);
    CHECK_FALSE(b.se.sched_delayed);
    CHECK(b.se.vlag == 0);
  }
  SECTION("off") {
    System sys(build(false), 1);
    Kernel& k = sys.kernel();
    k.run_until(Time::ms(3));
    Task& b = find_task(k, "B");
    CHECK_FALSE(b.on_rq);
    CHECK(b.se.vlag == -900000);
  }
  SECTION("woken while delayed, it is requeued where it is, keeping its vruntime") {
    ScenarioParams p = build(true);
    p.tasks[0] = task("B", {ev_run(Time::us(1800)), ev_sleep(Time::ms(1))});
    System sys(p, 1);
    Kernel& k = sys.kernel();
    k.run_until(Time::us(2900));  // woken at 2.8 ms: V=1.4 < v=1.8, lag stays negative
    Task& b = find_task(k, "B");
    CHECK(b.state == TaskState::kRunning);
    CHECK(b.on_rq);
    CHECK_FALSE(b.se.sched_delayed);
    CHECK(b.se.vruntime == 1800000);  // absolute; min_vruntime has moved to A's 1.0 ms
  }
}

TEST_CASE("a SCHED_IDLE task gets the minimal weight and yields to normal tasks", "[fair]") {
  ScenarioParams p = exact_scenario("6.12", 250);
  p.duration = Time::s(4);
  p.tasks = {hog("normal"), hog("idle", Policy::kIdle)};
  System sys(p, 1);
  sys.run();
  RunResult r = sys.result();
  // 1024 : 3 -> the idle-policy task gets ~0.3% (tick granularity).
  CHECK(metrics_of(r, "idle").cpu_time.to_s() / 4.0 < 0.01);
}

// The setup of the DELAY_DEQUEUE test above: at t=3 ms B (v=1.8 ms) sleeps
// delayed while A (v=1.2 ms) runs. A nice change keeps B's class, so 6.12
// (__sched_setscheduler(): DEQUEUE_SAVE | DEQUEUE_MOVE, then ENQUEUE_RESTORE)
// takes it off the tree and puts it back still delayed and queued; its lag
// V - v = 1.5 - 1.8 = -0.3 ms is rescaled to the new weight (x 1024/335 for
// nice 5, truncated). A class change dequeues it for good first.
TEST_CASE("a delayed task stays delayed through a change that keeps its class", "[fair][eevdf]") {
  ScenarioParams p = exact_scenario("6.12");
  p.kernel.base_slice = Time::ms(3);
  p.tasks = {task("B", {ev_run(Time::us(1800)), ev_sleep(Time::ms(5))}), hog("A")};
  p.duration = Time::ms(10);
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(3));
  Task& b = find_task(k, "B");
  REQUIRE(b.se.sched_delayed);
  SECTION("nice 0 -> 5: still delayed, still queued") {
    k.set_scheduler(b, Policy::kNormal, 5, 0);
    CHECK(b.se.sched_delayed);
    CHECK(b.on_rq);
    CHECK(b.se.on_rq);
    CHECK(k.rq(0).cfs.h_nr_delayed == 1);
    CHECK(k.rq(0).nr_running == 2);
    CHECK(b.se.vlag == -917014);  // -300000 * 1024 / 335
    // It leaves when picked (A's slice ends at 4.8 ms: 1.8 + 3).
    k.run_until(Time::us(5000));
    CHECK_FALSE(b.on_rq);
    CHECK(k.rq(0).cfs.h_nr_delayed == 0);
  }
  SECTION("to SCHED_FIFO: dequeued for good first") {
    k.set_scheduler(b, Policy::kFifo, 0, 10);
    CHECK_FALSE(b.se.sched_delayed);
    CHECK_FALSE(b.on_rq);
    CHECK(b.state == TaskState::kInterruptible);
    CHECK(k.rq(0).cfs.h_nr_delayed == 0);
    CHECK(k.rq(0).nr_running == 1);
  }
}

// dequeue_task_fair() when a class change completes a delayed dequeue
// (DEQUEUE_SLEEP | DEQUEUE_DELAYED): B's estimate already left the root
// cfs_rq when it slept. 6.12.19 takes it off again (floored at 0; only
// DEQUEUE_SAVE or a migration spares a delayed task); 6.18.35 does not.
// Both sample the sleep again with util_est_update().
TEST_CASE("a delayed task's class change: 6.12 drops its util_est from the root again, 6.18 does not",
          "[fair][eevdf][util_est]") {
  for (const char* version : {"6.12", "6.18"}) {
    CAPTURE(version);
    ScenarioParams p = exact_scenario(version);
    p.kernel.base_slice = Time::ms(3);
    p.tasks = {task("B", {ev_run(Time::us(1800)), ev_sleep(Time::ms(5))}),
               task("A", {ev_run(Time::ms(3)), ev_sleep(Time::ms(1))})};
    p.duration = Time::s(1);
    System sys(p, 1);
    Kernel& k = sys.kernel();
    Task& b = find_task(k, "B");
    const Rq& rq = k.rq(0);
    // The first moment B sleeps delayed with estimates on both sides.
    Time t = Time::ms(10);
    for (; t < Time::ms(500); t += Time::us(100)) {
      k.run_until(t);
      if (b.se.sched_delayed && rq.cfs.avg.util_est.value() > 0 && b.se.avg.util_est.value() > 0) break;
    }
    REQUIRE(t < Time::ms(500));
    k.run_until(t + Time::us(37));  // between events: the rq clock is behind now
    REQUIRE(b.se.sched_delayed);
    const uint32_t root_before = rq.cfs.avg.util_est.value();
    const uint32_t b_est = b.se.avg.util_est.value();
    SchedAvg sampled = b.se.avg;
    util_est_update(sampled, true, rq.capacity);  // the second sample
    SchedAvg queued = b.se.avg;
    k.set_scheduler(b, Policy::kFifo, 0, 10);
    // The rq clock is updated before the delayed dequeue, so B accrues
    // load (on_rq, delayed) up to now in one update, not up to the rq's
    // last update and then as blocked.
    update_load_avg_se(rq.pelt.rq_clock_pelt(), queued, b.se.weight, true, 0, false);
    CHECK(b.se.avg.load_sum == queued.load_sum);
    REQUIRE_FALSE(b.se.sched_delayed);
    if (std::string(version) == "6.12")
      CHECK(rq.cfs.avg.util_est.value() == root_before - std::min(root_before, b_est));
    else
      CHECK(rq.cfs.avg.util_est.value() == root_before);
    CHECK(b.se.avg.util_est.value() == sampled.util_est.value());
  }
}

// switched_to_fair() calls the core's wakeup_preempt(): a task that becomes
// fair while an RT task runs is of a lower class and preempts nothing (the
// fair class's own check would weigh it against the RT task's stale
// entity). Q, FIFO 10 and queued behind R (FIFO 50), turns SCHED_OTHER.
// 6.6: no fair server, whose start would reschedule by itself.
TEST_CASE("a queued task that becomes fair does not preempt the running RT task", "[fair][rt]") {
  for (const char* version : {"6.6", "6.1"}) {
    CAPTURE(version);
    ScenarioParams p = exact_scenario(version);
    p.tasks = {hog("R", Policy::kFifo, 50), hog("Q", Policy::kFifo, 10)};
    p.duration = Time::ms(10);
    System sys(p, 1);
    Kernel& k = sys.kernel();
    k.run_until(Time::us(500));
    Task& q = find_task(k, "Q");
    REQUIRE(k.rq(0).curr == &find_task(k, "R"));
    REQUIRE(q.on_rq);
    REQUIRE_FALSE(k.rq(0).need_resched);
    k.set_scheduler(q, Policy::kNormal, 0, 0);
    CHECK(q.sched_class == SchedClassId::kFair);
    CHECK_FALSE(k.rq(0).need_resched);
    CHECK_FALSE(k.rq(0).need_resched_lazy);
  }
}

// set_load_weight() runs while the task is still in its old class, and only
// the fair class reweights (reweight_task_fair(): vlag x old/new weight).
// B sleeps (6.6: a plain dequeue) with lag L, turns SCHED_FIFO (nice 0:
// same weight), then back to SCHED_OTHER at nice 5: the kernel leaves L as
// it is; a fair -> fair change of a sleeping task scales it by 1024/335.
TEST_CASE("a nice change of a task that is RT now keeps its lag unscaled", "[fair][rt]") {
  ScenarioParams p = exact_scenario("6.6");
  p.kernel.base_slice = Time::ms(3);
  p.tasks = {task("B", {ev_run(Time::ms(1)), ev_sleep(Time::ms(50))}), hog("A")};
  p.duration = Time::ms(40);
  System sys(p, 1);
  Kernel& k = sys.kernel();
  Task& b = find_task(k, "B");
  k.run_until(Time::us(500));
  REQUIRE(k.rq(0).curr == &b);  // B first (equal deadlines: the first queued)
  k.run_until(Time::us(1100));  // B slept at 1 ms: v_B = 1 ms, v_A = 0, V = 0.5 ms
  REQUIRE_FALSE(b.on_rq);
  const int64_t lag = b.se.vlag;
  REQUIRE(lag == -500000);
  SECTION("through SCHED_FIFO") {
    k.set_scheduler(b, Policy::kFifo, 0, 10);
    CHECK(b.se.vlag == lag);
    k.set_scheduler(b, Policy::kNormal, 5, 0);
    CHECK(b.se.vlag == lag);
    CHECK(b.se.weight == 335);
  }
  SECTION("fair to fair") {
    k.set_scheduler(b, Policy::kNormal, 5, 0);
    CHECK(b.se.vlag == static_cast<int64_t>(static_cast<__int128>(lag) * 1024 / 335));
  }
}

// set_next_buddy() and set_last_buddy() skip SCHED_IDLE entities
// (se_is_idle()), in every version.
TEST_CASE("a SCHED_IDLE task never becomes a buddy", "[fair]") {
  SECTION("EEVDF (6.12), NEXT_BUDDY on: a SCHED_IDLE wakee is not cfs_rq->next") {
    for (Policy policy : {Policy::kIdle, Policy::kNormal}) {
      CAPTURE(static_cast<int>(policy));
      ScenarioParams p = exact_scenario("6.12", 250);
      p.kernel.base_slice = Time::ms(3);
      p.kernel.features["NEXT_BUDDY"] = true;
      // W runs 50 us alone, sleeps, and wakes at 1 ms while A runs (its
      // slice and the first tick come later); a wake-up, not a fork.
      p.tasks = {task("W", {ev_run(Time::us(50)), ev_sleep(Time::us(950))}, policy), hog("A"), hog("B")};
      p.tasks[1].delay = p.tasks[2].delay = Time::us(100);
      p.duration = Time::ms(10);
      System sys(p, 1);
      Kernel& k = sys.kernel();
      k.run_until(Time::us(1500));
      Task& w = find_task(k, "W");
      REQUIRE(w.on_rq);
      if (policy == Policy::kIdle)
        CHECK(k.rq(0).cfs.next == nullptr);
      else
        CHECK((k.rq(0).cfs.next == &w.se || k.rq(0).curr == &w));
    }
  }
  SECTION("CFS (6.1), LAST_BUDDY on: a preempted SCHED_IDLE task is not cfs_rq->last") {
    ScenarioParams p = exact_scenario("6.1");
    // Buddies need nr_running >= sched_nr_latency = 8.
    for (int i = 0; i < 8; ++i) p.tasks.push_back(hog("idle" + std::to_string(i), Policy::kIdle));
    for (TaskSpec& t : p.tasks) t.delay = Time::us(100);
    // N runs 50 us alone and wakes at 0.98 ms among them (not at a tick,
    // whose reschedule would come first).
    p.tasks.push_back(task("N", {ev_run(Time::us(50)), ev_sleep(Time::us(930))}));
    p.duration = Time::ms(10);
    System sys(p, 1);
    Kernel& k = sys.kernel();
    k.run_until(Time::us(980) + Time::ns(1));
    REQUIRE(k.rq(0).curr == &find_task(k, "N"));  // a non-idle task preempts a SCHED_IDLE one
    CHECK(k.rq(0).cfs.last == nullptr);
  }
}

// 6.1's sched_nr_latency is 8 whatever sched_latency says (only a write
// of debugfs' tunable_scaling recomputes it). Ten hogs on one CPU with
// sched_latency 12 ms: the period is 10 x min_granularity = 7.5 ms and a
// slice 0.75 ms, so every 1 ms tick switches; had the period stayed 12 ms
// (nr_latency 12 / 0.75 = 16) a slice of 1.2 ms would keep a task 2 ticks.
TEST_CASE("6.1: sched_nr_latency stays 8 when sched_latency is set", "[fair][cfs]") {
  ScenarioParams p = exact_scenario("6.1", 1000);
  p.kernel.sched_latency = Time::ms(12);
  for (int i = 0; i < 10; ++i) p.tasks.push_back(hog("h" + std::to_string(i)));
  p.duration = Time::ms(40);
  const auto runs = run_logging_switches(p).runs_until(Time::ms(40));
  REQUIRE(runs.size() >= 30);
  for (size_t i = 1; i < runs.size(); ++i) {
    INFO(runs[i].second << " at " << runs[i].first);
    CHECK(runs[i].first - runs[i - 1].first == 1000000);
  }
}

// 6.1's sched_slice(): a SCHED_IDLE entity among non-idle ones has
// sysctl_sched_idle_min_granularity (0.75 ms, not scaled by CPU count) as
// its floor, not min_granularity (0.75 x 4 = 3 ms on 8 CPUs). A hog and a
// SCHED_IDLE hog share cpu0 of eight: the idle task's share of the period
// (24 x 3/1027 ms) is below either floor, so it runs until the first tick
// past 0.75 ms: 1 ms each time it comes up (with the 3 ms floor, 3 ms: the
// tick that finds min_granularity run and its vruntime far ahead).
TEST_CASE("6.1: a SCHED_IDLE task's slice floor is sched_idle_min_granularity", "[fair][cfs]") {
  ScenarioParams p = exact_scenario("6.1", 1000, 8);
  p.tasks = {on_cpus(hog("h"), {0}), on_cpus(hog("idle", Policy::kIdle), {0})};
  p.duration = Time::s(3);
  const auto runs = run_logging_switches(p).runs_until(Time::s(3));
  int idle_runs = 0;
  for (size_t i = 0; i + 1 < runs.size(); ++i) {
    if (runs[i].second != "idle") continue;
    ++idle_runs;
    INFO("idle at " << runs[i].first);
    CHECK(runs[i + 1].first - runs[i].first == 1000000);
  }
  CHECK(idle_runs >= 3);
}

// set_user_nice() (binder's nice inheritance) dequeues with DEQUEUE_SAVE
// alone: on 6.1 the queue's min_vruntime is not advanced, so a queued
// task's vruntime comes back where it was. a and b share one CPU: b runs
// 0-3 ms (v 3 -> 6), a from 3 ms; at 4.5 ms a is at v 7.5, b waits at 6,
// the leftmost, and min_vruntime is 6. With DEQUEUE_MOVE (as
// __sched_setscheduler() passes) min_vruntime would move to a's 7.5 and b
// come back 1.5 ms later in virtual time.
TEST_CASE("set_user_nice() keeps a queued task's place (DEQUEUE_SAVE without DEQUEUE_MOVE)", "[fair][cfs]") {
  ScenarioParams p = exact_scenario("6.1", 1000);
  p.tasks = {hog("a"), hog("b")};
  p.duration = Time::ms(10);
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::us(4500));
  Task& a = find_task(k, "a");
  Task& b = find_task(k, "b");
  REQUIRE(k.rq(0).curr == &a);
  const int64_t v = b.se.vruntime, min_v = k.rq(0).cfs.min_vruntime;
  REQUIRE(v == min_v);
  k.set_user_nice(b, -5);
  CHECK(b.nice() == -5);
  CHECK(b.se.weight == 3121);
  CHECK(b.se.vruntime == v);
  CHECK(k.rq(0).cfs.min_vruntime == min_v);
}

// pick_next_entity() of 6.12.19 takes cfs_rq->next under PICK_BUDDY
// (features.h: true); NEXT_BUDDY only nominates it at wakeup preemption.
// 6.6 gated the pick on NEXT_BUDDY itself. W wakes every 1 ms among two
// hogs and, with NEXT_BUDDY, becomes the next buddy.
TEST_CASE("6.12 picks the next buddy under PICK_BUDDY and 6.6 under NEXT_BUDDY", "[fair]") {
  auto buddy_picks = [](const std::string& version, std::optional<bool> pick_buddy) {
    ScenarioParams p = exact_scenario(version, 250);
    p.kernel.base_slice = Time::ms(3);
    p.kernel.features["NEXT_BUDDY"] = true;
    if (pick_buddy) p.kernel.features["PICK_BUDDY"] = *pick_buddy;
    p.tasks = {task("W", {ev_run(Time::us(50)), ev_sleep(Time::us(950))}), hog("A"), hog("B")};
    p.tasks[1].delay = p.tasks[2].delay = Time::us(100);
    p.duration = Time::ms(100);
    System sys(p, 1);
    sys.kernel().start_decision_counts();
    sys.kernel().run_until(Time::ms(100));
    std::map<std::string, uint64_t> picks;
    for (const DecisionCount& d : sys.kernel().decision_counts())
      if (d.kind == "pick" && d.reason.find("the next buddy") != std::string::npos) picks[d.reason.substr(0, 10)] += d.count;
    return picks;
  };
  const auto on = buddy_picks("6.12", std::nullopt);
  CHECK(on.count("PICK_BUDDY") == 1);
  CHECK(on.count("NEXT_BUDDY") == 0);
  CHECK(buddy_picks("6.12", false).empty());  // nominated, never picked
  const auto v66 = buddy_picks("6.6", std::nullopt);
  CHECK(v66.count("NEXT_BUDDY") == 1);
  CHECK(v66.count("PICK_BUDDY") == 0);
}

// prio_changed_fair(): the running task whose nice gets worse is told to
// reschedule when another task is queued; a better nice, or no other task,
// changes nothing until the next tick -- except on 6.12 (6.12.19), where
// the change's DEQUEUE_SAVE of the CPU's only fair task stops the fair
// server (dequeue_entities()) and the enqueue starts it again, and
// dl_server_start() reschedules any non-DL curr. 6.6 has no server; 6.18's
// is not stopped by a dequeue (and dl_server_start() returns while it is
// active).
TEST_CASE("a running fair task whose priority drops is rescheduled", "[fair]") {
  ScenarioParams p = exact_scenario("6.12");
  p.kernel.base_slice = Time::ms(3);  // first deadline at 1.5 ms: no slice ends before the checks at 0.5 ms
  p.duration = Time::ms(10);
  SECTION("with another task queued") {
    p.tasks = {hog("a"), hog("b")};
    System sys(p, 1);
    Kernel& k = sys.kernel();
    k.run_until(Time::us(500));
    Task& curr = *k.rq(0).curr;
    REQUIRE_FALSE(curr.is_idle_task);
    REQUIRE_FALSE(k.rq(0).need_resched);
    k.set_scheduler(curr, Policy::kNormal, -5, 0);  // better: no resched
    CHECK_FALSE(k.rq(0).need_resched);
    k.set_scheduler(curr, Policy::kNormal, 19, 0);  // worse: resched
    CHECK(k.rq(0).need_resched);
  }
  SECTION("alone") {
    const std::string version = GENERATE("6.6", "6.12", "6.18");
    CAPTURE(version);
    p.kernel.version = version;
    p.tasks = {hog("a")};
    System sys(p, 1);
    Kernel& k = sys.kernel();
    k.run_until(Time::us(500));
    REQUIRE_FALSE(k.rq(0).need_resched);
    k.set_scheduler(*k.rq(0).curr, Policy::kNormal, 19, 0);
    CHECK(k.rq(0).need_resched == (version == "6.12"));
  }
}

// dequeue_task_fair() takes util_est's sample after the dequeue's PELT
// update in 6.1 and 6.6 (util_est_update() last), before it in 6.12
// (util_est_update() first: util_avg as of the last update). A new task
// runs 3 ms from 0 and sleeps; HZ=250, so no tick between its enqueue
// (where its util_avg starts) and its dequeue: 6.1 and 6.6 learn the util
// it reached at 3 ms, 6.12 the value it had at the enqueue, lower.
TEST_CASE("util_est samples util_avg after the dequeue's PELT update before 6.12, before it from 6.12", "[fair][util_est]") {
  const std::string version = GENERATE("6.1", "6.6", "6.12");
  CAPTURE(version);
  ScenarioParams p = exact_scenario(version, 250);
  p.duration = Time::ms(10);
  p.tasks = {task("t", {ev_run(Time::ms(3)), ev_sleep(Time::ms(100))})};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::us(3500));
  const SchedAvg& a = find_task(k, "t").se.avg;
  REQUIRE(a.util_avg > 0);
  if (version == "6.12")
    CHECK(a.util_est.value() < a.util_avg);
  else
    CHECK(a.util_est.value() == a.util_avg);
}

// sched_feature_inert(): a switch the loader says changes nothing on a
// version must change nothing there. Flipping each such switch from its
// default on a busy gs101 load (fair tasks at several nices, wake-ups,
// preemption, RT, balancing) leaves the run's whole JSON report unchanged.
TEST_CASE("a scheduler feature said to be inert on a version changes no run there", "[fair][features]") {
  int flipped = 0;
  for (const std::string& version : supported_kernel_versions()) {
    const KernelVersionInfo info = *kernel_version_info(version);
    const std::string head = "duration: 200ms\nkernel: {version: \"" + version + "\", hz: 250";
    const std::string tasks = R"(}
tasks:
  - {name: ui, nice: -10, events: [{run: 2ms}, {timer: {ref: v, period: 8333us}}]}
  - {name: sf, policy: SCHED_FIFO, priority: 2, events: [{run: 1ms}, {timer: {ref: s, period: 8333us}}]}
  - {name: bg, instances: 10, nice: 10, events: [{run: 5ms}, {sleep: 7ms}]}
  - {name: hog, instances: 3, nice: 19, events: [{run: 1s}]}
)";
    RunOptions o;
    const std::string base = render_json(run_scenario(gs101_scenario(head + tasks), o));
    for (const FeatureInfo& f : all_sched_features()) {
      if (!sched_feature_inert(f.name, info) || f.unmodelled) continue;
      CAPTURE(version, f.name);
      const bool on = info.defaults(f.id);
      const ScenarioParams p = gs101_scenario(head + ", features: {" + f.name + ": " + (on ? "false}" : "true}") + tasks);
      CHECK(render_json(run_scenario(p, o)) == base);
      ++flipped;
    }
  }
  // EEVDF's seven and PICK_BUDDY on 6.1; CFS's three (GENTLE_FAIR_SLEEPERS,
  // START_DEBIT, LAST_BUDDY) on 6.6, 6.12 and 6.18; PICK_BUDDY and
  // PLACE_DEADLINE_INITIAL on 6.6.
  CHECK(flipped == 8 + 3 * 3 + 2);
}


// 6.18.35 keeps a running entity's slice protection (vprot) in a union
// with its lag (vlag): a renice of the running task (sched_change:
// dequeue with DEQUEUE_SAVE, which writes the lag, re-enqueue,
// set_next_task(first = false), which does not protect again) leaves the
// lag where protect_slice() looks. Two hogs with 5 ms custom slices, HZ
// 1000: A 0-3 ms (half a slice first), B 3-6, A 6-11, B 11-16, then A
// from 16 ms with v = 8 ms, B's v, and its deadline (13 ms) as its
// protection, ineligible as soon as it runs. Reniced (0 -> -1) at 18.5
// ms, its lag (V - v = 9.25 - 10.5 = -1.25 ms; -1.0 ms at the new
// weight) becomes its vprot, below its vruntime, so the tick at 19 ms
// reschedules and EEVDF picks B. 6.12
// stashes the new deadline as RUN_TO_PARITY's marker in set_next_entity()
// whatever `first` says, so A keeps the CPU past its old 21 ms, as it does
// without the renice.
TEST_CASE("6.18: a running task reniced loses its slice protection, 6.12 keeps RUN_TO_PARITY", "[fair][eevdf]") {
  const std::string version = GENERATE("6.12", "6.18");
  const bool renice = GENERATE(false, true);
  CAPTURE(version, renice);
  ScenarioParams p = exact_scenario(version, 1000);
  p.duration = Time::ms(30);
  TaskSpec a = hog("A");
  a.slice = Time::ms(5);
  TaskSpec b = hog("B");
  b.slice = Time::ms(5);
  p.tasks = {a, b};
  System sys(p, 1);
  SwitchLog log;
  sys.add_observer(&log);
  Kernel& k = sys.kernel();
  k.run_until(Time::us(18500));
  Task& running = *k.rq(0).curr;
  REQUIRE(running.comm == "A");
  REQUIRE(log.first_run("A", Time::ms(16)) == Time::ms(16));
  if (renice) k.set_user_nice(running, -1);
  k.run_until(Time::ms(30));
  const Time b_back = log.first_run("B", Time::ms(16));
  if (version == "6.18" && renice)
    CHECK(b_back == Time::ms(19));
  else if (renice)
    CHECK(b_back > Time::ms(21));
  else
    CHECK(b_back == Time::ms(21));
}

// update_entity_lag()'s clamp: 6.12 bounds a leaving entity's lag by twice
// its own slice (at least a tick), 6.18.35 by the queue's largest slice
// plus a tick. One CPU at HZ 1000, base slice 3 ms, WAKEUP_PREEMPTION off
// (the waiting is the tick's alone): L (nice 19, custom slice 20 ms, a
// hog) runs from 0; X (nice 0, 3 ms slice) forks 1 us later and, at each
// pick, runs 20 us and sleeps 1 ms. L keeps the CPU through its first
// slice (a new task's half: 10 ms, seen used at the 11 ms tick) while X
// waits: V - v_X = 15 x (10.999 ms x 1024/15) / 1039 = 10.84 ms, less the
// 20 us X runs (x 1 - 1024/1039). X leaves with that lag: 6.12 clamps it
// to 2 x 3 = 6 ms, 6.18 keeps it (limit 20 + 1 = 21 ms). Woken at 12.02
// ms with its lag, X waits through L's next 20 ms slice (to the 32 ms
// tick) and gains about 19.7 ms more: at its second sleep 6.18 clamps the
// lag to exactly 21 ms, 6.12 to 6 ms again. (A nice 0 entity's virtual
// and real time agree: the limits are exact.) One slice of waiting never
// reaches the 6.18 bound; the lag carried over a sleep does.
TEST_CASE("a leaving entity's lag is clamped: 2 x its slice on 6.12, the queue's largest slice + a tick on 6.18",
          "[fair][eevdf]") {
  auto vlags = [](const std::string& version) {
    ScenarioParams p = exact_scenario(version);
    p.kernel.base_slice = Time::ms(3);
    p.kernel.features = {{"WAKEUP_PREEMPTION", false}};
    TaskSpec l = hog("L", Policy::kNormal, 19);
    l.slice = Time::ms(20);
    TaskSpec x = task("X", {ev_run(Time::us(20)), ev_sleep(Time::ms(1))});
    x.delay = Time::us(1);
    p.tasks = {l, x};
    p.duration = Time::ms(50);
    System sys(p, 1);
    Kernel& k = sys.kernel();
    const Task& xt = find_task(k, "X");
    std::vector<int64_t> lags;
    for (Time at : {Time::us(11500), Time::us(32500)}) {  // X asleep after its first and second runs
      k.run_until(at);
      CAPTURE(version, at);
      REQUIRE(xt.state == TaskState::kInterruptible);
      lags.push_back(xt.se.vlag);
    }
    return lags;
  };
  CHECK(vlags("6.12") == std::vector<int64_t>{6000000, 6000000});
  const std::vector<int64_t> v618 = vlags("6.18");
  CHECK(v618[0] > 10830000);  // 10.84 ms: over 6.12's 6 ms, under 21 ms: unclamped
  CHECK(v618[0] < 10850000);
  CHECK(v618[1] == 21000000);
}
