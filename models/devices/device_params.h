// Typed parameters of the device models (models/devices/): a GPU and a
// DRM GPU scheduler. Built by models/config/devices_config.cc from the
// scenario's `devices:` list, where each device names its `model`.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "sim/time.h"

namespace schedlab {

class RngStream;

// A service-time distribution, drawn from the device's RngStream.
struct Distribution {
  enum class Kind { kFixed, kUniform, kExponential, kLognormal };
  Kind kind = Kind::kFixed;
  Time mean = Time::ms(1);   // fixed value; exponential / lognormal mean
  Time min, max;             // uniform bounds
  double sigma = 0.5;        // lognormal: sd of the underlying normal
  Time sample(RngStream& rng) const;
};

const char* distribution_name(Distribution::Kind k);  // "fixed", "uniform", ...

// A GPU executing the jobs the DRM scheduler hands it.
struct GpuParams {
  int slots = 1;              // jobs executed at once (firmware/hardware queues in use)
  Distribution service_time;  // per job, unless the submitting event gives gpu_time
  int irq_cpu = 0;            // CPU taking the job interrupt
  Time irq_latency;           // job end -> interrupt handler
};

// Where a DRM scheduler runs its run_job / free_job work.
enum class DrmSubmitPath { kWorkqueue, kKthreadWorker };

// A drm_gpu_scheduler (drivers/gpu/drm/scheduler/) with its entities.
struct DrmSchedParams {
  std::string gpu;                 // the GPU device it feeds
  DrmSubmitPath path = DrmSubmitPath::kWorkqueue;
  std::string submit_wq;           // workqueue name (path kWorkqueue)
  std::string kthread_worker;      // kthread_worker name (path kKthreadWorker)
  std::string fence_wq;            // workqueue signalling fences after the IRQ; empty: in the IRQ
  std::vector<std::string> entities;  // drm_sched_entity names (userspace queues)
  int credit_limit = 64;           // jobs in flight on the hardware ring (1 credit per job)
  // CPU work (capacity time at 1024 and f_max) of each step.
  Time select_cost = Time::us(2);  // run_job work: drm_sched_select_entity() + pop, also when it finds nothing
  Time run_job_cost = Time::us(10);  // ops->run_job(): ring write and doorbell
  Time free_job_cost = Time::us(5);  // free_job work: ops->free_job()
  Time fence_cost = Time::us(10);    // fence work: process the GPU events, signal done fences
};

struct DeviceParams {
  std::string name;
  std::string model;  // "gpu" | "drm_sched"
  std::variant<GpuParams, DrmSchedParams> params;
};

}  // namespace schedlab
