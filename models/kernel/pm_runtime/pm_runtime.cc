// Runtime PM, following drivers/base/power/runtime.c of Linux 6.12 (see
// pm_runtime.h for what is modelled and what is simplified).
//
// rpm_idle(), rpm_suspend() and rpm_resume() are written as resumable
// state machines: a context (a task inside an RpmCall, the pm_wq worker
// inside pm_runtime_work, or an atomic context: interrupt, hrtimer, a
// non-sleeping call) keeps an explicit stack of frames, one per active
// rpm_* call, each with a program counter at one of the kernel function's
// labels (repeat, the wait loop, the callback, out). A frame that must give
// the CPU up (the callback's CPU work, a D sleep) returns an Action; the
// context resumes at the same frame when that action completes. Nested
// calls (rpm_resume(parent, 0) from rpm_resume(), the deferred
// rpm_resume(dev, 0) and rpm_idle(parent, RPM_ASYNC) from rpm_suspend(),
// rpm_idle(dev, RPM_ASYNC) at the end of a resume, pm_runtime_put(parent))
// push a frame. Stacks are reserved for the deepest device tree, so a call
// allocates nothing in steady state.
#include "models/kernel/pm_runtime/pm_runtime.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>

#include "models/errors.h"
#include "models/kernel/kernel.h"
#include "models/kernel/workqueue/runnable_tracker.h"
#include "models/kernel/workqueue/workqueue.h"

namespace schedlab {

const char* rpm_status_name(RpmStatus s) {
  switch (s) {
    case RpmStatus::kActive: return "active";
    case RpmStatus::kResuming: return "resuming";
    case RpmStatus::kSuspended: return "suspended";
    case RpmStatus::kSuspending: return "suspending";
  }
  return "?";
}

const char* rpm_api_name(RpmApi a) {
  switch (a) {
    case RpmApi::kGetSync: return "get_sync";
    case RpmApi::kResumeAndGet: return "resume_and_get";
    case RpmApi::kGet: return "get";
    case RpmApi::kPut: return "put";
    case RpmApi::kPutSync: return "put_sync";
    case RpmApi::kPutAutosuspend: return "put_autosuspend";
    case RpmApi::kPutSyncAutosuspend: return "put_sync_autosuspend";
    case RpmApi::kMarkLastBusy: return "mark_last_busy";
  }
  return "?";
}

namespace {

bool may_sleep(RpmApi a) {
  return a == RpmApi::kGetSync || a == RpmApi::kResumeAndGet || a == RpmApi::kPutSync ||
         a == RpmApi::kPutSyncAutosuspend;
}

}  // namespace

// ===================================================================== engine

struct PmRuntime::Impl {
  enum class Op : uint8_t { kIdle, kSuspend, kResume };

  // Labels of the kernel functions a frame can be resumed at.
  enum Pc : uint8_t {
    kRepeat,       // "repeat:" (rpm_suspend, rpm_resume); rpm_idle's only label
    kWait,         // the prepare_to_wait() / schedule() loop on power.wait_queue
    kAfterParent,  // rpm_resume(): rpm_resume(parent, 0) returned
    kCallback,     // rpm_callback(): the driver's CPU work
    kCallbackWait, // rpm_callback(): the driver's wait for the hardware
    kCallbackDone, // rpm_callback() returned (callbacks do not fail here)
    kAfterDeferred,// rpm_suspend(): the deferred rpm_resume(dev, 0) returned
    kOut,          // rpm_resume(): "out:" (pm_runtime_put(parent))
    kReturn,       // return retval (after a nested call whose value is ignored)
  };

  // One active rpm_idle / rpm_suspend / rpm_resume call.
  struct Frame {
    Op op = Op::kIdle;
    Pc pc = kRepeat;
    bool resumed_parent = false;  // rpm_resume(): rpm_resume(parent, 0) was called
    unsigned flags = 0;           // RpmFlags
    int retval = 0;
    RpmDevice* dev = nullptr;
    RpmDevice* parent = nullptr;  // rpm_resume() / rpm_suspend() local `parent`
  };

  // An execution context.
  struct Ctx final : public EventHandler {
    enum class Kind : uint8_t {
      kTask,    // a task's own pm_runtime_*() call (RpmCall)
      kWorker,  // pm_runtime_work() on a pm_wq worker
      kAtomic,  // interrupt, hrtimer (pm_suspend_timer_fn) or a call that must not sleep
    };
    Ctx(Impl* p, Kind k) : pm(p), kind(k) {
      stack.reserve(p->max_depth);
      if (k == Kind::kTask) timer = Timer(p->k.sim().queue(), this, 0, kTierTimer);
    }
    Impl* pm;                        // nullptr once the PmRuntime is gone (RpmCall outliving it)
    Kind kind;
    Task* task = nullptr;            // kTask, kWorker: the task running the call
    WorkExec* exec = nullptr;        // kWorker
    const Task* irq_task = nullptr;  // kAtomic: the QueueContext
    int irq_cpu = -1;
    Timer timer;                     // kTask: the wait inside a callback
    std::vector<Frame> stack;
    RpmApi api = RpmApi::kMarkLastBusy;  // entry point (RpmCall, call_nosleep)
    RpmDevice* entry_dev = nullptr;
    int ret = 0;                     // value of the last frame that returned
    Action action;                   // what to give back when a frame yields
    bool busy = false;               // kAtomic: a call is in progress
    // The D sleep in progress (power.wait_queue or a callback's wait).
    bool sleeping = false;
    bool sleep_in_resume = false;
    const RpmDevice* sleep_dev = nullptr;
    RpmDevice* waiting_on = nullptr;  // on that device's wait queue
    Time sleep_start;
    Time woken_at;
    const Task* waker = nullptr;
    int timer_cpu = 0;  // the CPU whose hrtimer base holds `timer`

