// Group scheduling (CONFIG_FAIR_GROUP_SCHED), Linux 6.12 fair.c: cpu
// cgroups with a cpu weight as levels of the EEVDF hierarchy, their shares
// spread over the CPUs by load. The schedules are worked by hand from
// 6.12.19 in docs/fair_group_sched.md ("Concrete test scenarios", T1-T5).
#include <catch2/catch.hpp>

#include "models/config/config.h"
#include "models/kernel/sched/fair_pelt.h"
#include "models/kernel/sched/weights.h"
#include "models/errors.h"
#include "config_test_util.h"
#include "sched_test_util.h"

using namespace schedlab;
using namespace schedlab::testing;

namespace {

KernelParams::CpuCgroup weighted(const std::string& name, int64_t cpu_weight, const std::string& parent = "") {
  KernelParams::CpuCgroup c;
  c.name = name;
  c.parent = parent;
  c.cpu_weight = cpu_weight;
  return c;
}

TaskSpec in_group(TaskSpec t, const std::string& group) {
  t.cgroup = group;
  return t;
}

double cpu_s(const RunResult& r, const std::string& comm) { return metrics_of(r, comm).cpu_time.to_s(); }

// One CPU, group A (cpu.weight 100) and one periodic task t, in A or in
// the root group: the PELT comparisons' pair of runs.
ScenarioParams periodic_task_in(bool in_group_a, Time run, Time sleep, Time duration) {
  ScenarioParams p = exact_scenario("6.12", 250);
  p.kernel.cgroups = {weighted("A", 100)};
  p.tasks = {task("t", {ev_run(run), ev_sleep(sleep)})};
  if (in_group_a) p.tasks[0].cgroup = "A";
  p.duration = duration;
  return p;
}

}  // namespace

// T1, on 6.12.19, 6.18.35, 6.6.63 and (the long run; its steps below)
// 6.1.166. 6.12 (and 6.18, whose differences do not arise: the forks come before the first pick, nothing sleeps, the
// protected slice of a group entity ends at its deadline as RUN_TO_PARITY's
// does): the root alternates A and B in 3 ms
// turns (a group entity's deadline is a full slice: above the task it is
// enqueued as a wake-up); inside B the tasks take 2 ms slices after their
// half-slice first deadline. 6.6: its pick keeps curr on a deadline tie
// (pick_eevdf() replaces its choice only with a strictly earlier
// deadline) and a new task's first deadline is a whole slice. Worked by
// hand (virtual ms; every weight 1024, so virtual = real time at each
// level): at 0, A(v0 d3) and B(v0 d3) tie and the tree search takes A, the
// node inserted first. At 3, A(v3 d6) is ineligible (V 1.5): B; in B the
// three tasks tie at d3 and the tree (b2 over b1, b3) yields its left
// subtree's b1. At 6, B(v3 d6, curr) ties A(v3 d6): curr B stays; in B, b1
// (v3) is ineligible (V 1): b2. At 9, B(v6) is ineligible (V 4.5): A.
// At 12, A(v6 d9, curr) ties B(v6 d9): A stays. At 15, A(v9) is
// ineligible: B, where only b3 (v0) is eligible (V 2). At 18 B (curr)
// and b3 (curr) keep their ties; at 21 B (v12) is ineligible: A.
TEST_CASE("T1: two groups of equal weight split the CPU, whatever their task counts", "[fair][cgroup]") {
  const std::string version = GENERATE(as<std::string>(), "6.12", "6.6", "6.18", "6.1");
  ScenarioParams p = exact_scenario(version, 1000);
  p.kernel.base_slice = Time::ms(3);
  p.kernel.cgroups = {weighted("A", 100), weighted("B", 100)};
  p.tasks = {in_group(hog("a"), "A"), in_group(hog("b1"), "B"), in_group(hog("b2"), "B"), in_group(hog("b3"), "B")};
  if (version != "6.1") SECTION("the first 21 ms, step by step (6.1's CFS: below)") {
    p.duration = Time::ms(21);
    const SwitchLog log = run_logging_switches(p);
    const std::vector<std::pair<int64_t, std::string>> want =
        version != "6.6"
            ? std::vector<std::pair<int64_t, std::string>>{{0, "a"},         {3000000, "b1"},  {5000000, "b2"},
                                                           {6000000, "a"},   {9000000, "b3"},  {11000000, "b2"},
                                                           {12000000, "a"},  {15000000, "b1"}, {18000000, "a"}}
            : std::vector<std::pair<int64_t, std::string>>{
                  {0, "a"}, {3000000, "b1"}, {6000000, "b2"}, {9000000, "a"}, {15000000, "b3"}, {21000000, "a"}};
    CHECK(log.runs_until(Time::ms(version != "6.6" ? 20 : 21)) == want);
  }
  SECTION("10 s: A's one task gets half, B's three share the other half") {
    p.kernel.hz = 250;
    p.duration = Time::s(10);
    System sys(p, 1);
    sys.run();
    const RunResult r = sys.result();
    CHECK(std::abs(cpu_s(r, "a") - 5.0) <= 0.004);
    CHECK(std::abs(cpu_s(r, "b1") + cpu_s(r, "b2") + cpu_s(r, "b3") - 5.0) <= 0.004);
    for (const char* b : {"b1", "b2", "b3"}) CHECK(std::abs(cpu_s(r, b) - 5.0 / 3) <= 0.008);
  }
  SECTION("control: the same tasks in the root group take a quarter each") {
    p.kernel.hz = 250;
    p.duration = Time::s(10);
    for (TaskSpec& t : p.tasks) t.cgroup.clear();
    System sys(p, 1);
    sys.run();
    const RunResult r = sys.result();
    for (const char* t : {"a", "b1", "b2", "b3"}) CHECK(std::abs(cpu_s(r, t) - 2.5) <= 0.008);
  }
}

TEST_CASE("T2: group weights against a root task, and nested groups", "[fair][cgroup]") {
  const std::string version = GENERATE(as<std::string>(), "6.12", "6.1");
  ScenarioParams p = exact_scenario(version, 250);
  SECTION("root task : A (cpu.weight 200) : B (cpu.weight 50) = 1024 : 2048 : 512") {
    p.duration = Time::s(10);
    p.kernel.cgroups = {weighted("A", 200), weighted("B", 50)};
    p.tasks = {hog("r"), in_group(hog("a1"), "A"), in_group(hog("b1"), "B"), in_group(hog("b2"), "B")};
    System sys(p, 1);
    sys.run();
    const RunResult r = sys.result();
    CHECK(std::abs(cpu_s(r, "r") - 10.0 * 1024 / 3584) <= 0.008);
    CHECK(std::abs(cpu_s(r, "a1") - 10.0 * 2048 / 3584) <= 0.008);
    CHECK(std::abs(cpu_s(r, "b1") - 10.0 * 256 / 3584) <= 0.008);
    CHECK(std::abs(cpu_s(r, "b2") - 10.0 * 256 / 3584) <= 0.008);
    // B's entity has weight 512 and the inverse __update_inv_weight()
    // derives (WMULT_CONST / 512), not the nice table's.
  }
  SECTION("P holds p1 and child group C (c1, c2); Q holds q1: halves, quarters, eighths") {
    p.duration = Time::s(8);
    p.kernel.cgroups = {weighted("P", 100), weighted("C", 100, "P"), weighted("Q", 100)};
    p.tasks = {in_group(hog("p1"), "P"), in_group(hog("c1"), "C"), in_group(hog("c2"), "C"),
               in_group(hog("q1"), "Q")};
    System sys(p, 1);
    sys.run();
    const RunResult r = sys.result();
    CHECK(std::abs(cpu_s(r, "q1") - 4.0) <= 0.008);
    CHECK(std::abs(cpu_s(r, "p1") - 2.0) <= 0.008);
    CHECK(std::abs(cpu_s(r, "c1") - 1.0) <= 0.008);
    CHECK(std::abs(cpu_s(r, "c2") - 1.0) <= 0.008);
    const Rq& rq = sys.kernel().rq(0);
    CHECK(rq.cfs.nr_running == 2);  // the entities of P and Q
    CHECK(rq.cfs.h_nr_running == 4);
  }
}

