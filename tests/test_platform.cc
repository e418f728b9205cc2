// Platforms: the shipped SoC files load, capacities follow the kernel's
// topology_normalize_cpu_scale(), the topology graph and sched domains match
// what kernel/sched/topology.c builds, and bad platform YAML is refused with
// file, line and column.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "config_test_util.h"
#include "models/config/config.h"
#include "models/hw/energy_model.h"
#include "models/hw/platform.h"
#include "models/hw/topology.h"

namespace schedlab::config {
// Defined in models/config/platform_config.cc (not yet in a public header).
std::string platform_schema_markdown();
}  // namespace schedlab::config

using namespace schedlab;
using namespace schedlab::testing;
using namespace schedlab::time_literals;
namespace fs = std::filesystem;

namespace {

const std::string kSourceDir = SCHEDLAB_SOURCE_DIR;

// A scenario "placed" in configs/scenarios, so `platform: NAME` resolves to
// the repository's configs/platforms (the file need not exist for text;
// name resolution starts at the directory of an existing scenario file).
std::string repo_scenario_name() { return kSourceDir + "/configs/scenarios/two_hogs.yaml"; }

PlatformParams shipped(const std::string& name) {
  return load_scenario_yaml("platform: " + name + "\n" + kOneTask, repo_scenario_name()).platform;
}

std::vector<uint32_t> capacities(const PlatformParams& p) {
  std::vector<uint32_t> out;
  for (const CpuInfo& c : derive_platform(p).cpus) out.push_back(c.capacity);
  return out;
}

// A scratch directory tree removed at the end of the test.
struct TempTree {
  fs::path root;
  TempTree() {
    root = fs::temp_directory_path() / fs::path("schedlab_platform_test_" + std::to_string(::getpid()));
    fs::remove_all(root);
    fs::create_directories(root);
  }
  ~TempTree() { fs::remove_all(root); }
  fs::path write(const std::string& rel, const std::string& text) const {
    fs::path p = root / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p;
  }
};

const char* kTinyPlatform =
    "name: tiny\n"
    "clusters:\n"
    "  - name: little\n"
    "    cpus: 2\n"
    "    capacity_dmips_mhz: 512\n"
    "    opps:\n"
    "      - {freq: 1GHz}\n"
    "  - name: big\n"
    "    cpus: 1\n"
    "    opps:\n"
    "      - {freq: 500MHz}\n"
    "      - {freq: 2GHz}\n";

}  // namespace

// ---- capacities -------------------------------------------------------------

TEST_CASE("gs101 capacities are the kernel's 160 / 498 / 1024 from dmips x max kHz", "[platform][capacity]") {
  PlatformParams p = shipped("gs101");
  REQUIRE(p.cpus == 8);
  // raw = dmips * kHz; capacity = (raw << 10) / max raw, truncated:
  //   A55 (250 * 1803000 << 10) / (1024 * 2802000) = 160.87 -> 160
  //   A76 (620 * 2253000 << 10) / (1024 * 2802000) = 498.52 -> 498
  uint64_t scale = 1024ull * 2802000;
  CHECK((250ull * 1803000 << 10) / scale == 160);
  CHECK((620ull * 2253000 << 10) / scale == 498);
  CHECK(capacities(p) == std::vector<uint32_t>{160, 160, 160, 160, 498, 498, 1024, 1024});
  // "about 161 / 499" in round numbers: the kernel truncates.
  CHECK(capacities(p)[0] == Approx(161).margin(1));
  CHECK(capacities(p)[4] == Approx(499).margin(1));
}

TEST_CASE("Before 6.8 the kernel used MHz (freq_factor), and gs101 capacities are the same", "[platform][capacity]") {
  PlatformParams p = shipped("gs101");
  DerivedPlatform mhz = derive_platform(p, CapacityFreqUnit::kMhz);
  CHECK(mhz.cpus[0].capacity == 160);
  CHECK(mhz.cpus[4].capacity == 498);
  CHECK(mhz.cpus[7].capacity == 1024);
}

TEST_CASE("rk3588 capacities: A55 397, A76 1024 (530 x 1.8 GHz vs 1024 x 2.4 GHz)", "[platform][capacity]") {
  PlatformParams p = shipped("rk3588");
  CHECK((530ull * 1800000 << 10) / (1024ull * 2400000) == 397);
  CHECK(capacities(p) == std::vector<uint32_t>{397, 397, 397, 397, 1024, 1024, 1024, 1024});
  DerivedPlatform d = derive_platform(p);
  CHECK(d.cluster_cpus == std::vector<std::vector<int>>{{0, 1, 2, 3}, {4, 5}, {6, 7}});
  CHECK(d.cpus[5].max_freq_khz == 2400000);
  CHECK(d.cpus[0].max_freq_khz == 1800000);
}

TEST_CASE("The pm_wq phones: 8 CPUs at 353/869/1024 and 7 CPUs at 837/1024", "[platform][capacity]") {
  PlatformParams a = shipped("phone_a_8cpu");
  CHECK(a.cpus == 8);
  CHECK(capacities(a) == std::vector<uint32_t>{353, 353, 353, 353, 869, 869, 869, 1024});
  PlatformParams b = shipped("phone_b_7cpu");
  CHECK(b.cpus == 7);
  CHECK(capacities(b) == std::vector<uint32_t>{837, 837, 837, 837, 837, 1024, 1024});
}

