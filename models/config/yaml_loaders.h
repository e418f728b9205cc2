// The YAML area loaders, one per file (platform_config.cc, kernel_config.cc,
// workload_config.cc), composed by scenario_config.cc. Internal to
// models/config; everything else goes through config.h.
#pragma once

#include <string>
#include <vector>

#include "models/config/yaml_util.h"
#include "models/kernel/kernel_params.h"
#include "models/workload/task_spec.h"

namespace schedlab::config {

PlatformParams load_platform(const YamlDoc& doc, const YAML::Node& node, const std::string& path);
KernelParams load_kernel(const YamlDoc& doc, const YAML::Node& node, const std::string& path);
// Needs the platform (affinity range) and kernel (custom-slice support).
std::vector<TaskSpec> load_tasks(const YamlDoc& doc, const YAML::Node& node, const std::string& path,
                                 const PlatformParams& platform, const KernelParams& kernel);

}  // namespace schedlab::config