TEST_CASE("T3: a group entity whose last task sleeps ineligible stays queued, delayed", "[fair][cgroup]") {
  ScenarioParams p = exact_scenario("6.12", 1000);
  p.kernel.base_slice = Time::ms(3);
  p.kernel.cgroups = {weighted("A", 100), weighted("B", 100)};
  p.tasks = {in_group(task("b", {ev_run(Time::ms(2)), ev_sleep(Time::ms(10))}), "B"), in_group(hog("a"), "A")};
  p.duration = Time::ms(30);
  System sys(p, 1);
  SwitchLog log;
  sys.add_observer(&log);
  Kernel& k = sys.kernel();
  const Task& b = find_task(k, "b");
  const Rq& rq = k.rq(0);
  k.run_until(Time::us(2500));
  // At 2 ms b blocks: alone in B it is eligible and leaves at once; B's
  // entity, ineligible at the root (V = 1 ms < its 2 ms), is delayed.
  CHECK_FALSE(b.on_rq);
  CHECK_FALSE(b.se.sched_delayed);
  CHECK(rq.cfs.nr_running == 2);
  CHECK(rq.cfs.h_nr_running == 1);
  CHECK(rq.cfs.h_nr_delayed == 0);
  k.run_until(Time::us(4500));
  CHECK(rq.cfs.nr_running == 2);  // not picked yet: a keeps its slice in A
  k.run_until(Time::us(5500));
  // At 5 ms A's entity needs a new deadline; the pick meets B's delayed
  // entity first and dequeues it for good, then runs a again.
  CHECK(rq.cfs.nr_running == 1);
  k.run_until(Time::ms(30));
  // a runs without a break from 2 ms until b wakes at 12 ms (the pick at
  // 5 ms that removed B's entity kept a: no context switch).
  const std::vector<std::pair<int64_t, std::string>> want = {{0, "b"}, {2000000, "a"}};
  CHECK(log.runs_until(Time::ms(12)) == want);
}

TEST_CASE("T3 control: without groups the task itself is delayed and leaves at the next pick", "[fair][cgroup]") {
  ScenarioParams p = exact_scenario("6.12", 1000);
  p.kernel.base_slice = Time::ms(3);
  p.tasks = {task("b", {ev_run(Time::ms(2)), ev_sleep(Time::ms(10))}), hog("a")};
  p.duration = Time::ms(30);
  System sys(p, 1);
  Kernel& k = sys.kernel();
  const Task& b = find_task(k, "b");
  k.run_until(Time::us(2500));
  CHECK(b.on_rq);
  CHECK(b.se.sched_delayed);
  k.run_until(Time::us(4500));
  CHECK_FALSE(b.on_rq);  // a's new deadline at 4 ms asked for a pick
}

// 6.1.166's CFS with groups, worked by hand (one CPU: sched_latency 6 ms,
// min_granularity 0.75 ms, wakeup_granularity 1 ms; every weight 1024, so
// virtual = real time at each level; ticks every ms). Forks: a.v = 6 (its
// START_DEBIT vslice through A's entity alone on the root); b1 3, b2 1.5,
// b3 1 (the period's share through B's level and the root's); the group
// entities are placed as wake-ups, at max(0, min_vruntime - 3) = 0. At 0
// A and B tie and A, inserted first, is leftmost. The slices come out of
// __calc_delta()'s inverse weights a little short: the root's is
// period(4) x 1024/2048 = 2.999998 ms, B's tasks' 6 x 1/3 x 1/2 = 0.999999
// ms, so a group goes at the tick that finds 3 ms run and a task of B at
// every tick. A group entity picked again above a switch between its
// tasks is not set again, so its slice runs on: B, set at 3, goes at 6
// after b3, b2, b3. At 3: B (v0) -> b3 (v1, leftmost); at 4 b3 (v2) gives
// way to b2 (1.5); at 5 b3 (2) is back; at 6 A (v3, in the tree) wins its
// tie with curr B (v3); at 9 b2 (2.5); at 10 b1 (3: ahead of b3's 3,
// inserted later); at 11 b3; at 12 A; and so on, every 6 ms.
TEST_CASE("6.1: T1's groups on CFS, step by step", "[fair][cgroup][cfs]") {
  ScenarioParams p = exact_scenario("6.1", 1000);
  p.kernel.cgroups = {weighted("A", 100), weighted("B", 100)};
  p.tasks = {in_group(hog("a"), "A"), in_group(hog("b1"), "B"), in_group(hog("b2"), "B"), in_group(hog("b3"), "B")};
  p.duration = Time::ms(25);
  const SwitchLog log = run_logging_switches(p);
  const std::vector<std::pair<int64_t, std::string>> want = {
      {0, "a"},         {3000000, "b3"},  {4000000, "b2"},  {5000000, "b3"},  {6000000, "a"},   {9000000, "b2"},
      {10000000, "b1"}, {11000000, "b3"}, {12000000, "a"},  {15000000, "b2"}, {16000000, "b1"}, {17000000, "b3"},
      {18000000, "a"},  {21000000, "b2"}, {22000000, "b1"}, {23000000, "b3"}, {24000000, "a"}};
  CHECK(log.runs_until(Time::ms(24)) == want);
}

// 6.1's dequeue_task_fair(): a task that sleeps while its group stays
// queued makes the group the next buddy, whatever NEXT_BUDDY says, and
// the root then keeps the group within wakeup_granularity of the leftmost.
// Worked by hand (one CPU, HZ 100: no tick before 10 ms): forks g1 (v 6),
// g2 (v 3: a share of the period through G, the root holding G alone) and
// r (v 3, beside G); G's entity is placed at 0. G -> g2 runs from 0 and
// sleeps at 3.5 ms: G (v 3.5) is behind r (v 3) by 0.5 ms < 1 ms, so the
// buddy keeps G and g1 runs; without it r, the leftmost, would. G was
// picked again above the switch g2 -> g1, so the root's buddy stays until
// the tick at 10 ms finds G past its 3 ms slice: r.
TEST_CASE("6.1: a task's sleep makes its group the next buddy", "[fair][cgroup][cfs]") {
  ScenarioParams p = exact_scenario("6.1", 100);
  p.kernel.cgroups = {weighted("G", 100)};
  p.tasks = {in_group(hog("g1"), "G"), in_group(task("g2", {ev_run(Time::us(3500)), ev_sleep(Time::ms(100))}), "G"),
             hog("r")};
  p.duration = Time::ms(12);
  SECTION("the schedule") {
    const SwitchLog log = run_logging_switches(p);
    const std::vector<std::pair<int64_t, std::string>> want = {{0, "g2"}, {3500000, "g1"}, {10000000, "r"}};
    CHECK(log.runs_until(Time::ms(11)) == want);
  }
  SECTION("the root's next buddy is G's entity between the sleep and the tick") {
    System sys(p, 1);
    Kernel& k = sys.kernel();
    k.run_until(Time::ms(3));
    CHECK(k.rq(0).cfs.next == nullptr);
    k.run_until(Time::ms(5));
    REQUIRE(k.rq(0).cfs.next != nullptr);
    CHECK(k.rq(0).cfs.next->my_q != nullptr);
    CHECK(k.rq(0).cfs.next == k.rq(0).cfs.curr);
    k.run_until(Time::ms(11));
    CHECK(k.rq(0).cfs.next == nullptr);
  }
}

TEST_CASE("cpu weights are refused where the model does not follow the kernel yet", "[fair][cgroup]") {
  ScenarioParams p = exact_scenario("6.12", 1000);
  p.kernel.cgroups = {weighted("A", 100)};
  p.tasks = {in_group(hog("a"), "A")};
  SECTION("6.6 with 6.12's delayed dequeue switched on") {
    p.kernel.version = "6.6";
    p.kernel.features["DELAY_DEQUEUE"] = true;
    CHECK_THROWS_AS(System(p, 1), ModelError);
  }
  SECTION("without CONFIG_FAIR_GROUP_SCHED") {
    p.kernel.fair_group_sched = false;
    CHECK_THROWS_AS(System(p, 1), ModelError);
  }
  SECTION("a weighted group under a group with no weight") {
    KernelParams::CpuCgroup plain;
    plain.name = "plain";
    p.kernel.cgroups = {plain, weighted("A", 100, "plain")};
    CHECK_THROWS_AS(System(p, 1), ModelError);
  }
  SECTION("cpu.weight out of range") {
    p.kernel.cgroups[0].cpu_weight = 0;
    CHECK_THROWS_AS(System(p, 1), ModelError);
  }
}

