// ADPF hint sessions (see adpf.h).
#include "models/devices/adpf.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace schedlab {

namespace {
// ns_to_100us(): the HAL's PID works in 100 us units, truncating.
int64_t to_100us(Time t) { return t.count() / 100000; }
// getStaleTime()'s span: the target x StaleTimeFactor.
Time stale_span(Time target, double factor) {
  return Time::ns(static_cast<int64_t>(static_cast<double>(target.count()) * factor));
}
}  // namespace

AdpfSession::AdpfSession(const AdpfParams& params, Time target, std::function<void(uint32_t)> apply)
    : params_(params), target_(target), apply_(std::move(apply)) {
  if (target_ <= Time::us(100)) throw std::invalid_argument("ADPF: the target work duration must exceed 0.1 ms");
  if (params_.uclamp_low > params_.uclamp_high || params_.uclamp_high > 1024)
    throw std::invalid_argument("ADPF: needs uclamp_low <= uclamp_high <= 1024");
  stale_after_ = stale_span(target_, params_.stale_time_factor);
}

void AdpfSession::set_target(Time target) {
  if (target <= Time::zero()) throw std::invalid_argument("ADPF: the target work duration must be > 0");
  target_ = target;
  stale_after_ = stale_span(target_, params_.stale_time_factor);
}

// PowerHintSession's constructor: setSessionUclampMin(UclampMin_Init),
// mLastUpdatedTime = now (the stale timer's start).
void AdpfSession::start(Time now) {
  current_min_ = params_.uclamp_init;
  last_flush_ = now;
  stale_timer_ = now + stale_after_;
  apply_(current_min_);
}

// APerformanceHintSession::reportActualWorkDuration() (libandroid).
// Android 13: a report under the target is cached while the last flush
// (mLastUpdateTimestamp, set at creation too) is within the rate. Android
// 14: over the target, send and forget when the target was first met;
// under it, send within a rate of first meeting it (restarted after two
// rates without meeting it), else only once a rate passed since the last
// report sent under it. A held report waits in the batch.
// SurfaceFlinger (PowerAdvisor::sendActualWorkDuration() ->
// shouldReportActualDurations()): send if nothing was sent yet, if the
// last send is more than the timeout ago, or if the report differs from
// the last one sent by more than the allowed deviation.
bool AdpfSession::report(Time actual, Time now) {
  // HWUI reports only durations above 0.1 ms and below 10 s.
  const bool hwui = params_.batching != AdpfBatching::kSurfaceFlinger;
  if (hwui && (actual <= Time::us(100) || actual >= Time::s(10))) return false;
  batch_prev_ = batch_len_ > 0 ? batch_last_ : previous_error_;
  batch_last_ = to_100us(actual - target_);
  ++batch_len_;
  const Time rate = params_.reporting_rate_limit;
  if (!hwui) {
    if (last_sent_actual_ && now - last_flush_ <= params_.sf_report_timeout &&
        std::max(actual, *last_sent_actual_) - std::min(actual, *last_sent_actual_) <= params_.sf_allowed_deviation)
      return false;
    last_sent_actual_ = actual;
  } else if (params_.batching == AdpfBatching::kAndroid13) {
    if (actual < target_ && now - last_flush_ <= rate) return false;
  } else if (actual >= target_) {
    first_met_.reset();
  } else {
    if (!first_met_ || !last_met_ || now - *last_met_ > rate * 2) first_met_ = now;
    if (now - *first_met_ > rate && now - *last_met_ <= rate) return false;
    last_met_ = now;
  }
  flush(now);
  return true;
}

// PowerHintSession::pidControl() with SamplingWindow_P = D = 1, I = 0.
int64_t AdpfSession::pid_output(int64_t error, int64_t previous, int64_t dt) const {
  const auto p = static_cast<int64_t>((error > 0 ? params_.p_over : params_.p_under) * static_cast<double>(error));
  const int64_t delta = error - previous;
  const auto d = static_cast<int64_t>((delta > 0 ? params_.d_over : params_.d_under) * static_cast<double>(delta) /
                                      static_cast<double>(dt));
  return p + d;
}

// reportActualWorkDuration() in the HAL: the PID over the batch, the new
// uclamp_min clamped into [Low, High] and written (also when it did not
// change: a stale session's threads get it back).
void AdpfSession::flush(Time now) {
  const int64_t out = pid_output(batch_last_, batch_prev_, std::max<int64_t>(1, to_100us(target_)));
  previous_error_ = batch_last_;
  batch_len_ = 0;
  int64_t next = std::min<int64_t>(params_.uclamp_high, static_cast<int64_t>(current_min_) + out);
  next = std::max<int64_t>(params_.uclamp_low, next);
  current_min_ = static_cast<uint32_t>(next);
  last_flush_ = now;
  stale_timer_ = now + stale_after_;
  stale_ = false;
  apply_(current_min_);
}

// PowerHintSession::StaleTimerHandler: its time reached (no flush and no
// wake-up restarted it): the threads' uclamp_min goes to 0
// (PowerSessionManager::setUclampMin(0)).
void AdpfSession::stale_check(Time now) {
  if (stale_ || now < stale_timer_) return;
  stale_ = true;
  apply_(0);
}

// wakeSessions() then wakeup(): the stale timer restarts from now; a
// session whose last report is older than its stale time (isTimeout())
// gets max(its value, UclampMin_Init), on its threads too.
void AdpfSession::wake_imminent(Time now) {
  stale_timer_ = now + stale_after_;
  if (now < last_flush_ + stale_after_) return;
  current_min_ = std::max(current_min_, params_.uclamp_init);
  stale_ = false;
  apply_(current_min_);
}

}  // namespace schedlab
