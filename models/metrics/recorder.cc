#include "models/metrics/recorder.h"

#include <algorithm>

#include "models/kernel/sched/task.h"

namespace schedlab {

MetricsRecorder::MetricsRecorder(int nr_cpus, Time warmup, const PowerModel* power)
    : warmup_(warmup), power_(power), cpus_(nr_cpus) {
  for (CpuTrack& tr : cpus_) tr.m.cpuidle_residency.assign(1, Time::zero());  // state 0 (grows with the events)
  if (!power_) return;
  for (size_t c = 0; c < cpus_.size(); ++c) {
    const auto& pc = power_->cpus[c];
    CpuTrack& tr = cpus_[c];
    tr.m.cluster = pc.cluster;
    tr.m.opp_khz = pc.opp_khz;
    tr.m.busy_at_opp.assign(pc.opp_khz.size(), Time::zero());
    tr.opp = pc.opp_khz.empty() ? 0 : pc.opp_khz.size() - 1;  // until told otherwise: f_max
    tr.m.cpuidle_residency.assign(std::max<size_t>(1, pc.idle_state_power_mw.size()), Time::zero());
  }
  clusters_.resize(power_->clusters.size());
}

// A frequency domain's CPUs share the OPP: the cluster's is its first CPU's.
void MetricsRecorder::close_cluster_interval(size_t cluster, Time t) {
  ClusterTrack& c = clusters_[cluster];
  const Time d = clipped(c.since, t);
  c.since = t;
  const auto& pcl = power_->clusters[cluster];
  if (d <= Time::zero() || pcl.cpus.empty() || c.cpus_in_cluster_state == pcl.cpus.size()) return;
  const size_t opp = cpus_[static_cast<size_t>(pcl.cpus.front())].opp;
  if (opp < pcl.static_power_mw.size()) c.static_energy_mj += pcl.static_power_mw[opp] * d.to_s();
}

bool MetricsRecorder::in_cluster_state(size_t cpu) const {
  const int s = cpus_[cpu].idle_state;
  return power_ && s >= 0 && static_cast<size_t>(s) >= power_->cpus[cpu].nr_cpu_states;
}

double MetricsRecorder::idle_state_power(size_t cpu, int state, size_t opp) const {
  const auto& pc = power_->cpus[cpu];
  if (state == 0 && opp < pc.wfi_power_mw.size()) return pc.wfi_power_mw[opp];
  const auto st = static_cast<size_t>(state);
  return st < pc.idle_state_power_mw.size() ? pc.idle_state_power_mw[st] : 0.0;
}

void MetricsRecorder::set_cpu_idle_state(size_t cpu, int state, Time t) {
  CpuTrack& c = cpus_[cpu];
  if (power_ && !power_->cpus[cpu].entry_latency.empty() && (c.idle_state < 0) != (state < 0)) {
    // Billed transitions (bill_idle_transitions). Entering from running:
    // the entry sequence runs first. Leaving (the CPU runs again at t): the
    // exit latency before t ran at busy power, not the state's (billed at
    // the state's power up to t just now). A cluster state's own latencies
    // are not billed: its CPUs count their deepest CPU state's.
    const auto& pc = power_->cpus[cpu];
    if (state >= 0) {
      const auto st = std::min(static_cast<size_t>(state), pc.nr_cpu_states - 1);
      c.entry_end = t + pc.entry_latency[st];
    } else {
      const auto st = std::min(static_cast<size_t>(c.idle_state), pc.nr_cpu_states - 1);
      const Time resident = t - min(t, c.entry_end);  // after the entry sequence
      const Time exit = min(pc.exit_latency[st], resident);
      const Time d = clipped(t - exit, t);
      if (d > Time::zero())
        c.m.idle_energy_mj += (pc.busy_power_mw[c.opp] - idle_state_power(cpu, c.idle_state, c.opp)) * d.to_s();
    }
  }
  const bool was = in_cluster_state(cpu);
  cpus_[cpu].idle_state = state < 0 ? -1 : state;
  const bool is = in_cluster_state(cpu);
  if (was == is) return;
  const size_t cl = static_cast<size_t>(power_->cpus[cpu].cluster);
  close_cluster_interval(cl, t);  // billed up to t with the old count (the state changed at t)
  if (is)
    ++clusters_[cl].cpus_in_cluster_state;
  else
    --clusters_[cl].cpus_in_cluster_state;
}

// Busy or idle time, idle-state residency (and their energy) of `cpu` from
// its last change to t.
void MetricsRecorder::close_cpu_interval(size_t cpu, Time t) {
  CpuTrack& c = cpus_[cpu];
  Time d = clipped(c.since, t);
  if (c.busy)
    c.m.busy += d;
  else
    c.m.idle += d;
  const size_t st = static_cast<size_t>(c.idle_state);
  if (c.idle_state < 0)
    c.m.cpuidle_running += d;
  else
    c.m.cpuidle_residency[st] += d;
  if (power_ && d > Time::zero()) {
    const auto& pc = power_->cpus[cpu];
    if (c.busy) {
      c.m.busy_at_opp[c.opp] += d;
      c.m.busy_energy_mj += pc.busy_power_mw[c.opp] * d.to_s();
    } else if (c.idle_state >= 0) {
      // The entry sequence's part of d (billed transitions only) at busy
      // power, the rest at the state's.
      const Time entry = c.entry_end > c.since ? clipped(c.since, min(t, c.entry_end)) : Time::zero();
      // The entry term only when there is one: without billing the sum is
      // the state's power x d alone, rounded as it always was.
      if (entry > Time::zero()) c.m.idle_energy_mj += pc.busy_power_mw[c.opp] * entry.to_s();
      c.m.idle_energy_mj += idle_state_power(cpu, c.idle_state, c.opp) * (d - entry).to_s();
    } else {
      // The idle task runs (governor, idle entry): busy power at the OPP.
      c.m.idle_energy_mj += pc.busy_power_mw[c.opp] * d.to_s();
    }
  }
  c.since = t;
}

void MetricsRecorder::on_cpu_idle(Time t, int cpu, int state) {
  observe(t);
  close_cpu_interval(static_cast<size_t>(cpu), t);
  set_cpu_idle_state(static_cast<size_t>(cpu), state, t);
  CpuTrack& c = cpus_[static_cast<size_t>(cpu)];
  if (state >= 0 && static_cast<size_t>(state) >= c.m.cpuidle_residency.size())
    c.m.cpuidle_residency.resize(static_cast<size_t>(state) + 1, Time::zero());
}

void MetricsRecorder::on_cpu_frequency(Time t, int cpu, uint64_t freq_khz) {
  observe(t);
  if (!power_) return;
  switch_opp(t, cpu, freq_khz);
  if (in_window(t)) ++cpus_[static_cast<size_t>(cpu)].m.frequency_changes;
}

void MetricsRecorder::set_initial_frequency(int cpu, uint64_t freq_khz) {
  observe(Time::zero());
  if (power_) switch_opp(Time::zero(), cpu, freq_khz);
}

void MetricsRecorder::switch_opp(Time t, int cpu, uint64_t freq_khz) {
  close_cpu_interval(static_cast<size_t>(cpu), t);
  CpuTrack& c = cpus_[static_cast<size_t>(cpu)];
  // The cluster's static power at the old OPP up to t (a no-op for the
  // domain's other CPUs, told at the same t).
  close_cluster_interval(static_cast<size_t>(power_->cpus[static_cast<size_t>(cpu)].cluster), t);
  const auto& opps = power_->cpus[static_cast<size_t>(cpu)].opp_khz;
  for (size_t i = 0; i < opps.size(); ++i)
    if (opps[i] == freq_khz) c.opp = i;
}

MetricsRecorder::TaskTrack& MetricsRecorder::track_slow(const Task& p) {
  size_t i = static_cast<size_t>(p.pid - 1);
  if (i >= tasks_.size()) tasks_.resize(i + 1);
  TaskTrack& tr = tasks_[i];
  if (tr.m.pid == 0) {
    tr.m.pid = p.pid;
    tr.m.name = p.comm;
    tr.m.group = p.group;
    tr.m.policy = p.policy;
    tr.m.nice = p.nice();
    tr.m.rt_priority = p.rt_priority;
    tr.task = &p;
    tr.work_base = p.work_done;  // new after the window start: from here
  }
  return tr;
}

void MetricsRecorder::on_task_new(Time t, const Task& p) {
  observe(t);
  TaskTrack& tr = track(p);
  tr.state = St::kRunnable;
  tr.since = t;
}

void MetricsRecorder::on_waking(Time t, const Task& p, const Task* waker, int target_cpu) {
  observe(t);
  TaskTrack& tr = track(p);
  // A task woken before it left the CPU never stopped running.
  if (tr.state != St::kSleeping && tr.state != St::kBlocked) return;
  close_interval(tr, t);
  tr.state = St::kRunnable;
  tr.waking = t;
  if (in_window(t)) ++tr.m.wakeups;
}

void MetricsRecorder::on_switch(Time t, int cpu, const Task& prev, TaskState prev_state, const Task& next) {
  observe(t);
  CpuTrack& c = cpus_[static_cast<size_t>(cpu)];
  close_cpu_interval(static_cast<size_t>(cpu), t);
  c.busy = !next.is_idle_task;
  if (c.busy) set_cpu_idle_state(static_cast<size_t>(cpu), -1, t);  // a CPU running a task is in no idle state
  if (in_window(t)) ++c.m.context_switches;

  if (!prev.is_idle_task) {
    TaskTrack& tr = track(prev);
    close_interval(tr, t);
    switch (prev_state) {
      case TaskState::kRunning:
        tr.state = St::kRunnable;
        if (in_window(t)) ++tr.m.preemptions;
        break;
      case TaskState::kInterruptible: tr.state = St::kSleeping; break;
      case TaskState::kUninterruptible: tr.state = St::kBlocked; break;
      default: tr.state = St::kDead; break;
    }
  }
  if (!next.is_idle_task) {
    TaskTrack& tr = track(next);
    bool count = in_window(t);
    if (tr.state == St::kRunnable && count) tr.m.runnable_wait.add((t - tr.since).count());
    if (tr.waking != Time::max()) {
      if (count) tr.m.wakeup_latency.add((t - tr.waking).count());
      tr.waking = Time::max();
    }
    close_interval(tr, t);
    tr.state = St::kRunning;
    if (count) ++tr.m.switches_in;
  }
}

void MetricsRecorder::on_migrate(Time t, const Task& p, int from_cpu, int to_cpu) {
  observe(t);
  if (in_window(t)) ++track(p).m.migrations;
}

void MetricsRecorder::on_period_end(Time t, const Task& p, Time period_start, Time response, Time period) {
  observe(t);
  if (!in_window(t)) return;
  TaskTrack& tr = track(p);
  tr.m.response.add(response.count());
  ++tr.m.periods;
  if (response > period) ++tr.m.deadline_misses;
}

// Work items count when they end inside the window; a flush's own work
// does not (its "CPU wait" is its caller's wait for the flushed item).
void MetricsRecorder::on_work_item(Time t, const WorkItemEvent& e) {
  observe(t);
  if (e.phase != WorkItemEvent::Phase::kEnd || !in_window(t) || e.flush_barrier) return;
  auto it = workqueues_.find(e.workqueue);
  if (it == workqueues_.end()) it = workqueues_.emplace(std::string(e.workqueue), WorkQueueMetrics{}).first;
  WorkQueueMetrics& m = it->second;
  m.name = it->first;
  m.cpu_wait.add((e.started - e.queued).count());
  m.runnable_wait.add(e.runnable_wait.count());
  m.idle_exit_wait.add(e.idle_exit_wait.count());
  m.exec.add((t - e.started).count());
  ++m.items;
}

void MetricsRecorder::on_drm_job(Time t, const DrmJobEvent& e) {
  observe(t);
  if (e.phase != DrmJobEvent::Phase::kRun || !in_window(t)) return;
  // A handful of entities: a linear search keeps the hot path free of
  // string building.
  DrmEntityMetrics* m = nullptr;
  for (auto& [key, d] : drm_) {
    std::string_view k = key;
    if (k.size() == e.sched.size() + 1 + e.entity.size() && k.substr(0, e.sched.size()) == e.sched &&
        k[e.sched.size()] == '/' && k.substr(e.sched.size() + 1) == e.entity) {
      m = &d;
      break;
    }
  }
  if (!m) {
    std::string key = std::string(e.sched) + "/" + std::string(e.entity);
    m = &drm_.emplace(key, DrmEntityMetrics{}).first->second;
    m->name = key;
  }
  m->push_to_run.add((e.run - e.pushed).count());
  ++m->jobs;
}

// The work counters at the window start, read at the first callback at
// t1 >= warmup (see recorder.h): a task that was running over (warmup, t1]
// ran at one rate, the rate of its last accounting if that was at t1 (a
// switch-out or a frequency change accounts at the old rate first), else
// its CPU's current rate.
void MetricsRecorder::take_work_base(Time t1) {
  work_base_taken_ = true;
  for (TaskTrack& tr : tasks_) {
    if (!tr.task) continue;
    const Task& p = *tr.task;
    const int64_t now = p.work_done_at(t1);
    int64_t after = 0;
    const bool accounted_now = p.accounted_at == t1;
    if (t1 > warmup_ && (p.progress_rate || accounted_now)) {
      const uint64_t rate = accounted_now ? p.accounted_rate : *p.progress_rate;
      const Time from = max(warmup_, p.switched_in);
      if (t1 > from)
        after = static_cast<int64_t>(static_cast<unsigned __int128>((t1 - from).count()) * rate >> 20);
    }
    tr.work_base = now - std::min(after, now);
  }
}

void MetricsRecorder::finish(Time end) {
  end_ = end;
  if (!work_base_taken_) take_work_base(max(end, warmup_));
  for (TaskTrack& tr : tasks_)
    if (tr.task) tr.m.work_done = tr.task->work_done_at(end) - tr.work_base;
  for (auto& tr : tasks_) close_interval(tr, end);
  for (size_t c = 0; c < cpus_.size(); ++c) close_cpu_interval(c, end);
  for (size_t cl = 0; cl < clusters_.size(); ++cl) close_cluster_interval(cl, end);
}

RunResult MetricsRecorder::result(uint64_t seed, uint64_t events) const {
  RunResult r;
  r.seed = seed;
  r.window_start = warmup_;
  r.window_end = end_;
  for (const auto& tr : tasks_)
    if (tr.m.pid != 0) r.tasks.push_back(tr.m);
  for (const auto& c : cpus_) r.cpus.push_back(c.m);
  if (power_) {
    for (size_t cl = 0; cl < power_->clusters.size(); ++cl) {
      const auto& pcl = power_->clusters[cl];
      ClusterMetrics cm;
      cm.name = pcl.name;
      cm.cpus = pcl.cpus;
      for (int cpu : pcl.cpus) {
        cm.cpu_energy_mj += r.cpus[static_cast<size_t>(cpu)].energy_mj();
        const auto& pc = power_->cpus[static_cast<size_t>(cpu)];
        for (double mw : pc.idle_state_power_mw) cm.idle_power_known |= mw > 0;
        cm.idle_power_known |= !pc.wfi_power_mw.empty();  // state 0's power per OPP
      }
      cm.static_energy_mj = clusters_[cl].static_energy_mj;
      r.clusters.push_back(std::move(cm));
    }
  }
  for (const auto& [name, m] : workqueues_) r.workqueues.push_back(m);
  for (const auto& [name, m] : drm_) r.drm_entities.push_back(m);
  r.events = events;
  return r;
}

}  // namespace schedlab
