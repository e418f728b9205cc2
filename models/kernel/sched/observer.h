// What the scheduler model reports as it runs: the tracepoints of
// include/trace/events/sched.h (sched_waking, sched_wakeup, sched_switch,
// sched_migrate_task) plus power:cpu_idle and rt-app-like period ends.
// The metrics recorder and the trace writers are observers; nothing else
// reaches into the model.
#pragma once

#include "sim/time.h"

namespace schedlab {

struct Task;

// Task states as sched_switch's prev_state prints them.
enum class TaskState : uint8_t {
  kRunning,          // R (runnable or on CPU)
  kInterruptible,    // S
  kUninterruptible,  // D
  kDead,             // X
  kNew,              // not started yet
};

char task_state_letter(TaskState s);

class SchedObserver {
 public:
  virtual ~SchedObserver() = default;
  virtual void on_task_new(Time t, const Task& p) {}
  // try_to_wake_up() began (sched_waking); target_cpu as chosen.
  virtual void on_waking(Time t, const Task& p, const Task* waker, int target_cpu) {}
  // The task is on a run-queue (sched_wakeup / sched_wakeup_new).
  virtual void on_wakeup(Time t, const Task& p, int cpu) {}
  // prev left the CPU in prev_state (R: preempted or yielded); next runs.
  // prev or next may be the idle task (pid 0).
  virtual void on_switch(Time t, int cpu, const Task& prev, TaskState prev_state, const Task& next) {}
  virtual void on_migrate(Time t, const Task& p, int from_cpu, int to_cpu) {}
  // cpu_idle: state >= 0 entering an idle state, -1 leaving idle.
  virtual void on_cpu_idle(Time t, int cpu, int state) {}
  // A periodic task reached its timer: the period that began at
  // `period_start` took `response` (miss when response > period).
  virtual void on_period_end(Time t, const Task& p, Time period_start, Time response, Time period) {}
  // power:cpu_frequency: the CPU's frequency domain switched to freq_khz
  // (emitted for every CPU of the domain).
  virtual void on_cpu_frequency(Time t, int cpu, uint64_t freq_khz) {}
  // Priority changed (PI boost/unboost, setscheduler): sched_pi_setprio.
  virtual void on_prio_change(Time t, const Task& p, int old_prio, int new_prio) {}
};

}  // namespace schedlab
