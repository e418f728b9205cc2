// The fair class as EEVDF, following kernel/sched/fair.c of Linux 6.12
// (6.6 behaviour by feature switches; 6.18.35's slice protection, lag
// clamp, reweight by placement and wake-up preemption by actions -- with
// the NEXT_BUDDY rework its stable tree took -- where KernelVersionInfo
// says so). With CONFIG_FAIR_GROUP_SCHED the class walks the group
// hierarchy (weighted cpu cgroups, fair_group.cc): for_each_sched_entity() loops
// follow se->parent, which is null for every task in the root group. No
// bandwidth control; PELT in fair_pelt.cc.
//
// From 6.8 the kernel keeps queued entities in an augmented rbtree sorted
// by deadline; run-queues here hold a handful of tasks, so the "tree" is a
// vector scanned linearly, with the kernel's tie order preserved: entities
// with equal deadlines order by insertion (rb_add_cached puts equal keys to
// the right). 6.6's tree is sorted by vruntime and its pick depends on the
// tree's shape where deadlines tie: for version 6.6 the entities are also
// kept in a real red-black tree of that shape (vruntime_tree.h), and
// pick_eevdf() searches it as 6.6 does (group entities are nodes like
// tasks). (6.6's pick_next_task_fair() with CONFIG_FAIR_GROUP_SCHED, as GKI builds
// it, picks with curr still in place, as modelled -- without it, prev
// would go back into the tree before the pick.)
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

// Why pick_eevdf() (or NEXT_BUDDY before it) chose its entity: what
// --log debug prints beside the candidates.
enum class PickWhy : uint8_t {
  kOnly, kPickBuddy, kNextBuddy, kProtected, kRunToParity, kFirstEligible, kEarliestEligible, kCurrEarlier,
  kCurrOnlyEligible, kCurrNotLater, kTreeSearch, kNoneEligible
};

// Why a wakee was not pick_eevdf()'s choice, from the rule that chose.
const char* not_chosen_text(PickWhy why) {
  switch (why) {
    case PickWhy::kProtected: return "eevdf: pick_eevdf() keeps curr: its protected slice is not used up";
    case PickWhy::kRunToParity: return "eevdf: pick_eevdf() keeps curr: RUN_TO_PARITY";
    case PickWhy::kCurrEarlier: return "eevdf: pick_eevdf() keeps curr: an earlier deadline than the best eligible";
    case PickWhy::kCurrOnlyEligible: return "eevdf: pick_eevdf() keeps curr: no waiting entity is eligible";
    case PickWhy::kCurrNotLater:
      return "eevdf: pick_eevdf() keeps curr: 6.6's tree search found no earlier deadline than curr's";
    case PickWhy::kPickBuddy:
    case PickWhy::kNextBuddy: return "eevdf: pick_eevdf() chooses the next buddy";
    case PickWhy::kFirstEligible:
    case PickWhy::kEarliestEligible:
    case PickWhy::kTreeSearch: return "eevdf: pick_eevdf() chooses another waiting task";
    case PickWhy::kOnly:
    case PickWhy::kNoneEligible: break;
  }
  return "eevdf: pick_eevdf() does not choose the wakee";
}

const char* pick_why_text(PickWhy why) {
  switch (why) {
    case PickWhy::kOnly: return "the only entity";
    case PickWhy::kPickBuddy: return "PICK_BUDDY: the next buddy (the last wakee), eligible";
    case PickWhy::kNextBuddy: return "NEXT_BUDDY: the next buddy (the last wakee), eligible";
    case PickWhy::kProtected: return "curr keeps the CPU: its protected slice is not used up (protect_slice)";
    case PickWhy::kRunToParity: return "RUN_TO_PARITY: curr keeps the CPU until it needs a new slice";
    case PickWhy::kFirstEligible: return "the earliest deadline among the waiting entities, and eligible";
    case PickWhy::kEarliestEligible:
      return "the earliest deadline among the eligible waiting entities (earlier ones are not eligible)";
    case PickWhy::kCurrEarlier: return "curr: eligible, and its deadline is earlier than the best eligible waiting one's";
    case PickWhy::kCurrOnlyEligible: return "curr: no waiting entity is eligible";
    case PickWhy::kCurrNotLater:
      return "curr: eligible, and 6.6's tree search found no strictly earlier deadline among the waiting ones";
    case PickWhy::kTreeSearch:
      return "6.6's tree search: an eligible waiting entity with the earliest deadline (on a tie, the first the "
             "tree's shape leads to)";
    case PickWhy::kNoneEligible: return "the earliest deadline (none eligible: rounding)";
  }
  return "";
}

class EevdfClass final : public FairClassBase {
 public:
  using FairClassBase::FairClassBase;
  const char* name() const override { return "fair(eevdf)"; }

  void enqueue_task(Rq& rq, Task& p, int flags) override;
  bool dequeue_task(Rq& rq, Task& p, int flags) override;
  void yield_task(Rq& rq) override;
  void wakeup_preempt(Rq& rq, Task& p, int wake_flags) override;
  Task* pick_task(Rq& rq) override;
  void put_prev_task(Rq& rq, Task& prev, Task* next) override;
  void set_next_task(Rq& rq, Task& p, bool first) override;
  // task_tick_fair(): entity_tick() at every level.
  void task_tick(Rq& rq, Task& curr) override {
    for (SE* se = &curr.se; se; se = se->parent) {
      CfsRq& cfs = *se->cfs_rq;
      update_curr(rq, cfs);
      fair_update_load_avg(k_, rq, cfs, se, kUpdateTg);
      update_cfs_group(rq, *se);
    }
    update_misfit_status(k_, rq, &curr);
  }
  void migrate_task_rq(Task& p, int new_cpu) override { fair_migrate_task_pelt(k_, p); }
  bool entity_eligible(const Rq& rq, const Task& p) const override { return entity_eligible(*p.se.cfs_rq, p.se); }
  // update_curr_fair(): the running task's own cfs_rq only; the levels
  // above are charged when a walk reaches them.
  void update_curr(Rq& rq) override {
    if (CfsRq* cfs = running_cfs_rq(rq)) update_curr(rq, *cfs);
  }
  void switched_to(Rq& rq, Task& p) override;

 private:
  static int64_t entity_key(const CfsRq& cfs, const SE& se) { return se.vruntime - cfs.min_vruntime; }
  static bool entity_before(const SE& a, const SE& b) { return a.deadline - b.deadline < 0; }
  static bool tree_less(const SE* a, const SE* b) {
    if (a->deadline != b->deadline) return a->deadline - b->deadline < 0;
    return a->tree_seq < b->tree_seq;
  }

