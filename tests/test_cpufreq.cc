// cpufreq governors (Linux 6.12 kernel/sched/cpufreq_schedutil.c and
// drivers/cpufreq/cpufreq_{performance,powersave,userspace}.c) on the gs101
// (Pixel 6) Cortex-X1 OPP table. Every expectation is hand-computed beside it.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>
#include <vector>

#include "models/hw/energy_model.h"
#include "models/kernel/cpufreq/governor.h"
#include "tests/cpufreq_test_util.h"

using namespace schedlab;
using namespace schedlab::time_literals;

namespace {

std::unique_ptr<CpufreqGovernor> started(std::string_view name, const CpufreqPolicy& policy,
                                          const GovernorParams& params = {}) {
  auto g = make_governor(name, params);
  g->start(policy, Time::zero());
  return g;
}

// One update of a single-CPU policy.
std::optional<uint64_t> update1(CpufreqGovernor& g, CpuUtil u, Time now, unsigned flags = 0) {
  const std::vector<CpuUtil> utils{u};
  return g.update_util(0, utils, now, flags);
}

}  // namespace

TEST_CASE("schedutil picks the lowest OPP at or above 1.25 x util / capacity x fmax", "[cpufreq][schedutil]") {
  const auto policy = x1_policy(1);
  auto run = [&](uint64_t util) {
    auto g = started("schedutil", policy);
    return update1(*g, cfs(util), Time::zero());
  };
  // util 400: map_util_perf -> 400 + 100 = 500;
  // 2802000 * 500 / 1024 = 1368164 kHz -> next OPP up: 1426000.
  CHECK(run(400) == 1426000u);
  // util 300: 375 -> 2802000 * 375 / 1024 = 1026123 -> 1106000.
  CHECK(run(300) == 1106000u);
  // util 100: 125 -> 342041 -> the lowest OPP, 500000.
  CHECK(run(100) == 500000u);
  // util 0 -> raw 0 kHz, which equals the cached_raw_freq sugov_start()
  // zeroed, so get_next_freq() returns next_freq (0) and nothing is
  // requested: the policy stays where it was (as in the kernel).
  CHECK(run(0) == std::nullopt);
  // util 800: 1000 -> 2736328 -> 2802000.
  CHECK(run(800) == 2802000u);
  // util 1024: 1280, capped by max = capacity 1024 -> 2802000.
  CHECK(run(1024) == 2802000u);
}

// cpufreq_policy_transition_delay_us() by kernel version, latency in whole
// microseconds (the kernel divides by NSEC_PER_USEC first).
TEST_CASE("the default transition delay is 1.5x the latency from 6.10, x1000 up to 10 ms before",
          "[cpufreq][schedutil]") {
  using R = TransitionDelayRule;
  for (R rule : {R::kLatencyAndAHalf, R::kLatencyX1000Cap10ms}) {
    CHECK(cpufreq_policy_transition_delay(Time::zero(), rule) == 1_ms);       // no latency: 1 ms
    CHECK(cpufreq_policy_transition_delay(Time::ns(999), rule) == 1_ms);      // 0 whole us: 1 ms
  }
  CHECK(cpufreq_policy_transition_delay(Time::ns(1999), R::kLatencyAndAHalf) == 1_us);  // 1 + (1 >> 1)
  CHECK(cpufreq_policy_transition_delay(Time::ns(1999), R::kLatencyX1000Cap10ms) == 1_ms);  // 1 x 1000
  CHECK(cpufreq_policy_transition_delay(7_us, R::kLatencyAndAHalf) == 10_us);               // 7 + 3
  CHECK(cpufreq_policy_transition_delay(7_us, R::kLatencyX1000Cap10ms) == 7_ms);
  CHECK(cpufreq_policy_transition_delay(40_us, R::kLatencyAndAHalf) == 60_us);   // rk3588
  CHECK(cpufreq_policy_transition_delay(40_us, R::kLatencyX1000Cap10ms) == 10_ms);  // 40 ms, capped
  CHECK(cpufreq_policy_transition_delay(500_us, R::kLatencyAndAHalf) == 750_us);  // gs101
  CHECK(cpufreq_policy_transition_delay(500_us, R::kLatencyX1000Cap10ms) == 10_ms);
}

