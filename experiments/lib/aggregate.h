// Aggregation of the RunResults of N runs of one scenario: per task, per task
// group (a TaskSpec's instances) and per CPU. Distributions are pooled
// (every sample of every run in one summary); counts are summed and also
// given as means per run; CPU share is cpu_time / elapsed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/metrics/run_result.h"
#include "sim/stats.h"
#include "sim/time.h"

namespace schedlab {

// What a report needs to know about the scenario that was run.
struct ScenarioInfo {
  std::string name;            // file stem of the source ("two_hogs")
  std::string source;          // the file as given
  std::string kernel_version;  // "6.12"
  int hz = 0;
  std::string preempt;         // none | voluntary | full | lazy
  int cpus = 0;
  Time duration, warmup;
  // Some of kernel.overheads' context switch, wake-up and IPI costs is set.
  // Without them a wake-up onto a free CPU has no latency at all.
  bool overheads_modelled = false;
};

// Metrics of one task, or of a group of tasks, over all runs.
struct TaskStats {
  int runs = 0;                 // runs the task (group) appeared in
  Time elapsed;                 // sum over those runs of the measured window
  Summary wakeup_latency;       // pooled, ns
  Summary runnable_wait;        // pooled, ns
  Summary response;             // pooled, ns
  uint64_t wakeups = 0, preemptions = 0, switches_in = 0, migrations = 0;
  uint64_t periods = 0, deadline_misses = 0;
  Time cpu_time, runnable_time, sleep_time, blocked_time;

  // cpu_time / elapsed: 1.0 is one CPU for the whole window (a group can
  // exceed 1 on several CPUs). 0 when nothing elapsed.
  double cpu_share() const;
  // A count divided by `runs` (0 when runs == 0).
  double per_run(uint64_t count) const;
};

struct TaskAggregate {
  std::string name;   // comm
  std::string group;
  int pid = 0;
  Policy policy = Policy::kNormal;
  int nice = 0;
  int rt_priority = 0;
  TaskStats stats;
};

struct GroupAggregate {
  std::string name;
  int instances = 0;  // distinct tasks seen in the group
  Policy policy = Policy::kNormal;
  int nice = 0;
  int rt_priority = 0;
  bool mixed_policy = false;  // instances differ in policy/nice/priority
  TaskStats stats;            // all instances, all runs
};

struct CpuAggregate {
  int cpu = 0;
  int runs = 0;
  Time busy, idle, elapsed;  // sums over runs
  uint64_t context_switches = 0;
  double busy_fraction() const;  // busy / elapsed
  double idle_fraction() const;  // idle / elapsed
  double per_run(uint64_t count) const;
};

// busy + idle = elapsed must hold exactly for every CPU in every run.
struct ConservationCheck {
  bool holds = true;
  int64_t max_error_ns = 0;  // max |busy + idle - elapsed|
  // The first violation (when !holds).
  int run = -1, cpu = -1;
  Time busy, idle, elapsed;
};

struct Aggregate {
  int runs = 0;
  Time elapsed;  // sum of the runs' measured windows
  std::vector<TaskAggregate> tasks;    // by pid, then name
  std::vector<GroupAggregate> groups;  // in order of first appearance (pid order)
  std::vector<CpuAggregate> cpus;
  ConservationCheck check;
  bool any_group_with_instances() const;  // some group has > 1 instance
};

Aggregate aggregate_runs(const std::vector<RunResult>& runs);
// The stats of one task in one run (runs = 1, elapsed = the run's window).
TaskStats task_stats(const TaskMetrics& m, Time elapsed);

// Everything a report needs: the scenario, the seeds, each run, the aggregate.
struct RunSet {
  ScenarioInfo scenario;
  uint64_t base_seed = 0;
  Time start_jitter = Time::zero();  // each task's start delayed by up to this (with_start_jitter())
  std::vector<RunResult> runs;  // runs[i] used derive_seed(base_seed, i)
  Aggregate aggregate;
};

// "SCHED_OTHER" -> "OTHER" etc., and the table's policy/priority column:
// "OTHER n0", "BATCH n5", "IDLE", "FIFO 50", "RR 10".
const char* policy_short_name(Policy p);
const char* policy_long_name(Policy p);  // "SCHED_OTHER", "SCHED_FIFO", ...
std::string policy_prio_label(Policy p, int nice, int rt_priority);
// The kernel priority value (task->prio without PI boost): 99 - rt_priority
// for FIFO/RR, 120 + nice otherwise.
int kernel_prio(Policy p, int nice, int rt_priority);

}  // namespace schedlab
