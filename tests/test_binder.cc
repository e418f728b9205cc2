// Binder transactions (models/kernel/binder/binder.h, drivers/android/
// binder.c 6.12): the server thread the driver picks, WF_SYNC wake-ups,
// the nice a transaction runs at, one-way ordering. No overheads: every
// time is computed by hand.
#include <catch2/catch.hpp>

#include "models/kernel/binder/binder.h"
#include "config_test_util.h"
#include "sched_test_util.h"

using namespace schedlab;
using namespace schedlab::testing;

namespace {

EventSpec ev_binder(const std::string& proc, Time work, bool oneway = false) {
  EventSpec e = ev_call(CallSpec::Op::kBinderCall, proc);
  e.call.cost = work;
  e.call.oneway = oneway;
  return e;
}

BinderProcParams binder_proc(const std::string& name, int threads, int nice = 0, int min_nice = 0) {
  BinderProcParams b;
  b.name = name;
  b.threads = threads;
  b.nice = nice;
  b.min_nice = min_nice;
  return b;
}

// The nice each task had whenever it was switched in.
class NiceLog : public SchedObserver {
 public:
  void on_switch(Time t, int, const Task&, TaskState, const Task& next) override {
    if (!next.is_idle_task) seen.push_back({t.count(), next.comm + "@" + std::to_string(next.nice())});
  }
  std::vector<std::pair<int64_t, std::string>> seen;
};

// A fair caller of "svc" at `nice`, from `delay`: one 200 us call, then
// asleep.
TaskSpec svc_caller(const std::string& name, int nice, Time delay, bool oneway) {
  TaskSpec t = task(name, {ev_binder("svc", Time::us(200), oneway), ev_sleep(Time::s(1))}, Policy::kNormal, nice);
  t.delay = delay;
  return t;
}

// A System run for 5 ms with a SwitchLog watching from the start.
struct Watched {
  explicit Watched(const ScenarioParams& p) : sys(p, 1) {
    sys.add_observer(&log);
    sys.kernel().run_until(Time::ms(5));
  }
  Kernel& kernel() { return sys.kernel(); }
  System sys;
  SwitchLog log;
};

}  // namespace

// The pool's threads start at 0 and go to wait for work at once; callers
// start 1 ms later, so every transaction finds a thread waiting.
TEST_CASE("a synchronous binder call sleeps until the pool thread has run the work and replied", "[binder]") {
  // One CPU. C runs 1 ms, calls with 300 us of work and sleeps (S); the
  // thread runs it and replies at 2.3 ms, waking C, which runs 1 ms more.
  ScenarioParams p = exact_scenario("6.12", 1000);
  p.duration = Time::ms(5);
  p.binder_procs = {binder_proc("svc", 1)};
  TaskSpec c = task("C", {ev_run(Time::ms(1)), ev_binder("svc", Time::us(300)), ev_run(Time::ms(1)),
                          ev_sleep(Time::s(1))});
  c.delay = Time::ms(1);
  p.tasks = {c};
  Watched run(p);
  Kernel& k = run.kernel();
  const SwitchLog& log = run.log;
  std::vector<std::pair<int64_t, std::string>> expected = {{0, "binder:svc_1"}, {0, "idle"},
                                                           {1000000, "C"},      {2000000, "binder:svc_1"},
                                                           {2300000, "C"},      {3300000, "idle"}};
  CHECK(log.runs_until(Time::ms(5)) == expected);
  // Both wake-ups carry WF_SYNC (wake_up_interruptible_sync()).
  CHECK((find_task(k, "binder:svc_1").ttwu_wake_flags & kWfSync) != 0);
  CHECK((find_task(k, "C").ttwu_wake_flags & kWfSync) != 0);
}

TEST_CASE("a binder thread takes the caller nice within the node minimum and goes back after", "[binder]") {
  // Process nice 5, node min_priority 0, one CPU. A (nice -10) calls at
  // 1 ms, B (nice 10) at 2 ms, D (nice -10) one-way at 3 ms, each with
  // 200 us of work.
  //   A: -10 < 0, synchronous: the thread takes A's nice, -10;
  //   B: 10 > 0: the node's min_priority, 0;
  //   D: one-way never takes the caller's; 5 > 0, so the node's, 0.
  // After each the thread is back at the process's nice, 5.
  ScenarioParams p = exact_scenario("6.12", 1000);
  p.duration = Time::ms(5);
  p.binder_procs = {binder_proc("svc", 1, 5, 0)};
  p.tasks = {svc_caller("A", -10, Time::ms(1), false), svc_caller("B", 10, Time::ms(2), false),
             svc_caller("D", -10, Time::ms(3), true)};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  Task& thread = find_task(k, "binder:svc_1");
  const std::vector<std::pair<int64_t, int>> expected = {{500, 5},  {1100, -10}, {1500, 5}, {2100, 0},
                                                         {2500, 5}, {3100, 0},   {3500, 5}};
  for (const auto& [us, nice] : expected) {
    k.run_until(Time::us(us));
    INFO("at " << us << " us");
    CHECK(thread.nice() == nice);
  }
  // A one-way wake-up is not WF_SYNC.
  CHECK((thread.ttwu_wake_flags & kWfSync) == 0);
}

