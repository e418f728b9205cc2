// The display pipeline of one app layer on an Android phone: the vsync
// source, the app's UI thread (Choreographer) and RenderThread (HWUI),
// SurfaceFlinger's main thread, the GPU and the display, with frames
// classified as FrameTimeline classifies them.
//
// Per frame (AOSP names; frameworks/native = fn, frameworks/base = fb):
//  - vsync: a perfect predictor (fn/services/surfaceflinger/Scheduler/
//    VSyncPredictor.cpp once it has converged): vsync k is at k * period,
//    period = round(1e9 / refresh_hz) ns, computed by multiplication, never
//    by accumulation (no drift). Hardware vsync interrupts are not events.
//  - the "duration" model (Scheduler/VsyncConfiguration.cpp WorkDuration,
//    VSyncDispatchTimerQueue): for a frame targeting present vsync P, the
//    app's Choreographer callback fires at P - app_duration - sf_duration and
//    SurfaceFlinger's at P - sf_duration. Defaults are AOSP's for unset
//    debug.sf.late.{app,sf}.duration (WorkDuration::constructOffsets():
//    app = period, sf = period - 1 ms; at 120 Hz 8.333 and 7.333 ms).
//    Without vsync_threads both wake-ups are timer wake-ups of the threads
//    (waker nullptr): TimerDispatch, the app EventThread and the BitTube
//    hop to the app are not modelled; with it they are (Vsync delivery,
//    below).
//  - UI thread (Choreographer.doFrame): an app vsync is delivered only while
//    an animation window is open (the app asks for vsync one frame at a
//    time, fb/core/java/android/view/Choreographer.java); one delivery can be
//    pending while the thread is busy. A frame started at least one period
//    after its vsync is retargeted to the latest vsync, as doFrame() does
//    for skipped frames. The thread runs ui_cost (first_ui_cost on the first
//    frame of an animation), hands the frame to RenderThread (waker = UI)
//    and waits until RenderThread has synced it (HWUI DrawFrameTask::
//    postAndWait(): RenderThread wakes the UI thread, waker = RenderThread).
//  - RenderThread (HWUI CanvasContext::draw): dequeueBuffer (sleeps while all
//    `buffers` are in use: one on screen, queued ones, the one it draws),
//    render_cost, [gpu_rpm: pm_runtime_get_sync() standing for the GPU
//    driver's submit ioctl], submit gpu_time to the Gpu, queueBuffer. With
//    gpu_submit_wq (drm/msm) RenderThread only pushes the job: the DRM
//    scheduler's run_job work on that workqueue takes the reference
//    (msm_gpu_submit(): pm_runtime_get_sync(), the resume in the kworker),
//    runs run_job_cost and hands the job to the Gpu (SubmitFn), then queues
//    itself again (an empty run when nothing is pushed); the job's fence
//    queues free_job there (free_job_cost, FreeJobFn), which queues
//    run_job again (an empty run). The
//    buffer is latchable when its fence is signalled (gpu_job_done(): in
//    the job interrupt, or drm/msm's retire work, models/devices/gpu.h); the
//    GPU driver calls pm_runtime_put_autosuspend(gpu_rpm) when it retires
//    the job (gpu_job_retired(): in the job interrupt's context, or on the
//    GPU's retire kthread_worker, models/devices/gpu.h).
//  - SurfaceFlinger (MessageQueue::Handler::dispatchFrame, SurfaceFlinger::
//    commit/composite): a queueBuffer schedules SF's callback for the next
//    SF wake-up; a callback arriving while the previous one is still pending
//    is dropped (dispatchFrame keeps the first). At its wake-up for target P,
//    SF skips the frame if the display already has a frame presenting at or
//    after P (the pending present fence: FrameTarget::isFramePending());
//    else it latches the head of the queue if it is ready (GPU done;
//    latch-unsignaled off, assumption: AOSP 14/15 default to
//    AutoSingleLayer) and not early (SurfaceFlinger::frameIsEarly():
//    expected present >= P + period / 2): one buffer per frame, as the
//    layer's BLAST backpressure makes it (layer_state_t::
//    eEnableBackpressure; `backpressure: false`: every ready, due buffer,
//    the last one latched, the others dropped). It runs sf_cost, then
//    [display_rpm: get_sync] commit_cost [put_autosuspend] (the DRM atomic
//    commit).
//    The frame is presented at the first vsync >= max(P, commit end).
//    With commit_wq (drm/msm's nonblocking commit, display.cc CommitFn)
//    SF instead waits for the previous commit's flip_done and for its
//    earliest present time (P - period), runs commit_ioctl_cost and queues
//    commit_tail() on that workqueue; its worker takes display_rpm
//    (get_sync), runs commit_cost, sleeps until the flush latches at the
//    next vsync, signals the present fence there (stamped with the latest
//    vblank) and puts display_rpm (put_sync).
//    Unlatched buffers keep SF waking every vsync.
//  - FrameTimeline (fn/services/surfaceflinger/FrameTimeline/FrameTimeline.cpp):
//    app_deadline = expected present - sf_duration (the SF wake-up for it);
//    app_end = max(queueBuffer, GPU completion). SF missed if the commit
//    that presented the frame ended after that SF frame's expected present.
//    SurfaceFrame::classifyJankLocked() then gives the verdict
//    (DisplayPipeline::classify_jank()): no jank within 2 ms of the
//    expected present; late, App Deadline Missed if app_end > app_deadline,
//    with Buffer Stuffing moving the deadline to the layer's previous latch
//    + one period when that latch came at or after it. A frame replaced
//    before being latched (no backpressure) is dropped. SchedObserver::
//    on_frame() gets each frame when it is presented (at the present vsync)
//    or dropped (at the latch).
//    Not modelled (session 53's review): Choreographer's late-frame
//    retarget keeps the latest vsync's frame timeline (Android 15's
//    FrameData.update() takes the first whose deadline leaves
//    app_duration, a vsync later; Android 13 clears the vsync id, leaving
//    the frame without a verdict; 14 not checked); the skip test reads the
//    last composite's present, where FrameTargeter reads the one two
//    frames back once sf_duration exceeds a period and waits up to 1 ms on
//    its fence; no buffer release fences (the GPU may start on a buffer
//    still on screen).
//
// Threads (created here with Kernel::create_task, started at construction):
// the UI thread and RenderThread at SCHED_OTHER nice -10 (THREAD_PRIORITY_
// TOP_APP_BOOST, fb/services/core/java/com/android/server/am/OomAdjuster.java
// applyOomAdjLSP(), "Boost priority for top app UI and render threads";
// ActivityManagerService.applyOomAdjLocked() before Android 10), and
// SurfaceFlinger's main thread at SCHED_FIFO 2 (SurfaceFlinger::setSchedFifo(),
// kFifoPriority = 2). Default comms: "ndroid.systemui" (SystemUI's main
// thread: the last 15 characters of its process name, as traces show it),
// "RenderThread", "surfaceflinger".
//
// Vsync delivery (`vsync_threads`; SurfaceFlinger as of Android 14,
// fn/services/surfaceflinger/Scheduler/): VSyncDispatchTimerQueue keeps
// SF's and the app's callbacks on one timerfd, an hrtimer. schedule() arms
// it from the calling thread (timerfd_settime(); an unpinned hrtimer stays
// on that CPU) when it is idle or the callback is due more than 500 us
// (kGroupDispatchWithin, VsyncSchedule::createDispatch()) before its
// intended wake-up; else the callback waits for that expiry. The expiry
// wakes the "TimerDispatch" thread (SCHED_FIFO 2, Timer.cpp
// Timer::dispatch()) from the CPU the timer was queued on; its
// timerCallback() takes every callback due within 500 us of the intended
// wake-up (plus however late the round is; a callback scheduled between
// the expiry and the round waits for the re-armed timer, rearmImminent),
// re-arms the timer for the rest from its own CPU and runs them
// (timer_dispatch_cost, SF's first): SF's (MessageQueue::vsyncCallback()
// -> Handler::dispatchFrame(): SF's main thread woken by TimerDispatch)
// and the "app" EventThread's (EventThread::onVsync(): that thread,
// SCHED_FIFO 2 -- EventThread's constructor, EVENT_THREAD_PRIORITY --
// woken by TimerDispatch), which writes the vsync event to the app's
// DisplayEventReceiver (app_event_cost) and so wakes the UI thread's
// Looper. SF's callback is scheduled by MessageQueue::scheduleFrame() in
// the thread that queued the buffer, modelled on the CPU of the thread
// calling request_sf() (RenderThread's queueBuffer stands for SF's binder
// thread, SF's own re-requests for its main thread); the app's by the app
// EventThread at the end of its round (threadMain() calls
// mVsyncRegistration.schedule() while the app's connection asks for
// vsync; Android 12 and 13 re-armed it from the callback instead).
// The app asks for vsync one frame at a time (EventThread.cpp: the
// connection's vsyncRequest None / Single / SingleSuppressCallback):
// requestNextVsync() from None sets Single and wakes the EventThread,
// which schedules the callback; from SingleSuppressCallback it sets Single
// and wakes nobody. The EventThread decides at the start of its round,
// under its lock (a request arriving meanwhile waits, then wakes it for
// another round): an expiry that finds Single is dispatched, leaving
// SingleSuppressCallback, and the next callback is scheduled anyway; an
// expiry that finds SingleSuppressCallback (the app did not ask again in
// time) dispatches nothing, sets None and schedules nothing. So each run
// of frames ends with one more TimerDispatch and EventThread round that
// delivers nothing, and a UI thread that asks after the next callback
// expired wakes the EventThread again. The UI thread asks at the start of
// doFrame() (the animation callbacks, which post the next frame callback,
// run first and are short) while the next callback is inside the animation
// window; the request that opens a window (the touch; without
// input_threads) and an idle redraw (a Handler message) wake the UI thread
// with no waker (the message's sender is not modelled), and it asks when
// it gets to them.
// requestNextVsync() is a one-way binder call (IDisplayEventConnection.aidl):
// with `vsync_request_binder` a thread of that binder process's pool
// (SurfaceFlinger's) serves it (vsync_request_cost) and wakes the
// EventThread when it must, at the priority the binder model gives a
// one-way transaction; without, the UI thread wakes the EventThread
// itself. Simplified: every EventThread round costs app_event_cost.
//
// Hardware vsync (`hw_vsync_resync`; needs vsync_threads): SurfaceFlinger
// predicts vsync from samples and turns the display's hardware vsync on
// only to resync (AOSP 14 and 15, Scheduler/Scheduler.cpp,
// VsyncSchedule.cpp, VSyncReactor.cpp). EventThread::requestNextVsync()
// calls Scheduler::resync() first: a request more than kIgnoreDelay
// (750 ms, hw_vsync_ignore_delay) after the previous request (every call
// resets the clock, which starts at 0 when the run does) turns hardware
// vsync on if it is off: the predictor's samples are cleared and the
// switch is posted to SF's main thread (a Looper message: it wakes SF if
// SF waits in its Looper), which calls the composer's setVsyncEnabled()
// (hw_vsync_toggle_cost; HWComposer skips a switch to the state it has).
// The composer (Qualcomm's display HAL, sdm hw_events_drm.cpp) registers
// a DRM vblank event one vblank ahead (drmWaitVBlank(RELATIVE | EVENT):
// a vblank reference until the event, which with vblank_wq may turn
// vblank on, drm_vblank.c 6.12); each event wakes its SDM_EventThread
// (SCHED_FIFO 1) from the display interrupt, which registers the next
// wait while its vsync is on, runs hw_vsync_event_cost and calls SF's
// onVsync() (one-way; with `hw_vsync_binder` a thread of that pool, SF's
// hwbinder pool, runs onComposerHalVsync(), hw_vsync_callback_cost).
// SF's vsync model (VSyncReactor, VSyncPredictor) sees exact timestamps
// here, vsync indices. Enabling resets the predictor (resetModel(): the
// nominal period, no samples). A resync with a fitted predictor (its
// period is never exactly the nominal one on a phone: sdm's timestamps
// are in microseconds, the panel drifts) starts a period transition:
// present fences are ignored and more samples asked for; the first sample
// confirms the period (the composer reports it) and the predictor asks
// for more until it holds kMinimumSamplesForPrediction (6,
// hw_vsync_samples); the last one turns hardware vsync off (posted to SF's
// main thread again), and the wait already registered still delivers one
// more event, which the composer drops (DisplayBuiltIn::VSync(): its
// vsync is off). So a resync takes 6 samples and 7 events. The run starts
// with the predictor fitted (`hw_vsync_predictor_trained`; false: SF has
// just started, as after boot): an unfitted one's resync takes present
// fences and asks for no samples, and each composite adds its present
// fence (onCompositionPresented() -> Scheduler::addPresentFence():
// pending until its flip, stamped with that vblank); a signalled fence
// whose vblank the predictor holds already (a sampled one) is rejected as
// a duplicate, which while learning clears the samples and ignores fences
// until 6 come in a row (a burst: about 8 samples); after every composite
// the schedule enables hardware vsync if more samples are needed and
// disables it if not (so a composite before the first sample turns it off
// again). In a steady state every fence is accepted and nothing else
// turns hardware vsync on; the model's vsync is exact, never off phase.
// Simplified: the composer's binder thread that serves setVsyncEnabled()
// is SF's main thread's cost, the wait registered from its CPU;
// onComposerHalVsync() does not wait for SF's mStateLock; EventThread::
// getLatestVsyncEventData() (Choreographer, on skipped frames: within
// 750 ms of a request) is not called; display power and mode changes and
// a kernel idle timer (Qualcomm's display-product.mk does not set
// ro.surface_flinger.support_kernel_idle_timer) do not happen; an on and
// an off before SF's main thread runs are one switch, or none (AOSP makes
// both calls, one wait then fires and is dropped), and an off then on
// within a vblank registers no second wait (sdm's would, and HWComposer
// would drop its duplicate event); the HIDL composer's callback
// (onVsync_2_4) is assumed (Qualcomm's newer composers are AIDL, whose
// callback reaches SF's main binder pool, at SCHED_FIFO 2 by its node's
// minimum either way).
// Without vsync_threads (the simple model) the app's callback fires at
// every vsync of an animation window and for each idle redraw, SF's and
// the app's callbacks keep separate timers, queued on the woken thread's
// CPU, and wake it directly, as from its current CPU.
//
// FrameEvent::vsync_id is the index k of the frame's expected present vsync.
//
// Assumptions (labelled defaults in device_params.h): costs are lognormal
// (sigma 0.3) around typical Perfetto slices of a notification-shade pull on
// a 120 Hz phone: UI 2.5 ms, RenderThread 2 ms, GPU 3 ms, SF 1.5 ms, commit
// 0.3 ms; animation 400 ms (shade open or collapse), gap 1.5 s (longer than
// the GPU and display autosuspend delays); 3 buffers; the previously shown
// buffer is released when a new one is latched; a SF wake-up that latches
// nothing costs no CPU work.
//
// Input (`input_threads`; needs vsync_threads): each animation window is a
// touch, from its start to its end (a finger dragging the shade, or a
// scroll). The touch controller reports every 1 / touch_report_hz from the
// touch-down; each report is an interrupt on touch_irq_cpu (handled once
// that CPU is out of any idle state) that wakes the controller's threaded
// handler (request_threaded_irq(): SCHED_FIFO 50, kernel/irq/manage.c
// setup_irq_thread(); it follows the interrupt's CPU). The handler runs
// touch_irq_cost and its input_sync() wakes InputReader (EventHub::
// getEvents(): every report waiting is read in one round,
// input_reader_cost), which notifies InputDispatcher (notifyMotion():
// mLooper->wake()), which publishes the motions to the app's InputChannel
// (input_dispatcher_cost): the socket wakes the UI thread's Looper (only
// there, like a vsync). Both inputflinger threads run at nice -8
// (InputThread.cpp: PRIORITY_URGENT_DISPLAY). The UI thread reads them
// (NativeInputEventReceiver::consumeEvents(), ui_input_cost): motions are
// batched for the next doFrame()'s CALLBACK_INPUT, whose frame it asks for
// unless one is scheduled (Choreographer's mFrameScheduled: asked for and
// not yet run); doFrame() consumes the batch and finishInputEvent()'s
// signals wake InputDispatcher (handleReceiveCallback(),
// input_finish_cost). The window's first report is the touch-down, which
// is not batched: the UI thread delivers it to its views at once
// (ViewRootImpl's input stages, ui_down_cost) and finishes it then.
// Simplified: a finger's lift (UP) is no event of its own (the window's
// end; an injected swipe's is);
// resampling decides which samples a frame takes, not their coordinates;
// the touch driver's bus read is
// CPU work, not a sleep; InputReader's and InputDispatcher's other work
// (other devices, input monitors, ANR timeouts) is not modelled.
// Choreographer's CALLBACK_INPUT consumes only the batched motions no
// later than its frame time - input_resample_latency (InputConsumer::
// consumeBatch() with touch resampling on, Android's default:
// RESAMPLE_LATENCY 5 ms); newer ones stay batched, unfinished, and ask
// for the next frame. A motion's time is its report's interrupt
// (input_set_timestamp()) or, injected, SystemClock.uptimeMillis() when
// the test built it. The resampled coordinates themselves do not matter
// here.
// The first report of a window is what opens it: the UI thread asks for
// vsync when it has handled it (550 us after the touch-down with the
// default costs on free CPUs), and the last report of a window, after the
// last frame the animation asked for, asks for one more frame.
//
// Injected input (`input_source: injected`): the automated UI tests of the
// studies swipe with UiAutomator, whose InteractionController.swipe()
// injects a touch-down, then a move per step, each followed by
// SystemClock.sleep(MOTION_EVENT_INJECTION_DELAY_MILLIS = 5 ms)
// (inject_step_delay). Each event goes through
// UiAutomation.injectInputEvent(event, sync = true), which
// UiAutomationConnection turns into INJECT_INPUT_EVENT_MODE_WAIT_FOR_FINISH:
// the test's thread (injector_thread) runs inject_cost and calls
// system_server by binder (inject_binder); the pool thread runs
// InputManagerService.injectInputEvent() -> InputDispatcher::
// injectInputEvent() (inject_server_cost), which queues the event, wakes
// InputDispatcher's Looper and waits on mInjectionSyncFinished until the
// app has finished the event; then the reply wakes the test's thread.
// InputDispatcher and the UI thread handle it as a touch report's motion
// (a move is finished at the next doFrame(), the touch-down at once), so
// a swipe injects a move every frame or two (see resampling below). The
// swipe runs from each window's start for inject_duration (a fling: a
// short swipe, then its animation), by default the whole window, and ends
// with touchUp(): the lift, injected the same way after the last step's
// sleep, which the UI thread handles at once (ui_up_cost) with whatever
// is batched (InputConsumer consumes the batch before a motion that
// cannot join it). No touch interrupt, no
// InputReader: kernel input handlers (touch_rpm) never see injected
// events, so touch_rpm is refused with it.
// UiAutomationConnection.injectInputEvent() also syncs the input windows
// before each touch-down and after each lift (`inject_sync_input`, on by
// default: UiAutomation.injectInputEvent(event, sync) passes
// waitForAnimations = true): WindowManagerService.syncInputTransactions()
// on a thread of inject_binder's pool (inject_sync_cost: surface
// placement, updateInputWindowsImmediately(), the transaction's apply())
// schedules SurfaceFlinger's next commit (scheduleCommit(): SF's next vsync
// callback, requested from that thread's CPU; simplified: SF's binder
// thread, which runs setTransactionState(), is not modelled) and waits
// until SF has reported the input windows (Android 14+: a
// WindowInfosReportedListener and a CountDownLatch; 12 and 13:
// syncInputWindows(), SF's binder thread waiting in setTransactionState()).
// SF's main thread commits it at that wake-up (sf_input_sync_cost),
// before latching any buffer; the listener makes the frame composite even
// with no new buffer (addInputWindowCommands(): eTraversalNeeded), so SF
// runs sf_cost and the display commit (display_rpm, commit_cost: the
// HWC's presentDisplay()) and presents at the next vsync; the windows are
// reported at the end of that frame (updateInputFlinger() after
// composite()), which wakes the waiting thread (simplified: directly; the
// report goes through SF's BackgroundExecutor thread and a one-way binder
// call). A backpressure-skipped SF wake-up leaves the commit for the
// next. So a swipe's touch-down waits for SF's next callback and frame,
// and its first frame may slip by one. No window container animation runs in the model, so
// waitForAnimationsToComplete() returns at once. Without inject_binder the
// test's thread applies and waits itself. Simplified: the hop through the
// shell process that holds UiAutomationConnection (`am instrument`) is not
// modelled (the test's thread calls system_server directly).
//
// A drag draws only what input moves: from the touch-down the UI thread
// handles to the lift (injected) or the window's end (a finger), no
// animation posts frame callbacks. A doFrame() draws (UI work, RenderThread,
// a buffer) when its CALLBACK_INPUT consumed motions (their handlers
// invalidate() and the traversal follows in the same doFrame()) or when
// the touch-down, the lift or a redraw message asked for it; else it runs
// CALLBACK_INPUT alone (ui_input_cost) and produces no frame. So an
// injected swipe at 120 Hz, which moves every other frame, draws every
// other frame; after an injected fling's lift the animation draws every
// vsync to the window's end. An app that animates every vsync while held
// (`drag_draws: every_frame`; SystemUI's notification shade, whose blur
// springs and follows the expansion, NotificationShadeDepthController)
// draws every vsync of the window as before.
//
// Not modelled: RenderThread's own vsync, GPU composition in SF,
// HWC/present fences as separate threads, refresh-rate switching, the
// VsyncModulator's early offsets.
//
// No allocation per frame: frames live in a fixed pool sized at construction.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "models/devices/adpf.h"
#include "models/devices/device_params.h"
#include "models/devices/gpu.h"
#include "models/kernel/binder/binder.h"
#include "models/workload/task_spec.h"
#include "sim/event_queue.h"
#include "sim/fifo.h"
#include "sim/rng.h"

