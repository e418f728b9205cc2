// The display pipeline (display.h): vsync, Choreographer, RenderThread,
// SurfaceFlinger and FrameTimeline, as described there.
#include "models/devices/display.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <utility>

#include "models/errors.h"
#include "models/kernel/kernel.h"
#include "models/kernel/kthread_worker.h"
#include "models/kernel/pm_runtime/pm_runtime.h"
#include "models/kernel/workqueue/workqueue.h"
#include "sim/log.h"

namespace schedlab {

namespace {

// Event tags.
enum : uint64_t {
  kTagApp = 0, kTagSf = 1, kTagPresent = 2, kTagIdleFrame = 3, kTagTouch = 4, kTagWindowRequest = 5, kTagDispatch = 6,
  kTagTouchReport = 7, kTagInject = 8, kTagFlip = 9, kTagSfEarliest = 10, kTagVblank = 11,
  kTagHwcVblank = 12, kTagVsyncIrq = 13, kTagAdpfStale = 14, kTagSfAdpfStale = 15
};

// commit_wq / commit_worker: nonblocking commits in flight at once: the
// newest (not yet flipped: a later nonblocking ioctl would get -EBUSY, so
// SF waits; with commit_worker SF's ioctl waits until it is done) and the
// previous one's worker finishing after its flip.
constexpr size_t kCommitSlots = 2;

// VsyncSchedule::createDispatch() (Android 14): callbacks due within this
// of the timer's intended wake-up run in the same expiry
// (kGroupDispatchWithin), and a callback scheduled less than this before
// it does not re-arm the timer.
constexpr Time kGroupDispatchWithin = Time::us(500);

int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }
int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// A pm_runtime_*() call in progress in `self` (nullptr / inactive: none):
// true while it has not returned, with the action the body returns in *out.
bool rpm_call_busy(RpmCall* rpm, Task& self, Action* out) {
  if (!rpm || !rpm->active()) return false;
  Action a = rpm->step(self);
  if (a.kind == Action::Kind::kExit) return false;
  *out = a;
  return true;
}

}  // namespace

// ---------------------------------------------------------------- threads

// What the pipeline's three threads share: the pipeline, and the
// pm_runtime_get_sync() they may make (stepped until it returns).
class DisplayPipeline::Body : public TaskBody {
 public:
  explicit Body(DisplayPipeline& d) : d_(d) {}
  std::unique_ptr<RpmCall> rpm;  // set when the thread's *_rpm device is

 protected:
  // pm_runtime_get_sync(dev) begins (nothing without a device).
  void rpm_get(RpmDevice* dev) {
    if (dev) rpm->begin(*dev, RpmApi::kGetSync);
  }
  // True while the call is in progress: the body returns *out.
  bool rpm_busy(Task& self, Action* out) { return rpm_call_busy(rpm.get(), self, out); }
  DisplayPipeline& d_;
};

// ---------------------------------------------------------------- UI thread

// Choreographer.doFrame() on the app's main thread, then HWUI's
// DrawFrameTask::postAndWait() (syncAndDrawFrame): the frame goes to
// RenderThread and the UI thread sleeps until RenderThread has synced it.
class DisplayPipeline::UiBody final : public Body {
 public:
  explicit UiBody(DisplayPipeline& d) : Body(d) {}
  // Back in its Looper (not in doFrame(), postAndWait() or a get_sync).
  bool in_looper() const { return phase_ == Phase::kIdle; }
  Action next(Task& self) override {
    Action a;
    for (;;) {
      switch (phase_) {
        case Phase::kIdle: {
          if (d_.ui_wants_vsync_) {
            // vsync_threads: a touch or a Handler message (an idle redraw)
            // asks for the next frame (postFrameCallback()), which draws.
            d_.ui_wants_vsync_ = false;
            d_.ui_views_dirty_ = true;
            if (!d_.ui_frame_scheduled_) d_.ui_requests_vsync(self);  // Choreographer: one request per frame
          }
          if (d_.ui_input_received_ > 0) {
            // input_threads: NativeInputEventReceiver::handleEvent() reads
            // the motions (consumeEvents(): batched, for the next
            // doFrame()'s CALLBACK_INPUT) and posts that frame unless one
            // is scheduled (Choreographer's mFrameScheduled). A touch-down
            // is not batched: it goes through ViewRootImpl's input stages
            // to the views at once (ui_down_cost) and is finished then.
            // The touch-down also flushes what is batched before it
            // (InputConsumer::consume(): a motion that cannot join the
            // batch consumes the batch first).
            // A lift (injected) is not batched either: it consumes the
            // batch and itself at once.
            const bool down = std::exchange(d_.ui_down_, false);
            const bool up = std::exchange(d_.ui_up_, false);
            if (down) {
              // Everything up to the touch-down goes (times only grow; what
              // was read with it may hold older moves and newer ones).
              const int pending = d_.ui_batch_ + d_.ui_input_received_;
              int through = 0;
              while (through < pending && d_.motion_times_[static_cast<size_t>(through)] <= d_.ui_down_time_)
                ++through;
              d_.motion_times_.drop_front(static_cast<size_t>(through));
              d_.ui_batch_ = pending - through;
            } else {
              d_.ui_batch_ += d_.ui_input_received_;
            }
            if (up) {
              d_.motion_times_.drop_front(static_cast<size_t>(d_.ui_batch_));
              d_.ui_batch_ = 0;
            }
            d_.ui_input_received_ = 0;
            // The touch-down and the lift change the views at once
            // (invalidate(): the next frame draws); between them the finger
            // holds the views (drag_held()).
            if (down || up) {
              d_.ui_views_dirty_ = true;
              d_.ui_finger_down_ = !up;
              d_.ui_finger_window_ = d_.window_of(d_.k_.now());
            }
            down_handling_ = down || up;
            phase_ = Phase::kInput;
            const Time cost = down ? d_.params_.ui_down_cost : up ? d_.params_.ui_up_cost : d_.params_.ui_input_cost;
            if (cost > Time::zero()) return Action::run(cost.count());
            continue;
          }
          if (!d_.ui_pending_) return Action::block(TaskState::kInterruptible);
          d_.ui_pending_ = false;
          d_.ui_frame_scheduled_ = false;  // doFrame() clears mFrameScheduled
          int64_t k = d_.ui_pending_k_;
          const Time now = d_.k_.now();
          // doFrame(): a frame that starts a period or more after its vsync
          // skips to the latest vsync ("Skipped N frames").
          if (now - d_.app_wakeup(k) >= d_.period())
            k = floor_div((now + d_.app_duration_ + d_.sf_duration_).count(), d_.period_);
          int consumed = 0;
          if (d_.ui_batch_ > 0) {
            // CALLBACK_INPUT: InputConsumer::consumeBatch(frameTime) takes
            // the samples no later than frameTime - RESAMPLE_LATENCY, and
            // finishInputEvent() answers them: the InputChannel write
            // wakes InputDispatcher's Looper (handleReceiveCallback()).
            // Newer samples stay batched; a frame that consumed any, or
            // left any, asks for the next one (ConsumeBatchedInputRunnable,
            // onBatchedInputEventPending()).
            const Time sample_time = d_.app_wakeup(k) - d_.params_.input_resample_latency;
            while (consumed < d_.ui_batch_ && d_.motion_times_[static_cast<size_t>(consumed)] <= sample_time)
              ++consumed;
            if (consumed > 0) {
              d_.motion_times_.drop_front(static_cast<size_t>(consumed));
              d_.ui_batch_ -= consumed;
              d_.dispatcher_finish_ = true;
              d_.wake(*d_.dispatcher_task_, &self);
            }
            if ((consumed > 0 || d_.ui_batch_ > 0) && !d_.ui_frame_scheduled_) d_.ui_requests_vsync(self);
          }
          // While a finger (or an injected swipe) holds the views, only
          // input moves them: a frame draws if its CALLBACK_INPUT consumed
          // motions (their handlers invalidate(), and the traversal runs in
          // the same doFrame()), or if something else asked for it (the
          // touch-down, the lift, a redraw message). Otherwise doFrame()
          // runs CALLBACK_INPUT alone (ui_input_cost, assumption: another
          // InputConsumer call through JNI): no traversal, nothing for
          // RenderThread, no buffer, no FrameTimeline frame. No animation
          // posts frame callbacks meanwhile: the next frame is asked for by
          // input (above, and when motions are read).
          const bool held = d_.drag_held(d_.app_wakeup(k));
          const bool dirty = std::exchange(d_.ui_views_dirty_, false);
          if (held && consumed == 0 && !dirty) {
            ++d_.input_only_frames_;
            if (d_.params_.ui_input_cost > Time::zero()) {
              phase_ = Phase::kInputOnlyFrame;  // in doFrame(), not in its Looper
              return Action::run(d_.params_.ui_input_cost.count());
            }
            continue;
          }
          // vsync_threads: the animation callbacks, first in doFrame(),
          // post the next frame callback (requestNextVsync()) while the
          // animation goes on.
          if (d_.et_task_ && !held && d_.animating(d_.app_wakeup(k + 1)) && !d_.ui_frame_scheduled_)
            d_.ui_requests_vsync(self);
          frame_ = d_.alloc_frame();
          Frame& f = d_.frames_[frame_];
          f.stage = Frame::Stage::kUi;
          f.k = k;
          f.vsync = d_.app_wakeup(k);
          f.ui_start = now;
          f.expected_present = d_.vsync_time(k);
          f.app_deadline = f.expected_present - d_.sf_duration_;
          cost_ = (d_.ui_pending_first_ && d_.params_.first_ui_cost ? *d_.params_.first_ui_cost
                                                                    : d_.params_.ui_cost)
                      .sample(d_.rng_);
          ++d_.frames_started_;
          rpm_get(d_.ui_rpm_);
          phase_ = Phase::kRpmGet;
          continue;
        }
        case Phase::kRpmGet:
          if (rpm_busy(self, &a)) return a;
          phase_ = Phase::kWork;
          return Action::run(cost_.count());
        case Phase::kWork: {
          if (d_.ui_rpm_) d_.pm_->call_nosleep(*d_.ui_rpm_, RpmApi::kPutAutosuspend, QueueContext{&self, self.cpu});
          // syncAndDrawFrame(): hand the frame to RenderThread.
          d_.frames_[frame_].stage = Frame::Stage::kSync;
          d_.rt_inbox_ = frame_;
          frame_ = -1;
          d_.wake_render_thread(self);
          phase_ = Phase::kSyncWait;
          continue;
        }
        case Phase::kSyncWait:
          if (d_.rt_inbox_ >= 0) return Action::block(TaskState::kInterruptible);
          phase_ = Phase::kIdle;
          continue;
        case Phase::kInputOnlyFrame:
          phase_ = Phase::kIdle;
          continue;
        case Phase::kInput:
          if (std::exchange(down_handling_, false)) {
            // finishInputEvent() for the touch-down: InputDispatcher's Looper wakes.
            d_.dispatcher_finish_ = true;
            d_.wake(*d_.dispatcher_task_, &self);
          }
          if (!d_.ui_frame_scheduled_) d_.ui_requests_vsync(self);
          phase_ = Phase::kIdle;
          continue;
      }
    }
  }

 private:
  enum class Phase : uint8_t { kIdle, kRpmGet, kWork, kSyncWait, kInput, kInputOnlyFrame };
  Phase phase_ = Phase::kIdle;
  int frame_ = -1;
  Time cost_;
  bool down_handling_ = false;  // input_threads: a touch-down being handled (kInput)
};

// ---------------------------------------------------------------- RenderThread

// HWUI's DrawFrameTask::run() (sync, unblock the UI thread) and
// CanvasContext::draw() (dequeueBuffer, record and flush to the GPU,
// queueBuffer).
class DisplayPipeline::RenderBody final : public Body {
 public:
  explicit RenderBody(DisplayPipeline& d) : Body(d) {}
  bool waiting_buffer() const { return phase_ == Phase::kDequeue; }
  bool in_looper() const { return phase_ == Phase::kIdle; }  // waiting for DrawFrameTask's next frame
  Action next(Task& self) override {
    Action a;
    for (;;) {
      switch (phase_) {
        case Phase::kIdle:
          if (d_.rt_inbox_ < 0) return Action::block(TaskState::kInterruptible);
          frame_ = d_.rt_inbox_;
          d_.rt_inbox_ = -1;
          d_.frames_[frame_].stage = Frame::Stage::kRender;
          d_.wake(*d_.ui_task_, &self);  // DrawFrameTask::unblockUiThread()
          phase_ = Phase::kDequeue;
          d_.rt_dequeue_start_ = d_.k_.now();
          continue;
        case Phase::kDequeue:
          // dequeueBuffer(): sleeps until SurfaceFlinger releases a buffer.
          if (d_.free_buffers() <= 0) return Action::block(TaskState::kInterruptible);
          d_.rt_dequeue_wait_ = d_.k_.now() - d_.rt_dequeue_start_;
          ++d_.buffers_in_use_;
          phase_ = Phase::kRender;
          return Action::run(d_.params_.render_cost.sample(d_.rng_).count());
        case Phase::kRender:
          // The GPU driver's submit ioctl resumes the GPU (unless the
          // driver's run_job does: gpu_submit_wq).
          if (!d_.submit_wq_) rpm_get(d_.gpu_rpm_);
          phase_ = Phase::kRpmGet;
          continue;
        case Phase::kRpmGet: {
          if (rpm_busy(self, &a)) return a;
          Frame& f = d_.frames_[frame_];
          const Time now = d_.k_.now();
          if (d_.gpu_) {
            f.gpu_pending = true;
            f.gpu_time = d_.params_.gpu_time.sample(d_.rng_);
            if (d_.submit_wq_) {
              // drm_sched_entity_push_job(): the run_job work hands it over.
              d_.submit_queue_.push_back(frame_);
              d_.queue_run_job(QueueContext{&self, self.cpu});
            } else {
              d_.gpu_->run(d_, d_.gpu_cookie(frame_), f.gpu_time);
            }
          } else {
            f.gpu_pending = false;
            f.gpu_done = now;
          }
          // queueBuffer(): the buffer (with its acquire fence) goes to SF,
          // whose next vsync callback it schedules.
          f.queued = now;
          f.stage = Frame::Stage::kQueued;
          d_.queue_.push_back(frame_);
          frame_ = -1;
          d_.request_sf(self.cpu);
          // DrawFrameTask::run() reports after draw(), whose queueBuffer's
          // transaction already called scheduleCommit() (a one-way binder
          // call, ahead of the report's path through system_server).
          if (d_.params_.adpf) d_.adpf_report(f);
          phase_ = Phase::kIdle;
          continue;
        }
      }
    }
  }

 private:
  enum class Phase : uint8_t { kIdle, kDequeue, kRender, kRpmGet };
  Phase phase_ = Phase::kIdle;
  int frame_ = -1;
};

// The UI thread's frame for RenderThread's DrawFrameTask queue: wakes it
// only in its Looper (see app_deliver()).
void DisplayPipeline::wake_render_thread(const Task& ui) {
  if (rt_body_->in_looper()) wake(*rt_task_, &ui);
}

// ---------------------------------------------------------------- SurfaceFlinger

