#include "experiments/lib/aggregate.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

namespace schedlab {

double TaskStats::cpu_share() const {
  return elapsed.count() > 0 ? static_cast<double>(cpu_time.count()) / static_cast<double>(elapsed.count()) : 0.0;
}

double TaskStats::per_run(uint64_t count) const {
  return runs > 0 ? static_cast<double>(count) / runs : 0.0;
}

double CpuAggregate::busy_fraction() const {
  return elapsed.count() > 0 ? static_cast<double>(busy.count()) / static_cast<double>(elapsed.count()) : 0.0;
}

double CpuAggregate::idle_fraction() const {
  return elapsed.count() > 0 ? static_cast<double>(idle.count()) / static_cast<double>(elapsed.count()) : 0.0;
}

double CpuAggregate::per_run(uint64_t count) const {
  return runs > 0 ? static_cast<double>(count) / runs : 0.0;
}

bool Aggregate::any_group_with_instances() const {
  return std::any_of(groups.begin(), groups.end(), [](const GroupAggregate& g) { return g.instances > 1; });
}

const char* policy_short_name(Policy p) {
  switch (p) {
    case Policy::kNormal: return "OTHER";
    case Policy::kBatch: return "BATCH";
    case Policy::kIdle: return "IDLE";
    case Policy::kFifo: return "FIFO";
    case Policy::kRr: return "RR";
    case Policy::kDeadline: return "DL";
  }
  return "?";
}

const char* policy_long_name(Policy p) { return policy_name(p); }  // models/workload/task_spec.h

std::string policy_prio_label(Policy p, int nice, int rt_priority) {
  switch (p) {
    case Policy::kFifo:
    case Policy::kRr: return fmt::format("{} {}", policy_short_name(p), rt_priority);
    case Policy::kIdle: return "IDLE";
    case Policy::kDeadline: return "DL";
    default: return fmt::format("{} n{}", policy_short_name(p), nice);
  }
}

int kernel_prio(Policy p, int nice, int rt_priority) {
  if (p == Policy::kDeadline) return -1;  // MAX_DL_PRIO - 1
  if (p == Policy::kFifo || p == Policy::kRr) return 99 - rt_priority;
  return 120 + nice;
}

namespace {

// Samples and totals gathered before summarizing.
struct Accumulator {
  int runs = 0;
  Time elapsed;
  Samples wakeup_latency, runnable_wait, response;
  uint64_t wakeups = 0, preemptions = 0, switches_in = 0, migrations = 0, periods = 0, deadline_misses = 0;
  Time cpu_time, runnable_time, sleep_time, blocked_time;

  void add(const TaskMetrics& m) {
    wakeup_latency.append(m.wakeup_latency);
    runnable_wait.append(m.runnable_wait);
    response.append(m.response);
    wakeups += m.wakeups;
    preemptions += m.preemptions;
    switches_in += m.switches_in;
    migrations += m.migrations;
    periods += m.periods;
    deadline_misses += m.deadline_misses;
    cpu_time += m.cpu_time;
    runnable_time += m.runnable_time;
    sleep_time += m.sleep_time;
    blocked_time += m.blocked_time;
  }

