// Tables for what the multi-core and kernel-context models add: energy and
// power per CPU, cluster and in total with OPP residency and migrations;
// work-item CPU wait per workqueue; DRM push -> run latency per entity.
// Values are means over runs; distributions pool every run's samples.
#pragma once

#include <string>

#include "experiments/lib/aggregate.h"

namespace schedlab {

// Empty strings when the runs have no power model / no workqueues / no DRM.
std::string render_power_tables(const RunSet& set);
std::string render_workqueue_table(const RunSet& set);
std::string render_drm_table(const RunSet& set);
// One line when some cluster's idle states have no power figure (idle
// then costs 0 mW and energy is running time only), else empty.
std::string idle_power_note(const RunResult& r);
// Runtime PM: D sleeps in rpm_resume()/rpm_suspend() per task group and
// device (all of them, and those woken by another context with the waker's
// runnable time), and each device's transitions. Empty without runtime PM.
std::string render_rpm_table(const RunSet& set);
// FrameTimeline per layer: frames, app / SurfaceFlinger missed, dropped, per run.
std::string render_frame_table(const RunSet& set);

}  // namespace schedlab
