// schedutil's slow path (kernel/sched/cpufreq_schedutil.c, Linux 6.12) for
// a policy whose driver cannot switch from the scheduler hook (no
// .fast_switch: cpufreq-dt, the driver of RK3588 and of gs101 as mainline
// describes it). sugov_update_*() then only records next_freq and, unless
// a switch is already under way (work_in_progress), raises an irq_work on
// the deciding CPU (sugov_deferred_update()); its handler queues the
// policy's kthread_work (sugov_irq_work()), which wakes the "sugov:N"
// kthread_worker: SCHED_DEADLINE with SCHED_FLAG_SUGOV (deadline.cc), bound
// to the policy's CPUs, N its first CPU (sched_pixel's: SCHED_FIFO 50). sugov_work() takes next_freq,
// clears work_in_progress (a new decision from then on queues the work
// again) and calls __cpufreq_driver_target(RELATION_L): cpufreq-dt's
// dev_pm_opp_set_rate(), which raises the voltage before the clock going
// up and lowers it after going down (_set_opp()).
//
// The driver's time, an assumption twice over (no measurement at hand):
//   - `work`: CPU work of the whole call (cpufreq core, OPP, clock and
//     regulator frameworks, the bus transfer's set-up), in capacity-ns
//     like any task work;
//   - `wait`: the cluster's transition_latency (the device tree's
//     clock-latency-ns, cpuinfo.transition_latency), spent asleep waiting
//     for the regulator and the PLL: before the switch going up, after it
//     going down. The new frequency applies when the clock is set: after
//     the work going up, at its end going down too (the voltage ramp
//     after it changes no speed).
// Only one kthread_work per policy: a decision while one is pending or
// running is picked up by the next sugov_work() (work_in_progress).
#pragma once

#include <cstdint>

#include "models/kernel/task_body.h"
#include "sim/event_queue.h"
#include "sim/time.h"

namespace schedlab {

class Kernel;
struct Task;

class SugovKthread final : public TaskBody, public EventHandler {
 public:
  // sugov_kthread_create(): the task, started at the policy's first switch.
  SugovKthread(Kernel& k, size_t domain, Time work, Time wait);
  Task& task() { return *task_; }
  // kthread_queue_work() from sugov_irq_work(): wakes the worker unless
  // it is executing a work (it takes the new one when that returns).
  void queue_work(int from_cpu);
  Action next(Task& self) override;  // kthread_worker_fn() running sugov_work()
  void on_event(uint64_t tag) override;  // the driver's wait ends

 private:
  enum class Step : uint8_t { kIdle, kWaitBeforeSwitch, kSwitch, kWaitAfterSwitch };
  Action wait_then(Step next);
  Kernel& k_;
  size_t domain_;
  Time work_, wait_;
  Task* task_ = nullptr;
  Timer wait_timer_;
  int wait_cpu_ = 0;
  bool pending_ = false;  // the policy's kthread_work is queued
  Step step_ = Step::kIdle;
  uint64_t target_khz_ = 0;  // next_freq as sugov_work() read it
  bool going_up_ = false;
};

}  // namespace schedlab
