// Runtime PM (models/kernel/pm_runtime/, drivers/base/power/runtime.c 6.12):
// the status machine, autosuspend and its timer, pm_runtime_work on pm_wq,
// waits on power.wait_queue, deferred resume, parents and children.
// Every rig has no scheduling overheads, no timer slack and creates
// workers instantly, so the times below are computed by hand. The pm_wq is
// bound (WQ_FREEZABLE, as Linux 6.12 allocates it), so its items run on
// kworker/0:N of the single CPU unless a test says otherwise.
#include <catch2/catch.hpp>

#include <cerrno>
#include <memory>
#include <string>
#include <vector>

#include "models/errors.h"
#include "models/kernel/kernel.h"
#include "models/kernel/pm_runtime/pm_runtime.h"
#include "models/kernel/workqueue/runnable_tracker.h"
#include "models/kernel/workqueue/workqueue.h"
#include "sched_test_util.h"

using namespace schedlab;
using namespace schedlab::testing;

namespace {

// What the observers saw: status changes as "t_us device status task"
// (task "-" for an interrupt or timer), D sleeps as records.
struct DSleep {
  std::string device, task;
  const Task* task_ptr = nullptr;
  bool in_resume = false;
  Time start, d_state, waker_wait;
  const Task* waker = nullptr;
};

class RpmLog : public SchedObserver {
 public:
  void on_rpm(Time t, const RpmEvent& e) override {
    if (e.kind == RpmEvent::Kind::kStatus) {
      statuses.push_back(std::to_string(t.count() / 1000) + " " + std::string(e.device) + " " +
                         rpm_status_name(static_cast<RpmStatus>(e.status)) + " " + (e.task ? e.task->comm : "-"));
      return;
    }
    DSleep s;
    s.device = std::string(e.device);
    s.task = e.task ? e.task->comm : "-";
    s.task_ptr = e.task;
    s.in_resume = e.in_resume;
    s.start = e.start;
    s.d_state = e.d_state;
    s.waker = e.waker;
    s.waker_wait = e.waker_wait;
    sleeps.push_back(s);
  }
  void on_waking(Time t, const Task& p, const Task* waker, int target_cpu) override {
    wakings.push_back(std::to_string(t.count() / 1000) + " " + p.comm + " by " + (waker ? waker->comm : "-"));
  }
  bool woken(const std::string& what) const {
    for (const auto& w : wakings)
      if (w == what) return true;
    return false;
  }
  void on_work_item(Time t, const WorkItemEvent& e) override {
    if (e.phase == WorkItemEvent::Phase::kQueue)
      queued.push_back(std::to_string(t.count() / 1000) + " " + std::string(e.work) + " " + std::string(e.workqueue));
  }
  std::vector<std::string> statuses;
  std::vector<DSleep> sleeps;
  std::vector<std::string> queued;
  std::vector<std::string> wakings;  // sched_waking: "t_us task by waker"
};

struct Step {
  enum class Kind { kRun, kUntil, kCall, kNosleep };
  Kind kind = Kind::kRun;
  Time t;
  std::string dev;
  RpmApi api = RpmApi::kGetSync;
};
Step run(Time t) { return Step{Step::Kind::kRun, t, "", RpmApi::kGetSync}; }
Step until(Time t) { return Step{Step::Kind::kUntil, t, "", RpmApi::kGetSync}; }
// A call stepped through RpmCall in the task's context.
Step call(const std::string& dev, RpmApi api) { return Step{Step::Kind::kCall, Time::zero(), dev, api}; }
// PmRuntime::call_nosleep() from the task.
Step nosleep(const std::string& dev, RpmApi api) { return Step{Step::Kind::kNosleep, Time::zero(), dev, api}; }

struct CallRecord {
  RpmApi api;
  std::string dev;
  Time begin, end;
  int result = 0;
};

class Rig;

// A task running a script of CPU work, sleeps (S, until an absolute time)
// and runtime PM calls, then exiting.
class Script final : public TaskBody, public EventHandler {
 public:
  Script(Rig& rig, std::vector<Step> steps);
  Action next(Task& self) override;
  void on_event(uint64_t) override;
  std::vector<CallRecord> calls;
  Task* task = nullptr;

 private:
  Rig& rig_;
  std::vector<Step> steps_;
  size_t pc_ = 0;
  bool in_call_ = false;
  RpmCall call_;
  Timer timer_;
};

// A runtime PM call from an interrupt (ctx.task == nullptr) at a given time.
class Irq final : public EventHandler {
 public:
  Irq(Rig& rig, Time at, std::string dev, RpmApi api);
  void on_event(uint64_t) override;
  int result = 1000;

