// struct task_struct, reduced to what scheduling needs (include/linux/sched.h).
#pragma once

#include <bitset>
#include <cstdint>
#include <string>
#include <vector>

#include "models/kernel/sched/observer.h"
#include "models/hw/platform.h"
#include "models/kernel/sched/pelt.h"
#include "models/kernel/sched/uclamp.h"
#include "models/kernel/sched/vruntime_tree.h"
#include "models/workload/task_spec.h"
#include "sim/time.h"

namespace schedlab {

class TaskBody;
class KernelMutex;
class RtMutex;
struct CfsRq;
struct Task;

// Kernel priority values (include/linux/sched/prio.h): 0..99 RT (lower is
// higher priority: prio = MAX_RT_PRIO-1 - rt_priority), 100..139 fair
// (prio = 120 + nice).
inline constexpr int kMaxRtPrio = 100;
inline constexpr int kDefaultPrio = 120;
inline constexpr int nice_to_prio(int nice) { return kDefaultPrio + nice; }
inline constexpr int rt_priority_to_prio(int rt_priority) { return kMaxRtPrio - 1 - rt_priority; }
// SCHED_DEADLINE tasks all have prio MAX_DL_PRIO-1 = -1 (dl_prio());
// rt_prio() leaves them out (6.12 include/linux/sched/rt.h).
inline constexpr int kDlPrio = -1;
inline constexpr bool dl_prio(int prio) { return prio < 0; }
inline constexpr bool rt_prio(int prio) { return prio < kMaxRtPrio && prio >= 0; }

// cpumask_t: a fixed-size bitset (tests a bit without the indirection and
// bit arithmetic of std::vector<bool>; placement loops test it per CPU).
using CpuMask = std::bitset<kMaxCpus>;

// struct sched_entity (fair class state).
struct SchedEntity {
  uint64_t weight = 1024;        // load.weight, scale_load_down()ed
  uint32_t inv_weight = 0;       // 2^32 / weight (sched_prio_to_wmult)
  int64_t vruntime = 0;
  int64_t deadline = 0;
  int64_t vlag = 0;              // also stashes the deadline at pick (RUN_TO_PARITY, <= 6.16)
  int64_t vprot = 0;             // 6.17+: vruntime up to which current is protected
  // Writes the lag. 6.17+ (6.18.35 include/linux/sched.h) keeps vlag and
  // vprot in one union, so a lag written for the running entity (a
  // sched_change's dequeue and reweight, reweight_entity(), a delayed
  // requeue) is what protect_slice() reads afterwards:
  // set_next_entity(first = false) does not set the protection again, and
  // the next update_curr() with company reschedules. Every lag write goes
  // through here (a fresh pick sets vprot anew; vlag is always written
  // before it is read, so the other direction is never seen). (The kernel
  // compares that lag with an absolute vruntime counted from
  // zero_vruntime's -(1 << 20), the model from 0: they can differ only in
  // a queue's first couple of milliseconds.)
  void set_vlag(int64_t lag, bool shares_vprot) {
    vlag = lag;
    if (shares_vprot) vprot = lag;
  }
  int64_t slice = 0;
  int64_t sum_exec_runtime = 0;
  int64_t prev_sum_exec_runtime = 0;
  int64_t exec_start = 0;
  uint64_t tree_seq = 0;         // insertion order: ties in the rbtree go right
  uint64_t cfs_tasks_seq = 0;    // place in rq->cfs_tasks: higher = nearer the head (enqueued or picked later)
  bool on_rq = false;
  bool sched_delayed = false;    // DELAY_DEQUEUE: blocked but still queued
  bool rel_deadline = false;     // PLACE_REL_DEADLINE: deadline kept relative
  bool custom_slice = false;
  bool in_tree = false;          // in the timeline (curr is kept out of it)
  VruntimeTreeNode tree;         // 6.6's run_node and min_deadline (CfsRq::vruntime_tree)
  SchedAvg avg;                  // PELT (se->avg)
  // se->cfs_rq: the cfs_rq it is (to be) queued on, set by set_task_rq()
  // (Kernel::set_task_cpu()); task: task_of(), the task it schedules, null
  // for a group entity. parent: the group entity above (null on the root
  // cfs_rq); my_q: a group entity's own cfs_rq (entity_is_task() = !my_q);
  // depth: 0 on the root cfs_rq.
  CfsRq* cfs_rq = nullptr;
  Task* task = nullptr;
  SchedEntity* parent = nullptr;
  CfsRq* my_q = nullptr;
  int depth = 0;
  // A group entity's runnable_weight (se_update_runnable()): its cfs_rq's
  // h_nr_running - h_nr_delayed, PELT's runnable input for it.
  uint32_t runnable_weight = 0;
  // A group entity's load.weight at full resolution (scaled by 1024, as
  // calc_group_shares() computes it; `weight` is its scale_load_down()).
  // A task's is always weight << 10 (scaled_weight()).
  uint64_t group_weight_scaled = 0;
  uint64_t scaled_weight() const { return my_q ? group_weight_scaled : weight << 10; }
};

// struct sched_rt_entity.
struct SchedRtEntity {
  int64_t time_slice_ticks = 0;  // RR: ticks left
  bool on_rq = false;
  // An attribute change without DEQUEUE_MOVE leaves the entity where it was
  // in its priority's list (move_entity()): its index while dequeued.
  size_t saved_pos = 0;
  // In its rq's rt.pushable_tasks plist (queued, not current, allowed on
  // more than one CPU), and its place among equal priorities there.
  bool pushable = false;
  uint64_t pushable_seq = 0;
};

// struct sched_dl_entity, for the only SCHED_DEADLINE tasks modelled:
// schedutil's sugov:N kthreads, whose SCHED_FLAG_SUGOV makes them
// "special" (dl_entity_is_special(), 6.12 deadline.c): their runtime is
// never charged or throttled and their bandwidth is not accounted, so
// they only order by deadline (models/kernel/sched/deadline.cc).
struct SchedDlEntity {
  Time dl_runtime;   // sched_attr.sched_runtime
  Time dl_deadline;  // sched_attr.sched_deadline (relative)
  Time dl_period;    // sched_attr.sched_period
  Time deadline;     // absolute deadline of the current instance
  bool on_rq = false;
  Task* next = nullptr;  // the rq's deadline-ordered list (the kernel's rb-tree)
};

enum class SchedClassId : uint8_t { kStop, kDeadline, kRt, kFair, kIdle };

// The CPU every task is forked on (its parent's; an assumption: what the
// parent runs, and where, is not modelled). Placement then moves the child.
inline constexpr int kForkCpu = 0;

struct Task {
  int pid = 0;
  std::string comm;              // no spaces (ftrace prints it bare)
  std::string group;             // the TaskSpec it came from
  Policy policy = Policy::kNormal;
  int static_prio = kDefaultPrio;  // 120 + nice
  int normal_prio = kDefaultPrio;  // from policy: RT prio or static_prio
  int prio = kDefaultPrio;         // effective (PI-boosted) priority
  int rt_priority = 0;
  SchedClassId sched_class = SchedClassId::kFair;
  CpuMask cpus_allowed;            // p->cpus_mask: bit c set if the task may run on CPU c
  int nr_cpus_allowed = 0;         // p->nr_cpus_allowed: cpus_allowed.count(), kept with the mask
  int cpu = 0;                     // CPU whose rq holds (or last held) the task
  // p->wake_cpu: the prev_cpu the next wake-up's select_task_rq() starts
  // from; set_task_cpu() keeps it equal to cpu, kick_pool() may move it.
  int wake_cpu = 0;
  int recent_used_cpu = 0;         // p->recent_used_cpu (select_idle_sibling)
  TaskState state = TaskState::kNew;
  bool on_rq = false;              // p->on_rq: queued (including sched_delayed)
  bool on_cpu = false;             // currently running
  bool kernel_thread = false;
  bool is_idle_task = false;
  // p->timer_slack_ns and p->default_timer_slack_ns (6.12): the slack of
  // the task's hrtimer sleeps (hrtimer_nanosleep()); 0 under an RT policy
  // (__setscheduler_params()), the default again when it leaves it.
  Time timer_slack;
  Time default_timer_slack;

