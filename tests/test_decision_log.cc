// The decision log (--log debug): each scheduling decision says why, in
// the terms of the kernel function that took it. Expected lines are worked
// out beside each check; the log never changes what is simulated.
#include <catch2/catch.hpp>

#include <spdlog/sinks/ostream_sink.h>

#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "experiments/lib/report_json.h"
#include "experiments/lib/report_table.h"
#include "experiments/lib/runner.h"
#include "sched_test_util.h"
#include "sim/log.h"

using namespace schedlab;
using namespace schedlab::testing;

namespace {

// Runs `body` with the simulator log at debug into a string; the logger's
// sinks and level are restored afterwards.
std::string capture_debug_log(const std::function<void()>& body) {
  std::ostringstream out;
  auto& logger = sim_log();
  const std::vector<spdlog::sink_ptr> saved = logger.sinks();
  const std::string saved_level(spdlog::level::to_string_view(logger.level()).data());
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_st>(out);
  sink->set_pattern("%v");
  logger.sinks() = {sink};
  set_log_level("debug");
  auto restore = [&] {
    logger.sinks() = saved;
    set_log_level(saved_level);
  };
  try {
    body();
  } catch (...) {
    restore();
    throw;
  }
  restore();
  return out.str();
}

// One run of `p` (seed 1) with the debug log, as lines.
std::vector<std::string> decision_log(const ScenarioParams& p) {
  const std::string text = capture_debug_log([&] {
    System sys(p, 1);
    sys.run();
  });
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The lines containing `needle`.
std::vector<std::string> grep(const std::vector<std::string>& lines, const std::string& needle) {
  std::vector<std::string> out;
  for (const auto& l : lines)
    if (l.find(needle) != std::string::npos) out.push_back(l);
  return out;
}

}  // namespace

TEST_CASE("decision log: EEVDF ticks and picks say why", "[log][eevdf]") {
  // One CPU, HZ=1000, base slice 0.75 ms (1 + ilog2(1) = 1). Two new nice 0
  // tasks start at V with deadline V + slice/2 (PLACE_DEADLINE_INITIAL):
  // lag 0, deadline +375 us; a is first in the tree. At the 1 ms tick a has
  // run 1000 us of virtual time, past its deadline: a new one at
  // 1000 + 750; V = (1000 + 0) / 2 = 500, so a's lag is -500 and its
  // deadline +1250, b's lag +500 and deadline 375 - 500 = -125.
  ScenarioParams p = exact_scenario("6.12", 1000);
  p.duration = 2500_us;
  p.tasks = {hog("a"), hog("b")};
  const auto lines = decision_log(p);
  const auto picks = grep(lines, "pick_eevdf");
  REQUIRE(picks.size() >= 2);
  CHECK(picks[0] ==
        "0.000000 cpu0 pick_eevdf -> a-1: the earliest deadline among the waiting entities, and eligible "
        "[vs V, virtual us: a-1 lag +0.0 dl +375.0, b-2 lag +0.0 dl +375.0]");
  CHECK(picks[1] ==
        "0.001000 cpu0 pick_eevdf -> b-2: the earliest deadline among the waiting entities, and eligible "
        "[vs V, virtual us: a-1 (curr) lag -500.0 dl +1250.0 ineligible, b-2 lag +500.0 dl -125.0]");
  const auto ticks = grep(lines, "tick:");
  REQUIRE(!ticks.empty());
  CHECK(ticks[0] ==
        "0.001000 cpu0 tick: a-1 must reschedule: eevdf: slice used (vruntime reached the deadline: a new one, "
        "vd = v + r/w)");
}

TEST_CASE("decision log: EEVDF says why a wakee preempts", "[log][eevdf]") {
  // h hogs the CPU; w runs 100 us every 2 ms sleep. At 1 ms h's slice is
  // used (as above) and w runs 1.0-1.1 ms; it sleeps with V = (1000 + 100)
  // / 2 = 550, lag 450. h then runs alone: its vruntime is 3000 at 3.1 ms
  // and its deadline 3650 (new slices at 2 and 3 ms). w wakes at 3.1 ms:
  // place_entity() inflates the lag by (W + w) / W = 2 to 900, so
  // v = 3000 - 900 = 2100, deadline 2100 + 750 = 2850; V = 2550. h's lag
  // is -450 (ineligible) and its deadline +1100; w's lag +450, deadline
  // +300: pick_eevdf() takes w, so w preempts.
  ScenarioParams p = exact_scenario("6.12", 1000);
  p.duration = 3200_us;
  p.tasks = {hog("h"), task("w", {ev_run(100_us), ev_sleep(2_ms)})};
  const auto lines = decision_log(p);
  const auto wake = grep(lines, "0.003100 cpu0 wakeup_preempt");
  REQUIRE(wake.size() == 2);
  CHECK(wake[0] ==
        "0.003100 cpu0 wakeup_preempt: pick_eevdf -> w-2: the earliest deadline among the waiting entities, and eligible "
        "[vs V, virtual us: h-1 (curr) lag -450.0 dl +1100.0 ineligible, w-2 lag +450.0 dl +300.0]");
  CHECK(wake[1] ==
        "0.003100 cpu0 wakeup_preempt w-2 (prio 120) vs curr h-1 (prio 120): preempt "
        "(eevdf: the wakee is pick_eevdf()'s choice)");
}

TEST_CASE("decision log: RT push, RT placement and the RR slice", "[log][rt]") {
  SECTION("a FIFO task that cannot preempt is pushed, then stays where it runs") {
    // Both start on CPU 0; t1 (FIFO 20, pinned there) runs, so t2 (FIFO 10)
    // is pushed to CPU 1, idle. Its later wake-ups find CPU 1 without RT
    // work: select_task_rq_rt() keeps it there.
    ScenarioParams p = exact_scenario("6.12", 1000, 2);
    p.duration = 3_ms;
    TaskSpec t1 = hog("t1", Policy::kFifo, 20);
    t1.cpus = {0};
    p.tasks = {t1, task("t2", {ev_run(1_ms), ev_sleep(1_ms)}, Policy::kFifo, 10)};
    const auto lines = decision_log(p);
    CHECK(grep(lines, "push_rt_task") ==
          std::vector<std::string>{"0.000000 cpu0 push_rt_task: t2-2 (prio 89) -> cpu1, which runs a lower priority"});
    CHECK(grep(lines, "ttwu t2-2") ==
          std::vector<std::string>{"0.002000 ttwu t2-2 by irq: cpu1 -> cpu1 (rt: prev runs no pinned RT task nor "
                                   "one of equal or higher priority, and fits: stays)"});
  }
  SECTION("SCHED_RR: the 100 ms slice, then the tail of the list") {
    // RR_TIMESLICE is 100 ms: 100 ticks at HZ=1000, the last at 100 ms.
    ScenarioParams p = exact_scenario("6.12", 1000);
    p.duration = 150_ms;
    p.tasks = {hog("a", Policy::kRr, 10), hog("b", Policy::kRr, 10)};
    const auto ticks = grep(decision_log(p), "tick:");
    REQUIRE(!ticks.empty());
    CHECK(ticks[0] == "0.100000 cpu0 tick: a-1 must reschedule: SCHED_RR timeslice used: to the tail behind an "
                      "equal priority");
  }
}

TEST_CASE("decision log: the idle governor says which state and why", "[log][cpuidle]") {
  // One CPU with WFI (target residency 1 us) and a CPU-off state (entry
  // 50 us + exit 200 us, target residency 1 ms), teo, HZ=250 (4 ms tick).
  ScenarioParams p = exact_scenario("6.12", 250);
  p.platform.name = "idle-toy";
  ClusterParams c = cluster_1024("toy", 1, {{1000000, 800000, 0}});
  c.cpu_idle_states = {{"WFI", Time::zero(), 1_us, 1_us, 10.0}, {"off", 50_us, 200_us, 1_ms, 2.0}};
  p.platform.clusters = {c};
  p.platform.cpus = 1;
  p.kernel.cpuidle_governor = "teo";
  p.kernel.cpuidle_governor_cost = Time::zero();
  p.kernel.cpuidle_sleep_length_cost = Time::zero();
  p.duration = 400_ms;
  // 100 us of work, a 500 us sleep (the off state cannot pay off), 100 us,
  // a 20 ms sleep.
  p.tasks = {task("s", {ev_run(100_us), ev_sleep(500_us), ev_run(10_us), ev_sleep(20_ms)})};
  const auto idle = grep(decision_log(p), "cpu0 idle");
  REQUIRE(idle.size() > 4);
  // The first sleep: the timer 500 us away is before state 1's target
  // residency; a polling-free state 0 under a tick keeps the tick (v6.5
  // teo). A new task's util (half the CPU) makes the CPU "utilized".
  CHECK(idle[0] ==
        "0.000100 cpu0 idle: teo -> state 0 WFI (target residency 1.0 us, exit latency 1.0 us), tick kept: "
        "the next timer comes before state 1's target residency [expected idle 500.0 us, next timer 500.0 us, "
        "CPU utilized]");
  // Woken by the timer at 600 us, running after WFI's 1 us exit latency:
  // 501 us from entry (dev->last_residency_ns includes the exit).
  CHECK(idle[1] == "0.000601 cpu0 idle exit: 501.0 us in state 0 WFI (target residency 1.0 us)");
  // After 10 us of work (601-611 us), the 20 ms sleep while the new
  // task's util still counts: teo v6.5 with two states takes the
  // shallowest non-polling one and stops the tick. The next timer is the
  // fair server's zero-lag time (6.12 task_non_contending()): its period
  // began at 0 (deadline 1 s) and its budget lost 100 + 10 us of fair time
  // and 500 + 1 us of idle time, 49.389 ms left: 1 s - 20 x 49.389 ms =
  // 12.22 ms, 11.609 ms from 611 us (before the 20 ms sleep's timer).
  CHECK(idle[2] ==
        "0.000611 cpu0 idle: teo -> state 0 WFI (target residency 1.0 us, exit latency 1.0 us), tick stopped: "
        "the CPU is utilized: a shallow state [expected idle 11609.0 us, next timer 11609.0 us, "
        "CPU utilized]");
  // 400 ms later the util has decayed (10 us per 20 ms): the sleep length
  // picks the off state, and its past wake-ups (20 ms in state 0, counted
  // as hits of the off state's bin) agree.
  const std::string& last = idle.back();
  INFO(last);
  CHECK(last.find("idle: teo -> state 1 off (target residency 1000.0 us, exit latency 250.0 us), tick stopped: "
                  "the deepest state the sleep length allows (hits outweigh intercepts) [expected idle 20000.0 us, "
                  "next timer 20000.0 us]") != std::string::npos);
}

TEST_CASE("decision log: logging changes nothing simulated", "[log]") {
  // A big.LITTLE run with EAS, balancing, RT and cpuidle, with and without
  // the debug log: the same JSON report, for each kernel version's fair
  // class (6.1 CFS, EEVDF, 6.18's slice protection) and each governor.
  const auto [version, governor] = GENERATE(table<std::string, std::string>(
      {{"6.1", "menu"}, {"6.6", "teo"}, {"6.12", "teo_tick"}, {"6.18", "teo_tick_rfc"}}));
  INFO(version << " " << governor);
  const ScenarioParams p = gs101_scenario(R"(
duration: 300ms
kernel: {version: ")" + version + R"(", hz: 250, cpuidle: {governor: )" + governor + R"(}}
tasks:
  - {name: ui, nice: -10, events: [{run: 2ms}, {timer: {ref: v, period: 8333us}}]}
  - {name: sf, policy: SCHED_FIFO, priority: 2, events: [{run: 1ms}, {timer: {ref: s, period: 8333us}}]}
  - {name: bg, instances: 10, nice: 10, events: [{run: 5ms}, {sleep: 7ms}]}
  - {name: hog, nice: 19, events: [{run: 1s}]}
)");
  RunOptions o;
  o.runs = 2;
  const std::string quiet = render_json(run_scenario(p, o));
  std::string logged;
  const std::string lines = capture_debug_log([&] { logged = render_json(run_scenario(p, o)); });
  CHECK(lines.find("idle: " + governor + " -> state") != std::string::npos);
  CHECK(lines.find(version == "6.1" ? "pick_next_entity ->" : "pick_eevdf ->") != std::string::npos);
  CHECK(logged == quiet);
}

TEST_CASE("decision log: schedutil says which CPU and what util set the frequency", "[log][cpufreq]") {
  // gs101: one task pinned to little CPU 0 (capacity 160, f_max 1803 MHz).
  // A new task's util is half the CPU's spare capacity
  // (post_init_entity_util_avg()): 80; sugov_effective_cpu_perf() adds
  // 25%: 100. 100 / 160 x 1803000 = 1126875 kHz; the lowest little OPP at
  // or above it is 1197 MHz (gs101.yaml).
  const ScenarioParams p = gs101_scenario(R"(
duration: 20ms
kernel: {version: "6.12", hz: 250}
tasks:
  - {name: t, cpus: [0], events: [{run: 1ms}, {sleep: 9ms}]}
)");
  const auto lines = grep(decision_log(p), "schedutil little");
  REQUIRE(!lines.empty());
  CHECK(lines[0] ==
        "0.000000 schedutil little: cpu0 asks the most, util + 25% headroom = 100 of capacity 160; x f_ref / "
        "capacity = 1126875 kHz -> the lowest OPP at or above: 1197000 kHz");
}

TEST_CASE("decision log: sched_pixel says which CPU, what util and which margin set the frequency", "[log][cpufreq][sched_pixel]") {
  // The same start as the schedutil case above, under sched_pixel: util 80
  // of 160; (1803000 x 1280 >> 10) = 2253750, x 80 / 160 = 1126875 kHz ->
  // 1197 MHz.
  ScenarioParams p = gs101_scenario(R"(
duration: 20ms
kernel: {version: "6.1", hz: 250}
tasks:
  - {name: t, cpus: [0], events: [{run: 1ms}, {sleep: 9ms}]}
)");
  for (ClusterParams& c : p.platform.clusters) {
    c.cpufreq_governor = "sched_pixel";
    c.up_rate_limit = 500_us;
    c.down_rate_limit = 5_ms;
  }
  const auto lines = grep(decision_log(p), "sched_pixel little");
  REQUIRE(!lines.empty());
  CHECK(lines[0] ==
        "0.000000 sched_pixel little: cpu0 asks the most, util 80 of capacity 160 (clamped by uclamp if used); x "
        "util_threshold / 1024 x f_max / capacity = 1126875 kHz -> the lowest OPP at or above: 1197000 kHz (up after "
        "500 us, down after 5000 us x (f_new/f_old)^1 since the last change)");
}

TEST_CASE("run --why counts each decision by kind, group and reason", "[log][why]") {
  // configs/scenarios/eevdf_wakeup.yaml for 10 ms: the sleeper (300 us of
  // work, 2 ms sleeps; first on the CPU at 1 ms) wakes at 3.3, 5.6 and
  // 7.9 ms, on the only CPU, and preempts the hog each time (it comes back
  // with positive lag and the earlier deadline, as the decision-log test
  // above works out). The hog's slice runs out with company at the 1 ms
  // tick and at 9 ms: the sleeper blocked at 8.2 ms with negative lag and
  // is still queued (DELAY_DEQUEUE); at the other ticks the hog is alone
  // and update_curr() asks for no pick.
  ScenarioParams p = load_scenario_file(std::string(SCHEDLAB_SOURCE_DIR) + "/configs/scenarios/eevdf_wakeup.yaml");
  RunOptions o;
  o.duration = 10_ms;
  o.why = true;
  const RunSet set = run_scenario(p, o);
  REQUIRE(set.runs.size() == 1);
  auto count = [&](const std::string& kind, const std::string& group, const std::string& reason) -> uint64_t {
    for (const DecisionCount& d : set.runs[0].decisions)
      if (d.kind == kind && d.group == group && d.reason == reason) return d.count;
    return 0;
  };
  CHECK(count("placement", "sleeper", "allowed on one CPU") == 3);
  CHECK(count("preemption check", "sleeper", "eevdf: the wakee is pick_eevdf()'s choice") == 3);
  CHECK(count("tick", "hog", "eevdf: slice used (vruntime reached the deadline: a new one, vd = v + r/w)") == 2);
  // The 9 ms pick meets the delayed sleeper first: dequeued for good.
  CHECK(count("pick", "sleeper", "a delayed entity (DELAY_DEQUEUE) came up: dequeued for good, pick again") == 1);
  for (const DecisionCount& d : set.runs[0].decisions) CHECK(d.kind != "idle state");  // no cpuidle here
  const std::string table = render_decision_table(set);
  CHECK_THAT(table, Catch::StartsWith("why: the kernel's decisions in the measured window, by reason\n"));
  CHECK_THAT(table, Catch::Contains("sleeper  eevdf: the wakee is pick_eevdf()'s choice"));
  // Its start (forked onto the idle CPU with the hog) is checked too.
  CHECK(count("preemption check", "sleeper", "the CPU was idle") == 1);
  // Not asked for: nothing counted, no table.
  o.why = false;
  const RunSet quiet = run_scenario(p, o);
  CHECK(quiet.runs[0].decisions.empty());
  CHECK(render_decision_table(quiet).empty());
}

// When the performance floor, not util + 25%, decides schedutil's request,
// the log says so and names the floor: on gs101's little CPUs (capacity
// 160, f_max 1803 MHz) the 6.12 fair server's cpu_bw_dl() of 51 asks for
// 1803000 x 51 / 160 = 574706 kHz, so the 738 MHz OPP.
TEST_CASE("decision log: schedutil names the fair server's bandwidth floor", "[log][cpufreq][fair_server]") {
  const ScenarioParams p = gs101_scenario(R"(
duration: 1s
kernel: {version: "6.12", hz: 250}
tasks:
  - {name: t, cpus: [0], events: [{run: 50us}, {sleep: 10ms}]}
)");
  const auto lines = grep(decision_log(p), "its floor");
  REQUIRE_FALSE(lines.empty());
  CHECK_THAT(lines[0], Catch::EndsWith("schedutil little: cpu0 asks the most, its floor 51 of capacity 160 (the fair "
                                       "server's DL bandwidth, cpu_bw_dl()); x f_ref / capacity = 574706 kHz -> the "
                                       "lowest OPP at or above: 738000 kHz"));
}

// A sleep run early inside its slack window says by which interrupt (the
// schedules are test_timer_slack.cc's: window [980, 1030] us with the tick
// at 1000 us; a's expiry at 1050 us running b's [1020, 1070] window).
TEST_CASE("decision log: a sleep run inside its slack says which interrupt ran it", "[log][hrtimer]") {
  ScenarioParams p = exact_scenario("6.12", 1000);
  p.kernel.timer_slack = 50_us;
  p.duration = 5_ms;
  TaskSpec s = task("s", {ev_sleep(980_us), ev_run(100_us)});
  s.loop = s.phases[0].loop = 1;  // one sleep
  p.tasks = {s, hog("hog")};
  std::vector<std::string> lines = grep(decision_log(p), "hrtimer:");
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] ==
        "0.001000 cpu0 hrtimer: s's timer (soft expiry 0.000980) runs in the tick's interrupt, 30 us before its "
        "hard expiry 0.001030");

  p.kernel.hz = 100;
  TaskSpec a = task("a", {ev_sleep(1000_us), ev_run(100_us)});
  TaskSpec b = task("b", {ev_sleep(1020_us), ev_run(100_us)});
  a.loop = b.loop = a.phases[0].loop = b.phases[0].loop = 1;
  p.tasks = {a, b};
  lines = grep(decision_log(p), "hrtimer:");
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] ==
        "0.001050 cpu0 hrtimer: b's timer (soft expiry 0.001020) runs in another hrtimer's interrupt, 20 us before "
        "its hard expiry 0.001070");
}