    const Task* who() const { return kind == Kind::kAtomic ? irq_task : task; }
    int cpu() const { return kind == Kind::kAtomic ? irq_cpu : task->cpu; }
    QueueContext qctx() const { return QueueContext{who(), cpu()}; }
    // kTask: the callback's hardware wait is over (a timer: no waker).
    void on_event(uint64_t) override {
      pm->k.hrtimer_interrupt(timer_cpu);  // the CPU's other soft-expired timers run too
      woken_at = pm->k.now();
      waker = nullptr;
      pm->k.try_to_wake_up(*task, nullptr, task->cpu);
    }
  };

  // pm_runtime_work(): the function of the device's power.work.
  struct PmWork final : public WorkFn {
    PmWork(Impl& p, RpmDevice& d) : pm(p), dev(d), ctx(&p, Ctx::Kind::kWorker) {}
    Action step(WorkExec& x) override { return pm.pm_runtime_work(*this, x); }
    Impl& pm;
    RpmDevice& dev;
    Ctx ctx;
    bool running = false;  // an execution is in progress (the workqueue never runs a work item twice at once)
  };

  // The parts of dev->power the model keeps outside RpmDevice.
  struct DevState final : public EventHandler {
    DevState(Impl& p, RpmDevice& d)
        : pm(p), dev(d), fn(p, d), work("pm_runtime_work", &fn),
          suspend_timer(p.k.sim().queue(), this, 0, kTierTimer), why_group(d.name() + " autosuspend timer") {
      wait_queue.reserve(8);
    }
    void on_event(uint64_t) override { pm.pm_suspend_timer_fn(*this); }
    Impl& pm;
    RpmDevice& dev;
    PmWork fn;
    WorkStruct work;          // power.work (INIT_WORK(&dev->power.work, pm_runtime_work))
    Timer suspend_timer;      // power.suspend_timer (pm_suspend_timer_fn)
    const std::string why_group;  // the suspend timer's group in --why
    int timer_cpu = 0;        // the CPU whose hrtimer base holds it
    bool timer_fn_running = false;  // in pm_suspend_timer_fn(): a re-arm keeps the base
    std::vector<Ctx*> wait_queue;  // power.wait_queue
  };

  Impl(PmRuntime& o, size_t depth) : owner(o), k(o.k_), max_depth(depth) {}
  ~Impl() {
    for (Ctx* c : calls) c->pm = nullptr;
  }

  PmRuntime& owner;
  Kernel& k;
  size_t max_depth;
  std::vector<std::unique_ptr<DevState>> devs;  // by RpmDevice::index_
  std::unique_ptr<Ctx> atomic;
  std::vector<Ctx*> calls;          // live RpmCall contexts
  std::vector<bool> tracked;        // by Task::index: RunnableTracker::track() done

  DevState& st(const RpmDevice& d) { return *devs[static_cast<size_t>(d.index_)]; }
  Time now() const { return k.now(); }

  // ------------------------------------------------------------ helpers

  void track(const Task& t) {
    if (t.index < tracked.size() && tracked[t.index]) return;
    if (tracked.size() <= t.index) tracked.resize(t.index + 1, false);
    tracked[t.index] = true;
    // Workqueue workers are tracked by the workqueue system from their
    // creation; tracking them again would drop their history.
    if (owner.wqs_.worker_of(t)) return;
    owner.tracker_.track(t);
  }

  void emit(const RpmEvent& e) {
    for (auto* o : k.observers()) o->on_rpm(now(), e);
  }

  // __update_runtime_status() (trace_rpm_status).
  void update_runtime_status(Ctx& c, RpmDevice& dev, RpmStatus s) {
    dev.status_ = s;
    if (k.observers().empty()) return;
    RpmEvent e;
    e.kind = RpmEvent::Kind::kStatus;
    e.device = dev.name();
    e.status = static_cast<int>(s);
    e.task = c.who();
    emit(e);
  }

  // pm_runtime_autosuspend_expiration(): 0 when the delay has expired, is
  // negative or autosuspend is not used.
  Time autosuspend_expiration(const RpmDevice& dev) const {
    if (!dev.params_.use_autosuspend) return Time::zero();
    if (dev.params_.autosuspend_delay < Time::zero()) return Time::zero();
    Time expires = dev.last_busy_ + dev.params_.autosuspend_delay;
    return expires > now() ? expires : Time::zero();
  }

