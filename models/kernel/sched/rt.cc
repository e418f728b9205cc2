// The RT class (kernel/sched/rt.c, Linux 6.12): SCHED_FIFO and SCHED_RR on
// a FIFO per priority, RR time slices counted in ticks, and RT throttling
// (sched_rt_runtime_us per sched_rt_period_us, RT_RUNTIME_SHARE off).
// Across CPUs: select_task_rq_rt() and find_lowest_rq() over cpupri
// (CPUs without RT work are the lowest level, idle or not, as cpupri's
// CPUPRI_NORMAL) and the domain walk with cpumask_any_and_distribute();
// the pushable_tasks plist (a preempted task re-added at the tail of its
// priority); push of tasks that cannot run where they are queued
// (push_rt_tasks from task_woken_rt and the balance callback); and, when a
// CPU's RT priority drops (balance_rt -> pull_rt_task), RT_PUSH_IPI's loop
// of irq_work over the overloaded CPUs, each pushing its tasks, or with
// the feature off the direct pull. Capacity fitness
// (rt_task_fits_capacity(), CONFIG_UCLAMP_TASK on asymmetric systems): the
// CPU's capacity must reach the task's min(uclamp_min, uclamp_max), which
// for an RT task is sched_util_clamp_min_rt_default (1024) unless set, so
// RT tasks seek the biggest CPUs; without CONFIG_UCLAMP_TASK every CPU
// fits. The distribute rotation of find_lowest_rq() is the CPU's
// distribute_cpu_mask_prev, shared with the other
// cpumask_any_and_distribute() users modelled (the workqueue's kick_pool(),
// sched_setaffinity()), as in the kernel. Simplified: pushes and pulls
// happen at once under the model's serial locking, so
// find_lock_lowest_rq()'s retries never fire. The README lists these.
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

  // enqueue_task_rt(): tail of its priority's list, or head (ENQUEUE_HEAD);
  // back where it was for a restore without ENQUEUE_MOVE (move_entity()).
  void enqueue_task(Rq& rq, Task& p, int flags) override {
    auto& q = rq.rt.queue[p.prio];
    if ((flags & (kEnqueueRestore | kEnqueueMove)) == kEnqueueRestore)
      q.insert(q.begin() + static_cast<std::ptrdiff_t>(std::min(p.rt.saved_pos, q.size())), &p);
    else if (flags & kEnqueueHead)
      q.insert(q.begin(), &p);
    else
      q.push_back(&p);
    rq.rt.bitmap.set(p.prio);
    ++rq.rt.rt_nr_running;
    if (p.nr_cpus_allowed > 1) ++rq.rt.rt_nr_migratory;  // inc_rt_migration()
    p.rt.on_rq = true;
    if (rq.curr != &p && p.nr_cpus_allowed > 1) enqueue_pushable(rq, p);
    k_.start_rt_bandwidth(rq.cpu);  // inc_rt_group()
    if (!rq.rt.rt_throttled) k_.cpufreq_update_util(rq, 0);  // enqueue_top_rt_rq(): kick cpufreq
  }

  bool dequeue_task(Rq& rq, Task& p, int flags) override {
    update_curr(rq);  // dequeue_task_rt(): the running RT task's, whichever leaves
    if ((flags & (kDequeueSave | kDequeueMove)) == kDequeueSave) {
      const auto& q = rq.rt.queue[p.prio];
      p.rt.saved_pos = static_cast<size_t>(std::find(q.begin(), q.end(), &p) - q.begin());
    }
    remove(rq, p);
    // dequeue_rt_entity() ends in enqueue_top_rt_rq() too: cpufreq is
    // kicked with the task gone (so an RT floor lifts at once).
    if (!rq.rt.rt_throttled) k_.cpufreq_update_util(rq, 0);
    return true;
  }

  // yield_task_rt(): to the tail of its list.
  void yield_task(Rq& rq) override { requeue(rq, *rq.curr); }

  // wakeup_preempt_rt(): a strictly higher priority preempts; an equal
  // one only to make room (check_preempt_equal_prio()).
  void wakeup_preempt(Rq& rq, Task& p, int wake_flags) override {
    if (p.prio < rq.curr->prio) {
      k_.note_why("rt: a strictly higher RT priority preempts");
      k_.resched_curr(rq);
      return;
    }
    k_.note_why(p.prio == rq.curr->prio ? "rt: an equal RT priority waits its turn" : "rt: a lower RT priority waits");
    if (p.prio == rq.curr->prio && !rq.need_resched && k_.nr_cpus() > 1) check_preempt_equal_prio(rq, p);
  }

  // pick_task_rt(): first task of the highest non-empty priority, unless
  // the rt_rq is throttled.
  Task* pick_task(Rq& rq) override {
    if (!rq.rt.rt_nr_running || rq.rt.rt_throttled) return nullptr;
    return rq.rt.queue[highest_prio(rq)].front();
  }

  // put_prev_task_rt(): a preempted task still queued becomes pushable.
  void put_prev_task(Rq& rq, Task& prev, Task* next) override {
    update_curr(rq);
    update_rt_rq_load_avg(rq.pelt.rq_clock_pelt(), rq.avg_rt, true);
    if (prev.rt.on_rq && prev.nr_cpus_allowed > 1) enqueue_pushable(rq, prev);
  }
  void set_next_task(Rq& rq, Task& p, bool first) override {
    dequeue_pushable(rq, p);
    p.se.exec_start = k_.clock().count();
    // The RT signal was not running until now (prev was not RT).
    if (first && rq.curr->sched_class != SchedClassId::kRt)
      update_rt_rq_load_avg(rq.pelt.rq_clock_pelt(), rq.avg_rt, false);
  }

  // task_tick_rt(): RR tasks lose a tick of slice; at zero they go to the
  // tail of their list if someone else shares their priority.
  void task_tick(Rq& rq, Task& p) override {
    update_curr(rq);
    update_rt_rq_load_avg(rq.pelt.rq_clock_pelt(), rq.avg_rt, true);
    if (p.policy != Policy::kRr) return;
    if (--p.rt.time_slice_ticks > 0) return;
    p.rt.time_slice_ticks = k_.rr_timeslice_ticks();
    if (rq.rt.queue[p.prio].size() > 1) {
      requeue(rq, p);
      k_.note_why("SCHED_RR timeslice used: to the tail behind an equal priority");
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
    // sched_rt_runtime_exceeded(): true for a throttled rt_rq, whose curr
    // (a task boosted into it while running) then stops.
    if (rq.rt.rt_throttled) {
      k_.resched_curr(rq);
      k_.start_rt_bandwidth(rq.cpu);
      return;
    }
    if (runtime >= kp.rt_period.count()) return;
    if (rq.rt.rt_time > runtime) {
      // "Don't actually throttle groups that have no runtime assigned but
      // accrue some time due to boosting": with rt_runtime 0 the time is
      // dropped and RT runs on.
      if (runtime == 0) {
        rq.rt.rt_time = 0;
        return;
      }
      rq.rt.rt_throttled = true;
      rq.nr_running -= rq.rt.rt_nr_running;  // sched_rt_rq_dequeue() -> dequeue_top_rt_rq()
      SL_DEBUG("{:.6f} cpu{} sched: RT throttling activated (rt_time {} > runtime {})", k_.clock().to_s(), rq.cpu,
               rq.rt.rt_time, runtime);
      k_.note_why("RT throttled: the rt_rq used its rt_runtime in this rt_period");
      k_.resched_curr(rq);
      k_.start_rt_bandwidth(rq.cpu);
    }
  }

  // switched_to_rt(): a task that became RT (a PI boost, setscheduler)
  // preempts a lower-priority current; queued behind a higher one on an
  // overloaded rq, it is pushed (rt_queue_push_tasks(); the kernel runs
  // the push as a balance callback before the class change returns, here
  // at once). The running task itself only closes the RT signal's time so
  // far as not running (its set_next_task(first = false) does not): its
  // RT running time counts from now (6.1-6.18 alike).
  void switched_to(Rq& rq, Task& p) override {
    if (rq.curr == &p) {
      update_rt_rq_load_avg(rq.pelt.rq_clock_pelt(), rq.avg_rt, false);
      return;
    }
    if (!p.rt.on_rq) return;
    if (p.prio < rq.curr->prio) k_.resched_curr(rq);
    if (p.nr_cpus_allowed > 1 && rq.rt.nr_pushable > 0 && k_.nr_cpus() > 1) push_rt_tasks(rq);
  }

  // switched_from_rt(): a CPU left with no RT task after p left the class
  // pulls one (rt_queue_pull_task(); the kernel runs the pull as a balance
  // callback after switched_to of p's new class, here at once).
  void switched_from(Rq& rq, Task& p) override {
    if (!p.on_rq || rq.rt.rt_nr_running || k_.nr_cpus() == 1) return;
    pull_rt_task(rq);
  }

  // prio_changed_rt(): a running task whose priority drops pulls
  // higher-priority work waiting elsewhere (rt_queue_pull_task(); the
  // kernel runs the pull as a balance callback before the change returns,
  // here at once), and reschedules if a queued task now beats it. (The
  // unconditional reschedule of a drop is the !CONFIG_SMP branch: an SMP
  // kernel on one CPU only finds nothing to pull.)
  void prio_changed(Rq& rq, Task& p, int old_prio) override {
    if (!p.rt.on_rq) return;
    if (rq.curr == &p) {
      if (old_prio < p.prio && k_.nr_cpus() > 1) pull_rt_task(rq);
      if (highest_prio(rq) < p.prio) k_.resched_curr(rq);
    } else if (p.prio < rq.curr->prio) {
      k_.resched_curr(rq);
    }
  }


  // select_task_rq_rt(): stay on the previous CPU unless an RT task of equal
  // or higher priority runs there; then the lowest-priority CPU, if lower.
  int select_task_rq(Task& p, int prev_cpu, int wake_flags) override {
    if (!(wake_flags & (kWfTtwu | kWfFork))) {
      k_.note_why("rt: not a wake-up or fork: stays");
      return prev_cpu;
    }
    // prev_cpu may be outside p's mask (a new task forked on such a CPU):
    // as in 6.12 it is kept unless a lower-priority CPU is found, and
    // select_task_rq() falls back to the first allowed CPU.
    int cpu = prev_cpu;
    const Task& curr = *k_.rq(cpu).curr;
    // rt_task(curr): an RT task, or on 6.1/6.6 a DL one too.
    const bool curr_rt = curr.sched_class == SchedClassId::kRt ||
                         (curr.sched_class == SchedClassId::kDeadline && k_.version_info().rt_task_counts_dl);
    bool test = curr_rt && (curr.nr_cpus_allowed < 2 || curr.prio <= p.prio);
    k_.note_why("rt: prev runs no pinned RT task nor one of equal or higher priority, and fits: stays");
    if (test || !k_.rt_task_fits_capacity(p, cpu)) {
      int target = find_lowest_rq(p, this_cpu_or(cpu));
      // A move only for fitness that found no fitting CPU: stay.
      if (!test && target >= 0 && !k_.rt_task_fits_capacity(p, target)) {
        k_.note_why("rt: prev does not fit (rt_task_fits_capacity) and no lower-priority CPU does: stays");
        return cpu;
      }
      if (target >= 0 && p.prio < rq_highest_prio(k_.rq(target))) {
        cpu = target;
        k_.note_why(test ? "rt: prev runs a pinned RT task or one of equal or higher priority: find_lowest_rq() (cpupri)"
                         : "rt: prev does not fit (rt_task_fits_capacity): find_lowest_rq() (cpupri)");
      } else {
        k_.note_why("rt: find_lowest_rq() found no CPU running a lower priority: stays");
      }
    }
    return cpu;
  }

  // task_woken_rt(): a woken task that cannot preempt here is pushed:
  // behind an RT task of equal or higher priority or a DL task.
  void task_woken(Rq& rq, Task& p) override {
    const Task& curr = *rq.curr;
    const bool rt_or_dl = curr.sched_class == SchedClassId::kRt || curr.sched_class == SchedClassId::kDeadline;
    if (!p.on_cpu && !rq.need_resched && p.nr_cpus_allowed > 1 && rt_or_dl &&
        (curr.nr_cpus_allowed < 2 || curr.prio <= p.prio))
      push_rt_tasks(rq);
  }

  // balance_rt(): prev leaves the RT queue or drops below the rq's best:
  // pull higher-priority work waiting elsewhere.
  bool balance(Rq& rq, Task& prev) override {
    if (!prev.rt.on_rq || prev.sched_class != SchedClassId::kRt) {
      if (k_.nr_cpus() > 1 && rq_highest_prio(rq) > prev.prio) pull_rt_task(rq);
    }
    return rq.rt.rt_nr_running > 0 && !rq.rt.rt_throttled;
  }

  void balance_callback(Rq& rq) override {
    if (k_.nr_cpus() > 1 && rq.rt.nr_pushable > 0) push_rt_tasks(rq);
  }

  // rto_push_irq_work_func() (RT_PUSH_IPI): this overloaded CPU pushes
  // what it can, then passes the work to the next overloaded CPU.
  void irq_work(Rq& rq) override {
    while (rq.rt.nr_pushable > 0 && push_rt_task(rq)) {
    }
    const int next = rto_next_cpu();
    if (next >= 0) k_.irq_work_queue_on(next);
  }

 private:
  // rt_rq->overloaded: the CPU is in rd->rto_mask (rt_overloaded()'s
  // count, the push loop's walk); by version (KernelVersionInfo).
  bool rt_overloaded(const Rq& rq) const {
    if (k_.version_info().rt_overload_by_migratory) return rq.rt.rt_nr_running > 1 && rq.rt.rt_nr_migratory > 0;
    return rq.rt.nr_pushable > 0;
  }
  // rt_rq->highest_prio.curr: the best queued RT priority, or MAX_RT_PRIO
  // when none (the kernel's init_rt_rq() uses MAX_RT_PRIO-1; no RT task
  // here has priority 99, so the two compare alike).
  static int rq_highest_prio(const Rq& rq) {
    return rq.rt.rt_nr_running ? highest_prio(rq) : kMaxRtPrio;
  }
  // The CPU's cpupri level as cpupri_find() reads it (6.12 cpupri.c): a CPU
  // whose fair server or a DL task (a sugov:N kthread) is on its DL
  // run-queue is CPUPRI_HIGHER (inc_dl_deadline()), above every RT
  // priority: in no level's mask, so never in the lowest mask either.
  int cpupri_level(int c) const {
    const Rq& rq = k_.rq(c);
    if (rq.fair_server.running || rq.dl.dl_nr_running > 0) return kCpupriHigher;
    return rq_highest_prio(rq);
  }
  // Below every RT priority (prio 0 is the highest), so no task's prio is
  // lower than it.
  static constexpr int kCpupriHigher = -1;
  // find_lowest_rq() (6.12 rt.c): the lowest_mask is the allowed CPUs at
  // the lowest cpupri level below p (cpupri_find(); on asymmetric systems
  // cpupri_find_fitness() takes the lowest level with a CPU that fits p,
  // and only if no level has one ignores fitness). From it: p's own CPU
  // (cache-hot); else, walking p's CPU's SD_WAKE_AFFINE domains bottom-up,
  // this_cpu (the CPU running this code: smp_processor_id()) if the domain
  // spans it, else the next CPU of the mask in the domain after the one
  // this_cpu last handed out (cpumask_any_and_distribute()); else this_cpu,
  // else any CPU of the mask (cpumask_any_distribute()).
  int find_lowest_rq(const Task& p, int this_cpu) {
    const int n = k_.nr_cpus();
    int lowest = -1, lowest_fitting = -1;
    for (int c = 0; c < n; ++c) {
      if (!p.cpus_allowed[c]) continue;
      int level = cpupri_level(c);
      if (level <= p.prio) continue;  // not lower than p
      lowest = std::max(lowest, level);
      if (k_.rt_task_fits_capacity(p, c)) lowest_fitting = std::max(lowest_fitting, level);
    }
    if (lowest < 0) return -1;
    const bool fitting = lowest_fitting >= 0;
    if (fitting) lowest = lowest_fitting;
    auto in_lowest_mask = [&](int c) {
      return p.cpus_allowed[c] && cpupri_level(c) == lowest && (!fitting || k_.rt_task_fits_capacity(p, c));
    };
    if (in_lowest_mask(p.cpu)) return p.cpu;
    const int preferred = in_lowest_mask(this_cpu) ? this_cpu : -1;
    for (const CpuMask& span : k_.wake_affine_spans(p.cpu)) {
      if (preferred >= 0 && span[static_cast<size_t>(preferred)]) return preferred;
      const int best = k_.cpumask_any_and_distribute(
          this_cpu, [&](int c) { return span[static_cast<size_t>(c)] && in_lowest_mask(c); });
      if (best >= 0) return best;
    }
    if (preferred >= 0) return preferred;
    return k_.cpumask_any_and_distribute(this_cpu, in_lowest_mask);
  }
  // smp_processor_id() for find_lowest_rq(): the CPU the model runs this
  // path on, else (a task's start) the CPU given.
  int this_cpu_or(int cpu) const { return k_.event_cpu() >= 0 ? k_.event_cpu() : cpu; }
  // enqueue_pushable_task(): plist_add() at the tail of p's priority in
  // rq->rt.pushable_tasks; dequeue_pushable_task().
  void enqueue_pushable(Rq& rq, Task& p) {
    if (!p.rt.pushable) ++rq.rt.nr_pushable;
    p.rt.pushable = true;
    p.rt.pushable_seq = ++pushable_clock_;
  }
  static void dequeue_pushable(Rq& rq, Task& p) {
    if (!p.rt.pushable) return;
    p.rt.pushable = false;
    --rq.rt.nr_pushable;
  }
  // The first task of rq->rt.pushable_tasks in plist order (priority, then
  // the order added): pick_next_pushable_task(); with allowed_on >= 0 the
  // first one allowed there (pick_highest_pushable_task()).
  static Task* first_pushable(const Rq& rq, int allowed_on = -1) {
    if (rq.rt.nr_pushable == 0) return nullptr;
    for (int prio = 0; prio < kMaxRtPrio; ++prio) {
      if (!rq.rt.bitmap.test(prio)) continue;
      Task* first = nullptr;
      for (Task* t : rq.rt.queue[prio])
        if (t->rt.pushable && (allowed_on < 0 || t->cpus_allowed[allowed_on]) &&
            (!first || t->rt.pushable_seq < first->rt.pushable_seq))
          first = t;
      if (first) return first;
    }
    return nullptr;
  }
  // push_rt_task(): the first pushable task to the CPU find_lowest_rq()
  // gives (find_lock_lowest_rq(); one always runs a lower priority here,
  // where nothing changes between the search and the move); false when
  // none moved. A pushable task above curr asks for a reschedule instead.
  bool push_rt_task(Rq& rq) {
    if (!rt_overloaded(rq)) return false;
    Task* p = first_pushable(rq);
    if (!p) return false;
    if (p->prio < rq.curr->prio) {
      k_.resched_curr(rq);
      return false;
    }
    const int target = find_lowest_rq(*p, this_cpu_or(rq.cpu));
    if (target < 0) return false;
    SL_DEBUG("{:.6f} cpu{} push_rt_task: {}-{} (prio {}) -> cpu{}, which runs a lower priority", k_.clock().to_s(),
             rq.cpu, p->comm, p->pid, p->prio, target);
    k_.move_queued_task(*p, target);
    return true;
  }
  // push_rt_tasks(): push until nothing more moves.
  void push_rt_tasks(Rq& rq) {
    while (push_rt_task(rq)) {
    }
  }
  // pull_rt_task(): nothing when no other CPU is RT overloaded. With
  // RT_PUSH_IPI (the default) the overloaded CPUs are asked to push
  // (tell_cpu_to_push()); without it this CPU takes, from each overloaded
  // CPU in turn, its first pushable task allowed here if that beats this
  // CPU's best RT priority so far and does not preempt where it waits.
  void pull_rt_task(Rq& this_rq) {
    int rto_count = 0;
    for (int c = 0; c < k_.nr_cpus(); ++c) rto_count += rt_overloaded(k_.rq(c));
    if (rto_count == 0 || (rto_count == 1 && rt_overloaded(this_rq))) return;
    if (k_.features()(SchedFeat::kRtPushIpi)) {
      tell_cpu_to_push();
      return;
    }
    bool resched = false;
    for (int c = 0; c < k_.nr_cpus(); ++c) {
      Rq& src = k_.rq(c);
      if (c == this_rq.cpu || !rt_overloaded(src)) continue;
      Task* p = first_pushable(src, this_rq.cpu);
      if (!p || p->prio >= rq_highest_prio(this_rq)) continue;
      if (p->prio < src.curr->prio) continue;  // woken there, it will preempt there
      SL_DEBUG("{:.6f} cpu{} pull_rt_task: {}-{} (prio {}) from cpu{}, where it waits", k_.clock().to_s(),
               this_rq.cpu, p->comm, p->pid, p->prio, p->cpu);
      k_.move_queued_task(*p, this_rq.cpu);
      resched = true;
    }
    if (resched) k_.resched_curr(this_rq);
  }
  // tell_cpu_to_push(): start the IPI loop over the overloaded CPUs at
  // the first one, or, if it is running, make it go round once more
  // (rto_loop_next).
  void tell_cpu_to_push() {
    ++rto_loop_next_;
    if (rto_cpu_ >= 0) return;
    const int cpu = rto_next_cpu();
    if (cpu >= 0) k_.irq_work_queue_on(cpu);
  }
  // rto_next_cpu(): the next overloaded CPU after rd->rto_cpu; past the
  // last, the loop ends unless a pull asked for another round meanwhile.
  int rto_next_cpu() {
    for (;;) {
      for (int c = rto_cpu_ + 1; c < k_.nr_cpus(); ++c)
        if (rt_overloaded(k_.rq(c))) return rto_cpu_ = c;
      rto_cpu_ = -1;
      if (rto_loop_ == rto_loop_next_) return -1;
      rto_loop_ = rto_loop_next_;
    }
  }

  // The root domain's RT_PUSH_IPI loop (rd->rto_cpu, rto_loop,
  // rto_loop_next) and the plist's insertion clock.
  int rto_cpu_ = -1;
  uint64_t rto_loop_ = 0, rto_loop_next_ = 0;
  uint64_t pushable_clock_ = 0;

  // sched_find_first_bit() over the priority bitmap.
  static int highest_prio(const Rq& rq) { return static_cast<int>(rq.rt.bitmap._Find_first()); }
  static void remove(Rq& rq, Task& p) {
    auto& q = rq.rt.queue[p.prio];
    auto it = std::find(q.begin(), q.end(), &p);
    if (it == q.end()) return;
    q.erase(it);
    if (q.empty()) rq.rt.bitmap.reset(p.prio);
    --rq.rt.rt_nr_running;
    if (p.nr_cpus_allowed > 1) --rq.rt.rt_nr_migratory;  // dec_rt_migration()
    p.rt.on_rq = false;
    dequeue_pushable(rq, p);
  }
  // requeue_task_rt(): to the tail of its priority's list, or the head.
  static void requeue(Rq& rq, Task& p, bool head = false) {
    auto& q = rq.rt.queue[p.prio];
    auto it = std::find(q.begin(), q.end(), &p);
    if (it == q.end()) return;
    q.erase(it);
    if (head)
      q.insert(q.begin(), &p);
    else
      q.push_back(&p);
  }
  // cpupri_find() without a lowest mask or fitness: some CPU of p's mask
  // runs at a priority level below p's.
  bool lower_cpu_exists(const Task& p) {
    for (int c = 0; c < k_.nr_cpus(); ++c)
      if (p.cpus_allowed[c] && rq_highest_prio(k_.rq(c)) > p.prio) return true;
    return false;
  }
  // check_preempt_equal_prio(): a woken task of curr's priority that
  // cannot go elsewhere (pinned, or no lower CPU for it) while curr could:
  // p to the head of the list and a reschedule, so that p runs here and
  // curr, now queued, is pushed away (push_rt_tasks() after the switch).
  void check_preempt_equal_prio(Rq& rq, Task& p) {
    const Task& curr = *rq.curr;
    if (curr.nr_cpus_allowed == 1 || !lower_cpu_exists(curr)) return;
    if (p.nr_cpus_allowed != 1 && lower_cpu_exists(p)) return;
    k_.note_why("rt: equal priority, but only curr can move (check_preempt_equal_prio): the wakee runs, curr is "
                "pushed");
    requeue(rq, p, true);
    k_.resched_curr(rq);
  }
};

}  // namespace

std::unique_ptr<SchedClass> make_rt_class(Kernel& k) { return std::make_unique<RtClass>(k); }

}  // namespace schedlab
