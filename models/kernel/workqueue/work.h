// Work items as the kernel's execution contexts run them: a named
// work_struct (include/linux/workqueue.h) or kthread_work
// (include/linux/kthread.h) with a PENDING bit and a function. Workqueue
// workers (workqueue.h) and kthread_workers (models/kernel/kthread_worker.h)
// execute them; devices (models/devices/) and rt-app-like tasks queue them.
//
// The function is the model's stand-in for the code a work item runs and
// is stepped like a TaskBody: each step returns CPU work, a sleep, or
// "returned".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/kernel/sched/task.h"
#include "models/kernel/task_body.h"
#include "sim/event_queue.h"
#include "sim/time.h"

namespace schedlab {

class Kernel;
struct Task;

// Who queues a work item: a QueueContext (models/kernel/sched/observer.h).

// What executing a work item looks like from inside: the worker task and
// the services its function needs.
class WorkExec {
 public:
  virtual ~WorkExec() = default;
  virtual Kernel& kernel() = 0;
  virtual Task& worker() = 0;
  // The worker sleeps in D for exactly `d` on an hrtimer with no slack
  // (hrtimer_nanosleep()-like; a hardware wait in a driver callback). Not
  // schedule_timeout_uninterruptible()'s jiffy timer (at least a tick at
  // HZ=250) nor usleep_range()'s window. Returns the action the function
  // must return.
  virtual Action sleep_for(Time d) = 0;
  // The context to queue further work from (the worker, on its CPU).
  QueueContext context() { return QueueContext{&worker(), worker().cpu}; }
  int step = 0;  // steps already taken by the current execution
};

// A work item's function (work_func_t / kthread_work_func_t).
class WorkFn {
 public:
  virtual ~WorkFn() = default;
  // Called when execution starts (x.step == 0) and each time the previous
  // action completed. Returns Action::run(work) for CPU work (capacity
  // time), x.sleep_for(d) to block, or Action::exit() when it returns.
  virtual Action step(WorkExec& x) = 0;
};

// One step of a scripted function: CPU work or an uninterruptible sleep.
// A work item without a WorkFn runs the steps its queuer gave (`payload`).
struct WorkStep {
  enum class Kind : uint8_t { kRun, kSleep };
  Kind kind = Kind::kRun;
  Time amount;
};

// struct work_struct / struct kthread_work: identity and queueing state.
// The executing context keeps its own copy of what it needs, so a work item
// may be queued again (and be pending) while it still runs, as in the kernel.
struct WorkStruct {
  explicit WorkStruct(std::string n, WorkFn* f = nullptr) : name(std::move(n)), fn(f) {}
  std::string name;
  WorkFn* fn = nullptr;                // not owned; nullptr: run `payload`
  std::vector<WorkStep> payload;       // the steps to run when fn is nullptr (set by the queuer)

  // Queueing state (owned by the workqueue or kthread_worker it is on).
  bool pending = false;                // WORK_STRUCT_PENDING: queued or its delayed timer armed
  bool timer_armed = false;            // delayed work: waiting for its timer
  Time requested;                      // queue_*work() call time
  Time queued;                         // put on a queue (CPU wait starts)
  int req_cpu = -1;                    // queue_work_on() CPU, -1 = WORK_CPU_UNBOUND
  int queue_cpu = -1;                  // CPU it was queued from
  const void* last_pool = nullptr;     // worker pool it last ran on (non-reentrancy)
  const void* running_on = nullptr;    // the worker executing it now, if any
  void* pwq = nullptr;                 // workqueue: the pool_workqueue it is queued on
  int boost_prio = 1000;               // kthread_worker priority following: the queuer's priority
  int canceling = 0;                   // (kthread_)cancel_(delayed_)work_sync() in progress: queuing blocked (the disable count)
  const void* kthread_worker = nullptr;  // the kthread_worker it belongs to (work->worker), once queued
  bool flush_barrier = false;          // a flush's own work (insert_wq_barrier(): no nr_active slot; kthread_flush_work())
  uint64_t executions = 0;
};

// Runs one work item at a time for a worker task: the function's steps,
// its sleeps (a timer that wakes the worker) and the scripted payload.
// Base of the workqueue worker and the kthread_worker.
class WorkExecutor : public WorkExec, public EventHandler {
 public:
  explicit WorkExecutor(Kernel& k);
  Kernel& kernel() override { return k_; }
  Task& worker() override { return *task_; }
  Action sleep_for(Time d) override;
  void on_event(uint64_t tag) override { on_timer(); }

 protected:
  // The timer fired: by default the end of a function's sleep.
  virtual void on_timer();
  void begin(WorkStruct& w);  // execution of w starts (step 0)
  Action exec_step();         // the function's next action; Action::exit() when it returned
  Kernel& k_;
  Task* task_ = nullptr;
  Timer timer_;
  int timer_cpu_ = 0;  // the CPU whose hrtimer base holds timer_

 private:
  WorkFn* fn_ = nullptr;
  std::vector<WorkStep> script_;
};

}  // namespace schedlab
