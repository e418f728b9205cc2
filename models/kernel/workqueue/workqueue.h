// Workqueues, following kernel/workqueue.c of Linux 6.12, plus WQ_RTPRI
// (SCHED_FIFO workers) from the DRM submit-latency thread
// (../shared/seeds/drm_sched_submit_latency.md).
//
// What is modelled, with the kernel function each part mirrors:
//  - worker pools: per CPU a normal (nice 0) and a highpri (nice -20,
//    HIGHPRI_NICE_LEVEL) bound pool; unbound pools shared by every
//    workqueue with the same attributes (nice, cpumask, pod, strictness:
//    get_unbound_pool()); one pod per affinity scope unit, the default
//    scope being "cache" (wq_affn_dfl = WQ_AFFN_CACHE: one pod per LLC);
//  - workers: kernel threads named as format_worker_id() names them
//    (kworker/2:1H bound highpri, kworker/u32:3 unbound, the pool id after
//    the 4 bound pools of every CPU, BH pools included), running
//    worker_thread(): leave idle, manage (create a worker) when no idle one
//    is left, process works while keep_working(), enter idle (LIFO idle
//    list) and sleep;
//  - concurrency management of bound pools: nr_running counts workers not
//    NOT_RUNNING (PREP, CPU_INTENSIVE, UNBOUND); wq_worker_sleeping() /
//    wq_worker_running() (TaskBody::on_sleeping / on_running) and
//    kick_pool() wake the first idle worker when the running one blocks;
//    unbound workers never count, so every queued item can wake a worker;
//  - create_worker() as a configurable delay during which the manager
//    sleeps in D, then the kworker starts as a new task; idle workers are
//    reaped IDLE_WORKER_TIMEOUT after the pool has too_many_workers();
//  - max_active per pool_workqueue for bound workqueues, per workqueue
//    (one NUMA node) for unbound ones with the pending-pwq round robin of
//    node_activate_pending_pwq(); ordered workqueues (max_active 1, one pwq);
//  - delayed work: a timer, then __queue_work() from the CPU that queued it;
//  - non-reentrancy: a work item requeued while it runs goes to the pool
//    running it and, there, after the running execution (assign_work()).
//  - WQ_RTPRI (proposal, not upstream): workers are SCHED_FIFO at a
//    configurable priority, max_active is capped at num_online_cpus() / 2,
//    the workqueue gets dedicated pools and an optional cap on their number
//    of workers (the driver's "two threads").
//
//  - taking work back and waiting for it: mod_delayed_work(),
//    cancel_work() / cancel_delayed_work() (a pending item taken back as
//    try_to_grab_pending() does: its timer deleted, or off its pwq's
//    inactive list, its pool's worklist or a worker's scheduled list, an
//    active one freeing its nr_active slot), cancel_work_sync() /
//    cancel_delayed_work_sync() (the same with the item disabled, so
//    queue_work() returns false, then a wait, D, for the execution in
//    progress) and flush_work() / flush_delayed_work() (a wait for the
//    end of the queued instance, else of the one executing; the delayed
//    form first queues an armed item at once). The kernel's flush is a
//    barrier work inserted after the item (or at the head of the
//    executing worker's scheduled list), completed by the worker that
//    runs it, which is the item's worker, right after the item returns:
//    the model wakes the waiter there, from that worker. An item taken
//    back (cancel, mod) while a flush waits for its queued instance
//    leaves the barrier where it was linked (on the worklist or a
//    worker's scheduled list; from the inactive list it moves to the
//    worklist, move_linked_works()): then the barrier is an item of its
//    own ("wq_barrier", no nr_active slot) whose run wakes the waiter.
//    Simplified: the wake comes before the item's worker reaches its
//    cond_resched() (the kernel's barrier runs after it); an item
//    executing on two workqueues at once wakes its flusher at the first
//    return (the kernel waits for the run on the pool it started last).
//
// Simplifications (named so a reader can weigh them): no rescuers
// (WQ_MEM_RECLAIM) or mayday timer; no flush_workqueue() or
// drain_workqueue(); no disable_work() / enable_work() as calls of their
// own (cancel_work_sync()'s disable is modelled); a created worker starts when create_worker_delay
// ends, before the manager runs again (6.12's manager, woken by kthreadd,
// attaches and wakes it), and kthreadd's own wait for a CPU is not in the
// delay; no CPU hotplug; no BH workqueues; no
// automatic CPU_INTENSIVE detection (wq_cpu_intensive_thresh_us); the
// idle cull runs in the idle timer rather than a work item on
// system_unbound_wq; a delayed
// work's timer fires on the CPU that queued it; bookkeeping costs no CPU
// time (only the work functions do).
#pragma once

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/hw/platform.h"
#include "models/kernel/workqueue/runnable_tracker.h"
#include "models/kernel/workqueue/work.h"
#include "models/kernel/workqueue/workqueue_params.h"
#include "models/workload/task_spec.h"
#include "sim/fifo.h"

