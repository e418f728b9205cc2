#include "models/system.h"

#include <fmt/format.h>

#include "models/errors.h"
#include "models/kernel/kernel.h"
#include "models/metrics/recorder.h"
#include "models/workload/rtapp_body.h"

namespace schedlab {

struct System::Impl {
  ScenarioParams params;
  uint64_t seed;
  std::unique_ptr<Kernel> kernel;
  std::unique_ptr<RtAppWorld> world;
  std::unique_ptr<MetricsRecorder> recorder;
  std::vector<std::unique_ptr<RtAppBody>> bodies;
};

System::System(const ScenarioParams& params, uint64_t seed) : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.params = params;
  s.seed = seed;
  s.kernel = std::make_unique<Kernel>(s.params.kernel, s.params.platform.cpus);
  s.world = std::make_unique<RtAppWorld>(*s.kernel, s.params.pi_enabled);
  s.recorder = std::make_unique<MetricsRecorder>(s.params.platform.cpus, s.params.warmup);
  s.kernel->add_observer(s.recorder.get());
  for (const TaskSpec& spec : s.params.tasks) {
    for (int i = 0; i < spec.instances; ++i) {
      std::string comm = spec.instances > 1 ? fmt::format("{}-{}", spec.name, i) : spec.name;
      Task& t = s.kernel->create_task(comm, spec.name, spec.policy, spec.nice, spec.rt_priority, spec.cpus,
                                      spec.kernel_thread);
      if (spec.slice) s.kernel->set_custom_slice(t, *spec.slice);
      auto body = std::make_unique<RtAppBody>(*s.world, spec, t);
      s.world->register_body(comm, body.get());
      s.kernel->set_body(t, body.get());
      s.kernel->start_task_at(t, spec.delay);
      s.bodies.push_back(std::move(body));
    }
  }
}

System::~System() = default;

void System::add_observer(SchedObserver* observer) { impl_->kernel->add_observer(observer); }

void System::run() {
  impl_->kernel->run_until(impl_->params.duration);
  impl_->recorder->finish(impl_->params.duration);
}

RunResult System::result() const { return impl_->recorder->result(impl_->seed, impl_->kernel->sim().events_dispatched()); }

Kernel& System::kernel() { return *impl_->kernel; }

}  // namespace schedlab
