// NO_HZ idle load balancing (6.12 fair.c nohz_balancer_kick(), kick_ilb(),
// _nohz_idle_balance(), sched_balance_domains()): intervals in jiffies, the
// nohz.next_balance rate limit, and which busy CPUs ask for a balance.
#include <catch2/catch.hpp>

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
  // sd_weight ms (x busy_factor 16 when busy), msecs_to_jiffies() rounding
  // up, at least one jiffy.
  const Case cases[] = {
      {250, 8, 2, 32},   // 8 ms = 2 jiffies, 128 ms = 32
      {250, 7, 2, 28},   // 7 ms rounds up to 2 jiffies, 112 ms = 28
      {1000, 2, 2, 32},  // 2 ms, 32 ms
      {100, 2, 1, 4},    // 2 ms is under a 10 ms jiffy: 1; 32 ms rounds up to 4
  };
  for (const Case& c : cases) {
    ScenarioParams p = exact_scenario("6.12", c.hz, c.cpus);
    p.tasks = {hog("h")};
    System sys(p, 1);
    INFO("HZ " << c.hz << ", " << c.cpus << " CPUs");
    CHECK(sys.kernel().balance_interval(false) == c.idle);
    CHECK(sys.kernel().balance_interval(true) == c.busy);
  }
}

TEST_CASE("balance kicks come at most once per nohz.next_balance", "[nohz]") {
  // Two hogs pinned to CPU 0 of 8: CPU 0 has two tasks at every tick, so
  // before 6.12's rate limit it would kick an idle balance at every tick
  // (250 a second). Each kick sets nohz.next_balance to the next jiffy; the
  // pass it starts balances every idle CPU (due: idle interval 2 jiffies)
  // and moves nohz.next_balance to their earliest next balance, 2 jiffies
  // on: one pass per 8 ms, 125 a second.
  ScenarioParams p = exact_scenario("6.12", 250, 8);
  p.duration = Time::s(2);
  p.tasks = {pinned_hog("a", 0), pinned_hog("b", 0)};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  const uint64_t passes = balance_passes_between(k, Time::ms(100), Time::ms(1100));
  CHECK(passes >= 124);
  CHECK(passes <= 126);
  // Every idle CPU was balanced by the last pass: next_balance is its last
  // balance + the idle interval, and nohz.next_balance the earliest of them.
  int64_t earliest = INT64_MAX;
  for (int c = 1; c < 8; ++c) {
    const Rq& rq = k.rq(c);
    CHECK(rq.nohz_tick_stopped);
    CHECK(rq.next_balance == rq.last_balance + k.balance_interval(false));
    earliest = std::min(earliest, rq.next_balance);
  }
  CHECK(k.nohz_next_balance() == earliest);
  CHECK_FALSE(k.rq(0).nohz_tick_stopped);  // busy: left the mask at its first busy tick
}

TEST_CASE("symmetric CPUs kick for busy LLC siblings; asymmetric ones only for misfits", "[nohz][biglittle]") {
  SECTION("symmetric: two busy CPUs of one LLC") {
    // One hog per CPU on two of 8 identical CPUs: no CPU has two tasks, but
    // sds->nr_busy_cpus = 2 > 1 asks for a balance, rate-limited as above.
    ScenarioParams p = exact_scenario("6.12", 250, 8);
    p.duration = Time::s(2);
    p.tasks = {pinned_hog("a", 0), pinned_hog("b", 1)};
    System sys(p, 1);
    const uint64_t passes = balance_passes_between(sys.kernel(), Time::ms(100), Time::ms(1100));
    CHECK(passes >= 124);
    CHECK(passes <= 126);
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
