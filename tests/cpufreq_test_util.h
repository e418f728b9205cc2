// The cpufreq tests' policy: gs101's Cortex-X1 OPP table.
#pragma once

#include <cstddef>
#include <vector>

#include "models/kernel/cpufreq/governor.h"

namespace schedlab {

// gs101 cpucl2_opp_table (mainline arch/arm64/boot/dts/exynos/google/gs101.dtsi,
// torvalds/linux 01272f05aae5), kHz: 500000 851000 984000 1106000 1277000
// 1426000 1582000 1745000 1826000 2048000 2188000 2252000 2401000 2507000
// 2630000 2704000 2802000; clock-latency-ns = 500000.
inline std::vector<Opp> gs101_x1_opps() {
  return {{500000, 500000},   {851000, 556250},   {984000, 575000},   {1106000, 606250},
          {1277000, 631250},  {1426000, 662500},  {1582000, 693750},  {1745000, 731250},
          {1826000, 750000},  {2048000, 793750},  {2188000, 831250},  {2252000, 850000},
          {2401000, 887500},  {2507000, 925000},  {2630000, 968750},  {2704000, 1000000},
          {2802000, 1056250}};
}

// A policy of `nr_cpus` X1s at capacity 1024 with the table's latency.
inline CpufreqPolicy x1_policy(size_t nr_cpus) {
  auto p = CpufreqPolicy::from_opps(gs101_x1_opps(), nr_cpus, 1024);
  p.transition_latency = Time::us(500);  // clock-latency-ns = <500000>
  return p;
}

// One CPU's input to the hook: CFS util alone, and its idle-pass count
// (sugov_hold_freq()).
inline CpuUtil cfs(uint64_t util, uint64_t idle_calls = 0) {
  CpuUtil u;
  u.util_cfs = util;
  u.idle_calls = idle_calls;
  return u;
}

}  // namespace schedlab
