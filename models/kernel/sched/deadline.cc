// The deadline class (kernel/sched/deadline.c, Linux 6.12), reduced to the
// SCHED_DEADLINE tasks the model creates: schedutil's sugov:N kthreads
// (sugov_kthread_create(), 6.12 cpufreq_schedutil.c: runtime 1 ms,
// deadline = period = 10 ms, SCHED_FLAG_SUGOV). The flag makes each a
// "special" entity (dl_entity_is_special()): update_curr_dl_se() charges it
// no runtime, so it is never throttled, and task_contending() /
// add_running_bw() skip it, so it adds no DL bandwidth (nothing of it in
// cpu_bw_dl(), no cpufreq kick). What is left is earliest-deadline-first
// order among the CPU's DL entities, above RT and fair; the fair server
// (fair_server.cc) is the other DL entity, compared with the first task
// here at the pick (Kernel::pick_next_task()).
//
// Simplified, and why: no CBS (runtime, throttling, the replenishment
// timer, GRUB reclaiming) since no entity here consumes runtime; no DL
// push/pull or cpudl (find_later_rq()), since each sugov:N kthread is the
// only DL task of its policy's CPUs: select_task_rq_dl() leaves a task on
// its CPU unless that CPU runs a DL task it cannot preempt (never: one
// sugov per policy) or does not fit it (dl_task_fits_capacity():
// capacity x 10 ms >= 1 ms x 1024, i.e. capacity >= 103, true on every
// shipped platform); the DL PELT signal (rq->avg_dl, cpu_util_dl()) is not
// kept: a sugov:N kthread running ~0.1 ms per switch adds a few units of
// util at most.
#include "models/kernel/kernel.h"
#include "models/kernel/sched/classes.h"

namespace schedlab {
namespace {

// dl_time_before(): a's deadline is strictly earlier.
bool dl_before(const Task& a, const Task& b) { return a.dl.deadline < b.dl.deadline; }

class DlClass final : public SchedClass {
 public:
  using SchedClass::SchedClass;
  const char* name() const override { return "dl"; }

  // enqueue_task_dl() -> enqueue_dl_entity(): a waking or new task's
  // instance is renewed by update_dl_entity() when its deadline passed or
  // its remaining runtime would overrun it (dl_entity_overflow()); for an
  // implicit deadline (deadline = period) that is replenish_dl_new_period():
  // deadline = now + dl_deadline. Then __enqueue_dl_entity(): into the
  // rb-tree by deadline, after equal ones.
  void enqueue_task(Rq& rq, Task& p, int flags) override {
    if (flags & (kEnqueueWakeup | kEnqueueInitial)) update_dl_entity(p);
    Task** link = &rq.dl.first;
    while (*link && !dl_before(p, **link)) link = &(*link)->dl.next;
    p.dl.next = *link;
    *link = &p;
    p.dl.on_rq = true;
    ++rq.dl.dl_nr_running;
  }

  bool dequeue_task(Rq& rq, Task& p, int) override {
    update_curr(rq);
    Task** link = &rq.dl.first;
    while (*link != &p) link = &(*link)->dl.next;
    *link = p.dl.next;
    p.dl.next = nullptr;
    p.dl.on_rq = false;
    --rq.dl.dl_nr_running;
    return true;
  }

  // wakeup_preempt_dl(): an earlier deadline preempts a running DL task.
  void wakeup_preempt(Rq& rq, Task& p, int) override {
    if (dl_before(p, *rq.curr)) {
      k_.note_why("dl: an earlier deadline preempts");
      k_.resched_curr(rq);
      return;
    }
    k_.note_why("dl: a later deadline waits");
  }

  // pick_task_dl() -> pick_next_dl_entity(): the leftmost deadline.
  Task* pick_task(Rq& rq) override { return rq.dl.first; }

  void put_prev_task(Rq& rq, Task&, Task*) override { update_curr(rq); }
  void set_next_task(Rq&, Task& p, bool) override { p.se.exec_start = k_.clock().count(); }
  void task_tick(Rq& rq, Task&) override { update_curr(rq); }

  // update_curr_dl(): update_curr_common()'s runtime accounting; the
  // special entity's update_curr_dl_se() returns before charging it.
  void update_curr(Rq& rq) override {
    Task& curr = *rq.curr;
    if (curr.sched_class != SchedClassId::kDeadline) return;
    const int64_t now = k_.clock().count();
    const int64_t delta = now - curr.se.exec_start;
    if (delta <= 0) return;
    curr.se.exec_start = now;
    curr.se.sum_exec_runtime += delta;
  }

  // select_task_rq_dl(): the task's CPU (see above for find_later_rq()).
  int select_task_rq(Task&, int prev_cpu, int) override {
    k_.note_why("dl: stays on its CPU (no DL task there it cannot preempt)");
    return prev_cpu;
  }

  // balance_dl(): no DL pull (above); the walk stops while a DL task is
  // runnable here (sched_dl_runnable()).
  bool balance(Rq& rq, Task&) override { return rq.dl.dl_nr_running > 0; }

 private:
  // update_dl_entity(): dl_time_before(deadline, now) or
  // dl_entity_overflow(): runtime / (deadline - now) > dl_runtime /
  // dl_period. A special entity's runtime stays dl_runtime, so the second
  // holds whenever less than a period is left.
  void update_dl_entity(Task& p) const {
    const Time now = k_.clock();
    const SchedDlEntity& dl = p.dl;
    const bool overflow = static_cast<__int128>(dl.dl_runtime.count()) * dl.dl_period.count() >
                          static_cast<__int128>((dl.deadline - now).count()) * dl.dl_runtime.count();
    if (dl.deadline < now || overflow) p.dl.deadline = now + p.dl.dl_deadline;
  }
};

}  // namespace

std::unique_ptr<SchedClass> make_dl_class(Kernel& k) { return std::make_unique<DlClass>(k); }

}  // namespace schedlab
