// The fair class as legacy CFS, following kernel/sched/fair.c of Linux 6.1:
// vruntime order, sched_latency / min_granularity periods, the tick's
// check_preempt_tick(), wakeup granularity, sleeper credit and buddies.
// ALT_PERIOD and BASE_SLICE (both on in 6.1) are built in; with one cfs_rq
// level h_nr_running == nr_running.
#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "models/kernel/kernel.h"
#include "models/kernel/sched/classes.h"
#include "models/kernel/sched/fair_common.h"
#include "models/kernel/sched/fair_pelt.h"
#include "models/kernel/sched/weights.h"
#include "sim/log.h"

namespace schedlab {
namespace {

class CfsClass final : public FairClassBase {
 public:
  using FairClassBase::FairClassBase;
  const char* name() const override { return "fair(cfs)"; }

  void enqueue_task(Rq& rq, Task& p, int flags) override;
  bool dequeue_task(Rq& rq, Task& p, int flags) override;
  void yield_task(Rq& rq) override;
  void wakeup_preempt(Rq& rq, Task& p, int wake_flags) override;
  Task* pick_task(Rq& rq) override;
  void put_prev_task(Rq& rq, Task& prev, Task* next) override;
  void set_next_task(Rq& rq, Task& p, bool first) override;
  void task_tick(Rq& rq, Task& curr) override;
  void task_fork(Task& p) override;
  void migrate_task_rq(Task& p, int new_cpu) override;
  void update_curr(Rq& rq) override;
  void switched_to(Rq& rq, Task& p) override;

