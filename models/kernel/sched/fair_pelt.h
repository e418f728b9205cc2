// The PELT glue of the fair class (kernel/sched/fair.c 6.12
// update_load_avg() and its call sites, util_est), shared by the EEVDF and
// CFS classes, per cfs_rq of the group hierarchy (fair_group.cc).
#pragma once

#include "models/kernel/kernel.h"

namespace schedlab {

// update_load_avg() flags.
enum : int { kUpdateTg = 0x1, kSkipAgeLoad = 0x2, kDoAttach = 0x4, kDoDetach = 0x8 };

// update_load_avg(cfs_rq, se, flags): age the entity (if any) and the
// cfs_rq to the rq's PELT clock, take on a group entity's propagated
// changes, attach/detach, and kick cpufreq when the root cfs_rq's averages
// changed (cfs_rq_util_change()).
void fair_update_load_avg(Kernel& k, Rq& rq, CfsRq& cfs, SchedEntity* se, int flags);
// update_cfs_rq_load_avg() of one cfs_rq (no entity, no cpufreq kick) to
// the PELT time `now`: true when its averages changed.
bool fair_update_cfs_rq(CfsRq& cfs, uint64_t now);

// enqueue_task_fair()/dequeue_task_fair() util_est bookkeeping.
void fair_util_est_enqueue(Rq& rq, Task& p);
// util_est_dequeue(): the root cfs_rq's sum loses p's estimate.
void fair_util_est_dequeue(Rq& rq, Task& p);
// util_est_update(): p's estimate learns from the activation that ends
// (KernelVersionInfo::util_est_single_ewma, 6.8+; the capacity check
// unless KernelVersionInfo::util_est_capacity_check is off, 6.18). Before
// 6.12 dequeue_task_fair() calls it last, after the dequeue's PELT update;
// 6.12 calls it first (KernelVersionInfo::util_est_update_first).
void fair_util_est_update(const Kernel& k, Rq& rq, Task& p, bool task_sleep);

// migrate_task_rq_fair(): a waking task leaves its old rq's averages
// (remove_entity_load_avg after aging it) and attaches on the new rq.
void fair_migrate_task_pelt(Kernel& k, Task& p);

// update_misfit_status(): curr does not fit its CPU (the 1.25 margin) and
// (6.10+) a bigger CPU is allowed to it.
void update_misfit_status(Kernel& k, Rq& rq, Task* p);

// fits_capacity() is in pelt.h.

}  // namespace schedlab
