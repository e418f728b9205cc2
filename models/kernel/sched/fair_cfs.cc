// The fair class as legacy CFS, following kernel/sched/fair.c of Linux 6.1
// (6.1.166): vruntime order, sched_latency / min_granularity periods, the
// tick's check_preempt_tick(), wakeup granularity, sleeper credit and the
// next, last and skip buddies. ALT_PERIOD and BASE_SLICE (both on in 6.1)
// are built in. With CONFIG_FAIR_GROUP_SCHED the class walks the group
// hierarchy of weighted cpu cgroups (fair_group.cc) as 6.1 does: a group
// entity rejoins its parent's queue as a wake-up (sleeper credit), a task
// that sleeps while its group stays queued makes the group the next buddy,
// the slice is the period's share through every level, and wake-up
// preemption compares the two hierarchies where they meet. Without weighted
// groups every se->parent is null and the walks are one level. cpu.idle
// groups count as SCHED_IDLE entities (se_is_idle(), idle_h_nr_running,
// fair_group.cc). No CFS bandwidth.
//
// 6.1 keeps the timeline in an rbtree ordered by vruntime; queues here hold
// a handful of entities, so it is a vector scanned linearly, with the
// tree's tie order (rb_add_cached() puts equal keys to the right: insertion
// order).
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

using SE = SchedEntity;

