// Several CPUs: RT placement, push and pull (kernel/sched/rt.c, 6.12).
#include <catch2/catch.hpp>

#include <array>

#include "sched_test_util.h"

using namespace schedlab;
using namespace schedlab::testing;

// Both start on CPU 0 (their initial CPU) in the same instant: when B is
// placed, A is queued but not running, so select_task_rq_rt() keeps CPU 0.
// __schedule() on CPU 0 picks A; its balance callback then pushes B, which
// cannot run there, to CPU 1 (find_lowest_rq: CPU 1 runs no RT task), and
// CPU 1 runs it in the same instant.
TEST_CASE("two FIFO tasks woken on one CPU end up on two CPUs (push)", "[smp][rt]") {
  ScenarioParams p = exact_scenario("6.12", 250, 2);
  p.duration = Time::ms(50);
  p.tasks = {task("A", {ev_run(Time::ms(5)), ev_sleep(Time::ms(10))}, Policy::kFifo, 10),
             task("B", {ev_run(Time::ms(5)), ev_sleep(Time::ms(10))}, Policy::kFifo, 10)};
  System sys(p, 1);
  SwitchLog log;
  sys.add_observer(&log);
  sys.run();
  REQUIRE(log.log.size() >= 2);
  CHECK(log.log[0] == SwitchRecord{Time::zero(), 0, "idle", "A", 'R'});
  CHECK(log.log[1] == SwitchRecord{Time::zero(), 1, "idle", "B", 'R'});
  // Afterwards each wakes where it slept and they never share a CPU.
  for (const auto& r : log.log)
    if (r.next == "A" || r.next == "B") CHECK(r.cpu == (r.next == "A" ? 0 : 1));
}

// A higher-priority RT task waking where an RT task runs goes to the CPU
// running only fair work (select_task_rq_rt -> find_lowest_rq).
TEST_CASE("a waking RT task avoids a CPU busy with RT work", "[smp][rt]") {
  ScenarioParams p = exact_scenario("6.12", 250, 2);
  p.duration = Time::ms(20);
  TaskSpec rt_hog = hog("rt_hog", Policy::kFifo, 50);
  rt_hog.cpus = {0};
  TaskSpec fair = hog("fair");
  fair.cpus = {1};
  TaskSpec waker = task("w", {ev_run(Time::ms(1)), ev_sleep(Time::ms(3))}, Policy::kFifo, 60);
  waker.delay = Time::ms(2);
  p.tasks = {rt_hog, fair, waker};
  System sys(p, 1);
  SwitchLog log;
  sys.add_observer(&log);
  sys.run();
  // w (FIFO 60) wakes first at 2 ms: CPU 0's current is the pinned rt_hog,
  // so find_lowest_rq() picks CPU 1 (fair work only) and w preempts fair at
  // once. Each later wake-up (run 1 ms + sleep 3 ms: 6, 10, 14, 18 ms; 22 ms
  // is past the 20 ms end) finds fair current on its previous CPU 1 and
  // stays. So exactly five switches to w, all on CPU 1.
  std::vector<int64_t> w_runs;
  for (const auto& r : log.log)
    if (r.next == "w") {
      CHECK(r.cpu == 1);
      w_runs.push_back(r.t.count());
    }
  CHECK(log.first_run("w") == Time::ms(2));
  CHECK(w_runs == std::vector<int64_t>{Time::ms(2).count(), Time::ms(6).count(), Time::ms(10).count(),
                                       Time::ms(14).count(), Time::ms(18).count()});
}

// When an RT task blocks and its CPU's RT priority drops, balance_rt()
// pulls an RT task queued behind a higher-priority one elsewhere.
TEST_CASE("a CPU whose RT priority drops pulls waiting RT work", "[smp][rt]") {
  ScenarioParams p = exact_scenario("6.12", 250, 2);
  p.duration = Time::ms(30);
  TaskSpec high = task("high", {ev_run(Time::ms(20)), ev_sleep(Time::s(1))}, Policy::kFifo, 50);
  high.cpus = {0};
  TaskSpec waiting = task("waiting", {ev_run(Time::ms(5)), ev_sleep(Time::s(1))}, Policy::kFifo, 10);
  waiting.cpus = {0, 1};
  TaskSpec blocker = task("blocker", {ev_run(Time::ms(3)), ev_sleep(Time::s(1))}, Policy::kFifo, 90);
  blocker.cpus = {1};
  p.tasks = {high, blocker, waiting};
  System sys(p, 1);
  SwitchLog log;
  sys.add_observer(&log);
  sys.run();
  // waiting starts queued on CPU 0 behind high (CPU 1 runs blocker, a
  // higher RT priority, so push finds no lower CPU). blocker sleeps at
  // 3 ms: CPU 1 pulls waiting.
  Time t = log.first_run("waiting");
  CHECK(t == Time::ms(3));
  for (const auto& r : log.log)
    if (r.next == "waiting") CHECK(r.cpu == 1);
}

// idle_cpu() (kernel/sched/core.c) is false while rq->ttwu_pending: a
// wake-up already sent to an idle CPU by IPI makes it busy for the next
// placement. A waker on CPU 0 resumes three sleepers in one instant with a
// 5 us IPI: each select_idle_sibling() must find a different idle CPU, so
// all three run at once, 5 us after the resume, on CPUs 1, 2 and 3.
namespace {
// Three sleepers suspended on CPUs 1-3; at 2 ms a waker pinned to CPU 0
// resumes all three in one instant (remote wake-ups, IPI 5 us).
ScenarioParams one_waker_three_sleepers() {
  ScenarioParams p = exact_scenario("6.12", 250, 4);
  p.duration = Time::ms(30);
  p.kernel.ipi_latency = Time::us(5);
  TaskSpec sleepers = task("sleeper", {ev_suspend(), ev_run(Time::ms(5))});
  sleepers.instances = 3;
  sleepers.cpus = {1, 2, 3};
  TaskSpec waker = task("waker", {ev_sleep(Time::ms(2)), ev_resume("sleeper"), ev_run(Time::ms(10)), ev_sleep(Time::ms(50))});
  waker.cpus = {0};
  p.tasks = {sleepers, waker};
  return p;
}
}  // namespace

