// Helpers for scheduler tests: build scenarios in code and record the
// schedule as (time, cpu, next task) switch events.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/config/config.h"
#include "models/hw/energy_model.h"
#include "models/kernel/kernel.h"
#include "models/scenario.h"
#include "models/system.h"

namespace schedlab::testing {

using namespace schedlab::time_literals;

inline EventSpec ev_run(Time t) { EventSpec e; e.kind = EventSpec::Kind::kRun; e.duration = t; return e; }
inline EventSpec ev_sleep(Time t) { EventSpec e; e.kind = EventSpec::Kind::kSleep; e.duration = t; return e; }
inline EventSpec ev_lock(const std::string& m) { EventSpec e; e.kind = EventSpec::Kind::kLock; e.name = m; return e; }
inline EventSpec ev_unlock(const std::string& m) { EventSpec e; e.kind = EventSpec::Kind::kUnlock; e.name = m; return e; }
inline EventSpec ev_suspend() { EventSpec e; e.kind = EventSpec::Kind::kSuspend; return e; }
inline EventSpec ev_resume(const std::string& task) { EventSpec e; e.kind = EventSpec::Kind::kResume; e.name = task; return e; }
// The task moves itself to cpu cgroup `name` (cgroup.procs write).
inline EventSpec ev_cgroup(const std::string& name) {
  EventSpec e;
  e.kind = EventSpec::Kind::kCgroup;
  e.name = name;
  return e;
}
inline EventSpec ev_timer(const std::string& ref, Time period) {
  EventSpec e; e.kind = EventSpec::Kind::kTimer; e.name = ref; e.duration = period; return e;
}
// A call event (CallSpec, models/workload/task_spec.h) on `target`;
// the caller fills in the rest of e.call.
inline EventSpec ev_call(CallSpec::Op op, const std::string& target) {
  EventSpec e;
  e.kind = EventSpec::Kind::kCall;
  e.call.op = op;
  e.call.target = target;
  return e;
}

inline TaskSpec task(const std::string& name, std::vector<EventSpec> events, Policy policy = Policy::kNormal,
                     int nice_or_prio = 0) {
  TaskSpec t;
  t.name = name;
  t.policy = policy;
  if (policy == Policy::kFifo || policy == Policy::kRr)
    t.rt_priority = nice_or_prio;
  else
    t.nice = nice_or_prio;
  PhaseSpec ph;
  ph.loop = -1;
  ph.events = std::move(events);
  t.phases.push_back(std::move(ph));
  return t;
}

inline TaskSpec hog(const std::string& name, Policy policy = Policy::kNormal, int nice_or_prio = 0) {
  return task(name, {ev_run(Time::s(1000))}, policy, nice_or_prio);
}

// A cluster of `cpus` CPUs of capacity-dmips-mhz 1024 (capacity 1024 when
// it is the biggest: work runs at its own length at the top OPP) with
// these OPPs and dynamic-power-coefficient 100 (an energy model).
inline ClusterParams cluster_1024(const std::string& name, int cpus, std::vector<Opp> opps) {
  ClusterParams c;
  c.name = name;
  c.nr_cpus = cpus;
  c.capacity_dmips_mhz = 1024;
  c.opps = std::move(opps);
  c.dynamic_power_coefficient = 100;
  return c;
}

// cluster_1024() at one 1 GHz OPP with cpuidle states WFI and a deep
// "off" state (entry 50 us, exit 200 us, target residency 1 ms).
inline ClusterParams cluster_1024_deep_idle(const std::string& name, int cpus) {
  ClusterParams c = cluster_1024(name, cpus, {{1000000, 800000, 0}});
  c.cpu_idle_states = {{"WFI", Time::zero(), Time::us(1), Time::us(1), 10.0},
                       {"off", Time::us(50), Time::us(200), Time::ms(1), 2.0}};
  return c;
}

// `t` allowed only on `cpus` (its affinity mask).
inline TaskSpec on_cpus(TaskSpec t, std::vector<int> cpus) {
  t.cpus = std::move(cpus);
  return t;
}

// `instances` hogs of one TaskSpec (comms name-0, name-1, ...).
inline TaskSpec hogs(const std::string& name, int instances) {
  TaskSpec t = hog(name);
  t.instances = instances;
  return t;
}

// A 1-CPU scenario with no overheads and no timer slack, so schedules can
// be computed by hand.
inline ScenarioParams exact_scenario(const std::string& version = "6.12", int hz = 1000, int cpus = 1) {
  ScenarioParams p;
  p.kernel.version = version;
  p.kernel.hz = hz;
  p.kernel.timer_slack = Time::zero();
  p.platform.cpus = cpus;
  p.duration = Time::s(1);
  return p;
}

struct SwitchRecord {
  Time t;
  int cpu;
  std::string prev, next;
  char prev_state;
  bool operator==(const SwitchRecord&) const = default;
};

class SwitchLog : public SchedObserver {
 public:
  void on_switch(Time t, int cpu, const Task& prev, TaskState prev_state, const Task& next) override {
    log.push_back({t, cpu, prev.is_idle_task ? "idle" : prev.comm, next.is_idle_task ? "idle" : next.comm,
                   task_state_letter(prev_state)});
  }
  // The first time `name` was switched in at or after `from`.
  Time first_run(const std::string& name, Time from = Time::zero()) const {
    for (const auto& r : log)
      if (r.next == name && r.t >= from) return r.t;
    return Time::max();
  }
  std::vector<std::pair<int64_t, std::string>> runs_until(Time end) const {
    std::vector<std::pair<int64_t, std::string>> v;
    for (const auto& r : log)
      if (r.t <= end) v.emplace_back(r.t.count(), r.next);
    return v;
  }
  std::vector<SwitchRecord> log;
};

// Runs scenario `p` (seed 1) to its end and returns its context switches.
inline SwitchLog run_logging_switches(const ScenarioParams& p) {
  System sys(p, 1);
  SwitchLog log;
  sys.add_observer(&log);
  sys.run();
  return log;
}

// Work item executions as the observer sees them (one record per start,
// its end filled in).
struct WorkItemRecord {
  std::string work, wq, worker;
  Policy policy = Policy::kNormal;
  int nice = 0, rt_priority = 0, cpu = -1;
  Time queued, started, ended, wait;
  Time idle_exit;  // the part of wait on a CPU still leaving idle
};

class WorkLog : public SchedObserver {
 public:
  void on_work_item(Time t, const WorkItemEvent& e) override {
    if (e.phase == WorkItemEvent::Phase::kStart) {
      WorkItemRecord it;
      it.work = std::string(e.work);
      it.wq = std::string(e.workqueue);
      it.worker = e.worker->comm;
      it.policy = e.worker->policy;
      it.nice = e.worker->nice();
      it.rt_priority = e.worker->rt_priority;
      it.cpu = e.cpu;
      it.queued = e.queued;
      it.started = e.started;
      it.wait = e.runnable_wait;
      it.idle_exit = e.idle_exit_wait;
      items.push_back(it);
      ++running;
      max_running = std::max(max_running, running);
    } else if (e.phase == WorkItemEvent::Phase::kEnd) {
      --running;
      for (auto it = items.rbegin(); it != items.rend(); ++it)
        if (it->work == e.work && it->started == e.started) {
          it->ended = t;
          break;
        }
    }
  }
  const WorkItemRecord& first(const std::string& work) const {
    for (const auto& i : items)
      if (i.work == work) return i;
    throw std::runtime_error("no work item " + work);
  }
    // Every execution of the work items whose name ends with `suffix`.
  std::vector<WorkItemRecord> ending_with(const std::string& suffix) const {
    std::vector<WorkItemRecord> v;
    for (const auto& i : items)
      if (i.work.size() >= suffix.size() && i.work.compare(i.work.size() - suffix.size(), suffix.size(), suffix) == 0)
        v.push_back(i);
    return v;
  }
  std::vector<WorkItemRecord> items;
  int running = 0, max_running = 0;
};

// A scenario on the shipped gs101 platform (configs/platforms/gs101.yaml):
// `rest` is the YAML after the platform line (duration, kernel, tasks...).
inline ScenarioParams gs101_scenario(const std::string& rest) {
  const std::string yaml =
      std::string("platform: {file: \"") + SCHEDLAB_SOURCE_DIR + "/configs/platforms/gs101.yaml\"}\n" + rest;
  return load_scenario_yaml(yaml, "gs101_test.yaml");
}

// For tests whose hand-computed timelines are about something else on a
// slow-switch platform (gs101, rk3588): schedutil's switches apply at once,
// as with a fast-switch driver, so no sugov:N kthread runs or sleeps in
// them (its own test: test_sched_biglittle.cc).
inline void with_fast_switch(ScenarioParams& p) {
  for (ClusterParams& c : p.platform.clusters) c.fast_switch = true;
}

// Runs `p` to its end and returns what it measured.
inline RunResult run_result(const ScenarioParams& p, uint64_t seed = 1) {
  System sys(p, seed);
  sys.run();
  return sys.result();
}

// Runs `p` to its end with a fresh `Log` watching from the start and
// returns it (for logs that keep values, not pointers into the System).
template <class Log>
Log run_logged(const ScenarioParams& p, uint64_t seed = 1) {
  System sys(p, seed);
  Log log;
  sys.add_observer(&log);
  sys.run();
  return log;
}

inline Task& find_task(Kernel& k, const std::string& comm) {
  for (const auto& t : k.tasks())
    if (t->comm == comm) return *t;
  throw std::runtime_error("no task " + comm);
}

inline const TaskMetrics& metrics_of(const RunResult& r, const std::string& name) {
  for (const auto& t : r.tasks)
    if (t.name == name) return t;
  throw std::runtime_error("no task " + name);
}

// Two CPUs, base slice 3 ms: C (pinned to CPU 0) runs 2.8 ms and sleeps;
// B (forked first, so it runs first on CPU 1) runs 1.8 ms and sleeps 5 ms,
// with lag (0.9 - 1.8) < 0, so under DELAY_DEQUEUE its dequeue is delayed
// until a pick on CPU 1 reaches it; A (pinned to CPU 1) is a hog. When C
// sleeps, CPU 0's newidle pass finds the delayed B on CPU 1.
inline ScenarioParams delayed_pull_scenario(bool delay_dequeue = true, const std::string& version = "6.12") {
  ScenarioParams p = exact_scenario(version, 1000, 2);
  p.kernel.base_slice = Time::ms(3);
  p.kernel.features["DELAY_DEQUEUE"] = delay_dequeue;
  p.duration = Time::ms(20);
  TaskSpec c = task("C", {ev_run(Time::us(2800)), ev_sleep(Time::s(1000))});
  c.cpus = {0};
  TaskSpec a = hog("A");
  a.cpus = {1};
  p.tasks = {c, task("B", {ev_run(Time::us(1800)), ev_sleep(Time::ms(5))}), a};
  return p;
}

}  // namespace schedlab::testing

