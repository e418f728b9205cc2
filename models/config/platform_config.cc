// platform: the machine. Three forms (configs/README.md, "Platforms"):
//
//   platform: {cpus: 2}                  identical CPUs at capacity 1024 (the foundation's form)
//   platform: gs101                      configs/platforms/gs101.yaml, the configs directory found
//                                        by searching upward from the scenario file
//   platform: {file: ../boards/x.yaml}   a platform file, relative to the scenario file
//   platform: {name: x, clusters: [...]} a platform written inline
//
// A platform file holds exactly what an inline `platform:` map holds
// (without `file`). Values carry explicit units: frequencies 1.8GHz /
// 1800MHz / 1800000kHz, voltages 800mV / 800000uV, power 250mW / 1.2W,
// latencies 65us. Every key is declared below; the nested sections
// (clusters[], opps[], idle states) are listed in configs/README.md.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <limits>
#include <set>
#include <span>

#include "models/config/config.h"
#include "models/config/yaml_loaders.h"
#include "models/kernel/cpufreq/governor.h"
#include "models/kernel/cpuidle/governor.h"

namespace schedlab::config {

// Declarations of the nested platform sections; rendered into
// configs/README.md (tests/test_platform.cc checks the copy).
const std::vector<ParamDecl>& platform_cluster_params();     // platform.clusters[]
const std::vector<ParamDecl>& platform_opp_params();         // platform.clusters[].opps[]
const std::vector<ParamDecl>& platform_idle_state_params();  // platform.clusters[].*_idle_states[]
// The three nested sections as Markdown tables in the format of
// yaml_schema_markdown() (configs/README.md, "Platforms").
std::string platform_schema_markdown();

namespace {

const std::vector<std::string>& llc_choices() {
  static const std::vector<std::string> c = {"all", "cluster", "none"};
  return c;
}

// ---- exact unit parsing -----------------------------------------------------

struct UnitScale {
  std::string_view suffix;
  int exponent;  // value in the base unit = number * 10^exponent
};

// Parses "<decimal><unit>" exactly into an integer count of the base unit
// ("1.8GHz" -> 1800000 kHz). A bare "0" is accepted; any other number
// without a unit, a negative value, or a value that is not a whole number
// of the base unit is refused with a message in *why.
std::optional<uint64_t> parse_scaled(std::string_view text, std::span<const UnitScale> units,
                                     std::string_view base_unit, std::string_view example, std::string* why) {
  size_t i = 0;
  std::string digits;
  int fraction_digits = 0;
  bool seen_point = false;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) {
    if (text[i] == '.') {
      if (seen_point) break;
      seen_point = true;
    } else {
      digits += text[i];
      if (seen_point) ++fraction_digits;
    }
    ++i;
  }
  std::string_view suffix = text.substr(i);
  while (!suffix.empty() && suffix.front() == ' ') suffix.remove_prefix(1);
  if (digits.empty()) {
    *why = !text.empty() && text.front() == '-'
               ? fmt::format("'{}' is negative (expected a value >= 0 such as {})", text, example)
               : fmt::format("'{}' is not a number with a unit (expected e.g. {})", text, example);
    return std::nullopt;
  }
  std::vector<std::string> names;
  for (const UnitScale& u : units) names.emplace_back(u.suffix);
  const UnitScale* unit = nullptr;
  for (const UnitScale& u : units)
    if (suffix == u.suffix) unit = &u;
  if (suffix.empty()) {
    if (std::all_of(digits.begin(), digits.end(), [](char c) { return c == '0'; })) return 0;
    *why = fmt::format("'{}' has no unit (expected one of {}, e.g. {})", text, join(names), example);
    return std::nullopt;
  }
  if (unit == nullptr) {
    *why = fmt::format("'{}' has an unknown unit '{}' (expected one of {}){}", text, suffix, join(names),
                       did_you_mean(suffix, names));
    return std::nullopt;
  }
  // mantissa * 10^(exponent - fraction_digits), exactly.
  int shift = unit->exponent - fraction_digits;
  unsigned __int128 value = 0;
  for (char c : digits) {
    value = value * 10 + static_cast<unsigned>(c - '0');
    if (value > std::numeric_limits<uint64_t>::max()) {
      *why = fmt::format("'{}' is too large", text);
      return std::nullopt;
    }
  }
  for (; shift > 0; --shift) {
    value *= 10;
    if (value > std::numeric_limits<uint64_t>::max()) {
      *why = fmt::format("'{}' is too large", text);
      return std::nullopt;
    }
  }
  for (; shift < 0; ++shift) {
    if (value % 10 != 0) {
      *why = fmt::format("'{}' is not a whole number of {} (the kernel's unit)", text, base_unit);
      return std::nullopt;
    }
    value /= 10;
  }
  return static_cast<uint64_t>(value);
}

constexpr UnitScale kFrequencyUnits[] = {{"GHz", 6}, {"MHz", 3}, {"kHz", 0}, {"Hz", -3}};
// Bounds far above any CPU (about 2,000 DMIPS/MHz, 5 GHz) that keep
// capacity-dmips-mhz x frequency (the kernel's u64 raw capacity) exact.
constexpr uint64_t kMaxFrequencyKhz = 100'000'000;  // 100 GHz
constexpr int64_t kMaxDmipsMhz = 1'000'000;
constexpr UnitScale kVoltageUnits[] = {{"V", 6}, {"mV", 3}, {"uV", 0}};
constexpr UnitScale kPowerUnits[] = {{"W", 6}, {"mW", 3}, {"uW", 0}};

const std::string& scalar_of(const YamlDoc& doc, const YAML::Node& node, const std::string& path,
                             std::string_view expected) {
  if (!node.IsScalar()) fail(doc, node, path, fmt::format("expected {}, got {}", expected, describe_node(node)));
  return node.Scalar();
}

uint64_t as_frequency_khz(const YamlDoc& doc, const YAML::Node& node, const std::string& path) {
  const std::string& text = scalar_of(doc, node, path, "a frequency such as 1.8GHz");
  std::string why;
  auto v = parse_scaled(text, kFrequencyUnits, "kHz", "1.8GHz, 1803MHz or 691200kHz", &why);
  if (!v) fail(doc, node, path, why);
  if (*v == 0) fail(doc, node, path, fmt::format("'{}' is not positive (expected a frequency > 0)", text));
  // Far above any CPU, and it keeps capacity-dmips-mhz x frequency (the
  // kernel's u64 raw capacity) exact.
  if (*v > kMaxFrequencyKhz)
    fail(doc, node, path, fmt::format("'{}' is too high (expected at most 100GHz)", text));
  return *v;
}

uint32_t as_voltage_uv(const YamlDoc& doc, const YAML::Node& node, const std::string& path) {
  const std::string& text = scalar_of(doc, node, path, "a voltage such as 800mV");
  std::string why;
  auto v = parse_scaled(text, kVoltageUnits, "uV", "0.9V, 906.25mV or 906250uV", &why);
  if (!v) fail(doc, node, path, why);
  if (*v == 0 || *v > std::numeric_limits<uint32_t>::max())
    fail(doc, node, path, fmt::format("'{}' is out of range (expected a voltage > 0)", text));
  return static_cast<uint32_t>(*v);
}

double as_power_mw(const YamlDoc& doc, const YAML::Node& node, const std::string& path) {
  const std::string& text = scalar_of(doc, node, path, "a power such as 250mW");
  std::string why;
  auto v = parse_scaled(text, kPowerUnits, "uW", "1.2W, 250mW or 300uW", &why);
  if (!v) fail(doc, node, path, why);
  return static_cast<double>(*v) / 1000.0;
}

std::string frequency_text(uint64_t khz) {
  if (khz % 1000000 == 0) return fmt::format("{}GHz", khz / 1000000);
  if (khz % 1000 == 0) return fmt::format("{}MHz", khz / 1000);
  return fmt::format("{}kHz", khz);
}

// A sequence node, or an error saying so.
const YAML::Node& sequence_of(const YamlDoc& doc, const YAML::Node& node, const std::string& path,
                              std::string_view what) {
  if (!node.IsSequence()) fail(doc, node, path, fmt::format("expected a list of {}, got {}", what, describe_node(node)));
  return node;
}

// ---- sections -------------------------------------------------------------

std::vector<IdleStateParams> load_idle_states(const YamlDoc& doc, const YAML::Node& node, const std::string& path) {
  std::vector<IdleStateParams> out;
  sequence_of(doc, node, path, "idle states");
  std::set<std::string> names;
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string p = index_path(path, i);
    MapReader r(doc, node[i], p, platform_idle_state_params());
    for (const char* key : {"name", "entry_latency", "exit_latency", "min_residency"}) r.require(key);
    IdleStateParams s;
    r.read("name", s.name);
    if (!names.insert(s.name).second) fail(doc, *r.find("name"), r.path("name"), fmt::format("duplicate idle state '{}'", s.name));
    r.read("entry_latency", s.entry_latency, Bound::kNonNegative);
    r.read("exit_latency", s.exit_latency, Bound::kNonNegative);
    r.read("min_residency", s.min_residency, Bound::kNonNegative);
    if (auto n = r.find("power")) s.power_mw = as_power_mw(doc, *n, r.path("power"));
    if (!out.empty() && s.min_residency < out.back().min_residency)
      fail(doc, *r.find("min_residency"), r.path("min_residency"),
           fmt::format("{} is below the previous state's {} (list idle states from shallow to deep)",
                       duration_text(s.min_residency), duration_text(out.back().min_residency)));
    out.push_back(s);
  }
  return out;
}

