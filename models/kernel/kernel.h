// The kernel model: per-CPU run-queues, the scheduling classes, the core
// paths of kernel/sched/core.c (try_to_wake_up, __schedule, scheduler_tick,
// rt_mutex_setprio) and the execution of task bodies on CPUs.
//
// Reschedules are deferred as in the kernel: an event sets a CPU's
// need-resched flag, and once every event of the instant has run each
// flagged CPU calls __schedule() once (the return from interrupt), in CPU
// order, so simultaneous wake-ups meet one pick.
#pragma once

#include <algorithm>
#include <array>
#include <bitset>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "models/hw/energy_model.h"
#include "models/hw/platform.h"
#include "models/kernel/cpufreq/governor.h"
#include "models/kernel/cpufreq/sugov_kthread.h"
#include "models/kernel/cpuidle/cpuidle.h"
#include "models/kernel/decisions.h"
#include "models/kernel/kernel_params.h"
#include "models/kernel/sched/pelt.h"
#include "models/kernel/sched/features.h"
#include "models/kernel/sched/kernel_versions.h"
#include "models/kernel/sched/sched_class.h"
#include "models/kernel/sched/task.h"
#include "models/kernel/task_body.h"
#include "sim/event_queue.h"
#include "sim/rng.h"
#include "sim/simulator.h"

namespace schedlab {

class KernelMutex;
class SchedPixelGovernor;

// Event priority tiers within one instant (lower runs first).
enum EventTier : int {
  // A task's work finishing "at" t happened before anything else at t: the
  // CPU executed up to t, then the interrupt or timer arrived.
  kTierWorkDone = 0,
  // The local timer interrupt of an idle CPU (the clock event programmed for
  // its next hrtimer): the CPU wakes before the expired hrtimers' handlers
  // run, as hrtimer_interrupt() runs them after the wake-up.
  kTierClockEvent = 5,
  // hrtimer expiries (sleeps, periodic timers): they wake tasks that the
  // tick at the same instant should already see queued.
  kTierTimer = 10,
  // The scheduler tick and the RT period timer.
  kTierTick = 20,
  // timer_list callbacks: TIMER_SOFTIRQ, run as the tick's hard interrupt
  // returns (run_timer_softirq()).
  kTierTimerSoftirq = 25,
  // Deferred wake-ups (wakeup cost, remote-wakeup IPIs) and task starts.
  kTierWake = 30,
};

struct CfsRq;
// A node of a CPU's leaf list (rq->leaf_cfs_rq_list, a circular list_head;
// the head's owner is null).
struct LeafListNode {
  LeafListNode* prev = nullptr;
  LeafListNode* next = nullptr;
  CfsRq* owner = nullptr;
};

// Fair run-queue (struct cfs_rq). Every task is in the root cpu cgroup
// today, so each CPU has one, Rq::cfs, whose entities are tasks; it holds
// SchedEntity pointers, and counts entities apart from tasks (nr_running
// vs h_nr_running), as the kernel does, so that group entities can join
// (docs/fair_group_sched.md).
struct CfsRq {
  std::vector<SchedEntity*> timeline;  // queued entities except curr ("the rbtree")
  // 6.6 only (KernelVersionInfo::pick_vruntime_tree): the same entities
  // in 6.6's vruntime-ordered tree, whose shape its pick_eevdf() reads.
  VruntimeTree vruntime_tree;
  SchedEntity* curr = nullptr;  // cfs_rq->curr: the running fair entity
  int64_t min_vruntime = 0;
  int64_t avg_vruntime = 0;     // sum over timeline of (vruntime - min_vruntime) * weight
  int64_t avg_load = 0;         // sum over timeline of weight
  uint64_t load_weight = 0;     // cfs_rq->load.weight (scaled by 1024): every on_rq entity, curr included
  int nr_running = 0;           // on_rq entities (curr and delayed included)
  int h_nr_running = 0;         // on_rq tasks at or below this level (delayed included)
  int h_nr_delayed = 0;         // sched_delayed tasks at or below this level
  int idle_h_nr_running = 0;    // idle tasks on_rq at or below this level (delayed included): SCHED_IDLE or below an idle level
  bool idle = false;            // cfs_rq->idle: the level of a cpu.idle group (cfs_rq_is_idle())
  SchedEntity* next = nullptr;  // buddies
  SchedEntity* last = nullptr;
  SchedEntity* skip = nullptr;
  uint64_t tree_seq = 0;
  SchedAvg avg;                 // cfs_rq->avg (PELT)
  RemovedLoad removed;          // cfs_rq->removed
  // CONFIG_FAIR_GROUP_SCHED: h_load (load_avg when update_cfs_rq_h_load()
  // last ran) and that jiffy (last_h_load_update).
  uint64_t h_load = 0;
  int64_t last_h_load_update = -1;
  SchedEntity* h_load_next = nullptr;  // update_cfs_rq_h_load()'s way back down
  // A group's cfs_rq on one CPU (fair_group.cc): its task group, the group
  // entity that stands for it one level up (tg->se[cpu], null on the
  // root), and PELT propagation to that entity (cfs_rq->propagate,
  // prop_runnable_sum: load attached or detached since the last update).
  int tg = 0;
  SchedEntity* se = nullptr;
  bool propagate = false;
  int64_t prop_runnable_sum = 0;
  // Its place on the CPU's leaf list (cfs_rq->leaf_cfs_rq_list, on_list).
  LeafListNode leaf_node;
  bool on_list = false;
  // update_tg_load_avg(): the load_avg this cfs_rq last added to its
  // group's tg->load_avg, and when (sched_clock, ns).
  uint64_t tg_load_avg_contrib = 0;
  uint64_t last_update_tg_load_avg = 0;
  // The group entity's cfs_rq one level up (null for the root).
  CfsRq* parent_cfs_rq() const { return se ? se->cfs_rq : nullptr; }
};

// se joins `cfs` (set_task_rq(), init_tg_cfs_entry()): its cfs_rq, the
// group entity above it, its depth.
inline void set_entity_cfs_rq(SchedEntity& se, CfsRq& cfs) {
  se.cfs_rq = &cfs;
  se.parent = cfs.se;
  se.depth = cfs.se ? cfs.se->depth + 1 : 0;
}

// RT run-queue (struct rt_rq): a FIFO per priority and a bitmap.
struct RtRq {
  std::array<std::vector<Task*>, kMaxRtPrio> queue;
  std::bitset<kMaxRtPrio> bitmap;
  int rt_nr_running = 0;
  // Tasks in rt.pushable_tasks: nonzero is has_pushable_tasks(), the CPU
  // "RT overloaded" (in rd->rto_mask, 6.12).
  int nr_pushable = 0;
  // rt_nr_migratory (6.1/6.6): queued RT tasks, curr included, allowed on
  // more than one CPU; with two or more queued the CPU is RT overloaded.
  int rt_nr_migratory = 0;
  int64_t rt_time = 0;       // runtime used in this rt_period
  bool rt_throttled = false;
};

// DL run-queue (struct dl_rq) of SCHED_DEADLINE tasks (the sugov:N
// kthreads), earliest deadline first; the fair server is kept apart
// (FairServerState) and compared with the first at the pick.
struct DlRq {
  Task* first = nullptr;  // rb_first_cached(&dl_rq->root), then by `next`
  int dl_nr_running = 0;
};

// The fair deadline server (6.12 kernel/sched/deadline.c dl_server in
// deferred mode), reduced to its states; see fair_server.cc.
struct FairServerState {
  bool active = false;         // fair tasks present (dl_server_start/stop)
  bool defer_running = false;  // starvation seen: behaves as a periodic DL task
  bool running = false;        // picked above RT right now (enqueued, not throttled)
  int64_t runtime = 0;         // budget left in this period
  Time deadline;               // end of this period
  // GRUB's active utilization (deadline.c task_contending() /
  // task_non_contending()): the server's bandwidth is in rq->dl.running_bw
  // from dl_server_start() until its zero-lag time after dl_server_stop()
  // (at once if that has passed, else when inactive_timer fires).
  bool bw_running = false;
  bool non_contending = false;  // dl_non_contending: stopped, inactive_timer pending
  bool fair_queued = false;     // the CPU had fair tasks queued at the last update
  // The zero-laxity point: the latest time the budget left can still run
  // before the deadline (where the deferred server's dl_timer fires).
  Time zero_laxity() const { return deadline - Time::ns(runtime); }
};

// nohz_flags(cpu) of a nohz idle-balance kick (6.12 sched.h NOHZ_*_KICK).
enum : unsigned { kNohzBalanceKick = 0x1, kNohzStatsKick = 0x2, kNohzNextKick = 0x8 };

struct Rq {
  int cpu = 0;
  // rq->leaf_cfs_rq_list (CONFIG_FAIR_GROUP_SCHED): the cfs_rqs with load
  // to decay, children before their parents, and tmp_alone_branch, where
  // a branch whose parent is not listed yet grows (fair_group.cc).
  LeafListNode leaf_cfs_rq_list;
  LeafListNode* tmp_alone_branch = nullptr;
  // Hardware seen by the scheduler.
  uint32_t capacity = 1024;        // arch_scale_cpu_capacity()
  // rq->cpu_capacity, capacity_of(): what RT pressure leaves to CFS
  // (scale_rt_capacity()), refreshed when this CPU balances
  // (update_group_capacity() of its local group), and when that is due
  // again for a newidle pass (sg->sgc->next_update, jiffies).
  uint32_t cpu_capacity = 1024;
  int64_t capacity_next_update = 0;
  uint32_t freq_scale = 1024;      // arch_scale_freq_capacity(): cur / max * 1024
  int domain = -1;                 // frequency domain (cpufreq policy), -1: none
  uint32_t domain_pos = 0;         // this CPU's index among its domain's CPUs
  uint64_t idle_calls = 0;         // tick_nohz_get_idle_calls_cpu(): ts->idle_calls
  uint64_t sched_count = 0;        // schedstat rq->sched_count: __schedule() calls
  // distribute_cpu_mask_prev (lib/cpumask.c, per CPU): the CPU that this
  // CPU's last cpumask_any_and_distribute() returned, 0 at boot.
  int distribute_cpu_mask_prev = 0;
  // PELT (kernel/sched/pelt.c): the rq's clocks and averages.
  RqPeltClock pelt;
  SchedAvg avg_rt;                 // rq->avg_rt
  uint64_t misfit_task_load = 0;   // rq->misfit_task_load
  // Periodic load balance of the (single) domain, in jiffies as in the
  // kernel: sd->last_balance and rq->next_balance.
  int64_t last_balance = 0;
  int64_t next_balance = 0;
  // sd->balance_interval (ms) of this CPU's domain: sd_weight at boot
  // (sd_init()); sched_balance_rq() resets it to sd_weight when it finds
  // an imbalance and, after a periodic pass that finds none, doubles it up
  // to max_interval = 2 x sd_weight (MAX_PINNED_INTERVAL = 512 ms when
  // every task it could pull was pinned).
  int64_t sd_balance_interval_ms = 0;
  // sd->nr_balance_failed: periodic passes in a row that found an imbalance
  // and moved nothing (0 after a move, a balanced pass, an active balance).
  int sd_nr_balance_failed = 0;
  int64_t avg_idle = 1000000;      // rq->avg_idle: 2 * sysctl_sched_migration_cost at boot
  int64_t max_idle_balance_cost = 500000;  // rq->max_idle_balance_cost: sysctl_sched_migration_cost at boot
  // The domain's newidle balancing cost (sd->max_newidle_lb_cost, the
  // decayed maximum of measured passes) and when it last decayed (jiffies).
  int64_t max_newidle_lb_cost = 0;
  int64_t last_decay_max_lb_cost = 0;
  // NI_RANDOM (6.18.5+): the domain's newidle passes and successes
  // (sd->newidle_call, _success, _ratio; sd_init() starts them at 512,
  // 256 and 512): the ratio is the last estimate of successes per 1024.
  uint32_t newidle_call = 512, newidle_success = 256, newidle_ratio = 512;
  // The active-balance stopper ran here in this instant: the next
  // __schedule()'s prev is the stop task, not the idle task the model
  // switched to, so every class may balance (prev_balance()). Until that
  // __schedule() has switched, the CPU is not idle: not for idle_cpu(),
  // the idle entry or the tick, nor for the PELT clock (the stopper is
  // rq->curr, so clock_pelt keeps its scaled pace and is not synced to
  // clock_task: update_rq_clock_pelt()). Simplified: the stopper is not
  // counted in nr_running (6.12 counts it, e.g. in nohz_balancer_kick()'s
  // nr_running >= 2 and other CPUs' balance statistics in that instant),
  // and RT placement and pull in that instant (select_task_rq_rt(),
  // pull_rt_task()) see an idle-class curr where 6.12 sees the stop
  // task's prio 0.
  bool stopper_ran = false;
  // The last pick was the fair server's (the deadline class, off
  // __pick_next_task()'s fair fast path): put_prev_set_next_task() then
  // puts and sets every level, not pick_next_task_fair()'s partial switch.
  bool fair_server_picked = false;
  // is_idle_task(rq->curr): the idle task runs, and not as the stand-in
  // for the stopper.
  bool idle_task_runs() const { return curr->is_idle_task && !stopper_ran; }
  Time idle_stamp = Time::max();   // rq->idle_stamp: when newidle balance found nothing
  // nohz_flags(cpu): kNohzStatsKick | kNohzBalanceKick | kNohzNextKick of
  // a kick whose IPI is on its way (non-zero exactly while it is).
  unsigned ilb_flags = 0;
  // NOHZ_NEWILB_KICK: nohz_newidle_balance() asked this CPU, going idle,
  // to update the idle CPUs' blocked load from do_idle()
  // (nohz_run_idle_balance()); a kick IPI reaching it first clears it.
  bool newilb_kick = false;
  // rq->nohz_tick_stopped: in nohz.idle_cpus_mask, from the tick stopping
  // in idle until this CPU's first busy tick.
  bool nohz_tick_stopped = false;
  Timer ilb_kick;
  // NO_HZ blocked load (6.12 fair.c): an idle CPU whose PELT signals have
  // not decayed to zero yet, and the jiffy they were last brought up to date.
  bool has_blocked_load = false;           // rq->has_blocked_load
  int64_t last_blocked_load_update_tick = 0;  // rq->last_blocked_load_update_tick
  Task* curr = nullptr;
  Task* idle = nullptr;
  CfsRq cfs;
  RtRq rt;
  DlRq dl;
  FairServerState fair_server;
  int nr_running = 0;
  int ttwu_pending = 0;             // rq->ttwu_pending: wake-ups queued for this CPU, not yet enqueued
  int wake_list_inflight = 0;       // ... of them through its wake list (call_single_queue not yet flushed)
  // WALT's busy hysteresis (kernel.cpuidle.walt_*): per_cpu(nr) of
  // sched_avg.c and busy_hyst_end_time.
  int walt_nr = 0;
  Time walt_busy_hyst_end = Time::zero();
  int nr_iowait = 0;                // rq->nr_iowait: tasks that blocked here in io_schedule(), not yet woken
  // When this CPU is through the try_to_wake_up() calls it has begun (each
  // costs kernel.overheads.wakeup; a later one waits its turn).
  Time ttwu_busy_until = Time::zero();
  Timer ttwu_done;                 // fires at ttwu_busy_until: the CPU may idle now (cpuidle only)
  bool need_resched = false;       // TIF_NEED_RESCHED
  bool need_resched_lazy = false;  // TIF_NEED_RESCHED_LAZY (preempt=lazy)
  bool at_preempt_point = false;   // curr just reached an action boundary
  // Execution of curr's current action.
  Time seg_start;                  // when curr's progress (re)started
  uint32_t rate = 1u << 20;        // work per ns, fixed point 2^20 = capacity 1024 at f_max
  Timer work_timer;
  bool work_rearmed = false;       // arm_work_timer() ran during this __schedule()
  bool in_schedule = false;        // inside Kernel::schedule() of this rq
  Timer tick_timer;
  Timer server_timer;
  Timer server_inactive_timer;     // the fair server's inactive_timer (zero-lag time), an hrtimer here
  Timer irq_work;                  // the root domain's rto_push_work queued on this CPU (RT_PUSH_IPI)
  bool irq_work_ipi = false;       // ... by another CPU: its IPI is pending here
  bool active_balance_ipi = false; // the stopper's wake-up came from another CPU: its IPI is pending here
  // schedutil's irq_work (sugov_irq_work()) raised on this CPU for the
  // slow-switch frequency domains in the mask (bit = domain index).
  Timer sugov_irq_work;
  uint64_t sugov_irq_work_domains = 0;
  Timer resched_ipi;               // delivers a remote resched after ipi_latency
  // rq->active_balance / push_cpu: a stopper woken by another CPU's balance
  // pass (stop_one_cpu_nowait()) is on its way while active_balance_stop is
  // armed; it runs when that fires, pushing to push_cpu.
  int push_cpu = -1;
  Timer active_balance_stop;
  // The migration stopper a sched_setaffinity() of curr woke here
  // (affine_move_task(): stop_one_cpu_nowait() of migration_cpu_stop())
  // when it took this CPU away: it runs first in this CPU's next
  // __schedule(), moving the task to migration_stop_dest.
  Task* migration_stop_task = nullptr;
  int migration_stop_dest = -1;
  Task* migration_stop_waiter = nullptr;  // the caller, waiting in wait_for_completion() (or preempted: itself)
  CpuidleDevice cpuidle;           // cpuidle device, idle-loop progress, hrtimer base
  // Range hrtimers queued on this CPU with a soft expiry before their hard
  // one (hrtimer_start_range()): kept whatever the cpuidle setting, as the
  // tick runs them early. Reserved at set-up; stale entries are dropped.
  std::vector<RangeHrtimerRef> range_hrtimers;
  // No entry's soft expiry is earlier (stale entries may leave it lower
  // than the live minimum): an interrupt before it has nothing to run.
  Time range_min_soft = Time::max();
  RqUclamp uclamp;                 // rq->uclamp[], rq->uclamp_flags
};

class Kernel : public InstantEndHook, public EventHandler {
 public:
  Kernel(const KernelParams& params, const PlatformParams& platform);
  ~Kernel() override;