// Mainline binder_new_node() keeps the node's min_priority in a u8
// (flags & FLAT_BINDER_FLAG_PRIORITY_MASK): libbinder's nice -2 arrives
// as 254, above every nice. Process nice 5: A (nice 3) calls at 1 ms and
// keeps its own 3 (3 < 254), not -2; D (nice -10) one-way at 2 ms changes
// nothing (5 > 254 is false), the thread runs at 5. The ACK takes the
// value signed: A's call runs at -2 there.
TEST_CASE("mainline binder stores a negative node minimum as a u8, which raises nothing", "[binder]") {
  ScenarioParams p = exact_scenario("6.12", 1000);
  p.duration = Time::ms(5);
  p.binder_procs = {binder_proc("svc", 1, 5, -2)};
  p.tasks = {svc_caller("A", 3, Time::ms(1), false), svc_caller("D", -10, Time::ms(2), true)};
  SECTION("mainline") {
    System sys(p, 1);
    Kernel& k = sys.kernel();
    Task& thread = find_task(k, "binder:svc_1");
    for (const auto& [us, nice] : std::vector<std::pair<int64_t, int>>{{1100, 3}, {1500, 5}, {2100, 5}}) {
      k.run_until(Time::us(us));
      INFO("at " << us << " us");
      CHECK(thread.nice() == nice);
    }
  }
  SECTION("the Android Common Kernel") {
    p.binder_procs[0].android = true;
    System sys(p, 1);
    Kernel& k = sys.kernel();
    k.run_until(Time::us(1100));
    CHECK(find_task(k, "binder:svc_1").nice() == -2);
  }
}

TEST_CASE("binder picks the newest waiting thread and queues a call that finds none on the process", "[binder]") {
  SECTION("the newest waiter serves (proc->waiting_threads is LIFO)") {
    // One CPU: threads 1 and 2 go to wait in fork order, so 2 is the list
    // head. C calls twice, 1 ms apart: thread 2 serves both (it is the
    // newest waiter again after the first), thread 1 never runs again.
    ScenarioParams p = exact_scenario("6.12", 1000);
    p.duration = Time::ms(5);
    p.binder_procs = {binder_proc("svc", 2)};
    TaskSpec c = task("C", {ev_binder("svc", Time::us(100)), ev_sleep(Time::ms(1)), ev_binder("svc", Time::us(100)),
                            ev_sleep(Time::s(1))});
    c.delay = Time::ms(1);
    p.tasks = {c};
    SwitchLog log = run_logged<SwitchLog>(p);
    std::vector<std::pair<int64_t, std::string>> expected = {
        {0, "binder:svc_1"}, {0, "binder:svc_2"}, {0, "idle"},          {1000000, "C"},
        {1000000, "binder:svc_2"}, {1100000, "C"}, {1100000, "idle"}, {2100000, "C"},
        {2100000, "binder:svc_2"}, {2200000, "C"}, {2200000, "idle"}};
    CHECK(log.runs_until(Time::ms(5)) == expected);
  }
  SECTION("with the only thread busy, the second call waits on proc->todo") {
    // Three CPUs: C1 (CPU 0) and C2 (CPU 1) call at 1 ms with 500 us each;
    // the one thread is pinned to CPU 2. The first call takes the waiting
    // thread; the second finds none and is queued on the process, waking
    // nobody: the thread takes it when it comes back for work after its
    // reply at 1.5 ms, without sleeping, and replies at 2 ms. So one caller
    // resumes at 1.5 ms and the other at 2 ms.
    ScenarioParams p = exact_scenario("6.12", 1000, 3);
    p.duration = Time::ms(5);
    p.binder_procs = {binder_proc("svc", 1)};
    p.binder_procs[0].cpus = {2};
    auto caller = [](const std::string& name, int cpu) {
      TaskSpec t = task(name, {ev_binder("svc", Time::us(500)), ev_sleep(Time::s(1))});
      t.cpus = {cpu};
      t.delay = Time::ms(1);
      return t;
    };
    p.tasks = {caller("C1", 0), caller("C2", 1)};
    SwitchLog log = run_logged<SwitchLog>(p);
    std::vector<int64_t> resumed = {log.first_run("C1", Time::us(1001)).count(),
                                    log.first_run("C2", Time::us(1001)).count()};
    std::sort(resumed.begin(), resumed.end());
    CHECK(resumed == std::vector<int64_t>{1500000, 2000000});
    std::vector<std::pair<int64_t, std::string>> on_cpu2;
    for (const auto& r : log.log)
      if (r.cpu == 2 && r.t > Time::zero()) on_cpu2.emplace_back(r.t.count(), r.next);
    CHECK(on_cpu2 == std::vector<std::pair<int64_t, std::string>>{{1000000, "binder:svc_1"}, {2000000, "idle"}});
  }
}

