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
// Delayed kthread works and kthread_flush_work() are not modelled.
#pragma once

#include <string>
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
  const std::string& name() const { return params_.name; }
  const KthreadWorkerParams& params() const { return params_; }
  Task& task() { return *task_; }

  // kthread_queue_work(): false if the work was already pending.
  // `on_behalf_of` is the task whose priority the work carries (the
  // queuer by default; the DRM scheduler passes the job's submitter);
  // nullptr carries none (an interrupt).
  bool queue_work(WorkStruct& work, QueueContext ctx);
  bool queue_work(WorkStruct& work, QueueContext ctx, const Task* on_behalf_of);

  Action next(Task& self) override;  // kthread_worker_fn()

 private:
  void update_priority();  // the following policy (see above)
  void emit(WorkItemEvent::Phase phase, const WorkStruct& w, Time started = Time::zero(),
            Time wait = Time::zero());
  KthreadWorkerParams params_;
  RunnableTracker& tracker_;
  Fifo<WorkStruct*> work_list_;
  WorkStruct* current_ = nullptr;
  Time cur_queued_, cur_started_, cur_wait_;
  int cur_boost_ = 1000;
};

}  // namespace schedlab