TEST_CASE("simultaneous remote wake-ups spread over idle CPUs: a pending wake-up is not idle",
          "[smp][fair]") {
  ScenarioParams p = one_waker_three_sleepers();
  // At sleeper-1's sched_waking, sleeper-0 has been placed (its enqueue
  // waits for the IPI): its CPU must not count as idle.
  struct PendingCheck : SchedObserver {
    Kernel* k = nullptr;
    int checks = 0, idle_seen = 0;
    void on_waking(Time t, const Task& p, const Task* waker, int) override {
      if (p.comm != "sleeper-1" || t < Time::ms(2)) return;
      const Task& first = find_task(*k, "sleeper-0");
      ++checks;
      // The case under test: sleeper-0's enqueue waits for the 5 us IPI, so
      // in this same instant it is placed (cpu set, ttwu pending) but not
      // yet on a run-queue.
      CHECK_FALSE(first.on_rq);
      if (k->cpu_idle(first.cpu)) ++idle_seen;
    }
  } check;
  System sys(p, 1);
  check.k = &sys.kernel();
  sys.add_observer(&check);
  sys.run();
  CHECK(check.checks == 1);
  CHECK(check.idle_seen == 0);
  const RunResult r = sys.result();
  for (const char* name : {"sleeper-0", "sleeper-1", "sleeper-2"}) {
    const TaskMetrics& m = metrics_of(r, name);
    INFO(name);
    REQUIRE(m.wakeup_latency.size() == 1);  // the resume (a new task's start is not a wake-up)
    CHECK(m.wakeup_latency.values().back() == 5'000);
    CHECK(m.preemptions == 0);  // nobody shared its CPU after the resume
  }
}

TEST_CASE("one CPU's wake-ups run one after another, each paying the wake-up cost", "[smp][overheads]") {
  // The waker resumes three sleepers in one instant T (after 2 ms). Its CPU runs
  // the three try_to_wake_up() calls in turn, each taking the wake-up cost
  // (10 us): sleeper-k's call starts (sched_waking) at T + 10k us and,
  // remote, its enqueue comes by the IPI 10 + 5 us later. So each wake-up
  // takes 15 us from its sched_waking, and they run at T + 15, 25 and 35
  // us; before the cost was charged to the waker's CPU all three ran at
  // T + 15 us.
  ScenarioParams p = one_waker_three_sleepers();
  p.kernel.wakeup_cost = Time::us(10);
  System sys(p, 1);
  SwitchLog log;
  sys.add_observer(&log);
  sys.run();
  const RunResult r = sys.result();
  Time t_resume = Time::max();  // the waker runs again after its 2 ms sleep and resumes them at once
  for (const auto& s : log.log)
    if (s.next == "waker" && s.t > Time::ms(1)) {
      t_resume = s.t;
      break;
    }
  REQUIRE(t_resume < Time::ms(3));
  for (int i = 0; i < 3; ++i) {
    const std::string name = "sleeper-" + std::to_string(i);
    INFO(name);
    const TaskMetrics& m = metrics_of(r, name);
    REQUIRE(m.wakeup_latency.size() == 1);
    CHECK(m.wakeup_latency.values().back() == 15'000);
    Time ran = Time::max();
    for (const auto& s : log.log)
      if (s.next == name && s.t > Time::ms(1)) {
        ran = s.t;
        break;
      }
    CHECK(ran == t_resume + Time::us(15 + 10 * i));
  }
}

// ttwu_queue_cond() (6.1-6.18 core.c): within the LLC a remote wake-up
// goes to the target's wake list (enqueued there when the IPI arrives)
// only if the target runs nothing; a busy target is enqueued by the waking
// CPU at the end of its try_to_wake_up(), and the preemption follows by
// resched_curr()'s IPI. The waker on CPU 0 resumes a SCHED_FIFO sleeper
// pinned to CPU 1 at T (wake-up cost 2 us, IPI 5 us): with a fair hog on
// CPU 1 the sleeper is on CPU 1's run-queue at T + 2 us and runs at T + 7;
// with CPU 1 idle it appears there only at T + 7, and runs then.
TEST_CASE("a remote wake-up is queued for the IPI only onto an idle CPU", "[smp][overheads]") {
  auto run = [](bool busy_target) {
    ScenarioParams p = exact_scenario("6.12", 250, 2);
    p.duration = Time::ms(20);
    p.kernel.ipi_latency = Time::us(5);
    p.kernel.wakeup_cost = Time::us(2);
    TaskSpec sleeper = task("sleeper", {ev_suspend(), ev_run(Time::ms(1))}, Policy::kFifo, 10);
    sleeper.cpus = {1};
    TaskSpec waker = task("waker", {ev_sleep(Time::ms(2)), ev_resume("sleeper"), ev_run(Time::ms(5)), ev_sleep(Time::s(1))});
    waker.cpus = {0};
    p.tasks = {sleeper, waker};
    if (busy_target) {
      TaskSpec bg = hog("bg");
      bg.cpus = {1};
      p.tasks.push_back(bg);
    }
    struct Times : SchedObserver {
      Time waking = Time::max(), wakeup = Time::max();
      void on_waking(Time t, const Task& p, const Task*, int) override {
        if (p.comm == "sleeper" && t > Time::ms(1)) waking = t;
      }
      void on_wakeup(Time t, const Task& p, int cpu) override {
        if (p.comm == "sleeper" && t > Time::ms(1)) {
          wakeup = t;
          CHECK(cpu == 1);
        }
      }
    } times;
    System sys(p, 1);
    SwitchLog log;
    sys.add_observer(&log);
    sys.add_observer(&times);
    sys.run();
    REQUIRE(times.waking < Time::ms(3));
    Time ran = Time::max();
    for (const auto& s : log.log)
      if (s.next == "sleeper" && s.t > Time::ms(1)) {
        ran = s.t;
        break;
      }
    return std::array<Time, 2>{times.wakeup - times.waking, ran - times.waking};
  };
  const auto busy = run(true);
  CHECK(busy[0] == Time::us(2));  // enqueued by the waker
  CHECK(busy[1] == Time::us(7));  // preempts bg when the resched IPI lands
  const auto idle = run(false);
  CHECK(idle[0] == Time::us(7));  // enqueued on CPU 1 by the IPI
  CHECK(idle[1] == Time::us(7));
}

// ttwu_queue_cond()'s first test: CPUs that share no cache
// (cpus_share_cache(), sd_llc_id) always use the wake list, busy target or
// not. Phone B's LLC is per cluster (CPUs 0-4, 5-6): a FIFO sleeper on a
// busy CPU of the other cluster is enqueued 2 + 5 us after its waking, one
// on a busy CPU of the waker's cluster at 2 us.
TEST_CASE("a remote wake-up across LLCs always goes by the IPI", "[smp][overheads]") {
  auto enqueue_delay = [](int target) {
    ScenarioParams p = load_scenario_yaml(std::string("platform: {file: \"") + SCHEDLAB_SOURCE_DIR +
                                              "/configs/platforms/phone_b_7cpu.yaml\"}\n"
                                              "tasks: [{name: x, events: [{run: 1ms}]}]\n",
                                          "phone_b_test.yaml");
    p.duration = Time::ms(20);
    p.kernel.ipi_latency = Time::us(5);
    p.kernel.wakeup_cost = Time::us(2);
    TaskSpec sleeper = task("sleeper", {ev_suspend(), ev_run(Time::ms(1))}, Policy::kFifo, 10);
    sleeper.cpus = {target};
    TaskSpec waker = task("waker", {ev_sleep(Time::ms(2)), ev_resume("sleeper"), ev_run(Time::ms(5)), ev_sleep(Time::s(1))});
    waker.cpus = {0};
    TaskSpec bg = hog("bg");
    bg.cpus = {target};
    p.tasks = {sleeper, waker, bg};
    struct Times : SchedObserver {
      Time waking = Time::max(), wakeup = Time::max();
      void on_waking(Time t, const Task& p, const Task*, int) override {
        if (p.comm == "sleeper" && t > Time::ms(1)) waking = t;
      }
      void on_wakeup(Time t, const Task& p, int) override {
        if (p.comm == "sleeper" && t > Time::ms(1)) wakeup = t;
      }
    } times;
    System sys(p, 1);
    sys.add_observer(&times);
    sys.run();
    REQUIRE(times.waking < Time::ms(4));
    return times.wakeup - times.waking;
  };
  CHECK(enqueue_delay(1) == Time::us(2));  // same cluster, busy: enqueued by the waker
  CHECK(enqueue_delay(5) == Time::us(7));  // other cluster: the wake list and the IPI
}

// sched_balance_newidle() (fair.c, 6.12) returns at once when a wake-up is
// already on its way to the CPU (this_rq->ttwu_pending): it would pull a
// task only to have the woken one wait behind it.
TEST_CASE("newidle balance does not pull while a wake-up is on its way to the CPU", "[smp][fair]") {
  ScenarioParams p = exact_scenario("6.12", 250, 2);
  p.duration = Time::ms(300);
  p.tasks = {hogs("h", 5)};
  System sys(p, 1);
  sys.run();
  Kernel& k = sys.kernel();
  // Five hogs on two CPUs: the CPU with two is the puller (fully busy), the
  // other overloaded with three. The pass moves load: about half a hog's
  // ((3072 - 2560) x 1024 / 1024), so a hog goes only after failed periodic
  // passes (sd->nr_balance_failed = 2: a quarter of its load counts, and
  // cache hotness no longer holds it).
  Rq& light = k.rq(k.rq(0).cfs.nr_running < k.rq(1).cfs.nr_running ? 0 : 1);
  REQUIRE(light.cfs.nr_running == 2);
  light.sd_nr_balance_failed = 2;
  light.avg_idle = 10'000'000;  // ns: idle long enough to be worth a look
  light.ttwu_pending = 1;
  CHECK_FALSE(k.sched_balance_newidle(light));
  CHECK(light.cfs.nr_running == 2);
  light.ttwu_pending = 0;
  CHECK(k.sched_balance_newidle(light));  // the same call without the pending wake-up pulls
  CHECK(light.cfs.nr_running == 3);
}

// record_wakee() / wake_wide() (6.12 fair.c), with the LLC of 8 CPUs as
// the factor: a waker counts a flip each time it wakes a different task,
// halved once more than HZ jiffies passed since the last halving; the
// pair goes wide when the smaller count reaches the factor and the larger
// is at least factor times it.
TEST_CASE("wake_wide: wakee flips and the llc_size factor", "[smp][fair]") {
  ScenarioParams p = exact_scenario("6.12", 250, 8);
  p.tasks = {hog("a"), hog("b"), hog("c")};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  Task& a = find_task(k, "a");
  Task& b = find_task(k, "b");
  Task& c = find_task(k, "c");
  k.record_wakee(a, b);
  k.record_wakee(a, b);  // the same wakee again: no flip
  CHECK(a.wakee_flips == 1);
  CHECK(a.last_wakee == &b);
  k.record_wakee(a, c);
  k.record_wakee(a, b);
  CHECK(a.wakee_flips == 3);
  // Master 64, slave 8 = factor: wide; one flip less on either side: not.
  a.wakee_flips = 64;
  b.wakee_flips = 8;
  CHECK(k.wake_wide(a, b));
  CHECK(k.wake_wide(b, a));  // symmetric in who wakes whom
  a.wakee_flips = 63;
  CHECK_FALSE(k.wake_wide(a, b));
  a.wakee_flips = 64;
  b.wakee_flips = 7;
  CHECK_FALSE(k.wake_wide(a, b));
  // Decay: at jiffy 251 (> 0 + HZ) the count halves once, then counts the flip.
  a.wakee_flips = 64;
  k.run_until(Time::ms(1004));
  k.record_wakee(a, c);
  CHECK(a.wakee_flips == 33);
  CHECK(a.wakee_flip_decay_ts == 251);
  k.record_wakee(a, b);  // no second halving within the next HZ jiffies
  CHECK(a.wakee_flips == 34);
}

// try_to_wake_up() of a task whose wake-up waits its turn on another CPU
// (that CPU is still in earlier try_to_wake_up() calls): this waker gets
// there first and wakes it now; the queued call, when its turn comes,
// finds the task awake and does nothing. The waker resumes the three
// sleepers at T with a 10 us wake-up cost: sleeper-2's call is queued to
// start at T + 20 us. An interrupt (no CPU cost of its own modelled) wakes
// sleeper-2 at T + 5 us: sched_waking then, its remote enqueue 10 us later,
// and it runs at T + 15 us on its idle CPU, once.
TEST_CASE("another waker gets there first: the queued wake-up finds the task awake", "[smp][overheads]") {
  ScenarioParams p = one_waker_three_sleepers();
  p.kernel.wakeup_cost = Time::us(10);
  System sys(p, 1);
  SwitchLog log;
  struct WakingLog : SchedObserver {
    std::vector<std::pair<Time, const Task*>> s2;
    void on_waking(Time t, const Task& p, const Task* waker, int) override {
      if (p.comm == "sleeper-2" && t > Time::ms(1)) s2.emplace_back(t, waker);
    }
  } waking;
  sys.add_observer(&log);
  sys.add_observer(&waking);
  Kernel& k = sys.kernel();
  Task& s2 = find_task(k, "sleeper-2");
  Time t = Time::ms(1);
  while (s2.ttwu_start_at == Time::max() && t < Time::ms(3)) k.run_until(t += Time::us(1));
  REQUIRE(s2.ttwu_start_at != Time::max());
  const Time resume = s2.ttwu_start_at - Time::us(20);  // T: queued two calls deep
  REQUIRE(t == resume);
  k.run_until(resume + Time::us(5));
  CHECK(s2.wake_pending);
  CHECK(k.try_to_wake_up(s2, nullptr, -1));
  sys.run();
  REQUIRE(waking.s2.size() == 1);
  CHECK(waking.s2[0].first == resume + Time::us(5));
  CHECK(waking.s2[0].second == nullptr);
  std::vector<Time> runs;
  for (const auto& r : log.log)
    if (r.next == "sleeper-2" && r.t > Time::ms(1)) runs.push_back(r.t);
  REQUIRE_FALSE(runs.empty());
  CHECK(runs.front() == resume + Time::us(15));
  const RunResult r = sys.result();
  const TaskMetrics& m = metrics_of(r, "sleeper-2");
  REQUIRE(m.wakeup_latency.size() == 1);
  CHECK(m.wakeup_latency.values().back() == 10'000);
}

// find_lowest_rq() (6.12 rt.c) hands out the CPUs of the lowest level in
// turn from the CPU that runs it (cpumask_any_and_distribute(): per CPU,
// the first after the one it gave last; 0 at boot, so CPU 0 starts at 1).
// hi0 and hi1 (FIFO 90) hold CPUs 0 and 1. w forks (from CPU 0, where hi0
// runs) at 0.1 ms: of {2, 3}, CPU 0 gives 2; w then sleeps and CPU 2 is
// idle again. w2 forks at 0.2 ms: of {2, 3} again, CPU 0 now gives 3.
TEST_CASE("find_lowest_rq() hands out equally low CPUs in turn", "[smp][rt]") {
  ScenarioParams p = exact_scenario("6.12", 1000, 4);
  p.duration = Time::ms(1);
  TaskSpec w = task("w", {ev_suspend()}, Policy::kFifo, 50);
  w.delay = Time::us(100);
  TaskSpec w2 = task("w2", {ev_suspend()}, Policy::kFifo, 50);
  w2.delay = Time::us(200);
  p.tasks = {on_cpus(hog("hi0", Policy::kFifo, 90), {0}), on_cpus(hog("hi1", Policy::kFifo, 90), {1}), w, w2};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::us(150));
  CHECK(find_task(k, "w").cpu == 2);
  CHECK(k.rq(0).distribute_cpu_mask_prev == 2);
  k.run_until(Time::us(250));
  CHECK(find_task(k, "w2").cpu == 3);
  CHECK(k.rq(0).distribute_cpu_mask_prev == 3);
}

// find_lowest_rq() prefers the CPU running the wake-up when it is among
// the lowest ("this_cpu is cheaper to preempt than a remote processor").
// w (FIFO 50) forks onto CPU 2 and sleeps; hi2 (FIFO 90) then holds CPU 2.
// At 1.01 ms k, a fair task on CPU 4, wakes w: CPUs 3 and 4 both run no RT
// work, and w goes to CPU 4, k's, not to CPU 3, the first after its
// previous CPU.
TEST_CASE("find_lowest_rq() prefers the waking CPU among the lowest", "[smp][rt]") {
  ScenarioParams p = exact_scenario("6.12", 1000, 5);
  p.duration = Time::ms(2);
  TaskSpec w = task("w", {ev_suspend(), ev_run(Time::ms(1))}, Policy::kFifo, 50);
  w.delay = Time::us(100);
  TaskSpec hi2 = on_cpus(hog("hi2", Policy::kFifo, 90), {2});
  hi2.delay = Time::us(500);
  TaskSpec waker = on_cpus(task("k", {ev_run(Time::us(10)), ev_resume("w"), ev_sleep(Time::s(10))}), {4});
  waker.delay = Time::ms(1);
  p.tasks = {on_cpus(hog("hi0", Policy::kFifo, 90), {0}), on_cpus(hog("hi1", Policy::kFifo, 90), {1}), w, hi2,
             waker};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(1));
  REQUIRE(find_task(k, "w").cpu == 2);
  k.run_until(Time::us(1020));
  CHECK(find_task(k, "w").cpu == 4);
  CHECK(k.rq(4).curr == &find_task(k, "w"));
}

// rq->rt.pushable_tasks is a plist: a preempted task is re-added at the
// tail of its priority (put_prev_task_rt()), behind tasks that were
// waiting already, although it stays at the head of the run list. On
// CPU 0, A (FIFO 50) runs and B (FIFO 50) waits (CPU 1 runs c1, FIFO 60);
// at 2 ms h (FIFO 90, pinned) preempts A. At 5 ms c1 sleeps and CPU 1
// takes the first pushable task of CPU 0: B, not A. Either way: pushed by
// CPU 0 after the IPI (RT_PUSH_IPI) or pulled by CPU 1.
TEST_CASE("a preempted RT task goes to the tail of the pushable list", "[smp][rt]") {
  for (const bool push_ipi : {true, false}) {
    DYNAMIC_SECTION("RT_PUSH_IPI " << push_ipi) {
      ScenarioParams p = exact_scenario("6.12", 1000, 2);
      p.duration = Time::ms(10);
      p.kernel.features["RT_PUSH_IPI"] = push_ipi;
      TaskSpec b = hog("B", Policy::kFifo, 50);
      b.delay = Time::us(100);
      TaskSpec h = on_cpus(hog("h", Policy::kFifo, 90), {0});
      h.delay = Time::ms(2);
      p.tasks = {on_cpus(task("c1", {ev_run(Time::ms(5)), ev_sleep(Time::s(10))}, Policy::kFifo, 60), {1}),
                 hog("A", Policy::kFifo, 50), b, h};
      System sys(p, 1);
      Kernel& k = sys.kernel();
      k.run_until(Time::ms(3));
      REQUIRE(find_task(k, "A").cpu == 0);
      REQUIRE(find_task(k, "B").cpu == 0);
      REQUIRE(k.rq(0).rt.nr_pushable == 2);
      k.run_until(Time::ms(5));
      CHECK(find_task(k, "B").cpu == 1);
      CHECK(find_task(k, "A").cpu == 0);
      CHECK(k.rq(1).curr == &find_task(k, "B"));
    }
  }
}

// When CPU 2's RT task sleeps, both RT tasks waiting elsewhere come to it:
// x (FIFO 40) behind hi0 on CPU 0 and y (FIFO 50) behind hi1 on CPU 1.
// Without RT_PUSH_IPI pull_rt_task() takes x from CPU 0, then y from
// CPU 1, which beats x; with it CPU 0 pushes x to CPU 2 and the IPI passes
// to CPU 1, which pushes y there too (CPU 2, running x, is still lower).
// y runs, x waits behind it.
TEST_CASE("a CPU whose RT priority drops gets work from every overloaded CPU", "[smp][rt]") {
  for (const bool push_ipi : {true, false}) {
    DYNAMIC_SECTION("RT_PUSH_IPI " << push_ipi) {
      ScenarioParams p = exact_scenario("6.12", 1000, 3);
      p.duration = Time::ms(10);
      p.kernel.features["RT_PUSH_IPI"] = push_ipi;
      TaskSpec x = on_cpus(hog("x", Policy::kFifo, 40), {0, 2});
      x.delay = Time::us(100);
      TaskSpec y = on_cpus(hog("y", Policy::kFifo, 50), {1, 2});
      y.delay = Time::us(100);
      p.tasks = {on_cpus(hog("hi0", Policy::kFifo, 90), {0}), on_cpus(hog("hi1", Policy::kFifo, 90), {1}),
                 on_cpus(task("c", {ev_run(Time::ms(5)), ev_sleep(Time::s(10))}, Policy::kFifo, 60), {2}), x, y};
      System sys(p, 1);
      Kernel& k = sys.kernel();
      k.run_until(Time::ms(4));
      REQUIRE(find_task(k, "x").cpu == 0);
      REQUIRE(find_task(k, "y").cpu == 1);
      k.run_until(Time::ms(5));
      CHECK(find_task(k, "x").cpu == 2);
      CHECK(find_task(k, "y").cpu == 2);
      CHECK(k.rq(2).curr == &find_task(k, "y"));
    }
  }
}

// sched_idle_cpu() (6.12 fair.c): a CPU whose tasks are all SCHED_IDLE is
// idle to wake-up placement. CPU 0 runs a SCHED_IDLE hog from 0; w forks
// onto the idle CPU 1 (CPU 0 counts the forking parent too), and a nice-0
// hog joins it there at 0.5 ms. From w's first wake-up on (after 1 ms of
// work and 5 ms of sleep), select_idle_sibling() finds its previous CPU 1
// busy and takes CPU 0, where w preempts the SCHED_IDLE hog at once.
TEST_CASE("a CPU running only SCHED_IDLE tasks is idle to wake-up placement", "[smp][fair]") {
  ScenarioParams p = exact_scenario("6.12", 1000, 2);
  p.duration = Time::ms(100);
  TaskSpec fair = on_cpus(hog("fair"), {1});
  fair.delay = Time::us(500);
  p.tasks = {on_cpus(hog("bg", Policy::kIdle), {0}), task("w", {ev_run(Time::ms(1)), ev_sleep(Time::ms(5))}), fair};
  System sys(p, 1);
  SwitchLog log;
  sys.add_observer(&log);
  sys.run();
  REQUIRE(log.first_run("w") == Time::zero());
  int on_cpu0 = 0, elsewhere = 0;
  for (const auto& r : log.log)
    if (r.next == "w") ++(r.cpu == 0 ? on_cpu0 : elsewhere);
  CHECK(elsewhere == 1);  // the first run, on CPU 1
  CHECK(on_cpu0 >= 14);
  CHECK(metrics_of(sys.result(), "w").wakeup_latency.count_at_least(1) == 0);
}

// dequeue_entities() (6.12 fair.c): when a fair task's dequeue leaves its
// CPU with only SCHED_IDLE tasks, rq->next_balance becomes now, so the
// next tick balances ("balance early to pull high priority tasks"). f (nice
// 0) shares CPU 0 with a SCHED_IDLE hog and sleeps after 2 ms of work: it
// runs [0, 1] and [2, 3] ms, the hog the tick between, so f sleeps at
// 3 ms, jiffy 3 at HZ=1000 (DELAY_DEQUEUE off, so that f leaves the rq as
// it sleeps).
TEST_CASE("a CPU left with only SCHED_IDLE tasks balances at its next tick", "[smp][fair][lb]") {
  ScenarioParams p = exact_scenario("6.12", 1000, 2);
  p.duration = Time::ms(10);
  p.kernel.features["DELAY_DEQUEUE"] = false;
  p.tasks = {on_cpus(hog("bg", Policy::kIdle), {0}),
             on_cpus(task("f", {ev_run(Time::ms(2)), ev_sleep(Time::s(10))}), {0})};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::us(2900));
  REQUIRE(find_task(k, "f").on_rq);
  CHECK_FALSE(k.sched_idle_cpu(0));
  REQUIRE(k.rq(0).next_balance > 3);
  k.run_until(Time::us(3500));
  REQUIRE_FALSE(find_task(k, "f").on_rq);
  CHECK(k.sched_idle_cpu(0));
  CHECK(k.rq(0).next_balance == 3);
}

