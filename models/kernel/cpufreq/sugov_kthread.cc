// The slow path of schedutil and sched_pixel: the sugov:N kthread (see
// sugov_kthread.h).
#include "models/kernel/cpufreq/sugov_kthread.h"

#include <fmt/format.h>

#include "models/kernel/kernel.h"
#include "sim/log.h"

namespace schedlab {

// sugov_kthread_create() (6.12 cpufreq_schedutil.c): SCHED_DEADLINE,
// runtime 1 ms, deadline = period = 10 ms, SCHED_FLAG_SUGOV;
// kthread_bind_mask(policy->related_cpus). Created at boot, it sleeps
// until the policy's first switch: the model starts it then (queue_work()),
// so no CPU is busy with it at t = 0. Assumption: it runs, and so stays
// (select_task_rq_dl()), on CPU N, the policy's first CPU: the start's
// placement, as select_fallback_rq()'s lowest allowed CPU when its
// creator's CPU lies outside the policy.
// sched_pixel's sugov_kthread_create() (vh cpufreq_gov.c) makes it
// SCHED_FIFO at MAX_USER_RT_PRIO / 2 = 50 instead, bound to the same CPUs:
// an RT task, placed by select_task_rq_rt() at each wake-up, preempting
// what runs there below priority 50 and counted in the rq's RT util.
SugovKthread::SugovKthread(Kernel& k, size_t domain, Time work, Time wait)
    : k_(k),
      domain_(domain),
      work_(work),
      wait_(wait),
      wait_timer_(k.sim().queue(), this, 0, kTierTimer) {
  const Kernel::FreqDomain& d = k.domains_[domain];
  const std::string comm = fmt::format("sugov:{}", d.cpus.front());
  if (const int prio = d.governor->slow_path_fifo_priority(); prio > 0) {
    task_ = &k.create_task(comm, "sugov", Policy::kFifo, 0, prio, d.cpus, true);
  } else {
    task_ = &k.create_task(comm, "sugov", Policy::kDeadline, 0, 0, d.cpus, true);
    task_->dl.dl_runtime = Time::ms(1);
    task_->dl.dl_deadline = Time::ms(10);
    task_->dl.dl_period = Time::ms(10);
  }
  k.set_body(*task_, this);
}

void SugovKthread::queue_work(int from_cpu) {
  if (pending_) return;
  pending_ = true;
  if (task_->state == TaskState::kNew) {
    k_.start_task_at(*task_, k_.now());  // its first run takes the work
    return;
  }
  // kthread_insert_work(): wake_up_process() only if no work is running.
  if (step_ == Step::kIdle && task_->state == TaskState::kInterruptible) k_.try_to_wake_up(*task_, nullptr, from_cpu);
}

Action SugovKthread::wait_then(Step next) {
  step_ = next;
  wait_cpu_ = task_->cpu;
  k_.hrtimer_start(wait_timer_, k_.now() + wait_, wait_cpu_);
  return Action::block(TaskState::kUninterruptible);
}

void SugovKthread::on_event(uint64_t) {
  k_.hrtimer_interrupt(wait_cpu_, &wait_timer_);
  k_.try_to_wake_up(*task_, nullptr, wait_cpu_);
}

Action SugovKthread::next(Task&) {
  Kernel::FreqDomain& d = k_.domains_[domain_];
  for (;;) {
    switch (step_) {
      case Step::kIdle: {
        if (!pending_) return Action::block(TaskState::kInterruptible);
        // kthread_worker_fn() takes the work; sugov_work() reads next_freq
        // and clears work_in_progress under the update lock.
        pending_ = false;
        d.work_in_progress = false;
        target_khz_ = d.governor->requested_khz();
        // __cpufreq_driver_target(): nothing to do at the current frequency.
        const uint64_t f = d.governor->policy().resolve_freq(target_khz_, CpufreqRelation::L);
        if (f == d.cur_khz) continue;
        going_up_ = f > d.cur_khz;
        SL_DEBUG("{:.6f} {}: sugov_work() {} -> {} kHz", k_.now().to_s(), task_->comm, d.cur_khz, f);
        if (going_up_ && wait_ > Time::zero()) return wait_then(Step::kWaitBeforeSwitch);
      }
        [[fallthrough]];  // the driver's work, at once or after the voltage wait
      case Step::kWaitBeforeSwitch:
        step_ = Step::kSwitch;
        if (work_ > Time::zero()) return Action::run(work_.count());
        continue;
      case Step::kSwitch:
        // The clock is set: every CPU of the policy runs at the new speed.
        if (auto f = d.governor->slow_switch(target_khz_)) k_.set_domain_freq(d, *f);
        if (!going_up_ && wait_ > Time::zero()) return wait_then(Step::kWaitAfterSwitch);
        step_ = Step::kIdle;
        continue;
      case Step::kWaitAfterSwitch:
        step_ = Step::kIdle;
        continue;
    }
  }
}

}  // namespace schedlab