TEST_CASE("normalize_cpu_capacity follows the kernel's integer arithmetic", "[platform][capacity]") {
  SECTION("the biggest raw capacity becomes exactly 1024") {
    std::vector<uint32_t> dmips = {100, 100};
    std::vector<uint64_t> khz = {1000000, 3000000};
    CHECK(normalize_cpu_capacity(dmips, khz) == std::vector<uint32_t>{341, 1024});  // 1024/3 truncated
  }
  SECTION("equal CPUs are all 1024") {
    std::vector<uint32_t> dmips = {1024, 1024, 1024};
    std::vector<uint64_t> khz = {2000000, 2000000, 2000000};
    CHECK(normalize_cpu_capacity(dmips, khz) == std::vector<uint32_t>{1024, 1024, 1024});
  }
  SECTION("MHz truncation can differ from kHz by one") {
    std::vector<uint32_t> dmips = {1000, 1024};
    std::vector<uint64_t> khz = {1999999, 2000000};  // 1999 MHz vs 2000 MHz
    CHECK(normalize_cpu_capacity(dmips, khz, CapacityFreqUnit::kKhz)[0] == 999);   // 1999999000<<10 / 2048000000
    CHECK(normalize_cpu_capacity(dmips, khz, CapacityFreqUnit::kMhz)[0] == 999);   // 1999000<<10 / 2048000
  }
}

TEST_CASE("The work of one task takes 1024/160 times longer on a gs101 A55 than on an X1", "[platform][capacity]") {
  DerivedPlatform d = derive_platform(shipped("gs101"));
  // Capacity invariance: wall time = work * 1024 / capacity at f_max.
  Time work = 10_ms;
  Time on_x1 = work * 1024 / d.cpus[7].capacity;
  Time on_a55 = work * 1024 / d.cpus[0].capacity;
  CHECK(on_x1 == 10_ms);
  CHECK(on_a55 == Time::ns(64000000));  // 10 ms * 1024 / 160
}

// ---- every shipped platform -------------------------------------------------

TEST_CASE("Every shipped platform loads, validates, cites sources and builds an energy model", "[platform]") {
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(kSourceDir + "/configs/platforms"))
    if (e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"gs101", "phone_a_8cpu", "phone_b_7cpu", "rk3588"});
  for (const std::string& name : names) {
    INFO("platform " << name);
    PlatformParams p = shipped(name);
    CHECK(p.name == name);
    CHECK_FALSE(p.description.empty());
    CHECK_FALSE(p.sources.empty());
    CHECK(p.cpus == platform_nr_cpus(p));
    DerivedPlatform d = derive_platform(p);
    CHECK(d.max_capacity() == 1024);
    CHECK(d.asymmetric());
    for (size_t i = 0; i < p.clusters.size(); ++i) {
      const ClusterParams& c = p.clusters[i];
      INFO("cluster " << c.name);
      CHECK(c.cpu_idle_states.front().name == "WFI");
      // The energy model registers like dev_pm_opp_of_register_em().
      EnergyModel em(c.opps, d.cluster_capacity[i], c.dynamic_power_coefficient);
      CHECK(em.nr_perf_states() == c.opps.size());
      CHECK(em.cpu_capacity() == d.cluster_capacity[i]);
    }
    // Every line of a platform file that sets a value cites its source or
    // says "assumption": a trailing comment, or a comment line right above
    // (the idle-state entries). Name, description and sources are labels.
    std::ifstream in(kSourceDir + "/configs/platforms/" + name + ".yaml");
    std::string line;
    int lineno = 0;
    bool previous_is_comment = false;
    while (std::getline(in, line)) {
      ++lineno;
      size_t first = line.find_first_not_of(' ');
      std::string trimmed = first == std::string::npos ? std::string() : line.substr(first);
      if (trimmed.empty()) continue;
      if (trimmed[0] == '#') {
        previous_is_comment = true;
        continue;
      }
      bool label = trimmed.rfind("name: ", 0) == 0 || trimmed.rfind("description:", 0) == 0 ||
                   trimmed == "sources:" || trimmed.rfind("- \"", 0) == 0 || trimmed == "clusters:";
      INFO(name << ".yaml:" << lineno << ": " << line);
      if (!label) CHECK((line.find('#') != std::string::npos || previous_is_comment));
      previous_is_comment = false;
    }
  }
}

TEST_CASE("gs101 clusters keep the device tree's tables", "[platform]") {
  PlatformParams p = shipped("gs101");
  REQUIRE(p.clusters.size() == 3);
  const ClusterParams& little = p.clusters[0];
  CHECK(little.nr_cpus == 4);
  CHECK(little.capacity_dmips_mhz == 250);
  CHECK(little.dynamic_power_coefficient == 70);
  CHECK(little.opps.size() == 11);
  CHECK(little.opps.front().freq_khz == 300000);
  CHECK(little.opps.front().voltage_uv == 537500);
  CHECK(little.opps.back().freq_khz == 1803000);
  CHECK(little.transition_latency == 500_us);
  // No rate_limit key: the kernel derives it from the latency by version.
  CHECK_FALSE(little.rate_limit.has_value());
  CHECK(little.cpu_idle_states.size() == 2);
  CHECK(little.cpu_idle_states[1].entry_latency == 70_us);
  CHECK(little.cpu_idle_states[1].exit_latency == 160_us);
  CHECK(little.cpu_idle_states[1].min_residency == 2000_us);
  CHECK(p.clusters[2].opps.back().freq_khz == 2802000);
  CHECK(p.clusters[2].opps.back().voltage_uv == 1056250);
  CHECK(p.llc == LlcSharing::kNone);
  CHECK(shipped("rk3588").clusters[0].transition_latency == 40_us);  // clock-latency-ns 40000
}

// ---- topology graph and sched domains ---------------------------------------