std::vector<Opp> load_opps(const YamlDoc& doc, const YAML::Node& node, const std::string& path,
                           uint32_t dynamic_power_coefficient) {
  sequence_of(doc, node, path, "OPPs");
  if (node.size() == 0) fail(doc, node, path, "needs at least one OPP (a cluster runs at some frequency)");
  std::vector<Opp> out;
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string p = index_path(path, i);
    MapReader r(doc, node[i], p, platform_opp_params());
    r.require("freq");
    Opp o;
    o.freq_khz = as_frequency_khz(doc, *r.find("freq"), r.path("freq"));
    if (auto n = r.find("voltage")) o.voltage_uv = as_voltage_uv(doc, *n, r.path("voltage"));
    if (auto n = r.find("power")) o.power_mw = as_power_mw(doc, *n, r.path("power"));
    if (auto n = r.find("static_power")) o.static_power_mw = as_power_mw(doc, *n, r.path("static_power"));
    if (auto n = r.find("idle_power")) o.idle_power_mw = as_power_mw(doc, *n, r.path("idle_power"));
    // cpufreq-dt tables and the EM (em_create_perf_table) need strictly
    // ascending frequencies.
    if (!out.empty() && o.freq_khz <= out.back().freq_khz)
      fail(doc, *r.find("freq"), r.path("freq"),
           fmt::format("{} is not above the previous OPP's {} (list OPPs in strictly ascending frequency)",
                       frequency_text(o.freq_khz), frequency_text(out.back().freq_khz)));
    if (dynamic_power_coefficient > 0 && o.voltage_uv == 0 && o.power_mw == 0)
      r.fail_here("needs 'voltage' (P = C * V^2 * f with the cluster's dynamic_power_coefficient) or 'power'");
    out.push_back(o);
  }
  return out;
}