 private:
  Rig& rig_;
  std::string dev_;
  RpmApi api_;
};

class Rig {
 public:
  explicit Rig(std::vector<RpmDeviceParams> devices, int cpus = 1) {
    ScenarioParams sp = exact_scenario("6.12", 1000, cpus);
    k = std::make_unique<Kernel>(sp.kernel, sp.platform);
    k->add_observer(&tracker);
    k->add_observer(&log);
    WorkqueueSubsysParams wp;
    wp.create_worker_delay = Time::zero();
    wqs = std::make_unique<WorkqueueSystem>(*k, sp.platform, wp, tracker);
    // kernel/power/main.c: alloc_workqueue("pm", WQ_FREEZABLE, 0).
    WorkqueueParams pmwq;
    pmwq.name = "pm";
    pmwq.flags = kWqFreezable;
    Workqueue& wq = wqs->alloc_workqueue(pmwq);
    PmRuntimeParams pp;
    pp.devices = std::move(devices);
    pm = std::make_unique<PmRuntime>(*k, *wqs, wq, pp, tracker);
  }
  Script& add(const std::string& name, std::vector<Step> steps, Policy policy = Policy::kNormal, int prio = 0,
              const std::vector<int>& cpus = {}) {
    Task& t = k->create_task(name, name, policy, policy == Policy::kNormal ? prio : 0,
                             policy == Policy::kNormal ? 0 : prio, cpus, false);
    scripts.push_back(std::make_unique<Script>(*this, std::move(steps)));
    Script& s = *scripts.back();
    s.task = &t;
    k->set_body(t, &s);
    k->start_task_at(t, Time::zero());
    return s;
  }
  Irq& irq(Time at, const std::string& dev, RpmApi api) {
    irqs.push_back(std::make_unique<Irq>(*this, at, dev, api));
    return *irqs.back();
  }
  RpmDevice& dev(const std::string& name) {
    RpmDevice* d = pm->device(name);
    if (!d) throw std::runtime_error("no device " + name);
    return *d;
  }
  void run_until(Time t) { k->run_until(t); }

  std::unique_ptr<Kernel> k;
  RunnableTracker tracker;
  RpmLog log;
  std::unique_ptr<WorkqueueSystem> wqs;
  std::unique_ptr<PmRuntime> pm;
  std::vector<std::unique_ptr<Script>> scripts;
  std::vector<std::unique_ptr<Irq>> irqs;
};

Script::Script(Rig& rig, std::vector<Step> steps)
    : rig_(rig), steps_(std::move(steps)), call_(*rig.pm), timer_(rig.k->sim().queue(), this, 0, kTierTimer) {}

Action Script::next(Task& self) {
  for (;;) {
    if (in_call_) {
      Action a = call_.step(self);
      if (a.kind != Action::Kind::kExit) return a;
      in_call_ = false;
      calls.back().end = rig_.k->now();
      calls.back().result = call_.result();
      ++pc_;
      continue;
    }
    if (pc_ >= steps_.size()) return Action::exit();
    const Step& s = steps_[pc_];
    switch (s.kind) {
      case Step::Kind::kRun:
        ++pc_;
        return Action::run(s.t.count());
      case Step::Kind::kUntil:
        ++pc_;
        if (s.t <= rig_.k->now()) continue;
        timer_.arm(s.t);
        return Action::block(TaskState::kInterruptible);
      case Step::Kind::kCall:
        calls.push_back({s.api, s.dev, rig_.k->now(), Time::zero(), 0});
        call_.begin(rig_.dev(s.dev), s.api);
        in_call_ = true;
        continue;
      case Step::Kind::kNosleep: {
        int r = rig_.pm->call_nosleep(rig_.dev(s.dev), s.api, QueueContext{&self, self.cpu});
        calls.push_back({s.api, s.dev, rig_.k->now(), rig_.k->now(), r});
        ++pc_;
        continue;
      }
    }
  }
}

void Script::on_event(uint64_t) { rig_.k->try_to_wake_up(*task, nullptr, task->cpu); }

Irq::Irq(Rig& rig, Time at, std::string dev, RpmApi api) : rig_(rig), dev_(std::move(dev)), api_(api) {
  rig.k->sim().post(at, kTierTimer, this, 0);
}

void Irq::on_event(uint64_t) { result = rig_.pm->call_nosleep(rig_.dev(dev_), api_, QueueContext{nullptr, 0}); }

RpmDeviceParams device(const std::string& name, const std::string& parent = "") {
  RpmDeviceParams d;
  d.name = name;
  d.parent = parent;
  return d;
}

// An active gpu without autosuspend whose ->runtime_suspend() takes 100 us
// of CPU then 1 ms of hardware wait in D; ->runtime_resume() 200 us of CPU.
RpmDeviceParams slow_suspend_gpu() {
  RpmDeviceParams gpu = device("gpu");
  gpu.start_active = true;
  gpu.use_autosuspend = false;
  gpu.suspend_cost = Time::us(100);
  gpu.suspend_wait = Time::ms(1);
  gpu.resume_cost = Time::us(200);
  return gpu;
}

// The task named at the end of a status line ("t_us device status task").
std::string status_task(const std::string& status) { return status.substr(status.rfind(' ') + 1); }

using V = std::vector<std::string>;

}  // namespace

