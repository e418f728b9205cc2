// cpuidle governors (models/kernel/cpuidle): teo in six versions and menu in two.
// Every expectation is computed by hand beside it (TICK_NSEC = 4 ms).
#include <catch2/catch.hpp>

#include <array>
#include <climits>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/kernel/cpuidle/governor.h"

using namespace schedlab;
using namespace schedlab::cpuidle;
using namespace schedlab::time_literals;

namespace {

// Two states: WFI (tr 1 us, exit 1 us) and a deeper one (tr 1 ms, exit 300 us).
std::vector<IdleState> two_states() { return {{1_us, 1_us}, {1_ms, 300_us}}; }

SelectInput input(const std::vector<IdleState>& st, Time sleep, Time delta_tick) {
  SelectInput in;
  in.states = st;
  in.sleep_length = sleep;
  in.delta_next_tick = delta_tick;
  return in;
}

}  // namespace

TEST_CASE("teo bins, hits and intercepts follow a scripted series of idle periods",
          "[cpuidle][teo]") {
  const auto st = two_states();
  TeoGovernor teo(TeoVersion::kBaseline);
  TeoGovernor tick(TeoVersion::kV66);  // the only version with the tick bin
  const auto in = input(st, 10_ms, 4_ms);

  // Select 1: no history; candidate = deepest state within 10 ms; stop the tick.
  for (TeoGovernor* g : {&teo, &tick}) {
    auto r = g->select(in);
    CHECK(r.state == 1);
    CHECK(r.stop_tick);
    CHECK(r.queried_sleep_length);
    // Early wakeup after 500 us: measured = 500 - 300/2 = 350 us -> bin 0,
    // sleep length 10 ms -> bin 1 (teo) / the tick bin (teo_v6.6): an intercept.
    g->reflect({.state = 1, .residency = 500_us});
  }

  // Select 2 runs teo_update first: bin0.intercepts = 1024, recent = 1, total = 1024.
  auto r = teo.select(in);
  CHECK(teo.bin(0).intercepts == 1024);
  CHECK(teo.bin(0).recent == 1);
  CHECK(teo.bin(1).hits == 0);
  CHECK(teo.total() == 1024);
  // 2 * 1024 > 1024 - 0: intercepts dominate; bin 0 holds them all, so state 0
  // with duration = middle of bin 0 = 500.5 us < tick: keep the tick.
  CHECK(r.state == 0);
  CHECK_FALSE(r.stop_tick);

  auto rt = tick.select(in);
  CHECK(tick.bin(0).intercepts == 1024);
  CHECK(tick.tick_hits() == 0);
  CHECK(tick.total() == 1024);
  CHECK(rt.state == 0);
  CHECK_FALSE(rt.stop_tick);

  // A timer wakeup on time: 9 ms in state 0, measured = 9 ms - 0.5 us.
  teo.reflect({.state = 0, .residency = 9_ms});
  tick.reflect({.state = 0, .residency = 9_ms});

  // Select 3: decay 1024 -> 896; teo counts a hit in bin 1 (total 896 + 1024),
  // teo_v6.6 counts it in the tick bin (measured >= TICK_NSEC) instead.
  r = teo.select(in);
  CHECK(teo.bin(0).intercepts == 896);
  CHECK(teo.bin(1).hits == 1024);
  CHECK(teo.total() == 1920);
  CHECK(teo.bin(0).recent == 1);  // the recent ring still holds the first intercept
  // 2 * 896 = 1792 <= 1920: no early-wakeup pattern; state 1, stop the tick.
  CHECK(r.state == 1);
  CHECK(r.stop_tick);

  rt = tick.select(in);
  CHECK(tick.bin(0).intercepts == 896);
  CHECK(tick.bin(1).hits == 0);
  CHECK(tick.tick_hits() == 1024);
  CHECK(tick.total() == 1920);
  CHECK(rt.state == 1);
  CHECK(rt.stop_tick);
}

// The tick statistics ("Gather statistics regarding whether or not to stop
// the tick", RFT v2 3/3 of 3 Aug 2023) are in v6.6 but in neither variant
// of the seed thread. Wake-ups 2 ms into a 10 ms sleep: measured = 2 ms -
// 300/2 us = 1.85 ms, past state 1's 1 ms. With the tick bin (the sleep
// length reaches TICK_NSEC, so idx_timer is the tick bin) that is an
// intercept in bin 1; without it idx_timer = idx_duration = 1, a hit.
// Next select: teo_v6.6 sums the intercepts of every bin, 1024 > 1024/2 +
// 1024/8 = 640, so duration_ns = TICK/2 and state 1 keeps the tick;
// teo_tick and teo_tick_rfc see a hit and stop it (10 ms >= TICK).
TEST_CASE("only teo_v6.6 keeps the tick when intercepts are over 5/8 of all wakeups", "[cpuidle][teo]") {
  const auto st = two_states();
  const auto in = input(st, 10_ms, 4_ms);
  for (TeoVersion v : {TeoVersion::kTick, TeoVersion::kTickRfc, TeoVersion::kV66}) {
    TeoGovernor g(v);
    g.select(in);
    g.reflect({.state = 1, .residency = 2_ms});
    auto r = g.select(in);
    CHECK(r.state == 1);
    if (v == TeoVersion::kV66) {
      CHECK(g.bin(1).intercepts == 1024);
      CHECK_FALSE(r.stop_tick);
    } else {
      CHECK(g.bin(1).hits == 1024);
      CHECK(g.tick_hits() == 0);
      CHECK(r.stop_tick);
    }
  }
}

