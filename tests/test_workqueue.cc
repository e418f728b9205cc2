// Workqueues (models/kernel/workqueue/, kernel/workqueue.c 6.12 + WQ_RTPRI):
// pools, worker priorities, max_active, ordering, concurrency management.
// Scenarios have no overheads and create_worker costs nothing unless a
// test says otherwise, so every time below is computed by hand.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>

#include "experiments/lib/runner.h"
#include "models/errors.h"
#include "models/kernel/workqueue/runnable_tracker.h"
#include "models/kernel/workqueue/workqueue.h"
#include "models/workload/device_calls.h"
#include "config_test_util.h"
#include "sched_test_util.h"

using namespace schedlab;
using namespace schedlab::testing;

namespace {

EventSpec ev_queue_work(const std::string& wq, const std::string& work, Time cost, Time sleep = Time::zero(),
                        int cpu = -1, Time delay = Time::zero()) {
  EventSpec e = ev_call(CallSpec::Op::kQueueWork, wq);
  e.call.work = work;
  e.call.cost = cost;
  e.call.sleep = sleep;
  e.call.cpu = cpu;
  e.call.delay = delay;
  return e;
}

ScenarioParams wq_scenario(int cpus, std::vector<WorkqueueParams> wqs) {
  ScenarioParams p = exact_scenario("6.12", 250, cpus);
  p.duration = Time::ms(50);
  p.workqueue.create_worker_delay = Time::zero();
  p.workqueue.workqueues = std::move(wqs);
  return p;
}

// "hp" (WQ_HIGHPRI, per-CPU) and "uhp" (WQ_HIGHPRI | WQ_UNBOUND).
std::pair<WorkqueueParams, WorkqueueParams> highpri_workqueues() {
  WorkqueueParams bound_hp;
  bound_hp.name = "hp";
  bound_hp.flags = kWqHighpri;
  WorkqueueParams unbound_hp = bound_hp;
  unbound_hp.name = "uhp";
  unbound_hp.flags = kWqHighpri | kWqUnbound;
  return {bound_hp, unbound_hp};
}

// A task that queues `events` once, at t=0 on CPU 0, then sleeps.
TaskSpec queuer(std::vector<EventSpec> events, Policy policy = Policy::kFifo, int prio = 50) {
  events.push_back(ev_sleep(Time::s(10)));
  TaskSpec t = task("queuer", std::move(events), policy, prio);
  t.cpus = {0};
  return t;
}

}  // namespace

TEST_CASE("highpri workers run at nice -20 and carry an H in their name", "[workqueue]") {
  auto [bound_hp, unbound_hp] = highpri_workqueues();
  ScenarioParams p = wq_scenario(2, {bound_hp, unbound_hp});
  p.tasks = {queuer({ev_queue_work("hp", "a", Time::us(100)), ev_queue_work("uhp", "b", Time::us(100)),
                     ev_queue_work("events", "c", Time::us(100))})};
  WorkLog log = run_logged<WorkLog>(p);
  const WorkItemRecord& a = log.first("a");
  CHECK(a.worker == "kworker/0:0H");  // CPU 0's highpri pool, worker id 0
  CHECK(a.policy == Policy::kNormal);
  CHECK(a.nice == -20);
  const WorkItemRecord& b = log.first("b");
  CHECK(b.worker.rfind("kworker/u8:", 0) == 0);  // 2 CPUs x 4 bound pools: the first unbound pool is 8
  CHECK(b.nice == -20);
  const WorkItemRecord& c = log.first("c");  // system_wq: CPU 0's normal pool
  CHECK(c.worker == "kworker/0:0");
  CHECK(c.nice == 0);
}

TEST_CASE("max_active bounds the items a workqueue runs at once", "[workqueue]") {
  WorkqueueParams wq;
  wq.name = "two";
  wq.flags = kWqUnbound;
  wq.max_active = 2;
  ScenarioParams p = wq_scenario(4, {wq});
  std::vector<EventSpec> ev;
  for (const char* w : {"w1", "w2", "w3", "w4", "w5"}) ev.push_back(ev_queue_work("two", w, Time::ms(1)));
  p.tasks = {queuer(ev)};
  WorkLog log = run_logged<WorkLog>(p);
  REQUIRE(log.items.size() == 5);
  CHECK(log.max_running == 2);
  // w1 and w2 at once; each end activates the next inactive item, in
  // queue order: w3 and w4 at 1 ms, w5 at 2 ms.
  CHECK(log.first("w1").started == Time::zero());
  CHECK(log.first("w2").started == Time::zero());
  CHECK(log.first("w3").started == Time::ms(1));
  CHECK(log.first("w4").started == Time::ms(1));
  CHECK(log.first("w5").started == Time::ms(2));
  CHECK(log.first("w5").queued == Time::zero());  // CPU wait counts from queue_work()
}

TEST_CASE("an ordered workqueue runs one item at a time, in queue order", "[workqueue]") {
  WorkqueueParams wq;
  wq.name = "ord";
  wq.flags = kWqOrdered;
  ScenarioParams p = wq_scenario(4, {wq});
  // Queued from two CPUs: order is queue order, not CPU.
  TaskSpec a = queuer({ev_queue_work("ord", "a", Time::ms(1)), ev_queue_work("ord", "b", Time::ms(2))});
  TaskSpec c = task("other", {ev_sleep(Time::us(10)), ev_queue_work("ord", "c", Time::ms(1)), ev_sleep(Time::s(10))},
                    Policy::kFifo, 50);
  c.cpus = {1};
  p.tasks = {a, c};
  WorkLog log = run_logged<WorkLog>(p);
  REQUIRE(log.items.size() == 3);
  CHECK(log.max_running == 1);
  CHECK(log.items[0].work == "a");
  CHECK(log.items[1].work == "b");
  CHECK(log.items[2].work == "c");
  CHECK(log.first("a").started == Time::zero());
  CHECK(log.first("b").started == Time::ms(1));
  CHECK(log.first("c").started == Time::ms(3));
  CHECK(log.first("c").queued == Time::us(10));
}