namespace schedlab {

class Kernel;
class Worker;
class WorkqueueSystem;
struct WorkerPool;
class Workqueue;

inline constexpr int kWorkCpuUnbound = -1;  // WORK_CPU_UNBOUND

// struct pool_workqueue: links a workqueue to a pool; holds max_active state.
struct PoolWorkqueue {
  Workqueue* wq = nullptr;
  WorkerPool* pool = nullptr;
  int nr_active = 0;
  Fifo<WorkStruct*> inactive_works;
  bool on_pending = false;  // on the workqueue's pending_pwqs (unbound max_active)
};

// struct worker_pool.
struct WorkerPool final : public EventHandler {
  WorkqueueSystem* sys = nullptr;
  int id = 0;
  int cpu = -1;                 // -1: unbound
  int nice = 0;
  Policy policy = Policy::kNormal;
  int rt_priority = 0;
  std::vector<int> allowed_cpus;  // pool_allowed_cpus(): the workers' affinity
  std::vector<int> pod_cpus;      // __pod_cpumask
  bool strict = false;
  const Workqueue* dedicated = nullptr;  // WQ_RTPRI: pools are not shared
  int max_workers = 0;            // 0: no cap
  Fifo<WorkStruct*> worklist;
  int nr_workers = 0, nr_idle = 0, nr_running = 0;
  std::vector<Worker*> idle_list;  // back = most recently idle (list head in the kernel)
  std::vector<Worker*> workers;    // attached, alive
  bool manager_active = false;     // POOL_MANAGER_ACTIVE
  std::vector<bool> ids;           // the worker ida
  Timer idle_timer;
  bool bound() const { return cpu >= 0; }
  void on_event(uint64_t tag) override;
};

// struct workqueue_struct.
class Workqueue {
 public:
  const std::string& name() const { return params_.name; }
  const WorkqueueParams& params() const { return params_; }
  unsigned flags() const { return params_.flags; }
  bool unbound() const { return params_.flags & kWqUnbound; }
  bool ordered() const { return params_.flags & kWqOrdered; }
  int max_active() const { return max_active_; }
  // The pool_workqueue a work queued from `cpu` uses (wq->cpu_pwq).
  PoolWorkqueue& pwq_for_cpu(int cpu) { return *cpu_pwq_[static_cast<size_t>(cpu)]; }
  int nr_active() const;  // work items active (pending on a worklist or running)

 private:
  friend class WorkqueueSystem;
  WorkqueueParams params_;
  int max_active_ = kWqDflActive;
  std::vector<PoolWorkqueue*> cpu_pwq_;
  std::vector<std::unique_ptr<PoolWorkqueue>> pwqs_;
  int nna_nr_ = 0;                           // unbound: wq_node_nr_active.nr
  Fifo<PoolWorkqueue*> nna_pending_;   // unbound: wq_node_nr_active.pending_pwqs
};

// struct worker: a kworker task running worker_thread().
class Worker final : public TaskBody, public WorkExecutor {
 public:
  Worker(WorkqueueSystem& sys, WorkerPool& pool, int id);
  Action next(Task& self) override;
  void on_sleeping(Task& self) override;  // wq_worker_sleeping()
  void on_running(Task& self) override;   // wq_worker_running()
  Task& task() { return *task_; }
  WorkerPool& pool() { return *pool_; }
  const WorkStruct* current_work() const { return current_; }
  int id() const { return id_; }