ClusterParams load_cluster(const YamlDoc& doc, const YAML::Node& node, const std::string& path) {
  MapReader r(doc, node, path, platform_cluster_params());
  for (const char* key : {"name", "cpus", "opps"}) r.require(key);
  ClusterParams c;
  r.read("name", c.name);
  r.read("cpu_type", c.cpu_type);
  r.read("cpus", c.nr_cpus, 1, kMaxCpus);
  r.read("cpu_map_cluster", c.cpu_map_cluster, 0, kMaxCpus - 1);
  int64_t dmips = c.capacity_dmips_mhz;
  r.read("capacity_dmips_mhz", dmips, 1, kMaxDmipsMhz);
  c.capacity_dmips_mhz = static_cast<uint32_t>(dmips);
  int64_t coefficient = c.dynamic_power_coefficient;
  r.read("dynamic_power_coefficient", coefficient, 0, std::numeric_limits<uint32_t>::max());
  c.dynamic_power_coefficient = static_cast<uint32_t>(coefficient);
  if (auto n = r.find("static_power")) c.static_power_mw = as_power_mw(doc, *n, r.path("static_power"));
  r.read("bill_idle_transitions", c.bill_idle_transitions);
  r.read("transition_latency", c.transition_latency, Bound::kNonNegative);
  r.read("rate_limit", c.rate_limit, Bound::kNonNegative);
  r.read("fast_switch", c.fast_switch);
  r.read("slow_switch_work", c.slow_switch_work, Bound::kNonNegative);
  r.read_choice("cpufreq_governor", c.cpufreq_governor, governor_names());
  r.read("up_rate_limit", c.up_rate_limit, Bound::kNonNegative);
  r.read("down_rate_limit", c.down_rate_limit, Bound::kNonNegative);
  // down_rate_limit_scale_pow_store() rejects 0; util_threshold_store()
  // takes 1024..1280 (vendor procfs_node.c).
  r.read("down_rate_limit_scale_pow", c.down_rate_limit_scale_pow, 1, 16);
  r.read("util_threshold", c.util_threshold, 1024, 1280);
  // A tunable of another governor than the cluster's does nothing: say so.
  const bool pixel = c.cpufreq_governor == "sched_pixel";
  for (const char* key : {"up_rate_limit", "down_rate_limit", "down_rate_limit_scale_pow", "util_threshold"})
    if (!pixel && r.has(key))
      fail(doc, *r.find(key), r.path(key),
           fmt::format("'{}' is a sched_pixel tunable, but the cluster's cpufreq_governor is {}; set "
                       "cpufreq_governor: sched_pixel or drop it",
                       key, c.cpufreq_governor));
  if (pixel && r.has("rate_limit"))
    fail(doc, *r.find("rate_limit"), r.path("rate_limit"),
         "sched_pixel has no rate_limit (schedutil's); give up_rate_limit and down_rate_limit");
  c.opps = load_opps(doc, *r.find("opps"), r.path("opps"), c.dynamic_power_coefficient);
  // Static and idle power per OPP: on every OPP or on none
  // (validate_platform()'s rules, here with the line).
  auto every_opp_or_none = [&](double Opp::*power, const char* key) {
    const auto given = static_cast<size_t>(
        std::count_if(c.opps.begin(), c.opps.end(), [&](const Opp& o) { return o.*power != 0; }));
    for (size_t i = 0; given > 0 && i < c.opps.size(); ++i)
      if (c.opps[i].*power == 0)
        fail(doc, (*r.find("opps"))[i], index_path(r.path("opps"), i),
             fmt::format("missing '{}' (or 0): {} of the {} OPPs give one; give it on every OPP or on none", key,
                         given, c.opps.size()));
    return given > 0;
  };
  // Static power not beside the cluster's single value either.
  if (every_opp_or_none(&Opp::static_power_mw, "static_power") && c.static_power_mw != 0)
    fail(doc, *r.find("static_power"), r.path("static_power"),
         "give the cluster's static power once here or per OPP (opps[].static_power), not both");
  const bool idle_power_per_opp = every_opp_or_none(&Opp::idle_power_mw, "idle_power");
  // A CPU idling in WFI above its busy power at the same OPP would make
  // running cheaper than idling: usually a busy power without the leakage
  // the idle figure includes, or a unit slip. Allowed (a what-if may mean
  // it); said once per cluster, at the first such OPP.
  if (idle_power_per_opp) {
    std::vector<size_t> above;
    for (size_t i = 0; i < c.opps.size(); ++i)
      if (c.opps[i].idle_power_mw > opp_dynamic_power_mw(c.opps[i], c.dynamic_power_coefficient)) above.push_back(i);
    if (!above.empty()) {
      const Opp& o = c.opps[above.front()];
      const std::string at = index_path(r.path("opps"), above.front());
      warn(doc, (*r.find("opps"))[above.front()]["idle_power"], at + ".idle_power",
           fmt::format("idle power {:.4g} mW is above the busy power of a CPU at this OPP ({:.4g} mW, {}), as at {} "
                       "of the cluster's {} OPPs: an idle CPU would cost more than a running one",
                       o.idle_power_mw, opp_dynamic_power_mw(o, c.dynamic_power_coefficient),
                       o.power_mw != 0 ? "its 'power'" : "C * V^2 * f", above.size(), c.opps.size()));
    }
  }
  if (auto n = r.find("userspace_freq")) {
    c.userspace_freq_khz = as_frequency_khz(doc, *n, r.path("userspace_freq"));
    if (std::none_of(c.opps.begin(), c.opps.end(), [&](const Opp& o) { return o.freq_khz == c.userspace_freq_khz; })) {
      std::vector<std::string> valid;
      for (const Opp& o : c.opps) valid.push_back(frequency_text(o.freq_khz));
      fail(doc, *n, r.path("userspace_freq"),
           fmt::format("{} is not one of the cluster's OPPs ({})", frequency_text(c.userspace_freq_khz), join(valid)));
    }
  } else if (c.cpufreq_governor == "userspace") {
    r.fail_here("the userspace governor needs 'userspace_freq' (scaling_setspeed)");
  }
  if (auto n = r.find("cpu_idle_states")) {
    c.cpu_idle_states = load_idle_states(doc, *n, r.path("cpu_idle_states"));
    if (c.cpu_idle_states.size() > static_cast<size_t>(cpuidle::kStateMax))
      fail(doc, *n, r.path("cpu_idle_states"),
           fmt::format("{} idle states, more than CPUIDLE_STATE_MAX ({}) allows", c.cpu_idle_states.size(),
                       cpuidle::kStateMax));
    // arm64's cpuidle-psci registers WFI as state 0 (exit latency and
    // target residency 1 us, psci_idle_init_cpu()); a device tree's
    // idle-states follow as states 1..n. A list copied from a device tree
    // lacks it, and every short idle would pay a deep state's exit.
    if (const IdleStateParams& s0 = c.cpu_idle_states.front();
        s0.exit_latency > Time::us(1) || s0.min_residency > Time::us(1))
      warn(doc, (*n)[0], index_path(r.path("cpu_idle_states"), 0),
           fmt::format("state 0 '{}' (exit {}, residency {}) is not WFI: cpuidle-psci's state 0 is WFI (1 us, 1 us) "
                       "and a device tree's idle-states come after it; list {{name: WFI, entry_latency: 0, "
                       "exit_latency: 1us, min_residency: 1us}} first",
                       s0.name, duration_text(s0.exit_latency), duration_text(s0.min_residency)));
  }
  if (auto n = r.find("cluster_idle_states"))
    c.cluster_idle_states = load_idle_states(doc, *n, r.path("cluster_idle_states"));
  // The OPPs' idle power is state 0's: it cannot have its own as well.
  if (idle_power_per_opp && !c.cpu_idle_states.empty() && c.cpu_idle_states.front().power_mw != 0)
    fail(doc, (*r.find("cpu_idle_states"))[0], index_path(r.path("cpu_idle_states"), 0),
         "state 0's power is given per OPP (opps[].idle_power): drop its 'power', or the OPPs'");
  return c;
}

