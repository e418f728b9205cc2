// kthread_worker (models/kernel/kthread_worker.h): one thread, works in
// queue order, and the DRM RFC's priority following within its cap.
// No overheads: every time is computed by hand.
#include <catch2/catch.hpp>

#include <memory>
#include <optional>

#include "models/config/config.h"
#include "models/kernel/kernel.h"
#include "models/kernel/kthread_worker.h"
#include "models/kernel/workqueue/runnable_tracker.h"
#include "config_test_util.h"
#include "sched_test_util.h"

using namespace schedlab;
using namespace schedlab::testing;

namespace {

EventSpec ev_kqueue(const std::string& worker, const std::string& work, Time cost, Time delay = Time::zero(),
                    bool mod = false) {
  EventSpec e = ev_call(CallSpec::Op::kKthreadQueueWork, worker);
  e.call.work = work;
  e.call.cost = cost;
  e.call.delay = delay;
  e.call.mod = mod;
  return e;
}

struct Seen {
  Policy policy;
  int nice, rt_priority;
  Time queued, started, ended;
  std::string work;
};

// The worker's policy when each work starts, and when each ends.
class KLog : public SchedObserver {
 public:
  void on_work_item(Time t, const WorkItemEvent& e) override {
    if (e.flush_barrier) return;  // a flush's own work
    if (e.phase == WorkItemEvent::Phase::kStart)
      starts.push_back({e.worker->policy, e.worker->nice(), e.worker->rt_priority, e.queued, e.started, Time::zero(),
                        std::string(e.work)});
    if (e.phase == WorkItemEvent::Phase::kEnd) starts.back().ended = t;
  }
  std::vector<Seen> starts;
};

ScenarioParams kw_scenario(KthreadFollow follow) {
  ScenarioParams p = exact_scenario("6.12", 1000, 1);
  p.duration = Time::ms(20);
  KthreadWorkerParams kw;
  kw.name = "drm_kw";
  kw.follow = follow;
  p.kthread_workers = {kw};
  return p;
}

// The worker's scheduling state once the run is over (all works done).
const Task& worker_task(System& sys) { return find_task(sys.kernel(), "drm_kw"); }

}  // namespace

TEST_CASE("a kthread_worker runs its works one at a time, in queue order", "[kthread_worker]") {
  ScenarioParams p = kw_scenario(KthreadFollow::kNone);
  p.tasks = {task("q", {ev_kqueue("drm_kw", "a", Time::ms(1)), ev_kqueue("drm_kw", "b", Time::ms(2)),
                        ev_kqueue("drm_kw", "a", Time::ms(1)),  // a is pending: not queued again
                        ev_sleep(Time::s(10))},
                  Policy::kFifo, 50)};
  KLog log = run_logged<KLog>(p);
  REQUIRE(log.starts.size() == 2);
  CHECK(log.starts[0].started == Time::zero());
  CHECK(log.starts[0].ended == Time::ms(1));
  CHECK(log.starts[1].started == Time::ms(1));
  CHECK(log.starts[1].ended == Time::ms(3));
}

TEST_CASE("the kthread_worker follows the submitter's priority within its cap", "[kthread_worker]") {
  struct Case {
    KthreadFollow follow;
    Policy submitter_policy;
    int submitter_prio;  // nice or RT priority
    Policy want_policy;
    int want_nice, want_rt;
  };
  // Rows: the RFC capped at MIN_NICE ("--RFC") and as is ("Full RFC"), and
  // the stock thread that follows nobody; submitter SCHED_OTHER, nice -1, FIFO 1.
  auto c = GENERATE(Case{KthreadFollow::kNone, Policy::kFifo, 1, Policy::kNormal, 0, 0},
                    Case{KthreadFollow::kMinNice, Policy::kNormal, 0, Policy::kNormal, 0, 0},
                    Case{KthreadFollow::kMinNice, Policy::kNormal, -1, Policy::kNormal, -1, 0},
                    Case{KthreadFollow::kMinNice, Policy::kFifo, 1, Policy::kNormal, -20, 0},
                    Case{KthreadFollow::kFifo, Policy::kNormal, -1, Policy::kNormal, -1, 0},
                    Case{KthreadFollow::kFifo, Policy::kFifo, 1, Policy::kFifo, 0, 1},
                    Case{KthreadFollow::kFifo, Policy::kFifo, 30, Policy::kFifo, 0, 30});
  ScenarioParams p = kw_scenario(c.follow);
  p.tasks = {task("submit", {ev_kqueue("drm_kw", "run_job", Time::us(100)), ev_sleep(Time::s(10))},
                  c.submitter_policy, c.submitter_prio)};
  System sys(p, 1);
  KLog log;
  sys.add_observer(&log);
  sys.run();
  REQUIRE(log.starts.size() == 1);
  CHECK(log.starts[0].policy == c.want_policy);
  CHECK(log.starts[0].nice == c.want_nice);
  CHECK(log.starts[0].rt_priority == c.want_rt);
  // Once the work returned, the worker is back to its own SCHED_OTHER nice 0.
  const Task& w = worker_task(sys);
  CHECK(w.policy == Policy::kNormal);
  CHECK(w.nice() == 0);
  CHECK(w.prio == 120);
}

