// rt_mutex with priority inheritance (kernel/locking/rtmutex.c, 6.12), as
// PI futexes (pthread mutexes with PTHREAD_PRIO_INHERIT) use it: waiters
// queue by priority (RT waiters; fair ones all at DEFAULT_PRIO, FIFO among
// equals); the owner runs at the priority of
// its top waiter while that is higher than its own, transitively along a
// chain of blocked owners. With PI off the mutex is a plain futex: FIFO
// waiters, no boosting. Simplified: the kernel's futex hash bucket queues
// waiters by their normal priority (futex_q plist: RT waiters ahead of
// fair ones, FIFO among equals), so an RT waiter on a non-PI mutex is
// woken first there; here arrival order decides.
//
// Unlock releases the mutex and wakes its top waiter, which takes it when
// it runs, unless a task of strictly higher priority took it meanwhile
// (rt_mutex_steal()); then it waits again. Without PI the woken waiter's
// turn is kept (the futex model has no barging).
#pragma once

#include <string>
#include <vector>

namespace schedlab {

class Kernel;
struct Task;

class RtMutex {
 public:
  // `max_waiters`: room for every task that may ever wait (the wait list
  // then never grows in the hot loop).
  RtMutex(std::string name, bool pi, size_t max_waiters = 0) : name_(std::move(name)), pi_(pi) {
    waiters_.reserve(max_waiters);
  }
  const std::string& name() const { return name_; }
  Task* owner() const { return owner_; }

  // Returns true if `self` now owns the mutex; false if it must block
  // (it is queued and the owner chain boosted).
  bool lock(Kernel& k, Task& self);
  // A waiter woken by unlock() takes the mutex (true), or finds it taken
  // by a higher-priority task and must block again (false).
  bool try_take(Kernel& k, Task& self);
  // Releases; the next owner (if any) is woken. `self` is deboosted.
  void unlock(Kernel& k, Task& self);
  int top_waiter_prio() const;  // kMaxRtPrio + 40 when none
  bool pi() const { return pi_; }
  // A waiter's priority changed: keep the list in priority order.
  void requeue_waiter(Task& t);

 private:
  void enqueue_waiter(Task& t);
  bool may_take(const Task& t) const;
  void take(Kernel& k, Task& self);
  std::string name_;
  bool pi_;
  Task* owner_ = nullptr;
  std::vector<Task*> waiters_;  // priority order, FIFO among equals
};

// The priority the top waiter of the PI mutexes p holds lends it (the
// prio of rt_mutex_get_top_task(p), 6.12 rtmutex.c); kMaxRtPrio + 40 when
// none waits. A plain (non-PI) mutex lends nothing.
int rt_mutex_pi_top_prio(const Task& p);

// The effective priority of p from its own priority and the top waiters of
// the mutexes it holds (rt_mutex_adjust_prio / __rt_effective_prio), then
// follows the chain if p is itself blocked on a mutex.
void rt_mutex_adjust_prio_chain(Kernel& k, Task& p);

// rt_mutex_adjust_pi() (6.12 rtmutex.c, from __sched_setscheduler()): p,
// blocked on a PI mutex, changed priority from old_prio; if its place in
// the wait list changes (RT waiters by priority, fair ones all at
// DEFAULT_PRIO), it is re-sorted and the owners' chain re-walked.
void rt_mutex_adjust_pi(Kernel& k, Task& p, int old_prio);

}  // namespace schedlab
