// Utilization clamping (models/kernel/sched/uclamp.h, Linux 6.12): the rq
// buckets' max aggregation, util_fits_cpu(), and what the clamps change in
// schedutil, EAS, misfit and RT placement on the toy big.LITTLE platform
// (tests/sched_test_util.h: little capacity 256 at 500/1000 MHz, big 1024 at
// 1000/2000 MHz). Every expectation is worked by hand in its comment.
#include <catch2/catch.hpp>

#include "config_test_util.h"
#include "models/config/config.h"
#include "models/kernel/sched/uclamp.h"
#include "sched_test_util.h"

using namespace schedlab;
using namespace schedlab::testing;

namespace {

ScenarioParams toy_uclamp() {
  ScenarioParams p = exact_scenario("6.12", 250);
  p.platform = toy_big_little();
  p.kernel.uclamp = true;
  return p;
}

// The CPUs a task was switched in on after `from`.
std::vector<int> cpus_of(const SwitchLog& log, const std::string& name, Time from = Time::zero()) {
  std::vector<int> v;
  for (const auto& r : log.log)
    if (r.next == name && r.t >= from) v.push_back(r.cpu);
  return v;
}

// A `uclamp` event (sched_setattr() of the clamps; unset = unchanged).
EventSpec ev_uclamp(std::optional<uint32_t> min, std::optional<uint32_t> max) {
  EventSpec e;
  e.kind = EventSpec::Kind::kUclamp;
  e.uclamp_min = min;
  e.uclamp_max = max;
  return e;
}


}  // namespace

// CONFIG_UCLAMP_BUCKETS_COUNT 5: UCLAMP_BUCKET_DELTA = DIV_ROUND_CLOSEST(1024, 5)
// = 205, so 0..204 -> bucket 0, 205..409 -> 1, ..., 820..1024 -> 4; with 20
// buckets the delta is round(51.2) = 51 and 1024 / 51 = 20 is capped at 19.
TEST_CASE("uclamp buckets: DIV_ROUND_CLOSEST width, the top bucket takes the rest", "[uclamp]") {
  UclampSystem five;
  CHECK(five.bucket_delta() == 205);
  CHECK(five.bucket_id(0) == 0);
  CHECK(five.bucket_id(204) == 0);
  CHECK(five.bucket_id(205) == 1);
  CHECK(five.bucket_id(819) == 3);
  CHECK(five.bucket_id(1024) == 4);
  UclampSystem twenty;
  twenty.buckets = 20;
  CHECK(twenty.bucket_delta() == 51);
  CHECK(twenty.bucket_id(1019) == 19);
  CHECK(twenty.bucket_id(1024) == 19);
  // System defaults limit requests: sched_util_clamp_min 200 caps a 512 boost.
  UclampSystem capped;
  capped.defaults = {200, 1024};
  CHECK(capped.eff_get(capped.make(512, true), kUclampMin).value == 200);
  CHECK(capped.eff_get(capped.make(150, true), kUclampMin).value == 150);
}

TEST_CASE("the rq max-aggregates its runnable tasks' clamps in buckets", "[uclamp]") {
  const UclampSystem sys;  // 5 buckets
  RqUclamp rq;
  UclampSe a_min, b_min, c_min;
  // A asks 300 and B 350: both in bucket 1 (205..409); the rq takes 350.
  uclamp_rq_inc_id(sys, rq, kUclampMin, sys.make(300, true), a_min);
  rq.flag_idle = false;
  uclamp_rq_inc_id(sys, rq, kUclampMin, sys.make(350, true), b_min);
  CHECK(rq.get(kUclampMin) == 350);
  CHECK(rq.clamp[kUclampMin].bucket[1].tasks == 2);
  // B leaves; A still refcounts the bucket, whose value stays 350: A is
  // over-boosted ("local max aggregation", accepted by the kernel).
  uclamp_rq_dec_id(sys, rq, kUclampMin, b_min);
  CHECK(rq.get(kUclampMin) == 350);
  // C at 900 (bucket 4) lifts the rq; when C leaves, the top non-empty
  // bucket (1, value 350) decides again.
  uclamp_rq_inc_id(sys, rq, kUclampMin, sys.make(900, true), c_min);
  CHECK(rq.get(kUclampMin) == 900);
  uclamp_rq_dec_id(sys, rq, kUclampMin, c_min);
  CHECK(rq.get(kUclampMin) == 350);
  // The last task leaves: the min clamp drops to 0.
  uclamp_rq_dec_id(sys, rq, kUclampMin, a_min);
  CHECK(rq.get(kUclampMin) == 0);
  CHECK_FALSE(a_min.active);
  // A second dequeue of a task that is not refcounted changes nothing.
  uclamp_rq_dec_id(sys, rq, kUclampMin, a_min);
  CHECK(rq.clamp[kUclampMin].bucket[1].tasks == 0);
}

