// The 6.12 fair server's bandwidth in the CPU's DL running bandwidth
// (kernel/sched/deadline.c, 6.12.19: dl_server_start() ->
// enqueue_dl_entity(ENQUEUE_WAKEUP) -> task_contending() ->
// add_running_bw(); dl_server_stop() -> task_non_contending(), which keeps
// it until the zero-lag time deadline - runtime x period / dl_runtime;
// dl_server_update_idle_time(), which charges idle time to the budget),
// and what schedutil makes of it: effective_cpu_util() floors a CPU's
// performance at irq + cpu_bw_dl(). 50 ms / 1 s is to_ratio() = 52428
// (BW_SHIFT 20), cpu_bw_dl() = 52428 x 1024 >> 20 = 51.
#include <catch2/catch.hpp>

#include "sched_test_util.h"

using namespace schedlab;
using namespace schedlab::testing;

// One CPU, no cpufreq or cpuidle; t runs 1 ms then sleeps 100 ms.
//   0      t enqueued: the server starts, new period (deadline 1 s, 50 ms),
//          its bandwidth is added: cpu_bw_dl = 51.
//   1 ms   t sleeps: the budget lost 1 ms of fair time, 49 ms left; zero-lag
//          time 1000 - 20 x 49 = 20 ms: the bandwidth stays until then.
//   101 ms t wakes on the idle CPU: 100 ms of idle time drain the budget to
//          0 (runtime 0, the deadline still 1 s): bandwidth added again.
//   102 ms t sleeps: its 1 ms of fair time overdrew the empty budget, so a
//          new period began at 102 ms (deadline 1.102 s, 50 ms): the
//          zero-lag time is 1102 - 20 x 50 = 102 ms, now: the bandwidth goes.
TEST_CASE("the fair server's bandwidth stays in cpu_bw_dl until its zero-lag time", "[fair_server][cpufreq]") {
  ScenarioParams p = exact_scenario("6.12", 250);
  p.duration = Time::ms(300);
  p.tasks = {task("t", {ev_run(Time::ms(1)), ev_sleep(Time::ms(100))})};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  const Rq& rq = k.rq(0);
  k.run_until(Time::us(500));
  CHECK(k.cpu_bw_dl(rq) == 51);
  k.run_until(Time::us(19900));
  CHECK(k.cpu_bw_dl(rq) == 51);
  CHECK(rq.fair_server.non_contending);
  k.run_until(Time::us(20100));
  CHECK(k.cpu_bw_dl(rq) == 0);
  CHECK_FALSE(rq.fair_server.non_contending);
  k.run_until(Time::us(101500));
  CHECK(k.cpu_bw_dl(rq) == 51);
  CHECK(rq.fair_server.runtime == 0);
  CHECK(rq.fair_server.deadline == Time::s(1));
  k.run_until(Time::us(102500));
  CHECK(k.cpu_bw_dl(rq) == 0);
  CHECK(rq.fair_server.deadline == Time::ms(1102));

  SECTION("6.6 has no fair server: no DL bandwidth") {
    ScenarioParams q = p;
    q.kernel.version = "6.6";
    System sys2(q, 1);
    sys2.kernel().run_until(Time::us(500));
    CHECK(sys2.kernel().cpu_bw_dl(sys2.kernel().rq(0)) == 0);
  }
}

// gs101's little CPUs (capacity 160, 300 MHz ... 1803 MHz): a task that
// needs almost nothing (50 us of work every ~10 ms, util ~5) would run at
// the lowest OPP; the fair server's 51 floors schedutil at
// 1803000 x 51 / 160 = 574706 kHz, so the lowest OPP at or above is
// 738 MHz. The bandwidth is there whenever t runs (it is added, and
// cpufreq kicked past its rate limit by ignore_dl_rate_limit(), as t is
// enqueued).
TEST_CASE("6.12's fair server floors a little CPU's frequency at 51 of capacity", "[fair_server][cpufreq]") {
  const bool server = GENERATE(true, false);
  ScenarioParams p = gs101_scenario(R"(
duration: 1s
warmup: 200ms
kernel: {version: "6.12", hz: 250}
tasks:
  - {name: t, cpus: [0], events: [{run: 50us}, {sleep: 10ms}]}
)");
  p.kernel.fair_server = server;
  with_fast_switch(p);  // the floor decides the OPP; the slow path would only delay it
  const RunResult r = run_result(p);
  const Time busy = r.cpus[0].busy;
  REQUIRE(busy > Time::zero());
  if (server) {
    CHECK(busy_at(r, 0, 2) == busy);  // 738 MHz
  } else {
    CHECK(busy_at(r, 0, 0) == busy);  // 300 MHz
  }
  check_conservation(r);
}