TEST_CASE("PELT: a group's tasks reach the root's signals through its entity", "[fair][cgroup][pelt]") {
  // post_init_entity_util_avg(): a new task on an idle CPU starts at half
  // the spare capacity, 512, attached to its group's cfs_rq; propagation
  // carries it to the group entity and the root at once, as if the task
  // were on the root itself.
  for (bool grouped : {false, true}) {
    System sys(periodic_task_in(grouped, Time::ms(4), Time::ms(12), Time::s(2)), 1);
    Kernel& k = sys.kernel();
    const Rq& rq = k.rq(0);
    k.run_until(Time::us(1));
    INFO((grouped ? "in group A" : "in the root group"));
    CHECK(rq.cfs.avg.util_avg == 512);
    if (grouped) {
      const SchedEntity& gse = *find_task(k, "t").se.parent;
      CHECK(gse.avg.util_avg == 512);
      CHECK(gse.my_q->avg.util_avg == 512);
    }
    // A 25% duty cycle settles near 256 at the root either way.
    k.run_until(Time::s(2));
    CHECK(rq.cfs.avg.util_avg > 180);
    CHECK(rq.cfs.avg.util_avg < 330);
  }
}

TEST_CASE("PELT: with a group, the root's util follows the flat run's within a few units", "[fair][cgroup][pelt]") {
  // The group entity runs exactly when its task runs, so its own util_avg
  // accumulates as the task's does; the root sums it.
  std::vector<uint64_t> flat, grouped;
  for (bool in_group_a : {false, true}) {
    System sys(periodic_task_in(in_group_a, Time::ms(3), Time::ms(7), Time::s(1)), 1);
    Kernel& k = sys.kernel();
    for (int ms = 100; ms <= 1000; ms += 100) {
      k.run_until(Time::ms(ms));
      (in_group_a ? grouped : flat).push_back(k.rq(0).cfs.avg.util_avg);
    }
  }
  for (size_t i = 0; i < flat.size(); ++i) {
    INFO("t = " << (i + 1) * 100 << " ms: flat " << flat[i] << ", grouped " << grouped[i]);
    CHECK(std::llabs(static_cast<long long>(flat[i]) - static_cast<long long>(grouped[i])) <= 4);
  }
}

TEST_CASE("YAML: cpu_weight and cpu_shares on cgroups", "[config][cgroup]") {
  const std::string head = "kernel: {version: \"6.12\"}\nplatform: {cpus: 1}\n";
  SECTION("both keys") {
    ConfigError e = error_of(head + "cgroups:\n  - {name: A, cpu_weight: 100, cpu_shares: 1024}\n" + kOneTask);
    CHECK(e.key_path() == "cgroups[0].cpu_shares");
    CHECK_THAT(e.message(), Catch::Contains("not both"));
  }
  SECTION("out of range") {
    ConfigError e = error_of(head + "cgroups:\n  - {name: A, cpu_weight: 0}\n" + kOneTask);
    CHECK(e.key_path() == "cgroups[0].cpu_weight");
    ConfigError s = error_of(head + "cgroups:\n  - {name: A, cpu_shares: 1}\n" + kOneTask);
    CHECK(s.key_path() == "cgroups[0].cpu_shares");
  }
  SECTION("without CONFIG_FAIR_GROUP_SCHED") {
    ConfigError e = error_of("kernel: {version: \"6.12\", fair_group_sched: false}\ncgroups:\n"
                             "  - {name: A, cpu_weight: 100}\n" +
                             std::string(kOneTask));
    CHECK_THAT(e.message(), Catch::Contains("fair_group_sched"));
  }
  SECTION("device threads join a cgroup: a binder pool and a display thread") {
    const std::string yaml = head +
                             "cgroups:\n  - {name: A, cpu_weight: 100}\n"
                             "binder_procs:\n  - {name: svc, threads: 2, cgroup: A}\n"
                             "devices:\n  - {name: d, model: display, ui_thread: {comm: ui, cgroup: A}}\n" +
                             kOneTask;
    ScenarioParams s = load_scenario_yaml(yaml, "test.yaml");
    REQUIRE(s.binder_procs.size() == 1);
    CHECK(s.binder_procs[0].cgroup == "A");
    s.duration = Time::ms(5);
    System sys(s, 1);
    Kernel& k = sys.kernel();
    const int a = k.find_task_group("A");
    CHECK(find_task(k, "binder:svc_1").task_group == a);
    CHECK(find_task(k, "binder:svc_2").task_group == a);
    CHECK(find_task(k, "ui").task_group == a);
    CHECK(find_task(k, "RenderThread").task_group == 0);
    ConfigError e = error_of(head + "binder_procs:\n  - {name: svc, cgroup: nope}\n" + kOneTask);
    CHECK(e.key_path() == "binder_procs[0].cgroup");
  }
  SECTION("read into the parameters") {
    ScenarioParams s = load_scenario_yaml(head + "cgroups:\n  - {name: A, cpu_weight: 200}\n  - {name: B, cpu_shares: 52}\n" +
                                              kOneTask,
                                          "test.yaml");
    REQUIRE(s.kernel.cgroups.size() == 2);
    CHECK(s.kernel.cgroups[0].cpu_weight == 200);
    CHECK(s.kernel.cgroups[1].cpu_shares == 52);
  }
}

// A run-time write of cpu.weight (cpu_weight_write_u64() ->
// sched_group_set_shares()): A and B (cpu.weight 100 each) split the CPU
// until 5 s, when root task w writes B's cpu.weight 300 (3072 shares) --
// or cpu.shares 3072, the same -- and B's queued entity is reweighted at
// once: a gets 2.5 + 5/4 s, b 2.5 + 15/4 s of the 10. The write's own
// instant costs nothing.
TEST_CASE("a run-time cpu.weight or cpu.shares write reweights the group at once", "[fair][cgroup]") {
  const bool as_shares = GENERATE(false, true);
  const std::string version = GENERATE(as<std::string>(), "6.1", "6.6", "6.12", "6.18");
  ScenarioParams p = exact_scenario(version, 250);
  p.duration = Time::s(10);
  p.kernel.cgroups = {weighted("A", 100), weighted("B", 100)};
  EventSpec write;
  write.kind = EventSpec::Kind::kCpuWeight;
  write.name = "B";
  write.cpu_weight = as_shares ? 3072 : 300;
  write.cpu_weight_is_shares = as_shares;
  p.tasks = {in_group(hog("a"), "A"), in_group(hog("b"), "B"),
             task("w", {ev_sleep(Time::s(5)), write, ev_sleep(Time::s(100))})};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::s(5) - Time::ms(1));
  CHECK(k.fair_group_shares(2) == uint64_t{1024} << 10);
  k.run_until(Time::s(5) + Time::ms(10));  // w runs within a tick of its wake-up
  CHECK(k.fair_group_shares(2) == uint64_t{3072} << 10);
  CHECK(k.task_group_cfs_rq(2, 0).se->weight == 3072);  // on one CPU, the whole shares
  sys.run();
  const RunResult r = sys.result();
  CHECK(std::abs(cpu_s(r, "a") - 3.75) <= 0.01);
  CHECK(std::abs(cpu_s(r, "b") - 6.25) <= 0.01);
}

// 6.18.35's can_migrate_task() -> task_is_ineligible_on_dst_cpu(): with
// groups the queue looked at on dst is the task's group's cfs_rq there
// (tg->cfs_rq[dst]), not dst's root. g0 and g1 (group G) share cpu0, so
// the running one is ineligible; cpu1 runs r, a root task. G has nothing
// queued on cpu1: the ineligible task may be considered. With g2 (G) on
// cpu1 too, it stays.
TEST_CASE("6.18: the balancer's eligibility test looks at the task's group queue on dst", "[fair][cgroup][smp]") {
  const bool g_on_dst = GENERATE(false, true);
  ScenarioParams p = exact_scenario("6.18", 1000, 2);
  p.kernel.base_slice = Time::ms(3);  // a slice of several ticks: curr's vruntime moves past V while it runs
  p.kernel.cgroups = {weighted("G", 100)};
  p.tasks = {on_cpus(in_group(hog("g0"), "G"), {0}), on_cpus(in_group(hog("g1"), "G"), {0}), on_cpus(hog("r"), {1})};
  if (g_on_dst) p.tasks.push_back(on_cpus(in_group(hog("g2"), "G"), {1}));
  p.duration = Time::s(1);
  System sys(p, 1);
  Kernel& k = sys.kernel();
  // A moment when cpu0's running task has run past its share (lag < 0).
  Time t = Time::ms(500);
  while (k.fair_entity_eligible(*k.rq(0).curr) && t < Time::ms(600)) k.run_until(t += Time::us(250));
  Task& running = *k.rq(0).curr;
  REQUIRE(running.comm.rfind("g", 0) == 0);
  REQUIRE_FALSE(k.fair_entity_eligible(running));
  REQUIRE(k.rq(1).sd_nr_balance_failed == 0);
  REQUIRE(k.rq(1).cfs.nr_running > 0);
  CHECK(k.lb_may_consider(running, 1, false) == !g_on_dst);
}