TEST_CASE("an idle rq keeps the last max clamp until a task is runnable again", "[uclamp]") {
  const UclampSystem sys;
  RqUclamp rq;
  UclampSe a_max, b_max;
  uclamp_rq_inc_id(sys, rq, kUclampMax, sys.make(500, true), a_max);
  rq.flag_idle = false;
  CHECK(rq.get(kUclampMax) == 500);
  // uclamp_idle_value(): with no task left the max clamp is retained (500),
  // not reset to 1024, so blocked util cannot push the frequency up.
  uclamp_rq_dec_id(sys, rq, kUclampMax, a_max);
  CHECK(rq.get(kUclampMax) == 500);
  CHECK(rq.is_idle());
  // uclamp_idle_reset(): the next runnable task sets the value, even lower.
  uclamp_rq_inc_id(sys, rq, kUclampMax, sys.make(200, true), b_max);
  CHECK(rq.get(kUclampMax) == 200);
}

// util_fits_cpu() of 6.12 (fits_capacity: util * 1280 < capacity * 1024).
TEST_CASE("util_fits_cpu: real fit, a cap that fits, a boost that does not", "[uclamp]") {
  // Without uclamp in use: only the utilization counts (100 on 160: 128000 < 163840).
  CHECK(util_fits_cpu(100, 600, 1024, 160, 160, 160, false) == 1);
  CHECK(util_fits_cpu(150, 0, 100, 160, 160, 160, false) == 0);  // 192000 >= 163840
  // A task capped at 400 fits a 498 CPU whatever its util (region a).
  CHECK(util_fits_cpu(800, 0, 400, 498, 498, 498, true) == 1);
  // uclamp_max 1024 on a 1024 CPU is no cap: 900 does not fit (1152000 >= 1048576).
  CHECK(util_fits_cpu(900, 0, 1024, 1024, 1024, 1024, true) == 0);
  CHECK(util_fits_cpu(800, 0, 1024, 1024, 1024, 1024, true) == 1);
  // Boosted to 600 (region c): fits by util on a 498 CPU but not the boost: -1.
  CHECK(util_fits_cpu(100, 600, 1024, 498, 498, 498, true) == -1);
  CHECK(util_fits_cpu(100, 600, 1024, 1024, 1024, 1024, true) == 1);
  // uclamp_min above uclamp_max is limited to it: min(600, 300) = 300 < 498.
  CHECK(util_fits_cpu(100, 600, 300, 498, 498, 498, true) == 1);
  // A CPU whose CFS capacity RT pressure cut to 100 still compares the
  // clamps with its original capacity: util 90 does not fit 100, the cap
  // 200 fits 498.
  CHECK(util_fits_cpu(90, 0, 200, 100, 498, 498, true) == 1);
  CHECK(util_fits_cpu(90, 0, 1024, 100, 498, 498, true) == 0);
}

// A hog pinned to a big CPU: util ~1024, so schedutil asks 1.25 x 1024 ->
// 2000 MHz. Capped at 300: sugov_effective_cpu_perf() = min(1280, 300) =
// 300, next_freq = 2000 MHz x 300 / 1024 = 585.9 MHz -> the 1000 MHz OPP.
TEST_CASE("uclamp_max caps schedutil's frequency", "[uclamp][cpufreq]") {
  ScenarioParams p = toy_uclamp();
  p.duration = Time::s(1);
  p.warmup = Time::ms(200);
  TaskSpec h = hog("h");
  h.cpus = {2};
  SECTION("capped") {
    h.uclamp_max = 300;
    p.tasks = {h};
    RunResult r = run_result(p);
    CHECK(busy_at(r, 2, 1) == Time::zero());
    CHECK(busy_at(r, 2, 0) == r.elapsed());
    check_conservation(r);
  }
  SECTION("not capped") {
    p.tasks = {h};
    RunResult r = run_result(p);
    CHECK(busy_at(r, 2, 1) == r.elapsed());
  }
}