TEST_CASE("only the worker that follows to FIFO starts at once beside a FIFO hog", "[kthread_worker]") {
  // One CPU. A FIFO 10 hog runs 3 ms from t=0; a FIFO 50 submitter queues
  // one work at t=0 and sleeps. Raised to FIFO 50 the worker preempts the
  // hog at once (wait 0); nice -20 (the MIN_NICE cap) or nice 0 is still
  // fair and waits for the hog (3 ms, all of it runnable).
  auto wait = [](KthreadFollow follow) {
    ScenarioParams p = kw_scenario(follow);
    p.tasks = {task("submit", {ev_kqueue("drm_kw", "run_job", Time::us(100)), ev_sleep(Time::s(10))},
                    Policy::kFifo, 50),
               task("hog", {ev_run(Time::ms(3)), ev_sleep(Time::s(10))}, Policy::kFifo, 10)};
    KLog log = run_logged<KLog>(p);
    REQUIRE(log.starts.size() == 1);
    return log.starts[0].started - log.starts[0].queued;
  };
  CHECK(wait(KthreadFollow::kFifo) == Time::zero());
  CHECK(wait(KthreadFollow::kMinNice) == Time::ms(3));
  CHECK(wait(KthreadFollow::kNone) == Time::ms(3));
}

TEST_CASE("a raised kthread_worker drops back once the boosted work returned", "[kthread_worker]") {
  // A FIFO 20 task queues a (2 ms) at t=0; a nice-0 task queues b at
  // 0.5 ms, while a runs. The worker stays FIFO 20 until a returns (2 ms);
  // b carries nice 0, so b runs at the worker's own SCHED_OTHER nice 0.
  // (Raised while queued behind rt on CPU 0, the worker is pushed to CPU 1,
  // switched_to_rt(); `other` sits on CPU 2, out of its way.)
  ScenarioParams p = kw_scenario(KthreadFollow::kFifo);
  p.platform.cpus = 3;
  TaskSpec rt = task("rt", {ev_kqueue("drm_kw", "a", Time::ms(2)), ev_sleep(Time::s(10))}, Policy::kFifo, 20);
  TaskSpec other = task("other", {ev_sleep(Time::us(500)), ev_kqueue("drm_kw", "b", Time::ms(1)), ev_sleep(Time::s(10))});
  other.cpus = {2};
  p.tasks = {rt, other};
  KLog log = run_logged<KLog>(p);
  REQUIRE(log.starts.size() == 2);
  CHECK(log.starts[0].policy == Policy::kFifo);
  CHECK(log.starts[0].rt_priority == 20);
  CHECK(log.starts[1].policy == Policy::kNormal);
  CHECK(log.starts[1].nice == 0);
  CHECK(log.starts[1].started == Time::ms(2));
}

TEST_CASE("a kthread_worker raised to nice -5 gets the CPU share of its new weight", "[kthread_worker][setscheduler]") {
  // One CPU, a nice-0 hog and the worker running a 1 s work queued at t=0
  // by a nice -5 task: set_scheduler() reweights the worker to 3121
  // (sched_prio_to_weight[15]) against the hog's 1024, so it gets
  // 3121 / 4145 = 75.3% of the CPU while the work runs.
  ScenarioParams p = kw_scenario(KthreadFollow::kMinNice);
  p.duration = Time::ms(400);
  p.tasks = {task("submit", {ev_kqueue("drm_kw", "long", Time::s(1)), ev_sleep(Time::s(10))}, Policy::kNormal, -5),
             hog("hog")};
  System sys(p, 1);
  sys.run();
  RunResult r = sys.result();
  const double share = metrics_of(r, "drm_kw").cpu_time.to_s() / 0.4;
  CHECK(share == Approx(3121.0 / 4145.0).margin(0.01));
  CHECK(find_task(sys.kernel(), "drm_kw").nice() == -5);  // still running the work
}