  void avg_vruntime_add(CfsRq& cfs, const SE& se) {
    cfs.avg_vruntime += entity_key(cfs, se) * static_cast<int64_t>(se.weight);
    cfs.avg_load += static_cast<int64_t>(se.weight);
  }
  void avg_vruntime_sub(CfsRq& cfs, const SE& se) {
    cfs.avg_vruntime -= entity_key(cfs, se) * static_cast<int64_t>(se.weight);
    cfs.avg_load -= static_cast<int64_t>(se.weight);
  }
  int64_t avg_vruntime(const CfsRq& cfs) const;
  bool vruntime_eligible(const CfsRq& cfs, int64_t vruntime) const;
  bool entity_eligible(const CfsRq& cfs, const SE& se) const { return vruntime_eligible(cfs, se.vruntime); }
  void update_min_vruntime(CfsRq& cfs);
  void enqueue_in_tree(CfsRq& cfs, SE& se);   // __enqueue_entity
  void dequeue_from_tree(CfsRq& cfs, SE& se); // __dequeue_entity
  SE* pick_first_entity(const CfsRq& cfs) const;
  // `protect` false (6.18's wake-up for a shorter-slice wakee): curr's
  // protected slice does not keep it.
  SE* pick_eevdf(CfsRq& cfs, PickWhy* why, bool protect = true);
  SE* pick_eevdf_vruntime_tree(CfsRq& cfs, PickWhy* why);
  SE* pick_next_entity(Rq& rq, CfsRq& cfs);
  void dequeue_delayed_pick(Rq& rq, SE& se);
  // --log debug: the pick with every candidate's lag and deadline.
  void explain_pick(const Rq& rq, const CfsRq& cfs, const char* what, const SE* picked, PickWhy why) const;
  void update_curr(Rq& rq, CfsRq& cfs);
  bool update_deadline(SE& se);
  void update_entity_lag(CfsRq& cfs, SE& se);
  void place_entity(CfsRq& cfs, SE& se, int flags);
  void enqueue_entity(Rq& rq, CfsRq& cfs, SE& se, int flags);
  bool dequeue_entity(Rq& rq, CfsRq& cfs, SE& se, int flags);
  // dequeue_entities(): the entity and, while their cfs_rqs empty, its
  // ancestors, with the task counts of every level; false when the task
  // stays queued, delayed.
  bool dequeue_entities(Rq& rq, SE& se, int flags);
  void requeue_delayed_entity(Rq& rq, SE& se);
  void update_ancestors(Rq& rq, SE* se, int64_t slice, int h_nr_running, int idle_h_nr_running, int h_nr_delayed);
  void put_prev_entity(Rq& rq, CfsRq& cfs, SE& se);
  void set_next_entity(Rq& rq, CfsRq& cfs, SE& se, bool first);
  // set_delayed() / clear_delayed(): a task's flag and the h_nr_delayed
  // of every level above it; a group entity's flag alone ("delayed se of
  // cfs_rq have no tasks queued on them").
  static void set_delayed(SE& se) {
    se.sched_delayed = true;
    if (se.my_q) return;
    for (SE* e = &se; e; e = e->parent) ++e->cfs_rq->h_nr_delayed;
  }
  static void clear_delayed(SE& se) {
    se.sched_delayed = false;
    if (se.my_q) return;
    for (SE* e = &se; e; e = e->parent) --e->cfs_rq->h_nr_delayed;
  }
  static void set_next_buddy(SE* se) { set_buddy(&CfsRq::next, se); }
  // clear_buddies() / __clear_buddies_next() (6.6+: only the next buddy).
  static void clear_buddies(CfsRq& cfs, SE& se) {
    if (cfs.next == &se) clear_buddy(&CfsRq::next, &se);
  }
  // update_cfs_group(): a group entity's weight follows its group's
  // shares and the share of the group's load on this CPU
  // (calc_group_shares()). Nothing for a task (inline: the walks call it
  // per level).
  void update_cfs_group(Rq& rq, SE& se) override {
    if (se.my_q) update_group_weight(rq, se);
  }
  void update_group_weight(Rq& rq, SE& se);
  // reweight_entity(): a new weight, lag and relative deadline rescaled.
  void reweight_entity(Rq& rq, CfsRq& cfs, SE& se, uint64_t weight);
  void reweight_entity_by_place(Rq& rq, CfsRq& cfs, SE& se, uint64_t weight);
  bool do_preempt_short(const CfsRq& cfs, const SE& pse, const SE& se) const;
  // 6.17+ slice protection (se->vprot).
  bool protect_mode() const { return k_.version_info().protect_slice; }
  static bool protect_slice(const SE& se) { return se.vruntime - se.vprot < 0; }
  int64_t cfs_rq_min_slice(const CfsRq& cfs, const SE* also) const;
  int64_t cfs_rq_max_slice(const CfsRq& cfs) const;
  // The service a lag may stand for (entity_lag()'s limit, before
  // calc_delta_fair()).
  int64_t lag_span(const CfsRq& cfs, const SE& se) const;
  // A group entity takes the smallest slice queued below it (6.12+, with
  // custom slices); 6.6's group entities keep the base slice.
  bool slices_up() const { return k_.version_info().custom_slice; }
  void set_protect_slice(CfsRq& cfs, SE& se);
  void update_protect_slice(CfsRq& cfs, SE& se);
  static void cancel_protect_slice(SE& se) {
    if (protect_slice(se)) se.vprot = se.vruntime;
  }
  SE* wakeup_matched_level(Rq& rq, Task& p, SE*& pse);
  void wakeup_preempt_by_action(Rq& rq, Task& p, int wake_flags);
  bool did_preempt_short(const CfsRq& cfs, const SE& curr) const;
  // Set by put_prev_task()'s partial switch: the task whose entities it
  // already set as curr at every level.
  const Task* next_levels_set_ = nullptr;
};

// The sums behind V: the tree's sum((v - v0) * w) and sum(w), plus curr's
// contribution while it is queued.
static void vruntime_sums(const CfsRq& cfs, int64_t* avg, int64_t* load) {
  *avg = cfs.avg_vruntime;
  *load = cfs.avg_load;
  const SE* curr = cfs.curr;
  if (curr && curr->on_rq) {
    int64_t w = static_cast<int64_t>(curr->weight);
    *avg += (curr->vruntime - cfs.min_vruntime) * w;
    *load += w;
  }
}

// avg_vruntime(): the weighted average vruntime V of all queued entities,
// curr included; rounds toward -inf like the kernel's floor division.
int64_t EevdfClass::avg_vruntime(const CfsRq& cfs) const {
  int64_t avg, load;
  vruntime_sums(cfs, &avg, &load);
  if (load) {
    if (avg < 0) avg -= (load - 1);
    avg /= load;
  }
  return cfs.min_vruntime + avg;
}

// vruntime_eligible(): lag >= 0, i.e. V >= v, compared without division:
// sum((v_j - v0) * w_j) >= (v - v0) * sum(w_j).
bool EevdfClass::vruntime_eligible(const CfsRq& cfs, int64_t vruntime) const {
  int64_t avg, load;
  vruntime_sums(cfs, &avg, &load);
  return avg >= (vruntime - cfs.min_vruntime) * load;
}

// update_min_vruntime(): min_vruntime follows the smallest vruntime of curr
// and the queued entities, never moving backwards; avg_vruntime is kept
// relative to it.
void EevdfClass::update_min_vruntime(CfsRq& cfs) {
  int64_t vruntime = cfs.min_vruntime;
  const SE* curr = cfs.curr;
  if (curr && !curr->on_rq) curr = nullptr;
  if (curr) vruntime = curr->vruntime;
  if (!cfs.timeline.empty()) {
    int64_t tree_min = cfs.timeline.front()->vruntime;
    for (const SE* t : cfs.timeline) tree_min = std::min(tree_min, t->vruntime);
    vruntime = curr ? std::min(vruntime, tree_min) : tree_min;
  }
  int64_t delta = vruntime - cfs.min_vruntime;
  if (delta > 0) {
    cfs.avg_vruntime -= cfs.avg_load * delta;  // avg_vruntime_update()
    cfs.min_vruntime = vruntime;
  }
}

