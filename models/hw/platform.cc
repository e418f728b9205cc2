// Derived values of a platform: CPU -> frequency domain map, per-CPU
// capacity and maximum frequency, and the consistency checks behind them.
//
// Kernel references:
//   drivers/base/arch_topology.c  topology_parse_cpu_capacity(),
//       topology_normalize_cpu_scale(), init_cpu_capacity_callback()
//       (Linux 6.8+ stores capacity_freq_ref = policy->cpuinfo.max_freq in
//       kHz; before 6.8 freq_factor = cpuinfo.max_freq / 1000, in MHz)
//   drivers/cpufreq/cpufreq.c     cpufreq_policy_transition_delay_us() (6.9+)
#include "models/hw/platform.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <stdexcept>

namespace schedlab {
namespace {

constexpr int kMaxPlatformCpus = 256;
constexpr unsigned kSchedCapacityShift = 10;  // SCHED_CAPACITY_SHIFT

[[noreturn]] void invalid(const std::string& what) { throw std::invalid_argument(what); }

std::string cluster_label(const PlatformParams& p, size_t i) {
  const ClusterParams& c = p.clusters[i];
  return c.name.empty() ? fmt::format("cluster {}", i) : fmt::format("cluster '{}'", c.name);
}

void validate_idle_states(const std::vector<IdleStateParams>& states, const std::string& where) {
  for (size_t i = 0; i < states.size(); ++i) {
    const IdleStateParams& s = states[i];
    if (s.entry_latency < Time::zero() || s.exit_latency < Time::zero() || s.min_residency < Time::zero())
      invalid(fmt::format("{} idle state {} ('{}'): latencies and residency must be >= 0", where, i, s.name));
    if (s.power_mw < 0) invalid(fmt::format("{} idle state {} ('{}'): power must be >= 0", where, i, s.name));
    // cpuidle governors (menu, teo) walk the states in order and assume
    // target_residency grows with the index.
    if (i > 0 && s.min_residency < states[i - 1].min_residency)
      invalid(fmt::format("{} idle state {} ('{}'): min_residency is below the previous state's "
                          "(states must go from shallow to deep)",
                          where, i, s.name));
  }
}

bool same_idle_states(const std::vector<IdleStateParams>& a, const std::vector<IdleStateParams>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].name != b[i].name || a[i].entry_latency != b[i].entry_latency || a[i].exit_latency != b[i].exit_latency ||
        a[i].min_residency != b[i].min_residency || a[i].power_mw != b[i].power_mw)
      return false;
  return true;
}

}  // namespace

uint32_t DerivedPlatform::max_capacity() const {
  uint32_t m = 0;
  for (const CpuInfo& c : cpus) m = std::max(m, c.capacity);
  return m;
}

bool DerivedPlatform::asymmetric() const {
  std::set<uint32_t> distinct;
  for (const CpuInfo& c : cpus) distinct.insert(c.capacity);
  return distinct.size() > 1;
}

std::vector<uint32_t> normalize_cpu_capacity(std::span<const uint32_t> capacity_dmips_mhz,
                                             std::span<const uint64_t> max_freq_khz, CapacityFreqUnit unit) {
  if (capacity_dmips_mhz.size() != max_freq_khz.size())
    invalid("normalize_cpu_capacity: one capacity-dmips-mhz and one frequency per CPU are needed");
  if (capacity_dmips_mhz.empty()) invalid("normalize_cpu_capacity: no CPU");
  std::vector<uint64_t> raw(capacity_dmips_mhz.size());
  // capacity_scale starts at 1 in the kernel, so it is never 0.
  uint64_t capacity_scale = 1;
  for (size_t cpu = 0; cpu < raw.size(); ++cpu) {
    uint64_t freq_ref = unit == CapacityFreqUnit::kKhz ? max_freq_khz[cpu] : max_freq_khz[cpu] / 1000;
    raw[cpu] = static_cast<uint64_t>(capacity_dmips_mhz[cpu]) * freq_ref;
    capacity_scale = std::max(raw[cpu], capacity_scale);
  }
  std::vector<uint32_t> out(raw.size());
  for (size_t cpu = 0; cpu < raw.size(); ++cpu)
    out[cpu] = static_cast<uint32_t>((raw[cpu] << kSchedCapacityShift) / capacity_scale);  // div64_u64
  return out;
}

int platform_nr_cpus(const PlatformParams& p) {
  if (p.clusters.empty()) return p.cpus;
  int n = 0;
  for (const ClusterParams& c : p.clusters) n += c.nr_cpus;
  return n;
}