TEST_CASE("a queuer of an already pending work still raises the following worker", "[kthread_worker]") {
  // Three CPUs. A nice-0 task (CPU 2) queues a (1 ms) and b at t=0; a
  // FIFO 30 task (CPU 1) queues b again at 0.5 ms, while a runs and b is
  // pending: nothing is queued, but the worker now follows FIFO 30, so b
  // starts at 1 ms at FIFO 30 (a ran at the worker's own nice 0).
  ScenarioParams p = kw_scenario(KthreadFollow::kFifo);
  p.platform.cpus = 3;
  TaskSpec low = task("low", {ev_kqueue("drm_kw", "a", Time::ms(1)), ev_kqueue("drm_kw", "b", Time::ms(1)),
                              ev_sleep(Time::s(10))});
  low.cpus = {2};
  TaskSpec hi = task("hi", {ev_kqueue("drm_kw", "b", Time::ms(1)), ev_sleep(Time::s(10))}, Policy::kFifo, 30);
  hi.cpus = {1};
  hi.delay = Time::us(500);
  p.tasks = {low, hi};
  KLog log = run_logged<KLog>(p);
  REQUIRE(log.starts.size() == 2);
  CHECK(log.starts[0].policy == Policy::kNormal);
  CHECK(log.starts[1].started == Time::ms(1));
  CHECK(log.starts[1].policy == Policy::kFifo);
  CHECK(log.starts[1].rt_priority == 30);
}

// kthread_queue_delayed_work() at HZ=1000, queued at jiffy 0 with a 3 ms
// delay: the timer_list expires at jiffy 3 and sits in the wheel's
// level-0 bucket after it, so the tick of jiffy 4 (4 ms) inserts the work
// and wakes the worker.
TEST_CASE("a delayed kthread work is inserted when its timer_list expires", "[kthread_worker]") {
  ScenarioParams p = kw_scenario(KthreadFollow::kNone);
  p.tasks = {task("q", {ev_kqueue("drm_kw", "idle", Time::ms(1), Time::ms(3)), ev_sleep(Time::s(10))},
                  Policy::kFifo, 50)};
  KLog log = run_logged<KLog>(p);
  REQUIRE(log.starts.size() == 1);
  CHECK(log.starts[0].queued == Time::ms(4));
  CHECK(log.starts[0].started == Time::ms(4));
  CHECK(log.starts[0].ended == Time::ms(5));
}

// kthread_mod_delayed_work() pushes a pending work's timer back, as a
// display driver re-arms its idle work at each frame: a 3 ms delay set at
// 0, 2 and 4 ms expires in the bucket after jiffy 3, 5, then 7: the work
// runs once, at 8 ms.
TEST_CASE("kthread_mod_delayed_work re-arms a pending work's timer", "[kthread_worker]") {
  ScenarioParams p = kw_scenario(KthreadFollow::kNone);
  const EventSpec rearm = ev_kqueue("drm_kw", "idle", Time::ms(1), Time::ms(3), true);
  p.tasks = {task("q", {rearm, ev_sleep(Time::ms(2)), rearm, ev_sleep(Time::ms(2)), rearm, ev_sleep(Time::s(10))},
                  Policy::kFifo, 50)};
  KLog log = run_logged<KLog>(p);
  REQUIRE(log.starts.size() == 1);
  CHECK(log.starts[0].started == Time::ms(8));
}

// A work already on the work list is taken back by kthread_mod_delayed_work()
// (__kthread_cancel_work()): the worker runs "busy" (0 -> 5 ms); "a",
// queued at 1 ms behind it, is re-queued at 2 ms with a 3 ms delay
// (jiffy 5, the bucket after: 6 ms), so it runs at 6 ms, not at 5.
TEST_CASE("kthread_mod_delayed_work takes a queued work off the list", "[kthread_worker]") {
  ScenarioParams p = kw_scenario(KthreadFollow::kNone);
  p.platform.cpus = 2;
  TaskSpec q = task("q", {ev_kqueue("drm_kw", "busy", Time::ms(5)), ev_sleep(Time::ms(1)),
                          ev_kqueue("drm_kw", "a", Time::ms(1)), ev_sleep(Time::ms(1)),
                          ev_kqueue("drm_kw", "a", Time::ms(1), Time::ms(3), true), ev_sleep(Time::s(10))},
                    Policy::kFifo, 50);
  q.cpus = {1};
  p.tasks = {q};
  KLog log = run_logged<KLog>(p);
  REQUIRE(log.starts.size() == 2);
  CHECK(log.starts[0].work == "busy");
  CHECK(log.starts[1].work == "a");
  CHECK(log.starts[1].queued == Time::ms(6));
  CHECK(log.starts[1].started == Time::ms(6));
}