  // --- set-up
  Task& create_task(const std::string& comm, const std::string& group, Policy policy, int nice,
                    int rt_priority, const std::vector<int>& cpus, bool kernel_thread);
  void set_custom_slice(Task& p, Time slice);
  // sched_setattr() with SCHED_FLAG_UTIL_CLAMP_MIN/_MAX (unset = left as
  // is): uclamp_validate() (needs CONFIG_UCLAMP_TASK, values 0..1024, min
  // <= max; ModelError otherwise), which enables the sched_uclamp_used
  // static key, then __setscheduler_uclamp(). Before the task is queued.
  void set_task_uclamp(Task& p, std::optional<uint32_t> util_min, std::optional<uint32_t> util_max);
  // uclamp_validate() alone (ModelError on failure).
  void validate_uclamp(const Task& p, std::optional<uint32_t> util_min, std::optional<uint32_t> util_max) const;
  // sched_setattr() of the clamps alone at run time (SCHED_FLAG_KEEP_ALL |
  // SCHED_FLAG_UTIL_CLAMP): a queued task leaves its rq's buckets with the
  // old values and joins with the new (setscheduler.cc).
  void sched_setattr_uclamp(Task& p, std::optional<uint32_t> util_min, std::optional<uint32_t> util_max);
  // cpu cgroups (CONFIG_UCLAMP_TASK_GROUP; uclamp.h). find_task_group():
  // the index of the group called `name` ("/" = the root, 0), or -1.
  int find_task_group(std::string_view name) const;
  // The same for a name a scenario gives ("" = the root); a ModelError
  // if there is no such group.
  int cpu_cgroup_index(const std::string& name) const;
  // CONFIG_FAIR_GROUP_SCHED's hierarchy (fair_group.cc): the cfs_rq a task
  // of `group` queues on at `cpu` (tg->cfs_rq[cpu]; the root's for a group
  // with no cpu weight), and the entity standing for a group there
  // (tg->se[cpu]; null for the root).
  CfsRq& task_group_cfs_rq(int group, int cpu) {
    FairGroupRq* g = fair_group_rqs_.empty() ? nullptr : fair_group_rqs_[fair_group_slot(group, cpu)].get();
    return g ? g->cfs : rqs_[static_cast<size_t>(cpu)]->cfs;
  }
  const CfsRq& task_group_cfs_rq(int group, int cpu) const {
    return const_cast<Kernel*>(this)->task_group_cfs_rq(group, cpu);
  }
  // tg->shares of `group` (scaled by 1024, as the kernel keeps it; 0 for a
  // group with no cpu weight) and whether any group has one.
  uint64_t fair_group_shares(int group) const { return fair_group_shares_[static_cast<size_t>(group)]; }
  bool fair_groups_active() const { return !fair_group_rqs_.empty(); }
  // calc_group_shares() (6.12 fair.c): the weight (scaled) of the entity
  // standing for gcfs's group on its CPU: the group's shares times this
  // CPU's part of the group's load (tg->load_avg with this cfs_rq's
  // contribution brought up to date), clamped to [MIN_SHARES, shares].
  uint64_t calc_group_shares(const CfsRq& gcfs) const;
  // tg->load_avg of `group`.
  int64_t fair_group_load_avg(int group) const { return fair_group_load_avg_[static_cast<size_t>(group)]; }
  // update_tg_load_avg(): tg->load_avg follows this cfs_rq's load_avg, at
  // most once per ms of sched_clock and only by more than 1/64 of what it
  // last added. Nothing for the root.
  void update_tg_load_avg(CfsRq& cfs);
  // list_add_leaf_cfs_rq() (6.12 fair.c): cfs joins rq's leaf list just
  // before its parent if that is listed, at the tail for the root, else
  // at tmp_alone_branch (the enqueue walk adds the parents next). True
  // when the branch is connected.
  bool list_add_leaf_cfs_rq(Rq& rq, CfsRq& cfs);
  // __update_blocked_fair() (CONFIG_FAIR_GROUP_SCHED): the cfs_rqs of the
  // leaf list, children before parents, each decayed and its group entity
  // updated (unless skip_blocked_update()), dropped from the list once
  // fully decayed; `done` cleared while one still has blocked load. True
  // when the root's averages changed.
  bool update_blocked_fair(Rq& rq, bool& done);
  const std::string& task_group_name(int group) const { return task_groups_[static_cast<size_t>(group)].name; }
  // set_task_rq(): p's entity joins its group's cfs_rq on `cpu`, under
  // that group's entity there. set_task_rq_fair() (6.12 fair.c,
  // CONFIG_FAIR_GROUP_SCHED, ATTACH_AGE_LOAD) first: fair signals still
  // stamped with a cfs_rq's clock -- another class's task that was fair,
  // or started outside it -- decay to the old cfs_rq's last update and
  // take the new one's stamp. A fair task changing CPU or group was
  // unstamped already (migrate_task_rq_fair(), task_change_group_fair()).
  void set_task_rq(Task& p, int cpu) {
    CfsRq& cfs = task_group_cfs_rq(p.task_group, cpu);
    if (params_.fair_group_sched && p.se.avg.last_update_time && p.se.cfs_rq) {
      update_load_avg_blocked_se(p.se.cfs_rq->avg.last_update_time, p.se.avg, p.se.weight);
      p.se.avg.last_update_time = cfs.avg.last_update_time;
    }
    set_entity_cfs_rq(p.se, cfs);
  }
  const std::vector<UclampTaskGroup>& task_groups() const { return task_groups_; }
  // cpu_cgroup_attach() -> sched_move_task(): p joins group `group` (a
  // write of its pid to the group's cgroup.procs). A queued task goes
  // through the change path (DEQUEUE_SAVE | DEQUEUE_MOVE), so its rq's
  // clamp buckets see the new group's range; a running one is rescheduled.
  void sched_move_task(Task& p, int group);
  // cpu_uclamp_write(): a write of cpu.uclamp.min (id kUclampMin) or
  // cpu.uclamp.max of group `group`, in 1/100 percent (0..10000; "max" =
  // 10000). Enables the static key; the effective clamps of the group and
  // its descendants follow (cpu_util_update_eff()), and their runnable
  // tasks are refcounted again at once. ModelError without uclamp.
  void cpu_uclamp_write(int group, UclampId id, int64_t percent_x100);
  // cpu_weight_write_u64() / cpu_shares_write_u64() (core.c): a run-time
  // write of a weighted group's cpu.weight (1..10000) or cpu.shares, through
  // sched_group_set_shares() (fair_group.cc). ModelError for a group that is
  // not a level of the fair hierarchy, or a value the kernel refuses
  // (an idle group's: EINVAL).
  void cpu_weight_write(int group, int64_t weight);
  void cpu_shares_write(int group, int64_t shares);
  void sched_group_set_shares(int group, int64_t shares);
  // sched_group_set_idle() (6.12 fair.c): a run-time write of a group
  // level's cpu.idle; ModelError for a group that is not a level.
  void sched_group_set_idle(int group, bool idle);
  void set_body(Task& p, TaskBody* body) { p.body = body; }
  // wake_up_new_task() at time `at`.
  void start_task_at(Task& p, Time at);
  void add_observer(SchedObserver* o) {
    observers_.push_back(o);
    if (o->wants_cpu_util()) util_observers_.push_back(o);
  }
  // The per-CPU streams sched_rng() draws from, from run seed `seed`
  // (the constructor seeds them with 0).
  void seed_sched_rng(uint64_t seed);