void validate_platform(const PlatformParams& p) {
  if (p.clusters.empty()) {
    if (p.cpus < 1 || p.cpus > kMaxPlatformCpus)
      invalid(fmt::format("platform '{}': cpus must be 1..{}, got {}", p.name, kMaxPlatformCpus, p.cpus));
    return;
  }
  int total = 0;
  int previous_map_cluster = -1;
  for (size_t i = 0; i < p.clusters.size(); ++i) {
    const ClusterParams& c = p.clusters[i];
    const std::string where = fmt::format("platform '{}' {}", p.name, cluster_label(p, i));
    if (c.nr_cpus < 1) invalid(fmt::format("{}: nr_cpus must be >= 1, got {}", where, c.nr_cpus));
    total += c.nr_cpus;
    if (c.capacity_dmips_mhz == 0) invalid(fmt::format("{}: capacity_dmips_mhz must be > 0", where));
    if (c.opps.empty()) invalid(fmt::format("{}: needs at least one OPP", where));
    try {
      validate_opp_table(c.opps);
    } catch (const std::invalid_argument& e) {
      invalid(fmt::format("{}: {}", where, e.what()));
    }
    for (size_t k = 0; k < c.opps.size(); ++k) {
      const Opp& o = c.opps[k];
      if (o.power_mw < 0) invalid(fmt::format("{}: OPP {} has a negative power", where, k));
      if (c.dynamic_power_coefficient > 0 && o.power_mw == 0 && o.voltage_uv == 0)
        invalid(fmt::format("{}: OPP {} ({} kHz) has neither a voltage nor a power, and "
                            "dynamic_power_coefficient needs the voltage (P = C * V^2 * f)",
                            where, k, o.freq_khz));
    }
    if (c.static_power_mw < 0) invalid(fmt::format("{}: static power must be >= 0", where));
    // A per-OPP power: never negative, on every OPP or none. Returns whether given.
    auto per_opp_power = [&](double Opp::*power, const char* what) {
      const auto given = static_cast<size_t>(
          std::count_if(c.opps.begin(), c.opps.end(), [&](const Opp& o) { return o.*power != 0; }));
      if (std::any_of(c.opps.begin(), c.opps.end(), [&](const Opp& o) { return o.*power < 0; }))
        invalid(fmt::format("{}: an OPP's {} must be >= 0", where, what));
      if (given > 0 && given < c.opps.size())
        invalid(fmt::format("{}: {} on {} of its {} OPPs (give it on every OPP or none)", where, what, given,
                            c.opps.size()));
      return given > 0;
    };
    if (per_opp_power(&Opp::static_power_mw, "static power") && c.static_power_mw != 0)
      invalid(fmt::format("{}: static power given both per OPP and for the cluster", where));
    const bool idle_per_opp = per_opp_power(&Opp::idle_power_mw, "idle power");
    if (idle_per_opp && !c.cpu_idle_states.empty() && c.cpu_idle_states.front().power_mw != 0)
      invalid(fmt::format("{}: state 0's power given both per OPP (idle_power) and on the state", where));
    if (c.transition_latency < Time::zero()) invalid(fmt::format("{}: transition_latency must be >= 0", where));
    if (c.rate_limit && *c.rate_limit < Time::zero()) invalid(fmt::format("{}: rate_limit must be >= 0", where));
    // sched_pixel's tunables (models/kernel/cpufreq/sched_pixel.h): the
    // loader's checks again, for platforms built in code.
    if (c.cpufreq_governor == "sched_pixel") {
      if (c.rate_limit) invalid(fmt::format("{}: sched_pixel has no rate_limit; give up_rate_limit and down_rate_limit", where));
      if ((c.up_rate_limit && *c.up_rate_limit < Time::zero()) || (c.down_rate_limit && *c.down_rate_limit < Time::zero()))
        invalid(fmt::format("{}: up_rate_limit and down_rate_limit must be >= 0", where));
      if (c.down_rate_limit_scale_pow < 1 || c.down_rate_limit_scale_pow > 16)
        invalid(fmt::format("{}: down_rate_limit_scale_pow must be 1..16, got {}", where, c.down_rate_limit_scale_pow));
      if (c.util_threshold < 1024 || c.util_threshold > 1280)
        invalid(fmt::format("{}: util_threshold must be 1024..1280 (what /proc/vendor_sched/util_threshold takes), got {}",
                            where, c.util_threshold));
    } else if (c.up_rate_limit || c.down_rate_limit || c.down_rate_limit_scale_pow != 1 || c.util_threshold != 1280) {
      invalid(fmt::format("{}: up_rate_limit, down_rate_limit, down_rate_limit_scale_pow and util_threshold are "
                          "sched_pixel tunables, but the cluster's governor is {}",
                          where, c.cpufreq_governor));
    }
    if (c.cpufreq_governor == "userspace" &&
        std::none_of(c.opps.begin(), c.opps.end(), [&](const Opp& o) { return o.freq_khz == c.userspace_freq_khz; }))
      invalid(fmt::format("{}: userspace frequency {} kHz is not one of its OPPs", where, c.userspace_freq_khz));
    if (c.cpu_map_cluster < -1) invalid(fmt::format("{}: cpu_map_cluster must be >= 0", where));
    int map_cluster = c.cpu_map_cluster < 0 ? static_cast<int>(i) : c.cpu_map_cluster;
    if (map_cluster < previous_map_cluster)
      invalid(fmt::format("{}: cpu-map cluster {} comes after cluster {}; list frequency domains in "
                          "cpu-map order so each cpu-map cluster holds consecutive CPUs",
                          where, map_cluster, previous_map_cluster));
    previous_map_cluster = map_cluster;
    validate_idle_states(c.cpu_idle_states, where + " CPU");
    validate_idle_states(c.cluster_idle_states, where + " cluster");
    // One cpu-map cluster is one cluster power domain: its frequency
    // domains describe the same domain-idle-states.
    if (i > 0) {
      const ClusterParams& prev = p.clusters[i - 1];
      int prev_map = prev.cpu_map_cluster < 0 ? static_cast<int>(i - 1) : prev.cpu_map_cluster;
      if (prev_map == map_cluster && !same_idle_states(prev.cluster_idle_states, c.cluster_idle_states))
        invalid(fmt::format("{}: shares cpu-map cluster {} with {} but lists different cluster_idle_states "
                            "(they belong to the one cluster power domain)",
                            where, map_cluster, cluster_label(p, i - 1)));
    }
  }
  if (total > kMaxPlatformCpus)
    invalid(fmt::format("platform '{}': {} CPUs, at most {} are supported", p.name, total, kMaxPlatformCpus));
}