TEST_CASE("The topology graph is package -> cpu-map cluster -> frequency domain -> CPU", "[platform][topology]") {
  SECTION("gs101: three cpu-map clusters, one domain each") {
    Topology t(shipped("gs101"));
    CHECK(boost::num_vertices(t.graph()) == 1 + 3 + 3 + 8);
    CHECK(boost::num_edges(t.graph()) == 3 + 3 + 8);
    CHECK(cpumask_list(t.cluster_sibling(5)) == "4-5");
    CHECK(cpumask_list(t.core_sibling(5)) == "0-7");
    CHECK(cpumask_list(t.freq_domain_cpus(6)) == "6-7");
    CHECK_FALSE(t.llc_valid());
  }
  SECTION("phone A (kodiak): one cpu-map cluster holding three frequency domains") {
    Topology t(shipped("phone_a_8cpu"));
    CHECK(boost::num_vertices(t.graph()) == 1 + 1 + 3 + 8);
    CHECK(cpumask_list(t.cluster_sibling(0)) == "0-7");
    CHECK(cpumask_list(t.freq_domain_cpus(5)) == "4-6");
    CHECK(t.platform().cpu_map_cluster_cpus.size() == 1);
  }
}

TEST_CASE("gs101 on a GKI kernel has one MC domain over all CPUs with full asymmetry", "[platform][topology]") {
  Topology t(shipped("gs101"));
  std::vector<CpuSchedDomains> all = t.build_sched_domains();  // SCHED_MC=y, no CLUSTER
  REQUIRE(all.size() == 8);
  for (int cpu = 0; cpu < 8; ++cpu) {
    INFO("CPU" << cpu << "\n" << describe_sched_domains(all));
    const CpuSchedDomains& d = all[cpu];
    REQUIRE(d.domains.size() == 1);
    const SchedDomain& mc = d.domains[0];
    CHECK(mc.name == "MC");
    CHECK(cpumask_list(mc.span) == "0-7");
    CHECK(mc.has(kSdShareLlc));
    CHECK(mc.has(kSdAsymCpucapacity | kSdAsymCpucapacityFull));
    CHECK(mc.has(kSdWakeAffine | kSdBalanceNewidle | kSdBalanceExec | kSdBalanceFork));
    CHECK_FALSE(mc.has(kSdBalanceWake));
    CHECK_FALSE(mc.has(kSdCluster));
    CHECK(mc.has(kSdPreferSibling));  // top level: nobody clears it
    CHECK(mc.groups.size() == 8);     // no child: one group per CPU
    CHECK(mc.groups.front().test(cpu));
    CHECK(mc.min_interval_ms == 8);   // sd_weight
    CHECK(mc.max_interval_ms == 16);  // 2 * sd_weight
    CHECK(mc.busy_factor == 16);
    CHECK(mc.imbalance_pct == 117);
    CHECK(mc.cache_nice_tries == 1);
    CHECK(d.sd_llc == 0);
    CHECK(d.sd_llc_size == 8);
    CHECK(d.sd_llc_id == 0);
    CHECK(d.sd_asym_cpucapacity == 0);
  }
  CHECK(sd_flags_text(all[0].domains[0].flags) ==
        "SD_BALANCE_NEWIDLE|SD_BALANCE_EXEC|SD_BALANCE_FORK|SD_WAKE_AFFINE|SD_ASYM_CPUCAPACITY|"
        "SD_ASYM_CPUCAPACITY_FULL|SD_SHARE_LLC|SD_PREFER_SIBLING");
  // CONFIG_SCHED_SMT (arm64 defconfig) adds an SMT level that degenerates.
  CHECK(describe_sched_domains(t.build_sched_domains({.sched_smt = true})) == describe_sched_domains(all));
}

TEST_CASE("gs101 with CONFIG_SCHED_CLUSTER gets a CLS level per cpu-map cluster under MC", "[platform][topology]") {
  Topology t(shipped("gs101"));
  std::vector<CpuSchedDomains> all = t.build_sched_domains({.sched_cluster = true});
  INFO(describe_sched_domains(all));
  const std::vector<std::string> cls_span = {"0-3", "0-3", "0-3", "0-3", "4-5", "4-5", "6-7", "6-7"};
  for (int cpu = 0; cpu < 8; ++cpu) {
    const CpuSchedDomains& d = all[cpu];
    REQUIRE(d.domains.size() == 2);
    const SchedDomain& cls = d.domains[0];
    const SchedDomain& mc = d.domains[1];
    CHECK(cls.name == "CLS");
    CHECK(cpumask_list(cls.span) == cls_span[cpu]);
    CHECK(cls.has(kSdCluster | kSdShareLlc));
    CHECK_FALSE(cls.has(kSdAsymCpucapacity));  // one capacity inside a cluster
    CHECK_FALSE(cls.has(kSdPreferSibling));    // cleared by the asymmetric parent
    CHECK(cls.min_interval_ms == static_cast<unsigned>(cls.span_weight));
    CHECK(mc.name == "MC");
    CHECK(cpumask_list(mc.span) == "0-7");
    REQUIRE(mc.groups.size() == 3);            // the CLS spans
    CHECK(cpumask_list(mc.groups[0]) == cls_span[cpu]);
    CHECK(d.sd_llc == 1);
    CHECK(d.sd_asym_cpucapacity == 1);
  }
}

TEST_CASE("rk3588 and phone A share the L3: MC over all CPUs", "[platform][topology]") {
  for (const char* name : {"rk3588", "phone_a_8cpu"}) {
    INFO(name);
    Topology t(shipped(name));
    for (const CpuSchedDomains& d : t.build_sched_domains()) {
      REQUIRE(d.domains.size() == 1);
      CHECK(d.domains[0].name == "MC");
      CHECK(cpumask_list(d.domains[0].span) == "0-7");
      CHECK(d.domains[0].has(kSdAsymCpucapacity | kSdAsymCpucapacityFull | kSdShareLlc));
    }
  }
  // kodiak's cpu-map has one cluster: the CLS mask would equal MC, so
  // cpu_clustergroup_mask() falls back to the CPU alone and CLS degenerates.
  Topology kodiak(shipped("phone_a_8cpu"));
  for (const CpuSchedDomains& d : kodiak.build_sched_domains({.sched_cluster = true})) {
    REQUIRE(d.domains.size() == 1);
    CHECK(d.domains[0].name == "MC");
  }
  // rk3588 with clusters: CLS {0-3}, {4-5}, {6-7}; the two A76 pairs have the
  // same capacity, so only MC is asymmetric.
  Topology rk(shipped("rk3588"));
  std::vector<CpuSchedDomains> cls = rk.build_sched_domains({.sched_cluster = true});
  CHECK(cpumask_list(cls[5].domains[0].span) == "4-5");
  CHECK_FALSE(cls[5].domains[0].has(kSdAsymCpucapacity));
  CHECK(cls[5].domains[1].has(kSdAsymCpucapacityFull));
}