  SchedEntity se;
  SchedRtEntity rt;
  SchedDlEntity dl;
  // uclamp (CONFIG_UCLAMP_TASK): p->uclamp_req[] as requested (or the
  // defaults), p->uclamp[] the effective values refcounted on its rq while
  // runnable. Indexed by UclampId.
  std::array<UclampSe, kUclampCnt> uclamp_req{};
  std::array<UclampSe, kUclampCnt> uclamp{};
  int task_group = 0;  // task_group(p): index into the kernel's cpu cgroups; 0 = root

  // Priority inheritance: mutexes held and the one blocked on.
  std::vector<RtMutex*> held_mutexes;
  RtMutex* blocked_on = nullptr;
  // struct mutex (KernelMutex): the mutex p spins on, if any (a
  // need_resched() set on its CPU ends the spin); how its last spin ended,
  // for the lock attempt's next step (KernelMutex::SpinEnd); and whether
  // p's switch-out concerns a mutex (p spins, or owns one while others
  // spin; cleared lazily at the switch-out).
  KernelMutex* mutex_spinning_on = nullptr;
  uint8_t mutex_spin_end = 0;
  bool mutex_spin_watch = false;

  TaskBody* body = nullptr;       // what the task does (behaviour)
  uint32_t index = 0;             // position in the system's task table

