// The registry through which task bodies call the kernel objects and
// devices of a scenario, each chosen by name: `queue_work` to a workqueue,
// `kthread_queue_work` to a kthread_worker, `submit_job` to a DRM
// scheduler entity, `binder_call` to a binder process (CallSpec in
// task_spec.h). An unknown name is an error listing the valid ones.
//
// Work items named by events are created on first use and keep their
// identity (a pending item is not queued again, as queue_work() returns
// false). The function an item runs is given by the call that made it
// pending: `cost` of CPU work, then `sleep` in D.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/kernel/workqueue/work.h"
#include "models/workload/task_spec.h"

namespace schedlab {

class BinderProc;
class DrmGpuScheduler;
struct DrmEntity;
class Kernel;
class KthreadWorker;
class PmRuntime;
class RpmDevice;
class WorkqueueSystem;
struct Task;

class DeviceCalls {
 public:
  explicit DeviceCalls(Kernel& k) : k_(k) {}
  void set_workqueues(WorkqueueSystem* wqs) { wqs_ = wqs; }
  void add_kthread_worker(KthreadWorker& w);
  void add_drm_scheduler(DrmGpuScheduler& s);
  void add_binder_proc(BinderProc& p);
  // The binder process a `binder_call` names (nullptr if unknown).
  BinderProc* binder_proc(const std::string& name);
  void set_pm_runtime(PmRuntime* pm) { pm_ = pm; }
  PmRuntime* pm_runtime() { return pm_; }
  // The runtime PM device an `rpm` call names (nullptr if unknown).
  RpmDevice* rpm_device(const std::string& name);
  // Calls that may sleep run in the caller over several steps (RpmCall,
  // driven by the task body; a binder_call, done by the task body as the
  // caller waits for the reply); the others complete at once in call().
  static bool may_sleep(const CallSpec& c);

  // "" if the call's target exists, else the error (with the valid names).
  std::string check(const CallSpec& c);
  // Performs the call in the context of `self` (the running task, on its CPU).
  void call(Task& self, const CallSpec& c);
  // cancel_work with sync, flush_work: the caller's next step
  // (cancel_work_sync() and friends, models/kernel/workqueue/workqueue.h,
  // kthread_worker.h): std::nullopt once the call returns, else the sleep
  // to take, after which the body calls it again.
  std::optional<Action> work_wait_step(Task& self, const CallSpec& c);

  // Counters for reports and tests: calls that found their work item pending.
  uint64_t already_pending() const { return already_pending_; }
  WorkStruct* work_item(const std::string& name);

 private:
  WorkStruct& item(const std::string& name);
  Kernel& k_;
  WorkqueueSystem* wqs_ = nullptr;
  std::map<std::string, KthreadWorker*> kthread_workers_;
  std::map<std::string, BinderProc*> binder_procs_;
  std::map<std::string, std::pair<DrmGpuScheduler*, DrmEntity*>> entities_;
  std::map<std::string, std::unique_ptr<WorkStruct>> items_;
  PmRuntime* pm_ = nullptr;
  uint64_t already_pending_ = 0;
};

}  // namespace schedlab
