// schedlab: the command line. Subcommands: run, compare, sweep, merge.
// Exit codes: 0 success; 1 a plot failed, or an internal error; 2 a usage,
// configuration or model error, an output file that cannot be written (a bad
// path is bad input like any other), or a sweep folder that cannot be used.
// No output file is ever left half-written (experiments/lib/atomic_file.h).
#include <unistd.h>

#include <boost/program_options.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "experiments/lib/atomic_file.h"
#include "experiments/lib/compare.h"
#include "experiments/lib/ftrace_writer.h"
#include "experiments/lib/metrics.h"
#include "experiments/lib/sched_map.h"
#include "experiments/lib/parallel.h"
#include "experiments/lib/plots.h"
#include "experiments/lib/progress.h"
#include "experiments/lib/report_compare.h"
#include "experiments/lib/report_csv.h"
#include "experiments/lib/report_json.h"
#include "experiments/lib/report_table.h"
#include "experiments/lib/runner.h"
#include "experiments/lib/sweep.h"
#include "experiments/lib/wakegraph.h"
#include "models/config/config.h"
#include "models/errors.h"
#include "sim/log.h"
#include "sim/memory.h"
#include "sim/names.h"
#include "sim/rng.h"

namespace po = boost::program_options;
using namespace schedlab;