PlatformParams load_platform_map(const YamlDoc& doc, const MapReader& r) {
  PlatformParams p;
  r.read("name", p.name);
  r.read("description", p.description);
  if (auto n = r.find("sources")) {
    sequence_of(doc, *n, r.path("sources"), "citations");
    for (size_t i = 0; i < n->size(); ++i) p.sources.push_back(as_string(doc, (*n)[i], index_path(r.path("sources"), i)));
  }
  std::string llc = "all";
  r.read_choice("llc", llc, llc_choices());
  p.llc = llc == "all" ? LlcSharing::kAll : llc == "cluster" ? LlcSharing::kCluster : LlcSharing::kNone;
  if (auto n = r.find("clusters")) {
    if (r.has("cpus"))
      fail(doc, *r.find("cpus"), r.path("cpus"),
           "'cpus' is for identical CPUs without clusters; with 'clusters' the count is their sum (remove one)");
    sequence_of(doc, *n, r.path("clusters"), "clusters");
    if (n->size() == 0) fail(doc, *n, r.path("clusters"), "needs at least one cluster");
    std::set<std::string> names;
    int previous_map_cluster = -1;
    for (size_t i = 0; i < n->size(); ++i) {
      const std::string path = index_path(r.path("clusters"), i);
      ClusterParams c = load_cluster(doc, (*n)[i], path);
      if (!names.insert(c.name).second)
        fail(doc, (*n)[i]["name"], child_path(path, "name"), fmt::format("duplicate cluster name '{}'", c.name));
      int map_cluster = c.cpu_map_cluster < 0 ? static_cast<int>(i) : c.cpu_map_cluster;
      if (map_cluster < previous_map_cluster)
        fail(doc, (*n)[i], path,
             fmt::format("cpu-map cluster {} after cluster {}: list clusters in cpu-map order", map_cluster,
                         previous_map_cluster));
      previous_map_cluster = map_cluster;
      p.clusters.push_back(std::move(c));
    }
    p.cpus = platform_nr_cpus(p);
    if (p.cpus > kMaxCpus)
      fail(doc, *n, r.path("clusters"), fmt::format("{} CPUs in all, at most {} are supported", p.cpus, kMaxCpus));
  } else {
    r.read("cpus", p.cpus, 1, kMaxCpus);
  }
  // Anything the positional checks above missed (validate_platform is the
  // same rule set for platforms built in code).
  try {
    validate_platform(p);
  } catch (const std::invalid_argument& e) {
    r.fail_here(e.what());
  }
  // Capacities as the kernel computes them (either unit of the reference
  // frequency, by kernel version): a cluster whose capacity rounds to 0
  // has no work rate and no energy model.
  if (auto n = r.find("clusters")) {
    for (CapacityFreqUnit unit : {CapacityFreqUnit::kKhz, CapacityFreqUnit::kMhz}) {
      const DerivedPlatform d = derive_platform(p, unit);
      for (size_t i = 0; i < p.clusters.size(); ++i) {
        if (d.cluster_capacity[i] > 0) continue;
        const std::string path = index_path(r.path("clusters"), i);
        const YAML::Node node = (*n)[i]["capacity_dmips_mhz"] ? (*n)[i]["capacity_dmips_mhz"] : (*n)[i];
        fail(doc, node, (*n)[i]["capacity_dmips_mhz"] ? child_path(path, "capacity_dmips_mhz") : path,
             fmt::format("cluster '{}' gets capacity 0 (capacity-dmips-mhz {} x {} against the biggest CPU's, scaled "
                         "to 1024, rounds down to 0): raise its capacity_dmips_mhz or its top OPP",
                         p.clusters[i].name, p.clusters[i].capacity_dmips_mhz,
                         frequency_text(p.clusters[i].opps.back().freq_khz)));
      }
    }
  }
  return p;
}