// When an active item retires and lets an inactive one in, 6.12 kicks the
// pool only if the activated item is in another pool (node_activate_
// pending_pwq(): pwq->pool != caller_pool; per-CPU workqueues never kick):
// the retiring worker is still running and takes the item itself
// (keep_working()). Items a and b (1 ms each) queued at t = 0 on an
// ordered workqueue: the worker that ran a runs b at 1 ms, and the pool's
// idle worker (created when the first one started working) is not woken.
TEST_CASE("an item let in when another retires is left to the retiring worker", "[workqueue][cm]") {
  WorkqueueParams wq;
  wq.name = "ord";
  wq.flags = kWqOrdered;
  ScenarioParams p = wq_scenario(2, {wq});
  p.tasks = {queuer({ev_queue_work("ord", "a", Time::ms(1)), ev_queue_work("ord", "b", Time::ms(1))})};
  struct Wakeups : WorkLog {
    void on_wakeup(Time t, const Task& p, int) override {
      if (p.comm.rfind("kworker/", 0) == 0) worker_wakeups.push_back({t, p.comm});
    }
    std::vector<std::pair<Time, std::string>> worker_wakeups;
  };
  Wakeups log = run_logged<Wakeups>(p);
  REQUIRE(log.items.size() == 2);
  CHECK(log.first("b").started == Time::ms(1));
  CHECK(log.first("b").worker == log.first("a").worker);
  // Wake-ups at t = 0 only: the worker kicked for a, and the worker it
  // creates on starting work (the new kthread's first wake-up). None at
  // 1 ms, when a retires and lets b in.
  std::string woken;
  for (const auto& [t, c] : log.worker_wakeups) woken += std::to_string(t.count()) + " ns " + c + "; ";
  INFO(woken);
  REQUIRE(log.worker_wakeups.size() == 2);
  for (const auto& [t, c] : log.worker_wakeups) CHECK(t == Time::zero());
}

TEST_CASE("a bound pool starts another worker when the running one blocks", "[workqueue][cm]") {
  // One CPU. w1 runs 1 ms then sleeps 5 ms inside the work function; w2
  // waits behind it. Concurrency management: when w1's worker blocks,
  // nr_running drops to 0 and kick_pool() wakes the idle worker the manager
  // created, so w2 runs at 1 ms instead of after w1 (6 ms).
  ScenarioParams p = wq_scenario(1, {});
  p.tasks = {queuer({ev_queue_work("events", "w1", Time::ms(1), Time::ms(5)),
                     ev_queue_work("events", "w2", Time::ms(1))})};
  WorkLog log = run_logged<WorkLog>(p);
  const WorkItemRecord& w1 = log.first("w1");
  const WorkItemRecord& w2 = log.first("w2");
  CHECK(w1.started == Time::zero());
  CHECK(w1.ended == Time::ms(6));
  CHECK(w2.started == Time::ms(1));
  CHECK(w2.ended == Time::ms(2));
  CHECK(w1.worker != w2.worker);
  CHECK(w1.worker.rfind("kworker/0:", 0) == 0);
  CHECK(w2.worker.rfind("kworker/0:", 0) == 0);

  SECTION("a CPU-intensive workqueue's items do not hold back the pool") {
    // WQ_CPU_INTENSIVE: w1 does not count in nr_running even while it
    // runs, so a second worker is woken for w2 at once; on one CPU the
    // scheduler then shares it (both nice 0: w2 starts at the first tick
    // that ends w1's slice, HZ=1000).
    WorkqueueParams ci;
    ci.name = "ci";
    ci.flags = kWqCpuIntensive;
    ScenarioParams q = wq_scenario(1, {ci});
    q.kernel.hz = 1000;
    q.tasks = {queuer({ev_queue_work("ci", "w1", Time::ms(4)), ev_queue_work("ci", "w2", Time::ms(1))})};
    WorkLog l2 = run_logged<WorkLog>(q);
    CHECK(l2.max_running == 2);
    CHECK(l2.first("w2").started == Time::ms(1));
  }
}

TEST_CASE("creating a worker costs the configured delay", "[workqueue]") {
  // The pool's only worker must manage first (no idle worker would remain):
  // it sleeps 50 us in create_worker(), then runs the item.
  ScenarioParams p = wq_scenario(2, {});
  p.workqueue.create_worker_delay = Time::us(50);
  p.tasks = {queuer({ev_queue_work("events", "w", Time::us(100))})};
  System sys(p, 1);
  WorkLog log;
  sys.add_observer(&log);
  sys.run();
  CHECK(log.first("w").started == Time::us(50));
  CHECK(log.first("w").wait == Time::zero());  // asleep in D, not runnable
  // The pool now has two workers; the second run of the item needs no manager.
  int kworkers = 0;
  for (const auto& t : sys.kernel().tasks()) kworkers += t->comm.rfind("kworker/0:", 0) == 0;
  CHECK(kworkers == 2);
}

TEST_CASE("WQ_RTPRI workers are SCHED_FIFO, max_active is capped at half the CPUs, threads at the driver's cap",
          "[workqueue][rtpri]") {
  WorkqueueParams wq;
  wq.name = "rt";
  wq.flags = kWqUnbound | kWqRtpri;
  wq.rt_priority = 5;
  auto run = [&](int max_workers) {
    wq.max_workers = max_workers;
    ScenarioParams p = wq_scenario(8, {wq});
    std::vector<EventSpec> ev;
    for (int i = 0; i < 6; ++i) ev.push_back(ev_queue_work("rt", "w" + std::to_string(i), Time::ms(1)));
    p.tasks = {queuer(ev)};
    auto sys = std::make_unique<System>(p, 1);
    auto log = std::make_unique<WorkLog>();
    sys->add_observer(log.get());
    sys->run();
    CHECK(sys->workqueues()->find("rt")->max_active() == 4);  // num_online_cpus() / 2
    for (const WorkItemRecord& i : log->items) {
      CHECK(i.policy == Policy::kFifo);
      CHECK(i.rt_priority == 5);
    }
    std::set<std::string> workers;
    for (const WorkItemRecord& i : log->items) workers.insert(i.worker);
    return std::make_pair(log->max_running, workers.size());
  };
  SECTION("no thread cap: max_active (4) bounds concurrency") {
    auto [concurrent, threads] = run(0);
    CHECK(concurrent == 4);
    CHECK(threads >= 4);
  }
  SECTION("the driver's two threads bound it further") {
    auto [concurrent, threads] = run(2);
    CHECK(concurrent == 2);
    CHECK(threads == 2);
  }
}