namespace {

constexpr const char* kVersion = "0.1.0";
constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;  // plots, internal errors
constexpr int kExitUsage = 2;    // command line, configuration, model, output files
constexpr int kMaxRuns = 1000000;

// An error with the exit code it maps to; main() prints "error: <what>".
struct CliError : std::runtime_error {
  CliError(int code, const std::string& what) : std::runtime_error(what), code(code) {}
  int code;
};

// A loader warning (file:line:col: key: message) on stderr, even with -q.
void print_warning(const std::string& what) { std::cerr << "warning: " << what << '\n'; }
void print_strict_warning(const std::string& what) { std::cerr << "error: " << what << '\n'; }

[[noreturn]] void usage_error(const std::string& what, const char* command = "run") {
  throw CliError(kExitUsage, fmt::format("{}\n(see 'schedlab {} --help')", what, command));
}

void print_main_help() {
  std::cout << "schedlab " << kVersion << ": a discrete-event simulator of the Linux CPU scheduler\n"
               "\n"
               "usage: schedlab <command> [options]\n"
               "       schedlab --help | --version\n"
               "\n"
               "commands:\n"
               "  run      simulate a scenario N times; print per-task wakeup latency, runnable\n"
               "           wait, CPU share and per-CPU busy/idle time; write JSON, CSV, a trace\n"
               "  compare  run an experiment's variants (overlays on a scenario) N times each;\n"
               "           print every metric's change against the baseline with a 95% bootstrap\n"
               "           interval, and who pays: every task group's latency and CPU use change\n"
               "  sweep    run a grid of overlays (lists, ranges, cartesian products) with\n"
               "           replications into a folder; resumable, shardable (--shard i/N)\n"
               "  merge    combine the folders of sharded sweeps into what one sweep writes\n"
               "\n"
               "'schedlab <command> --help' describes a command's options; docs/experiments.md\n"
               "describes experiments, sweeps and their outputs.\n"
               "\n"
               "example:\n"
               "  schedlab run configs/scenarios/two_hogs.yaml --runs 5 --json two_hogs.json\n"
               "  schedlab compare configs/experiments/run_to_parity.yaml --plot plots/\n"
               "  schedlab sweep configs/sweeps/ui_nice.yaml --out ui_nice/\n";
}

// Help of the options several commands share.
constexpr const char* kJobsHelp = "run N simulations at once (default: all cores); results do not depend on N";
constexpr const char* kStrictHelp =
    "treat the configuration's warnings (unknown rt-app keys, settings this kernel version lacks, ...) as errors: "
    "print them and exit with code 2 before any run";
constexpr const char* kLogHelp =
    "simulator log on stderr: off, error, warn (default), info, debug (every scheduling decision with its "
    "reason), trace";

// Values are read as text and parsed here: Boost's lexical_cast turns "-1"
// into 2^64-1 for unsigned types, and durations need units.
po::options_description run_options() {
  po::options_description desc("options", 100);
  desc.add_options()
      ("seed", po::value<std::string>()->value_name("N"), "base seed (default: the scenario's seed); run i uses derive_seed(N, i)")
      ("duration", po::value<std::string>()->value_name("T"), "simulated time per run, with a unit: 500ms, 2s (default: the scenario's)")
      ("warmup", po::value<std::string>()->value_name("T"), "metrics ignore [0, T), shorter than the duration (default: the scenario's)")
      ("runs", po::value<std::string>()->value_name("N"), "number of runs, >= 1 (default 1)")
      ("start-jitter", po::value<std::string>()->value_name("T"), "delay each task's start (but a task's with start_jitter: false) by a random time in [0, T) drawn from each run's seed, as an experiment's start_jitter, so runs see different phases (default 0: runs differ only where the scenario draws random numbers)")
      ("jobs,j", po::value<std::string>()->value_name("N"), kJobsHelp)
      ("json", po::value<std::string>()->value_name("FILE"), "write the report as JSON (docs/outputs.md)")
      ("csv", po::value<std::string>()->value_name("FILE"), "write the report as CSV (docs/outputs.md)")
      ("trace", po::value<std::string>()->value_name("FILE"), "write run 0 as ftrace text that Perfetto opens (ui.perfetto.dev)")
      ("sched-map", po::value<std::string>()->value_name("FILE"),
       "write run 0's context switches as `perf sched map` text: a column per CPU, the task each runs")
      ("wakegraph", po::value<std::string>()->value_name("FILE"), "write who wakes whom (all runs) as Graphviz DOT")
      ("why", "count the kernel's decisions by reason (wake-up placement and preemption, ticks, picks, idle states, "
              "load-balance passes, where sleeps' timers ran in their slack window) "
              "and print them per task group")
      ("strict", kStrictHelp)
      ("log", po::value<std::string>()->value_name("LEVEL"), kLogHelp)
      ("quiet,q", "print no header, tables or progress (warnings and errors still go to stderr)")
      ("help,h", "show this help");
  return desc;
}

po::options_description compare_options() {
  po::options_description desc("options", 100);
  desc.add_options()
      ("jobs,j", po::value<std::string>()->value_name("N"), kJobsHelp)
      ("runs", po::value<std::string>()->value_name("N"), "runs per variant (default: the experiment's `runs`)")
      ("duration", po::value<std::string>()->value_name("T"), "simulated time per run, with a unit (default: the experiment's)")
      ("warmup", po::value<std::string>()->value_name("T"), "metrics ignore [0, T) (default: the experiment's)")
      ("set-file", po::value<std::vector<std::string>>()->value_name("FILE"), "add the overlays of FILE (a YAML map KEY.PATH: value, as `set:`) to every variant, after the file's own `set:` (a variant's own value or a grid value on the same key path still wins); repeatable")
      ("metric", po::value<std::vector<std::string>>()->value_name("NAME"), "add a row after the experiment's metrics (a metric name as in its `metrics:`, docs/experiments.md: wq:pm.idle_exit_wait.mean); repeatable")
      ("json", po::value<std::string>()->value_name("FILE"), "write the comparison as JSON (docs/experiments.md)")
      ("csv", po::value<std::string>()->value_name("FILE"), "write the comparison as CSV (docs/experiments.md)")
      ("plot", po::value<std::string>()->value_name("DIR"), "draw latency CDFs and the changes with their intervals as PNG into DIR")
      ("wakegraph", po::value<std::string>()->value_name("FILE"), "write who wakes whom, one graph per variant, as Graphviz DOT")
      ("why", "count the kernel's decisions by reason in every variant and print them side by side")
      ("strict", kStrictHelp)
      ("log", po::value<std::string>()->value_name("LEVEL"), kLogHelp)
      ("quiet,q", "print no tables or progress (warnings and errors still go to stderr)")
      ("help,h", "show this help");
  return desc;
}

po::options_description sweep_options() {
  po::options_description desc("options", 100);
  desc.add_options()
      ("jobs,j", po::value<std::string>()->value_name("N"), kJobsHelp)
      ("out,o", po::value<std::string>()->value_name("DIR"), "output folder (default: sweep_<name>); re-running into it resumes")
      ("shard", po::value<std::string>()->value_name("i/N"), "run only slice i of N (0 <= i < N) of the runs; combine with 'schedlab merge'")
      ("plot", po::value<std::string>()->value_name("DIR"), "draw the sweep curves as PNG into DIR (not with --shard)")
      ("set-file", po::value<std::vector<std::string>>()->value_name("FILE"), "add the overlays of FILE (a YAML map KEY.PATH: value, as `set:`) to every variant, after the file's own `set:` (a variant's own value or a grid value on the same key path still wins); repeatable")
      ("why", "count the kernel's decisions by reason in every run: per point in decisions.csv and sweep.json, side by "
              "side in the summary (a sweep of its own: its folder differs from one without --why)")
      ("strict", kStrictHelp)
      ("log", po::value<std::string>()->value_name("LEVEL"), kLogHelp)
      ("quiet,q", "print no summary or progress (warnings and errors still go to stderr)")
      ("help,h", "show this help");
  return desc;
}

po::options_description merge_options() {
  po::options_description desc("options", 100);
  desc.add_options()
      ("out,o", po::value<std::string>()->value_name("DIR"), "the merged sweep folder (required; a new folder, or one an earlier merge of the same sweep wrote: rewritten)")
      ("plot", po::value<std::string>()->value_name("DIR"), "draw the sweep curves as PNG into DIR")
      ("quiet,q", "print no summary")
      ("help,h", "show this help");
  return desc;
}

void print_run_help() {
  std::cout << "usage: schedlab run CONFIG [options]\n"
               "\n"
               "Simulates the scenario in CONFIG (YAML; rt-app JSON for *.json) and prints a\n"
               "table per task (CPU share, wakeups, wakeup latency and runnable wait in us,\n"
               "periods, deadline misses), per task group and per CPU (busy, idle, switches).\n"
               "With --runs N the distributions pool every run's samples and counts are shown\n"
               "per run. Output files appear whole or not at all.\n"
               "\n"
            << run_options()
            << "\n"
               "example:\n"
               "  schedlab run configs/scenarios/two_hogs.yaml --duration 2s --runs 3 --seed 7 \\\n"
               "      --json two_hogs.json --csv two_hogs.csv --trace two_hogs.trace\n"
               "  schedlab run configs/scenarios/two_hogs.yaml --duration 20ms --sched-map /dev/stdout -q\n";
}

void print_compare_help() {
  std::cout << "usage: schedlab compare EXPERIMENT.yaml [options]\n"
               "\n"
               "Runs every variant of the experiment (overlays on a base scenario, the first\n"
               "being the baseline) `runs` times, in parallel, and prints one row per metric:\n"
               "each variant's mean over runs, its change in % against the baseline, and the\n"
               "change's 95% interval (paired bootstrap over runs, expanded percentile, B=2000);\n"
               "a change whose interval includes 0 is marked '~'. Below: who pays, i.e. every\n"
               "task group's wakeup latency mean and P99 change and the change of the CPUs it\n"
               "used, and the total power and energy change. Output files appear whole or not\n"
               "at all.\n"
               "\n"
            << compare_options()
            << "\n"
               "example:\n"
               "  schedlab compare configs/experiments/run_to_parity.yaml -j 2 --json rtp.json --plot rtp_plots/\n";
}

void print_sweep_help() {
  std::cout << "usage: schedlab sweep SWEEP.yaml [options]\n"
               "\n"
               "Runs every point of the sweep (variants x the cartesian product of its grid of\n"
               "key paths) `runs` times into a folder: manifest.json, points/<id>.json (one per\n"
               "point, written when its runs are done), then runs.csv, points.csv,\n"
               "sensitivity.csv and sweep.json. Re-running into the same folder skips finished\n"
               "points (resume after Ctrl-C); a folder whose sweep file, scenario, platform\n"
               "files, --set-file overlays or build changed since is refused, not mixed.\n"
               "With --shard i/N only one slice of the runs is\n"
               "done; 'schedlab merge' combines the shards' folders into exactly what one\n"
               "unsharded sweep writes. Numeric swept parameters get a least-squares\n"
               "sensitivity fit of every metric (slope, elasticity, R^2). With --why every\n"
               "run also counts the kernel's decisions by reason (as 'run --why' does), summed\n"
               "per point into decisions.csv: how a swept parameter changes why tasks wait.\n"
               "\n"
            << sweep_options()
            << "\n"
               "examples:\n"
               "  schedlab sweep configs/sweeps/ui_nice.yaml --out ui_nice --plot ui_nice/plots\n"
               "  schedlab sweep configs/sweeps/ui_nice.yaml --shard 0/4 --out shard0   # one of 4 machines\n"
               "  schedlab sweep configs/sweeps/ui_nice.yaml --why --out ui_nice_why   # and the reasons\n";
}

void print_merge_help() {
  std::cout << "usage: schedlab merge DIR... --out DIR [options]\n"
               "\n"
               "Combines the folders written by 'schedlab sweep --shard i/N' (every i of one N,\n"
               "in any order) into one sweep folder, byte for byte what a single unsharded\n"
               "sweep writes. Fails, naming the missing runs, when a shard is missing or\n"
               "unfinished.\n"
               "\n"
            << merge_options()
            << "\n"
               "example:\n"
               "  schedlab merge shard0 shard1 shard2 shard3 --out ui_nice\n";
}

uint64_t parse_u64(const std::string& option, const std::string& text, const char* command = "run") {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    usage_error(fmt::format("--{} expects a non-negative integer, got '{}'", option, text), command);
  uint64_t v = 0;
  for (char c : text) {
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) usage_error(fmt::format("--{} value '{}' is too large", option, text), command);
    v = v * 10 + d;
  }
  return v;
}

