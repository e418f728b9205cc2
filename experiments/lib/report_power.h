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

}  // namespace schedlab