const std::vector<ParamDecl>& platform_file_params() {
  static const std::vector<ParamDecl> decls = [] {
    std::vector<ParamDecl> out;
    for (const ParamDecl& d : platform_params())
      if (d.key != "file") out.push_back(d);
    return out;
  }();
  return decls;
}

PlatformParams load_platform_from_file(const std::string& file, std::vector<ConfigWarning>* warnings,
                                       const std::string& default_name) {
  YamlDoc fdoc{file, warnings};
  YAML::Node root = parse_yaml_document(read_text_file(file, "cannot read platform file"), file);
  MapReader r(fdoc, root, "", platform_file_params());
  if (!r.has("clusters") && !r.has("cpus")) r.fail_here("a platform file needs 'clusters' (or 'cpus')");
  PlatformParams p = load_platform_map(fdoc, r);
  if (!r.has("name")) p.name = default_name;
  return p;
}

namespace fs = std::filesystem;

fs::path scenario_dir(const YamlDoc& doc) {
  std::error_code ec;
  fs::path f(doc.file);
  if (!doc.file.empty() && fs::exists(f, ec)) return fs::absolute(f, ec).parent_path();
  return fs::current_path(ec);
}

// configs/platforms of the repository holding the scenario: the first
// <dir>/configs/platforms found walking up from the scenario's directory
// (from the working directory for a scenario given as text).
std::optional<fs::path> find_platforms_dir(const fs::path& start) {
  std::error_code ec;
  for (fs::path dir = start; !dir.empty(); dir = dir.parent_path()) {
    fs::path candidate = dir / "configs" / "platforms";
    if (fs::is_directory(candidate, ec)) return candidate;
    if (dir == dir.parent_path()) break;
  }
  return std::nullopt;
}

