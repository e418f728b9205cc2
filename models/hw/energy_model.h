// The Energy Model (EM) of one CPU performance domain, as Linux 6.12 builds
// and queries it for EAS.
//
// Kernel references (Linux 6.12):
//   kernel/power/energy_model.c   em_create_perf_table(), em_init_performance(),
//                                 em_compute_costs(), em_dev_register_perf_domain()
//   include/linux/energy_model.h  struct em_perf_state, em_pd_get_efficient_state(),
//                                 em_cpu_energy(), EM_MAX_POWER
//   drivers/opp/of.c              dev_pm_opp_of_register_em() (power source)
//   kernel/sched/fair.c           eenv_pd_max_util(), eenv_pd_busy_time(),
//                                 compute_energy() (the caller's side)
//
// Note on 6.12 vs. older kernels ("cost = power * max_freq / freq" and a
// 1.25 headroom inside em_cpu_energy() are the older forms):
//   * 6.12 em_compute_costs(): cost = power * 10 / performance, where
//     performance = capacity * freq / max_freq. That is
//     10/capacity * (power * max_freq / freq), the old cost with a fixed
//     scale folded in, so em_cpu_energy() no longer divides by capacity.
//   * 6.12 em_cpu_energy() applies NO headroom: it clamps max_util to the
//     allowed capacity and picks the state. The 25% headroom moved to the
//     caller, fair.c eenv_pd_max_util() -> sugov_effective_cpu_perf()
//     (map_util_perf). compute_energy() below reproduces that caller.
//   * Kernel versions 6.1 and 6.6 (checked in 6.1.166 and 6.6.63) use the
//     old forms, cpu_energy_v6_1() with cost_v6_1: the state picked from
//     1.25 x util by frequency rather than by performance, and
//     cost x sum_util / capacity rather than cost x sum_util. Without
//     uclamp the two differ only in truncation (on gs101's A55 6.12's
//     truncated performance makes its cost up to 2.4% higher, relative to
//     the other clusters, at 300 MHz); with uclamp the old caller clamps
//     first and the headroom comes after (a capped pd prices 1.25 x the
//     cap, a boosted one 1.25 x the boost).
//
// Pure and immutable after construction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "models/hw/opp.h"

namespace schedlab {

// EM_MAX_POWER: 64 W in uW; em_create_perf_table() rejects larger (or 0).
inline constexpr uint64_t kEmMaxPowerUw = 64000000;

// struct em_perf_state.
struct PerfState {
  uint64_t freq_khz = 0;     // .frequency
  uint64_t power_uw = 0;     // .power: one CPU of the domain, micro-watts
  uint64_t performance = 0;  // .performance = capacity * freq / max_freq (truncated)
  uint64_t cost = 0;         // .cost = power * 10 / performance (truncated)
  bool inefficient = false;  // EM_PERF_STATE_INEFFICIENT
  // 6.1.166 / 6.6.63 em_compute_costs(): .cost = fmax * power / freq
  // (div64_u64), and the inefficiency mark by that cost.
  uint64_t cost_v6_1 = 0;
  bool inefficient_v6_1 = false;
};

class EnergyModel {
 public:
  // dev_pm_opp_of_register_em() -> em_dev_register_perf_domain(microwatts):
  //   power of each OPP = its explicit power (opp-microwatt path) when the
  //   FIRST OPP has one (then all must), else dev_pm_opp_calc_power() with
  //   `dynamic_power_coefficient` (which must then be > 0);
  //   em_init_performance() with `cpu_capacity` = arch_scale_cpu_capacity()
  //   of the domain's CPUs (capacity at the top OPP, <= 1024);
  //   em_compute_costs() marks inefficient states.
  // `skip_inefficiencies`: EM_PERF_DOMAIN_SKIP_INEFFICIENCIES, which the
  //   kernel sets in em_cpufreq_update_efficiencies() when cpufreq accepted
  //   at least one inefficient frequency (true for sorted cpufreq tables,
  //   e.g. cpufreq-dt); pass false to model a driver without that.
  // Throws std::invalid_argument on the kernel's registration failures
  // (unsorted table, power 0 or > EM_MAX_POWER, performance 0, ...).
  EnergyModel(std::span<const Opp> opps, uint64_t cpu_capacity,
              uint32_t dynamic_power_coefficient = 0, bool skip_inefficiencies = true);