TEST_CASE("only teo stops the tick when bailing out with state 0", "[cpuidle][teo]") {
  // Deeper state's target residency (5 ms) is beyond the 4.5 ms sleep length.
  const std::vector<IdleState> st = {{1_us, 1_us}, {5_ms, 300_us}};
  const auto in = input(st, Time::us(4500), Time::us(4500));

  // teo (v6.5): idx = 0, goto end with duration 4.5 ms >= TICK: tick stopped.
  auto r = TeoGovernor(TeoVersion::kBaseline).select(in);
  CHECK(r.state == 0);
  CHECK(r.stop_tick);
  CHECK(r.queried_sleep_length);

  // teo_tick: the bail-out goes to out_tick: tick kept.
  r = TeoGovernor(TeoVersion::kTick).select(in);
  CHECK(r.state == 0);
  CHECK_FALSE(r.stop_tick);
  CHECK(r.queried_sleep_length);

  // teo_tick_rfc: statistics first (empty -> candidate 1), then the sleep
  // length; 5 ms > 4.5 ms -> state 0; duration 4.5 ms >= TICK: tick stopped.
  r = TeoGovernor(TeoVersion::kTickRfc).select(in);
  CHECK(r.state == 0);
  CHECK(r.stop_tick);
  CHECK(r.queried_sleep_length);
}

TEST_CASE("a utilized two-state CPU: v6.5 teo parks it in WFI with the tick stopped, the fixes keep the tick",
          "[cpuidle][teo]") {
  // The "n < 3 && utilized" path (teo_select(), util-awareness of 6.3+).
  // Sleep length 20 ms, next tick 4 ms away, CPU utilized.
  const auto st = two_states();
  auto in = input(st, 20_ms, 4_ms);
  in.cpu_utilized = true;
  // v6.5: the shallowest non-polling state (WFI), duration_ns still the
  // 20 ms sleep length >= TICK_NSEC: the tick is stopped, the CPU stays in
  // WFI until its timer.
  TeoGovernor teo(TeoVersion::kBaseline);
  auto r = teo.select(in);
  CHECK(r.state == 0);
  CHECK(r.stop_tick);
  // Patch 1/3: duration = middle of bin 0 = (0 + 1 ms) / 2 = 500 us (assumed
  // short), WFI (teo_time_ok(500 us): below the tick), and below TICK_NSEC
  // the tick is kept, so teo runs again at the next tick.
  for (TeoVersion v : {TeoVersion::kTick, TeoVersion::kTickRfc}) {
    TeoGovernor fixed(v);
    auto f = fixed.select(in);
    CHECK(f.state == 0);
    CHECK_FALSE(f.stop_tick);
  }
  // Not utilized: every version takes state 1 (1 ms fits in 20 ms) and stops the tick.
  in.cpu_utilized = false;
  for (TeoVersion v : {TeoVersion::kBaseline, TeoVersion::kTick, TeoVersion::kTickRfc, TeoVersion::kV66}) {
    TeoGovernor g(v);
    auto x = g.select(in);
    CHECK(x.state == 1);
    CHECK(x.stop_tick);
  }
}

// RFC v1's utilized two-state path assumes half of state 1's target
// residency (6 ms here: 3 ms < TICK, the tick is kept, and state 1's 6 ms
// are past the next tick (delta_tick = TICK/2 = 2 ms before the query): the
// shallower polling state 0); v2, merged in v6.6, the whole of it (6 ms >=
// TICK: state 1, the tick stopped). State 0 polls, so both first take 1.
TEST_CASE("a utilized two-state CPU: the RFC v1 assumes half of state 1's residency, v6.6 all of it",
          "[cpuidle][teo]") {
  const std::vector<IdleState> st = {{0_us, 0_us, true}, {6_ms, 300_us}};
  auto in = input(st, 20_ms, 4_ms);
  in.cpu_utilized = true;
  auto r = TeoGovernor(TeoVersion::kTickRfc).select(in);
  CHECK(r.state == 0);
  CHECK_FALSE(r.stop_tick);
  CHECK(r.predicted == 3_ms);
  r = TeoGovernor(TeoVersion::kV66).select(in);
  CHECK(r.state == 1);
  CHECK(r.stop_tick);
  CHECK(r.predicted == 6_ms);
}

TEST_CASE("with one enabled state the teo_tick versions keep the tick if it is shallow",
          "[cpuidle][teo]") {
  std::vector<IdleState> st = two_states();
  st[0].disabled = true;
  const auto in = input(st, 10_ms, 4_ms);

  auto r = TeoGovernor(TeoVersion::kBaseline).select(in);  // duration = sleep length 10 ms
  CHECK(r.state == 1);
  CHECK(r.stop_tick);

  r = TeoGovernor(TeoVersion::kTick).select(in);  // duration = target residency 1 ms
  CHECK(r.state == 1);
  CHECK_FALSE(r.stop_tick);

  r = TeoGovernor(TeoVersion::kTickRfc).select(in);  // same, and no timer check at all
  CHECK(r.state == 1);
  CHECK_FALSE(r.stop_tick);
  CHECK_FALSE(r.queried_sleep_length);
}

TEST_CASE("teo_tick_rfc skips the sleep-length query when the candidate is shallow enough",
          "[cpuidle][teo]") {
  const auto st = two_states();
  const auto in = input(st, 10_ms, 4_ms);
  TeoGovernor rfc(TeoVersion::kTickRfc);
  TeoGovernor tick(TeoVersion::kTick);

  // No history: candidate state 1, so the timers are checked.
  auto r = rfc.select(in);
  CHECK(r.state == 1);
  CHECK(r.stop_tick);
  CHECK(r.queried_sleep_length);
  tick.select(in);

  // One intercept: the statistics pick state 0 -> no query, tick kept.
  rfc.reflect({.state = 1, .residency = 500_us});
  tick.reflect({.state = 1, .residency = 500_us});
  r = rfc.select(in);
  CHECK(r.state == 0);
  CHECK_FALSE(r.stop_tick);
  CHECK_FALSE(r.queried_sleep_length);
  CHECK(rfc.sleep_length() == Time::max());  // KTIME_MAX saved for teo_update
  auto rt = tick.select(in);
  CHECK(rt.state == 0);
  CHECK(rt.queried_sleep_length);  // before the RFC the query is unconditional

  // Polling state 0 and a candidate below RESIDENCY_THRESHOLD_NS (15 us): skipped too.
  const std::vector<IdleState> polled = {{0_us, 0_us, true}, {10_us, 5_us}};
  r = TeoGovernor(TeoVersion::kTickRfc).select(input(polled, 10_ms, 4_ms));
  CHECK(r.state == 1);
  CHECK_FALSE(r.stop_tick);
  CHECK_FALSE(r.queried_sleep_length);
}