// ignore_dl_rate_limit() runs in sugov_update_*() before the rate limit
// decides: the kick of a CPU whose cpu_bw_dl() rose above the floor its
// last evaluation saw (sg_cpu->bw_min) re-evaluates the policy at once.
// gs101's little policy (CPUs 0-3, shared), its rate limit raised to 10 ms:
//   0      a is enqueued on CPU 0: the first update after start evaluates
//          (sugov_limits() set limits_changed) and commits a new frequency,
//          so the window runs to 10 ms. CPU 1 has no fair task: bw_min 0.
//   2 ms   b is forked onto CPU 1: its fair server starts, cpu_bw_dl 51 >
//          bw_min 0, so the policy is evaluated inside the window and CPU
//          1's floor becomes 51. (Skipping the kick until 10 ms would leave
//          it at 0.) 6.12 routes the bypass through limits_changed, 6.18
//          through need_freq_update.
TEST_CASE("a rising fair-server bandwidth re-evaluates schedutil inside its rate-limit window",
          "[fair_server][cpufreq]") {
  const std::string version = GENERATE("6.12", "6.18");
  INFO(version);
  ScenarioParams p = gs101_scenario(R"(
duration: 50ms
kernel: {version: ")" + version + R"(", hz: 250}
tasks:
  - {name: a, cpus: [0], events: [{run: 500us}, {sleep: 40ms}]}
  - {name: b, cpus: [1], delay: 2ms, events: [{run: 500us}, {sleep: 40ms}]}
)");
  p.platform.clusters[0].rate_limit = Time::ms(10);
  System sys(p, 1);
  Kernel& k = sys.kernel();
  const SchedutilGovernor& little = *k.freq_domains()[0].sugov;
  const uint32_t cpu1 = k.rq(1).domain_pos;
  k.run_until(Time::us(1900));
  REQUIRE(k.cpu_bw_dl(k.rq(1)) == 0);
  CHECK(little.cpu_bw_min(cpu1) == 0);
  k.run_until(Time::us(2100));
  REQUIRE(k.cpu_bw_dl(k.rq(1)) == 51);
  CHECK(little.cpu_bw_min(cpu1) == 51);
  CHECK(little.cpu_last_update(cpu1) == Time::ms(2));
}