// MessageQueue::Handler::handleMessage() -> SurfaceFlinger::commit()
// (latch) and composite() (composition, then the display commit).
class DisplayPipeline::SfBody final : public Body {
 public:
  explicit SfBody(DisplayPipeline& d) : Body(d) {}
  bool in_looper() const { return phase_ == Phase::kIdle; }  // MessageQueue's Looper
  Action next(Task& self) override {
    Action a;
    for (;;) {
      switch (phase_) {
        case Phase::kIdle: {
          if (d_.sf_hwc_message_) {
            // Scheduler::onHardwareVsyncRequest()'s message:
            // SurfaceFlinger::requestHardwareVsync() -> HWComposer::
            // setVsyncEnabled(), a call into the composer that HWComposer
            // skips when its cached state is already the one asked for.
            d_.sf_hwc_message_ = false;
            if (d_.hwc_vsync_enabled_ != d_.hw_vsync_on_) {
              phase_ = Phase::kHwcVsync;
              if (d_.params_.hw_vsync_toggle_cost > Time::zero())
                return Action::run(d_.params_.hw_vsync_toggle_cost.count());
            }
            continue;
          }
          if (!d_.sf_pending_) return Action::block(TaskState::kInterruptible);
          d_.sf_pending_ = false;
          target_ = d_.vsync_time(d_.sf_pending_k_);
          // MessageQueue::Handler::handleMessage()'s frameTime
          // (PowerAdvisor's commit start).
          frame_wake_ = d_.k_.now();
          present_idle_ = Time::zero();
          if (d_.last_present_ >= target_) {
            // The previous frame is still to be presented at or after this
            // target: skip this vsync (backpressure) and try the next one.
            ++d_.sf_skipped_;
            if (!d_.queue_.empty() || d_.input_sync_ == InputSync::kApplied) d_.request_sf(self.cpu);
            continue;
          }
          if (d_.input_sync_ == InputSync::kApplied) {
            // SurfaceFlinger::commit() applies the input-window transaction;
            // its reported-listener makes the frame composite even without a
            // new buffer (addInputWindowCommands(): eTraversalNeeded), and
            // updateInputFlinger() reports the windows after composite()
            // (see kCommit).
            d_.input_sync_ = InputSync::kCommitting;
            phase_ = Phase::kLatch;
            if (d_.params_.sf_input_sync_cost > Time::zero())
              return Action::run(d_.params_.sf_input_sync_cost.count());
            continue;
          }
          phase_ = Phase::kLatch;
          continue;
        }
        case Phase::kLatch: {
          phase_ = Phase::kIdle;
          // An input sync composites and presents with no new buffer
          // (Output::present() calls the HWC's presentDisplay() anyway:
          // the display commit, display_rpm).
          if (!latch(self) && d_.input_sync_ != InputSync::kCommitting) {
            if (!d_.queue_.empty()) d_.request_sf(self.cpu);
            continue;
          }
          phase_ = Phase::kComposite;
          return Action::run(d_.params_.sf_cost.sample(d_.rng_).count());
        }
        case Phase::kComposite:
          if (d_.nonblocking_commit()) {
            phase_ = Phase::kPresentWait;
            continue;
          }
          rpm_get(d_.display_rpm_);
          phase_ = Phase::kRpmGet;
          continue;
        case Phase::kPresentWait: {
          count_commit_wait();
          // commit_wq / commit_worker: the display commit, as HWComposer::
          // presentAndGetReleaseFences() makes it. With commit_wq (mainline)
          // the composer does not get ahead of the kernel: stall_checks()
          // refuses a nonblocking commit while the CRTC's latest one has
          // not flipped (-EBUSY), so it waits for that commit's flip_done
          // first (an ASSUMPTION). With the previous present fence
          // signalled, SF then sleeps until its earliest present time, the
          // vsync ahead of the target ("wait for earliest present time";
          // hwcMinWorkDuration 0), so the flush latches at the target, not
          // earlier. (SF sleeps until its earliest present time before it
          // calls the composer; both waits end at the later of the two
          // times either way, and the flip's wake-up usually comes last.)
          // With commit_worker (Qualcomm's downstream SDE) the ioctl
          // itself waits for the previous commit (kSdeWait).
          if (!d_.commit_worker_ && waits_for_commit(&a)) return a;
          const Time earliest = target_ - d_.period();
          if (d_.k_.now() < earliest) {
            if (!d_.sf_earliest_timer_.armed()) {
              present_idle_ += earliest - d_.k_.now();  // PowerAdvisor's hwcPresentDelayedTime - present start
              d_.sf_earliest_cpu_ = self.cpu;
              d_.k_.hrtimer_start_range(d_.sf_earliest_timer_, earliest, d_.k_.timer_slack(self), self.cpu,
                                        &self.comm, &self.group);
            }
            return Action::block(TaskState::kInterruptible);
          }
          // drm_mode_atomic_ioctl() with DRM_MODE_ATOMIC_NONBLOCK:
          // atomic_check, setup_commit, prepare_planes and swap_state
          // here; commit_tail() goes to commit_wq (drm_atomic_helper_commit()).
          // SDE's msm_atomic_commit(): the check and prepare_planes, then
          // the wait for the previous commit (kSdeWait); swap_state,
          // prepare_fence and the dispatch to commit_worker after it cost
          // nothing here.
          phase_ = d_.commit_worker_ ? Phase::kSdeWait : Phase::kIoctl;
          if (d_.params_.commit_ioctl_cost > Time::zero()) return Action::run(d_.params_.commit_ioctl_cost.count());
          continue;
        }
        case Phase::kSdeWait:
          // msm_atomic_commit()'s wait (S) until the CRTC's pending_crtcs
          // bit clears: commit_destroy(), the last step of the previous
          // commit's complete_commit() on commit_worker.
          count_commit_wait();
          if (waits_for_commit(&a)) return a;
          phase_ = Phase::kIoctl;
          continue;
        case Phase::kIoctl: {
          const Time now = d_.k_.now();
          const uint64_t fence = d_.new_present_fence(-1);  // stamped at the flip
          d_.queue_commit(self, latched_, fence);
          // The frame's vsync is known once the worker has flushed; until
          // then SF's next frame sees the earliest it can be
          // (commit_kicked_off() sets the real one).
          d_.last_present_ = d_.vsync_time(ceil_div(now.count(), d_.period_));
          if (latched_ >= 0) {
            Frame& f = d_.frames_[latched_];
            f.sf_end = now;
            f.sf_deadline = target_;
            latched_ = -1;
          }
          composite_done(self, fence);
          continue;
        }
        case Phase::kHwcVsync:
          phase_ = Phase::kIdle;
          d_.sf_set_hwc_vsync(self);
          continue;
        case Phase::kRpmGet:
          if (rpm_busy(self, &a)) return a;
          phase_ = Phase::kCommit;
          return Action::run(d_.params_.commit_cost.sample(d_.rng_).count());
        case Phase::kCommit: {
          if (d_.display_rpm_)
            d_.pm_->call_nosleep(*d_.display_rpm_, RpmApi::kPutAutosuspend, QueueContext{&self, self.cpu});
          const Time now = d_.k_.now();
          // Presented at the first vsync at or after the commit's end, and
          // not before the target.
          d_.last_present_ = std::max(target_, d_.vsync_time(ceil_div(now.count(), d_.period_)));
          const uint64_t fence = d_.new_present_fence(floor_div(d_.last_present_.count(), d_.period_));
          if (latched_ >= 0) {
            Frame& f = d_.frames_[latched_];
            f.sf_end = now;
            f.sf_deadline = target_;
            f.present = d_.last_present_;
            d_.presenting_.push_back(latched_);
            if (!d_.present_timer_.armed()) d_.present_timer_.arm(d_.frames_[d_.presenting_.front()].present);
            latched_ = -1;
          }
          composite_done(self, fence);
          continue;
        }
      }
    }
  }

 private:
  enum class Phase : uint8_t { kIdle, kLatch, kComposite, kRpmGet, kCommit, kPresentWait, kSdeWait, kIoctl, kHwcVsync };
  // SF sleeps (S) while its next commit must wait for the latest one
  // (commit_blocks_sf()); the commit's worker wakes it
  // (wake_sf_if_unblocked()).
  bool waits_for_commit(Action* out) {
    d_.sf_waits_commit_ = d_.commit_blocks_sf();
    if (d_.sf_waits_commit_) {
      *out = Action::block(TaskState::kInterruptible);
      commit_wait_from_ = d_.k_.now();
    }
    return d_.sf_waits_commit_;
  }
  // A wait for the previous commit ended: PowerAdvisor counts it idle
  // (its estimate of the wait on the previous present fence; the model
  // takes it from the wait's start, the estimate from 150 us into
  // present).
  void count_commit_wait() {
    if (commit_wait_from_ < Time::zero()) return;
    if (d_.sf_woken_at_ > commit_wait_from_) present_idle_ += d_.sf_woken_at_ - commit_wait_from_;
    commit_wait_from_ = Time::ns(-1);
  }
  // The end of composite(), the display commit made (its present fence:
  // onCompositionPresented() -> Scheduler::addPresentFence()).
  void composite_done(Task& self, uint64_t fence) {
    if (d_.params_.sf_adpf) d_.sf_adpf_report(frame_wake_, present_idle_, target_);
    if (d_.params_.hw_vsync_resync) d_.sf_add_present_fence(self, fence);
    if (d_.input_sync_ == InputSync::kCommitting) {
      // updateInputFlinger() at the end of composite(): the windows
      // are reported and the WindowManager thread waiting for them
      // goes on (simplified: SF's main thread wakes it; the report
      // goes through SF's BackgroundExecutor thread and a one-way
      // binder call into system_server).
      d_.input_sync_ = InputSync::kNone;
      d_.wake(*d_.input_sync_waiter_, &self);
    }
    // The queued buffers' transactions already called scheduleCommit().
    if (!d_.queue_.empty()) d_.request_sf(self.cpu, /*schedule_commit=*/false);
    phase_ = Phase::kIdle;
  }
  // Latches the head of the queue if it is ready and due: with backpressure
  // (SurfaceFlinger::transactionReadyBufferCheck(): a layer that already
  // has a buffer in this flush keeps the next one queued) that one only;
  // without it, every ready, due buffer at the head, the newest kept and
  // the others dropped (BufferQueueConsumer::acquireBuffer()). False if
  // none was ready.
  bool latch(Task& self) {
    const int64_t period = d_.period_;
    int newest = -1;
    int replaced = 0;
    while (!d_.queue_.empty()) {
      Frame& f = d_.frames_[d_.queue_.front()];
      const bool ready = !f.gpu_pending;
      // SurfaceFlinger::frameIsEarly(): predicted present half a period or
      // more after this frame's expected present.
      const bool early = 2 * (f.expected_present - target_).count() >= period;
      if (!ready || early) break;
      const int i = d_.queue_.take_front();
      if (newest >= 0) {
        d_.emit(d_.frames_[newest], true);
        d_.free_frame(newest);
        ++replaced;
      }
      newest = i;
      if (d_.params_.backpressure) break;
    }
    if (newest < 0) return false;
    // Buffers released: the dropped ones and the one on screen until now.
    d_.buffers_in_use_ -= replaced + (d_.on_screen_ ? 1 : 0);
    d_.on_screen_ = true;
    if (d_.rt_body_->waiting_buffer() && d_.free_buffers() > 0) d_.wake(*d_.rt_task_, &self);
    latched_ = newest;
    Frame& f = d_.frames_[newest];
    f.stage = Frame::Stage::kLatched;
    // Layer::setPresentState() hands the frame the layer's previous latch
    // time, then updateLastLatchTime() records this one.
    f.last_latch = std::exchange(d_.last_latch_, d_.k_.now());
    return true;
  }
  Phase phase_ = Phase::kIdle;
  Time target_;
  int latched_ = -1;
  // PowerAdvisor's inputs for `sf_adpf`: this frame's wake-up, its sleep
  // in present, the running wait for the previous commit (-1: none).
  Time frame_wake_, present_idle_, commit_wait_from_ = Time::ns(-1);
};

// ---------------------------------------------------------------- pipeline

// ------------------------------------------------- the GPU driver's run_job

// drm_sched_run_job_work() -> msm_job_run() -> msm_gpu_submit() (drm/msm,
// 6.12): one job per run, the work queued again after it ran one (an
// empty run, which selects nothing, is not requeued: sched_main.c). The
// submit takes the GPU's runtime-PM reference with pm_runtime_get_sync()
// in the worker (resuming the GPU there, or sleeping in D while another
// context resumes it), runs run_job_cost and rings the doorbell. Simplified:
// one reference per job (msm takes one per active period and a get/put
// pair per job; the retire put balances it either way).
class DisplayPipeline::SubmitFn final : public WorkFn {
 public:
  explicit SubmitFn(DisplayPipeline& d) : d_(d) {}
  std::unique_ptr<RpmCall> rpm;  // set when gpu_rpm is
  Action step(WorkExec& x) override {
    for (;;) {
      switch (phase_) {
        case Phase::kStart:
          if (d_.submit_queue_.empty()) return Action::exit();
          frame_ = d_.submit_queue_.take_front();
          if (d_.gpu_rpm_) rpm->begin(*d_.gpu_rpm_, RpmApi::kGetSync);
          phase_ = Phase::kRpmGet;
          continue;
        case Phase::kRpmGet: {
          Action a;
          if (rpm_call_busy(rpm.get(), x.worker(), &a)) return a;
          phase_ = Phase::kRunJob;
          if (d_.params_.run_job_cost > Time::zero()) return Action::run(d_.params_.run_job_cost.count());
          continue;
        }
        case Phase::kRunJob: {
          const Frame& f = d_.frames_[static_cast<size_t>(frame_)];
          d_.gpu_->run(d_, d_.gpu_cookie(frame_), f.gpu_time);
          phase_ = Phase::kStart;
          d_.queue_run_job(x.context());  // drm_sched_run_job_queue()
          return Action::exit();
        }
      }
    }
  }

 private:
  enum class Phase : uint8_t { kStart, kRpmGet, kRunJob };
  DisplayPipeline& d_;
  Phase phase_ = Phase::kStart;
  int frame_ = -1;
};

// drm_sched_free_job_work() (6.12): the job's fence signalled,
// drm_sched_job_done() queued this on the submit workqueue; it frees the
// first finished job (ops->free_job(), msm_job_free(): free_job_cost),
// queues itself again while another has finished (drm_sched_run_free_queue())
// and queues run_job (drm_sched_run_job_queue()).
class DisplayPipeline::FreeJobFn final : public WorkFn {
 public:
  explicit FreeJobFn(DisplayPipeline& d) : d_(d) {}
  Action step(WorkExec& x) override {
    if (x.step == 0 && d_.jobs_to_free_ > 0) {
      --d_.jobs_to_free_;
      if (d_.params_.free_job_cost > Time::zero()) return Action::run(d_.params_.free_job_cost.count());
    }
    if (d_.jobs_to_free_ > 0) d_.wqs_->queue_work(*d_.submit_wq_, d_.free_work_, x.context());
    d_.queue_run_job(x.context());
    return Action::exit();
  }

 private:
  DisplayPipeline& d_;
};

// ------------------------------------------ drm/msm's nonblocking commit

