// Factories of the scheduling classes (one .cc each).
#pragma once

#include <memory>

#include "models/kernel/sched/sched_class.h"

namespace schedlab {

std::unique_ptr<SchedClass> make_eevdf_class(Kernel& k);  // fair_eevdf.cc: Linux 6.6+ fair class
std::unique_ptr<SchedClass> make_cfs_class(Kernel& k);    // fair_cfs.cc: Linux 6.1 CFS
std::unique_ptr<SchedClass> make_dl_class(Kernel& k);     // deadline.cc: SCHED_DEADLINE (sugov:N kthreads)
std::unique_ptr<SchedClass> make_rt_class(Kernel& k);     // rt.cc
std::unique_ptr<SchedClass> make_idle_class(Kernel& k);   // idle.cc

}  // namespace schedlab
