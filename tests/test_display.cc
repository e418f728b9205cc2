// The display pipeline (models/devices/display.h): vsync timing, the frame
// schedule through UI thread, RenderThread, GPU and SurfaceFlinger, and
// FrameTimeline's classification, computed by hand with fixed costs.
//
// Common rig: 120 Hz (period 8333333 ns), AOSP default durations (app
// 8333333 ns, sf 7333333 ns, so the app callback for present vsync k fires
// at k * 8333333 - 15666666), three CPUs without overheads: UI thread on
// CPU 0, RenderThread on CPU 1, SurfaceFlinger on CPU 2. Fixed costs: UI
// 2 ms, RenderThread 3 ms, GPU 2 ms (interrupt latency 0), SF 1 ms, commit
// 0.5 ms. The first animation window is [100 ms, 200 ms): app callbacks for
// k = 14 .. 25 (the first at 100999996 ns).
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string_view>

#include "models/devices/display.h"
#include "models/devices/gpu.h"
#include "models/errors.h"
#include "models/kernel/kthread_worker.h"
#include "models/kernel/pm_runtime/pm_runtime.h"
#include "models/kernel/workqueue/runnable_tracker.h"
#include "models/kernel/workqueue/workqueue.h"
#include "sched_test_util.h"

using namespace schedlab;
using namespace schedlab::testing;

namespace {

constexpr int64_t kPeriod = 8333333;
constexpr int64_t kSf = 7333333;
constexpr int64_t kAppOffset = 8333333 + kSf;

Time P(int64_t k) { return Time::ns(k * kPeriod); }                // vsync k
Time W(int64_t k) { return Time::ns(k * kPeriod - kAppOffset); }   // app callback for vsync k
Time S(int64_t k) { return Time::ns(k * kPeriod - kSf); }          // SF callback for vsync k

Distribution fixed(Time t) {
  Distribution d;
  d.kind = Distribution::Kind::kFixed;
  d.mean = t;
  return d;
}

DisplayParams fixed_params() {
  DisplayParams d;
  d.start_delay = Time::ms(100);
  d.animation = Time::ms(100);
  d.gap = Time::s(1);
  d.cycles = 1;
  d.ui_thread.cpus = {0};
  d.render_thread.cpus = {1};
  d.sf_thread.cpus = {2};
  d.ui_cost = fixed(Time::ms(2));
  d.render_cost = fixed(Time::ms(3));
  d.gpu_time = fixed(Time::ms(2));
  d.sf_cost = fixed(Time::ms(1));
  d.commit_cost = fixed(Time::us(500));
  d.gpu = "gpu";
  return d;
}

// vsync_threads on: TimerDispatch on CPU 2 with SF, the app EventThread on
// CPU 0 with the UI thread.
DisplayParams with_vsync_threads(DisplayParams d) {
  d.vsync_threads = true;
  d.timer_dispatch_thread.cpus = {2};
  d.app_event_thread.cpus = {0};
  return d;
}
DisplayParams vsync_thread_params() { return with_vsync_threads(fixed_params()); }

// hw_vsync_resync on `d` (with vsync_threads), the first window at 1000 ms.
DisplayParams hw_vsync_params(DisplayParams d, bool trained = true) {
  d = with_vsync_threads(d);
  d.start_delay = Time::ms(1000);
  d.hw_vsync_resync = true;
  d.hw_vsync_predictor_trained = trained;
  return d;
}

// input_threads on, the touch interrupt and the three input threads on
// CPU 3 (a rig with 4 CPUs), reports at `report_hz`.
DisplayParams input_thread_params(double report_hz = 120) {
  DisplayParams d = vsync_thread_params();
  d.input_threads = true;
  d.touch_report_hz = report_hz;
  d.touch_irq_cpu = 3;
  d.input_reader_thread.cpus = {3};
  d.input_dispatcher_thread.cpus = {3};
  return d;
}

// input_source: injected, the test's thread on CPU 3, system_server's
// one-thread binder pool on CPU 3 too.
DisplayParams injected_params() {
  DisplayParams d = input_thread_params();
  d.input_source = DisplayParams::InputSource::kInjected;
  d.inject_binder = "system_server";
  d.injector_thread.cpus = {3};
  return d;
}
BinderProcParams system_server_on_cpu3() {
  BinderProcParams bp;
  bp.name = "system_server";
  bp.cpus = {3};
  return bp;
}

// Frames by vsync id, and who woke the pipeline's threads when.
class FrameLog : public SchedObserver {
 public:
  struct Wake {
    Time t;
    std::string task;
    const Task* waker;
  };
  void on_frame(Time t, const FrameEvent& e) override {
    frames[e.vsync_id] = e;
    emitted_at[e.vsync_id] = t;
  }
  void on_waking(Time t, const Task& p, const Task* waker, int) override { wakes.push_back({t, p.comm, waker}); }
  void on_switch(Time t, int, const Task&, TaskState, const Task& next) override {
    if (!next.is_idle_task) runs.push_back({t, next.comm, nullptr});
  }
  std::vector<Time> timer_wakes(const std::string& comm) const {
    std::vector<Time> v;
    for (const auto& w : wakes)
      if (w.task == comm && !w.waker) v.push_back(w.t);
    return v;
  }
  std::map<uint64_t, FrameEvent> frames;
  std::map<uint64_t, Time> emitted_at;
  std::vector<Wake> wakes;
  std::vector<Wake> runs;
};

// When `p` was woken by `waker` (nullptr: a timer or interrupt).
std::vector<Time> wakes_by(const FrameLog& log, const Task* p, const Task* waker) {
  std::vector<Time> v;
  for (const auto& w : log.wakes)
    if (w.task == p->comm && w.waker == waker) v.push_back(w.t);
  return v;
}

// A SCHED_FIFO task that runs `work` once, from `at`, then exits.
class OneShot : public TaskBody {
 public:
  explicit OneShot(Time work) : work_(work) {}
  Action next(Task&) override {
    if (done_) return Action::exit();
    done_ = true;
    return Action::run(work_.count());
  }

 private:
  Time work_;
  bool done_ = false;
};

struct Rig {
  explicit Rig(const DisplayParams& dp, int cpus = 3) : Rig(dp, exact_scenario("6.12", 1000, cpus)) {}
  Rig(const DisplayParams& dp, ScenarioParams scenario) : sp(std::move(scenario)) {
    k = std::make_unique<Kernel>(sp.kernel, sp.platform);
    k->add_observer(&log);
    GpuParams g;
    g.service_time = fixed(Time::ms(2));
    gpu = std::make_unique<Gpu>(*k, "gpu", g, 1);
    params = dp;
  }
  void build(PmRuntime* pm = nullptr, WorkqueueSystem* wqs = nullptr, Workqueue* submit_wq = nullptr,
             BinderProc* request_binder = nullptr, BinderProc* inject_binder = nullptr,
             Workqueue* commit_wq = nullptr) {
    DisplayLinks links;
    links.wqs = wqs;
    links.submit_wq = submit_wq;
    links.commit_wq = commit_wq;
    links.request_binder = request_binder;
    links.inject_binder = inject_binder;
    links.hw_vsync_binder = hw_vsync_binder;
    disp = std::make_unique<DisplayPipeline>(*k, "display", params, params.gpu.empty() ? nullptr : gpu.get(), pm, 1,
                                             links);
  }
  void run(Time until) { k->run_until(until); }
  // A SCHED_FIFO 3 task on SurfaceFlinger's CPU (2) that runs `work` once, from `at`.
  void add_fifo_hog(Time at, Time work) {
    hog_body = std::make_unique<OneShot>(work);
    Task& hog = k->create_task("hog", "hog", Policy::kFifo, 0, 3, {2}, false);
    k->set_body(hog, hog_body.get());
    k->start_task_at(hog, at);
  }
  // A SCHED_FIFO 1 task on the UI thread's CPU (0, or `cpu`) that runs
  // `work` once, from `at`: above the UI thread and RenderThread, below
  // vsync_threads' FIFO 2 threads.
  void add_ui_cpu_hog(Time at, Time work, int cpu = 0) {
    hog_body = std::make_unique<OneShot>(work);
    Task& hog = k->create_task("hog", "hog", Policy::kFifo, 0, 1, {cpu}, false);
    k->set_body(hog, hog_body.get());
    k->start_task_at(hog, at);
  }
  ScenarioParams sp;
  DisplayParams params;
  std::unique_ptr<Kernel> k;
  std::unique_ptr<Gpu> gpu;
  std::unique_ptr<DisplayPipeline> disp;
  FrameLog log;
  std::unique_ptr<OneShot> hog_body;
  BinderProc* hw_vsync_binder = nullptr;  // build(): the display's hw_vsync_binder
};

// The ModelError building a 4-CPU rig's display with dp throws ("" if none).
std::string build_error(const DisplayParams& dp) {
  Rig r(dp, 4);
  try {
    r.build();
  } catch (const ModelError& e) {
    return e.what();
  }
  return "";
}

// Frames from..to each shown one vsync late behind their predecessor:
// Buffer Stuffing, on time by the moved deadline, not janky.
void check_stuffed(FrameLog& log, uint64_t from, uint64_t to) {
  for (uint64_t k = from; k <= to; ++k) {
    INFO("frame " << k);
    REQUIRE(log.frames.count(k) == 1);
    const FrameEvent& f = log.frames[k];
    CHECK_FALSE(f.dropped);
    CHECK(f.present == P(static_cast<int64_t>(k) + 1));
    CHECK(log.emitted_at[k] == f.present);
    CHECK(f.buffer_stuffing);
    CHECK_FALSE(f.app_missed);
    CHECK_FALSE(f.sf_missed);
    CHECK_FALSE(f.janky);
  }
}

}  // namespace

TEST_CASE("display: vsync and callback times follow the duration model", "[display]") {
  Rig r(fixed_params());
  r.build();
  DisplayPipeline& d = *r.disp;
  CHECK(d.period() == Time::ns(kPeriod));
  CHECK(d.app_duration() == Time::ns(kPeriod));      // unset debug.sf.late.app.duration
  CHECK(d.sf_duration() == Time::ns(kPeriod - 1000000));  // unset debug.sf.late.sf.duration
  CHECK(d.app_wakeup(14) == Time::ns(100999996));
  CHECK(d.sf_wakeup(14) == Time::ns(109333329));
  CHECK(d.ui_task().policy == Policy::kNormal);
  CHECK(d.ui_task().nice() == -10);
  CHECK(d.render_task().nice() == -10);
  CHECK(d.sf_task().policy == Policy::kFifo);
  CHECK(d.sf_task().rt_priority == 2);
  CHECK(d.animating(Time::ms(100)));
  CHECK_FALSE(d.animating(Time::ms(200)));
  CHECK(d.animating(Time::ms(1200)));   // the collapse window [1.2 s, 1.3 s)
  CHECK_FALSE(d.animating(Time::ms(2300)));  // one cycle only
}

TEST_CASE("display: a frame with fixed costs has hand-computed wake times, app end and present", "[display]") {
  // Frame k: UI W_k -> +2 ms, RenderThread +2 -> +5 (queueBuffer), GPU +5
  // -> +7 (app_end); SF wakes at S_k = W_k + 8333333, latches, runs 1.5 ms;
  // presented at P_k, everything on time.
  Rig r(fixed_params());
  r.build();
  r.run(Time::ms(400));
  std::vector<Time> ui_wakes = r.log.timer_wakes("ndroid.systemui");
  REQUIRE(ui_wakes.size() == 12);
  REQUIRE(r.log.frames.size() == 12);
  for (int64_t k = 14; k <= 25; ++k) {
    INFO("frame " << k);
    CHECK(ui_wakes[static_cast<size_t>(k - 14)] == W(k));
    REQUIRE(r.log.frames.count(static_cast<uint64_t>(k)) == 1);
    const FrameEvent& f = r.log.frames[static_cast<uint64_t>(k)];
    CHECK(f.layer == "NotificationShade");
    CHECK(f.vsync == W(k));
    CHECK(f.app_end == W(k) + Time::ms(7));
    CHECK(f.app_deadline == P(k) - Time::ns(kSf));
    CHECK(f.expected_present == P(k));
    CHECK(f.sf_end == S(k) + Time::us(1500));
    CHECK(f.sf_deadline == P(k));
    CHECK(f.present == P(k));
    CHECK(r.log.emitted_at[static_cast<uint64_t>(k)] == P(k));
    CHECK_FALSE(f.app_missed);
    CHECK_FALSE(f.sf_missed);
    CHECK_FALSE(f.dropped);
  }
  // SurfaceFlinger is woken by its timer at S_k; RenderThread by the UI
  // thread at W_k + 2 ms; the UI thread again by RenderThread (sync).
  CHECK(r.log.timer_wakes("surfaceflinger") == std::vector<Time>{S(14), S(15), S(16), S(17), S(18), S(19), S(20),
                                                                  S(21), S(22), S(23), S(24), S(25)});
  int rt_by_ui = 0, ui_by_rt = 0;
  for (const auto& w : r.log.wakes) {
    if (w.task == "RenderThread" && w.waker == &r.disp->ui_task()) {
      CHECK((w.t - Time::ms(2) - W(14)).count() % kPeriod == 0);
      ++rt_by_ui;
    }
    if (w.task == "ndroid.systemui" && w.waker == &r.disp->render_task()) ++ui_by_rt;
  }
  CHECK(rt_by_ui == 12);
  CHECK(ui_by_rt == 12);
  CHECK(r.disp->frames_presented() == 12);
  CHECK(r.disp->app_missed() == 0);
  CHECK(r.disp->sf_missed() == 0);
  CHECK(r.disp->frames_dropped() == 0);
  CHECK(r.gpu->jobs_done() == 12);
}

TEST_CASE("display: a late app frame is app-missed and stuffs the queue: the next ones are shown a vsync late",
          "[display]") {
  // The first frame of the animation (k = 14) costs the UI thread 10 ms:
  // UI 100999996 -> 110999996, RenderThread -> 113999996, GPU -> 115999996
  // > app deadline P14 - sf = 109333329. SF's first callback is the one
  // after queueBuffer, S15 = 117666662: frame 14 is latched and presented
  // at P15, 8.3 ms late, finished late: App Deadline Missed. Frame 15 (UI
  // 110999996 -> 112999996, RenderThread 113999996 -> 116999996, GPU ->
  // 118999996) and every later one is ready by its own SF wake-up, but with
  // backpressure SF applies one buffer per frame: k is latched at S(k+1)
  // and shown at P(k+1). FrameTimeline: the previous buffer was latched at
  // S(k) = k's deadline, so the queue was stuffed and the deadline moves to
  // S(k) + period, which k meets: Buffer Stuffing only, not janky.
  DisplayParams dp = fixed_params();
  dp.first_ui_cost = fixed(Time::ms(10));
  Rig r(dp);
  r.build();
  r.run(Time::ms(400));
  REQUIRE(r.log.frames.count(14) == 1);
  const FrameEvent& a = r.log.frames[14];
  CHECK(a.app_end == Time::ns(115999996));
  CHECK(a.app_missed);
  CHECK_FALSE(a.buffer_stuffing);  // the layer's first latch
  CHECK(a.janky);
  CHECK(a.present == P(15));
  REQUIRE(r.log.frames.count(15) == 1);
  CHECK(r.log.frames[15].app_end == Time::ns(118999996));
  CHECK(r.log.frames[15].app_end > r.log.frames[15].app_deadline);  // late by its own deadline
  check_stuffed(r.log, 15, 25);
  CHECK(r.disp->app_missed() == 1);
  CHECK(r.disp->frames_dropped() == 0);
  CHECK(r.disp->frames_presented() == 12);
}

TEST_CASE("display: FrameTimeline counts a frame presented on time as no jank, however late it finished",
          "[display]") {
  // Frame 14's UI work takes 3.5 ms: UI W14 -> +3.5 ms, RenderThread ->
  // +6.5, GPU -> +8.5 ms = S14 + 0.17 ms, after its deadline S14 = P14 -
  // sf. A SCHED_FIFO 3 task holds SF's CPU from S14 - 0.5 ms for 1 ms, so
  // SF latches at S14 + 0.5 ms, when the buffer is ready, and its commit
  // ends at S14 + 2 ms, before P14: presented on time, so FrameTimeline
  // gives no jank (presentDelta within 2 ms; LateFinish alone is not one).
  DisplayParams dp = fixed_params();
  dp.first_ui_cost = fixed(Time::us(3500));
  Rig r(dp);
  r.build();
  r.add_fifo_hog(S(14) - Time::us(500), Time::ms(1));
  r.run(Time::ms(400));
  REQUIRE(r.log.frames.count(14) == 1);
  const FrameEvent& f = r.log.frames[14];
  CHECK(f.app_end == W(14) + Time::us(8500));
  CHECK(f.app_end > f.app_deadline);
  CHECK(f.sf_end == S(14) + Time::us(2000));
  CHECK(f.present == P(14));
  CHECK_FALSE(f.app_missed);
  CHECK_FALSE(f.buffer_stuffing);
  CHECK_FALSE(f.janky);
  CHECK(r.disp->app_missed() == 0);
}

