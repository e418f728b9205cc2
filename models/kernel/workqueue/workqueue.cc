// kernel/workqueue.c (Linux 6.12) as described in workqueue.h. Function
// names in comments are the kernel's; the code is this model's own.
#include "models/kernel/workqueue/workqueue.h"

#include <algorithm>
#include <fmt/format.h>

#include "models/errors.h"
#include "models/kernel/kernel.h"
#include "sim/log.h"

namespace schedlab {

namespace {

constexpr int kHighpriNice = -20;        // HIGHPRI_NICE_LEVEL = MIN_NICE
constexpr int kMaxIdleWorkersRatio = 4;  // MAX_IDLE_WORKERS_RATIO

const std::vector<std::string>& affinity_scopes() {
  static const std::vector<std::string> names = {"default", "cpu", "smt", "cache", "numa", "system"};
  return names;
}

std::string join_names(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

// ----------------------------------------------------------------- Workqueue

int Workqueue::nr_active() const {
  int n = 0;
  for (const auto& p : pwqs_) n += p->nr_active;
  return n;
}

// ----------------------------------------------------------------- set-up

struct WorkqueueSystem::Delayed final : public EventHandler {
  WorkqueueSystem* sys = nullptr;
  WorkStruct* work = nullptr;
  Workqueue* wq = nullptr;
  int cpu = -1;       // the CPU whose timer it is
  int req_cpu = -1;
  Timer timer;
  void on_event(uint64_t) override { sys->delayed_timer_fired(*this); }
};

WorkqueueSystem::WorkqueueSystem(Kernel& k, const PlatformParams& platform, const WorkqueueSubsysParams& params,
                                 RunnableTracker& tracker)
    : k_(k), params_(params), tracker_(tracker), nr_cpus_(k.nr_cpus()) {
  if (std::find(affinity_scopes().begin() + 1, affinity_scopes().end(), params_.default_affinity_scope) ==
      affinity_scopes().end())
    throw ModelError(fmt::format("workqueue.default_affinity_scope '{}' unknown (valid: cpu, smt, cache, numa, system)",
                                 params_.default_affinity_scope));
  if (params_.create_worker_delay < Time::zero() || params_.idle_timeout <= Time::zero())
    throw ModelError("workqueue: create_worker_delay must be >= 0 and idle_timeout > 0");
  // WQ_AFFN_CACHE pods: CPUs sharing the last-level cache (cacheinfo's
  // llc_sibling). One LLC for all (the DSU L3), or none described (the
  // package), gives a single pod; a per-cluster LLC gives a pod per cpu-map
  // cluster.
  if (platform.llc == LlcSharing::kCluster && !platform.clusters.empty()) {
    DerivedPlatform d = derive_platform(platform);
    cache_pods_ = d.cpu_map_cluster_cpus;
  } else {
    std::vector<int> all(static_cast<size_t>(nr_cpus_));
    for (int c = 0; c < nr_cpus_; ++c) all[static_cast<size_t>(c)] = c;
    cache_pods_ = {all};
  }
  bound_pools_.assign(static_cast<size_t>(nr_cpus_), {nullptr, nullptr});
  // Pool ids: every CPU has two BH and two normal pools first
  // (workqueue_init_early()), so unbound pools start at 4 * nr_cpus.
  next_unbound_pool_id_ = 4 * nr_cpus_;
  for (const WorkqueueParams& p : params_.workqueues) {
    const auto& sys = system_workqueue_names();
    if (std::find(sys.begin(), sys.end(), p.name) != sys.end())
      throw ModelError(fmt::format("workqueue '{}': the name of a system workqueue (they exist already: {})", p.name,
                                   join_names(sys)));
    alloc_workqueue(p);
  }
}

WorkqueueSystem::~WorkqueueSystem() = default;

const std::vector<std::string>& WorkqueueSystem::system_workqueue_names() {
  static const std::vector<std::string> names = {
      "events", "events_highpri", "events_long", "events_unbound", "events_freezable", "events_power_efficient",
      "events_freezable_pwr_efficient"};
  return names;
}

std::vector<std::vector<int>> WorkqueueSystem::pods(const std::string& scope_in) const {
  std::string scope = scope_in == "default" ? params_.default_affinity_scope : scope_in;
  std::vector<int> all(static_cast<size_t>(nr_cpus_));
  for (int c = 0; c < nr_cpus_; ++c) all[static_cast<size_t>(c)] = c;
  if (scope == "cpu" || scope == "smt") {  // no SMT on the modelled Arm cores: a pod per CPU
    std::vector<std::vector<int>> v;
    for (int c = 0; c < nr_cpus_; ++c) v.push_back({c});
    return v;
  }
  if (scope == "cache") return cache_pods_;
  return {all};  // numa (one node), system
}

Workqueue* WorkqueueSystem::find(const std::string& name) {
  for (auto& wq : wqs_)
    if (wq->name() == name) return wq.get();
  // workqueue_init_early()'s system workqueues.
  WorkqueueParams p;
  p.name = name;
  if (name == "events" || name == "events_long" || name == "events_power_efficient") {
  } else if (name == "events_highpri") {
    p.flags = kWqHighpri;
  } else if (name == "events_unbound") {
    p.flags = kWqUnbound;
    p.max_active = kWqMaxActive;
  } else if (name == "events_freezable" || name == "events_freezable_pwr_efficient") {
    p.flags = kWqFreezable;
  } else {
    return nullptr;
  }
  return &alloc_workqueue(p);
}

std::vector<std::string> WorkqueueSystem::names() const {
  std::vector<std::string> v;
  for (const auto& wq : wqs_) v.push_back(wq->name());
  for (const auto& s : system_workqueue_names())
    if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
  return v;
}

namespace {
constexpr size_t kQueueReserve = 64;  // works pending on one pool or pool workqueue before the first growth
}  // namespace

WorkerPool& WorkqueueSystem::new_pool(int cpu, int nice, Policy policy, int rt_priority, std::vector<int> allowed,
                                      std::vector<int> pod, bool strict) {
  auto pool = std::make_unique<WorkerPool>();
  pool->sys = this;
  pool->cpu = cpu;
  pool->nice = nice;
  pool->policy = policy;
  pool->rt_priority = rt_priority;
  pool->allowed_cpus = std::move(allowed);
  pool->pod_cpus = std::move(pod);
  pool->strict = strict;
  pool->idle_timer = Timer(k_.sim().queue(), pool.get(), 0, kTierTimer);
  // Room for a burst of pending works before the queue first grows
  // (a growth later is a steady-state allocation).
  pool->worklist.reserve(kQueueReserve);
  WorkerPool& p = *pool;
  pools_.push_back(std::move(pool));
  return p;
}

WorkerPool& WorkqueueSystem::bound_pool(int cpu, bool highpri) {
  WorkerPool*& slot = bound_pools_[static_cast<size_t>(cpu)][highpri ? 1 : 0];
  if (!slot) {
    // init_cpu_worker_pool(): ids cpu*4 + 2 (normal) and + 3 (highpri).
    slot = &new_pool(cpu, highpri ? kHighpriNice : 0, Policy::kNormal, 0, {cpu}, {cpu}, true);
    slot->id = cpu * 4 + 2 + (highpri ? 1 : 0);
    create_worker(*slot);  // workqueue_init(): every pool starts with one idle worker
  }
  return *slot;
}

WorkerPool& WorkqueueSystem::unbound_pool(const Workqueue& wq, int nice, const std::vector<int>& cpumask,
                                          const std::vector<int>& pod, bool strict) {
  const bool rt = wq.flags() & kWqRtpri;
  const Policy policy = rt ? Policy::kFifo : Policy::kNormal;
  const int rt_priority = rt ? wq.params().rt_priority : 0;
  // get_unbound_pool(): pools are shared by every workqueue whose attrs
  // (nice, cpumask, pod cpumask, strictness) match; WQ_RTPRI pools are
  // kept per workqueue so the driver's thread cap applies to it alone.
  for (auto& p : pools_) {
    if (p->bound() || p->nice != nice || p->policy != policy || p->rt_priority != rt_priority) continue;
    if (p->pod_cpus != pod || p->strict != strict) continue;
    if (rt ? p->dedicated != &wq : p->dedicated != nullptr) continue;
    std::vector<int> allowed = strict ? pod : cpumask;
    if (p->allowed_cpus != allowed) continue;
    return *p;
  }
  WorkerPool& p = new_pool(-1, nice, policy, rt_priority, strict ? pod : cpumask, pod, strict);
  p.id = next_unbound_pool_id_++;
  if (rt) {
    p.dedicated = &wq;
    p.max_workers = wq.params().max_workers;
  }
  create_worker(p);
  return p;
}

Workqueue& WorkqueueSystem::alloc_workqueue(const WorkqueueParams& in) {
  WorkqueueParams p = in;
  auto bad = [&](const std::string& why) { throw ModelError(fmt::format("workqueue '{}': {}", p.name, why)); };
  if (p.name.empty()) throw ModelError("alloc_workqueue: a workqueue needs a name");
  for (const auto& wq : wqs_)
    if (wq->name() == p.name) bad("name already in use");
  if (p.flags & kWqOrdered) {
    // alloc_ordered_workqueue(): WQ_UNBOUND | __WQ_ORDERED, max_active 1.
    if (p.max_active != 0 && p.max_active != 1) bad("an ordered workqueue has max_active 1");
    p.flags |= kWqUnbound;
    p.max_active = 1;
  }
  // workqueue_sysfs_register() refuses __WQ_ORDERED: alloc_workqueue() fails.
  if ((p.flags & kWqOrdered) && (p.flags & kWqSysfs)) bad("an ordered workqueue cannot be WQ_SYSFS");
  const bool unbound = p.flags & kWqUnbound;
  const bool rt = p.flags & kWqRtpri;
  if (rt && (p.flags & kWqHighpri)) bad("WQ_RTPRI and WQ_HIGHPRI are exclusive (the workers are SCHED_FIFO)");
  if (p.max_active < 0 || p.max_active > kWqMaxActive)
    bad(fmt::format("max_active {} out of range (0 = default, 1..{})", p.max_active, kWqMaxActive));
  if (p.nice) {
    if (!unbound || !(p.flags & kWqSysfs))
      bad("nice is a sysfs attribute of WQ_UNBOUND | WQ_SYSFS workqueues (/sys/devices/virtual/workqueue/NAME/nice)");
    if (rt) bad("a WQ_RTPRI workqueue has SCHED_FIFO workers: nice does not apply");
    if (*p.nice < -20 || *p.nice > 19) bad(fmt::format("nice {} out of range -20..19", *p.nice));
  }
  if (!p.cpumask.empty() && !unbound) bad("cpumask applies to WQ_UNBOUND workqueues (bound ones run on every CPU)");
  for (int c : p.cpumask)
    if (c < 0 || c >= nr_cpus_) bad(fmt::format("cpumask names CPU {} (the platform has {})", c, nr_cpus_));
  if (std::find(affinity_scopes().begin(), affinity_scopes().end(), p.affinity_scope) == affinity_scopes().end())
    bad(fmt::format("affinity_scope '{}' unknown (valid: {})", p.affinity_scope, join_names(affinity_scopes())));
  if (rt && (p.rt_priority < 1 || p.rt_priority > 99)) bad(fmt::format("rt_priority {} out of range 1..99", p.rt_priority));
  if (p.max_workers < 0) bad("max_workers must be >= 0");
  if (p.max_workers > 0 && !rt) bad("max_workers (the per-workqueue thread cap) applies to WQ_RTPRI workqueues");

  auto wq = std::make_unique<Workqueue>();
  Workqueue& w = *wq;
  wq->params_ = p;
  // wq_clamp_max_active(); WQ_RTPRI: at most num_online_cpus() / 2.
  int max_active = p.max_active ? p.max_active : kWqDflActive;
  if (rt) max_active = std::min(max_active, std::max(1, nr_cpus_ / 2));
  wq->max_active_ = max_active;
  wqs_.push_back(std::move(wq));

  w.cpu_pwq_.assign(static_cast<size_t>(nr_cpus_), nullptr);
  w.nna_pending_.reserve(static_cast<size_t>(nr_cpus_));  // at most one entry per pool workqueue
  auto make_pwq = [&](WorkerPool& pool) {
    auto pwq = std::make_unique<PoolWorkqueue>();
    pwq->wq = &w;
    pwq->pool = &pool;
    pwq->inactive_works.reserve(kQueueReserve);
    PoolWorkqueue* raw = pwq.get();
    w.pwqs_.push_back(std::move(pwq));
    return raw;
  };
  if (!unbound) {
    // Per-CPU workqueue: the CPU's normal or highpri pool; WQ_RTPRI gets
    // a dedicated FIFO pool per CPU.
    for (int c = 0; c < nr_cpus_; ++c) {
      WorkerPool* pool;
      if (rt) {
        pool = &new_pool(c, 0, Policy::kFifo, p.rt_priority, {c}, {c}, true);
        pool->id = next_unbound_pool_id_++;  // not a standard per-CPU pool
        pool->dedicated = &w;
        pool->max_workers = p.max_workers;
        create_worker(*pool);
      } else {
        pool = &bound_pool(c, p.flags & kWqHighpri);
      }
      w.cpu_pwq_[static_cast<size_t>(c)] = make_pwq(*pool);
    }
    return w;
  }
  // Unbound: attrs from unbound_std_wq_attrs / ordered_wq_attrs, then the
  // sysfs overrides; one pwq per pod of the affinity scope (ordered: one
  // pwq for every CPU, apply_wqattrs_prepare()). Simplified: 6.12
  // allocates a pwq per CPU, sharing the pod's pool, so once max_active is
  // reached activations rotate over the queueing CPUs' pwqs; here a pod's
  // CPUs share one pwq and activate in queue order (no shipped workqueue
  // reaches its max_active).
  const int nice = p.nice.value_or((p.flags & kWqHighpri) ? kHighpriNice : 0);
  std::vector<int> cpumask = p.cpumask;
  if (cpumask.empty())
    for (int c = 0; c < nr_cpus_; ++c) cpumask.push_back(c);
  std::sort(cpumask.begin(), cpumask.end());
  cpumask.erase(std::unique(cpumask.begin(), cpumask.end()), cpumask.end());
  if (w.ordered()) {
    PoolWorkqueue* pwq = make_pwq(unbound_pool(w, nice, cpumask, cpumask, p.affinity_strict));
    for (int c = 0; c < nr_cpus_; ++c) w.cpu_pwq_[static_cast<size_t>(c)] = pwq;
    return w;
  }
  PoolWorkqueue* dfl = nullptr;
  for (const std::vector<int>& pod_all : pods(p.affinity_scope)) {
    std::vector<int> pod;
    for (int c : pod_all)
      if (std::binary_search(cpumask.begin(), cpumask.end(), c)) pod.push_back(c);
    PoolWorkqueue* pwq;
    if (pod.empty()) {
      // wq_calc_pod_cpumask(): no usable CPU in the pod -> the default pwq.
      if (!dfl) dfl = make_pwq(unbound_pool(w, nice, cpumask, cpumask, p.affinity_strict));
      pwq = dfl;
    } else {
      pwq = make_pwq(unbound_pool(w, nice, cpumask, pod, p.affinity_strict));
    }
    for (int c : pod_all) w.cpu_pwq_[static_cast<size_t>(c)] = pwq;
  }
  return w;
}

// The task group a pool's workers report under: the pool's kind and
// attributes, not the workers' names. kworker/uN:M carries the pool id,
// which follows the order pools were created in, so one name can be
// another pool's worker in another variant (with pm_wq WQ_HIGHPRI, the
// first unbound pool is the nice -20 one): groups by attributes compare
// like with like across variants. "kworkers/percpu" (per-CPU normal
// pools), "kworkers/percpu-H" (highpri), "kworkers/unbound-nice0",
// "kworkers/unbound-nice-20", with "-cpus0-3" for a pool not on every
// CPU, and "kworkers/WQ-fifoP" for a WQ_RTPRI workqueue's own pools (a
// bound one's per-CPU pools together, with no CPU suffix).
std::string WorkqueueSystem::pool_group(const WorkerPool& pool) const {
  if (pool.bound() && !pool.dedicated) return pool.nice < 0 ? "kworkers/percpu-H" : "kworkers/percpu";
  std::string g = pool.dedicated ? fmt::format("kworkers/{}-fifo{}", pool.dedicated->name(), pool.rt_priority)
                                 : fmt::format("kworkers/unbound-nice{}", pool.nice);
  if (!pool.bound() && pool.allowed_cpus.size() != static_cast<size_t>(nr_cpus_)) {
    // "-cpus0-3,6": runs of consecutive CPUs.
    std::string cpus;
    const auto& c = pool.allowed_cpus;
    for (size_t i = 0; i < c.size();) {
      size_t j = i;
      while (j + 1 < c.size() && c[j + 1] == c[j] + 1) ++j;
      if (!cpus.empty()) cpus += ',';
      cpus += j == i ? std::to_string(c[i]) : fmt::format("{}-{}", c[i], c[j]);
      i = j + 1;
    }
    g += "-cpus" + cpus;
  }
  return g;
}

// create_worker(): a new kworker attached to the pool, idle, woken. The
// kernel has kthreadd fork the thread wherever kthreadd runs, which is not
// modelled: like every task the scenario starts, the worker is forked from
// CPU 0 (an assumption) and placed by the fork path.
Worker& WorkqueueSystem::create_worker(WorkerPool& pool) {
  int id = 0;
  while (static_cast<size_t>(id) < pool.ids.size() && pool.ids[static_cast<size_t>(id)]) ++id;
  if (static_cast<size_t>(id) >= pool.ids.size()) pool.ids.resize(static_cast<size_t>(id) + 1, false);
  pool.ids[static_cast<size_t>(id)] = true;
  // format_worker_id(). A bound WQ_RTPRI pool (the proposal; no kernel
  // name) takes an "R" where a highpri one has its "H", so its workers do
  // not share names with the CPU's normal kworkers.
  const char* const suffix = pool.dedicated ? "R" : pool.nice < 0 ? "H" : "";
  std::string comm = pool.bound() ? fmt::format("kworker/{}:{}{}", pool.cpu, id, suffix)
                                  : fmt::format("kworker/u{}:{}", pool.id, id);
  auto worker = std::make_unique<Worker>(*this, pool, id);
  Task& t = k_.create_task(comm, pool_group(pool), pool.policy, pool.policy == Policy::kFifo ? 0 : pool.nice,
                           pool.rt_priority, pool.allowed_cpus, true);
  worker->task_ = &t;
  // worker_attach_to_pool(): unbound pools are DISASSOCIATED, so their
  // workers are WORKER_UNBOUND and never count in nr_running.
  if (!pool.bound()) worker->flags_ |= Worker::kUnbound;
  k_.set_body(t, worker.get());
  tracker_.track(t);
  if (worker_by_task_.size() <= t.index) worker_by_task_.resize(t.index + 1, nullptr);
  worker_by_task_[t.index] = worker.get();
  Worker& w = *worker;
  workers_.push_back(std::move(worker));
  pool.workers.push_back(&w);
  ++pool.nr_workers;
  // The fork allocates what the new worker's first works need: its
  // scheduled list, and room on the idle list for every worker at once.
  w.scheduled_.reserve(4);
  pool.idle_list.reserve(pool.workers.size());
  w.enter_idle();
  k_.start_task_at(t, k_.now());  // wake_up_process() of the new kthread
  SL_DEBUG("{:.6f} workqueue: create_worker {} (pool {}, {} workers)", k_.now().to_s(), comm, pool.id,
           pool.nr_workers);
  return w;
}

Worker* WorkqueueSystem::worker_of(const Task& t) const {
  return t.index < worker_by_task_.size() ? worker_by_task_[t.index] : nullptr;
}

// ----------------------------------------------------------------- queueing

void WorkqueueSystem::emit(WorkItemEvent::Phase phase, const WorkStruct& work, const Workqueue& wq,
                           const Task* worker, int cpu, Time started, RunnableWait wait) {
  if (k_.observers().empty()) return;
  WorkItemEvent e;
  e.phase = phase;
  e.work = work.name;
  e.workqueue = wq.name();
  e.worker = worker;
  e.req_cpu = work.req_cpu;
  e.cpu = cpu;
  e.queued = work.queued;
  e.started = started;
  e.runnable_wait = wait.runnable;
  e.idle_exit_wait = wait.on_idle_cpu;
  e.flush_barrier = work.flush_barrier;
  for (auto* o : k_.observers()) o->on_work_item(k_.now(), e);
}

bool WorkqueueSystem::queue_work(Workqueue& wq, WorkStruct& work, QueueContext ctx, int cpu) {
  // test_and_set_bit(WORK_STRUCT_PENDING_BIT), then
  // clear_pending_if_disabled(): a cancel_work_sync() in progress.
  if (work.pending || work.canceling) return false;
  work.pending = true;
  work.requested = k_.now();
  __queue_work(wq, work, ctx, cpu);
  return true;
}

bool WorkqueueSystem::queue_delayed_work(Workqueue& wq, WorkStruct& work, QueueContext ctx, Time delay, int cpu) {
  if (work.pending || work.canceling) return false;
  work.pending = true;
  work.requested = k_.now();
  if (delay <= Time::zero()) {  // __queue_delayed_work(): no delay, queue at once
    __queue_work(wq, work, ctx, cpu);
    return true;
  }
  Delayed*& d = delayed_by_work_[&work];
  if (!d) {
    auto nd = std::make_unique<Delayed>();
    nd->sys = this;
    nd->work = &work;
    nd->timer = Timer(k_.sim().queue(), nd.get(), 0, kTierTimerSoftirq);
    d = nd.get();
    delayed_.push_back(std::move(nd));
  }
  d->wq = &wq;
  d->req_cpu = cpu;
  d->cpu = cpu >= 0 ? cpu : ctx.cpu;
  work.timer_armed = true;
  // A timer_list (add_timer_on(), or add_timer_global() on the local CPU),
  // run by the tick of its wheel bucket; queued as an hrtimer on that CPU
  // for that time so cpuidle sees it as the CPU's next timer event (the
  // kernel's tick_nohz_next_event() takes the wheel's next expiry).
  // Simplified: a global timer stays on its CPU (6.12's timer migration
  // may expire it on another CPU while this one idles).
  k_.hrtimer_start(d->timer, k_.timer_list_fire_time(delay), d->cpu);
  return true;
}

bool WorkqueueSystem::mod_delayed_work(Workqueue& wq, WorkStruct& work, QueueContext ctx, Time delay, int cpu) {
  const bool was_pending = grab_pending(work, ctx);
  queue_delayed_work(wq, work, ctx, delay, cpu);  // nothing while a cancel_work_sync() disables it
  return was_pending;
}

bool WorkqueueSystem::cancel_work(WorkStruct& work, QueueContext ctx) { return grab_pending(work, ctx); }

// __cancel_work_sync(): __cancel_work() with WORK_CANCEL_DISABLE, then
// __flush_work() (start_flush_work() finds the worker executing the item:
// its barrier goes to the head of that worker's scheduled list), then
// enable_work().
std::optional<Action> WorkqueueSystem::cancel_work_sync_step(Task& self, WorkStruct& work, bool* was_pending) {
  if (std::optional<Action> next; waiting(self, &next)) return next;
  const bool pending = grab_pending(work, QueueContext{&self, self.cpu});
  if (was_pending) *was_pending = pending;
  return wait_step(self, work, work.executions + (work.running_on ? 1 : 0), true);
}

// flush_work(): start_flush_work() inserts the barrier after the queued
// instance (on its pool's worklist or its pwq's inactive list, linked so
// it moves with it) or, when none is queued, at the head of the executing
// worker's scheduled list; an item waiting for its delayed timer is not
// queued (no pwq): only an execution in progress is waited for.
// flush_delayed_work() first deletes the timer and queues the item at once
// (__queue_work() on the delayed work's CPU).
std::optional<Action> WorkqueueSystem::flush_work_step(Task& self, WorkStruct& work, bool delayed, bool* waited) {
  if (std::optional<Action> next; waiting(self, &next)) return next;
  if (delayed && work.timer_armed) {
    Delayed& d = *delayed_by_work_.at(&work);
    k_.hrtimer_cancel(d.timer);
    work.timer_armed = false;
    __queue_work(*d.wq, work, QueueContext{&self, self.cpu}, d.req_cpu);
  }
  const bool queued = work.pending && !work.timer_armed;
  const uint64_t until = work.executions + (work.running_on ? 1 : 0) + (queued ? 1 : 0);
  if (waited) *waited = until > work.executions;
  return wait_step(self, work, until, false);
}

// A caller already waiting calls again: still asleep until its barrier
// ran, then its wait ends (a cancel's enable_work()).
bool WorkqueueSystem::waiting(Task& self, std::optional<Action>* next) {
  for (auto it = flush_waiters_.begin(); it != flush_waiters_.end(); ++it) {
    if (it->task != &self) continue;
    if (!it->done) {
      *next = Action::block(TaskState::kUninterruptible);
    } else {
      if (it->canceling) --it->work->canceling;  // enable_work()
      flush_waiters_.erase(it);
      *next = std::nullopt;
    }
    return true;
  }
  return false;
}

std::optional<Action> WorkqueueSystem::wait_step(Task& self, WorkStruct& work, uint64_t until, bool canceling) {
  if (work.executions >= until) return std::nullopt;
  if (const Worker* w = worker_of(self); w && w->current_ == &work)
    throw ModelError(fmt::format("work '{}' waits for its own execution to end (cancel_work_sync() / flush_work() "
                                 "from its own function deadlocks)",
                                 work.name));
  if (canceling) ++work.canceling;  // work_offqd_disable(): queuing refused until enable_work()
  flush_waiters_.push_back({&self, &work, until, canceling, false});
  return Action::block(TaskState::kUninterruptible);
}

// The barrier after the item runs on the item's worker right after it
// returns (wq_barrier_func(): complete()): its waiters wake.
void WorkqueueSystem::complete_flushes(WorkStruct& work, Task& worker) {
  for (FlushWaiter& f : flush_waiters_)
    if (f.work == &work && !f.done && work.executions >= f.until) {
      f.done = true;
      k_.try_to_wake_up(*f.task, &worker, worker.cpu);
    }
}

// try_to_grab_pending() (6.12 workqueue.c): a pending item waits for its
// timer (deleted), or is queued: on its pwq's inactive list (removed; it
// holds no nr_active slot) or on its pool's worklist (removed, and its
// slot freed: pwq_dec_nr_in_flight() -> pwq_dec_nr_active(), which may
// activate the next inactive item).
bool WorkqueueSystem::grab_pending(WorkStruct& work, QueueContext ctx) {
  if (!work.pending) return false;
  work.pending = false;
  if (work.timer_armed) {
    if (auto it = delayed_by_work_.find(&work); it != delayed_by_work_.end()) k_.hrtimer_cancel(it->second->timer);
    work.timer_armed = false;
    return true;
  }
  auto* pwq = static_cast<PoolWorkqueue*>(work.pwq);
  auto index_in = [&](const Fifo<WorkStruct*>& list) {
    for (size_t i = 0; i < list.size(); ++i)
      if (list[i] == &work) return i;
    return list.size();
  };
  if (const size_t i = index_in(pwq->inactive_works); i < pwq->inactive_works.size()) {
    pwq->inactive_works.remove_at(i);
    // move_linked_works(): a flush's barrier goes to the worklist.
    if (WorkStruct* barrier = unlink_barrier(work)) pwq->pool->worklist.push_back(barrier);
    return true;
  }
  // Active: on the pool's worklist, or already assigned to a worker's
  // scheduled list (assign_work(): behind that worker's execution of it).
  Fifo<WorkStruct*>* list = &pwq->pool->worklist;
  size_t at = index_in(*list);
  for (size_t w = 0; at == list->size() && w < workers_.size(); ++w)
    if (workers_[w]->pool_ == pwq->pool) {
      list = &workers_[w]->scheduled_;
      at = index_in(*list);
    }
  if (at == list->size())
    throw ModelError(fmt::format("work '{}' is pending on workqueue '{}' but on none of its queues", work.name,
                                 pwq->wq->name()));
  if (WorkStruct* barrier = unlink_barrier(work))
    (*list)[at] = barrier;  // the barrier linked behind it stays in its place
  else
    list->remove_at(at);
  pwq_dec_nr_active(*pwq, ctx);
  return true;
}

WorkStruct* WorkqueueSystem::unlink_barrier(WorkStruct& work) {
  // Flushes waiting for the queued instance count one execution beyond
  // the one in progress, if any.
  const uint64_t queued_instance = work.executions + (work.running_on ? 1 : 0) + 1;
  WorkStruct* barrier = nullptr;
  for (FlushWaiter& f : flush_waiters_) {
    if (f.work != &work || f.done || f.until != queued_instance) continue;
    if (!barrier) {
      for (const auto& b : barriers_)
        if (!b->pending && !b->running_on && std::none_of(flush_waiters_.begin(), flush_waiters_.end(),
                                                         [&](const FlushWaiter& o) { return o.work == b.get(); })) {
          barrier = b.get();
          break;
        }
      if (!barrier) {
        barriers_.push_back(std::make_unique<WorkStruct>("wq_barrier"));
        barrier = barriers_.back().get();
        barrier->flush_barrier = true;
      }
      barrier->pending = true;
      barrier->pwq = work.pwq;
      barrier->queued = work.queued;
      barrier->requested = work.requested;
      barrier->req_cpu = work.req_cpu;
      barrier->queue_cpu = work.queue_cpu;
    }
    f.work = barrier;
    f.until = barrier->executions + 1;
  }
  return barrier;
}

// delayed_work_timer_fn(): the timer interrupt queues the work.
void WorkqueueSystem::delayed_timer_fired(Delayed& d) {
  // A timer_list runs from its CPU's tick (an hrtimer): on a tick-stopped
  // CPU the tick is programmed for it, and that interrupt runs the CPU's
  // soft-expired hrtimers too.
  k_.hrtimer_interrupt(d.cpu);
  d.work->timer_armed = false;
  __queue_work(*d.wq, *d.work, QueueContext{nullptr, d.cpu}, d.req_cpu);
}

void WorkqueueSystem::__queue_work(Workqueue& wq, WorkStruct& work, QueueContext ctx, int req_cpu) {
  int cpu = req_cpu >= 0 ? req_cpu : ctx.cpu;
  if (cpu < 0 || cpu >= nr_cpus_) cpu = 0;
  // wq_select_unbound_cpu(): the local CPU when it is in
  // wq_unbound_cpumask (every CPU here).
  PoolWorkqueue* pwq = &wq.pwq_for_cpu(cpu);
  WorkerPool* pool = pwq->pool;
  // Non-reentrancy: still running on its previous pool -> queue there.
  if (work.last_pool && work.last_pool != pool && !wq.ordered() && work.running_on) {
    const Worker* w = static_cast<const Worker*>(work.running_on);
    if (w->pool_ == work.last_pool && w->current_pwq_ && w->current_pwq_->wq == &wq) {
      pwq = w->current_pwq_;
      pool = pwq->pool;
    }
  }
  work.req_cpu = req_cpu;
  work.queue_cpu = ctx.cpu;
  work.queued = k_.now();
  work.pwq = pwq;
  emit(WorkItemEvent::Phase::kQueue, work, wq, nullptr, ctx.cpu);
  if (pwq->inactive_works.empty() && pwq_tryinc_nr_active(*pwq, false)) {
    pwq_activate_work(*pwq, work, ctx, true);
  } else {
    pwq->inactive_works.push_back(&work);  // WORK_STRUCT_INACTIVE
  }
}

// pwq_tryinc_nr_active().
bool WorkqueueSystem::pwq_tryinc_nr_active(PoolWorkqueue& pwq, bool fill) {
  Workqueue& wq = *pwq.wq;
  if (!wq.unbound()) {
    if (pwq.nr_active >= wq.max_active()) return false;
    ++pwq.nr_active;
    return true;
  }
  // Unbound: one wq_node_nr_active (a single NUMA node); a pwq already
  // waiting does not jump the line.
  if (pwq.on_pending && !fill) return false;
  if (wq.nna_nr_ < wq.max_active()) {
    ++wq.nna_nr_;
    ++pwq.nr_active;
    return true;
  }
  if (!pwq.on_pending) {
    pwq.on_pending = true;
    wq.nna_pending_.push_back(&pwq);
  }
  return false;
}

// __pwq_activate_work(), and the kick_pool() that follows it when `kick`:
// __queue_work() kicks the pool of a newly active item; of the activations
// when an active item retires, 6.12 kicks only a foreign pool
// (node_activate_pending_pwq(): pwq->pool != caller_pool), and
// pwq_activate_first_inactive() (per-CPU workqueues) never kicks. The
// retiring worker still runs and takes the item itself (keep_working()).
void WorkqueueSystem::pwq_activate_work(PoolWorkqueue& pwq, WorkStruct& work, QueueContext ctx, bool kick) {
  emit(WorkItemEvent::Phase::kActivate, work, *pwq.wq, nullptr, ctx.cpu);
  pwq.pool->worklist.push_back(&work);
  if (kick) kick_pool(*pwq.pool, ctx);
}

// pwq_dec_nr_active(): one active item finished; activate the next.
void WorkqueueSystem::pwq_dec_nr_active(PoolWorkqueue& pwq, QueueContext ctx) {
  Workqueue& wq = *pwq.wq;
  --pwq.nr_active;
  if (!wq.unbound()) {
    // pwq_activate_first_inactive().
    if (!pwq.inactive_works.empty() && pwq_tryinc_nr_active(pwq, false)) {
      WorkStruct* w = pwq.inactive_works.front();
      pwq.inactive_works.pop_front();
      pwq_activate_work(pwq, *w, ctx, false);
    }
    return;
  }
  --wq.nna_nr_;
  if (wq.nna_nr_ >= wq.max_active()) return;
  // node_activate_pending_pwq(): the first pending pwq gets the slot; it
  // rotates to the tail while it has more inactive work.
  while (!wq.nna_pending_.empty()) {
    PoolWorkqueue* p = wq.nna_pending_.front();
    if (p->inactive_works.empty()) {
      wq.nna_pending_.pop_front();
      p->on_pending = false;
      continue;
    }
    ++wq.nna_nr_;
    ++p->nr_active;
    WorkStruct* w = p->inactive_works.front();
    p->inactive_works.pop_front();
    wq.nna_pending_.pop_front();
    if (p->inactive_works.empty())
      p->on_pending = false;
    else
      wq.nna_pending_.push_back(p);
    pwq_activate_work(*p, *w, ctx, p->pool != pwq.pool);
    break;
  }
}

// kick_pool(): wake the first idle worker if the pool needs one. A worker
// of a non-strict unbound pool whose wake_cpu left the pool's pod (the
// scheduler may run it anywhere in the pool's cpumask) is repatriated: its
// wake-up starts from a pod CPU (cpumask_any_and_distribute() on the
// kicking CPU). Per-CPU pools are strict.
bool WorkqueueSystem::kick_pool(WorkerPool& pool, QueueContext ctx) {
  if (!need_more_worker(pool) || pool.idle_list.empty()) return false;
  Worker* w = pool.idle_list.back();
  Task& p = *w->task_;
  const int this_cpu = ctx.cpu >= 0 ? ctx.cpu : p.cpu;
  auto in_pod = [&pool](int c) { return std::find(pool.pod_cpus.begin(), pool.pod_cpus.end(), c) != pool.pod_cpus.end(); };
  if (!pool.bound() && !pool.strict && !in_pod(p.wake_cpu)) {
    const int cpu = k_.cpumask_any_and_distribute(this_cpu, in_pod);
    if (cpu >= 0) p.wake_cpu = cpu;
  }
  k_.try_to_wake_up(p, ctx.task, this_cpu);
  return true;
}

bool WorkqueueSystem::too_many_workers(const WorkerPool& pool) const {
  const int nr_idle = pool.nr_idle + (pool.manager_active ? 1 : 0);
  const int nr_busy = pool.nr_workers - nr_idle;
  return nr_idle > 2 && (nr_idle - 2) * kMaxIdleWorkersRatio >= nr_busy;
}

void WorkerPool::on_event(uint64_t) { sys->idle_worker_timeout(*this); }

// idle_worker_timeout() + idle_cull_fn(): reap workers idle for
// IDLE_WORKER_TIMEOUT while the pool has too many.
void WorkqueueSystem::idle_worker_timeout(WorkerPool& pool) {
  while (too_many_workers(pool)) {
    Worker* w = pool.idle_list.front();  // the oldest idle (list tail in the kernel)
    const Time expires = w->last_active + params_.idle_timeout;
    if (k_.now() < expires) {
      pool.idle_timer.arm(expires);
      return;
    }
    // set_worker_dying().
    --pool.nr_workers;
    --pool.nr_idle;
    pool.idle_list.erase(pool.idle_list.begin());
    pool.workers.erase(std::find(pool.workers.begin(), pool.workers.end(), w));
    pool.ids[static_cast<size_t>(w->id_)] = false;
    w->flags_ |= Worker::kDie;
    SL_DEBUG("{:.6f} workqueue: reaping idle {}", k_.now().to_s(), w->task_->comm);
    k_.try_to_wake_up(*w->task_, nullptr, w->task_->cpu);
  }
}

// ----------------------------------------------------------------- Worker

Worker::Worker(WorkqueueSystem& sys, WorkerPool& pool, int id)
    : WorkExecutor(sys.kernel()), sys_(sys), pool_(&pool), id_(id) {}

void Worker::set_flags(unsigned f) {
  if ((f & kNotRunning) && !(flags_ & kNotRunning)) --pool_->nr_running;
  flags_ |= f;
}

void Worker::clr_flags(unsigned f) {
  const unsigned old = flags_;
  flags_ &= ~f;
  if ((f & kNotRunning) && (old & kNotRunning) && !(flags_ & kNotRunning)) ++pool_->nr_running;
}

void Worker::enter_idle() {
  flags_ |= kIdle;
  ++pool_->nr_idle;
  last_active = k_.now();
  pool_->idle_list.push_back(this);  // LIFO: back is the head
  if (sys_.too_many_workers(*pool_) && !pool_->idle_timer.armed())
    pool_->idle_timer.arm(k_.now() + sys_.params_.idle_timeout);
}

void Worker::leave_idle() {
  if (!(flags_ & kIdle)) return;
  clr_flags(kIdle);
  --pool_->nr_idle;
  auto& l = pool_->idle_list;
  l.erase(std::find(l.begin(), l.end(), this));
}

// wq_worker_sleeping(): a running worker blocks; if it was the pool's
// running one, another idle worker is woken for the pending work.
void Worker::on_sleeping(Task& self) {
  if (flags_ & kNotRunning) return;
  if (sleeping_) return;
  sleeping_ = true;
  --pool_->nr_running;
  sys_.kick_pool(*pool_, QueueContext{&self, self.cpu});
}

// wq_worker_running(): back from schedule() after blocking.
void Worker::on_running(Task& self) {
  if (!sleeping_) return;
  if (!(flags_ & kNotRunning)) ++pool_->nr_running;
  sleeping_ = false;
}

// The create_worker() delay ended, or a work function's sleep.
void Worker::on_timer() {
  if (creating_) {
    creating_ = false;
    sys_.create_worker(*pool_);
  } else {
    k_.hrtimer_interrupt(timer_cpu_);  // the sleep's hrtimer: the CPU's other soft-expired timers run too
  }
  k_.try_to_wake_up(*task_, nullptr, task_->cpu);
}

// process_one_work() up to the call of the function.
void Worker::start_work(WorkStruct& w) {
  PoolWorkqueue* pwq = static_cast<PoolWorkqueue*>(w.pwq);
  current_ = &w;
  current_pwq_ = pwq;
  w.running_on = this;
  w.last_pool = pool_;
  if (pwq->wq->flags() & kWqCpuIntensive) set_flags(kCpuIntensive);
  // Chain execution for NOT_RUNNING workers (unbound, CPU intensive).
  sys_.kick_pool(*pool_, QueueContext{task_, task_->cpu});
  w.pending = false;  // set_work_pool_and_clear_pending()
  cur_queued_ = w.queued;
  cur_req_cpu_ = w.req_cpu;
  cur_started_ = k_.now();
  cur_wait_ = sys_.tracker_.wait_between(*task_, w.queued, cur_started_);
  sys_.emit(WorkItemEvent::Phase::kStart, w, *pwq->wq, task_, task_->cpu, cur_started_, cur_wait_);
  begin(w);
}

// process_one_work() after the function returned.
void Worker::finish_work() {
  WorkStruct& w = *current_;
  PoolWorkqueue* pwq = current_pwq_;
  ++w.executions;
  // The end event reports this execution, even if the item was queued again meanwhile.
  const Time saved_queued = w.queued;
  const int saved_req = w.req_cpu;
  w.queued = cur_queued_;
  w.req_cpu = cur_req_cpu_;
  sys_.emit(WorkItemEvent::Phase::kEnd, w, *pwq->wq, task_, task_->cpu, cur_started_, cur_wait_);
  w.queued = saved_queued;
  w.req_cpu = saved_req;
  clr_flags(kCpuIntensive);
  w.running_on = nullptr;
  current_ = nullptr;
  current_pwq_ = nullptr;
  // pwq_dec_nr_in_flight(); a barrier holds no nr_active slot (WORK_STRUCT_INACTIVE).
  if (!w.flush_barrier) sys_.pwq_dec_nr_active(*pwq, QueueContext{task_, task_->cpu});
  if (!sys_.flush_waiters_.empty()) sys_.complete_flushes(w, *task_);
}

// assign_work(): take the first work of the worklist; if another worker
// of the pool is executing it, it goes to that worker's scheduled list
// (run after its current execution, never concurrently).
void Worker::assign_work() {
  WorkStruct* w = pool_->worklist.front();
  pool_->worklist.pop_front();
  Worker* collision = static_cast<Worker*>(const_cast<void*>(w->running_on));
  if (collision && collision != this && collision->pool_ == pool_)
    collision->scheduled_.push_back(w);
  else
    scheduled_.push_back(w);
}

// worker_thread() as a state machine: each call continues where the
// previous action (a function step, a sleep) left it.
Action Worker::next(Task& self) {
  WorkerPool& pool = *pool_;
  for (;;) {
    switch (st_) {
      case St::kWokeUp:
        if (flags_ & kDie) return Action::exit();  // set_pf_worker(false); return
        leave_idle();
        st_ = St::kRecheck;
        continue;
      case St::kRecheck:
        if (!sys_.need_more_worker(pool)) {
          // sleep: enter idle and schedule() (TASK_IDLE, shown as S here).
          enter_idle();
          st_ = St::kWokeUp;
          return Action::block(TaskState::kInterruptible);
        }
        // manage_workers() -> maybe_create_worker(): no idle worker left
        // to take over if this one blocks; one manager at a time.
        if (!sys_.may_start_working(pool) && !pool.manager_active && sys_.can_create_worker(pool)) {
          pool.manager_active = true;
          creating_ = true;
          st_ = St::kManaging;
          if (sys_.params_.create_worker_delay <= Time::zero()) {
            creating_ = false;
            sys_.create_worker(pool);
            continue;
          }
          timer_.arm(k_.now() + sys_.params_.create_worker_delay);
          return Action::block(TaskState::kUninterruptible);
        }
        clr_flags(kPrep);  // starts participating in concurrency management
        st_ = St::kPick;
        if (pool.worklist.empty()) {
          st_ = St::kEndPick;
          continue;
        }
        // do { assign_work(); process_scheduled_works(); } while (keep_working())
        assign_work();
        continue;
      case St::kManaging:
        pool.manager_active = false;
        st_ = St::kRecheck;  // maybe_create_worker() rechecks need_to_create_worker()
        continue;
      case St::kPick:
        if (!scheduled_.empty()) {
          WorkStruct* w = scheduled_.front();
          scheduled_.pop_front();
          start_work(*w);
          st_ = St::kExec;
          continue;
        }
        if (sys_.keep_working(pool)) {
          assign_work();
          continue;
        }
        st_ = St::kEndPick;
        continue;
      case St::kExec: {
        Action a = exec_step();
        if (a.kind != Action::Kind::kExit) return a;
        finish_work();
        st_ = St::kPick;
        // cond_resched() after each work item: the next action starts at a
        // preemption point anyway.
        continue;
      }
      case St::kEndPick:
        set_flags(kPrep);  // worker_set_flags(WORKER_PREP)
        enter_idle();
        st_ = St::kWokeUp;
        return Action::block(TaskState::kInterruptible);
    }
  }
}

}  // namespace schedlab
