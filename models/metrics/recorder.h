// The metrics recorder: an observer that turns the scheduler's tracepoints
// into per-task and per-CPU metrics, defined as Perfetto's thread-state
// analysis defines them:
//   wakeup latency  = sched_waking -> switched in
//   runnable wait   = each stretch in R (woken or preempted) -> switched in
//   S / D time      = time switched out in S or D until sched_waking
// Only the window [warmup, end] counts: intervals are clipped to it and
// samples count when they end inside it.
#pragma once

#include <vector>

#include "models/kernel/sched/observer.h"
#include "models/metrics/run_result.h"

namespace schedlab {

class MetricsRecorder final : public SchedObserver {
 public:
  MetricsRecorder(int nr_cpus, Time warmup);
  void on_task_new(Time t, const Task& p) override;
  void on_waking(Time t, const Task& p, const Task* waker, int target_cpu) override;
  void on_switch(Time t, int cpu, const Task& prev, TaskState prev_state, const Task& next) override;
  void on_migrate(Time t, const Task& p, int from_cpu, int to_cpu) override;
  void on_period_end(Time t, const Task& p, Time period_start, Time response, Time period) override;
  // Closes every open interval at `end`.
  void finish(Time end);
  RunResult result(uint64_t seed, uint64_t events) const;

 private:
  enum class St : uint8_t { kNotStarted, kRunnable, kRunning, kSleeping, kBlocked, kDead };
  struct TaskTrack {
    TaskMetrics m;
    St state = St::kNotStarted;
    Time since;
    Time waking = Time::max();
  };
  struct CpuTrack {
    CpuMetrics m;
    bool busy = false;
    Time since;
  };
  TaskTrack& track(const Task& p);
  Time clipped(Time from, Time to) const;
  void close_interval(TaskTrack& tr, Time t);
  bool in_window(Time t) const { return t >= warmup_; }

  Time warmup_;
  Time end_;
  std::vector<TaskTrack> tasks_;  // by pid - 1
  std::vector<CpuTrack> cpus_;
};

}  // namespace schedlab
