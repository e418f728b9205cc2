// cpu cgroups' utilization clamps (CONFIG_UCLAMP_TASK_GROUP, Linux 6.12
// core.c; models/kernel/sched/uclamp_group.cc): the percent conversion,
// effective clamps down the hierarchy, tasks restricted by their group,
// moves and writes at run time, and the YAML. The platform is the toy
// big.LITTLE of tests/sched_test_util.h (little capacity 256 at 500/1000
// MHz, big 1024 at 1000/2000 MHz). Every expectation is worked by hand.
#include <catch2/catch.hpp>

#include "config_test_util.h"
#include "models/config/config.h"
#include "models/kernel/sched/uclamp.h"
#include "sched_test_util.h"

using namespace schedlab;
using namespace schedlab::testing;

namespace {

ScenarioParams toy_groups(std::vector<KernelParams::CpuCgroup> groups) {
  ScenarioParams p = exact_scenario("6.12", 250);
  p.platform = toy_big_little();
  p.kernel.uclamp = true;
  p.kernel.cgroups = std::move(groups);
  return p;
}

KernelParams::CpuCgroup group(const std::string& name, std::optional<int64_t> min_pct = std::nullopt,
                              std::optional<int64_t> max_pct = std::nullopt, const std::string& parent = "") {
  KernelParams::CpuCgroup c;
  c.name = name;
  c.parent = parent;
  c.uclamp_min_pct = min_pct;
  c.uclamp_max_pct = max_pct;
  return c;
}

EventSpec ev_cpu_uclamp(const std::string& name, std::optional<uint32_t> min_pct, std::optional<uint32_t> max_pct) {
  EventSpec e;
  e.kind = EventSpec::Kind::kCpuUclamp;
  e.name = name;
  e.uclamp_min = min_pct;
  e.uclamp_max = max_pct;
  return e;
}

const UclampTaskGroup& tg(const Kernel& k, const std::string& name) {
  const int g = k.find_task_group(name);
  REQUIRE(g >= 0);
  return k.task_groups()[static_cast<size_t>(g)];
}

uint32_t eff(const Kernel& k, const std::string& name, UclampId id) { return tg(k, name).uclamp[id].value; }



}  // namespace

// capacity_from_percent(): DIV_ROUND_CLOSEST(percent_x100 << 10, 10000).
TEST_CASE("cpu.uclamp percent to capacity: rounded to the closest", "[uclamp][cgroup]") {
  CHECK(uclamp_capacity_from_percent(0) == 0);
  CHECK(uclamp_capacity_from_percent(2000) == 205);   // 20%: 204.8
  CHECK(uclamp_capacity_from_percent(1250) == 128);   // 12.5%: 128.0
  CHECK(uclamp_capacity_from_percent(3333) == 341);   // 33.33%: 341.30
  CHECK(uclamp_capacity_from_percent(6836) == 700);   // 68.36%: 700.01
  CHECK(uclamp_capacity_from_percent(5) == 1);        // 0.05%: 0.512
  CHECK(uclamp_capacity_from_percent(4) == 0);        // 0.04%: 0.41
  CHECK(uclamp_capacity_from_percent(10000) == 1024);
}

// cpu_util_update_eff(): effective = request capped by the parent's
// effective value, then min capped by max. New groups request 0 / 1024.
TEST_CASE("effective group clamps follow the hierarchy", "[uclamp][cgroup]") {
  // apps: max 50% (512); top-app under apps: min 60% (614).
  ScenarioParams p = toy_groups({group("apps", std::nullopt, 5000), group("top-app", 6000, std::nullopt, "apps")});
  p.tasks = {hog("h")};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  // The root keeps 1024 / 1024 (sched_util_clamp_min / _max defaults).
  CHECK(eff(k, "/", kUclampMin) == 1024);
  CHECK(eff(k, "apps", kUclampMin) == 0);
  CHECK(eff(k, "apps", kUclampMax) == 512);
  // top-app's 614 is capped by apps' effective min 0 (a protection needs
  // the parent's), its max by apps' 512.
  CHECK(tg(k, "top-app").uclamp_req[kUclampMin].value == 614);
  CHECK(eff(k, "top-app", kUclampMin) == 0);
  CHECK(eff(k, "top-app", kUclampMax) == 512);
  // apps' min 80% (819) is capped by its own max: 512; top-app: min(614,
  // 512) = 512, then min <= max = 512.
  k.cpu_uclamp_write(k.find_task_group("apps"), kUclampMin, 8000);
  CHECK(eff(k, "apps", kUclampMin) == 512);
  CHECK(eff(k, "top-app", kUclampMin) == 512);
  CHECK(eff(k, "top-app", kUclampMax) == 512);
  // apps' max back to "max": top-app's own request (614) shows through.
  k.cpu_uclamp_write(k.find_task_group("apps"), kUclampMax, 10000);
  CHECK(eff(k, "apps", kUclampMin) == 819);
  CHECK(eff(k, "top-app", kUclampMin) == 614);
  CHECK(eff(k, "top-app", kUclampMax) == 1024);
  CHECK(tg(k, "apps").uclamp_pct[kUclampMin] == 8000);
}

