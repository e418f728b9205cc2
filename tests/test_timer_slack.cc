// Timer slack on sleeps: hrtimer_nanosleep() (6.12 kernel/time/hrtimer.c)
// queues a range hrtimer [t, t + current->timer_slack_ns] on the sleeper's
// CPU. It is programmed for the window's end, and any hrtimer interrupt of
// that CPU inside the window -- the tick, another timer's expiry --
// runs it then (__hrtimer_run_queues() compares the soft expiry). RT
// tasks have no slack (__setscheduler_params()); prctl(PR_SET_TIMERSLACK)
// sets a fair task's. One CPU, no overheads: every time is by hand.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "experiment_test_util.h"
#include "sched_test_util.h"

using namespace schedlab;
using namespace schedlab::testing;

namespace {

// The first time each task was woken.
class FirstWake : public SchedObserver {
 public:
  void on_waking(Time t, const Task& p, const Task*, int) override { at.try_emplace(p.comm, t); }
  Time of(const std::string& comm) const {
    auto it = at.find(comm);
    return it == at.end() ? Time::max() : it->second;
  }
  std::map<std::string, Time> at;
};

// The head of a YAML scenario on 6.12: HZ, duration, platform ("{cpus: N}"
// or a platform file's name) and a cpuidle governor if given; tasks follow.
std::string yaml_head(int hz, const std::string& duration, const std::string& platform,
                      const std::string& governor = "") {
  const std::string idle = governor.empty() ? "" : ", cpuidle: {governor: " + governor + "}";
  return "kernel: {version: \"6.12\", hz: " + std::to_string(hz) + idle + "}\nduration: " + duration +
         "\nplatform: " + platform + "\ntasks:\n";
}

// Every wake-up's task in order (try_to_wake_up(): sleep wake-ups; a
// task's start is not one).
class WakeOrder : public SchedObserver {
 public:
  void on_waking(Time, const Task& p, const Task*, int) override { comms.push_back(p.comm); }
  std::vector<std::string> comms;
};

// A YAML scenario run to its end with its work items and first wake-ups
// recorded.
struct Watched {
  WorkLog work;
  FirstWake wake;
};
Watched run_watched(const std::string& yaml) {
  ScenarioParams p = load_scenario_yaml(yaml, "slack_test.yaml");
  with_fast_switch(p);
  System sys(p, 1);
  Watched w;
  sys.add_observer(&w.work);
  sys.add_observer(&w.wake);
  sys.run();
  return w;
}

// run --why's "timer slack" counts of a YAML scenario, as "group: reason".
std::map<std::string, uint64_t> timer_slack_reasons(const std::string& yaml) {
  System sys(load_scenario_yaml(yaml, "why.yaml"), 1);
  sys.count_decisions();
  sys.run();
  std::map<std::string, uint64_t> out;
  for (const DecisionCount& d : sys.result().decisions)
    if (d.kind == "timer slack") out[d.group + ": " + d.reason] += d.count;
  return out;
}

ScenarioParams slack_scenario(int hz, Time slack) {
  ScenarioParams p = exact_scenario("6.12", hz);
  p.kernel.timer_slack = slack;
  p.duration = 100_ms;
  return p;
}

TaskSpec sleeper(const std::string& name, Time sleep, Policy policy = Policy::kNormal, int prio = 0) {
  TaskSpec t = task(name, {ev_sleep(sleep), ev_run(100_us)}, policy, prio);
  t.loop = 1;
  t.phases[0].loop = 1;
  return t;
}

}  // namespace

// HZ=1000: ticks at every whole millisecond. The window is [980, 1030] us.
// With a hog the CPU keeps its tick, and the tick at 1000 us runs the
// soft-expired timer; alone, the CPU idles with its tick stopped and the
// timer fires at the window's end. (The model used to wake it at 1030 us
// in both.)
TEST_CASE("a fair sleep ends at the first tick inside its slack window", "[hrtimer][slack]") {
  for (const bool busy : {true, false}) {
    CAPTURE(busy);
    ScenarioParams p = slack_scenario(1000, 50_us);
    p.tasks = {sleeper("s", 980_us)};
    if (busy) p.tasks.push_back(hog("hog"));
    const FirstWake w = run_logged<FirstWake>(p);
    CHECK(w.of("s") == (busy ? 1000_us : 1030_us));
  }
}