  // What the task is doing on the CPU: the model's stand-in for the code
  // it executes. Work is capacity-time (ns at capacity 1024 and f_max).
  enum class Act : uint8_t { kNone, kRun, kRunWall, kBlocked, kYielded, kExited };
  Act act = Act::kNone;
  int64_t work_left = 0;           // kRun
  Time wall_end;                   // kRunWall
  // Completed CPU work (capacity-ns at 1024 and f_max) of every kRun and
  // kRunWall action so far: what the CPU executed for this task, the
  // numerator of a benchmark's score. Accounted where the kernel accounts
  // progress (Kernel::account_progress(), on_work_done()); while the task
  // runs, the part since the last accounting is work_done_at(t) -
  // work_done. Kept for metrics (models/metrics/recorder.cc); the
  // scheduler never reads it.
  int64_t work_done = 0;
  // Set by switch_to() while the task is on a CPU: that rq's rate (work
  // per ns, 2^20 = capacity 1024 at f_max) and progress start
  // (rq.seg_start); when the progress began after the switch-in; and the
  // time and rate of the last accounting (a rate change is accounted at the
  // old rate first). The recorder splits work at its window start with them.
  const uint32_t* progress_rate = nullptr;
  const Time* progress_since = nullptr;
  Time switched_in;
  Time accounted_at = Time::ns(-1);
  uint32_t accounted_rate = 0;
  bool wake_pending = false;       // a deferred (wakeup-cost / IPI) enqueue is in flight
  bool wake_ipi = false;           // ... through the target's wake list (its IPI is pending there)
  bool in_iowait = false;          // p->in_iowait: blocked in io_schedule() until it runs again
  uint64_t ttwu_wake_flags = 0;
  // When its try_to_wake_up() starts, if it waits for its waker's CPU to
  // reach the call (wake_pending is set meanwhile); Time::max() otherwise.
  Time ttwu_start_at = Time::max();
  int ttwu_from_cpu = -1;          // the CPU running its try_to_wake_up() (a wake-up waiting its turn)
  int ttwu_enqueue_cpu = -1;       // whose context enqueues it: the target (wake list, local) or the waker (direct remote)
  const Task* last_waker = nullptr; // who woke it last (for the deferred enqueue)
  // record_wakee() / wake_wide() (fair.c): how often this task, as a
  // waker, switched to waking a different task (halved once a second).
  const Task* last_wakee = nullptr;
  uint32_t wakee_flips = 0;
  int64_t wakee_flip_decay_ts = 0;  // jiffies

  int nice() const { return static_prio - kDefaultPrio; }
  bool progressing() const {
    return on_cpu && progress_rate && (act == Act::kRun || act == Act::kRunWall);
  }
  // The work the kernel would have accounted at time t (>= the last
  // accounting), as account_progress() computes it.
  int64_t work_done_at(Time t) const {
    if (!progressing() || t <= *progress_since) return work_done;
    const unsigned __int128 done =
        static_cast<unsigned __int128>((t - *progress_since).count()) * *progress_rate >> 20;
    if (act == Act::kRun && done >= static_cast<unsigned __int128>(work_left)) return work_done + work_left;
    return work_done + static_cast<int64_t>(done);
  }
};

}  // namespace schedlab
