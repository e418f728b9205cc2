// What one run produced: per-task and per-CPU metrics over the measured
// window [warmup, duration]. Experiments read only this (and observers).
// Durations are nanoseconds in Samples.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/kernel/decisions.h"
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
  // CPU work executed in the window (Task::work_done): capacity-ns at
  // capacity 1024 and f_max, of `run` and `runtime` events alike. Divided by
  // the window it is the task's throughput in work-seconds per second
  // (1.0 = one capacity-1024 CPU at f_max all the time).
  int64_t work_done = 0;
};

struct CpuMetrics {
  Time busy;   // running any task other than idle
  Time idle;
  uint64_t context_switches = 0;
  int cluster = -1;                 // index into RunResult::clusters; -1 without a power model
  std::vector<uint64_t> opp_khz;    // the cluster's OPPs, ascending
  std::vector<Time> busy_at_opp;    // busy time at each OPP: their sum + idle = elapsed
  double busy_energy_mj = 0;        // dynamic power at the current OPP while busy
  double idle_energy_mj = 0;        // while idle: the power of the idle state it is in; busy power at
                                    // the current OPP while the idle task runs outside a state
  uint64_t frequency_changes = 0;
  // cpuidle residency from the cpu_idle events: time in each idle state,
  // indexed as cpu_idle numbers them (CPU states 0..n-1, then the cluster's
  // states n..; without a governor only state 0), and outside any state
  // (cpu_idle -1: tasks, plus the idle task's own runs such as the
  // governor). cpuidle_running + sum(cpuidle_residency) = elapsed.
  std::vector<Time> cpuidle_residency;
  Time cpuidle_running;
  double energy_mj() const { return busy_energy_mj + idle_energy_mj; }
};

// A frequency domain's energy: its CPUs plus the cluster's static power.
struct ClusterMetrics {
  std::string name;
  std::vector<int> cpus;
  double cpu_energy_mj = 0;     // sum over its CPUs
  double static_energy_mj = 0;  // static power over the window while the cluster was powered, at its OPPs
  // Some idle state of its CPUs has a power figure. Without one (a device
  // tree that gives none) idle costs 0 mW and energy is running time only.
  bool idle_power_known = false;
  double energy_mj() const { return cpu_energy_mj + static_energy_mj; }
};

// Work items of one workqueue or kthread_worker (workqueue_queue_work ->
// workqueue_execute_start -> _end), the thread's "CPU wait" and execution.
struct WorkQueueMetrics {
  std::string name;
  Samples cpu_wait;       // queued -> execution start (ns)
  Samples runnable_wait;  // the part of cpu_wait its worker was runnable, not running
  Samples idle_exit_wait;  // the part of runnable_wait its CPU still ran the idle task (leaving an idle state)
  Samples exec;           // execution start -> end
  uint64_t items = 0;
};

// Jobs of one DRM scheduler entity: drm_sched_entity_push_job -> drm_run_job.
struct DrmEntityMetrics {
  std::string name;       // "sched/entity"
  Samples push_to_run;    // ns
  uint64_t jobs = 0;
};

// Uninterruptible sleeps of one task group inside rpm_resume() (or
// rpm_suspend()) of one device: each sleep's length ("D-state") and the
// part of it its waker was runnable but not running ("waker wait"), as
// Perfetto's thread_state and waker attribution give them.
struct RpmSleepMetrics {
  std::string group;      // TaskSpec name of the sleeping task ("kworker" for workqueue workers)
  std::string device;
  bool in_resume = true;  // rpm_resume() (else rpm_suspend())
  bool woken_by_task = false;  // waited for another context's transition (else a timer: the callback's own hardware wait)
  Samples d_state;        // ns
  Samples waker_wait;     // ns; 0 for sleeps woken by a timer or interrupt
};

// Runtime PM transitions of one device over the window.
struct RpmDeviceMetrics {
  std::string name;
  uint64_t suspends = 0;     // entered RPM_SUSPENDED
  uint64_t resumes = 0;      // entered RPM_ACTIVE from RPM_RESUMING
  Time suspended_time;       // time in RPM_SUSPENDED
};

// Frames of one layer, classified as FrameTimeline does.
struct FrameMetrics {
  std::string layer;
  uint64_t frames = 0;       // presented or dropped
  uint64_t app_missed = 0;   // App Deadline Missed
  uint64_t sf_missed = 0;    // SurfaceFlinger deadline missed
  uint64_t buffer_stuffing = 0;  // presented late behind the layer's previous buffer
  uint64_t dropped = 0;
  uint64_t janky = 0;        // a jank type TimeStats counts (FrameEvent::janky; each frame once)
  Samples app_time;          // vsync -> app work done (ns)
  Samples present_delay;     // expected present -> actual present (ns, >= 0)
};

struct RunResult {
  uint64_t seed = 0;
  Time window_start, window_end;   // the measured window
  std::vector<TaskMetrics> tasks;  // in pid order
  std::vector<CpuMetrics> cpus;
  std::vector<ClusterMetrics> clusters;  // empty without a power model
  std::vector<WorkQueueMetrics> workqueues;  // by name
  std::vector<DrmEntityMetrics> drm_entities;  // by name
  std::vector<RpmSleepMetrics> rpm_sleeps;     // by group, device, resume/suspend
  std::vector<RpmDeviceMetrics> rpm_devices;   // by name
  std::vector<FrameMetrics> frames;            // by layer
  std::vector<DecisionCount> decisions;        // --why only: by kind, group, count (descending), reason
  uint64_t events = 0;             // events dispatched (for benchmarks)
  Time elapsed() const { return window_end - window_start; }
  bool has_power() const { return !clusters.empty(); }
  double total_energy_mj() const {
    double e = 0;
    for (const auto& c : clusters) e += c.energy_mj();
    return e;
  }
  // mJ / s = mW
  double avg_power_mw() const { return elapsed() > Time::zero() ? total_energy_mj() / elapsed().to_s() : 0; }
  uint64_t migrations() const {
    uint64_t n = 0;
    for (const auto& t : tasks) n += t.migrations;
    return n;
  }
};

}  // namespace schedlab
