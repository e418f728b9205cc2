// CPU topology of a platform as a Boost.Graph tree (package -> cpu-map
// cluster -> frequency domain -> CPU), the sibling masks the kernel derives
// from the device tree, and the sched domains it builds from them.
//
// Kernel references (Linux 6.12):
//   drivers/base/arch_topology.c  parse_dt_topology(), parse_cluster()
//       (since 6.0 every cpu-map clusterN is cluster_id N of package 0),
//       update_siblings_masks(), cpu_coregroup_mask(), cpu_clustergroup_mask()
//   drivers/base/cacheinfo.c      last_level_cache_is_valid(), _is_shared()
//   kernel/sched/topology.c       default_topology[], sd_init(),
//       asym_cpu_capacity_classify(), build_sched_domains(),
//       build_sched_groups()/get_group(), cpu_attach_domain(),
//       sd_degenerate(), sd_parent_degenerate(), update_top_cache_domain()
//   include/linux/sched/sd_flags.h   flag bits and SDF_NEEDS_GROUPS
//   include/linux/sched/topology.h   cpu_cluster_flags(), cpu_core_flags()
//
// What the kernel builds for the shipped platforms (GKI / arm64 defconfig:
// CONFIG_SCHED_MC=y, CONFIG_SCHED_CLUSTER unset; the SMT level, if built,
// spans one CPU and degenerates on these non-SMT cores):
//   gs101, rk3588, kodiak: one MC domain spanning all CPUs (package, or the
//     shared L3), flags SD_SHARE_LLC | SD_ASYM_CPUCAPACITY(_FULL); PKG is not
//     even built because MC already spans the whole cpu_map.
//   With CONFIG_SCHED_CLUSTER=y, gs101 and rk3588 get a CLS level per
//     cpu-map cluster below MC; kodiak (one cpu-map cluster) does not.
//   sm8750 (per-cluster L2 as LLC, no L3 node): MC per cluster, PKG over all
//     CPUs with SD_ASYM_CPUCAPACITY(_FULL).
// Before Linux 6.0 each top-level cpu-map cluster was its own package, so
// MC spanned a cluster and DIE all CPUs; that layout is not modelled.
#pragma once

#include <boost/graph/adjacency_list.hpp>

#include <bitset>
#include <string>
#include <vector>

#include "models/hw/platform.h"

namespace schedlab {

inline constexpr int kMaxTopologyCpus = 256;
using CpuMask = std::bitset<kMaxTopologyCpus>;

// "0-3,6-7" (the kernel's %*pbl); "" for an empty mask.
std::string cpumask_list(const CpuMask& mask);
int cpumask_first(const CpuMask& mask);  // -1 when empty
bool cpumask_subset(const CpuMask& a, const CpuMask& b);  // a within b

// sched_domain flags: bit i is the i-th SD_FLAG() of sd_flags.h (6.12).
enum SdFlag : unsigned {
  kSdBalanceNewidle = 1u << 0,
  kSdBalanceExec = 1u << 1,
  kSdBalanceFork = 1u << 2,
  kSdBalanceWake = 1u << 3,
  kSdWakeAffine = 1u << 4,
  kSdAsymCpucapacity = 1u << 5,
  kSdAsymCpucapacityFull = 1u << 6,
  kSdShareCpucapacity = 1u << 7,
  kSdCluster = 1u << 8,
  kSdShareLlc = 1u << 9,
  kSdSerialize = 1u << 10,
  kSdAsymPacking = 1u << 11,
  kSdPreferSibling = 1u << 12,
  kSdOverlap = 1u << 13,
  kSdNuma = 1u << 14,
};
// Flags whose SD_FLAG() carries SDF_NEEDS_GROUPS (all but SD_WAKE_AFFINE).
inline constexpr unsigned kSdDegenerateGroupsMask = 0x7fffu & ~static_cast<unsigned>(kSdWakeAffine);
// "SD_BALANCE_NEWIDLE|SD_BALANCE_EXEC|..." in bit order.
std::string sd_flags_text(unsigned flags);

// Kernel configuration that shapes the domain hierarchy.
struct SchedDomainConfig {
  bool sched_smt = false;      // CONFIG_SCHED_SMT: arm64 defconfig y, GKI n (no effect without SMT)
  bool sched_cluster = false;  // CONFIG_SCHED_CLUSTER: n in arm64 defconfig and GKI
  bool sched_mc = true;        // CONFIG_SCHED_MC: y in arm64 defconfig and GKI
};

// One sched_domain of one CPU after cpu_attach_domain().
struct SchedDomain {
  std::string name;            // tl->name: SMT, CLS, MC, PKG
  int level = 0;               // position above the CPU after degeneration (debugfs domainN)
  CpuMask span;                // sched_domain_span()
  int span_weight = 0;
  unsigned flags = 0;          // SdFlag bits
  std::vector<CpuMask> groups; // sched groups, the CPU's own first (build_sched_groups order)
  // sd_init(): intervals in milliseconds (load_balance() doubles
  // balance_interval up to max_interval when balancing fails).
  unsigned min_interval_ms = 0;      // sd_weight
  unsigned max_interval_ms = 0;      // 2 * sd_weight
  unsigned balance_interval_ms = 0;  // sd_weight
  unsigned busy_factor = 16;
  unsigned imbalance_pct = 117;      // 110 with SD_SHARE_CPUCAPACITY
  unsigned cache_nice_tries = 0;     // 1 unless SD_SHARE_CPUCAPACITY
  bool has(unsigned flag) const { return (flags & flag) == flag; }
};

// A CPU's domains bottom-up, and the per-CPU shortcuts that
// update_top_cache_domain() caches.
struct CpuSchedDomains {
  std::vector<SchedDomain> domains;
  int sd_llc = -1;               // index of highest_flag_domain(cpu, SD_SHARE_LLC); -1 = none
  int sd_llc_size = 1;
  int sd_llc_id = 0;             // first CPU of sd_llc (the CPU itself without one)
  int sd_asym_cpucapacity = -1;  // index of lowest_flag_domain(cpu, SD_ASYM_CPUCAPACITY_FULL)
};

class Topology {
 public:
  enum class NodeKind { kPackage, kCluster, kFreqDomain, kCpu };
  struct Node {
    NodeKind kind = NodeKind::kCpu;
    int id = 0;          // package 0, cpu-map cluster index, frequency-domain index, or CPU id
    std::string name;
  };
  // Edges point from parent to child.
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, Node>;
  using Vertex = Graph::vertex_descriptor;

