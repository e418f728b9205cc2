// sched_pixel (see sched_pixel.h). Each function names the function of the
// vendor's cpufreq_gov.c (gs101 5.10 tree) it mirrors.
#include "models/kernel/cpufreq/sched_pixel.h"

#include <algorithm>
#include <stdexcept>

namespace schedlab {

SchedPixelGovernor::SchedPixelGovernor(const GovernorParams& params) : params_(params) {
  if ((params_.up_rate_limit && *params_.up_rate_limit < Time::zero()) ||
      (params_.down_rate_limit && *params_.down_rate_limit < Time::zero()))
    throw std::invalid_argument("sched_pixel: up_rate_limit and down_rate_limit must be >= 0");
  // down_rate_limit_scale_pow_store() rejects 0.
  if (params_.down_rate_limit_scale_pow == 0) throw std::invalid_argument("sched_pixel: down_rate_limit_scale_pow must be >= 1");
  if (params_.capacity_margin == 0) throw std::invalid_argument("sched_pixel: capacity margin must be > 0");
  if (params_.tick <= Time::zero()) throw std::invalid_argument("sched_pixel: tick must be > 0");
}

// sugov_init(): both rate limits default to
// cpufreq_policy_transition_delay_us(); sugov_start(): the per-policy and
// per-CPU state zeroed, min_rate_limit_ns = min(up, down)
// (update_min_rate_limit_ns()); then ->limits() sets limits_changed.
uint64_t SchedPixelGovernor::start(const CpufreqPolicy& policy, Time now) {
  install_policy(policy);
  const Time fallback = cpufreq_policy_transition_delay(policy_.transition_latency, params_.transition_delay);
  up_rate_delay_ = params_.up_rate_limit.value_or(fallback);
  down_rate_delay_ = params_.down_rate_limit.value_or(fallback);
  min_rate_limit_ = std::min(up_rate_delay_, down_rate_delay_);
  last_freq_update_time_ = Time::zero();
  next_freq_ = 0;
  limits_changed_ = false;
  need_freq_update_ = false;
  cached_raw_freq_ = 0;
  prev_cached_raw_freq_ = 0;
  cpus_.assign(policy_.nr_cpus, PxCpu{});
  limits(now);
  return policy_.cur_khz;
}

// sugov_limits(): the slow path clamps cur at once; the next update
// bypasses the rate limits.
std::optional<uint64_t> SchedPixelGovernor::limits(Time) {
  std::optional<uint64_t> changed;
  if (!params_.fast_switch) changed = apply_limits();
  limits_changed_ = true;
  return changed;
}

bool SchedPixelGovernor::update_due(size_t cpu, uint64_t cpu_bw_dl, Time now, unsigned flags) const {
  const PxCpu& sg = cpus_[cpu];
  return flags != 0 || sg.iowait_boost != 0 || limits_changed_ || (cpus_.size() == 1 && cpu_bw_dl > sg.bw_dl) ||
         now - last_freq_update_time_ >= min_rate_limit_;
}

// sugov_should_update_freq(). Simplification: cpufreq_this_cpu_can_update()
// taken as true, as for schedutil.
bool SchedPixelGovernor::should_update_freq(Time now) {
  if (limits_changed_) {
    limits_changed_ = false;
    need_freq_update_ = true;
    return true;
  }
  return now - last_freq_update_time_ >= min_rate_limit_;
}

// sugov_up_down_rate_limit(). The cut's limit is
// down_rate_delay_ns x next, then (scale_pow - 1) times / cur x next, in
// integers, compared with delta x cur.
bool SchedPixelGovernor::rate_limited(Time now, uint64_t next) const {
  const int64_t delta = (now - last_freq_update_time_).count();
  if (next > next_freq_ && delta < up_rate_delay_.count()) return true;
  if (next < next_freq_) {  // (next_freq_ > 0 here: no division by zero)
    uint64_t comp = static_cast<uint64_t>(down_rate_delay_.count()) * next;
    for (unsigned i = 1; i < params_.down_rate_limit_scale_pow; ++i) comp = comp / next_freq_ * next;
    if (static_cast<uint64_t>(delta) * next_freq_ < comp) return true;
  }
  return false;
}

// sugov_update_next_freq(): a limits change skips the rate limits once; a
// held request restores the raw-frequency cache (prev_cached_raw_freq) so
// the next evaluation computes again.
bool SchedPixelGovernor::update_next_freq(Time now, uint64_t next) {
  const bool ignore_rate_limit = need_freq_update_;
  need_freq_update_ = false;
  if (next_freq_ == next) return false;
  if (!ignore_rate_limit && rate_limited(now, next)) {
    cached_raw_freq_ = prev_cached_raw_freq_;
    return false;
  }
  next_freq_ = next;
  last_freq_update_time_ = now;
  return true;
}

// get_next_freq() with map_util_freq_pixel_mod() (vh fair.c):
// raw = (cpuinfo.max_freq x margin >> 10) x util / capacity, then the
// lowest table frequency at or above it within the policy limits
// (cpufreq_driver_resolve_freq(); exynos-acme's own .resolve_freq is
// taken to do the same).
uint64_t SchedPixelGovernor::get_next_freq(uint64_t util, uint64_t capacity) {
  const uint64_t freq = ((policy_.cpuinfo_max_khz() * params_.capacity_margin) >> 10) * util / capacity;
  if (freq == cached_raw_freq_ && !need_freq_update_) return next_freq_;
  prev_cached_raw_freq_ = cached_raw_freq_;
  cached_raw_freq_ = freq;
  return policy_.resolve_freq(freq, CpufreqRelation::L);
}

// sugov_get_util() -> schedutil_cpu_util_pixel_mod() (5.10's
// schedutil_cpu_util(FREQUENCY_UTIL)), then sugov_iowait_apply(): a live
// boost raises the util to it, clamped by the rq's uclamp.
uint64_t SchedPixelGovernor::get_util(PxCpu& sg, const CpuUtil& in, Time now) {
  const uint64_t capacity = policy_.cpu_capacity;
  sg.bw_dl = in.bw_dl;
  uint64_t util = effective_cpu_util_pre_6_8(in, capacity, params_.uclamp_used);
  if (const uint64_t boost = sg.iowait_apply(now, params_.tick, capacity)) {
    util = std::max(util, boost);
    if (params_.uclamp_used) util = uclamp_rq_util_with(util, in.uclamp_min, in.uclamp_max);
  }
  sg.util = util;
  return util;
}

// sugov_fast_switch() / sugov_deferred_update() after
// sugov_update_next_freq() accepted: the fast path switches at once; the
// slow path returns the request for the kthread (as SchedutilGovernor).
std::optional<uint64_t> SchedPixelGovernor::commit(uint64_t next) {
  if (!params_.fast_switch) return next;
  policy_.cur_khz = policy_.resolve_freq(next, CpufreqRelation::L);
  return policy_.cur_khz;
}

// sugov_update_single(): ignore_dl_rate_limit() against the DL bandwidth of
// the last evaluation; the busy hold (sugov_cpu_is_busy(), decided before
// the util is read, and not after a limits change) keeps a frequency the
// CPU has not idled since.
std::optional<uint64_t> SchedPixelGovernor::update_single(PxCpu& sg, const CpuUtil& in, Time now, unsigned flags) {
  sg.iowait_boost_update(now, params_.tick, flags);
  sg.last_update = now;
  if (in.bw_dl > sg.bw_dl) limits_changed_ = true;
  if (!should_update_freq(now)) return std::nullopt;
  bool busy = false;
  if (!need_freq_update_ && params_.nohz_hold_freq) {
    busy = in.idle_calls == sg.saved_idle_calls;
    sg.saved_idle_calls = in.idle_calls;
  }
  uint64_t next = get_next_freq(get_util(sg, in, now), policy_.cpu_capacity);
  if (busy && next < next_freq_) {
    next = next_freq_;
    cached_raw_freq_ = prev_cached_raw_freq_;
  }
  if (!update_next_freq(now, next)) return std::nullopt;
  return commit(next);
}

// sugov_update_shared() + sugov_next_freq_shared(). The hook reads this
// CPU's util first (sugov_get_util(), which stores cpu_bw_dl() in
// sg_cpu->bw_dl), so its ignore_dl_rate_limit() never fires here. The
// policy follows the CPU with the largest util / capacity, the first of
// equals.
std::optional<uint64_t> SchedPixelGovernor::update_shared(size_t cpu, std::span<const CpuUtil> utils, Time now,
                                                          unsigned flags) {
  PxCpu& sg = cpus_[cpu];
  sg.bw_dl = utils[cpu].bw_dl;
  sg.iowait_boost_update(now, params_.tick, flags);
  sg.last_update = now;
  if (!should_update_freq(now)) return std::nullopt;
  uint64_t util = 0, max = 1;
  for (size_t j = 0; j < cpus_.size(); ++j) {
    const uint64_t j_util = get_util(cpus_[j], utils[j], now);
    if (j_util * max > policy_.cpu_capacity * util) {
      util = j_util;
      max = policy_.cpu_capacity;
    }
  }
  const uint64_t next = get_next_freq(util, max);
  if (!update_next_freq(now, next)) return std::nullopt;
  return commit(next);
}

std::optional<uint64_t> SchedPixelGovernor::update_util(size_t cpu, std::span<const CpuUtil> utils, Time now,
                                                        unsigned flags) {
  check_update_util_args(cpus_.size(), cpu, utils.size());
  if (cpus_.size() > 1) return update_shared(cpu, utils, now, flags);
  return update_single(cpus_[0], utils[0], now, flags);
}

}  // namespace schedlab
