// struct mutex (kernel/locking/mutex.c, 6.12; 6.18 is the same here): the
// kernel's sleeping lock, with optimistic spinning
// (CONFIG_MUTEX_SPIN_ON_OWNER, on for SMP arm64) and no priority
// inheritance (not PREEMPT_RT, where struct mutex is an rt_mutex).
// Drivers' locks use it (panthor's sched->lock); rt-app's and user
// space's mutexes are futexes, RtMutex (rt_mutex.h).
//
// mutex_lock() (__mutex_lock_common()):
//  - a free mutex is taken at once (__mutex_trylock());
//  - otherwise, while the owner runs on a CPU (owner_on_cpu()) and the
//    caller's need_resched() is clear, the caller spins on its CPU
//    (mutex_optimistic_spin(): busy, its CPU time charged), and takes the
//    mutex when the owner releases it. The spin fails when the owner
//    leaves its CPU (it sleeps or is preempted): the slow path follows.
//    It also fails when TIF_NEED_RESCHED is set on the spinner's CPU
//    (polled, so at once, whatever the preemption model and before the
//    resched IPI): the spinner calls schedule() in TASK_RUNNING (it stays
//    runnable), and takes the slow path when it runs again;
//  - the slow path: a last trylock, the FIFO wait list, and a sleep in
//    TASK_UNINTERRUPTIBLE until mutex_unlock() wakes the first waiter.
//    A woken waiter tries again; the first waiter that finds the mutex
//    taken again (by a spinner or a newcomer) sets HANDOFF and spins
//    while the owner runs; with HANDOFF set, the next unlock hands the
//    mutex straight to the first waiter (__mutex_handoff(): no
//    stealing). A first waiter whose spin a reschedule ended goes round
//    its loop runnable and spins again while the owner runs; one whose
//    owner left its CPU sleeps again.
// mutex_unlock() releases the mutex (or hands it off) and wakes the first
// waiter (__mutex_unlock_slowpath()).
//
// Simplified: the OSQ is FIFO and a spinning first waiter has HANDOFF
// set, so the kernel's choice among spinners is the model's (the first
// waiter, else the spinner that started first); but the model grants the
// mutex at the unlock itself, where the OSQ head must first see the
// release: a new locker (or the unlocking task locking again) may steal
// the mutex in that window in the kernel, never here. Nested OSQ spinners
// spin on their MCS node, not on the owner, to the same effect.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "models/kernel/task_body.h"

namespace schedlab {

class Kernel;
struct Task;

class KernelMutex {
 public:
  // Registers with `k`, which tells it when a task leaves its CPU or has
  // a reschedule pending while it spins. `max_tasks`: room for every task
  // that may ever contend (the lists then never grow in the hot loop).
  KernelMutex(Kernel& k, std::string name, size_t max_tasks = 16);
  ~KernelMutex();
  KernelMutex(const KernelMutex&) = delete;
  KernelMutex& operator=(const KernelMutex&) = delete;

  const std::string& name() const { return name_; }
  Task* owner() const { return owner_; }
  bool handoff() const { return handoff_; }

  // One step of mutex_lock() in `self`'s body: std::nullopt once self
  // owns the mutex; otherwise the action to return (a spin: busy until
  // the mutex ends it; a schedule() in TASK_RUNNING; or a sleep in D
  // until unlock() wakes it), after which the body calls lock_step()
  // again.
  std::optional<Action> lock_step(Task& self);
  // mutex_unlock() by its owner.
  void unlock(Task& self);

  // Kernel hooks: `t` left its CPU (slept or was preempted); TIF_NEED_
  // RESCHED was set on the CPU where `t` spins on this mutex.
  void switched_out(Task& t);
  void spinner_need_resched(Task& t);
  // Whether t's switch-out concerns this mutex: t spins on it, or owns it
  // while someone spins.
  bool watches(const Task& t) const;

  // How a contender's last spin ended (Task::mutex_spin_end).
  enum SpinEnd : uint8_t {
    kNoSpin = 0,     // no spin ended since the last step (or none began)
    kOwnerLeft,      // owner_on_cpu() failed
    kNeedResched,    // need_resched(): schedule() in TASK_RUNNING is next
    kRescheduled,    // ... and that schedule() is done
  };

 private:
  std::optional<Action> take(Task& self);
  std::optional<Action> spin(Task& self);
  std::optional<Action> reschedule(Task& self);  // the spin's fail path: schedule() runnable
  bool resched_pending(const Task& self) const;  // need_resched() on self's CPU
  void end_spin(Task& s, SpinEnd why);    // s leaves spinners_
  void set_watch(Task& t);
  Kernel& k_;
  std::string name_;
  Task* owner_ = nullptr;
  Task* granted_ = nullptr;        // given the mutex by unlock(), not yet back in lock_step() (PICKUP)
  bool handoff_ = false;           // MUTEX_FLAG_HANDOFF
  std::vector<Task*> waiters_;     // lock->wait_list, FIFO
  std::vector<Task*> spinners_;    // spinning now, in the order they started
};

}  // namespace schedlab