TEST_CASE("Phone B's LLC is the cluster L2: MC per cluster, PKG over all with asymmetry", "[platform][topology]") {
  Topology t(shipped("phone_b_7cpu"));
  std::vector<CpuSchedDomains> all = t.build_sched_domains();
  INFO(describe_sched_domains(all));
  for (int cpu = 0; cpu < 7; ++cpu) {
    const CpuSchedDomains& d = all[cpu];
    REQUIRE(d.domains.size() == 2);
    CHECK(d.domains[0].name == "MC");
    CHECK(cpumask_list(d.domains[0].span) == (cpu < 5 ? "0-4" : "5-6"));
    CHECK(d.domains[0].has(kSdShareLlc));
    CHECK_FALSE(d.domains[0].has(kSdAsymCpucapacity));
    CHECK_FALSE(d.domains[0].has(kSdPreferSibling));
    CHECK(d.domains[1].name == "PKG");
    CHECK(cpumask_list(d.domains[1].span) == "0-6");
    CHECK(d.domains[1].has(kSdAsymCpucapacity | kSdAsymCpucapacityFull | kSdPreferSibling));
    CHECK_FALSE(d.domains[1].has(kSdShareLlc));
    CHECK(d.domains[1].groups.size() == 2);
    CHECK(d.domains[1].min_interval_ms == 7);
    CHECK(d.domains[1].max_interval_ms == 14);
    CHECK(d.domains[1].cache_nice_tries == 1);
    CHECK(d.sd_llc == 0);
    CHECK(d.sd_llc_size == (cpu < 5 ? 5 : 2));
    CHECK(d.sd_llc_id == (cpu < 5 ? 0 : 5));
    CHECK(d.sd_asym_cpucapacity == 1);
  }
}

TEST_CASE("Flat platforms: one MC over identical CPUs, none for one CPU", "[platform][topology]") {
  PlatformParams two;
  two.cpus = 2;
  std::vector<CpuSchedDomains> d2 = Topology(two).build_sched_domains();
  REQUIRE(d2[0].domains.size() == 1);
  CHECK(cpumask_list(d2[0].domains[0].span) == "0-1");
  CHECK_FALSE(d2[0].domains[0].has(kSdAsymCpucapacity));
  CHECK(d2[1].sd_asym_cpucapacity == -1);
  PlatformParams one;
  std::vector<CpuSchedDomains> d1 = Topology(one).build_sched_domains();
  CHECK(d1[0].domains.empty());
  CHECK(d1[0].sd_llc == -1);
  CHECK(d1[0].sd_llc_size == 1);
}

// ---- scenario forms -----------------------------------------------------------

TEST_CASE("The inline platform: {cpus: 2} form still works", "[platform][config]") {
  ScenarioParams s = load_scenario_yaml(std::string("platform: {cpus: 2}\n") + kOneTask, "test.yaml");
  CHECK(s.platform.cpus == 2);
  CHECK(s.platform.clusters.empty());
  CHECK(s.platform.name == "smp");
  DerivedPlatform d = derive_platform(s.platform);
  CHECK(d.nr_cpus() == 2);
  CHECK(d.cpus[1].capacity == 1024);
}

TEST_CASE("A platform can be inline, a name found upward, or a file relative to the scenario", "[platform][config]") {
  TempTree tree;
  tree.write("repo/configs/platforms/tiny.yaml", kTinyPlatform);
  fs::path scenario = tree.write("repo/configs/scenarios/deep/s.yaml", std::string("platform: tiny\n") + kOneTask);

  SECTION("by name, searching upward for configs/platforms") {
    ScenarioParams s = load_scenario_file(scenario.string());
    CHECK(s.platform.name == "tiny");
    CHECK(s.platform.cpus == 3);
    CHECK(capacities(s.platform) == std::vector<uint32_t>{256, 256, 1024});  // 512*1 GHz vs 1024*2 GHz
  }
  SECTION("by file, relative to the scenario") {
    fs::path other = tree.write("elsewhere/s.yaml",
                                std::string("platform: {file: ../repo/configs/platforms/tiny.yaml}\n") + kOneTask);
    ScenarioParams s = load_scenario_file(other.string());
    CHECK(s.platform.name == "tiny");
    CHECK(s.platform.clusters.size() == 2);
  }
  SECTION("inline with clusters") {
    std::string yaml = "platform:\n";
    std::istringstream lines(kTinyPlatform);
    for (std::string line; std::getline(lines, line);) yaml += "  " + line + "\n";
    ScenarioParams s = load_scenario_yaml(yaml + kOneTask, "inline.yaml");
    CHECK(s.platform.cpus == 3);
    CHECK(s.platform.clusters[1].opps[1].freq_khz == 2000000);
  }
  SECTION("task affinity is checked against the platform's CPUs") {
    fs::path bad = tree.write("repo/configs/scenarios/bad.yaml",
                              "platform: tiny\ntasks:\n  - name: t\n    cpus: [3]\n    events: [{run: 1ms}]\n");
    CHECK_THROWS_AS(load_scenario_file(bad.string()), ConfigError);
  }
  SECTION("an unknown name lists the platforms there") {
    fs::path s = tree.write("repo/configs/scenarios/u.yaml", std::string("platform: tinny\n") + kOneTask);
    try {
      load_scenario_file(s.string());
      FAIL("expected an error");
    } catch (const ConfigError& e) {
      CHECK(e.line() == 1);
      CHECK(e.column() == 11);
      CHECK(e.key_path() == "platform");
      CHECK_THAT(e.message(), Catch::Contains("unknown platform 'tinny'") && Catch::Contains("tiny") &&
                                  Catch::Contains("did you mean 'tiny'?"));
    }
  }
  SECTION("errors inside a platform file name that file, line and column") {
    tree.write("repo/configs/platforms/broken.yaml",
               "name: broken\nclusters:\n  - name: a\n    cpus: 1\n    opps:\n      - {freq: 1GHz, voltge: 1V}\n");
    fs::path s = tree.write("repo/configs/scenarios/b.yaml", std::string("platform: broken\n") + kOneTask);
    try {
      load_scenario_file(s.string());
      FAIL("expected an error");
    } catch (const ConfigError& e) {
      CHECK(fs::path(e.file()).filename() == "broken.yaml");
      CHECK(e.line() == 6);
      CHECK(e.column() == 22);
      CHECK(e.key_path() == "clusters[0].opps[0].voltge");
      CHECK_THAT(e.message(), Catch::Contains("unknown key 'voltge'") && Catch::Contains("did you mean 'voltage'?"));
    }
  }
}

