// The scenario file as a whole: top-level keys, composition of the area
// loaders, file dispatch (YAML or rt-app JSON) and the rendered reference.
#include <filesystem>
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "models/config/config.h"
#include "models/config/overlay.h"
#include "models/config/yaml_loaders.h"

namespace schedlab {
namespace config {
namespace {

void check_warmup(const MapReader& r, const ScenarioParams& s) {
  if (s.warmup >= s.duration) {
    std::string key = r.has("warmup") ? "warmup" : "duration";
    fail(r.doc(), *r.find(key), r.path(key),
         fmt::format("warmup {} leaves nothing to measure in duration {} (expected warmup < duration)",
                     duration_text(s.warmup), duration_text(s.duration)));
  }
}

}  // namespace

const std::vector<ParamDecl>& scenario_params() {
  static const std::vector<ParamDecl> decls = [] {
    const ScenarioParams d;
    return std::vector<ParamDecl>{
        {"name", "string", "file stem", "the scenario's name in reports"},
        {"duration", "duration > 0", duration_text(d.duration), "simulated time"},
        {"warmup", "duration < duration", duration_text(d.warmup), "metrics ignore [0, warmup)"},
        {"seed", "uint64", std::to_string(d.seed), "random seed"},
        {"pi_enabled", "bool", d.pi_enabled ? "true" : "false", "mutexes are rt_mutexes with priority inheritance"},
        {"platform", "map", "-", "the machine (see platform)"},
        {"kernel", "map", "-", "kernel version, tunables, features, overheads (see kernel)"},
        {"tasks", "list of tasks", "required", "the task set (see tasks[])"},
        {"cgroups", "list of cgroups", "[]", "cpu cgroups under the root '/' with their cpu.uclamp files and cpu weights (see cgroups[])"},
        {"workqueue", "map", "-", "workqueue subsystem tunables (see workqueue)"},
        {"workqueues", "list of workqueues", "[]", "alloc_workqueue() calls (see workqueues[])"},
        {"kthread_workers", "list of kthread_workers", "[]", "dedicated worker threads (see kthread_workers[])"},
        {"binder_procs", "list of binder processes", "[]",
         "binder server processes and their thread pools (see binder_procs[])"},
        {"devices", "list of devices", "[]", "GPUs and DRM schedulers, each by model (see devices[])"},
        {"pm_runtime", "map", "-", "devices under runtime PM and their pm_wq (see pm_runtime)"},
    };
  }();
  return decls;
}

std::vector<ParamSection> yaml_schema() {
  std::vector<ParamSection> sections = {
      {"(top level)", "a scenario file", &scenario_params()},
      {"platform", "the machine", &platform_params()},
      {"kernel", "kernel configuration", &kernel_params()},
      {"kernel.overheads", "overheads charged by the model (assumptions; 0 keeps schedules exact)",
       &overhead_params()},
      {"kernel.cpuidle", "idle states (models/kernel/cpuidle; the platform lists the states)", &cpuidle_params()},
      {"kernel.uclamp", "utilization clamping (models/kernel/sched/uclamp.h; tasks set uclamp_min / uclamp_max)",
       &uclamp_params()},
      {"cgroups[]", "one cpu cgroup: its clamps (CONFIG_UCLAMP_TASK_GROUP) and, with a cpu weight, its level of the fair hierarchy (CONFIG_FAIR_GROUP_SCHED)", &cgroup_params()},
      {"tasks[]", "one task description", &task_params()},
      {"tasks[].phases[]", "one phase", &phase_params()},
      {"events[]", "one event: a single-key map `kind: value`, or bare `yield` / `suspend`", &event_params()},
      {"timer", "value of a timer event", &timer_params()},
      {"wait", "value of a wait event", &wait_params()},
      {"uclamp", "value of a uclamp event", &uclamp_event_params()},
      {"cpu_uclamp", "value of a cpu_uclamp event: writes a group's cpu.uclamp files", &cpu_uclamp_event_params()},
      {"cpu_weight", "value of a cpu_weight event: writes a weighted group's cpu.weight or cpu.shares",
       &cpu_weight_event_params()},
      {"cpu_idle", "value of a cpu_idle event: writes a group's cpu.idle", &cpu_idle_event_params()},
      {"setscheduler", "value of a setscheduler event", &setscheduler_event_params()},
      {"setaffinity", "value of a setaffinity event, as a map", &setaffinity_event_params()},
  };
  for (const ParamSection& d : devices_schema()) sections.push_back(d);
  sections.push_back({"pm_runtime", "runtime PM (drivers/base/power/runtime.c, 6.12)", &pm_runtime_params()});
  sections.push_back({"pm_runtime.devices[]", "one device under runtime PM", &rpm_device_params()});
  sections.push_back({"rpm", "value of an rpm event", &rpm_event_params()});
  return sections;
}

std::string params_table_markdown(const std::vector<ParamDecl>& decls) {
  auto cell = [](const std::string& text) {
    std::string out;
    for (char c : text) {
      if (c == '|') out += '\\';
      out += c;
    }
    return out;
  };
  std::string out = "| key | type / unit | default | description |\n|---|---|---|---|\n";
  for (const ParamDecl& p : decls)
    out += fmt::format("| `{}` | {} | {} | {} |\n", p.key, cell(p.unit), cell(p.default_value), cell(p.description));
  return out + "\n";
}

std::string sections_markdown(const std::vector<ParamSection>& sections) {
  std::string out;
  for (const ParamSection& section : sections)
    out += fmt::format("#### `{}`: {}\n\n", section.path, section.summary) + params_table_markdown(*section.params);
  return out;
}

}  // namespace config

ScenarioParams load_scenario_yaml(std::string_view text, const std::string& name) {
  return config::load_scenario_node(config::parse_yaml_document(text, name), name);
}

// From a parsed tree: overlays (overlay.cc) edit the tree, then load it here.
namespace {
// A binder process's looper threads are binder:NAME_1 .. binder:NAME_N, and
// a kthread_worker's thread is its name; reports and metrics key on thread
// names (task: metrics, the per-task tables), so no task may take one.
void check_kernel_thread_names(const config::YamlDoc& doc, const YAML::Node& tasks, const ScenarioParams& s) {
  for (size_t i = 0; i < s.tasks.size(); ++i) {
    const TaskSpec& t = s.tasks[i];
    for (int n = 0; n < t.instances; ++n) {
      const std::string comm = t.thread_name(n);
      auto clash = [&](const std::string& what) {
        config::fail(doc, tasks[i]["name"], config::child_path(config::index_path("tasks", i), "name"),
                     fmt::format("task name '{}' is {}: thread names must be unique", comm, what));
      };
      for (const BinderProcParams& b : s.binder_procs)
        for (int k = 0; k < b.threads; ++k)
          if (comm == b.thread_name(k)) clash(fmt::format("a looper thread of binder process '{}'", b.name));
      for (const KthreadWorkerParams& k : s.kthread_workers)
        if (comm == k.name) clash("the thread of a kthread_worker (kthread_workers[].name)");
    }
  }
}
}  // namespace

ScenarioParams config::load_scenario_node(const YAML::Node& root, const std::string& name) {
  using namespace config;
  ScenarioParams s;
  s.source = name;
  YamlDoc doc{name, &s.warnings};
  // An experiment or sweep file given where a scenario belongs (schedlab
  // run): say which command runs it rather than list the scenario keys.
  if (root.IsMap() && root["scenario"] && !root["tasks"])
    fail(doc, root["scenario"], "scenario",
         root["grid"] ? "this is a sweep file ('scenario:' and 'grid:'): run it with 'schedlab sweep'"
                      : "this is an experiment file ('scenario:' and 'variants:'): run it with 'schedlab compare'");
  MapReader r(doc, root, "", scenario_params());
  r.require("tasks");
  s.name = std::filesystem::path(name).stem().string();
  r.read("name", s.name);
  r.read("duration", s.duration, Bound::kPositive);
  r.read("warmup", s.warmup, Bound::kNonNegative);
  check_warmup(r, s);
  r.read("seed", s.seed);
  r.read("pi_enabled", s.pi_enabled);
  if (auto n = r.find("platform")) s.platform = load_platform(doc, *n, "platform");
  if (auto n = r.find("kernel")) {
    s.kernel = load_kernel(doc, *n, "kernel");
    // A governor with nothing to choose from: cpuidle runs, but idle stays
    // one state 0 (the model says so too, for callers without a file).
    const YAML::Node cpuidle = (*n)["cpuidle"];
    if (s.kernel.cpuidle_governor != "none" && s.platform.clusters.empty() && cpuidle && cpuidle["governor"])
      warn(doc, cpuidle["governor"], "kernel.cpuidle.governor",
           fmt::format("governor '{}' has no idle states to choose from: this platform ({{cpus: N}}) lists none, "
                       "so idle stays a single state 0 (a platform file such as gs101 lists them)",
                       s.kernel.cpuidle_governor));
  }
  load_cgroups(doc, r, s);     // cgroups (cgroup_config.cc); tasks name them
  load_pm_runtime(doc, r, s);  // pm_runtime (pm_runtime_config.cc); displays refer to its devices
  load_devices(doc, r, s);  // workqueue, workqueues, kthread_workers, binder_procs, devices (devices_config.cc)
  const CallTargets targets = call_targets(s);
  s.tasks = load_tasks(doc, *r.find("tasks"), "tasks", s.platform, s.kernel, &targets);
  check_kernel_thread_names(doc, *r.find("tasks"), s);
  return s;
}

ScenarioParams load_scenario_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path, 0, 0, "", fmt::format("cannot read file: {}", std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw ConfigError(path, 0, 0, "", "cannot read file: read error");
  if (config::is_json_path(path)) return import_rtapp_json(text.str(), path);
  return load_scenario_yaml(text.str(), path);
}

std::string yaml_schema_markdown() { return config::sections_markdown(config::yaml_schema()); }

}  // namespace schedlab