  // pm_runtime_deactivate_timer().
  void deactivate_timer(RpmDevice& dev) {
    if (dev.timer_expires_ > Time::zero()) {
      k.hrtimer_cancel(st(dev).suspend_timer);  // hrtimer_try_to_cancel()
      dev.timer_expires_ = Time::zero();
    }
  }

  // pm_runtime_cancel_pending(): the work item, if queued, will find
  // RPM_REQ_NONE and do nothing.
  void cancel_pending(RpmDevice& dev) {
    deactivate_timer(dev);
    dev.request_ = RpmRequest::kNone;
  }

  // rpm_check_suspend_allowed() (no runtime_error, disable_depth or PM QoS).
  static int check_suspend_allowed(const RpmDevice& dev) {
    if (dev.usage_count_ > 0) return -EAGAIN;
    if (!dev.params_.ignore_children && dev.child_count_ > 0) return -EBUSY;
    // Pending resume requests take precedence over suspends.
    if ((dev.deferred_resume_ && dev.status_ == RpmStatus::kSuspending) ||
        (dev.request_pending_ && dev.request_ == RpmRequest::kResume))
      return -EAGAIN;
    if (dev.status_ == RpmStatus::kSuspended) return 1;
    return 0;
  }

  // `if (!dev->power.request_pending) { request_pending = true; queue_work(pm_wq, &dev->power.work); }`
  void queue_request(Ctx& c, RpmDevice& dev) {
    if (dev.request_pending_) return;
    dev.request_pending_ = true;
    if (owner.wqs_.queue_work(owner.pm_wq_, st(dev).work, c.qctx())) ++dev.works_queued_;
  }

  // wake_up_all(&dev->power.wait_queue), from the context finishing a
  // transition. prepare_to_wait() adds each waiter at the list's head
  // (__add_wait_queue(), include/linux/wait.h 6.12) and __wake_up_common()
  // walks from the head: the newest waiter is woken first. The queue keeps
  // arrival order, so it is walked backwards.
  void wake_up_all(Ctx& c, RpmDevice& dev) {
    auto& q = st(dev).wait_queue;
    if (q.empty()) return;
    const Task* waker = c.who();
    int cpu = c.cpu();
    // Waking cannot re-enter the model (no task body runs inside
    // try_to_wake_up()), so the queue is stable while it is walked.
    for (auto it = q.rbegin(); it != q.rend(); ++it) {
      Ctx* w = *it;
      w->waiting_on = nullptr;
      w->woken_at = now();
      w->waker = waker;
      k.try_to_wake_up(*w->task, waker, cpu);
    }
    q.clear();
  }

  void begin_sleep(Ctx& c, const RpmDevice& dev, bool in_resume) {
    c.sleeping = true;
    c.sleep_dev = &dev;
    c.sleep_in_resume = in_resume;
    c.sleep_start = now();
    c.woken_at = Time::max();
    c.waker = nullptr;
  }

  // The context runs again after a D sleep: report it (RpmEvent::kDSleep).
  void finish_sleep(Ctx& c) {
    c.sleeping = false;
    if (c.woken_at == Time::max()) c.woken_at = now();
    if (k.observers().empty()) return;
    RpmEvent e;
    e.kind = RpmEvent::Kind::kDSleep;
    e.device = c.sleep_dev->name();
    e.task = c.task;
    e.in_resume = c.sleep_in_resume;
    e.start = c.sleep_start;
    e.d_state = c.woken_at - c.sleep_start;
    e.waker = c.waker;
    if (c.waker) e.waker_wait = owner.tracker_.runnable_between(*c.waker, c.sleep_start, c.woken_at);
    emit(e);
  }

  // prepare_to_wait(TASK_UNINTERRUPTIBLE) + schedule(): the frame stays at
  // kWait and re-checks the status when the context runs again.
  bool wait_on(Ctx& c, RpmDevice& dev, bool in_resume) {
    if (c.kind == Ctx::Kind::kAtomic)
      throw std::logic_error("pm_runtime: an atomic context would wait on " + dev.name());
    st(dev).wait_queue.push_back(&c);
    c.waiting_on = &dev;
    begin_sleep(c, dev, in_resume);
    c.action = Action::block(TaskState::kUninterruptible);
    return true;
  }

  // The driver callback's wait for the hardware: a D sleep ended by a timer.
  bool callback_sleep(Ctx& c, const RpmDevice& dev, Time wait, bool in_resume) {
    begin_sleep(c, dev, in_resume);
    switch (c.kind) {
      case Ctx::Kind::kTask:
        c.timer_cpu = c.cpu();
        k.hrtimer_start(c.timer, now() + wait, c.timer_cpu);  // the sleep's hrtimer, on the caller's CPU
        c.action = Action::block(TaskState::kUninterruptible);
        break;
      case Ctx::Kind::kWorker:
        // The callback's hardware wait on the worker: a D sleep ending
        // exactly at now + wait (WorkExec::sleep_for(): no slack).
        c.woken_at = now() + wait;
        c.action = c.exec->sleep_for(wait);
        break;
      case Ctx::Kind::kAtomic:
        throw std::logic_error("pm_runtime: an atomic context would run the callback of " + dev.name());
    }
    return true;
  }

