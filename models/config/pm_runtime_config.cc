// The `pm_runtime:` section (devices under runtime PM, the pm_wq they use)
// and the `rpm:` event through which tasks call pm_runtime_*() on them.
// Cross references (a device's parent, an event's device) are checked here,
// with the valid names.
#include <fmt/format.h>

#include <algorithm>

#include "models/config/yaml_loaders.h"

namespace schedlab::config {
namespace {

struct ApiName {
  const char* name;
  RpmApi api;
};
const std::vector<ApiName>& rpm_api_table() {
  static const std::vector<ApiName> t = {
      {"get_sync", RpmApi::kGetSync},
      {"resume_and_get", RpmApi::kResumeAndGet},
      {"get", RpmApi::kGet},
      {"put", RpmApi::kPut},
      {"put_sync", RpmApi::kPutSync},
      {"put_autosuspend", RpmApi::kPutAutosuspend},
      {"put_sync_autosuspend", RpmApi::kPutSyncAutosuspend},
      {"mark_last_busy", RpmApi::kMarkLastBusy},
  };
  return t;
}
std::vector<std::string> rpm_api_names() {
  std::vector<std::string> v;
  for (const auto& a : rpm_api_table()) v.push_back(a.name);
  return v;
}

RpmDeviceParams load_device(const YamlDoc& doc, const YAML::Node& node, const std::string& path,
                            std::vector<std::string>& seen) {
  MapReader r(doc, node, path, rpm_device_params());
  RpmDeviceParams d;
  d.name = unique_name(doc, r, seen, "runtime PM device");
  r.read("parent", d.parent);
  r.read("use_autosuspend", d.use_autosuspend);
  r.read("autosuspend_delay", d.autosuspend_delay, Bound::kAny);
  r.read("ignore_children", d.ignore_children);
  r.read("start_active", d.start_active);
  r.read("suspend_cost", d.suspend_cost);
  r.read("suspend_wait", d.suspend_wait);
  r.read("resume_cost", d.resume_cost);
  r.read("resume_wait", d.resume_wait);
  return d;
}

}  // namespace

void load_pm_runtime(const YamlDoc& doc, const MapReader& top, ScenarioParams& s) {
  auto n = top.find("pm_runtime");
  if (!n) return;
  MapReader r(doc, *n, "pm_runtime", pm_runtime_params());
  r.read("workqueue", s.pm_runtime.workqueue);
  if (s.pm_runtime.workqueue.empty())
    fail(doc, *r.find("workqueue"), r.path("workqueue"), "expected a workqueue name (the kernel's is 'pm')");
  r.require("devices");
  const YAML::Node list = sequence(doc, *r.find("devices"), r.path("devices"), "runtime PM devices");
  std::vector<std::string> seen;
  for (size_t i = 0; i < list.size(); ++i)
    s.pm_runtime.devices.push_back(load_device(doc, list[i], index_path(r.path("devices"), i), seen));
  // Parents: known names, no cycles. A chain may reach a later device whose
  // parent is not checked yet: the walk stops at an unknown name, which that
  // device's own turn reports.
  for (size_t i = 0; i < list.size(); ++i) {
    const RpmDeviceParams& d = s.pm_runtime.devices[i];
    if (d.parent.empty()) continue;
    MapReader dr(doc, list[i], index_path(r.path("devices"), i), rpm_device_params());
    if (d.parent == d.name)
      fail(doc, *dr.find("parent"), dr.path("parent"), fmt::format("device '{}' cannot be its own parent", d.name));
    std::vector<std::string> others;
    for (const auto& o : seen)
      if (o != d.name) others.push_back(o);
    ref_name(doc, dr, "parent", others, "device");
    std::string at = d.parent;
    for (size_t hops = 0; !at.empty(); ++hops) {
      if (at == d.name || hops > seen.size())
        fail(doc, *dr.find("parent"), dr.path("parent"),
             fmt::format("device '{}' is its own ancestor (parent chain loops back to it)", d.name));
      auto it = std::find_if(s.pm_runtime.devices.begin(), s.pm_runtime.devices.end(),
                             [&](const RpmDeviceParams& p) { return p.name == at; });
      if (it == s.pm_runtime.devices.end()) break;
      at = it->parent;
    }
  }
}

EventSpec load_rpm_event(const YamlDoc& doc, const YAML::Node& node, const std::string& path,
                         const CallTargets* targets) {
  MapReader r(doc, node, path, rpm_event_params());
  EventSpec e;
  e.kind = EventSpec::Kind::kCall;
  CallSpec& c = e.call;
  c.op = CallSpec::Op::kRpm;
  r.require("op");
  r.require("device");
  std::string op;
  r.read_choice("op", op, rpm_api_names());
  for (const auto& a : rpm_api_table())
    if (op == a.name) c.rpm = a.api;
  if (targets)
    c.target = ref_name(doc, r, "device", targets->rpm_devices, "runtime PM device");
  else
    c.target = as_string(doc, *r.find("device"), r.path("device"));
  return e;
}

// ---------------------------------------------------------------- declarations

const std::vector<ParamDecl>& pm_runtime_params() {
  static const std::vector<ParamDecl> decls = [] {
    const PmRuntimeParams d;
    return std::vector<ParamDecl>{
        {"workqueue", "string", d.workqueue,
         "pm_wq: the workqueue async requests run on (declare it under workqueues to set its flags and nice)"},
        {"devices", "list of devices", "required", "devices under runtime PM (see pm_runtime.devices[])"},
    };
  }();
  return decls;
}

const std::vector<ParamDecl>& rpm_device_params() {
  static const std::vector<ParamDecl> decls = [] {
    const RpmDeviceParams d;
    return std::vector<ParamDecl>{
        {"name", "string, no blanks", "required", "the device's name"},
        {"parent", "device name", "none", "its parent (e.g. its power domain): resumed first, idled after"},
        {"use_autosuspend", "bool", d.use_autosuspend ? "true" : "false", "pm_runtime_use_autosuspend()"},
        {"autosuspend_delay", "duration", duration_text(d.autosuspend_delay),
         "pm_runtime_set_autosuspend_delay() (negative, with use_autosuspend: a usage reference holds the device active, as update_autosuspend())"},
        {"ignore_children", "bool", d.ignore_children ? "true" : "false", "pm_suspend_ignore_children()"},
        {"start_active", "bool", d.start_active ? "true" : "false", "runtime status at boot (else suspended)"},
        {"suspend_cost", "duration", duration_text(d.suspend_cost),
         "->runtime_suspend() CPU work (capacity time at 1024 and f_max)"},
        {"suspend_wait", "duration", duration_text(d.suspend_wait),
         "then an uninterruptible wait for the hardware inside the callback"},
        {"resume_cost", "duration", duration_text(d.resume_cost), "->runtime_resume() CPU work"},
        {"resume_wait", "duration", duration_text(d.resume_wait), "then a wait for the hardware (D)"},
    };
  }();
  return decls;
}

const std::vector<ParamDecl>& rpm_event_params() {
  static const std::vector<ParamDecl> decls = {
      {"op", join(rpm_api_names(), " | "), "required",
       "the pm_runtime_*() call; get_sync / resume_and_get / put_sync* run callbacks in the task"},
      {"device", "device name", "required", "a pm_runtime device"},
  };
  return decls;
}

}  // namespace schedlab::config
