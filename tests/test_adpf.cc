// ADPF hint sessions (models/devices/adpf.h): the Pixel power HAL's PID
// (PowerHintSession.cpp, lineage-20.0) with the Pixel 6's REFRESH_90FPS
// profile and libandroid's batching, hand-computed step by step.
#include <catch2/catch.hpp>

#include <vector>

#include "models/config/config.h"
#include "models/devices/adpf.h"
#include "models/errors.h"

using namespace schedlab;
using namespace schedlab::time_literals;

TEST_CASE("ADPF with Android 13's batching: a report under the target waits for a rate since the last flush", "[adpf]") {
  std::vector<uint32_t> writes;
  // HWUI's target on gs101: app_duration 16.6 ms x 70% = 11.62 ms; dt =
  // 116 in the HAL's 100 us units. Preferred rate 111.11 ms.
  AdpfSession s(AdpfParams{}, 11620_us, [&](uint32_t v) { writes.push_back(v); });
  s.start(Time::zero());
  REQUIRE(writes == std::vector<uint32_t>{129});
  // 9.62 ms at 1 ms: under the target within a rate of the session's
  // creation (libandroid's mLastUpdateTimestamp starts there): cached.
  CHECK_FALSE(s.report(9620_us, 1_ms));
  // 13.92 ms: over the target: the batch goes at once. Errors -20 and
  // 23: P = 2.0 x 23 = 46, D = 500 x 43 / 116 = 185.3 -> 185. 129 + 231.
  CHECK(s.report(13920_us, 2_ms));
  CHECK(s.uclamp_min() == 360u);
  // Light frames (error -100): cached until a rate after the last flush
  // (2 ms): 3 ms waits, 120 ms sends both: P -100, D 0.
  CHECK_FALSE(s.report(1620_us, 3_ms));
  CHECK(s.report(1620_us, 120_ms));
  CHECK(s.uclamp_min() == 260u);
  CHECK(s.stale_deadline() == 352400_us);  // 120 ms + 20 x 11.62 ms
}

TEST_CASE("ADPF's PID moves uclamp_min by P and D over each flushed batch (Android 14's batching)", "[adpf]") {
  std::vector<uint32_t> writes;
  // HWUI's target on gs101: app_duration 16.6 ms x 70% = 11.62 ms; dt =
  // 116 in the HAL's 100 us units. Preferred rate 111.11 ms.
  AdpfParams params;
  params.batching = AdpfBatching::kAndroid14;
  AdpfSession s(params, 11620_us, [&](uint32_t v) { writes.push_back(v); });
  s.start(Time::zero());
  REQUIRE(writes == std::vector<uint32_t>{129});  // UclampMin_Init
  CHECK(s.stale_deadline() == 232400_us);         // 20 x 11.62 ms from the start
  // 9.62 ms at 1 ms: under the target, the first time: sent. Error
  // (9620 - 11620) / 100 = -20: P = 1.0 x -20 (PID_Pu); D: -20 - 0 is a
  // fall, PID_Du 0. 129 - 20 = 109.
  CHECK(s.report(9620_us, 1_ms));
  CHECK(s.uclamp_min() == 109u);
  // 13.92 ms: over the target: sent at once. Error 23: P = 2.0 x 23 = 46
  // (PID_Po); D = 500 x (23 - -20) / 116 = 185.3 -> 185 (PID_Do).
  // 109 + 231 = 340.
  CHECK(s.report(13920_us, 2_ms));
  CHECK(s.uclamp_min() == 340u);
  CHECK(writes.back() == 340u);
  // 1.62 ms frames (error -100) under the target from 3 ms: sent while
  // within a rate of first meeting it (3 and 50 ms: P -100 each, D 0 or a
  // fall), ...
  CHECK(s.report(1620_us, 3_ms));
  CHECK(s.uclamp_min() == 240u);
  CHECK(s.report(1620_us, 50_ms));
  CHECK(s.uclamp_min() == 140u);
  // ... then held until a rate has passed since the last one sent (50
  // ms): 120 ms is held, 170 ms sends both (P over the last, -100; D 0).
  CHECK_FALSE(s.report(1620_us, 120_ms));
  CHECK(s.report(1620_us, 170_ms));
  CHECK(s.uclamp_min() == 40u);
  // Stale 20 x 11.62 ms = 232.4 ms after the last flush: the threads get
  // 0, the controller keeps 40.
  CHECK(s.stale_deadline() == 402400_us);
  s.stale_check(402_ms);
  CHECK_FALSE(s.stale());
  s.stale_check(402400_us);
  CHECK(s.stale());
  CHECK(writes.back() == 0u);
  CHECK(s.uclamp_min() == 40u);
  // A 20 ms frame: error 83 (83.8 truncated), against the previous batch's
  // last (-100): P = 166, D = 500 x 183 / 116 = 788.8 -> 788; 40 + 954 is
  // clamped to UclampMin_High, 384, and written back.
  CHECK(s.report(20_ms, 450_ms));
  CHECK(s.uclamp_min() == 384u);
  CHECK(writes.back() == 384u);
  CHECK_FALSE(s.stale());
  // Exactly on the target counts as over it: sent at once (error 0: P 0;
  // D = 0 - 83, a fall: 0).
  CHECK(s.report(11620_us, 451_ms));
  CHECK(s.uclamp_min() == 384u);
  // Durations not above 0.1 ms or not below 10 s are not reported (HWUI).
  CHECK_FALSE(s.report(100_us, 452_ms));
  CHECK_FALSE(s.report(10_s, 453_ms));
}

