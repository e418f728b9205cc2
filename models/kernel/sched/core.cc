// The core scheduler paths (kernel/sched/core.c, Linux 6.12): wake-ups,
// __schedule(), the tick, priority inheritance, plus the execution of task
// bodies on CPUs. Class-specific logic lives in fair_eevdf.cc, fair_cfs.cc,
// rt.cc and idle.cc.
#include <algorithm>
#include <fmt/format.h>

#include "models/errors.h"
#include "models/kernel/kernel.h"
#include "models/kernel/sched/classes.h"
#include "models/kernel/sched/fair_pelt.h"
#include "models/kernel/sched/kernel_mutex.h"
#include "models/kernel/sched/kernel_versions.h"
#include "models/kernel/sched/weights.h"
#include "sim/log.h"

namespace schedlab {

char task_state_letter(TaskState s) {
  switch (s) {
    case TaskState::kRunning: return 'R';
    case TaskState::kInterruptible: return 'S';
    case TaskState::kUninterruptible: return 'D';
    case TaskState::kDead: return 'X';
    case TaskState::kNew: return 'N';
  }
  return '?';
}

namespace {

// Zero-time steps in a row after which a task is declared stuck: actions
// of one task (advance_current()), or __schedule() passes of one CPU
// within one instant (on_instant_end()). Far above any real scenario.
constexpr int kMaxZeroTimeSteps = 100000;

// on_instant_end()'s verdict on a CPU rescheduled kMaxZeroTimeSteps times
// in a row at `now`; `before` ran the pass before (kept out of line: the
// hot loop only counts).
[[noreturn]] __attribute__((cold, noinline)) void fail_no_progress(Time now, const Rq& rq, const Task& before,
                                                                   bool across_cpus = false) {
  const Task& curr = *rq.curr;
  const bool yields = curr.act == Task::Act::kYielded;
  throw ModelError(fmt::format(
      "task {}{} makes no progress: at t={} {} reschedule{} {} times in a row without time passing, as the task "
      "{} each time{}",
      curr.comm, &before != &curr ? fmt::format(" (with task {})", before.comm) : "", format_time(now),
      across_cpus ? "the CPUs" : fmt::format("CPU {}", rq.cpu), across_cpus ? "" : "s", kMaxZeroTimeSteps,
      yields ? "yields" : curr.act == Task::Act::kExited ? "exits" : "blocks",
      yields ? " (a yield takes no time in the model; a task whose events are only yields never lets time advance: "
               "give it a run event)"
             : " (events that take no time, such as a binder call or a wake-up without work, hand the CPU back "
               "and forth forever: give the work a positive length)"));
}

}  // namespace

const char* policy_name(Policy p) {
  switch (p) {
    case Policy::kNormal: return "SCHED_OTHER";
    case Policy::kBatch: return "SCHED_BATCH";
    case Policy::kIdle: return "SCHED_IDLE";
    case Policy::kFifo: return "SCHED_FIFO";
    case Policy::kRr: return "SCHED_RR";
    case Policy::kDeadline: return "SCHED_DEADLINE";
  }
  return "?";
}

Kernel::Kernel(const KernelParams& params, const PlatformParams& platform) : params_(params) {
  const int nr_cpus = platform.clusters.empty() ? platform.cpus : [&] {
    int n = 0;
    for (const auto& c : platform.clusters) n += c.nr_cpus;
    return n;
  }();
  auto info = kernel_version_info(params.version);
  if (!info) {
    std::string valid;
    for (const auto& v : supported_kernel_versions()) valid += (valid.empty() ? "" : ", ") + v;
    throw ModelError(fmt::format("kernel version '{}' is not modelled (valid: {})", params.version, valid));
  }
  version_ = *info;
  features_ = info->defaults;
  for (const auto& [name, on] : params.features) {
    auto f = sched_feature_by_name(name);
    if (!f) throw ModelError(fmt::format("unknown scheduler feature '{}'", name));
    features_.set(*f, on);
  }
  // A server without runtime is never started (6.12 dl_server_start()
  // returns at once; 6.18's dl_server_timer() refuses it): no server.
  fair_server_enabled_ = params.fair_server.value_or(info->fair_server) && params.fair_server_runtime.count() > 0;
  if (fair_server_enabled_) {
    // dl_server_apply_params() -> to_ratio(period, runtime), then cpu_bw_dl().
    const uint64_t bw = (static_cast<unsigned __int128>(params.fair_server_runtime.count()) << 20) /
                        static_cast<uint64_t>(params.fair_server_period.count());
    fair_server_cpu_bw_ = (bw * 1024) >> 20;
    fair_server_density_ = bw;  // implicit deadline: density = bandwidth
    fair_server_lazy_stop_ = params.fair_server_lazy_stop.value_or(info->dl_server_lazy_stop);
    dl_server_revised_wakeup_ = info->dl_server_revised_wakeup;
  }
  rt_throttling_ = params.rt_throttling.value_or(info->rt_throttling);
  // preempt: lazy before 6.13 is modelled anyway (the loader warns).
  if (params.hz != 100 && params.hz != 250 && params.hz != 300 && params.hz != 1000)
    throw ModelError(fmt::format("hz {} is not a CONFIG_HZ choice (valid: 100, 250, 300, 1000)", params.hz));
  if (nr_cpus < 1) throw ModelError("a platform needs at least one CPU");
  // TICK_NSEC = (NSEC_PER_SEC + HZ/2) / HZ (include/linux/jiffies.h).
  tick_nsec_ = Time::ns((1000000000LL + params.hz / 2) / params.hz);

  classes_[static_cast<size_t>(SchedClassId::kDeadline)] = make_dl_class(*this);
  classes_[static_cast<size_t>(SchedClassId::kRt)] = make_rt_class(*this);
  classes_[static_cast<size_t>(SchedClassId::kFair)] = version_.eevdf ? make_eevdf_class(*this) : make_cfs_class(*this);
  classes_[static_cast<size_t>(SchedClassId::kIdle)] = make_idle_class(*this);

  range_run_scratch_.reserve(128);
  for (int c = 0; c < nr_cpus; ++c) {
    auto rq = std::make_unique<Rq>();
    rq->cpu = c;
    // INIT_LIST_HEAD(&rq->leaf_cfs_rq_list); tmp_alone_branch at its head.
    rq->leaf_cfs_rq_list.prev = rq->leaf_cfs_rq_list.next = &rq->leaf_cfs_rq_list;
    rq->tmp_alone_branch = &rq->leaf_cfs_rq_list;
    rq->cfs.leaf_node.owner = &rq->cfs;
    rq->range_hrtimers.reserve(128);
    rq->cpuidle.hrtimers.reserve(64);  // the CPU's hrtimer base, whatever the cpuidle setting
    rq->pelt.start_at(kRqClockAtZeroNs);
    rq->sd_balance_interval_ms = nr_cpus;  // sd_init(): sd_weight
    auto idle = std::make_unique<Task>();
    idle->pid = 0;
    idle->comm = fmt::format("swapper/{}", c);
    idle->is_idle_task = true;
    idle->sched_class = SchedClassId::kIdle;
    idle->prio = idle->normal_prio = idle->static_prio = 120;
    idle->state = TaskState::kRunning;
    idle->on_cpu = true;
    idle->cpu = c;
    set_entity_cfs_rq(idle->se, rq->cfs);  // init_idle() -> __set_task_cpu() -> set_task_rq()
    rq->idle = rq->curr = idle.get();
    rq->work_timer = Timer(sim_.queue(), this, tag(Ev::kWorkDone, c), kTierWorkDone);
    rq->tick_timer = Timer(sim_.queue(), this, tag(Ev::kTick, c), kTierTick);
    rq->server_timer = Timer(sim_.queue(), this, tag(Ev::kServer, c), kTierTick);
    rq->server_inactive_timer = Timer(sim_.queue(), this, tag(Ev::kServerInactive, c), kTierTick);
    rq->resched_ipi = Timer(sim_.queue(), this, tag(Ev::kResched, c), kTierWake);
    rq->irq_work = Timer(sim_.queue(), this, tag(Ev::kIrqWork, c), kTierWake);
    rq->sugov_irq_work = Timer(sim_.queue(), this, tag(Ev::kSugovIrqWork, c), kTierWake);
    rq->ilb_kick = Timer(sim_.queue(), this, tag(Ev::kIlb, c), kTierWake);
    rq->ttwu_done = Timer(sim_.queue(), this, tag(Ev::kTtwuDone, c), kTierWake);
    rq->active_balance_stop = Timer(sim_.queue(), this, tag(Ev::kActiveBalance, c), kTierWake);
    idle_tasks_.push_back(std::move(idle));
    rqs_.push_back(std::move(rq));
  }
  // sched_init_dl_servers() (6.18): each CPU's server is set up at boot,
  // its first period running from then (6.12.19 sets it up at its first
  // dl_server_start(), which fair_server_update_active() does).
  if (fair_server_enabled_ && dl_server_revised_wakeup_)
    for (auto& rq : rqs_) {
      rq->fair_server.deadline = Time::zero() + params.fair_server_period;
      rq->fair_server.runtime = params.fair_server_runtime.count();
    }
  resched_mask_.assign((static_cast<size_t>(nr_cpus) + 63) / 64, 0);
  for (int c = 0; c < nr_cpus; ++c) cpu_names_.push_back(fmt::format("cpu{}", c));
  llc_id_.assign(static_cast<size_t>(nr_cpus), 0);
  // Identical CPUs: one domain of them all (MC over the shared LLC), as the
  // kernel builds for one cpu-map cluster; on one CPU it degenerates.
  {
    CpuMask all;
    for (int c = 0; c < nr_cpus; ++c) all.set(static_cast<size_t>(c));
    wake_affine_spans_.assign(static_cast<size_t>(nr_cpus),
                              nr_cpus > 1 ? std::vector<CpuMask>{all} : std::vector<CpuMask>{});
  }
  lb_excluded_.assign(static_cast<size_t>(nr_cpus), 0);
  seed_sched_rng(0);
  // The stopper as __schedule() sees it after an active balance:
  // sched_set_stop_task() makes it SCHED_FIFO 99 (prio 0), stop class.
  stop_task_.comm = "migration";
  stop_task_.sched_class = SchedClassId::kStop;
  stop_task_.prio = stop_task_.normal_prio = 0;
  setup_tunables();
  setup_platform(platform);
  setup_cpuidle(platform);
  // Without cpuidle a CPU boots in the idle loop with its tick stopped,
  // so in nohz.idle_cpus_mask; with it, do_idle() decides at the first
  // instant.
  for (auto& rq : rqs_)
    if (!rq->cpuidle.gov) nohz_balance_enter_idle(*rq);
  rt_period_timer_ = Timer(sim_.queue(), this, tag(Ev::kRtPeriod, 0), kTierTick);
  setup_uclamp();
  setup_task_groups();
  setup_fair_groups();
  setup_sugov_kthreads(platform);
  sim_.set_instant_end_hook(this);
}

// init_uclamp() with the scenario's CONFIG_UCLAMP_BUCKETS_COUNT and sysctls;
// sysctl_sched_uclamp_handler() enables the static key for a sysctl written
// away from its default.
void Kernel::setup_uclamp() {
  if (!params_.uclamp) return;
  if (params_.uclamp_buckets < 5 || params_.uclamp_buckets > kUclampMaxBuckets)
    throw ModelError(fmt::format("uclamp buckets {} outside CONFIG_UCLAMP_BUCKETS_COUNT's range 5..20",
                                 params_.uclamp_buckets));
  if (params_.uclamp_util_min > params_.uclamp_util_max || params_.uclamp_util_max > kUclampScale ||
      params_.uclamp_min_rt_default > kUclampScale)
    throw ModelError(fmt::format("uclamp sysctls util_min {} / util_max {} / min_rt_default {}: the kernel needs "
                                 "util_min <= util_max <= 1024 and min_rt_default <= 1024",
                                 params_.uclamp_util_min, params_.uclamp_util_max, params_.uclamp_min_rt_default));
  uclamp_sys_.buckets = params_.uclamp_buckets;
  uclamp_sys_.defaults = {params_.uclamp_util_min, params_.uclamp_util_max};
  uclamp_sys_.min_rt_default = params_.uclamp_min_rt_default;
  if (params_.uclamp_util_min != kUclampScale || params_.uclamp_util_max != kUclampScale ||
      params_.uclamp_min_rt_default != kUclampScale)
    enable_uclamp();
}

void Kernel::enable_uclamp() {
  if (uclamp_used_) return;
  uclamp_used_ = true;
  // Tasks already queued were not refcounted (their uclamp_se is not
  // active; uclamp_rq_dec_id() skips them), as in the kernel.
  for (FreqDomain& d : domains_)
    d.governor->set_uclamp_used();
}

void Kernel::uclamp_reset_defaults(Task& p) {
  for (const UclampId id : kUclampIds) {
    if (p.uclamp_req[id].user_defined) continue;
    // "RT by default have a 100% boost value that could be modified at runtime."
    const uint32_t value = id == kUclampMin && rt_prio(p.prio) ? uclamp_sys_.min_rt_default : uclamp_none(id);
    p.uclamp_req[id] = uclamp_sys_.make(value, false);
  }
}

void Kernel::set_task_uclamp(Task& p, std::optional<uint32_t> util_min, std::optional<uint32_t> util_max) {
  if (!util_min && !util_max) return;
  validate_uclamp(p, util_min, util_max);
  enable_uclamp();
  if (util_min) p.uclamp_req[kUclampMin] = uclamp_sys_.make(*util_min, true);
  if (util_max) p.uclamp_req[kUclampMax] = uclamp_sys_.make(*util_max, true);
}

void Kernel::validate_uclamp(const Task& p, std::optional<uint32_t> util_min, std::optional<uint32_t> util_max) const {
  if (!params_.uclamp)
    throw ModelError(fmt::format("task {}: uclamp_min/uclamp_max need CONFIG_UCLAMP_TASK (kernel.uclamp.enabled: "
                                 "true); sched_setattr() fails with EOPNOTSUPP without it",
                                 p.comm));
  const uint32_t lo = util_min.value_or(p.uclamp_req[kUclampMin].value);
  const uint32_t hi = util_max.value_or(p.uclamp_req[kUclampMax].value);
  if (lo > kUclampScale || hi > kUclampScale || lo > hi)
    throw ModelError(fmt::format("task {}: uclamp_min {} / uclamp_max {}: sched_setattr() needs 0 <= min <= max <= "
                                 "1024 (EINVAL)",
                                 p.comm, lo, hi));
}

void Kernel::uclamp_rq_inc(Rq& rq, Task& p, int flags) {
  // Fair and RT have uclamp_enabled; a task whose dequeue is delayed is
  // not runnable to uclamp, unless this is its ENQUEUE_DELAYED wake-up
  // (6.18 counts the clamps before the class enqueue clears sched_delayed).
  if (!uclamp_used_ || p.sched_class == SchedClassId::kDeadline || (p.se.sched_delayed && !(flags & kEnqueueDelayed)))
    return;
  for (const UclampId id : kUclampIds) {
    schedlab::uclamp_rq_inc_id(uclamp_sys_, rq.uclamp, id, uclamp_tg_restrict(p, id), p.uclamp[id]);
  }
  rq.uclamp.flag_idle = false;  // one RUNNABLE task: no more idle holding
}

void Kernel::uclamp_rq_dec(Rq& rq, Task& p) {
  if (!uclamp_used_ || p.sched_class == SchedClassId::kDeadline || p.se.sched_delayed) return;
  for (const UclampId id : kUclampIds) {
    schedlab::uclamp_rq_dec_id(uclamp_sys_, rq.uclamp, id, p.uclamp[id]);
  }
}

void Kernel::class_enqueue(Rq& rq, Task& p, int flags) {
  // account_entity_enqueue(): list_add() at the head of cfs_tasks (a
  // delayed task requeued never left the list).
  if (p.sched_class == SchedClassId::kFair && !(flags & kEnqueueDelayed)) cfs_tasks_move_to_head(p);
  class_of(p).enqueue_task(rq, p, flags);
}

// 6.12's core.c enqueue_task() counts p's clamps after the class enqueue
// (so its cpufreq kicks, dl_server_start()'s among them, do not see them);
// 6.18's counts them first ("Can be before ->enqueue_task()"), as 6.1's
// and 6.6's did.
void Kernel::enqueue_task(Rq& rq, Task& p, int flags) {
  if (walt_hyst_) [[unlikely]]
    walt_update_busy_hyst(rq, 1);  // android_rvh_enqueue_task
  if (version_.uclamp_inc_before_enqueue) uclamp_rq_inc(rq, p, flags);
  class_enqueue(rq, p, flags);
  fair_server_update_active(rq);  // enqueue_task_fair()'s dl_server_start()
  if (!version_.uclamp_inc_before_enqueue) uclamp_rq_inc(rq, p);
}

bool Kernel::dequeue_task(Rq& rq, Task& p, int flags) {
  uclamp_rq_dec(rq, p);
  if (walt_hyst_) [[unlikely]]
    walt_update_busy_hyst(rq, -1);  // android_rvh_dequeue_task
  return class_of(p).dequeue_task(rq, p, flags);
}

Kernel::~Kernel() = default;

// get_update_sysctl_factor() (kernel/sched/fair.c): tunables scale with the
// number of online CPUs, capped at 8: none = 1, linear = n, log = 1 + log2(n).
void Kernel::setup_tunables() {
  int cpus = std::min(nr_cpus(), 8);
  int64_t factor = 1;
  if (params_.tunable_scaling == "linear") factor = cpus;
  else if (params_.tunable_scaling == "log") factor = 1 + (31 - __builtin_clz(static_cast<unsigned>(cpus)));
  else if (params_.tunable_scaling != "none")
    throw ModelError(fmt::format("tunable_scaling '{}' unknown (valid: none, log, linear)", params_.tunable_scaling));
  // Normalised defaults: sysctl_sched_base_slice 0.75 ms (6.6 to 6.16; 0.70
  // ms from 6.17); legacy sched_latency 6 ms, min_granularity 0.75 ms,
  // wakeup_granularity 1 ms.
  base_slice_ = params_.base_slice.value_or(Time::ns(version_.base_slice_ns)).count() * factor;
  sched_latency_ = params_.sched_latency.value_or(Time::ms(6)).count() * factor;
  min_granularity_ = params_.min_granularity.value_or(Time::us(750)).count() * factor;
  wakeup_granularity_ = params_.wakeup_granularity.value_or(Time::ms(1)).count() * factor;
  // RR_TIMESLICE is in jiffies: sched_rr_timeslice = msecs_to_jiffies(100)
  // (= 100 * HZ / 1000), rounded up: ceil(t * HZ / 1 s). Not t / TICK_NSEC:
  // at HZ=300 a tick is 3,333,333 ns and 100 ms would round up to 31.
  rr_timeslice_ticks_ = std::max<int64_t>(
      1, static_cast<int64_t>((static_cast<__int128>(params_.rr_timeslice.count()) * params_.hz + 999'999'999) /
                              1'000'000'000));
}

SchedClassId Kernel::class_for(const Task& p) const {
  if (dl_prio(p.prio)) return SchedClassId::kDeadline;
  return rt_prio(p.prio) ? SchedClassId::kRt : SchedClassId::kFair;
}

Task& Kernel::create_task(const std::string& comm, const std::string& group, Policy policy, int nice,
                          int rt_priority, const std::vector<int>& cpus, bool kernel_thread) {
  auto t = std::make_unique<Task>();
  Task& p = *t;
  p.index = static_cast<uint32_t>(tasks_.size());
  p.pid = static_cast<int>(tasks_.size()) + 1;
  p.se.task = &p;
  p.comm = comm;
  p.group = group;
  p.policy = policy;
  p.static_prio = nice_to_prio(nice);
  p.rt_priority = rt_priority;
  const bool dl = policy == Policy::kDeadline;
  bool rt = is_rt_policy(policy) || dl;  // rt_or_dl_task() for the timer slack
  p.normal_prio = dl ? kDlPrio : rt ? rt_priority_to_prio(rt_priority) : p.static_prio;
  p.prio = p.normal_prio;
  p.sched_class = class_for(p);
  // Forked with init_task's slack (kernel.overheads.timer_slack); an RT
  // task's is 0 (__setscheduler_params()).
  p.default_timer_slack = params_.timer_slack;
  p.timer_slack = rt ? Time::zero() : params_.timer_slack;
  // set_load_weight(): SCHED_IDLE tasks get the minimal weight.
  if (policy == Policy::kIdle) {
    p.se.weight = kWeightIdlePrio;
    p.se.inv_weight = kWmultIdlePrio;
  } else {
    p.se.weight = nice_to_weight(nice);
    p.se.inv_weight = nice_to_wmult(nice);
  }
  p.rt.time_slice_ticks = rr_timeslice_ticks_;
  // uclamp_fork() + uclamp_post_fork(): no clamp, RT tasks asking for
  // sched_util_clamp_min_rt_default.
  uclamp_reset_defaults(p);
  init_entity_runnable_average(p.se.avg, p.se.weight);
  p.cpus_allowed.reset();
  if (cpus.empty())
    for (int c = 0; c < nr_cpus(); ++c) p.cpus_allowed.set(static_cast<size_t>(c));
  for (int c : cpus) {
    if (c < 0 || c >= nr_cpus())
      throw ModelError(fmt::format("task {}: CPU {} does not exist (the platform has {} CPUs)", comm, c, nr_cpus()));
    p.cpus_allowed[c] = true;
  }
  p.nr_cpus_allowed = static_cast<int>(p.cpus_allowed.count());
  p.kernel_thread = kernel_thread;
  p.cpu = 0;
  while (!p.cpus_allowed[p.cpu]) ++p.cpu;
  p.wake_cpu = p.cpu;
  set_task_rq(p, p.cpu);
  max_allowed_cap_.push_back(0);
  p.state = TaskState::kNew;
  tasks_.push_back(std::move(t));
  set_task_max_allowed_capacity(p);
  lb_walk_.reserve(tasks_.size() + 32);  // + the refused tasks a walk meets again (loop_max <= 32)
  lb_detached_.reserve(tasks_.size());
  // Every CPU's fair timeline has room for every task: enqueueing never
  // allocates (the hot loop does not allocate).
  for (auto& rq : rqs_) rq->cfs.timeline.reserve(tasks_.size() + fair_group_rqs_.size());
  for (auto& g : fair_group_rqs_)
    if (g) g->cfs.timeline.reserve(tasks_.size() + fair_group_rqs_.size());
  // One more task: every FIFO in use needs room for it.
  for (int prio = 0; prio < kMaxRtPrio; ++prio)
    if (rt_prios_in_use_[static_cast<size_t>(prio)] || prio == p.normal_prio) reserve_rt_queue(prio);
  return p;
}

void Kernel::reserve_rt_queue(int prio) {
  if (!rt_prio(prio)) return;
  rt_prios_in_use_.set(static_cast<size_t>(prio));
  for (auto& rq : rqs_) rq->rt.queue[static_cast<size_t>(prio)].reserve(tasks_.size());
}

void Kernel::set_custom_slice(Task& p, Time slice) {
  if (!version_.custom_slice)
    throw ModelError(fmt::format("task {}: a custom slice needs Linux 6.12 or later (kernel is {})", p.comm,
                                 params_.version));
  // sched_setattr(sched_runtime) sets a custom slice, clamped to
  // [0.1 ms, 100 ms] (6.12 __setparam_fair()).
  p.se.slice = std::clamp<int64_t>(slice.count(), 100000, 100000000);
  p.se.custom_slice = true;
}

void Kernel::start_task_at(Task& p, Time at) { sim_.post(at, kTierWake, this, tag(Ev::kStart, p.index)); }

// 6.12 hrtimer_nanosleep() takes current->timer_slack_ns, which follows
// the policy, not a PI boost (a boosted fair task keeps its slack).
Time Kernel::timer_slack(const Task& p) const { return p.timer_slack; }

// PR_SET_TIMERSLACK / a write of /proc/PID/timerslack_ns (6.12 sys.c,
// fs/proc/base.c timerslack_ns_write()): ignored for an RT task; 0 means
// the default.
void Kernel::set_timer_slack(Task& p, Time slack) {
  if (is_rt_policy(p.policy)) return;
  p.timer_slack = slack > Time::zero() ? slack : p.default_timer_slack;
}

void Kernel::notify_period_end(const Task& p, Time period_start, Time response, Time period) {
  for (auto* o : observers_) o->on_period_end(now(), p, period_start, response, period);
}

// ---------------------------------------------------------------- events

void Kernel::on_event(uint64_t t) {
  Ev ev = static_cast<Ev>(t >> 56);
  uint64_t arg = t & ((1ULL << 56) - 1);
  switch (ev) {
    case Ev::kWorkDone:
      event_cpu_ = static_cast<int>(arg);
      update_rq_clock(*rqs_[arg]);
      on_work_done(*rqs_[arg]);
      break;
    case Ev::kTick:
      event_cpu_ = static_cast<int>(arg);
      update_rq_clock(*rqs_[arg]);
      scheduler_tick(*rqs_[arg]);
      break;
    case Ev::kRtPeriod:
      // An hrtimer pinned where start_rt_bandwidth() ran: its interrupt
      // runs that CPU's soft-expired range timers too.
      event_cpu_ = rt_period_cpu_;
      hrtimer_interrupt(event_cpu_);
      rt_period_timer();
      break;
    case Ev::kStart: {
      Task& p = *tasks_[arg];
      // wake_up_new_task(): place on a CPU, fork-time placement, enqueue with
      // ENQUEUE_INITIAL, then check preemption of that CPU's current task,
      // all on the parent's CPU: a resched of another CPU (the fair
      // server's start in the enqueue, wakeup_preempt()) is by IPI.
      event_cpu_ = kForkCpu;
      p.state = TaskState::kRunning;
      // sched_fork(): the child starts on its parent's CPU, whatever its
      // mask; every task here is forked from CPU 0 (an assumption: the
      // scenario's parent runs there). wake_up_new_task() then records it
      // as the recently used CPU and places the child.
      p.cpu = p.wake_cpu = kForkCpu;
      p.recent_used_cpu = p.cpu;
      int cpu = select_task_rq(p, kWfFork);
      p.cpu = p.wake_cpu = cpu;
      set_task_rq(p, cpu);
      Rq& rq = *rqs_[cpu];
      update_rq_clock(rq);
      class_of(p).task_fork(p);
      // post_init_entity_util_avg(): fair tasks start from the rq's util;
      // others only take the current PELT time. 6.1 and 6.6 multiply by
      // se->load.weight, which is scale_load()ed (x 1024 on 64-bit) while
      // the cfs_rq's load_avg is not, so the share nearly always exceeds the
      // cap: the task starts at half the spare capacity. 6.12 uses se_weight().
      if (p.sched_class == SchedClassId::kFair)
        post_init_entity_util_avg(p.se.avg, p.se.cfs_rq->avg,
                                  version_.post_init_scale_load ? p.se.weight << kSchedFixedpointShift : p.se.weight,
                                  rq.capacity);
      else
        p.se.avg.last_update_time = rq.pelt.rq_clock_pelt();
      for (auto* o : observers_) o->on_task_new(now(), p);
      activate_task(rq, p, version_.new_task_enqueue_initial ? kEnqueueInitial : 0);
      for (auto* o : observers_) o->on_wakeup(now(), p, cpu);
      wakeup_preempt(rq, p, kWfFork);
      // wake_up_new_task() ends with the class's task_woken() too (an RT
      // child that cannot preempt here is pushed, from the parent's CPU).
      class_of(p).task_woken(rq, p);
      break;
    }
    case Ev::kWakeStart: {
      // The waker's CPU finished its earlier wake-ups: this one starts,
      // unless another waker got there first.
      Task& p = *tasks_[arg];
      if (p.ttwu_start_at != now()) break;
      p.ttwu_start_at = Time::max();
      p.wake_pending = false;
      for (auto* o : observers_) o->on_waking(now(), p, p.last_waker, p.cpu);
      event_cpu_ = p.ttwu_from_cpu;
      ttwu_place(p, p.last_waker, p.ttwu_from_cpu, static_cast<int>(p.ttwu_wake_flags));
      break;
    }
    case Ev::kTtwuDone:
      // The CPU is through its wake-ups: on_instant_end() may idle it now.
      mark_resched(static_cast<int>(arg));
      break;
    case Ev::kWakeDeferred: {
      Task& p = *tasks_[arg];
      // The wake-list IPI reaching a CPU in an idle state (or in its
      // governor's run, interrupts off) is handled once the CPU runs again:
      // sched_ttwu_pending() enqueues after the exit latency, as
      // cpuidle_enter_state() enables interrupts only after ->enter().
      // Until then the task is on no run-queue (ttwu_pending still counts).
      if (const Time at = wake_list_handled_at(*rqs_[p.cpu]); at != now()) {
        sim_.post(at, kTierWake, this, tag(Ev::kWakeDeferred, p.index));
        break;
      }
      --rqs_[p.cpu]->ttwu_pending;
      if (p.wake_ipi) --rqs_[p.cpu]->wake_list_inflight;
      ipi_entry_if(p.wake_ipi, p.cpu);
      event_cpu_ = p.ttwu_enqueue_cpu;
      update_rq_clock(*rqs_[p.cpu]);
      ttwu_do_activate(*rqs_[p.cpu], p, static_cast<int>(p.ttwu_wake_flags), p.last_waker);
      // Its mask changed while it was TASK_WAKING (placed, not enqueued
      // yet) and left this CPU out: 6.12's affine_move_task() sends the
      // stopper, whose migration_cpu_stop() flushes the wake list first
      // and moves it. The model moves it as it lands, to the destination
      // sched_setaffinity() left in wake_cpu (simplified: the caller did
      // not wait).
      if (!p.cpus_allowed[static_cast<size_t>(p.cpu)]) [[unlikely]]
        move_queued_task(p, p.wake_cpu);
      break;
    }
    case Ev::kResched: {
      // The IPI arrived: the flag set earlier is now acted on at the end of
      // this instant, or, by a CPU in an idle state, once it is out.
      event_cpu_ = static_cast<int>(arg);
      Rq& rq = *rqs_[arg];
      ipi_entry(rq.cpu);
      if (rq.cpuidle.gov && rq.curr->is_idle_task) idle_wake(rq, false);
      mark_resched(rq.cpu);
      break;
    }
    case Ev::kServer:
      // The fair server's dl_timer and inactive_timer are hrtimers pinned
      // to their CPU: their interrupt runs its soft-expired timers too.
      event_cpu_ = static_cast<int>(arg);
      hrtimer_interrupt(event_cpu_);
      fair_server_timer(*rqs_[arg]);
      break;
    case Ev::kServerInactive:
      event_cpu_ = static_cast<int>(arg);
      hrtimer_interrupt(event_cpu_);
      fair_server_inactive_timer(*rqs_[arg]);
      break;
    case Ev::kIlb: {
      event_cpu_ = static_cast<int>(arg);
      // The kick IPI reaches the chosen idle CPU, which takes its flags.
      Rq& ilb = *rqs_[arg];
      if (irq_waits_for_idle_exit(ilb, ilb.ilb_kick)) break;
      ipi_entry(ilb.cpu);
      const unsigned flags = ilb.ilb_flags;
      ilb.ilb_flags = 0;
      ilb.newilb_kick = false;  // nohz_csd_func() clears NOHZ_NEWILB_KICK too
      // nohz_csd_func(): only a CPU still idle runs the balance softirq.
      if (cpu_idle(ilb.cpu)) nohz_idle_balance(ilb.cpu, flags);
      break;
    }
    case Ev::kIdleStep:
      event_cpu_ = static_cast<int>(arg);
      idle_step(*rqs_[arg]);
      break;
    case Ev::kActiveBalance:
      event_cpu_ = static_cast<int>(arg);
      ipi_entry_if(rqs_[arg]->active_balance_ipi, static_cast<int>(arg));
      active_balance_cpu_stop(*rqs_[arg]);
      break;
    case Ev::kIrqWork: {
      // The IPI wakes the CPU if it idles; the hard interrupt runs the work.
      event_cpu_ = static_cast<int>(arg);
      Rq& rq = *rqs_[arg];
      if (irq_waits_for_idle_exit(rq, rq.irq_work)) break;
      ipi_entry_if(rq.irq_work_ipi, rq.cpu);
      update_rq_clock(rq);
      classes_[static_cast<size_t>(SchedClassId::kRt)]->irq_work(rq);
      break;
    }
    case Ev::kSugovIrqWork: {
      event_cpu_ = static_cast<int>(arg);
      Rq& rq = *rqs_[arg];
      if (irq_waits_for_idle_exit(rq, rq.sugov_irq_work)) break;
      sugov_irq_work(rq);
      break;
    }
    case Ev::kIdleGovTimer: {
      // qcom-cpu-lpm's prediction timer (histtimer_fn(): marks the
      // history) or bias timer (bit 32: nothing); its interrupt woke the
      // CPU if it idled.
      event_cpu_ = static_cast<int>(arg & 0xffffffff);
      Rq& rq = *rqs_[static_cast<size_t>(event_cpu_)];
      hrtimer_interrupt(event_cpu_);
      rq.cpuidle.gov->timer_expired((arg >> 32) != 0);
      break;
    }
    case Ev::kClusterGovTimer: {
      // qcom-cpu-lpm's cluster timer (clusttimer_fn()) on the CPU that armed it.
      CpuidleDomain& d = idle_domains_[arg];
      event_cpu_ = d.qcom_timer_cpu;
      hrtimer_interrupt(event_cpu_);
      d.qcom->timer_expired();
      break;
    }
    case Ev::kClusterPowerOn:
      qcom_cluster_power_on(idle_domains_[arg]);
      break;
    case Ev::kClockEvent:
      // The local timer interrupt for the next hrtimer: the CPU wakes; the
      // expired hrtimers' own events follow in this instant. A timer
      // cancelled or moved since it was programmed wakes the CPU all the
      // same: a CPU in an idle state cannot cancel its own timers, and
      // remove_hrtimer() from another CPU skips the reprogramming ("the
      // interrupt event on this CPU is fired"), so hrtimer_interrupt()
      // finds nothing due and reprograms after the exit (6.12 hrtimer.c).
      event_cpu_ = static_cast<int>(arg);
      idle_wake(*rqs_[arg], false, true);
      break;
  }
  event_cpu_ = -1;
}

// ---------------------------------------------------------------- wake-up

// select_task_rq() (core.c): the class chooses only for a task allowed on
// more than one CPU (so a pinned wakee never reaches record_wakee()); a
// choice p may not use (the CPU it was forked on, outside its mask) goes to
// select_fallback_rq(): the first allowed CPU (one node here; every CPU is
// online and active), which is also cpumask_any() of a pinned task.
int Kernel::select_task_rq(Task& p, int wake_flags) {
  auto first_allowed = [&p] { return static_cast<int>(p.cpus_allowed._Find_first()); };
  if (p.nr_cpus_allowed == 1) {
    note_why("allowed on one CPU");
    return first_allowed();
  }
  const int cpu = class_of(p).select_task_rq(p, p.wake_cpu, wake_flags);
  if (p.cpus_allowed[static_cast<size_t>(cpu)]) return cpu;
  note_why("the class's choice is outside the affinity mask: the first allowed CPU");
  return first_allowed();
}

void Kernel::set_task_cpu(Task& p, int cpu) {
  p.wake_cpu = cpu;  // __set_task_cpu()
  if (p.cpu == cpu) return;
  for (auto* o : observers_) o->on_migrate(now(), p, p.cpu, cpu);
  set_task_rq(p, cpu);
  p.cpu = cpu;
}

void Kernel::activate_task(Rq& rq, Task& p, int flags) {
  if (walt_hyst_) [[unlikely]]
    walt_update_busy_hyst(rq, 1);  // enqueue_task()'s android_rvh_enqueue_task
  if (version_.uclamp_inc_before_enqueue) uclamp_rq_inc(rq, p, flags);  // 6.1/6.6/6.18 (see enqueue_task())
  class_enqueue(rq, p, flags);
  p.on_rq = true;
  add_nr_running(rq, p);
  // enqueue_task_fair()'s dl_server_start() (in 6.12 its cpufreq kick sees
  // p's util, not yet its clamps).
  fair_server_update_active(rq);
  // enqueue_task_fair() checks the overutilized flag only for a wake-up
  // (task_new = !(flags & ENQUEUE_WAKEUP): not for a new task, whose util
  // is a guess, nor for a migration or a class change). It runs inside
  // the class's enqueue, so in 6.12 before core.c's uclamp_rq_inc(): the
  // rq's clamps do not include p yet.
  if (p.sched_class == SchedClassId::kFair && (flags & kEnqueueWakeup)) check_update_overutilized_status(rq);
  if (!version_.uclamp_inc_before_enqueue) uclamp_rq_inc(rq, p);
}

// __block_task() (6.12 sched.h): a task blocked in io_schedule() counts in
// this rq's nr_iowait until its wake-up.
void Kernel::block_task(Rq& rq, Task& p) {
  if (p.in_iowait) ++rq.nr_iowait;
  p.on_rq = false;
  sub_nr_running(rq, p);
  fair_server_update_active(rq);
}

// try_to_wake_up() (kernel/sched/core.c).
bool Kernel::try_to_wake_up(Task& p, const Task* waker, int from_cpu, int wake_flags) {
  if (!stall_activity_.empty()) [[unlikely]] note_stall_activity(p);
  if (p.state == TaskState::kRunning || p.state == TaskState::kNew || p.state == TaskState::kDead) return false;
  if (p.wake_pending) {
    if (p.ttwu_start_at == Time::max()) return false;  // already TASK_WAKING
    // Its waker's CPU has not reached that call yet: p still sleeps, and
    // this waker gets there first (the queued call will find it awake).
    p.ttwu_start_at = Time::max();
    p.wake_pending = false;
  }
  // A CPU runs its try_to_wake_up() calls one after another, each taking
  // kernel.overheads.wakeup: one issued while the CPU is still in an
  // earlier one starts (sched_waking, then select_task_rq()) when that one
  // ends, so it sees the earlier wakee placed (and, locally, enqueued).
  // Simplification: the waker's own work is not delayed by these costs.
  if (!p.on_rq && from_cpu >= 0 && params_.wakeup_cost > Time::zero()) {
    Rq& w = *rqs_[from_cpu];
    const bool queued = w.ttwu_busy_until > now();
    if (queued) {
      p.wake_pending = true;
      p.ttwu_start_at = w.ttwu_busy_until;
      p.ttwu_from_cpu = from_cpu;
      p.ttwu_wake_flags = static_cast<uint64_t>(wake_flags);
      p.last_waker = waker;
      sim_.post_in(w.ttwu_busy_until - now(), kTierWake, this, tag(Ev::kWakeStart, p.index));
      w.ttwu_busy_until += params_.wakeup_cost;
    } else {
      w.ttwu_busy_until = now() + params_.wakeup_cost;
    }
    // Until then the CPU is in try_to_wake_up(), neither idle to the
    // scheduler (cpu_idle()) nor to cpuidle (do_idle() waits).
    if (w.cpuidle.gov) w.ttwu_done.arm(w.ttwu_busy_until);
    if (queued) return true;
  }
  for (auto* o : observers_) o->on_waking(now(), p, waker, p.cpu);
  p.last_waker = waker;
  if (p.on_rq) {
    // ttwu_runnable(): still queued, either blocked in this very instant
    // before __schedule() ran, or sched_delayed (DELAY_DEQUEUE). It wakes
    // where it is, without select_task_rq(), all on the waking CPU: a
    // resched of p's CPU from another one (the fair server's start in the
    // requeue, wakeup_preempt()) is by IPI. (A timer's or interrupt's
    // wake-up, from_cpu < 0, is modelled on p's CPU.)
    int saved_event_cpu = event_cpu_;
    Rq& rq = *rqs_[p.cpu];
    event_cpu_ = from_cpu >= 0 ? from_cpu : p.cpu;
    update_rq_clock(rq);
    const char* const runnable_why = p.se.sched_delayed
                                         ? "ttwu_runnable(): still queued (delayed dequeue): requeued where it is"
                                         : "ttwu_runnable(): still queued (blocking in this instant): stays";
    SL_DEBUG("{:.6f} ttwu {}-{} by {}: cpu{} ({})", now().to_s(), p.comm, p.pid, waker ? waker->comm : "irq", p.cpu,
             runnable_why);
    count_decision(Decision::kPlacement, p.group, runnable_why);
    if (p.se.sched_delayed) enqueue_task(rq, p, kEnqueueDelayed);
    p.state = TaskState::kRunning;
    for (auto* o : observers_) o->on_wakeup(now(), p, p.cpu);
    if (!p.on_cpu) wakeup_preempt(rq, p, wake_flags);
    event_cpu_ = saved_event_cpu;
    return true;
  }
  ttwu_place(p, waker, from_cpu, wake_flags);
  return true;
}

// The rest of try_to_wake_up(): select_task_rq(), then the enqueue, at once
// or (wake-up cost, IPI) later.
void Kernel::ttwu_place(Task& p, const Task* waker, int from_cpu, int wake_flags) {
  int saved_event_cpu = event_cpu_;
  int prev_cpu = p.cpu;
  // select_task_rq_fair()'s smp_processor_id() is the CPU running this
  // try_to_wake_up(), also for a wake-up from a timer or an interrupt
  // (which the model runs outside any CPU's event).
  if (from_cpu >= 0) event_cpu_ = from_cpu;
  why_ = nullptr;
  int cpu = select_task_rq(p, wake_flags | kWfTtwu);
  event_cpu_ = saved_event_cpu;
  const char* const placed = why_ ? why_ : "its class's select_task_rq()";
  SL_DEBUG("{:.6f} ttwu {}-{} by {}: cpu{} -> cpu{} ({})", now().to_s(), p.comm, p.pid, waker ? waker->comm : "irq",
           prev_cpu, cpu, placed);
  count_decision(Decision::kPlacement, p.group, placed);
  bool migrated = cpu != prev_cpu;
  if (migrated) {
    // try_to_wake_up(): leaving the CPU it blocked on, p's I/O wait ends
    // there.
    if (p.in_iowait) --rqs_[static_cast<size_t>(prev_cpu)]->nr_iowait;
    class_of(p).migrate_task_rq(p, cpu);
    set_task_cpu(p, cpu);
  }
  Time delay = params_.wakeup_cost;
  // ttwu_queue() (6.1-6.18 core.c): ttwu_queue_cond() sends a remote
  // wake-up to the target's wake list, completed there by the scheduler
  // IPI, when the two CPUs share no cache (cpus_share_cache(): sd_llc_id)
  // or the target runs nothing (nr_running == 0; a running active-balance
  // stopper counts, as the stop class's enqueue does). A busy target in the
  // waker's LLC is enqueued directly by the waking CPU, and a preemption
  // it causes reaches that CPU by resched_curr()'s IPI.
  const bool remote = from_cpu >= 0 && from_cpu != cpu;
  // With TTWU_QUEUE off (Pixel's vendor module clears it at load:
  // vh_sched_init(), drivers/soc/google/vh/kernel/sched/init.c) every
  // remote wake-up is a direct enqueue by the waker.
  const bool wake_list = remote && features_(SchedFeat::kTtwuQueue) &&
                         (llc_id_[static_cast<size_t>(from_cpu)] != llc_id_[static_cast<size_t>(cpu)] ||
                          (rqs_[cpu]->nr_running == 0 && !rqs_[cpu]->stopper_ran));
  if (wake_list) delay += params_.ipi_latency;
  // try_to_wake_up()'s flags reach the enqueue and wakeup_preempt(): WF_TTWU,
  // and WF_RQ_SELECTED when the class chose the CPU (select_task_rq(): more
  // than one allowed CPU), with the caller's (WF_SYNC); through the wake
  // list only whether it migrated (sched_ttwu_pending():
  // p->sched_remote_wakeup). (6.18's wakeup_preempt() reads WF_SYNC.)
  const int ttwu_flags = wake_list ? 0 : wake_flags | kWfTtwu | (p.nr_cpus_allowed > 1 ? kWfRqSelected : 0);
  p.ttwu_wake_flags = static_cast<uint64_t>(ttwu_flags | (migrated ? kEnqueueMigrated << 8 : 0));
  // A wake-list entry completes on the target; a direct remote enqueue is
  // the waking CPU's work (so its resched is an IPI).
  p.ttwu_enqueue_cpu = remote && !wake_list ? from_cpu : cpu;
  // An IPI with no latency reaches the target now (as at Ev::kWakeDeferred).
  const Time enqueue_at = wake_list && delay == Time::zero() ? wake_list_handled_at(*rqs_[cpu]) : now() + delay;
  // __smp_call_single_queue(): the IPI goes out only when the target's
  // queue was empty (one IPI flushes the entries queued behind it).
  if (wake_list && rqs_[cpu]->wake_list_inflight == 0) ipi_raise(cpu);
  if (enqueue_at > now()) {
    p.wake_pending = true;
    p.wake_ipi = wake_list;
    if (wake_list) ++rqs_[cpu]->wake_list_inflight;
    // The kernel's direct enqueue has no window (the waker holds the
    // target's rq lock); the model's, the wake-up cost long, counts as
    // pending so the target is not idle to others meanwhile.
    ++rqs_[cpu]->ttwu_pending;
    sim_.post(enqueue_at, kTierWake, this, tag(Ev::kWakeDeferred, p.index));
  } else {
    if (wake_list && rqs_[cpu]->wake_list_inflight == 0) ipi_entry(cpu);
    event_cpu_ = p.ttwu_enqueue_cpu;
    update_rq_clock(*rqs_[cpu]);
    ttwu_do_activate(*rqs_[cpu], p, static_cast<int>(p.ttwu_wake_flags), waker);
    event_cpu_ = saved_event_cpu;
  }
}

Time Kernel::wake_list_handled_at(Rq& target) {
  if (!target.cpuidle.gov || !target.curr->is_idle_task) return now();
  const int saved_event_cpu = event_cpu_;
  event_cpu_ = target.cpu;
  const Time at = irq_handled_at(target);
  event_cpu_ = saved_event_cpu;
  return at;
}

void Kernel::ttwu_do_activate(Rq& rq, Task& p, int flags, const Task* waker) {
  // ttwu_do_activate() (6.12 core.c): the idle period that ends feeds
  // rq->avg_idle (update_avg(): avg += (sample - avg) / 8), then capped at
  // twice rq->max_idle_balance_cost.
  if (rq.idle_stamp != Time::max()) {
    int64_t delta = (now() - rq.idle_stamp).count();
    const int64_t max = 2 * rq.max_idle_balance_cost;
    rq.avg_idle += (delta - rq.avg_idle) / 8;
    if (rq.avg_idle > max) rq.avg_idle = max;
    rq.idle_stamp = Time::max();
  }
  int enqueue_flags = kEnqueueWakeup | ((flags >> 8) & kEnqueueMigrated);
  // Not migrated: its I/O wait ends on this CPU, where it began.
  if (p.in_iowait && !(enqueue_flags & kEnqueueMigrated)) --rq.nr_iowait;
  p.wake_pending = false;
  activate_task(rq, p, enqueue_flags);
  p.state = TaskState::kRunning;
  for (auto* o : observers_) o->on_wakeup(now(), p, rq.cpu);
  wakeup_preempt(rq, p, flags & 0xff);
  class_of(p).task_woken(rq, p);
}

Time Kernel::timer_list_fire_time(Time delay) const {
  // LVL_CLK_SHIFT 3, LVL_BITS 6, LVL_DEPTH 9 above HZ=100 (8 at 100).
  constexpr int kLvlClkShift = 3;
  const int depth = params_.hz > 100 ? 9 : 8;
  auto lvl_start = [](int n) -> int64_t { return int64_t{63} << ((n - 1) * kLvlClkShift); };
  const __int128 ticks = (static_cast<__int128>(delay.count()) * params_.hz + 999'999'999) / 1'000'000'000;
  const int64_t clk = jiffies();
  int64_t delta = static_cast<int64_t>(std::min<__int128>(ticks, lvl_start(depth)));
  int lvl = 0;
  while (lvl < depth - 1 && delta >= lvl_start(lvl + 1)) ++lvl;
  // Past the wheel's capacity: expires at its limit, WHEEL_TIMEOUT_MAX.
  if (delta >= lvl_start(depth)) delta = lvl_start(depth) - (int64_t{1} << ((depth - 1) * kLvlClkShift));
  const int64_t expires = clk + delta;
  const int shift = lvl * kLvlClkShift;
  const int64_t bucket_expiry = ((expires >> shift) + 1) << shift;
  return Time::ns(bucket_expiry * tick_nsec_.count());
}

void Kernel::irq_work_queue_on(int cpu) {
  Rq& rq = *rqs_[static_cast<size_t>(cpu)];
  rq.irq_work.arm(now() + (cpu == event_cpu_ ? Time::zero() : params_.ipi_latency));
  if (cpu != event_cpu_) {
    rq.irq_work_ipi = true;
    ipi_raise(cpu);  // irq_work_queue_on(): arch_send_call_function_single_ipi()
  }
}

void Kernel::move_queued_task(Task& p, int dst_cpu) {
  detach_task(p, dst_cpu);
  attach_task(p);
}

void Kernel::detach_task(Task& p, int dst_cpu) {
  Rq& src = *rqs_[p.cpu];
  int saved = event_cpu_;
  event_cpu_ = src.cpu;
  update_rq_clock(src);
  dequeue_task(src, p, kDequeueMigrating);
  p.on_rq = false;
  sub_nr_running(src, p);
  fair_server_update_active(src);
  set_task_cpu(p, dst_cpu);
  event_cpu_ = saved;
}

void Kernel::attach_task(Task& p) {
  Rq& dst = *rqs_[p.cpu];
  int saved = event_cpu_;
  // The kernel's caller (an RT push, the active-balance stopper, the nohz
  // idle balancer pulling for another idle CPU, a load balance on dst
  // itself) runs attach_task() on its own CPU: a preemption it causes on
  // dst, by the fair server's start in the enqueue (dl_server_start() ->
  // resched_curr()) or by wakeup_preempt(), reaches a remote dst by IPI.
  if (saved < 0) event_cpu_ = dst.cpu;
  update_rq_clock(dst);
  enqueue_task(dst, p, kEnqueueMigrated);
  p.on_rq = true;
  add_nr_running(dst, p);
  wakeup_preempt(dst, p, 0);
  event_cpu_ = saved;
}

// wakeup_preempt() (core.c): same class -> the class decides; a higher
// class -> preempt; a lower class never preempts.
void Kernel::wakeup_preempt(Rq& rq, Task& p, int wake_flags) {
  Task& curr = *rq.curr;
  const bool before = rq.need_resched || rq.need_resched_lazy;
  constexpr const char* kPending = "a reschedule was already pending";
  const char* why;      // the reason given in the log
  const char* verdict;  // the log's outcome
  const char* counted;  // --why's reason
  if (curr.is_idle_task) {
    resched_curr(rq);
    why = "cpu was idle";
    verdict = "preempt";
    counted = "the CPU was idle";
  } else if (p.sched_class == curr.sched_class) {
    why_ = nullptr;
    class_of(p).wakeup_preempt(rq, p, wake_flags);
    // No reason: the class returned at once because a reschedule is
    // already pending (test_tsk_need_resched()), which the verdict says.
    why = why_;
    verdict = before ? "resched already pending" : (rq.need_resched || rq.need_resched_lazy) ? "preempt" : "no preempt";
    counted = before || !why ? kPending : why;
  } else if (p.sched_class < curr.sched_class) {
    resched_curr(rq);
    why = "higher class";
    verdict = before ? "resched already pending" : "preempt";
    counted = before ? kPending : why;
  } else {
    // A lower class's wake-up does not preempt, whatever is pending (the
    // fair server's start, inside the enqueue, asks a running RT task to
    // pick again) -- unless that start found the server still serving
    // starved fair tasks (running, with budget): its pick preempts RT.
    const bool served = p.sched_class == SchedClassId::kFair && rq.fair_server.running;
    why = served ? "the fair server runs starved fair tasks above RT" : "lower class";
    verdict = served ? "preempt" : "no preempt";
    counted = why;
  }
  SL_DEBUG("{:.6f} cpu{} wakeup_preempt {}-{} (prio {}) vs curr {}-{} (prio {}): {}{}{}{}", now().to_s(), rq.cpu,
           p.comm, p.pid, p.prio, curr.comm, curr.pid, curr.prio, verdict, why ? " (" : "", why ? why : "",
           why ? ")" : "");
  count_decision(Decision::kPreemption, p.group, counted);
}

// resched_curr() (6.12 core.c): set TIF_NEED_RESCHED; a remote CPU learns
// of it by IPI (smp_send_reschedule(), after ipi_latency), unless it is
// idle and awake: its idle loop tests the flag (the governor's run ends in
// call_cpuidle()'s -EBUSY; an exit ends in schedule_idle()). An idle CPU
// in a state, or in the model's idle without cpuidle (arch_cpu_idle()'s
// WFI), sleeps until the IPI arrives. Another CPU's resched of an idle CPU
// still running its governor sets TIF_NEED_RESCHED before call_cpuidle()
// (set_nr_and_not_polling()), which then enters no state; a local one (a
// wake-list wake-up completes in the IPI's handler, after the state) does
// not.
void Kernel::resched_curr(Rq& rq) {
  mark_resched(rq.cpu);
  const bool remote = event_cpu_ >= 0 && event_cpu_ != rq.cpu;
  const bool by_ipi = remote && params_.ipi_latency > Time::zero();
  // smp_send_reschedule() goes out for a remote CPU whose TIF_NEED_RESCHED
  // was clear (arm64 has no polling idle); with no IPI latency, or to a CPU
  // that acts on the flag itself (an awake idle loop), it is handled at once.
  const bool sends_ipi = remote && !rq.need_resched;
  if (sends_ipi) ipi_raise(rq.cpu);
  if (rq.cpuidle.gov && rq.curr->is_idle_task) {
    if (remote && rq.cpuidle.phase == CpuidleDevice::Phase::kSelect) rq.cpuidle.need_resched_before_entry = true;
    if (by_ipi && rq.cpuidle.phase == CpuidleDevice::Phase::kIn) {
      if (!rq.resched_ipi.armed()) rq.resched_ipi.arm(now() + params_.ipi_latency);
    } else {
      // The local interrupt that ran the wake-up, or an awake idle loop.
      idle_wake(rq, false);
    }
  }
  if (!rq.need_resched) {
    rq.need_resched = true;
    // TIF_NEED_RESCHED is set before the IPI: a mutex spinner polling it
    // leaves its spin now (mutex_spin_on_owner()).
    if (rq.curr->mutex_spinning_on) [[unlikely]] rq.curr->mutex_spinning_on->spinner_need_resched(*rq.curr);
    if (by_ipi && (!rq.curr->is_idle_task || !rq.cpuidle.gov)) rq.resched_ipi.arm(now() + params_.ipi_latency);
  }
  if (sends_ipi && !rq.resched_ipi.armed()) ipi_entry(rq.cpu);
}

// resched_curr_lazy() (6.13+ PREEMPT_LAZY): fair-class preemption only sets
// TIF_NEED_RESCHED_LAZY, acted on at the next tick or return to user space,
// with no IPI. A local wake-up interrupting a user task returns to user
// space at once, so there it behaves like resched_curr().
void Kernel::resched_curr_lazy(Rq& rq) {
  if (params_.preempt != PreemptModel::kLazy || rq.curr->is_idle_task ||
      (event_cpu_ == rq.cpu && !rq.curr->kernel_thread)) {
    resched_curr(rq);
    return;
  }
  rq.need_resched_lazy = true;
  mark_resched(rq.cpu);
}

// ---------------------------------------------------------------- schedule

bool Kernel::can_preempt_now(const Rq& rq) const {
  const Task& curr = *rq.curr;
  // An idle CPU schedules once it is out of any idle state (or never
  // entered one: no cpuidle).
  // (Without cpuidle, it waits for a resched IPI in WFI.)
  if (curr.is_idle_task)
    return rq.cpuidle.phase == CpuidleDevice::Phase::kOff && (rq.cpuidle.gov || !rq.resched_ipi.armed());
  if (curr.act != Task::Act::kRun && curr.act != Task::Act::kRunWall) return true;  // voluntary
  if (rq.at_preempt_point) return true;
  // A task that took its own CPU out of its mask is switched out for the
  // stopper in every preemption model (preempt_enable(), or
  // wait_for_completion()'s might_resched() or schedule()), also when the
  // boundary it stopped at was reached inside a __schedule().
  if (rq.migration_stop_task == &curr && rq.migration_stop_waiter == &curr) return true;
  if (rq.resched_ipi.armed()) return false;  // the IPI has not arrived yet
  if (!rq.need_resched) return false;        // lazy only: wait for tick or boundary
  // PREEMPT_NONE/VOLUNTARY: kernel code is not preempted; it reaches
  // cond_resched() only at the end of its current action.
  if ((params_.preempt == PreemptModel::kNone || params_.preempt == PreemptModel::kVoluntary) && curr.kernel_thread)
    return false;
  return true;
}

bool Kernel::on_instant_end() {
  bool did = false;
  // A CPU whose __schedule() flags it again at once (its new current's next
  // action took no time and gives up the CPU: a yield) is walked again in
  // this same pass. Simulated time never moves meanwhile, so a task that
  // only yields would loop here forever: re-picked because it is alone, or
  // because the others may not run yet (EEVDF: ineligible; in the kernel
  // the yield syscalls themselves take the time that makes them eligible,
  // which the model does not charge). Counting these passes catches it.
  // Tasks on two CPUs that hand work to each other in no time (a binder
  // call without work) alternate CPUs: the passes are counted in total too.
  int last_cpu = -1, repeats = 0, passes = 0;
  const Task* last_curr = nullptr;
  // Only CPUs flagged during this instant (resched, block, yield, exit,
  // action boundary) can need a pick; walk them in CPU order.
  for (size_t w = 0; w < resched_mask_.size(); ++w) {
   while (resched_mask_[w]) {
    int bit = __builtin_ctzll(resched_mask_[w]);
    resched_mask_[w] &= resched_mask_[w] - 1;
    Rq& rq = *rqs_[w * 64 + static_cast<size_t>(bit)];
    const Task& curr = *rq.curr;
    bool voluntary = !curr.is_idle_task && curr.act != Task::Act::kRun && curr.act != Task::Act::kRunWall;
    bool want = voluntary || rq.need_resched || (rq.need_resched_lazy && rq.at_preempt_point);
    if (want && can_preempt_now(rq)) {
      if (rq.cpu != last_cpu) {
        last_cpu = rq.cpu;
        repeats = 0;
      } else if (++repeats > kMaxZeroTimeSteps) {
        // The previous pass ran either the same task (re-picked) or the
        // other one of two that keep handing the CPU to each other.
        fail_no_progress(now(), rq, *last_curr);
      }
      if (++passes > kMaxZeroTimeSteps) fail_no_progress(now(), rq, *last_curr, true);
      last_curr = &curr;
      schedule(rq);
      did = true;
    } else if (want) {
      // Not preemptible yet (IPI in flight, lazy, kernel code under
      // PREEMPT_NONE, an idle CPU still leaving its idle state): the
      // deciding event (IPI, tick, action end, exit latency over) flags it
      // again.
    }
    rq.at_preempt_point = false;
    // do_idle(): an idle CPU with nothing to run goes (back) into the
    // governor and an idle state.
    // Not while the CPU is still in try_to_wake_up() calls: the model's
    // waker may have blocked in the same instant, but in the kernel it is
    // busy waking until then (and a local wakee is enqueued by then).
    if (rq.cpuidle.gov && rq.curr->is_idle_task && rq.cpuidle.phase == CpuidleDevice::Phase::kOff &&
        !rq.need_resched && rq.ttwu_busy_until <= now()) {
      do_idle(rq);
      did = true;
    }
   }
  }
  return did;
}

void Kernel::note_stall_activity(const Task& p) {
  if (!p.is_idle_task && p.index < stall_activity_.size()) ++stall_activity_[p.index];
}

void Kernel::on_long_instant(Time at, bool again) {
  if (!again) {
    stall_activity_.assign(tasks_.size(), 0);
    return;
  }
  // The tasks most active in the probe's steps, busiest first.
  std::vector<size_t> order(tasks_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return stall_activity_[a] > stall_activity_[b]; });
  std::string who;
  for (size_t k = 0; k < order.size() && k < 3 && stall_activity_[order[k]] > 0; ++k)
    who += fmt::format("{}{} ({})", k ? ", " : "", tasks_[order[k]]->comm, stall_activity_[order[k]]);
  const std::string culprit = order.empty() || stall_activity_[order[0]] == 0 ? "" : tasks_[order[0]]->comm + " ";
  stall_activity_.clear();
  throw ModelError(fmt::format(
      "task {}makes no progress: at t={} time stops: {} events in a row take no simulated time (in the last {}, the "
      "busiest tasks by actions, switch-ins and wake-ups: {}). A task whose events all take no time (sleeps of 0, "
      "signals, lock and unlock, queue_work, binder calls without work, runtime PM calls without cost, ...) repeats "
      "them forever at one instant: give it a run event, or a sleep or timer of positive length",
      culprit, format_time(at), Simulator::kLongInstant, Simulator::kLongInstantProbe, who.empty() ? "none" : who));
}

const char* Kernel::intern_reason(std::string text) {
  auto& slot = interned_reasons_[text];
  if (!slot) slot = std::make_unique<std::string>(std::move(text));
  return slot->c_str();
}

std::vector<DecisionCount> Kernel::decision_counts() const {
  // Keyed by the reason strings' addresses while counting; by their text
  // here (the same words may sit at two sites).
  DecisionTally tally;
  for (const auto& [key, n] : decision_counts_) {
    const auto& [kind, group, why] = key;
    tally.add(kDecisionKinds[kind], *group, why ? why : "", n);
  }
  return tally.sorted();
}

Task* Kernel::pick_next_task(Rq& rq) {
  rq.fair_server_picked = false;
  // pick_task_dl(): the earliest deadline among the DL tasks and the fair
  // server (a DL entity too, above RT while it runs); on equal deadlines
  // the server, whose entity was queued first.
  Task* const dl_first = rq.dl.first;
  if (dl_first && (!rq.fair_server.running || dl_first->dl.deadline < rq.fair_server.deadline)) return dl_first;
  if (rq.fair_server.running) {
    if (Task* p = classes_[static_cast<size_t>(SchedClassId::kFair)]->pick_task(rq)) {
      rq.fair_server_picked = true;
      return p;
    }
    if (!fair_server_lazy_stop_ || rq.cfs.nr_running > 0) {
      rq.fair_server.running = false;  // nothing to serve: the server yields
    } else if (rq.nr_running != 0 || rq.curr->sched_class < SchedClassId::kFair) {
      // 6.17+: __pick_task_dl() finds the server with no fair task and
      // stops it -- only when the pick goes through the DL class, i.e.
      // not __pick_next_task()'s fair fast path (prev fair or idle, only
      // fair tasks queued): an idle CPU keeps a queued, empty server.
      fair_server_stop(rq);
    }
  }
  if (dl_first) return dl_first;  // the server had nothing to serve
  // __pick_next_task()'s fast path: with no RT task queued only the fair
  // class can have one (pick_task_rt() would return NULL), and
  // pick_task_idle() is rq->idle.
  if (rq.rt.rt_nr_running == 0) {
    if (Task* p = classes_[static_cast<size_t>(SchedClassId::kFair)]->pick_task(rq)) return p;
    return rq.idle;
  }
  for (SchedClassId id : {SchedClassId::kRt, SchedClassId::kFair, SchedClassId::kIdle})
    if (Task* p = classes_[static_cast<size_t>(id)]->pick_task(rq)) return p;
  return rq.idle;
}

// __schedule() (core.c): account prev, dequeue it if it blocks, pick the
// next task class by class, switch.
void Kernel::schedule(Rq& rq) {
  int saved = event_cpu_;
  event_cpu_ = rq.cpu;
  rq.in_schedule = true;
  ++rq.sched_count;
  update_rq_clock(rq);
  account_progress(rq);
  // The work timer is re-keyed in place if the next task runs a timed
  // action, and cancelled after the switch otherwise.
  rq.work_rearmed = false;
  // A resched IPI still on its way is handled now (the model's schedule()
  // has already acted on it).
  if (rq.resched_ipi.armed()) {
    rq.resched_ipi.cancel();
    ipi_entry(rq.cpu);
  }
  // A migration stopper woken by a sched_setaffinity() of the task
  // running here (by itself or another task) is picked first (the stop
  // class): it switches curr out and moves the task, and this
  // __schedule() goes on as the stopper's (prev is its stand-in).
  if (rq.migration_stop_task) [[unlikely]] migration_cpu_stop(rq);
  Task& prev = *rq.curr;
  update_curr(rq);
  TaskState prev_state = TaskState::kRunning;
  if (!prev.is_idle_task && prev.state != TaskState::kRunning) {
    prev_state = prev.state;
    deactivate_blocking(rq, prev);
  }
  // After an active balance the stopper is prev (the model switched to
  // the idle task in its place): the stop class is above every other, so
  // all of them may balance, RT pulling (need_pull_rt_task() sees prio 0)
  // and fair balancing as newly idle.
  Task& balance_prev = rq.stopper_ran ? stop_task_ : prev;
  // __pick_next_task()'s fast path applies when prev is fair (or idle)
  // and only fair tasks are queued: pick_next_task_fair().
  const bool fair_fast_path = balance_prev.sched_class >= SchedClassId::kFair && rq.nr_running == rq.cfs.h_nr_running;
  // put_prev_task_balance() / prev_balance(): from prev's class down, a
  // class may pull work; the walk stops at the first class with something
  // to run.
  for (SchedClassId id : {SchedClassId::kDeadline, SchedClassId::kRt, SchedClassId::kFair})
    if (id >= balance_prev.sched_class && classes_[static_cast<size_t>(id)]->balance(rq, balance_prev)) break;
  // 6.1/6.6 have no SM_IDLE: schedule_idle() is __schedule(SM_NONE), so an
  // idle CPU rescheduled with nothing queued still picks, through
  // pick_next_task_fair()'s idle: label and its newidle_balance() (6.6.63
  // core.c, fair.c). 6.12+ goes back to idle without a pick.
  if (version_.repick_is_a_full_pick && balance_prev.is_idle_task && rq.nr_running == 0)
    classes_[static_cast<size_t>(SchedClassId::kFair)]->balance(rq, balance_prev);
  int fair_queued = rq.cfs.nr_running;
  Task* next = pick_next_task(rq);
  // pick_next_task_fair(): a fair pick that comes back empty although fair
  // tasks were queued (every one was delayed, and the pick dequeued it for
  // good) goes to newidle balance ("goto idle"), and picks again after
  // each pull (a pulled task may be a delayed one too).
  while (fair_fast_path && next->is_idle_task && fair_queued > 0 && sched_balance_newidle(rq)) {
    fair_queued = rq.cfs.nr_running;
    next = pick_next_task(rq);
  }
  // pick_next_task_fair()'s "rq is about to be idle": the lost-idle-time
  // test and the PELT clock sync (update_idle_rq_clock_pelt()), after the
  // newidle balance. Only on the fast path: a switch to idle from an RT,
  // deadline or stop prev picks fair through __pick_next_task_fair(),
  // which passes no rq_flags, and pick_next_task_fair() returns before
  // the test (6.6/6.12; 6.1 syncs there too, after prev's put, below);
  // the clock then syncs, with no lost idle time, at the idle
  // rq's next update_rq_clock() (update_rq_clock_pelt()). An idle CPU
  // that picks idle again does not pick at all (6.12+ __schedule()'s
  // SM_IDLE); 6.1/6.6 pick (their newidle pass ran above) and sync, which
  // changes nothing on an idle rq whose clock is synced already.
  // 6.18 syncs in set_next_task_idle() instead (below).
  const bool sync_in_set_next_idle = version_.idle_pelt_sync_in_set_next_idle;
  if (!sync_in_set_next_idle && fair_fast_path && next->is_idle_task && next != &prev)
    update_idle_rq_clock_pelt(rq);
  // Off the fast path, where the sync comes after prev's put: 6.18's
  // set_next_task_idle(), 6.1's rf-less pick_next_task_fair().
  const bool sync_after_put =
      sync_in_set_next_idle || (version_.idle_pelt_sync_without_rf && !fair_fast_path);
  // clear_tsk_need_resched(prev) comes after the pick (6.1, 6.12 and 6.18
  // __schedule()): a reschedule raised while balancing for this pick (a
  // pulled task's wakeup_preempt()) is answered by the pick itself and
  // must not cost a second __schedule(). The balance callbacks below run
  // after the switch, so a resched they raise stands.
  rq.need_resched = rq.need_resched_lazy = false;
  if (next != &prev) {
    if (fair_fast_path) rq.fair_server_picked = false;  // pick_next_task_fair() picked, not the server
    class_of(prev).put_prev_task(rq, prev, next);
    if (sync_after_put && next->is_idle_task) update_idle_rq_clock_pelt(rq);
    class_of(*next).set_next_task(rq, *next, true);
    switch_to(rq, prev, *next, prev_state);
  } else if (version_.repick_is_a_full_pick && next->sched_class == SchedClassId::kFair) {
    // 6.1/6.6 pick_next_task_fair()'s done: runs for prev picked again too.
    cfs_tasks_move_to_head(*next);  // list_move() to rq->cfs_tasks' head
    update_misfit_status(*this, rq, next);
  } else if (version_.repick_is_a_full_pick && next->sched_class == SchedClassId::kRt) {
    // 6.1/6.6: put_prev_task_balance() put prev before pick_next_task_rt()
    // set it again as first; the balance callback below runs.
    class_of(prev).put_prev_task(rq, prev, next);
    class_of(*next).set_next_task(rq, *next, true);
  }
  // An idle CPU left its idle loop for this schedule_idle(): do_idle()'s
  // tick_nohz_idle_exit() restarted a stopped tick first (6.12
  // kernel/sched/idle.c, kernel/time/tick-sched.c
  // tick_nohz_restart_sched_tick()), so when it picks idle again (a wakee
  // pulled away before it got here, a reschedule with nothing queued) its
  // next do_idle() pass and governor see a running tick. It stays in
  // nohz.idle_cpus_mask (only a busy tick takes it out). Without cpuidle
  // the pass below stops the tick again at once; the model's idle state
  // there never restarted it.
  if (next == &prev && prev.is_idle_task && !rq.stopper_ran && rq.cpuidle.gov && rq.cpuidle.tick_stopped) {
    arm_tick(rq);
    rq.cpuidle.tick_stopped = false;
  }
  // The stopper's __schedule() is done: from here on the CPU runs what it
  // picked. The stopper was rq->curr until now, so only here does a CPU
  // whose stopper found nothing else to run go idle (the model's idle
  // task already stood in: no switch, but the idle entry).
  if (rq.stopper_ran) {
    rq.stopper_ran = false;
    if (next == &prev) {
      // The stop -> idle switch: 6.18's set_next_task_idle() syncs, and
      // 6.1's rf-less pick_next_task_fair().
      if (sync_after_put) update_idle_rq_clock_pelt(rq);
      enter_idle(rq);
    }
  }
  // The rq's balance callbacks (RT push) run once the switch is done.
  // Only set_next_task_rt(first) queues one (rt_queue_push_tasks(), 6.12
  // rt.c), i.e. only when this pick switched to an RT task (on 6.1/6.6
  // also when it picked an RT prev again), and only with pushable RT
  // tasks (has_pushable_tasks()). A fair or idle pick (the fair server's,
  // a throttled rt_rq's) queues none: a push there would find the queued
  // RT task above curr and only ask for the pick that just chose curr
  // again.
  const bool set_rt_first = next != &prev || version_.repick_is_a_full_pick;
  if (set_rt_first && next->sched_class == SchedClassId::kRt && rq.rt.nr_pushable > 0)
    classes_[static_cast<size_t>(SchedClassId::kRt)]->balance_callback(rq);
  if (next != &prev)
    SL_DEBUG("{:.6f} cpu{} schedule: {}-{} -> {}-{} (prev_state {})", now().to_s(), rq.cpu, prev.comm, prev.pid,
             next->comm, next->pid, task_state_letter(prev_state));
  else
    SL_DEBUG("{:.6f} cpu{} schedule: {}-{} picked again (no switch)", now().to_s(), rq.cpu, prev.comm, prev.pid);
  continue_current(rq);
  if (!rq.work_rearmed) rq.work_timer.cancel();
  rq.in_schedule = false;
  event_cpu_ = saved;
}

// __schedule()'s block of a prev that is not TASK_RUNNING:
// sched_submit_work()'s hook, then the sleep dequeue (a fair task with
// negative lag stays queued, delayed) and block_task().
void Kernel::deactivate_blocking(Rq& rq, Task& prev) {
  if (prev.body) prev.body->on_sleeping(prev);
  int flags = kDequeueSleep | (prev.state == TaskState::kDead ? kDequeueSpecial : 0);
  if (dequeue_task(rq, prev, flags)) block_task(rq, prev);
}

void Kernel::switch_to(Rq& rq, Task& prev, Task& next, TaskState prev_state) {
  if (!stall_activity_.empty()) [[unlikely]] note_stall_activity(next);
  // Whether the CPU leaves idle and enters it is is_idle_task(rq->curr)
  // before and after the switch (Rq::idle_task_runs()): the idle task
  // standing in for the active-balance stopper (stopper_ran, set before
  // the switch to it, cleared after the switch from it) is the stopper,
  // which does neither.
  const bool leaves_idle = rq.idle_task_runs();
  // Without cpuidle the CPU leaves its single idle state here; with it,
  // cpu_idle -1 came when the exit latency ended (idle_exit_done()), or at
  // once if the CPU never entered a state since it went idle.
  if (leaves_idle) {
    if (!rq.cpuidle.gov)
      for (auto* o : observers_) o->on_cpu_idle(now(), rq.cpu, -1);
    else if (rq.cpuidle.reported != -1)
      emit_cpu_idle(rq.cpu, -1);
    fair_server_charge_idle(rq);  // put_prev_task_idle() -> dl_server_update_idle_time()
  }
  prev.on_cpu = false;
  next.on_cpu = true;
  rq.curr = &next;
  if (prev.mutex_spin_watch) [[unlikely]] mutex_spin_switched_out(prev);
  // Work counter: prev's progress was accounted by schedule().
  prev.progress_rate = nullptr;
  prev.progress_since = nullptr;
  for (auto* o : observers_) o->on_switch(now(), rq.cpu, prev, prev_state, next);
  if (!util_observers_.empty()) [[unlikely]] {
    const uint64_t util_cfs = cpu_util_cfs(rq), util_rt = rq.avg_rt.util_avg;
    for (auto* o : util_observers_) o->on_cpu_util(now(), rq.cpu, util_cfs, util_rt);
  }
  if (next.is_idle_task) {
    // (schedule() did pick_next_task_fair()'s PELT clock sync, where the
    // kernel does it.) For the stopper's stand-in, schedule() enters idle
    // if the stopper's __schedule() finds nothing else to run.
    if (rq.idle_task_runs()) {
      next.se.exec_start = now().count();  // set_next_task_idle()
      enter_idle(rq);
    }
  } else {
    if (leaves_idle) {
      arm_tick(rq);  // tick_nohz_idle_exit(): the tick restarts
      rq.cpuidle.tick_stopped = false;
    }
    rq.seg_start = now() + params_.context_switch_cost;
    // Work counter: next progresses at this rq's rate from seg_start.
    next.progress_rate = &rq.rate;
    next.progress_since = &rq.seg_start;
    next.switched_in = rq.seg_start;
  }
  if (prev.state == TaskState::kDead) {
    prev.act = Task::Act::kExited;
    class_of(prev).task_dead(prev);  // finish_task_switch()
  }
}

// The idle entry of a switch to the idle task (do_idle() and the nohz
// idle entry, tick_nohz_idle_enter()).
void Kernel::enter_idle(Rq& rq) {
  if (!rq.cpuidle.gov) {
    nohz_run_idle_balance(rq);  // do_idle()'s start
    // cpuidle_not_available(): tick_nohz_idle_stop_tick() on every pass,
    // which counts ts->idle_calls.
    ++rq.idle_calls;
    rq.tick_timer.cancel();  // nohz idle: the tick stops
    nohz_balance_enter_idle(rq);
    for (auto* o : observers_) o->on_cpu_idle(now(), rq.cpu, 0);
  } else {
    // With cpuidle, do_idle() runs at the end of this instant (the
    // governor decides about the tick).
    mark_resched(rq.cpu);
  }
}

// ---------------------------------------------------------------- execution

void Kernel::end_busy_wait(Task& p) {
  if (p.act != Task::Act::kRunWall || p.wall_end <= now()) return;
  p.wall_end = now();
  Rq& rq = *rqs_[static_cast<size_t>(p.cpu)];
  // Off its CPU, or inside its CPU's __schedule(): continue_current()
  // finds the wait over when p runs (the schedule() in progress owns
  // the CPU's work timer).
  if (!p.on_cpu || rq.in_schedule) return;
  account_progress(rq);
  arm_work_timer(rq);  // fires now: on_work_done() asks the body again
}

void Kernel::mutex_spin_switched_out(Task& prev) {
  prev.mutex_spin_watch = false;
  for (KernelMutex* m : kernel_mutexes_) m->switched_out(prev);
  for (KernelMutex* m : kernel_mutexes_)
    if (m->watches(prev)) prev.mutex_spin_watch = true;
}

void Kernel::account_progress(Rq& rq) {
  Task& p = *rq.curr;
  if (p.is_idle_task || (p.act != Task::Act::kRun && p.act != Task::Act::kRunWall)) return;
  p.accounted_at = now();  // work counter: the rate may change after this call (cpufreq)
  p.accounted_rate = rq.rate;
  if (now() > rq.seg_start) {
    unsigned __int128 done = static_cast<unsigned __int128>((now() - rq.seg_start).count()) * rq.rate >> 20;
    if (p.act == Task::Act::kRun) {
      // Work counter (Task::work_done): what was executed of this action.
      p.work_done += done >= static_cast<unsigned __int128>(p.work_left) ? p.work_left : static_cast<int64_t>(done);
      p.work_left = done >= static_cast<unsigned __int128>(p.work_left) ? 0 : p.work_left - static_cast<int64_t>(done);
    } else {
      // kRunWall (rt-app `runtime`): busy until a wall time; what it
      // executed meanwhile counts as work too.
      p.work_done += static_cast<int64_t>(done);
    }
    rq.seg_start = now();
  }
}

void Kernel::arm_work_timer(Rq& rq) {
  Task& p = *rq.curr;
  Time start = max(now(), rq.seg_start);
  if (p.act == Task::Act::kRun) {
    unsigned __int128 scaled = (static_cast<unsigned __int128>(p.work_left) << 20) + rq.rate - 1;
    // The same quotient by a 64-bit division when the dividend fits (it
    // nearly always does): no __udivti3 call.
    const uint64_t q = (scaled >> 64) == 0 ? static_cast<uint64_t>(scaled) / rq.rate
                                           : static_cast<uint64_t>(scaled / rq.rate);
    rq.work_timer.arm(start + Time::ns(static_cast<int64_t>(q)));
    rq.work_rearmed = true;
  } else if (p.act == Task::Act::kRunWall) {
    rq.work_timer.arm(max(p.wall_end, start));
    rq.work_rearmed = true;
  }
}

void Kernel::continue_current(Rq& rq) {
  Task& p = *rq.curr;
  if (p.is_idle_task) return;
  switch (p.act) {
    case Task::Act::kRun:
      if (p.work_left > 0) {
        arm_work_timer(rq);
        return;
      }
      break;
    case Task::Act::kRunWall:
      if (now() < p.wall_end) {
        arm_work_timer(rq);
        return;
      }
      break;
    case Task::Act::kExited:
      return;
    case Task::Act::kBlocked:
      p.in_iowait = false;  // io_schedule_finish()
      if (p.body) p.body->on_running(p);
      break;
    default:
      break;
  }
  advance_current(rq);
}

// The current action is complete: ask the body for the next ones until one
// takes time or gives up the CPU.
void Kernel::advance_current(Rq& rq) {
  Task& p = *rq.curr;
  mark_resched(rq.cpu);  // blocking, yielding or exiting needs __schedule()
  // Actions skipped because they take no time, by kind, for the message.
  bool empty_run = false, past_wall = false;
  for (int guard = 0;; ++guard) {
    if (!stall_activity_.empty()) [[unlikely]] note_stall_activity(p);
    if (guard > kMaxZeroTimeSteps)
      throw ModelError(fmt::format("task {} makes no progress: {} events in a row at t={} take no time ({}{}{})",
                                   p.comm, kMaxZeroTimeSteps, format_time(now()), empty_run ? "run of no work" : "",
                                   empty_run && past_wall ? ", " : "",
                                   past_wall ? "busy-wait to a time already past" : ""));
    Action a = p.body ? p.body->next(p) : Action::exit();
    switch (a.kind) {
      case Action::Kind::kRun:
        if (a.work <= 0) {
          empty_run = true;
          continue;
        }
        p.act = Task::Act::kRun;
        p.work_left = a.work;
        arm_work_timer(rq);
        return;
      case Action::Kind::kRunWall:
        if (a.until <= now()) {
          past_wall = true;
          continue;
        }
        p.act = Task::Act::kRunWall;
        p.wall_end = a.until;
        arm_work_timer(rq);
        return;
      case Action::Kind::kBlock:
        p.act = Task::Act::kBlocked;
        p.in_iowait = a.iowait;  // io_schedule_prepare()
        if (p.state == TaskState::kRunning) p.state = a.state;
        return;  // on_instant_end() runs __schedule()
      case Action::Kind::kYield:
        p.act = Task::Act::kYielded;
        class_of(p).yield_task(rq);
        return;
      case Action::Kind::kExit:
        p.act = Task::Act::kExited;
        p.state = TaskState::kDead;
        return;
      case Action::Kind::kReturnToUser:
      case Action::Kind::kPreemptPoint:
      case Action::Kind::kSchedule: {
        // Return to user space reads TIF_NEED_RESCHED(_LAZY) itself;
        // preempt_enable() reads the need-resched bit of the preempt count,
        // which a remote CPU's resched reaches only with its IPI
        // (scheduler_ipi() folds it in), and only a preemptible kernel
        // schedules there; an explicit schedule() reads TIF_NEED_RESCHED.
        const bool kernel_preemptible =
            params_.preempt == PreemptModel::kFull || params_.preempt == PreemptModel::kLazy;
        const bool schedules = a.kind == Action::Kind::kReturnToUser ? rq.need_resched || rq.need_resched_lazy
                               : a.kind == Action::Kind::kSchedule
                                   ? rq.need_resched
                                   : rq.need_resched && !rq.resched_ipi.armed() && kernel_preemptible;
        if (!schedules) continue;
        // Preempted at the boundary: a run of no work left, so that
        // continue_current() asks the body again once p is picked (at
        // once if it is picked again in this pass).
        rq.at_preempt_point = true;
        p.act = Task::Act::kRun;
        p.work_left = 0;
        return;
      }
    }
  }
}

void Kernel::on_work_done(Rq& rq) {
  Task& p = *rq.curr;
  mark_resched(rq.cpu);
  // Work counter: the action's remaining work (kRun; the timer was armed
  // for it, rounded up), or what ran since the last accounting (kRunWall).
  if (p.act == Task::Act::kRun) {
    p.work_done += p.work_left;
  } else if (p.act == Task::Act::kRunWall && now() > rq.seg_start) {
    p.work_done += static_cast<int64_t>(static_cast<unsigned __int128>((now() - rq.seg_start).count()) * rq.rate >> 20);
  }
  if (p.act == Task::Act::kRun || p.act == Task::Act::kRunWall) {
    p.accounted_at = now();
    p.accounted_rate = rq.rate;
  }
  if (p.act == Task::Act::kRun) p.work_left = 0;
  rq.seg_start = now();
  rq.at_preempt_point = true;  // syscall / cond_resched() boundary
  advance_current(rq);
}

// ---------------------------------------------------------------- tick

void Kernel::arm_tick(Rq& rq) {
  // Ticks sit on the global jiffies grid (no sched_skew_tick).
  rq.tick_timer.arm(next_tick_after(now()));
}

// sched_tick() (core.c, 6.12 name; scheduler_tick() before).
void Kernel::scheduler_tick(Rq& rq) {
  Task& curr = *rq.curr;
  // The idle task standing in for the active-balance stopper is the
  // stopper here: a busy CPU's tick, with nothing for the stop class to
  // do (task_tick_stop() is empty).
  // hrtimer_interrupt(): with the tick's handler, the range timers whose
  // soft expiry has come (their events follow in this instant); a CPU in
  // the idle loop runs them in idle_tick(), once out of its idle state.
  const bool idle_loop_tick = rq.idle_task_runs() && rq.cpuidle.gov;
  if (!idle_loop_tick) run_soft_expired_hrtimers(rq, now(), HrtimerIrq::kTick);
  if (rq.idle_task_runs()) {
    if (idle_loop_tick) idle_tick(rq);  // the governor kept the tick
    return;
  }
  const bool before = rq.need_resched || rq.need_resched_lazy;
  // sched_tick() (6.18.35): a lazy reschedule already pending becomes a
  // real one before task_tick(); one that this tick's task_tick() raises
  // waits for the next tick (a kernel thread's: a user task's tick
  // returns to user space and reschedules, resched_curr_lazy()).
  if (rq.need_resched_lazy) {
    rq.need_resched_lazy = false;
    rq.need_resched = true;
    if (curr.mutex_spinning_on) [[unlikely]] curr.mutex_spinning_on->spinner_need_resched(curr);
  }
  why_ = nullptr;
  class_of(curr).task_tick(rq, curr);
  // task_tick_fair() ends with check_update_overutilized_status().
  if (curr.sched_class == SchedClassId::kFair) check_update_overutilized_status(rq);
  if (!before && (rq.need_resched || rq.need_resched_lazy)) {
    const char* const why = why_ ? why_ : "its class asked";
    SL_DEBUG("{:.6f} cpu{} tick: {}-{} must reschedule{}: {}", now().to_s(), rq.cpu, curr.comm, curr.pid,
             rq.need_resched ? "" : " (lazily)", why);
    count_decision(Decision::kTick, curr.group, why);
  }
  sched_balance_trigger(rq);
  if (rq.need_resched) mark_resched(rq.cpu);
  arm_tick(rq);
}

void Kernel::update_curr(Rq& rq) { class_of(*rq.curr).update_curr(rq); }

// start_rt_bandwidth() (6.1/6.6 rt.c, without RT_GROUP_SCHED: every RT
// enqueue, and a throttling, calls it): an inactive period timer starts,
// hrtimer_forward_now(timer, 0) putting its expiry one hrtimer_resolution
// (1 ns, high resolution) after now. Its period is counted from there.
// do_start_rt_bandwidth() starts it HRTIMER_MODE_ABS_PINNED_HARD: on the
// CPU running the enqueue (or the throttling), and sched_rt_period_timer()
// re-arms it there (HRTIMER_RESTART). Queued on that CPU's hrtimer base:
// the CPU's next timer event (tick_nohz_get_sleep_length()) counts it, its
// expiry wakes the CPU from an idle state, and its interrupt runs the
// CPU's soft-expired range timers.
void Kernel::start_rt_bandwidth(int rq_cpu) {
  if (!rt_throttling_ || rt_period_active_ || params_.rt_runtime.count() < 0) return;
  rt_period_active_ = true;
  rt_period_cpu_ = event_cpu_ >= 0 ? event_cpu_ : rq_cpu;
  // hrtimer_forward_now(timer, 0): an expiry still ahead (the period the
  // handler forwarded to before it found RT idle) is kept; one passed (0
  // before the first start) moves to one hrtimer_resolution (1 ns) past now.
  if (rt_period_expires_ <= now()) rt_period_expires_ = now() + Time::ns(1);
  hrtimer_start(rt_period_timer_, rt_period_expires_, rt_period_cpu_);
}

// sched_rt_period_timer() -> do_sched_rt_period_timer() (6.1/6.6 rt.c):
// each CPU with RT runtime used or RT tasks queued gets one period's
// runtime back, and a throttled rt_rq with runtime left is unthrottled;
// one with RT tasks queued but no RT time is rescheduled (its running RT
// task is picked again); others are not touched. The timer forwards by one period, unless no
// CPU used RT runtime or has RT tasks (idle): then it stops until the next
// start_rt_bandwidth(). It runs on the timer's CPU: unthrottling another
// CPU reschedules it by IPI. hrtimer_forward_now() first moves the expiry
// by whole periods from the last one, not from now, so the timer keeps its
// grid when its interrupt is handled late (after an idle exit's latency);
// the periods it passed (the overrun, 1 unless a whole period late) are the
// runtime given back. The expiry moves even when RT turns out idle: a
// start_rt_bandwidth() before that new expiry keeps it.
void Kernel::rt_period_timer() {
  const int64_t period = params_.rt_period.count();
  const int64_t overrun = (now() - rt_period_expires_).count() / period + 1;
  rt_period_expires_ += Time::ns(period * overrun);
  const int64_t runtime = params_.rt_runtime.count();
  bool idle = true;
  for (auto& rqp : rqs_) {
    Rq& rq = *rqp;
    RtRq& rt = rq.rt;
    if (rt.rt_time == 0 && rt.rt_nr_running == 0) continue;
    update_rq_clock(rq);
    if (rt.rt_time > 0) {
      rt.rt_time -= std::min(rt.rt_time, overrun * runtime);
      if (rt.rt_throttled && rt.rt_time < runtime) {
        rt.rt_throttled = false;
        if (rt.rt_nr_running) {
          add_nr_running(rq, rt.rt_nr_running);  // enqueue_top_rt_rq()
          // sched_rt_rq_enqueue() -> enqueue_top_rt_rq(): "Kick cpufreq",
          // then resched_curr().
          cpufreq_update_util(rq, 0);
          resched_curr(rq);
        }
      }
      if (rt.rt_time > 0 || rt.rt_nr_running) idle = false;
    } else {
      idle = false;  // RT tasks queued
      // enqueue = 1 -> sched_rt_rq_enqueue(): the rt_rq is already queued
      // (enqueue_top_rt_rq() returns at rt_queued: no count, no cpufreq
      // kick), but its resched_curr() is unconditional -- in the
      // !CONFIG_RT_GROUP_SCHED build, GKI's (gki_defconfig does not set
      // it); RT_GROUP_SCHED's version reschedules only for a queued RT
      // priority above curr's. A throttled rt_rq always has RT time, so it
      // is never here.
      resched_curr(rq);
    }
  }
  if (idle)
    rt_period_active_ = false;
  else
    hrtimer_start(rt_period_timer_, rt_period_expires_, rt_period_cpu_);
}

// ---------------------------------------------------------------- PI

// The "change" pattern of rt_mutex_setprio(), __sched_setscheduler() and
// sched_move_task() (core.c, syscalls.c): a delayed (blocked) fair task
// that changes class is fully dequeued first (DEQUEUE_SLEEP |
// DEQUEUE_DELAYED); otherwise it stays delayed through the change. The
// running task is charged, the task dequeued with DEQUEUE_SAVE (|
// DEQUEUE_MOVE) and put back.
Kernel::SchedChange Kernel::sched_change_begin(Task& p, bool move, bool class_change) {
  SchedChange c{rqs_[p.cpu].get(), false, false, event_cpu_, move};
  Rq& rq = *c.rq;
  // The change runs on the caller's CPU (a PI boost by a waiter blocking
  // there, a sched_setattr() from another task): its resched of p's CPU
  // (the class's prio_changed()/switched_to(), the fair server's restart)
  // is by IPI when that is another CPU. Outside any CPU's event, p's.
  if (event_cpu_ < 0) event_cpu_ = p.cpu;
  // The rq clock first (rt_mutex_setprio(), __sched_setscheduler():
  // update_rq_clock(), then the delayed task's dequeue with
  // DEQUEUE_NOCLOCK), so its PELT update sees now.
  update_rq_clock(rq);
  if (class_change && p.se.sched_delayed) {
    dequeue_task(rq, p, kDequeueSleep | kDequeueDelayed);
    block_task(rq, p);
  }
  c.queued = p.on_rq;
  c.running = rq.curr == &p;
  if (c.running) {
    account_progress(rq);
    update_curr(rq);
  }
  if (c.queued) {
    dequeue_task(rq, p, kDequeueSave | (move ? kDequeueMove : 0));
    // dequeue_entities() stops the fair server when the CPU's last fair
    // task leaves, whatever the flags (up to 6.16): a property change of a
    // CPU's only fair task stops it here and sched_change_end()'s enqueue
    // starts it again (CBS check, resched; 6.12.19 fair.c, deadline.c).
    fair_server_update_active(rq);
  }
  if (c.running) class_of(p).put_prev_task(rq, p, nullptr);
  return c;
}

// ... and back: enqueue with ENQUEUE_RESTORE (| ENQUEUE_MOVE | `extra_flags`),
// set_next_task().
void Kernel::sched_change_end(Task& p, const SchedChange& c, int extra_flags) {
  Rq& rq = *c.rq;
  if (c.queued) enqueue_task(rq, p, kEnqueueRestore | (c.move ? kEnqueueMove : 0) | extra_flags);
  if (c.running) class_of(p).set_next_task(rq, p, false);
}

// rt_mutex_setprio() (core.c): change the effective priority of p, moving
// it between classes when it crosses the RT boundary.
void Kernel::rt_mutex_setprio(Task& p, int prio) {
  if (p.prio == prio) return;
  int old_prio = p.prio;
  SchedClassId old_class = p.sched_class;
  const SchedChange c = sched_change_begin(p, true, rt_prio(prio) != rt_prio(old_prio));
  for (auto* o : observers_) o->on_prio_change(now(), p, old_prio, prio, true);
  SL_DEBUG("{:.6f} pi: {}-{} prio {} -> {}", now().to_s(), p.comm, p.pid, old_prio, prio);
  p.prio = prio;
  p.sched_class = class_for(p);
  // Deboosting within RT queues at the head, so the task keeps its turn.
  sched_change_end(p, c, rt_prio(prio) && old_prio < prio ? kEnqueueHead : 0);
  check_class_changed(*c.rq, p, old_class, old_prio);
  event_cpu_ = c.saved_event_cpu;
}

// check_class_changed() (core.c): the old class lets go of p
// (switched_from), the new one takes it (switched_to); within one class a
// priority change goes to prio_changed. They decide preemption.
void Kernel::check_class_changed(Rq& rq, Task& p, SchedClassId old_class, int old_prio) {
  if (old_class != p.sched_class) {
    // The change's dequeue and enqueue went through the classes' own
    // counting: into or out of a throttled rt_rq, a queued task leaves or
    // joins rq->nr_running.
    if (p.on_rq && rq.rt.rt_throttled && (old_class == SchedClassId::kRt) != (p.sched_class == SchedClassId::kRt)) {
      if (p.sched_class == SchedClassId::kRt)
        --rq.nr_running;
      else
        add_nr_running(rq);
    }
    classes_[static_cast<size_t>(old_class)]->switched_from(rq, p);
    class_of(p).switched_to(rq, p);
  } else if (old_prio != p.prio) {
    class_of(p).prio_changed(rq, p, old_prio);
  }
}

}  // namespace schedlab
