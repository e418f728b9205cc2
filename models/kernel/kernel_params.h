// Kernel configuration of a scenario: the version (which selects the fair
// scheduler and its feature defaults as that version has them), tunables,
// feature overrides, and the overheads the model charges.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/hw/platform.h"
#include "sim/time.h"

namespace schedlab {

enum class PreemptModel { kNone, kVoluntary, kFull, kLazy };

struct KernelParams {
  std::string version = "6.12";  // "6.1", "6.6", "6.12", ...; see kernel_versions.h
  int hz = 250;                  // CONFIG_HZ: 100, 250, 300 or 1000
  PreemptModel preempt = PreemptModel::kFull;
  // Feature overrides by name (kernel/sched/features.h); unset = version default.
  std::map<std::string, bool> features;

  // Tunables; unset = the version's default (normalised values are scaled
  // by get_update_sysctl_factor(), see fair_tunables()).
  std::optional<Time> base_slice;            // sysctl_sched_base_slice (EEVDF), unscaled
  std::optional<Time> sched_latency;         // legacy CFS
  std::optional<Time> min_granularity;       // legacy CFS
  std::optional<Time> wakeup_granularity;    // legacy CFS
  std::string tunable_scaling = "log";       // none | log | linear (sysctl_sched_tunable_scaling)
  Time rt_runtime = Time::ms(950);           // sched_rt_runtime_us; negative = unlimited
  Time rt_period = Time::s(1);               // sched_rt_period_us
  Time rr_timeslice = Time::ms(100);         // sched_rr_timeslice_ms (RR_TIMESLICE)
  // Root-group RT throttling (def_rt_bandwidth): on before 6.12; 6.12 removed
  // it unless CONFIG_RT_GROUP_SCHED, leaving the fair server as the guard.
  std::optional<bool> rt_throttling;
  std::optional<bool> fair_server;           // dl_server for fair tasks (default: on from 6.12)
  Time fair_server_runtime = Time::ms(50);   // fair_server defaults: 50 ms every 1 s
  Time fair_server_period = Time::s(1);
  // The fair server stays started through idle, stopped by its timer (6.17+;
  // android16-6.12 and 6.12.92+ backport it). Default: the version's.
  std::optional<bool> fair_server_lazy_stop;
  // CONFIG_FAIR_GROUP_SCHED (init/Kconfig: default y with CGROUP_SCHED, as
  // GKI's and distributions' configs build it), every task in the root
  // group: task_h_load() is a task's share of the root cfs_rq's h_load
  // (cached once a jiffy), and a migrating task of another class has its
  // dormant fair signals aged to its old CPU's clock (set_task_rq_fair()).
  // false: the kernel without it (task_h_load() = the task's load_avg).
  bool fair_group_sched = true;

  // Overheads (assumptions; 0 keeps hand-computed schedules exact).
  Time context_switch_cost = Time::zero();   // CPU time lost per switch
  Time wakeup_cost = Time::zero();           // try_to_wake_up -> task enqueued
  Time ipi_latency = Time::zero();           // remote resched IPI delivery
  // sched_clock() time one newidle balance pass takes: it feeds the
  // domain's max_newidle_lb_cost, which a CPU's avg_idle must reach for it
  // to balance when newly idle. Not charged as CPU time. 0: balancing is
  // free, so a newly idle CPU always looks (when the root domain is
  // overloaded).
  Time newidle_balance_cost = Time::zero();
  Time timer_slack = Time::us(50);           // hrtimer slack of SCHED_OTHER sleeps: init_task.timer_slack_ns (RT: 0)