namespace schedlab {

class Kernel;
class KthreadWorker;
class PmRuntime;
class Workqueue;
class WorkqueueSystem;
class RpmCall;
class RpmDevice;
struct Task;

// The kernel objects and processes a display's params name, resolved by
// the System; each nullptr when its name is empty.
struct DisplayLinks {
  WorkqueueSystem* wqs = nullptr;
  Workqueue* submit_wq = nullptr;               // gpu_submit_wq
  Workqueue* commit_wq = nullptr;               // commit_wq
  KthreadWorker* commit_worker = nullptr;       // commit_worker
  KthreadWorker* frame_event_worker = nullptr;  // frame_event_worker
  Workqueue* encoder_wq = nullptr;              // encoder_wq
  Workqueue* vblank_wq = nullptr;               // vblank_wq
  BinderProc* request_binder = nullptr;         // vsync_request_binder
  BinderProc* inject_binder = nullptr;          // inject_binder
  BinderProc* hw_vsync_binder = nullptr;        // hw_vsync_binder
};

class DisplayPipeline final : public GpuClient, public EventHandler, public BinderWorkHook {
 public:
  // gpu: the device params.gpu names (nullptr when it is empty); pm: the
  // runtime PM model (nullptr: none; then no *_rpm may be named).
  DisplayPipeline(Kernel& k, std::string name, const DisplayParams& params, Gpu* gpu, PmRuntime* pm,
                  uint64_t seed, const DisplayLinks& links = {});
  ~DisplayPipeline() override;
  DisplayPipeline(const DisplayPipeline&) = delete;
  DisplayPipeline& operator=(const DisplayPipeline&) = delete;