// Parses a command line against `desc` plus positional arguments.
po::variables_map parse_command(const std::vector<std::string>& args, const po::options_description& desc,
                                const char* positional_name, const char* command) {
  po::options_description hidden;
  hidden.add_options()(positional_name, po::value<std::vector<std::string>>());
  po::options_description all;
  all.add(desc).add(hidden);
  po::positional_options_description positional;
  positional.add(positional_name, -1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args)
                  .options(all)
                  .positional(positional)
                  .style(po::command_line_style::unix_style ^ po::command_line_style::allow_guessing)
                  .run(),
              vm);
    po::notify(vm);
  } catch (const po::unknown_option& e) {
    // A misspelt option: suggest the closest of this command's options.
    std::vector<std::string> names;
    for (const auto& o : desc.options()) names.push_back("--" + o->long_name());
    usage_error(fmt::format("{}{}", e.what(), did_you_mean(e.get_option_name(), names)), command);
  } catch (const po::error& e) {
    usage_error(e.what(), command);
  }
  return vm;
}

std::string text_option(const po::variables_map& vm, const char* name, const char* command) {
  if (!vm.count(name)) return {};
  const std::string v = vm[name].as<std::string>();
  if (v.empty()) usage_error(fmt::format("--{} needs a {}", name, std::string(name) == "plot" || std::string(name) == "out" ? "folder" : "file name"), command);
  return v;
}