// commit_tail() on a commit_wq worker (drm_atomic_helper.c commit_work(),
// msm_atomic_commit_tail(), drm/msm 6.12, DPU):
// drm_atomic_helper_wait_for_dependencies() waits (D) until the CRTC's
// previous commit is hw_done and flipped (drm_crtc_commit_wait()); then
// kms->funcs->enable_commit() (dpu_kms_enable_commit():
// pm_runtime_get_sync() of the DPU); the plane and flush writes
// (commit_cost, flush_commit(): the kickoff); wait_flush() sleeps (D) until
// the flush latches, the first vsync at or after the kickoff, whose
// interrupt (vblank, on display_irq_cpu) wakes the worker;
// complete_commit() sends the CRTC's event (_dpu_crtc_complete_flip()):
// flip_done and the present fence, stamped with the latest vblank (a
// worker more than a period late reports a later one);
// disable_commit() (pm_runtime_put_sync()); hw_done, which releases the
// next commit.
// With commit_worker (Qualcomm's downstream SDE, msm_atomic.c
// complete_commit() on the crtc_commit:<id> kthread_worker) the same
// steps: sde_kms_prepare_commit()'s get, the kickoff,
// msm_atomic_wait_for_commit_done() until the vsync, the complete_commit()
// put_sync, then commit_destroy(), which lets SF's next ioctl go on; SDE
// signals the present (retire) fence from work the vblank interrupt queues
// on its crtc_event:<id> thread, which the model folds into the commit's
// wake-up.
// Simplified: video mode (command-mode panels end the flush wait at the
// panel's ctl_start / pp_done instead); the acquire fences are signalled
// (SF latched ready buffers and composes nothing on the GPU); the work
// after the flip, the CRTC locks and the vblank get/put cost nothing; the
// encoder's own DPU reference (usage 2 -> 3 -> 2 rather than 1 -> 2 -> 1:
// counting only either way) and the frame done timeout timer each kickoff
// arms are not modelled. Optional (frame_event_worker, encoder_wq,
// vblank_wq): the frame events on the SCHED_FIFO 50 crtc_event:<id>
// thread, the encoder's 58 ms idle work (cancelled at each kickoff, queued
// on the ordered "msm" workqueue at frame done), and the vblank reference
// from the flush to the end of wait_flush() whose switches queue the
// vblank interrupt's enable / disable work on "msm"; encoder_vblank_irq:
// the encoder's vblank interrupt at every vsync while it is registered
// (arm_vsync_irq()).
class DisplayPipeline::CommitFn final : public WorkFn {
 public:
  CommitFn(DisplayPipeline& d, Commit& c) : d_(d), c_(c) {}
  std::unique_ptr<RpmCall> rpm;  // set when display_rpm is
  Action step(WorkExec& x) override {
    Action a;
    for (;;) {
      switch (phase_) {
        case Phase::kDependencies: {
          const Commit* prev = c_.seq > 0 ? d_.commit_in_flight(c_.seq - 1) : nullptr;
          if (waits(prev != nullptr, x, &a)) return a;  // in flight until its hw_done
          if (rpm) rpm->begin(*d_.display_rpm_, RpmApi::kGetSync);
          phase_ = Phase::kRpmGet;
          continue;
        }
        case Phase::kRpmGet:
          if (rpm_call_busy(rpm.get(), x.worker(), &a)) return a;
          phase_ = Phase::kKickoff;
          return Action::run(d_.params_.commit_cost.sample(d_.rng_).count());
        case Phase::kKickoff:
          // vblank_get() before the flush (msm_atomic_commit_tail()); once:
          // a wait below re-enters this phase.
          if (d_.vblank_wq_ && !vblank_held_) {
            vblank_held_ = true;
            d_.vblank_get(x.context());
          }
          // dpu_encoder_prepare_for_kickoff(): resource control KICKOFF
          // cancels the off work, waiting (D) if it is executing; an IDLE
          // encoder's interrupts go on again (_dpu_encoder_irq_enable(),
          // not charged: a few register writes).
          if (d_.encoder_off_fn_) {
            if (auto wait = d_.wqs_->cancel_work_sync_step(x.worker(), d_.encoder_off_work_)) return *wait;
            d_.dpu_rc_on_ = true;
            d_.arm_vsync_irq();
          }
          // sde_encoder_prepare_for_kickoff(): the encoder's resource
          // control, then the kickoff.
          if (d_.idle_off_fn_) d_.encoder_kickoff(x.context());
          d_.commit_kicked_off(c_);
          phase_ = Phase::kWaitFlush;
          continue;
        case Phase::kWaitFlush:
          if (waits(!c_.latched, x, &a)) return a;
          if (vblank_held_) {  // vblank_put(), then complete_commit()
            vblank_held_ = false;
            d_.vblank_put();
          }
          d_.commit_flipped(c_, x.worker());
          if (rpm) rpm->begin(*d_.display_rpm_, RpmApi::kPutSync);
          phase_ = Phase::kRpmPut;
          continue;
        case Phase::kRpmPut:
          if (rpm_call_busy(rpm.get(), x.worker(), &a)) return a;
          phase_ = Phase::kDependencies;
          d_.commit_hw_done(c_, x.worker());
          return Action::exit();
      }
    }
  }

 private:
  enum class Phase : uint8_t { kDependencies, kRpmGet, kKickoff, kWaitFlush, kRpmPut };
  // An uninterruptible wait (wait_for_completion(), wait_event()) while
  // `pending`: the worker sleeps in D, the commit records it as its waiter.
  bool waits(bool pending, WorkExec& x, Action* out) {
    c_.waiter = pending ? &x.worker() : nullptr;
    if (pending) *out = Action::block(TaskState::kUninterruptible);
    return pending;
  }
  DisplayPipeline& d_;
  Commit& c_;
  Phase phase_ = Phase::kDependencies;
  bool vblank_held_ = false;  // this commit's vblank reference (vblank_wq)
};

// SDE's encoder off work (sde_encoder_off_work() ->
// sde_encoder_resource_control(SDE_ENC_RC_EVENT_ENTER_IDLE) ->
// _sde_encoder_rc_idle(), sde_encoder.c, CLO display-drivers), on
// commit_worker idle_pc_delay after the last kickoff. The kernel re-arms
// it if a frame is kicked off and not done; the commits run on the same
// worker, so none is mid-kickoff when it runs here (a commit queued
// behind it finds the display suspended and resumes it, as in the
// kernel). For a command-mode panel: idle_pc_cost (clocks, interrupts,
// the RSC vote) and the encoder's pm_runtime_put_sync(): the display's
// ->runtime_suspend() runs here, in the commit thread, when nothing else
// holds it. Simplified: the off work's kthread_flush_worker() of
// crtc_event:<id> (not modelled); the vblank reference: after a long
// pause SurfaceFlinger's hardware-vsync resync enables vblank (SDE's
// vblank path, not hw_vsync_resync's mainline one), which
// resumes the display in crtc_event:<id> a vsync or two before the next
// commit and holds it while hardware vsync stays on (here the commit
// resumes it); the early wake-up of the input handler and the perf HAL,
// which resume it in crtc_commit before a commit (injected input reaches
// neither); the idle exit's own work beyond the display's resume
// callback (DSI clocks, PHY and PLL, interrupts, RSC); the CPU PM QoS
// resume-latency requests SDE holds while the encoder is on (they keep
// those CPUs out of deep idle states); a video-mode panel's off work
// (interrupts and pm_qos off), which runs with idle_pc_delay 0 in the
// kernel and not here.
class DisplayPipeline::IdleOffFn final : public WorkFn {
 public:
  explicit IdleOffFn(DisplayPipeline& d) : d_(d), rpm(*d.pm_) {}
  Action step(WorkExec& x) override {
    Action a;
    if (x.step == 0) {
      putting_ = false;
      if (!d_.encoder_on_) return Action::exit();
      if (d_.params_.idle_pc_cost > Time::zero()) return Action::run(d_.params_.idle_pc_cost.count());
    }
    if (!putting_) {
      putting_ = true;
      d_.encoder_on_ = false;  // rc_state IDLE
      rpm.begin(*d_.display_rpm_, RpmApi::kPutSync);
    }
    if (rpm_call_busy(&rpm, x.worker(), &a)) return a;
    return Action::exit();
  }

 private:
  DisplayPipeline& d_;
  RpmCall rpm;
  bool putting_ = false;
};

// dpu_crtc_frame_event_work() (dpu_crtc.c, 6.12) on the CRTC's
// crtc_event:<id>: the frame leaves frame_pending (a frame event with none
// pending is ignored), then the bandwidth release (which returns at once
// in video mode, where dpu_crtc_enable() holds a bandwidth reference, and
// needs debugfs's enable_bw_release anyway) and frame_done_comp, which
// nobody waits for but a CRTC being disabled: the bookkeeping costs
// frame_event_cost. With the 4 events all queued (the thread 4 frames
// behind) a frame done's event is dropped, and frame_pending stays one too
// high from then on, as in the kernel.
class DisplayPipeline::FrameEventFn final : public WorkFn {
 public:
  explicit FrameEventFn(DisplayPipeline& d) : d_(d) {}
  Action step(WorkExec& x) override {
    if (x.step == 0) {
      if (d_.frame_pending_ > 0) --d_.frame_pending_;
      if (d_.params_.frame_event_cost > Time::zero()) return Action::run(d_.params_.frame_event_cost.count());
    }
    return Action::exit();
  }

 private:
  DisplayPipeline& d_;
};

// dpu_encoder_off_work() -> dpu_encoder_resource_control(ENTER_IDLE)
// (dpu_encoder.c, 6.12): only from rc_state ON and with no frame kicked
// off (a stale timer), a video-mode encoder turns its interrupts off
// (_dpu_encoder_irq_disable(): encoder_off_cost) and goes IDLE. Not
// modelled: a command-mode panel's _dpu_encoder_resource_disable(), whose
// pm_runtime_put_sync() only drops a count while the CRTC holds the DPU
// (dpu_crtc_enable()).
class DisplayPipeline::EncoderOffFn final : public WorkFn {
 public:
  explicit EncoderOffFn(DisplayPipeline& d) : d_(d) {}
  Action step(WorkExec& x) override {
    if (x.step == 0) {
      if (!d_.dpu_rc_on_ || d_.frame_busy_) return Action::exit();
      d_.dpu_rc_on_ = false;
      if (d_.params_.encoder_off_cost > Time::zero()) return Action::run(d_.params_.encoder_off_cost.count());
    }
    return Action::exit();
  }

 private:
  DisplayPipeline& d_;
};

// vblank_ctrl_worker() (msm_kms.c, 6.12) on priv->wq: the enable or
// disable reaches the DPU (dpu_kms_enable_vblank() / _disable_vblank() ->
// dpu_crtc_vblank() -> each encoder's vblank refcount under its mutex;
// the interrupt callback is registered or removed only when nothing else
// holds it, which during a burst the encoder's resource control does):
// vblank_work_cost, then the item is freed.
class DisplayPipeline::VblankCtrlFn final : public WorkFn {
 public:
  explicit VblankCtrlFn(const DisplayPipeline& d) : d_(d) {}
  Action step(WorkExec& x) override {
    if (x.step == 0 && d_.params_.vblank_work_cost > Time::zero())
      return Action::run(d_.params_.vblank_work_cost.count());
    return Action::exit();
  }

 private:
  const DisplayPipeline& d_;
};

// drm_crtc_vblank_get() (drm_vblank.c, 6.12): the reference that finds
// vblank off turns it on, drm_vblank_enable() -> __enable_vblank() ->
// msm_crtc_enable_vblank(), which queues the enable on "msm".
void DisplayPipeline::vblank_get(QueueContext ctx) {
  if (vblank_refcount_++ > 0 || vblank_enabled_) return;
  vblank_enabled_ = true;
  arm_vsync_irq();
  queue_vblank_ctrl(true, ctx);
}

// drm_crtc_vblank_put(): with vblank_disable_immediate the last put arms
// nothing; the next vblank interrupt that finds no reference turns vblank
// off (drm_handle_vblank()): the interrupt one period after the latching
// one (kTagVblank; the latching interrupt runs drm_handle_vblank() before
// it wakes the commit's worker, so it always finds the reference). The
// encoder's vblank interrupt is still on then (its resource control holds
// it for IDLE_TIMEOUT after a frame). So an isolated commit, or a vsync
// missed inside a burst, costs a disable and an enable. The model's
// display interrupt otherwise fires only at latching vsyncs: this one is
// new with vblank_wq (on a phone it fires, with or without the work, at
// every vsync while the encoder's interrupts are on).
void DisplayPipeline::vblank_put() {
  if (--vblank_refcount_ > 0) return;
  vblank_timer_.arm(vsync_time(floor_div(k_.now().count(), period_) + 1));
}

// dpu_encoder_phys_vid_vblank_irq() (6.12): the vblank interrupt is
// registered while the encoder's interrupts are on (resource control ON,
// _dpu_encoder_irq_enable()) or drm's vblank is
// (dpu_encoder_toggle_vblank_for_crtc()), a refcount either way, and fires
// at every vsync meanwhile, frame or not (encoder_vblank_irq). Simplified:
// registered from the switch (the kickoff, the get that turns vblank on),
// not from the vblank work's run.
void DisplayPipeline::arm_vsync_irq() {
  if (!params_.encoder_vblank_irq || vsync_irq_timer_.armed()) return;
  vsync_irq_timer_.arm(vsync_time(floor_div(k_.now().count(), period_) + 1));
}

// vblank_ctrl_queue_work(): a kzalloc()'d item on priv->wq per switch,
// never coalesced (an enable and a disable can both be pending).
void DisplayPipeline::queue_vblank_ctrl(bool enable, QueueContext ctx) {
  WorkStruct* item = nullptr;
  for (WorkStruct& w : vblank_works_)
    if (!w.pending && !w.running_on) {
      item = &w;
      break;
    }
  if (!item) {  // a starved "msm" kworker: rare
    item = &vblank_works_.emplace_back("vblank_ctrl_worker");
    item->fn = vblank_ctrl_fn_.get();
  }
  SL_DEBUG("{:.6f} display {}: vblank {}: vblank_ctrl_worker queued on {}", k_.now().to_s(), name_,
           enable ? "on" : "off", vblank_wq_->name());
  wqs_->queue_work(*vblank_wq_, *item, ctx);
}

// ------------------------------------------------- hardware vsync resync

// Qualcomm's display HAL's DRM event thread (sdm hw_events_drm.cpp,
// HWEventsDRM::DisplayEventHandler(): poll() on the DRM fd): each vblank
// event wakes it; HandleVSync() first registers the next wait while the
// composer's vsync is on (drmWaitVBlank(RELATIVE | EVENT, 1): a vblank
// reference until that event), then drmHandleEvent() runs the callback
// (HWCDisplay::VSync() -> onVsync_2_4(), a one-way call into SF). Its
// round costs hw_vsync_event_cost; events delivered meanwhile wait for
// the next poll().
class DisplayPipeline::HwcEventBody final : public TaskBody {
 public:
  explicit HwcEventBody(DisplayPipeline& d) : d_(d) {}
  Action next(Task& self) override {
    for (;;) {
      if (running_) {
        running_ = false;
        d_.hwc_event_done(self);
      }
      if (!d_.hwc_event_) return Action::block(TaskState::kInterruptible);
      d_.hwc_event_ = false;
      if (d_.hwc_vsync_enabled_ && !d_.hwc_waiting_) d_.hwc_wait_vblank(QueueContext{&self, self.cpu});
      running_ = true;
      if (d_.params_.hw_vsync_event_cost > Time::zero()) return Action::run(d_.params_.hw_vsync_event_cost.count());
    }
  }

 private:
  DisplayPipeline& d_;
  bool running_ = false;
};

// SurfaceFlinger's pool thread serving the composer's onVsync():
// onComposerHalVsync() -> Scheduler::addResyncSample().
class DisplayPipeline::HwVsyncHook final : public BinderWorkHook {
 public:
  explicit HwVsyncHook(DisplayPipeline& d) : d_(d) {}
  void binder_work_done(Task& server) override { d_.sf_resync_sample(server, d_.hw_vsync_in_flight_.take_front()); }

 private:
  DisplayPipeline& d_;
};

// Scheduler::resync() (AOSP 14 and 15), from EventThread::
// requestNextVsync(): mLastResyncTime is exchanged for now at every call,
// and only a request more than kIgnoreDelay after the previous one
// resyncs: VsyncSchedule::onDisplayModeChanged() with the active mode,
// then enableHardwareVsync(). VSyncReactor::onDisplayModeChanged() takes
// its same-period branch (fences taken again, no samples asked for) only
// while the predictor's period is the nominal one, which a fitted
// predictor's never is on a phone (real timestamps are not exact: sdm
// hands them over in microseconds, the panel drifts): a trained predictor
// starts a period transition (more samples, fences ignored and dropped).
void DisplayPipeline::scheduler_resync(const Task* waker, int cpu) {
  const Time now = k_.now();
  const Time last = std::exchange(last_resync_, now);
  if (now - last <= params_.hw_vsync_ignore_delay) return;
  if (predictor_trained_) {  // startPeriodTransitionInternal()
    reactor_mode_transition_ = true;
    reactor_more_samples_ = true;
    reactor_ignore_fences_ = true;
    unfired_fences_.clear();
  } else {  // endPeriodTransition()
    reactor_mode_transition_ = false;
    reactor_ignore_fences_ = false;
    reactor_more_samples_ = false;
  }
  if (!hw_vsync_on_) ++hw_vsync_resyncs_;
  hw_vsync_enable(waker, cpu);
}