// dequeue_entities() stopped by a delayed group entity: g (group G) sleeps
// while G's entity is ineligible, so g leaves G's cfs_rq and G's entity
// stays queued, delayed. The second walk starts at that entity with the
// slice the first one carried: 6.12.19 hands it 0 (a task's sleep carries
// none); 6.18.35 ("Fix se->slice being set to U64_MAX") its own level's
// smallest slice, the base slice (3 ms) of r and of G itself.
TEST_CASE("a delayed group entity's slice: 0 on 6.12.19, its level's smallest on 6.18", "[fair][cgroup]") {
  const std::string version = GENERATE(as<std::string>(), "6.12", "6.18");
  ScenarioParams p = exact_scenario(version, 1000);
  p.kernel.base_slice = Time::ms(3);
  p.kernel.cgroups = {weighted("G", 100)};
  p.tasks = {hog("r"), in_group(task("g", {ev_run(Time::ms(5)), ev_sleep(Time::ms(7))}), "G")};
  p.duration = Time::s(1);
  System sys(p, 1);
  Kernel& k = sys.kernel();
  const SchedEntity& gse = *k.task_group_cfs_rq(1, 0).se;
  Time t = Time::zero();
  while (!gse.sched_delayed && t < Time::ms(500)) k.run_until(t += Time::us(100));
  REQUIRE(gse.sched_delayed);
  CHECK(k.task_group_cfs_rq(1, 0).nr_running == 0);
  CHECK(gse.slice == (version == "6.12" ? 0 : 3000000));
}

TEST_CASE("YAML: the cpu_weight event", "[config][cgroup]") {
  const std::string head = "kernel: {version: \"6.12\"}\nplatform: {cpus: 1}\n"
                           "cgroups:\n  - {name: A, cpu_weight: 100}\n  - {name: plain}\n";
  const auto with_event = [&](const std::string& event) {
    return head + "tasks:\n  - {name: t, events: [{cpu_weight: " + event + "}]}\n";
  };
  SECTION("read: weight or shares") {
    ScenarioParams s = load_scenario_yaml(with_event("{group: A, weight: 250}"), "test.yaml");
    const EventSpec& e = s.tasks[0].phases[0].events[0];
    CHECK(e.kind == EventSpec::Kind::kCpuWeight);
    CHECK(e.name == "A");
    CHECK(e.cpu_weight == 250);
    CHECK_FALSE(e.cpu_weight_is_shares);
    ScenarioParams v1 = load_scenario_yaml(with_event("{group: A, shares: 52}"), "test.yaml");
    CHECK(v1.tasks[0].phases[0].events[0].cpu_weight_is_shares);
  }
  SECTION("a group that is not a level of the fair hierarchy") {
    ConfigError e = error_of(with_event("{group: plain, weight: 100}"));
    CHECK(e.key_path() == "tasks[0].events[0].cpu_weight.group");
    CHECK_THAT(e.message(), Catch::Contains("A"));
  }
  SECTION("both, neither, out of range") {
    CHECK_THAT(error_of(with_event("{group: A, weight: 100, shares: 1024}")).message(), Catch::Contains("one of them"));
    CHECK_THAT(error_of(with_event("{group: A}")).message(), Catch::Contains("one of them"));
    CHECK(error_of(with_event("{group: A, weight: 10001}")).key_path() == "tasks[0].events[0].cpu_weight.weight");
    CHECK(error_of(with_event("{group: A, shares: 1}")).key_path() == "tasks[0].events[0].cpu_weight.shares");
  }
}

TEST_CASE("a task moving between weighted groups at run time takes its share with it", "[fair][cgroup]") {
  // task_change_group_fair(): z runs 0.5 s of CPU in A (a quarter of the
  // CPU beside x, while y has B's half: 2 s), then moves itself to B. From
  // then on A's half is x's, and y and z share B's. 6.1 also carries z's
  // vruntime across (relative to A's queue, then to B's).
  const std::string version = GENERATE(as<std::string>(), "6.12", "6.1");
  ScenarioParams p = exact_scenario(version, 250);
  p.duration = Time::s(4);
  p.kernel.cgroups = {weighted("A", 100), weighted("B", 100)};
  TaskSpec z = in_group(task("z", {}), "A");
  z.phases.clear();
  PhaseSpec first, rest;
  first.loop = 1;
  first.events = {ev_run(Time::ms(500)), ev_cgroup("B")};
  rest.loop = -1;
  rest.events = {ev_run(Time::s(1000))};
  z.phases = {first, rest};
  p.tasks = {in_group(hog("x"), "A"), in_group(hog("y"), "B"), z};
  System sys(p, 1);
  sys.run();
  const RunResult r = sys.result();
  CHECK(std::abs(cpu_s(r, "x") - 1.5) <= 0.012);
  CHECK(std::abs(cpu_s(r, "y") - 1.5) <= 0.012);
  CHECK(std::abs(cpu_s(r, "z") - 1.0) <= 0.012);
  const Task& zt = find_task(sys.kernel(), "z");
  CHECK(zt.se.parent == sys.kernel().task_group_cfs_rq(2, 0).se);  // B's entity
}

TEST_CASE("the fair server's pick puts and sets every level, the fair class's own pick only the changed ones",
          "[fair][cgroup]") {
  // A FIFO hog that runs 1 s and sleeps 0.5 s starves group A's two hogs:
  // the deferred fair server serves them (put_prev_set_next_task(): A's
  // entity is set again, prev_sum_exec_runtime taken, at each switch
  // between a1 and a2); while the FIFO task sleeps, pick_next_task_fair() switches
  // within A and leaves A's entity alone.
  ScenarioParams p = exact_scenario("6.12", 250);
  p.duration = Time::s(3);
  p.kernel.cgroups = {weighted("A", 100)};
  p.tasks = {task("rt", {ev_run(Time::s(1)), ev_sleep(Time::ms(500))}, Policy::kFifo, 10),
             in_group(hog("a1"), "A"), in_group(hog("a2"), "A")};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  struct Probe : SchedObserver {
    Kernel* k = nullptr;
    int server_refreshed = 0, server_stale = 0, class_refreshed = 0, class_stale = 0;
    void on_switch(Time t, int cpu, const Task& prev, TaskState, const Task& next) override {
      if (prev.comm[0] != 'a' || next.comm[0] != 'a') return;
      const Rq& rq = k->rq(cpu);
      const SchedEntity& group = *next.se.parent;
      const bool refreshed = group.prev_sum_exec_runtime == group.sum_exec_runtime;  // set_next_entity() ran
      (rq.fair_server_picked ? (refreshed ? server_refreshed : server_stale)
                             : (refreshed ? class_refreshed : class_stale))++;
    }
  } probe;
  probe.k = &k;
  sys.add_observer(&probe);
  sys.run();
  INFO("server: " << probe.server_refreshed << " refreshed, " << probe.server_stale << " stale; class: "
                  << probe.class_refreshed << " refreshed, " << probe.class_stale << " stale");
  CHECK(probe.server_refreshed > 0);
  CHECK(probe.server_stale == 0);
  CHECK(probe.class_stale > 0);
  CHECK(probe.class_refreshed == 0);
}

TEST_CASE("a move between two groups without a cpu weight changes no signal", "[fair][cgroup][pelt]") {
  // Both queue on the root cfs_rq (the model's Pixel placement), so the
  // move is a no-op for PELT whether or not another group is weighted.
  std::vector<uint64_t> util;
  for (bool move : {false, true}) {
    ScenarioParams p = exact_scenario("6.12", 250);
    p.duration = Time::ms(200);
    KernelParams::CpuCgroup u1, u2;
    u1.name = "U1";
    u2.name = "U2";
    p.kernel.cgroups = {u1, u2, weighted("W", 100)};
    TaskSpec m = in_group(task("m", {ev_run(Time::ms(3)), ev_sleep(Time::ms(5))}), "U1");
    if (move) m.phases[0].events.push_back(ev_cgroup("U2"));
    p.tasks = {m, in_group(task("w", {ev_run(Time::ms(2)), ev_sleep(Time::ms(7))}), "W")};
    System sys(p, 1);
    sys.kernel().run_until(Time::ms(200));
    util.push_back(sys.kernel().rq(0).cfs.avg.util_avg);
  }
  CHECK(util[0] == util[1]);
}