int parse_jobs(const po::variables_map& vm, const char* command) {
  if (!vm.count("jobs")) return default_jobs();
  const uint64_t j = parse_u64("jobs", vm["jobs"].as<std::string>(), command);
  if (j < 1 || j > 1024) usage_error(fmt::format("--jobs must be between 1 and 1024, got {}", j), command);
  return static_cast<int>(j);
}

int parse_runs(const po::variables_map& vm, const char* command) {
  const uint64_t runs = parse_u64("runs", vm["runs"].as<std::string>(), command);
  if (runs < 1 || runs > static_cast<uint64_t>(kMaxRuns))
    usage_error(fmt::format("--runs must be between 1 and {}, got {}", kMaxRuns, vm["runs"].as<std::string>()), command);
  return static_cast<int>(runs);
}

// The simulator's logger is single-threaded (sim/log.h): a verbose log
// forces one thread so lines neither interleave nor race.
int apply_log_level(const po::variables_map& vm, int jobs, const char* command) {
  if (!vm.count("log")) return jobs;
  const std::string level = vm["log"].as<std::string>();
  if (!set_log_level(level))
    usage_error(fmt::format("--log: unknown level '{}' (expected off, error, warn, info, debug, trace)", level), command);
  if ((level == "info" || level == "debug" || level == "trace") && jobs > 1) {
    std::cerr << "note: --log " << level << " runs one simulation at a time (-j 1)\n";
    return 1;
  }
  return jobs;
}

// --duration (positive) or --warmup (not negative), with a unit; nullopt
// when not given.
std::optional<Time> time_option(const po::variables_map& vm, const char* key, const char* command) {
  if (!vm.count(key)) return std::nullopt;
  std::string why;
  const std::string& text = vm[key].as<std::string>();
  const std::optional<Time> t = parse_duration(text, &why);
  if (!t) usage_error(fmt::format("--{}: {}", key, why), command);
  if (std::string_view(key) == "duration" && t->count() <= 0)
    usage_error(fmt::format("--duration must be positive, got '{}'", text), command);
  if (t->count() < 0) usage_error(fmt::format("--{} must not be negative", key), command);
  return t;
}

struct RunArgs {
  std::string config;
  std::optional<uint64_t> seed;
  std::optional<Time> duration, warmup, start_jitter;
  bool why = false;
  bool strict = false;
  int runs = 1;
  int jobs = 1;
  std::string json, csv, trace, sched_map, wakegraph;
  bool quiet = false;
  bool help = false;
};

RunArgs parse_run_args(const std::vector<std::string>& args) {
  po::variables_map vm = parse_command(args, run_options(), "config", "run");
  RunArgs a;
  a.help = vm.count("help") > 0;
  if (a.help) return a;
  a.quiet = vm.count("quiet") > 0;
  a.strict = vm.count("strict") > 0;
  if (!vm.count("config")) usage_error("missing CONFIG: the scenario file to run");
  const auto& configs = vm["config"].as<std::vector<std::string>>();
  if (configs.size() > 1) usage_error(fmt::format("one CONFIG expected, got {}: '{}', '{}'", configs.size(), configs[0], configs[1]));
  a.config = configs[0];

  if (vm.count("seed")) a.seed = parse_u64("seed", vm["seed"].as<std::string>());
  if (vm.count("runs")) a.runs = parse_runs(vm, "run");
  a.jobs = parse_jobs(vm, "run");
  a.duration = time_option(vm, "duration", "run");
  a.warmup = time_option(vm, "warmup", "run");
  a.start_jitter = time_option(vm, "start-jitter", "run");
  a.json = text_option(vm, "json", "run");
  a.csv = text_option(vm, "csv", "run");
  a.trace = text_option(vm, "trace", "run");
  a.sched_map = text_option(vm, "sched-map", "run");
  a.wakegraph = text_option(vm, "wakegraph", "run");
  a.why = vm.count("why") > 0;
  a.jobs = apply_log_level(vm, a.jobs, "run");
  return a;
}

// Two names for one file (both may not exist yet).
bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec1, ec2;
  auto ca = std::filesystem::weakly_canonical(a, ec1);
  auto cb = std::filesystem::weakly_canonical(b, ec2);
  if (ec1 || ec2) return a == b;
  return ca == cb;
}

