// The schedlab command line, run as a program: help, exit codes, error
// messages, no partial output files, deterministic JSON.
#include <catch2/catch.hpp>

#include <filesystem>
#include <sstream>
#include <map>
#include <string>
#include <vector>

#include "experiment_test_util.h"

using namespace schedlab::testing;

namespace {

// The repository's two-hog scenario (configs/scenarios/two_hogs.yaml).
std::string two_hogs() { return repo_path("configs/scenarios/two_hogs.yaml"); }

}  // namespace

TEST_CASE("schedlab --help describes the commands and exits 0", "[cli]") {
  ScratchDir dir("help");
  Cli r = run_schedlab(dir, "--help");
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("usage: schedlab <command>"));
  CHECK_THAT(r.out, Catch::Contains("run"));
  CHECK_THAT(r.out, Catch::Contains("example:"));

  Cli run_help = run_schedlab(dir, "run --help");
  CHECK(run_help.code == 0);
  CHECK_THAT(run_help.out, Catch::Contains("usage: schedlab run CONFIG"));
  for (const char* opt : {"--seed", "--duration", "--runs", "--json", "--csv", "--trace", "--sched-map", "--log", "--quiet"})
    CHECK_THAT(run_help.out, Catch::Contains(opt));
  CHECK_THAT(run_help.out, Catch::Contains("example:"));
  CHECK(run_help.err.empty());

  Cli version = run_schedlab(dir, "--version");
  CHECK(version.code == 0);
  CHECK_THAT(version.out, Catch::StartsWith("schedlab "));
}

TEST_CASE("an unknown command exits 2", "[cli]") {
  ScratchDir dir("unknown_command");
  Cli r = run_schedlab(dir, "fly");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::StartsWith("error: unknown command 'fly'"));
}

TEST_CASE("a missing scenario file is an error with exit code 2", "[cli]") {
  ScratchDir dir("missing");
  const std::string json = (dir / "out.json").string();
  Cli r = run_schedlab(dir, "run " + shell_quote((dir / "no_such.yaml").string()) + " --json " + shell_quote(json));
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::StartsWith("error: "));
  CHECK_THAT(r.err, Catch::Contains("no_such.yaml"));
  CHECK(dir.entries().empty());
}

TEST_CASE("a scenario with an unknown key exits 2 and writes no output file", "[cli]") {
  ScratchDir dir("bad_yaml");
  const fs::path yaml = dir / "bad.yaml";
  write_text(yaml,
             "platform: {cpus: 1}\n"
             "duration: 1s\n"
             "no_such_key: 3\n"
             "tasks: [{name: hog, events: [{run: 10ms}]}]\n");
  Cli r = run_schedlab(dir, "run " + shell_quote(yaml.string()) + " --json " +
                                shell_quote((dir / "out.json").string()) + " --csv " +
                                shell_quote((dir / "out.csv").string()) + " --trace " +
                                shell_quote((dir / "out.trace").string()));
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::StartsWith("error: "));
  CHECK_THAT(r.err, Catch::Contains("no_such_key"));
  CHECK(r.out.empty());
  // Neither the outputs nor their temporaries.
  CHECK(dir.entries() == std::vector<std::string>{"bad.yaml"});
}

TEST_CASE("bad command lines exit 2 with a clear message and no output file", "[cli]") {
  ScratchDir dir("bad_args");
  const std::string scenario = two_hogs();
  const std::vector<std::string> before = dir.entries();
  const std::string json = " --json " + shell_quote((dir / "out.json").string());
  auto [args, message] = GENERATE(table<std::string, std::string>({
      {"--duration 5", "has no unit"},
      {"--duration 5parsecs", "unknown unit"},
      {"--duration 0s", "must be positive"},
      {"--duration -1s", "must be positive"},
      {"--warmup 5", "has no unit"},
      {"--duration 1s --warmup 2s", "must be longer than the --warmup (2.000s)"},
      {"--runs 0", "--runs must be between 1"},
      {"--runs -1", "--runs expects a non-negative integer"},
      {"--runs many", "--runs expects a non-negative integer"},
      {"--seed 1.5", "--seed expects a non-negative integer"},
      {"--seed 99999999999999999999999", "too large"},
      {"--no-such-option", "option '--no-such-option'"},
      {"--runz 3", "unrecognised option '--runz'; did you mean '--runs'?"},
      {"--runs", "argument for option '--runs' is missing"},
      {"--log loud", "unknown level 'loud'"},
      {"--runs 2 --runs 3", "cannot be specified more than once"},
      {"extra.yaml", "one CONFIG expected"},
  }));
  CAPTURE(args);
  Cli r = run_schedlab(dir, "run " + shell_quote(scenario) + json + " " + args);
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::StartsWith("error: "));
  CHECK_THAT(r.err, Catch::Contains(message));
  CHECK(r.out.empty());
  CHECK(dir.entries() == before);
}