// VsyncSchedule::enableHardwareVsyncLocked(): only from Disabled, the
// predictor's model is reset (resetModel(): its timestamps cleared) and
// the switch requested; disableHardwareVsync(): from Enabled, requested.
// Scheduler::onHardwareVsyncRequest() posts each request to SF's main
// thread (schedule(): MessageQueue::postMessage(), its Looper woken).
// Requests posted before it runs are one message here: HWComposer's cached
// state makes all but the last a no-op.
void DisplayPipeline::hw_vsync_enable(const Task* waker, int cpu) {
  if (hw_vsync_on_) return;
  hw_vsync_on_ = true;
  predictor_.clear();  // resetModel(): the nominal period again
  predictor_trained_ = false;
  post_hw_vsync_request(waker, cpu);
}

void DisplayPipeline::hw_vsync_disable(const Task* waker, int cpu) {
  if (!hw_vsync_on_) return;
  hw_vsync_on_ = false;
  post_hw_vsync_request(waker, cpu);
}

void DisplayPipeline::post_hw_vsync_request(const Task* waker, int cpu) {
  sf_hwc_message_ = true;
  if (sf_body_->in_looper()) wake_from(*sf_task_, waker, cpu);
}

// The composer's setVsyncEnabled() (DisplayBase::SetVSyncStateLocked() ->
// HWEventsDRM::SetEventState(VSYNC)): on registers the first vblank wait,
// off only clears the flag (an event already queued is still delivered).
// Simplified: the call's hop into the composer's binder thread is SF
// main's hw_vsync_toggle_cost, and the wait is registered from its CPU.
void DisplayPipeline::sf_set_hwc_vsync(Task& sf) {
  hwc_vsync_enabled_ = hw_vsync_on_;
  SL_DEBUG("{:.6f} display {}: hardware vsync {}", k_.now().to_s(), name_, hwc_vsync_enabled_ ? "on" : "off");
  if (hwc_vsync_enabled_ && !hwc_waiting_) hwc_wait_vblank(QueueContext{&sf, sf.cpu});
}

// drm_wait_vblank_ioctl() with _DRM_VBLANK_EVENT, one vblank ahead
// (drm_vblank.c, 6.12): drm_vblank_get() (which may turn vblank on,
// vblank_get()), the event queued with that reference for the next vblank
// interrupt (kTagHwcVblank), where drm_handle_vblank_events() drops it.
void DisplayPipeline::hwc_wait_vblank(QueueContext ctx) {
  hwc_waiting_ = true;
  if (vblank_wq_) vblank_get(ctx);
  hwc_vblank_timer_.arm(vsync_time(floor_div(k_.now().count(), period_) + 1));
}

// drmHandleEvent()'s callback: DisplayBuiltIn::VSync() passes the event
// on only while the composer's vsync is on (else it drops it:
// SetVsyncStatus(false)), as onVsync_2_4() with the vblank's timestamp.
void DisplayPipeline::hwc_event_done(Task& self) {
  ++hwc_events_;
  if (!hwc_vsync_enabled_) return;
  if (!hw_vsync_binder_) {
    sf_resync_sample(self, hwc_event_k_);
    return;
  }
  hw_vsync_in_flight_.push_back(hwc_event_k_);  // one-way calls to a node run in order
  hw_vsync_binder_->transact(self, hw_vsync_call_, nullptr, hw_vsync_hook_.get());
}

// onComposerHalVsync() -> VsyncSchedule::addResyncSample(): only while
// Enabled the reactor takes the sample; it asks for more, or the schedule
// disables hardware vsync.
void DisplayPipeline::sf_resync_sample(Task& t, int64_t k) {
  if (!hw_vsync_on_) return;
  ++hw_vsync_samples_total_;
  if (!reactor_add_hw_sample(k)) hw_vsync_disable(&t, t.cpu);
}

bool DisplayPipeline::PredictorSamples::contains(int64_t v) const {
  for (int i = 0; i < size; ++i)
    if (k[static_cast<size_t>(i)] == v) return true;
  return false;
}

void DisplayPipeline::PredictorSamples::push(int64_t v) {
  k[static_cast<size_t>(next)] = v;
  next = (next + 1) % static_cast<int>(k.size());
  if (size < static_cast<int>(k.size())) ++size;
}

// VSyncPredictor::addVsyncTimestamp() (AOSP 14 and 15) with exact
// timestamps: validate() rejects a timestamp within 20% of a period of one
// it holds ("duplicate timestamp"; every timestamp here is in phase); a
// rejected one clears the timestamps while fewer than
// kMinimumSamplesForPrediction are held (still learning).
bool DisplayPipeline::predictor_add(int64_t k) {
  if (predictor_.contains(k)) {
    if (predictor_.size < params_.hw_vsync_samples) predictor_.clear();
    return false;
  }
  predictor_.push(k);
  if (predictor_.size >= params_.hw_vsync_samples) predictor_trained_ = true;  // a slope fitted
  return true;
}

// VSyncReactor::addHwVsyncTimestamp(): the sample is added (in a period
// confirmation it confirms the period at once: the HIDL 2.4 / AIDL
// composer reports the vsync period, the same one, periodConfirmed();
// the resync's transition first sets the mode again, setDisplayModePtr(),
// which clears the timestamps); the predictor needs more samples until it
// holds hw_vsync_samples. Present fences are taken again once it has
// enough.
bool DisplayPipeline::reactor_add_hw_sample(int64_t k) {
  if (std::exchange(reactor_mode_transition_, false)) predictor_.clear();
  predictor_add(k);  // its verdict is not looked at
  reactor_more_samples_ = predictor_.size < params_.hw_vsync_samples;
  if (!reactor_more_samples_) reactor_ignore_fences_ = false;
  return reactor_more_samples_;
}

uint64_t DisplayPipeline::new_present_fence(int64_t k) {
  fence_vsync_[composites_ % kFenceSlots] = k;
  return composites_++;
}

// Scheduler::addPresentFence() -> VSyncReactor::addPresentFence() at each
// composite: while fences are ignored, more samples are needed; else the
// signalled fences among mUnfiredFences and this one go to the predictor
// (a pending one waits, at most 20), and a rejected one starts a period
// confirmation (more samples needed, fences ignored and dropped). Then
// the schedule enables hardware vsync if more samples are needed, else
// disables it: so a composite between a resync and its first sample turns
// it off again (the reactor has not asked for samples yet).
void DisplayPipeline::sf_add_present_fence(Task& sf, uint64_t fence) {
  const auto signalled = [&](uint64_t f) {
    const int64_t k = fence_vsync_[f % kFenceSlots];
    return k >= 0 && vsync_time(k) <= k_.now();
  };
  bool need = true;
  if (!reactor_ignore_fences_) {
    bool accepted = true;
    for (size_t i = 0; i < unfired_fences_.size();) {
      const uint64_t f = unfired_fences_[i];
      if (!signalled(f)) {
        ++i;
        continue;
      }
      accepted &= predictor_add(fence_vsync_[f % kFenceSlots]);
      unfired_fences_.remove_at(i);
    }
    if (signalled(fence)) {
      accepted &= predictor_add(fence_vsync_[fence % kFenceSlots]);
    } else {
      if (unfired_fences_.size() == 20) unfired_fences_.pop_front();  // kMaxPendingFences
      unfired_fences_.push_back(fence);
    }
    if (!accepted) {
      reactor_more_samples_ = true;
      reactor_ignore_fences_ = true;
      unfired_fences_.clear();
    }
    need = reactor_more_samples_;
  }
  if (need) hw_vsync_enable(&sf, sf.cpu);
  else hw_vsync_disable(&sf, sf.cpu);
}

// dpu_encoder_frame_done_callback() from the vblank interrupt that
// latched a kicked-off frame (with none kicked off, the callback is
// suppressed): resource control FRAME_DONE queues the off work unless
// another frame is pending (dpu_crtc_frame_pending() > 1; queue_delayed_work()
// leaves an armed one as it is), then dpu_crtc_frame_event_cb() queues the
// next free frame event on crtc_event:<id> (none free: "event overflow",
// dropped). The kernel's callback runs at every vblank and returns when
// nothing is busy; the model's flush latches at the first vsync after its
// kickoff, so the latching vblank is the only one that finds a frame.
void DisplayPipeline::frame_done(int irq_cpu) {
  if (!frame_busy_) return;
  frame_busy_ = false;
  const QueueContext irq{nullptr, irq_cpu};
  if (encoder_off_fn_ && dpu_rc_on_ && frame_pending_ <= 1)
    wqs_->queue_delayed_work(*encoder_wq_, encoder_off_work_, irq, params_.encoder_idle_timeout);
  if (frame_event_worker_) {
    WorkStruct& ev = frame_events_[next_frame_event_];
    if (ev.pending || ev.running_on) return;  // all 4 in use: they are taken and freed in turn
    next_frame_event_ = (next_frame_event_ + 1) % frame_events_.size();
    frame_event_worker_->queue_work(ev, irq, nullptr);
  }
}

// sde_encoder_resource_control(SDE_ENC_RC_EVENT_KICKOFF) ->
// _sde_encoder_rc_kickoff(): an idle encoder takes display_rpm again
// (_sde_encoder_resource_control_helper(): pm_runtime_resume_and_get();
// the commit's own get in sde_kms_prepare_commit() resumed the display
// already, so it only counts); then sde_encoder_rc_restart_delayed()
// pushes the off work idle_pc_delay ahead (kthread_mod_delayed_work()).
void DisplayPipeline::encoder_kickoff(QueueContext ctx) {
  if (!encoder_on_) {
    if (display_rpm_->status() != RpmStatus::kActive)
      throw ModelError(fmt::format("display '{}': the encoder's get at a kickoff found '{}' not active", name_,
                                   display_rpm_->name()));
    pm_->call_nosleep(*display_rpm_, RpmApi::kGet, ctx);
    encoder_on_ = true;
  }
  commit_worker_->mod_delayed_work(idle_off_work_, ctx, params_.idle_pc_delay, nullptr);
}

DisplayPipeline::Commit* DisplayPipeline::commit_in_flight(uint64_t seq) {
  Commit& c = commits_[seq % commits_.size()];
  return c.in_use && c.seq == seq ? &c : nullptr;
}

bool DisplayPipeline::commit_blocks_sf() {
  if (commit_seq_ == 0) return false;
  const Commit* c = commit_in_flight(commit_seq_ - 1);
  return c && (commit_worker_ || !c->flipped);
}

void DisplayPipeline::queue_commit(Task& sf, int frame, uint64_t fence) {
  Commit& c = commits_[commit_seq_ % commits_.size()];
  if (c.in_use)
    throw ModelError(fmt::format("display '{}': more than {} display commits in flight at {}", name_, commits_.size(),
                                 format_time(k_.now())));
  c.in_use = true;
  c.seq = commit_seq_++;
  c.frame = frame;
  c.latched = c.flipped = false;
  c.fence = fence;
  c.waiter = nullptr;
  if (commit_worker_)
    commit_worker_->queue_work(c.work, QueueContext{&sf, sf.cpu});  // msm_atomic_commit_dispatch()
  else
    wqs_->queue_work(*commit_wq_, c.work, QueueContext{&sf, sf.cpu});
}

void DisplayPipeline::commit_kicked_off(Commit& c) {
  ++frame_pending_;    // dpu_crtc_commit_kickoff()
  frame_busy_ = true;  // dpu_encoder_kickoff(): frame_busy_mask
  // The flush latches at the first vsync at or after its write.
  const Time flip = vsync_time(ceil_div(k_.now().count(), period_));
  if (c.seq + 1 == commit_seq_) last_present_ = flip;  // SF's latest commit: its present's vsync
  // One commit at a time is flushed and not yet latched (the next waits
  // for this one's hw_done before its own flush).
  flipping_seq_ = c.seq;
  flip_timer_.arm(flip);
}

void DisplayPipeline::commit_flipped(Commit& c, Task& worker) {
  c.flipped = true;
  // The present fence, stamped with the latest vblank.
  const int64_t vblank = floor_div(k_.now().count(), period_);
  fence_vsync_[c.fence % kFenceSlots] = vblank;
  if (c.frame >= 0) {
    Frame& f = frames_[static_cast<size_t>(c.frame)];
    f.present = vsync_time(vblank);
    emit(f, false);
    free_frame(c.frame);
    c.frame = -1;
  }
  wake_sf_if_unblocked(worker);
}

void DisplayPipeline::commit_hw_done(Commit& c, Task& worker) {
  if (Commit* next = commit_in_flight(c.seq + 1); next && next->waiter) wake(*next->waiter, &worker);
  c.in_use = false;  // hw_done (and SDE's commit_destroy())
  c.waiter = nullptr;
  wake_sf_if_unblocked(worker);
}

void DisplayPipeline::wake_sf_if_unblocked(Task& worker) {
  if (!sf_waits_commit_ || commit_blocks_sf()) return;
  sf_waits_commit_ = false;
  sf_woken_at_ = k_.now();
  wake(*sf_task_, &worker);
}

// ------------------------------------------------- vsync delivery threads

// TimerDispatch (Timer::dispatch(): epoll on the timerfd, then the expired
// callbacks) and the app EventThread (EventThread::threadMain(): wait for
// onVsync() or requestNextVsync(), then dispatchEvent() to the app's
// connection and schedule its next callback). Each takes what is pending,
// runs its cost, then delivers it; what arrives meanwhile waits for its
// next round, as epoll_wait() and the condition variable do.
class DisplayPipeline::VsyncBody final : public TaskBody {
 public:
  enum class Role : uint8_t { kTimerDispatch, kAppEventThread };
  VsyncBody(DisplayPipeline& d, Role role) : d_(d), role_(role) {}
  Action next(Task& self) override {
    for (;;) {
      if (running_) {
        running_ = false;
        if (role_ == Role::kTimerDispatch) d_.timer_dispatch_done(self, batch_sf_, batch_app_);
        else d_.event_thread_done(self, batch_app_, batch_schedule_);
      }
      if (role_ == Role::kTimerDispatch) {
        // Timer::dispatch() -> VSyncDispatchTimerQueue::timerCallback().
        if (!d_.dispatch_expired_) return Action::block(TaskState::kInterruptible);
        d_.dispatch_expired_ = false;
        d_.take_expired_callbacks(self.cpu, &batch_sf_, &batch_app_);
      } else {
        if (!d_.et_app_.set && !d_.et_requested_) return Action::block(TaskState::kInterruptible);
        batch_app_ = d_.et_app_;
        d_.et_app_ = AppVsync{};
        d_.et_requested_ = false;
        batch_schedule_ = d_.event_thread_begin(batch_app_);
      }
      running_ = true;
      const Time cost = role_ == Role::kTimerDispatch ? d_.params_.timer_dispatch_cost : d_.params_.app_event_cost;
      if (cost > Time::zero()) return Action::run(cost.count());
    }
  }

 private:
  DisplayPipeline& d_;
  Role role_;
  bool running_ = false;
  bool batch_sf_ = false;
  AppVsync batch_app_;       // TimerDispatch: the app's expired callback; EventThread: the vsync to dispatch
  bool batch_schedule_ = false;  // EventThread: the round schedules the next callback
};

// ------------------------------------------------------------ input path

// input_threads: the touch IRQ thread (irq_thread(): the threaded handler,
// run again while IRQTF_RUNTHREAD was set meanwhile), InputReader
// (EventHub::getEvents(): every report in evdev's buffer per round) and
// InputDispatcher (its Looper: the motions InputReader notified, and the
// app's finished signals). The same shape as VsyncBody: take what is
// pending, run the round's cost, hand it on.
class DisplayPipeline::InputBody final : public TaskBody {
 public:
  InputBody(DisplayPipeline& d, InputRole role) : d_(d), role_(role) {}
  Action next(Task& self) override {
    for (;;) {
      if (running_) {
        running_ = false;
        d_.input_round_done(role_, self, round_);
      }
      round_ = d_.input_take(role_);
      if (round_.events == 0 && !round_.finish) return Action::block(TaskState::kInterruptible);
      running_ = true;
      const Time cost = d_.input_cost(role_, round_);
      if (cost > Time::zero()) return Action::run(cost.count());
    }
  }