std::vector<std::string> platform_names(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file() && e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

// The file `platform: NAME` names (configs/platforms/NAME.yaml).
fs::path platform_file_by_name(const YamlDoc& doc, const YAML::Node& node, const std::string& path) {
  const std::string& name = node.Scalar();
  if (!name.empty() && std::all_of(name.begin(), name.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    std::vector<std::string> keys;
    for (const ParamDecl& d : platform_params()) keys.push_back(d.key);
    fail(doc, node, path,
         fmt::format("expected a map with keys {}, or a platform name from configs/platforms, got '{}' "
                     "(for {} identical CPUs write platform: {{cpus: {}}})",
                     join(keys), name, name, name));
  }
  bool plain = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
  if (!plain || name.ends_with(".yaml"))
    fail(doc, node, path,
         fmt::format("'{}' is not a platform name (a file in configs/platforms without '.yaml'); "
                     "write platform: {{file: {}}} for a path",
                     name, name));
  fs::path start = scenario_dir(doc);
  std::optional<fs::path> dir = find_platforms_dir(start);
  // A scenario kept outside the repository still finds the shipped
  // platforms: from the working directory, then the source tree schedlab
  // was built from.
  std::error_code cwd_ec;
  if (!dir) dir = find_platforms_dir(fs::current_path(cwd_ec));
#ifdef SCHEDLAB_SOURCE_DIR
  if (!dir) dir = find_platforms_dir(fs::path(SCHEDLAB_SOURCE_DIR));
#endif
  if (!dir)
    fail(doc, node, path,
         fmt::format("no configs/platforms directory in {} or above it to find platform '{}'; "
                     "write platform: {{file: path}} instead",
                     start.string(), name));
  fs::path file = *dir / (name + ".yaml");
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) {
    std::vector<std::string> names = platform_names(*dir);
    fail(doc, node, path,
         fmt::format("unknown platform '{}' (platforms in {}: {}){}", name, dir->string(),
                     names.empty() ? std::string("none") : join(names), did_you_mean(name, names)));
  }
  return file;
}

}  // namespace