 private:
  friend class WorkqueueSystem;
  enum Flags : unsigned {
    kDie = 1u << 1, kIdle = 1u << 2, kPrep = 1u << 3, kCpuIntensive = 1u << 6, kUnbound = 1u << 7,
    kNotRunning = kPrep | kCpuIntensive | kUnbound,
  };
  enum class St : uint8_t { kWokeUp, kRecheck, kManaging, kPick, kExec, kEndPick };
  void on_timer() override;
  void set_flags(unsigned f);    // worker_set_flags()
  void clr_flags(unsigned f);    // worker_clr_flags()
  void enter_idle();             // worker_enter_idle()
  void leave_idle();             // worker_leave_idle()
  void start_work(WorkStruct& w);   // process_one_work(), up to the function call
  void finish_work();               // process_one_work(), after the function returned
  void assign_work();
  WorkqueueSystem& sys_;
  WorkerPool* pool_;
  int id_;
  unsigned flags_ = kPrep;
  bool sleeping_ = false;           // worker->sleeping
  bool creating_ = false;           // manager: waiting for create_worker()
  Time last_active;
  St st_ = St::kWokeUp;
  Fifo<WorkStruct*> scheduled_;
  WorkStruct* current_ = nullptr;
  PoolWorkqueue* current_pwq_ = nullptr;
  Time cur_queued_, cur_started_;
  RunnableWait cur_wait_;
  int cur_req_cpu_ = -1;
};

class WorkqueueSystem {
 public:
  WorkqueueSystem(Kernel& k, const PlatformParams& platform, const WorkqueueSubsysParams& params,
                  RunnableTracker& tracker);
  ~WorkqueueSystem();

  // alloc_workqueue(); throws ModelError for invalid parameters or a name in use.
  Workqueue& alloc_workqueue(const WorkqueueParams& params);
  // A workqueue by name; the kernel's system workqueues (events,
  // events_highpri, events_long, events_unbound, events_freezable,
  // events_power_efficient, events_freezable_pwr_efficient) are allocated
  // on first use. nullptr if unknown.
  Workqueue* find(const std::string& name);
  // Every name find() accepts (for error messages).
  std::vector<std::string> names() const;
  static const std::vector<std::string>& system_workqueue_names();

  // queue_work_on() / queue_work(): false if the item was already pending.
  bool queue_work(Workqueue& wq, WorkStruct& work, QueueContext ctx, int cpu = kWorkCpuUnbound);
  // queue_delayed_work_on(): the item becomes pending now and is queued
  // when its timer fires (at once for delay 0).
  bool queue_delayed_work(Workqueue& wq, WorkStruct& work, QueueContext ctx, Time delay,
                          int cpu = kWorkCpuUnbound);
  // mod_delayed_work_on(): a pending item is taken back
  // (try_to_grab_pending(): its timer deleted, or off its pool's worklist
  // or its pwq's inactive list) and queued again with `delay`; true if it
  // was pending. An executing item is queued again.
  bool mod_delayed_work(Workqueue& wq, WorkStruct& work, QueueContext ctx, Time delay, int cpu = kWorkCpuUnbound);
  // cancel_work() / cancel_delayed_work(): a pending item is taken back
  // (as mod_delayed_work() does); true if it was pending. An executing
  // item runs on.
  bool cancel_work(WorkStruct& work, QueueContext ctx);
  // cancel_work_sync() / cancel_delayed_work_sync() from `self`'s body, one
  // step at a time: std::nullopt once the item is neither pending nor
  // executing (the first step cancels it and disables queuing); otherwise
  // the sleep to return (D), after which the body calls it again.
  // `was_pending` is set at the first step.
  std::optional<Action> cancel_work_sync_step(Task& self, WorkStruct& work, bool* was_pending = nullptr);
  // flush_work() (`delayed`: flush_delayed_work(), an armed timer deleted
  // and the item queued at once on its CPU) from `self`'s body, stepped
  // the same way. `waited` (flush_work()'s return) is set at the first
  // step.
  std::optional<Action> flush_work_step(Task& self, WorkStruct& work, bool delayed, bool* waited = nullptr);

  // --- introspection (tests, reports)
  const std::vector<std::unique_ptr<WorkerPool>>& pools() const { return pools_; }
  Worker* worker_of(const Task& t) const;
  Kernel& kernel() { return k_; }
  RunnableTracker& tracker() { return tracker_; }
  const WorkqueueSubsysParams& params() const { return params_; }
  // The pods of an affinity scope (wq_pod_types[scope]).
  std::vector<std::vector<int>> pods(const std::string& scope) const;