// uclamp_rq_is_capped() (sched.h, 6.12): cpu_util_cfs() + cpu_util_rt()
// against the rq's uclamp_max, without 6.12's runnable boost (which
// schedutil's frequency request adds). The hog capped at 300 is running
// on CPU 2; its rq's signals are then set by hand: util 200 with
// runnable 400 reads 200 (not capped) where the boosted value, 400, would
// be; util 250 plus 50 of RT reaches the cap.
TEST_CASE("uclamp_rq_is_capped() reads the CPU's util without the runnable boost", "[uclamp][cpufreq]") {
  ScenarioParams p = toy_uclamp();
  TaskSpec h = hog("h");
  h.cpus = {2};
  h.uclamp_max = 300;
  p.tasks = {h};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(10));
  Rq& rq = k.rq(2);
  REQUIRE(rq.uclamp.get(kUclampMax) == 300);
  rq.cfs.avg.util_avg = 200;
  rq.cfs.avg.runnable_avg = 400;
  rq.cfs.avg.util_est = UtilEst{};
  rq.avg_rt.util_avg = 0;
  REQUIRE(k.cpu_util_cfs_boost(rq) == 400);
  CHECK_FALSE(k.uclamp_rq_is_capped(rq));
  rq.cfs.avg.util_avg = 250;
  rq.avg_rt.util_avg = 50;
  CHECK(k.uclamp_rq_is_capped(rq));
  CHECK_FALSE(k.uclamp_rq_is_capped(k.rq(3)));  // idle: uclamp_max 1024
}

// A 25% task pinned to a big CPU (4 ms of work every 16 ms) runs at
// 1000 MHz (util ~256 x 1.25 = 320 -> 2000 x 320/1024 = 625 MHz -> the
// lowest OPP), taking 8 ms a period. Boosted to 700 it asks max(700, 320) =
// 700 -> 1367 MHz -> 2000 MHz, but only once schedutil looks while it is
// runnable: 6.12 refcounts the clamp after the class's enqueue, whose
// update runs first, and after the dequeue's. Its wake-ups fall on the
// jiffies grid (timer phase 212 ms), so each run is 4 ms at 1000 MHz (2 ms
// of work) until the next tick raises the frequency, then 2 ms at 2000 MHz.
// Measured from 200 ms to 1 s: 49 whole runs (212 ... 980 ms) give 196 ms
// and 98 ms; the run that ends at 202 ms adds 2 ms at 2000 MHz, the one
// that starts at 996 ms 4 ms at 1000 MHz.
TEST_CASE("uclamp_min raises schedutil's frequency once it sees the task runnable", "[uclamp][cpufreq]") {
  ScenarioParams p = toy_uclamp();
  p.duration = Time::s(1);
  p.warmup = Time::ms(200);
  TaskSpec t = task("t", {ev_run(Time::ms(4)), ev_timer("t", Time::ms(16))});
  t.cpus = {2};
  SECTION("boosted") {
    t.uclamp_min = 700;
    p.tasks = {t};
    RunResult r = run_result(p);
    CHECK(busy_at(r, 2, 0) == Time::ms(200));
    CHECK(busy_at(r, 2, 1) == Time::ms(100));
    check_conservation(r);
  }
  SECTION("not boosted") {
    p.tasks = {t};
    RunResult r = run_result(p);
    CHECK(busy_at(r, 2, 1) == Time::zero());
  }
}

// A small task (1 ms every 16 ms, util ~64) fits a little CPU by util, so
// EAS keeps it there. Boosted to 512 it only fits the little CPUs' util
// (util_fits_cpu() = -1: 512 > 256) and fully fits a big one (1), which EAS
// prefers whatever the energy (best_fits > prev_fits).
TEST_CASE("EAS moves a task whose uclamp_min a little CPU cannot give to a big CPU", "[uclamp][eas]") {
  ScenarioParams p = toy_uclamp();
  p.duration = Time::s(2);
  auto cpus_with_boost = [&](uint32_t uclamp_min) {
    TaskSpec t = task("small", {ev_run(Time::ms(1)), ev_sleep(Time::ms(15))});
    t.uclamp_min = uclamp_min;
    p.tasks = {t};
    std::vector<int> cpus = cpus_of(run_logged<SwitchLog>(p), "small", Time::ms(500));
    REQUIRE(cpus.size() > 50);
    return cpus;
  };
  std::vector<int> boosted = cpus_with_boost(512);
  CHECK(std::all_of(boosted.begin(), boosted.end(), [](int c) { return c >= 2; }));
  std::vector<int> within_little = cpus_with_boost(200);  // 200 <= 256: fits a little CPU
  CHECK(std::all_of(within_little.begin(), within_little.end(), [](int c) { return c < 2; }));
}

