// OPP power and the Energy Model; see opp.h / energy_model.h for the kernel
// functions each piece mirrors.
#include "models/hw/energy_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "models/hw/opp.h"

namespace schedlab {

// ---- opp.h -----------------------------------------------------------------

void validate_opp_table(std::span<const Opp> opps) {
  if (opps.empty()) throw std::invalid_argument("OPP table is empty");
  uint64_t prev = 0;
  for (size_t i = 0; i < opps.size(); ++i) {
    const Opp& o = opps[i];
    if (o.freq_khz == 0)
      throw std::invalid_argument("OPP " + std::to_string(i) + " has frequency 0");
    if (i > 0 && o.freq_khz <= prev)
      throw std::invalid_argument("OPP table not strictly ascending at " + std::to_string(o.freq_khz) +
                                  " kHz (after " + std::to_string(prev) + " kHz)");
    if (o.power_mw < 0.0 || !std::isfinite(o.power_mw))
      throw std::invalid_argument("OPP " + std::to_string(o.freq_khz) + " kHz has invalid power");
    prev = o.freq_khz;
  }
}

// Mirrors dev_pm_opp_calc_power() (drivers/opp/of.c):
//   mV = dev_pm_opp_get_voltage(opp) / 1000;
//   tmp = (u64)cap * mV * mV * (Hz / 1000000); do_div(tmp, 1000000);
uint64_t opp_calc_power_uw(const Opp& opp, uint32_t dynamic_power_coefficient) {
  const uint64_t mv = opp.voltage_uv / 1000;
  const uint64_t mhz = opp.freq_khz / 1000;  // == (kHz * 1000) / 1000000
  const uint64_t tmp = static_cast<uint64_t>(dynamic_power_coefficient) * mv * mv * mhz;
  return tmp / 1000000;
}

uint64_t opp_power_uw(const Opp& opp, uint32_t dynamic_power_coefficient) {
  // _get_dt_power() reads opp-microwatt (integer uW). We hold mW as double,
  // so round to the nearest uW.
  if (opp.power_mw > 0.0) return static_cast<uint64_t>(std::llround(opp.power_mw * 1000.0));
  return opp_calc_power_uw(opp, dynamic_power_coefficient);
}

double opp_dynamic_power_mw(const Opp& opp, uint32_t dynamic_power_coefficient) {
  if (opp.power_mw > 0.0) return opp.power_mw;
  return static_cast<double>(opp_calc_power_uw(opp, dynamic_power_coefficient)) / 1000.0;
}

double energy_mj(double power_mw, Time duration) { return power_mw * duration.to_s(); }

// ---- EnergyModel -------------------------------------------------------------

EnergyModel::EnergyModel(std::span<const Opp> opps, uint64_t cpu_capacity,
                         uint32_t dynamic_power_coefficient, bool skip_inefficiencies)
    : cpu_capacity_(cpu_capacity), skip_inefficiencies_(skip_inefficiencies) {
  validate_opp_table(opps);
  if (cpu_capacity == 0 || cpu_capacity > 1024)
    throw std::invalid_argument("EM: CPU capacity must be in 1..1024, got " + std::to_string(cpu_capacity));

  // dev_pm_opp_of_register_em(): _of_has_opp_microwatt_property() looks at
  // the first OPP only; if it has a power, every OPP must (else
  // _get_dt_power() fails and registration fails). Otherwise the
  // dynamic-power-coefficient must be present and non-zero.
  const bool explicit_power = opps.front().power_mw > 0.0;
  if (!explicit_power && dynamic_power_coefficient == 0)
    throw std::invalid_argument(
        "EM: no explicit OPP power and no dynamic-power-coefficient (dev_pm_opp_of_register_em fails)");

  // em_create_perf_table(): walk the OPPs in ascending frequency order.
  states_.reserve(opps.size());
  for (const Opp& o : opps) {
    if (explicit_power && !(o.power_mw > 0.0))
      throw std::invalid_argument("EM: OPP " + std::to_string(o.freq_khz) +
                                  " kHz lacks a power while the first OPP has one");
    PerfState ps;
    ps.freq_khz = o.freq_khz;
    ps.power_uw = opp_power_uw(o, dynamic_power_coefficient);
    if (ps.power_uw == 0 || ps.power_uw > kEmMaxPowerUw)
      throw std::invalid_argument("EM: invalid power " + std::to_string(ps.power_uw) + " uW at " +
                                  std::to_string(o.freq_khz) + " kHz");
    states_.push_back(ps);
  }

  // em_init_performance(): performance = max_cap * freq / fmax (div64_u64).
  const uint64_t fmax = states_.back().freq_khz;
  for (PerfState& ps : states_) {
    ps.performance = cpu_capacity_ * ps.freq_khz / fmax;
    // The kernel would divide by zero in em_compute_costs(); refuse instead.
    if (ps.performance == 0)
      throw std::invalid_argument("EM: performance 0 at " + std::to_string(ps.freq_khz) +
                                  " kHz (capacity too small for this frequency range)");
  }

  // em_compute_costs() (non-artificial EM): from the top state down,
  //   cost = power * 10 / performance (6.12), or fmax * power / freq
  //   (6.1.166 / 6.6.63: cost_v6_1);
  //   a state is inefficient when its cost >= the cost of the cheapest
  //   state above it (prev_cost starts at ULONG_MAX, so the top state is
  //   always efficient).
  uint64_t prev_cost = std::numeric_limits<uint64_t>::max();
  uint64_t prev_cost_v6_1 = prev_cost;
  for (size_t i = states_.size(); i-- > 0;) {
    PerfState& ps = states_[i];
    ps.cost = ps.power_uw * 10 / ps.performance;
    ps.cost_v6_1 = fmax * ps.power_uw / ps.freq_khz;
    ps.inefficient = ps.cost >= prev_cost;
    if (!ps.inefficient) prev_cost = ps.cost;
    ps.inefficient_v6_1 = ps.cost_v6_1 >= prev_cost_v6_1;
    if (!ps.inefficient_v6_1) prev_cost_v6_1 = ps.cost_v6_1;
  }
}

std::optional<size_t> EnergyModel::state_index(uint64_t freq_khz) const {
  for (size_t i = 0; i < states_.size(); ++i)
    if (states_[i].freq_khz == freq_khz) return i;
  return std::nullopt;
}

// em_pd_get_efficient_state()'s walk: the first state whose `key` reaches
// `at_least`, past the ones `inefficient` marks when they are skipped;
// else the top state.
size_t EnergyModel::first_state_reaching(uint64_t at_least, uint64_t PerfState::*key,
                                         bool PerfState::*inefficient) const {
  for (size_t i = 0; i < states_.size(); ++i) {
    const PerfState& ps = states_[i];
    if (ps.*key >= at_least && !(skip_inefficiencies_ && ps.*inefficient)) return i;
  }
  return states_.size() - 1;
}

// em_pd_get_efficient_state() (6.12: by performance).
size_t EnergyModel::efficient_state(uint64_t max_util) const {
  return first_state_reaching(max_util, &PerfState::performance, &PerfState::inefficient);
}

// em_cpu_energy() (include/linux/energy_model.h, 6.12).
uint64_t EnergyModel::cpu_energy(uint64_t max_util, uint64_t sum_util, uint64_t allowed_cpu_cap) const {
  if (sum_util == 0) return 0;
  max_util = std::min(max_util, allowed_cpu_cap);
  const size_t i = efficient_state(max_util);
  return states_[i].cost * sum_util;
}

// em_cpu_energy() (include/linux/energy_model.h, 6.1.166 / 6.6.63).
uint64_t EnergyModel::cpu_energy_v6_1(uint64_t max_util, uint64_t sum_util, uint64_t allowed_cpu_cap) const {
  if (sum_util == 0) return 0;
  max_util = std::min(map_util_perf(max_util), allowed_cpu_cap);
  const uint64_t fmax = states_.back().freq_khz;
  const size_t i = efficient_state_by_freq_v6_1(map_util_freq(max_util, fmax, cpu_capacity_));
  return states_[i].cost_v6_1 * sum_util / cpu_capacity_;
}

// em_pd_get_efficient_state() of 6.1.166 / 6.6.63: by frequency, skipping
// states inefficient by the old cost.
size_t EnergyModel::efficient_state_by_freq_v6_1(uint64_t freq_khz) const {
  return first_state_reaching(freq_khz, &PerfState::freq_khz, &PerfState::inefficient_v6_1);
}

// eenv_pd_max_util() for one CPU with only CFS util: effective_cpu_util()
// caps at capacity; sugov_effective_cpu_perf(util, min=0, max=capacity)
// returns min(map_util_perf(util), capacity); then min with eenv->cpu_cap.
size_t EnergyModel::state_for_util(uint64_t util, uint64_t allowed_cpu_cap) const {
  const uint64_t eff = std::min(util, cpu_capacity_);
  uint64_t perf = std::min(map_util_perf(eff), cpu_capacity_);
  perf = std::min(perf, allowed_cpu_cap);
  return efficient_state(perf);
}

// fair.c compute_energy() with eenv_pd_max_util() / eenv_pd_busy_time(),
// CFS util only (see header).
uint64_t EnergyModel::compute_energy(std::span<const uint64_t> cpu_utils, uint64_t allowed_cpu_cap) const {
  uint64_t max_util = 0;
  uint64_t busy = 0;
  for (uint64_t u : cpu_utils) {
    const uint64_t eff = std::min(u, cpu_capacity_);        // effective_cpu_util()
    const uint64_t perf = std::min(map_util_perf(eff), cpu_capacity_);  // sugov_effective_cpu_perf()
    max_util = std::max(max_util, perf);
    busy += eff;
  }
  max_util = std::min(max_util, allowed_cpu_cap);
  const uint64_t pd_cap = allowed_cpu_cap * cpu_utils.size();
  busy = std::min(busy, pd_cap);
  return cpu_energy(max_util, busy, allowed_cpu_cap);
}

}  // namespace schedlab
