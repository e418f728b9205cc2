// OPP power (drivers/opp/of.c dev_pm_opp_calc_power) and the Energy Model
// (kernel/power/energy_model.c, include/linux/energy_model.h, Linux 6.12).
// Every expectation is computed by hand in the comment beside it.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <vector>

#include "models/hw/energy_model.h"
#include "models/hw/opp.h"

using namespace schedlab;

namespace {

// gs101 (Pixel 6) cpucl2 = Cortex-X1 cluster, from the mainline device tree
// arch/arm64/boot/dts/exynos/google/gs101.dtsi (torvalds/linux, commit
// 01272f05aae5): cpu6/cpu7 `dynamic-power-coefficient = <650>`,
// `capacity-dmips-mhz = <1024>`, table `cpucl2_opp_table` (opp-hz, opp-microvolt).
// (The 6.12 gs101.dtsi already has the coefficient but no OPP tables.)
constexpr uint32_t kX1DynPowerCoeff = 650;
std::vector<Opp> gs101_x1_opps() {
  return {{500000, 500000},   {851000, 556250},   {984000, 575000},   {1106000, 606250},
          {1277000, 631250},  {1426000, 662500},  {1582000, 693750},  {1745000, 731250},
          {1826000, 750000},  {2048000, 793750},  {2188000, 831250},  {2252000, 850000},
          {2401000, 887500},  {2507000, 925000},  {2630000, 968750},  {2704000, 1000000},
          {2802000, 1056250}};
}

// A toy two-state performance domain with explicit powers:
//   1 GHz, 100 mW  and  2 GHz, 400 mW; CPU capacity 1024.
std::vector<Opp> toy_opps() { return {{1000000, 0, 100.0}, {2000000, 0, 400.0}}; }

}  // namespace

TEST_CASE("the gs101 X1 top OPP draws the power of the kernel's C*V^2*f with its truncations", "[energy]") {
  const Opp top{2802000, 1056250};
  // mV = 1056250 / 1000 = 1056 (truncated), MHz = 2802
  // 650 * 1056 * 1056 * 2802 = 650 * 1115136 * 2802 = 2'030'997'196'800
  // / 1'000'000 = 2'030'997 uW (truncated)  = 2030.997 mW
  CHECK(opp_calc_power_uw(top, kX1DynPowerCoeff) == 2030997);
  CHECK(opp_dynamic_power_mw(top, kX1DynPowerCoeff) == Approx(2030.997));

  // Lowest OPP: 650 * 500 * 500 * 500 / 1e6 = 81'250 uW exactly.
  CHECK(opp_calc_power_uw({500000, 500000}, kX1DynPowerCoeff) == 81250);
  // 851 MHz @ 556250 uV: the .25 mV is dropped: 650 * 556^2 * 851
  // = 650 * 309136 * 851 = 170'998'578'400 -> 170'998 uW.
  CHECK(opp_calc_power_uw({851000, 556250}, kX1DynPowerCoeff) == 170998);
}

TEST_CASE("an explicit OPP power overrides the dynamic-power coefficient", "[energy]") {
  const Opp o{1000000, 800000, 123.4567};
  // opp-microwatt path: 123.4567 mW -> 123457 uW (nearest)
  CHECK(opp_power_uw(o, 650) == 123457);
  CHECK(opp_dynamic_power_mw(o, 650) == Approx(123.4567));
}

TEST_CASE("energy over a duration is power times time", "[energy]") {
  using namespace time_literals;
  // 2030.997 mW for 10 ms = 20.30997 mJ
  CHECK(energy_mj(2030.997, 10_ms) == Approx(20.30997));
  CHECK(energy_mj(500.0, Time::zero()) == 0.0);
}

TEST_CASE("the gs101 X1 energy model has ascending costs and no inefficient OPP", "[energy]") {
  const auto opps = gs101_x1_opps();
  const EnergyModel em(opps, 1024, kX1DynPowerCoeff);
  REQUIRE(em.nr_perf_states() == 17);
  const PerfState& top = em.states().back();
  CHECK(top.freq_khz == 2802000);
  CHECK(top.power_uw == 2030997);
  CHECK(top.performance == 1024);  // 1024 * 2802000 / 2802000
  CHECK(top.cost == 19833);         // 2030997 * 10 / 1024 = 19833.95
  const PerfState& low = em.states().front();
  CHECK(low.performance == 182);  // 1024 * 500000 / 2802000 = 182.7
  CHECK(low.cost == 4464);        // 81250 * 10 / 182 = 4464.2
  for (size_t i = 1; i < em.nr_perf_states(); ++i) {
    CHECK(em.states()[i].cost > em.states()[i - 1].cost);
    CHECK_FALSE(em.states()[i - 1].inefficient);
  }
}

