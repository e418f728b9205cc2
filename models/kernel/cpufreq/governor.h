// cpufreq governors: one interface, chosen by name from a registry.
//
// A governor instance drives ONE cpufreq policy (frequency domain). It is a
// pure state machine: the simulator calls it at the kernel's hook points and
// applies the frequency it returns; no event loop lives here.
//
//   kernel hook                         -> here
//   cpufreq_start_governor()            -> start(policy, now)
//   cpufreq_update_util(rq, flags)      -> update_util(cpu, utils, now, flags)
//   cpufreq_set_policy() new min/max    -> set_limits(min, max, now)
//   scaling_setspeed store (userspace)  -> set_speed(khz)
//
// Kernel references (Linux 6.12): kernel/sched/cpufreq_schedutil.c,
// kernel/sched/fair.c effective_cpu_util(), drivers/cpufreq/cpufreq.c
// (__resolve_freq, __cpufreq_driver_target, cpufreq_set_policy,
// cpufreq_policy_transition_delay_us), include/linux/cpufreq.h
// (cpufreq_frequency_table_target and the table search helpers),
// drivers/cpufreq/cpufreq_{performance,powersave,userspace}.c.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "models/hw/opp.h"
#include "sim/time.h"

namespace schedlab {

class EnergyModel;

// SCHED_CPUFREQ_IOWAIT (include/linux/sched/cpufreq.h): the update comes from
// enqueueing a task that waited for I/O (p->in_iowait).
inline constexpr unsigned kSchedCpufreqIowait = 1u << 0;

// CPUFREQ_RELATION_* (include/linux/cpufreq.h). L: lowest frequency at or
// above the target; H: highest at or below. The E variants skip frequencies
// the EM marked inefficient when possible.
enum class CpufreqRelation { L, H, LE, HE };

// How cpufreq_policy_transition_delay_us() (drivers/cpufreq/cpufreq.c) turns
// cpuinfo.transition_latency into schedutil's default rate_limit_us when the
// driver sets no transition_delay_us. Both give USEC_PER_MSEC (1 ms) without
// a latency.
enum class TransitionDelayRule {
  // Up to 6.7 (checked in 6.1.166 and 6.6.63): latency_us x
  // LATENCY_MULTIPLIER (1000), capped at 10 ms.
  kLatencyX1000Cap10ms,
  // 6.10+ (checked in 6.12.19): latency_us + latency_us / 2, uncapped
  // ("Give a 50% breathing room between updates"). 6.8 and 6.9 capped the
  // x1000 rule at 2 ms; no modelled version has that.
  kLatencyAndAHalf,
};

// What a limits change (sugov_limits() -> limits_changed) does to the next
// schedutil update, by the version of cpufreq_schedutil.c:
//   kV6_1 (6.1.166): need_freq_update = true: get_next_freq() bypasses the
//     raw-frequency cache; sugov_update_next_freq() commits only a changed
//     frequency (unless the driver has CPUFREQ_NEED_UPDATE_LIMITS).
//   kV6_6 (6.6.63): need_freq_update = true, and the update commits even an
//     unchanged frequency (restarting the rate-limit window).
//   kV6_12 (6.12.19): need_freq_update = the driver's
//     CPUFREQ_NEED_UPDATE_LIMITS only: the update bypasses the rate limit
//     but not the cache.
//   kV6_18 (6.18.35): 6.1's rule again (need_freq_update = true, an equal
//     frequency is not recommitted); and ignore_dl_rate_limit() sets
//     need_freq_update itself, not limits_changed, which
//     sugov_should_update_freq() honours as a rate-limit bypass.
// 6.1, 6.6 and 6.12 route ignore_dl_rate_limit() through limits_changed.
enum class SugovLimitsRule { kV6_1, kV6_6, kV6_12, kV6_18 };

// cpufreq_policy_transition_delay_us() for a driver without
// transition_delay_us, the latency truncated to whole microseconds as the
// kernel's division by NSEC_PER_USEC does.
Time cpufreq_policy_transition_delay(Time transition_latency, TransitionDelayRule rule);

// struct cpufreq_policy, reduced to what the governors read.
struct CpufreqPolicy {
  std::vector<uint64_t> freq_table_khz;  // policy->freq_table, strictly ascending
  std::vector<bool> inefficient;         // CPUFREQ_INEFFICIENT_FREQ per entry; empty = none
  size_t nr_cpus = 1;                    // cpumask_weight(policy->cpus); >1 = shared policy
  uint64_t cpu_capacity = 1024;          // arch_scale_cpu_capacity() of its CPUs
  uint64_t min_khz = 0;                  // policy->min; 0 = lowest table frequency
  uint64_t max_khz = 0;                  // policy->max; 0 = highest table frequency
  uint64_t cur_khz = 0;                  // policy->cur when the governor starts; 0 = max
  Time transition_latency = Time::zero();  // cpuinfo.transition_latency (default rate limit)