// HZ=100: no tick before 10 ms. a's window is [1000, 1050] us, b's [1020,
// 1070] us: a's timer fires at 1050 us, and its interrupt runs b's,
// soft-expired since 1020 us. An RT sleeper (no slack) fires at 1010 us and
// takes c's [1000, 1050] window with it. (The model used to wake b at
// 1070 us and c at 1050 us.)
TEST_CASE("another timer's interrupt on the CPU runs a soft-expired sleep", "[hrtimer][slack]") {
  ScenarioParams p = slack_scenario(100, 50_us);
  p.tasks = {sleeper("a", 1000_us), sleeper("b", 1020_us)};
  FirstWake w = run_logged<FirstWake>(p);
  CHECK(w.of("a") == 1050_us);
  CHECK(w.of("b") == 1050_us);

  p.tasks = {sleeper("c", 1000_us), sleeper("fifo", 1010_us, Policy::kFifo, 10)};
  w = run_logged<FirstWake>(p);
  CHECK(w.of("fifo") == 1010_us);
  CHECK(w.of("c") == 1010_us);
}

// Android's task profiles give background threads 40 ms of slack
// (TimerSlackHigh, written to /proc/PID/timerslack_ns). A 10 ms sleep's
// window is [10, 50] ms: alone on an idle CPU (tick stopped) nothing
// interrupts it before 50 ms. On a busy CPU (HZ=250) each tick re-queues
// itself a jiffy on, ahead of the sleep's hard expiry, and
// __hrtimer_run_queues() stops its walk at the tick: the sleep ends at the
// last tick whose next one is past 50 ms, 48 ms. (The model used to end
// it at the first tick in the window, 12 ms.)
TEST_CASE("a task's own timer slack widens its window", "[hrtimer][slack][config]") {
  for (const bool busy : {false, true}) {
    CAPTURE(busy);
    std::string yaml =
        yaml_head(250, "100ms", "{cpus: 1}") +
        "  - {name: bg, timer_slack: 40ms, loop: 1, events: [{sleep: 10ms}, {run: 100us}]}\n";
    if (busy) yaml += "  - {name: hog, events: [{run: 1s}]}\n";
    const Watched w = run_watched(yaml);
    CHECK(w.wake.of("bg") == (busy ? 48_ms : 50_ms));
  }
}

// The walk is in hard-expiry order and stops at the first timer whose soft
// expiry has not come. HZ=100, no tick before 10 ms, the CPU idle with its
// tick stopped. s's window is [1000, 1100] us; a FIFO sleeper's timer (no
// slack) fires at 1010 us. Alone, it runs s then. With a fair sleeper n
// whose 10 us window [1020, 1030] us ends first, the walk stops at n (not
// yet soft-expired): s waits for n's expiry at 1030 us, which runs both.
// (The model used to run s at 1010 us in both.)
TEST_CASE("a timer not yet soft-expired stops the walk ahead of a later hard expiry", "[hrtimer][slack]") {
  for (const bool narrow : {false, true}) {
    CAPTURE(narrow);
    std::string yaml =
        yaml_head(100, "30ms", "{cpus: 1}") +
        "  - {name: s, timer_slack: 100us, loop: 1, events: [{sleep: 1000us}, {run: 10us}]}\n"
        "  - {name: fifo, policy: SCHED_FIFO, priority: 10, loop: 1, events: [{sleep: 1010us}, {run: 10us}]}\n";
    if (narrow) yaml += "  - {name: n, timer_slack: 10us, loop: 1, events: [{sleep: 1020us}, {run: 10us}]}\n";
    const Watched w = run_watched(yaml);
    CHECK(w.wake.of("fifo") == 1010_us);
    CHECK(w.wake.of("s") == (narrow ? 1030_us : 1010_us));
    if (narrow) CHECK(w.wake.of("n") == 1030_us);
  }
}

// Timers run early together run in hard-expiry order, as the walk visits
// them: a's window [1000, 1070] us, b's [1010, 1040] us; the FIFO timer at
// 1020 us runs b, then a. (The model used to run them in the order they
// were queued: a first.)
TEST_CASE("soft-expired timers run in hard-expiry order", "[hrtimer][slack]") {
  const std::string yaml =
      yaml_head(100, "30ms", "{cpus: 4}") +
      "  - {name: a, timer_slack: 70us, cpus: [0], loop: 1, events: [{sleep: 1000us}, {run: 10us}]}\n"
      "  - {name: b, timer_slack: 30us, cpus: [0], loop: 1, events: [{sleep: 1010us}, {run: 10us}]}\n"
      "  - {name: fifo, policy: SCHED_FIFO, priority: 10, cpus: [0], loop: 1, events: [{sleep: 1020us}, "
      "{run: 10us}]}\n";
  System sys(load_scenario_yaml(yaml, "order.yaml"), 1);
  WakeOrder order;
  sys.add_observer(&order);
  sys.run();
  CHECK(order.comms == std::vector<std::string>{"fifo", "b", "a"});
}