TEST_CASE("schedutil's default rate limit is 1.5x the transition latency", "[cpufreq][schedutil]") {
  auto g = make_governor("schedutil", {});
  g->start(x1_policy(1), Time::zero());
  // cpufreq_policy_transition_delay_us(): 500 us + 250 us = 750 us.
  CHECK(dynamic_cast<SchedutilGovernor&>(*g).rate_limit() == 750_us);

  CpufreqPolicy no_latency = x1_policy(1);
  no_latency.transition_latency = Time::zero();
  g->start(no_latency, Time::zero());
  CHECK(dynamic_cast<SchedutilGovernor&>(*g).rate_limit() == 1_ms);  // USEC_PER_MSEC

  GovernorParams explicit_limit;
  explicit_limit.rate_limit = 2_ms;
  auto g2 = started("schedutil", x1_policy(1), explicit_limit);
  CHECK(dynamic_cast<SchedutilGovernor&>(*g2).rate_limit() == 2_ms);
}

TEST_CASE("schedutil on a 6.1 kernel waits latency x 1000 (10 ms at most) between changes",
          "[cpufreq][schedutil]") {
  GovernorParams params;
  params.transition_delay = TransitionDelayRule::kLatencyX1000Cap10ms;
  auto g = started("schedutil", x1_policy(1), params);
  REQUIRE(dynamic_cast<SchedutilGovernor&>(*g).rate_limit() == 10_ms);
  // Raised at once from the initial (max) frequency's reset...
  CHECK(update1(*g, cfs(200, 0), 20_ms) == 851000u);  // 1.25 x 2802000 x 200 / 1024 = 684082 -> 851000
  // ...but 9.999999 ms later a full util is refused; at 10 ms it is taken.
  CHECK_FALSE(update1(*g, cfs(1024, 1), 20_ms + Time::ns(9999999)).has_value());
  CHECK(update1(*g, cfs(1024, 2), 30_ms) == 2802000u);
}

TEST_CASE("schedutil suppresses a change within rate_limit_us", "[cpufreq][schedutil]") {
  auto g = started("schedutil", x1_policy(1));  // rate limit 750 us
  // t=0: the start's ->limits() lets the first update through: util 400 -> 1426000.
  CHECK(update1(*g, cfs(400, 0), 0_us) == 1426000u);
  // t=500us: 500 < 750 since the last change -> suppressed.
  CHECK(update1(*g, cfs(800, 1), 500_us) == std::nullopt);
  CHECK(g->cur_khz() == 1426000);
  // t=750us: window over: util 800 -> 2802000.
  CHECK(update1(*g, cfs(800, 2), 750_us) == 2802000u);
  // t=1000us: same request -> no change, and the window is NOT restarted.
  CHECK(update1(*g, cfs(800, 3), 1000_us) == std::nullopt);
  // t=1200us: 450 us since the last change (750 us) -> suppressed.
  CHECK(update1(*g, cfs(100, 4), 1200_us) == std::nullopt);
  // t=1500us: 750 us since 750 us -> util 100 -> 500000.
  CHECK(update1(*g, cfs(100, 5), 1500_us) == 500000u);
}

TEST_CASE("a limits change lets the next schedutil update bypass the rate limit", "[cpufreq][schedutil]") {
  SECTION("fast switch: the new max applies at the next update") {
    auto g = started("schedutil", x1_policy(1));
    CHECK(update1(*g, cfs(400, 0), 0_us) == 1426000u);
    // Thermal cap at 2.0 GHz: policy->max resolves (RELATION_H) to 1826000.
    CHECK(g->set_limits(0, 2000000, 100_us) == std::nullopt);
    CHECK(g->policy().max_khz == 1826000);
    // t=200us (< 750 us) bypasses the rate limit: util 700 -> 875 ->
    // 2802000 * 875 / 1024 = 2394287 -> clamped to max 1826000.
    CHECK(update1(*g, cfs(700, 1), 200_us) == 1826000u);
  }
  SECTION("slow path: sugov_limits() clamps cur at once") {
    GovernorParams p;
    p.fast_switch = false;
    auto g = started("schedutil", x1_policy(1), p);
    CHECK(update1(*g, cfs(1024, 0), 0_us) == 2802000u);
    // cpufreq_policy_apply_limits(): max 2048000 < cur -> target max (HE).
    CHECK(g->set_limits(0, 2048000, 100_us) == 2048000u);
    CHECK(g->cur_khz() == 2048000);
  }
}