TEST_CASE("display: without backpressure a late frame is dropped when the next one is ready too", "[display]") {
  // backpressure: false, the pre-BLAST BufferQueue consumer. Frame 14 as
  // above, presented at P15. At S16 both 15 (late too: 118999996 >
  // 117666662) and 16 (GPU done 124666662) are ready: 15 is dropped
  // (FrameTimeline's Dropped, not App Deadline Missed), 16 presented on
  // time at P16.
  DisplayParams dp = fixed_params();
  dp.first_ui_cost = fixed(Time::ms(10));
  dp.backpressure = false;
  Rig r(dp);
  r.build();
  r.run(Time::ms(400));
  REQUIRE(r.log.frames.count(14) == 1);
  const FrameEvent& a = r.log.frames[14];
  CHECK(a.app_end == Time::ns(115999996));
  CHECK(a.app_deadline == Time::ns(109333329));
  CHECK(a.app_missed);
  CHECK_FALSE(a.sf_missed);
  CHECK_FALSE(a.dropped);
  CHECK(a.expected_present == P(14));
  CHECK(a.present == P(15));
  CHECK(a.sf_end == S(15) + Time::us(1500));
  CHECK(a.sf_deadline == P(15));

  REQUIRE(r.log.frames.count(15) == 1);
  const FrameEvent& b = r.log.frames[15];
  CHECK(b.vsync == W(15));  // started 1.67 ms late: less than a period, not retargeted
  CHECK(b.app_end == Time::ns(118999996));
  CHECK_FALSE(b.app_missed);
  CHECK_FALSE(b.janky);
  CHECK(b.dropped);
  CHECK(r.log.emitted_at[15] == S(16));

  REQUIRE(r.log.frames.count(16) == 1);
  const FrameEvent& c = r.log.frames[16];
  CHECK(c.app_end == Time::ns(124666662));
  CHECK_FALSE(c.app_missed);
  CHECK_FALSE(c.sf_missed);
  CHECK(c.present == P(16));
  for (uint64_t k = 17; k <= 25; ++k) {
    INFO("frame " << k);
    CHECK(r.log.frames[k].present == P(static_cast<int64_t>(k)));
  }
  CHECK(r.disp->app_missed() == 1);
  CHECK(r.disp->sf_missed() == 0);
  CHECK(r.disp->frames_dropped() == 1);
  CHECK(r.disp->frames_presented() == 11);
}

TEST_CASE("display: a frame started a period or more after its vsync skips to the latest vsync", "[display]") {
  // Frame 14's UI work takes 20 ms (to W14 + 20 ms). The callback for 15
  // (W14 + 8.33 ms) is pending by then; the one for 16 was not requested.
  // Choreographer.doFrame() starts 11.67 ms after vsync 15 and skips to the
  // latest vsync, 16: there is no frame 15.
  DisplayParams dp = fixed_params();
  dp.first_ui_cost = fixed(Time::ms(20));
  Rig r(dp);
  r.build();
  r.run(Time::ms(400));
  CHECK(r.log.frames.count(15) == 0);
  REQUIRE(r.log.frames.count(16) == 1);
  CHECK(r.log.frames[16].vsync == W(16));
  CHECK(r.log.frames[16].expected_present == P(16));
  CHECK(r.log.frames[16].app_deadline == P(16) - Time::ns(kSf));
  // UI W14 + 20 -> 22 ms, synced when RenderThread has drawn 14 (W14 + 23
  // ms), drawn until W14 + 26 ms, GPU until W14 + 28 ms: after its
  // deadline S16. Frame 14 (GPU done W14 + 25 ms = S16 + 1 ns) missed S16
  // and is latched at S17, presented at P17; 16 waits for S18 and P18.
  // FrameTimeline: 14's latch (S17) came after 16's deadline, so the
  // queue was stuffed and 16's deadline moves to S17 + period = S18, which
  // it meets: Buffer Stuffing, not App Deadline Missed.
  CHECK(r.log.frames[14].present == P(17));
  CHECK(r.log.frames[14].app_missed);
  CHECK(r.log.frames[16].app_end == W(14) + Time::ms(28));
  CHECK(r.log.frames[16].app_end > r.log.frames[16].app_deadline);
  CHECK(r.log.frames[16].present == P(18));
  CHECK(r.log.frames[16].buffer_stuffing);
  CHECK_FALSE(r.log.frames[16].app_missed);
  CHECK(r.disp->frames_started() == 11);
}

TEST_CASE("display: SurfaceFlinger delayed by a higher-priority FIFO task is sf-missed, not app-missed",
          "[display]") {
  // A SCHED_FIFO 3 task takes SF's CPU from S16 - 0.5 ms for 10 ms. SF
  // (FIFO 2) handles its S16 callback at 135499995 (its S17 callback would
  // be dropped as pending), latches frame 16 (frame 17 is early for P16),
  // commits at 136999995 > P16: frame 16 is sf-missed, app on time, shown
  // at P17. The next SF callback is S18 (P17 is taken): SF applies one
  // buffer per frame, so 17 is shown at P18, 18 at P19 and so on: each
  // behind its predecessor's latch (after its own deadline), on time by
  // the moved deadline: Buffer Stuffing, no jank.
  Rig r(fixed_params());
  r.build();
  r.add_fifo_hog(S(16) - Time::us(500), Time::ms(10));
  r.run(Time::ms(400));
  REQUIRE(r.log.frames.count(16) == 1);
  const FrameEvent& a = r.log.frames[16];
  CHECK_FALSE(a.app_missed);
  CHECK(a.sf_missed);
  CHECK(a.sf_end == Time::ns(136999995));
  CHECK(a.sf_deadline == P(16));
  CHECK(a.expected_present == P(16));
  CHECK(a.present == P(17));
  CHECK(a.janky);
  check_stuffed(r.log, 17, 25);
  CHECK(r.disp->sf_missed() == 1);
  CHECK(r.disp->app_missed() == 0);
  CHECK(r.disp->frames_dropped() == 0);
}

TEST_CASE("display: RenderThread waits in dequeueBuffer while every buffer is in use", "[display]") {
  // A SCHED_FIFO 3 task holds SF's CPU from S16 - 0.5 ms for 40 ms. With 3
  // buffers, frame 15's is on screen and 16 and 17 are queued: RenderThread
  // takes frame 18 and sleeps in dequeueBuffer until SF, running again at
  // S16 + 39.5 ms, latches 16 and releases 15's buffer (waker: SF).
  Rig r(fixed_params());
  r.build();
  r.add_fifo_hog(S(16) - Time::us(500), Time::ms(40));
  r.run(Time::ms(400));
  std::vector<Time> by_sf;
  for (const auto& w : r.log.wakes)
    if (w.task == "RenderThread" && w.waker == &r.disp->sf_task()) by_sf.push_back(w.t);
  REQUIRE_FALSE(by_sf.empty());
  CHECK(by_sf.front() == S(16) + Time::us(39500));
  REQUIRE(r.log.frames.count(16) == 1);
  CHECK(r.log.frames[16].sf_missed);
  // Frame 18 was drawn only once a buffer came back.
  REQUIRE(r.log.frames.count(18) == 1);
  CHECK(r.log.frames[18].app_end >= S(16) + Time::us(39500) + Time::ms(5));
}

TEST_CASE("display: a large SurfaceFlinger cost makes every frame sf-missed, not app-missed", "[display]") {
  // SF 7 ms + commit 0.5 ms from S_k = P_k - 7.333 ms ends after P_k; the
  // frame is shown at P_{k+1}. SF then skips S_{k+1} (P_{k+1} is taken)
  // and latches the next frame at S_{k+2}: one frame every other vsync,
  // none dropped; the app, a buffer short, falls behind (Choreographer
  // skips frames 22 and 24).
  DisplayParams dp = fixed_params();
  dp.sf_cost = fixed(Time::ms(7));
  Rig r(dp);
  r.build();
  r.run(Time::ms(400));
  REQUIRE(r.log.frames.count(14) == 1);
  CHECK(r.log.frames[14].sf_missed);
  CHECK_FALSE(r.log.frames[14].app_missed);
  CHECK(r.log.frames[14].present == P(15));
  CHECK(r.log.frames[15].present == P(17));
  CHECK(r.log.frames[16].sf_missed);
  CHECK(r.log.frames[16].present == P(19));
  for (const auto& [k, f] : r.log.frames) {
    INFO("frame " << k);
    CHECK(f.sf_missed);
    CHECK(f.janky);
    CHECK_FALSE(f.dropped);
  }
  CHECK(r.log.frames.count(22) == 0);
  CHECK(r.disp->frames_dropped() == 0);
  CHECK(r.disp->app_missed() == 0);
  CHECK(r.disp->sf_skipped() > 0);
  CHECK(r.disp->sf_missed() == r.disp->frames_presented());
}

TEST_CASE("display: no callbacks fire and no pipeline thread runs during the gaps", "[display]") {
  DisplayParams dp = fixed_params();
  dp.cycles = 2;  // windows [0.1, 0.2), [1.2, 1.3), [2.3, 2.4), [3.4, 3.5) s
  Rig r(dp);
  r.build();
  r.run(Time::s(6));
  CHECK(r.disp->frames_presented() >= 4 * 12);
  CHECK(r.disp->frames_presented() <= 4 * 13);
  CHECK(r.disp->frames_presented() == r.disp->frames_started());
  for (const auto& [k, f] : r.log.frames) {
    INFO("frame " << k);
    CHECK(r.disp->animating(f.vsync));
  }
  for (Time w : r.log.timer_wakes("ndroid.systemui")) CHECK(r.disp->animating(w));
  // Every wake-up and every run of the pipeline's threads (after their
  // start at 0) is within a window plus the frame's 16 ms of pipeline.
  auto near_window = [&](Time t) { return r.disp->animating(t) || r.disp->animating(t - Time::ms(16)); };
  for (const auto& w : r.log.wakes) {
    INFO(w.task << " woken at " << w.t.count());
    CHECK(near_window(w.t));
  }
  for (const auto& s : r.log.runs) {
    if (s.t == Time::zero()) continue;
    INFO(s.task << " ran at " << s.t.count());
    CHECK(near_window(s.t));
  }
  CHECK(r.log.wakes.back().t < Time::ms(3520));
}

TEST_CASE("display: vsync timing does not drift over many periods", "[display]") {
  // An animation that never ends; the app callback for vsync k must be at
  // exactly k * period - (app + sf) and the frame shown at k * period,
  // however many periods have passed.
  const double hz = GENERATE(120.0, 90.0, 60.0);
  DisplayParams dp = fixed_params();
  dp.refresh_hz = hz;
  dp.start_delay = Time::zero();
  dp.animation = Time::s(1);
  dp.gap = Time::zero();
  dp.cycles = -1;
  Rig r(dp);
  r.build();
  const int64_t period = std::llround(1e9 / hz);
  CHECK(r.disp->period() == Time::ns(period));
  const int64_t offset = 2 * period - 1000000;
  r.run(Time::s(120));
  std::vector<Time> wakes = r.log.timer_wakes("ndroid.systemui");
  REQUIRE(wakes.size() > static_cast<size_t>(120 * hz) - 5);
  const int64_t k0 = (wakes.front().count() + offset) / period;
  for (size_t i = 0; i < wakes.size(); ++i) {
    if (wakes[i] != Time::ns((k0 + static_cast<int64_t>(i)) * period - offset)) {
      FAIL("callback " << i << " at " << wakes[i].count());
    }
  }
  const FrameEvent& last = r.log.frames.rbegin()->second;
  CHECK(last.present == Time::ns(static_cast<int64_t>(last.vsync_id) * period));
  CHECK(last.vsync == Time::ns(static_cast<int64_t>(last.vsync_id) * period - offset));
  CHECK(r.disp->app_missed() == 0);
  CHECK(r.disp->sf_missed() == 0);
}

// vsync_threads: the app's vsync goes timer -> TimerDispatch (10 us) ->
// the app EventThread (20 us) -> UI thread; SF's goes timer ->
// TimerDispatch -> SF. TimerDispatch on CPU 2 with SF, the app EventThread
// on CPU 0 with the UI thread. Frame 14: the UI thread is woken by "app"
// at W14 + 30 us, and the frame ends 30 us later than without the threads:
// queued at W14 + 5.03 ms, GPU done at W14 + 7.03 ms. SF's callback for
// S14 and the app's for W15 expire together (W15 == S14) and TimerDispatch
// dispatches both in one 10 us run: SF and "app" are woken at S14 + 10 us
// and the UI thread hears of vsync 15 at S14 + 30 us. Both callbacks share
// VSyncDispatch's one timer, queued on the CPU of the thread that armed
// it: the app EventThread (CPU 0).
TEST_CASE("display: vsync reaches the UI thread and SurfaceFlinger through TimerDispatch and the app EventThread",
          "[display]") {
  DisplayParams dp = vsync_thread_params();
  Rig r(dp);
  r.build();
  REQUIRE(r.disp->timer_dispatch_task());
  REQUIRE(r.disp->app_event_task());
  CHECK(r.disp->timer_dispatch_task()->comm == "TimerDispatch");
  CHECK(r.disp->timer_dispatch_task()->policy == Policy::kFifo);
  CHECK(r.disp->app_event_task()->comm == "app");
  auto woken = [&](const std::string& comm, Time from) -> const FrameLog::Wake* {
    for (const auto& w : r.log.wakes)
      if (w.task == comm && w.t >= from) return &w;
    return nullptr;
  };
  r.run(W(14) + Time::us(5100));  // RenderThread queued frame 14 at W14 + 5.03 ms
  // VSyncDispatch's one timer, armed by the app EventThread (CPU 0) for
  // W15 after frame 14's dispatch; RenderThread's queueBuffer (CPU 1)
  // schedules SF's callback for S14 == W15, not earlier: no re-arm.
  CHECK(r.disp->vsync_timer_queued_cpu() == 0);
  r.run(Time::ms(130));
  // The first wake-up of `comm` at or after `from`: at `at`, by `waker`.
  auto check_woken = [&](const std::string& comm, Time from, Time at, const Task* waker) {
    INFO(comm << " woken after " << from.count());
    const FrameLog::Wake* w = woken(comm, from);
    REQUIRE(w);
    CHECK(w->t == at);
    CHECK(w->waker == waker);
  };
  Task* td = r.disp->timer_dispatch_task();
  Task* app = r.disp->app_event_task();
  check_woken("TimerDispatch", W(14), W(14), nullptr);
  check_woken("app", W(14), W(14) + Time::us(10), td);
  check_woken("ndroid.systemui", W(14), W(14) + Time::us(30), app);
  REQUIRE(r.log.frames.count(14) == 1);
  CHECK(r.log.frames[14].app_end == W(14) + Time::us(7030));
  CHECK_FALSE(r.log.frames[14].app_missed);
  check_woken("surfaceflinger", W(14), S(14) + Time::us(10), td);
  check_woken("app", W(15), S(14) + Time::us(10), td);
  check_woken("ndroid.systemui", W(15), S(14) + Time::us(30), app);
  CHECK(r.log.frames[14].present == P(14));
}

// vsync_threads, the app's requests (EventThread.cpp's vsyncRequest). The
// request that opens the window at 100 ms wakes the UI thread (no waker:
// the touch), which asks at once and wakes the app EventThread, which
// schedules the callback for W14. Each doFrame() asks for the next one
// while the next callback is in the window (Single again, no wake-up), so
// frames 14 .. 25 get theirs; doFrame 25 does not ask (W26 is past 200 ms):
// W26 still expires, TimerDispatch and the EventThread wake, nothing
// reaches the UI thread. Window 1 ([1200, 1300) ms) repeats it with frames
// 146 .. 157 and a suppressed W158. Idle redraws every 600 ms (600, 1800
// and 2400 ms; 1200 ms is inside window 1) each wake the UI thread, which
// asks: one frame each (74, 218, 290: the first callback after the
// request) and a suppressed callback after it. After the last window
// (cycles: 1) no window request fires. EventThread wake-ups: 14 per window
// and 3 per redraw, 37; callbacks dispatched 12 + 12 + 3.
TEST_CASE("display: the app asks for vsync one frame at a time, and the last frame's callback is suppressed",
          "[display]") {
  DisplayParams dp = vsync_thread_params();
  dp.idle_frame_interval = fixed(Time::ms(600));
  Rig r(dp);
  r.build();
  r.run(Time::ms(2500));
  Task* ui = &r.disp->ui_task();
  Task* td = r.disp->timer_dispatch_task();
  std::vector<FrameLog::Wake> app_wakes, ui_timer_wakes;
  for (const auto& w : r.log.wakes) {
    if (w.task == "app") app_wakes.push_back(w);
    if (w.task == ui->comm && !w.waker) ui_timer_wakes.push_back(w);
  }
  REQUIRE(app_wakes.size() == 37);
  CHECK(app_wakes.front().t == Time::ms(100));
  CHECK(app_wakes.front().waker == ui);
  int by_ui = 0;
  for (const auto& w : app_wakes) by_ui += w.waker == ui;
  CHECK(by_ui == 5);  // two windows, three redraws: every other wake-up is TimerDispatch's
  std::vector<Time> want_ui = {Time::ms(100), Time::ms(600), Time::ms(1200), Time::ms(1800), Time::ms(2400)};
  REQUIRE(ui_timer_wakes.size() == want_ui.size());
  for (size_t i = 0; i < want_ui.size(); ++i) CHECK(ui_timer_wakes[i].t == want_ui[i]);
  CHECK(r.disp->app_vsyncs() == 27);
  for (int64_t k : {14, 25, 74, 146, 157, 218, 290}) {
    INFO("frame " << k);
    CHECK(r.log.frames.count(static_cast<uint64_t>(k)) == 1);
  }
  for (int64_t k : {26, 75, 158}) CHECK(r.log.frames.count(static_cast<uint64_t>(k)) == 0);
  // W26's expiry: TimerDispatch, then the EventThread, and no UI thread.
  bool td_at_w26 = false, app_after_w26 = false;
  for (const auto& w : r.log.wakes) {
    td_at_w26 |= w.task == td->comm && w.t == W(26);
    app_after_w26 |= w.task == "app" && w.t == W(26) + Time::us(10) && w.waker == td;
  }
  CHECK(td_at_w26);
  CHECK(app_after_w26);
  CHECK(app_wakes.back().t == W(291) + Time::us(10));  // the last redraw's suppressed callback
}