TEST_CASE("menu picks the deepest state within the predicted interval and latency limit",
          "[cpuidle][menu]") {
  const std::vector<IdleState> st = {{1_us, 1_us}, {100_us, 50_us}, {2_ms, 500_us}};
  MenuGovernor menu;

  SECTION("a 300 us typical interval picks state 1 and keeps the tick") {
    menu.set_intervals_us({300, 300, 300, 300, 300, 300, 300, 300});
    CHECK(menu.typical_interval_us() == 300);
    auto r = menu.select(input(st, 10_ms, 3_ms));
    CHECK(r.queried_sleep_length);  // 300 us > RESIDENCY_THRESHOLD_NS
    CHECK(menu.bucket() == 4);      // 10 ms in [10 ms, 100 ms)
    CHECK(r.state == 1);
    CHECK_FALSE(r.stop_tick);
  }
  SECTION("a 5 ms typical interval picks state 2 and stops the tick") {
    menu.set_intervals_us({5000, 5000, 5000, 5000, 5000, 5000, 5000, 5000});
    auto in = input(st, 10_ms, 3_ms);
    in.latency_req = 600_us;
    auto r = menu.select(in);
    CHECK(r.state == 2);
    CHECK(r.stop_tick);
    in.latency_req = 400_us;  // state 2's 500 us exit latency is too long
    r = menu.select(in);
    CHECK(r.state == 1);
    CHECK(r.stop_tick);
  }
  SECTION("a latency limit below state 1's exit latency returns state 0 at once") {
    menu.set_intervals_us({5000, 5000, 5000, 5000, 5000, 5000, 5000, 5000});
    auto in = input(st, 10_ms, 3_ms);
    in.latency_req = 40_us;
    auto r = menu.select(in);
    CHECK(r.state == 0);
    CHECK(r.stop_tick);  // state 0 is not a polling one
  }
  SECTION("a 10 us typical interval skips the timer check and keeps the tick") {
    menu.set_intervals_us({10, 10, 10, 10, 10, 10, 10, 10});
    auto r = menu.select(input(st, 10_ms, 3_ms));
    CHECK_FALSE(r.queried_sleep_length);
    CHECK(r.state == 0);
    CHECK_FALSE(r.stop_tick);
  }
  SECTION("the correction factor of the bucket moves toward measured / next timer") {
    menu.set_intervals_us({5000, 5000, 5000, 5000, 5000, 5000, 5000, 5000});
    menu.select(input(st, 10_ms, 3_ms));  // bucket 4, next timer 10 ms
    menu.reflect({.state = 2, .residency = Time::us(5500)});
    menu.select(input(st, 10_ms, 3_ms));
    // 8192 - 8192/8 + 1024 * (5500 - 500) us / 10000 us = 7168 + 512 = 7680.
    CHECK(menu.correction_factor(4) == 7680);
  }
}

TEST_CASE("governors come from the registry by name", "[cpuidle]") {
  CHECK(governor_names().size() == 9);
  for (auto n : governor_names()) CHECK(make_governor(n)->name() == n);
  try {
    make_governor("ladder");
    FAIL("expected std::invalid_argument");
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    CHECK(msg.find("ladder") != std::string::npos);
    CHECK(msg.find("menu menu_v6.18 teo teo_tick teo_tick_rfc teo_v6.6 teo_v6.12 teo_v6.18") != std::string::npos);
  }
}

// teo_tick's utilized refinements (3f0b0966b309, "Update idle duration
// estimate when choosing shallower state"): the idle duration becomes the
// middle of the chosen state's bin, not its target residency.
TEST_CASE("teo_tick's utilized CPU assumes the middle of the shallower state's bin", "[cpuidle][teo]") {
  SECTION("three states: state 2 fits the 10 ms sleep, the utilized CPU takes state 1") {
    // find_shallower(2, 10 ms, no_poll) -> 1 (200 us <= 10 ms); its bin is
    // [200 us, 2 ms): middle 1.1 ms, which teo_time_ok() accepts with the
    // tick running; 1.1 ms < TICK keeps the tick. v6.5 keeps the 10 ms sleep
    // length as the duration and stops the tick.
    const std::vector<IdleState> st = {{1_us, 1_us}, {200_us, 50_us}, {2_ms, 300_us}};
    auto in = input(st, 10_ms, 4_ms);
    in.cpu_utilized = true;
    auto r = TeoGovernor(TeoVersion::kTick).select(in);
    CHECK(r.state == 1);
    CHECK_FALSE(r.stop_tick);
    CHECK(r.predicted == 1100_us);
    r = TeoGovernor(TeoVersion::kBaseline).select(in);
    CHECK(r.state == 1);
    CHECK(r.stop_tick);
    CHECK(r.predicted == 10_ms);
  }
  SECTION("two states, tick already stopped: state 1 with the middle of bin 0") {
    // duration = (1 us + 1 ms) / 2 = 500.5 us; teo_time_ok() rejects it
    // with the tick stopped, so state 1, and the duration stays 500.5 us.
    const auto st = two_states();
    auto in = input(st, 10_ms, 4_ms);
    in.cpu_utilized = true;
    in.tick_stopped = true;
    auto r = TeoGovernor(TeoVersion::kTick).select(in);
    CHECK(r.state == 1);
    CHECK(r.stop_tick);
    CHECK(r.predicted == Time::ns(500500));
  }
}

// teo_v6.12 (the 6.12 file) has no utilization check: a utilized CPU with
// two states, no history and a 10 ms sleep. teo_v6.6's utilized path takes
// WFI (state 0 enabled, not polling, tick running) and keeps the tick;
// teo_v6.12 sees empty statistics, the deepest state, the sleep length
// (1 ms <= 10 ms) and stops the tick (10 ms >= TICK).
TEST_CASE("teo_v6.12 ignores a utilized CPU that teo_v6.6 parks in WFI", "[cpuidle][teo]") {
  const auto st = two_states();
  auto in = input(st, 10_ms, 4_ms);
  in.cpu_utilized = true;
  auto r = TeoGovernor(TeoVersion::kV66).select(in);
  CHECK(r.state == 0);
  CHECK_FALSE(r.stop_tick);
  r = TeoGovernor(TeoVersion::kV612).select(in);
  CHECK(r.state == 1);
  CHECK(r.stop_tick);
  CHECK(r.queried_sleep_length);
}