  const std::string& name() const { return name_; }
  const DisplayParams& params() const { return params_; }

  // Vsync timing.
  Time period() const { return Time::ns(period_); }
  Time app_duration() const { return app_duration_; }
  Time sf_duration() const { return sf_duration_; }
  Time vsync_time(int64_t k) const { return Time::ns(k * period_); }
  Time app_wakeup(int64_t k) const { return vsync_time(k) - app_duration_ - sf_duration_; }
  Time sf_wakeup(int64_t k) const { return vsync_time(k) - sf_duration_; }
  // Is an animation window open at t?
  bool animating(Time t) const;
  // input_threads: a finger holds the views at frame time t (frames follow input).
  bool drag_held(Time t) const;

  Task& ui_task() { return *ui_task_; }
  Task& render_task() { return *rt_task_; }
  Task& sf_task() { return *sf_task_; }
  Task* timer_dispatch_task() { return td_task_; }  // nullptr without vsync_threads
  Task* app_event_task() { return et_task_; }
  // input_threads: the touch IRQ thread, InputReader, InputDispatcher (nullptr without).
  Task* touch_irq_task() { return irq_task_; }
  Task* input_reader_task() { return reader_task_; }
  Task* input_dispatcher_task() { return dispatcher_task_; }
  Task* injector_task() { return injector_task_; }  // input_source: injected (nullptr otherwise)
  // vsync_threads: the CPU whose hrtimer base VSyncDispatch's timer was
  // last queued on.
  int vsync_timer_queued_cpu() const { return dispatch_cpu_; }