TEST_CASE("T4: a group's shares on a CPU follow its part of the group's load", "[fair][cgroup][smp]") {
  // Two CPUs, HZ=250. G (1024 shares) holds g0 on cpu0 and g1 on cpu1;
  // the root task r0 shares cpu0. G's load is about 1023 on each CPU, so
  // calc_group_shares() on cpu0 gives 1048576 * 1024 / (2046 - 1023 + 1024),
  // a weight of 512: cpu0 splits r0 : G = 1024 : 512.
  ScenarioParams p = exact_scenario("6.12", 250, 2);
  p.duration = Time::s(10);
  p.kernel.cgroups = {weighted("G", 100)};
  const int g = 1;
  SECTION("G on both CPUs") {
    p.tasks = {on_cpus(hog("r0"), {0}), on_cpus(in_group(hog("g0"), "G"), {0}), on_cpus(in_group(hog("g1"), "G"), {1})};
    System sys(p, 1);
    Kernel& k = sys.kernel();
    k.run_until(Time::s(2));
    const CfsRq& g_cpu0 = k.task_group_cfs_rq(g, 0);
    const CfsRq& g_cpu1 = k.task_group_cfs_rq(g, 1);
    CHECK(g_cpu0.avg.load_avg >= 1015);
    CHECK(g_cpu1.avg.load_avg >= 1015);
    // tg->load_avg is the sum of what each cfs_rq last published.
    CHECK(k.fair_group_load_avg(g) ==
          static_cast<int64_t>(g_cpu0.tg_load_avg_contrib + g_cpu1.tg_load_avg_contrib));
    CHECK(std::abs(k.fair_group_load_avg(g) - 2046) <= 16);
    CHECK(g_cpu0.se->weight >= 510);
    CHECK(g_cpu0.se->weight <= 514);
    // Alone on cpu1, G's entity there has the same weight: the shares are
    // split by load, not by competition.
    CHECK(g_cpu1.se->weight == g_cpu0.se->weight);
    sys.run();
    const RunResult r = sys.result();
    CHECK(std::abs(cpu_s(r, "r0") - 10.0 * 2 / 3) <= 0.067);
    CHECK(std::abs(cpu_s(r, "g0") - 10.0 / 3) <= 0.034);
    CHECK(std::abs(cpu_s(r, "g1") - 10.0) <= 0.001);
  }
  SECTION("control: G on cpu0 only gets all its shares there") {
    p.tasks = {on_cpus(hog("r0"), {0}), on_cpus(in_group(hog("g0"), "G"), {0})};
    System sys(p, 1);
    sys.run();
    const RunResult r = sys.result();
    CHECK(sys.kernel().task_group_cfs_rq(g, 0).se->weight == 1024);
    CHECK(std::abs(cpu_s(r, "r0") - 5.0) <= 0.008);
    CHECK(std::abs(cpu_s(r, "g0") - 5.0) <= 0.008);
  }
}

// update_cfs_group() when a group's last task on a CPU sleeps: 6.12 keeps
// the group entity's weight ("preserve its weight"), 6.6.63 reweights it
// from the group's blocked load at once. G holds a hog g0 on cpu0 and g1
// on cpu1 (4 ms of every 10): queued, G's entity on cpu1 has about
// 1024 * 1024 / (1023 + 1024) = 512; empty, calc_group_shares() sees only
// the blocked load (about 400): about 1024 * 400 / (1023 + 400) = 290.
TEST_CASE("an emptied group entity keeps its weight on 6.12 and is reweighted on 6.6 and 6.1", "[fair][cgroup][smp]") {
  const std::string version = GENERATE(as<std::string>(), "6.1", "6.6", "6.12");
  ScenarioParams p = exact_scenario(version, 250, 2);
  p.kernel.cgroups = {weighted("G", 100)};
  p.tasks = {on_cpus(in_group(hog("g0"), "G"), {0}),
             on_cpus(in_group(task("g1", {ev_run(Time::ms(4)), ev_sleep(Time::ms(6))}), "G"), {1})};
  p.duration = Time::s(3);
  System sys(p, 1);
  Kernel& k = sys.kernel();
  const CfsRq& g_cpu1 = k.task_group_cfs_rq(1, 1);
  k.run_until(Time::us(2003900));  // g1 runs, 100 us before its sleep
  REQUIRE(g_cpu1.load_weight > 0);
  const uint64_t queued_weight = g_cpu1.se->group_weight_scaled;
  CHECK(std::abs(static_cast<int64_t>(scale_load_down(queued_weight)) - 512) <= 8);
  k.run_until(Time::us(2004050));  // g1 slept at 2.004 s
  REQUIRE(g_cpu1.load_weight == 0);
  const uint64_t empty_shares = k.calc_group_shares(g_cpu1);
  CHECK(scale_load_down(empty_shares) < 400);
  if (version != "6.12") {
    CHECK(g_cpu1.se->group_weight_scaled == empty_shares);
    // The entity's load follows its new weight: cpu1's root load falls.
    CHECK(g_cpu1.se->avg.load_avg < 400);
  } else {
    CHECK(g_cpu1.se->group_weight_scaled == queued_weight);
  }
}

// update_tg_load_avg(): 6.12 republishes a CPU's part of tg->load_avg at
// most once per ms; 6.6.63 has no rate limit. g runs 0.5 ms of every
// 3.5 ms: its group's load (about 150) decays past 1/64 over each sleep,
// so both publish at about every wake-up; when the 0.5 ms run crosses a
// 1024 us PELT period boundary the load grows past 1/64 again, and 6.6
// publishes at the sleep, 0.5 ms later, where 6.12 waits.
TEST_CASE("tg->load_avg: published once per ms at most on 6.12, at every 1/64 change on 6.6 and 6.1",
          "[fair][cgroup][pelt]") {
  const std::string version = GENERATE(as<std::string>(), "6.1", "6.6", "6.12");
  ScenarioParams p = exact_scenario(version, 250);
  p.kernel.cgroups = {weighted("G", 100)};
  p.tasks = {in_group(task("g", {ev_run(Time::us(500)), ev_sleep(Time::ms(3))}), "G")};
  p.duration = Time::s(3);
  System sys(p, 1);
  Kernel& k = sys.kernel();
  const CfsRq& g_cfs = k.task_group_cfs_rq(1, 0);
  k.run_until(Time::s(1));
  int64_t last_change = -1, min_gap = INT64_MAX;
  int changes = 0;
  uint64_t contrib = g_cfs.tg_load_avg_contrib;
  for (int64_t t = 1000000000; t < 2000000000; t += 10000) {
    k.run_until(Time::ns(t));
    if (g_cfs.tg_load_avg_contrib == contrib) continue;
    contrib = g_cfs.tg_load_avg_contrib;
    ++changes;
    if (last_change >= 0) min_gap = std::min(min_gap, t - last_change);
    last_change = t;
  }
  CHECK(k.fair_group_load_avg(1) == static_cast<int64_t>(contrib));
  CHECK(changes >= 150);  // 285 periods
  if (version != "6.12")
    CHECK(min_gap == 500000);
  else
    CHECK(min_gap >= 1000000);
}

TEST_CASE("T5: task_h_load() is a group task's share of its group entity's load", "[fair][cgroup][pelt]") {
  // One CPU, G holds four hogs; after 2 s PELT is saturated: the root and
  // G's entity carry about 1024, G's cfs_rq about 4 x 1023. h_load(G) =
  // 1024 * 1023 / 1025, each task's 1023 * that / (4093 + 1): about 255.
  ScenarioParams p = exact_scenario("6.12", 250);
  p.duration = Time::s(3);
  p.kernel.cgroups = {weighted("G", 100)};
  p.tasks = {in_group(hogs("g", 4), "G"), hog("r")};
  p.tasks[1].delay = Time::s(10);  // created, never started within the run
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::s(2) + Time::ms(1));
  Task& t = find_task(k, "g-0");
  const Rq& rq = k.rq(0);
  const CfsRq& gcfs = k.task_group_cfs_rq(1, 0);
  const uint64_t h_load = k.task_h_load(t);
  CHECK(h_load >= 253);
  CHECK(h_load <= 257);
  // The walk down: the root's h_load, then G's as its entity's share.
  CHECK(rq.cfs.h_load == rq.cfs.avg.load_avg);
  CHECK(gcfs.h_load == rq.cfs.h_load * gcfs.se->avg.load_avg / (rq.cfs.avg.load_avg + 1));
  CHECK(h_load == t.se.avg.load_avg * gcfs.h_load / (gcfs.avg.load_avg + 1));
}

