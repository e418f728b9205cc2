// cpuidle in the kernel model (models/kernel/cpuidle/, sched/idle.cc):
// idle states from the platform, exit latency, the cluster domain, the
// tick in idle, the governor's cost and the residency metrics. Expected
// times are worked out beside each check (HZ=250: TICK_NSEC = 4 ms).
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "models/config/config.h"
#include "models/kernel/cpuidle/governor.h"
#include "sched_test_util.h"

using namespace schedlab;
using namespace schedlab::testing;

namespace {

// One OPP (1 GHz at 800 mV, C = 100 -> 64 mW busy) and capacity 1024, so
// work takes its own length. Idle states (powers for the energy checks):
//   0 WFI:  entry 0,     exit 1 us,   min_residency 1 us,  10 mW
//   1 off:  entry 50 us, exit 200 us, min_residency 1 ms,   2 mW
// (the governor sees exit_latency = entry + exit: 1 us and 250 us), and
// when `cluster_state`, a cluster state entry 100 us, exit 300 us,
// min_residency 3 ms, 0.5 mW.
ClusterParams idle_cluster(const std::string& name, int cpus, bool cluster_state, Time deep_residency = 1_ms) {
  ClusterParams c = cluster_1024(name, cpus, {{1000000, 800000, 0}});
  c.cpu_idle_states = {{"WFI", Time::zero(), 1_us, 1_us, 10.0}, {"off", 50_us, 200_us, deep_residency, 2.0}};
  if (cluster_state) c.cluster_idle_states = {{"cluster-off", 100_us, 300_us, 3_ms, 0.5}};
  return c;
}

ScenarioParams idle_scenario(const std::string& governor, std::vector<ClusterParams> clusters) {
  ScenarioParams p = exact_scenario("6.12", 250);
  p.platform.name = "idle-toy";
  p.platform.clusters = std::move(clusters);
  p.platform.cpus = 0;
  for (const auto& c : p.platform.clusters) p.platform.cpus += c.nr_cpus;
  p.kernel.cpuidle_governor = governor;
  p.kernel.cpuidle_governor_cost = Time::zero();
  p.kernel.cpuidle_sleep_length_cost = Time::zero();
  // 6.12's fair server arms an hrtimer (its zero-lag inactive timer) on a
  // CPU whose last fair task leaves: the schedules below are worked out
  // without it (it is tested in test_fair_server_bw.cc).
  p.kernel.fair_server = false;
  return p;
}

// One CPU whose deep state's target residency (20 ms) exceeds the 9 ms
// sleeps of a task running 1 ms every 10 ms, for 1 s.
ScenarioParams one_ms_every_ten_ms(const std::string& governor) {
  ScenarioParams p = idle_scenario(governor, {idle_cluster("c", 1, false, 20_ms)});
  p.duration = 1_s;
  p.tasks = {task("t", {ev_run(1_ms), ev_sleep(9_ms)})};
  return p;
}

TaskSpec pinned(TaskSpec t, int cpu) {
  t.cpus = {cpu};
  return t;
}

EventSpec ev_named(EventSpec::Kind kind, const std::string& name = "") {
  EventSpec e;
  e.kind = kind;
  e.name = name;
  return e;
}

struct IdleEvent {
  Time t;
  int cpu;
  int state;
};

// Records cpu_idle events and each CPU's current state.
class IdleLog : public SchedObserver {
 public:
  explicit IdleLog(int nr_cpus) : state(static_cast<size_t>(nr_cpus), 0) {}
  void on_cpu_idle(Time t, int cpu, int s) override {
    log.push_back({t, cpu, s});
    state[static_cast<size_t>(cpu)] = s;
  }
  std::vector<IdleEvent> log;
  std::vector<int> state;
};

}  // namespace

TEST_CASE("exit latency delays a timer-woken task and shows in an IPI wake-up's latency", "[cpuidle]") {
  SECTION("a timer wake-up from the deep state runs the task exit latency later") {
    // t runs 10 us and sleeps 10 ms. At 10 us menu predicts the 10 ms sleep
    // length (no history: the timer, correction factor 1): state 1 (target
    // residency 1 ms, exit latency 250 us), tick stopped (10 ms >= TICK_NSEC).
    // (teo would take WFI while the new task's initial utilisation lasts.)
    // The timer fires at 10.010 ms; the CPU runs again at
    // max(10.010 ms, 10 us + 50 us entry) + 200 us exit = 10.210 ms, and
    // only then handles the interrupt (cpuidle_enter_state() enables
    // interrupts after ->enter() returns): the timer's handler, and so
    // sched_waking, come at 10.210 ms, so the wake-up latency a trace shows
    // is 0 while the task runs 200 us after its timer.
    auto run = [](const std::string& governor) {
      ScenarioParams p = idle_scenario(governor, {idle_cluster("c", 1, false)});
      p.duration = 100_ms;
      p.tasks = {task("t", {ev_run(10_us), ev_sleep(10_ms)})};
      System sys(p, 1);
      SwitchLog log;
      sys.add_observer(&log);
      sys.run();
      return std::make_pair(log.first_run("t", 1_ms), sys.result());
    };
    auto [menu_first, menu] = run("menu");
    CHECK(menu_first == Time::us(10210));
    const Samples& lat = metrics_of(menu, "t").wakeup_latency;
    REQUIRE(lat.size() == 9);  // timers at 10.010, 20.220, ... 90.900 ms (woken 200 us later)
    for (int64_t v : lat.values()) CHECK(v == 0);
    // Without cpuidle the same task runs at its timer.
    auto [none_first, none] = run("none");
    CHECK(none_first == Time::us(10010));
    for (int64_t v : metrics_of(none, "t").wakeup_latency.values()) CHECK(v == 0);
  }
  SECTION("a wake-up while the CPU is still entering its state waits for the entry, then the exit") {
    // sleeper (CPU 1) runs 10 us and suspends: no timer on CPU 1, so menu
    // picks state 1 at 10 us. waker (CPU 0) resumes it at 30 us, during the
    // 50 us entry: the CPU runs at 10 + 50 + 200 = 260 us; latency 230 us.
    ScenarioParams p = idle_scenario("menu", {idle_cluster("c", 2, false)});
    p.duration = 10_ms;
    EventSpec resume = ev_named(EventSpec::Kind::kResume, "sleeper");
    p.tasks = {pinned(task("sleeper", {ev_run(10_us), ev_named(EventSpec::Kind::kSuspend)}), 1),
               pinned(task("waker", {ev_run(30_us), resume, ev_sleep(100_ms)}), 0)};
    System sys(p, 1);
    SwitchLog log;
    sys.add_observer(&log);
    sys.run();
    CHECK(log.first_run("sleeper", 1_us) == 260_us);
    const RunResult r = sys.result();
    const Samples& lat = metrics_of(r, "sleeper").wakeup_latency;
    REQUIRE(lat.size() == 1);
    CHECK(lat.values()[0] == 230000);
  }
}

TEST_CASE("the governor's cost delays idle entry and is time outside any idle state", "[cpuidle]") {
  // menu calls tick_nohz_get_sleep_length() whenever its predicted idle
  // time exceeds 15 us (here always): each idle entry costs governor_cost +
  // sleep_length_cost = 5 + 3 us of idle-task time. It picks state 1 with
  // the tick stopped, as in the exit latency test.
  const Time cost = GENERATE(Time::zero(), 8_us);
  ScenarioParams p = idle_scenario("menu", {idle_cluster("c", 1, false)});
  p.duration = 100_ms;
  p.kernel.cpuidle_governor_cost = cost == Time::zero() ? Time::zero() : 5_us;
  p.kernel.cpuidle_sleep_length_cost = cost == Time::zero() ? Time::zero() : 3_us;
  p.tasks = {task("t", {ev_run(10_us), ev_sleep(10_ms)})};
  System sys(p, 1);
  SwitchLog sw;
  IdleLog idle(1);
  sys.add_observer(&sw);
  sys.add_observer(&idle);
  sys.run();
  // Every switch to idle is followed by cpu_idle(1) exactly `cost` later.
  std::vector<Time> went_idle, entered;
  for (const auto& r : sw.log)
    if (r.next == "idle") went_idle.push_back(r.t);
  for (const auto& e : idle.log)
    if (e.state >= 0) entered.push_back(e.t);
  REQUIRE(went_idle.size() == 10);  // 0.01, 10.22, 20.43, ... ms (+ the cost)
  REQUIRE(entered.size() == went_idle.size());
  for (size_t i = 0; i < entered.size(); ++i) CHECK(entered[i] == went_idle[i] + cost);
  CHECK(went_idle[0] == 10_us);
  // Each timer is handled 200 us late (the entry, 50 us, is over by then),
  // so the task is woken once the CPU runs: wake-up latency 0.
  const RunResult r = sys.result();
  for (int64_t v : metrics_of(r, "t").wakeup_latency.values()) CHECK(v == 0);
  // Outside any idle state: the task's 10 us runs plus each entry's cost.
  const CpuMetrics& c = r.cpus[0];
  CHECK(c.cpuidle_running == c.busy + cost * static_cast<int64_t>(entered.size()));
}

