// sched_setaffinity(), Linux 6.12: kernel/sched/syscalls.c
// __sched_setaffinity() -> kernel/sched/core.c
// __set_cpus_allowed_ptr_locked(), __do_set_cpus_allowed(),
// affine_move_task() and the stopper's migration_cpu_stop();
// lib/cpumask.c cpumask_any_and_distribute().
//
// A running task changes the mask of a task (itself, or another). If the
// task's CPU stays allowed nothing moves. Otherwise affine_move_task():
// - a task queued but not running is moved at once (move_queued_task());
// - a sleeping one is left: its next wake-up's select_task_rq() places it
//   within the new mask;
// - a running one (task_on_cpu()) needs its CPU's stopper
//   (stop_one_cpu_nowait() of migration_cpu_stop()), whose wake-up
//   preempts it (the stop class is above every other; a remote CPU learns
//   of it by IPI; kernel code under PREEMPT_NONE / VOLUNTARY is switched
//   out at its next preemption point), and the caller waits in
//   wait_for_completion(). The
//   stopper finds the task queued (preempted) and moves it
//   (__migrate_task() -> move_queued_task()), or asleep and sets its
//   wake_cpu to the destination; complete_all() wakes the caller.
// A task changing its own mask is that running task: under PREEMPT_FULL /
// LAZY the preempt_enable() after the stopper's wake-up, and under
// PREEMPT_VOLUNTARY wait_for_completion()'s might_sleep()
// (might_resched()), switch it out still runnable, and the stopper moves
// it queued; under PREEMPT_NONE it sleeps (TASK_UNINTERRUPTIBLE) in
// wait_for_completion() and the stopper finds it dequeued (or delayed,
// DELAY_DEQUEUE: still queued, then moved as such) and wakes it. Another
// task's caller sleeps in D until the stopper is done, in every model.
// The destination is cpumask_any_and_distribute() on the caller's CPU: the
// next allowed CPU after the one that CPU's previous call returned (a
// per-CPU cursor, so tasks moved together spread over their new mask).
//
// Simplifications: no cpusets (the root cpuset allows every CPU, so the
// mask asked for is the mask set), no user_cpus_ptr, no migrate_disable();
// every CPU is online and active. The stopper's own wake-up is not
// charged kernel.overheads.wakeup (the active-balance stopper's is): it
// runs first in its CPU's next __schedule() (a remote one's when the
// resched IPI arrives, or earlier if that CPU schedules for another
// reason), as the idle task standing in for it
// (Rq::stopper_ran); if an active balance's stopper stand-in already
// switched the task out in that instant, it runs without a switch. A task
// caught TASK_WAKING (placed on a CPU now forbidden, not yet enqueued) is
// moved as its enqueue lands, without the caller waiting. One stopper request per CPU
// at a time: two callers changing running tasks' masks on one CPU in the
// same window is refused as not modelled.
#include <fmt/format.h>

#include "models/errors.h"
#include "models/kernel/kernel.h"
#include "sim/log.h"

