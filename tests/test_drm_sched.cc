// The DRM GPU scheduler and GPU (models/devices/): push_job -> run_job
// latency through each submit path, computed by hand (no overheads,
// create_worker free, fixed costs: select 2 us, run_job 10 us).
#include <catch2/catch.hpp>

#include <functional>
#include <map>

#include "models/devices/drm_sched.h"
#include "sched_test_util.h"

using namespace schedlab;
using namespace schedlab::testing;

namespace {

EventSpec ev_submit(const std::string& entity, Time gpu_time) {
  EventSpec e = ev_call(CallSpec::Op::kSubmitJob, entity);
  e.call.gpu_time = gpu_time;
  return e;
}

struct Job {
  Time pushed, run, hw, done, freed;
};

class DrmLog : public SchedObserver {
 public:
  void on_drm_job(Time t, const DrmJobEvent& e) override {
    Job& j = jobs[e.job];
    switch (e.phase) {
      case DrmJobEvent::Phase::kPush: j.pushed = t; break;
      case DrmJobEvent::Phase::kRun: j.run = t; break;
      case DrmJobEvent::Phase::kHw: j.hw = t; break;
      case DrmJobEvent::Phase::kDone: j.done = t; break;
      case DrmJobEvent::Phase::kFree: j.freed = t; break;
    }
  }
  Time latency(uint64_t id) const { return jobs.at(id).run - jobs.at(id).pushed; }
  std::map<uint64_t, Job> jobs;
};

// One CPU (or two); a GPU with fixed 1 ms jobs; a scheduler "rt-queue"
// with one entity "vk" whose submit path `configure` sets.
ScenarioParams drm_scenario(int cpus) {
  ScenarioParams p = exact_scenario("6.12", 1000, cpus);
  p.duration = Time::ms(20);
  p.workqueue.create_worker_delay = Time::zero();
  DeviceParams gpu;
  gpu.name = "gpu";
  gpu.model = "gpu";
  GpuParams g;
  g.service_time.kind = Distribution::Kind::kFixed;
  g.service_time.mean = Time::ms(1);
  gpu.params = g;
  DeviceParams sched;
  sched.name = "rt-queue";
  sched.model = "drm_sched";
  DrmSchedParams d;
  d.gpu = "gpu";
  d.submit_wq = "submit";
  d.entities = {"vk"};
  sched.params = d;
  p.devices = {gpu, sched};
  WorkqueueParams wq;
  wq.name = "submit";
  wq.flags = kWqUnbound;
  p.workqueue.workqueues = {wq};
  return p;
}

DrmSchedParams& drm_params(ScenarioParams& p) { return std::get<DrmSchedParams>(p.devices[1].params); }

}  // namespace

TEST_CASE("push_job to run_job: three jobs pushed together are taken one run_job execution apart", "[drm]") {
  // Two CPUs, an idle system. The submitter (CPU 0) pushes three jobs at
  // t=0. Only the first push wakes the scheduler (the entity's queue was
  // empty); each run_job execution selects one job after select_cost
  // (2 us), hands it over after run_job_cost (10 us) and requeues itself,
  // so drm_run_job happens at 2, 14 and 26 us; the GPU gets the jobs at
  // 12, 24, 36 us and runs them back to back (1 ms each).
  ScenarioParams p = drm_scenario(2);
  TaskSpec sub = task("vk_submit", {ev_submit("vk", Time::zero()), ev_submit("vk", Time::zero()),
                                    ev_submit("vk", Time::zero()), ev_sleep(Time::s(10))},
                      Policy::kFifo, 1);
  sub.cpus = {0};
  p.tasks = {sub};
  DrmLog log = run_logged<DrmLog>(p);
  REQUIRE(log.jobs.size() == 3);
  CHECK(log.latency(1) == Time::us(2));
  CHECK(log.latency(2) == Time::us(14));
  CHECK(log.latency(3) == Time::us(26));
  CHECK(log.jobs[1].hw == Time::us(12));
  CHECK(log.jobs[3].hw == Time::us(36));
  // GPU: 12 us -> 1.012 ms, then 1.012 -> 2.012, 2.012 -> 3.012 (job 3
  // arrived at 36 us, queued behind); fences signal in the interrupt.
  CHECK(log.jobs[1].done == Time::us(1012));
  CHECK(log.jobs[2].done == Time::us(2012));
  CHECK(log.jobs[3].done == Time::us(3012));
  // free_job: 5 us of work after the signal.
  CHECK(log.jobs[1].freed == Time::us(1017));
}

