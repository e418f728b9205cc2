// kthread_worker (kernel/kthread.c, Linux 6.12): one dedicated kernel
// thread running kthread_worker_fn(), executing queued kthread_works one
// at a time in queue order, sleeping (TASK_INTERRUPTIBLE) when the list is
// empty. kthread_queue_work() does nothing for a pending work and wakes the
// worker when it is not executing one (kthread_insert_work()).
//
// The thread has its own policy (sched_setattr_nocheck() by its creator)
// and, for the DRM submit-latency RFC (../shared/seeds/
// drm_sched_submit_latency.md), may follow the priority of the tasks that
// queued its pending work:
//   follow: none      the worker keeps its own policy;
//   follow: min_nice  it temporarily takes the best priority among the
//                     queuers of its pending and running works, but never
//                     above MIN_NICE: an RT queuer gives SCHED_OTHER nice -20
//                     ("--RFC", capped);
//   follow: fifo      the same all the way to SCHED_FIFO at the queuer's RT
//                     priority ("Full RFC").
// The RFC's code was not available: when the priority changes is an
// assumption, stated here. The worker is raised when a work is queued
// (before it is woken, so it wakes at the new priority) and re-evaluated
// when each work returns (lowered once no pending work asks for more). It
// never goes below its own policy. Changes go through
// Kernel::set_scheduler() (a sched_setattr_nocheck()); a queuer's priority
// is its normal priority at queue time (PI boosts are not inherited).
//
// Delayed works (kthread.c, 6.12): kthread_queue_delayed_work() arms the
// work's timer_list (add_timer() on the queuing CPU: it runs from that
// CPU's tick, rounded to jiffies and the wheel's bucket, as
// Kernel::timer_list_fire_time()) and the work is pending from then; the
// timer's kthread_delayed_work_timer_fn() inserts it in the work list,
// waking the worker if it is not executing a work. A zero delay inserts
// at once. kthread_mod_delayed_work() takes a pending work back (its timer
// deleted, or off the work list) and queues it again with the new delay
// (a display driver's idle timer re-armed at each frame);
// kthread_cancel_delayed_work_sync() takes it back and, if it is
// executing, sleeps (D) until that execution returns
// (kthread_flush_work(): its flush work at the list's head), queuing being
// blocked meanwhile (work->canceling).
// kthread_flush_work() itself inserts a flush work (a "kthread_flush_work"
// item the worker runs, at no cost) right after the queued work, or at
// the list's head while the work executes, and sleeps (D) until it runs;
// a work taken back meanwhile leaves the flush work in its place. A
// kthread_work belongs to one worker (a second is a model error).
// Simplified: the timer stays on its CPU (6.12's timer migration may
// expire it on another while this one idles). The following policy and
// delayed works (an assumption, as the policy is): a work whose timer is
// armed raises the worker only once its timer inserts it; one taken back
// (mod, cancel) stops counting at once; a mod'ed work carries the
// priority of the task that mod'ed it; a kthread_flush_work()'s flush work
// carries none (its caller only waits).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/kernel/workqueue/runnable_tracker.h"
#include "models/kernel/workqueue/work.h"
#include "models/kernel/workqueue/workqueue_params.h"
#include "models/workload/task_spec.h"
#include "sim/fifo.h"

namespace schedlab {

class Kernel;

const char* kthread_follow_name(KthreadFollow f);  // "none", "min_nice", "fifo"

class KthreadWorker final : public TaskBody, public WorkExecutor {
 public:
  // kthread_create_worker(): creates the thread (started at `start`).
  KthreadWorker(Kernel& k, const KthreadWorkerParams& params, RunnableTracker& tracker, Time start = Time::zero());
  ~KthreadWorker() override;
  const std::string& name() const { return params_.name; }
  const KthreadWorkerParams& params() const { return params_; }
  Task& task() { return *task_; }

  // kthread_queue_work(): false if the work was already pending.
  // `on_behalf_of` is the task whose priority the work carries (the
  // queuer by default; the DRM scheduler passes the job's submitter);
  // nullptr carries none (an interrupt).
  bool queue_work(WorkStruct& work, QueueContext ctx);
  bool queue_work(WorkStruct& work, QueueContext ctx, const Task* on_behalf_of);

  // kthread_queue_delayed_work(): false if the work was already pending
  // or is being cancelled.
  bool queue_delayed_work(WorkStruct& work, QueueContext ctx, Time delay, const Task* on_behalf_of);
  // kthread_mod_delayed_work(): true if the work was pending (and is
  // queued again with `delay`), false if it was idle (or executing, not
  // pending) and is queued; true without queuing while a cancel_sync is
  // in progress.
  bool mod_delayed_work(WorkStruct& work, QueueContext ctx, Time delay, const Task* on_behalf_of);
  // kthread_cancel_delayed_work_sync() from `self`'s body, one step at a
  // time: std::nullopt once the work is neither pending nor executing
  // (the first step cancels it); otherwise the sleep to return, after
  // which the body calls it again. `was_pending` is set at the first step.
  std::optional<Action> cancel_delayed_work_sync_step(Task& self, WorkStruct& work, bool* was_pending = nullptr);
  // kthread_flush_work() from `self`'s body, stepped the same way: a
  // flush work inserted right after the queued work, or at the list's
  // head while the work executes, whose run by the worker wakes `self`;
  // nothing to wait for otherwise. A delayed work waiting for its timer is
  // a model error: 6.12 puts the flush on the delayed list, where no one
  // runs it, and the caller never returns.
  std::optional<Action> flush_work_step(Task& self, WorkStruct& work);

  Action next(Task& self) override;  // kthread_worker_fn()

 private:
  struct DelayedTimer;
  bool queuing_blocked(WorkStruct& work, const Task* on_behalf_of);
  void insert_work(WorkStruct& work, QueueContext ctx);  // kthread_insert_work()
  void queue_delayed(WorkStruct& work, QueueContext ctx, Time delay, const Task* on_behalf_of);
  bool cancel_pending(WorkStruct& work, bool update = true);  // its timer, then __kthread_cancel_work()
  void claim(WorkStruct& work);  // the work's worker is this one (else a ModelError)
  void delayed_timer_fired(DelayedTimer& d);
  DelayedTimer* timer_of(const WorkStruct& work);  // its timer, once it was ever delayed
  void update_priority();  // the following policy (see above)
  void emit(WorkItemEvent::Phase phase, const WorkStruct& w, Time started = Time::zero(), RunnableWait wait = {});
  KthreadWorkerParams params_;
  RunnableTracker& tracker_;
  Fifo<WorkStruct*> work_list_;
  WorkStruct* current_ = nullptr;
  Time cur_queued_, cur_started_;
  RunnableWait cur_wait_;
  int cur_boost_ = 1000;
  std::vector<std::unique_ptr<DelayedTimer>> timers_;  // one per delayed work, kept for its next use
  // kthread_flush_work()'s flush works (also a cancel_sync's), each with
  // its caller; reused once run.
  struct FlushWork {
    WorkStruct work{"kthread_flush_work"};
    Task* waiter = nullptr;
    WorkStruct* canceling = nullptr;  // a cancel_sync's work, whose queuing is blocked until the wait ends
    bool done = false;
  };
  bool flush_waiting(Task& self, std::optional<Action>* next);  // `self` already waits: *next is its step
  Action insert_flush(Task& self, size_t at, WorkStruct* canceling);
  std::vector<std::unique_ptr<FlushWork>> flush_works_;
};

}  // namespace schedlab