// A CPU's plain (slackless) hrtimers are on its base and stop the walk
// like any pending timer, with cpuidle on or off. s's window is [1000,
// 1100] us (HZ=100, the tick stopped: no tick before 10 ms): the FIFO
// timer at 1010 us runs s with it (with cpuidle, gs101's CPU 0 under menu,
// once out of WFI); with a second FIFO timer at 1050 us queued, s waits
// for that one. (The model used to run s at the first timer's interrupt
// in both cases; 7c2caa7 stopped the walk with cpuidle on only.)
TEST_CASE("a plain hrtimer pending inside the window stops the walk", "[hrtimer][slack][cpuidle]") {
  for (const bool cpuidle : {false, true}) {
    for (const bool second : {false, true}) {
      CAPTURE(cpuidle, second);
      const std::string pin = cpuidle ? "cpus: [0], " : "";
      std::string yaml = (cpuidle ? yaml_head(100, "30ms", "gs101", "menu") : yaml_head(100, "30ms", "{cpus: 1}")) +
                         "  - {name: s, timer_slack: 100us, " + pin +
                         "loop: 1, events: [{sleep: 1000us}, {run: 10us}]}\n"
                         "  - {name: f1, policy: SCHED_FIFO, priority: 10, " + pin +
                         "loop: 1, events: [{sleep: 1010us}, {run: 10us}]}\n";
      if (second)
        yaml += "  - {name: f2, policy: SCHED_FIFO, priority: 10, " + pin +
                "loop: 1, events: [{sleep: 1050us}, {run: 10us}]}\n";
      const Watched w = run_watched(yaml);
      CHECK(w.wake.of("f1") < 1050_us);
      CHECK(w.wake.of("s") == (second ? 1050_us : w.wake.of("f1")));
      if (second) CHECK(w.wake.of("f2") == 1050_us);
    }
  }
}

// p->timer_slack_ns follows the policy (6.12 __setscheduler_params()): 0
// under SCHED_FIFO, the default (not a prctl value) when the task is fair
// again; PR_SET_TIMERSLACK is ignored for an RT task and 0 means the
// default. A PI boost does not change it.
TEST_CASE("timer slack follows the policy, not a PI boost", "[hrtimer][slack]") {
  ScenarioParams p = slack_scenario(1000, 50_us);
  p.tasks = {sleeper("t", 1_ms), sleeper("rt", 1_ms, Policy::kFifo, 5)};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  Task& t = find_task(k, "t");
  Task& rt = find_task(k, "rt");
  CHECK(k.timer_slack(t) == 50_us);
  CHECK(k.timer_slack(rt) == Time::zero());
  k.set_timer_slack(rt, 1_ms);
  CHECK(k.timer_slack(rt) == Time::zero());
  k.set_timer_slack(t, 40_ms);
  CHECK(k.timer_slack(t) == 40_ms);
  k.rt_mutex_setprio(t, rt.prio);  // boosted to rt's priority
  CHECK(k.timer_slack(t) == 40_ms);
  k.rt_mutex_setprio(t, t.normal_prio);
  k.set_scheduler(t, Policy::kFifo, 0, 10);
  CHECK(k.timer_slack(t) == Time::zero());
  k.set_scheduler(t, Policy::kNormal, 0, 0);
  CHECK(k.timer_slack(t) == 50_us);
  k.set_timer_slack(t, 40_ms);
  k.set_timer_slack(t, Time::zero());
  CHECK(k.timer_slack(t) == 50_us);
}

// The runtime-PM autosuspend timer is a range hrtimer too ([last_busy +
// delay, + delay/4]: here [9, 11] ms after a put at 1 ms) and shares the
// CPU's hrtimer interrupts with sleeps. A FIFO sleep expiring at 9.5 ms
// runs it then; a fair sleep with 5 ms of slack whose window opens at
// 9.8 ms is run by the suspend timer's own expiry at 11 ms. The CPU idles
// with its tick stopped in between. (The model used to queue the suspend
// at 11 ms in the first case and wake the sleeper at 14.8 ms in the
// second.)
TEST_CASE("a sleep and the autosuspend timer coalesce on their CPU", "[hrtimer][slack][pm_runtime]") {
  for (const bool fifo_first : {true, false}) {
    CAPTURE(fifo_first);
    std::string yaml =
        "kernel: {version: \"6.12\", hz: 100}\n"
        "duration: 30ms\n"
        "platform: {cpus: 1}\n"
        "pm_runtime:\n"
        "  devices:\n"
        "    - {name: gpu, autosuspend_delay: 8ms, start_active: true, suspend_cost: 100us}\n"
        "tasks:\n"
        "  - name: user\n"
        "    loop: 1\n"
        "    events: [{rpm: {op: get_sync, device: gpu}}, {run: 1ms}, {rpm: {op: put_autosuspend, device: gpu}},"
        " {sleep: 100ms}]\n";
    yaml += fifo_first
                ? "  - {name: s, policy: SCHED_FIFO, priority: 10, loop: 1, events: [{sleep: 9500us}, {run: 100us}]}\n"
                : "  - {name: s, timer_slack: 5ms, loop: 1, events: [{sleep: 9800us}, {run: 100us}]}\n";
    const Watched w = run_watched(yaml);
    const Time at = fifo_first ? 9500_us : 11_ms;
    CHECK(w.work.first("pm_runtime_work").queued == at);
    CHECK(w.wake.of("s") == at);
  }
}

