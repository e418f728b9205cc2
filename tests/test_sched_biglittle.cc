// Capacity and frequency invariance, PELT in the run-queues, schedutil, EAS,
// misfit migration and energy accounting on a toy big.LITTLE platform
// (tests/sched_test_util.h: little capacity 256, big 1024).
#include <catch2/catch.hpp>

#include "experiments/lib/report_power.h"
#include "models/config/config.h"
#include "models/kernel/sched/fair_pelt.h"
#include "sched_test_util.h"

using namespace schedlab;
using namespace schedlab::testing;

namespace {
ScenarioParams toy(const std::string& governor = "schedutil") {
  ScenarioParams p = exact_scenario("6.12", 250);
  p.platform = toy_big_little(governor);
  return p;
}

// growing_task() alone on the toy platform for 3 s: one misfit move.
ScenarioParams grower_on_toy() {
  ScenarioParams p = toy();
  p.duration = Time::s(3);
  p.tasks = {growing_task("grower")};
  return p;
}

}  // namespace

// A platform without rate_limit gets the kernel version's
// cpufreq_policy_transition_delay_us() of its transition latency.
TEST_CASE("schedutil's default rate limit follows the kernel version", "[biglittle][cpufreq]") {
  struct Case {
    const char* version;
    Time little, big;
  };
  for (const Case& c : {Case{"6.1", 10_ms, 7_ms}, Case{"6.6", 10_ms, 7_ms}, Case{"6.12", 750_us, 10_us},
                        Case{"6.18", 750_us, 10_us}}) {
    INFO(c.version);
    ScenarioParams p = toy();
    p.kernel.version = c.version;
    p.platform.clusters[0].transition_latency = 500_us;  // x1000 = 500 ms: capped at 10 ms
    p.platform.clusters[1].transition_latency = 7_us;
    p.tasks = {hog("h")};
    System sys(p, 1);
    CHECK(sys.kernel().freq_domains()[0].sugov->rate_limit() == c.little);
    CHECK(sys.kernel().freq_domains()[1].sugov->rate_limit() == c.big);
    p.platform.clusters[1].rate_limit = 2_ms;  // an explicit rate_limit wins on every version
    System explicit_limit(p, 1);
    CHECK(explicit_limit.kernel().freq_domains()[1].sugov->rate_limit() == 2_ms);
  }
}

// post_init_entity_util_avg() at a fork onto a CPU whose CFS util is small
// but whose load is large (a nice -10 task running 1 ms in 10): 6.12 gives
// the new task util x se_weight / (load + 1); 6.1 multiplies by the
// scale_load()ed weight, so the share always exceeds the cap and the task
// starts at half the spare capacity, (capacity - util) / 2.
TEST_CASE("a forked task's initial util: 6.1 and 6.6 start at half the spare capacity", "[pelt]") {
  for (auto [version, half_spare] : {std::pair{"6.1", true}, {"6.6", true}, {"6.12", false}}) {
    INFO(version);
    ScenarioParams p = exact_scenario(version, 250, 1);
    TaskSpec heavy = task("heavy", {ev_run(Time::ms(1)), ev_sleep(Time::ms(9))}, Policy::kNormal, -10);
    TaskSpec child = task("child", {ev_run(Time::ms(1)), ev_sleep(Time::s(10))});
    child.delay = Time::ms(205);  // heavy sleeps from 201 to 210 ms
    p.tasks = {heavy, child};
    System sys(p, 1);
    Kernel& k = sys.kernel();
    k.run_until(Time::ms(205) - Time::ns(1));
    const uint64_t util = k.rq(0).cfs.avg.util_avg, load = k.rq(0).cfs.avg.load_avg;
    REQUIRE(util > 50);
    REQUIRE(load > 5 * util);  // nice -10: weight 9548
    k.run_until(Time::ms(205));
    const uint64_t cap = (1024 - util) / 2;
    const uint64_t share = util * 1024 / (load + 1);
    REQUIRE(share < cap);
    CHECK(find_task(k, "child").se.avg.util_avg == (half_spare ? cap : share));
  }
}

TEST_CASE("capacities follow capacity-dmips-mhz x max frequency, normalised to 1024", "[biglittle]") {
  ScenarioParams p = toy();
  p.tasks = {hog("h")};
  System sys(p, 1);
  CHECK(sys.kernel().rq(0).capacity == 256);
  CHECK(sys.kernel().rq(1).capacity == 256);
  CHECK(sys.kernel().rq(2).capacity == 1024);
  CHECK(sys.kernel().rq(3).capacity == 1024);
  CHECK(sys.kernel().asym_capacity());
}

// 10 ms of work (capacity 1024 at f_max) takes 10 ms on a big CPU at 2 GHz,
// 1024/256 = 4x longer on a little CPU at its max, and twice that again at
// half its maximum frequency (powersave: 500 of 1000 MHz).
TEST_CASE("the same work takes capacity- and frequency-scaled time", "[biglittle]") {
  auto first_done = [](const std::string& governor, int cpu) {
    ScenarioParams p = toy(governor);
    p.duration = Time::ms(200);
    TaskSpec t = task("t", {ev_run(Time::ms(10)), ev_sleep(Time::s(10))});
    t.cpus = {cpu};
    p.tasks = {t};
    System sys(p, 1);
    SwitchLog log;
    sys.add_observer(&log);
    sys.run();
    for (const auto& r : log.log)
      if (r.prev == "t" && r.prev_state == 'S') return r.t;
    return Time::max();
  };
  CHECK(first_done("performance", 2) == Time::ms(10));
  CHECK(first_done("performance", 0) == Time::ms(40));
  CHECK(first_done("powersave", 0) == Time::ms(80));
}

// A 25% duty cycle (4 ms of work every 16 ms on a big CPU at f_max) has a
// util_avg oscillating around 1024/4 = 256 once converged.
TEST_CASE("PELT in the run-queue: a 25% task's util_avg settles near 256", "[biglittle][pelt]") {
  ScenarioParams p = toy("performance");
  p.duration = Time::s(2);
  TaskSpec t = task("t", {ev_run(Time::ms(4)), ev_timer("t", Time::ms(16))});
  t.cpus = {2};
  p.tasks = {t};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  double sum = 0;
  int n = 0;
  for (Time at = Time::ms(1000); at <= Time::ms(2000); at += Time::us(500)) {
    k.run_until(at);
    sum += static_cast<double>(find_task(k, "t").se.avg.util_avg);
    ++n;
  }
  CHECK(sum / n == Approx(256).epsilon(0.08));
}

