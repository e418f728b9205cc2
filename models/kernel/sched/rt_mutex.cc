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

bool RtMutex::lock(Kernel& k, Task& self) {
  // A scenario bug, not a kernel behaviour to model: rt-app's mutexes are
  // not recursive, so the task would wait for itself for ever.
  if (owner_ == &self)
    throw ModelError(fmt::format("task {} locks mutex '{}', which it holds already: it would wait for itself for ever "
                                 "(mutexes are not recursive; unlock it first)",
                                 self.comm, name_));
  if (!owner_) {
    owner_ = &self;
    self.held_mutexes.push_back(this);
    return true;
  }
  enqueue_waiter(self);
  self.blocked_on = this;
  if (pi_) rt_mutex_adjust_prio_chain(k, *owner_);
  return false;
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
  Task* next = waiters_.front();
  waiters_.erase(waiters_.begin());
  owner_ = next;
  next->blocked_on = nullptr;
  next->held_mutexes.push_back(this);
  // mark_wakeup_next_waiter() (6.12 rtmutex.c) deboosts the unlocking task
  // (rt_mutex_adjust_prio()) before the waiter is woken (wake_up_q() in
  // rt_mutex_postunlock()): the wake-up's placement sees it deboosted.
  if (pi_) {
    rt_mutex_adjust_prio_chain(k, self);
    rt_mutex_adjust_prio_chain(k, *next);
  }
  k.try_to_wake_up(*next, &self, self.cpu);
}

void rt_mutex_adjust_pi(Kernel& k, Task& p, int old_prio) {
  RtMutex* m = p.blocked_on;
  // rt_waiter_node_equal(): the waiter's key did not change, nothing to do.
  if (!m || !m->pi() || (rt_prio(old_prio) ? old_prio : kDefaultPrio) == waiter_prio(p)) return;
  m->requeue_waiter(p);
  if (Task* owner = m->owner()) rt_mutex_adjust_prio_chain(k, *owner);
}

void rt_mutex_adjust_prio_chain(Kernel& k, Task& p) {
  Task* t = &p;
  for (int depth = 0; t && depth < 1024; ++depth) {  // max_lock_depth
    int prio = t->normal_prio;
    for (const RtMutex* m : t->held_mutexes) prio = std::min(prio, m->top_waiter_prio());
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
