#include "models/workload/rtapp_body.h"

#include <fmt/format.h>

#include <set>

#include "models/errors.h"
#include "models/kernel/pm_runtime/pm_runtime.h"
#include "models/workload/device_calls.h"

namespace schedlab {

RtMutex& RtAppWorld::mutex(const std::string& name) {
  auto& m = mutexes_[name];
  if (!m) m = std::make_unique<RtMutex>(name, pi_, k_.tasks().size());  // a waiter per task at most
  return *m;
}

RtAppBody* RtAppWorld::body_by_task_name(const std::string& name) {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

RtAppBody::~RtAppBody() = default;

RtAppBody::RtAppBody(RtAppWorld& world, const TaskSpec& spec, Task& task)
    : world_(world),
      spec_(spec),
      task_(task),
      sleep_timer_(world.kernel().sim().queue(), this, kSleepTimerTag, kTierTimer),
      io_done_(world.kernel().sim().queue(), this, kIoDoneTag, kTierTimer) {
  // Every task whose events name a barrier takes part in it.
  std::set<std::string> barriers;
  for (const auto& ph : spec.phases)
    for (const auto& e : ph.events)
      if (e.kind == EventSpec::Kind::kBarrier) barriers.insert(e.name);
  for (const auto& b : barriers) {
    RtAppWorld::Barrier& barrier = world.barrier(b);
    ++barrier.participants;
    barrier.waiters.reserve(static_cast<size_t>(barrier.participants));
    barrier.waking.reserve(static_cast<size_t>(barrier.participants));
  }
  if (spec.phases.empty()) finished_ = true;
  for (const auto& ph : spec.phases)
    if (ph.events.empty()) finished_ = true;
  for (const auto& ph : spec.phases) {
    phase_base_.push_back(objects_.size());
    for (const auto& e : ph.events) {
      NamedObjects& o = objects_.emplace_back();
      switch (e.kind) {
        case EventSpec::Kind::kTimer: o.timer = &world.timer(e.name); break;
        case EventSpec::Kind::kLock:
        case EventSpec::Kind::kUnlock: o.mutex = &world.mutex(e.name); break;
        case EventSpec::Kind::kWait: o.mutex = &world.mutex(e.mutex); break;
        case EventSpec::Kind::kCgroup:
        case EventSpec::Kind::kCpuUclamp:
        case EventSpec::Kind::kCpuWeight:
        case EventSpec::Kind::kCpuIdle: o.task_group = world.kernel().cpu_cgroup_index(e.name); break;
        default: break;
      }
    }
  }
}

const EventSpec* RtAppBody::current() const { return &spec_.phases[phase_].events[event_]; }

// Next event in rt-app order: events of a phase, the phase `loop` times,
// phases in order, the whole list `loop` times (-1: forever).
void RtAppBody::advance() {
  const PhaseSpec& ph = spec_.phases[phase_];
  if (++event_ < ph.events.size()) return;
  event_ = 0;
  if (ph.loop >= 0 && ++phase_loops_done_ >= ph.loop) {
    phase_loops_done_ = 0;
    if (++phase_ >= spec_.phases.size()) {
      phase_ = 0;
      if (spec_.loop >= 0 && ++task_loops_done_ >= spec_.loop) finished_ = true;
    }
  }
}

void RtAppBody::sleep_until(Time t) {
  // hrtimer_nanosleep() (6.12 kernel/time/hrtimer.c): a range hrtimer on
  // the CPU the task sleeps on, [t, t + the task's timer slack]. It fires
  // at the window's end unless an hrtimer interrupt of that CPU comes
  // inside it (its tick, another timer's expiry, a timer's idle exit),
  // which runs it then: slack lets timers coalesce.
  Kernel& k = world_.kernel();
  sleep_cpu_ = task_.cpu;
  k.hrtimer_start_range(sleep_timer_, t, k.timer_slack(task_), sleep_cpu_, &task_.comm, &task_.group);
  waiting_ = Wait::kSleep;
}

void RtAppBody::on_event(uint64_t tag) {
  Kernel& k = world_.kernel();
  if (tag == kIoDoneTag) {
    // The completion interrupt: unknown to cpuidle in advance (no hrtimer),
    // it wakes an idling CPU and is handled once the CPU runs again; its
    // handler wakes the task (blk_mq_end_request() -> wake_up_process()).
    if (k.irq_waits_for_idle_exit(k.rq(io_cpu_), io_done_)) return;
    waiting_ = Wait::kNone;
    k.try_to_wake_up(task_, nullptr, io_cpu_);
    return;
  }
  // hrtimer_wakeup() in the CPU's hrtimer interrupt, which runs the other
  // soft-expired timers there too.
  k.hrtimer_interrupt(sleep_cpu_, &sleep_timer_);
  waiting_ = Wait::kNone;
  k.try_to_wake_up(task_, nullptr, task_.cpu);
}

void RtAppBody::wake(const Task* waker) {
  waiting_ = Wait::kNone;
  world_.kernel().try_to_wake_up(task_, waker, waker ? waker->cpu : task_.cpu);
}

void RtAppBody::binder_reply(Task& server) {
  waiting_ = Wait::kNone;
  binder_replied_ = true;
  world_.kernel().try_to_wake_up(task_, &server, server.cpu, kWfSync);
}

namespace {
// A misuse found only as the event runs (a mutex unlocked by a task that
// does not hold it) is a scenario bug: the error names the event's place
// in the file as a configuration error does.
template <typename Call>
auto at_event(const EventSpec& e, Call&& call) -> decltype(call()) {
  try {
    return call();
  } catch (const ModelError& err) {
    if (e.origin.empty()) throw;
    throw ModelError(e.origin + ": " + err.what());
  }
}
}  // namespace

const std::vector<RtAppBody*>& RtAppBody::task_targets_of_current(const std::string& name) {
  NamedObjects& o = objects_[phase_base_[phase_] + event_];
  if (!o.targets_resolved) {
    o.targets_resolved = true;
    if (RtAppBody* b = world_.body_by_task_name(name)) o.task_targets.push_back(b);
    for (int i = 0;; ++i) {
      RtAppBody* b = world_.body_by_task_name(name + "-" + std::to_string(i));
      if (!b) break;
      o.task_targets.push_back(b);
    }
  }
  return o.task_targets;
}

Action RtAppBody::next(Task& self) {
  Kernel& k = world_.kernel();
  // Events that take no time are handled here in a loop; a list made only
  // of them (a sleep of 0, a signal, an unlock...) would loop forever.
  constexpr int kMaxZeroTimeEvents = 100000;
  for (int steps = 0;; ++steps) {
    if (steps > kMaxZeroTimeEvents) [[unlikely]]
      throw ModelError(fmt::format(
          "task {} makes no progress: at t={} {} events in a row take no time (its events are all sleeps of 0, "
          "signals, lock and unlock, late timers or other events without work): give it a run event, or a sleep "
          "or timer of positive length",
          self.comm, format_time(k.now()), kMaxZeroTimeEvents));
    // rt_mutex_slowlock_block(): a mutex waiter woken by the unlock takes
    // the mutex now, or waits again if a higher-priority task took it.
    if (mutex_retry_) {
      if (!mutex_retry_->try_take(k, self)) return Action::block(TaskState::kInterruptible);
      mutex_retry_ = nullptr;
      waiting_ = Wait::kNone;
    }
    if (finished_) return Action::exit();
    const EventSpec& e = *current();
    switch (e.kind) {
      case EventSpec::Kind::kRun:
        advance();
        return Action::run(e.duration.count());
      case EventSpec::Kind::kRuntime:
        advance();
        return Action::run_until(k.now() + e.duration);
      case EventSpec::Kind::kSleep:
        advance();
        if (e.duration <= Time::zero()) continue;
        sleep_until(k.now() + e.duration);
        return Action::block(TaskState::kInterruptible);
      case EventSpec::Kind::kIowait:
        // io_schedule(): the task sleeps in D with in_iowait until the
        // device completes. Assumption: the completion interrupt comes on
        // the CPU it blocked on (blk-mq with a hardware queue per CPU, as
        // UFS MCQ and NVMe map them), `duration` after the block.
        advance();
        if (e.duration <= Time::zero()) continue;
        io_cpu_ = self.cpu;
        io_done_.arm(k.now() + e.duration);
        waiting_ = Wait::kIo;
        return Action::io_wait();
      case EventSpec::Kind::kTimer: {
        // rt-app's timer: the shared expiry advances by one period at each
        // use; it starts at the first use. Late in absolute mode, the grid
        // is kept (no sleep); in relative mode it restarts from now.
        auto& t = timer_of_current();
        Time now = k.now();
        if (!t.started) {
          t.started = true;
          t.next = now;
        }
        t.next += e.duration;
        if (period_started_) k.notify_period_end(self, period_start_, now - period_start_, e.duration);
        period_started_ = true;
        advance();
        if (now < t.next) {
          period_start_ = t.next;
          sleep_until(t.next);
          return Action::block(TaskState::kInterruptible);
        }
        if (e.timer_mode == TimerMode::kRelative) t.next = now;
        period_start_ = now;
        continue;
      }
      case EventSpec::Kind::kLock: {
        RtMutex& m = mutex_of_current();
        bool got = at_event(e, [&] { return m.lock(k, self); });
        advance();
        if (got) continue;
        waiting_ = Wait::kMutex;
        mutex_retry_ = &m;
        return Action::block(TaskState::kInterruptible);
      }
      case EventSpec::Kind::kUnlock:
        at_event(e, [&] { mutex_of_current().unlock(k, self); });
        advance();
        continue;
      case EventSpec::Kind::kWait: {
        // pthread_cond_wait(): release the mutex, sleep, take it again.
        RtMutex& m = mutex_of_current();
        if (!reacquire_) {
          world_.cond(e.name).waiters.push_back(this);
          at_event(e, [&] { m.unlock(k, self); });
          reacquire_ = true;
          waiting_ = Wait::kCond;
          return Action::block(TaskState::kInterruptible);
        }
        reacquire_ = false;
        bool got = m.lock(k, self);
        advance();
        if (got) continue;
        waiting_ = Wait::kMutex;
        mutex_retry_ = &m;
        return Action::block(TaskState::kInterruptible);
      }
      case EventSpec::Kind::kSignal: {
        auto& waiters = world_.cond(e.name).waiters;
        if (!waiters.empty()) {
          RtAppBody* b = waiters.front();
          waiters.erase(waiters.begin());
          b->wake(&self);
        }
        advance();
        continue;
      }
      case EventSpec::Kind::kBroad: {
        auto& c = world_.cond(e.name);
        c.waking.swap(c.waiters);
        for (RtAppBody* b : c.waking) b->wake(&self);
        c.waking.clear();
        advance();
        continue;
      }
      case EventSpec::Kind::kBarrier: {
        auto& b = world_.barrier(e.name);
        advance();
        if (++b.arrived >= b.participants) {
          b.arrived = 0;
          b.waking.swap(b.waiters);
          for (RtAppBody* w : b.waking) w->wake(&self);
          b.waking.clear();
          continue;
        }
        b.waiters.push_back(this);
        waiting_ = Wait::kBarrier;
        return Action::block(TaskState::kInterruptible);
      }
      case EventSpec::Kind::kYield:
        advance();
        return Action::yield();
      case EventSpec::Kind::kUclamp: {
        advance();
        auto same = [&](UclampId id, const std::optional<uint32_t>& v) {
          return !v || (self.uclamp_req[id].user_defined && self.uclamp_req[id].value == *v);
        };
        // sched_setattr()'s EINVAL (a max below the min in effect) names
        // the event that asked.
        if (!(e.uclamp_if_changed && same(kUclampMin, e.uclamp_min) && same(kUclampMax, e.uclamp_max)))
          at_event(e, [&] { k.sched_setattr_uclamp(self, e.uclamp_min, e.uclamp_max); });
        continue;
      }
      case EventSpec::Kind::kSetScheduler:
      case EventSpec::Kind::kNice:
        // The calling thread, running: __sched_setscheduler() puts and sets
        // it again around the change. A reschedule it raised (a lowered
        // priority, a fair task now ahead) is taken on the way back to user
        // space, whatever the preemption model; a kernel thread's
        // sched_set_fifo() takes it at preempt_enable().
        advance();
        if (e.kind == EventSpec::Kind::kSetScheduler)
          k.set_scheduler(self, e.policy, self.nice(), e.rt_priority);
        else
          k.set_user_nice(self, e.nice);
        return self.kernel_thread ? Action::preempt_point() : Action::return_to_user();
      case EventSpec::Kind::kSetAffinity: {
        // sched_setaffinity() (pthread_setaffinity_np()) of the calling
        // thread, or of each thread of the task named, one after another:
        // a running thread taken off its CPU is moved at once by that
        // CPU's stopper, which the caller waits for (Kernel::AffinityWait).
        CpuMask mask;
        if (e.cpus.empty()) mask.set();
        for (int c : e.cpus) mask.set(static_cast<size_t>(c));
        Kernel::AffinityWait wait = Kernel::AffinityWait::kNone;
        if (e.name.empty()) {
          advance();
          wait = at_event(e, [&] { return k.sched_setaffinity(self, self, mask); });
        } else {
          const std::vector<RtAppBody*>& targets = task_targets_of_current(e.name);
          while (affinity_next_ < targets.size() && wait == Kernel::AffinityWait::kNone) {
            Task& p = targets[affinity_next_++]->task();
            wait = at_event(e, [&] { return k.sched_setaffinity(self, p, mask); });
          }
          if (affinity_next_ == targets.size()) {
            affinity_next_ = 0;
            advance();
          }
        }
        if (wait == Kernel::AffinityWait::kPreempted) return Action::schedule();
        if (wait == Kernel::AffinityWait::kSleeps) return Action::block(TaskState::kUninterruptible);
        continue;
      }
      case EventSpec::Kind::kCgroup: {
        const int group = objects_of_current().task_group;
        advance();
        k.sched_move_task(self, group);
        continue;
      }
      case EventSpec::Kind::kCpuUclamp: {
        const int group = objects_of_current().task_group;
        advance();
        if (e.uclamp_min) k.cpu_uclamp_write(group, kUclampMin, *e.uclamp_min);
        if (e.uclamp_max) k.cpu_uclamp_write(group, kUclampMax, *e.uclamp_max);
        continue;
      }
      case EventSpec::Kind::kCpuWeight: {
        const int group = objects_of_current().task_group;
        advance();
        at_event(e, [&] {
          if (e.cpu_weight_is_shares)
            k.cpu_shares_write(group, e.cpu_weight);
          else
            k.cpu_weight_write(group, e.cpu_weight);
        });
        continue;
      }
      case EventSpec::Kind::kCpuIdle: {
        const int group = objects_of_current().task_group;
        advance();
        k.sched_group_set_idle(group, e.cpu_idle);
        continue;
      }
      case EventSpec::Kind::kSuspend:
        advance();
        waiting_ = Wait::kSuspend;
        return Action::block(TaskState::kInterruptible);
      case EventSpec::Kind::kResume:
        // rt-app signals the named thread's condition: a resume that finds
        // no suspended thread is lost, as with pthread_cond_broadcast().
        for (RtAppBody* b : task_targets_of_current(e.name))
          if (b->suspended()) b->wake(&self);
        advance();
        continue;
      case EventSpec::Kind::kCall: {
        if (!world_.calls()) throw ModelError("task " + self.comm + ": a call event needs the scenario's devices");
        DeviceCalls& calls = *world_.calls();
        if (e.call.op == CallSpec::Op::kBinderCall && !e.call.oneway) {
          // binder_transaction(), then binder_thread_read() sleeps (S)
          // until the reply.
          if (binder_replied_) {
            binder_replied_ = false;
            advance();
            continue;
          }
          BinderProc* proc = calls.binder_proc(e.call.target);
          if (!proc) throw ModelError(calls.check(e.call));
          proc->transact(self, e.call, this);
          waiting_ = Wait::kBinderReply;
          return Action::block(TaskState::kInterruptible);
        }
        if (e.call.op == CallSpec::Op::kCancelWork || e.call.op == CallSpec::Op::kFlushWork) {
          // cancel_work_sync(), flush_work(): may sleep (D) until the
          // item's execution returns; a plain cancel_work() does not.
          if (DeviceCalls::may_sleep(e.call)) {
            if (auto sleep = calls.work_wait_step(self, e.call)) return *sleep;
          } else {
            calls.call(self, e.call);
          }
          advance();
          continue;
        }
        if (DeviceCalls::may_sleep(e.call)) {
          // pm_runtime_get_sync() and friends run callbacks and may sleep
          // in D: stepped until the call returns.
          if (!rpm_call_ || !rpm_call_->active()) {
            RpmDevice* dev = calls.rpm_device(e.call.target);
            if (!dev) throw ModelError(calls.check(e.call));
            if (!rpm_call_) rpm_call_ = std::make_unique<RpmCall>(*calls.pm_runtime());
            rpm_call_->begin(*dev, e.call.rpm);
          }
          Action a = rpm_call_->step(self);
          if (a.kind != Action::Kind::kExit) return a;
          advance();
          continue;
        }
        // queue_work / kthread_queue_work / submit_job / non-sleeping rpm
        // calls: instantaneous in the caller (its CPU cost is the task's
        // own `run` events).
        calls.call(self, e.call);
        advance();
        continue;
      }
    }
  }
}

}  // namespace schedlab
