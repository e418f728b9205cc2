// The DRM GPU scheduler (drivers/gpu/drm/scheduler/sched_main.c and
// sched_entity.c): the workqueue-based design of 6.8 to 6.18, which the
// seed thread's 7.1 keeps for everything the metric sees (push_job wakes
// the run_job work, which selects, pops, counts credits and stamps
// drm_run_job before ops->run_job()). Simplified against 7.x: 7.x orders
// the entities of a scheduler by a CFS-like vruntime in one run queue
// (sched_rq.c) and frees every finished job in one free_job run; panthor
// has one entity per scheduler, so selection is trivial there and the
// model keeps 6.18's FIFO selector. The tracepoints keep 6.12's names
// (drm_sched_job, drm_run_job, drm_sched_process_job), which 6.18 renamed
// drm_sched_job_queue, drm_sched_job_run and drm_sched_job_done.
//
//  - entities (userspace queues) hold jobs in push order;
//    drm_sched_entity_push_job() stamps submit_ts and, when the entity's
//    queue was empty, wakes the scheduler (drm_sched_wakeup() ->
//    drm_sched_run_job_queue(): queue_work(submit_wq, work_run_job));
//  - drm_sched_run_job_work(): select the entity (highest priority run
//    queue first, then FIFO by oldest waiting job, drm_sched_policy = FIFO)
//    if the hardware has credits for its next job, pop the job, count its
//    credits, trace drm_run_job, call ops->run_job() (which hands the job
//    to the GPU), then requeue itself;
//  - the GPU's job interrupt signals the hardware fence, either in the
//    interrupt or from a work item on `fence_wq` (`fence_cost`);
//    drm_sched_job_done() returns the credits and queues work_free_job.
//    panthor (panthor_sched.c, 6.18) runs a chain on its scheduler
//    workqueue instead, which the optional costs switch on: the
//    interrupt's panthor_sched_report_fw_events() queues
//    process_fw_events_work (`fence_cost`), whose
//    sched_process_csg_irq_locked() handles the group's events in the
//    kernel's order: CSG_IDLE first (csg_slot_process_idle_event_locked()
//    queues tick_work with no delay: `idle_tick_cost`), then
//    CSG_SYNC_UPDATE (csg_slot_sync_update_locked() queues the group's
//    group_sync_upd_work, which signals the done fences:
//    `signal_work_cost`, and the scheduler's sync_upd_work, which wakes
//    groups blocked on sync objects: `sync_update_work_cost`). Each item
//    is a separate work on the unbound pool, where a queue_work() wakes
//    an idle kworker if the pool has one. A fence-work run takes the
//    events raised before it started (process_fw_events_work()'s
//    atomic_xchg()); one raised while it runs queues it again.
//    Simplified: the firmware raises CSG_IDLE and CSG_SYNC_UPDATE with
//    the interrupt of a job (CSG_IDLE only when no job handed to the GPU
//    is left; the firmware's own idle detection is not modelled); the
//    fw-events, scheduler sync-update and tick works are panthor's per
//    device but here per drm_sched (one panthor queue): two schedulers
//    on one device would run them twice where panthor coalesces them
//    (the shipped scenario has one); tick_work is queued, not
//    mod_delayed_work()'d to the back of the queue; with the GPU's
//    `fw_ack_latency` set, the tick asks the firmware for the group's
//    status (tick_ctx_init(): CSG_STATUS_UPDATE) and waits for the
//    acknowledgement (polling `fw_ack_poll`, 6.18's 10,000 reads, then
//    asleep until the interrupt's handler wakes it), and the
//    acknowledgement's interrupt costs an IRQ
//    thread run and a fw-events run that finds no event
//    (`fw_ack_events_cost`); without it the tick is CPU work only. The
//    tick's runtime PM put and devfreq idle when every group is idle are
//    not modelled, nor the global idle event (GLB_IDLE, after the
//    firmware's 800 us hysteresis).
//    A job handed to the GPU while the group is idle and the tick stopped
//    resumes the tick (queue_run_job() -> sched_resume_tick(), 6.18.35,
//    upstream 99820b4b7e50): tick_work is queued with no delay, as when
//    the device has a free CSG slot (one group here); the first job's
//    group_schedule_locked() tick is not modelled.
//    panthor's sched->lock, a struct mutex (KernelMutex: optimistic
//    spinning while its owner runs, else a D sleep), serialises the
//    chain: the fw-events work takes it after taking its events, the
//    tick for its whole run (across the firmware request, the poll and
//    the sleep until the acknowledgement), the scheduler's sync_upd_work
//    for its cost, and queue_run_job() for all of run_job_cost (released
//    after the tick's resume and the doorbell); the group's
//    group_sync_upd_work takes only its queues' fence locks, not it;
//  - drm_sched_free_job_work(): free the first finished job, requeue itself
//    if the next one is finished too, and requeue run_job.
//
// The submit path is a workqueue (stock: panthor passes its
// "panthor-csf-sched" WQ_UNBOUND workqueue; drm_sched_init() allocates an
// ordered one when the driver passes none) or, for the RFC, a
// kthread_worker. With a kthread_worker, a work carries a priority for the
// worker to follow (kthread_worker.h): run_job queued at push carries the
// submitter's; run_job requeued by the scheduler itself carries the best
// among the submitters of the jobs still queued (none when no job is
// queued); free_job carries none. This attribution is an assumption (the
// RFC's code was not available).
//
// The metric of the thread is push_job -> drm_run_job ("job passed to DRM
// scheduler -> passed to the GPU"), reported through
// SchedObserver::on_drm_job (DrmJobEvent) with the other phases.
//
// Not modelled: job dependencies (dma-fence waits), timeouts and resets,
// the round-robin policy, entity priorities changing, credits other than
// one per job.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/devices/device_params.h"
#include "models/devices/gpu.h"
#include "models/kernel/workqueue/work.h"
#include "sim/fifo.h"