// sysctl_sched_idle_min_granularity (6.1 fair.c): a SCHED_IDLE entity's
// slice floor among busier ones; a constant, not scaled by CPU count as
// sysctl_sched_min_granularity is (update_sysctl() leaves it alone).
constexpr int64_t kSchedIdleMinGranularityNs = 750000;
// sched_nr_latency (6.1 fair.c): 8, fixed at build time. Only a write of
// debugfs' tunable_scaling recomputes it (sched_update_scaling()); setting
// sched_latency or min_granularity, as a scenario's kernel keys do, leaves
// it at 8.
constexpr int kSchedNrLatency = 8;

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
  // task_tick_fair(): entity_tick() at every level.
  void task_tick(Rq& rq, Task& curr) override {
    for (SE* se = &curr.se; se; se = se->parent) entity_tick(rq, *se->cfs_rq, *se);
    update_misfit_status(k_, rq, &curr);
  }
  void task_fork(Task& p) override;
  void migrate_task_rq(Task& p, int new_cpu) override;
  // update_curr_fair(): the running task's own cfs_rq (the deepest curr).
  void update_curr(Rq& rq) override {
    if (CfsRq* cfs = running_cfs_rq(rq)) update_curr(rq, *cfs);
  }
  void switched_from(Rq& rq, Task& p) override;
  void switched_to(Rq& rq, Task& p) override;
  void task_change_group(Rq& rq, Task& p) override;
  // update_cfs_group() (6.1): no "keep an emptied group's weight" return
  // and no unchanged-weight shortcut: every call reweights.
  void update_cfs_group(Rq& rq, SE& se) override {
    if (se.my_q) reweight_entity(rq, *se.cfs_rq, se, k_.calc_group_shares(*se.my_q));
  }

 private:
  // Tree order: vruntime, then insertion.
  static bool tree_less(const SE* a, const SE* b) {
    if (a->vruntime != b->vruntime) return a->vruntime - b->vruntime < 0;
    return a->tree_seq < b->tree_seq;
  }
  static bool entity_before(const SE& a, const SE& b) { return a.vruntime - b.vruntime < 0; }
  // __pick_first_entity(): the leftmost queued entity (curr is not in the tree).
  static SE* first_entity(const CfsRq& cfs) {
    SE* best = nullptr;
    for (SE* se : cfs.timeline)
      if (!best || tree_less(se, best)) best = se;
    return best;
  }
  // __pick_next_entity(): the entity after `se` in tree order.
  static SE* next_entity(const CfsRq& cfs, const SE* se) {
    SE* best = nullptr;
    for (SE* e : cfs.timeline)
      if (tree_less(se, e) && (!best || tree_less(e, best))) best = e;
    return best;
  }
  static void enqueue_in_tree(CfsRq& cfs, SE& se) {
    se.tree_seq = ++cfs.tree_seq;
    se.in_tree = true;
    cfs.timeline.push_back(&se);
  }
  static void dequeue_from_tree(CfsRq& cfs, SE& se) {
    auto it = std::find(cfs.timeline.begin(), cfs.timeline.end(), &se);
    if (it != cfs.timeline.end()) cfs.timeline.erase(it);
    se.in_tree = false;
  }
  // sched_idle_cfs_rq(): every queued entity of the level is idle
  // (cfs_rq->idle_nr_running, counted here).
  static bool sched_idle_cfs_rq(const CfsRq& cfs) {
    if (!cfs.nr_running) return false;
    int idle = cfs.curr && cfs.curr->on_rq && se_is_idle(*cfs.curr) ? 1 : 0;
    for (const SE* se : cfs.timeline) idle += se_is_idle(*se) ? 1 : 0;
    return idle == cfs.nr_running;
  }
  // clear_buddies() (6.1): the entity stops being any of the three buddies.
  static void clear_buddies(CfsRq& cfs, SE& se) {
    if (cfs.last == &se) clear_buddy(&CfsRq::last, &se);
    if (cfs.next == &se) clear_buddy(&CfsRq::next, &se);
    if (cfs.skip == &se) clear_buddy(&CfsRq::skip, &se);
  }
  // set_skip_buddy(): the yielder and every ancestor, unconditionally.
  static void set_skip_buddy(SE* se) {
    for (; se; se = se->parent) se->cfs_rq->skip = se;
  }
  void update_min_vruntime(CfsRq& cfs);
  int64_t sched_period(int nr) const;
  int64_t sched_slice(const Rq& rq, const CfsRq& cfs, const SE& se) const;
  int64_t sched_vslice(const Rq& rq, const CfsRq& cfs, const SE& se) const {
    return vdelta(se, sched_slice(rq, cfs, se));
  }
  void update_curr(Rq& rq, CfsRq& cfs);
  void place_entity(const Rq& rq, CfsRq& cfs, SE& se, bool initial);
  void enqueue_entity(Rq& rq, CfsRq& cfs, SE& se, int flags);
  void dequeue_entity(Rq& rq, CfsRq& cfs, SE& se, int flags);
  void entity_tick(Rq& rq, CfsRq& cfs, SE& curr);
  int wakeup_preempt_entity(const SE& curr, const SE& se) const;
  SE* pick_next_entity(CfsRq& cfs, SE* curr, const char** why);
  void put_prev_entity(Rq& rq, CfsRq& cfs, SE& se);
  void set_next_entity(Rq& rq, CfsRq& cfs, SE& se);
  void reweight_entity(Rq& rq, CfsRq& cfs, SE& se, uint64_t weight);
  // vruntime_normalized(): p's vruntime is relative to a min_vruntime now
  // (queued -- dequeued for a change -- never run, or waking on another
  // CPU: migrate_task_rq_fair() made it relative, the enqueue is pending).
  static bool vruntime_normalized(const Task& p) {
    return p.on_rq || !p.se.sum_exec_runtime ||
           (p.wake_pending && (p.ttwu_wake_flags & (static_cast<uint64_t>(kEnqueueMigrated) << 8)));
  }
  // Set by put_prev_task()'s partial switch: the task whose entities it
  // already set as curr at every level.
  const Task* next_levels_set_ = nullptr;
};

void CfsClass::update_min_vruntime(CfsRq& cfs) {
  const SE* curr = cfs.curr;
  int64_t vruntime = cfs.min_vruntime;
  if (curr && !curr->on_rq) curr = nullptr;
  if (curr) vruntime = curr->vruntime;
  if (const SE* left = first_entity(cfs)) vruntime = curr ? std::min(vruntime, left->vruntime) : left->vruntime;
  cfs.min_vruntime = std::max(cfs.min_vruntime, vruntime);
}

