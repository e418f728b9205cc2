// drivers/gpu/drm/scheduler/ (sched_main.c, sched_entity.c) as described in
// drm_sched.h; function names in comments are the kernel's.
#include "models/devices/drm_sched.h"

#include <algorithm>
#include <fmt/format.h>

#include "models/errors.h"
#include "models/kernel/kernel.h"
#include "models/kernel/kthread_worker.h"
#include "models/kernel/sched/kernel_mutex.h"
#include "models/kernel/workqueue/workqueue.h"
#include "sim/log.h"

namespace schedlab {

// drm_sched_run_job_work(). With panthor's chain, ops->run_job() is
// queue_run_job(), which does its work under sched->lock: the model holds
// the lock across all of run_job_cost (the ring write and the doorbell;
// the runtime PM get before it is not modelled) and releases it after the
// tick's resume and the doorbell.
class DrmGpuScheduler::RunJobFn final : public WorkFn {
 public:
  explicit RunJobFn(DrmGpuScheduler& s) : s_(s) {}
  Action step(WorkExec& x) override {
    if (x.step == 0) {
      phase_ = Phase::kSelect;
      return Action::run(s_.params_.select_cost.count());
    }
    switch (phase_) {
      case Phase::kSelect: {
        // Find an entity with a ready job the hardware has room for.
        DrmEntity* e = s_.select_entity();
        if (!e) return Action::exit();  // no more work (or no credits: free_job requeues run_job)
        std::unique_ptr<DrmJob> job = e->job_queue.take_front();  // drm_sched_entity_pop_job()
        ++s_.credit_count_;
        job->run = s_.k_.now();
        job_ = job.get();
        s_.pending_list_.push_back(std::move(job));  // drm_sched_job_begin()
        s_.emit(DrmJobEvent::Phase::kRun, *job_, x.context());  // trace_drm_run_job
        phase_ = Phase::kLock;
        [[fallthrough]];
      }
      case Phase::kLock:
        if (auto wait = s_.sched_lock(x)) return *wait;
        phase_ = Phase::kRan;
        return Action::run(s_.params_.run_job_cost.count());  // ops->run_job()
      case Phase::kRan:
        // queue_run_job(): the queue has work again; an idle group whose
        // tick was stopped resumes it (sched_resume_tick()) before the
        // doorbell.
        // (group_idle_ is only ever set by panthor's chain.)
        if (s_.group_idle_ && s_.tick_stopped_ && s_.params_.idle_tick_cost > Time::zero()) {
          s_.tick_stopped_ = false;
          s_.wqs_->queue_work(*s_.fence_wq_, s_.work_tick_, x.context());
        }
        s_.group_idle_ = false;
        s_.emit(DrmJobEvent::Phase::kHw, *job_, x.context());
        job_->on_gpu = true;
        s_.gpu_.run(s_, job_->id, job_->gpu_time);
        job_ = nullptr;
        s_.sched_unlock(x);
        s_.run_job_queue(x.context());  // requeue: more jobs may be ready
        return Action::exit();
    }
    return Action::exit();
  }

 private:
  enum class Phase : uint8_t { kSelect, kLock, kRan };
  DrmGpuScheduler& s_;
  Phase phase_ = Phase::kSelect;
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
// of the jobs it finished; with panthor's chain configured, it is
// process_fw_events_work() -> sched_process_csg_irq_locked(), which
// queues the chain's items in the kernel's order (idle, then sync update).
class DrmGpuScheduler::FenceFn final : public WorkFn {
 public:
  explicit FenceFn(DrmGpuScheduler& s) : s_(s) {}
  Action step(WorkExec& x) override {
    const DrmSchedParams& p = s_.params_;
    if (x.step == 0) {
      // atomic_xchg(&sched->fw_events, 0): the events raised so far are
      // this run's; one raised while it runs queues the work again.
      idle_ = s_.idle_event_;
      sync_update_ = s_.sync_update_event_;
      ack_only_ = s_.fw_ack_event_ && !idle_ && !sync_update_;
      s_.idle_event_ = s_.sync_update_event_ = s_.fw_ack_event_ = false;
      phase_ = Phase::kLock;
    }
    const QueueContext ctx = x.context();
    switch (phase_) {
      case Phase::kLock:
        // Then mutex_lock(&sched->lock) (panthor's chain).
        if (auto wait = s_.sched_lock(x)) return *wait;
        phase_ = Phase::kRan;
        // A run that finds only a request's acknowledgement: no CSG event
        // (sched_process_csg_irq_locked() returns once req == ack).
        return Action::run((ack_only_ ? p.fw_ack_events_cost : p.fence_cost).count());
      case Phase::kRan:
        break;
    }
    if (!s_.chain_) {
      s_.signal_done_jobs(ctx);
      return Action::exit();
    }
    // sched_process_csg_irq_locked(): CSG_IDLE first
    // (csg_slot_process_idle_event_locked(): tick_work, no delay), then
    // CSG_SYNC_UPDATE (csg_slot_sync_update_locked(): the group's work,
    // then the scheduler's).
    if (idle_) s_.group_idle_ = true;
    if (idle_ && p.idle_tick_cost > Time::zero()) s_.wqs_->queue_work(*s_.fence_wq_, s_.work_tick_, ctx);
    if (sync_update_) {
      if (p.signal_work_cost > Time::zero())
        s_.wqs_->queue_work(*s_.fence_wq_, s_.work_signal_, ctx);
      else
        s_.signal_done_jobs(ctx);
      if (p.sync_update_work_cost > Time::zero()) s_.wqs_->queue_work(*s_.fence_wq_, s_.work_sync_update_, ctx);
    }
    s_.sched_unlock(x);
    return Action::exit();
  }

