// CONFIG_FAIR_GROUP_SCHED's hierarchy of cpu cgroups (Linux 6.12
// kernel/sched/fair.c: alloc_fair_sched_group(), init_tg_cfs_entry(),
// sched_group_set_shares(); core.c: cpu_shares_write_u64(),
// cpu_weight_write_u64()). A cpu cgroup with a cpu weight gets a cfs_rq
// and a group entity on every CPU; the EEVDF class walks entities up and
// down the hierarchy (fair_eevdf.cc), PELT propagates up it
// (fair_pelt.cc). docs/fair_group_sched.md is the plan; this is its stage
// 2: group weights are the groups' shares, which is exactly what
// calc_group_shares() gives on one CPU (a group's load is all on that
// CPU), so groups need a one-CPU platform until stage 3 models the shares
// across CPUs. 6.12 only (6.1's CFS, 6.6's vruntime tree and 6.18 are not
// studied with groups yet).
#include <fmt/format.h>

#include "models/errors.h"
#include "models/kernel/kernel.h"
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

}  // namespace

void SchedClass::task_change_group(Rq& rq, Task& p) { k_.set_task_rq(p, p.cpu); }

void Kernel::setup_fair_groups() {
  fair_group_shares_.assign(task_groups_.size(), 0);
  bool any = false;
  for (const KernelParams::CpuCgroup& c : params_.cgroups) {
    if (!c.cpu_shares && !c.cpu_weight) continue;
    const size_t g = static_cast<size_t>(find_task_group(c.name));
    if (c.cpu_shares && c.cpu_weight)
      throw ModelError(fmt::format("cpu cgroup '{}': give cpu_shares (cgroup v1) or cpu_weight (v2), not both", c.name));
    int64_t shares;
    if (c.cpu_weight) {
      // cpu_weight_write_u64(): ERANGE outside 1..10000; sched_weight_from_cgroup().
      if (*c.cpu_weight < kCgroupWeightMin || *c.cpu_weight > kCgroupWeightMax)
        throw ModelError(fmt::format("cpu cgroup '{}': cpu.weight {} outside {}..{} (ERANGE)", c.name, *c.cpu_weight,
                                     kCgroupWeightMin, kCgroupWeightMax));
      shares = (*c.cpu_weight * 1024 + kCgroupWeightDfl / 2) / kCgroupWeightDfl;
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
  if (version_.name != "6.12")
    throw ModelError(fmt::format("cpu cgroups with a cpu weight are modelled on kernel 6.12 only (this scenario runs "
                                 "{}; docs/fair_group_sched.md)",
                                 version_.name));
  if (nr_cpus() != 1)
    throw ModelError(fmt::format("cpu cgroups with a cpu weight need a one-CPU platform for now (this one has {}): "
                                 "the group shares across CPUs (calc_group_shares()) are not modelled yet "
                                 "(docs/fair_group_sched.md, stage 3)",
                                 nr_cpus()));
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
      SchedEntity& se = grq->se;
      se.my_q = &grq->cfs;
      se.cfs_rq = &parent_cfs;
      se.parent = parent_cfs.se;
      se.depth = parent_cfs.se ? parent_cfs.se->depth + 1 : 0;
      // init_tg_cfs_entry(): NICE_0_LOAD until the first update_cfs_group();
      // the inverse computed as __update_inv_weight() does (WMULT_CONST / w).
      se.weight = kNice0Load;
      se.inv_weight = 0xFFFFFFFFu / static_cast<uint32_t>(se.weight);
      // init_entity_runnable_average(): a group entity starts with no load;
      // online_fair_sched_group() attaches it at once (attach_entity_cfs_rq():
      // the parent cfs_rq brought to now, the empty averages added), so its
      // first enqueue does not attach it again.
      init_entity_runnable_average(se.avg, se.weight, false);
      const uint64_t now = rqs_[static_cast<size_t>(cpu)]->pelt.rq_clock_pelt();
      update_load_avg_cfs_rq(now, parent_cfs.avg, parent_cfs.load_weight, 0, false);
      attach_entity_load_avg(parent_cfs.avg, se.avg, se.weight);
      fair_group_rqs_[fair_group_slot(static_cast<int>(g), cpu)] = std::move(grq);
    }
  }
}

}  // namespace schedlab
