// What a task does: the model's stand-in for the code it runs. The kernel
// asks the body for the next action whenever the previous one completes
// while the task is on a CPU (the syscall or cond_resched() boundary).
#pragma once

#include <cstdint>

#include "models/kernel/sched/observer.h"
#include "sim/time.h"

namespace schedlab {

struct Task;

struct Action {
  enum class Kind : uint8_t {
    kRun,      // consume `work` capacity-ns
    kRunWall,  // stay busy until `until` (wall clock, preemption included)
    kBlock,    // sleep in `state` until someone wakes the task
    kYield,    // sched_yield()
    kExit,
    // Return to user space (exit_to_user_mode_loop(), 6.12
    // kernel/entry/common.c): with TIF_NEED_RESCHED or _LAZY set the task
    // calls schedule() there and resumes (next() again) once picked;
    // otherwise the body goes straight on.
    kReturnToUser,
    // preempt_enable() in kernel code (a spin_unlock(), the end of
    // __sched_setscheduler() or set_user_nice()), after the body changed
    // priorities or woke a task: under PREEMPT_FULL, or PREEMPT_LAZY with
    // TIF_NEED_RESCHED (not _LAZY), a pending reschedule is taken here and
    // the task resumes (next() again) once picked; under PREEMPT_NONE and
    // VOLUNTARY, with nothing pending, or with the resched IPI of a remote
    // CPU still in flight, the body goes straight on. Simplified: under
    // PREEMPT_LAZY a wake-up this task makes on its own CPU from a syscall
    // is a full resched in the model (Kernel::resched_curr_lazy() upgrades
    // a local wake-up of a user task, right for an interrupt, not for a
    // syscall), where 6.13+ sets only the lazy flag.
    kPreemptPoint,
    // schedule() in TASK_RUNNING (schedule_preempt_disabled() in a
    // mutex's spin fail path): with TIF_NEED_RESCHED set the task is
    // switched out at once, whatever the preemption model and before any
    // resched IPI arrives, and resumes (next() again) once picked;
    // otherwise the body goes straight on.
    kSchedule,
  };
  Kind kind = Kind::kExit;
  int64_t work = 0;
  Time until;
  TaskState state = TaskState::kInterruptible;
  bool iowait = false;  // kBlock in io_schedule(): p->in_iowait

  static Action run(int64_t work_ns) { Action a; a.kind = Kind::kRun; a.work = work_ns; return a; }
  static Action run_until(Time t) { Action a; a.kind = Kind::kRunWall; a.until = t; return a; }
  static Action block(TaskState s) { Action a; a.kind = Kind::kBlock; a.state = s; return a; }
  // io_schedule(): an uninterruptible sleep waiting for I/O.
  static Action io_wait() { Action a = block(TaskState::kUninterruptible); a.iowait = true; return a; }
  static Action yield() { Action a; a.kind = Kind::kYield; return a; }
  static Action return_to_user() { Action a; a.kind = Kind::kReturnToUser; return a; }
  static Action preempt_point() { Action a; a.kind = Kind::kPreemptPoint; return a; }
  static Action schedule() { Action a; a.kind = Kind::kSchedule; return a; }
  static Action exit() { return Action{}; }
};

class TaskBody {
 public:
  virtual ~TaskBody() = default;
  // Called on the task's CPU, at the current simulated time, when the
  // previous action is complete (for kBlock: after the task was woken).
  virtual Action next(Task& self) = 0;
  // The task is about to block in __schedule() (sched_submit_work() ->
  // wq_worker_sleeping() for workqueue workers: concurrency management).
  virtual void on_sleeping(Task& self) {}
  // The task runs again after having blocked (sched_update_worker() ->
  // wq_worker_running()).
  virtual void on_running(Task& self) {}
};

}  // namespace schedlab
