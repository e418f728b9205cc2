// cpuidle in the kernel model: the per-CPU device (struct cpuidle_device
// plus the idle task's progress through do_idle()), the PSCI cluster power
// domain (genpd) a CPU's deepest state belongs to, and the per-CPU hrtimer
// bookkeeping tick_nohz_get_sleep_length() reads.
//
// Code: models/kernel/sched/idle.cc (do_idle, cpuidle_idle_call, the idle
// tick), models/kernel/cpuidle/cpuidle.cc (set-up, cpuidle_enter_state,
// wake-up and exit latency, the genpd domain) and hrtimer.cc (hrtimers,
// tick_nohz_get_sleep_length()). The governors are governor.h.
//
// Numbering (the cpu_idle tracepoint): a CPU's own states 0..n-1 (shallow
// to deep, drv->states[]), then its cluster's states n..n+m-1 (PSCI
// OS-initiated domain states: on a Pixel 6 class phone 0 = WFI, 1 = CPU
// off, 2 = cluster off); -1 = not in an idle state.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/kernel/cpuidle/governor.h"
#include "sim/event_queue.h"
#include "sim/time.h"

namespace schedlab {

// An hrtimer queued on a CPU's hrtimer base: the Timer and the expiry it was
// queued with. An entry is live while its Timer is armed for that expiry;
// fired, cancelled or re-armed timers leave stale entries that are dropped
// when the list is next scanned (no removal on the hot path). The Timer's
// slot is kept with the entry: the scans look its state up in the event
// queue (`q`, the kernel's, which every queued Timer is on) directly, not
// through the Timer, one indirection less per entry.
struct HrtimerRef {
  Timer* timer = nullptr;
  Time expires;
  SlotId slot = kNoSlot;  // timer->slot()
  bool live(const EventQueue& q) const { return q.when(slot) == expires && q.armed(slot); }
  // Stale at `now`: an expiry already past has fired (no look at the queue).
  bool stale_at(const EventQueue& q, Time now) const { return expires < now || !live(q); }
};

// A range hrtimer (hrtimer_start_range_ns()) queued on a CPU: its Timer is
// armed at the hard expiry; an hrtimer interrupt of that CPU at or after
// the soft expiry runs it early if the walk in hard-expiry order reaches
// it (__hrtimer_run_queues(); Kernel::run_soft_expired_hrtimers()).
struct RangeHrtimerRef {
  Timer* timer = nullptr;
  Time soft;
  Time hard;
  const std::string* owner = nullptr;  // for --log debug: whose timer (a task's comm, a device's name)
  const std::string* group = nullptr;  // for --why: a task's group, a device's timer
  // What last stopped the hrtimer walk ahead of it once soft-expired.
  enum class HeldBy : uint8_t { kNothing, kTick, kTimer } held_by = HeldBy::kNothing;
  SlotId slot = kNoSlot;  // timer->slot(), as in HrtimerRef
  bool live(const EventQueue& q) const { return q.when(slot) == hard && q.armed(slot); }
  bool stale_at(const EventQueue& q, Time now) const { return hard < now || !live(q); }
};

// Hardware view of one idle state (IdleStateParams): what entering and
// leaving it costs in time. The governor sees cpuidle::IdleState.
struct IdleStateHw {
  Time entry_latency;
  Time exit_latency;
};

// The cluster (cpu-map cluster / PSCI cluster power domain) of a CPU and
// its domain idle states, with genpd's view of them (of_genpd_parse_state:
// power_off_latency = entry-latency, power_on_latency = exit-latency,
// residency = min-residency).
struct CpuidleDomain {
  std::vector<int> cpus;
  std::vector<IdleStateHw> hw;            // cluster states, shallow to deep
  std::vector<Time> residency;            // min-residency per state
  int state = -1;                         // domain state entered, -1: powered on
  Time entered;                           // when it was entered
  Time ready;                             // powered on again (after a wake-up)
  int nr_down = 0;                        // CPUs in their deepest state (pm_runtime-suspended CPU devices)
  // qcom-cpu-lpm's cluster governor (nullptr with the mainline governors).
  // Its genpd notifier runs at power-on on the CPU that powered the domain
  // on, once that CPU runs (psci's pm_runtime_get_sync() after CPU_SUSPEND
  // returns, interrupts still off: before any timer handler then), for the
  // state left: the `power_on` event.
  std::unique_ptr<cpuidle::QcomClusterGovernor> qcom;
  Timer qcom_timer;                       // its cluster prediction timer (an hrtimer pinned to qcom_timer_cpu)
  int qcom_timer_cpu = -1;
  Timer power_on;                         // GENPD_NOTIFY_ON
  int state_left = -1;                    // the state it left then
  // genpd's cached verdict (struct genpd_governor_data: max_off_time_changed,
  // cached_power_down_ok, cached_power_down_state_idx), which
  // _default_power_down_ok() returns while nothing changed.
  bool genpd_changed = true;
  bool genpd_cached_ok = true;
  int genpd_cached_idx = 0;
};

// struct cpuidle_device of one CPU plus the idle task's progress.
struct CpuidleDevice {
  enum class Phase : uint8_t {
    kOff,     // not in the idle loop's state machine (a task runs, or no cpuidle)
    kSelect,  // the idle task runs the governor (and tick_nohz_get_sleep_length())
    kIn,      // in an idle state (entering it, or resident)
    kExit,    // woken; the exit latency runs
  };
  std::unique_ptr<cpuidle::Governor> gov;  // nullptr: no cpuidle on this CPU
  std::vector<cpuidle::IdleState> states;  // drv->states (exit_latency = entry + exit, dt_idle_states.c)
  std::vector<IdleStateHw> hw;             // the same states, as the hardware takes them
  std::vector<std::string> names;          // the platform's state names (for --log debug)
  int domain = -1;                         // index of its CpuidleDomain, -1: no cluster states
  int domain_slot = -1;                    // its index in that domain's cpus
  Phase phase = Phase::kOff;
  int state = -1;            // the CPU state selected / entered (drv->states index)
  int reported = -1;         // the cpu_idle state last reported (CPU or cluster numbering)
  bool tick_stopped = false; // tick_nohz_tick_stopped()
  bool got_tick = false;     // ts->got_idle_tick: the tick ran during this idle period
  bool wake_pending = false; // a wake-up arrived while the governor ran
  // Another CPU set need_resched directly (resched_curr(): an RT push, an
  // active balance) while the governor ran: call_cpuidle() returns -EBUSY.
  bool need_resched_before_entry = false;
  Time select_at;            // teo's time_span start: when select() ran
  Time entered;              // cpuidle_enter_state() time_start
  Timer step;                // end of the governor's run (kSelect) or of the exit latency (kExit)
  Timer clockevent;          // the local timer programmed for the next hrtimer while in a state
  Timer gov_timer;           // the governor's own hrtimer (qcom-cpu-lpm's prediction timer)
  Timer gov_bias_timer;      // ... and its bias timer (WALT's LPM bias)
  std::vector<HrtimerRef> hrtimers;  // this CPU's hrtimer base
  // Statistics (dev->states_usage[].usage summed; tests and debugging).
  uint64_t entries = 0;
  uint64_t busy_returns = 0;  // call_cpuidle() -EBUSY: no state entered

  uint64_t tick_wakeups = 0;
  int nr_states() const { return static_cast<int>(states.size()); }
  // Interrupts are off on the idle path from do_idle() until the state is
  // entered (the governor's run) and again until the CPU runs after a
  // wake-up (the exit latency): what arrives then is handled at dev.step.
  bool irqs_off() const { return phase == Phase::kSelect || phase == Phase::kExit; }
};

}  // namespace schedlab
