// Typed parameters of the runtime PM model (pm_runtime.h) and the calls
// tasks make into it. Built by models/config/pm_runtime_config.cc from the
// scenario's `pm_runtime:` section and `rpm:` events.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/time.h"

namespace schedlab {

struct RpmDeviceParams {
  std::string name;
  std::string parent;                  // "" = none (e.g. the GPU's power domain, a genpd)
  bool use_autosuspend = true;         // pm_runtime_use_autosuspend()
  Time autosuspend_delay = Time::ms(100);  // pm_runtime_set_autosuspend_delay(); < 0: held active (a usage reference)
  bool ignore_children = false;        // pm_suspend_ignore_children()
  bool start_active = false;           // status at boot (with usage count 0 it will autosuspend)
  // The driver's callbacks: CPU work (capacity time at 1024 and f_max), then
  // an uninterruptible wait for the hardware (0 = none).
  Time suspend_cost = Time::us(50);
  Time suspend_wait;
  Time resume_cost = Time::us(50);
  Time resume_wait;
};

struct PmRuntimeParams {
  std::string workqueue = "pm";        // pm_wq
  std::vector<RpmDeviceParams> devices;
};

// The calls a task (or interrupt) makes (include/linux/pm_runtime.h).
enum class RpmApi : uint8_t {
  kGetSync,             // pm_runtime_get_sync():  usage++, rpm_resume(0)
  kResumeAndGet,        // pm_runtime_resume_and_get(): as get_sync (usage dropped on error)
  kGet,                 // pm_runtime_get():       usage++, rpm_resume(RPM_ASYNC)
  kPut,                 // pm_runtime_put():       usage--, rpm_idle(RPM_ASYNC) at 0
  kPutSync,             // pm_runtime_put_sync():  usage--, rpm_idle(0) at 0
  kPutAutosuspend,      // pm_runtime_put_autosuspend(): mark_last_busy (6.14 folds it in; 6.12 callers call it), usage--, rpm_suspend(RPM_ASYNC | RPM_AUTO) at 0
  kPutSyncAutosuspend,  // pm_runtime_put_sync_autosuspend(): usage--, rpm_suspend(RPM_AUTO) at 0
  kMarkLastBusy,        // pm_runtime_mark_last_busy()
};
const char* rpm_api_name(RpmApi a);  // "get_sync", "put_autosuspend", ...

}  // namespace schedlab
