#include "models/system.h"

#include <fmt/format.h>

#include "models/devices/display.h"
#include "models/devices/drm_sched.h"
#include "models/devices/gpu.h"
#include "models/errors.h"
#include "models/kernel/kernel.h"
#include "models/kernel/binder/binder.h"
#include "models/kernel/kthread_worker.h"
#include "models/kernel/pm_runtime/pm_runtime.h"
#include "models/kernel/workqueue/workqueue.h"
#include "models/metrics/recorder.h"
#include "models/metrics/rpm_frame_recorder.h"
#include "models/workload/device_calls.h"
#include "models/workload/rtapp_body.h"

namespace schedlab {

// Per-CPU power from the platform: busy power at each OPP (explicit
// opp power, else the device tree's C*V^2*f, as the EM holds it), the power
// of each idle state (the CPU's, then its cluster's, as cpu_idle numbers
// them), and cluster static power.
static std::unique_ptr<PowerModel> make_power_model(const PlatformParams& platform) {
  if (platform.clusters.empty()) return nullptr;
  auto pm = std::make_unique<PowerModel>();
  int cpu = 0;
  for (const ClusterParams& c : platform.clusters) {
    PowerModel::Cluster cl;
    cl.name = c.name;
    for (const Opp& o : c.opps) cl.static_power_mw.push_back(o.static_power_mw > 0 ? o.static_power_mw : c.static_power_mw);
    for (int i = 0; i < c.nr_cpus; ++i) {
      PowerModel::Cpu pc;
      pc.cluster = static_cast<int>(pm->clusters.size());
      for (const Opp& o : c.opps) {
        pc.opp_khz.push_back(o.freq_khz);
        pc.busy_power_mw.push_back(opp_dynamic_power_mw(o, c.dynamic_power_coefficient));
      }
      for (const IdleStateParams& st : c.cpu_idle_states) {
        pc.idle_state_power_mw.push_back(st.power_mw);
        if (c.bill_idle_transitions) {
          pc.entry_latency.push_back(st.entry_latency);
          pc.exit_latency.push_back(st.exit_latency);
        }
      }
      if (std::any_of(c.opps.begin(), c.opps.end(), [](const Opp& o) { return o.idle_power_mw > 0; }))
        for (const Opp& o : c.opps) pc.wfi_power_mw.push_back(o.idle_power_mw);
      pc.nr_cpu_states = std::max<size_t>(1, c.cpu_idle_states.size());
      if (c.cpu_idle_states.empty())
        pc.idle_state_power_mw.push_back(0.0);  // no states listed: idle is a state 0 of unknown power
      else
        for (const IdleStateParams& st : c.cluster_idle_states) pc.idle_state_power_mw.push_back(st.power_mw);
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
  // Kernel execution contexts and devices (only when the scenario has some).
  std::unique_ptr<RunnableTracker> tracker;
  std::unique_ptr<WorkqueueSystem> workqueues;
  std::vector<std::unique_ptr<KthreadWorker>> kthread_workers;
  std::vector<std::unique_ptr<BinderProc>> binder_procs;
  std::vector<std::unique_ptr<Gpu>> gpus;
  std::vector<std::unique_ptr<DrmGpuScheduler>> drm_scheds;
  std::unique_ptr<PmRuntime> pm_runtime;
  std::unique_ptr<RpmFrameRecorder> rpm_frames;  // with runtime PM or a display
  // After pm_runtime: destroyed first (their RpmCalls refer to it).
  std::vector<std::unique_ptr<DisplayPipeline>> displays;
  std::unique_ptr<DeviceCalls> calls;
  void build_exec_contexts();
};

// Workqueues, kthread_workers and devices, after the tasks (so adding them
// to a scenario leaves the tasks' pids unchanged); then every call event is
// checked against the names they registered.
void System::Impl::build_exec_contexts() {
  bool any_call = false;
  for (const TaskSpec& t : params.tasks)
    for (const PhaseSpec& ph : t.phases)
      for (const EventSpec& e : ph.events) any_call |= e.kind == EventSpec::Kind::kCall;
  if (!any_call && params.workqueue.workqueues.empty() && params.kthread_workers.empty() && params.devices.empty() &&
      params.pm_runtime.devices.empty() && params.binder_procs.empty())
    return;
  Kernel& k = *kernel;
  tracker = std::make_unique<RunnableTracker>();
  k.add_observer(tracker.get());
  workqueues = std::make_unique<WorkqueueSystem>(k, params.platform, params.workqueue, *tracker);
  calls = std::make_unique<DeviceCalls>(k);
  calls->set_workqueues(workqueues.get());
  for (const KthreadWorkerParams& kp : params.kthread_workers) {
    kthread_workers.push_back(std::make_unique<KthreadWorker>(k, kp, *tracker));
    calls->add_kthread_worker(*kthread_workers.back());
  }
  for (const BinderProcParams& bp : params.binder_procs) {
    binder_procs.push_back(std::make_unique<BinderProc>(k, bp));
    calls->add_binder_proc(*binder_procs.back());
    binder_procs.back()->set_peers([c = calls.get()](const std::string& name) { return c->binder_proc(name); });
  }
  auto find_gpu = [&](const std::string& name) -> Gpu* {
    for (auto& g : gpus)
      if (g->name() == name) return g.get();
    return nullptr;
  };
  auto find_worker = [&](const std::string& name) -> KthreadWorker* {
    for (auto& w : kthread_workers)
      if (w->name() == name) return w.get();
    return nullptr;
  };
  // Runtime PM and displays share one recorder, made by whichever needs it first.
  auto frame_recorder = [&]() -> RpmFrameRecorder& {
    if (!rpm_frames) {
      rpm_frames = std::make_unique<RpmFrameRecorder>(params.warmup);
      k.add_observer(rpm_frames.get());
    }
    return *rpm_frames;
  };
  if (!params.pm_runtime.devices.empty()) {
    // pm_wq: as the scenario declares it, else as Linux 6.12 allocates it
    // (kernel/power/main.c pm_start_workqueue(): alloc_workqueue("pm", WQ_FREEZABLE, 0)).
    Workqueue* pm_wq = workqueues->find(params.pm_runtime.workqueue);
    if (!pm_wq) {
      WorkqueueParams wp;
      wp.name = params.pm_runtime.workqueue;
      wp.flags = kWqFreezable;
      pm_wq = &workqueues->alloc_workqueue(wp);
    }
    pm_runtime = std::make_unique<PmRuntime>(k, *workqueues, *pm_wq, params.pm_runtime, *tracker);
    calls->set_pm_runtime(pm_runtime.get());
    for (const auto& d : pm_runtime->devices()) {  // the boot status (no event announces it)
      RpmEvent e;
      e.device = d->name();
      e.status = static_cast<int>(d->status());
      frame_recorder().on_rpm(Time::zero(), e);
    }
  }
  for (const DeviceParams& d : params.devices)
    if (const auto* g = std::get_if<GpuParams>(&d.params)) {
      KthreadWorker* retire = nullptr;
      if (!g->retire_worker.empty() && !(retire = find_worker(g->retire_worker)))
        throw ModelError(fmt::format("gpu '{}': unknown kthread_worker '{}'", d.name, g->retire_worker));
      gpus.push_back(std::make_unique<Gpu>(k, d.name, *g, seed, retire));
    }
  for (const DeviceParams& d : params.devices) {
    const auto* p = std::get_if<DrmSchedParams>(&d.params);
    if (!p) continue;
    auto bad = [&](const std::string& why) { throw ModelError(fmt::format("drm_sched '{}': {}", d.name, why)); };
    Gpu* gpu = find_gpu(p->gpu);
    if (!gpu) bad(fmt::format("unknown gpu '{}'", p->gpu));
    Workqueue* submit = nullptr;
    KthreadWorker* worker = nullptr;
    if (p->path == DrmSubmitPath::kWorkqueue) {
      submit = workqueues->find(p->submit_wq);
      if (!submit) bad(fmt::format("unknown submit_wq '{}'", p->submit_wq));
    } else {
      worker = find_worker(p->kthread_worker);
      if (!worker) bad(fmt::format("unknown kthread_worker '{}'", p->kthread_worker));
    }
    Workqueue* fence = nullptr;
    if (!p->fence_wq.empty() && !(fence = workqueues->find(p->fence_wq)))
      bad(fmt::format("unknown fence_wq '{}'", p->fence_wq));
    drm_scheds.push_back(
        std::make_unique<DrmGpuScheduler>(k, d.name, *p, *gpu, workqueues.get(), submit, worker, fence));
    calls->add_drm_scheduler(*drm_scheds.back());
  }
  for (const DeviceParams& d : params.devices) {
    const auto* p = std::get_if<DisplayParams>(&d.params);
    if (!p) continue;
    Gpu* gpu = nullptr;
    if (!p->gpu.empty() && !(gpu = find_gpu(p->gpu)))
      throw ModelError(fmt::format("display '{}': unknown gpu '{}'", d.name, p->gpu));
    auto workqueue = [&](const std::string& name) -> Workqueue* {
      if (name.empty()) return nullptr;
      if (Workqueue* wq = workqueues->find(name)) return wq;
      throw ModelError(fmt::format("display '{}': unknown workqueue '{}'", d.name, name));
    };
    auto kthread_worker = [&](const std::string& name) -> KthreadWorker* {
      if (name.empty()) return nullptr;
      if (KthreadWorker* w = find_worker(name)) return w;
      throw ModelError(fmt::format("display '{}': unknown kthread_worker '{}'", d.name, name));
    };
    auto binder = [&](const std::string& name) -> BinderProc* {
      if (name.empty()) return nullptr;
      if (BinderProc* b = calls->binder_proc(name)) return b;
      throw ModelError(fmt::format("display '{}': unknown binder process '{}'", d.name, name));
    };
    DisplayLinks links;
    links.wqs = workqueues.get();
    links.submit_wq = workqueue(p->gpu_submit_wq);
    links.commit_wq = workqueue(p->commit_wq);
    links.commit_worker = kthread_worker(p->commit_worker);
    links.frame_event_worker = kthread_worker(p->frame_event_worker);
    links.encoder_wq = workqueue(p->encoder_wq);
    links.vblank_wq = workqueue(p->vblank_wq);
    links.request_binder = binder(p->vsync_request_binder);
    links.inject_binder = binder(p->inject_binder);
    links.hw_vsync_binder = binder(p->hw_vsync_binder);
    frame_recorder();
    displays.push_back(std::make_unique<DisplayPipeline>(k, d.name, *p, gpu, pm_runtime.get(), seed, links));
  }
  world->set_calls(calls.get());
  for (const TaskSpec& t : params.tasks)
    for (const PhaseSpec& ph : t.phases)
      for (const EventSpec& e : ph.events)
        if (e.kind == EventSpec::Kind::kCall)
          if (std::string err = calls->check(e.call); !err.empty())
            throw ModelError(fmt::format("task {}: {}", t.name, err));
}

System::System(const ScenarioParams& params, uint64_t seed) : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.params = params;
  s.seed = seed;
  s.kernel = std::make_unique<Kernel>(s.params.kernel, s.params.platform);
  s.kernel->seed_sched_rng(seed);
  s.world = std::make_unique<RtAppWorld>(*s.kernel, s.params.pi_enabled);
  s.power = make_power_model(s.params.platform);
  s.recorder = std::make_unique<MetricsRecorder>(s.kernel->nr_cpus(), s.params.warmup, s.power.get());
  s.kernel->add_observer(s.recorder.get());
  // The frequencies the governors started at (counted as no change).
  for (const auto& d : s.kernel->freq_domains())
    for (int c : d.cpus) s.recorder->set_initial_frequency(c, d.cur_khz);
  for (const TaskSpec& spec : s.params.tasks) {
    // A setaffinity naming a CPU the platform lacks (an rt-app file run
    // on a smaller platform; YAML checks it on loading).
    for (const PhaseSpec& ph : spec.phases)
      for (const EventSpec& e : ph.events)
        if (e.kind == EventSpec::Kind::kSetAffinity)
          for (int c : e.cpus)
            if (c < 0 || c >= s.kernel->nr_cpus())
              throw ModelError(fmt::format("{}{}task {}: setaffinity: CPU {} does not exist (the platform has {} CPUs)",
                                           e.origin, e.origin.empty() ? "" : ": ", spec.name, c,
                                           s.kernel->nr_cpus()));
    for (int i = 0; i < spec.instances; ++i) {
      const std::string comm = spec.thread_name(i);
      Task& t = s.kernel->create_task(comm, spec.name, spec.policy, spec.nice, spec.rt_priority, spec.cpus,
                                      spec.kernel_thread);
      if (spec.slice) s.kernel->set_custom_slice(t, *spec.slice);
      if (spec.timer_slack) s.kernel->set_timer_slack(t, *spec.timer_slack);
      s.kernel->set_task_uclamp(t, spec.uclamp_min, spec.uclamp_max);
      s.kernel->sched_move_task(t, s.kernel->cpu_cgroup_index(spec.cgroup));
      auto body = std::make_unique<RtAppBody>(*s.world, spec, t);
      s.world->register_body(comm, body.get());
      s.kernel->set_body(t, body.get());
      s.kernel->start_task_at(t, spec.delay);
      s.bodies.push_back(std::move(body));
    }
  }
  s.build_exec_contexts();
}

System::~System() = default;

void System::add_observer(SchedObserver* observer) { impl_->kernel->add_observer(observer); }

void System::run() {
  // Stop at the window start so the recorder reads every task's work
  // counter there exactly (from a later callback it would have to assume
  // one rate since the window start).
  if (impl_->params.warmup > Time::zero() && impl_->params.warmup < impl_->params.duration) {
    impl_->kernel->run_until(impl_->params.warmup);
    impl_->recorder->start_window();
  }
  if (count_decisions_) impl_->kernel->start_decision_counts();
  impl_->kernel->run_until(impl_->params.duration);
  impl_->recorder->finish(impl_->params.duration);
}

RunResult System::result() const {
  RunResult r = impl_->recorder->result(impl_->seed, impl_->kernel->sim().events_dispatched());
  if (impl_->rpm_frames) impl_->rpm_frames->fill(r, impl_->params.duration);
  if (count_decisions_) r.decisions = impl_->kernel->decision_counts();
  return r;
}

PmRuntime* System::pm_runtime() { return impl_->pm_runtime.get(); }

Kernel& System::kernel() { return *impl_->kernel; }

WorkqueueSystem* System::workqueues() { return impl_->workqueues.get(); }

DeviceCalls* System::device_calls() { return impl_->calls.get(); }

}  // namespace schedlab