  // Builds a policy over an OPP table. With `em`, the EM's inefficient
  // states become CPUFREQ_INEFFICIENT_FREQ entries, as
  // em_cpufreq_update_efficiencies() does (only if em->skip_inefficiencies());
  // `em_costs_v6_1`: the states 6.1's and 6.6's em_compute_costs() mark
  // (PerfState::inefficient_v6_1, by fmax x power / f) instead of 6.12's.
  static CpufreqPolicy from_opps(std::span<const Opp> opps, size_t nr_cpus, uint64_t cpu_capacity,
                                 const EnergyModel* em = nullptr, bool em_costs_v6_1 = false);

  uint64_t cpuinfo_min_khz() const { return freq_table_khz.front(); }
  uint64_t cpuinfo_max_khz() const { return freq_table_khz.back(); }

  // Throws std::invalid_argument on an empty/unsorted table, a mismatched
  // `inefficient` size, nr_cpus == 0, or capacity outside 1..1024; then
  // normalises min/max/cur (0 -> defaults; min/max resolved to table
  // frequencies as cpufreq_set_policy() does; cur resolved with RELATION_L).
  void validate_and_normalise();

  // cpufreq_set_policy(): new QoS limits, resolved to table frequencies:
  //   min = __resolve_freq(min, RELATION_L), max = __resolve_freq(max, RELATION_H)
  // after the driver's verify() clamps both into cpuinfo limits and forces
  // min <= max (cpufreq_verify_within_limits). 0 = table bound.
  void set_limits(uint64_t min_khz, uint64_t max_khz);

