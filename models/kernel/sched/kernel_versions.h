// Kernel versions schedlab models, each with its fair scheduler and feature
// defaults as that version's kernel/sched/features.h has them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/kernel/cpufreq/governor.h"
#include "models/kernel/sched/features.h"

namespace schedlab {

struct KernelVersionInfo {
  std::string name;
  bool eevdf = true;           // EEVDF (6.6+) or legacy CFS
  bool fair_server = false;    // fair dl_server (6.12+)
  // 6.17+ "sched/deadline: Less agressive dl_server handling": the fair
  // server is not stopped when the CPU's last fair task leaves, only when
  // its timer (or a pick) finds none.
  bool dl_server_lazy_stop = false;
  // 6.18 (checked in 6.18.35): update_dl_entity() applies the revised
  // wake-up rule to the deferred server and leaves the starved mode at a
  // new period; the servers are set up at boot (sched_init_dl_servers()).
  bool dl_server_revised_wakeup = false;
  // core.c enqueue_task(): uclamp_rq_inc() runs before the class's
  // enqueue_task(), so the enqueue's cpufreq kicks (and the wake-up's
  // overutilized check) see the task's clamps: 6.1.166, 6.6.63 and
  // 6.18.35; 6.12.19 counts them after.
  bool uclamp_inc_before_enqueue = false;
  // schedutil's performance estimate before 6.8 (6.1.166, 6.6.63): util
  // clamped by uclamp plus the DL bandwidth, the 25% headroom added in
  // get_next_freq() (GovernorParams::headroom_after_clamp).
  bool sugov_headroom_after_clamp = false;
  // EAS's energy estimate before 6.9 (6.1.166, 6.6.63): eenv_pd_max_util()
  // takes effective_cpu_util(FREQUENCY_UTIL, p on dst) (clamped, no
  // headroom) and em_cpu_energy() adds the headroom, picks the state by
  // frequency and prices it with em_compute_costs()' fmax * power / freq
  // cost over the capacity (EnergyModel::cpu_energy_v6_1()). That cost
  // also decides which OPPs em_cpufreq_update_efficiencies() marks
  // inefficient for schedutil (CpufreqPolicy::from_opps()).
  bool em_energy_v6_1 = false;
  bool rt_throttling = true;   // def_rt_bandwidth throttling (removed in 6.12 without RT_GROUP_SCHED)
  bool custom_slice = false;   // sched_attr.sched_runtime sets the fair slice (6.12+)
  // normalized_sysctl_sched_base_slice: 0.75 ms to 6.16; 0.70 ms from 6.17
  // ("so a 1000 Hz tick does not give a task an extra tick"; 6.18.35's
  // fair.c).
  int64_t base_slice_ns = 750000;
  // pick_next_entity() takes cfs_rq->next under PICK_BUDDY (6.12's delayed
  // dequeue series; 6.12.19 has it); before, NEXT_BUDDY gated the pick too.
  bool pick_buddy = false;
  // 6.6 (checked in 6.6.31 to 6.6.87): the fair run-queue is a tree ordered
  // by vruntime, augmented with each subtree's earliest deadline, and
  // pick_eevdf() is a heap search down it that starts from curr and
  // replaces its choice only with a strictly earlier deadline: on equal
  // deadlines curr keeps the CPU unless a left subtree the search passed
  // holds that deadline; among queued entities the tree's shape decides.
  // 6.8+ sort the tree by deadline: the leftmost eligible entity, queued
  // before curr on a tie (vruntime_tree.h).
  bool pick_vruntime_tree = false;
  // wake_up_new_task() enqueues with ENQUEUE_INITIAL (checked in 6.12.19's
  // core.c). 6.6.y's (6.6.57 to 6.6.87) passes ENQUEUE_NOCLOCK only, and
  // its enqueue re-runs place_entity(), so the half-slice first deadline
  // task_fork_fair() gave (PLACE_DEADLINE_INITIAL) is replaced by a full
  // one: on 6.6 a new task's first deadline is a whole slice away.
  bool new_task_enqueue_initial = true;
  // 6.17+: RUN_TO_PARITY protects current only up to the smallest queued
  // slice (se->vprot, protect_slice()), and yield gives up the rest of the
  // slice in vruntime.
  bool protect_slice = false;
  bool preempt_lazy = false;   // PREEMPT_LAZY exists (6.13+)
  // "Runnable boosting" (6.5+, fair.c cpu_util(..., boost)): schedutil and
  // EAS's frequency estimate take max(util_avg, runnable_avg) of the CFS rq.
  bool runnable_boost = true;
  // 6.14+ (checked in 6.18.35's fair.c): the load balancer counts a CPU's
  // runnable fair tasks (cfs.h_nr_runnable), leaving out those whose dequeue
  // is delayed, and can_migrate_task() moves a delayed task only when it
  // migrates load. 6.12 counts and moves them like any queued task.
  bool lb_counts_runnable = false;
  // 6.18 (checked in 6.18.35; not in 6.12.19): can_migrate_task()'s
  // task_is_ineligible_on_dst_cpu(): while the domain has not failed to
  // balance, a task that is not eligible on its cfs_rq stays put when dst
  // has fair tasks queued (PLACE_LAG on).
  bool lb_ineligible_stays = false;
  // 6.18.35's EEVDF, from fixes 6.18.y took through stable (none is in
  // 6.12.19; checked in 6.18.35's fair.c):
  // - "sched/fair: Fix lag clamp": a lag is clamped to the cfs_rq's largest
  //   queued slice plus a tick (cfs_rq_max_slice()), not to twice the
  //   entity's own slice (at least a tick).
  bool lag_clamp_max_slice = false;
  // - reweight_entity() re-places a queued entity (place_entity()) with
  //   its clamped lag and its deadline (and protected slice) relative to
  //   its vruntime, all scaled by old/new weight, instead of
  //   reweight_eevdf()'s V-relative rescaling; a dequeued entity's relative
  //   deadline (DEQUEUE_SAVE) scales too.
  bool reweight_by_place = false;
  // - check_preempt_wakeup_fair() by actions: a shorter-slice wakee is
  //   judged by a pick without current's protection, which is cancelled
  //   only if the wakee wins; a forked or delayed wakee does not preempt by
  //   EEVDF order; the pick is pick_next_entity() (a delayed winner is
  //   dequeued, and the pick repeated); NEXT_BUDDY nominates only the
  //   matched level, after the checks, with WF_SYNC's preempt_sync().
  bool wakeup_preempt_actions = false;
  // - wake_affine_idle(): a sync wake-up stays on the waker's CPU when the
  //   waker is its only task not counting delayed ones ("Fix
  //   wake_affine_idle() with delayed dequeue").
  bool wake_affine_sync_skips_delayed = false;
  // With cpu cgroups (6.18.35): dequeue_entities() stopped by a delayed
  // group entity gives it the smallest slice of its own level ("Fix
  // se->slice being set to U64_MAX", after 6.12.19, which hands it 0 or
  // the dequeued group's empty minimum); and a group cfs_rq leaves the leaf
  // list only once its part of tg->load_avg is 0 ("Fix unfairness caused
  // by stalled tg_load_avg_contrib").
  bool delayed_group_slice_fix = false;
  bool decayed_needs_zero_tg_contrib = false;
  // 6.8+ ("sched/fair: Simplify util_est", "sched/pelt: Avoid
  // underestimation of task utilization", UTIL_EST_FASTUP dropped): a
  // task's util_est is one EWMA, and a task that waited for the CPU keeps
  // it. Before (6.1, 6.6: fair.c util_est_update()): struct util_est's
  // `enqueued` (the last activation's util) and `ewma`, the estimate their
  // max, no runnable guard.
  bool util_est_single_ewma = true;
  // 6.12 (checked in 6.12.19 and 6.18.35): dequeue_task_fair() calls
  // util_est_update() before dequeue_entities(), so the sample is util_avg
  // as of the last PELT update; 6.1 and 6.6 call it last, after the
  // dequeue's update_load_avg() brought util_avg to now.
  bool util_est_update_first = true;
  // util_est_update()'s skip of a task whose util_avg exceeds its CPU's
  // capacity (no idle time there, so util_avg says nothing of its size):
  // in 6.12.19's fair.c, gone from 6.18.35's, where such a task's EWMA
  // decays as any other's (the runnable guard still applies).
  bool util_est_capacity_check = true;
  // dequeue_task_fair()'s util_est_dequeue() of a task whose dequeue is
  // delayed (its estimate already left the root cfs_rq when it slept):
  // 6.12.19 skips it only for DEQUEUE_SAVE or a migration, so completing
  // a delayed dequeue on a class change (DEQUEUE_SLEEP | DEQUEUE_DELAYED)
  // takes the estimate off a second time (floored at 0); 6.18.35 skips it
  // for every delayed task. Both call util_est_update() on that dequeue.
  bool util_est_dequeue_skips_delayed = false;
  // Where a CPU going idle syncs its PELT clock (update_idle_rq_clock_pelt(),
  // the lost-idle-time test): 6.12.19 in pick_next_task_fair()'s "idle:"
  // path, so only a switch to idle on the fair fast path; 6.18.35 in
  // set_next_task_idle(), so every switch to the idle task (from an RT or
  // stop task too), after prev's put_prev_task().
  bool idle_pelt_sync_in_set_next_idle = false;
  // 6.1.166's pick_next_task_fair() runs update_idle_rq_clock_pelt() after
  // its "idle:" label's "if (rf)" block, so also when called without
  // rq_flags: __pick_next_task_fair() on a switch to idle from an RT or
  // stop prev syncs there too, after prev's put_prev_task() (the class
  // walk put prev first). 6.6.63 and 6.12.19 return before it without rf.
  bool idle_pelt_sync_without_rf = false;
  // genpd's cpu_power_down_ok() (drivers/pmdomain/governor.c) also checks
  // the CPU latency PM QoS (cpu_latency_qos_limit(), the CPUs' resume
  // latency) against a cluster state's power on + off latency: 6.18.35
  // does; 6.12.19 (and 6.1/6.6's domain_governor.c) check only the
  // residency, so a cluster state can exceed the limit the CPUs honour.
  bool genpd_cpu_latency_qos = false;
  // Schedutil's default rate_limit_us (drivers/cpufreq/cpufreq.c
  // cpufreq_policy_transition_delay_us()): 6.10+ 1.5 x the transition
  // latency; before (6.1.166, 6.6.63) latency x 1000, capped at 10 ms.
  TransitionDelayRule transition_delay = TransitionDelayRule::kLatencyAndAHalf;
  // 6.10+ "sched/fair: Check if a task has a fitting CPU when updating
  // misfit" (checked in 6.12.19): update_misfit_status() records no misfit
  // on the biggest CPU the task may use, and check_misfit_status() is just
  // rq->misfit_task_load. Before (6.1.166, 6.6.63) a task too big for the
  // biggest CPU stays misfit there (keeping the root domain overloaded), and
  // the nohz kick wants a bigger CPU in the root domain or RT pressure.
  bool misfit_skips_biggest_allowed = true;
  // After 6.6 (absent in 6.6.63, present in 6.12.19's sched_balance_rq()):
  // a misfit pass that moves nothing neither counts as a failure
  // (sd->nr_balance_failed) nor doubles the balance interval. 6.1 and 6.6
  // count it and back off, up to 512 ms when the misfit task may not go
  // (all pinned).
  bool lb_misfit_not_a_failure = true;
  // 6.1 (checked in 6.1.166) calculate_imbalance(): a local group with spare
  // capacity evens out the task count even when dst is busy; 6.6's
  // sibling_imbalance() (and 6.12's) returns 0 for a busy dst.
  bool lb_busy_dst_evens_task_count = false;
  // 6.1 and 6.6 update_sd_pick_busiest(): of two misfit groups with equal
  // misfit_task_load the later one in the scan wins; 6.12 keeps the first.
  bool lb_misfit_tie_later_wins = false;
  // 6.1 and 6.6 (6.6.63 core.c, fair.c, rt.c): prev picked again is a
  // pick like any other. pick_next_task_fair() still goes through its
  // done: label, which moves the task to the head of rq->cfs_tasks and
  // runs update_misfit_status(); an RT prev goes through
  // __pick_next_task()'s slow path, put_prev_task_balance() putting it
  // (put_prev_task_rt(): runtime and RT PELT updated) and
  // pick_next_task_rt() setting it again (set_next_task_rt(first), which
  // queues the push of the rq's pushable tasks). 6.12's
  // put_prev_set_next_task() returns early then, doing none of it (misfit
  // is then next looked at by the tick).
  bool repick_is_a_full_pick = false;
  // 6.1 and 6.6 update_rt_migration() (6.6.63 rt.c): a CPU is RT
  // overloaded (rt_rq->overloaded, in rd->rto_mask) while it has an RT
  // task allowed elsewhere among two or more queued (running included).
  // 6.7's "sched/rt: Make rt_rq->pushable_tasks updates drive rto_mask"
  // made it "has a pushable task" (6.12.19): a throttled rt_rq's lone
  // queued task counts there, not on 6.1/6.6.
  bool rt_overload_by_migratory = false;
  // 6.1 and 6.6 rt_prio() is prio < MAX_RT_PRIO, so rt_task() is true of
  // a DL task too: select_task_rq_rt() moves a woken RT task off a CPU
  // running one (the sugov:N kthread). 6.11's "sched/rt: Clean up usage
  // of rt_task()" made rt_prio() exclude DL (6.12.19 rt.h).
  bool rt_task_counts_dl = false;
  // 6.18.35 and 6.1.166 sched_balance_newidle() / newidle_balance(): with
  // no sched domain (one CPU) the pass goes straight to "out:" ("Small
  // cleanup to sched_balance_newidle()", with the proportional newidle
  // series, 6.18.5 and 6.1.16x); 6.6.63 and 6.12.19 have no such test and
  // update the blocked averages once rd->overloaded is set.
  bool newidle_null_domain_returns = false;
  // balance_fair()'s test for "work here already": 6.12.19 and 6.18.35
  // ask sched_fair_runnable() (cfs.nr_running / nr_queued > 0: fair
  // entities, delayed ones included), so a fair prev leaving with only RT
  // tasks queued still runs sched_balance_newidle(); 6.1.166 and 6.6.63
  // test rq->nr_running, any class, and skip it.
  bool balance_fair_tests_fair_queue = true;
  // 6.1 and 6.6 post_init_entity_util_avg() multiply by se->load.weight,
  // scale_load()ed, against the cfs_rq's unscaled load_avg: a new task
  // starts at half the CPU's spare capacity. 6.12.19 uses se_weight().
  bool post_init_scale_load = false;
  // Group scheduling (docs/fair_group_sched.md, "Groups on 6.6"): 6.12's
  // update_cfs_group() keeps the weight of a group entity whose cfs_rq
  // emptied ("preserve its weight", for DELAY_DEQUEUE); 6.6.63's
  // reweights it from the group's blocked load, so its parent's load falls
  // at the dequeue.
  bool group_keeps_weight_when_empty = true;
  // update_tg_load_avg() publishes at most once per ms of sched_clock
  // ("sched/fair: Ratelimit update to tg->load_avg", after 6.6; no 6.6.y
  // to 6.6.87 has it): 6.6 publishes on every crossing of 1/64.
  bool tg_load_avg_ratelimit = true;
  // 6.6's pick_next_task_fair() with a prev of another class (its
  // "simple" path) sets each level's entity on the way down; 6.12's
  // set_next_task_fair() sets them bottom-up. Only the order of the levels'
  // PELT updates differs (a child's pending propagation reaches its parent
  // one update later top-down).
  bool pick_sets_levels_top_down = false;
  // schedutil's need_freq_update after a limits change (sugov_limits()):
  // 6.1.166 and 6.6.63 set it, so the next update bypasses the raw-frequency
  // cache (6.1 then commits only a changed frequency, 6.6 recommits even an
  // equal one); 6.12.19 sets it only for CPUFREQ_NEED_UPDATE_LIMITS drivers;
  // 6.18.35 is 6.1's rule, with ignore_dl_rate_limit() setting
  // need_freq_update (see SugovLimitsRule).
  SugovLimitsRule sugov_limits = SugovLimitsRule::kV6_12;
  SchedFeatures defaults;
};

std::optional<KernelVersionInfo> kernel_version_info(std::string_view version);
// Why setting sched_feat `name` changes nothing on `info`'s version, or
// nullptr. Mostly switches the version does not have (writing them to
// sched/features fails) and the model does not read there: CFS's sleeper
// credit, START_DEBIT and LAST_BUDDY on EEVDF, EEVDF's switches on CFS,
// PICK_BUDDY before 6.12. One exists but has no lasting effect:
// PLACE_DEADLINE_INITIAL on 6.6 (wake_up_new_task() places the task again).
const char* sched_feature_inert(std::string_view name, const KernelVersionInfo& info);
// Why sched_feat `name` set to `value` does not exist on `info`'s version
// although the model applies it there (a what-if: 6.12's delayed dequeue,
// relative deadlines and short-slice preemption on 6.6), or nullptr --
// also when `value` is what that version does anyway.
const char* sched_feature_from_later_version(std::string_view name, bool value, const KernelVersionInfo& info);
std::vector<std::string> supported_kernel_versions();

}  // namespace schedlab
