// The load balancer of 6.12 fair.c for one-CPU groups: capacity lost to RT
// pressure (scale_rt_capacity(), update_group_capacity(), capacity_of(),
// check_cpu_capacity()), RT tasks in a CPU's sum_nr_running, and
// update_sd_pick_busiest()'s rule for misfit tasks.
#include <catch2/catch.hpp>

#include "models/kernel/sched/kernel_versions.h"
#include "sched_test_util.h"

using namespace schedlab;
using namespace schedlab::testing;

TEST_CASE("capacity_of() is the capacity RT pressure leaves to CFS, refreshed when the CPU balances", "[rtpressure]") {
  ScenarioParams p = exact_scenario("6.12", 250, 2);
  p.tasks = {hog("h")};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  Rq& rq = k.rq(0);
  CHECK(Kernel::capacity_of(rq) == 1024);  // no RT yet: arch_scale_cpu_capacity()
  // scale_rt_capacity(): max - avg_rt.util_avg (no IRQ, DL or thermal
  // pressure); the next update is sd->balance_interval (2 ms = 1 jiffy at
  // HZ=250 on 2 CPUs) on.
  rq.avg_rt.util_avg = 600;
  k.update_group_capacity(rq);
  CHECK(Kernel::capacity_of(rq) == 424);
  CHECK(rq.capacity_next_update == k.jiffies() + k.balance_interval(rq, false));
  // All of it taken by RT: 1, never 0.
  rq.avg_rt.util_avg = 1024;
  k.update_group_capacity(rq);
  CHECK(Kernel::capacity_of(rq) == 1);
  // check_cpu_capacity(): capacity_of * imbalance_pct (117) < capacity * 100,
  // i.e. RT takes more than 1024 - 875.2 = 148.8 here.
  rq.avg_rt.util_avg = 148;
  k.update_group_capacity(rq);
  CHECK(Kernel::capacity_of(rq) == 876);
  CHECK_FALSE(k.check_cpu_capacity(rq));  // 876 * 117 = 102492 >= 102400
  rq.avg_rt.util_avg = 149;
  k.update_group_capacity(rq);
  CHECK(k.check_cpu_capacity(rq));  // 875 * 117 = 102375 < 102400
}

TEST_CASE("a newidle pass refreshes capacity_of() only when its group's next_update is due", "[rtpressure]") {
  ScenarioParams p = exact_scenario("6.12", 250, 2);
  p.tasks = {hog("h")};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(10));
  Rq& rq = k.rq(1);
  rq.avg_rt.util_avg = 300;
  k.update_group_capacity(rq);  // due again one jiffy on
  REQUIRE(Kernel::capacity_of(rq) == 724);
  rq.avg_rt.util_avg = 500;
  k.sched_balance_rq(rq, Kernel::CpuIdleType::kNewlyIdle);
  CHECK(Kernel::capacity_of(rq) == 724);  // not due: the old value
  k.sched_balance_rq(rq, Kernel::CpuIdleType::kIdle);
  CHECK(Kernel::capacity_of(rq) == 524);  // a periodic pass always refreshes
  rq.avg_rt.util_avg = 100;
  k.run_until(Time::ms(14));  // one jiffy later
  rq.avg_rt.util_avg = 100;   // (the run may have decayed it; set it again)
  k.sched_balance_rq(rq, Kernel::CpuIdleType::kNewlyIdle);
  CHECK(Kernel::capacity_of(rq) == 924);
}

TEST_CASE("a fair task sharing a CPU with a SCHED_FIFO task moves to the idle CPU", "[rtpressure][smp]") {
  // The hog starts alone on CPU 1 (the fork path's idle CPU: its parent
  // runs on CPU 0). From 5 ms a FIFO task pinned to CPU 1 runs 6 ms of
  // every 10 ms. While it runs, CPU 1 has two runnable tasks
  // (rq->nr_running counts every class, and so does the balancer's
  // sum_nr_running): its tick kicks an idle balance, which finds CPU 1
  // overloaded and pulls the waiting hog to idle CPU 0. Counting only fair
  // tasks, CPU 1 would look fully busy with one task and the hog would
  // share CPU 1 with the FIFO task for ever, getting 40% of a CPU while
  // CPU 0 idles.
  ScenarioParams p = exact_scenario("6.12", 250, 2);
  p.duration = Time::s(1);
  TaskSpec rt = task("rt", {ev_run(Time::ms(6)), ev_timer("p", Time::ms(10))}, Policy::kFifo, 50);
  rt.cpus = {1};
  rt.delay = Time::ms(5);
  p.tasks = {hog("h"), rt};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(4));
  REQUIRE(find_task(k, "h").cpu == 1);
  sys.run();
  const RunResult r = sys.result();
  CHECK(find_task(k, "h").cpu == 0);
  CHECK(metrics_of(r, "h").migrations >= 1);
  // Moved within the first RT period or two: the hog ran nearly the whole
  // second (sum of its runtime over the 1 s window).
  CHECK(metrics_of(r, "h").cpu_time > Time::ms(960));
}

namespace {
// The toy big.LITTLE platform for 1 s (CPUs 0-1 little, 2-3 big), with no
// task yet.
ScenarioParams toy_one_second() {
  ScenarioParams p = exact_scenario("6.12", 250);
  p.platform = toy_big_little();
  p.duration = Time::s(1);
  return p;
}
// A hog allowed on `cpus` only.
TaskSpec hog_on(const std::string& name, std::vector<int> cpus) {
  TaskSpec t = hog(name);
  t.cpus = std::move(cpus);
  return t;
}
// Runs `p`: task m must be on CPU 0 at `settled` and on CPU 2 at the end.
void check_m_moves_from_0_to_2(const ScenarioParams& p, Time settled) {
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(settled);
  REQUIRE(find_task(k, "m").cpu == 0);
  sys.run();
  CHECK(find_task(k, "m").cpu == 2);
}
}  // namespace