TEST_CASE("one-way binder transactions to a node run one at a time", "[binder]") {
  // Three CPUs, two threads. C (CPU 0) makes two one-way calls of 1 ms at
  // 1 ms and sleeps. The first wakes thread 2 (the newest waiter); the
  // second finds the node's one-way transaction outstanding and waits on
  // node->async_todo, waking nobody, although thread 1 waits. When thread
  // 2 frees the first buffer (2 ms) the second moves to proc->todo and
  // thread 1 is woken, but thread 2 reads proc->todo first and serves it
  // (2-3 ms); thread 1 finds nothing and waits again.
  ScenarioParams p = exact_scenario("6.12", 1000, 3);
  p.duration = Time::ms(5);
  p.binder_procs = {binder_proc("svc", 2)};
  TaskSpec c = task("C", {ev_binder("svc", Time::ms(1), true), ev_binder("svc", Time::ms(1), true),
                          ev_sleep(Time::s(1))});
  c.cpus = {0};
  c.delay = Time::ms(1);
  p.tasks = {c};
  Watched run(p);
  Kernel& k = run.kernel();
  const SwitchLog& log = run.log;
  Task& t1 = find_task(k, "binder:svc_1");
  Task& t2 = find_task(k, "binder:svc_2");
  CHECK(t2.se.sum_exec_runtime == Time::ms(2).count());
  CHECK(t1.se.sum_exec_runtime == 0);
  CHECK(log.first_run("binder:svc_1", Time::us(1)) == Time::ms(2));  // the woken thread, for nothing
  // Thread 2 runs from 1 ms to 3 ms without sleeping in between.
  std::vector<SwitchRecord> t2_out;
  for (const auto& r : log.log)
    if (r.prev == "binder:svc_2" && r.t > Time::zero()) t2_out.push_back(r);
  REQUIRE(t2_out.size() == 1);
  CHECK(t2_out[0].t == Time::ms(3));
}

TEST_CASE("binder_procs and binder_call load from YAML and bad ones name the key and the choices", "[binder][config]") {
  const std::string procs = "binder_procs:\n  - {name: system_server, threads: 4, nice: 2, min_nice: -2, cpus: [0]}\n";
  const std::string call = "tasks:\n  - name: ui\n    events:\n      - binder_call: {proc: system_server, work: 300us, oneway: true}\n";
  ScenarioParams s = load_scenario_yaml(procs + call, "test.yaml");
  REQUIRE(s.binder_procs.size() == 1);
  const BinderProcParams& b = s.binder_procs[0];
  CHECK(b.name == "system_server");
  CHECK(b.threads == 4);
  CHECK(b.nice == 2);
  CHECK(b.min_nice == -2);
  CHECK(b.cpus == std::vector<int>{0});
  const CallSpec& c = s.tasks[0].phases[0].events[0].call;
  CHECK(c.op == CallSpec::Op::kBinderCall);
  CHECK(c.target == "system_server");
  CHECK(c.cost == Time::us(300));
  CHECK(c.oneway);

  ConfigError unknown = error_of(procs + "tasks:\n  - name: ui\n    events:\n      - binder_call: {proc: systemserver}\n");
  CHECK(unknown.line() == 6);
  CHECK(unknown.key_path() == "tasks[0].events[0].binder_call.proc");
  CHECK_THAT(unknown.message(), Catch::Contains("unknown binder process 'systemserver'"));
  CHECK_THAT(unknown.message(), Catch::Contains("system_server"));
  ConfigError threads = error_of("binder_procs:\n  - {name: s, threads: 0}\n" + call);
  CHECK(threads.key_path() == "binder_procs[0].threads");
  ConfigError clash = error_of("binder_procs:\n  - {name: s, threads: 2}\ntasks:\n  - {name: \"binder:s_2\", events: [{run: 1ms}]}\n");
  CHECK(clash.key_path() == "tasks[0].name");
  CHECK_THAT(clash.message(), Catch::Contains("is a looper thread of binder process 's'"));
  // A kthread_worker's thread is named as the worker: task: metrics could not tell them apart.
  ConfigError kthread =
      error_of("kthread_workers:\n  - {name: kw}\ntasks:\n  - {name: kw, events: [{run: 1ms}]}\n");
  CHECK(kthread.key_path() == "tasks[0].name");
  CHECK(kthread.line() == 4);
  CHECK_THAT(kthread.message(), Catch::Contains("task name 'kw' is the thread of a kthread_worker"));
  ConfigError dup = error_of("binder_procs:\n  - {name: s}\n  - {name: s}\n" + call);
  CHECK_THAT(dup.message(), Catch::Contains("duplicate binder process name 's'"));
}