// __enqueue_entity() / __dequeue_entity(): the deadline-ordered timeline,
// and on 6.6 its vruntime tree too.
void EevdfClass::enqueue_in_tree(CfsRq& cfs, SE& se) {
  avg_vruntime_add(cfs, se);
  se.tree_seq = ++cfs.tree_seq;
  se.in_tree = true;
  cfs.timeline.push_back(&se);
  if (k_.version_info().pick_vruntime_tree) cfs.vruntime_tree.insert(se);
}

void EevdfClass::dequeue_from_tree(CfsRq& cfs, SE& se) {
  auto it = std::find(cfs.timeline.begin(), cfs.timeline.end(), &se);
  if (it == cfs.timeline.end()) return;
  cfs.timeline.erase(it);
  if (k_.version_info().pick_vruntime_tree) cfs.vruntime_tree.erase(se);
  se.in_tree = false;
  avg_vruntime_sub(cfs, se);
}

SE* EevdfClass::pick_first_entity(const CfsRq& cfs) const {
  SE* best = nullptr;
  for (SE* t : cfs.timeline)
    if (!best || tree_less(t, best)) best = t;
  return best;
}

// pick_eevdf(): the eligible entity with the earliest virtual deadline.
SE* EevdfClass::pick_eevdf(CfsRq& cfs, PickWhy* why, bool protect) {
  if (k_.version_info().pick_vruntime_tree) return pick_eevdf_vruntime_tree(cfs, why);
  SE* curr = cfs.curr;
  SE* first = pick_first_entity(cfs);
  // Only one entity: no eligibility check needed.
  if (cfs.nr_running == 1) {
    *why = PickWhy::kOnly;
    return curr && curr->on_rq ? curr : first;
  }
  // PICK_BUDDY (6.17+ here, under protect_slice()): the next buddy, if eligible.
  if (protect_mode() && feat(SchedFeat::kPickBuddy) && cfs.next && entity_eligible(cfs, *cfs.next)) {
    *why = PickWhy::kPickBuddy;
    return cfs.next;
  }
  if (curr && (!curr->on_rq || !entity_eligible(cfs, *curr))) curr = nullptr;
  // RUN_TO_PARITY: once picked, run until ineligible or a new slice (the
  // deadline stashed in vlag at pick is unchanged); from 6.17 until the
  // protected vruntime (always on: without RUN_TO_PARITY vprot covers a
  // base slice).
  if (curr && (protect_mode() ? protect && protect_slice(*curr)
                              : feat(SchedFeat::kRunToParity) && curr->vlag == curr->deadline)) {
    *why = protect_mode() ? PickWhy::kProtected : PickWhy::kRunToParity;
    return curr;
  }
  SE* best = nullptr;
  if (first && entity_eligible(cfs, *first)) {
    best = first;
    *why = PickWhy::kFirstEligible;
  } else {
    for (SE* t : cfs.timeline)
      if (entity_eligible(cfs, *t) && (!best || tree_less(t, best))) best = t;
    *why = PickWhy::kEarliestEligible;
  }
  if (!best || (curr && entity_before(*curr, *best))) {
    *why = best ? PickWhy::kCurrEarlier : PickWhy::kCurrOnlyEligible;
    best = curr;
  }
  if (!best) {
    best = first;  // cannot happen with exact arithmetic; be safe
    *why = PickWhy::kNoneEligible;
  }
  return best;
}

// 6.6's pick_eevdf(): __pick_eevdf()'s search down the vruntime-ordered
// tree (VruntimeTree::pick_eevdf()) after RUN_TO_PARITY; on equal
// deadlines curr wins unless a left subtree the search passed holds that
// deadline, and among queued entities the tree's shape decides. No
// nr_running == 1 shortcut in 6.6 (one entity is chosen all the same). The
// search cannot fail with exact arithmetic; 6.6 then takes the leftmost.
SE* EevdfClass::pick_eevdf_vruntime_tree(CfsRq& cfs, PickWhy* why) {
  SE* curr = cfs.curr;
  if (curr && (!curr->on_rq || !entity_eligible(cfs, *curr))) curr = nullptr;
  if (curr && feat(SchedFeat::kRunToParity) && curr->vlag == curr->deadline) {
    *why = PickWhy::kRunToParity;
    return curr;
  }
  struct Ctx {
    const EevdfClass* self;
    const CfsRq* cfs;
  } ctx{this, &cfs};
  auto eligible = [](const void* c, const SE& se) {
    const Ctx& x = *static_cast<const Ctx*>(c);
    return x.self->entity_eligible(*x.cfs, se);
  };
  bool saw_eligible = false;
  SE* const best = cfs.vruntime_tree.pick_eevdf(curr, eligible, &ctx, &saw_eligible);
  if (!best) {
    *why = PickWhy::kNoneEligible;
    return cfs.vruntime_tree.leftmost();
  }
  if (cfs.nr_running == 1)
    *why = PickWhy::kOnly;
  else if (best == curr)
    *why = saw_eligible ? PickWhy::kCurrNotLater : PickWhy::kCurrOnlyEligible;
  else
    *why = PickWhy::kTreeSearch;
  return best;
}

void EevdfClass::explain_pick(const Rq& rq, const CfsRq& cfs, const char* what, const SE* picked,
                              PickWhy why) const {
  const int64_t v = avg_vruntime(cfs);
  fmt::memory_buffer out;
  auto entity = [&](const SE& se, bool is_curr) {
    fmt::format_to(std::back_inserter(out), "{}{}{} lag {:+.1f} dl {:+.1f}{}", out.size() ? ", " : "",
                   entity_name(se), is_curr ? " (curr)" : "", (v - se.vruntime) / 1e3, (se.deadline - v) / 1e3,
                   entity_eligible(cfs, se) ? "" : " ineligible");
  };
  if (cfs.curr && cfs.curr->on_rq) entity(*cfs.curr, true);
  for (const SE* t : cfs.timeline) entity(*t, false);
  // 6.6: the tree the search walked, pre-order -- (node left right) --,
  // each node with its subtree's min_deadline, so a tie's winner can be
  // followed by hand.
  fmt::memory_buffer tree;
  if (k_.version_info().pick_vruntime_tree) {
    auto walk = [&](auto& self, const SE* se) -> void {
      if (!se) {
        fmt::format_to(std::back_inserter(tree), ".");
        return;
      }
      fmt::format_to(std::back_inserter(tree), "({} min_dl {:+.1f} ", entity_name(*se),
                     (se->tree.min_deadline - v) / 1e3);
      self(self, se->tree.child[0]);
      fmt::format_to(std::back_inserter(tree), " ");
      self(self, se->tree.child[1]);
      fmt::format_to(std::back_inserter(tree), ")");
    };
    fmt::format_to(std::back_inserter(tree), "; 6.6 tree by vruntime: ");
    walk(walk, cfs.vruntime_tree.root());
  }
  SL_DEBUG("{:.6f} cpu{} {}{} -> {}: {} [vs V, virtual us: {}{}]", k_.clock().to_s(), rq.cpu, what,
           cfs.se ? fmt::format(" in cgroup:{}", k_.task_group_name(cfs.tg)) : std::string(), entity_name(*picked),
           pick_why_text(why), fmt::to_string(out), fmt::to_string(tree));
}

