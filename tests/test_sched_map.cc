// `schedlab run --sched-map`: a run's context switches in the layout of
// `perf sched map` (experiments/lib/sched_map.h).
#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include "experiment_test_util.h"
#include "experiments/lib/sched_map.h"
#include "models/kernel/sched/task.h"

using namespace schedlab;
using namespace schedlab::testing;
using namespace schedlab::time_literals;

namespace {

struct MapTasks {
  Task idle0, idle1, a, b, c, d;
  MapTasks() {
    for (Task* idle : {&idle0, &idle1}) {
      idle->pid = 0;
      idle->is_idle_task = true;
    }
    a.pid = 10;
    a.comm = "hog a";  // a space: written as hog_a, as in the ftrace writer
    b.pid = 11;
    b.comm = "rt";
    b.policy = Policy::kFifo;
    b.rt_priority = 50;
    c.pid = 12;
    c.comm = "ui";
    c.static_prio = kDefaultPrio - 5;
    d.pid = 13;
    d.comm = "idler";
    d.policy = Policy::kIdle;
  }
};

}  // namespace

TEST_CASE("the sched map prints perf sched map's columns, one line per switch", "[sched_map]") {
  std::ostringstream out;
  MapTasks t;
  {
    SchedMapWriter w(out, {2, "unit test"});
    w.on_switch(Time::ns(1500), 0, t.idle0, TaskState::kRunning, t.a);      // a's first switch-in names it
    w.on_switch(Time::ns(2000200), 1, t.idle1, TaskState::kRunning, t.b);
    w.on_switch(3_ms, 0, t.a, TaskState::kRunning, t.c);                    // c preempts a on cpu0
    w.on_switch(4_ms, 0, t.c, TaskState::kInterruptible, t.a);             // a again: no legend
    w.on_switch(5_ms, 1, t.b, TaskState::kInterruptible, t.idle1);         // cpu1 idles
    w.on_switch(Time::ns(1001000999999), 1, t.idle1, TaskState::kRunning, t.d);  // microseconds truncated
    w.on_switch(1002_s, 7, t.idle1, TaskState::kRunning, t.d);              // no such CPU: ignored
    CHECK(w.switches() == 6);
  }
  // Each CPU column: '*' on the CPU that switched (else ' '), the short
  // name padded to 2, a space; then two spaces, the time right-aligned in
  // 12 and " secs".
  CHECK(out.str() ==
        "# unit test\n"
        "# sched map (the layout of `perf sched map`): one line per context switch, a column per CPU\n"
        "# (cpu0 first) with the task it runs, . = idle, * = the CPU that switched; a task's first\n"
        "# switch-in names it (short name => comm:pid, and its policy unless SCHED_OTHER at nice 0).\n"
        "*A0  .        0.000001 secs A0 => hog_a:10\n"
        " A0 *B0       0.002000 secs B0 => rt:11 (SCHED_FIFO 50)\n"
        "*C0  B0       0.003000 secs C0 => ui:12 (nice -5)\n"
        "*A0  B0       0.004000 secs\n"
        " A0 *.        0.005000 secs\n"
        " A0 *D0    1001.000999 secs D0 => idler:13 (SCHED_IDLE)\n");
}

TEST_CASE("sched map short names go A0..Z9 as perf's, then on without reuse", "[sched_map]") {
  CHECK(SchedMapWriter::short_name(0) == "A0");
  CHECK(SchedMapWriter::short_name(25) == "Z0");
  CHECK(SchedMapWriter::short_name(26) == "A1");
  CHECK(SchedMapWriter::short_name(259) == "Z9");
  CHECK(SchedMapWriter::short_name(260) == "A10");  // perf would reuse A0 here
  CHECK(SchedMapWriter::short_name(261) == "B10");
}

TEST_CASE("schedlab run --sched-map writes two_hogs' hand-computed schedule", "[sched_map][cli]") {
  ScratchDir dir("sched_map");
  const std::string map = (dir / "r.map").string();
  Cli r = run_schedlab(dir, "run " + shell_quote(repo_path("configs/scenarios/two_hogs.yaml")) +
                                " --duration 10ms --seed 1 -q --sched-map " + shell_quote(map));
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.empty());
  // One CPU, two nice 0 hogs, 6.12 EEVDF at HZ=250: the base slice (0.75 ms
  // on one CPU) is over long before each 4 ms tick, so every tick
  // reschedules and pick_eevdf() takes the other hog, eligible with the
  // earlier deadline: a switch at 0, 4 and 8 ms.
  const std::string text = slurp(dir / "r.map");
  CHECK_THAT(text, Catch::StartsWith("# schedlab "));
  CHECK_THAT(text, Catch::Contains(": two_hogs run 0 seed "));
  CHECK_THAT(text, Catch::EndsWith(
                       "*A0       0.000000 secs A0 => hog_a:1\n"
                       "*B0       0.004000 secs B0 => hog_b:2\n"
                       "*A0       0.008000 secs\n"));

  // The file is one of the run's outputs: it may not be another output's path.
  Cli same = run_schedlab(dir, "run " + shell_quote(repo_path("configs/scenarios/two_hogs.yaml")) +
                                   " --duration 10ms -q --sched-map " + shell_quote(map) + " --trace " + shell_quote(map));
  CHECK(same.code == 2);
  CHECK_THAT(same.err, Catch::Contains("--trace and --sched-map name the same file"));
}