  // Counters (every frame counted once, when presented or dropped).
  uint64_t app_vsyncs() const { return app_vsyncs_; }      // Choreographer callbacks fired
  uint64_t frames_started() const { return frames_started_; }
  uint64_t frames_presented() const { return presented_; }
  uint64_t frames_dropped() const { return dropped_; }
  uint64_t app_missed() const { return app_missed_; }
  uint64_t sf_missed() const { return sf_missed_; }
  uint64_t sf_wakeups() const { return sf_wakeups_; }      // SF callbacks fired
  uint64_t sf_skipped() const { return sf_skipped_; }      // SF frames skipped for backpressure
  uint64_t touch_reports() const { return touch_reports_; }  // input_threads: touch interrupts handled
  uint64_t input_events_received() const { return input_received_total_; }  // by the UI thread
  uint64_t events_injected() const { return injected_total_; }  // input_source: injected
  uint64_t input_syncs() const { return input_syncs_; }  // inject_sync_input: syncInputTransactions() calls
  // input_threads: doFrame()s of a drag that consumed no input and drew nothing.
  uint64_t input_only_frames() const { return input_only_frames_; }
  // hw_vsync_resync: resyncs that turned hardware vsync on, vblank events
  // the composer's thread handled, samples SF took.
  uint64_t hw_vsync_resyncs() const { return hw_vsync_resyncs_; }
  uint64_t hwc_vsync_events() const { return hwc_events_; }
  uint64_t hw_vsync_samples() const { return hw_vsync_samples_total_; }
  // encoder_vblank_irq: the encoder's vblank interrupts taken.
  uint64_t display_irqs() const { return display_irqs_; }
  Task* hwc_event_task() { return hwc_task_; }

