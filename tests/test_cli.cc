// The schedlab command line, run as a program: help, exit codes, error
// messages, no partial output files, deterministic JSON.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

struct CliResult {
  int code = -1;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A fresh directory per test case, removed at the end.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name) {
    path = fs::temp_directory_path() / ("schedlab_test_cli_" + std::to_string(::getpid())) / name;
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path.parent_path()); }
  fs::path operator/(const std::string& name) const { return path / name; }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(path)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
};

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'')
      q += "'\\''";
    else
      q += c;
  }
  return q + "'";
}

// Runs `schedlab ARGS` (ARGS already shell-quoted where needed) with
// stdout and stderr captured in files of `dir`.
CliResult run_cli(const TempDir& dir, const std::string& args) {
  const fs::path out = dir.path.parent_path() / (dir.path.filename().string() + ".stdout");
  const fs::path err = dir.path.parent_path() / (dir.path.filename().string() + ".stderr");
  const std::string cmd = quote(SCHEDLAB_BINARY) + " " + args + " >" + quote(out.string()) + " 2>" +
                          quote(err.string()) + " </dev/null";
  int status = std::system(cmd.c_str());
  CliResult r;
  r.code = (status != -1 && WIFEXITED(status)) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  fs::remove(out);
  fs::remove(err);
  return r;
}

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary);
  f << text;
}

// The two-hog scenario of the repository, or an equivalent one written here
// when the repository has none (yet).
std::string two_hogs(const TempDir& dir) {
  const fs::path repo = fs::path(SCHEDLAB_SOURCE_DIR) / "configs" / "scenarios" / "two_hogs.yaml";
  if (fs::exists(repo)) return repo.string();
  const fs::path own = dir / "two_hogs.yaml";
  write_text(own,
             "platform: {cpus: 1}\n"
             "duration: 1s\n"
             "tasks: [{name: hog, instances: 2, events: [{run: 10ms}]}]\n");
  return own.string();
}

}  // namespace

TEST_CASE("schedlab --help describes the commands and exits 0", "[cli]") {
  TempDir dir("help");
  CliResult r = run_cli(dir, "--help");
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("usage: schedlab <command>"));
  CHECK_THAT(r.out, Catch::Contains("run"));
  CHECK_THAT(r.out, Catch::Contains("example:"));

  CliResult run_help = run_cli(dir, "run --help");
  CHECK(run_help.code == 0);
  CHECK_THAT(run_help.out, Catch::Contains("usage: schedlab run CONFIG"));
  for (const char* opt : {"--seed", "--duration", "--runs", "--json", "--csv", "--trace", "--log", "--quiet"})
    CHECK_THAT(run_help.out, Catch::Contains(opt));
  CHECK_THAT(run_help.out, Catch::Contains("example:"));
  CHECK(run_help.err.empty());

  CliResult version = run_cli(dir, "--version");
  CHECK(version.code == 0);
  CHECK_THAT(version.out, Catch::StartsWith("schedlab "));
}

TEST_CASE("an unknown command exits 2", "[cli]") {
  TempDir dir("unknown_command");
  CliResult r = run_cli(dir, "fly");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::StartsWith("error: unknown command 'fly'"));
}

TEST_CASE("a missing scenario file is an error with exit code 2", "[cli]") {
  TempDir dir("missing");
  const std::string json = (dir / "out.json").string();
  CliResult r = run_cli(dir, "run " + quote((dir / "no_such.yaml").string()) + " --json " + quote(json));
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::StartsWith("error: "));
  CHECK_THAT(r.err, Catch::Contains("no_such.yaml"));
  CHECK(dir.entries().empty());
}

TEST_CASE("a scenario with an unknown key exits 2 and writes no output file", "[cli]") {
  TempDir dir("bad_yaml");
  const fs::path yaml = dir / "bad.yaml";
  write_text(yaml,
             "platform: {cpus: 1}\n"
             "duration: 1s\n"
             "no_such_key: 3\n"
             "tasks: [{name: hog, events: [{run: 10ms}]}]\n");
  CliResult r = run_cli(dir, "run " + quote(yaml.string()) + " --json " + quote((dir / "out.json").string()) +
                                 " --csv " + quote((dir / "out.csv").string()) + " --trace " +
                                 quote((dir / "out.trace").string()));
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::StartsWith("error: "));
  CHECK_THAT(r.err, Catch::Contains("no_such_key"));
  CHECK(r.out.empty());
  // Neither the outputs nor their temporaries.
  CHECK(dir.entries() == std::vector<std::string>{"bad.yaml"});
}