// 6.17+ ("sched/deadline: Less agressive dl_server handling"; 6.18.35
// here) no longer stops the server when the CPU's last fair task leaves.
// One CPU, t runs 1 ms from 0 and sleeps for good; a FIFO task wakes at
// 1.5 s:
//   0      start: period [0, 1 s] (6.18 set it up at boot), 50 ms, the
//          zero-laxity timer at 1000 - 50 = 950 ms; bandwidth 51.
//   1 ms   t sleeps with 49 ms left. 6.12: the server stops, zero-lag time
//          1000 - 20 x 49 = 20 ms. 6.18: it stays started, bandwidth too.
//   950 ms the timer: zero laxity is now 1000 - 49 = 951 ms, re-armed
//          (the kernel's 1 ms dl_server_min_res slack is not modelled).
//   951 ms zero laxity: the server is queued with a new period (deadline
//          1.951 s, 50 ms). The idle CPU does not pick (schedule_idle()
//          with nothing runnable), so it stays queued with its bandwidth.
//   1.5 s  the FIFO task's wake-up takes the pick through the DL class:
//          __pick_task_dl() finds no fair task and stops the server; its
//          zero-lag time (1951 - 20 x 50 = 951 ms) has passed: bandwidth 0.
// `fair_server_lazy_stop: true` gives 6.12 the same.
TEST_CASE("6.18's fair server stays started through idle until a pick finds no fair task", "[fair_server]") {
  struct Case {
    const char* version;
    std::optional<bool> lazy;
    bool stays;
  };
  const Case c = GENERATE(Case{"6.12", std::nullopt, false}, Case{"6.18", std::nullopt, true},
                          Case{"6.12", true, true}, Case{"6.18", false, false});
  CAPTURE(c.version, c.stays);
  ScenarioParams p = exact_scenario(c.version, 250);
  p.duration = Time::s(2);
  p.kernel.fair_server_lazy_stop = c.lazy;
  TaskSpec rt = task("rt", {ev_run(Time::ms(1)), ev_sleep(Time::s(10))}, Policy::kFifo, 50);
  rt.delay = Time::ms(1500);
  p.tasks = {task("t", {ev_run(Time::ms(1)), ev_sleep(Time::s(10))}), rt};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  const Rq& rq = k.rq(0);
  k.run_until(Time::ms(500));
  CHECK(rq.fair_server.active == c.stays);
  CHECK(k.cpu_bw_dl(rq) == (c.stays ? 51u : 0u));
  k.run_until(Time::us(950500));
  CHECK(rq.fair_server.active == c.stays);
  CHECK_FALSE(rq.fair_server.running);
  k.run_until(Time::ms(1400));
  CHECK(rq.fair_server.active == c.stays);
  CHECK(rq.fair_server.running == c.stays);  // queued, nothing to serve
  CHECK(k.cpu_bw_dl(rq) == (c.stays ? 51u : 0u));
  if (c.stays) CHECK(rq.fair_server.deadline == Time::ms(1951));
  k.run_until(Time::us(1500500));
  CHECK_FALSE(rq.fair_server.active);
  CHECK(k.cpu_bw_dl(rq) == 0);
}

// 6.18's update_dl_entity() keeps a deadline that is still ahead when the
// budget left would overflow the bandwidth, and cuts the budget to
// dl_density x laxity >> 20 (update_dl_revised_wakeup()); 6.12.19 starts a
// new period. A FIFO hog holds the CPU from 0 to 980 ms (RT time drains no
// budget); fair t arrives at 970 ms, 30 ms before 6.18's boot-time period
// ends with all 50 ms left: 50/30 > 50/1000 overflows. 6.18: runtime =
// 52428 x 30,000,000 >> 20 = 1,499,977 ns, deadline still 1 s; 6.12: the
// period [970 ms, 1.97 s], 50 ms.
TEST_CASE("6.18 applies the revised wake-up rule to the deferred fair server", "[fair_server]") {
  const std::string version = GENERATE("6.12", "6.18");
  ScenarioParams p = exact_scenario(version, 250);
  p.duration = Time::s(2);
  TaskSpec t = task("t", {ev_run(Time::ms(1)), ev_sleep(Time::s(10))});
  t.delay = Time::ms(970);
  p.tasks = {task("rt", {ev_run(Time::ms(980)), ev_sleep(Time::s(10))}, Policy::kFifo, 50), t};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(975));
  const FairServerState& s = k.rq(0).fair_server;
  REQUIRE(s.active);
  if (version == "6.18") {
    CHECK(s.runtime == 1'499'977);
    CHECK(s.deadline == Time::s(1));
  } else {
    CHECK(s.runtime == Time::ms(50).count());
    CHECK(s.deadline == Time::ms(1970));
  }
}