  TaskStats finish() const {
    TaskStats s;
    s.runs = runs;
    s.elapsed = elapsed;
    s.wakeup_latency = wakeup_latency.summarize();
    s.runnable_wait = runnable_wait.summarize();
    s.response = response.summarize();
    s.wakeups = wakeups;
    s.preemptions = preemptions;
    s.switches_in = switches_in;
    s.migrations = migrations;
    s.periods = periods;
    s.deadline_misses = deadline_misses;
    s.cpu_time = cpu_time;
    s.runnable_time = runnable_time;
    s.sleep_time = sleep_time;
    s.blocked_time = blocked_time;
    return s;
  }
};

std::string group_of(const TaskMetrics& m) { return m.group.empty() ? m.name : m.group; }

}  // namespace

TaskStats task_stats(const TaskMetrics& m, Time elapsed) {
  Accumulator acc;
  acc.runs = 1;
  acc.elapsed = elapsed;
  acc.add(m);
  return acc.finish();
}

Aggregate aggregate_runs(const std::vector<RunResult>& runs) {
  Aggregate agg;
  agg.runs = static_cast<int>(runs.size());

  // Tasks: keyed by (pid, comm), so a scenario whose task set differs between
  // runs still aggregates like with like.
  using TaskKey = std::pair<int, std::string>;
  std::map<TaskKey, std::pair<TaskAggregate, Accumulator>> tasks;
  std::vector<std::string> group_order;
  std::map<std::string, std::pair<GroupAggregate, Accumulator>> groups;
  std::map<std::string, std::vector<TaskKey>> group_members;

  for (size_t r = 0; r < runs.size(); ++r) {
    const RunResult& run = runs[r];
    const Time elapsed = run.elapsed();
    agg.elapsed += elapsed;

    std::map<std::string, bool> group_seen_this_run;
    for (const TaskMetrics& m : run.tasks) {
      TaskKey key{m.pid, m.name};
      auto [it, inserted] = tasks.try_emplace(key);
      auto& [ta, acc] = it->second;
      if (inserted) {
        ta.name = m.name;
        ta.group = group_of(m);
        ta.pid = m.pid;
        ta.policy = m.policy;
        ta.nice = m.nice;
        ta.rt_priority = m.rt_priority;
      }
      acc.runs += 1;
      acc.elapsed += elapsed;
      acc.add(m);

      const std::string g = group_of(m);
      auto [git, ginserted] = groups.try_emplace(g);
      auto& [ga, gacc] = git->second;
      if (ginserted) {
        group_order.push_back(g);
        ga.name = g;
        ga.policy = m.policy;
        ga.nice = m.nice;
        ga.rt_priority = m.rt_priority;
      } else if (ga.policy != m.policy || ga.nice != m.nice || ga.rt_priority != m.rt_priority) {
        ga.mixed_policy = true;
      }
      auto& members = group_members[g];
      if (std::find(members.begin(), members.end(), key) == members.end()) members.push_back(key);
      if (!group_seen_this_run[g]) {
        group_seen_this_run[g] = true;
        gacc.runs += 1;
        gacc.elapsed += elapsed;
      }
      gacc.add(m);
    }

    if (agg.cpus.size() < run.cpus.size()) {
      size_t old = agg.cpus.size();
      agg.cpus.resize(run.cpus.size());
      for (size_t c = old; c < agg.cpus.size(); ++c) agg.cpus[c].cpu = static_cast<int>(c);
    }
    for (size_t c = 0; c < run.cpus.size(); ++c) {
      const CpuMetrics& cm = run.cpus[c];
      CpuAggregate& ca = agg.cpus[c];
      ca.runs += 1;
      ca.busy += cm.busy;
      ca.idle += cm.idle;
      ca.elapsed += elapsed;
      ca.context_switches += cm.context_switches;

      int64_t err = (cm.busy + cm.idle - elapsed).count();
      if (err < 0) err = -err;
      agg.check.max_error_ns = std::max(agg.check.max_error_ns, err);
      if (err != 0 && agg.check.holds) {
        agg.check.holds = false;
        agg.check.run = static_cast<int>(r);
        agg.check.cpu = static_cast<int>(c);
        agg.check.busy = cm.busy;
        agg.check.idle = cm.idle;
        agg.check.elapsed = elapsed;
      }
    }
  }

  agg.tasks.reserve(tasks.size());
  for (auto& [key, entry] : tasks) {
    entry.first.stats = entry.second.finish();
    agg.tasks.push_back(std::move(entry.first));
  }
  // Groups in order of their first task's pid, so tables list them as the
  // tasks are listed.
  std::vector<std::pair<TaskKey, std::string>> group_first;
  for (const std::string& g : group_order) {
    const auto& members = group_members[g];
    group_first.emplace_back(*std::min_element(members.begin(), members.end()), g);
  }
  std::sort(group_first.begin(), group_first.end());
  for (const auto& [first, g] : group_first) {
    auto& [ga, gacc] = groups[g];
    ga.instances = static_cast<int>(group_members[g].size());
    ga.stats = gacc.finish();
    agg.groups.push_back(std::move(ga));
  }
  return agg;
}

}  // namespace schedlab
