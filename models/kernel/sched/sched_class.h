// The scheduling-class interface, mirroring struct sched_class
// (kernel/sched/sched.h, 6.12). Names are the kernel's so a reader can hold
// a class next to fair.c or rt.c. Classes are walked in a fixed order
// (for_each_class): deadline > rt > fair > idle.
#pragma once

#include <cstdint>

#include "models/kernel/sched/task.h"

namespace schedlab {

class Kernel;
struct Rq;
struct SchedEntity;

// enqueue_task/dequeue_task flags (kernel/sched/sched.h).
enum : int {
  kDequeueSleep = 0x01,     // DEQUEUE_SLEEP: the task blocks
  kDequeueSave = 0x02,      // DEQUEUE_SAVE: matches ENQUEUE_RESTORE (attribute change)
  kDequeueMove = 0x04,      // DEQUEUE_MOVE
  kDequeueSpecial = 0x10,   // DEQUEUE_SPECIAL: special sleep states, never delayed
  kDequeueMigrating = 0x100,
  kDequeueDelayed = 0x200,  // DEQUEUE_DELAYED: completing a delayed dequeue
  kEnqueueWakeup = 0x01,    // ENQUEUE_WAKEUP
  kEnqueueRestore = 0x02,   // ENQUEUE_RESTORE
  kEnqueueMove = 0x04,      // ENQUEUE_MOVE
  kEnqueueHead = 0x10,      // ENQUEUE_HEAD (RT)
  kEnqueueInitial = 0x80,   // ENQUEUE_INITIAL: a new task
  kEnqueueMigrated = 0x100, // ENQUEUE_MIGRATED
  kEnqueueDelayed = 0x200,  // ENQUEUE_DELAYED: requeue of a delayed task
};

// wake flags (WF_*).
enum : int { kWfTtwu = 0x08, kWfFork = 0x04, kWfSync = 0x10, kWfRqSelected = 0x80 };

class SchedClass {
 public:
  explicit SchedClass(Kernel& k) : k_(k) {}
  virtual ~SchedClass() = default;
  virtual const char* name() const = 0;

  virtual void enqueue_task(Rq& rq, Task& p, int flags) = 0;
  // Returns false when the class kept the task queued (DELAY_DEQUEUE).
  virtual bool dequeue_task(Rq& rq, Task& p, int flags) = 0;
  virtual void yield_task(Rq& rq) {}
  // p (of this class) was woken or enqueued on rq whose curr is of this class.
  virtual void wakeup_preempt(Rq& rq, Task& p, int wake_flags) {}
  virtual Task* pick_task(Rq& rq) = 0;
  virtual void put_prev_task(Rq& rq, Task& prev, Task* next) {}
  virtual void set_next_task(Rq& rq, Task& p, bool first) {}
  virtual void task_tick(Rq& rq, Task& curr) {}
  virtual void task_fork(Task& p) {}
  // Charges runtime to rq->curr up to now (update_curr).
  virtual void update_curr(Rq& rq) {}
  // CPU for a waking or new task (select_task_rq_fair(), select_task_rq_rt());
  // it may be outside p's mask: Kernel::select_task_rq() falls back.
  virtual int select_task_rq(Task& p, int prev_cpu, int wake_flags) = 0;
  // Before the pick, prev about to be put (put_prev_task_balance ->
  // class->balance, from prev's class down): RT pulls when its priority
  // drops, fair balances a CPU about to go idle. Returns true when this or
  // a higher class now has something to run (stop the walk).
  virtual bool balance(Rq& rq, Task& prev) { return false; }
  // After the switch (the rq's balance_callback): RT pushes tasks that
  // cannot run here.
  virtual void balance_callback(Rq& rq) {}
  // An irq_work the class queued on this CPU (Kernel::irq_work_queue_on()):
  // RT's rto_push_irq_work_func().
  virtual void irq_work(Rq& rq) {}
  // After a wake-up enqueued p on rq (task_woken).
  virtual void task_woken(Rq& rq, Task& p) {}
  // p moves to new_cpu on wake-up (migrate_task_rq), before set_task_cpu().
  virtual void migrate_task_rq(Task& p, int new_cpu) {}
  // p leaves this class (switched_from), after it joined its new one.
  // task_change_group(): p, dequeued and put, joins the cpu cgroup its
  // task_group now names (sched_change_group(): only the fair class has
  // the hook; the others just move the entity, Kernel::set_task_rq()).
  virtual void task_change_group(Rq& rq, Task& p);
  // Fair only: __sched_group_set_shares()'s walk from a group entity up
  // its ancestors (update_load_avg(UPDATE_TG), update_cfs_group()).
  virtual void group_shares_changed(Rq& rq, SchedEntity& se) {}
  virtual void switched_from(Rq& rq, Task& p) {}
  // task_dead(): p exited; called from finish_task_switch() after the
  // switch away from it.
  virtual void task_dead(Task& p) {}
  virtual void switched_to(Rq& rq, Task& p) {}
  virtual void prio_changed(Rq& rq, Task& p, int old_prio) {}
  // entity_eligible() of queued task p on its cfs_rq (lag >= 0); classes
  // without virtual time call every task eligible.
  virtual bool entity_eligible(const Rq& rq, const Task& p) const { return true; }

 protected:
  Kernel& k_;
};

}  // namespace schedlab