// A CPU whose fair server is on its DL run-queue is CPUPRI_HIGHER to RT
// placement (inc_dl_deadline() -> cpupri_set()). Two CPUs: a FIFO 90 hog
// pinned to CPU 0; fair t, pinned to CPU 1, runs 1 ms at 0 and sleeps for
// good; FIFO 50 r arrives at 1.2 s on CPU 0, below the hog. 6.12: CPU 1's
// server stopped at 1 ms, find_lowest_rq() finds the idle CPU 1 and r runs
// there at once. 6.18: the server stayed started; at 951 ms its zero-laxity
// timer queued it, and the idle CPU 1 never picks, so it stays queued and
// CPU 1 is above every RT priority: no lowest CPU, r waits behind the hog
// (to the end of the 2 s run). This is 6.18.35's code as read; it is the
// kind of case later dl_server fixes address.
TEST_CASE("RT placement skips a CPU whose fair server is queued (6.18: an idle CPU)", "[fair_server][rt]") {
  const std::string version = GENERATE("6.12", "6.18");
  ScenarioParams p = exact_scenario(version, 250, 2);
  p.duration = Time::s(2);
  TaskSpec r = task("r", {ev_run(Time::ms(1)), ev_sleep(Time::s(10))}, Policy::kFifo, 50);
  r.delay = Time::ms(1200);
  p.tasks = {on_cpus(hog("hog", Policy::kFifo, 90), {0}),
             on_cpus(task("t", {ev_run(Time::ms(1)), ev_sleep(Time::s(10))}), {1}), r};
  System sys(p, 1);
  SwitchLog log;
  sys.add_observer(&log);
  sys.run();
  if (version == "6.12") {
    CHECK(log.first_run("r") == Time::ms(1200));
  } else {
    CHECK(log.first_run("r") == Time::max());
    CHECK(sys.kernel().rq(1).fair_server.running);
  }
}

// A CPU whose fair server is queued is in no RT level's mask, so a push
// never picks it even when its queued RT level equals the lowest one
// found (6.12 cpupri.c). Three CPUs, RT throttling off, the server at
// 5 ms every 100 ms: on CPU 1 a FIFO 5 hog starves fair f, so the
// server's zero-laxity timer queues it at 95 ms and f runs to 100 ms; a
// FIFO 5 hog on CPU 2; FIFO 50 p, allowed everywhere, runs on CPU 0. At
// 97 ms a FIFO 90 task pinned to CPU 0 preempts p, which CPU 0 pushes:
// CPUs 1 and 2 are both at RT level FIFO 5, but CPU 1 is CPUPRI_HIGHER, so
// p goes to CPU 2 and runs at once instead of waiting behind f to 100 ms.
TEST_CASE("a pushed RT task skips a CPU whose fair server is queued", "[fair_server][rt]") {
  ScenarioParams p = exact_scenario("6.12", 250, 3);
  p.duration = Time::ms(110);
  p.kernel.rt_runtime = Time::ns(-1);
  p.kernel.fair_server_runtime = Time::ms(5);
  p.kernel.fair_server_period = Time::ms(100);
  TaskSpec hi = on_cpus(hog("hi", Policy::kFifo, 90), {0});
  hi.delay = Time::ms(97);
  p.tasks = {hog("p", Policy::kFifo, 50), on_cpus(hog("low1", Policy::kFifo, 5), {1}), on_cpus(hog("f"), {1}),
             on_cpus(hog("low2", Policy::kFifo, 5), {2}), hi};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::us(96900));
  REQUIRE(k.rq(1).fair_server.running);
  REQUIRE(k.rq(1).curr == &find_task(k, "f"));
  REQUIRE(k.rq(2).curr == &find_task(k, "low2"));
  REQUIRE(k.rq(0).curr == &find_task(k, "p"));
  k.run_until(Time::us(97100));
  CHECK(k.rq(0).curr == &find_task(k, "hi"));
  CHECK(find_task(k, "p").cpu == 2);
  CHECK(k.rq(2).curr == &find_task(k, "p"));
  CHECK(k.rq(1).curr == &find_task(k, "f"));
}

// 6.12's dequeue_entities() stops the server when the CPU's last fair task
// leaves, DEQUEUE_SAVE included, and the change's enqueue starts it again
// with update_dl_entity()'s CBS check. One CPU: a FIFO hog and a fair hog
// f from 0; the server's period is [0, 1 s], 50 ms, zero laxity at 950 ms.
// At 600 ms f is reniced: stopped, started with 50 ms left for 400 ms
// (50/400 > 50/1000: overflow): a new period [600 ms, 1.6 s], zero laxity
// at 1.55 s, where f first runs. 6.18 does not stop the server at a
// dequeue: f runs at 950 ms as if nothing happened.
TEST_CASE("renicing a starved CPU's only fair task restarts the 6.12 fair server's period", "[fair_server][rt]") {
  const std::string version = GENERATE("6.12", "6.18");
  CAPTURE(version);
  ScenarioParams p = exact_scenario(version, 250);
  p.duration = Time::s(2);
  p.tasks = {hog("rt", Policy::kFifo, 50), hog("f")};
  System sys(p, 1);
  SwitchLog log;
  sys.add_observer(&log);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(600));
  REQUIRE(log.first_run("f", Time::ms(1)) == Time::max());
  k.set_scheduler(find_task(k, "f"), Policy::kNormal, 5, 0);
  sys.run();
  CHECK(log.first_run("f", Time::ms(1)) == (version == "6.12" ? Time::ms(1550) : Time::ms(950)));
}