  // rpm_callback(), shared by rpm_suspend() and rpm_resume(): the driver's
  // CPU work (kCallback), then its wait for the hardware (kCallbackWait).
  // True when the context must give up the CPU (to run the work or to
  // sleep); false once the callback is over (f.pc == kCallbackDone).
  bool rpm_callback(Ctx& c, Frame& f, const RpmDevice& dev, Time cost, Time wait, bool in_resume) {
    if (f.pc == kCallback) {
      f.pc = kCallbackWait;
      if (cost > Time::zero()) {
        c.action = Action::run(cost.count());
        return true;
      }
    }
    f.pc = kCallbackDone;
    return wait > Time::zero() && callback_sleep(c, dev, wait, in_resume);
  }

  void remove_waiter(Ctx& c) {
    if (!c.waiting_on) return;
    auto& q = st(*c.waiting_on).wait_queue;
    q.erase(std::remove(q.begin(), q.end(), &c), q.end());
    c.waiting_on = nullptr;
  }

  // ------------------------------------------------------------ frames

  static void push(Ctx& c, Op op, RpmDevice& dev, unsigned flags) {
    Frame f;
    f.op = op;
    f.dev = &dev;
    f.flags = flags;
    c.stack.push_back(f);
  }
  // A nested call: the caller resumes at `resume_at` with the callee's
  // value in c.ret. The caller's Frame reference is invalid afterwards.
  static void call(Ctx& c, Pc resume_at, Op op, RpmDevice& dev, unsigned flags) {
    c.stack.back().pc = resume_at;
    push(c, op, dev, flags);
  }
  static void ret(Ctx& c, int v) {
    c.ret = v;
    c.stack.pop_back();
  }

  // Each returns true when the context must give up the CPU (c.action).

  // rpm_idle() for a driver without ->runtime_idle.
  bool rpm_idle(Ctx& c) {
    Frame& f = c.stack.back();
    RpmDevice& dev = *f.dev;
    int retval = check_suspend_allowed(dev);
    if (retval < 0) {
      // Conditions are wrong.
    } else if (dev.status_ != RpmStatus::kActive) {
      retval = -EAGAIN;  // idle notifications only in RPM_ACTIVE
    } else if (dev.request_pending_ && dev.request_ > RpmRequest::kIdle) {
      retval = -EAGAIN;  // any other pending request takes precedence
    }
    // (power.idle_notification is never set: no idle callback runs.)
    if (retval) {
      ret(c, retval);
      return false;
    }
    dev.request_ = RpmRequest::kNone;  // pending requests need to be canceled
    // No callback: "assume success", then `return rpm_suspend(dev, rpmflags | RPM_AUTO)`
    // (a tail call: the frame becomes rpm_suspend's).
    f.op = Op::kSuspend;
    f.pc = kRepeat;
    f.flags |= kRpmAuto;
    return false;
  }