// vsync_threads: SF's and the app's callbacks share VSyncDispatch's one
// timer. With app_duration = period -/+ 66.667 us, SF's callback for vsync
// k (S(k)) is due 66.667 us before / after the app's for k + 1 (A(k+1));
// the first is Pixel's case (16.6 / 10.5 ms durations). The app
// EventThread armed the timer for A(15) (CPU 0) after frame 14's
// dispatch; RenderThread's queueBuffer then schedules S14, less than
// 500 us earlier: no re-arm. One expiry at A(15) runs both (due within
// kGroupDispatchWithin of it): TimerDispatch wakes once, and SF hears of
// its frame 66.667 us late / early, at A(15) + 10 us.
TEST_CASE("display: SurfaceFlinger's and the app's callbacks due within 500 us share one timer expiry",
          "[display]") {
  for (int64_t shift : {-66667, 66667}) {
    INFO("app_duration = period + " << shift << " ns");
    DisplayParams dp = vsync_thread_params();
    dp.app_duration = Time::ns(kPeriod + shift);
    Rig r(dp);
    r.build();
    r.run(Time::ms(130));
    const Time a15 = Time::ns(15 * kPeriod) - dp.app_duration - Time::ns(kSf);
    REQUIRE(S(14) - a15 == Time::ns(shift));
    Task* td = r.disp->timer_dispatch_task();
    int td_wakes = 0;
    const FrameLog::Wake* sf_wake = nullptr;
    for (const auto& w : r.log.wakes) {
      if (w.task == td->comm && w.t >= std::min(a15, S(14)) - Time::us(1) && w.t <= std::max(a15, S(14))) ++td_wakes;
      if (w.task == "surfaceflinger" && w.t >= std::min(a15, S(14)) && !sf_wake) sf_wake = &w;
    }
    CHECK(td_wakes == 1);
    REQUIRE(sf_wake);
    CHECK(sf_wake->t == a15 + Time::us(10));
    CHECK(sf_wake->waker == td);
  }
}

// vsync_threads, an animation that never stops (geekbench6's set-up: no
// gap, cycles -1) and is open at construction: the request at 0 wakes the
// UI thread, which wakes the EventThread; it schedules the first callback
// still ahead, W2 (1 ms). Every doFrame then asks in time, and each later
// window's opening request finds the connection asking already: the
// EventThread is never again woken by the UI thread, and every vsync from
// 2 on has its frame.
TEST_CASE("display: a gapless animation open at construction asks once and then every frame in time",
          "[display]") {
  DisplayParams dp = vsync_thread_params();
  dp.start_delay = Time::zero();
  dp.gap = Time::zero();
  dp.cycles = -1;
  Rig r(dp);
  r.build();
  r.run(Time::ms(300));
  Task* ui = &r.disp->ui_task();
  int app_by_ui = 0;
  Time first_app = Time::max();
  for (const auto& w : r.log.wakes) {
    if (w.task != "app") continue;
    app_by_ui += w.waker == ui;
    first_app = std::min(first_app, w.t);
  }
  CHECK(app_by_ui == 1);
  CHECK(first_app == Time::zero());
  CHECK(r.log.frames.count(1) == 0);
  for (int64_t k = 2; k <= 34; ++k) {
    INFO("frame " << k);
    REQUIRE(r.log.frames.count(static_cast<uint64_t>(k)) == 1);
    CHECK(r.log.frames[static_cast<uint64_t>(k)].vsync == W(k));
  }
}

// vsync_threads: callbacks more than 500 us apart, and a late TimerDispatch.
// With app_duration = period - 1 ms, S14 is due 1 ms before A15: when
// RenderThread's queueBuffer (CPU 1) schedules S14 it re-arms the timer,
// which the app EventThread had armed for A15 (CPU 0). A SCHED_FIFO 3 task
// on CPU 2 holds TimerDispatch (and SF) from S14 - 100 us for 2 ms; its
// round at S14 + 1.9 ms runs every callback due within 500 us + 1.9 ms of
// its intended wake-up (timerCallback()'s lag allowance): SF's and the
// app's together, both woken at S14 + 1.91 ms.
TEST_CASE("display: a callback due more than 500 us earlier re-arms the timer, and a late round takes what is due",
          "[display]") {
  DisplayParams dp = vsync_thread_params();
  dp.app_duration = Time::ns(kPeriod - 1000000);
  Rig r(dp);
  r.add_fifo_hog(S(14) - Time::us(100), Time::ms(2));
  r.build();
  r.run(S(14) - Time::us(200));
  CHECK(r.disp->vsync_timer_queued_cpu() == 1);
  r.run(Time::ms(140));
  Task* td = r.disp->timer_dispatch_task();
  const FrameLog::Wake* sf_wake = nullptr;
  const FrameLog::Wake* app_wake = nullptr;
  for (const auto& w : r.log.wakes) {
    if (w.task == "surfaceflinger" && w.t >= S(14) && !sf_wake) sf_wake = &w;
    if (w.task == "app" && w.t >= S(14) && !app_wake) app_wake = &w;
  }
  REQUIRE(sf_wake);
  REQUIRE(app_wake);
  CHECK(sf_wake->t == S(14) + Time::us(1910));
  CHECK(app_wake->t == S(14) + Time::us(1910));
  CHECK(app_wake->waker == td);
}

// A redraw message reaches the UI thread only in its Looper. Redraws every
// 4 ms from 4 ms, before any window; a SCHED_FIFO 1 task holds RenderThread's
// CPU (1) from 0 to 50 ms. The redraw at 4 ms gets callback W3 (9.33 ms);
// doFrame 3 ends at W3 + 2.03 ms and the UI thread then waits in
// postAndWait() for RenderThread until 50 ms: the redraws at 12 .. 48 ms
// must not wake it there (nor wake RenderThread, busy in nothing but
// waiting for its CPU).
TEST_CASE("display: a redraw message does not wake a UI thread waiting in postAndWait()", "[display]") {
  DisplayParams dp = vsync_thread_params();
  dp.idle_frame_interval = fixed(Time::ms(4));
  Rig r(dp);
  r.add_ui_cpu_hog(Time::zero(), Time::ms(50), 1);
  r.build();
  r.run(Time::ms(80));  // frame 3 reaches the screen by then
  Task* ui = &r.disp->ui_task();
  int woken_in_sync_wait = 0, woken_before = 0;
  for (const auto& w : r.log.wakes) {
    if (w.task != ui->comm || w.waker) continue;
    if (w.t > W(3) + Time::us(2100) && w.t < Time::ms(50)) ++woken_in_sync_wait;
    if (w.t <= Time::ms(8)) ++woken_before;
  }
  CHECK(woken_before == 2);  // 4 and 8 ms: in its Looper
  CHECK(woken_in_sync_wait == 0);
  CHECK(r.log.frames.count(3) == 1);
}

// Nor does a vsync: in the window, RenderThread's CPU is held from W14 for
// 20 ms, so after doFrame 14 (to W14 + 2.03 ms) the UI thread waits in
// postAndWait(); callback 15, which doFrame 14 asked for, is dispatched at
// W15 + 30 us but wakes nobody until the UI thread is back in its Looper.
TEST_CASE("display: a vsync does not wake a UI thread waiting in postAndWait()", "[display]") {
  DisplayParams dp = vsync_thread_params();
  Rig r(dp);
  r.add_ui_cpu_hog(W(14), Time::ms(20), 1);
  r.build();
  r.run(Time::ms(140));
  Task* ui = &r.disp->ui_task();
  Task* app = r.disp->app_event_task();
  int woken = 0;
  for (const auto& w : r.log.wakes)
    if (w.task == ui->comm && w.waker == app && w.t > W(14) + Time::us(2100) && w.t < W(14) + Time::ms(20)) ++woken;
  CHECK(woken == 0);
  CHECK(r.disp->app_vsyncs() >= 2);
}

// vsync_threads: a UI thread that asks too late. A SCHED_FIFO 1 task holds
// CPU 0 (the UI thread's; the app EventThread, FIFO 2, still runs there)
// from W15 - 1 ms for 10 ms. Callback 15 is dispatched (the UI thread asked
// for it in doFrame 14) but the UI thread cannot take it; W16 finds
// SingleSuppressCallback: nothing is dispatched and nothing scheduled.
// When the hog exits (W15 + 9 ms, + 2 x 20 us of EventThread rounds at W15
// and W16 that preempted it) doFrame skips to vsync 16 and asks again,
// from None: the UI thread wakes the EventThread, which schedules W17.
TEST_CASE("display: a UI thread that asks after the next callback expired loses it and wakes the EventThread",
          "[display]") {
  DisplayParams dp = vsync_thread_params();
  Rig r(dp);
  r.add_ui_cpu_hog(W(15) - Time::ms(1), Time::ms(10));
  r.build();
  r.run(Time::ms(150));
  Task* ui = &r.disp->ui_task();
  Task* app = r.disp->app_event_task();
  const FrameLog::Wake* asked = nullptr;
  int ui_wakes_by_app_w16 = 0;
  for (const auto& w : r.log.wakes) {
    if (w.task == "app" && w.waker == ui && w.t > W(16) && !asked) asked = &w;
    if (w.task == ui->comm && w.waker == app && w.t >= W(16) && w.t < W(17)) ++ui_wakes_by_app_w16;
  }
  REQUIRE(asked);
  CHECK(asked->t == W(15) + Time::ms(9) + Time::us(40));
  CHECK(ui_wakes_by_app_w16 == 0);  // callback 16 was suppressed
  CHECK(r.log.frames.count(15) == 0);
  CHECK(r.log.frames.count(16) == 1);  // the late doFrame skipped to 16
  CHECK(r.log.frames.count(17) == 1);
  CHECK(r.log.frames[17].vsync == W(17));
}

// vsync_threads: the request that opens a window is the UI thread's, so it
// waits for that thread. A SCHED_FIFO 1 task holds CPU 0 from 95 to 110 ms:
// the touch at 100 ms wakes the UI thread, which asks only at 110 ms; the
// EventThread (20 us) schedules the first callback still ahead, W16
// (W15 = 109.3 ms has passed). Frames 14 and 15 never start.
TEST_CASE("display: the request that opens a window waits for a busy UI thread", "[display]") {
  DisplayParams dp = vsync_thread_params();
  Rig r(dp);
  r.add_ui_cpu_hog(Time::ms(95), Time::ms(15));
  r.build();
  r.run(Time::ms(150));
  Task* ui = &r.disp->ui_task();
  const FrameLog::Wake* asked = nullptr;
  for (const auto& w : r.log.wakes)
    if (w.task == "app" && !asked) asked = &w;
  REQUIRE(asked);
  CHECK(asked->t == Time::ms(110));
  CHECK(asked->waker == ui);
  CHECK(r.log.frames.count(14) == 0);
  CHECK(r.log.frames.count(15) == 0);
  REQUIRE(r.log.frames.count(16) == 1);
  CHECK(r.log.frames[16].vsync == W(16));
}

// vsync_request_binder: requestNextVsync() is a one-way binder call that a
// SurfaceFlinger binder thread (one, nice 0, on CPU 1) serves (10 us) and
// that wakes the EventThread only from None. In the window of the first
// test the touch's request and doFrame 14 .. 24's (12 transactions, the
// binder thread woken by the UI thread each time) reach it; only the
// first, from None, wakes the EventThread (at 100 ms + 10 us). With the
// hog of the second test, the late request (from doFrame 16 at
// W15 + 9.04 ms) wakes it through the binder thread 10 us later.
TEST_CASE("display: the UI thread's vsync requests go through SurfaceFlinger's binder pool", "[display]") {
  DisplayParams dp = vsync_thread_params();
  dp.vsync_request_binder = "surfaceflinger";
  BinderProcParams bp;
  bp.name = "surfaceflinger";
  bp.cpus = {1};
  bp.android = true;
  for (bool late : {false, true}) {
    INFO((late ? "with" : "without") << " the hog");
    Rig r(dp);
    BinderProc sf_binder(*r.k, bp);
    if (late) r.add_ui_cpu_hog(W(15) - Time::ms(1), Time::ms(10));
    r.build(nullptr, nullptr, nullptr, &sf_binder);
    r.run(Time::ms(late ? 150 : 300));
    Task& ui = r.disp->ui_task();
    Task& server = sf_binder.thread_task(0);
    std::vector<FrameLog::Wake> app_by_server, server_by_ui;
    for (const auto& w : r.log.wakes) {
      if (w.task == "app" && w.waker == &server) app_by_server.push_back(w);
      if (w.task == server.comm && w.waker == &ui) server_by_ui.push_back(w);
    }
    REQUIRE_FALSE(app_by_server.empty());
    CHECK(app_by_server[0].t == Time::ms(100) + Time::us(10));
    if (!late) {
      CHECK(sf_binder.transactions() == 12);
      CHECK(server_by_ui.size() == 12);
      CHECK(app_by_server.size() == 1);
      CHECK(r.disp->app_vsyncs() == 12);
    } else {
      REQUIRE(app_by_server.size() == 2);
      CHECK(app_by_server[1].t == W(15) + Time::ms(9) + Time::us(40) + Time::us(10));
      CHECK(r.log.frames.count(17) == 1);
    }
  }
}

// hw_vsync_resync (Scheduler::resync(), AOSP 14 / 15): the first window
// opens at 1000 ms, more than 750 ms after SF started (mLastResyncTime 0),
// so the UI thread's request there turns hardware vsync on: it posts the
// switch to SF's main thread (woken by the UI thread at 1000 ms, idle on
// CPU 2), which runs 30 us and has the composer register its first vblank
// wait, for the next vblank, P121 (P120 = 999.99996 ms). Each vblank event
// wakes the composer's thread (FIFO 1, CPU 3; no waker: the interrupt),
// which registers the next wait and runs 20 us, then calls SF: directly,
// or by a one-way call to SF's hwbinder pool (one thread on CPU 3, FIFO 2
// by its node's minimum: HidlComposer::registerCallback()), 10 us more.
// SF's predictor is trained (a slope fitted): the resync starts a period
// transition, present fences ignored. Samples P121 .. P126 are the 6: the
// last disables (SF's main thread, idle again, woken by the caller 20 or
// 30 us after P126, turns the composer's vsync off), and the wait already
// registered delivers P127's event, which the composer drops
// (DisplayBuiltIn::VSync()): 7 events, 6 samples, 6 calls.
// Untrained (SF just started), the resync takes present fences: SF
// composites frame k at P(k-1) + 2.5 ms, its fence stamped P(k). Sample 1
// is P121; frame 122's composite leaves its fence pending; sample 2 is
// P122; frame 123's composite finds that fence signalled at P122, a
// timestamp the predictor holds: rejected ("duplicate"), and with fewer
// than 6 held the predictor starts over (fences ignored from then).
// Samples P123 .. P128 are the 6, P129's event is dropped: 9 events, 8
// samples, 8 calls. The window's later requests come within 750 ms of
// the previous one: no resync; window 1 (2100 ms) comes a second after
// window 0's last one and resyncs again, with the predictor trained by
// window 0: 6 samples, 7 events.
TEST_CASE("display: a vsync request after 750 ms without one turns hardware vsync on until six samples in a row",
          "[display]") {
  const bool binder = GENERATE(false, true);
  const bool trained = GENERATE(true, false);
  INFO((binder ? "onVsync() through SF's hwbinder pool" : "the sample with no thread of its own"));
  INFO((trained ? "a trained predictor" : "SF just started"));
  DisplayParams dp = hw_vsync_params(fixed_params(), trained);
  dp.hw_vsync_thread.cpus = {3};
  BinderProcParams bp;
  bp.name = "surfaceflinger_hw";
  bp.cpus = {3};
  bp.android = true;
  bp.min_policy = Policy::kFifo;
  bp.min_rt_priority = 2;
  if (binder) dp.hw_vsync_binder = bp.name;
  Rig r(dp, 4);
  BinderProc sf_hw(*r.k, bp);
  if (binder) r.hw_vsync_binder = &sf_hw;
  r.build();
  r.run(Time::ms(1400));
  Task* hwc = r.disp->hwc_event_task();
  REQUIRE(hwc);
  CHECK(hwc->policy == Policy::kFifo);
  CHECK(hwc->rt_priority == 1);
  const int64_t last_sample = trained ? 126 : 128;
  std::vector<Time> events;
  for (int64_t k = 121; k <= last_sample + 1; ++k) events.push_back(P(k));
  CHECK(wakes_by(r.log, hwc, nullptr) == events);
  CHECK(r.disp->hw_vsync_resyncs() == 1);
  const uint64_t samples = trained ? 6 : 8;
  CHECK(r.disp->hwc_vsync_events() == samples + 1);
  CHECK(r.disp->hw_vsync_samples() == samples);
  Task* sf = &r.disp->sf_task();
  CHECK(wakes_by(r.log, sf, &r.disp->ui_task()) == std::vector<Time>{Time::ms(1000)});
  Task* sampler = binder ? &sf_hw.thread_task(0) : hwc;
  CHECK(wakes_by(r.log, sf, sampler) == std::vector<Time>{P(last_sample) + Time::us(binder ? 30 : 20)});
  CHECK(sf_hw.transactions() == (binder ? samples : 0u));
  r.run(Time::ms(2300));
  CHECK(r.disp->hw_vsync_resyncs() == 2);
  CHECK(r.disp->hwc_vsync_events() == samples + 1 + 7);
  CHECK(r.disp->hw_vsync_samples() == samples + 6);
}

// SF just started (hw_vsync_predictor_trained: false): the resync clears
// the reactor's mMoreSamplesNeeded (onDisplayModeChanged()'s same-period
// branch) before any sample has come, so a composite then
// (addPresentFence() accepted, no samples asked for) disables hardware
// vsync again. Here a SCHED_FIFO 1 task holds the composer's CPU (3) from
// 999 to 1029 ms: the P121 event waits there, and frame 122's composite
// (P121 + 2.5 ms) turns hardware vsync off; when the composer's thread
// runs, its vsync is off: no new wait, the event dropped. One event, no
// sample. Trained, the resync ignores fences and asks for samples: the
// composer's thread, run at 1029 ms, registers a wait for the next vblank
// (P124: P123 is at 1025 ms), so the samples are P121, P124 .. P128 and
// P129's event is dropped.
TEST_CASE("display: a composer thread held off its CPU misses vblanks, and SF just started turns hardware vsync off",
          "[display]") {
  const bool trained = GENERATE(true, false);
  INFO((trained ? "a trained predictor" : "SF just started"));
  DisplayParams dp = hw_vsync_params(fixed_params(), trained);
  dp.hw_vsync_thread.cpus = {3};
  Rig r(dp, 4);
  r.add_ui_cpu_hog(Time::ms(999), Time::ms(30), 3);
  r.build();
  r.run(Time::ms(1400));
  Task* hwc = r.disp->hwc_event_task();
  std::vector<Time> events{P(121)};
  if (trained)
    for (int64_t k = 124; k <= 129; ++k) events.push_back(P(k));
  CHECK(wakes_by(r.log, hwc, nullptr) == events);
  std::vector<Time> hwc_runs;
  for (const auto& run : r.log.runs)
    if (run.task == hwc->comm) hwc_runs.push_back(run.t);
  REQUIRE(hwc_runs.size() >= 2);
  CHECK(hwc_runs[0] == Time::zero());  // its start
  CHECK(hwc_runs[1] == Time::ms(1029));
  CHECK(r.disp->hw_vsync_resyncs() == 1);
  CHECK(r.disp->hwc_vsync_events() == (trained ? 7u : 1u));
  CHECK(r.disp->hw_vsync_samples() == (trained ? 6u : 0u));
  REQUIRE(r.log.frames.count(122) == 1);
  CHECK(r.log.frames[122].present == P(122));
}

