// Typed description of a task set: what YAML scenarios and rt-app JSON files
// turn into (models/config/ is the only code that builds these from text).
// The behaviour is rt-app's: a task runs its phases in order, each phase
// repeating its event list `loop` times, and the whole list of phases
// repeats `loop` times (-1 = forever).
#pragma once

#include <cstdint>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "models/kernel/pm_runtime/pm_runtime_params.h"
#include "sim/time.h"

namespace schedlab {

// kDeadline: only kernel threads the model creates (schedutil's sugov:N);
// no workload can ask for it (rt-app's SCHED_DEADLINE is refused).
enum class Policy { kNormal, kBatch, kIdle, kFifo, kRr, kDeadline };

const char* policy_name(Policy p);  // "SCHED_OTHER", "SCHED_FIFO", ...
// rt_policy() / is_rt_policy() (kernel/sched/sched.h, include/linux/sched/rt.h).
inline bool is_rt_policy(Policy p) { return p == Policy::kFifo || p == Policy::kRr; }

enum class TimerMode { kAbsolute, kRelative };

// A call from a task into a kernel object or device of the scenario, each
// chosen by name (models/workload/device_calls.h): queue a work item on a
// workqueue or kthread_worker, push a job to a DRM scheduler entity, call
// the runtime PM of a device (pm_runtime_get_sync() and friends), make a
// binder transaction to a server process; cancel or flush a work item
// queued by such events.
struct CallSpec {
  enum class Op { kQueueWork, kKthreadQueueWork, kSubmitJob, kRpm, kBinderCall, kCancelWork, kFlushWork };
  Op op = Op::kQueueWork;
  std::string target;   // workqueue, kthread_worker, DRM entity, device or binder process name (none: cancel, flush)
  std::string work;     // work item name (its identity: a pending item is not queued twice)
  Time cost;            // the work item's CPU work (capacity time); binder_call: the server thread's
  Time sleep;           // then an uninterruptible sleep inside the item
  Time delay;           // queue_work / kthread_queue_work: the delayed variant's delay
  bool mod = false;     // queue_work / kthread_queue_work: (kthread_)mod_delayed_work()
  bool sync = false;    // cancel_work: cancel_(delayed_)work_sync() (kthread works: the only form)
  bool delayed = false;  // flush_work: flush_delayed_work() (an armed timer's item queued at once)
  int cpu = -1;         // queue_work: queue_work_on() CPU; -1 = WORK_CPU_UNBOUND
  Time gpu_time;        // submit_job: the job's GPU time; 0 = the GPU's distribution
  RpmApi rpm = RpmApi::kGetSync;  // rpm: which pm_runtime_*() call (target = the device)
  bool oneway = false;  // binder_call: TF_ONE_WAY (the caller does not wait for a reply)
  // binder_call: a nested call the server thread makes after `cost` (to
  // another process; its own `nested` may go on), and the server's work
  // after that call returns, before it replies. Immutable once loaded.
  std::shared_ptr<const CallSpec> nested;
  Time cost_after;
};

// One rt-app-like event. `name` fields refer to shared objects (timers,
// mutexes, conditions, barriers) by the name given in the file, or, for
// resume, to a task name.
struct EventSpec {
  enum class Kind {
    kRun,      // work: capacity-time at capacity 1024 and f_max
    kRuntime,  // wall time: busy until `duration` has passed since the event began
    kSleep,    // relative sleep (interruptible, S state)
    kIowait,   // io_schedule(): wait `duration` for an I/O completion (D state, in_iowait)
    kTimer,    // wait for the next expiry of a periodic timer shared by `name`
    kLock,
    kUnlock,
    kWait,     // wait on condition `name`, releasing mutex `mutex` meanwhile
    kSignal,   // wake one waiter of condition `name`
    kBroad,    // wake every waiter of condition `name`
    kBarrier,  // wait until every task using barrier `name` has arrived
    kYield,
    kSuspend,  // sleep until another task resumes this one
    kResume,   // wake the task called `name` from its suspend
    kCall,     // call into a kernel object or device chosen by name (`call`)
    kUclamp,   // sched_setattr() of this task's utilization clamps
    kCgroup,     // this task moves to cpu cgroup `name` (cgroup.procs write)
    kCpuUclamp,  // write cpu.uclamp.min / .max of cpu cgroup `name`
    kCpuWeight,  // write cpu.weight (cgroup v2) or cpu.shares (v1) of cpu cgroup `name`
    kCpuIdle,    // write cpu.idle of cpu cgroup `name`
    kSetScheduler,  // sched_setscheduler() of this task: `policy`, `rt_priority` (nice kept)
    kNice,          // setpriority(PRIO_PROCESS, tid, `nice`): set_user_nice()
    kSetAffinity,   // sched_setaffinity(): `cpus` (empty = every CPU) of this task, or of task `name`'s threads
  };
  Kind kind = Kind::kRun;
  Time duration;        // run / runtime / sleep; timer period
  std::string name;     // timer/mutex/cond/barrier ref, or task name for resume and setaffinity
  std::string mutex;    // for wait
  TimerMode timer_mode = TimerMode::kAbsolute;
  CallSpec call;        // for kCall
  std::optional<uint32_t> uclamp_min;  // for kUclamp: unset = unchanged; for kCpuUclamp:
  std::optional<uint32_t> uclamp_max;  // 1/100 percent (0..10000), unset = not written
  // kCpuWeight: the value written to cpu.weight (1..10000), or to
  // cpu.shares (2..262144) when `cpu_weight_is_shares`.
  int64_t cpu_weight = 0;
  bool cpu_weight_is_shares = false;
  bool cpu_idle = false;  // kCpuIdle: the value written to cpu.idle
  Policy policy = Policy::kNormal;  // kSetScheduler: the new policy
  int rt_priority = 0;              // kSetScheduler: 1..99 for SCHED_FIFO/RR, else 0
  int nice = 0;                     // kNice: -20..19
  std::vector<int> cpus;            // kSetAffinity: the new mask, sorted; empty = every CPU
  // kUclamp from an rt-app phase: rt-app's set_thread_param() skips the
  // call when the settings it last applied are these already.
  bool uclamp_if_changed = false;
  // Where the event was written ("file:line:col: tasks[0].events[2]"), for
  // errors found only while it runs (a mutex unlocked by a task that does
  // not hold it); empty for events built in code.
  std::string origin;
};

struct PhaseSpec {
  int64_t loop = 1;  // -1: repeat forever
  std::vector<EventSpec> events;
};

struct TaskSpec {
  std::string name;
  int instances = 1;             // identical copies: name-0, name-1, ...
  // The thread name (comm) of instance i: the name itself for one instance.
  std::string thread_name(int i) const { return instances > 1 ? name + "-" + std::to_string(i) : name; }
  Policy policy = Policy::kNormal;
  int nice = 0;                  // SCHED_OTHER/BATCH/IDLE: -20..19
  int rt_priority = 0;           // SCHED_FIFO/RR: 1..99
  std::vector<int> cpus;         // affinity; empty = all CPUs
  std::optional<Time> slice;     // sched_attr.sched_runtime (custom slice, 6.12+)
  // prctl(PR_SET_TIMERSLACK) / /proc/PID/timerslack_ns: the slack of its
  // sleeps; unset = kernel.overheads.timer_slack (init_task's). Fair only.
  std::optional<Time> timer_slack;
  // sched_attr.sched_util_min / sched_util_max (uclamp, 0..1024); unset =
  // not requested (the defaults: 0 / 1024, RT tasks' min from
  // sched_util_clamp_min_rt_default).
  std::optional<uint32_t> uclamp_min;
  std::optional<uint32_t> uclamp_max;
  std::string cgroup;            // cpu cgroup it starts in; "" = the root group
  Time delay;                    // start delay
  bool start_jitter = true;      // an experiment's start_jitter delays it too (false: in phase with a device)
  int64_t loop = -1;             // repeats of the phase list; -1 = forever
  std::vector<PhaseSpec> phases;
  bool kernel_thread = false;    // runs in kernel mode (matters for preempt=none/voluntary)
};

}  // namespace schedlab