// When the intercepts alone bring the candidate down to state 0, 6.12
// still queries the sleep length ("otherwise we don't know after wakeup if
// our guess was correct"); 6.6 skips the query (its sleep length stays
// KTIME_MAX). Two states, the next timer 3 ms away (below TICK, so no tick
// bin), the tick a full 3 ms away too:
//  select 1: no history: state 1 (1 ms <= 3 ms), tick kept (3 ms < TICK);
//            woken after 500 us: measured 500 - 150 = 350 us, bin 0, the
//            timer's bin 1: an intercept (bin 0: 1024, total 1024).
//  select 2: 2 x 1024 > 1024 - 0: the intercepts pick state 0, tick kept.
//            woken by the timer after 2.9 ms in state 0: measured
//            2.9 ms - 0.5 us, bin 1.
//  select 3: v6.12 knows the 3 ms timer: bin 1, a hit (hits 1024); v6.6
//            assumed no timer: the timer's bin is beyond every state (the
//            tick bin), so an intercept in bin 1 (1024). Bin 0 decays to 896.
TEST_CASE("teo_v6.12 queries the sleep length when intercepts pick state 0", "[cpuidle][teo]") {
  const auto st = two_states();
  const auto in = input(st, 3_ms, 3_ms);
  for (TeoVersion v : {TeoVersion::kV66, TeoVersion::kV612}) {
    const bool v612 = v == TeoVersion::kV612;
    CAPTURE(v612);
    TeoGovernor g(v);
    auto r = g.select(in);
    CHECK(r.state == 1);
    CHECK_FALSE(r.stop_tick);
    g.reflect({.state = 1, .residency = 500_us});
    r = g.select(in);
    CHECK(g.bin(0).intercepts == 1024);
    CHECK(r.state == 0);
    CHECK_FALSE(r.stop_tick);
    CHECK(r.queried_sleep_length == v612);
    CHECK(g.sleep_length() == (v612 ? 3_ms : Time::max()));
    g.reflect({.state = 0, .residency = Time::us(2900)});
    g.select(in);
    CHECK(g.bin(0).intercepts == 896);
    CHECK(g.bin(1).hits == (v612 ? 1024u : 0u));
    CHECK(g.bin(1).intercepts == (v612 ? 0u : 1024u));
    CHECK(g.bin(0).recent == (v612 ? 0u : 1u));  // 6.12 keeps no recent intercepts
  }
}

// ---- the 6.18 files --------------------------------------------------------

// get_typical_interval() on six 1000 us samples and two short outliers
// (10, 20 us). v6.12 trims from the top only: all 8 give avg 753, variance
// 181924 (too wide); then thresh = 999 leaves {10, 20}: variance 25 <= 400,
// so 15 us. v6.18 trims the side further from the average: avg 753,
// variance 750062 - 753^2 = 183053 (too wide), 753 - 10 > 1000 - 753 so the
// 10 goes; {1000 x 6, 20}: avg 860, variance 857200 - 739600 = 117600 (too
// wide), the 20 goes; {1000 x 6}: variance 0 with 6 * 4 >= 24: 1000 us.
TEST_CASE("menu_v6.18 trims the short outliers that v6.12 keeps", "[cpuidle][menu]") {
  const std::array<unsigned, MenuGovernor::kIntervals> samples = {1000, 10, 1000, 1000, 20, 1000, 1000, 1000};
  MenuGovernor v612;
  MenuGovernor v618({}, MenuVersion::kV618);
  v612.set_intervals_us(samples);
  v618.set_intervals_us(samples);
  CHECK(v612.typical_interval_us() == 15);
  CHECK(v618.typical_interval_us() == 1000);
  // A UINT_MAX sample (a rejected state) never counts in v6.18: the other
  // seven agree on 300 us.
  v618.set_intervals_us({300, 300, UINT_MAX, 300, 300, 300, 300, 300});
  CHECK(v618.typical_interval_us() == 300);
}

// v6.18's menu_select() records UINT_MAX when it runs with no update
// pending and dev->last_residency_ns == 0: before the first idle period.
// After a reflect the update records the measured interval instead.
TEST_CASE("menu_v6.18 records an ignored interval before its first idle period", "[cpuidle][menu]") {
  const std::vector<IdleState> st = {{1_us, 1_us}, {100_us, 50_us}, {2_ms, 500_us}};
  MenuGovernor v612;
  MenuGovernor v618({}, MenuVersion::kV618);
  v612.select(input(st, 10_ms, 3_ms));
  v618.select(input(st, 10_ms, 3_ms));
  CHECK(v612.intervals_us()[0] == 0);
  CHECK(v618.intervals_us()[0] == UINT_MAX);
  // No pattern yet (UINT_MAX is ignored, the zeros give max 0), so the
  // sleep length was asked: next timer 10 ms, bucket 4. Woken after 3 ms in
  // state 0: measured 3000 - 1 us = 2999 us (below the 10 ms cap), recorded
  // after the UINT_MAX; bucket 4's factor: 8192 - 1024 + 1024 * 2999 / 10000
  // = 7168 + 307 = 7475.
  v618.reflect({.state = 0, .residency = Time::us(3000)});
  v618.select(input(st, 10_ms, 3_ms));
  CHECK(v618.intervals_us()[0] == UINT_MAX);
  CHECK(v618.intervals_us()[1] == 2999);
  CHECK(v618.correction_factor(4) == 7475);
}