  // --- services for task bodies and devices
  Simulator& sim() { return sim_; }
  Time now() const { return sim_.now(); }
  // try_to_wake_up(); waker is the running task that woke p (nullptr for
  // timers and interrupts). `from_cpu` is the CPU the wake-up runs on.
  bool try_to_wake_up(Task& p, const Task* waker, int from_cpu, int wake_flags = 0);
  // rt_mutex_setprio(): PI boost or unboost to `prio`.
  void rt_mutex_setprio(Task& p, int prio);
  // sched_setattr_nocheck() / __sched_setscheduler() from kernel code: new
  // policy, nice and RT priority (setscheduler.cc). A PI boost is kept.
  void set_scheduler(Task& p, Policy policy, int nice, int rt_priority);
  // set_user_nice(): a new nice without a policy change (binder's priority
  // inheritance of a fair caller; setscheduler.cc).
  void set_user_nice(Task& p, int nice);
  // sched_setaffinity() of p by the running task `caller` (p itself, or
  // another; affinity.cc): p's new mask (bits of CPUs the platform lacks
  // ignored). What the caller then does: go on (p's CPU stays allowed, the
  // mask is unchanged, p was queued and is moved, or asleep), switch out
  // at once still runnable for the stopper to move it (kPreempted, p
  // itself: the caller's Action::schedule()), or sleep in D until the
  // stopper wakes it (kSleeps: Action::block(); p itself under
  // PREEMPT_NONE, or a running p). A p not started yet only takes the
  // mask; an exited one is left (ESRCH).
  enum class AffinityWait { kNone, kPreempted, kSleeps };
  AffinityWait sched_setaffinity(Task& caller, Task& p, const CpuMask& new_mask);
  void notify_period_end(const Task& p, Time period_start, Time response, Time period);
  // The hrtimer slack a sleep of p gets (p->timer_slack_ns: 0 for RT tasks).
  Time timer_slack(const Task& p) const;
  // prctl(PR_SET_TIMERSLACK) or /proc/PID/timerslack_ns: p's slack (0 = its
  // default); no effect on an RT task.
  void set_timer_slack(Task& p, Time slack);

  // A device interrupt (`irq`, its event) reaches rq's CPU: if the CPU is
  // idle, in an idle state or still in its governor, the interrupt wakes
  // it and `irq` is re-armed for when the CPU runs again (true: handle it
  // then); false: handle it now.
  bool irq_waits_for_idle_exit(Rq& rq, Timer& irq, bool tick = false);
  // The same for an interrupt delivered as a one-shot event: wakes the CPU
  // as above and returns when the handler runs (now: at once), for the
  // caller to post its event again then.
  Time irq_handled_at(Rq& rq, bool tick = false);
  // When the wake-list IPI reaching `target` now is handled, and its task
  // enqueued (sched_ttwu_pending()): now, or, for a CPU in an idle state or
  // its governor's run, once it runs again.
  Time wake_list_handled_at(Rq& target);

