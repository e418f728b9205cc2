// A hardware platform, typed: clusters (frequency domains) of identical CPUs
// with their capacity-dmips-mhz, OPP table, power and idle states, as a
// device tree describes them. Built by models/config/platform_config.cc
// from configs/platforms/*.yaml; every value there cites its source.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/hw/opp.h"
#include "sim/time.h"

namespace schedlab {

// One cpuidle state (arm,idle-state / domain-idle-state in a device tree).
struct IdleStateParams {
  std::string name;
  Time entry_latency;   // entry-latency-us
  Time exit_latency;    // exit-latency-us
  Time min_residency;   // min-residency-us (cpuidle target_residency)
  double power_mw = 0;  // power while in the state (datasheet/EM; 0 if unknown)
};

struct ClusterParams {
  std::string name;                    // "little", "mid", "big"
  std::string cpu_type;                // "cortex-a55"
  int nr_cpus = 1;
  uint32_t capacity_dmips_mhz = 1024;  // capacity-dmips-mhz
  std::vector<Opp> opps;               // ascending
  uint32_t dynamic_power_coefficient = 0;  // uW/MHz/V^2 (0: use Opp::power_mw)
  double static_power_mw = 0;          // per cluster while any CPU is powered, if a source gives it
  std::vector<IdleStateParams> cpu_idle_states;      // per CPU, shallow to deep
  std::vector<IdleStateParams> cluster_idle_states;  // entered only when every CPU of the cluster is idle
  std::string cpufreq_governor = "schedutil";        // schedutil | performance | powersave | userspace
  Time rate_limit = Time::us(1000);    // schedutil rate_limit_us (assumption unless given)
  uint64_t userspace_freq_khz = 0;     // for the userspace governor
};

struct PlatformParams {
  std::string name = "smp";
  // Without clusters: `cpus` identical CPUs at capacity 1024 and one
  // frequency (the foundation's platform). With clusters: derived.
  int cpus = 1;
  std::vector<ClusterParams> clusters;
  std::vector<std::string> sources;    // citations of the platform file
};

}  // namespace schedlab