TEST_CASE("Bad platform YAML is refused with file, line, column and what was expected", "[platform][config]") {
  auto platform_yaml = [](const std::string& body) { return "platform:\n" + body + kOneTask; };
  const std::string cluster_head =
      "  name: x\n"
      "  clusters:\n"
      "    - name: a\n"
      "      cpus: 2\n";

  SECTION("an unknown platform key lists the valid ones") {
    ConfigError e = error_of(platform_yaml("  name: x\n  clustres: []\n"));
    CHECK(e.file() == "test.yaml");
    CHECK(e.line() == 3);
    CHECK(e.column() == 3);
    CHECK(e.key_path() == "platform.clustres");
    CHECK_THAT(e.message(), Catch::Contains("valid keys here") && Catch::Contains("did you mean 'clusters'?"));
  }
  SECTION("an unknown cluster key") {
    ConfigError e = error_of(platform_yaml(cluster_head + "      capacity: 100\n      opps: [{freq: 1GHz}]\n"));
    CHECK(e.line() == 6);
    CHECK(e.key_path() == "platform.clusters[0].capacity");
  }
  SECTION("missing OPPs") {
    ConfigError e = error_of(platform_yaml(cluster_head));
    CHECK(e.line() == 4);
    CHECK(e.key_path() == "platform.clusters[0]");
    CHECK_THAT(e.message(), Catch::Contains("missing required key 'opps'"));
  }
  SECTION("an empty OPP list") {
    ConfigError e = error_of(platform_yaml(cluster_head + "      opps: []\n"));
    CHECK(e.line() == 6);
    CHECK(e.key_path() == "platform.clusters[0].opps");
    CHECK_THAT(e.message(), Catch::Contains("at least one OPP"));
  }
  SECTION("a bad unit names the valid units") {
    ConfigError e = error_of(platform_yaml(cluster_head + "      opps:\n        - {freq: 1.8Ghz}\n"));
    CHECK(e.line() == 7);
    CHECK(e.column() == 18);
    CHECK(e.key_path() == "platform.clusters[0].opps[0].freq");
    CHECK_THAT(e.message(), Catch::Contains("unknown unit 'Ghz'") && Catch::Contains("GHz, MHz, kHz, Hz") &&
                                Catch::Contains("did you mean 'GHz'?"));
  }
  SECTION("a number without a unit") {
    ConfigError e = error_of(platform_yaml(cluster_head + "      opps:\n        - {freq: 1800000}\n"));
    CHECK(e.line() == 7);
    CHECK_THAT(e.message(), Catch::Contains("has no unit"));
  }
  SECTION("a frequency that is not a whole number of kHz") {
    ConfigError e = error_of(platform_yaml(cluster_head + "      opps:\n        - {freq: 1000500Hz}\n"));
    CHECK_THAT(e.message(), Catch::Contains("not a whole number of kHz"));
  }
  SECTION("OPPs out of order") {
    ConfigError e = error_of(
        platform_yaml(cluster_head + "      opps:\n        - {freq: 1GHz}\n        - {freq: 900MHz}\n"));
    CHECK(e.line() == 8);
    CHECK(e.key_path() == "platform.clusters[0].opps[1].freq");
    CHECK_THAT(e.message(), Catch::Contains("900MHz is not above the previous OPP's 1GHz"));
  }
  SECTION("a dynamic-power coefficient without voltages") {
    ConfigError e = error_of(
        platform_yaml(cluster_head + "      dynamic_power_coefficient: 100\n      opps:\n        - {freq: 1GHz}\n"));
    CHECK(e.line() == 8);
    CHECK(e.key_path() == "platform.clusters[0].opps[0]");
    CHECK_THAT(e.message(), Catch::Contains("needs 'voltage'"));
  }
  SECTION("a bad voltage unit") {
    ConfigError e = error_of(platform_yaml(cluster_head + "      opps:\n        - {freq: 1GHz, voltage: 800}\n"));
    CHECK(e.key_path() == "platform.clusters[0].opps[0].voltage");
    CHECK_THAT(e.message(), Catch::Contains("has no unit") && Catch::Contains("V, mV, uV"));
  }
  SECTION("a bad power unit") {
    ConfigError e = error_of(platform_yaml(cluster_head + "      opps:\n        - {freq: 1GHz, power: 250mw}\n"));
    CHECK_THAT(e.message(), Catch::Contains("unknown unit 'mw'") && Catch::Contains("did you mean 'mW'?"));
  }
  SECTION("a latency without a unit") {
    ConfigError e = error_of(platform_yaml(cluster_head +
                                           "      opps: [{freq: 1GHz}]\n      cpu_idle_states:\n"
                                           "        - {name: c2, entry_latency: 70, exit_latency: 1us, "
                                           "min_residency: 1us}\n"));
    CHECK(e.line() == 8);
    CHECK(e.key_path() == "platform.clusters[0].cpu_idle_states[0].entry_latency");
  }
  SECTION("idle states out of order") {
    ConfigError e = error_of(platform_yaml(
        cluster_head +
        "      opps: [{freq: 1GHz}]\n      cpu_idle_states:\n"
        "        - {name: deep, entry_latency: 1us, exit_latency: 1us, min_residency: 2ms}\n"
        "        - {name: shallow, entry_latency: 1us, exit_latency: 1us, min_residency: 1ms}\n"));
    CHECK(e.line() == 9);
    CHECK(e.key_path() == "platform.clusters[0].cpu_idle_states[1].min_residency");
    CHECK_THAT(e.message(), Catch::Contains("shallow to deep"));
  }
  SECTION("cpus beside clusters") {
    ConfigError e = error_of(platform_yaml("  cpus: 4\n" + cluster_head.substr(0) + "      opps: [{freq: 1GHz}]\n"));
    CHECK(e.line() == 2);
    CHECK(e.key_path() == "platform.cpus");
  }
  SECTION("an unknown governor lists the registered ones") {
    ConfigError e = error_of(
        platform_yaml(cluster_head + "      cpufreq_governor: ondemand\n      opps: [{freq: 1GHz}]\n"));
    CHECK(e.key_path() == "platform.clusters[0].cpufreq_governor");
    CHECK_THAT(e.message(), Catch::Contains("schedutil") && Catch::Contains("userspace"));
  }
  SECTION("a sched_pixel tunable on another governor's cluster") {
    ConfigError e = error_of(platform_yaml(cluster_head + "      up_rate_limit: 500us\n      opps: [{freq: 1GHz}]\n"));
    CHECK(e.line() == 6);
    CHECK(e.key_path() == "platform.clusters[0].up_rate_limit");
    CHECK_THAT(e.message(), Catch::Contains("sched_pixel tunable") && Catch::Contains("schedutil"));
  }
  SECTION("schedutil's rate_limit on a sched_pixel cluster") {
    ConfigError e = error_of(platform_yaml(cluster_head + "      cpufreq_governor: sched_pixel\n      rate_limit: 1ms\n"
                                                          "      opps: [{freq: 1GHz}]\n"));
    CHECK(e.key_path() == "platform.clusters[0].rate_limit");
    CHECK_THAT(e.message(), Catch::Contains("up_rate_limit and down_rate_limit"));
  }
  SECTION("a util_threshold outside what the vendor node takes") {
    ConfigError e = error_of(platform_yaml(cluster_head + "      cpufreq_governor: sched_pixel\n      util_threshold: 1300\n"
                                                          "      opps: [{freq: 1GHz}]\n"));
    CHECK(e.key_path() == "platform.clusters[0].util_threshold");
    CHECK_THAT(e.message(), Catch::Contains("1024") && Catch::Contains("1280"));
  }
  SECTION("a userspace frequency that is not an OPP") {
    ConfigError e = error_of(platform_yaml(cluster_head +
                                           "      cpufreq_governor: userspace\n      userspace_freq: 1.5GHz\n"
                                           "      opps: [{freq: 1GHz}, {freq: 2GHz}]\n"));
    CHECK(e.line() == 7);
    CHECK_THAT(e.message(), Catch::Contains("1500MHz is not one of the cluster's OPPs (1GHz, 2GHz)"));
  }
  SECTION("file beside other keys") {
    ConfigError e = error_of(platform_yaml("  file: x.yaml\n  cpus: 2\n"));
    CHECK(e.key_path() == "platform.cpus");
  }
  SECTION("a path given as a name") {
    ConfigError e = error_of(std::string("platform: ../x.yaml\n") + kOneTask);
    CHECK_THAT(e.message(), Catch::Contains("platform: {file: ../x.yaml}"));
  }
  SECTION("duplicate cluster names") {
    ConfigError e = error_of(platform_yaml(cluster_head + "      opps: [{freq: 1GHz}]\n" +
                                           "    - name: a\n      cpus: 1\n      opps: [{freq: 1GHz}]\n"));
    CHECK(e.line() == 7);
    CHECK_THAT(e.message(), Catch::Contains("duplicate cluster name 'a'"));
  }
}