const std::vector<ParamDecl>& platform_params() {
  static const std::vector<ParamDecl> decls = {
      {"cpus", fmt::format("int 1..{}", kMaxCpus), std::to_string(PlatformParams{}.cpus),
       "number of identical CPUs (capacity 1024, one frequency); only without clusters"},
      {"name", "string", "smp, or the file's stem", "label used in reports"},
      {"description", "string", "-", "what the platform is: SoC, board, kernel"},
      {"clusters", "list of clusters", "-",
       "frequency domains of identical CPUs, in CPU order (see platform.clusters[])"},
      {"llc", "all | cluster | none", "all",
       "CPUs sharing the last-level cache per the device tree's cache nodes (cacheinfo llc_sibling); "
       "none = no cache nodes"},
      {"sources", "list of strings", "-", "citations: device trees, datasheets, kernel defaults"},
      {"file", "path", "-",
       "load the platform from this file, relative to the scenario (exclusive with the other keys); "
       "`platform: NAME` loads configs/platforms/NAME.yaml"},
  };
  return decls;
}

const std::vector<ParamDecl>& platform_cluster_params() {
  static const std::vector<ParamDecl> decls = [] {
    const ClusterParams d;
    return std::vector<ParamDecl>{
        {"name", "string", "required", "label, unique in the platform (little, mid, big)"},
        {"cpu_type", "string", "-", "CPU compatible, e.g. cortex-a55"},
        {"cpus", fmt::format("int 1..{}", kMaxCpus), "required", "CPUs in this frequency domain"},
        {"cpu_map_cluster", "int >= 0", "its index",
         "the device tree cpu-map clusterN holding these CPUs (several frequency domains may share one)"},
        {"capacity_dmips_mhz", "int 1..1000000", std::to_string(d.capacity_dmips_mhz),
         "capacity-dmips-mhz of the CPU nodes"},
        {"dynamic_power_coefficient", "int >= 0 (uW/MHz/V^2)", "0",
         "dynamic-power-coefficient; 0 = use each OPP's power"},
        {"static_power", "power", "0", "static power of the cluster while powered (not in a cluster idle state), if a source gives it"},
        {"bill_idle_transitions", "bool", "false",
         "bill a CPU idle state's entry and exit latency at the CPU's busy power (the power-down and power-up "
         "sequences), the rest of its residency at the state's power; off: the whole residency at the state's "
         "power (with every state at 0 mW, billing transitions would only penalise the deep states)"},
        {"transition_latency", "duration", "0", "clock-latency-ns of the OPP table (cpuinfo.transition_latency)"},
        {"rate_limit", "duration", "from transition_latency",
         "schedutil rate_limit_us; default cpufreq_policy_transition_delay_us() of the kernel version: "
         "1.5 x latency (6.12+), latency x 1000 up to 10ms (6.1, 6.6), 1ms without a latency"},
        {"fast_switch", "bool", "true",
         "the cpufreq driver switches from the scheduler hook (.fast_switch: qcom-cpufreq-hw, scmi-cpufreq); "
         "false (cpufreq-dt): the governor's sugov:N kthread switches (schedutil's SCHED_DEADLINE, sched_pixel's "
         "SCHED_FIFO 50), preempting what runs on its CPU"},
        {"slow_switch_work", "duration", duration_text(d.slow_switch_work),
         "CPU work of one sugov:N switch (capacity-ns: at capacity 1024 and f_max); the driver also sleeps "
         "transition_latency (before raising the clock, after lowering it)"},
        {"cpufreq_governor", "performance | powersave | sched_pixel | schedutil | userspace", d.cpufreq_governor,
         "cpufreq governor of the domain (sched_pixel: Google's Pixel vendor governor, gs101 5.10)"},
        {"up_rate_limit", "duration", "from transition_latency",
         "sched_pixel up_rate_limit_us: a raise waits this long after the last change"},
        {"down_rate_limit", "duration", "from transition_latency",
         "sched_pixel down_rate_limit_us: a cut waits this x (f_new / f_old)^down_rate_limit_scale_pow after the "
         "last change (f_old: the last request)"},
        {"down_rate_limit_scale_pow", "int 1..16", std::to_string(d.down_rate_limit_scale_pow),
         "sched_pixel down_rate_limit_scale_pow (the kernel takes any value >= 1; 16 is the model's cap)"},
        {"util_threshold", "int 1024..1280", std::to_string(d.util_threshold),
         "sched_pixel's DVFS headroom x 1024 (/proc/vendor_sched/util_threshold, sched_capacity_margin)"},
        {"userspace_freq", "frequency", "-", "fixed frequency for the userspace governor; must be an OPP"},
        {"opps", "list of OPPs", "required", "operating-points-v2, strictly ascending (see opps[])"},
        {"cpu_idle_states", "list of idle states", "-", "per-CPU idle states, shallow to deep"},
        {"cluster_idle_states", "list of idle states", "-",
         "domain-idle-states entered when every CPU of the cluster is idle"},
    };
  }();
  return decls;
}