  void gpu_job_done(uint64_t cookie, QueueContext irq) override;
  void gpu_job_retired(uint64_t cookie, QueueContext ctx) override;
  void on_event(uint64_t tag) override;
  // SurfaceFlinger's binder thread ran EventThreadConnection::requestNextVsync().
  void binder_work_done(Task& server) override;

 private:
  class Body;
  class UiBody;
  class RenderBody;
  class SfBody;
  class VsyncBody;
  class InputBody;
  class InjectorBody;
  class InjectHook;
  class SubmitFn;
  class FreeJobFn;
  class CommitFn;
  // An app vsync on its way to the UI thread.
  struct AppVsync {
    bool set = false;
    int64_t k = 0;
    bool first = false;   // the first of an animation window
    int64_t window = -1;  // window_of() its expiry (vsync_threads: `first` is decided at dispatch)
  };
  // EventThreadConnection::vsyncRequest of the app's connection.
  enum class VsyncRequest : uint8_t { kNone, kSingle, kSingleSuppressCallback };
  struct Frame {
    enum class Stage : uint8_t { kFree, kUi, kSync, kRender, kQueued, kLatched };
    Stage stage = Stage::kFree;
    uint32_t gen = 0;           // reuse count (GPU cookies carry it)
    int64_t k = 0;              // vsync index of the expected present (FrameEvent::vsync_id)
    Time vsync;                 // app wake-up (Choreographer frame time)
    Time expected_present, app_deadline;
    Time queued, gpu_done;
    Time gpu_time;              // drawn at submit
    bool gpu_pending = false;
    Time sf_end, sf_deadline, present;
    Time last_latch;            // the layer's previous latch (0: none), FrameTimeline's mLastLatchTime
    Time ui_start;              // doFrame() began (HWUI's frameStartTime)
  };


  int64_t next_app_target(Time t, int64_t min_k) const;
  int64_t window_of(Time t) const;  // animation window index at t, -1 outside
  void arm_app(int64_t min_k);
  void arm_app_at(int64_t k);  // the simple model: the app's timer for callback k, on the UI thread's CPU
  // From a thread running on caller_cpu; schedule_commit: a
  // SurfaceFlinger::scheduleCommit() (DISPLAY_UPDATE_IMMINENT's throttle
  // counts it), false for SF's own re-arm for buffers already queued.
  void request_sf(int caller_cpu, bool schedule_commit = true);
  int alloc_frame();
  void free_frame(int i);
  int free_buffers() const { return params_.buffers - buffers_in_use_; }
  void emit(const Frame& f, bool dropped);
  void classify_jank(const Frame& f, Time app_end, FrameEvent& e) const;  // FrameTimeline's, for a presented frame
  void wake(Task& p, const Task* waker);
  uint64_t gpu_cookie(int frame) const;  // frame index and reuse count
  void queue_run_job(QueueContext ctx);  // gpu_submit_wq's run_job work
  // Wakes p by `waker` (nullptr: the timer interrupt) on `cpu`.
  void wake_from(Task& p, const Task* waker, int cpu);
  // The vsync reaches the UI thread / SF's main thread.
  void app_deliver(const AppVsync& v, const Task* waker, int cpu);
  void sf_deliver(const Task* waker, int cpu);
  // What TimerDispatch's and the app EventThread's runs end with.
  void timer_dispatch_done(Task& self, bool sf, const AppVsync& app);
  bool event_thread_begin(AppVsync& v);
  void event_thread_done(Task& self, const AppVsync& v, bool schedule);
  // vsync_threads: VSyncDispatchTimerQueue's callbacks on its one timer.
  struct DispatchCallback {
    bool armed = false;
    bool after_round = false;  // scheduled after the expiry TimerDispatch has yet to run
    Time wakeup;
  };
  void schedule_callback(DispatchCallback& cb, Time wakeup, int caller_cpu);
  void rearm_dispatch(int cpu);
  void take_expired_callbacks(int td_cpu, bool* sf, AppVsync* app);
  void ui_asks_for_vsync();
  void wake_render_thread(const Task& ui);
  // EventThread::requestNextVsync() for the app (vsync_threads): from
  // `waker` (nullptr: outside the model) on `cpu`.
  void request_app_vsync(const Task* waker, int cpu);
  // The UI thread asks (doFrame()): through SurfaceFlinger's binder pool
  // (vsync_request_binder), else straight to the EventThread.
  void ui_requests_vsync(Task& ui);
  void arm_window_request();  // the next animation window's opening request
  // input_threads: the next touch report at or after t (inside a window).
  void arm_touch_report(Time t);
  // What each input thread's round takes, costs and hands on.
  enum class InputRole : uint8_t { kIrqThread, kReader, kDispatcher };
  struct InputRound {
    int events = 0;       // reports / motions taken
    bool down = false;    // the window's touch-down is among them
    bool up = false;      // InputDispatcher: an injected lift is among them
    Time down_time;       // the touch-down's event time (with down)
    bool finish = false;  // InputDispatcher: the app's finished signals
    bool inject_taken = false;     // InputDispatcher: the injected event is among the motions
    bool inject_finished = false;  // InputDispatcher: the finished signals end the injection's wait
    Time time;                     // IRQ thread: the motion's time (its report's interrupt)
  };
  InputRound input_take(InputRole role);
  Time input_cost(InputRole role, const InputRound& round) const;
  void input_round_done(InputRole role, Task& self, const InputRound& round);
  RpmDevice* resolve_rpm(const std::string& what, const std::string& name);
  // input_source: injected. The start of the first window at or after t
  // (Time::max() when the schedule has ended).
  Time next_window_start(Time t) const;
  // InputDispatcher::injectInputEvent() run by `self`: the event queued.
  enum class InjectKind : uint8_t { kDown, kMove, kUp };
  void inject_enqueue(Task& self, InjectKind kind);