// The Android Common Kernel's binder_transaction_priority() (`android:
// true`): policy and RT priority pass with the node's flags, and the
// thread's priority is set before its wake-up. One CPU, no overheads; each
// caller calls at its start with 200 us of work; the thread's policy and
// priority are read halfway through the work, and after the reply.
TEST_CASE("binder on the Android common kernel passes RT priority by the node's rules", "[binder]") {
  struct Seen {
    Policy policy;
    int rt_priority, nice;
  };
  auto serve = [](BinderProcParams proc, Policy caller_policy, int caller_prio) {
    ScenarioParams p = exact_scenario("6.12", 1000);
    p.duration = Time::ms(5);
    proc.android = true;
    p.binder_procs = {proc};
    TaskSpec c = task("C", {ev_binder("svc", Time::us(200)), ev_sleep(Time::s(1))}, caller_policy, caller_prio);
    c.delay = Time::ms(1);
    p.tasks = {c};
    System sys(p, 1);
    Kernel& k = sys.kernel();
    Task& thread = find_task(k, "binder:svc_1");
    k.run_until(Time::us(1100));
    Seen during{thread.policy, thread.rt_priority, thread.nice()};
    k.run_until(Time::us(1500));
    Seen after{thread.policy, thread.rt_priority, thread.nice()};
    return std::make_pair(during, after);
  };
  auto is = [](const Seen& s, Policy policy, int rt_priority, int nice) {
    return s.policy == policy && s.rt_priority == rt_priority && s.nice == nice;
  };
  SECTION("an RT caller's policy passes only with FLAT_BINDER_FLAG_INHERIT_RT") {
    BinderProcParams b = binder_proc("svc", 1);
    auto [plain, plain_after] = serve(b, Policy::kFifo, 10);
    CHECK(is(plain, Policy::kNormal, 0, 0));  // demoted to nice 0
    b.inherit_rt = true;
    auto [rt, rt_after] = serve(b, Policy::kFifo, 10);
    CHECK(is(rt, Policy::kFifo, 10, 0));
    CHECK(is(rt_after, Policy::kNormal, 0, 0));  // the reply restores the saved priority
  }
  SECTION("an RT node minimum raises a fair caller's thread") {
    BinderProcParams b = binder_proc("svc", 1);
    b.min_policy = Policy::kFifo;
    b.min_rt_priority = 5;  // prio 99 - 5 = 94
    CHECK(is(serve(b, Policy::kNormal, -10).first, Policy::kFifo, 5, 0));  // 94 < 110
    CHECK(is(serve(b, Policy::kFifo, 3).first, Policy::kFifo, 5, 0));      // 94 < 96
    // A FIFO 10 caller (prio 89) is demoted to nice 0 (prio 120) without
    // INHERIT_RT and compared as that with the node: 94 < 120, so its
    // thread runs at the node's FIFO 5 (ACK android16-6.12).
    CHECK(is(serve(b, Policy::kFifo, 10).first, Policy::kFifo, 5, 0));
    // With INHERIT_RT it keeps FIFO 10 (89 < 94: above the minimum).
    b.inherit_rt = true;
    CHECK(is(serve(b, Policy::kFifo, 10).first, Policy::kFifo, 10, 0));
  }
  SECTION("fair callers as in mainline: the caller's nice within the node's minimum") {
    BinderProcParams b = binder_proc("svc", 1, 5, 0);
    auto [high, high_after] = serve(b, Policy::kNormal, -10);
    CHECK(is(high, Policy::kNormal, 0, -10));
    CHECK(is(high_after, Policy::kNormal, 0, 5));  // waiting for work at the process's nice
    CHECK(is(serve(b, Policy::kNormal, 10).first, Policy::kNormal, 0, 0));
  }
}

// The reply's ioctl returns to user space before the looper reads more
// work, so a task the reply woke, or the restore left above the thread,
// runs before the thread takes a queued transaction (whose priority it
// gets only then). One CPU, ACK with INHERIT_RT, one svc thread: FIFO 10
// C1 calls at 1 ms (100 us of work), then runs 200 us; FIFO 20 C2 calls at
// 1.05 ms, preempting the thread (FIFO 10, C1's), and its transaction
// waits on the process. At 1.1 ms the reply wakes C1 and the thread
// drops to nice 0 below it: C1 runs its 200 us first, and only at 1.3 ms
// does the thread take C2's transaction, at FIFO 20, replying at 1.4 ms.
// (Taking the work before returning to user space, it would have run
// C2's at FIFO 20 from 1.1 ms and C1 would have waited to 1.2 ms.)
TEST_CASE("a binder thread returns to user space after a reply before it takes queued work", "[binder]") {
  ScenarioParams p = exact_scenario("6.12", 1000);
  p.duration = Time::ms(3);
  BinderProcParams svc = binder_proc("svc", 1);
  svc.android = true;
  svc.inherit_rt = true;
  p.binder_procs = {svc};
  TaskSpec c1 =
      task("C1", {ev_binder("svc", Time::us(100)), ev_run(Time::us(200)), ev_sleep(Time::s(1))}, Policy::kFifo, 10);
  c1.delay = Time::ms(1);
  TaskSpec c2 = task("C2", {ev_binder("svc", Time::us(100)), ev_sleep(Time::s(1))}, Policy::kFifo, 20);
  c2.delay = Time::us(1050);
  p.tasks = {c1, c2};
  System sys(p, 1);
  NiceLog log;
  sys.add_observer(&log);
  sys.run();
  std::vector<std::pair<int64_t, std::string>> from_1ms;
  for (const auto& s : log.seen)
    if (s.first >= 1'000'000) from_1ms.push_back(s);
  const std::vector<std::pair<int64_t, std::string>> expected = {
      {1'000'000, "C1@0"}, {1'000'000, "binder:svc_1@0"}, {1'050'000, "C2@0"}, {1'050'000, "binder:svc_1@0"},
      {1'100'000, "C1@0"}, {1'300'000, "binder:svc_1@0"}, {1'400'000, "C2@0"}, {1'400'000, "binder:svc_1@0"}};
  CHECK(from_1ms == expected);
}

