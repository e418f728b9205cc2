// The idle class (kernel/sched/idle.c): each CPU's idle task, picked when
// no other class has work, and the idle loop it runs.
//
// Without cpuidle (governor "none") idle is a single state 0 entered and
// left with the switch (core.cc switch_to()), the tick stopped: the model
// before cpuidle. With a governor, an idle CPU runs do_idle() ->
// cpuidle_idle_call() at the end of the instant it went idle:
//   select (the governor, plus tick_nohz_get_sleep_length() if it asks),
//   stop or keep the tick, spend the governor's CPU cost in the idle task,
//   enter the state (cpuidle_enter_state(), models/kernel/cpuidle/cpuidle.cc),
//   be woken (a wake-up IPI, the local timer for an hrtimer, the kept tick),
//   pay the exit latency, reflect, and either schedule() or loop.
#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "models/kernel/kernel.h"
#include "models/kernel/sched/classes.h"
#include "sim/log.h"

namespace schedlab {
namespace {

class IdleClass final : public SchedClass {
 public:
  using SchedClass::SchedClass;
  const char* name() const override { return "idle"; }
  void enqueue_task(Rq&, Task&, int) override {}
  bool dequeue_task(Rq&, Task&, int) override { return true; }
  Task* pick_task(Rq& rq) override { return rq.idle; }
  // select_task_rq_idle(): the idle task stays where it is.
  int select_task_rq(Task&, int prev_cpu, int) override { return prev_cpu; }
};

}  // namespace

std::unique_ptr<SchedClass> make_idle_class(Kernel& k) { return std::make_unique<IdleClass>(k); }

// cpuidle_idle_call() (kernel/sched/idle.c) for an idle CPU with nothing to
// run (the caller checked need_resched()).
void Kernel::do_idle(Rq& rq) {
  // do_idle()'s start (once per entry: the flag is cleared the first time).
  nohz_run_idle_balance(rq);
  CpuidleDevice& dev = rq.cpuidle;
  // CPUs boot inside the idle loop: the recorder takes them to be in state
  // 0 until told otherwise; the governor's first run is outside any state.
  if (dev.reported != -1) emit_cpu_idle(rq.cpu, -1);

  // cpuidle_select() with what tick_nohz_get_sleep_length() would return,
  // measured from the idle entry (ts->idle_entrytime = now):
  //   delta_next = dev->next_event - now: the next hrtimer, or the tick if
  //                it runs and comes first;
  //   sleep length = the next hrtimer on this CPU (with the tick stopped).
  // Simplified: every timer is an hrtimer (the timer wheel's "a timer
  // within a tick keeps the tick" rule of tick_nohz_next_event() and the
  // do_timer duty's max_deferment are not modelled), and nothing else keeps
  // the tick: tick_nohz_next_event()'s rcu_needs_cpu(), arch_needs_cpu(),
  // irq_work_needs_cpu() and a pending timer softirq (which cap the sleep
  // length at one tick and keep it running) are taken as false, as on a
  // CPU whose RCU callbacks are offloaded (GKI has CONFIG_RCU_NOCB_CPU).
  const Time t0 = now();
  const Time next_timer = next_hrtimer(rq.cpu);
  Time next_event = next_timer;
  if (!dev.tick_stopped && rq.tick_timer.armed()) next_event = min(next_event, rq.tick_timer.when());
  cpuidle::SelectInput in;
  in.states = dev.states;
  in.latency_req = cpuidle_latency_req_;
  in.sleep_length = next_timer == Time::max() ? Time::max() : next_timer - t0;
  in.delta_next_tick = next_event == Time::max() ? Time::max() : next_event - t0;
  in.tick_stopped = dev.tick_stopped;
  // teo's util awareness: sched_cpu_util(cpu) > arch_scale_cpu_capacity(cpu) >> 6
  // (CFS and RT utilisation; no DL or IRQ time here).
  const uint64_t util = std::min<uint64_t>(cpu_util_cfs(rq) + rq.avg_rt.util_avg, rq.capacity);
  in.cpu_utilized = util > (rq.capacity >> 6);
  in.nr_iowaiters = static_cast<unsigned>(rq.nr_iowait);  // nr_iowait_cpu()
  in.now = t0;
  in.lpm_bias_until = rq.walt_busy_hyst_end;
  const cpuidle::SelectResult r = dev.gov->select(in);
  // qcom-cpu-lpm: its prediction timer (histtimer_start(), pinned), and the
  // expected wake-up of a deepest choice for its cluster governor.
  if (r.timer != Time::max()) [[unlikely]]
    hrtimer_start(dev.gov_timer, t0 + r.timer, rq.cpu);
  if (r.bias_timer != Time::max()) [[unlikely]]
    hrtimer_start(dev.gov_bias_timer, t0 + r.bias_timer, rq.cpu);
  if (r.next_wakeup != Time::max() && dev.domain >= 0) [[unlikely]] {
    CpuidleDomain& d = idle_domains_[static_cast<size_t>(dev.domain)];
    if (d.qcom) d.qcom->cpu_select(dev.domain_slot, r.next_wakeup);
  }
  // --why: the state and the tick decision with the rule, so that governor
  // versions line up by outcome.
  if (counting_decisions()) [[unlikely]]
    count_decision(Decision::kIdle, cpu_names_[static_cast<size_t>(rq.cpu)],
                   intern_reason(fmt::format("{} {}, tick {}: {}", r.state, dev.names[static_cast<size_t>(r.state)],
                                             dev.tick_stopped ? "already stopped" : r.stop_tick ? "stopped" : "kept",
                                             r.why)));
  if (sim_log_debug.load(std::memory_order_relaxed)) [[unlikely]] {
    const cpuidle::IdleState& s = dev.states[static_cast<size_t>(r.state)];
    auto us = [](Time t) { return t == Time::max() ? std::string("none") : fmt::format("{:.1f} us", t.count() / 1e3); };
    SL_DEBUG("{:.6f} cpu{} idle: {} -> state {} {} (target residency {:.1f} us, exit latency {:.1f} us), tick {}: {} "
             "[expected idle {}, next timer {}{}]",
             now().to_s(), rq.cpu, dev.gov->name(), r.state, dev.names[static_cast<size_t>(r.state)],
             s.target_residency.count() / 1e3, s.exit_latency.count() / 1e3,
             dev.tick_stopped ? "already stopped" : r.stop_tick ? "stopped" : "kept", r.why, us(r.predicted),
             r.queried_sleep_length ? us(in.sleep_length) : std::string("not queried"),
             in.cpu_utilized && dev.gov->name().starts_with("teo") ? ", CPU utilized" : "");
  }

  // if (stop_tick || tick_nohz_tick_stopped()) tick_nohz_idle_stop_tick();
  // else tick_nohz_idle_retain_tick();
  // Only the first counts ts->idle_calls (6.12 tick-sched.c
  // __tick_nohz_idle_stop_tick()): a pass that keeps the tick leaves the
  // counter, so schedutil's sugov_hold_freq() takes the CPU for busy.
  if (r.stop_tick || dev.tick_stopped) {
    ++rq.idle_calls;
    rq.tick_timer.cancel();
    if (!dev.tick_stopped) nohz_balance_enter_idle(rq);  // the tick stops now
    dev.tick_stopped = true;
  } else if (!rq.tick_timer.armed()) {
    arm_tick(rq);
  }

  dev.select_at = t0;
  dev.state = r.state;
  dev.phase = CpuidleDevice::Phase::kSelect;
  dev.wake_pending = false;
  dev.need_resched_before_entry = false;
  // The idle task is busy for the governor's run before the state is entered.
  const Time cost =
      params_.cpuidle_governor_cost + (r.queried_sleep_length ? params_.cpuidle_sleep_length_cost : Time::zero());
  if (cost > Time::zero()) {
    dev.step.arm(t0 + cost);
    // do_idle() runs with interrupts off (local_irq_disable()) until the
    // state is entered: a timer of this CPU due during the governor's run
    // is a pending interrupt then, so the state is left at once and the
    // handler runs after it (an IPI or the tick: irq_waits_for_idle_exit()).
    if (next_timer < t0 + cost) {
      dev.wake_pending = true;
      defer_hrtimers_to_idle_step(rq);
    }
  } else {
    cpuidle_enter_state(rq);
  }
}

// The tick on an idle CPU whose governor kept it (tick_sched_handle() with
// ts->inidle: got_idle_tick), periodic while it is not stopped. It wakes
// the CPU; as sched_tick() -> sched_balance_trigger() on an idle CPU, the
// balance softirq may pull work when this CPU's balance is due.
void Kernel::idle_tick(Rq& rq) {
  // The tick interrupt wakes the CPU (tick_nohz_idle_got_tick()); its
  // handler, tick_sched_timer() -> sched_tick() and the balance softirq,
  // runs once the CPU is out of its idle state. The timer's next expiry
  // is the next jiffy after that (hrtimer_forward() keeps the grid).
  if (irq_waits_for_idle_exit(rq, rq.tick_timer, true)) return;
  run_soft_expired_hrtimers(rq, now(), HrtimerIrq::kTick);
  arm_tick(rq);
  if (nr_cpus() > 1 && jiffies() >= rq.next_balance) {
    sched_balance_update_blocked_averages(rq);  // sched_balance_softirq()
    if (sched_balance_domains(rq, true) > 0) resched_curr(rq);
  }
}

}  // namespace schedlab