TEST_CASE("push_job to run_job under a FIFO hog, by submit path", "[drm]") {
  // One CPU. A FIFO 10 hog runs 3 ms from t=0; the FIFO 50 submitter
  // pushes one job at t=0 and sleeps. A SCHED_OTHER worker (stock
  // workqueue, WQ_HIGHPRI nice -20, kthread_worker capped at MIN_NICE) or a
  // WQ_RTPRI worker below the hog's priority runs only when the hog
  // sleeps: 3 ms + select 2 us. A worker at or above the hog (WQ_RTPRI at
  // FIFO 20, the kthread_worker following the submitter to FIFO 50) runs at
  // once: 2 us.
  auto latency = [](const std::string& variant) {
    ScenarioParams p = drm_scenario(1);
    DrmSchedParams& d = drm_params(p);
    WorkqueueParams& wq = p.workqueue.workqueues[0];
    if (variant == "highpri") wq.flags |= kWqHighpri;
    if (variant == "rtpri1" || variant == "rtpri20") {
      wq.flags |= kWqRtpri;
      wq.rt_priority = variant == "rtpri1" ? 1 : 20;
      wq.max_workers = 2;
    }
    if (variant == "kw_min_nice" || variant == "kw_fifo") {
      KthreadWorkerParams kw;
      kw.name = "drm_kw";
      kw.follow = variant == "kw_fifo" ? KthreadFollow::kFifo : KthreadFollow::kMinNice;
      p.kthread_workers = {kw};
      d.path = DrmSubmitPath::kKthreadWorker;
      d.kthread_worker = "drm_kw";
    }
    p.tasks = {task("vk_submit", {ev_submit("vk", Time::ms(1)), ev_sleep(Time::s(10))}, Policy::kFifo, 50),
               task("hog", {ev_run(Time::ms(3)), ev_sleep(Time::s(10))}, Policy::kFifo, 10)};
    DrmLog log = run_logged<DrmLog>(p);
    REQUIRE(log.jobs.size() == 1);
    return log.latency(1);
  };
  CHECK(latency("stock") == Time::us(3002));
  CHECK(latency("highpri") == Time::us(3002));
  CHECK(latency("kw_min_nice") == Time::us(3002));
  CHECK(latency("rtpri1") == Time::us(3002));
  CHECK(latency("rtpri20") == Time::us(2));
  CHECK(latency("kw_fifo") == Time::us(2));
}

TEST_CASE("with a fence workqueue the free path runs in a worker after the interrupt", "[drm]") {
  // The job ends on the GPU at 1.012 ms; the interrupt queues the fence
  // work (10 us) on the submit workqueue; its fence signals at 1.022 ms.
  ScenarioParams p = drm_scenario(2);
  drm_params(p).fence_wq = "submit";
  TaskSpec sub = task("vk_submit", {ev_submit("vk", Time::zero()), ev_sleep(Time::s(10))}, Policy::kFifo, 1);
  p.tasks = {sub};
  DrmLog log = run_logged<DrmLog>(p);
  REQUIRE(log.jobs.size() == 1);
  CHECK(log.jobs[1].done == Time::us(1022));
  CHECK(log.jobs[1].freed == Time::us(1027));
}

namespace {
// panthor's chain (panthor_sched.c): fw events 10 us, group sync update 8 us,
// scheduler sync update 3 us, tick 20 us.
ScenarioParams panthor_chain_scenario() {
  ScenarioParams p = drm_scenario(2);
  DrmSchedParams& d = drm_params(p);
  d.fence_wq = "submit";
  d.signal_work_cost = Time::us(8);
  d.sync_update_work_cost = Time::us(3);
  d.idle_tick_cost = Time::us(20);
  return p;
}

// `jobs` jobs pushed together at t=0 by a SCHED_FIFO submitter on CPU 0.
struct ChainRun {
  DrmLog log;
  WorkLog works;
  SwitchLog switches;
};
// The submitter runs `events`; `gpu` adjusts the GPU's parameters.
ChainRun run_panthor_chain_events(const std::vector<EventSpec>& events, int gpu_slots = 1,
                                  const std::function<void(GpuParams&)>& gpu = {}) {
  ScenarioParams p = panthor_chain_scenario();
  GpuParams& g = std::get<GpuParams>(p.devices[0].params);
  g.slots = gpu_slots;
  if (gpu) gpu(g);
  p.tasks = {on_cpus(task("vk_submit", events, Policy::kFifo, 1), {0})};
  System sys(p, 1);
  ChainRun r;
  sys.add_observer(&r.log);
  sys.add_observer(&r.works);
  sys.add_observer(&r.switches);
  sys.run();
  return r;
}
// The submitter pushes a job per entry of `gpu_times` (0: the GPU's 1 ms).
ChainRun run_panthor_chain(const std::vector<Time>& gpu_times, int gpu_slots = 1) {
  std::vector<EventSpec> events;
  for (Time t : gpu_times) events.push_back(ev_submit("vk", t));
  events.push_back(ev_sleep(Time::s(10)));
  return run_panthor_chain_events(events, gpu_slots);
}
}  // namespace