  // --- hrtimers (hrtimer_start() / hrtimer_cancel() on a CPU's hrtimer base)
  // Arms `t` for `expires` as an hrtimer queued on `cpu`: the CPU's base
  // holds it, so it bounds the hrtimer walk there (run_soft_expired_hrtimers())
  // and timer migration sees it as the CPU's next event
  // (hrtimer_target_cpu()); with cpuidle on, the CPU's next timer event
  // (tick_nohz_get_sleep_length(), the cluster power-down check) sees it
  // too and its expiry wakes the CPU from an idle state (the local timer
  // interrupt) before t's handler runs. `t` keeps its handler and tier; it
  // must stay alive and in place while queued -- not moved: the base keeps
  // its event-queue slot -- or be cancelled with hrtimer_cancel().
  void hrtimer_start(Timer& t, Time expires, int cpu) {
    // A timer re-armed before it fired leaves its old base first
    // (remove_hrtimer() in __hrtimer_start_range_ns()): its entry there
    // would look live if the expiry is the same.
    if (t.armed()) hrtimer_forget(t);
    t.arm(expires);
    hrtimer_enqueue(t, expires, cpu);
  }
  // hrtimer_start() of a timer the model only ever queues on `cpu`'s base
  // (the fair server's, armed with its rq's CPU: 6.12 queues them on the
  // arming CPU, which a remote enqueue or a balancer's detach can make
  // another; the model does not): no other base can hold an entry of it,
  // so none is searched (the bases' scans cost more than the rest of the
  // re-arm, and the fair server re-arms its timer at most switches).
  void hrtimer_start_on_own_base(Timer& t, Time expires, int cpu) {
    t.arm(expires);
    hrtimer_enqueue(t, expires, cpu, /*drop_stale=*/false);
  }
  // The CPU whose base an unpinned hrtimer armed on this_cpu (expiring at
  // `expires`) goes to: switch_hrtimer_base() with timer migration on
  // (kernel.timer_migration=1, NO_HZ): get_nohz_timer_target() keeps a busy
  // CPU's timer there; an idle CPU's (armed from an interrupt) goes to the
  // first busy CPU of its sched domains, lowest level first, unless it
  // expires before that CPU's next event (hrtimer_suitable_target()).
  int hrtimer_target_cpu(int this_cpu, Time expires) const;
  // hrtimer_start_range_ns(): `t` may run anywhere in [soft, soft + slack].
  // Armed at the hard expiry (soft + slack); an hrtimer interrupt of `cpu`
  // in the window -- its tick, its exit from an idle state, or the expiry
  // of any hrtimer queued there (every model's hrtimer handler calls
  // hrtimer_interrupt(): sleeps, runtime PM's timers, the fair server's,
  // the RT period timer, SurfaceFlinger's timerfds, the GPU's idle timer; a
  // timer_list's tick) --
  // runs it then (run_soft_expired_hrtimers()), unless the kernel's walk in
  // hard-expiry order stops ahead of it: at a timer still to expire with an
  // earlier hard expiry, such as the running tick's next jiffy for a window
  // longer than the rest of the jiffy. Simplified: a timer cancelled from
  // another CPU raises no spurious interrupt at its old expiry.
  // `owner` names the timer in --log debug (a task's comm, a device's
  // name), `group` in --why (a task's group; null: not counted); both must
  // outlive the timer.
  void hrtimer_start_range(Timer& t, Time soft, Time slack, int cpu, const std::string* owner = nullptr,
                           const std::string* group = nullptr);
  // Which hrtimer interrupt runs the walk: the tick's own (which re-queues
  // the tick a jiffy on), another hrtimer's, or the local timer's that
  // ended an idle state.
  enum class HrtimerIrq : uint8_t { kTick, kOtherTimer, kIdleExit };
  // The soft-expired range hrtimers of rq's CPU that the walk reaches run
  // now (an hrtimer interrupt there at `at`, which is now or the end of an
  // idle exit). `expired`: the range timer whose own expiry this interrupt
  // is (for --why), if any.
  void run_soft_expired_hrtimers(Rq& rq, Time at, HrtimerIrq irq, const Timer* expired = nullptr) {
    // The common case, a tick with no window open, without a call.
    if (at >= rq.range_min_soft) walk_soft_expired_hrtimers(rq, at, irq, expired);
  }
  // An hrtimer queued on `cpu` fires now (`expired`, when it is a range
  // timer): __hrtimer_run_queues() runs the CPU's other soft-expired range
  // timers in the same interrupt.
  void hrtimer_interrupt(int cpu, const Timer* expired = nullptr) {
    if (cpu >= 0 && cpu < nr_cpus())
      run_soft_expired_hrtimers(*rqs_[static_cast<size_t>(cpu)], now(), HrtimerIrq::kOtherTimer, expired);
  }
  void hrtimer_cancel(Timer& t) {
    t.cancel();
    hrtimer_forget(t);
  }
  // --- timer_list (kernel/time/timer.c, 6.12): when a timer added now
  // with a timeout of `delay` runs. The timeout in jiffies is rounded up
  // (usecs_to_jiffies()); the wheel files the timer by its distance in a
  // level of 8^n-jiffy buckets and rounds its expiry up to the next bucket
  // (calc_wheel_index(): "a timer does not fire early"), so it runs at the
  // tick of that bucket's jiffy: after delay + up to one jiffy below 63
  // jiffies, up to 1/8 later beyond. Simplified: the wheel's clock is
  // jiffies (the kernel's may be one ahead right after expiring timers).
  Time timer_list_fire_time(Time delay) const;

  // --- hardware: frequency domains (cpufreq policies) and their EM
  struct FreqDomain {
    std::string name;
    std::vector<int> cpus;
    std::vector<Opp> opps;
    uint64_t max_khz = 0;
    uint64_t cur_khz = 0;
    uint32_t capacity = 1024;
    std::unique_ptr<CpufreqGovernor> governor;
    std::unique_ptr<EnergyModel> em;
    std::vector<CpuUtil> utils;  // scratch for cpufreq_update_util(), one per CPU
    std::vector<const Rq*> rqs;  // the run-queues of `cpus`, in the same order
    SchedutilGovernor* sugov = nullptr;  // `governor` when it is schedutil (called directly)
    // The governor's reads_runnable_boost() and iowait_needs_uclamp_boost(),
    // cached for the hooks.
    bool reads_runnable_boost = true;
    bool iowait_needs_uclamp_boost = false;
    // The slow path of schedutil or sched_pixel (the driver has no fast
    // switch): the policy's sugov:N kthread and sg_policy->work_in_progress.
    std::unique_ptr<SugovKthread> sugov_kthread;
    bool work_in_progress = false;
  };
  const std::vector<FreqDomain>& freq_domains() const { return domains_; }
  // The rq clocks at simulated time 0 (RqPeltClock::start_at()): one PELT
  // period, so no attach ever sees PELT time 0.
  static constexpr uint64_t kRqClockAtZeroNs = uint64_t{1} << 20;
  // sysctl_sched_migration_cost: a task that ran this recently is cache
  // hot (task_hot()); also newidle's and preempt_sync()'s threshold.
  static constexpr int64_t kMigrationCostNs = 500000;
  // update_rq_clock(): bring the rq's clocks (PELT included) to now. The
  // idle task standing in for the active-balance stopper is not idle.
  void update_rq_clock(Rq& rq) {
    rq.pelt.update_rq_clock(static_cast<uint64_t>(now().count()) + kRqClockAtZeroNs, rq.capacity, rq.freq_scale,
                            rq.idle_task_runs());
  }
  // update_idle_rq_clock_pelt(rq): the rq is about to idle (the
  // lost-idle-time test from the CFS and RT util_sum; no DL tasks here).
  static void update_idle_rq_clock_pelt(Rq& rq) {
    rq.pelt.update_idle_rq_clock_pelt(rq.cfs.avg.util_sum, rq.avg_rt.util_sum, 0);
  }
  // cpufreq_update_util(): let rq's cpufreq governor re-evaluate.
  void cpufreq_update_util(Rq& rq, unsigned flags);
  // The flag enqueue_task_fair() passes for a task waking from I/O:
  // kSchedCpufreqIowait, or 0 (no update) where a vendor hook withholds it.
  unsigned cpufreq_iowait_flag(const Rq& rq, const Task& p) const;
  // cpu_util_cfs(): the CPU's CFS utilisation (util_avg, util_est), capped at capacity.
  // (cpu_util(cpu, NULL, -1, 0) of 6.12: util_avg, or util_est if larger.)
  uint64_t cpu_util_cfs(const Rq& rq) const {
    uint64_t util = rq.cfs.avg.util_avg;
    util = std::max<uint64_t>(util, rq.cfs.avg.util_est.value());
    return std::min<uint64_t>(util, rq.capacity);
  }
  // cpu_util_cfs_boost() (6.5+): with runnable boosting, what schedutil
  // reads: util_avg raised to the rq's runnable_avg when tasks wait.
  uint64_t cpu_util_cfs_boost(const Rq& rq) const {
    if (!version_.runnable_boost) return cpu_util_cfs(rq);
    uint64_t util = std::max<uint64_t>(rq.cfs.avg.util_avg, rq.cfs.avg.runnable_avg);
    util = std::max<uint64_t>(util, rq.cfs.avg.util_est.value());
    return std::min<uint64_t>(util, rq.capacity);
  }
  // sched_asym_cpucap_active(): CPUs of more than one capacity.
  bool asym_capacity() const { return asym_capacity_; }
  // p->max_allowed_capacity: the largest capacity among p's allowed CPUs.
  uint32_t max_allowed_capacity(const Task& p) const;
  // set_task_max_allowed_capacity() (6.10+ fair.c): the largest capacity
  // among p's allowed CPUs, recorded for misfit.
  void set_task_max_allowed_capacity(const Task& p);