// A file for another command names the command that runs it, at the key
// that shows what it is, instead of listing the wrong file kind's keys.
TEST_CASE("a file given to the wrong command names the right one", "[cli][config]") {
  ScratchDir dir("wrong_command");
  const std::string scenario = two_hogs();
  const std::string exp = (dir / "exp.yaml").string();
  write_text(exp, "scenario: " + scenario + "\nruns: 1\nvariants: [{name: a}, {name: b}]\n");
  const std::string sweep = (dir / "sweep.yaml").string();
  write_text(sweep, "scenario: " + scenario + "\nruns: 1\ngrid:\n  kernel.hz: [250, 1000]\n");
  auto [command, file, message] = GENERATE_REF(table<std::string, std::string, std::string>({
      {"run", exp, "exp.yaml:1:11: scenario: this is an experiment file ('scenario:' and 'variants:'): run it with "
                   "'schedlab compare'"},
      {"run", sweep, "sweep.yaml:1:11: scenario: this is a sweep file ('scenario:' and 'grid:'): run it with "
                     "'schedlab sweep'"},
      {"compare", scenario, "tasks: this is a scenario file ('tasks:'): run it with 'schedlab run'"},
      {"sweep", exp, "exp.yaml:3:11: variants: this is an experiment file ('variants:' and no 'grid:'): run it with "
                     "'schedlab compare'"},
      {"compare", sweep, "sweep.yaml:4:3: grid: this is a sweep file ('grid:'): run it with 'schedlab sweep'"},
  }));
  CAPTURE(command, file);
  const Cli r = run_schedlab(dir, command + " " + shell_quote(file) + " -q -j 1" +
                                      (command == "sweep" ? " --out " + shell_quote((dir / "out").string()) : ""));
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains(message));
  CHECK_FALSE(fs::exists(dir / "out"));
}

TEST_CASE("run without a scenario file exits 2", "[cli]") {
  ScratchDir dir("no_config");
  Cli r = run_schedlab(dir, "run --runs 2");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::StartsWith("error: missing CONFIG"));
}

TEST_CASE("an output file may not overwrite the scenario or another output", "[cli]") {
  ScratchDir dir("collide");
  const fs::path yaml = dir / "s.yaml";
  write_text(yaml, slurp(two_hogs()));
  const std::string original = slurp(yaml);
  Cli r = run_schedlab(dir, "run " + shell_quote(yaml.string()) + " --json " + shell_quote(yaml.string()));
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("would overwrite the scenario file"));
  CHECK(slurp(yaml) == original);
  const std::string out = shell_quote((dir / "out").string());
  Cli both = run_schedlab(dir, "run " + shell_quote(yaml.string()) + " --json " + out + " --csv " + out);
  CHECK(both.code == 2);
  CHECK_THAT(both.err, Catch::Contains("name the same file"));
}

TEST_CASE("a valid run prints the tables and writes JSON, CSV and a trace", "[cli]") {
  ScratchDir dir("valid");
  const std::string scenario = two_hogs();
  Cli r = run_schedlab(dir, "run " + shell_quote(scenario) + " --duration 200ms --seed 3 --json " +
                                shell_quote((dir / "r.json").string()) + " --csv " +
                                shell_quote((dir / "r.csv").string()) + " --trace " +
                                shell_quote((dir / "r.trace").string()));
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("kernel "));
  CHECK_THAT(r.out, Catch::Contains("duration 200.000ms, 1 run, seed 3"));
  CHECK_THAT(r.out, Catch::Contains("wakeup latency (us)"));
  // Two hogs that never sleep on the only CPU: busy the whole 200 ms, never
  // idle, and the conservation line says so and ends in OK.
  CHECK_THAT(r.out, Catch::Contains("check: busy + idle = elapsed on every CPU in every run (1 CPU x 1 run): "
                                    "0.200000000s + 0.000000000s = 0.200000000s  OK\n"));
  CHECK(dir.entries() == std::vector<std::string>{"r.csv", "r.json", "r.trace"});
  const std::string json = slurp(dir / "r.json");
  CHECK_THAT(json, Catch::StartsWith("{\n  \"format\": \"schedlab.run\",\n"));
  CHECK_THAT(json, Catch::Contains("\"base_seed\": 3,"));
  CHECK_THAT(json, Catch::Contains("\"duration_s\": 0.200000000"));
  CHECK_THAT(json, Catch::EndsWith("}\n"));
  CHECK_THAT(slurp(dir / "r.csv"), Catch::StartsWith("kind,run,name,group,pid,"));
  const std::string trace = slurp(dir / "r.trace");
  CHECK_THAT(trace, Catch::StartsWith("# tracer: nop\n"));
  CHECK_THAT(trace, Catch::Contains(": sched_switch: prev_comm="));
}

TEST_CASE("two runs with the same seed give byte-identical JSON", "[cli]") {
  ScratchDir dir("determinism");
  // two_hogs draws no random numbers, so it could not tell a seed from
  // another: here every GPU job's time is drawn from an exponential
  // service_time (submit_job without gpu_time), so the schedule depends on
  // the seed.
  const fs::path yaml = dir / "random_gpu.yaml";
  write_text(yaml,
             "name: random_gpu\n"
             "duration: 300ms\n"
             "platform: {cpus: 2}\n"
             "kernel: {version: \"6.12\"}\n"
             "devices:\n"
             "  - {name: mali, model: gpu, service_time: {dist: exponential, mean: 2ms}}\n"
             "  - {name: vkq, model: drm_sched, gpu: mali, submit_wq: events_unbound, entities: [vk-queue]}\n"
             "tasks:\n"
             "  - name: app\n"
             "    events:\n"
             "      - run: 1ms\n"
             "      - submit_job: {entity: vk-queue}\n"
             "      - timer: {ref: vsync, period: 5ms}\n");
  const auto run = [&](int seed, const std::string& name) {
    Cli r = run_schedlab(dir, "run " + shell_quote(yaml.string()) + " --runs 2 --seed " + std::to_string(seed) +
                                  " --quiet --json " + shell_quote((dir / name).string()));
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(r.out.empty());  // --quiet
    return slurp(dir / name);
  };
  // The report records the seeds; without those lines, what is left is
  // what was simulated.
  const auto without_seeds = [](const std::string& json) {
    std::istringstream in(json);
    std::string line, kept;
    while (std::getline(in, line))
      if (line.find("seed\"") == std::string::npos) kept += line + "\n";
    return kept;
  };
  const std::string a = run(42, "a.json");
  CHECK(a.size() > 100);
  CHECK_THAT(a, Catch::Contains("\"base_seed\": 42,"));
  CHECK(a == run(42, "b.json"));
  // Another seed draws other GPU times: other results, not just another
  // seed field.
  const std::string c = run(43, "c.json");
  CHECK_THAT(c, Catch::Contains("\"base_seed\": 43,"));
  CHECK(without_seeds(a) != without_seeds(c));
}