// The growing task of test_sched_biglittle.cc (small, then a hog) becomes
// misfit on its little CPU and moves to a big one. Capped at 200 (<= 256)
// it fits the little CPU whatever its util (task_fits_cpu()), so it is
// never misfit, the little CPU is not overutilized, and it stays.
TEST_CASE("uclamp_max keeps a growing task on a little CPU (never misfit)", "[uclamp][misfit]") {
  ScenarioParams p = toy_uclamp();
  p.duration = Time::s(3);
  TaskSpec t = growing_task("grower");
  t.uclamp_max = 200;
  p.tasks = {t};
  System sys(p, 1);
  SwitchLog log;
  sys.add_observer(&log);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(900));
  const int little = find_task(k, "grower").cpu;
  CHECK(little < 2);
  sys.run();
  std::vector<int> cpus = cpus_of(log, "grower", Time::ms(900));
  REQUIRE_FALSE(cpus.empty());
  CHECK(std::all_of(cpus.begin(), cpus.end(), [&](int c) { return c == little; }));
  CHECK(k.rq(little).misfit_task_load == 0);
  CHECK_FALSE(k.is_rd_overutilized());
  check_conservation(sys.result());
}

// RT capacity fitness: with CONFIG_UCLAMP_TASK an RT task asks for
// sched_util_clamp_min_rt_default (1024), which only the big CPUs reach,
// so select_task_rq_rt() moves it there from its little CPU; with the
// sysctl at 0 (as Pixel's init writes) or without CONFIG_UCLAMP_TASK it
// stays where it woke.
TEST_CASE("RT tasks seek CPUs that reach their uclamp_min", "[uclamp][rt]") {
  ScenarioParams p = toy_uclamp();
  p.duration = Time::ms(500);
  p.tasks = {task("rt", {ev_run(Time::ms(1)), ev_sleep(Time::ms(15))}, Policy::kFifo, 10)};
  SECTION("min_rt_default 1024") {
    std::vector<int> cpus = cpus_of(run_logged<SwitchLog>(p), "rt");
    REQUIRE(cpus.size() > 20);
    CHECK(std::all_of(cpus.begin(), cpus.end(), [](int c) { return c >= 2; }));
  }
  SECTION("min_rt_default 0") {
    p.kernel.uclamp_min_rt_default = 0;
    std::vector<int> cpus = cpus_of(run_logged<SwitchLog>(p), "rt");
    REQUIRE(cpus.size() > 20);
    CHECK(std::all_of(cpus.begin(), cpus.end(), [](int c) { return c == 0; }));
  }
  SECTION("no CONFIG_UCLAMP_TASK") {
    p.kernel.uclamp = false;
    std::vector<int> cpus = cpus_of(run_logged<SwitchLog>(p), "rt");
    REQUIRE(cpus.size() > 20);
    CHECK(std::all_of(cpus.begin(), cpus.end(), [](int c) { return c == 0; }));
  }
}

// effective_cpu_util(): without uclamp in use a runnable RT task forces
// the CPU's frequency to its maximum; once the static key is on (here by
// writing sched_util_clamp_min_rt_default 0) the RT task's clamp decides:
// util ~64 x 1.25 = 80 on a little CPU -> 1000 x 80/256 = 312 MHz -> 500 MHz.
TEST_CASE("a runnable RT task forces the top OPP only while uclamp is unused", "[uclamp][cpufreq][rt]") {
  ScenarioParams p = toy_uclamp();
  p.duration = Time::s(1);
  p.warmup = Time::ms(200);
  TaskSpec t = task("rt", {ev_run(Time::ms(1)), ev_sleep(Time::ms(15))}, Policy::kFifo, 10);
  t.cpus = {0};
  p.tasks = {t};
  SECTION("uclamp unused") {
    p.kernel.uclamp = false;
    RunResult r = run_result(p);
    CHECK(busy_at(r, 0, 1) > Time::zero());
    CHECK(busy_at(r, 0, 0) == Time::zero());
  }
  SECTION("uclamp in use") {
    p.kernel.uclamp_min_rt_default = 0;
    RunResult r = run_result(p);
    CHECK(busy_at(r, 0, 0) > Time::zero());
    CHECK(busy_at(r, 0, 1) == Time::zero());
    check_conservation(r);
  }
}

