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

TEST_CASE("SurfaceFlinger's ADPF session: every report that differs goes out, an equal one waits up to 80 ms",
          "[adpf]") {
  std::vector<uint32_t> writes;
  AdpfParams params;
  params.batching = AdpfBatching::kSurfaceFlinger;
  // Created with PowerAdvisor's kDefaultTarget, 16 ms: stale after 20 x 16
  // ms; then each commit sets the vsync period, 11111111 ns at 90 Hz (dt
  // 111 in 100 us units).
  AdpfSession s(params, 16_ms, [&](uint32_t v) { writes.push_back(v); });
  s.start(Time::zero());
  REQUIRE(writes == std::vector<uint32_t>{129});
  CHECK(s.stale_deadline() == 320_ms);
  s.set_target(Time::ns(11111111));
  CHECK(s.stale_deadline() == 320_ms);  // the timer moves at the next flush
  // The first report goes out: error (3 ms - 11.111111 ms) / 100 us =
  // -81.1 -> -81; P = 1.0 x -81; D: a fall, 0. 129 - 81 = 48.
  CHECK(s.report(3_ms, 10_ms));
  CHECK(s.uclamp_min() == 48u);
  // The same duration 11 ms later: held (equal to the last sent, the last
  // send within 80 ms).
  CHECK_FALSE(s.report(3_ms, 21_ms));
  // 85 ms after the last send: out, the batch of two: P over the last,
  // -81; D 0. 48 - 81 is held at UclampMin_Low, 2.
  CHECK(s.report(3_ms, 95_ms));
  CHECK(s.uclamp_min() == 2u);
  // A different duration goes out at once: 9 ms, error -21: P -21; D = 500
  // x (-21 - -81) / 111 = 270.3 -> 270. 2 + 249 = 251.
  CHECK(s.report(9_ms, 100_ms));
  CHECK(s.uclamp_min() == 251u);
  CHECK(s.stale_deadline() == Time::ns(100000000 + 222222220));  // 20 x 11111111 ns from the flush
  // SF reports even 50 us (HWUI's 0.1 ms floor is libandroid's caller's):
  // error -110 (-110.6); P -110; D a fall. 141.
  CHECK(s.report(50_us, 101_ms));
  CHECK(s.uclamp_min() == 141u);
  // 1 ms: error -101; P -101; D = 500 x 9 / 111 = 40.5 -> 40. 80.
  CHECK(s.report(1_ms, 102_ms));
  CHECK(s.uclamp_min() == 80u);
  CHECK(writes.back() == 80u);
  const Time stale_at = Time::ns(102000000 + 222222220);
  CHECK(s.stale_deadline() == stale_at);
  s.stale_check(stale_at - 1_ns);
  CHECK_FALSE(s.stale());
  s.stale_check(stale_at);
  CHECK(s.stale());
  CHECK(writes.back() == 0u);
  CHECK(s.uclamp_min() == 80u);
  // DISPLAY_UPDATE_IMMINENT at 400 ms: no report for the stale time
  // (isTimeout()), so max(80, UclampMin_Init 129) goes back on the thread
  // and the stale timer restarts from now.
  s.wake_imminent(400_ms);
  CHECK_FALSE(s.stale());
  CHECK(s.uclamp_min() == 129u);
  CHECK(writes.back() == 129u);
  CHECK(s.stale_deadline() == Time::ns(400000000 + 222222220));
  // isTimeout() counts from the last report, not the wake-up: a second
  // hint at 450 ms writes again and moves the timer again.
  s.wake_imminent(450_ms);
  CHECK(writes.size() == 9u);
  CHECK(s.stale_deadline() == Time::ns(450000000 + 222222220));
  s.stale_check(Time::ns(400000000 + 222222220));
  CHECK_FALSE(s.stale());
  s.stale_check(Time::ns(450000000 + 222222220));
  CHECK(s.stale());
}

