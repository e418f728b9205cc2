// Reports of experiments/lib: aggregation over runs, the JSON writer, the
// JSON and CSV reports, the tables, atomic output files and the ftrace
// writer, all on hand-made inputs (no simulation).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "experiment_test_util.h"
#include "experiments/lib/aggregate.h"
#include "experiments/lib/atomic_file.h"
#include "experiments/lib/ftrace_writer.h"
#include "experiments/lib/json_writer.h"
#include "experiments/lib/report_csv.h"
#include "experiments/lib/report_json.h"
#include "experiments/lib/report_table.h"
#include "experiments/lib/runner.h"
#include "models/kernel/sched/task.h"

using namespace schedlab;
using namespace schedlab::testing;
using namespace schedlab::time_literals;

namespace {

RunResult run(uint64_t seed, Time start, Time end) {
  RunResult r;
  r.seed = seed;
  r.window_start = start;
  r.window_end = end;
  return r;
}

// Two runs of one CPU-second each: tasks a (pid 1) and two instances of the
// group "hog" (pids 2, 3).
std::vector<RunResult> two_runs() {
  std::vector<RunResult> runs;
  {
    RunResult r = run(11, 0_s, 1_s);
    TaskMetrics a = task_metrics(1, "a", "a", {1000, 2000}, 100_ms);
    a.preemptions = 1;
    a.deadline_misses = 1;
    a.periods = 10;
    a.runnable_wait.add(500);
    a.response.add(4000000);
    r.tasks.push_back(a);
    r.tasks.push_back(task_metrics(2, "hog-0", "hog", {10000}, 450_ms));
    r.tasks.push_back(task_metrics(3, "hog-1", "hog", {}, 450_ms));
    r.cpus.push_back(cpu_metrics(1_s, 0_s, 7));
    runs.push_back(r);
  }
  {
    RunResult r = run(12, 0_s, 1_s);
    TaskMetrics a = task_metrics(1, "a", "a", {3000, 4000}, 300_ms);
    a.preemptions = 4;
    a.deadline_misses = 2;
    a.periods = 10;
    r.tasks.push_back(a);
    r.tasks.push_back(task_metrics(2, "hog-0", "hog", {30000}, 350_ms));
    r.tasks.push_back(task_metrics(3, "hog-1", "hog", {20000}, 350_ms));
    r.cpus.push_back(cpu_metrics(900_ms, 100_ms, 9));
    runs.push_back(r);
  }
  return runs;
}

RunSet make_set() {
  RunSet set;
  set.scenario.name = "unit";
  set.scenario.source = "unit.yaml";
  set.scenario.kernel_version = "6.12";
  set.scenario.hz = 250;
  set.scenario.preempt = "full";
  set.scenario.cpus = 1;
  set.scenario.duration = 1_s;
  set.base_seed = 7;
  set.runs = two_runs();
  set.aggregate = aggregate_runs(set.runs);
  return set;
}

const TaskAggregate& find_task(const Aggregate& a, const std::string& name) {
  for (const auto& t : a.tasks)
    if (t.name == name) return t;
  FAIL("no task " << name);
  throw 0;
}

size_t count_fields(const std::string& line) {
  // Unquoted CSV lines only (the report quotes nothing in these tests).
  return static_cast<size_t>(std::count(line.begin(), line.end(), ',')) + 1;
}

}  // namespace

TEST_CASE("aggregation pools a task's samples over all runs", "[aggregate]") {
  Aggregate a = aggregate_runs(two_runs());
  REQUIRE(a.runs == 2);
  const TaskAggregate& t = find_task(a, "a");
  // {1000, 2000} + {3000, 4000}: numpy-linear percentiles of the pooled set.
  CHECK(t.stats.wakeup_latency.count == 4);
  CHECK(t.stats.wakeup_latency.mean == Approx(2500));
  CHECK(t.stats.wakeup_latency.p50 == Approx(2500));
  CHECK(t.stats.wakeup_latency.p90 == Approx(3700));
  CHECK(t.stats.wakeup_latency.max == Approx(4000));
  CHECK(t.stats.wakeup_latency.min == Approx(1000));
  CHECK(t.stats.runnable_wait.count == 1);
  CHECK(t.stats.response.count == 1);
}