// input_threads: the touch path on its own CPU (3). Window 0 is touched
// from 100 to 200 ms: reports every 8,333,333 ns from 100 ms, 13 of them
// (the 13th at 199.999996 ms, just before the lift at 200 ms). Each
// report's interrupt wakes the IRQ thread (no waker, on CPU 3), which
// runs 50 us and wakes InputReader, which runs 100 us and wakes
// InputDispatcher, which runs 100 us and wakes the UI thread's Looper:
// 250 us after the report. The first report is the touch-down: the UI
// thread handles it at once (300 us), finishes it (InputDispatcher woken
// by the UI thread at 100.55 ms) and, no frame being scheduled, asks for
// vsync then (the app EventThread, woken by it, schedules W14 as before).
// Later reports are batched and find a frame scheduled. A frame takes the
// samples no later than its frame time (W) - 5 ms (touch resampling):
// report j (100 + 8.333 j ms) goes to frame j + 15, so doFrame() 15
// (W15 = 109.33 ms, sample time 104.33 ms) leaves the second report (at
// 108.33 ms, read at 108.58 ms) batched and doFrame() 16 finishes it.
TEST_CASE("display: a touch report reaches the UI thread through the IRQ thread, InputReader and InputDispatcher",
          "[display][input]") {
  DisplayParams dp = input_thread_params();
  Rig r(dp, 4);
  r.build();
  r.run(Time::ms(1400));
  Task* irq = r.disp->touch_irq_task();
  Task* reader = r.disp->input_reader_task();
  Task* dispatcher = r.disp->input_dispatcher_task();
  Task* ui = &r.disp->ui_task();
  REQUIRE(irq);
  REQUIRE(reader);
  REQUIRE(dispatcher);
  CHECK(irq->comm == "irq/touch");
  CHECK(irq->policy == Policy::kFifo);
  CHECK(irq->rt_priority == 50);
  CHECK(irq->nr_cpus_allowed == 1);
  CHECK(irq->cpus_allowed[3]);
  CHECK(reader->nice() == -8);
  CHECK(dispatcher->nice() == -8);
  auto wakes_of = [&](const Task* p) {
    std::vector<FrameLog::Wake> v;
    for (const auto& w : r.log.wakes)
      if (w.task == p->comm) v.push_back(w);
    return v;
  };
  const auto irq_wakes = wakes_of(irq), reader_wakes = wakes_of(reader), ui_wakes = wakes_of(ui);
  // Two windows (cycles: 1) of 13 reports.
  CHECK(r.disp->touch_reports() == 26);
  CHECK(r.disp->input_events_received() == 26);
  REQUIRE(irq_wakes.size() == 26);
  const Time report = Time::ns(std::llround(1e9 / 120.0));
  for (int j = 0; j < 13; ++j) {
    INFO("report " << j);
    CHECK(irq_wakes[static_cast<size_t>(j)].t == Time::ms(100) + Time::ns(j * report.count()));
    CHECK(irq_wakes[static_cast<size_t>(j)].waker == nullptr);
    CHECK(irq_wakes[static_cast<size_t>(13 + j)].t == Time::ms(1200) + Time::ns(j * report.count()));
  }
  REQUIRE(reader_wakes.size() == 26);
  CHECK(reader_wakes[0].t == Time::ms(100) + Time::us(50));
  CHECK(reader_wakes[0].waker == irq);
  // The dispatcher: the motion (by InputReader), then the finish (by the UI thread).
  std::vector<FrameLog::Wake> by_reader, by_ui;
  for (const auto& w : wakes_of(dispatcher)) (w.waker == reader ? by_reader : by_ui).push_back(w);
  REQUIRE(by_reader.size() == 26);
  CHECK(by_reader[0].t == Time::ms(100) + Time::us(150));
  REQUIRE_FALSE(by_ui.empty());
  CHECK(by_ui[0].waker == ui);
  CHECK(by_ui[0].t == Time::ms(100) + Time::us(550));
  REQUIRE(by_ui.size() >= 2);
  CHECK(by_ui[1].waker == ui);
  CHECK(by_ui[1].t == W(16) + Time::us(30));
  // Every wake-up of the UI thread has a waker: no touch out of nowhere.
  for (const auto& w : ui_wakes) CHECK(w.waker != nullptr);
  REQUIRE_FALSE(ui_wakes.empty());
  CHECK(ui_wakes[0].t == Time::ms(100) + Time::us(250));
  CHECK(ui_wakes[0].waker == dispatcher);
  // The UI thread's request at the touch-down wakes the app EventThread.
  bool app_by_ui = false;
  for (const auto& w : r.log.wakes) app_by_ui |= w.task == "app" && w.waker == ui && w.t == Time::ms(100) + Time::us(550);
  CHECK(app_by_ui);
  // Frames 14 and 16 .. 28, 146 and 148 .. 160: doFrame() 15 consumed
  // nothing (report 1 is too new for it) while the finger holds the
  // views, so it drew nothing; doFrame() 25 asks for no animation
  // frame (W26 is past the window) but it consumed report 10 and its
  // batch still holds report 11 (191.67 ms, after its sample time
  // 187.67 ms), so it asks for frame 26; doFrame() 26 takes report 11 and
  // leaves report 12 (200.0 ms, read at 200.25 ms) for frame 27 (the
  // finger's last move is drawn), which consumed it and so asks for one
  // more (ConsumeBatchedInputRunnable), frame 28, which takes nothing.
  CHECK(r.disp->app_vsyncs() == 30);
  for (int64_t w0 : {14, 146}) {
    INFO("window from frame " << w0);
    CHECK(r.log.frames.count(static_cast<uint64_t>(w0)) == 1);
    for (int64_t k = w0 + 2; k <= w0 + 14; ++k) CHECK(r.log.frames.count(static_cast<uint64_t>(k)) == 1);
    for (int64_t k : {w0 - 1, w0 + 1, w0 + 15}) CHECK(r.log.frames.count(static_cast<uint64_t>(k)) == 0);
  }
  CHECK(r.disp->input_only_frames() == 2);
}

// The touch IRQ thread shares CPU 3 with a nice 0 hog (and InputReader,
// InputDispatcher): SCHED_FIFO 50 preempts the fair hog at once
// (wakeup_preempt() across classes, preempt full), so every report's
// handler runs from its interrupt's time, and InputReader is woken 50 us
// later, as on an idle CPU. The hog keeps the rest of the CPU.
TEST_CASE("display: the touch IRQ thread preempts a fair task on its CPU at once", "[display][input]") {
  DisplayParams dp = input_thread_params();
  Rig r(dp, 4);
  class Spin : public TaskBody {
   public:
    Action next(Task&) override { return Action::run(Time::s(10).count()); }
  } spin;
  Task& hog = r.k->create_task("hog", "hog", Policy::kNormal, 0, 0, {3}, false);
  r.k->set_body(hog, &spin);
  r.k->start_task_at(hog, Time::zero());
  r.build();
  r.run(Time::ms(300));
  Task* irq = r.disp->touch_irq_task();
  Task* reader = r.disp->input_reader_task();
  REQUIRE(irq);
  std::vector<Time> irq_wakes, irq_runs, reader_wakes;
  for (const auto& w : r.log.wakes) {
    if (w.task == irq->comm) irq_wakes.push_back(w.t);
    if (w.task == reader->comm && w.waker == irq) reader_wakes.push_back(w.t);
  }
  for (const auto& w : r.log.runs)
    if (w.task == irq->comm && w.t >= Time::ms(100)) irq_runs.push_back(w.t);  // not its start at 0
  REQUIRE(irq_wakes.size() == 13);
  REQUIRE(irq_runs.size() == 13);
  REQUIRE(reader_wakes.size() == 13);
  for (size_t j = 0; j < 13; ++j) {
    INFO("report " << j);
    CHECK(irq_runs[j] == irq_wakes[j]);
    CHECK(reader_wakes[j] == irq_wakes[j] + Time::us(50));
  }
  CHECK(r.disp->input_events_received() == 13);
  CHECK(hog.se.sum_exec_runtime > Time::ms(150).count());
}

// A touch-down read together with older moves: windows [100, 200) and
// [201, 301) ms (gap 1 ms), a FIFO hog on the UI thread's CPU from 199.5
// to 202.52 ms (3 ms of work; the app EventThread, FIFO 2, takes 20 us of
// it at W26). The UI thread has report 11 (191.67 ms) batched; report 12
// (200.0 ms, published at 200.25 ms) and window 1's touch-down (201.0 ms,
// published at 201.25 ms) wait for it and are read together at
// 202.52 ms. The touch-down consumes the batch and everything read up to
// it (InputConsumer flushes the batch before a motion that cannot join
// it): reports 11 and 12 and the down are finished at 202.82 ms, after
// the down's 300 us, and nothing stays batched, so doFrame() 27 (W27 +
// 30 us) finishes nothing: InputDispatcher is not woken by the UI thread
// then. (Taking the down for the first motion read left its time batched
// as a move, finished by doFrame() 27.)
TEST_CASE("display: a touch-down read with older moves consumes them all", "[display][input]") {
  DisplayParams dp = input_thread_params();
  dp.gap = Time::ms(1);
  Rig r(dp, 4);
  r.add_ui_cpu_hog(Time::us(199500), Time::ms(3));
  r.build();
  r.run(Time::ms(400));
  Task* dispatcher = r.disp->input_dispatcher_task();
  Task* ui = &r.disp->ui_task();
  REQUIRE(dispatcher);
  CHECK(r.disp->input_events_received() == 26);
  std::vector<Time> by_ui;
  for (const auto& w : r.log.wakes)
    if (w.task == dispatcher->comm && w.waker == ui) by_ui.push_back(w.t);
  CHECK(std::find(by_ui.begin(), by_ui.end(), Time::us(202820)) != by_ui.end());
  CHECK(std::find(by_ui.begin(), by_ui.end(), W(27) + Time::us(30)) == by_ui.end());
}

// A report's motion for a UI thread away from its Looper waits in the
// InputChannel: the dispatcher does not wake it; it reads the motion when
// back. A FIFO hog on RenderThread's CPU (1) from 105 to 125 ms keeps
// RenderThread from syncing frame 15 (doFrame() from W15 = 109.67 ms to
// 111.67 ms): the UI thread sleeps in postAndWait() until about 125 ms.
// Reports at 1000 Hz publish a motion every millisecond meanwhile: none
// wakes it there, and none is lost.
TEST_CASE("display: motions for a UI thread away from its Looper wait for it", "[display][input]") {
  DisplayParams dp = input_thread_params(1000);
  Rig r(dp, 4);
  r.add_ui_cpu_hog(Time::ms(105), Time::ms(20), 1);
  r.build();
  r.run(Time::ms(300));
  CHECK(r.disp->touch_reports() == 100);
  CHECK(r.disp->input_events_received() == 100);
  Task* ui = &r.disp->ui_task();
  Task* dispatcher = r.disp->input_dispatcher_task();
  int by_dispatcher = 0, in_post_and_wait = 0;
  for (const auto& w : r.log.wakes) {
    if (w.task != ui->comm || w.waker != dispatcher) continue;
    ++by_dispatcher;
    in_post_and_wait += w.t > Time::ms(112) && w.t < Time::ms(124);
  }
  CHECK(in_post_and_wait == 0);
  // The rest find it in its Looper, or running (no wake-up then).
  CHECK(by_dispatcher > 40);
  CHECK(by_dispatcher < 100);
}

// Choreographer asks once per frame (mFrameScheduled): with the requests
// through SurfaceFlinger's binder pool, window 0 costs 15 transactions:
// the touch-down's motion (nothing scheduled yet), doFrame() 14 .. 24
// (each asks for the next while W(k+1) is in the window), doFrame() 25
// and 26, each leaving a report too new for its frame (resampling)
// batched, and doFrame() 27, which consumed the last. The 12 other
// motions find a frame scheduled. The trailing
// frame 26 is no window's first: it runs ui_cost (2 ms), not
// first_ui_cost (4 ms here), like frame 25.
TEST_CASE("display: input motions ask for a frame only when none is scheduled", "[display][input]") {
  DisplayParams dp = input_thread_params();
  dp.vsync_request_binder = "surfaceflinger";
  dp.first_ui_cost = fixed(Time::ms(4));
  BinderProcParams bp;
  bp.name = "surfaceflinger";
  bp.cpus = {3};
  bp.android = true;
  Rig r(dp, 4);
  BinderProc sf_binder(*r.k, bp);
  r.build(nullptr, nullptr, nullptr, &sf_binder);
  r.run(Time::ms(300));
  CHECK(r.disp->touch_reports() == 13);
  CHECK(sf_binder.transactions() == 15);
  REQUIRE(r.log.frames.count(14) == 1);
  REQUIRE(r.log.frames.count(25) == 1);
  REQUIRE(r.log.frames.count(26) == 1);
  auto app_time = [&](uint64_t k) { return r.log.frames[k].app_end - r.log.frames[k].vsync; };
  CHECK(app_time(14) - app_time(25) == Time::ms(2));
  CHECK(app_time(26) == app_time(25));
}

// input_source: injected, the test's thread, system_server's binder
// thread and InputDispatcher all on CPU 3 (each sleeps while the next
// runs). Window 0 ([100, 200) ms): the test's sleep ends at 100 ms; it
// runs 100 us and calls injectInputEvent() (WF_SYNC wake of the binder
// thread at 100.1 ms), which runs 50 us, queues the touch-down and wakes
// InputDispatcher (100.15 ms) and waits; InputDispatcher publishes it
// (100 us: the UI thread woken at 100.25 ms), which handles it at once
// (300 us) and finishes it (InputDispatcher woken at 100.55 ms, 30 us),
// which ends the binder thread's wait (100.58 ms), whose reply wakes the
// test's thread; it sleeps 5 ms. The move injected at 105.58 ms (its
// time 105 ms: uptimeMillis(); queued at 105.73 ms) is batched; doFrame()
// 15 (W15 + 30 us, after TimerDispatch and the app EventThread) takes
// only samples no later than W15 - 5 ms = 104.33 ms (touch resampling),
// so doFrame() 16 (sample time 112.67 ms) takes it, whose finish ends
// that injection at W16 + 60 us. The next move (W16 + 5.06 ms, time
// 122 ms) misses frame 17's sample time (121.0 ms) and goes to frame 18,
// and so on: a move every other frame, finished by doFrame() 16, 18, ..,
// 26 (the last, injected at W24 + 5.06 ms, makes doFrame() 25 ask for
// frame 26). The sleep after it ends at W26 + 5.06 ms, past the window:
// touchUp() injects the lift (time 206 ms), which the UI thread handles at
// once (300 us) and finishes, so the test's thread is answered at W26 +
// 5.06 + 0.58 ms and sleeps until window 1 (1200 ms). Frame 27 is the one
// doFrame() 26 asked for after consuming the last move. The finger holds
// the views from the touch-down to the lift: frame 14 (asked for by the
// touch-down), the frames that consumed a move (16, 18, .., 26) and frame
// 27 (the lift) draw; doFrame() 15, 17, .., 25 consumed nothing and only
// asked for the next frame: no frame of theirs. No touch interrupt and no
// InputReader run.
TEST_CASE("display: an injected swipe reaches the UI thread through system_server's binder thread and InputDispatcher",
          "[display][input]") {
  DisplayParams dp = injected_params();
  dp.inject_sync_input = false;  // the input-window sync has its own tests
  Rig r(dp, 4);
  BinderProc ss(*r.k, system_server_on_cpu3());
  r.build(nullptr, nullptr, nullptr, nullptr, &ss);
  r.run(Time::ms(1400));
  CHECK(r.disp->touch_irq_task() == nullptr);
  CHECK(r.disp->input_reader_task() == nullptr);
  CHECK(r.disp->touch_reports() == 0);
  Task* injector = r.disp->injector_task();
  Task* dispatcher = r.disp->input_dispatcher_task();
  Task* ui = &r.disp->ui_task();
  Task* server = &ss.thread_task(0);
  REQUIRE(injector);
  CHECK(injector->comm == "instrumentation");
  CHECK(injector->nice() == 0);
  CHECK(r.disp->events_injected() == 16);  // per window: down, 6 moves, up
  CHECK(ss.transactions() == 16);
  CHECK(r.disp->input_events_received() == 16);
  auto wakes = [&](const Task* p, const Task* waker) {
    std::vector<Time> v;
    for (const auto& w : r.log.wakes)
      if (w.task == p->comm && w.waker == waker) v.push_back(w.t);
    return v;
  };
  const auto by_timer = wakes(injector, nullptr), by_reply = wakes(injector, server);
  REQUIRE(by_timer.size() == 16);  // per window: its start, 6 step sleeps before moves, 1 before the lift
  REQUIRE(by_reply.size() == 16);
  CHECK(by_timer[0] == Time::ms(100));
  CHECK(by_reply[0] == Time::us(100580));
  CHECK(by_timer[1] == Time::us(105580));
  for (int j = 1; j <= 6; ++j) {
    INFO("move " << j);
    CHECK(by_reply[static_cast<size_t>(j)] == W(14 + 2 * j) + Time::us(60));
    CHECK(by_timer[static_cast<size_t>(j + 1)] == W(14 + 2 * j) + Time::us(5060));
  }
  CHECK(by_reply[7] == W(26) + Time::us(5060 + 580));  // the lift
  CHECK(by_timer[8] == Time::ms(1200));  // window 1's touch-down
  CHECK(by_reply[8] == Time::us(1200580));
  const auto server_by_injector = wakes(server, injector), server_by_dispatcher = wakes(server, dispatcher);
  REQUIRE(server_by_injector.size() == 16);
  CHECK(server_by_injector[0] == Time::us(100100));
  REQUIRE(server_by_dispatcher.size() == 16);
  CHECK(server_by_dispatcher[0] == Time::us(100580));
  CHECK(server_by_dispatcher[1] == W(16) + Time::us(60));
  const auto dispatcher_by_server = wakes(dispatcher, server), dispatcher_by_ui = wakes(dispatcher, ui);
  REQUIRE(dispatcher_by_server.size() == 16);
  CHECK(dispatcher_by_server[0] == Time::us(100150));
  CHECK(dispatcher_by_server[1] == Time::us(105730));
  REQUIRE(dispatcher_by_ui.size() >= 2);
  CHECK(dispatcher_by_ui[0] == Time::us(100550));
  CHECK(dispatcher_by_ui[1] == W(16) + Time::us(30));
  const auto ui_by_dispatcher = wakes(ui, dispatcher);
  REQUIRE_FALSE(ui_by_dispatcher.empty());
  CHECK(ui_by_dispatcher[0] == Time::us(100250));
  // Frames 14, 16, .., 26, 27 and 146, 148, .., 158, 159; the odd ones
  // between ran CALLBACK_INPUT alone.
  for (int64_t w0 : {14, 146}) {
    INFO("window from frame " << w0);
    for (int64_t k = w0; k <= w0 + 12; k += 2) CHECK(r.log.frames.count(static_cast<uint64_t>(k)) == 1);
    for (int64_t k = w0 + 1; k <= w0 + 11; k += 2) CHECK(r.log.frames.count(static_cast<uint64_t>(k)) == 0);
    CHECK(r.log.frames.count(static_cast<uint64_t>(w0 + 13)) == 1);
    CHECK(r.log.frames.count(static_cast<uint64_t>(w0 - 1)) == 0);
    CHECK(r.log.frames.count(static_cast<uint64_t>(w0 + 14)) == 0);
  }
  CHECK(r.disp->input_only_frames() == 12);
}