  // __resolve_freq(): clamp the target to [min, max], then
  // cpufreq_frequency_table_target() on the (ascending) table, including its
  // retry without efficiencies when the efficient pick falls outside limits.
  uint64_t resolve_freq(uint64_t target_khz, CpufreqRelation relation) const;
};

// What the scheduler knows about one CPU of the policy when it calls the
// hook (all in capacity units, 0..1024).
struct CpuUtil {
  uint64_t util_cfs = 0;     // cpu_util_cfs_boost(): CFS PELT util / util_est (+ runnable boost)
  uint64_t util_rt = 0;      // cpu_util_rt(): rq->avg_rt.util_avg
  uint64_t util_dl = 0;      // cpu_util_dl(): rq->avg_dl.util_avg
  uint64_t bw_dl = 0;        // cpu_bw_dl(): admitted DL running bandwidth
  uint64_t util_irq = 0;     // cpu_util_irq(): IRQ/steal PELT util
  bool rt_runnable = false;  // rt_rq_is_runnable(&rq->rt): an RT task is queued
  uint64_t uclamp_min = 0;     // rq->uclamp[UCLAMP_MIN]; read only when uclamp is used
  uint64_t uclamp_max = 1024;  // rq->uclamp[UCLAMP_MAX]; read only when uclamp is used
  // uclamp_rq_is_capped(): uclamp in use and the rq's cpu_util_cfs() +
  // cpu_util_rt() (without the runnable boost) at or above a uclamp_max
  // below 1024. The kernel computes it; sugov_hold_freq() reads it.
  bool uclamp_capped = false;
  // tick_nohz_get_idle_calls_cpu(): a counter the simulator increments at
  // each idle pass that stops the tick or finds it stopped (every idle
  // entry without cpuidle; not a pass whose governor keeps the tick).
  // schedutil's single-CPU path (sugov_hold_freq)
  // refuses to LOWER the frequency if it has not changed since the last
  // update: a simulator that never increments it gets a ratchet.
  uint64_t idle_calls = 0;
};

// Tunables of every governor (each reads its own); declared once here.
struct GovernorParams {
  // schedutil: rate_limit_us. nullopt = cpufreq_policy_transition_delay_us()
  // of the policy's transition_latency under `transition_delay`.
  std::optional<Time> rate_limit;
  TransitionDelayRule transition_delay = TransitionDelayRule::kLatencyAndAHalf;
  SugovLimitsRule limits_rule = SugovLimitsRule::kV6_12;
  // TICK_NSEC: an idle gap longer than one tick resets the iowait boost.
  // Default HZ=250 (Android GKI / arm64 defconfig).
  Time tick = Time::ms(4);
  // arch_scale_freq_invariant(): util is frequency-invariant (arm64 with
  // AMU/cpufreq FIE; always true in this simulator's work model). When
  // false, get_capacity_ref_freq() uses cur * 1.25.
  bool freq_invariant = true;
  // arch_scale_freq_ref(): reference frequency of capacity; 0 = cpuinfo.max_freq
  // (what arm64's arch_topology sets on DT platforms).
  uint64_t ref_freq_khz = 0;
  // CONFIG_NO_HZ_COMMON: sugov_hold_freq() on single-CPU policies.
  bool nohz_hold_freq = true;
  // sched_uclamp_used static key: once any uclamp is set, CpuUtil::uclamp_*
  // matter and a runnable RT task no longer forces max by itself.
  bool uclamp_used = false;
  // Where the 25% DVFS headroom goes (kernel versions 6.1 and 6.6, checked
  // in 6.1.166 and 6.6.63, before 6.8's "sched/cpufreq: Rework schedutil
  // governor performance estimation"): sugov_get_util() clamps util by the
  // rq's uclamp and adds the DL bandwidth (effective_cpu_util_pre_6_8()),
  // the iowait boost is clamped too, and get_next_freq() adds the headroom
  // to the result: a uclamp_min or uclamp_max value gets 1.25 x itself.
  // false (6.12, 6.18): sugov_effective_cpu_perf(), where the clamps bound
  // the util with its headroom already added.
  bool headroom_after_clamp = false;
  // CPUFREQ_NEED_UPDATE_LIMITS driver flag (e.g. intel_pstate passive).
  bool need_update_limits = false;
  // policy->fast_switch_enabled (the driver has .fast_switch: Qualcomm
  // cpufreq-hw, SCMI; cpufreq-dt has none): schedutil's decision applies
  // in the scheduler hook (cpufreq_driver_fast_switch()). false: the slow
  // path, where commit() only records next_freq and the Kernel's sugov:N
  // kthread applies it later (slow_switch()); sugov_limits() clamps cur at
  // once.
  bool fast_switch = true;
  // userspace: a scaling_setspeed write right after start; 0 = keep policy->cur.
  uint64_t userspace_setspeed_khz = 0;
  // sched_pixel (Google's vendor governor, sched_pixel.h): up_rate_limit_us
  // and down_rate_limit_us; nullopt = cpufreq_policy_transition_delay_us()
  // under `transition_delay`, as its sugov_init() sets both.
  std::optional<Time> up_rate_limit;
  std::optional<Time> down_rate_limit;
  unsigned down_rate_limit_scale_pow = 1;  // >= 1 (its store rejects 0)
  // sched_pixel: sched_capacity_margin (/proc/vendor_sched/util_threshold),
  // the DVFS headroom map_util_freq_pixel_mod() multiplies by, / 1024.
  uint64_t capacity_margin = 1280;
};

// struct sugov_cpu's iowait-boost state and its three helpers
// (sugov_iowait_reset(), sugov_iowait_boost(), sugov_iowait_apply()), the
// same in schedutil and in sched_pixel, which forked cpufreq_schedutil.c.
struct SugovIowaitState {
  // IOWAIT_BOOST_MIN = SCHED_CAPACITY_SCALE / 8.
  static constexpr uint64_t kIowaitBoostMin = 1024 / 8;
  bool iowait_boost_pending = false;
  uint64_t iowait_boost = 0;
  Time last_update = Time::zero();

