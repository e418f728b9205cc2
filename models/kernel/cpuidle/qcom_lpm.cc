// qcom-cpu-lpm: Qualcomm's cpuidle governor and its cluster governor
// (governor.h says what they do and what is left out).
//
// Source: drivers/cpuidle/governors/qcom-lpm.c, qcom-cluster-lpm.c and
// qcom-lpm.h of the Snapdragon vendor kernels (la_kernel_qcom; read in the
// realme GT8 Pro Android 16 kernel source, 2025). Units are the source's:
// the history holds microseconds (ktime_to_us()), struct cpuidle_state's
// exit_latency and target_residency are microseconds, the sleep length and
// genpd's latencies nanoseconds.
#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "models/kernel/cpuidle/governor.h"

namespace schedlab::cpuidle {
namespace {

uint64_t to_us(Time t) { return static_cast<uint64_t>(t.count() / 1000); }

// int_sqrt(): the integer square root, rounded down.
uint64_t int_sqrt(uint64_t x) {
  uint64_t r = 0;
  uint64_t bit = uint64_t{1} << 62;
  while (bit > x) bit >>= 2;
  while (bit != 0) {
    if (x >= r + bit) {
      x -= r + bit;
      r = (r >> 1) + bit;
    } else {
      r >>= 1;
    }
    bit >>= 2;
  }
  return r;
}

}  // namespace

// ---------------------------------------------------------------- per CPU

// lpm_enable_device(): last_idx = -1; the rest of struct lpm_cpu is
// zero-initialised per-CPU data.
void QcomLpmGovernor::enable() { *this = QcomLpmGovernor(); }

// clear_cpu_predict_history(): the residency history only (not the IPI one).
void QcomLpmGovernor::clear_history() {
  resi_.fill(0);
  mode_.fill(-1);
  samples_idx_ = 0;
  nsamp_ = 0;
  pred_type_ = PredType::kReset;
}

// ipi_raise() (the ipi_raise tracepoint, on the sending CPU): pending until
// the target's handler starts, and the interval since the previous IPI to
// this CPU (update_ipi_history()).
void QcomLpmGovernor::ipi_raised(Time now) {
  ipi_pending_ = true;
  ipi_interval_[static_cast<size_t>(ipi_ptr_)] = static_cast<uint32_t>((now.count() - last_ipi_ns_) / 1000);
  if (++ipi_ptr_ >= kMaxSamples) ipi_ptr_ = 0;
  last_ipi_ns_ = now.count();
}

// update_cpu_history(), at the start of each select: the previous idle
// period (dev->last_residency_ns, less the chosen state's exit latency when
// longer) goes into the ring under the state the previous select chose
// (last_idx: a WFI entered instead for a pending IPI still counts as that
// state). After a prediction-timer wake-up it is added to the sample before.
void QcomLpmGovernor::update_cpu_history(std::span<const IdleState> st) {
  const int idx = last_idx_;
  if (idx < 0 || idx > static_cast<int>(st.size()) - 1) return;
  uint64_t measured_us = static_cast<uint64_t>(last_residency_ns_ / 1000);
  const uint64_t exit_us = to_us(st[static_cast<size_t>(idx)].exit_latency);
  if (measured_us > exit_us) measured_us -= exit_us;
  if (htmr_wkup_) {
    samples_idx_ = samples_idx_ == 0 ? kMaxSamples - 1 : samples_idx_ - 1;
    resi_[static_cast<size_t>(samples_idx_)] += static_cast<uint32_t>(measured_us);
    htmr_wkup_ = false;
  } else {
    resi_[static_cast<size_t>(samples_idx_)] = static_cast<uint32_t>(measured_us);
  }
  mode_[static_cast<size_t>(samples_idx_)] = idx;
  pred_type_ = PredType::kReset;
  if (nsamp_ < kMaxSamples) ++nsamp_;
  if (++samples_idx_ >= kMaxSamples) samples_idx_ = 0;
}

// find_deviation(): the average of the samples if they are tight (standard
// deviation <= PRED_REF_STDDEV, or average > 6 sigma over at least four
// samples); if not, once more without the largest value(s). 0 = no
// prediction (also when the average reaches the sleep length or exceeds
// the deepest state's target residency).
uint64_t QcomLpmGovernor::find_deviation(std::span<const IdleState> st,
                                         const std::array<uint32_t, kMaxSamples>& samples,
                                         uint64_t duration_ns) const {
  const uint64_t max_residency_us = to_us(st.back().target_residency);
  uint64_t thresh = UINT64_MAX;
  uint64_t divisor = 0;
  do {
    uint64_t max = 0, avg = 0, stddev = 0;
    divisor = 0;
    for (uint32_t v : samples) {
      if (v <= thresh) {
        avg += v;
        ++divisor;
        if (v > max) max = v;
      }
    }
    avg /= divisor;  // never 0: the largest value is always kept the first time, and
                     // the retry happens only when the values differ
    for (uint32_t v : samples) {
      if (v <= thresh) {
        const int64_t diff = static_cast<int64_t>(v) - static_cast<int64_t>(avg);
        stddev += static_cast<uint64_t>(diff * diff);
      }
    }
    stddev = int_sqrt(stddev / divisor);
    if ((avg > stddev * 6 && divisor >= kMaxSamples - 1) || stddev <= kPredRefStddevUs) {
      if (avg >= duration_ns / 1000 || avg > max_residency_us) return 0;
      return avg;
    }
    thresh = max - 1;
  } while (divisor > kMaxSamples - 1);
  return 0;
}

// cpu_predict().
void QcomLpmGovernor::cpu_predict(std::span<const IdleState> st, uint64_t duration_ns) {
  // The prediction timer woke the CPU last time: no prediction now, and
  // the coming sample is merged with the one before.
  if (history_invalid_) {
    history_invalid_ = false;
    htmr_wkup_ = true;
    return;
  }
  if (static_cast<uint64_t>(st[0].target_residency.count()) > duration_ns) return;
  if (nsamp_ < kMaxSamples) return;
  predicted_ = find_deviation(st, resi_, duration_ns);
  if (predicted_) {
    pred_type_ = PredType::kResidencyPattern;
    return;
  }
  for (size_t j = 1; j < st.size(); ++j) {
    const uint64_t min_residency_us = to_us(st[j].target_residency);
    unsigned count = 0;
    uint64_t sum = 0;
    for (int i = 0; i < kMaxSamples; ++i) {
      if (mode_[static_cast<size_t>(i)] == static_cast<int>(j) && resi_[static_cast<size_t>(i)] < min_residency_us) {
        ++count;
        sum += resi_[static_cast<size_t>(i)];
      }
    }
    if (count >= kPredPrematureCnt) {
      predicted_ = sum / count;
      pred_type_ = PredType::kPrematureExits;
      break;
    }
  }
  if (predicted_) return;
  predicted_ = find_deviation(st, ipi_interval_, duration_ns);
  if (predicted_) pred_type_ = PredType::kIpiPattern;
}

// lpm_select().
SelectResult QcomLpmGovernor::select(const SelectInput& in) {
  const auto st = in.states;
  if (st.empty() || st.size() > static_cast<size_t>(kStateMax))
    throw std::invalid_argument("qcom-cpu-lpm: state count must be 1..CPUIDLE_STATE_MAX");
  SelectResult r;
  r.queried_sleep_length = true;  // tick_nohz_get_sleep_length(), always
  // cpuidle_governor_latency_req() in us (no request: the default 2000 s).
  const uint64_t latency_req_us =
      in.latency_req == Time::max() ? uint64_t{2'000'000'000} : to_us(max(in.latency_req, Time::zero()));
  predicted_ = 0;
  bool predict_started = false;
  const int64_t sleep_ns = in.sleep_length == Time::max() ? INT64_MAX : in.sleep_length.count();
  update_cpu_history(st);
  // lpm_disallowed(): a negative sleep length (sleep_disabled is N), or
  // WALT's bias (sched_lpm_disallowed_time() returns 0 until the CPU's busy
  // hysteresis ends): WFI, with the bias timer for the rest.
  if (sleep_ns < 0) {
    r.state = 0;
    r.why = "sleep length negative: WFI (lpm_disallowed())";
    return r;
  }
  if (in.now < in.lpm_bias_until) {
    last_idx_ = 0;
    r.state = 0;
    r.bias_timer = in.lpm_bias_until - in.now;
    r.why = "WALT busy hysteresis: WFI (sched_lpm_disallowed_time())";
    return r;
  }
  const uint64_t duration_ns = static_cast<uint64_t>(sleep_ns);
  int i = static_cast<int>(st.size()) - 1;
  r.why = "deepest state allowed";
  for (; i > 0; --i) {
    const IdleState& s = st[static_cast<size_t>(i)];
    if (s.disabled) continue;
    if (latency_req_us < to_us(s.exit_latency)) {
      r.why = "PM QoS limit below the exit latency";
      continue;
    }
    if (static_cast<uint64_t>(s.target_residency.count()) > duration_ns) {
      r.why = "target residency beyond the sleep length";
      continue;
    }
    if (!predict_started) {
      cpu_predict(st, duration_ns);
      predict_started = true;
    }
    if (predicted_ && to_us(s.target_residency) > predicted_) {
      r.why = pred_type_ == PredType::kResidencyPattern ? "predicted idle shorter (residency pattern)"
              : pred_type_ == PredType::kPrematureExits ? "predicted idle shorter (premature exits)"
                                                        : "predicted idle shorter (IPI pattern)";
      continue;
    }
    r.why = predicted_ ? "within the predicted idle" : "fits the sleep length";
    break;
  }
  last_idx_ = i;
  r.state = i;
  const uint64_t duration_us = duration_ns / 1000;
  r.predicted = predicted_ ? Time::us(static_cast<int64_t>(predicted_))
                           : (sleep_ns == INT64_MAX ? Time::max() : Time::us(static_cast<int64_t>(duration_us)));
  // start_prediction_timer(): for a predicted choice below the deepest
  // state, when the sleep length leaves room for a deeper state after it.
  // (Its lowering of next_wakeup to the predicted time -- which compares
  // nanoseconds with microseconds -- is skipped for a deepest-state choice,
  // the only one whose next_wakeup reaches the cluster: no effect.)
  const int last_level = static_cast<int>(st.size()) - 1;
  if (predicted_ && i < last_level) {
    const uint64_t max_residency = to_us(st[static_cast<size_t>(i + 1)].target_residency) - 1;
    const uint64_t htime = std::min(predicted_ + kPredTimerAddUs, max_residency);
    if (duration_us > htime && duration_us - htime > max_residency) r.timer = Time::us(static_cast<int64_t>(htime));
  }
  // update_cluster_select(): next_wakeup = now + the sleep length in us.
  // With no timer at all (KTIME_MAX) ktime_add_us() wraps to a time in the
  // past, which genpd ignores: the whole domain device then sets no
  // wake-up (get_cluster_sleep_time() takes the earliest).
  if (i == last_level)
    r.next_wakeup = sleep_ns == INT64_MAX ? Time::ns(INT64_MIN) : in.now + Time::us(static_cast<int64_t>(duration_us));
  return r;
}

// ---------------------------------------------------------------- cluster

QcomClusterGovernor::QcomClusterGovernor(std::vector<GenpdState> states, int nr_cpus, bool spans_all_cpus)
    : states_(std::move(states)),
      spans_all_cpus_(spans_all_cpus),
      cpu_next_wakeup_(static_cast<size_t>(nr_cpus), Time::zero()) {
  if (states_.empty()) throw std::invalid_argument("qcom cluster governor: the domain has no states");
}

// get_cluster_sleep_time() (cpu_next_wakeup starts at 0), then genpd's
// update_domain_next_wakeup(), which ignores a time already past.
Time QcomClusterGovernor::next_wakeup(Time now) const {
  Time t = Time::max();
  for (Time w : cpu_next_wakeup_) t = min(t, w);
  return t < now ? Time::max() : t;
}

// cluster_power_cb(GENPD_NOTIFY_PRE_OFF) with cluster_power_down().
QcomClusterGovernor::PreOff QcomClusterGovernor::pre_off(Time now, int state, Time cpus_latency_req,
                                                         bool ipi_pending) {
  PreOff r;
  if (ipi_pending) {
    r.allow = false;
    return r;
  }
  entry_time_ns_ = now.count();
  entry_idx_ = state;
  if (cpus_latency_req < states_[static_cast<size_t>(state)].power_on_latency) {
    r.allow = false;
    return r;
  }
  // With a prediction that may be wrong, the cluster timer: the residency
  // of the next deeper state (of this one, at the deepest) + PRED_TIMER_ADD.
  // (It is armed even when the restriction refuses the state.)
  const int deepest = static_cast<int>(states_.size()) - 1;
  if (predicted_ && !(state == deepest && restrict_idx_ == -1)) {
    const Time residency = states_[static_cast<size_t>(state != deepest ? state + 1 : state)].residency;
    r.start_timer = residency + Time::us(static_cast<int64_t>(QcomLpmGovernor::kPredTimerAddUs));
  }
  r.allow = restrict_idx_ == -1 || state < restrict_idx_;
  return r;
}

// clusttimer_fn().
void QcomClusterGovernor::timer_expired() {
  history_invalid_ = true;
  htmr_wkup_ = true;
  predicted_ = false;
  restrict_idx_ = -1;
  pred_residency_ = 0;
}

// clear_cluster_history().
void QcomClusterGovernor::clear_history() {
  history_.fill(Sample{});
  samples_idx_ = 0;
  nsamp_ = 0;
  history_invalid_ = false;
  htmr_wkup_ = false;
  predicted_ = false;
  restrict_idx_ = -1;
}

// update_cluster_history(). (The sample's entry time is written at the
// slot before a timer wake-up steps back, as the source does.)
void QcomClusterGovernor::update_history(Time now, int state) {
  if (entry_idx_ != state) return;
  const uint64_t residency = static_cast<uint64_t>((now.count() - entry_time_ns_) / 1000);
  history_[static_cast<size_t>(samples_idx_)].entry_time = entry_time_ns_ / 1000;
  int si = samples_idx_;
  if (htmr_wkup_) {
    si = si == 0 ? kMaxSamples - 1 : si - 1;
    history_[static_cast<size_t>(si)].residency += residency;
    htmr_wkup_ = false;
  } else {
    history_[static_cast<size_t>(si)].residency = residency;
  }
  history_[static_cast<size_t>(si)].mode = state;
  entry_idx_ = -1;
  entry_time_ns_ = 0;
  if (nsamp_ < kMaxSamples) ++nsamp_;
  samples_idx_ = si + 1 >= kMaxSamples ? 0 : si + 1;
}

// cluster_predict().
void QcomClusterGovernor::predict(Time now, int state) {
  predicted_ = false;
  pred_residency_ = 0;
  if (history_invalid_) {
    history_invalid_ = false;
    return;
  }
  // Only recent history: each sample older than the invalid time takes
  // one off the count (which refills as new samples come).
  const int64_t cur_us = now.count() / 1000;
  if (nsamp_ == kMaxSamples)
    for (const Sample& h : history_)
      if (cur_us - h.entry_time > kSampleInvalidUs) --nsamp_;
  if (nsamp_ < kMaxSamples) return;
  const int deepest = static_cast<int>(states_.size()) - 1;
  uint64_t avg = 0;
  if (state < deepest) {
    for (const Sample& h : history_) avg += h.residency;
    avg /= kMaxSamples;
    pred_residency_ = avg;
    predicted_ = true;
    restrict_idx_ = static_cast<int64_t>(avg) * 1000 <= states_.back().residency.count() ? deepest : -1;
    return;
  }
  for (int j = 0; j <= deepest; ++j) {
    uint32_t count = 0;
    for (const Sample& h : history_) {
      if (h.mode == j && static_cast<int64_t>(h.residency) * 1000 < states_[static_cast<size_t>(j)].residency.count()) {
        ++count;
        avg += h.residency;  // not reset per state (as in the source)
      }
    }
    if (count >= kPredPrematureCnt) {
      pred_residency_ = avg / count;
      predicted_ = true;
      restrict_idx_ = j;
      return;
    }
  }
}

// cluster_power_cb(GENPD_NOTIFY_ON): update_cluster_history(), whose end
// clears all history after a full deepest residency of a domain holding
// every CPU (the SoC slept), then cluster_predict().
bool QcomClusterGovernor::power_on(Time now, int state) {
  const bool counted = entry_idx_ == state;
  const int64_t residency_us = (now.count() - entry_time_ns_) / 1000;
  update_history(now, state);
  const int deepest = static_cast<int>(states_.size()) - 1;
  const bool clear_all = counted && residency_us * 1000 >= states_[static_cast<size_t>(state)].residency.count() &&
                         spans_all_cpus_ && state == deepest;
  if (clear_all) clear_history();
  predict(now, state);
  return clear_all;
}

}  // namespace schedlab::cpuidle
