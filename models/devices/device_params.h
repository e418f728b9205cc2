// Typed parameters of the device models (models/devices/): a GPU, a DRM GPU
// scheduler and a display pipeline. Built by models/config/devices_config.cc
// from the scenario's `devices:` list, where each device names its `model`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "models/devices/adpf.h"
#include "models/workload/task_spec.h"
#include "sim/time.h"

namespace schedlab {

class RngStream;

// A service-time distribution, drawn from the device's RngStream.
struct Distribution {
  enum class Kind { kFixed, kUniform, kExponential, kLognormal };
  Kind kind = Kind::kFixed;
  Time mean = Time::ms(1);   // fixed value; exponential / lognormal mean
  Time min, max;             // uniform bounds
  double sigma = 0.5;        // lognormal: sd of the underlying normal
  Time sample(RngStream& rng) const;
};

const char* distribution_name(Distribution::Kind k);  // "fixed", "uniform", ...

// A GPU executing the jobs the DRM scheduler hands it.
// A threaded interrupt handler (request_threaded_irq(), kernel/irq/manage.c
// 6.12): the hard handler only wakes irq_thread(), which setup_irq_thread()
// makes SCHED_FIFO 50 (sched_set_fifo()) and irq_thread_check_affinity()
// keeps on the interrupt's CPU; the thread runs the handler.
struct IrqThreadParams {
  bool enabled = false;
  std::string comm;              // empty: "irq/<gpu name>"
  Policy policy = Policy::kFifo;
  int nice = 0;
  int rt_priority = 50;          // MAX_RT_PRIO / 2
  Time cost = Time::us(5);       // CPU work per handler run (capacity 1024, f_max); an assumption
};

struct GpuParams {
  int slots = 1;              // jobs executed at once (firmware/hardware queues in use)
  Distribution service_time;  // per job, unless the submitting event gives gpu_time
  int irq_cpu = 0;            // CPU taking the job interrupt
  Time irq_latency;           // job end -> interrupt handler
  IrqThreadParams irq_thread; // enabled: the job interrupt's handler is threaded
  // kthread_worker running the driver's retire work (drm/msm's "gpu-worker");
  // "": jobs retire in the interrupt's context.
  std::string retire_worker;
  Time retire_cost = Time::us(10);  // CPU work per retire run (capacity 1024, f_max); an assumption
  // drm/msm devfreq's idle work (needs retire_worker): once no job is
  // active, msm_devfreq_idle() queues it on the retire worker after this
  // delay (msm: 1 ms); a job starting first cancels it. 0: none.
  Time idle_work_delay;
  Time idle_work_cost = Time::us(5);  // CPU work per idle-work run (capacity 1024, f_max); an assumption
  // CSF firmware (panthor): a request the driver rings a CSG doorbell for
  // -> the firmware's acknowledgement, which raises the job interrupt
  // (csg_iface ack_irq_mask = ~0). 0: requests are not modelled.
  Time fw_ack_latency;
};

// Where a DRM scheduler runs its run_job / free_job work.
enum class DrmSubmitPath { kWorkqueue, kKthreadWorker };

// A drm_gpu_scheduler (drivers/gpu/drm/scheduler/) with its entities.
struct DrmSchedParams {
  std::string gpu;                 // the GPU device it feeds
  DrmSubmitPath path = DrmSubmitPath::kWorkqueue;
  std::string submit_wq;           // workqueue name (path kWorkqueue)
  std::string kthread_worker;      // kthread_worker name (path kKthreadWorker)
  std::string fence_wq;            // workqueue signalling fences after the IRQ; empty: in the IRQ
  std::vector<std::string> entities;  // drm_sched_entity names (userspace queues)
  int credit_limit = 64;           // jobs in flight on the hardware ring (1 credit per job)
  // CPU work (capacity time at 1024 and f_max) of each step.
  Time select_cost = Time::us(2);  // run_job work: drm_sched_select_entity() + pop, also when it finds nothing
  Time run_job_cost = Time::us(10);  // ops->run_job(): ring write and doorbell
  Time free_job_cost = Time::us(5);  // free_job work: ops->free_job()
  Time fence_cost = Time::us(10);    // fence work: process the GPU events (and signal done fences, below)
  // panthor's chain after its fw-events work (panthor_sched.c, 6.18), each
  // a work item on fence_wq; 0 = no such item (the default: one fence work).
  Time signal_work_cost;       // the group's sync-update work signals the done fences (else the fence work does)
  Time sync_update_work_cost;  // the scheduler-level sync-update work, queued beside it
  Time idle_tick_cost;         // the tick work, queued when the GPU went idle (no job left on it)
  // A fw-events run that finds only a request's acknowledgement (no CSG
  // event to handle: sched_process_csg_irq_locked() returns early).
  Time fw_ack_events_cost = Time::us(2);
  // panthor_fw_wait_acks()'s busy poll before it sleeps: 6.18's
  // read_poll_timeout_atomic(..., 0, 10, ...) counts 10 us as 10,000
  // passes (poll_timeout_us_atomic() reads no clock), each an uncached
  // read of the firmware interface; its length in time is this.
  Time fw_ack_poll = Time::ms(1);
};

// A thread the display pipeline creates (models/devices/display.h).
struct DisplayThreadParams {
  std::string comm;
  Policy policy = Policy::kNormal;
  int nice = 0;                // fair policies
  int rt_priority = 0;         // SCHED_FIFO / SCHED_RR: 1..99
  std::vector<int> cpus;       // affinity; empty = every CPU
  std::string cgroup;          // the cpu cgroup it runs in ("" = the root)
};

// The display pipeline of one app layer (models/devices/display.h): vsync,
// Choreographer, RenderThread, SurfaceFlinger, FrameTimeline. Defaults are
// labelled assumptions there.
struct DisplayParams {
  double refresh_hz = 120;     // vsync period = round(1e9 / refresh_hz) ns
  // SurfaceFlinger's "late" work durations (debug.sf.late.{app,sf}.duration);
  // 0 = AOSP's value for an unset property: app = one period, sf = period - 1 ms.
  Time app_duration;
  Time sf_duration;
  // Animation schedule: from start_delay, windows of `animation` separated by
  // `gap`; one cycle = two windows (shade open, shade collapse); -1 = forever.
  Time start_delay = Time::ms(100);
  Time animation = Time::ms(400);
  Time gap = Time::ms(1500);
  int cycles = -1;
  // Single frames between the animations (a clock tick, a notification
  // icon, a ripple: SystemUI redraws now and then while the shade is
  // closed): one frame request at intervals drawn from this distribution
  // while no animation runs. Unset: none.
  std::optional<Distribution> idle_frame_interval;
  std::string layer = "NotificationShade";  // FrameEvent::layer
  DisplayThreadParams ui_thread{"ndroid.systemui", Policy::kNormal, -10, 0, {}, {}};
  DisplayThreadParams render_thread{"RenderThread", Policy::kNormal, -10, 0, {}, {}};
  DisplayThreadParams sf_thread{"surfaceflinger", Policy::kFifo, 0, 2, {}, {}};
  // Per-frame work (CPU: capacity time at 1024 and f_max).
  Distribution ui_cost{Distribution::Kind::kLognormal, Time::us(2500), {}, {}, 0.3};
  std::optional<Distribution> first_ui_cost;  // the first frame of each animation (unset: ui_cost)
  Distribution render_cost{Distribution::Kind::kLognormal, Time::us(2000), {}, {}, 0.3};
  Distribution gpu_time{Distribution::Kind::kLognormal, Time::us(3000), {}, {}, 0.3};  // fixed 0: the GPU's own
  Distribution sf_cost{Distribution::Kind::kLognormal, Time::us(1500), {}, {}, 0.3};
  Distribution commit_cost{Distribution::Kind::kLognormal, Time::us(300), {}, {}, 0.3};
  int buffers = 3;             // the layer's buffer count (BufferQueue slots in use)
  // layer_state_t::eEnableBackpressure, which BLASTBufferQueue sets on every
  // app surface since Android 12: SurfaceFlinger applies at most one buffer
  // of the layer per frame, so a late buffer is shown a vsync late and the
  // next one waits ("buffer stuffing"). false: the pre-BLAST BufferQueue
  // consumer, which latches the newest due buffer and drops older ones.
  bool backpressure = true;
  std::string gpu;             // Gpu device rendering the frames; "" = none (buffers ready at queueBuffer)
  // Runtime PM devices (pm_runtime.devices names); "" = none.
  std::string gpu_rpm;         // RenderThread get_sync before submitting; put_autosuspend when the GPU retires the job
  // drm/msm's submit path: the DRM scheduler's run_job work on this
  // workqueue takes the gpu_rpm reference (msm_gpu_submit():
  // pm_runtime_get_sync()) and hands the job to the GPU; RenderThread only
  // pushes the job. "": RenderThread takes it and submits itself.
  std::string gpu_submit_wq;
  Time run_job_cost = Time::us(10);  // CPU work of run_job per job (capacity 1024, f_max); an assumption
  Time free_job_cost = Time::us(5);  // CPU work of free_job per job (msm_job_free()); an assumption
  std::string ui_rpm;          // UI thread get_sync / put_autosuspend around its work
  std::string display_rpm;     // SurfaceFlinger get_sync / put_autosuspend around its commit (see commit_wq)
  // drm/msm's nonblocking atomic commit (drm_atomic_helper_commit() with
  // DRM_MODE_ATOMIC_NONBLOCK, 6.12; display.cc, CommitFn): SurfaceFlinger
  // (standing for the composer) waits for the previous commit's flip_done
  // and its earliest present time, then its ioctl runs commit_ioctl_cost
  // and queues commit_tail() on this workqueue (system_unbound_wq is
  // "events_unbound"), whose worker takes display_rpm with get_sync
  // (dpu_kms_enable_commit()), runs commit_cost, sleeps until the flush
  // latches at the next vsync, signals the present fence and drops
  // display_rpm with put_sync (dpu_kms_disable_commit()). "": SurfaceFlinger
  // commits itself (display_rpm get_sync, commit_cost, put_autosuspend).
  std::string commit_wq;
  // Qualcomm's downstream SDE driver (msm_atomic_commit(), techpack
  // display-drivers): the commit runs on this kthread_worker instead (its
  // crtc_commit:N, SCHED_FIFO 16), the same steps; the ioctl waits until
  // the CRTC's previous commit is done (not just flipped). Give one of
  // commit_wq and commit_worker.
  std::string commit_worker;
  Time commit_ioctl_cost = Time::us(100);  // SF's part (atomic check, prepare_planes, swap, queue); an assumption
  // dpu_crtc_enable(): the active CRTC holds a display_rpm reference
  // (taken at start, never dropped: the screen stays on), so each
  // commit's get/put only counts.
  bool crtc_holds_display_rpm = false;
  // Downstream SDE's idle power collapse of a command-mode panel
  // (sde_encoder.c, with commit_worker): the encoder holds a display_rpm
  // reference from a kickoff (rc_state ON), and each kickoff re-arms its
  // off work on commit_worker (kthread_mod_delayed_work(), this delay:
  // IDLE_POWERCOLLAPSE_DURATION, 58 ms); the off work runs idle_pc_cost
  // and drops the reference with put_sync, which suspends the display
  // there when nothing else holds it; the next commit's get_sync resumes
  // it in the commit thread. 0: no idle power collapse (a video-mode
  // panel, whose off work only turns its interrupts off).
  Time idle_pc_delay;
  Time idle_pc_cost;
  // The CRTC's frame event thread (crtc_event:<id>: mainline msm_kms.c
  // creates it with kthread_create_worker() and sched_set_fifo(), SCHED_FIFO
  // 50; SDE's is SCHED_FIFO 16): each frame done (the flush latched, in the
  // display interrupt) queues one of the CRTC's 4 frame events on it
  // (dpu_crtc_frame_event_cb(): kthread_queue_work(); none free: the event
  // is dropped), whose work (dpu_crtc_frame_event_work()) retires the frame
  // (frame_pending) in frame_event_cost. "": none.
  std::string frame_event_worker;
  Time frame_event_cost = Time::us(5);  // an assumption (bookkeeping; the bandwidth release is off by default)
  // Mainline DPU's encoder idle work (dpu_encoder.c resource control, 6.12;
  // with commit_wq, catalogs with has_idle_pc, video mode): a frame done
  // with at most one frame pending queues the encoder's off work on this
  // workqueue (priv->wq, the ordered "msm" workqueue) encoder_idle_timeout
  // ahead (queue_delayed_work(): not re-armed while pending); each kickoff
  // cancels it in the commit worker (cancel_delayed_work_sync(): a wait if
  // it is executing); the off work turns the encoder's interrupts off
  // (encoder_off_cost; rc_state IDLE), the next kickoff on again. "": none.
  std::string encoder_wq;
  Time encoder_idle_timeout = Time::ms(58);  // IDLE_TIMEOUT (dpu_encoder.h)
  Time encoder_off_cost = Time::us(5);       // an assumption (_dpu_encoder_irq_disable())
  // drm/msm's vblank interrupt control (msm_kms.c vblank_ctrl_queue_work(),
  // drm_vblank.c, 6.12; with commit_wq): commit_tail() holds a vblank
  // reference from its flush to the end of wait_flush()
  // (msm_atomic_commit_tail(): vblank_get() / vblank_put()). The get that
  // finds vblank off turns it on (drm_vblank_enable() ->
  // msm_crtc_enable_vblank()), the first vblank interrupt that finds no
  // reference turns it off (DPU sets vblank_disable_immediate:
  // drm_handle_vblank() -> vblank_disable_fn()): an isolated commit, or a
  // vsync missed inside a burst, costs an enable and a disable. Each
  // switch queues a freshly allocated work item on this workqueue
  // (priv->wq, the ordered "msm" workqueue), whose work
  // (vblank_ctrl_worker() -> dpu_kms_enable_vblank() / _disable_vblank():
  // the encoders' vblank refcounts) costs vblank_work_cost. "": none.
  std::string vblank_wq;
  Time vblank_work_cost = Time::us(5);       // an assumption (a mutex, a refcount, kfree(); the callback only at 0)
  int display_irq_cpu = 0;     // the display controller's interrupt (vblank); an assumption
  // The DPU encoder's vblank interrupt at every vsync while it is
  // registered (dpu_encoder_phys_vid.c, 6.12: the encoder's interrupts on,
  // rc_state ON, or drm's vblank on, dpu_encoder_toggle_vblank_for_crtc()):
  // each wakes display_irq_cpu from idle. Needs encoder_wq or vblank_wq.
  // Off: the display interrupt fires only where the model hands it work
  // (a latch, the composer's event, the vblank switch-off).
  bool encoder_vblank_irq = false;
  // The touch that starts each animation: its interrupt path takes an async
  // reference (pm_runtime_get(): the hardware powers up on pm_wq while the
  // app prepares its first frame) and drops it (put_autosuspend) when the
  // animation ends. Interrupt on CPU touch_irq_cpu.
  std::string touch_rpm;
  int touch_irq_cpu = 0;
  // SurfaceFlinger's vsync delivery threads (models/devices/display.h):
  // off, the vsync timers wake the UI thread and SurfaceFlinger directly.
  bool vsync_threads = false;
  DisplayThreadParams timer_dispatch_thread{"TimerDispatch", Policy::kFifo, 0, 2, {}, {}};  // Scheduler/Timer.cpp
  DisplayThreadParams app_event_thread{"app", Policy::kFifo, 0, 2, {}, {}};                 // Scheduler/EventThread.cpp
  Time timer_dispatch_cost = Time::us(10);  // CPU work per TimerDispatch wake-up (capacity 1024, f_max); an assumption
  Time app_event_cost = Time::us(20);       // CPU work per app EventThread round (a vsync dispatched or
                                            // suppressed, a request taken); an assumption
  // The binder process (binder_procs) whose pool thread runs the UI
  // thread's one-way requestNextVsync() (EventThreadConnection, in
  // SurfaceFlinger); "": the UI thread reaches the EventThread itself.
  // Needs vsync_threads.
  std::string vsync_request_binder;
  Time vsync_request_cost = Time::us(10);   // that thread's CPU work per request; an assumption
  // SurfaceFlinger's hardware-vsync resync (models/devices/display.h,
  // "Hardware vsync"; needs vsync_threads): a vsync request more than
  // hw_vsync_ignore_delay after the previous one turns hardware vsync on
  // until hw_vsync_samples vsyncs have reached SF; the composer's event
  // thread waits for each vblank (a vblank reference with vblank_wq).
  bool hw_vsync_resync = false;
  Time hw_vsync_ignore_delay = Time::ms(750);  // Scheduler::resync(): kIgnoreDelay (AOSP 14, 15)
  int hw_vsync_samples = 6;                    // VSyncPredictor: kMinimumSamplesForPrediction (AOSP 14, 15)
  // SF's predictor has fitted a period from samples (the screen has been
  // on); false: SF has just started and never sampled (as after boot).
  bool hw_vsync_predictor_trained = true;
  // Qualcomm's display HAL's DRM event thread (sdm hw_events_drm.cpp:
  // "SDM_EventThread", nice -9, then SCHED_FIFO at the minimum priority).
  DisplayThreadParams hw_vsync_thread{"SDM_EventThread", Policy::kFifo, 0, 1, {}, {}};
  Time hw_vsync_event_cost = Time::us(20);     // its work per vblank event; an assumption
  // The binder process whose pool runs the composer's one-way onVsync()
  // callback in SF (its hwbinder pool); "": the sample reaches SF with no
  // thread of its own.
  std::string hw_vsync_binder;
  Time hw_vsync_callback_cost = Time::us(10);  // onComposerHalVsync() per callback; an assumption
  Time hw_vsync_toggle_cost = Time::us(30);    // SF main's setVsyncEnabled() message; an assumption
  // The touch input path (models/devices/display.h, "Input"; needs
  // vsync_threads): while the finger is down (each animation window) the
  // touch controller reports at touch_report_hz; each report's interrupt
  // wakes the touch IRQ thread, which wakes InputReader, which wakes
  // InputDispatcher, which wakes the UI thread's Looper; the UI thread
  // sends the finish signals back to InputDispatcher at its next doFrame().
  // Off: the touch that opens a window wakes the UI thread with no waker.
  bool input_threads = false;
  double touch_report_hz = 120;  // an assumption (the panel's report rate while touched)
  // request_threaded_irq(): SCHED_FIFO 50 (setup_irq_thread(): sched_set_fifo());
  // affinity: touch_irq_cpu when cpus is empty (the IRQ's effective affinity).
  DisplayThreadParams touch_irq_thread{"irq/touch", Policy::kFifo, 0, 50, {}, {}};
  // inputflinger's InputThread: ANDROID_PRIORITY_URGENT_DISPLAY (nice -8).
  DisplayThreadParams input_reader_thread{"InputReader", Policy::kNormal, -8, 0, {}, {}};
  DisplayThreadParams input_dispatcher_thread{"InputDispatcher", Policy::kNormal, -8, 0, {}, {}};
  // CPU work (capacity 1024, f_max) per round; assumptions.
  Time touch_irq_cost = Time::us(50);          // the threaded handler: read the controller, input_sync()
  Time input_reader_cost = Time::us(100);      // EventHub::getEvents() + InputReader's mappers, per round
  Time input_dispatcher_cost = Time::us(100);  // InputDispatcher: pick the window, publish the motion
  Time input_finish_cost = Time::us(30);       // InputDispatcher: the app's finished signals
  Time ui_input_cost = Time::us(50);           // UI thread: NativeInputEventReceiver, batch and post; a drag's doFrame() that consumes nothing
  Time ui_down_cost = Time::us(300);           // UI thread: a touch-down delivered at once (dispatchTouchEvent)
  Time ui_up_cost = Time::us(300);             // UI thread: an injected lift delivered at once; an assumption
  // A frame's CALLBACK_INPUT takes the batched motions no later than its
  // frame time minus this (InputConsumer's RESAMPLE_LATENCY with touch
  // resampling on, ro.input.resampling's default; 0: resampling off).
  Time input_resample_latency = Time::ms(5);
  // While a finger holds the views: a frame draws only if its input moved
  // them (false: a plain View or Compose list), or every vsync (true: an
  // app that animates per frame meanwhile, as SystemUI's shade blur).
  bool drag_draws_every_frame = false;
  // Where the touches come from (needs input_threads): the touch
  // controller's reports, or a UI test injecting them (models/devices/
  // display.h, "Injected input"): no interrupt, no InputReader.
  enum class InputSource : uint8_t { kTouch, kInjected };
  InputSource input_source = InputSource::kTouch;
  // The test's thread (androidx.test's InstrumentationThread, "Instr: ..."
  // in the app's process: a plain thread at nice 0).
  DisplayThreadParams injector_thread{"instrumentation", Policy::kNormal, 0, 0, {}, {}};
  // The binder process (binder_procs) whose pool runs
  // InputManagerService.injectInputEvent() (system_server's); "": the
  // test's thread queues the event itself.
  std::string inject_binder;
  // UiAutomator's InteractionController sleeps
  // MOTION_EVENT_INJECTION_DELAY_MILLIS (5 ms) after each swipe step.
  Time inject_step_delay = Time::ms(5);
  // How long each window's gesture injects, from the window's start (a
  // fling's swipe is short, its animation long); 0: the whole window.
  Time inject_duration = Time::zero();
  Time inject_cost = Time::us(100);        // the test's thread per event (MotionEvent, UiAutomation); an assumption
  Time inject_server_cost = Time::us(50);  // the binder thread: injectInputEvent() up to the queue; an assumption
  // UiAutomationConnection.injectInputEvent() syncs the input windows
  // (WindowManagerService.syncInputTransactions()) before each touch-down
  // and after each lift: the binder thread's WindowManager work, then a
  // wait for SurfaceFlinger's next commit, which costs SF's main thread
  // sf_input_sync_cost.
  bool inject_sync_input = true;
  Time inject_sync_cost = Time::us(200);    // system_server: surface placement, input windows, apply(); an assumption
  Time sf_input_sync_cost = Time::us(100);  // SF main thread: the commit and updateInputFlinger(); an assumption
  // HWUI's ADPF hint session on the UI thread and RenderThread, driven by
  // the Pixel power HAL's PID (models/devices/adpf.h); unset: none. Needs
  // kernel.uclamp.enabled (the controller writes uclamp_min).
  std::optional<AdpfParams> adpf;
  // SurfaceFlinger's own ADPF hint session on its main thread (Android 13
  // QPR1+ PowerAdvisor, raviole's debug.sf.enable_adpf_cpu_hint;
  // models/devices/adpf.h); unset: none. Its batching is
  // AdpfBatching::kSurfaceFlinger. Needs kernel.uclamp.enabled.
  std::optional<AdpfParams> sf_adpf;
  // PowerAdvisor's DISPLAY_UPDATE_IMMINENT throttle
  // (ro.surface_flinger.display_update_imminent_timeout_ms: AOSP's default
  // 80, gs101's device.mk 50): a
  // scheduleCommit() this long or more after the previous one sends the
  // hint, which wakes stale hint sessions (with `adpf` or `sf_adpf`).
  Time update_imminent_timeout = Time::ms(80);
};

struct DeviceParams {
  std::string name;
  std::string model;  // "gpu" | "drm_sched" | "display"
  std::variant<GpuParams, DrmSchedParams, DisplayParams> params;
};

}  // namespace schedlab
