// What one run produced: per-task and per-CPU metrics over the measured
// window [warmup, duration]. Experiments read only this (and observers).
// Durations are nanoseconds in Samples.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/workload/task_spec.h"
#include "sim/stats.h"
#include "sim/time.h"

namespace schedlab {

struct TaskMetrics {
  std::string name;     // comm
  std::string group;    // TaskSpec name (instances share it)
  int pid = 0;
  Policy policy = Policy::kNormal;
  int nice = 0;
  int rt_priority = 0;
  Samples wakeup_latency;  // sched_waking -> switched in
  Samples runnable_wait;   // each stretch in R before being switched in (wakeups and preemptions)
  Samples response;        // per period of a timer-driven task: period start -> reaching the timer again
  uint64_t periods = 0;
  uint64_t deadline_misses = 0;  // response > period
  Time cpu_time;                 // time on a CPU
  Time runnable_time;            // time in R, not running
  Time sleep_time;               // S
  Time blocked_time;             // D
  uint64_t wakeups = 0;
  uint64_t preemptions = 0;      // involuntary switches out (prev_state R)
  uint64_t switches_in = 0;
  uint64_t migrations = 0;
};

struct CpuMetrics {
  Time busy;   // running any task other than idle
  Time idle;
  uint64_t context_switches = 0;
};

struct RunResult {
  uint64_t seed = 0;
  Time window_start, window_end;   // the measured window
  std::vector<TaskMetrics> tasks;  // in pid order
  std::vector<CpuMetrics> cpus;
  uint64_t events = 0;             // events dispatched (for benchmarks)
  Time elapsed() const { return window_end - window_start; }
};

}  // namespace schedlab
