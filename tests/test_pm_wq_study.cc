// The pm_wq study's pieces end to end: the `pm_runtime:` section, `rpm:`
// events and `model: display` devices in YAML; the rpm: and frames:
// metrics and their pooled form; the shade-swipe scenario on both phones.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include "config_test_util.h"
#include "sched_test_util.h"
#include "experiments/lib/ftrace_writer.h"
#include "experiments/lib/metrics.h"
#include "experiments/lib/report_json.h"
#include "experiments/lib/report_power.h"
#include "experiments/lib/runner.h"
#include "models/config/config.h"
#include "models/kernel/kernel.h"
#include "models/kernel/pm_runtime/pm_runtime.h"
#include "models/system.h"

using namespace schedlab;
using namespace schedlab::testing;
using namespace schedlab::time_literals;

namespace {

// One CPU; a task takes the GPU with get_sync, works, drops it with
// put_autosuspend, sleeps; the GPU autosuspends 1 ms after the put.
const char* kRpmScenario =
    "duration: 100ms\n"
    "platform: {cpus: 1}\n"
    "pm_runtime:\n"
    "  devices:\n"
    "    - {name: gpu_pd, use_autosuspend: false, suspend_cost: 0us, resume_cost: 0us}\n"
    "    - {name: gpu, parent: gpu_pd, autosuspend_delay: 1ms, suspend_cost: 100us, suspend_wait: 0us,\n"
    "       resume_cost: 200us, resume_wait: 300us}\n"
    "tasks:\n"
    "  - name: app\n"
    "    loop: 1\n"
    "    events:\n"
    "      - rpm: {op: get_sync, device: gpu}\n"
    "      - run: 1ms\n"
    "      - rpm: {op: put_autosuspend, device: gpu}\n"
    "      - sleep: 50ms\n";

MetricName name_of(const std::string& text) {
  std::string why;
  auto n = parse_metric_name(text, &why);
  INFO(why);
  REQUIRE(n);
  return *n;
}

}  // namespace

TEST_CASE("pm_runtime devices and rpm events are checked with the valid names listed", "[pm_wq_study][config]") {
  ConfigError parent = error_of(
      "pm_runtime:\n  devices:\n    - {name: gpu, parent: gpu_pdd}\n    - {name: gpu_pd}\n"
      "tasks:\n  - name: t\n    events: [run: 1ms]\n");
  CHECK(parent.line() == 3);
  CHECK(parent.key_path() == "pm_runtime.devices[0].parent");
  CHECK_THAT(parent.message(), Catch::Contains("unknown device 'gpu_pdd'") && Catch::Contains("gpu_pd"));

  ConfigError loop = error_of(
      "pm_runtime:\n  devices:\n    - {name: a, parent: b}\n    - {name: b, parent: a}\n"
      "tasks:\n  - name: t\n    events: [run: 1ms]\n");
  CHECK_THAT(loop.message(), Catch::Contains("its own ancestor"));

  ConfigError op = error_of(
      "pm_runtime:\n  devices: [{name: gpu}]\n"
      "tasks:\n  - name: t\n    events:\n      - rpm: {op: get_sink, device: gpu}\n");
  CHECK(op.key_path() == "tasks[0].events[0].rpm.op");
  CHECK_THAT(op.message(), Catch::Contains("get_sync") && Catch::Contains("put_autosuspend"));

  ConfigError device = error_of(
      "pm_runtime:\n  devices: [{name: gpu}]\n"
      "tasks:\n  - name: t\n    events:\n      - rpm: {op: get_sync, device: gpuu}\n");
  CHECK_THAT(device.message(), Catch::Contains("unknown runtime PM device 'gpuu'") && Catch::Contains("gpu"));

  ConfigError display = error_of(
      "pm_runtime:\n  devices: [{name: gpu}]\n"
      "devices:\n  - {name: shade, model: display, gpu_rpm: gpuu}\n"
      "tasks:\n  - name: t\n    events: [run: 1ms]\n");
  CHECK(display.key_path() == "devices[0].gpu_rpm");
  CHECK_THAT(display.message(), Catch::Contains("'gpuu'") && Catch::Contains("gpu"));
}