// schedutil with the 1.25 headroom (get_next_freq(): map_util_perf()
// adds util / 4): the lowest OPP at or above 1.25 x util / 1024 x f_max.
// The toy big cluster has 1 and 2 GHz. Steady PELT of a periodic task on
// a big CPU peaks at 1024 (1 - y^r) / (1 - y^16) for r ms of work every
// 16 ms (y^32 = 1/2), and util_est holds about that peak while it runs:
// - 4 ms every 16 ms: peak ~290, 1.25 x 290 -> 708 MHz: 1 GHz (2 GHz with
//   a headroom of 2x);
// - 7 ms every 16 ms: peak ~492, 1.25 x 492 -> 1.20 GHz: 2 GHz (1 GHz
//   without the headroom: 492 -> 961 MHz).
// A hog asks for the top. After a 500 ms warm-up every busy nanosecond of
// CPU 2 is at the one OPP.
TEST_CASE("schedutil picks the lowest OPP above 1.25 x util", "[biglittle][cpufreq]") {
  auto busy_at_opps = [](TaskSpec t) {
    ScenarioParams p = toy();
    p.duration = Time::s(1);
    p.warmup = Time::ms(500);
    t.cpus = {2};
    p.tasks = {t};
    const RunResult r = run_result(p);
    check_conservation(r, &p.platform);
    REQUIRE(r.cpus[2].busy > Time::zero());
    return std::pair{busy_at(r, 2, 0), busy_at(r, 2, 1)};
  };
  SECTION("4 ms every 16 ms: 1 GHz") {
    auto [at_1ghz, at_2ghz] = busy_at_opps(task("t", {ev_run(Time::ms(4)), ev_timer("t", Time::ms(16))}));
    CHECK(at_1ghz > Time::ms(200));  // 4 ms of work takes 8 ms at 1 GHz: half of 500 ms
    CHECK(at_2ghz == Time::zero());
  }
  SECTION("7 ms every 16 ms: 2 GHz") {
    auto [at_1ghz, at_2ghz] = busy_at_opps(task("t", {ev_run(Time::ms(7)), ev_timer("t", Time::ms(16))}));
    CHECK(at_1ghz == Time::zero());
    CHECK(at_2ghz > Time::ms(200));  // 7/16 of 500 ms
  }
  SECTION("a hog: 2 GHz") {
    auto [at_1ghz, at_2ghz] = busy_at_opps(hog("h"));
    CHECK(at_1ghz == Time::zero());
    CHECK(at_2ghz == Time::ms(500));
  }
}

// find_energy_efficient_cpu() against select_idle_sibling(): a task that
// hogs a big CPU for 300 ms and then does 1 ms of work every 16 ms (util
// decaying towards ~64). Each wake-up's previous CPU is an idle big CPU
// it fits, which select_idle_sibling() keeps; EAS instead compares the
// energy of the domains, and the little one at its lowest OPP (cost
// 18000*10/128) is far below the big one's (245000*10/512), so once the
// task's util fits a little CPU (1.25 x util < 256) it goes there. EAS
// needs schedutil on every policy (sched_is_eas_possible()): under the
// performance governor the same task stays on the big CPU.
TEST_CASE("EAS moves a small task off an idle big CPU that select_idle_sibling keeps", "[biglittle][eas]") {
  auto switch_ins = [](const std::string& governor, bool eas) {
    ScenarioParams p = toy(governor);
    p.duration = Time::s(2);
    p.tasks = {phased_task("t", {{1, {ev_run(Time::ms(300))}}, {-1, {ev_run(Time::ms(1)), ev_sleep(Time::ms(15))}}})};
    System sys(p, 1);
    REQUIRE(sys.kernel().sched_energy_enabled() == eas);
    SwitchLog log;
    sys.add_observer(&log);
    sys.run();
    check_conservation(sys.result(), &p.platform);
    std::pair<int, int> little_big{0, 0};
    for (const auto& r : log.log)
      if (r.next == "t" && r.t >= Time::s(1)) (r.cpu < 2 ? little_big.first : little_big.second)++;
    return little_big;
  };
  const auto [eas_little, eas_big] = switch_ins("schedutil", true);
  CHECK(eas_little > 30);  // about 44 periods: 1 ms of work takes 4 to 8 ms on a little CPU
  CHECK(eas_big == 0);
  const auto [sis_little, sis_big] = switch_ins("performance", false);
  CHECK(sis_little == 0);
  CHECK(sis_big > 50);  // about 62 periods of 16 ms
}

// 6.12's rd->pd list starts with the performance domain of the
// highest-numbered CPU (build_perf_domains() prepends), and
// find_energy_efficient_cpu() keeps the first of equal candidates. Here the
// big cluster is CPUs 0-1 and two identical little clusters, each its own
// frequency domain, are CPUs 2-3 and 4-5: when the small task leaves the
// big CPU, both little domains cost exactly the same, so 6.12 takes the one
// it visits first, CPUs 4-5 (a pass in platform order would take 2-3).
// Once there, its previous CPU ties with the other domain and it stays.
TEST_CASE("EAS breaks an energy tie between performance domains in rd->pd order", "[biglittle][eas]") {
  ScenarioParams p = toy();
  PlatformParams& pl = p.platform;
  ClusterParams big = pl.clusters[1], little_a = pl.clusters[0];
  little_a.name = "little_a";
  ClusterParams little_b = little_a;
  little_b.name = "little_b";
  pl.clusters = {big, little_a, little_b};
  pl.cpus = 6;
  p.duration = Time::s(2);
  p.tasks = {phased_task("t", {{1, {ev_run(Time::ms(300))}}, {-1, {ev_run(Time::ms(1)), ev_sleep(Time::ms(15))}}})};
  System sys(p, 1);
  REQUIRE(sys.kernel().sched_energy_enabled());
  SwitchLog log;
  sys.add_observer(&log);
  sys.run();
  check_conservation(sys.result(), &p.platform);
  int on_a = 0, on_b = 0, on_big = 0;
  for (const auto& r : log.log)
    if (r.next == "t" && r.t >= Time::s(1)) (r.cpu >= 4 ? on_b : r.cpu >= 2 ? on_a : on_big)++;
  CHECK(on_b > 30);
  CHECK(on_a == 0);
  CHECK(on_big == 0);
}

// The energy of a known schedule, by hand (performance governor: every CPU
// at its top OPP). P = C x V^2 x f (_get_power(), mV and MHz, in uW):
// - a hog pinned to big CPU 2 for 1 s: 500 x 1000^2 x 2000 / 10^6 uW =
//   1000 mW for 1 s = 1000 mJ;
// - a task pinned to little CPU 0 with 1 ms of work every 16 ms: at
//   capacity 256 that is 4 ms busy per period and 63 periods start in
//   [0, 1 s): 252 ms at 100 x 800^2 x 1000 / 10^6 uW = 64 mW = 16.128 mJ.
// CPUs 1 and 3 stay idle, and the toy platform lists no idle states (idle
// costs nothing) and no static power.
TEST_CASE("the energy of a hand-computed schedule", "[biglittle][energy]") {
  ScenarioParams p = toy("performance");
  p.duration = Time::s(1);
  TaskSpec h = hog("h");
  h.cpus = {2};
  TaskSpec t = task("t", {ev_run(Time::ms(1)), ev_timer("t", Time::ms(16))});
  t.cpus = {0};
  p.tasks = {h, t};
  const RunResult r = run_result(p);
  check_conservation(r, &p.platform);
  CHECK(r.cpus[0].busy == Time::ms(252));
  CHECK(r.cpus[2].busy == Time::s(1));
  CHECK(r.cpus[1].busy == Time::zero());
  CHECK(r.cpus[3].busy == Time::zero());
  CHECK(r.cpus[0].energy_mj() == Approx(16.128));
  CHECK(r.cpus[2].energy_mj() == Approx(1000.0));
  CHECK(r.cpus[1].energy_mj() == 0.0);
  CHECK(r.cpus[3].energy_mj() == 0.0);
  CHECK(r.total_energy_mj() == Approx(1016.128));
  CHECK(r.avg_power_mw() == Approx(1016.128));
  // The performance governor never changes an OPP; the one each CPU
  // starts at (t = 0, inside this window without warm-up) is not a change.
  REQUIRE(p.warmup == Time::zero());
  for (const auto& c : r.cpus) CHECK(c.frequency_changes == 0);
}