  // sugov_iowait_reset(): more than a tick since this CPU's last update.
  bool iowait_reset(Time now, Time tick, bool set_iowait_boost);
  // sugov_iowait_boost(): start at IOWAIT_BOOST_MIN, double once per
  // request up to SCHED_CAPACITY_SCALE.
  void iowait_boost_update(Time now, Time tick, unsigned flags);
  // sugov_iowait_apply(): halve the boost on every evaluation without a new
  // request (dropping it below IOWAIT_BOOST_MIN), return it in capacity units
  // (0 = none).
  uint64_t iowait_apply(Time now, Time tick, uint64_t max_cap);
};

class CpufreqGovernor {
 public:
  virtual ~CpufreqGovernor() = default;
  virtual std::string_view name() const = 0;

  // cpufreq_start_governor(): governor->start() then governor->limits().
  // Copies and normalises `policy`. Returns the frequency the policy runs at
  // afterwards.
  virtual uint64_t start(const CpufreqPolicy& policy, Time now) = 0;

  // cpufreq_update_util() on CPU `cpu` (index into the policy's CPUs);
  // `utils` holds one entry per CPU of the policy (size nr_cpus). `flags`:
  // kSchedCpufreqIowait or 0. Returns the frequency to switch to when the
  // governor commits a new request, nullopt otherwise.
  virtual std::optional<uint64_t> update_util(size_t cpu, std::span<const CpuUtil> utils, Time now,
                                              unsigned flags = 0) {
    return std::nullopt;
  }

  // Whether update_util() for `cpu` could change anything now (a cheap test
  // so the caller can skip gathering utilisation: schedutil's rate limit, as
  // sugov_should_update_freq() is the first thing sugov_update_*() decides).
  // `cpu_bw_dl` is cpu_bw_dl() of that CPU's rq, which
  // ignore_dl_rate_limit() reads before the rate limit.
  virtual bool update_due(size_t cpu, uint64_t cpu_bw_dl, Time now, unsigned flags) const { return false; }

  // New policy->min / policy->max (0 = table bound), then governor->limits().
  // Returns the new frequency if it changes now.
  std::optional<uint64_t> set_limits(uint64_t min_khz, uint64_t max_khz, Time now);

  // scaling_setspeed (userspace governor only). Throws std::logic_error for
  // other governors (the kernel's store_scaling_setspeed returns -EINVAL).
  virtual std::optional<uint64_t> set_speed(uint64_t khz);

  // The slow path (a driver without .fast_switch, schedutil and
  // sched_pixel): update_util() only records the request, returned as
  // requested_khz(), and the policy's kthread applies it later with
  // slow_switch() (Kernel::cpufreq_commit(), SugovKthread).
  virtual bool slow_path() const { return false; }
  virtual uint64_t requested_khz() const { return policy_.cur_khz; }  // sg_policy->next_freq
  // sugov_work() -> __cpufreq_driver_target(next_freq, RELATION_L): the
  // frequency the driver switches to, or nothing when it already runs there.
  std::optional<uint64_t> slow_switch(uint64_t khz) { return driver_target(khz, CpufreqRelation::L); }
  // static_branch_enable(&sched_uclamp_used) after the governor started
  // (read by the governors that clamp by uclamp).
  virtual void set_uclamp_used() {}