TEST_CASE("a misfit task is pulled only by a bigger CPU with spare capacity", "[lb][biglittle]") {
  // update_sd_pick_busiest() (6.12): a misfit group is a candidate only when
  // dst is clearly bigger and the local group has spare capacity. `m`, a
  // hog allowed on little CPU 0 and big CPU 2 only, starts on CPU 0 (CPU 2
  // is busy at its fork) and becomes misfit there (its util saturates at
  // the little capacity, 256, above 80% of it). CPU 2 runs `b`, pinned.
  ScenarioParams p = toy_one_second();
  TaskSpec m = hog_on("m", {0, 2});
  m.delay = Time::us(500);
  SECTION("b is a hog: CPU 2 is fully busy and leaves m on the little CPU") {
    // m starts 100 ms after b, so b's util is above CPU 2's 100/117 share
    // (fully busy) by the time m is misfit: started together, CPU 2's busy
    // balance every 15 jiffies can come while b's util is still rising
    // through the has-spare range, and then it does take m.
    m.delay = Time::ms(100);
    p.tasks = {hog_on("b", {2}), m};
    System sys(p, 1);
    sys.run();
    Kernel& k = sys.kernel();
    CHECK(find_task(k, "m").cpu == 0);
    CHECK(metrics_of(sys.result(), "m").migrations == 0);
    // rd->overloaded counts a misfit task on a remote CPU only: CPU 0's own
    // pass clears the flag (no CPU has two tasks), an idle CPU's sets it.
    REQUIRE(k.rq(0).misfit_task_load > 0);
    k.sched_balance_rq(k.rq(0), Kernel::CpuIdleType::kNotIdle);
    CHECK_FALSE(k.get_rd_overloaded());
    k.sched_balance_rq(k.rq(3), Kernel::CpuIdleType::kIdle);
    CHECK(k.get_rd_overloaded());
  }
  SECTION("b runs 1 ms in 10: CPU 2 has spare capacity and takes m") {
    TaskSpec b = task("b", {ev_run(Time::ms(1)), ev_timer("p", Time::ms(10))});
    b.cpus = {2};
    p.tasks = {b, m};
    check_m_moves_from_0_to_2(p, Time::ms(2));
  }
}

// update_misfit_status() before and after 6.10's "Check if a task has a
// fitting CPU when updating misfit": 6.1 records a hog that does not fit
// its CPU even when no bigger CPU is allowed to it, so an idle CPU's
// balance pass sets rd->overloaded; check_misfit_status() then asks for an
// idle balance only below the root domain's biggest capacity (the kick can
// not help a task already on an X1, but 6.1 still kicks for a hog kept on
// the little CPUs by its affinity, as a background cpuset does).
TEST_CASE("6.1 keeps a task misfit on the biggest CPU it may use, 6.12 does not", "[lb][biglittle][nohz]") {
  struct Case {
    const char* version;
    bool misfit;
    bool kicks_for_little_hog;
  };
  for (const Case& c : {Case{"6.1", true, true}, Case{"6.6", true, true}, Case{"6.12", false, false}}) {
    INFO(c.version);
    SECTION(std::string("a free hog settled on a big CPU, ") + c.version) {
      ScenarioParams p = toy_one_second();
      p.kernel.version = c.version;
      p.tasks = {hog("h")};
      System sys(p, 1);
      Kernel& k = sys.kernel();
      k.run_until(Time::ms(500));
      const int cpu = find_task(k, "h").cpu;
      REQUIRE(k.rq(cpu).capacity == 1024);
      CHECK((k.rq(cpu).misfit_task_load > 0) == c.misfit);
      const int idle_big = cpu == 2 ? 3 : 2;
      k.sched_balance_rq(k.rq(idle_big), Kernel::CpuIdleType::kIdle);
      CHECK(k.get_rd_overloaded() == c.misfit);
      // Alone on the biggest capacity, no RT pressure: no idle balance kick.
      const uint64_t before = k.nohz_balance_passes();
      k.run_until(Time::ms(1000));
      CHECK(k.nohz_balance_passes() == before);
    }
    SECTION(std::string("a hog allowed on the little CPUs only, ") + c.version) {
      ScenarioParams p = toy_one_second();
      p.kernel.version = c.version;
      p.tasks = {hog_on("bg", {0, 1})};
      System sys(p, 1);
      Kernel& k = sys.kernel();
      k.run_until(Time::ms(500));
      const int cpu = find_task(k, "bg").cpu;
      CHECK((k.rq(cpu).misfit_task_load > 0) == c.misfit);
      const uint64_t before = k.nohz_balance_passes();
      k.run_until(Time::ms(1000));
      CHECK((k.nohz_balance_passes() > before) == c.kicks_for_little_hog);
      CHECK(find_task(k, "bg").cpu == cpu);  // the kicks cannot move it
    }
  }
}

// pick_next_task_fair()'s done: label (6.1, 6.6) runs for prev picked
// again too, so a sched_yield() by the only task on a CPU refreshes
// update_misfit_status(); 6.12's put_prev_set_next_task() returns early
// for prev picked again and the misfit load waits for the tick. m (CPUs 0
// and 2; CPU 2 kept busy by the pinned hog b) runs 30 us of work and
// yields, 25 times, then sleeps 3 ms: at the little CPU's capacity 256 and
// top OPP (performance governor) each run takes 120 us, so a cycle is 6 ms
// from its start at 100 ms: in the cycle of 238 ms m yields at 238.6 ms,
// between the ticks of 236 and 240 ms (HZ=250), and still runs at 240. Its util, about 128 at a 50% duty, fits CPU 0
// (128 x 1280 < 256 x 1024) until RT pressure of 156 leaves capacity_of()
// = 100 (update_group_capacity()): then it does not, and the next look at
// it records misfit.
TEST_CASE("on 6.1 and 6.6 a task picked again after sched_yield() refreshes its CPU's misfit load", "[lb][biglittle]") {
  for (auto [version, refreshed_at_yield] : {std::pair{"6.1", true}, {"6.6", true}, {"6.12", false}}) {
    INFO(version);
    ScenarioParams p = toy_one_second();
    p.platform = toy_big_little("performance");
    p.kernel.version = version;
    EventSpec yield;
    yield.kind = EventSpec::Kind::kYield;
    TaskSpec m = phased_task("m", {{25, {ev_run(Time::us(30)), yield}}, {1, {ev_sleep(Time::ms(3))}}});
    m.cpus = {0, 2};
    m.delay = Time::ms(100);
    p.tasks = {hog_on("b", {2}), m};
    System sys(p, 1);
    Kernel& k = sys.kernel();
    Rq& rq = k.rq(0);
    const Task& mt = find_task(k, "m");
    k.run_until(Time::us(238599));
    REQUIRE(rq.curr == &mt);
    REQUIRE(rq.misfit_task_load == 0);
    rq.avg_rt.util_avg = 156;
    k.update_group_capacity(rq);
    REQUIRE(Kernel::capacity_of(rq) == 100);
    k.run_until(Time::us(238600));  // m's 5th yield of the cycle: picked again
    REQUIRE(rq.curr == &mt);
    CHECK((rq.misfit_task_load > 0) == refreshed_at_yield);
    k.run_until(Time::ms(240));  // the tick: every version records it
    REQUIRE(rq.curr == &mt);
    CHECK(rq.misfit_task_load > 0);
  }
}

