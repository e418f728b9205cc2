// __sched_setscheduler() as kernel code calls it (sched_setattr_nocheck(),
// sched_set_fifo()), kernel/sched/syscalls.c, Linux 6.12, and
// set_user_nice():
// dequeue with DEQUEUE_SAVE | DEQUEUE_MOVE, __setscheduler_params() and
// set_load_weight() (for a task still in the fair class, reweight_entity()
// of a dequeued entity: its vlag is rescaled to the new weight, its PELT
// load_avg recomputed; any other class just takes the weight), the
// PI-aware effective priority, enqueue with ENQUEUE_RESTORE (ENQUEUE_HEAD
// when the priority drops), then check_class_changed().
//
// Used by the kthread_worker and binder models (priority following) and
// from user space (the workload's `setscheduler` and `nice` events:
// sched_setscheduler() and setpriority() of the calling thread).
//
// Simplifications: no permission or validity checks beyond ranges (the
// callers are kernel code or root); a call that changes nothing returns
// early, where 6.12 re-queues a fair task whose sched_runtime (0 from
// sched_setscheduler()) differs from its slice, resetting a custom slice.
#include <algorithm>
#include <fmt/format.h>

#include "models/errors.h"
#include "models/kernel/kernel.h"
#include "models/kernel/sched/rt_mutex.h"
#include "models/kernel/sched/weights.h"
#include "sim/log.h"

