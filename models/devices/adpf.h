// ADPF (Android Dynamic Performance Framework) hint sessions as the Pixel
// power HAL runs them: the PID controller that moves a session's threads'
// uclamp_min from the work durations the app, or SurfaceFlinger (its
// estimate), reports each frame.
//
// Sources (Android 13): the Pixel power HAL,
// LineageOS/android_hardware_google_pixel lineage-20.0 (474509cc),
// power-libperfmgr/aidl/PowerHintSession.cpp (reportActualWorkDuration(),
// the PID, the stale timer) and PowerSessionManager.cpp (the
// sched_setattr() write); the profile values of the Pixel 6's
// powerhint-oriole.json (LineageOS/android_device_google_raviole
// lineage-20, AdpfConfig REFRESH_90FPS); HWUI's DrawFrameTask (its target
// and actual durations), read in Android 13-era forks, not in Android 13
// itself; libandroid's performance_hint.cpp (the batching) in two
// versions (AdpfBatching): the one called Android 13's, read in
// weritos666/android_frameworks_base 3166f1c (a fork without Android 14's
// sendHint() and setThreads(); it includes only performance_hint_private.h,
// whose API Android 13 moved to the public NDK header, frameworks/native
// 406c8abeff, so it may be Android 12L's: not checked against an Android
// 13 tag; Android 12's own rule waits 10 x the rate under the target),
// and Android 14's (mFirstTargetMetTimestamp / mLastTargetMetTimestamp).
//
// What the session does (AdpfSession):
//  - created with the threads' uclamp_min at UclampMin_Init;
//  - the app reports each frame's actual work duration; libandroid sends
//    a report at or over the target at once; under the target, Android 13
//    holds it while the last flush is within the preferred rate
//    (ReportingRateLimitNs), while Android 14 sends every report for the
//    first rate after the target was first met (again after a gap of two
//    rates), then holds them until a rate has passed since the last one
//    it sent under the target; a held report joins the next batch;
//  - each flush runs the PID over the batch, in 100 us units (error =
//    actual - target, dt = target): P over the last sample (SamplingWindow_P
//    1): (error > 0 ? PID_Po : PID_Pu) x error; D over the last sample:
//    (delta > 0 ? PID_Do : PID_Du) x (error - previous error) / dt, the
//    previous error carried across batches; no I term (the profile's
//    PID_I is 0, which zeroes the integral); each term truncated to an
//    integer; uclamp_min = clamp(uclamp_min + P + D, Low, High), written
//    to every thread of the session (sched_setattr(), SCHED_FLAG_UTIL_CLAMP_MIN);
//  - with no flush for StaleTimeFactor x target the session goes stale:
//    its threads' uclamp_min is set to 0, the controller's value is kept
//    and written back at the next flush.
// SurfaceFlinger's own session (AdpfBatching::kSurfaceFlinger; Android
// 13 QPR1+, LineageOS/android_frameworks_native lineage-20.0 f3c6e327fa,
// services/surfaceflinger/DisplayHardware/PowerAdvisor.cpp, identical
// since the android-13.0.0_r16 merge; raviole sets
// debug.sf.enable_adpf_cpu_hint): created at boot with a 16 ms target
// (kDefaultTarget), then each commit sets the vsync period (set_target());
// SF talks to the HAL itself, not through libandroid: a report goes out
// at once if none went before, if the last one went more than 80 ms ago
// (kStaleTimeout), or if it differs from the last sent by more than
// debug.sf.allowed_actual_deviation (0 by default: every report that is
// not equal to the nanosecond); a held one joins the next batch.
//
// DISPLAY_UPDATE_IMMINENT (wake_imminent(); PowerSessionManager::
// wakeSessions(), PowerHintSession::wakeup()): every session's stale timer
// restarts from now; a session with no flush for its stale time gets
// max(its controller value, UclampMin_Init) written back.
//
// Simplified, and why: the HAL's binder thread, its looper and the stale
// timer's thread cost no CPU time and act at once (a few microseconds a
// frame on the phone); HWUI's session's threads are only the UI thread and
// RenderThread (HWUI also adds its hwuiTask pool, which the display model
// does not have); HWUI's sync-delay term is left out; SurfaceFlinger's
// session has only its main thread (its RenderEngine thread has no work
// where the composer composes every frame) and starts with the run, at
// UclampMin_Init (as the run's first scheduleCommit() would wake a session
// stale since boot), not at boot; each session reads its own
// profile keys, where the HAL has one profile for all (give both the same);
// a display's hint wakes only its own sessions (the HAL wakes every one);
// the hint's other action on gs101 (the display controller's early_wakeup,
// powerhint-oriole.json) is display hardware, not modelled.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "sim/time.h"