// The task starts small (on a little CPU, by EAS) and then becomes a hog:
// its util grows past 256/1.25 on the little CPU, update_misfit_status()
// flags it at the tick, the nohz idle balance on an idle big CPU finds the
// misfit and active-balances the running task over.
TEST_CASE("a growing task migrates to a big CPU as misfit", "[biglittle][misfit]") {
  System sys(grower_on_toy(), 1);
  SwitchLog log;
  sys.add_observer(&log);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(900));
  CHECK(find_task(k, "grower").cpu < 2);  // small: EAS keeps it little
  sys.run();
  CHECK(find_task(k, "grower").cpu >= 2);  // grown: now on a big CPU
  RunResult r = sys.result();
  CHECK(metrics_of(r, "grower").migrations >= 1);
  check_conservation(r);
}

// The active-balance stopper is the little CPU's current task while it
// detaches the misfit task (active_load_balance_cpu_stop()): the CPU is
// not idle, so its PELT clock, behind clock_task by all the time the
// saturated little CPU ran slower than a 1024 CPU at f_max, is not synced
// before the detach. The grower is alone and never waits, so its
// runnable_avg follows its util_avg exactly, across the move too. (The
// model's stand-in for the stopper once synced the clock first, and the
// task's runnable_avg took the whole lag as time spent waiting.)
TEST_CASE("an active balance does not count the little CPU's PELT clock lag as waiting", "[biglittle][misfit][pelt]") {
  System sys(grower_on_toy(), 1);
  Kernel& k = sys.kernel();
  const Task& g = find_task(k, "grower");
  k.run_until(Time::ms(900));
  REQUIRE(g.cpu < 2);
  Time t = Time::ms(900);
  while (g.cpu < 2 && t < Time::s(3)) k.run_until(t += Time::us(100));
  REQUIRE(g.cpu >= 2);  // moved by the misfit active balance
  CHECK(metrics_of(sys.result(), "grower").migrations == 1);
  CHECK(g.se.avg.util_avg > 200);
  CHECK(g.se.avg.runnable_avg == g.se.avg.util_avg);
  k.run_until(t + Time::ms(50));
  CHECK(g.se.avg.runnable_avg == g.se.avg.util_avg);
}

namespace {

// The grower's one misfit move, seen from its little CPU while the
// active-balance stopper runs there: the model switches the running grower
// out for the idle task standing in for the stopper, then detaches it
// (sched_migrate_task) in the same instant. The probe records the little
// CPU's state at the detach.
class StopperProbe : public SchedObserver {
 public:
  explicit StopperProbe(Kernel& k) : k_(k) {}
  void on_switch(Time t, int cpu, const Task& prev, TaskState state, const Task& next) override {
    // The stand-in: the running grower preempted (still runnable) for the idle task.
    if (next.is_idle_task && !prev.is_idle_task && state == TaskState::kRunning && prev.comm == "grower") {
      ++stand_ins;
      stand_in_at = t;
      stopper_cpu = cpu;
      idle_calls_before = k_.rq(cpu).idle_calls;
    }
  }
  void on_migrate(Time t, const Task& p, int from_cpu, int) override {
    if (p.comm != "grower" || t != stand_in_at || from_cpu != stopper_cpu) return;
    const Rq& rq = k_.rq(from_cpu);
    ++detaches;
    idle_during_stopper += k_.cpu_idle(from_cpu);
    idle_entries_during_stopper = rq.idle_calls - idle_calls_before;
    tick_running_during_stopper = rq.tick_timer.armed();
    nohz_idle_during_stopper = rq.nohz_tick_stopped;
  }
  int stand_ins = 0, detaches = 0, idle_during_stopper = 0, stopper_cpu = -1;
  uint64_t idle_calls_before = 0, idle_entries_during_stopper = 99;
  bool tick_running_during_stopper = false, nohz_idle_during_stopper = true;
  Time stand_in_at = Time::max();

 private:
  Kernel& k_;
};

// The grower on the toy platform for 3 s, watched by `probe`.
void run_grower(System& sys, StopperProbe& probe) {
  sys.add_observer(&probe);
  sys.run();
  REQUIRE(probe.stand_ins == 1);  // the one misfit move
  REQUIRE(probe.detaches == 1);
}

}  // namespace

// While the stopper runs on the little CPU it is that CPU's current task,
// so idle_cpu() is false there (6.12 core.c: rq->curr != rq->idle) until
// the stopper's __schedule() has switched to the idle task. The model's
// stand-in idle task does not make the CPU available to wake-ups or to the
// newidle pass that __schedule() runs in the same instant.
TEST_CASE("a CPU running the active-balance stopper is not idle until it schedules", "[biglittle][misfit]") {
  System sys(grower_on_toy(), 1);
  StopperProbe probe(sys.kernel());
  run_grower(sys, probe);
  CHECK(probe.idle_during_stopper == 0);
  // Once its __schedule() has run, the little CPU, with nothing left, is idle.
  CHECK(sys.kernel().cpu_idle(probe.stopper_cpu));
}

// The stopper is not the idle loop: while it runs the little CPU makes no
// idle entry (no do_idle(), no tick_nohz_idle_enter(): idle_calls stays,
// the tick keeps running, the CPU stays out of nohz.idle_cpus_mask). Only
// when the stopper's __schedule() finds nothing left to run does the CPU
// go idle, once. (The model's stand-in idle task once made the idle entry
// at the switch to it.)
TEST_CASE("the active-balance stopper makes no idle entry", "[biglittle][misfit][nohz]") {
  System sys(grower_on_toy(), 1);
  StopperProbe probe(sys.kernel());
  run_grower(sys, probe);
  CHECK(probe.idle_entries_during_stopper == 0);
  CHECK(probe.tick_running_during_stopper);
  CHECK_FALSE(probe.nohz_idle_during_stopper);
  // After the stopper's __schedule(): one idle entry, the tick stopped, in the nohz mask.
  const Rq& little = sys.kernel().rq(probe.stopper_cpu);
  CHECK(little.idle_calls == probe.idle_calls_before + 1);
  CHECK_FALSE(little.tick_timer.armed());
  CHECK(little.nohz_tick_stopped);
}