// A 3 ms delay at HZ=250 is one jiffy (rounded up); queued at jiffy 0 the
// timer expires at jiffy 1 and the wheel runs it with bucket 2: 8 ms.
TEST_CASE("delayed work is queued when its timer fires, and a pending item is not queued twice", "[workqueue]") {
  ScenarioParams p = wq_scenario(2, {});
  p.tasks = {queuer({ev_queue_work("events", "d", Time::us(100), Time::zero(), -1, Time::ms(3)),
                     ev_queue_work("events", "d", Time::us(100)),  // still pending: dropped
                     ev_queue_work("events_unbound", "u", Time::us(100), Time::zero(), 1)})};
  System sys(p, 1);
  WorkLog log;
  sys.add_observer(&log);
  sys.run();
  int runs = 0;
  for (const WorkItemRecord& i : log.items) runs += i.work == "d";
  CHECK(runs == 1);
  CHECK(log.first("d").queued == Time::ms(8));
  CHECK(log.first("d").started == Time::ms(8));
  CHECK(sys.device_calls()->already_pending() == 1);
}

EventSpec ev_mod_work(const std::string& wq, const std::string& work, Time cost, Time delay, int cpu = -1) {
  EventSpec e = ev_queue_work(wq, work, cost, Time::zero(), cpu, delay);
  e.call.mod = true;
  return e;
}

// mod_delayed_work() re-arms a pending delayed item (an idle timer pushed
// back): at HZ=250, 3 ms from jiffy 0 runs in bucket 2 (8 ms); mod'ed
// again at 5 ms (jiffy 1), it runs in bucket 3 (12 ms), once.
TEST_CASE("mod_delayed_work pushes a pending delayed item's timer back", "[workqueue]") {
  ScenarioParams p = wq_scenario(2, {});
  p.tasks = {queuer({ev_mod_work("events", "d", Time::us(100), Time::ms(3)), ev_sleep(Time::ms(5)),
                     ev_mod_work("events", "d", Time::us(100), Time::ms(3))})};
  WorkLog log = run_logged<WorkLog>(p);
  REQUIRE(log.items.size() == 1);
  CHECK(log.items[0].queued == Time::ms(12));
  CHECK(log.items[0].started == Time::ms(12));
}

// Taken back off a queue (try_to_grab_pending()): an ordered workqueue
// runs "busy" (5 ms) from 0; "a", queued at 1 ms, waits on the pwq's
// inactive list (max_active 1); "b", queued on CPU 0's per-CPU pool
// behind "busy0" there, waits active on its worklist. Both are mod'ed at
// 2 ms with 3 ms (jiffy 0: bucket 2, 8 ms): each leaves its queue and is
// queued again at 8 ms (without the take-back a pending item would stay
// queued from 1 ms and the mod do nothing); each runs once. Nothing
// leaks: items queued on both queues at 20 ms run at once (c, then d:
// their kworkers share CPU 0).
TEST_CASE("mod_delayed_work takes a queued item back, from the inactive list or the worklist", "[workqueue]") {
  WorkqueueParams ordered;
  ordered.name = "ord";
  ordered.flags = kWqUnbound | kWqOrdered;
  ScenarioParams p = wq_scenario(2, {ordered});
  TaskSpec q = queuer({ev_queue_work("ord", "busy", Time::ms(5)), ev_queue_work("events", "busy0", Time::ms(5), Time::zero(), 0),
                       ev_sleep(Time::ms(1)), ev_queue_work("ord", "a", Time::us(100)),
                       ev_queue_work("events", "b", Time::us(100), Time::zero(), 0), ev_sleep(Time::ms(1)),
                       ev_mod_work("ord", "a", Time::us(100), Time::ms(3)),
                       ev_mod_work("events", "b", Time::us(100), Time::ms(3), 0), ev_sleep(Time::ms(18)),
                       ev_queue_work("ord", "c", Time::us(100)),
                       ev_queue_work("events", "d", Time::us(100), Time::zero(), 0)});
  q.cpus = {1};
  p.tasks = {q};
  WorkLog log = run_logged<WorkLog>(p);
  CHECK(log.first("busy").started == Time::zero());
  CHECK(log.first("a").queued == Time::ms(8));
  CHECK(log.first("a").started >= Time::ms(8));
  CHECK(log.first("b").queued == Time::ms(8));
  CHECK(log.first("b").started >= Time::ms(8));
  int runs = 0;
  for (const WorkItemRecord& i : log.items) runs += i.work == "a" || i.work == "b";
  CHECK(runs == 2);
  CHECK(log.first("c").queued == Time::ms(20));
  CHECK(log.first("c").started == Time::ms(20));
  CHECK(log.first("d").started <= Time::us(20100));  // at once, or after c if their kworkers share a CPU
}

// An item queued again while it runs (its worker asleep in it: CPU 0's
// pool runs X 0 -> 0.1 ms, then X sleeps 2 ms in D) waits on that
// worker's scheduled list once another worker picks it up (non-reentrancy,
// assign_work()); mod at 1.5 ms takes it back from there (3 ms: bucket 2,
// 8 ms). X runs twice (at 0 and 8 ms), not three times.
TEST_CASE("mod_delayed_work takes back an item waiting behind its own execution", "[workqueue]") {
  ScenarioParams p = wq_scenario(2, {});
  TaskSpec q = queuer({ev_queue_work("events", "x", Time::us(100), Time::ms(2), 0), ev_sleep(Time::ms(1)),
                       ev_queue_work("events", "x", Time::us(100), Time::ms(2), 0), ev_sleep(Time::us(500)),
                       ev_mod_work("events", "x", Time::us(100), Time::ms(3), 0)});
  q.cpus = {1};
  p.tasks = {q};
  WorkLog log = run_logged<WorkLog>(p);
  std::vector<Time> starts;
  for (const WorkItemRecord& i : log.items)
    if (i.work == "x") starts.push_back(i.started);
  CHECK(starts == std::vector<Time>{Time::zero(), Time::ms(8)});
}

