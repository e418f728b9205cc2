// cpuidle in the kernel model: the devices and domains built from the
// platform, cpuidle_enter_state(), the wake-up of an idle CPU with its exit
// latency, cpuidle_reflect(), and the PSCI cluster domain.
//
// Kernel references (Linux 6.12): drivers/cpuidle/cpuidle.c
// (cpuidle_enter_state: trace_cpu_idle, residency = time_end - time_start),
// drivers/cpuidle/dt_idle_states.c (exit_latency = entry + exit latency,
// target_residency = min-residency), drivers/cpuidle/cpuidle-psci.c and
// cpuidle-psci-domain.c (the deepest CPU state puts the CPU's genpd device
// with pm_runtime_put_sync_suspend(); the last one powers the cluster
// domain off), drivers/pmdomain/governor.c cpu_power_down_ok().
//
// Simplifications (stated):
//  * Physical latencies: a state entered at e and woken at w lets the CPU
//    run at max(w, e + entry_latency) + exit_latency (a wake-up during entry
//    waits for the entry: the worst case is the kernel's exit_latency =
//    entry + exit). A wake-up that arrives while the governor still runs
//    finds the interrupt pending: the state is entered and left at once
//    (PSCI CPU_SUSPEND returns at a pending interrupt).
//  * The cluster: when the last CPU of a cpu-map cluster enters its deepest
//    CPU state, the domain state is the deepest whose min-residency plus
//    entry latency fits before the next event (hrtimer, or a kept tick) of
//    every CPU of the cluster, and whose entry + exit latency meets the PM
//    QoS limit (genpd's dev PM QoS check, reduced to the CPU latency limit).
//    The next events are read at that moment (the kernel reads each CPU's
//    dev->next_hrtimer stored at its idle entry). Every CPU of the cluster
//    is then reported in state n + k; the first wake-up powers the cluster
//    on: that CPU runs after the domain's entry (if unfinished) and exit
//    latency plus its own exit latency; the others are reported back in
//    their deepest CPU state and, if woken before the cluster is on, wait
//    for it. Governors see only CPU states (reflect gets n - 1), as in the
//    kernel.
//  * CPUs whose cluster lists no idle states run without cpuidle
//    (cpuidle_not_available(): default_idle_call(), state 0, tick stopped).
//  * Polling states, CPUIDLE_FLAG_TIMER_STOP / broadcast and s2idle are not
//    modelled; a device interrupt wakes the CPU its handler wakes a task on.
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <type_traits>

#include "models/errors.h"
#include "models/kernel/kernel.h"
#include "sim/log.h"

