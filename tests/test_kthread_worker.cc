// kthread_worker (models/kernel/kthread_worker.h): one thread, works in
// queue order, and the DRM RFC's priority following within its cap.
// No overheads: every time is computed by hand.
#include <catch2/catch.hpp>

#include "models/kernel/kthread_worker.h"
#include "sched_test_util.h"

using namespace schedlab;
using namespace schedlab::testing;

namespace {

EventSpec ev_kqueue(const std::string& worker, const std::string& work, Time cost) {
  EventSpec e = ev_call(CallSpec::Op::kKthreadQueueWork, worker);
  e.call.work = work;
  e.call.cost = cost;
  return e;
}

struct Seen {
  Policy policy;
  int nice, rt_priority;
  Time queued, started, ended;
};

// The worker's policy when each work starts, and when each ends.
class KLog : public SchedObserver {
 public:
  void on_work_item(Time t, const WorkItemEvent& e) override {
    if (e.phase == WorkItemEvent::Phase::kStart)
      starts.push_back({e.worker->policy, e.worker->nice(), e.worker->rt_priority, e.queued, e.started, Time::zero()});
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