// __sched_period(): sched_latency, stretched once more than
// sched_nr_latency tasks share it.
int64_t CfsClass::sched_period(int nr) const {
  if (nr > kSchedNrLatency) return nr * k_.min_granularity_ns();
  return k_.sched_latency_ns();
}

// sched_slice(): the period of every fair task on the CPU (ALT_PERIOD:
// the root's h_nr_running), narrowed at each level by the entity's share of
// its queue's load, at least min_granularity (BASE_SLICE; a SCHED_IDLE
// entity among busier ones only sysctl_sched_idle_min_granularity).
int64_t CfsClass::sched_slice(const Rq& rq, const CfsRq& cfs, const SE& init) const {
  uint64_t slice = static_cast<uint64_t>(sched_period(rq.cfs.h_nr_running + (init.on_rq ? 0 : 1)));
  for (const SE* se = &init; se; se = se->parent) {
    const CfsRq& q = *se->cfs_rq;
    const uint64_t load = q.load_weight + (se->on_rq ? 0 : se->scaled_weight());
    slice = calc_delta(slice, se->weight, scale_load_down(load), 0);
  }
  const int64_t min_gran =
      se_is_idle(init) && !sched_idle_cfs_rq(cfs) ? kSchedIdleMinGranularityNs : k_.min_granularity_ns();
  return std::max(static_cast<int64_t>(slice), min_gran);
}

// update_curr(): charge this cfs_rq's running entity its runtime in
// virtual time (a group entity at its own weight).
void CfsClass::update_curr(Rq& rq, CfsRq& cfs) {
  SE* curr = cfs.curr;
  if (!curr) return;
  int64_t now = k_.clock().count();
  int64_t delta = now - curr->exec_start;
  if (delta <= 0) return;
  curr->exec_start = now;
  curr->sum_exec_runtime += delta;
  curr->vruntime += vdelta(*curr, delta);
  update_min_vruntime(cfs);
  if (!curr->my_q) k_.fair_server_account(rq, delta);
}

// place_entity(): new tasks start a vslice behind (START_DEBIT); waking
// entities -- group entities rejoining their parent's queue too -- get up
// to half a latency period of credit (GENTLE_FAIR_SLEEPERS), never moving
// backwards. (6.1.166's entity_is_long_sleeper() exception needs a sleep
// of 2^63 / 1024 ns, about 104 days.)
void CfsClass::place_entity(const Rq& rq, CfsRq& cfs, SE& se, bool initial) {
  int64_t vruntime = cfs.min_vruntime;
  if (initial && feat(SchedFeat::kStartDebit)) vruntime += sched_vslice(rq, cfs, se);
  if (!initial) {
    int64_t thresh = se_is_idle(se) ? k_.min_granularity_ns() : k_.sched_latency_ns();
    if (feat(SchedFeat::kGentleFairSleepers)) thresh >>= 1;
    vruntime -= thresh;
  }
  se.vruntime = initial ? vruntime : std::max(se.vruntime, vruntime);
}

// task_fork_fair(): placed on the target CPU's cfs_rq of the task's group
// (the model has no parent task), then made relative to min_vruntime for
// the enqueue. Simplified: 6.1 places the child on the fork CPU
// (sched_cgroup_fork() sets it to smp_processor_id() first), so
// START_DEBIT's sched_vslice() counts that CPU's h_nr_running and group
// weights, and the child carries the offset to the CPU
// wake_up_new_task() picks; here the vslice is the target CPU's. Only the
// tasks a scenario starts are forked, so this shapes the first slices of
// a run, inside its warm-up. (Group entities likewise start at vruntime
// 0 beside min_vruntime 0, where 6.1 starts min_vruntime at -(1 << 20)
// and a cgroup made before the workload has a stale vruntime behind it:
// a group's first wake-up may get less sleeper credit than either.)
void CfsClass::task_fork(Task& p) {
  CfsRq& cfs = *p.se.cfs_rq;
  p.se.vruntime = 0;
  place_entity(k_.rq(p.cpu), cfs, p.se, true);
  p.se.vruntime -= cfs.min_vruntime;
}