// uclamp_update_root_tg(): the root requests sched_util_clamp_min / _max,
// so sysctl util_min 0 takes every group's protection away, and util_max
// 300 caps every group.
TEST_CASE("the sysctls cap every group through the root", "[uclamp][cgroup]") {
  ScenarioParams p = toy_groups({group("top-app", 5000)});
  p.tasks = {hog("h")};
  p.kernel.uclamp_util_min = 0;
  p.kernel.uclamp_util_max = 300;
  System sys(p, 1);
  CHECK(eff(sys.kernel(), "/", kUclampMin) == 0);
  CHECK(eff(sys.kernel(), "/", kUclampMax) == 300);
  CHECK(eff(sys.kernel(), "top-app", kUclampMin) == 0);
  CHECK(eff(sys.kernel(), "top-app", kUclampMax) == 300);
}

// uclamp_tg_restrict(): a task outside the root has its request clamped
// into its group's effective range; root tasks see only the system limits.
TEST_CASE("a group clamps its tasks' requests into its range", "[uclamp][cgroup]") {
  ScenarioParams p = toy_groups({group("boosted", 2000), group("capped", std::nullopt, 2930)});
  TaskSpec free = hog("free");
  TaskSpec b = hog("b");
  b.cgroup = "boosted";
  TaskSpec b_capped = hog("b_capped");  // asks max 100, below the group's min 205
  b_capped.cgroup = "boosted";
  b_capped.uclamp_max = 100;
  TaskSpec c = hog("c");  // asks min 600, above the group's max 300
  c.cgroup = "capped";
  c.uclamp_min = 600;
  p.tasks = {free, b, b_capped, c};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  auto value = [&](const std::string& name, UclampId id) { return k.uclamp_eff_value(find_task(k, name), id); };
  CHECK(value("free", kUclampMin) == 0);
  CHECK(value("free", kUclampMax) == 1024);
  CHECK(value("b", kUclampMin) == 205);   // clamp(0, 205, 1024)
  CHECK(value("b", kUclampMax) == 1024);
  CHECK(value("b_capped", kUclampMax) == 205);  // clamp(100, 205, 1024): the floor wins
  CHECK(eff(k, "capped", kUclampMax) == 300);   // 29.30%: 300.03
  CHECK(value("c", kUclampMin) == 300);   // clamp(600, 0, 300)
  CHECK(value("c", kUclampMax) == 300);
  // Refcounted the same way while runnable.
  k.run_until(Time::ms(50));
  const Task& ct = find_task(k, "c");
  CHECK(ct.uclamp[kUclampMin].active);
  CHECK(ct.uclamp[kUclampMin].value == 300);
}

// The frequency test of test_uclamp.cc ("uclamp_min raises schedutil's
// frequency...") with the boost from the group instead of the task:
// 68.36% = 700, the same effective clamp, so the same busy time per OPP
// (200 ms at 1000 MHz, 100 ms at 2000 MHz between 200 ms and 1 s).
TEST_CASE("a group's cpu.uclamp.min boosts schedutil like the task's own", "[uclamp][cgroup][cpufreq]") {
  ScenarioParams p = toy_groups({group("top-app", 6836)});
  p.duration = Time::s(1);
  p.warmup = Time::ms(200);
  TaskSpec t = task("t", {ev_run(Time::ms(4)), ev_timer("t", Time::ms(16))});
  t.cpus = {2};
  t.cgroup = "top-app";
  p.tasks = {t};
  RunResult r = run_result(p);
  CHECK(busy_at(r, 2, 0) == Time::ms(200));
  CHECK(busy_at(r, 2, 1) == Time::ms(100));
  check_conservation(r);
  SECTION("in the root group it is not boosted") {
    p.tasks[0].cgroup.clear();
    RunResult root = run_result(p);
    CHECK(busy_at(root, 2, 1) == Time::zero());
  }
}