  // --- uclamp (uclamp.h; core.c, fair.c, rt.c of 6.12)
  // uclamp_is_used(): the sched_uclamp_used static key.
  bool uclamp_is_used() const { return uclamp_used_; }
  // uclamp_rq_is_capped() (sched.h, 6.1-6.18): rq's cfs util (cpu_util_cfs(),
  // no runnable boost) plus its RT util at or above a uclamp_max below 1024.
  bool uclamp_rq_is_capped(const Rq& rq) const {
    if (!uclamp_used_) return false;
    const uint64_t max_util = rq.uclamp.get(kUclampMax);
    return max_util != kSchedCapacityScale && cpu_util_cfs(rq) + rq.avg_rt.util_avg >= max_util;
  }
  const UclampSystem& uclamp_system() const { return uclamp_sys_; }
  // uclamp_eff_value(): the refcounted effective value while p is runnable,
  // else its request limited by the system default.
  uint32_t uclamp_eff_value(const Task& p, UclampId id) const {
    if (p.uclamp[id].active) return p.uclamp[id].value;
    return uclamp_sys_.eff_get(uclamp_tg_restrict(p, id), id).value;
  }
  // uclamp_tg_restrict(): p's request, clamped into its cpu cgroup's
  // effective range unless p is in the root group.
  UclampSe uclamp_tg_restrict(const Task& p, UclampId id) const {
    if (p.task_group == 0) return p.uclamp_req[id];
    const UclampTaskGroup& tg = task_groups_[static_cast<size_t>(p.task_group)];
    const uint32_t v = std::clamp(p.uclamp_req[id].value, tg.uclamp[kUclampMin].value, tg.uclamp[kUclampMax].value);
    return uclamp_sys_.make(v, false);
  }
  // util_fits_cpu() on rq's CPU (capacity_of(), the arch capacity; no
  // thermal pressure, so the actual capacity is the arch capacity).
  int util_fits_cpu(uint64_t util, uint64_t uclamp_min, uint64_t uclamp_max, const Rq& rq) const {
    return schedlab::util_fits_cpu(util, uclamp_min, uclamp_max, capacity_of(rq), rq.capacity, rq.capacity,
                                   uclamp_used_);
  }
  // task_h_load() (6.12 fair.c, CONFIG_FAIR_GROUP_SCHED): p's load_avg
  // scaled by its cfs_rq's h_load over that cfs_rq's load_avg + 1, h_load
  // being the root's load_avg as update_cfs_rq_h_load() took it at most
  // once a jiffy, passed down each level as the group entity's share of
  // its parent's (so with every task in the root group: just under
  // load_avg while the root's load is what the jiffy first read, above or
  // below it once that load has moved). Without it, p's load_avg.
  uint64_t task_h_load(const Task& p) {
    if (!params_.fair_group_sched) return p.se.avg.load_avg;
    CfsRq& cfs = *p.se.cfs_rq;  // task_cfs_rq(p): where p is or was last queued
    update_cfs_rq_h_load(cfs);
    return p.se.avg.load_avg * cfs.h_load / (cfs.avg.load_avg + 1);
  }
  void update_cfs_rq_h_load(CfsRq& cfs);
  // task_fits_cpu(): p's util_est and clamps fit rq's CPU fully.
  bool task_fits_cpu(const Task& p, const Rq& rq) const {
    return util_fits_cpu(task_util_est(p.se.avg), uclamp_eff_value(p, kUclampMin), uclamp_eff_value(p, kUclampMax),
                         rq) > 0;
  }
  // rt_task_fits_capacity() (rt.c): with CONFIG_UCLAMP_TASK on an
  // asymmetric system, the CPU's arch capacity reaches min(uclamp_min,
  // uclamp_max) of the task (RT tasks ask for sched_util_clamp_min_rt_default).
  bool rt_task_fits_capacity(const Task& p, int cpu) const {
    if (!params_.uclamp || !asym_capacity_) return true;
    return rqs_[static_cast<size_t>(cpu)]->capacity >=
           std::min(uclamp_eff_value(p, kUclampMin), uclamp_eff_value(p, kUclampMax));
  }

  // --- fair SMP (fair_smp.cc): placement and load balancing
  // select_task_rq_fair().
  int select_task_rq_fair(Task& p, int prev_cpu, int wake_flags);
  // record_wakee() and wake_wide() (fair.c) for the waking task `current`.
  void record_wakee(Task& current, const Task& p);
  bool wake_wide(const Task& current, const Task& p) const;
  // sched_balance_newidle(): rq is about to go idle; pull. True if it did.
  bool sched_balance_newidle(Rq& rq);
  // From a busy CPU's tick: nohz_balancer_kick(), then its periodic balance when due.
  void sched_balance_trigger(Rq& rq);
  // cpu_util(cpu, p, dst_cpu, boost): the CPU's CFS util if p ran on
  // dst_cpu; `boost` raises util_avg to runnable_avg (kernels with runnable
  // boosting only).
  uint64_t cpu_util(int cpu, const Task* p, int dst_cpu, bool boost = false) const;
  // sched_energy_enabled(): EAS is possible (sched_is_eas_possible() and
  // build_perf_domains(), 6.12 topology.c): asymmetric capacities, an energy
  // model for every CPU and schedutil on every policy.
  bool sched_energy_enabled() const { return energy_enabled_; }
  // cpu_overutilized(): the CPU's CFS util does not fit its capacity (false
  // when EAS is off, as in the kernel).
  // With uclamp in use the rq's clamps count (util_fits_cpu(); -1, "only
  // the boost does not fit", is not overutilized).
  bool cpu_overutilized(const Rq& rq) const {
    if (!energy_enabled_) return false;
    return util_fits_cpu(cpu_util_cfs(rq), rq.uclamp.get(kUclampMin), rq.uclamp.get(kUclampMax), rq) == 0;
  }
  // capacity_of() (fair.c): the capacity CFS decisions compare against.
  static uint32_t capacity_of(const Rq& rq) { return rq.cpu_capacity; }
  // update_group_capacity() -> update_cpu_capacity() for a one-CPU group.
  void update_group_capacity(Rq& rq);
  // check_cpu_capacity(): RT pressure cut the CPU's capacity_of() below
  // capacity * 100 / imbalance_pct.
  bool check_cpu_capacity(const Rq& rq) const;
  // sched_balance_rq(): pull to dst from the busiest CPU. Returns tasks moved.
  enum class CpuIdleType { kNotIdle, kIdle, kNewlyIdle };  // enum cpu_idle_type
  int sched_balance_rq(Rq& dst, CpuIdleType idle);
  // can_migrate_task(): may the balancer move queued task p to dst_cpu
  // (migrate_load: the pass migrates load, env->migration_type)?
  bool can_migrate_task(const Task& p, int dst_cpu, bool ignore_hot, bool migrate_load) const;
  // The tests can_migrate_task() makes before the affinity test: a task
  // failing them neither moves nor clears LBF_ALL_PINNED (6.14+: a delayed
  // task unless migrating load; 6.18: an ineligible one, see
  // KernelVersionInfo::lb_ineligible_stays).
  bool lb_may_consider(const Task& p, int dst_cpu, bool migrate_load) const;
  // entity_eligible() of a fair task's entity on its cfs_rq (lag >= 0).
  bool fair_entity_eligible(const Task& p) const {
    return classes_[static_cast<size_t>(SchedClassId::kFair)]->entity_eligible(*rqs_[static_cast<size_t>(p.cpu)], p);
  }
  // The balancer's count of a CPU's fair tasks: cfs.h_nr_running (6.12:
  // delayed tasks too) or cfs.h_nr_runnable (6.14+: without them).
  int lb_h_nr_running(const Rq& rq) const {
    return version_.lb_counts_runnable ? rq.cfs.h_nr_running - rq.cfs.h_nr_delayed : rq.cfs.h_nr_running;
  }
  // active_load_balance_cpu_stop() on src pushing to dst_cpu (what a pass
  // that needs active balance starts; at once when waking the stopper
  // costs nothing). True when a task moved.
  bool active_balance(Rq& src, int dst_cpu);
  // The woken stopper's run on src (Rq::active_balance_stop), pushing to
  // src.push_cpu.
  void active_balance_cpu_stop(Rq& src);
  // update_newidle_stats() (6.18.5+): one newidle pass, `success` weighted
  // successes; every 1024 passes the ratio is refreshed and both halve.
  static void update_newidle_stats(Rq& rq, uint32_t success);
  // is_rd_overutilized(): the latched root-domain flag (always true without
  // EAS, so the balancer is never held back there).
  bool is_rd_overutilized() const { return !energy_enabled_ || rd_overutilized_; }
  bool get_rd_overloaded() const { return rd_overloaded_; }  // rd->overloaded
  // check_update_overutilized_status(): set the flag when rq's CPU no
  // longer fits its util (enqueue_task_fair() of a non-new task, the tick).
  void check_update_overutilized_status(const Rq& rq) {
    if (!is_rd_overutilized() && cpu_overutilized(rq)) rd_overutilized_ = true;
  }
  // get_sd_balance_interval() of rq's (single) domain, in jiffies.
  int64_t balance_interval(const Rq& rq, bool busy) const;

  // --- struct mutex (kernel_mutex.h): the kernel tells each registered
  // mutex when a task that spins on it, or owns it with spinners, leaves
  // its CPU.
  void register_kernel_mutex(KernelMutex* m) { kernel_mutexes_.push_back(m); }
  void unregister_kernel_mutex(KernelMutex* m) { std::erase(kernel_mutexes_, m); }
  // A busy-wait of p (a kRunWall action: a mutex spin) ends now: at once
  // if p runs, else when it runs again.
  void end_busy_wait(Task& p);

  // --- run
  void run_until(Time end) { sim_.run_until(end); }

