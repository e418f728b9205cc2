#include "models/kernel/sched/fair_pelt.h"
#include "models/kernel/sched/fair_common.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

namespace schedlab {

// ___update_load_sum() returns at once, changing nothing, when less than
// one 1024 ns unit passed since last_update_time ("delta >>= 10; if
// (!delta) return 0;"); the same test here skips the call.
static inline bool pelt_unit_elapsed(uint64_t now, const SchedAvg& sa) { return now - sa.last_update_time >= 1024; }

// add_tg_cfs_propagate(): load attached to or detached from a group's
// cfs_rq is to reach its group entity (nothing above the root).
static void add_tg_cfs_propagate(CfsRq& cfs, int64_t runnable_sum) {
  if (!cfs.se) return;
  cfs.propagate = true;
  cfs.prop_runnable_sum += runnable_sum;
}

// update_cfs_rq_load_avg(): removed load first, then the sums. Removed
// runnable (the unweighted load) also estimates the load_sum the group
// entity is to lose: -(removed_runnable * divider) >> SCHED_CAPACITY_SHIFT.
static inline bool update_cfs_rq(CfsRq& cfs, uint64_t now) {
  if (!cfs.removed.nr && !pelt_unit_elapsed(now, cfs.avg)) return false;
  if (cfs.removed.nr && cfs.se)
    add_tg_cfs_propagate(cfs, -static_cast<int64_t>(cfs.removed.runnable_avg * get_pelt_divider(cfs.avg)) >> 10);
  return update_cfs_rq_load_avg(now, cfs.avg, cfs.removed, scale_load_down(cfs.load_weight),
                                static_cast<uint64_t>(cfs.h_nr_running - cfs.h_nr_delayed), cfs.curr != nullptr);
}

bool fair_update_cfs_rq(CfsRq& cfs, uint64_t now) { return update_cfs_rq(cfs, now); }

// propagate_entity_load_avg(): a group entity takes on what changed in
// its own cfs_rq, and passes it on to the cfs_rq it is queued on.
static bool propagate_entity_load_avg(CfsRq& cfs, SchedEntity& se) {
  CfsRq& gcfs = *se.my_q;
  if (!gcfs.propagate) return false;
  gcfs.propagate = false;
  add_tg_cfs_propagate(cfs, gcfs.prop_runnable_sum);
  update_tg_cfs_util(cfs.avg, se.avg, gcfs.avg);
  update_tg_cfs_runnable(cfs.avg, se.avg, gcfs.avg);
  update_tg_cfs_load(cfs.avg, se.avg, gcfs.avg, gcfs.prop_runnable_sum, se.weight, scale_load_down(gcfs.load_weight));
  return true;
}

void fair_update_load_avg(Kernel& k, Rq& rq, CfsRq& cfs, SchedEntity* se, int flags) {
  const uint64_t now = rq.pelt.rq_clock_pelt();
  if (se && se->avg.last_update_time && !(flags & kSkipAgeLoad) && pelt_unit_elapsed(now, se->avg)) {
    // se_runnable(): a group entity is as runnable as its queued tasks.
    const uint64_t runnable = se->sched_delayed ? 0 : se->my_q ? se->runnable_weight : (se->on_rq ? 1 : 0);
    update_load_avg_se(now, se->avg, se->weight, se->on_rq, runnable, cfs.curr == se);
  }
  bool decayed = update_cfs_rq(cfs, now);
  if (se && se->my_q) decayed |= propagate_entity_load_avg(cfs, *se);
  bool update_tg = decayed && (flags & kUpdateTg);
  if (se && !se->avg.last_update_time && (flags & kDoAttach)) {
    attach_entity_load_avg(cfs.avg, se->avg, se->weight);
    add_tg_cfs_propagate(cfs, static_cast<int64_t>(se->avg.load_sum));
    decayed = update_tg = true;
  } else if (se && (flags & kDoDetach)) {
    detach_entity_load_avg(cfs.avg, se->avg, se->weight);
    add_tg_cfs_propagate(cfs, -static_cast<int64_t>(se->avg.load_sum));
    se->avg.last_update_time = 0;
    decayed = update_tg = true;
  }
  // cfs_rq_util_change(): only the root cfs_rq's signals drive cpufreq.
  if (decayed && &cfs == &rq.cfs) k.cpufreq_update_util(rq, 0);
  if (update_tg && cfs.se) k.update_tg_load_avg(cfs);
}

// propagate_entity_cfs_rq(): after an attach or detach outside the
// enqueue and dequeue walks, every ancestor takes it on, and every cfs_rq
// on the way joins the leaf list, so that the blocked-load updates decay
// what it took on.
static void propagate_entity_cfs_rq(Kernel& k, Rq& rq, SchedEntity& se) {
  k.list_add_leaf_cfs_rq(rq, *se.cfs_rq);
  for (SchedEntity* e = se.parent; e; e = e->parent) {
    fair_update_load_avg(k, rq, *e->cfs_rq, e, kUpdateTg);
    k.list_add_leaf_cfs_rq(rq, *e->cfs_rq);
  }
}

void fair_util_est_enqueue(Rq& rq, Task& p) { util_est_enqueue(rq.cfs.avg, p.se.avg); }

void fair_util_est_dequeue(Rq& rq, Task& p) { util_est_dequeue(rq.cfs.avg, p.se.avg); }

void fair_util_est_update(const Kernel& k, Rq& rq, Task& p, bool task_sleep) {
  if (k.util_est_single_ewma())
    util_est_update(p.se.avg, task_sleep,
                    k.util_est_capacity_check() ? uint64_t{rq.capacity} : std::numeric_limits<uint64_t>::max());
  else
    util_est_update_two_fields(p.se.avg, task_sleep, rq.capacity);
}

// migrate_se_pelt_lag() (6.0+, the same in 6.1-6.18 fair.c, NO_HZ_COMMON):
// a blocked entity leaving a CPU that is idle now (rq->curr the idle task)
// decays further, to the PELT time the source rq would have now: its
// clock_pelt at the last idle sync plus the wall time since
// (RqPeltClock::idle_lag_now()), never before the cfs_rq's last update.
// Skipped when its sums are already zero (load_avg_is_decayed()) or the
// source CPU runs anything: the kernel limits the estimate's cost to the
// case where the source clock is most likely stale. No CFS bandwidth
// here, so no throttled PELT time to take off.
static void migrate_se_pelt_lag(Kernel& k, const Rq& src, const CfsRq& cfs, Task& p) {
  const SchedAvg& a = p.se.avg;
  if (a.load_sum == 0 && a.util_sum == 0 && a.runnable_sum == 0) return;  // load_avg_is_decayed()
  if (!src.idle_task_runs()) return;  // is_idle_task(rq->curr)
  const uint64_t sched_clock_now = static_cast<uint64_t>(k.now().count()) + Kernel::kRqClockAtZeroNs;
  update_load_avg_blocked_se(src.pelt.idle_lag_now(sched_clock_now, cfs.avg.last_update_time), p.se.avg,
                             p.se.weight);
}

// migrate_task_rq_fair()'s PELT part for a waking task (6.1-6.18): aged to
// its old cfs_rq's last update and removed from it (remove_entity_load_avg(),
// the removed sums as of that update; with groups, the group's cfs_rq on
// the old CPU), then aged over the idle lag, then attached on the new rq
// (last_update_time = 0).
// remove_entity_load_avg(se) of fair.c: p aged to its cfs_rq's last update
// (sync_entity_load_avg()), then queued for removal from that cfs_rq.
static const CfsRq& remove_task_load_avg(Task& p) {
  CfsRq& cfs = *p.se.cfs_rq;
  update_load_avg_blocked_se(cfs.avg.last_update_time, p.se.avg, p.se.weight);
  remove_entity_load_avg(cfs.removed, p.se.avg);
  return cfs;
}

void fair_migrate_task_pelt(Kernel& k, Task& p) {
  const CfsRq& cfs = remove_task_load_avg(p);
  migrate_se_pelt_lag(k, k.rq(p.cpu), cfs, p);
  p.se.avg.last_update_time = 0;  // attach on the new rq
}

void FairClassBase::task_dead(Task& p) {
  if (p.se.avg.last_update_time) remove_task_load_avg(p);  // else never attached
}

void FairClassBase::switched_from(Rq& rq, Task& p) {
  if (!p.se.avg.last_update_time) return;  // never attached (a fork or wake-up not enqueued yet)
  CfsRq& cfs = *p.se.cfs_rq;
  fair_update_load_avg(k_, rq, cfs, &p.se, 0);
  detach_entity_load_avg(cfs.avg, p.se.avg, p.se.weight);
  add_tg_cfs_propagate(cfs, -static_cast<int64_t>(p.se.avg.load_sum));
  if (&cfs == &rq.cfs) k_.cpufreq_update_util(rq, 0);  // cfs_rq_util_change()
  if (cfs.se) k_.update_tg_load_avg(cfs);
  propagate_entity_cfs_rq(k_, rq, p.se);
}

void FairClassBase::set_group_weight(SchedEntity& se, uint64_t weight) {
  se.group_weight_scaled = weight;
  se.weight = scale_load_down(weight);
  se.inv_weight = 0xFFFFFFFFu / static_cast<uint32_t>(se.weight);
  se.avg.load_avg = se.weight * se.avg.load_sum / get_pelt_divider(se.avg);
}

std::string FairClassBase::entity_name(const SchedEntity& se) const {
  return se.task ? fmt::format("{}-{}", se.task->comm, se.task->pid)
                 : fmt::format("cgroup:{}", k_.task_group_name(se.my_q->tg));
}

void FairClassBase::task_change_group(Rq& rq, Task& p) {
  switched_from(rq, p);  // detach_task_cfs_rq()
  p.se.avg.last_update_time = 0;
  k_.set_task_rq(p, p.cpu);
  attach_task_cfs_rq(rq, p);
}

// ATTACH_AGE_LOAD (a sched feature, on by default; not a model option):
// the signals decay over the time spent outside the class.
void FairClassBase::attach_task_cfs_rq(Rq& rq, Task& p) {
  CfsRq& cfs = *p.se.cfs_rq;
  fair_update_load_avg(k_, rq, cfs, &p.se, 0);
  attach_entity_load_avg(cfs.avg, p.se.avg, p.se.weight);
  add_tg_cfs_propagate(cfs, static_cast<int64_t>(p.se.avg.load_sum));
  if (&cfs == &rq.cfs) k_.cpufreq_update_util(rq, 0);  // cfs_rq_util_change()
  if (cfs.se) k_.update_tg_load_avg(cfs);
  propagate_entity_cfs_rq(k_, rq, p.se);
}

// 6.12 (6.10+): no misfit on the biggest CPU p may use. 6.1 and 6.6 only
// spare a task bound to one CPU (KernelVersionInfo::misfit_skips_biggest_allowed).
void update_misfit_status(Kernel& k, Rq& rq, Task* p) {
  if (!k.asym_capacity() || !p || p->is_idle_task || p->sched_class != SchedClassId::kFair ||
      p->nr_cpus_allowed == 1 || (k.misfit_skips_biggest_allowed() && rq.capacity == k.max_allowed_capacity(*p))) {
    rq.misfit_task_load = 0;
    return;
  }
  if (k.task_fits_cpu(*p, rq)) {  // util_est and clamps fit capacity_of()
    rq.misfit_task_load = 0;
    return;
  }
  // Make sure that misfit_task_load will not be null even if
  // task_h_load() returns 0 (kernel comment).
  rq.misfit_task_load = std::max<uint64_t>(k.task_h_load(*p), 1);
}

}  // namespace schedlab