namespace schedlab {

class Kernel;
class KernelMutex;
class KthreadWorker;
class Workqueue;
class WorkqueueSystem;
struct Task;

struct DrmJob {
  uint64_t id = 0;
  std::string_view entity;
  const Task* submitter = nullptr;
  Time gpu_time;          // <= 0: the GPU draws one
  Time pushed, run;
  bool on_gpu = false;    // ops->run_job() handed it to the GPU
  bool hw_done = false;   // the GPU finished it (interrupt delivered)
  bool signalled = false; // its fence signalled (drm_sched_job_done())
};

struct DrmEntity {
  std::string name;
  int priority = 0;  // run queue index: 0 is served first (DRM_SCHED_PRIORITY_KERNEL first)
  Fifo<std::unique_ptr<DrmJob>> job_queue;
  const Task* last_user = nullptr;
};

class DrmGpuScheduler final : public GpuClient {
 public:
  // submit_wq / fence_wq / worker as the params name them (resolved by the caller).
  DrmGpuScheduler(Kernel& k, std::string name, const DrmSchedParams& params, Gpu& gpu, WorkqueueSystem* wqs,
                  Workqueue* submit_wq, KthreadWorker* worker, Workqueue* fence_wq);
  ~DrmGpuScheduler() override;
  const std::string& name() const { return name_; }
  DrmEntity* entity(const std::string& name);
  const std::vector<std::unique_ptr<DrmEntity>>& entities() const { return entities_; }

  // drm_sched_job_arm() + drm_sched_entity_push_job() from the submitting
  // task (in its ioctl, on its CPU).
  void push_job(DrmEntity& entity, Time gpu_time, const Task& submitter);

  void gpu_job_done(uint64_t cookie, QueueContext irq) override;
  void gpu_fw_ack(uint64_t cookie, QueueContext irq) override;

  // Introspection.
  int credit_count() const { return credit_count_; }
  size_t pending_jobs() const { return pending_list_.size(); }
  uint64_t jobs_pushed() const { return next_id_ - 1; }

 private:
  class RunJobFn;
  class FreeJobFn;
  class FenceFn;
  class ChainFn;
  class TickFn;
  // mutex_lock(&sched->lock) stepped from a work (nullopt: held, or no
  // lock without panthor's chain) and mutex_unlock().
  std::optional<Action> sched_lock(WorkExec& x);
  void sched_unlock(WorkExec& x);
  void run_job_queue(QueueContext ctx);   // drm_sched_run_job_queue()
  void free_job_queue(QueueContext ctx);  // __drm_sched_run_free_queue()
  void queue(WorkStruct& w, QueueContext ctx, const Task* on_behalf_of);
  DrmEntity* select_entity();             // drm_sched_select_entity(), FIFO policy
  bool can_queue() const { return credit_count_ < params_.credit_limit; }
  void signal(DrmJob& job, QueueContext ctx);  // drm_sched_job_done()
  void signal_done_jobs(QueueContext ctx);     // every finished job not yet signalled
  void emit(DrmJobEvent::Phase phase, const DrmJob& job, QueueContext where);
  const Task* best_queued_submitter() const;

  Kernel& k_;
  std::string name_;
  DrmSchedParams params_;
  Gpu& gpu_;
  WorkqueueSystem* wqs_;
  Workqueue* submit_wq_;
  KthreadWorker* worker_;
  Workqueue* fence_wq_;
  std::vector<std::unique_ptr<DrmEntity>> entities_;
  std::unique_ptr<RunJobFn> run_fn_;
  std::unique_ptr<FreeJobFn> free_fn_;
  std::unique_ptr<FenceFn> fence_fn_;
  std::unique_ptr<ChainFn> signal_fn_, sync_update_fn_;
  std::unique_ptr<TickFn> tick_fn_;
  // panthor's sched->lock (struct mutex), with the chain: the fw-events,
  // tick and scheduler sync-update works and queue_run_job() take it.
  std::unique_ptr<KernelMutex> sched_lock_;
  WorkStruct work_run_job_, work_free_job_, work_fence_;
  WorkStruct work_signal_, work_sync_update_, work_tick_;  // panthor's chain (optional)
  bool chain_ = false;              // panthor's chain configured (any of its costs > 0)
  bool idle_event_ = false;         // CSG_IDLE raised, not yet taken by a fence-work run
  bool sync_update_event_ = false;  // CSG_SYNC_UPDATE raised, not yet taken
  bool fw_ack_event_ = false;       // a request's acknowledgement raised the interrupt, not yet taken
  Task* ack_waiter_ = nullptr;      // the tick's worker asleep in panthor_fw_wait_acks()
  // panthor's tick state (one group, resident): the group's queue marked
  // idle by a fence-work run's CSG_IDLE (group->idle_queues), cleared when
  // a job is handed to the GPU; and the tick stopped (resched_target ==
  // U64_MAX: at init, and after every tick, whose tick_ctx keeps
  // stop_tick with a single group).
  bool group_idle_ = false;
  bool tick_stopped_ = true;
  Fifo<std::unique_ptr<DrmJob>> pending_list_;  // handed to the GPU, in order (sched->pending_list)
  std::vector<std::unique_ptr<DrmJob>> free_jobs_;  // freed jobs, reused by push_job()
  int credit_count_ = 0;
  uint64_t next_id_ = 1;
};

}  // namespace schedlab