// A misfit pass that moves nothing: 6.12 neither counts it as a failure
// nor backs off; 6.1 and 6.6 count it and double the interval, to 512 ms
// here because m may not run on CPU 3 (LBF_ALL_PINNED). m (CPUs 0 and 2)
// is misfit on little CPU 0 under every version (CPU 2, bigger, is
// allowed), and CPU 2 is kept fully busy by b.
TEST_CASE("a failed misfit pass backs off on 6.1 and 6.6, not on 6.12", "[lb][biglittle]") {
  for (auto [version, backs_off] : {std::pair{"6.1", true}, {"6.6", true}, {"6.12", false}}) {
    INFO(version);
    ScenarioParams p = toy_one_second();
    p.kernel.version = version;
    TaskSpec m = hog_on("m", {0, 2});
    m.delay = Time::ms(100);
    p.tasks = {hog_on("b", {2}), m};
    System sys(p, 1);
    Kernel& k = sys.kernel();
    k.run_until(Time::ms(1000));
    REQUIRE(find_task(k, "m").cpu == 0);
    REQUIRE(k.rq(0).misfit_task_load > 0);
    if (backs_off) {
      CHECK(k.rq(3).sd_balance_interval_ms == 512);  // MAX_PINNED_INTERVAL
      CHECK(k.rq(3).sd_nr_balance_failed > 0);
    } else {
      CHECK(k.rq(3).sd_balance_interval_ms == 4);  // sd_weight ms, as at boot
      CHECK(k.rq(3).sd_nr_balance_failed == 0);
    }
  }
}

// Two hogs misfit on the little CPUs with the same misfit_task_load
// (1023, saturated) when big CPU 2 frees up at 300 ms: its newly idle pass
// scans CPU 3, 0, 1; 6.12 keeps the first misfit group (CPU 0's a), 6.1
// and 6.6 take the later one (CPU 1's c).
TEST_CASE("of two equal misfit CPUs 6.1 and 6.6 pull from the later one, 6.12 the first", "[lb][biglittle]") {
  for (auto [version, moved] : {std::pair{"6.1", "c"}, {"6.6", "c"}, {"6.12", "a"}}) {
    INFO(version);
    ScenarioParams p = toy_one_second();
    p.kernel.version = version;
    TaskSpec x = task("x", {ev_run(Time::ms(300)), ev_sleep(Time::s(100))});
    x.cpus = {2};
    TaskSpec y = task("y", {ev_run(Time::ms(300)), ev_sleep(Time::s(100))});
    y.cpus = {3};
    p.tasks = {x, y, hog_on("a", {0, 2}), hog_on("c", {1, 2})};
    System sys(p, 1);
    Kernel& k = sys.kernel();
    k.run_until(Time::ms(299));
    REQUIRE(k.rq(0).misfit_task_load == k.rq(1).misfit_task_load);
    REQUIRE(k.rq(0).misfit_task_load > 0);
    k.run_until(Time::ms(400));
    CHECK(find_task(k, moved).cpu == 2);
    CHECK(find_task(k, std::string(moved) == "a" ? "c" : "a").cpu == (std::string(moved) == "a" ? 1 : 0));
  }
}

// calculate_imbalance() with spare capacity on dst: 6.1 evens out the task
// count even from a busy CPU; 6.6 and 6.12 (sibling_imbalance()) only from
// an idle one. CPU 0 holds three hogs (overloaded); once they may run on
// CPU 1 too, CPU 1's busy pass, taken while its 1 ms-in-10 task b runs,
// pulls (3 - 1) / 2 = 1 of them on 6.1 only.
TEST_CASE("6.1 lets a busy CPU with spare capacity even out the task count", "[lb]") {
  for (auto [version, pulled] : {std::pair{"6.1", 1}, {"6.6", 0}, {"6.12", 0}}) {
    INFO(version);
    ScenarioParams p = exact_scenario(version, 250, 2);
    TaskSpec b = task("b", {ev_run(Time::ms(1)), ev_sleep(Time::ms(9))});
    b.cpus = {1};
    p.tasks = {b, hog_on("h1", {0}), hog_on("h2", {0}), hog_on("h3", {0})};
    System sys(p, 1);
    Kernel& k = sys.kernel();
    k.run_until(Time::ms(500));
    for (const char* name : {"h1", "h2", "h3"}) {  // as if sched_setaffinity() widened them
      Task& h = find_task(k, name);
      h.cpus_allowed.set(1);
      h.nr_cpus_allowed = 2;
    }
    Time t = Time::ms(500);
    while (k.rq(1).curr->comm != "b") k.run_until(t += Time::us(100));
    REQUIRE(k.rq(0).nr_running == 3);
    CHECK(k.sched_balance_rq(k.rq(1), Kernel::CpuIdleType::kNotIdle) == pulled);
    CHECK(k.rq(1).nr_running == 1 + pulled);
  }
}

// task_hot() (every version): a SCHED_IDLE task is never cache hot, so the
// balancer may take it even right after it ran; a SCHED_NORMAL task that
// ran within sysctl_sched_migration_cost (500 us) is refused.
TEST_CASE("a SCHED_IDLE task that has just run is not cache hot", "[lb]") {
  for (Policy policy : {Policy::kIdle, Policy::kNormal}) {
    INFO(policy_name(policy));
    ScenarioParams p = exact_scenario("6.12", 1000, 2);
    TaskSpec w = hog("w", policy);
    w.cpus = {0, 1};
    p.tasks = {hog_on("h0", {0}), hog_on("h1", {1}), w};
    System sys(p, 1);
    Kernel& k = sys.kernel();
    const Task& wt = find_task(k, "w");
    Time t = Time::ms(100);
    // The first moment w waits within 500 us of having run.
    do {
      k.run_until(t += Time::us(50));
    } while (!(wt.on_rq && !wt.on_cpu && k.now().count() - wt.se.exec_start < 500000));
    const int other = wt.cpu == 0 ? 1 : 0;
    CHECK(k.can_migrate_task(wt, other, false, true) == (policy == Policy::kIdle));
    CHECK(k.can_migrate_task(wt, other, true, true));  // ignore_hot: nr_balance_failed > cache_nice_tries
  }
}

