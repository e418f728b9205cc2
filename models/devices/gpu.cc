#include "models/devices/gpu.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "models/errors.h"
#include "models/kernel/kernel.h"
#include "models/kernel/kthread_worker.h"

namespace schedlab {

const char* distribution_name(Distribution::Kind k) {
  switch (k) {
    case Distribution::Kind::kFixed: return "fixed";
    case Distribution::Kind::kUniform: return "uniform";
    case Distribution::Kind::kExponential: return "exponential";
    case Distribution::Kind::kLognormal: return "lognormal";
  }
  return "?";
}

Time Distribution::sample(RngStream& rng) const {
  double ns = 0;
  switch (kind) {
    case Kind::kFixed:
      return mean;
    case Kind::kUniform:
      ns = rng.uniform(static_cast<double>(min.count()), static_cast<double>(max.count()));
      break;
    case Kind::kExponential:
      ns = rng.exponential(static_cast<double>(mean.count()));
      break;
    case Kind::kLognormal: {
      // Parameterised by its mean: mu = ln(mean) - sigma^2 / 2.
      const double mu = std::log(static_cast<double>(mean.count())) - sigma * sigma / 2;
      ns = rng.lognormal(mu, sigma);
      break;
    }
  }
  return Time::ns(std::max<int64_t>(1, static_cast<int64_t>(std::llround(ns))));
}

// Event tags: slot index for a job end; kIrqTag for an interrupt delivery.
static constexpr uint64_t kIrqTag = 1ULL << 40;
static constexpr uint64_t kIdleTag = 1ULL << 41;  // devfreq's idle timer
static constexpr uint64_t kFwAckTag = 1ULL << 42; // the firmware acknowledges a request

Gpu::Gpu(Kernel& k, std::string name, const GpuParams& params, uint64_t seed, KthreadWorker* retire_worker)
    : k_(k), name_(std::move(name)), params_(params), rng_(seed, "gpu." + name_), retire_worker_(retire_worker) {
  if (params_.slots < 1) throw ModelError(fmt::format("gpu '{}': slots must be >= 1", name_));
  if (params_.irq_cpu < 0 || params_.irq_cpu >= k.nr_cpus())
    throw ModelError(fmt::format("gpu '{}': irq_cpu {} does not exist (the platform has {} CPUs)", name_,
                                 params_.irq_cpu, k.nr_cpus()));
  if (!params_.retire_worker.empty() && !retire_worker_)
    throw ModelError(fmt::format("gpu '{}': kthread_worker '{}' not given", name_, params_.retire_worker));
  if (params_.retire_cost < Time::zero()) throw ModelError(fmt::format("gpu '{}': retire_cost must be >= 0", name_));
  if (params_.idle_work_delay < Time::zero() || params_.idle_work_cost < Time::zero())
    throw ModelError(fmt::format("gpu '{}': idle_work_delay and idle_work_cost must be >= 0", name_));
  if (params_.fw_ack_latency < Time::zero()) throw ModelError(fmt::format("gpu '{}': fw_ack_latency must be >= 0", name_));
  if (params_.idle_work_delay > Time::zero() && !retire_worker_)
    throw ModelError(fmt::format("gpu '{}': idle_work_delay needs a retire_worker", name_));
  idle_timer_ = Timer(k.sim().queue(), this, kIdleTag, kTierTimer);
  idle_work_.payload = {WorkStep{WorkStep::Kind::kRun, params_.idle_work_cost}};
  // Jobs awaiting retirement: at most those in flight plus those whose
  // interrupt is pending; reserved so the hot loop does not allocate.
  retire_pending_.reserve(64);
  retire_batch_.reserve(64);
  thread_pending_.reserve(64);
  thread_batch_.reserve(64);
  slots_.resize(static_cast<size_t>(params_.slots));
  for (size_t i = 0; i < slots_.size(); ++i) slots_[i].timer = Timer(k.sim().queue(), this, i, kTierWorkDone);
  const IrqThreadParams& t = params_.irq_thread;
  if (t.enabled) {
    if (t.cost < Time::zero()) throw ModelError(fmt::format("gpu '{}': irq_thread cost must be >= 0", name_));
    const bool rt = is_rt_policy(t.policy);
    const std::string comm = t.comm.empty() ? "irq/" + name_ : t.comm;
    irq_task_ = &k.create_task(comm, comm, t.policy, rt ? 0 : t.nice, rt ? t.rt_priority : 0, {params_.irq_cpu}, true);
    k.set_body(*irq_task_, this);
    k.start_task_at(*irq_task_, Time::zero());
  }
}

// irq_thread() (kernel/irq/manage.c): sleep until the hard handler sets
// IRQTF_RUNTHREAD, run the handler (its cost, then the jobs' callbacks in
// the thread's context), and look again.
Action Gpu::next(Task& self) {
  for (;;) {
    if (handling_) {
      handling_ = false;
      for (const Job& j : thread_batch_) complete(j, QueueContext{&self, self.cpu});
      thread_batch_.clear();
    }
    if (thread_pending_.empty()) return Action::block(TaskState::kInterruptible);
    thread_batch_.swap(thread_pending_);
    handling_ = true;
    if (params_.irq_thread.cost > Time::zero()) return Action::run(params_.irq_thread.cost.count());
  }
}

void Gpu::complete(const Job& j, QueueContext ctx) {
  if (j.fw_ack) {
    j.owner->gpu_fw_ack(j.cookie, ctx);
    return;
  }
  if (!retire_worker_) {
    j.owner->gpu_job_done(j.cookie, ctx);
    --active_jobs_;
    j.owner->gpu_job_retired(j.cookie, ctx);
    return;
  }
  // msm_gpu_retire(): the interrupt only records the ring's completed
  // seqno (msm_update_fence()) and queues the retire work; it carries no
  // priority to the worker. The fence is signalled there, not here.
  retire_pending_.push_back(j);
  retire_worker_->queue_work(retire_work_, ctx, nullptr);
}

// retire_worker() -> retire_submits() (drm/msm, 6.12): for each completed
// submit, dma_fence_is_signaled(hw_fence) signals the fence (msm_fence_ops
// has .signaled and no .enable_signaling, so nothing signals it earlier:
// the DRM scheduler's finished fence, the buffer's acquire fence, waits
// for this), then retire_submit() in the worker's context. Simplified: the
// fences of every job whose interrupt came before the work started are
// signalled first, then the work's cost, then they retire (the kernel
// takes signal and retire job by job); a job that ended on the GPU but
// whose interrupt is still pending waits for the next run (the kernel's
// msm_fence_completed() also reads the ring's memptrs).
Action Gpu::step(WorkExec& x) {
  if (x.step == 0) {
    retire_batch_.swap(retire_pending_);
    for (const Job& j : retire_batch_) j.owner->gpu_job_done(j.cookie, x.context());
    if (params_.retire_cost > Time::zero()) return Action::run(params_.retire_cost.count());
  }
  for (const Job& j : retire_batch_) {
    j.owner->gpu_job_retired(j.cookie, x.context());
    // retire_submit(): the last active job -> msm_devfreq_idle().
    if (--active_jobs_ == 0 && params_.idle_work_delay > Time::zero()) {
      idle_timer_cpu_ = x.worker().cpu;
      k_.hrtimer_start(idle_timer_, k_.now() + params_.idle_work_delay, idle_timer_cpu_);
    }
  }
  retire_batch_.clear();
  return Action::exit();
}

int Gpu::busy_slots() const {
  return static_cast<int>(std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return s.busy; }));
}