  // --- introspection (tests, metrics)
  const std::vector<std::unique_ptr<Task>>& tasks() const { return tasks_; }
  Rq& rq(int cpu) { return *rqs_[cpu]; }
  // smp_processor_id() of the path being modelled: the CPU whose event,
  // wake-up or __schedule() runs (-1 outside any CPU: a task's start).
  int event_cpu() const { return event_cpu_; }
  // cpumask_any_and_distribute() run on this_cpu (lib/cpumask.c): the first
  // CPU of the mask after this CPU's distribute_cpu_mask_prev, wrapping
  // (find_next_and_bit_wrap()), remembered for the next call; -1 for an
  // empty mask. Shared by RT's find_lowest_rq(), workqueues' kick_pool() and
  // sched_setaffinity()'s choice of destination.
  template <typename InMask>
  int cpumask_any_and_distribute(int this_cpu, InMask in_mask) {
    const int n = nr_cpus();
    int& prev = rq(this_cpu).distribute_cpu_mask_prev;
    for (int i = 1; i <= n; ++i) {
      const int c = (prev + i) % n;
      if (in_mask(c)) return prev = c;
    }
    return -1;
  }
  // sched_idle_rq() / sched_idle_cpu() (6.12 fair.c): the rq's tasks are
  // all SCHED_IDLE (and it has some). Wake-up placement takes such a CPU
  // as idle, and its periodic balance uses the idle interval.
  bool sched_idle_rq(const Rq& rq) const { return rq.nr_running > 0 && rq.nr_running == rq.cfs.idle_h_nr_running; }
  bool sched_idle_cpu(int cpu) const { return sched_idle_rq(*rqs_[static_cast<size_t>(cpu)]); }
  // irq_work_queue_on() of the root domain's rto_push_work (6.12 rt.c
  // RT_PUSH_IPI): it runs on cpu after an IPI (at once on this CPU), where
  // the RT class's irq_work() takes it.
  void irq_work_queue_on(int cpu);
  // start_rt_bandwidth(): the RT period timer of RT throttling (6.1, 6.6)
  // starts if it is not running, pinned to the CPU running this code
  // (`rq_cpu` outside any CPU's event); see core.cc.
  void start_rt_bandwidth(int rq_cpu);
  int rt_period_timer_cpu() const { return rt_period_cpu_; }
  bool rt_period_timer_armed() const { return rt_period_timer_.armed(); }
  // Its hrtimer's expiry (meaningful while armed).
  Time rt_period_timer_expiry() const { return rt_period_expires_; }
  // for_each_domain(cpu, sd) with SD_WAKE_AFFINE, bottom-up: the spans, as
  // the platform's topology builds them (one span of every CPU for a
  // platform of identical CPUs; none on one CPU).
  const std::vector<CpuMask>& wake_affine_spans(int cpu) const {
    return wake_affine_spans_[static_cast<size_t>(cpu)];
  }
  int nr_cpus() const { return static_cast<int>(rqs_.size()); }
  const KernelParams& params() const { return params_; }
  const SchedFeatures& features() const { return features_; }
  bool eevdf() const { return version_.eevdf; }
  Time tick_nsec() const { return tick_nsec_; }
  // NO_HZ idle balancing, for tests and teaching: nohz.next_balance
  // (jiffies) and how many idle-balance passes with a balance kick ran.
  int64_t nohz_next_balance() const { return nohz_next_balance_; }
  uint64_t nohz_balance_passes() const { return nohz_balance_passes_; }
  int64_t jiffies() const { return now().count() / tick_nsec_.count(); }
  // The first jiffy after `at`: where the tick's handler re-queues it
  // (hrtimer_forward() keeps the grid).
  Time next_tick_after(Time at) const { return Time::ns((at.count() / tick_nsec_.count() + 1) * tick_nsec_.count()); }
  // msecs_to_jiffies(): rounded up, as the kernel's.
  int64_t msecs_to_jiffies(int64_t ms) const { return (ms * params_.hz + 999) / 1000; }
  // sched_balance_domains(): rq's periodic balance if its interval is
  // due, then its next_balance. Returns tasks moved.
  int sched_balance_domains(Rq& rq, bool idle);
  // Tunables after get_update_sysctl_factor() scaling.
  int64_t base_slice_ns() const { return base_slice_; }
  int64_t sched_latency_ns() const { return sched_latency_; }
  int64_t min_granularity_ns() const { return min_granularity_; }
  int64_t wakeup_granularity_ns() const { return wakeup_granularity_; }
  int64_t rr_timeslice_ticks() const { return rr_timeslice_ticks_; }
  bool fair_server_enabled() const { return fair_server_enabled_; }
  bool util_est_single_ewma() const { return version_.util_est_single_ewma; }
  bool util_est_capacity_check() const { return version_.util_est_capacity_check; }
  bool util_est_dequeue_skips_delayed() const { return version_.util_est_dequeue_skips_delayed; }
  bool util_est_update_first() const { return version_.util_est_update_first; }
  bool misfit_skips_biggest_allowed() const { return version_.misfit_skips_biggest_allowed; }
  // cpu_bw_dl(): the DL running bandwidth of `cpu` in capacity units (only
  // the fair server's here: the model has no SCHED_DEADLINE tasks).
  uint64_t cpu_bw_dl(const Rq& rq) const { return rq.fair_server.bw_running ? fair_server_cpu_bw_ : 0; }
  bool rt_throttling_enabled() const { return rt_throttling_; }
  const KernelVersionInfo& version_info() const { return version_; }
  SchedClass& class_of(const Task& p) { return *classes_[static_cast<size_t>(p.sched_class)]; }

  // --- used by the scheduling classes
  void resched_curr(Rq& rq);
  // The reason for the decision a class is about to take (a reschedule
  // request, a preemption verdict): a static string that --log debug
  // prints with the tick's or wakeup_preempt()'s line. One pointer store,
  // whatever the log level; the simulation never reads it.
  void note_why(const char* why) { why_ = why; }
  // `schedlab run --why`: count each decision by kind, task group and
  // reason (the same static strings) from now on. Off by default: one
  // flag test per decision. The kinds are kDecisionKinds, in this order.
  enum class Decision : uint8_t { kPlacement, kPreemption, kTick, kPick, kIdle, kBalance, kTimer };
  void start_decision_counts() { count_decisions_ = true; }
  void count_decision(Decision d, const std::string& group, const char* why) {
    if (count_decisions_) [[unlikely]]
      ++decision_counts_[{static_cast<uint8_t>(d), &group, why}];
  }
  // The counts as (kind, group, reason, count), sorted for reports.
  std::vector<DecisionCount> decision_counts() const;
  bool counting_decisions() const { return count_decisions_; }
  // A stable copy of `text` for a reason built at run time (--why only).
  const char* intern_reason(std::string text);
  // wakeup_preempt() (core.c): the class's check when p's class is rq's
  // current one's, else a resched when p's class is higher.
  void wakeup_preempt(Rq& rq, Task& p, int wake_flags);
  void resched_curr_lazy(Rq& rq);
  // __block_task(): p, dequeued to sleep (at once, or once a delayed
  // dequeue completes), leaves rq's count of runnable tasks.
  void block_task(Rq& rq, Task& p);
  // Moves a queued, not running task to dst_cpu (detach_task +
  // attach_task / move_queued_task), with wakeup_preempt on dst.
  void move_queued_task(Task& p, int dst_cpu);
  // The class's enqueue_task() after account_entity_enqueue()'s cfs_tasks
  // move (shared by enqueue_task() and activate_task()).
  void class_enqueue(Rq& rq, Task& p, int flags);
  // detach_task(): off its rq, its CPU set to dst_cpu, not yet enqueued.
  void detach_task(Task& p, int dst_cpu);
  // attach_task(): enqueued on its (new) CPU, with wakeup_preempt there.
  void attach_task(Task& p);
  // list_move() to the head of rq->cfs_tasks (enqueue, pick, a task the
  // balancer skipped): the balancer walks from the tail, coldest first.
  void cfs_tasks_move_to_head(Task& p) { p.se.cfs_tasks_seq = ++cfs_tasks_clock_; }
  // available_idle_cpu() / idle_cpu(): idle (not the idle task standing in
  // for the active-balance stopper, which is rq->curr in the kernel until
  // its __schedule() switches) and nothing queued or waking
  // there (rq->ttwu_pending: a wake-up on its way by IPI keeps the CPU from
  // counting as idle, so simultaneous wake-ups spread out), and not still
  // running try_to_wake_up() calls for a task that has blocked since.
  bool cpu_idle(int cpu) const {
    const Rq& rq = *rqs_[cpu];
    return rq.idle_task_runs() && rq.nr_running == 0 && rq.ttwu_pending == 0 && rq.ttwu_busy_until <= now();
  }
  // Fair server (6.12 dl_server): fair runtime counts against its budget.
  void fair_server_account(Rq& rq, int64_t delta_fair_ns);
  Time clock() const { return sim_.now(); }
  const std::vector<SchedObserver*>& observers() const { return observers_; }
  // cpuidle: on when a governor other than "none" runs on some CPU.
  bool cpuidle_enabled() const { return cpuidle_; }
  const CpuidleDomain& cpuidle_domain(int i) const { return idle_domains_[static_cast<size_t>(i)]; }
  // The earliest live hrtimer queued on cpu (Time::max() if none).
  Time next_hrtimer(int cpu);

  // InstantEndHook: deferred __schedule() of every flagged CPU.
  bool on_instant_end() override;
  // InstantEndHook: an instant that never ends. The first call starts
  // counting each task's actions, switch-ins and wake-ups; the second
  // throws ModelError naming the busiest tasks.
  void on_long_instant(Time now, bool again) override;
  void note_stall_activity(const Task& p);
  void on_event(uint64_t tag) override;

 private:
  enum class Ev : uint8_t {
    kWorkDone, kTick, kRtPeriod, kStart, kWakeStart, kWakeDeferred, kTtwuDone, kResched, kServer, kIlb, kIdleStep, kClockEvent,
    kIrqWork, kServerInactive, kActiveBalance, kSugovIrqWork, kIdleGovTimer, kClusterGovTimer, kClusterPowerOn
  };
  static uint64_t tag(Ev e, uint64_t arg) { return (static_cast<uint64_t>(e) << 56) | arg; }