TEST_CASE("aggregation sums counts and gives their mean per run", "[aggregate]") {
  Aggregate a = aggregate_runs(two_runs());
  const TaskAggregate& t = find_task(a, "a");
  CHECK(t.stats.runs == 2);
  CHECK(t.stats.wakeups == 4);
  CHECK(t.stats.preemptions == 5);
  CHECK(t.stats.per_run(t.stats.preemptions) == Approx(2.5));
  CHECK(t.stats.deadline_misses == 3);
  CHECK(t.stats.per_run(t.stats.deadline_misses) == Approx(1.5));
  CHECK(t.stats.periods == 20);
}

TEST_CASE("CPU share is cpu time over elapsed time, per task and per group", "[aggregate]") {
  Aggregate a = aggregate_runs(two_runs());
  CHECK(a.elapsed == 2_s);
  // a: (100 + 300) ms over 2 s.
  CHECK(find_task(a, "a").stats.cpu_share() == Approx(0.2));
  CHECK(find_task(a, "hog-0").stats.cpu_share() == Approx(0.4));
  REQUIRE(a.groups.size() == 2);
  const GroupAggregate& hog = a.groups[1];
  CHECK(hog.name == "hog");
  CHECK(hog.instances == 2);
  CHECK(hog.stats.runs == 2);
  // (450 + 450 + 350 + 350) ms over 2 s of elapsed time (not 4 s: the
  // group's share adds its instances' shares).
  CHECK(hog.stats.cpu_share() == Approx(0.8));
  CHECK(hog.stats.wakeup_latency.count == 3);
  CHECK(hog.stats.wakeup_latency.p50 == Approx(20000));
  CHECK(a.any_group_with_instances());
}

TEST_CASE("tasks are listed by pid and matched across runs by pid and name", "[aggregate]") {
  std::vector<RunResult> runs = two_runs();
  std::swap(runs[1].tasks[0], runs[1].tasks[2]);  // order within a run does not matter
  Aggregate a = aggregate_runs(runs);
  REQUIRE(a.tasks.size() == 3);
  CHECK(a.tasks[0].name == "a");
  CHECK(a.tasks[1].name == "hog-0");
  CHECK(a.tasks[2].name == "hog-1");
  CHECK(a.tasks[2].stats.runs == 2);
}

TEST_CASE("per-CPU busy and idle are summed and checked against elapsed", "[aggregate]") {
  Aggregate a = aggregate_runs(two_runs());
  REQUIRE(a.cpus.size() == 1);
  const CpuAggregate& c = a.cpus[0];
  CHECK(c.busy == 1900_ms);
  CHECK(c.idle == 100_ms);
  CHECK(c.elapsed == 2_s);
  CHECK(c.busy_fraction() == Approx(0.95));
  CHECK(c.context_switches == 16);
  CHECK(c.per_run(c.context_switches) == Approx(8));
  CHECK(a.check.holds);
  CHECK(a.check.max_error_ns == 0);

  SECTION("a CPU whose busy + idle is not the elapsed time fails the check") {
    std::vector<RunResult> runs = two_runs();
    runs[1].cpus[0].idle = 99_ms;
    Aggregate bad = aggregate_runs(runs);
    CHECK_FALSE(bad.check.holds);
    CHECK(bad.check.run == 1);
    CHECK(bad.check.cpu == 0);
    CHECK(bad.check.max_error_ns == 1000000);
    RunSet set = make_set();
    set.runs = runs;
    set.aggregate = bad;
    CHECK_THAT(render_cpu_table(set), Catch::Contains("check FAILED"));
  }
}

