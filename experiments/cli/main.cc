// schedlab: the command line. Subcommands: run (more to come: compare,
// sweep, merge). Exit codes: 0 success; 1 an output file could not be
// written or an internal error; 2 a usage, configuration or model error.
// No output file is ever left half-written (experiments/lib/atomic_file.h).
#include <unistd.h>

#include <boost/program_options.hpp>
#include <cstdio>
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
#include "experiments/lib/ftrace_writer.h"
#include "experiments/lib/report_csv.h"
#include "experiments/lib/report_json.h"
#include "experiments/lib/report_table.h"
#include "experiments/lib/runner.h"
#include "models/config/config.h"
#include "models/errors.h"
#include "sim/log.h"
#include "sim/rng.h"

namespace po = boost::program_options;
using namespace schedlab;

namespace {

constexpr const char* kVersion = "0.1.0";
constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;  // output files, internal errors
constexpr int kExitUsage = 2;    // command line, configuration, model
constexpr int kMaxRuns = 1000000;

// An error with the exit code it maps to; main() prints "error: <what>".
struct CliError : std::runtime_error {
  CliError(int code, const std::string& what) : std::runtime_error(what), code(code) {}
  int code;
};

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
               "  run    simulate a scenario N times; print per-task wakeup latency, runnable\n"
               "         wait, CPU share and per-CPU busy/idle time; write JSON, CSV, a trace\n"
               "\n"
               "'schedlab <command> --help' describes a command's options.\n"
               "\n"
               "example:\n"
               "  schedlab run configs/scenarios/two_hogs.yaml --runs 5 --json two_hogs.json\n";
}

po::options_description run_options() {
  po::options_description desc("options", 100);
  // Values are read as text and parsed here: Boost's lexical_cast turns
  // "-1" into 2^64-1 for unsigned types, and durations need units.
  desc.add_options()
      ("seed", po::value<std::string>()->value_name("N"), "base seed (default: the scenario's seed); run i uses derive_seed(N, i)")
      ("duration", po::value<std::string>()->value_name("T"), "simulated time per run, with a unit: 500ms, 2s (default: the scenario's)")
      ("runs", po::value<std::string>()->value_name("N"), "number of runs, >= 1 (default 1)")
      ("json", po::value<std::string>()->value_name("FILE"), "write the report as JSON (docs/outputs.md)")
      ("csv", po::value<std::string>()->value_name("FILE"), "write the report as CSV (docs/outputs.md)")
      ("trace", po::value<std::string>()->value_name("FILE"), "write run 0 as ftrace text that Perfetto opens (ui.perfetto.dev)")
      ("log", po::value<std::string>()->value_name("LEVEL"), "simulator log on stderr: off, error, warn (default), info, debug, trace")
      ("quiet,q", "print no header, tables or progress (warnings and errors still go to stderr)")
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
               "      --json two_hogs.json --csv two_hogs.csv --trace two_hogs.trace\n";
}

struct RunArgs {
  std::string config;
  std::optional<uint64_t> seed;
  std::optional<Time> duration;
  int runs = 1;
  std::string json, csv, trace;
  std::string log_level;
  bool quiet = false;
  bool help = false;
};

uint64_t parse_u64(const std::string& option, const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    usage_error(fmt::format("--{} expects a non-negative integer, got '{}'", option, text));
  uint64_t v = 0;
  for (char c : text) {
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) usage_error(fmt::format("--{} value '{}' is too large", option, text));
    v = v * 10 + d;
  }
  return v;
}

RunArgs parse_run_args(const std::vector<std::string>& args) {
  po::options_description desc = run_options();
  po::options_description hidden;
  hidden.add_options()("config", po::value<std::vector<std::string>>());
  po::options_description all;
  all.add(desc).add(hidden);
  po::positional_options_description positional;
  positional.add("config", -1);

  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args)
                  .options(all)
                  .positional(positional)
                  .style(po::command_line_style::unix_style ^ po::command_line_style::allow_guessing)
                  .run(),
              vm);
    po::notify(vm);
  } catch (const po::error& e) {
    usage_error(e.what());
  }

  RunArgs a;
  a.help = vm.count("help") > 0;
  if (a.help) return a;
  a.quiet = vm.count("quiet") > 0;
  if (!vm.count("config")) usage_error("missing CONFIG: the scenario file to run");
  const auto& configs = vm["config"].as<std::vector<std::string>>();
  if (configs.size() > 1) usage_error(fmt::format("one CONFIG expected, got {}: '{}', '{}'", configs.size(), configs[0], configs[1]));
  a.config = configs[0];

  if (vm.count("seed")) a.seed = parse_u64("seed", vm["seed"].as<std::string>());
  if (vm.count("runs")) {
    uint64_t runs = parse_u64("runs", vm["runs"].as<std::string>());
    if (runs < 1 || runs > static_cast<uint64_t>(kMaxRuns))
      usage_error(fmt::format("--runs must be between 1 and {}, got {}", kMaxRuns, vm["runs"].as<std::string>()));
    a.runs = static_cast<int>(runs);
  }
  if (vm.count("duration")) {
    std::string why;
    const std::string& text = vm["duration"].as<std::string>();
    auto d = parse_duration(text, &why);
    if (!d) usage_error(fmt::format("--duration: {}", why));
    if (d->count() <= 0) usage_error(fmt::format("--duration must be positive, got '{}'", text));
    a.duration = *d;
  }
  if (vm.count("json")) a.json = vm["json"].as<std::string>();
  if (vm.count("csv")) a.csv = vm["csv"].as<std::string>();
  if (vm.count("trace")) a.trace = vm["trace"].as<std::string>();
  if (vm.count("log")) a.log_level = vm["log"].as<std::string>();
  for (const auto& [name, path] : {std::pair{"json", &a.json}, std::pair{"csv", &a.csv}, std::pair{"trace", &a.trace}})
    if (vm.count(name) && path->empty()) usage_error(fmt::format("--{} needs a file name", name));
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