TEST_CASE("uclamp in YAML: kernel.uclamp and the tasks' clamps, with clear errors", "[uclamp][config]") {
  const std::string kernel_on = "kernel:\n  uclamp:\n    enabled: true\n    buckets: 20\n    min_rt_default: 0\n";
  ScenarioParams s = load_scenario_yaml(kernel_on +
                                            "tasks:\n  - name: t\n    uclamp_min: 128\n    uclamp_max: 512\n"
                                            "    events: [run: 1ms]\n",
                                        "test.yaml");
  CHECK(s.kernel.uclamp);
  CHECK(s.kernel.uclamp_buckets == 20);
  CHECK(s.kernel.uclamp_min_rt_default == 0);
  CHECK(s.tasks[0].uclamp_min == std::optional<uint32_t>(128));
  CHECK(s.tasks[0].uclamp_max == std::optional<uint32_t>(512));

  ConfigError off = error_of("tasks:\n  - name: t\n    uclamp_min: 128\n    events: [run: 1ms]\n");
  CHECK(off.key_path() == "tasks[0].uclamp_min");
  CHECK(off.line() == 3);
  CHECK_THAT(off.message(), Catch::Contains("CONFIG_UCLAMP_TASK"));

  ConfigError order = error_of(kernel_on + "tasks:\n  - name: t\n    uclamp_min: 600\n    uclamp_max: 500\n"
                                           "    events: [run: 1ms]\n");
  CHECK(order.key_path() == "tasks[0].uclamp_min");
  CHECK_THAT(order.message(), Catch::Contains("uclamp_min 600 exceeds uclamp_max 500"));

  ConfigError range = error_of(kernel_on + "tasks:\n  - name: t\n    uclamp_max: 2048\n    events: [run: 1ms]\n");
  CHECK(range.key_path() == "tasks[0].uclamp_max");

  ConfigError buckets = error_of(std::string("kernel:\n  uclamp:\n    enabled: true\n    buckets: 4\n") + kOneTask);
  CHECK(buckets.key_path() == "kernel.uclamp.buckets");

  ConfigError sysctl =
      error_of(std::string("kernel:\n  uclamp:\n    enabled: true\n    util_min: 600\n    util_max: 500\n") + kOneTask);
  CHECK(sysctl.key_path() == "kernel.uclamp.util_min");
  CHECK_THAT(sysctl.message(), Catch::Contains("exceeds util_max"));

  ConfigError needs = error_of(std::string("kernel:\n  uclamp:\n    min_rt_default: 0\n") + kOneTask);
  CHECK(needs.key_path() == "kernel.uclamp.min_rt_default");
  CHECK_THAT(needs.message(), Catch::Contains("enabled: true"));
}

// A `uclamp` event is sched_setattr() of the clamps by the running task:
// the hog on a big CPU runs at 2000 MHz until it caps itself at 300
// (300 ms of work, at most 600 ms at 1000 MHz), then at 1000 MHz. It is
// the first clamp of the run, so it also turns the static key on; the hog
// was enqueued before that and is not refcounted, so the change path
// only adds it (uclamp_rq_dec_id() skips an inactive clamp).
TEST_CASE("a uclamp event changes the running task's clamps and its rq's", "[uclamp][workload]") {
  ScenarioParams p = toy_uclamp();
  p.duration = Time::s(2);
  TaskSpec h = task("h", {ev_run(Time::ms(300)), ev_uclamp(std::nullopt, 300), ev_run(Time::s(10))});
  h.cpus = {2};
  p.tasks = {h};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(200));
  CHECK_FALSE(k.uclamp_is_used());
  CHECK(k.rq(2).uclamp.get(kUclampMax) == 1024);
  CHECK(k.freq_domains()[1].cur_khz == 2000000);
  k.run_until(Time::ms(700));
  CHECK(k.uclamp_is_used());
  const Task& t = find_task(k, "h");
  CHECK(t.uclamp_req[kUclampMax].value == 300);
  CHECK(t.uclamp_req[kUclampMax].user_defined);
  CHECK(t.uclamp[kUclampMax].active);
  CHECK(k.rq(2).uclamp.get(kUclampMax) == 300);
  CHECK(k.freq_domains()[1].cur_khz == 1000000);
  sys.run();
  check_conservation(sys.result());
}