// The first update after start (sugov_limits() set limits_changed) sees no
// util: the raw frequency 0 equals the empty cache (cached_raw_freq 0).
// 6.12.19 keeps the cache and so next_freq 0: nothing is committed and the
// policy stays at its boot frequency (max). 6.1.166 and 6.6.63 bypass the
// cache: 0 resolves to the lowest OPP, committed. After a later limits
// change with the same request, 6.6 commits it again (restarting the rate
// window), 6.1 does not. 6.18.35 went back to 6.1's rule.
TEST_CASE("what a limits change does to the next schedutil update, by version", "[cpufreq][schedutil]") {
  using R = SugovLimitsRule;
  for (R rule : {R::kV6_1, R::kV6_6, R::kV6_12, R::kV6_18}) {
    INFO(static_cast<int>(rule));
    GovernorParams params;
    params.limits_rule = rule;
    auto g = started("schedutil", x1_policy(1), params);
    REQUIRE(g->cur_khz() == 2802000);
    const auto first = update1(*g, cfs(0, 0), 1_ms);
    if (rule == R::kV6_12) {
      CHECK_FALSE(first.has_value());
      CHECK(g->cur_khz() == 2802000);
      continue;
    }
    CHECK(first == 500000u);
    CHECK(g->set_limits(0, 0, 2_ms) == std::nullopt);  // the table's own limits: nothing to clamp
    const auto again = update1(*g, cfs(0, 1), 2_ms);
    // 2.5 ms: 1.5 ms after 6.1's last commit (past the 750 us limit), 0.5 ms
    // after 6.6's recommit (within it).
    const auto raise = update1(*g, cfs(1024, 2), 2500_us);
    if (rule == R::kV6_6) {
      CHECK(again == 500000u);
      CHECK_FALSE(raise.has_value());
    } else {
      CHECK_FALSE(again.has_value());
      CHECK(raise == 2802000u);
    }
  }
}

TEST_CASE("rising deadline bandwidth lets schedutil bypass the rate limit", "[cpufreq][schedutil]") {
  auto g = started("schedutil", x1_policy(1));
  CHECK(update1(*g, cfs(400, 0), 0_us) == 1426000u);  // bw_min is now 0
  CpuUtil u = cfs(100, 1);
  u.bw_dl = 600;  // > bw_min 0 -> ignore_dl_rate_limit()
  // min = irq 0 + bw_dl 600; util 100 -> perf max(600, 125) = 600 ->
  // 2802000 * 600 / 1024 = 1641796 -> 1745000, at t=100us < 750 us.
  CHECK(update1(*g, u, 100_us) == 1745000u);
}

// sugov_hold_freq() keeps a higher frequency on a CPU that has not been
// idle since the last update, unless need_freq_update is set. 6.12's
// ignore_dl_rate_limit() sets limits_changed, which (without
// CPUFREQ_NEED_UPDATE_LIMITS) leaves need_freq_update clear: the bypass
// evaluates but holds. 6.18's sets need_freq_update itself: no hold.
//   0      util 800 -> 1000 -> 2802000 x 1000 / 1024 = 2736328 -> 2802000.
//   100 us inside the 750 us window, no idle call since; bw_dl 600 > bw_min
//          0: evaluated. perf max(600, 125) = 600 -> 1641796 -> 1745000.
TEST_CASE("6.18's deadline-bandwidth bypass does not hold the frequency of a CPU busy since", "[cpufreq][schedutil]") {
  using R = SugovLimitsRule;
  for (R rule : {R::kV6_12, R::kV6_18}) {
    INFO(static_cast<int>(rule));
    GovernorParams params;
    params.limits_rule = rule;
    auto g = started("schedutil", x1_policy(1), params);
    CHECK(update1(*g, cfs(800, 0), 0_us) == 2802000u);
    CpuUtil u = cfs(100, 0);
    u.bw_dl = 600;
    const auto next = update1(*g, u, 100_us);
    if (rule == R::kV6_18)
      CHECK(next == 1745000u);
    else
      CHECK_FALSE(next.has_value());
    CHECK(dynamic_cast<SchedutilGovernor&>(*g).cpu_bw_min(0) == 600);
  }
}

