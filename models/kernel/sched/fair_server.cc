// The fair deadline server of Linux 6.12 (kernel/sched/deadline.c dl_server
// with dl_defer; fair.c fair_server_init), reduced to the states that decide
// when starved fair tasks run:
//
//  deferred  (defer_running = false): fair time, on its own, drains the
//            budget; a drained budget starts a new period. A timer at the
//            zero-laxity point (deadline - runtime) checks whether fair tasks
//            were starved: if so the server starts a new period and runs
//            fair tasks above RT for `runtime`, and becomes...
//  running   (defer_running = true): a periodic DL task. Throttled once the
//            budget is used, it is replenished at each period start and
//            runs at once: the first `runtime` of every period.
//  Fair time charged while throttled in running mode (no more
//  starvation) drops the server back to deferred with a new period.
//
// Idle time is charged to the budget as dl_server_update_idle_time() does
// (at a fair enqueue on an idle CPU and when the idle task is switched
// out), and the server's bandwidth counts in the CPU's DL running
// bandwidth (cpu_bw_dl(), schedutil's floor) from dl_server_start() to its
// zero-lag time after dl_server_stop(): GRUB's task_contending() /
// task_non_contending() and inactive_task_timer().
//
// Simplified: DL admission control and the dl_server_min_res re-arm slack
// (1 ms) are not modelled. Fair and idle time drain the budget unscaled, as
// "sched/deadline: Fix dl_server runtime calculation formula" (fc975cfb3639,
// v6.16; stable 6.12.39; in android16-6.12) has it: 6.12.19 scaled both by
// capacity and frequency.
//
// Versions: "6.12" stops the server when the CPU's last fair task leaves
// (6.12.19). "6.18" (6.18.35) keeps it started until a pick through the
// DL class finds no fair task ("Less agressive dl_server handling", 6.17; backported to
// 6.12.92, and in android16-6.12 in its own form: `fair_server_lazy_stop`
// turns it on for any version), uses the revised wake-up rule and leaves
// the starved mode at a new period. Either way the bandwidth stays up to
// about a period after the CPU's last fair work.
#include "models/kernel/kernel.h"
#include "sim/log.h"

