// NO_HZ idle load balancing (6.12 fair.c nohz_balancer_kick(), kick_ilb(),
// _nohz_idle_balance(), sched_balance_domains()): intervals in jiffies, the
// nohz.next_balance rate limit, and which busy CPUs ask for a balance.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>

#include "sched_test_util.h"

using namespace schedlab;
using namespace schedlab::testing;

namespace {

// Idle-balance passes with a balance kick in [from, to).
uint64_t balance_passes_between(Kernel& k, Time from, Time to) {
  k.run_until(from);
  const uint64_t before = k.nohz_balance_passes();
  k.run_until(to);
  return k.nohz_balance_passes() - before;
}

TaskSpec pinned_hog(const std::string& name, int cpu) {
  TaskSpec t = hog(name);
  t.cpus = {cpu};
  return t;
}

}  // namespace

TEST_CASE("balance intervals are get_sd_balance_interval() in jiffies", "[nohz]") {
  struct Case {
    int hz, cpus;
    int64_t idle, busy;
  };
  // sd_weight ms at boot (x busy_factor 16 when busy), msecs_to_jiffies()
  // rounding up, a busy CPU's one jiffy less, at least one jiffy.
  const Case cases[] = {
      {250, 8, 2, 31},   // 8 ms = 2 jiffies, 128 ms = 32 - 1
      {250, 7, 2, 27},   // 7 ms rounds up to 2 jiffies, 112 ms = 28 - 1
      {1000, 2, 2, 31},  // 2 ms, 32 ms - 1
      {100, 2, 1, 3},    // 2 ms is under a 10 ms jiffy: 1; 32 ms rounds up to 4, - 1
  };
  for (const Case& c : cases) {
    ScenarioParams p = exact_scenario("6.12", c.hz, c.cpus);
    p.tasks = {hog("h")};
    System sys(p, 1);
    INFO("HZ " << c.hz << ", " << c.cpus << " CPUs");
    CHECK(sys.kernel().balance_interval(sys.kernel().rq(0), false) == c.idle);
    CHECK(sys.kernel().balance_interval(sys.kernel().rq(0), true) == c.busy);
  }
}

TEST_CASE("balance kicks come at most once per nohz.next_balance, which backs off while all is pinned", "[nohz]") {
  // Two hogs pinned to CPU 0 of 8: CPU 0 has two tasks at every tick, so
  // before 6.12's rate limit it would kick an idle balance at every tick
  // (250 a second). Each kick sets nohz.next_balance to the next jiffy; the
  // pass it starts balances every idle CPU that is due and moves
  // nohz.next_balance to their earliest next balance. Each such balance
  // finds CPU 0 the busiest with every task pinned (LBF_ALL_PINNED), looks
  // again without it, finds nothing, and doubles the CPU's
  // sd->balance_interval: 8 -> 16 -> ... -> 512 ms (MAX_PINNED_INTERVAL),
  // idle intervals of 2, 4, ..., 128 jiffies. First due at jiffy 2
  // (last_balance 0 + 2), the passes that balance come at jiffies 2, 6, 14,
  // 30, 62, 126, 254, 382, ...; in [100 ms, 1100 ms) = jiffies [25, 275):
  // 30, 62, 126 and 254.
  ScenarioParams p = exact_scenario("6.12", 250, 8);
  p.duration = Time::s(2);
  p.tasks = {pinned_hog("a", 0), pinned_hog("b", 0)};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  CHECK(balance_passes_between(k, Time::ms(100), Time::ms(1100)) == 4);
  // Every idle CPU was balanced by the last pass: next_balance is its last
  // balance + the idle interval, and nohz.next_balance the earliest of them.
  int64_t earliest = INT64_MAX;
  for (int c = 1; c < 8; ++c) {
    const Rq& rq = k.rq(c);
    CHECK(rq.nohz_tick_stopped);
    CHECK(rq.sd_balance_interval_ms == 512);
    CHECK(k.balance_interval(rq, false) == 128);
    CHECK(rq.next_balance == rq.last_balance + 128);
    earliest = std::min(earliest, rq.next_balance);
  }
  // CPU 0's own busy passes find nothing to pull (no other CPU has a
  // task): balanced, not pinned, so it backs off only to max_interval.
  CHECK(k.rq(0).sd_balance_interval_ms == 16);
  CHECK(k.nohz_next_balance() == earliest);
  CHECK_FALSE(k.rq(0).nohz_tick_stopped);  // busy: left the mask at its first busy tick
}

