#include "models/kernel/sched/kernel_versions.h"

#include "models/kernel/sched/features.h"

namespace schedlab {

static const std::array<FeatureInfo, static_cast<size_t>(SchedFeat::kCount)> kFeatures = {{
    {SchedFeat::kGentleFairSleepers, "GENTLE_FAIR_SLEEPERS"},
    {SchedFeat::kStartDebit, "START_DEBIT"},
    {SchedFeat::kLastBuddy, "LAST_BUDDY"},
    {SchedFeat::kCacheHotBuddy, "CACHE_HOT_BUDDY"},
    {SchedFeat::kNextBuddy, "NEXT_BUDDY"},
    {SchedFeat::kWakeupPreemption, "WAKEUP_PREEMPTION"},
    {SchedFeat::kPlaceLag, "PLACE_LAG"},
    {SchedFeat::kPlaceDeadlineInitial, "PLACE_DEADLINE_INITIAL"},
    {SchedFeat::kPlaceRelDeadline, "PLACE_REL_DEADLINE"},
    {SchedFeat::kRunToParity, "RUN_TO_PARITY"},
    {SchedFeat::kPreemptShort, "PREEMPT_SHORT"},
    {SchedFeat::kDelayDequeue, "DELAY_DEQUEUE"},
    {SchedFeat::kDelayZero, "DELAY_ZERO"},
    {SchedFeat::kPickBuddy, "PICK_BUDDY"},
    {SchedFeat::kHrtick, "HRTICK",
     "is not modelled: a slice ends at the tick's update_curr(), never at hrtick_start_fair()'s hrtimer"},
    {SchedFeat::kRtRuntimeShare, "RT_RUNTIME_SHARE",
     "is not modelled: RT throttling is per CPU, without do_balance_runtime()'s borrowing"},
    {SchedFeat::kNiRandom, "NI_RANDOM"},
    {SchedFeat::kRtPushIpi, "RT_PUSH_IPI"},
    {SchedFeat::kTtwuQueue, "TTWU_QUEUE"},
}};

const std::array<FeatureInfo, static_cast<size_t>(SchedFeat::kCount)>& all_sched_features() { return kFeatures; }

std::optional<SchedFeat> sched_feature_by_name(std::string_view name) {
  for (const auto& f : kFeatures)
    if (name == f.name) return f.id;
  return std::nullopt;
}

const char* sched_feature_unmodelled(std::string_view name) {
  for (const auto& f : kFeatures)
    if (name == f.name) return f.unmodelled;
  return nullptr;
}

const char* sched_feature_inert(std::string_view name, const KernelVersionInfo& info) {
  const auto f = sched_feature_by_name(name);
  if (!f) return nullptr;
  switch (*f) {
    case SchedFeat::kGentleFairSleepers:
    case SchedFeat::kStartDebit:
    case SchedFeat::kLastBuddy:
      // Removed with CFS's place_entity() and buddies (6.6, "sched/fair:
      // Commit to EEVDF").
      return info.eevdf ? "is CFS's (before 6.6); EEVDF has no such switch" : nullptr;
    case SchedFeat::kPlaceDeadlineInitial:
      // 6.6's task_fork_fair() honours it, but wake_up_new_task()'s
      // enqueue places the task again without ENQUEUE_INITIAL.
      if (info.eevdf && !info.new_task_enqueue_initial)
        return "only moves task_fork_fair()'s placement, which wake_up_new_task()'s enqueue without "
               "ENQUEUE_INITIAL replaces";
      [[fallthrough]];
    case SchedFeat::kPlaceLag:
    case SchedFeat::kPlaceRelDeadline:
    case SchedFeat::kRunToParity:
    case SchedFeat::kPreemptShort:
    case SchedFeat::kDelayDequeue:
    case SchedFeat::kDelayZero:
      return info.eevdf ? nullptr : "is EEVDF's (6.6+); this version's CFS has no such switch";
    case SchedFeat::kPickBuddy:
      // Came with 6.12's delayed dequeue; 6.6 picks the next buddy by
      // NEXT_BUDDY.
      return !info.eevdf ? "is EEVDF's (6.12+); this version's CFS has no such switch"
             : info.pick_buddy ? nullptr
                               : "is 6.12's; this version picks the next buddy by NEXT_BUDDY";
    default:
      return nullptr;
  }
}

const char* sched_feature_from_later_version(std::string_view name, bool value, const KernelVersionInfo& info) {
  const auto f = sched_feature_by_name(name);
  if (!f || !info.eevdf || info.pick_buddy) return nullptr;  // only 6.6 predates them among the EEVDF versions
  if (value == info.defaults(*f)) return nullptr;            // 6.6's own behaviour: nothing to say
  switch (*f) {
    case SchedFeat::kPlaceRelDeadline:
    case SchedFeat::kPreemptShort:
    case SchedFeat::kDelayDequeue:
    case SchedFeat::kDelayZero:
      // 6.12's "Complete EEVDF" series (with PICK_BUDDY); 6.6's features.h
      // has none of them.
      return "came with 6.12; 6.6 has no such switch";
    default:
      return nullptr;
  }
}

std::vector<std::string> sched_feature_names() {
  std::vector<std::string> v;
  for (const auto& f : kFeatures) v.emplace_back(f.name);
  return v;
}

namespace {

SchedFeatures cfs_6_1() {
  // kernel/sched/features.h at v6.1 (checked in 6.1.166).
  SchedFeatures f;
  f.set(SchedFeat::kGentleFairSleepers, true);
  f.set(SchedFeat::kStartDebit, true);
  f.set(SchedFeat::kNextBuddy, false);
  f.set(SchedFeat::kLastBuddy, true);
  f.set(SchedFeat::kCacheHotBuddy, true);
  f.set(SchedFeat::kWakeupPreemption, true);
  f.set(SchedFeat::kHrtick, false);
  f.set(SchedFeat::kRtRuntimeShare, false);
  f.set(SchedFeat::kRtPushIpi, true);  // HAVE_RT_PUSH_IPI: CONFIG_IRQ_WORK and SMP
  f.set(SchedFeat::kTtwuQueue, true);  // CONFIG_SMP, not PREEMPT_RT
  // The stable backport of "sched/fair: Proportional newidle balance"
  // (6.1.16x; on in 6.1.166). 6.6.63 and 6.12.19 predate their trees' one.
  f.set(SchedFeat::kNiRandom, true);
  return f;
}

SchedFeatures eevdf_6_6() {
  // kernel/sched/features.h at v6.6: EEVDF replaces CFS's sleeper credit,
  // START_DEBIT and the buddies but NEXT_BUDDY.
  SchedFeatures f;
  f.set(SchedFeat::kPlaceLag, true);
  f.set(SchedFeat::kPlaceDeadlineInitial, true);
  f.set(SchedFeat::kRunToParity, true);
  f.set(SchedFeat::kNextBuddy, false);
  f.set(SchedFeat::kCacheHotBuddy, true);
  f.set(SchedFeat::kWakeupPreemption, true);
  f.set(SchedFeat::kHrtick, false);
  f.set(SchedFeat::kRtRuntimeShare, false);
  f.set(SchedFeat::kRtPushIpi, true);  // HAVE_RT_PUSH_IPI: CONFIG_IRQ_WORK and SMP
  f.set(SchedFeat::kTtwuQueue, true);  // CONFIG_SMP, not PREEMPT_RT
  return f;
}

SchedFeatures eevdf_6_12() {
  // v6.12 "Complete EEVDF": delayed dequeue, relative deadlines across
  // non-sleep dequeues, short-slice wakeup preemption, and PICK_BUDDY
  // (features.h of 6.12.19) gating the next-buddy pick.
  SchedFeatures f = eevdf_6_6();
  f.set(SchedFeat::kPlaceRelDeadline, true);
  f.set(SchedFeat::kPickBuddy, true);
  f.set(SchedFeat::kPreemptShort, true);
  f.set(SchedFeat::kDelayDequeue, true);
  f.set(SchedFeat::kDelayZero, true);
  return f;
}

SchedFeatures eevdf_6_18() {
  // v6.18 (6.18.35): NEXT_BUDDY stays off; NI_RANDOM came to 6.18.y with
  // "proportional newidle balance" (6.18.5).
  SchedFeatures f = eevdf_6_12();
  f.set(SchedFeat::kNiRandom, true);
  return f;
}

}  // namespace

std::optional<KernelVersionInfo> kernel_version_info(std::string_view version) {
  KernelVersionInfo info;
  info.name = std::string(version);
  if (version == "6.1" || version == "6.6") {
    // What 6.1.166 and 6.6.63 share against 6.12.19: util_est before 6.8,
    // the cpufreq, misfit and balancer rules before 6.10.
    const bool v6_1 = version == "6.1";
    info.util_est_single_ewma = false;
    info.util_est_update_first = false;
    info.transition_delay = TransitionDelayRule::kLatencyX1000Cap10ms;
    info.misfit_skips_biggest_allowed = false;
    info.lb_misfit_not_a_failure = false;
    info.lb_misfit_tie_later_wins = true;
    info.repick_is_a_full_pick = true;
    info.uclamp_inc_before_enqueue = true;
    info.sugov_headroom_after_clamp = true;
    info.em_energy_v6_1 = true;
    info.rt_overload_by_migratory = true;
    info.rt_task_counts_dl = true;
    info.newidle_null_domain_returns = v6_1;
    info.balance_fair_tests_fair_queue = false;
    info.post_init_scale_load = true;
    info.group_keeps_weight_when_empty = false;
    info.tg_load_avg_ratelimit = false;
    info.pick_sets_levels_top_down = true;
    info.sugov_limits = v6_1 ? SugovLimitsRule::kV6_1 : SugovLimitsRule::kV6_6;
    info.defaults = v6_1 ? cfs_6_1() : eevdf_6_6();
    info.pick_vruntime_tree = !v6_1;
    info.new_task_enqueue_initial = false;  // (6.1's CFS places a new task at fork: no use for it)
    if (v6_1) {  // before EEVDF (6.6) and runnable boosting (6.5)
      info.eevdf = false;
      info.runnable_boost = false;
      info.lb_busy_dst_evens_task_count = true;
      info.idle_pelt_sync_without_rf = true;
    }
  } else if (version == "6.12") {
    info.defaults = eevdf_6_12();
    info.fair_server = true;
    info.rt_throttling = false;
    info.custom_slice = true;
    info.pick_buddy = true;
  } else if (version == "6.18") {
    info.defaults = eevdf_6_18();
    info.newidle_null_domain_returns = true;
    info.fair_server = true;
    info.dl_server_lazy_stop = true;
    info.dl_server_revised_wakeup = true;
    info.uclamp_inc_before_enqueue = true;
    info.rt_throttling = false;
    info.custom_slice = true;
    info.pick_buddy = true;
    info.preempt_lazy = true;
    info.protect_slice = true;
    info.lb_counts_runnable = true;
    info.lb_ineligible_stays = true;
    info.base_slice_ns = 700000;
    info.lag_clamp_max_slice = true;
    info.reweight_by_place = true;
    info.wakeup_preempt_actions = true;
    info.wake_affine_sync_skips_delayed = true;
    info.delayed_group_slice_fix = true;
    info.decayed_needs_zero_tg_contrib = true;
    info.sugov_limits = SugovLimitsRule::kV6_18;
    info.util_est_capacity_check = false;
    info.util_est_dequeue_skips_delayed = true;
    info.idle_pelt_sync_in_set_next_idle = true;
    info.genpd_cpu_latency_qos = true;
  } else {
    return std::nullopt;
  }
  return info;
}

std::vector<std::string> supported_kernel_versions() { return {"6.1", "6.6", "6.12", "6.18"}; }

}  // namespace schedlab