// The shipped what-if (configs/overlays/android_background_timer_slack.yaml):
// TimerSlackHigh's 40 ms for the pm_wq scenario's background sync threads
// only; every other fair thread keeps init_task's 50 us, RT threads none.
TEST_CASE("the Android background timer-slack overlay reaches bg_sync only", "[hrtimer][slack][config]") {
  const ScenarioParams p = load_scenario_with_overlays(
      repo_path("configs/scenarios/shade_swipe.yaml"),
      load_overlay_file(repo_path("configs/overlays/android_background_timer_slack.yaml")), "what-if");
  CHECK(p.warnings.empty());
  for (const TaskSpec& t : p.tasks) {
    CAPTURE(t.name);
    CHECK(t.timer_slack.has_value() == (t.name == "bg_sync"));
  }
  System sys(p, 1);
  Kernel& k = sys.kernel();
  CHECK(k.timer_slack(find_task(k, "bg_sync-0")) == 40_ms);
  CHECK(k.timer_slack(find_task(k, "app_worker-0")) == 50_us);
  CHECK(k.timer_slack(find_task(k, "audio_hal")) == Time::zero());
}

// Any hrtimer's interrupt runs the CPU's soft-expired sleeps, not only
// sleeps' and the suspend timer's: here a work function's 2 ms sleep in a
// kworker of CPU 0's events pool (HZ=100, so no tick before 10 ms; the
// idle CPU's tick is stopped). s's window is [1980, 2030] us: the
// kworker's timer at 2000 us runs it. (cb73a1d woke s at 2030 us.)
TEST_CASE("a kworker's sleep expiring on the CPU runs a soft-expired sleep", "[hrtimer][slack][workqueue]") {
  const std::string yaml =
      "kernel: {version: \"6.12\", hz: 100}\n"
      "duration: 30ms\n"
      "platform: {cpus: 1}\n"
      "workqueue: {create_worker_delay: 0us}\n"
      "tasks:\n"
      "  - {name: q, loop: 1, events: [{queue_work: {wq: events, work: w, sleep: 2ms, cpu: 0}}, {sleep: 100ms}]}\n"
      "  - {name: s, loop: 1, events: [{sleep: 1980us}, {run: 100us}]}\n";
  const Watched w = run_watched(yaml);
  REQUIRE(w.work.items.size() == 1);
  CHECK(w.work.items[0].started == Time::zero());
  CHECK(w.wake.of("s") == 2000_us);
}

// `--why` counts where each range timer ran in its window ("timer slack",
// per task group or device timer). HZ=250 (ticks every 4 ms), one CPU, no
// cpuidle (an idle CPU stops its tick). bg's window is [10, 50] ms: with a
// hog the tick at 48 ms runs it (each earlier tick stopped the walk at its
// re-queued self); alone nothing interrupts it. s's window is [1, 6] ms:
// a FIFO sleeper's timer at 1.2 ms finds the busy CPU's tick queued at 4
// ms, ahead of s's hard expiry, and the walk stops there; then the CPU
// idles with its tick stopped and s runs at 6 ms, held back by the tick.
TEST_CASE("run --why counts where each range timer ran in its slack window", "[hrtimer][slack][why]") {
  const std::string head =
      yaml_head(250, "100ms", "{cpus: 1}") +
      "  - {name: bg, timer_slack: 40ms, loop: 1, events: [{sleep: 10ms}, {run: 100us}]}\n";
  using Counts = std::map<std::string, uint64_t>;
  CHECK(timer_slack_reasons(head) == Counts{{"bg: at its hard expiry: no interrupt in its window", 1}});
  CHECK(timer_slack_reasons(head + "  - {name: hog, events: [{run: 1s}]}\n") ==
        Counts{{"bg: ran early, in the tick's interrupt", 1}});
  const std::string held =
      yaml_head(250, "30ms", "{cpus: 1}") +
      "  - {name: s, timer_slack: 5ms, loop: 1, events: [{sleep: 1ms}, {run: 10us}]}\n"
      "  - {name: fifo, policy: SCHED_FIFO, priority: 10, loop: 1, events: [{sleep: 1200us}, {run: 10us}]}\n"
      "  - {name: hog, loop: 1, events: [{run: 1500us}]}\n";
  CHECK(timer_slack_reasons(held) == Counts{{"s: at its hard expiry: the walk stopped at the running tick", 1}});
}