  SchedClassId class_for(const Task& p) const;
  void setup_tunables();
  void activate_task(Rq& rq, Task& p, int flags);
  // enqueue_task() / dequeue_task() of core.c: the class's, with the uclamp
  // refcount after the enqueue (ENQUEUE_DELAYED may clear sched_delayed)
  // and before the dequeue (which may mark the task sched_delayed).
  void enqueue_task(Rq& rq, Task& p, int flags);
  bool dequeue_task(Rq& rq, Task& p, int flags);
  void uclamp_rq_inc(Rq& rq, Task& p, int flags = 0);
  void uclamp_rq_dec(Rq& rq, Task& p);
  // static_branch_enable(&sched_uclamp_used).
  void enable_uclamp();
  // __setscheduler_uclamp() without clamp flags (a policy change): clamps
  // the user did not set go back to their defaults for p's new class.
  void uclamp_reset_defaults(Task& p);
  // The root group and the scenario's cpu cgroups (init_uclamp(),
  // sched_create_group() + alloc_uclamp_sched_group(), css_online()'s
  // cpu_util_update_eff(), then the scenario's cpu.uclamp writes).
  void setup_task_groups();
  // The group entities and cfs_rqs of the groups with a cpu weight
  // (alloc_fair_sched_group(), init_tg_cfs_entry(), online_fair_sched_group()).
  void setup_fair_groups();
  struct FairGroupRq {
    SchedEntity se;  // tg->se[cpu]
    CfsRq cfs;       // tg->cfs_rq[cpu]
  };
  size_t fair_group_slot(int group, int cpu) const {
    return static_cast<size_t>(group) * rqs_.size() + static_cast<size_t>(cpu);
  }
  // ModelError unless `group` is a level of the fair hierarchy.
  void require_fair_level(int group) const;
  // tg_is_idle(): a level's cpu.idle (its cfs_rqs carry the mark).
  bool tg_is_idle(int group) const { return fair_group_rqs_[fair_group_slot(group, 0)]->cfs.idle; }
  // __sched_group_set_shares() for an unscaled, in-range value.
  void set_group_shares(int group, int64_t shares);
  // cpu_util_update_eff() from `group` down, pre-order.
  void cpu_util_update_eff(int group);
  // uclamp_update_active(): a refcounted task leaves and rejoins its rq's
  // buckets with its current effective clamps.
  void uclamp_update_active(Task& p);
  // The dequeue / put_prev ... enqueue / set_next pattern around a change
  // of a task's scheduling attributes (rt_mutex_setprio(),
  // __sched_setscheduler()).
  struct SchedChange {
    Rq* rq;
    bool queued;
    bool running;
    int saved_event_cpu;
    bool move;  // DEQUEUE_MOVE / ENQUEUE_MOVE: cleared when the effective priority stays
  };
  // set_load_weight() inside a change (setscheduler.cc): p's weight for
  // `policy` and `nice`, reweighted in the fair class it was in.
  void set_load_weight(Task& p, SchedClassId old_class, Policy policy, int nice);
  // `class_change`: p's scheduling class changes with it (only then is a
  // delayed task fully dequeued first).
  SchedChange sched_change_begin(Task& p, bool move, bool class_change);
  void sched_change_end(Task& p, const SchedChange& c, int extra_flags);
  void check_class_changed(Rq& rq, Task& p, SchedClassId old_class, int old_prio);
  void deactivate_blocking(Rq& rq, Task& prev);
  void migration_cpu_stop(Rq& rq);
  void switch_to_stopper(Rq& rq, Task& prev, TaskState prev_state);
  void ttwu_do_activate(Rq& rq, Task& p, int wake_flags, const Task* waker);
  void ttwu_place(Task& p, const Task* waker, int from_cpu, int wake_flags);
  void set_task_cpu(Task& p, int cpu);
  int select_task_rq(Task& p, int wake_flags);
  bool can_preempt_now(const Rq& rq) const;
  void schedule(Rq& rq);
  Task* pick_next_task(Rq& rq);
  void switch_to(Rq& rq, Task& prev, Task& next, TaskState prev_state);
  void mutex_spin_switched_out(Task& prev);  // prev.mutex_spin_watch: tell the mutexes
  void enter_idle(Rq& rq);
  // Work accounting of curr's current action.
  void account_progress(Rq& rq);
  void arm_work_timer(Rq& rq);
  void continue_current(Rq& rq);
  void advance_current(Rq& rq);
  void on_work_done(Rq& rq);
  void scheduler_tick(Rq& rq);
  void arm_tick(Rq& rq);
  void rt_period_timer();
  void update_curr(Rq& rq);
  // Fair server (fair_server.cc).
  void fair_server_timer(Rq& rq);
  void fair_server_update_active(Rq& rq);
  void fair_server_new_period(Rq& rq);
  void fair_server_replenish(Rq& rq);
  void fair_server_stop(Rq& rq);
  void fair_server_arm_timer(Rq& rq, Time expires);
  void fair_server_inactive_timer(Rq& rq);
  void fair_server_charge_idle(Rq& rq);
  void fair_server_sub_running_bw(Rq& rq);
  // cpuidle (sched/idle.cc, cpuidle/cpuidle.cc, cpuidle/hrtimer.cc).
  void setup_cpuidle(const PlatformParams& platform);
  void do_idle(Rq& rq);                    // cpuidle_idle_call() for an idle CPU
  void idle_tick(Rq& rq);                  // the tick on an idle CPU that kept it
  void cpuidle_enter_state(Rq& rq);        // the selected state is entered
  // An interrupt reaches an idle CPU (`timer_irq`: the local timer's, for
  // an hrtimer whose expiry came or was cancelled; the tick's is one too).
  void idle_wake(Rq& rq, bool tick, bool timer_irq = false);
  void idle_exit_done(Rq& rq);             // exit latency over: cpu_idle -1, reflect
  void idle_step(Rq& rq);                  // Ev::kIdleStep
  int cpu_power_down_ok(CpuidleDomain& d);
  // genpd's power-off of d into state k with qcom-cpu-lpm's notifier
  // (GENPD_NOTIFY_PRE_OFF) on rq's CPU, the last down: k, or -1 if refused.
  int qcom_cluster_pre_off(CpuidleDomain& d, int k, Rq& rq);
  void qcom_cluster_power_on(CpuidleDomain& d);  // GENPD_NOTIFY_ON
  // WALT's sched_update_nr_prod(cpu, enq) on an enqueue (+1) or dequeue
  // (-1) of rq's CPU, before the class's: update_busy_hyst_end_time().
  void walt_update_busy_hyst(Rq& rq, int enq);
  // An IPI sent to `cpu` (trace_ipi_raise) / its handler starting there
  // (trace_ipi_entry): what qcom-cpu-lpm's IPI history and pending flag see.
  void ipi_raise(int cpu) {
    if (auto& g = rqs_[static_cast<size_t>(cpu)]->cpuidle.gov) g->ipi_raised(now());
  }
  void ipi_entry(int cpu) {
    if (auto& g = rqs_[static_cast<size_t>(cpu)]->cpuidle.gov) g->ipi_handled();
  }
  // ipi_entry() for an IPI whose raise set `pending` (cleared here).
  void ipi_entry_if(bool& pending, int cpu) {
    if (!pending) return;
    pending = false;
    ipi_entry(cpu);
  }
  Time cpu_next_event(int cpu);            // next hrtimer or kept tick (dev->next_hrtimer)
  void emit_cpu_idle(int cpu, int state);
  // `drop_stale`: also drop the base's stale entries (a scan that looks at
  // every entry's Timer); otherwise only t's earlier entry is dropped.
  void hrtimer_enqueue(Timer& t, Time expires, int cpu, bool drop_stale = true);
  void defer_hrtimers_to_idle_step(Rq& rq, bool timer_irq = false, bool tick = false);
  void hrtimer_forget(const Timer& t);
  void walk_soft_expired_hrtimers(Rq& rq, Time at, HrtimerIrq irq, const Timer* expired);  // at >= range_min_soft

  friend class FairServer;
  friend class SugovKthread;

  KernelParams params_;
  SchedFeatures features_;
  KernelVersionInfo version_;  // the modelled version's switches (kernel_versions.h)
  std::vector<RngStream> sched_rng_;  // per CPU (seed_sched_rng())
  Task stop_task_;                    // the stopper, as prev of the __schedule() after an active balance
  bool fair_server_enabled_ = false;
  // cpu_bw_dl() of a CPU whose rq->dl.running_bw holds the fair server:
  // to_ratio(period, runtime) (BW_SHIFT 20) scaled to 1024, 51 for 50 ms / 1 s.
  uint64_t fair_server_cpu_bw_ = 0;
  uint64_t fair_server_density_ = 0;      // dl_density: to_ratio(dl_deadline = period, runtime)
  bool fair_server_lazy_stop_ = false;    // 6.17+: stopped by its timer, not by the last dequeue
  bool dl_server_revised_wakeup_ = false; // 6.18: revised wake-up rule, starved mode left at a new period
  bool rt_throttling_ = true;
  Time tick_nsec_;
  std::vector<RangeHrtimerRef> range_run_scratch_;  // run_soft_expired_hrtimers(): reserved, no allocation
  int64_t base_slice_ = 0, sched_latency_ = 0, min_granularity_ = 0, wakeup_granularity_ = 0;
  int64_t rr_timeslice_ticks_ = 0;