namespace {

// A kthread_worker on CPU 0 and one task on CPU 1 whose body runs
// `script` (each entry: at its time, one call on the worker) and records
// kthread_cancel_delayed_work_sync()'s return.
struct CancelRig {
  struct Call {
    enum Kind { kQueue, kQueueDelayed, kMod, kCancelSync } kind;
    Time at, delay;
  };
  class Body final : public TaskBody, public EventHandler {
   public:
    Body(CancelRig& r, std::vector<Call> calls)
        : r_(r), calls_(std::move(calls)), timer_(r.k->sim().queue(), this, 0, kTierTimer) {}
    Action next(Task& self) override {
      while (pc_ < calls_.size()) {
        const Call& c = calls_[pc_];
        if (r_.k->now() < c.at) {
          timer_.arm(c.at);
          return Action::block(TaskState::kInterruptible);
        }
        const QueueContext ctx{&self, self.cpu};
        switch (c.kind) {
          case Call::kQueue:
            queued.push_back(r_.kw->queue_work(r_.work, ctx));
            break;
          case Call::kQueueDelayed:
            queued.push_back(r_.kw->queue_delayed_work(r_.work, ctx, c.delay, &self));
            break;
          case Call::kMod:
            queued.push_back(r_.kw->mod_delayed_work(r_.work, ctx, c.delay, &self));
            break;
          case Call::kCancelSync:
            if (auto wait = r_.kw->cancel_delayed_work_sync_step(self, r_.work, &was_pending)) return *wait;
            cancel_returned = r_.k->now();
            break;
        }
        ++pc_;
      }
      return Action::block(TaskState::kInterruptible);
    }
    void on_event(uint64_t) override { r_.k->try_to_wake_up(*task, nullptr, task->cpu); }
    Task* task = nullptr;
    std::vector<bool> queued;
    bool was_pending = false;
    Time cancel_returned = Time::max();

   private:
    CancelRig& r_;
    std::vector<Call> calls_;
    size_t pc_ = 0;
    Timer timer_;
  };

  explicit CancelRig(std::vector<Call> calls) {
    ScenarioParams sp = exact_scenario("6.12", 1000, 2);
    k = std::make_unique<Kernel>(sp.kernel, sp.platform);
    k->add_observer(&log);
    KthreadWorkerParams kp;
    kp.name = "kw";
    kp.cpus = {0};
    kw = std::make_unique<KthreadWorker>(*k, kp, tracker);
    work.payload = {{WorkStep::Kind::kRun, Time::ms(2)}};
    body = std::make_unique<Body>(*this, std::move(calls));
    Task& t = k->create_task("canceller", "canceller", Policy::kFifo, 0, 50, {1}, true);
    body->task = &t;
    k->set_body(t, body.get());
    k->start_task_at(t, Time::zero());
  }
  std::unique_ptr<Kernel> k;
  RunnableTracker tracker;
  KLog log;
  std::unique_ptr<KthreadWorker> kw;
  WorkStruct work{"w"};
  std::unique_ptr<Body> body;
};

}  // namespace

// kthread_cancel_delayed_work_sync() of a work whose timer is armed: the
// timer is deleted, the call returns at once (true: it was pending) and
// the work never runs.
TEST_CASE("kthread_cancel_delayed_work_sync deletes a pending work's timer", "[kthread_worker]") {
  using C = CancelRig::Call;
  CancelRig r({C{C::kQueueDelayed, Time::zero(), Time::ms(3)}, C{C::kCancelSync, Time::ms(1), Time::zero()}});
  r.k->run_until(Time::ms(20));
  CHECK(r.body->was_pending);
  CHECK(r.body->cancel_returned == Time::ms(1));
  CHECK(r.log.starts.empty());
  CHECK_FALSE(r.work.pending);
}

