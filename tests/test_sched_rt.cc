// RT class, throttling, the fair server and priority inheritance, with
// expectations worked out by hand from kernel/sched/rt.c, deadline.c and
// kernel/locking/rtmutex.c. One CPU, no overheads.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <string>

#include "models/errors.h"
#include "sched_test_util.h"

using namespace schedlab;
using namespace schedlab::testing;

TEST_CASE("a woken FIFO task preempts a fair one at once", "[rt]") {
  ScenarioParams p = exact_scenario("6.12", 250);
  p.duration = Time::ms(20);
  p.tasks = {hog("fair"), task("fifo", {ev_sleep(Time::us(5300)), ev_run(Time::ms(1))}, Policy::kFifo, 10)};
  System sys(p, 1);
  SwitchLog log;
  sys.add_observer(&log);
  sys.run();
  // Woken by its timer at 5.3 ms (RT tasks have no timer slack), between
  // ticks: it runs at 5.3 ms with zero wakeup latency.
  CHECK(log.first_run("fifo", Time::ms(1)) == Time::us(5300));
  RunResult r = sys.result();
  const TaskMetrics& m = metrics_of(r, "fifo");
  REQUIRE(m.wakeup_latency.size() >= 1);
  CHECK(m.wakeup_latency.values()[0] == 0);
}

TEST_CASE("a higher FIFO priority preempts a lower one, an equal one waits", "[rt]") {
  ScenarioParams p = exact_scenario("6.12", 250);
  p.duration = Time::ms(30);
  TaskSpec high = task("high", {ev_run(Time::ms(2)), ev_sleep(Time::s(10))}, Policy::kFifo, 20);
  high.delay = Time::us(3300);
  TaskSpec equal = task("equal", {ev_run(Time::ms(2)), ev_sleep(Time::s(10))}, Policy::kFifo, 10);
  equal.delay = Time::us(1100);
  p.tasks = {task("low", {ev_run(Time::ms(10)), ev_sleep(Time::s(10))}, Policy::kFifo, 10), equal, high};
  System sys(p, 1);
  SwitchLog log;
  sys.add_observer(&log);
  sys.run();
  // low runs 0..3.3, high preempts (3.3..5.3), low resumes at the head of
  // its list and finishes its 10 ms at 12 ms; only then does equal run.
  CHECK(log.first_run("high") == Time::us(3300));
  CHECK(log.first_run("low", Time::us(3301)) == Time::us(5300));
  CHECK(log.first_run("equal") == Time::ms(12));
}

TEST_CASE("SCHED_RR rotates equal priorities every 100 ms", "[rt]") {
  ScenarioParams p = exact_scenario("6.12", 250);
  p.duration = Time::ms(450);
  p.tasks = {hog("rr1", Policy::kRr, 10), hog("rr2", Policy::kRr, 10)};
  System sys(p, 1);
  SwitchLog log;
  sys.add_observer(&log);
  sys.run();
  // RR_TIMESLICE is 25 ticks at HZ=250: the slice runs out on the tick at
  // 100 ms, and the task goes to the tail of its list.
  std::vector<std::pair<int64_t, std::string>> expected = {
      {0, "rr1"}, {100000000, "rr2"}, {200000000, "rr1"}, {300000000, "rr2"}, {400000000, "rr1"}};
  CHECK(log.runs_until(Time::ms(450)) == expected);

  SECTION("at HZ=300 the slice is msecs_to_jiffies(100) = 30 ticks of 3,333,333 ns") {
    ScenarioParams q = p;
    q.kernel.hz = 300;
    q.duration = Time::ms(250);
    System sys300(q, 1);
    SwitchLog log300;
    sys300.add_observer(&log300);
    sys300.run();
    std::vector<std::pair<int64_t, std::string>> at300 = {{0, "rr1"}, {99999990, "rr2"}, {199999980, "rr1"}};
    CHECK(log300.runs_until(Time::ms(250)) == at300);
  }
}

// 6.6: def_rt_bandwidth throttles RT at 950 ms of each 1 s period (checked
// on the 4 ms tick: rt_time > 950 ms first at the tick of 952 ms). The
// period timer starts with the RT task's first enqueue at 0: one
// hrtimer_resolution later (1 ns), then every second from there, each
// time subtracting 950 ms:
//   period 1: throttled at 0.952 -> fair runs to 1.000000001 (48 ms + 1 ns);
//             rt_time 952 -> 2 ms
//   period 2: 2 ms + 951.999999 ms > 950 at 1.952 -> 48 ms + 1 ns;
//             rt_time 953.999999 -> 3.999999 ms
//   period 3: 3.999999 + 947.999999 > 950 at 2.948 -> 52 ms.
//                                                   total 148 ms + 2 ns
TEST_CASE("RT throttling (6.6) leaves fair tasks the rest of each period", "[rt][throttle]") {
  ScenarioParams p = exact_scenario("6.6", 250);
  p.duration = Time::s(3);
  p.tasks = {hog("fair"), hog("rt", Policy::kFifo, 50)};
  System sys(p, 1);
  sys.run();
  CHECK(metrics_of(sys.result(), "fair").cpu_time.count() == 148'000'002);
}