// update_idle_rq_clock_pelt() (6.12 pelt.h) hands a saturated CPU's PELT
// clock lag to lost_idle_time when it goes idle, but on 6.12 only from
// pick_next_task_fair()'s idle path with rq_flags, which a switch from an
// RT task does not take (__pick_next_task_fair() passes none); 6.1.166
// runs it after the rf check, so there too. A little CPU busy for 2 s
// (its clock_pelt a quarter as fast) then goes idle: from a fair task the
// lag becomes lost idle time; from a FIFO task only on 6.1, and on 6.12
// the clock syncs to clock_task at the next update instead.
TEST_CASE("only a fair task going idle hands a saturated CPU's PELT lag to lost_idle_time", "[biglittle][pelt]") {
  auto lost_after_busy = [](Policy policy, int prio, const char* version = "6.12") {
    ScenarioParams p = toy();
    p.kernel.version = version;
    p.kernel.rt_runtime = Time::ns(-1);  // no RT throttling: 6.1's would idle the CPU at 950 ms
    p.duration = Time::s(3);
    EventSpec busy;
    busy.kind = EventSpec::Kind::kRuntime;  // 2 s of wall time, whatever the CPU's speed
    busy.duration = Time::s(2);
    TaskSpec t = task("busy", {busy, ev_sleep(Time::s(1))}, policy, prio);
    t.cpus = {0};  // a little CPU (capacity 256)
    p.tasks = {t};
    System sys(p, 1);
    Kernel& k = sys.kernel();
    k.run_until(Time::ms(1990));
    REQUIRE(k.rq(0).pelt.lost_idle_time == 0);
    REQUIRE(!k.rq(0).curr->is_idle_task);
    k.run_until(Time::ms(2010));  // the task slept at 2 s: the CPU is idle
    REQUIRE(k.rq(0).curr->is_idle_task);
    return k.rq(0).pelt.lost_idle_time;
  };
  // Fair: the lag, about three quarters of the 2 s.
  CHECK(lost_after_busy(Policy::kNormal, 0) > 1'000'000'000u);
  CHECK(lost_after_busy(Policy::kFifo, 10) == 0);
  CHECK(lost_after_busy(Policy::kFifo, 10, "6.1") > 1'000'000'000u);
}

// A frequency change moves no sibling's rq clock: the kernel's
// cpufreq_update_util() runs on the CPU whose rq lock is held, and the
// policy's other CPUs only see the new arch_scale_freq_capacity() (set for
// all related CPUs by arch_set_freq_scale()) at their next
// update_rq_clock(), which scales the whole delta since their last one by
// it (update_rq_clock_pelt(), 6.12 pelt.h). The toy's little policy (CPUs
// 0 and 1, capacity 256, 500 / 1000 MHz), no rate limit:
//   0      r runs on CPU 1 for 30 ms of wall time, its uclamp_max 20 keeping
//          the policy at 500 MHz (freq_scale 512).
//   10 ms  w (uclamp_min 1024) is forked onto CPU 0: CPU 0's hook asks for
//          1000 MHz. CPU 1's clocks stay where its last update left them.
//   then   CPU 1's next update scales all of it at 1024:
//          clock_pelt += (delta x 256 >> 10) x 1024 >> 10.
TEST_CASE("a frequency change leaves the policy's other rq clocks to their next update", "[biglittle][pelt][cpufreq]") {
  ScenarioParams p = toy();
  p.duration = Time::ms(50);
  p.platform.clusters[0].rate_limit = Time::zero();
  p.kernel.uclamp = true;
  EventSpec busy;
  busy.kind = EventSpec::Kind::kRuntime;
  busy.duration = Time::ms(30);
  TaskSpec r = task("r", {busy, ev_sleep(Time::s(1))});
  r.cpus = {1};
  r.uclamp_max = 20;
  TaskSpec w = task("w", {ev_run(Time::ms(1)), ev_sleep(Time::s(1))});
  w.cpus = {0};
  w.delay = Time::ms(10);
  w.uclamp_min = 1024;
  p.tasks = {r, w};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::us(9990));
  REQUIRE(k.freq_domains()[0].cur_khz == 500000);
  const Rq& cpu1 = k.rq(1);
  REQUIRE_FALSE(cpu1.curr->is_idle_task);
  const uint64_t clock_before = cpu1.pelt.clock;
  const uint64_t pelt_before = cpu1.pelt.clock_pelt;
  k.run_until(Time::us(10010));
  REQUIRE(k.freq_domains()[0].cur_khz == 1000000);
  CHECK(cpu1.pelt.clock == clock_before);
  CHECK(cpu1.pelt.clock_pelt == pelt_before);
  k.update_rq_clock(k.rq(1));
  const uint64_t delta = cpu1.pelt.clock - clock_before;
  CHECK(delta > 10'000u);  // from before 9.99 ms to 10.01 ms
  CHECK(cpu1.pelt.clock_pelt - pelt_before == (((delta * 256) >> 10) * 1024 >> 10));
}

// util_est_update() for a task whose util_avg exceeds its CPU's capacity
// (it came from a bigger CPU, or saturates this one): 6.12.19 skips the
// sample (no idle time there, so util_avg says nothing of the task's size);
// 6.18.35 dropped that check. A toy little CPU (capacity 256); the task's
// EWMA 600, util_avg 500, runnable 500 (it did not wait: no runnable
// guard), a sleep: 6.18 decays the EWMA by a quarter of the gap,
// (4 x 600 - 100) >> 2 = 575, and flags it; 6.12 leaves it as it was.
TEST_CASE("6.18's util_est samples a task above its CPU's capacity, 6.12's skips it", "[biglittle][pelt][util_est]") {
  const std::string version = GENERATE("6.12", "6.18");
  CAPTURE(version);
  ScenarioParams p = toy("performance");
  p.kernel.version = version;
  p.duration = Time::ms(10);
  p.tasks = {task("t", {ev_run(Time::ms(1)), ev_sleep(Time::ms(100))})};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  REQUIRE(k.rq(0).capacity == 256);
  Task& t = find_task(k, "t");
  t.se.avg.util_avg = 500;
  t.se.avg.runnable_avg = 500;
  t.se.avg.util_est.raw = 600;
  fair_util_est_update(k, k.rq(0), t, true);
  if (version == "6.18")
    CHECK(t.se.avg.util_est.raw == (575u | kUtilAvgUnchanged));
  else
    CHECK(t.se.avg.util_est.raw == 600u);
}

TEST_CASE("eight hogs on eight CPUs end one per CPU", "[smp][balance]") {
  ScenarioParams p = exact_scenario("6.12", 250, 8);
  p.duration = Time::s(2);
  p.tasks = {hogs("hog", 8)};
  const RunResult r = run_result(p);
  for (const auto& c : r.cpus) CHECK(c.idle == Time::zero());
  for (const auto& t : r.tasks) CHECK(t.cpu_time == Time::s(2));
}

// Sixteen hogs start all at once. The fork path leaves three on CPU 0 and
// one on CPU 7 (test_fork_placement.cc); the balancer evens that out within
// the first second, and after it every hog gets half a CPU.
TEST_CASE("load balancing evens out sixteen hogs on eight CPUs", "[smp][balance]") {
  ScenarioParams p = exact_scenario("6.12", 250, 8);
  p.duration = Time::s(2);
  p.warmup = Time::s(1);
  p.tasks = {hogs("hog", 16)};
  const RunResult r = run_result(p);
  for (const auto& c : r.cpus) CHECK(c.idle == Time::zero());
  for (const auto& t : r.tasks) CHECK(t.cpu_time.to_s() == Approx(0.5).margin(0.01));
}

// gs101 (Pixel 6) from its mainline device tree: capacities 160 / 498 /
// 1024 (A55 / A76 / X1; the kernel's integer formula gives 160, not the
// rounded 161). At each cluster's maximum frequency (performance governor)
// 10 ms of work takes 10 ms on an X1 and 10 * 1024 / 160 = 64 ms on an A55.
TEST_CASE("on gs101 the same work takes 1024/160 times longer on an A55 than on an X1", "[biglittle][gs101]") {
  auto done_at = [](int cpu) {
    ScenarioParams p = gs101_scenario("duration: 200ms\nkernel: {overheads: {timer_slack: 0}}\n"
                                      "tasks:\n  - name: t\n    cpus: [" + std::to_string(cpu) + "]\n    loop: 1\n"
                                      "    events: [{run: 10ms}]\n");
    for (auto& c : p.platform.clusters) c.cpufreq_governor = "performance";
    System sys(p, 1);
    SwitchLog log;
    sys.add_observer(&log);
    sys.run();
    CHECK(sys.kernel().rq(0).capacity == 160);
    CHECK(sys.kernel().rq(4).capacity == 498);
    CHECK(sys.kernel().rq(7).capacity == 1024);
    for (const auto& r : log.log)
      if (r.prev == "t") return r.t;
    return Time::max();
  };
  CHECK(done_at(7) == Time::ms(10));
  CHECK(done_at(0) == Time::ms(64));
}

// The root domain's overutilized flag is latched as in 6.12: a task pinned
// to a little CPU runs flat out (its util passes 256 / 1.25, so the tick
// sets the flag), then turns into 1 ms bursts every 30 ms. Its CPU's util
// decays below the threshold at its own PELT updates, but the flag stays
// set until that CPU's next periodic load-balance pass (due every 16 x 4 ms
// while busy) rewrites it from the pass's statistics. With the flag
// evaluated live, "set while no CPU is overutilized" could never be seen.
TEST_CASE("the overutilized flag stays set until a load-balance pass clears it", "[biglittle][eas]") {
  ScenarioParams p = toy();
  p.duration = Time::s(3);
  TaskSpec t = phased_task("pinned", {{1, {ev_run(Time::ms(60))}},  // 240 ms on a little CPU at f_max
                                      {-1, {ev_run(Time::ms(1)), ev_sleep(Time::ms(30))}}});
  t.cpus = {0};
  p.tasks = {t};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  REQUIRE(k.sched_energy_enabled());
  bool seen_set = false, seen_latched = false;
  for (Time at = Time::ms(1); at <= Time::s(2); at += Time::ms(1)) {
    k.run_until(at);
    bool any = false;
    for (int c = 0; c < 4; ++c) any = any || k.cpu_overutilized(k.rq(c));
    seen_set = seen_set || any;
    seen_latched = seen_latched || (!any && k.is_rd_overutilized() && seen_set);
  }
  CHECK(seen_set);
  CHECK(seen_latched);
  CHECK_FALSE(k.is_rd_overutilized());  // a pass saw CPU 0 fit again
  sys.run();
  check_conservation(sys.result());
}

// Without schedutil on every policy there are no performance domains
// (sched_is_eas_possible()): EAS is off and the load balancer is never held
// back by the overutilized flag.
TEST_CASE("EAS needs schedutil on every policy", "[biglittle][eas]") {
  ScenarioParams p = toy("performance");
  p.tasks = {hog("h")};
  System with_performance(p, 1);
  CHECK_FALSE(with_performance.kernel().sched_energy_enabled());
  CHECK(with_performance.kernel().is_rd_overutilized());
  ScenarioParams q = toy();
  q.tasks = {hog("h")};
  System with_schedutil(q, 1);
  CHECK(with_schedutil.kernel().sched_energy_enabled());
  CHECK_FALSE(with_schedutil.kernel().is_rd_overutilized());
}

// NO_HZ blocked load (6.12): a little CPU's hog stops; the CPU idles with
// its tick stopped and its PELT signals not yet zero. A hog on a big CPU
// keeps ticking, so every LOAD_AVG_PERIOD (32 ms) a stats kick wakes an
// idle CPU that decays every idle CPU's signals and tells cpufreq. Within
// 500 ms the signals reach zero (has_blocked_load clears: no more updates
// needed), and the little policy, whose CPUs are both idle, is at its
// lowest OPP. Without the kicks the stale util would hold it where it was.
TEST_CASE("idle CPUs' blocked util decays through nohz stats kicks", "[biglittle][nohz]") {
  ScenarioParams p = toy();
  p.duration = Time::s(2);
  TaskSpec little_hog = task("little_hog", {ev_run(Time::ms(60)), ev_sleep(Time::s(10))});
  little_hog.cpus = {0};
  TaskSpec big_hog = hog("big_hog");
  big_hog.cpus = {2};
  p.tasks = {little_hog, big_hog};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(150));
  REQUIRE(k.rq(0).curr->comm == "little_hog");
  CHECK(k.freq_domains()[0].cur_khz == 1000000);
  CHECK(k.rq(0).cfs.avg.util_avg > 150);
  Time idle_at = Time::ms(150);
  while (!k.rq(0).curr->is_idle_task) k.run_until(idle_at += Time::ms(1));
  CHECK(k.rq(0).has_blocked_load);
  CHECK(k.rq(0).cfs.avg.util_avg > 0);  // not decayed yet: nothing runs there
  k.run_until(idle_at + Time::ms(500));
  CHECK(k.rq(0).cfs.avg.util_avg == 0);
  CHECK(k.rq(0).cfs.avg.load_avg == 0);
  CHECK_FALSE(k.rq(0).has_blocked_load);
  CHECK(k.rq(0).last_blocked_load_update_tick * k.tick_nsec().count() >= idle_at.count());  // updated while idle
  CHECK(k.freq_domains()[0].cur_khz == 500000);
  sys.run();
  check_conservation(sys.result());
}

// Runnable boosting (6.5+, fair.c cpu_util(..., boost = 1)): schedutil reads
// max(util_avg, runnable_avg, util_est) of the CFS rq, capped at the
// capacity; 6.1 reads util_avg and util_est only.
TEST_CASE("schedutil's CFS util is boosted to runnable_avg from 6.5 on", "[biglittle][cpufreq]") {
  for (const char* version : {"6.1", "6.12"}) {
    ScenarioParams p = toy();
    p.kernel.version = version;
    p.tasks = {hog("h")};
    System sys(p, 1);
    Kernel& k = sys.kernel();
    Rq& rq = k.rq(2);  // a big CPU, capacity 1024
    rq.cfs.avg.util_avg = 300;
    rq.cfs.avg.runnable_avg = 500;
    INFO(version);
    CHECK(k.cpu_util_cfs(rq) == 300);
    CHECK(k.cpu_util_cfs_boost(rq) == (std::string(version) == "6.1" ? 300u : 500u));
    rq.cfs.avg.runnable_avg = 2000;  // capped at the capacity
    CHECK(k.cpu_util_cfs_boost(rq) == (std::string(version) == "6.1" ? 300u : 1024u));
  }
}

// The power tables say when idle costs nothing because the platform gives
// no idle-state power (every shipped device tree): energy is then running
// time only. The note names the clusters without a figure.
TEST_CASE("the power report notes clusters whose idle states have no power figure", "[biglittle][energy][reports]") {
  ScenarioParams p = toy("performance");
  p.duration = Time::ms(100);
  p.tasks = {hog("h")};
  const RunResult none = run_result(p);
  REQUIRE(none.clusters.size() == 2);
  CHECK_FALSE(none.clusters[0].idle_power_known);
  CHECK_THAT(idle_power_note(none), Catch::Contains("no idle-state power for any cluster"));
  p.platform.clusters[1].cpu_idle_states = {{"WFI", Time::zero(), Time::us(1), Time::us(1), 25.0}};
  const RunResult big_known = run_result(p);
  CHECK(big_known.clusters[1].idle_power_known);
  CHECK_THAT(idle_power_note(big_known), Catch::Contains("no idle-state power for little (0 mW)"));
  p.platform.clusters[0].cpu_idle_states = p.platform.clusters[1].cpu_idle_states;
  CHECK(idle_power_note(run_result(p)).empty());
}

// dequeue_rt_entity() ends in enqueue_top_rt_rq(), which kicks cpufreq
// (6.12 rt.c): the top-OPP floor of a runnable RT task (uclamp unused)
// lifts as the task leaves. An RT task runs 500 us of work (2 ms on a
// little CPU of capacity 256 at its top OPP) on CPU 0 and sleeps; nothing
// else runs on the little cluster. Its schedutil (rate limit 1 ms) goes to
// 1000 MHz at the enqueue and back to 500 MHz at the dequeue (avg_rt after
// 2 ms, about 11, is far below the low OPP's capacity of 128).
// Without the kick nothing would ask again: the cluster would stay at its
// top OPP while idle.
TEST_CASE("an RT task's dequeue re-evaluates schedutil at once", "[biglittle][cpufreq][rt]") {
  ScenarioParams p = toy();
  p.duration = Time::ms(50);
  p.tasks = {on_cpus(task("rt", {ev_run(Time::us(500)), ev_sleep(Time::s(10))}, Policy::kFifo, 50), {0})};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(1));
  CHECK(k.freq_domains()[0].cur_khz == 1000000);
  k.run_until(Time::us(2100));
  REQUIRE(k.rq(0).curr->is_idle_task);
  CHECK(k.freq_domains()[0].cur_khz == 500000);
}

