// cpufreq policy helpers, the mainline governors and the registry of all
// (sched_pixel lives in sched_pixel.cc). Each
// function names the Linux 6.12 function it mirrors; simplifications are
// marked "Simplification:".
#include <algorithm>
#include <stdexcept>
#include <string>

#include "models/hw/energy_model.h"
#include "models/kernel/cpufreq/governor.h"
#include "models/kernel/cpufreq/sched_pixel.h"

namespace schedlab {

namespace {

constexpr uint64_t kCapacityScale = 1024;  // SCHED_CAPACITY_SCALE
constexpr int kCapacityShift = 10;         // SCHED_CAPACITY_SHIFT

bool has_e(CpufreqRelation r) { return r == CpufreqRelation::LE || r == CpufreqRelation::HE; }
bool is_low(CpufreqRelation r) { return r == CpufreqRelation::L || r == CpufreqRelation::LE; }

}  // namespace

// ---- CpufreqPolicy ---------------------------------------------------------

CpufreqPolicy CpufreqPolicy::from_opps(std::span<const Opp> opps, size_t nr_cpus, uint64_t cpu_capacity,
                                       const EnergyModel* em, bool em_costs_v6_1) {
  validate_opp_table(opps);
  CpufreqPolicy p;
  p.nr_cpus = nr_cpus;
  p.cpu_capacity = cpu_capacity;
  for (const Opp& o : opps) p.freq_table_khz.push_back(o.freq_khz);
  // em_cpufreq_update_efficiencies() -> cpufreq_table_set_inefficient() for
  // each inefficient EM state, only if the EM skips inefficiencies.
  if (em != nullptr && em->skip_inefficiencies()) {
    p.inefficient.assign(p.freq_table_khz.size(), false);
    for (size_t i = 0; i < p.freq_table_khz.size(); ++i) {
      auto s = em->state_index(p.freq_table_khz[i]);
      if (!s) continue;
      const PerfState& ps = em->states()[*s];
      if (em_costs_v6_1 ? ps.inefficient_v6_1 : ps.inefficient) p.inefficient[i] = true;
    }
  }
  return p;
}

void CpufreqPolicy::validate_and_normalise() {
  if (freq_table_khz.empty()) throw std::invalid_argument("cpufreq policy: empty frequency table");
  for (size_t i = 0; i < freq_table_khz.size(); ++i) {
    if (freq_table_khz[i] == 0) throw std::invalid_argument("cpufreq policy: frequency 0 in table");
    if (i > 0 && freq_table_khz[i] <= freq_table_khz[i - 1])
      throw std::invalid_argument("cpufreq policy: frequency table not strictly ascending");
  }
  if (!inefficient.empty() && inefficient.size() != freq_table_khz.size())
    throw std::invalid_argument("cpufreq policy: `inefficient` size differs from the table's");
  if (nr_cpus == 0) throw std::invalid_argument("cpufreq policy: no CPUs");
  if (cpu_capacity == 0 || cpu_capacity > kCapacityScale)
    throw std::invalid_argument("cpufreq policy: CPU capacity must be in 1..1024");
  set_limits(min_khz, max_khz);
  // Simplification: the kernel takes policy->cur from the hardware and, if
  // it is off-table, forces a table frequency at or above it (cpufreq_online);
  // here 0 means "boot at max" and any other value is resolved with RELATION_L.
  cur_khz = cur_khz == 0 ? max_khz : resolve_freq(cur_khz, CpufreqRelation::L);
}

// cpufreq_set_policy(): the driver's verify() clamps the request into
// cpuinfo limits (cpufreq_verify_within_limits, which also forces
// min <= max), then policy->min/max are resolved to table frequencies.
void CpufreqPolicy::set_limits(uint64_t new_min, uint64_t new_max) {
  const uint64_t lo = cpuinfo_min_khz(), hi = cpuinfo_max_khz();
  if (new_min == 0) new_min = lo;
  if (new_max == 0) new_max = hi;
  new_max = std::clamp(new_max, lo, hi);
  new_min = std::clamp(new_min, lo, new_max);
  min_khz = new_min;
  max_khz = new_max;
  min_khz = resolve_freq(min_khz, CpufreqRelation::L);
  max_khz = resolve_freq(max_khz, CpufreqRelation::H);
}

// __resolve_freq() + cpufreq_frequency_table_target() +
// cpufreq_table_find_index_{al,ah} (ascending table).
uint64_t CpufreqPolicy::resolve_freq(uint64_t target, CpufreqRelation relation) const {
  const auto clampv = [&](uint64_t v) { return std::max(min_khz, std::min(v, max_khz)); };
  target = clampv(target);  // __resolve_freq: clamp_val(target, min, max)

  const bool any_ineff = std::find(inefficient.begin(), inefficient.end(), true) != inefficient.end();
  bool efficiencies = any_ineff && has_e(relation);  // policy->efficiencies_available && E
  const size_t n = freq_table_khz.size();
  const auto skip = [&](size_t i) { return efficiencies && inefficient[i]; };

  for (;;) {
    const uint64_t t = clampv(target);  // find_index_l/h clamp again
    long idx = -1;
    if (is_low(relation)) {
      // cpufreq_table_find_index_al(): lowest freq at or above target.
      long best = -1;
      for (size_t i = 0; i < n; ++i) {
        if (skip(i)) continue;
        if (freq_table_khz[i] >= t) { best = static_cast<long>(i); break; }
        best = static_cast<long>(i);
      }
      idx = best;
    } else {
      // cpufreq_table_find_index_ah(): highest freq at or below target.
      long best = -1;
      for (size_t i = 0; i < n; ++i) {
        if (skip(i)) continue;
        const uint64_t f = freq_table_khz[i];
        if (f == t) { best = static_cast<long>(i); break; }
        if (f < t) { best = static_cast<long>(i); continue; }
        if (best == -1) best = static_cast<long>(i);  // no freq below target
        break;
      }
      idx = best;
    }
    // cpufreq_is_in_limits(); retry without efficiencies if out of limits.
    const bool in_limits = idx >= 0 && freq_table_khz[idx] >= min_khz && freq_table_khz[idx] <= max_khz;
    if (!in_limits && efficiencies) {
      efficiencies = false;
      continue;
    }
    if (idx < 0) idx = 0;  // unreachable with a non-empty table and no skipping
    return freq_table_khz[static_cast<size_t>(idx)];
  }
}

// ---- CpufreqGovernor base -------------------------------------------------------

void CpufreqGovernor::install_policy(const CpufreqPolicy& policy) {
  policy_ = policy;
  policy_.validate_and_normalise();
}

// __cpufreq_driver_target(): resolve (clamp + table lookup with relation),
// and do nothing if that is already the current frequency.
// Simplification: ignores CPUFREQ_NEED_UPDATE_LIMITS here (it only forces a
// redundant driver call).
std::optional<uint64_t> CpufreqGovernor::driver_target(uint64_t target_khz, CpufreqRelation relation) {
  const uint64_t f = policy_.resolve_freq(target_khz, relation);
  if (f == policy_.cur_khz) return std::nullopt;
  policy_.cur_khz = f;
  return f;
}

void CpufreqGovernor::check_update_util_args(size_t started_cpus, size_t cpu, size_t nr_utils) const {
  const std::string gov(name());
  if (started_cpus == 0) throw std::logic_error(gov + ": update_util() before start()");
  if (cpu >= started_cpus)
    throw std::invalid_argument(gov + ": CPU index " + std::to_string(cpu) + " outside the policy");
  if (nr_utils != started_cpus)
    throw std::invalid_argument(gov + ": need one CpuUtil per CPU of the policy (" + std::to_string(started_cpus) +
                                "), got " + std::to_string(nr_utils));
}

std::optional<uint64_t> CpufreqGovernor::apply_limits() {
  if (policy_.max_khz < policy_.cur_khz) return driver_target(policy_.max_khz, CpufreqRelation::HE);
  if (policy_.min_khz > policy_.cur_khz) return driver_target(policy_.min_khz, CpufreqRelation::LE);
  return std::nullopt;
}

std::optional<uint64_t> CpufreqGovernor::set_limits(uint64_t min_khz, uint64_t max_khz, Time now) {
  if (policy_.freq_table_khz.empty()) throw std::logic_error("cpufreq governor: set_limits() before start()");
  policy_.set_limits(min_khz, max_khz);
  return limits(now);
}

std::optional<uint64_t> CpufreqGovernor::set_speed(uint64_t) {
  throw std::logic_error("cpufreq governor '" + std::string(name()) +
                         "' has no scaling_setspeed (only 'userspace' does)");
}

// ---- effective_cpu_util (kernel/sched/fair.c) ---------------------------------------

uint64_t effective_cpu_util(const CpuUtil& cpu, uint64_t scale, bool uclamp_used, uint64_t* min, uint64_t* max) {
  const uint64_t irq = cpu.util_irq;
  // uclamp_rq_get(): with the static key off, the rq clamps stay at their
  // init values (uclamp_none: MIN 0, MAX 1024).
  const uint64_t rq_uclamp_min = uclamp_used ? cpu.uclamp_min : 0;
  const uint64_t rq_uclamp_max = uclamp_used ? cpu.uclamp_max : kCapacityScale;

  // IRQ/steal time saturating the CPU.
  if (irq >= scale) {
    if (min) *min = scale;
    if (max) *max = scale;
    return scale;
  }
  if (min) {
    // Floor: DL bandwidth plus IRQ pressure, or the rq's uclamp_min.
    *min = std::max(irq + cpu.bw_dl, rq_uclamp_min);
    // "When an RT task is runnable and uclamp is not used, we must ensure
    // that the task will run at maximum compute capacity."
    if (!uclamp_used && cpu.rt_runnable) *min = std::max(*min, scale);
  }
  uint64_t util = cpu.util_cfs + cpu.util_rt + cpu.util_dl;
  if (max) *max = std::min(scale, rq_uclamp_max);
  if (util >= scale) return scale;
  // scale_irq_capacity(): U' = irq + (max - irq) / max * U (integer).
  // Without IRQ pressure that is U itself (U < max here, no overflow), so
  // the division is skipped.
  if (irq) {
    util = util * (scale - irq) / scale;
    util += irq;
  }
  return std::min(scale, util);
}

uint64_t effective_cpu_util_pre_6_8(const CpuUtil& cpu, uint64_t scale, bool uclamp_used) {
  if (!uclamp_used && cpu.rt_runnable) return scale;
  const uint64_t irq = cpu.util_irq;
  if (irq >= scale) return scale;
  uint64_t util = cpu.util_cfs + cpu.util_rt;
  if (uclamp_used) util = uclamp_rq_util_with(util, cpu.uclamp_min, cpu.uclamp_max);
  if (util + cpu.util_dl >= scale) return scale;
  if (irq) {  // scale_irq_capacity(), then the IRQ time itself
    util = util * (scale - irq) / scale;
    util += irq;
  }
  util += cpu.bw_dl;
  return std::min(scale, util);
}

Time cpufreq_policy_transition_delay(Time transition_latency, TransitionDelayRule rule) {
  const int64_t latency_us = transition_latency.count() / 1000;  // / NSEC_PER_USEC
  if (latency_us <= 0) return Time::us(1000);                    // USEC_PER_MSEC (LATENCY_MULTIPLIER before 6.10)
  switch (rule) {
    case TransitionDelayRule::kLatencyX1000Cap10ms: return Time::us(std::min<int64_t>(latency_us * 1000, 10000));
    case TransitionDelayRule::kLatencyAndAHalf: return Time::us(latency_us + (latency_us >> 1));
  }
  return Time::us(1000);
}

// ---- schedutil ---------------------------------------------------------------------

SchedutilGovernor::SchedutilGovernor(const GovernorParams& params) : params_(params) {
  if (params_.rate_limit && *params_.rate_limit < Time::zero())
    throw std::invalid_argument("schedutil: rate_limit must be >= 0");
  if (params_.tick <= Time::zero()) throw std::invalid_argument("schedutil: tick must be > 0");
}

// sugov_init() (tunables) + sugov_start() + sugov_limits(), in the order
// cpufreq_start_governor() calls them.
uint64_t SchedutilGovernor::start(const CpufreqPolicy& policy, Time now) {
  install_policy(policy);
  // sugov_init(): rate_limit_us = cpufreq_policy_transition_delay_us() (the
  // driver's own transition_delay_us is not modelled: a platform that has
  // one gives it as rate_limit).
  freq_update_delay_ =
      params_.rate_limit.value_or(cpufreq_policy_transition_delay(policy_.transition_latency, params_.transition_delay));
  // sugov_start(): the per-CPU state is zeroed.
  last_freq_update_time_ = Time::zero();
  next_freq_ = 0;
  limits_changed_ = false;
  cached_raw_freq_ = 0;
  need_freq_update_ = params_.need_update_limits;
  cpus_.assign(policy_.nr_cpus, SgCpu{});
  // cpufreq_start_governor() then calls ->limits(): sets limits_changed, so
  // the first update after start bypasses the rate limit.
  limits(now);
  return policy_.cur_khz;
}

// sugov_limits(): on the slow path, cpufreq_policy_apply_limits() clamps cur
// at once (HE towards max, LE towards min); either way the next update
// bypasses the rate limit.
std::optional<uint64_t> SchedutilGovernor::limits(Time) {
  std::optional<uint64_t> changed;
  if (!params_.fast_switch) changed = apply_limits();
  limits_changed_ = true;
  return changed;
}

// sugov_should_update_freq(). Simplification: cpufreq_this_cpu_can_update()
// is taken as true (fast switch from any CPU of the policy, or
// dvfs_possible_from_any_cpu).
bool SchedutilGovernor::should_update_freq(Time now) {
  if (limits_changed_) {
    limits_changed_ = false;
    // 6.12: cpufreq_driver_test_flags(CPUFREQ_NEED_UPDATE_LIMITS); 6.1, 6.6, 6.18: true.
    need_freq_update_ = params_.limits_rule == SugovLimitsRule::kV6_12 ? params_.need_update_limits : true;
    return true;
  }
  // 6.18: "ignore_dl_rate_limit() wants a new frequency to be found".
  if (dl_bypass_pending()) return true;
  return now - last_freq_update_time_ >= freq_update_delay_;
}

// sugov_update_next_freq(): the rate-limit window restarts only when the
// request actually changes, or (6.6, 6.12) once after a limits change.
bool SchedutilGovernor::update_next_freq(Time now, uint64_t next_freq) {
  if (need_freq_update_) {
    switch (params_.limits_rule) {
      case SugovLimitsRule::kV6_1:
      case SugovLimitsRule::kV6_18:
        need_freq_update_ = false;
        if (next_freq_ == next_freq && !params_.need_update_limits) return false;
        break;
      case SugovLimitsRule::kV6_6: need_freq_update_ = params_.need_update_limits; break;
      case SugovLimitsRule::kV6_12: need_freq_update_ = false; break;
    }
  } else if (next_freq_ == next_freq) {
    return false;
  }
  next_freq_ = next_freq;
  last_freq_update_time_ = now;
  return true;
}

// get_next_freq() with get_capacity_ref_freq(). In 6.12 the 1.25 headroom
// is NOT here: it was added to util by sugov_effective_cpu_perf()
// (map_util_perf) in get_util(). So next_freq = ref_freq * util / max,
// then cpufreq_driver_resolve_freq() = __resolve_freq(RELATION_LE): the
// lowest (efficient, if the EM marked any) table frequency >= that.
// 6.1.166 and 6.6.63 (headroom_after_clamp) add the headroom here, to the
// clamped util, and take cpuinfo.max_freq (or cur without frequency
// invariance) as the reference: there is no arch_scale_freq_ref() yet.
// Without uclamp and SCHED_DEADLINE the two give the same frequency.
uint64_t SchedutilGovernor::get_next_freq(uint64_t util, uint64_t max_cap) {
  uint64_t ref;
  if (params_.headroom_after_clamp) {
    ref = params_.freq_invariant ? policy_.cpuinfo_max_khz() : policy_.cur_khz;
    util = map_util_perf(util);
  } else if (params_.ref_freq_khz)
    ref = params_.ref_freq_khz;  // arch_scale_freq_ref()
  else if (params_.freq_invariant)
    ref = policy_.cpuinfo_max_khz();
  else
    ref = policy_.cur_khz + (policy_.cur_khz >> 2);
  const uint64_t freq = map_util_freq(util, ref, max_cap);
  if (freq == cached_raw_freq_ && !need_freq_update_) return next_freq_;
  cached_raw_freq_ = freq;
  return policy_.resolve_freq(freq, CpufreqRelation::LE);
}

// sugov_get_util(). Simplification: no sched_ext (scx_cpuperf_target).
// 6.1/6.6 (headroom_after_clamp): the clamped util without headroom, then
// sugov_iowait_apply()'s boost, clamped by the rq's uclamp too; the DL
// rate-limit bypass compares against sg_cpu->bw_dl.
void SchedutilGovernor::get_util(SgCpu& sg, const CpuUtil& in, uint64_t boost) {
  if (params_.headroom_after_clamp) {
    sg.util = effective_cpu_util_pre_6_8(in, policy_.cpu_capacity, params_.uclamp_used);
    sg.bw_min = in.bw_dl;
    if (boost && params_.uclamp_used) boost = uclamp_rq_util_with(boost, in.uclamp_min, in.uclamp_max);
    sg.util = std::max(sg.util, boost);
    return;
  }
  uint64_t min = 0, max = 0;
  uint64_t util = effective_cpu_util(in, policy_.cpu_capacity, params_.uclamp_used, &min, &max);
  util = std::max(util, boost);
  sg.bw_min = min;
  sg.util = sugov_effective_cpu_perf(util, min, max);
}

bool SugovIowaitState::iowait_reset(Time now, Time tick, bool set_iowait_boost) {
  if (now - last_update <= tick) return false;
  iowait_boost = set_iowait_boost ? kIowaitBoostMin : 0;
  iowait_boost_pending = set_iowait_boost;
  return true;
}

void SugovIowaitState::iowait_boost_update(Time now, Time tick, unsigned flags) {
  const bool set_iowait_boost = (flags & kSchedCpufreqIowait) != 0;
  if (iowait_boost && iowait_reset(now, tick, set_iowait_boost)) return;
  if (!set_iowait_boost) return;
  if (iowait_boost_pending) return;  // double only once per request
  iowait_boost_pending = true;
  if (iowait_boost) {
    iowait_boost = std::min<uint64_t>(iowait_boost << 1, kCapacityScale);
    return;
  }
  iowait_boost = kIowaitBoostMin;
}

uint64_t SugovIowaitState::iowait_apply(Time now, Time tick, uint64_t max_cap) {
  if (!iowait_boost) return 0;
  if (iowait_reset(now, tick, false)) return 0;
  if (!iowait_boost_pending) {
    iowait_boost >>= 1;
    if (iowait_boost < kIowaitBoostMin) {
      iowait_boost = 0;
      return 0;
    }
  }
  iowait_boost_pending = false;
  return (iowait_boost * max_cap) >> kCapacityShift;
}

// sugov_hold_freq() (CONFIG_NO_HZ_COMMON): a CPU capped by uclamp_max
// always follows its util (uclamp_rq_is_capped(), from the kernel side).
bool SchedutilGovernor::hold_freq(SgCpu& sg, const CpuUtil& in) {
  if (!params_.nohz_hold_freq) return false;
  if (in.uclamp_capped) return false;
  const bool ret = in.idle_calls == sg.saved_idle_calls;
  sg.saved_idle_calls = in.idle_calls;
  return ret;
}

// ignore_dl_rate_limit(): DL bandwidth above the CPU's last floor
// (sg_cpu->bw_min; 6.1's sg_cpu->bw_dl) bypasses the rate limit. Up to
// 6.12 it sets limits_changed; 6.18 sets need_freq_update instead.
void SchedutilGovernor::ignore_dl_rate_limit(const SgCpu& sg, uint64_t cpu_bw_dl) {
  if (cpu_bw_dl <= sg.bw_min) return;
  if (params_.limits_rule == SugovLimitsRule::kV6_18)
    need_freq_update_ = true;
  else
    limits_changed_ = true;
}

// The driver applies the request: cpufreq_driver_fast_switch() (clamp to
// min/max; the driver picks the table frequency) at once. On the slow path
// (sugov_deferred_update()) nothing changes here: the caller raises the
// irq_work that wakes the sugov:N kthread (Kernel::sugov_deferred_update()),
// which reads next_freq and calls slow_switch(); the returned value only
// says that next_freq changed.
std::optional<uint64_t> SchedutilGovernor::commit(uint64_t next_freq) {
  if (!params_.fast_switch) return next_freq;
  const uint64_t f = policy_.resolve_freq(next_freq, CpufreqRelation::L);
  policy_.cur_khz = f;
  return f;
}

// sugov_update_single_freq() (+ sugov_update_single_common()).
// Simplification: sugov_update_single_perf() (drivers with adjust_perf, e.g.
// intel_pstate/amd-pstate) is not modelled; single-CPU policies always take
// this frequency path.
std::optional<uint64_t> SchedutilGovernor::update_single(SgCpu& sg, const CpuUtil& in, Time now, unsigned flags) {
  const uint64_t cached_freq = cached_raw_freq_;
  const uint64_t max_cap = policy_.cpu_capacity;

  sg.iowait_boost_update(now, params_.tick, flags);
  sg.last_update = now;
  ignore_dl_rate_limit(sg, in.bw_dl);
  if (!should_update_freq(now)) return std::nullopt;
  const uint64_t boost = sg.iowait_apply(now, params_.tick, max_cap);
  get_util(sg, in, boost);

  uint64_t next_f = get_next_freq(sg.util, max_cap);
  // Keep the frequency if the CPU has not been idle since the last update.
  if (hold_freq(sg, in) && next_f < next_freq_ && !need_freq_update_) {
    next_f = next_freq_;
    cached_raw_freq_ = cached_freq;  // next_freq changed: restore the cache
  }
  if (!update_next_freq(now, next_f)) return std::nullopt;
  return commit(next_f);
}

// sugov_update_shared() + sugov_next_freq_shared(): the policy's frequency
// follows the most demanding CPU; every CPU's iowait boost is applied (and
// decays) at each evaluation.
std::optional<uint64_t> SchedutilGovernor::update_shared(size_t cpu, std::span<const CpuUtil> utils, Time now,
                                                         unsigned flags) {
  SgCpu& sg = cpus_[cpu];
  sg.iowait_boost_update(now, params_.tick, flags);
  sg.last_update = now;
  ignore_dl_rate_limit(sg, utils[cpu].bw_dl);
  if (!should_update_freq(now)) return std::nullopt;

  const uint64_t max_cap = policy_.cpu_capacity;
  uint64_t util = 0;
  for (size_t j = 0; j < cpus_.size(); ++j) {
    const uint64_t boost = cpus_[j].iowait_apply(now, params_.tick, max_cap);
    get_util(cpus_[j], utils[j], boost);
    util = std::max(util, cpus_[j].util);
  }
  const uint64_t next_f = get_next_freq(util, max_cap);
  if (!update_next_freq(now, next_f)) return std::nullopt;
  return commit(next_f);
}

std::optional<uint64_t> SchedutilGovernor::update_util(size_t cpu, std::span<const CpuUtil> utils, Time now,
                                                       unsigned flags) {
  check_update_util_args(cpus_.size(), cpu, utils.size());
  // sugov_start(): policy_is_shared() selects the hook.
  if (cpus_.size() > 1) return update_shared(cpu, utils, now, flags);
  return update_single(cpus_[0], utils[0], now, flags);
}

// ---- performance / powersave / userspace ----------------------------------------------

namespace {

// drivers/cpufreq/cpufreq_performance.c: ->limits() targets policy->max
// with CPUFREQ_RELATION_H. No ->start(); utilisation is ignored.
class PerformanceGovernor final : public CpufreqGovernor {
 public:
  explicit PerformanceGovernor(const GovernorParams&) {}
  std::string_view name() const override { return "performance"; }
  uint64_t start(const CpufreqPolicy& policy, Time now) override {
    install_policy(policy);
    limits(now);
    return policy_.cur_khz;
  }