// resched_curr() of another CPU (kernel/sched/core.c, 6.12) sets its
// need_resched and sends the scheduler IPI: that CPU preempts when the IPI
// arrives (5 us here), whatever path enqueued the task there. Two CPUs, no
// cpuidle: fair (pinned to CPU 1) runs on CPU 1; rt_a (FIFO 50) on CPU 0.
namespace {
ScenarioParams remote_resched_scenario(TaskSpec late) {
  ScenarioParams p = exact_scenario("6.12", 250, 2);
  p.duration = Time::ms(10);
  p.kernel.ipi_latency = Time::us(5);
  p.tasks = {on_cpus(hog("fair"), {1}), task("rt_a", {ev_run(Time::ms(20))}, Policy::kFifo, 50), std::move(late)};
  return p;
}
}  // namespace

TEST_CASE("a preemption caused from another CPU waits for the resched IPI", "[smp][rt][overheads]") {
  SECTION("an RT push preempts the target CPU when the IPI arrives") {
    // At 2 ms rt_b (FIFO 60, pinned to CPU 0) starts and preempts rt_a,
    // which CPU 0's balance callback pushes to CPU 1 (push_rt_task(): the
    // lowest-priority CPU), where fair runs: rt_a runs there at 2.005 ms.
    TaskSpec rt_b = on_cpus(task("rt_b", {ev_run(Time::ms(1)), ev_sleep(Time::ms(100))}, Policy::kFifo, 60), {0});
    rt_b.delay = Time::ms(2);
    const auto log = run_logged<SwitchLog>(remote_resched_scenario(rt_b));
    CHECK(log.first_run("rt_b") == Time::ms(2));
    std::vector<SwitchRecord> rt_a_on_cpu1;
    for (const auto& r : log.log)
      if (r.next == "rt_a" && r.cpu == 1) rt_a_on_cpu1.push_back(r);
    REQUIRE(rt_a_on_cpu1.size() == 1);
    CHECK(rt_a_on_cpu1[0] == SwitchRecord{Time::us(2005), 1, "fair", "rt_a", 'R'});
  }
  SECTION("a task started on a busy CPU preempts it when the parent's IPI arrives") {
    // wake_up_new_task() runs on the parent's CPU (0 for every task here):
    // late (FIFO 60, pinned to CPU 1) starts at 2 ms and runs at 2.005 ms.
    // The model used to run it at 2 ms, as if started on CPU 1.
    TaskSpec late = on_cpus(task("late", {ev_run(Time::ms(1)), ev_sleep(Time::ms(100))}, Policy::kFifo, 60), {1});
    late.delay = Time::ms(2);
    const auto log = run_logged<SwitchLog>(remote_resched_scenario(late));
    CHECK(log.first_run("late") == Time::us(2005));
    // fair too started on the idle CPU 1 by CPU 0: it ran when the IPI
    // woke CPU 1 (no cpuidle: arch_cpu_idle()'s WFI).
    CHECK(log.first_run("fair") == Time::us(5));
  }
}

