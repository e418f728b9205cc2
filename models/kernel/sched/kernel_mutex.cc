// struct mutex as described in kernel_mutex.h; function names in comments
// are kernel/locking/mutex.c's (6.12).
#include "models/kernel/sched/kernel_mutex.h"

#include <algorithm>
#include <fmt/format.h>

#include "models/errors.h"
#include "models/kernel/kernel.h"

namespace schedlab {

namespace {

bool listed(const std::vector<Task*>& v, const Task* t) { return std::find(v.begin(), v.end(), t) != v.end(); }

bool unlist(std::vector<Task*>& v, const Task* t) {
  auto it = std::find(v.begin(), v.end(), t);
  if (it == v.end()) return false;
  v.erase(it);
  return true;
}

}  // namespace

KernelMutex::KernelMutex(Kernel& k, std::string name, size_t max_tasks) : k_(k), name_(std::move(name)) {
  waiters_.reserve(max_tasks);
  spinners_.reserve(max_tasks);
  k_.register_kernel_mutex(this);
}

KernelMutex::~KernelMutex() {
  for (Task* s : spinners_) s->mutex_spinning_on = nullptr;
  k_.unregister_kernel_mutex(this);
}

bool KernelMutex::watches(const Task& t) const {
  return listed(spinners_, &t) || (owner_ == &t && !spinners_.empty());
}

void KernelMutex::set_watch(Task& t) { t.mutex_spin_watch = true; }

// need_resched() on self's CPU: TIF_NEED_RESCHED, which a spinner polls.
bool KernelMutex::resched_pending(const Task& self) const { return k_.rq(self.cpu).need_resched; }

std::optional<Action> KernelMutex::take(Task& self) {
  owner_ = &self;
  unlist(waiters_, &self);
  if (!spinners_.empty()) set_watch(self);  // the others spin on the new owner
  return std::nullopt;
}

std::optional<Action> KernelMutex::spin(Task& self) {
  spinners_.push_back(&self);
  self.mutex_spinning_on = this;
  set_watch(self);
  set_watch(*owner_);
  return Action::run_until(Time::max());  // busy until end_spin()
}

std::optional<Action> KernelMutex::reschedule(Task& self) {
  self.mutex_spin_end = kRescheduled;
  return Action::schedule();
}

void KernelMutex::end_spin(Task& s, SpinEnd why) {
  unlist(spinners_, &s);
  s.mutex_spinning_on = nullptr;
  s.mutex_spin_end = why;
  k_.end_busy_wait(s);
}

std::optional<Action> KernelMutex::lock_step(Task& self) {
  if (owner_ == &self) {
    // Given the mutex while spinning (the owner's release) or handed it
    // asleep or preempted (__mutex_handoff(): MUTEX_FLAG_PICKUP, picked
    // up here).
    if (granted_ != &self)
      throw ModelError(fmt::format("task {} locks mutex '{}', which it holds already: it would wait for itself for ever",
                                   self.comm, name_));
    granted_ = nullptr;
    self.mutex_spin_end = kNoSpin;
    unlist(waiters_, &self);
    return std::nullopt;
  }
  const auto ended = static_cast<SpinEnd>(self.mutex_spin_end);
  self.mutex_spin_end = kNoSpin;
  // mutex_optimistic_spin()'s fail path after need_resched():
  // schedule_preempt_disabled() in TASK_RUNNING.
  if (ended == kNeedResched) return reschedule(self);
  if (!listed(waiters_, &self)) {
    if (ended == kNoSpin) {
      // __mutex_lock_common(): __mutex_trylock(), then
      // mutex_optimistic_spin(): mutex_can_spin_on_owner() fails on
      // need_resched() (the fail path's schedule() first) or an owner off
      // its CPU.
      if (!owner_) return take(self);
      if (resched_pending(self)) return reschedule(self);
      if (owner_->on_cpu) return spin(self);
    }
    // The slow path: the trylock under wait_lock, then the wait list and
    // schedule() in TASK_UNINTERRUPTIBLE.
    if (!owner_) return take(self);
    waiters_.push_back(&self);
    return Action::block(TaskState::kUninterruptible);
  }
  // A waiter: woken by unlock(), or back from the schedule() of its
  // spin's fail path (the loop ran on in TASK_RUNNING):
  // __mutex_trylock_or_handoff(first); the first waiter then spins while
  // the owner runs. One whose spin failed because the owner left its CPU
  // tries once more and sleeps again.
  if (!owner_) return take(self);
  if (ended != kOwnerLeft && waiters_.front() == &self) {
    handoff_ = true;
    if (resched_pending(self)) return reschedule(self);
    if (owner_->on_cpu) return spin(self);
  }
  return Action::block(TaskState::kUninterruptible);
}

void KernelMutex::unlock(Task& self) {
  if (owner_ != &self)
    throw ModelError(fmt::format("task {} unlocks mutex '{}', which {}", self.comm, name_,
                                 owner_ ? fmt::format("{} holds", owner_->comm) : std::string("nobody holds")));
  Task* const first = waiters_.empty() ? nullptr : waiters_.front();
  owner_ = nullptr;
  if (handoff_ && first) {
    // __mutex_handoff(): straight to the first waiter.
    owner_ = first;
    handoff_ = false;
  } else if (!spinners_.empty()) {
    // The first spinner's cmpxchg finds the mutex free.
    owner_ = spinners_.front();
  }
  if (owner_) {
    granted_ = owner_;
    if (listed(spinners_, owner_)) end_spin(*owner_, kNoSpin);
  }
  // The others spin on the new owner only while it runs.
  if (!spinners_.empty()) {
    if (owner_ && owner_->on_cpu) {
      set_watch(*owner_);
    } else {
      while (!spinners_.empty()) end_spin(*spinners_.front(), kOwnerLeft);
    }
  }
  // wake_up_q(): the first waiter (a no-op for one spinning or already
  // awake).
  if (first && !listed(spinners_, first)) k_.try_to_wake_up(*first, &self, self.cpu);
}

void KernelMutex::spinner_need_resched(Task& t) { end_spin(t, kNeedResched); }

void KernelMutex::switched_out(Task& t) {
  // A spinner switched out without a need_resched() seen first.
  if (listed(spinners_, &t)) end_spin(t, kNeedResched);
  // The owner slept or was preempted: owner_on_cpu() fails every spinner.
  if (owner_ == &t)
    while (!spinners_.empty()) end_spin(*spinners_.front(), kOwnerLeft);
}

}  // namespace schedlab