TEST_CASE("a shared schedutil policy runs at the frequency its busiest CPU needs", "[cpufreq][schedutil]") {
  auto g = started("schedutil", x1_policy(2));
  // CPU0 util 100 -> 125; CPU1 util 600 -> 750; max 750 ->
  // 2802000 * 750 / 1024 = 2052246 -> 2188000, even when CPU0 calls.
  std::vector<CpuUtil> utils{cfs(100), cfs(600)};
  CHECK(g->update_util(0, utils, 0_us) == 2188000u);
  auto& su = dynamic_cast<SchedutilGovernor&>(*g);
  CHECK(su.cpu_util(0) == 125);
  CHECK(su.cpu_util(1) == 750);
  // After the rate limit, CPU1 quietens: {100, 200} -> 250 ->
  // 2802000 * 250 / 1024 = 684082 -> 851000. (No sugov_hold_freq on shared policies.)
  utils = {cfs(100), cfs(200)};
  CHECK(g->update_util(1, utils, 1_ms) == 851000u);
}

TEST_CASE("schedutil's iowait boost doubles per I/O wakeup and halves per update without one",
          "[cpufreq][schedutil]") {
  GovernorParams p;
  p.rate_limit = Time::zero();  // evaluate every update
  auto g = started("schedutil", x1_policy(1), p);
  auto& su = dynamic_cast<SchedutilGovernor&>(*g);
  uint64_t idle = 0;
  auto io = [&](Time t) { return update1(*g, cfs(0, ++idle), t, kSchedCpufreqIowait); };
  auto plain = [&](Time t) { return update1(*g, cfs(0, ++idle), t); };

  // IOWAIT_BOOST_MIN = 128; util = boost * 1024 >> 10 = boost; +25%.
  CHECK(io(0_ms) == 500000u);  // 128 -> 160 -> 437812 -> 500000
  CHECK(su.iowait_boost(0) == 128);
  CHECK(io(1_ms) == 984000u);  // 256 -> 320 -> 875625 -> 984000
  CHECK(su.iowait_boost(0) == 256);
  CHECK(io(2_ms) == 1826000u);  // 512 -> 640 -> 1751250 -> 1826000
  CHECK(io(3_ms) == 2802000u);  // 1024 -> 1280, capped at 1024 -> fmax
  CHECK(su.iowait_boost(0) == 1024);
  CHECK(io(4_ms) == std::nullopt);  // 2048 capped at 1024: same request
  CHECK(su.iowait_boost(0) == 1024);
  // No new I/O wakeup: halve per update.
  CHECK(plain(5_ms) == 1826000u);  // 512
  CHECK(su.iowait_boost(0) == 512);
  CHECK(plain(6_ms) == 984000u);  // 256
  CHECK(plain(7_ms) == 500000u);  // 128
  CHECK(plain(8_ms) == std::nullopt);  // 64 < 128 -> 0; util 0 -> 500000 again
  CHECK(su.iowait_boost(0) == 0);
}

TEST_CASE("schedutil's iowait boost restarts from the minimum after a tick without updates",
          "[cpufreq][schedutil]") {
  GovernorParams p;
  p.rate_limit = Time::zero();
  p.tick = 4_ms;  // HZ=250
  auto g = started("schedutil", x1_policy(1), p);
  auto& su = dynamic_cast<SchedutilGovernor&>(*g);
  uint64_t idle = 0;
  auto io = [&](Time t) { return update1(*g, cfs(0, ++idle), t, kSchedCpufreqIowait); };
  io(0_ms);
  io(1_ms);
  io(2_ms);
  REQUIRE(su.iowait_boost(0) == 512);

  SECTION("an I/O wakeup after a gap longer than a tick restarts at IOWAIT_BOOST_MIN") {
    CHECK(io(7_ms) == 500000u);  // gap 5 ms > 4 ms: boost 128 -> 160 -> 500000
    CHECK(su.iowait_boost(0) == 128);
  }
  SECTION("a plain update after such a gap drops the boost") {
    CHECK(update1(*g, cfs(0, ++idle), 10_ms) == 500000u);
    CHECK(su.iowait_boost(0) == 0);
  }
  SECTION("a gap of exactly one tick keeps doubling") {
    io(6_ms);  // delta 4 ms is not > TICK_NSEC
    CHECK(su.iowait_boost(0) == 1024);
  }
}