// migrate_task_rq_fair(): a waking task's vruntime leaves relative to the
// old queue's min_vruntime; ENQUEUE_MIGRATED adds the new one's.
void CfsClass::migrate_task_rq(Task& p, int new_cpu) {
  p.se.vruntime -= p.se.cfs_rq->min_vruntime;
  fair_migrate_task_pelt(k_, p);
}

// enqueue_entity() (6.1): a non-wake-up (or migrated) entity's relative
// vruntime is made absolute -- curr's before update_curr() moves
// min_vruntime, another's after -- then the entity is accounted, placed if
// waking, and queued.
void CfsClass::enqueue_entity(Rq& rq, CfsRq& cfs, SE& se, int flags) {
  const bool renorm = !(flags & kEnqueueWakeup) || (flags & kEnqueueMigrated);
  const bool is_curr = cfs.curr == &se;
  if (renorm && is_curr) se.vruntime += cfs.min_vruntime;
  update_curr(rq, cfs);
  if (renorm && !is_curr) se.vruntime += cfs.min_vruntime;
  fair_update_load_avg(k_, rq, cfs, &se, kUpdateTg | kDoAttach);
  se_update_runnable(se);
  update_cfs_group(rq, se);
  cfs.load_weight += se.scaled_weight();  // account_entity_enqueue()
  ++cfs.nr_running;
  if (flags & kEnqueueWakeup) place_entity(rq, cfs, se, false);
  if (flags & kEnqueueMigrated) se.exec_start = 0;  // migrated: no longer cache hot
  if (!is_curr) enqueue_in_tree(cfs, se);
  se.on_rq = true;
  if (cfs.nr_running == 1 && !cfs.on_list) k_.list_add_leaf_cfs_rq(rq, cfs);
}

// enqueue_task_fair() (6.1): the task, then each ancestor not yet queued
// (as a wake-up); then the queued ancestors' signals, weights and counts.
void CfsClass::enqueue_task(Rq& rq, Task& p, int flags) {
  if (p.se.on_rq) return;
  fair_util_est_enqueue(rq, p);
  // The iowait boost request, after util_est.
  if (p.in_iowait)
    if (const unsigned flag = k_.cpufreq_iowait_flag(rq, p)) k_.cpufreq_update_util(rq, flag);
  // Counted idle from a cpu.idle level up (cfs_rq_is_idle()).
  int idle_h_nr_running = p.policy == Policy::kIdle ? 1 : 0;
  SE* se = &p.se;
  for (; se && !se->on_rq; se = se->parent) {
    CfsRq& cfs = *se->cfs_rq;
    enqueue_entity(rq, cfs, *se, flags);
    ++cfs.h_nr_running;
    cfs.idle_h_nr_running += idle_h_nr_running;
    if (cfs.idle) idle_h_nr_running = 1;
    flags = kEnqueueWakeup;
  }
  for (; se; se = se->parent) {
    CfsRq& cfs = *se->cfs_rq;
    fair_update_load_avg(k_, rq, cfs, se, kUpdateTg);
    se_update_runnable(*se);
    update_cfs_group(rq, *se);
    ++cfs.h_nr_running;
    cfs.idle_h_nr_running += idle_h_nr_running;
    if (cfs.idle) idle_h_nr_running = 1;
  }
}