TEST_CASE("uclamp events in YAML and rt-app phases", "[uclamp][config]") {
  const std::string kernel_on = "kernel:\n  uclamp:\n    enabled: true\n";
  ScenarioParams s = load_scenario_yaml(
      kernel_on + "tasks:\n  - name: t\n    events: [run: 1ms, uclamp: {min: 128}, run: 2ms]\n", "test.yaml");
  const auto& ev = s.tasks[0].phases[0].events;
  REQUIRE(ev.size() == 3);
  CHECK(ev[1].kind == EventSpec::Kind::kUclamp);
  CHECK(ev[1].uclamp_min == std::optional<uint32_t>(128));
  CHECK_FALSE(ev[1].uclamp_max.has_value());

  ConfigError off = error_of("tasks:\n  - name: t\n    events: [uclamp: {max: 100}]\n");
  CHECK(off.key_path() == "tasks[0].events[0].uclamp");
  CHECK_THAT(off.message(), Catch::Contains("CONFIG_UCLAMP_TASK"));
  ConfigError empty = error_of(kernel_on + "tasks:\n  - name: t\n    events: [uclamp: {}]\n");
  CHECK_THAT(empty.message(), Catch::Contains("'min', 'max' or both"));
  ConfigError order = error_of(kernel_on + "tasks:\n  - name: t\n    events: [uclamp: {min: 600, max: 500}]\n");
  CHECK(order.key_path() == "tasks[0].events[0].uclamp.min");

  // rt-app: a later phase's util_min / util_max become a one-event phase
  // that sets them as that phase begins (a lone phase's are the task's).
  ScenarioParams r = import_rtapp_json(R"({
  "global": { "duration": 1 },
  "tasks": { "t": { "phases": {
    "p0": { "run": 1000, "sleep": 1000 },
    "p1": { "util_min": 300, "util_max": 600, "run": 1000, "sleep": 1000 }
  } } }
})", "test.json");
  CHECK(r.warnings.empty());
  CHECK(r.kernel.uclamp);
  REQUIRE(r.tasks[0].phases.size() == 3);
  REQUIRE(r.tasks[0].phases[1].events.size() == 1);
  const EventSpec& set = r.tasks[0].phases[1].events[0];
  CHECK(set.kind == EventSpec::Kind::kUclamp);
  CHECK(set.uclamp_min == std::optional<uint32_t>(300));
  CHECK(set.uclamp_max == std::optional<uint32_t>(600));
  CHECK(set.uclamp_if_changed);  // rt-app skips settings it applied last
  CHECK(r.tasks[0].phases[1].loop == 1);
  CHECK_FALSE(r.tasks[0].uclamp_min.has_value());
}

// enqueue_task_fair() checks the overutilized flag inside the class's
// enqueue, before core.c refcounts the waking task's clamps. A SCHED_IDLE
// hog capped at 200 keeps little CPU 0 at util ~256 (not fitting 256 by
// util, but its cap fits: not overutilized). An uncapped short task wakes
// there every 4 ms, preempts the SCHED_IDLE hog at once and sleeps again
// within 1 ms, between two ticks (its timer's grid starts when its first
// run ends, 0.4-0.8 ms after a tick): at its wake-up the rq's max clamp is
// still 200, and while it runs no tick or balance pass looks, so the root
// domain never becomes overutilized. (Checked after its enqueue, the rq's
// max clamp would be 1024 and the flag set at every wake-up.)
TEST_CASE("the wake-up's overutilized check does not see the waking task's clamps", "[uclamp][eas]") {
  ScenarioParams p = toy_uclamp();
  p.duration = Time::ms(400);
  TaskSpec h = hog("h", Policy::kIdle);
  h.cpus = {0};
  h.uclamp_max = 200;
  TaskSpec s = task("s", {ev_run(Time::us(100)), ev_timer("s", Time::ms(4))});
  s.cpus = {0};
  p.tasks = {h, s};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  int overutilized = 0, steps = 0;
  for (Time t = Time::ms(100); t < Time::ms(400); t += Time::us(50), ++steps) {
    k.run_until(t);
    if (k.is_rd_overutilized()) ++overutilized;
  }
  CHECK(steps == 6000);
  CHECK(overutilized == 0);
}

// select_task_rq() asks the class only for a task allowed on more than one
// CPU: wake-ups of pinned tasks never reach record_wakee(), so a waker
// alternating between two pinned sleepers counts no flips.
TEST_CASE("wake-ups of pinned tasks are not wakee flips", "[uclamp][smp]") {
  ScenarioParams p = exact_scenario("6.12", 250, 4);
  p.duration = Time::ms(100);
  EventSpec suspend;
  suspend.kind = EventSpec::Kind::kSuspend;
  auto resume = [](const std::string& name) {
    EventSpec e;
    e.kind = EventSpec::Kind::kResume;
    e.name = name;
    return e;
  };
  TaskSpec a = task("a", {suspend, ev_run(Time::us(100))});
  a.cpus = {1};
  TaskSpec b = task("b", {suspend, ev_run(Time::us(100))});
  b.cpus = {2};
  TaskSpec w = task("w", {ev_sleep(Time::ms(1)), resume("a"), ev_sleep(Time::ms(1)), resume("b")});
  w.cpus = {0};
  SECTION("pinned wakees") {
    p.tasks = {a, b, w};
    System sys(p, 1);
    sys.run();
    CHECK(find_task(sys.kernel(), "w").wakee_flips == 0);
  }
  SECTION("wakees free to move") {
    a.cpus = b.cpus = {1, 2};
    p.tasks = {a, b, w};
    System sys(p, 1);
    sys.run();
    CHECK(find_task(sys.kernel(), "w").wakee_flips > 10);  // one per wake-up, about 50 in 100 ms
  }
}