  Kernel& k_;
  std::string name_;
  DisplayParams params_;
  Gpu* gpu_;
  PmRuntime* pm_;
  WorkqueueSystem* wqs_;
  Workqueue* submit_wq_;        // gpu_submit_wq (nullptr: RenderThread submits)
  BinderProc* request_binder_;  // vsync_request_binder (nullptr: none)
  BinderProc* inject_binder_;   // inject_binder (nullptr: none)
  CallSpec request_call_;       // its one-way call
  std::unique_ptr<SubmitFn> submit_fn_;
  WorkStruct submit_work_{"drm_sched_run_job_work"};
  std::unique_ptr<FreeJobFn> free_fn_;
  WorkStruct free_work_{"drm_sched_free_job_work"};
  int jobs_to_free_ = 0;             // signalled jobs free_job has not freed yet
  // commit_wq: the nonblocking commits in flight, each with its own
  // commit_work (struct drm_atomic_state's), in a fixed ring of slots by
  // sequence number (SF's next commit takes slot commit_seq_ % size).
  struct Commit {
    bool in_use = false;
    uint64_t seq = 0;
    int frame = -1;              // the latched frame it presents; -1: none (an input-sync composite)
    bool latched = false;        // its flush's vsync interrupt ended the worker's wait_flush()
    bool flipped = false;        // flip_done: complete_commit() sent the event (and the present fence)
    uint64_t fence = 0;          // its present fence (hw_vsync_resync)
    Task* waiter = nullptr;      // its worker, in D (its flush, or the previous commit)
    WorkStruct work{"commit_work"};
    std::unique_ptr<CommitFn> fn;
  };
  Workqueue* commit_wq_ = nullptr;
  KthreadWorker* commit_worker_ = nullptr;
  bool nonblocking_commit() const { return commit_wq_ || commit_worker_; }
  std::vector<Commit> commits_;
  uint64_t commit_seq_ = 0;          // the next commit's sequence number
  uint64_t flipping_seq_ = 0;        // the kicked-off commit flip_timer_ is armed for
  bool sf_waits_commit_ = false;     // SF (the composer) sleeps until commit_blocks_sf() turns false
  int sf_earliest_cpu_ = 0;          // the CPU whose hrtimer base holds sf_earliest_timer_
  Commit* commit_in_flight(uint64_t seq);
  // SF's next commit must wait for the latest one: commit_wq, until it
  // flips (a nonblocking ioctl would get -EBUSY); commit_worker, until it
  // is done (SDE's ioctl waits for it).
  bool commit_blocks_sf();
  void queue_commit(Task& sf, int frame, uint64_t fence);  // the ioctl's end: commit_work queued
  void commit_kicked_off(Commit& c);                     // the flush is written: its vsync is known
  void commit_flipped(Commit& c, Task& worker);          // complete_commit(): flip_done, the present fence
  void commit_hw_done(Commit& c, Task& worker);          // hw_done: the commit leaves the ring; the worker returns
  void wake_sf_if_unblocked(Task& worker);               // the commit's worker wakes SF when it may go on
  // SDE's encoder resource control (idle_pc_delay): at a kickoff, the
  // encoder's display_rpm reference (rc_state ON) and the off work re-armed.
  class IdleOffFn;
  void encoder_kickoff(QueueContext ctx);
  bool encoder_on_ = false;          // rc_state ON: the encoder holds display_rpm
  WorkStruct idle_off_work_{"sde_encoder_off_work"};
  std::unique_ptr<IdleOffFn> idle_off_fn_;
  // Frame events (frame_event_worker) and mainline DPU's encoder idle work
  // (encoder_wq): see DisplayParams.
  class FrameEventFn;
  class EncoderOffFn;
  void frame_done(int irq_cpu);  // dpu_encoder_frame_done_callback(), in the display interrupt
  KthreadWorker* frame_event_worker_ = nullptr;
  Workqueue* encoder_wq_ = nullptr;
  std::unique_ptr<FrameEventFn> frame_event_fn_;
  std::vector<WorkStruct> frame_events_;  // the CRTC's DPU_CRTC_FRAME_EVENT_SIZE events, taken in turn
  size_t next_frame_event_ = 0;
  int frame_pending_ = 0;            // dpu_crtc->frame_pending: kicked off, not yet retired by a frame event
  bool frame_busy_ = false;          // frame_busy_mask: kicked off, its flush not yet latched
  // DPU rc_state ON (interrupts on); false: IDLE, as it starts (the screen
  // static for longer than the timeout, nothing armed).
  bool dpu_rc_on_ = false;
  std::unique_ptr<EncoderOffFn> encoder_off_fn_;
  WorkStruct encoder_off_work_{"dpu_encoder_off_work"};
  // drm/msm's vblank interrupt control (vblank_wq): see DisplayParams.
  class VblankCtrlFn;
  void vblank_get(QueueContext ctx);  // drm_crtc_vblank_get() in commit_tail()
  void vblank_put();                  // drm_crtc_vblank_put() after wait_flush()
  void queue_vblank_ctrl(bool enable, QueueContext ctx);
  Workqueue* vblank_wq_ = nullptr;
  std::unique_ptr<VblankCtrlFn> vblank_ctrl_fn_;
  // kzalloc()'d per switch in the kernel: a pool here, grown (stable
  // addresses) only if every item is queued or running.
  std::deque<WorkStruct> vblank_works_;
  int vblank_refcount_ = 0;          // drm_vblank_crtc.refcount
  bool vblank_enabled_ = false;      // drm_vblank_crtc.enabled (off as the run starts: no reference)
  Timer vblank_timer_;               // the first vblank interrupt after the last put
  // encoder_vblank_irq: the encoder's vblank interrupt at every vsync while
  // registered (rc_state ON or vblank on).
  bool vsync_irq_registered() const { return dpu_rc_on_ || vblank_enabled_; }
  void arm_vsync_irq();
  Timer vsync_irq_timer_;
  uint64_t display_irqs_ = 0;
  // hw_vsync_resync: SurfaceFlinger's side (VsyncSchedule's mHwVsyncState,
  // VSyncReactor's samples, Scheduler's mLastResyncTime), the message to
  // its main thread, and the composer's (its vsync flag, the DRM vblank
  // event it waits for, the event delivered and not yet handled).
  class HwcEventBody;
  class HwVsyncHook;
  void scheduler_resync(const Task* waker, int cpu);  // Scheduler::resync()
  void post_hw_vsync_request(const Task* waker, int cpu);
  void sf_set_hwc_vsync(Task& sf);                     // SF main: HWComposer::setVsyncEnabled()
  void hwc_wait_vblank(QueueContext ctx);              // drmWaitVBlank(RELATIVE | EVENT, 1)
  void hwc_event_done(Task& self);                     // the callback to SF
  void sf_resync_sample(Task& t, int64_t k);           // onComposerHalVsync() -> addResyncSample(), vblank k
  void hw_vsync_enable(const Task* waker, int cpu);    // VsyncSchedule::enableHardwareVsync()
  void hw_vsync_disable(const Task* waker, int cpu);   // VsyncSchedule::disableHardwareVsync()
  // SF's vsync model with exact timestamps (vsync indices): VSyncPredictor's
  // timestamps (kHistorySize 20) and VSyncReactor's state.
  struct PredictorSamples {
    std::array<int64_t, 20> k{};
    int size = 0, next = 0;
    bool contains(int64_t v) const;
    void push(int64_t v);
    void clear() { size = next = 0; }
  };
  bool predictor_add(int64_t k);        // VSyncPredictor::addVsyncTimestamp()
  bool reactor_add_hw_sample(int64_t k);  // VSyncReactor::addHwVsyncTimestamp(): more samples needed
  // The present fences of SF's composites (hw_vsync_resync), by composite
  // number: the vsync each was stamped with, -1 while pending.
  uint64_t new_present_fence(int64_t k);
  void sf_add_present_fence(Task& sf, uint64_t fence);  // Scheduler::addPresentFence()
  bool hw_vsync_on_ = false;         // VsyncSchedule: Enabled
  Time last_resync_;                 // mLastResyncTime (0 as SF starts)
  PredictorSamples predictor_;
  // A slope fitted (currentPeriod() not the nominal period); as the run
  // starts, hw_vsync_predictor_trained.
  bool predictor_trained_ = true;
  bool reactor_mode_transition_ = false;  // mModePtrTransitioningTo set by a resync
  bool reactor_more_samples_ = false;   // mMoreSamplesNeeded
  bool reactor_ignore_fences_ = false;  // mInternalIgnoreFences
  static constexpr size_t kFenceSlots = 32;
  std::array<int64_t, kFenceSlots> fence_vsync_{};
  uint64_t composites_ = 0;
  Fifo<uint64_t> unfired_fences_;    // mUnfiredFences (kMaxPendingFences 20)
  Fifo<int64_t> hw_vsync_in_flight_; // hw_vsync_binder: onVsync() timestamps on their way to SF's pool, in order
  bool sf_hwc_message_ = false;      // a hardware-vsync request posted to SF's main thread
  bool hwc_vsync_enabled_ = false;   // the composer's vsync flag (setVsyncEnabled())
  bool hwc_waiting_ = false;         // its vblank event queued in the kernel
  bool hwc_event_ = false;           // delivered, its thread yet to handle it
  int64_t hwc_event_k_ = 0;          // its vblank
  std::unique_ptr<HwcEventBody> hwc_body_;
  std::unique_ptr<HwVsyncHook> hw_vsync_hook_;
  Task* hwc_task_ = nullptr;
  BinderProc* hw_vsync_binder_ = nullptr;
  CallSpec hw_vsync_call_;
  Timer hwc_vblank_timer_;           // the vblank interrupt that delivers the composer's event
  uint64_t hw_vsync_resyncs_ = 0, hwc_events_ = 0, hw_vsync_samples_total_ = 0;
  Fifo<int> submit_queue_;           // frames pushed, not yet run_job'd
  RngStream rng_;
  RngStream idle_rng_;          // idle_frame_interval draws (own stream: costs keep theirs)
  int64_t period_ = 0;          // ns
  Time app_duration_, sf_duration_;
  RpmDevice* gpu_rpm_ = nullptr;
  RpmDevice* ui_rpm_ = nullptr;
  RpmDevice* display_rpm_ = nullptr;
  RpmDevice* touch_rpm_ = nullptr;
  bool touch_held_ = false;     // touch_rpm reference taken for the current window
  void arm_touch();             // the next animation window's start or end
  std::unique_ptr<UiBody> ui_body_;
  std::unique_ptr<RenderBody> rt_body_;
  std::unique_ptr<SfBody> sf_body_;
  Task* ui_task_ = nullptr;
  Task* rt_task_ = nullptr;
  Task* sf_task_ = nullptr;
  std::unique_ptr<VsyncBody> td_body_;
  std::unique_ptr<VsyncBody> et_body_;
  Task* td_task_ = nullptr;     // TimerDispatch (vsync_threads)
  Task* et_task_ = nullptr;     // the app EventThread (vsync_threads)
  // input_threads: the threads, what waits for each, and the UI thread's
  // side (events received in its Looper not yet finished; Choreographer's
  // mFrameScheduled: a vsync asked for and not yet taken by doFrame()).
  std::unique_ptr<InputBody> irq_body_, reader_body_, dispatcher_body_;
  Task* irq_task_ = nullptr;
  Task* reader_task_ = nullptr;
  Task* dispatcher_task_ = nullptr;
  int64_t report_period_ = 0;       // ns
  Time report_at_;                  // the armed report's nominal time
  bool irq_thread_pending_ = false; // IRQTF_RUNTHREAD
  int reader_reports_ = 0;          // reports in evdev's buffer, not yet read
  int dispatcher_motions_ = 0;      // motions notified, not yet published
  bool dispatcher_finish_ = false;  // finished signals from the app, not yet handled
  int ui_input_received_ = 0;       // published to the app's InputChannel, not yet read
  int ui_batch_ = 0;                // read by the UI thread, batched, not yet consumed (nor finished)
  // Every motion's event time from its creation (the IRQ thread's round,
  // an injection) until the UI thread consumes it, in order: the first
  // ui_batch_ are the UI thread's batch.
  Fifo<Time> motion_times_;
  Time last_report_time_;           // the latest touch report's interrupt
  Time inject_event_time_;          // the event being injected: its time
  // The touch-down on its way (not batched: the UI thread handles and
  // finishes it at once), at each stage.
  bool irq_down_ = false, reader_down_ = false, dispatcher_down_ = false, ui_down_ = false;
  Time reader_down_time_, dispatcher_down_time_, ui_down_time_;  // the touch-down's event time
  bool dispatcher_up_ = false, ui_up_ = false;  // an injected lift on its way (not batched either)
  bool ui_frame_scheduled_ = false;
  // The UI thread's views: changed since the last drawn frame (touch-down,
  // lift, redraw message), and held by a finger (drag_held()).
  bool ui_views_dirty_ = false, ui_finger_down_ = false;
  int64_t ui_finger_window_ = -1;  // the window of the touch-down handled last
  uint64_t input_only_frames_ = 0;
  uint64_t touch_reports_ = 0, input_received_total_ = 0, injected_total_ = 0;
  // input_source: injected: the test's thread, its binder call, and the
  // one injection in flight (sync: one at a time) from InputDispatcher's
  // inbound queue to the app's finished signal; `inject_waiter_` sleeps
  // until then (the binder thread in injectInputEvent(), else the test's
  // thread itself).
  enum class InjectState : uint8_t { kNone, kQueued, kTaken, kPublished };
  std::unique_ptr<InjectorBody> injector_body_;
  std::unique_ptr<InjectHook> inject_hook_;
  // inject_sync_input: the input-window sync in flight (one at a time: the
  // test's thread waits for it), from its apply() to SF's commit.
  // kApplied: waiting for SF's next wake-up; kCommitting: SF's frame for it is under way.
  enum class InputSync : uint8_t { kNone, kApplied, kCommitting };
  class InputSyncHook;
  std::unique_ptr<InputSyncHook> input_sync_hook_;
  CallSpec input_sync_call_;
  InputSync input_sync_ = InputSync::kNone;
  Task* input_sync_waiter_ = nullptr;
  uint64_t input_syncs_ = 0;
  void input_sync_apply(Task& waiter);
  Task* injector_task_ = nullptr;
  CallSpec inject_call_;
  InjectState inject_state_ = InjectState::kNone;
  InjectKind inject_next_kind_ = InjectKind::kMove;  // the event the test's thread is injecting
  Task* inject_waiter_ = nullptr;
  // vsync_threads: SF's and the app's callbacks, the dispatch timer's
  // intended wake-up and CPU, and whether it expired with TimerDispatch
  // yet to run; the event the app EventThread has yet to take.
  DispatchCallback sf_cb_, app_cb_;
  Time dispatch_intended_;
  int dispatch_cpu_ = 0;
  int app_timer_cpu_ = 0, sf_timer_cpu_ = 0;  // the CPUs whose hrtimer bases hold app_timer_ / sf_timer_
  bool dispatch_expired_ = false;
  bool ui_wants_vsync_ = false;  // a touch or redraw message for the UI thread
  AppVsync et_app_;
  bool et_requested_ = false;    // requestNextVsync() notified the EventThread
  int64_t next_window_ = 0;      // the window whose opening request is armed
  VsyncRequest app_request_ = VsyncRequest::kNone;
  bool sf_dispatching_ = false;  // SF's callback expired, its message not yet posted
  int64_t sf_dispatch_k_ = 0;
  Timer app_timer_, sf_timer_, present_timer_, idle_frame_timer_, touch_timer_, window_request_timer_,
      dispatch_timer_, touch_report_timer_, inject_timer_, flip_timer_, sf_earliest_timer_;

