// Scheduling policy names as configuration files spell them. Shared by the
// YAML loader and the rt-app importer; internal to models/config.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/workload/task_spec.h"

namespace schedlab::config {

// SCHED_OTHER, SCHED_NORMAL, SCHED_BATCH, SCHED_IDLE, SCHED_FIFO, SCHED_RR and,
// when `allow_short`, other/normal/batch/idle/fifo/rr.
std::optional<Policy> policy_from_name(std::string_view name, bool allow_short);
std::vector<std::string> policy_names(bool allow_short);
// Canonical spelling for messages ("SCHED_OTHER" for kNormal, as sched(7) does).
std::string policy_text(Policy p);
// The fair class takes nice values; the RT class takes priorities 1..99.
inline bool is_fair_policy(Policy p) { return p == Policy::kNormal || p == Policy::kBatch || p == Policy::kIdle; }

}  // namespace schedlab::config
