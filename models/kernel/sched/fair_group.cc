// CONFIG_FAIR_GROUP_SCHED's hierarchy of cpu cgroups (Linux 6.12
// kernel/sched/fair.c: alloc_fair_sched_group(), init_tg_cfs_entry(),
// sched_group_set_shares(); core.c: cpu_shares_write_u64(),
// cpu_weight_write_u64()). A cpu cgroup with a cpu weight gets a cfs_rq
// and a group entity on every CPU; the fair class walks entities up and
// down the hierarchy (EEVDF: fair_eevdf.cc; 6.1's CFS: fair_cfs.cc), PELT
// propagates up it
// (fair_pelt.cc). docs/fair_group_sched.md is the plan; this file holds
// its stages 2-4: the groups and their entities, a group entity's weight
// from the group's load spread over the CPUs (calc_group_shares(),
// update_tg_load_avg()), the leaf list and the blocked-load updates of
// group cfs_rqs (__update_blocked_fair()), and the hierarchical load the
// balancer weighs tasks by (update_cfs_rq_h_load()). 6.12, and 6.6.63
// with its differences (KernelVersionInfo: an emptied group entity
// reweighted, tg->load_avg published without a rate limit, the levels set
// top-down after a pick from another class), and 6.18.35 with its own (a
// delayed group entity's slice, the leaf list waiting for a zero
// tg->load_avg contribution, the balancer's eligibility test on the
// task's group cfs_rq at dst). 6.1.166's group PELT and shares paths are
// 6.6.63's (function bodies compared) but for update_cfs_group(), which
// reweights without 6.6's unchanged-weight shortcut (fair_cfs.cc). A
// cpu.idle group (sched_group_set_idle(), the same in all four) is a level
// at WEIGHT_IDLEPRIO shares whose cfs_rqs are idle, set from the start;
// the class walks count its tasks idle (idle_h_nr_running) and
// se_is_idle() treats its entities as SCHED_IDLE; a write during a run
// is sched_group_set_idle(). Not modelled: CFS bandwidth (cpu.max),
// autogroup.
#include <fmt/format.h>

#include "models/errors.h"
#include "models/kernel/kernel.h"
#include "models/kernel/sched/fair_pelt.h"
#include "models/kernel/sched/pelt.h"
#include "models/kernel/sched/weights.h"

