// How long a kernel thread was runnable but not running over an interval:
// the "CPU wait" of a work item is queue -> execution start, and the part
// of it its worker spent in R (woken or preempted, waiting for a CPU) is
// what a higher priority would have removed. Observes sched_wakeup and
// sched_switch for the tasks registered with it (workqueue workers,
// kthread_workers) and keeps, per task, the breakpoints of its cumulative
// runnable time.
#pragma once

#include <cstdint>
#include <vector>

#include "models/kernel/sched/observer.h"
#include "sim/fifo.h"
#include "sim/time.h"

namespace schedlab {

class RunnableTracker final : public SchedObserver {
 public:
  void track(const Task& p);
  // Time p was runnable and not on a CPU within [from, to]. Exact while
  // `from` is within the history kept (the last kMaxHistory state
  // changes); older parts of the interval are not counted.
  Time runnable_between(const Task& p, Time from, Time to) const;

  void on_wakeup(Time t, const Task& p, int cpu) override;
  void on_switch(Time t, int cpu, const Task& prev, TaskState prev_state, const Task& next) override;

  static constexpr size_t kMaxHistory = 4096;

 private:
  struct Breakpoint {
    Time t;
    Time cum;        // runnable time accumulated before t
    bool runnable;   // state from t on
  };
  struct State {
    bool tracked = false;
    bool on_cpu = false;
    bool runnable = false;
    Fifo<Breakpoint> history;
  };
  State* state(const Task& p);
  const State* state(const Task& p) const;
  void set_runnable(State& s, Time t, bool runnable);
  Time cum_at(const State& s, Time t) const;
  std::vector<State> states_;  // by Task::index
};

}  // namespace schedlab