TEST_CASE("A task's pm_runtime_get_sync() resumes the parent, then the device, in its own context",
          "[pm_wq_study]") {
  ScenarioParams p = load_scenario_yaml(kRpmScenario, "rpm.yaml");
  System sys(p, 1);
  sys.run();
  const RunResult r = sys.result();
  // The task's CPU time: the resume callback's 200 us, then 1 ms of work
  // (one CPU of capacity 1024: work = time).
  REQUIRE(r.tasks.size() >= 1);
  CHECK(r.tasks[0].name == "app");
  CHECK(r.tasks[0].cpu_time == 1200_us);
  // Its one D sleep inside rpm_resume(): the callback's 300 us hardware wait, woken by a timer.
  REQUIRE(r.rpm_sleeps.size() == 1);
  CHECK(r.rpm_sleeps[0].group == "app");
  CHECK(r.rpm_sleeps[0].device == "gpu");
  CHECK(r.rpm_sleeps[0].in_resume);
  CHECK_FALSE(r.rpm_sleeps[0].woken_by_task);
  CHECK(r.rpm_sleeps[0].d_state.values() == std::vector<int64_t>{300'000});
  // The device resumed once and suspended once (1 ms after the put, on
  // pm_wq), and its parent followed it: boot to 0 suspended, then active
  // from the get (0 + 200 us resume + 300 us wait... = 0.5 ms) to suspend.
  PmRuntime* pm = sys.pm_runtime();
  REQUIRE(pm);
  CHECK(pm->device("gpu")->status() == RpmStatus::kSuspended);
  CHECK(pm->device("gpu_pd")->status() == RpmStatus::kSuspended);
  for (const RpmDeviceMetrics& d : r.rpm_devices) {
    INFO(d.name);
    CHECK(d.resumes == 1);
    CHECK(d.suspends == 1);
  }
  // pm_runtime_work items: the gpu's autosuspend and the parent's idle request.
  bool found = false;
  for (const WorkQueueMetrics& w : r.workqueues)
    if (w.name == "pm") {
      found = true;
      CHECK(w.items == 2);
    }
  CHECK(found);
}

TEST_CASE("rpm: and frames: metrics read the run's sleeps and frames, per run and pooled", "[pm_wq_study][metrics]") {
  auto run_with = [](std::vector<int64_t> waits_us, uint64_t frames, uint64_t app_missed) {
    RunResult r;
    r.window_start = 0_s;
    r.window_end = 1_s;
    RpmSleepMetrics timer{"ndroid.systemui", "gpu", true, false, {}, {}};
    timer.d_state.add(500'000);  // the callback's own wait: not in resume_wait_*
    timer.waker_wait.add(0);
    RpmSleepMetrics woken{"ndroid.systemui", "gpu", true, true, {}, {}};
    for (int64_t w : waits_us) woken.d_state.add((w + 50) * 1000), woken.waker_wait.add(w * 1000);
    r.rpm_sleeps = {timer, woken};
    FrameMetrics f;
    f.layer = "NotificationShade";
    f.frames = frames;
    f.app_missed = app_missed;
    r.frames = {f};
    return r;
  };
  const RunResult a = run_with({100, 200, 300, 400}, 100, 1);
  const RunResult b = run_with({1000}, 120, 3);
  const RunMetrics ma(a);
  CHECK(*ma.value(name_of("rpm:ndroid.systemui.resume_wait_waker_wait.max")) == Approx(400));
  CHECK(*ma.value(name_of("rpm:ndroid.systemui/gpu.resume_wait_d_state.p50")) == Approx(300));  // 150..450: 300
  CHECK(*ma.value(name_of("rpm:ndroid.systemui.resume_d_state.max")) == Approx(500));  // every sleep
  CHECK(*ma.value(name_of("rpm:ndroid.systemui.resume_waits")) == 4);                 // woken by a task only
  CHECK(*ma.value(name_of("frames:NotificationShade.app_missed")) == 1);
  CHECK(*ma.value(name_of("frames:NotificationShade.app_missed_pct")) == Approx(1.0));
  CHECK_FALSE(ma.value(name_of("rpm:nobody.resume_waits")));
  // Pooled: the five waits of both runs together; counts per run.
  CHECK(*pooled_metric_value({a, b}, name_of("rpm:ndroid.systemui.resume_wait_waker_wait.max")) == Approx(1000));
  CHECK(*pooled_metric_value({a, b}, name_of("rpm:ndroid.systemui.resume_wait_waker_wait.p50")) == Approx(300));
  CHECK(*pooled_metric_value({a, b}, name_of("rpm:ndroid.systemui.resume_waits")) == Approx(2.5));
  CHECK(*pooled_metric_value({a, b}, name_of("frames:NotificationShade.app_missed")) == Approx(2.0));
  CHECK_FALSE(pooled_metric_value({a, b}, name_of("total.avg_power_mw")));
  // A bootstrap resample takes run r weights[r] times: the statistic of
  // that multiset, without pooling the samples again.
  const auto waker_p50 = PooledMetric::of({a, b}, name_of("rpm:ndroid.systemui.resume_wait_waker_wait.p50"));
  REQUIRE(waker_p50);
  CHECK(*waker_p50->value({2, 0}) == Approx(250));   // 100 100 200 200 | 300 300 400 400
  CHECK(*waker_p50->value({0, 2}) == Approx(1000));
  CHECK(*waker_p50->value({1, 3}) == Approx(400));   // 100 200 300 [400] 1000 1000 1000
  CHECK(*waker_p50->value({1, 1}) == *waker_p50->value());
  const auto waker_mean = PooledMetric::of({a, b}, name_of("rpm:ndroid.systemui.resume_wait_waker_wait.mean"));
  CHECK(*waker_mean->value({1, 3}) == Approx((1000.0 + 3000.0) / 7.0));
  const auto waker_max = PooledMetric::of({a, b}, name_of("rpm:ndroid.systemui.resume_wait_waker_wait.max"));
  CHECK(*waker_max->value({2, 0}) == Approx(400));
  const auto waits = PooledMetric::of({a, b}, name_of("rpm:ndroid.systemui.resume_waits"));
  CHECK(*waits->value({2, 0}) == Approx(4.0));       // per run
  CHECK(*waits->value({1, 3}) == Approx(7.0 / 4.0));
  const auto missed_pct = PooledMetric::of({a, b}, name_of("frames:NotificationShade.app_missed_pct"));
  CHECK(*missed_pct->value() == Approx(100.0 * 4.0 / 220.0));
  CHECK(*missed_pct->value({0, 2}) == Approx(2.5));  // 6 of 240
  const auto waits_ge_1ms = PooledMetric::of({a, b}, name_of("rpm:ndroid.systemui.resume_wait_waker_wait.ge_1ms"));
  CHECK(*waits_ge_1ms->value({0, 2}) == Approx(1.0));
  CHECK(*waits_ge_1ms->value({2, 0}) == Approx(0.0));
  CHECK_FALSE(PooledMetric::of({a, b}, name_of("task:ui.wakeup_latency.p99")));
}

TEST_CASE("A metric object may contain dots: the split is where a valid field follows", "[pm_wq_study][metrics]") {
  MetricName n = name_of("rpm:ndroid.systemui.resume_wait_d_state.p90");
  CHECK(n.object == "ndroid.systemui");
  CHECK(n.field == "resume_wait_d_state.p90");
  MetricName w = name_of("wq:pm.runnable_wait.ge_2ms");
  CHECK(w.object == "pm");
  CHECK(w.field == "runnable_wait.ge_2ms");
}

TEST_CASE("The shade swipe runs on both phones: frames, pm_wq work and conserved time", "[pm_wq_study]") {
  const std::string path = std::string(SCHEDLAB_SOURCE_DIR) + "/configs/scenarios/shade_swipe.yaml";
  auto platform = GENERATE(as<std::string>{}, "phone_a_8cpu", "phone_b_7cpu");
  auto highpri = GENERATE(false, true);
  std::vector<Overlay> o = {{"duration", "4s", {}}, {"platform", platform, {}}};
  if (highpri) o.push_back({"workqueues[pm].flags", "[WQ_FREEZABLE, WQ_UNBOUND, WQ_HIGHPRI]", {}});
  ScenarioParams p = load_scenario_with_overlays(path, o);
  const RunResult r = simulate_run(p, 7, {}, nullptr);
  INFO(platform << (highpri ? " WQ_HIGHPRI" : " nice 0"));
  CHECK(r.cpus.size() == (platform == "phone_a_8cpu" ? 8u : 7u));
  for (const CpuMetrics& c : r.cpus) CHECK(c.busy + c.idle == r.elapsed());
  // pm_runtime_work ran on pm_wq; its workers have the variant's nice.
  const WorkQueueMetrics* pm = nullptr;
  for (const WorkQueueMetrics& w : r.workqueues)
    if (w.name == "pm") pm = &w;
  REQUIRE(pm);
  CHECK(pm->items >= 4);  // the GPU's suspends (two windows and idle redraws in 4 s)
  // WQ_HIGHPRI gives pm_wq the unbound nice -20 pool (its workers are
  // kworker/uN:M like the nice 0 pool's, group kworkers/unbound-nice-20).
  // pm is the scenario's only WQ_HIGHPRI queue, so a nice -20 unbound
  // worker with CPU time ran pm_runtime_work; without the flag no unbound
  // worker has a nice other than 0.
  int highpri_workers = 0, highpri_workers_ran = 0;
  for (const TaskMetrics& t : r.tasks) {
    if (t.name.rfind("kworker/u", 0) != 0 || t.nice == 0) continue;
    INFO(t.name << " nice " << t.nice);
    CHECK(t.nice == -20);
    ++highpri_workers;
    if (t.cpu_time > Time::zero()) ++highpri_workers_ran;
  }
  if (highpri) {
    CHECK(highpri_workers >= 1);
    CHECK(highpri_workers_ran >= 1);
  } else {
    CHECK(highpri_workers == 0);
  }
  // Frames at 120 Hz during the animations.
  REQUIRE(r.frames.size() == 1);
  CHECK(r.frames[0].layer == "NotificationShade");
  // Two 350 ms windows at 120 Hz (42 vsyncs each), every vsync drawn
  // while the shade is held (drag_draws: every_frame: its blur animates),
  // and idle redraws; drawing only the frames its injected moves reach
  // (every other) would give about 23 a window.
  CHECK(r.frames[0].frames > 70);
  // The GPU suspended and resumed; the display (DPU) and its MDSS parent
  // never did: the active CRTC holds the DPU's reference.
  REQUIRE(r.rpm_devices.size() == 3);
  for (const RpmDeviceMetrics& d : r.rpm_devices) {
    INFO(d.name);
    if (d.name == "gpu") {
      CHECK(d.suspends >= 1);
      CHECK(d.resumes >= 1);
    } else {
      CHECK(d.suspends == 0);
      CHECK(d.resumes == 0);
    }
  }
  // drm/msm's commit_tail() ran on system_unbound_wq, once per frame at
  // least (input-window syncs commit too).
  const WorkQueueMetrics* unbound = nullptr;
  for (const WorkQueueMetrics& w : r.workqueues)
    if (w.name == "events_unbound") unbound = &w;
  REQUIRE(unbound);
  CHECK(unbound->items >= r.frames[0].frames);
}

TEST_CASE("schedlab run's runtime PM and frame tables are per run and pooled over runs", "[pm_wq_study][reports]") {
  RunSet set;
  for (int i = 0; i < 2; ++i) {
    RunResult r;
    r.window_start = 0_s;
    r.window_end = 2_s;
    RpmSleepMetrics s{"ndroid.systemui", "gpu", true, true, {}, {}};
    s.d_state.add((i + 1) * 400'000);  // 400 us and 800 us
    s.waker_wait.add((i + 1) * 300'000);
    r.rpm_sleeps = {s};
    r.rpm_devices = {{"gpu", 3, 3, 1_s}};
    FrameMetrics f;
    f.layer = "NotificationShade";
    f.frames = 200;
    f.app_missed = 2 * i;  // 0 and 2
    f.sf_missed = 1;
    f.janky = i == 0 ? 1 : 2;  // run 1: one frame missed both deadlines
    f.buffer_stuffing = 3 * i;  // 0 and 3
    r.frames = {f};
    set.runs.push_back(r);
  }
  const std::string rpm = render_rpm_table(set);
  INFO(rpm);
  // One sleep per run; P90 of {400, 800} = 760 us, waker wait P90 of {300, 600} = 570 us.
  CHECK_THAT(rpm, Catch::Contains("ndroid.systemui / gpu") && Catch::Contains("760.0") && Catch::Contains("570.0"));
  // 3 suspends per run; suspended 1 s of 2 s.
  CHECK_THAT(rpm, Catch::Matches("(.|\n)*gpu +3\\.0 +3\\.0 +50\\.0(.|\n)*"));
  const std::string frames = render_frame_table(set);
  INFO(frames);
  // 200 frames, 1 app miss, 1 SF miss and 1.5 stuffed frames per run, 3
  // janky frames in 400 (a frame missing both deadlines counts once): jank
  // 0.75%.
  CHECK_THAT(frames,
             Catch::Matches("(.|\n)*NotificationShade +200\\.0 +1\\.00 +1\\.00 +1\\.50 +0\\.00 +0\\.75(.|\n)*"));
  CHECK(render_frame_table(RunSet{}).empty());
}

TEST_CASE("The trace shows runtime PM status changes and FrameTimeline verdicts", "[pm_wq_study][trace]") {
  ScenarioParams p = load_scenario_yaml(kRpmScenario, "rpm.yaml");
  std::ostringstream out;
  {
    FtraceWriter w(out);
    simulate_run(p, 1, {&w}, nullptr);
  }
  const std::string text = out.str();
  // get_sync: the parent resumes first, then the device; the autosuspend on pm_wq.
  const size_t pd = text.find("rpm_status: gpu_pd status=RPM_ACTIVE");
  const size_t gpu = text.find("rpm_status: gpu status=RPM_ACTIVE");
  REQUIRE(pd != std::string::npos);
  REQUIRE(gpu != std::string::npos);
  CHECK(pd < gpu);
  CHECK_THAT(text, Catch::Contains("kworker/") && Catch::Contains("rpm_status: gpu status=RPM_SUSPENDED"));

  FrameEvent late;
  late.layer = "NotificationShade";
  late.app_missed = true;
  std::ostringstream frames;
  {
    FtraceWriter w(frames);
    w.on_frame(1_ms, late);
  }
  CHECK_THAT(frames.str(), Catch::Contains("tracing_mark_write: C|0|NotificationShade app_deadline_missed|1") &&
                               Catch::Contains("C|0|NotificationShade sf_deadline_missed|0"));
}

TEST_CASE("A display animation shorter than a vsync period is a configuration error at its key", "[pm_wq_study][config]") {
  ConfigError e = error_of(
      "devices:\n  - {name: shade, model: display, refresh_rate: 120Hz, animation: 5ms}\n"
      "tasks:\n  - name: t\n    events: [run: 1ms]\n");
  CHECK(e.line() == 2);
  CHECK(e.key_path() == "devices[0].animation");
  CHECK_THAT(e.message(), Catch::Contains("8.333 ms at 120 Hz"));
}

namespace {

// A scenario of `sections` (top-level YAML before `devices:`), the device
// list `devices` (each entry a "  - {...}" line, the display last) and one
// task; the display it loads, or the error it gives.
std::string display_scenario(const std::string& sections, const std::string& devices) {
  return sections + "devices:\n" + devices + "tasks:\n  - name: t\n    events: [run: 1ms]\n";
}
DisplayParams loaded_display(const std::string& sections, const std::string& devices) {
  const ScenarioParams p = load_scenario_yaml(display_scenario(sections, devices), "x.yaml");
  return std::get<DisplayParams>(p.devices.back().params);
}
// The error at `key_path`, saying `says`; returns its line.
int check_display_error(const std::string& sections, const std::string& devices, const std::string& key_path,
                        const std::string& says) {
  ConfigError e = error_of(display_scenario(sections, devices));
  CHECK(e.key_path() == key_path);
  CHECK_THAT(e.message(), Catch::Contains(says));
  return e.line();
}

}  // namespace

TEST_CASE("A display's vsync threads load from YAML, their settings only with vsync_threads: true",
          "[pm_wq_study][config]") {
  const DisplayParams d = loaded_display(
      "", "  - {name: shade, model: display, vsync_threads: true, app_event_cost: 5us,\n"
          "     timer_dispatch_thread: {cpus: [0]}}\n");
  CHECK(d.vsync_threads);
  CHECK(d.app_event_cost == Time::us(5));
  CHECK(d.timer_dispatch_cost == Time::us(10));
  CHECK(d.timer_dispatch_thread.comm == "TimerDispatch");
  CHECK(d.timer_dispatch_thread.policy == Policy::kFifo);
  CHECK(d.timer_dispatch_thread.rt_priority == 2);
  CHECK(d.timer_dispatch_thread.cpus == std::vector<int>{0});
  CHECK(d.app_event_thread.comm == "app");
  CHECK(check_display_error("", "  - {name: shade, model: display,\n     app_event_cost: 5us}\n",
                            "devices[0].app_event_cost", "needs vsync_threads: true") == 3);
}

TEST_CASE("A display's vsync request binder process must be a declared binder process, with vsync_threads",
          "[pm_wq_study][config]") {
  const DisplayParams d = loaded_display(
      "binder_procs:\n  - {name: surfaceflinger, threads: 4, android: true}\n",
      "  - {name: shade, model: display, vsync_threads: true, vsync_request_binder: surfaceflinger,\n"
      "     vsync_request_cost: 15us}\n");
  CHECK(d.vsync_request_binder == "surfaceflinger");
  CHECK(d.vsync_request_cost == Time::us(15));
  const std::string sf = "binder_procs:\n  - {name: surfaceflinger}\n";
  CHECK(check_display_error(sf, "  - {name: shade, model: display, vsync_threads: true, vsync_request_binder: sf}\n",
                            "devices[0].vsync_request_binder", "surfaceflinger") == 4);
  check_display_error(sf, "  - {name: shade, model: display, vsync_request_binder: surfaceflinger}\n",
                      "devices[0].vsync_request_binder", "needs vsync_threads: true");
  check_display_error("", "  - {name: shade, model: display, vsync_threads: true, vsync_request_cost: 5us}\n",
                      "devices[0].vsync_request_cost", "needs vsync_request_binder");
}

TEST_CASE("A display's input threads load from YAML, their settings only with input_threads: true",
          "[pm_wq_study][config][input]") {
  const DisplayParams d = loaded_display(
      "", "  - {name: shade, model: display, vsync_threads: true, input_threads: true, touch_report_rate: 240Hz,\n"
          "     input_reader_cost: 80us, ui_down_cost: 200us, input_dispatcher_thread: {nice: -4, cpus: [0]},\n"
          "     input_resample_latency: 0s}\n");
  CHECK(d.input_threads);
  CHECK(d.touch_report_hz == 240);
  CHECK(d.input_reader_cost == Time::us(80));
  CHECK(d.ui_down_cost == Time::us(200));
  CHECK(d.input_resample_latency == Time::zero());
  CHECK(d.input_dispatcher_cost == Time::us(100));
  CHECK(d.input_dispatcher_thread.comm == "InputDispatcher");
  CHECK(d.input_dispatcher_thread.nice == -4);
  CHECK(d.input_dispatcher_thread.cpus == std::vector<int>{0});
  CHECK(d.input_reader_thread.nice == -8);
  CHECK(d.touch_irq_thread.policy == Policy::kFifo);
  CHECK(d.touch_irq_thread.rt_priority == 50);
  CHECK(check_display_error("", "  - {name: shade, model: display, input_threads: true}\n",
                            "devices[0].input_threads", "needs vsync_threads: true") == 2);
  check_display_error("", "  - {name: shade, model: display, vsync_threads: true, ui_input_cost: 5us}\n",
                      "devices[0].ui_input_cost", "needs input_threads: true");
  check_display_error("",
                      "  - {name: shade, model: display, vsync_threads: true, input_threads: true,\n"
                      "     touch_report_rate: 0Hz}\n",
                      "devices[0].touch_report_rate", "1Hz..10000Hz");
}

TEST_CASE("A display's injected input loads from YAML, and each input source refuses the other's keys",
          "[pm_wq_study][config][input]") {
  const std::string ss = "binder_procs:\n  - {name: system_server, threads: 2}\n";
  const std::string inj = "  - {name: shade, model: display, vsync_threads: true, input_threads: true, ";
  const DisplayParams d =
      loaded_display(ss, inj + "input_source: injected,\n     inject_binder: system_server, inject_cost: 80us,\n"
                             "     inject_duration: 300ms}\n");
  CHECK(d.input_source == DisplayParams::InputSource::kInjected);
  CHECK(d.inject_binder == "system_server");
  CHECK(d.inject_cost == Time::us(80));
  CHECK(d.inject_server_cost == Time::us(50));
  CHECK(d.inject_step_delay == Time::ms(5));
  CHECK(d.inject_duration == Time::ms(300));
  CHECK(d.injector_thread.comm == "instrumentation");
  CHECK(d.injector_thread.nice == 0);
  CHECK(d.inject_sync_input);  // UiAutomationConnection's syncInputTransactions(), by default
  CHECK(d.inject_sync_cost == Time::us(200));
  CHECK(d.sf_input_sync_cost == Time::us(100));
  const DisplayParams synced = loaded_display(ss, inj + "input_source: injected, sf_input_sync_cost: 40us}\n");
  CHECK(synced.sf_input_sync_cost == Time::us(40));
  CHECK_FALSE(loaded_display(ss, inj + "input_source: injected, inject_sync_input: false}\n").inject_sync_input);
  check_display_error(ss, inj + "input_source: injected, inject_sync_input: false, inject_sync_cost: 1ms}\n",
                      "devices[0].inject_sync_cost", "needs inject_sync_input: true");
  check_display_error(ss, inj + "inject_sync_input: true}\n", "devices[0].inject_sync_input",
                      "needs input_source: injected");
  CHECK(loaded_display(ss, inj + "input_source: touch}\n").input_source == DisplayParams::InputSource::kTouch);
  check_display_error(ss, inj + "input_source: finger}\n", "devices[0].input_source", "touch, injected");
  check_display_error(ss, "  - {name: shade, model: display, vsync_threads: true, input_source: injected}\n",
                      "devices[0].input_source", "needs input_threads: true");
  check_display_error(ss, inj + "input_source: injected, touch_report_rate: 240Hz}\n",
                      "devices[0].touch_report_rate", "needs input_source: touch");
  check_display_error(ss, inj + "inject_cost: 80us}\n", "devices[0].inject_cost", "needs input_source: injected");
  check_display_error(ss, inj + "inject_binder: system_server}\n", "devices[0].inject_binder",
                      "or set inject_binder: none");
  CHECK(loaded_display(ss, inj + "inject_binder: none}\n").inject_binder.empty());
  check_display_error(ss, inj + "input_source: injected, inject_binder: surfaceflinger}\n",
                      "devices[0].inject_binder", "system_server");
  // Kernel input handlers never see an injected event; `none` clears a
  // runtime PM device an overlay cannot delete.
  const std::string rpm = "pm_runtime:\n  devices:\n    - {name: gpu}\n";
  check_display_error(rpm, inj + "input_source: injected, touch_rpm: gpu}\n", "devices[0].touch_rpm",
                      "set touch_rpm: none");
  CHECK(loaded_display(rpm, inj + "input_source: injected, touch_rpm: none}\n").touch_rpm.empty());
}

TEST_CASE("A display's drm/msm submit workqueue loads from YAML and must be a declared workqueue with a gpu",
          "[pm_wq_study][config]") {
  const DisplayParams d =
      loaded_display("workqueues:\n  - {name: ring0, ordered: true, flags: [WQ_MEM_RECLAIM]}\n",
                     "  - {name: g, model: gpu}\n  - {name: shade, model: display, gpu: g, gpu_submit_wq: ring0}\n");
  CHECK(d.gpu_submit_wq == "ring0");
  CHECK(d.run_job_cost == Time::us(10));
  check_display_error("", "  - {name: g, model: gpu}\n  - {name: shade, model: display, gpu: g, gpu_submit_wq: ring9}\n",
                      "devices[1].gpu_submit_wq", "unknown workqueue 'ring9'");
  check_display_error("workqueues:\n  - {name: ring0, ordered: true}\n",
                      "  - {name: shade, model: display, gpu_submit_wq: ring0}\n", "devices[0].gpu_submit_wq",
                      "needs gpu");
}

TEST_CASE("schedlab run's JSON carries the runtime PM sleeps, devices and frames of each run", "[pm_wq_study][reports]") {
  ScenarioParams p = load_scenario_yaml(kRpmScenario, "rpm.yaml");
  RunSet set;
  set.runs.push_back(simulate_run(p, 1, {}, nullptr));
  set.aggregate = aggregate_runs(set.runs);
  const std::string json = render_json(set);
  CHECK_THAT(json, Catch::Contains(R"("rpm_sleeps")") && Catch::Contains(R"("device": "gpu")") &&
                       Catch::Contains(R"("in": "rpm_resume")") && Catch::Contains(R"("d_state_p90_us": 300)"));
  CHECK_THAT(json, Catch::Contains(R"("rpm_devices")") && Catch::Contains(R"("suspends": 1)"));
  CHECK_THAT(json, !Catch::Contains(R"("frames")"));  // no display in this scenario
}

// configs/experiments/touch_input_shade.yaml: its `touch` variant drives
// the shade by the display's input path and never starts the poll
// stand-in. Over 3.5 s of the swipe (windows at 0.3 and 2.15 s, 350 ms
// each: 43 reports apiece at 120 Hz, the 43rd 14 ns before the lift:
// 42 x 8,333,333 ns), the IRQ thread wakes once per report, InputReader
// only by it, and the poll tasks never run.
TEST_CASE("the touch what-if drives the shade swipe through the input path, not the poll stand-in",
          "[pm_wq_study][input]") {
  const std::string dir = std::string(SCHEDLAB_SOURCE_DIR) + "/configs/";
  const ExperimentSpec e = load_experiment_file(dir + "experiments/touch_input_shade.yaml");
  REQUIRE(e.variants.size() == 2);
  CHECK(e.variants[0].overlays.empty());
  ScenarioParams p = load_scenario_with_overlays(e.scenario, e.variants[1].overlays, "variant 'touch'");
  p.duration = Time::ms(3500);
  struct Log : SchedObserver {
    void on_waking(Time, const Task& t, const Task* waker, int) override {
      if (t.comm == "irq/touch") ++irq;
      if (t.comm == "InputReader") reader_by_irq += waker && waker->comm == "irq/touch";
      if (t.comm == "InputReader") ++reader;
      if (t.comm.rfind("input-", 0) == 0 || t.comm == "input") ++poll;
    }
    void on_switch(Time, int, const Task&, TaskState, const Task& next) override {
      if (next.comm.rfind("input-", 0) == 0 || next.comm == "input") ++poll;
    }
    int irq = 0, reader = 0, reader_by_irq = 0, poll = 0;
  };
  const Log log = run_logged<Log>(p);
  CHECK(log.irq == 86);
  CHECK(log.reader > 0);
  CHECK(log.reader_by_irq == log.reader);
  CHECK(log.poll == 0);
}

// The command-mode SDE what-if (configs/overlays/qcom_sde_cmd_mode_idle_pc.yaml):
// between the swipes' frames the display power-collapses 58 ms after the
// last kickoff, in the commit thread, and the next commit resumes it
// there: the display suspends and resumes, MDSS never, and pm_wq runs the
// GPU's items only (none of the display's).
TEST_CASE("The command-mode SDE what-if suspends the display in its commit thread, not on pm_wq", "[pm_wq_study]") {
  const std::string root = std::string(SCHEDLAB_SOURCE_DIR) + "/configs/";
  std::vector<Overlay> o = load_overlay_file(root + "overlays/qcom_sde_cmd_mode_idle_pc.yaml");
  o.push_back({"duration", "4s", {}});
  ScenarioParams p = load_scenario_with_overlays(root + "scenarios/shade_swipe.yaml", o);
  const RunResult r = simulate_run(p, 7, {}, nullptr);
  for (const CpuMetrics& c : r.cpus) CHECK(c.busy + c.idle == r.elapsed());
  // pm_wq ran the GPU's suspends (its autosuspend timer's items) only.
  const WorkQueueMetrics* pm = nullptr;
  for (const WorkQueueMetrics& w : r.workqueues)
    if (w.name == "pm") pm = &w;
  REQUIRE(pm);
  for (const RpmDeviceMetrics& d : r.rpm_devices)
    if (d.name == "gpu") CHECK(pm->items == d.suspends);
  for (const RpmDeviceMetrics& d : r.rpm_devices) {
    INFO(d.name);
    if (d.name == "display") {
      CHECK(d.suspends >= 2);  // an idle gap after each swipe at least
      CHECK(d.resumes >= 2);
    }
    if (d.name == "mdss") CHECK(d.suspends == 0);
  }
  // The commits ran on crtc_commit:0, with the off work between them.
  const WorkQueueMetrics* commit = nullptr;
  for (const WorkQueueMetrics& w : r.workqueues)
    if (w.name == "crtc_commit:0") commit = &w;
  REQUIRE(commit);
  CHECK(commit->items >= r.frames[0].frames);
}

TEST_CASE("A display's SDE idle power collapse loads from YAML, only with commit_worker and display_rpm",
          "[pm_wq_study][config]") {
  const std::string sections =
      "kthread_workers:\n  - {name: commit, policy: SCHED_FIFO, priority: 16}\n"
      "pm_runtime:\n  devices:\n    - {name: dpu, use_autosuspend: false, start_active: true}\n";
  const DisplayParams d = loaded_display(
      sections, "  - {name: shade, model: display, commit_worker: commit, display_rpm: dpu,\n"
                "     idle_pc_delay: 58ms, idle_pc_cost: 50us}\n");
  CHECK(d.idle_pc_delay == Time::ms(58));
  CHECK(d.idle_pc_cost == Time::us(50));
  check_display_error(sections, "  - {name: shade, model: display, display_rpm: dpu, idle_pc_delay: 58ms}\n",
                      "devices[0].idle_pc_delay", "needs commit_worker (downstream SDE) and display_rpm");
  check_display_error(sections,
                      "  - {name: shade, model: display, commit_worker: commit, display_rpm: dpu,\n"
                      "     crtc_holds_display_rpm: true, idle_pc_delay: 58ms}\n",
                      "devices[0].idle_pc_delay", "needs crtc_holds_display_rpm: false");
  check_display_error(sections,
                      "  - {name: shade, model: display, commit_worker: commit, display_rpm: dpu,\n"
                      "     idle_pc_delay: -1ms}\n",
                      "devices[0].idle_pc_delay", ">= 0");
  check_display_error(sections,
                      "  - {name: shade, model: display, commit_worker: commit, display_rpm: dpu, idle_pc_cost: 5us}\n",
                      "devices[0].idle_pc_cost", "needs idle_pc_delay > 0");
}

// The scenario's DPU contexts (mainline drm/msm 6.12): every latched commit
// queues a frame event on crtc_event:0 (at least one per frame presented,
// less the last if the window ends between its flush and its event; the
// input syncs' composites are commits too), which stays SCHED_FIFO 50; the
// encoder's off work and the vblank enable / disable works run on the
// "msm" workqueue, never on pm_wq, which still runs the GPU's items only.
TEST_CASE("The shade scenario runs a frame event per commit on crtc_event and the encoder's off work on msm",
          "[pm_wq_study]") {
  const std::string root = std::string(SCHEDLAB_SOURCE_DIR) + "/configs/";
  std::vector<Overlay> o;
  o.push_back({"duration", "4s", {}});
  ScenarioParams p = load_scenario_with_overlays(root + "scenarios/shade_swipe.yaml", o);
  const RunResult r = simulate_run(p, 7, {}, nullptr);
  for (const CpuMetrics& c : r.cpus) CHECK(c.busy + c.idle == r.elapsed());
  const WorkQueueMetrics *pm = nullptr, *events = nullptr, *msm = nullptr, *commits = nullptr;
  for (const WorkQueueMetrics& w : r.workqueues) {
    if (w.name == "pm") pm = &w;
    if (w.name == "crtc_event:0") events = &w;
    if (w.name == "msm") msm = &w;
    if (w.name == "events_unbound") commits = &w;
  }
  REQUIRE(pm);
  REQUIRE(events);
  REQUIRE(msm);
  REQUIRE(commits);
  for (const RpmDeviceMetrics& d : r.rpm_devices)
    if (d.name == "gpu") CHECK(pm->items == d.suspends);
  CHECK(events->items >= r.frames[0].frames - 1);
  CHECK(events->items <= commits->items);  // the input syncs' composites are commits too
  // The encoder's off work after each pause between frames (the swipes'
  // gaps at least), cancelled by every kickoff that comes in time, and the
  // vblank works: an enable and a disable per burst of frames, so fewer
  // than the frames and at least a pair per swipe.
  CHECK(msm->items >= 2 + 2 * 2);
  CHECK(msm->items < r.frames[0].frames);
  for (const TaskMetrics& t : r.tasks)
    if (t.name == "crtc_event:0") CHECK(t.policy == Policy::kFifo);
}

TEST_CASE("A display's frame event thread and DPU encoder idle work load from YAML, with their conditions",
          "[pm_wq_study][config]") {
  const std::string sections =
      "workqueues:\n  - {name: msm, ordered: true}\n"
      "kthread_workers:\n  - {name: ev, policy: SCHED_FIFO, priority: 50}\n"
      "pm_runtime:\n  devices:\n    - {name: dpu, use_autosuspend: false, start_active: true}\n";
  const DisplayParams d = loaded_display(
      sections, "  - {name: shade, model: display, commit_wq: events_unbound, frame_event_worker: ev,\n"
                "     frame_event_cost: 7us, encoder_wq: msm, encoder_idle_timeout: 30ms, encoder_off_cost: 3us}\n");
  CHECK(d.frame_event_worker == "ev");
  CHECK(d.frame_event_cost == Time::us(7));
  CHECK(d.encoder_wq == "msm");
  CHECK(d.encoder_idle_timeout == Time::ms(30));
  CHECK(d.encoder_off_cost == Time::us(3));
  check_display_error(sections, "  - {name: shade, model: display, frame_event_worker: ev}\n",
                      "devices[0].frame_event_worker", "needs commit_wq or commit_worker");
  check_display_error(sections, "  - {name: shade, model: display, commit_wq: events_unbound, encoder_wq: msm}\n",
                      "devices[0].encoder_wq", "needs commit_wq and frame_event_worker");
  {
    const DisplayParams v = loaded_display(
        sections, "  - {name: shade, model: display, commit_wq: events_unbound, vblank_wq: msm, vblank_work_cost: 9us}\n");
    CHECK(v.vblank_wq == "msm");
    CHECK(v.vblank_work_cost == Time::us(9));
  }
  check_display_error(sections, "  - {name: shade, model: display, vblank_wq: msm}\n", "devices[0].vblank_wq",
                      "needs commit_wq");
  check_display_error(sections, "  - {name: shade, model: display, commit_wq: events_unbound, vblank_wq: msn}\n",
                      "devices[0].vblank_wq", "'msn'");
  check_display_error(sections, "  - {name: shade, model: display, commit_wq: events_unbound, vblank_work_cost: 9us}\n",
                      "devices[0].vblank_work_cost", "vblank_wq");
  CHECK(loaded_display(sections, "  - {name: shade, model: display, commit_wq: events_unbound, vblank_wq: msm,\n"
                                 "     encoder_vblank_irq: true}\n")
            .encoder_vblank_irq);
  check_display_error(sections, "  - {name: shade, model: display, encoder_vblank_irq: true}\n",
                      "devices[0].encoder_vblank_irq", "needs encoder_wq or vblank_wq");
  check_display_error(sections,
                      "  - {name: shade, model: display, commit_wq: events_unbound, frame_event_worker: evv}\n",
                      "devices[0].frame_event_worker", "'evv'");
  check_display_error(sections,
                      "  - {name: shade, model: display, commit_wq: events_unbound, frame_event_worker: ev,\n"
                      "     encoder_wq: msm, encoder_idle_timeout: 0ms}\n",
                      "devices[0].encoder_idle_timeout", "> 0");
  check_display_error(sections, "  - {name: shade, model: display, encoder_off_cost: 3us}\n",
                      "devices[0].encoder_off_cost", "needs encoder_wq");
}

TEST_CASE("A display's hardware-vsync resync loads from YAML, with its conditions", "[pm_wq_study][config]") {
  const std::string sections = "binder_procs:\n  - {name: sf_hw, threads: 1}\n";
  const DisplayParams d = loaded_display(
      sections, "  - {name: shade, model: display, vsync_threads: true, hw_vsync_resync: true,\n"
                "     hw_vsync_ignore_delay: 500ms, hw_vsync_samples: 4, hw_vsync_event_cost: 7us,\n"
                "     hw_vsync_predictor_trained: false,\n"
                "     hw_vsync_thread: {comm: vsync, priority: 2}, hw_vsync_binder: sf_hw,\n"
                "     hw_vsync_callback_cost: 3us, hw_vsync_toggle_cost: 40us}\n");
  CHECK(d.hw_vsync_resync);
  CHECK(d.hw_vsync_ignore_delay == Time::ms(500));
  CHECK(d.hw_vsync_samples == 4);
  CHECK_FALSE(d.hw_vsync_predictor_trained);
  CHECK(d.hw_vsync_event_cost == Time::us(7));
  CHECK(d.hw_vsync_thread.comm == "vsync");
  CHECK(d.hw_vsync_thread.policy == Policy::kFifo);
  CHECK(d.hw_vsync_thread.rt_priority == 2);
  CHECK(d.hw_vsync_binder == "sf_hw");
  CHECK(d.hw_vsync_callback_cost == Time::us(3));
  CHECK(d.hw_vsync_toggle_cost == Time::us(40));
  {
    // The defaults: Qualcomm's composer thread, AOSP's constants.
    const DisplayParams v =
        loaded_display(sections, "  - {name: shade, model: display, vsync_threads: true, hw_vsync_resync: true}\n");
    CHECK(v.hw_vsync_thread.comm == "SDM_EventThread");
    CHECK(v.hw_vsync_thread.rt_priority == 1);
    CHECK(v.hw_vsync_samples == 6);
    CHECK(v.hw_vsync_ignore_delay == Time::ms(750));
    CHECK(v.hw_vsync_predictor_trained);
    CHECK(v.hw_vsync_binder.empty());
    // Switched off by an overlay: the binder named none.
    const DisplayParams off = loaded_display(
        sections, "  - {name: shade, model: display, hw_vsync_resync: false, hw_vsync_binder: none}\n");
    CHECK_FALSE(off.hw_vsync_resync);
  }
  check_display_error(sections, "  - {name: shade, model: display, hw_vsync_resync: true}\n",
                      "devices[0].hw_vsync_resync", "needs vsync_threads: true");
  check_display_error(sections, "  - {name: shade, model: display, vsync_threads: true, hw_vsync_samples: 4}\n",
                      "devices[0].hw_vsync_samples", "needs hw_vsync_resync: true");
  check_display_error(sections, "  - {name: shade, model: display, vsync_threads: true, hw_vsync_binder: sf_hw}\n",
                      "devices[0].hw_vsync_binder", "needs hw_vsync_resync: true (or set hw_vsync_binder: none)");
  check_display_error(sections,
                      "  - {name: shade, model: display, vsync_threads: true, hw_vsync_resync: true,\n"
                      "     hw_vsync_binder: sf_hwx}\n",
                      "devices[0].hw_vsync_binder", "'sf_hwx'");
  check_display_error(sections,
                      "  - {name: shade, model: display, vsync_threads: true, hw_vsync_resync: true,\n"
                      "     hw_vsync_callback_cost: 3us}\n",
                      "devices[0].hw_vsync_callback_cost", "needs hw_vsync_binder");
  check_display_error(sections,
                      "  - {name: shade, model: display, vsync_threads: true, hw_vsync_resync: true,\n"
                      "     hw_vsync_samples: 0}\n",
                      "devices[0].hw_vsync_samples", "1..1000");
}