TEST_CASE("get_sync on a suspended device runs the resume callback in the caller's context", "[pm_runtime]") {
  RpmDeviceParams gpu = device("gpu");
  gpu.resume_cost = Time::us(200);
  bool hw_wait = GENERATE(false, true);
  if (hw_wait) gpu.resume_wait = Time::ms(1);
  Rig rig({gpu});
  Script& app = rig.add("app", {call("gpu", RpmApi::kGetSync)});
  rig.run_until(Time::ms(10));

  RpmDevice& d = rig.dev("gpu");
  // rpm_resume(): RESUMING, ->runtime_resume() (200 us of the caller's CPU
  // time, then the hardware wait if any), ACTIVE; usage 1 stops the
  // rpm_idle(RPM_ASYNC) at its end, so nothing is queued on pm_wq.
  Time done = hw_wait ? Time::us(1200) : Time::us(200);
  CHECK(rig.log.statuses == V{"0 gpu resuming app", std::to_string(done.count() / 1000) + " gpu active app"});
  REQUIRE(app.calls.size() == 1);
  CHECK(app.calls[0].result == 0);
  CHECK(app.calls[0].end == done);
  CHECK(app.task->se.sum_exec_runtime == Time::us(200).count());
  CHECK(d.status() == RpmStatus::kActive);
  CHECK(d.usage_count() == 1);
  CHECK(d.resumes() == 1);
  CHECK(d.works_queued() == 0);
  CHECK(rig.log.queued.empty());
  CHECK(d.last_busy() == done);  // rpm_resume() marks the device busy when it becomes active
  if (hw_wait) {
    // The wait for the hardware is a D sleep woken by a timer.
    REQUIRE(rig.log.sleeps.size() == 1);
    const DSleep& s = rig.log.sleeps[0];
    CHECK(s.task == "app");
    CHECK(s.device == "gpu");
    CHECK(s.in_resume);
    CHECK(s.start == Time::us(200));
    CHECK(s.d_state == Time::ms(1));
    CHECK(s.waker == nullptr);
    CHECK(s.waker_wait == Time::zero());
  } else {
    CHECK(rig.log.sleeps.empty());
  }
}

TEST_CASE("put_autosuspend arms the suspend timer at last_busy + delay and pm_wq suspends when it fires",
          "[pm_runtime]") {
  RpmDeviceParams gpu = device("gpu");
  gpu.start_active = true;
  gpu.autosuspend_delay = Time::ms(10);
  gpu.suspend_cost = Time::us(300);
  Rig rig({gpu});
  Script& app = rig.add("app", {nosleep("gpu", RpmApi::kGet), run(Time::ms(1)), nosleep("gpu", RpmApi::kPutAutosuspend)});
  RpmDevice& d = rig.dev("gpu");

  rig.run_until(Time::ms(5));
  REQUIRE(app.calls.size() == 2);
  CHECK(app.calls[0].result == 1);  // already active
  CHECK(app.calls[1].result == 0);
  CHECK(d.usage_count() == 0);
  CHECK(d.last_busy() == Time::ms(1));       // marked by put_autosuspend
  CHECK(d.timer_expires() == Time::ms(11));  // last_busy + autosuspend_delay
  CHECK(d.status() == RpmStatus::kActive);
  CHECK(d.works_queued() == 0);

  rig.run_until(Time::ms(20));
  // The timer's window is [11, 13.5] ms (a quarter of the delay as slack);
  // the CPU idles with its tick stopped, so pm_suspend_timer_fn() runs at
  // its end, 13.5 ms: rpm_suspend(RPM_ASYNC | RPM_AUTO) queues
  // pm_runtime_work; the idle worker runs it at once:
  // rpm_suspend(RPM_NOWAIT | RPM_AUTO), 300 us of ->runtime_suspend().
  CHECK(rig.log.queued == V{"13500 pm_runtime_work pm"});
  REQUIRE(rig.log.statuses.size() == 2);
  CHECK(rig.log.statuses[0].rfind("13500 gpu suspending kworker/0:", 0) == 0);
  CHECK(rig.log.statuses[1].rfind("13800 gpu suspended kworker/0:", 0) == 0);
  CHECK(d.status() == RpmStatus::kSuspended);
  CHECK(d.works_queued() == 1);
  CHECK(d.suspends() == 1);
  CHECK(d.timer_expires() == Time::zero());
  CHECK_FALSE(d.request_pending());
  CHECK(d.request() == RpmRequest::kNone);
}

// rpm_suspend() arms the suspend timer with hrtimer_start_range_ns() and a
// slack of a quarter of the delay: window [101.5, 126.5] ms from last_busy
// + delay. On a busy CPU (HZ=1000) each tick re-queues itself a jiffy on,
// ahead of the timer's hard expiry, and __hrtimer_run_queues() stops its
// walk there: the timer runs at the last tick before its hard expiry, 126
// ms (the next, 127 ms, is past 126.5). On a CPU that idles with its tick
// stopped it runs at the window's end, 126.5 ms. (The model used to fire
// it at 101.5 ms in both, then at the first tick, 102 ms, when busy.)
TEST_CASE("the autosuspend timer has a quarter of the delay as slack", "[pm_runtime][hrtimer]") {
  for (const bool busy : {true, false}) {
    CAPTURE(busy);
    RpmDeviceParams gpu = device("gpu");
    gpu.start_active = true;
    gpu.autosuspend_delay = Time::ms(100);
    Rig rig({gpu}, 2);
    rig.add("app", {nosleep("gpu", RpmApi::kGet), run(Time::us(1500)), nosleep("gpu", RpmApi::kPutAutosuspend)},
            Policy::kFifo, 50, {0});
    if (busy) rig.add("hog", {run(Time::s(1))}, Policy::kNormal, 0, {0});
    rig.run_until(Time::ms(200));
    RpmDevice& d = rig.dev("gpu");
    CHECK(d.last_busy() == Time::us(1500));
    REQUIRE(rig.log.queued.size() == 1);
    CHECK(rig.log.queued[0] == (busy ? "126000 pm_runtime_work pm" : "126500 pm_runtime_work pm"));
    CHECK(d.status() == RpmStatus::kSuspended);
  }
}