// The kernel hook skips a rate-limited update (update_due() false) only
// when it would have changed nothing: not while a CPU holds an iowait
// boost, whose sugov_iowait_boost() refreshes last_update on every call.
// With a 10 ms rate limit only the first request is evaluated: 128, then
// 256 at 1 ms, still pending (not applied) at 2 ms, so not doubled again.
// Plain updates at 3, 4 and 5 ms (rate-limited) keep last_update at 5 ms,
// so the I/O wake-up at 8 ms (3 ms later, under a tick) finds the boost
// kept; had they been skipped, the 6 ms gap would restart it at 128.
TEST_CASE("a rate-limited update still refreshes a CPU's iowait boost", "[cpufreq][schedutil]") {
  GovernorParams p;
  p.rate_limit = 10_ms;
  p.tick = 4_ms;
  auto g = started("schedutil", x1_policy(1), p);
  auto& su = dynamic_cast<SchedutilGovernor&>(*g);
  uint64_t idle = 0;
  // The kernel hook: update_due() first (Kernel::cpufreq_update_util()).
  auto hook = [&](Time t, unsigned flags) {
    if (su.update_due(0, 0, t, flags)) update1(*g, cfs(0, ++idle), t, flags);
  };
  for (Time t : {0_ms, 1_ms, 2_ms}) hook(t, kSchedCpufreqIowait);
  REQUIRE(su.iowait_boost(0) == 256);
  for (Time t : {3_ms, 4_ms, 5_ms}) {
    CHECK(su.update_due(0, 0, t, 0));
    hook(t, 0);
  }
  CHECK(su.iowait_boost(0) == 256);  // rate-limited: no evaluation, no decay
  hook(8_ms, kSchedCpufreqIowait);
  CHECK(su.iowait_boost(0) == 256);
}

TEST_CASE("a runnable RT task sends schedutil to the maximum frequency", "[cpufreq][schedutil]") {
  const auto policy = x1_policy(1);
  CpuUtil u = cfs(50);
  SECTION("without uclamp, rt runnable forces the floor to the capacity") {
    u.rt_runnable = true;
    auto g = started("schedutil", policy);
    CHECK(update1(*g, u, 0_us) == 2802000u);
  }
  SECTION("without an RT task the same util stays low") {
    auto g = started("schedutil", policy);
    // 50 -> 62 -> 2802000 * 62 / 1024 = 169655 -> 500000
    CHECK(update1(*g, u, 0_us) == 500000u);
  }
  SECTION("with uclamp in use, the RT task's uclamp_min decides") {
    GovernorParams p;
    p.uclamp_used = true;
    u.rt_runnable = true;
    auto g = started("schedutil", policy, p);
    CHECK(update1(*g, u, 0_us) == 500000u);  // rq uclamp_min 0: no boost
    u.uclamp_min = 1024;                      // sched_util_clamp_min_rt_default
    CHECK(g->update_util(0, std::vector<CpuUtil>{u}, 1_ms) == 2802000u);
  }
}

TEST_CASE("schedutil keeps a single CPU's frequency until that CPU has been idle", "[cpufreq][schedutil]") {
  GovernorParams p;
  p.rate_limit = Time::zero();
  SECTION("sugov_hold_freq") {
    auto g = started("schedutil", x1_policy(1), p);
    CHECK(update1(*g, cfs(800, 0), 0_ms) == 2802000u);
    CHECK(update1(*g, cfs(100, 0), 1_ms) == std::nullopt);  // no idle since: hold
    CHECK(update1(*g, cfs(100, 1), 2_ms) == 500000u);       // idled once: lower
  }
  SECTION("a CPU capped by uclamp_max lowers at once") {
    auto g = started("schedutil", x1_policy(1), p);
    CHECK(update1(*g, cfs(800, 0), 0_ms) == 2802000u);
    CpuUtil capped = cfs(100, 0);
    capped.uclamp_capped = true;                           // uclamp_rq_is_capped()
    CHECK(update1(*g, capped, 1_ms) == 500000u);           // no idle since, but capped
  }
  SECTION("without NO_HZ_COMMON it lowers at once") {
    p.nohz_hold_freq = false;
    auto g = started("schedutil", x1_policy(1), p);
    CHECK(update1(*g, cfs(800, 0), 0_ms) == 2802000u);
    CHECK(update1(*g, cfs(100, 0), 1_ms) == 500000u);
  }
}