TEST_CASE("idle-state residency plus running time equals the elapsed time on every CPU", "[cpuidle]") {
  const std::string governor =
      GENERATE("none", "teo", "teo_tick", "teo_tick_rfc", "teo_v6.6", "teo_v6.12", "teo_v6.18", "menu", "menu_v6.18",
               "qcom-cpu-lpm");
  ScenarioParams p = idle_scenario(governor, {idle_cluster("little", 2, true), idle_cluster("big", 2, false)});
  p.duration = 1_s;
  p.warmup = 100_ms;
  p.kernel.cpuidle_governor_cost = 2_us;
  p.kernel.cpuidle_sleep_length_cost = 1_us;
  p.kernel.timer_slack = 50_us;
  p.kernel.wakeup_cost = 2_us;
  p.kernel.ipi_latency = 5_us;
  TaskSpec bursty = task("bursty", {ev_run(3_ms), ev_sleep(40_ms)});
  bursty.instances = 2;
  p.tasks = {task("ui", {ev_run(2_ms), ev_timer("vsync", 8333_us)}),
             task("audio", {ev_run(200_us), ev_timer("a", 5_ms)}, Policy::kFifo, 2), bursty,
             task("rare", {ev_run(1_ms), ev_sleep(100_ms)})};
  const RunResult r = run_result(p);
  bool deeper = false;
  for (const CpuMetrics& c : r.cpus) {
    Time sum = c.cpuidle_running;
    for (Time t : c.cpuidle_residency) sum += t;
    CHECK(sum == r.elapsed());
    CHECK(c.busy + c.idle == r.elapsed());
    CHECK(c.cpuidle_running >= c.busy);
    // CPU states 0, 1 and (little) the cluster state 2.
    CHECK(c.cpuidle_residency.size() == (c.cluster == 0 ? 3u : 2u));
    for (size_t i = 1; i < c.cpuidle_residency.size(); ++i) deeper |= c.cpuidle_residency[i] > Time::zero();
    // Idle energy: each state's power over its residency, 64 mW (the busy
    // power at the only OPP) while the idle task runs outside a state.
    const double powers[] = {10.0, 2.0, 0.5};
    double expect = (c.cpuidle_running - c.busy).to_s() * 64.0;
    for (size_t i = 0; i < c.cpuidle_residency.size(); ++i) expect += c.cpuidle_residency[i].to_s() * powers[i];
    CHECK(c.idle_energy_mj == Approx(expect));
  }
  CHECK(deeper == (governor != "none"));
  double total = 0;
  for (const ClusterMetrics& cl : r.clusters) {
    double cpus = 0;
    for (int c : cl.cpus) cpus += r.cpus[static_cast<size_t>(c)].energy_mj();
    CHECK(cl.cpu_energy_mj == Approx(cpus));
    total += cl.energy_mj();
  }
  CHECK(r.total_energy_mj() == Approx(total));
}

namespace {

// Checks, at every cpu_idle event, that a CPU reported in a cluster state
// (index >= its CPU state count, 2 here) has every CPU of its cluster idle
// and in its deepest CPU state or the cluster state.
class ClusterCheck : public SchedObserver {
 public:
  ClusterCheck(Kernel& k, std::vector<int> cluster) : k_(k), cluster_(std::move(cluster)), state_(8, 0) {}
  void on_cpu_idle(Time t, int cpu, int s) override {
    state_[static_cast<size_t>(cpu)] = s;
    for (int c : cluster_) {
      if (state_[static_cast<size_t>(c)] < 2) continue;
      for (int o : cluster_) {
        if (!k_.rq(o).curr->is_idle_task || state_[static_cast<size_t>(o)] < 1) ++violations;
      }
    }
    if (s >= 2) ++cluster_entries;
  }
  int violations = 0;
  int cluster_entries = 0;

 private:
  Kernel& k_;
  std::vector<int> cluster_;
  std::vector<int> state_;
};

}  // namespace

TEST_CASE("a cluster state is entered only when every CPU of the cluster is idle", "[cpuidle]") {
  // One cluster of 2 CPUs with a cluster state (min_residency 3 ms + entry
  // 100 us). teo reaches the deepest CPU state once the new tasks' initial
  // utilisation has decayed (about 150 ms); menu at once.
  const std::string governor = GENERATE("menu", "teo", "qcom-cpu-lpm");
  ScenarioParams p = idle_scenario(governor, {idle_cluster("c", 2, true)});
  p.duration = 500_ms;
  TaskSpec long_sleeper = task("long", {ev_run(100_us), ev_sleep(20_ms)});
  int expect_entries = -1;  // -1: some
  bool cpu0_deep = false;   // CPU 0 reaches its deepest CPU state
  SECTION("one CPU always busy: never") {
    p.tasks = {pinned(hog("hog"), 0), pinned(long_sleeper, 1)};
    expect_entries = 0;
  }
  SECTION("one CPU's next timer is closer than the cluster state's residency: never") {
    // CPU 0 sleeps 2 ms at a time, in state 1 (target residency 1 ms; with
    // teo once its 10 us runs' utilisation is below the utilized threshold)
    // with the tick kept (2 ms < TICK_NSEC): its next event is <= 2 ms
    // away, less than 3 ms + 100 us.
    p.tasks = {pinned(task("short", {ev_run(10_us), ev_sleep(2_ms)}), 0), pinned(long_sleeper, 1)};
    expect_entries = 0;
    cpu0_deep = true;
  }
  SECTION("both CPUs idle with distant timers: the last one in powers the cluster off") {
    TaskSpec other = long_sleeper;
    other.name = "long2";
    other.delay = 5_ms;
    p.tasks = {pinned(long_sleeper, 0), pinned(other, 1)};
  }
  System sys(p, 1);
  ClusterCheck check(sys.kernel(), {0, 1});
  sys.add_observer(&check);
  sys.run();
  CHECK(check.violations == 0);
  if (expect_entries >= 0)
    CHECK(check.cluster_entries == expect_entries);
  else
    CHECK(check.cluster_entries > 20);  // about one per 20 ms period, per CPU
  // The residency shows it too (state 2 = the cluster state).
  const RunResult r = sys.result();
  CHECK((r.cpus[1].cpuidle_residency[2] > Time::zero()) == (expect_entries != 0));
  if (cpu0_deep) CHECK(r.cpus[0].cpuidle_residency[1] > 100_ms);
}

TEST_CASE("the cluster state's exit latency delays the first CPU to wake", "[cpuidle]") {
  // a (CPU 0) and b (CPU 1, starting at 2 ms) run 100 us and sleep 20 ms;
  // menu puts both CPUs in state 1 with the tick stopped.
  //  0.1 ms  a sleeps until 20.1; CPU 1 (idle since boot, no timer) and
  //          CPU 0 are down: the cluster powers off (next wake-up 20 ms away).
  //  2 ms    b starts: the cluster on at 2 + 0.3, CPU 1 runs at 2.5; b sleeps
  //          at 2.6 until 22.6 and the cluster powers off again (17.5 ms).
  // 20.1 ms  a wakes from the cluster state: 300 us (cluster) + 200 us (CPU)
  //          = 500 us; it sleeps at 20.7 until 40.7, but CPU 1's timer is
  //          1.9 ms away (< 3 ms + 100 us): the cluster stays on.
  // 22.6 ms  b wakes from state 1: 200 us; sleeps at 22.9 until 42.9; the
  //          cluster powers off (CPU 0's timer is 17.8 ms away).
  // 40.7 / 42.9 ms: the same again.
  ScenarioParams p = idle_scenario("menu", {idle_cluster("c", 2, true)});
  p.duration = 50_ms;
  TaskSpec a = pinned(task("a", {ev_run(100_us), ev_sleep(20_ms)}), 0);
  TaskSpec b = pinned(task("b", {ev_run(100_us), ev_sleep(20_ms)}), 1);
  b.delay = 2_ms;
  p.tasks = {a, b};
  System sys(p, 1);
  SwitchLog log;
  sys.add_observer(&log);
  sys.run();
  const RunResult r = sys.result();
  CHECK(log.first_run("b") == 2500_us);
  // The timers' handlers run once each CPU runs again: the wake-ups
  // themselves come after the exit (latency 0); the runs show the exit.
  CHECK(metrics_of(r, "a").wakeup_latency.values() == std::vector<int64_t>{0, 0});
  CHECK(metrics_of(r, "b").wakeup_latency.values() == std::vector<int64_t>{0, 0});
  CHECK(log.first_run("a", 1_ms) == 20600_us);
  CHECK(log.first_run("b", 3_ms) == 22800_us);
}

TEST_CASE("teo keeps or stops the tick in idle by each version's rules", "[cpuidle][teo]") {
  // One CPU; state 1's target residency (20 ms) exceeds the 9 ms sleeps of a
  // task running 1 ms every 10 ms. teo (v6.5) bails out to state 0 and,
  // since the sleep length is >= TICK_NSEC, stops the tick: no tick ever
  // reaches the idle CPU. teo_tick ("avoid stopping the tick unnecessarily
  // when bailing out") keeps it: the tick wakes the idle CPU 2 or 3 times
  // per idle period (ticks at multiples of 4 ms).
  auto tick_wakeups = [](const std::string& governor) {
    System sys(one_ms_every_ten_ms(governor), 1);
    IdleLog log(1);
    sys.add_observer(&log);
    sys.run();
    int deep = 0;
    for (const auto& e : log.log) deep += e.state == 1;
    CHECK(deep == 0);
    return sys.kernel().rq(0).cpuidle.tick_wakeups;
  };
  CHECK(tick_wakeups("teo") == 0);
  CHECK(tick_wakeups("teo_tick") >= 200);  // 100 idle periods of 9 ms
  // teo_tick_rfc: the utilized CPU takes state 0 without asking for the
  // sleep length, keeping the tick as well.
  CHECK(tick_wakeups("teo_tick_rfc") >= 150);
}

// ts->idle_calls (what schedutil's sugov_hold_freq() compares) counts the
// idle passes that stop the tick or find it stopped (6.12 tick-sched.c
// __tick_nohz_idle_stop_tick()); a pass whose governor keeps the tick
// (tick_nohz_idle_retain_tick()) leaves it. The same task as above, 1 ms
// every 10 ms for 1 s: teo stops the tick in each of the 100 idle periods;
// teo_tick keeps it, and its kept-tick wake-ups go back to the governor,
// which keeps it again.
TEST_CASE("idle_calls counts the idle passes that stop the tick and not those that keep it", "[cpuidle][teo][cpufreq]") {
  auto idle_calls = [](const std::string& governor) {
    System sys(one_ms_every_ten_ms(governor), 1);
    sys.run();
    return sys.kernel().rq(0).idle_calls;
  };
  const uint64_t teo = idle_calls("teo");
  CHECK(teo >= 99);  // one per idle period (the first may start with the task)
  CHECK(teo <= 100);
  CHECK(idle_calls("teo_tick") == 0);
  // Without cpuidle every idle entry stops the tick (cpuidle_not_available()).
  CHECK(idle_calls("none") == teo);
}