 private:
  DisplayPipeline& d_;
  InputRole role_;
  bool running_ = false;
  InputRound round_;
};

DisplayPipeline::InputRound DisplayPipeline::input_take(InputRole role) {
  InputRound r;
  switch (role) {
    case InputRole::kIrqThread:
      r.events = std::exchange(irq_thread_pending_, false) ? 1 : 0;
      r.time = last_report_time_;
      r.down = std::exchange(irq_down_, false);
      r.down_time = r.time;  // the motion that carries the touch-down
      break;
    case InputRole::kReader:
      r.events = std::exchange(reader_reports_, 0);
      r.down = std::exchange(reader_down_, false);
      r.down_time = reader_down_time_;
      break;
    case InputRole::kDispatcher:
      r.events = std::exchange(dispatcher_motions_, 0);
      r.down = std::exchange(dispatcher_down_, false);
      r.down_time = dispatcher_down_time_;
      r.up = std::exchange(dispatcher_up_, false);
      r.finish = std::exchange(dispatcher_finish_, false);
      // One injection at a time: a finished signal taken while it is
      // published is the app's answer to it.
      r.inject_finished = r.finish && inject_state_ == InjectState::kPublished;
      if (inject_state_ == InjectState::kQueued) {
        inject_state_ = InjectState::kTaken;
        r.inject_taken = true;
      }
      break;
  }
  return r;
}

Time DisplayPipeline::input_cost(InputRole role, const InputRound& r) const {
  switch (role) {
    case InputRole::kIrqThread: return params_.touch_irq_cost;
    case InputRole::kReader: return params_.input_reader_cost;
    case InputRole::kDispatcher:
      return (r.events > 0 ? params_.input_dispatcher_cost : Time::zero()) +
             (r.finish ? params_.input_finish_cost : Time::zero());
  }
  return Time::zero();
}

void DisplayPipeline::input_round_done(InputRole role, Task& self, const InputRound& r) {
  switch (role) {
    case InputRole::kIrqThread:
      // input_sync(): evdev wakes the reader blocked in its epoll wait.
      // The motion carries the time of the latest report the handler read
      // (its interrupt's time: input_set_timestamp()).
      motion_times_.push_back(r.time);
      ++reader_reports_;
      if (r.down) reader_down_time_ = r.down_time;
      reader_down_ = reader_down_ || r.down;
      wake(*reader_task_, &self);
      break;
    case InputRole::kReader:
      // QueuedInputListener::flush() -> InputDispatcher::notifyMotion():
      // mLooper->wake().
      dispatcher_motions_ += r.events;
      if (r.down) dispatcher_down_time_ = r.down_time;
      dispatcher_down_ = dispatcher_down_ || r.down;
      wake(*dispatcher_task_, &self);
      break;
    case InputRole::kDispatcher:
      if (r.inject_finished) {
        // WAIT_FOR_FINISH: the injection's last pending dispatch is done
        // (decrementPendingForegroundDispatches()): mInjectionSyncFinished
        // wakes the thread waiting in injectInputEvent().
        inject_state_ = InjectState::kNone;
        wake(*inject_waiter_, &self);
      }
      if (r.inject_taken) inject_state_ = InjectState::kPublished;
      // The motions published to the app's InputChannel: the socket wakes
      // the UI thread's Looper (only there: not postAndWait() nor a
      // runtime-PM D sleep; it reads them when back in its Looper).
      if (r.events == 0) break;
      ui_input_received_ += r.events;
      if (r.down) ui_down_time_ = r.down_time;
      ui_down_ = ui_down_ || r.down;
      ui_up_ = ui_up_ || r.up;
      input_received_total_ += static_cast<uint64_t>(r.events);
      if (ui_body_->in_looper()) wake(*ui_task_, &self);
      break;
  }
}

// Window i is touched from its start to its end; the controller reports
// every report_period_ from the touch-down.
void DisplayPipeline::arm_touch_report(Time t) {
  const int64_t cycle = (params_.animation + params_.gap).count();
  t = std::max(t, params_.start_delay);
  for (int64_t i = (t - params_.start_delay).count() / cycle;; ++i) {
    if (params_.cycles >= 0 && i >= 2 * static_cast<int64_t>(params_.cycles)) return;
    const Time start = params_.start_delay + Time::ns(i * cycle);
    const int64_t j = t > start ? ceil_div((t - start).count(), report_period_) : 0;
    const Time at = start + Time::ns(j * report_period_);
    if (at < start + params_.animation) {
      report_at_ = at;
      touch_report_timer_.arm(at);
      return;
    }
  }
}

// ------------------------------------------------------------ injected input

// The binder thread's side of the injection: InputDispatcher::
// injectInputEvent() queues the event, then waits for its result.
class DisplayPipeline::InjectHook final : public BinderWorkHook {
 public:
  explicit InjectHook(DisplayPipeline& d) : d_(d) {}
  void binder_work_done(Task& server) override { d_.inject_enqueue(server, d_.inject_next_kind_); }
  bool binder_hold(Task&) override { return d_.inject_state_ != InjectState::kNone; }

 private:
  DisplayPipeline& d_;
};

// WindowManagerService.syncInputTransactions() on the binder thread: its
// transaction goes to SurfaceFlinger, then the thread waits until SF's
// next commit has reported the input windows.
class DisplayPipeline::InputSyncHook final : public BinderWorkHook {
 public:
  explicit InputSyncHook(DisplayPipeline& d) : d_(d) {}
  void binder_work_done(Task& server) override { d_.input_sync_apply(server); }
  bool binder_hold(Task&) override { return d_.input_sync_ != InputSync::kNone; }

 private:
  DisplayPipeline& d_;
};

// input_source: injected. The test's thread: UiAutomator's swipe() over
// each animation window (a touch-down at its start, then a move per step
// while it lasts), every event a synchronous injection (display.h).
class DisplayPipeline::InjectorBody final : public TaskBody, public BinderClient {
 public:
  explicit InjectorBody(DisplayPipeline& d) : d_(d) {}
  Action next(Task& self) override {
    Kernel& k = d_.k_;
    for (;;) {
      switch (phase_) {
        case Phase::kSleep:
          // SystemClock.sleep(): only its timer ends it.
          if (d_.inject_timer_.armed()) return Action::block(TaskState::kInterruptible);
          phase_ = Phase::kIdle;
          continue;
        case Phase::kIdle: {
          const Time now = k.now();
          int64_t w = d_.window_of(now);
          // The gesture ends inject_duration after its window's start.
          const Time gesture = d_.params_.inject_duration;
          if (w >= 0 && gesture > Time::zero() &&
              now - (d_.params_.start_delay + Time::ns(w * (d_.params_.animation + d_.params_.gap).count())) >=
                  gesture)
            w = -1;
          if (touching_ && w != window_) {
            // The gesture is over: touchUp() injects the lift.
            kind_ = InjectKind::kUp;
            touching_ = false;
          } else if (w < 0) {
            // Between swipes: sleep until the next one starts.
            const Time start = d_.next_window_start(now);
            if (start == Time::max()) return Action::block(TaskState::kInterruptible);  // the test is over
            k.hrtimer_start_range(d_.inject_timer_, start, k.timer_slack(self), self.cpu, &self.comm, &self.group);
            phase_ = Phase::kSleep;
            return Action::block(TaskState::kInterruptible);
          } else {
            // A window not swiped yet starts with the touch-down.
            kind_ = w != window_ ? InjectKind::kDown : InjectKind::kMove;
            touching_ = true;
            window_ = w;
          }
          // The event's time: SystemClock.uptimeMillis() as the test builds it.
          event_time_ = Time::ms(now.count() / 1'000'000);
          phase_ = Phase::kInject;
          if (d_.params_.inject_cost > Time::zero()) return Action::run(d_.params_.inject_cost.count());
          continue;
        }
        case Phase::kInject:
          // UiAutomationConnection.injectInputEvent(): a touch-down waits
          // for the input windows to be synced first.
          if (kind_ == InjectKind::kDown && d_.params_.inject_sync_input && !synced_) return begin_input_sync(self);
          synced_ = false;
          ++d_.injected_total_;
          phase_ = Phase::kWait;
          if (d_.inject_binder_) {
            // IInputManager.injectInputEvent(): a synchronous transaction;
            // the reply comes once the app has finished the event.
            d_.inject_next_kind_ = kind_;
            d_.inject_event_time_ = event_time_;
            replied_ = false;
            d_.inject_binder_->transact(self, d_.inject_call_, this, d_.inject_hook_.get());
          } else {
            replied_ = true;  // no binder: the test's thread waits for the finish itself
            d_.inject_event_time_ = event_time_;
            d_.inject_enqueue(self, kind_);
          }
          return Action::block(TaskState::kInterruptible);
        case Phase::kWait:
          if (!replied_ || d_.inject_state_ != InjectState::kNone) return Action::block(TaskState::kInterruptible);
          if (kind_ == InjectKind::kUp) {
            // After the lift the input windows are synced again; then the
            // swipe has returned.
            if (d_.params_.inject_sync_input) return begin_input_sync(self);
            phase_ = Phase::kIdle;
            continue;
          }
          // The step's SystemClock.sleep() (hrtimer_nanosleep(): the
          // task's timer slack applies).
          k.hrtimer_start_range(d_.inject_timer_, k.now() + d_.params_.inject_step_delay, k.timer_slack(self),
                                self.cpu, &self.comm, &self.group);
          phase_ = Phase::kSleep;
          return Action::block(TaskState::kInterruptible);
        case Phase::kSyncWait:
          if (!replied_ || d_.input_sync_ != InputSync::kNone) return Action::block(TaskState::kInterruptible);
          if (kind_ == InjectKind::kUp) {
            phase_ = Phase::kIdle;
          } else {
            synced_ = true;  // now the touch-down itself
            phase_ = Phase::kInject;
          }
          continue;
      }
    }
  }
  // BinderClient: system_server's reply (WF_SYNC).
  void binder_reply(Task& server) override {
    replied_ = true;
    d_.k_.try_to_wake_up(*d_.injector_task_, &server, server.cpu, kWfSync);
  }

 private:
  // IWindowManager.syncInputTransactions(waitForAnimations = true):
  // a synchronous call to the injection's binder process (system_server),
  // or, without one, the test's thread waits for SF's commit itself. No
  // window container animation runs in the model, so
  // waitForAnimationsToComplete() returns at once.
  // Sleeps in kSyncWait until the sync is done.
  Action begin_input_sync(Task& self) {
    ++d_.input_syncs_;
    phase_ = Phase::kSyncWait;
    if (d_.inject_binder_) {
      replied_ = false;
      d_.inject_binder_->transact(self, d_.input_sync_call_, this, d_.input_sync_hook_.get());
    } else {
      replied_ = true;
      d_.input_sync_apply(self);
    }
    return Action::block(TaskState::kInterruptible);
  }
  enum class Phase : uint8_t { kIdle, kInject, kWait, kSleep, kSyncWait };
  DisplayPipeline& d_;
  Phase phase_ = Phase::kIdle;
  bool synced_ = false;  // the touch-down's input sync is done
  int64_t window_ = -1;  // the window being swiped
  bool touching_ = false;  // a touch-down injected, its lift not yet
  InjectKind kind_ = InjectKind::kMove;
  Time event_time_;       // the event being injected: its MotionEvent's time
  bool replied_ = false;
};

void DisplayPipeline::inject_enqueue(Task& self, InjectKind kind) {
  // enqueueInboundEventLocked() and mLooper->wake(): InputDispatcher takes
  // it as a motion notified by InputReader.
  motion_times_.push_back(inject_event_time_);
  ++dispatcher_motions_;
  if (kind == InjectKind::kDown) dispatcher_down_time_ = inject_event_time_;
  dispatcher_down_ = dispatcher_down_ || kind == InjectKind::kDown;
  dispatcher_up_ = dispatcher_up_ || kind == InjectKind::kUp;
  inject_state_ = InjectState::kQueued;
  inject_waiter_ = &self;
  wake(*dispatcher_task_, &self);
}

// The input-window transaction's apply(): SurfaceFlinger's
// setTransactionState() schedules a commit (scheduleCommit(): SF's next
// vsync callback, from the applying thread's CPU), and `waiter` sleeps
// until SF has committed it.
void DisplayPipeline::input_sync_apply(Task& waiter) {
  input_sync_ = InputSync::kApplied;
  input_sync_waiter_ = &waiter;
  request_sf(waiter.cpu);
}

Time DisplayPipeline::next_window_start(Time t) const {
  const int64_t cycle = (params_.animation + params_.gap).count();
  const int64_t i = t <= params_.start_delay ? 0 : ceil_div((t - params_.start_delay).count(), cycle);
  if (params_.cycles >= 0 && i >= 2 * static_cast<int64_t>(params_.cycles)) return Time::max();
  return params_.start_delay + Time::ns(i * cycle);
}

void DisplayPipeline::timer_dispatch_done(Task& self, bool sf, const AppVsync& app) {
  if (sf) sf_deliver(&self, self.cpu);  // MessageQueue::vsyncCallback()
  if (app.set) {                        // EventThread::onVsync()
    et_app_ = app;
    wake(*et_task_, &self);
  }
}

// VSyncDispatchTimerQueue (Android 14): one timerfd for SF's and the app's
// callbacks. schedule() arms it from the calling thread when it is idle or
// the callback is due more than kGroupDispatchWithin before its intended
// wake-up; otherwise the callback waits for that expiry.
void DisplayPipeline::schedule_callback(DispatchCallback& cb, Time wakeup, int caller_cpu) {
  cb.armed = true;
  cb.wakeup = wakeup;
  // Scheduled between an expiry and TimerDispatch's round (rearmImminent):
  // that round leaves it for the timer it re-arms.
  cb.after_round = dispatch_expired_;
  const bool timer_idle = !dispatch_timer_.armed() && !dispatch_expired_;
  if (timer_idle || wakeup < dispatch_intended_ - kGroupDispatchWithin) rearm_dispatch(caller_cpu);
}

// rearmTimer(): the earliest armed callback's wake-up, from `cpu`.
void DisplayPipeline::rearm_dispatch(int cpu) {
  const DispatchCallback* first = nullptr;
  for (const DispatchCallback* cb : {&sf_cb_, &app_cb_})
    if (cb->armed && (!first || cb->wakeup < first->wakeup)) first = cb;
  if (!first) return;
  dispatch_intended_ = first->wakeup;
  dispatch_cpu_ = cpu;
  k_.hrtimer_start(dispatch_timer_, std::max(first->wakeup, k_.now()), cpu);
}

// timerCallback() on TimerDispatch: every callback due before the intended
// wake-up + kGroupDispatchWithin + how late the round is runs now (SF's
// first); the timer is re-armed for the rest from TimerDispatch's CPU.
void DisplayPipeline::take_expired_callbacks(int td_cpu, bool* sf, AppVsync* app) {
  const Time lag = std::max(Time::zero(), k_.now() - dispatch_intended_);
  const Time limit = dispatch_intended_ + kGroupDispatchWithin + lag;
  auto due = [&](const DispatchCallback& cb) { return cb.armed && !cb.after_round && cb.wakeup < limit; };
  *sf = due(sf_cb_);
  if (*sf) {
    sf_cb_.armed = false;
    ++sf_wakeups_;
    sf_last_target_ = sf_target_;
    sf_dispatch_k_ = sf_target_;
    sf_dispatching_ = true;
  }
  *app = AppVsync{};
  if (due(app_cb_)) {
    app_cb_.armed = false;
    *app = AppVsync{true, app_target_, false, window_of(app_cb_.wakeup)};
  }
  sf_cb_.after_round = app_cb_.after_round = false;
  rearm_dispatch(td_cpu);
}