namespace schedlab {

// Who sends the reports and when (see above): libandroid's batching of
// reports under the target (an app's session, HWUI's), or SurfaceFlinger's
// PowerAdvisor (its own session, straight to the HAL).
enum class AdpfBatching : uint8_t { kAndroid13, kAndroid14, kSurfaceFlinger };

// One power HAL AdpfConfig profile, plus HWUI's target share. Defaults:
// REFRESH_90FPS of the Pixel 6 on Android 13 (raviole lineage-20
// powerhint-oriole.json l.1902-1923) and HWUI's targetCpuTimePercentage 70.
struct AdpfParams {
  uint32_t uclamp_init = 129;   // UclampMin_Init
  uint32_t uclamp_high = 384;   // UclampMin_High
  uint32_t uclamp_low = 2;      // UclampMin_Low
  double p_over = 2.0;          // PID_Po
  double p_under = 1.0;         // PID_Pu
  double d_over = 500.0;        // PID_Do
  double d_under = 0.0;         // PID_Du
  Time reporting_rate_limit = Time::ns(111111110);  // ReportingRateLimitNs (the preferred rate)
  double stale_time_factor = 20.0;              // StaleTimeFactor
  int target_cpu_percent = 70;  // HWUI: target = (deadline - intended vsync) x this / 100
  AdpfBatching batching = AdpfBatching::kAndroid13;  // libandroid's version, or SurfaceFlinger's sender
  // SurfaceFlinger's sender only (PowerAdvisor): kStaleTimeout and
  // debug.sf.allowed_actual_deviation.
  Time sf_report_timeout = Time::ms(80);
  Time sf_allowed_deviation = Time::zero();
};

// PowerAdvisor::notifyDisplayUpdateImminent()'s throttle: the hint goes
// out at the first scheduleCommit() and then at one that comes `timeout`
// or more after the previous scheduleCommit() (mSendUpdateImminent, set
// again by the UpdateImminentTimer once that long passed since
// mLastScreenUpdatedTime, which every call moves; a timeout of 0: every
// call).
class UpdateImminentThrottle {
 public:
  explicit UpdateImminentThrottle(Time timeout) : timeout_(timeout) {}
  // A scheduleCommit() at `now`: whether DISPLAY_UPDATE_IMMINENT goes out.
  bool schedule_commit(Time now) {
    const bool send = !called_ || now - last_call_ >= timeout_;
    called_ = true;
    last_call_ = now;
    return send;
  }

 private:
  Time timeout_;
  bool called_ = false;
  Time last_call_ = Time::zero();
};

class AdpfSession {
 public:
  // `apply(value)` writes uclamp_min `value` to the session's threads.
  AdpfSession(const AdpfParams& params, Time target, std::function<void(uint32_t)> apply);

  // createHintSession() at `now`: the threads get UclampMin_Init; the
  // stale timer runs from here (the caller arms it at stale_deadline()).
  void start(Time now);
  // APerformanceHint_reportActualWorkDuration() at `now`. Returns whether
  // the batch was flushed to the HAL (the caller re-arms its stale timer
  // to stale_deadline()).
  bool report(Time actual, Time now);
  // The stale timer fired at `now`: stale unless it was restarted since.
  void stale_check(Time now);
  // updateTargetWorkDuration(): the PID's dt and the stale time follow it.
  void set_target(Time target);
  // DISPLAY_UPDATE_IMMINENT reached the HAL at `now` (the caller re-arms
  // its stale timer to stale_deadline()).
  void wake_imminent(Time now);

  Time target() const { return target_; }
  Time stale_deadline() const { return stale_timer_; }
  uint32_t uclamp_min() const { return current_min_; }  // the controller's value (kept while stale)
  bool stale() const { return stale_; }

  // The PID step for one flushed batch whose last error is `error` and the
  // one before it `previous` (both and `dt` in 100 us units): P + D.
  int64_t pid_output(int64_t error, int64_t previous, int64_t dt) const;

 private:
  void flush(Time now);

  AdpfParams params_;
  Time target_;
  Time stale_after_;
  std::function<void(uint32_t)> apply_;
  uint32_t current_min_ = 0;
  int64_t previous_error_ = 0;  // the HAL's previous_error, carried across batches
  int64_t batch_last_ = 0, batch_prev_ = 0;
  int batch_len_ = 0;
  Time last_flush_ = Time::zero();  // mLastUpdatedTime: isTimeout() counts from it
  Time stale_timer_ = Time::zero();  // StaleTimerHandler's mStaleTime
  std::optional<Time> last_sent_actual_;  // SurfaceFlinger's mLastActualDurationSent (unset: none sent)
  // libandroid's mFirstTargetMetTimestamp / mLastTargetMetTimestamp (unset: 0 in libandroid).
  std::optional<Time> first_met_, last_met_;
  bool stale_ = false;
};

}  // namespace schedlab