namespace {
// One CPU, ACK, "svc" with one thread and a SCHED_FIFO 10 node minimum; C
// (FIFO 20) runs `c_events` from 1 ms, M (FIFO 5) runs 2 ms from 1.5 ms.
// Returns who was switched in from 1 ms to 6 ms.
std::vector<std::pair<int64_t, std::string>> fifo10_node_runs(PreemptModel preempt,
                                                              std::vector<EventSpec> c_events) {
  ScenarioParams p = exact_scenario("6.12", 1000);
  p.kernel.preempt = preempt;
  p.duration = Time::ms(6);
  BinderProcParams svc = binder_proc("svc", 1);
  svc.android = true;
  svc.min_policy = Policy::kFifo;
  svc.min_rt_priority = 10;
  p.binder_procs = {svc};
  TaskSpec c = task("C", std::move(c_events), Policy::kFifo, 20);
  c.delay = Time::ms(1);
  TaskSpec m = task("M", {ev_run(Time::ms(2)), ev_sleep(Time::s(1))}, Policy::kFifo, 5);
  m.delay = Time::us(1500);
  p.tasks = {c, m};
  SwitchLog log = run_logging_switches(p);
  std::vector<std::pair<int64_t, std::string>> v;
  for (const auto& r : log.runs_until(Time::ms(6)))
    if (r.first >= 1'000'000) v.push_back(r);
  return v;
}
}  // namespace

// One CPU, ACK, a node whose minimum is SCHED_FIFO 10 (a one-way call
// runs at it). C (FIFO 20) makes two one-way calls of 1 ms at 1 ms and
// sleeps: the first goes to the waiting thread, the second waits on
// node->async_todo. M (FIFO 5) wakes at 1.5 ms behind the thread. At 2 ms
// the thread frees the first buffer (the second moves to proc->todo) and
// binder_thread_read() restores the process default (SCHED_NORMAL) before
// it looks at proc->todo. Under preempt=full the restore's unlock is a
// preemption point: M runs 2 -> 4 ms, then the thread takes the second
// call (FIFO 10 again) 4 -> 5 ms. Under preempt=none the thread goes on in
// the kernel, takes the second call at FIFO 10 and returns to user space
// still above M: the second call runs 2 -> 3 ms, M 3 -> 5 ms.
TEST_CASE("a preemptible kernel switches at a binder thread's restore before it takes queued one-way work",
          "[binder]") {
  const bool full = GENERATE(true, false);
  const auto from_1ms =
      fifo10_node_runs(full ? PreemptModel::kFull : PreemptModel::kNone,
                       {ev_binder("svc", Time::ms(1), true), ev_binder("svc", Time::ms(1), true), ev_sleep(Time::s(1))});
  const std::vector<std::pair<int64_t, std::string>> expected =
      full ? std::vector<std::pair<int64_t, std::string>>{{1'000'000, "C"},
                                                          {1'000'000, "binder:svc_1"},
                                                          {2'000'000, "M"},
                                                          {4'000'000, "binder:svc_1"},
                                                          {5'000'000, "idle"}}
           : std::vector<std::pair<int64_t, std::string>>{
                 {1'000'000, "C"}, {1'000'000, "binder:svc_1"}, {3'000'000, "M"}, {5'000'000, "idle"}};
  CHECK(from_1ms == expected);
}

// The same set-up with C's second one-way call at 2.5 ms, after the
// thread's restore: under preempt=full the thread is preempted at the
// restore (2 ms) before it joins proc->waiting_threads, so the call finds
// no waiting thread and goes on proc->todo; M runs 2 -> 4 ms (C's call at
// 2.5 costs no time) and the thread then takes the call, 4 -> 5 ms.
// Without the preemption point the thread would have been waiting and
// been handed the call at FIFO 10, preempting M at 2.5 ms.
TEST_CASE("a binder thread preempted at its restore is not a waiting thread", "[binder]") {
  const auto from_1ms = fifo10_node_runs(PreemptModel::kFull, {ev_binder("svc", Time::ms(1), true), ev_sleep(Time::us(1500)),
                                                               ev_binder("svc", Time::ms(1), true), ev_sleep(Time::s(1))});
  const std::vector<std::pair<int64_t, std::string>> expected = {
      {1'000'000, "C"}, {1'000'000, "binder:svc_1"}, {2'000'000, "M"}, {2'500'000, "C"},
      {2'500'000, "M"}, {4'000'000, "binder:svc_1"}, {5'000'000, "idle"}};
  CHECK(from_1ms == expected);
}