// do_start_rt_bandwidth() (6.1/6.6 rt.c) pins the RT period timer to the
// CPU that starts it, and do_sched_rt_period_timer() unthrottles every
// CPU's rt_rq from there. rt (FIFO 50, CPU 1) is forked from CPU 0, whose
// enqueue starts the timer: it lives on CPU 0. rt runs from 5 us (the
// fork's IPI) and is throttled at the 952 ms tick (rt_time 951.995 ms >
// 950); CPU 1 idles. The period ends at 1 s + 1 ns on CPU 0, whose
// unthrottling resched of CPU 1 arrives 5 us later. The model used to
// unthrottle as CPU 1 itself: rt ran at 1 s + 1 ns.
TEST_CASE("the RT period timer unthrottles other CPUs by IPI from the CPU that started it", "[smp][rt][throttle][overheads]") {
  ScenarioParams p = exact_scenario("6.6", 250, 2);
  p.duration = Time::ms(1100);
  p.kernel.ipi_latency = Time::us(5);
  p.tasks = {on_cpus(hog("rt", Policy::kFifo, 50), {1})};
  System sys(p, 1);
  SwitchLog log;
  sys.add_observer(&log);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(999));
  REQUIRE(k.rq(1).rt.rt_throttled);
  CHECK(k.rt_period_timer_cpu() == 0);
  CHECK(log.first_run("rt") == Time::us(5));
  k.run_until(Time::ms(1100));
  CHECK(log.first_run("rt", Time::ms(999)) == Time::ns(1'000'005'001));
}

// sched_rt_rq_dequeue() (6.1/6.6 rt.c): a throttled rt_rq's tasks leave
// rq->nr_running, so the CPU its RT hog is throttled on counts as idle
// (idle_cpu(): rq->idle runs, nr_running 0). rt (FIFO 50) holds CPU 0, f
// CPU 1; w (1 ms every 10 ms, either CPU) wakes where it last ran, CPU 1,
// while CPU 0 is RT's. From the 952 ms tick rt is throttled until the
// period ends at 1 s: w's wake-ups find CPU 0 idle (select_idle_sibling())
// and run there. The model used to keep rt counted: CPU 0 was never idle
// and w stayed on CPU 1.
TEST_CASE("a CPU whose RT tasks are throttled counts as idle", "[smp][rt][throttle]") {
  const std::string version = GENERATE(as<std::string>(), "6.1", "6.6");
  ScenarioParams p = exact_scenario(version, 250, 2);
  p.duration = Time::ms(990);
  TaskSpec w = task("w", {ev_run(Time::ms(1)), ev_sleep(Time::ms(9))});
  w.delay = Time::ms(1);
  p.tasks = {on_cpus(hog("rt", Policy::kFifo, 50), {0}), on_cpus(hog("f"), {1}), w};
  System sys(p, 1);
  SwitchLog log;
  sys.add_observer(&log);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(951));
  REQUIRE_FALSE(k.rq(0).rt.rt_throttled);
  CHECK(k.rq(0).nr_running >= 1);
  k.run_until(Time::ms(953));
  REQUIRE(k.rq(0).rt.rt_throttled);
  CHECK(k.rq(0).rt.rt_nr_running == 1);
  CHECK(k.rq(0).nr_running == k.rq(0).cfs.h_nr_running);  // rt is not counted
  k.run_until(Time::ms(990));
  int w_on_cpu0_before = 0, w_on_cpu0_throttled = 0;
  for (const SwitchRecord& r : log.log) {
    if (r.cpu != 0 || r.next != "w") continue;
    (r.t < Time::ms(952) ? w_on_cpu0_before : w_on_cpu0_throttled) += 1;
  }
  CHECK(w_on_cpu0_before == 0);
  CHECK(w_on_cpu0_throttled >= 3);
}