// With the tick already stopped and a short typical interval (10 us), v6.12
// skips tick_nohz_get_sleep_length(): next timer KTIME_MAX, and the stopped
// tick makes the prediction that, so the deepest state (2 ms). v6.18 asks:
// the timer 1.5 ms away becomes the prediction (the factor's 10 us is below
// TICK), state 2's 2 ms no longer fits, and predicted < TICK ends the search
// at state 1.
TEST_CASE("menu_v6.18 asks for the next timer when the tick is stopped", "[cpuidle][menu]") {
  const std::vector<IdleState> st = {{1_us, 1_us}, {100_us, 50_us}, {2_ms, 500_us}};
  auto in = input(st, 1500_us, 1500_us);
  in.tick_stopped = true;
  MenuGovernor v612;
  MenuGovernor v618({}, MenuVersion::kV618);
  v612.set_intervals_us({10, 10, 10, 10, 10, 10, 10, 10});
  v618.set_intervals_us({10, 10, 10, 10, 10, 10, 10, 10});
  auto r = v612.select(in);
  CHECK_FALSE(r.queried_sleep_length);
  CHECK(r.state == 2);
  CHECK(r.stop_tick);
  r = v618.select(in);
  CHECK(r.queried_sleep_length);
  CHECK(r.state == 1);
  CHECK(r.stop_tick);
}

// A polling state 0 and a 30 us state 1 (exit 3 us); typical interval 20 us,
// next timer 10 ms (factor 8192: 10000 us), so predicted 20 us. v6.12 leaves
// polling for state 1 (exit 3 us within latency_req = 20 us / 1, 30 us before
// the timer); v6.18 only for a state whose target residency is below
// RESIDENCY_THRESHOLD_NS (15 us), so it polls.
TEST_CASE("menu_v6.18 leaves polling only for a state below the residency threshold", "[cpuidle][menu]") {
  std::vector<IdleState> st = {{0_us, 0_us}, {30_us, 3_us}, {2_ms, 500_us}};
  st[0].polling = true;
  const auto in = input(st, 10_ms, 3_ms);
  MenuGovernor v612;
  MenuGovernor v618({}, MenuVersion::kV618);
  v612.set_intervals_us({20, 20, 20, 20, 20, 20, 20, 20});
  v618.set_intervals_us({20, 20, 20, 20, 20, 20, 20, 20});
  auto r = v612.select(in);
  CHECK(r.state == 1);
  CHECK_FALSE(r.stop_tick);  // 30 us < TICK
  r = v618.select(in);
  CHECK(r.state == 0);
  CHECK_FALSE(r.stop_tick);  // a polling state keeps the tick
}

// One I/O waiter on the CPU: v6.12 uses the iowait bucket (6 + 4) and the
// performance multiplier 1 + 10 = 11: latency limit 5 ms / 11 = 454.5 us,
// so state 2 (exit 500 us) is out and state 1 is taken. v6.18 ignores
// iowait: bucket 4, state 2.
TEST_CASE("menu_v6.18 ignores I/O waiters", "[cpuidle][menu]") {
  const std::vector<IdleState> st = {{1_us, 1_us}, {100_us, 50_us}, {2_ms, 500_us}};
  auto in = input(st, 10_ms, 3_ms);
  in.nr_iowaiters = 1;
  MenuGovernor v612;
  MenuGovernor v618({}, MenuVersion::kV618);
  v612.set_intervals_us({5000, 5000, 5000, 5000, 5000, 5000, 5000, 5000});
  v618.set_intervals_us({5000, 5000, 5000, 5000, 5000, 5000, 5000, 5000});
  auto r = v612.select(in);
  CHECK(v612.bucket() == 10);
  CHECK(r.state == 1);
  CHECK(r.stop_tick);  // 5 ms >= TICK
  r = v618.select(in);
  CHECK(v618.bucket() == 4);
  CHECK(r.state == 2);
  CHECK(r.stop_tick);
}

// teo_v6.18's short-idle statistics. Two states (WFI; 1 ms, exit 300 us),
// the next timer 10 ms away:
//  select 1: no history: state 1, sleep length asked, tick stopped.
//            Woken after 10 us (< exit latency): measured 5 us, a short idle
//            (short_idles 1024); bin 0, the timer's bin 1: an intercept.
//  select 2: total 1024; 2 x 1024 > 1024: the intercepts pick state 0, and
//            2 x short_idles >= total: no timer check, tick kept. (v6.12
//            queries the sleep length here; see the test above.)
//            Woken after 3 ms in WFI: measured 3 ms - 0.5 us, not short;
//            sleep length unknown (KTIME_MAX): bin 1 both ways, a hit.
//  select 3: short_idles 896, total 1024 - 128 + 1024 = 1920, bin 0 896:
//            2 x 896 <= 1920: state 1, the timer asked, tick stopped.
TEST_CASE("teo_v6.18 skips the timer check while short idle periods dominate", "[cpuidle][teo]") {
  const auto st = two_states();
  const auto in = input(st, 10_ms, 4_ms);
  TeoGovernor g(TeoVersion::kV618);
  CHECK(g.name() == "teo_v6.18");
  auto r = g.select(in);
  CHECK(r.state == 1);
  CHECK(r.stop_tick);
  CHECK(r.queried_sleep_length);
  g.reflect({.state = 1, .residency = 10_us});
  r = g.select(in);
  CHECK(g.short_idles() == 1024);
  CHECK(g.bin(0).intercepts == 1024);
  CHECK(g.total() == 1024);
  CHECK(r.state == 0);
  CHECK_FALSE(r.stop_tick);
  CHECK_FALSE(r.queried_sleep_length);
  CHECK(g.sleep_length() == Time::max());
  g.reflect({.state = 0, .residency = 3_ms});
  r = g.select(in);
  CHECK(g.short_idles() == 896);
  CHECK(g.total() == 1920);
  CHECK(g.bin(0).intercepts == 896);
  CHECK(g.bin(1).hits == 1024);
  CHECK(r.state == 1);
  CHECK(r.stop_tick);
  CHECK(r.queried_sleep_length);

  // v6.12 on the same first two periods asks for the sleep length when the
  // intercepts bring the candidate down to state 0.
  TeoGovernor old(TeoVersion::kV612);
  old.select(in);
  old.reflect({.state = 1, .residency = 10_us});
  CHECK(old.select(in).queried_sleep_length);
}