  // What the scheduler side does with this governor, mainline's by
  // default (sched_pixel's vendor module differs; the Kernel caches these
  // per frequency domain at set-up):
  // build_perf_domains() allows EAS (mainline: schedutil only).
  virtual bool enables_eas() const { return false; }
  // sugov_get_util() reads 6.5+'s runnable-boosted CFS util.
  virtual bool reads_runnable_boost() const { return true; }
  // enqueue_task_fair() passes the iowait flag only for a task with a
  // uclamp_min boost (a vendor hook; mainline: for every I/O waiter).
  virtual bool iowait_needs_uclamp_boost() const { return false; }
  // The slow path's sugov:N kthread: SCHED_FIFO at this priority, or
  // SCHED_DEADLINE (schedutil's sugov_kthread_create()) when 0.
  virtual int slow_path_fifo_priority() const { return 0; }

  // policy->cur as this governor last set it (assumes the driver applies
  // every request).
  uint64_t cur_khz() const { return policy_.cur_khz; }
  const CpufreqPolicy& policy() const { return policy_; }

 protected:
  // governor->limits(), called after the policy's limits changed.
  virtual std::optional<uint64_t> limits(Time now) = 0;
  // __cpufreq_driver_target(): resolve, and switch if it differs from cur.
  std::optional<uint64_t> driver_target(uint64_t target_khz, CpufreqRelation relation);
  // cpufreq_policy_apply_limits(), which the slow path's sugov_limits()
  // calls: cur clamped into the new limits at once (HE towards max, LE
  // towards min).
  std::optional<uint64_t> apply_limits();
  // update_util()'s argument checks (the kernel's hook cannot get them
  // wrong; a test can): started, `cpu` inside the policy, one CpuUtil per
  // CPU. Throws std::logic_error / std::invalid_argument naming the governor.
  void check_update_util_args(size_t started_cpus, size_t cpu, size_t nr_utils) const;
  void install_policy(const CpufreqPolicy& policy);

  CpufreqPolicy policy_;
};

// ---- schedutil helpers (exposed for tests and for EAS-side callers) -------

// effective_cpu_util() (kernel/sched/fair.c, 6.12). Returns the CPU's
// util; *min / *max (if non-null) receive the performance floor and cap
// (DL bandwidth + IRQ, uclamp; max capacity when an RT task is runnable and
// uclamp is unused).
uint64_t effective_cpu_util(const CpuUtil& cpu, uint64_t capacity, bool uclamp_used,
                            uint64_t* min, uint64_t* max);

// effective_cpu_util(FREQUENCY_UTIL, p = NULL) of 6.1.166 / 6.6.63 (core.c):
// the RT-runnable and IRQ shortcuts to capacity, cfs + rt clamped by the
// rq's uclamp (uclamp_rq_util_with()), capacity once DL util would fill
// the CPU, the IRQ scaling, then the DL bandwidth added; at most capacity.
uint64_t effective_cpu_util_pre_6_8(const CpuUtil& cpu, uint64_t capacity, bool uclamp_used);

// uclamp_rq_util_with(rq, util, NULL): the rq's clamps; an inverted pair
// (min >= max) gives min.
constexpr uint64_t uclamp_rq_util_with(uint64_t util, uint64_t rq_min, uint64_t rq_max) {
  if (rq_min >= rq_max) return rq_min;
  return util < rq_min ? rq_min : (util > rq_max ? rq_max : util);
}

// sugov_effective_cpu_perf(): max(min, min(map_util_perf(actual), max)).
constexpr uint64_t sugov_effective_cpu_perf(uint64_t actual, uint64_t min, uint64_t max) {
  actual = map_util_perf(actual);
  if (actual < max) max = actual;
  return min > max ? min : max;
}

// schedutil (kernel/sched/cpufreq_schedutil.c). Declared here so tests and
// the trace layer can read its state; create it through make_governor().
class SchedutilGovernor final : public CpufreqGovernor {
 public:
  static constexpr uint64_t kIowaitBoostMin = SugovIowaitState::kIowaitBoostMin;

