// cpu cgroups' utilization clamps (CONFIG_UCLAMP_TASK_GROUP), Linux 6.12
// kernel/sched/core.c: init_uclamp() and uclamp_update_root_tg() for the
// root group, alloc_uclamp_sched_group() + cpu_cgroup_css_online() for a
// new group, cpu_uclamp_write() / capacity_from_percent() for writes of
// cpu.uclamp.min / cpu.uclamp.max, cpu_util_update_eff() and
// uclamp_update_active() to propagate them, sched_move_task() when a task
// changes group. uclamp_tg_restrict() is inline in kernel.h.
//
// Simplifications: a group's tasks are visited in creation order (the
// kernel's css_task_iter follows the order tasks joined the cgroup); the
// order only matters to a bucket's max aggregation of tasks refcounted
// again at the same instant. Moving a task also moves its fair entity
// (task_change_group(), fair_group.cc).
#include <fmt/format.h>

#include "models/errors.h"
#include "models/kernel/kernel.h"
#include "sim/log.h"

namespace schedlab {

void Kernel::setup_task_groups() {
  // init_uclamp(): the root group requests and has the maximum for both
  // clamps; uclamp_update_root_tg() (the sysctl handler) then sets its
  // requests from sched_util_clamp_min / _max.
  UclampTaskGroup root;
  root.name = "/";
  for (const UclampId id : kUclampIds) {
    root.uclamp[id] = root.uclamp_req[id] = uclamp_sys_.make(uclamp_none(kUclampMax), false);
  }
  task_groups_.assign(1, root);
  // Without uclamp the groups still exist (tasks may move between them),
  // with nothing to restrict.
  if (params_.uclamp && (params_.uclamp_util_min != kUclampScale || params_.uclamp_util_max != kUclampScale)) {
    task_groups_[0].uclamp_req[kUclampMin] = uclamp_sys_.make(params_.uclamp_util_min, false);
    task_groups_[0].uclamp_req[kUclampMax] = uclamp_sys_.make(params_.uclamp_util_max, false);
    cpu_util_update_eff(0);
  }
  for (const KernelParams::CpuCgroup& c : params_.cgroups) {
    if (c.name.empty() || c.name == "/" || find_task_group(c.name) >= 0)
      throw ModelError(fmt::format("cpu cgroup '{}': expected a new, non-empty name other than '/'", c.name));
    const int parent = c.parent.empty() ? 0 : find_task_group(c.parent);
    if (parent < 0)
      throw ModelError(fmt::format("cpu cgroup '{}': parent '{}' is not a group created before it", c.name, c.parent));
    // sched_create_group() -> alloc_uclamp_sched_group(): no request, the
    // parent's effective clamps; css_online() propagates.
    UclampTaskGroup tg;
    tg.name = c.name;
    tg.parent = parent;
    for (const UclampId id : kUclampIds) {
      tg.uclamp_req[id] = uclamp_sys_.make(uclamp_none(id), false);
      tg.uclamp[id] = task_groups_[static_cast<size_t>(parent)].uclamp[id];
    }
    task_groups_.push_back(tg);
    const int g = static_cast<int>(task_groups_.size()) - 1;
    if (!params_.uclamp) continue;
    cpu_util_update_eff(g);
    if (c.uclamp_min_pct) cpu_uclamp_write(g, kUclampMin, *c.uclamp_min_pct);
    if (c.uclamp_max_pct) cpu_uclamp_write(g, kUclampMax, *c.uclamp_max_pct);
  }
}

int Kernel::cpu_cgroup_index(const std::string& name) const {
  const int g = find_task_group(name.empty() ? "/" : name);
  if (g < 0) throw ModelError(fmt::format("no cpu cgroup '{}'", name));
  return g;
}

int Kernel::find_task_group(std::string_view name) const {
  for (size_t g = 0; g < task_groups_.size(); ++g)
    if (task_groups_[g].name == name) return static_cast<int>(g);
  return -1;
}

void Kernel::cpu_uclamp_write(int group, UclampId id, int64_t percent_x100) {
  UclampTaskGroup& tg = task_groups_.at(static_cast<size_t>(group));
  if (!params_.uclamp)
    throw ModelError(fmt::format("cpu cgroup '{}': cpu.uclamp.{} needs CONFIG_UCLAMP_TASK_GROUP (kernel.uclamp.enabled)",
                                 tg.name, id == kUclampMin ? "min" : "max"));
  if (group == 0)  // the root cgroup has no cpu.uclamp files
    throw ModelError("the root cpu cgroup has no cpu.uclamp files (use kernel.uclamp.util_min / util_max)");
  if (percent_x100 < 0 || percent_x100 > kUclampPercentScale)  // -ERANGE
    throw ModelError(fmt::format("cpu cgroup '{}': cpu.uclamp.{} {}.{:02}% outside 0..100 (ERANGE)", tg.name,
                                 id == kUclampMin ? "min" : "max", percent_x100 / 100, std::abs(percent_x100 % 100)));
  enable_uclamp();
  const uint32_t util = uclamp_capacity_from_percent(percent_x100);
  if (tg.uclamp_req[id].value != util) tg.uclamp_req[id] = uclamp_sys_.make(util, false);
  tg.uclamp_pct[id] = percent_x100;
  SL_DEBUG("{:.6f} cgroup {}: cpu.uclamp.{} = {}.{:02} ({})", now().to_s(), tg.name,
           id == kUclampMin ? "min" : "max", percent_x100 / 100, percent_x100 % 100, util);
  cpu_util_update_eff(group);
}

void Kernel::cpu_util_update_eff(int group) {
  UclampTaskGroup& tg = task_groups_[static_cast<size_t>(group)];
  std::array<uint32_t, kUclampCnt> eff{};
  for (const UclampId id : kUclampIds) {
    // The request, capped by the parent's effective value.
    eff[id] = tg.uclamp_req[id].value;
    if (tg.parent >= 0) eff[id] = std::min(eff[id], task_groups_[static_cast<size_t>(tg.parent)].uclamp[id].value);
  }
  eff[kUclampMin] = std::min(eff[kUclampMin], eff[kUclampMax]);  // protection capped by the limit
  bool changed = false;
  for (const UclampId id : kUclampIds) {
    if (eff[id] == tg.uclamp[id].value) continue;
    tg.uclamp[id].value = eff[id];
    tg.uclamp[id].bucket_id = uclamp_sys_.bucket_id(eff[id]);
    changed = true;
  }
  // Unchanged: neither are the descendants (css_rightmost_descendant()).
  if (!changed) return;
  // uclamp_update_active_tasks(): the group's own tasks.
  for (const auto& t : tasks_)
    if (t->task_group == group) uclamp_update_active(*t);
  // Then the children, in creation order (pre-order walk).
  for (size_t c = static_cast<size_t>(group) + 1; c < task_groups_.size(); ++c)
    if (task_groups_[c].parent == group) cpu_util_update_eff(static_cast<int>(c));
}

void Kernel::uclamp_update_active(Task& p) {
  // uclamp_rq_reinc_id() for each clamp the task has refcounted.
  Rq& rq = *rqs_[static_cast<size_t>(p.cpu)];
  for (const UclampId id : kUclampIds) {
    if (!p.uclamp[id].active) continue;
    schedlab::uclamp_rq_dec_id(uclamp_sys_, rq.uclamp, id, p.uclamp[id]);
    schedlab::uclamp_rq_inc_id(uclamp_sys_, rq.uclamp, id, uclamp_tg_restrict(p, id), p.uclamp[id]);
    // Clear the idle flag if the rq transiently had no active task.
    if (id == kUclampMax) rq.uclamp.flag_idle = false;
  }
}

void Kernel::sched_move_task(Task& p, int group) {
  if (group < 0 || static_cast<size_t>(group) >= task_groups_.size())
    throw ModelError(fmt::format("task {}: no cpu cgroup #{}", p.comm, group));
  if (group == p.task_group) return;
  SL_DEBUG("{:.6f} cgroup: {}-{} {} -> {}", now().to_s(), p.comm, p.pid,
           task_groups_[static_cast<size_t>(p.task_group)].name, task_groups_[static_cast<size_t>(group)].name);
  if (p.state == TaskState::kNew) {  // not forked yet: nothing is queued
    p.task_group = group;
    return;
  }
  const SchedChange c = sched_change_begin(p, true, false);  // DEQUEUE_SAVE | DEQUEUE_MOVE
  // sched_change_group(). A group with no cpu weight is the root's level
  // in the model, so a move between two of them changes no cfs_rq.
  const bool new_cfs_rq =
      fair_groups_active() && &task_group_cfs_rq(p.task_group, p.cpu) != &task_group_cfs_rq(group, p.cpu);
  p.task_group = group;
  if (new_cfs_rq) class_of(p).task_change_group(*c.rq, p);
  sched_change_end(p, c, 0);
  // "The running task may have joined a throttled group": resched.
  if (c.running) resched_curr(*c.rq);
  event_cpu_ = c.saved_event_cpu;
}

}  // namespace schedlab