  // rpm_suspend().
  bool rpm_suspend(Ctx& c) {
    Frame& f = c.stack.back();
    RpmDevice& dev = *f.dev;
    const RpmDeviceParams& p = dev.params_;
    for (;;) {
      switch (f.pc) {
        case kRepeat: {
          int retval = check_suspend_allowed(dev);
          if (retval < 0) {
            ret(c, retval);
            return false;
          }
          // Synchronous suspends are not allowed in the RPM_RESUMING state.
          if (dev.status_ == RpmStatus::kResuming && !(f.flags & kRpmAsync)) retval = -EAGAIN;
          if (retval) {
            ret(c, retval);
            return false;
          }
          // If the autosuspend_delay time hasn't expired yet, reschedule.
          if ((f.flags & kRpmAuto) && dev.status_ != RpmStatus::kSuspending) {
            Time expires = autosuspend_expiration(dev);
            if (expires != Time::zero()) {
              dev.request_ = RpmRequest::kNone;
              // Leave a timer that expires at or before `expires` alone:
              // pm_suspend_timer_fn() re-arms it. Otherwise arm it with a
              // quarter of the delay as slack ("to gather wakeups"): it
              // runs at the first hrtimer interrupt of its CPU from
              // `expires` on (a busy CPU's tick), at the latest at
              // expires + delay / 4.
              if (!(dev.timer_expires_ > Time::zero() && dev.timer_expires_ <= expires)) {
                DevState& d = st(dev);
                dev.timer_expires_ = expires;
                // hrtimer_start() (HRTIMER_MODE_ABS, not pinned): the calling
                // CPU's base, or a busy CPU's when called from an interrupt
                // on an idle CPU (timer migration) -- but a timer re-armed
                // from its own callback keeps its base (switch_hrtimer_base():
                // hrtimer_callback_running()).
                const Time slack = dev.params_.autosuspend_delay / 4;
                if (!d.timer_fn_running)
                  d.timer_cpu = k.hrtimer_target_cpu(std::max(c.cpu(), 0), expires + slack);
                k.hrtimer_start_range(d.suspend_timer, expires, slack, d.timer_cpu, &dev.name(), &d.why_group);
              }
              dev.timer_autosuspends_ = true;
              ret(c, 0);
              return false;
            }
          }
          // Other scheduled or pending requests need to be canceled.
          cancel_pending(dev);
          if (dev.status_ == RpmStatus::kSuspending) {
            if (f.flags & (kRpmAsync | kRpmNowait)) {
              ret(c, -EINPROGRESS);
              return false;
            }
            f.pc = kWait;  // wait for the other suspend running in parallel with us
            continue;
          }
          if (f.flags & kRpmAsync) {
            dev.request_ = (f.flags & kRpmAuto) ? RpmRequest::kAutosuspend : RpmRequest::kSuspend;
            queue_request(c, dev);
            ret(c, 0);
            return false;
          }
          update_runtime_status(c, dev, RpmStatus::kSuspending);
          f.pc = kCallback;
          continue;
        }
        case kWait:
          if (dev.status_ != RpmStatus::kSuspending) {
            f.pc = kRepeat;  // finish_wait(); goto repeat
            continue;
          }
          return wait_on(c, dev, false);
        case kCallback:
        case kCallbackWait:
          if (rpm_callback(c, f, dev, p.suspend_cost, p.suspend_wait, false)) return true;
          continue;
        case kCallbackDone: {
          // no_callback: (the callback succeeded)
          update_runtime_status(c, dev, RpmStatus::kSuspended);
          ++dev.suspends_;
          deactivate_timer(dev);
          RpmDevice* parent = dev.parent_;
          if (parent && parent->child_count_ > 0) --parent->child_count_;  // atomic_add_unless(-1, 0)
          wake_up_all(c, dev);
          if (dev.deferred_resume_) {
            dev.deferred_resume_ = false;
            call(c, kAfterDeferred, Op::kResume, dev, 0);  // rpm_resume(dev, 0); retval = -EAGAIN
            return false;
          }
          // Maybe the parent is now able to suspend.
          f.retval = 0;
          if (parent && !parent->params_.ignore_children) {
            call(c, kReturn, Op::kIdle, *parent, kRpmAsync);  // rpm_idle(parent, RPM_ASYNC)
            return false;
          }
          f.pc = kReturn;
          continue;
        }
        case kAfterDeferred:
          ret(c, -EAGAIN);
          return false;
        case kReturn:
          ret(c, f.retval);
          return false;
        default:
          throw std::logic_error("pm_runtime: rpm_suspend frame at a bad label");
      }
    }
  }

  // rpm_resume().
  bool rpm_resume(Ctx& c) {
    Frame& f = c.stack.back();
    RpmDevice& dev = *f.dev;
    const RpmDeviceParams& p = dev.params_;
    for (;;) {
      switch (f.pc) {
        case kRepeat:
          // Other scheduled or pending requests need to be canceled; an
          // autosuspend timer is left running (it re-checks on expiry).
          dev.request_ = RpmRequest::kNone;
          if (!dev.timer_autosuspends_) deactivate_timer(dev);
          if (dev.status_ == RpmStatus::kActive) {
            f.retval = 1;
            f.pc = kOut;
            continue;
          }
          if (dev.status_ == RpmStatus::kResuming || dev.status_ == RpmStatus::kSuspending) {
            if (f.flags & (kRpmAsync | kRpmNowait)) {
              if (dev.status_ == RpmStatus::kSuspending) {
                dev.deferred_resume_ = true;  // the suspending context resumes it afterwards
                if (f.flags & kRpmNowait) f.retval = -EINPROGRESS;
              } else {
                f.retval = -EINPROGRESS;
              }
              f.pc = kOut;
              continue;
            }
            f.pc = kWait;  // wait for the operation carried out in parallel with us
            continue;
          }
          if (f.flags & kRpmAsync) {
            dev.request_ = RpmRequest::kResume;
            queue_request(c, dev);
            f.retval = 0;
            f.pc = kOut;
            continue;
          }
          if (!f.parent && dev.parent_) {
            // Increment the parent's usage counter and resume it if necessary.
            f.parent = dev.parent_;
            ++f.parent->usage_count_;  // pm_runtime_get_noresume(parent)
            if (!f.parent->params_.ignore_children) {
              f.resumed_parent = true;
              call(c, kAfterParent, Op::kResume, *f.parent, 0);  // rpm_resume(parent, 0)
              return false;
            }
            f.pc = kRepeat;  // goto repeat
            continue;
          }
          // skip_parent:
          update_runtime_status(c, dev, RpmStatus::kResuming);
          f.pc = kCallback;
          continue;
        case kWait:
          if (dev.status_ != RpmStatus::kResuming && dev.status_ != RpmStatus::kSuspending) {
            f.pc = kRepeat;  // finish_wait(); goto repeat
            continue;
          }
          return wait_on(c, dev, true);
        case kAfterParent:
          if (f.resumed_parent && f.parent->status_ != RpmStatus::kActive) {
            f.retval = -EBUSY;
            f.pc = kOut;
            continue;
          }
          f.pc = kRepeat;
          continue;
        case kCallback:
        case kCallbackWait:
          if (rpm_callback(c, f, dev, p.resume_cost, p.resume_wait, true)) return true;
          continue;
        case kCallbackDone:
          // no_callback: (the callback succeeded)
          update_runtime_status(c, dev, RpmStatus::kActive);
          ++dev.resumes_;
          dev.last_busy_ = now();  // pm_runtime_mark_last_busy()
          if (f.parent) ++f.parent->child_count_;
          wake_up_all(c, dev);
          f.retval = 0;
          call(c, kOut, Op::kIdle, dev, kRpmAsync);  // rpm_idle(dev, RPM_ASYNC)
          return false;
        case kOut:
          f.pc = kReturn;
          if (f.parent) {
            // pm_runtime_put(parent) = __pm_runtime_idle(parent, RPM_GET_PUT | RPM_ASYNC).
            RpmDevice& parent = *f.parent;
            if (parent.usage_count_ > 0 && --parent.usage_count_ == 0) {
              call(c, kReturn, Op::kIdle, parent, kRpmAsync);
              return false;
            }
          }
          continue;
        case kReturn:
          ret(c, f.retval);
          return false;
        default:
          throw std::logic_error("pm_runtime: rpm_resume frame at a bad label");
      }
    }
  }

