// sched_pixel: the cpufreq governor of Google's Pixel vendor scheduler
// module, the one a retail Pixel 6 (gs101) runs: drivers/soc/google/vh/
// kernel/sched/cpufreq_gov.c of the gs101 5.10 tree (read in
// hentaiOS-Devices/kernel_google_gs @036420299ec8), with
// map_util_freq_pixel_mod() from its fair.c (@05ec46049db3). A fork of
// 5.10's cpufreq_schedutil.c; what differs from mainline schedutil:
//  - Two rate limits instead of one (sugov_up_down_rate_limit()): the
//    governor evaluates at most once per min(up, down) since the last
//    accepted change (sugov_should_update_freq()); a raise is held until
//    up_rate_limit has passed since that change, a cut until
//    down_rate_limit x (f_new / f_old)^down_rate_limit_scale_pow has (in
//    integer steps, as the kernel computes it: the deeper the cut, the
//    sooner it is allowed). A held request restores the raw-frequency
//    cache and leaves the window where it was.
//  - The DVFS headroom is the vendor's per-CPU sched_capacity_margin
//    (/proc/vendor_sched/util_threshold, default 1280 = 1.25), applied in
//    map_util_freq_pixel_mod() to the util after the rq's uclamp: a
//    uclamp_min of X asks margin x X, as in 5.10 mainline.
//  - Its slow-path kthread (sugov:N) is SCHED_FIFO priority
//    MAX_USER_RT_PRIO / 2 = 50, bound to the policy's CPUs, not
//    SCHED_DEADLINE (Kernel::setup_sugov_kthreads()).
//  - The vendor hook rvh_set_iowait_pixel_mod() passes the iowait flag only
//    for a uclamp-boosted task (Kernel::cpufreq_iowait_flag()).
// The rest is 5.10's schedutil: util = schedutil_cpu_util() (here
// effective_cpu_util_pre_6_8()), the iowait boost (SugovIowaitState), the
// shared policy's most demanding CPU by util / capacity, the single-CPU
// busy hold, the lowest table frequency at or above the raw one
// (cpufreq_driver_resolve_freq(), RELATION_L).
//
// What it reads follows the simulated kernel where the vendor module would
// see the same kernel's signals: cpu_util_cfs() (never 6.5+'s runnable
// boost, which the vendor's own cpu_util_cfs_group_mod() does not add),
// the RT util, uclamp, and cpu_bw_dl(), which on 6.12+ includes the fair
// server's bandwidth (5.10 has none; the teo study runs 6.1). Its default
// rate limits are the version's cpufreq_policy_transition_delay_us().
//
// Mainline EAS stands in for the vendor module's own energy-aware
// placement (its rvh_select_task_rq_fair hook): on a Pixel,
// build_perf_domains() disables mainline EAS for any governor but
// schedutil, and the vendor hook places tasks instead. So with
// sched_pixel the model keeps EAS (Kernel::setup_platform()), with its
// side effects: the !overutilized gating of load balancing, and
// find_energy_efficient_cpu()'s frequency estimate with schedutil's fixed
// 1.25 headroom where the vendor's em_cpu_energy_pixel_mod() uses
// util_threshold (the same at the default 1280).
//
// Simplified, and why: no vendor-group utilisation caps
// (cpu_util_cfs_group_mod(): the model has no vendor groups, and with no
// group capped it is cpu_util_cfs()); no PMU frequency limit (gs101's init
// leaves pmu polling off); no SCHED_PIXEL_BLOCK_UPDATES around enqueue (in
// the tree from February to June 2023 only; the update at the end of the
// enqueue stands in); no uclamp_min filter for short-running tasks
// (whether a given build enables it is not known); no
// util_post_init_scale for new tasks.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "models/kernel/cpufreq/governor.h"