 protected:
  std::optional<uint64_t> limits(Time) override { return driver_target(policy_.max_khz, CpufreqRelation::H); }
};

// drivers/cpufreq/cpufreq_powersave.c: ->limits() targets policy->min with
// CPUFREQ_RELATION_L.
class PowersaveGovernor final : public CpufreqGovernor {
 public:
  explicit PowersaveGovernor(const GovernorParams&) {}
  std::string_view name() const override { return "powersave"; }
  uint64_t start(const CpufreqPolicy& policy, Time now) override {
    install_policy(policy);
    limits(now);
    return policy_.cur_khz;
  }

 protected:
  std::optional<uint64_t> limits(Time) override { return driver_target(policy_.min_khz, CpufreqRelation::L); }
};

// drivers/cpufreq/cpufreq_userspace.c.
class UserspaceGovernor final : public CpufreqGovernor {
 public:
  explicit UserspaceGovernor(const GovernorParams& params) : initial_setspeed_(params.userspace_setspeed_khz) {}
  std::string_view name() const override { return "userspace"; }

  // cpufreq_userspace_policy_start(): setspeed = policy->cur; then ->limits();
  // then the configured scaling_setspeed write, if any.
  uint64_t start(const CpufreqPolicy& policy, Time now) override {
    install_policy(policy);
    setspeed_ = policy_.cur_khz;
    limits(now);
    if (initial_setspeed_) set_speed(initial_setspeed_);
    return policy_.cur_khz;
  }

