// Names the scheduler core owns and the configuration layer validates
// against: sched_feat() names and the kernel versions with a model. Both
// come from the core's own lists (models/kernel/sched/).
#pragma once

#include <string>
#include <vector>

#include "models/kernel/sched/features.h"
#include "models/kernel/sched/kernel_versions.h"

namespace schedlab {

// kernel/sched/features.h names a scenario may override under kernel.features.
inline const std::vector<std::string>& known_sched_features() {
  static const std::vector<std::string> names = sched_feature_names();
  return names;
}

// Values accepted for kernel.version (compared as text: "6.1" is not "6.10").
inline const std::vector<std::string>& known_kernel_versions() {
  static const std::vector<std::string> versions = supported_kernel_versions();
  return versions;
}

}  // namespace schedlab
