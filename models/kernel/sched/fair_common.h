// What the two fair classes (EEVDF, fair_eevdf.cc; legacy CFS,
// fair_cfs.cc) share: placement and balancing across CPUs (fair_smp.cc),
// the virtual-time scaling and feature switches. (Buddies are each
// class's own: 6.1 has next, last and skip; EEVDF only next, up the group
// hierarchy.)
#pragma once

#include "models/kernel/kernel.h"
#include "models/kernel/sched/weights.h"

namespace schedlab {

class FairClassBase : public SchedClass {
 public:
  using SchedClass::SchedClass;
  int select_task_rq(Task& p, int prev_cpu, int wake_flags) override {
    return k_.select_task_rq_fair(p, prev_cpu, wake_flags);
  }
  // balance_fair(): a CPU about to run out of work looks for some.
  bool balance(Rq& rq, Task& prev) override {
    if (rq.nr_running) return true;
    return k_.sched_balance_newidle(rq);
  }
  // switched_from_fair() -> detach_entity_cfs_rq(): the task's PELT signals
  // leave the cfs_rq (caught up first); its last_update_time stays, so
  // they age across its time in the other class when it comes back.
  void switched_from(Rq& rq, Task& p) override;
  // task_dead_fair(): an exited task's signals leave its cfs_rq
  // (remove_entity_load_avg()) at that cfs_rq's next update, instead of
  // decaying there as blocked load.
  void task_dead(Task& p) override;
  // task_change_group_fair(): p's signals leave the old group's cfs_rq
  // (propagated up), p joins the new one unstamped and attaches there
  // (propagated up).
  void task_change_group(Rq& rq, Task& p) override;
  // prio_changed_fair(): a queued task whose priority (nice) changed
  // preempts if it is now the better pick; the running one yields the CPU
  // when its priority dropped.
  void prio_changed(Rq& rq, Task& p, int old_prio) override {
    if (!p.on_rq || rq.cfs.nr_running == 1) return;
    if (rq.curr == &p) {
      if (p.prio > old_prio) k_.resched_curr(rq);
    } else {
      k_.wakeup_preempt(rq, p, 0);
    }
  }

 protected:
  bool feat(SchedFeat f) const { return k_.features()(f); }
  // calc_delta_fair(): wall time to se's virtual time. Its shortcut
  // tests the full-resolution weight against NICE_0_LOAD: a group entity
  // whose shares round down to 1024 still goes through __calc_delta().
  static int64_t vdelta(const SchedEntity& se, int64_t delta) {
    if (se.weight == kNice0Load && (!se.my_q || se.group_weight_scaled == kNice0Load << 10)) return delta;
    return static_cast<int64_t>(calc_delta(static_cast<uint64_t>(delta), kNice0Load, se.weight, se.inv_weight));
  }
  // attach_task_cfs_rq() -> attach_entity_cfs_rq() of switched_to_fair():
  // aged to now (ATTACH_AGE_LOAD), then added to the cfs_rq.
  void attach_task_cfs_rq(Rq& rq, Task& p);
};

}  // namespace schedlab
