// The fair class across CPUs, following kernel/sched/fair.c of Linux 6.12:
// wake-up placement (select_task_rq_fair: Energy Aware Scheduling while the
// system is not overutilized, else wake_affine + select_idle_sibling with
// capacity fitting on asymmetric systems), new-task placement (the fork
// slow path, sched_balance_find_dst_cpu()), and load balancing
// (sched_balance_newidle, the periodic sched_balance_rq from the tick, nohz
// idle balance kicked by busy CPUs, misfit migration and active balance).
//
// Simplifications, each deliberate:
//  - One sched domain spanning all CPUs with one CPU per group, which is
//    what Linux builds on the DynamIQ phones and RK3588 modelled here (every
//    CPU shares the L3; MC level, SD_ASYM_CPUCAPACITY when capacities differ).
//    So cpus_share_cache() is always true.
//  - wake_wide() with the LLC (every CPU here) as its factor; "current" is
//    the waking task, or for a timer or interrupt the task running on the
//    CPU it fires on. No SIS_UTIL scan limit, no SMT, no NUMA, no group
//    scheduling (cpu cgroups carry only clamps: uclamp_group.cc).
//  - uclamp (uclamp.h) as 6.12 applies it: util_fits_cpu() with the task's
//    or the rq's clamps in task_fits_cpu() (misfit), cpu_overutilized(),
//    select_idle_capacity(), select_idle_sibling() and EAS, whose energy
//    estimate takes the domain's frequency from the clamps too.
//  - The root-domain flags are 6.12's: rd->overutilized is latched (set
//    on wake-up enqueue and the tick, rewritten by each load-balance
//    statistics pass), and while it is clear an EAS system balances only
//    misfit tasks (sched_balance_find_src_group()'s "!is_rd_overutilized
//    && rd->pd" test); rd->overloaded is set when a CPU gets a second task
//    and rewritten by the same pass, and gates newidle balancing. (6.1,
//    6.6 and 6.18 behave the same: checked in their fair.c and sched.h.)
//  - Blocked load as in 6.12: a CPU whose tick stops while idle keeps
//    blocked PELT signals; busy CPUs' ticks send a stats kick every
//    LOAD_AVG_PERIOD (32 ms) to an idle CPU, which decays every idle CPU's
//    signals (and tells cpufreq); a CPU going newly idle does it itself
//    when due, and the periodic and newidle balances update their own CPU
//    first.
//  - NO_HZ idle balancing as in 6.12: CPUs whose tick stopped in idle form
//    nohz.idle_cpus_mask until their first busy tick; a busy CPU's tick
//    asks the first of them for a balance (nohz_balancer_kick(): two tasks
//    queued; a fair task on a CPU RT pressure cut; on asymmetric systems a misfit task; on
//    symmetric ones more than one busy CPU in the LLC) at most once per
//    nohz.next_balance; the kicked CPU balances each idle CPU whose own
//    interval is due, starting after itself, and moves nohz.next_balance to
//    the earliest of theirs. Intervals are jiffies (get_sd_balance_interval(),
//    a busy CPU's one jiffy short) of each CPU's sd->balance_interval, which
//    sched_balance_rq() tunes as 6.12 does: doubled, up to 2 x sd_weight
//    ms, by a periodic pass that finds the domain balanced (to 512 ms while
//    everything is pinned), back to sd_weight after an imbalance.
//    sched_idle_cpu() (only SCHED_IDLE tasks queued) counts as idle for
//    wake-up placement and as not busy for the balance interval.
//  - Capacity as 6.12 sees it: CFS decisions (task_fits_cpu(),
//    cpu_overutilized(), EAS spare capacity, wake_affine_weight(),
//    select_idle_capacity(), the balancer's group capacity) use
//    capacity_of(), what RT pressure leaves (scale_rt_capacity(); no IRQ,
//    DL or thermal pressure here), refreshed at each CPU's own balance;
//    PELT, schedutil and the energy model use the CPU's arch capacity.
//    RT tasks count in sum_nr_running as rq->nr_running does.
//  - The load balancer follows 6.12's sched_balance_find_src_group() for
//    one-CPU groups: group_classify() (overloaded, misfit, fully busy, has
//    spare), update_sd_pick_busiest() (in the domain's group order, from
//    the CPU after dst), calculate_imbalance() (misfit; task count for a
//    local group with spare capacity; load against the domain's average),
//    sched_balance_find_src_rq()'s one-task rules and detach_tasks() (load
//    above the imbalance is skipped; a newly idle CPU under
//    CONFIG_PREEMPTION takes one task), with sd->nr_balance_failed: each
//    failed periodic pass halves once more the load a task counts for, past
//    cache_nice_tries (1) cache-hot tasks may move, and two failures later
//    an imbalance in task counts is settled by active balance
//    (imbalanced_active_balance()). When every task of the busiest CPU is
//    pinned away from dst (LBF_ALL_PINNED) the pass looks again without
//    that CPU, as 6.12's "redo" does. A task whose dequeue is delayed
//    (DELAY_DEQUEUE: blocked, still queued) counts as 6.12.19 counts it,
//    in rq->nr_running and cfs.h_nr_running, and may be pulled like any
//    queued task: it moves still delayed, the dst's pick dequeues it for
//    good, and the dst looks for work again (pick_next_task_fair()'s "goto
//    idle"; see Kernel::schedule()). From 6.14 (the "6.18" version here)
//    the balancer counts only runnable fair tasks (cfs.h_nr_runnable) and
//    moves a delayed task only when it migrates load, while rq->nr_running
//    and newidle's "a task was enqueued meanwhile" still count it
//    (KernelVersionInfo::lb_counts_runnable). 6.18 also keeps a task that
//    is not eligible on its cfs_rq where it is while the domain has not
//    failed to balance and dst has fair tasks (task_is_ineligible_on_dst_cpu();
//    KernelVersionInfo::lb_ineligible_stays). In 6.14+ a task refused by
//    these tests does not clear LBF_ALL_PINNED (they come before the
//    affinity test in can_migrate_task()).
//    Active balance: the stopper preempts src's running task and moves the
//    coldest task that may run on dst (detach_one_task()), the preempted
//    one last.
#include <algorithm>
#include <climits>

#include "models/kernel/kernel.h"
#include "models/kernel/sched/fair_pelt.h"
#include "sim/log.h"