  explicit SchedutilGovernor(const GovernorParams& params);
  std::string_view name() const override { return "schedutil"; }
  // sugov_update_*() up to sugov_should_update_freq(): due when the
  // caller passes flags (iowait), a limits change is pending, the CPU's DL
  // bandwidth rose above its last floor (ignore_dl_rate_limit(), which
  // sets limits_changed, or from 6.18 need_freq_update, which 6.18's
  // should_update_freq() honours), the CPU holds an iowait boost (every
  // update, rate-limited or not, refreshes its last_update, which decides
  // the boost's reset), or the rate-limit window has passed. A call
  // skipped here would only have refreshed a CPU's last_update while it
  // has no boost, when nothing reads it.
  bool update_due(size_t cpu, uint64_t cpu_bw_dl, Time now, unsigned flags) const override {
    return flags != 0 || cpus_[cpu].iowait_boost != 0 || limits_changed_ || cpu_bw_dl > cpus_[cpu].bw_min ||
           dl_bypass_pending() ||
           now - last_freq_update_time_ >= freq_update_delay_;
  }
  uint64_t start(const CpufreqPolicy& policy, Time now) override;
  std::optional<uint64_t> update_util(size_t cpu, std::span<const CpuUtil> utils, Time now,
                                      unsigned flags = 0) override;
  // update_util() for a caller that guarantees what it checks: started,
  // cpu < nr_cpus and one CpuUtil per CPU of the policy (the kernel's hook).
  std::optional<uint64_t> update_util_checked_by_caller(size_t cpu, std::span<const CpuUtil> utils, Time now,
                                                        unsigned flags) {
    if (cpus_.size() > 1) return update_shared(cpu, utils, now, flags);
    return update_single(cpus_[0], utils[0], now, flags);
  }

  // The kernel hook's fast path for a shared policy (nr_cpus > 1) when
  // uclamp is unused: each CPU's inputs come from `in(j)`, returning
  // {util_cfs, util_rt, rt_runnable, bw_dl}, and every other CpuUtil field
  // is at its default (no DL util, no IRQ pressure), which is all the
  // simulator's kernel ever reports. Same state changes and result as
  // update_util() with those CpuUtil records, without building them.
  struct SharedInput {
    uint64_t util_cfs;
    uint64_t util_rt;
    bool rt_runnable;
    uint64_t bw_dl;  // cpu_bw_dl()
  };
  bool shared_fast_path_ok() const { return cpus_.size() > 1 && !params_.uclamp_used; }
  void set_uclamp_used() override { params_.uclamp_used = true; }
  template <typename In>
  std::optional<uint64_t> update_shared_fast(size_t cpu, Time now, unsigned flags, In&& in) {
    // sugov_update_shared().
    SgCpu& sg = cpus_[cpu];
    sg.iowait_boost_update(now, params_.tick, flags);
    sg.last_update = now;
    ignore_dl_rate_limit(sg, in(cpu).bw_dl);
    if (!should_update_freq(now)) return std::nullopt;
    const uint64_t max_cap = policy_.cpu_capacity;
    uint64_t util = 0;
    for (size_t j = 0; j < cpus_.size(); ++j) {
      SgCpu& s = cpus_[j];
      const uint64_t boost = s.iowait_boost ? s.iowait_apply(now, params_.tick, max_cap) : 0;
      const SharedInput x = in(j);
      // get_util() -> effective_cpu_util() with irq = util_dl = 0 and
      // uclamp unused: floor = capacity if RT is runnable else the DL
      // bandwidth, cap = capacity (<= 1024), util = min(cfs + rt, capacity).
      uint64_t u = x.util_cfs + x.util_rt;
      if (u > max_cap) u = max_cap;
      if (params_.headroom_after_clamp) {
        // 6.1/6.6: capacity with RT runnable, else util plus the DL
        // bandwidth; no headroom yet (get_next_freq() adds it).
        if (x.rt_runnable) u = max_cap;
        if (u < max_cap) u = std::min(max_cap, u + x.bw_dl);
        s.bw_min = x.bw_dl;
        s.util = u < boost ? boost : u;
      } else {
        const uint64_t min = x.rt_runnable ? std::max(max_cap, x.bw_dl) : x.bw_dl;
        if (u < boost) u = boost;
        s.bw_min = min;
        s.util = sugov_effective_cpu_perf(u, min, max_cap);
      }
      if (s.util > util) util = s.util;
    }
    const uint64_t next_f = get_next_freq(util, max_cap);
    if (!update_next_freq(now, next_f)) return std::nullopt;
    return commit(next_f);
  }