// A clamp change keeps the priority, so 6.12 dequeues without DEQUEUE_MOVE
// and an RT task keeps its place in its list: FIFO task a (started first,
// ahead of b at the same priority) changes its clamps and runs on; h
// (which ran first, then slept) preempts it at 1 ms for 1 ms; then a,
// still first in the list, runs again, not b.
TEST_CASE("a clamp change leaves an RT task's place in its list", "[uclamp][rt]") {
  ScenarioParams p = toy_uclamp();
  p.duration = Time::ms(20);
  TaskSpec a = task("a", {ev_uclamp(100, std::nullopt), ev_run(Time::ms(5)), ev_sleep(Time::s(1))}, Policy::kFifo, 10);
  TaskSpec b = task("b", {ev_run(Time::ms(5)), ev_sleep(Time::s(1))}, Policy::kFifo, 10);
  TaskSpec h = task("h", {ev_sleep(Time::ms(1)), ev_run(Time::ms(1)), ev_sleep(Time::s(1))}, Policy::kFifo, 20);
  a.cpus = b.cpus = h.cpus = {2};
  p.tasks = {a, b, h};
  SwitchLog log = run_logged<SwitchLog>(p);
  std::vector<std::string> order;
  for (const auto& r : log.log)
    if (r.cpu == 2 && r.next != "idle" && (order.empty() || order.back() != r.next)) order.push_back(r.next);
  CHECK(order == std::vector<std::string>{"h", "a", "h", "a", "b"});  // h starts first, then sleeps
}

// The same boosted task on 6.18, whose core.c enqueue_task() counts the
// clamps before the class's enqueue, as 6.1's and 6.6's did: the wake-up's
// cpufreq kick already sees uclamp_min 700 and asks for 2000 MHz (6.18:
// max(700, 1.25 x util); 6.1/6.6: 1.25 x 700 = 875 -> 1709 MHz), so every
// run is 4 ms at 2000 MHz. From 200 ms to 1 s: the 49 whole runs (212 ...
// 980 ms) give 196 ms and the one that starts at 996 ms 4 ms; the one
// before 212 ms ends at 200 ms.
TEST_CASE("6.1, 6.6 and 6.18 count a waking task's uclamp_min before the enqueue's cpufreq kick",
          "[uclamp][cpufreq]") {
  const std::string version = GENERATE("6.1", "6.6", "6.18");
  CAPTURE(version);
  ScenarioParams p = on_kernel(toy_uclamp(), version, Time::s(1), Time::ms(200));
  TaskSpec t = every_16ms_on("t", Time::ms(4), 2);
  t.uclamp_min = 700;
  p.tasks = {t};
  RunResult r = run_result(p);
  CHECK(busy_at(r, 2, 0) == Time::zero());
  CHECK(busy_at(r, 2, 1) == Time::ms(200));
  check_conservation(r);
}

// Where schedutil adds its 25% headroom. A hog capped at uclamp_max 450 on
// a big CPU (1000 / 2000 MHz, capacity 1024): 6.12 and 6.18 cap the util
// with its headroom (sugov_effective_cpu_perf(): min(1.25 x util, 450) =
// 450 -> 2000 x 450 / 1024 = 878 MHz -> 1000 MHz), so it runs at 1000 MHz
// throughout; 6.1 and 6.6 clamp first and add the headroom after
// (get_next_freq(): 1.25 x 450 = 562 -> 1097 MHz -> 2000 MHz), which they
// ask for as soon as the hog's util passes 410 (at 1000 MHz its util
// tends to 512, 80% of it within about 75 ms), long before the window
// opens at 200 ms.
TEST_CASE("6.1 and 6.6 add schedutil's headroom after the uclamp clamp, 6.12 and 6.18 before", "[uclamp][cpufreq]") {
  const std::string version = GENERATE("6.1", "6.6", "6.12", "6.18");
  CAPTURE(version);
  ScenarioParams p = on_kernel(toy_uclamp(), version, Time::s(1), Time::ms(200));
  TaskSpec h = hog("h");
  h.cpus = {2};
  h.uclamp_max = 450;
  p.tasks = {h};
  RunResult r = run_result(p);
  CHECK(busy_at(r, 2, has_v6_1_forms(version) ? 1 : 0) == r.elapsed());
  check_conservation(r);
}