// One job: it ends at 1.012 ms; the fence work (process_fw_events_work,
// 10 us) queues, in sched_process_csg_irq_locked()'s order, the tick (the
// GPU has no job left: CSG_IDLE), the group's sync-update work and the
// scheduler's. The kworker that ran the fence work (CPU 1) takes the tick
// next from the unbound pool's worklist (1.022 -> 1.042 ms); the first
// queue_work() woke the pool's idle kworker, on CPU 0, which runs the
// group's work at once (1.022 -> 1.030 ms): the fence signals at 1.030 ms,
// 8 us after the single-item model's 1.022. That kworker then starts the
// scheduler's sync update at 1.030, which needs sched->lock, held by the
// running tick: it spins until the tick's unlock at 1.042 and ends at
// 1.045. The tick's kworker takes the free_job work the signal queued
// (1.042 -> 1.047).
TEST_CASE("panthor's post-interrupt chain: fw events, then tick, group and scheduler sync updates", "[drm]") {
  const ChainRun r = run_panthor_chain({Time::zero()});
  const DrmLog& log = r.log;
  const WorkLog& works = r.works;
  REQUIRE(log.jobs.size() == 1);
  const auto fence = works.ending_with(":fence_work"), tick = works.ending_with(":tick_work"),
             group = works.ending_with(":group_sync_upd_work"), sched_upd = works.ending_with(":sync_upd_work");
  REQUIRE(fence.size() == 1);
  REQUIRE(tick.size() == 1);
  REQUIRE(group.size() == 1);
  REQUIRE(sched_upd.size() == 1);
  CHECK(fence[0].started == Time::us(1012));
  CHECK(fence[0].ended == Time::us(1022));
  for (const auto* w : {&tick[0], &group[0], &sched_upd[0]}) CHECK(w->queued == Time::us(1022));
  CHECK(tick[0].ended - tick[0].started == Time::us(20));
  CHECK(group[0].ended - group[0].started == Time::us(8));
  CHECK(log.jobs.at(1).done == group[0].ended);
  CHECK(log.jobs.at(1).done == Time::us(1030));
  CHECK(tick[0].worker == fence[0].worker);
  CHECK(group[0].cpu == 0);
  CHECK(tick[0].cpu == 1);
  CHECK(sched_upd[0].worker == group[0].worker);
  CHECK(sched_upd[0].started == Time::us(1030));
  CHECK(tick[0].ended == Time::us(1042));
  CHECK(sched_upd[0].ended == Time::us(1045));  // spun 1.030 -> 1.042, then 3 us
  for (const auto& sw : r.switches.log)  // CPU 0 stays busy while it spins
    CHECK_FALSE((sw.cpu == 0 && sw.t > Time::us(1030) && sw.t < Time::us(1045)));
  const auto free = works.ending_with(":drm_sched_free_job_work");
  REQUIRE(free.size() == 1);
  CHECK(free[0].worker == tick[0].worker);
  CHECK(log.jobs.at(1).freed == Time::us(1047));
}

// Two jobs pushed together run back to back on the GPU (1 ms each): the
// first one's interrupt finds the second still on the GPU, so only the
// second raises the idle event; both interrupts run the fw-events work
// and both sync updates, and the first fence signals from the group's
// work, not from the fence work.
TEST_CASE("panthor's tick is queued only when the GPU has no job left", "[drm]") {
  const ChainRun r = run_panthor_chain({Time::zero(), Time::zero()});
  const DrmLog& log = r.log;
  const WorkLog& works = r.works;
  REQUIRE(log.jobs.size() == 2);
  CHECK(works.ending_with(":fence_work").size() == 2);
  CHECK(works.ending_with(":group_sync_upd_work").size() == 2);
  CHECK(works.ending_with(":sync_upd_work").size() == 2);
  const auto tick = works.ending_with(":tick_work");
  REQUIRE(tick.size() == 1);
  CHECK(tick[0].queued > log.jobs.at(2).hw + Time::ms(1));  // after the second job ended
  const auto group = works.ending_with(":group_sync_upd_work");
  CHECK(log.jobs.at(1).done == group[0].ended);
  CHECK(log.jobs.at(2).done == group[1].ended);
}

// A job handed to the GPU while the group is idle and its tick stopped
// resumes the tick (queue_run_job() -> sched_resume_tick(), 6.18.35):
// one job at 0 and one pushed 5 ms later. The first job's idle event and
// tick (queued at 1.022 ms) leave the group idle with its tick stopped, so
// handing the second job to the GPU queues tick_work at once, and its own
// idle event queues a third tick after it ends. (The first job finds the
// group not yet idle: the model starts it resident and busy.)
TEST_CASE("panthor's submit resumes the tick of an idle group", "[drm]") {
  const ChainRun r = run_panthor_chain_events({ev_submit("vk", Time::zero()), ev_sleep(Time::ms(5)),
                                               ev_submit("vk", Time::zero()), ev_sleep(Time::s(10))});
  const DrmLog& log = r.log;
  REQUIRE(log.jobs.size() == 2);
  const auto tick = r.works.ending_with(":tick_work");
  REQUIRE(tick.size() == 3);
  CHECK(tick[0].queued == Time::us(1022));
  CHECK(tick[1].queued == log.jobs.at(2).hw);
  CHECK(tick[1].queued > Time::ms(5));
  CHECK(tick[2].queued > log.jobs.at(2).hw + Time::ms(1));  // the second job's idle event
}