TEST_CASE("symmetric CPUs kick for busy LLC siblings, asymmetric ones only for misfits", "[nohz][biglittle]") {
  SECTION("symmetric: two busy CPUs of one LLC") {
    // One hog per CPU on two of 8 identical CPUs: no CPU has two tasks, but
    // sds->nr_busy_cpus = 2 > 1 asks for a balance, rate-limited as above.
    // The idle CPUs find nothing waiting to pull (balanced, nothing pinned)
    // and back off once, to max_interval (16 ms = 4 jiffies): balanced at
    // jiffy 2, then every 4 jiffies; in jiffies [25, 275): 26, 30, ..., 274.
    ScenarioParams p = exact_scenario("6.12", 250, 8);
    p.duration = Time::s(2);
    p.tasks = {pinned_hog("a", 0), pinned_hog("b", 1)};
    System sys(p, 1);
    CHECK(balance_passes_between(sys.kernel(), Time::ms(100), Time::ms(1100)) == 63);
    for (int c = 2; c < 8; ++c) CHECK(sys.kernel().rq(c).sd_balance_interval_ms == 16);
  }
  SECTION("asymmetric: the LLC test is skipped") {
    // The same two hogs on the toy platform's two big CPUs: one task each,
    // no misfit at the biggest capacity, so nohz_balancer_kick() asks for
    // no balance at all (it still asks for blocked-load updates).
    ScenarioParams p = exact_scenario("6.12", 250);
    p.platform = toy_big_little();
    p.duration = Time::s(2);
    p.tasks = {pinned_hog("a", 2), pinned_hog("b", 3)};
    System sys(p, 1);
    CHECK(balance_passes_between(sys.kernel(), Time::ms(100), Time::ms(1100)) == 0);
  }
}

TEST_CASE("newidle balancing is gated by max_newidle_lb_cost, not the migration cost", "[newidle]") {
  // CPU 1 runs `blinker` (pinned): 100 us on, 100 us off, so its avg_idle
  // settles near 100 us, under the pre-5.16 newidle bound
  // (sysctl_sched_migration_cost, 500 us). CPU 0 runs `light`, a nice-19 hog
  // (pinned). At 50.05 ms `x`, a hog free to run anywhere, forks while both
  // CPUs are busy and goes to CPU 0, whose load is the lighter; it runs
  // until the tick at 51 ms gives CPU 0 back to `light`, and is queued from
  // then on. CPU 1 is newly idle every 200 us from 51.1 ms: with balancing
  // that costs nothing (max_newidle_lb_cost 0) 6.12 looks each time, finds
  // x waiting on CPU 0, and pulls it once it is no longer cache hot (it ran
  // until 51 ms; sysctl_sched_migration_cost 500 us; a newly idle pass
  // never counts as failed, so hotness holds): at 51.5 ms. The old bound
  // would never look, and CPU 1, busy at every tick, is never the idle CPU
  // a balance kick reaches.
  ScenarioParams p = exact_scenario("6.12", 1000, 2);
  p.duration = Time::ms(60);
  TaskSpec blinker = task("blinker", {ev_run(Time::us(100)), ev_sleep(Time::us(100))});
  blinker.cpus = {1};
  TaskSpec light = hog("light", Policy::kNormal, 19);
  light.cpus = {0};
  TaskSpec x = hog("x");
  x.delay = Time::us(50050);
  p.tasks = {blinker, light, x};
  System sys(p, 1);
  SwitchLog log;
  sys.add_observer(&log);
  Kernel& k = sys.kernel();
  k.run_until(Time::us(50060));
  REQUIRE(find_task(k, "x").cpu == 0);
  CHECK(k.rq(1).avg_idle < 500000);
  // As if CPU 1 had backed off (sd->balance_interval, below): the pass at
  // 51.1 ms finds the imbalance (x waiting) and brings it back to sd_weight
  // (2 ms), though x, cache hot, stays where it is.
  k.rq(1).sd_balance_interval_ms = 64;
  k.run_until(Time::us(51150));
  CHECK(k.rq(1).sd_balance_interval_ms == 2);
  CHECK(find_task(k, "x").cpu == 0);
  k.run_until(Time::ms(60));
  const SwitchRecord queued{Time::ms(51), 0, "x", "light", 'R'};
  CHECK(std::find(log.log.begin(), log.log.end(), queued) != log.log.end());
  Time pulled = Time::max();
  for (const auto& r : log.log)
    if (r.cpu == 1 && r.next == "x") {
      pulled = r.t;
      break;
    }
  CHECK(pulled == Time::us(51500));
  CHECK(k.rq(1).max_newidle_lb_cost == 0);  // passes cost nothing by default
}