TEST_CASE("an output file that cannot be written exits 2 and leaves nothing", "[cli]") {
  ScratchDir dir("unwritable");
  write_text(dir / "plain", "x");
  // A missing folder, and a "folder" that is a regular file.
  const std::string missing = (dir / "no_such_dir" / "o.json").string(), under_file = (dir / "plain" / "o.csv").string();
  Cli r = run_schedlab(dir, "run " + shell_quote(two_hogs()) + " --duration 50ms -q --json " + shell_quote(missing));
  CHECK(r.code == 2);
  CHECK(r.err == "error: cannot write '" + missing + "': No such file or directory\n");
  Cli csv = run_schedlab(dir, "run " + shell_quote(two_hogs()) + " --duration 50ms -q --csv " + shell_quote(under_file));
  CHECK(csv.code == 2);
  CHECK(csv.err == "error: cannot write '" + under_file + "': Not a directory\n");
  CHECK(dir.entries() == std::vector<std::string>{"plain"});
}

TEST_CASE("a --json path that is a symbolic link writes its target and keeps the link", "[cli]") {
  ScratchDir dir("special_outputs");
  write_text(dir / "target.json", "old");
  fs::create_symlink("target.json", dir / "link.json");
  Cli r = run_schedlab(dir, "run " + shell_quote(two_hogs()) + " --duration 50ms -q --json " +
                                shell_quote((dir / "link.json").string()));
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(fs::is_symlink(dir / "link.json"));
  CHECK_THAT(slurp(dir / "target.json"), Catch::StartsWith("{\n  \"format\": \"schedlab.run\""));
}

TEST_CASE("the debug log says why a balance pass moved nothing", "[cli][lb]") {
  // Three hogs on two CPUs: each busy CPU's periodic pass finds the other
  // CPU busiest and stops (a task-count split of 2 + 1 is no imbalance the
  // balancer acts on); the log names the test that stopped it.
  ScratchDir dir("log_balance");
  const fs::path yaml = dir / "h3.yaml";
  write_text(yaml,
             "name: h3\nduration: 1s\nplatform: {cpus: 2}\nkernel: {version: \"6.12\"}\n"
             "tasks:\n  - {name: h, instances: 3, events: [{run: 100ms}]}\n");
  Cli r = run_schedlab(dir, "run " + shell_quote(yaml.string()) + " -q --log debug --runs 2");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.err, Catch::Contains("balance cpu0 (busy): nothing moved, "));
  CHECK_THAT(r.err, Catch::Contains("(busiest cpu1)"));
  // Each run's log starts with a header naming it.
  CHECK_THAT(r.err, Catch::Contains("=== h3, run 0, seed "));
  CHECK_THAT(r.err, Catch::Contains("=== h3, run 1, seed "));
}

TEST_CASE("run with a --warmup option overrides the scenario's warmup", "[cli]") {
  // A 1 s warmup would leave a 300 ms run nothing to measure (exit 2,
  // with the hint); --warmup 0s measures all of it.
  ScratchDir dir("warmup");
  const fs::path yaml = dir / "w.yaml";
  write_text(yaml,
             "name: w\nduration: 2s\nwarmup: 1s\nplatform: {cpus: 1}\nkernel: {version: \"6.12\"}\n"
             "tasks:\n  - {name: h, instances: 2, events: [{run: 100ms}]}\n");
  Cli bad = run_schedlab(dir, "run " + shell_quote(yaml.string()) + " --duration 300ms");
  CHECK(bad.code == 2);
  CHECK_THAT(bad.err, Catch::Contains("(--warmup T sets a shorter one)"));
  Cli r = run_schedlab(dir, "run " + shell_quote(yaml.string()) + " --duration 300ms --warmup 0s -q --json " +
                                shell_quote((dir / "w.json").string()));
  REQUIRE(r.code == 0);
  const std::string json = slurp(dir / "w.json");
  CHECK_THAT(json, Catch::Contains("\"warmup_s\": 0.000000000"));
}

TEST_CASE("tables that cannot be written to standard output are an error", "[cli]") {
  // `schedlab run x.yaml > /dev/full`: the tables are the output; losing
  // them silently would exit 0 with nothing written.
  ScratchDir dir("stdout_full");
  const fs::path err = dir.path.parent_path() / "stdout_full.err";
  const std::string cmd = shell_quote(SCHEDLAB_BINARY) + " run " + shell_quote(two_hogs()) + " >/dev/full 2>" +
                          shell_quote(err.string());
  const int status = std::system(cmd.c_str());
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 2);
  CHECK_THAT(slurp(err), Catch::Contains("cannot write standard output: No space left on device"));
  fs::remove(err);
}