TEST_CASE("ADPF's uclamp_min stays within UclampMin_Low and UclampMin_High", "[adpf]") {
  std::vector<uint32_t> writes;
  AdpfSession s(AdpfParams{}, 11620_us, [&](uint32_t v) { writes.push_back(v); });
  s.start(Time::zero());
  // Light frames 112 ms apart, each sent (each more than a rate after the
  // last flush): -100 a flush
  // (1.62 ms against 11.62 ms) from 129 reaches the floor, 2.
  Time t = Time::zero();
  for (int i = 0; i < 3; ++i) {
    t += 112_ms;
    CHECK(s.report(1620_us, t));
  }
  CHECK(s.uclamp_min() == 2u);  // 129 - 100 = 29, then max(2, 29 - 100)
  CHECK(s.pid_output(23, -20, 116) == 46 + 185);
  CHECK(s.pid_output(-50, -20, 116) == -50);  // falling error: PID_Du 0
}

TEST_CASE("a display's adpf needs uclamp and names a bad key", "[adpf][config]") {
  const std::string head =
      "platform: {cpus: 2}\n"
      "kernel: {version: \"6.12\"";
  const std::string display =
      "devices:\n"
      "  - name: d\n"
      "    model: display\n"
      "    adpf: {uclamp_init: 100}\n"
      "tasks: [{name: t, events: [{run: 1ms}]}]\n";
  try {
    load_scenario_yaml(head + "}\n" + display, "a.yaml");
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK(e.key_path() == "devices[0].adpf");
    CHECK_THAT(e.message(), Catch::Contains("kernel.uclamp.enabled: true"));
  }
  const ScenarioParams p = load_scenario_yaml(head + ", uclamp: {enabled: true}}\n" + display, "b.yaml");
  const auto& d = std::get<DisplayParams>(p.devices.at(0).params);
  REQUIRE(d.adpf);
  CHECK(d.adpf->uclamp_init == 100u);
  CHECK(d.adpf->uclamp_high == 384u);
  CHECK(d.adpf->batching == AdpfBatching::kAndroid13);
  try {
    load_scenario_yaml(head + ", uclamp: {enabled: true}}\n" + display.substr(0, display.find("adpf")) +
                           "adpf: {pid_p_over: fast}\ntasks: [{name: t, events: [{run: 1ms}]}]\n",
                       "c.yaml");
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK(e.key_path() == "devices[0].adpf.pid_p_over");
  }
}