// sched_move_task(): a hog pinned to a big CPU runs at 2000 MHz in the
// root group; after 100 ms of work it moves itself to "background" (max 29.30% =
// 300), is requeued with the group's cap (rq max 300), and schedutil's
// next look at its CPU (the next tick) asks min(1280, 300) = 300 ->
// 2000 x 300 / 1024 = 586 MHz -> the 1000 MHz OPP.
TEST_CASE("a task that moves to a capped group is capped at once", "[uclamp][cgroup][cpufreq]") {
  ScenarioParams p = toy_groups({group("background", std::nullopt, 2930)});
  p.duration = Time::ms(400);
  TaskSpec h = phased_task("h", {{1, {ev_run(Time::ms(100)), ev_cgroup("background")}},  // >= 100 ms
                                 {-1, {ev_run(Time::s(10))}}});
  h.cpus = {2};
  p.tasks = {h};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(90));
  CHECK(k.rq(2).uclamp.get(kUclampMax) == 1024);
  CHECK(k.freq_domains()[1].cur_khz == 2000000);
  k.run_until(Time::ms(250));
  const Task& t = find_task(k, "h");
  CHECK(t.task_group == k.find_task_group("background"));
  CHECK(t.uclamp[kUclampMax].value == 300);
  CHECK(k.rq(2).uclamp.get(kUclampMax) == 300);
  CHECK(k.freq_domains()[1].cur_khz == 1000000);
  sys.run();
  check_conservation(sys.result());
}

// cpu_uclamp_write() at run time (a power HAL writing top-app's files): the
// group's runnable tasks are refcounted again at once (uclamp_update_active()),
// so their rq's clamp follows in the same instant.
// The scenario writes top-app's cpu.uclamp.max ("max") at set-up, which
// turns the sched_uclamp_used static key on before the hog is enqueued.
TEST_CASE("a cpu_uclamp write re-clamps the group's runnable tasks at once", "[uclamp][cgroup]") {
  ScenarioParams p = toy_groups({group("top-app", std::nullopt, 10000)});
  p.duration = Time::ms(300);
  TaskSpec h = hog("h");
  h.cpus = {2};
  h.cgroup = "top-app";
  TaskSpec hal = task("hal", {ev_sleep(Time::ms(100)), ev_cpu_uclamp("top-app", 5000, 2000)});
  hal.phases[0].loop = 1;
  hal.loop = 1;
  hal.cpus = {0};
  p.tasks = {h, hal};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  k.run_until(Time::ms(99));
  CHECK(k.rq(2).uclamp.get(kUclampMin) == 0);
  CHECK(k.rq(2).uclamp.get(kUclampMax) == 1024);
  k.run_until(Time::ms(101));
  // min 50% (512) capped by max 20% (205): both 205.
  CHECK(eff(k, "top-app", kUclampMin) == 205);
  CHECK(eff(k, "top-app", kUclampMax) == 205);
  CHECK(k.rq(2).uclamp.get(kUclampMin) == 205);
  CHECK(k.rq(2).uclamp.get(kUclampMax) == 205);
  sys.run();
  check_conservation(sys.result());
  SECTION("a hog enqueued before the static key was on is not refcounted") {
    // As in the kernel: uclamp_rq_inc() did nothing then, so
    // uclamp_update_active() skips it until it is enqueued again.
    p.kernel.cgroups = {group("top-app")};
    System late(p, 1);
    late.kernel().run_until(Time::ms(101));
    CHECK(late.kernel().uclamp_is_used());
    CHECK_FALSE(find_task(late.kernel(), "h").uclamp[kUclampMax].active);
    CHECK(late.kernel().rq(2).uclamp.get(kUclampMax) == 1024);
  }
}