  std::vector<Frame> frames_;
  std::vector<int> free_frames_;
  Fifo<int> queue_;                  // queued buffers, in queue order
  Fifo<int> presenting_;             // latched frames waiting for their present vsync

  // Choreographer: the armed callback and the one delivered, not yet taken.
  int64_t app_target_ = -1;
  int64_t last_window_ = -1;
  bool ui_pending_ = false;
  int64_t ui_pending_k_ = 0;
  bool ui_pending_first_ = false;
  int rt_inbox_ = -1;           // frame handed to RenderThread, not yet synced
  // SurfaceFlinger.
  int64_t sf_target_ = -1;      // the armed callback's target vsync
  int64_t sf_last_target_ = -1;
  bool sf_pending_ = false;
  int64_t sf_pending_k_ = 0;
  Time last_present_ = Time::ns(-1);
  Time last_latch_;             // when SF last latched a buffer of the layer (0: never)
  int buffers_in_use_ = 0;      // dequeued + queued + on screen
  bool on_screen_ = false;      // a buffer is held for the screen

  uint64_t app_vsyncs_ = 0, frames_started_ = 0, presented_ = 0, dropped_ = 0, app_missed_ = 0, sf_missed_ = 0,
           sf_wakeups_ = 0, sf_skipped_ = 0;