// No output may overwrite the input file or another output.
void check_output_paths(const std::string& input, const char* input_what,
                        const std::vector<std::pair<std::string, std::string>>& outputs, const char* command) {
  std::vector<std::pair<std::string, std::string>> outs;
  for (const auto& o : outputs)
    if (!o.second.empty()) outs.push_back(o);
  for (size_t i = 0; i < outs.size(); ++i) {
    if (same_file(outs[i].second, input))
      usage_error(fmt::format("{} '{}' would overwrite the {}", outs[i].first, outs[i].second, input_what), command);
    for (size_t j = i + 1; j < outs.size(); ++j)
      // Two descriptors on one file (`--json /dev/stdout --csv /dev/stderr
      // > all 2>&1`) each write through in turn; two paths would rename
      // over each other.
      if (same_file(outs[i].second, outs[j].second) &&
          !(names_open_descriptor(outs[i].second) && names_open_descriptor(outs[j].second)))
        usage_error(fmt::format("{} and {} name the same file '{}'", outs[i].first, outs[j].first, outs[i].second),
                    command);
  }
}

void check_readable(const std::string& path) {
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status))
    throw CliError(kExitUsage, fmt::format("cannot read '{}': no such file", path));
  if (std::filesystem::is_directory(status)) throw CliError(kExitUsage, fmt::format("cannot read '{}': is a directory", path));
}

// Loads a configuration file with `load`, mapping every failure to exit code 2.
template <typename Load>
auto load_config_with(const std::string& path, Load load) {
  check_readable(path);
  try {
    return load(path);
  } catch (const ConfigError& e) {
    throw CliError(kExitUsage, e.what());
  } catch (const ModelError& e) {
    throw CliError(kExitUsage, e.what());
  } catch (const std::exception& e) {
    // Loaders wrap their errors in ConfigError; anything else still means
    // the file could not be used.
    throw CliError(kExitUsage, fmt::format("{}: {}", path, e.what()));
  }
}

// --set-file FILE...: each file's overlays join the experiment's common
// ones, in order, and are tried on the scenario before anything runs.
void add_set_files(const po::variables_map& vm, ExperimentSpec& spec) {
  if (!vm.count("set-file")) return;
  for (const std::string& file : vm["set-file"].as<std::vector<std::string>>())
    load_config_with(file, [&](const std::string& p) {
      add_overlay_file(spec, p);
      return 0;
    });
}

ScenarioParams load_config(const std::string& path) {
  return load_config_with(path, [](const std::string& p) { return load_scenario_file(p); });
}

