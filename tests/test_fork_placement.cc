// Where a new task starts: the slow path of select_task_rq_fair() for
// WF_FORK (sched_balance_find_dst_cpu() -> sched_balance_find_dst_group(),
// update_sg_wakeup_stats(), update_pick_idlest(), kernel/sched/fair.c 6.12)
// on one domain of one-CPU groups. Every task is forked on CPU 0, where its
// parent runs (an assumption): that CPU counts one more running task and is
// never idle while it forks.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "experiments/lib/ftrace_writer.h"
#include "experiments/lib/runner.h"
#include "models/config/config.h"
#include "models/system.h"
#include "tests/sched_test_util.h"

using namespace schedlab;
using namespace schedlab::testing;

namespace {
// The CPU each task starts on: the scenario run to the end of t = 0, when
// every start event has placed its task.
std::vector<int> start_cpus(const ScenarioParams& p, const std::vector<std::string>& names) {
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::zero());
  std::vector<int> cpus;
  for (const auto& n : names) cpus.push_back(find_task(k, n).cpu);
  return cpus;
}

std::vector<std::string> hog_names(int n) {
  std::vector<std::string> v;
  for (int i = 0; i < n; ++i) v.push_back("hog-" + std::to_string(i));
  return v;
}

ScenarioParams gs101_tasks(const std::string& tasks_yaml, bool uclamp = false) {
  return gs101_scenario(std::string("duration: 100ms\n") + (uclamp ? "kernel: {uclamp: {enabled: true}}\n" : "") +
                        "tasks:\n" + tasks_yaml);
}
}  // namespace

// Sixteen nice-0 hogs forked on CPU 0 of eight CPUs of capacity 1024, in
// order. A new task's util is 0 and it has no PELT contribution anywhere,
// so each CPU counts what is already queued (plus the parent on CPU 0).
// post_init_entity_util_avg() gives each hog half of the capacity its CPU
// has left, in proportion to its weight: 512 alone, then 256, then 128 on
// the same CPU.
//  - hog-0..6: CPU 0 has its parent (has spare, 0 idle); the idlest is the
//    first idle CPU after it: CPUs 1..7.
//  - hog-7: every other CPU has one task (has spare, 0 idle, util 512);
//    CPU 0 is as idle (0 idle CPUs), so it keeps it (util 512).
//  - hog-8, hog-9: CPU 0 still has spare (util 512, then 768; 768 * 117 <
//    1024 * 100): it keeps them (util 768, then 896).
//  - hog-10..15: CPU 0 is overloaded (four tasks, 896 * 117 > 1024 * 100),
//    so each goes to the has-spare CPU of lowest util, the first on a tie:
//    CPU 1 (512), then CPU 2 (512, CPU 1 now 768), ... CPU 6.
// CPU 7 keeps one task: the balancer fixes that later.
TEST_CASE("16 hogs forked on 8 CPUs land as 6.12's slow path places them", "[smp][fork]") {
  ScenarioParams p = exact_scenario("6.12", 250, 8);
  p.tasks = {hogs("hog", 16)};
  const std::vector<int> expected = {1, 2, 3, 4, 5, 6, 7, 0, 0, 0, 1, 2, 3, 4, 5, 6};
  CHECK(start_cpus(p, hog_names(16)) == expected);
}

// With every CPU of gs101 idle but the forking CPU 0 (its parent), a new
// task goes to the first idle CPU after it, another A55: the fork path
// compares idle CPUs and util, not capacities (a new task's util is 0 and
// fits anywhere).
TEST_CASE("on an idle gs101 a new task starts on the next idle CPU, a little one", "[biglittle][fork]") {
  ScenarioParams p = gs101_tasks("  - {name: t, loop: 1, events: [{run: 1ms}]}\n");
  CHECK(start_cpus(p, {"t"}) == std::vector<int>{1});
}

// A task whose uclamp_min is 1024 fits only a CPU of capacity 1024
// (util_fits_cpu(): a minimum clamp above a smaller CPU's capacity does not
// fit): the A55s and A76s are misfit groups, the X1s have spare capacity,
// so it starts on the first X1 (CPU 6).
TEST_CASE("a new task boosted to 1024 starts on gs101's first X1", "[biglittle][fork][uclamp]") {
  ScenarioParams p = gs101_tasks("  - {name: t, uclamp_min: 1024, loop: 1, events: [{run: 1ms}]}\n", true);
  CHECK(start_cpus(p, {"t"}) == std::vector<int>{6});
}

// CPUs that p may not use are skipped, the forking CPU included.
//  a (CPUs 0, 1): CPU 0 has the parent, CPU 1 is idle: CPU 1.
//  b (CPUs 0, 1): CPU 0 (parent, util 0) and CPU 1 (a, util 512) both have
//    spare and no idle CPU: CPU 0 is as idle as the idlest, so b stays.
//  c (CPUs 1, 2, 3): not the forking CPU; of CPU 1 (busy), 2 and 3 (idle),
//    the first idle one: CPU 2.
TEST_CASE("a new task goes to the idlest CPU it may use, the forking CPU only if as idle", "[smp][fork]") {
  ScenarioParams p = exact_scenario("6.12", 250, 4);
  TaskSpec a = hog("a");
  a.cpus = {0, 1};
  TaskSpec b = hog("b");
  b.cpus = {0, 1};
  TaskSpec c = hog("c");
  c.cpus = {1, 2, 3};
  p.tasks = {a, b, c};
  CHECK(start_cpus(p, {"a", "b", "c"}) == std::vector<int>{1, 0, 2});
}

// select_task_rq_rt() keeps a FIFO task on the CPU it is forked on (CPU 0)
// unless an RT task that would not yield runs there, or CPU 0 cannot hold
// it; but p may not run on CPU 0, so select_task_rq()'s
// select_fallback_rq() takes the first CPU p may use, CPU 2, although a
// fair hog pinned there runs and CPU 3 idles.
TEST_CASE("a new FIFO task not allowed on the forking CPU falls back to its first allowed CPU", "[rt][fork]") {
  ScenarioParams p = exact_scenario("6.12", 250, 4);
  TaskSpec hog2 = hog("hog2");
  hog2.cpus = {2};
  TaskSpec rt = hog("rt", Policy::kFifo, 10);
  rt.cpus = {2, 3};
  p.tasks = {hog2, rt};
  CHECK(start_cpus(p, {"hog2", "rt"}) == std::vector<int>{2, 2});
}

// The trace shows a new task's wake-up where 6.12 emits it: from the
// parent's context on the forking CPU (wake_up_new_task()), with the CPU
// the child goes to as target_cpu. On two idle CPUs `a` goes to CPU 1 (the
// parent occupies CPU 0).
TEST_CASE("sched_wakeup_new is traced on the forking CPU with the child's target CPU", "[fork][trace]") {
  ScenarioParams p = exact_scenario("6.12", 250, 2);
  p.duration = Time::ms(10);
  p.tasks = {hog("a")};
  std::ostringstream out;
  {
    FtraceWriter w(out);
    simulate_run(p, 1, {&w}, nullptr);
  }
  CHECK_THAT(out.str(), Catch::Matches("(.|\n)*\\[000\\][^\n]*sched_wakeup_new: comm=a pid=[0-9]+ prio=120 "
                                       "target_cpu=001\n(.|\n)*"));
}