TEST_CASE("a work name queued both as a work_struct and as a kthread_work is a model error", "[workqueue]") {
  ScenarioParams p = wq_scenario(1, {});
  KthreadWorkerParams kw;
  kw.name = "kw";
  p.kthread_workers = {kw};
  EventSpec k = ev_call(CallSpec::Op::kKthreadQueueWork, "kw");
  k.call.work = "x";
  k.call.cost = Time::us(10);
  p.tasks = {queuer({ev_queue_work("events", "x", Time::us(10)), ev_sleep(Time::ms(1)), k})};
  CHECK_THROWS_WITH(run_logged<WorkLog>(p), Catch::Contains("work 'x' is queued with both queue_work and kthread_queue_work"));
}

// calc_wheel_index() (6.12 kernel/time/timer.c): a timer_list's timeout is
// rounded up to jiffies, and its expiry up to the next bucket of its level
// (1 jiffy below 63 jiffies, 8 below 504, ...), run by that jiffy's tick.
TEST_CASE("a timer_list runs at the tick of its timer-wheel bucket", "[workqueue][timer]") {
  auto fire_at = [](int hz, Time now, Time delay) {
    ScenarioParams p = exact_scenario("6.12", hz, 1);
    p.duration = Time::s(1);
    System sys(p, 1);
    sys.kernel().run_until(now);
    return sys.kernel().timer_list_fire_time(delay).count();
  };
  // HZ=1000 at jiffy 5: 10 ms expires at 15, level 0: bucket 16.
  CHECK(fire_at(1000, Time::us(5500), Time::ms(10)) == Time::ms(16).count());
  // 100 jiffies is level 1 (63..503): expires 105, bucket (105 / 8 + 1) x 8 = 112.
  CHECK(fire_at(1000, Time::us(5500), Time::ms(100)) == Time::ms(112).count());
  // 1 us is still one jiffy: expires 6, bucket 7.
  CHECK(fire_at(1000, Time::us(5500), Time::us(1)) == Time::ms(7).count());
  // HZ=300 (3,333,333 ns jiffies): 10 ms is exactly 3 jiffies; at jiffy 0,
  // bucket 4.
  CHECK(fire_at(300, Time::zero(), Time::ms(10)) == 4 * 3'333'333);
  // Past the wheel (HZ=250, LVL_DEPTH 9): WHEEL_TIMEOUT_MAX = 62 x 8^8
  // jiffies, level 8's bucket 63 x 8^8 jiffies of 4 ms.
  CHECK(fire_at(250, Time::zero(), Time::s(365LL * 24 * 3600)) == (int64_t{63} << 24) * 4'000'000);
}

TEST_CASE("the runnable part of a work item's CPU wait is what its worker spent in R", "[workqueue]") {
  // One CPU, a FIFO hog busy for 2 ms from t=0; the bound kworker is woken
  // at t=0 by the (higher FIFO) queuer and stays runnable until the hog
  // sleeps: CPU wait 2 ms, all of it runnable.
  ScenarioParams p = wq_scenario(1, {});
  TaskSpec hog = task("hog", {ev_run(Time::ms(2)), ev_sleep(Time::s(10))}, Policy::kFifo, 10);
  p.tasks = {queuer({ev_queue_work("events", "w", Time::us(100))}), hog};
  WorkLog log = run_logged<WorkLog>(p);
  const WorkItemRecord& w = log.first("w");
  CHECK(w.started == Time::ms(2));
  CHECK(w.wait == Time::ms(2));
}

// RunnableTracker fed by hand (the sched tracepoints it observes), in us:
// w is woken onto idle CPU 1 at 10; CPU 1 leaves idle for `other` at 30
// (w now waits behind it); at 50 w is pushed to CPU 2, idle: it waits
// there for the exit; CPU 2 switches to w at 80. Runnable 10 -> 80 (70),
// on an idle CPU 10 -> 30 and 50 -> 80 (50). A re-registered task starts
// over.
TEST_CASE("RunnableTracker splits a worker's runnable time on idle CPUs, across a migration", "[workqueue]") {
  Task idle;
  idle.is_idle_task = true;
  Task w, other, hog;
  w.index = 1;
  other.index = 2;
  hog.index = 3;
  RunnableTracker tr;
  tr.track(w);
  auto us = [](int64_t v) { return Time::us(v); };
  tr.on_wakeup(us(10), w, 1);
  tr.on_wakeup(us(20), other, 1);  // not tracked: ignored
  tr.on_switch(us(30), 1, idle, TaskState::kRunning, other);
  tr.on_migrate(us(50), w, 1, 2);
  tr.on_switch(us(80), 2, idle, TaskState::kRunning, w);
  RunnableWait all = tr.wait_between(w, us(0), us(100));
  CHECK(all.runnable == us(70));
  CHECK(all.on_idle_cpu == us(50));
  RunnableWait part = tr.wait_between(w, us(20), us(60));  // 20-30 and 50-60 on idle CPUs
  CHECK(part.runnable == us(40));
  CHECK(part.on_idle_cpu == us(20));
  CHECK(tr.runnable_between(w, us(0), us(100)) == us(70));
  // Preempted on CPU 2 by `hog` at 90, moved to CPU 1 (busy with `other`)
  // at 95 and run there at 120: runnable, never on an idle CPU.
  tr.on_switch(us(90), 2, w, TaskState::kRunning, hog);
  tr.on_migrate(us(95), w, 2, 1);
  tr.on_switch(us(120), 1, other, TaskState::kInterruptible, w);
  RunnableWait later = tr.wait_between(w, us(85), us(130));
  CHECK(later.runnable == us(30));
  CHECK(later.on_idle_cpu == Time::zero());
  // A wake-up's own migration (before sched_wakeup, not yet runnable)
  // changes nothing; the wake-up decides: CPU 2 is idle again.
  tr.on_switch(us(125), 2, hog, TaskState::kInterruptible, idle);
  tr.on_switch(us(130), 1, w, TaskState::kInterruptible, idle);
  tr.on_migrate(us(140), w, 1, 2);
  tr.on_wakeup(us(140), w, 2);
  tr.on_switch(us(150), 2, idle, TaskState::kRunning, w);
  RunnableWait woken = tr.wait_between(w, us(135), us(160));
  CHECK(woken.runnable == us(10));
  CHECK(woken.on_idle_cpu == us(10));
  tr.track(w);
  CHECK(tr.wait_between(w, us(0), us(200)).runnable == Time::zero());
}