const std::vector<ParamDecl>& platform_opp_params() {
  static const std::vector<ParamDecl> decls = {
      {"freq", "frequency (GHz, MHz, kHz, Hz)", "required", "opp-hz; a whole number of kHz"},
      {"voltage", "voltage (V, mV, uV)", "-", "opp-microvolt (first value); needed with dynamic_power_coefficient"},
      {"power", "power (W, mW, uW)", "-", "explicit power of one busy CPU (opp-microwatt); overrides C*V^2*f"},
      {"static_power", "power (W, mW, uW)", "-",
       "static power of the cluster at this OPP while powered (a measurement); exclusive with the cluster's"},
      {"idle_power", "power (W, mW, uW)", "-",
       "power of one CPU idle in state 0 (WFI: clock-gated, powered) at this OPP, e.g. a vendor energy model's "
       "per-OPP idle power; on every OPP or none; replaces state 0's power"},
  };
  return decls;
}

const std::vector<ParamDecl>& platform_idle_state_params() {
  static const std::vector<ParamDecl> decls = {
      {"name", "string", "required", "idle-state-name (unique in the list)"},
      {"entry_latency", "duration", "required", "entry-latency-us"},
      {"exit_latency", "duration", "required", "exit-latency-us"},
      {"min_residency", "duration", "required", "min-residency-us (cpuidle target_residency)"},
      {"power", "power", "0", "power while in the state; 0 when no source gives it"},
  };
  return decls;
}

std::string platform_schema_markdown() {
  return sections_markdown({
      {"platform.clusters[]", "one frequency domain of identical CPUs", &platform_cluster_params()},
      {"platform.clusters[].opps[]", "one operating point", &platform_opp_params()},
      {"platform.clusters[].cpu_idle_states[], cluster_idle_states[]", "one idle state",
       &platform_idle_state_params()},
  });
}

std::string platform_file(const YamlDoc& doc, const YAML::Node& node, const std::string& path) {
  if (node.IsScalar()) return platform_file_by_name(doc, node, path).string();
  if (!node.IsMap() || !node["file"]) return {};
  MapReader r(doc, node, path, platform_params());
  const YAML::Node file = *r.find("file");
  for (const ParamDecl& d : platform_params())
    if (d.key != "file" && r.has(d.key))
      fail(doc, *r.find(d.key), r.path(d.key),
           "a platform loaded with 'file' takes no other keys here; edit the file instead");
  fs::path f(as_string(doc, file, r.path("file")));
  if (f.is_relative()) f = scenario_dir(doc) / f;
  std::error_code ec;
  if (!fs::is_regular_file(f, ec)) fail(doc, file, r.path("file"), fmt::format("no platform file {}", f.string()));
  return f.lexically_normal().string();
}

PlatformParams load_platform(const YamlDoc& doc, const YAML::Node& node, const std::string& path) {
  const std::string file = platform_file(doc, node, path);
  if (!file.empty()) return load_platform_from_file(file, doc.warnings, fs::path(file).stem().string());
  return load_platform_map(doc, MapReader(doc, node, path, platform_params()));
}

}  // namespace schedlab::config