// The start of a round of EventThread::threadMain() for the app's
// connection, under its lock: an expiry is consumed as
// shouldConsumeEvent() does (Single: dispatched, the connection left
// SingleSuppressCallback; SingleSuppressCallback: None, nothing
// dispatched; `v` is cleared then). Returns whether the round will
// schedule the next callback (the connection still asks). A request
// arriving during the round waits for the lock, then wakes the thread for
// another round.
bool DisplayPipeline::event_thread_begin(AppVsync& v) {
  if (v.set) {
    if (app_request_ == VsyncRequest::kSingle) {
      app_request_ = VsyncRequest::kSingleSuppressCallback;
    } else {
      app_request_ = VsyncRequest::kNone;
      v = AppVsync{};
    }
  }
  return app_request_ != VsyncRequest::kNone;
}

// The end of the round: dispatchEvent() to the app, then
// mVsyncRegistration.schedule() (VSyncDispatchTimerQueue::schedule(): the
// first vsync whose callback time is still ahead, after the last one
// fired) from this thread's CPU. A round that schedules nothing cancels
// nothing either: no callback is armed then.
void DisplayPipeline::event_thread_done(Task& self, const AppVsync& v, bool schedule) {
  if (v.set) {
    AppVsync d = v;
    // The first vsync of an animation window: not an idle redraw's, nor
    // one an input motion asked for after its window ended.
    d.first = d.window >= 0 && d.window != last_window_;
    last_window_ = d.window;
    ++app_vsyncs_;
    app_deliver(d, &self, self.cpu);
  }
  if (!schedule || app_cb_.armed) return;
  app_target_ = std::max(ceil_div((k_.now() + app_duration_ + sf_duration_).count(), period_), app_target_ + 1);
  schedule_callback(app_cb_, app_wakeup(app_target_), self.cpu);
}

// EventThread::requestNextVsync(): None -> Single wakes the EventThread
// (mCondition.notify_all()); SingleSuppressCallback -> Single wakes nobody
// (the callback is still scheduled).
void DisplayPipeline::request_app_vsync(const Task* waker, int cpu) {
  if (params_.hw_vsync_resync) scheduler_resync(waker, cpu);  // mCallback.resync(), before the lock
  if (app_request_ == VsyncRequest::kNone) {
    app_request_ = VsyncRequest::kSingle;
    et_requested_ = true;
    wake_from(*et_task_, waker, cpu);
  } else if (app_request_ == VsyncRequest::kSingleSuppressCallback) {
    app_request_ = VsyncRequest::kSingle;
  }
}

void DisplayPipeline::ui_requests_vsync(Task& ui) {
  ui_frame_scheduled_ = true;
  if (request_binder_)
    request_binder_->transact(ui, request_call_, nullptr, this);  // one-way: the UI thread goes on
  else
    request_app_vsync(&ui, ui.cpu);
}

void DisplayPipeline::binder_work_done(Task& server) { request_app_vsync(&server, server.cpu); }

// A message for the UI thread's Looper (from outside the model: no waker)
// that makes it ask for vsync once it gets to it. It wakes the thread only
// in its Looper's epoll wait: not in postAndWait() nor in a runtime-PM
// D sleep, which the message cannot end.
void DisplayPipeline::ui_asks_for_vsync() {
  ui_wants_vsync_ = true;
  if (ui_body_->in_looper()) wake_from(*ui_task_, nullptr, ui_task_->cpu);
}

// The request that opens each animation window, at the window's start
// (a window already open at construction at once): the touch reaches the
// UI thread (InputDispatcher, not modelled: the wake-up has no waker),
// which asks for vsync as doFrame() does.
void DisplayPipeline::arm_window_request() {
  const int64_t cycle = (params_.animation + params_.gap).count();
  if (params_.cycles >= 0 && next_window_ >= 2 * static_cast<int64_t>(params_.cycles)) return;
  const Time start = params_.start_delay + Time::ns(next_window_ * cycle);
  window_request_timer_.arm(std::max(start, k_.now()));
}

// With vsync_threads a second vsync never reaches the UI thread before it
// took the first: each dispatch needs a request, which the UI thread makes
// only once it took the vsync before. Here and in sf_deliver() and the
// UI thread's hand-over to RenderThread, the thread is woken only where it
// waits for it, in its Looper: a vsync cannot end postAndWait(),
// dequeueBuffer() or a runtime-PM D sleep (the thread takes it when it
// gets back to its Looper).
void DisplayPipeline::app_deliver(const AppVsync& v, const Task* waker, int cpu) {
  if (ui_pending_) return;
  ui_pending_ = true;
  ui_pending_k_ = v.k;
  ui_pending_first_ = v.first;
  if (ui_body_->in_looper()) wake_from(*ui_task_, waker, cpu);
}

void DisplayPipeline::sf_deliver(const Task* waker, int cpu) {
  sf_dispatching_ = false;
  if (sf_pending_) return;
  sf_pending_ = true;
  sf_pending_k_ = sf_dispatch_k_;
  if (sf_body_->in_looper()) wake_from(*sf_task_, waker, cpu);
}

// ---------------------------------------------------------------- pipeline

DisplayPipeline::DisplayPipeline(Kernel& k, std::string name, const DisplayParams& params, Gpu* gpu, PmRuntime* pm,
                                 uint64_t seed, const DisplayLinks& links)
    : k_(k),
      name_(std::move(name)),
      params_(params),
      gpu_(gpu),
      pm_(pm),
      wqs_(links.wqs),
      submit_wq_(links.submit_wq),
      request_binder_(links.request_binder),
      inject_binder_(links.inject_binder),
      commit_wq_(links.commit_wq),
      commit_worker_(links.commit_worker),
      frame_event_worker_(links.frame_event_worker),
      encoder_wq_(links.encoder_wq),
      vblank_wq_(links.vblank_wq),
      rng_(seed, "display." + name_),
      idle_rng_(seed, "display." + name_ + ".idle_frames") {
  auto bad = [&](const std::string& why) { throw ModelError(fmt::format("display '{}': {}", name_, why)); };
  if (request_binder_ && !params_.vsync_threads) bad("a vsync request binder process needs vsync_threads");
  request_call_.op = CallSpec::Op::kBinderCall;
  request_call_.target = params_.vsync_request_binder;
  request_call_.cost = params_.vsync_request_cost;
  request_call_.oneway = true;
  if (!(params_.refresh_hz > 0) || params_.refresh_hz > 1000) bad("refresh_hz must be in (0, 1000]");
  period_ = std::llround(1e9 / params_.refresh_hz);
  // WorkDuration::constructOffsets(): unset durations.
  app_duration_ = params_.app_duration > Time::zero() ? params_.app_duration : Time::ns(period_);
  sf_duration_ = params_.sf_duration > Time::zero() ? params_.sf_duration : Time::ns(period_) - Time::ms(1);
  if (params_.app_duration < Time::zero() || params_.sf_duration < Time::zero()) bad("durations must be >= 0");
  if (sf_duration_ <= Time::zero()) bad("sf_duration must be > 0");
  if (params_.animation < Time::ns(period_))
    bad(fmt::format("animation ({}) must be at least one vsync period ({})", format_time(params_.animation),
                    format_time(Time::ns(period_))));
  if (params_.gap < Time::zero()) bad("gap must be >= 0");
  if (params_.start_delay < Time::zero()) bad("start_delay must be >= 0");
  if (params_.cycles < -1) bad("cycles must be >= 0, or -1 (forever)");
  if (params_.buffers < 2 || params_.buffers > 64) bad("buffers must be in 2..64");
  if (!params_.gpu.empty() && !gpu_) bad(fmt::format("gpu '{}' not given", params_.gpu));
  if (!params_.gpu_rpm.empty() && !gpu_) bad("gpu_rpm needs a gpu");
  if (!params_.gpu_submit_wq.empty() && (!gpu_ || !wqs_ || !submit_wq_))
    bad(fmt::format("gpu_submit_wq '{}' needs a gpu and that workqueue", params_.gpu_submit_wq));
  if (!params_.commit_wq.empty() && (!wqs_ || !commit_wq_))
    bad(fmt::format("commit_wq '{}' needs that workqueue", params_.commit_wq));
  if (!params_.commit_worker.empty() && !commit_worker_)
    bad(fmt::format("commit_worker '{}' needs that kthread_worker", params_.commit_worker));
  if (commit_wq_ && commit_worker_) bad("give commit_wq or commit_worker, not both");
  if (params_.commit_ioctl_cost < Time::zero()) bad("commit_ioctl_cost must be >= 0");
  if (params_.display_irq_cpu < 0 || params_.display_irq_cpu >= k_.nr_cpus())
    bad(fmt::format("display_irq_cpu {} does not exist", params_.display_irq_cpu));
  if (params_.run_job_cost < Time::zero()) bad("run_job_cost must be >= 0");
  if (params_.free_job_cost < Time::zero()) bad("free_job_cost must be >= 0");
  auto check_thread = [&](const DisplayThreadParams& t, const char* what) {
    if (t.comm.empty() || t.comm.find_first_of(" \t\n") != std::string::npos)
      bad(fmt::format("{}: comm must be non-empty, without blanks", what));
    const bool rt = is_rt_policy(t.policy);
    if (rt && (t.rt_priority < 1 || t.rt_priority > 99)) bad(fmt::format("{}: priority must be in 1..99", what));
    if (!rt && (t.nice < -20 || t.nice > 19)) bad(fmt::format("{}: nice must be in -20..19", what));
  };
  check_thread(params_.ui_thread, "ui_thread");
  check_thread(params_.render_thread, "render_thread");
  check_thread(params_.sf_thread, "sf_thread");
  if (params_.vsync_threads) {
    check_thread(params_.timer_dispatch_thread, "timer_dispatch_thread");
    check_thread(params_.app_event_thread, "app_event_thread");
  }
  if (params_.timer_dispatch_cost < Time::zero() || params_.app_event_cost < Time::zero())
    bad("vsync thread costs must be >= 0");
  if (params_.input_threads) {
    if (!params_.vsync_threads) bad("input_threads needs vsync_threads");
    if (!(params_.touch_report_hz > 0) || params_.touch_report_hz > 10000) bad("touch_report_hz must be in (0, 10000]");
    check_thread(params_.touch_irq_thread, "touch_irq_thread");
    check_thread(params_.input_reader_thread, "input_reader_thread");
    check_thread(params_.input_dispatcher_thread, "input_dispatcher_thread");
    for (Time c : {params_.touch_irq_cost, params_.input_reader_cost, params_.input_dispatcher_cost,
                   params_.input_finish_cost, params_.ui_input_cost, params_.ui_down_cost, params_.ui_up_cost,
                   params_.input_resample_latency})
      if (c < Time::zero()) bad("input costs must be >= 0");
    if (params_.touch_irq_cpu < 0 || params_.touch_irq_cpu >= k_.nr_cpus())
      bad(fmt::format("touch_irq_cpu {} does not exist", params_.touch_irq_cpu));
    report_period_ = std::llround(1e9 / params_.touch_report_hz);
  }
  const bool injected = params_.input_source == DisplayParams::InputSource::kInjected;
  if (injected) {
    if (!params_.input_threads) bad("input_source: injected needs input_threads");
    check_thread(params_.injector_thread, "injector_thread");
    if (params_.inject_step_delay < Time::zero() || params_.inject_cost < Time::zero() ||
        params_.inject_server_cost < Time::zero() || params_.inject_duration < Time::zero())
      bad("injection costs and inject_step_delay must be >= 0");
    // Kernel input handlers see only the touch controller's events.
    if (!params_.touch_rpm.empty()) bad("touch_rpm needs real touches: injected events never reach the kernel");
    inject_call_.op = CallSpec::Op::kBinderCall;
    inject_call_.target = params_.inject_binder;
    inject_call_.cost = params_.inject_server_cost;
    if (params_.inject_sync_cost < Time::zero() || params_.sf_input_sync_cost < Time::zero())
      bad("input sync costs must be >= 0");
    input_sync_call_.op = CallSpec::Op::kBinderCall;
    input_sync_call_.target = params_.inject_binder;
    input_sync_call_.cost = params_.inject_sync_cost;
  }
  if (inject_binder_ && !injected) bad("an injection binder process needs input_source: injected");
  gpu_rpm_ = resolve_rpm("gpu_rpm", params_.gpu_rpm);
  ui_rpm_ = resolve_rpm("ui_rpm", params_.ui_rpm);
  display_rpm_ = resolve_rpm("display_rpm", params_.display_rpm);
  touch_rpm_ = resolve_rpm("touch_rpm", params_.touch_rpm);
  if (touch_rpm_ && (params_.touch_irq_cpu < 0 || params_.touch_irq_cpu >= k_.nr_cpus()))
    throw ModelError(fmt::format("display '{}': touch_irq_cpu {} does not exist", name_, params_.touch_irq_cpu));

  // Frames in flight: one in the UI thread, one handed over, one rendering,
  // the queued buffers, the latched ones waiting for their vsync.
  const size_t pool = static_cast<size_t>(params_.buffers) + 8;
  frames_.resize(pool);
  free_frames_.reserve(pool);
  for (size_t i = pool; i-- > 0;) free_frames_.push_back(static_cast<int>(i));
  queue_.reserve(pool);
  submit_queue_.reserve(pool);
  motion_times_.reserve(256);  // a few frames of reports at up to 10 kHz grow it, once
  presenting_.reserve(pool);

  ui_body_ = std::make_unique<UiBody>(*this);
  rt_body_ = std::make_unique<RenderBody>(*this);
  sf_body_ = std::make_unique<SfBody>(*this);
  if (ui_rpm_) ui_body_->rpm = std::make_unique<RpmCall>(*pm_);
  if (gpu_rpm_ && !submit_wq_) rt_body_->rpm = std::make_unique<RpmCall>(*pm_);
  if (submit_wq_) {
    submit_fn_ = std::make_unique<SubmitFn>(*this);
    if (gpu_rpm_) submit_fn_->rpm = std::make_unique<RpmCall>(*pm_);
    submit_work_.fn = submit_fn_.get();
    free_fn_ = std::make_unique<FreeJobFn>(*this);
    free_work_.fn = free_fn_.get();
  }
  if (nonblocking_commit()) {
    commits_.resize(kCommitSlots);
    for (Commit& c : commits_) {
      c.fn = std::make_unique<CommitFn>(*this, c);
      if (display_rpm_) c.fn->rpm = std::make_unique<RpmCall>(*pm_);
      c.work.fn = c.fn.get();
    }
  } else if (display_rpm_) {
    sf_body_->rpm = std::make_unique<RpmCall>(*pm_);
  }
  if (params_.crtc_holds_display_rpm && !display_rpm_) bad("crtc_holds_display_rpm needs display_rpm");
  if (params_.crtc_holds_display_rpm && display_rpm_) {
    // dpu_crtc_enable()'s get_sync, made by the modeset commit that lit
    // the screen before the run: the device is active, the get only counts.
    if (display_rpm_->status() != RpmStatus::kActive)
      bad(fmt::format("crtc_holds_display_rpm needs runtime PM device '{}' to start active (start_active: true): "
                      "the screen is on when the run starts",
                      display_rpm_->name()));
    pm_->call_nosleep(*display_rpm_, RpmApi::kGet, QueueContext{nullptr, params_.display_irq_cpu});
  }
  if (params_.idle_pc_delay > Time::zero()) {
    if (!commit_worker_ || !display_rpm_) bad("idle_pc_delay needs commit_worker and display_rpm");
    if (params_.crtc_holds_display_rpm) bad("idle_pc_delay needs crtc_holds_display_rpm: false");
    if (display_rpm_->status() != RpmStatus::kActive)
      bad(fmt::format("idle_pc_delay needs runtime PM device '{}' to start active (start_active: true): the "
                      "screen is on when the run starts",
                      display_rpm_->name()));
    // The screen was lit and has just shown a frame: the encoder is ON
    // with its reference, its off work armed.
    const QueueContext irq{nullptr, params_.display_irq_cpu};
    pm_->call_nosleep(*display_rpm_, RpmApi::kGet, irq);
    encoder_on_ = true;
    idle_off_fn_ = std::make_unique<IdleOffFn>(*this);
    idle_off_work_.fn = idle_off_fn_.get();
    commit_worker_->queue_delayed_work(idle_off_work_, irq, params_.idle_pc_delay, nullptr);
  } else if (params_.idle_pc_cost > Time::zero()) {
    bad("idle_pc_cost needs idle_pc_delay");
  }
  if (frame_event_worker_) {
    if (!nonblocking_commit()) bad("frame_event_worker needs commit_wq or commit_worker");
    if (params_.frame_event_cost < Time::zero()) bad("frame_event_cost must be >= 0");
    frame_event_fn_ = std::make_unique<FrameEventFn>(*this);
    constexpr size_t kFrameEvents = 4;  // DPU_CRTC_FRAME_EVENT_SIZE (dpu_crtc.h)
    frame_events_.reserve(kFrameEvents);
    for (size_t i = 0; i < kFrameEvents; ++i) {
      frame_events_.emplace_back("dpu_crtc_frame_event_work");
      frame_events_.back().fn = frame_event_fn_.get();
    }
  }
  if (encoder_wq_) {
    if (!commit_wq_) bad("encoder_wq needs commit_wq (mainline DPU)");
    if (!frame_event_worker_) bad("encoder_wq needs frame_event_worker (its frame events retire the pending frames)");
    if (params_.encoder_idle_timeout <= Time::zero() || params_.encoder_off_cost < Time::zero())
      bad("encoder_idle_timeout must be > 0 and encoder_off_cost >= 0");
    encoder_off_fn_ = std::make_unique<EncoderOffFn>(*this);
    encoder_off_work_.fn = encoder_off_fn_.get();  // IDLE until the first kickoff
  }
  if (vblank_wq_) {
    if (!commit_wq_) bad("vblank_wq needs commit_wq (mainline drm/msm's commit_tail() holds the vblank reference)");
    if (params_.vblank_work_cost < Time::zero()) bad("vblank_work_cost must be >= 0");
    vblank_ctrl_fn_ = std::make_unique<VblankCtrlFn>(*this);  // the same work either way
    // At most one switch per vsync or commit: a few items cover any
    // backlog but a starved "msm" kworker's.
    for (int i = 0; i < 4; ++i) vblank_works_.emplace_back("vblank_ctrl_worker").fn = vblank_ctrl_fn_.get();
  }
  if (params_.encoder_vblank_irq && !encoder_wq_ && !vblank_wq_)
    bad("encoder_vblank_irq needs encoder_wq or vblank_wq (the encoder's interrupt switches)");
  if (params_.hw_vsync_resync) {
    if (!params_.vsync_threads) bad("hw_vsync_resync needs vsync_threads (the resync comes with the app's vsync requests)");
    if (params_.hw_vsync_samples < 1) bad("hw_vsync_samples must be >= 1");
    if (params_.hw_vsync_ignore_delay < Time::zero() || params_.hw_vsync_event_cost < Time::zero() ||
        params_.hw_vsync_callback_cost < Time::zero() || params_.hw_vsync_toggle_cost < Time::zero())
      bad("hw_vsync_ignore_delay and the hw_vsync costs must be >= 0");
    hw_vsync_binder_ = links.hw_vsync_binder;
    hw_vsync_call_.op = CallSpec::Op::kBinderCall;
    hw_vsync_call_.target = params_.hw_vsync_binder;
    hw_vsync_call_.cost = params_.hw_vsync_callback_cost;
    hw_vsync_call_.oneway = true;  // IComposerCallback onVsync: oneway (HIDL 2.4 and AIDL)
    predictor_trained_ = params_.hw_vsync_predictor_trained;
    hw_vsync_hook_ = std::make_unique<HwVsyncHook>(*this);
    hwc_body_ = std::make_unique<HwcEventBody>(*this);
    unfired_fences_.reserve(20);
    hw_vsync_in_flight_.reserve(8);  // a few events ahead of a starved pool thread
  } else if (links.hw_vsync_binder) {
    bad("hw_vsync_binder needs hw_vsync_resync");
  }
  auto make = [&](const DisplayThreadParams& t, TaskBody* body) -> Task* {
    Task& p = k_.create_task(t.comm, t.comm, t.policy, t.nice, t.rt_priority, t.cpus, false);
    if (!t.cgroup.empty()) k_.sched_move_task(p, k_.cpu_cgroup_index(t.cgroup));
    k_.set_body(p, body);
    k_.start_task_at(p, k_.now());
    return &p;
  };
  ui_task_ = make(params_.ui_thread, ui_body_.get());
  rt_task_ = make(params_.render_thread, rt_body_.get());
  sf_task_ = make(params_.sf_thread, sf_body_.get());
  if (params_.vsync_threads) {
    td_body_ = std::make_unique<VsyncBody>(*this, VsyncBody::Role::kTimerDispatch);
    et_body_ = std::make_unique<VsyncBody>(*this, VsyncBody::Role::kAppEventThread);
    td_task_ = make(params_.timer_dispatch_thread, td_body_.get());
    et_task_ = make(params_.app_event_thread, et_body_.get());
  }
  if (hwc_body_) hwc_task_ = make(params_.hw_vsync_thread, hwc_body_.get());
  if (params_.input_threads) {
    irq_body_ = std::make_unique<InputBody>(*this, InputRole::kIrqThread);
    reader_body_ = std::make_unique<InputBody>(*this, InputRole::kReader);
    dispatcher_body_ = std::make_unique<InputBody>(*this, InputRole::kDispatcher);
    if (!injected) {
      // The handler thread follows its interrupt's CPU (irq_thread_check_affinity()).
      DisplayThreadParams irq = params_.touch_irq_thread;
      if (irq.cpus.empty()) irq.cpus = {params_.touch_irq_cpu};
      irq_task_ = make(irq, irq_body_.get());
      reader_task_ = make(params_.input_reader_thread, reader_body_.get());
    }
    dispatcher_task_ = make(params_.input_dispatcher_thread, dispatcher_body_.get());
  }

  EventQueue& q = k_.sim().queue();
  app_timer_ = Timer(q, this, kTagApp, kTierTimer);
  sf_timer_ = Timer(q, this, kTagSf, kTierTimer);
  present_timer_ = Timer(q, this, kTagPresent, kTierTimer);
  flip_timer_ = Timer(q, this, kTagFlip, kTierTimer);
  vblank_timer_ = Timer(q, this, kTagVblank, kTierTimer);
  hwc_vblank_timer_ = Timer(q, this, kTagHwcVblank, kTierTimer);
  vsync_irq_timer_ = Timer(q, this, kTagVsyncIrq, kTierTimer);
  sf_earliest_timer_ = Timer(q, this, kTagSfEarliest, kTierTimer);
  idle_frame_timer_ = Timer(q, this, kTagIdleFrame, kTierTimer);
  touch_timer_ = Timer(q, this, kTagTouch, kTierTimer);
  window_request_timer_ = Timer(q, this, kTagWindowRequest, kTierTimer);
  dispatch_timer_ = Timer(q, this, kTagDispatch, kTierTimer);
  touch_report_timer_ = Timer(q, this, kTagTouchReport, kTierTimer);
  inject_timer_ = Timer(q, this, kTagInject, kTierTimer);
  hwui_adpf_.stale_timer = Timer(q, this, kTagAdpfStale, kTierTimer);
  sf_adpf_.stale_timer = Timer(q, this, kTagSfAdpfStale, kTierTimer);
  update_imminent_ = UpdateImminentThrottle(params_.update_imminent_timeout);
  if (params_.sf_adpf) {
    // SurfaceFlinger's session exists from boot (PowerAdvisor's
    // kDefaultTarget, 16 ms); the model starts it with the run, at
    // UclampMin_Init, as the run's first scheduleCommit() would wake a
    // session gone stale since boot.
    sf_adpf_.session = std::make_unique<AdpfSession>(*params_.sf_adpf, Time::ms(16), [this](uint32_t v) {
      k_.sched_setattr_uclamp(*sf_task_, v, std::nullopt);
    });
    sf_adpf_.session->start(k_.now());
    sf_adpf_.rearm();
  }
  if (injected) {
    // The test's injections open each window through InputDispatcher.
    injector_body_ = std::make_unique<InjectorBody>(*this);
    inject_hook_ = std::make_unique<InjectHook>(*this);
    input_sync_hook_ = std::make_unique<InputSyncHook>(*this);
    injector_task_ = make(params_.injector_thread, injector_body_.get());
  } else if (irq_task_) {
    // The touch reports open each window through the input threads.
    arm_touch_report(k_.now());
  } else if (et_task_) {
    // The first window not yet over.
    const int64_t cycle = (params_.animation + params_.gap).count();
    if (k_.now() >= params_.start_delay + params_.animation)
      next_window_ = (k_.now() - params_.start_delay - params_.animation).count() / cycle + 1;
    arm_window_request();
  } else {
    arm_app(0);
  }
  if (touch_rpm_) arm_touch();
  if (params_.idle_frame_interval) idle_frame_timer_.arm(k_.now() + params_.idle_frame_interval->sample(idle_rng_));
}