// schedutil's slow path (6.12 cpufreq_schedutil.c; a cpufreq-dt policy):
// the decision wakes the little policy's sugov:0 SCHED_DEADLINE kthread on
// CPU 0 (the irq_work of the deciding CPU), which does the driver's work
// (10 us of work: 40 us at capacity 256 and 1 GHz, 80 us at 500 MHz) and
// sleeps the transition latency (100 us) before raising the clock, after
// lowering it. A FIFO task on CPU 0 runs 500 us of work (2 ms at 1 GHz),
// sleeps 5 ms and runs again.
//   t = 0: it starts: schedutil asks the top OPP, where the policy already
//     is: sugov:0 wakes, finds nothing to switch and sleeps at once.
//   t = 2000 us: it blocks; its dequeue asks 500 MHz: sugov:0 wakes on the
//     now idle CPU 0 and runs its 40 us; the clock drops at 2040 us, then
//     it sleeps 100 us for the voltage and goes back to sleep at 2140 us.
//   t = 7000 us: it wakes; schedutil asks 1 GHz (a runnable RT task):
//     sugov:0 (deadline class) runs first and sleeps 100 us for the
//     voltage; the FIFO task runs at 500 MHz until 7100 us (12.5 us of its
//     work), is preempted by sugov:0's 80 us, and runs the rest (487.5 us
//     of work, 1950 us at 1 GHz) from 7180 us: done at 9130 us.
// With a fast-switch driver the clock follows at once and no kthread exists.
TEST_CASE("schedutil's slow path switches through the sugov:N deadline kthread", "[biglittle][cpufreq][rt]") {
  ScenarioParams p = toy();
  p.duration = Time::ms(12);
  p.tasks = {on_cpus(task("rt", {ev_run(Time::us(500)), ev_sleep(Time::ms(5))}, Policy::kFifo, 50), {0})};
  auto slow_little = [&p] {
    ClusterParams& little = p.platform.clusters[0];
    little.fast_switch = false;
    little.slow_switch_work = Time::us(10);
    little.transition_latency = Time::us(100);
  };
  SECTION("slow path") {
    slow_little();
    System sys(p, 1);
    Kernel& k = sys.kernel();
    Task& sugov = find_task(k, "sugov:0");
    Task& rt = find_task(k, "rt");
    CHECK(sugov.policy == Policy::kDeadline);
    CHECK(sugov.sched_class == SchedClassId::kDeadline);
    auto khz = [&] { return k.freq_domains()[0].cur_khz; };
    k.run_until(Time::us(1999));
    CHECK(khz() == 1000000);
    CHECK(sugov.se.sum_exec_runtime == 0);
    k.run_until(Time::us(2039));
    CHECK(k.rq(0).curr == &sugov);
    CHECK(khz() == 1000000);  // the old frequency until the driver is through
    k.run_until(Time::us(2041));
    CHECK(khz() == 500000);
    CHECK(sugov.state == TaskState::kUninterruptible);  // the voltage ramp
    CHECK(sugov.se.sum_exec_runtime == 40000);
    k.run_until(Time::us(7050));
    CHECK(khz() == 500000);
    CHECK(k.rq(0).curr == &rt);
    CHECK(sugov.state == TaskState::kUninterruptible);
    k.run_until(Time::us(7150));
    CHECK(k.rq(0).curr == &sugov);  // above SCHED_FIFO
    CHECK(khz() == 500000);
    k.run_until(Time::us(7181));
    CHECK(khz() == 1000000);
    CHECK(k.rq(0).curr == &rt);
    CHECK(sugov.se.sum_exec_runtime == 120000);
    k.run_until(Time::us(9129));
    CHECK(k.rq(0).curr == &rt);
    k.run_until(Time::us(9131));
    CHECK(rt.state == TaskState::kInterruptible);
    CHECK(rt.se.sum_exec_runtime == 2000000 + 100000 + 1950000);
  }
  SECTION("slow path: the kthread's time adds up") {
    slow_little();
    const RunResult r = run_result(p);
    check_conservation(r, &p.platform);
    const auto it = std::find_if(r.tasks.begin(), r.tasks.end(), [](const auto& t) { return t.name == "sugov:0"; });
    REQUIRE(it != r.tasks.end());
    CHECK(it->cpu_time == Time::us(160));  // 40 us down at 2 ms, 80 us up at 7.1 ms, 40 us down at 9.13 ms
  }
  SECTION("fast switch") {
    System sys(p, 1);
    Kernel& k = sys.kernel();
    for (const auto& t : k.tasks()) CHECK(t->policy != Policy::kDeadline);
    k.run_until(Time::us(2001));
    CHECK(k.freq_domains()[0].cur_khz == 500000);
  }
}

