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
