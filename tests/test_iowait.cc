// I/O waits in the kernel model: a workload's `iowait` event sleeps in
// io_schedule() (6.12 kernel/sched/core.c): D state with p->in_iowait, the
// CPU's rq->nr_iowait (__block_task() in sched.h, try_to_wake_up()), the
// SCHED_CPUFREQ_IOWAIT request of enqueue_task_fair() (fair.c) and menu's
// nr_iowait_cpu() (drivers/cpuidle/governors/menu.c).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "models/config/config.h"
#include "models/kernel/cpufreq/governor.h"
#include "models/kernel/cpuidle/governor.h"
#include "sched_test_util.h"

using namespace schedlab;
using namespace schedlab::testing;

namespace {

EventSpec ev_iowait(Time t) {
  EventSpec e;
  e.kind = EventSpec::Kind::kIowait;
  e.duration = t;
  return e;
}

// One CPU of capacity 1024 with two OPPs (500 and 1000 MHz) under
// schedutil (rate limit 500 us); `reader` runs 50 us of work then waits
// 300 us, either for I/O or in a plain sleep. Its utilization alone (about
// 50 / 400 of the CPU at 500 MHz, x 1.25) asks for under 500 MHz.
ScenarioParams reader_scenario(bool iowait) {
  ScenarioParams p = exact_scenario("6.12", 250, 1);
  ClusterParams c = cluster_1024("c", 1, {{500000, 700000, 0}, {1000000, 900000, 0}});
  c.cpufreq_governor = "schedutil";
  c.rate_limit = Time::us(500);
  p.platform.clusters = {c};
  p.duration = Time::ms(300);
  p.warmup = Time::ms(100);  // past the new task's initial utilization (half the CPU)
  p.tasks = {task("reader", {ev_run(Time::us(50)), iowait ? ev_iowait(Time::us(300)) : ev_sleep(Time::us(300))})};
  return p;
}

// The CPU's rq->nr_iowait at each of reader's wake-ups (after the
// enqueue) and each time it has just blocked.
struct IowaitProbe : SchedObserver {
  Kernel* k = nullptr;
  std::vector<int> nr_iowait_at_wakeup;
  std::vector<int> nr_iowait_while_asleep;
  void on_wakeup(Time, const Task& p, int cpu) override {
    if (p.comm == "reader") nr_iowait_at_wakeup.push_back(k->rq(cpu).nr_iowait);
  }
  void on_switch(Time, int cpu, const Task& prev, TaskState, const Task&) override {
    if (prev.comm == "reader" && prev.state != TaskState::kRunning) nr_iowait_while_asleep.push_back(k->rq(cpu).nr_iowait);
  }
};

// One 1 GHz CPU of capacity 1024 with cpuidle under `governor`: WFI and a
// deep state (entry 50 us, exit 200 us, target residency 1 ms); no fair
// server (its hrtimer would be a timer the governor sees).
ScenarioParams one_idle_cpu(const std::string& governor) {
  ScenarioParams p = exact_scenario("6.12", 250, 1);
  p.platform.clusters = {cluster_1024_deep_idle("c", 1)};
  p.kernel.cpuidle_governor = governor;
  p.kernel.fair_server = false;
  return p;
}

}  // namespace

TEST_CASE("an I/O wait counts in its CPU's nr_iowait until the wake-up", "[iowait]") {
  for (const bool iowait : {true, false}) {
    CAPTURE(iowait);
    const ScenarioParams p = reader_scenario(iowait);
    System sys(p, 1);
    IowaitProbe probe;
    probe.k = &sys.kernel();
    sys.add_observer(&probe);
    sys.run();
    REQUIRE(probe.nr_iowait_at_wakeup.size() > 100);
    REQUIRE(probe.nr_iowait_while_asleep.size() > 100);
    for (int n : probe.nr_iowait_while_asleep) CHECK(n == (iowait ? 1 : 0));
    for (int n : probe.nr_iowait_at_wakeup) CHECK(n == 0);
  }
}

TEST_CASE("schedutil's iowait boost raises the frequency of a task whose utilization would not", "[iowait][cpufreq]") {
  // Each wake-up from the I/O wait sends SCHED_CPUFREQ_IOWAIT: the boost
  // doubles from 128 while updates without a request (PELT decay, at most
  // one a period) halve it less often, until 1024 asks for 1000 MHz. The
  // plain sleeper's CPU never leaves 500 MHz. The I/O wait counts as
  // blocked (D), the sleep as sleeping (S); the boosted CPU spends more
  // energy per busy second.
  const ScenarioParams with_io = reader_scenario(true);
  const RunResult io = run_result(with_io);
  const RunResult plain = run_result(reader_scenario(false));
  CHECK(busy_at(plain, 0, 1) == Time::zero());
  CHECK(busy_at(io, 0, 1) > Time::zero());
  const TaskMetrics& tio = metrics_of(io, "reader");
  const TaskMetrics& tplain = metrics_of(plain, "reader");
  CHECK(tio.sleep_time == Time::zero());
  CHECK(tio.blocked_time > Time::ms(100));
  CHECK(tplain.blocked_time == Time::zero());
  CHECK(tplain.sleep_time > Time::ms(100));
  CHECK(io.total_energy_mj() / io.cpus[0].busy.to_s() > plain.total_energy_mj() / plain.cpus[0].busy.to_s());
  check_conservation(io, &with_io.platform);
}