// pick_next_task_fair() moves the picked task to the head of cfs_tasks; on
// 6.1 and 6.6 also when it is prev picked again (here at A's ticks, while
// nice 19 B waits), on 6.12 only when the pick switches. So on 6.1 and 6.6
// a waiting B that woke after A's last switch is soon behind A again (on
// 6.12 it would stay ahead until it ran; there, EEVDF lets B preempt at its
// wake-up instead). An active balance's stopper takes the task nearest the
// tail first.
TEST_CASE("a re-picked task moves to the head of cfs_tasks on 6.1 and 6.6", "[lb]") {
  for (const char* version : {"6.1", "6.6"}) {
    INFO(version);
    ScenarioParams p = exact_scenario(version, 250);
    p.tasks = {hog("A"), task("B", {ev_run(Time::ms(1)), ev_sleep(Time::ms(2))}, Policy::kNormal, 19)};
    System sys(p, 1);
    Kernel& k = sys.kernel();
    const Task& a = find_task(k, "A");
    const Task& b = find_task(k, "B");
    int a_ahead = 0, b_ahead = 0;
    for (Time t = Time::ms(100); t < Time::ms(1000); t += Time::us(100)) {
      k.run_until(t);
      if (k.rq(0).curr == &a && b.on_rq && !b.on_cpu)
        ++(a.se.cfs_tasks_seq > b.se.cfs_tasks_seq ? a_ahead : b_ahead);
    }
    CHECK(a_ahead > 0);  // after A's re-pick (never, were it 6.12's rule)
    CHECK(b_ahead > 0);  // B is at the head from its wake-up until A's next re-pick
  }
}

TEST_CASE("when every task of the busiest CPU is pinned, the pass looks again without it", "[lb]") {
  // LBF_ALL_PINNED and sched_balance_rq()'s "redo" (6.12): CPU 0 runs three
  // hogs pinned there, CPU 1 two hogs allowed on CPUs 1 and 2, and CPU 2
  // `g` (nice -10, so the fork path puts both of the others on CPU 1), which
  // runs 100 ms and then sleeps. Each balance for CPU 2 finds CPU 0 the
  // busiest (the highest load) but can pull none of its tasks: without the
  // redo it would give up, and CPU 1 would share one CPU between two hogs
  // beside an idle one for as long as the balancer keeps choosing CPU 0.
  // With it, CPU 1 is the busiest of what is left. Newly idle at 100 ms,
  // CPU 2 finds there only a cache-hot hog (switched out by the tick that
  // same instant); at the next tick, 104 ms, CPU 1's two tasks kick an idle
  // balance for CPU 2, which takes the hog waiting since 100 ms.
  ScenarioParams p = exact_scenario("6.12", 250, 3);
  p.duration = Time::ms(200);
  TaskSpec g = task("g", {ev_run(Time::ms(100)), ev_sleep(Time::s(1000))}, Policy::kNormal, -10);
  g.cpus = {2};
  p.tasks = {g};
  for (const char* name : {"a", "b", "c"}) {
    TaskSpec t = hog(name);
    t.cpus = {0};
    p.tasks.push_back(t);
  }
  for (const char* name : {"d", "f"}) {
    TaskSpec t = hog(name);
    t.cpus = {1, 2};
    p.tasks.push_back(t);
  }
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(99));
  REQUIRE(find_task(k, "d").cpu == 1);
  REQUIRE(find_task(k, "f").cpu == 1);
  k.run_until(Time::us(100100));
  CHECK(k.rq(2).curr->is_idle_task);
  k.run_until(Time::us(104100));
  const Task& on2 = *k.rq(2).curr;
  CHECK((on2.comm == "d" || on2.comm == "f"));
  // The pass found an imbalance (after the redo): CPU 2's interval is
  // sd_weight, not backed off.
  CHECK(k.rq(2).sd_balance_interval_ms == 3);
}

TEST_CASE("sd->balance_interval: newly idle passes never back off, periodic ones up to max_interval", "[lb]") {
  // One hog pinned to CPU 0 of 4: every other CPU's pass finds it alone
  // (nothing waiting to pull), the domain balanced.
  ScenarioParams p = exact_scenario("6.12", 250, 4);
  TaskSpec h = hog("h");
  h.cpus = {0};
  p.tasks = {h};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(1));
  Rq& rq = k.rq(1);
  REQUIRE(rq.sd_balance_interval_ms == 4);  // sd_init(): sd_weight
  k.sched_balance_rq(rq, Kernel::CpuIdleType::kNewlyIdle);
  CHECK(rq.sd_balance_interval_ms == 4);
  k.sched_balance_rq(rq, Kernel::CpuIdleType::kIdle);
  CHECK(rq.sd_balance_interval_ms == 8);  // doubled
  k.sched_balance_rq(rq, Kernel::CpuIdleType::kIdle);
  CHECK(rq.sd_balance_interval_ms == 8);  // max_interval = 2 x sd_weight
  CHECK(k.balance_interval(rq, false) == 2);  // 8 ms at HZ=250
  CHECK(k.balance_interval(rq, true) == 31);  // 128 ms = 32 jiffies, one less when busy
}

namespace {
// Two CPUs: `g` (nice -10, pinned to CPU 1, so the fork path puts d and f on
// CPU 0) runs 100 ms and sleeps; d and f are hogs on CPU 0, which CPU 1
// could take unless pinned. At 100 ms the tick has just switched CPU 0 from
// d to f: d, switched out that same instant, is cache hot. Runs to there;
// time then stands still while the test calls sched_balance_rq() on the
// idle CPU 1 (its newly idle pass at 100 ms counted no failure).
struct TwoHogsBesideASleeper {
  explicit TwoHogsBesideASleeper(bool pin_d, Time ipi = Time::zero())
      : sys(params(pin_d, ipi), 1), k(sys.kernel()), idle(k.rq(1)) {
    // g, started on CPU 1 by CPU 0 (after an IPI), sleeps at 100 ms + ipi.
    k.run_until(Time::ms(100) + ipi + ipi);
    REQUIRE(idle.curr->is_idle_task);
    REQUIRE(k.rq(0).curr->comm == "f");
    REQUIRE(idle.sd_nr_balance_failed == 0);
  }
  static ScenarioParams params(bool pin_d, Time ipi = Time::zero()) {
    ScenarioParams p = exact_scenario("6.12", 250, 2);
    p.kernel.ipi_latency = ipi;
    p.duration = Time::ms(200);
    TaskSpec g = task("g", {ev_run(Time::ms(100)), ev_sleep(Time::s(1000))}, Policy::kNormal, -10);
    g.cpus = {1};
    TaskSpec d = hog("d");
    d.cpus = pin_d ? std::vector<int>{0} : std::vector<int>{0, 1};
    TaskSpec f = hog("f");
    f.cpus = {0, 1};
    p.tasks = {g, d, f};
    return p;
  }
  int balance() { return k.sched_balance_rq(idle, Kernel::CpuIdleType::kIdle); }
  System sys;
  Kernel& k;
  Rq& idle;
};
}  // namespace