// The period timer stops when a period ends with no RT runtime left
// unreplenished and no RT task queued (do_sched_rt_period_timer() idle),
// and the next RT enqueue starts it again, 1 ns later, with its period
// counted from there. An RT task running 100 ms every 3 s: the timer
// starts at 1 ns, at 1.000000001 s gives the 100 ms back and, with the
// task asleep, stops; the wake-up at 3 s starts it for 3.000000001 s.
// do_sched_rt_period_timer() unthrottling a CPU with RT tasks queued goes
// through sched_rt_rq_enqueue() -> enqueue_top_rt_rq(), which kicks cpufreq
// (6.1.166 and 6.6.63 rt.c; the same function in 6.12). A SCHED_FIFO hog on
// little CPU 0 is throttled from 950 ms; at the period's end (HZ=300, so no
// tick falls there) schedutil evaluates CPU 0 at once.
// sched_rt_runtime_exceeded() (6.1/6.6 rt.c): "don't actually throttle
// groups that have no runtime assigned" -- with rt_runtime 0 the root
// rt_rq's time is dropped and RT runs on, unthrottled.
TEST_CASE("rt_runtime 0 never throttles", "[rt][throttle]") {
  ScenarioParams p = exact_scenario("6.1", 250);
  p.kernel.rt_runtime = Time::zero();
  p.tasks = {hog("rt", Policy::kFifo, 50), hog("f")};
  p.duration = Time::s(3);
  System sys(p, 1);
  sys.run();
  const RunResult r = sys.result();
  CHECK(metrics_of(r, "rt").cpu_time >= Time::ms(2999));
  CHECK(metrics_of(r, "f").cpu_time <= Time::ms(1));
  CHECK_FALSE(sys.kernel().rq(0).rt.rt_throttled);
}

TEST_CASE("RT unthrottling kicks cpufreq", "[rt][throttle][cpufreq]") {
  for (const char* version : {"6.1", "6.6"}) {
    INFO(version);
    ScenarioParams p = exact_scenario(version, 300);
    p.platform = toy_big_little();
    TaskSpec rt = hog("rt", Policy::kFifo, 50);
    rt.cpus = {0};
    p.tasks = {rt};
    System sys(p, 1);
    Kernel& k = sys.kernel();
    k.run_until(Time::ms(999));
    REQUIRE(k.rq(0).rt.rt_throttled);
    const SchedutilGovernor& sugov = *k.freq_domains()[0].sugov;
    CHECK(sugov.cpu_last_update(0) < Time::ms(951));  // nothing evaluated CPU 0 while it was throttled
    k.run_until(Time::ms(1001));
    CHECK_FALSE(k.rq(0).rt.rt_throttled);
    CHECK(sugov.cpu_last_update(0) >= Time::ms(1000));
    CHECK(sugov.cpu_last_update(0) < Time::ms(1001));
  }
}

namespace {
// 6.6, HZ=250, 3.5 s: one FIFO 50 task running 100 ms, then sleeping `sleep`.
ScenarioParams rt_run_then_sleep(Time sleep) {
  ScenarioParams p = exact_scenario("6.6", 250);
  p.duration = Time::ms(3500);
  p.tasks = {task("rt", {ev_run(Time::ms(100)), ev_sleep(sleep)}, Policy::kFifo, 50)};
  return p;
}
}  // namespace