 private:
  friend class Worker;
  friend struct WorkerPool;
  struct Delayed;
  std::string pool_group(const WorkerPool& pool) const;  // its workers' task group
  WorkerPool& bound_pool(int cpu, bool highpri);
  WorkerPool& unbound_pool(const Workqueue& wq, int nice, const std::vector<int>& cpumask,
                           const std::vector<int>& pod, bool strict);
  WorkerPool& new_pool(int cpu, int nice, Policy policy, int rt_priority, std::vector<int> allowed,
                       std::vector<int> pod, bool strict);
  Worker& create_worker(WorkerPool& pool);   // create_worker(): attach, enter idle, start the task
  void __queue_work(Workqueue& wq, WorkStruct& work, QueueContext ctx, int req_cpu);
  bool kick_pool(WorkerPool& pool, QueueContext ctx);
  bool need_more_worker(const WorkerPool& pool) const { return !pool.worklist.empty() && !pool.nr_running; }
  bool may_start_working(const WorkerPool& pool) const { return pool.nr_idle > 0; }
  bool keep_working(const WorkerPool& pool) const { return !pool.worklist.empty() && pool.nr_running <= 1; }
  bool need_to_create_worker(const WorkerPool& pool) const { return need_more_worker(pool) && !may_start_working(pool); }
  bool too_many_workers(const WorkerPool& pool) const;
  bool can_create_worker(const WorkerPool& pool) const {
    return pool.max_workers <= 0 || pool.nr_workers < pool.max_workers;
  }
  bool pwq_tryinc_nr_active(PoolWorkqueue& pwq, bool fill);
  void pwq_activate_work(PoolWorkqueue& pwq, WorkStruct& work, QueueContext ctx, bool kick);
  void pwq_dec_nr_active(PoolWorkqueue& pwq, QueueContext ctx);
  void idle_worker_timeout(WorkerPool& pool);
  void emit(WorkItemEvent::Phase phase, const WorkStruct& work, const Workqueue& wq, const Task* worker, int cpu,
            Time started = Time::zero(), RunnableWait wait = {});
  void delayed_timer_fired(Delayed& d);
  bool grab_pending(WorkStruct& work, QueueContext ctx);  // try_to_grab_pending()
  // A caller of cancel_work_sync() / flush_work() asleep until `work` has
  // completed `until` executions (its barrier work has run).
  struct FlushWaiter {
    Task* task;
    WorkStruct* work;
    uint64_t until;
    bool canceling;  // cancel_work_sync(): the item's queuing is disabled meanwhile
    bool done;
  };
  std::optional<Action> wait_step(Task& self, WorkStruct& work, uint64_t until, bool canceling);
  // Whether `self` is a caller already waiting; if so, *next is its step.
  bool waiting(Task& self, std::optional<Action>* next);
  void complete_flushes(WorkStruct& work, Task& worker);  // after an execution returned
  // The queued instance of `work` is being taken back: the barrier of each
  // flush waiting for it stays where it was linked (a barrier item that
  // wakes those waiters when a worker runs it), or nullptr if none waits.
  WorkStruct* unlink_barrier(WorkStruct& work);

  Kernel& k_;
  WorkqueueSubsysParams params_;
  RunnableTracker& tracker_;
  int nr_cpus_;
  std::vector<std::vector<int>> cache_pods_;  // LLC groups (WQ_AFFN_CACHE)
  std::vector<std::unique_ptr<WorkerPool>> pools_;
  std::vector<std::array<WorkerPool*, 2>> bound_pools_;  // [cpu][highpri]
  int next_unbound_pool_id_;
  std::vector<std::unique_ptr<Workqueue>> wqs_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<Worker*> worker_by_task_;  // Task::index -> worker
  std::vector<std::unique_ptr<Delayed>> delayed_;
  std::map<const WorkStruct*, Delayed*> delayed_by_work_;
  std::vector<FlushWaiter> flush_waiters_;
  std::vector<std::unique_ptr<WorkStruct>> barriers_;  // barrier items, reused once run
};

}  // namespace schedlab