  // cpuidle (models/kernel/cpuidle/): the governor by name, "none" = no
  // cpuidle (an idle CPU is in state 0 at once, no latency, the tick
  // stopped: the model before cpuidle, the default). Costs are assumptions
  // (no measurement at hand): the idle task's CPU time per idle entry before
  // the state is entered, the governor's select() plus, when the governor
  // calls it, tick_nohz_get_sleep_length().
  std::string cpuidle_governor = "none";     // none | menu | teo | teo_tick | teo_tick_rfc | teo_v6.6
  Time cpuidle_governor_cost = Time::us(2);  // assumption
  Time cpuidle_sleep_length_cost = Time::us(1);  // assumption
  std::optional<Time> cpuidle_latency_req;   // PM QoS cpu_latency_qos limit; unset = none
  // WALT's busy hysteresis (Qualcomm's kernel/sched/walt/sched_avg.c,
  // update_busy_hyst_end_time()), the LPM bias qcom-cpu-lpm asks for with
  // sched_lpm_disallowed_time(): after a dequeue (or the run-queue falling
  // below 3 tasks) a CPU stays in WFI for its hysteresis time. Per CPU (one
  // value = every CPU; empty = off): busy = sched_busy_hyst_ns where
  // sched_busy_hysteresis_enable_cpus has the CPU (on a drop below 3 tasks,
  // or a dequeue with util > capacity / 10), util = sched_util_busy_hyst_cpu_ns
  // where sched_util_busy_hysteresis_enable_cpus has it (a dequeue while the
  // CPUs' summed util >= sched_util_busy_hyst_cpu_util). WALT's util (the
  // window demand of the enqueued tasks) is stood in for by PELT's CPU
  // util; the colocation hysteresis (WALT's related thread groups) is not
  // modelled.
  std::vector<Time> walt_busy_hyst;
  std::vector<Time> walt_util_busy_hyst;
  std::vector<uint32_t> walt_util_busy_hyst_util;

  // Utilization clamping (models/kernel/sched/uclamp.h). `uclamp` is
  // CONFIG_UCLAMP_TASK (init/Kconfig default n; arm64 defconfig leaves it
  // unset); the rest are CONFIG_UCLAMP_BUCKETS_COUNT (Kconfig default 5) and
  // the sysctls sched_util_clamp_min, sched_util_clamp_max and
  // sched_util_clamp_min_rt_default (kernel defaults: 1024 each). Writing a
  // sysctl away from its default, like any task's sched_setattr() of a
  // clamp, enables the sched_uclamp_used static key.
  bool uclamp = false;
  int uclamp_buckets = 5;
  uint32_t uclamp_util_min = 1024;
  uint32_t uclamp_util_max = 1024;
  uint32_t uclamp_min_rt_default = 1024;
  // cpu cgroups (CONFIG_UCLAMP_TASK_GROUP, enabled with `uclamp`), created
  // in order under the root group "/"; a parent is named before its
  // children. Only their clamps are modelled (uclamp.h).
  struct CpuCgroup {
    std::string name;
    std::string parent;                      // "" = the root group
    std::optional<int64_t> uclamp_min_pct;   // cpu.uclamp.min in 1/100 %, 0..10000; unset = not written
    std::optional<int64_t> uclamp_max_pct;   // cpu.uclamp.max ("max" = 10000)
    // cpu.shares (cgroup v1; 2..262144) or cpu.weight (v2; 1..10000, 100 =
    // 1024 shares), at most one: the group gets its own level of the fair
    // hierarchy (CONFIG_FAIR_GROUP_SCHED). Without either its tasks queue
    // on the root cfs_rq, as on Pixels (docs/fair_group_sched.md).
    std::optional<int64_t> cpu_shares;
    std::optional<int64_t> cpu_weight;
    // cpu.idle = 1 (sched_group_set_idle(), 6.12 fair.c): the group is a
    // level whose entity is idle (se_is_idle()) at WEIGHT_IDLEPRIO shares;
    // the kernel refuses cpu.weight writes to it, so not with the above.
    bool cpu_idle = false;
    // Whether the group is a level of the fair hierarchy in the model.
    bool fair_level() const { return cpu_shares || cpu_weight || cpu_idle; }
  };
  std::vector<CpuCgroup> cgroups;
};

}  // namespace schedlab
