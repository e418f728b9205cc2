// See topology.h for the kernel functions each piece follows.
#include "models/hw/topology.h"

#include <fmt/format.h>

#include <boost/graph/breadth_first_search.hpp>

#include <array>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

namespace schedlab {
namespace {

constexpr std::array<const char*, 15> kSdFlagNames = {
    "SD_BALANCE_NEWIDLE", "SD_BALANCE_EXEC",    "SD_BALANCE_FORK",          "SD_BALANCE_WAKE",
    "SD_WAKE_AFFINE",     "SD_ASYM_CPUCAPACITY", "SD_ASYM_CPUCAPACITY_FULL", "SD_SHARE_CPUCAPACITY",
    "SD_CLUSTER",         "SD_SHARE_LLC",       "SD_SERIALIZE",             "SD_ASYM_PACKING",
    "SD_PREFER_SIBLING",  "SD_OVERLAP",         "SD_NUMA",
};

// Flags with SDF_SHARED_CHILD: highest_flag_domain() stops at the first
// domain without such a flag.
constexpr unsigned kSdSharedChildMask = kSdBalanceNewidle | kSdBalanceExec | kSdBalanceFork | kSdBalanceWake |
                                        kSdWakeAffine | kSdShareCpucapacity | kSdShareLlc;

int weight(const CpuMask& m) { return static_cast<int>(m.count()); }

// One entry of default_topology[] (kernel/sched/topology.c).
struct TopologyLevel {
  const char* name;
  unsigned sd_flags;  // tl->sd_flags()
  CpuMask (*mask)(const Topology&, int cpu, const SchedDomainConfig&);
};

CpuMask smt_mask(const Topology& t, int cpu, const SchedDomainConfig&) { return t.thread_sibling(cpu); }
CpuMask cls_mask(const Topology& t, int cpu, const SchedDomainConfig& c) { return t.clustergroup_mask(cpu, c); }
CpuMask mc_mask(const Topology& t, int cpu, const SchedDomainConfig& c) { return t.coregroup_mask(cpu, c); }
CpuMask pkg_mask(const Topology& t, int, const SchedDomainConfig&) { return t.all_cpus(); }  // cpu_cpu_mask()

// A sched_domain while build_sched_domains() runs, before degeneration.
struct RawDomain {
  bool built = false;
  const TopologyLevel* tl = nullptr;
  CpuMask span;
  int sd_weight = 0;  // cpumask_weight(tl->mask(cpu)), before AND with cpu_map
  unsigned flags = 0;
  unsigned imbalance_pct = 117;
  unsigned cache_nice_tries = 0;
  std::vector<CpuMask> groups;
};

}  // namespace

std::string cpumask_list(const CpuMask& mask) {
  std::string out;
  int cpu = 0;
  while (cpu < kMaxTopologyCpus) {
    if (!mask.test(cpu)) {
      ++cpu;
      continue;
    }
    int last = cpu;
    while (last + 1 < kMaxTopologyCpus && mask.test(last + 1)) ++last;
    if (!out.empty()) out += ',';
    out += last == cpu ? fmt::format("{}", cpu) : fmt::format("{}-{}", cpu, last);
    cpu = last + 1;
  }
  return out;
}

int cpumask_first(const CpuMask& mask) {
  for (int cpu = 0; cpu < kMaxTopologyCpus; ++cpu)
    if (mask.test(cpu)) return cpu;
  return -1;
}

bool cpumask_subset(const CpuMask& a, const CpuMask& b) { return (a & ~b).none(); }

std::string sd_flags_text(unsigned flags) {
  std::string out;
  for (size_t bit = 0; bit < kSdFlagNames.size(); ++bit) {
    if ((flags & (1u << bit)) == 0) continue;
    if (!out.empty()) out += '|';
    out += kSdFlagNames[bit];
  }
  return out;
}

Topology::Topology(const PlatformParams& params, CapacityFreqUnit unit)
    : derived_(derive_platform(params, unit)), llc_(params.llc) {
  package_ = boost::add_vertex(Node{NodeKind::kPackage, 0, params.name}, graph_);
  std::map<int, Vertex> clusters;  // cpu-map cluster id -> vertex
  for (size_t d = 0; d < derived_.cluster_cpus.size(); ++d) {
    const std::vector<int>& cpus = derived_.cluster_cpus[d];
    int map_cluster = derived_.cpus.at(cpus.front()).cpu_map_cluster;
    auto [it, inserted] = clusters.try_emplace(map_cluster);
    if (inserted) {
      it->second = boost::add_vertex(Node{NodeKind::kCluster, map_cluster, fmt::format("cluster{}", map_cluster)}, graph_);
      boost::add_edge(package_, it->second, graph_);
    }
    std::string domain_name = params.clusters.empty() ? std::string("cpus") : params.clusters[d].name;
    Vertex domain = boost::add_vertex(Node{NodeKind::kFreqDomain, static_cast<int>(d), domain_name}, graph_);
    boost::add_edge(it->second, domain, graph_);
    for (int cpu : cpus) {
      Vertex v = boost::add_vertex(Node{NodeKind::kCpu, cpu, fmt::format("cpu{}", cpu)}, graph_);
      boost::add_edge(domain, v, graph_);
      if (static_cast<size_t>(cpu) >= cpu_vertex_.size()) cpu_vertex_.resize(cpu + 1);
      cpu_vertex_[cpu] = v;
    }
  }
}

CpuMask Topology::cpus_below(Vertex root) const {
  CpuMask mask;
  struct Collect : boost::default_bfs_visitor {
    CpuMask* out;
    explicit Collect(CpuMask* o) : out(o) {}
    void discover_vertex(Vertex v, const Graph& g) const {
      if (g[v].kind == NodeKind::kCpu) out->set(g[v].id);
    }
  };
  std::vector<boost::default_color_type> colors(boost::num_vertices(graph_));
  boost::breadth_first_search(
      graph_, root,
      boost::visitor(Collect(&mask)).color_map(boost::make_iterator_property_map(colors.begin(),
                                                                                 boost::get(boost::vertex_index, graph_))));
  return mask;
}

Topology::Vertex Topology::ancestor(Vertex v, NodeKind kind) const {
  while (graph_[v].kind != kind) {
    auto [in, end] = boost::in_edges(v, graph_);
    if (in == end) throw std::logic_error("topology: no ancestor of the requested kind");
    v = boost::source(*in, graph_);
  }
  return v;
}

CpuMask Topology::all_cpus() const { return cpus_below(package_); }

CpuMask Topology::freq_domain_cpus(int cpu) const {
  return cpus_below(ancestor(cpu_vertex(cpu), NodeKind::kFreqDomain));
}

CpuMask Topology::thread_sibling(int cpu) const {
  CpuMask m;
  m.set(cpu);
  return m;
}

CpuMask Topology::cluster_sibling(int cpu) const { return cpus_below(ancestor(cpu_vertex(cpu), NodeKind::kCluster)); }

CpuMask Topology::core_sibling(int cpu) const { return cpus_below(ancestor(cpu_vertex(cpu), NodeKind::kPackage)); }

CpuMask Topology::llc_sibling(int cpu) const {
  switch (llc_) {
    case LlcSharing::kAll: return all_cpus();
    case LlcSharing::kCluster: return cluster_sibling(cpu);
    case LlcSharing::kNone: break;
  }
  return thread_sibling(cpu);  // clear_cpu_topology(): the CPU alone
}

CpuMask Topology::coregroup_mask(int cpu, const SchedDomainConfig& config) const {
  // cpu_coregroup_mask(): the smaller of NUMA node, package or LLC siblings.
  CpuMask core_mask = all_cpus();  // cpumask_of_node(): one node
  if (cpumask_subset(core_sibling(cpu), core_mask)) core_mask = core_sibling(cpu);
  if (llc_valid() && cpumask_subset(llc_sibling(cpu), core_mask)) core_mask = llc_sibling(cpu);
  // No shared CPU-side LLC but clusters: extend to the cluster; the
  // builder then drops MC as redundant with CLS.
  if (config.sched_cluster && cpumask_subset(core_mask, cluster_sibling(cpu))) core_mask = cluster_sibling(cpu);
  return core_mask;
}

CpuMask Topology::clustergroup_mask(int cpu, const SchedDomainConfig& config) const {
  // Forbid the cluster level to span as many CPUs as MC or more.
  if (cpumask_subset(coregroup_mask(cpu, config), cluster_sibling(cpu))) return thread_sibling(cpu);
  return cluster_sibling(cpu);
}

std::vector<CpuSchedDomains> Topology::build_sched_domains(const SchedDomainConfig& config) const {
  static const TopologyLevel kSmt{"SMT", kSdShareCpucapacity | kSdShareLlc, smt_mask};  // cpu_smt_flags()
  static const TopologyLevel kCls{"CLS", kSdCluster | kSdShareLlc, cls_mask};           // cpu_cluster_flags()
  static const TopologyLevel kMc{"MC", kSdShareLlc, mc_mask};                           // cpu_core_flags()
  static const TopologyLevel kPkg{"PKG", 0, pkg_mask};
  std::vector<const TopologyLevel*> levels;  // default_topology[], bottom-up
  if (config.sched_smt) levels.push_back(&kSmt);
  if (config.sched_cluster) levels.push_back(&kCls);
  if (config.sched_mc) levels.push_back(&kMc);
  levels.push_back(&kPkg);

  const int n = nr_cpus();
  const CpuMask cpu_map = all_cpus();

  // asym_cpu_capacity_scan(): CPUs grouped by capacity; a single capacity
  // means a symmetric system and the list is dropped.
  std::map<uint32_t, CpuMask> capacity_spans;
  for (int cpu = 0; cpu < n; ++cpu) capacity_spans[capacity(cpu)].set(cpu);
  if (capacity_spans.size() == 1) capacity_spans.clear();
  auto asym_classify = [&](const CpuMask& span) -> unsigned {
    int count = 0, miss = 0;
    for (const auto& [cap, cpus] : capacity_spans) {
      if ((span & cpus).any())
        ++count;
      else if ((cpu_map & cpus).any())
        ++miss;
    }
    if (count < 2) return 0;
    if (miss) return kSdAsymCpucapacity;
    return kSdAsymCpucapacity | kSdAsymCpucapacityFull;
  };

  // raw[level][cpu]
  std::vector<std::vector<RawDomain>> raw(levels.size(), std::vector<RawDomain>(n));
  for (int cpu = 0; cpu < n; ++cpu) {
    RawDomain* child = nullptr;
    for (size_t l = 0; l < levels.size(); ++l) {
      const TopologyLevel* tl = levels[l];
      RawDomain& sd = raw[l][cpu];
      // sd_init()
      CpuMask tl_mask = tl->mask(*this, cpu, config);
      sd.built = true;
      sd.tl = tl;
      sd.sd_weight = weight(tl_mask);
      sd.flags = kSdBalanceNewidle | kSdBalanceExec | kSdBalanceFork | kSdWakeAffine | kSdPreferSibling | tl->sd_flags;
      sd.span = cpu_map & tl_mask;
      sd.flags |= asym_classify(sd.span);
      // Don't attempt to spread across CPUs of different capacities.
      if ((sd.flags & kSdAsymCpucapacity) && child) child->flags &= ~static_cast<unsigned>(kSdPreferSibling);
      sd.imbalance_pct = 117;
      sd.cache_nice_tries = 0;
      if (sd.flags & kSdShareCpucapacity) {
        sd.imbalance_pct = 110;
      } else if (sd.flags & kSdShareLlc) {
        sd.imbalance_pct = 117;
        sd.cache_nice_tries = 1;
      } else {
        sd.cache_nice_tries = 1;
      }
      // build_sched_domain(): "BUG: arch topology borken" fixup.
      if (child && !cpumask_subset(child->span, sd.span)) sd.span |= child->span;
      child = &sd;
      if (sd.span == cpu_map) break;
    }
  }

  // build_sched_groups(): groups are the child domains' spans (single
  // CPUs at the lowest level), walked from the CPU with wrap-around.
  for (size_t l = 0; l < levels.size(); ++l) {
    for (int cpu = 0; cpu < n; ++cpu) {
      RawDomain& sd = raw[l][cpu];
      if (!sd.built) continue;
      CpuMask covered;
      for (int k = 0; k < n; ++k) {
        int i = (cpu + k) % n;
        if (!sd.span.test(i) || covered.test(i)) continue;
        CpuMask group;
        if (l > 0 && raw[l - 1][i].built)
          group = raw[l - 1][i].span;  // get_group(): sd->child's span
        else
          group.set(i);
        covered |= group;
        sd.groups.push_back(group);
      }
    }
  }

  auto sd_degenerate = [](const RawDomain& sd) {
    if (weight(sd.span) == 1) return true;
    if ((sd.flags & kSdDegenerateGroupsMask) && sd.groups.size() > 1) return false;
    if (sd.flags & kSdWakeAffine) return false;
    return true;
  };
  auto sd_parent_degenerate = [&](const RawDomain& sd, const RawDomain& parent) {
    if (sd_degenerate(parent)) return true;
    if (sd.span != parent.span) return false;
    unsigned pflags = parent.flags;
    if (parent.groups.size() == 1) pflags &= ~kSdDegenerateGroupsMask;
    if (~sd.flags & pflags) return false;
    return true;
  };

  std::vector<CpuSchedDomains> out(n);
  for (int cpu = 0; cpu < n; ++cpu) {
    // cpu_attach_domain(): drop domains that do not contribute.
    std::vector<RawDomain> chain;
    for (size_t l = 0; l < levels.size(); ++l)
      if (raw[l][cpu].built) chain.push_back(raw[l][cpu]);
    for (size_t t = 0; t + 1 < chain.size();) {
      if (sd_parent_degenerate(chain[t], chain[t + 1])) {
        // Transfer SD_PREFER_SIBLING down: the spans match.
        if (chain[t + 1].flags & kSdPreferSibling) chain[t].flags |= kSdPreferSibling;
        chain.erase(chain.begin() + static_cast<std::ptrdiff_t>(t) + 1);
      } else {
        ++t;
      }
    }
    if (!chain.empty() && sd_degenerate(chain.front())) chain.erase(chain.begin());

    CpuSchedDomains& cpu_domains = out[cpu];
    for (size_t l = 0; l < chain.size(); ++l) {
      const RawDomain& r = chain[l];
      SchedDomain sd;
      sd.name = r.tl->name;
      sd.level = static_cast<int>(l);
      sd.span = r.span;
      sd.span_weight = weight(r.span);
      sd.flags = r.flags;
      sd.groups = r.groups;
      sd.min_interval_ms = static_cast<unsigned>(r.sd_weight);
      sd.max_interval_ms = 2 * static_cast<unsigned>(r.sd_weight);
      sd.balance_interval_ms = static_cast<unsigned>(r.sd_weight);
      sd.imbalance_pct = r.imbalance_pct;
      sd.cache_nice_tries = r.cache_nice_tries;
      cpu_domains.domains.push_back(std::move(sd));
    }
    // update_top_cache_domain()
    cpu_domains.sd_llc_id = cpu;
    for (size_t l = 0; l < cpu_domains.domains.size(); ++l) {
      const SchedDomain& sd = cpu_domains.domains[l];
      if (sd.flags & kSdShareLlc) {
        cpu_domains.sd_llc = static_cast<int>(l);
      } else if (kSdShareLlc & kSdSharedChildMask) {
        break;
      }
    }
    if (cpu_domains.sd_llc >= 0) {
      const SchedDomain& llc = cpu_domains.domains[cpu_domains.sd_llc];
      cpu_domains.sd_llc_size = llc.span_weight;
      cpu_domains.sd_llc_id = cpumask_first(llc.span);
    }
    for (size_t l = 0; l < cpu_domains.domains.size(); ++l) {
      if (cpu_domains.domains[l].flags & kSdAsymCpucapacityFull) {
        cpu_domains.sd_asym_cpucapacity = static_cast<int>(l);
        break;
      }
    }
  }
  return out;
}

std::string describe_sched_domains(const std::vector<CpuSchedDomains>& domains) {
  std::string out;
  for (size_t cpu = 0; cpu < domains.size(); ++cpu) {
    if (domains[cpu].domains.empty()) out += fmt::format("CPU{} attaching NULL sched-domain\n", cpu);
    for (const SchedDomain& sd : domains[cpu].domains) {
      std::string groups;
      for (const CpuMask& g : sd.groups) groups += fmt::format("{}{{{}}}", groups.empty() ? "" : ",", cpumask_list(g));
      out += fmt::format("CPU{} domain{} {} span={} groups={} interval={}..{}ms flags={}\n", cpu, sd.level, sd.name,
                         cpumask_list(sd.span), groups, sd.min_interval_ms, sd.max_interval_ms,
                         sd_flags_text(sd.flags));
    }
  }
  return out;
}

}  // namespace schedlab
