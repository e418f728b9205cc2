// sched_setaffinity() of the calling thread, Linux 6.12: kernel/sched/
// syscalls.c __sched_setaffinity() -> kernel/sched/core.c
// __set_cpus_allowed_ptr_locked(), __do_set_cpus_allowed(),
// affine_move_task() and the stopper's migration_cpu_stop();
// lib/cpumask.c cpumask_any_and_distribute().
//
// The task changes its own mask while it runs. If its CPU stays allowed
// nothing moves. Otherwise affine_move_task() wakes this CPU's stopper
// (stop_one_cpu_nowait()), whose wake-up preempts the caller (the stop
// class is above every other), and waits for it in wait_for_completion():
// - under PREEMPT_FULL / LAZY the preempt_enable() after the wake-up, and
//   under PREEMPT_VOLUNTARY wait_for_completion()'s might_sleep()
//   (might_resched()), switch the caller out still runnable; the stopper
//   finds it queued and moves it (__migrate_task() -> move_queued_task());
// - under PREEMPT_NONE the caller sleeps (TASK_UNINTERRUPTIBLE) in
//   wait_for_completion(); the stopper finds it dequeued (or delayed,
//   DELAY_DEQUEUE: still queued, then moved as such), sets its wake_cpu to
//   the destination, and its complete_all() wakes it: select_task_rq()
//   places it within the new mask starting from there.
// The destination is cpumask_any_and_distribute(): the next allowed CPU
// after the one this CPU's previous call returned (a per-CPU cursor, so
// tasks moved together spread over their new mask).
//
// Simplifications: no cpusets (the root cpuset allows every CPU, so the
// mask asked for is the mask set), no user_cpus_ptr (nothing restricts a
// mask later), no migrate_disable(); every CPU is online and active. The
// stopper's own wake-up costs nothing here (kernel.overheads.wakeup is
// charged to wake-ups of tasks the model runs) and it runs at once, in
// the caller's CPU's next __schedule(). A change of another task's mask
// (a cpuset move of other threads) is not modelled.
#include <fmt/format.h>

#include "models/errors.h"
#include "models/kernel/kernel.h"
#include "sim/log.h"

namespace schedlab {

Kernel::AffinityWait Kernel::sched_setaffinity(Task& p, const CpuMask& new_mask) {
  Rq& rq = *rqs_[static_cast<size_t>(p.cpu)];
  if (rq.curr != &p || p.state != TaskState::kRunning)
    throw ModelError(fmt::format("sched_setaffinity({}): only a running task's change of its own mask is modelled",
                                 p.comm));
  CpuMask mask = new_mask;
  for (size_t c = static_cast<size_t>(nr_cpus()); c < mask.size(); ++c) mask[c] = false;
  // __set_cpus_allowed_ptr_locked(): no active CPU in the mask is EINVAL
  // (the syscall's caller gets the error; its mask stays).
  if (mask.none())
    throw ModelError(fmt::format("sched_setaffinity({}): no CPU of the platform in the mask (EINVAL)", p.comm));
  // The same mask changes nothing (cpumask_equal(): "goto out").
  if (mask == p.cpus_allowed) return AffinityWait::kNone;
  const int dest = cpumask_any_and_distribute(rq.cpu, [&mask](int c) { return mask[static_cast<size_t>(c)]; });
  // __do_set_cpus_allowed(): dequeue with DEQUEUE_SAVE, put_prev_task(),
  // the class's set_cpus_allowed(), then back (ENQUEUE_RESTORE): the RT
  // class's enqueue recounts the task as pushable or not.
  const SchedChange change = sched_change_begin(p, false, false);
  p.cpus_allowed = mask;
  p.nr_cpus_allowed = static_cast<int>(mask.count());
  // set_cpus_allowed_fair() (6.10+) also refreshes p->max_allowed_capacity;
  // the RT and deadline classes' set_cpus_allowed_common() does not.
  if (p.sched_class == SchedClassId::kFair && p.index < max_allowed_cap_.size()) {
    uint32_t cap = 0;
    for (int c = 0; c < nr_cpus(); ++c)
      if (mask[static_cast<size_t>(c)]) cap = std::max(cap, rqs_[static_cast<size_t>(c)]->capacity);
    max_allowed_cap_[p.index] = cap;
  }
  sched_change_end(p, change, 0);
  event_cpu_ = change.saved_event_cpu;
  SL_DEBUG("{:.6f} sched_setaffinity: {}-{} on cpu{}: {} CPUs allowed{}", now().to_s(), p.comm, p.pid, p.cpu,
           p.nr_cpus_allowed, mask[static_cast<size_t>(p.cpu)] ? "" : fmt::format(", the stopper moves it to cpu{}", dest));
  // affine_move_task(): the task's CPU is still allowed -- done.
  if (mask[static_cast<size_t>(p.cpu)]) return AffinityWait::kNone;
  // stop_one_cpu_nowait(): the stopper's wake-up preempts the caller.
  rq.migration_stop_task = &p;
  rq.migration_stop_dest = dest;
  resched_curr(rq);
  return params_.preempt == PreemptModel::kNone ? AffinityWait::kSleeps : AffinityWait::kPreempted;
}

// The stopper on rq: it preempts the caller of sched_setaffinity() (or
// follows it as it sleeps), then migration_cpu_stop(): a task still queued
// here moves to the destination; a sleeping one gets it as wake_cpu and is
// woken by complete_all(). The idle task stands in for the stopper, as
// for an active balance (Rq::stopper_ran); schedule() goes on from there.
void Kernel::migration_cpu_stop(Rq& rq) {
  Task& p = *rq.migration_stop_task;
  const int dest = rq.migration_stop_dest;
  rq.migration_stop_task = nullptr;
  rq.migration_stop_dest = -1;
  if (rq.curr != &p) throw ModelError(fmt::format("migration stopper on cpu{}: {} is not running there", rq.cpu, p.comm));
  update_curr(rq);
  TaskState prev_state = TaskState::kRunning;
  if (p.state != TaskState::kRunning) {  // asleep in wait_for_completion() (PREEMPT_NONE)
    prev_state = p.state;
    deactivate_blocking(rq, p);
  }
  class_of(p).put_prev_task(rq, p, nullptr);
  rq.stopper_ran = true;
  switch_to(rq, p, *rq.idle, prev_state);
  SL_DEBUG("{:.6f} migration stopper cpu{}: {}-{} -> cpu{}", now().to_s(), rq.cpu, p.comm, p.pid, dest);
  if (p.on_rq)
    move_queued_task(p, dest);  // __migrate_task(): preempted, or a delayed sleeper
  else
    p.wake_cpu = dest;
  // complete_all(&pending->done): the caller's wait_for_completion() ends.
  if (prev_state != TaskState::kRunning) try_to_wake_up(p, &stop_task_, rq.cpu);
}

}  // namespace schedlab