// Timer migration's target check (hrtimer_check_target(): a timer stays
// on the arming CPU if it expires before the busy target's next event)
// sees the busy CPU's hrtimers, not only its tick, whatever the cpuidle
// setting. HZ=250: CPU 1 runs a hog (next tick at 4 ms) and holds a FIFO
// sleeper's timer for 3.2 ms; CPU 0 idles. At 1 ms a timer armed on CPU 0
// expiring at 3.5 ms goes to CPU 1 (its next event, 3.2 ms, comes first);
// one expiring at 3 ms stays. Without the FIFO sleeper, 3.5 ms stays too
// (the tick at 4 ms is CPU 1's next event).
TEST_CASE("timer migration sees the target CPU's hrtimers, not only its tick", "[hrtimer]") {
  for (const bool sleeper : {false, true}) {
    CAPTURE(sleeper);
    std::string yaml =
        yaml_head(250, "30ms", "{cpus: 2}") +
        "  - {name: hog, cpus: [1], events: [{run: 1s}]}\n";
    if (sleeper)
      yaml += "  - {name: f, policy: SCHED_FIFO, priority: 10, cpus: [1], loop: 1, events: [{sleep: 3200us}, "
              "{run: 10us}]}\n";
    System sys(load_scenario_yaml(yaml, "migrate.yaml"), 1);
    Kernel& k = sys.kernel();
    k.run_until(1_ms);
    REQUIRE(k.cpu_idle(0));
    CHECK(k.hrtimer_target_cpu(0, 3500_us) == (sleeper ? 1 : 0));
    CHECK(k.hrtimer_target_cpu(0, 3_ms) == 0);
  }
}

// Review of s38's walk (three cases the first version got wrong):
// - a tick the idle governor kept is the tick's interrupt at the idle exit
//   too: it re-queues itself a jiffy on, ahead of a window reaching past
//   it (gs101's CPU 0 under menu, HZ=250, a FIFO task's 1 ms sleeps keeping
//   the tick; s's window [10, 50] ms ends at the tick at 48 ms or later,
//   not at the first idle exit after 10 ms);
// - the tick re-queued by its own interrupt sorts after a timer already
//   queued at the same expiry (timerqueue_add() keeps insertion order): at
//   HZ=1000 with a hog, bg's window [10, 50] ms ends at the tick at 49 ms,
//   whose next jiffy is bg's hard expiry;
// - with cpuidle, a timer that wakes its idle CPU at its hard expiry is
//   counted by --why.
TEST_CASE("the walk at a kept tick's idle exit and at a tie with the re-queued tick", "[hrtimer][slack][cpuidle]") {
  const Watched kept = run_watched(
      yaml_head(250, "100ms", "gs101", "menu") +
      "  - {name: f, policy: SCHED_FIFO, priority: 10, cpus: [0], loop: 9, events: [{sleep: 1ms}, {run: 10us}]}\n"
      "  - {name: s, timer_slack: 40ms, cpus: [0], loop: 1, events: [{sleep: 10ms}, {run: 10us}]}\n");
  CHECK(kept.wake.of("s") >= 48_ms);
  CHECK(kept.wake.of("s") <= 50230_us);  // its hard expiry, and a c2 exit at most

  const Watched tie = run_watched(
      yaml_head(1000, "100ms", "{cpus: 1}") +
      "  - {name: bg, timer_slack: 40ms, loop: 1, events: [{sleep: 10ms}, {run: 100us}]}\n"
      "  - {name: hog, events: [{run: 1s}]}\n");
  CHECK(tie.wake.of("bg") == 49_ms);

  CHECK(timer_slack_reasons(yaml_head(250, "100ms", "gs101", "menu") +
                            "  - {name: s, timer_slack: 40ms, cpus: [0], loop: 1, events: [{sleep: 10ms}, {run: 10us}]}\n") ==
        std::map<std::string, uint64_t>{{"s: at its hard expiry: no interrupt in its window", 1}});
}