int run_command(const std::vector<std::string>& args) {
  RunArgs a = parse_run_args(args);
  if (a.help) {
    print_run_help();
    return kExitOk;
  }
  check_output_paths(a.config, "scenario file",
                     {{"--json", a.json}, {"--csv", a.csv}, {"--trace", a.trace}, {"--sched-map", a.sched_map}, {"--wakegraph", a.wakegraph}},
                     "run");

  const ScenarioParams params = load_config(a.config);
  RunOptions options;
  options.seed = a.seed;
  options.runs = a.runs;
  options.duration = a.duration;
  options.warmup = a.warmup;
  options.why = a.why;
  options.jobs = a.jobs;
  options.start_jitter = a.start_jitter.value_or(Time::zero());
  const ScenarioParams effective = effective_params(params, options);
  if (effective.duration <= effective.warmup)
    usage_error(fmt::format("the duration ({}) must be longer than the {} ({}){}", format_time(effective.duration),
                            a.warmup ? "--warmup" : "scenario's warmup", format_time(effective.warmup),
                            a.warmup ? "" : " (--warmup T sets a shorter one)"));
  if (options.start_jitter >= effective.duration)
    usage_error(fmt::format("--start-jitter ({}) must be shorter than the duration ({}): tasks would start after the "
                            "run ended",
                            format_time(options.start_jitter), format_time(effective.duration)));

  report_warnings({params}, a.strict ? print_strict_warning : print_warning, a.strict);
  std::cerr.flush();

  // Output files are opened (as temporaries) before the run, so a bad path
  // fails now rather than after a long simulation.
  std::unique_ptr<AtomicFile> json_file, csv_file, trace_file, map_file, wake_file;
  if (!a.json.empty()) json_file = std::make_unique<AtomicFile>(a.json);
  if (!a.csv.empty()) csv_file = std::make_unique<AtomicFile>(a.csv);
  if (!a.trace.empty()) trace_file = std::make_unique<AtomicFile>(a.trace);
  if (!a.sched_map.empty()) map_file = std::make_unique<AtomicFile>(a.sched_map);
  if (!a.wakegraph.empty()) wake_file = std::make_unique<AtomicFile>(a.wakegraph);

  const ScenarioInfo info = scenario_info(effective);
  if (!a.quiet) {
    std::cout << format_run_header(info, a.runs, effective.seed)
              << (a.start_jitter ? fmt::format(", start jitter {}", format_time(*a.start_jitter)) : "") << "\n"
              << overheads_note(info) << "\n";
    std::cout.flush();
  }

  std::unique_ptr<FtraceWriter> tracer;
  if (trace_file) {
    FtraceWriter::Options topt;
    topt.cpus = info.cpus;
    topt.comment = fmt::format("schedlab {}: {} run 0 seed {}, kernel {}", kVersion, info.name,
                               derive_seed(effective.seed, 0), info.kernel_version);
    tracer = std::make_unique<FtraceWriter>(trace_file->stream(), topt);
    options.run0_observers.push_back(tracer.get());
  }
  std::unique_ptr<SchedMapWriter> sched_map;
  if (map_file) {
    sched_map = std::make_unique<SchedMapWriter>(
        map_file->stream(), SchedMapWriter::Options{info.cpus, fmt::format("schedlab {}: {} run 0 seed {}, kernel {}",
                                                                            kVersion, info.name,
                                                                            derive_seed(effective.seed, 0),
                                                                            info.kernel_version)});
    options.run0_observers.push_back(sched_map.get());
  }
  WakeGraph wake;
  if (wake_file) options.wakegraph = &wake;

  const bool progress = !a.quiet && a.runs > 1 && ::isatty(STDERR_FILENO);
  if (progress) {
    options.progress = [](int done, int total) {
      std::fprintf(stderr, "\rrun %d/%d", done, total);
      std::fflush(stderr);
    };
  }

  RunSet set;
  try {
    set = run_scenario(params, options);
  } catch (const ModelError& e) {
    if (progress) std::fputs("\r\033[K", stderr);
    throw CliError(kExitUsage, e.what());
  } catch (const std::invalid_argument& e) {
    if (progress) std::fputs("\r\033[K", stderr);
    throw CliError(kExitUsage, e.what());
  }
  if (progress) std::fputs("\r\033[K", stderr);

  // The tables first, then the files: a report sent to /dev/stdout follows
  // the tables, as in `compare`.
  if (!a.quiet) {
    std::cout << render_report(set);
    // N copies of one run make no statistics (their pooled percentiles
    // only look finer): say so.
    if (set.runs.size() > 1 && runs_identical(set))
      std::cout << fmt::format("\nnote: the {} runs are identical: nothing in this scenario varies with the seed. "
                               "--start-jitter T (e.g. a frame period) starts each task up to T late in each run.\n",
                               set.runs.size());
    std::cout.flush();
  }
  std::vector<AtomicFile*> files;
  if (json_file) {
    json_file->write(render_json(set));
    files.push_back(json_file.get());
  }
  if (csv_file) {
    csv_file->write(render_csv(set));
    files.push_back(csv_file.get());
  }
  if (trace_file) {
    tracer->flush();
    files.push_back(trace_file.get());
  }
  if (map_file) {
    sched_map->flush();
    files.push_back(map_file.get());
  }
  if (wake_file) {
    wake_file->write(render_wakegraph_dot({{info.name, &wake}}));
    files.push_back(wake_file.get());
  }
  commit_all(files);
  return kExitOk;
}

// The single positional argument of a command.
std::string one_positional(const po::variables_map& vm, const char* name, const char* what, const char* command) {
  if (!vm.count(name)) usage_error(fmt::format("missing {}", what), command);
  const auto& v = vm[name].as<std::vector<std::string>>();
  if (v.size() > 1) usage_error(fmt::format("one {} expected, got {}: '{}', '{}'", what, v.size(), v[0], v[1]), command);
  return v[0];
}

void make_plot_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw OutputError(fmt::format("cannot create '{}': {}", dir, ec.message()));
}

void run_plots(const std::string& script, const std::vector<std::string>& args) {
  try {
    run_plot_script(script, args);
  } catch (const std::runtime_error& e) {
    throw CliError(kExitFailure, e.what());
  }
}