namespace {
// One CPU on 6.12 at HZ=250: a FIFO 50 hog from 0, fair hog f from `f_delay`.
ScenarioParams fifo_hog_and_late_fair_hog(Time f_delay, Time duration) {
  ScenarioParams p = exact_scenario("6.12", 250);
  p.duration = duration;
  TaskSpec f = hog("f");
  f.delay = f_delay;
  p.tasks = {hog("rt", Policy::kFifo, 50), f};
  return p;
}
}  // namespace

// dl_server_start() asks any non-DL curr to pick again, even when the
// server stays deferred. One CPU: a FIFO hog from 0; fair f arrives at
// 10 ms (between the ticks at 8 and 12 ms, which do not reschedule a FIFO
// task): the server starts (50 ms left for 990 ms overflows: a new period
// [10 ms, 1.01 s]) and the hog is picked again, without a switch. The
// server's zero-laxity timer (960 ms, no fair time got) queues it and
// reschedules again: f runs.
TEST_CASE("the fair server's start makes a running RT task pick again", "[fair_server][rt]") {
  ScenarioParams p = fifo_hog_and_late_fair_hog(Time::ms(10), Time::s(1));
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::us(9900));
  const uint64_t before = k.rq(0).sched_count;
  k.run_until(Time::us(10100));
  CHECK(k.rq(0).sched_count == before + 1);
  CHECK(k.rq(0).curr->comm == "rt");
  k.run_until(Time::ms(959));
  CHECK(k.rq(0).sched_count == before + 1);
  k.run_until(Time::us(960100));
  CHECK(k.rq(0).curr->comm == "f");
}

// replenish_dl_entity() carries an overrun into the next period. One CPU,
// HZ=250: a FIFO hog from 0, fair hog f from 1 ms. The server starts at
// 1 ms (50 ms left for 999 ms overflows): period [1 ms, 1.001 s], zero
// laxity 951 ms, where a new period begins (deadline 1.951 s, 50 ms) and
// the server runs f. The budget is checked at the ticks: 1 ms left at
// 1000 ms, -3 ms at 1004 ms: throttled until 1.951 s, then 47 ms (deadline
// 2.951 s), used up at the tick at 2000 ms (-2 ms). f's CPU time by 2.5 s:
// 53 + 49 = 102 ms (the full budget at the replenishment would give
// 53 + 53 = 106 ms).
TEST_CASE("the fair server pays an overrun from its next period", "[fair_server][rt]") {
  ScenarioParams p = fifo_hog_and_late_fair_hog(Time::ms(1), Time::ms(2500));
  System sys(p, 1);
  SwitchLog log;
  sys.add_observer(&log);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(1010));
  REQUIRE(k.rq(0).fair_server.runtime == -Time::ms(3).count());
  REQUIRE(k.rq(0).fair_server.deadline == Time::ms(1951));
  SECTION("the overrun is carried") {
    k.run_until(Time::ms(2010));
    CHECK(k.rq(0).fair_server.runtime == -Time::ms(2).count());
    CHECK(k.rq(0).fair_server.deadline == Time::ms(2951));
    sys.run();
    CHECK(log.first_run("f", Time::ms(1)) == Time::ms(951));
    CHECK(log.first_run("f", Time::ms(1100)) == Time::ms(1951));
    CHECK(metrics_of(sys.result(), "f").cpu_time == Time::ms(102));
  }
  SECTION("changed while its server waits for the next period, a starved task runs at once") {
    // 6.12's dl_server_stop() keeps dl_defer_running and clears dl_throttled;
    // restarted with no new period (a budget at or below zero never
    // overflows), the server is queued at once, budget or not, and serves its
    // fair task until the next update_curr() throttles it. f is reniced at
    // 1010 ms: f runs at once, to the tick at 1012 ms (-5 ms), throttled
    // until 1.951 s, then 45 ms, used up exactly at the tick at 1996 ms.
    // f's CPU time by 2.5 s: 53 + 2 + 45 = 100 ms.
    k.set_scheduler(find_task(k, "f"), Policy::kNormal, 5, 0);
    k.run_until(Time::ms(1500));
    CHECK(k.rq(0).fair_server.runtime == -Time::ms(5).count());
    sys.run();
    CHECK(log.first_run("f", Time::ms(1005)) == Time::ms(1010));
    CHECK(log.first_run("f", Time::ms(1013)) == Time::ms(1951));
    CHECK(metrics_of(sys.result(), "f").cpu_time == Time::ms(100));
  }
}