TEST_CASE("on the Android common kernel a binder thread wakes up at the caller's RT priority", "[binder]") {
  // Two CPUs: the thread is pinned to CPU 1, where a fair hog runs; a FIFO
  // caller on CPU 0 calls at 1 ms. The ACK sets the thread's priority
  // before waking it, so it wakes as SCHED_FIFO and preempts the hog at
  // once (wakeup_preempt(): a higher class). Mainline sets only a nice, in
  // the thread once it runs: it wakes as a fair task.
  struct WakePolicy : SchedObserver {
    Policy policy = Policy::kIdle;
    void on_wakeup(Time t, const Task& p, int) override {
      if (p.comm == "binder:svc_1" && t > Time::zero()) policy = p.policy;
    }
  };
  auto run = [](bool android) {
    ScenarioParams p = exact_scenario("6.12", 1000, 2);
    p.duration = Time::ms(10);
    BinderProcParams b = binder_proc("svc", 1);
    b.cpus = {1};
    b.android = android;
    b.inherit_rt = android;
    p.binder_procs = {b};
    TaskSpec c = task("C", {ev_binder("svc", Time::us(200)), ev_sleep(Time::s(1))}, Policy::kFifo, 10);
    c.cpus = {0};
    c.delay = Time::ms(1);
    TaskSpec h = hog("H");
    h.cpus = {1};
    h.delay = Time::us(100);  // the thread goes to wait for work first
    p.tasks = {c, h};
    System sys(p, 1);
    SwitchLog log;
    WakePolicy wake;
    sys.add_observer(&log);
    sys.add_observer(&wake);
    sys.run();
    return std::make_pair(wake.policy, log.first_run("binder:svc_1", Time::us(1)));
  };
  const auto ack = run(true);
  CHECK(ack.first == Policy::kFifo);
  CHECK(ack.second == Time::ms(1));
  CHECK(run(false).first == Policy::kNormal);
}

TEST_CASE("the Android binder node flags load from YAML and need android: true", "[binder][config]") {
  const std::string call = "tasks:\n  - name: ui\n    events:\n      - binder_call: {proc: audio, work: 100us}\n";
  ScenarioParams s = load_scenario_yaml(
      "binder_procs:\n  - {name: audio, android: true, inherit_rt: true, min_policy: SCHED_FIFO, min_rt_priority: 3}\n" +
          call,
      "test.yaml");
  const BinderProcParams& b = s.binder_procs.at(0);
  CHECK(b.android);
  CHECK(b.inherit_rt);
  CHECK(b.min_policy == Policy::kFifo);
  CHECK(b.min_rt_priority == 3);
  ConfigError mainline = error_of("binder_procs:\n  - {name: audio, inherit_rt: true}\n" + call);
  CHECK(mainline.key_path() == "binder_procs[0].inherit_rt");
  CHECK_THAT(mainline.message(), Catch::Contains("android: true"));
  ConfigError rt_min = error_of("binder_procs:\n  - {name: audio, min_policy: SCHED_FIFO, min_rt_priority: 1}\n" + call);
  CHECK(rt_min.key_path() == "binder_procs[0].min_policy");
  ConfigError batch = error_of("binder_procs:\n  - {name: audio, min_policy: SCHED_BATCH}\n" + call);
  CHECK(batch.key_path() == "binder_procs[0].min_policy");
  // Mainline's own values may be spelled out (an overlay switching back).
  const ScenarioParams back = load_scenario_yaml(
      "binder_procs:\n  - {name: audio, android: false, inherit_rt: false, min_policy: SCHED_OTHER}\n" + call, "t.yaml");
  CHECK_FALSE(back.binder_procs.at(0).android);
  ConfigError no_prio = error_of("binder_procs:\n  - {name: audio, android: true, min_policy: SCHED_RR}\n" + call);
  CHECK_THAT(no_prio.message(), Catch::Contains("min_rt_priority: 1..99"));
  ConfigError idle = error_of("binder_procs:\n  - {name: audio, android: true, min_policy: SCHED_IDLE}\n" + call);
  CHECK(idle.key_path() == "binder_procs[0].min_policy");
  CHECK_THAT(idle.message(), Catch::Contains("SCHED_FIFO"));
  ConfigError fair_prio = error_of("binder_procs:\n  - {name: audio, android: true, min_rt_priority: 2}\n" + call);
  CHECK(fair_prio.key_path() == "binder_procs[0].min_rt_priority");
}

// Nested transactions: system_server's thread calls a HAL while serving.
namespace {
EventSpec ev_binder_nested(const std::string& proc, Time work, const std::string& nested_proc, Time nested_work,
                           Time work_after, bool nested_oneway = false) {
  EventSpec e = ev_binder(proc, work);
  auto nested = std::make_shared<CallSpec>();
  nested->op = CallSpec::Op::kBinderCall;
  nested->target = nested_proc;
  nested->cost = nested_work;
  nested->oneway = nested_oneway;
  e.call.nested = nested;
  e.call.cost_after = work_after;
  return e;
}

// One CPU, no overheads: C (nice -10) calls svc at 1 ms with 200 us of
// work, a nested call to hal (300 us) and 100 us after it, then runs
// `then_run` and sleeps.
ScenarioParams chain_scenario(bool nested_oneway, Time then_run) {
  ScenarioParams p = exact_scenario("6.12", 1000);
  p.duration = Time::ms(5);
  p.binder_procs = {binder_proc("svc", 1), binder_proc("hal", 1)};
  TaskSpec c = task("C", {ev_binder_nested("svc", Time::us(200), "hal", Time::us(300), Time::us(100), nested_oneway),
                          ev_run(then_run), ev_sleep(Time::s(1))},
                    Policy::kNormal, -10);
  c.delay = Time::ms(1);
  p.tasks = {c};
  return p;
}
}  // namespace

