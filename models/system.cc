#include "models/system.h"

#include <fmt/format.h>

#include "models/errors.h"
#include "models/kernel/kernel.h"
#include "models/metrics/recorder.h"
#include "models/workload/rtapp_body.h"

namespace schedlab {

// Per-CPU power from the platform: busy power at each OPP (explicit
// opp power, else the device tree's C*V^2*f, as the EM holds it), the
// shallowest idle state's power while idle, and cluster static power.
static std::unique_ptr<PowerModel> make_power_model(const PlatformParams& platform) {
  if (platform.clusters.empty()) return nullptr;
  auto pm = std::make_unique<PowerModel>();
  int cpu = 0;
  for (const ClusterParams& c : platform.clusters) {
    PowerModel::Cluster cl;
    cl.name = c.name;
    cl.static_power_mw = c.static_power_mw;
    for (int i = 0; i < c.nr_cpus; ++i) {
      PowerModel::Cpu pc;
      pc.cluster = static_cast<int>(pm->clusters.size());
      for (const Opp& o : c.opps) {
        pc.opp_khz.push_back(o.freq_khz);
        pc.busy_power_mw.push_back(opp_dynamic_power_mw(o, c.dynamic_power_coefficient));
      }
      pc.idle_power_mw = c.cpu_idle_states.empty() ? 0.0 : c.cpu_idle_states.front().power_mw;
      cl.cpus.push_back(cpu++);
      pm->cpus.push_back(std::move(pc));
    }
    pm->clusters.push_back(std::move(cl));
  }
  return pm;
}

struct System::Impl {
  ScenarioParams params;
  uint64_t seed;
  std::unique_ptr<Kernel> kernel;
  std::unique_ptr<PowerModel> power;
  std::unique_ptr<RtAppWorld> world;
  std::unique_ptr<MetricsRecorder> recorder;
  std::vector<std::unique_ptr<RtAppBody>> bodies;
};

System::System(const ScenarioParams& params, uint64_t seed) : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.params = params;
  s.seed = seed;
  s.kernel = std::make_unique<Kernel>(s.params.kernel, s.params.platform);
  s.world = std::make_unique<RtAppWorld>(*s.kernel, s.params.pi_enabled);
  s.power = make_power_model(s.params.platform);
  s.recorder = std::make_unique<MetricsRecorder>(s.kernel->nr_cpus(), s.params.warmup, s.power.get());
  s.kernel->add_observer(s.recorder.get());
  // The frequencies the governors started at (power:cpu_frequency at t=0).
  for (const auto& d : s.kernel->freq_domains())
    for (int c : d.cpus) s.recorder->on_cpu_frequency(Time::zero(), c, d.cur_khz);
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