TEST_CASE("sched_pixel's tunables are read per cluster", "[platform][config][sched_pixel]") {
  const std::string yaml =
      "platform:\n"
      "  clusters:\n"
      "    - name: a\n"
      "      cpus: 1\n"
      "      cpufreq_governor: sched_pixel\n"
      "      up_rate_limit: 500us\n"
      "      down_rate_limit: 5ms\n"
      "      down_rate_limit_scale_pow: 2\n"
      "      util_threshold: 1100\n"
      "      opps: [{freq: 1GHz}]\n";
  const ClusterParams c = load_scenario_yaml(yaml + kOneTask, "p.yaml").platform.clusters[0];
  CHECK(c.up_rate_limit == Time::us(500));
  CHECK(c.down_rate_limit == Time::ms(5));
  CHECK(c.down_rate_limit_scale_pow == 2);
  CHECK(c.util_threshold == 1100);
}

TEST_CASE("Units are read exactly", "[platform][config]") {
  std::string yaml =
      "platform:\n"
      "  clusters:\n"
      "    - name: a\n"
      "      cpus: 1\n"
      "      static_power: 1.5W\n"
      "      opps:\n"
      "        - {freq: 691200kHz, voltage: 0.5V}\n"
      "        - {freq: 1.8GHz, voltage: 906.25mV, power: 250mW}\n"
      "        - {freq: 2000000000Hz, voltage: 1000000uV, power: 300uW}\n";
  PlatformParams p = load_scenario_yaml(yaml + kOneTask, "u.yaml").platform;
  const ClusterParams& c = p.clusters[0];
  CHECK(c.static_power_mw == 1500.0);
  CHECK(c.opps[0].freq_khz == 691200);
  CHECK(c.opps[0].voltage_uv == 500000);
  CHECK(c.opps[1].freq_khz == 1800000);
  CHECK(c.opps[1].voltage_uv == 906250);
  CHECK(c.opps[1].power_mw == 250.0);
  CHECK(c.opps[2].freq_khz == 2000000);
  CHECK(c.opps[2].power_mw == 0.3);
  CHECK_FALSE(c.rate_limit.has_value());  // left to the kernel version
}