TEST_CASE("a nested binder call runs in the HAL at the priority passed down the chain", "[binder]") {
  // One CPU. C (nice -10) calls svc at 1 ms: svc's thread takes nice -10
  // (mainline: in the thread, once it runs), runs 200 us, calls the HAL
  // (it is now the caller, at nice -10) and sleeps; the HAL's thread takes
  // nice -10 too, runs 300 us and replies at 1.5 ms; svc's thread runs its
  // 100 us after the call and replies at 1.6 ms; C runs on. Each thread is
  // back at its process's nice after.
  System sys(chain_scenario(false, Time::us(100)), 1);
  SwitchLog log;
  sys.add_observer(&log);
  Kernel& k = sys.kernel();
  Task& svc = find_task(k, "binder:svc_1");
  Task& hal = find_task(k, "binder:hal_1");
  k.run_until(Time::us(1100));
  CHECK(svc.nice() == -10);
  k.run_until(Time::us(1350));
  CHECK(hal.nice() == -10);
  CHECK(svc.state == TaskState::kInterruptible);  // waiting for the HAL's reply
  k.run_until(Time::us(1550));
  CHECK(svc.nice() == -10);  // after the nested reply, still the caller's
  k.run_until(Time::ms(5));
  const std::vector<std::pair<int64_t, std::string>> expected = {
      {0, "binder:svc_1"},       {0, "binder:hal_1"},       {0, "idle"},        {1000000, "C"},
      {1000000, "binder:svc_1"}, {1200000, "binder:hal_1"}, {1500000, "binder:svc_1"},
      {1600000, "C"},            {1700000, "idle"}};
  CHECK(log.runs_until(Time::ms(5)) == expected);
  CHECK(svc.nice() == 0);
  CHECK(hal.nice() == 0);
}

TEST_CASE("on the Android common kernel RT priority passes down a nested call with INHERIT_RT", "[binder]") {
  // A FIFO 10 caller; svc has INHERIT_RT, so its thread runs FIFO 10 and
  // calls the HAL as a FIFO 10 task: with INHERIT_RT on the HAL's node
  // its thread runs FIFO 10 too, without it nice 0. svc's thread keeps
  // FIFO 10 for its 100 us after the HAL's reply (1.5-1.6 ms); both are
  // back at nice 0 once idle.
  struct Seen {
    std::pair<Policy, int> hal, svc_after;
    bool both_normal_at_end;
  };
  auto hal_during = [](bool hal_inherit_rt) {
    ScenarioParams p = exact_scenario("6.12", 1000);
    p.duration = Time::ms(5);
    BinderProcParams svc = binder_proc("svc", 1), hal = binder_proc("hal", 1);
    svc.android = hal.android = true;
    svc.inherit_rt = true;
    hal.inherit_rt = hal_inherit_rt;
    p.binder_procs = {svc, hal};
    TaskSpec c = task("C", {ev_binder_nested("svc", Time::us(200), "hal", Time::us(300), Time::us(100)),
                            ev_sleep(Time::s(1))},
                      Policy::kFifo, 10);
    c.delay = Time::ms(1);
    p.tasks = {c};
    System sys(p, 1);
    Kernel& k = sys.kernel();
    const Task& hal_thread = find_task(k, "binder:hal_1");
    const Task& svc_thread = find_task(k, "binder:svc_1");
    Seen seen;
    k.run_until(Time::us(1350));  // halfway through the HAL's 300 us
    seen.hal = {hal_thread.policy, hal_thread.rt_priority};
    k.run_until(Time::us(1550));  // svc's work after the nested reply
    seen.svc_after = {svc_thread.policy, svc_thread.rt_priority};
    k.run_until(Time::ms(3));
    seen.both_normal_at_end = hal_thread.policy == Policy::kNormal && svc_thread.policy == Policy::kNormal &&
                              hal_thread.nice() == 0 && svc_thread.nice() == 0;
    return seen;
  };
  const Seen rt = hal_during(true);
  CHECK(rt.hal == std::make_pair(Policy::kFifo, 10));
  CHECK(rt.svc_after == std::make_pair(Policy::kFifo, 10));
  CHECK(rt.both_normal_at_end);
  const Seen demoted = hal_during(false);
  CHECK(demoted.hal == std::make_pair(Policy::kNormal, 0));
  CHECK(demoted.svc_after == std::make_pair(Policy::kFifo, 10));
}

TEST_CASE("a one-way nested binder call does not hold up the reply", "[binder]") {
  // One CPU. svc's thread (nice -10, from C) sends the HAL a one-way call
  // after 200 us and replies after its 100 us more, at 1.3 ms; the HAL's
  // thread, woken at nice 0 (one-way takes the node's minimum), runs its
  // 300 us after C's 1 ms: C (nice -10) wakes with the earlier deadline,
  // and its 0.75 ms slice is not used up at the 2 ms tick. svc's thread,
  // preempted by C on its way back to user space after the reply, is
  // picked first at 2.3 ms and at once blocks for more work.
  System sys(chain_scenario(true, Time::ms(1)), 1);
  NiceLog log;
  sys.add_observer(&log);
  sys.kernel().run_until(Time::ms(5));
  REQUIRE(log.seen.size() >= 7);
  CHECK(log.seen[4] == std::make_pair(int64_t{1300000}, std::string("C@-10")));
  CHECK(log.seen[5] == std::make_pair(int64_t{2300000}, std::string("binder:svc_1@0")));
  CHECK(log.seen[6] == std::make_pair(int64_t{2300000}, std::string("binder:hal_1@0")));
}