// update_deadline(): once vruntime passes the deadline, request a new
// slice: vd = ve + r/w. Returns true if current must reschedule.
bool EevdfClass::update_deadline(SE& se) {
  if (se.vruntime - se.deadline < 0) return false;
  if (!se.custom_slice) se.slice = k_.base_slice_ns();
  se.deadline = se.vruntime + vdelta(se, se.slice);
  return true;
}

// update_curr(): charge the running entity of this cfs_rq its runtime in
// virtual time (a group entity at its own weight).
void EevdfClass::update_curr(Rq& rq, CfsRq& cfs) {
  SE* curr = cfs.curr;
  if (!curr) return;
  int64_t now = k_.clock().count();
  int64_t delta = now - curr->exec_start;
  if (delta <= 0) return;
  curr->exec_start = now;
  curr->sum_exec_runtime += delta;
  curr->vruntime += vdelta(*curr, delta);
  bool resched = update_deadline(*curr);
  update_min_vruntime(cfs);
  if (!curr->my_q) k_.fair_server_account(rq, delta);
  if (cfs.nr_running == 1) return;
  // 6.17+: once the protected slice is used, every update asks for a pick.
  if (resched || (protect_mode() ? !protect_slice(*curr) : did_preempt_short(cfs, *curr))) {
    k_.note_why(resched           ? "eevdf: slice used (vruntime reached the deadline: a new one, vd = v + r/w)"
                : protect_mode() ? "eevdf: the protected slice is used (protect_slice)"
                                 : "eevdf: PREEMPT_SHORT: curr became ineligible after a shorter-slice wake-up");
    k_.resched_curr_lazy(rq);
    clear_buddies(cfs, *curr);
  }
}

// update_entity_lag(): vlag = V - v, clamped to what a slice (or a tick)
// of service could explain: twice the entity's slice, at least a tick;
// 6.18.35 the cfs_rq's largest slice plus a tick.
void EevdfClass::update_entity_lag(CfsRq& cfs, SE& se) {
  int64_t vlag = avg_vruntime(cfs) - se.vruntime;
  int64_t limit = vdelta(se, lag_span(cfs, se));
  se.set_vlag(std::clamp(vlag, -limit, limit), protect_mode());
}

int64_t EevdfClass::lag_span(const CfsRq& cfs, const SE& se) const {
  if (k_.version_info().lag_clamp_max_slice) return cfs_rq_max_slice(cfs) + k_.tick_nsec().count();
  // Saturates where the kernel's u64 wraps: only the empty-queue sentinel
  // slice of a two-deep group dequeue gets here (README, known gaps).
  const int64_t twice = se.slice > INT64_MAX / 2 ? INT64_MAX : 2 * se.slice;
  return std::max<int64_t>(twice, k_.tick_nsec().count());
}

// place_entity(): put a (re)joining entity at V minus its preserved lag,
// inflated so the lag survives its own effect on V; new tasks start with
// half a slice of deadline (PLACE_DEADLINE_INITIAL).
void EevdfClass::place_entity(CfsRq& cfs, SE& se, int flags) {
  int64_t vruntime = avg_vruntime(cfs);
  int64_t lag = 0;
  if (!se.custom_slice) se.slice = k_.base_slice_ns();
  int64_t vslice = vdelta(se, se.slice);
  if (feat(SchedFeat::kPlaceLag) && cfs.nr_running && se.vlag) {
    const SE* curr = cfs.curr;
    int64_t load = cfs.avg_load;
    if (curr && curr->on_rq) load += static_cast<int64_t>(curr->weight);
    lag = se.vlag * (load + static_cast<int64_t>(se.weight));
    if (!load) load = 1;
    lag /= load;  // div_s64 truncates toward zero
  }
  se.vruntime = vruntime - lag;
  if (se.rel_deadline) {
    se.deadline += se.vruntime;
    se.rel_deadline = false;
    return;
  }
  if (feat(SchedFeat::kPlaceDeadlineInitial) && (flags & kEnqueueInitial)) vslice /= 2;
  se.deadline = se.vruntime + vslice;
}

void EevdfClass::enqueue_entity(Rq& rq, CfsRq& cfs, SE& se, int flags) {
  bool is_curr = cfs.curr == &se;
  // The current entity is placed before update_curr() so its own runtime
  // does not move V under it.
  if (is_curr) place_entity(cfs, se, flags);
  update_curr(rq, cfs);
  fair_update_load_avg(k_, rq, cfs, &se, kUpdateTg | kDoAttach);
  se_update_runnable(se);
  update_cfs_group(rq, se);  // a group entity is reweighted before it is placed
  if (!is_curr) place_entity(cfs, se, flags);
  cfs.load_weight += se.scaled_weight();
  ++cfs.nr_running;  // account_entity_enqueue()
  // "Entity has migrated, no longer consider this task hot": the balancer's
  // task_hot() sees it cold until it runs here.
  if (flags & kEnqueueMigrated) se.exec_start = 0;
  if (!is_curr) enqueue_in_tree(cfs, se);
  se.on_rq = true;
  if (cfs.nr_running == 1 && !cfs.on_list) k_.list_add_leaf_cfs_rq(rq, cfs);  // listed already: nothing to do
}

// requeue_delayed_entity(): a delayed (blocked but still queued) entity is
// woken; with DELAY_ZERO positive lag is dropped and it is re-placed.
void EevdfClass::requeue_delayed_entity(Rq& rq, SE& se) {
  CfsRq& cfs = *se.cfs_rq;
  if (feat(SchedFeat::kDelayZero)) {
    update_entity_lag(cfs, se);
    if (se.vlag > 0) {
      --cfs.nr_running;
      if (&se != cfs.curr) dequeue_from_tree(cfs, se);
      se.set_vlag(0, protect_mode());
      place_entity(cfs, se, 0);
      if (&se != cfs.curr) enqueue_in_tree(cfs, se);
      ++cfs.nr_running;
    }
  }
  fair_update_load_avg(k_, rq, cfs, &se, 0);
  clear_delayed(se);
}

// enqueue_task_fair(): the task, then each ancestor not yet queued (a
// group entity takes the smallest slice queued below it, and is placed as
// a wake-up); then the queued ancestors' signals and counts.
void EevdfClass::enqueue_task(Rq& rq, Task& p, int flags) {
  if (!(p.se.sched_delayed && (flags & (kEnqueueRestore | kEnqueueMigrated)))) fair_util_est_enqueue(rq, p);
  if (flags & kEnqueueDelayed) {
    requeue_delayed_entity(rq, p.se);
    return;
  }
  // enqueue_task_fair(): a task woken from io_schedule() asks schedutil for
  // its iowait boost (the enqueue below may not update cpufreq at all).
  if (p.in_iowait)
    if (const unsigned flag = k_.cpufreq_iowait_flag(rq, p)) k_.cpufreq_update_util(rq, flag);
  if (p.se.on_rq) {
    if (p.se.sched_delayed) requeue_delayed_entity(rq, p.se);
    return;
  }
  int idle_h_nr_running = p.policy == Policy::kIdle ? 1 : 0;
  // Back from a change, still delayed (a wake-up requeues it instead).
  const int h_nr_delayed = !(flags & kEnqueueWakeup) && p.se.sched_delayed ? 1 : 0;
  int64_t slice = 0;
  SE* se = &p.se;
  for (; se; se = se->parent) {
    if (se->on_rq) {
      if (se->sched_delayed) requeue_delayed_entity(rq, *se);
      break;
    }
    CfsRq& cfs = *se->cfs_rq;
    if (slice) {
      se->slice = slice;
      se->custom_slice = true;
    }
    enqueue_entity(rq, cfs, *se, flags);
    if (se->parent && slices_up()) slice = cfs_rq_min_slice(cfs, nullptr);
    ++cfs.h_nr_running;
    cfs.idle_h_nr_running += idle_h_nr_running;
    cfs.h_nr_delayed += h_nr_delayed;
    if (cfs.idle) idle_h_nr_running = 1;  // counted idle from a cpu.idle level up
    flags = kEnqueueWakeup;
  }
  if (se) update_ancestors(rq, se, slice, 1, idle_h_nr_running, h_nr_delayed);
}

