// How long a kernel thread was runnable but not running over an interval:
// the "CPU wait" of a work item is queue -> execution start, and the part
// of it its worker spent in R (woken or preempted, waiting for a CPU) is
// what a higher priority would have removed -- except where its CPU was
// still idle: a task woken onto an idle CPU is runnable from sched_wakeup
// until that CPU's idle task switches out (the IPI, the rest of an idle
// entry and the exit latency), and no priority shortens that. A remote
// wake-up through the wake list (TTWU_QUEUE) is enqueued only once the CPU
// is up, so it adds about 0 here; a direct enqueue onto an idle CPU
// (TTWU_QUEUE off, a CPU already holding a task while it leaves idle, a
// new task) or a move onto one counts. Observes sched_wakeup,
// sched_switch and sched_migrate_task for the tasks registered with it
// (workqueue workers, kthread_workers) and keeps, per task, the
// breakpoints of its cumulative runnable time and of the part of it spent
// on an idle CPU.
#pragma once

#include <cstdint>
#include <vector>

#include "models/kernel/sched/observer.h"
#include "sim/fifo.h"
#include "sim/time.h"

namespace schedlab {

// A task's runnable time over an interval, and the part of it its CPU was
// still running the idle task.
struct RunnableWait {
  Time runnable;
  Time on_idle_cpu;
};

class RunnableTracker final : public SchedObserver {
 public:
  void track(const Task& p);
  // Time p was runnable and not on a CPU within [from, to], and the part of
  // it after a wake-up onto an idle CPU until that CPU switched from its
  // idle task. Exact while `from` is within the history kept (the last
  // kMaxHistory state changes); older parts of the interval are not
  // counted.
  RunnableWait wait_between(const Task& p, Time from, Time to) const;
  Time runnable_between(const Task& p, Time from, Time to) const { return wait_between(p, from, to).runnable; }

  void on_wakeup(Time t, const Task& p, int cpu) override;
  void on_switch(Time t, int cpu, const Task& prev, TaskState prev_state, const Task& next) override;
  void on_migrate(Time t, const Task& p, int from_cpu, int to_cpu) override;

  static constexpr size_t kMaxHistory = 4096;

 private:
  struct Breakpoint {
    Time t;
    RunnableWait cum;  // accumulated before t
    bool runnable;     // state from t on
    bool on_idle_cpu;  // runnable on a CPU still running its idle task, from t on
  };
  struct State {
    bool tracked = false;
    bool on_cpu = false;
    bool runnable = false;
    int idle_cpu = -1;  // while woken onto an idle CPU that has not switched yet: that CPU
    Fifo<Breakpoint> history;
  };
  State* state(const Task& p);
  const State* state(const Task& p) const;
  void set_state(State& s, Time t, bool runnable, int idle_cpu);
  RunnableWait cum_at(const State& s, Time t) const;
  bool cpu_idle(int cpu) const { return cpu >= static_cast<int>(cpu_busy_.size()) || !cpu_busy_[cpu]; }
  std::vector<State> states_;  // by Task::index
  std::vector<uint8_t> cpu_busy_;  // by CPU: runs a task (not its idle task); grown at the first switch
  int waiting_on_idle_ = 0;        // tasks with idle_cpu >= 0: a switch out of idle looks for them only then
};

}  // namespace schedlab