// Pixel's vendor hook rvh_set_iowait_pixel_mod() (with sched_pixel) passes
// the iowait flag only for a task with a uclamp_min boost: the same reader
// stays at 500 MHz unboosted (with uclamp not built in, or built in and in
// use but its uclamp_min 0), and with uclamp_min 1 (too little to move the
// frequency itself: 1.25 x 1) it gets the boost and reaches 1000 MHz.
TEST_CASE("sched_pixel boosts I/O waiters only when their uclamp_min is set", "[iowait][cpufreq][sched_pixel]") {
  for (const int uclamp_min : {-1, 0, 1}) {  // -1: no uclamp
    CAPTURE(uclamp_min);
    const bool boosted = uclamp_min > 0;
    ScenarioParams p = reader_scenario(true);
    ClusterParams& c = p.platform.clusters[0];
    c.cpufreq_governor = "sched_pixel";
    c.rate_limit.reset();
    c.up_rate_limit = Time::us(500);
    c.down_rate_limit = Time::us(500);
    if (uclamp_min >= 0) {
      p.kernel.uclamp = true;
      p.kernel.uclamp_min_rt_default = 0;  // a sysctl write: the static key is on
      p.tasks[0].uclamp_min = static_cast<uint32_t>(uclamp_min);  // sched_setattr(): on in any case
    }
    const RunResult r = run_result(p);
    if (boosted)
      CHECK(busy_at(r, 0, 1) > Time::zero());
    else
      CHECK(busy_at(r, 0, 1) == Time::zero());
    check_conservation(r, &p.platform);
  }
}

TEST_CASE("menu of 6.12 counts a CPU's I/O waiters, 6.18's does not", "[iowait][cpuidle]") {
  // which_bucket(): with nr_iowait_cpu() > 0, 6.12's menu uses the upper
  // half of its 12 correction buckets (BUCKETS/2 = 6 on); 6.18's has no
  // iowait input. reader waits 10 ms for I/O (no timer on its CPU meanwhile
  // but the tick) or sleeps 10 ms.
  const std::string governor = GENERATE("menu", "menu_v6.18");
  const bool iowait = GENERATE(true, false);
  CAPTURE(governor, iowait);
  ScenarioParams p = one_idle_cpu(governor);
  p.duration = Time::ms(15);
  p.tasks = {task("reader", {ev_run(Time::us(100)), iowait ? ev_iowait(Time::ms(10)) : ev_sleep(Time::ms(10))})};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(1));
  REQUIRE(k.rq(0).curr->is_idle_task);
  CHECK(k.rq(0).nr_iowait == (iowait ? 1 : 0));
  const auto& menu = dynamic_cast<const cpuidle::MenuGovernor&>(*k.rq(0).cpuidle.gov);
  CHECK((menu.bucket() >= 6) == (iowait && governor == "menu"));
}

TEST_CASE("the I/O completion wakes an idle CPU like any interrupt: after the exit latency", "[iowait][cpuidle]") {
  // The completion is no timer, so cpuidle cannot see it coming: with
  // nothing else due on the CPU, menu (6.18) picks the deep state (entry
  // 50 us, exit 200 us). reader blocks at 100 us; the completion at 10.1 ms
  // wakes the CPU, whose interrupt handler runs once it is out, at
  // 10.3 ms, and wakes reader there.
  ScenarioParams p = one_idle_cpu("menu_v6.18");
  p.duration = Time::ms(12);
  p.tasks = {task("reader", {ev_run(Time::us(100)), ev_iowait(Time::ms(10)), ev_run(Time::ms(50))})};
  System sys(p, 1);
  SwitchLog log;
  sys.add_observer(&log);
  sys.run();
  CHECK(log.first_run("reader", Time::us(200)) == Time::us(10300));
}

TEST_CASE("an iowait event is read from YAML and a bad one names its key", "[iowait][config]") {
  const ScenarioParams p =
      load_scenario_yaml("tasks:\n  - name: r\n    events: [{run: 1ms}, {iowait: 2ms}]\n", "io.yaml");
  const EventSpec& e = p.tasks[0].phases[0].events[1];
  CHECK(e.kind == EventSpec::Kind::kIowait);
  CHECK(e.duration == Time::ms(2));
  try {
    load_scenario_yaml("tasks:\n  - name: r\n    events: [{run: 1ms}, {iowait: soon}]\n", "io.yaml");
    FAIL("no error");
  } catch (const ConfigError& err) {
    CHECK(err.key_path() == "tasks[0].events[1].iowait");
    CHECK(err.line() == 3);
    CHECK_THAT(err.message(), Catch::Contains("is not a duration"));
  }
}