TEST_CASE("sd->nr_balance_failed: cache-hot tasks move after cache_nice_tries failed passes", "[lb]") {
  // d, the only task CPU 1 could take (f runs), is cache hot
  // (can_migrate_task(): task_hot()), so a pass fails and counts it; past
  // cache_nice_tries (1 at MC) hotness no longer holds, so the third pass
  // moves d and the count starts again.
  TwoHogsBesideASleeper s(false);
  CHECK(s.balance() == 0);
  CHECK(s.idle.sd_nr_balance_failed == 1);
  CHECK(s.balance() == 0);
  CHECK(s.idle.sd_nr_balance_failed == 2);
  CHECK(s.balance() == 1);
  CHECK(s.idle.sd_nr_balance_failed == 0);
  CHECK(find_task(s.k, "d").cpu == 1);
}

TEST_CASE("sd->nr_balance_failed: an uneven task count is settled by active balance after 4 failed passes", "[lb]") {
  // imbalanced_active_balance() (6.12): d is pinned to CPU 0, so while f
  // runs there the idle CPU can detach nothing. The fourth failed pass
  // (nr_balance_failed > cache_nice_tries + 2) stops f and pushes it (the
  // stopper's move is not the pass's own: it returns 0 moved).
  TwoHogsBesideASleeper s(true);
  for (int failed = 1; failed <= 3; ++failed) {
    CHECK(s.balance() == 0);
    CHECK(s.idle.sd_nr_balance_failed == failed);
    CHECK(find_task(s.k, "f").cpu == 0);
  }
  CHECK(s.balance() == 0);
  CHECK(find_task(s.k, "f").cpu == 1);
  CHECK(s.idle.sd_nr_balance_failed == 0);
}

// With an IPI cost the stopper is not instant: the balancing CPU 1 wakes
// CPU 0's stopper (stop_one_cpu_nowait()), whose resched reaches CPU 0
// 5 us later; meanwhile f keeps running there and a further pass does not
// kick it again (busiest->active_balance). The stopper then moves f to CPU
// 1 and resets the failure count; f runs there after the IPI of that
// remote attach, 5 us more. (The setup: g sleeps at 100.005 ms, the passes
// run at 100.01 ms.)
TEST_CASE("a woken stopper runs when its IPI reaches the busiest CPU", "[lb][overheads]") {
  TwoHogsBesideASleeper s(true, Time::us(5));
  s.k.start_decision_counts();
  for (int failed = 1; failed <= 4; ++failed) CHECK(s.balance() == 0);
  Rq& busiest = s.k.rq(0);
  CHECK(busiest.active_balance_stop.armed());
  CHECK(busiest.push_cpu == 1);
  CHECK(busiest.active_balance_stop.when() == Time::us(100015));
  CHECK(s.balance() == 0);  // already on its way: not kicked again
  CHECK(busiest.active_balance_stop.when() == Time::us(100015));
  CHECK(s.idle.sd_nr_balance_failed == 5);
  s.k.run_until(Time::us(100014));
  CHECK(find_task(s.k, "f").cpu == 0);
  CHECK(busiest.curr->comm == "f");
  s.k.run_until(Time::us(100015));
  CHECK_FALSE(busiest.active_balance_stop.armed());
  CHECK(find_task(s.k, "f").cpu == 1);
  CHECK(s.idle.sd_nr_balance_failed == 0);
  CHECK(s.idle.curr->is_idle_task);
  s.k.run_until(Time::us(100020));
  CHECK(s.idle.curr->comm == "f");
  uint64_t woken = 0, again = 0, pushed = 0;
  for (const DecisionCount& d : s.k.decision_counts()) {
    if (d.kind != "balance" || d.group != "cpu1") continue;
    if (d.reason == "idle: active balance: the stopper is woken, task counts imbalanced after failed passes") woken += d.count;
    if (d.reason == "idle: active balance: the stopper is already on its way, task counts imbalanced after failed passes")
      again += d.count;
    if (d.reason == "the woken stopper pushed a task") pushed += d.count;
  }
  CHECK(woken == 1);
  CHECK(again == 1);
  CHECK(pushed == 1);
}

TEST_CASE("run --why counts each balance pass of a CPU by its outcome", "[lb][why]") {
  // The two passes above, counted (Decision::kBalance, group "cpu1"): with
  // d pinned, three passes refuse every task (d may not go, f runs) and the
  // fourth pushes f by active balance; with d free but cache hot, two fail
  // and the third pulls d.
  auto count = [](Kernel& k, const std::string& reason) -> uint64_t {
    for (const DecisionCount& d : k.decision_counts())
      if (d.kind == "balance" && d.group == "cpu1" && d.reason == reason) return d.count;
    return 0;
  };
  const std::string refused =
      "idle: nothing moved: can_migrate_task() or the imbalance refused every task, to even out task counts";
  {
    TwoHogsBesideASleeper s(true);
    s.k.start_decision_counts();
    for (int pass = 0; pass < 4; ++pass) s.balance();
    CHECK(count(s.k, refused) == 3);
    CHECK(count(s.k, "idle: active balance: the stopper pushed a task, task counts imbalanced after failed passes") ==
          1);
    size_t balance_reasons = 0;
    for (const DecisionCount& d : s.k.decision_counts()) balance_reasons += d.kind == "balance";
    CHECK(balance_reasons == 2);
  }
  {
    TwoHogsBesideASleeper s(false);
    s.k.start_decision_counts();
    for (int pass = 0; pass < 3; ++pass) s.balance();
    CHECK(count(s.k, refused) == 2);
    CHECK(count(s.k, "idle: pulled a task, to even out task counts") == 1);
  }
  {
    // One task on two CPUs never makes a CPU hold two: the root domain is
    // never overloaded, so each of its 10 blocks (1 ms of work every
    // 10 ms) skips the newly idle pass.
    ScenarioParams p = exact_scenario("6.12", 250, 2);
    p.duration = Time::ms(100);
    p.tasks = {task("t", {ev_run(Time::ms(1)), ev_sleep(Time::ms(9))})};
    System sys(p, 1);
    Kernel& k = sys.kernel();
    k.start_decision_counts();
    k.run_until(Time::ms(100));
    uint64_t skipped = 0, other = 0;
    for (const DecisionCount& d : k.decision_counts())
      if (d.kind == "balance")
        (d.reason == "newly idle: skipped: the root domain is not overloaded (no CPU has two tasks)" ? skipped
                                                                                                      : other) += d.count;
    CHECK(skipped == 10);
    CHECK(other == 0);
  }
}

