// What the scheduler model reports as it runs: the tracepoints of
// include/trace/events/sched.h (sched_waking, sched_wakeup, sched_switch,
// sched_migrate_task) plus power:cpu_idle and rt-app-like period ends.
// The metrics recorder and the trace writers are observers; nothing else
// reaches into the model.
#pragma once

#include <cstdint>
#include <string_view>

#include "sim/time.h"

namespace schedlab {

struct Task;

// One step in the life of a work item (include/trace/events/workqueue.h:
// workqueue_queue_work, workqueue_activate_work, workqueue_execute_start,
// workqueue_execute_end), for workqueue work and kthread_work alike.
struct WorkItemEvent {
  enum class Phase : uint8_t {
    kQueue,     // became pending on a queue (for delayed work: when its timer fired)
    kActivate,  // left the inactive list for the pool's worklist (max_active)
    kStart,     // a worker began executing it
    kEnd,       // its function returned
  };
  Phase phase = Phase::kQueue;
  std::string_view work;       // the work item's name (ftrace prints its function)
  std::string_view workqueue;  // workqueue or kthread_worker name
  const Task* worker = nullptr;  // executing task (kStart, kEnd)
  int req_cpu = -1;            // CPU asked for by queue_work_on(), -1 for WORK_CPU_UNBOUND
  int cpu = -1;                // CPU the item was queued from (kQueue), ran on (kStart, kEnd)
  Time queued;                 // when it became pending ("CPU wait" starts here)
  Time started;                // execution start (kStart, kEnd)
  Time runnable_wait;          // the part of [queued, started) its worker was runnable but not running
  Time idle_exit_wait;         // the part of runnable_wait its CPU still ran the idle task (RunnableTracker)
  // A flush's own work (a workqueue barrier, kthread_flush_work()'s):
  // traced as the kernel traces it, not counted among the queue's items.
  bool flush_barrier = false;
};

// The context a call runs in: the running task (nullptr in an interrupt or
// a timer) and its CPU. Work is queued from one (wake-ups it causes come
// from there: a remote wake-up costs the IPI latency), and tracepoints
// fire in one.
struct QueueContext {
  const Task* task = nullptr;
  int cpu = -1;
};

// One step of a DRM GPU scheduler job (include/drm/gpu_scheduler_trace.h:
// drm_sched_job at push, drm_run_job, drm_sched_process_job at the fence).
struct DrmJobEvent {
  enum class Phase : uint8_t {
    kPush,  // drm_sched_entity_push_job(): the job is queued on its entity
    kRun,   // drm_run_job: the scheduler took it to hand it to the GPU
    kHw,    // ops->run_job() returned: the GPU has it
    kDone,  // the hardware fence signalled (drm_sched_process_job)
    kFree,  // ops->free_job()
  };
  Phase phase = Phase::kPush;
  std::string_view sched;       // the drm_gpu_scheduler's name
  std::string_view entity;      // the entity (userspace queue) it was pushed to
  uint64_t job = 0;             // sequence number per scheduler, from 1
  const Task* submitter = nullptr;  // the task that pushed it
  // Where the tracepoint fires: the task whose context it runs in (the
  // submitter at push, the worker at run_job/free_job, the fence worker or
  // nullptr for the job interrupt at the fence) and its CPU.
  QueueContext where;
  Time pushed;                  // push time (every phase)
  Time run;                     // drm_run_job time (kRun and later)
};

// Runtime PM (models/kernel/pm_runtime/pm_runtime.h, following
// drivers/base/power/runtime.c and include/trace/events/rpm.h).
struct RpmEvent {
  enum class Kind : uint8_t {
    kStatus,  // the device's runtime status changed (rpm_suspend / rpm_resume)
    kDSleep,  // a task slept in D inside rpm_resume() or rpm_suspend() and was woken
  };
  Kind kind = Kind::kStatus;
  std::string_view device;
  int status = 0;               // kStatus: the new enum rpm_status (0 active, 1 resuming, 2 suspended, 3 suspending)
  const Task* task = nullptr;   // the context: the calling task, or nullptr (timer, interrupt)
  // kDSleep: one uninterruptible sleep of `task`, [start, start + d_state),
  // woken by `waker` (nullptr: a timer or interrupt), which was runnable but
  // not running for `waker_wait` of it.
  bool in_resume = false;       // the sleep was inside rpm_resume() (else rpm_suspend())
  Time start;
  Time d_state;
  const Task* waker = nullptr;
  Time waker_wait;
};

// One app frame through the display pipeline (models/devices/display.h),
// classified as Android's FrameTimeline classifies it
// (frameworks/native/services/surfaceflinger/FrameTimeline/).
struct FrameEvent {
  std::string_view layer;     // the app (surface) the frame belongs to
  uint64_t vsync_id = 0;      // the app vsync that started it
  Time vsync;                 // app vsync time (frame start)
  Time app_end;               // app work done: buffer queued and its GPU work finished
  Time app_deadline;          // expected end of app work
  Time present;               // when it reached the screen (the vsync SF's commit made)
  Time expected_present;
  Time sf_end;                // SurfaceFlinger's composition for it ended
  Time sf_deadline;
  // FrameTimeline's jank classification (SurfaceFrame::classifyJankLocked()).
  bool app_missed = false;    // "App Deadline Missed": presented late, finished late
  bool sf_missed = false;     // "SurfaceFlinger CPU Deadline Missed" (or GPU): the display frame's
  bool buffer_stuffing = false;  // "Buffer Stuffing": presented late behind the layer's previous buffer
  bool janky = false;         // a jank type TimeStats counts (not Buffer Stuffing, Dropped or Unknown)
  bool dropped = false;       // never presented (a newer buffer replaced it)
};

// Task states as sched_switch's prev_state prints them.
enum class TaskState : uint8_t {
  kRunning,          // R (runnable or on CPU)
  kInterruptible,    // S
  kUninterruptible,  // D
  kDead,             // X
  kNew,              // not started yet
};

char task_state_letter(TaskState s);

class SchedObserver {
 public:
  virtual ~SchedObserver() = default;
  virtual void on_task_new(Time t, const Task& p) {}
  // try_to_wake_up() began (sched_waking); target_cpu as chosen.
  virtual void on_waking(Time t, const Task& p, const Task* waker, int target_cpu) {}
  // The task is on a run-queue (sched_wakeup / sched_wakeup_new).
  virtual void on_wakeup(Time t, const Task& p, int cpu) {}
  // prev left the CPU in prev_state (R: preempted or yielded); next runs.
  // prev or next may be the idle task (pid 0).
  virtual void on_switch(Time t, int cpu, const Task& prev, TaskState prev_state, const Task& next) {}
  // Right after on_switch(), for observers whose wants_cpu_util() is true
  // (asked once, when added; the others cost nothing): the CPU's CFS util
  // as the scheduler reads it (cpu_util_cfs(): util_avg or util_est,
  // capped at capacity) and its RT util_avg, both 0..1024, as
  // put_prev_task() left them.
  virtual bool wants_cpu_util() const { return false; }
  virtual void on_cpu_util(Time t, int cpu, uint64_t util_cfs, uint64_t util_rt) {}
  virtual void on_migrate(Time t, const Task& p, int from_cpu, int to_cpu) {}
  // cpu_idle: state >= 0 entering an idle state, -1 leaving idle.
  virtual void on_cpu_idle(Time t, int cpu, int state) {}
  // A periodic task reached its timer: the period that began at
  // `period_start` took `response` (miss when response > period).
  virtual void on_period_end(Time t, const Task& p, Time period_start, Time response, Time period) {}
  // power:cpu_frequency: the CPU's frequency domain switched to freq_khz
  // (emitted for every CPU of the domain).
  virtual void on_cpu_frequency(Time t, int cpu, uint64_t freq_khz) {}
  // Effective priority changed: by a PI boost or unboost (rt_mutex_setprio(),
  // the kernel's sched_pi_setprio) when `pi`, else by sched_setscheduler()
  // or set_user_nice() (binder, kthread_worker follow, WQ_SYSFS), which
  // the kernel does not trace.
  virtual void on_prio_change(Time t, const Task& p, int old_prio, int new_prio, bool pi) {}
  // Workqueue and kthread_worker items (models/kernel/workqueue/, kthread_worker.h).
  virtual void on_work_item(Time t, const WorkItemEvent& e) {}
  // DRM GPU scheduler jobs (models/devices/drm_sched.h).
  virtual void on_drm_job(Time t, const DrmJobEvent& e) {}
  // Runtime PM transitions and sleeps (models/kernel/pm_runtime/).
  virtual void on_rpm(Time t, const RpmEvent& e) {}
  // A frame's classification, once it was presented or dropped (models/devices/display.h).
  virtual void on_frame(Time t, const FrameEvent& e) {}
};

}  // namespace schedlab