// dequeue_entity() (6.1): a sleeping entity keeps its absolute vruntime,
// any other leaves relative to min_vruntime (for its next enqueue,
// possibly elsewhere); a group entity is reweighted once out.
void CfsClass::dequeue_entity(Rq& rq, CfsRq& cfs, SE& se, int flags) {
  update_curr(rq, cfs);
  // DO_DETACH for a migrating task only, not for the group entities its
  // walk empties.
  fair_update_load_avg(k_, rq, cfs, &se, kUpdateTg | ((flags & kDequeueMigrating) && !se.my_q ? kDoDetach : 0));
  se_update_runnable(se);
  clear_buddies(cfs, se);
  if (&se != cfs.curr) dequeue_from_tree(cfs, se);
  se.on_rq = false;
  cfs.load_weight -= se.scaled_weight();  // account_entity_dequeue()
  --cfs.nr_running;
  if (!(flags & kDequeueSleep)) se.vruntime -= cfs.min_vruntime;
  update_cfs_group(rq, se);
  // Advance min_vruntime unless the entity comes straight back
  // (DEQUEUE_SAVE without DEQUEUE_MOVE).
  if ((flags & (kDequeueSave | kDequeueMove)) != kDequeueSave) update_min_vruntime(cfs);
}

// dequeue_task_fair() (6.1): the task and, while their queues empty, its
// ancestors (as sleeps); where a queue keeps load and p went to sleep, the
// ancestor there becomes the next buddy ("bias pick_next to pick a task
// from this cfs_rq, as p is sleeping", whatever NEXT_BUDDY says); then
// the ancestors that stay queued. util_est learns last, after the
// dequeue's PELT update.
bool CfsClass::dequeue_task(Rq& rq, Task& p, int flags) {
  const bool task_sleep = flags & kDequeueSleep;
  int idle_h_nr_running = p.policy == Policy::kIdle ? 1 : 0;
  fair_util_est_dequeue(rq, p);
  SE* se = &p.se;
  while (se) {
    CfsRq& cfs = *se->cfs_rq;
    dequeue_entity(rq, cfs, *se, flags);
    --cfs.h_nr_running;
    cfs.idle_h_nr_running -= idle_h_nr_running;
    if (cfs.idle) idle_h_nr_running = 1;
    se = se->parent;
    if (cfs.load_weight) {
      if (task_sleep && se) set_buddy(&CfsRq::next, se);
      break;
    }
    flags |= kDequeueSleep;
  }
  for (; se; se = se->parent) {
    CfsRq& cfs = *se->cfs_rq;
    fair_update_load_avg(k_, rq, cfs, se, kUpdateTg);
    se_update_runnable(*se);
    update_cfs_group(rq, *se);
    --cfs.h_nr_running;
    cfs.idle_h_nr_running -= idle_h_nr_running;
    if (cfs.idle) idle_h_nr_running = 1;
  }
  fair_util_est_update(k_, rq, p, task_sleep);
  return true;
}

// wakeup_preempt_entity(): should `se` preempt `curr`? 1 when curr is
// ahead by more than the wakeup granularity (scaled to se's weight).
int CfsClass::wakeup_preempt_entity(const SE& curr, const SE& se) const {
  int64_t vdiff = curr.vruntime - se.vruntime;
  if (vdiff <= 0) return -1;
  int64_t gran = vdelta(se, k_.wakeup_granularity_ns());
  return vdiff > gran ? 1 : 0;
}