namespace schedlab::testing {

// A toy big.LITTLE platform whose numbers are easy to work by hand:
//  little: 2 CPUs, capacity-dmips-mhz 512, OPPs 500/1000 MHz at 600/800 mV,
//          C = 100 uW/MHz/V^2 -> 18 mW and 64 mW per busy CPU
//  big:    2 CPUs, capacity-dmips-mhz 1024, OPPs 1000/2000 MHz at 700/1000 mV,
//          C = 500 -> 245 mW and 1000 mW
// Capacities: big 1024; little 512*1000000 / (1024*2000000) * 1024 = 256.
inline PlatformParams toy_big_little(const std::string& governor = "schedutil") {
  PlatformParams p;
  p.name = "toy";
  ClusterParams little;
  little.name = "little";
  little.nr_cpus = 2;
  little.capacity_dmips_mhz = 512;
  little.opps = {{500000, 600000, 0}, {1000000, 800000, 0}};
  little.dynamic_power_coefficient = 100;
  little.cpufreq_governor = governor;
  ClusterParams big = little;
  big.name = "big";
  big.capacity_dmips_mhz = 1024;
  big.opps = {{1000000, 700000, 0}, {2000000, 1000000, 0}};
  big.dynamic_power_coefficient = 500;
  p.clusters = {little, big};
  p.cpus = 4;
  return p;
}

// A task that runs `phases` in order ({loop, events} each; -1 = forever).
inline TaskSpec phased_task(const std::string& name, std::vector<PhaseSpec> phases) {
  TaskSpec t;
  t.name = name;
  t.phases = std::move(phases);
  return t;
}

// A task that starts small (1 ms every 16 ms, 60 times: EAS keeps it on a
// little CPU) and then becomes a hog (misfit there).
inline TaskSpec growing_task(const std::string& name) {
  return phased_task(name, {{60, {ev_run(Time::ms(1)), ev_sleep(Time::ms(15))}}, {-1, {ev_run(Time::s(10))}}});
}

// Conservation on a multi-CPU run with power: per CPU, time at all OPPs =
// busy and busy + idle = elapsed; energy: CPUs sum to their cluster's CPU
// energy, clusters to the total. The recorder builds these sums from one
// interval stream, so two checks come from elsewhere: the tasks' CPU time
// (charged by the tasks' own state changes) adds up to the CPUs' busy
// time, and each CPU's busy energy is its time at each OPP times that
// OPP's power from the energy model's formula (opp_dynamic_power_mw()).
inline void check_conservation(const RunResult& r, const PlatformParams* platform = nullptr) {
  REQUIRE(r.has_power());
  Time task_time, busy_time;
  for (const auto& t : r.tasks) task_time += t.cpu_time;
  for (const auto& c : r.cpus) busy_time += c.busy;
  CHECK(task_time == busy_time);
  if (platform) {
    size_t cpu = 0;
    for (const ClusterParams& cl : platform->clusters)
      for (int i = 0; i < cl.nr_cpus; ++i, ++cpu) {
        const CpuMetrics& c = r.cpus.at(cpu);
        REQUIRE(c.busy_at_opp.size() == cl.opps.size());
        double mj = 0;
        for (size_t o = 0; o < cl.opps.size(); ++o)
          mj += opp_dynamic_power_mw(cl.opps[o], cl.dynamic_power_coefficient) * c.busy_at_opp[o].to_s();
        CHECK(c.busy_energy_mj == Approx(mj).epsilon(1e-9));
      }
  }
  double cluster_sum = 0;
  for (const auto& cl : r.clusters) {
    double cpu_sum = 0;
    for (int c : cl.cpus) cpu_sum += r.cpus[static_cast<size_t>(c)].energy_mj();
    CHECK(cl.cpu_energy_mj == Approx(cpu_sum));
    cluster_sum += cl.energy_mj();
  }
  CHECK(r.total_energy_mj() == Approx(cluster_sum));
  for (const auto& c : r.cpus) {
    Time at_opps;
    for (Time t : c.busy_at_opp) at_opps += t;
    CHECK(at_opps == c.busy);
    CHECK(at_opps + c.idle == r.elapsed());
  }
}

// `p` on kernel `version`, measured from `warmup` to `duration`.
inline ScenarioParams on_kernel(ScenarioParams p, const std::string& version, Time duration,
                                Time warmup = Time::zero()) {
  p.kernel.version = version;
  p.duration = duration;
  p.warmup = warmup;
  return p;
}

// A task with `work` (at capacity 1024, f_max) every 16 ms, pinned to `cpu`.
inline TaskSpec every_16ms_on(const std::string& name, Time work, int cpu) {
  TaskSpec t = task(name, {ev_run(work), ev_timer(name, Time::ms(16))});
  t.cpus = {cpu};
  return t;
}

// The kernels whose schedutil and EAS keep the pre-6.8 forms (the headroom
// after the uclamp clamp; 6.1's energy-model cost): 6.1 and 6.6. Spelled
// out rather than read from the model's version table, so that a wrong
// flag there fails the tests.
inline bool has_v6_1_forms(const std::string& version) { return version == "6.1" || version == "6.6"; }

// Busy time of `cpu` at its cluster's OPP number `opp` (lowest first).
inline Time busy_at(const RunResult& r, int cpu, size_t opp) {
  return r.cpus[static_cast<size_t>(cpu)].busy_at_opp[opp];
}

}  // namespace schedlab::testing