TEST_CASE("JSON strings are escaped", "[json]") {
  CHECK(json_quote("plain") == "\"plain\"");
  CHECK(json_quote("a\"b\\c") == "\"a\\\"b\\\\c\"");
  CHECK(json_quote("tab\tnl\ncr\rbs\bff\f") == "\"tab\\tnl\\ncr\\rbs\\bff\\f\"");
  CHECK(json_quote(std::string("nul\0x", 5)) == "\"nul\\u0000x\"");
  CHECK(json_quote("\x01\x1f\x7f") == "\"\\u0001\\u001f\\u007f\"");
  CHECK(json_quote("/ stays") == "\"/ stays\"");
  SECTION("valid UTF-8 passes through, invalid bytes become U+FFFD") {
    CHECK(json_quote("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80") == "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
    CHECK(json_quote("bad\xff") == "\"bad\\ufffd\"");
    CHECK(json_quote("\xc3") == "\"\\ufffd\"");               // truncated sequence
    CHECK(json_quote("\xc0\xaf") == "\"\\ufffd\\ufffd\"");     // overlong '/'
    CHECK(json_quote("\xed\xa0\x80") == "\"\\ufffd\\ufffd\\ufffd\"");  // surrogate
  }
}

TEST_CASE("JSON numbers have fixed decimals and no negative zero", "[json]") {
  CHECK(json_number(1.5, 3) == "1.500");
  CHECK(json_number(-0.0001, 3) == "0.000");
  CHECK(json_number(-0.5, 3) == "-0.500");
  CHECK(json_number(1e9, 3) == "1000000000.000");
  CHECK(json_number(std::nan(""), 3) == "null");
  CHECK(json_number(HUGE_VAL, 3) == "null");
}

TEST_CASE("the JSON writer writes keys in order with two-space indents", "[json]") {
  JsonWriter w;
  w.begin_object();
  w.field("b", 1);
  w.field("a", "x\"y");
  w.key("list");
  w.begin_array();
  w.value(true);
  w.null();
  w.value(2.25, 1);
  w.begin_object();
  w.end_object();
  w.end_array();
  w.key("empty");
  w.begin_array();
  w.end_array();
  w.end_object();
  CHECK(w.complete());
  CHECK(w.str() ==
        "{\n"
        "  \"b\": 1,\n"
        "  \"a\": \"x\\\"y\",\n"
        "  \"list\": [\n"
        "    true,\n"
        "    null,\n"
        "    2.2,\n"
        "    {}\n"
        "  ],\n"
        "  \"empty\": []\n"
        "}\n");
  SECTION("misuse is a logic error, not bad JSON") {
    JsonWriter bad;
    bad.begin_object();
    CHECK_THROWS_AS(bad.value(1), std::logic_error);
    CHECK_THROWS_AS(bad.end_array(), std::logic_error);
  }
}

// Rendering only (one in-process value rendered twice, and its literal
// values); that a seed fixes the simulated bytes, and another seed changes
// them, is test_cli.cc's "two runs with the same seed give byte-identical JSON".
TEST_CASE("the JSON report is byte-for-byte deterministic", "[json]") {
  const std::string first = render_json(make_set());
  const std::string second = render_json(make_set());
  CHECK(first == second);
  CHECK(first.rfind("{\n  \"format\": \"schedlab.run\",\n  \"format_version\": 1,\n", 0) == 0);
  CHECK_THAT(first, Catch::Contains("\"p50_us\": 2.500"));
  CHECK_THAT(first, Catch::Contains("\"cpu_share\": 0.200000"));
  CHECK_THAT(first, Catch::Contains("\"deadline_misses_per_run\": 1.500"));
  CHECK_THAT(first, Catch::Contains("\"duration_s\": 1.000000000"));
  CHECK_THAT(first, Catch::Contains("\"busy_plus_idle_equals_elapsed\": true"));
  // A distribution without samples has null statistics, not zeros.
  CHECK_THAT(first, Catch::Contains("\"count\": 0,\n            \"mean_us\": null"));
  CHECK(first.back() == '\n');
}

TEST_CASE("the CSV header is stable", "[csv]") {
  // Columns may be appended in later versions, never renamed or reordered:
  // scripts read them by name. Update docs/outputs.md with this list.
  const std::string expected =
      "kind,run,name,group,pid,policy,nice,rt_priority,prio,instances,runs,elapsed_s,cpu_time_s,cpu_share,"
      "runnable_time_s,sleep_time_s,blocked_time_s,wakeups,wakeups_per_run,preemptions,preemptions_per_run,"
      "switches_in,switches_in_per_run,migrations,migrations_per_run,periods,periods_per_run,deadline_misses,"
      "deadline_misses_per_run,"
      "wakeup_latency_count,wakeup_latency_mean_us,wakeup_latency_min_us,wakeup_latency_p50_us,"
      "wakeup_latency_p90_us,wakeup_latency_p95_us,wakeup_latency_p98_us,wakeup_latency_p99_us,"
      "wakeup_latency_max_us,"
      "runnable_wait_count,runnable_wait_mean_us,runnable_wait_min_us,runnable_wait_p50_us,runnable_wait_p90_us,"
      "runnable_wait_p95_us,runnable_wait_p98_us,runnable_wait_p99_us,runnable_wait_max_us,"
      "response_count,response_mean_us,response_min_us,response_p50_us,response_p90_us,response_p95_us,"
      "response_p98_us,response_p99_us,response_max_us,"
      "cpu,busy_s,idle_s,busy_pct,idle_pct,context_switches,context_switches_per_run";
  const std::string csv = render_csv(make_set());
  std::istringstream in(csv);
  std::string header;
  std::getline(in, header);
  CHECK(header == expected);

  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  // 3 tasks + 2 groups + 1 cpu aggregated, then per run 3 tasks + 1 cpu.
  REQUIRE(lines.size() == 6 + 2 * 4);
  for (const std::string& line : lines) CHECK(count_fields(line) == csv_columns().size());
  CHECK(lines[0].rfind("task,all,a,a,1,SCHED_OTHER,0,0,120,,2,2.000000000,0.400000000,0.200000,", 0) == 0);
  CHECK(lines[3].rfind("group,all,a,a,,SCHED_OTHER,0,0,120,1,2,", 0) == 0);
  CHECK(lines[5].rfind("cpu,all,cpu0,,,,,,,,2,2.000000000,", 0) == 0);
  CHECK(lines[5].find(",0,1.900000000,0.100000000,95.000,5.000,16,8.000") != std::string::npos);
  CHECK(lines[6].rfind("task,0,a,a,1,", 0) == 0);
  CHECK(render_csv(make_set()) == csv);
}

TEST_CASE("CSV fields are quoted only when they must be", "[csv]") {
  CHECK(csv_field("plain") == "plain");
  CHECK(csv_field("a,b") == "\"a,b\"");
  CHECK(csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(csv_field("two\nlines") == "\"two\nlines\"");
}

TEST_CASE("table cells and labels", "[table]") {
  CHECK(format_us_cell(12345, 1) == "12.35");
  CHECK(format_us_cell(123456, 1) == "123.5");
  CHECK(format_us_cell(5, 1) == "0.01");
  CHECK(format_us_cell(5000, 0) == "-");
  CHECK(format_seconds_exact(1500_ms) == "1.500000000s");
  CHECK(format_seconds_exact(Time::ns(-1)) == "-0.000000001s");
  CHECK(policy_prio_label(Policy::kNormal, 0, 0) == "OTHER n0");
  CHECK(policy_prio_label(Policy::kNormal, -20, 0) == "OTHER n-20");
  CHECK(policy_prio_label(Policy::kBatch, 5, 0) == "BATCH n5");
  CHECK(policy_prio_label(Policy::kIdle, 0, 0) == "IDLE");
  CHECK(policy_prio_label(Policy::kFifo, 0, 50) == "FIFO 50");
  CHECK(policy_prio_label(Policy::kRr, 0, 1) == "RR 1");
  CHECK(kernel_prio(Policy::kFifo, 0, 50) == 49);
  CHECK(kernel_prio(Policy::kNormal, -1, 0) == 119);
}

TEST_CASE("the tables show every task, the groups with instances and the CPU check", "[table]") {
  RunSet set = make_set();
  set.runs[0].tasks[0].policy = Policy::kFifo;
  set.runs[0].tasks[0].rt_priority = 50;
  set.runs[1].tasks[0].policy = Policy::kFifo;
  set.runs[1].tasks[0].rt_priority = 50;
  set.aggregate = aggregate_runs(set.runs);
  const std::string tasks = render_task_table(set);
  CHECK_THAT(tasks, Catch::Contains("wakeup latency (us)"));
  CHECK_THAT(tasks, Catch::Contains("wakeups/run"));  // 2 runs: counts per run
  CHECK_THAT(tasks, Catch::Contains("FIFO 50"));
  CHECK_THAT(tasks, Catch::Contains("OTHER n0"));
  // a: CPU 20.0%, 2 wakeups per run, mean 2.50 us, P50 2.50, P90 3.70, P99 3.97, max 4.00.
  CHECK_THAT(tasks, Catch::Matches(
                        "[\\s\\S]*\\na +1 +FIFO 50 +20\\.0 +2\\.00 +2\\.50 +2\\.50 +3\\.70 +3\\.97 +4\\.00 +0\\.50 +0\\.50 "
                        "+10\\.00 +1\\.50\\n[\\s\\S]*"));
  const std::string groups = render_group_table(set);
  CHECK_THAT(groups, Catch::Contains("hog "));
  CHECK_THAT(groups, Catch::Matches("[\\s\\S]*\\nhog +2 +OTHER n0 +80\\.0 [\\s\\S]*"));
  CHECK(groups.find("\na ") == std::string::npos);  // a lone task has no group row
  const std::string cpus = render_cpu_table(set);
  CHECK_THAT(cpus, Catch::Contains("cpu0"));
  CHECK_THAT(cpus, Catch::Contains("95.0"));
  CHECK_THAT(cpus, Catch::Contains(
                       "check: busy + idle = elapsed on every CPU in every run (1 CPU x 2 runs): "
                       "1.900000000s + 0.100000000s = 2.000000000s  OK"));
  CHECK(format_run_header(set) == "unit: kernel 6.12 (HZ=250, preempt=full), 1 CPU, duration 1.000s, 2 runs, seed 7");
  // Zero-latency wake-ups are flagged as the absence of modelled costs,
  // unless the scenario sets one (scenario_info() reads kernel.overheads).
  CHECK_THAT(overheads_note(set.scenario), Catch::StartsWith("note: no scheduling overheads modelled"));
  ScenarioParams costed;
  CHECK_FALSE(scenario_info(costed).overheads_modelled);
  costed.kernel.ipi_latency = Time::us(5);
  CHECK(scenario_info(costed).overheads_modelled);
  CHECK(overheads_note(scenario_info(costed)).empty());

  SECTION("no group table when every group has one task") {
    RunSet single = make_set();
    for (auto& r : single.runs) r.tasks.resize(1);
    single.aggregate = aggregate_runs(single.runs);
    CHECK(render_group_table(single).empty());
  }
  SECTION("one run shows plain counts") {
    RunSet one = make_set();
    one.runs.resize(1);
    one.aggregate = aggregate_runs(one.runs);
    CHECK_THAT(render_task_table(one), !Catch::Contains("/run"));
    CHECK_THAT(render_report(one), Catch::Contains("(1 CPU x 1 run)"));
  }
}

TEST_CASE("an atomic file appears only when committed", "[atomic]") {
  const ScratchDir scratch("atomic");
  const auto& dir = scratch.path;
  const auto path = (dir / "out.json").string();

  SECTION("commit renames the temporary over the file") {
    {
      AtomicFile f(path);
      f.write("hello\n");
      CHECK(std::filesystem::exists(f.temp_path()));
      CHECK(f.temp_path() == path + ".tmp-" + std::to_string(::getpid()));
      CHECK_FALSE(std::filesystem::exists(path));
      f.commit();
      CHECK_FALSE(std::filesystem::exists(f.temp_path()));
    }
    CHECK(slurp(path) == "hello\n");
  }
  SECTION("a file never committed leaves nothing, and an old file stays as it was") {
    write_file_atomically(path, "old\n");
    try {
      AtomicFile f(path);
      f.write("partial");
      throw std::runtime_error("simulation failed");
    } catch (const std::runtime_error&) {
    }
    CHECK(slurp(path) == "old\n");
    CHECK(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()) == 1);
  }
  SECTION("an unwritable path fails up front with OutputError") {
    CHECK_THROWS_AS(AtomicFile((dir / "missing_dir" / "x.json").string()), OutputError);
    CHECK_THROWS_WITH(AtomicFile((dir / "missing_dir" / "x.json").string()), Catch::Contains("cannot write"));
  }
  SECTION("commit_all commits every file") {
    AtomicFile a((dir / "a").string()), b((dir / "b").string());
    a.write("a");
    b.write("b");
    commit_all({&a, &b});
    CHECK(slurp(dir / "a") == "a");
    CHECK(slurp(dir / "b") == "b");
  }
}

namespace {

struct TraceTasks {
  Task idle0, idle1, a, b;
  TraceTasks() {
    for (Task* idle : {&idle0, &idle1}) {
      idle->pid = 0;
      idle->is_idle_task = true;
      idle->prio = 120;
    }
    idle0.comm = "swapper/0";
    idle1.comm = "swapper/1";
    idle1.cpu = 1;
    a.pid = 10;
    a.comm = "hog a";  // a space: written as hog_a
    a.prio = 120;
    a.cpu = 0;
    a.se.avg.util_avg = 300;                      // written as it leaves the CPU
    a.se.avg.util_est.raw = 250 | kUtilAvgUnchanged;  // the flag bit is not part of the value
    b.pid = 11;
    b.comm = "rt";
    b.policy = Policy::kFifo;
    b.sched_class = SchedClassId::kRt;  // no util lines for it
    b.rt_priority = 50;
    b.prio = 49;
    b.cpu = 0;
  }
};

// A short scripted schedule on two CPUs, written through the observer calls.
void script(FtraceWriter& w, TraceTasks& t) {
  w.on_task_new(0_ns, t.a);
  w.on_waking(0_ns, t.a, nullptr, 0);
  w.on_wakeup(0_ns, t.a, 0);
  w.on_cpu_idle(1_us, 0, -1);
  w.on_switch(Time::ns(1500), 0, t.idle0, TaskState::kRunning, t.a);
  w.on_waking(Time::ns(2000005), t.b, &t.a, 1);
  w.on_migrate(Time::ns(2000005), t.b, 0, 1);
  t.b.cpu = 1;
  w.on_wakeup(Time::ns(2000005), t.b, 1);
  w.on_cpu_idle(Time::ns(2000100), 1, -1);
  w.on_switch(Time::ns(2000200), 1, t.idle1, TaskState::kRunning, t.b);
  w.on_prio_change(3_ms, t.a, 120, 49, true);
  w.on_prio_change(Time::ns(3000500), t.a, 49, 110, false);  // a setscheduler change: not traced
  w.on_switch(4_ms, 0, t.a, TaskState::kUninterruptible, t.idle0);
  w.on_cpu_util(4_ms, 0, 200, 0);
  w.on_cpu_util(4_ms, 0, 200, 0);  // unchanged: not written again
  w.on_cpu_idle(4_ms, 0, 1);
  w.on_switch(5_ms, 1, t.b, TaskState::kRunning, t.idle1);
  w.on_switch(1001_s, 1, t.idle1, TaskState::kRunning, t.b);
}

const char* kTraceHeader =
    "# tracer: nop\n"
    "#\n"
    "# unit test   #P:2\n"
    "#\n"
    "#                                _-----=> irqs-off\n"
    "#                               / _----=> need-resched\n"
    "#                              | / _---=> hardirq/softirq\n"
    "#                              || / _--=> preempt-depth\n"
    "#                              ||| /     delay\n"
    "#           TASK-PID     TGID  CPU#  ||||   TIMESTAMP  FUNCTION\n"
    "#              | |         |     |   ||||      |         |\n";

}  // namespace

TEST_CASE("the ftrace writer prints the kernel's line format", "[ftrace]") {
  std::ostringstream out;
  TraceTasks t;
  {
    FtraceWriter w(out, {true, 2, "unit test"});
    script(w, t);
    CHECK(w.events() == 18);
  }
  const std::string expected = std::string(kTraceHeader) +
      "          <idle>-0       (-------) [000] d.h2     0.000000000: sched_waking: comm=hog_a pid=10 prio=120 target_cpu=000\n"
      "          <idle>-0       (-------) [000] d.h2     0.000000000: sched_wakeup_new: comm=hog_a pid=10 prio=120 target_cpu=000\n"
      "          <idle>-0       (-------) [000] d..2     0.000001000: cpu_idle: state=4294967295 cpu_id=0\n"
      "          <idle>-0       (-------) [000] d..2     0.000001500: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=hog_a next_pid=10 next_prio=120\n"
      "           hog_a-10      (     10) [000] d..2     0.002000005: sched_waking: comm=rt pid=11 prio=49 target_cpu=001\n"
      "           hog_a-10      (     10) [000] d..2     0.002000005: sched_migrate_task: comm=rt pid=11 prio=49 orig_cpu=0 dest_cpu=1\n"
      "           hog_a-10      (     10) [000] d..2     0.002000005: sched_wakeup: comm=rt pid=11 prio=49 target_cpu=001\n"
      "          <idle>-0       (-------) [001] d..2     0.002000100: cpu_idle: state=4294967295 cpu_id=1\n"
      "          <idle>-0       (-------) [001] d..2     0.002000200: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=rt next_pid=11 next_prio=49\n"
      "           hog_a-10      (     10) [000] d..2     0.003000000: sched_pi_setprio: comm=hog_a pid=10 oldprio=120 newprio=49\n"
      "           hog_a-10      (     10) [000] d..2     0.004000000: sched_switch: prev_comm=hog_a prev_pid=10 prev_prio=120 prev_state=D ==> next_comm=swapper/0 next_pid=0 next_prio=120\n"
      "           hog_a-10      (     10) [000] d..2     0.004000000: tracing_mark_write: C|10|util_avg|300\n"
      "           hog_a-10      (     10) [000] d..2     0.004000000: tracing_mark_write: C|10|util_est|250\n"
      "          <idle>-0       (-------) [000] d..2     0.004000000: tracing_mark_write: C|0|cpu0 util_cfs|200\n"
      "          <idle>-0       (-------) [000] d..2     0.004000000: tracing_mark_write: C|0|cpu0 util_rt|0\n"
      "          <idle>-0       (-------) [000] d..2     0.004000000: cpu_idle: state=1 cpu_id=0\n"
      "              rt-11      (     11) [001] d..2     0.005000000: sched_switch: prev_comm=rt prev_pid=11 prev_prio=49 prev_state=R+ ==> next_comm=swapper/1 next_pid=0 next_prio=120\n"
      "          <idle>-0       (-------) [001] d..2  1001.000000000: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=rt next_pid=11 next_prio=49\n";
  CHECK(out.str() == expected);

  SECTION("microsecond timestamps round like the kernel's ns2usecs()") {
    std::ostringstream us;
    TraceTasks t2;
    {
      FtraceWriter w(us, {false, 0, ""});
      script(w, t2);
    }
    const std::string text = us.str();
    CHECK(text.rfind("# tracer: nop\n#\n#                                _-----=> irqs-off\n", 0) == 0);
    CHECK_THAT(text, Catch::Contains("[000] d..2     0.000002: sched_switch: prev_comm=swapper/0"));  // 1500 ns
    CHECK_THAT(text, Catch::Contains("[000] d..2     0.002000: sched_waking: comm=rt"));            // 2000005 ns
    CHECK_THAT(text, Catch::Contains("[001] d..2  1001.000000: sched_switch"));
  }
}

TEST_CASE("DRM job tracepoints appear in the context that fires them", "[ftrace]") {
  // drm_sched_job in the submitter's ioctl, drm_run_job in the scheduler's
  // worker on its CPU, drm_sched_process_job in the job interrupt (hardirq
  // flags, the interrupted task shown), as include/drm/gpu_scheduler_trace.h
  // fires them.
  std::ostringstream out;
  TraceTasks t;  // a: the submitter on CPU 0; b: the worker, here on CPU 1
  t.b.cpu = 1;
  {
    FtraceWriter w(out, {true, 2, "unit test"});
    w.on_switch(Time::ns(1000), 0, t.idle0, TaskState::kRunning, t.a);
    DrmJobEvent e;
    e.sched = "gpu";
    e.entity = "q";
    e.job = 1;
    e.submitter = &t.a;
    e.where = {&t.a, 0};
    w.on_drm_job(Time::ns(2000), e);
    e.phase = DrmJobEvent::Phase::kRun;
    e.where = {&t.b, 1};
    w.on_drm_job(Time::ns(3000), e);
    e.phase = DrmJobEvent::Phase::kDone;
    e.where = {nullptr, 0};  // the interrupt on CPU 0, where the submitter runs
    w.on_drm_job(Time::ns(4000), e);
  }
  const std::string text = out.str();
  CHECK_THAT(text, Catch::Contains("hog_a-10      (     10) [000] d..2     0.000002000: drm_sched_job: entity=q id=1 ring=gpu"));
  CHECK_THAT(text, Catch::Contains("rt-11      (     11) [001] d..2     0.000003000: drm_run_job: entity=q id=1 ring=gpu"));
  CHECK_THAT(text, Catch::Contains("hog_a-10      (     10) [000] d.h2     0.000004000: drm_sched_process_job: entity=q id=1"));
}

TEST_CASE("every ftrace line parses with Perfetto's systrace tokenizer", "[ftrace]") {
  // The regex of perfetto src/trace_processor/importers/systrace/
  // systrace_line_tokenizer.cc (the version before the hand-written parser,
  // which accepts a superset), and sched_switch's arguments as its line
  // parser reads them: space-separated key=value tokens.
  const std::regex line_re(R"(-(\d+)\s+\(?\s*(\d+|-+)?\)?\s?\[(\d+)\]\s*)"
                           R"([a-zA-Z0-9.]{0,4}\s+(\d+\.\d+):\s+(\S+):)");
  std::ostringstream out;
  TraceTasks t;
  {
    FtraceWriter w(out, {true, 2, "unit test"});
    script(w, t);
  }
  std::istringstream in(out.str());
  int lines = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    ++lines;
    std::smatch m;
    INFO(line);
    REQUIRE(std::regex_search(line, m, line_re));
    const std::string task = m.prefix().str();
    CHECK((task.find("hog_a") != std::string::npos || task.find("<idle>") != std::string::npos ||
           task.find("rt") != std::string::npos));
    const std::string event = m[5].str();
    std::string args = m.suffix().str();
    if (event == "tracing_mark_write") {  // atrace: "C|pid|name|value", a counter
      CHECK_THAT(args, Catch::Matches(" C\\|\\d+\\|(util_(avg|est)|cpu\\d+ util_(cfs|rt))\\|\\d+"));
      continue;
    }
    std::istringstream tokens(args);
    for (std::string tok; tokens >> tok;) {
      if (tok == "==>") continue;
      CHECK(std::count(tok.begin(), tok.end(), '=') == 1);
    }
    if (event == "sched_switch") {
      CHECK_THAT(args, Catch::Matches(" prev_comm=\\S+ prev_pid=\\d+ prev_prio=\\d+ prev_state=(R\\+?|S|D|X) ==> "
                                      "next_comm=\\S+ next_pid=\\d+ next_prio=\\d+"));
    }
  }
  CHECK(lines == 18);
}

TEST_CASE("comms are written without whitespace", "[ftrace]") {
  CHECK(FtraceWriter::sanitize_comm("kworker/u16:1") == "kworker/u16:1");
  CHECK(FtraceWriter::sanitize_comm("Render Thread") == "Render_Thread");
  CHECK(FtraceWriter::sanitize_comm("tab\there") == "tab_here");
  CHECK(FtraceWriter::sanitize_comm("") == "<...>");
}