// compute_energy() through effective_cpu_util() (6.12 fair.c): a runnable
// RT task (uclamp unused) prices its cluster at the top OPP. The toy
// platform's little OPPs here are 500 / 1000 MHz at 600 / 1200 mV
// (C = 100): 18 mW and 144 mW, EM costs 36 and 144, i.e. per unit of
// little util (capacity 256) 0.14 at the low OPP and 0.56 at the top; the
// big cluster's lowest OPP costs 490 per 1024, 0.48. A FIFO hog holds
// little CPU 0; w (util about 20, allowed on CPUs 1-3) wakes every 20 ms.
// Priced at the low OPP (RT left out of the estimate) the little CPU 1 is
// the cheaper place; priced at the top OPP, as 6.12 does, a big CPU is.
TEST_CASE("EAS prices a cluster with a runnable RT task at its top OPP", "[biglittle][eas][rt]") {
  ScenarioParams p = toy();
  p.platform.clusters[0].opps = {{500000, 600000, 0}, {1000000, 1200000, 0}};
  p.duration = Time::s(1);
  TaskSpec w = on_cpus(task("w", {ev_run(Time::us(400)), ev_sleep(Time::ms(20))}), {1, 2, 3});
  p.tasks = {on_cpus(hog("rt", Policy::kFifo, 50), {0}), w};
  System sys(p, 1);
  SwitchLog log;
  sys.add_observer(&log);
  sys.run();
  REQUIRE(sys.kernel().sched_energy_enabled());
  int big = 0, little = 0;
  for (const auto& r : log.log)
    if (r.next == "w" && r.t > Time::ms(200)) ++(r.cpu >= 2 ? big : little);
  CHECK(big >= 30);
  CHECK(little == 0);
}