// tick_work() asks the firmware for the group's status and waits for the
// acknowledgement (tick_ctx_init() -> csgs_upd_ctx_apply_locked() ->
// panthor_fw_wait_acks(), 6.18). One job, as in the chain test above: the
// tick starts at 1.022 ms on CPU 1's kworker. With the firmware answering
// in 5 us, within the poll, the worker spins until 1.027 and then
// does its 20 us of work: it ends at 1.047, 5 us later than without the
// request, and never sleeps. The acknowledgement raises the job interrupt
// (no latency here), whose handler queues the fw-events work a second
// time at 1.027 ms; that run finds no CSG event and costs
// fw_ack_events_cost (2 us) only. Both kworkers are busy then (the tick,
// and the scheduler's sync update spinning on sched->lock from 1.030), so
// it starts when the tick ends at 1.047, and spins in its turn while the
// sync update holds the lock (1.047 -> 1.050): it ends at 1.052.
TEST_CASE("panthor's tick polls for the firmware's acknowledgement of its status request", "[drm]") {
  const ChainRun r =
      run_panthor_chain_events({ev_submit("vk", Time::zero()), ev_sleep(Time::s(10))}, 1,
                               [](GpuParams& g) { g.fw_ack_latency = Time::us(5); });
  const auto fence = r.works.ending_with(":fence_work"), tick = r.works.ending_with(":tick_work");
  REQUIRE(tick.size() == 1);
  CHECK(tick[0].started == Time::us(1022));
  CHECK(tick[0].ended == Time::us(1047));
  REQUIRE(fence.size() == 2);
  CHECK(fence[1].queued == Time::us(1027));
  CHECK(fence[1].started == Time::us(1047));
  CHECK(fence[1].ended == Time::us(1052));
  for (const auto& s : r.switches.log) CHECK_FALSE((s.prev == tick[0].worker && s.prev_state == 'D'));
  CHECK(r.log.jobs.at(1).done == Time::us(1030));  // the fence path is unchanged
}

// A firmware slower than the poll (2 ms against the 1 ms default of
// fw_ack_poll, 6.18's 10,000 reads): the tick spins 1 ms, then sleeps in D
// until the acknowledgement's interrupt wakes it: the threaded handler
// (irq/gpu, SCHED_FIFO 50 on CPU 0, 3 us) wakes fw->req_waitqueue 3 us
// after the acknowledgement, and the tick's worker does its 20 us there.
// The handler also queues the fw-events work then. (The job's own
// interrupt goes through the thread too, so everything starts 3 us later
// than in the test above: the tick at 1.025 ms, its sleep at 2.025, the
// acknowledgement at 3.025, the wake-up at 3.028 and its end at 3.048.)
// sched->lock: the scheduler's sync update (CPU 0, from 1.033) spins while
// the tick polls, sleeps in D when the tick does (2.025), and is woken by
// the tick's unlock at 3.048; the acknowledgement's fw-events run (CPU 1,
// from 3.028) spins on the running tick meanwhile, so it takes the lock
// first (3.048 -> 3.050); the woken sync update finds it taken, sets
// HANDOFF, spins, and gets it at 3.050 (3.050 -> 3.053).
TEST_CASE("panthor's tick sleeps until the acknowledgement's interrupt when the firmware is slower than the poll",
          "[drm]") {
  const ChainRun r = run_panthor_chain_events({ev_submit("vk", Time::zero()), ev_sleep(Time::s(10))}, 1,
                                              [](GpuParams& g) {
                                                g.fw_ack_latency = Time::ms(2);
                                                g.irq_thread.enabled = true;
                                                g.irq_thread.cost = Time::us(3);
                                              });
  const auto fence = r.works.ending_with(":fence_work"), tick = r.works.ending_with(":tick_work");
  REQUIRE(tick.size() == 1);
  REQUIRE(fence.size() == 2);
  CHECK(fence[0].started == Time::us(1015));
  CHECK(tick[0].started == Time::us(1025));
  const Time ack = Time::us(3025), woken = Time::us(3028);
  bool slept = false;
  for (const auto& s : r.switches.log)
    if (s.prev == tick[0].worker && s.t == Time::us(2025)) slept = s.prev_state == 'D';
  CHECK(slept);
  CHECK(r.switches.first_run(tick[0].worker, ack) == woken);
  CHECK(tick[0].ended == Time::us(3048));
  CHECK(fence[1].queued == woken);
  CHECK(fence[1].started == woken);
  CHECK(fence[1].ended == Time::us(3050));
  const auto sched_upd = r.works.ending_with(":sync_upd_work");
  REQUIRE(sched_upd.size() == 1);
  CHECK(sched_upd[0].started == Time::us(1033));
  bool upd_slept = false;
  for (const auto& s : r.switches.log)
    if (s.prev == sched_upd[0].worker && s.t == Time::us(2025)) upd_slept = s.prev_state == 'D';
  CHECK(upd_slept);
  CHECK(sched_upd[0].ended == Time::us(3053));
}