namespace schedlab {

void Kernel::fair_server_new_period(Rq& rq) {
  FairServerState& s = rq.fair_server;
  s.deadline = now() + params_.fair_server_period;
  s.runtime = params_.fair_server_runtime.count();
}

// replenish_dl_entity() at a period boundary: the deadline moves a period
// on and the budget gains a period's runtime until it is positive, so an
// overrun (the budget is checked at update_curr(), a tick late at most)
// is paid from the next period; a deadline still behind the clock starts a
// new period.
void Kernel::fair_server_replenish(Rq& rq) {
  FairServerState& s = rq.fair_server;
  const int64_t dl_runtime = params_.fair_server_runtime.count();  // > 0: see Kernel::Kernel()
  while (s.runtime <= 0) {
    s.deadline = s.deadline + params_.fair_server_period;
    s.runtime += dl_runtime;
  }
  if (s.deadline < now()) fair_server_new_period(rq);
}

// The server's dl_timer, an hrtimer on its CPU: 6.17+ leaves it armed
// through idle, where it wakes the CPU and bounds the governor's sleep.
void Kernel::fair_server_arm_timer(Rq& rq, Time expires) {
  hrtimer_start_on_own_base(rq.server_timer, expires, rq.cpu);
}

// dl_server_start() from enqueue_task_fair() when the CPU's first fair task
// is queued; dl_server_stop() from dequeue_entities() when its last leaves
// (up to 6.16). 6.17+ ("sched/deadline: Less agressive dl_server handling",
// cccb45d7c429; in 6.18.35) no longer stops it there: the server stays
// started, bandwidth and timer included; its timer queues it
// (fair_server_timer()), and the first pick through the DL class that finds
// no fair task stops it (__pick_task_dl(), pick_next_task()).
void Kernel::fair_server_update_active(Rq& rq) {
  if (!fair_server_enabled_) return;
  FairServerState& s = rq.fair_server;
  const bool want = rq.cfs.h_nr_running > 0;
  const bool newly_queued = want && !s.fair_queued;
  s.fair_queued = want;
  if (want == s.active) {
    // 6.17+: fair work back on a CPU whose server stayed started;
    // enqueue_task_fair() still charges the idle time first.
    if (newly_queued && rq.idle_task_runs()) fair_server_charge_idle(rq);
    return;
  }
  if (!want) {
    // 6.17+: even a queued (running) server stays until a pick stops it.
    if (!fair_server_lazy_stop_) fair_server_stop(rq);
    return;
  }
  s.active = true;
  // enqueue_task_fair(): the idle time up to a fair enqueue on an idle CPU
  // is the server's before it starts.
  if (rq.idle_task_runs()) fair_server_charge_idle(rq);
  // enqueue_dl_entity(ENQUEUE_WAKEUP) -> task_contending(): back before
  // the zero-lag time the bandwidth never left; otherwise it is added
  // (__add_running_bw() kicks cpufreq).
  if (params_.fair_server_runtime.count() > 0) {
    if (s.non_contending) {
      s.non_contending = false;
      rq.server_inactive_timer.cancel();  // hrtimer_try_to_cancel(); its base entry goes stale
    } else if (!s.bw_running) {
      s.bw_running = true;
      cpufreq_update_util(rq, 0);
    }
  }
  // update_dl_entity(): CBS rule -- a passed deadline or a budget that would
  // overflow the server's bandwidth starts a new period. 6.18 keeps a
  // deadline still ahead and cuts the budget to the bandwidth of what is
  // left (update_dl_revised_wakeup(), d66792919d4f: runtime = dl_density x
  // laxity >> BW_SHIFT), and a new period leaves the starved mode ("Fix
  // 'stuck' dl_server", 115135422562: without it a server stopped while
  // running starts running again at once, as 6.12.19 does).
  const int64_t left = (s.deadline - now()).count();
  const bool overflow = left <= 0 || static_cast<__int128>(s.runtime) * params_.fair_server_period.count() >
                                         static_cast<__int128>(params_.fair_server_runtime.count()) * left;
  if (overflow) {
    if (dl_server_revised_wakeup_ && left >= 0) {
      s.runtime = static_cast<int64_t>((static_cast<unsigned __int128>(fair_server_density_) *
                                        static_cast<uint64_t>(left)) >> 20);
    } else {
      if (dl_server_revised_wakeup_) s.defer_running = false;
      fair_server_new_period(rq);
    }
  }
  // Still starved (dl_defer_running, which dl_server_stop() keeps) and no
  // new period: the server is queued at once, even with its budget used
  // (dl_server_stop() cleared dl_throttled; update_dl_entity() sees no
  // overflow in a budget at or below zero), and runs the fair task until
  // the next update_curr() throttles it; the overrun is paid from the
  // next period (replenish_dl_entity()).
  if (!s.defer_running)
    fair_server_arm_timer(rq, s.zero_laxity());
  else
    s.running = true;
  // "if (!dl_task(rq->curr) || dl_entity_preempt(...)) resched_curr()":
  // no task here is a DL task, so the CPU always picks again, even when
  // the server stays deferred: an RT task running there is picked again
  // (no switch), a running fair task whose properties changed may give
  // way (6.12.19 and 6.18.35 dl_server_start()).
  resched_curr(rq);
}

// dl_server_stop(): dequeue_dl_entity(DEQUEUE_SLEEP), the timer cancelled.
void Kernel::fair_server_stop(Rq& rq) {
  FairServerState& s = rq.fair_server;
  s.active = false;
  s.running = false;
  // hrtimer_try_to_cancel(). Fair tasks come and go many times per period:
  // the entry stays queued, dead, and the next dl_server_start() re-keys it
  // in place (EventQueue::cancel_lazy()); its hrtimer-base entry goes stale.
  rq.server_timer.cancel_lazy();
  // task_non_contending(): the bandwidth stays until the zero-lag time,
  // deadline - runtime x period / dl_runtime, or leaves now if that has
  // passed.
  const int64_t dl_runtime = params_.fair_server_runtime.count();
  if (s.bw_running && dl_runtime > 0) {
    const int64_t zerolag =
        (s.deadline - now()).count() -
        static_cast<int64_t>(static_cast<__int128>(s.runtime) * params_.fair_server_period.count() / dl_runtime);
    if (zerolag < 0) {
      fair_server_sub_running_bw(rq);
    } else {
      s.non_contending = true;
      hrtimer_start_on_own_base(rq.server_inactive_timer, now() + Time::ns(zerolag), rq.cpu);
    }
  }
}

// dl_server_update() from the fair class's update_curr().
void Kernel::fair_server_account(Rq& rq, int64_t delta) {
  if (!fair_server_enabled_) return;
  FairServerState& s = rq.fair_server;
  if (!s.active) return;
  s.runtime -= delta;
  if (s.runtime > 0) return;
  if (s.running) {
    // Budget used: throttle until the next period -- unless that began at
    // least 1 us ago (start_dl_timer() will not start a timer in the past:
    // ktime_us_delta() < 0), when the budget is replenished at once and the
    // server, still the leftmost DL entity, runs on without a resched.
    if ((s.deadline - now()).count() <= -1000) {
      fair_server_replenish(rq);
      return;
    }
    s.running = false;
    fair_server_arm_timer(rq, s.deadline);
    resched_curr(rq);
  } else if (!s.defer_running) {
    // Fair tasks got their share without help: new period, timer re-armed.
    fair_server_new_period(rq);
    fair_server_arm_timer(rq, s.zero_laxity());
  } else {
    // Charged while throttled: fair runs on its own again, back to deferred.
    s.defer_running = false;
    fair_server_new_period(rq);
    fair_server_arm_timer(rq, s.zero_laxity());
  }
}

// dl_server_update_idle_time() (6.12 deadline.c): the time the idle task
// ran since it was picked or last charged drains the budget, down to 0;
// a drained budget also ends a starvation episode (dl_defer_running = 0).
void Kernel::fair_server_charge_idle(Rq& rq) {
  if (!fair_server_enabled_) return;
  FairServerState& s = rq.fair_server;
  Task& idle = *rq.idle;
  const int64_t delta = now().count() - idle.se.exec_start;
  if (s.runtime < 0 || delta < 0) return;
  s.runtime -= delta;
  if (s.runtime < 0) {
    s.defer_running = false;
    s.runtime = 0;
  }
  idle.se.exec_start = now().count();
}

// __sub_running_bw(): the bandwidth leaves; cpufreq is kicked.
void Kernel::fair_server_sub_running_bw(Rq& rq) {
  rq.fair_server.bw_running = false;
  cpufreq_update_util(rq, 0);
}

// inactive_task_timer() for the server: the zero-lag time came while it
// was still stopped.
void Kernel::fair_server_inactive_timer(Rq& rq) {
  FairServerState& s = rq.fair_server;
  if (!s.non_contending) return;
  update_rq_clock(rq);
  s.non_contending = false;
  fair_server_sub_running_bw(rq);
}

// dl_server_timer().
void Kernel::fair_server_timer(Rq& rq) {
  FairServerState& s = rq.fair_server;
  if (!s.active) return;
  update_rq_clock(rq);
  if (!s.defer_running) {
    if (now() < s.zero_laxity()) {
      fair_server_arm_timer(rq, s.zero_laxity());
      return;
    }
    // Zero laxity reached with fair tasks still waiting: the server starts.
    s.defer_running = true;
    fair_server_new_period(rq);
  } else {
    // Replenishment at the period boundary, the overrun carried.
    fair_server_replenish(rq);
  }
  s.running = true;
  if (rq.cfs.nr_running == 0) {
    // 6.17+: a server left started through idle is enqueued with nothing
    // to serve, and dl_server_timer() reschedules curr all the same (no
    // "has tasks" test there since 6.17): an RT task running here picks
    // again through the DL class, which stops the server at once
    // (pick_next_task()). An idle CPU's pick takes the fair fast path
    // (nothing is runnable), so the server stays queued, bandwidth and
    // CPUPRI_HIGHER included, until such a pick. Simplification: on an
    // idle CPU the model skips that resched (the kernel leaves the idle
    // loop once, restarting and re-stopping the tick; the timer's wake-up
    // from the idle state is modelled).
    if (!rq.curr->is_idle_task) resched_curr(rq);
    return;
  }
  SL_DEBUG("{:.6f} cpu{} fair server runs starved fair tasks for {} ns", now().to_s(), rq.cpu, s.runtime);
  // As dl_server_start(): any non-DL curr picks again, a fair one too
  // (EEVDF may then choose another fair task).
  resched_curr(rq);
}

}  // namespace schedlab