// hrtimer_start() of the suspend timer is not pinned: with timer
// migration (NO_HZ), get_nohz_timer_target() sends a timer armed on an
// idle CPU -- here by an interrupt on CPU 0 -- to the first busy CPU of its
// domains, CPU 1 (a hog), whose next event (its tick) comes before the
// expiry. pm_suspend_timer_fn() then runs there and queues the suspend on
// CPU 1's pm_wq pool (pm_wq is per-CPU here): kworker/1. The model used to
// keep the timer on the interrupt's CPU 0.
TEST_CASE("the suspend timer armed by an interrupt on an idle CPU goes to a busy CPU", "[pm_runtime]") {
  RpmDeviceParams gpu = device("gpu");
  gpu.start_active = true;
  gpu.autosuspend_delay = Time::ms(10);
  gpu.suspend_cost = Time::us(300);
  Rig rig({gpu}, 2);
  rig.add("hog", {run(Time::ms(100))}, Policy::kNormal, 0, {1});
  rig.add("app", {nosleep("gpu", RpmApi::kGet)}, Policy::kNormal, 0, {1});
  Irq& irq = rig.irq(Time::ms(2), "gpu", RpmApi::kPutAutosuspend);
  RpmDevice& d = rig.dev("gpu");
  rig.run_until(Time::ms(3));
  REQUIRE(irq.result == 0);
  REQUIRE(rig.k->cpu_idle(0));
  CHECK(d.timer_expires() == Time::ms(12));
  // Armed by CPU 1 itself (busy), or for a CPU whose tick comes later, it
  // stays.
  CHECK(rig.k->hrtimer_target_cpu(1, Time::ms(12)) == 1);
  CHECK(rig.k->hrtimer_target_cpu(0, Time::ms(12)) == 1);
  CHECK(rig.k->hrtimer_target_cpu(0, Time::us(3500)) == 0);  // before CPU 1's tick at 4 ms
  rig.run_until(Time::ms(20));
  // Its window is [12, 14.5] ms (a quarter of the delay as slack): CPU 1's
  // running tick stops the hrtimer walk ahead of it until the tick at 14
  // ms, whose next jiffy is past 14.5.
  CHECK(rig.log.queued == V{"14000 pm_runtime_work pm"});
  REQUIRE(rig.log.statuses.size() == 2);
  // kworker/1:0 shares CPU 1 with the hog: it suspends the device at the
  // hog's next slice end, 15 ms, not at once as it would on idle CPU 0.
  CHECK(rig.log.statuses[0] == "15000 gpu suspending kworker/1:0");
  CHECK(d.status() == RpmStatus::kSuspended);
}

// put_sync_autosuspend marks last_busy as put_autosuspend does (6.12
// drivers call pm_runtime_mark_last_busy() before either): its
// rpm_suspend(RPM_AUTO) finds the expiry 10 ms ahead and arms the timer
// instead of suspending at once.
TEST_CASE("put_sync_autosuspend marks last_busy and arms the timer", "[pm_runtime]") {
  RpmDeviceParams gpu = device("gpu");
  gpu.start_active = true;
  gpu.autosuspend_delay = Time::ms(10);
  Rig rig({gpu});
  Script& app =
      rig.add("app", {nosleep("gpu", RpmApi::kGet), run(Time::ms(1)), call("gpu", RpmApi::kPutSyncAutosuspend)});
  RpmDevice& d = rig.dev("gpu");
  rig.run_until(Time::ms(5));
  REQUIRE(app.calls.size() == 2);
  CHECK(d.last_busy() == Time::ms(1));
  CHECK(d.timer_expires() == Time::ms(11));
  CHECK(d.status() == RpmStatus::kActive);
  rig.run_until(Time::ms(20));
  CHECK(d.status() == RpmStatus::kSuspended);
}

TEST_CASE("a get before the autosuspend expiry keeps the device active and the timer queues nothing",
          "[pm_runtime]") {
  RpmDeviceParams gpu = device("gpu");
  gpu.start_active = true;
  gpu.autosuspend_delay = Time::ms(10);
  Rig rig({gpu});
  Script& app = rig.add("app", {nosleep("gpu", RpmApi::kGet), run(Time::ms(1)), nosleep("gpu", RpmApi::kPutAutosuspend),
                                until(Time::ms(5)), nosleep("gpu", RpmApi::kGet)});
  RpmDevice& d = rig.dev("gpu");
  rig.run_until(Time::ms(6));
  REQUIRE(app.calls.size() == 3);
  CHECK(app.calls[2].result == 1);
  CHECK(d.usage_count() == 1);
  // rpm_resume() leaves an autosuspend timer running (timer_autosuspends).
  CHECK(d.timer_expires() == Time::ms(11));

  rig.run_until(Time::ms(30));
  // At 11 ms pm_suspend_timer_fn() -> rpm_suspend() -> usage 1: -EAGAIN.
  CHECK(d.timer_expires() == Time::zero());
  CHECK(d.status() == RpmStatus::kActive);
  CHECK(d.works_queued() == 0);
  CHECK(rig.log.queued.empty());
  CHECK(rig.log.statuses.empty());
}

