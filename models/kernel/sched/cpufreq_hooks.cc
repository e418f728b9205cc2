// The scheduler's view of the hardware: CPU capacities
// (drivers/base/arch_topology.c topology_normalize_cpu_scale), frequency
// domains run by cpufreq governors (cpufreq_update_util() ->
// kernel/sched/cpufreq_schedutil.c), frequency invariance
// (arch_scale_freq_capacity) and the rq clocks PELT reads (update_rq_clock).
//
// Work runs at capacity/1024 x cur/max of its nominal rate; before a
// frequency changes every affected CPU's work is charged at the old rate.
#include <algorithm>
#include <fmt/format.h>

#include "models/errors.h"
#include "models/hw/topology.h"
#include "models/kernel/cpufreq/sched_pixel.h"
#include "models/kernel/kernel.h"
#include "sim/log.h"

namespace schedlab {

// The fixed-point work rate of a CPU: (cap/1024) x (f/f_max) x 2^20, with
// f/f_max as the kernel's 1024-scaled arch_scale_freq_capacity().
static uint32_t work_rate(uint32_t capacity, uint32_t freq_scale) {
  return static_cast<uint32_t>(uint64_t{capacity} * freq_scale);
}

void Kernel::setup_platform(const PlatformParams& platform) {
  if (platform.clusters.empty()) return;  // identical CPUs, capacity 1024, one frequency
  DerivedPlatform derived;
  try {
    derived = derive_platform(platform);  // topology_normalize_cpu_scale() capacities
    // update_top_cache_domain()'s sd_llc_id for cpus_share_cache().
    const std::vector<CpuSchedDomains> domains = Topology(platform).build_sched_domains();
    for (size_t cpu = 0; cpu < domains.size() && cpu < llc_id_.size(); ++cpu) {
      llc_id_[cpu] = domains[cpu].sd_llc_id;
      // find_lowest_rq()'s walk (6.12 rt.c): every non-NUMA level has
      // SD_WAKE_AFFINE (sd_init()).
      wake_affine_spans_[cpu].clear();
      for (const SchedDomain& sd : domains[cpu].domains)
        if (sd.has(kSdWakeAffine)) wake_affine_spans_[cpu].push_back(sd.span);
    }
  } catch (const std::invalid_argument& e) {
    throw ModelError(e.what());
  }
  for (size_t ci = 0; ci < platform.clusters.size(); ++ci) {
    const ClusterParams& c = platform.clusters[ci];
    FreqDomain d;
    d.name = c.name;
    d.opps = c.opps;
    d.max_khz = c.opps.back().freq_khz;
    d.capacity = derived.cluster_capacity[ci];
    d.cpus = derived.cluster_cpus[ci];
    try {
      d.em = std::make_unique<EnergyModel>(c.opps, d.capacity, c.dynamic_power_coefficient);
    } catch (const std::exception& e) {
      SL_WARN("cluster {}: no energy model ({}); EAS is off for it", c.name, e.what());
    }
    GovernorParams gp;
    gp.rate_limit = c.rate_limit;
    gp.transition_delay = version_.transition_delay;
    gp.limits_rule = version_.sugov_limits;
    gp.headroom_after_clamp = version_.sugov_headroom_after_clamp;
    gp.tick = tick_nsec_;
    gp.userspace_setspeed_khz = c.userspace_freq_khz;
    gp.fast_switch = c.fast_switch;
    gp.up_rate_limit = c.up_rate_limit;
    gp.down_rate_limit = c.down_rate_limit;
    gp.down_rate_limit_scale_pow = static_cast<unsigned>(c.down_rate_limit_scale_pow);
    gp.capacity_margin = static_cast<uint64_t>(c.util_threshold);
    try {
      d.governor = make_governor(c.cpufreq_governor, gp);
    } catch (const std::invalid_argument& e) {
      throw ModelError(fmt::format("cluster {}: {}", c.name, e.what()));
    }
    CpufreqPolicy policy =
        CpufreqPolicy::from_opps(c.opps, d.cpus.size(), d.capacity, d.em.get(), version_.em_energy_v6_1);
    policy.transition_latency = c.transition_latency;  // cpuinfo.transition_latency
    d.cur_khz = d.governor->start(policy, Time::zero());
    d.utils.resize(d.cpus.size());
    d.sugov = dynamic_cast<SchedutilGovernor*>(d.governor.get());
    d.reads_runnable_boost = d.governor->reads_runnable_boost();
    d.iowait_needs_uclamp_boost = d.governor->iowait_needs_uclamp_boost();
    domains_.push_back(std::move(d));
  }
  if (domains_.size() > 64) throw ModelError(fmt::format("{} frequency domains: at most 64 are supported", domains_.size()));
  rd_max_cpu_capacity_ = 0;  // build_sched_domains(): the largest cpu_capacity_orig
  for (size_t i = 0; i < domains_.size(); ++i) {
    FreqDomain& d = domains_[i];
    if (d.capacity != domains_[0].capacity) asym_capacity_ = true;
    rd_max_cpu_capacity_ = std::max(rd_max_cpu_capacity_, d.capacity);
    for (int c : d.cpus) {
      Rq& rq = *rqs_[c];
      rq.domain_pos = static_cast<uint32_t>(d.rqs.size());
      d.rqs.push_back(&rq);
      rq.domain = static_cast<int>(i);
      rq.capacity = d.capacity;
      rq.cpu_capacity = d.capacity;  // before any RT pressure (init_sched_groups_capacity())
      rq.freq_scale = static_cast<uint32_t>((d.cur_khz << 10) / d.max_khz);
      rq.rate = work_rate(rq.capacity, rq.freq_scale);
    }
  }
  // sched_is_eas_possible() + build_perf_domains() (6.12 topology.c): EAS
  // needs asymmetric capacities, an energy model for every performance
  // domain and schedutil as every policy's governor.
  // (sched_pixel too: mainline EAS stands in for the vendor module's
  // placement, sched_pixel.h.)
  energy_enabled_ = asym_capacity_ && std::all_of(domains_.begin(), domains_.end(), [](const FreqDomain& d) {
                      return d.em != nullptr && d.governor->enables_eas();
                    });
  // rd->pd: build_perf_domains() walks the CPUs in order and prepends each
  // new domain, so the list starts with the domain of the highest-numbered
  // CPU (on phones the biggest cluster). find_energy_efficient_cpu() keeps
  // the first of equal candidates: the order decides ties.
  perf_domain_order_.resize(domains_.size());
  for (size_t i = 0; i < domains_.size(); ++i) perf_domain_order_[i] = i;
  std::sort(perf_domain_order_.begin(), perf_domain_order_.end(), [&](size_t a, size_t b) {
    return domains_[a].cpus.front() > domains_[b].cpus.front();
  });
}

// sugov_init() -> sugov_kthread_create() for a policy without fast switch
// (schedutil and sched_pixel: the other governors switch from process
// context, at once here). After the task groups and uclamp are set up: the
// kthreads are tasks like any other, in the root group.
void Kernel::setup_sugov_kthreads(const PlatformParams& platform) {
  for (size_t i = 0; i < domains_.size(); ++i)
    if (domains_[i].governor->slow_path())
      domains_[i].sugov_kthread = std::make_unique<SugovKthread>(*this, i, platform.clusters[i].slow_switch_work,
                                                                 platform.clusters[i].transition_latency);
}

// rvh_set_iowait_pixel_mod() (Pixel's vendor module, with sched_pixel): the
// iowait flag only for a task with a uclamp_min boost (uclamp_boosted());
// mainline passes it for every task waking from I/O.
unsigned Kernel::cpufreq_iowait_flag(const Rq& rq, const Task& p) const {
  if (rq.domain >= 0 && domains_[static_cast<size_t>(rq.domain)].iowait_needs_uclamp_boost &&
      !(uclamp_used_ && uclamp_eff_value(p, kUclampMin) > 0))
    return 0;
  return kSchedCpufreqIowait;
}

// update_rq_clock() is inline in kernel.h.

// The work each CPU of the policy did up to now is charged at the old rate
// first (the hardware ran at it). Nothing of the kernel's is updated: the
// hook runs on one CPU under its rq lock, and the others see the new
// arch_scale_freq_capacity() (arch_set_freq_scale() for all related CPUs)
// only at their next update_rq_clock(), which scales the whole delta since
// their last one by it (update_rq_clock_pelt()). Their update_curr() needs
// no call either: it charges wall time, which the frequency does not
// change. (Issue #3 asked for update_curr() before a frequency change; the
// model's counterpart is this work charge.)
void Kernel::set_domain_freq(FreqDomain& d, uint64_t khz) {
  if (khz == d.cur_khz) return;
  for (int c : d.cpus) account_progress(*rqs_[c]);
  SL_DEBUG("{:.6f} cpufreq {}: {} -> {} kHz", now().to_s(), d.name, d.cur_khz, khz);
  d.cur_khz = khz;
  for (int c : d.cpus) {
    Rq& rq = *rqs_[c];
    rq.freq_scale = static_cast<uint32_t>((khz << 10) / d.max_khz);
    rq.rate = work_rate(rq.capacity, rq.freq_scale);
    if (!rq.curr->is_idle_task && rq.curr->act == Task::Act::kRun && rq.work_timer.armed()) arm_work_timer(rq);
    for (auto* o : observers_) o->on_cpu_frequency(now(), c, khz);
  }
}

uint32_t Kernel::max_allowed_capacity(const Task& p) const {
  if (!p.is_idle_task && p.index < max_allowed_cap_.size() && tasks_[p.index].get() == &p)
    return max_allowed_cap_[p.index];
  uint32_t m = 0;
  for (int c = 0; c < nr_cpus(); ++c)
    if (p.cpus_allowed[c]) m = std::max(m, rqs_[c]->capacity);
  return m;
}

void Kernel::set_task_max_allowed_capacity(const Task& p) {
  if (p.is_idle_task || p.index >= max_allowed_cap_.size() || tasks_[p.index].get() != &p) return;
  uint32_t cap = 0;
  for (int c = 0; c < nr_cpus(); ++c)
    if (p.cpus_allowed[static_cast<size_t>(c)]) cap = std::max(cap, rqs_[static_cast<size_t>(c)]->capacity);
  max_allowed_cap_[p.index] = cap;
}

// cpu_util_cfs() is inline in kernel.h.

// --log debug: why schedutil asks for `khz` (sugov_next_freq_shared():
// the CPU with the highest sg_cpu->util, which sugov_effective_cpu_perf()
// already raised by map_util_perf()'s 25%; get_next_freq(), the OPP
// lookup).
void Kernel::explain_schedutil(const FreqDomain& d, uint64_t khz) const {
  size_t busiest = 0;
  for (size_t j = 1; j < d.cpus.size(); ++j)
    if (d.sugov->cpu_util(j) > d.sugov->cpu_util(busiest)) busiest = j;
  const uint64_t util = d.sugov->cpu_util(busiest);
  if (d.sugov->headroom_after_clamp()) {
    // 6.1/6.6: sg_cpu->util is clamped util (+ DL bandwidth); the 25% is
    // added in get_next_freq().
    SL_DEBUG("{:.6f} schedutil {}: cpu{} asks the most, util {} of capacity {} (clamped by uclamp if used, + DL bandwidth); "
             "+ 25% headroom x f_max / capacity = {} kHz -> the lowest OPP at or above: {} kHz",
             now().to_s(), d.name, d.cpus[busiest], util, d.capacity, d.sugov->raw_freq(), khz);
    return;
  }
  const uint64_t floor = d.sugov->cpu_bw_min(busiest);  // sugov_effective_cpu_perf()'s min
  if (floor > 0 && floor < d.capacity && util == floor) {
    // sugov_effective_cpu_perf(): the floor, not util + headroom, decided.
    const uint64_t bw = cpu_bw_dl(*d.rqs[busiest]);
    SL_DEBUG("{:.6f} schedutil {}: cpu{} asks the most, its floor {} of capacity {} ({}); x f_ref / capacity = {} "
             "kHz -> the lowest OPP at or above: {} kHz",
             now().to_s(), d.name, d.cpus[busiest], floor, d.capacity,
             floor == bw ? "the fair server's DL bandwidth, cpu_bw_dl()" : "the rq's uclamp_min", d.sugov->raw_freq(),
             khz);
    return;
  }
  const bool rt_floor = floor >= d.capacity;
  SL_DEBUG("{:.6f} schedutil {}: cpu{} asks the most, util + 25% headroom = {} of capacity {}{}; x f_ref / "
           "capacity = {} kHz -> the lowest OPP at or above: {} kHz",
           now().to_s(), d.name, d.cpus[busiest], util, d.capacity,
           rt_floor ? " (an RT task is runnable and uclamp is unused: the whole capacity)" : "", d.sugov->raw_freq(),
           khz);
}

// --log debug: why sched_pixel asks for `khz` (sugov_next_freq_shared():
// the CPU with the largest util / capacity; map_util_freq_pixel_mod():
// the margin after uclamp; the lowest OPP at or above).
void Kernel::explain_sched_pixel(const FreqDomain& d, const SchedPixelGovernor& g, uint64_t khz) const {
  size_t busiest = 0;
  for (size_t j = 1; j < d.cpus.size(); ++j)
    if (g.cpu_util(j) > g.cpu_util(busiest)) busiest = j;
  SL_DEBUG("{:.6f} sched_pixel {}: cpu{} asks the most, util {} of capacity {} (clamped by uclamp if used); x "
           "util_threshold / 1024 x f_max / capacity = {} kHz -> the lowest OPP at or above: {} kHz (up after {} us, "
           "down after {} us x (f_new/f_old)^{} since the last change)",
           now().to_s(), d.name, d.cpus[busiest], g.cpu_util(busiest), d.capacity, g.raw_freq(), khz,
           g.up_rate_delay().count() / 1000, g.down_rate_delay().count() / 1000, g.down_rate_limit_scale_pow());
}

void Kernel::cpufreq_update_util(Rq& rq, unsigned flags) {
  if (rq.domain < 0) return;
  FreqDomain& d = domains_[static_cast<size_t>(rq.domain)];
  SchedutilGovernor* const sugov = d.sugov;  // schedutil: direct (non-virtual) calls
  // sugov_update_*()'s ignore_dl_rate_limit() reads this rq's cpu_bw_dl()
  // before the rate limit decides.
  const uint64_t bw_dl = cpu_bw_dl(rq);
  if (sugov ? !sugov->update_due(rq.domain_pos, bw_dl, now(), flags)
            : !d.governor->update_due(rq.domain_pos, bw_dl, now(), flags))
    return;
  if (sugov && sugov->shared_fast_path_ok()) {
    // Shared schedutil policy: read each CPU's util straight from its rq.
    auto next = sugov->update_shared_fast(rq.domain_pos, now(), flags, [&](size_t j) {
      const Rq& r = *d.rqs[j];
      return SchedutilGovernor::SharedInput{cpu_util_cfs_boost(r), r.avg_rt.util_avg,
                                            r.rt.rt_nr_running > 0 && !r.rt.rt_throttled, cpu_bw_dl(r)};
    });
    if (next) {
      if (sim_log_debug.load(std::memory_order_relaxed) && *next != d.cur_khz) [[unlikely]]
        explain_schedutil(d, *next);
      cpufreq_commit(d, *next);
    }
    return;
  }
  // sugov_get_util() for every CPU of the policy (shared policies look at
  // all of them).
  // The domain's scratch array, sized at set-up: nothing is allocated or
  // zeroed here.
  const size_t n = d.rqs.size();
  CpuUtil* const utils = d.utils.data();
  // A governor that reads no runnable boost (sched_pixel's
  // cpu_util_cfs_group_mod()) gets cpu_util_cfs().
  for (size_t i = 0; i < n; ++i) {
    const Rq& r = *d.rqs[i];
    CpuUtil& u = utils[i];
    u.util_cfs = d.reads_runnable_boost ? cpu_util_cfs_boost(r) : cpu_util_cfs(r);  // sugov_get_util()
    u.util_rt = r.avg_rt.util_avg;
    u.rt_runnable = r.rt.rt_nr_running > 0 && !r.rt.rt_throttled;
    u.bw_dl = cpu_bw_dl(r);
    u.idle_calls = r.idle_calls;
    u.uclamp_min = r.uclamp.get(kUclampMin);  // read by the governor only when uclamp is used
    u.uclamp_max = r.uclamp.get(kUclampMax);
    u.uclamp_capped = uclamp_rq_is_capped(r);
  }
  const std::span<const CpuUtil> span(utils, n);
  auto next = sugov ? sugov->update_util_checked_by_caller(rq.domain_pos, span, now(), flags)
                    : d.governor->update_util(rq.domain_pos, span, now(), flags);
  if (next && sim_log_debug.load(std::memory_order_relaxed) && *next != d.cur_khz) [[unlikely]] {
    if (sugov)
      explain_schedutil(d, *next);
    else if (const auto* px = dynamic_cast<const SchedPixelGovernor*>(d.governor.get()))
      explain_sched_pixel(d, *px, *next);
  }
  if (next) cpufreq_commit(d, *next);
}

void Kernel::cpufreq_commit(FreqDomain& d, uint64_t khz) {
  if (!d.sugov_kthread) {
    set_domain_freq(d, khz);  // cpufreq_driver_fast_switch()
    return;
  }
  // sugov_deferred_update(): one irq_work per switch under way. It runs
  // on this CPU as soon as the scheduler code that called the hook is
  // done (arm64's irq_work self-IPI).
  if (d.work_in_progress) return;
  d.work_in_progress = true;
  const int cpu = event_cpu_ >= 0 ? event_cpu_ : d.cpus.front();
  Rq& rq = *rqs_[static_cast<size_t>(cpu)];
  rq.sugov_irq_work_domains |= uint64_t{1} << static_cast<size_t>(&d - domains_.data());
  if (!rq.sugov_irq_work.armed()) rq.sugov_irq_work.arm(now());
}

void Kernel::sugov_irq_work(Rq& rq) {
  uint64_t pending = rq.sugov_irq_work_domains;
  rq.sugov_irq_work_domains = 0;
  while (pending) {
    const int i = __builtin_ctzll(pending);
    pending &= pending - 1;
    domains_[static_cast<size_t>(i)].sugov_kthread->queue_work(rq.cpu);
  }
}

}  // namespace schedlab
