#include "models/kernel/workqueue/work.h"

#include "models/kernel/kernel.h"

namespace schedlab {

WorkExecutor::WorkExecutor(Kernel& k) : k_(k), timer_(k.sim().queue(), this, 0, kTierTimer) {
  // Room for any payload a queuer builds (a run and a sleep,
  // DeviceCalls::call()): taking a work copies it without allocating.
  script_.reserve(4);
}

Action WorkExecutor::sleep_for(Time d) {
  // An hrtimer on the worker's CPU, no slack (WorkExec::sleep_for()).
  timer_cpu_ = task_->cpu;
  k_.hrtimer_start(timer_, k_.now() + d, timer_cpu_);  // on the worker's CPU
  return Action::block(TaskState::kUninterruptible);
}

void WorkExecutor::on_timer() {
  k_.hrtimer_interrupt(timer_cpu_);  // the CPU's other soft-expired timers run in the same interrupt
  k_.try_to_wake_up(*task_, nullptr, task_->cpu);
}

void WorkExecutor::begin(WorkStruct& w) {
  fn_ = w.fn;
  if (!fn_) script_ = w.payload;
  step = 0;
}

Action WorkExecutor::exec_step() {
  if (fn_) {
    Action a = fn_->step(*this);
    ++step;
    return a;
  }
  while (static_cast<size_t>(step) < script_.size()) {
    const WorkStep& s = script_[static_cast<size_t>(step++)];
    if (s.amount <= Time::zero()) continue;
    if (s.kind == WorkStep::Kind::kRun) return Action::run(s.amount.count());
    return sleep_for(s.amount);
  }
  return Action::exit();
}

}  // namespace schedlab