// The second walk of enqueue_task_fair() and dequeue_entities(): the
// ancestors that stay queued take their cfs_rq's new state (PELT, runnable
// weight, group weight, smallest slice) and the change in task counts.
void EevdfClass::update_ancestors(Rq& rq, SE* se, int64_t slice, int h_nr_running, int idle_h_nr_running,
                                  int h_nr_delayed) {
  for (; se; se = se->parent) {
    CfsRq& cfs = *se->cfs_rq;
    fair_update_load_avg(k_, rq, cfs, se, kUpdateTg);
    se_update_runnable(*se);
    update_cfs_group(rq, *se);
    if (slices_up()) {
      se->slice = slice;
      slice = cfs_rq_min_slice(cfs, nullptr);
    }
    cfs.h_nr_running += h_nr_running;
    cfs.idle_h_nr_running += idle_h_nr_running;
    cfs.h_nr_delayed += h_nr_delayed;
    if (cfs.idle) idle_h_nr_running = h_nr_running;
  }
}

// dequeue_entity(): with DELAY_DEQUEUE a sleeping entity that is not
// eligible (negative lag) stays queued, "delayed", so it cannot shed its
// debt by sleeping; it leaves when picked or when its lag is paid.
bool EevdfClass::dequeue_entity(Rq& rq, CfsRq& cfs, SE& se, int flags) {
  bool sleep = flags & kDequeueSleep;
  update_curr(rq, cfs);
  clear_buddies(cfs, se);
  if (!(flags & kDequeueDelayed)) {
    bool delay = sleep && !(flags & kDequeueSpecial);
    if (feat(SchedFeat::kDelayDequeue) && delay && !entity_eligible(cfs, se)) {
      fair_update_load_avg(k_, rq, cfs, &se, 0);
      set_delayed(se);
      return false;
    }
  }
  // DO_DETACH for a migrating task only, not for the group entities its
  // walk empties.
  fair_update_load_avg(k_, rq, cfs, &se, kUpdateTg | ((flags & kDequeueMigrating) && !se.my_q ? kDoDetach : 0));
  se_update_runnable(se);
  update_entity_lag(cfs, se);
  if (feat(SchedFeat::kPlaceRelDeadline) && !sleep) {
    se.deadline -= se.vruntime;
    se.rel_deadline = true;
  }
  if (&se != cfs.curr) dequeue_from_tree(cfs, se);
  se.on_rq = false;
  cfs.load_weight -= se.scaled_weight();
  --cfs.nr_running;  // account_entity_dequeue()
  update_cfs_group(rq, se);
  // Advance min_vruntime unless the entity comes straight back
  // (DEQUEUE_SAVE without DEQUEUE_MOVE).
  if ((flags & (kDequeueSave | kDequeueMove)) != kDequeueSave) update_min_vruntime(cfs);
  if (flags & kDequeueDelayed) {
    // finish_delayed_dequeue_entity()
    clear_delayed(se);
    if (feat(SchedFeat::kDelayZero) && se.vlag > 0) se.set_vlag(0, protect_mode());
  }
  return true;
}

bool EevdfClass::dequeue_entities(Rq& rq, SE& entity, int flags) {
  Task* const p = entity.my_q ? nullptr : entity.task;
  int h_nr_running = 0, idle_h_nr_running = 0, h_nr_delayed = 0;
  int64_t slice = 0;
  const bool task_sleep = flags & kDequeueSleep;
  if (p) {
    h_nr_running = 1;
    idle_h_nr_running = p->policy == Policy::kIdle ? 1 : 0;
    // A delayed task leaving for a change (DEQUEUE_SAVE) or a migration
    // stays delayed; it leaves the counts of delayed tasks until it is back.
    if (!(flags & (kDequeueSleep | kDequeueDelayed))) h_nr_delayed = entity.sched_delayed ? 1 : 0;
  } else if (slices_up() && !k_.version_info().delayed_group_slice_fix) {
    slice = cfs_rq_min_slice(*entity.my_q, nullptr);
  }
  SE* se = &entity;
  while (se) {
    CfsRq& cfs = *se->cfs_rq;
    if (!dequeue_entity(rq, cfs, *se, flags)) {
      if (p && se == &p->se) return false;
      // A group entity stays queued, delayed; the second walk starts at it
      // (6.18: with its own level's smallest slice).
      if (slices_up() && k_.version_info().delayed_group_slice_fix) slice = cfs_rq_min_slice(cfs, nullptr);
      break;
    }
    cfs.h_nr_running -= h_nr_running;
    cfs.idle_h_nr_running -= idle_h_nr_running;
    cfs.h_nr_delayed -= h_nr_delayed;
    if (cfs.idle) idle_h_nr_running = h_nr_running;
    // Don't dequeue the parent if it has other entities besides this one.
    if (cfs.load_weight) {
      if (se->parent && slices_up()) slice = cfs_rq_min_slice(cfs, nullptr);
      se = se->parent;
      // Bias the pick to this group: p slept within its slice.
      if (task_sleep && se) set_next_buddy(se);
      break;
    }
    flags |= kDequeueSleep;
    flags &= ~(kDequeueDelayed | kDequeueSpecial);
    se = se->parent;
  }
  if (se) update_ancestors(rq, se, slice, -h_nr_running, -idle_h_nr_running, -h_nr_delayed);
  return true;
}

bool EevdfClass::dequeue_task(Rq& rq, Task& p, int flags) {
  const bool sleep = flags & kDequeueSleep;
  if (!k_.util_est_update_first()) {
    // 6.6's dequeue_task_fair(): util_est_dequeue(), the dequeue (with its
    // update_load_avg()), then util_est_update().
    fair_util_est_dequeue(rq, p);
    const bool done = dequeue_entities(rq, p.se, flags);
    fair_util_est_update(k_, rq, p, sleep);
    return done;
  }
  // 6.12+ dequeue_task_fair(): util_est_dequeue() unless the task is
  // delayed and (6.12) saved or migrating / (6.18) at all; then
  // util_est_update(), also when a class change completes a delayed
  // dequeue (DEQUEUE_SLEEP | DEQUEUE_DELAYED: a second sample of the same
  // sleep, as the kernel takes it).
  const bool delayed = p.se.sched_delayed;
  if (!(delayed && (k_.util_est_dequeue_skips_delayed() || (flags & (kDequeueSave | kDequeueMigrating)))))
    fair_util_est_dequeue(rq, p);
  fair_util_est_update(k_, rq, p, sleep);
  return dequeue_entities(rq, p.se, flags);
}