  Time rate_limit() const { return freq_update_delay_; }  // freq_update_delay_ns
  uint64_t next_freq() const { return next_freq_; }       // sg_policy->next_freq
  bool fast_switch() const { return params_.fast_switch; }  // policy->fast_switch_enabled
  bool slow_path() const override { return !params_.fast_switch; }
  uint64_t requested_khz() const override { return next_freq_; }
  bool enables_eas() const override { return true; }
  uint64_t iowait_boost(size_t cpu) const { return cpus_.at(cpu).iowait_boost; }
  uint64_t cpu_util(size_t cpu) const { return cpus_.at(cpu).util; }  // sg_cpu->util after the last evaluation
  Time cpu_last_update(size_t cpu) const { return cpus_.at(cpu).last_update; }  // sg_cpu->last_update
  uint64_t cpu_bw_min(size_t cpu) const { return cpus_.at(cpu).bw_min; }  // sg_cpu->bw_min (the util floor)
  uint64_t raw_freq() const { return cached_raw_freq_; }  // the last map_util_freq(), before the OPP lookup
  bool headroom_after_clamp() const { return params_.headroom_after_clamp; }  // 6.1/6.6: util has no headroom yet

 protected:
  std::optional<uint64_t> limits(Time now) override;

 private:
  struct SgCpu : SugovIowaitState {  // struct sugov_cpu
    uint64_t util = 0;
    uint64_t bw_min = 0;
    uint64_t saved_idle_calls = 0;
  };

  bool should_update_freq(Time now);
  // 6.18: ignore_dl_rate_limit() set need_freq_update, a rate-limit bypass.
  bool dl_bypass_pending() const { return params_.limits_rule == SugovLimitsRule::kV6_18 && need_freq_update_; }
  bool update_next_freq(Time now, uint64_t next_freq);
  uint64_t get_next_freq(uint64_t util, uint64_t max_cap);
  void get_util(SgCpu& sg, const CpuUtil& in, uint64_t boost);
  bool hold_freq(SgCpu& sg, const CpuUtil& in);
  void ignore_dl_rate_limit(const SgCpu& sg, uint64_t cpu_bw_dl);
  std::optional<uint64_t> update_single(SgCpu& sg, const CpuUtil& in, Time now, unsigned flags);
  std::optional<uint64_t> update_shared(size_t cpu, std::span<const CpuUtil> utils, Time now, unsigned flags);
  std::optional<uint64_t> commit(uint64_t next_freq);

  GovernorParams params_;
  std::vector<SgCpu> cpus_;
  // struct sugov_policy
  Time last_freq_update_time_ = Time::zero();
  Time freq_update_delay_ = Time::zero();
  uint64_t next_freq_ = 0;
  uint64_t cached_raw_freq_ = 0;
  bool limits_changed_ = false;
  bool need_freq_update_ = false;
};

// ---- registry ----------------------------------------------------------------

// The registered names, sorted: performance, powersave, sched_pixel, schedutil, userspace.
std::vector<std::string> governor_names();

// Creates the governor called `name`. Unknown name -> std::invalid_argument
// whose message lists the valid names.
std::unique_ptr<CpufreqGovernor> make_governor(std::string_view name, const GovernorParams& params);

}  // namespace schedlab
