// kernel/kthread.c kthread_worker_fn() / kthread_queue_work() and the
// priority following of the DRM RFC, as described in kthread_worker.h.
#include "models/kernel/kthread_worker.h"

#include <algorithm>
#include <fmt/format.h>

#include "models/errors.h"
#include "models/kernel/kernel.h"
#include "sim/log.h"

namespace schedlab {

namespace {
constexpr int kNoBoost = 1000;  // worse than any priority
constexpr int kMinNice = -20;
}  // namespace

const char* kthread_follow_name(KthreadFollow f) {
  switch (f) {
    case KthreadFollow::kNone: return "none";
    case KthreadFollow::kMinNice: return "min_nice";
    case KthreadFollow::kFifo: return "fifo";
  }
  return "?";
}

KthreadWorker::KthreadWorker(Kernel& k, const KthreadWorkerParams& params, RunnableTracker& tracker, Time start)
    : WorkExecutor(k), params_(params), tracker_(tracker) {
  const bool rt = is_rt_policy(params_.policy);
  if (params_.name.empty()) throw ModelError("kthread_worker: a worker needs a name");
  if (rt && (params_.rt_priority < 1 || params_.rt_priority > 99))
    throw ModelError(fmt::format("kthread_worker '{}': RT priority {} out of range 1..99", params_.name,
                                 params_.rt_priority));
  if (!rt && (params_.nice < -20 || params_.nice > 19))
    throw ModelError(fmt::format("kthread_worker '{}': nice {} out of range -20..19", params_.name, params_.nice));
  task_ = &k.create_task(params_.name, params_.name, params_.policy, rt ? 0 : params_.nice,
                         rt ? params_.rt_priority : 0, params_.cpus, true);
  k.set_body(*task_, this);
  tracker_.track(*task_);
  k.start_task_at(*task_, start);
}

void KthreadWorker::emit(WorkItemEvent::Phase phase, const WorkStruct& w, Time started, RunnableWait wait) {
  if (k_.observers().empty()) return;
  WorkItemEvent e;
  e.phase = phase;
  e.work = w.name;
  e.workqueue = params_.name;
  e.worker = phase == WorkItemEvent::Phase::kStart || phase == WorkItemEvent::Phase::kEnd ? task_ : nullptr;
  e.req_cpu = -1;
  e.cpu = phase == WorkItemEvent::Phase::kQueue ? w.queue_cpu : task_->cpu;
  e.queued = phase == WorkItemEvent::Phase::kQueue ? w.queued : cur_queued_;
  e.started = started;
  e.runnable_wait = wait.runnable;
  e.idle_exit_wait = wait.on_idle_cpu;
  e.flush_barrier = w.flush_barrier;
  for (auto* o : k_.observers()) o->on_work_item(k_.now(), e);
}

// A delayed work's timer_list (kthread_delayed_work_timer_fn()).
struct KthreadWorker::DelayedTimer final : public EventHandler {
  KthreadWorker* worker = nullptr;
  WorkStruct* work = nullptr;
  int cpu = 0;  // the CPU whose timer wheel holds it
  Timer timer;
  void on_event(uint64_t) override { worker->delayed_timer_fired(*this); }
};

KthreadWorker::~KthreadWorker() = default;

bool KthreadWorker::queue_work(WorkStruct& work, QueueContext ctx) { return queue_work(work, ctx, ctx.task); }

// queuing_blocked(): pending (queued or its timer armed) or being
// cancelled; nothing is queued. The follower still counts a pending
// work's new queuer (the header's assumption: the best priority among the
// queuers of pending works).
bool KthreadWorker::queuing_blocked(WorkStruct& work, const Task* on_behalf_of) {
  if (!work.pending && !work.canceling) return false;
  if (work.pending && on_behalf_of && on_behalf_of->normal_prio < work.boost_prio) {
    work.boost_prio = on_behalf_of->normal_prio;
    update_priority();
  }
  return true;
}

bool KthreadWorker::queue_work(WorkStruct& work, QueueContext ctx, const Task* on_behalf_of) {
  claim(work);
  if (queuing_blocked(work, on_behalf_of)) return false;
  queue_delayed(work, ctx, Time::zero(), on_behalf_of);
  return true;
}

bool KthreadWorker::queue_delayed_work(WorkStruct& work, QueueContext ctx, Time delay, const Task* on_behalf_of) {
  claim(work);
  if (queuing_blocked(work, on_behalf_of)) return false;
  queue_delayed(work, ctx, delay, on_behalf_of);
  return true;
}

bool KthreadWorker::mod_delayed_work(WorkStruct& work, QueueContext ctx, Time delay, const Task* on_behalf_of) {
  claim(work);
  // Another command cancelling it wins: the count of queued works stays.
  if (work.canceling) return true;
  // Taken back and queued again under the worker's lock: the following
  // priority is evaluated once, after both.
  const bool was_pending = cancel_pending(work, /*update=*/false);
  queue_delayed(work, ctx, delay, on_behalf_of);
  update_priority();
  return was_pending;
}

// A kthread_work is used with one worker (kthread_queue_work()'s
// WARN_ON_ONCE(work->worker != worker)).
void KthreadWorker::claim(WorkStruct& work) {
  if (!work.kthread_worker) work.kthread_worker = this;
  if (work.kthread_worker != this)
    throw ModelError(fmt::format("work '{}' queued on kthread_worker '{}' and on '{}': a kthread_work belongs to one "
                                 "worker (give each its own work name)",
                                 work.name, static_cast<const KthreadWorker*>(work.kthread_worker)->name(),
                                 params_.name));
}

// __kthread_queue_delayed_work(): pending from now; no delay inserts at
// once, otherwise add_timer() on the queuing CPU.
void KthreadWorker::queue_delayed(WorkStruct& work, QueueContext ctx, Time delay, const Task* on_behalf_of) {
  work.pending = true;
  work.requested = k_.now();
  work.boost_prio = on_behalf_of ? on_behalf_of->normal_prio : kNoBoost;
  if (delay <= Time::zero()) {
    insert_work(work, ctx);
    return;
  }
  DelayedTimer* d = timer_of(work);
  if (!d) {
    timers_.push_back(std::make_unique<DelayedTimer>());
    d = timers_.back().get();
    d->worker = this;
    d->work = &work;
    d->timer = Timer(k_.sim().queue(), d, 0, kTierTimerSoftirq);
  }
  d->cpu = ctx.cpu >= 0 ? ctx.cpu : task_->cpu;
  work.timer_armed = true;
  k_.hrtimer_start(d->timer, k_.timer_list_fire_time(delay), d->cpu);
}

KthreadWorker::DelayedTimer* KthreadWorker::timer_of(const WorkStruct& work) {
  for (auto& t : timers_)
    if (t->work == &work) return t.get();
  return nullptr;
}

void KthreadWorker::delayed_timer_fired(DelayedTimer& d) {
  // A timer_list runs from its CPU's tick (an hrtimer interrupt there).
  k_.hrtimer_interrupt(d.cpu);
  d.work->timer_armed = false;
  insert_work(*d.work, QueueContext{nullptr, d.cpu});
}

// kthread_insert_work(): on the work list; the worker is woken unless it
// is executing a work (it will find this one when that returns).
void KthreadWorker::insert_work(WorkStruct& work, QueueContext ctx) {
  work.queued = k_.now();
  work.queue_cpu = ctx.cpu;
  work.req_cpu = -1;
  work_list_.push_back(&work);
  emit(WorkItemEvent::Phase::kQueue, work);
  update_priority();
  if (!current_) k_.try_to_wake_up(*task_, ctx.task, ctx.cpu >= 0 ? ctx.cpu : task_->cpu);
}

// kthread_cancel_delayed_work_timer() (del_timer_sync()), then
// __kthread_cancel_work(): off the work list. Whether it was pending.
bool KthreadWorker::cancel_pending(WorkStruct& work, bool update) {
  if (!work.pending) return false;
  if (work.timer_armed) {
    k_.hrtimer_cancel(timer_of(work)->timer);
    work.timer_armed = false;
  } else {
    work_list_.remove(&work);
  }
  work.pending = false;
  if (update) update_priority();  // its queuer's priority no longer counts
  return true;
}

std::optional<Action> KthreadWorker::cancel_delayed_work_sync_step(Task& self, WorkStruct& work, bool* was_pending) {
  if (std::optional<Action> next; flush_waiting(self, &next)) return next;
  claim(work);
  const bool pending = cancel_pending(work);
  if (was_pending) *was_pending = pending;
  if (current_ != &work) return std::nullopt;
  // __kthread_cancel_work_sync(): kthread_flush_work() of the executing
  // work, queuing blocked meanwhile.
  ++work.canceling;
  return insert_flush(self, 0, &work);
}

std::optional<Action> KthreadWorker::flush_work_step(Task& self, WorkStruct& work) {
  if (std::optional<Action> next; flush_waiting(self, &next)) return next;
  if (work.kthread_worker != this) return std::nullopt;  // never queued: work->worker is NULL
  size_t at = 0;
  if (work.pending) {
    if (work.timer_armed)
      throw ModelError(fmt::format("kthread_flush_work() of '{}' while its delayed timer is armed: 6.12 inserts the "
                                   "flush work on the worker's delayed list, which no one runs, so the caller never "
                                   "returns (cancel it or let the timer fire first)",
                                   work.name));
    while (at < work_list_.size() && work_list_[at] != &work) ++at;
    if (at == work_list_.size())
      throw ModelError(fmt::format("kthread_work '{}' is pending on '{}' but not on its work list", work.name,
                                   params_.name));
    ++at;  // right after the work (kthread_insert_work(..., work->node.next))
  } else if (current_ != &work) {
    return std::nullopt;  // neither queued nor executing: noop
  }
  return insert_flush(self, at, nullptr);
}

bool KthreadWorker::flush_waiting(Task& self, std::optional<Action>* next) {
  for (const auto& f : flush_works_) {
    if (f->waiter != &self) continue;
    if (!f->done) {
      *next = Action::block(TaskState::kUninterruptible);
    } else {
      if (f->canceling) --f->canceling->canceling;  // the cancel's queuing block ends
      f->waiter = nullptr;
      f->canceling = nullptr;
      *next = std::nullopt;
    }
    return true;
  }
  return false;
}

// kthread_flush_work()'s kthread_insert_work() of its flush work at `at`
// in the work list (the worker woken unless it is executing a work);
// the caller sleeps (D) until the worker runs it.
Action KthreadWorker::insert_flush(Task& self, size_t at, WorkStruct* canceling) {
  FlushWork* f = nullptr;
  for (const auto& c : flush_works_)
    if (!c->waiter && !c->work.pending && !c->work.running_on) f = c.get();
  if (!f) {
    flush_works_.push_back(std::make_unique<FlushWork>());
    f = flush_works_.back().get();
    f->work.flush_barrier = true;
    f->work.kthread_worker = this;
  }
  f->waiter = &self;
  f->canceling = canceling;
  f->done = false;
  WorkStruct& fw = f->work;
  fw.pending = true;
  fw.queued = fw.requested = k_.now();
  fw.queue_cpu = self.cpu;
  fw.req_cpu = -1;
  fw.boost_prio = kNoBoost;
  work_list_.insert_at(at, &fw);
  emit(WorkItemEvent::Phase::kQueue, fw);
  if (!current_) k_.try_to_wake_up(*task_, &self, self.cpu);
  return Action::block(TaskState::kUninterruptible);
}

// The following policy: the best priority among the queuers of pending
// works and of the running one, capped by the variant, never below the
// worker's own policy.
void KthreadWorker::update_priority() {
  if (params_.follow == KthreadFollow::kNone) return;
  int best = cur_boost_;
  for (const WorkStruct* w : work_list_) best = std::min(best, w->boost_prio);
  const bool base_rt = is_rt_policy(params_.policy);
  const int base_prio = base_rt ? rt_priority_to_prio(params_.rt_priority) : nice_to_prio(params_.nice);
  Policy policy = params_.policy;
  int nice = base_rt ? 0 : params_.nice, rt_priority = base_rt ? params_.rt_priority : 0;
  if (best < base_prio) {
    if (rt_prio(best)) {
      if (params_.follow == KthreadFollow::kFifo) {
        policy = Policy::kFifo;
        rt_priority = kMaxRtPrio - 1 - best;
        nice = 0;
      } else if (!base_rt) {  // capped at MIN_NICE
        policy = Policy::kNormal;
        nice = kMinNice;
      }
    } else if (!base_rt) {
      policy = Policy::kNormal;
      nice = best - kDefaultPrio;
    }
  }
  if (task_->policy == policy && task_->nice() == nice && task_->rt_priority == rt_priority) return;
  SL_DEBUG("{:.6f} kthread_worker {}: follows to {} nice {} rtprio {}", k_.now().to_s(), params_.name,
           policy_name(policy), nice, rt_priority);
  k_.set_scheduler(*task_, policy, nice, rt_priority);
}

// kthread_worker_fn(): take the first work, run it, repeat; sleep when none.
Action KthreadWorker::next(Task& self) {
  for (;;) {
    if (current_) {
      Action a = exec_step();
      if (a.kind != Action::Kind::kExit) return a;
      WorkStruct& w = *current_;
      ++w.executions;
      emit(WorkItemEvent::Phase::kEnd, w, cur_started_, cur_wait_);
      w.running_on = nullptr;
      current_ = nullptr;
      // The flush work queued at the list's head by a
      // kthread_cancel_delayed_work_sync() completes: its caller wakes.
      // kthread_flush_work_fn(): complete() wakes the flush's caller.
      if (w.flush_barrier)
        for (const auto& f : flush_works_)
          if (&f->work == &w && f->waiter) {
            f->done = true;
            k_.try_to_wake_up(*f->waiter, task_, task_->cpu);
          }
      cur_boost_ = kNoBoost;
      update_priority();
      continue;
    }
    if (work_list_.empty()) return Action::block(TaskState::kInterruptible);
    WorkStruct& w = *work_list_.front();
    work_list_.pop_front();
    w.pending = false;
    w.running_on = this;
    current_ = &w;
    cur_boost_ = w.boost_prio;
    cur_queued_ = w.queued;
    cur_started_ = k_.now();
    cur_wait_ = tracker_.wait_between(*task_, w.queued, cur_started_);
    emit(WorkItemEvent::Phase::kStart, w, cur_started_, cur_wait_);
    begin(w);
  }
}

}  // namespace schedlab