// wake_affine_idle()'s sync rule: a WF_SYNC wake-up (a binder call's) goes
// to the waker's CPU when the waker is alone there, whatever the loads.
// Two CPUs, no overheads: the pool thread waits on CPU 1 from 0; H hogs
// CPU 1 from 100 us; D and then C (both on CPU 0) start at 200 us. D runs
// 1.8 ms and sleeps with lag -0.9 ms: ineligible, so it stays queued
// (DELAY_DEQUEUE) when C calls at 2 ms. 6.12 counts D in CPU 0's
// nr_running (2), so WA_WEIGHT decides (and keeps the thread on CPU 1);
// 6.18.35 leaves delayed tasks out of the count (1). Without D, C starts
// at 2 ms and 6.12 takes the rule too.
TEST_CASE("decision log: a sync wake-up goes to the waker's CPU when the waker is alone, and 6.18 skips delayed tasks",
          "[log][smp]") {
  auto wake_affine_line = [](const std::string& version, bool delayed_neighbour) {
    const std::string yaml = "kernel: {version: \"" + version +
                             "\", hz: 1000, base_slice: 3ms,"
                             " overheads: {context_switch: 0us, wakeup: 0us, ipi: 0us}}\n"
                             "platform: {cpus: 2}\nduration: 6ms\nbinder_procs:\n  - {name: svc, threads: 1}\n"
                             "tasks:\n  - {name: H, cpus: [1], delay: 100us, events: [{run: 1000s}]}\n" +
                             (delayed_neighbour
                                  ? "  - {name: D, cpus: [0], delay: 200us, events: [{run: 1800us}, {sleep: 1s}]}\n"
                                  : "") +
                             "  - {name: C, cpus: [0], delay: " + (delayed_neighbour ? "200us" : "2ms") +
                             ", events: [{binder_call: {proc: svc, work: 300us}}, {sleep: 1s}]}\n";
    const auto lines = grep(decision_log(load_scenario_yaml(yaml, "wake_affine_sync.yaml")), "wake_affine");
    REQUIRE(lines.size() == 1);
    return lines[0];
  };
  const std::string sync_rule =
      "this cpu0, prev cpu1 -> target cpu0 (WA_IDLE: a sync wake-up, the waker alone on this CPU)";
  CHECK(wake_affine_line("6.12", true) ==
        "0.002000 wake_affine binder:svc_1-4: this cpu0, prev cpu1 -> target cpu1 (WA_WEIGHT: the loads with the "
        "task moved)");
  CHECK(wake_affine_line("6.18", true) == "0.002000 wake_affine binder:svc_1-4: " + sync_rule);
  CHECK(wake_affine_line("6.12", false) == "0.002000 wake_affine binder:svc_1-3: " + sync_rule);
  CHECK(wake_affine_line("6.18", false) == "0.002000 wake_affine binder:svc_1-3: " + sync_rule);
}