TEST_CASE("a group spread over eight CPUs: one task per CPU, an eighth of the shares each", "[fair][cgroup][smp]") {
  // Eight hogs of one group, woken on cpu0: the balancer's walks find
  // them under the group entities (rq->cfs_tasks) and spread them. Each
  // CPU then holds an eighth of G's load: shares 1048576 * 1024 /
  // (8 * 1023 - 1023 + 1024) give each entity a weight of about 128.
  const std::string version = GENERATE(as<std::string>(), "6.12", "6.1");
  ScenarioParams p = exact_scenario(version, 250, 8);
  p.duration = Time::s(2);
  p.kernel.cgroups = {weighted("G", 100)};
  p.tasks = {in_group(hogs("g", 8), "G")};
  System sys(p, 1);
  sys.run();
  Kernel& k = sys.kernel();
  for (int cpu = 0; cpu < 8; ++cpu) {
    INFO("cpu" << cpu);
    const CfsRq& gcfs = k.task_group_cfs_rq(1, cpu);
    CHECK(k.rq(cpu).cfs.h_nr_running == 1);
    CHECK(gcfs.h_nr_running == 1);
    CHECK(gcfs.se->weight >= 126);
    CHECK(gcfs.se->weight <= 130);
  }
  const RunResult r = sys.result();
  for (int i = 0; i < 8; ++i) CHECK(cpu_s(r, "g-" + std::to_string(i)) >= 1.9);
}

TEST_CASE("blocked load: a group idle on a CPU decays there, then leaves the leaf list", "[fair][cgroup][pelt][smp]") {
  // g (in G, on cpu1) runs 200 ms and sleeps; r keeps cpu0 busy, so the
  // nohz idle balance updates cpu1's blocked load while it has some.
  ScenarioParams p = exact_scenario("6.12", 250, 2);
  p.duration = Time::s(4);
  p.kernel.cgroups = {weighted("G", 100)};
  TaskSpec w = on_cpus(task("w", {ev_run(Time::ms(1)), ev_sleep(Time::s(100))}), {1});
  w.delay = Time::s(3);
  p.tasks = {on_cpus(hog("r"), {0}),
             on_cpus(in_group(task("g", {ev_run(Time::ms(200)), ev_sleep(Time::s(100))}), "G"), {1}), w};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(199));
  const CfsRq& gcfs = k.task_group_cfs_rq(1, 1);
  CHECK(gcfs.on_list);
  CHECK(k.rq(1).cfs.leaf_node.prev == &gcfs.leaf_node);  // listed just before its parent, the root
  CHECK(k.fair_group_load_avg(1) > 0);
  k.run_until(Time::ms(2900));
  // The averages reached zero, and with them tg->load_avg (more than a
  // 64th changed) and the CPU's blocked-load flag; the sums have not (a
  // sum under one divider averages to 0), so cfs_rq_is_decayed() keeps
  // the cfs_rq on the list, and nothing updates it any more.
  CHECK(gcfs.avg.load_avg == 0);
  CHECK(gcfs.avg.util_avg == 0);
  CHECK(gcfs.se->avg.util_avg == 0);
  CHECK(k.rq(1).cfs.avg.util_avg == 0);
  CHECK(k.fair_group_load_avg(1) == 0);
  CHECK_FALSE(k.rq(1).has_blocked_load);
  CHECK(gcfs.avg.util_sum > 0);
  CHECK(gcfs.on_list);
  // w's run leaves blocked load on cpu1 again; the next update decays G's
  // sums to zero over the second since, and drops its cfs_rq.
  k.run_until(Time::s(4));
  CHECK(gcfs.avg.util_sum == 0);
  CHECK_FALSE(gcfs.on_list);
}

// The shipped what-if (configs/overlays/aosp_cpu_cgroups.yaml): stock
// AOSP's placement of the pm_wq scenario's threads, devices' threads
// included; kworkers and the FIFO threads stay in the root group.
TEST_CASE("the stock AOSP cpu cgroups overlay places the pm_wq scenario's threads", "[fair][cgroup][config]") {
  const ScenarioParams p = load_scenario_with_overlays(
      std::string(SCHEDLAB_SOURCE_DIR) + "/configs/scenarios/shade_swipe.yaml",
      load_overlay_file(std::string(SCHEDLAB_SOURCE_DIR) + "/configs/overlays/aosp_cpu_cgroups.yaml"), "what-if");
  CHECK(p.warnings.empty());
  ScenarioParams q = p;
  q.duration = Time::ms(50);
  System sys(q, 1);
  Kernel& k = sys.kernel();
  const auto group_of = [&](const std::string& comm) { return k.task_group_name(find_task(k, comm).task_group); };
  CHECK(group_of("ndroid.systemui") == "top-app");
  CHECK(group_of("RenderThread") == "top-app");
  CHECK(group_of("app_worker-0") == "top-app");
  CHECK(group_of("binder:surfaceflinger_1") == "foreground");
  CHECK(group_of("instrumentation") == "foreground");
  CHECK(group_of("binder:system_server_4") == "system");
  CHECK(group_of("InputDispatcher") == "system");
  CHECK(group_of("sysserver-5") == "system");
  CHECK(group_of("bg_hog") == "background");
  CHECK(group_of("surfaceflinger") == "/");
  CHECK(group_of("audio_hal") == "/");
  CHECK(group_of("gpu-worker") == "/");
  sys.run();
  for (const auto& t : k.tasks())
    if (t->comm.rfind("kworker", 0) == 0) CHECK(k.task_group_name(t->task_group) == "/");
}

TEST_CASE("the leaf list keeps the kernel's order: a new branch grows at its head", "[fair][cgroup][pelt][smp]") {
  // list_add_leaf_cfs_rq(): x's group X joins before the root at t=0.
  // P, whose only child C is empty, decays off the list at one of cpu0's
  // blocked-load updates (the balance softirq's) once the load_sum of 1
  // that C's empty entity was attached with has decayed (a few hundred
  // ms). When c wakes in C at 600 ms, C's parent P is not
  // listed, so C goes to the list's head (tmp_alone_branch), and P then
  // goes just before the root: C, X, P, root -- C and P are not
  // neighbours, as in 6.12.
  ScenarioParams p = exact_scenario("6.12", 250, 2);
  p.duration = Time::ms(610);
  p.kernel.cgroups = {weighted("X", 100), weighted("P", 100), weighted("C", 100, "P")};
  TaskSpec c = on_cpus(in_group(task("c", {ev_run(Time::ms(1)), ev_sleep(Time::s(100))}), "C"), {0});
  c.delay = Time::ms(600);
  p.tasks = {on_cpus(in_group(hog("x"), "X"), {0}), c};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(599));
  CHECK_FALSE(k.task_group_cfs_rq(2, 0).on_list);  // P decayed off
  k.run_until(Time::ms(600) + Time::us(500));
  std::vector<std::string> order;
  const Rq& rq = k.rq(0);
  for (const LeafListNode* n = rq.leaf_cfs_rq_list.next; n != &rq.leaf_cfs_rq_list; n = n->next)
    order.push_back(k.task_group_name(n->owner->tg));
  CHECK(order == std::vector<std::string>{"C", "X", "P", "/"});
}