TEST_CASE("bad command lines exit 2 with a clear message and no output file", "[cli]") {
  TempDir dir("bad_args");
  const std::string scenario = two_hogs(dir);
  const std::vector<std::string> before = dir.entries();
  const std::string json = " --json " + quote((dir / "out.json").string());
  auto [args, message] = GENERATE(table<std::string, std::string>({
      {"--duration 5", "has no unit"},
      {"--duration 5parsecs", "unknown unit"},
      {"--duration 0s", "must be positive"},
      {"--duration -1s", "must be positive"},
      {"--runs 0", "--runs must be between 1"},
      {"--runs -1", "--runs expects a non-negative integer"},
      {"--runs many", "--runs expects a non-negative integer"},
      {"--seed 1.5", "--seed expects a non-negative integer"},
      {"--seed 99999999999999999999999", "too large"},
      {"--no-such-option", "option '--no-such-option'"},
      {"--runs", "argument for option '--runs' is missing"},
      {"--log loud", "unknown level 'loud'"},
      {"--runs 2 --runs 3", "cannot be specified more than once"},
      {"extra.yaml", "one CONFIG expected"},
  }));
  CAPTURE(args);
  CliResult r = run_cli(dir, "run " + quote(scenario) + json + " " + args);
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::StartsWith("error: "));
  CHECK_THAT(r.err, Catch::Contains(message));
  CHECK(r.out.empty());
  CHECK(dir.entries() == before);
}

TEST_CASE("run without a scenario file exits 2", "[cli]") {
  TempDir dir("no_config");
  CliResult r = run_cli(dir, "run --runs 2");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::StartsWith("error: missing CONFIG"));
}

TEST_CASE("an output file may not overwrite the scenario or another output", "[cli]") {
  TempDir dir("collide");
  const fs::path yaml = dir / "s.yaml";
  write_text(yaml, slurp(two_hogs(dir)));
  const std::string original = slurp(yaml);
  CliResult r = run_cli(dir, "run " + quote(yaml.string()) + " --json " + quote(yaml.string()));
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("would overwrite the scenario file"));
  CHECK(slurp(yaml) == original);
  const std::string out = quote((dir / "out").string());
  CliResult both = run_cli(dir, "run " + quote(yaml.string()) + " --json " + out + " --csv " + out);
  CHECK(both.code == 2);
  CHECK_THAT(both.err, Catch::Contains("name the same file"));
}

TEST_CASE("a valid run prints the tables and writes JSON, CSV and a trace", "[cli]") {
  TempDir dir("valid");
  const std::string scenario = two_hogs(dir);
  CliResult r = run_cli(dir, "run " + quote(scenario) + " --duration 200ms --seed 3 --json " +
                                 quote((dir / "r.json").string()) + " --csv " + quote((dir / "r.csv").string()) +
                                 " --trace " + quote((dir / "r.trace").string()));
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("kernel "));
  CHECK_THAT(r.out, Catch::Contains("duration 200.000ms, 1 run, seed 3"));
  CHECK_THAT(r.out, Catch::Contains("wakeup latency (us)"));
  CHECK_THAT(r.out, Catch::Contains("check: busy + idle = elapsed"));
  CHECK_THAT(r.out, Catch::Contains("OK"));
  const std::vector<std::string> entries = dir.entries();
  const bool only_outputs = entries == std::vector<std::string>{"r.csv", "r.json", "r.trace"} ||
                            entries == std::vector<std::string>{"r.csv", "r.json", "r.trace", "two_hogs.yaml"};
  CHECK(only_outputs);
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
  TempDir dir("determinism");
  const std::string scenario = two_hogs(dir);
  const std::string common = "run " + quote(scenario) + " --duration 300ms --runs 2 --seed 42 --quiet --json ";
  CliResult first = run_cli(dir, common + quote((dir / "a.json").string()));
  CliResult second = run_cli(dir, common + quote((dir / "b.json").string()));
  INFO(first.err);
  REQUIRE(first.code == 0);
  REQUIRE(second.code == 0);
  CHECK(first.out.empty());  // --quiet
  const std::string a = slurp(dir / "a.json");
  CHECK(a.size() > 100);
  CHECK(a == slurp(dir / "b.json"));
}