// dequeue_task_rt() brings the running RT task's runtime up to date
// whichever RT task leaves, so a pull can throttle between ticks. HZ 100:
// rt (FIFO 50) holds CPU 0 from 0 and has used 950 ms by the 950 ms tick
// (not more: no throttle there). q (FIFO 40) wakes at 955 ms behind it (CPU
// 1 runs h, FIFO 60: no lower CPU). h sleeps at 957 ms and CPU 1 pulls q:
// its dequeue on CPU 0 finds rt_time 957 ms > 950 and throttles, and f (fair,
// CPU 0) runs from 957 ms, not from the 960 ms tick.
TEST_CASE("an RT task pulled away updates the running one's runtime: throttling between ticks", "[smp][rt][throttle]") {
  ScenarioParams p = exact_scenario("6.1", 100, 2);
  p.duration = Time::ms(990);
  TaskSpec h = on_cpus(task("h", {ev_run(Time::ms(57)), ev_sleep(Time::s(10))}, Policy::kFifo, 60), {1});
  h.delay = Time::ms(900);
  TaskSpec q = task("q", {ev_run(Time::ms(10)), ev_sleep(Time::s(10))}, Policy::kFifo, 40);
  q.delay = Time::ms(955);
  p.tasks = {on_cpus(hog("rt", Policy::kFifo, 50), {0}), on_cpus(hog("f"), {0}), h, q};
  const SwitchLog log = run_logging_switches(p);
  std::vector<SwitchRecord> cpu0;
  for (const SwitchRecord& r : log.log)
    if (r.cpu == 0 && r.t > Time::ms(900)) cpu0.push_back(r);
  REQUIRE(!cpu0.empty());
  CHECK(cpu0[0].t == Time::ms(957));
  CHECK(cpu0[0].prev == "rt");
  CHECK(cpu0[0].next == "f");
  CHECK(log.first_run("q") == Time::ms(957));
  CHECK(log.log.back().cpu == 1);  // q ran on CPU 1
}