TEST_CASE("kernel.cpuidle is read from YAML and a bad governor name lists the valid ones", "[cpuidle][config]") {
  const std::string head = "tasks: [{name: t, events: [{run: 1ms}]}]\nkernel:\n  cpuidle: ";
  ScenarioParams s = load_scenario_yaml(
      head + "{governor: teo_tick, governor_cost: 3us, sleep_length_cost: 500ns, latency_req: 100us}\n", "a.yaml");
  CHECK(s.kernel.cpuidle_governor == "teo_tick");
  CHECK(s.kernel.cpuidle_governor_cost == 3_us);
  CHECK(s.kernel.cpuidle_sleep_length_cost == 500_ns);
  REQUIRE(s.kernel.cpuidle_latency_req);
  CHECK(*s.kernel.cpuidle_latency_req == 100_us);
  ScenarioParams d = load_scenario_yaml("tasks: [{name: t, events: [{run: 1ms}]}]\n", "b.yaml");
  CHECK(d.kernel.cpuidle_governor == "none");
  CHECK_FALSE(d.kernel.cpuidle_latency_req);
  try {
    load_scenario_yaml(head + "{governor: teoo}\n", "c.yaml");
    FAIL("no error");
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    CHECK_THAT(what, Catch::Contains("c.yaml:3"));
    CHECK_THAT(what, Catch::Contains("kernel.cpuidle.governor"));
    CHECK_THAT(what, Catch::Contains("none, menu, menu_v6.18, teo, teo_tick, teo_tick_rfc, teo_v6.6, teo_v6.12, teo_v6.18"));
  }
}

TEST_CASE("a PM QoS latency limit keeps CPUs out of states that wake too slowly", "[cpuidle]") {
  // latency_req 100 us < state 1's exit latency (50 + 200 us): menu must
  // stay in WFI (which it would leave for state 1 without the limit, as in
  // the exit latency test); the woken task then runs 1 us after its timer
  // (WFI's exit), woken (sched_waking) once the CPU runs.
  ScenarioParams p = idle_scenario("menu", {idle_cluster("c", 1, false)});
  p.duration = 100_ms;
  p.kernel.cpuidle_latency_req = 100_us;
  p.tasks = {task("t", {ev_run(10_us), ev_sleep(10_ms)})};
  const RunResult r = run_result(p);
  CHECK(r.cpus[0].cpuidle_residency[1] == Time::zero());
  for (int64_t v : metrics_of(r, "t").wakeup_latency.values()) CHECK(v == 0);
  CHECK(r.cpus[0].cpuidle_residency[0] > Time::zero());
}

namespace {
// Runs `p` to its end (seed 1) recording cpu_idle and sched_switch events.
struct IdleAndSwitchRun {
  explicit IdleAndSwitchRun(const ScenarioParams& p) : sys(p, 1), idle(p.platform.cpus) {
    sys.add_observer(&idle);
    sys.add_observer(&sw);
    sys.run();
  }
  System sys;
  IdleLog idle;
  SwitchLog sw;
};
}  // namespace

TEST_CASE("a CPU whose task wakes another there and blocks does not idle before the enqueue", "[cpuidle][overheads]") {
  // With a 2 us wake-up cost, `waker` resumes `sleeper` on its own CPU and
  // sleeps in the same instant T. In the kernel the waker is still in
  // try_to_wake_up() on that CPU until the enqueue (a local wake-up is not
  // queued by IPI), so the CPU never idles in between: sleeper runs at
  // T + 2 us, its wake-up latency exactly the cost, and no idle state is
  // entered from T to then (menu would otherwise pick WFI, whose exit
  // latency would come on top).
  ScenarioParams p = idle_scenario("menu", {idle_cluster("c", 1, false)});
  p.duration = 50_ms;
  p.kernel.wakeup_cost = 2_us;
  p.tasks = {task("sleeper", {ev_named(EventSpec::Kind::kSuspend), ev_run(50_us)}),
             task("waker", {ev_run(100_us), ev_named(EventSpec::Kind::kResume, "sleeper"), ev_sleep(10_ms)})};
  IdleAndSwitchRun run(p);
  const IdleLog& idle = run.idle;
  const SwitchLog& sw = run.sw;
  const RunResult r = run.sys.result();
  const auto& lat = metrics_of(r, "sleeper").wakeup_latency.values();
  REQUIRE(lat.size() >= 4);
  for (int64_t v : lat) CHECK(v == 2000);
  // Every switch to the sleeper follows the waker's by 2 us, with no idle
  // state entered in between.
  int checked = 0;
  for (size_t i = 0; i < sw.log.size(); ++i) {
    if (sw.log[i].next != "sleeper") continue;
    Time blocked = Time::max();
    for (size_t j = i; j-- > 0;)
      if (sw.log[j].prev == "waker") {
        blocked = sw.log[j].t;
        break;
      }
    if (blocked == Time::max()) continue;  // the sleeper's first start
    CHECK(sw.log[i].t == blocked + 2_us);
    for (const IdleEvent& e : idle.log) CHECK_FALSE((e.t >= blocked && e.t < sw.log[i].t && e.state >= 0));
    ++checked;
  }
  CHECK(checked >= 4);
}

TEST_CASE("a CPU still running its wake-ups does not idle until the last is done", "[cpuidle][overheads]") {
  // `waker` on CPU 0 resumes three sleepers pinned to CPUs 1-3 and sleeps
  // in the same instant T. With a 10 us wake-up cost its CPU runs the three
  // try_to_wake_up() calls until T + 30 us (the model's waker blocked at
  // T, the kernel's would still be waking): CPU 0 enters its idle state
  // then, not at T.
  ScenarioParams p = idle_scenario("menu", {idle_cluster("c", 4, false)});
  p.duration = 50_ms;
  p.kernel.wakeup_cost = 10_us;
  TaskSpec sleepers = task("sleeper", {ev_named(EventSpec::Kind::kSuspend), ev_run(50_us)});
  sleepers.instances = 3;
  sleepers.cpus = {1, 2, 3};
  p.tasks = {sleepers, pinned(task("waker", {ev_run(100_us), ev_named(EventSpec::Kind::kResume, "sleeper"),
                                             ev_sleep(10_ms)}),
                              0)};
  IdleAndSwitchRun run(p);
  const IdleLog& idle = run.idle;
  const SwitchLog& sw = run.sw;
  int checked = 0;
  for (const auto& r : sw.log) {
    if (r.cpu != 0 || r.prev != "waker" || r.prev_state != 'S') continue;
    Time entered = Time::max();
    for (const IdleEvent& e : idle.log)
      if (e.cpu == 0 && e.state >= 0 && e.t >= r.t) {
        entered = e.t;
        break;
      }
    CHECK(entered == r.t + 30_us);
    ++checked;
  }
  CHECK(checked >= 4);
}

// __hrtimer_start_range_ns() removes a queued timer from its old base
// before queueing it on the new one: a timer re-armed before it fired, on
// another CPU, at the same expiry, leaves nothing behind on the first
// CPU, whose next timer event (tick_nohz_get_sleep_length()) is then its
// own again.
TEST_CASE("an hrtimer re-armed on another CPU leaves its old base", "[cpuidle][hrtimer]") {
  ScenarioParams p = idle_scenario("menu", {idle_cluster("c", 2, false)});
  p.duration = 1_s;
  System sys(p, 1);
  Kernel& k = sys.kernel();
  struct Nothing final : EventHandler {
    void on_event(uint64_t) override {}
  } nothing;
  Timer t(k.sim().queue(), &nothing, 0, kTierTimer);
  k.hrtimer_start(t, 500_ms, 0);
  REQUIRE(k.next_hrtimer(0) == 500_ms);
  k.hrtimer_start(t, 500_ms, 1);
  CHECK(k.next_hrtimer(1) == 500_ms);
  CHECK(k.next_hrtimer(0) == Time::max());
  k.hrtimer_cancel(t);
  CHECK(k.next_hrtimer(1) == Time::max());
}

// remove_hrtimer() from another CPU does not reprogram the timer's old
// CPU: CPU 1, idle in state 1 (tick stopped, its one timer at 10 ms), has
// that timer cancelled by an interrupt at 5 ms, and still wakes at 10 ms:
// exit 200 us, running again at 10.2 ms, back to idle. (The model used to
// reprogram it quietly: no wake-up.)
TEST_CASE("a cancelled hrtimer still wakes its idle CPU at the old expiry", "[cpuidle][hrtimer]") {
  ScenarioParams p = idle_scenario("menu", {idle_cluster("c", 2, false)});
  p.duration = 20_ms;
  System sys(p, 1);
  Kernel& k = sys.kernel();
  IdleLog idle(2);
  sys.add_observer(&idle);
  struct Nothing final : EventHandler {
    void on_event(uint64_t) override {}
  } nothing;
  Timer t(k.sim().queue(), &nothing, 0, kTierTimer);
  struct Cancel final : EventHandler {
    Kernel* k = nullptr;
    Timer* t = nullptr;
    void on_event(uint64_t) override { k->hrtimer_cancel(*t); }
  } cancel;
  cancel.k = &k;
  cancel.t = &t;
  Timer canceller(k.sim().queue(), &cancel, 0, kTierTimer);
  k.hrtimer_start(t, 10_ms, 1);
  canceller.arm(5_ms);
  k.run_until(20_ms);
  bool deep_at_cancel = false;
  std::vector<Time> cpu1_exits;
  for (const IdleEvent& e : idle.log) {
    if (e.cpu != 1) continue;
    if (e.t < 5_ms) deep_at_cancel = e.state == 1;
    if (e.state == -1 && e.t >= 5_ms) cpu1_exits.push_back(e.t);
  }
  CHECK(deep_at_cancel);
  REQUIRE_FALSE(cpu1_exits.empty());
  CHECK(cpu1_exits[0] == 10200_us);
}

