// Utilization clamping (CONFIG_UCLAMP_TASK), following Linux 6.12
// kernel/sched/core.c (uclamp_rq_inc_id(), uclamp_rq_dec_id(),
// uclamp_rq_max_value(), uclamp_idle_value(), uclamp_eff_get()),
// kernel/sched/syscalls.c (uclamp_validate(), __setscheduler_uclamp()) and
// the fit test of kernel/sched/fair.c (util_fits_cpu()).
//
// A task asks for a minimum and a maximum utilization (sched_setattr()'s
// sched_util_min / sched_util_max, 0..1024). Each rq max-aggregates the
// clamps of its RUNNABLE tasks in buckets (CONFIG_UCLAMP_BUCKETS_COUNT,
// 5 by default): schedutil, EAS and the capacity-fitting tests read the
// rq's values.
//
// CONFIG_UCLAMP_TASK_GROUP (6.12 core.c: uclamp_tg_restrict(),
// cpu_util_update_eff(), capacity_from_percent(), cpu_uclamp_write(),
// alloc_uclamp_sched_group(), sched_move_task()): cpu cgroups carry
// cpu.uclamp.min / cpu.uclamp.max (percent); a group's effective clamps are
// its requests capped by its parent's effective ones, and a task outside
// the root group has its request clamped into its group's effective range.
// The groups' fair side (cpu.weight, cpu.idle, group entities) is
// fair_group.cc's (docs/fair_group_sched.md); no CFS bandwidth.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace schedlab {

enum UclampId : uint8_t { kUclampMin = 0, kUclampMax = 1 };
inline constexpr int kUclampCnt = 2;
inline constexpr std::array<UclampId, 2> kUclampIds{kUclampMin, kUclampMax};  // for_each_clamp_id()
inline constexpr uint32_t kUclampScale = 1024;      // SCHED_CAPACITY_SCALE
inline constexpr int kUclampMaxBuckets = 20;        // CONFIG_UCLAMP_BUCKETS_COUNT range: 5..20

// uclamp_none(): what "no clamp" means for each index.
constexpr uint32_t uclamp_none(UclampId id) { return id == kUclampMin ? 0 : kUclampScale; }

// struct uclamp_se: a task's requested (p->uclamp_req) or effective
// (p->uclamp, refcounted while runnable) clamp.
struct UclampSe {
  uint32_t value = 0;
  uint8_t bucket_id = 0;
  bool active = false;        // refcounted in its rq's bucket
  bool user_defined = false;  // set by sched_setattr(), kept across class changes
};

// struct uclamp_bucket and struct uclamp_rq.
struct UclampBucket {
  uint32_t value = 0;  // max clamp of the RUNNABLE tasks refcounting it
  uint32_t tasks = 0;
};
struct UclampRq {
  uint32_t value = 0;
  std::array<UclampBucket, kUclampMaxBuckets> bucket{};
};

// The rq side: rq->uclamp[] and rq->uclamp_flags (UCLAMP_FLAG_IDLE).
struct RqUclamp {
  std::array<UclampRq, kUclampCnt> clamp{};
  bool flag_idle = true;  // init_uclamp_rq(): no task has been runnable yet
  RqUclamp() {
    clamp[kUclampMin].value = uclamp_none(kUclampMin);
    clamp[kUclampMax].value = uclamp_none(kUclampMax);
  }
  uint32_t get(UclampId id) const { return clamp[id].value; }  // uclamp_rq_get()
  bool is_idle() const { return flag_idle; }                   // uclamp_rq_is_idle()
};

// The system side: the bucket layout and the sysctls.
struct UclampSystem {
  int buckets = 5;                            // CONFIG_UCLAMP_BUCKETS_COUNT
  std::array<uint32_t, kUclampCnt> defaults{kUclampScale, kUclampScale};  // uclamp_default[]: sched_util_clamp_min/_max
  uint32_t min_rt_default = kUclampScale;     // sysctl_sched_uclamp_util_min_rt_default

