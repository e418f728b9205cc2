#include "models/kernel/sched/fair_pelt.h"
#include "models/kernel/sched/fair_common.h"

#include <algorithm>
#include <limits>

namespace schedlab {

// ___update_load_sum() returns at once, changing nothing, when less than
// one 1024 ns unit passed since last_update_time ("delta >>= 10; if
// (!delta) return 0;"); the same test here skips the call.
static inline bool pelt_unit_elapsed(uint64_t now, const SchedAvg& sa) { return now - sa.last_update_time >= 1024; }

bool fair_update_cfs_rq_load_avg(Rq& rq) {
  // update_cfs_rq_load_avg(): removed load first, then the sums.
  const uint64_t now = rq.pelt.rq_clock_pelt();
  const CfsRq& cfs = rq.cfs;
  if (!rq.cfs_removed.nr && !pelt_unit_elapsed(now, rq.cfs_avg)) return false;
  return update_cfs_rq_load_avg(now, rq.cfs_avg, rq.cfs_removed, cfs.load_weight,
                                static_cast<uint64_t>(cfs.nr_running - cfs.nr_delayed), cfs.curr != nullptr);
}

void fair_update_load_avg(Kernel& k, Rq& rq, Task* se, int flags) {
  const uint64_t now = rq.pelt.rq_clock_pelt();
  CfsRq& cfs = rq.cfs;
  if (se && se->se.avg.last_update_time && !(flags & kSkipAgeLoad) && pelt_unit_elapsed(now, se->se.avg)) {
    uint64_t runnable = se->se.sched_delayed ? 0 : (se->se.on_rq ? 1 : 0);
    update_load_avg_se(now, se->se.avg, se->se.weight, se->se.on_rq, runnable, cfs.curr == se);
  }
  bool decayed = fair_update_cfs_rq_load_avg(rq);
  if (se && !se->se.avg.last_update_time && (flags & kDoAttach)) {
    attach_entity_load_avg(rq.cfs_avg, se->se.avg, se->se.weight);
    decayed = true;
  } else if (se && (flags & kDoDetach)) {
    detach_entity_load_avg(rq.cfs_avg, se->se.avg, se->se.weight);
    se->se.avg.last_update_time = 0;
    decayed = true;
  }
  if (decayed) k.cpufreq_update_util(rq, 0);
}

void fair_util_est_enqueue(Rq& rq, Task& p) { util_est_enqueue(rq.cfs_avg, p.se.avg); }

void fair_util_est_dequeue(Rq& rq, Task& p) { util_est_dequeue(rq.cfs_avg, p.se.avg); }

void fair_util_est_update(const Kernel& k, Rq& rq, Task& p, bool task_sleep) {
  if (k.util_est_single_ewma())
    util_est_update(p.se.avg, task_sleep,
                    k.util_est_capacity_check() ? uint64_t{rq.capacity} : std::numeric_limits<uint64_t>::max());
  else
    util_est_update_two_fields(p.se.avg, task_sleep, rq.capacity);
}

// migrate_task_rq_fair()'s PELT part (6.12). Not modelled yet: its
// migrate_se_pelt_lag(), which decays a task leaving a CPU that is idle
// (rq->curr the idle task) to the estimated now; the model moves its
// signals as of the old cfs_rq's last update (a review counted 2-7 such
// moves from a source idle over 1 ms in 3 s of the shipped phone
// scenarios).
void fair_migrate_task_pelt(Kernel& k, Task& p) {
  Rq& old = k.rq(p.cpu);
  // sync_entity_load_avg() to the old cfs_rq's last update, then remove.
  update_load_avg_blocked_se(old.cfs_avg.last_update_time, p.se.avg, p.se.weight);
  remove_entity_load_avg(old.cfs_removed, p.se.avg);
  p.se.avg.last_update_time = 0;  // attach on the new rq
}

void FairClassBase::switched_from(Rq& rq, Task& p) {
  if (!p.se.avg.last_update_time) return;  // never attached (a fork or wake-up not enqueued yet)
  fair_update_load_avg(k_, rq, &p, 0);
  detach_entity_load_avg(rq.cfs_avg, p.se.avg, p.se.weight);
  k_.cpufreq_update_util(rq, 0);  // cfs_rq_util_change()
}

// ATTACH_AGE_LOAD (a sched feature, on by default; not a model option):
// the signals decay over the time spent outside the class.
void FairClassBase::attach_task_cfs_rq(Rq& rq, Task& p) {
  fair_update_load_avg(k_, rq, &p, 0);
  attach_entity_load_avg(rq.cfs_avg, p.se.avg, p.se.weight);
  k_.cpufreq_update_util(rq, 0);  // cfs_rq_util_change()
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
  rq.misfit_task_load = std::max<uint64_t>(p->se.avg.load_avg, 1);
}

}  // namespace schedlab
