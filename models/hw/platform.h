// A hardware platform, typed: clusters (frequency domains) of identical CPUs
// with their capacity-dmips-mhz, OPP table, power and idle states, as a
// device tree describes them. Built by models/config/platform_config.cc
// from configs/platforms/*.yaml; every value there cites its source.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "models/hw/opp.h"
#include "sim/time.h"

namespace schedlab {

// The most CPUs a platform may have (the model's NR_CPUS): task affinity
// masks are fixed-size bitsets of this many bits.
inline constexpr int kMaxCpus = 256;

// One cpuidle state (arm,idle-state / domain-idle-state in a device tree).
// drivers/cpuidle/dt_idle_states.c turns entry + exit latency into the
// cpuidle exit_latency and min-residency into target_residency.
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
  double static_power_mw = 0;          // per cluster while powered, if a source gives it (Opp::static_power_mw per OPP)
  // Bill each CPU idle state's entry and exit latency at the CPU's busy
  // power at its OPP (it runs the power-down and power-up sequences), the
  // rest of the residency at the state's power. Off by default: with no
  // idle-state power given (0 mW everywhere) it would only penalise the
  // deep states. Cluster states' own latencies are not billed: a CPU whose
  // entry or exit is reported in a cluster state bills its deepest CPU
  // state's latencies at busy power, while the cluster, counted as powered
  // down then, bills no static power.
  bool bill_idle_transitions = false;
  std::vector<IdleStateParams> cpu_idle_states;      // per CPU, shallow to deep
  std::vector<IdleStateParams> cluster_idle_states;  // entered only when every CPU of the cluster is idle
                                                     // ("cluster" = the cpu-map cluster / PSCI cluster power
                                                     // domain: frequency domains sharing a cpu-map cluster
                                                     // must list the same states; see DerivedPlatform)
  std::string cpufreq_governor = "schedutil";        // performance | powersave | sched_pixel | schedutil | userspace
  // schedutil rate_limit_us; nullopt = the kernel version's default from
  // transition_latency (cpufreq_policy_transition_delay(), cpufreq/governor.h)
  std::optional<Time> rate_limit;
  // sched_pixel tunables (models/kernel/cpufreq/sched_pixel.h): its
  // up_rate_limit_us / down_rate_limit_us (nullopt = the same default as
  // rate_limit), down_rate_limit_scale_pow, and the vendor's
  // util_threshold (sched_capacity_margin, 1024..1280).
  std::optional<Time> up_rate_limit;
  std::optional<Time> down_rate_limit;
  int down_rate_limit_scale_pow = 1;
  int util_threshold = 1280;
  uint64_t userspace_freq_khz = 0;     // for the userspace governor
  // Added with the platform files (configs/platforms/*.yaml):
  int cpu_map_cluster = -1;            // the device tree's cpu-map clusterN holding these CPUs;
                                       // -1 = one cpu-map cluster per frequency domain (its index)
  Time transition_latency = Time::zero();  // clock-latency-ns of the OPPs (cpuinfo.transition_latency)
  // The cpufreq driver has .fast_switch (policy->fast_switch_enabled:
  // Qualcomm cpufreq-hw, SCMI). false (cpufreq-dt): schedutil switches
  // through its sugov:N kthread (models/kernel/cpufreq/sugov_kthread.h),
  // which does `slow_switch_work` of CPU work per switch and sleeps
  // transition_latency in the driver.
  bool fast_switch = true;
  Time slow_switch_work = Time::us(5);  // assumption: no measurement at hand
};

// Which CPUs share the last-level cache, as the kernel's cacheinfo finds it
// from the device tree's cache nodes (llc_sibling in drivers/base/arch_topology.c).
enum class LlcSharing {
  kAll,      // one LLC (e.g. the DSU L3) shared by every CPU: next-level-cache -> a common node
  kCluster,  // one LLC per cpu-map cluster (e.g. a per-cluster L2 with no L3 node)
  kNone,     // no cache nodes: last_level_cache_is_valid() is false, the package is used
};