namespace schedlab {

void Kernel::setup_cpuidle(const PlatformParams& platform) {
  const std::string& name = params_.cpuidle_governor;
  // WALT's busy hysteresis: one value for every CPU or one per CPU.
  auto per_cpu = [&](const auto& v, auto fallback, const char* key) {
    using T = typename std::decay_t<decltype(v)>::value_type;
    std::vector<T> out;
    if (v.empty()) {
      out.assign(static_cast<size_t>(nr_cpus()), fallback);
    } else if (v.size() == 1) {
      out.assign(static_cast<size_t>(nr_cpus()), v.front());
    } else if (static_cast<int>(v.size()) == nr_cpus()) {
      out = v;
    } else {
      throw ModelError(fmt::format("kernel.cpuidle.{}: {} values for {} CPUs (give one value, or one per CPU)", key,
                                   v.size(), nr_cpus()));
    }
    return out;
  };
  walt_busy_hyst_ = per_cpu(params_.walt_busy_hyst, Time::zero(), "walt_busy_hyst");
  walt_util_busy_hyst_ = per_cpu(params_.walt_util_busy_hyst, Time::zero(), "walt_util_busy_hyst");
  walt_util_busy_hyst_util_ = per_cpu(params_.walt_util_busy_hyst_util, uint32_t{15}, "walt_util_busy_hyst_util");
  for (int c = 0; c < nr_cpus(); ++c)
    walt_hyst_ = walt_hyst_ || walt_busy_hyst_[static_cast<size_t>(c)] > Time::zero() ||
                 walt_util_busy_hyst_[static_cast<size_t>(c)] > Time::zero();
  if (walt_hyst_ && name != "qcom-cpu-lpm")
    throw ModelError(fmt::format("kernel.cpuidle.walt_busy_hyst / walt_util_busy_hyst: WALT's LPM bias is read by "
                                 "the qcom-cpu-lpm governor only (governor: {})",
                                 name));
  if (name == "none") return;
  cpuidle::GovernorParams gp;
  gp.tick = tick_nsec_;
  try {
    cpuidle::make_governor(name, gp);  // validates the name
  } catch (const std::invalid_argument& e) {
    throw ModelError(fmt::format("kernel.cpuidle.governor: {}", e.what()));
  }
  if (params_.cpuidle_governor_cost < Time::zero() || params_.cpuidle_sleep_length_cost < Time::zero())
    throw ModelError("kernel.cpuidle: governor_cost and sleep_length_cost must be >= 0");
  cpuidle_latency_req_ = params_.cpuidle_latency_req.value_or(Time::max());
  if (cpuidle_latency_req_ < Time::zero()) throw ModelError("kernel.cpuidle.latency_req must be >= 0");
  if (platform.clusters.empty()) {
    // The configuration layer warns with the file's line; this is for
    // callers without one.
    SL_DEBUG("cpuidle governor '{}': the platform lists no idle states; idle stays a single state 0", name);
    return;
  }
  DerivedPlatform derived;
  try {
    derived = derive_platform(platform);
  } catch (const std::invalid_argument& e) {
    throw ModelError(e.what());
  }
  // One domain per cpu-map cluster with domain idle states (the frequency
  // domains of one cpu-map cluster list the same states: validate_platform()).
  std::vector<int> domain_of_map(derived.cpu_map_cluster_cpus.size(), -1);
  for (size_t m = 0; m < derived.cpu_map_cluster_cpus.size(); ++m) {
    const auto& cpus = derived.cpu_map_cluster_cpus[m];
    if (cpus.empty()) continue;
    const ClusterParams& cl = platform.clusters[static_cast<size_t>(derived.cpus[static_cast<size_t>(cpus.front())].cluster)];
    if (cl.cluster_idle_states.empty()) continue;
    CpuidleDomain d;
    d.cpus = cpus;
    for (const IdleStateParams& s : cl.cluster_idle_states) {
      d.hw.push_back({s.entry_latency, s.exit_latency});
      d.residency.push_back(s.min_residency);
    }
    domain_of_map[m] = static_cast<int>(idle_domains_.size());
    idle_domains_.push_back(std::move(d));
  }
  // qcom-cpu-lpm brings its cluster governor to every cluster domain (the
  // vendor device tree's qcom,lpm-cluster-dev node under each).
  if (name == "qcom-cpu-lpm") {
    for (size_t i = 0; i < idle_domains_.size(); ++i) {
      CpuidleDomain& d = idle_domains_[i];
      std::vector<cpuidle::GenpdState> gs;
      for (size_t k = 0; k < d.hw.size(); ++k) gs.push_back({d.hw[k].entry_latency, d.hw[k].exit_latency, d.residency[k]});
      d.qcom = std::make_unique<cpuidle::QcomClusterGovernor>(std::move(gs), static_cast<int>(d.cpus.size()),
                                                              static_cast<int>(d.cpus.size()) == nr_cpus());
      d.qcom_timer = Timer(sim_.queue(), this, tag(Ev::kClusterGovTimer, i), kTierTimer);
      d.power_on = Timer(sim_.queue(), this, tag(Ev::kClusterPowerOn, i), kTierClockEvent);
    }
  }
  for (int c = 0; c < nr_cpus(); ++c) {
    const CpuInfo& info = derived.cpus[static_cast<size_t>(c)];
    const ClusterParams& cl = platform.clusters[static_cast<size_t>(info.cluster)];
    if (cl.cpu_idle_states.empty()) continue;
    if (cl.cpu_idle_states.size() > static_cast<size_t>(cpuidle::kStateMax))
      throw ModelError(fmt::format("cluster {}: {} idle states, more than CPUIDLE_STATE_MAX ({})", cl.name,
                                   cl.cpu_idle_states.size(), cpuidle::kStateMax));
    Rq& rq = *rqs_[static_cast<size_t>(c)];
    CpuidleDevice& dev = rq.cpuidle;
    for (const IdleStateParams& s : cl.cpu_idle_states) {
      cpuidle::IdleState st;
      st.target_residency = s.min_residency;
      st.exit_latency = s.entry_latency + s.exit_latency;  // dt_idle_states.c init_state_node()
      dev.states.push_back(st);
      dev.hw.push_back({s.entry_latency, s.exit_latency});
      dev.names.push_back(s.name);
    }
    dev.gov = cpuidle::make_governor(name, gp);
    dev.domain = info.cpu_map_cluster >= 0 && static_cast<size_t>(info.cpu_map_cluster) < domain_of_map.size()
                     ? domain_of_map[static_cast<size_t>(info.cpu_map_cluster)]
                     : -1;
    if (dev.domain >= 0) {
      const auto& cpus = idle_domains_[static_cast<size_t>(dev.domain)].cpus;
      dev.domain_slot = static_cast<int>(std::find(cpus.begin(), cpus.end(), c) - cpus.begin());
    }
    dev.step = Timer(sim_.queue(), this, tag(Ev::kIdleStep, static_cast<uint64_t>(c)), kTierWake);
    dev.clockevent = Timer(sim_.queue(), this, tag(Ev::kClockEvent, static_cast<uint64_t>(c)), kTierClockEvent);
    dev.gov_timer = Timer(sim_.queue(), this, tag(Ev::kIdleGovTimer, static_cast<uint64_t>(c)), kTierTimer);
    dev.gov_bias_timer =
        Timer(sim_.queue(), this, tag(Ev::kIdleGovTimer, static_cast<uint64_t>(c) | (uint64_t{1} << 32)), kTierTimer);
    // Boot: the CPU is in the idle loop with its tick running; do_idle()
    // runs at the end of the first instant.
    dev.reported = 0;
    arm_tick(rq);
    mark_resched(c);
    cpuidle_ = true;
  }
}

void Kernel::emit_cpu_idle(int cpu, int state) {
  rqs_[static_cast<size_t>(cpu)]->cpuidle.reported = state;
  for (auto* o : observers_) o->on_cpu_idle(now(), cpu, state);
}

// Ev::kIdleStep: the governor's run is over (enter the state) or the exit
// latency is (the CPU runs again).
void Kernel::idle_step(Rq& rq) {
  if (rq.cpuidle.phase == CpuidleDevice::Phase::kSelect)
    cpuidle_enter_state(rq);
  else if (rq.cpuidle.phase == CpuidleDevice::Phase::kExit)
    idle_exit_done(rq);
}

// cpuidle_enter_state() -> psci_enter_domain_idle_state() for the deepest
// state: trace_cpu_idle(index), time_start, and the cluster domain.
void Kernel::cpuidle_enter_state(Rq& rq) {
  CpuidleDevice& dev = rq.cpuidle;
  if (dev.need_resched_before_entry) {
    // call_cpuidle() (kernel/sched/idle.c, 6.12 and 6.18): need_resched is
    // already set (arm64 has no TIF_POLLING_NRFLAG, so
    // current_clr_polling_and_test() only tests it): dev->last_residency_ns
    // = 0, -EBUSY, no state entered, and cpuidle_reflect() ignores a
    // negative index. do_idle() then leaves the loop for schedule_idle().
    dev.need_resched_before_entry = false;
    dev.wake_pending = false;
    dev.phase = CpuidleDevice::Phase::kOff;
    ++dev.busy_returns;
    if (counting_decisions()) [[unlikely]]
      count_decision(Decision::kIdle, cpu_names_[static_cast<size_t>(rq.cpu)],
                     "no state: need_resched set by another CPU during the governor's run (call_cpuidle() -EBUSY)");
    SL_DEBUG("{:.6f} cpu{} idle: need_resched set by another CPU during the governor's run: call_cpuidle() returns "
             "-EBUSY, no state entered",
             now().to_s(), rq.cpu);
    dev.gov->entry_refused();
    mark_resched(rq.cpu);
    return;
  }
  // android_vh_cpu_idle_enter: qcom-cpu-lpm's lpm_idle_enter() enters WFI
  // instead while an IPI to this CPU is pending.
  if (const int entered = dev.gov->enter_state(dev.state); entered != dev.state) [[unlikely]] {
    SL_DEBUG("{:.6f} cpu{} idle: an IPI to this CPU is pending: state {} instead of {} (lpm_idle_enter())",
             now().to_s(), rq.cpu, entered, dev.state);
    dev.state = entered;
  }
  dev.phase = CpuidleDevice::Phase::kIn;
  dev.entered = now();
  ++dev.entries;
  if (dev.wake_pending) {
    // The interrupt that came during the governor's run is pending: the
    // state is entered and left at once.
    dev.wake_pending = false;
    emit_cpu_idle(rq.cpu, dev.state);
    dev.phase = CpuidleDevice::Phase::kExit;
    idle_exit_done(rq);
    return;
  }
  CpuidleDomain* powered_off = nullptr;
  if (dev.domain >= 0 && dev.state == dev.nr_states() - 1) {
    // pm_runtime_put_sync_suspend(pd_dev): the last CPU powers the domain off
    // if genpd's governor agrees (cpu_power_down_ok()).
    CpuidleDomain& d = idle_domains_[static_cast<size_t>(dev.domain)];
    if (++d.nr_down == static_cast<int>(d.cpus.size())) {
      int k = cpu_power_down_ok(d);
      if (k >= 0 && d.qcom) k = qcom_cluster_pre_off(d, k, rq);
      SL_DEBUG("{:.6f} cpu{} idle: the last CPU of its cluster in its deepest state: {}", now().to_s(), rq.cpu,
               k >= 0 ? fmt::format("cluster state {} (cpu_power_down_ok(): its residency fits before every "
                                    "CPU's next event)",
                                    k)
                      : std::string("the cluster stays on (cpu_power_down_ok(): no state fits before the next event, "
                                    "or qcom-cpu-lpm's notifier refused)"));
      if (k >= 0) {
        d.state = k;
        d.entered = now();
        powered_off = &d;
      }
    }
  }
  if (!powered_off) {
    emit_cpu_idle(rq.cpu, dev.state);
  } else {
    // This CPU, then the others (already in their deepest state), move to
    // the cluster state.
    emit_cpu_idle(rq.cpu, dev.nr_states() + powered_off->state);
    for (int c : powered_off->cpus)
      if (c != rq.cpu) emit_cpu_idle(c, rqs_[static_cast<size_t>(c)]->cpuidle.nr_states() + powered_off->state);
  }
  // The local timer is programmed for the next hrtimer (the tick, if kept,
  // has its own event).
  const Time next = next_hrtimer(rq.cpu);
  if (next != Time::max()) dev.clockevent.arm(max(next, now()));
}

// An interrupt reaches an idle CPU: a wake-up IPI (or the local interrupt
// whose handler woke a task here), the local timer for an hrtimer, the kept
// tick. In a state, the exit latency starts.
void Kernel::idle_wake(Rq& rq, bool tick, bool timer_irq) {
  CpuidleDevice& dev = rq.cpuidle;
  if (tick && dev.phase != CpuidleDevice::Phase::kOff) dev.got_tick = true;
  if (dev.phase == CpuidleDevice::Phase::kSelect) {
    dev.wake_pending = true;
    return;
  }
  if (dev.phase != CpuidleDevice::Phase::kIn) return;  // not idle, or already waking
  if (tick) ++dev.tick_wakeups;
  dev.clockevent.cancel();
  const IdleStateHw& hw = dev.hw[static_cast<size_t>(dev.state)];
  Time start = max(now(), dev.entered + hw.entry_latency);  // the entry completes first
  bool powered_on = false;  // this wake-up powers the cluster on
  if (dev.domain >= 0 && dev.state == dev.nr_states() - 1) {
    CpuidleDomain& d = idle_domains_[static_cast<size_t>(dev.domain)];
    --d.nr_down;
    if (d.state >= 0) {
      // pm_runtime_get_sync(pd_dev): the first CPU up powers the cluster on.
      const IdleStateHw& dh = d.hw[static_cast<size_t>(d.state)];
      d.ready = max(now(), d.entered + dh.entry_latency) + dh.exit_latency;
      d.state_left = d.state;
      d.state = -1;
      powered_on = true;
      for (int c : d.cpus)
        if (c != rq.cpu) emit_cpu_idle(c, rqs_[static_cast<size_t>(c)]->cpuidle.nr_states() - 1);
    }
    start = max(start, d.ready);  // a cluster still powering on
  }
  dev.phase = CpuidleDevice::Phase::kExit;
  const Time running_at = start + hw.exit_latency;
  dev.step.arm(running_at);
  // qcom-cpu-lpm's GENPD_NOTIFY_ON once this CPU, which powered the
  // cluster on, runs: ahead of the timers due then (its tier is the
  // clock event's), as interrupts are still off.
  if (powered_on) {
    CpuidleDomain& d = idle_domains_[static_cast<size_t>(dev.domain)];
    if (d.qcom) d.power_on.arm(running_at);
  }
  // The interrupt is handled once the CPU runs again: cpuidle_enter_state()
  // (6.12 drivers/cpuidle/cpuidle.c) returns from ->enter(), takes
  // time_end, and only then local_irq_enable() lets hrtimer_interrupt() run
  // the expired timers. So every hrtimer of this CPU due by then fires at
  // the exit's end (a timer's handler, e.g. a wake-up, waits out the exit
  // latency even when its task goes to another CPU). The ILB and irq_work
  // IPIs wait the same way (core.cc), and so does the kept tick's handler
  // (idle_tick(); the next tick stays on the jiffies grid).
  defer_hrtimers_to_idle_step(rq, tick || timer_irq, tick);
}

// An interrupt (`irq`, its event; `tick`: the tick's) reaches rq's CPU: it
// wakes the CPU from its idle state, and is handled once the CPU runs
// again (cpuidle_enter_state() enables interrupts after ->enter()): while
// the exit latency runs, `irq` is re-armed for its end and the caller
// returns (true). At the exit's end (the re-armed event, whatever its
// tier against the exit step's) it is handled.
bool Kernel::irq_waits_for_idle_exit(Rq& rq, Timer& irq, bool tick) {
  const Time at = irq_handled_at(rq, tick);
  if (at == now()) return false;
  irq.arm(at);
  return true;
}

Time Kernel::irq_handled_at(Rq& rq, bool tick) {
  if (!rq.cpuidle.gov) return now();
  idle_wake(rq, tick);
  // During the governor's run too (do_idle()'s local_irq_disable()) the
  // interrupt waits: pending as the state is entered, which it leaves at
  // once, it is handled then.
  if (!rq.cpuidle.irqs_off() || rq.cpuidle.step.when() == now()) return now();
  return rq.cpuidle.step.when();
}

// The hrtimers of a CPU with interrupts off in the idle path, in its exit
// latency or running its governor, that expire before dev.step's time (it
// runs again / it reaches the state) fire then.
// An hrtimer interrupt then (one of these, or `timer_irq`: the tick's or
// the local timer's that woke the CPU) also runs the range timers whose
// soft expiry has come.
void Kernel::defer_hrtimers_to_idle_step(Rq& rq, bool timer_irq, bool tick) {
  CpuidleDevice& dev = rq.cpuidle;
  const Time running_at = dev.step.when();
  for (HrtimerRef& h : dev.hrtimers) {
    if (h.expires >= running_at || !h.live(sim_.queue())) continue;
    h.timer->arm(running_at);
    h.expires = running_at;
    timer_irq = true;
  }
  // The kept tick's interrupt re-queues the tick a jiffy on
  // (tick_nohz_handler() returns HRTIMER_RESTART), ahead of a window
  // reaching past it.
  if (timer_irq) run_soft_expired_hrtimers(rq, running_at, tick ? HrtimerIrq::kTick : HrtimerIrq::kIdleExit);
}

// The CPU runs again (time_end): cpu_idle -1, dev->last_residency_ns,
// cpuidle_reflect(); then the idle loop schedules or goes round again.
void Kernel::idle_exit_done(Rq& rq) {
  CpuidleDevice& dev = rq.cpuidle;
  dev.phase = CpuidleDevice::Phase::kOff;
  emit_cpu_idle(rq.cpu, -1);
  // android_vh_cpu_idle_exit: lpm_idle_exit() cancels the prediction timer
  // unless less than a microsecond is left (ktime_to_us(remaining) <= 0):
  // an expired one runs its handler once interrupts are on.
  // biastimer_cancel() likewise for the bias timer.
  for (Timer* t : {&dev.gov_timer, &dev.gov_bias_timer})
    if (t->armed() && t->when() - now() >= Time::us(1)) hrtimer_cancel(*t);
  cpuidle::IdleExit e;
  e.state = dev.state;
  e.residency = now() - dev.entered;
  e.time_span = now() - dev.select_at;
  e.tick_wakeup = dev.got_tick;  // tick_nohz_idle_got_tick()
  SL_DEBUG("{:.6f} cpu{} idle exit: {:.1f} us in state {} {} (target residency {:.1f} us){}{}", now().to_s(), rq.cpu,
           e.residency.count() / 1e3, e.state, dev.names[static_cast<size_t>(e.state)],
           dev.states[static_cast<size_t>(e.state)].target_residency.count() / 1e3,
           e.residency >= dev.states[static_cast<size_t>(e.state)].target_residency ? "" : ": shorter than its target",
           e.tick_wakeup ? ", the tick ran" : "");
  dev.gov->reflect(e);
  dev.got_tick = false;
  mark_resched(rq.cpu);  // on_instant_end(): schedule() if need_resched, else do_idle()
}

// cpu_power_down_ok() (drivers/pmdomain/governor.c): the deepest domain
// state whose residency plus power-off latency fits before the domain's
// next wake-up (6.18: and within the CPU latency PM QoS limit). -1: stay
// on. The device PM QoS of the domain (_default_power_down_ok()) is not
// modelled: no device sets one.
int Kernel::cpu_power_down_ok(CpuidleDomain& d) {
  Time wakeup = Time::max();
  for (int c : d.cpus) wakeup = min(wakeup, cpu_next_event(c));
  const Time idle = wakeup == Time::max() ? Time::max() : wakeup - now();
  int deepest = static_cast<int>(d.hw.size()) - 1;
  // GENPD_FLAG_MIN_RESIDENCY (set by qcom-cpu-lpm's cluster governor):
  // _default_power_down_ok() first takes the deepest state that fits before
  // the domain devices' next wake-up (next_wakeup_allows_state()); none: off
  // (and cached so). Without a next wake-up (none, or one already past) it
  // returns its cached verdict unless something changed since: a walk that
  // found a state changes it, nothing else here does (the PSCI states'
  // latencies are not measured, no device PM QoS changes). With the
  // mainline governors the cache always holds the deepest state.
  if (d.qcom) {
    if (const Time next = d.qcom->next_wakeup(now()); next != Time::max()) {
      while (deepest >= 0 && next - now() < d.residency[static_cast<size_t>(deepest)] +
                                                d.hw[static_cast<size_t>(deepest)].entry_latency)
        --deepest;
      if (deepest < 0) {
        d.genpd_cached_ok = false;
        d.genpd_cached_idx = 0;
        return -1;
      }
      d.genpd_changed = true;
    }
    if (!d.genpd_changed) {
      if (!d.genpd_cached_ok) return -1;
      deepest = d.genpd_cached_idx;
    } else {
      d.genpd_changed = false;
      d.genpd_cached_ok = true;
      d.genpd_cached_idx = deepest;
    }
  }
  if (idle <= Time::zero()) return -1;
  // From the deepest state down, the first whose residency plus power-off
  // latency fits (and, 6.18, whose power-on plus power-off latency is
  // within the CPU latency PM QoS limit).
  for (int i = deepest; i >= 0; --i) {
    const IdleStateHw& hw = d.hw[static_cast<size_t>(i)];
    const bool fits = idle == Time::max() || idle >= d.residency[static_cast<size_t>(i)] + hw.entry_latency;
    const bool qos_ok = !version_.genpd_cpu_latency_qos || hw.entry_latency + hw.exit_latency <= cpuidle_latency_req_;
    if (fits && qos_ok) return i;
  }
  return -1;
}

// dev->next_hrtimer as cpuidle_enter() stores it (tick_nohz_get_next_hrtimer()):
// the next hrtimer, or the tick if it runs and comes first.
Time Kernel::cpu_next_event(int cpu) {
  Rq& rq = *rqs_[static_cast<size_t>(cpu)];
  Time t = next_hrtimer(cpu);
  if (rq.tick_timer.armed()) t = min(t, rq.tick_timer.when());
  return t;
}

// cluster_power_cb(GENPD_NOTIFY_PRE_OFF) for state k, on rq's CPU (the last
// of the domain down). Its cluster timer is an hrtimer pinned to that CPU.
int Kernel::qcom_cluster_pre_off(CpuidleDomain& d, int k, Rq& rq) {
  bool ipi_pending = false;
  for (int c : d.cpus) ipi_pending = ipi_pending || rqs_[static_cast<size_t>(c)]->cpuidle.gov->ipi_pending();
  const cpuidle::QcomClusterGovernor::PreOff r = d.qcom->pre_off(now(), k, cpuidle_latency_req_, ipi_pending);
  if (r.start_timer != Time::max()) {
    d.qcom_timer_cpu = rq.cpu;
    hrtimer_start(d.qcom_timer, now() + r.start_timer, rq.cpu);
  }
  SL_DEBUG("{:.6f} cpu{} idle: qcom-cpu-lpm cluster notifier: state {} {}{}", now().to_s(), rq.cpu, k,
           r.allow         ? "allowed"
           : ipi_pending ? "refused (an IPI is pending)"
                         : "refused (PM QoS, or restricted by its prediction)",
           r.start_timer != Time::max() ? fmt::format(", cluster timer in {:.1f} us", r.start_timer.count() / 1e3) : "");
  return r.allow ? k : -1;
}

// update_busy_hyst_end_time() (WALT sched_avg.c), called from
// sched_update_nr_prod() before the class's enqueue / dequeue: per_cpu(nr)
// becomes nr_running + enq; a drop from 3 or more runnable to fewer, or a
// dequeue with the CPU's util above a tenth of its capacity, starts the
// busy hysteresis; a dequeue with the CPUs' summed util at or above the
// CPU's threshold starts the util hysteresis; the longer one sets the end.
// WALT's cpu_util() is the summed window demand of the CPU's enqueued
// tasks (cumulative_runnable_avg_scaled, the leaving task still counted;
// 0 on an idle CPU). It is stood in for by PELT's CPU util (CFS + RT,
// capped at the capacity), which also keeps blocked tasks' decaying util:
// a summed threshold (15, 30) is reached a little more often here.
void Kernel::walt_update_busy_hyst(Rq& rq, int enq) {
  const int prev = rq.walt_nr;
  rq.walt_nr = rq.nr_running + enq;
  const size_t c = static_cast<size_t>(rq.cpu);
  const Time busy = walt_busy_hyst_[c], util_hyst = walt_util_busy_hyst_[c];
  if (busy == Time::zero() && util_hyst == Time::zero()) return;
  auto util_of = [this](const Rq& r) {
    return std::min<uint64_t>(cpu_util_cfs(r) + r.avg_rt.util_avg, r.capacity);
  };
  const bool nr_trigger = prev >= 3 && rq.walt_nr < 3;
  const bool dequeue = enq < 0;
  const bool load_trigger = dequeue && util_of(rq) * 10 > rq.capacity;
  bool util_trigger = false;
  if (dequeue && util_hyst > Time::zero()) {
    uint64_t total = 0;
    for (const auto& other : rqs_) {
      total += util_of(*other);
      if (total >= walt_util_busy_hyst_util_[c]) {
        util_trigger = true;
        break;
      }
    }
  }
  const Time agg = max((nr_trigger || load_trigger) ? busy : Time::zero(), util_trigger ? util_hyst : Time::zero());
  if (agg > Time::zero()) rq.walt_busy_hyst_end = now() + agg;
}

// cluster_power_cb(GENPD_NOTIFY_ON): the cluster timer is cancelled unless
// less than a microsecond is left; the history and prediction are updated;
// after the SoC's deepest sleep every CPU's and cluster's history is cleared.
void Kernel::qcom_cluster_power_on(CpuidleDomain& d) {
  if (d.qcom_timer.armed() && d.qcom_timer.when() - now() >= Time::us(1)) hrtimer_cancel(d.qcom_timer);
  if (!d.qcom->power_on(now(), d.state_left)) return;
  for (auto& rq : rqs_)
    if (rq->cpuidle.gov) rq->cpuidle.gov->clear_history();
  for (CpuidleDomain& other : idle_domains_)
    if (other.qcom && &other != &d) other.qcom->clear_history();
}

}  // namespace schedlab