namespace schedlab {

class SchedPixelGovernor final : public CpufreqGovernor {
 public:
  explicit SchedPixelGovernor(const GovernorParams& params);
  std::string_view name() const override { return "sched_pixel"; }
  // sugov_init() (tunables: up and down rate limits default to
  // cpufreq_policy_transition_delay_us()) + sugov_start() + sugov_limits().
  uint64_t start(const CpufreqPolicy& policy, Time now) override;
  // Whether sugov_update_*() could do more than refresh per-CPU state no
  // later call reads (see SchedutilGovernor::update_due()): an iowait
  // request or boost, a limits change, a single CPU's DL bandwidth above
  // its last reading, or min(up, down) passed since the last change.
  bool update_due(size_t cpu, uint64_t cpu_bw_dl, Time now, unsigned flags) const override;
  std::optional<uint64_t> update_util(size_t cpu, std::span<const CpuUtil> utils, Time now,
                                      unsigned flags = 0) override;
  bool slow_path() const override { return !params_.fast_switch; }
  uint64_t requested_khz() const override { return next_freq_; }
  void set_uclamp_used() override { params_.uclamp_used = true; }
  // Mainline EAS stands in for the vendor module's placement (above).
  bool enables_eas() const override { return true; }
  // cpu_util_cfs_group_mod(): no runnable boost.
  bool reads_runnable_boost() const override { return false; }
  // rvh_set_iowait_pixel_mod(): the flag only if uclamp_boosted(p).
  bool iowait_needs_uclamp_boost() const override { return true; }
  // sugov_kthread_create(): SCHED_FIFO, MAX_USER_RT_PRIO / 2.
  int slow_path_fifo_priority() const override { return 50; }

  Time up_rate_delay() const { return up_rate_delay_; }      // up_rate_delay_ns
  Time down_rate_delay() const { return down_rate_delay_; }  // down_rate_delay_ns
  Time min_rate_limit() const { return min_rate_limit_; }    // min_rate_limit_ns
  unsigned down_rate_limit_scale_pow() const { return params_.down_rate_limit_scale_pow; }
  uint64_t next_freq() const { return next_freq_; }          // sg_policy->next_freq
  uint64_t raw_freq() const { return cached_raw_freq_; }     // the last map_util_freq_pixel_mod()
  uint64_t cpu_util(size_t cpu) const { return cpus_.at(cpu).util; }  // util of the last evaluation
  // sugov_up_down_rate_limit(): whether a change of next_freq to `next`
  // is held back at `now`.
  bool rate_limited(Time now, uint64_t next) const;

 protected:
  std::optional<uint64_t> limits(Time now) override;

 private:
  struct PxCpu : SugovIowaitState {  // struct sugov_cpu
    uint64_t util = 0;   // after the iowait boost, as the shared loop compares it
    uint64_t bw_dl = 0;  // sg_cpu->bw_dl: cpu_bw_dl() at its last sugov_get_util()
    uint64_t saved_idle_calls = 0;
  };

  bool should_update_freq(Time now);
  uint64_t get_util(PxCpu& sg, const CpuUtil& in, Time now);
  uint64_t get_next_freq(uint64_t util, uint64_t capacity);
  bool update_next_freq(Time now, uint64_t next);
  std::optional<uint64_t> commit(uint64_t next);
  std::optional<uint64_t> update_single(PxCpu& sg, const CpuUtil& in, Time now, unsigned flags);
  std::optional<uint64_t> update_shared(size_t cpu, std::span<const CpuUtil> utils, Time now, unsigned flags);

  GovernorParams params_;
  std::vector<PxCpu> cpus_;
  // struct sugov_policy
  Time last_freq_update_time_ = Time::zero();
  Time min_rate_limit_ = Time::zero();
  Time up_rate_delay_ = Time::zero();
  Time down_rate_delay_ = Time::zero();
  uint64_t next_freq_ = 0;
  uint64_t cached_raw_freq_ = 0;
  uint64_t prev_cached_raw_freq_ = 0;
  bool limits_changed_ = false;
  bool need_freq_update_ = false;
};

}  // namespace schedlab