// UiAutomationConnection syncs the input windows before the touch-down
// and after the lift (inject_sync_input; system_server's thread and the
// test's on CPU 3, SurfaceFlinger on CPU 2). Window 0: the test's sleep
// ends at 100 ms; it runs 100 us and calls system_server
// (syncInputTransactions()), whose thread runs 200 us and applies the
// transaction at 100.3 ms: SF's next callback is for vsync 13 (S13 =
// 13 x 8,333,333 - 7,333,333 ns, just under 101 ms), whose timer wakes
// TimerDispatch (10 us), which wakes SF; SF commits the input windows
// (100 us) and, with no buffer to latch, still composites (1 ms) and
// commits to the display (500 us): only then are the windows reported
// and the waiting thread woken, at S13 + 1610 us, whose reply wakes the
// test's thread; only now does it inject the touch-down (binder thread
// woken at S13 + 1610 us, at 100.1 ms without the sync), which the UI
// thread handles from S13 + 1760 us for 300 us, past W14 (= S13): the
// first frame is 15, not 14. The moves then keep
// the old rhythm (finished by doFrame() 16, 18, .., 26). The lift's reply
// (W26 + 5.64 ms, as without the sync) lets the test's thread sync again
// at once: system_server's thread applies at W26 + 5.84 ms (206.84 ms),
// so SF's next callback, S26 (209.33 ms), commits and presents it (the
// waiter woken at S26 + 1610 us), and the test then sleeps until window
// 1. Two syncs a window.
TEST_CASE("display: an injected touch-down waits for SurfaceFlinger to commit the input windows, and so does the lift",
          "[display][input]") {
  DisplayParams dp = injected_params();
  REQUIRE(dp.inject_sync_input);  // on by default
  dp.inject_sync_cost = Time::us(200);
  dp.sf_input_sync_cost = Time::us(100);
  Rig r(dp, 4);
  BinderProc ss(*r.k, system_server_on_cpu3());
  r.build(nullptr, nullptr, nullptr, nullptr, &ss);
  r.run(Time::ms(1400));
  Task* injector = r.disp->injector_task();
  REQUIRE(injector);
  Task* server = &ss.thread_task(0);
  Task* sf = &r.disp->sf_task();
  Task* ui = &r.disp->ui_task();
  CHECK(r.disp->input_syncs() == 4);
  CHECK(r.disp->events_injected() == 16);  // the same events as without the sync
  CHECK(ss.transactions() == 20);           // and 4 syncs
  const auto server_by_injector = wakes_by(r.log, server, injector), server_by_sf = wakes_by(r.log, server, sf);
  REQUIRE(server_by_injector.size() == 20);
  CHECK(server_by_injector[0] == Time::us(100100));  // syncInputTransactions()
  CHECK(server_by_injector[1] == S(13) + Time::us(1610));  // injectInputEvent(): the touch-down
  REQUIRE(server_by_sf.size() == 4);
  CHECK(server_by_sf[0] == S(13) + Time::us(1610));
  const auto ui_by_dispatcher = wakes_by(r.log, ui, r.disp->input_dispatcher_task());
  REQUIRE_FALSE(ui_by_dispatcher.empty());
  CHECK(ui_by_dispatcher[0] == S(13) + Time::us(1760));
  // The lift's sync: after its reply the test's thread calls system_server
  // again, and SF's commit ends that wait.
  const auto by_reply = wakes_by(r.log, injector, server);
  REQUIRE(by_reply.size() == 20);
  CHECK(server_by_injector[9] > server_by_sf[0]);
  CHECK(server_by_injector[9] == by_reply[8]);  // the lift answered, the sync called at once
  CHECK(server_by_injector[9] == W(26) + Time::us(5060 + 580));
  CHECK(server_by_sf[1] == S(26) + Time::us(1610));  // SF's next callback after the sync's 200 us
  CHECK(by_reply[9] == server_by_sf[1]);        // the sync's reply: the test's thread sleeps until window 1
  // SF woke for each commit without a frame to latch.
  for (int64_t k : {15, 16, 18, 26, 27}) CHECK(r.log.frames.count(static_cast<uint64_t>(k)) == 1);
  for (int64_t k : {14, 17}) CHECK(r.log.frames.count(static_cast<uint64_t>(k)) == 0);
  CHECK(r.disp->input_only_frames() == 10);  // 17, 19, .., 25 in each window
}

// Without a binder process the test's thread applies the input-window
// transaction itself at 100.1 ms (after its 100 us) and sleeps until SF's
// frame wakes it: SF's callback S13, TimerDispatch's 10 us, SF's 100 us
// for the sync, 1 ms composite, 500 us display commit.
TEST_CASE("display: without a binder process the injecting thread waits for SurfaceFlinger's commit itself",
          "[display][input]") {
  DisplayParams dp = input_thread_params();
  dp.input_source = DisplayParams::InputSource::kInjected;
  dp.injector_thread.cpus = {3};
  dp.sf_input_sync_cost = Time::us(100);
  Rig r(dp, 4);
  r.build();
  r.run(Time::ms(300));
  Task* injector = r.disp->injector_task();
  REQUIRE(injector);
  CHECK(r.disp->input_syncs() == 2);
  const auto by_sf = wakes_by(r.log, injector, &r.disp->sf_task());
  REQUIRE(by_sf.size() == 2);
  CHECK(by_sf[0] == S(13) + Time::us(1610));
}

// drag_draws: every_frame (an app that animates every vsync while the
// finger holds it, as SystemUI's shade with its blur): the injected swipe
// of the test above draws every frame from 14 to 27.
TEST_CASE("display: a drag of an app that animates meanwhile draws every frame", "[display][input]") {
  DisplayParams dp = injected_params();
  dp.inject_sync_input = false;
  dp.drag_draws_every_frame = true;
  Rig r(dp, 4);
  BinderProc ss(*r.k, system_server_on_cpu3());
  r.build(nullptr, nullptr, nullptr, nullptr, &ss);
  r.run(Time::ms(300));
  CHECK(r.disp->events_injected() == 8);
  for (int64_t k = 14; k <= 27; ++k) CHECK(r.log.frames.count(static_cast<uint64_t>(k)) == 1);
  CHECK(r.disp->input_only_frames() == 0);
}

// Without a binder process the test's thread queues the event and waits
// for the finish itself: InputDispatcher's finish wakes it, 50 us earlier
// than the binder thread's reply above (no binder thread's work).
TEST_CASE("display: without a binder process the injecting thread waits for the finish itself", "[display][input]") {
  DisplayParams dp = input_thread_params();
  dp.input_source = DisplayParams::InputSource::kInjected;
  dp.inject_sync_input = false;  // the input-window sync has its own tests
  dp.injector_thread.cpus = {3};
  Rig r(dp, 4);
  r.build();
  r.run(Time::ms(300));
  Task* injector = r.disp->injector_task();
  REQUIRE(injector);
  CHECK(r.disp->events_injected() == 8);
  const auto by_dispatcher = wakes_by(r.log, injector, r.disp->input_dispatcher_task());
  REQUIRE(by_dispatcher.size() == 8);
  CHECK(by_dispatcher[0] == Time::us(100530));
  CHECK(by_dispatcher[1] == W(16) + Time::us(60));
  CHECK(by_dispatcher[7] == W(26) + Time::us(5060 + 530));  // the lift: 100 + 100 + 300 + 30 us
}

// With touch resampling off (input_resample_latency 0) a frame takes every
// sample no later than its frame time: the move injected at 105.53 ms
// (time 105 ms) is taken by doFrame() 15 (W15 = 109.33 ms), and the swipe
// moves every frame, 12 moves after the touch-down as a finger at 120 Hz,
// then the lift.
TEST_CASE("display: without touch resampling an injected swipe moves every frame", "[display][input]") {
  DisplayParams dp = input_thread_params();
  dp.input_source = DisplayParams::InputSource::kInjected;
  dp.inject_sync_input = false;  // the input-window sync has its own tests
  dp.injector_thread.cpus = {3};
  dp.input_resample_latency = Time::zero();
  Rig r(dp, 4);
  r.build();
  r.run(Time::ms(300));
  Task* injector = r.disp->injector_task();
  REQUIRE(injector);
  CHECK(r.disp->events_injected() == 14);  // and the lift
  std::vector<Time> by_dispatcher;
  for (const auto& w : r.log.wakes)
    if (w.task == injector->comm && w.waker == r.disp->input_dispatcher_task()) by_dispatcher.push_back(w.t);
  REQUIRE(by_dispatcher.size() == 14);
  for (size_t j = 1; j < 13; ++j) CHECK(by_dispatcher[j] == W(14 + static_cast<int64_t>(j)) + Time::us(60));
}

// inject_duration: a fling's swipe is shorter than its window. With
// 30 ms, window 0's gesture injects the touch-down (100 ms) and the moves
// at 105.53 ms and W16 + 5.06 ms = 122.73 ms (22.7 ms into the window);
// the sleep after the second ends 39.4 ms in, past the gesture: the lift,
// then no more injections until window 1. During the gesture doFrame() 15
// and 17 consume nothing and draw nothing; from the lift (frame 19) the
// fling's animation draws every frame to the window's end (frame 25).
TEST_CASE("display: an injected gesture shorter than its window stops at inject_duration", "[display][input]") {
  DisplayParams dp = input_thread_params();
  dp.input_source = DisplayParams::InputSource::kInjected;
  dp.inject_sync_input = false;  // the input-window sync has its own tests
  dp.injector_thread.cpus = {3};
  dp.inject_duration = Time::ms(30);
  Rig r(dp, 4);
  r.build();
  r.run(Time::ms(1100));
  CHECK(r.disp->events_injected() == 4);
  Task* injector = r.disp->injector_task();
  REQUIRE(injector);
  std::vector<Time> by_timer;
  for (const auto& w : r.log.wakes)
    if (w.task == injector->comm && w.waker == nullptr) by_timer.push_back(w.t);
  REQUIRE(by_timer.size() == 4);  // the window's start, two step sleeps before moves, one after
  CHECK(by_timer[2] == W(16) + Time::us(5060));
  CHECK(by_timer[3] == W(18) + Time::us(5060));
  std::vector<Time> by_dispatcher;
  for (const auto& w : r.log.wakes)
    if (w.task == injector->comm && w.waker == r.disp->input_dispatcher_task()) by_dispatcher.push_back(w.t);
  REQUIRE(by_dispatcher.size() == 4);
  CHECK(by_dispatcher[3] == W(18) + Time::us(5060 + 530));  // the lift, finished at once
  for (int64_t k : {14, 16, 18, 19, 20, 21, 22, 23, 24, 25}) CHECK(r.log.frames.count(static_cast<uint64_t>(k)) == 1);
  for (int64_t k : {15, 17}) CHECK(r.log.frames.count(static_cast<uint64_t>(k)) == 0);
  CHECK(r.disp->input_only_frames() == 2);
}

TEST_CASE("display: injected input needs input_threads and no touch_rpm", "[display][input]") {
  DisplayParams dp = vsync_thread_params();
  dp.input_source = DisplayParams::InputSource::kInjected;
  CHECK_THAT(build_error(dp), Catch::Contains("needs input_threads"));
  dp.input_threads = true;
  dp.touch_rpm = "gpu";
  CHECK_THAT(build_error(dp), Catch::Contains("injected events never reach the kernel"));
  dp.touch_rpm.clear();
  dp.inject_cost = Time::us(-1);
  CHECK_THAT(build_error(dp), Catch::Contains("must be >= 0"));
}

TEST_CASE("display: the input path needs vsync_threads and valid settings", "[display][input]") {
  DisplayParams dp = fixed_params();
  dp.input_threads = true;
  CHECK_THAT(build_error(dp), Catch::Contains("input_threads needs vsync_threads"));
  dp = vsync_thread_params();
  dp.input_threads = true;
  dp.touch_irq_cpu = 7;
  CHECK_THAT(build_error(dp), Catch::Contains("touch_irq_cpu 7 does not exist"));
  dp.touch_irq_cpu = 0;
  dp.input_reader_cost = Time::us(-1);
  CHECK_THAT(build_error(dp), Catch::Contains("input costs must be >= 0"));
  dp.input_reader_cost = Time::us(100);
  dp.touch_report_hz = 0;
  CHECK_THAT(build_error(dp), Catch::Contains("touch_report_hz"));
}

TEST_CASE("display: naming a runtime PM device without runtime PM is an error", "[display]") {
  DisplayParams dp = fixed_params();
  dp.gpu_rpm = "gpu";
  Rig r(dp);
  CHECK_THROWS_AS(r.build(), ModelError);
  DisplayParams bad = fixed_params();
  bad.animation = Time::ms(5);  // shorter than a period
  Rig r2(bad);
  CHECK_THROWS_AS(r2.build(), ModelError);
}

namespace {

// Runtime PM: devices "gpu", "ui_gpu" and "dpu" with 100 ms autosuspend
// and a 1 ms resume wait (the hardware powering up).
struct RpmRig : Rig {
  explicit RpmRig(const DisplayParams& dp, bool dpu_active = false)
      : RpmRig(dp, exact_scenario("6.12", 1000, 3), dpu_active) {}
  // dpu_autosuspend false: drm/msm's display (DPU or SDE) has none.
  RpmRig(const DisplayParams& dp, ScenarioParams scenario, bool dpu_active = false, bool dpu_autosuspend = true)
      : Rig(dp, std::move(scenario)) {
    k->add_observer(&tracker);
    wqs = std::make_unique<WorkqueueSystem>(*k, sp.platform, sp.workqueue, tracker);
    WorkqueueParams wp;
    wp.name = "pm";
    wp.flags = kWqFreezable;
    Workqueue* pm_wq = wqs->find("pm");
    if (!pm_wq) pm_wq = &wqs->alloc_workqueue(wp);
    PmRuntimeParams pp;
    for (const char* n : {"gpu", "ui_gpu", "dpu"}) {
      RpmDeviceParams d;
      d.name = n;
      d.resume_wait = Time::ms(1);
      d.start_active = dpu_active && d.name == "dpu";
      d.use_autosuspend = dpu_autosuspend || d.name != "dpu";
      pp.devices.push_back(d);
    }
    pm = std::make_unique<PmRuntime>(*k, *wqs, *pm_wq, pp, tracker);
  }
  ~RpmRig() { disp.reset(); }  // its pm_runtime calls go before the PmRuntime
  RunnableTracker tracker;
  std::unique_ptr<WorkqueueSystem> wqs;
  std::unique_ptr<PmRuntime> pm;
  std::unique_ptr<KthreadWorker> retire_worker;  // install_msm_gpu()
};

class RpmLog : public SchedObserver {
 public:
  struct Status {
    Time t;
    std::string device;
    int status;
    const Task* task;
  };
  void on_rpm(Time t, const RpmEvent& e) override {
    if (e.kind == RpmEvent::Kind::kStatus) log.push_back({t, std::string(e.device), e.status, e.task});
  }
  std::vector<Status> log;
};

}  // namespace

TEST_CASE("display: an unknown runtime PM device name lists the valid ones", "[display]") {
  DisplayParams dp = fixed_params();
  dp.display_rpm = "panel";
  RpmRig r(dp);
  try {
    r.build(r.pm.get());
    FAIL("no error");
  } catch (const ModelError& e) {
    CHECK_THAT(e.what(), Catch::Contains("'panel'") && Catch::Contains("gpu, ui_gpu, dpu"));
  }
}