TEST_CASE("nested binder calls load from YAML and a call back into the chain is refused", "[binder][config]") {
  const std::string procs = "binder_procs:\n  - {name: system_server}\n  - {name: hal}\n";
  ScenarioParams s = load_scenario_yaml(
      procs + "tasks:\n  - name: ui\n    events:\n      - binder_call: {proc: system_server, work: 300us, "
              "then: {proc: hal, work: 100us, oneway: true}, work_after: 50us}\n",
      "test.yaml");
  const CallSpec& c = s.tasks[0].phases[0].events[0].call;
  REQUIRE(c.nested);
  CHECK(c.nested->target == "hal");
  CHECK(c.nested->cost == Time::us(100));
  CHECK(c.nested->oneway);
  CHECK(c.cost_after == Time::us(50));

  ConfigError back = error_of(
      procs + "tasks:\n  - name: ui\n    events:\n      - binder_call: {proc: system_server, "
              "then: {proc: hal, then: {proc: system_server}}}\n");
  CHECK(back.key_path() == "tasks[0].events[0].binder_call.then.then");  // the offending call itself
  CHECK_THAT(back.message(), Catch::Contains("back into 'system_server'"));
  ConfigError deep = error_of(
      "binder_procs:\n  - {name: ss}\n  - {name: hal}\n  - {name: hal2}\ntasks:\n  - name: ui\n    events:\n"
      "      - binder_call:\n          proc: ss\n          then:\n            proc: hal\n            then:\n"
      "              proc: hal2\n              then:\n                proc: hal\n");
  CHECK(deep.key_path() == "tasks[0].events[0].binder_call.then.then.then");
  CHECK(deep.line() == 15);
  CHECK_THAT(deep.message(), Catch::Contains("back into 'hal'"));
  // A one-way call back is legal: it goes to the process's queue.
  const ScenarioParams oneway_back = load_scenario_yaml(
      procs + "tasks:\n  - name: ui\n    events:\n      - binder_call: {proc: system_server, "
              "then: {proc: hal, then: {proc: system_server, oneway: true}}}\n",
      "test.yaml");
  CHECK(oneway_back.tasks[0].phases[0].events[0].call.nested->nested->oneway);
  ConfigError unknown =
      error_of(procs + "tasks:\n  - name: ui\n    events:\n      - binder_call: {proc: hal, then: {proc: camera}}\n");
  CHECK(unknown.key_path() == "tasks[0].events[0].binder_call.then.proc");
  CHECK_THAT(unknown.message(), Catch::Contains("unknown binder process 'camera'"));
  ConfigError after =
      error_of(procs + "tasks:\n  - name: ui\n    events:\n      - binder_call: {proc: hal, work_after: 1ms}\n");
  CHECK_THAT(after.message(), Catch::Contains("work_after needs a nested call"));
}

TEST_CASE("a call that finds the pool's thread waiting on a nested reply waits on the process", "[binder]") {
  // svc has one thread, pinned to CPU 0 with C1 and the HAL. C1 calls at
  // 1 ms (200 us, the HAL's 300 us, 100 us after); C2, on CPU 1, calls at
  // 1.3 ms while svc's thread sleeps on the HAL's reply: the thread is not
  // waiting for work, so the call goes on proc->todo (binder_proc_
  // transaction() finds no waiting thread), and the thread takes it after
  // replying to C1 at 1.6 ms (binder_thread_read() reads proc->todo).
  ScenarioParams p = exact_scenario("6.12", 1000, 2);
  p.duration = Time::ms(5);
  BinderProcParams svc = binder_proc("svc", 1), hal = binder_proc("hal", 1);
  svc.cpus = hal.cpus = {0};
  p.binder_procs = {svc, hal};
  TaskSpec c1 = task("C1", {ev_binder_nested("svc", Time::us(200), "hal", Time::us(300), Time::us(100)),
                            ev_sleep(Time::s(1))});
  c1.delay = Time::ms(1);
  c1.cpus = {0};
  TaskSpec c2 = task("C2", {ev_binder("svc", Time::us(100)), ev_sleep(Time::s(1))});
  c2.delay = Time::us(1300);
  c2.cpus = {1};
  p.tasks = {c1, c2};
  System sys(p, 1);
  SwitchLog log;
  sys.add_observer(&log);
  sys.run();
  for (const auto& r : log.log) UNSCOPED_INFO(r.t.count() << " cpu" << r.cpu << " " << r.next);
  CHECK(log.first_run("binder:svc_1", Time::us(1201)) == Time::us(1500));  // the nested reply
  CHECK(log.first_run("C2", Time::us(1301)) == Time::us(1700));            // its reply after its 100 us
}