TEST_CASE("a last_busy moved forward makes the expired timer re-arm at the new expiry", "[pm_runtime]") {
  RpmDeviceParams gpu = device("gpu");
  gpu.start_active = true;
  gpu.autosuspend_delay = Time::ms(10);
  gpu.suspend_cost = Time::us(300);
  Rig rig({gpu});
  std::vector<Step> steps = {nosleep("gpu", RpmApi::kGet), run(Time::ms(1)), nosleep("gpu", RpmApi::kPutAutosuspend),
                             until(Time::ms(6))};
  bool second_put = GENERATE(false, true);
  if (second_put) {
    // get + put_autosuspend at 6 ms: rpm_suspend(RPM_AUTO) finds the timer
    // due at 11 ms <= 16 ms and leaves it alone.
    steps.push_back(nosleep("gpu", RpmApi::kGet));
    steps.push_back(nosleep("gpu", RpmApi::kPutAutosuspend));
  } else {
    steps.push_back(nosleep("gpu", RpmApi::kMarkLastBusy));
  }
  rig.add("app", steps);
  RpmDevice& d = rig.dev("gpu");

  rig.run_until(Time::ms(7));
  CHECK(d.last_busy() == Time::ms(6));
  CHECK(d.timer_expires() == Time::ms(11));
  rig.run_until(Time::ms(14));
  // pm_suspend_timer_fn() at 13.5 ms (the end of its [11, 13.5] ms window:
  // the CPU idles, tick stopped): rpm_suspend(RPM_ASYNC | RPM_AUTO) sees
  // the expiry moved to 16 ms and re-arms, for [16, 18.5] ms.
  CHECK(d.timer_expires() == Time::ms(16));
  CHECK(d.works_queued() == 0);
  CHECK(d.status() == RpmStatus::kActive);
  rig.run_until(Time::ms(30));
  CHECK(rig.log.queued == V{"18500 pm_runtime_work pm"});
  REQUIRE(rig.log.statuses.size() == 2);
  CHECK(rig.log.statuses[1].rfind("18800 gpu suspended kworker/0:", 0) == 0);
  CHECK(d.status() == RpmStatus::kSuspended);
}

TEST_CASE("a task resuming a device pm_wq is suspending sleeps in D until the worker wakes it, then resumes it",
          "[pm_runtime]") {
  // One CPU. At 0 the app's put queues an autosuspend request (no
  // autosuspend delay in use): the worker runs ->runtime_suspend() (100 us
  // of CPU, then 1 ms of hardware wait in D). At 500 us the app calls
  // get_sync, finds SUSPENDING and sleeps on power.wait_queue. A FIFO hog
  // holds the CPU over [1000, 3000] us, so the worker, woken by its timer
  // at 1100 us, waits 1900 us for the CPU before it can finish the suspend
  // and wake the app. The app then runs ->runtime_resume() itself.
  Rig rig({slow_suspend_gpu()});
  Script& app = rig.add("app", {nosleep("gpu", RpmApi::kGet), nosleep("gpu", RpmApi::kPut), until(Time::us(500)),
                                call("gpu", RpmApi::kGetSync)});
  rig.add("hog", {until(Time::ms(1)), run(Time::ms(2))}, Policy::kFifo, 50);
  rig.run_until(Time::ms(10));

  RpmDevice& d = rig.dev("gpu");
  REQUIRE(rig.log.statuses.size() == 4);
  std::string worker = status_task(rig.log.statuses[0]);
  CHECK(worker.rfind("kworker/0:", 0) == 0);
  CHECK(rig.log.statuses == V{"0 gpu suspending " + worker, "3000 gpu suspended " + worker, "3000 gpu resuming app",
                              "3200 gpu active app"});
  REQUIRE(app.calls.size() == 3);
  CHECK(app.calls[2].result == 0);
  CHECK(app.calls[2].end == Time::us(3200));
  CHECK(d.usage_count() == 1);
  CHECK(d.suspends() == 1);
  CHECK(d.resumes() == 1);
  CHECK_FALSE(d.deferred_resume());

  REQUIRE(rig.log.sleeps.size() == 2);
  // The worker's hardware wait inside ->runtime_suspend(): woken by a timer.
  const DSleep& ws = rig.log.sleeps[0];
  CHECK(ws.task == worker);
  CHECK_FALSE(ws.in_resume);
  CHECK(ws.start == Time::us(100));
  CHECK(ws.d_state == Time::ms(1));
  CHECK(ws.waker == nullptr);
  // The app's wait on power.wait_queue inside rpm_resume().
  const DSleep& as = rig.log.sleeps[1];
  CHECK(as.task == "app");
  CHECK(as.device == "gpu");
  CHECK(as.in_resume);
  CHECK(as.start == Time::us(500));
  CHECK(as.d_state == Time::us(2500));
  REQUIRE(as.waker != nullptr);
  CHECK(as.waker == ws.task_ptr);
  CHECK(as.waker_wait == Time::us(1900));  // [1100, 3000]: runnable behind the FIFO hog
  CHECK(rig.log.woken("3000 app by " + worker));  // sched_waking names the worker too
}

TEST_CASE("an async get while pm_wq is suspending sets deferred_resume and the worker resumes right after",
          "[pm_runtime]") {
  Rig rig({slow_suspend_gpu()});
  rig.add("app", {nosleep("gpu", RpmApi::kGet), nosleep("gpu", RpmApi::kPut)});
  // pm_runtime_get() from an interrupt at 500 us, in the middle of the
  // worker's ->runtime_suspend(): rpm_resume(RPM_ASYNC) finds SUSPENDING.
  Irq& irq = rig.irq(Time::us(500), "gpu", RpmApi::kGet);
  RpmDevice& d = rig.dev("gpu");

  rig.run_until(Time::us(600));
  CHECK(irq.result == 0);
  CHECK(d.deferred_resume());
  CHECK(d.usage_count() == 1);
  CHECK_FALSE(d.request_pending());  // no resume request: the suspending context will resume
  CHECK(d.works_queued() == 1);

  rig.run_until(Time::ms(10));
  REQUIRE(rig.log.statuses.size() == 4);
  std::string worker = status_task(rig.log.statuses[0]);
  // rpm_suspend(): SUSPENDED, then the deferred rpm_resume(dev, 0) in the worker.
  CHECK(rig.log.statuses == V{"0 gpu suspending " + worker, "1100 gpu suspended " + worker,
                              "1100 gpu resuming " + worker, "1300 gpu active " + worker});
  CHECK_FALSE(d.deferred_resume());
  CHECK(d.status() == RpmStatus::kActive);
  CHECK(d.works_queued() == 1);
  CHECK(d.suspends() == 1);
  CHECK(d.resumes() == 1);
}

