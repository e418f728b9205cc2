// The metrics recorder: an observer that turns the scheduler's tracepoints
// into per-task and per-CPU metrics, defined as Perfetto's thread-state
// analysis defines them:
//   wakeup latency  = sched_waking -> switched in
//   runnable wait   = each stretch in R (woken or preempted) -> switched in
//   S / D time      = time switched out in S or D until sched_waking
//   work done       = Task::work_done at the window's end minus at its start
// Only the window [warmup, end] counts: intervals are clipped to it and
// samples count when they end inside it.
//
// Work at the window start: the recorder has no event at `warmup`; at the
// first callback at t1 >= warmup nothing has switched or changed frequency
// in (warmup, t1), so each task that ran then ran at one rate, and its work
// in (warmup, t1] is rate x (t1 - max(warmup, switch-in)). Exact up to the
// kernel's per-segment rounding (below 1 ns of work per accounting).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "models/kernel/sched/observer.h"
#include "models/kernel/sched/task.h"
#include "models/metrics/run_result.h"

namespace schedlab {

// Power of each CPU, from the platform (models/system.cc builds it): busy
// power at each OPP, power in each idle state, and each cluster's static power.
struct PowerModel {
  struct Cpu {
    int cluster = 0;
    std::vector<uint64_t> opp_khz;       // ascending
    std::vector<double> busy_power_mw;   // per OPP
    // Per idle state as cpu_idle numbers them: the CPU's states, then its
    // cluster's (a CPU in a cluster state draws that state's power).
    std::vector<double> idle_state_power_mw;
    size_t nr_cpu_states = 1;  // the first states of idle_state_power_mw are the CPU's, the rest its cluster's
    // State 0's power at each OPP (opp_khz order) when the platform gives it
    // per OPP; empty: idle_state_power_mw[0].
    std::vector<double> wfi_power_mw;
    // With bill_idle_transitions: each CPU state's entry and exit latency,
    // billed at busy_power_mw (empty: not billed).
    std::vector<Time> entry_latency, exit_latency;
  };
  struct Cluster {
    std::string name;
    std::vector<int> cpus;
    // Static power at each OPP (the CPUs' opp_khz order), billed while the
    // cluster is powered: not every CPU of it in a cluster idle state (a
    // cluster state is taken to power the cluster down: a retention state,
    // rail kept on, would need its own static figure; none is modelled).
    std::vector<double> static_power_mw;
  };
  std::vector<Cpu> cpus;
  std::vector<Cluster> clusters;
};

class MetricsRecorder final : public SchedObserver {
 public:
  // `power` may be null (no energy accounting: the foundation's platform).
  MetricsRecorder(int nr_cpus, Time warmup, const PowerModel* power = nullptr);
  void on_task_new(Time t, const Task& p) override;
  void on_waking(Time t, const Task& p, const Task* waker, int target_cpu) override;
  void on_switch(Time t, int cpu, const Task& prev, TaskState prev_state, const Task& next) override;
  void on_migrate(Time t, const Task& p, int from_cpu, int to_cpu) override;
  void on_period_end(Time t, const Task& p, Time period_start, Time response, Time period) override;
  void on_cpu_frequency(Time t, int cpu, uint64_t freq_khz) override;
  // The OPP a CPU starts at (t = 0): not a frequency change.
  void set_initial_frequency(int cpu, uint64_t freq_khz);
  void on_cpu_idle(Time t, int cpu, int state) override;
  void on_work_item(Time t, const WorkItemEvent& e) override;
  void on_drm_job(Time t, const DrmJobEvent& e) override;
  // The window opens: takes the work counters at `warmup` exactly, for a
  // caller that has run the simulation to that instant (System::run()).
  // Without it, the first callback at or after warmup takes them.
  void start_window() {
    if (!work_base_taken_) take_work_base(warmup_);
  }
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
    const Task* task = nullptr;  // for its work counter
    int64_t work_base = 0;       // Task::work_done at the window start
  };
  struct CpuTrack {
    CpuMetrics m;
    bool busy = false;
    int idle_state = 0;  // cpu_idle state (-1: none); CPUs boot idle, in state 0
    Time since;
    size_t opp = 0;  // index of the current OPP
    // With billed transitions: when the entry sequence of the idle state
    // the CPU last entered from running ends. (The exit window is billed
    // at the OPP in force when the CPU runs again, a frequency change
    // inside it notwithstanding: at most exit latency x a power step.)
    Time entry_end;
  };
  void close_cpu_interval(size_t cpu, Time t);
  // Energy and time up to t at the old OPP, then cpu's OPP index for freq_khz.
  void switch_opp(Time t, int cpu, uint64_t freq_khz);
  // Power of `cpu` in idle state `state` (>= 0) at OPP `opp`.
  double idle_state_power(size_t cpu, int state, size_t opp) const;
  // A cluster's static power: how many of its CPUs are in a cluster idle
  // state (all of them: powered down, no static power).
  struct ClusterTrack {
    Time since;
    size_t cpus_in_cluster_state = 0;
    double static_energy_mj = 0;
  };
  void close_cluster_interval(size_t cluster, Time t);
  // The CPU's idle state changed to `state` (-1: none): its cluster's count.
  void set_cpu_idle_state(size_t cpu, int state, Time t);
  bool in_cluster_state(size_t cpu) const;  // its idle state is one of its cluster's
  // The task's track; a task seen for the first time is set up out of line.
  TaskTrack& track(const Task& p) {
    const size_t i = static_cast<size_t>(p.pid - 1);
    if (i < tasks_.size() && tasks_[i].m.pid != 0) [[likely]] return tasks_[i];
    return track_slow(p);
  }
  TaskTrack& track_slow(const Task& p);
  Time clipped(Time from, Time to) const {
    Time a = max(from, warmup_);
    return to > a ? to - a : Time::zero();
  }
  void close_interval(TaskTrack& tr, Time t) {
    Time d = clipped(tr.since, t);
    switch (tr.state) {
      case St::kRunnable: tr.m.runnable_time += d; break;
      case St::kRunning: tr.m.cpu_time += d; break;
      case St::kSleeping: tr.m.sleep_time += d; break;
      case St::kBlocked: tr.m.blocked_time += d; break;
      default: break;
    }
    tr.since = t;
  }
  bool in_window(Time t) const { return t >= warmup_; }
  // Every callback first: the work counters at the window start.
  void observe(Time t) {
    if (!work_base_taken_ && t >= warmup_) take_work_base(t);
  }
  void take_work_base(Time t1);
  bool work_base_taken_ = false;

  Time warmup_;
  Time end_;
  const PowerModel* power_ = nullptr;
  std::vector<TaskTrack> tasks_;  // by pid - 1
  std::map<std::string, WorkQueueMetrics, std::less<>> workqueues_;
  std::map<std::string, DrmEntityMetrics, std::less<>> drm_;
  std::vector<CpuTrack> cpus_;
  std::vector<ClusterTrack> clusters_;  // with a power model
};

}  // namespace schedlab