TEST_CASE("display: the first frame after a gap resumes the GPU in RenderThread context", "[display]") {
  DisplayParams dp = fixed_params();
  dp.gpu_rpm = "gpu";
  dp.ui_rpm = "ui_gpu";
  dp.display_rpm = "dpu";
  RpmRig r(dp);
  RpmLog rpm;
  r.k->add_observer(&rpm);
  r.build(r.pm.get());
  r.run(Time::ms(1500));
  const Task* rt = &r.disp->render_task();
  const Task* ui = &r.disp->ui_task();
  const Task* sf = &r.disp->sf_task();
  // Resumes (status resuming) by device, with the context that ran them.
  std::map<std::string, std::vector<std::pair<Time, const Task*>>> resumes, suspends;
  for (const auto& s : rpm.log) {
    if (s.status == static_cast<int>(RpmStatus::kResuming)) resumes[s.device].push_back({s.t, s.task});
    if (s.status == static_cast<int>(RpmStatus::kSuspending)) suspends[s.device].push_back({s.t, s.task});
  }
  // Two windows ([0.1, 0.2) and [1.2, 1.3) s): each device resumes once per
  // window, at its first frame, and autosuspends in the gap.
  REQUIRE(resumes["gpu"].size() == 2);
  CHECK(resumes["gpu"][0].second == rt);
  CHECK(resumes["gpu"][1].second == rt);
  // UI: resume of ui_gpu (50 us callback + 1 ms wait), 2 ms of work; RT 3 ms.
  CHECK(resumes["gpu"][0].first == W(14) + Time::us(50 + 1000 + 2000 + 3000));
  std::vector<Time> ui_wakes = r.log.timer_wakes("ndroid.systemui");
  auto second = std::find_if(ui_wakes.begin(), ui_wakes.end(), [](Time t) { return t >= Time::ms(1200); });
  REQUIRE(second != ui_wakes.end());
  CHECK(resumes["gpu"][1].first == *second + Time::us(6050));
  REQUIRE(resumes["ui_gpu"].size() == 2);
  CHECK(resumes["ui_gpu"][0].second == ui);
  CHECK(resumes["ui_gpu"][0].first == W(14));
  REQUIRE(resumes["dpu"].size() == 2);
  CHECK(resumes["dpu"][0].second == sf);
  REQUIRE(suspends["gpu"].size() >= 1);
  CHECK(suspends["gpu"][0].first > Time::ms(200));
  CHECK(suspends["gpu"][0].first < Time::ms(1200));
  CHECK(r.pm->device("gpu")->resumes() == 2);
  // The GPU's usage count is back to 0 (every get_sync matched by the
  // interrupt's put_autosuspend).
  CHECK(r.pm->device("gpu")->usage_count() == 0);
  CHECK(r.pm->device("ui_gpu")->usage_count() == 0);
  CHECK(r.pm->device("dpu")->usage_count() == 0);
  // The resumes make the first frame of each window late: GPU done at
  // W14 + 6.05 ms + 1.05 ms (GPU resume) + 2 ms > P14 - sf = W14 + 8.33 ms;
  // it misses S14, is latched at S15 and shown at P15; the rest of the
  // window is a vsync late behind it (Buffer Stuffing).
  REQUIRE(r.log.frames.count(14) == 1);
  CHECK(r.log.frames[14].app_end == W(14) + Time::us(9100));
  CHECK(r.log.frames[14].app_missed);
  CHECK(r.log.frames[14].present == P(15));
  CHECK(r.log.frames[15].buffer_stuffing);
  CHECK(r.disp->frames_started() == 24);
  CHECK(r.disp->frames_presented() == 24);
  CHECK(r.disp->frames_dropped() == 0);
}

namespace {
// The display of fixed_params() on drm/msm's submit path: RenderThread's
// get_sync on "gpu" moves to the run_job work of "gpu-ring".
DisplayParams msm_submit_params() {
  DisplayParams dp = fixed_params();
  dp.gpu_rpm = "gpu";
  dp.gpu_submit_wq = "gpu-ring";
  return dp;
}
// "gpu-ring" as drm_sched_init() allocates it: alloc_ordered_workqueue(WQ_MEM_RECLAIM).
Workqueue& add_msm_ring(RpmRig& r) {
  WorkqueueParams wp;
  wp.name = "gpu-ring";
  wp.flags = kWqOrdered | kWqUnbound | kWqMemReclaim;
  return r.wqs->alloc_workqueue(wp);
}
}  // namespace

// drm/msm's submit path (gpu_submit_wq): RenderThread only pushes the job;
// the DRM scheduler's run_job work, on an ordered unbound workqueue, takes
// the GPU's reference with get_sync -- resuming the GPU in the kworker
// (50 us callback + 1 ms wait) -- runs its 10 us and starts the GPU.
// Frame 14: RenderThread pushes at W14 + 5 ms and queues the buffer at
// once; the unbound pool's only idle worker, woken, first creates another
// (worker_thread(): !may_start_working() -> manage_workers(); the
// create_worker_delay of 50 us), so the resume starts at W14 + 5.05 ms,
// the GPU runs from W14 + 6.11 ms and is done at W14 + 8.11 ms.
TEST_CASE("display: with drm/msm's submit path the GPU resumes in the run_job kworker, not RenderThread",
          "[display][pm_runtime]") {
  RpmRig r(msm_submit_params());
  Workqueue& ring = add_msm_ring(r);
  RpmLog rpm;
  r.k->add_observer(&rpm);
  r.build(r.pm.get(), r.wqs.get(), &ring);
  r.run(Time::ms(1500));
  const Task* rt = &r.disp->render_task();
  std::vector<const RpmLog::Status*> resumes;
  for (const auto& st : rpm.log)
    if (st.device == "gpu" && st.status == static_cast<int>(RpmStatus::kResuming)) resumes.push_back(&st);
  REQUIRE(resumes.size() == 2);  // once per window
  REQUIRE(resumes[0]->task);
  CHECK(resumes[0]->task != rt);
  CHECK(resumes[0]->task->comm.rfind("kworker/u", 0) == 0);
  CHECK(resumes[0]->t == W(14) + Time::us(5050));
  REQUIRE(r.log.frames.count(14) == 1);
  CHECK(r.log.frames[14].app_end == W(14) + Time::us(8110));
  CHECK(r.pm->device("gpu")->usage_count() == 0);
  CHECK(r.disp->frames_started() == 24);
  CHECK(r.disp->frames_presented() + r.disp->frames_dropped() == 24);
  // RenderThread did its 3 ms per frame and nothing of the resume.
  CHECK(r.disp->render_task().se.sum_exec_runtime == 24 * 3000000);
}

namespace {
// The starts and ends of work items on one workqueue (or kthread_worker),
// in order, with their times, names and workers.
class WqItems : public SchedObserver {
 public:
  explicit WqItems(std::string wq) : wq_(std::move(wq)) {}
  void on_work_item(Time t, const WorkItemEvent& e) override {
    if (e.workqueue != wq_) return;
    if (e.phase == WorkItemEvent::Phase::kStart) starts.push_back({t, std::string(e.work), e.worker});
    if (e.phase == WorkItemEvent::Phase::kEnd) ends.push_back({t, std::string(e.work), e.worker});
  }
  struct Item {
    Time t;
    std::string work;
    const Task* worker;
  };
  std::vector<Item> starts, ends;
  // The items of one work function, in order.
  static std::vector<Item> named(const std::vector<Item>& items, std::string_view work) {
    std::vector<Item> out;
    for (const Item& it : items)
      if (it.work == work) out.push_back(it);
    return out;
  }

 private:
  std::string wq_;
};
}  // namespace

// The DRM scheduler's items on drm/msm's submit workqueue per job (6.12
// sched_main.c): run_job runs the job and queues itself again
// (drm_sched_run_job_queue()), an empty run that selects nothing and stops;
// the job's fence (here in the interrupt: no retire worker) queues free_job
// (drm_sched_job_done()), which frees it (free_job_cost, 5 us) and queues
// run_job again, another empty run. Frame 14 as above: run_job at W14 +
// 5.05 ms (after the resume, 1.06 ms) ends at W14 + 6.11 ms, the empty
// run follows at once; the GPU is done at W14 + 8.11 ms.
TEST_CASE("display: drm/msm's submit workqueue runs run_job, an empty run_job, free_job and another per job",
          "[display][drm]") {
  RpmRig r(msm_submit_params());
  Workqueue& ring = add_msm_ring(r);
  WqItems log("gpu-ring");
  r.k->add_observer(&log);
  r.build(r.pm.get(), r.wqs.get(), &ring);
  r.run(W(14) + Time::ms(9));
  REQUIRE(log.starts.size() == 4);
  CHECK(log.starts[0].work == "drm_sched_run_job_work");
  CHECK(log.starts[0].t == W(14) + Time::us(5050));
  CHECK(log.starts[1].work == "drm_sched_run_job_work");
  CHECK(log.starts[1].t == W(14) + Time::us(6110));
  CHECK(log.starts[2].work == "drm_sched_free_job_work");
  CHECK(log.starts[2].t == W(14) + Time::us(8110));
  CHECK(log.starts[3].work == "drm_sched_run_job_work");
  CHECK(log.starts[3].t == W(14) + Time::us(8115));
  // Four items for each of the 24 frames.
  r.run(Time::ms(1500));
  CHECK(r.disp->frames_started() == 24);
  CHECK(log.starts.size() == 4 * 24);
}

namespace {
// drm/msm's retire kthread_worker "gpu-worker" (SCHED_FIFO 1, pinned to
// CPU 2 here) and the rig's GPU retiring jobs there (10 us per run), with
// devfreq's idle work (5 us) after `idle_delay` when it is non-zero.
KthreadWorker& install_msm_gpu(RpmRig& r, Time idle_delay = Time::zero()) {
  KthreadWorkerParams wp;
  wp.name = "gpu-worker";
  wp.policy = Policy::kFifo;
  wp.rt_priority = 1;
  wp.cpus = {2};
  r.retire_worker = std::make_unique<KthreadWorker>(*r.k, wp, r.tracker);
  GpuParams g;
  g.service_time = fixed(Time::ms(2));
  g.retire_worker = "gpu-worker";
  g.retire_cost = Time::us(10);
  g.idle_work_delay = idle_delay;
  g.idle_work_cost = Time::us(5);
  r.gpu = std::make_unique<Gpu>(*r.k, "gpu", g, 1, r.retire_worker.get());
  return *r.retire_worker;
}
}  // namespace

// drm/msm retires jobs on its "gpu-worker" kthread_worker (SCHED_FIFO 1,
// sched_set_fifo_low()): the job interrupt only queues the retire work,
// which drops RenderThread's GPU reference (retire_submit():
// pm_runtime_put_autosuspend()) after its 10 us. Frame 14: UI 2 ms,
// RenderThread 3 ms, its get_sync resumes the GPU (50 us + 1 ms), the GPU
// 2 ms: the job interrupt at W14 + 8.05 ms on CPU 0 wakes the worker on
// CPU 2 (idle until SF's callback at W14 + 8.33 ms), which puts the
// reference at W14 + 8.06 ms, not at the interrupt.
TEST_CASE("display: the GPU's retire worker drops RenderThread's reference, not the job interrupt",
          "[display][pm_runtime]") {
  DisplayParams dp = fixed_params();
  dp.gpu_rpm = "gpu";
  RpmRig r(dp);
  KthreadWorker& worker = install_msm_gpu(r);
  RpmLog rpm;
  r.k->add_observer(&rpm);
  r.build(r.pm.get());
  const RpmDevice& gpu = *r.pm->device("gpu");
  r.run(W(14) + Time::us(8055));
  REQUIRE(gpu.resumes() == 1);
  CHECK(gpu.usage_count() == 1);  // the job is done, not yet retired
  CHECK(worker.task().se.sum_exec_runtime == 0);
  r.run(W(14) + Time::us(8100));
  CHECK(gpu.usage_count() == 0);
  CHECK(gpu.last_busy() == W(14) + Time::us(8060));
  CHECK(worker.task().se.sum_exec_runtime == 10000);
  // One retire run per frame (the jobs end 8.3 ms apart); the GPU suspends
  // in the gap and resumes for the second window.
  r.run(Time::ms(1500));
  CHECK(r.disp->frames_started() == 24);
  CHECK(worker.task().se.sum_exec_runtime == 24 * 10000);
  CHECK(gpu.usage_count() == 0);
  CHECK(gpu.resumes() == 2);
  CHECK(gpu.suspends() == 2);
  // The last put, in the worker on CPU 2, armed the autosuspend timer
  // there (a busy CPU keeps its unpinned hrtimer), so the suspend work it
  // queues on the per-CPU pm_wq runs in CPU 2's kworker.
  const RpmLog::Status* suspending = nullptr;
  for (const auto& st : rpm.log)
    if (st.device == "gpu" && st.status == static_cast<int>(RpmStatus::kSuspending)) {
      suspending = &st;
      break;
    }
  REQUIRE(suspending);
  REQUIRE(suspending->task);
  CHECK(suspending->task->comm.rfind("kworker/2:", 0) == 0);
}

// drm/msm signals a job's fence in the retire work, not in the job
// interrupt: msm_gpu_retire() only records the completed seqno, and
// retire_submits()' dma_fence_is_signaled() signals it (msm_fence_ops has
// no enable_signaling). Frame 14's job ends at W14 + 8.05 ms (as above);
// a FIFO 3 task holds the worker's CPU 2 from W14 + 8 ms for 300 us, so
// the FIFO 1 worker runs at W14 + 8.3 ms: the buffer is ready (the frame's
// app end) then, and the reference dropped 10 us later. (Before, the
// interrupt signalled it: app end W14 + 8.05 ms.)
TEST_CASE("display: drm/msm's fence is signalled by the retire worker, not the job interrupt",
          "[display][pm_runtime]") {
  DisplayParams dp = fixed_params();
  dp.gpu_rpm = "gpu";
  RpmRig r(dp);
  install_msm_gpu(r);
  r.add_fifo_hog(W(14) + Time::ms(8), Time::us(300));
  r.build(r.pm.get());
  r.run(W(14) + Time::us(8400));
  CHECK(r.pm->device("gpu")->last_busy() == W(14) + Time::us(8310));
  r.run(Time::ms(300));
  REQUIRE(r.log.frames.count(14));
  CHECK(r.log.frames.at(14).app_end == W(14) + Time::us(8300));
  // Frame 15 (the GPU resumed: UI 2 ms, RenderThread 3 ms, GPU 2 ms): the
  // worker runs at once, so its buffer is ready at the interrupt.
  REQUIRE(r.log.frames.count(15));
  CHECK(r.log.frames.at(15).app_end == W(15) + Time::ms(7));
}

// drm/msm devfreq: when the last active job retires, the idle work is
// queued on the retire worker after idle_work_delay (5 us each); the next
// job cancels it first. Frames are 8.33 ms apart and each job retires
// 2.01 ms after its submit, so the GPU idles 6.32 ms between frames: with
// a 1 ms delay the idle work runs after every frame (24), with 7 ms only
// after the last frame of each window (2).
TEST_CASE("display: drm/msm's devfreq idle work runs on the retire worker unless a job comes first",
          "[display][pm_runtime]") {
  const auto [delay, idle_runs] = GENERATE(std::pair{Time::ms(1), 24}, std::pair{Time::ms(7), 2});
  DisplayParams dp = fixed_params();
  dp.gpu_rpm = "gpu";
  RpmRig r(dp);
  KthreadWorker& worker = install_msm_gpu(r, delay);
  r.build(r.pm.get());
  // Frame 14's job retires at W14 + 8.06 ms; its idle work (1 ms) is
  // queued at W14 + 9.06 ms but waits on CPU 2 behind SurfaceFlinger
  // (FIFO 2 against the worker's FIFO 1), which runs from S14 = W14 +
  // 8.33 ms for 1.5 ms.
  r.run(S(14) + Time::us(1500));
  CHECK(worker.task().se.sum_exec_runtime == 10000);
  r.run(S(14) + Time::us(1505));
  CHECK(worker.task().se.sum_exec_runtime == (delay == Time::ms(1) ? 15000 : 10000));
  r.run(Time::ms(1500));
  CHECK(r.disp->frames_started() == 24);
  CHECK(worker.task().se.sum_exec_runtime == 24 * 10000 + idle_runs * 5000);
}


// A Gpu naming a retire worker must be given one, and its devfreq idle
// work needs one.
namespace {
// drm/msm's nonblocking commit (commit_wq): fixed_params() with
// SurfaceFlinger's ioctl at 200 us and commit_tail() on events_unbound,
// the "dpu" device taken and put there, the CRTC holding its reference.
DisplayParams msm_commit_params() {
  DisplayParams dp = fixed_params();
  dp.display_rpm = "dpu";
  dp.commit_wq = "events_unbound";
  dp.commit_ioctl_cost = Time::us(200);
  dp.crtc_holds_display_rpm = true;
  return dp;
}
// SF's work duration at 10 ms (frames 15 .. 26): every frame presented at
// its vsync, SF's ioctl done 200 us after the previous vsync, where its
// commit starts (50 us later for the first `created` ones: a kworker
// created first) and ends at the frame's vsync.
void check_pipelined_commits(Rig& r, const WqItems& items, size_t created) {
  REQUIRE(r.log.frames.size() == 12);
  for (int64_t k = 15; k <= 26; ++k) {
    INFO("frame " << k);
    CHECK(r.log.frames[static_cast<uint64_t>(k)].present == P(k));
    CHECK(r.log.frames[static_cast<uint64_t>(k)].sf_end == P(k - 1) + Time::us(200));
  }
  REQUIRE(items.starts.size() == 12);
  REQUIRE(items.ends.size() == 12);
  for (size_t i = 0; i < 12; ++i) {
    const int64_t k = 15 + static_cast<int64_t>(i);
    INFO("commit " << k);
    CHECK(items.starts[i].t == P(k - 1) + Time::us(i < created ? 250 : 200));
    CHECK(items.ends[i].t == P(k));
  }
}
}  // namespace