struct PlatformParams {
  std::string name = "smp";
  // Without clusters: `cpus` identical CPUs at capacity 1024 and one
  // frequency (the foundation's platform). With clusters: derived.
  int cpus = 1;
  std::vector<ClusterParams> clusters;
  std::vector<std::string> sources;    // citations of the platform file
  // Added with the platform files:
  std::string description;             // one line: SoC and board, for reports
  LlcSharing llc = LlcSharing::kAll;   // see LlcSharing
};

// ---- Derived values (models/hw/platform.cc) --------------------------------

// One CPU as the kernel sees it after boot.
struct CpuInfo {
  int cluster = 0;             // index into PlatformParams::clusters (0 on a flat platform)
  int cpu_map_cluster = 0;     // cpu_topology[cpu].cluster_id
  int index_in_cluster = 0;    // position inside its frequency domain
  uint32_t capacity = 1024;    // arch_scale_cpu_capacity(): topology_normalize_cpu_scale()
  uint64_t max_freq_khz = 0;   // capacity_freq_ref = cpuinfo.max_freq (0 on a flat platform)
};

struct DerivedPlatform {
  std::vector<CpuInfo> cpus;                // one entry per CPU, CPU ids in cluster order
  std::vector<std::vector<int>> cluster_cpus;  // CPUs of each frequency domain (one group on a flat platform)
  std::vector<uint32_t> cluster_capacity;   // capacity of the CPUs of each frequency domain
  std::vector<std::vector<int>> cpu_map_cluster_cpus;  // CPUs of each cpu-map cluster (power domain), by id
  int nr_cpus() const { return static_cast<int>(cpus.size()); }
  uint32_t max_capacity() const;            // 1024 whenever any CPU has capacity-dmips-mhz
  bool asymmetric() const;                  // more than one distinct capacity (EAS candidate)
};

// Unit of the frequency the kernel multiplies capacity-dmips-mhz with.
//   kKhz: Linux >= 6.8 (capacity_freq_ref = cpuinfo.max_freq, kHz)
//   kMhz: Linux < 6.8 (freq_factor = cpuinfo.max_freq / 1000, MHz, truncated)
enum class CapacityFreqUnit { kKhz, kMhz };

// drivers/base/arch_topology.c topology_normalize_cpu_scale(): per CPU
//   raw = capacity-dmips-mhz * freq_ref
//   capacity = (raw << SCHED_CAPACITY_SHIFT) / max(raw over all CPUs)
// in 64-bit integer arithmetic (div64_u64 truncates). `max_freq_khz` is
// each CPU's cpuinfo.max_freq. Throws std::invalid_argument on mismatched
// sizes or an empty input.
std::vector<uint32_t> normalize_cpu_capacity(std::span<const uint32_t> capacity_dmips_mhz,
                                             std::span<const uint64_t> max_freq_khz,
                                             CapacityFreqUnit unit = CapacityFreqUnit::kKhz);

// Number of CPUs: `cpus` without clusters, else the sum of nr_cpus.
int platform_nr_cpus(const PlatformParams& p);

// Throws std::invalid_argument naming the cluster and field when the
// description is inconsistent: no clusters and cpus < 1; a cluster without
// OPPs or with an unsorted table (validate_opp_table); nr_cpus < 1;
// capacity_dmips_mhz 0; a dynamic_power_coefficient with an OPP lacking both
// voltage and explicit power; idle states with a negative time or not
// ordered shallow to deep (min_residency non-decreasing); a userspace
// frequency not in the table; more than 256 CPUs; a cpu-map cluster index
// < -1, or cpu-map clusters that interleave (CPUs of one cpu-map cluster
// must be contiguous, as in the device trees modelled); frequency domains of
// one cpu-map cluster with different cluster_idle_states.
void validate_platform(const PlatformParams& p);

// validate_platform(), then the per-CPU view. On a flat platform every CPU
// has capacity 1024, max_freq_khz 0, and sits in one cpu-map cluster.
DerivedPlatform derive_platform(const PlatformParams& p,
                                CapacityFreqUnit unit = CapacityFreqUnit::kKhz);

}  // namespace schedlab