// The tick decision. Three states (WFI; 1 ms, exit 300 us; 10 ms, exit
// 1 ms), the next timer 100 ms away, the tick 4 ms away. Select 1 takes
// state 2 and stops the tick; the CPU is woken early, an intercept in bin 1
// (the timer's bin is 2). Select 2: 2 x 1024 > 1024: state 1 (1 ms < TICK).
//  * woken after 2 ms: measured 2 - 0.5 = 1.5 ms < TICK. v6.12 keeps the
//    tick (its sum of all intercepts, 1024, > 5/8 of the total 1024);
//    v6.18 counts no tick intercept and stops it.
//  * woken after 6 ms: measured 5.5 ms >= TICK: v6.18 counts a tick
//    intercept (1024 > 640) and keeps the tick. (The 6.18 file counts
//    intercepts at or past the tick, though its comments speak of those
//    before it; mainline later inverted the test.)
TEST_CASE("teo_v6.18 keeps the tick on intercepts counted against the tick", "[cpuidle][teo]") {
  const std::vector<IdleState> st = {{1_us, 1_us}, {1_ms, 300_us}, {10_ms, 1_ms}};
  const auto in = input(st, 100_ms, 4_ms);
  const Time woken = GENERATE(2_ms, 6_ms);
  CAPTURE(woken);
  for (TeoVersion v : {TeoVersion::kV612, TeoVersion::kV618}) {
    const bool v618 = v == TeoVersion::kV618;
    CAPTURE(v618);
    TeoGovernor g(v);
    auto r = g.select(in);
    CHECK(r.state == 2);
    CHECK(r.stop_tick);
    g.reflect({.state = 2, .residency = woken});
    r = g.select(in);
    CHECK(g.bin(1).intercepts == 1024);
    CHECK(r.state == 1);
    if (v618) CHECK(g.tick_intercepts() == (woken == 6_ms ? 1024u : 0u));
    const bool tick_kept = !v618 || woken == 6_ms;
    CHECK(r.stop_tick == !tick_kept);
  }
}

// A safety-net wakeup (the tick, with the next timer beyond it) counts as
// a long sleep in v6.18: a hit in the timer's bin, not an intercept, and
// not a short idle.
TEST_CASE("teo_v6.18 counts a safety-net wakeup as a long sleep", "[cpuidle][teo]") {
  const auto st = two_states();
  const auto in = input(st, 10_ms, 4_ms);
  for (bool tick : {false, true}) {
    CAPTURE(tick);
    TeoGovernor g(TeoVersion::kV618);
    g.select(in);
    g.reflect({.state = 1, .residency = 10_us, .tick_wakeup = tick});
    g.select(in);
    CHECK(g.bin(0).intercepts == (tick ? 0u : 1024u));
    CHECK(g.bin(1).hits == (tick ? 1024u : 0u));
    CHECK(g.short_idles() == (tick ? 0u : 1024u));
  }
}

// ---------------------------------------------------------------- qcom-cpu-lpm

namespace {

// Platform A's little CPUs (kodiak.dtsi): WFI; little-power-down, entry
// 549 + exit 901 = exit_latency 1450 us, min-residency 1774 us;
// little-rail-power-down, 702 + 915 = 1617 us, 4001 us.
std::vector<IdleState> kodiak_little() { return {{1_us, 1_us}, {1774_us, 1450_us}, {4001_us, 1617_us}}; }

// Platform A's cluster domain (kodiak.dtsi): apss-off, cx-ret, llcc-off as
// power-off latency / power-on latency / residency.
std::vector<GenpdState> kodiak_cluster() {
  return {{2752_us, 3048_us, 6118_us}, {3263_us, 4562_us, 8467_us}, {3638_us, 6562_us, 9826_us}};
}

// One idle period of the qcom governor: select (sleep length `sleep`), then
// the wake-up `measured_us` after the state's exit latency (the governor
// subtracts it again when longer).
SelectResult qcom_period(QcomLpmGovernor& g, const std::vector<IdleState>& st, Time sleep, int64_t measured_us,
                         Time now = Time::zero()) {
  SelectInput in = input(st, sleep, sleep);
  in.now = now;
  const SelectResult r = g.select(in);
  g.reflect({.state = r.state, .residency = Time::us(measured_us) + st[static_cast<size_t>(r.state)].exit_latency});
  return r;
}

}  // namespace

TEST_CASE("qcom-cpu-lpm takes the deepest state the QoS limit and the sleep length allow", "[cpuidle][qcom]") {
  const auto st = kodiak_little();
  QcomLpmGovernor g;
  SelectInput in = input(st, 10_ms, 4_ms);
  in.now = 5_ms;
  // No history: 10 ms fits rail-power-down (4001 us); the tick is stopped,
  // the sleep length always queried, and the deepest choice passes its
  // wake-up, now + 10 ms, to the cluster governor.
  SelectResult r = g.select(in);
  CHECK(r.state == 2);
  CHECK(r.stop_tick);
  CHECK(r.queried_sleep_length);
  CHECK(r.next_wakeup == 15_ms);
  CHECK(r.timer == Time::max());
  // 3 ms: 4001 us does not fit, 1774 us does; not the deepest: no wake-up passed.
  in.sleep_length = 3_ms;
  r = g.select(in);
  CHECK(r.state == 1);
  CHECK(r.next_wakeup == Time::max());
  in.sleep_length = 1_ms;
  CHECK(g.select(in).state == 0);
  // No timer at all: ktime_add_us(now, KTIME_MAX / 1000) wraps into the
  // past, which the cluster governor's domain device passes as no wake-up.
  in.sleep_length = Time::max();
  r = g.select(in);
  CHECK(r.state == 2);
  CHECK(r.next_wakeup < in.now);
  // A PM QoS limit of 1500 us rules out 1617 us but not 1450 us.
  in.sleep_length = 10_ms;
  in.latency_req = 1500_us;
  CHECK(g.select(in).state == 1);
  in.latency_req = 1000_us;
  CHECK(g.select(in).state == 0);
}