// The nonblocking commit, frame 14 on: SF wakes at S_k, runs 1 ms and its
// 200 us ioctl (the previous commit flipped at P_{k-1}, before S_k, and
// its earliest present time, P_{k-1}, is past), which queues commit_work
// at S_k + 1.2 ms; a kworker of the unbound pool starts it there (the
// window's first commit finds one idle worker, which creates a second
// first: create_worker_delay, 50 us), its get_sync only counts (the
// CRTC's reference keeps the DPU active), its 500 us kickoff ends 5.63 ms
// before P_k, so the flush latches at P_k; the display interrupt at P_k
// wakes the worker (no waker), which signals the present fence (P_k),
// puts the DPU and returns. SF's CPU time per frame is 1.2 ms, not 1.5.
TEST_CASE("display: drm/msm's nonblocking commit runs commit_tail in an unbound kworker until the flip",
          "[display][drm][pm_runtime]") {
  RpmRig r(msm_commit_params(), /*dpu_active=*/true);
  WqItems items("events_unbound");
  r.k->add_observer(&items);
  RpmLog rpm;
  r.k->add_observer(&rpm);
  r.build(r.pm.get(), r.wqs.get(), nullptr, nullptr, nullptr, r.wqs->find("events_unbound"));
  r.run(Time::ms(400));
  REQUIRE(r.log.frames.size() == 12);
  for (int64_t k = 14; k <= 25; ++k) {
    INFO("frame " << k);
    const FrameEvent& f = r.log.frames[static_cast<uint64_t>(k)];
    CHECK(f.sf_end == S(k) + Time::us(1200));
    CHECK(f.present == P(k));
    CHECK(r.log.emitted_at[static_cast<uint64_t>(k)] == P(k));
    CHECK_FALSE(f.sf_missed);
    CHECK_FALSE(f.app_missed);
  }
  REQUIRE(items.starts.size() == 12);
  REQUIRE(items.ends.size() == 12);
  for (size_t i = 0; i < 12; ++i) {
    const int64_t k = 14 + static_cast<int64_t>(i);
    INFO("commit " << k);
    CHECK(items.starts[i].t == S(k) + Time::us(i == 0 ? 1250 : 1200));
    CHECK(items.ends[i].t == P(k));
    REQUIRE(items.starts[i].worker);
    CHECK(items.starts[i].worker->comm.rfind("kworker/u", 0) == 0);
  }
  // Each worker was woken at P_k by the interrupt (no waker).
  int irq_wakes = 0;
  for (const auto& w : r.log.wakes)
    if (w.task.rfind("kworker/u", 0) == 0 && w.waker == nullptr && (w.t.count() % kPeriod) == 0) ++irq_wakes;
  CHECK(irq_wakes == 12);
  // The DPU never changed state; the CRTC still holds it.
  CHECK(std::none_of(rpm.log.begin(), rpm.log.end(), [](const RpmLog::Status& st) { return st.device == "dpu"; }));
  CHECK(r.pm->device("dpu")->usage_count() == 1);
  CHECK(r.disp->sf_task().se.sum_exec_runtime == 12 * 1200000);
}

// SF's work duration longer than a period (10 ms at 120 Hz): the app's
// callbacks move 1.67 ms earlier, so the window's frames are 15 .. 26.
// Frame 15: SF wakes at P_15 - 10 ms, runs 1 ms, then sleeps until its
// earliest present time P_14 ("wait for earliest present time"), then its
// ioctl (200 us). Frame k + 1: SF wakes at P_k - 1.67 ms and is done
// composing at P_k - 0.67 ms, while commit k has not flipped: a
// nonblocking ioctl would get -EBUSY, so SF (the composer) waits in S
// until commit k's worker, woken by the interrupt at P_k, signals its
// flip_done; then the ioctl, and commit k + 1 kicks off at P_k + 0.7 ms
// and latches at P_{k+1}. Every frame is presented at its vsync.
TEST_CASE("display: the composer waits for the previous commit's flip and its earliest present time",
          "[display][drm]") {
  DisplayParams dp = msm_commit_params();
  dp.sf_duration = Time::ms(10);
  RpmRig r(dp, /*dpu_active=*/true);
  WqItems items("events_unbound");
  r.k->add_observer(&items);
  r.build(r.pm.get(), r.wqs.get(), nullptr, nullptr, nullptr, r.wqs->find("events_unbound"));
  r.run(Time::ms(400));
  check_pipelined_commits(r, items, 1);
  // SF: one timer wake-up at P_14 (its earliest present time), then woken
  // by a kworker at each P_k, k = 15 .. 25 (the flip it waited for).
  std::vector<Time> by_worker;
  int timer_wakes_at_p14 = 0;
  for (const auto& w : r.log.wakes) {
    if (w.task != "surfaceflinger") continue;
    if (w.waker && w.waker->comm.rfind("kworker/u", 0) == 0) by_worker.push_back(w.t);
    if (!w.waker && w.t == P(14)) ++timer_wakes_at_p14;
  }
  CHECK(timer_wakes_at_p14 == 1);
  REQUIRE(by_worker.size() == 11);
  for (size_t i = 0; i < by_worker.size(); ++i) CHECK(by_worker[i] == P(15 + static_cast<int64_t>(i)));
}

namespace {
// SDE's commit thread (crtc_commit:0, SCHED_FIFO 16 on CPU 3) on a 4-CPU
// RpmRig, and the pipeline committing on it (SF's work duration 10 ms).
DisplayParams sde_params() {
  DisplayParams dp = msm_commit_params();
  dp.sf_duration = Time::ms(10);
  dp.commit_wq.clear();
  dp.commit_worker = "crtc_commit:0";
  return dp;
}
// A SCHED_FIFO kthread_worker of the rig, pinned to one CPU.
std::unique_ptr<KthreadWorker> fifo_kthread(RpmRig& r, const std::string& name, int rt_priority, int cpu) {
  KthreadWorkerParams wp;
  wp.name = name;
  wp.policy = Policy::kFifo;
  wp.rt_priority = rt_priority;
  wp.cpus = {cpu};
  return std::make_unique<KthreadWorker>(*r.k, wp, r.tracker);
}
std::unique_ptr<KthreadWorker> sde_commit_thread(RpmRig& r) { return fifo_kthread(r, "crtc_commit:0", 16, 3); }
void build_sde(RpmRig& r, KthreadWorker& commit_thread) {
  DisplayLinks links;
  links.wqs = r.wqs.get();
  links.commit_worker = &commit_thread;
  r.disp = std::make_unique<DisplayPipeline>(*r.k, "display", r.params, r.gpu.get(), r.pm.get(), 1, links);
}
}  // namespace

// Qualcomm's downstream SDE driver (commit_worker): the same frames as
// above (SF's work duration 10 ms), the commits on a SCHED_FIFO 16
// kthread_worker (crtc_commit:0) on a fourth CPU, 3. SF sleeps until its earliest present time P_k, as before,
// then runs the ioctl's 200 us (the check and prepare_planes come before
// its wait for the previous commit), whose wait finds commit k done: its
// thread, woken by the interrupt at P_k, signalled the flip, put the DPU
// and ended the commit (commit_destroy()) at once. Commit k + 1 is queued
// at P_k + 0.2 ms, and the idle kthread starts it at once (no kworker to
// create); it latches at P_{k+1}. With a SCHED_FIFO 50 task holding CPU
// 3 from P_20 - 0.1 ms for 1 ms, commit 20's thread, woken at P_20, runs
// only at P_20 + 0.9 ms: frame 20's fence is still stamped P_20 (the
// latest vblank), but SF's ioctl for frame 21, done with its CPU work at
// P_20 + 0.2 ms, waits (S) until the commit thread ends commit 20 and
// wakes it at P_20 + 0.9 ms, where commit 21 starts; kicked off 0.5 ms
// later, it still latches at P_21.
TEST_CASE("display: downstream SDE's commit runs on a FIFO kthread_worker after SF's earliest present time",
          "[display][drm]") {
  RpmRig r(sde_params(), exact_scenario("6.12", 1000, 4), /*dpu_active=*/true);
  const auto thread = sde_commit_thread(r);
  KthreadWorker& commit_thread = *thread;
  WqItems items("crtc_commit:0");
  r.k->add_observer(&items);
  build_sde(r, commit_thread);
  const bool hog = GENERATE(false, true);
  OneShot hog_body(Time::ms(1));
  if (hog) {
    Task& h = r.k->create_task("hog", "hog", Policy::kFifo, 0, 50, {3}, false);
    r.k->set_body(h, &hog_body);
    r.k->start_task_at(h, P(20) - Time::us(100));
  }
  r.run(Time::ms(400));
  INFO((hog ? "with" : "without") << " the FIFO 50 task");
  REQUIRE(r.log.frames.size() == 12);
  for (int64_t k = 15; k <= 26; ++k) CHECK(r.log.frames[static_cast<uint64_t>(k)].present == P(k));
  REQUIRE(items.starts.size() == 12);
  for (size_t i = 0; i < 12; ++i) {
    const int64_t k = 15 + static_cast<int64_t>(i);
    CHECK(items.starts[i].worker == &commit_thread.task());
    CHECK(items.starts[i].t == P(k - 1) + Time::us(hog && k == 21 ? 900 : 200));
  }
  // SF: woken by its earliest-present timer at each P_k, k = 14 .. 25;
  // by the commit thread only when its ioctl had to wait.
  std::vector<Time> sf_timer_wakes, by_commit_thread;
  for (const auto& w : r.log.wakes) {
    if (w.task != "surfaceflinger") continue;
    if (w.waker == &commit_thread.task()) by_commit_thread.push_back(w.t);
    if (!w.waker && w.t.count() % kPeriod == 0) sf_timer_wakes.push_back(w.t);
  }
  REQUIRE(sf_timer_wakes.size() == 12);
  for (size_t i = 0; i < sf_timer_wakes.size(); ++i) CHECK(sf_timer_wakes[i] == P(14 + static_cast<int64_t>(i)));
  CHECK(by_commit_thread == (hog ? std::vector<Time>{P(20) + Time::us(900)} : std::vector<Time>{}));
  r.disp.reset();  // before the kthread_worker its commits run on
}

// SDE's idle power collapse of a command-mode panel (idle_pc_delay 58 ms,
// idle_pc_cost 20 us), the frames of the test above. At the start the
// encoder is ON (its reference, the screen just lit) with its off work
// armed: 58 jiffies at HZ=1000 from jiffy 0 expire in the bucket after,
// 59 ms, when no commit is in flight: the off work runs on crtc_commit:0
// (20 us), and its put_sync suspends the DPU there (suspending at 59.02 ms,
// suspended after its 50 us callback; the DPU has no autosuspend). Frame
// 15's commit (P_14 + 0.2 ms) resumes it in the commit thread (get_sync:
// 50 us of callback and resume_wait 1 ms, in D) and kicks off 1.05 ms
// later than the others, still before P_15; every kickoff re-arms the off
// work 58 ms ahead (kthread_mod_delayed_work()), so it next runs 58 ms
// after the last one (frame 26's at P_25 + 0.7 ms, jiffy 209: the bucket
// after 267, 268 ms) and suspends the DPU again. Every frame is still
// presented at its vsync.
TEST_CASE("display: SDE's command-mode idle power collapse suspends the display in the commit thread",
          "[display][drm][pm_runtime]") {
  DisplayParams dp = sde_params();
  dp.crtc_holds_display_rpm = false;
  dp.idle_pc_delay = Time::ms(58);
  dp.idle_pc_cost = Time::us(20);
  RpmRig r(dp, exact_scenario("6.12", 1000, 4), /*dpu_active=*/true, /*dpu_autosuspend=*/false);
  const auto thread = sde_commit_thread(r);
  KthreadWorker& commit_thread = *thread;
  WqItems items("crtc_commit:0");
  r.k->add_observer(&items);
  RpmLog rpm;
  r.k->add_observer(&rpm);
  build_sde(r, commit_thread);
  r.run(Time::ms(400));
  REQUIRE(r.log.frames.size() == 12);
  for (int64_t k = 15; k <= 26; ++k) CHECK(r.log.frames[static_cast<uint64_t>(k)].present == P(k));
  std::vector<std::pair<Time, int>> dpu;
  for (const auto& st : rpm.log)
    if (st.device == "dpu") {
      dpu.emplace_back(st.t, st.status);
      CHECK(st.task == &commit_thread.task());
    }
  const Time first_commit = P(14) + Time::us(200);
  CHECK(dpu == std::vector<std::pair<Time, int>>{{Time::us(59020), 3},
                                                 {Time::us(59070), 2},
                                                 {first_commit, 1},
                                                 {first_commit + Time::us(1050), 0},
                                                 {Time::us(268020), 3},
                                                 {Time::us(268070), 2}});
  // The off work ran twice (at 59 and 268 ms), between the 12 commits.
  size_t off_runs = 0;
  for (const auto& st : items.starts) off_runs += st.work == "sde_encoder_off_work";
  CHECK(off_runs == 2);
  CHECK(r.pm->device("dpu")->usage_count() == 0);
  r.disp.reset();  // before the kthread_worker its works run on
}

TEST_CASE("display: a commit workqueue needs workqueues, and the CRTC's reference an active display device",
          "[display]") {
  DisplayParams dp = msm_commit_params();
  dp.display_rpm.clear();
  RpmRig r(dp, true);
  CHECK_THROWS_WITH(r.build(r.pm.get(), r.wqs.get(), nullptr, nullptr, nullptr, r.wqs->find("events_unbound")),
                    Catch::Contains("crtc_holds_display_rpm needs display_rpm"));
  RpmRig r2(msm_commit_params(), true);
  CHECK_THROWS_WITH(r2.build(r2.pm.get()), Catch::Contains("commit_wq 'events_unbound' needs that workqueue"));
  DisplayParams both = msm_commit_params();
  both.commit_worker = "crtc_commit:0";
  RpmRig r4(both, true);
  CHECK_THROWS_WITH(r4.build(r4.pm.get(), r4.wqs.get(), nullptr, nullptr, nullptr, r4.wqs->find("events_unbound")),
                    Catch::Contains("commit_worker 'crtc_commit:0' needs that kthread_worker"));
  RpmRig r3(msm_commit_params(), false);
  CHECK_THROWS_WITH(r3.build(r3.pm.get(), r3.wqs.get(), nullptr, nullptr, nullptr, r3.wqs->find("events_unbound")),
                    Catch::Contains("crtc_holds_display_rpm needs runtime PM device 'dpu' to start active"));
}

TEST_CASE("display: a GPU whose retire worker is missing is an error", "[display]") {
  ScenarioParams sp = exact_scenario("6.12", 1000, 1);
  Kernel k(sp.kernel, sp.platform);
  GpuParams named;
  named.retire_worker = "gpu-worker";
  CHECK_THROWS_AS(Gpu(k, "gpu", named, 1), ModelError);
  GpuParams idle;
  idle.idle_work_delay = Time::ms(1);
  CHECK_THROWS_AS(Gpu(k, "gpu", idle, 1), ModelError);
}

namespace {
class WorkQueueLog : public SchedObserver {
 public:
  void on_work_item(Time t, const WorkItemEvent& e) override {
    if (e.phase == WorkItemEvent::Phase::kQueue) queued.push_back(t);
  }
  std::vector<Time> queued;
};
}  // namespace

// The touch interrupt reaches a CPU asleep in an idle state like any device
// interrupt: CPU 3, idle from the start (nothing runs there; menu 6.18 picks
// the deep state, exit 200 us), takes the touch at the window's start, 100
// ms, and its handler -- pm_runtime_get() of the GPU, which queues the
// asynchronous resume on pm_wq -- runs once the CPU is out, at 100.2 ms.
// The model used to run the handler at 100 ms with CPU 3 still asleep.
namespace {
// Four CPUs with a deep idle state (200 us exit latency) under menu.
ScenarioParams deep_idle_scenario() {
  ScenarioParams sp = exact_scenario("6.12", 1000, 4);
  sp.platform.clusters = {cluster_1024_deep_idle("c", 4)};
  sp.kernel.cpuidle_governor = "menu_v6.18";
  sp.kernel.fair_server = false;
  return sp;
}
}  // namespace

TEST_CASE("display: the touch interrupt waits for its CPU's idle exit", "[display][cpuidle]") {
  const ScenarioParams sp = deep_idle_scenario();
  DisplayParams dp = fixed_params();
  dp.touch_rpm = "gpu";
  dp.touch_irq_cpu = 3;
  RpmRig r(dp, sp);
  WorkQueueLog wq;
  r.k->add_observer(&wq);
  r.build(r.pm.get());
  r.run(Time::us(99990));
  REQUIRE(r.k->rq(3).cpuidle.phase == CpuidleDevice::Phase::kIn);
  REQUIRE(r.k->rq(3).cpuidle.state == 1);
  CHECK(wq.queued.empty());
  r.run(Time::ms(101));
  REQUIRE_FALSE(wq.queued.empty());
  CHECK(wq.queued[0] == Time::us(100200));
  CHECK(r.pm->device("gpu")->usage_count() == 1);  // the touch's reference, held for the window
}

// A touch report whose CPU is in a deep idle state is handled after the
// exit latency (200 us here), longer than the report period (100 us at
// 10 kHz): the reports due meanwhile merge into it (IRQTF_RUNTHREAD), and
// the next one is armed on the grid from then, never in the past. The IRQ
// thread's wake-ups are in time order, the first at 100.2 ms.
TEST_CASE("display: touch reports missed during an idle exit merge into the late one", "[display][input][cpuidle]") {
  const ScenarioParams sp = deep_idle_scenario();
  DisplayParams dp = input_thread_params(10000);
  Rig r(dp, sp);
  r.build();
  r.run(Time::us(99990));
  REQUIRE(r.k->rq(3).cpuidle.state == 1);
  r.run(Time::ms(150));
  std::vector<Time> irq;
  for (const auto& w : r.log.wakes)
    if (w.task == "irq/touch") irq.push_back(w.t);
  REQUIRE_FALSE(irq.empty());
  CHECK(irq[0] == Time::us(100200));
  CHECK(std::is_sorted(irq.begin(), irq.end()));
  // The one due at 100.0 ms, handled at 100.2 ms, then the grid from
  // there (the chain's 250 us per report keep CPU 3 busy): 100.2, 100.3,
  // ..., 150.0 ms. The one due at 100.1 ms merged into the late one.
  CHECK(r.disp->touch_reports() == 1 + 499);
  CHECK(r.k->now() == Time::ms(150));
}