// A class change on a throttled rq moves the task into or out of
// rq->nr_running, as the classes' own enqueue and dequeue do (6.1/6.6:
// enqueue_top_rt_rq() returns early while throttled; fair's enqueue adds).
// rt (FIFO 50) holds CPU 0 and is throttled from 952 ms; o (fair, CPU 0)
// starts at 953 ms, takes m and runs. r2 (FIFO 60, CPU 1) blocks on m at
// 960 ms and boosts o into the throttled rt_rq: CPU 0 counts no task, and
// o, running on, stops at the next tick (update_curr_rt():
// sched_rt_runtime_exceeded() is true for a throttled rt_rq). At the
// period's end both RT tasks are counted again: 2, not 3.
TEST_CASE("a PI boost into a throttled rt_rq takes the owner out of nr_running", "[smp][rt][throttle][pi]") {
  ScenarioParams p = exact_scenario("6.1", 250, 2);
  p.duration = Time::ms(1100);
  TaskSpec o = on_cpus(task("o", {ev_lock("m"), ev_run(Time::ms(20)), ev_unlock("m"), ev_sleep(Time::s(10))}), {0});
  o.delay = Time::ms(953);
  TaskSpec r2 = on_cpus(
      task("r2", {ev_lock("m"), ev_run(Time::ms(1)), ev_unlock("m"), ev_sleep(Time::s(10))}, Policy::kFifo, 60), {1});
  r2.delay = Time::ms(960);
  p.tasks = {on_cpus(hog("rt", Policy::kFifo, 50), {0}), o, r2};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(958));
  REQUIRE(k.rq(0).rt.rt_throttled);
  CHECK(k.rq(0).nr_running == 1);  // o
  k.run_until(Time::ms(965));
  REQUIRE(find_task(k, "o").sched_class == SchedClassId::kRt);
  CHECK(k.rq(0).curr->is_idle_task);
  CHECK(k.rq(0).rt.rt_nr_running == 2);
  CHECK(k.rq(0).nr_running == 0);
  k.run_until(Time::ms(1002));
  REQUIRE_FALSE(k.rq(0).rt.rt_throttled);
  CHECK(k.rq(0).nr_running == 2);
  k.run_until(Time::ms(1100));
  CHECK(find_task(k, "o").sched_class == SchedClassId::kFair);
  CHECK(k.rq(0).nr_running == 1);  // o sleeps; rt runs
}

