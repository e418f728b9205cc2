// Records runtime PM sleeps and transitions (RpmEvent) and FrameTimeline
// classifications (FrameEvent) over the measured window, for the pm_wq
// study's rows: rpm_resume() D-state and waker wait per task group, device
// suspend/resume counts, app and SurfaceFlinger missed frames per run.
// A separate observer from MetricsRecorder so scenarios without devices
// pay nothing for it.
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "models/kernel/sched/observer.h"
#include "models/metrics/run_result.h"

namespace schedlab {

class RpmFrameRecorder final : public SchedObserver {
 public:
  explicit RpmFrameRecorder(Time warmup) : warmup_(warmup) {}
  void on_rpm(Time t, const RpmEvent& e) override;
  void on_frame(Time t, const FrameEvent& e) override;
  // Adds rpm_sleeps, rpm_devices and frames to `r` (window [warmup, end]).
  void fill(RunResult& r, Time end) const;

 private:
  struct DeviceState {
    int status = 2;      // RPM_SUSPENDED until told otherwise
    Time since;          // status held since (clamped to warmup)
    bool seen = false;
    RpmDeviceMetrics m;
  };
  Time warmup_;
  std::map<std::tuple<std::string, std::string, bool, bool>, RpmSleepMetrics> sleeps_;
  std::map<std::string, DeviceState, std::less<>> devices_;
  std::map<std::string, FrameMetrics, std::less<>> frames_;
};

}  // namespace schedlab