TEST_CASE("two outputs through descriptors on one file both land in it", "[cli]") {
  // --json /dev/stdout --csv /dev/stderr > all 2>&1: each is written through
  // its descriptor in turn (two paths to one file are still refused).
  ScratchDir dir("descriptors_one_file");
  const fs::path all = dir / "all";
  const std::string cmd = shell_quote(SCHEDLAB_BINARY) + " run " + shell_quote(two_hogs()) +
                          " -q --json /dev/stdout --csv /dev/stderr >" + shell_quote(all.string()) + " 2>&1";
  const int status = std::system(cmd.c_str());
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  const std::string text = slurp(all);
  CHECK_THAT(text, Catch::StartsWith("{\n  \"format\": \"schedlab.run\""));
  CHECK_THAT(text, Catch::Contains("\nkind,run,name,"));  // the CSV header after the JSON
}

TEST_CASE("compare takes --duration and --warmup for every variant", "[cli]") {
  ScratchDir dir("compare_duration");
  const std::string exp = std::string(SCHEDLAB_SOURCE_DIR) + "/configs/experiments/run_to_parity.yaml";
  Cli r = run_schedlab(dir, "compare " + shell_quote(exp) + " --runs 2 --duration 300ms --warmup 0s -q --json " +
                                shell_quote((dir / "c.json").string()));
  REQUIRE(r.code == 0);
  CHECK_THAT(slurp(dir / "c.json"), Catch::Contains("\"duration_s\": 0.300000000"));
  Cli bad = run_schedlab(dir, "compare " + shell_quote(exp) + " --duration 300ms --warmup 1s");
  CHECK(bad.code == 2);
  CHECK_THAT(bad.err, Catch::Contains("the duration (300.000ms) must be longer than the --warmup (1.000s)"));
  CHECK_THAT(bad.err, Catch::Contains("(see 'schedlab compare --help')"));
  Cli past = run_schedlab(dir, "compare " + shell_quote(exp) + " --warmup 100s");  // against the file's 3 s
  CHECK(past.code == 2);
  CHECK_THAT(past.err, Catch::Contains("the --warmup (100.000s) must be shorter than the experiment's duration "
                                       "(3.000s) (--duration T sets a longer one)"));
  // --duration alone against the file's warmup (500 ms): the option is named, not the file's line.
  Cli shorter = run_schedlab(dir, "compare " + shell_quote(exp) + " --duration 400ms");
  CHECK(shorter.code == 2);
  CHECK_THAT(shorter.err, Catch::Contains("the --duration (400.000ms) must be longer than the experiment's warmup "
                                          "(500.000ms) (--warmup T sets a shorter one)"));
}

// Every shipped what-if overlay still applies to the experiments its
// README uses it with (a scenario change can make an overlay's keys
// conflict: 74ad64a's encoder_vblank_irq did with the SDE overlays,
// whose encoder_wq: none leaves it nothing to switch). A new overlay must
// be added here.
TEST_CASE("Every shipped overlay applies to its experiments", "[cli][overlay]") {
  ScratchDir dir("shipped_overlays");
  const std::string root = std::string(SCHEDLAB_SOURCE_DIR) + "/configs/";
  const std::map<std::string, std::vector<std::string>> uses = {
      {"android_background_timer_slack.yaml", {"pm_wq_highpri_a", "pm_wq_highpri_b"}},
      {"aosp_cpu_cgroups.yaml", {"pm_wq_highpri_a", "pm_wq_highpri_b"}},
      {"cpuidle_menu.yaml", {"pm_wq_highpri_a", "pm_wq_highpri_b"}},
      {"cpuidle_qcom_lpm.yaml", {"pm_wq_highpri_a", "pm_wq_highpri_b"}},
      {"cpuidle_qcom_lpm_walt_a.yaml", {"pm_wq_highpri_a"}},
      {"cpuidle_qcom_lpm_walt_b.yaml", {"pm_wq_highpri_b"}},
      {"walt_ttwu_queue_off.yaml", {"pm_wq_highpri_a", "pm_wq_highpri_b"}},
      {"pm_wq_other_devices.yaml", {"pm_wq_highpri_a", "pm_wq_highpri_b"}},
      {"pm_wq_frame_devices.yaml", {"pm_wq_highpri_a", "pm_wq_highpri_b"}},
      {"qcom_sde_cmd_mode_idle_pc.yaml", {"pm_wq_highpri_a", "pm_wq_highpri_b"}},
      {"qcom_sde_display_commit.yaml", {"pm_wq_highpri_a", "pm_wq_highpri_b"}},
      {"gs101_idle_power_gs201.yaml", {"teo_tick_geekbench", "teo_tick_jetnews"}},
      {"sched_pixel_gs101.yaml", {"teo_tick_geekbench", "teo_tick_jetnews"}},
      {"adpf_uclamp_jetnews.yaml", {"teo_tick_jetnews"}},
      {"adpf_pid_jetnews.yaml", {"teo_tick_jetnews"}},
      {"adpf_pid_android14_jetnews.yaml", {"teo_tick_jetnews"}},
      {"adpf_pid_sf_held_jetnews.yaml", {"teo_tick_jetnews"}},
      {"android_uclamp_gs101.yaml", {"teo_tick_geekbench", "teo_tick_jetnews"}},
  };
  size_t shipped = 0;
  for (const auto& entry : std::filesystem::directory_iterator(root + "overlays")) {
    if (entry.path().extension() != ".yaml") continue;
    ++shipped;
    const std::string name = entry.path().filename().string();
    INFO(name);
    REQUIRE(uses.count(name) == 1);
    for (const std::string& exp : uses.at(name)) {
      INFO(exp);
      const Cli r = run_schedlab(dir, "compare " + shell_quote(root + "experiments/" + exp + ".yaml") +
                                          " --runs 1 --duration 2s --warmup 100ms -q -j 1 --set-file " +
                                          shell_quote(entry.path().string()));
      CHECK(r.code == 0);
      CHECK(r.err.empty());
    }
  }
  CHECK(shipped == uses.size());
}