  Simulator sim_;
  std::vector<std::unique_ptr<Rq>> rqs_;
  std::vector<std::unique_ptr<Task>> tasks_;
  std::vector<uint64_t> stall_activity_;  // per task, while on_long_instant() probes (else empty)
  std::vector<std::unique_ptr<Task>> idle_tasks_;
  std::array<std::unique_ptr<SchedClass>, 5> classes_;  // indexed by SchedClassId
  std::vector<SchedObserver*> observers_;
  std::vector<SchedObserver*> util_observers_;  // those of observers_ that want on_cpu_util()
  std::vector<KernelMutex*> kernel_mutexes_;    // register_kernel_mutex()
  std::vector<FreqDomain> domains_;
  bool asym_capacity_ = false;
  // struct root_domain of 6.12 (one root domain spans every CPU): the flags
  // are latched -- set on enqueue and tick paths, rewritten only by a load
  // balance statistics pass over the whole domain (update_sd_lb_stats()).
  bool energy_enabled_ = false;   // sched_energy_present
  std::vector<size_t> perf_domain_order_;  // domains_ in rd->pd list order
  uint32_t rd_max_cpu_capacity_ = kSchedCapacityScale;  // rd->max_cpu_capacity (set with the platform)
  UclampSystem uclamp_sys_;       // bucket layout and sysctls
  bool uclamp_used_ = false;      // sched_uclamp_used static key
  std::vector<UclampTaskGroup> task_groups_;  // cpu cgroups; [0] = the root group
  std::vector<uint64_t> fair_group_shares_;   // per cpu cgroup: tg->shares (scaled), 0 without a cpu weight
  std::vector<int64_t> fair_group_load_avg_;  // per cpu cgroup: tg->load_avg (sum of its cfs_rqs' contributions)
  // [group * nr_cpus + cpu]: set for groups with a cpu weight; empty when none has one.
  std::vector<std::unique_ptr<FairGroupRq>> fair_group_rqs_;
  bool rd_overutilized_ = false;  // rd->overutilized
  bool rd_overloaded_ = false;    // rd->overloaded
  // A throttled rt_rq's tasks are out of rq->nr_running (6.1/6.6 rt.c:
  // sched_rt_rq_dequeue() took them out; enqueue_top_rt_rq() and
  // dequeue_top_rt_rq() return early while throttled): they neither join
  // nor leave it until the period timer puts them back.
  static bool rt_uncounted(const Rq& rq, const Task& p) {
    return p.sched_class == SchedClassId::kRt && rq.rt.rt_throttled;
  }
  // add_nr_running(): `count` more entities on rq; a second one overloads
  // the root domain (set_rd_overloaded(rd, 1) when going from < 2 to >= 2).
  void add_nr_running(Rq& rq, int count = 1) {
    const int prev_nr = rq.nr_running;
    rq.nr_running += count;
    if (prev_nr < 2 && rq.nr_running >= 2) rd_overloaded_ = true;
  }
  void add_nr_running(Rq& rq, const Task& p) {
    if (!rt_uncounted(rq, p)) add_nr_running(rq);
  }
  // sub_nr_running() once p's dequeue is complete. For a fair task, as
  // Whether a queued fair task counts in its CPU's idle_h_nr_running:
  // SCHED_IDLE, or queued below a cpu.idle level (enqueue_task_fair()'s
  // walk counts it as idle from the first idle cfs_rq up).
  static bool task_h_idle(const Task& p) {
    if (p.policy == Policy::kIdle) return true;
    for (const SchedEntity* se = &p.se; se; se = se->parent)
      if (se->cfs_rq && se->cfs_rq->idle) return true;
    return false;
  }
  // dequeue_entities() (6.12 fair.c): a CPU left with only SCHED_IDLE
  // tasks that had others before balances at its next tick ("balance
  // early to pull high priority tasks").
  void sub_nr_running(Rq& rq, const Task& p) {
    if (rt_uncounted(rq, p)) return;
    const bool fair = p.sched_class == SchedClassId::kFair;
    const bool was_sched_idle = fair && rq.nr_running == rq.cfs.idle_h_nr_running + (task_h_idle(p) ? 1 : 0);
    --rq.nr_running;
    if (fair && !was_sched_idle && sched_idle_rq(rq)) rq.next_balance = jiffies();
  }
  // p->max_allowed_capacity by task index: set when the task is created,
  // and (6.10+) by set_cpus_allowed_fair() and switched_to_fair()
  // (set_task_max_allowed_capacity()).
  std::vector<uint32_t> max_allowed_cap_;
  // fair_smp.cc internals
  int find_energy_efficient_cpu(Task& p, int prev_cpu);
  int select_idle_sibling(Task& p, int prev, int target, int kthread_cpu);
  void sync_entity_load_avg(Task& p);
  int select_idle_capacity(Task& p, int target);
  int wake_affine(Task& p, int this_cpu, int prev_cpu, bool sync);
  int sched_balance_find_dst_cpu(Task& p, int this_cpu);
  // update_newidle_cost(): a pass's cost raises the domain's maximum, which
  // otherwise decays ~1% a second. True when it decayed.
  bool update_newidle_cost(Rq& rq, int64_t cost);
  // sched_rng(): this CPU's pseudo-random stream (prandom_u32_state() of
  // sched_rnd_state in the kernel; here a stream per CPU from the run's seed).
  uint32_t sched_rng(const Rq& rq) { return static_cast<uint32_t>(sched_rng_[static_cast<size_t>(rq.cpu)].engine()()); }
  // _nohz_idle_balance() run by this_cpu: blocked-load updates of the nohz
  // idle CPUs (kNohzStatsKick), their periodic balance when due
  // (kNohzBalanceKick), nohz.next_balance (kNohzBalanceKick, kNohzNextKick).
  void nohz_idle_balance(int this_cpu, unsigned flags);
  // nohz_balancer_kick() from a busy CPU's tick, and kick_ilb().
  void nohz_balancer_kick(Rq& rq);
  void kick_ilb(int this_cpu, unsigned flags);
  // nohz_balance_enter_idle(): rq's tick stopped while idle; its PELT
  // signals are left to decay by the others' stats kicks, and it joins
  // nohz.idle_cpus_mask.
  void nohz_balance_enter_idle(Rq& rq) {
    rq.has_blocked_load = true;
    if (!rq.nohz_tick_stopped) {
      if (nr_cpus() == 1) return;  // on_null_domain(): not an idle CPU to balance for
      rq.nohz_tick_stopped = true;
      ++nohz_nr_cpus_;
      nohz_needs_update_ = true;
    }
    nohz_has_blocked_ = true;
  }
  // nohz_balance_exit_idle(): at rq's first busy tick.
  void nohz_balance_exit_idle(Rq& rq) {
    if (!rq.nohz_tick_stopped) return;
    rq.nohz_tick_stopped = false;
    --nohz_nr_cpus_;
  }
  // sched_balance_update_blocked_averages(): decay rq's RT and CFS signals
  // to now, and tell cpufreq when they changed.
  void sched_balance_update_blocked_averages(Rq& rq);
  // update_nohz_stats(): the above for an idle CPU, at most once a jiffy.
  // True while it still has blocked load.
  bool update_nohz_stats(Rq& rq);
  // nohz_newidle_balance(): a CPU going idle runs the stats update itself
  // when one is due (NOHZ_NEWILB_KICK, run before it enters idle).
  void nohz_newidle_balance(Rq& rq);
  // nohz_run_idle_balance(): at do_idle()'s start, the update
  // nohz_newidle_balance() asked for, unless a kick is pending (its
  // softirq does the same) or the CPU is to reschedule.
  void nohz_run_idle_balance(Rq& rq);
  bool nohz_has_blocked_ = false;  // nohz.has_blocked
  int64_t nohz_next_blocked_ = 0;  // nohz.next_blocked (jiffies)
  int64_t nohz_next_balance_ = 0;  // nohz.next_balance (jiffies)
  bool nohz_needs_update_ = false; // nohz.needs_update
  int nohz_nr_cpus_ = 0;           // nohz.nr_cpus: CPUs in nohz.idle_cpus_mask
  uint64_t nohz_balance_passes_ = 0;
  void setup_platform(const PlatformParams& platform);
  void setup_uclamp();
  void set_domain_freq(FreqDomain& d, uint64_t khz);
  void setup_sugov_kthreads(const PlatformParams& platform);
  // d's governor decided `khz` in the scheduler hook: the driver switches
  // now (fast switch, every governor but a slow-path schedutil)
  // or the sugov:N kthread will (sugov_deferred_update()).
  void cpufreq_commit(FreqDomain& d, uint64_t khz);
  // sugov_irq_work() on this CPU: queue the kthread_work of every domain
  // that raised it here.
  void sugov_irq_work(Rq& rq);
  void explain_schedutil(const FreqDomain& d, uint64_t khz) const;
  void explain_sched_pixel(const FreqDomain& d, const SchedPixelGovernor& g, uint64_t khz) const;
  Timer rt_period_timer_;
  bool rt_period_active_ = false;  // rt_b->rt_period_active
  int rt_period_cpu_ = 0;          // the CPU whose hrtimer base holds it
  // Its hrtimer's expiry (hrtimer_get_expires()): the grid it is forwarded
  // on, kept apart from the event's time, which a CPU in its idle exit
  // defers (hrtimer_enqueue()).
  Time rt_period_expires_;
  bool cpuidle_ = false;                   // a cpuidle governor runs on some CPU
  Time cpuidle_latency_req_ = Time::max(); // PM QoS CPU latency limit
  std::vector<CpuidleDomain> idle_domains_;
  // kernel.cpuidle.walt_*, one per CPU (off: walt_hyst_ false).
  bool walt_hyst_ = false;
  std::vector<Time> walt_busy_hyst_;
  std::vector<Time> walt_util_busy_hyst_;
  std::vector<uint32_t> walt_util_busy_hyst_util_;
  int event_cpu_ = -1;  // the CPU whose event is being handled (-1: none)
  const char* why_ = nullptr;  // note_why(): read by the debug log and --why only
  bool count_decisions_ = false;
  std::map<std::tuple<uint8_t, const std::string*, const char*>, uint64_t> decision_counts_;
  std::vector<std::string> cpu_names_;  // "cpu0"...: the group of idle-state and balance decisions
  std::map<std::string, std::unique_ptr<std::string>> interned_reasons_;
  // CPUs that may need __schedule() at the end of this instant.
  std::vector<uint64_t> resched_mask_;
  // sched_balance_rq()'s CPUs taken out of env->cpus by the LBF_ALL_PINNED
  // redo (one flag per CPU, all clear between passes).
  std::vector<uint8_t> lb_excluded_;
  // sd_llc_id per CPU (update_top_cache_domain(), from the platform's
  // topology): cpus_share_cache() for ttwu_queue_cond(). All 0 (one LLC)
  // for a platform of identical CPUs.
  std::vector<int> llc_id_;
  std::vector<std::vector<CpuMask>> wake_affine_spans_;
  // rq->cfs_tasks' order as a stamp per task (SchedEntity::cfs_tasks_seq).
  uint64_t cfs_tasks_clock_ = 0;
  // detach_tasks()'s walk of the busiest CPU's tasks and env->tasks (sized
  // with the task set: no allocation while balancing).
  std::vector<Task*> lb_walk_, lb_detached_;
  // The RT priorities some task has had as its normal priority (a PI or
  // binder boost lends one of these): each CPU's FIFO at such a priority
  // has room for every task, so an RT enqueue never allocates.
  std::bitset<kMaxRtPrio> rt_prios_in_use_;
  void reserve_rt_queue(int prio);
  void mark_resched(int cpu) { resched_mask_[static_cast<size_t>(cpu) >> 6] |= 1ULL << (cpu & 63); }
};

}  // namespace schedlab