// rt_mutex_setprio() runs on the waiter's CPU. owner (fair, CPU 1) takes m
// and runs; rt_c (FIFO 50, CPU 1) preempts it at 1.005 ms (forked from CPU
// 0: the IPI). rt_hi (FIFO 60, CPU 0) starts at 2 ms, runs 0.1 ms and
// blocks on m: the boost to prio 39 (switched_to_rt(): above rt_c's 49,
// and CPU 1 is not RT-overloaded, both tasks pinned) reschedules CPU 1 from
// CPU 0, so owner runs there when the IPI arrives, at 2.105 ms. The model
// used to change owner as if from CPU 1 itself: at 2.1 ms.
TEST_CASE("a priority boost from another CPU preempts when the resched IPI arrives", "[smp][rt][pi][overheads]") {
  ScenarioParams p = exact_scenario("6.12", 250, 2);
  p.duration = Time::ms(10);
  p.kernel.ipi_latency = Time::us(5);
  TaskSpec rt_c = on_cpus(task("rt_c", {ev_run(Time::ms(5)), ev_sleep(Time::s(1))}, Policy::kFifo, 50), {1});
  rt_c.delay = Time::ms(1);
  TaskSpec rt_hi = on_cpus(task("rt_hi", {ev_run(Time::us(100)), ev_lock("m"), ev_run(Time::us(100)),
                                          ev_unlock("m"), ev_sleep(Time::s(1))},
                                Policy::kFifo, 60),
                           {0});
  rt_hi.delay = Time::ms(2);
  p.tasks = {on_cpus(task("owner", {ev_lock("m"), ev_run(Time::ms(3)), ev_unlock("m"), ev_sleep(Time::s(1))}), {1}),
             rt_c, rt_hi};
  const auto log = run_logged<SwitchLog>(p);
  CHECK(log.first_run("owner") == Time::us(5));
  CHECK(log.first_run("rt_c") == Time::us(1005));
  CHECK(log.first_run("rt_hi") == Time::ms(2));
  std::vector<SwitchRecord> owner_back;
  for (const auto& r : log.log)
    if (r.next == "owner" && r.t > Time::ms(1)) owner_back.push_back(r);
  REQUIRE(!owner_back.empty());
  CHECK(owner_back[0] == SwitchRecord{Time::us(2105), 1, "rt_c", "owner", 'R'});
}

// ttwu_runnable() runs on the waking CPU. On CPU 1, B (3 ms slice) runs
// first (deadline 3 ms before hog A's 20 ms custom slice), blocks at 1.8 ms
// with v = 1.8, V = 0.9 (lag < 0): delayed (DELAY_DEQUEUE), and A runs,
// protected to its 20 ms deadline (RUN_TO_PARITY), so no pick reaches B.
// W on CPU 0 resumes B at 4.5 ms: V = (2.7 + 1.8) / 2, lag 0.45 ms > 0, so
// requeue_delayed_entity() places it afresh at V = 2.7 (A alone), deadline
// 5.7 < 20: a shorter slice, eligible and earlier (PREEMPT_SHORT), it
// preempts A -- by IPI from CPU 0, at 4.505 ms. The model used to requeue
// B as if from CPU 1 itself: at 4.5 ms.
TEST_CASE("a delayed task woken from another CPU preempts when the resched IPI arrives", "[smp][fair][eevdf][overheads]") {
  ScenarioParams p = exact_scenario("6.12", 1000, 2);
  p.duration = Time::ms(10);
  p.kernel.base_slice = Time::ms(3);
  p.kernel.ipi_latency = Time::us(5);
  TaskSpec a = on_cpus(hog("A"), {1});
  a.slice = Time::ms(20);
  TaskSpec w = on_cpus(task("W", {ev_resume("B"), ev_sleep(Time::s(1))}), {0});
  w.delay = Time::us(4500);
  p.tasks = {on_cpus(task("B", {ev_run(Time::us(1800)), ev_suspend(), ev_run(Time::ms(1)), ev_sleep(Time::s(1))}),
                     {1}),
             a, w};
  System sys(p, 1);
  SwitchLog log;
  sys.add_observer(&log);
  Kernel& k = sys.kernel();
  k.run_until(Time::us(4400));
  const Task& b = find_task(k, "B");
  REQUIRE(b.se.sched_delayed);
  REQUIRE(k.rq(1).curr->comm == "A");
  k.run_until(Time::ms(10));
  CHECK(log.first_run("W") == Time::us(4500));
  CHECK(log.first_run("B", Time::ms(2)) == Time::us(4505));
}

// task_h_load() with CONFIG_FAIR_GROUP_SCHED and every task in the root
// group (6.12 fair.c update_cfs_rq_h_load(), task_h_load()): the task's
// load_avg times the root cfs_rq's h_load over its load_avg + 1, h_load
// being the root's load_avg as first read in the jiffy. Two nice-0 hogs
// share CPU 0 for 100 ms; then, within the same jiffy, the root's load_avg
// read later is doubled by hand: h_load keeps the first reading.
TEST_CASE("task_h_load() is the task's share of the root cfs_rq's h_load, cached per jiffy", "[smp][pelt][group]") {
  for (const bool group_sched : {true, false}) {
    INFO(group_sched);
    ScenarioParams p = exact_scenario("6.12", 250, 2);
    p.kernel.fair_group_sched = group_sched;
    p.tasks = {on_cpus(hog("a"), {0}), on_cpus(hog("b"), {0})};
    System sys(p, 1);
    Kernel& k = sys.kernel();
    k.run_until(Time::ms(100) + Time::us(500));  // mid-jiffy (HZ=250: 4 ms)
    Task& a = find_task(k, "a");
    Rq& rq = k.rq(0);
    const uint64_t load = a.se.avg.load_avg, root = rq.cfs.avg.load_avg;
    REQUIRE(load > 100);
    REQUIRE(root > load);
    if (group_sched) {
      CHECK(k.task_h_load(a) == load * root / (root + 1));  // one less than load_avg here
      CHECK(k.task_h_load(a) == load - 1);
      rq.cfs.avg.load_avg = 2 * root;  // the same jiffy: h_load stays root
      CHECK(k.task_h_load(a) == load * root / (2 * root + 1));
      rq.cfs.last_h_load_update -= 1;  // a jiffy later: h_load is read again
      CHECK(k.task_h_load(a) == load * (2 * root) / (2 * root + 1));
    } else {
      CHECK(k.task_h_load(a) == load);
    }
  }
}