TEST_CASE("compare and sweep take overlay files with --set-file", "[cli][overlay]") {
  ScratchDir dir("set_file");
  const std::string exp = std::string(SCHEDLAB_SOURCE_DIR) + "/configs/experiments/run_to_parity.yaml";
  write_text(dir / "short.yaml", "# a what-if\nduration: 300ms\nwarmup: 0s\n");
  Cli r = run_schedlab(dir, "compare " + shell_quote(exp) + " --runs 2 -q --set-file " +
                                shell_quote((dir / "short.yaml").string()) + " --json " +
                                shell_quote((dir / "c.json").string()));
  REQUIRE(r.code == 0);
  CHECK_THAT(slurp(dir / "c.json"), Catch::Contains("\"duration_s\": 0.300000000"));
  // A long file: its first paths in the table's header, all of them in the JSON.
  write_text(dir / "long.yaml", "duration: 300ms\nwarmup: 0s\nkernel.hz: 1000\nkernel.overheads.ipi: 5us\n"
                                "kernel.overheads.wakeup: 2us\nkernel.overheads.context_switch: 3us\n");
  const Cli longer = run_schedlab(dir, "compare " + shell_quote(exp) + " --runs 2 --set-file " +
                                           shell_quote((dir / "long.yaml").string()) + " --json " +
                                           shell_quote((dir / "l.json").string()));
  REQUIRE(longer.code == 0);
  CHECK_THAT(longer.out, Catch::Contains("long.yaml (6 key paths; a variant's own value wins): duration=300ms, "
                                         "warmup=0s, kernel.hz=1000, kernel.overheads.ipi=5us, and 2 more (--json "
                                         "lists them in set_files)"));
  CHECK_THAT(slurp(dir / "l.json"), Catch::Contains("kernel.overheads.context_switch"));
  write_text(dir / "typo.yaml", "duration: 300ms\nkernel.hzz: 1000\n");
  Cli typo = run_schedlab(dir, "compare " + shell_quote(exp) + " --set-file " + shell_quote((dir / "typo.yaml").string()));
  CHECK(typo.code == 2);
  CHECK_THAT(typo.err, Catch::Contains("typo.yaml:2:1: kernel.hzz: unknown key 'hzz'"));
  write_text(dir / "list.yaml", "- kernel.hz: 1000\n");
  Cli list = run_schedlab(dir, "compare " + shell_quote(exp) + " --set-file " + shell_quote((dir / "list.yaml").string()));
  CHECK(list.code == 2);
  CHECK_THAT(list.err, Catch::Contains("expected a map of KEY.PATH: value"));
  Cli missing = run_schedlab(dir, "compare " + shell_quote(exp) + " --set-file " + shell_quote((dir / "no.yaml").string()));
  CHECK(missing.code == 2);
  CHECK_THAT(missing.err, Catch::Contains("no.yaml"));
  const std::string sweep = std::string(SCHEDLAB_SOURCE_DIR) + "/configs/sweeps/ui_nice.yaml";
  write_text(dir / "tiny.yaml", "runs: 1\n");  // not a key path of the scenario
  Cli s = run_schedlab(dir, "sweep " + shell_quote(sweep) + " -q --set-file " + shell_quote((dir / "tiny.yaml").string()) +
                                " --out " + shell_quote((dir / "sw").string()));
  CHECK(s.code == 2);
  CHECK_THAT(s.err, Catch::Contains("tiny.yaml:1:1: runs: unknown key 'runs'"));
}