// pick_next_entity(): the next buddy if eligible (under PICK_BUDDY from
// 6.12, NEXT_BUDDY before), else EEVDF; a delayed entity that comes up is
// dequeued for good instead (and the pick retried): a task then blocks, a
// group entity just leaves. 6.17+ takes the buddy inside pick_eevdf()
// (protect_slice()).
SE* EevdfClass::pick_next_entity(Rq& rq, CfsRq& cfs) {
  PickWhy why;
  SE* se;
  const bool buddy_pick = feat(k_.version_info().pick_buddy ? SchedFeat::kPickBuddy : SchedFeat::kNextBuddy);
  if (!protect_mode() && buddy_pick && cfs.next && entity_eligible(cfs, *cfs.next)) {
    se = cfs.next;
    why = k_.version_info().pick_buddy ? PickWhy::kPickBuddy : PickWhy::kNextBuddy;
  } else {
    se = pick_eevdf(cfs, &why);
  }
  if (se && cfs.nr_running > 1) {
    if (sim_log_debug.load(std::memory_order_relaxed)) [[unlikely]]
      explain_pick(rq, cfs, "pick_eevdf", se, why);
    // (The counts keep the group name by reference: a cgroup's name lives
    // as long as the kernel.)
    k_.count_decision(Kernel::Decision::kPick, se->task ? se->task->group : k_.task_group_name(se->my_q->tg),
                      se->sched_delayed ? "a delayed entity (DELAY_DEQUEUE) came up: dequeued for good, pick again"
                                        : pick_why_text(why));
  }
  if (se && se->sched_delayed) {
    dequeue_delayed_pick(rq, *se);
    return nullptr;
  }
  return se;
}

// pick_next_entity()'s delayed winner: dequeued for good (a task then
// blocks, a group entity just leaves), so the caller picks again.
void EevdfClass::dequeue_delayed_pick(Rq& rq, SE& se) {
  SL_DEBUG("{:.6f} cpu{} {} is delayed (DELAY_DEQUEUE): dequeued now, pick again", k_.clock().to_s(), rq.cpu,
           entity_name(se));
  Task* const p = se.my_q ? nullptr : se.task;
  dequeue_entities(rq, se, kDequeueSleep | kDequeueDelayed);
  if (p) k_.block_task(rq, *p);
}

// pick_task_fair(): down the hierarchy from the root, each level's pick;
// a delayed entity dequeued on the way starts it again.
Task* EevdfClass::pick_task(Rq& rq) {
  for (;;) {
    CfsRq* cfs = &rq.cfs;
    if (!cfs->nr_running) return nullptr;
    SE* se;
    do {
      if (cfs->curr && cfs->curr->on_rq) update_curr(rq, *cfs);
      se = pick_next_entity(rq, *cfs);
      if (!se) break;
      cfs = se->my_q;
    } while (cfs);
    if (se) return se->task;
  }
}

// put_prev_entity(): the outgoing entity goes back into the tree if queued.
void EevdfClass::put_prev_entity(Rq& rq, CfsRq& cfs, SE& se) {
  if (se.on_rq) {
    update_curr(rq, cfs);
    enqueue_in_tree(cfs, se);
    fair_update_load_avg(k_, rq, cfs, &se, 0);
  }
  cfs.curr = nullptr;
}

// set_next_entity(): curr leaves the tree; its deadline is stashed in vlag
// (the RUN_TO_PARITY marker).
void EevdfClass::set_next_entity(Rq& rq, CfsRq& cfs, SE& se, bool first) {
  clear_buddies(cfs, se);
  if (se.on_rq) {
    dequeue_from_tree(cfs, se);
    fair_update_load_avg(k_, rq, cfs, &se, kUpdateTg);
    if (!protect_mode()) se.vlag = se.deadline;
  }
  if (protect_mode() && first) set_protect_slice(cfs, se);
  se.exec_start = k_.clock().count();
  cfs.curr = &se;
  se.prev_sum_exec_runtime = se.sum_exec_runtime;
}

// put_prev_task_fair(), or -- prev and next both fair, next another task,
// groups in play, and the fair class's own pick (not the fair server's,
// whose put_prev_set_next_task() walks every level) --
// pick_next_task_fair()'s partial switch: put and
// set only the levels below the cfs_rq the two hierarchies share, then
// the entities they have there. Ancestors common to both are left alone
// (their tree place, PELT and RUN_TO_PARITY stash). set_next_task() then
// has only __set_next_task_fair() left to do.
void EevdfClass::put_prev_task(Rq& rq, Task& prev, Task* next) {
  if (!prev.se.parent && !(next && next->se.parent)) {  // both in the root group: one level
    put_prev_entity(rq, *prev.se.cfs_rq, prev.se);
    return;
  }
  if (next && next != &prev && next->sched_class == SchedClassId::kFair && !rq.fair_server_picked) {
    switch_levels(
        &prev.se, &next->se, [&](CfsRq& cfs, SE& se) { put_prev_entity(rq, cfs, se); },
        [&](CfsRq& cfs, SE& se) { set_next_entity(rq, cfs, se, true); });
    next_levels_set_ = next;
    return;
  }
  for (SE* se = &prev.se; se; se = se->parent) put_prev_entity(rq, *se->cfs_rq, *se);
}

// set_next_task_fair(): set_next_entity() at every level (unless
// put_prev_task() switched them; bottom-up, or on 6.6 after a pick from
// another class top-down, as its pick_next_task_fair() does), then
// __set_next_task_fair().
void EevdfClass::set_next_task(Rq& rq, Task& p, bool first) {
  if (next_levels_set_ == &p) {
    next_levels_set_ = nullptr;
  } else if (first && p.se.parent && k_.version_info().pick_sets_levels_top_down) {
    // 6.6's simple path: each level's entity set on the way down.
    set_levels_top_down(p.se, [&](CfsRq& cfs, SE& se) { set_next_entity(rq, cfs, se, true); });
  } else {
    for (SE* se = &p.se; se; se = se->parent) set_next_entity(rq, *se->cfs_rq, *se, first);
  }
  // __set_next_task_fair(): a queued task picked moves to the head of
  // cfs_tasks (the list is most recently used first).
  if (p.se.on_rq) k_.cfs_tasks_move_to_head(p);
  if (first) update_misfit_status(k_, rq, &p);
}

void EevdfClass::update_group_weight(Rq& rq, SE& se) {
  CfsRq* gcfs = se.my_q;
  // "When a group becomes empty, preserve its weight" (DELAY_DEQUEUE;
  // 6.12+). 6.6 reweights it from the group's blocked load.
  if (!gcfs->load_weight && k_.version_info().group_keeps_weight_when_empty) return;
  const uint64_t shares = k_.calc_group_shares(*gcfs);
  if (se.group_weight_scaled != shares) reweight_entity(rq, *se.cfs_rq, se, shares);
}