void check_output_paths(const RunArgs& a) {
  std::vector<std::pair<std::string, std::string>> outs;
  if (!a.json.empty()) outs.emplace_back("--json", a.json);
  if (!a.csv.empty()) outs.emplace_back("--csv", a.csv);
  if (!a.trace.empty()) outs.emplace_back("--trace", a.trace);
  for (size_t i = 0; i < outs.size(); ++i) {
    if (same_file(outs[i].second, a.config))
      usage_error(fmt::format("{} '{}' would overwrite the scenario file", outs[i].first, outs[i].second));
    for (size_t j = i + 1; j < outs.size(); ++j)
      if (same_file(outs[i].second, outs[j].second))
        usage_error(fmt::format("{} and {} name the same file '{}'", outs[i].first, outs[j].first, outs[i].second));
  }
}

ScenarioParams load_config(const std::string& path) {
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status))
    throw CliError(kExitUsage, fmt::format("cannot read '{}': no such file", path));
  if (std::filesystem::is_directory(status)) throw CliError(kExitUsage, fmt::format("cannot read '{}': is a directory", path));
  try {
    return load_scenario_file(path);
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

int run_command(const std::vector<std::string>& args) {
  RunArgs a = parse_run_args(args);
  if (a.help) {
    print_run_help();
    return kExitOk;
  }
  if (!a.log_level.empty() && !set_log_level(a.log_level))
    usage_error(fmt::format("--log: unknown level '{}' (expected off, error, warn, info, debug, trace)", a.log_level));
  check_output_paths(a);

  const ScenarioParams params = load_config(a.config);
  RunOptions options;
  options.seed = a.seed;
  options.runs = a.runs;
  options.duration = a.duration;
  const ScenarioParams effective = effective_params(params, options);
  if (effective.duration <= effective.warmup)
    usage_error(fmt::format("the duration ({}) must be longer than the scenario's warmup ({})",
                            format_time(effective.duration), format_time(effective.warmup)));

  for (const std::string& w : params.warnings) std::cerr << "warning: " << w << '\n';
  std::cerr.flush();

  // Output files are opened (as temporaries) before the run, so a bad path
  // fails now rather than after a long simulation.
  std::unique_ptr<AtomicFile> json_file, csv_file, trace_file;
  if (!a.json.empty()) json_file = std::make_unique<AtomicFile>(a.json);
  if (!a.csv.empty()) csv_file = std::make_unique<AtomicFile>(a.csv);
  if (!a.trace.empty()) trace_file = std::make_unique<AtomicFile>(a.trace);

  const ScenarioInfo info = scenario_info(effective);
  if (!a.quiet) {
    std::cout << format_run_header(info, a.runs, effective.seed) << "\n\n";
    std::cout.flush();
  }

  std::unique_ptr<FtraceWriter> tracer;
  if (trace_file) {
    FtraceWriter::Options topt;
    topt.cpus = info.cpus;
    topt.comment = fmt::format("schedlab {}: {} run 0 seed {}, kernel {}", kVersion, info.name,
                               derive_seed(effective.seed, 0), info.kernel_version);
    tracer = std::make_unique<FtraceWriter>(trace_file->stream(), topt);
    options.trace = tracer.get();
  }

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
  commit_all(files);

  if (!a.quiet) {
    std::cout << render_report(set);
    std::cout.flush();
  }
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
  if (!command.empty() && command[0] == '-')
    throw CliError(kExitUsage, fmt::format("unknown option '{}' (a command comes first: schedlab run CONFIG ...)\n(see 'schedlab --help')", command));
  throw CliError(kExitUsage, fmt::format("unknown command '{}' (commands: run)\n(see 'schedlab --help')", command));
}

}  // namespace

int main(int argc, char** argv) {
  install_cleanup_signal_handlers();
  try {
    return dispatch(argc, argv);
  } catch (const CliError& e) {
    std::cerr << "error: " << e.what() << '\n';
    return e.code;
  } catch (const ConfigError& e) {
    std::cerr << "error: " << e.what() << '\n';
    return kExitUsage;
  } catch (const ModelError& e) {
    std::cerr << "error: " << e.what() << '\n';
    return kExitUsage;
  } catch (const OutputError& e) {
    std::cerr << "error: " << e.what() << '\n';
    return kExitFailure;
  } catch (const std::exception& e) {
    std::cerr << "error: internal: " << e.what() << '\n';
    return kExitFailure;
  }
}