// A fence-work run handles the events raised before it started
// (process_fw_events_work()'s atomic_xchg()): with two GPU slots, job 1
// ends at 1.012 ms with job 2 still running, job 2 at 1.017 ms, during the
// first run (1.012 -> 1.022). The first run handles job 1's sync update
// only; job 2's interrupt queued the fence work again, and that second
// run (1.022 -> 1.032) handles the idle event: the tick is queued at
// 1.032 ms, not at the first run's end.
TEST_CASE("panthor's fw-events run takes only the events raised before it started", "[drm]") {
  const ChainRun r = run_panthor_chain({Time::ms(1), Time::us(993)}, 2);
  const DrmLog& log = r.log;
  const WorkLog& works = r.works;
  REQUIRE(log.jobs.size() == 2);
  REQUIRE(log.jobs.at(1).hw == Time::us(12));
  REQUIRE(log.jobs.at(2).hw == Time::us(24));
  const auto fence = works.ending_with(":fence_work"), tick = works.ending_with(":tick_work");
  REQUIRE(fence.size() == 2);
  CHECK(fence[0].started == Time::us(1012));
  CHECK(fence[1].started == Time::us(1022));
  REQUIRE(tick.size() == 1);
  CHECK(tick[0].queued == Time::us(1032));
}

TEST_CASE("panthor's chain needs a fence workqueue", "[drm]") {
  ScenarioParams p = drm_scenario(2);
  drm_params(p).idle_tick_cost = Time::us(20);
  p.tasks = {task("vk_submit", {ev_submit("vk", Time::zero()), ev_sleep(Time::s(10))}, Policy::kFifo, 1)};
  CHECK_THROWS_WITH(System(p, 1), Catch::Contains("need a fence_wq"));
}

// request_threaded_irq(): the hard interrupt only wakes irq_thread()
// (SCHED_FIFO 50, on the interrupt's CPU), which runs the handler (3 us)
// and then queues the fence work: the fence signals 3 us later than from
// the hard interrupt (1.025 ms), and the thread preempts the fair hog on
// its CPU at once.
TEST_CASE("a threaded job interrupt runs its handler in an IRQ thread on the interrupt's CPU", "[drm]") {
  ScenarioParams p = drm_scenario(2);
  drm_params(p).fence_wq = "submit";
  GpuParams& g = std::get<GpuParams>(p.devices[0].params);
  g.irq_cpu = 1;
  g.irq_thread.enabled = true;
  g.irq_thread.cost = Time::us(3);
  TaskSpec sub = on_cpus(task("vk_submit", {ev_submit("vk", Time::zero()), ev_sleep(Time::s(10))}, Policy::kFifo, 1), {0});
  p.tasks = {sub, on_cpus(hog("hog"), {1})};
  System sys(p, 1);
  DrmLog log;
  SwitchLog switches;
  sys.add_observer(&log);
  sys.add_observer(&switches);
  sys.run();
  REQUIRE(log.jobs.size() == 1);
  CHECK(log.jobs[1].done == Time::us(1025));
  CHECK(log.jobs[1].freed == Time::us(1030));
  const Task& irq = find_task(sys.kernel(), "irq/gpu");
  CHECK(irq.policy == Policy::kFifo);
  CHECK(irq.prio == 49);
  CHECK(irq.nr_cpus_allowed == 1);
  CHECK(irq.cpus_allowed[1]);
  REQUIRE(switches.first_run("irq/gpu", Time::us(1)) == Time::us(1012));
  CHECK(metrics_of(sys.result(), "irq/gpu").cpu_time == Time::us(3));
}

// The job interrupt reaches a CPU asleep in an idle state like any device
// interrupt (cpuidle_enter_state() enables interrupts only after the
// exit): CPU 1, which ran the unbound kworker until 12 us, sleeps in the
// deep state (nothing due: menu 6.18 picks it), so the job ending at
// 1.012 ms wakes it and the handler signals the fence once it is out,
// 200 us later, at 1.212 ms. The fence's free_job work wakes the idle
// kworker that last ran on CPU 0, asleep in the deep state since 256 us
// (select_idle_sibling(): prev is idle), so it runs there after the exit,
// at 1.412 ms, freeing the job 5 us later. The model used to run the
// handler at once and leave CPU 1 asleep.
TEST_CASE("the GPU's job interrupt waits for its CPU's idle exit", "[drm][cpuidle]") {
  ScenarioParams p = drm_scenario(2);
  p.platform.clusters = {cluster_1024_deep_idle("c", 2)};
  p.kernel.cpuidle_governor = "menu_v6.18";
  p.kernel.fair_server = false;
  GpuParams& g = std::get<GpuParams>(p.devices[0].params);
  g.irq_cpu = 1;
  p.tasks = {on_cpus(task("vk_submit", {ev_submit("vk", Time::zero()), ev_sleep(Time::s(10))}, Policy::kFifo, 1), {0})};
  System sys(p, 1);
  DrmLog log;
  sys.add_observer(&log);
  Kernel& k = sys.kernel();
  k.run_until(Time::us(1011));
  REQUIRE(k.rq(1).cpuidle.phase == CpuidleDevice::Phase::kIn);
  REQUIRE(k.rq(1).cpuidle.state == 1);
  const uint64_t entries = k.rq(1).cpuidle.entries;
  k.run_until(Time::ms(20));
  REQUIRE(log.jobs.size() == 1);
  CHECK(log.jobs[1].hw == Time::us(12));
  CHECK(log.jobs[1].done == Time::us(1212));
  CHECK(log.jobs[1].freed == Time::us(1417));
  CHECK(k.rq(1).cpuidle.entries > entries);  // woken, it went back to idle
}