TEST_CASE("the active-balance stopper moves the coldest task that may go, the preempted one last", "[lb]") {
  // active_load_balance_cpu_stop() -> detach_one_task() (6.12): the stopper
  // preempts f, running on CPU 0, and walks CPU 0's tasks from the cold end
  // of cfs_tasks with cache hotness ignored. CPU 1's failed pull when it
  // went idle at 100 ms walked that list from its tail too, moving each
  // task it refused to the head: d (cache hot), then f (running), so d is
  // at the tail and goes to CPU 1; f stays. With d pinned to CPU 0 nothing
  // but f can go, so f does.
  SECTION("a queued task that may go goes first") {
    TwoHogsBesideASleeper s(false);
    CHECK(s.k.active_balance(s.k.rq(0), 1));
    CHECK(find_task(s.k, "d").cpu == 1);
    CHECK(find_task(s.k, "f").cpu == 0);
  }
  SECTION("else the preempted task") {
    TwoHogsBesideASleeper s(true);
    CHECK(s.k.active_balance(s.k.rq(0), 1));
    CHECK(find_task(s.k, "f").cpu == 1);
    CHECK(find_task(s.k, "d").cpu == 0);
  }
}

// The stopper runs on CPU 0: its attach_task() onto idle CPU 1 starts the
// fair server there (dl_server_start() -> resched_curr()) and checks
// preemption, both from CPU 0, so CPU 1 learns of f by the resched IPI
// (5 us). The model used to run the enqueue as CPU 1's own: f ran at once.
// (g, started by CPU 0 at 5 us, sleeps at 100.005 ms; the stopper runs at
// 100.01 ms.)
TEST_CASE("the stopper's move onto an idle CPU waits for the resched IPI", "[lb][overheads]") {
  TwoHogsBesideASleeper s(true, Time::us(5));
  REQUIRE_FALSE(s.idle.fair_server.active);
  CHECK(s.k.active_balance(s.k.rq(0), 1));
  CHECK(find_task(s.k, "f").cpu == 1);
  CHECK(s.idle.fair_server.active);
  CHECK(s.idle.resched_ipi.armed());
  CHECK(s.idle.resched_ipi.when() == Time::us(100015));
  s.k.run_until(Time::us(100014));
  CHECK(s.idle.curr->is_idle_task);
  s.k.run_until(Time::us(100015));
  CHECK(s.idle.curr->comm == "f");
}

TEST_CASE("after an all-pinned redo, a one-task busiest CPU still gets an active balance", "[lb][biglittle]") {
  // Two hogs pinned to little CPU 1 make it the busiest for big CPU 2 (idle
  // from 50 ms), with every task pinned: the pass looks again without it and finds
  // little CPU 0, whose only task `m` (allowed on CPUs 0 and 2) is misfit.
  // One task: nothing to detach, so LBF_ALL_PINNED (set for every busiest)
  // decides nothing and need_active_balance() pushes m (6.12 keeps the
  // redo inside "busiest->nr_running > 1"). Carrying the first CPU's
  // all-pinned verdict over would leave m on the little CPU for good.
  ScenarioParams p = toy_one_second();
  // (`g` keeps CPU 2 busy for the first 50 ms, so m forks onto CPU 0.)
  TaskSpec m = hog_on("m", {0, 2});
  m.delay = Time::ms(1);
  TaskSpec g = task("g", {ev_run(Time::ms(50)), ev_sleep(Time::s(1000))});
  g.cpus = {2};
  p.tasks = {g, hog_on("a", {1}), hog_on("b", {1}), m};
  check_m_moves_from_0_to_2(p, Time::ms(10));
}

TEST_CASE("a task whose dequeue is delayed counts on its CPU and may be pulled, as in 6.12", "[lb][eevdf]") {
  // delayed_pull_scenario(), as in the DELAY_DEQUEUE test of
  // test_sched_fair.cc: on CPU 1, B's dequeue is delayed until a pick there
  // reaches it (after 2.8 ms); CPU 0's C sleeps at 2.8 ms.
  // CPU 0's newidle pass at 2.8 ms sees CPU 1 with two tasks
  // (rq->nr_running and cfs.h_nr_running count the delayed B, 6.12.19) and
  // itself with none: a task-count imbalance of (2 - 0) / 2 = 1. B last ran
  // 1 ms ago (not cache hot) and is the only queued task not running, so it
  // moves, still delayed. CPU 0's pick then dequeues it for good and, having
  // found nothing to run, enters newidle balance again
  // (pick_next_task_fair()'s "goto idle", which sets rq->idle_stamp): CPU 1
  // has only A now, so nothing is pulled, and CPU 0 goes idle. B then
  // sleeps with CPU 0 as its previous CPU and is woken there.
  auto build = [](bool delay_dequeue, const char* version = "6.12") { return delayed_pull_scenario(delay_dequeue, version); };
  SECTION("delayed: pulled by the newly idle CPU") {
    System sys(build(true), 1);
    Kernel& k = sys.kernel();
    k.run_until(Time::us(2700));
    Task& b = find_task(k, "B");
    REQUIRE(b.cpu == 1);
    REQUIRE(b.se.sched_delayed);
    REQUIRE(k.rq(1).nr_running == 2);
    // 6.12 has no eligibility test: B (lag < 0) may go to busy CPU 0 too.
    CHECK(k.can_migrate_task(b, 0, false, true));
    k.run_until(Time::us(2900));
    CHECK(b.cpu == 0);
    CHECK_FALSE(b.on_rq);
    CHECK_FALSE(b.se.sched_delayed);
    CHECK(k.rq(0).curr->is_idle_task);
    CHECK(k.rq(0).nr_running == 0);
    CHECK(k.rq(0).cfs.h_nr_delayed == 0);
    CHECK(k.rq(1).nr_running == 1);
    CHECK(k.rq(1).cfs.h_nr_delayed == 0);
    CHECK(k.rq(0).idle_stamp == Time::us(2800));  // newidle entered again, pulling nothing
    // enqueue_entity() with ENQUEUE_MIGRATED: "no longer consider this task
    // hot" (B has not run since).
    CHECK(b.se.exec_start == 0);
    k.run_until(Time::ms(7));
    CHECK(b.cpu == 0);
    CHECK(k.rq(0).curr == &b);  // woken on its previous CPU, idle
  }
  SECTION("6.18 (6.14+): the balancer counts runnable tasks only, and moves a delayed one only for load") {
    // CPU 1 has one runnable fair task (A): one task, nothing waiting, so
    // the newidle pass pulls nothing; B stays delayed on CPU 1.
    System sys(build(true, "6.18"), 1);
    Kernel& k = sys.kernel();
    k.run_until(Time::us(2700));
    Task& b = find_task(k, "B");
    // task_is_ineligible_on_dst_cpu(): at 2.7 ms B's lag is
    // (0.9 + 1.8) / 2 - 1.8 < 0 and CPU 0 runs C: B stays, even for load,
    // until the domain has failed a pass.
    REQUIRE(k.rq(0).curr == &find_task(k, "C"));
    CHECK_FALSE(k.can_migrate_task(b, 0, false, true));
    k.rq(0).sd_nr_balance_failed = 1;
    CHECK(k.can_migrate_task(b, 0, false, true));
    k.rq(0).sd_nr_balance_failed = 0;
    k.run_until(Time::us(2900));
    CHECK(b.cpu == 1);
    CHECK(b.se.sched_delayed);
    CHECK(k.rq(1).nr_running == 2);       // rq->nr_running still counts it
    CHECK(k.lb_h_nr_running(k.rq(1)) == 1);  // cfs.h_nr_runnable does not
    CHECK(k.rq(0).curr->is_idle_task);
    CHECK(b.se.exec_start == 1800000);  // it has not moved
    // can_migrate_task(): a delayed task only when migrating load (B last
    // ran 1.1 ms ago: not cache hot).
    CHECK(k.can_migrate_task(b, 0, false, true));
    CHECK_FALSE(k.can_migrate_task(b, 0, false, false));
  }
  SECTION("without DELAY_DEQUEUE B has left CPU 1 at 1.8 ms: nothing to pull") {
    System sys(build(false), 1);
    Kernel& k = sys.kernel();
    k.run_until(Time::us(2900));
    Task& b = find_task(k, "B");
    CHECK(b.cpu == 1);
    CHECK_FALSE(b.on_rq);
    CHECK(k.rq(0).idle_stamp == Time::us(2800));
  }
}

