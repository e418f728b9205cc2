// Builds a whole simulated machine from a ScenarioParams and runs it.
// This is the model's public face for experiments/: construct, attach
// observers (trace writers), run, read the RunResult.
#pragma once

#include <memory>

#include "models/kernel/sched/observer.h"
#include "models/metrics/run_result.h"
#include "models/scenario.h"

namespace schedlab {

class Kernel;
class WorkqueueSystem;
class DeviceCalls;
class PmRuntime;

class System {
 public:
  // Throws ModelError (models/errors.h) for parameters the model rejects.
  System(const ScenarioParams& params, uint64_t seed);
  ~System();
  void add_observer(SchedObserver* observer);
  // Count the kernel's decisions by reason in the measured window
  // (RunResult::decisions; `schedlab run --why`). Call before run().
  void count_decisions() { count_decisions_ = true; }
  void run();  // simulates [0, params.duration]
  RunResult result() const;
  Kernel& kernel();
  // Kernel execution contexts and devices; nullptr when the scenario has none.
  WorkqueueSystem* workqueues();
  DeviceCalls* device_calls();
  PmRuntime* pm_runtime();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  bool count_decisions_ = false;
};

}  // namespace schedlab