TEST_CASE("GPU service times are drawn per job from a seeded, named stream", "[drm]") {
  auto run = [](uint64_t seed) {
    ScenarioParams p = drm_scenario(2);
    GpuParams& g = std::get<GpuParams>(p.devices[0].params);
    g.service_time.kind = Distribution::Kind::kUniform;
    g.service_time.min = Time::ms(1);
    g.service_time.max = Time::ms(2);
    TaskSpec sub = task("vk_submit", {ev_submit("vk", Time::zero()), ev_sleep(Time::ms(5))}, Policy::kFifo, 1);
    p.tasks = {sub};
    DrmLog log = run_logged<DrmLog>(p, seed);
    std::vector<int64_t> gpu;
    for (auto& [id, j] : log.jobs)
      if (j.done > Time::zero()) gpu.push_back((j.done - j.hw).count());
    return gpu;
  };
  auto a = run(1), b = run(1), c = run(2);
  REQUIRE(a.size() >= 3);
  CHECK(a == b);
  CHECK(a != c);
  for (int64_t v : a) {
    CHECK(v >= 1000000);
    CHECK(v <= 2000000);
  }
}

// ---------------------------------------------------------------- YAML

#include "models/config/config.h"
#include "models/workload/device_calls.h"

namespace {
const char* kYaml = R"(
duration: 100ms
platform: {cpus: 4}
workqueue: {create_worker_delay: 20us, default_affinity_scope: system}
workqueues:
  - {name: csf, flags: [WQ_UNBOUND, WQ_MEM_RECLAIM, WQ_SYSFS], nice: -5}
  - {name: rt, flags: [WQ_UNBOUND, WQ_RTPRI], rt_priority: 3, max_workers: 2}
kthread_workers:
  - {name: kw, follow: fifo}
devices:
  - {name: g, model: gpu, service_time: {dist: uniform, min: 1ms, max: 2ms}, irq_cpu: 3}
  - {name: s1, model: drm_sched, gpu: g, submit_wq: csf, entities: [e1]}
  - {name: s2, model: drm_sched, gpu: g, entities: [e2]}
  - {name: s3, model: drm_sched, gpu: g, kthread_worker: kw, entities: [e3]}
tasks:
  - name: t
    events:
      - submit_job: {entity: e1, gpu_time: 1ms}
      - submit_job: {entity: e2}
      - queue_work: {wq: events, work: w, cost: 50us, sleep: 10us, cpu: 1}
      - kthread_queue_work: {worker: kw, work: k, cost: 20us}
      - sleep: 10ms
)";