  const std::vector<PerfState>& states() const { return states_; }
  size_t nr_perf_states() const { return states_.size(); }
  uint64_t cpu_capacity() const { return cpu_capacity_; }
  uint64_t max_freq_khz() const { return states_.back().freq_khz; }
  bool skip_inefficiencies() const { return skip_inefficiencies_; }
  // Index of the state at exactly `freq_khz`, if any.
  std::optional<size_t> state_index(uint64_t freq_khz) const;

  // em_pd_get_efficient_state(): the first state whose performance is >=
  // max_util, skipping inefficient states when skip_inefficiencies(); the
  // top state when none is. No headroom (the caller adds it).
  size_t efficient_state(uint64_t max_util) const;

  // em_cpu_energy() of 6.12: 0 if sum_util == 0; else
  //   i = efficient_state(min(max_util, allowed_cpu_cap)); cost[i] * sum_util.
  // The result is an average power over the scheduling period in units of
  // 0.1 uW (cost carries the x10): em_energy_to_uw() converts.
  uint64_t cpu_energy(uint64_t max_util, uint64_t sum_util, uint64_t allowed_cpu_cap) const;

  // em_cpu_energy() of 6.1.166 / 6.6.63: the headroom here,
  //   max_util = min(map_util_perf(max_util), allowed_cpu_cap),
  //   freq = map_util_freq(max_util, fmax, capacity),
  //   the first state at or above freq (em_pd_get_efficient_state() by
  //   frequency, skipping states inefficient by the old cost; else the top),
  //   energy = cost_v6_1 * sum_util / capacity (64-bit em_estimate_energy()).
  // In uW-scaled units of its own: compare only with other v6_1 values.
  uint64_t cpu_energy_v6_1(uint64_t max_util, uint64_t sum_util, uint64_t allowed_cpu_cap) const;
  // The state em_cpu_energy() of 6.1 / 6.6 takes for a frequency.
  size_t efficient_state_by_freq_v6_1(uint64_t freq_khz) const;

  // The state EAS assumes the domain runs at for a CPU utilisation `util`
  // (6.12 pipeline for plain CFS util, no RT/DL/IRQ/uclamp):
  //   eenv_pd_max_util(): min(sugov_effective_cpu_perf(min(util, cap)), allowed)
  //     = min(map_util_perf(min(util, cap)), cap, allowed_cpu_cap)
  //   then em_pd_get_efficient_state().
  size_t state_for_util(uint64_t util, uint64_t allowed_cpu_cap) const;
  size_t state_for_util(uint64_t util) const { return state_for_util(util, cpu_capacity_); }

  // fair.c compute_energy() for a domain whose CPUs have the given
  // utilisations (already including any task being placed), simplified to
  // CFS util only (no IRQ scaling, RT/DL, uclamp):
  //   max_util = min(max_i min(map_util_perf(min(u_i, cap)), cap), allowed)
  //   busy     = min(sum_i min(u_i, cap), nr_cpus * allowed)   (eenv_pd_busy_time)
  //   energy   = cpu_energy(max_util, busy, allowed)
  // `allowed_cpu_cap` is eenv->cpu_cap: capacity minus thermal pressure.
  uint64_t compute_energy(std::span<const uint64_t> cpu_utils, uint64_t allowed_cpu_cap) const;
  uint64_t compute_energy(std::span<const uint64_t> cpu_utils) const {
    return compute_energy(cpu_utils, cpu_capacity_);
  }

  // Accounting helper: power of one busy CPU at state i, in mW.
  double power_mw(size_t state) const { return static_cast<double>(states_.at(state).power_uw) / 1000.0; }

 private:
  size_t first_state_reaching(uint64_t at_least, uint64_t PerfState::*key, bool PerfState::*inefficient) const;
  std::vector<PerfState> states_;
  uint64_t cpu_capacity_ = 0;
  bool skip_inefficiencies_ = true;
};

// em_cpu_energy() value -> average power in uW (value / 10; exact up to the
// truncations inside cost).
constexpr double em_energy_to_uw(uint64_t em_energy) { return static_cast<double>(em_energy) / 10.0; }

}  // namespace schedlab
