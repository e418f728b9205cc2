// Typed parameters of a binder server process (models/kernel/binder/binder.h),
// built from a scenario's `binder_procs:` (models/config/devices_config.cc).
#pragma once

#include <string>
#include <vector>

#include "models/workload/task_spec.h"

namespace schedlab {

struct BinderProcParams {
  std::string name;       // the server process; its threads are binder:NAME_1 .. binder:NAME_N
  int threads = 1;        // binder looper threads in its pool: the grown pool, max_threads + those that joined (binder.h)
  int nice = 0;           // proc->default_priority: the nice of the process at open()
  // Its node's min_priority (flat_binder_object priority bits): 0 is a
  // process that disabled background scheduling (system_server does);
  // libbinder's default is 19. Mainline stores it as a u8, so a negative
  // value raises nothing there (binder.cc); the ACK takes it signed.
  int min_nice = 0;
  std::vector<int> cpus;  // the threads' affinity; empty = all CPUs
  // The Android Common Kernel's priority rules (binder_transaction_priority())
  // instead of mainline's nice-only rule, with its node flags.
  bool android = false;
  bool inherit_rt = false;             // FLAT_BINDER_FLAG_INHERIT_RT (android only)
  Policy min_policy = Policy::kNormal;  // node->sched_policy (android only; RT with min_rt_priority)
  int min_rt_priority = 0;             // node->min_priority for an RT min_policy, 1..99
  std::string cgroup;                  // the cpu cgroup its threads run in ("" = the root)

  // Looper thread i's name and the pool's task group: libbinder names its
  // threads binder:PID_N, N counting from 1 (the process name stands for PID).
  std::string group() const { return "binder:" + name; }
  std::string thread_name(int i) const { return group() + "_" + std::to_string(i + 1); }
};

}  // namespace schedlab