// set_task_rq() -> set_task_rq_fair() (6.12 fair.c, CONFIG_FAIR_GROUP_SCHED):
// an RT task's fair signals, stamped with its CPU's PELT clock when it
// started (post_init_entity_util_avg() for another class), decay when it
// migrates. init_entity_runnable_average() gave it load_avg = its weight
// (1024) with load_sum 0, so any decay over a PELT period leaves load_avg
// 0. r (FIFO 50, CPUs 0-1) starts on CPU 0 and runs 1 ms every 10 ms;
// hi (FIFO 90, CPU 0), forked at 35 ms while r sleeps, runs from 50 ms to
// 150 ms, so r's wake-up at 50 ms finds CPU 0 taken by a higher priority
// and goes to CPU 1. f (nice 0, CPU 0, 1 ms every 10 ms from 5 ms) keeps
// CPU 0's cfs_rq clock moving (its last update is at least 40 ms past r's
// stamp), and r's signals take CPU 1's stamp. Without
// CONFIG_FAIR_GROUP_SCHED its signals stay as they started.
TEST_CASE("a migrating RT task's fair signals age with CONFIG_FAIR_GROUP_SCHED", "[smp][pelt][group][rt]") {
  for (const bool group_sched : {true, false}) {
    INFO(group_sched);
    ScenarioParams p = exact_scenario("6.12", 250, 2);
    p.kernel.fair_group_sched = group_sched;
    TaskSpec hi = on_cpus(
        task("hi", {ev_sleep(Time::ms(15)), ev_run(Time::ms(100)), ev_sleep(Time::s(100))}, Policy::kFifo, 90), {0});
    hi.delay = Time::ms(35);
    TaskSpec f = on_cpus(task("f", {ev_run(Time::ms(1)), ev_sleep(Time::ms(9))}), {0});
    f.delay = Time::ms(5);
    p.tasks = {hi, on_cpus(task("r", {ev_run(Time::ms(1)), ev_sleep(Time::ms(9))}, Policy::kFifo, 50), {0, 1}), f};
    System sys(p, 1);
    Kernel& k = sys.kernel();
    Task& r = find_task(k, "r");
    k.run_until(Time::ms(45));
    REQUIRE(r.cpu == 0);
    const uint64_t stamp = r.se.avg.last_update_time;
    CHECK(r.se.avg.load_avg == 1024);
    k.run_until(Time::ms(55));
    REQUIRE(r.cpu == 1);
    if (group_sched) {
      CHECK(r.se.avg.load_avg == 0);
      CHECK(r.se.avg.last_update_time > stamp);  // CPU 1's cfs_rq clock at the move
    } else {
      CHECK(r.se.avg.load_avg == 1024);
      CHECK(r.se.avg.last_update_time == stamp);
    }
  }
}

TEST_CASE("an exited task's signals leave its cfs_rq at the next update (task_dead_fair)", "[pelt][fair]") {
  // t runs 50 ms and exits; h runs 1 ms every 5 ms on the same CPU, so t
  // ends past 60 ms. At
  // t's exit remove_entity_load_avg() queues t's util for removal, and
  // h's next wake-up updates the cfs_rq: the root then carries h's util
  // only, not t's as blocked load decaying over the next ~100 ms.
  ScenarioParams p = exact_scenario("6.12", 250);
  p.duration = Time::ms(100);
  TaskSpec t_spec = phased_task("t", {{1, {ev_run(Time::ms(50))}}});
  t_spec.loop = 1;  // then exit
  p.tasks = {t_spec, task("h", {ev_sleep(Time::ms(5)), ev_run(Time::ms(1)), ev_sleep(Time::ms(4))})};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(80));
  const Rq& rq = k.rq(0);
  const Task& t = find_task(k, "t");
  const Task& h = find_task(k, "h");
  REQUIRE(t.state == TaskState::kDead);
  CHECK(t.se.avg.util_avg > 300);  // what the root would still hold
  CHECK(rq.cfs.removed.nr == 0);   // applied by h's enqueue since
  CHECK(rq.cfs.avg.util_avg <= h.se.avg.util_avg + 2);
}

// RT overload by version: 6.1/6.6 update_rt_migration() puts a CPU in
// rd->rto_mask only with two or more RT tasks queued, one allowed
// elsewhere; 6.7+ with any pushable task (the model's 6.12 is run with
// 6.6's RT throttling instead of the fair server to show it). sf (FIFO 50, either CPU) holds CPU 0 and is throttled
// from the 952 ms tick: queued alone and pushable there while f (fair,
// CPU 0) runs. q (FIFO 60, CPU 1) runs 1 ms every 5 ms; each time it
// sleeps CPU 1 pulls (its RT priority drops). On 6.1/6.6 no CPU is
// overloaded and the pull does nothing; with 6.12's rule CPU 0 is, and its
// push IPI finds sf above f and reschedules CPU 0 for nothing (f picked
// again: throttled sf cannot run).
TEST_CASE("a throttled CPU's lone RT task makes it RT overloaded from 6.12 only", "[smp][rt][throttle]") {
  const std::string version = GENERATE(as<std::string>(), "6.1", "6.6", "6.12");
  INFO(version);
  ScenarioParams p = exact_scenario(version, 250, 2);
  p.duration = Time::ms(999);
  p.kernel.rt_throttling = true;  // 6.12: 6.6's RT bandwidth in place of the fair server
  p.kernel.fair_server = false;
  TaskSpec q = on_cpus(task("q", {ev_run(Time::ms(1)), ev_sleep(Time::ms(4))}, Policy::kFifo, 60), {1});
  p.tasks = {hog("sf", Policy::kFifo, 50), on_cpus(hog("f"), {0}), q};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(953));
  REQUIRE(k.rq(0).rt.rt_throttled);
  REQUIRE(find_task(k, "sf").cpu == 0);
  const uint64_t before = k.rq(0).sched_count;
  k.run_until(Time::ms(999));
  CHECK(find_task(k, "sf").cpu == 0);
  if (version == "6.12")
    CHECK(k.rq(0).sched_count >= before + 9);  // a push IPI after each of q's sleeps
  else
    CHECK(k.rq(0).sched_count == before);
}

// 6.1/6.6 have no SM_IDLE: an idle CPU rescheduled with nothing queued
// picks again through pick_next_task_fair()'s idle: label, so it runs
// newidle_balance() (which stamps rq->idle_stamp); 6.12 goes back to idle
// without a pick. CPU 0 runs a (FIFO 50, CPU 0) with b (FIFO 40, CPUs 0-1)
// queued behind it; CPU 1's h (FIFO 70) never lets b go. Both are
// throttled from the 952 ms tick, CPU 0 idles, and b, queued and
// migratory, keeps CPU 0 RT overloaded (by 6.1/6.6's rule and 6.12's):
// each sleep of q (FIFO 60, CPU 2; 1 ms every 5 ms) pulls, the push IPI
// finds b above CPU 0's idle task and reschedules it. (6.12 runs here
// with 6.6's throttling instead of the fair server.)
TEST_CASE("an idle CPU rescheduled with nothing queued balances as newly idle on 6.1/6.6 only", "[smp][rt][fair]") {
  const std::string version = GENERATE(as<std::string>(), "6.1", "6.6", "6.12");
  INFO(version);
  ScenarioParams p = exact_scenario(version, 250, 3);
  p.duration = Time::ms(999);
  p.kernel.rt_throttling = true;
  p.kernel.fair_server = false;
  TaskSpec q = on_cpus(task("q", {ev_run(Time::ms(1)), ev_sleep(Time::ms(4))}, Policy::kFifo, 60), {2});
  p.tasks = {on_cpus(hog("a", Policy::kFifo, 50), {0}), on_cpus(hog("b", Policy::kFifo, 40), {0, 1}),
             on_cpus(hog("h", Policy::kFifo, 70), {1}), q};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(960));
  REQUIRE(k.rq(0).rt.rt_throttled);
  REQUIRE(find_task(k, "b").cpu == 0);
  REQUIRE(k.rq(0).curr->is_idle_task);
  k.run_until(Time::ms(990));
  CHECK(k.rq(0).curr->is_idle_task);
  if (version == "6.12")
    CHECK(k.rq(0).idle_stamp < Time::ms(955));  // the switch to idle at the throttling, only
  else
    CHECK(k.rq(0).idle_stamp > Time::ms(980));  // a newidle pass at each of q's sleeps
}
