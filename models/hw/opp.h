// Operating performance points (OPPs) of one frequency domain, the dynamic
// power the kernel derives for them, and the util <-> frequency mappings that
// schedutil and EAS share.
//
// Kernel references (Linux 6.12):
//   drivers/opp/of.c            dev_pm_opp_calc_power(), _get_dt_power(),
//                               dev_pm_opp_of_register_em()
//   include/linux/sched/cpufreq.h  map_util_freq(), map_util_perf()
//   Documentation/devicetree/bindings/cpu/cpu-capacity.txt / arm/cpus.yaml:
//                               `dynamic-power-coefficient` is in uW/MHz/V^2.
//
// Pure functions, no simulator state. (Defined in energy_model.cc.)
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/time.h"

namespace schedlab {

// One row of a device-tree `operating-points-v2` table.
struct Opp {
  uint64_t freq_khz = 0;    // opp-hz / 1000
  uint32_t voltage_uv = 0;  // opp-microvolt (first value)
  // Optional explicit power of ONE CPU at this OPP, e.g. from `opp-microwatt`
  // or a datasheet. 0 = derive it from dynamic-power-coefficient (C*V^2*f).
  double power_mw = 0.0;
  // Optional static (leakage) power of the whole cluster at this OPP's
  // voltage, billed while the cluster is powered (a measurement, e.g. the
  // cluster's rail with its CPUs idle); 0 = the cluster's static_power_mw.
  double static_power_mw = 0.0;
  // Optional power of ONE idle CPU in idle state 0 (WFI: clock-gated but
  // powered, its leakage follows the OPP's voltage) at this OPP, e.g. a
  // vendor energy model's per-OPP idle power; 0 = state 0's own power.
  double idle_power_mw = 0.0;
};

// Throws std::invalid_argument unless the table is non-empty and strictly
// ascending in frequency with every frequency > 0. (The EM rejects
// non-increasing frequencies, em_create_perf_table(); cpufreq-dt's tables
// are sorted ascending.)
void validate_opp_table(std::span<const Opp> opps);

// dev_pm_opp_calc_power(): P = C * V^2 * f, in micro-watts, with the
// kernel's integer units and truncations:
//   mV  = opp-microvolt / 1000          (truncated)
//   MHz = opp-hz / 1000000              (truncated; here freq_khz / 1000)
//   uW  = C * mV * mV * MHz / 1000000   (64-bit, truncated)
// C is `dynamic-power-coefficient` in uW/MHz/V^2.
uint64_t opp_calc_power_uw(const Opp& opp, uint32_t dynamic_power_coefficient);

// The power the kernel's EM would hold for this OPP, in micro-watts:
// the explicit power (opp-microwatt path, _get_dt_power(); power_mw * 1000
// rounded to nearest uW) when set, else opp_calc_power_uw().
uint64_t opp_power_uw(const Opp& opp, uint32_t dynamic_power_coefficient);

// Accounting helper: dynamic power of one busy CPU at this OPP, in mW
// (explicit power_mw if set, else the kernel's C*V^2*f in uW / 1000).
double opp_dynamic_power_mw(const Opp& opp, uint32_t dynamic_power_coefficient);

// Accounting helper: energy in millijoules of `power_mw` held for `duration`
// (mW * s = mJ). Exact up to double rounding; no integer truncation.
double energy_mj(double power_mw, Time duration);

// ---- util <-> frequency (include/linux/sched/cpufreq.h) -------------------

// map_util_perf(): add the 25% DVFS headroom, util + util/4 (integer).
constexpr uint64_t map_util_perf(uint64_t util) { return util + (util >> 2); }

// map_util_freq(): freq * util / cap (integer, truncated).
constexpr uint64_t map_util_freq(uint64_t util, uint64_t freq, uint64_t cap) {
  return freq * util / cap;
}

}  // namespace schedlab