TEST_CASE("a child's resume resumes its parent first, and its suspend sends the parent an idle request on pm_wq",
          "[pm_runtime]") {
  RpmDeviceParams genpd = device("genpd");
  genpd.use_autosuspend = false;
  genpd.resume_cost = Time::us(100);
  genpd.suspend_cost = Time::us(50);
  RpmDeviceParams gpu = device("gpu", "genpd");
  gpu.autosuspend_delay = Time::ms(5);
  gpu.resume_cost = Time::us(200);
  gpu.suspend_cost = Time::us(300);
  Rig rig({genpd, gpu});
  Script& app = rig.add("app", {call("gpu", RpmApi::kGetSync), run(Time::ms(1)), nosleep("gpu", RpmApi::kPutAutosuspend)});
  RpmDevice& p = rig.dev("genpd");
  RpmDevice& c = rig.dev("gpu");
  CHECK(c.parent() == &p);

  rig.run_until(Time::us(300));
  // rpm_resume(gpu): pm_runtime_get_noresume(genpd), rpm_resume(genpd, 0)
  // [0, 100] us, then gpu's callback [100, 300] us, child_count++, and
  // pm_runtime_put(genpd): its rpm_idle() sees a child (-EBUSY).
  CHECK(rig.log.statuses == V{"0 genpd resuming app", "100 genpd active app", "100 gpu resuming app",
                              "300 gpu active app"});
  CHECK(app.calls[0].result == 0);
  CHECK(app.calls[0].end == Time::us(300));
  CHECK(p.usage_count() == 0);
  CHECK(p.child_count() == 1);
  CHECK(c.usage_count() == 1);

  rig.run_until(Time::ms(20));
  // put_autosuspend at 1300 us -> timer for [6300, 7550] us (a quarter of
  // the delay as slack; the idle CPU's tick is stopped, so it runs at the
  // end) -> pm_runtime_work(gpu): [7550, 7850] us; then rpm_idle(genpd,
  // RPM_ASYNC) -> rpm_suspend(genpd, RPM_ASYNC | RPM_AUTO) queues genpd's
  // request, which the same worker runs next: [7850, 7900] us.
  REQUIRE(rig.log.statuses.size() == 8);
  std::string worker = status_task(rig.log.statuses[4]);
  CHECK(V(rig.log.statuses.begin() + 4, rig.log.statuses.end()) ==
        V{"7550 gpu suspending " + worker, "7850 gpu suspended " + worker, "7850 genpd suspending " + worker,
          "7900 genpd suspended " + worker});
  CHECK(rig.log.queued == V{"7550 pm_runtime_work pm", "7850 pm_runtime_work pm"});
  CHECK(p.child_count() == 0);
  CHECK(p.status() == RpmStatus::kSuspended);
  CHECK(c.status() == RpmStatus::kSuspended);
  CHECK(p.works_queued() == 1);
  CHECK(c.works_queued() == 1);
}

TEST_CASE("a pm_wq worker resuming a child sleeps in D on its parent's resume done by a task", "[pm_runtime]") {
  // The app resumes genpd: 100 us of CPU, then 1 ms of hardware wait. At
  // 300 us an interrupt's pm_runtime_get(gpu) queues a resume request; the
  // worker's rpm_resume(gpu, RPM_NOWAIT) calls rpm_resume(genpd, 0), which
  // finds RESUMING and waits (the parent resume is synchronous). A FIFO hog
  // holds the CPU over [1000, 1500] us, so the app, woken at 1100 us, makes
  // genpd active (and wakes the worker) only at 1500 us.
  RpmDeviceParams genpd = device("genpd");
  genpd.resume_cost = Time::us(100);
  genpd.resume_wait = Time::ms(1);
  RpmDeviceParams gpu = device("gpu", "genpd");
  gpu.resume_cost = Time::us(200);
  Rig rig({genpd, gpu});
  Script& app = rig.add("app", {call("genpd", RpmApi::kGetSync)});
  rig.add("hog", {until(Time::ms(1)), run(Time::us(500))}, Policy::kFifo, 50);
  Irq& irq = rig.irq(Time::us(300), "gpu", RpmApi::kGet);
  rig.run_until(Time::ms(10));

  CHECK(irq.result == 0);
  REQUIRE(rig.log.statuses.size() == 4);
  std::string worker = status_task(rig.log.statuses[2]);
  CHECK(worker.rfind("kworker/0:", 0) == 0);
  CHECK(rig.log.statuses == V{"0 genpd resuming app", "1500 genpd active app", "1500 gpu resuming " + worker,
                              "1700 gpu active " + worker});
  CHECK(app.calls[0].result == 0);
  REQUIRE(rig.log.sleeps.size() == 2);
  const DSleep& hw = rig.log.sleeps[0];  // the app's wait in genpd's ->runtime_resume()
  CHECK(hw.task == "app");
  CHECK(hw.start == Time::us(100));
  CHECK(hw.d_state == Time::ms(1));
  CHECK(hw.waker == nullptr);
  const DSleep& wq = rig.log.sleeps[1];  // the worker on genpd's wait queue
  CHECK(wq.task == worker);
  CHECK(wq.device == "genpd");
  CHECK(wq.in_resume);
  CHECK(wq.start == Time::us(300));
  CHECK(wq.d_state == Time::us(1200));
  CHECK(wq.waker == app.task);
  CHECK(wq.waker_wait == Time::us(400));  // the app was runnable over [1100, 1500]
  CHECK(rig.log.woken("1500 " + worker + " by app"));
  RpmDevice& p = rig.dev("genpd");
  CHECK(p.usage_count() == 1);  // the app's get_sync; the worker's reference was put
  CHECK(p.child_count() == 1);
  CHECK(rig.dev("gpu").usage_count() == 1);
}