 private:
  enum class Phase : uint8_t { kLock, kRan };
  DrmGpuScheduler& s_;
  Phase phase_ = Phase::kLock;
  bool idle_ = false, sync_update_ = false, ack_only_ = false;  // the events this run took
};

// An item of panthor's chain: its CPU work, then, for group_sync_upd_work(),
// the fences of every job the GPU finished (the group's sync objects).
// The scheduler's sync_upd_work() does its work under sched->lock; the
// group's takes only its queues' fence locks.
class DrmGpuScheduler::ChainFn final : public WorkFn {
 public:
  ChainFn(DrmGpuScheduler& s, Time cost, bool signals, bool takes_sched_lock)
      : s_(s), cost_(cost), signals_(signals), takes_sched_lock_(takes_sched_lock) {}
  Action step(WorkExec& x) override {
    if (x.step == 0) locked_ = false;
    if (!locked_) {
      if (takes_sched_lock_)
        if (auto wait = s_.sched_lock(x)) return *wait;
      locked_ = true;
      return Action::run(cost_.count());
    }
    if (signals_) s_.signal_done_jobs(x.context());
    if (takes_sched_lock_) s_.sched_unlock(x);
    return Action::exit();
  }

 private:
  DrmGpuScheduler& s_;
  Time cost_;
  bool signals_, takes_sched_lock_;
  bool locked_ = false;  // past mutex_lock() (or no lock to take): the cost runs
};

// panthor's tick_work() (panthor_sched.c, 6.18). With firmware requests
// modelled (the GPU's fw_ack_latency), tick_ctx_init() first asks the
// firmware for the resident group's status (CSG_STATUS_UPDATE through
// csgs_upd_ctx_apply_locked()) and waits for the acknowledgement:
// panthor_fw_wait_acks() polls (read_poll_timeout_atomic() with no delay
// and a 10 us timeout, which 6.18 counts as 10,000 reads: `fw_ack_poll`
// of time), then sleeps in wait_event_timeout() (TASK_UNINTERRUPTIBLE)
// until the job interrupt's handler wakes fw->req_waitqueue. Simplified:
// the poll's budget is wall time here, so a preemption during it uses it
// up (the kernel's count stops), and the handler's wake-up comes at the
// end of the IRQ thread's cost (the kernel's wake_up_all() is its first
// step); every job interrupt's spurious wake-up of the waitqueue is left
// out. The acknowledgement's interrupt also queues the fw-events work
// (gpu_fw_ack()). Then the tick's CPU work (idle_tick_cost);
// tick_ctx_apply() asks the firmware nothing with one resident group whose
// priority does not change. The tick then stops
// (tick_ctx_update_resched_target(): stop_tick with a single group).
class DrmGpuScheduler::TickFn final : public WorkFn {
 public:
  explicit TickFn(DrmGpuScheduler& s) : s_(s) {}
  Action step(WorkExec& x) override {
    const Time now = s_.k_.now();
    if (x.step == 0) phase_ = Phase::kLock;
    switch (phase_) {
      case Phase::kLock:
        // mutex_lock(&sched->lock), held to the end (the runtime PM get
        // before it is not modelled).
        if (auto wait = s_.sched_lock(x)) return *wait;
        phase_ = Phase::kStart;
        [[fallthrough]];
      case Phase::kStart:
        if (s_.gpu_.fw_requests()) {
          ack_at_ = s_.gpu_.fw_request(s_, kStatusRequest);
          phase_ = Phase::kPolled;
          return Action::run_until(std::min(ack_at_, now + s_.params_.fw_ack_poll));
        }
        break;
      case Phase::kPolled:
        if (now < ack_at_) {
          phase_ = Phase::kWork;
          s_.ack_waiter_ = &x.worker();
          return Action::block(TaskState::kUninterruptible);
        }
        break;
      case Phase::kWork:
        break;
      case Phase::kDone:
        s_.tick_stopped_ = true;
        s_.sched_unlock(x);
        return Action::exit();
    }
    phase_ = Phase::kDone;
    return Action::run(s_.params_.idle_tick_cost.count());
  }
  static constexpr uint64_t kStatusRequest = 0;  // the request's cookie