TEST_CASE("the RT period timer (6.6) stops when RT is idle and restarts with the next RT enqueue", "[rt][throttle]") {
  System sys(rt_run_then_sleep(Time::ms(2900)), 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(500));
  CHECK(k.rq(0).rt.rt_time == Time::ms(100).count());
  CHECK(k.rt_period_timer_armed());
  CHECK(k.rt_period_timer_expiry().count() == 1'000'000'001);
  k.run_until(Time::ms(1500));
  CHECK(k.rq(0).rt.rt_time == 0);          // replenished at 1.000000001
  CHECK_FALSE(k.rt_period_timer_armed());  // and idle: stopped
  k.run_until(Time::ms(3000));
  CHECK(k.rt_period_timer_armed());  // the wake-up at 3 s started it
  CHECK(k.rt_period_timer_expiry().count() == 3'000'000'001);
}

// sched_rt_period_timer() forwards its expiry a period (hrtimer_forward_now())
// before it finds RT idle and stops; do_start_rt_bandwidth()'s
// hrtimer_forward_now(timer, 0) keeps an expiry still ahead. rt runs
// 100 ms and sleeps 1.4 s: the timer stops at 1.000000001 s with its
// expiry at 2.000000001 s, and the wake-up at 1.5 s starts it there (not
// 1 ns after the wake-up), so the period's grid stays. It gives the 100 ms
// back and stops again at 2.000000001 s, and the wake-up at 3 s, past
// that expiry, starts it for 3.000000001 s, which finds rt running and
// forwards it to 4.000000001 s.
TEST_CASE("the RT period timer (6.6) restarted within its last period keeps its grid", "[rt][throttle]") {
  System sys(rt_run_then_sleep(Time::ms(1400)), 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(1200));
  CHECK_FALSE(k.rt_period_timer_armed());
  k.run_until(Time::ms(1600));
  REQUIRE(k.rt_period_timer_armed());  // the wake-up at 1.5 s started it
  CHECK(k.rt_period_timer_expiry().count() == 2'000'000'001);
  k.run_until(Time::ms(2100));
  CHECK(k.rq(0).rt.rt_time == 0);  // the 100 ms from 1.5 s given back at 2.000000001 s
  CHECK_FALSE(k.rt_period_timer_armed());
  k.run_until(Time::ms(3050));
  REQUIRE(k.rt_period_timer_armed());
  CHECK(k.rt_period_timer_expiry().count() == 4'000'000'001);
}

// do_sched_rt_period_timer() (6.1/6.6 rt.c) reschedules a CPU with RT
// tasks queued but no RT time (sched_rt_rq_enqueue()'s resched_curr() is
// unconditional), and __pick_next_task()'s slow path then puts the running
// RT task (put_prev_task_rt(): the RT PELT signal updated) and sets it
// again (set_next_task_rt(first)). HZ 100, rt (FIFO 50) from 5 ms: run 1 ms,
// sleep 1998.5 ms, run 1 ms. Its first enqueue starts the timer for
// 5 ms + 1 ns, which finds rt running with no RT time yet: a __schedule()
// that picks rt again. The period gives the 1 ms back at 1.005000001 s and
// stops (RT idle) with its expiry forwarded to 2.005000001 s; the wake-up
// at 2.0045 s keeps that expiry. No tick comes between (2.000 s is before
// the wake-up, 2.010 s after the expiry), so at 2.005000001 s rt runs with
// rt_time still 0: a second __schedule(), which picks rt again and brings
// its RT signal up to 2.005 s (set_next_task_rt() had last updated it at
// the wake-up). The model used to leave both CPUs' schedules alone.
TEST_CASE("the RT period timer reschedules a CPU with RT queued but no RT time (6.1/6.6)", "[rt][throttle][pelt]") {
  const std::string version = GENERATE(as<std::string>(), "6.1", "6.6");
  ScenarioParams p = exact_scenario(version, 100);
  p.duration = Time::ms(2100);
  TaskSpec rt = task("rt", {ev_run(Time::ms(1)), ev_sleep(Time::us(1'998'500))}, Policy::kFifo, 50);
  rt.delay = Time::ms(5);
  p.tasks = {rt};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  const Rq& rq = k.rq(0);
  k.run_until(Time::ms(5));
  const uint64_t before_first = rq.sched_count;
  k.run_until(Time::us(5'500));
  CHECK(rq.sched_count == before_first + 1);  // 5 ms + 1 ns: rt picked again
  k.run_until(Time::us(2'004'900));
  CHECK(rq.rt.rt_time == 0);
  REQUIRE(k.rt_period_timer_armed());
  CHECK(k.rt_period_timer_expiry().count() == 2'005'000'001);
  const uint64_t before_second = rq.sched_count;
  const uint64_t signal_at_wakeup = rq.avg_rt.last_update_time;
  k.run_until(Time::us(2'005'200));
  CHECK(rq.sched_count == before_second + 1);
  CHECK(rq.curr->comm == "rt");
  // put_prev_task_rt() at 2.005000001 s, 0.5 ms of PELT clock after the
  // wake-up's update (last_update_time moves in whole 1024 ns steps).
  const uint64_t moved = rq.avg_rt.last_update_time - signal_at_wakeup;
  CHECK(moved > 500'000 - 1024);
  CHECK(moved < 500'000 + 1024);
}

// 6.12 removed that throttling; the deferred fair server starts when fair
// tasks have been starved until the zero-laxity point (period 1 s - 50 ms),
// runs them 50 ms, then runs them first thing each following period:
//   [0.95, 1.00], [1.95, 2.00], [2.95, 3.00]                total 150 ms
TEST_CASE("the fair server (6.12) gives starved fair tasks 50 ms per second", "[rt][fair_server]") {
  ScenarioParams p = exact_scenario("6.12", 250);
  p.duration = Time::s(3);
  p.tasks = {hog("fair"), hog("rt", Policy::kFifo, 50)};
  System sys(p, 1);
  SwitchLog log;
  sys.add_observer(&log);
  sys.run();
  CHECK(metrics_of(sys.result(), "fair").cpu_time == Time::ms(150));
  CHECK(log.first_run("fair", Time::ms(1)) == Time::ms(950));
  CHECK(log.first_run("fair", Time::ms(1000)) == Time::ms(1950));

  SECTION("and with neither guard the RT hog starves them") {
    ScenarioParams q = p;
    q.kernel.fair_server = false;
    System sys2(q, 1);
    sys2.run();
    CHECK(metrics_of(sys2.result(), "fair").cpu_time == Time::zero());
  }
}

// The same guards on a CPU where a second, migratable RT task waits: CPU 0
// runs FIFO 50 hog `a` with its equal `b` queued behind it (pushable, but
// CPU 1 runs FIFO 90 `hi`), and fair hog `f` is pinned to CPU 0. When the
// fair server (6.12) or RT throttling (6.6) picks `f`, no push is queued:
// only set_next_task_rt() queues one (rt_queue_push_tasks()). A push there
// would find `b` above the running `f`, ask for a pick that chooses `f`
// again, and stop simulated time. `f` gets what a CPU alone would give it:
// 6.12: [0.95, 1.00] and [1.95, 2.00] = 100 ms; 6.6: throttled at the
// ticks 0.952 and 1.952 until the period ends, at 1.000000001 (the timer
// started 1 ns after the first RT enqueue) and at the end of the run:
// 48 ms + 1 ns and 48 ms (on CPU 1 the
// throttled `hi` leaves an idle CPU, which `b` may not use: its rt_rq is
// throttled too).
TEST_CASE("a fair pick beside a queued pushable RT task queues no push", "[rt][smp][fair_server][throttle]") {
  auto fair_time = [](const std::string& version) {
    ScenarioParams p = exact_scenario(version, 250, 2);
    p.duration = Time::s(2);
    TaskSpec hi = hog("hi", Policy::kFifo, 90);
    hi.cpus = {1};
    TaskSpec f = hog("f");
    f.cpus = {0};
    p.tasks = {hi, hog("a", Policy::kFifo, 50), hog("b", Policy::kFifo, 50), f};
    const RunResult r = run_result(p);
    CHECK(metrics_of(r, "b").cpu_time == Time::zero());  // FIFO: a never yields
    return metrics_of(r, "f").cpu_time;
  };
  CHECK(fair_time("6.12").count() == 100'000'000);
  CHECK(fair_time("6.6").count() == 96'000'001);
}

// rt_mutex_adjust_pi() (6.12 rtmutex.c, the pi path of
// __sched_setscheduler()): a blocked waiter's new priority reaches the
// owner it boosts. owner (nice 0) holds m for 10 ms; w (FIFO 10) blocks on
// it at 1 ms and boosts owner to w's prio 89. At 2 ms w becomes FIFO 50:
// owner follows to 49; then w becomes SCHED_OTHER: owner drops back to
// its own 120, in the fair class.
TEST_CASE("a blocked waiter's priority change re-walks the PI chain", "[rt][pi]") {
  ScenarioParams p = exact_scenario("6.12", 250);
  p.duration = Time::ms(40);
  TaskSpec w = task("w", {ev_lock("m"), ev_run(Time::ms(1)), ev_unlock("m"), ev_sleep(Time::s(10))}, Policy::kFifo, 10);
  w.delay = Time::ms(1);
  p.tasks = {task("owner", {ev_lock("m"), ev_run(Time::ms(10)), ev_unlock("m"), ev_sleep(Time::s(10))}), w};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(2));
  Task& owner = find_task(k, "owner");
  Task& waiter = find_task(k, "w");
  REQUIRE(waiter.blocked_on != nullptr);
  REQUIRE(owner.prio == 89);
  k.set_scheduler(waiter, Policy::kFifo, 0, 50);
  CHECK(owner.prio == 49);
  k.set_scheduler(waiter, Policy::kNormal, 0, 0);
  CHECK(owner.prio == 120);
  CHECK(owner.sched_class == SchedClassId::kFair);
}

// Unlock releases an rt_mutex and wakes its top waiter, which takes it when
// it runs; a task of strictly higher priority may take it first
// (rt_mutex_steal(), 6.12 rtmutex.c). A (CPU 0) holds m for 2 ms, unlocks
// and locks it again at once; B (nice 0, CPU 1) blocked on m at 1 ms.
// A at FIFO 50 steals m back at 2 ms: B, woken, finds it taken and waits
// until A's second unlock at 4 ms. A at nice 0 cannot steal (fair waiters
// are equals): it waits, and B holds m from 2 ms.
TEST_CASE("a higher-priority task steals an rt_mutex from the woken waiter", "[rt][pi]") {
  auto run_to = [](Policy a_policy, int a_prio, Time t) {
    ScenarioParams p = exact_scenario("6.12", 250, 2);
    p.duration = Time::ms(20);
    TaskSpec a = on_cpus(task("A",
                              {ev_lock("m"), ev_run(Time::ms(2)), ev_unlock("m"), ev_lock("m"), ev_run(Time::ms(2)),
                               ev_unlock("m"), ev_sleep(Time::s(10))},
                              a_policy, a_prio),
                         {0});
    TaskSpec b = on_cpus(task("B", {ev_lock("m"), ev_run(Time::ms(1)), ev_unlock("m"), ev_sleep(Time::s(10))}), {1});
    b.delay = Time::ms(1);
    p.tasks = {a, b};
    auto sys = std::make_unique<System>(p, 1);
    sys->kernel().run_until(t);
    return sys;
  };
  SECTION("FIFO 50 steals") {
    auto sys = run_to(Policy::kFifo, 50, Time::ms(3));
    Kernel& k = sys->kernel();
    CHECK(find_task(k, "A").held_mutexes.size() == 1);
    CHECK(find_task(k, "B").blocked_on != nullptr);
    CHECK(find_task(k, "B").held_mutexes.empty());
    CHECK(find_task(k, "B").prio == 120);
    CHECK(find_task(k, "A").prio == 49);  // B, lower, boosts nothing
    auto later = run_to(Policy::kFifo, 50, Time::us(4500));
    CHECK(find_task(later->kernel(), "B").held_mutexes.size() == 1);
  }
  SECTION("an equal waiter priority does not steal") {
    auto sys = run_to(Policy::kNormal, 0, Time::us(2500));
    Kernel& k = sys->kernel();
    CHECK(find_task(k, "B").held_mutexes.size() == 1);
    CHECK(find_task(k, "A").blocked_on != nullptr);
  }
}

// __waiter_prio() (6.12 rtmutex.c) queues every non-RT waiter at
// DEFAULT_PRIO: fair waiters get a PI mutex in arrival order, whatever
// their nice. owner holds m for 5 ms of work; a (nice 0) blocks on it at
// 1 ms, b (nice -10) at 2 ms; a gets it first and b after a's unlock.
TEST_CASE("fair waiters take a PI mutex in arrival order, whatever their nice", "[rt][pi]") {
  ScenarioParams p = exact_scenario("6.12", 250);
  p.duration = Time::ms(40);
  auto locker = [](const std::string& name, int nice, Time delay) {
    TaskSpec t = task(name, {ev_lock("m"), ev_run(Time::ms(1)), ev_unlock("m"), ev_sleep(Time::s(10))},
                      Policy::kNormal, nice);
    t.delay = delay;
    return t;
  };
  p.tasks = {task("owner", {ev_lock("m"), ev_run(Time::ms(5)), ev_unlock("m"), ev_sleep(Time::s(10))}),
             locker("a", 0, Time::ms(1)), locker("b", -10, Time::ms(2))};
  const SwitchLog log = run_logged<SwitchLog>(p);
  // Its last switch-out (S): into the final sleep, after its unlock (the
  // wait on the mutex is an S switch-out too, at 1 and 2 ms).
  auto done = [&](const std::string& name) {
    Time last = Time::max();
    for (const auto& r : log.log)
      if (r.prev == name && r.prev_state == 'S') last = r.t;
    return last;
  };
  CHECK(done("owner") == Time::ms(5));
  CHECK(done("a") == Time::ms(6));
  CHECK(done("b") == Time::ms(7));
}

// mark_wakeup_next_waiter() (6.12 rtmutex.c) deboosts the unlocking owner
// before wake_up_q() wakes the waiter, so the wake-up (its placement and
// preemption check) sees the owner at its own priority.
TEST_CASE("unlocking a PI mutex deboosts the owner before waking the waiter", "[rt][pi]") {
  ScenarioParams p = exact_scenario("6.12", 250);
  p.duration = Time::ms(20);
  TaskSpec high = task("high", {ev_lock("m"), ev_run(Time::ms(1)), ev_unlock("m"), ev_sleep(Time::s(10))},
                       Policy::kFifo, 30);
  high.delay = Time::ms(2);
  p.tasks = {task("low", {ev_lock("m"), ev_run(Time::ms(5)), ev_unlock("m"), ev_sleep(Time::s(10))}), high};
  struct Order : SchedObserver {
    void on_prio_change(Time t, const Task& p, int, int new_prio, bool pi) override {
      if (pi) seen.push_back(fmt::format("{} {} prio {}", t.count(), p.comm, new_prio));
    }
    void on_waking(Time t, const Task& p, const Task*, int) override {
      seen.push_back(fmt::format("{} {} waking", t.count(), p.comm));
    }
    std::vector<std::string> seen;
  } order;
  System sys(p, 1);
  sys.add_observer(&order);
  sys.run();
  // high starts at 2 ms and blocks at once: low is boosted to high's prio
  // 69; low's 5 ms of work end at 5 ms: deboosted to 120, then high wakes.
  const std::vector<std::string> expected = {"2000000 low prio 69", "5000000 low prio 120", "5000000 high waking"};
  CHECK(order.seen == expected);
}

// switched_to_rt() (6.12 rt.c) pushes a task that became RT while queued
// behind a higher one on an overloaded rq. Fair `owner` (CPUs 0 and 2)
// takes m and needs 3 ms; FIFO 90 `hog` (CPU 0) preempts it at 0.5 ms; fair
// `busy` keeps CPU 2; FIFO 40 `waiter` (CPU 1) blocks on m at 0.6 ms. The
// boost makes owner RT behind hog: pushed at once to CPU 2 (running only
// fair work), where it finishes its 2.5 ms and unlocks at 3.1 ms.
// Without the push it waits on CPU 0 until the hog's 10 ms are over.
TEST_CASE("a task boosted into the RT class behind a higher one is pushed", "[rt][pi][smp]") {
  ScenarioParams p = exact_scenario("6.12", 250, 3);
  p.duration = Time::ms(20);
  TaskSpec owner = task("owner", {ev_lock("m"), ev_run(Time::ms(3)), ev_unlock("m"), ev_sleep(Time::s(10))});
  owner.cpus = {0, 2};
  TaskSpec hog = task("hog", {ev_run(Time::ms(10)), ev_sleep(Time::s(10))}, Policy::kFifo, 90);
  hog.cpus = {0};
  hog.delay = Time::us(500);
  TaskSpec busy = task("busy", {ev_run(Time::s(10))});
  busy.cpus = {2};
  TaskSpec waiter = task("waiter", {ev_lock("m"), ev_run(Time::ms(1)), ev_unlock("m"), ev_sleep(Time::s(10))},
                         Policy::kFifo, 40);
  waiter.cpus = {1};
  waiter.delay = Time::us(600);
  p.tasks = {busy, owner, hog, waiter};  // busy first: owner forks onto the idle CPU 0
  const SwitchLog log = run_logged<SwitchLog>(p);
  CHECK(log.first_run("owner", Time::us(501)) == Time::us(600));  // on CPU 2, at the boost
  CHECK(log.first_run("waiter", Time::us(601)) == Time::us(3100));
}

// prio_changed_rt() (6.12 rt.c): a running RT task whose priority drops
// pulls higher-priority work waiting elsewhere. FIFO 30 `a` (CPU 1) holds
// m for 2 ms; FIFO 50 `w` (CPU 2) blocks on it at 0.5 ms and boosts a to
// 50; FIFO 40 `c` (CPUs 0 and 1) wakes at 1 ms on CPU 0 behind FIFO 60 `b`
// (nowhere runs below 40 then). At 2 ms a unlocks and drops back to 30:
// it pulls c, which runs on CPU 1 at once, not when a sleeps at 5 ms.
TEST_CASE("a running RT task whose priority drops pulls waiting RT work", "[rt][pi][smp]") {
  ScenarioParams p = exact_scenario("6.12", 250, 3);
  p.duration = Time::ms(20);
  TaskSpec a = task("a", {ev_lock("m"), ev_run(Time::ms(2)), ev_unlock("m"), ev_run(Time::ms(3)), ev_sleep(Time::s(10))},
                    Policy::kFifo, 30);
  a.cpus = {1};
  TaskSpec c = task("c", {ev_run(Time::us(200)), ev_sleep(Time::us(800)), ev_run(Time::ms(5)), ev_sleep(Time::s(10))},
                    Policy::kFifo, 40);
  c.cpus = {0, 1};  // forked onto CPU 0, its previous CPU at the 1 ms wake-up
  TaskSpec b = task("b", {ev_run(Time::ms(10)), ev_sleep(Time::s(10))}, Policy::kFifo, 60);
  b.cpus = {0};
  b.delay = Time::us(500);
  TaskSpec w = task("w", {ev_lock("m"), ev_run(Time::ms(1)), ev_unlock("m"), ev_sleep(Time::s(10))}, Policy::kFifo, 50);
  w.cpus = {2};
  w.delay = Time::us(500);
  p.tasks = {a, c, b, w};
  const SwitchLog log = run_logged<SwitchLog>(p);
  const Time c_runs = log.first_run("c", Time::ms(1));
  CHECK(c_runs == Time::ms(2));
  for (const auto& r : log.log)
    if (r.next == "c" && r.t == c_runs) CHECK(r.cpu == 1);
}

// wake_up_new_task() ends with task_woken_rt() as a wake-up does. A FIFO
// 50 child allowed on CPUs 1 and 2 forks at 1 ms on CPU 0 (the parent's,
// outside its mask): the fallback puts it on CPU 1 behind a FIFO 90 hog,
// and the push moves it to the idle CPU 2 at once, not when the hog's
// 10 ms are over.
TEST_CASE("a new RT task that cannot preempt where it forks is pushed", "[rt][smp][fork]") {
  ScenarioParams p = exact_scenario("6.12", 250, 3);
  p.duration = Time::ms(20);
  TaskSpec child = on_cpus(task("child", {ev_run(Time::ms(1)), ev_sleep(Time::s(10))}, Policy::kFifo, 50), {1, 2});
  child.delay = Time::ms(1);
  p.tasks = {on_cpus(task("hog", {ev_run(Time::ms(10)), ev_sleep(Time::s(10))}, Policy::kFifo, 90), {1}), child};
  const SwitchLog log = run_logged<SwitchLog>(p);
  REQUIRE(log.first_run("child") == Time::ms(1));
  for (const auto& r : log.log)
    if (r.next == "child") CHECK(r.cpu == 2);
}

// Priority inversion: low (FIFO 10, or SCHED_OTHER) takes the mutex and
// needs 5 ms; mid (FIFO 20) wakes at 1 ms and hogs; high (FIFO 30) wakes at
// 2 ms and blocks on the mutex.
//  With PI: low is boosted to high's priority, runs 2..6, unlocks; high
//  gets the mutex at 6 ms.   Without PI: mid runs first (2..21), then low
//  (21..25), and high gets the mutex at 25 ms.
TEST_CASE("priority inheritance boosts a mutex owner", "[rt][pi]") {
  auto run = [](bool pi, Policy low_policy) {
    ScenarioParams p = exact_scenario("6.12", 250);
    p.duration = Time::ms(40);
    p.pi_enabled = pi;
    TaskSpec low = task("low", {ev_lock("m"), ev_run(Time::ms(5)), ev_unlock("m"), ev_sleep(Time::s(10))},
                        low_policy, low_policy == Policy::kFifo ? 10 : 0);
    TaskSpec mid = task("mid", {ev_run(Time::ms(20)), ev_sleep(Time::s(10))}, Policy::kFifo, 20);
    mid.delay = Time::ms(1);
    TaskSpec high =
        task("high", {ev_lock("m"), ev_run(Time::ms(1)), ev_unlock("m"), ev_sleep(Time::s(10))}, Policy::kFifo, 30);
    high.delay = Time::ms(2);
    p.tasks = {low, mid, high};
    System sys(p, 1);
    SwitchLog log;
    sys.add_observer(&log);
    sys.run();
    return std::make_pair(log.first_run("high", Time::us(2001)), log.first_run("low", Time::us(1001)));
  };
  SECTION("a FIFO owner") {
    auto [high_gets_lock, low_resumes] = run(true, Policy::kFifo);
    CHECK(low_resumes == Time::ms(2));
    CHECK(high_gets_lock == Time::ms(6));
    CHECK(run(false, Policy::kFifo).first == Time::ms(25));
  }
  SECTION("a SCHED_OTHER owner is lifted into the RT class") {
    auto [high_gets_lock, low_resumes] = run(true, Policy::kNormal);
    CHECK(low_resumes == Time::ms(2));
    CHECK(high_gets_lock == Time::ms(6));
  }
}

TEST_CASE("per-CPU busy + idle = elapsed, and task states add up", "[conservation]") {
  ScenarioParams p = exact_scenario("6.12", 250, 2);
  p.duration = Time::s(2);
  p.warmup = Time::ms(100);
  p.kernel.context_switch_cost = Time::us(3);
  p.kernel.wakeup_cost = Time::us(2);
  p.kernel.ipi_latency = Time::us(5);
  p.kernel.timer_slack = Time::us(50);
  p.tasks = {task("periodic", {ev_run(Time::ms(2)), ev_timer("t", Time::ms(10))}),
             task("bursty", {ev_run(Time::us(700)), ev_sleep(Time::us(1300))}, Policy::kNormal, 5),
             hog("bg", Policy::kNormal, 10), task("rt", {ev_run(Time::us(300)), ev_sleep(Time::ms(3))}, Policy::kFifo, 5),
             task("locker", {ev_lock("m"), ev_run(Time::us(500)), ev_unlock("m"), ev_sleep(Time::ms(1))})};
  p.tasks[2].instances = 2;
  System sys(p, 1);
  sys.run();
  RunResult r = sys.result();
  REQUIRE(r.cpus.size() == 2);
  for (const auto& c : r.cpus) CHECK(c.busy + c.idle == r.elapsed());
  Time total_cpu;
  for (const auto& t : r.tasks) {
    INFO(t.name);
    CHECK(t.cpu_time + t.runnable_time + t.sleep_time + t.blocked_time == r.elapsed());
    total_cpu += t.cpu_time;
  }
  CHECK(total_cpu == r.cpus[0].busy + r.cpus[1].busy);
}

// switched_from_fair() / switched_to_fair(): a fair hog alone on a CPU
// (util U, equal to its cfs_rq's) made SCHED_FIFO takes its PELT signals
// out of the cfs_rq at once; made fair again 32 periods (32 x 1024 us)
// later they come back aged as if it had slept (ATTACH_AGE_LOAD): U x
// y^32 = U / 2.
TEST_CASE("a task leaving the fair class takes its PELT signals with it", "[rt][pelt]") {
  ScenarioParams p = exact_scenario("6.12", 1000);
  p.duration = Time::s(1);
  p.tasks = {hog("t")};
  p.tasks[0].delay = Time::ms(1);
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(100));
  Task& t = find_task(k, "t");
  Rq& rq = k.rq(0);
  k.set_scheduler(t, Policy::kFifo, 0, 10);
  const uint64_t u = t.se.avg.util_avg;
  REQUIRE(u > 500);
  CHECK(rq.cfs.avg.util_avg <= 1);  // only rounding of the two sums is left
  k.run_until(Time::ms(100) + Time::us(32 * 1024));
  k.set_scheduler(t, Policy::kNormal, 0, 0);
  CHECK(t.se.avg.util_avg == Approx(u / 2.0).epsilon(0.02));
  CHECK(rq.cfs.avg.util_avg == Approx(u / 2.0).epsilon(0.02));
}

// switched_from_rt(): a CPU whose last RT task becomes fair pulls a
// waiting RT task from an overloaded CPU. p (FIFO 50) holds CPU 1, r1
// (FIFO 10) CPU 0, where r2 (FIFO 5, allowed on both) waits: it can
// preempt neither. When p turns fair, CPU 1 pulls r2 at once.
// With RT_PUSH_IPI (the default) the pull asks the overloaded CPU 0 to
// push, by irq_work: r2 moves in the same instant, once the work has run;
// without it CPU 1 pulls r2 itself, inside set_scheduler().
TEST_CASE("a CPU left without RT tasks by a class change pulls one", "[rt][smp]") {
  for (const bool push_ipi : {true, false}) {
    DYNAMIC_SECTION("RT_PUSH_IPI " << push_ipi) {
      ScenarioParams p = exact_scenario("6.12", 1000, 2);
      p.duration = Time::s(1);
      p.kernel.features["RT_PUSH_IPI"] = push_ipi;
      TaskSpec holder = hog("p", Policy::kFifo, 50);
      holder.cpus = {1};
      TaskSpec r1 = hog("r1", Policy::kFifo, 10);
      r1.cpus = {0};
      TaskSpec r2 = hog("r2", Policy::kFifo, 5);
      r2.delay = Time::ms(5);
      p.tasks = {holder, r1, r2};
      System sys(p, 1);
      Kernel& k = sys.kernel();
      k.run_until(Time::ms(10));
      Task& waiting = find_task(k, "r2");
      REQUIRE(waiting.cpu == 0);
      REQUIRE(k.rq(0).rt.rt_nr_running == 2);
      REQUIRE(k.rq(0).rt.nr_pushable == 1);  // r2; r1 is pinned
      k.set_scheduler(find_task(k, "p"), Policy::kNormal, 0, 0);
      CHECK(waiting.cpu == (push_ipi ? 0 : 1));
      k.run_until(Time::ms(10));  // the rest of this instant
      CHECK(waiting.cpu == 1);
      CHECK(k.rq(1).rt.rt_nr_running == 1);
      CHECK(k.rq(0).rt.nr_pushable == 0);
    }
  }
}

// A task forked at t = 0 is attached to its cfs_rq's PELT signals like any
// other (the rq clocks start one PELT period in, so attaching never
// copies last_update_time 0, the "not attached" mark): an always-running
// hog's util follows its cfs_rq's, from post_init_entity_util_avg()'s 512
// towards 1024 (1024 - 512 x y^97 ~ 961 after 100 ms).
TEST_CASE("a task forked at t = 0 has live PELT signals", "[pelt]") {
  ScenarioParams p = exact_scenario("6.12", 1000);
  p.duration = Time::s(1);
  p.tasks = {hog("t")};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(100));
  const Task& t = find_task(k, "t");
  CHECK(t.se.avg.last_update_time != 0);
  CHECK(t.se.avg.util_avg == Approx(961).epsilon(0.02));
  CHECK(k.rq(0).cfs.avg.util_avg == Approx(t.se.avg.util_avg).epsilon(0.01));
}

TEST_CASE("a task relocking its own mutex or unlocking one it does not hold is an error", "[rt][pi]") {
  // Scenario bugs: the relock would wait for itself for ever (rt-app's
  // mutexes are not recursive), and the unlock releases nothing. Both
  // stop the run with a message naming the task and the mutex.
  auto error_of = [](std::vector<EventSpec> events) -> std::string {
    ScenarioParams p = exact_scenario("6.12", 1000);
    p.duration = Time::ms(10);
    p.tasks = {task("a", std::move(events))};
    try {
      run_result(p);
    } catch (const ModelError& e) {
      return e.what();
    }
    return "";
  };
  CHECK_THAT(error_of({ev_lock("m"), ev_run(Time::ms(1)), ev_sleep(Time::ms(1))}),
             Catch::Contains("task a locks mutex 'm', which it holds already"));
  CHECK_THAT(error_of({ev_run(Time::ms(1)), ev_unlock("m"), ev_sleep(Time::ms(1))}),
             Catch::Contains("task a unlocks mutex 'm', which it does not hold (it is free"));
  // Lock, unlock, repeat: fine.
  CHECK(error_of({ev_lock("m"), ev_run(Time::ms(1)), ev_unlock("m"), ev_sleep(Time::ms(1))}).empty());
}

TEST_CASE("a mutex misuse found as the run goes names the event's place in the file", "[rt][pi][config]") {
  auto error_of = [](const ScenarioParams& p) -> std::string {
    try {
      run_result(p);
    } catch (const ModelError& e) {
      return e.what();
    }
    return "";
  };
  ScenarioParams yaml = load_scenario_yaml(
      "duration: 10ms\nplatform: {cpus: 1}\ntasks:\n  - name: a\n    events:\n      - run: 1ms\n      - unlock: m\n",
      "misuse.yaml");
  CHECK_THAT(error_of(yaml),
             Catch::StartsWith("misuse.yaml:7:9: tasks[0].events[1]: task a unlocks mutex 'm', which it does not hold"));
  // The rt-app JSON importer: the event's key in the file.
  ScenarioParams json = import_rtapp_json(
      "{\"global\": {\"duration\": 1},\n \"tasks\": {\"a\": {\"run\": 1000,\n  \"lock\": \"m\", \"lock2\": \"m\"}}}",
      "misuse.json");
  CHECK_THAT(error_of(json), Catch::StartsWith("misuse.json:3:16: tasks.a.lock2: task a locks mutex 'm', which it holds"));
}

// check_preempt_equal_prio() (rt.c): a woken RT task of curr's priority
// that can run only here, while curr could run elsewhere, is put at the
// head of its list and the CPU reschedules; curr, queued now, is pushed
// to the CPU running a lower priority (push_rt_tasks() after the switch).
TEST_CASE("an equal-priority RT wakee pinned to the CPU makes the migratable curr move", "[rt][smp]") {
  // Two CPUs. m (FIFO 10, may run anywhere) starts on CPU 0 at 0; CPU 1
  // is idle. p (FIFO 10, pinned to CPU 0) is forked at 1 ms: it runs on
  // CPU 0 at once and m moves to CPU 1, where it goes on. With p
  // migratable too, p is not let in: it waits for m (m has no reason to
  // move, and cpupri has a lower CPU for p, so p is pushed to CPU 1).
  auto run = [](bool pinned) {
    ScenarioParams p = exact_scenario("6.12", 1000, 2);
    p.duration = Time::ms(5);
    TaskSpec m = hog("m", Policy::kFifo, 10);
    TaskSpec w = task("p", {ev_run(Time::ms(1)), ev_sleep(Time::s(1))}, Policy::kFifo, 10);
    w.delay = Time::ms(1);
    if (pinned) w.cpus = {0};
    p.tasks = {m, w};
    System sys(p, 1);
    SwitchLog log;
    sys.add_observer(&log);
    sys.run();
    return log.log;
  };
  auto on = [](const std::vector<SwitchRecord>& log, const std::string& who, Time t) {
    for (const auto& r : log)
      if (r.next == who && r.t == t) return r.cpu;
    return -1;
  };
  const auto pinned = run(true);
  CHECK(on(pinned, "m", Time::zero()) == 0);
  CHECK(on(pinned, "p", Time::ms(1)) == 0);  // the wakee runs where it must
  CHECK(on(pinned, "m", Time::ms(1)) == 1);  // curr pushed to the idle CPU
  const auto free = run(false);
  CHECK(on(free, "p", Time::ms(1)) == 1);  // placed on the idle CPU instead
  CHECK(on(free, "m", Time::ms(1)) == -1);
}

// Where a CPU going idle syncs its PELT clock (update_idle_rq_clock_pelt()):
// 6.6.63 and 6.12.19 only on pick_next_task_fair()'s path with rq_flags,
// which a switch from an RT task does not take; 6.18.35 in
// set_next_task_idle(), on every switch to idle; 6.1.166 after the idle:
// label's "if (rf)", so also in the rf-less pick of a switch from RT. A
// FIFO task runs 1 ms and sleeps: at 1.5 ms (no event since) the 6.1 and
// 6.18 rqs' last idle sync is the switch at 1 ms, the 6.6 and 6.12 rqs'
// is older.
TEST_CASE("6.1 and 6.18 sync the PELT clock of a CPU going idle from an RT task, 6.6 and 6.12 do not",
          "[pelt][clock][rt]") {
  for (const char* version : {"6.1", "6.6", "6.12", "6.18"}) {
    CAPTURE(version);
    ScenarioParams p = exact_scenario(version);
    p.tasks = {task("r", {ev_run(Time::ms(1)), ev_sleep(Time::ms(10))}, Policy::kFifo, 10)};
    p.duration = Time::ms(20);
    System sys(p, 1);
    Kernel& k = sys.kernel();
    k.run_until(Time::us(1500));
    const Rq& rq = k.rq(0);
    REQUIRE(rq.idle_task_runs());
    const uint64_t switch_at = Kernel::kRqClockAtZeroNs + 1000000;
    const std::string v = version;
    if (v == "6.1" || v == "6.18")
      CHECK(rq.pelt.clock_idle == switch_at);
    else
      CHECK(rq.pelt.clock_idle < switch_at);
  }
}

// switched_to_rt(): a running fair task made RT (a setscheduler, a PI
// boost) closes the CPU's RT signal up to now as not running; its RT
// running time counts from the change. One CPU at HZ 250: a fair hog runs
// from 0, nothing RT before; at 100 ms it becomes SCHED_FIFO 10. By the
// 104 ms tick avg_rt has 4 ms of running behind it: util_avg about 1024 x
// (1 - y^4) = 84 (y^32 = 1/2). Without the close the whole 104 ms since
// the signal's last update counted as RT running (about 1024 x (1 -
// y^104) = 918).
TEST_CASE("a running task made RT starts the CPU's RT signal at the change, not at its last update", "[pelt][rt]") {
  for (const std::string version : {"6.1", "6.12", "6.18"}) {
    CAPTURE(version);
    ScenarioParams p = exact_scenario(version, 250);
    p.tasks = {hog("H")};
    p.duration = Time::ms(200);
    System sys(p, 1);
    Kernel& k = sys.kernel();
    k.run_until(Time::ms(100));
    REQUIRE(k.rq(0).avg_rt.util_avg == 0);
    k.set_scheduler(find_task(k, "H"), Policy::kFifo, 0, 10);
    k.run_until(Time::us(104500));
    CHECK(k.rq(0).avg_rt.util_avg >= 80);
    CHECK(k.rq(0).avg_rt.util_avg <= 90);
  }
}

// prio_changed_rt() on an SMP kernel with one CPU: a running RT task whose
// priority drops finds nothing to pull and keeps the CPU without a
// reschedule while nothing queued beats it (the unconditional reschedule
// is the !CONFIG_SMP branch, which GKI does not build); a queued task
// that now beats it does get the CPU.
TEST_CASE("one CPU: a running RT task whose priority drops is not rescheduled unless a queued task beats it",
          "[rt]") {
  ScenarioParams p = exact_scenario("6.12", 250);
  p.tasks = {hog("A", Policy::kFifo, 50), hog("B", Policy::kFifo, 40)};
  p.duration = Time::ms(10);
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(1));
  Task& a = find_task(k, "A");
  REQUIRE(k.rq(0).curr == &a);
  k.set_scheduler(a, Policy::kFifo, 0, 45);  // still above B
  CHECK_FALSE(k.rq(0).need_resched);
  k.set_scheduler(a, Policy::kFifo, 0, 30);  // now below B
  CHECK(k.rq(0).need_resched);
}