// A budget as long as the period: the zero laxity is the period's start,
// the server runs f from 1 ms, and the tick that finds the budget
// overdrawn (104 ms: -3 ms) is past the deadline (101 ms), so
// start_dl_timer() refuses the timer and the budget is replenished at
// once (97 ms, deadline 201 ms), with no reschedule: f runs on. (The old
// rule gave the full 100 ms.)
TEST_CASE("a fair server throttled past its deadline replenishes at once", "[fair_server][rt]") {
  ScenarioParams p = fifo_hog_and_late_fair_hog(Time::ms(1), Time::ms(200));
  p.kernel.fair_server_runtime = Time::ms(100);
  p.kernel.fair_server_period = Time::ms(100);
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(103));
  const uint64_t before = k.rq(0).sched_count;
  k.run_until(Time::ms(110));
  CHECK(k.rq(0).fair_server.runtime == Time::ms(93).count());  // charged at the tick at 108 ms
  CHECK(k.rq(0).fair_server.deadline == Time::ms(201));
  CHECK(k.rq(0).sched_count == before);
  CHECK(k.rq(0).curr->comm == "f");
}

// 6.18's dl_server_timer() reschedules curr even when the server it queues
// has no fair task: a running RT task picks again through the DL class,
// which stops the server at once. One CPU: fair t runs 1 ms at 0 and sleeps
// for good; a FIFO hog from 100 ms. The idle time to 100 ms drains the
// budget to 0, so the zero-laxity timer comes at the deadline, 1 s: the
// server is queued with nothing to serve, the hog picks again, and the
// server stops (its zero-lag time, 2 s - 20 x 50 ms = 1 s, has come: the
// bandwidth leaves too).
TEST_CASE("6.18's server timer with no fair task makes a running RT task's pick stop the server", "[fair_server][rt]") {
  ScenarioParams p = exact_scenario("6.18", 250);
  p.duration = Time::s(2);
  TaskSpec rt = hog("rt", Policy::kFifo, 50);
  rt.delay = Time::ms(100);
  p.tasks = {task("t", {ev_run(Time::ms(1)), ev_sleep(Time::s(10))}), rt};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  const Rq& rq = k.rq(0);
  k.run_until(Time::ms(999));
  REQUIRE(rq.fair_server.active);
  CHECK(rq.fair_server.runtime == 0);
  k.run_until(Time::ms(1001));
  CHECK_FALSE(rq.fair_server.active);
  CHECK_FALSE(rq.fair_server.running);
  CHECK(k.cpu_bw_dl(rq) == 0);
  CHECK(rq.curr->comm == "rt");
}

// A server without runtime is never started (6.12 dl_server_start()
// returns at once): a fair task below a FIFO hog starves.
TEST_CASE("a fair server with no runtime never starts", "[fair_server][rt]") {
  ScenarioParams p = fifo_hog_and_late_fair_hog(Time::ms(1), Time::s(2));
  p.kernel.fair_server_runtime = Time::zero();
  System sys(p, 1);
  CHECK_FALSE(sys.kernel().fair_server_enabled());
  sys.run();
  CHECK(metrics_of(sys.result(), "f").cpu_time == Time::zero());
  CHECK(sys.kernel().cpu_bw_dl(sys.kernel().rq(0)) == 0);
}