int compare_command(const std::vector<std::string>& args) {
  po::variables_map vm = parse_command(args, compare_options(), "experiment", "compare");
  if (vm.count("help")) {
    print_compare_help();
    return kExitOk;
  }
  const std::string path = one_positional(vm, "experiment", "EXPERIMENT: the experiment file to run", "compare");
  const bool quiet = vm.count("quiet") > 0;
  CompareOptions options;
  options.jobs = apply_log_level(vm, parse_jobs(vm, "compare"), "compare");
  if (vm.count("runs")) options.runs = parse_runs(vm, "compare");
  const std::string json = text_option(vm, "json", "compare"), csv = text_option(vm, "csv", "compare");
  const std::string plot = text_option(vm, "plot", "compare"), wake = text_option(vm, "wakegraph", "compare");
  check_output_paths(path, "experiment file", {{"--json", json}, {"--csv", csv}, {"--wakegraph", wake}}, "compare");
  options.wakegraph = !wake.empty();
  options.why = vm.count("why") > 0;
  options.strict = vm.count("strict") > 0;
  options.warning = options.strict ? print_strict_warning : print_warning;

  ExperimentSpec spec = load_config_with(path, [](const std::string& p) { return load_experiment_file(p); });
  add_set_files(vm, spec);
  // --metric NAME...: rows after the file's own (or after the defaults a
  // file without `metrics:` gets); a malformed name fails here, an unknown
  // task or group when the scenario is loaded, both before any run.
  if (vm.count("metric")) {
    if (spec.metrics.empty()) spec.metrics = default_compare_metrics(spec.source);
    for (const std::string& m : vm["metric"].as<std::vector<std::string>>()) {
      std::string why;
      if (!parse_metric_name(m, &why)) usage_error(fmt::format("--metric '{}': {}", m, why), "compare");
      spec.metrics.push_back({m, {"the command line's --metric", 0, 0}});
    }
  }
  // --duration / --warmup: overlays after the experiment's own, so they
  // win; the scenario loader checks them (warmup < duration).
  std::optional<Time> duration, warmup;
  for (const char* key : {"duration", "warmup"}) {
    const std::optional<Time> t = time_option(vm, key, "compare");
    if (!t) continue;
    (std::string_view(key) == "duration" ? duration : warmup) = t;
    spec.common.push_back({key, vm[key].as<std::string>(), {fmt::format("the command line's --{}", key), 0, 0}});
  }
  if (duration && warmup && *duration <= *warmup)
    usage_error(fmt::format("the duration ({}) must be longer than the --warmup ({})", format_time(*duration),
                            format_time(*warmup)),
                "compare");
  // One given against the experiment's other: say so here, not at the
  // file's line the loader would blame.
  if (duration && !warmup && spec.warmup && *duration <= *spec.warmup)
    usage_error(fmt::format("the --duration ({}) must be longer than the experiment's warmup ({}) (--warmup T sets "
                            "a shorter one)",
                            format_time(*duration), format_time(*spec.warmup)),
                "compare");
  if (warmup && !duration && spec.duration && *spec.duration <= *warmup)
    usage_error(fmt::format("the --warmup ({}) must be shorter than the experiment's duration ({}) (--duration T sets "
                            "a longer one)",
                            format_time(*warmup), format_time(*spec.duration)),
                "compare");
  std::unique_ptr<AtomicFile> json_file, csv_file, wake_file;
  if (!json.empty()) json_file = std::make_unique<AtomicFile>(json);
  if (!csv.empty()) csv_file = std::make_unique<AtomicFile>(csv);
  if (!wake.empty()) wake_file = std::make_unique<AtomicFile>(wake);
  if (!plot.empty()) make_plot_dir(plot);  // before the runs, like the files above: fail early, write nothing

  const size_t total = spec.variants.size() * static_cast<size_t>(options.runs.value_or(spec.runs));
  Progress progress("runs", total, !quiet && total > 1 && ::isatty(STDERR_FILENO), true);
  options.progress = [&](size_t done, size_t) { progress.update(done); };
  // ConfigError and ModelError reach main(), which reports them with exit
  // code 2; the progress bar is cleared on the way (~Progress).
  Comparison c;
  try {
    c = run_comparison(spec, options);
  } catch (const std::invalid_argument& e) {
    throw CliError(kExitUsage, e.what());
  }
  progress.finish();

  if (!quiet) {
    std::cout << render_compare_report(c);
    std::cout.flush();
  }
  std::vector<AtomicFile*> files;
  if (json_file) {
    json_file->write(render_compare_json(c));
    files.push_back(json_file.get());
  }
  if (csv_file) {
    csv_file->write(render_compare_csv(c));
    files.push_back(csv_file.get());
  }
  if (wake_file) {
    std::vector<std::pair<std::string, const WakeGraph*>> graphs;
    for (size_t v = 0; v < c.wakegraphs.size(); ++v) graphs.emplace_back(spec.variants[v].name, &c.wakegraphs[v]);
    wake_file->write(render_wakegraph_dot(graphs));
    files.push_back(wake_file.get());
  }
  commit_all(files);
  if (!plot.empty()) {
    const std::string data = (std::filesystem::path(plot) / "compare_data.json").string();
    write_file_atomically(data, render_compare_plot_data(c));
    run_plots("compare_plots.py", {data, plot});
    if (!quiet) {
      const std::filesystem::path dir(plot);
      std::cout << fmt::format("plots: {}, {}\n", (dir / "latency_cdf.png").string(), (dir / "changes.png").string());
    }
  }
  return kExitOk;
}

void plot_sweep(const std::string& out, const std::string& plot, bool quiet) {
  run_plots("sweep_plots.py", {(std::filesystem::path(out) / "sweep.json").string(), plot});
  if (!quiet) std::cout << fmt::format("plots: {}\n", (std::filesystem::path(plot) / "sweep_*.png").string());
}