TEST_CASE("qcom-cpu-lpm predicts a tight residency pattern and arms its prediction timer", "[cpuidle][qcom]") {
  const auto st = kodiak_little();
  QcomLpmGovernor g;
  // Five idle periods of 500 us (after the exit latency) in the deepest
  // state: the first five selects have fewer than 5 samples (the first
  // none: last_idx -1), so no prediction.
  for (int i = 0; i < 5; ++i) {
    const SelectResult r = qcom_period(g, st, 10_ms, 500);
    CHECK(r.state == 2);
    CHECK(g.nsamp() == i);
  }
  // Select 6 records the fifth sample: 500 x 5, stddev 0 -> predicted 500 us
  // (< 10 ms and <= 4001 us): 4001 and 1774 us exceed it -> WFI. Timer: 500 +
  // 100 = 600 us (under the next state's 1774 - 1 us), started as 10000 - 600
  // > 1773.
  SelectInput in = input(st, 10_ms, 10_ms);
  SelectResult r = g.select(in);
  CHECK(g.nsamp() == 5);
  for (int i = 0; i < 5; ++i) {
    CHECK(g.sample_us(i) == 500);
    CHECK(g.sample_mode(i) == 2);
  }
  CHECK(g.predicted_us() == 500);
  CHECK(g.pred_type() == QcomLpmGovernor::PredType::kResidencyPattern);
  CHECK(r.state == 0);
  CHECK(r.timer == 600_us);
  CHECK(r.next_wakeup == Time::max());
  // A sleep length of 2 ms: 2000 - 600 = 1400 <= 1773: no timer.
  in.sleep_length = 2_ms;
  // (this select records the WFI period never reflected: last_residency is
  // still the 500 + 1617 us one, less WFI's 1 us exit latency -> 2116)
  r = g.select(in);
  CHECK(g.sample_us(0) == 2116);
  CHECK(g.sample_mode(0) == 0);
  // Samples 2116, 500 x 4: avg 823, stddev 646 > 500 and 823 < 6 x 646;
  // without the 2116: 500 x 4, stddev 0 -> 500 again.
  CHECK(g.predicted_us() == 500);
  CHECK(r.state == 0);
  CHECK(r.timer == Time::max());
}

TEST_CASE("qcom-cpu-lpm's prediction timer voids the next prediction and merges two periods", "[cpuidle][qcom]") {
  const auto st = kodiak_little();
  QcomLpmGovernor g;
  for (int i = 0; i < 5; ++i) qcom_period(g, st, 10_ms, 500);
  SelectInput in = input(st, 10_ms, 10_ms);
  SelectResult r = g.select(in);
  REQUIRE(r.state == 0);
  REQUIRE(r.timer == 600_us);
  // The timer fires: the CPU left WFI after 600 us (measured 600 - 1 = 599).
  g.timer_expired(false);
  g.reflect({.state = 0, .residency = 600_us});
  // Next select: the 599 us sample is recorded (slot 0), then no prediction
  // (history_invalid): the deepest state for the 10 ms sleep length.
  r = g.select(in);
  CHECK(g.sample_us(0) == 599);
  CHECK(g.predicted_us() == 0);
  CHECK(r.state == 2);
  CHECK(r.timer == Time::max());
  // It sleeps 5000 us more (+ 1617 exit): the next select adds it to the
  // same sample, 599 + 5000, still slot 0, now under state 2.
  g.reflect({.state = 2, .residency = 6617_us});
  r = g.select(in);
  CHECK(g.sample_us(0) == 5599);
  CHECK(g.sample_mode(0) == 2);
  CHECK(g.sample_us(1) == 500);
  // 5599, 500 x 4: avg 1519.8 -> 1519, stddev 2039 > 500; without 5599:
  // 500 -> predicted 500 us again.
  CHECK(g.predicted_us() == 500);
  CHECK(r.state == 0);
}

TEST_CASE("qcom-cpu-lpm restricts states with premature exits", "[cpuidle][qcom]") {
  const auto st = kodiak_little();
  QcomLpmGovernor g;
  // Five scattered periods in the deepest state, all under its 4001 us:
  // 2000 3500 1800 3900 100 us. find_deviation(): avg 2260, stddev 1354;
  // without 3900: avg 1850, stddev 1205: no pattern. Premature exits: 5 of
  // 5 in state 2 (>= 3): predicted = 11300 / 5 = 2260 us -> state 2 (4001)
  // exceeds it, state 1 (1774) does not.
  for (int64_t us : {2000, 3500, 1800, 3900, 100}) CHECK(qcom_period(g, st, 20_ms, us).state == 2);
  const SelectResult r = g.select(input(st, 20_ms, 20_ms));
  CHECK(g.pred_type() == QcomLpmGovernor::PredType::kPrematureExits);
  CHECK(g.predicted_us() == 2260);
  CHECK(r.state == 1);
  // Timer: min(2260 + 100, 4001 - 1) = 2360 us; 20000 - 2360 > 4000.
  CHECK(r.timer == 2360_us);
}

TEST_CASE("qcom-cpu-lpm predicts from IPI intervals and enters WFI while an IPI is pending", "[cpuidle][qcom]") {
  const auto st = kodiak_little();
  QcomLpmGovernor g;
  // Residencies all beyond 4001 us, scattered: no pattern (their averages
  // exceed the deepest target residency anyway), no premature exit.
  for (int64_t us : {5000, 9000, 4500, 12000, 6000}) qcom_period(g, st, 20_ms, us);
  SelectInput in = input(st, 20_ms, 20_ms);
  SECTION("no IPIs: the intervals are zero, stddev 0, but a 0 average predicts nothing") {
    CHECK(g.select(in).state == 2);
    CHECK(g.predicted_us() == 0);
  }
  SECTION("an IPI every 800 us: predicted 800 us -> WFI") {
    // The first interval counts from 0 (cpu_idle_resched_ts starts at 0).
    for (int i = 1; i <= 5; ++i) g.ipi_raised(Time::us(800 * i));
    const SelectResult r = g.select(in);
    CHECK(g.pred_type() == QcomLpmGovernor::PredType::kIpiPattern);
    CHECK(g.predicted_us() == 800);
    CHECK(r.state == 0);
    CHECK(r.timer == 900_us);
  }
  SECTION("lpm_idle_enter(): WFI instead of a deeper state while an IPI is pending") {
    CHECK(g.enter_state(2) == 2);
    g.ipi_raised(1_ms);
    CHECK(g.ipi_pending());
    CHECK(g.enter_state(2) == 0);
    CHECK(g.enter_state(0) == 0);
    g.ipi_handled();
    CHECK(g.enter_state(2) == 2);
  }
}