// --metric adds rows after the file's metrics (or after the defaults of a
// file without any); a malformed or unknown one fails before any run,
// with exit code 2 and no output file.
TEST_CASE("compare --metric adds rows to an experiment's table", "[cli]") {
  ScratchDir dir("metric_option");
  const std::string exp = std::string(SCHEDLAB_SOURCE_DIR) + "/configs/experiments/run_to_parity.yaml";
  auto metric_names = [](const std::string& json) {
    std::vector<std::string> names;
    for (size_t at = json.find("\"name\": \""); at != std::string::npos; at = json.find("\"name\": \"", at + 1)) {
      const size_t from = at + 9, to = json.find('"', from);
      names.push_back(json.substr(from, to - from));
    }
    return names;
  };
  const Cli r = run_schedlab(dir, "compare " + shell_quote(exp) + " --runs 2 --duration 300ms --warmup 0s -q " +
                                      "--metric task:ui_main.wakeup_latency.max --metric task:sensor.wakeup_latency.mean " +
                                      "--json " + shell_quote((dir / "c.json").string()));
  REQUIRE(r.code == 0);
  const std::string json = slurp(dir / "c.json");
  const size_t from = json.find("\"metrics\""), to = json.find("\"who_pays\"");
  REQUIRE(from < to);
  const std::vector<std::string> names = metric_names(json.substr(from, to - from));
  // run_to_parity.yaml's rows first (cpu:* is two), then the two added.
  REQUIRE(names.size() == 15);
  CHECK(names.front() == "task:ui_main.wakeup_latency.mean");
  CHECK(names[12] == "total.avg_power_mw");
  CHECK(names[13] == "task:ui_main.wakeup_latency.max");
  CHECK(names[14] == "task:sensor.wakeup_latency.mean");
  // A file without `metrics:` keeps its defaults (every group's wake-up
  // latency and CPU share) and gains the row.
  const std::string scenario = std::string(SCHEDLAB_SOURCE_DIR) + "/configs/scenarios/mixed_2cpu.yaml";
  write_text(dir / "e.yaml", "name: e\nscenario: " + scenario + "\nruns: 1\nduration: 300ms\nwarmup: 0s\n"
                             "variants:\n  - name: a\n  - name: b\n    set: {kernel.hz: 1000}\n");
  const Cli d = run_schedlab(dir, "compare " + shell_quote((dir / "e.yaml").string()) +
                                      " -q --metric total.energy_mj --json " + shell_quote((dir / "d.json").string()));
  REQUIRE(d.code == 0);
  const std::string dj = slurp(dir / "d.json");
  CHECK_THAT(dj, Catch::Contains(".cpu_share"));
  CHECK_THAT(dj, Catch::Contains("\"total.energy_mj\""));
  // Errors: no run, no file.
  const Cli bad = run_schedlab(dir, "compare " + shell_quote(exp) + " --metric wq:pm.bogus.mean --json " +
                                        shell_quote((dir / "bad.json").string()));
  CHECK(bad.code == 2);
  CHECK_THAT(bad.err, Catch::Contains("--metric 'wq:pm.bogus.mean': unknown wq field 'bogus.mean'"));
  CHECK_THAT(bad.err, Catch::Contains("idle_exit_wait.mean"));
  CHECK_FALSE(std::filesystem::exists(dir / "bad.json"));
  const Cli unknown = run_schedlab(dir, "compare " + shell_quote(exp) + " --metric task:nosuch.wakeup_latency.mean " +
                                            "--json " + shell_quote((dir / "unknown.json").string()));
  CHECK(unknown.code == 2);
  CHECK_THAT(unknown.err, Catch::Contains("--metric: metrics: no task 'nosuch' in the scenario"));
  CHECK_FALSE(std::filesystem::exists(dir / "unknown.json"));
}

// Loader warnings reach compare's and sweep's stderr too (once each, even
// with -q); one about an overlaid value points at the overlay's line.
TEST_CASE("compare and sweep print the scenarios' warnings at the overlay that caused them", "[cli][overlay]") {
  ScratchDir dir("overlay_warnings");
  const std::string scenario = std::string(SCHEDLAB_SOURCE_DIR) + "/configs/scenarios/mixed_2cpu.yaml";
  write_text(dir / "e.yaml", "name: e\nscenario: " + scenario + "\nruns: 1\nduration: 300ms\nwarmup: 0s\n"
                             "variants:\n  - name: a\n  - name: b\n"
                             "    set: {kernel.version: \"6.1\", kernel.features.RUN_TO_PARITY: false}\n"
                             "  - name: c\n"
                             "    set: {kernel.version: \"6.1\", kernel.features.RUN_TO_PARITY: false}\n");
  const Cli c = run_schedlab(dir, "compare " + shell_quote((dir / "e.yaml").string()) + " -q");
  REQUIRE(c.code == 0);
  CHECK_THAT(c.err, Catch::Contains("warning: " + (dir / "e.yaml").string() +
                                    ":9:34: kernel.features.RUN_TO_PARITY: RUN_TO_PARITY is EEVDF's") &&
                        Catch::Contains("(overlay kernel.features.RUN_TO_PARITY=false on " + scenario + ", variant 'b')") &&
                        Catch::Contains(":11:34:"));  // variant c's own line
  write_text(dir / "s.yaml", "name: s\nscenario: " + scenario + "\nruns: 1\nduration: 300ms\nwarmup: 0s\n"
                             "set: {kernel.version: \"6.12\"}\n"
                             "grid:\n  kernel.sched_latency: [3ms, 6ms]\nmetrics: [task:ui_main.wakeup_latency.mean]\n");
  const Cli s = run_schedlab(dir, "sweep " + shell_quote((dir / "s.yaml").string()) + " -q --out " +
                                      shell_quote((dir / "sw").string()));
  REQUIRE(s.code == 0);
  CHECK_THAT(s.err, Catch::Contains("kernel.sched_latency: sched_latency is CFS's") &&
                        Catch::Contains("on 6.12 it changes nothing"));
}