  // derive_platform() (throws std::invalid_argument), then the graph.
  explicit Topology(const PlatformParams& params, CapacityFreqUnit unit = CapacityFreqUnit::kKhz);

  const Graph& graph() const { return graph_; }
  const DerivedPlatform& platform() const { return derived_; }
  int nr_cpus() const { return derived_.nr_cpus(); }
  uint32_t capacity(int cpu) const { return derived_.cpus.at(cpu).capacity; }
  int cluster_of(int cpu) const { return derived_.cpus.at(cpu).cluster; }  // frequency domain
  Vertex cpu_vertex(int cpu) const { return cpu_vertex_.at(cpu); }

  CpuMask all_cpus() const;                // cpu_possible_mask == cpumask_of_node(0)
  CpuMask cpus_below(Vertex v) const;      // CPUs in the subtree of v
  CpuMask freq_domain_cpus(int cpu) const;  // policy->related_cpus
  // cpu_topology[cpu] masks (update_siblings_masks(); no SMT: thread = self)
  CpuMask thread_sibling(int cpu) const;
  CpuMask cluster_sibling(int cpu) const;  // same cpu-map cluster
  CpuMask core_sibling(int cpu) const;     // same package
  CpuMask llc_sibling(int cpu) const;      // per PlatformParams::llc
  bool llc_valid() const { return llc_ != LlcSharing::kNone; }
  CpuMask coregroup_mask(int cpu, const SchedDomainConfig& config) const;    // cpu_coregroup_mask()
  CpuMask clustergroup_mask(int cpu, const SchedDomainConfig& config) const;  // cpu_clustergroup_mask()

  // build_sched_domains() over all CPUs + cpu_attach_domain() for each.
  std::vector<CpuSchedDomains> build_sched_domains(const SchedDomainConfig& config = {}) const;

 private:
  Vertex ancestor(Vertex v, NodeKind kind) const;

  DerivedPlatform derived_;
  LlcSharing llc_ = LlcSharing::kAll;
  Graph graph_;
  Vertex package_{};
  std::vector<Vertex> cpu_vertex_;
};

// sched_domain_debug()-like text, one line per domain:
//   "CPU0 domain0 MC span=0-7 groups={0},{1},... flags=SD_..."
std::string describe_sched_domains(const std::vector<CpuSchedDomains>& domains);

}  // namespace schedlab