  // An ADPF session (models/devices/adpf.h) and the power HAL's stale
  // timer for it, re-armed whenever the session moves its deadline.
  struct AdpfHook {
    std::unique_ptr<AdpfSession> session;
    Timer stale_timer;
    void rearm() { stale_timer.arm(session->stale_deadline()); }
  };
  // `adpf`: HWUI's hint session on the UI thread and RenderThread, created
  // at the first frame.
  AdpfHook hwui_adpf_;
  Time rt_dequeue_start_;        // RenderThread began dequeueBuffer()
  Time rt_dequeue_wait_;         // ... and waited this long in it, this frame
  void adpf_report(const Frame& f);  // DrawFrameTask::run()'s end: the frame's actual work duration
  // `sf_adpf`: SurfaceFlinger's own session on its main thread, started
  // with the pipeline.
  AdpfHook sf_adpf_;
  Time sf_woken_at_;  // when the commit SF waited for in present unblocked it (wake_sf_if_unblocked())
  // composite()'s end: PowerAdvisor's estimate of the frame (woke at
  // `wake`, slept `idle` in present, for the vsync at `expected_present`).
  void sf_adpf_report(Time wake, Time idle, Time expected_present);
  // SurfaceFlinger::scheduleCommit() -> notifyDisplayUpdateImminent().
  void notify_display_update_imminent();
  UpdateImminentThrottle update_imminent_{Time::zero()};  // set from params_ in the constructor

 public:
  // The HWUI session's controller (nullptr without `adpf`, or before the first frame).
  const AdpfSession* hwui_adpf() const { return hwui_adpf_.session.get(); }
  // SurfaceFlinger's (nullptr without `sf_adpf`).
  const AdpfSession* sf_adpf() const { return sf_adpf_.session.get(); }
};

}  // namespace schedlab
