// The YAML area loaders, one per file (platform_config.cc, kernel_config.cc,
// workload_config.cc), composed by scenario_config.cc. Internal to
// models/config; everything else goes through config.h.
#pragma once

#include <string>
#include <vector>

#include "models/config/yaml_util.h"
#include "models/kernel/kernel_params.h"
#include "models/scenario.h"
#include "models/workload/task_spec.h"

namespace schedlab::config {

// The names `queue_work`, `kthread_queue_work` and `submit_job` events may
// use (devices_config.cc builds it from the scenario's sections).
struct CallTargets {
  std::vector<std::string> workqueues;       // declared and system workqueues
  std::vector<std::string> kthread_workers;
  std::vector<std::string> entities;         // DRM scheduler entities
};

PlatformParams load_platform(const YamlDoc& doc, const YAML::Node& node, const std::string& path);
KernelParams load_kernel(const YamlDoc& doc, const YAML::Node& node, const std::string& path);
// Needs the platform (affinity range) and kernel (custom-slice support);
// call events are checked against `targets` when given.
std::vector<TaskSpec> load_tasks(const YamlDoc& doc, const YAML::Node& node, const std::string& path,
                                 const PlatformParams& platform, const KernelParams& kernel,
                                 const CallTargets* targets = nullptr);
// A CPU affinity list: [0, 2] or "0-3,6", each below platform_cpus (workload_config.cc).
std::vector<int> load_cpu_list(const YamlDoc& doc, const YAML::Node& node, const std::string& path, int platform_cpus);

// devices_config.cc: the kernel execution contexts and devices, read from
// the top-level `workqueue:`, `workqueues:`, `kthread_workers:` and
// `devices:` keys of `top` (each optional) into `s`; needs s.platform.
void load_devices(const YamlDoc& doc, const MapReader& top, ScenarioParams& s);
CallTargets call_targets(const ScenarioParams& s);
// The value of a queue_work / kthread_queue_work / submit_job event.
EventSpec load_call_event(const YamlDoc& doc, const YAML::Node& node, const std::string& path, CallSpec::Op op,
                          const CallTargets* targets, int platform_cpus);
// Their declarations and reference sections (yaml_schema() appends them).
const std::vector<ParamDecl>& workqueue_subsys_params();   // workqueue
const std::vector<ParamDecl>& workqueue_params();          // workqueues[]
const std::vector<ParamDecl>& kthread_worker_params();     // kthread_workers[]
const std::vector<ParamDecl>& device_common_params();      // devices[]
const std::vector<ParamDecl>& gpu_params();                // devices[] (model: gpu)
const std::vector<ParamDecl>& drm_sched_params();          // devices[] (model: drm_sched)
const std::vector<ParamDecl>& distribution_params();       // service_time
const std::vector<ParamDecl>& queue_work_params();         // queue_work event
const std::vector<ParamDecl>& kthread_queue_work_params(); // kthread_queue_work event
const std::vector<ParamDecl>& submit_job_params();         // submit_job event
std::vector<ParamSection> devices_schema();

}  // namespace schedlab::config