// do_start_rt_bandwidth() (6.1/6.6 rt.c) queues the RT period timer on the
// CPU that starts it (HRTIMER_MODE_ABS_PINNED_HARD): an hrtimer there like
// any other. rt (FIFO 50, CPU 1) is forked from CPU 0, whose enqueue
// starts the timer on CPU 0 (first expiry 1 ns, then 1 s + 1 ns); rt runs
// 100 ms and sleeps. CPU 0, with no task, sees the timer as its next event
// (tick_nohz_get_sleep_length()), sleeps in state 1 (exit 200 us) and
// wakes for it: running again at 1 s + 1 ns + 200 us. The period timer
// then finds RT idle and stops. (The model used to keep the timer off
// every base: CPU 0 slept on through 1 s.)
TEST_CASE("the RT period timer (6.6) is an hrtimer of the CPU that started it", "[cpuidle][hrtimer][rt][throttle]") {
  ScenarioParams p = idle_scenario("menu", {idle_cluster("c", 2, false)});
  p.kernel.version = "6.6";
  p.duration = 1100_ms;
  p.tasks = {pinned(task("rt", {ev_run(100_ms), ev_sleep(10_s)}, Policy::kFifo, 50), 1)};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  IdleLog idle(2);
  sys.add_observer(&idle);
  k.run_until(500_ms);
  REQUIRE(k.rt_period_timer_cpu() == 0);
  CHECK(k.next_hrtimer(0).count() == 1'000'000'001);
  CHECK(k.next_hrtimer(1) == 10100_ms);  // rt's sleep
  CHECK(k.rq(0).cpuidle.state == 1);
  k.run_until(1100_ms);
  std::vector<Time> cpu0_exits;
  for (const IdleEvent& e : idle.log)
    if (e.cpu == 0 && e.state == -1 && e.t >= 500_ms) cpu0_exits.push_back(e.t);
  REQUIRE(cpu0_exits.size() == 1);
  CHECK(cpu0_exits[0].count() == 1'000'200'001);
  CHECK_FALSE(k.rt_period_timer_armed());
  CHECK(k.next_hrtimer(0) == Time::max());
}

// The nohz idle-balance kick (an IPI) reaching a CPU in its deep state is
// handled once the CPU runs again (cpuidle_enter_state() enables
// interrupts after ->enter(); nohz_csd_func() then raises the softirq):
// CPU 1, idle since boot with no timer, is in state 1 (entry 50 us, exit
// 200 us) when the kick arrives at 5 ms; its flags are taken at 5.2 ms.
TEST_CASE("an ILB kick to a CPU in a deep state is handled after its exit latency", "[cpuidle][nohz]") {
  ScenarioParams p = idle_scenario("menu", {idle_cluster("c", 2, false)});
  p.duration = 20_ms;
  p.tasks = {pinned(task("t", {ev_run(10_us), ev_sleep(100_ms)}), 0)};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(5_ms);
  Rq& cpu1 = k.rq(1);
  REQUIRE(cpu1.cpuidle.phase == CpuidleDevice::Phase::kIn);
  REQUIRE(cpu1.cpuidle.state == 1);
  cpu1.ilb_flags = kNohzStatsKick;
  cpu1.ilb_kick.arm(5_ms);
  k.run_until(5001_us);
  CHECK(cpu1.cpuidle.phase == CpuidleDevice::Phase::kExit);
  CHECK(cpu1.ilb_flags == kNohzStatsKick);  // not yet handled
  CHECK(cpu1.ilb_kick.when() == 5200_us);
  k.run_until(5300_us);
  CHECK(cpu1.ilb_flags == 0u);
  CHECK_FALSE(cpu1.ilb_kick.armed());
}

// The kept tick reaching a CPU in its deep state: the interrupt wakes it,
// and tick_sched_timer() (sched_tick(), the balance softirq) runs once the
// CPU is out of the state, as every handler does (cpuidle_enter_state()
// enables interrupts after ->enter()). The next tick stays on the jiffies
// grid. One CPU, menu, a task running 10 us every 3 ms: menu predicts
// about 3 ms, below TICK_NSEC (4 ms, HZ 250), so it keeps the tick and
// takes state 1 (residency 1 ms, exit 200 us).
TEST_CASE("a kept tick waking a CPU from a deep state is handled after the exit latency", "[cpuidle][tick]") {
  ScenarioParams p = idle_scenario("menu", {idle_cluster("c", 1, false)});
  p.duration = 200_ms;
  p.tasks = {task("t", {ev_run(10_us), ev_sleep(3_ms)})};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  Rq& rq = k.rq(0);
  const Time tick = 4_ms;
  // Step to the first tick that finds the CPU in state 1.
  Time t = 20_ms;
  for (; t < 200_ms; t += tick) {
    k.run_until(t - 1_us);
    if (rq.cpuidle.phase == CpuidleDevice::Phase::kIn && rq.cpuidle.state == 1 && !rq.cpuidle.tick_stopped &&
        rq.tick_timer.when() == t)
      break;
  }
  REQUIRE(t < 200_ms);
  const uint64_t wakeups = rq.cpuidle.tick_wakeups;
  k.run_until(t);
  CHECK(rq.cpuidle.phase == CpuidleDevice::Phase::kExit);
  CHECK(rq.cpuidle.tick_wakeups == wakeups + 1);
  CHECK(rq.tick_timer.when() == t + 200_us);  // the handler waits for the exit
  k.run_until(t + 200_us);
  CHECK(rq.tick_timer.when() == t + tick);  // then the grid again
  CHECK(rq.cpuidle.tick_wakeups == wakeups + 1);
}

// need_resched ends do_idle()'s loop, and tick_nohz_idle_exit() restarts a
// stopped tick before schedule_idle() (6.12 kernel/sched/idle.c,
// tick-sched.c): a CPU that then picks idle again re-enters do_idle() with
// the tick running, so its governor decides about the tick afresh. One
// CPU, t runs 100 us and sleeps 1 s: from then on menu stops the tick and
// takes state 1 (exit 200 us). A reschedule at 5 ms with nothing queued
// (what a wakee pulled away before the CPU got there leaves) wakes it; at
// 5.2 ms it picks idle again: the tick runs until the governor's pass,
// which stops it again ("stopped", not "already stopped"), a pass that
// counts ts->idle_calls.
TEST_CASE("an idle CPU rescheduled with nothing to run restarts its tick before idling again", "[cpuidle][tick]") {
  ScenarioParams p = idle_scenario("menu", {idle_cluster("c", 1, false)});
  p.duration = 20_ms;
  p.tasks = {task("t", {ev_run(100_us), ev_sleep(1_s)})};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  Rq& rq = k.rq(0);
  k.run_until(5_ms);
  REQUIRE(rq.cpuidle.phase == CpuidleDevice::Phase::kIn);
  REQUIRE(rq.cpuidle.state == 1);
  REQUIRE(rq.cpuidle.tick_stopped);
  REQUIRE_FALSE(rq.tick_timer.armed());
  const uint64_t idle_calls = rq.idle_calls;
  k.start_decision_counts();
  k.resched_curr(rq);
  k.run_until(5_ms + 200_us);
  uint64_t stopped = 0, already = 0;
  for (const DecisionCount& d : k.decision_counts()) {
    if (d.kind != "idle state") continue;
    CHECK(d.group == "cpu0");
    if (d.reason.find("tick already stopped") != std::string::npos)
      already += d.count;
    else if (d.reason.find("tick stopped") != std::string::npos)
      stopped += d.count;
  }
  CHECK(stopped == 1);
  CHECK(already == 0);
  CHECK(rq.cpuidle.tick_stopped);
  CHECK(rq.idle_calls == idle_calls + 1);
  CHECK(rq.cpuidle.state == 1);
}

namespace {
// `rq`'s CPU, still running its governor now, reaches the governor's end
// (`end`) with need_resched set by another CPU: no state entered, one
// -EBUSY return.
void check_refused_entry_at_governor_end(Kernel& k, Rq& rq, Time end) {
  REQUIRE(rq.cpuidle.phase == CpuidleDevice::Phase::kSelect);
  const uint64_t entries = rq.cpuidle.entries;
  k.run_until(end);
  CHECK(rq.cpuidle.entries == entries);
  CHECK(rq.cpuidle.busy_returns == 1);
}
}  // namespace

// call_cpuidle() returns -EBUSY when need_resched is already set as the
// governor finishes: another CPU's resched_curr() sets it at once (here an
// RT push); a wake-list wake-up only in its IPI's handler, after the state.
// Two CPUs, the governor's run 20 us. rt_a (FIFO 50) runs on CPU 0; fair
// (pinned to CPU 1) runs 1 ms and sleeps, so CPU 1's governor runs over
// [1000, 1020) us. At 1005 us rt_b (FIFO 60, pinned to CPU 0) starts and
// preempts rt_a, which is pushed to CPU 1 (the lowest-priority CPU): a
// direct remote resched during the governor's run. CPU 1 enters no state,
// runs rt_a at 1020 us, and its governor is not told of an idle period.
// menu_v6.18 then records the refused pass (last_residency_ns = 0) as an
// ignored UINT_MAX interval at its next select (when rt_a ends, 10 ms of
// running later).
TEST_CASE("a remote resched during the governor's run enters no idle state", "[cpuidle][rt]") {
  ScenarioParams p = idle_scenario("menu_v6.18", {idle_cluster("c", 2, false)});
  p.duration = 12_ms;
  p.kernel.cpuidle_governor_cost = 20_us;
  TaskSpec rt_b = pinned(task("rt_b", {ev_run(100_us), ev_sleep(100_ms)}, Policy::kFifo, 60), 0);
  rt_b.delay = 1005_us;
  p.tasks = {pinned(task("fair", {ev_run(1_ms), ev_sleep(100_ms)}), 1),
             task("rt_a", {ev_run(10_ms), ev_sleep(100_ms)}, Policy::kFifo, 50), rt_b};
  System sys(p, 1);
  SwitchLog sw;
  IdleLog idle(2);
  sys.add_observer(&sw);
  sys.add_observer(&idle);
  Kernel& k = sys.kernel();
  k.run_until(1010_us);
  REQUIRE(sw.first_run("rt_a") == Time::zero());
  REQUIRE(sw.log.front().cpu == 0);
  Rq& cpu1 = k.rq(1);
  check_refused_entry_at_governor_end(k, cpu1, 1020_us);
  for (const IdleEvent& e : idle.log)
    if (e.cpu == 1 && e.t >= 1_ms && e.t <= 1020_us) CHECK(e.state < 0);
  int rt_a_on_cpu1 = 0;
  for (const auto& r : sw.log)
    if (r.next == "rt_a" && r.cpu == 1) {
      CHECK(r.t == 1020_us);
      ++rt_a_on_cpu1;
    }
  CHECK(rt_a_on_cpu1 == 1);
  k.run_until(11100_us);
  const auto& menu = dynamic_cast<const cpuidle::MenuGovernor&>(*cpu1.cpuidle.gov);
  // 1000 us: the first select (no idle period yet) records UINT_MAX; when
  // rt_a ends: the refused entry left no residency, so UINT_MAX again (a
  // state entered and left would have recorded 0).
  CHECK(menu.intervals_us()[0] == UINT_MAX);
  CHECK(menu.intervals_us()[1] == UINT_MAX);
}

// do_idle() runs with interrupts off until the state is entered, so a
// timer due during the governor's run is a pending interrupt: the state is
// entered and left at once and the timer's handler runs after it. One CPU,
// the governor's run 20 us: t runs 10 us and sleeps 5 us, so its timer
// (15 us) falls in the run [10, 30) us. sched_waking comes at 30 us and t
// runs then: wake-up latency 0 (the model used to wake it at 15 us, a
// latency of 15 us that was the governor's run).
TEST_CASE("a timer due during the governor's run is handled after it", "[cpuidle][hrtimer]") {
  ScenarioParams p = idle_scenario("menu", {idle_cluster("c", 1, false)});
  p.duration = 1_ms;
  p.kernel.cpuidle_governor_cost = 20_us;
  p.tasks = {task("t", {ev_run(10_us), ev_sleep(5_us), ev_run(10_us), ev_sleep(100_ms)})};
  IdleAndSwitchRun run(p);
  CHECK(run.sw.first_run("t", 1_us) == 30_us);
  const RunResult r = run.sys.result();
  const Samples& lat = metrics_of(r, "t").wakeup_latency;
  REQUIRE(lat.size() == 1);
  CHECK(lat.values()[0] == 0);
  // The state was entered and left at 30 us.
  int entered = 0;
  for (const IdleEvent& e : run.idle.log)
    if (e.t == 30_us && e.state >= 0) ++entered;
  CHECK(entered == 1);
}

// genpd's cpu_power_down_ok() and the CPU latency PM QoS. A limit of
// 300 us lets each CPU into its deepest state (exit latency 50 + 200 us)
// but not the cluster state (power off 100 + on 300 us). 6.18 checks the
// limit and keeps the cluster on; 6.12 checks only the residency and powers
// it off. Both CPUs sleep 20 ms at a time, so the cluster state fits.
TEST_CASE("6.18's genpd keeps a cluster on whose latency exceeds the PM QoS limit", "[cpuidle]") {
  const std::string version = GENERATE("6.12", "6.18");
  CAPTURE(version);
  ScenarioParams p = idle_scenario("menu", {idle_cluster("c", 2, true)});
  p.kernel.version = version;
  p.duration = 200_ms;
  p.kernel.cpuidle_latency_req = 300_us;
  TaskSpec a = task("a", {ev_run(100_us), ev_sleep(20_ms)});
  TaskSpec b = a;
  b.name = "b";
  b.delay = 5_ms;
  p.tasks = {pinned(a, 0), pinned(b, 1)};
  const RunResult r = run_result(p);
  for (int cpu : {0, 1}) {
    CAPTURE(cpu);
    CHECK(r.cpus[static_cast<size_t>(cpu)].cpuidle_residency[1] > Time::zero());
    CHECK((r.cpus[static_cast<size_t>(cpu)].cpuidle_residency[2] > Time::zero()) == (version == "6.12"));
  }
}

// wake_up_new_task() runs on the parent's CPU (every task here forks from
// CPU 0): a new task placed on another idle CPU still running its governor
// sets need_resched there directly, so that CPU enters no state either.
// CPU 1's governor runs over [1000, 1020) us (fair sleeps at 1 ms); the
// new task, pinned to CPU 1, starts at 1005 us and runs at 1020 us: the
// flag is seen there, without waiting for the resched IPI (here also one
// arriving after the governor's run).
TEST_CASE("a task started on another CPU during its governor's run enters no idle state", "[cpuidle]") {
  ScenarioParams p = idle_scenario("menu", {idle_cluster("c", 2, false)});
  p.duration = 5_ms;
  p.kernel.cpuidle_governor_cost = 20_us;
  p.kernel.ipi_latency = GENERATE(Time::zero(), 30_us);
  CAPTURE(p.kernel.ipi_latency.count());
  TaskSpec late = pinned(task("late", {ev_run(100_us), ev_sleep(100_ms)}), 1);
  late.delay = 1005_us;
  p.tasks = {pinned(task("fair", {ev_run(1_ms), ev_sleep(100_ms)}), 1), late};
  System sys(p, 1);
  SwitchLog sw;
  sys.add_observer(&sw);
  Kernel& k = sys.kernel();
  k.run_until(1010_us);
  check_refused_entry_at_governor_end(k, k.rq(1), 1020_us);
  CHECK(sw.first_run("late") == 1020_us);
}

// A remote resched_curr() of a CPU asleep in an idle state: the scheduler
// IPI (5 us) wakes it, then the exit latency runs. CPU 1 idles from the
// start (menu, no timer: state 1, exit latency 200 us); late, pinned to
// CPU 1, starts at 5 ms from CPU 0 (wake_up_new_task() on the parent's
// CPU): it runs at 5 ms + 5 us + 200 us. Without cpuidle CPU 1 waits in
// WFI for the IPI alone: 5.005 ms. (The model used to start the exit at
// 5 ms, as if the IPI took no time.)
TEST_CASE("a CPU in an idle state woken by another CPU's resched waits for the IPI, then the exit", "[cpuidle]") {
  const std::string governor = GENERATE("menu", "none");
  CAPTURE(governor);
  ScenarioParams p = idle_scenario(governor, {idle_cluster("c", 2, false)});
  p.duration = 10_ms;
  p.kernel.ipi_latency = 5_us;
  TaskSpec late = pinned(task("late", {ev_run(100_us), ev_sleep(100_ms)}), 1);
  late.delay = 5_ms;
  p.tasks = {pinned(task("cpu0", {ev_run(100_us), ev_sleep(1_ms)}), 0), late};
  IdleAndSwitchRun run(p);
  CHECK(run.sw.first_run("late") == (governor == "menu" ? 5205_us : 5005_us));
  if (governor == "menu") {
    // CPU 1 was in state 1 until the IPI came.
    bool deep_before = false;
    for (const IdleEvent& e : run.idle.log)
      if (e.cpu == 1 && e.t < 5_ms) deep_before = e.state == 1;
    CHECK(deep_before);
  }
}

// A wake-up through the wake list (the target runs nothing): the IPI
// reaches CPU 1 in state 1, and sched_ttwu_pending() runs in its handler
// once the CPU runs again (cpuidle_enter_state() enables interrupts after
// ->enter()). So the task is enqueued -- sched_wakeup, its runnable time,
// PELT and the cpufreq hooks -- at the exit's end, not at the IPI. waker
// (CPU 0) resumes sleeper at 1 ms: IPI at 1.005 ms (or at once), exit
// 200 us, enqueued and running at 1.205 ms; wake-up latency 205 us. (The
// model used to enqueue at the IPI: 200 us on the run-queue.) Without cpuidle
// (arch_cpu_idle()'s WFI) the IPI is handled at once.
TEST_CASE("a wake-list wake-up of a CPU in an idle state enqueues after its exit latency", "[cpuidle]") {
  const std::string governor = GENERATE("menu", "none");
  const Time ipi = GENERATE(Time::zero(), 5_us);
  // TTWU_QUEUE off (as Pixel's vendor module sets it): the waker enqueues
  // the task on CPU 1's run-queue at once and its resched IPI wakes the
  // CPU: the task waits there, on the run-queue, through the same exit.
  const bool ttwu_queue = GENERATE(true, false);
  CAPTURE(governor, ipi.count(), ttwu_queue);
  ScenarioParams p = idle_scenario(governor, {idle_cluster("c", 2, false)});
  p.duration = 10_ms;
  p.kernel.ipi_latency = ipi;
  p.kernel.features["TTWU_QUEUE"] = ttwu_queue;
  EventSpec resume = ev_named(EventSpec::Kind::kResume, "sleeper");
  p.tasks = {pinned(task("sleeper", {ev_run(10_us), ev_named(EventSpec::Kind::kSuspend)}), 1),
             pinned(task("waker", {ev_run(1_ms), resume, ev_sleep(100_ms)}), 0)};
  struct WakeupTimes : SchedObserver {
    void on_wakeup(Time t, const Task& p, int) override {
      if (p.comm == "sleeper") at.push_back(t);
    }
    std::vector<Time> at;
  } wakeups;
  System sys(p, 1);
  SwitchLog log;
  sys.add_observer(&log);
  sys.add_observer(&wakeups);
  // Mid-exit the task is on CPU 1's wake list, on no run-queue.
  sys.kernel().run_until(1100_us);
  if (governor == "menu" && ttwu_queue) {
    CHECK_FALSE(find_task(sys.kernel(), "sleeper").on_rq);
    CHECK(sys.kernel().rq(1).ttwu_pending == 1);
    CHECK(sys.kernel().rq(1).cfs.nr_running == 0);
  } else if (governor == "menu") {
    CHECK(find_task(sys.kernel(), "sleeper").on_rq);
    CHECK(sys.kernel().rq(1).ttwu_pending == 0);
    CHECK(sys.kernel().rq(1).cfs.nr_running == 1);
  }
  sys.run();
  const Time running = 1_ms + ipi + (governor == "menu" ? 200_us : Time::zero());
  CHECK(log.first_run("sleeper", 20_us) == running);
  REQUIRE(wakeups.at.size() == 2);  // the start, then the resume
  // sched_wakeup is traced at the enqueue: after the exit through the
  // wake list, at the resume itself when enqueued directly.
  CHECK(wakeups.at[1] == (ttwu_queue ? running : 1_ms));
  const RunResult r = sys.result();
  const TaskMetrics& m = metrics_of(r, "sleeper");
  REQUIRE(m.wakeup_latency.size() == 1);
  CHECK(m.wakeup_latency.values()[0] == (running - 1_ms).count());
}

// A work item's runnable wait and the part of it its CPU was leaving idle
// (RunnableTracker). CPU 1 sits in "off" (exit 200 us) when the queuer on
// CPU 0 queues a work on CPU 1's bound pool at 1 ms; an RT task pinned to
// CPU 1 starts mid-exit, at 1.010 ms (wake_up_new_task(): enqueued there
// at once). At the exit's end (1.2 ms) the RT task runs first (300 us),
// then the kworker (1.5 ms). TTWU_QUEUE off: the kworker is on CPU 1's
// run-queue from 1 ms, runnable 500 us, 200 us of it on the idle CPU.
// TTWU_QUEUE on: it waits on the wake list and is enqueued at 1.2 ms:
// runnable 300 us, none of it on an idle CPU. With the RT task started
// first (0.990 ms, exit to 1.190 ms) CPU 1 holds a task when the work is
// queued, so ttwu_queue_cond() enqueues the kworker directly either way:
// runnable 1.0 -> 1.49 ms, 190 us of it on the idle CPU.
TEST_CASE("a work item's wait on a CPU leaving idle is the exit's, with TTWU_QUEUE off only", "[cpuidle][workqueue]") {
  const bool ttwu_queue = GENERATE(true, false);
  const bool rt_first = GENERATE(false, true);
  CAPTURE(ttwu_queue, rt_first);
  ScenarioParams p = idle_scenario("menu", {idle_cluster("c", 2, false)});
  p.duration = 10_ms;
  p.kernel.features["TTWU_QUEUE"] = ttwu_queue;
  p.workqueue.create_worker_delay = Time::zero();
  EventSpec queue = ev_call(CallSpec::Op::kQueueWork, "events");
  queue.call.work = "w";
  queue.call.cost = 100_us;
  queue.call.cpu = 1;
  TaskSpec rt = pinned(task("rt", {ev_run(300_us), ev_sleep(100_ms)}, Policy::kFifo, 50), 1);
  rt.delay = rt_first ? 990_us : 1010_us;
  p.tasks = {pinned(task("queuer", {ev_run(1_ms), queue, ev_sleep(100_ms)}), 0), rt};
  System sys(p, 1);
  WorkLog log;
  sys.add_observer(&log);
  sys.run();
  const WorkItemRecord& w = log.first("w");
  const Time started = rt_first ? 1490_us : 1500_us;
  const Time wait = rt_first ? 490_us : ttwu_queue ? 300_us : 500_us;
  const Time idle_exit = rt_first ? 190_us : ttwu_queue ? Time::zero() : 200_us;
  CHECK(w.queued == 1_ms);
  CHECK(w.started == started);
  CHECK(w.wait == wait);
  CHECK(w.idle_exit == idle_exit);
  // The metrics carry it per item.
  const RunResult r = sys.result();
  const WorkQueueMetrics* events = nullptr;
  for (const WorkQueueMetrics& m : r.workqueues)
    if (m.name == "events") events = &m;
  REQUIRE(events);
  REQUIRE(events->idle_exit_wait.size() == 1);
  CHECK(events->idle_exit_wait.values()[0] == idle_exit.count());
  CHECK(events->runnable_wait.values()[0] == wait.count());
}

// ---------------------------------------------------------- qcom-cpu-lpm

namespace {
// sleeper (CPU 1) runs 10 us and suspends; waker (CPU 0) runs 10 us,
// resumes it and sleeps 500 us, `cycles` times. CPU 1 has no timer, so its
// sleep length is unbounded: without a prediction qcom-cpu-lpm takes state
// 1 (exit latency 250 us, target residency 1 ms) at each idle entry.
ScenarioParams qcom_ping(int cycles, Time duration) {
  ScenarioParams p = idle_scenario("qcom-cpu-lpm", {idle_cluster("c", 2, false)});
  p.duration = duration;
  EventSpec resume = ev_named(EventSpec::Kind::kResume, "sleeper");
  p.tasks = {pinned(task("sleeper", {ev_run(10_us), ev_named(EventSpec::Kind::kSuspend)}), 1),
             pinned(task("waker", {ev_run(10_us), resume, ev_sleep(500_us)}), 0)};
  p.tasks[1].phases[0].loop = cycles;
  p.tasks[1].loop = 1;
  return p;
}
}  // namespace

TEST_CASE("qcom-cpu-lpm learns a CPU's short idle periods and stops paying the deep state's exit", "[cpuidle][qcom]") {
  // CPU 1's idle periods: entered at 10 us, woken at 521 us (the waker's
  // first resume; the wake-up IPI has no latency), running at 721 us after
  // state 1's 200 us exit: residency 711 us, history sample 711 - 250 =
  // 461 us. Then four periods of 501 us (idle 10 us after running, woken
  // 511 us after the last wake-up) -> samples 251 us. The sixth select, at
  // 2775 us, has its 5 samples: 461 251 251 251 251, avg 293, stddev 84 <=
  // 500: predicted 293 us -> WFI, prediction timer at 293 + 100 = 393 us.
  System sys(qcom_ping(12, 20_ms), 1);
  IdleLog idle(2);
  sys.add_observer(&idle);
  Kernel& k = sys.kernel();
  auto& gov = dynamic_cast<cpuidle::QcomLpmGovernor&>(*k.rq(1).cpuidle.gov);
  k.run_until(2776_us);
  CHECK(gov.predicted_us() == 293);
  CHECK(gov.pred_type() == cpuidle::QcomLpmGovernor::PredType::kResidencyPattern);
  CHECK(idle.state[1] == 0);
  CHECK(k.rq(1).cpuidle.gov_timer.when() == 2775_us + 393_us);
  // Woken at 3076 us, running at 3077 (WFI): the timer, 91 us from expiry,
  // is cancelled at the exit (lpm_idle_exit()).
  k.run_until(3080_us);
  CHECK_FALSE(k.rq(1).cpuidle.gov_timer.armed());
  // Next select at 3087 us: sample 302 - 1 = 301 replaces the 461: avg 261
  // -> WFI, timer at 3087 + 361 = 3448 us; the waker's next resume comes at
  // 3587 us, so the timer fires first: the CPU leaves WFI at 3449 and, with
  // no prediction after a timer wake-up, takes state 1.
  k.run_until(3300_us);
  CHECK(gov.predicted_us() == 261);
  CHECK(k.rq(1).cpuidle.gov_timer.when() == 3448_us);
  k.run_until(3500_us);
  CHECK(idle.state[1] == 1);
  CHECK(gov.predicted_us() == 0);
  sys.run();
  // The sleeper's wake-up latencies: state 1's 200 us exit five times, WFI's
  // 1 us, then state 1 again (3587 -> 3787 us). Next select (3797 us): the
  // 88 us after the timer (338 - 250) merges into the 361 us sample: 449;
  // samples 301 449 251 251 251, avg 300 -> WFI, woken at 4098 -> 1 us.
  const RunResult r = sys.result();
  const Samples& lat = metrics_of(r, "sleeper").wakeup_latency;
  REQUIRE(lat.size() >= 8);
  const std::vector<int64_t> expect = {200000, 200000, 200000, 200000, 200000, 1000, 200000, 1000};
  for (size_t i = 0; i < expect.size(); ++i) CHECK(lat.values()[i] == expect[i]);
}

TEST_CASE("qcom-cpu-lpm clears every CPU's history after the SoC's full deepest sleep", "[cpuidle][qcom]") {
  // Two CPUs, each with a task running 100 us every 20 ms (timers): both
  // CPUs take state 1 (the sleep length, ~20 ms, fits its 1 ms), and with
  // the cluster state (3 ms + 100 us entry) the last one down powers the
  // cluster off for ~20 ms. The domain holds every CPU, so each power-on
  // after a full residency clears every CPU's and the cluster's history
  // (update_cluster_history()): a CPU then records at most one period before
  // the next clear, never the five a prediction needs. Without the cluster
  // state, the histories fill.
  for (bool cluster : {true, false}) {
    CAPTURE(cluster);
    ScenarioParams p = idle_scenario("qcom-cpu-lpm", {idle_cluster("c", 2, cluster)});
    p.duration = 300_ms;
    TaskSpec other = pinned(task("b", {ev_run(100_us), ev_sleep(20_ms)}), 1);
    other.delay = 5_ms;
    p.tasks = {pinned(task("a", {ev_run(100_us), ev_sleep(20_ms)}), 0), other};
    System sys(p, 1);
    ClusterCheck check(sys.kernel(), {0, 1});
    sys.add_observer(&check);
    sys.run();
    CHECK(check.violations == 0);
    for (int c = 0; c < 2; ++c) {
      const auto& gov = dynamic_cast<const cpuidle::QcomLpmGovernor&>(*sys.kernel().rq(c).cpuidle.gov);
      if (cluster)
        CHECK(gov.nsamp() <= 1);
      else
        CHECK(gov.nsamp() == 5);
    }
    if (cluster) {
      CHECK(check.cluster_entries > 20);
      CHECK(sys.kernel().cpuidle_domain(0).qcom->nsamp() == 0);
    }
  }
}

TEST_CASE("WALT's busy hysteresis keeps qcom-cpu-lpm in WFI until it ends", "[cpuidle][qcom]") {
  // The ping-pong of the learning test with WALT's util hysteresis (8.5 ms,
  // summed util threshold 15, the stock SM8650 setting of CPUs 0-6): each
  // sleeper dequeue on CPU 1 (the tasks' util sums far above 15) starts
  // 8.5 ms of WFI-only there, so no wake-up pays state 1's exit: every
  // latency is WFI's 1 us. After the waker's last cycle the bias timer ends
  // the WFI 8.5 ms after the sleeper's last suspend (the CPU runs 1 us
  // later); the select then has WFI samples 500 500 500 500 and the bias's
  // 8500 us: without that largest one the residency pattern predicts
  // 500 us -> WFI again, with the prediction timer at 600 us, whose expiry
  // (+ 1 us) leaves no prediction: state 1.
  ScenarioParams p = qcom_ping(12, 20_ms);
  p.kernel.walt_util_busy_hyst = {8500_us};
  System sys(p, 1);
  IdleLog idle(2);
  SwitchLog sw;
  sys.add_observer(&idle);
  sys.add_observer(&sw);
  sys.run();
  const RunResult r = sys.result();
  const Samples& lat = metrics_of(r, "sleeper").wakeup_latency;
  REQUIRE(lat.size() == 11);
  for (int64_t v : lat.values()) CHECK(v == 1000);
  Time last_sleep = Time::zero();
  for (const auto& rec : sw.log)
    if (rec.cpu == 1 && rec.prev == "sleeper") last_sleep = rec.t;
  std::vector<IdleEvent> cpu1;
  for (const auto& e : idle.log)
    if (e.cpu == 1 && e.state >= 0) cpu1.push_back(e);
  REQUIRE(cpu1.size() >= 2);
  for (size_t i = 0; i + 1 < cpu1.size(); ++i) CHECK(cpu1[i].state == 0);
  CHECK(cpu1.back().state == 1);
  CHECK(cpu1[cpu1.size() - 2].t == last_sleep + 8501_us);
  CHECK(cpu1.back().t == last_sleep + 8501_us + 601_us);
}

TEST_CASE("WALT's hysteresis keys: one value or one per CPU, for qcom-cpu-lpm only", "[cpuidle][qcom][config]") {
  const std::string head = "tasks: [{name: t, events: [{run: 1ms}]}]\nkernel:\n  cpuidle: ";
  ScenarioParams s = load_scenario_yaml(
      head + "{governor: qcom-cpu-lpm, walt_util_busy_hyst: [8500us, 2ms], walt_util_busy_hyst_util: [1, 15]}\n",
      "a.yaml");
  CHECK(s.kernel.walt_util_busy_hyst == std::vector<Time>{8500_us, 2_ms});
  CHECK(s.kernel.walt_util_busy_hyst_util == std::vector<uint32_t>{1, 15});
  CHECK(s.kernel.walt_busy_hyst.empty());
  // WALT's count follows every enqueue, wake-ups included (activate_task()
  // -> enqueue_task()'s hook): the sleeper's first suspend (10 us, its new
  // task's util well above a tenth of the capacity) holds CPU 1 in WFI for
  // the 1 ms busy hysteresis; woken at 521 us it runs from 522 to 532 us.
  {
    ScenarioParams q = qcom_ping(3, 5_ms);
    q.kernel.walt_busy_hyst = {1_ms};
    System sys(q, 1);
    sys.kernel().run_until(525_us);
    CHECK(sys.kernel().rq(1).nr_running == 1);
    CHECK(sys.kernel().rq(1).walt_nr == 1);
    sys.kernel().run_until(535_us);
    CHECK(sys.kernel().rq(1).walt_nr == 0);
  }
  // Three values for two CPUs, or a mainline governor: the kernel refuses.
  ScenarioParams p = qcom_ping(1, 1_ms);
  p.kernel.walt_util_busy_hyst = {1_ms, 1_ms, 1_ms};
  CHECK_THROWS_WITH(System(p, 1), Catch::Contains("kernel.cpuidle.walt_util_busy_hyst: 3 values for 2 CPUs"));
  p.kernel.walt_util_busy_hyst = {1_ms};
  p.kernel.cpuidle_governor = "menu";
  CHECK_THROWS_WITH(System(p, 1), Catch::Contains("qcom-cpu-lpm governor only"));
}

TEST_CASE("qcom-cpu-lpm's cluster governor restricts a cluster woken early, and its timer lifts it", "[cpuidle][qcom]") {
  // CPUs 0-1 share a cluster state (entry 100 us, exit 300 us, residency
  // 3 ms); CPU 2 (another cluster, no idle states) runs a waker that
  // resumes the sleeper on CPU 0 about every 2 ms. CPU 1 idles throughout,
  // so CPU 0 (no timers: state 1) is the last down each time and the
  // cluster goes off at 20, 2530, 4540, 6550 and 8560 us. Each power-on
  // (when CPU 0 runs: the wake-up + 300 + 200 us) comes before the 3 ms
  // residency: 2500, then 2000 us four times. At the fifth (10560 us) the
  // five samples hold 3 or more premature exits from state 0: restrict it,
  // predicted (2500 + 4 x 2000) / 5 = 2100 us.
  ScenarioParams p = idle_scenario("qcom-cpu-lpm", {idle_cluster("c", 2, true), cluster_1024("d", 1, {{1000000, 800000, 0}})});
  p.duration = 20_ms;
  EventSpec resume = ev_named(EventSpec::Kind::kResume, "sleeper");
  p.tasks = {pinned(task("sleeper", {ev_run(10_us), ev_named(EventSpec::Kind::kSuspend)}), 0),
             pinned(task("waker", {ev_run(10_us), resume, ev_sleep(2_ms)}), 2)};
  System sys(p, 1);
  IdleLog idle(3);
  sys.add_observer(&idle);
  Kernel& k = sys.kernel();
  k.run_until(10600_us);
  auto cluster_entries = [&] {
    std::vector<int64_t> v;
    for (const auto& e : idle.log)
      if (e.cpu == 0 && e.state == 2) v.push_back(e.t.count() / 1000);
    return v;
  };
  CHECK(cluster_entries() == std::vector<int64_t>{20, 2530, 4540, 6550, 8560});
  const CpuidleDomain& d = k.cpuidle_domain(0);
  CHECK(d.qcom->restrict_idx() == 0);
  CHECK(d.qcom->pred_residency_us() == 2100);
  // At 10570 us the notifier refused the power-off and armed the cluster
  // timer, 3000 + 100 us, on CPU 0.
  CHECK(d.qcom_timer_cpu == 0);
  CHECK(d.qcom_timer.when() == 10570_us + 3100_us);
  // CPU 0, woken at 12070 us, runs at 12270; idle again at 12280 with the
  // timer 1390 us ahead: genpd finds no cluster state that fits. The timer
  // wakes it at 13670 (running at 13870), lifts the restriction, and the
  // cluster goes off at 13870 us.
  sys.run();
  const auto all = cluster_entries();
  REQUIRE(all.size() >= 6);
  CHECK(all[5] == 13870);
}

// ---------------------------------------------------------- static power

namespace {
// The cluster's frequency over time, from CPU 0's cpu_frequency events.
class FreqLog : public SchedObserver {
 public:
  void on_cpu_frequency(Time t, int cpu, uint64_t khz) override {
    if (cpu == 0) changes.emplace_back(t, khz);
  }
  std::vector<std::pair<Time, uint64_t>> changes;
};
}  // namespace

// Per-OPP static power (a cluster rail measured with its CPUs idle) is
// billed at the cluster's current OPP for the whole window while no
// cluster state is entered: schedutil moves a 2-CPU cluster between 500
// MHz (static 5 mW) and 1 GHz (20 mW), and the static energy is the
// integral of that step function over [warmup, end], worked out here from
// the frequency events. Busy and idle CPU energy is unchanged by it.
TEST_CASE("per-OPP static power is billed at the cluster's OPP over the window", "[energy][cpuidle]") {
  ClusterParams c = cluster_1024("c", 2, {{500000, 700000, 0}, {1000000, 800000, 0}});
  c.cpu_idle_states = {{"WFI", Time::zero(), 1_us, 1_us, 10.0}};
  c.opps[0].static_power_mw = 5.0;
  c.opps[1].static_power_mw = 20.0;
  ScenarioParams p = idle_scenario("none", {c});
  p.duration = 1_s;
  p.warmup = 100_ms;
  p.tasks = {task("burst", {ev_run(6_ms), ev_sleep(30_ms)}), task("small", {ev_run(200_us), ev_sleep(5_ms)})};
  System sys(p, 1);
  FreqLog freq;
  sys.add_observer(&freq);
  sys.run();
  const RunResult r = sys.result();
  REQUIRE(freq.changes.size() >= 2);  // schedutil moves between the two OPPs
  double expect = 0;
  uint64_t khz = 1000000;  // f_max until the first event
  Time from = p.warmup;
  for (const auto& [t, f] : freq.changes) {
    if (t > from) {
      expect += (khz == 500000 ? 5.0 : 20.0) * (t - from).to_s();
      from = t;
    }
    khz = f;
  }
  expect += (khz == 500000 ? 5.0 : 20.0) * (r.window_end - from).to_s();
  REQUIRE(r.clusters.size() == 1);
  CHECK(r.clusters[0].static_energy_mj == Approx(expect));
  CHECK(r.clusters[0].static_energy_mj > 5.0 * 0.9);
  CHECK(r.clusters[0].static_energy_mj < 20.0 * 0.9);
  CHECK(r.total_energy_mj() == Approx(r.clusters[0].cpu_energy_mj + expect));
  // The same run without static power: the CPUs' energy is the same.
  ScenarioParams q = p;
  q.platform.clusters[0].opps[0].static_power_mw = 0;
  q.platform.clusters[0].opps[1].static_power_mw = 0;
  const RunResult rq = run_result(q);
  CHECK(rq.clusters[0].static_energy_mj == 0.0);
  CHECK(rq.clusters[0].cpu_energy_mj == r.clusters[0].cpu_energy_mj);
}

// A powered-down cluster leaks nothing: both CPUs sleep 20 ms at a time
// (the cluster state fits, menu), so the cluster is off for most of the
// run: from the moment the last CPU enters (every CPU of the cluster is
// then reported in the cluster state, 2) to the first wake-up (the waker
// stays in state 2 through the domain's exit latency, the others are
// reported back in their deepest CPU state at once). The static energy is
// 10 mW over the rest, the off time counted here from the cpu_idle events.
namespace {
class ClusterOffTime : public SchedObserver {
 public:
  void on_cpu_idle(Time t, int cpu, int s) override {
    const bool was_off = state[0] >= 2 && state[1] >= 2;
    state[static_cast<size_t>(cpu)] = s;
    const bool is_off = state[0] >= 2 && state[1] >= 2;
    if (!was_off && is_off) since = t;
    if (was_off && !is_off) off += t - since;
  }
  void on_switch(Time t, int cpu, const Task& prev, TaskState prev_state, const Task& next) override {
    (void)prev, (void)prev_state;
    if (!next.is_idle_task) on_cpu_idle(t, cpu, -1);
  }
  int state[2] = {0, 0};
  Time since, off;
};
}  // namespace

// Two CPUs of `c`, each running 100 us every 20 ms (the second 5 ms
// later), under menu for 500 ms: the cluster state fits most sleeps.
static ScenarioParams two_cpus_sleeping_20ms(const ClusterParams& c) {
  ScenarioParams p = idle_scenario("menu", {c});
  p.duration = 500_ms;
  TaskSpec a = task("long", {ev_run(100_us), ev_sleep(20_ms)});
  TaskSpec b = a;
  b.name = "long2";
  b.delay = 5_ms;
  p.tasks = {pinned(a, 0), pinned(b, 1)};
  return p;
}

TEST_CASE("static power stops while the cluster is in a cluster idle state", "[energy][cpuidle]") {
  ClusterParams c = idle_cluster("c", 2, true);
  c.static_power_mw = 10.0;
  const ScenarioParams p = two_cpus_sleeping_20ms(c);
  System sys(p, 1);
  ClusterOffTime clock;
  sys.add_observer(&clock);
  sys.run();
  const RunResult r = sys.result();
  CHECK(clock.off > 300_ms);
  CHECK(clock.off <= r.cpus[0].cpuidle_residency.at(2));
  CHECK(r.clusters[0].static_energy_mj == Approx(10.0 * (r.elapsed() - clock.off).to_s()));
}

// Per-OPP WFI power: a CPU idle in state 0 draws its OPP's idle_power. The
// userspace governor holds one OPP, so the idle energy is the residency
// times that OPP's figure (governor "none": every idle moment is state 0,
// the idle task never runs outside it).
TEST_CASE("state 0 draws its OPP's idle_power", "[energy][cpuidle]") {
  ClusterParams c = cluster_1024("c", 1, {{500000, 700000, 0}, {1000000, 800000, 0}});  // 24.5 / 64 mW busy
  c.opps[0].idle_power_mw = 3.0;
  c.opps[1].idle_power_mw = 7.0;
  c.cpu_idle_states = {{"WFI", Time::zero(), 1_us, 1_us, 0.0}};
  c.cpufreq_governor = "userspace";
  ScenarioParams p = idle_scenario("none", {c});
  p.duration = 500_ms;
  p.tasks = {task("t", {ev_run(1_ms), ev_sleep(4_ms)})};
  for (const auto& [khz, wfi_mw] : {std::pair<uint64_t, double>{500000, 3.0}, {1000000, 7.0}}) {
    CAPTURE(khz);
    p.platform.clusters[0].userspace_freq_khz = khz;
    const RunResult r = run_result(p);
    const CpuMetrics& m = r.cpus[0];
    REQUIRE(m.cpuidle_residency.size() == 1);
    CHECK(m.cpuidle_residency[0] == m.idle);
    CHECK(m.idle > 300_ms);  // the task runs 1 ms in 5 (longer at 500 MHz)
    CHECK(m.idle_energy_mj == Approx(wfi_mw * m.idle.to_s()));
    CHECK(r.clusters[0].idle_power_known);  // no "no idle-state power" note under the power table
  }
}

// With bill_idle_transitions each entry into an idle state from running
// costs the state's entry latency at busy power, each return to running
// its exit latency, the rest of the residency the state's power. One CPU,
// menu, 1 ms of work every 10 ms: the 9 ms sleeps go to "off" (entry
// 50 us, exit 200 us, 2 mW), with WFI (exit 1 us) at 10 mW per OPP; busy
// power 64 mW. The same run without billing schedules identically and its
// idle energy is the residencies at the states' powers; the difference is
// the transitions, counted here from the cpu_idle events.
namespace {
// idle_cluster() with WFI at 10 mW given per OPP (state 0's own power 0)
// and its transitions billed.
ClusterParams billed_idle_cluster(int cpus, bool cluster_state) {
  ClusterParams c = idle_cluster("c", cpus, cluster_state);
  c.cpu_idle_states[0].power_mw = 0.0;
  c.opps[0].idle_power_mw = 10.0;
  c.bill_idle_transitions = true;
  return c;
}

// Entries into an idle state from running and exits back to running, per
// CPU state; a cluster state (2) counts as the deepest CPU state (1), whose
// latencies a CPU reported there bills.
class IdleTransitions : public SchedObserver {
 public:
  void on_cpu_idle(Time t, int cpu, int s) override {
    int& state = states[static_cast<size_t>(cpu)];
    const auto cpu_state = [](int x) { return static_cast<size_t>(std::min(x, 1)); };
    if (state < 0 && s >= 0) {
      ++entries[cpu_state(s)];
      entered[static_cast<size_t>(cpu)] = t;
    }
    // A state left at the instant it was entered (an interrupt pending at
    // entry) took no exit: the model never ran one.
    if (state >= 0 && s < 0) ++(t > entered[static_cast<size_t>(cpu)] ? exits : instant)[cpu_state(state)];
    state = s;
  }
  void on_switch(Time t, int cpu, const Task& prev, TaskState prev_state, const Task& next) override {
    (void)prev, (void)prev_state;
    if (!next.is_idle_task) on_cpu_idle(t, cpu, -1);
  }
  int states[2] = {0, 0};  // CPUs boot idle in state 0
  Time entered[2];
  int entries[2] = {0, 0}, exits[2] = {0, 0}, instant[2] = {0, 0};
};
}  // namespace

TEST_CASE("billed idle transitions: entry and exit latencies at busy power", "[energy][cpuidle]") {
  ScenarioParams p = idle_scenario("menu", {billed_idle_cluster(1, false)});
  p.duration = 1_s;
  p.tasks = {task("t", {ev_run(1_ms), ev_sleep(9_ms)})};
  System sys(p, 1);
  IdleTransitions n;
  sys.add_observer(&n);
  sys.run();
  const CpuMetrics billed = sys.result().cpus[0];
  REQUIRE(billed.cpuidle_residency.size() == 2);
  CHECK(n.entries[1] >= 90);  // about one "off" per 10 ms period
  CHECK(n.exits[1] + n.instant[1] >= n.entries[1] - 1);
  ScenarioParams q = p;
  q.platform.clusters[0].bill_idle_transitions = false;
  const CpuMetrics plain = run_result(q).cpus[0];
  CHECK(plain.cpuidle_residency == billed.cpuidle_residency);  // scheduling is unchanged
  CHECK(plain.busy_energy_mj == billed.busy_energy_mj);
  const double outside = (plain.cpuidle_running - plain.busy).to_s() * 64.0;  // the idle task's own runs
  CHECK(plain.idle_energy_mj ==
        Approx(outside + 10.0 * plain.cpuidle_residency[0].to_s() + 2.0 * plain.cpuidle_residency[1].to_s()));
  const double transitions = (n.entries[1] * 50e-6 + n.exits[1] * 200e-6) * (64.0 - 2.0) +
                             (n.entries[0] * 0.0 + n.exits[0] * 1e-6) * (64.0 - 10.0);
  CHECK(billed.idle_energy_mj == Approx(plain.idle_energy_mj + transitions));
  CHECK(transitions > 90 * 250e-6 * 62.0 * 0.99);
}

// The same with a cluster state: two CPUs whose 20 ms sleeps let the
// cluster power down (entry 100 us, exit 300 us, 0.5 mW, not billed: a CPU
// reported in it bills its deepest CPU state's 50 + 200 us).
TEST_CASE("billed idle transitions with a cluster state", "[energy][cpuidle]") {
  const ScenarioParams p = two_cpus_sleeping_20ms(billed_idle_cluster(2, true));
  System sys(p, 1);
  IdleTransitions n;
  sys.add_observer(&n);
  sys.run();
  const RunResult billed = sys.result();
  REQUIRE(billed.cpus[0].cpuidle_residency.size() == 3);
  CHECK(billed.cpus[0].cpuidle_residency[2] > 300_ms);  // the cluster state is used
  ScenarioParams q = p;
  q.platform.clusters[0].bill_idle_transitions = false;
  const RunResult plain = run_result(q);
  double extra = 0;
  for (size_t cpu = 0; cpu < 2; ++cpu) {
    CHECK(plain.cpus[cpu].cpuidle_residency == billed.cpus[cpu].cpuidle_residency);
    extra += billed.cpus[cpu].idle_energy_mj - plain.cpus[cpu].idle_energy_mj;
  }
  // Deep entries and exits at busy minus the state's power: a CPU state 1
  // (2 mW) for most, the cluster state (0.5 mW) for the last CPU down and
  // the first up. Bounds from those two powers, exact counts from events.
  const double deep = n.entries[1] * 50e-6 + n.exits[1] * 200e-6;
  const double wfi = n.exits[0] * 1e-6 * (64.0 - 10.0);
  CHECK(n.entries[1] > 20);
  CHECK(extra >= deep * (64.0 - 2.0) + wfi - 1e-9);
  CHECK(extra <= deep * (64.0 - 0.5) + wfi + 1e-9);
  CHECK(billed.clusters[0].static_energy_mj == plain.clusters[0].static_energy_mj);
}