TEST_CASE("unbound pools are shared by workqueues with the same attributes", "[workqueue]") {
  WorkqueueParams a, b, c;
  a.name = "a";
  a.flags = kWqUnbound;
  b.name = "b";
  b.flags = kWqUnbound | kWqSysfs;
  c = b;
  c.name = "c";
  c.nice = -5;  // /sys/devices/virtual/workqueue/c/nice
  ScenarioParams p = wq_scenario(4, {a, b, c});
  p.tasks = {queuer({ev_queue_work("a", "wa", Time::us(10)), ev_queue_work("b", "wb", Time::us(10)),
                     ev_queue_work("c", "wc", Time::us(10))})};
  System sys(p, 1);
  WorkLog log;
  sys.add_observer(&log);
  sys.run();
  WorkqueueSystem& wqs = *sys.workqueues();
  CHECK(wqs.find("a")->pwq_for_cpu(0).pool == wqs.find("b")->pwq_for_cpu(0).pool);
  CHECK(wqs.find("c")->pwq_for_cpu(0).pool != wqs.find("a")->pwq_for_cpu(0).pool);
  CHECK(log.first("wc").nice == -5);
  CHECK(log.first("wa").nice == 0);
}

TEST_CASE("invalid workqueue parameters are model errors", "[workqueue]") {
  auto build = [](WorkqueueParams wq) {
    ScenarioParams p = wq_scenario(2, {wq});
    p.tasks = {queuer({})};
    System sys(p, 1);
  };
  WorkqueueParams w;
  w.name = "x";
  w.nice = -5;  // needs WQ_UNBOUND | WQ_SYSFS
  CHECK_THROWS_AS(build(w), ModelError);
  w = WorkqueueParams{};
  w.name = "x";
  w.flags = kWqRtpri | kWqHighpri;
  CHECK_THROWS_AS(build(w), ModelError);
  w = WorkqueueParams{};
  w.name = "events";  // a system workqueue's name
  w.flags = kWqUnbound;
  CHECK_THROWS_WITH(build(w), Catch::Contains("system workqueue"));
  w = WorkqueueParams{};
  w.name = "x";
  w.flags = kWqOrdered | kWqSysfs;  // workqueue_sysfs_register() refuses __WQ_ORDERED
  CHECK_THROWS_WITH(build(w), Catch::Contains("ordered workqueue cannot be WQ_SYSFS"));
  ScenarioParams p = wq_scenario(2, {});
  p.tasks = {queuer({ev_queue_work("nope", "w", Time::us(1))})};
  CHECK_THROWS_WITH(System(p, 1), Catch::Contains("unknown workqueue 'nope'"));
}

TEST_CASE("idle workers beyond two are reaped after the idle timeout", "[workqueue]") {
  // Six items that each sleep 1 ms make the unbound pool grow to six
  // workers (each blocked item's worker is replaced: unbound workers are
  // not concurrency managed, every queued item wakes or creates one). Once
  // all are idle, too_many_workers() holds (nr_idle > 2) and the idle
  // timer (10 ms here instead of 300 s) reaps the oldest until two remain.
  WorkqueueParams wq;
  wq.name = "u";
  wq.flags = kWqUnbound;
  ScenarioParams p = wq_scenario(4, {wq});
  p.workqueue.idle_timeout = Time::ms(10);
  std::vector<EventSpec> ev;
  for (int i = 0; i < 6; ++i) ev.push_back(ev_queue_work("u", "w" + std::to_string(i), Time::us(10), Time::ms(1)));
  p.tasks = {queuer(ev)};
  System sys(p, 1);
  WorkLog log;
  sys.add_observer(&log);
  sys.run();
  int created = 0, alive = 0;
  for (const auto& t : sys.kernel().tasks())
    if (t->comm.rfind("kworker/u", 0) == 0) {
      ++created;
      alive += t->state != TaskState::kDead;
    }
  CHECK(created >= 6);
  CHECK(alive == 2);
  const WorkerPool& pool = *sys.workqueues()->find("u")->pwq_for_cpu(0).pool;
  CHECK(pool.nr_workers == 2);
  CHECK(pool.nr_idle == 2);
}

TEST_CASE("kworkers report under their pool attributes and not their pool id", "[workqueue][reports]") {
  // The first unbound pool is kworker/u8 on 2 CPUs whichever attributes it
  // has, so names cannot be compared across variants; groups can.
  auto [bound_hp, unbound_hp] = highpri_workqueues();
  WorkqueueParams unbound_one = unbound_hp;
  unbound_one.name = "u1";
  unbound_one.flags = kWqUnbound;
  unbound_one.cpumask = {1};
  WorkqueueParams bound_rt;  // WQ_RTPRI without WQ_UNBOUND: a FIFO pool per CPU, one group
  bound_rt.name = "brt";
  bound_rt.flags = kWqRtpri;
  bound_rt.rt_priority = 2;
  ScenarioParams p = wq_scenario(2, {bound_hp, unbound_hp, unbound_one, bound_rt});
  p.tasks = {queuer({ev_queue_work("hp", "a", Time::us(100)), ev_queue_work("uhp", "b", Time::us(100)),
                     ev_queue_work("events", "c", Time::us(100)), ev_queue_work("events_unbound", "d", Time::us(100)),
                     ev_queue_work("u1", "e", Time::us(100)), ev_queue_work("brt", "f", Time::us(100))})};
  System sys(p, 1);
  sys.run();
  std::map<std::string, std::string> group_of;
  for (const auto& t : sys.kernel().tasks())
    if (t->comm.rfind("kworker/", 0) == 0) group_of[t->comm] = t->group;
  CHECK(group_of.at("kworker/0:0H") == "kworkers/percpu-H");
  CHECK(group_of.at("kworker/0:0") == "kworkers/percpu");
  CHECK(group_of.at("kworker/u8:0") == "kworkers/unbound-nice-20");
  CHECK(group_of.at("kworker/u9:0") == "kworkers/unbound-nice0-cpus1");  // u1's, allocated with the scenario
  CHECK(group_of.at("kworker/u12:0") == "kworkers/unbound-nice0");  // events_unbound's, at its first use (u10, u11: brt's)
  // brt's pool on each CPU: one group, not "kworkers/percpu", and names of its own.
  CHECK(group_of.at("kworker/0:0R") == "kworkers/brt-fifo2");
  CHECK(group_of.at("kworker/1:0R") == "kworkers/brt-fifo2");
}

