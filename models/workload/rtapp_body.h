// Task bodies that play an rt-app-like event list (TaskSpec), and the
// shared objects those events name: periodic timers, mutexes, conditions,
// barriers. Semantics follow rt-app (scheduler-tools/rt-app, src/rt-app.c
// run_event()), described in configs/README.md.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "models/kernel/binder/binder.h"
#include "models/kernel/kernel.h"
#include "models/kernel/sched/rt_mutex.h"
#include "models/workload/task_spec.h"

namespace schedlab {

class RtAppBody;
class DeviceCalls;
class RpmCall;

// Objects shared by name between the tasks of one scenario.
class RtAppWorld {
 public:
  RtAppWorld(Kernel& k, bool pi_enabled) : k_(k), pi_(pi_enabled) {}
  struct SharedTimer {
    bool started = false;
    Time next;  // next expiry
  };
  // `waking` holds the waiters a broadcast or a full barrier releases
  // while it wakes them; swapping the two keeps both vectors' storage, so
  // the hot loop does not allocate.
  struct Cond {
    std::vector<RtAppBody*> waiters, waking;
  };
  struct Barrier {
    int participants = 0;
    int arrived = 0;
    std::vector<RtAppBody*> waiters, waking;
  };
  RtMutex& mutex(const std::string& name);
  SharedTimer& timer(const std::string& name) { return timers_[name]; }
  Cond& cond(const std::string& name) { return conds_[name]; }
  Barrier& barrier(const std::string& name) { return barriers_[name]; }
  RtAppBody* body_by_task_name(const std::string& name);
  void register_body(const std::string& task_name, RtAppBody* body) { by_name_[task_name] = body; }
  Kernel& kernel() { return k_; }
  // Kernel objects and devices the `call` events reach (device_calls.h).
  void set_calls(DeviceCalls* calls) { calls_ = calls; }
  DeviceCalls* calls() { return calls_; }

 private:
  Kernel& k_;
  DeviceCalls* calls_ = nullptr;
  bool pi_;
  std::map<std::string, std::unique_ptr<RtMutex>> mutexes_;
  std::map<std::string, SharedTimer> timers_;
  std::map<std::string, Cond> conds_;
  std::map<std::string, Barrier> barriers_;
  std::map<std::string, RtAppBody*> by_name_;
};

class RtAppBody final : public TaskBody, public EventHandler, public BinderClient {
 public:
  RtAppBody(RtAppWorld& world, const TaskSpec& spec, Task& task);
  ~RtAppBody() override;
  Action next(Task& self) override;
  void on_event(uint64_t tag) override;  // its sleep timer expired, or its I/O completed
  // Woken by a condition signal, a barrier, a resume.
  void wake(const Task* waker);
  // A binder_call's reply (wake_up_interruptible_sync()).
  void binder_reply(Task& server) override;
  bool suspended() const { return waiting_ == Wait::kSuspend; }
  Task& task() { return task_; }

 private:
  enum class Wait { kNone, kSleep, kIo, kMutex, kCond, kBarrier, kSuspend, kBinderReply };
  enum : uint64_t { kSleepTimerTag = 0, kIoDoneTag = 1 };
  const EventSpec* current() const;
  // The shared objects an event names (a kTimer's timer; a kLock's,
  // kUnlock's or kWait's mutex), resolved once at construction (the
  // world's map nodes never move): no name lookup when the event runs.
  struct NamedObjects {
    RtAppWorld::SharedTimer* timer = nullptr;
    RtMutex* mutex = nullptr;
    int task_group = -1;  // kCgroup, kCpuUclamp, kCpuWeight: the cpu cgroup's index
    // kResume, kSetAffinity of another task: the thread named and its
    // instances (name-0, name-1, ...), looked up when the event first runs
    // (every body exists by then).
    bool targets_resolved = false;
    std::vector<RtAppBody*> task_targets;
  };
  // The threads the current event names (resolved at its first run).
  const std::vector<RtAppBody*>& task_targets_of_current(const std::string& name);
  const NamedObjects& objects_of_current() const { return objects_[phase_base_[phase_] + event_]; }
  RtAppWorld::SharedTimer& timer_of_current() const { return *objects_of_current().timer; }
  RtMutex& mutex_of_current() const { return *objects_of_current().mutex; }
  void advance();  // to the next event, counting loops
  void sleep_until(Time t);
  RtAppWorld& world_;
  const TaskSpec& spec_;
  Task& task_;
  Timer sleep_timer_;
  int sleep_cpu_ = 0;  // the CPU whose hrtimer base holds sleep_timer_
  // An `iowait` event's completion interrupt, on io_cpu_ (the CPU the task
  // blocked on).
  Timer io_done_;
  int io_cpu_ = 0;
  size_t phase_ = 0, event_ = 0;
  int64_t phase_loops_done_ = 0, task_loops_done_ = 0;
  bool finished_ = false;
  std::unique_ptr<RpmCall> rpm_call_;  // a pm_runtime_*() call that may sleep (active() while in progress)
  Wait waiting_ = Wait::kNone;
  RtMutex* mutex_retry_ = nullptr;  // blocked on it: take it when woken
  bool reacquire_ = false;      // cond wait done, mutex to take again
  bool binder_replied_ = false; // a binder_call's reply came: the event is done
  size_t affinity_next_ = 0;    // setaffinity of a task's threads: the next one (after a wait for a stopper)
  Time runtime_start_;
  bool in_runtime_ = false;
  Time period_start_;           // expiry this task last waited for (timer events)
  bool period_started_ = false;
  std::vector<size_t> phase_base_;     // index of each phase's first event in objects_
  std::vector<NamedObjects> objects_;  // per event of every phase
};

}  // namespace schedlab