TEST_CASE("a get_sync finding the device resuming waits for the task resuming it, whose CPU wait is counted",
          "[pm_runtime]") {
  // One CPU. A (fair) resumes the gpu: 1 ms of callback CPU work. B (FIFO
  // 20) calls get_sync at 200 us, finds RESUMING and sleeps. C (FIFO 10)
  // preempts A over [400, 700] us. A ends the callback at 1300 us and wakes B.
  RpmDeviceParams gpu = device("gpu");
  gpu.resume_cost = Time::ms(1);
  Rig rig({gpu});
  Script& a = rig.add("A", {call("gpu", RpmApi::kGetSync)});
  Script& b = rig.add("B", {until(Time::us(200)), call("gpu", RpmApi::kGetSync)}, Policy::kFifo, 20);
  rig.add("C", {until(Time::us(400)), run(Time::us(300))}, Policy::kFifo, 10);
  rig.run_until(Time::ms(10));

  CHECK(rig.log.statuses == V{"0 gpu resuming A", "1300 gpu active A"});
  CHECK(a.calls[0].result == 0);
  CHECK(a.calls[0].end == Time::us(1300));
  CHECK(b.calls[0].result == 1);  // already active when it looked again
  CHECK(b.calls[0].end == Time::us(1300));
  REQUIRE(rig.log.sleeps.size() == 1);
  const DSleep& s = rig.log.sleeps[0];
  CHECK(s.task == "B");
  CHECK(s.in_resume);
  CHECK(s.start == Time::us(200));
  CHECK(s.d_state == Time::us(1100));
  CHECK(s.waker == a.task);
  CHECK(s.waker_wait == Time::us(300));
  CHECK(rig.dev("gpu").usage_count() == 2);
}

TEST_CASE("the resume's wake_up_all() wakes the newest waiter first, as the kernel's wait queue does",
          "[pm_runtime]") {
  // Two CPUs. A resumes the gpu on CPU 0 (1 ms of callback CPU work); B
  // (CPU 1) calls get_sync at 200 us and C (CPU 1, FIFO, after B sleeps)
  // at 300 us: both find RESUMING and sleep. A ends the callback at
  // 1000 us: prepare_to_wait() put C at the head, so C is woken before B.
  RpmDeviceParams gpu = device("gpu");
  gpu.resume_cost = Time::ms(1);
  Rig rig({gpu}, 2);
  rig.add("A", {call("gpu", RpmApi::kGetSync)}, Policy::kNormal, 0, {0});
  rig.add("B", {until(Time::us(200)), call("gpu", RpmApi::kGetSync)}, Policy::kNormal, 0, {1});
  rig.add("C", {until(Time::us(300)), call("gpu", RpmApi::kGetSync)}, Policy::kFifo, 10, {1});
  rig.run_until(Time::ms(10));
  std::vector<std::string> by_a;
  for (const auto& w : rig.log.wakings)
    if (w.find(" by A") != std::string::npos) by_a.push_back(w);
  CHECK(by_a == V{"1000 C by A", "1000 B by A"});
  CHECK(rig.log.sleeps.size() == 2);
}

TEST_CASE("usage counts never go negative: a put on a zero count returns -EINVAL and does nothing", "[pm_runtime]") {
  RpmDeviceParams gpu = device("gpu");
  gpu.autosuspend_delay = Time::ms(10);
  Rig rig({gpu});
  Script& app = rig.add("app", {nosleep("gpu", RpmApi::kPut), nosleep("gpu", RpmApi::kPutAutosuspend),
                                call("gpu", RpmApi::kPutSync), call("gpu", RpmApi::kPutSyncAutosuspend),
                                call("gpu", RpmApi::kGetSync), call("gpu", RpmApi::kPutSync),
                                call("gpu", RpmApi::kPutSync)});
  Irq& irq = rig.irq(Time::ms(5), "gpu", RpmApi::kPut);
  RpmDevice& d = rig.dev("gpu");
  rig.run_until(Time::ms(1));
  REQUIRE(app.calls.size() == 7);
  CHECK(app.calls[0].result == -EINVAL);
  CHECK(app.calls[1].result == -EINVAL);
  CHECK(app.calls[2].result == -EINVAL);
  CHECK(app.calls[3].result == -EINVAL);
  CHECK(app.calls[4].result == 0);        // resumed: usage 1
  CHECK(app.calls[5].result == 0);        // usage 0: rpm_idle() -> autosuspend timer armed
  CHECK(app.calls[6].result == -EINVAL);  // underflow again
  CHECK(d.usage_count() == 0);
  CHECK(d.status() == RpmStatus::kActive);
  CHECK(d.timer_expires() == Time::us(50) + Time::ms(10));  // last_busy (resume end) + delay
  rig.run_until(Time::ms(6));
  CHECK(irq.result == -EINVAL);
  CHECK(d.usage_count() == 0);
  CHECK(d.works_queued() == 0);
}