namespace schedlab {

Kernel::AffinityWait Kernel::sched_setaffinity(Task& caller, Task& p, const CpuMask& new_mask) {
  Rq& rq = *rqs_[static_cast<size_t>(p.cpu)];
  if (p.state == TaskState::kDead) return AffinityWait::kNone;  // ESRCH: the thread is gone
  CpuMask mask = new_mask;
  for (size_t c = static_cast<size_t>(nr_cpus()); c < mask.size(); ++c) mask[c] = false;
  // __set_cpus_allowed_ptr_locked(): no active CPU in the mask is EINVAL
  // (the syscall's caller gets the error; the mask stays).
  if (mask.none())
    throw ModelError(fmt::format("sched_setaffinity({}): no CPU of the platform in the mask (EINVAL)", p.comm));
  // The same mask changes nothing (cpumask_equal(): "goto out").
  if (mask == p.cpus_allowed) return AffinityWait::kNone;
  const int dest =
      cpumask_any_and_distribute(caller.cpu, [&mask](int c) { return mask[static_cast<size_t>(c)]; });
  auto set_mask = [&] {
    p.cpus_allowed = mask;
    p.nr_cpus_allowed = static_cast<int>(mask.count());
    // set_cpus_allowed_fair() (6.10+) also refreshes
    // p->max_allowed_capacity; the RT and deadline classes'
    // set_cpus_allowed_common() does not (switched_to_fair() does later).
    if (p.sched_class == SchedClassId::kFair) set_task_max_allowed_capacity(p);
  };
  if (p.state == TaskState::kNew) {
    // A thread not started yet (a task's delay): its mask only; its start
    // (wake_up_new_task()'s select_task_rq()) places it within it.
    set_mask();
    return AffinityWait::kNone;
  }
  // __do_set_cpus_allowed(): dequeue with DEQUEUE_SAVE, put_prev_task(),
  // the class's set_cpus_allowed(), then back (ENQUEUE_RESTORE): a queued
  // RT task's enqueue counts it pushable only with nr_cpus_allowed > 1; a
  // running one is counted so when it is put (the stopper's
  // put_prev_task_rt(), a later preemption).
  const SchedChange change = sched_change_begin(p, false, false);
  set_mask();
  sched_change_end(p, change, 0);
  event_cpu_ = change.saved_event_cpu;
  const bool stays = mask[static_cast<size_t>(p.cpu)];
  const bool running = rq.curr == &p;  // task_on_cpu(): also a task blocking in this instant
  SL_DEBUG("{:.6f} sched_setaffinity by {}-{}: {}-{} on cpu{} ({}): {} CPUs allowed{}", now().to_s(), caller.comm,
           caller.pid, p.comm, p.pid, p.cpu,
           running ? "running" : p.on_rq ? "queued" : p.wake_pending ? "waking" : "sleeping",
           p.nr_cpus_allowed, stays ? "" : fmt::format(", to cpu{}", dest));
  // affine_move_task(): the task's CPU is still allowed -- done.
  if (stays) return AffinityWait::kNone;
  if (!running) {
    if (p.on_rq) {
      move_queued_task(p, dest);  // queued: moved now
    } else if (p.wake_pending && p.ttwu_start_at == Time::max()) {
      // TASK_WAKING: placed on its old CPU, its enqueue on the way (a
      // wake-up still queued behind its waker places it later, within the
      // new mask). The enqueue moves it on to `dest` (Ev::kWakeDeferred).
      p.wake_cpu = dest;
    }  // asleep: its wake-up places it
    return AffinityWait::kNone;
  }
  // stop_one_cpu_nowait(): the stopper's wake-up preempts the task (by
  // IPI when it runs on another CPU), and the caller waits for it.
  if (rq.migration_stop_task)
    throw ModelError(fmt::format("sched_setaffinity() of {} by {}: cpu{}'s stopper is already on its way for {} "
                                 "(two mask changes of running tasks on one CPU at once are not modelled)",
                                 p.comm, caller.comm, rq.cpu, rq.migration_stop_task->comm));
  rq.migration_stop_task = &p;
  rq.migration_stop_dest = dest;
  rq.migration_stop_waiter = &caller;
  resched_curr(rq);
  if (&caller != &p) return AffinityWait::kSleeps;
  return params_.preempt == PreemptModel::kNone ? AffinityWait::kSleeps : AffinityWait::kPreempted;
}

// The stopper on rq: it preempts what runs there (or follows a task that
// blocks), then migration_cpu_stop(): the task, if still on this CPU and
// not allowed here, moves to the destination when queued, or gets it as
// wake_cpu when asleep; complete_all() wakes the caller waiting for it.
void Kernel::migration_cpu_stop(Rq& rq) {
  Task& p = *rq.migration_stop_task;
  Task& waiter = *rq.migration_stop_waiter;
  const int dest = rq.migration_stop_dest;
  rq.migration_stop_task = rq.migration_stop_waiter = nullptr;
  rq.migration_stop_dest = -1;
  update_curr(rq);
  Task& curr = *rq.curr;
  if (!curr.is_idle_task) {
    TaskState prev_state = TaskState::kRunning;
    if (curr.state != TaskState::kRunning) {  // blocking in this instant (a caller asleep in wait_for_completion())
      prev_state = curr.state;
      deactivate_blocking(rq, curr);
    }
    switch_to_stopper(rq, curr, prev_state);
  }
  SL_DEBUG("{:.6f} migration stopper cpu{}: {}-{} -> cpu{}", now().to_s(), rq.cpu, p.comm, p.pid, dest);
  if (p.cpu == rq.cpu && !p.cpus_allowed[static_cast<size_t>(rq.cpu)]) {
    if (p.on_rq)
      move_queued_task(p, dest);  // __migrate_task(): preempted, or a delayed sleeper
    else
      p.wake_cpu = dest;
  }
  // complete_all(&pending->done): the caller's wait_for_completion() ends
  // (a caller preempted, not asleep, is simply runnable already).
  if (waiter.state == TaskState::kInterruptible || waiter.state == TaskState::kUninterruptible)
    try_to_wake_up(waiter, &stop_task_, rq.cpu);
}

}  // namespace schedlab
