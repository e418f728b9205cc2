#include "models/workload/device_calls.h"

#include <fmt/format.h>

#include "models/devices/drm_sched.h"
#include "models/kernel/binder/binder.h"
#include "models/errors.h"
#include "models/kernel/kernel.h"
#include "models/kernel/kthread_worker.h"
#include "models/kernel/pm_runtime/pm_runtime.h"
#include "models/kernel/workqueue/workqueue.h"

namespace schedlab {

namespace {
template <typename Map>
std::string keys_of(const Map& m) {
  std::string out;
  for (const auto& [k, v] : m) out += (out.empty() ? "" : ", ") + k;
  return out.empty() ? "none" : out;
}
}  // namespace

void DeviceCalls::add_kthread_worker(KthreadWorker& w) { kthread_workers_[w.name()] = &w; }

void DeviceCalls::add_binder_proc(BinderProc& p) { binder_procs_[p.name()] = &p; }

BinderProc* DeviceCalls::binder_proc(const std::string& name) {
  auto it = binder_procs_.find(name);
  return it == binder_procs_.end() ? nullptr : it->second;
}

void DeviceCalls::add_drm_scheduler(DrmGpuScheduler& s) {
  for (const auto& e : s.entities()) entities_[e->name] = {&s, e.get()};
}

WorkStruct& DeviceCalls::item(const std::string& name) {
  auto& p = items_[name];
  if (!p) p = std::make_unique<WorkStruct>(name);
  return *p;
}

WorkStruct* DeviceCalls::work_item(const std::string& name) {
  auto it = items_.find(name);
  return it == items_.end() ? nullptr : it->second.get();
}

RpmDevice* DeviceCalls::rpm_device(const std::string& name) { return pm_ ? pm_->device(name) : nullptr; }

bool DeviceCalls::may_sleep(const CallSpec& c) {
  if (c.op == CallSpec::Op::kBinderCall) return !c.oneway;
  if (c.op == CallSpec::Op::kCancelWork) return c.sync;
  if (c.op == CallSpec::Op::kFlushWork) return true;
  if (c.op != CallSpec::Op::kRpm) return false;
  switch (c.rpm) {
    case RpmApi::kGetSync:
    case RpmApi::kResumeAndGet:
    case RpmApi::kPutSync:
    case RpmApi::kPutSyncAutosuspend:
      return true;
    default:
      return false;
  }
}

std::string DeviceCalls::check(const CallSpec& c) {
  switch (c.op) {
    case CallSpec::Op::kQueueWork: {
      if (wqs_ && wqs_->find(c.target)) return "";
      std::string valid;
      if (wqs_)
        for (const auto& n : wqs_->names()) valid += (valid.empty() ? "" : ", ") + n;
      return fmt::format("queue_work: unknown workqueue '{}' (workqueues: {})", c.target, valid);
    }
    case CallSpec::Op::kKthreadQueueWork:
      if (kthread_workers_.count(c.target)) return "";
      return fmt::format("kthread_queue_work: unknown kthread_worker '{}' (kthread_workers: {})", c.target,
                         keys_of(kthread_workers_));
    case CallSpec::Op::kSubmitJob:
      if (entities_.count(c.target)) return "";
      return fmt::format("submit_job: unknown DRM entity '{}' (entities: {})", c.target, keys_of(entities_));
    case CallSpec::Op::kRpm: {
      if (rpm_device(c.target)) return "";
      std::string valid;
      if (pm_)
        for (const auto& n : pm_->device_names()) valid += (valid.empty() ? "" : ", ") + n;
      return fmt::format("rpm: unknown runtime PM device '{}' (devices: {})", c.target, valid.empty() ? "none" : valid);
    }
    case CallSpec::Op::kBinderCall:
      if (binder_procs_.count(c.target)) return "";
      return fmt::format("binder_call: unknown binder process '{}' (binder_procs: {})", c.target,
                         keys_of(binder_procs_));
    case CallSpec::Op::kCancelWork:
    case CallSpec::Op::kFlushWork:
      return "";  // the work item only (the loader checks that an event queues it)
  }
  return "unknown call";
}

void DeviceCalls::call(Task& self, const CallSpec& c) {
  const QueueContext ctx{&self, self.cpu};
  switch (c.op) {
    case CallSpec::Op::kQueueWork:
    case CallSpec::Op::kKthreadQueueWork: {
      WorkStruct& w = item(c.work);
      // A work item is a work_struct or a kthread_work, not both.
      if ((c.op == CallSpec::Op::kQueueWork && w.kthread_worker) ||
          (c.op == CallSpec::Op::kKthreadQueueWork && w.pwq))
        throw ModelError(fmt::format("work '{}' is queued with both queue_work and kthread_queue_work: give each its "
                                     "own work name",
                                     c.work));
      auto kthread_worker = [&]() -> KthreadWorker& {
        auto it = kthread_workers_.find(c.target);
        if (it == kthread_workers_.end()) throw ModelError(check(c));
        return *it->second;
      };
      if (w.pending && !c.mod) {
        ++already_pending_;
        // Nothing is queued; a following kthread_worker still counts the
        // queuer (kthread_worker.h).
        if (c.op == CallSpec::Op::kKthreadQueueWork) kthread_worker().queue_work(w, ctx);
        return;
      }
      w.payload.clear();
      if (c.cost > Time::zero()) w.payload.push_back({WorkStep::Kind::kRun, c.cost});
      if (c.sleep > Time::zero()) w.payload.push_back({WorkStep::Kind::kSleep, c.sleep});
      if (c.op == CallSpec::Op::kKthreadQueueWork) {
        KthreadWorker& kw = kthread_worker();
        if (c.mod)
          kw.mod_delayed_work(w, ctx, c.delay, &self);
        else if (c.delay > Time::zero())
          kw.queue_delayed_work(w, ctx, c.delay, &self);
        else
          kw.queue_work(w, ctx);
        return;
      }
      Workqueue* wq = wqs_ ? wqs_->find(c.target) : nullptr;
      if (!wq) throw ModelError(check(c));
      if (c.cpu >= k_.nr_cpus())
        throw ModelError(fmt::format("queue_work: CPU {} does not exist (the platform has {})", c.cpu, k_.nr_cpus()));
      if (c.mod)
        wqs_->mod_delayed_work(*wq, w, ctx, c.delay, c.cpu);
      else if (c.delay > Time::zero())
        wqs_->queue_delayed_work(*wq, w, ctx, c.delay, c.cpu);
      else
        wqs_->queue_work(*wq, w, ctx, c.cpu);
      return;
    }
    case CallSpec::Op::kSubmitJob: {
      auto it = entities_.find(c.target);
      if (it == entities_.end()) throw ModelError(check(c));
      it->second.first->push_job(*it->second.second, c.gpu_time, self);
      return;
    }
    case CallSpec::Op::kRpm: {
      RpmDevice* dev = rpm_device(c.target);
      if (!dev) throw ModelError(check(c));
      if (may_sleep(c)) throw ModelError(fmt::format("rpm: {} may sleep: the task body steps it", rpm_api_name(c.rpm)));
      pm_->call_nosleep(*dev, c.rpm, ctx);
      return;
    }
    case CallSpec::Op::kBinderCall: {
      // One-way here; a synchronous call waits for its reply in the task body.
      BinderProc* p = binder_proc(c.target);
      if (!p) throw ModelError(check(c));
      if (!c.oneway) throw ModelError("binder_call: a synchronous call sleeps: the task body makes it");
      p->transact(self, c, nullptr);
      return;
    }
    case CallSpec::Op::kCancelWork: {
      if (c.sync) throw ModelError("cancel_work: cancel_work_sync() sleeps: the task body steps it");
      WorkStruct& w = item(c.work);
      if (w.kthread_worker)
        throw ModelError(fmt::format("cancel_work: '{}' is a kthread_work, which has only "
                                     "kthread_cancel_(delayed_)work_sync() (sync: true)",
                                     c.work));
      if (w.pwq || w.timer_armed) wqs_->cancel_work(w, ctx);  // else never queued: nothing pending
      return;
    }
    case CallSpec::Op::kFlushWork:
      throw ModelError("flush_work sleeps: the task body steps it");
  }
}

std::optional<Action> DeviceCalls::work_wait_step(Task& self, const CallSpec& c) {
  WorkStruct& w = item(c.work);
  if (w.kthread_worker) {
    for (auto& [name, kw] : kthread_workers_)
      if (kw == w.kthread_worker)
        return c.op == CallSpec::Op::kFlushWork ? kw->flush_work_step(self, w) : kw->cancel_delayed_work_sync_step(self, w);
  }
  if (!wqs_ || (!w.pwq && !w.timer_armed)) return std::nullopt;  // never queued: neither pending nor executing
  if (c.op == CallSpec::Op::kCancelWork) return wqs_->cancel_work_sync_step(self, w);
  return wqs_->flush_work_step(self, w, c.delayed);
}

}  // namespace schedlab