// kick_pool() (6.12): an idle worker of a non-strict unbound pool whose
// wake_cpu is outside the pool's pod (the cache scope: here each 2-CPU
// cluster is an LLC) is woken from a pod CPU. FIFO hogs hold CPUs 0 and 1
// for 2 ms, so pod {0,1}'s worker runs "w1" (queued from CPU 0) on CPU 2
// or 3. At 3 ms, CPUs 0 and 1 idle, "w2" is queued from CPU 0: its wake-up
// starts from a pod CPU, and with every CPU idle it stays in the pod. (The
// model used to start from the worker's last CPU, 2 or 3, which is idle:
// wake_affine_idle() kept it there.)
TEST_CASE("kick_pool wakes an unbound worker that left its pod from a pod CPU", "[workqueue]") {
  WorkqueueParams u;
  u.name = "u";
  u.flags = kWqUnbound;
  ScenarioParams p = wq_scenario(4, {u});
  p.platform.clusters = {cluster_1024("a", 2, {{1000000, 800000, 0}}), cluster_1024("b", 2, {{1000000, 800000, 0}})};
  p.platform.llc = LlcSharing::kCluster;
  p.duration = Time::ms(10);
  TaskSpec hog0 = task("hog0", {ev_run(Time::ms(2)), ev_sleep(Time::s(10))}, Policy::kFifo, 10);
  hog0.cpus = {0};
  TaskSpec hog1 = hog0;
  hog1.name = "hog1";
  hog1.cpus = {1};
  p.tasks = {queuer({ev_queue_work("u", "w1", Time::us(100)), ev_sleep(Time::ms(3)),
                     ev_queue_work("u", "w2", Time::us(100))}),
             hog0, hog1};
  WorkLog log = run_logged<WorkLog>(p);
  const WorkItemRecord& w1 = log.first("w1");
  const WorkItemRecord& w2 = log.first("w2");
  REQUIRE(w1.worker == w2.worker);  // the pool's one worker
  CHECK(w1.cpu >= 2);
  CHECK(w2.cpu <= 1);
  CHECK(w2.started == Time::ms(3));
}

// ------------------------------------------- cancel_work(_sync), flush_work

EventSpec ev_work_call(CallSpec::Op op, const std::string& work, bool flag = false) {
  EventSpec e = ev_call(op, "");
  e.call.work = work;
  (op == CallSpec::Op::kCancelWork ? e.call.sync : e.call.delayed) = flag;
  return e;
}

// Where the caller resumed: the time it queued `marker` (a 10 us item on
// CPU 1's per-CPU pool) right after the call.
EventSpec ev_marker(const std::string& marker) { return ev_queue_work("events", marker, Time::us(10), Time::zero(), 1); }

// cancel_work_sync() (6.12 __cancel_work_sync()): X runs on CPU 0 from 0,
// 100 us of work then 2 ms asleep in D, returning at 2.1 ms. The canceller
// (FIFO, CPU 1) calls at 1 ms: nothing is pending, so it sleeps (D) until
// the execution returns and resumes at 2.1 ms. Meanwhile queuing X is
// refused (the item is disabled: a second task's queue_work at 1.5 ms
// does nothing); at 3 ms it is queued and runs again.
TEST_CASE("cancel_work_sync waits for the execution in progress and refuses queuing meanwhile", "[workqueue][cancel]") {
  ScenarioParams p = wq_scenario(2, {});
  TaskSpec q = queuer({ev_queue_work("events", "x", Time::us(100), Time::ms(2), 0), ev_sleep(Time::ms(1)),
                       ev_work_call(CallSpec::Op::kCancelWork, "x", true), ev_marker("after")});
  q.cpus = {1};
  TaskSpec other = task("other",
                        {ev_sleep(Time::us(1500)), ev_queue_work("events", "x", Time::us(100), Time::zero(), 0),
                         ev_sleep(Time::us(1500)), ev_queue_work("events", "x", Time::us(100), Time::zero(), 0),
                         ev_sleep(Time::s(10))},
                        Policy::kFifo, 40);
  other.cpus = {1};
  p.tasks = {q, other};
  WorkLog log = run_logged<WorkLog>(p);
  CHECK(log.first("after").queued == Time::us(2100));
  std::vector<Time> starts;
  for (const WorkItemRecord& i : log.items)
    if (i.work == "x") starts.push_back(i.started);
  CHECK(starts == std::vector<Time>{Time::zero(), Time::ms(3)});
}

// cancel_work() takes a pending delayed item back (its timer deleted: X,
// queued with 3 ms at 0, never runs) and does not wait; cancel_work_sync()
// of an item queued behind a busy ordered workqueue (inactive) takes it
// back and returns at once (nothing executes it).
TEST_CASE("cancel_work takes pending items back without waiting", "[workqueue][cancel]") {
  WorkqueueParams ordered;
  ordered.name = "ord";
  ordered.flags = kWqUnbound | kWqOrdered;
  ScenarioParams p = wq_scenario(2, {ordered});
  TaskSpec q = queuer({ev_queue_work("events", "x", Time::us(100), Time::zero(), 0, Time::ms(3)),
                       ev_queue_work("ord", "busy", Time::ms(5)), ev_queue_work("ord", "a", Time::us(100)),
                       ev_sleep(Time::ms(1)), ev_work_call(CallSpec::Op::kCancelWork, "x"),
                       ev_work_call(CallSpec::Op::kCancelWork, "a", true), ev_marker("after")});
  q.cpus = {1};
  p.tasks = {q};
  WorkLog log = run_logged<WorkLog>(p);
  CHECK(log.first("after").queued == Time::ms(1));
  for (const WorkItemRecord& i : log.items) {
    CHECK(i.work != "x");
    CHECK(i.work != "a");
  }
}

