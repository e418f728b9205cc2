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

// The names `queue_work`, `kthread_queue_work`, `submit_job` and
// `binder_call` events may use (devices_config.cc builds it from the scenario's sections).
struct CallTargets {
  std::vector<std::string> workqueues;       // declared and system workqueues
  std::vector<std::string> kthread_workers;
  std::vector<std::string> binder_procs;
  std::vector<std::string> entities;         // DRM scheduler entities
  std::vector<std::string> rpm_devices;      // pm_runtime devices
};

PlatformParams load_platform(const YamlDoc& doc, const YAML::Node& node, const std::string& path);
// The platform file `node` (the scenario's `platform:` value) names: the
// configs/platforms file of `platform: NAME`, or `platform: {file: PATH}`
// (relative to the scenario); empty for a platform written inline.
std::string platform_file(const YamlDoc& doc, const YAML::Node& node, const std::string& path);
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
// Shared by the device loaders: a `name` key unique among `seen` (no blanks);
// a reference to one of `valid` (else an error listing them); a sequence.
std::string unique_name(const YamlDoc& doc, const MapReader& r, std::vector<std::string>& seen, std::string_view what);
std::string ref_name(const YamlDoc& doc, const MapReader& r, std::string_view key, const std::vector<std::string>& valid,
                     std::string_view what);
const YAML::Node& sequence(const YamlDoc& doc, const YAML::Node& node, const std::string& path, std::string_view what);
Distribution load_distribution(const YamlDoc& doc, const YAML::Node& node, const std::string& path);
// `policy`, `nice`, `priority` of a kernel or device thread (`what`: "worker",
// "thread" in messages); a new policy resets nice / priority. True if
// `priority` was given.
bool load_thread_policy(const MapReader& r, Policy& policy, int& nice, int& rt_priority, std::string_view what);
// `comm` of a kernel or device thread, if given: a name without blanks.
void load_thread_comm(const MapReader& r, std::string& comm);
// The policies a kernel or device thread may take, as declarations show them.
inline constexpr const char* kThreadPolicyChoices = "SCHED_OTHER | SCHED_BATCH | SCHED_IDLE | SCHED_FIFO | SCHED_RR";
// The `nice` of a task or thread (`what` in messages) with `policy`: -20..19
// for a fair policy; only 0, the default, for an RT one, so that an
// experiment's overlay can make a nice task SCHED_FIFO by setting nice: 0.
int load_nice(const MapReader& r, const YAML::Node& node, Policy policy, std::string_view what);
// display_config.cc: a `model: display` device; gpus are the scenario's gpu devices.
// The DRM GPU scheduler's workqueue design (run_job and free_job work items
// on submit_wq: drm_sched_init(), sched_main.c) is 6.8's; 6.1 and 6.6 run
// one kthread per scheduler (drm_sched_main(), SCHED_FIFO 1 by
// sched_set_fifo_low()), which the model does not have. Fails at `key`
// of `r` on a kernel before 6.8.
void require_drm_sched_workqueues(const MapReader& r, const std::string& key, const std::string& kernel_version);
DisplayParams load_display(const MapReader& r, const std::vector<std::string>& gpus, const ScenarioParams& s);
const std::vector<ParamDecl>& display_params();         // devices[] (model: display)
const std::vector<ParamDecl>& display_thread_params();  // ui_thread / render_thread / sf_thread
const std::vector<ParamDecl>& display_adpf_params();    // a display's adpf
const std::vector<ParamDecl>& display_sf_adpf_params();  // a display's sf_adpf
// pm_runtime_config.cc: the `pm_runtime:` section and `rpm:` events.
// cgroup_config.cc: the cpu cgroups (into s.kernel.cgroups; after the
// kernel, before the tasks), tasks' `cgroup` key and the cgroup events.
void load_cgroups(const YamlDoc& doc, const MapReader& top, ScenarioParams& s);
void load_task_cgroup(const YamlDoc& doc, const MapReader& r, const KernelParams& k, std::string& out);
EventSpec load_cgroup_event(const YamlDoc& doc, const YAML::Node& node, const std::string& path, const KernelParams& k);
EventSpec load_cpu_uclamp_event(const YamlDoc& doc, const YAML::Node& node, const std::string& path,
                                const KernelParams& k);
const std::vector<ParamDecl>& cgroup_params();            // cgroups[]
const std::vector<ParamDecl>& cpu_uclamp_event_params();  // cpu_uclamp event
EventSpec load_cpu_weight_event(const YamlDoc& doc, const YAML::Node& node, const std::string& path,
                                const KernelParams& k);
const std::vector<ParamDecl>& cpu_weight_event_params();  // cpu_weight event
EventSpec load_cpu_idle_event(const YamlDoc& doc, const YAML::Node& node, const std::string& path,
                              const KernelParams& k);
const std::vector<ParamDecl>& cpu_idle_event_params();  // cpu_idle event

void load_pm_runtime(const YamlDoc& doc, const MapReader& top, ScenarioParams& s);
EventSpec load_rpm_event(const YamlDoc& doc, const YAML::Node& node, const std::string& path, const CallTargets* targets);
const std::vector<ParamDecl>& pm_runtime_params();   // pm_runtime
const std::vector<ParamDecl>& rpm_device_params();   // pm_runtime.devices[]
const std::vector<ParamDecl>& rpm_event_params();    // rpm event
// The value of a queue_work / kthread_queue_work / submit_job / binder_call event.
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
const std::vector<ParamDecl>& irq_thread_params();         // devices[].irq_thread (model: gpu)
const std::vector<ParamDecl>& queue_work_params();         // queue_work event
const std::vector<ParamDecl>& kthread_queue_work_params(); // kthread_queue_work event
const std::vector<ParamDecl>& submit_job_params();         // submit_job event
const std::vector<ParamDecl>& cancel_work_params();        // cancel_work event
const std::vector<ParamDecl>& flush_work_params();         // flush_work event
const std::vector<ParamDecl>& binder_proc_params();        // binder_procs[]
const std::vector<ParamDecl>& binder_call_params();        // binder_call event
std::vector<ParamSection> devices_schema();

}  // namespace schedlab::config