TEST_CASE("DISPLAY_UPDATE_IMMINENT only restarts the stale timer of a session that reported lately", "[adpf]") {
  std::vector<uint32_t> writes;
  AdpfSession s(AdpfParams{}, 11620_us, [&](uint32_t v) { writes.push_back(v); });
  s.start(Time::zero());
  CHECK(s.stale_deadline() == 232400_us);
  s.wake_imminent(10_ms);  // 10 ms < 232.4 ms since the start: not timed out
  CHECK(writes == std::vector<uint32_t>{129});
  CHECK(s.stale_deadline() == 242400_us);
}

TEST_CASE("a display's sf_adpf reads the profile and SurfaceFlinger's own keys", "[adpf][config]") {
  const std::string head =
      "platform: {cpus: 2}\n"
      "kernel: {version: \"6.12\", uclamp: {enabled: true}}\n"
      "devices:\n"
      "  - name: d\n"
      "    model: display\n";
  const std::string tail = "tasks: [{name: t, events: [{run: 1ms}]}]\n";
  const ScenarioParams p = load_scenario_yaml(
      head + "    sf_adpf: {uclamp_init: 100, report_timeout: 40ms, allowed_actual_deviation: 10us}\n" + tail, "a.yaml");
  const auto& d = std::get<DisplayParams>(p.devices.at(0).params);
  CHECK_FALSE(d.adpf);
  REQUIRE(d.sf_adpf);
  CHECK(d.sf_adpf->batching == AdpfBatching::kSurfaceFlinger);
  CHECK(d.sf_adpf->uclamp_init == 100u);
  CHECK(d.sf_adpf->uclamp_low == 2u);
  CHECK(d.sf_adpf->sf_report_timeout == 40_ms);
  CHECK(d.sf_adpf->sf_allowed_deviation == 10_us);
  CHECK(d.update_imminent_timeout == 80_ms);
  // HWUI's keys are not SurfaceFlinger's.
  try {
    load_scenario_yaml(head + "    sf_adpf: {target_cpu_percent: 70}\n" + tail, "b.yaml");
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK(e.key_path() == "devices[0].sf_adpf.target_cpu_percent");
  }
  // The hint wakes sessions: without one, its timeout is refused.
  try {
    load_scenario_yaml(head + "    update_imminent_timeout: 50ms\n" + tail, "c.yaml");
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK(e.key_path() == "devices[0].update_imminent_timeout");
    CHECK_THAT(e.message(), Catch::Contains("adpf or sf_adpf"));
  }
}

TEST_CASE("SurfaceFlinger's sender holds an equal report for 80 ms and no longer", "[adpf]") {
  AdpfParams params;
  params.batching = AdpfBatching::kSurfaceFlinger;
  AdpfSession s(params, Time::ns(11111111), [](uint32_t) {});
  s.start(Time::zero());
  CHECK(s.report(3_ms, 10_ms));
  CHECK_FALSE(s.report(3_ms, 90_ms));  // exactly kStaleTimeout after the last send: held
  CHECK(s.report(3_ms, 90_ms + 1_ns));
  // A deviation allowed: held within it, sent beyond it.
  params.sf_allowed_deviation = 100_us;
  AdpfSession d(params, Time::ns(11111111), [](uint32_t) {});
  d.start(Time::zero());
  CHECK(d.report(3_ms, 10_ms));
  CHECK_FALSE(d.report(3100_us, 11_ms));
  CHECK(d.report(3101_us, 12_ms));
}

TEST_CASE("DISPLAY_UPDATE_IMMINENT's throttle counts from the previous scheduleCommit, not the previous hint",
          "[adpf]") {
  UpdateImminentThrottle t(80_ms);
  CHECK(t.schedule_commit(Time::zero()));  // mSendUpdateImminent starts true
  CHECK_FALSE(t.schedule_commit(50_ms));
  CHECK_FALSE(t.schedule_commit(100_ms));  // 100 ms after the hint, 50 after the last call
  CHECK_FALSE(t.schedule_commit(179_ms));
  CHECK(t.schedule_commit(259_ms));  // 80 ms after the last call
  UpdateImminentThrottle every(Time::zero());  // no UpdateImminentTimer: every call
  CHECK(every.schedule_commit(1_ms));
  CHECK(every.schedule_commit(1_ms));
}
