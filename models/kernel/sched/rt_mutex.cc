#include "models/kernel/sched/rt_mutex.h"

#include <fmt/format.h>

#include <algorithm>

#include "models/errors.h"
#include "models/kernel/kernel.h"

namespace schedlab {

int RtMutex::top_waiter_prio() const { return waiters_.empty() ? kMaxRtPrio + 40 : waiters_.front()->prio; }

// __waiter_prio() (6.12 rtmutex.c): the wait list orders RT waiters by
// priority and every other waiter at DEFAULT_PRIO, so fair waiters queue
// first come, first served whatever their nice (equal keys go behind).
static int waiter_prio(const Task& t) { return rt_prio(t.prio) ? t.prio : kDefaultPrio; }

void RtMutex::enqueue_waiter(Task& t) {
  auto it = waiters_.begin();
  if (pi_)
    while (it != waiters_.end() && waiter_prio(**it) <= waiter_prio(t)) ++it;
  else
    it = waiters_.end();
  waiters_.insert(it, &t);
}

void RtMutex::requeue_waiter(Task& t) {
  auto it = std::find(waiters_.begin(), waiters_.end(), &t);
  if (it == waiters_.end()) return;
  waiters_.erase(it);
  enqueue_waiter(t);
}

// rt_mutex_steal() (6.12 rtmutex.c): a task that is not the top waiter
// takes a free lock only with a strictly higher waiter priority than the
// top waiter's (for a mutex, equal priorities never steal).
bool RtMutex::may_take(const Task& t) const {
  if (waiters_.empty() || waiters_.front() == &t) return true;
  return pi_ && waiter_prio(t) < waiter_prio(*waiters_.front());
}

void RtMutex::take(Kernel& k, Task& self) {
  auto it = std::find(waiters_.begin(), waiters_.end(), &self);
  if (it != waiters_.end()) waiters_.erase(it);
  owner_ = &self;
  self.blocked_on = nullptr;
  self.held_mutexes.push_back(this);
  if (pi_ && !waiters_.empty()) rt_mutex_adjust_prio_chain(k, self);
}

bool RtMutex::lock(Kernel& k, Task& self) {
  // A scenario bug, not a kernel behaviour to model: rt-app's mutexes are
  // not recursive, so the task would wait for itself for ever.
  if (owner_ == &self)
    throw ModelError(fmt::format("task {} locks mutex '{}', which it holds already: it would wait for itself for ever "
                                 "(mutexes are not recursive; unlock it first)",
                                 self.comm, name_));
  // try_to_take_rt_mutex(): free, and nobody waiting or stolen from the
  // woken top waiter that has not run yet.
  if (!owner_ && may_take(self)) {
    take(k, self);
    return true;
  }
  enqueue_waiter(self);
  self.blocked_on = this;
  // task_blocks_on_rt_mutex(): the owner's chain is boosted; a lock
  // between owners (its top waiter woken, not yet running) has none.
  if (pi_ && owner_) rt_mutex_adjust_prio_chain(k, *owner_);
  return false;
}

bool RtMutex::try_take(Kernel& k, Task& self) {
  if (owner_ || !may_take(self)) return false;
  take(k, self);
  return true;
}

void RtMutex::unlock(Kernel& k, Task& self) {
  if (owner_ != &self)
    throw ModelError(fmt::format("task {} unlocks mutex '{}', which it does not hold ({}; a wait on a condition "
                                 "needs its mutex locked first)",
                                 self.comm, name_, owner_ ? "task " + owner_->comm + " holds it" : "it is free"));
  auto& held = self.held_mutexes;
  held.erase(std::find(held.begin(), held.end(), this));
  owner_ = nullptr;
  if (waiters_.empty()) return;
  // mark_wakeup_next_waiter() (6.12 rtmutex.c): the lock is released with
  // its top waiter still queued, the unlocking task deboosted
  // (rt_mutex_adjust_prio()) before that waiter is woken (wake_up_q() in
  // rt_mutex_postunlock()), so the wake-up's placement sees it deboosted.
  // The waiter takes the lock when it runs (try_take()), unless a task of
  // higher priority has taken it first.
  Task* next = waiters_.front();
  if (pi_) rt_mutex_adjust_prio_chain(k, self);
  k.try_to_wake_up(*next, &self, self.cpu);
}

void rt_mutex_adjust_pi(Kernel& k, Task& p, int old_prio) {
  RtMutex* m = p.blocked_on;
  // rt_waiter_node_equal(): the waiter's key did not change, nothing to do.
  if (!m || !m->pi() || (rt_prio(old_prio) ? old_prio : kDefaultPrio) == waiter_prio(p)) return;
  m->requeue_waiter(p);
  if (Task* owner = m->owner()) rt_mutex_adjust_prio_chain(k, *owner);
}

int rt_mutex_pi_top_prio(const Task& p) {
  int prio = kMaxRtPrio + 40;
  for (const RtMutex* m : p.held_mutexes)
    if (m->pi()) prio = std::min(prio, m->top_waiter_prio());
  return prio;
}

void rt_mutex_adjust_prio_chain(Kernel& k, Task& p) {
  Task* t = &p;
  for (int depth = 0; t && depth < 1024; ++depth) {  // max_lock_depth
    const int prio = std::min(t->normal_prio, rt_mutex_pi_top_prio(*t));
    if (prio == t->prio) return;
    k.rt_mutex_setprio(*t, prio);
    // Re-sort t in the wait list it sits on, then continue with that owner.
    RtMutex* m = t->blocked_on;
    if (!m) return;
    m->requeue_waiter(*t);
    t = m->owner();
  }
}

}  // namespace schedlab