TEST_CASE("task_hot(): a buddy is cache hot while dst has tasks (CACHE_HOT_BUDDY)", "[lb]") {
  // 6.1 (CFS, LAST_BUDDY): W is forked onto idle CPU 1; V and X stay on
  // CPU 0 with the parent (the fork path keeps a tie local). At 0.9 ms one
  // of them runs and the other waits, never run (exec_start 0: 0.9 ms ago,
  // more than sysctl_sched_migration_cost, so cold by time).
  ScenarioParams p = exact_scenario("6.1", 1000, 2);
  p.duration = Time::ms(10);
  p.tasks = {hog("W"), hog("V"), hog("X")};
  auto waiting_on_cpu0 = [](Kernel& k) -> Task& {
    Task& v = find_task(k, "V");
    return v.on_cpu ? find_task(k, "X") : v;
  };
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::us(900));
  Task& w = waiting_on_cpu0(k);
  REQUIRE(find_task(k, "W").cpu == 1);
  REQUIRE(w.cpu == 0);
  REQUIRE(w.on_rq);
  REQUIRE_FALSE(w.on_cpu);
  REQUIRE(k.rq(1).nr_running == 1);
  CHECK(k.can_migrate_task(w, 1, false, false));
  // Made CPU 0's last buddy (as a wakeup preemption of it would): hot while
  // CPU 1 runs W, unless the pass ignores hotness (nr_balance_failed past
  // cache_nice_tries, or the active-balance stopper).
  k.rq(0).cfs.last = &w.se;
  CHECK_FALSE(k.can_migrate_task(w, 1, false, false));
  CHECK(k.can_migrate_task(w, 1, true, false));
  SECTION("without CACHE_HOT_BUDDY only the time counts") {
    ScenarioParams q = p;
    q.kernel.features["CACHE_HOT_BUDDY"] = false;
    System sys2(q, 1);
    Kernel& k2 = sys2.kernel();
    k2.run_until(Time::us(900));
    Task& w2 = waiting_on_cpu0(k2);
    REQUIRE(w2.cpu == 0);
    k2.rq(0).cfs.last = &w2.se;
    CHECK(k2.can_migrate_task(w2, 1, false, false));
  }
}

TEST_CASE("a CPU an active balance empties balances as newly idle", "[lb]") {
  // The stopper is the prev of the __schedule() that follows it
  // (prev_balance() from the stop class down reaches balance_fair() ->
  // sched_balance_newidle(), 6.1 to 6.18). CPU 1 runs g (pinned) for
  // 100 ms; f (allowed on both) runs alone on CPU 0. At 150 ms the stopper
  // pushes f to the now idle CPU 1, leaving CPU 0 empty: its next
  // __schedule() enters newidle balance, which stamps rq->idle_stamp.
  ScenarioParams p = exact_scenario("6.12", 250, 2);
  p.duration = Time::ms(300);
  TaskSpec g = task("g", {ev_run(Time::ms(100)), ev_sleep(Time::s(1000))});
  g.cpus = {1};
  TaskSpec f = hog("f");
  f.cpus = {0, 1};
  p.tasks = {g, f};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(150));
  REQUIRE(k.rq(0).curr == &find_task(k, "f"));
  REQUIRE(k.rq(1).curr->is_idle_task);
  REQUIRE(k.rq(0).idle_stamp == Time::max());
  CHECK(k.active_balance(k.rq(0), 1));
  k.run_until(Time::ms(150) + Time::ns(1));
  CHECK(find_task(k, "f").cpu == 1);
  CHECK(k.rq(0).curr->is_idle_task);
  CHECK(k.rq(0).idle_stamp == Time::ms(150));
}

TEST_CASE("NI_RANDOM (6.18.5+, 6.1.16x): newidle balance runs as often as it succeeds", "[lb]") {
  SECTION("on in the 6.1 (6.1.166) and 6.18 (6.18.35) presets, not in 6.6.63's or 6.12.19's") {
    for (auto [version, on] : {std::pair{"6.1", true}, {"6.6", false}, {"6.12", false}, {"6.18", true}}) {
      INFO(version);
      CHECK(kernel_version_info(version)->defaults(SchedFeat::kNiRandom) == on);
    }
  }
  SECTION("update_newidle_stats(): the ratio is refreshed every 1024 passes") {
    // sd_init(): 512 passes, 256 successes, ratio 512. 512 more passes
    // without success reach 1024: ratio 256, then both halve.
    Rq rq;
    for (int i = 0; i < 511; ++i) Kernel::update_newidle_stats(rq, 0);
    CHECK(rq.newidle_call == 1023);
    CHECK(rq.newidle_ratio == 512);
    Kernel::update_newidle_stats(rq, 0);
    CHECK(rq.newidle_ratio == 256);
    CHECK(rq.newidle_call == 512);
    CHECK(rq.newidle_success == 128);
    // A pull at ratio 256 counts (1024 + 257/2) / 257 = 4 successes.
    Kernel::update_newidle_stats(rq, (1024 + 257 / 2) / 257);
    CHECK(rq.newidle_success == 132);
  }
  SECTION("a throw above 1 + newidle_ratio skips the pass") {
    // TwoHogsBesideASleeper's tasks on 6.18, g sleeping at 101 ms: CPU 1
    // is newly idle then, CPU 0 runs d and f (the root domain is
    // overloaded) and the one waiting last ran at the 100 ms tick, 1 ms
    // ago: not cache hot, so a pass pulls it. CPU 1's first die throw
    // (sched_rng(), the run's stream for CPU 1) decides whether it looks:
    // with the ratio at 1023 always, at 0 only on a throw of 0 or 1.
    for (uint32_t ratio : {0u, 1023u}) {
      ScenarioParams p = TwoHogsBesideASleeper::params(false);
      p.kernel.version = "6.18";
      p.tasks[0].phases[0].events[0] = ev_run(Time::ms(101));
      System sys(p, 1);
      Kernel& k = sys.kernel();
      k.run_until(Time::us(100500));
      REQUIRE(k.get_rd_overloaded());
      REQUIRE(k.rq(0).nr_running == 2);
      Rq& rq1 = k.rq(1);
      rq1.newidle_ratio = ratio;
      const uint32_t calls = rq1.newidle_call;
      RngStream mirror(1, "sched_rng/cpu1");  // the stream CPU 1 draws from (no draw yet)
      const uint32_t d1k = static_cast<uint32_t>(mirror.engine()()) % 1024;
      k.run_until(Time::ms(101) + Time::ns(1));
      INFO("ratio " << ratio << ", throw " << d1k);
      CHECK(rq1.newidle_call == calls + 1);
      const bool ran = ratio == 1023 || d1k <= 1;
      CHECK(rq1.curr->is_idle_task == !ran);
      CHECK(k.rq(0).nr_running == (ran ? 1 : 2));
    }
  }
}