// The same with a boost: a 1 ms task every 16 ms (util about 64 at 2000
// MHz, 128 at 1000 MHz) with uclamp_min 450. 6.12 / 6.18: max(450, 1.25 x
// util) = 450 -> 1000 MHz, each run 2 ms; 6.1 / 6.6: 1.25 x max(util,
// 450) = 562 -> 2000 MHz, each run 1 ms. The rq's clamp is counted before
// the wake-up's kick on all but 6.12, and 6.12's run starts at 1000 MHz
// anyway. From 200 ms to 1 s, 50 runs (the timer's phase puts the first
// at 212 ms, the last at 996 ms, all inside the window).
TEST_CASE("a uclamp_min boost gets schedutil's headroom on 6.1 and 6.6 only", "[uclamp][cpufreq]") {
  const std::string version = GENERATE("6.1", "6.6", "6.12", "6.18");
  CAPTURE(version);
  ScenarioParams p = on_kernel(toy_uclamp(), version, Time::s(1), Time::ms(200));
  TaskSpec t = every_16ms_on("t", Time::ms(1), 2);
  t.uclamp_min = 450;
  p.tasks = {t};
  RunResult r = run_result(p);
  if (has_v6_1_forms(version)) {
    CHECK(busy_at(r, 2, 1) == Time::ms(50));
    CHECK(busy_at(r, 2, 0) == Time::zero());
  } else {
    CHECK(busy_at(r, 2, 0) == Time::ms(100));
    CHECK(busy_at(r, 2, 1) == Time::zero());
  }
  check_conservation(r);
}

// Where EAS adds the headroom to a capped task's pd (6.1.166 / 6.6.63
// compute_energy() -> em_cpu_energy(); 6.12 eenv_pd_max_util() ->
// sugov_effective_cpu_perf()). Two clusters of the same core (dmips 1024):
// "mid" 500 / 1000 MHz (capacity 512) at 100 / 600 mW, "big" 1000 / 2000
// MHz (capacity 1024) at 400 / 1600 mW, so energy per cycle (P / f; the
// cost over the capacity comes to the same ratio in both kernels' forms)
// is 0.2 / 0.6 mW/MHz on mid and 0.4 / 0.8 on big. A task of 3.5 ms (at
// big's top speed) every 16 ms, capped at uclamp_max 220: its util_est is
// about 230-245 wherever it runs (14 ms of every 16 on mid at 500 MHz, 7
// on big at 1000 MHz). 6.12 / 6.18 price mid at min(1.25 x util, 220) =
// 220 <= 256, mid's 500 MHz performance: 0.2 against big's 0.4 (220 ->
// 1000 MHz), so the task stays on mid. 6.1 / 6.6 clamp first and add the
// headroom after: 1.25 x 220 = 275 > 256 prices mid at 1000 MHz, 0.6
// against big's 0.4, so EAS puts the task on big (275 -> 537 MHz, still
// 1000 MHz there). The cap keeps both clusters fitting and the root domain
// never overutilized, so every wake-up is EAS's.
TEST_CASE("6.1 and 6.6 price a capped task's pd at 1.25 x its cap in EAS, 6.12 and 6.18 at the cap", "[uclamp][eas]") {
  const std::string version = GENERATE("6.1", "6.6", "6.12", "6.18");
  CAPTURE(version);
  ScenarioParams p = on_kernel(toy_uclamp(), version, Time::s(2));
  ClusterParams& mid = p.platform.clusters[0];
  mid.name = "mid";
  mid.capacity_dmips_mhz = 1024;
  mid.opps = {{500000, 600000, 100.0}, {1000000, 800000, 600.0}};
  ClusterParams& big = p.platform.clusters[1];
  big.opps = {{1000000, 700000, 400.0}, {2000000, 1000000, 1600.0}};
  TaskSpec t = task("capped", {ev_run(Time::us(3500)), ev_timer("capped", Time::ms(16))});
  t.uclamp_max = 220;
  p.tasks = {t};
  std::vector<int> cpus = cpus_of(run_logged<SwitchLog>(p), "capped", Time::ms(500));
  REQUIRE(cpus.size() > 80);
  CHECK(std::all_of(cpus.begin(), cpus.end(), [&](int c) { return has_v6_1_forms(version) ? c >= 2 : c < 2; }));
}