 private:
  // Tree order: vruntime, then insertion.
  static bool tree_less(const Task* a, const Task* b) {
    if (a->se.vruntime != b->se.vruntime) return a->se.vruntime - b->se.vruntime < 0;
    return a->se.tree_seq < b->se.tree_seq;
  }
  static bool entity_before(const Task& a, const Task& b) { return a.se.vruntime - b.se.vruntime < 0; }
  // clear_buddies() (6.1): the entity stops being any of the three buddies.
  static void clear_buddies(CfsRq& cfs, const SchedEntity& se) {
    if (cfs.next == &se) cfs.next = nullptr;
    if (cfs.last == &se) cfs.last = nullptr;
    if (cfs.skip == &se) cfs.skip = nullptr;
  }
  // The cfs_rq holds entities; 6.1 is modelled without groups, so each is a task.
  static Task* task_of(SchedEntity* se) { return se ? se->task : nullptr; }
  static Task* first_entity(const CfsRq& cfs) {
    Task* best = nullptr;
    for (SchedEntity* se : cfs.timeline)
      if (!best || tree_less(se->task, best)) best = se->task;
    return best;
  }
  // __pick_next_entity(): the entity after `se` in tree order.
  static Task* next_entity(const CfsRq& cfs, const Task* se) {
    Task* best = nullptr;
    for (SchedEntity* e : cfs.timeline)
      if (Task* t = e->task; tree_less(se, t) && (!best || tree_less(t, best))) best = t;
    return best;
  }
  void enqueue_in_tree(CfsRq& cfs, Task& p) {
    p.se.tree_seq = ++cfs.tree_seq;
    p.se.in_tree = true;
    cfs.timeline.push_back(&p.se);
  }
  void dequeue_from_tree(CfsRq& cfs, Task& p) {
    auto it = std::find(cfs.timeline.begin(), cfs.timeline.end(), &p.se);
    if (it != cfs.timeline.end()) cfs.timeline.erase(it);
    p.se.in_tree = false;
  }
  void update_min_vruntime(CfsRq& cfs);
  int64_t sched_period(int nr) const;
  int64_t sched_slice(const CfsRq& cfs, const Task& p) const;
  int64_t sched_vslice(const CfsRq& cfs, const Task& p) const { return vdelta(p.se, sched_slice(cfs, p)); }
  void place_entity(CfsRq& cfs, Task& p, bool initial);
  int wakeup_preempt_entity(const Task& curr, const Task& se) const;
  Task* pick_next_entity(CfsRq& cfs, Task* curr, const char** why);
};

void CfsClass::update_min_vruntime(CfsRq& cfs) {
  const Task* curr = task_of(cfs.curr);
  int64_t vruntime = cfs.min_vruntime;
  if (curr && !curr->se.on_rq) curr = nullptr;
  if (curr) vruntime = curr->se.vruntime;
  if (Task* left = first_entity(cfs))
    vruntime = curr ? std::min(vruntime, left->se.vruntime) : left->se.vruntime;
  cfs.min_vruntime = std::max(cfs.min_vruntime, vruntime);
}

// __sched_period(): sched_latency, stretched once more than sched_nr_latency
// (latency / min_granularity = 8) tasks share it.
int64_t CfsClass::sched_period(int nr) const {
  int64_t nr_latency = k_.sched_latency_ns() / k_.min_granularity_ns();
  if (nr > nr_latency) return nr * k_.min_granularity_ns();
  return k_.sched_latency_ns();
}

// sched_slice(): the entity's weighted share of the period, at least
// min_granularity (BASE_SLICE).
int64_t CfsClass::sched_slice(const CfsRq& cfs, const Task& p) const {
  int64_t slice = sched_period(cfs.nr_running + (p.se.on_rq ? 0 : 1));
  uint64_t load = scale_load_down(cfs.load_weight + (p.se.on_rq ? 0 : p.se.scaled_weight()));
  slice = static_cast<int64_t>(calc_delta(static_cast<uint64_t>(slice), p.se.weight, load, 0));
  return std::max(slice, k_.min_granularity_ns());
}

void CfsClass::update_curr(Rq& rq) {
  CfsRq& cfs = rq.cfs;
  Task* curr = task_of(cfs.curr);
  if (!curr) return;
  int64_t now = k_.clock().count();
  int64_t delta = now - curr->se.exec_start;
  if (delta <= 0) return;
  curr->se.exec_start = now;
  curr->se.sum_exec_runtime += delta;
  curr->se.vruntime += vdelta(curr->se, delta);
  update_min_vruntime(cfs);
  k_.fair_server_account(rq, delta);
}

// place_entity(): new tasks start a vslice behind (START_DEBIT); waking
// tasks get up to half a latency period of credit (GENTLE_FAIR_SLEEPERS),
// never moving backwards.
void CfsClass::place_entity(CfsRq& cfs, Task& p, bool initial) {
  int64_t vruntime = cfs.min_vruntime;
  if (initial && feat(SchedFeat::kStartDebit)) vruntime += sched_vslice(cfs, p);
  if (!initial) {
    int64_t thresh = p.policy == Policy::kIdle ? k_.min_granularity_ns() : k_.sched_latency_ns();
    if (feat(SchedFeat::kGentleFairSleepers)) thresh >>= 1;
    vruntime -= thresh;
  }
  p.se.vruntime = initial ? vruntime : std::max(p.se.vruntime, vruntime);
}

// task_fork_fair(): placed on the target CPU's cfs_rq (the model has no
// parent task), then made relative to min_vruntime for the enqueue.
void CfsClass::task_fork(Task& p) {
  CfsRq& cfs = k_.rq(p.cpu).cfs;
  p.se.vruntime = 0;
  place_entity(cfs, p, true);
  p.se.vruntime -= cfs.min_vruntime;
}

// migrate_task_rq_fair(): a waking task's vruntime leaves relative to the
// old queue's min_vruntime; ENQUEUE_MIGRATED adds the new one's.
void CfsClass::migrate_task_rq(Task& p, int new_cpu) {
  p.se.vruntime -= k_.rq(p.cpu).cfs.min_vruntime;
  fair_migrate_task_pelt(k_, p);
}

void CfsClass::enqueue_task(Rq& rq, Task& p, int flags) {
  CfsRq& cfs = rq.cfs;
  if (p.se.on_rq) return;
  bool renorm = !(flags & kEnqueueWakeup) || (flags & kEnqueueMigrated);
  bool is_curr = cfs.curr == &p.se;
  if (renorm && is_curr) p.se.vruntime += cfs.min_vruntime;
  update_curr(rq);
  if (renorm && !is_curr) p.se.vruntime += cfs.min_vruntime;
  fair_util_est_enqueue(rq, p);
  // enqueue_task_fair() (6.1): the iowait boost request, after util_est.
  if (p.in_iowait) k_.cpufreq_update_util(rq, kSchedCpufreqIowait);
  fair_update_load_avg(k_, rq, rq.cfs, &p.se, kUpdateTg | kDoAttach);
  cfs.load_weight += p.se.scaled_weight();
  ++cfs.nr_running;
  ++cfs.h_nr_running;
  if (p.policy == Policy::kIdle) ++cfs.idle_h_nr_running;
  if (flags & kEnqueueWakeup) place_entity(cfs, p, false);
  if (flags & kEnqueueMigrated) p.se.exec_start = 0;  // migrated: no longer cache hot
  if (!is_curr) enqueue_in_tree(cfs, p);
  p.se.on_rq = true;
}

bool CfsClass::dequeue_task(Rq& rq, Task& p, int flags) {
  CfsRq& cfs = rq.cfs;
  fair_util_est_dequeue(rq, p);
  update_curr(rq);
  fair_update_load_avg(k_, rq, rq.cfs, &p.se, kUpdateTg | ((flags & kDequeueMigrating) ? kDoDetach : 0));
  clear_buddies(cfs, p.se);
  if (&p.se != cfs.curr) dequeue_from_tree(cfs, p);
  p.se.on_rq = false;
  cfs.load_weight -= p.se.scaled_weight();
  --cfs.nr_running;
  --cfs.h_nr_running;
  if (p.policy == Policy::kIdle) --cfs.idle_h_nr_running;
  // Non-sleep dequeues keep vruntime relative for the next enqueue.
  if (!(flags & kDequeueSleep)) p.se.vruntime -= cfs.min_vruntime;
  if ((flags & (kDequeueSave | kDequeueMove)) != kDequeueSave) update_min_vruntime(cfs);
  // 6.1's dequeue_task_fair() learns from the activation last, after the
  // dequeue's update_load_avg().
  fair_util_est_update(k_, rq, p, flags & kDequeueSleep);
  return true;
}

// wakeup_preempt_entity(): should `se` preempt `curr`? 1 when curr is
// ahead by more than the wakeup granularity (scaled to se's weight).
int CfsClass::wakeup_preempt_entity(const Task& curr, const Task& se) const {
  int64_t vdiff = curr.se.vruntime - se.se.vruntime;
  if (vdiff <= 0) return -1;
  int64_t gran = vdelta(se.se, k_.wakeup_granularity_ns());
  return vdiff > gran ? 1 : 0;
}

// pick_next_entity() (6.1): leftmost, unless skip/next/last buddies can
// run without being too unfair.
Task* CfsClass::pick_next_entity(CfsRq& cfs, Task* curr, const char** why) {
  Task* left = first_entity(cfs);
  if (!left || (curr && entity_before(*curr, *left))) left = curr;
  Task* se = left;
  *why = "the smallest vruntime (leftmost)";
  if (cfs.skip && task_of(cfs.skip) == se) {
    Task* second;
    if (se == curr) {
      second = first_entity(cfs);
    } else {
      second = next_entity(cfs, se);
      if (!second || (curr && entity_before(*curr, *second))) second = curr;
    }
    if (second && wakeup_preempt_entity(*second, *left) < 1) {
      se = second;
      *why = "the skip buddy (a yielder) is passed over for the next one";
    }
  }
  if (cfs.next && wakeup_preempt_entity(*cfs.next->task, *left) < 1) {
    se = cfs.next->task;
    *why = "the next buddy (the last wakee), within wakeup_granularity of the leftmost";
  } else if (cfs.last && wakeup_preempt_entity(*cfs.last->task, *left) < 1) {
    se = cfs.last->task;
    *why = "the last buddy (the preempted task), within wakeup_granularity of the leftmost";
  }
  clear_buddies(cfs, se->se);
  return se;
}

Task* CfsClass::pick_task(Rq& rq) {
  CfsRq& cfs = rq.cfs;
  if (!cfs.nr_running) return nullptr;
  Task* curr = task_of(cfs.curr);
  if (curr) {
    if (curr->se.on_rq)
      update_curr(rq);
    else
      curr = nullptr;
  }
  const char* why;
  Task* se = pick_next_entity(cfs, curr, &why);
  if (cfs.nr_running < 2) return se;  // no choice to explain or count
  k_.count_decision(Kernel::Decision::kPick, se->group, why);
  if (sim_log_debug.load(std::memory_order_relaxed)) [[unlikely]] {
    fmt::memory_buffer out;
    auto entity = [&](const Task& t, bool is_curr) {
      fmt::format_to(std::back_inserter(out), "{}{}-{}{} {:+.1f}", out.size() ? ", " : "", t.comm, t.pid,
                     is_curr ? " (curr)" : "", (t.se.vruntime - cfs.min_vruntime) / 1e3);
    };
    if (curr) entity(*curr, true);
    for (const SchedEntity* t : cfs.timeline) entity(*t->task, false);
    SL_DEBUG("{:.6f} cpu{} pick_next_entity -> {}-{}: {} [vruntime - min_vruntime, us: {}]", k_.clock().to_s(),
             rq.cpu, se->comm, se->pid, why, fmt::to_string(out));
  }
  return se;
}

void CfsClass::put_prev_task(Rq& rq, Task& prev, Task* next) {
  CfsRq& cfs = rq.cfs;
  if (prev.se.on_rq) {
    update_curr(rq);
    enqueue_in_tree(cfs, prev);
    fair_update_load_avg(k_, rq, rq.cfs, &prev.se, 0);
  }
  cfs.curr = nullptr;
}

void CfsClass::set_next_task(Rq& rq, Task& p, bool first) {
  CfsRq& cfs = rq.cfs;
  if (p.se.on_rq) {
    dequeue_from_tree(cfs, p);
    fair_update_load_avg(k_, rq, rq.cfs, &p.se, kUpdateTg);
  }
  p.se.exec_start = k_.clock().count();
  cfs.curr = &p.se;
  p.se.prev_sum_exec_runtime = p.se.sum_exec_runtime;
  // __set_next_task_fair(): a queued task picked moves to the head of
  // cfs_tasks (the list is most recently used first).
  if (p.se.on_rq) k_.cfs_tasks_move_to_head(p);
  if (first) update_misfit_status(k_, rq, &p);
}

// entity_tick() + check_preempt_tick(): preempt once current has run its
// ideal slice, or is more than a slice ahead of the leftmost.
void CfsClass::task_tick(Rq& rq, Task& curr) {
  CfsRq& cfs = rq.cfs;
  update_curr(rq);
  fair_update_load_avg(k_, rq, rq.cfs, &curr.se, kUpdateTg);
  update_misfit_status(k_, rq, &curr);
  if (cfs.nr_running <= 1) return;
  int64_t ideal_runtime = sched_slice(cfs, curr);
  int64_t delta_exec = curr.se.sum_exec_runtime - curr.se.prev_sum_exec_runtime;
  if (delta_exec > ideal_runtime) {
    k_.note_why("cfs: ran its ideal slice (check_preempt_tick: sched_slice)");
    k_.resched_curr(rq);
    clear_buddies(cfs, curr.se);
    return;
  }
  if (delta_exec < k_.min_granularity_ns()) return;
  Task* first = first_entity(cfs);
  if (!first) return;
  int64_t delta = curr.se.vruntime - first->se.vruntime;
  if (delta < 0) return;
  if (delta > ideal_runtime) {
    k_.note_why("cfs: more than a slice of vruntime ahead of the leftmost (check_preempt_tick)");
    k_.resched_curr(rq);
  }
}

// yield_task_fair() (6.1): mark current as the skip buddy.
void CfsClass::yield_task(Rq& rq) {
  CfsRq& cfs = rq.cfs;
  Task* curr = task_of(cfs.curr);
  if (!curr || rq.nr_running == 1) return;
  clear_buddies(cfs, curr->se);
  if (curr->policy != Policy::kBatch) update_curr(rq);
  cfs.skip = &curr->se;
}

// check_preempt_wakeup() (6.1).
void CfsClass::wakeup_preempt(Rq& rq, Task& p, int wake_flags) {
  Task& curr = *rq.curr;
  if (&curr == &p) return;
  CfsRq& cfs = rq.cfs;
  int64_t nr_latency = k_.sched_latency_ns() / k_.min_granularity_ns();
  bool scale = cfs.nr_running >= nr_latency;
  bool next_buddy_marked = false;
  // set_next_buddy() / set_last_buddy() never nominate a SCHED_IDLE
  // entity (se_is_idle()); the buddy still counts as marked.
  if (feat(SchedFeat::kNextBuddy) && scale && !(wake_flags & kWfFork)) {
    if (p.policy != Policy::kIdle) cfs.next = &p.se;
    next_buddy_marked = true;
  }
  if (rq.need_resched) return;
  bool preempt = false;
  if (curr.policy == Policy::kIdle && p.policy != Policy::kIdle) {
    k_.note_why("cfs: a non-idle task preempts a SCHED_IDLE one");
    preempt = true;
  } else {
    if (p.policy != Policy::kNormal || !feat(SchedFeat::kWakeupPreemption)) {
      k_.note_why(p.policy != Policy::kNormal ? "cfs: a SCHED_BATCH or SCHED_IDLE wakee does not preempt"
                                              : "cfs: WAKEUP_PREEMPTION is off");
      return;
    }
    update_curr(rq);
    if (wakeup_preempt_entity(curr, p) == 1) {
      k_.note_why("cfs: curr's vruntime is ahead by more than wakeup_granularity");
      if (!next_buddy_marked) cfs.next = &p.se;
      preempt = true;
    } else {
      k_.note_why("cfs: curr's vruntime is not ahead by more than wakeup_granularity");
    }
  }
  if (!preempt) return;
  k_.resched_curr(rq);
  if (!curr.se.on_rq) return;
  if (feat(SchedFeat::kLastBuddy) && scale && curr.policy != Policy::kIdle) cfs.last = &curr.se;
}

void CfsClass::switched_to(Rq& rq, Task& p) {
  attach_task_cfs_rq(rq, p);  // switched_to_fair() of 6.1 too
  if (!p.se.on_rq) return;
  if (rq.curr == &p)
    k_.resched_curr(rq);
  else
    k_.wakeup_preempt(rq, p, 0);  // core.c's: a fair task never preempts a higher class
}

}  // namespace

std::unique_ptr<SchedClass> make_cfs_class(Kernel& k) { return std::make_unique<CfsClass>(k); }

}  // namespace schedlab