// reweight_entity() with reweight_eevdf() (6.12.19), for a group entity
// (`weight` scaled, as calc_group_shares() gives it): a queued entity
// keeps its lag (clamped as entity_lag() does) and its virtual deadline's
// distance from V, both scaled by old/new weight at full resolution; a
// dequeued one its vlag. 6.18.35 re-places instead (below).
void EevdfClass::reweight_entity(Rq& rq, CfsRq& cfs, SE& se, uint64_t weight) {
  if (k_.version_info().reweight_by_place) return reweight_entity_by_place(rq, cfs, se, weight);
  const bool is_curr = cfs.curr == &se;
  const int64_t old_weight = static_cast<int64_t>(se.group_weight_scaled);
  const auto rescale = [&](int64_t v) { return rescale_by_weight(v, old_weight, weight); };
  int64_t avruntime = 0;
  if (se.on_rq) {
    update_curr(rq, cfs);  // commit outstanding execution time
    avruntime = avg_vruntime(cfs);
    if (!is_curr) dequeue_from_tree(cfs, se);
    cfs.load_weight -= se.group_weight_scaled;
  }
  dequeue_load_avg(cfs.avg, se.avg, se.weight);
  if (se.on_rq) {
    if (avruntime != se.vruntime) {
      const int64_t limit = vdelta(se, lag_span(cfs, se));
      se.vruntime = avruntime - rescale(std::clamp(avruntime - se.vruntime, -limit, limit));
    }
    se.deadline = avruntime + rescale(se.deadline - avruntime);
  } else {
    se.vlag = rescale(se.vlag);
  }
  set_group_weight(se, weight);
  enqueue_load_avg(cfs.avg, se.avg, se.weight);
  if (se.on_rq) {
    cfs.load_weight += se.group_weight_scaled;
    if (!is_curr) enqueue_in_tree(cfs, se);
    update_min_vruntime(cfs);
  }
}

// reweight_entity() of 6.18.35: a queued entity's lag is clamped
// (update_entity_lag()) and its deadline -- and, running within its
// protected slice, its vprot -- made relative to its vruntime; it leaves
// the queue's sums (nr_running too); vlag and the relative values scale
// by old/new weight; place_entity() puts it back around the queue's V as
// a re-joining entity with that lag. (Running, it is counted in V and
// twice in place_entity()'s lag inflation, at its new weight: as the
// kernel does.) A dequeued entity's vlag, and its deadline if relative,
// scale the same way.
void EevdfClass::reweight_entity_by_place(Rq& rq, CfsRq& cfs, SE& se, uint64_t weight) {
  const bool is_curr = cfs.curr == &se;
  const int64_t old_weight = static_cast<int64_t>(se.group_weight_scaled);
  bool rel_vprot = false;
  int64_t vprot = 0;
  if (se.on_rq) {
    update_curr(rq, cfs);
    update_entity_lag(cfs, se);
    se.deadline -= se.vruntime;
    se.rel_deadline = true;
    if (is_curr && protect_slice(se)) {
      vprot = se.vprot - se.vruntime;
      rel_vprot = true;
    }
    --cfs.nr_running;
    if (!is_curr) dequeue_from_tree(cfs, se);
    cfs.load_weight -= se.group_weight_scaled;
  }
  dequeue_load_avg(cfs.avg, se.avg, se.weight);
  se.set_vlag(rescale_by_weight(se.vlag, old_weight, weight), protect_mode());
  if (se.rel_deadline) se.deadline = rescale_by_weight(se.deadline, old_weight, weight);
  if (rel_vprot) vprot = rescale_by_weight(vprot, old_weight, weight);
  set_group_weight(se, weight);
  enqueue_load_avg(cfs.avg, se.avg, se.weight);
  if (se.on_rq) {
    place_entity(cfs, se, 0);
    if (rel_vprot) se.vprot = se.vruntime + vprot;
    cfs.load_weight += se.group_weight_scaled;
    if (!is_curr) enqueue_in_tree(cfs, se);
    ++cfs.nr_running;
  }
}

// cfs_rq_max_slice() (6.18): the largest slice among queued entities, curr
// included. (6.18.35's tree augment can keep a stale max for a re-inserted
// node, fixed after 6.18.35; the model keeps the true max. Not emulated:
// with every slice the base one they cannot differ.)
int64_t EevdfClass::cfs_rq_max_slice(const CfsRq& cfs) const {
  int64_t slice = 0;
  if (cfs.curr && cfs.curr->on_rq) slice = cfs.curr->slice;
  for (const SE* t : cfs.timeline) slice = std::max(slice, t->slice);
  return slice;
}

// cfs_rq_min_slice(): the smallest slice among queued entities (and `also`).
int64_t EevdfClass::cfs_rq_min_slice(const CfsRq& cfs, const SE* also) const {
  int64_t slice = also ? also->slice : INT64_MAX;
  if (cfs.curr && cfs.curr->on_rq) slice = std::min(slice, cfs.curr->slice);
  for (const SE* t : cfs.timeline) slice = std::min(slice, t->slice);
  return slice;
}

// set_protect_slice() (6.17): protect current up to its deadline, or for
// the smallest queued slice if that is shorter (without RUN_TO_PARITY: one
// normalised base slice: 0.70 ms on 6.18).
void EevdfClass::set_protect_slice(CfsRq& cfs, SE& se) {
  int64_t slice = feat(SchedFeat::kRunToParity) ? cfs_rq_min_slice(cfs, &se) : k_.version_info().base_slice_ns;
  slice = std::min(slice, se.slice);
  int64_t vprot = se.deadline;
  if (slice != se.slice) vprot = std::min(vprot, se.vruntime + vdelta(se, slice));
  se.vprot = vprot;
}

// update_protect_slice() (6.18.35): a waking task with a shorter slice
// shrinks the protection of current to that slice. (No test of the slice
// against current's own: with equal slices the minimum keeps vprot.)
void EevdfClass::update_protect_slice(CfsRq& cfs, SE& se) {
  int64_t slice = cfs_rq_min_slice(cfs, nullptr);
  se.vprot = std::min(se.vprot, se.vruntime + vdelta(se, slice));
}

// yield_task_fair(): push the deadline one slice out; from 6.17 an
// eligible yielder gives up the rest of its slice in vruntime too.
void EevdfClass::yield_task(Rq& rq) {
  if (!rq.cfs.curr || rq.nr_running == 1) return;
  SE* curr = &rq.curr->se;  // at the task's own level only
  CfsRq& cfs = *curr->cfs_rq;
  clear_buddies(cfs, *curr);
  update_curr(rq, cfs);
  if (protect_mode()) {
    if (entity_eligible(cfs, *curr)) {
      curr->vruntime = curr->deadline;
      update_deadline(*curr);
    }
    return;
  }
  curr->deadline += vdelta(*curr, curr->slice);
}

bool EevdfClass::do_preempt_short(const CfsRq& cfs, const SE& pse, const SE& se) const {
  if (!feat(SchedFeat::kPreemptShort)) return false;
  if (pse.slice >= se.slice) return false;
  if (!entity_eligible(cfs, pse)) return false;
  if (entity_before(pse, se)) return true;
  if (!entity_eligible(cfs, se)) return true;
  return false;
}

bool EevdfClass::did_preempt_short(const CfsRq& cfs, const SE& curr) const {
  if (!feat(SchedFeat::kPreemptShort)) return false;
  if (curr.vlag == curr.deadline) return false;
  return !entity_eligible(cfs, curr);
}