int sweep_command(const std::vector<std::string>& args) {
  po::variables_map vm = parse_command(args, sweep_options(), "sweep", "sweep");
  if (vm.count("help")) {
    print_sweep_help();
    return kExitOk;
  }
  const std::string path = one_positional(vm, "sweep", "SWEEP: the sweep file to run", "sweep");
  const bool quiet = vm.count("quiet") > 0;
  SweepOptions options;
  options.jobs = apply_log_level(vm, parse_jobs(vm, "sweep"), "sweep");
  options.out = text_option(vm, "out", "sweep");
  options.why = vm.count("why") > 0;
  options.strict = vm.count("strict") > 0;
  options.warning = options.strict ? print_strict_warning : print_warning;
  const std::string plot = text_option(vm, "plot", "sweep");
  if (vm.count("shard")) {
    const std::string text = vm["shard"].as<std::string>();
    auto shard = parse_shard(text);
    if (!shard) usage_error(fmt::format("--shard expects i/N with 0 <= i < N (e.g. 0/4), got '{}'", text), "sweep");
    options.shard = shard->first;
    options.shards = shard->second;
    if (!plot.empty()) usage_error("--plot needs the whole sweep: plot after 'schedlab merge'", "sweep");
  }
  ExperimentSpec spec = load_config_with(path, [](const std::string& p) { return load_sweep_file(p); });
  add_set_files(vm, spec);
  if (options.out.empty()) options.out = "sweep_" + spec.name;
  if (same_file(options.out, path)) usage_error(fmt::format("--out '{}' is the sweep file", options.out), "sweep");
  options.progress = !quiet;
  options.tty = ::isatty(STDERR_FILENO);
  if (!plot.empty()) make_plot_dir(plot);  // before the runs: an unusable --plot fails early

  const SweepSummary summary = run_sweep(spec, options);  // errors: main() reports them
  if (!quiet) {
    std::cout << render_sweep_summary(summary);
    if (options.shards > 1)
      std::cout << fmt::format("shard {}/{} done; when every shard is: schedlab merge SHARD_DIRS... --out DIR\n",
                               options.shard, options.shards);
    std::cout.flush();
  }
  if (!plot.empty()) plot_sweep(options.out, plot, quiet);
  return kExitOk;
}

int merge_command(const std::vector<std::string>& args) {
  po::variables_map vm = parse_command(args, merge_options(), "dirs", "merge");
  if (vm.count("help")) {
    print_merge_help();
    return kExitOk;
  }
  if (!vm.count("dirs")) usage_error("missing DIR...: the shard folders to merge", "merge");
  const std::vector<std::string> dirs = vm["dirs"].as<std::vector<std::string>>();
  const std::string out = text_option(vm, "out", "merge");
  if (out.empty()) usage_error("missing --out DIR: the merged folder", "merge");
  const std::string plot = text_option(vm, "plot", "merge");
  const bool quiet = vm.count("quiet") > 0;
  if (!plot.empty()) make_plot_dir(plot);
  const SweepSummary summary = merge_sweeps(dirs, out);  // errors: main() reports them
  if (!quiet) {
    std::cout << fmt::format("merged {} folder{} into {}\n", dirs.size(), dirs.size() == 1 ? "" : "s", out);
    std::cout << render_sweep_summary(summary);
    std::cout.flush();
  }
  if (!plot.empty()) plot_sweep(out, plot, quiet);
  return kExitOk;
}

int dispatch(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    print_main_help();
    return kExitUsage;
  }
  const std::string& command = args[0];
  if (command == "--help" || command == "-h" || command == "help") {
    print_main_help();
    return kExitOk;
  }
  if (command == "--version") {
    std::cout << "schedlab " << kVersion << '\n';
    return kExitOk;
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (command == "run") return run_command(rest);
  if (command == "compare") return compare_command(rest);
  if (command == "sweep") return sweep_command(rest);
  if (command == "merge") return merge_command(rest);
  if (!command.empty() && command[0] == '-')
    throw CliError(kExitUsage, fmt::format("unknown option '{}' (a command comes first: schedlab run CONFIG ...)\n(see 'schedlab --help')", command));
  throw CliError(kExitUsage, fmt::format("unknown command '{}' (commands: run, compare, sweep, merge)\n(see 'schedlab --help')", command));
}

}  // namespace

int main(int argc, char** argv) {
  install_cleanup_signal_handlers();
  schedlab::retain_freed_memory();  // runs after the first reuse the pages freed before them
  try {
    const int code = dispatch(argc, argv);
    // The tables went to standard output: a full disk or a closed stdout
    // is an error, as it is for an output file.
    std::cout.flush();
    if (std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout) {
      const int err = errno;
      std::cerr << "error: cannot write standard output: " << (err ? std::strerror(err) : "write error") << '\n';
      return kExitUsage;
    }
    return code;
  } catch (const CliError& e) {
    std::cerr << "error: " << e.what() << '\n';
    return e.code;
  } catch (const ConfigError& e) {
    std::cerr << "error: " << e.what() << '\n';
    return kExitUsage;
  } catch (const ModelError& e) {
    std::cerr << "error: " << e.what() << '\n';
    return kExitUsage;
  } catch (const SweepError& e) {
    std::cerr << "error: " << e.what() << '\n';
    return kExitUsage;
  } catch (const OutputError& e) {
    std::cerr << "error: " << e.what() << '\n';
    return kExitUsage;
  } catch (const StrictWarningsError& e) {
    std::cerr << "error: " << e.what() << '\n';
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "error: internal: " << e.what() << '\n';
    return kExitFailure;
  }
}
