// Runtime power management of devices, following drivers/base/power/runtime.c
// and include/linux/pm_runtime.h of Linux 6.12.
//
// Each device has a runtime status (enum rpm_status: active, resuming,
// suspended, suspending), a usage count, a count of active children, an
// autosuspend delay with its hrtimer (pm_suspend_timer_fn), and one pending
// request (dev->power.request) served by `pm_runtime_work` on pm_wq. The
// core paths are rpm_idle(), rpm_suspend() and rpm_resume() with the
// flags RPM_ASYNC, RPM_NOWAIT, RPM_GET_PUT and RPM_AUTO:
//  - synchronous calls run the driver's callback in the caller's context
//    (its CPU cost is work the caller runs; a hardware wait inside it is a
//    sleep in D woken by a timer);
//  - a synchronous call that finds the device RESUMING or SUSPENDING sleeps
//    in D on power.wait_queue until the context doing the transition
//    finishes it and wakes every waiter (the "rpm_resume() D-state" of the
//    pm_wq thread, whose waker is usually the pm_wq worker);
//  - asynchronous calls (and the autosuspend timer) set dev->power.request
//    and queue the device's work item on pm_wq unless one is pending;
//  - a resume first resumes the parent synchronously; a suspend ends with
//    rpm_idle(parent, RPM_ASYNC) once the parent's child_count drops.
//
// Simplifications: no irq_safe devices, no runtime_error latching (callbacks
// do not fail), no disable_depth (runtime PM is enabled for every device),
// no device links or suppliers, no idle callback (rpm_idle() goes straight
// to rpm_suspend(RPM_AUTO), as for drivers without ->runtime_idle), the
// spinlock costs nothing. The suspend hrtimer is a range timer, as the
// kernel arms it: from last_busy + autosuspend_delay to a quarter of the
// delay later (Kernel::hrtimer_start_range()). A callback's hardware wait
// ends exactly after its duration (no slack).
//
// Observers get RpmEvent (models/kernel/sched/observer.h): kStatus at each
// __update_runtime_status(); kDSleep for every D sleep inside rpm_resume()
// or rpm_suspend() (wait queue and callback waits, in a task or a pm_wq
// worker), reported when the sleeper runs again, with the waker's runnable
// time over the sleep from the RunnableTracker (a calling task is tracked
// from its first RpmCall::step() on).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/kernel/pm_runtime/pm_runtime_params.h"
#include "models/kernel/task_body.h"
#include "models/kernel/workqueue/work.h"
#include "sim/time.h"

namespace schedlab {

class Kernel;
class RunnableTracker;
class Workqueue;
class WorkqueueSystem;
struct Task;

enum class RpmStatus : uint8_t { kActive = 0, kResuming = 1, kSuspended = 2, kSuspending = 3 };
const char* rpm_status_name(RpmStatus s);  // "active", "resuming", "suspended", "suspending"

// enum rpm_request.
enum class RpmRequest : uint8_t { kNone, kIdle, kSuspend, kAutosuspend, kResume };

// The rpm_* flags (include/linux/pm_runtime.h).
enum RpmFlags : unsigned {
  kRpmAsync = 0x01,   // RPM_ASYNC: request, do not call
  kRpmNowait = 0x02,  // RPM_NOWAIT: do not wait for a concurrent transition
  kRpmGetPut = 0x04,  // RPM_GET_PUT: increment/decrement the usage count
  kRpmAuto = 0x08,    // RPM_AUTO: use the autosuspend delay
};


class PmRuntime;

// struct dev_pm_info, the runtime part. Read-only outside the model.
class RpmDevice {
 public:
  const std::string& name() const { return params_.name; }
  const RpmDeviceParams& params() const { return params_; }
  RpmStatus status() const { return status_; }
  int usage_count() const { return usage_count_; }
  int child_count() const { return child_count_; }
  RpmDevice* parent() const { return parent_; }
  bool request_pending() const { return request_pending_; }
  RpmRequest request() const { return request_; }
  bool deferred_resume() const { return deferred_resume_; }
  Time last_busy() const { return last_busy_; }
  Time timer_expires() const { return timer_expires_; }  // 0: the suspend timer is not armed
  uint64_t suspends() const { return suspends_; }         // completed rpm_suspend callbacks
  uint64_t resumes() const { return resumes_; }           // completed rpm_resume callbacks
  uint64_t works_queued() const { return works_queued_; }  // pm_runtime_work items queued

 private:
  friend class PmRuntime;
  friend class RpmCall;
  RpmDeviceParams params_;
  RpmStatus status_ = RpmStatus::kSuspended;
  int usage_count_ = 0;
  int child_count_ = 0;
  RpmDevice* parent_ = nullptr;
  bool request_pending_ = false;
  RpmRequest request_ = RpmRequest::kNone;
  bool deferred_resume_ = false;
  bool timer_autosuspends_ = false;
  Time last_busy_;
  Time timer_expires_;
  uint64_t suspends_ = 0, resumes_ = 0, works_queued_ = 0;
  // Implementation state (power.wait_queue, the work item, the timer) is
  // owned by PmRuntime.
  int index_ = 0;
};

// A pm_runtime_*() call in progress in a task's own context, stepped by the
// task's body like a work function: begin() enters the call; then, while
// active(), the body returns step()'s actions (CPU work of a callback, a D
// sleep on the wait queue or inside a callback). step() returns
// Action::exit() when the call has returned (its value in result()).
// A body owns one RpmCall per concurrent call site and reuses it (no
// allocation per call).
class RpmCall {
 public:
  explicit RpmCall(PmRuntime& pm);
  ~RpmCall();
  RpmCall(const RpmCall&) = delete;
  RpmCall& operator=(const RpmCall&) = delete;
  void begin(RpmDevice& dev, RpmApi api);
  bool active() const;
  Action step(Task& self);
  int result() const;  // the call's return value (1 already active, 0 done, -EAGAIN, -EINPROGRESS, ...)

 private:
  friend class PmRuntime;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class PmRuntime {
 public:
  // pm_wq is the workqueue named params.workqueue (resolved by the caller).
  PmRuntime(Kernel& k, WorkqueueSystem& wqs, Workqueue& pm_wq, const PmRuntimeParams& params,
            RunnableTracker& tracker);
  ~PmRuntime();
  RpmDevice* device(const std::string& name);
  std::vector<std::string> device_names() const;
  const std::vector<std::unique_ptr<RpmDevice>>& devices() const { return devices_; }
  Workqueue& pm_wq() { return pm_wq_; }

  // A call that cannot sleep (kGet, kPut, kPutAutosuspend, kMarkLastBusy),
  // from an interrupt or timer (ctx.task == nullptr) or a task that must
  // not block. Returns the kernel's value. Throws ModelError for a
  // synchronous API.
  int call_nosleep(RpmDevice& dev, RpmApi api, QueueContext ctx);

  Kernel& kernel() { return k_; }

 private:
  friend class RpmCall;
  struct Impl;
  Kernel& k_;
  WorkqueueSystem& wqs_;
  Workqueue& pm_wq_;
  RunnableTracker& tracker_;
  std::vector<std::unique_ptr<RpmDevice>> devices_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace schedlab