TEST_CASE("schedutil skips an OPP the energy model marked inefficient", "[cpufreq][schedutil]") {
  // 1 GHz 200 mW, 1.5 GHz 600 mW, 2 GHz 700 mW: 1.5 GHz is inefficient
  // (cost 7812 >= 6835 of 2 GHz; see test_energy_model.cc).
  const std::vector<Opp> opps{{1000000, 0, 200.0}, {1500000, 0, 600.0}, {2000000, 0, 700.0}};
  const EnergyModel em(opps, 1024);
  auto policy = CpufreqPolicy::from_opps(opps, 1, 1024, &em);
  REQUIRE(policy.inefficient == std::vector<bool>{false, true, false});
  policy.validate_and_normalise();
  // util 500 -> 625 -> 2000000 * 625 / 1024 = 1220703.
  CHECK(policy.resolve_freq(1220703, CpufreqRelation::L) == 1500000);   // plain L
  CHECK(policy.resolve_freq(1220703, CpufreqRelation::LE) == 2000000);  // skips 1.5 GHz

  auto g = started("schedutil", policy);
  CHECK(update1(*g, cfs(500), 0_us) == 2000000u);
  // With max = 1.5 GHz the efficient pick is out of limits: retry without
  // efficiencies -> 1500000. util 510 -> 637 -> 2000000 * 637 / 1024 = 1244140.
  g->set_limits(0, 1500000, 1_us);
  CHECK(update1(*g, cfs(510, 1), 2_us) == 1500000u);
}

TEST_CASE("in 6.12 a limits change alone does not re-resolve an unchanged raw frequency",
          "[cpufreq][schedutil]") {
  // 6.12.19 sugov_should_update_freq() sets need_freq_update only for
  // CPUFREQ_NEED_UPDATE_LIMITS drivers, so get_next_freq() returns the
  // cached next_freq when util (hence the raw frequency) is unchanged, and
  // a fast-switch policy stays above a lowered max until util moves.
  auto g = started("schedutil", x1_policy(1));
  CHECK(update1(*g, cfs(1024, 0), 0_us) == 2802000u);
  g->set_limits(0, 2048000, 100_us);
  CHECK(update1(*g, cfs(1024, 1), 200_us) == std::nullopt);
  CHECK(g->cur_khz() == 2802000);
  // A driver with CPUFREQ_NEED_UPDATE_LIMITS re-resolves: 2802000 -> max 2048000.
  GovernorParams p;
  p.need_update_limits = true;
  auto g2 = started("schedutil", x1_policy(1), p);
  CHECK(update1(*g2, cfs(1024, 0), 0_us) == 2802000u);
  g2->set_limits(0, 2048000, 100_us);
  CHECK(update1(*g2, cfs(1024, 1), 200_us) == 2048000u);
}

TEST_CASE("effective_cpu_util scales task util by the time IRQs leave", "[cpufreq][schedutil]") {
  CpuUtil u = cfs(400);
  u.util_irq = 256;
  uint64_t min = 0, max = 0;
  // 400 * (1024 - 256) / 1024 = 300; + 256 = 556
  CHECK(effective_cpu_util(u, 1024, false, &min, &max) == 556);
  CHECK(min == 256);  // irq + bw_dl
  CHECK(max == 1024);
  u.util_irq = 1024;  // IRQ saturates the CPU
  CHECK(effective_cpu_util(u, 1024, false, &min, &max) == 1024);
  // sugov_effective_cpu_perf: max(min, min(1.25 * actual, max))
  CHECK(sugov_effective_cpu_perf(100, 300, 1024) == 300);
  CHECK(sugov_effective_cpu_perf(400, 0, 1024) == 500);
  CHECK(sugov_effective_cpu_perf(900, 0, 1024) == 1024);
  CHECK(sugov_effective_cpu_perf(400, 0, 300) == 300);  // uclamp_max cap
}

TEST_CASE("performance runs at policy max and follows a lowered max", "[cpufreq]") {
  auto g = make_governor("performance", {});
  CHECK(g->start(x1_policy(1), 0_us) == 2802000);
  CHECK(update1(*g, cfs(0), 1_ms) == std::nullopt);  // utilisation is ignored
  // max 2 GHz -> RELATION_H -> 1826000
  CHECK(g->set_limits(0, 2000000, 2_ms) == 1826000u);
}

TEST_CASE("powersave runs at policy min and follows a raised min", "[cpufreq]") {
  auto g = make_governor("powersave", {});
  CHECK(g->start(x1_policy(1), 0_us) == 500000);
  CHECK(update1(*g, cfs(1024), 1_ms) == std::nullopt);
  // min 900 MHz -> RELATION_L -> 984000
  CHECK(g->set_limits(900000, 0, 2_ms) == 984000u);
}