// eenv_task_busy_time() (6.12 fair.c): p adds task_util_est(p) to the busy
// time of every candidate's pd ("so the comparison is fair"). b, pinned to
// little CPU 1, runs 800 us of work every ~4 ms and keeps the little
// cluster at its top OPP (costly here: 600 / 1200 mV, 0.56 per unit of
// little util against the big cluster's 0.48 at its lowest); p (1 ms of
// work every 40 ms, allowed on CPUs 1-3) wakes with its util_avg decayed
// below its util_est. Charged from CPU 1's own signals with p added
// (max(U + util, E + util_est) - max(U, E)), b's blocked util hid most of
// p's util_est and CPU 1 looked cheap: the model before 695ddc4 ran p there
// 18 of the 28 times it was switched in after 100 ms. Charged
// task_util_est(p), CPU 1 costs more than a big CPU every time.
TEST_CASE("EAS charges every candidate the task's util_est", "[biglittle][eas]") {
  ScenarioParams p = toy();
  p.platform.clusters[0].opps = {{500000, 600000, 0}, {1000000, 1200000, 0}};
  p.duration = Time::s(1);
  p.tasks = {on_cpus(task("b", {ev_run(Time::us(800)), ev_sleep(Time::ms(4))}), {1}),
             on_cpus(task("p", {ev_run(Time::ms(1)), ev_sleep(Time::ms(40))}), {1, 2, 3})};
  System sys(p, 1);
  SwitchLog log;
  sys.add_observer(&log);
  sys.run();
  int big = 0, little = 0;
  for (const auto& r : log.log)
    if (r.next == "p" && r.t > Time::ms(100)) ++(r.cpu >= 2 ? big : little);
  CHECK(big >= 15);
  CHECK(little == 0);
}

// Schedutil's headroom is added once on every version, also on the shared
// policies' fast path (no uclamp). A task with 5.3 ms of work (capacity
// 1024 at f_max) every 16 ms on a big CPU (1000 / 2000 MHz, capacity
// 1024; at 1000 MHz it runs 10.6 ms): its invariant util swings between
// about 319 and 358 at 1000 MHz (PELT over the period; util_est holds the
// peak), so 1.25 x 358 = 447 stays below the 1000 MHz OPP's 512, and even
// after a run at 2000 MHz (5.3 ms, peak 379: 474) it asks for 1000 MHz
// again. Once warmed up the CPU never leaves 1000 MHz. (Had 6.1's path,
// which adds the headroom in get_next_freq(), been fed 6.12's util with
// its headroom already in, 1.5625 x 358 = 559 would ask for 2000 MHz.)
TEST_CASE("the shared policies' schedutil adds the 25% headroom once on every version", "[biglittle][cpufreq]") {
  const std::string version = GENERATE("6.1", "6.6", "6.12", "6.18");
  CAPTURE(version);
  ScenarioParams p = on_kernel(toy(), version, Time::s(2), Time::ms(500));
  p.tasks = {every_16ms_on("t", Time::us(5300), 2)};
  RunResult r = run_result(p);
  CHECK(busy_at(r, 2, 1) == Time::zero());
  CHECK(busy_at(r, 2, 0) > Time::ms(900));  // 10.6 ms of every 16 ms over 1.5 s: about 994 ms
  check_conservation(r);
}

// Which OPPs schedutil skips as inefficient follows the version's EM cost
// (test_cpufreq.cc works the figures): with the big cluster at 1000 MHz
// 100 mW and 2000 MHz 200.05 mW, 6.12's cost marks 1000 MHz inefficient
// and 6.1's does not. A 1 ms task every 16 ms pinned to a big CPU asks for
// far less than 1000 MHz; 6.12 and 6.18 resolve that to 2000 MHz (each run
// 1 ms), 6.1 and 6.6 to 1000 MHz (each run 2 ms). From 200 ms to 1 s the
// timer's phase puts 50 runs in the window.
TEST_CASE("schedutil skips the OPPs the version's energy model marks inefficient", "[biglittle][cpufreq]") {
  const std::string version = GENERATE("6.1", "6.6", "6.12", "6.18");
  CAPTURE(version);
  ScenarioParams p = on_kernel(toy(), version, Time::s(1), Time::ms(200));
  p.platform.clusters[1].opps = {{1000000, 700000, 100.0}, {2000000, 1000000, 200.05}};
  p.tasks = {every_16ms_on("t", Time::ms(1), 2)};
  RunResult r = run_result(p);
  if (has_v6_1_forms(version)) {
    CHECK(busy_at(r, 2, 0) == Time::ms(100));
    CHECK(busy_at(r, 2, 1) == Time::zero());
  } else {
    CHECK(busy_at(r, 2, 0) == Time::zero());
    CHECK(busy_at(r, 2, 1) == Time::ms(50));
  }
  check_conservation(r);
}

