// PELT, Linux 6.12 kernel/sched/pelt.c, pelt.h and the util_est/attach parts
// of fair.c. See pelt.h for the mapping and the list of simplifications.
#include "models/kernel/sched/pelt.h"

#include <algorithm>
#include <cmath>

namespace schedlab {

namespace {

// mul_u64_u32_shr(a, mul, 32): (a * mul) >> 32 exactly, split in 32-bit
// halves as include/linux/math64.h does (no 128-bit type needed).
inline uint64_t mul_u64_u32_shr32(uint64_t a, uint32_t mul) {
  const uint64_t al = a & 0xffffffffu, ah = a >> 32;
  return ((al * mul) >> 32) + ah * mul;
}

// cap_scale(): v * s >> SCHED_CAPACITY_SHIFT.
inline uint64_t cap_scale(uint64_t v, uint64_t s) { return (v * s) >> kSchedCapacityShift; }

// sub_positive(): *var -= val, but never below zero, in var's own type.
template <typename T, typename U>
inline void sub_positive(T& var, U val) {
  T res = static_cast<T>(var - static_cast<T>(val));
  if (res > var) res = 0;
  var = res;
}

// max_t(u32, a, b): both sides truncated to 32 bits first, as the kernel's
// lower-bound clamps do (even for the u64 load_sum/runnable_sum).
inline uint32_t max_u32(uint64_t a, uint64_t b) {
  return std::max(static_cast<uint32_t>(a), static_cast<uint32_t>(b));
}

}  // namespace

// ---- the geometric series --------------------------------------------------

namespace {
// Documentation/scheduler/sched-pelt.c, calc_runnable_avg_yN_inv():
//   y = pow(0.5, 1/HALFLIFE);  x = ((1UL<<32)-1) * pow(y, i);  (truncated)
// A namespace-scope table, filled before main(): decay_load() reads it
// without the guard a function-local static costs on every call.
std::array<uint32_t, kLoadAvgPeriod> make_yN_inv() {
  std::array<uint32_t, kLoadAvgPeriod> t{};
  const double y = std::pow(0.5, 1.0 / static_cast<double>(kLoadAvgPeriod));
  for (uint32_t i = 0; i < kLoadAvgPeriod; ++i)
    t[i] = static_cast<uint32_t>(static_cast<double>((uint64_t{1} << 32) - 1) * std::pow(y, i));
  return t;
}
const std::array<uint32_t, kLoadAvgPeriod> kYnInv = make_yN_inv();
}  // namespace

const std::array<uint32_t, kLoadAvgPeriod>& pelt_yN_inv() { return kYnInv; }

uint32_t pelt_generate_load_avg_max() {
  // calc_converged_max(): the 32-bit fixed-point fixed point of max*y + 1024.
  const double y = std::pow(0.5, 1.0 / static_cast<double>(kLoadAvgPeriod));
  const int64_t y_inv = static_cast<int64_t>(static_cast<double>((uint64_t{1} << 32) - 1) * y);
  int64_t max = 1024, last = 0;
  for (int n = -1;; ++n) {
    if (n > -1) max = ((max * y_inv) >> 32) + 1024;
    if (last == max) break;
    last = max;
  }
  return static_cast<uint32_t>(max);
}

uint64_t decay_load(uint64_t val, uint64_t n) {
  if (n > uint64_t{kLoadAvgPeriod} * 63) return 0;
  uint32_t local_n = static_cast<uint32_t>(n);
  // y^n = (1/2)^(n/32) * y^(n%32): a shift plus one table multiply.
  if (local_n >= kLoadAvgPeriod) {
    val >>= local_n / kLoadAvgPeriod;
    local_n %= kLoadAvgPeriod;
  }
  return mul_u64_u32_shr32(val, kYnInv[local_n]);
}

uint32_t accumulate_pelt_segments(uint64_t periods, uint32_t d1, uint32_t d3) {
  // c1: the tail of the period we were in, aged p periods.
  const uint32_t c1 = static_cast<uint32_t>(decay_load(d1, periods));
  // c2: the p-1 full periods in between, 1024 * sum_{n=1}^{p-1} y^n, from the
  // closed form LOAD_AVG_MAX - LOAD_AVG_MAX*y^p - 1024.
  const uint32_t c2 = static_cast<uint32_t>(kLoadAvgMax - decay_load(kLoadAvgMax, periods) - 1024);
  // c3: the head of the current period, undecayed (y^0 = 1).
  return c1 + c2 + d3;
}

// The bodies of accumulate_sum() and update_load_sum() are forced inline
// into the pelt.c entry points below (as the kernel's static functions
// are), so an update costs no call chain.
[[gnu::always_inline]] static inline uint64_t accumulate_sum_inl(uint64_t delta, SchedAvg& sa, uint64_t load,
                                                                 uint64_t runnable, int running) {
  uint32_t contrib = static_cast<uint32_t>(delta);  // no period crossed: all of delta is d3
  delta += sa.period_contrib;
  const uint64_t periods = delta / 1024;

  if (periods) {
    // Step 1: age what was there.
    sa.load_sum = decay_load(sa.load_sum, periods);
    sa.runnable_sum = decay_load(sa.runnable_sum, periods);
    sa.util_sum = static_cast<uint32_t>(decay_load(sa.util_sum, periods));
    // Step 2: this update's own contribution, split d1 | p-1 periods | d3.
    delta %= 1024;
    // With load == 0, runnable and running are 0 as well (update_load_sum
    // forces it), so the contribution is not needed.
    if (load) contrib = accumulate_pelt_segments(periods, 1024 - sa.period_contrib, static_cast<uint32_t>(delta));
  }
  sa.period_contrib = static_cast<uint32_t>(delta);

  if (load) sa.load_sum += load * contrib;
  if (runnable) sa.runnable_sum += (runnable * contrib) << kSchedCapacityShift;
  if (running) sa.util_sum += contrib << kSchedCapacityShift;  // u32, as in the kernel
  return periods;
}

uint64_t accumulate_sum(uint64_t delta, SchedAvg& sa, uint64_t load, uint64_t runnable, int running) {
  return accumulate_sum_inl(delta, sa, load, runnable, running);
}

[[gnu::always_inline]] static inline bool update_load_sum_inl(uint64_t now, SchedAvg& sa, uint64_t load,
                                                              uint64_t runnable, int running) {
  uint64_t delta = now - sa.last_update_time;
  if (static_cast<int64_t>(delta) < 0) {  // time went backwards: resync, account nothing
    sa.last_update_time = now;
    return false;
  }
  delta >>= 10;  // 1024 ns ~ 1 us is the unit
  if (!delta) return false;
  // Advance by whole units only: the remainder (< 1024 ns) counts next time.
  sa.last_update_time += delta << 10;

  // running is a subset of runnable, which is a subset of load (weight).
  if (!load) {
    runnable = 0;
    running = 0;
  }

  return accumulate_sum_inl(delta, sa, load, runnable, running) != 0;
}

bool update_load_sum(uint64_t now, SchedAvg& sa, uint64_t load, uint64_t runnable, int running) {
  return update_load_sum_inl(now, sa, load, runnable, running);
}

void update_load_avg(SchedAvg& sa, uint64_t load) {
  // Divide by the maximum the sums could hold at this point of the period,
  // not LOAD_AVG_MAX, or an always-running entity would sag to ~1002 at the
  // start of each period.
  const uint32_t divider = get_pelt_divider(sa);
  sa.load_avg = (load * sa.load_sum) / divider;
  sa.runnable_avg = sa.runnable_sum / divider;
  sa.util_avg = sa.util_sum / divider;
}

bool pelt_update(SchedAvg& sa, uint64_t now, uint64_t load, uint64_t runnable, int running,
                 uint64_t avg_weight) {
  if (!update_load_sum_inl(now, sa, load, runnable, running)) return false;
  update_load_avg(sa, avg_weight);
  return true;
}

// ---- pelt.c entry points ---------------------------------------------------

bool update_load_avg_blocked_se(uint64_t now, SchedAvg& se, uint64_t se_weight) {
  if (!update_load_sum_inl(now, se, 0, 0, 0)) return false;
  update_load_avg(se, se_weight);
  return true;
}

bool update_load_avg_se(uint64_t now, SchedAvg& se, uint64_t se_weight, bool on_rq,
                        uint64_t se_runnable, bool running) {
  if (!update_load_sum_inl(now, se, on_rq ? 1 : 0, se_runnable, running ? 1 : 0)) return false;
  update_load_avg(se, se_weight);
  cfs_se_util_change(se);
  return true;
}

bool update_load_avg_cfs_rq(uint64_t now, SchedAvg& cfs, uint64_t load_weight,
                            uint64_t nr_runnable, bool curr_running) {
  if (!update_load_sum_inl(now, cfs, load_weight, nr_runnable, curr_running ? 1 : 0)) return false;
  update_load_avg(cfs, 1);
  return true;
}

bool update_rt_rq_load_avg(uint64_t now, SchedAvg& avg_rt, bool running) {
  const uint64_t r = running ? 1 : 0;
  return pelt_update(avg_rt, now, r, r, static_cast<int>(r), 1);
}

bool update_dl_rq_load_avg(uint64_t now, SchedAvg& avg_dl, bool running) {
  const uint64_t r = running ? 1 : 0;
  return pelt_update(avg_dl, now, r, r, static_cast<int>(r), 1);
}

bool update_hw_load_avg(uint64_t now, SchedAvg& avg_hw, uint64_t capacity) {
  return pelt_update(avg_hw, now, capacity, capacity, capacity != 0 ? 1 : 0, 1);
}

bool update_irq_load_avg(SchedAvg& avg_irq, uint64_t rq_clock, uint64_t running,
                         uint64_t cpu_capacity, uint64_t freq_capacity) {
  // IRQ time is not in clock_task, so clock_pelt cannot be used: scale the
  // running time itself to the work it did.
  running = cap_scale(running, freq_capacity);
  running = cap_scale(running, cpu_capacity);
  // Pessimistic placement: decay up to just before the IRQ time, then count
  // the IRQ time as running at the end of the interval.
  int ret = update_load_sum(rq_clock - running, avg_irq, 0, 0, 0) ? 1 : 0;
  ret += update_load_sum(rq_clock, avg_irq, 1, 1, 1) ? 1 : 0;
  if (ret) update_load_avg(avg_irq, 1);
  return ret != 0;
}

// ---- the PELT clock --------------------------------------------------------

// RqPeltClock::update_rq_clock(), update_rq_clock_pelt() and
// update_idle_sync() are inline in pelt.h.

void RqPeltClock::update_idle_rq_clock_pelt(uint32_t cfs_util_sum, uint32_t rt_util_sum,
                                            uint32_t dl_util_sum) {
  // The upper bound of util_sum, without the period_contrib term (the kernel
  // drops it "for optimization and computing rounding purpose").
  constexpr uint32_t divider = ((kLoadAvgMax - 1024) << kSchedCapacityShift) - kLoadAvgMax;
  uint32_t util_sum = cfs_util_sum;
  util_sum += rt_util_sum;
  util_sum += dl_util_sum;
  // Saturated: no idle time would have existed at max capacity either, so
  // the lag is lost, not handed back.
  if (util_sum >= divider) lost_idle_time += clock_task - clock_pelt;
  update_idle_sync();
}

uint64_t RqPeltClock::idle_lag_now(uint64_t sched_clock_now, uint64_t cfs_last_update_time) const {
  uint64_t now = clock_pelt_idle;  // no CFS bandwidth: throttled_pelt_idle == 0
  if (now < cfs_last_update_time) return cfs_last_update_time;
  return now + (sched_clock_now - clock_idle);
}

// ---- util_est --------------------------------------------------------------

void util_est_enqueue(SchedAvg& cfs, const SchedAvg& p) {
  uint32_t enqueued = cfs.util_est.raw;
  enqueued += static_cast<uint32_t>(task_util_est_raw(p));
  cfs.util_est.raw = enqueued;
}

void util_est_dequeue(SchedAvg& cfs, const SchedAvg& p) {
  uint32_t enqueued = cfs.util_est.raw;
  enqueued -= std::min(enqueued, static_cast<uint32_t>(task_util_est_raw(p)));
  cfs.util_est.raw = enqueued;
}

void util_est_update(SchedAvg& p, bool task_sleep, uint64_t cpu_capacity) {
  // Only a completed activation is a sample (not a migration dequeue).
  if (!task_sleep) return;

  uint32_t ewma = p.util_est.raw;
  // No PELT update of util_avg since the last sample: nothing new to learn.
  if (ewma & kUtilAvgUnchanged) return;

  const uint32_t dequeued = static_cast<uint32_t>(task_util(p));

  if (ewma <= dequeued) {
    // Increases are taken at once; the EWMA only smooths decreases.
    ewma = dequeued;
  } else {
    const uint32_t last_ewma_diff = ewma - dequeued;
    if (last_ewma_diff >= kUtilEstMargin) {
      // No idle time on this CPU: util_avg says nothing about the task's size.
      if (dequeued > cpu_capacity) return;
      // The task waited for the CPU: util_avg under-reports it; keep the EWMA.
      if (!(dequeued + kUtilEstMargin < task_runnable(p))) {
        // ewma' = ewma + (dequeued - ewma) / 4, as (4*ewma - diff) >> 2.
        ewma <<= kUtilEstWeightShift;
        ewma -= last_ewma_diff;
        ewma >>= kUtilEstWeightShift;
      }
    }
    // else: within 1% of the last value, keep it.
  }
  p.util_est.raw = ewma | kUtilAvgUnchanged;
}

void util_est_update_two_fields(SchedAvg& p, bool task_sleep, uint64_t cpu_capacity) {
  if (!task_sleep) return;
  UtilEst ue = p.util_est;  // written back only at "done"
  if (ue.raw & kUtilAvgUnchanged) return;
  int64_t last_enqueued_diff = ue.enqueued;
  ue.enqueued = static_cast<uint32_t>(task_util(p));
  // |v| < UTIL_EST_MARGIN, as within_margin() tests it.
  auto within_margin = [](int64_t v) { return v > -int64_t{kUtilEstMargin} && v < int64_t{kUtilEstMargin}; };
  if (ue.ewma < ue.enqueued) {
    ue.ewma = ue.enqueued;  // UTIL_EST_FASTUP: increases are taken at once
  } else {
    const int64_t last_ewma_diff = int64_t{ue.enqueued} - int64_t{ue.ewma};
    last_enqueued_diff -= ue.enqueued;
    if (within_margin(last_ewma_diff)) {
      if (within_margin(last_enqueued_diff)) return;  // both within 1%: nothing written
    } else {
      // No idle time on this CPU: util_avg says nothing about the task's size.
      if (task_util(p) > cpu_capacity) return;
      // ewma' = ewma + (enqueued - ewma) / 4, in unsigned int arithmetic.
      ue.ewma = static_cast<uint32_t>((int64_t{ue.ewma} << kUtilEstWeightShift) + last_ewma_diff) >>
                kUtilEstWeightShift;
    }
  }
  ue.raw = (ue.ewma > ue.enqueued ? ue.ewma : ue.enqueued) | kUtilAvgUnchanged;  // _task_util_est()
  p.util_est = ue;
}

// ---- attach/detach/remove --------------------------------------------------

void enqueue_load_avg(SchedAvg& cfs, const SchedAvg& se, uint64_t se_weight) {
  cfs.load_avg += se.load_avg;
  cfs.load_sum += se_weight * se.load_sum;
}

void dequeue_load_avg(SchedAvg& cfs, const SchedAvg& se, uint64_t se_weight) {
  sub_positive(cfs.load_avg, se.load_avg);
  sub_positive(cfs.load_sum, se_weight * se.load_sum);
  // Rounding can leave the sum below what the average implies; clamp to the
  // smallest sum consistent with load_avg.
  cfs.load_sum = max_u32(cfs.load_sum, cfs.load_avg * kPeltMinDivider);
}

void attach_entity_load_avg(SchedAvg& cfs, SchedAvg& se, uint64_t se_weight) {
  // The entity and its cfs_rq share one clock, so they must share the
  // position in the period too; the sums are rebuilt from the averages at
  // that position (slightly lossy, as the kernel accepts).
  const uint32_t divider = get_pelt_divider(cfs);
  se.last_update_time = cfs.last_update_time;
  se.period_contrib = cfs.period_contrib;
  se.util_sum = static_cast<uint32_t>(se.util_avg * divider);
  se.runnable_sum = se.runnable_avg * divider;
  se.load_sum = se.load_avg * divider;
  if (se_weight < se.load_sum)
    se.load_sum = se.load_sum / se_weight;
  else
    se.load_sum = 1;

  enqueue_load_avg(cfs, se, se_weight);
  cfs.util_avg += se.util_avg;
  cfs.util_sum += se.util_sum;
  cfs.runnable_avg += se.runnable_avg;
  cfs.runnable_sum += se.runnable_sum;
}

void detach_entity_load_avg(SchedAvg& cfs, const SchedAvg& se, uint64_t se_weight) {
  dequeue_load_avg(cfs, se, se_weight);
  sub_positive(cfs.util_avg, se.util_avg);
  sub_positive(cfs.util_sum, se.util_sum);
  cfs.util_sum = max_u32(cfs.util_sum, cfs.util_avg * kPeltMinDivider);
  sub_positive(cfs.runnable_avg, se.runnable_avg);
  sub_positive(cfs.runnable_sum, se.runnable_sum);
  cfs.runnable_sum = max_u32(cfs.runnable_sum, cfs.runnable_avg * kPeltMinDivider);
}

namespace {

// add_positive(): *var += val, clamped at 0 when a negative val would wrap
// var's (unsigned) type.
template <typename T>
inline void add_positive(T& var, int64_t val) {
  T res = static_cast<T>(static_cast<int64_t>(var) + val);
  if (val < 0 && res > var) res = 0;
  var = res;
}

}  // namespace

namespace {

// update_tg_cfs_util() and update_tg_cfs_runnable() are one rule on two
// signals: the group entity takes its cfs_rq's average (its sum rebuilt
// at the parent's position in the period, truncated to 32 bits), and the
// parent cfs_rq moves by the same deltas, its sum kept consistent.
template <typename Sum>
void propagate_signal(uint64_t& cfs_avg, Sum& cfs_sum, uint64_t& se_avg, Sum& se_sum, uint64_t gcfs_avg,
                      uint32_t divider) {
  const int64_t delta_avg = static_cast<int64_t>(gcfs_avg) - static_cast<int64_t>(se_avg);
  if (!delta_avg) return;
  se_avg = gcfs_avg;
  const uint32_t new_sum = static_cast<uint32_t>(se_avg * divider);
  const int64_t delta_sum = static_cast<int64_t>(new_sum) - static_cast<int64_t>(se_sum);
  se_sum = new_sum;
  add_positive(cfs_avg, delta_avg);
  add_positive(cfs_sum, delta_sum);
  cfs_sum = max_u32(cfs_sum, cfs_avg * kPeltMinDivider);
}

}  // namespace

// The parent's period_contrib serves for the entity too (same clock).
void update_tg_cfs_util(SchedAvg& cfs, SchedAvg& se, const SchedAvg& gcfs) {
  propagate_signal(cfs.util_avg, cfs.util_sum, se.util_avg, se.util_sum, gcfs.util_avg, get_pelt_divider(cfs));
}

void update_tg_cfs_runnable(SchedAvg& cfs, SchedAvg& se, const SchedAvg& gcfs) {
  propagate_signal(cfs.runnable_avg, cfs.runnable_sum, se.runnable_avg, se.runnable_sum, gcfs.runnable_avg,
                   get_pelt_divider(cfs));
}

void update_tg_cfs_load(SchedAvg& cfs, SchedAvg& se, const SchedAvg& gcfs, int64_t& prop_runnable_sum,
                        uint64_t se_weight, uint64_t gcfs_load_weight) {
  int64_t runnable_sum = prop_runnable_sum;
  if (!runnable_sum) return;
  prop_runnable_sum = 0;
  const uint32_t divider = get_pelt_divider(cfs);
  if (runnable_sum >= 0) {
    // Attached runnable time, clipped: until the CPU is saturated running
    // equals runnable.
    runnable_sum += static_cast<int64_t>(se.load_sum);
    runnable_sum = std::min<int64_t>(runnable_sum, divider);
  } else {
    // Detached: estimate the group's unweighted runnable sum as if all its
    // tasks were equally runnable, never above the entity's.
    uint64_t load_sum = 0;
    if (gcfs_load_weight) load_sum = gcfs.load_sum / gcfs_load_weight;
    runnable_sum = static_cast<int64_t>(std::min(se.load_sum, load_sum));
  }
  // Not below the running sum (util_sum is scaled by 1024).
  const int64_t running_sum = static_cast<int64_t>(se.util_sum >> kSchedCapacityShift);
  runnable_sum = std::max(runnable_sum, running_sum);
  const uint64_t load_sum = se_weight * static_cast<uint64_t>(runnable_sum);
  const uint64_t load_avg = load_sum / divider;
  const int64_t delta_avg = static_cast<int64_t>(load_avg) - static_cast<int64_t>(se.load_avg);
  if (!delta_avg) return;
  const int64_t delta_sum = static_cast<int64_t>(load_sum) - static_cast<int64_t>(se_weight * se.load_sum);
  se.load_sum = static_cast<uint64_t>(runnable_sum);
  se.load_avg = load_avg;
  add_positive(cfs.load_avg, delta_avg);
  add_positive(cfs.load_sum, delta_sum);
  cfs.load_sum = max_u32(cfs.load_sum, cfs.load_avg * kPeltMinDivider);
}

void remove_entity_load_avg(RemovedLoad& removed, const SchedAvg& se) {
  ++removed.nr;
  removed.util_avg += se.util_avg;
  removed.load_avg += se.load_avg;
  removed.runnable_avg += se.runnable_avg;
}

bool apply_removed_load(SchedAvg& cfs, RemovedLoad& removed) {
  if (!removed.nr) return false;
  const uint32_t divider = get_pelt_divider(cfs);
  const RemovedLoad r = removed;
  removed = RemovedLoad{};

  sub_positive(cfs.load_avg, r.load_avg);
  sub_positive(cfs.load_sum, r.load_avg * divider);
  cfs.load_sum = max_u32(cfs.load_sum, cfs.load_avg * kPeltMinDivider);

  sub_positive(cfs.util_avg, r.util_avg);
  sub_positive(cfs.util_sum, r.util_avg * divider);
  // A task's util_sum can exceed its share of the cfs_rq's by one unit of
  // rounding; keep util_sum at least the minimum consistent with util_avg.
  cfs.util_sum = max_u32(cfs.util_sum, cfs.util_avg * kPeltMinDivider);

  sub_positive(cfs.runnable_avg, r.runnable_avg);
  sub_positive(cfs.runnable_sum, r.runnable_avg * divider);
  cfs.runnable_sum = max_u32(cfs.runnable_sum, cfs.runnable_avg * kPeltMinDivider);
  return true;
}

bool update_cfs_rq_load_avg(uint64_t now, SchedAvg& cfs, RemovedLoad& removed, uint64_t load_weight,
                            uint64_t nr_runnable, bool curr_running) {
  bool decayed = apply_removed_load(cfs, removed);
  decayed |= update_load_avg_cfs_rq(now, cfs, load_weight, nr_runnable, curr_running);
  return decayed;
}

void init_entity_runnable_average(SchedAvg& se, uint64_t se_weight, bool is_task) {
  se = SchedAvg{};
  // Tasks start heavy until they show their real load; groups start empty.
  if (is_task) se.load_avg = se_weight;
}

void post_init_entity_util_avg(SchedAvg& se, const SchedAvg& cfs, uint64_t se_weight,
                               uint64_t cpu_capacity) {
  const int64_t cpu_scale = static_cast<int64_t>(cpu_capacity);
  // (long)(cpu_scale - util_avg) / 2, the subtraction done unsigned as in C.
  const int64_t cap = static_cast<int64_t>(static_cast<uint64_t>(cpu_scale) - cfs.util_avg) / 2;
  if (cap > 0) {
    if (cfs.util_avg != 0) {
      se.util_avg = cfs.util_avg * se_weight;
      se.util_avg /= (cfs.load_avg + 1);
      if (se.util_avg > static_cast<uint64_t>(cap)) se.util_avg = static_cast<uint64_t>(cap);
    } else {
      se.util_avg = static_cast<uint64_t>(cap);
    }
  }
  se.runnable_avg = se.util_avg;
}

}  // namespace schedlab