TEST_CASE("qcom-cpu-lpm's cluster governor predicts, restricts and is lifted by its timer", "[cpuidle][qcom]") {
  // Platform A's cluster domain: apss-off 2752 / 3048 / 6118 us, cx-ret
  // 3263 / 4562 / 8467 us, llcc-off 3638 / 6562 / 9826 us.
  QcomClusterGovernor c(kodiak_cluster(), 2, /*spans_all_cpus=*/true);
  // The domain's next wake-up: CPU 1 never chose its deepest state (0):
  // the earliest, 0, is past and ignored.
  c.cpu_select(0, 100_ms);
  CHECK(c.next_wakeup(1_ms) == Time::max());
  c.cpu_select(1, 50_ms);
  CHECK(c.next_wakeup(1_ms) == 50_ms);
  // A CPU with no timer (a wrapped, past wake-up) lifts the whole domain's.
  c.cpu_select(1, Time::ns(INT64_MIN));
  CHECK(c.next_wakeup(1_ms) == Time::max());
  c.cpu_select(1, 50_ms);
  // Five 7 ms residencies in apss-off (state 0), entered every 8 ms (the
  // oldest, at 10 ms, is 39 ms old at the last power-on: not stale).
  Time t = 10_ms;
  for (int i = 0; i < 5; ++i, t += 8_ms) {
    const auto pre = c.pre_off(t, 0, Time::max(), false);
    CHECK(pre.allow);
    CHECK(pre.start_timer == Time::max());
    CHECK_FALSE(c.power_on(t + 7_ms, 0));
  }
  // After a shallower state: the average, 7000 us, predicted; at or below
  // llcc-off's 9826 us -> restrict the deepest state.
  CHECK(c.nsamp() == 5);
  CHECK(c.predicted());
  CHECK(c.pred_residency_us() == 7000);
  CHECK(c.restrict_idx() == 2);
  // PM QoS below the state's power-on latency: refused.
  CHECK_FALSE(c.pre_off(t, 1, 4000_us, false).allow);
  // An IPI pending to one of its CPUs: refused.
  CHECK_FALSE(c.pre_off(t, 1, Time::max(), true).allow);
  // genpd picked llcc-off: refused, and the timer armed for its residency +
  // 100 us; cx-ret is allowed, with the timer at the next deeper state's
  // residency + 100 us.
  auto pre = c.pre_off(t, 2, Time::max(), false);
  CHECK_FALSE(pre.allow);
  CHECK(pre.start_timer == 9926_us);
  pre = c.pre_off(t, 1, Time::max(), false);
  CHECK(pre.allow);
  CHECK(pre.start_timer == 9926_us);
  // The timer fires: the restriction is lifted.
  c.timer_expired();
  CHECK(c.restrict_idx() == -1);
  pre = c.pre_off(t, 2, Time::max(), false);
  CHECK(pre.allow);
  CHECK(pre.start_timer == Time::max());
  // A full llcc-off residency of a domain holding every CPU clears all
  // history (the caller clears every CPU's).
  CHECK(c.power_on(t + 20_ms, 2));
  CHECK(c.nsamp() == 0);
  CHECK_FALSE(c.predicted());
}

TEST_CASE("qcom-cpu-lpm's cluster governor: premature exits, stale samples", "[cpuidle][qcom]") {
  QcomClusterGovernor c(kodiak_cluster(), 4, /*spans_all_cpus=*/false);
  // llcc-off (the deepest) left after 5 ms, 5 times, 8 ms apart: all
  // premature (< 9826 us): restrict llcc-off, predicted 5000 us.
  Time t = 1_ms;
  for (int i = 0; i < 5; ++i, t += 8_ms) {
    CHECK(c.pre_off(t, 2, Time::max(), false).allow);
    CHECK_FALSE(c.power_on(t + 5_ms, 2));  // not the whole SoC: nothing cleared
  }
  CHECK(c.restrict_idx() == 2);
  CHECK(c.pred_residency_us() == 5000);
  // cx-ret entered at 49.5 ms: allowed (below the restriction), the
  // cluster timer armed for llcc-off's residency + 100 us.
  const auto pre = c.pre_off(49500_us, 1, Time::max(), false);
  CHECK(pre.allow);
  CHECK(pre.start_timer == 9926_us);
  // Its power-on at 50 ms overwrites the oldest slot; the sample entered at
  // 9 ms is now 41 ms old (> 40 ms): the count drops to 4, nothing is
  // predicted -- but the restriction stays (as in the source).
  c.power_on(50_ms, 1);
  CHECK(c.nsamp() == 4);
  CHECK_FALSE(c.predicted());
  CHECK(c.restrict_idx() == 2);
  CHECK_FALSE(c.pre_off(51_ms, 2, Time::max(), false).allow);
}

TEST_CASE("qcom-cpu-lpm enters WFI while WALT's busy hysteresis lasts, with a bias timer", "[cpuidle][qcom]") {
  const auto st = kodiak_little();
  QcomLpmGovernor g;
  SelectInput in = input(st, 10_ms, 10_ms);
  in.now = 1_ms;
  in.lpm_bias_until = 4_ms;
  SelectResult r = g.select(in);
  CHECK(r.state == 0);
  CHECK(r.bias_timer == 3_ms);
  CHECK(r.timer == Time::max());
  CHECK(r.next_wakeup == Time::max());
  CHECK(g.last_idx() == 0);
  // The bias timer's expiry does not mark the history (biastimer_fn() is
  // empty): the WFI period (3 ms - 1 us exit) is an ordinary sample, and
  // with the bias over the deepest state follows.
  g.timer_expired(true);
  g.reflect({.state = 0, .residency = 3_ms});
  in.now = 4_ms;
  r = g.select(in);
  CHECK(r.state == 2);
  CHECK(r.bias_timer == Time::max());
  CHECK(g.sample_us(0) == 2999);
  CHECK(g.sample_mode(0) == 0);
}
