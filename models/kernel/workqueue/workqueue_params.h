// Typed parameters of the kernel execution contexts: the workqueue model
// (workqueue.h: the subsystem's tunables, the kernel's workqueue.* module
// parameters and constants, and the alloc_workqueue() calls of a scenario)
// and kthread_workers (models/kernel/kthread_worker.h). Built by
// models/config/devices_config.cc from the `workqueue:`, `workqueues:` and
// `kthread_workers:` sections.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "models/workload/task_spec.h"
#include "sim/time.h"

namespace schedlab {

// alloc_workqueue() flags (include/linux/workqueue.h, 6.12) plus WQ_RTPRI,
// the SCHED_FIFO workqueue of the DRM submit-latency thread (not upstream).
enum WqFlags : unsigned {
  kWqUnbound = 1u << 1,         // WQ_UNBOUND
  kWqFreezable = 1u << 2,       // WQ_FREEZABLE (no effect: no suspend modelled)
  kWqMemReclaim = 1u << 3,      // WQ_MEM_RECLAIM (no effect: no rescuer modelled)
  kWqHighpri = 1u << 4,         // WQ_HIGHPRI
  kWqCpuIntensive = 1u << 5,    // WQ_CPU_INTENSIVE
  kWqSysfs = 1u << 6,           // WQ_SYSFS
  kWqPowerEfficient = 1u << 7,  // WQ_POWER_EFFICIENT (bound: workqueue.power_efficient is off)
  kWqRtpri = 1u << 15,          // WQ_RTPRI (proposal): SCHED_FIFO workers
  kWqOrdered = 1u << 17,        // __WQ_ORDERED: alloc_ordered_workqueue()
};

inline constexpr int kWqMaxActive = 512;             // WQ_MAX_ACTIVE
inline constexpr int kWqDflActive = kWqMaxActive / 2;  // WQ_DFL_ACTIVE

struct WorkqueueParams {
  std::string name;
  unsigned flags = 0;              // WqFlags
  int max_active = 0;              // 0: WQ_DFL_ACTIVE (ordered: 1)
  // Unbound workqueue attributes, writable in sysfs with WQ_SYSFS
  // (/sys/devices/virtual/workqueue/NAME/{nice,cpumask,affinity_scope,affinity_strict}).
  std::optional<int> nice;         // default: 0, or -20 with WQ_HIGHPRI
  std::vector<int> cpumask;        // empty: every CPU (wq_unbound_cpumask)
  std::string affinity_scope = "default";  // default | cpu | smt | cache | numa | system
  bool affinity_strict = false;
  // WQ_RTPRI (assumptions: the thread's WIP branch could not be read).
  int rt_priority = 1;             // SCHED_FIFO priority of the workers
  int max_workers = 0;             // the driver's thread cap (0: none), applied per pool: per CPU if bound, per pod if unbound
};

struct WorkqueueSubsysParams {
  // create_worker(): kthread_create_on_node() and the new worker's set-up,
  // modelled as a delay during which the manager worker sleeps in D
  // (assumption: no measured value; 50 us).
  Time create_worker_delay = Time::us(50);
  Time idle_timeout = Time::s(300);              // IDLE_WORKER_TIMEOUT
  std::string default_affinity_scope = "cache";  // workqueue.default_affinity_scope (6.12: cache)
  std::vector<WorkqueueParams> workqueues;
};

// kthread_worker priority following (kthread_worker.h).
enum class KthreadFollow { kNone, kMinNice, kFifo };

struct KthreadWorkerParams {
  std::string name;                // the thread's comm
  Policy policy = Policy::kNormal;
  int nice = 0;
  int rt_priority = 0;             // for SCHED_FIFO / SCHED_RR
  std::vector<int> cpus;           // affinity; empty = all CPUs
  KthreadFollow follow = KthreadFollow::kNone;
};

}  // namespace schedlab