// flush_work() (start_flush_work()): "a" waits on an ordered workqueue's
// inactive list behind "busy" (0 -> 5 ms) and runs 5 -> 5.1 ms; flushed at
// 2 ms, the caller resumes when that execution returns, 5.1 ms. A delayed
// item waiting for its timer is not waited for: flushing "d" (3 ms from
// 6 ms: jiffy 1, bucket 3, 12 ms) returns at once; flush_delayed_work() of
// "e" (same timer) queues it at once on the flusher's CPU (CPU 1's pool,
// behind the 10 us marker) and waits for it: 6.01 -> 6.11 ms.
TEST_CASE("flush_work waits for the queued execution, and flush_delayed_work runs an armed item now", "[workqueue][flush]") {
  WorkqueueParams ordered;
  ordered.name = "ord";
  ordered.flags = kWqUnbound | kWqOrdered;
  ScenarioParams p = wq_scenario(2, {ordered});
  TaskSpec q = queuer({ev_queue_work("ord", "busy", Time::ms(5)), ev_queue_work("ord", "a", Time::us(100)),
                       ev_sleep(Time::ms(2)), ev_work_call(CallSpec::Op::kFlushWork, "a"), ev_marker("after_a"),
                       ev_sleep(Time::us(900)),  // to 6 ms
                       ev_queue_work("events", "d", Time::us(100), Time::zero(), -1, Time::ms(3)),
                       ev_queue_work("events", "e", Time::us(100), Time::zero(), -1, Time::ms(3)),
                       ev_work_call(CallSpec::Op::kFlushWork, "d"), ev_marker("after_d"),
                       ev_work_call(CallSpec::Op::kFlushWork, "e", true), ev_marker("after_e")});
  q.cpus = {1};
  p.tasks = {q};
  WorkLog log = run_logged<WorkLog>(p);
  CHECK(log.first("a").ended == Time::us(5100));
  CHECK(log.first("after_a").queued == Time::us(5100));
  CHECK(log.first("after_d").queued == Time::ms(6));
  CHECK(log.first("d").queued == Time::ms(12));
  CHECK(log.first("e").queued == Time::ms(6));
  CHECK(log.first("e").cpu == 1);
  CHECK(log.first("e").started == Time::us(6010));  // behind after_d on the same worker
  CHECK(log.first("e").ended == Time::us(6110));
  CHECK(log.first("after_e").queued == Time::us(6110));
}

// A flush whose queued instance is taken back (6.12 try_to_grab_pending()
// leaves the flush's barrier where insert_wq_barrier() linked it): "a"
// waits on an ordered workqueue's inactive list behind "busy" (0 -> 5 ms);
// the flusher (from 1 ms) waits for a's execution; at 2 ms another task
// cancels "a" (or mod_delayed_work()s it 20 ms ahead). The barrier moves
// to the pool's worklist (move_linked_works()) and runs when busy's
// worker finishes, 5 ms: the flusher resumes then, not when (if ever) "a"
// runs again.
TEST_CASE("a flush whose item is taken back is completed by its barrier", "[workqueue][flush]") {
  WorkqueueParams ordered;
  ordered.name = "ord";
  ordered.flags = kWqUnbound | kWqOrdered;
  ScenarioParams p = wq_scenario(2, {ordered});
  const bool mod = GENERATE(false, true);
  INFO((mod ? "mod_delayed_work" : "cancel_work"));
  TaskSpec f = queuer({ev_queue_work("ord", "busy", Time::ms(5)), ev_queue_work("ord", "a", Time::us(100)),
                       ev_sleep(Time::ms(1)), ev_work_call(CallSpec::Op::kFlushWork, "a"), ev_marker("after")});
  f.cpus = {1};
  TaskSpec other = task("other",
                        {ev_sleep(Time::ms(2)),
                         mod ? ev_mod_work("ord", "a", Time::us(100), Time::ms(20)) : ev_work_call(CallSpec::Op::kCancelWork, "a"),
                         ev_sleep(Time::s(10))},
                        Policy::kFifo, 40);
  other.cpus = {1};
  p.tasks = {f, other};
  WorkLog log = run_logged<WorkLog>(p);
  CHECK(log.first("busy").ended == Time::ms(5));
  CHECK(log.first("wq_barrier").started == Time::ms(5));
  CHECK(log.first("after").queued == Time::ms(5));
  int a_runs = 0;
  for (const WorkItemRecord& i : log.items) a_runs += i.work == "a";
  CHECK(a_runs == (mod ? 1 : 0));
}

