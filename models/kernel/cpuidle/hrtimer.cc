// Per-CPU hrtimer bases, reduced to what the model needs: which timers are
// queued on a CPU and when they expire (the bound of the hrtimer walk,
// timer migration's next-event check and, with cpuidle,
// tick_nohz_get_sleep_length(), cpu_power_down_ok(), the local timer of an
// idle CPU).
//
// Each CPU keeps a small array of HrtimerRef (the Timer and the expiry it
// was queued with), reserved at set-up: no allocation in the hot loop. A
// fired, cancelled or re-armed timer is not removed when that happens (its
// owner's Timer dispatches straight to its handler): its entry goes stale
// and is dropped by the next scan of that CPU's array. Scans are linear;
// a CPU holds a handful of timers (one per task that slept there, delayed
// work, runtime-PM suspend timers). An entry keeps its Timer's slot, and
// the scans read the timer's state from the kernel's event queue
// (HrtimerRef::live()): they run at every hrtimer_start(), so the cost per
// entry is what counts.
#include <algorithm>
#include <stdexcept>

#include "models/kernel/kernel.h"
#include "sim/log.h"

namespace schedlab {
namespace {

// Drops the entries `drop` picks (which may also read or update them),
// swapping the last entry in (a base's order is its entries' queueing
// history; nothing depends on it but the deferral order at an idle exit
// and the order the walk collects the timers it runs, both kept as they
// always were). The entry moved into a hole is looked at there in turn.
// Walked with pointers: the vector's size is not reloaded after each store.
template <typename Ref, typename Pred>
void drop_entries(std::vector<Ref>& v, Pred drop) {
  Ref* p = v.data();
  Ref* end = p + v.size();
  while (p != end) {
    if (drop(*p))
      *p = *--end;
    else
      ++p;
  }
  v.resize(static_cast<size_t>(end - v.data()));  // shrinks: no allocation
}

// Before queueing `t` on a CPU: drop its earlier entry there and every
// stale one (fired, cancelled or re-armed).
template <typename Ref>
void drop_entry_and_stale(std::vector<Ref>& v, const Timer& t, const EventQueue& q, Time now) {
  drop_entries(v, [&t, &q, now](const Ref& r) { return r.timer == &t || r.stale_at(q, now); });
}

// A base holds at most one entry of a timer (every push follows a drop of
// its earlier one): the scan stops there, with the same result as
// drop_entries().
template <typename Ref>
void drop_entry(std::vector<Ref>& v, const Timer& t) {
  for (Ref& r : v) {
    if (r.timer == &t) {
      r = v.back();
      v.pop_back();
      return;
    }
  }
}

}  // namespace

// hrtimer_start() on `cpu`'s base (its earlier entry there dropped).
void Kernel::hrtimer_enqueue(Timer& t, Time expires, int cpu, bool drop_stale) {
  if (cpu < 0 || cpu >= nr_cpus()) return;  // no CPU known: a plain timer
  if (t.queue() != &sim_.queue()) [[unlikely]]  // the entries' slots are looked up there
    throw std::invalid_argument("hrtimer_start(): the timer is not on the kernel's event queue");
  Rq& rq = *rqs_[static_cast<size_t>(cpu)];
  CpuidleDevice& dev = rq.cpuidle;
  auto& v = dev.hrtimers;
  if (drop_stale)
    drop_entry_and_stale(v, t, sim_.queue(), now());
  else
    drop_entry(v, t);
  // A CPU still in its exit latency handles the timer when it runs again;
  // one running its governor (interrupts off) when it reaches the state,
  // which the pending interrupt makes it leave at once.
  if (dev.irqs_off() && expires < dev.step.when()) {
    expires = dev.step.when();
    t.arm(expires);
    if (dev.phase == CpuidleDevice::Phase::kSelect) dev.wake_pending = true;
  }
  v.push_back({&t, expires, t.slot()});
  // hrtimer_reprogram(): the first timer to expire on an idle CPU resets its
  // local timer (a CPU still running its governor programs it on entry).
  if (dev.phase == CpuidleDevice::Phase::kIn && (!dev.clockevent.armed() || expires < dev.clockevent.when()))
    dev.clockevent.arm(max(expires, now()));
}

void Kernel::hrtimer_start_range(Timer& t, Time soft, Time slack, int cpu, const std::string* owner,
                                 const std::string* group) {
  const Time hard = soft + max(slack, Time::zero());
  hrtimer_start(t, hard, cpu);
  if (slack <= Time::zero() || cpu < 0 || cpu >= nr_cpus()) return;
  Rq& rq = *rqs_[static_cast<size_t>(cpu)];
  auto& v = rq.range_hrtimers;
  drop_entry_and_stale(v, t, sim_.queue(), now());
  v.push_back({&t, soft, hard, owner, group, RangeHrtimerRef::HeldBy::kNothing, t.slot()});
  rq.range_min_soft = min(rq.range_min_soft, soft);
}

namespace {

// --why reasons of the "timer slack" kind (stable strings: counted by address).
constexpr const char* kRanEarly[] = {"ran early, in the tick's interrupt", "ran early, in another hrtimer's interrupt",
                                     "ran early, in the timer interrupt that ended an idle state"};
constexpr const char* kRanAtHard[] = {"at its hard expiry: no interrupt in its window",
                                      "at its hard expiry: the walk stopped at the running tick",
                                      "at its hard expiry: the walk stopped at a pending timer"};
// --log debug's words for the interrupt.
constexpr const char* kIrqName[] = {"the tick's interrupt", "another hrtimer's interrupt",
                                    "the timer interrupt that ended its idle state"};

}  // namespace

// __hrtimer_run_queues() (6.12 kernel/time/hrtimer.c) walks the CPU's
// timers in hard-expiry order and stops at the first whose soft expiry has
// not come. So a soft-expired range timer runs only if nothing pending
// sorts before it: no range timer still short of its soft expiry with an
// earlier hard one, no plain hrtimer still to expire, and not the tick --
// which, when it runs on this CPU, is queued at its next jiffy (re-queued
// there by its own handler when this is the tick's interrupt) ahead of a
// range timer whose window reaches past that jiffy. Those run now, in
// hard-expiry order; the others stay queued for a later interrupt or
// their hard expiry. Equal expiries keep insertion order in the
// timerqueue: the tick re-queued by this interrupt sorts after the timers
// already at its new expiry, which run; other ties are taken as the bound
// first (the model does not keep the order they were queued in). Simplified: all
// timers share one clock base (the kernel walks each base -- MONOTONIC,
// BOOTTIME, ... -- on its own), and only the model's hrtimers are there
// (Kernel::hrtimer_start(): sleeps, runtime PM's, the fair server's, the
// RT period timer, SurfaceFlinger's, the GPU's).
// Kernel::run_soft_expired_hrtimers() calls this once the earliest soft
// expiry has come.
void Kernel::walk_soft_expired_hrtimers(Rq& rq, Time at, HrtimerIrq irq, const Timer* expired) {
  auto& v = rq.range_hrtimers;
  const EventQueue& q = sim_.queue();
  using HeldBy = RangeHrtimerRef::HeldBy;
  // Pass 1: drop what fired or went stale; find the candidates (soft-
  // expired, live) and the range timers still short of their soft expiry,
  // the earliest of whose hard expiries bounds the walk.
  Time bound = Time::max();
  HeldBy bound_by = HeldBy::kNothing;
  bool bound_inclusive = false;  // a candidate whose hard expiry is the bound runs too
  Time last_candidate = Time::zero();  // the latest hard expiry of a candidate (> at), if any
  Time min_soft = Time::max();  // of the entries kept (rq.range_min_soft)
  drop_entries(v, [&](const RangeHrtimerRef& h) {
    if (at < h.hard && h.live(q)) {
      if (h.soft > at && h.hard < bound) {
        bound = h.hard;
        bound_by = HeldBy::kTimer;
      } else if (h.soft <= at) {
        last_candidate = max(last_candidate, h.hard);
      }
      min_soft = min(min_soft, h.soft);
      return false;
    }
    if (h.group && counting_decisions()) [[unlikely]] {
      // Due in this interrupt (its own expiry, or one in the same instant
      // or deferred to the same idle exit): no earlier one ran it.
      const bool due = h.hard <= at && (h.timer == expired || (h.timer->armed() && h.timer->when() <= at));
      if (due) count_decision(Decision::kTimer, *h.group, kRanAtHard[static_cast<size_t>(h.held_by)]);
    }
    return true;
  });
  auto& run = range_run_scratch_;
  run.clear();
  if (last_candidate > at) {
    // The running tick, queued at its next jiffy (its own interrupt
    // re-queues it there), and the CPU's plain hrtimers still to expire
    // bound it too -- those before the last candidate's hard expiry matter.
    if (irq == HrtimerIrq::kTick || rq.tick_timer.armed()) {
      // Re-queued by this very walk (its own interrupt, or due in it): it
      // sorts after timers already queued at the same expiry.
      const bool requeued = irq == HrtimerIrq::kTick || rq.tick_timer.when() <= at;
      const Time tick = requeued ? next_tick_after(at) : rq.tick_timer.when();
      if (tick < bound) {
        bound = tick;
        bound_by = HeldBy::kTick;
        bound_inclusive = requeued;
      }
    }
    for (const HrtimerRef& c : rq.cpuidle.hrtimers) {
      if (c.expires <= at || c.expires >= bound || c.expires > last_candidate || !c.live(q)) continue;
      bool is_range_timer = false;  // its range entry bounds the walk above, or runs
      for (const RangeHrtimerRef& h : v) is_range_timer |= h.timer == c.timer;
      if (!is_range_timer) {
        bound = c.expires;
        bound_by = HeldBy::kTimer;
        bound_inclusive = false;
      }
    }
    // Pass 2: the candidates before the bound run; the others are held.
    min_soft = Time::max();
    drop_entries(v, [&](RangeHrtimerRef& h) {
      if (h.soft <= at && (h.hard < bound || (bound_inclusive && h.hard == bound))) {
        run.push_back(h);
        return true;
      }
      if (h.soft <= at) h.held_by = bound_by;
      min_soft = min(min_soft, h.soft);
      return false;
    });
  }
  rq.range_min_soft = min_soft;
  // Armed for `at` in hard-expiry order: their handlers run in that order.
  std::sort(run.begin(), run.end(), [](const RangeHrtimerRef& a, const RangeHrtimerRef& b) { return a.hard < b.hard; });
  for (const RangeHrtimerRef& h : run) {
    if (sim_log_debug.load(std::memory_order_relaxed)) [[unlikely]]
      SL_DEBUG("{:.6f} cpu{} hrtimer: {}'s timer (soft expiry {:.6f}) runs in {}, {} us before its hard "
               "expiry {:.6f}",
               at.to_s(), rq.cpu, h.owner ? *h.owner : std::string("a"), h.soft.to_s(),
               kIrqName[static_cast<size_t>(irq)], (h.hard - at).count() / 1000, h.hard.to_s());
    if (h.group) count_decision(Decision::kTimer, *h.group, kRanEarly[static_cast<size_t>(irq)]);
    h.timer->arm(at);
    // The CPU's cpuidle base sees the new expiry (it is the exit's end
    // at the latest: the CPU is awake or waking).
    for (HrtimerRef& c : rq.cpuidle.hrtimers)
      if (c.timer == h.timer && c.expires == h.hard) c.expires = at;
  }
}

// hrtimer_cancel(), or a re-arm before it fired: drop `t` from every base,
// its range entry too (re-armed elsewhere with the same expiry, an old
// entry would look live). Rare: a linear pass.
void Kernel::hrtimer_forget(const Timer& t) {
  for (auto& rqp : rqs_) {
    drop_entry(rqp->cpuidle.hrtimers, t);
    drop_entry(rqp->range_hrtimers, t);
  }
}

// The earliest live hrtimer queued on `cpu` (hrtimer_next_event_without()
// of the tick: the tick is Rq::tick_timer, not in the array).
Time Kernel::next_hrtimer(int cpu) {
  auto& v = rqs_[static_cast<size_t>(cpu)]->cpuidle.hrtimers;
  const EventQueue& q = sim_.queue();
  drop_entries(v, [&q](const HrtimerRef& h) { return !h.live(q); });
  Time next = Time::max();
  for (const HrtimerRef& h : v) next = min(next, h.expires);
  return next;
}

// get_nohz_timer_target() (6.12 core.c) and hrtimer_suitable_target()
// (6.12 hrtimer.c). No housekeeping (nohz_full) CPUs are modelled: every CPU
// may take timers. A busy CPU's next event is its tick at the latest (a
// busy CPU keeps its tick) or an hrtimer queued there.
int Kernel::hrtimer_target_cpu(int this_cpu, Time expires) const {
  if (!cpu_idle(this_cpu)) return this_cpu;
  for (const CpuMask& span : wake_affine_spans(this_cpu)) {
    for (int i = 0; i < nr_cpus(); ++i) {
      if (i == this_cpu || !span.test(static_cast<size_t>(i)) || cpu_idle(i)) continue;
      const Rq& rq = *rqs_[static_cast<size_t>(i)];
      Time next_event = rq.tick_timer.armed() ? rq.tick_timer.when() : Time::max();
      for (const HrtimerRef& h : rq.cpuidle.hrtimers)
        if (h.expires < next_event && h.live(sim_.queue())) next_event = h.expires;
      return expires >= next_event ? i : this_cpu;
    }
  }
  return this_cpu;
}

}  // namespace schedlab
