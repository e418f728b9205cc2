// A GPU as the DRM scheduler sees it: it accepts jobs (ops->run_job() rang
// the doorbell), executes up to `slots` of them at once in hand-over order,
// each for a service time (the job's own, or drawn from a distribution on a
// component-named RngStream), and raises the job interrupt on `irq_cpu`
// `irq_latency` after a job ends. The interrupt calls back the job's owner
// (the drm_gpu_scheduler), in interrupt context on that CPU; or, with a
// threaded handler (`irq_thread`, as panthor's devm_request_threaded_irq()
// "job" interrupt), the hard interrupt wakes the IRQ thread, which runs the
// handler's cost and then calls back every owner whose job ended since its
// last run (irq_thread(): IRQTF_RUNTHREAD coalesces interrupts raised
// while it runs).
//
// Retirement: after the job-done callback (the fence signalled), the
// driver retires the job -- its bookkeeping, and for its owner the runtime
// PM put (GpuClient::gpu_job_retired()). Without `retire_worker` both
// happen in the same interrupt (or IRQ thread) context, as panfrost's
// threaded handler does (panfrost_job_handle_done(), 6.12). With it, the
// interrupt only queues the retire work on that kthread_worker, and the
// fence is signalled there too, as drm/msm does (msm_gpu_retire():
// msm_update_fence() records the seqno, kthread_queue_work(gpu->worker,
// &gpu->retire_work); retire_worker() -> retire_submits():
// dma_fence_is_signaled(submit->hw_fence) signals, then retire_submit():
// pm_runtime_put_autosuspend(), drivers/gpu/drm/msm/msm_gpu.c and
// msm_fence.c, 6.12): the work signals every job whose interrupt came
// before it got there, runs `retire_cost` and retires them (one work item:
// queued again while pending, nothing).
// With `idle_work_delay`, the retirement that leaves no job active also
// arms drm/msm devfreq's idle timer (msm_devfreq_idle():
// msm_hrtimer_queue_work(&df->idle_work, 1 ms), an unpinned hrtimer on the
// worker's CPU; drivers/gpu/drm/msm/msm_gpu_devfreq.c, 6.12), whose expiry
// queues the idle work on the same worker (`idle_work_cost`: the devfreq
// bookkeeping); a job handed over first cancels the timer
// (msm_devfreq_active() -> cancel_idle_work()). Simplified: an idle work
// already queued is not cancelled (kthread_cancel_work_sync()), and the
// devfreq boost work after a long idle is not modelled.
//
// Firmware requests (`fw_ack_latency` > 0; CSF GPUs, panthor): a driver
// request rung on a CSG doorbell (panthor_fw_ring_csg_doorbells()) is
// acknowledged by the firmware `fw_ack_latency` later, and the
// acknowledgement raises the job interrupt like a job end (panthor sets
// every CSG's ack_irq_mask to ~0, panthor_sched.c csg_slot_prog_locked(),
// 6.18): delivered `irq_latency` later, in order with the jobs', it calls
// back the requester (GpuClient::gpu_fw_ack()) in the interrupt's or the
// IRQ thread's context. The firmware's own time to answer is an
// assumption (no public figure).
//
// Not modelled: GPU frequency (devfreq), power states, preemption between
// jobs, the firmware's own scheduling (panthor's CSF groups): a job's
// service time is all the GPU does to it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/devices/device_params.h"
#include "models/kernel/task_body.h"
#include "models/kernel/workqueue/work.h"
#include "sim/event_queue.h"
#include "sim/fifo.h"
#include "sim/rng.h"

namespace schedlab {

class Kernel;
struct Task;

// Receives the job interrupt.
class GpuClient {
 public:
  virtual ~GpuClient() = default;
  // The job `cookie` ended, its fence signalled: in interrupt context
  // (ctx.task == nullptr), the IRQ thread's, or the retire worker's.
  virtual void gpu_job_done(uint64_t cookie, QueueContext irq) = 0;
  // The driver retired the job (after gpu_job_done()): in the same context,
  // or on the GPU's retire kthread_worker (ctx.task is its thread).
  virtual void gpu_job_retired(uint64_t cookie, QueueContext ctx) {
    (void)cookie;
    (void)ctx;
  }
  // The firmware acknowledged request `cookie` (Gpu::fw_request()): the
  // job interrupt's handler, in interrupt or IRQ thread context.
  virtual void gpu_fw_ack(uint64_t cookie, QueueContext irq) {
    (void)cookie;
    (void)irq;
  }
};

class KthreadWorker;

class Gpu final : public EventHandler, public TaskBody, private WorkFn {
 public:
  // `retire_worker`: the kthread_worker params.retire_worker names (nullptr
  // when it names none).
  Gpu(Kernel& k, std::string name, const GpuParams& params, uint64_t seed, KthreadWorker* retire_worker = nullptr);
  const std::string& name() const { return name_; }
  // Hands a job over; service <= 0 draws one from the distribution.
  void run(GpuClient& owner, uint64_t cookie, Time service);
  // Rings a request for the firmware; returns when its acknowledgement is
  // written (now + fw_ack_latency), which raises the job interrupt.
  // Needs fw_ack_latency > 0 (fw_requests()).
  Time fw_request(GpuClient& owner, uint64_t cookie);
  bool fw_requests() const { return params_.fw_ack_latency > Time::zero(); }
  int busy_slots() const;
  uint64_t jobs_done() const { return done_; }
  Time busy_time() const { return busy_; }  // summed over slots
  void on_event(uint64_t tag) override;
  // The IRQ thread's body (irq_thread()), when the handler is threaded.
  Action next(Task& self) override;

 private:
  struct Job {
    GpuClient* owner = nullptr;
    uint64_t cookie = 0;
    Time service;
    bool fw_ack = false;  // a firmware request's acknowledgement, not a job end
  };
  struct Slot {
    bool busy = false;
    Job job;
    Timer timer;
  };
  void start(size_t slot, const Job& job);
  // The job's completion in interrupt (or IRQ thread) context `ctx`.
  void complete(const Job& j, QueueContext ctx);
  Action step(WorkExec& x) override;  // retire_worker()

  Kernel& k_;
  std::string name_;
  GpuParams params_;
  RngStream rng_;
  std::vector<Slot> slots_;
  Fifo<Job> waiting_;
  Fifo<Job> irq_queue_;  // ended, interrupt not yet delivered
  Fifo<Job> fw_requests_;  // rung, not yet acknowledged (one latency: in order)
  void raise_irq(const Job& j);
  // Threaded handler: its task, the jobs whose interrupt came since its
  // last run (IRQTF_RUNTHREAD set while any), the ones its run handles.
  Task* irq_task_ = nullptr;
  std::vector<Job> thread_pending_;
  std::vector<Job> thread_batch_;
  bool handling_ = false;
  // Retirement on a kthread_worker: the jobs whose interrupt came since the
  // retire work last took them, and the ones its current run retires.
  KthreadWorker* retire_worker_ = nullptr;
  WorkStruct retire_work_{"retire_worker", this};
  std::vector<Job> retire_pending_;
  std::vector<Job> retire_batch_;
  int active_jobs_ = 0;          // handed over, not yet retired (msm's active_submits)
  WorkStruct idle_work_{"msm_devfreq_idle_work"};  // msm_devfreq_idle_work(): runs idle_work_cost
  Timer idle_timer_;             // devfreq's idle_work.timer
  int idle_timer_cpu_ = 0;
  uint64_t done_ = 0;
  Time busy_;
};

}  // namespace schedlab
