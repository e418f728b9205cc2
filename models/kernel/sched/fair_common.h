// What the two fair classes (EEVDF, fair_eevdf.cc; legacy CFS,
// fair_cfs.cc) share: placement and balancing across CPUs (fair_smp.cc),
// the virtual-time scaling and feature switches. (Buddies are each
// class's own: 6.1 has next, last and skip; EEVDF only next, up the group
// hierarchy.)
#pragma once

#include <string>

#include "models/kernel/kernel.h"
#include "models/kernel/sched/fair_pelt.h"
#include "models/kernel/sched/weights.h"

namespace schedlab {

class FairClassBase : public SchedClass {
 public:
  using SchedClass::SchedClass;
  int select_task_rq(Task& p, int prev_cpu, int wake_flags) override {
    return k_.select_task_rq_fair(p, prev_cpu, wake_flags);
  }
  // balance_fair(): a CPU about to run out of fair work looks for some
  // (6.12+: sched_fair_runnable(); 6.1/6.6: any queued task stops it).
  bool balance(Rq& rq, Task& prev) override {
    if (k_.version_info().balance_fair_tests_fair_queue ? rq.cfs.nr_running > 0 : rq.nr_running > 0) return true;
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
  // __sched_group_set_shares(): each level from the group's entity up
  // brought to now, then reweighted (6.1.166, 6.6.63, 6.12.19 alike).
  void group_shares_changed(Rq& rq, SchedEntity& se) override {
    for (SchedEntity* s = &se; s; s = s->parent) {
      fair_update_load_avg(k_, rq, *s->cfs_rq, s, kUpdateTg);
      update_cfs_group(rq, *s);
    }
  }
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
  // update_cfs_group(): a group entity's weight from its group's shares
  // (each class reweights as its kernel does); nothing for a task.
  virtual void update_cfs_group(Rq& rq, SchedEntity& se) = 0;
  // update_load_set() and the PELT load at the new weight: the
  // scale_load_down()ed weight and its inverse (__update_inv_weight():
  // WMULT_CONST / w) serve vruntime and PELT.
  static void set_group_weight(SchedEntity& se, uint64_t weight);
  // se_update_runnable(): a group entity's runnable_weight (6.1 has no
  // delayed entities: h_nr_delayed stays 0 there).
  static void se_update_runnable(SchedEntity& se) {
    if (se.my_q) se.runnable_weight = static_cast<uint32_t>(se.my_q->h_nr_running - se.my_q->h_nr_delayed);
  }
  // se_is_idle(): a SCHED_IDLE task, or the entity of a cpu.idle group
  // (cfs_rq_is_idle() of its group cfs_rq).
  static bool se_is_idle(const SchedEntity& se) {
    return se.task ? se.task->policy == Policy::kIdle : se.my_q && se.my_q->idle;
  }
  // set_next_buddy() / set_last_buddy(): the entity and its ancestors
  // become their cfs_rqs' buddy, up to a dequeued or idle one (never a
  // SCHED_IDLE entity).
  static void set_buddy(SchedEntity* CfsRq::*buddy, SchedEntity* se) {
    for (; se; se = se->parent) {
      if (!se->on_rq || se_is_idle(*se)) return;
      se->cfs_rq->*buddy = se;
    }
  }
  // __clear_buddies_{next,last,skip}(): the buddy goes from the entity's
  // level and from each level above where the entity's ancestor is it.
  static void clear_buddy(SchedEntity* CfsRq::*buddy, SchedEntity* se) {
    for (; se; se = se->parent) {
      CfsRq& cfs = *se->cfs_rq;
      if (cfs.*buddy != se) return;
      cfs.*buddy = nullptr;
    }
  }
  // find_matching_se(): the two entities of curr's and p's hierarchies that
  // are siblings on one cfs_rq.
  static void find_matching_se(SchedEntity*& se, SchedEntity*& pse) {
    while (se->depth > pse->depth) se = se->parent;
    while (pse->depth > se->depth) pse = pse->parent;
    while (se->cfs_rq != pse->cfs_rq) {
      se = se->parent;
      pse = pse->parent;
    }
  }
  // update_curr_fair()'s cfs_rq: the running task's own, the deepest
  // level with a curr (null when no fair entity runs).
  static CfsRq* running_cfs_rq(Rq& rq) {
    SchedEntity* curr = rq.cfs.curr;
    if (!curr) return nullptr;
    while (curr->my_q && curr->my_q->curr) curr = curr->my_q->curr;
    return curr->cfs_rq;
  }
  // pick_next_task_fair()'s partial switch (6.1 to 6.12 alike): prev's
  // entities put and next's set below the cfs_rq their hierarchies share,
  // the deeper side first, then their two entities there. Common
  // ancestors are left alone.
  template <class PutPrev, class SetNext>
  static void switch_levels(SchedEntity* pse, SchedEntity* se, PutPrev put_prev, SetNext set_next) {
    CfsRq* cfs;
    while ((cfs = se->cfs_rq) != pse->cfs_rq) {  // !is_same_group()
      const int se_depth = se->depth, pse_depth = pse->depth;
      if (se_depth <= pse_depth) {
        put_prev(*pse->cfs_rq, *pse);
        pse = pse->parent;
      }
      if (se_depth >= pse_depth) {
        set_next(*se->cfs_rq, *se);
        se = se->parent;
      }
    }
    put_prev(*cfs, *pse);
    set_next(*cfs, *se);
  }
  // The simple path's sets (6.1, 6.6 after a pick from another class):
  // each level's entity, top-down.
  template <class SetNext>
  static void set_levels_top_down(SchedEntity& se, SetNext set_next) {
    if (se.parent) set_levels_top_down(*se.parent, set_next);
    set_next(*se.cfs_rq, se);
  }
  // Who an entity is in logs and decision counts: a task's comm-pid, a
  // group entity's cgroup.
  std::string entity_name(const SchedEntity& se) const;
  // attach_task_cfs_rq() -> attach_entity_cfs_rq() of switched_to_fair():
  // aged to now (ATTACH_AGE_LOAD), then added to the cfs_rq.
  void attach_task_cfs_rq(Rq& rq, Task& p);
};

}  // namespace schedlab