DisplayPipeline::~DisplayPipeline() = default;

RpmDevice* DisplayPipeline::resolve_rpm(const std::string& what, const std::string& name) {
  if (name.empty()) return nullptr;
  if (!pm_)
    throw ModelError(
        fmt::format("display '{}': {} '{}' but the scenario has no runtime PM devices", name_, what, name));
  if (RpmDevice* d = pm_->device(name)) return d;
  std::string valid;
  for (const std::string& n : pm_->device_names()) valid += (valid.empty() ? "" : ", ") + n;
  throw ModelError(
      fmt::format("display '{}': {} '{}' is not a runtime PM device (valid: {})", name_, what, name, valid));
}

int64_t DisplayPipeline::window_of(Time t) const {
  if (t < params_.start_delay) return -1;
  const int64_t cycle = (params_.animation + params_.gap).count();
  const int64_t rel = (t - params_.start_delay).count();
  const int64_t i = rel / cycle;
  if (params_.cycles >= 0 && i >= 2 * static_cast<int64_t>(params_.cycles)) return -1;
  return rel % cycle < params_.animation.count() ? i : -1;
}

bool DisplayPipeline::animating(Time t) const { return window_of(t) >= 0; }

// A touch-down handled and its lift not yet: an injected lift is an event;
// a finger's is the end of the window it touched down in (the model sends
// no UP for it).
bool DisplayPipeline::drag_held(Time t) const {
  if (params_.drag_draws_every_frame) return false;  // the app redraws every vsync anyway
  return ui_finger_down_ && (injector_task_ != nullptr || (ui_finger_window_ >= 0 && window_of(t) == ui_finger_window_));
}

// The first app vsync k >= min_k whose callback time is >= t and inside an
// animation window; -1 when the schedule has ended.
int64_t DisplayPipeline::next_app_target(Time t, int64_t min_k) const {
  const int64_t offset = (app_duration_ + sf_duration_).count();
  const int64_t cycle = (params_.animation + params_.gap).count();
  t = std::max(t, params_.start_delay);
  int64_t k = std::max(min_k, ceil_div(t.count() + offset, period_));
  for (;;) {
    const Time w = app_wakeup(k);
    const int64_t rel = (w - params_.start_delay).count();
    const int64_t i = rel / cycle;
    if (params_.cycles >= 0 && i >= 2 * static_cast<int64_t>(params_.cycles)) return -1;
    if (rel % cycle < params_.animation.count()) return k;
    // Past this window: the first callback of the next one (animation is at
    // least a period long, so every window holds one).
    k = std::max(k + 1, ceil_div(params_.start_delay.count() + (i + 1) * cycle + offset, period_));
  }
}

// Window i spans [start_delay + i * (animation + gap), + animation).
void DisplayPipeline::arm_touch() {
  const Time now = k_.now();
  const int64_t cycle = (params_.animation + params_.gap).count();
  int64_t i = now < params_.start_delay ? 0 : ceil_div((now - params_.start_delay).count(), cycle);
  if (touch_held_) i = window_of(now) >= 0 ? window_of(now) : i - 1;  // release at the end of the held window
  if (params_.cycles >= 0 && i >= 2 * static_cast<int64_t>(params_.cycles)) return;
  const Time start = params_.start_delay + Time::ns(i * cycle);
  touch_timer_.arm(touch_held_ ? start + params_.animation : start);
}

void DisplayPipeline::arm_app(int64_t min_k) {
  app_target_ = next_app_target(k_.now(), min_k);
  // The simple model: SurfaceFlinger's VSyncDispatch timers are timerfd
  // hrtimers, queued on the UI thread's CPU (its last CPU);
  // tick_nohz_get_sleep_length() on that CPU sees them, and their expiry
  // wakes from there. Touch and hardware vsync are interrupts: plain
  // events.
  if (app_target_ >= 0) arm_app_at(app_target_);
}

void DisplayPipeline::arm_app_at(int64_t k) {
  app_target_ = k;
  app_timer_cpu_ = ui_task_->cpu;
  k_.hrtimer_start(app_timer_, app_wakeup(k), app_timer_cpu_);
}

// MessageQueue::scheduleFrame(): SF's callback for the next SF wake-up
// (one callback at a time; none while one is pending).
void DisplayPipeline::request_sf(int caller_cpu, bool schedule_commit) {
  if (schedule_commit && (params_.adpf || params_.sf_adpf)) notify_display_update_imminent();
  if (sf_timer_.armed() || sf_cb_.armed || sf_pending_ || sf_dispatching_) return;
  const int64_t k = std::max(ceil_div((k_.now() + sf_duration_).count(), period_), sf_last_target_ + 1);
  sf_target_ = k;
  if (td_task_) {
    schedule_callback(sf_cb_, sf_wakeup(k), caller_cpu);
    return;
  }
  sf_timer_cpu_ = sf_task_->cpu;
  k_.hrtimer_start(sf_timer_, sf_wakeup(k), sf_timer_cpu_);
}

int DisplayPipeline::alloc_frame() {
  if (free_frames_.empty())
    throw ModelError(fmt::format("display '{}': more than {} frames in flight", name_, frames_.size()));
  const int i = free_frames_.back();
  free_frames_.pop_back();
  Frame& f = frames_[static_cast<size_t>(i)];
  const uint32_t gen = f.gen + 1;
  f = Frame{};
  f.gen = gen;
  return i;
}

void DisplayPipeline::free_frame(int i) {
  frames_[static_cast<size_t>(i)].stage = Frame::Stage::kFree;
  free_frames_.push_back(i);
}

void DisplayPipeline::wake(Task& p, const Task* waker) { wake_from(p, waker, waker ? waker->cpu : p.cpu); }
void DisplayPipeline::wake_from(Task& p, const Task* waker, int cpu) { k_.try_to_wake_up(p, waker, cpu); }

// drm_sched_run_job_queue(): the run_job work on the submit workqueue.
void DisplayPipeline::queue_run_job(QueueContext ctx) { wqs_->queue_work(*submit_wq_, submit_work_, ctx); }

void DisplayPipeline::emit(const Frame& f, bool dropped) {
  const Time app_end = std::max(f.queued, f.gpu_done);
  FrameEvent e;
  e.layer = params_.layer;
  e.vsync_id = static_cast<uint64_t>(f.k);
  e.vsync = f.vsync;
  e.app_end = app_end;
  e.app_deadline = f.app_deadline;
  e.expected_present = f.expected_present;
  e.dropped = dropped;
  if (!dropped) {
    e.present = f.present;
    e.sf_end = f.sf_end;
    e.sf_deadline = f.sf_deadline;
    e.sf_missed = f.sf_end > f.sf_deadline;
    classify_jank(f, app_end, e);
  }
  if (dropped) ++dropped_;
  else ++presented_;
  if (e.app_missed) ++app_missed_;
  if (e.sf_missed) ++sf_missed_;
  SL_DEBUG("{:.6f} display {}: frame {} {} (app end {:.6f} deadline {:.6f}{}{})", k_.now().to_s(), name_, e.vsync_id,
           dropped ? "dropped" : "presented", app_end.to_s(), f.app_deadline.to_s(), e.app_missed ? ", app missed" : "",
           e.sf_missed ? ", sf missed" : "");
  for (auto* o : k_.observers()) o->on_frame(k_.now(), e);
}

