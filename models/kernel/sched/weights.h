// Load weights and the fixed-point division the kernel uses for vruntime
// (kernel/sched/core.c sched_prio_to_weight/_wmult; fair.c __calc_delta).
#pragma once

#include <algorithm>
#include <cstdint>

namespace schedlab {

inline constexpr uint64_t kNice0Load = 1024;      // NICE_0_LOAD, scale_load_down()ed
inline constexpr uint64_t kWeightIdlePrio = 3;    // WEIGHT_IDLEPRIO (SCHED_IDLE)
inline constexpr uint32_t kWmultIdlePrio = 1431655765;
inline constexpr uint32_t kWmultConst = 0xffffffffu;  // WMULT_CONST
inline constexpr int kWmultShift = 32;

uint64_t nice_to_weight(int nice);   // sched_prio_to_weight[nice + 20]
uint32_t nice_to_wmult(int nice);    // sched_prio_to_wmult[nice + 20]

// delta * weight / lw_weight, computed as the kernel does: with the 32-bit
// inverse of lw_weight and a 64x32 multiply-shift, so results match the
// kernel's to the nanosecond (including its rounding down).
// lw_inv_weight == 0 means "derive it": WMULT_CONST / lw_weight.
uint64_t calc_delta(uint64_t delta, uint64_t weight, uint64_t lw_weight, uint32_t lw_inv_weight);

// scale_load_down(): a load.weight kept at full resolution (x1024) as the
// kernel's arithmetic sees it, never below 2 while nonzero.
inline uint64_t scale_load_down(uint64_t w) { return w ? std::max<uint64_t>(2, w >> 10) : 0; }

// calc_delta_fair(): delta scaled to virtual time for an entity of `weight`.
inline uint64_t calc_delta_fair(uint64_t delta, uint64_t weight, uint32_t inv_weight) {
  if (weight == kNice0Load) return delta;
  return calc_delta(delta, kNice0Load, weight, inv_weight);
}

// div_s64(v * old_weight, new_weight): a virtual-time quantity (vlag, a
// relative deadline) rescaled for a new weight, so the service it stands
// for (v * w) is kept (reweight_entity()).
inline int64_t rescale_by_weight(int64_t v, int64_t old_weight, uint64_t new_weight) {
  return static_cast<int64_t>(static_cast<__int128>(v) * old_weight / static_cast<int64_t>(new_weight));
}

}  // namespace schedlab
