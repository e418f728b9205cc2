// A whole scenario, typed: what models/config builds from YAML or rt-app JSON
// and what System (models/system.h) runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/config/diagnostics.h"
#include "models/devices/device_params.h"
#include "models/kernel/binder/binder_params.h"
#include "models/kernel/kernel_params.h"
#include "models/kernel/pm_runtime/pm_runtime_params.h"
#include "models/kernel/workqueue/workqueue_params.h"
#include "models/workload/task_spec.h"
#include "sim/time.h"

namespace schedlab {

struct ScenarioParams {
  std::string source;               // file it came from (for messages)
  std::string name;                 // the scenario's name (YAML `name`, else the file's stem)
  KernelParams kernel;
  PlatformParams platform;
  Time duration = Time::s(10);
  Time warmup = Time::zero();       // metrics ignore [0, warmup)
  uint64_t seed = 1;
  bool pi_enabled = true;           // rt-app global.pi_enabled: mutexes are rt_mutex (PI)
  std::vector<TaskSpec> tasks;
  // Kernel execution contexts and devices (`workqueue:`, `workqueues:`,
  // `kthread_workers:`, `binder_procs:`, `devices:`); empty in scenarios
  // that use none.
  WorkqueueSubsysParams workqueue;
  std::vector<KthreadWorkerParams> kthread_workers;
  std::vector<BinderProcParams> binder_procs;
  std::vector<DeviceParams> devices;
  PmRuntimeParams pm_runtime;         // `pm_runtime:`; no devices = no runtime PM
  std::vector<config::ConfigWarning> warnings;  // what the loader could not model or found suspect
};

}  // namespace schedlab
