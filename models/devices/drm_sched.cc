// drivers/gpu/drm/scheduler/ (sched_main.c, sched_entity.c) as described in
// drm_sched.h; function names in comments are the kernel's.
#include "models/devices/drm_sched.h"

#include <algorithm>
#include <fmt/format.h>

#include "models/errors.h"
#include "models/kernel/kernel.h"
#include "models/kernel/kthread_worker.h"
#include "models/kernel/workqueue/workqueue.h"
#include "sim/log.h"

namespace schedlab {

// drm_sched_run_job_work().
class DrmGpuScheduler::RunJobFn final : public WorkFn {
 public:
  explicit RunJobFn(DrmGpuScheduler& s) : s_(s) {}
  Action step(WorkExec& x) override {
    switch (x.step) {
      case 0:
        return Action::run(s_.params_.select_cost.count());
      case 1: {
        // Find an entity with a ready job the hardware has room for.
        DrmEntity* e = s_.select_entity();
        if (!e) return Action::exit();  // no more work (or no credits: free_job requeues run_job)
        std::unique_ptr<DrmJob> job = e->job_queue.take_front();  // drm_sched_entity_pop_job()
        ++s_.credit_count_;
        job->run = s_.k_.now();
        job_ = job.get();
        s_.pending_list_.push_back(std::move(job));  // drm_sched_job_begin()
        s_.emit(DrmJobEvent::Phase::kRun, *job_, x.context());  // trace_drm_run_job
        return Action::run(s_.params_.run_job_cost.count());  // ops->run_job()
      }
      case 2:
        if (job_) {
          s_.emit(DrmJobEvent::Phase::kHw, *job_, x.context());
          s_.gpu_.run(s_, job_->id, job_->gpu_time);
          job_ = nullptr;
        }
        s_.run_job_queue(x.context());  // requeue: more jobs may be ready
        return Action::exit();
      default:
        return Action::exit();
    }
  }

 private:
  DrmGpuScheduler& s_;
  DrmJob* job_ = nullptr;
};

// drm_sched_free_job_work().
class DrmGpuScheduler::FreeJobFn final : public WorkFn {
 public:
  explicit FreeJobFn(DrmGpuScheduler& s) : s_(s) {}
  Action step(WorkExec& x) override {
    if (x.step == 0) {
      // drm_sched_get_finished_job(): the first pending job, if signalled.
      if (!s_.pending_list_.empty() && s_.pending_list_.front()->signalled) {
        freeing_ = s_.pending_list_.take_front();
        return Action::run(s_.params_.free_job_cost.count());  // ops->free_job()
      }
    }
    if (freeing_) {
      s_.emit(DrmJobEvent::Phase::kFree, *freeing_, x.context());
      s_.free_jobs_.push_back(std::move(freeing_));  // kept for the next push_job()
    }
    // drm_sched_run_free_queue(): the next one is finished too.
    if (!s_.pending_list_.empty() && s_.pending_list_.front()->signalled) s_.free_job_queue(x.context());
    s_.run_job_queue(x.context());
    return Action::exit();
  }

 private:
  DrmGpuScheduler& s_;
  std::unique_ptr<DrmJob> freeing_;
};

// The driver's fence work: process the GPU's events and signal the fences
// of the jobs it finished (panthor: process_fw_events_work and the group
// sync-update work, merged into one step).
class DrmGpuScheduler::FenceFn final : public WorkFn {
 public:
  explicit FenceFn(DrmGpuScheduler& s) : s_(s) {}
  Action step(WorkExec& x) override {
    if (x.step == 0) return Action::run(s_.params_.fence_cost.count());
    for (auto& j : s_.pending_list_)
      if (j->hw_done && !j->signalled) s_.signal(*j, x.context());
    return Action::exit();
  }