// Of a work executing (0 -> 2 ms on CPU 0): nothing pending (false); the
// caller sleeps in D until that execution returns at 2 ms; queuing it
// meanwhile (1 ms) is blocked (work->canceling), and works again once the
// call returned (3 ms: it runs 3 -> 5 ms).
TEST_CASE("kthread_cancel_delayed_work_sync waits for the executing work and blocks queuing meanwhile",
          "[kthread_worker]") {
  using C = CancelRig::Call;
  CancelRig r({C{C::kQueue, Time::zero(), Time::zero()}, C{C::kCancelSync, Time::us(500), Time::zero()}});
  // A second task queues the work at 1 ms (blocked) and at 3 ms.
  CancelRig::Body other(r, {C{C::kQueue, Time::ms(1), Time::zero()}, C{C::kQueue, Time::ms(3), Time::zero()}});
  Task& t = r.k->create_task("other", "other", Policy::kFifo, 0, 40, {1}, true);
  other.task = &t;
  r.k->set_body(t, &other);
  r.k->start_task_at(t, Time::zero());
  r.k->run_until(Time::ms(20));
  CHECK_FALSE(r.body->was_pending);
  CHECK(r.body->cancel_returned == Time::ms(2));
  CHECK(other.queued == std::vector<bool>{false, true});
  REQUIRE(r.log.starts.size() == 2);
  CHECK(r.log.starts[0].ended == Time::ms(2));
  CHECK(r.log.starts[1].started == Time::ms(3));
  CHECK(r.work.canceling == 0);
}

// kthread_queue_work's delay and mod keys (YAML), and their errors.
TEST_CASE("kthread_queue_work's delay and mod load from YAML", "[kthread_worker][config]") {
  const std::string yaml =
      "name: s\nduration: 1s\nkthread_workers:\n  - {name: kw}\ntasks:\n  - name: t\n    events:\n"
      "      - kthread_queue_work: {worker: kw, work: idle, cost: 10us, delay: 58ms, mod: true}\n";
  const ScenarioParams p = load_scenario_yaml(yaml, "x.yaml");
  const CallSpec& c = p.tasks[0].phases[0].events[0].call;
  CHECK(c.delay == Time::ms(58));
  CHECK(c.mod);
  auto error = [&](const std::string& from, const std::string& to) { return error_when_replaced(yaml, from, to); };
  CHECK_THAT(error("mod: true", "mod: maybe"),
             Catch::Contains("x.yaml:") && Catch::Contains("kthread_queue_work.mod: expected true or false, got 'maybe'"));
  CHECK_THAT(error("delay: 58ms", "delay: soon"), Catch::Contains("kthread_queue_work.delay"));
  CHECK_THAT(error("delay: 58ms", "delay: 58ms, cpu: 1"), Catch::Contains("unknown key 'cpu'"));
}

// kthread_mod_delayed_work()'s return and an executing work: the work runs
// 0 -> 2 ms; mod at 1 ms (delay 0) finds it executing, not pending
// (false), and queues it again behind itself; mod at 1.5 ms (jiffy 1,
// 3 ms) finds it queued (true), takes it off the list and arms its timer:
// the bucket after jiffy 4, 5 ms. It runs twice: at 0 and at 5 ms.
TEST_CASE("kthread_mod_delayed_work says whether the work was pending, and queues an executing work again",
          "[kthread_worker]") {
  using C = CancelRig::Call;
  CancelRig r({C{C::kQueue, Time::zero(), Time::zero()}, C{C::kMod, Time::ms(1), Time::zero()},
               C{C::kMod, Time::us(1500), Time::ms(3)}});
  r.k->run_until(Time::ms(20));
  CHECK(r.body->queued == std::vector<bool>{true, false, true});
  REQUIRE(r.log.starts.size() == 2);
  CHECK(r.log.starts[0].started == Time::zero());
  CHECK(r.log.starts[1].started == Time::ms(5));
}

// A kthread_work belongs to one worker (kthread_queue_work()'s
// WARN_ON_ONCE(work->worker != worker)): the model refuses a second.
TEST_CASE("a kthread work queued on two kthread_workers is a model error naming both", "[kthread_worker]") {
  using C = CancelRig::Call;
  CancelRig r({C{C::kQueueDelayed, Time::zero(), Time::ms(3)}});
  KthreadWorkerParams kp;
  kp.name = "kw2";
  KthreadWorker kw2(*r.k, kp, r.tracker);
  r.k->run_until(Time::ms(1));
  Task& any = *r.k->tasks().front();
  CHECK_THROWS_WITH(kw2.mod_delayed_work(r.work, QueueContext{&any, 0}, Time::ms(1), nullptr),
                    Catch::Contains("work 'w' queued on kthread_worker 'kw' and on 'kw2'"));
}