  // UCLAMP_BUCKET_DELTA = DIV_ROUND_CLOSEST(1024, buckets).
  uint32_t bucket_delta() const { return (kUclampScale + static_cast<uint32_t>(buckets) / 2) / static_cast<uint32_t>(buckets); }
  // uclamp_bucket_id().
  uint8_t bucket_id(uint32_t value) const {
    const uint32_t id = value / bucket_delta();
    return static_cast<uint8_t>(id < static_cast<uint32_t>(buckets) ? id : static_cast<uint32_t>(buckets - 1));
  }
  // uclamp_se_set().
  UclampSe make(uint32_t value, bool user_defined) const {
    UclampSe se;
    se.value = value;
    se.bucket_id = bucket_id(value);
    se.user_defined = user_defined;
    return se;
  }
  // uclamp_eff_get() for a task of the root group: the request, unless the
  // system default is lower.
  UclampSe eff_get(const UclampSe& req, UclampId id) const {
    if (req.value > defaults[id]) return make(defaults[id], false);
    return req;
  }
};

// uclamp_rq_inc_id(): p's effective clamp `eff` (refreshed from `req`)
// joins its bucket; the rq value only rises.
// capacity_from_percent(): cpu.uclamp.min / .max are written in percent
// with two decimals (cgroup_parse_float(), shift 2: 10000 = 100%), stored
// as DIV_ROUND_CLOSEST(percent_x100 << 10, 10000).
constexpr uint32_t uclamp_capacity_from_percent(int64_t percent_x100) {
  return static_cast<uint32_t>(((static_cast<uint64_t>(percent_x100) << 10) + 5000) / 10000);
}
inline constexpr int64_t kUclampPercentScale = 10000;  // UCLAMP_PERCENT_SCALE: 100.00%

// The uclamp part of a struct task_group (a cpu cgroup). Index 0 is the
// root group, which restricts nobody (its tasks see the system defaults).
struct UclampTaskGroup {
  std::string name;  // the cgroup's name; "/" for the root
  int parent = -1;   // index of the parent group; -1 for the root
  std::array<UclampSe, kUclampCnt> uclamp_req{};  // tg->uclamp_req[]: as written
  std::array<UclampSe, kUclampCnt> uclamp{};      // tg->uclamp[]: effective
  std::array<int64_t, kUclampCnt> uclamp_pct{0, kUclampPercentScale};  // tg->uclamp_pct[]: the percent written
};

// uclamp_rq_inc_id(): `req` is the task's request as uclamp_tg_restrict()
// returns it (its group's range applied).
void uclamp_rq_inc_id(const UclampSystem& sys, RqUclamp& rq, UclampId id, const UclampSe& req, UclampSe& eff);
// uclamp_rq_dec_id(): p leaves its bucket; when the bucket empties and held
// the rq's value, the rq falls to the top non-empty bucket (or, with none,
// keeps the last max clamp and sets UCLAMP_FLAG_IDLE; the min clamp drops
// to 0).
void uclamp_rq_dec_id(const UclampSystem& sys, RqUclamp& rq, UclampId id, UclampSe& eff);

// util_fits_cpu() (6.12 fair.c): 1 if `util` fits the CPU with its clamps,
// 0 if not, -1 if only uclamp_min (the performance hint) does not. Without
// uclamp in use it is fits_capacity(util, capacity_of). `capacity_of` is
// what CFS gets (capacity_of()), `capacity_orig` arch_scale_cpu_capacity(),
// `actual_capacity` get_actual_cpu_capacity() (capacity_orig less thermal
// pressure: equal here, none is modelled).
int util_fits_cpu(uint64_t util, uint64_t uclamp_min, uint64_t uclamp_max, uint64_t capacity_of,
                  uint64_t capacity_orig, uint64_t actual_capacity, bool uclamp_used);

}  // namespace schedlab