std::string load_error(const std::string& text) {
  try {
    load_scenario_yaml(text, "x.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  size_t at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}
}  // namespace

TEST_CASE("a GPU's threaded interrupt loads from YAML, SCHED_FIFO 50 unless set", "[drm][config]") {
  const ScenarioParams p = load_scenario_yaml(replace(kYaml, "irq_cpu: 3", "irq_cpu: 3, irq_thread: {cost: 4us}"), "x.yaml");
  const IrqThreadParams& t = std::get<GpuParams>(p.devices[0].params).irq_thread;
  CHECK(t.enabled);
  CHECK(t.policy == Policy::kFifo);
  CHECK(t.rt_priority == 50);
  CHECK(t.cost == Time::us(4));
  const ScenarioParams q = load_scenario_yaml(
      replace(kYaml, "irq_cpu: 3", "irq_cpu: 3, irq_thread: {comm: irq/87-job, policy: SCHED_OTHER, nice: -5}"), "x.yaml");
  const IrqThreadParams& u = std::get<GpuParams>(q.devices[0].params).irq_thread;
  CHECK(u.comm == "irq/87-job");
  CHECK(u.policy == Policy::kNormal);
  CHECK(u.nice == -5);
  CHECK_FALSE(std::get<GpuParams>(load_scenario_yaml(kYaml, "x.yaml").devices[0].params).irq_thread.enabled);
}

TEST_CASE("a GPU's retire worker loads from YAML and must name a declared kthread_worker", "[drm][config]") {
  const ScenarioParams p =
      load_scenario_yaml(replace(kYaml, "irq_cpu: 3", "irq_cpu: 3, retire_worker: kw, retire_cost: 7us"), "x.yaml");
  const GpuParams& g = std::get<GpuParams>(p.devices[0].params);
  CHECK(g.retire_worker == "kw");
  CHECK(g.retire_cost == Time::us(7));
  CHECK(std::get<GpuParams>(load_scenario_yaml(kYaml, "x.yaml").devices[0].params).retire_worker.empty());
  CHECK_THAT(load_error(replace(kYaml, "irq_cpu: 3", "irq_cpu: 3, retire_worker: gpu-worker")),
             Catch::Contains("devices[0].retire_worker") && Catch::Contains("unknown kthread_worker 'gpu-worker'") &&
                 Catch::Contains("kw"));
  CHECK_THAT(load_error(replace(kYaml, "irq_cpu: 3", "irq_cpu: 3, retire_worker: kw, retire_cost: -1us")),
             Catch::Contains("devices[0].retire_cost"));
  const ScenarioParams q = load_scenario_yaml(
      replace(kYaml, "irq_cpu: 3", "irq_cpu: 3, retire_worker: kw, idle_work_delay: 1ms, idle_work_cost: 3us"), "x.yaml");
  CHECK(std::get<GpuParams>(q.devices[0].params).idle_work_delay == Time::ms(1));
  CHECK(std::get<GpuParams>(q.devices[0].params).idle_work_cost == Time::us(3));
  CHECK_THAT(load_error(replace(kYaml, "irq_cpu: 3", "irq_cpu: 3, idle_work_delay: 1ms")),
             Catch::Contains("devices[0].idle_work_delay") && Catch::Contains("needs retire_worker"));
}

TEST_CASE("panthor's chain costs load from YAML and need a fence_wq", "[drm][config]") {
  const std::string chain = "submit_wq: csf, fence_wq: csf, signal_work_cost: 8us, sync_update_work_cost: 3us, "
                            "idle_tick_cost: 20us, entities: [e1]";
  const ScenarioParams p = load_scenario_yaml(replace(kYaml, "submit_wq: csf, entities: [e1]", chain), "x.yaml");
  const DrmSchedParams& d = std::get<DrmSchedParams>(p.devices[1].params);
  CHECK(d.signal_work_cost == Time::us(8));
  CHECK(d.sync_update_work_cost == Time::us(3));
  CHECK(d.idle_tick_cost == Time::us(20));
  CHECK(std::get<DrmSchedParams>(load_scenario_yaml(kYaml, "x.yaml").devices[1].params).idle_tick_cost == Time::zero());
  CHECK_THAT(load_error(replace(kYaml, "submit_wq: csf, entities: [e1]", "submit_wq: csf, idle_tick_cost: 20us, entities: [e1]")),
             Catch::Contains("x.yaml:") && Catch::Contains("devices[1].idle_tick_cost") && Catch::Contains("needs fence_wq"));
  CHECK_THAT(load_error(replace(kYaml, "submit_wq: csf, entities: [e1]", "submit_wq: csf, fence_wq: csf, signal_work_cost: -1us, entities: [e1]")),
             Catch::Contains("devices[1].signal_work_cost"));
}

TEST_CASE("workqueues, kthread_workers and devices load from YAML", "[drm][config]") {
  ScenarioParams p = load_scenario_yaml(kYaml, "x.yaml");
  CHECK(p.workqueue.create_worker_delay == Time::us(20));
  CHECK(p.workqueue.default_affinity_scope == "system");
  // s2 names no submit_wq: drm_sched_init() allocates an ordered one named after it.
  REQUIRE(p.workqueue.workqueues.size() == 3);
  CHECK(p.workqueue.workqueues[0].nice == -5);
  CHECK(p.workqueue.workqueues[1].flags == (kWqUnbound | kWqRtpri));
  CHECK(p.workqueue.workqueues[1].max_workers == 2);
  CHECK(p.workqueue.workqueues[2].name == "s2");
  CHECK((p.workqueue.workqueues[2].flags & kWqOrdered));
  REQUIRE(p.kthread_workers.size() == 1);
  CHECK(p.kthread_workers[0].follow == KthreadFollow::kFifo);
  REQUIRE(p.devices.size() == 4);
  const auto& g = std::get<GpuParams>(p.devices[0].params);
  CHECK(g.service_time.kind == Distribution::Kind::kUniform);
  CHECK(g.irq_cpu == 3);
  CHECK(std::get<DrmSchedParams>(p.devices[2].params).submit_wq == "s2");
  CHECK(std::get<DrmSchedParams>(p.devices[3].params).path == DrmSubmitPath::kKthreadWorker);
  const auto& ev = p.tasks[0].phases[0].events;
  CHECK(ev[0].call.op == CallSpec::Op::kSubmitJob);
  CHECK(ev[0].call.gpu_time == Time::ms(1));
  CHECK(ev[2].call.cpu == 1);
  CHECK(ev[2].call.sleep == Time::us(10));
  CHECK(ev[3].call.op == CallSpec::Op::kKthreadQueueWork);
  System sys(p, 1);
  sys.run();
  CHECK(sys.device_calls()->work_item("w")->executions == 10);
  CHECK(sys.device_calls()->work_item("k")->executions == 10);
}

TEST_CASE("bad device and workqueue YAML is reported with the valid names", "[drm][config]") {
  CHECK_THAT(load_error(replace(kYaml, "entity: e1,", "entity: e9,")),
             Catch::Contains("tasks[0].events[0].submit_job.entity: unknown entity 'e9' (valid: e1, e2, e3)"));
  CHECK_THAT(load_error(replace(kYaml, "wq: events,", "wq: evnts,")),
             Catch::Contains("unknown workqueue 'evnts'") && Catch::Contains("did you mean 'events'?"));
  CHECK_THAT(load_error(replace(kYaml, "model: gpu,", "model: npu,")),
             Catch::Contains("devices[0].model") && Catch::Contains("gpu, drm_sched"));
  CHECK_THAT(load_error(replace(kYaml, "WQ_MEM_RECLAIM, WQ_SYSFS]", "WQ_MEM_RECLAIM]")),
             Catch::Contains("workqueues[0].nice") && Catch::Contains("lacks WQ_SYSFS"));
  CHECK_THAT(load_error(replace(kYaml, "{name: csf, flags: [WQ_UNBOUND, WQ_MEM_RECLAIM, WQ_SYSFS], nice: -5}",
                                "{name: csf, ordered: true, flags: [WQ_MEM_RECLAIM, WQ_SYSFS]}")),
             Catch::Contains("workqueues[0].flags") && Catch::Contains("ordered workqueue cannot be WQ_SYSFS"));
  CHECK_THAT(load_error(replace(kYaml, "gpu: g, submit_wq", "gpu: h, submit_wq")),
             Catch::Contains("unknown gpu 'h' (valid: g)"));
  CHECK_THAT(load_error("name: s\nduration: 1s\ntasks:\n  - name: t\n"
                       "    events: [{kthread_queue_work: {worker: kw, work: k, cost: 1us}}]\n"),
             Catch::Contains("unknown kthread_worker 'kw' (none declared)"));
  CHECK_THAT(load_error(replace(kYaml, "follow: fifo", "follow: rt")), Catch::Contains("none, min_nice, fifo"));
  CHECK_THAT(load_error(replace(kYaml, "irq_cpu: 3", "irq_cpu: 4")), Catch::Contains("devices[0].irq_cpu"));
  CHECK_THAT(load_error(replace(kYaml, "irq_cpu: 3", "irq_cpu: 3, irq_thread: {nice: 5}")),
             Catch::Contains("devices[0].irq_thread.nice") && Catch::Contains("takes 'priority: 1..99'"));
  CHECK_THAT(load_error(replace(kYaml, "irq_cpu: 3", "irq_cpu: 3, irq_thread: {cost: -1us}")),
             Catch::Contains("devices[0].irq_thread.cost"));
  CHECK_THAT(load_error(replace(kYaml, "flags: [WQ_UNBOUND, WQ_RTPRI]", "flags: [WQ_UNBOUND, WQ_RTPRIO]")),
             Catch::Contains("WQ_RTPRI"));
  CHECK_THAT(load_error(replace(kYaml, "{name: s1, model: drm_sched, gpu: g,", "{name: s1, model: drm_sched, gpu: g, slots: 2,")),
             Catch::Contains("unknown key 'slots'"));
}

TEST_CASE("the RK3588 panthor scenario loads and measures push_job -> run_job", "[drm][config]") {
  ScenarioParams p = load_scenario_file(std::string(SCHEDLAB_SOURCE_DIR) + "/configs/scenarios/rk3588_panthor_stock.yaml");
  p.duration = Time::s(1);
  DrmLog log = run_logged<DrmLog>(p);
  // 60 frames x 2 jobs in one second.
  CHECK(log.jobs.size() >= 118);
  for (const auto& [id, j] : log.jobs)
    if (j.run > Time::zero()) CHECK(j.run >= j.pushed);
}

// 6.1 and 6.6 run the DRM scheduler in a kthread per scheduler
// (drm_sched_main(), SCHED_FIFO 1); the model has 6.8's work items only, so
// a drm_sched device (or a display's gpu_submit_wq) on those kernels is an
// error at the device's line, not a silent 6.8+ run.
TEST_CASE("a DRM scheduler on a kernel before 6.8 is an error naming the kthread design", "[drm][config]") {
  for (const char* v : {"6.1", "6.6"}) {
    const std::string err = load_error(std::string("kernel: {version: \"") + v + "\"}\n" + kYaml);
    CHECK_THAT(err, Catch::Contains("x.yaml:13:") && Catch::Contains("devices[1].gpu") &&
                        Catch::Contains("drm_sched_main()") && Catch::Contains(std::string("kernel ") + v));
  }
  CHECK(load_error(std::string("kernel: {version: \"6.12\"}\n") + kYaml).empty());
  CHECK(load_error(std::string("kernel: {version: \"6.18\"}\n") + kYaml).empty());
}
