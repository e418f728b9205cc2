// Scheduler feature switches, one list like kernel/sched/features.h, with
// each version's defaults. A scenario's kernel.version picks the defaults;
// kernel.features overrides any switch by name.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace schedlab {

enum class SchedFeat : int {
  // Legacy CFS (before 6.6).
  kGentleFairSleepers,  // sleepers get half a latency period of credit (place_entity)
  kStartDebit,          // new tasks start one vslice behind (place_entity)
  kLastBuddy,           // prefer the task that ran last after a wakeup preemption
  kCacheHotBuddy,       // buddies count as cache hot for migration decisions (task_hot())
  // Both.
  kNextBuddy,           // prefer the task woken last (cfs_rq->next)
  kWakeupPreemption,    // allow wakeup-time preemption of current
  // EEVDF (6.6+).
  kPlaceLag,            // keep lag across sleep (placement strategy #1)
  kPlaceDeadlineInitial,  // new tasks start with half a slice's deadline
  kPlaceRelDeadline,    // keep the deadline relative across a non-sleep dequeue (6.12)
  kRunToParity,         // run current until it becomes ineligible or gets a new slice
  kPreemptShort,        // a waking task with a shorter slice may cancel RUN_TO_PARITY (6.12)
  kDelayDequeue,        // a task sleeping with negative lag stays queued until eligible (6.12)
  kDelayZero,           // a delayed task's positive lag is clipped to 0 on wake/dequeue (6.12)
  kPickBuddy,           // pick cfs_rq->next when eligible (6.12.y; before, NEXT_BUDDY gated it)
  // Other.
  kHrtick,              // slice end by hrtimer instead of the tick (off in every version; not modelled)
  kRtRuntimeShare,      // borrow RT runtime from other CPUs (off since 5.10; not modelled)
  kNiRandom,            // newidle balance runs with a probability following its success rate (6.18.5+; 6.1.16x)
  kRtPushIpi,           // an RT pull asks overloaded CPUs to push, by IPI, instead of pulling (all versions)
  kTtwuQueue,           // a remote wake-up goes through the target's wake list and IPI (ttwu_queue_cond(); all versions)
  kCount
};

struct FeatureInfo {
  SchedFeat id;
  const char* name;
  // Set for a switch the model does not implement: why, for the error that
  // refuses `true` (false, every modelled version's default, is accepted).
  const char* unmodelled = nullptr;
};

const std::array<FeatureInfo, static_cast<size_t>(SchedFeat::kCount)>& all_sched_features();
std::optional<SchedFeat> sched_feature_by_name(std::string_view name);
// Why a switch cannot be turned on (see FeatureInfo::unmodelled), or nullptr.
const char* sched_feature_unmodelled(std::string_view name);
std::vector<std::string> sched_feature_names();

class SchedFeatures {
 public:
  bool operator()(SchedFeat f) const { return on_[static_cast<size_t>(f)]; }
  void set(SchedFeat f, bool v) { on_[static_cast<size_t>(f)] = v; }

 private:
  std::array<bool, static_cast<size_t>(SchedFeat::kCount)> on_{};
};

}  // namespace schedlab
