// `devices[]` entries of model `display`: the display pipeline of one app
// layer (models/devices/display.h). Its gpu must be a gpu device of the
// scenario and its *_rpm names runtime PM devices (the `pm_runtime:`
// section is read before `devices:`).
#include <fmt/format.h>

#include <cmath>
#include <initializer_list>
#include <string_view>

#include "models/config/policy_names.h"
#include "models/config/yaml_loaders.h"

namespace schedlab::config {
namespace {

double as_frequency_hz(const YamlDoc& doc, const YAML::Node& node, const std::string& path) {
  std::string why;
  auto hz = node.IsScalar() ? parse_frequency_hz(node.Scalar(), &why) : std::nullopt;
  if (!hz) fail(doc, node, path, fmt::format("expected a frequency such as 120Hz, got {}", describe_node(node)));
  return *hz;
}

DisplayThreadParams load_thread(const YamlDoc& doc, const YAML::Node& node, const std::string& path,
                                DisplayThreadParams t, int cpus, const KernelParams& kernel) {
  MapReader r(doc, node, path, display_thread_params());
  load_thread_comm(r, t.comm);
  load_thread_policy(r, t.policy, t.nice, t.rt_priority, "thread");
  if (auto n = r.find("cpus")) t.cpus = load_cpu_list(doc, *n, r.path("cpus"), cpus);
  load_task_cgroup(doc, r, kernel, t.cgroup);
  return t;
}

// A PID gain: a number >= 0 (the power HAL's AdpfConfig doubles).
double read_gain(const MapReader& r, const char* key, double value) {
  const auto n = r.find(key);
  if (!n) return value;
  try {
    value = n->as<double>();
  } catch (const YAML::Exception&) {
    fail(r.doc(), *n, r.path(key), fmt::format("expected a number >= 0, got {}", describe_node(*n)));
  }
  if (!(value >= 0) || value > 1e6) fail(r.doc(), *n, r.path(key), "expected a number in 0..1000000");
  return value;
}

// The power HAL profile's keys, shared by HWUI's and SurfaceFlinger's
// sessions.
AdpfParams load_adpf_profile(MapReader& r, const KernelParams& kernel) {
  const YamlDoc& doc = r.doc();
  if (!kernel.uclamp)
    r.fail_here("ADPF writes the threads' uclamp_min: it needs kernel.uclamp.enabled: true (CONFIG_UCLAMP_TASK)");
  AdpfParams a;
  for (auto [key, out] : {std::pair{"uclamp_init", &a.uclamp_init}, {"uclamp_high", &a.uclamp_high},
                          {"uclamp_low", &a.uclamp_low}}) {
    int v = static_cast<int>(*out);
    r.read(key, v, 0, 1024);
    *out = static_cast<uint32_t>(v);
  }
  if (a.uclamp_low > a.uclamp_high)
    fail(doc, *r.find(r.has("uclamp_low") ? "uclamp_low" : "uclamp_high"),
         r.path(r.has("uclamp_low") ? "uclamp_low" : "uclamp_high"),
         fmt::format("uclamp_low {} is above uclamp_high {}", a.uclamp_low, a.uclamp_high));
  a.p_over = read_gain(r, "pid_p_over", a.p_over);
  a.p_under = read_gain(r, "pid_p_under", a.p_under);
  a.d_over = read_gain(r, "pid_d_over", a.d_over);
  a.d_under = read_gain(r, "pid_d_under", a.d_under);
  a.stale_time_factor = read_gain(r, "stale_time_factor", a.stale_time_factor);
  if (!(a.stale_time_factor > 0)) fail(doc, *r.find("stale_time_factor"), r.path("stale_time_factor"), "must be > 0");
  return a;
}

AdpfParams load_adpf(const YamlDoc& doc, const YAML::Node& node, const std::string& path, const KernelParams& kernel) {
  MapReader r(doc, node, path, display_adpf_params());
  AdpfParams a = load_adpf_profile(r, kernel);
  r.read("reporting_rate_limit", a.reporting_rate_limit, Bound::kNonNegative);
  r.read("target_cpu_percent", a.target_cpu_percent, 1, 100);
  std::string batching = a.batching == AdpfBatching::kAndroid14 ? "android14" : "android13";
  r.read_choice("batching", batching, {"android13", "android14"});
  a.batching = batching == "android14" ? AdpfBatching::kAndroid14 : AdpfBatching::kAndroid13;
  return a;
}

AdpfParams load_sf_adpf(const YamlDoc& doc, const YAML::Node& node, const std::string& path,
                        const KernelParams& kernel) {
  MapReader r(doc, node, path, display_sf_adpf_params());
  AdpfParams a = load_adpf_profile(r, kernel);
  a.batching = AdpfBatching::kSurfaceFlinger;
  r.read("report_timeout", a.sf_report_timeout, Bound::kNonNegative);
  r.read("allowed_actual_deviation", a.sf_allowed_deviation, Bound::kNonNegative);
  return a;
}

}  // namespace

DisplayParams load_display(const MapReader& r, const std::vector<std::string>& gpus, const ScenarioParams& s) {
  const YamlDoc& doc = r.doc();
  const int cpus = platform_nr_cpus(s.platform);
  DisplayParams p;
  if (auto n = r.find("refresh_rate")) {
    p.refresh_hz = as_frequency_hz(doc, *n, r.path("refresh_rate"));
    if (!(p.refresh_hz >= 1 && p.refresh_hz <= 1000))
      fail(doc, *n, r.path("refresh_rate"), "expected a refresh rate in 1Hz..1000Hz, e.g. 120Hz");
  }
  r.read("app_duration", p.app_duration);
  r.read("sf_duration", p.sf_duration);
  r.read("start_delay", p.start_delay);
  r.read("animation", p.animation, Bound::kPositive);
  if (p.animation.count() < std::llround(1e9 / p.refresh_hz)) {
    // Named at the animation if given, else at the refresh rate that made
    // the default one too short.
    const auto n = r.find("animation");
    const bool given = n.has_value();
    fail(doc, given ? *n : *r.find("refresh_rate"), r.path(given ? "animation" : "refresh_rate"),
         fmt::format("an animation must last at least one vsync period ({:.3f} ms at {} Hz), got {}{}",
                     1e3 / p.refresh_hz, p.refresh_hz, duration_text(p.animation),
                     given ? "" : " (the default 'animation'): set a longer animation"));
  }
  r.read("gap", p.gap);
  r.read("cycles", p.cycles, -1, 1'000'000);
  if (auto n = r.find("idle_frame_interval"))
    p.idle_frame_interval = load_distribution(doc, *n, r.path("idle_frame_interval"));
  r.read("layer", p.layer);
  if (auto n = r.find("ui_thread")) p.ui_thread = load_thread(doc, *n, r.path("ui_thread"), p.ui_thread, cpus, s.kernel);
  if (auto n = r.find("render_thread"))
    p.render_thread = load_thread(doc, *n, r.path("render_thread"), p.render_thread, cpus, s.kernel);
  if (auto n = r.find("sf_thread")) p.sf_thread = load_thread(doc, *n, r.path("sf_thread"), p.sf_thread, cpus, s.kernel);
  if (auto n = r.find("ui_cost")) p.ui_cost = load_distribution(doc, *n, r.path("ui_cost"));
  if (auto n = r.find("first_ui_cost")) p.first_ui_cost = load_distribution(doc, *n, r.path("first_ui_cost"));
  if (auto n = r.find("render_cost")) p.render_cost = load_distribution(doc, *n, r.path("render_cost"));
  if (auto n = r.find("gpu_time")) p.gpu_time = load_distribution(doc, *n, r.path("gpu_time"));
  if (auto n = r.find("sf_cost")) p.sf_cost = load_distribution(doc, *n, r.path("sf_cost"));
  if (auto n = r.find("commit_cost")) p.commit_cost = load_distribution(doc, *n, r.path("commit_cost"));
  // Keys that only mean something when `ok`: each one given is an error
  // saying what it needs.
  auto keys_need = [&](std::initializer_list<const char*> keys, bool ok, std::string_view need) {
    if (ok) return;
    for (const char* key : keys)
      if (r.has(key)) fail(doc, *r.find(key), r.path(key), fmt::format("{} needs {}", key, need));
  };
  auto is_none = [&](const char* key) {
    const auto n = r.find(key);
    return n && n->IsScalar() && n->Scalar() == "none";
  };
  r.read("vsync_threads", p.vsync_threads);
  keys_need({"timer_dispatch_thread", "app_event_thread", "timer_dispatch_cost", "app_event_cost"}, p.vsync_threads,
            "vsync_threads: true");
  if (auto n = r.find("timer_dispatch_thread"))
    p.timer_dispatch_thread = load_thread(doc, *n, r.path("timer_dispatch_thread"), p.timer_dispatch_thread, cpus, s.kernel);
  if (auto n = r.find("app_event_thread"))
    p.app_event_thread = load_thread(doc, *n, r.path("app_event_thread"), p.app_event_thread, cpus, s.kernel);
  r.read("timer_dispatch_cost", p.timer_dispatch_cost, Bound::kNonNegative);
  r.read("app_event_cost", p.app_event_cost, Bound::kNonNegative);
  if (r.has("vsync_request_binder")) {
    if (!p.vsync_threads)
      fail(doc, *r.find("vsync_request_binder"), r.path("vsync_request_binder"),
           "vsync_request_binder needs vsync_threads: true");
    p.vsync_request_binder = ref_name(doc, r, "vsync_request_binder", call_targets(s).binder_procs, "binder process");
  }
  if (r.has("vsync_request_cost") && p.vsync_request_binder.empty())
    fail(doc, *r.find("vsync_request_cost"), r.path("vsync_request_cost"),
         "vsync_request_cost needs vsync_request_binder: NAME");
  r.read("vsync_request_cost", p.vsync_request_cost, Bound::kNonNegative);
  r.read("hw_vsync_resync", p.hw_vsync_resync);
  if (p.hw_vsync_resync && !p.vsync_threads)
    fail(doc, *r.find("hw_vsync_resync"), r.path("hw_vsync_resync"),
         "hw_vsync_resync needs vsync_threads: true (the resync comes with the app's vsync requests)");
  keys_need({"hw_vsync_ignore_delay", "hw_vsync_samples", "hw_vsync_predictor_trained", "hw_vsync_thread",
             "hw_vsync_event_cost",
             "hw_vsync_callback_cost", "hw_vsync_toggle_cost"},
            p.hw_vsync_resync, "hw_vsync_resync: true");
  if (!is_none("hw_vsync_binder"))
    keys_need({"hw_vsync_binder"}, p.hw_vsync_resync, "hw_vsync_resync: true (or set hw_vsync_binder: none)");
  r.read("hw_vsync_ignore_delay", p.hw_vsync_ignore_delay, Bound::kNonNegative);
  r.read("hw_vsync_samples", p.hw_vsync_samples, 1, 1000);
  r.read("hw_vsync_predictor_trained", p.hw_vsync_predictor_trained);
  if (auto n = r.find("hw_vsync_thread"))
    p.hw_vsync_thread = load_thread(doc, *n, r.path("hw_vsync_thread"), p.hw_vsync_thread, cpus, s.kernel);
  r.read("hw_vsync_event_cost", p.hw_vsync_event_cost, Bound::kNonNegative);
  if (r.has("hw_vsync_binder") && !is_none("hw_vsync_binder"))
    p.hw_vsync_binder = ref_name(doc, r, "hw_vsync_binder", call_targets(s).binder_procs, "binder process");
  if (r.has("hw_vsync_callback_cost") && p.hw_vsync_binder.empty())
    fail(doc, *r.find("hw_vsync_callback_cost"), r.path("hw_vsync_callback_cost"),
         "hw_vsync_callback_cost needs hw_vsync_binder: NAME");
  r.read("hw_vsync_callback_cost", p.hw_vsync_callback_cost, Bound::kNonNegative);
  r.read("hw_vsync_toggle_cost", p.hw_vsync_toggle_cost, Bound::kNonNegative);
  r.read("buffers", p.buffers, 2, 8);
  r.read("backpressure", p.backpressure);
  r.read("touch_irq_cpu", p.touch_irq_cpu, 0, cpus - 1);
  r.read("input_threads", p.input_threads);
  if (p.input_threads && !p.vsync_threads)
    fail(doc, *r.find("input_threads"), r.path("input_threads"), "input_threads needs vsync_threads: true");
  keys_need({"touch_report_rate", "touch_irq_thread", "input_reader_thread", "input_dispatcher_thread", "touch_irq_cost",
             "input_reader_cost", "input_dispatcher_cost", "input_finish_cost", "ui_input_cost", "ui_down_cost",
             "ui_up_cost", "input_resample_latency", "drag_draws", "input_source", "injector_thread", "inject_binder",
             "inject_step_delay", "inject_cost", "inject_server_cost", "inject_duration", "inject_sync_input",
             "inject_sync_cost", "sf_input_sync_cost"},
            p.input_threads, "input_threads: true");
  if (auto n = r.find("touch_report_rate")) {
    p.touch_report_hz = as_frequency_hz(doc, *n, r.path("touch_report_rate"));
    if (!(p.touch_report_hz >= 1 && p.touch_report_hz <= 10000))
      fail(doc, *n, r.path("touch_report_rate"), "expected a report rate in 1Hz..10000Hz, e.g. 120Hz");
  }
  if (auto n = r.find("touch_irq_thread"))
    p.touch_irq_thread = load_thread(doc, *n, r.path("touch_irq_thread"), p.touch_irq_thread, cpus, s.kernel);
  if (auto n = r.find("input_reader_thread"))
    p.input_reader_thread = load_thread(doc, *n, r.path("input_reader_thread"), p.input_reader_thread, cpus, s.kernel);
  if (auto n = r.find("input_dispatcher_thread"))
    p.input_dispatcher_thread =
        load_thread(doc, *n, r.path("input_dispatcher_thread"), p.input_dispatcher_thread, cpus, s.kernel);
  r.read("touch_irq_cost", p.touch_irq_cost, Bound::kNonNegative);
  r.read("input_reader_cost", p.input_reader_cost, Bound::kNonNegative);
  r.read("input_dispatcher_cost", p.input_dispatcher_cost, Bound::kNonNegative);
  r.read("input_finish_cost", p.input_finish_cost, Bound::kNonNegative);
  r.read("ui_input_cost", p.ui_input_cost, Bound::kNonNegative);
  r.read("ui_down_cost", p.ui_down_cost, Bound::kNonNegative);
  r.read("ui_up_cost", p.ui_up_cost, Bound::kNonNegative);
  r.read("input_resample_latency", p.input_resample_latency, Bound::kNonNegative);
  std::string drag = "input";
  r.read_choice("drag_draws", drag, {"input", "every_frame"});
  p.drag_draws_every_frame = drag == "every_frame";
  std::string source = "touch";
  r.read_choice("input_source", source, {"touch", "injected"});
  if (source == "injected") p.input_source = DisplayParams::InputSource::kInjected;
  const bool injected = p.input_source == DisplayParams::InputSource::kInjected;
  // Each path's own keys.
  keys_need({"touch_report_rate", "touch_irq_thread", "input_reader_thread", "touch_irq_cost", "input_reader_cost"},
            !injected, "input_source: touch (injected events never reach the kernel's input path)");
  keys_need({"injector_thread", "inject_step_delay", "inject_cost", "inject_server_cost", "inject_duration",
             "inject_sync_input", "inject_sync_cost", "sf_input_sync_cost"},
            injected, "input_source: injected");
  if (!is_none("inject_binder"))
    keys_need({"inject_binder"}, injected, "input_source: injected (or set inject_binder: none)");
  if (auto n = r.find("injector_thread"))
    p.injector_thread = load_thread(doc, *n, r.path("injector_thread"), p.injector_thread, cpus, s.kernel);
  if (r.has("inject_binder") && !is_none("inject_binder"))
    p.inject_binder = ref_name(doc, r, "inject_binder", call_targets(s).binder_procs, "binder process");
  r.read("inject_step_delay", p.inject_step_delay, Bound::kNonNegative);
  r.read("inject_cost", p.inject_cost, Bound::kNonNegative);
  r.read("inject_server_cost", p.inject_server_cost, Bound::kNonNegative);
  r.read("inject_duration", p.inject_duration, Bound::kNonNegative);
  r.read("inject_sync_input", p.inject_sync_input);
  keys_need({"inject_sync_cost", "sf_input_sync_cost"}, p.inject_sync_input, "inject_sync_input: true");
  r.read("inject_sync_cost", p.inject_sync_cost, Bound::kNonNegative);
  r.read("sf_input_sync_cost", p.sf_input_sync_cost, Bound::kNonNegative);
  if (auto n = r.find("adpf")) p.adpf = load_adpf(doc, *n, r.path("adpf"), s.kernel);
  if (auto n = r.find("sf_adpf")) p.sf_adpf = load_sf_adpf(doc, *n, r.path("sf_adpf"), s.kernel);
  keys_need({"update_imminent_timeout"}, p.adpf || p.sf_adpf, "adpf or sf_adpf (it wakes their sessions)");
  r.read("update_imminent_timeout", p.update_imminent_timeout, Bound::kNonNegative);
  if (r.has("gpu")) p.gpu = ref_name(doc, r, "gpu", gpus, "gpu");
  if (r.has("gpu_submit_wq")) {
    if (p.gpu.empty()) fail(doc, *r.find("gpu_submit_wq"), r.path("gpu_submit_wq"), "gpu_submit_wq needs gpu: NAME");
    p.gpu_submit_wq = ref_name(doc, r, "gpu_submit_wq", call_targets(s).workqueues, "workqueue");
    require_drm_sched_workqueues(r, "gpu_submit_wq", s.kernel.version);
  }
  r.read("run_job_cost", p.run_job_cost, Bound::kNonNegative);
  r.read("free_job_cost", p.free_job_cost, Bound::kNonNegative);
  std::vector<std::string> rpm;
  for (const auto& d : s.pm_runtime.devices) rpm.push_back(d.name);
  for (auto [key, out] : {std::pair{"gpu_rpm", &p.gpu_rpm}, {"ui_rpm", &p.ui_rpm}, {"display_rpm", &p.display_rpm},
                          {"touch_rpm", &p.touch_rpm}})
    if (r.has(key)) *out = is_none(key) ? "" : ref_name(doc, r, key, rpm, "runtime PM device");
  if (r.has("commit_wq") && !is_none("commit_wq"))
    p.commit_wq = ref_name(doc, r, "commit_wq", call_targets(s).workqueues, "workqueue");
  if (r.has("commit_worker") && !is_none("commit_worker"))
    p.commit_worker = ref_name(doc, r, "commit_worker", call_targets(s).kthread_workers, "kthread_worker");
  if (!p.commit_wq.empty() && !p.commit_worker.empty())
    fail(doc, *r.find("commit_worker"), r.path("commit_worker"),
         "give commit_wq (mainline drm/msm) or commit_worker (downstream SDE), not both; set the other to none");
  keys_need({"commit_ioctl_cost"}, !p.commit_wq.empty() || !p.commit_worker.empty(), "commit_wq or commit_worker");
  r.read("commit_ioctl_cost", p.commit_ioctl_cost, Bound::kNonNegative);
  keys_need({"crtc_holds_display_rpm"}, !p.display_rpm.empty(), "display_rpm: NAME");
  r.read("crtc_holds_display_rpm", p.crtc_holds_display_rpm);
  keys_need({"idle_pc_delay", "idle_pc_cost"}, !p.commit_worker.empty() && !p.display_rpm.empty(),
            "commit_worker (downstream SDE) and display_rpm");
  r.read("idle_pc_delay", p.idle_pc_delay, Bound::kNonNegative);
  r.read("idle_pc_cost", p.idle_pc_cost, Bound::kNonNegative);
  if (p.idle_pc_cost > Time::zero() && p.idle_pc_delay <= Time::zero())
    fail(doc, *r.find("idle_pc_cost"), r.path("idle_pc_cost"), "idle_pc_cost needs idle_pc_delay > 0");
  if (p.idle_pc_delay > Time::zero() && p.crtc_holds_display_rpm)
    fail(doc, *r.find("idle_pc_delay"), r.path("idle_pc_delay"),
         "idle_pc_delay needs crtc_holds_display_rpm: false (a held reference would keep the display resumed; "
         "SDE's encoder holds its own)");
  const bool nonblocking = !p.commit_wq.empty() || !p.commit_worker.empty();
  if (r.has("frame_event_worker") && !is_none("frame_event_worker"))
    p.frame_event_worker =
        ref_name(doc, r, "frame_event_worker", call_targets(s).kthread_workers, "kthread_worker");
  if (!p.frame_event_worker.empty() && !nonblocking)
    fail(doc, *r.find("frame_event_worker"), r.path("frame_event_worker"),
         "frame_event_worker needs commit_wq or commit_worker (the frame events of the driver's commits)");
  keys_need({"frame_event_cost"}, !p.frame_event_worker.empty(), "frame_event_worker");
  r.read("frame_event_cost", p.frame_event_cost, Bound::kNonNegative);
  if (r.has("encoder_wq") && !is_none("encoder_wq"))
    p.encoder_wq = ref_name(doc, r, "encoder_wq", call_targets(s).workqueues, "workqueue");
  if (!p.encoder_wq.empty() && (p.commit_wq.empty() || p.frame_event_worker.empty()))
    fail(doc, *r.find("encoder_wq"), r.path("encoder_wq"),
         "encoder_wq (mainline DPU's encoder idle work) needs commit_wq and frame_event_worker");
  keys_need({"encoder_idle_timeout", "encoder_off_cost"}, !p.encoder_wq.empty(), "encoder_wq");
  r.read("encoder_idle_timeout", p.encoder_idle_timeout, Bound::kPositive);
  r.read("encoder_off_cost", p.encoder_off_cost, Bound::kNonNegative);
  if (r.has("vblank_wq") && !is_none("vblank_wq"))
    p.vblank_wq = ref_name(doc, r, "vblank_wq", call_targets(s).workqueues, "workqueue");
  if (!p.vblank_wq.empty() && p.commit_wq.empty())
    fail(doc, *r.find("vblank_wq"), r.path("vblank_wq"),
         "vblank_wq (drm/msm's vblank enable / disable work) needs commit_wq (mainline drm/msm's commit_tail())");
  keys_need({"vblank_work_cost"}, !p.vblank_wq.empty(), "vblank_wq");
  r.read("vblank_work_cost", p.vblank_work_cost, Bound::kNonNegative);
  r.read("display_irq_cpu", p.display_irq_cpu, 0, cpus - 1);
  r.read("encoder_vblank_irq", p.encoder_vblank_irq);
  if (p.encoder_vblank_irq && p.encoder_wq.empty() && p.vblank_wq.empty())
    fail(doc, *r.find("encoder_vblank_irq"), r.path("encoder_vblank_irq"),
         "encoder_vblank_irq needs encoder_wq or vblank_wq (the encoder's interrupt switches)");
  if (injected && !p.touch_rpm.empty())
    fail(doc, *r.find("touch_rpm"), r.path("touch_rpm"),
         "touch_rpm needs input_source: touch (injected events never reach the kernel's input handlers); "
         "set touch_rpm: none");
  return p;
}

const std::vector<ParamDecl>& display_thread_params() {
  static const std::vector<ParamDecl> decls = {
      {"comm", "string, no blanks", "see display", "the thread's name"},
      {"policy", kThreadPolicyChoices, "see display", "its policy"},
      {"nice", "int -20..19", "see display", "fair policies"},
      {"priority", "int 1..99", "see display", "SCHED_FIFO / SCHED_RR"},
      {"cpus", "CPU list", "all", "affinity"},
      {"cgroup", "a cgroups[] name, or /", "/", "the cpu cgroup it runs in"},
  };
  return decls;
}

const std::vector<ParamDecl>& display_params() {
  static const std::vector<ParamDecl> decls = [] {
    const DisplayParams d;
    std::vector<ParamDecl> v = device_common_params();
    v.insert(v.end(), {
        {"refresh_rate", "frequency", "120Hz", "vsync rate"},
        {"app_duration", "duration", "one period",
         "debug.sf.late.app.duration: the app wakes app_duration + sf_duration before present"},
        {"sf_duration", "duration", "period - 1ms", "debug.sf.late.sf.duration: SurfaceFlinger wakes this before present"},
        {"start_delay", "duration", duration_text(d.start_delay), "first animation starts"},
        {"animation", "duration > 0", duration_text(d.animation), "one animation window (shade open or collapse)"},
        {"gap", "duration", duration_text(d.gap), "idle time after each window"},
        {"cycles", "int, -1 = forever", std::to_string(d.cycles), "open + collapse cycles"},
        {"idle_frame_interval", "duration, or map (see service_time)", "none",
         "single redraws between animations at these intervals"},
        {"layer", "string", d.layer, "the layer's name in frame metrics (frames:LAYER.*)"},
        {"ui_thread", "map (see display thread)", "ndroid.systemui, SCHED_OTHER nice -10",
         "the app's UI thread (top-app boost)"},
        {"render_thread", "map (see display thread)", "RenderThread, SCHED_OTHER nice -10", "HWUI RenderThread"},
        {"sf_thread", "map (see display thread)", "surfaceflinger, SCHED_FIFO 2", "SurfaceFlinger's main thread"},
        {"vsync_threads", "bool", "false",
         "vsync reaches SF and the app through SurfaceFlinger's TimerDispatch and app EventThread threads; "
         "false: the timers wake them directly"},
        {"timer_dispatch_thread", "map (see display thread)", "TimerDispatch, SCHED_FIFO 2",
         "VSyncDispatch's timer thread (Scheduler/Timer.cpp)"},
        {"app_event_thread", "map (see display thread)", "app, SCHED_FIFO 2",
         "the app EventThread (Scheduler/EventThread.cpp)"},
        {"timer_dispatch_cost", "duration", duration_text(d.timer_dispatch_cost),
         "TimerDispatch CPU work per wake-up (capacity 1024, f_max)"},
        {"app_event_cost", "duration", duration_text(d.app_event_cost),
         "app EventThread CPU work per round: a vsync dispatched or suppressed, or a request taken (capacity 1024, "
         "f_max)"},
        {"vsync_request_binder", "binder process name", "none",
         "the UI thread's requestNextVsync() is a one-way binder call served by this process's pool (needs "
         "vsync_threads); none: the UI thread wakes the EventThread itself"},
        {"vsync_request_cost", "duration", duration_text(d.vsync_request_cost),
         "the binder thread's CPU work per request (capacity 1024, f_max)"},
        {"hw_vsync_resync", "bool", "false",
         "SurfaceFlinger's hardware-vsync resync (needs vsync_threads): an app vsync request more than "
         "hw_vsync_ignore_delay after the previous one turns hardware vsync on (SF's main thread calls the "
         "composer) until hw_vsync_samples vblank events have reached SF; the composer's event thread waits for "
         "each vblank (a vblank reference with vblank_wq)"},
        {"hw_vsync_ignore_delay", "duration", duration_text(d.hw_vsync_ignore_delay),
         "Scheduler::resync()'s kIgnoreDelay"},
        {"hw_vsync_samples", "int 1..1000", std::to_string(d.hw_vsync_samples),
         "samples the predictor takes before hardware vsync goes off (kMinimumSamplesForPrediction)"},
        {"hw_vsync_predictor_trained", "bool", "true",
         "SF's predictor has fitted a period (the screen has been on): a resync starts a period transition "
         "(present fences ignored until hw_vsync_samples samples); false: SF has just started (as after boot), the "
         "resync takes present fences and a fence of a sampled vblank makes the predictor start over"},
        {"hw_vsync_thread", "map (see display thread)", "SDM_EventThread, SCHED_FIFO 1",
         "the composer's DRM event thread (Qualcomm's display HAL, hw_events_drm.cpp)"},
        {"hw_vsync_event_cost", "duration", duration_text(d.hw_vsync_event_cost),
         "that thread's CPU work per vblank event (capacity 1024, f_max)"},
        {"hw_vsync_binder", "binder process name, or none", "none",
         "the composer's one-way onVsync() callback is served by this process's pool (SurfaceFlinger's hwbinder "
         "pool); none: the sample reaches SF with no thread of its own"},
        {"hw_vsync_callback_cost", "duration", duration_text(d.hw_vsync_callback_cost),
         "the pool thread's CPU work per callback (onComposerHalVsync(); capacity 1024, f_max)"},
        {"hw_vsync_toggle_cost", "duration", duration_text(d.hw_vsync_toggle_cost),
         "SF main thread's CPU work per hardware-vsync switch (the message, setVsyncEnabled() into the composer)"},
        {"ui_cost", "duration, or map (see service_time)", "lognormal 2.5ms", "UI thread CPU work per frame"},
        {"first_ui_cost", "duration, or map", "ui_cost", "UI work of an animation's first frame"},
        {"render_cost", "duration, or map", "lognormal 2ms", "RenderThread CPU work per frame"},
        {"gpu_time", "duration, or map", "lognormal 3ms", "GPU time per frame"},
        {"sf_cost", "duration, or map", "lognormal 1.5ms", "SurfaceFlinger composition CPU work"},
        {"commit_cost", "duration, or map", "lognormal 300us", "the display commit's CPU work"},
        {"buffers", "int 2..8", std::to_string(d.buffers), "BufferQueue buffers of the layer"},
        {"backpressure", "bool", d.backpressure ? "true" : "false",
         "SurfaceFlinger applies one buffer of the layer per frame (BLASTBufferQueue's eEnableBackpressure, Android "
         "12+): a late buffer is shown a vsync late; false: the newest due buffer is latched and older ones dropped"},
        {"gpu", "device name", "none", "gpu device rendering the frames (none: buffers ready at queueBuffer)"},
        {"gpu_rpm", "pm_runtime device, or none", "none", "RenderThread get_sync before submitting; put when the GPU retires the job"},
        {"gpu_submit_wq", "workqueue name", "none",
         "drm/msm: the DRM scheduler's run_job work there takes gpu_rpm (get_sync) and starts the job; "
         "none: RenderThread does"},
        {"run_job_cost", "duration", duration_text(d.run_job_cost), "run_job CPU work per job (capacity 1024, f_max)"},
        {"free_job_cost", "duration", duration_text(d.free_job_cost),
         "free_job CPU work per job on gpu_submit_wq, after its fence (capacity 1024, f_max)"},
        {"ui_rpm", "pm_runtime device, or none", "none", "UI thread get_sync / put_autosuspend around its work"},
        {"display_rpm", "pm_runtime device, or none", "none",
         "SurfaceFlinger get_sync / put_autosuspend around its commit; with commit_wq or commit_worker, the commit's "
         "get_sync / put_sync"},
        {"commit_wq", "workqueue name, or none", "none",
         "drm/msm's nonblocking atomic commit: SurfaceFlinger (the composer) waits for the previous commit's flip "
         "and its earliest present time, then its ioctl (commit_ioctl_cost) queues commit_tail() there "
         "(events_unbound: system_unbound_wq), which takes display_rpm (get_sync), runs commit_cost, sleeps until "
         "the flush latches at the next vsync, signals the present fence and puts display_rpm (put_sync); none: "
         "SurfaceFlinger commits itself"},
        {"commit_worker", "kthread_worker name, or none", "none",
         "Qualcomm's downstream SDE: the commit_wq steps run on this kthread_worker (SDE's crtc_commit:<id>, "
         "SCHED_FIFO 16 in its kthread_workers entry) and SurfaceFlinger's ioctl, after its CPU work, waits until "
         "the previous commit is done; give one of commit_wq and commit_worker"},
        {"commit_ioctl_cost", "duration", duration_text(d.commit_ioctl_cost),
         "SurfaceFlinger's part of a nonblocking commit: atomic check, prepare_planes, swap (capacity 1024, f_max)"},
        {"crtc_holds_display_rpm", "bool", "false",
         "the display_rpm reference held while the screen is on (mainline DPU: the active CRTC's, dpu_crtc_enable(); "
         "SDE: the encoder's, a video-mode panel keeping it), taken at the start (the device must start active), so "
         "each commit's get/put only counts"},
        {"idle_pc_delay", "duration", "0 (none)",
         "downstream SDE, command-mode panel (commit_worker, display_rpm): the encoder holds display_rpm from a "
         "kickoff; each kickoff re-arms its off work on commit_worker this long ahead "
         "(kthread_mod_delayed_work(); SDE's IDLE_POWERCOLLAPSE_DURATION is 58ms), which drops the reference "
         "(put_sync: the display suspends there if nothing else holds it)"},
        {"idle_pc_cost", "duration", "0", "the off work's CPU work before its put_sync (capacity 1024, f_max)"},
        {"frame_event_worker", "kthread_worker name, or none", "none",
         "the CRTC's frame event thread (crtc_event:<id>; mainline sched_set_fifo(): SCHED_FIFO 50, SDE: 16, in its "
         "kthread_workers entry): each frame done (the flush latched) queues one of the CRTC's 4 frame events "
         "there (needs commit_wq or commit_worker)"},
        {"frame_event_cost", "duration", duration_text(d.frame_event_cost),
         "CPU work of a frame event (dpu_crtc_frame_event_work(); capacity 1024, f_max)"},
        {"encoder_wq", "workqueue name, or none", "none",
         "mainline DPU's encoder idle work (has_idle_pc, video mode; needs commit_wq and frame_event_worker): a "
         "frame done with at most one frame pending queues the off work on this workqueue (the ordered \"msm\" "
         "one) encoder_idle_timeout ahead; each kickoff cancels it (cancel_delayed_work_sync() in the commit "
         "worker); the off work turns the encoder's interrupts off"},
        {"encoder_idle_timeout", "duration > 0", duration_text(d.encoder_idle_timeout),
         "the off work's delay (IDLE_TIMEOUT, dpu_encoder.h)"},
        {"encoder_off_cost", "duration", duration_text(d.encoder_off_cost),
         "CPU work of the off work (_dpu_encoder_irq_disable(); capacity 1024, f_max)"},
        {"vblank_wq", "workqueue name, or none", "none",
         "drm/msm's vblank interrupt control (needs commit_wq): commit_tail() holds a vblank reference from its "
         "flush to the latch; the get that finds vblank off, and the first vblank interrupt with no reference "
         "(vblank_disable_immediate), each queue an enable / disable work on this workqueue (priv->wq, the ordered "
         "\"msm\" one)"},
        {"vblank_work_cost", "duration", duration_text(d.vblank_work_cost),
         "CPU work of a vblank enable / disable work (vblank_ctrl_worker(); capacity 1024, f_max)"},
        {"display_irq_cpu", "int", std::to_string(d.display_irq_cpu),
         "CPU taking the display interrupt (vblank) that ends a commit's flush wait (commit_wq or commit_worker) and "
         "delivers the composer's vblank events (hw_vsync_resync)"},
        {"encoder_vblank_irq", "bool", "false",
         "the DPU encoder's vblank interrupt fires at every vsync while registered (its interrupts on, or drm's "
         "vblank on; needs encoder_wq or vblank_wq), waking display_irq_cpu; false: only where a latch, the "
         "composer's event or the vblank switch-off needs it"},
        {"touch_rpm", "pm_runtime device, or none", "none",
         "touch down (each animation's start): pm_runtime_get() from the interrupt; put_autosuspend at its end"},
        {"touch_irq_cpu", "int", std::to_string(d.touch_irq_cpu), "CPU taking the touch interrupt"},
        {"input_threads", "bool", "false",
         "the touch input path (needs vsync_threads): while a window is touched each report wakes the touch IRQ "
         "thread, InputReader, InputDispatcher, then the UI thread's Looper; false: the touch wakes the UI thread "
         "with no waker"},
        {"touch_report_rate", "frequency", "120Hz", "touch reports per second while touched (an assumption)"},
        {"touch_irq_thread", "map (see display thread)", "irq/touch, SCHED_FIFO 50, on touch_irq_cpu",
         "the touch controller's threaded interrupt handler (kernel/irq/manage.c)"},
        {"input_reader_thread", "map (see display thread)", "InputReader, SCHED_OTHER nice -8",
         "inputflinger's InputReader (InputThread.cpp: PRIORITY_URGENT_DISPLAY)"},
        {"input_dispatcher_thread", "map (see display thread)", "InputDispatcher, SCHED_OTHER nice -8",
         "inputflinger's InputDispatcher"},
        {"touch_irq_cost", "duration", duration_text(d.touch_irq_cost),
         "IRQ thread CPU work per report (capacity 1024, f_max; an assumption)"},
        {"input_reader_cost", "duration", duration_text(d.input_reader_cost),
         "InputReader CPU work per round (an assumption)"},
        {"input_dispatcher_cost", "duration", duration_text(d.input_dispatcher_cost),
         "InputDispatcher CPU work per round publishing motions (an assumption)"},
        {"input_finish_cost", "duration", duration_text(d.input_finish_cost),
         "InputDispatcher CPU work per round handling the app's finished signals (an assumption)"},
        {"ui_input_cost", "duration", duration_text(d.ui_input_cost),
         "UI thread CPU work reading the motions in its Looper, and a drag's doFrame() that consumes none and so "
         "draws nothing (its input callback alone) (an assumption)"},
        {"ui_down_cost", "duration", duration_text(d.ui_down_cost),
         "UI thread CPU work handling a touch-down at once, through its views (an assumption)"},
        {"ui_up_cost", "duration", duration_text(d.ui_up_cost),
         "UI thread CPU work handling an injected lift at once, with what is batched (an assumption)"},
        {"input_resample_latency", "duration", duration_text(d.input_resample_latency),
         "a frame's input callback takes the batched motions no later than its frame time minus this "
         "(InputConsumer's RESAMPLE_LATENCY, touch resampling on by default; 0: off)"},
        {"drag_draws", "input | every_frame", "input",
         "while a finger (or an injected swipe) holds the views, a frame draws only if its input moved them "
         "(input: a View or Compose list), or every vsync (every_frame: an app that animates per frame "
         "meanwhile, as SystemUI's notification shade with its blur)"},
        {"input_source", "touch | injected", "touch",
         "where the touches come from (needs input_threads): the touch controller's reports, or a UI test "
         "injecting them (UiAutomator swipes: a synchronous injection per step, no interrupt, no InputReader)"},
        {"injector_thread", "map (see display thread)", "instrumentation, SCHED_OTHER nice 0",
         "the UI test's thread (input_source: injected)"},
        {"inject_binder", "binder process name, or none", "none",
         "the process whose binder pool runs injectInputEvent() and waits for the app to finish the event "
         "(system_server's); none: the test's thread queues it and waits itself"},
        {"inject_step_delay", "duration", duration_text(d.inject_step_delay),
         "the test's sleep after each injected event (UiAutomator: MOTION_EVENT_INJECTION_DELAY_MILLIS)"},
        {"inject_duration", "duration", "the window",
         "how long each window's gesture injects, from the window's start (a fling's swipe is shorter than its "
         "animation); 0: the whole window"},
        {"inject_cost", "duration", duration_text(d.inject_cost),
         "the test thread's CPU work per injected event (an assumption)"},
        {"inject_server_cost", "duration", duration_text(d.inject_server_cost),
         "the binder thread's CPU work per injection, up to InputDispatcher's queue (an assumption)"},
        {"inject_sync_input", "bool", "true",
         "sync the input windows before each injected touch-down and after each lift, as "
         "UiAutomationConnection does (WindowManagerService.syncInputTransactions(): a binder call to "
         "inject_binder's process that waits for SurfaceFlinger's next commit)"},
        {"inject_sync_cost", "duration", duration_text(d.inject_sync_cost),
         "the binder thread's CPU work per input sync: surface placement, the input windows, the transaction "
         "(an assumption)"},
        {"sf_input_sync_cost", "duration", duration_text(d.sf_input_sync_cost),
         "SurfaceFlinger's main thread CPU work committing an input sync's transaction (an assumption)"},
        {"adpf", "map (see display adpf)", "none",
         "HWUI's ADPF hint session: the Pixel power HAL's PID moves the UI thread's and RenderThread's uclamp_min "
         "from each frame's work duration (needs kernel.uclamp.enabled)"},
        {"sf_adpf", "map (see display sf_adpf)", "none",
         "SurfaceFlinger's own ADPF hint session (Android 13 QPR1+, debug.sf.enable_adpf_cpu_hint): the PID moves "
         "its main thread's uclamp_min from each composited frame's estimated work against the vsync period "
         "(needs kernel.uclamp.enabled; the power HAL has one profile for all sessions: give adpf and sf_adpf "
         "the same profile keys)"},
        {"update_imminent_timeout", "duration", duration_text(d.update_imminent_timeout),
         "ro.surface_flinger.display_update_imminent_timeout_ms (AOSP's default; gs101 sets 50ms): a "
         "scheduleCommit() this long after the previous one sends DISPLAY_UPDATE_IMMINENT, which wakes stale hint "
         "sessions (with adpf or sf_adpf)"},
    });
    return v;
  }();
  return decls;
}

namespace {
// The power HAL profile's keys (load_adpf_profile()).
std::vector<ParamDecl> adpf_profile_decls() {
  const AdpfParams d;
  const auto num = [](double x) { return fmt::format("{:g}", x); };
  return std::vector<ParamDecl>{
        {"uclamp_init", "int 0..1024", std::to_string(d.uclamp_init),
         "UclampMin_Init: the threads' uclamp_min when the session starts (defaults: the Pixel 6's REFRESH_90FPS "
         "profile, Android 13)"},
        {"uclamp_high", "int 0..1024", std::to_string(d.uclamp_high), "UclampMin_High: the controller's ceiling"},
        {"uclamp_low", "int 0..1024", std::to_string(d.uclamp_low), "UclampMin_Low: its floor"},
        {"pid_p_over", "number >= 0", num(d.p_over), "PID_Po: P gain when a frame's work ran over the target"},
        {"pid_p_under", "number >= 0", num(d.p_under), "PID_Pu: P gain when it ran under"},
        {"pid_d_over", "number >= 0", num(d.d_over), "PID_Do: D gain when the error grew"},
        {"pid_d_under", "number >= 0", num(d.d_under), "PID_Du: D gain when it shrank"},
        {"stale_time_factor", "number > 0", num(d.stale_time_factor),
         "StaleTimeFactor: no report for this x the target sets the threads' uclamp_min to 0"},
  };
}
}  // namespace

const std::vector<ParamDecl>& display_adpf_params() {
  static const std::vector<ParamDecl> decls = [] {
    const AdpfParams d;
    std::vector<ParamDecl> v = adpf_profile_decls();
    v.insert(v.end(),
             {
                 {"reporting_rate_limit", "duration", "111111110ns",
                  "ReportingRateLimitNs, the preferred rate of libandroid's batching of reports under the target "
                  "(over it: sent at once)"},
                 {"batching", "android13 | android14", "android13",
                  "libandroid's batching: android13 (read in a fork taken for Android 13's, unconfirmed) holds a "
                  "report under the target while the last flush is within the rate; android14 sends every one for a "
                  "rate after first meeting the target, then one per rate"},
                 {"target_cpu_percent", "int 1..100", std::to_string(d.target_cpu_percent),
                  "HWUI's targetCpuTimePercentage: target = app_duration x this / 100"},
             });
    return v;
  }();
  return decls;
}

const std::vector<ParamDecl>& display_sf_adpf_params() {
  static const std::vector<ParamDecl> decls = [] {
    const AdpfParams d;
    std::vector<ParamDecl> v = adpf_profile_decls();
    v.insert(v.end(),
             {
                 {"report_timeout", "duration", duration_text(d.sf_report_timeout),
                  "PowerAdvisor's kStaleTimeout: a report goes out at once if the last one went longer ago"},
                 {"allowed_actual_deviation", "duration", duration_text(d.sf_allowed_deviation),
                  "debug.sf.allowed_actual_deviation: a report within this of the last one sent is held (0: only "
                  "an equal one)"},
             });
    return v;
  }();
  return decls;
}

}  // namespace schedlab::config