// The YAML events, their errors, and a kthread_work cancelled through
// them: "k" runs on kw 0 -> 2 ms (its work sleeps 2 ms in D); the
// canceller calls cancel_work sync at 1 ms and resumes at 2 ms
// (kthread_cancel_delayed_work_sync()).
TEST_CASE("cancel_work and flush_work load from YAML and check their work item", "[workqueue][cancel][config]") {
  const std::string yaml =
      "name: s\nduration: 20ms\nkernel: {version: '6.12'}\nplatform: {cpus: 2}\nkthread_workers:\n  - {name: kw}\n"
      "tasks:\n  - name: t\n    policy: SCHED_FIFO\n    priority: 50\n    cpus: [1]\n    loop: 1\n    events:\n"
      "      - queue_work: {wq: events, work: w, cost: 10us}\n"
      "      - kthread_queue_work: {worker: kw, work: k, sleep: 2ms}\n"
      "      - sleep: 1ms\n"
      "      - cancel_work: {work: k, sync: true}\n"
      "      - queue_work: {wq: events_unbound, work: after, cost: 10us}\n"
      "      - flush_work: {work: w, delayed: true}\n"
      "      - cancel_work: {work: w}\n"
      "      - flush_work: {work: k}\n";
  const ScenarioParams p = load_scenario_yaml(yaml, "x.yaml");
  const auto& ev = p.tasks[0].phases[0].events;
  CHECK(ev[3].call.op == CallSpec::Op::kCancelWork);
  CHECK(ev[3].call.sync);
  CHECK(ev[3].call.work == "k");
  CHECK(ev[5].call.op == CallSpec::Op::kFlushWork);
  CHECK(ev[5].call.delayed);
  CHECK_FALSE(ev[6].call.sync);
  CHECK(ev[7].call.op == CallSpec::Op::kFlushWork);  // kthread_flush_work(): k is idle by then, a no-op
  auto error = [&](const std::string& from, const std::string& to) { return error_when_replaced(yaml, from, to); };
  CHECK_THAT(error("cancel_work: {work: w}", "cancel_work: {work: ww}"),
             Catch::Contains("x.yaml:20:22: tasks[0].events[6].cancel_work:") &&
                 Catch::Contains("cancel_work names work item 'ww', which no queue_work or kthread_queue_work event "
                                 "queues (work items: w, k, after); did you mean 'w'?"));
  CHECK_THAT(error("{work: k, sync: true}", "{work: k}"),
             Catch::Contains("'k' is a kthread_work (kthread_queue_work), which has only "
                             "kthread_cancel_(delayed_)work_sync(): write sync: true"));
  CHECK_THAT(error("flush_work: {work: w,", "flush_work: {work: k,"),
             Catch::Contains("'k' is a kthread_work (kthread_queue_work), which has kthread_flush_work() only (no "
                             "delayed form): drop delayed"));
  CHECK_THAT(error("cancel_work: {work: w}", "cancel_work: {work: w, wq: events}"), Catch::Contains("unknown key 'wq'"));
  CHECK_THAT(error("sync: true", "sync: yes please"), Catch::Contains("cancel_work.sync: expected true or false"));

  System sys(p, 1);
  WorkLog log;
  sys.add_observer(&log);
  sys.run();
  CHECK(log.first("k").started == Time::zero());
  CHECK(log.first("k").ended == Time::ms(2));
  CHECK(log.first("after").queued == Time::ms(2));
}

EventSpec ev_kthread_work(const std::string& work, Time cost, Time sleep = Time::zero(), Time delay = Time::zero()) {
  EventSpec e = ev_call(CallSpec::Op::kKthreadQueueWork, "kw");
  e.call.work = work;
  e.call.cost = cost;
  e.call.sleep = sleep;
  e.call.delay = delay;
  return e;
}

// kthread_flush_work() (6.12 kthread.c) on kw (CPU 0): k1 executes 0 ->
// 2 ms (asleep in D), k2 and k5 wait behind it. Flushing k2 at 1 ms
// inserts the flush work right after k2, before k5: k2 runs 2 -> 2.1 ms,
// then the flush work wakes the caller at 2.1 ms, then k5 runs (100 us).
// k3 is queued at 2.1 ms behind k5, k6 behind k3; the caller sleeps
// 0.2 ms, so k3 executes 2.2 -> 3.2 ms (asleep in D) when it is flushed
// at 2.3 ms: the flush work goes to the list's head, before k6, and the
// caller resumes at 3.2 ms. Flushing k1, neither queued nor executing,
// returns at once. The flush works are traced but not counted as kw's
// items. A delayed work whose timer is armed is a model error (the
// kernel's caller would never return).
TEST_CASE("kthread_flush_work waits for the queued or executing work through its flush work", "[kthread_worker][flush]") {
  ScenarioParams p = wq_scenario(2, {});
  KthreadWorkerParams kw;
  kw.name = "kw";
  kw.cpus = {0};
  p.kthread_workers = {kw};
  TaskSpec q = queuer({ev_kthread_work("k1", Time::zero(), Time::ms(2)), ev_kthread_work("k2", Time::us(100)),
                       ev_kthread_work("k5", Time::us(100)), ev_sleep(Time::ms(1)),
                       ev_work_call(CallSpec::Op::kFlushWork, "k2"), ev_marker("after_k2"),
                       ev_kthread_work("k3", Time::zero(), Time::ms(1)), ev_kthread_work("k6", Time::us(100)),
                       ev_sleep(Time::us(200)), ev_work_call(CallSpec::Op::kFlushWork, "k3"), ev_marker("after_k3"),
                       ev_work_call(CallSpec::Op::kFlushWork, "k1"), ev_marker("after_k1")});
  q.cpus = {1};
  p.tasks = {q};
  p.duration = Time::ms(20);
  WorkLog log = run_logged<WorkLog>(p);
  CHECK(log.first("k2").started == Time::ms(2));
  CHECK(log.first("k2").ended == Time::us(2100));
  CHECK(log.first("after_k2").queued == Time::us(2100));
  CHECK(log.first("k5").started == Time::us(2100));
  CHECK(log.first("k3").started == Time::us(2200));
  CHECK(log.first("k3").ended == Time::us(3200));
  CHECK(log.first("after_k3").queued == Time::us(3200));
  CHECK(log.first("k6").started == Time::us(3200));
  CHECK(log.first("after_k1").queued == Time::us(3200));
  int flushes = 0;
  for (const WorkItemRecord& i : log.items) flushes += i.work == "kthread_flush_work";
  CHECK(flushes == 2);
  const RunResult r = simulate_run(p, 1, {}, nullptr);
  bool found = false;
  for (const WorkQueueMetrics& w : r.workqueues)
    if (w.name == "kw") {
      found = true;
      CHECK(w.items == 5);  // k1, k2, k5, k3, k6
    }
  CHECK(found);

  TaskSpec d = queuer({ev_kthread_work("k4", Time::us(10), Time::zero(), Time::ms(3)),
                       ev_work_call(CallSpec::Op::kFlushWork, "k4")});
  p.tasks = {d};
  CHECK_THROWS_WITH(run_logged<WorkLog>(p), Catch::Contains("kthread_flush_work() of 'k4' while its delayed timer is armed"));
}
