// The RT class (kernel/sched/rt.c, Linux 6.12): SCHED_FIFO and SCHED_RR on
// a FIFO per priority, RR time slices counted in ticks, and RT throttling
// (sched_rt_runtime_us per sched_rt_period_us, RT_RUNTIME_SHARE off).
// Single CPU behaviour is exact; push/pull between CPUs comes with the
// multi-core issue.
#include <algorithm>

#include "models/kernel/kernel.h"
#include "models/kernel/sched/classes.h"
#include "sim/log.h"

namespace schedlab {
namespace {

class RtClass final : public SchedClass {
 public:
  using SchedClass::SchedClass;
  const char* name() const override { return "rt"; }

  // enqueue_task_rt(): tail of its priority's list, or head (ENQUEUE_HEAD).
  void enqueue_task(Rq& rq, Task& p, int flags) override {
    auto& q = rq.rt.queue[p.prio];
    if (flags & kEnqueueHead)
      q.insert(q.begin(), &p);
    else
      q.push_back(&p);
    rq.rt.bitmap.set(p.prio);
    ++rq.rt.rt_nr_running;
    p.rt.on_rq = true;
  }

  bool dequeue_task(Rq& rq, Task& p, int flags) override {
    if (rq.curr == &p) update_curr(rq);
    remove(rq, p);
    return true;
  }

  // yield_task_rt(): to the tail of its list.
  void yield_task(Rq& rq) override { requeue(rq, *rq.curr); }

  // wakeup_preempt_rt(): a strictly higher priority preempts.
  void wakeup_preempt(Rq& rq, Task& p, int wake_flags) override {
    if (p.prio < rq.curr->prio) k_.resched_curr(rq);
  }

  // pick_task_rt(): first task of the highest non-empty priority, unless
  // the rt_rq is throttled.
  Task* pick_task(Rq& rq) override {
    if (!rq.rt.rt_nr_running || rq.rt.rt_throttled) return nullptr;
    return rq.rt.queue[highest_prio(rq)].front();
  }

  void put_prev_task(Rq& rq, Task& prev, Task* next) override { update_curr(rq); }
  void set_next_task(Rq& rq, Task& p, bool first) override { p.se.exec_start = k_.clock().count(); }

  // task_tick_rt(): RR tasks lose a tick of slice; at zero they go to the
  // tail of their list if someone else shares their priority.
  void task_tick(Rq& rq, Task& p) override {
    update_curr(rq);
    if (p.policy != Policy::kRr) return;
    if (--p.rt.time_slice_ticks > 0) return;
    p.rt.time_slice_ticks = k_.rr_timeslice_ticks();
    if (rq.rt.queue[p.prio].size() > 1) {
      requeue(rq, p);
      k_.resched_curr(rq);
    }
  }

  // update_curr_rt(): runtime accounting and the throttle check
  // (sched_rt_runtime_exceeded()).
  void update_curr(Rq& rq) override {
    Task& curr = *rq.curr;
    if (curr.sched_class != SchedClassId::kRt) return;
    int64_t now = k_.clock().count();
    int64_t delta = now - curr.se.exec_start;
    if (delta <= 0) return;
    curr.se.exec_start = now;
    curr.se.sum_exec_runtime += delta;
    const KernelParams& kp = k_.params();
    int64_t runtime = kp.rt_runtime.count();
    if (runtime < 0 || !k_.rt_throttling_enabled()) return;  // RUNTIME_INF, or 6.12 without RT_GROUP_SCHED
    rq.rt.rt_time += delta;
    if (runtime >= kp.rt_period.count()) return;
    if (!rq.rt.rt_throttled && rq.rt.rt_time > runtime) {
      rq.rt.rt_throttled = true;
      SL_DEBUG("{:.6f} cpu{} sched: RT throttling activated (rt_time {} > runtime {})", k_.clock().to_s(), rq.cpu,
               rq.rt.rt_time, runtime);
      k_.resched_curr(rq);
    }
  }

  // switched_to_rt(): a boosted task preempts a lower-priority current.
  void switched_to(Rq& rq, Task& p) override {
    if (rq.curr == &p) return;
    if (p.rt.on_rq && p.prio < rq.curr->prio) k_.resched_curr(rq);
    if (p.rt.on_rq && rq.curr->sched_class != SchedClassId::kRt) k_.resched_curr(rq);
  }

  // prio_changed_rt().
  void prio_changed(Rq& rq, Task& p, int old_prio) override {
    if (!p.rt.on_rq) return;
    if (rq.curr == &p) {
      // Lowered below a queued task: reschedule.
      if (old_prio < p.prio) k_.resched_curr(rq);
      if (highest_prio(rq) < p.prio) k_.resched_curr(rq);
    } else if (p.prio < rq.curr->prio) {
      k_.resched_curr(rq);
    }
  }

  bool has_runnable(const Rq& rq) const override { return rq.rt.rt_nr_running > 0; }

 private:
  // sched_find_first_bit() over the priority bitmap.
  static int highest_prio(const Rq& rq) { return static_cast<int>(rq.rt.bitmap._Find_first()); }
  static void remove(Rq& rq, Task& p) {
    auto& q = rq.rt.queue[p.prio];
    auto it = std::find(q.begin(), q.end(), &p);
    if (it == q.end()) return;
    q.erase(it);
    if (q.empty()) rq.rt.bitmap.reset(p.prio);
    --rq.rt.rt_nr_running;
    p.rt.on_rq = false;
  }
  static void requeue(Rq& rq, Task& p) {
    auto& q = rq.rt.queue[p.prio];
    auto it = std::find(q.begin(), q.end(), &p);
    if (it == q.end()) return;
    q.erase(it);
    q.push_back(&p);
  }
};

}  // namespace

std::unique_ptr<SchedClass> make_rt_class(Kernel& k) { return std::make_unique<RtClass>(k); }

}  // namespace schedlab