DerivedPlatform derive_platform(const PlatformParams& p, CapacityFreqUnit unit) {
  validate_platform(p);
  DerivedPlatform d;
  if (p.clusters.empty()) {
    d.cluster_cpus.emplace_back();
    for (int cpu = 0; cpu < p.cpus; ++cpu) {
      CpuInfo info;
      info.index_in_cluster = cpu;
      d.cpus.push_back(info);
      d.cluster_cpus[0].push_back(cpu);
    }
    d.cluster_capacity.push_back(1024);
    d.cpu_map_cluster_cpus.push_back(d.cluster_cpus[0]);
    return d;
  }
  std::vector<uint32_t> dmips;
  std::vector<uint64_t> max_khz;
  for (size_t i = 0; i < p.clusters.size(); ++i) {
    const ClusterParams& c = p.clusters[i];
    d.cluster_cpus.emplace_back();
    for (int k = 0; k < c.nr_cpus; ++k) {
      CpuInfo info;
      info.cluster = static_cast<int>(i);
      info.cpu_map_cluster = c.cpu_map_cluster < 0 ? static_cast<int>(i) : c.cpu_map_cluster;
      info.index_in_cluster = k;
      info.max_freq_khz = c.opps.back().freq_khz;  // cpuinfo.max_freq: the top OPP
      d.cluster_cpus.back().push_back(static_cast<int>(d.cpus.size()));
      d.cpus.push_back(info);
      dmips.push_back(c.capacity_dmips_mhz);
      max_khz.push_back(info.max_freq_khz);
    }
  }
  std::vector<uint32_t> capacity = normalize_cpu_capacity(dmips, max_khz, unit);
  for (size_t cpu = 0; cpu < d.cpus.size(); ++cpu) d.cpus[cpu].capacity = capacity[cpu];
  for (const std::vector<int>& cpus : d.cluster_cpus) d.cluster_capacity.push_back(d.cpus[cpus.front()].capacity);
  // cpu-map clusters in id order (validate_platform() made them contiguous).
  int last_map_cluster = -1;
  for (size_t cpu = 0; cpu < d.cpus.size(); ++cpu) {
    if (d.cpus[cpu].cpu_map_cluster != last_map_cluster) {
      d.cpu_map_cluster_cpus.emplace_back();
      last_map_cluster = d.cpus[cpu].cpu_map_cluster;
    }
    d.cpu_map_cluster_cpus.back().push_back(static_cast<int>(cpu));
  }
  return d;
}

}  // namespace schedlab