// --strict: the same warnings as errors, every one printed, exit 2, no run
// and no output file (a sweep leaves no folder).
TEST_CASE("run compare and sweep with --strict treat the configuration warnings as errors", "[cli][overlay]") {
  ScratchDir dir("strict");
  write_text(dir / "t.json", "{ \"global\": { \"duration\": 1, \"bogus\": 1 },\n"
                             "  \"tasks\": { \"a\": { \"run\": 1000, \"sleep\": 9000, \"colour\": 3 } } }\n");
  const std::string json = shell_quote((dir / "t.json").string());
  const Cli lax = run_schedlab(dir, "run " + json + " -q --json " + shell_quote((dir / "lax.json").string()));
  REQUIRE(lax.code == 0);
  CHECK_THAT(lax.err, Catch::Contains("warning: ") && Catch::Contains("global.bogus: unknown global key"));
  CHECK(std::filesystem::exists(dir / "lax.json"));
  const Cli strict = run_schedlab(dir, "run " + json + " -q --strict --json " + shell_quote((dir / "o.json").string()));
  CHECK(strict.code == 2);
  CHECK_THAT(strict.err, Catch::Contains("error: ") && Catch::Contains("global.bogus: unknown global key") &&
                             Catch::Contains("tasks.a.colour: unknown key") &&
                             Catch::Contains("--strict: nothing was run (2 warnings above)"));
  CHECK_THAT(strict.err, !Catch::Contains("warning: "));
  CHECK_FALSE(std::filesystem::exists(dir / "o.json"));

  const std::string scenario = std::string(SCHEDLAB_SOURCE_DIR) + "/configs/scenarios/mixed_2cpu.yaml";
  write_text(dir / "e.yaml", "name: e\nscenario: " + scenario + "\nruns: 1\nduration: 300ms\nwarmup: 0s\n"
                             "variants:\n  - name: a\n  - name: b\n"
                             "    set: {kernel.version: \"6.1\", kernel.features.RUN_TO_PARITY: false}\n");
  const Cli c = run_schedlab(dir, "compare " + shell_quote((dir / "e.yaml").string()) + " -q --strict --json " +
                                      shell_quote((dir / "c.json").string()));
  CHECK(c.code == 2);
  CHECK_THAT(c.err, Catch::Contains("error: ") && Catch::Contains("RUN_TO_PARITY is EEVDF's") &&
                        Catch::Contains("--strict: nothing was run (1 warning above)"));
  CHECK_FALSE(std::filesystem::exists(dir / "c.json"));
  write_text(dir / "s.yaml", "name: s\nscenario: " + scenario + "\nruns: 1\nduration: 300ms\nwarmup: 0s\n"
                             "set: {kernel.version: \"6.12\"}\n"
                             "grid:\n  kernel.sched_latency: [3ms, 6ms]\nmetrics: [task:ui_main.wakeup_latency.mean]\n");
  const Cli s = run_schedlab(dir, "sweep " + shell_quote((dir / "s.yaml").string()) + " -q --strict --out " +
                                      shell_quote((dir / "sw").string()));
  CHECK(s.code == 2);
  CHECK_THAT(s.err, Catch::Contains("error: ") && Catch::Contains("sched_latency is CFS's"));
  CHECK_FALSE(std::filesystem::exists(dir / "sw"));
}

// The experiment file checks start_jitter against its own duration; a
// --duration or --set-file that shortens the runs later is checked per
// variant and sweep point, before anything runs or is written.
TEST_CASE("a run shortened below start_jitter by --duration or --set-file is refused", "[cli][overlay]") {
  ScratchDir dir("short_jitter");
  const std::string exp = std::string(SCHEDLAB_SOURCE_DIR) + "/configs/experiments/run_to_parity.yaml";
  const std::string sweep = std::string(SCHEDLAB_SOURCE_DIR) + "/configs/sweeps/ui_nice.yaml";
  const Cli c = run_schedlab(dir, "compare " + shell_quote(exp) + " --duration 16ms --warmup 0s --json " +
                                      shell_quote((dir / "c.json").string()));
  CHECK(c.code == 2);
  CHECK_THAT(c.err, Catch::Contains("run_to_parity.yaml:18:15: start_jitter: 16.666ms is not shorter than the run "
                                    "(16.000ms) of variant 'rtp_on'"));
  CHECK_FALSE(fs::exists(dir / "c.json"));
  // Just longer than the jitter runs.
  CHECK(run_schedlab(dir, "compare " + shell_quote(exp) + " --runs 1 -q --duration 17ms --warmup 0s").code == 0);
  write_text(dir / "short.yaml", "duration: 10ms\nwarmup: 0s\n");
  const Cli s = run_schedlab(dir, "sweep " + shell_quote(sweep) + " -q --set-file " +
                                      shell_quote((dir / "short.yaml").string()) + " --out " +
                                      shell_quote((dir / "sw").string()));
  CHECK(s.code == 2);
  CHECK_THAT(s.err, Catch::Contains("ui_nice.yaml:11:15: start_jitter: 16.666ms is not shorter than the run "
                                    "(10.000ms) of sweep point p000000"));
  CHECK_FALSE(fs::exists(dir / "sw"));
}

// Runs `cmd` with -j 1 and -j 2, checks both succeed with the same
// output, and returns the first.
static Cli same_for_any_jobs(ScratchDir& dir, const std::string& cmd) {
  Cli one = run_schedlab(dir, cmd + " -j 1");
  const Cli two = run_schedlab(dir, cmd + " -j 2");
  REQUIRE(one.code == 0);
  REQUIRE(two.code == 0);
  CHECK(one.out == two.out);
  return one;
}