// balance_fair(): 6.12 and 6.18 ask sched_fair_runnable() (fair entities
// queued), 6.1 and 6.6 rq->nr_running. A waker on cpu1 queues the FIFO R
// on cpu0 at 2 ms; its resched IPI takes 10 us, and the fair A blocks at
// 2.005 ms first: with only R queued, 6.12 and 6.18 still run the newly
// idle pass (6.18's NI_RANDOM throw skips its domain), 6.6 does not. (On
// 6.1, CFS runs the hogs on another grid and R is woken after A blocks.)
TEST_CASE("decision log: a fair task leaving only an RT task queued balances as newly idle on 6.12+", "[log][smp]") {
  auto newidle_at_block = [](const std::string& version) {
    const std::string yaml = "kernel: {version: \"" + version +
                             "\", hz: 1000, overheads: {context_switch: 0us, wakeup: 0us, ipi: 10us}}\n"
                             "platform: {cpus: 2}\nduration: 5ms\ntasks:\n"
                             "  - {name: H1, cpus: [1], events: [{run: 1000s}]}\n"
                             "  - {name: H2, cpus: [1], events: [{run: 1000s}]}\n"
                             "  - {name: A, cpus: [0], events: [{run: 2005us}, {sleep: 1s}]}\n"
                             "  - {name: R, cpus: [0], policy: SCHED_FIFO, priority: 5, events: [{suspend: {}}, "
                             "{run: 100us}]}\n"
                             "  - {name: W, cpus: [1], policy: SCHED_FIFO, priority: 10, delay: 2ms, events: "
                             "[{resume: R}, {sleep: 1s}]}\n";
    const auto lines = grep(decision_log(load_scenario_yaml(yaml, "balance_fair.yaml")), "0.002005");
    REQUIRE(grep(lines, "cpu0 schedule: A-3 -> R-4").size() == 1);
    std::vector<std::string> newidle;
    for (const auto& l : lines)
      if (l.find("newly idle") != std::string::npos || l.find("newidle balance cpu0") != std::string::npos)
        newidle.push_back(l);
    return newidle;
  };
  CHECK(newidle_at_block("6.6").empty());
  const auto v612 = newidle_at_block("6.12");
  REQUIRE(v612.size() == 1);
  CHECK(v612[0].find("balance cpu0 (newly idle): nothing moved, no imbalance") != std::string::npos);
  const auto v618 = newidle_at_block("6.18");
  REQUIRE(v618.size() == 1);
  CHECK(v618[0].find("skipped: NI_RANDOM") != std::string::npos);
}