  // cpufreq_set(): remember the request, target it with RELATION_L.
  std::optional<uint64_t> set_speed(uint64_t khz) override {
    if (policy_.freq_table_khz.empty()) throw std::logic_error("userspace: set_speed() before start()");
    setspeed_ = khz;
    return driver_target(khz, CpufreqRelation::L);
  }

 protected:
  // cpufreq_userspace_policy_limits(): follow setspeed within the limits.
  std::optional<uint64_t> limits(Time) override {
    if (policy_.max_khz < setspeed_) return driver_target(policy_.max_khz, CpufreqRelation::H);
    if (policy_.min_khz > setspeed_) return driver_target(policy_.min_khz, CpufreqRelation::L);
    return driver_target(setspeed_, CpufreqRelation::L);
  }

 private:
  uint64_t initial_setspeed_ = 0;
  uint64_t setspeed_ = 0;
};

// The registry: an explicit table (no static registration objects).
struct GovernorEntry {
  std::string_view name;
  std::unique_ptr<CpufreqGovernor> (*make)(const GovernorParams&);
};

template <typename G>
std::unique_ptr<CpufreqGovernor> make_one(const GovernorParams& p) {
  return std::make_unique<G>(p);
}

constexpr GovernorEntry kGovernors[] = {
    {"performance", &make_one<PerformanceGovernor>},
    {"powersave", &make_one<PowersaveGovernor>},
    {"sched_pixel", &make_one<SchedPixelGovernor>},
    {"schedutil", &make_one<SchedutilGovernor>},
    {"userspace", &make_one<UserspaceGovernor>},
};

}  // namespace

std::vector<std::string> governor_names() {
  std::vector<std::string> names;
  for (const auto& g : kGovernors) names.emplace_back(g.name);
  return names;
}

std::unique_ptr<CpufreqGovernor> make_governor(std::string_view name, const GovernorParams& params) {
  for (const auto& g : kGovernors)
    if (g.name == name) return g.make(params);
  std::string valid;
  for (const auto& g : kGovernors) {
    if (!valid.empty()) valid += ", ";
    valid += g.name;
  }
  throw std::invalid_argument("unknown cpufreq governor '" + std::string(name) + "'; valid names: " + valid);
}

}  // namespace schedlab