  // Runs the context's frames until one gives up the CPU (that action is
  // returned) or the outermost call returned (Action::exit(), value in c.ret).
  Action run(Ctx& c) {
    if (c.sleeping) finish_sleep(c);
    while (!c.stack.empty()) {
      bool yield = false;
      switch (c.stack.back().op) {
        case Op::kIdle: yield = rpm_idle(c); break;
        case Op::kSuspend: yield = rpm_suspend(c); break;
        case Op::kResume: yield = rpm_resume(c); break;
      }
      if (yield) return c.action;
    }
    return Action::exit();
  }

  // ------------------------------------------------------------ entry points

  // rpm_drop_usage_count(): true when the count reached 0 (go on); else
  // c.ret is the call's value (0: still in use; -EINVAL: underflow, the
  // "Runtime PM usage count underflow!" warning, the count is left at 0).
  static bool drop_usage_count(Ctx& c, RpmDevice& dev) {
    if (dev.usage_count_ <= 0) {
      c.ret = -EINVAL;
      return false;
    }
    if (--dev.usage_count_ > 0) {
      c.ret = 0;
      return false;
    }
    return true;
  }

  // The include/linux/pm_runtime.h wrappers around __pm_runtime_resume(),
  // __pm_runtime_idle() and __pm_runtime_suspend(): the usage count part,
  // then the rpm_* frame.
  void enter(Ctx& c, RpmDevice& dev, RpmApi api) {
    c.stack.clear();
    c.ret = 0;
    c.api = api;
    c.entry_dev = &dev;
    switch (api) {
      case RpmApi::kGetSync:       // __pm_runtime_resume(dev, RPM_GET_PUT)
      case RpmApi::kResumeAndGet:
        ++dev.usage_count_;
        push(c, Op::kResume, dev, 0);
        break;
      case RpmApi::kGet:           // __pm_runtime_resume(dev, RPM_GET_PUT | RPM_ASYNC)
        ++dev.usage_count_;
        push(c, Op::kResume, dev, kRpmAsync);
        break;
      case RpmApi::kPut:           // __pm_runtime_idle(dev, RPM_GET_PUT | RPM_ASYNC)
        if (drop_usage_count(c, dev)) push(c, Op::kIdle, dev, kRpmAsync);
        break;
      case RpmApi::kPutSync:       // __pm_runtime_idle(dev, RPM_GET_PUT)
        if (drop_usage_count(c, dev)) push(c, Op::kIdle, dev, 0);
        break;
      // 6.12 drivers call pm_runtime_mark_last_busy() right before
      // pm_runtime_put_autosuspend() and pm_runtime_put_sync_autosuspend()
      // (later kernels fold it into both); the model does it for them.
      case RpmApi::kPutAutosuspend:  // __pm_runtime_suspend(dev, RPM_GET_PUT | RPM_ASYNC | RPM_AUTO)
        dev.last_busy_ = now();
        if (drop_usage_count(c, dev)) push(c, Op::kSuspend, dev, kRpmAsync | kRpmAuto);
        break;
      case RpmApi::kPutSyncAutosuspend:  // __pm_runtime_suspend(dev, RPM_GET_PUT | RPM_AUTO)
        dev.last_busy_ = now();
        if (drop_usage_count(c, dev)) push(c, Op::kSuspend, dev, kRpmAuto);
        break;
      case RpmApi::kMarkLastBusy:  // pm_runtime_mark_last_busy()
        dev.last_busy_ = now();
        break;
    }
  }