TEST_CASE("a measured newidle cost is kept as the domain's maximum and decays 1% a second", "[newidle]") {
  // Three hogs on two CPUs keep the root domain overloaded; a pass costs 30 us.
  ScenarioParams p = exact_scenario("6.12", 1000, 2);
  p.kernel.newidle_balance_cost = Time::us(30);
  p.tasks = {hogs("h", 3)};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(50));
  const int dst = k.rq(0).nr_running == 1 ? 0 : 1;
  Rq& rq = k.rq(dst);
  REQUIRE(rq.nr_running == 1);
  SECTION("a pass records its cost; the rq-wide bound keeps its migration-cost floor") {
    rq.avg_idle = 100000;
    rq.max_newidle_lb_cost = 0;
    k.sched_balance_newidle(rq);
    CHECK(rq.max_newidle_lb_cost == 30000);
    CHECK(rq.max_idle_balance_cost == 500000);
  }
  SECTION("a CPU expecting to idle shorter than a pass does not look") {
    rq.avg_idle = 100000;
    rq.max_newidle_lb_cost = 150000;
    rq.last_decay_max_lb_cost = k.jiffies();
    CHECK_FALSE(k.sched_balance_newidle(rq));
    CHECK(rq.max_newidle_lb_cost == 150000);  // no pass: nothing recorded, not decayed
  }
  SECTION("periodic balancing decays an old maximum by 253/256 once a second") {
    rq.max_newidle_lb_cost = 256000;
    rq.last_decay_max_lb_cost = k.jiffies() - 1001;
    rq.next_balance = 0;
    rq.last_balance = 0;
    k.sched_balance_domains(rq, false);
    CHECK(rq.max_newidle_lb_cost == 253000);
    CHECK(rq.last_decay_max_lb_cost == k.jiffies());
    CHECK(rq.max_idle_balance_cost == 500000);  // max(migration cost, 253 us)
  }
}

// nohz_newidle_balance() only sets NOHZ_NEWILB_KICK; do_idle()'s
// nohz_run_idle_balance() runs the blocked-load update with the CPU idle,
// so a CPU still in nohz.idle_cpus_mask (no busy tick since its tick
// stopped) updates its own blocked load too (6.12 fair.c, idle.c). A on
// cpu0 wakes 100 us after each 2 ms boundary and runs 300 us, never across
// a jiffy, so cpu0 keeps its nohz state; B left blocked load on cpu1.
// Nothing else updates cpu0's blocked averages: no CPU is busy at a tick.
TEST_CASE("a newly idle CPU updates its own blocked load at do_idle()", "[nohz][newidle]") {
  ScenarioParams p = exact_scenario("6.12", 1000, 2);
  TaskSpec a = task("A", {ev_run(Time::us(300)), ev_timer("a", Time::ms(2))});
  a.cpus = {0};
  a.delay = Time::us(2100);
  TaskSpec b = task("B", {ev_run(Time::ms(3)), ev_sleep(Time::s(1000))});
  b.cpus = {1};
  p.tasks = {a, b};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(200));
  const Rq& rq0 = k.rq(0);
  REQUIRE(rq0.nohz_tick_stopped);
  // The last update at an A sleep after nohz.next_blocked (every 32 ms).
  CHECK(rq0.last_blocked_load_update_tick > 150);
  CHECK(k.rq(1).last_blocked_load_update_tick == rq0.last_blocked_load_update_tick);
}