// check_preempt_wakeup_fair() to 6.12 (6.18: wakeup_preempt_by_action()).
void EevdfClass::wakeup_preempt(Rq& rq, Task& p, int wake_flags) {
  if (k_.version_info().wakeup_preempt_actions) return wakeup_preempt_by_action(rq, p, wake_flags);
  Task& curr = *rq.curr;
  if (&curr == &p) return;
  // set_next_buddy() never nominates a SCHED_IDLE entity (se_is_idle()).
  if (feat(SchedFeat::kNextBuddy) && !(wake_flags & kWfFork) && !p.se.sched_delayed) set_next_buddy(&p.se);
  if (rq.need_resched) return;
  if (!feat(SchedFeat::kWakeupPreemption)) {
    k_.note_why("eevdf: WAKEUP_PREEMPTION is off");
    return;
  }
  // Compare the two at the level where their hierarchies meet.
  SE* pse = &p.se;
  SE* const se = wakeup_matched_level(rq, p, pse);
  if (!se) return;
  CfsRq& cfs = *se->cfs_rq;
  update_curr(rq, cfs);
  // A shorter-slice waker cancels current's RUN_TO_PARITY protection.
  if (do_preempt_short(cfs, *pse, *se) && se->vlag == se->deadline) se->vlag = se->deadline + 1;
  PickWhy why;
  SE* const pick = pick_eevdf(cfs, &why);
  if (sim_log_debug.load(std::memory_order_relaxed)) [[unlikely]]
    explain_pick(rq, cfs, "wakeup_preempt: pick_eevdf", pick, why);
  if (pick == pse) {
    k_.note_why("eevdf: the wakee is pick_eevdf()'s choice");
    k_.resched_curr_lazy(rq);
    return;
  }
  // (update_curr() above may have asked for a pick itself: its reason stands.)
  if (!rq.need_resched && !rq.need_resched_lazy) k_.note_why(not_chosen_text(why));
}

// check_preempt_wakeup_fair()'s checks at the level where curr's and p's
// hierarchies meet (find_matching_se(): *pse becomes p's entity there): a
// non-idle entity preempts an idle one (6.18 cancels curr's protected
// slice first), never the reverse, and a BATCH or IDLE task preempts no
// one. Returns curr's entity at that level, or null when decided.
SE* EevdfClass::wakeup_matched_level(Rq& rq, Task& p, SE*& pse) {
  SE* se = &rq.curr->se;
  find_matching_se(se, pse);
  const bool curr_idle = se_is_idle(*se);
  const bool p_idle = se_is_idle(*pse);
  if (curr_idle && !p_idle) {
    if (protect_mode()) {
      k_.note_why("eevdf: a non-idle task preempts a SCHED_IDLE one (its protected slice cancelled)");
      cancel_protect_slice(*se);
    } else {
      k_.note_why("eevdf: a non-idle task preempts a SCHED_IDLE one");
    }
    k_.resched_curr_lazy(rq);
    return nullptr;
  }
  if (curr_idle != p_idle) {
    k_.note_why("eevdf: a SCHED_IDLE wakee does not preempt");
    return nullptr;
  }
  if (p.policy != Policy::kNormal) {
    k_.note_why("eevdf: a SCHED_BATCH or SCHED_IDLE wakee does not preempt (only SCHED_NORMAL does)");
    return nullptr;
  }
  return se;
}

// check_preempt_wakeup_fair() of 6.18.35, by preempt_wakeup_action: a
// non-idle wakee over an idle curr preempts and cancels curr's protected
// slice; a shorter-slice wakee is judged by a pick that ignores the
// protection (cancelled only if the wakee wins); otherwise a forked or
// delayed wakee does not preempt, NEXT_BUDDY (off by default) nominates
// the wakee's matched level unless the current buddy's deadline is
// earlier, and then WF_SYNC preempts by preempt_sync() alone; the pick is
// pick_next_entity(): a delayed winner is dequeued and the pick repeated.
void EevdfClass::wakeup_preempt_by_action(Rq& rq, Task& p, int wake_flags) {
  Task& curr = *rq.curr;
  if (&curr == &p) return;
  if (rq.need_resched) return;
  if (!feat(SchedFeat::kWakeupPreemption)) {
    k_.note_why("eevdf: WAKEUP_PREEMPTION is off");
    return;
  }
  SE* pse = &p.se;
  SE* const se = wakeup_matched_level(rq, p, pse);
  if (!se) return;
  CfsRq& cfs = *se->cfs_rq;
  update_curr(rq, cfs);
  const bool shorter = feat(SchedFeat::kPreemptShort) && pse->slice < se->slice;
  if (!shorter) {
    if ((wake_flags & kWfFork) || pse->sched_delayed) {
      k_.note_why((wake_flags & kWfFork) ? "eevdf: a forked task does not preempt by EEVDF order (6.18)"
                                         : "eevdf: a delayed wakee does not preempt");
      return;
    }
    if (feat(SchedFeat::kNextBuddy) && !(cfs.next && entity_before(*cfs.next, *pse))) {  // set_preempt_buddy()
      set_next_buddy(pse);
      if (wake_flags & kWfSync) {
        // preempt_sync(): the waker is expected to sleep; it keeps the CPU
        // for sysctl_sched_migration_cost (a quarter if the wake-up chose
        // this CPU) unless the wakee's deadline is earlier. As in 6.18.35,
        // the time run is measured from exec_start, which update_curr()
        // above has just set to now: the waker always keeps the CPU.
        int64_t threshold = Kernel::kMigrationCostNs;
        if (wake_flags & kWfRqSelected) threshold >>= 2;
        const int64_t ran = std::max<int64_t>(0, k_.clock().count() - se->exec_start);
        if (entity_before(*pse, *se) && ran >= threshold) {
          k_.note_why("eevdf: NEXT_BUDDY, WF_SYNC: the wakee's deadline is earlier and the waker ran its share");
          k_.resched_curr_lazy(rq);
        } else {
          k_.note_why("eevdf: NEXT_BUDDY, WF_SYNC: the waker keeps the CPU for now (preempt_sync())");
        }
        return;
      }
    }
  }
  for (;;) {
    PickWhy why;
    SE* const pick = pick_eevdf(cfs, &why, !shorter);
    if (sim_log_debug.load(std::memory_order_relaxed)) [[unlikely]]
      explain_pick(rq, cfs, "wakeup_preempt: pick_next_entity", pick, why);
    if (pick == pse) {
      k_.note_why(shorter ? "eevdf: PREEMPT_SHORT: the shorter-slice wakee is the pick without curr's protection"
                          : "eevdf: the wakee is pick_eevdf()'s choice");
      if (shorter) cancel_protect_slice(*se);
      k_.resched_curr_lazy(rq);
      return;
    }
    if (!pick->sched_delayed) {
      if (!rq.need_resched && !rq.need_resched_lazy) k_.note_why(not_chosen_text(why));
      break;
    }
    dequeue_delayed_pick(rq, *pick);  // pick_next_entity()'s
    if (!cfs.nr_running) return;
  }
  if (feat(SchedFeat::kRunToParity)) update_protect_slice(cfs, *se);
}

// switched_to_fair(): a task that became fair (PI unboost) joins the
// cfs_rq's PELT signals and preempts if it is now the better pick.
void EevdfClass::switched_to(Rq& rq, Task& p) {
  // switched_to_fair() (6.10+): the mask may have changed while p was in
  // another class, whose set_cpus_allowed() does not track the capacity.
  k_.set_task_max_allowed_capacity(p);
  attach_task_cfs_rq(rq, p);
  if (!p.se.on_rq) return;
  if (rq.curr == &p)
    k_.resched_curr(rq);
  else
    k_.wakeup_preempt(rq, p, 0);  // core.c's: a fair task never preempts a higher class
}


}  // namespace

std::unique_ptr<SchedClass> make_eevdf_class(Kernel& k) { return std::make_unique<EevdfClass>(k); }

}  // namespace schedlab