void Gpu::run(GpuClient& owner, uint64_t cookie, Time service) {
  Job j{&owner, cookie, service > Time::zero() ? service : params_.service_time.sample(rng_)};
  // msm_gpu_submit(): the first active job -> msm_devfreq_active(): the
  // pending transition to idle is cancelled.
  if (active_jobs_++ == 0 && idle_timer_.armed()) k_.hrtimer_cancel(idle_timer_);
  for (size_t i = 0; i < slots_.size(); ++i)
    if (!slots_[i].busy) {
      start(i, j);
      return;
    }
  waiting_.push_back(j);
}

Time Gpu::fw_request(GpuClient& owner, uint64_t cookie) {
  if (!fw_requests()) throw ModelError(fmt::format("gpu '{}': a firmware request needs fw_ack_latency > 0", name_));
  Job j{&owner, cookie, Time::zero(), true};
  fw_requests_.push_back(j);
  const Time ack = k_.now() + params_.fw_ack_latency;
  k_.sim().post(ack, kTierTimer, this, kFwAckTag);
  return ack;
}

void Gpu::raise_irq(const Job& j) {
  irq_queue_.push_back(j);
  // One-shot: interrupts are delivered in the order raised (same latency).
  k_.sim().post_in(params_.irq_latency, kTierTimer, this, kIrqTag);
}

void Gpu::start(size_t i, const Job& job) {
  Slot& s = slots_[i];
  s.busy = true;
  s.job = job;
  busy_ += job.service;
  s.timer.arm(k_.now() + job.service);
}

void Gpu::on_event(uint64_t tag) {
  if (tag == kIdleTag) {
    // msm_hrtimer_work_timer(): the hrtimer's handler queues the work (its
    // interrupt runs the CPU's other soft-expired timers too).
    k_.hrtimer_interrupt(idle_timer_cpu_);
    retire_worker_->queue_work(idle_work_, QueueContext{nullptr, idle_timer_cpu_}, nullptr);
    return;
  }
  if (tag == kFwAckTag) {
    const Job j = fw_requests_.front();
    fw_requests_.pop_front();
    raise_irq(j);
    return;
  }
  if (tag == kIrqTag) {
    // The job interrupt: it wakes irq_cpu from an idle state and is handled
    // once the CPU runs again (interrupts queued meanwhile follow, in
    // order). The handler runs on irq_cpu, or its thread is woken there
    // (irq_wake_thread()).
    const Time handled_at = k_.irq_handled_at(k_.rq(params_.irq_cpu));
    if (handled_at != k_.now()) {
      k_.sim().post(handled_at, kTierTimer, this, kIrqTag);
      return;
    }
    Job j = irq_queue_.front();
    irq_queue_.pop_front();
    if (irq_task_) {
      thread_pending_.push_back(j);
      k_.try_to_wake_up(*irq_task_, nullptr, params_.irq_cpu);
      return;
    }
    complete(j, QueueContext{nullptr, params_.irq_cpu});
    return;
  }
  Slot& s = slots_[tag];
  Job j = s.job;
  s.busy = false;
  ++done_;
  if (!waiting_.empty()) {
    Job next = waiting_.front();
    waiting_.pop_front();
    start(tag, next);
  }
  raise_irq(j);
}

}  // namespace schedlab