// pick_next_entity() (6.1): leftmost, unless skip/next/last buddies can
// run without being too unfair. The buddies stay until set_next_entity():
// prev picked again keeps them.
SE* CfsClass::pick_next_entity(CfsRq& cfs, SE* curr, const char** why) {
  SE* left = first_entity(cfs);
  if (!left || (curr && entity_before(*curr, *left))) left = curr;
  SE* se = left;
  *why = "the smallest vruntime (leftmost)";
  if (cfs.skip && cfs.skip == se) {
    SE* second;
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
  if (cfs.next && wakeup_preempt_entity(*cfs.next, *left) < 1) {
    se = cfs.next;
    *why = se->my_q ? "the next buddy (the group of a task that slept, or of the last wakee), within "
                      "wakeup_granularity of the leftmost"
                    : "the next buddy (the last wakee), within wakeup_granularity of the leftmost";
  } else if (cfs.last && wakeup_preempt_entity(*cfs.last, *left) < 1) {
    se = cfs.last;
    *why = "the last buddy (the preempted task), within wakeup_granularity of the leftmost";
  }
  return se;
}

// pick_next_task_fair()'s walk (6.1, CONFIG_FAIR_GROUP_SCHED): down from
// the root, each level's pick with its curr in place.
Task* CfsClass::pick_task(Rq& rq) {
  CfsRq* cfs = &rq.cfs;
  if (!cfs->nr_running) return nullptr;
  SE* se;
  do {
    SE* curr = cfs->curr;
    if (curr) {
      if (curr->on_rq)
        update_curr(rq, *cfs);
      else
        curr = nullptr;
    }
    const char* why;
    se = pick_next_entity(*cfs, curr, &why);
    if (cfs->nr_running >= 2) {  // a choice to explain and count
      k_.count_decision(Kernel::Decision::kPick, se->task ? se->task->group : k_.task_group_name(se->my_q->tg), why);
      if (sim_log_debug.load(std::memory_order_relaxed)) [[unlikely]] {
        fmt::memory_buffer out;
        auto entity = [&](const SE& e, bool is_curr) {
          fmt::format_to(std::back_inserter(out), "{}{}{} {:+.1f}", out.size() ? ", " : "", entity_name(e),
                         is_curr ? " (curr)" : "", (e.vruntime - cfs->min_vruntime) / 1e3);
        };
        if (curr) entity(*curr, true);
        for (const SE* e : cfs->timeline) entity(*e, false);
        SL_DEBUG("{:.6f} cpu{} pick_next_entity{} -> {}: {} [vruntime - min_vruntime, us: {}]", k_.clock().to_s(),
                 rq.cpu, cfs->se ? fmt::format(" in cgroup:{}", k_.task_group_name(cfs->tg)) : std::string(),
                 entity_name(*se), why, fmt::to_string(out));
      }
    }
    cfs = se->my_q;
  } while (cfs);
  return se->task;
}

// put_prev_entity(): the outgoing entity goes back into the tree if queued.
void CfsClass::put_prev_entity(Rq& rq, CfsRq& cfs, SE& se) {
  if (se.on_rq) {
    update_curr(rq, cfs);
    enqueue_in_tree(cfs, se);
    fair_update_load_avg(k_, rq, cfs, &se, 0);
  }
  cfs.curr = nullptr;
}

// set_next_entity(): the entity stops being a buddy and leaves the tree;
// its slice starts (prev_sum_exec_runtime).
void CfsClass::set_next_entity(Rq& rq, CfsRq& cfs, SE& se) {
  clear_buddies(cfs, se);
  if (se.on_rq) {
    dequeue_from_tree(cfs, se);
    fair_update_load_avg(k_, rq, cfs, &se, kUpdateTg);
  }
  se.exec_start = k_.clock().count();
  cfs.curr = &se;
  se.prev_sum_exec_runtime = se.sum_exec_runtime;
}

// put_prev_task_fair(), or -- prev and next both fair, next another task,
// and pick_next_task_fair()'s own path (every task the rq counts is fair:
// __pick_next_task()'s fast path; otherwise its class loop puts prev whole
// first) -- its partial switch: put and set only the levels below the
// cfs_rq the two hierarchies share, then their entities there. Common
// ancestors keep their place, buddies and slice start. set_next_task() then
// has only the done: label's work left.
void CfsClass::put_prev_task(Rq& rq, Task& prev, Task* next) {
  if (next && next != &prev && next->sched_class == SchedClassId::kFair && (prev.se.parent || next->se.parent) &&
      rq.nr_running == rq.cfs.h_nr_running) {
    switch_levels(
        &prev.se, &next->se, [&](CfsRq& cfs, SE& se) { put_prev_entity(rq, cfs, se); },
        [&](CfsRq& cfs, SE& se) { set_next_entity(rq, cfs, se); });
    next_levels_set_ = next;
    return;
  }
  for (SE* se = &prev.se; se; se = se->parent) put_prev_entity(rq, *se->cfs_rq, *se);
}

// set_next_task_fair() for a change (bottom-up, every level), or
// pick_next_task_fair()'s sets after a put of the whole prev (top-down, as
// its simple path picks and sets each level), or nothing more after the
// partial switch; then a queued task moves to the head of cfs_tasks and
// (a pick) misfit is checked.
void CfsClass::set_next_task(Rq& rq, Task& p, bool first) {
  if (next_levels_set_ == &p) {
    next_levels_set_ = nullptr;
  } else if (first && p.se.parent) {
    set_levels_top_down(p.se, [&](CfsRq& cfs, SE& se) { set_next_entity(rq, cfs, se); });
  } else {
    for (SE* se = &p.se; se; se = se->parent) set_next_entity(rq, *se->cfs_rq, *se);
  }
  if (p.se.on_rq) k_.cfs_tasks_move_to_head(p);
  if (first) update_misfit_status(k_, rq, &p);
}

// reweight_entity() (6.1): a new weight for a group entity; its vruntime
// stays (no lag to keep before EEVDF), its queue's load and PELT load
// follow.
void CfsClass::reweight_entity(Rq& rq, CfsRq& cfs, SE& se, uint64_t weight) {
  if (se.on_rq) {
    if (cfs.curr == &se) update_curr(rq, cfs);
    cfs.load_weight -= se.group_weight_scaled;
  }
  dequeue_load_avg(cfs.avg, se.avg, se.weight);
  set_group_weight(se, weight);
  enqueue_load_avg(cfs.avg, se.avg, se.weight);
  if (se.on_rq) cfs.load_weight += se.group_weight_scaled;
}

// entity_tick() + check_preempt_tick(): preempt once the level's curr has
// run its ideal slice, or is more than a slice ahead of the leftmost.
void CfsClass::entity_tick(Rq& rq, CfsRq& cfs, SE& curr) {
  update_curr(rq, cfs);
  fair_update_load_avg(k_, rq, cfs, &curr, kUpdateTg);
  update_cfs_group(rq, curr);
  if (cfs.nr_running <= 1) return;
  const int64_t ideal_runtime = sched_slice(rq, cfs, curr);
  const int64_t delta_exec = curr.sum_exec_runtime - curr.prev_sum_exec_runtime;
  if (delta_exec > ideal_runtime) {
    k_.note_why("cfs: ran its ideal slice (check_preempt_tick: sched_slice)");
    k_.resched_curr(rq);
    clear_buddies(cfs, curr);
    return;
  }
  if (delta_exec < k_.min_granularity_ns()) return;
  const SE* first = first_entity(cfs);
  if (!first) return;
  const int64_t delta = curr.vruntime - first->vruntime;
  if (delta < 0) return;
  if (delta > ideal_runtime) {
    k_.note_why("cfs: more than a slice of vruntime ahead of the leftmost (check_preempt_tick)");
    k_.resched_curr(rq);
  }
}

// yield_task_fair() (6.1): current stops being a buddy and becomes the
// skip buddy at every level.
void CfsClass::yield_task(Rq& rq) {
  if (!rq.cfs.curr || rq.nr_running == 1) return;
  Task& curr = *rq.curr;
  CfsRq& cfs = *curr.se.cfs_rq;
  clear_buddies(cfs, curr.se);
  if (curr.policy != Policy::kBatch) update_curr(rq, cfs);
  set_skip_buddy(&curr.se);
}

// check_preempt_wakeup() (6.1): the two hierarchies compared where they
// meet (find_matching_se()).
void CfsClass::wakeup_preempt(Rq& rq, Task& p, int wake_flags) {
  Task& curr = *rq.curr;
  if (&curr == &p) return;
  SE* se = &curr.se;
  SE* pse = &p.se;
  const bool scale = curr.se.cfs_rq->nr_running >= kSchedNrLatency;  // task_cfs_rq(curr)
  bool next_buddy_marked = false;
  // A SCHED_IDLE wakee is never nominated (se_is_idle()); the buddy still
  // counts as marked.
  if (feat(SchedFeat::kNextBuddy) && scale && !(wake_flags & kWfFork)) {
    set_buddy(&CfsRq::next, pse);
    next_buddy_marked = true;
  }
  if (rq.need_resched) return;
  if (curr.policy == Policy::kIdle && p.policy != Policy::kIdle) {
    k_.note_why("cfs: a non-idle task preempts a SCHED_IDLE one");
  } else {
    if (p.policy != Policy::kNormal || !feat(SchedFeat::kWakeupPreemption)) {
      k_.note_why(p.policy != Policy::kNormal ? "cfs: a SCHED_BATCH or SCHED_IDLE wakee does not preempt"
                                              : "cfs: WAKEUP_PREEMPTION is off");
      return;
    }
    find_matching_se(se, pse);
    const bool cse_is_idle = se_is_idle(*se), pse_is_idle = se_is_idle(*pse);
    if (cse_is_idle && !pse_is_idle) {
      k_.note_why("cfs: a non-idle entity preempts an idle one");
    } else if (cse_is_idle != pse_is_idle) {
      k_.note_why("cfs: an idle entity does not preempt a non-idle one");
      return;
    } else {
      update_curr(rq, *se->cfs_rq);
      if (wakeup_preempt_entity(*se, *pse) != 1) {
        k_.note_why("cfs: curr's vruntime is not ahead by more than wakeup_granularity");
        return;
      }
      k_.note_why("cfs: curr's vruntime is ahead by more than wakeup_granularity");
      if (!next_buddy_marked) set_buddy(&CfsRq::next, pse);
    }
  }
  k_.resched_curr(rq);
  if (!se->on_rq) return;
  // LAST_BUDDY only where the two met at the task level.
  if (feat(SchedFeat::kLastBuddy) && scale && !se->my_q) set_buddy(&CfsRq::last, se);
}

// switched_from_fair() -> detach_task_cfs_rq() (6.1): a sleeping task's
// vruntime is placed as for a wake-up and made relative, then its signals
// leave the cfs_rq.
void CfsClass::switched_from(Rq& rq, Task& p) {
  if (!vruntime_normalized(p)) {
    CfsRq& cfs = *p.se.cfs_rq;
    place_entity(rq, cfs, p.se, false);
    p.se.vruntime -= cfs.min_vruntime;
  }
  FairClassBase::switched_from(rq, p);
}

// switched_to_fair() -> attach_task_cfs_rq() (6.1): the signals join the
// cfs_rq, a sleeping task's relative vruntime becomes absolute; a queued
// task may preempt.
void CfsClass::switched_to(Rq& rq, Task& p) {
  attach_task_cfs_rq(rq, p);
  if (!vruntime_normalized(p)) p.se.vruntime += p.se.cfs_rq->min_vruntime;
  if (!p.se.on_rq) return;
  if (rq.curr == &p)
    k_.resched_curr(rq);
  else
    k_.wakeup_preempt(rq, p, 0);  // core.c's: a fair task never preempts a higher class
}

// task_change_group_fair() (6.1): detach_task_cfs_rq() (switched_from()
// above), the new group's cfs_rq, attach_task_cfs_rq().
void CfsClass::task_change_group(Rq& rq, Task& p) {
  FairClassBase::task_change_group(rq, p);
  if (!vruntime_normalized(p)) p.se.vruntime += p.se.cfs_rq->min_vruntime;
}

}  // namespace

std::unique_ptr<SchedClass> make_cfs_class(Kernel& k) { return std::make_unique<CfsClass>(k); }

}  // namespace schedlab