// sched_balance_trigger() (6.12): the tick raises the balance softirq and
// then calls nohz_balancer_kick(); the softirq's pass runs at the
// interrupt's exit. So at a tick that does both, the kick is decided on the
// run-queue as it was before this CPU's own balance. Two hogs pinned to
// cpu0 of 4 (HZ 250): cpu0 kicks at jiffies 1, 3, 7, 15, 31 (the idle
// CPUs find every task pinned and double their interval from 1 jiffy, and
// nohz.next_balance follows them); its own busy balance is first due at
// jiffy 15 (4 ms x busy factor 16 = 16 jiffies, one less when busy): both
// at jiffy 15, 60 ms.
TEST_CASE("decision log: a tick decides the nohz kick before its own periodic balance runs", "[log][nohz]") {
  const std::string yaml =
      "kernel: {version: \"6.12\", hz: 250}\nplatform: {cpus: 4}\nduration: 100ms\ntasks:\n"
      "  - {name: a, cpus: [0], events: [{run: 1000s}]}\n"
      "  - {name: b, cpus: [0], events: [{run: 1000s}]}\n";
  const auto lines = grep(decision_log(load_scenario_yaml(yaml, "kick_order.yaml")), "0.060000");
  std::vector<std::string> cpu0_balancing;
  for (const auto& l : lines)
    if (l.find("cpu0 tick: nohz kick") != std::string::npos || l.find("balance cpu0 (busy)") != std::string::npos)
      cpu0_balancing.push_back(l);
  REQUIRE(cpu0_balancing.size() == 2);
  CHECK(cpu0_balancing[0] == "0.060000 cpu0 tick: nohz kick to cpu1: balance stats");
  CHECK(cpu0_balancing[1] == "0.060000 balance cpu0 (busy): nothing moved, no CPU with a task to pull");
}