// An RT task woken behind schedutil's kthread does not wait for it. On
// the toy platform's slow little policy: a fair task on CPU 0 (100 us of
// work at t = 0 and 20.4 ms; schedutil's last change at t = 0) and a FIFO
// task pinned there at 21 ms, whose dequeue at 21.4 ms lets schedutil ask
// 500 MHz (util 85 x 1.25 of 256): sugov:0 runs the driver's 1 ms of work
// (4 ms at capacity 256) from 21.4 ms. A FIFO task allowed on CPUs 0-1,
// last on CPU 0, wakes at 22 ms and runs on the idle CPU 1 at once instead
// of waiting 3.4 ms on CPU 0. 6.12 (rt.c): select_task_rq_rt() only avoids
// an RT curr, so the task is placed on CPU 0 and task_woken_rt() pushes it
// (dl_task(curr)). 6.1: select_task_rq_rt()'s rt_task(curr) counts the DL
// kthread, so find_lowest_rq() places it (the decision counts tell the two
// paths apart).
TEST_CASE("an RT task woken behind the sugov kthread goes to a lower CPU", "[biglittle][cpufreq][rt]") {
  const std::string version = GENERATE("6.1", "6.12");
  CAPTURE(version);
  ScenarioParams p = on_kernel(toy(), version, Time::ms(30));
  p.platform.clusters[0].fast_switch = false;
  p.platform.clusters[0].slow_switch_work = Time::ms(1);
  auto fifo = [](const std::string& name, std::vector<int> cpus, Time delay) {
    TaskSpec t = on_cpus(task(name, {ev_run(Time::us(100)), ev_sleep(Time::ms(100))}, Policy::kFifo, 10), cpus);
    t.delay = delay;
    return t;
  };
  // rt forks at 1 ms on the idle CPU 0 and at once waits on its timer: its
  // wake-up at 22 ms is a try_to_wake_up() from CPU 0.
  TaskSpec rt = on_cpus(task("rt", {ev_timer("rt", Time::ms(21)), ev_run(Time::us(100)), ev_sleep(Time::ms(100))},
                             Policy::kFifo, 10),
                        {0, 1});
  rt.delay = Time::ms(1);
  p.tasks = {on_cpus(task("f", {ev_run(Time::us(100)), ev_sleep(Time::ms(20))}), {0}),
             fifo("trigger", {0}, Time::ms(21)), rt};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.start_decision_counts();
  k.run_until(Time::us(21999));
  REQUIRE(k.rq(0).curr == &find_task(k, "sugov:0"));
  REQUIRE(k.freq_domains()[0].cur_khz == 1000000);
  k.run_until(Time::us(22001));
  CHECK(find_task(k, "rt").cpu == 1);
  CHECK(k.rq(1).curr == &find_task(k, "rt"));
  CHECK(k.rq(0).curr == &find_task(k, "sugov:0"));
  // How rt's wake-up was placed: on 6.1 find_lowest_rq() chose CPU 1; on
  // 6.12 it stayed on CPU 0 and the push moved it.
  const std::string placed = version == "6.1" ? "rt: prev runs a pinned RT task or one of equal or higher priority: "
                                                "find_lowest_rq() (cpupri)"
                                              : "rt: prev runs no pinned RT task nor one of equal or higher priority, "
                                                "and fits: stays";
  uint64_t placements = 0;
  for (const DecisionCount& d : k.decision_counts())
    if (d.kind == "placement" && d.group == "rt") placements += d.reason == placed ? d.count : 100;
  CHECK(placements == 1);
}

// The lowest mask a push picks from leaves out a CPU whose DL run-queue
// holds a task (6.12 cpupri.c: that CPU is CPUPRI_HIGHER, in no RT level's
// mask), even when its queued RT level equals the lowest one found. Toy
// platform, the big policy slow: sugov:2 runs the driver's work on CPU 2
// from about 21.4 ms (set up as in the test above: a fair task and a FIFO
// trigger pinned there). FIFO 5 tasks pinned to CPUs 2 and 3 arrive at
// 21.9 ms: one queued behind the kthread, one running on the idle CPU 3;
// both CPUs are at RT level FIFO 5. FIFO 50 p, allowed on CPUs 0, 2 and 3,
// runs on CPU 0 from 10 ms; at 22 ms a FIFO 90 task pinned to CPU 0
// preempts it and CPU 0 pushes p: to CPU 3, where it preempts the FIFO 5
// task at once, not to CPU 2, where it would wait for the kthread.
TEST_CASE("a pushed RT task skips a CPU whose DL run-queue holds the sugov kthread", "[biglittle][cpufreq][rt]") {
  const std::string version = GENERATE("6.1", "6.12");
  CAPTURE(version);
  ScenarioParams p = on_kernel(toy(), version, Time::ms(30));
  p.platform.clusters[1].fast_switch = false;
  p.platform.clusters[1].slow_switch_work = Time::ms(1);
  auto fifo = [](const std::string& name, int prio, std::vector<int> cpus, Time delay, Time work) {
    TaskSpec t = on_cpus(task(name, {ev_run(work), ev_sleep(Time::ms(100))}, Policy::kFifo, prio), cpus);
    t.delay = delay;
    return t;
  };
  p.tasks = {on_cpus(task("f", {ev_run(Time::us(100)), ev_sleep(Time::ms(20))}), {2}),
             fifo("trigger", 10, {2}, Time::ms(21), Time::us(100)),
             fifo("low2", 5, {2}, Time::us(21900), Time::ms(100)),
             fifo("low3", 5, {3}, Time::us(21900), Time::ms(100)),
             fifo("p", 50, {0, 2, 3}, Time::ms(10), Time::ms(100)),
             fifo("hi", 90, {0}, Time::ms(22), Time::ms(100))};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::us(21999));
  REQUIRE(k.rq(2).curr == &find_task(k, "sugov:2"));
  REQUIRE(k.rq(2).rt.rt_nr_running == 1);  // low2, queued behind it
  REQUIRE(k.rq(3).curr == &find_task(k, "low3"));
  REQUIRE(k.rq(0).curr == &find_task(k, "p"));
  k.run_until(Time::us(22001));
  CHECK(k.rq(0).curr == &find_task(k, "hi"));
  CHECK(find_task(k, "p").cpu == 3);
  CHECK(k.rq(3).curr == &find_task(k, "p"));
  CHECK(k.rq(2).curr == &find_task(k, "sugov:2"));
}