TEST_CASE("the toy domain's perf states follow em_init_performance and em_compute_costs", "[energy]") {
  const auto opps = toy_opps();
  const EnergyModel em(opps, 1024);
  REQUIRE(em.nr_perf_states() == 2);
  // performance = 1024 * f / 2 GHz: 512, 1024
  CHECK(em.states()[0].performance == 512);
  CHECK(em.states()[1].performance == 1024);
  // cost = power_uw * 10 / performance: 100000*10/512 = 1953.1 -> 1953;
  // 400000*10/1024 = 3906.25 -> 3906
  CHECK(em.states()[0].cost == 1953);
  CHECK(em.states()[1].cost == 3906);
  CHECK_FALSE(em.states()[0].inefficient);
}

TEST_CASE("em_cpu_energy charges the cost of the state that fits max_util for the sum of utils", "[energy]") {
  const auto opps = toy_opps();
  const EnergyModel em(opps, 1024);

  // max_util 300 fits state 0 (performance 512): 1953 * 500 = 976500,
  // i.e. 97650 uW ~ 100 mW busy 500/512 of the time (97.66 mW).
  CHECK(em.cpu_energy(300, 500, 1024) == 976500);
  CHECK(em_energy_to_uw(976500) == Approx(97650.0));
  // max_util 600 needs state 1: 3906 * 500 = 1953000 (~ 400 mW * 500/1024).
  CHECK(em.cpu_energy(600, 500, 1024) == 1953000);
  // performance 512 >= max_util 512: state 0 still fits.
  CHECK(em.cpu_energy(512, 500, 1024) == 976500);
  // Thermal cap 512: max_util is clamped to 512 -> state 0.
  CHECK(em.cpu_energy(600, 500, 512) == 976500);
  // No utilisation, no energy.
  CHECK(em.cpu_energy(600, 0, 1024) == 0);
  // Above every state: the top one.
  CHECK(em.efficient_state(5000) == 1);
}

TEST_CASE("EAS adds the 25% headroom before choosing the perf state", "[energy]") {
  const auto opps = toy_opps();
  const EnergyModel em(opps, 1024);
  // map_util_perf(u) = u + u/4. State 0 has performance 512.
  CHECK(em.state_for_util(409) == 0);  // 409 + 102 = 511
  CHECK(em.state_for_util(410) == 0);  // 410 + 102 = 512 (>= is enough)
  CHECK(em.state_for_util(411) == 1);  // 411 + 102 = 513
  // Capped at the thermal capacity: 411 -> 513 -> min(513, 512) -> state 0.
  CHECK(em.state_for_util(411, 512) == 0);

  // compute_energy over two CPUs:
  // {300, 200}: max perf 375 -> state 0; busy 500 -> 1953 * 500 = 976500.
  const std::vector<uint64_t> light{300, 200};
  CHECK(em.compute_energy(light) == 976500);
  // {420, 80}: 420 fits 512 raw, but 420 + 105 = 525 > 512 -> state 1;
  // busy 500 -> 3906 * 500 = 1953000.
  const std::vector<uint64_t> peaky{420, 80};
  CHECK(em.compute_energy(peaky) == 1953000);
  // Utils {2000, 2000}: each capped to capacity 1024 (effective_cpu_util),
  // busy 2048 (<= pd_cap 2 x 1024), max perf min(1280, 1024) = 1024 ->
  // state 1: 3906 * 2048 = 7999488.
  const std::vector<uint64_t> saturated{2000, 2000};
  CHECK(em.compute_energy(saturated) == 7999488);
}

TEST_CASE("an OPP costlier than a faster one is marked inefficient and skipped", "[energy]") {
  // 1 GHz 200 mW, 1.5 GHz 600 mW, 2 GHz 700 mW; capacity 1024.
  // performance 512, 768, 1024
  // cost 2000000/512 = 3906; 6000000/768 = 7812; 7000000/1024 = 6835
  // From the top: 6835 kept; 7812 >= 6835 -> inefficient; 3906 kept.
  const std::vector<Opp> opps{{1000000, 0, 200.0}, {1500000, 0, 600.0}, {2000000, 0, 700.0}};
  const EnergyModel em(opps, 1024);
  CHECK(em.states()[0].cost == 3906);
  CHECK(em.states()[1].cost == 7812);
  CHECK(em.states()[2].cost == 6835);
  CHECK_FALSE(em.states()[0].inefficient);
  CHECK(em.states()[1].inefficient);
  CHECK_FALSE(em.states()[2].inefficient);
  // max_util 600: state 1 (768) fits but is inefficient -> state 2.
  CHECK(em.efficient_state(600) == 2);
  // Without EM_PERF_DOMAIN_SKIP_INEFFICIENCIES it is used.
  const EnergyModel keep(opps, 1024, 0, /*skip_inefficiencies=*/false);
  CHECK(keep.efficient_state(600) == 1);
}