namespace schedlab {
namespace {
// rq->cfs_tasks as the model keeps it: every fair task queued at or below
// `cfs` (delayed ones too), found through the group entities, except the
// running one (each level's curr is out of its timeline; a curr group
// entity's own queue is walked). Callers order them by cfs_tasks_seq.
template <class F>
void for_each_queued_task(const CfsRq& cfs, F&& f) {
  for (SchedEntity* se : cfs.timeline) {
    if (se->task)
      f(*se->task);
    else
      for_each_queued_task(*se->my_q, f);
  }
  if (cfs.curr && cfs.curr->my_q) for_each_queued_task(*cfs.curr->my_q, f);
}
// sd->imbalance_pct of the MC level (sd_init(): 117 for non-SMT levels).
constexpr uint64_t kImbalancePct = 117;
// sysctl_sched_nr_migrate (SCHED_NR_MIGRATE_BREAK without PREEMPT_RT):
// detach_tasks() looks at no more tasks than this in one pass.
constexpr int kSchedNrMigrate = 32;
// busy_factor of sd_init(): a busy CPU balances 16x less often.
constexpr int64_t kBusyFactor = 16;
// MAX_PINNED_INTERVAL (fair.c): how far sd->balance_interval backs off (ms)
// while every task a pass could pull is pinned.
constexpr int64_t kMaxPinnedIntervalMs = 512;
// sd->cache_nice_tries of the MC level (sd_init(), SD_SHARE_LLC): after this
// many failed passes cache-hot tasks may move; two more, and an imbalance in
// task counts is settled by active balance.
constexpr int kCacheNiceTries = 1;

bool allowed(const Task& p, int cpu) { return p.cpus_allowed[static_cast<size_t>(cpu)]; }
}  // namespace

int64_t Kernel::balance_interval(const Rq& rq, bool busy) const {
  // get_sd_balance_interval(): sd->balance_interval (ms; see
  // sched_balance_rq() for its tuning), stretched by busy_factor on a busy
  // CPU; msecs_to_jiffies() rounds up; a busy CPU's interval loses a jiffy
  // (so domains' busy intervals are not multiples of each other); clamped
  // to [1, max_load_balance_interval = HZ * nr_cpus / 10].
  int64_t jiffies = msecs_to_jiffies(rq.sd_balance_interval_ms * (busy ? kBusyFactor : 1));
  if (busy) jiffies -= 1;
  return std::clamp<int64_t>(jiffies, 1, std::max<int64_t>(1, params_.hz * nr_cpus() / 10));
}

// cpu_util(cpu, p, dst_cpu, boost): CFS util of `cpu` as if p were placed
// on dst_cpu (util_avg, raised to runnable_avg when boosting, and util_est,
// capped at the CPU's capacity).
uint64_t Kernel::cpu_util(int cpu, const Task* p, int dst_cpu, bool boost) const {
  const Rq& rq = *rqs_[static_cast<size_t>(cpu)];
  uint64_t util = rq.cfs.avg.util_avg;
  if (boost && version_.runnable_boost) util = std::max<uint64_t>(util, rq.cfs.avg.runnable_avg);
  if (p && p->cpu == cpu && dst_cpu != cpu)
    util -= std::min<uint64_t>(util, p->se.avg.util_avg);
  else if (p && p->cpu != cpu && dst_cpu == cpu)
    util += p->se.avg.util_avg;
  uint64_t est = rq.cfs.avg.util_est.value();
  if (p && dst_cpu == cpu) est += p->se.avg.util_est.value();
  util = std::max(util, est);
  return std::min<uint64_t>(util, rq.capacity);
}

// find_energy_efficient_cpu(): per performance domain, the allowed CPU with
// the most spare capacity (and prev_cpu), compared by the energy the task
// adds; -1 when EAS cannot decide. With uclamp in use, fitting follows
// util_fits_cpu() with the rq's and the task's clamps (a CPU that only
// misses the boost, fits = -1, is a last resort ranked by capacity) and the
// domain's frequency follows the clamps as eenv_pd_max_util() has it. The
// estimate is 6.12's compute_energy(): RT utilization counts in both the
// frequency and the busy time (effective_cpu_util()), a runnable RT task
// prices the pd at its top OPP while uclamp is unused, and p adds the same
// busy time, task_util_est(p), wherever it goes. 6.1 and 6.6 price it in
// their own form (KernelVersionInfo::em_energy_v6_1).
int Kernel::find_energy_efficient_cpu(Task& p, int prev_cpu) {
  if (!energy_enabled_) return -1;  // no perf domains: rd->pd is NULL
  int target = prev_cpu;
  sync_entity_load_avg(p);
  const uint64_t p_util_min = uclamp_used_ ? uclamp_eff_value(p, kUclampMin) : 0;
  const uint64_t p_util_max = uclamp_used_ ? uclamp_eff_value(p, kUclampMax) : kUclampScale;
  if (task_util_est(p.se.avg) == 0 && p_util_min == 0) return target;
  // eenv_task_busy_time(): task_util_est(p) (no IRQ pressure here).
  const uint64_t task_busy = task_util_est(p.se.avg);
  const uint64_t kNone = UINT64_MAX;
  uint64_t best_delta = kNone, prev_delta = kNone;
  uint64_t best_actual_cap = 0, prev_actual_cap = 0;
  int best_energy_cpu = -1, best_fits = -1, prev_fits = -1;
  for (size_t pd : perf_domain_order_) {  // for (; pd; pd = pd->next)
    const FreqDomain& d = domains_[pd];
    // The pd's clamps start from the task's; as in 6.12, a CPU with runnable
    // tasks raises them for the CPUs after it in the pd too.
    uint64_t util_min = p_util_min, util_max = p_util_max;
    const uint64_t cpu_actual_cap = d.capacity;  // get_actual_cpu_capacity(): no thermal pressure here
    int64_t prev_spare = -1, max_spare = -1;
    int max_spare_cpu = -1, max_fits = -1;
    for (int cpu : d.cpus) {
      if (!allowed(p, cpu)) continue;
      const Rq& rq = *rqs_[cpu];
      uint64_t util = cpu_util(cpu, &p, cpu);
      uint64_t cap = capacity_of(rq);  // the spare capacity left to CFS
      if (uclamp_used_ && !rq.uclamp.is_idle()) {
        util_min = std::max<uint64_t>(rq.uclamp.get(kUclampMin), p_util_min);
        util_max = std::max<uint64_t>(rq.uclamp.get(kUclampMax), p_util_max);
      }
      const int fits = util_fits_cpu(util, util_min, util_max, rq);
      if (!fits) continue;
      int64_t spare = static_cast<int64_t>(cap - std::min(cap, util));
      if (cpu == prev_cpu) {
        prev_spare = spare;
        prev_fits = fits;
      } else if (fits > max_fits || (fits == max_fits && spare > max_spare)) {
        max_spare = spare;
        max_spare_cpu = cpu;
        max_fits = fits;
      }
    }
    if (max_spare_cpu < 0 && prev_spare < 0) continue;
    const size_t n = d.cpus.size();
    const uint64_t cpu_cap = d.em->cpu_capacity();
    const uint64_t pd_cap = cpu_cap * n;
    // effective_cpu_util() of CPU i of the pd with `util_cfs` as its CFS
    // util: RT utilization added, and (min, max) the performance floor and
    // cap (the DL bandwidth or the rq's clamps; the whole capacity while an
    // RT task is runnable and uclamp is unused).
    auto inputs = [&](size_t i, uint64_t util_cfs) {
      const Rq& rq = *rqs_[d.cpus[i]];
      CpuUtil u;
      u.util_cfs = util_cfs;
      u.util_rt = rq.avg_rt.util_avg;
      u.rt_runnable = rq.rt.rt_nr_running > 0 && !rq.rt.rt_throttled;
      u.bw_dl = cpu_bw_dl(rq);
      u.uclamp_min = rq.uclamp.get(kUclampMin);
      u.uclamp_max = rq.uclamp.get(kUclampMax);
      return u;
    };
    auto effective = [&](size_t i, uint64_t util_cfs, uint64_t* lo, uint64_t* hi) {
      return effective_cpu_util(inputs(i, util_cfs), rqs_[d.cpus[i]]->capacity, uclamp_used_, lo, hi);
    };
    // eenv_pd_busy_time(): the pd's busy time without p, once per pd.
    uint64_t pd_busy = 0;
    for (size_t i = 0; i < n; ++i) pd_busy += effective(i, cpu_util(d.cpus[i], &p, -1), nullptr, nullptr);
    pd_busy = std::min(pd_busy, pd_cap);
    // compute_energy(): the frequency from eenv_pd_max_util() (each CPU's
    // boosted util as if p ran on dst, with the clamps: each rq's, the
    // task's on dst, its max alone when dst's rq has no runnable task),
    // the busy time from the pd's plus p's task_util_est()
    // (eenv_task_busy_time(): the same for every candidate CPU).
    auto energy_with = [&](int dst) {
      uint64_t max_util = 0;
      const uint64_t busy = dst >= 0 ? std::min(pd_cap, pd_busy + task_busy) : pd_busy;
      if (version_.em_energy_v6_1) {
        // 6.1/6.6: each CPU's effective_cpu_util(FREQUENCY_UTIL, p on dst):
        // clamped (uclamp_rq_util_with(): on dst p's clamps too, alone when
        // dst's rq is idle), no headroom; em_cpu_energy() adds it.
        for (size_t i = 0; i < n; ++i) {
          const Rq& rq = *rqs_[d.cpus[i]];
          CpuUtil u = inputs(i, cpu_util(d.cpus[i], &p, dst, true));
          if (uclamp_used_ && d.cpus[i] == dst) {
            const bool idle = rq.uclamp.is_idle();
            u.uclamp_min = idle ? p_util_min : std::max<uint64_t>(u.uclamp_min, p_util_min);
            u.uclamp_max = idle ? p_util_max : std::max<uint64_t>(u.uclamp_max, p_util_max);
          }
          max_util = std::max(max_util, effective_cpu_util_pre_6_8(u, rq.capacity, uclamp_used_));
        }
        return d.em->cpu_energy_v6_1(std::min(max_util, cpu_cap), busy, cpu_cap);
      }
      for (size_t i = 0; i < n; ++i) {
        const Rq& rq = *rqs_[d.cpus[i]];
        uint64_t lo = 0, hi = 0;
        const uint64_t eff = effective(i, cpu_util(d.cpus[i], &p, dst, true), &lo, &hi);
        if (uclamp_used_ && d.cpus[i] == dst) {
          lo = std::max(lo, p_util_min);
          hi = rq.uclamp.is_idle() ? p_util_max : std::max(hi, p_util_max);
        }
        max_util = std::max(max_util, sugov_effective_cpu_perf(eff, lo, hi));
      }
      return d.em->cpu_energy(std::min(max_util, cpu_cap), busy, cpu_cap);
    };
    uint64_t base = energy_with(-1);
    if (prev_spare > -1) {
      uint64_t e = energy_with(prev_cpu);
      if (e < base) return target;
      prev_delta = e - base;
      prev_actual_cap = cpu_actual_cap;
      best_delta = std::min(best_delta, prev_delta);
    }
    if (max_spare_cpu >= 0 && max_spare > prev_spare) {
      if (max_fits < best_fits) continue;  // the best so far fits better
      // Neither fits the boost, and the best so far has more capacity.
      if (max_fits < 0 && cpu_actual_cap <= best_actual_cap) continue;
      uint64_t e = energy_with(max_spare_cpu);
      if (e < base) return target;
      uint64_t cur = e - base;
      if (max_fits > 0 && best_fits > 0 && cur >= best_delta) continue;
      best_delta = cur;
      best_energy_cpu = max_spare_cpu;
      best_fits = max_fits;
      best_actual_cap = cpu_actual_cap;
    }
  }
  if (best_energy_cpu >= 0 && (best_fits > prev_fits || (best_fits > 0 && best_delta < prev_delta) ||
                               (best_fits < 0 && best_actual_cap > prev_actual_cap)))
    target = best_energy_cpu;
  SL_DEBUG("{:.6f} eas {}-{} util {}: prev cpu{} -> cpu{}", now().to_s(), p.comm, p.pid, task_util_est(p.se.avg),
           prev_cpu, target);
  return target;
}

// wake_affine(): WA_IDLE then WA_WEIGHT, between the waker's and the
// wakee's previous CPU.
int Kernel::wake_affine(Task& p, int this_cpu, int prev_cpu, bool sync) {
  // wake_affine_idle()
  if (cpu_idle(this_cpu)) {
    note_why(cpu_idle(prev_cpu) ? "WA_IDLE: both idle: prev" : "WA_IDLE: this CPU is idle");
    return cpu_idle(prev_cpu) ? prev_cpu : this_cpu;
  }
  // 6.18 leaves the waker CPU's delayed tasks out of the count.
  const Rq& this_rq = *rqs_[this_cpu];
  const int delayed = version_.wake_affine_sync_skips_delayed ? this_rq.cfs.h_nr_delayed : 0;
  if (sync && this_rq.nr_running - delayed == 1) {
    note_why("WA_IDLE: a sync wake-up, the waker alone on this CPU");
    return this_cpu;
  }
  if (cpu_idle(prev_cpu)) {
    note_why("WA_IDLE: prev is idle");
    return prev_cpu;
  }
  note_why("WA_WEIGHT: the loads with the task moved");
  // wake_affine_weight() (signed arithmetic, as the kernel's s64): the
  // loads with p moved, each scaled by the other CPU's capacity, prev's
  // biased by half the imbalance margin (WA_BIAS). A sync wake-up discounts
  // the waker, and goes to this CPU outright if the waker's load is above
  // the CPU's; a tie then goes to this CPU too.
  const Rq& t = *rqs_[this_cpu];
  const Rq& pr = *rqs_[prev_cpu];
  int64_t this_eff = static_cast<int64_t>(t.cfs.avg.load_avg);
  if (sync) {
    const int64_t current_load = static_cast<int64_t>(task_h_load(*t.curr));
    if (current_load > this_eff) return this_cpu;
    this_eff -= current_load;
  }
  const int64_t task_load = static_cast<int64_t>(task_h_load(p));
  this_eff += task_load;
  this_eff *= 100;
  this_eff *= static_cast<int64_t>(capacity_of(pr));
  int64_t prev_eff = static_cast<int64_t>(pr.cfs.avg.load_avg) - task_load;
  prev_eff *= static_cast<int64_t>(100 + (kImbalancePct - 100) / 2);
  prev_eff *= static_cast<int64_t>(capacity_of(t));
  if (sync) prev_eff += 1;
  return this_eff < prev_eff ? this_cpu : prev_cpu;
}

// select_idle_capacity(): on asymmetric systems, the first idle CPU from
// target on that fits the task (util_fits_cpu() > 0), else the idle one
// that fits best (missing only the boost before not fitting), with the most
// capacity among equals.
int Kernel::select_idle_capacity(Task& p, int target) {
  const uint64_t task_util = task_util_est(p.se.avg);
  const uint64_t util_min = uclamp_eff_value(p, kUclampMin);
  const uint64_t util_max = uclamp_eff_value(p, kUclampMax);
  int best = -1, best_fits = 0;
  uint64_t best_cap = 0;
  int n = nr_cpus();
  for (int i = 0, cpu = target; i < n; ++i, cpu = cpu + 1 == n ? 0 : cpu + 1) {  // (target + i) % n
    if (!allowed(p, cpu) || (!cpu_idle(cpu) && !sched_idle_cpu(cpu))) continue;
    const Rq& rq = *rqs_[cpu];
    uint64_t cap = capacity_of(rq);
    const int fits = util_fits_cpu(task_util, util_min, util_max, rq);
    if (fits > 0) return cpu;
    if (fits < 0) cap = rq.capacity;  // get_actual_cpu_capacity()
    if (fits < best_fits || (fits == best_fits && cap > best_cap)) {
      best_cap = cap;
      best = cpu;
      best_fits = fits;
    }
  }
  return best;
}

// sync_entity_load_avg() (fair.c): a sleeping task's signals decayed to the
// last update of its cfs_rq (cfs_rq_of(se): its group's on its CPU), so
// that placement weighs what the task still contributes there rather than
// what it had when it went to sleep.
void Kernel::sync_entity_load_avg(Task& p) {
  if (p.se.avg.last_update_time == 0) return;  // not attached: no waking fair task is
  update_load_avg_blocked_se(p.se.cfs_rq->avg.last_update_time, p.se.avg, p.se.weight);
}

// select_idle_sibling(): target if idle (and fitting), else prev, else prev
// for a per-CPU kthread's wakee (`kthread_cpu`: see select_task_rq_fair()),
// else the recently used CPU, else (asymmetric capacities)
// select_idle_capacity(), else the first idle CPU of the LLC after target.
int Kernel::select_idle_sibling(Task& p, int prev, int target, int kthread_cpu) {
  if (asym_capacity_) sync_entity_load_avg(p);  // the task's util is checked against capacities
  const uint64_t task_util = task_util_est(p.se.avg);
  const uint64_t util_min = uclamp_eff_value(p, kUclampMin);
  const uint64_t util_max = uclamp_eff_value(p, kUclampMax);
  // asym_fits_cpu(): on asymmetric systems the task must fit fully.
  auto fits = [&](int cpu) { return !asym_capacity_ || util_fits_cpu(task_util, util_min, util_max, *rqs_[cpu]) > 0; };
  // Neither target nor prev is checked against p's mask, as in 6.12: target
  // is, and prev may have left it after an affinity change while p slept
  // (select_task_rq() then falls back).
  // A CPU running only SCHED_IDLE tasks counts as idle (sched_idle_cpu()).
  auto idle = [&](int cpu) { return cpu_idle(cpu) || sched_idle_cpu(cpu); };
  if (idle(target) && fits(target)) {
    note_why("select_idle_sibling: the target is idle (and fits)");
    return target;
  }
  if (prev != target && idle(prev) && fits(prev)) {
    note_why("select_idle_sibling: prev is idle (and fits)");
    return prev;
  }
  // A per-CPU kthread waking a task that last ran on the kthread's CPU,
  // with nothing else queued there, stacks it there: "the wakee queued work
  // for the per-cpu kthread that is now complete and the wakeup is
  // essentially a sync wakeup" (IO completions; a bound kworker's work).
  if (kthread_cpu == prev && fits(prev)) {
    note_why("select_idle_sibling: woken by the per-CPU kthread of prev: stacked there");
    return prev;
  }
  int recent = p.recent_used_cpu;
  p.recent_used_cpu = prev;
  if (recent != prev && recent != target && allowed(p, recent) && idle(recent) && fits(recent)) {
    note_why("select_idle_sibling: recent_used_cpu is idle (and fits)");
    return recent;
  }
  if (asym_capacity_) {
    int i = select_idle_capacity(p, target);
    if (sim_log_debug.load(std::memory_order_relaxed) || count_decisions_) [[unlikely]] {  // the fit test again: log, --why
      if (i < 0)
        note_why("select_idle_capacity: no idle CPU: the target");
      else if (util_fits_cpu(task_util, util_min, util_max, *rqs_[i]) > 0)
        note_why("select_idle_capacity: the first idle CPU from the target that fits");
      else
        note_why("select_idle_capacity: no idle CPU fits: the idle one closest to fitting");
    }
    return i >= 0 ? i : target;
  }
  int n = nr_cpus();
  for (int i = 1, cpu = target + 1 == n ? 0 : target + 1; i <= n; ++i, cpu = cpu + 1 == n ? 0 : cpu + 1)
    if (allowed(p, cpu) && idle(cpu)) {  // cpu = (target + i) % n
      note_why("select_idle_cpu: the first idle CPU after the target");
      return cpu;
    }
  note_why("select_idle_sibling: no idle CPU: the target");
  return target;
}

// record_wakee(): the waker's flips count switches between wakees, halved
// once a second ("only decay a single time").
void Kernel::record_wakee(Task& current, const Task& p) {
  if (jiffies() > current.wakee_flip_decay_ts + params_.hz) {
    current.wakee_flips >>= 1;
    current.wakee_flip_decay_ts = jiffies();
  }
  if (current.last_wakee != &p) {
    current.last_wakee = &p;
    ++current.wakee_flips;
  }
}

// wake_wide(): a waker and wakee that both switch partners often (one
// waking many, the other flipping at least llc_size times as often) are
// spread rather than pulled together.
bool Kernel::wake_wide(const Task& current, const Task& p) const {
  uint32_t master = current.wakee_flips, slave = p.wakee_flips;
  const uint32_t factor = static_cast<uint32_t>(nr_cpus());  // sd_llc_size: one LLC
  if (master < slave) std::swap(master, slave);
  return !(slave < factor || master < slave * factor);
}

// select_task_rq_fair().
int Kernel::select_task_rq_fair(Task& p, int prev_cpu, int wake_flags) {
  if (nr_cpus() == 1) return 0;
  int cpu = event_cpu_ >= 0 ? event_cpu_ : prev_cpu;  // smp_processor_id(): the waker's CPU
  // A new task takes the slow path from the CPU it was forked on.
  if (wake_flags & kWfFork) {
    note_why("fork: sched_balance_find_dst_cpu(), the idlest CPU");
    return sched_balance_find_dst_cpu(p, cpu);
  }
  int new_cpu = prev_cpu;
  int kthread_cpu = -1;  // the waker's CPU if it is a per-CPU kthread
  if (wake_flags & kWfTtwu) {
    // current: the waking task, else (a timer, an interrupt) whatever runs
    // on the CPU the wake-up runs on.
    const Task* waker = p.last_waker;
    Task& current = waker && !waker->is_idle_task ? *tasks_[waker->index] : *rqs_[cpu]->curr;
    record_wakee(current, p);
    if (!is_rd_overutilized()) {
      int eas = find_energy_efficient_cpu(p, prev_cpu);
      if (eas >= 0) {
        note_why("EAS: find_energy_efficient_cpu() (the root domain is not overutilized)");
        return eas;
      }
    }
    const bool want_affine = !wake_wide(current, p) && allowed(p, cpu);
    if (want_affine && cpu != prev_cpu) {
      new_cpu = wake_affine(p, cpu, prev_cpu, wake_flags & kWfSync);
      SL_DEBUG("{:.6f} wake_affine {}-{}: this cpu{}, prev cpu{} -> target cpu{} ({})", now().to_s(), p.comm, p.pid,
               cpu, prev_cpu, new_cpu, why_);
    }
    // is_per_cpu_kthread(current) && in_task() && this_rq()->nr_running <= 1:
    // a task waker (not a timer or an interrupt), a kernel thread allowed on
    // one CPU, with at most itself on its rq.
    if (waker && !waker->is_idle_task && waker->kernel_thread && waker->nr_cpus_allowed == 1 &&
        rqs_[cpu]->curr == waker && rqs_[cpu]->nr_running <= 1)
      kthread_cpu = cpu;
  }
  return select_idle_sibling(p, prev_cpu, new_cpu, kthread_cpu);
}

// ------------------------------------------------------------ balancing

// can_migrate_task()'s tests before the affinity test (kernel.h says which
// versions have them).
bool Kernel::lb_may_consider(const Task& p, int dst_cpu, bool migrate_load) const {
  if (version_.lb_counts_runnable && p.se.sched_delayed && !migrate_load) return false;
  // task_is_ineligible_on_dst_cpu(), skipped once the domain failed a pass:
  // dst's queue is the task's group's cfs_rq there (tg->cfs_rq[dst]).
  const Rq& dst = *rqs_[static_cast<size_t>(dst_cpu)];
  if (version_.lb_ineligible_stays && dst.sd_nr_balance_failed == 0 && features_(SchedFeat::kPlaceLag) &&
      task_group_cfs_rq(p.task_group, dst_cpu).nr_running > 0 && p.sched_class == SchedClassId::kFair &&
      !fair_entity_eligible(p))
    return false;
  return true;
}

// can_migrate_task(): those tests, then allowed on dst, not running, and
// not cache hot unless told to ignore it. A delayed task may go (6.12 has
// no sched_delayed test; 6.14+ lets it go only with load). task_hot(): a
// buddy of its cfs_rq (CACHE_HOT_BUDDY: the next buddy, and before 6.6 the
// last one) while dst has tasks of its own, or a task that ran within
// sysctl_sched_migration_cost; never a SCHED_IDLE task.
bool Kernel::can_migrate_task(const Task& p, int dst_cpu, bool ignore_hot, bool migrate_load) const {
  if (!lb_may_consider(p, dst_cpu, migrate_load)) return false;
  if (!allowed(p, dst_cpu) || p.on_cpu || !p.on_rq) return false;
  if (p.sched_class != SchedClassId::kFair) return false;
  if (ignore_hot) return true;
  if (p.policy == Policy::kIdle) return true;  // task_hot(): a SCHED_IDLE task is never cache hot
  const CfsRq& cfs = *p.se.cfs_rq;  // cfs_rq_of(&p->se)
  if (features_(SchedFeat::kCacheHotBuddy) && rqs_[static_cast<size_t>(dst_cpu)]->nr_running > 0 &&
      (cfs.next == &p.se || cfs.last == &p.se))
    return false;
  return now().count() - p.se.exec_start >= kMigrationCostNs;
}

namespace {
// The group types of update_sg_lb_stats()/group_classify(), lowest first.
enum class GroupType { kHasSpare, kFullyBusy, kMisfit, kOverloaded };
// struct sg_lb_stats of a one-CPU group.
struct CpuStats {
  GroupType type = GroupType::kHasSpare;
  uint64_t load = 0;           // group_load: cfs load_avg
  uint64_t util = 0;           // group_util: cpu_util_cfs()
  uint64_t runnable = 0;       // group_runnable: cfs runnable_avg
  uint64_t capacity = 1;       // group_capacity: capacity_of()
  uint64_t avg_load = 0;       // computed for overloaded groups only, as update_sg_lb_stats() does
  uint64_t misfit_load = 0;    // group_misfit_task_load
  int nr = 0;                  // sum_nr_running: tasks of every class (rq->nr_running)
  int h_nr = 0;                // sum_h_nr_running: fair tasks
  unsigned idle_cpus = 0;
};

// capacity_greater() (fair.c): more than about 5% more capacity.
bool capacity_greater(uint64_t a, uint64_t b) { return a * 1024 > b * 1078; }

// group_classify() of a one-CPU group (sg_imbalanced(), asym packing and SMT
// balance never apply here: there is no parent domain, no SD_ASYM_PACKING,
// no SMT): group_is_overloaded() (more tasks than CPUs and util or runnable
// past imbalance_pct), then misfit, then !group_has_capacity().
GroupType group_classify(const CpuStats& s) {
  const bool util_over = s.capacity * 100 < s.util * kImbalancePct;
  const bool runnable_over = s.capacity * kImbalancePct < s.runnable * 100;
  if (s.nr > 1 && (util_over || runnable_over)) return GroupType::kOverloaded;
  if (s.misfit_load > 0) return GroupType::kMisfit;
  // not (capacity * 100 > util * imbalance_pct)
  if (s.nr >= 1 && (runnable_over || util_over || s.capacity * 100 == s.util * kImbalancePct))
    return GroupType::kFullyBusy;
  return GroupType::kHasSpare;
}
}  // namespace

// check_cpu_capacity(): RT pressure took more than imbalance_pct's margin
// of the CPU's capacity from CFS.
bool Kernel::check_cpu_capacity(const Rq& rq) const {
  return uint64_t{rq.cpu_capacity} * kImbalancePct < uint64_t{rq.capacity} * 100;
}

// update_group_capacity() of a one-CPU group (update_cpu_capacity() with
// scale_rt_capacity()): the capacity RT leaves to CFS. Simplification: no
// IRQ, deadline or thermal (HW) pressure is modelled, so only avg_rt counts.
void Kernel::update_group_capacity(Rq& rq) {
  rq.capacity_next_update = jiffies() + balance_interval(rq, false);  // sd->balance_interval, clamped
  const uint64_t used = rq.avg_rt.util_avg;
  rq.cpu_capacity = used >= rq.capacity ? 1 : static_cast<uint32_t>(rq.capacity - used);
}

// The slow path of select_task_rq_fair() for a new task (WF_FORK:
// sched_balance_find_dst_cpu() at the SD_BALANCE_FORK domain, 6.12) on one
// domain of one-CPU groups. sched_balance_find_dst_group() gathers
// update_sg_wakeup_stats() of every CPU p may use, in the domain's order
// from this_cpu on, and keeps the idlest CPU other than this_cpu
// (update_pick_idlest(): the lowest group type; then, among has-spare
// groups, the most idle CPUs and the lowest util; among busy ones the
// lowest avg_load; among misfit ones the biggest capacity; the first one on
// a tie). p goes there only if this_cpu is busier: a higher group type,
// fewer idle CPUs, or (fully busy, overloaded) avg_load past both of
// imbalance_pct's margins. A one-CPU group is its own
// sched_balance_find_dst_group_cpu(), and no child domain follows, so one
// pass decides. The parent runs on this_cpu while it forks (6.12's
// idle_cpu_without() sees it as rq->curr): it counts as one more running
// task there, with no PELT signals of its own (an assumption: what the
// scenario's parent runs is not modelled).
int Kernel::sched_balance_find_dst_cpu(Task& p, int this_cpu) {
  const int n = nr_cpus();
  auto wakeup_stats = [&](int cpu) {
    const Rq& rq = *rqs_[cpu];
    // A new task is queued nowhere and has no PELT contribution yet
    // (last_update_time 0): cpu_{load,util,runnable}_without() are the
    // CPU's own cpu_load(), cpu_util() and cpu_runnable(), and
    // task_running_on_cpu() is 0.
    CpuStats s;
    s.load = rq.cfs.avg.load_avg;
    s.util = cpu_util(cpu, nullptr, -1, false);
    s.runnable = rq.cfs.avg.runnable_avg;
    s.nr = static_cast<int>(rq.nr_running) + (cpu == this_cpu ? 1 : 0);  // every class, delayed tasks, the parent
    s.capacity = capacity_of(rq);  // sgc->capacity
    // idle_cpu_without(): nothing queued, idle, no wake-up on its way.
    if (s.nr == 0 && cpu_idle(cpu)) s.idle_cpus = 1;
    // The task is assumed not to fit until a CPU of the group fits it.
    if (asym_capacity_ && !task_fits_cpu(p, rq)) s.misfit_load = 1;
    s.type = group_classify(s);
    if (s.type == GroupType::kFullyBusy || s.type == GroupType::kOverloaded) s.avg_load = s.load * 1024 / s.capacity;
    return s;
  };
  int idlest = -1;
  CpuStats is;  // idlest_sgs starts overloaded with avg_load UINT_MAX
  is.type = GroupType::kOverloaded;
  is.avg_load = UINT_MAX;
  bool have_local = false;
  CpuStats ls;
  for (int i = 0, c = this_cpu; i < n; ++i, c = c + 1 == n ? 0 : c + 1) {
    if (!allowed(p, c)) continue;
    CpuStats s = wakeup_stats(c);
    if (c == this_cpu) {
      have_local = true;
      ls = s;
      continue;
    }
    bool pick;  // update_pick_idlest()
    if (s.type != is.type) {
      pick = s.type < is.type;
    } else {
      switch (s.type) {
        case GroupType::kOverloaded:
        case GroupType::kFullyBusy: pick = s.avg_load < is.avg_load; break;
        case GroupType::kMisfit: pick = s.capacity > is.capacity; break;  // sgc->max_capacity
        default: pick = s.idle_cpus > is.idle_cpus || (s.idle_cpus == is.idle_cpus && s.util < is.util); break;
      }
    }
    if (pick) {
      idlest = c;
      is = s;
    }
  }
  if (idlest < 0) return this_cpu;     // no idlest group to push to
  if (!have_local) return idlest;      // this_cpu is not allowed
  if (ls.type != is.type) return ls.type > is.type ? idlest : this_cpu;
  switch (ls.type) {
    case GroupType::kOverloaded:
    case GroupType::kFullyBusy: {
      // The imbalance allowed: NICE_0_LOAD scaled down, times
      // (imbalance_pct - 100) %.
      const uint64_t imbalance = 1024 * (kImbalancePct - 100) / 100;
      if (is.avg_load >= ls.avg_load + imbalance) return this_cpu;
      if (100 * ls.avg_load <= kImbalancePct * is.avg_load) return this_cpu;
      return idlest;
    }
    case GroupType::kMisfit: return is.capacity > ls.capacity ? idlest : this_cpu;
    default: return ls.idle_cpus >= is.idle_cpus ? this_cpu : idlest;
  }
}

// sched_balance_rq(): one pass of the load balancer for dst with its
// sched_balance_find_src_group() (update_sd_lb_stats(),
// update_sd_pick_busiest(), calculate_imbalance()),
// sched_balance_find_src_rq() and detach_tasks(), for one-CPU groups; the
// LBF_ALL_PINNED redo without the busiest CPU; and the tuning of dst's
// sd->balance_interval on the way out. Returns the number of tasks moved.
int Kernel::sched_balance_rq(Rq& dst, CpuIdleType idle) {
  int n = nr_cpus();
  if (n == 1) return 0;
  const bool dst_idle = idle != CpuIdleType::kNotIdle;
  // update_sd_lb_stats(): the local group's capacity first (a newidle pass
  // only when its sgc->next_update is due).
  if (idle != CpuIdleType::kNewlyIdle || jiffies() >= dst.capacity_next_update) update_group_capacity(dst);
  // update_sg_lb_stats() for a one-CPU group: the counts and sums first
  // (every CPU needs them for the domain's totals and flags), then
  // group_classify() (only for a CPU with a fair task to pull, and dst).
  auto counts_of = [&](const Rq& rq, bool local_group) {
    CpuStats s;
    s.h_nr = lb_h_nr_running(rq);
    s.nr = rq.nr_running;  // every class
    s.load = rq.cfs.avg.load_avg;
    s.capacity = capacity_of(rq);
    if (rq.nr_running == 0 && cpu_idle(rq.cpu)) {
      s.idle_cpus = 1;
    } else if (!local_group) {  // the local group's own misfit never counts
      if (asym_capacity_)
        s.misfit_load = rq.misfit_task_load;
      else if (dst_idle && s.h_nr == 1 && check_cpu_capacity(rq))
        s.misfit_load = s.load;  // sched_reduced_capacity(): a lone fair task on a pressured CPU
    }
    return s;
  };
  auto classify = [&](const Rq& rq, CpuStats& s) {
    s.util = cpu_util_cfs(rq);
    s.runnable = rq.cfs.avg.runnable_avg;
    s.type = group_classify(s);
    if (s.type == GroupType::kOverloaded) s.avg_load = s.load * 1024 / s.capacity;
  };
  enum class Migrate { kLoad, kTask, kMisfit };
  Migrate type = Migrate::kLoad;  // env->migration_type: lb_env starts zeroed (migrate_load)
  bool all_pinned = false;        // env->flags & LBF_ALL_PINNED
  int excluded = 0;               // CPUs taken out of env->cpus (lb_excluded_)
  // A pass that pulls nothing and finds nothing to pull: "out_balanced",
  // "out_all_pinned" and "out_one_pinned". Neither a newly idle pass (it
  // disregards intervals) nor a misfit one (no sign of a busy system)
  // backs off; a periodic one doubles dst's sd->balance_interval up to
  // max_interval (2 x sd_weight), or to MAX_PINNED_INTERVAL when every
  // task it could have pulled was pinned.
  // "out_balanced" and "out_all_pinned" also clear sd->nr_balance_failed.
  // `why` names the test that ended the pass (for --log debug: why an
  // idle CPU did not pull).
  int busiest = -1;
  const char* const idle_name =
      idle == CpuIdleType::kNewlyIdle ? "newly idle" : idle == CpuIdleType::kIdle ? "idle" : "busy";
  // --why: the pass's outcome, counted for dst.
  // The reason is formatted only when counting: the hot loop does not allocate.
  auto count_pass = [&](std::string_view outcome, std::string_view detail, std::string_view detail2 = {}) {
    if (count_decisions_) [[unlikely]]
      count_decision(Decision::kBalance, cpu_names_[static_cast<size_t>(dst.cpu)],
                     intern_reason(fmt::format("{}: {}{}{}", idle_name, outcome, detail, detail2)));
  };
  auto balanced = [&](bool one_pinned, const char* why) {
    SL_DEBUG("{:.6f} balance cpu{} ({}): nothing moved, {}{}", now().to_s(), dst.cpu, idle_name, why,
             busiest >= 0 ? fmt::format(" (busiest cpu{})", busiest) : std::string());
    count_pass("nothing moved: ", why);
    if (excluded) std::fill(lb_excluded_.begin(), lb_excluded_.end(), 0);
    if (!one_pinned) dst.sd_nr_balance_failed = 0;
    // out_one_pinned: 6.12 never backs off for a misfit pass; 6.1/6.6 do.
    if (idle == CpuIdleType::kNewlyIdle || (type == Migrate::kMisfit && version_.lb_misfit_not_a_failure)) return 0;
    int64_t& interval = dst.sd_balance_interval_ms;
    if ((all_pinned && interval < kMaxPinnedIntervalMs) || interval < 2 * int64_t{n}) interval *= 2;
    return 0;
  };
  for (;;) {  // redo:
    CpuStats local = counts_of(dst, true);
    classify(dst, local);
    uint64_t total_load = local.load, total_capacity = local.capacity;
    // update_sg_lb_stats() also gathers the root domain's flags over every
    // CPU of env->cpus, the local one included: overloaded (more than one
    // task, or a misfit task on a busy remote CPU of an asymmetric system)
    // and overutilized.
    bool sg_overloaded = dst.nr_running > 1;
    bool sg_overutilized = cpu_overutilized(dst);
    busiest = -1;
    CpuStats bs;              // init_sd_lb_stats(): has_spare, no task,
    bs.idle_cpus = UINT_MAX;  // and more idle CPUs than any group
    // The domain's groups from the local one on, in CPU order.
    for (int i = 1, c = dst.cpu + 1 == n ? 0 : dst.cpu + 1; i < n; ++i, c = c + 1 == n ? 0 : c + 1) {
      const Rq& rq = *rqs_[c];
      if (excluded && lb_excluded_[static_cast<size_t>(c)]) {
        total_capacity += capacity_of(rq);  // sgc->capacity still counts; no CPU is summed
        continue;
      }
      CpuStats s = counts_of(rq, false);
      total_load += s.load;
      total_capacity += s.capacity;
      // Each flag is tested until some CPU sets it.
      if (!sg_overloaded) sg_overloaded = rq.nr_running > 1 || (asym_capacity_ && s.misfit_load > 0);
      if (!sg_overutilized) sg_overutilized = cpu_overutilized(rq);
      // update_sd_pick_busiest().
      if (s.h_nr == 0) continue;  // nothing to pull
      classify(rq, s);
      // A misfit task moves only to a clearly bigger CPU with spare capacity.
      if (asym_capacity_ && s.type == GroupType::kMisfit &&
          (!capacity_greater(local.capacity, s.capacity) || local.type != GroupType::kHasSpare))
        continue;
      bool better;
      if (s.type != bs.type) {
        better = s.type > bs.type;  // a higher group type wins outright
      } else {
        switch (s.type) {
          case GroupType::kOverloaded: better = s.avg_load > bs.avg_load; break;
          case GroupType::kMisfit:  // 6.1/6.6: a tie goes to the later group
            better = version_.lb_misfit_tie_later_wins ? s.misfit_load >= bs.misfit_load : s.misfit_load > bs.misfit_load;
            break;
          case GroupType::kFullyBusy: better = true; break;  // avg_load is 0 for both: the later group
          default: better = s.idle_cpus < bs.idle_cpus || (s.idle_cpus == bs.idle_cpus && s.nr > bs.nr); break;
        }
        // Not from a clearly bigger CPU with at most one task per CPU.
        if (better && asym_capacity_ && s.type <= GroupType::kFullyBusy && capacity_greater(s.capacity, local.capacity))
          better = false;
      }
      if (better) {
        busiest = c;
        bs = s;
      }
    }
    // update_sd_lb_stats() at the root domain: both flags are rewritten.
    rd_overloaded_ = sg_overloaded;
    rd_overutilized_ = sg_overutilized;
    if (busiest < 0) return balanced(false, "no CPU with a task to pull");
    // sched_balance_find_src_group().
    const bool misfit = bs.type == GroupType::kMisfit;
    const uint64_t sds_avg_load = total_load * 1024 / total_capacity;  // sds->avg_load
    if (!misfit) {
      // An EAS system that is not overutilized leaves placement to EAS.
      if (!is_rd_overutilized()) return balanced(false, "not overutilized: placement is left to EAS");
      if (local.type > bs.type) return balanced(false, "the busiest group is of a lower type than the local one");
      if (local.type == GroupType::kOverloaded) {
        if (local.avg_load >= bs.avg_load) return balanced(false, "local load at least the busiest's");
        if (local.avg_load >= sds_avg_load) return balanced(false, "local load at least the domain's average");
        if (100 * bs.avg_load <= kImbalancePct * local.avg_load)
          return balanced(false, "busiest load within imbalance_pct of the local one");
      }
      if (bs.type != GroupType::kOverloaded) {
        if (!dst_idle) return balanced(false, "busiest not overloaded and this CPU is busy");
        if (bs.h_nr == 1) return balanced(false, "busiest not overloaded with one task: nothing waiting");
      }
    }
    // calculate_imbalance().
    int64_t imbalance = 0;
    if (misfit && asym_capacity_) {
      type = Migrate::kMisfit;
      imbalance = 1;
    } else if (misfit) {
      // A lone fair task on a CPU with reduced capacity (symmetric systems):
      // move its load.
      type = Migrate::kLoad;
      imbalance = static_cast<int64_t>(bs.misfit_load);
    } else if (local.type == GroupType::kHasSpare) {
      // MC shares the LLC (no migrate_util); one CPU per group: even out the
      // number of tasks (sibling_imbalance(), 0 for a busy dst; 6.1 evens
      // them out for a busy dst too), halved.
      type = Migrate::kTask;
      imbalance = (dst_idle || version_.lb_busy_dst_evens_task_count) && bs.nr > 0 ? std::max(0, bs.nr - local.nr) : 0;
      imbalance >>= 1;
    } else {
      if (local.type < GroupType::kOverloaded) {
        local.avg_load = local.load * 1024 / local.capacity;
        if (local.avg_load >= bs.avg_load) return balanced(false, "local load at least the busiest's");
        if (local.avg_load >= sds_avg_load) return balanced(false, "local load at least the domain's average");
      }
      // Unsigned, as the kernel's unsigned long: a busiest below the average
      // wraps and the local term decides.
      type = Migrate::kLoad;
      imbalance = static_cast<int64_t>(std::min((bs.avg_load - sds_avg_load) * bs.capacity,
                                                (sds_avg_load - local.avg_load) * local.capacity) /
                                       1024);
    }
    if (imbalance <= 0) return balanced(false, "no imbalance");
    Rq& src = *rqs_[busiest];
    // sched_balance_find_src_rq() for the group's one CPU (a misfit group on
    // an asymmetric system passed the capacity test already).
    if (asym_capacity_ && !capacity_greater(local.capacity, bs.capacity) && bs.h_nr == 1)
      return balanced(false, "one task on a CPU not smaller than this one");
    if (type == Migrate::kLoad && bs.h_nr == 1 && bs.load > static_cast<uint64_t>(imbalance) &&
        !check_cpu_capacity(src))
      return balanced(false, "the busiest's one task outweighs the imbalance");
    // detach_tasks(): from the cold end of the task list (cfs_tasks' tail:
    // the task enqueued or picked least recently), while imbalance remains.
    // After failed passes (sd->nr_balance_failed) a task's load counts that
    // many halvings less, and beyond cache_nice_tries cache-hot tasks may go
    // too. A task skipped moves to the list's head. The detached tasks are
    // then attached in reverse (attach_tasks() takes env->tasks from its
    // head, where each detach put its task): the last detached is enqueued
    // first, so the first (the coldest) is placed with others already there.
    int moved = 0;
    // LBF_ALL_PINNED, set for each busiest CPU found; detach_tasks() (run
    // only when src has more than one task) clears it when some fair task
    // of src, running or queued (delayed ones too: they are on
    // cfs_tasks), passes can_migrate_task()'s earlier tests
    // (lb_may_consider()) and may run on dst.
    all_pinned = true;
    if (src.nr_running > 1) {
      const bool migrate_load = type == Migrate::kLoad;
      auto clears = [&](const Task& p) { return lb_may_consider(p, dst.cpu, migrate_load) && allowed(p, dst.cpu); };
      all_pinned = !(src.curr->sched_class == SchedClassId::kFair && !src.curr->is_idle_task && clears(*src.curr));
      for_each_queued_task(src.cfs, [&](const Task& t) {
        if (all_pinned && clears(t)) all_pinned = false;
      });
    }
    // The walk: src's fair tasks, tail of cfs_tasks first. The running
    // one is on the list too (the model keeps it out of the timeline):
    // can_migrate_task() refuses it, which moves it to the head.
    lb_walk_.clear();
    for_each_queued_task(src.cfs, [&](Task& t) { lb_walk_.push_back(&t); });
    if (src.curr->sched_class == SchedClassId::kFair && !src.curr->is_idle_task && src.curr->se.on_rq)
      lb_walk_.push_back(src.curr);
    std::sort(lb_walk_.begin(), lb_walk_.end(),
              [](const Task* a, const Task* b) { return a->se.cfs_tasks_seq < b->se.cfs_tasks_seq; });
    lb_detached_.clear();
    const bool preemption = params_.preempt == PreemptModel::kFull || params_.preempt == PreemptModel::kLazy;
    const int failed = dst.sd_nr_balance_failed;
    const bool ignore_hot = failed > kCacheNiceTries;
    const unsigned shift = static_cast<unsigned>(std::min(failed, 63));  // shr_bound()
    // env->loop_max = min(sysctl_sched_nr_migrate (32), busiest's
    // nr_running, RT tasks included): a refused task goes to the list's
    // head, where the walk may meet it again (the list rotates); the model
    // keeps the list in lb_walk_ from `front` on, head last.
    const int loop_max = std::min(kSchedNrMigrate, static_cast<int>(src.nr_running));
    size_t front = 0;
    for (int loop = 1; src.nr_running > 1 && !all_pinned && front < lb_walk_.size(); ++loop) {
      if (dst_idle && src.nr_running <= 1) break;  // don't steal all
      if (loop > loop_max) break;                  // more or less seen every task
      Task& p = *lb_walk_[front++];
      bool take = can_migrate_task(p, dst.cpu, ignore_hot, type == Migrate::kLoad);
      if (take && type == Migrate::kLoad) {
        const uint64_t load = std::max<uint64_t>(task_h_load(p), 1);
        take = (load >> shift) <= static_cast<uint64_t>(imbalance);
        if (take) imbalance -= static_cast<int64_t>(load);
      } else if (take && type == Migrate::kMisfit) {
        take = !task_fits_cpu(p, src);  // not a misfit task any more: skip it
        if (take) imbalance = 0;
      } else if (take) {
        --imbalance;
      }
      if (!take) {
        cfs_tasks_move_to_head(p);  // skipped: to the list's head
        lb_walk_.push_back(&p);
        continue;
      }
      SL_DEBUG("{:.6f} load balance: {}-{} cpu{} -> cpu{} ({})", now().to_s(), p.comm, p.pid, src.cpu, dst.cpu,
               type == Migrate::kMisfit ? "misfit" : type == Migrate::kLoad ? "load" : "tasks");
      detach_task(p, dst.cpu);
      lb_detached_.push_back(&p);
      ++moved;
      // CONFIG_PREEMPTION: a newly idle CPU takes one task and runs it.
      if ((preemption && idle == CpuIdleType::kNewlyIdle) || imbalance <= 0) break;
    }
    for (auto it = lb_detached_.rbegin(); it != lb_detached_.rend(); ++it) attach_task(**it);
    if (all_pinned && src.nr_running > 1) {
      // Every task of src is pinned away from dst: take src out of
      // env->cpus and look again while another CPU than dst is left.
      lb_excluded_[static_cast<size_t>(busiest)] = 1;
      if (++excluded < n - 1) continue;
      return balanced(false, "every task pinned away");  // out_all_pinned
    }
    bool active = false;
    const char* refused = "can_migrate_task() or the imbalance refused every task, ";  // --why, when nothing moved
    if (moved == 0) {
      // A failed pass counts, but not a newly idle one (too frequent) nor
      // (6.12) a misfit one (not about load).
      if (idle != CpuIdleType::kNewlyIdle && (type != Migrate::kMisfit || !version_.lb_misfit_not_a_failure))
        ++dst.sd_nr_balance_failed;
      // need_active_balance(): imbalanced_active_balance() (tasks to even
      // out, and more than cache_nice_tries + 2 failures), the only fair
      // task of a CPU whose capacity RT pressure reduced when dst (idle)
      // has clearly more left, or a misfit task. The stopper then pushes
      // src's running task: not one that has just blocked (state no
      // longer TASK_RUNNING) and waits for src's __schedule() at the end
      // of this instant (the kernel's stopper would find it dequeued).
      const bool imbalanced = type == Migrate::kTask && dst.sd_nr_balance_failed > kCacheNiceTries + 2;
      const bool reduced_capacity = dst_idle && bs.h_nr == 1 && check_cpu_capacity(src) &&
                                    bs.capacity * kImbalancePct < local.capacity * 100;
      if (imbalanced || reduced_capacity || type == Migrate::kMisfit) {
        // The stopper is kicked only if src's current task may run on dst
        // (the idle task may not): else out_one_pinned.
        if (src.curr->is_idle_task || !allowed(*src.curr, dst.cpu))
          return balanced(true, "no task to take, and the running one may not move here");
        active = src.curr->state == TaskState::kRunning && src.curr->sched_class == SchedClassId::kFair;
        if (!active) refused = "no stopper: src's running task is not a fair task still running, ";
      }
    } else {
      dst.sd_nr_balance_failed = 0;
    }
    // The stopper runs at once here (in the kernel, right after this pass):
    // its move is not counted in what the pass moved (ld_moved stays 0).
    const char* const why_moved = type == Migrate::kMisfit ? "a misfit task"
                                  : type == Migrate::kTask ? "to even out task counts"
                                                           : "to migrate load";
    if (active) {
      SL_DEBUG("{:.6f} active balance cpu{} -> cpu{} ({})", now().to_s(), src.cpu, dst.cpu,
               type == Migrate::kMisfit ? "misfit" : type == Migrate::kTask ? "imbalanced" : "reduced capacity");
      const char* const kind = type == Migrate::kMisfit ? "misfit"
                               : type == Migrate::kTask ? "task counts imbalanced after failed passes"
                                                        : "capacity reduced by RT pressure";
      // stop_one_cpu_nowait(): the balancing CPU (dst, or the nohz idle
      // balancer) wakes src's stopper, a try_to_wake_up() of its own
      // (kernel.overheads.wakeup) whose resched reaches src by IPI; only
      // then does the stopper preempt src's task. While it is on its way
      // (busiest->active_balance set) no other pass kicks it again.
      const int balancing_cpu = event_cpu_ >= 0 ? event_cpu_ : dst.cpu;
      const Time wake_delay =
          params_.wakeup_cost + (src.cpu != balancing_cpu ? params_.ipi_latency : Time::zero());
      if (src.active_balance_stop.armed()) {
        count_pass("active balance: the stopper is already on its way, ", kind);
      } else if (wake_delay > Time::zero()) {
        src.push_cpu = dst.cpu;
        src.active_balance_stop.arm(now() + wake_delay);
        if (src.cpu != balancing_cpu) {
          src.active_balance_ipi = true;
          ipi_raise(src.cpu);  // the stopper's wake-up IPI
        }
        count_pass("active balance: the stopper is woken, ", kind);
      } else {
        const bool stopped = active_balance(src, dst.cpu);
        if (stopped) dst.sd_nr_balance_failed = 0;  // the stopper detached a task
        count_pass(stopped ? "active balance: the stopper pushed a task, " : "active balance: the stopper found none, ",
                   kind);
      }
    } else if (moved > 0) {
      count_pass(moved == 1 ? "pulled a task, " : "pulled tasks, ", why_moved);
    } else {
      count_pass("nothing moved: ", refused, why_moved);
    }
    // "We were unbalanced, so reset the balancing interval."
    if (excluded) std::fill(lb_excluded_.begin(), lb_excluded_.end(), 0);
    dst.sd_balance_interval_ms = n;
    return moved;
  }
}

// The stopper preempts prev (or follows it as it blocks): prev is put and
// the idle task stands in for the stopper (flagged first: switch_to() and
// update_rq_clock() must not treat the CPU as idle, or clock_pelt would
// jump to clock_task with a preempted task still queued, and its
// runnable_avg would count the whole lag of a slow CPU's PELT clock as
// time spent waiting). The next __schedule() goes on from the stopper.
void Kernel::switch_to_stopper(Rq& rq, Task& prev, TaskState prev_state) {
  class_of(prev).put_prev_task(rq, prev, nullptr);
  rq.stopper_ran = true;
  switch_to(rq, prev, *rq.idle, prev_state);
}

// active_load_balance_cpu_stop(): the stopper preempts the running task on
// src, then detach_one_task() moves to dst the first task, from the cold
// end of the task list, that may run there (cache hotness does not count:
// LBF_ACTIVE_LB). The preempted task stays where its pick put it in the
// list: near the head, behind tasks enqueued since. Returns whether a task
// moved.
bool Kernel::active_balance(Rq& src, int dst_cpu) {
  Task& p = *src.curr;
  int saved = event_cpu_;
  event_cpu_ = src.cpu;
  update_rq_clock(src);
  account_progress(src);
  src.work_timer.cancel();
  update_curr(src);
  switch_to_stopper(src, p, TaskState::kRunning);
  Task* victim = nullptr;
  for_each_queued_task(src.cfs, [&](Task& t) {  // the preempted task is queued again
    if ((!victim || t.se.cfs_tasks_seq < victim->se.cfs_tasks_seq) && can_migrate_task(t, dst_cpu, true, true))
      victim = &t;
  });
  if (victim) {
    SL_DEBUG("{:.6f} active balance: {}-{} cpu{} -> cpu{}", now().to_s(), victim->comm, victim->pid, src.cpu,
             dst_cpu);
    move_queued_task(*victim, dst_cpu);
  }
  resched_curr(src);
  event_cpu_ = saved;
  return victim != nullptr;
}

// active_load_balance_cpu_stop() when the woken stopper runs on src: as
// active_balance(), if src's current task is still a fair task running
// (simplification: the kernel's stopper would also preempt another class's
// task, or wake src from idle, to look for a queued fair task).
void Kernel::active_balance_cpu_stop(Rq& src) {
  Rq& dst = *rqs_[static_cast<size_t>(src.push_cpu)];
  const Task& curr = *src.curr;
  const bool can_stop =
      !curr.is_idle_task && curr.state == TaskState::kRunning && curr.sched_class == SchedClassId::kFair;
  const bool stopped = can_stop && active_balance(src, dst.cpu);
  // "Active balancing done, reset the failure counter."
  if (stopped) dst.sd_nr_balance_failed = 0;
  if (count_decisions_) [[unlikely]]
    count_decision(Decision::kBalance, cpu_names_[static_cast<size_t>(dst.cpu)],
                   stopped     ? "the woken stopper pushed a task"
                   : can_stop ? "the woken stopper found no task that may move"
                              : "the woken stopper found src no longer running a fair task");
}

bool Kernel::sched_balance_newidle(Rq& rq) {
  update_misfit_status(*this, rq, nullptr);  // the CPU is leaving its task
  // One CPU has no sched domain (sd NULL). 6.6 and 6.12 have no
  // null-domain test here: once the root domain is overloaded (two tasks
  // queued at once, ever: only the balancer's pass over the root domain
  // clears it) every newly idle pass updates the blocked averages, and the
  // domain loop is empty. 6.1.166 and 6.18.35 go to "out:" after
  // idle_stamp (below).
  const bool has_domain = nr_cpus() > 1;
  const std::string& cpu_name = cpu_names_[static_cast<size_t>(rq.cpu)];
  // A task is already on its way here (6.12: "There is a task waiting to
  // run. No need to search for one."), before idle_stamp is set.
  if (rq.ttwu_pending) {
    count_decision(Decision::kBalance, cpu_name, "newly idle: skipped: a woken task is on its way here");
    return false;
  }
  rq.idle_stamp = now();
  if (!has_domain && version_.newidle_null_domain_returns) {
    nohz_newidle_balance(rq);  // out: nothing pulled
    return false;
  }
  // update_next_balance() of the domain, applied at "out:": next_balance
  // only moves earlier, to the last periodic balance + the idle interval.
  if (has_domain) rq.next_balance = std::min(rq.next_balance, rq.last_balance + balance_interval(rq, false));
  // Nothing to pull unless the root domain is overloaded (the latched
  // get_rd_overloaded()), nor when the CPU expects to idle shorter than a
  // balance pass takes (avg_idle < sd->max_newidle_lb_cost; before 5.16
  // the bound was sysctl_sched_migration_cost). The "out:" path still
  // offers the blocked-load update.
  if (!rd_overloaded_ || (has_domain && rq.avg_idle < rq.max_newidle_lb_cost)) {
    SL_DEBUG("{:.6f} newidle balance cpu{} skipped: {}", now().to_s(), rq.cpu,
             !rd_overloaded_ ? "root domain not overloaded" : "avg_idle below max_newidle_lb_cost");
    count_decision(Decision::kBalance, cpu_name,
                   !rd_overloaded_ ? "newly idle: skipped: the root domain is not overloaded (no CPU has two tasks)"
                                   : "newly idle: skipped: avg_idle below max_newidle_lb_cost");
    nohz_newidle_balance(rq);
    return false;
  }
  sched_balance_update_blocked_averages(rq);  // brings rq's clock to now too
  // NI_RANDOM (6.18.5+ and 6.1.16x, "proportional newidle balance"): a 1024-sided
  // die decides whether the domain is balanced at all: a throw above
  // 1 + newidle_ratio skips it (a pass without success); a pass that pulls
  // counts (1024 + w/2) / w successes (w = 1 + newidle_ratio), so the
  // ratio tracks successes per 1024 passes. The kernel counts the stats
  // only for a pass of non-zero measured cost: every real one (the
  // model's kernel.overheads.newidle_balance may be 0).
  int moved = 0;
  const uint32_t weight = 1 + rq.newidle_ratio;
  if (!has_domain) {
    // for_each_domain() finds none: nothing to balance, no cost measured.
  } else if (features_(SchedFeat::kNiRandom) && sched_rng(rq) % 1024 > weight) {
    SL_DEBUG("{:.6f} newidle balance cpu{} skipped: NI_RANDOM (ratio {})", now().to_s(), rq.cpu, rq.newidle_ratio);
    count_decision(Decision::kBalance, cpu_name, "newly idle: skipped: NI_RANDOM (recent passes rarely pulled)");
    update_newidle_stats(rq, 0);
  } else {
    moved = sched_balance_rq(rq, CpuIdleType::kNewlyIdle);
    if (features_(SchedFeat::kNiRandom)) update_newidle_stats(rq, moved ? (1024 + weight / 2) / weight : 0);
    // The pass's sched_clock() time (one domain: the blocked-load update
    // and the balance) raises the domain's and the rq's recorded costs.
    const int64_t cost = params_.newidle_balance_cost.count();
    update_newidle_cost(rq, cost);
    rq.max_idle_balance_cost = std::max(rq.max_idle_balance_cost, cost);
  }
  // "A task could have been enqueued in the meantime" (an active balance's
  // push): not going idle, pretend we pulled a task.
  if (!moved && rq.cfs.h_nr_running > 0) moved = 1;  // 6.14+: h_nr_queued
  if (moved)
    rq.idle_stamp = Time::max();
  else
    nohz_newidle_balance(rq);
  return moved > 0;
}

void Kernel::sched_balance_update_blocked_averages(Rq& rq) {
  rq.last_blocked_load_update_tick = jiffies();
  update_rq_clock(rq);
  // __update_blocked_others() (RT; no DL, HW or IRQ signals here), then
  // __update_blocked_fair().
  const bool rt_running = !rq.curr->is_idle_task && rq.curr->sched_class == SchedClassId::kRt;
  bool decayed = update_rt_rq_load_avg(rq.pelt.rq_clock_pelt(), rq.avg_rt, rt_running);
  bool done = !rq.avg_rt.util_avg;  // others_have_blocked()
  decayed |= update_blocked_fair(rq, done);
  // update_blocked_load_status(): done once every signal reached zero.
  if (done) rq.has_blocked_load = false;
  if (decayed) cpufreq_update_util(rq, 0);
}

bool Kernel::update_nohz_stats(Rq& rq) {
  if (!rq.has_blocked_load) return false;
  if (jiffies() <= rq.last_blocked_load_update_tick) return true;
  sched_balance_update_blocked_averages(rq);
  return rq.has_blocked_load;
}

void Kernel::update_newidle_stats(Rq& rq, uint32_t success) {
  ++rq.newidle_call;
  rq.newidle_success += success;
  if (rq.newidle_call >= 1024) {
    rq.newidle_ratio = rq.newidle_success;
    rq.newidle_call /= 2;
    rq.newidle_success /= 2;
  }
}

void Kernel::seed_sched_rng(uint64_t seed) {
  sched_rng_.clear();
  for (size_t cpu = 0; cpu < rqs_.size(); ++cpu) sched_rng_.emplace_back(seed, "sched_rng/cpu" + std::to_string(cpu));
}

bool Kernel::update_newidle_cost(Rq& rq, int64_t cost) {
  if (cost > rq.max_newidle_lb_cost) {
    rq.max_newidle_lb_cost = cost;
    rq.last_decay_max_lb_cost = jiffies();
    return false;
  }
  if (jiffies() > rq.last_decay_max_lb_cost + params_.hz) {
    rq.max_newidle_lb_cost = rq.max_newidle_lb_cost * 253 / 256;
    rq.last_decay_max_lb_cost = jiffies();
    return true;
  }
  return false;
}

int Kernel::sched_balance_domains(Rq& rq, bool idle) {
  // Decay the newidle cost on this regular visit; the rq-wide bound keeps
  // a floor of sysctl_sched_migration_cost.
  if (update_newidle_cost(rq, 0)) rq.max_idle_balance_cost = std::max(kMigrationCostNs, rq.max_newidle_lb_cost);
  // A CPU running only SCHED_IDLE tasks balances at the idle interval.
  bool busy = !idle && !sched_idle_rq(rq);
  int64_t interval = balance_interval(rq, busy);
  int moved = 0;
  if (jiffies() >= rq.last_balance + interval) {
    moved = sched_balance_rq(rq, idle ? CpuIdleType::kIdle : CpuIdleType::kNotIdle);
    // A CPU that pulled work is no longer idle (idle_cpu() again).
    if (moved) {
      idle = cpu_idle(rq.cpu);
      busy = !idle && !sched_idle_rq(rq);
    }
    rq.last_balance = jiffies();
    interval = balance_interval(rq, busy);
  }
  rq.next_balance = rq.last_balance + interval;
  return moved;
}

// _nohz_idle_balance(): this_cpu (kicked, or going idle) works for every
// CPU in nohz.idle_cpus_mask, starting after itself and ending with itself.
// Simplification: the abort when this_cpu gets work meanwhile cannot
// happen, as the whole pass takes no simulated time.
void Kernel::nohz_idle_balance(int this_cpu, unsigned flags) {
  int64_t next_balance = jiffies() + 60 * params_.hz;
  bool update_next_balance = false;
  bool has_blocked_load = false;
  if (flags & kNohzStatsKick) nohz_has_blocked_ = false;
  if (flags & kNohzNextKick) nohz_needs_update_ = false;
  if (flags & kNohzBalanceKick) ++nohz_balance_passes_;
  const int n = nr_cpus();
  for (int i = 1; i <= n; ++i) {
    Rq& rq = *rqs_[static_cast<size_t>((this_cpu + i) % n)];
    if (!rq.nohz_tick_stopped || !cpu_idle(rq.cpu)) continue;
    if (flags & kNohzStatsKick) has_blocked_load |= update_nohz_stats(rq);
    if (jiffies() >= rq.next_balance) {
      update_rq_clock(rq);
      // A task pulled onto rq reschedules it in attach_task() (by IPI, this
      // being another CPU's pass); the pass itself does not.
      if (flags & kNohzBalanceKick) sched_balance_domains(rq, true);
    }
    if (next_balance > rq.next_balance) {
      next_balance = rq.next_balance;
      update_next_balance = true;
    }
  }
  if (update_next_balance) nohz_next_balance_ = next_balance;
  if (flags & kNohzStatsKick) nohz_next_blocked_ = jiffies() + msecs_to_jiffies(kLoadAvgPeriod);
  if (has_blocked_load) nohz_has_blocked_ = true;
}

// nohz_newidle_balance() (6.1-6.18 alike): only flags the CPU; do_idle()
// runs the update (nohz_run_idle_balance()), with this CPU idle, so it
// covers this CPU too when its tick was stopped before.
void Kernel::nohz_newidle_balance(Rq& rq) {
  if (rq.avg_idle < kMigrationCostNs) return;
  if (!nohz_has_blocked_ || jiffies() < nohz_next_blocked_) return;
  rq.newilb_kick = true;
}

void Kernel::nohz_run_idle_balance(Rq& rq) {
  if (!rq.newilb_kick) return;
  rq.newilb_kick = false;
  if (rq.ilb_flags == 0 && !rq.need_resched) nohz_idle_balance(rq.cpu, kNohzStatsKick);
}

// sched_balance_trigger() from a CPU's tick (6.12): raise the periodic
// balance softirq when due, then nohz_balancer_kick(), in the tick; the
// softirq runs at the interrupt's exit, after the kick decision, so the
// kick sees the run-queue before this CPU's own balance pulls.
void Kernel::sched_balance_trigger(Rq& rq) {
  if (nr_cpus() == 1) return;
  const bool softirq_raised = jiffies() >= rq.next_balance;
  nohz_balancer_kick(rq);
  if (softirq_raised) {
    // sched_balance_softirq(): this CPU's blocked averages, then the balance.
    sched_balance_update_blocked_averages(rq);
    sched_balance_domains(rq, false);
  }
}

// nohz_balancer_kick() (6.12): ask an idle CPU with its tick stopped to
// update the idle CPUs' blocked load when due (stats kick), and to balance
// for them (balance kick) when this CPU has more than it can run, at most
// once per nohz.next_balance. Not modelled: ASYM_PACKING.
void Kernel::nohz_balancer_kick(Rq& rq) {
  nohz_balance_exit_idle(rq);  // the first busy tick after a nohz idle period
  if (nohz_nr_cpus_ == 0) return;
  unsigned flags = nohz_has_blocked_ && jiffies() > nohz_next_blocked_ ? unsigned{kNohzStatsKick} : 0u;
  if (jiffies() >= nohz_next_balance_) {
    // Two tasks, or a fair task on a CPU whose capacity RT pressure cut
    // (check_cpu_capacity()).
    bool balance = rq.nr_running >= 2 || (lb_h_nr_running(rq) >= 1 && check_cpu_capacity(rq));
    if (!balance && asym_capacity_) {
      // check_misfit_status(): 6.12 a misfit task, which
      // update_misfit_status() only records below the task's biggest
      // allowed capacity; 6.1 and 6.6 (which record it on any CPU) also
      // want a bigger CPU in the root domain or RT pressure here.
      balance = rq.misfit_task_load > 0 &&
                (version_.misfit_skips_biggest_allowed || rq.capacity < rd_max_cpu_capacity_ || check_cpu_capacity(rq));
    } else if (!balance) {
      // Symmetric CPUs share the LLC: balance when more than one CPU of it
      // is busy (sds->nr_busy_cpus > 1, busy = not in nohz idle).
      balance = nr_cpus() - nohz_nr_cpus_ > 1;
    }
    if (balance) flags = kNohzStatsKick | kNohzBalanceKick;
  }
  if (nohz_needs_update_) flags |= kNohzNextKick;
  if (flags) kick_ilb(rq.cpu, flags);
}

// kick_ilb(): the first idle CPU of nohz.idle_cpus_mask other than this
// one gets the flags; one IPI carries any flags added before it arrives.
void Kernel::kick_ilb(int this_cpu, unsigned flags) {
  if (flags & kNohzBalanceKick) nohz_next_balance_ = jiffies() + 1;
  for (auto& other : rqs_) {
    if (other->cpu == this_cpu || !other->nohz_tick_stopped || !cpu_idle(other->cpu)) continue;
    // find_new_ilb() stops at the first; nothing new for it: nothing to do.
    if ((other->ilb_flags & flags) == flags) return;
    const bool ipi_in_flight = other->ilb_flags != 0;
    SL_DEBUG("{:.6f} cpu{} tick: nohz kick to cpu{}:{}{}{}{}", now().to_s(), this_cpu, other->cpu,
             flags & kNohzBalanceKick ? " balance" : "", flags & kNohzStatsKick ? " stats" : "",
             flags & kNohzNextKick ? " next_balance" : "", ipi_in_flight ? " (joins the IPI in flight)" : "");
    other->ilb_flags |= flags;
    if (ipi_in_flight) return;
    other->ilb_kick.arm(now() + params_.ipi_latency);
    ipi_raise(other->cpu);  // kick_ilb(): smp_call_function_single_async()
    return;
  }
}

}  // namespace schedlab