TEST_CASE("Static power per OPP is given on every OPP or none, and not beside the cluster's", "[platform][config]") {
  const std::string head =
      "platform:\n"
      "  clusters:\n"
      "    - name: a\n"
      "      cpus: 1\n";
  const std::string per_opp =
      "      opps:\n"
      "        - {freq: 1GHz, power: 100mW, static_power: 12.5mW}\n"
      "        - {freq: 2GHz, power: 300mW, static_power: 40mW}\n";
  const ClusterParams c = load_scenario_yaml(head + per_opp + kOneTask, "s.yaml").platform.clusters[0];
  CHECK(c.opps[0].static_power_mw == 12.5);
  CHECK(c.opps[1].static_power_mw == 40.0);
  CHECK(c.static_power_mw == 0.0);
  ConfigError both = error_of(head + "      static_power: 10mW\n" + per_opp + kOneTask);
  CHECK(both.line() == 5);
  CHECK(both.key_path() == "platform.clusters[0].static_power");
  CHECK_THAT(both.message(), Catch::Contains("not both"));
  ConfigError partial = error_of(head +
                                 "      opps:\n"
                                 "        - {freq: 1GHz, power: 100mW, static_power: 12.5mW}\n"
                                 "        - {freq: 2GHz, power: 300mW}\n" +
                                 kOneTask);
  CHECK(partial.line() == 7);
  CHECK(partial.key_path() == "platform.clusters[0].opps[1]");
  CHECK_THAT(partial.message(), Catch::Contains("1 of the 2 OPPs give one"));
}

TEST_CASE("Idle power per OPP is given on every OPP or none, and not beside state 0's own", "[platform][config]") {
  const std::string head =
      "platform:\n"
      "  clusters:\n"
      "    - name: a\n"
      "      cpus: 1\n"
      "      bill_idle_transitions: true\n";
  const std::string per_opp =
      "      opps:\n"
      "        - {freq: 1GHz, power: 100mW, idle_power: 2mW}\n"
      "        - {freq: 2GHz, power: 300mW, idle_power: 5000uW}\n";
  const std::string states =
      "      cpu_idle_states:\n"
      "        - {name: WFI, entry_latency: 0us, exit_latency: 1us, min_residency: 1us}\n"
      "        - {name: c2, entry_latency: 70us, exit_latency: 160us, min_residency: 2ms}\n";
  const ClusterParams c = load_scenario_yaml(head + per_opp + states + kOneTask, "s.yaml").platform.clusters[0];
  CHECK(c.opps[0].idle_power_mw == 2.0);
  CHECK(c.opps[1].idle_power_mw == 5.0);
  CHECK(c.bill_idle_transitions);
  CHECK(load_scenario_yaml(head + per_opp + states + kOneTask, "s.yaml").warnings.empty());
  // Idle above busy (1 GHz: 2 mW idle, 1 mW busy; 2 GHz: 5 mW, 3 mW)
  // loads, with one warning at the first such OPP's idle_power.
  const ScenarioParams inverted = load_scenario_yaml(head +
                                                         "      opps:\n"
                                                         "        - {freq: 500MHz, power: 1mW, idle_power: 0.5mW}\n"
                                                         "        - {freq: 1GHz, power: 1mW, idle_power: 2mW}\n"
                                                         "        - {freq: 2GHz, power: 3mW, idle_power: 5mW}\n" +
                                                         kOneTask,
                                                     "s.yaml");
  REQUIRE(inverted.warnings.size() == 1);
  CHECK_THAT(inverted.warnings[0].text(), Catch::Contains("s.yaml:8:") &&
                                       Catch::Contains("platform.clusters[0].opps[1].idle_power") &&
                                       Catch::Contains("idle power 2 mW is above the busy power of a CPU at this OPP "
                                                       "(1 mW, its 'power'), as at 2 of the cluster's 3 OPPs"));
  // Without listed idle states, idle is an implicit state 0: the OPPs give its power.
  CHECK(load_scenario_yaml(head + per_opp + kOneTask, "s.yaml").platform.clusters[0].opps[1].idle_power_mw == 5.0);
  ConfigError partial = error_of(head +
                                 "      opps:\n"
                                 "        - {freq: 1GHz, power: 100mW}\n"
                                 "        - {freq: 2GHz, power: 300mW, idle_power: 5mW}\n" +
                                 kOneTask);
  CHECK(partial.line() == 7);
  CHECK(partial.key_path() == "platform.clusters[0].opps[0]");
  CHECK_THAT(partial.message(), Catch::Contains("missing 'idle_power' (or 0): 1 of the 2 OPPs give one"));
  ConfigError both = error_of(head + per_opp +
                              "      cpu_idle_states:\n"
                              "        - {name: WFI, entry_latency: 0us, exit_latency: 1us, min_residency: 1us, "
                              "power: 1mW}\n" +
                              kOneTask);
  CHECK(both.line() == 10);
  CHECK(both.key_path() == "platform.clusters[0].cpu_idle_states[0]");
  CHECK_THAT(both.message(), Catch::Contains("state 0's power is given per OPP"));
  // The same rules for a platform built in code.
  PlatformParams p;
  p.name = "code";
  p.clusters = {c};
  CHECK_NOTHROW(validate_platform(p));
  p.clusters[0].opps[0].idle_power_mw = 0;
  CHECK_THROWS_WITH(validate_platform(p), Catch::Contains("idle power on 1 of its 2 OPPs"));
  p.clusters[0].opps[0].idle_power_mw = 2.0;
  p.clusters[0].cpu_idle_states[0].power_mw = 1.0;
  CHECK_THROWS_WITH(validate_platform(p), Catch::Contains("state 0's power given both"));
}