TEST_CASE("a grouped task leaving its CPU on wake-up is removed from its group's cfs_rq there", "[fair][cgroup][pelt][smp]") {
  // migrate_task_rq_fair() -> remove_entity_load_avg(): the removed sums
  // go to cfs_rq_of(se), G's cfs_rq on the old CPU, not the root's; its
  // next update subtracts them and asks G's entity to lose an estimated
  // load_sum, -(removed runnable_avg * divider) >> 10 (add_tg_cfs_propagate()).
  ScenarioParams p = exact_scenario("6.12", 250, 2);
  p.duration = Time::ms(100);
  p.kernel.cgroups = {weighted("G", 100)};
  p.tasks = {on_cpus(in_group(task("g", {ev_run(Time::ms(20)), ev_sleep(Time::s(100))}), "G"), {0})};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(30));
  Task& g = find_task(k, "g");
  CfsRq& gcfs = k.task_group_cfs_rq(1, 0);
  REQUIRE(g.se.cfs_rq == &gcfs);
  REQUIRE(g.se.avg.util_avg > 300);
  fair_migrate_task_pelt(k, g);
  CHECK(gcfs.removed.nr == 1);
  // Removed as of G's last update there; then the task alone decays on
  // over cpu0's idle time (migrate_se_pelt_lag()).
  CHECK(gcfs.removed.util_avg > g.se.avg.util_avg);
  CHECK(gcfs.removed.runnable_avg > 0);
  CHECK(k.rq(0).cfs.removed.nr == 0);
  CHECK(g.se.avg.last_update_time == 0);  // attached afresh wherever it wakes
  const int64_t expected_prop =
      gcfs.prop_runnable_sum + ((-static_cast<int64_t>(gcfs.removed.runnable_avg * get_pelt_divider(gcfs.avg))) >> 10);
  const uint64_t util_before = gcfs.avg.util_avg, removed_util = gcfs.removed.util_avg;
  CHECK(fair_update_cfs_rq(gcfs, gcfs.avg.last_update_time));  // removed only, no time passes
  CHECK(gcfs.avg.util_avg == util_before - std::min(util_before, removed_util));
  CHECK(gcfs.propagate);
  CHECK(gcfs.prop_runnable_sum == expected_prop);
}

// "sched/fair: Fix unfairness caused by stalled tg_load_avg_contrib"
// (6.18.35 has it, 6.12.19 does not): a task leaving its CPU within a
// millisecond of its group cfs_rq's last tg->load_avg update can empty
// the cfs_rq at once (its removed load is all there was), and publishing
// that is rate-limited (update_tg_load_avg(), once per ms). 6.12's
// cfs_rq_is_decayed() then drops the cfs_rq from the leaf list with its
// old contribution still in tg->load_avg, where nothing updates it again;
// 6.18's keeps it listed until a later pass has published the zero.
// g (in G, on cpu0) runs 1 ms in 10 for 100 ms, then 20 ms: its load is
// rising, so its dequeue at 120 ms (a tick) publishes G's load; at
// 120.5 ms it is migrated away (remove_entity_load_avg()). The averages
// removed equal its cfs_rq's (it was alone there), which leaves the sums'
// remainders below one divider; the case the fix is about is the one
// where the task's averages round above its cfs_rq's (the two sums decay
// separately), made here by adding one unit to each removed average: the
// sums then go to 0 at once.
TEST_CASE("6.18 keeps a decayed group cfs_rq listed until its part of tg->load_avg is 0, 6.12 drops it stale",
          "[fair][cgroup][pelt][smp]") {
  for (auto [version, keeps_listed] : {std::pair{"6.12", false}, {"6.18", true}}) {
    INFO(version);
    ScenarioParams p = exact_scenario(version, 250, 2);
    p.duration = Time::ms(200);
    p.kernel.cgroups = {weighted("G", 100)};
    TaskSpec g_spec = phased_task(
        "g", {{10, {ev_run(Time::ms(1)), ev_sleep(Time::ms(9))}}, {1, {ev_run(Time::ms(20)), ev_sleep(Time::s(100))}}});
    p.tasks = {on_cpus(in_group(g_spec, "G"), {0})};
    System sys(p, 1);
    Kernel& k = sys.kernel();
    Rq& rq = k.rq(0);
    CfsRq& gcfs = k.task_group_cfs_rq(1, 0);
    k.run_until(Time::us(120500));
    Task& g = find_task(k, "g");
    REQUIRE(g.state != TaskState::kRunning);
    const uint64_t sched_clock_ns = static_cast<uint64_t>(k.now().count()) + Kernel::kRqClockAtZeroNs;
    REQUIRE(sched_clock_ns - gcfs.last_update_tg_load_avg == 500000);  // published at the dequeue
    const uint64_t contrib = gcfs.tg_load_avg_contrib;
    REQUIRE(contrib == gcfs.avg.load_avg);
    REQUIRE(contrib > 0);
    REQUIRE(k.fair_group_load_avg(1) == static_cast<int64_t>(contrib));
    fair_migrate_task_pelt(k, g);
    REQUIRE(gcfs.removed.load_avg == gcfs.avg.load_avg);
    REQUIRE(gcfs.avg.load_sum > gcfs.avg.load_avg * get_pelt_divider(gcfs.avg));
    ++gcfs.removed.load_avg;
    ++gcfs.removed.util_avg;
    ++gcfs.removed.runnable_avg;
    const auto update_blocked = [&] {
      k.update_rq_clock(rq);
      bool done = true;
      k.update_blocked_fair(rq, done);
    };
    update_blocked();  // within the ms: the zero is not published
    CHECK(gcfs.avg.load_sum == 0);
    CHECK(gcfs.avg.util_sum == 0);
    CHECK(gcfs.avg.runnable_sum == 0);
    CHECK(gcfs.tg_load_avg_contrib == contrib);
    CHECK(gcfs.on_list == keeps_listed);
    k.run_until(Time::us(121500));
    update_blocked();  // a ms on
    if (keeps_listed) {
      CHECK(gcfs.tg_load_avg_contrib == 0);
      CHECK(k.fair_group_load_avg(1) == 0);
      CHECK_FALSE(gcfs.on_list);  // published, then found decayed in the same visit
    } else {
      CHECK(gcfs.tg_load_avg_contrib == contrib);  // off the list: stale for good
      CHECK(k.fair_group_load_avg(1) == static_cast<int64_t>(contrib));
    }
  }
}

// cpu.idle (sched_group_set_idle(), 6.12 fair.c; the same in 6.6.63 and
// 6.18.35): the group's entity weighs WEIGHT_IDLEPRIO (its shares are 3,
// and a group alone on its CPU gets them all: calc_group_shares() gives
// tg_shares) and is idle to se_is_idle(), so on one CPU the group's only
// task h, nice 0, runs exactly as a SCHED_IDLE h in the root group would:
// a waking root task w preempts it at once (check_preempt_wakeup_fair():
// an idle current loses to a non-idle wakee where their hierarchies meet).
// w runs 1 ms every 3 ms. (A group of the same weight without cpu.idle
// is ineligible whenever w wakes, its vruntime running 341 times faster,
// so w waits no more there either: on one CPU the weight does most of
// it. What only the idle mark does is in the placement test below.)
TEST_CASE("cpu.idle: a group's only task runs as a SCHED_IDLE task would", "[fair][cgroup]") {
  const std::string version = GENERATE(as<std::string>(), "6.6", "6.12", "6.18");
  INFO(version);
  const auto run = [&](const std::string& how) {
    ScenarioParams p = exact_scenario(version, 250);
    p.duration = Time::ms(300);
    TaskSpec h = hog("h");
    if (how == "sched_idle") {
      h = hog("h", Policy::kIdle);
    } else {
      KernelParams::CpuCgroup g;
      g.name = "bg";
      if (how == "cpu_idle")
        g.cpu_idle = true;
      else
        g.cpu_shares = 3;  // the same weight, not idle
      p.kernel.cgroups = {g};
      h.cgroup = "bg";
    }
    TaskSpec w = task("w", {ev_run(Time::ms(1)), ev_sleep(Time::ms(2))});
    w.delay = Time::us(100);
    p.tasks = {h, w};
    System sys(p, 1);
    SwitchLog log;
    sys.add_observer(&log);
    sys.run();
    CHECK(sys.kernel().rq(0).cfs.idle_h_nr_running == (how == "shares" ? 0 : 1));
    return std::make_pair(log, metrics_of(sys.result(), "w").wakeup_latency.count_at_least(1));
  };
  const auto [idle_task, idle_task_waits] = run("sched_idle");
  const auto [idle_group, idle_group_waits] = run("cpu_idle");
  const auto [light_group, light_group_waits] = run("shares");
  CHECK(idle_group.log == idle_task.log);
  CHECK(idle_group_waits == 0);  // every wake-up of w preempts h at once
  CHECK(idle_task_waits == 0);
  CHECK(light_group_waits == 0);
}

