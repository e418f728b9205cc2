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
  CHECK(governor_names().size() == 8);
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