TEST_CASE("validate_platform refuses inconsistent platforms built in code", "[platform]") {
  PlatformParams p;
  p.name = "code";
  ClusterParams c;
  c.name = "a";
  c.nr_cpus = 2;
  c.opps = {{1000000, 800000, 0}};
  p.clusters = {c};
  CHECK_NOTHROW(validate_platform(p));
  SECTION("no OPPs") {
    p.clusters[0].opps.clear();
    CHECK_THROWS_AS(validate_platform(p), std::invalid_argument);
  }
  SECTION("descending OPPs") {
    p.clusters[0].opps = {{2000000, 0, 0}, {1000000, 0, 0}};
    CHECK_THROWS_AS(validate_platform(p), std::invalid_argument);
  }
  SECTION("sched_pixel tunables out of range, or on another governor") {
    p.clusters[0].cpufreq_governor = "sched_pixel";
    CHECK_NOTHROW(validate_platform(p));
    p.clusters[0].down_rate_limit_scale_pow = -1;  // would loop ~4e9 times per cut as an unsigned
    CHECK_THROWS_WITH(validate_platform(p), Catch::Contains("down_rate_limit_scale_pow must be 1..16"));
    p.clusters[0].down_rate_limit_scale_pow = 1;
    p.clusters[0].util_threshold = -5;
    CHECK_THROWS_WITH(validate_platform(p), Catch::Contains("util_threshold must be 1024..1280"));
    p.clusters[0].util_threshold = 1280;
    p.clusters[0].rate_limit = 1_ms;
    CHECK_THROWS_WITH(validate_platform(p), Catch::Contains("sched_pixel has no rate_limit"));
    p.clusters[0].rate_limit.reset();
    p.clusters[0].cpufreq_governor = "schedutil";
    p.clusters[0].up_rate_limit = 500_us;
    CHECK_THROWS_WITH(validate_platform(p), Catch::Contains("sched_pixel tunables"));
  }
  SECTION("interleaved cpu-map clusters") {
    ClusterParams b = c, d = c;
    b.name = "b";
    b.cpu_map_cluster = 1;
    d.name = "d";
    d.cpu_map_cluster = 0;
    p.clusters[0].cpu_map_cluster = 0;
    p.clusters.push_back(b);
    p.clusters.push_back(d);
    CHECK_THROWS_WITH(validate_platform(p), Catch::Contains("cpu-map order"));
  }
  SECTION("cluster idle states differing inside one cpu-map cluster") {
    ClusterParams b = c;
    b.name = "b";
    b.cpu_map_cluster = 0;
    p.clusters[0].cpu_map_cluster = 0;
    b.cluster_idle_states = {{"off", 1_ms, 1_ms, 5_ms, 0}};
    p.clusters.push_back(b);
    CHECK_THROWS_WITH(validate_platform(p), Catch::Contains("cluster power domain"));
  }
  SECTION("static power on some OPPs only, or per OPP and for the cluster") {
    p.clusters[0].opps = {{1000000, 800000, 0}, {2000000, 900000, 0}};
    p.clusters[0].opps[1].static_power_mw = 20;
    CHECK_THROWS_WITH(validate_platform(p), Catch::Contains("on 1 of its 2 OPPs"));
    p.clusters[0].opps[0].static_power_mw = 10;
    CHECK_NOTHROW(validate_platform(p));
    p.clusters[0].static_power_mw = 5;
    CHECK_THROWS_WITH(validate_platform(p), Catch::Contains("both per OPP and for the cluster"));
    p.clusters[0].static_power_mw = 0;
    p.clusters[0].opps[0].static_power_mw = -1;
    CHECK_THROWS_WITH(validate_platform(p), Catch::Contains("static power must be >= 0"));
  }
}

// ---- documentation ------------------------------------------------------------

TEST_CASE("configs/README.md lists the nested platform keys as declared", "[platform][docs]") {
  std::ifstream in(kSourceDir + "/configs/README.md");
  std::stringstream text;
  text << in.rdbuf();
  // Regenerate with config::platform_schema_markdown() when a declaration changes.
  CHECK_THAT(text.str(), Catch::Contains(config::platform_schema_markdown()));
}

// A device tree's idle-states list starts after WFI; copied as they are,
// the CPU's shallowest state would be a deep one. Loads, with a warning.
TEST_CASE("idle states that do not start with WFI load with a warning", "[platform][config]") {
  const std::string head =
      "platform:\n"
      "  clusters:\n"
      "    - name: a\n"
      "      cpus: 1\n"
      "      opps: [{freq: 1GHz, power: 100mW}]\n"
      "      cpu_idle_states:\n";
  const ScenarioParams dt = load_scenario_yaml(
      head + "        - {name: c1, entry_latency: 70us, exit_latency: 160us, min_residency: 2ms}\n" + kOneTask, "s.yaml");
  REQUIRE(dt.warnings.size() == 1);
  CHECK_THAT(dt.warnings[0].text(), Catch::Contains("s.yaml:7:") && Catch::Contains("platform.clusters[0].cpu_idle_states[0]") &&
                                 Catch::Contains("state 0 'c1' (exit 160us, residency 2ms) is not WFI"));
  CHECK(load_scenario_yaml(head +
                               "        - {name: WFI, entry_latency: 0, exit_latency: 1us, min_residency: 1us}\n"
                               "        - {name: c1, entry_latency: 70us, exit_latency: 160us, min_residency: 2ms}\n" +
                               kOneTask,
                           "s.yaml")
            .warnings.empty());
}