TEST_CASE("run --why prints the decision table, the same for any -j", "[cli][why]") {
  ScratchDir dir("why");
  const std::string scenario = std::string(SCHEDLAB_SOURCE_DIR) + "/configs/scenarios/jetnews_gs101.yaml";
  const Cli one = same_for_any_jobs(dir, "run " + shell_quote(scenario) + " --duration 300ms --warmup 0s --runs 2 --why");
  CHECK_THAT(one.out, Catch::Contains("why: the kernel's decisions in the measured window, by reason"));
  CHECK_THAT(one.out, Catch::Contains("idle state"));
  CHECK_THAT(one.out, Catch::Contains("0 WFI, tick "));  // the state and the tick decision lead the reason
  CHECK_THAT(one.out, Catch::Contains("placement"));
  // Every fair placement ends in a select_idle_sibling() or EAS reason:
  // wake_affine()'s is intermediate, and no path is left without one.
  CHECK_THAT(one.out, !Catch::Contains("WA_WEIGHT") && !Catch::Contains("its class's select_task_rq()"));
  Cli plain = run_schedlab(dir, "run " + shell_quote(scenario) + " --duration 300ms --warmup 0s");
  CHECK_THAT(plain.out, !Catch::Contains("why: the kernel's decisions"));
  // JSON: each run's counts, only with --why.
  const std::string json = (dir / "why.json").string(), plain_json = (dir / "plain.json").string();
  REQUIRE(run_schedlab(dir, "run " + shell_quote(scenario) + " --duration 300ms --warmup 0s --why -q --json " +
                                shell_quote(json))
              .code == 0);
  REQUIRE(run_schedlab(dir, "run " + shell_quote(scenario) + " --duration 300ms --warmup 0s -q --json " +
                                shell_quote(plain_json))
              .code == 0);
  CHECK_THAT(slurp(json), Catch::Contains("\"decisions\": [") && Catch::Contains("\"kind\": \"idle state\""));
  CHECK_THAT(slurp(plain_json), !Catch::Contains("\"decisions\""));
}

TEST_CASE("compare --why prints every variant's decisions side by side", "[cli][why]") {
  // RUN_TO_PARITY on against off on mixed_2cpu: with it off no wake-up
  // waits because RUN_TO_PARITY keeps curr, so that reason has shares in
  // the first column and none in the second.
  ScratchDir dir("compare_why");
  const std::string exp = std::string(SCHEDLAB_SOURCE_DIR) + "/configs/experiments/run_to_parity.yaml";
  const std::string json = (dir / "c.json").string();
  const Cli one =
      same_for_any_jobs(dir, "compare " + shell_quote(exp) + " --runs 2 --duration 1s --why --json " + shell_quote(json));
  // The JSON has each variant's counts summed over its runs.
  CHECK_THAT(slurp(json), Catch::Contains("\"decisions\": [") &&
                              Catch::Contains("\"reason\": \"eevdf: pick_eevdf() keeps curr: RUN_TO_PARITY\""));
  const auto at = one.out.find("why: each variant's decisions by reason");
  REQUIRE(at != std::string::npos);
  const std::string table = one.out.substr(at);
  CHECK_THAT(table, Catch::Contains("rtp_on"));
  CHECK_THAT(table, Catch::Contains("rtp_off"));
  // Every row of that reason has a share in rtp_on and none ("-") in rtp_off.
  std::istringstream in(table);
  bool seen = false;
  for (std::string line; std::getline(in, line);)
    if (line.find("pick_eevdf() keeps curr: RUN_TO_PARITY") != std::string::npos) {
      seen = true;
      CHECK_THAT(line, Catch::Matches(".*%.*\\s-$"));
    }
  CHECK(seen);
}

// run --runs N of a scenario with nothing random: N copies of one schedule,
// said under the tables; --start-jitter makes the runs differ (and the same
// for any -j), is recorded in the JSON, and must be shorter than a run.
TEST_CASE("run: identical runs are said to be so, and --start-jitter varies them", "[cli]") {
  ScratchDir dir("run_jitter");
  const std::string scenario = shell_quote(std::string(SCHEDLAB_SOURCE_DIR) + "/configs/scenarios/mixed_2cpu.yaml");
  const Cli same = run_schedlab(dir, "run " + scenario + " --runs 3 --duration 1s --warmup 0s");
  REQUIRE(same.code == 0);
  CHECK_THAT(same.out, Catch::Contains("note: the 3 runs are identical"));
  const Cli one = run_schedlab(dir, "run " + scenario + " --duration 1s --warmup 0s");
  CHECK_THAT(one.out, !Catch::Contains("runs are identical"));
  const std::string json = (dir / "j.json").string();
  const Cli varied = same_for_any_jobs(dir, "run " + scenario + " --runs 3 --duration 1s --warmup 0s --start-jitter 16ms "
                                            "--json " + shell_quote(json));
  CHECK_THAT(varied.out, Catch::Contains("3 runs, seed 1, start jitter 16.000ms") &&
                             !Catch::Contains("runs are identical"));
  CHECK_THAT(slurp(json), Catch::Contains("\"start_jitter_s\": 0.016000000"));
  const Cli too_long = run_schedlab(dir, "run " + scenario + " --duration 1s --warmup 0s --start-jitter 1s");
  CHECK(too_long.code == 2);
  CHECK_THAT(too_long.err, Catch::Contains("--start-jitter (1.000s) must be shorter than the duration (1.000s)"));
}