namespace {
// Mainline DPU's frame events and encoder idle work on the nonblocking
// commit's rig: crtc_event:0 (SCHED_FIFO 50, on CPU 2 with SF) and the
// ordered "msm" workqueue.
DisplayParams dpu_event_params() {
  DisplayParams dp = msm_commit_params();
  dp.frame_event_worker = "crtc_event:0";
  dp.encoder_wq = "msm";
  return dp;
}
std::unique_ptr<KthreadWorker> crtc_event_thread(RpmRig& r) { return fifo_kthread(r, "crtc_event:0", 50, 2); }
// With `events`: the frame events there and the encoder's idle work on
// "msm"; with `vblank`: the vblank enable / disable works on "msm" too.
void build_dpu(RpmRig& r, KthreadWorker* events, bool vblank = false) {
  WorkqueueParams msm;
  msm.name = "msm";
  msm.flags = kWqUnbound | kWqOrdered;
  DisplayLinks links;
  links.wqs = r.wqs.get();
  links.commit_wq = r.wqs->find("events_unbound");
  Workqueue& wq = r.wqs->alloc_workqueue(msm);
  if (events) {
    links.frame_event_worker = events;
    links.encoder_wq = &wq;
  }
  if (vblank) links.vblank_wq = &wq;
  r.disp = std::make_unique<DisplayPipeline>(*r.k, "display", r.params, r.gpu.get(), r.pm.get(), 1, links);
}
}  // namespace

// DPU's frame events and encoder idle work (dpu_encoder.c, dpu_crtc.c,
// 6.12), the frames of the nonblocking commit's test (14 .. 25, each
// latched at P_k). Each frame done (the vblank interrupt at P_k) queues a
// frame event on crtc_event:0, which runs at once on CPU 2 (SF's CPU,
// idle then; FIFO 50), 5 us. The encoder starts IDLE (the screen static)
// with nothing armed; every kickoff cancels the off work the previous
// frame done queued, so it runs on the "msm" workqueue only after the
// last frame: 58 jiffies at HZ=1000 from P_25 (jiffy 208) expire in the
// bucket after, 267 ms, and it turns the interrupts off (5 us).
// With a 1 ms timeout and a 2 ms off work, the off work queued at each
// frame done (jiffy of P_k + 2: 118, 126, 135, ... ms) is executing when
// the next commit reaches its kickoff (P_k + 2.7 ms), whose
// cancel_delayed_work_sync() sleeps until it returns: the commit's worker
// is woken by the off work's; kicked off later, every frame is still
// latched at its vsync.
TEST_CASE("display: DPU's frame events run on crtc_event, and a kickoff cancels the encoder's off work",
          "[display][drm]") {
  DisplayParams dp = dpu_event_params();
  const bool slow_off = GENERATE(false, true);
  if (slow_off) {
    dp.encoder_idle_timeout = Time::ms(1);
    dp.encoder_off_cost = Time::ms(2);
  }
  INFO((slow_off ? "a 2 ms off work 1 ms after each frame" : "the defaults"));
  RpmRig r(dp, /*dpu_active=*/true);
  const auto thread = crtc_event_thread(r);
  WqItems events("crtc_event:0"), msm("msm");
  r.k->add_observer(&events);
  r.k->add_observer(&msm);
  build_dpu(r, thread.get());
  r.run(Time::ms(400));
  REQUIRE(r.log.frames.size() == 12);
  for (int64_t k = 14; k <= 25; ++k) CHECK(r.log.frames[static_cast<uint64_t>(k)].present == P(k));
  REQUIRE(events.starts.size() == 12);
  for (size_t i = 0; i < 12; ++i) {
    CHECK(events.starts[i].t == P(14 + static_cast<int64_t>(i)));
    CHECK(events.starts[i].worker == &thread->task());
    CHECK(events.ends[i].t == events.starts[i].t + Time::us(5));
  }
  std::vector<Time> off_starts;
  for (const auto& it : msm.starts) off_starts.push_back(it.t);
  if (!slow_off) {
    CHECK(off_starts == std::vector<Time>{Time::ms(267)});
    CHECK(msm.ends.back().t == Time::ms(267) + Time::us(5));
  } else {
    std::vector<Time> expected;
    for (int64_t k = 14; k <= 25; ++k) expected.push_back(Time::ms(P(k).count() / 1000000 + 2));
    CHECK(off_starts == expected);
    // Commits 15 .. 25 each waited for the off work executing at their
    // kickoff: woken at its end by its worker.
    std::vector<Time> waits;
    for (const auto& w : r.log.wakes)
      if (w.waker && w.waker->comm.rfind("kworker/u", 0) == 0 && w.task.rfind("kworker/u", 0) == 0) waits.push_back(w.t);
    REQUIRE(waits.size() == 11);
    for (size_t i = 0; i < waits.size(); ++i) CHECK(waits[i] == msm.ends[i].t);
  }
  r.disp.reset();  // before the kthread_worker its works run on
}

// drm/msm's vblank interrupt control (msm_atomic.c, msm_kms.c,
// drm_vblank.c, 6.12), the frames of the nonblocking commit's test (14 ..
// 25, each latched at P_k): each commit_tail() takes a vblank reference
// before its flush and drops it once latched. Vblank starts off, so commit
// 14's get, after its 500 us of writes, queues the enable on "msm"; the
// unbound pool's idle kworker it wakes is the pool's last idle one, so it
// creates another first (create_worker_delay, 50 us) and starts the work
// 550 us after the commit. Commits 15 .. 25 each get theirs before the
// vblank interrupt one period after the previous put, which so finds a
// reference and leaves vblank on; after commit 25's put (at P_25) the
// interrupt at P_26 finds none and queues the disable, which an idle
// kworker runs at once. Two items on "msm", 5 us each. With the encoder's
// idle work on "msm" too (DPU's frame events, a 2 ms off work 1 ms after
// each frame done), commits 15 .. 25 take their reference and then wait
// at the kickoff for the executing off work (P_k + 2 .. + 4 ms), coming
// back to the kickoff once it returns: still one reference each, and the
// same two vblank items (the last off work ends before P_26).
TEST_CASE("display: drm/msm turns vblank on at a burst's first commit and off at the vblank after its last",
          "[display][drm]") {
  const bool with_off_work = GENERATE(false, true);
  DisplayParams dp = with_off_work ? dpu_event_params() : msm_commit_params();
  dp.vblank_wq = "msm";
  if (with_off_work) {
    dp.encoder_idle_timeout = Time::ms(1);
    dp.encoder_off_cost = Time::ms(2);
  }
  INFO((with_off_work ? "with the encoder's 2 ms off work on msm" : "vblank works alone"));
  RpmRig r(dp, /*dpu_active=*/true);
  WqItems msm("msm"), commits("events_unbound");
  r.k->add_observer(&msm);
  r.k->add_observer(&commits);
  std::unique_ptr<KthreadWorker> events;
  if (with_off_work) events = crtc_event_thread(r);
  build_dpu(r, events.get(), /*vblank=*/true);
  r.run(Time::ms(400));
  const auto vblank = WqItems::named(msm.starts, "vblank_ctrl_worker");
  const auto vblank_ends = WqItems::named(msm.ends, "vblank_ctrl_worker");
  if (with_off_work) {
    CHECK(msm.starts.size() == 2 + 12);  // and an off work after each frame
    // Commits 15 .. 25 each waited for an executing off work: woken by
    // its worker when it returned.
    std::vector<Time> kworker_wakes, waited_ends;
    for (const auto& w : r.log.wakes)
      if (w.waker && w.waker->comm.rfind("kworker/u", 0) == 0 && w.task.rfind("kworker/u", 0) == 0)
        kworker_wakes.push_back(w.t);
    for (const auto& it : WqItems::named(msm.ends, "dpu_encoder_off_work"))
      if (std::find(kworker_wakes.begin(), kworker_wakes.end(), it.t) != kworker_wakes.end())
        waited_ends.push_back(it.t);
    CHECK(waited_ends.size() == 11);
  } else {
    CHECK(msm.starts.size() == 2);
  }
  REQUIRE(r.log.frames.size() == 12);
  for (int64_t k = 14; k <= 25; ++k) CHECK(r.log.frames[static_cast<uint64_t>(k)].present == P(k));
  REQUIRE(commits.starts.size() == 12);
  REQUIRE(vblank.size() == 2);
  REQUIRE(vblank_ends.size() == 2);
  CHECK(vblank[0].t == commits.starts[0].t + Time::us(550));
  CHECK(vblank[1].t == P(26));
  for (size_t i = 0; i < 2; ++i) CHECK(vblank_ends[i].t == vblank[i].t + Time::us(5));
  r.disp.reset();  // before the kthread_worker its works run on
}

// encoder_vblank_irq: the encoder's vblank interrupt at every vsync while
// it is registered. The frames of the DPU test (14 .. 25, each latched at
// P_k): the encoder starts IDLE, commit 14's kickoff (before P14) turns
// its interrupts on, and the off work 58 jiffies after P25's frame done
// (267 ms) turns them off: interrupts at P14 .. P32 (266.67 ms), 19, with
// or without drm's vblank work (on from commit 14's get to P26, inside
// that). Off, none is counted; the frames are the same either way.
TEST_CASE("display: the DPU encoder's vblank interrupt fires at every vsync while its interrupts are on",
          "[display][drm]") {
  const bool every_vsync = GENERATE(true, false);
  const bool vblank = GENERATE(false, true);
  INFO((every_vsync ? "encoder_vblank_irq" : "off") << (vblank ? ", vblank work" : ""));
  DisplayParams dp = dpu_event_params();
  dp.encoder_vblank_irq = every_vsync;
  if (vblank) dp.vblank_wq = "msm";
  RpmRig r(dp, /*dpu_active=*/true);
  const auto thread = crtc_event_thread(r);
  build_dpu(r, thread.get(), vblank);
  r.run(Time::ms(400));
  REQUIRE(r.log.frames.size() == 12);
  for (int64_t k = 14; k <= 25; ++k) CHECK(r.log.frames[static_cast<uint64_t>(k)].present == P(k));
  CHECK(r.disp->display_irqs() == (every_vsync ? 19u : 0u));
  r.disp.reset();  // before the kthread_worker its works run on
}

// The composer's vblank waits (hw_vsync_resync) hold vblank references
// too: with the window at 1000 ms, the resync's first wait, registered by
// SF's main thread at 1000.03 ms, turns vblank on (the enable queued on
// "msm" then, before any commit, and started 50 us later: the unbound
// pool's last idle kworker creates another first), and the waits the
// composer's thread registers at P121 .. P126 keep it on (7 events, as in
// the test above with a trained predictor). The window's commits (12 frames, each latched at its
// vsync, the first at P122) find it on, so the burst still costs one
// enable and one disable, the latter at the vblank after the last
// commit's put.
TEST_CASE("display: the composer's hardware-vsync waits turn vblank on before the burst's first commit",
          "[display][drm]") {
  DisplayParams dp = hw_vsync_params(msm_commit_params());
  dp.vblank_wq = "msm";
  RpmRig r(dp, /*dpu_active=*/true);
  WqItems msm("msm"), commits("events_unbound");
  r.k->add_observer(&msm);
  r.k->add_observer(&commits);
  build_dpu(r, nullptr, /*vblank=*/true);
  r.run(Time::ms(1400));
  CHECK(r.disp->hw_vsync_resyncs() == 1);
  CHECK(r.disp->hwc_vsync_events() == 7);
  REQUIRE(r.log.frames.size() == 12);
  const int64_t first = static_cast<int64_t>(r.log.frames.begin()->first);
  const int64_t last = static_cast<int64_t>(r.log.frames.rbegin()->first);
  CHECK(first == 122);
  CHECK(last == 133);
  for (int64_t k = first; k <= last; ++k) CHECK(r.log.frames[static_cast<uint64_t>(k)].present == P(k));
  const auto vblank = WqItems::named(msm.starts, "vblank_ctrl_worker");
  REQUIRE(vblank.size() == 2);
  REQUIRE_FALSE(commits.starts.empty());
  CHECK(vblank[0].t == Time::ms(1000) + Time::us(30 + 50));
  CHECK(vblank[0].t < commits.starts[0].t);
  CHECK(vblank[1].t == P(last + 1));
}

// The common rig with uclamp in use (RT default 0, a Pixel's
// init.gs101.rc) and ADPF sessions: `hwui` for the display's adpf (its
// batching), `sf` for sf_adpf; built.
namespace {
std::unique_ptr<Rig> adpf_rig(std::optional<AdpfBatching> hwui, bool sf) {
  ScenarioParams sp = exact_scenario("6.12", 1000, 3);
  sp.kernel.uclamp = true;
  sp.kernel.uclamp_min_rt_default = 0;
  DisplayParams dp = fixed_params();
  if (hwui) {
    dp.adpf = AdpfParams{};
    dp.adpf->batching = *hwui;
  }
  if (sf) {
    dp.sf_adpf = AdpfParams{};
    dp.sf_adpf->batching = AdpfBatching::kSurfaceFlinger;
  }
  auto r = std::make_unique<Rig>(dp, sp);
  r->build();
  return r;
}
}  // namespace

// SurfaceFlinger's own ADPF session (sf_adpf) on the common rig, uclamp
// in use: SF wakes on time at S(k) and presents at E = S(k) + 1.5 ms, so
// PowerAdvisor's estimate is max(flinger 1.5 ms, total 1.5 ms x period /
// sf_duration = 1500000 x 8333333 / 7333333 = 1704545 ns) + 1 ms =
// 2704545 ns against the vsync period, 8333333: error -56 in the HAL's
// 100 us units (-56.3), P = 1.0 x -56 each report.
TEST_CASE("display: SurfaceFlinger's hint session reports each new estimate and is woken by the next window",
          "[display][adpf]") {
  auto rig = adpf_rig(std::nullopt, true);
  Rig& r = *rig;
  const Task& sf = r.disp->sf_task();
  const auto sf_min = [&] { return sf.uclamp_req[kUclampMin].value; };
  REQUIRE(r.disp->sf_adpf());
  CHECK(r.disp->sf_adpf()->target() == Time::ms(16));  // kDefaultTarget until the first commit
  const Time e14 = S(14) + Time::us(1500);
  r.run(e14 - Time::ns(1));
  CHECK(sf_min() == 129u);  // started with the pipeline at UclampMin_Init
  r.run(e14 + Time::ns(1));
  CHECK(r.disp->sf_adpf()->target() == Time::ns(kPeriod));
  CHECK(sf_min() == 129u - 56u);
  // Frames 15 .. 23 give the same estimate within 80 ms of the last send:
  // held; frame 24's goes 83.3 ms after frame 14's: 73 - 56 = 17.
  r.run(S(24));
  CHECK(sf_min() == 73u);
  const Time e24 = S(24) + Time::us(1500);
  r.run(e24 + Time::ns(1));
  CHECK(sf_min() == 17u);
  // No report for 20 x 8333333 ns after frame 24's: stale, 0 (frame 25's
  // was held).
  r.run(e24 + Time::ns(166666660 - 1));
  CHECK(sf_min() == 17u);
  r.run(e24 + Time::ns(166666660 + 1));
  CHECK(sf_min() == 0u);
  // The collapse window's first frame (k = 146): RenderThread's
  // queueBuffer at W(146) + 5 ms is a scheduleCommit() 1 s after the last:
  // DISPLAY_UPDATE_IMMINENT gives SF max(17, 129); its report then (the
  // same estimate, the last send long ago) takes 56 off.
  r.run(W(146) + Time::ms(5) + Time::ns(1));
  CHECK(sf_min() == 129u);
  r.run(S(146) + Time::us(1500) + Time::ns(1));
  CHECK(sf_min() == 73u);
}

// PowerAdvisor's frameDelay: SF woken at S(14) but kept off its CPU by a
// FIFO 3 task until S(14) + 1.999 ms presents at S(14) + 3.499 ms: flinger
// 1.5 ms, total (from the ideal wake-up S(14)) 3.499 ms x 8333333 /
// 7333333 = 3976136 ns; + 1 ms against 8333333: error -33 (-33.6); 129 -
// 33 = 96.
TEST_CASE("display: SurfaceFlinger's hint session counts a late wake-up in its estimate", "[display][adpf]") {
  auto rig = adpf_rig(std::nullopt, true);
  Rig& r = *rig;
  r.add_fifo_hog(S(14) - Time::us(1), Time::ms(2));
  r.run(S(14) + Time::us(3499) + Time::ns(1));
  CHECK(r.disp->sf_task().uclamp_req[kUclampMin].value == 96u);
}

// HWUI's session (Android 14's batching) on the common rig: each frame's
// work is 5 ms (UI 2 ms + RenderThread 3 ms, no dequeue wait) against 70%
// of 8333333 ns = 5833333: error -8, every report of the first window sent
// (within a rate of first meeting the target): 129 - 12 x 8 = 33, stale
// 20 x 5833333 ns after the last. The collapse window's first queueBuffer
// (k = 146) is a scheduleCommit() 1 s after the last, so
// DISPLAY_UPDATE_IMMINENT reaches the HAL before DrawFrameTask's report
// does: the stale session gets max(33, 129), then the report's P, 121 (the
// other order would give 33 - 8 = 25 and no wake-up).
TEST_CASE("display: DISPLAY_UPDATE_IMMINENT from a queueBuffer wakes HWUI's stale session before its report",
          "[display][adpf]") {
  auto rig = adpf_rig(AdpfBatching::kAndroid14, false);
  Rig& r = *rig;
  const Task& ui = r.disp->ui_task();
  const auto ui_min = [&] { return ui.uclamp_req[kUclampMin].value; };
  const Time q25 = W(25) + Time::ms(5);
  r.run(q25 + Time::ns(1));
  CHECK(ui_min() == 33u);
  CHECK(r.disp->render_task().uclamp_req[kUclampMin].value == 33u);
  r.run(q25 + Time::ns(116666660 + 1));
  CHECK(ui_min() == 0u);
  r.run(W(146) + Time::ms(5) + Time::ns(1));
  CHECK(ui_min() == 121u);
}