// The group's tasks count as idle on their CPU (idle_h_nr_running from the
// idle level up), so a CPU running only them is idle to wake-up placement
// (sched_idle_cpu()): the SCHED_IDLE placement test (test_sched_smp.cc)
// with bg a nice-0 hog in a cpu.idle group, on the EEVDF kernels and 6.1.
// With the same weight but no cpu.idle, CPU 0 is busy and w never goes
// there.
TEST_CASE("cpu.idle: a CPU running only an idle group's tasks is idle to wake-up placement", "[fair][cgroup][smp]") {
  const std::string version = GENERATE(as<std::string>(), "6.1", "6.6", "6.12", "6.18");
  INFO(version);
  ScenarioParams p = exact_scenario(version, 1000, 2);
  p.duration = Time::ms(100);
  KernelParams::CpuCgroup g;
  g.name = "bg";
  g.cpu_idle = true;
  p.kernel.cgroups = {g};
  TaskSpec fair = on_cpus(hog("fair"), {1});
  fair.delay = Time::us(500);
  p.tasks = {in_group(on_cpus(hog("bg"), {0}), "bg"), task("w", {ev_run(Time::ms(1)), ev_sleep(Time::ms(5))}), fair};
  System sys(p, 1);
  SwitchLog log;
  sys.add_observer(&log);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(3));
  CHECK(k.rq(0).cfs.idle_h_nr_running == 1);
  CHECK(k.sched_idle_cpu(0));
  k.run_until(p.duration);
  int on_cpu0 = 0, elsewhere = 0;
  for (const auto& r : log.log)
    if (r.next == "w") ++(r.cpu == 0 ? on_cpu0 : elsewhere);
  CHECK(elsewhere == 1);  // the first run, on CPU 1
  CHECK(on_cpu0 >= 14);
  // Control: the same weight without cpu.idle.
  g.cpu_idle = false;
  g.cpu_shares = 3;
  p.kernel.cgroups = {g};
  const SwitchLog light = run_logging_switches(p);
  int light_on_cpu0 = 0, light_elsewhere = 0;
  for (const auto& r : light.log)
    if (r.next == "w") ++(r.cpu == 0 ? light_on_cpu0 : light_elsewhere);
  CHECK(light_on_cpu0 == 0);  // CPU 0 is busy to select_idle_sibling()
  CHECK(light_elsewhere >= 14);
}

TEST_CASE("YAML: cpu_idle on cgroups", "[config][cgroup]") {
  const std::string head = "kernel: {version: \"6.12\"}\nplatform: {cpus: 1}\n";
  SECTION("read into the parameters") {
    ScenarioParams s = load_scenario_yaml(head + "cgroups:\n  - {name: bg, cpu_idle: true}\n" + kOneTask, "test.yaml");
    REQUIRE(s.kernel.cgroups.size() == 1);
    CHECK(s.kernel.cgroups[0].cpu_idle);
    CHECK(s.kernel.cgroups[0].fair_level());
  }
  SECTION("with a cpu weight") {
    ConfigError e = error_of(head + "cgroups:\n  - {name: bg, cpu_idle: true, cpu_weight: 100}\n" + kOneTask);
    CHECK(e.key_path() == "cgroups[0].cpu_weight");
    CHECK_THAT(e.message(), Catch::Contains("EINVAL"));
  }
  SECTION("not a boolean") {
    CHECK(error_of(head + "cgroups:\n  - {name: bg, cpu_idle: 2}\n" + kOneTask).key_path() == "cgroups[0].cpu_idle");
  }
  SECTION("without CONFIG_FAIR_GROUP_SCHED") {
    ConfigError e = error_of("kernel: {version: \"6.12\", fair_group_sched: false}\ncgroups:\n"
                             "  - {name: bg, cpu_idle: true}\n" +
                             std::string(kOneTask));
    CHECK_THAT(e.message(), Catch::Contains("fair_group_sched"));
  }
  SECTION("the cpu_idle event") {
    const std::string groups = "cgroups:\n  - {name: bg, cpu_weight: 100}\n  - {name: plain}\n";
    ScenarioParams ok = load_scenario_yaml(
        head + groups + "tasks:\n  - {name: t, events: [{cpu_idle: {group: bg, idle: true}}]}\n", "test.yaml");
    const EventSpec& e = ok.tasks[0].phases[0].events[0];
    CHECK(e.kind == EventSpec::Kind::kCpuIdle);
    CHECK(e.name == "bg");
    CHECK(e.cpu_idle);
    ConfigError plain =
        error_of(head + groups + "tasks:\n  - {name: t, events: [{cpu_idle: {group: plain, idle: true}}]}\n");
    CHECK(plain.key_path() == "tasks[0].events[0].cpu_idle.group");
    ConfigError missing = error_of(head + groups + "tasks:\n  - {name: t, events: [{cpu_idle: {group: bg}}]}\n");
    CHECK_THAT(missing.message(), Catch::Contains("idle"));
  }
}

// A cpu.weight write to a group that is idle when it runs fails as the
// kernel's sched_group_set_shares() does (EINVAL): a run-time error naming
// the event's place in the file.
TEST_CASE("a cpu_weight event on an idle group is an error naming the event", "[fair][cgroup][config]") {
  const std::string yaml = "kernel: {version: \"6.12\"}\nplatform: {cpus: 1}\nduration: 10ms\n"
                           "cgroups:\n  - {name: bg, cpu_idle: true}\n"
                           "tasks:\n  - {name: t, events: [{run: 1ms}, {cpu_weight: {group: bg, weight: 100}}]}\n";
  ScenarioParams s = load_scenario_yaml(yaml, "idle.yaml");
  System sys(s, 1);
  try {
    sys.run();
    FAIL("no error");
  } catch (const ModelError& e) {
    CHECK_THAT(e.what(), Catch::Contains("idle.yaml:"));
    CHECK_THAT(e.what(), Catch::Contains("EINVAL"));
  }
}

// sched_group_set_idle() during a run: bg (cpu.weight 100) and the root
// task r split the CPU until w writes bg's cpu.idle 1 at 1 s; from then
// bg weighs WEIGHT_IDLEPRIO (3 against r's 1024: h gets about 3/1027 of
// the CPU, a few ms a second) and h counts as idle; at 2 s w writes 0 and
// bg is a plain level again at 1024 shares (cpu.weight 100's value, not
// whatever it had), so the halves return (on the EEVDF kernels at once).
TEST_CASE("a run-time cpu.idle write makes a group idle and back", "[fair][cgroup]") {
  const std::string version = GENERATE(as<std::string>(), "6.1", "6.6", "6.12", "6.18");
  INFO(version);
  ScenarioParams p = exact_scenario(version, 250);
  p.duration = Time::s(3);
  p.kernel.cgroups = {weighted("bg", 100)};
  EventSpec on, off;
  on.kind = off.kind = EventSpec::Kind::kCpuIdle;
  on.name = off.name = "bg";
  on.cpu_idle = true;
  p.tasks = {in_group(hog("h"), "bg"), hog("r"),
             task("w", {ev_sleep(Time::s(1)), on, ev_sleep(Time::s(1)), off, ev_sleep(Time::s(100))})};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  const Task& h = find_task(k, "h");
  const int bg = k.find_task_group("bg");
  k.run_until(Time::ms(999));
  CHECK(k.rq(0).cfs.idle_h_nr_running == 0);
  const int64_t h_first = h.se.sum_exec_runtime;
  CHECK(std::abs(h_first - 500'000'000) < 10'000'000);
  k.run_until(Time::ms(1010));
  CHECK(k.task_group_cfs_rq(bg, 0).idle);
  CHECK(k.rq(0).cfs.idle_h_nr_running == 1);
  CHECK(k.fair_group_shares(bg) == kWeightIdlePrio << 10);
  k.run_until(Time::ms(1999));
  const int64_t h_idle = h.se.sum_exec_runtime - h_first;
  // 3/1027 of about 990 ms is 2.9 ms, but each pick of h lasts to the
  // next tick (4 ms at HZ 250; no HRTICK): 2 picks on 6.1, 3 on EEVDF.
  CHECK(h_idle >= 8'000'000);
  CHECK(h_idle <= 12'000'000);
  k.run_until(Time::ms(2010));
  CHECK_FALSE(k.task_group_cfs_rq(bg, 0).idle);
  CHECK(k.rq(0).cfs.idle_h_nr_running == 0);
  CHECK(k.fair_group_shares(bg) == uint64_t{1024} << 10);
  k.run_until(Time::s(3));
  // EEVDF: reweight_entity() scales the entity's lag with its weight, so
  // the halves return at once. 6.1's CFS reweight moves no vruntime: bg's
  // entity, far ahead after its weight-3 second, gets less until r
  // catches up (312 ms of the last second).
  const int64_t h_last = h.se.sum_exec_runtime - h_first - h_idle;
  if (version == "6.1")
    CHECK(h_last < 400'000'000);
  else
    CHECK(std::abs(h_last - 500'000'000) < 15'000'000);
}