// SurfaceFrame::classifyJankLocked() (FrameTimeline.cpp, Android 14) for a
// presented frame; a dropped one is JankType::Dropped, none of these.
// Present within presentThreshold (2 ms) of the expected present: no jank,
// however late the app finished. Presented late: if the layer's previous
// buffer was latched at or after this frame's deadline, the queue was
// stuffed (BufferStuffing) and the deadline moves to one period after that
// latch. A late finish is App Deadline Missed; an on-time one takes the
// display frame's jank (the model's sf_missed, SurfaceFlinger's own
// deadline), else SurfaceFlinger Scheduling / Prediction Error, unless the
// frame was only stuffed. Janky counts the reasons TimeStats counts
// (kValidJankyReason): not BufferStuffing, Dropped or Unknown. Simplified:
// the display frame's own classification is sf_missed (SF's commit ended
// after its expected present; the model's DisplayHAL is never late).
void DisplayPipeline::classify_jank(const Frame& f, Time app_end, FrameEvent& e) const {
  constexpr Time kPresentThreshold = Time::ms(2);  // JankClassificationThresholds
  const Time present_delta = f.present - f.expected_present;
  bool late_finish = app_end > f.app_deadline;  // deadlineThreshold 0
  if (present_delta <= kPresentThreshold && present_delta >= -kPresentThreshold) return;  // OnTimePresent
  if (present_delta < Time::zero()) {
    // EarlyPresent: SurfaceFlinger Scheduling or Prediction Error when the
    // app finished in time, Unknown (not janky) when it did not.
    e.janky = !late_finish;
    return;
  }
  if (f.last_latch > Time::zero() && f.app_deadline <= f.last_latch) {
    e.buffer_stuffing = true;
    late_finish = app_end >= f.last_latch + period();
  }
  e.app_missed = late_finish;
  e.janky = late_finish || e.sf_missed || !e.buffer_stuffing;
}

uint64_t DisplayPipeline::gpu_cookie(int frame) const {
  return static_cast<uint64_t>(frame) | (static_cast<uint64_t>(frames_[static_cast<size_t>(frame)].gen) << 16);
}

void DisplayPipeline::gpu_job_done(uint64_t cookie, QueueContext ctx) {
  const int i = static_cast<int>(cookie & 0xffff);
  Frame& f = frames_[static_cast<size_t>(i)];
  if (f.gen != static_cast<uint32_t>(cookie >> 16) || !f.gpu_pending)
    throw ModelError(fmt::format("display '{}': stale GPU completion", name_));
  f.gpu_pending = false;
  f.gpu_done = k_.now();
  // drm_sched_job_done(): the finished fence signalled, free_job queued
  // (__drm_sched_run_free_queue()).
  if (submit_wq_) {
    ++jobs_to_free_;
    wqs_->queue_work(*submit_wq_, free_work_, ctx);
  }
}

// The driver retires the frame's job: it drops the runtime PM reference
// RenderThread took (drm/msm retire_submit(); panfrost_job_handle_done()).
void DisplayPipeline::gpu_job_retired(uint64_t /*cookie*/, QueueContext ctx) {
  if (gpu_rpm_) pm_->call_nosleep(*gpu_rpm_, RpmApi::kPutAutosuspend, ctx);
}

// HWUI (DrawFrameTask::run(), Android 13): after CanvasContext::draw()
// (queueBuffer included) the frame's actual work duration, from doFrame()'s
// start less this frame's dequeueBuffer() wait, goes to the hint session,
// whose target is the app's work duration (debug.sf.late.app.duration: a
// frame's deadline less its intended vsync) x targetCpuTimePercentage. The
// session starts at the first frame (its threads get UclampMin_Init).
// Simplification: HWUI also subtracts min(sync delay, the previous
// dequeue wait), which the model leaves in.
void DisplayPipeline::adpf_report(const Frame& f) {
  const Time now = k_.now();
  AdpfSession* s = hwui_adpf_.session.get();
  if (!s) {
    const Time target = Time::ns(app_duration_.count() * params_.adpf->target_cpu_percent / 100);
    hwui_adpf_.session = std::make_unique<AdpfSession>(*params_.adpf, target, [this](uint32_t v) {
      k_.sched_setattr_uclamp(*ui_task_, v, std::nullopt);
      k_.sched_setattr_uclamp(*rt_task_, v, std::nullopt);
    });
    s = hwui_adpf_.session.get();
    s->start(now);
    hwui_adpf_.rearm();
  }
  const Time actual = now - f.ui_start - rt_dequeue_wait_;
  if (!s->report(actual, now)) return;
  hwui_adpf_.rearm();
  SL_DEBUG("{:.6f} adpf {}: frame work {:.1f} us against the target {:.1f} us -> uclamp_min {} for {} and {}",
           now.to_s(), params_.layer, actual.count() / 1e3, s->target().count() / 1e3, s->uclamp_min(),
           ui_task_->comm, rt_task_->comm);
}

// SurfaceFlinger's own session (Android 13 QPR1+; models/devices/adpf.h):
// started with the pipeline (the phone: at boot, target kDefaultTarget
// 16 ms), the target set to the vsync period at each commit
// (setTargetWorkDuration(), sent when it changed), and after present()
// the estimate PowerAdvisor::estimateWorkDuration() makes of a frame the
// composer composed alone (no client composition, so no GPU term), plus
// kTargetSafetyMargin (1 ms):
//   flinger = present end - wake - idle (+ the previous frame's work after
//             present: none in the model)
//   total   = frameDelay + present end - idle - wake, frameDelay = sf_duration
//             - (expected present - wake): the present end - idle measured
//             from SF's ideal wake-up
//   actual  = max(flinger, total x vsync period / sf_duration) + 1 ms
// where idle is SF's sleep in present (to the earliest present time, and
// for the previous commit). Simplified: PowerAdvisor estimates that idle
// from timestamps (the sleep to the earliest present time only if the
// previous present fence had signalled; the fence wait from 150 us into
// present to the fence's signal time); the model counts the sleeps
// themselves, so a nonblocking commit's wait counts about 150 us more
// idle, and an SDE commit's wait past the previous fence (until its
// commit_destroy()) counts as idle where the phone counts it as work.
// One sf_duration scales `total` (the phone switches to the early
// offsets, 16.6 ms on gs101, for early-wakeup transactions and GPU
// composition). JetNews's display commits in SF's thread (no sleep in
// present): idle is 0 there.
void DisplayPipeline::sf_adpf_report(Time wake, Time idle, Time expected_present) {
  const Time now = k_.now();
  AdpfSession& s = *sf_adpf_.session;
  s.set_target(Time::ns(period_));
  const Time flinger = now - wake - idle;
  const Time total = now - idle - (expected_present - sf_duration_);
  const Time scaled = Time::ns(total.count() * period_ / sf_duration_.count());
  const Time actual = std::max(flinger, scaled) + Time::ms(1);
  if (!s.report(actual, now)) return;
  sf_adpf_.rearm();
  SL_DEBUG("{:.6f} adpf surfaceflinger: frame work {:.1f} us (+ 1 ms margin) against the vsync period {:.1f} us -> "
           "uclamp_min {} for {}",
           now.to_s(), (actual - Time::ms(1)).count() / 1e3, s.target().count() / 1e3, s.uclamp_min(), sf_task_->comm);
}

// PowerAdvisor::notifyDisplayUpdateImminent(): sent when no
// scheduleCommit() came for the timeout (its UpdateImminentTimer); the
// power HAL's wakeSessions() then wakes every session.
void DisplayPipeline::notify_display_update_imminent() {
  const Time now = k_.now();
  if (!update_imminent_.schedule_commit(now)) return;
  for (AdpfHook* h : {&hwui_adpf_, &sf_adpf_}) {
    if (!h->session) continue;
    h->session->wake_imminent(now);
    h->rearm();
  }
}

void DisplayPipeline::on_event(uint64_t tag) {
  switch (tag) {
    case kTagAdpfStale:
    case kTagSfAdpfStale:
      // The power HAL's stale timer (its own looper; no CPU time modelled).
      (tag == kTagAdpfStale ? hwui_adpf_ : sf_adpf_).session->stale_check(k_.now());
      break;
    case kTagDispatch:
      // vsync_threads: VSyncDispatchTimerQueue's timerfd expires on the CPU
      // it was queued on and wakes TimerDispatch, which runs the callbacks
      // that are due.
      dispatch_expired_ = true;
      k_.hrtimer_interrupt(dispatch_cpu_);  // the CPU's other soft-expired timers run too
      wake_from(*td_task_, nullptr, dispatch_cpu_);
      break;
    case kTagApp: {
      // The simple model: the app's vsync callback (DisplayEventReceiver ->
      // Choreographer) wakes the UI thread directly (as from its own CPU)
      // and the next callback of the schedule is armed.
      k_.hrtimer_interrupt(app_timer_cpu_);  // the CPU's other soft-expired timers run too
      const int64_t w = window_of(k_.now());
      const AppVsync v{true, app_target_, w >= 0 && w != last_window_, w};  // an idle redraw is no window's first
      ++app_vsyncs_;
      last_window_ = w;
      app_deliver(v, nullptr, ui_task_->cpu);
      arm_app(v.k + 1);  // on the woken thread's CPU
      break;
    }
    case kTagSf:
      // The simple model: MessageQueue::vsyncCallback() ->
      // Handler::dispatchFrame() (dropped while the previous frame message
      // is still pending) wakes SF directly.
      k_.hrtimer_interrupt(sf_timer_cpu_);  // the CPU's other soft-expired timers run too
      ++sf_wakeups_;
      sf_last_target_ = sf_target_;
      sf_dispatch_k_ = sf_target_;
      sf_deliver(nullptr, sf_task_->cpu);
      break;
    case kTagIdleFrame: {
      // A one-frame redraw between animations: Choreographer asks for the
      // next vsync (postFrameCallback), so the app callback moves earlier
      // when the next scheduled one is later; after it fires, arm_app()
      // goes back to the animation schedule.
      idle_frame_timer_.arm(k_.now() + params_.idle_frame_interval->sample(idle_rng_));
      if (animating(k_.now())) break;
      if (et_task_) {
        ui_asks_for_vsync();
        break;
      }
      const int64_t k = ceil_div((k_.now() + app_duration_ + sf_duration_).count(), period_);
      if (app_target_ < 0 || app_target_ > k) arm_app_at(k);
      break;
    }
    case kTagTouch: {
      // Touch down: the input interrupt's pm_runtime_get(); lift at the end
      // of the animation: pm_runtime_put_autosuspend(). The interrupt wakes
      // touch_irq_cpu from an idle state and is handled once it runs.
      if (k_.irq_waits_for_idle_exit(k_.rq(params_.touch_irq_cpu), touch_timer_)) break;
      const QueueContext irq{nullptr, params_.touch_irq_cpu};
      pm_->call_nosleep(*touch_rpm_, touch_held_ ? RpmApi::kPutAutosuspend : RpmApi::kGet, irq);
      touch_held_ = !touch_held_;
      arm_touch();
      break;
    }
    case kTagTouchReport:
      // A touch report: the controller's interrupt on touch_irq_cpu (once
      // out of any idle state) wakes the threaded handler
      // (irq_wake_thread(): IRQTF_RUNTHREAD).
      if (k_.irq_waits_for_idle_exit(k_.rq(params_.touch_irq_cpu), touch_report_timer_)) break;
      ++touch_reports_;
      last_report_time_ = k_.now();
      irq_thread_pending_ = true;
      // The first report of a window is the touch-down.
      irq_down_ = irq_down_ || (report_at_ - params_.start_delay).count() % (params_.animation + params_.gap).count() == 0;
      wake_from(*irq_task_, nullptr, params_.touch_irq_cpu);
      // After an idle exit longer than the report period the reports
      // missed meanwhile merge into this one (IRQTF_RUNTHREAD).
      arm_touch_report(std::max(report_at_ + Time::ns(1), k_.now()));
      break;
    case kTagInject:
      // The test's thread's sleep ends (its hrtimer, on its CPU; the
      // interrupt runs the CPU's other soft-expired timers too).
      k_.hrtimer_interrupt(injector_task_->cpu, &inject_timer_);
      wake_from(*injector_task_, nullptr, injector_task_->cpu);
      break;
    case kTagWindowRequest:
      ui_asks_for_vsync();
      ++next_window_;
      arm_window_request();
      break;
    case kTagFlip: {
      // commit_wq: the flushed commit's vsync: the display interrupt
      // (vblank: the flush latched) wakes its worker in wait_flush().
      if (k_.irq_waits_for_idle_exit(k_.rq(params_.display_irq_cpu), flip_timer_)) break;
      Commit* c = commit_in_flight(flipping_seq_);
      if (!c) break;
      c->latched = true;
      if (c->waiter) wake_from(*c->waiter, nullptr, params_.display_irq_cpu);
      // dpu_encoder_phys_vid_vblank_irq(): the commit's waiter first, then
      // the frame done callback.
      frame_done(params_.display_irq_cpu);
      break;
    }
    case kTagVsyncIrq:
      // The encoder's vblank interrupt, if still registered: it wakes its
      // CPU (the latch, the composer's event and the switch-off are its
      // handlers at their vsyncs, kTagFlip, kTagHwcVblank, kTagVblank).
      if (!vsync_irq_registered()) break;
      if (k_.irq_waits_for_idle_exit(k_.rq(params_.display_irq_cpu), vsync_irq_timer_)) break;
      ++display_irqs_;
      arm_vsync_irq();
      break;
    case kTagHwcVblank:
      // The vblank interrupt the composer's event waits for:
      // drm_handle_vblank_events() drops its reference and sends the event
      // (drm_send_event_helper(): its thread's poll() wakes).
      if (k_.irq_waits_for_idle_exit(k_.rq(params_.display_irq_cpu), hwc_vblank_timer_)) break;
      hwc_waiting_ = false;
      if (vblank_wq_) vblank_put();
      hwc_event_ = true;
      hwc_event_k_ = floor_div(k_.now().count(), period_);  // the vblank's timestamp
      wake_from(*hwc_task_, nullptr, params_.display_irq_cpu);
      break;
    case kTagVblank:
      // The vblank interrupt after the last put (vblank_put()): with no
      // reference, drm_handle_vblank() turns vblank off
      // (vblank_disable_fn() -> msm_crtc_disable_vblank()).
      if (k_.irq_waits_for_idle_exit(k_.rq(params_.display_irq_cpu), vblank_timer_)) break;
      if (vblank_refcount_ == 0 && vblank_enabled_) {
        vblank_enabled_ = false;
        queue_vblank_ctrl(false, QueueContext{nullptr, params_.display_irq_cpu});
      }
      break;
    case kTagSfEarliest:
      // SF's sleep until its earliest present time ends (its hrtimer).
      k_.hrtimer_interrupt(sf_earliest_cpu_, &sf_earliest_timer_);
      wake_from(*sf_task_, nullptr, sf_earliest_cpu_);
      break;
    case kTagPresent: {
      // The present fence: the head frame reached the screen.
      while (!presenting_.empty() && frames_[static_cast<size_t>(presenting_.front())].present <= k_.now()) {
        const int i = presenting_.take_front();
        emit(frames_[static_cast<size_t>(i)], false);
        free_frame(i);
      }
      if (!presenting_.empty()) present_timer_.arm(frames_[static_cast<size_t>(presenting_.front())].present);
      break;
    }
    default:
      break;
  }
}

}  // namespace schedlab
