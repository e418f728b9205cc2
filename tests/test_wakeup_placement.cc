// Wake-up placement details of select_task_rq_fair() (kernel/sched/fair.c,
// 6.12): the waking task's PELT signals are synced to its CPU's cfs_rq
// first (sync_entity_load_avg() in find_energy_efficient_cpu() and, on
// asymmetric systems, select_idle_sibling()), and a per-CPU kthread's wakee
// stacks on the kthread's CPU.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "models/config/config.h"
#include "models/kernel/sched/fair_pelt.h"
#include "models/kernel/sched/pelt.h"
#include "models/system.h"
#include "tests/sched_test_util.h"

using namespace schedlab;
using namespace schedlab::testing;

namespace {
// `t` runs 20 ms on gs101 and suspends; `other` (pinned to CPU 7, an X1)
// keeps a tick going, whose stats kicks decay the idle CPUs' blocked load,
// so t's CPU's cfs_rq is updated after t left it. At 200 ms, placing t
// must first decay its signals to that update, exactly as
// __update_load_avg_blocked_se() would.
void check_placement_syncs(const std::string& other_events, bool overutilized) {
  ScenarioParams params = gs101_scenario(
      "duration: 1s\n"
      "tasks:\n"
      "  - {name: t, loop: 1, events: [{run: 20ms}, {suspend: {}}]}\n"
      "  - {name: other, cpus: [7], events: " + other_events + "}\n");
  System sys(params, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(200));
  REQUIRE(k.is_rd_overutilized() == overutilized);  // which path places t
  Task& t = find_task(k, "t");
  REQUIRE(t.state != TaskState::kRunning);
  REQUIRE(!t.on_rq);
  const Rq& rq = k.rq(t.cpu);
  REQUIRE(rq.cfs.avg.last_update_time > t.se.avg.last_update_time);  // the rq moved on
  SchedAvg expected = t.se.avg;
  update_load_avg_blocked_se(rq.cfs.avg.last_update_time, expected, t.se.weight);
  REQUIRE(expected.util_avg < t.se.avg.util_avg);  // it decayed: the checks below can fail
  k.select_task_rq_fair(t, t.cpu, kWfTtwu);
  CHECK(t.se.avg.last_update_time == expected.last_update_time);
  CHECK(t.se.avg.util_avg == expected.util_avg);
  CHECK(t.se.avg.load_avg == expected.load_avg);
  CHECK(t.se.avg.runnable_avg == expected.runnable_avg);
}
}  // namespace

// With a hog on the X1 the root domain is overutilized: no EAS, and
// select_idle_sibling() (asymmetric capacities) syncs.
TEST_CASE("wake-up placement syncs the task's PELT signals first (select_idle_sibling)", "[smp][pelt]") {
  check_placement_syncs("[{run: 10s}]", true);
}

// With 1 ms of work every 8 ms on the X1 nothing is overutilized:
// find_energy_efficient_cpu() syncs.
TEST_CASE("wake-up placement syncs the task's PELT signals first (EAS)", "[smp][pelt][eas]") {
  check_placement_syncs("[{run: 1ms}, {timer: {ref: tk, period: 8ms}}]", false);
}

// Four identical CPUs (no EAS). `w` starts on CPU 1 (the first idle CPU it
// may use), runs 2 ms and suspends; kernel thread `kt`, pinned to CPU 1,
// resumes it at 7.5 ms (between ticks) while running there alone. CPU 1 is
// busy and CPUs 2 and 3 idle, so select_idle_sibling() would pick one of
// them; the per-CPU kthread rule stacks `w` on CPU 1, where it runs once
// the kthread has exited.
TEST_CASE("a per-CPU kthread's wakee stacks on the kthread's CPU", "[smp][kthread]") {
  const std::string yaml =
      "platform: {cpus: 4}\nduration: 50ms\n"
      "kernel: {version: \"6.12\", hz: 250, overheads: {timer_slack: 0}}\n"
      "tasks:\n"
      "  - {name: w, cpus: [1, 2, 3], loop: 1, events: [{run: 2ms}, {suspend: {}}, {run: 1ms}]}\n"
      "  - {name: kt, cpus: [1], kernel_thread: true, loop: 1, events: [{sleep: 5ms}, {run: 500us}, {resume: w}]}\n";
  const SwitchLog log = run_logged<SwitchLog>(load_scenario_yaml(yaml, "kthread_test.yaml"));
  std::vector<std::pair<int64_t, int>> runs;  // w's switch-ins: time, CPU
  for (const auto& r : log.log)
    if (r.next == "w") runs.emplace_back(r.t.count(), r.cpu);
  const std::vector<std::pair<int64_t, int>> expected = {{0, 1}, {7'500'000, 1}};
  CHECK(runs == expected);
}