TEST_CASE("call_nosleep refuses the calls that may sleep", "[pm_runtime]") {
  Rig rig({device("gpu")});
  RpmDevice& d = rig.dev("gpu");
  for (RpmApi api : {RpmApi::kGetSync, RpmApi::kResumeAndGet, RpmApi::kPutSync, RpmApi::kPutSyncAutosuspend})
    CHECK_THROWS_AS(rig.pm->call_nosleep(d, api, QueueContext{}), ModelError);
  CHECK(d.usage_count() == 0);
  CHECK(rig.pm->call_nosleep(d, RpmApi::kMarkLastBusy, QueueContext{}) == 0);
}

TEST_CASE("resume_and_get returns 0 for an active device where get_sync returns 1", "[pm_runtime]") {
  RpmDeviceParams gpu = device("gpu");
  gpu.start_active = true;
  Rig rig({gpu});
  Script& app = rig.add("app", {call("gpu", RpmApi::kGetSync), call("gpu", RpmApi::kResumeAndGet)});
  rig.run_until(Time::ms(1));
  REQUIRE(app.calls.size() == 2);
  CHECK(app.calls[0].result == 1);
  CHECK(app.calls[1].result == 0);
  CHECK(rig.dev("gpu").usage_count() == 2);
  CHECK(rig.log.statuses.empty());
}

TEST_CASE("a device that starts active does nothing until its first put", "[pm_runtime]") {
  RpmDeviceParams gpu = device("gpu");
  gpu.start_active = true;
  gpu.autosuspend_delay = Time::ms(10);
  RpmDeviceParams child = device("child", "gpu");
  child.start_active = true;
  Rig rig({gpu, child});
  rig.run_until(Time::ms(100));
  RpmDevice& d = rig.dev("gpu");
  CHECK(d.status() == RpmStatus::kActive);
  CHECK(d.child_count() == 1);  // pm_runtime_set_active() of the child
  CHECK(d.timer_expires() == Time::zero());
  CHECK(d.works_queued() == 0);
  CHECK(rig.log.statuses.empty());
  CHECK(rig.pm->device_names() == V{"gpu", "child"});
  CHECK(rig.pm->device("nope") == nullptr);
}

// update_autosuspend(): a negative autosuspend delay takes a usage
// reference and resumes the device, so put_autosuspend drops the count to
// 1, not 0: nothing is armed or queued and the device stays active. (The
// model used to read the negative delay as an expired one and suspend at
// once.)
TEST_CASE("a negative autosuspend_delay holds the device active", "[pm_runtime]") {
  RpmDeviceParams gpu = device("gpu");
  gpu.autosuspend_delay = -Time::ms(1);
  Rig rig({gpu});
  RpmDevice& d = rig.dev("gpu");
  CHECK(d.status() == RpmStatus::kActive);  // resumed by update_autosuspend(), though not start_active
  CHECK(d.usage_count() == 1);
  Script& app = rig.add("app", {call("gpu", RpmApi::kGetSync), run(Time::ms(1)), call("gpu", RpmApi::kPutAutosuspend)});
  rig.run_until(Time::ms(50));
  REQUIRE(app.calls.size() == 2);
  CHECK(app.calls[0].result == 1);  // already active
  CHECK(d.usage_count() == 1);
  CHECK(d.status() == RpmStatus::kActive);
  CHECK(d.timer_expires() == Time::zero());
  CHECK(d.works_queued() == 0);
  CHECK(rig.log.queued.empty());
  CHECK(rig.log.statuses.empty());
  // Its parent must then be active too, as for start_active.
  RpmDeviceParams child = device("child", "pd");
  child.autosuspend_delay = -Time::ms(1);
  CHECK_THROWS_AS(Rig({device("pd"), child}), ModelError);
}

TEST_CASE("an unknown parent, a parent cycle or an active child of a suspended parent is a model error",
          "[pm_runtime]") {
  SECTION("unknown parent") {
    try {
      Rig rig({device("genpd"), device("gpu", "gdsc")});
      FAIL("no error");
    } catch (const ModelError& e) {
      std::string m = e.what();
      CHECK(m.find("'gpu'") != std::string::npos);
      CHECK(m.find("'gdsc'") != std::string::npos);
      CHECK(m.find("genpd, gpu") != std::string::npos);
    }
  }
  SECTION("cycle") {
    try {
      Rig rig({device("a", "b"), device("b", "c"), device("c", "b")});
      FAIL("no error");
    } catch (const ModelError& e) {
      std::string m = e.what();
      CHECK(m.find("b -> c -> b") != std::string::npos);
    }
  }
  SECTION("self parent") {
    CHECK_THROWS_AS(Rig({device("a", "a")}), ModelError);
  }
  SECTION("active child, suspended parent") {
    RpmDeviceParams gpu = device("gpu", "genpd");
    gpu.start_active = true;
    CHECK_THROWS_AS(Rig({device("genpd"), gpu}), ModelError);
  }
}