namespace schedlab {
namespace {

// sched.h MIN_SHARES / MAX_SHARES (unscaled) and core.c's cgroup v2
// conversion: cpu.weight 1..10000, 100 = 1024 shares.
constexpr int64_t kMinShares = 2;
constexpr int64_t kMaxShares = int64_t{1} << 18;
constexpr int64_t kCgroupWeightMin = 1;
constexpr int64_t kCgroupWeightMax = 10000;
constexpr int64_t kCgroupWeightDfl = 100;

// cpu_weight_write_u64(): ERANGE outside 1..10000; then
// sched_weight_from_cgroup(): cpu.weight to shares, rounded to nearest.
int64_t shares_from_cpu_weight(const std::string& group, int64_t weight) {
  if (weight < kCgroupWeightMin || weight > kCgroupWeightMax)
    throw ModelError(fmt::format("cpu cgroup '{}': cpu.weight {} outside {}..{} (ERANGE)", group, weight,
                                 kCgroupWeightMin, kCgroupWeightMax));
  return (weight * 1024 + kCgroupWeightDfl / 2) / kCgroupWeightDfl;
}

}  // namespace

void SchedClass::task_change_group(Rq& rq, Task& p) { k_.set_task_rq(p, p.cpu); }

void Kernel::cpu_weight_write(int group, int64_t weight) {
  sched_group_set_shares(group, shares_from_cpu_weight(task_groups_[static_cast<size_t>(group)].name, weight));
}

void Kernel::cpu_shares_write(int group, int64_t shares) { sched_group_set_shares(group, shares); }

// sched_group_set_shares() -> __sched_group_set_shares() (6.12.19; 6.6.63
// and 6.18.35 the same): the value clamped to MIN_SHARES..MAX_SHARES and
// scaled; unchanged, nothing. Otherwise tg->shares takes it, and on every
// CPU the group's entity and its ancestors take their cfs_rqs' state and
// new weights at once (rq clock brought to now first). An entity whose
// group is empty there keeps its weight (6.12+'s update_cfs_group(); 6.6
// reweights it from the group's blocked load).
void Kernel::sched_group_set_shares(int group, int64_t shares) {
  require_fair_level(group);
  // sched_group_set_shares(): -EINVAL for an idle group.
  if (tg_is_idle(group))
    throw ModelError(fmt::format("cpu cgroup '{}' is idle (cpu.idle 1): the kernel refuses its cpu.weight and "
                                 "cpu.shares writes (EINVAL)",
                                 task_groups_[static_cast<size_t>(group)].name));
  set_group_shares(group, std::clamp(shares, kMinShares, kMaxShares));
}

void Kernel::require_fair_level(int group) const {
  const size_t g = static_cast<size_t>(group);
  if (g == 0 || g >= fair_group_shares_.size() || !fair_group_shares_[g])
    throw ModelError(fmt::format("cpu cgroup '{}' has no cpu weight: it is not a level of the fair hierarchy "
                                 "(give it cpu_weight, cpu_shares or cpu_idle in cgroups[])",
                                 g < task_groups_.size() ? task_groups_[g].name : std::to_string(group)));
}

// __sched_group_set_shares() past its clamp.
void Kernel::set_group_shares(int group, int64_t shares) {
  const size_t g = static_cast<size_t>(group);
  const uint64_t scaled = static_cast<uint64_t>(shares) << kSchedFixedpointShift;
  if (fair_group_shares_[g] == scaled) return;
  fair_group_shares_[g] = scaled;
  SchedClass& fair = *classes_[static_cast<size_t>(SchedClassId::kFair)];
  for (int cpu = 0; cpu < nr_cpus(); ++cpu) {
    Rq& rq = *rqs_[static_cast<size_t>(cpu)];
    update_rq_clock(rq);
    fair.group_shares_changed(rq, fair_group_rqs_[fair_group_slot(group, cpu)]->se);
  }
}

// sched_group_set_idle() (6.12.19; 6.1.166, 6.6.63 and 6.18.35 the same):
// unchanged, nothing. Otherwise on every CPU the group's cfs_rq takes the
// mark, and its tasks there move into (or out of) idle_h_nr_running on
// each queued level above it, up to the first idle one (which counts them
// already); the parent's idle_nr_running follows by itself in the model
// (sched_idle_cfs_rq() counts idle entities). Then the group's weight:
// WEIGHT_IDLEPRIO when idle, NICE_0_LOAD when not (whatever cpu.weight
// said before), through __sched_group_set_shares().
void Kernel::sched_group_set_idle(int group, bool idle) {
  require_fair_level(group);
  if (tg_is_idle(group) == idle) return;
  for (int cpu = 0; cpu < nr_cpus(); ++cpu) {
    FairGroupRq& grq = *fair_group_rqs_[fair_group_slot(group, cpu)];
    grq.cfs.idle = idle;
    int delta = grq.cfs.h_nr_running - grq.cfs.idle_h_nr_running;
    if (!idle) delta = -delta;
    for (SchedEntity* se = &grq.se; se && se->on_rq; se = se->parent) {
      se->cfs_rq->idle_h_nr_running += delta;
      if (se->cfs_rq->idle) break;  // accounted at that level and above
    }
  }
  set_group_shares(group, idle ? static_cast<int64_t>(kWeightIdlePrio) : static_cast<int64_t>(kNice0Load));
}

void Kernel::setup_fair_groups() {
  fair_group_shares_.assign(task_groups_.size(), 0);
  bool any = false;
  std::vector<bool> idle(task_groups_.size(), false);
  for (const KernelParams::CpuCgroup& c : params_.cgroups) {
    if (!c.fair_level()) continue;
    const size_t g = static_cast<size_t>(find_task_group(c.name));
    if (c.cpu_shares && c.cpu_weight)
      throw ModelError(fmt::format("cpu cgroup '{}': give cpu_shares (cgroup v1) or cpu_weight (v2), not both", c.name));
    if (c.cpu_idle && (c.cpu_shares || c.cpu_weight))
      throw ModelError(fmt::format("cpu cgroup '{}': an idle group's weight is WEIGHT_IDLEPRIO (cpu.idle); "
                                   "give cpu_idle or a cpu weight, not both",
                                   c.name));
    int64_t shares;
    if (c.cpu_idle) {
      // sched_group_set_idle(): "Idle groups have minimum weight."
      shares = static_cast<int64_t>(kWeightIdlePrio);
      idle[g] = true;
    } else if (c.cpu_weight) {
      shares = shares_from_cpu_weight(c.name, *c.cpu_weight);
    } else {
      // __sched_group_set_shares() clamps; a value it would change is
      // refused here so the scenario says what runs.
      if (*c.cpu_shares < kMinShares || *c.cpu_shares > kMaxShares)
        throw ModelError(fmt::format("cpu cgroup '{}': cpu.shares {} outside {}..{} (the kernel would clamp it)",
                                     c.name, *c.cpu_shares, kMinShares, kMaxShares));
      shares = *c.cpu_shares;
    }
    const int parent = task_groups_[g].parent;
    if (parent != 0 && !fair_group_shares_[static_cast<size_t>(parent)])
      throw ModelError(fmt::format("cpu cgroup '{}': its parent '{}' has no cpu weight; in the kernel every group is a "
                                   "level of the hierarchy, so give the parent one too (cpu_weight: 100 is the default)",
                                   c.name, task_groups_[static_cast<size_t>(parent)].name));
    fair_group_shares_[g] = static_cast<uint64_t>(shares) << kSchedFixedpointShift;  // scale_load()
    any = true;
  }
  for (size_t g = 1; g < task_groups_.size(); ++g) {
    const int parent = task_groups_[g].parent;
    if (!fair_group_shares_[g] && parent != 0 && fair_group_shares_[static_cast<size_t>(parent)])
      throw ModelError(fmt::format("cpu cgroup '{}': its parent '{}' has a cpu weight, so it needs one too "
                                   "(cpu_weight: 100 is the kernel's default)",
                                   task_groups_[g].name, task_groups_[static_cast<size_t>(parent)].name));
  }
  if (!any) return;
  if (!params_.fair_group_sched)
    throw ModelError("cpu cgroups with cpu_weight or cpu_shares need kernel.fair_group_sched: true "
                     "(CONFIG_FAIR_GROUP_SCHED)");
  // 6.6 reweights an emptied group entity (update_cfs_group()): with
  // 6.12's delayed dequeue switched on as a what-if, a delayed group entity
  // would be reweighted while still queued, which no kernel does.
  if (!version_.group_keeps_weight_when_empty && features_(SchedFeat::kDelayDequeue))
    throw ModelError(fmt::format("cpu cgroups with a cpu weight and DELAY_DEQUEUE on kernel {}: no kernel has both "
                                 "(6.6's update_cfs_group() reweights an emptied group; 6.12's keeps its weight for "
                                 "delayed dequeue); turn DELAY_DEQUEUE off or run 6.12",
                                 version_.name));
  fair_group_load_avg_.assign(task_groups_.size(), 0);
  // alloc_fair_sched_group() + init_tg_cfs_entry(), parents first
  // (setup_task_groups() made a parent before its children).
  fair_group_rqs_.resize(task_groups_.size() * rqs_.size());
  for (size_t g = 1; g < task_groups_.size(); ++g) {
    if (!fair_group_shares_[g]) continue;
    for (int cpu = 0; cpu < nr_cpus(); ++cpu) {
      auto grq = std::make_unique<FairGroupRq>();
      CfsRq& parent_cfs = task_group_cfs_rq(task_groups_[g].parent, cpu);
      grq->cfs.tg = static_cast<int>(g);
      grq->cfs.se = &grq->se;
      grq->cfs.idle = idle[g];  // cfs_rq->idle, as sched_group_set_idle() sets it
      SchedEntity& se = grq->se;
      se.my_q = &grq->cfs;
      set_entity_cfs_rq(se, parent_cfs);
      // init_tg_cfs_entry(): NICE_0_LOAD until the first update_cfs_group();
      // the inverse computed as __update_inv_weight() does (WMULT_CONST / w).
      se.weight = kNice0Load;
      se.group_weight_scaled = kNice0Load << kSchedFixedpointShift;
      se.inv_weight = 0xFFFFFFFFu / static_cast<uint32_t>(se.weight);
      // init_entity_runnable_average(): a group entity starts with no load;
      // online_fair_sched_group() attaches it at once (attach_entity_cfs_rq():
      // the parent cfs_rq brought to now, the empty averages added), so its
      // first enqueue does not attach it again.
      init_entity_runnable_average(se.avg, se.weight, false);
      const uint64_t now = rqs_[static_cast<size_t>(cpu)]->pelt.rq_clock_pelt();
      update_load_avg_cfs_rq(now, parent_cfs.avg, scale_load_down(parent_cfs.load_weight), 0, false);
      attach_entity_load_avg(parent_cfs.avg, se.avg, se.weight);
      grq->cfs.leaf_node.owner = &grq->cfs;
      // propagate_entity_cfs_rq(): the parent's cfs_rq and its ancestors'
      // join the leaf list. Its updates up the levels are left out: the
      // empty entity's load_sum of 1 propagates as a load_avg of 0
      // (update_tg_cfs_load() stops at a zero delta), so they change no
      // value; only the root's cpufreq kick at t=0 is missing.
      for (CfsRq* q = &parent_cfs; q; q = q->parent_cfs_rq()) list_add_leaf_cfs_rq(*rqs_[static_cast<size_t>(cpu)], *q);
      fair_group_rqs_[fair_group_slot(static_cast<int>(g), cpu)] = std::move(grq);
    }
  }
}

uint64_t Kernel::calc_group_shares(const CfsRq& gcfs) const {
  const int64_t tg_shares = static_cast<int64_t>(fair_group_shares_[static_cast<size_t>(gcfs.tg)]);
  const int64_t load = static_cast<int64_t>(std::max(scale_load_down(gcfs.load_weight), gcfs.avg.load_avg));
  // "Ensure tg_weight >= load": this cfs_rq's part of tg->load_avg as of
  // now, not as last published.
  const int64_t tg_weight =
      fair_group_load_avg_[static_cast<size_t>(gcfs.tg)] - static_cast<int64_t>(gcfs.tg_load_avg_contrib) + load;
  int64_t shares = tg_shares * load;
  if (tg_weight) shares /= tg_weight;
  // MIN_SHARES unscaled: the floor of a CPU holding none of the group's load.
  return static_cast<uint64_t>(std::clamp(shares, kMinShares, tg_shares));
}

void Kernel::update_tg_load_avg(CfsRq& cfs) {
  if (!cfs.se) return;  // the root group's load_avg is never read
  // Once per ms of sched_clock_cpu() at most ("for migration heavy
  // workloads"; the model's clocks are one). 6.6 has no rate limit.
  const uint64_t now_ns = static_cast<uint64_t>(now().count()) + kRqClockAtZeroNs;
  const bool ratelimit = version_.tg_load_avg_ratelimit;
  if (ratelimit && now_ns - cfs.last_update_tg_load_avg < 1000000) return;
  const int64_t delta = static_cast<int64_t>(cfs.avg.load_avg) - static_cast<int64_t>(cfs.tg_load_avg_contrib);
  if (static_cast<uint64_t>(std::abs(delta)) > cfs.tg_load_avg_contrib / 64) {
    fair_group_load_avg_[static_cast<size_t>(cfs.tg)] += delta;
    cfs.tg_load_avg_contrib = cfs.avg.load_avg;
    if (ratelimit) cfs.last_update_tg_load_avg = now_ns;
  }
}

namespace {
// list_add_rcu() / list_add_tail_rcu() / list_del_rcu() of <linux/list.h>.
void list_insert_between(LeafListNode* node, LeafListNode* prev, LeafListNode* next) {
  next->prev = node;
  node->next = next;
  node->prev = prev;
  prev->next = node;
}
void list_add(LeafListNode* node, LeafListNode* head) { list_insert_between(node, head, head->next); }
void list_add_tail(LeafListNode* node, LeafListNode* head) { list_insert_between(node, head->prev, head); }
void list_del(LeafListNode* node) {
  node->prev->next = node->next;
  node->next->prev = node->prev;
  node->prev = node->next = nullptr;
}
}  // namespace

// The parent's cfs_rq on this CPU is tg->parent->cfs_rq[cpu], the cfs_rq
// the group's entity is queued on (the root's for a top-level group; none
// for the root).
bool Kernel::list_add_leaf_cfs_rq(Rq& rq, CfsRq& cfs) {
  if (cfs.on_list) return rq.tmp_alone_branch == &rq.leaf_cfs_rq_list;
  cfs.on_list = true;
  CfsRq* const parent = cfs.parent_cfs_rq();
  if (parent && parent->on_list) {
    // Just before the parent; the branch is connected.
    list_add_tail(&cfs.leaf_node, &parent->leaf_node);
    rq.tmp_alone_branch = &rq.leaf_cfs_rq_list;
    return true;
  }
  if (!parent) {
    // The root: at the tail.
    list_add_tail(&cfs.leaf_node, &rq.leaf_cfs_rq_list);
    rq.tmp_alone_branch = &rq.leaf_cfs_rq_list;
    return true;
  }
  // The parent is not listed yet: it will go after this one.
  list_add(&cfs.leaf_node, rq.tmp_alone_branch);
  rq.tmp_alone_branch = &cfs.leaf_node;
  return false;
}

namespace {
void list_del_leaf_cfs_rq(Rq& rq, CfsRq& cfs) {
  if (!cfs.on_list) return;
  if (rq.tmp_alone_branch == &cfs.leaf_node) rq.tmp_alone_branch = cfs.leaf_node.prev;
  list_del(&cfs.leaf_node);
  cfs.on_list = false;
}

// child_cfs_rq_on_list(): children are added just before their parent and
// removed bottom up, so only the entry before cfs is looked at.
bool child_cfs_rq_on_list(const Rq& rq, const CfsRq& cfs) {
  const LeafListNode* prev = cfs.on_list ? cfs.leaf_node.prev : rq.tmp_alone_branch;
  if (prev == &rq.leaf_cfs_rq_list) return false;
  return prev->owner->parent_cfs_rq() == &cfs;
}
}  // namespace

bool Kernel::update_blocked_fair(Rq& rq, bool& done) {
  const auto has_blocked = [](const CfsRq& c) { return c.avg.load_avg || c.avg.util_avg; };  // cfs_rq_has_blocked()
  if (!fair_groups_active()) {
    // Every task in the root group: the root cfs_rq alone, always (a fully
    // decayed root off the kernel's leaf list gives the same values).
    const bool decayed = fair_update_cfs_rq(rq.cfs, rq.pelt.rq_clock_pelt());
    if (has_blocked(rq.cfs)) done = false;
    return decayed;
  }
  const uint64_t now = rq.pelt.rq_clock_pelt();
  bool decayed = false;
  const auto visit = [&](CfsRq& c) {
    if (fair_update_cfs_rq(c, now)) {
      update_tg_load_avg(c);
      if (&c == &rq.cfs) decayed = true;
    }
    // Pending load changes go to the parent, unless the group entity has
    // nothing left to decay and nothing to take on (skip_blocked_update()).
    if (SchedEntity* se = c.se; se && (se->avg.load_avg || se->avg.util_avg || c.propagate))
      fair_update_load_avg(*this, rq, *se->cfs_rq, se, kUpdateTg);
    // cfs_rq_is_decayed(): "don't let fully decayed cfs_rqs linger"; 6.18
    // waits until the cfs_rq's part of tg->load_avg is 0 as well.
    const SchedAvg& a = c.avg;
    if (!c.load_weight && !a.load_sum && !a.util_sum && !a.runnable_sum && !child_cfs_rq_on_list(rq, c) &&
        !(version_.decayed_needs_zero_tg_contrib && c.tg_load_avg_contrib))
      list_del_leaf_cfs_rq(rq, c);
    if (has_blocked(c)) done = false;
  };
  // for_each_leaf_cfs_rq_safe(): bottom up, in the list's order.
  for (LeafListNode *node = rq.leaf_cfs_rq_list.next, *next = node->next; node != &rq.leaf_cfs_rq_list;
       node = next, next = node->next)
    visit(*node->owner);
  return decayed;
}

void Kernel::update_cfs_rq_h_load(CfsRq& cfs) {
  const int64_t now_jiffies = jiffies();
  if (cfs.last_h_load_update == now_jiffies) return;
  // Up to the first level already done this jiffy (or the root), leaving
  // the way back down in h_load_next.
  CfsRq* q = &cfs;
  cfs.h_load_next = nullptr;
  SchedEntity* se = cfs.se;
  for (; se; se = se->parent) {
    q = se->cfs_rq;
    q->h_load_next = se;
    if (q->last_h_load_update == now_jiffies) break;
  }
  if (!se) {
    q->h_load = q->avg.load_avg;
    q->last_h_load_update = now_jiffies;
  }
  while ((se = q->h_load_next)) {
    const uint64_t load = q->h_load * se->avg.load_avg / (q->avg.load_avg + 1);
    q = se->my_q;
    q->h_load = load;
    q->last_h_load_update = now_jiffies;
  }
}

}  // namespace schedlab