TEST_CASE("cgroups in YAML: the hierarchy, tasks, events and clear errors", "[uclamp][cgroup][config]") {
  const std::string on = "kernel:\n  uclamp:\n    enabled: true\n";
  ScenarioParams s = load_scenario_yaml(on +
                                            "cgroups:\n"
                                            "  - name: apps\n    uclamp_max: max\n"
                                            "  - name: top-app\n    parent: apps\n    uclamp_min: 12.345\n"
                                            "tasks:\n  - name: t\n    cgroup: top-app\n"
                                            "    events: [run: 1ms, {cgroup: /}, {cpu_uclamp: {group: apps, min: 5}}]\n",
                                        "test.yaml");
  REQUIRE(s.kernel.cgroups.size() == 2);
  CHECK(s.kernel.cgroups[0].uclamp_max_pct == std::optional<int64_t>(10000));
  CHECK(s.kernel.cgroups[1].parent == "apps");
  CHECK(s.kernel.cgroups[1].uclamp_min_pct == std::optional<int64_t>(1235));  // 12.345: rounded to 12.35
  CHECK(s.tasks[0].cgroup == "top-app");
  const auto& ev = s.tasks[0].phases[0].events;
  CHECK(ev[1].kind == EventSpec::Kind::kCgroup);
  CHECK(ev[1].name == "/");
  CHECK(ev[2].kind == EventSpec::Kind::kCpuUclamp);
  CHECK(ev[2].uclamp_min == std::optional<uint32_t>(500));
  CHECK_FALSE(ev[2].uclamp_max);
  // It runs.
  s.duration = Time::ms(50);
  System sys(s, 1);
  sys.run();

  // Each error: the YAML after `on` (kernel.uclamp enabled unless noted),
  // the key it names, and words of its message.
  const std::string task = "tasks:\n  - name: t\n    events: [run: 1ms]\n";
  auto check_error = [&](const std::string& yaml, const std::string& key, const std::string& words) {
    ConfigError e = error_of(yaml);
    CHECK(e.key_path() == key);
    CHECK_THAT(e.message(), Catch::Contains(words));
    return e;
  };
  ConfigError off = check_error("cgroups:\n  - name: a\n    uclamp_min: 10\n" + task, "cgroups[0].uclamp_min",
                                "CONFIG_UCLAMP_TASK_GROUP");  // uclamp not enabled
  CHECK(off.line() == 3);
  check_error(on + "cgroups:\n  - name: a\n    uclamp_max: 100.5\n" + task, "cgroups[0].uclamp_max", "ERANGE");
  check_error(on + "cgroups:\n  - name: a\n    uclamp_max: lots\n" + task, "cgroups[0].uclamp_max",
              "percent 0..100 (two decimals) or max");
  check_error(on + "cgroups:\n  - name: a\n    parent: b\n  - name: b\n" + task, "cgroups[0].parent",
              "unknown cgroup 'b' (valid: /)");
  check_error(on + "cgroups:\n  - name: a\n  - name: a\n" + task, "cgroups[1].name", "duplicate cgroup name 'a'");
  check_error(on + "cgroups:\n  - name: /\n" + task, "cgroups[0].name", "root group");
  check_error(on + "cgroups:\n  - name: top-app\ntasks:\n  - name: t\n    cgroup: top_app\n    events: [run: 1ms]\n",
              "tasks[0].cgroup", "did you mean 'top-app'");
  check_error(on + "cgroups:\n  - name: a\ntasks:\n  - name: t\n    events: [{cpu_uclamp: {group: /, min: 5}}]\n",
              "tasks[0].events[0].cpu_uclamp.group", "unknown cgroup '/' (valid: a)");
  check_error(on + "cgroups:\n  - name: a\ntasks:\n  - name: t\n    events: [{cpu_uclamp: {group: a}}]\n",
              "tasks[0].events[0].cpu_uclamp", "expected 'min', 'max' or both");
  check_error(on + "cgroups:\n  - name: a\ntasks:\n  - name: t\n    events: [{cgroup: b}]\n",
              "tasks[0].events[0].cgroup", "unknown cgroup 'b' (cgroups: /, a)");
}

// Without uclamp the groups exist and tasks move between them (through
// the change path, as in the kernel), with nothing to restrict: the static
// key stays off and no rq refcounts a clamp.
TEST_CASE("cgroups without uclamp: moves happen, nothing is clamped", "[uclamp][cgroup]") {
  ScenarioParams p = toy_groups({group("top-app")});
  p.kernel.uclamp = false;
  p.duration = Time::ms(500);
  TaskSpec t = task("t", {ev_run(Time::ms(2)), ev_cgroup("top-app"), ev_sleep(Time::ms(6))});
  t.phases[0].loop = 1;
  t.loop = 1;
  p.tasks = {t, hog("h")};
  System sys(p, 1);
  Kernel& k = sys.kernel();
  sys.run();
  CHECK(find_task(k, "t").task_group == k.find_task_group("top-app"));
  CHECK_FALSE(k.uclamp_is_used());
  for (int c = 0; c < k.nr_cpus(); ++c) CHECK(k.rq(c).uclamp.clamp[kUclampMax].bucket[4].tasks == 0);
  check_conservation(sys.result());
}