TEST_CASE("a little CPU's performance scales with its capacity", "[energy]") {
  // capacity 250 (an A55-like CPU), 2 states at 1 and 2 GHz:
  // performance = 250 * f / 2 GHz = 125, 250
  // cost = 100000*10/125 = 8000; 400000*10/250 = 16000
  const auto opps = toy_opps();
  const EnergyModel em(opps, 250);
  CHECK(em.states()[0].performance == 125);
  CHECK(em.states()[1].performance == 250);
  CHECK(em.states()[0].cost == 8000);
  CHECK(em.states()[1].cost == 16000);
  // max_util 100 -> state 0; 8000 * 100 = 800000 (= 80 mW = 100 mW * 100/125)
  CHECK(em.cpu_energy(100, 100, 250) == 800000);
}

TEST_CASE("the energy model refuses what the kernel refuses to register", "[energy]") {
  const std::vector<Opp> unsorted{{2000000, 900000}, {1000000, 800000}};
  CHECK_THROWS_AS(EnergyModel(unsorted, 1024, 100), std::invalid_argument);
  const std::vector<Opp> dup{{1000000, 900000}, {1000000, 900000}};
  CHECK_THROWS_AS(EnergyModel(dup, 1024, 100), std::invalid_argument);
  const std::vector<Opp> no_power{{1000000, 800000}};
  CHECK_THROWS_AS(EnergyModel(no_power, 1024, 0), std::invalid_argument);  // no coefficient
  const std::vector<Opp> too_much{{1000000, 0, 65000.0}};                   // 65 W > EM_MAX_POWER
  CHECK_THROWS_AS(EnergyModel(too_much, 1024), std::invalid_argument);
  const std::vector<Opp> mixed{{1000000, 0, 100.0}, {2000000, 900000}};  // first explicit, second not
  CHECK_THROWS_AS(EnergyModel(mixed, 1024, 650), std::invalid_argument);
  CHECK_THROWS_AS(EnergyModel(toy_opps(), 0), std::invalid_argument);
  CHECK_THROWS_AS(EnergyModel(std::vector<Opp>{}, 1024, 650), std::invalid_argument);
}

// 6.1.166 / 6.6.63 em_compute_costs(): cost = fmax * power / freq, and
// em_cpu_energy(): map_util_perf(max_util) capped at the allowed capacity,
// freq = fmax * max_util / capacity, the first state at or above it, energy
// = cost * sum_util / capacity (uW).
TEST_CASE("the 6.1/6.6 energy estimate: cost by frequency, headroom in em_cpu_energy()", "[energy]") {
  const auto opps = toy_opps();
  const EnergyModel em(opps, 1024);
  // 2e6 * 100000 / 1e6 = 200000; 2e6 * 400000 / 2e6 = 400000.
  CHECK(em.states()[0].cost_v6_1 == 200000);
  CHECK(em.states()[1].cost_v6_1 == 400000);
  // 300 -> 375 -> 2e6 * 375 / 1024 = 732421 kHz -> 1 GHz: 200000 * 500 /
  // 1024 = 97656 uW (100 mW busy 500/512 of the time).
  CHECK(em.cpu_energy_v6_1(300, 500, 1024) == 97656);
  // 410 -> 512 -> exactly 1 GHz; 411 -> 513 -> 1001953 kHz -> 2 GHz:
  // 400000 * 500 / 1024 = 195312.
  CHECK(em.cpu_energy_v6_1(410, 500, 1024) == 97656);
  CHECK(em.cpu_energy_v6_1(411, 500, 1024) == 195312);
  // Capped at 512 after the headroom: 600 -> 750 -> 512 -> 1 GHz.
  CHECK(em.cpu_energy_v6_1(600, 500, 512) == 97656);
  CHECK(em.cpu_energy_v6_1(600, 0, 1024) == 0);
  // Capacity 250: the cost does not depend on it; 100 -> 125 -> 1 GHz:
  // 200000 * 100 / 250 = 80000 uW (the 6.12 form's 800000 in 0.1 uW).
  const EnergyModel little(opps, 250);
  CHECK(little.cpu_energy_v6_1(100, 100, 250) == 80000);
  // Inefficiency by the old cost: 1 / 1.5 / 2 GHz at 200 / 600 / 700 mW
  // cost 400000, 800000, 700000: the 1.5 GHz state is skipped; 480 -> 600
  // -> 1171875 kHz -> 2 GHz: 700000 * 1024 / 1024.
  const std::vector<Opp> three{{1000000, 0, 200.0}, {1500000, 0, 600.0}, {2000000, 0, 700.0}};
  const EnergyModel em3(three, 1024);
  CHECK(em3.states()[1].inefficient_v6_1);
  CHECK(em3.cpu_energy_v6_1(480, 1024, 1024) == 700000);
}