  // The call's value once its frames returned.
  static int finish(Ctx& c) {
    if (c.api == RpmApi::kResumeAndGet) {
      // pm_runtime_resume_and_get(): on error, pm_runtime_put_noidle().
      if (c.ret < 0) {
        if (c.entry_dev->usage_count_ > 0) --c.entry_dev->usage_count_;
        return c.ret;
      }
      return 0;
    }
    return c.ret;
  }

  Ctx& atomic_begin(const Task* t, int cpu) {
    Ctx& c = *atomic;
    if (c.busy) throw std::logic_error("pm_runtime: nested atomic call");
    c.busy = true;
    c.irq_task = t;
    c.irq_cpu = cpu;
    c.stack.clear();
    c.ret = 0;
    return c;
  }
  void atomic_run(Ctx& c) {
    Action a = run(c);
    c.busy = false;
    if (a.kind != Action::Kind::kExit) throw std::logic_error("pm_runtime: an atomic context would sleep");
  }

  // pm_suspend_timer_fn(): the hrtimer of power.suspend_timer.
  void pm_suspend_timer_fn(DevState& d) {
    k.hrtimer_interrupt(d.timer_cpu, &d.suspend_timer);  // the CPU's other soft-expired timers run too
    RpmDevice& dev = d.dev;
    Time expires = dev.timer_expires_;
    // The kernel tests `expires < now`: there the hrtimer runs strictly
    // after its expiry; here it runs at it.
    if (expires > Time::zero() && expires <= now()) {
      dev.timer_expires_ = Time::zero();
      Ctx& c = atomic_begin(nullptr, d.timer_cpu);  // hardirq: no task
      push(c, Op::kSuspend, dev, dev.timer_autosuspends_ ? (kRpmAsync | kRpmAuto) : kRpmAsync);
      d.timer_fn_running = true;
      atomic_run(c);
      d.timer_fn_running = false;
    }
  }