 private:
  enum class Phase : uint8_t { kLock, kStart, kPolled, kWork, kDone };
  DrmGpuScheduler& s_;
  Phase phase_ = Phase::kLock;
  Time ack_at_;
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
      signal_fn_(std::make_unique<ChainFn>(*this, params.signal_work_cost, true, false)),
      sync_update_fn_(std::make_unique<ChainFn>(*this, params.sync_update_work_cost, false, true)),
      tick_fn_(std::make_unique<TickFn>(*this)),
      work_run_job_(name_ + ":drm_sched_run_job_work", run_fn_.get()),
      work_free_job_(name_ + ":drm_sched_free_job_work", free_fn_.get()),
      work_fence_(name_ + ":fence_work", fence_fn_.get()),
      work_signal_(name_ + ":group_sync_upd_work", signal_fn_.get()),
      work_sync_update_(name_ + ":sync_upd_work", sync_update_fn_.get()),
      work_tick_(name_ + ":tick_work", tick_fn_.get()) {
  auto bad = [&](const std::string& why) { throw ModelError(fmt::format("drm_sched '{}': {}", name_, why)); };
  chain_ = params_.signal_work_cost > Time::zero() || params_.sync_update_work_cost > Time::zero() ||
           params_.idle_tick_cost > Time::zero();
  if (chain_ && !fence_wq_) bad("signal_work_cost, sync_update_work_cost and idle_tick_cost need a fence_wq");
  if (chain_) sched_lock_ = std::make_unique<KernelMutex>(k_, name_ + ":sched->lock");
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

std::optional<Action> DrmGpuScheduler::sched_lock(WorkExec& x) {
  return sched_lock_ ? sched_lock_->lock_step(x.worker()) : std::nullopt;
}

void DrmGpuScheduler::sched_unlock(WorkExec& x) {
  if (sched_lock_) sched_lock_->unlock(x.worker());
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
  bool gpu_idle = true;  // no other job handed to the GPU is still running
  for (auto& j : pending_list_) {
    if (j->id == cookie) j->hw_done = true;
    if (j->on_gpu && !j->hw_done) gpu_idle = false;
  }
  if (gpu_idle) idle_event_ = true;  // the firmware's CSG_IDLE, delivered with this interrupt
  sync_update_event_ = true;         // CSG_SYNC_UPDATE: the job's sync object moved
  if (fence_wq_) {
    wqs_->queue_work(*fence_wq_, work_fence_, irq);
    return;
  }
  signal_done_jobs(irq);
}

// panthor_job_irq_handler() for a request's acknowledgement:
// wake_up_all(&fw->req_waitqueue) (the tick waiting in
// panthor_fw_wait_acks()), then panthor_sched_report_fw_events(): the
// CSG's bit, and the fw-events work queued.
void DrmGpuScheduler::gpu_fw_ack(uint64_t cookie, QueueContext irq) {
  (void)cookie;
  if (ack_waiter_) {
    Task* waiter = ack_waiter_;
    ack_waiter_ = nullptr;
    k_.try_to_wake_up(*waiter, irq.task, irq.cpu);
  }
  fw_ack_event_ = true;
  wqs_->queue_work(*fence_wq_, work_fence_, irq);
}

void DrmGpuScheduler::signal_done_jobs(QueueContext ctx) {
  for (auto& j : pending_list_)
    if (j->hw_done && !j->signalled) signal(*j, ctx);
}

// drm_sched_job_done(): credits back, finished fence, free_job queued.
void DrmGpuScheduler::signal(DrmJob& job, QueueContext ctx) {
  job.signalled = true;
  --credit_count_;
  emit(DrmJobEvent::Phase::kDone, job, ctx);  // trace_drm_sched_process_job
  free_job_queue(ctx);
}

}  // namespace schedlab