TEST_CASE("userspace holds the set speed within the policy limits", "[cpufreq]") {
  auto policy = x1_policy(1);
  policy.cur_khz = 1300000;  // boot frequency -> RELATION_L -> 1426000
  auto g = make_governor("userspace", {});
  CHECK(g->start(policy, 0_us) == 1426000);  // setspeed = policy->cur
  CHECK(update1(*g, cfs(1024), 1_ms) == std::nullopt);
  CHECK(g->set_speed(1000000) == 1106000u);         // RELATION_L
  CHECK(g->set_limits(0, 984000, 2_ms) == 984000u);  // setspeed above max -> max (H)
  CHECK(g->set_limits(0, 0, 3_ms) == 1106000u);      // limits lifted -> setspeed again

  GovernorParams p;
  p.userspace_setspeed_khz = 2500000;
  auto g2 = make_governor("userspace", p);
  CHECK(g2->start(policy, 0_us) == 2507000);
}

TEST_CASE("only the userspace governor accepts scaling_setspeed", "[cpufreq]") {
  auto g = started("schedutil", x1_policy(1));
  CHECK_THROWS_AS(g->set_speed(1000000), std::logic_error);
}

TEST_CASE("an unknown governor name is an error that lists the valid names", "[cpufreq]") {
  CHECK(governor_names() == std::vector<std::string>{"performance", "powersave", "sched_pixel", "schedutil", "userspace"});
  try {
    make_governor("ondemand", {});
    FAIL("expected std::invalid_argument");
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    CHECK_THAT(msg, Catch::Contains("ondemand"));
    for (const char* n : {"performance", "powersave", "sched_pixel", "schedutil", "userspace"})
      CHECK_THAT(msg, Catch::Contains(n));
  }
  for (const auto& n : governor_names()) CHECK(make_governor(n, {})->name() == n);
}

TEST_CASE("a governor refuses a malformed policy", "[cpufreq]") {
  CpufreqPolicy bad;
  bad.freq_table_khz = {2000000, 1000000};
  CHECK_THROWS_AS(make_governor("schedutil", {})->start(bad, 0_us), std::invalid_argument);
  auto g = started("schedutil", x1_policy(2));
  const std::vector<CpuUtil> one{cfs(1)};
  CHECK_THROWS_AS(g->update_util(0, one, 0_us), std::invalid_argument);  // needs 2 entries
}

TEST_CASE("6.1 and 6.6 mark cpufreq's inefficient OPPs by their own EM cost", "[cpufreq][schedutil]") {
  // 1 GHz 100 mW, 2 GHz 200.05 mW, capacity 1024 (performance 512, 1024).
  // 6.12's em_compute_costs(): cost = power (uW) x 10 / performance:
  // 1000000 / 512 = 1953 and 2000500 / 1024 = 1953, so 1 GHz costs no less
  // than 2 GHz and is inefficient. 6.1's and 6.6's: cost = fmax x power /
  // freq = 200000 and 200050, so it is not.
  const std::vector<Opp> opps{{1000000, 0, 100.0}, {2000000, 0, 200.05}};
  const EnergyModel em(opps, 1024);
  REQUIRE(em.states()[0].cost == 1953);
  REQUIRE(em.states()[1].cost == 1953);
  REQUIRE(em.states()[0].cost_v6_1 == 200000);
  REQUIRE(em.states()[1].cost_v6_1 == 200050);
  auto v6_12 = CpufreqPolicy::from_opps(opps, 1, 1024, &em);
  auto v6_1 = CpufreqPolicy::from_opps(opps, 1, 1024, &em, /*em_costs_v6_1=*/true);
  CHECK(v6_12.inefficient == std::vector<bool>{true, false});
  CHECK(v6_1.inefficient == std::vector<bool>{false, false});
  // util 300 -> 375 -> 2000000 x 375 / 1024 = 732421 kHz: 1 GHz is the
  // lowest OPP at or above it, skipped where it is inefficient.
  CHECK(update1(*started("schedutil", v6_12), cfs(300), 0_us) == 2000000u);
  CHECK(update1(*started("schedutil", v6_1), cfs(300), 0_us) == 1000000u);
}