  // pm_runtime_work(): serve dev->power.request on a pm_wq worker.
  Action pm_runtime_work(PmWork& w, WorkExec& x) {
    Ctx& c = w.ctx;
    if (x.step == 0) {
      if (w.running) throw std::logic_error("pm_runtime: pm_runtime_work of " + w.dev.name() + " re-entered");
      c.task = &x.worker();
      c.exec = &x;
      c.stack.clear();
      c.sleeping = false;
      c.ret = 0;
      RpmDevice& dev = w.dev;
      if (!dev.request_pending_) return Action::exit();
      RpmRequest req = dev.request_;
      dev.request_ = RpmRequest::kNone;
      dev.request_pending_ = false;
      switch (req) {
        case RpmRequest::kNone: return Action::exit();
        case RpmRequest::kIdle: push(c, Op::kIdle, dev, kRpmNowait); break;
        case RpmRequest::kSuspend: push(c, Op::kSuspend, dev, kRpmNowait); break;
        case RpmRequest::kAutosuspend: push(c, Op::kSuspend, dev, kRpmNowait | kRpmAuto); break;
        case RpmRequest::kResume: push(c, Op::kResume, dev, kRpmNowait); break;
      }
      w.running = true;
    }
    Action a = run(c);
    if (a.kind == Action::Kind::kExit) w.running = false;
    return a;
  }
};

// ===================================================================== PmRuntime

PmRuntime::PmRuntime(Kernel& k, WorkqueueSystem& wqs, Workqueue& pm_wq, const PmRuntimeParams& params,
                     RunnableTracker& tracker)
    : k_(k), wqs_(wqs), pm_wq_(pm_wq), tracker_(tracker) {
  auto all_names = [&] {
    std::string s;
    for (const auto& d : params.devices) s += (s.empty() ? "" : ", ") + d.name;
    return s;
  };
  for (const RpmDeviceParams& p : params.devices) {
    if (p.name.empty()) throw ModelError("pm_runtime: a device needs a name");
    for (const auto& d : devices_)
      if (d->name() == p.name) throw ModelError(fmt::format("pm_runtime: device '{}' is declared twice", p.name));
    auto d = std::make_unique<RpmDevice>();
    d->params_ = p;
    d->index_ = static_cast<int>(devices_.size());
    d->status_ = p.start_active ? RpmStatus::kActive : RpmStatus::kSuspended;  // pm_runtime_init() / pm_runtime_set_active()
    // update_autosuspend(): a negative delay with autosuspend in use takes
    // a usage reference and resumes the device (as pm_runtime_forbid()),
    // so it never suspends. The driver's probe set it before the run
    // starts: the device starts active, its resume callback not simulated.
    if (p.use_autosuspend && p.autosuspend_delay < Time::zero()) {
      d->usage_count_ = 1;
      d->status_ = RpmStatus::kActive;
    }
    devices_.push_back(std::move(d));
  }
  for (auto& d : devices_) {
    const std::string& pn = d->params_.parent;
    if (pn.empty()) continue;
    RpmDevice* parent = device(pn);
    if (!parent)
      throw ModelError(fmt::format("pm_runtime device '{}': unknown parent '{}' (devices: {})", d->name(), pn,
                                   all_names()));
    d->parent_ = parent;
  }
  // A parent chain must end; its length bounds the frame stacks.
  size_t longest = 1;
  for (auto& d : devices_) {
    std::vector<const RpmDevice*> chain{d.get()};
    for (const RpmDevice* p = d->parent_; p; p = p->parent_) {
      auto seen = std::find(chain.begin(), chain.end(), p);
      if (seen != chain.end()) {
        std::string s;
        for (auto it = seen; it != chain.end(); ++it) s += (*it)->name() + " -> ";
        throw ModelError(fmt::format("pm_runtime: device parents form a cycle: {}{}", s, p->name()));
      }
      chain.push_back(p);
    }
    longest = std::max(longest, chain.size());
  }
  // pm_runtime_set_active() of a child: the parent must be active (unless
  // it ignores its children), and counts the child.
  for (auto& d : devices_) {
    if (d->status_ != RpmStatus::kActive || !d->parent_) continue;
    RpmDevice& p = *d->parent_;
    if (p.status_ != RpmStatus::kActive && !p.params_.ignore_children)
      throw ModelError(fmt::format(
          "pm_runtime device '{}' starts active{} but its parent '{}' starts suspended "
          "(pm_runtime_set_active() fails with -EBUSY): set start_active on '{}' too",
          d->name(), d->params_.start_active ? "" : " (a negative autosuspend_delay holds it active)", p.name(),
          p.name()));
    ++p.child_count_;
  }
  // Deepest stack: a deferred resume inside a suspend (2), the resume of
  // every ancestor, and per level the rpm_idle() / pm_runtime_put(parent)
  // frames on top.
  impl_ = std::make_unique<Impl>(*this, 2 * longest + 6);
  impl_->atomic = std::make_unique<Impl::Ctx>(impl_.get(), Impl::Ctx::Kind::kAtomic);
  for (auto& d : devices_) impl_->devs.push_back(std::make_unique<Impl::DevState>(*impl_, *d));
}

PmRuntime::~PmRuntime() = default;

RpmDevice* PmRuntime::device(const std::string& name) {
  for (auto& d : devices_)
    if (d->name() == name) return d.get();
  return nullptr;
}

std::vector<std::string> PmRuntime::device_names() const {
  std::vector<std::string> v;
  v.reserve(devices_.size());
  for (const auto& d : devices_) v.push_back(d->name());
  return v;
}

int PmRuntime::call_nosleep(RpmDevice& dev, RpmApi api, QueueContext ctx) {
  if (may_sleep(api))
    throw ModelError(fmt::format("pm_runtime device '{}': {} may sleep; only a task body can make it (RpmCall)",
                                 dev.name(), rpm_api_name(api)));
  Impl::Ctx& c = impl_->atomic_begin(ctx.task, ctx.cpu);
  impl_->enter(c, dev, api);
  impl_->atomic_run(c);
  return Impl::finish(c);
}

// ===================================================================== RpmCall

struct RpmCall::Impl {
  explicit Impl(PmRuntime& pm) : rt(pm.impl_.get()), ctx(rt, PmRuntime::Impl::Ctx::Kind::kTask) {
    rt->calls.push_back(&ctx);
  }
  ~Impl() {
    if (!ctx.pm) return;  // the PmRuntime is gone
    ctx.pm->remove_waiter(ctx);
    auto& v = ctx.pm->calls;
    v.erase(std::remove(v.begin(), v.end(), &ctx), v.end());
  }
  PmRuntime::Impl* rt;
  PmRuntime::Impl::Ctx ctx;
  RpmDevice* dev = nullptr;
  RpmApi api = RpmApi::kGetSync;
  bool active = false;
  bool started = false;
  int result = 0;
};

RpmCall::RpmCall(PmRuntime& pm) : impl_(std::make_unique<Impl>(pm)) {}

RpmCall::~RpmCall() = default;

void RpmCall::begin(RpmDevice& dev, RpmApi api) {
  if (impl_->active)
    throw std::logic_error("pm_runtime: RpmCall::begin() while a call on " + impl_->dev->name() + " is in progress");
  impl_->dev = &dev;
  impl_->api = api;
  impl_->active = true;
  impl_->started = false;
  impl_->result = 0;
}

bool RpmCall::active() const { return impl_->active; }

Action RpmCall::step(Task& self) {
  Impl& s = *impl_;
  if (!s.active) return Action::exit();
  PmRuntime::Impl& rt = *s.ctx.pm;
  if (!s.started) {
    s.started = true;
    s.ctx.task = &self;
    // The caller may wake others (it finishes the transitions it starts):
    // its runnable time is tracked from its first call on.
    rt.track(self);
    rt.enter(s.ctx, *s.dev, s.api);
  }
  Action a = rt.run(s.ctx);
  if (a.kind == Action::Kind::kExit) {
    s.result = PmRuntime::Impl::finish(s.ctx);
    s.active = false;
  }
  return a;
}

int RpmCall::result() const { return impl_->result; }

}  // namespace schedlab