// detach_tasks() / attach_tasks() (6.12 fair.c): each detached task goes to
// the head of env->tasks and attach_tasks() enqueues from the head, so the
// tasks reach dst in the reverse of their detach order; the first detached
// (the coldest, from cfs_tasks' tail) is enqueued last, beside the others,
// and keeps its lag (place_entity() scales it with the queue's load).
// Four hogs queued on CPU 0, CPU 1 just idle under PREEMPT_NONE (a newly
// idle CPU takes more than one task only without CONFIG_PREEMPTION): its
// pass settles a task-count imbalance of (4 - 0) / 2 = 2.
TEST_CASE("a balance pass attaches its tasks in the reverse of their detach order", "[lb]") {
  ScenarioParams p = exact_scenario("6.12", 250, 2);
  p.duration = Time::ms(300);
  p.kernel.preempt = PreemptModel::kNone;
  TaskSpec g = task("g", {ev_run(Time::ms(100)), ev_sleep(Time::s(1000))}, Policy::kNormal, -15);
  g.cpus = {1};
  TaskSpec h = hog("h");
  h.instances = 4;
  h.cpus = {0, 1};
  p.tasks = {g, h};
  struct Moves : SchedObserver {
    std::vector<const Task*> order;  // set_task_cpu() happens at detach
    Time at = Time::max();           // the first pull from CPU 0 to CPU 1
    // CPU 1's run-queue insertion order of the two (se.tree_seq, which a
    // pick leaves alone), read when CPU 1 switches to one of them.
    uint64_t first_seq = 0, second_seq = 0;
    void on_migrate(Time t, const Task& p, int from, int to) override {
      if (from != 0 || to != 1 || t > at) return;
      at = t;
      order.push_back(&p);
    }
    void on_switch(Time t, int cpu, const Task&, TaskState, const Task&) override {
      if (cpu != 1 || t != at || order.size() != 2 || first_seq) return;
      first_seq = order[0]->se.tree_seq;
      second_seq = order[1]->se.tree_seq;
    }
  } moves;
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(90));
  REQUIRE(k.rq(0).cfs.nr_running == 4);  // g, heavy, has CPU 1 to itself
  sys.add_observer(&moves);
  k.run_until(Time::ms(200));
  REQUIRE(moves.order.size() == 2);
  REQUIRE(moves.first_seq > 0);
  CHECK(moves.first_seq > moves.second_seq);  // the first detached was enqueued last

}

// account_entity_enqueue() puts a woken task at the head of cfs_tasks: it
// is then hotter than a task picked before its wake-up (one CPU: the hog
// runs, the sleeper wakes at 7 ms).
TEST_CASE("a woken task is enqueued at the head of cfs_tasks", "[lb]") {
  ScenarioParams p = exact_scenario("6.12", 250, 1);
  p.duration = Time::ms(20);
  p.tasks = {hog("h"), task("w", {ev_run(Time::us(100)), ev_sleep(Time::ms(7)), ev_sleep(Time::s(1))})};
  struct AtWake : SchedObserver {
    const Task* w = nullptr;
    const Task* h = nullptr;
    uint64_t w_seq = 0, h_seq = 0;
    void on_wakeup(Time t, const Task& p, int) override {
      if (p.comm == "w" && t > Time::ms(1) && !w_seq) {
        w_seq = p.se.cfs_tasks_seq;
        h_seq = h->se.cfs_tasks_seq;
      }
    }
  } at;
  System sys(p, 1);
  at.h = &find_task(sys.kernel(), "h");
  sys.add_observer(&at);
  sys.run();
  REQUIRE(at.w_seq > 0);
  CHECK(at.w_seq > at.h_seq);
}

// One CPU has no sched domain, and 6.6's and 6.12's newly idle balance
// has no null-domain test: once two tasks were queued at once
// (add_nr_running() latches rd->overloaded, which only a balance pass over
// the root domain clears, and there is none), every newly idle pass sets
// idle_stamp and updates the blocked averages, with no domain to balance.
// 6.1.166 and 6.18.35 leave for "out:" once idle_stamp is set. a and b
// (5 ms each) start together on the one CPU at HZ=1000 and are done at
// 10 ms; the CPU is idle until a wakes at 25 ms.
TEST_CASE("one CPU: a newly idle pass after an overload updates the blocked averages on 6.6 and 6.12", "[lb][pelt]") {
  const auto [version, updates] = GENERATE(table<const char*, bool>({{"6.1", false}, {"6.6", true}, {"6.12", true}, {"6.18", false}}));
  INFO(version);
  ScenarioParams p = exact_scenario(version, 1000, 1);
  p.duration = Time::ms(50);
  p.tasks = {task("a", {ev_run(Time::ms(5)), ev_sleep(Time::ms(15))}),
             task("b", {ev_run(Time::ms(5)), ev_sleep(Time::s(100))})};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  Rq& rq = k.rq(0);
  k.run_until(Time::ms(12));
  REQUIRE(rq.curr->is_idle_task);
  CHECK(rq.idle_stamp == Time::ms(10));
  CHECK(rq.last_blocked_load_update_tick == (updates ? 10 : 0));  // jiffies at 10 ms
}