namespace schedlab {

// set_load_weight() with update_load (core.c), before any class change:
// only the fair class has reweight_task(); a task that is RT now (by
// policy or a PI boost) just takes the new weight.
void Kernel::set_load_weight(Task& p, SchedClassId old_class, Policy policy, int nice) {
  const uint64_t old_weight = p.se.weight;
  const uint64_t new_weight = policy == Policy::kIdle ? kWeightIdlePrio : nice_to_weight(nice);
  if (new_weight != old_weight) {
    // (An RT task's vlag and PELT load stay: it is detached from the
    // cfs_rq's sums, and attach_entity_load_avg() rebuilds load_sum at the
    // new weight when it becomes fair again.)
    if (old_class == SchedClassId::kFair) {
      // reweight_task_fair() -> reweight_entity() on a dequeued entity:
      // lag_i = w_i * vlag, so vlag scales by old/new; PELT: the blocked or
      // queued load leaves and re-enters the cfs_rq's sums at the new weight.
      // 6.18.35: a relative deadline (the task was dequeued with
      // DEQUEUE_SAVE under PLACE_REL_DEADLINE) scales the same way.
      p.se.set_vlag(rescale_by_weight(p.se.vlag, static_cast<int64_t>(old_weight), new_weight),
                    version_.protect_slice);
      if (version_.reweight_by_place && p.se.rel_deadline)
        p.se.deadline = rescale_by_weight(p.se.deadline, static_cast<int64_t>(old_weight), new_weight);
      const bool attached = p.se.avg.last_update_time != 0 && p.state != TaskState::kNew;
      SchedAvg& cfs_avg = p.se.cfs_rq->avg;  // cfs_rq_of(se): the task's group's
      if (attached) dequeue_load_avg(cfs_avg, p.se.avg, old_weight);
      p.se.avg.load_avg = new_weight * p.se.avg.load_sum / get_pelt_divider(p.se.avg);
      if (attached) enqueue_load_avg(cfs_avg, p.se.avg, new_weight);
    }
    p.se.weight = new_weight;
    p.se.inv_weight = policy == Policy::kIdle ? kWmultIdlePrio : nice_to_wmult(nice);
  }
}

void Kernel::set_scheduler(Task& p, Policy policy, int nice, int rt_priority) {
  const bool rt = is_rt_policy(policy);
  if (rt && (rt_priority < 1 || rt_priority > 99))
    throw ModelError(fmt::format("set_scheduler({}): RT priority {} out of range 1..99", p.comm, rt_priority));
  if (!rt && (nice < -20 || nice > 19))
    throw ModelError(fmt::format("set_scheduler({}): nice {} out of range -20..19", p.comm, nice));
  const int new_static = nice_to_prio(nice);
  const int new_normal = rt ? rt_priority_to_prio(rt_priority) : new_static;
  const int new_rt_priority = rt ? rt_priority : 0;
  if (p.policy == policy && p.static_prio == new_static && p.normal_prio == new_normal &&
      p.rt_priority == new_rt_priority)
    return;
  // rt_effective_prio(): the top waiter of a PI mutex p holds lends its
  // priority when above the new normal one (also when p was not boosted
  // before: an RT owner lowering itself below its waiter).
  const int new_prio = std::min(new_normal, rt_mutex_pi_top_prio(p));

  const int old_prio = p.prio;
  const SchedClassId old_class = p.sched_class;
  // With pi, __sched_setscheduler() clears DEQUEUE_MOVE when the effective
  // priority stays: an RT task keeps its place in its list.
  const SchedChange c = sched_change_begin(p, new_prio != old_prio, rt_prio(new_prio) != rt_prio(old_prio));
  Rq& rq = *c.rq;

  // __setscheduler_params() + set_load_weight().
  p.policy = policy;
  p.static_prio = new_static;
  p.rt_priority = new_rt_priority;
  p.normal_prio = new_normal;
  if (rt) reserve_rt_queue(new_normal);
  // RT tasks have no timer slack; leaving RT restores the default.
  if (rt)
    p.timer_slack = Time::zero();
  else if (p.timer_slack == Time::zero())
    p.timer_slack = p.default_timer_slack;
  set_load_weight(p, old_class, policy, nice);
  if (new_prio != old_prio) {
    for (auto* o : observers_) o->on_prio_change(now(), p, old_prio, new_prio, false);
    SL_DEBUG("{:.6f} setscheduler: {}-{} {} prio {} -> {}", now().to_s(), p.comm, p.pid, policy_name(policy),
             old_prio, new_prio);
  }
  p.prio = new_prio;
  p.sched_class = class_for(p);
  uclamp_reset_defaults(p);  // __setscheduler_uclamp() without clamp flags
  sched_change_end(p, c, old_prio < new_prio ? kEnqueueHead : 0);  // __sched_setscheduler(): lowered -> head
  check_class_changed(rq, p, old_class, old_prio);
  event_cpu_ = c.saved_event_cpu;
  // __sched_setscheduler()'s pi path: a blocked waiter's new priority
  // reaches the owners it boosts.
  if (p.blocked_on) rt_mutex_adjust_pi(*this, p, old_prio);
}

// set_user_nice() (6.12 syscalls.c; 6.1 core.c the same): an RT or
// deadline task only records the nice; any other is dequeued with
// DEQUEUE_SAVE alone -- no DEQUEUE_MOVE, unlike __sched_setscheduler():
// it keeps its place and its queue's min_vruntime is not advanced --
// reweighted, given its effective priority (a PI boost stays) and put
// back; then its class's prio_changed(), whatever became of the priority.
void Kernel::set_user_nice(Task& p, int nice) {
  if (nice < -20 || nice > 19)
    throw ModelError(fmt::format("set_user_nice({}): nice {} out of range -20..19", p.comm, nice));
  if (p.nice() == nice) return;
  if (is_rt_policy(p.policy)) {
    p.static_prio = nice_to_prio(nice);
    return;
  }
  const SchedClassId old_class = p.sched_class;
  const SchedChange c = sched_change_begin(p, false, false);
  Rq& rq = *c.rq;
  p.static_prio = nice_to_prio(nice);
  set_load_weight(p, old_class, p.policy, nice);
  const int old_prio = p.prio;
  p.normal_prio = p.static_prio;
  if (!rt_prio(p.prio)) p.prio = p.normal_prio;  // effective_prio()
  if (p.prio != old_prio) {
    for (auto* o : observers_) o->on_prio_change(now(), p, old_prio, p.prio, false);
    SL_DEBUG("{:.6f} set_user_nice: {}-{} nice {} (prio {} -> {})", now().to_s(), p.comm, p.pid, nice, old_prio,
             p.prio);
  }
  sched_change_end(p, c, 0);
  class_of(p).prio_changed(rq, p, old_prio);
  event_cpu_ = c.saved_event_cpu;
}

void Kernel::sched_setattr_uclamp(Task& p, std::optional<uint32_t> util_min, std::optional<uint32_t> util_max) {
  // uclamp_validate() (and the static key) first; then the "change" path
  // with the policy and its parameters kept (SCHED_FLAG_KEEP_ALL, as rt-app
  // and uclampset call it): the refcounts leave the rq with the old clamps
  // and come back with the new ones.
  if (!util_min && !util_max) return;
  validate_uclamp(p, util_min, util_max);
  if (p.state == TaskState::kNew || !p.on_rq) {  // not queued: only the request changes
    set_task_uclamp(p, util_min, util_max);
    return;
  }
  // KEEP_PARAMS: the priority stays, so no DEQUEUE_MOVE.
  const SchedChange c = sched_change_begin(p, false, false);
  set_task_uclamp(p, util_min, util_max);
  SL_DEBUG("{:.6f} sched_setattr: {}-{} uclamp {} .. {}", now().to_s(), p.comm, p.pid,
           p.uclamp_req[kUclampMin].value, p.uclamp_req[kUclampMax].value);
  sched_change_end(p, c, 0);
  // check_class_changed(): same class, same priority: nothing to do.
  event_cpu_ = c.saved_event_cpu;
}

}  // namespace schedlab