 private:
  DrmGpuScheduler& s_;
};

DrmGpuScheduler::DrmGpuScheduler(Kernel& k, std::string name, const DrmSchedParams& params, Gpu& gpu,
                                 WorkqueueSystem* wqs, Workqueue* submit_wq, KthreadWorker* worker,
                                 Workqueue* fence_wq)
    : k_(k),
      name_(std::move(name)),
      params_(params),
      gpu_(gpu),
      wqs_(wqs),
      submit_wq_(submit_wq),
      worker_(worker),
      fence_wq_(fence_wq),
      run_fn_(std::make_unique<RunJobFn>(*this)),
      free_fn_(std::make_unique<FreeJobFn>(*this)),
      fence_fn_(std::make_unique<FenceFn>(*this)),
      work_run_job_(name_ + ":drm_sched_run_job_work", run_fn_.get()),
      work_free_job_(name_ + ":drm_sched_free_job_work", free_fn_.get()),
      work_fence_(name_ + ":fence_work", fence_fn_.get()) {
  auto bad = [&](const std::string& why) { throw ModelError(fmt::format("drm_sched '{}': {}", name_, why)); };
  if (params_.path == DrmSubmitPath::kWorkqueue && (!submit_wq_ || !wqs_)) bad("no submit workqueue");
  if (params_.path == DrmSubmitPath::kKthreadWorker && !worker_) bad("no kthread_worker");
  if (params_.credit_limit < 1) bad("credit_limit must be >= 1");
  if (params_.entities.empty()) bad("a scheduler needs at least one entity");
  for (const std::string& e : params_.entities) {
    for (const auto& have : entities_)
      if (have->name == e) bad(fmt::format("entity '{}' listed twice", e));
    auto ent = std::make_unique<DrmEntity>();
    ent->name = e;
    entities_.push_back(std::move(ent));
  }
}

DrmGpuScheduler::~DrmGpuScheduler() = default;

DrmEntity* DrmGpuScheduler::entity(const std::string& name) {
  for (auto& e : entities_)
    if (e->name == name) return e.get();
  return nullptr;
}

void DrmGpuScheduler::emit(DrmJobEvent::Phase phase, const DrmJob& job, QueueContext where) {
  if (k_.observers().empty()) return;
  DrmJobEvent e;
  e.phase = phase;
  e.sched = name_;
  e.entity = job.entity;
  e.job = job.id;
  e.submitter = job.submitter;
  e.where = where;
  e.pushed = job.pushed;
  e.run = job.run;
  for (auto* o : k_.observers()) o->on_drm_job(k_.now(), e);
}

const Task* DrmGpuScheduler::best_queued_submitter() const {
  const Task* best = nullptr;
  for (const auto& e : entities_)
    for (const auto& j : e->job_queue)
      if (j->submitter && (!best || j->submitter->normal_prio < best->normal_prio)) best = j->submitter;
  return best;
}

void DrmGpuScheduler::queue(WorkStruct& w, QueueContext ctx, const Task* on_behalf_of) {
  if (params_.path == DrmSubmitPath::kKthreadWorker)
    worker_->queue_work(w, ctx, on_behalf_of);
  else
    wqs_->queue_work(*submit_wq_, w, ctx);
}

void DrmGpuScheduler::run_job_queue(QueueContext ctx) { queue(work_run_job_, ctx, best_queued_submitter()); }

void DrmGpuScheduler::free_job_queue(QueueContext ctx) { queue(work_free_job_, ctx, nullptr); }

// drm_sched_entity_push_job().
void DrmGpuScheduler::push_job(DrmEntity& entity, Time gpu_time, const Task& submitter) {
  // A freed job's storage is reused: the hot loop does not allocate.
  std::unique_ptr<DrmJob> job;
  if (free_jobs_.empty()) {
    job = std::make_unique<DrmJob>();
  } else {
    job = std::move(free_jobs_.back());
    free_jobs_.pop_back();
    *job = DrmJob{};
  }
  job->id = next_id_++;
  job->entity = entity.name;
  job->submitter = &submitter;
  job->submitter_prio = submitter.normal_prio;
  job->gpu_time = gpu_time;
  job->pushed = k_.now();  // sched_job->submit_ts
  emit(DrmJobEvent::Phase::kPush, *job, QueueContext{&submitter, submitter.cpu});  // trace_drm_sched_job
  entity.last_user = &submitter;
  const bool first = entity.job_queue.empty();  // spsc_queue_push() returned "first"
  entity.job_queue.push_back(std::move(job));
  if (first) {
    // drm_sched_rq_add_entity() + drm_sched_rq_update_fifo(), then
    // drm_sched_wakeup(): the run_job work, queued from the ioctl.
    queue(work_run_job_, QueueContext{&submitter, submitter.cpu}, &submitter);
  }
}

// drm_sched_select_entity() with drm_sched_rq_select_entity_fifo(): the
// best run queue with a ready entity; in it, the entity whose next job
// waited longest. No credits for that job: nothing is selected (-ENOSPC).
DrmEntity* DrmGpuScheduler::select_entity() {
  DrmEntity* best = nullptr;
  for (auto& e : entities_) {
    if (e->job_queue.empty()) continue;
    if (!best || e->priority < best->priority ||
        (e->priority == best->priority && e->job_queue.front()->pushed < best->job_queue.front()->pushed))
      best = e.get();
  }
  if (best && !can_queue()) return nullptr;
  return best;
}

// The job interrupt.
void DrmGpuScheduler::gpu_job_done(uint64_t cookie, QueueContext irq) {
  for (auto& j : pending_list_)
    if (j->id == cookie) j->hw_done = true;
  if (fence_wq_) {
    wqs_->queue_work(*fence_wq_, work_fence_, irq);
    return;
  }
  for (auto& j : pending_list_)
    if (j->hw_done && !j->signalled) signal(*j, irq);
}

// drm_sched_job_done(): credits back, finished fence, free_job queued.
void DrmGpuScheduler::signal(DrmJob& job, QueueContext ctx) {
  job.signalled = true;
  --credit_count_;
  emit(DrmJobEvent::Phase::kDone, job, ctx);  // trace_drm_sched_process_job
  free_job_queue(ctx);
}

}  // namespace schedlab