// select_task_rq_fair()'s this_cpu is smp_processor_id(): for a wake-up
// from a timer or an interrupt, the CPU the interrupt runs on, whose
// running task is "current" for record_wakee() and wake_wide(). The model
// runs such a wake-up outside any CPU's event: it must still take the CPU
// it names, not the wakee's previous one.
TEST_CASE("an interrupt's wake-up is placed from the interrupted CPU", "[smp]") {
  ScenarioParams p = exact_scenario("6.12", 250, 2);
  p.duration = Time::s(1);
  TaskSpec h0 = hog("h0");
  h0.cpus = {0};
  TaskSpec h1 = hog("h1");
  h1.cpus = {1};
  TaskSpec s = task("s", {ev_run(Time::ms(1)), ev_sleep(Time::s(100))});
  p.tasks = {h0, h1, s};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(50));
  Task& sleeper = find_task(k, "s");
  REQUIRE(!sleeper.on_rq);
  const int prev = sleeper.cpu, irq_cpu = 1 - prev;
  Task& interrupted = *k.rq(irq_cpu).curr;
  Task& other = *k.rq(prev).curr;
  REQUIRE(!interrupted.is_idle_task);
  REQUIRE(!other.is_idle_task);
  REQUIRE(k.try_to_wake_up(sleeper, nullptr, irq_cpu));
  CHECK(interrupted.last_wakee == &sleeper);
  CHECK(other.last_wakee != &sleeper);
}

namespace {
// `t` (allowed on CPU 0 only) runs 20 ms and suspends; `other` (also on
// CPU 0) sleeps `other_sleep`, then runs. At 200 ms t's PELT part of
// migrate_task_rq_fair() runs as if t woke to CPU 4: t must be aged to the
// cfs_rq's last update, removed with those values, then (CPU 0 idle only)
// aged over migrate_se_pelt_lag()'s idle lag.
void check_migration_lag(const std::string& other_sleep, bool source_idle) {
  ScenarioParams params = gs101_scenario(
      "duration: 1s\n"
      "tasks:\n"
      "  - {name: t, cpus: [0], loop: 1, events: [{run: 20ms}, {suspend: {}}]}\n"
      "  - {name: other, cpus: [0], events: [{sleep: " + other_sleep + "}, {run: 10s}]}\n");
  System sys(params, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(200));
  Task& t = find_task(k, "t");
  REQUIRE(!t.on_rq);
  const Rq& rq = k.rq(0);
  REQUIRE(rq.idle_task_runs() == source_idle);
  SchedAvg synced = t.se.avg;
  update_load_avg_blocked_se(rq.cfs.avg.last_update_time, synced, t.se.weight);
  SchedAvg expected = synced;
  if (source_idle) {
    const uint64_t now = rq.pelt.idle_lag_now(static_cast<uint64_t>(k.now().count()) + Kernel::kRqClockAtZeroNs,
                                              rq.cfs.avg.last_update_time);
    REQUIRE(now > rq.cfs.avg.last_update_time + 1000000);  // a lag of over 1 ms: the check below can fail
    update_load_avg_blocked_se(now, expected, t.se.weight);
    REQUIRE(expected.util_avg < synced.util_avg);
  }
  const uint64_t removed_before = k.rq(0).cfs.removed.util_avg;
  fair_migrate_task_pelt(k, t);
  CHECK(t.se.avg.last_update_time == 0);  // attaches on the new rq
  CHECK(t.se.avg.util_avg == expected.util_avg);
  CHECK(t.se.avg.load_avg == expected.load_avg);
  CHECK(t.se.avg.runnable_avg == expected.runnable_avg);
  CHECK(k.rq(0).cfs.removed.util_avg == removed_before + synced.util_avg);  // removed before the lag
}
}  // namespace

// CPU 0 idle since t left it, its cfs_rq last updated long before 200 ms
// (no tick there): t leaves with its signals decayed to the estimated now.
TEST_CASE("a task migrating off an idle CPU decays over the idle lag (migrate_se_pelt_lag)", "[smp][pelt]") {
  check_migration_lag("10s", true);
}

// CPU 0 busy: the kernel skips the estimate, t leaves as of the last update.
TEST_CASE("a task migrating off a busy CPU keeps its signals as of the cfs_rq's last update", "[smp][pelt]") {
  check_migration_lag("100ms", false);
}
