// Overlays (key paths set on a scenario's YAML tree before loading) and the
// experiment / sweep files that carry them.
#include <catch2/catch.hpp>

#include "experiment_test_util.h"
#include "models/config/config.h"

using namespace schedlab;
using namespace schedlab::testing;

namespace {

const char* kScenario =
    "name: small\n"
    "duration: 1s\n"
    "platform: {cpus: 2}\n"
    "kernel:\n"
    "  version: \"6.12\"\n"
    "  hz: 250\n"
    "tasks:\n"
    "  - name: ui\n"
    "    nice: -5\n"
    "    events: [{run: 2ms}, {timer: {ref: t, period: 10ms}}]\n"
    "  - name: hog\n"
    "    instances: 2\n"
    "    events: [{run: 20ms}]\n";

Overlay at(std::string path, std::string value, int line = 7, int column = 5) {
  return {std::move(path), std::move(value), {"exp.yaml", line, column}};
}

ScenarioParams with(std::vector<Overlay> overlays) {
  return load_scenario_yaml_with_overlays(kScenario, "small.yaml", overlays, "variant 'x'");
}

// The ConfigError an overlay raises.
ConfigError error_of(std::vector<Overlay> overlays) {
  try {
    with(std::move(overlays));
  } catch (const ConfigError& e) {
    return e;
  }
  FAIL("no ConfigError");
  throw;  // unreachable
}

const TaskSpec& task(const ScenarioParams& p, const std::string& name) {
  for (const TaskSpec& t : p.tasks)
    if (t.name == name) return t;
  FAIL("no task " << name);
  throw;
}

}  // namespace

TEST_CASE("an overlay replaces a value the scenario sets", "[overlay]") {
  const ScenarioParams p = with({at("kernel.hz", "1000"), at("duration", "2s")});
  CHECK(p.kernel.hz == 1000);
  CHECK(p.duration == Time::s(2));
  CHECK(p.kernel.version == "6.12");  // siblings untouched
}

TEST_CASE("an overlay selects a list element by its name or by its index", "[overlay]") {
  const ScenarioParams by_name = with({at("tasks[ui].nice", "3")});
  CHECK(task(by_name, "ui").nice == 3);
  CHECK(task(by_name, "hog").nice == 0);
  const ScenarioParams by_index = with({at("tasks[1].instances", "4")});
  CHECK(task(by_index, "hog").instances == 4);
  const ScenarioParams nested = with({at("tasks[ui].events[0].run", "3ms")});
  CHECK(task(nested, "ui").phases[0].events[0].duration == Time::ms(3));
}

TEST_CASE("an overlay creates a declared key the scenario leaves out", "[overlay]") {
  const ScenarioParams p = with({at("kernel.features.RUN_TO_PARITY", "false"), at("kernel.overheads.wakeup", "2us"),
                                 at("tasks[hog].cpus", "[1]")});
  REQUIRE(p.kernel.features.count("RUN_TO_PARITY") == 1);
  CHECK(p.kernel.features.at("RUN_TO_PARITY") == false);
  CHECK(p.kernel.wakeup_cost == Time::us(2));
  CHECK(task(p, "hog").cpus == std::vector<int>{1});
}

TEST_CASE("a map that replaces a map warns at the overlay of each key it drops", "[overlay]") {
  std::string scenario = kScenario;
  scenario.replace(scenario.find("  hz: 250\n"), 10, "  hz: 250\n  features: {NI_RANDOM: false, PLACE_LAG: false}\n");
  scenario.replace(scenario.find("period: 10ms}"), 13, "period: 10ms, mode: relative}");
  const auto load = [&](std::vector<Overlay> overlays) {
    return load_scenario_yaml_with_overlays(scenario, "small.yaml", overlays, "variant 'x'");
  };
  SECTION("a whole map drops the scenario's other keys, and says so") {
    const ScenarioParams p = load({at("kernel.features", "{TTWU_QUEUE: false}", 16, 1)});
    CHECK(p.kernel.features == std::map<std::string, bool>{{"TTWU_QUEUE", false}});
    REQUIRE(p.warnings.size() == 1);
    const config::ConfigWarning& w = p.warnings[0];
    CHECK(w.file == "exp.yaml");
    CHECK(w.line == 16);
    CHECK(w.key_path == "kernel.features");
    CHECK_THAT(w.message, Catch::Contains("dropping NI_RANDOM, PLACE_LAG (set there by the scenario, its platform file or an earlier overlay"));
    CHECK_THAT(w.message, Catch::Contains("name it: kernel.features.TTWU_QUEUE"));
  }
  SECTION("the advice names a key the map changes; a null drops every key") {
    const ScenarioParams p = load({at("kernel.features", "{NI_RANDOM: false, TTWU_QUEUE: false}")});
    REQUIRE(p.warnings.size() == 1);
    CHECK_THAT(p.warnings[0].message, Catch::Contains("dropping PLACE_LAG"));
    CHECK_THAT(p.warnings[0].message, Catch::Contains("name it: kernel.features.TTWU_QUEUE"));
    const ScenarioParams null = load({at("kernel.features", "~")});
    REQUIRE(null.warnings.size() == 1);
    CHECK_THAT(null.warnings[0].message, Catch::Contains("this null replaces the whole of 'kernel.features'"));
    CHECK_THAT(null.warnings[0].message, Catch::Contains("dropping NI_RANDOM, PLACE_LAG"));
    CHECK(null.kernel.features.empty());
  }
  SECTION("keys a later overlay puts back are not reported; an empty map is a map") {
    const ScenarioParams back = load({at("kernel.features", "{TTWU_QUEUE: false}"),
                                      at("kernel.features.NI_RANDOM", "false")});
    REQUIRE(back.warnings.size() == 1);
    CHECK_THAT(back.warnings[0].message, Catch::Contains("dropping PLACE_LAG ("));
    CHECK(load({at("kernel.features", "{TTWU_QUEUE: false}"), at("kernel.features.NI_RANDOM", "false"),
                at("kernel.features.PLACE_LAG", "false")})
              .warnings.empty());
    const ScenarioParams empty = load({at("kernel.features", "{}")});
    REQUIRE(empty.warnings.size() == 1);
    CHECK_THAT(empty.warnings[0].message, Catch::Contains("this map replaces"));
    CHECK_THAT(empty.warnings[0].message, Catch::Contains("name it: kernel.features.KEY"));
  }
  SECTION("a map with a non-scalar key is the loader's error, at the overlay") {
    try {
      load({at("kernel.features", "{[a]: true}", 5, 3)});
      FAIL("no ConfigError");
    } catch (const ConfigError& e) {
      CHECK(e.file() == "exp.yaml");
      CHECK(e.line() == 5);
    }
  }
  SECTION("naming the key keeps the others, without a warning") {
    const ScenarioParams p = load({at("kernel.features.TTWU_QUEUE", "false")});
    CHECK(p.kernel.features ==
          std::map<std::string, bool>{{"NI_RANDOM", false}, {"PLACE_LAG", false}, {"TTWU_QUEUE", false}});
    CHECK(p.warnings.empty());
  }
  SECTION("a map with every key of the one it replaces drops nothing") {
    CHECK(load({at("kernel.features", "{PLACE_LAG: true, NI_RANDOM: true}")}).warnings.empty());
    CHECK(load({at("tasks[ui].events[1].timer", "{ref: u, period: 5ms, mode: absolute}")}).warnings.empty());
  }
  SECTION("a map below a list element warns; the element replaced whole does not") {
    const ScenarioParams p = load({at("tasks[ui].events[1].timer", "{ref: u, period: 5ms}")});
    REQUIRE(p.warnings.size() == 1);
    CHECK(p.warnings[0].key_path == "tasks[ui].events[1].timer");
    CHECK_THAT(p.warnings[0].message, Catch::Contains("whole of 'tasks[0].events[1].timer' on small.yaml"));
    CHECK_THAT(p.warnings[0].message, Catch::Contains("dropping mode"));
    CHECK(load({at("tasks[ui].events[1]", "{sleep: 5ms}")}).warnings.empty());  // a new event: intended
  }
  SECTION("a platform set whole is a new platform: no warning") {
    std::string named = scenario;
    named.replace(named.find("platform: {cpus: 2}"), 19, "platform: {name: two, cpus: 2}");
    const ScenarioParams p = load_scenario_yaml_with_overlays(named, "small.yaml", {at("platform", "{cpus: 4}")}, "");
    CHECK(p.platform.cpus == 4);
    CHECK(p.warnings.empty());
  }
}

TEST_CASE("[+] appends an element to a list, or starts a declared list the scenario leaves out", "[overlay]") {
  const ScenarioParams p = with({at("tasks[+]", "{name: extra, nice: 5, events: [{run: 1ms}, {sleep: 9ms}]}"),
                                 at("tasks[extra].nice", "6"),  // the new element is selectable by name
                                 at("workqueues[+]", "{name: io, flags: [WQ_UNBOUND]}")});
  REQUIRE(p.tasks.size() == 3);
  CHECK(p.tasks[0].name == "ui");
  CHECK(p.tasks[1].name == "hog");
  CHECK(p.tasks[2].name == "extra");
  CHECK(p.tasks[2].nice == 6);
  REQUIRE(p.workqueue.workqueues.size() == 1);
  CHECK(p.workqueue.workqueues[0].name == "io");
  CHECK(p.warnings.empty());

  SECTION("an error inside the new element is the overlay's, with the element's index") {
    const ConfigError e = error_of({at("tasks[+]", "{name: extra, nice: 40, events: [{run: 1ms}]}", 12, 3)});
    CHECK(e.line() == 12);
    CHECK(e.key_path() == "tasks[+].nice");
    CHECK_THAT(e.message(), Catch::Contains("40 is out of range"));
  }
  SECTION("a warning about the new element is the overlay's too") {
    const ScenarioParams w =
        with({at("tasks[+]", "{name: extra, events: [{run: 1ms}, {wait: {ref: nocond, mutex: m}}]}", 8, 7)});
    REQUIRE_FALSE(w.warnings.empty());
    CHECK(w.warnings[0].file == "exp.yaml");
    CHECK(w.warnings[0].line == 8);
    CHECK(w.warnings[0].key_path == "tasks[+].events[1].wait");
  }
  SECTION("[+] only ends a path, directly under a key, on a list") {
    CHECK_THAT(error_of({at("tasks[+].nice", "1")}).message(), Catch::Contains("it must end the path"));
    CHECK_THAT(error_of({at("tasks[+][0]", "1")}).message(), Catch::Contains("the path's last selector"));
    CHECK_THAT(error_of({at("tasks[ui].events[0][+]", "{run: 1ms}")}).message(),
               Catch::Contains("directly under a key (e.g. tasks[+]), not to 'tasks[0].events[0]'"));
    CHECK_THAT(error_of({at("kernel[+]", "{hz: 100}")}).message(), Catch::Contains("not a list: [+] appends"));
  }
}

TEST_CASE("later overlays win over earlier ones on the same path", "[overlay]") {
  const ScenarioParams p = with({at("kernel.hz", "1000"), at("kernel.hz", "100")});
  CHECK(p.kernel.hz == 100);
}

TEST_CASE("an unknown key path is an error that lists the valid keys at that level, at the overlay's line",
          "[overlay]") {
  const ConfigError e = error_of({at("kernel.hzz", "1000", 12, 7)});
  CHECK(e.file() == "exp.yaml");
  CHECK(e.line() == 12);
  CHECK(e.column() == 7);
  CHECK(e.key_path() == "kernel.hzz");
  CHECK_THAT(e.message(), Catch::Contains("unknown key 'hzz' at 'kernel'"));
  CHECK_THAT(e.message(), Catch::Contains("valid keys here: version, hz, preempt, features"));
  CHECK_THAT(e.message(), Catch::Contains("did you mean 'hz'?"));
  CHECK_THAT(std::string(e.what()), Catch::StartsWith("exp.yaml:12:7: kernel.hzz: unknown key"));

  const ConfigError top = error_of({at("durration", "2s")});
  CHECK_THAT(top.message(), Catch::Contains("at the top level (valid keys here: name, duration, warmup"));

  const ConfigError feature = error_of({at("kernel.features.RUN_TO_PARTY", "false")});
  CHECK_THAT(feature.message(), Catch::Contains("RUN_TO_PARITY"));
  CHECK_THAT(feature.message(), Catch::Contains("did you mean 'RUN_TO_PARITY'?"));

  const ConfigError task_key = error_of({at("tasks[ui].nicee", "1")});
  CHECK_THAT(task_key.message(), Catch::Contains("unknown key 'nicee' at 'tasks[0]'"));
  CHECK_THAT(task_key.message(), Catch::Contains("instances, policy, nice, priority"));
}

TEST_CASE("a list element that does not exist is an error naming the elements", "[overlay]") {
  const ConfigError name = error_of({at("tasks[uii].nice", "1")});
  CHECK(name.line() == 7);
  CHECK_THAT(name.message(), Catch::Contains("no element named 'uii' in 'tasks' (names: ui, hog); did you mean 'ui'?"));
  const ConfigError index = error_of({at("tasks[5].nice", "1")});
  CHECK_THAT(index.message(), Catch::Contains("index 5 is out of range: 'tasks' has 2 elements (valid: 0..1)"));
  const ConfigError unnamed = error_of({at("tasks[ui].events[run].run", "1ms")});
  CHECK_THAT(unnamed.message(), Catch::Contains("have no names: select one by index (0..1)"));
  const ConfigError not_a_list = error_of({at("kernel[0].hz", "1")});
  CHECK_THAT(not_a_list.message(), Catch::Contains("not a list"));
}

TEST_CASE("a bad value set by an overlay is reported at the overlay, not in the scenario", "[overlay]") {
  const ConfigError range = error_of({at("tasks[ui].nice", "40", 9, 3)});
  CHECK(range.file() == "exp.yaml");
  CHECK(range.line() == 9);
  CHECK(range.key_path() == "tasks[ui].nice");
  CHECK_THAT(range.message(), Catch::Contains("40 is out of range (expected -20..19)"));
  CHECK_THAT(range.message(), Catch::Contains("variant 'x'"));

  // A value that breaks a rule of its parent: FIFO needs a priority.
  const ConfigError rule = error_of({at("tasks[hog].policy", "SCHED_FIFO", 4, 1)});
  CHECK(rule.line() == 4);
  CHECK_THAT(rule.message(), Catch::Contains("needs 'priority: 1..99'"));

  const ConfigError warmup = error_of({at("warmup", "2s", 3, 1)});
  CHECK(warmup.line() == 3);
  CHECK_THAT(warmup.message(), Catch::Contains("leaves nothing to measure"));
}

TEST_CASE("malformed key paths are errors that show the expected shape", "[overlay]") {
  for (const char* path : {"tasks[ui.nice", "kernel..hz", ".hz", "kernel.", "tasks[].nice", "kernel hz"}) {
    CAPTURE(path);
    const ConfigError e = error_of({at(path, "1")});
    CHECK_THAT(e.message(), Catch::Contains("malformed key path"));
  }
}

namespace {

struct ExperimentFile {
  ScratchDir dir;
  explicit ExperimentFile(const std::string& name) : dir(name) { write_text(dir / "small.yaml", kScenario); }
  std::string path(const std::string& text) const {
    write_text(dir / "exp.yaml", text);
    return (dir / "exp.yaml").string();
  }
};

ConfigError experiment_error(const ExperimentFile& f, const std::string& text, bool sweep = false) {
  try {
    sweep ? load_sweep_file(f.path(text)) : load_experiment_file(f.path(text));
  } catch (const ConfigError& e) {
    return e;
  }
  FAIL("no ConfigError");
  throw;
}

}  // namespace

TEST_CASE("an experiment file names the scenario, variants as overlays, runs and metrics", "[overlay][experiment]") {
  ExperimentFile f("experiment_ok");
  const ExperimentSpec e = load_experiment_file(f.path(
      "name: demo\n"
      "scenario: small.yaml\n"
      "runs: 4\n"
      "seed: 9\n"
      "duration: 2s\n"
      "start_jitter: 5ms\n"
      "set: {kernel.hz: 1000}\n"
      "variants:\n"
      "  - name: base\n"
      "  - name: ui_nicer\n"
      "    set:\n"
      "      tasks[ui].nice: -10\n"
      "metrics: [task:ui.wakeup_latency.p99]\n"
      "published:\n"
      "  task:ui.wakeup_latency.p99: {base: '1,867 us'}\n"));
  CHECK(e.name == "demo");
  CHECK(e.scenario == (f.dir / "small.yaml").string());  // relative to the experiment file
  CHECK(e.runs == 4);
  CHECK(e.seed == 9);
  CHECK(e.start_jitter == Time::ms(5));
  REQUIRE(e.common.size() == 2);  // duration, then `set`
  CHECK(e.common[0].path == "duration");
  CHECK(e.common[0].value == "2s");
  CHECK(e.common[1].path == "kernel.hz");
  REQUIRE(e.variants.size() == 2);
  CHECK(e.variants[0].overlays.empty());
  REQUIRE(e.variants[1].overlays.size() == 1);
  CHECK(e.variants[1].overlays[0].path == "tasks[ui].nice");
  CHECK(e.variants[1].overlays[0].value == "-10");
  CHECK(e.variants[1].overlays[0].origin.line == 12);
  REQUIRE(e.published.size() == 1);
  CHECK(e.published[0].text == "1,867 us");

  SECTION("one set: map may append to a list twice; other key paths stay unique") {
    const ExperimentSpec two = load_experiment_file(
        f.path("name: demo\nscenario: small.yaml\nvariants:\n  - name: base\n  - name: more\n    set:\n"
               "      tasks[+]: {name: x1, events: [{run: 1ms}, {sleep: 9ms}]}\n"
               "      tasks[+]: {name: x2, events: [{run: 2ms}, {sleep: 8ms}]}\n"));
    REQUIRE(two.variants[1].overlays.size() == 2);
    const ScenarioParams p =
        load_scenario_with_overlays((f.dir / "small.yaml").string(), two.variants[1].overlays, "variant 'more'");
    REQUIRE(p.tasks.size() == 4);
    CHECK(p.tasks[2].name == "x1");
    CHECK(p.tasks[3].name == "x2");
    const ConfigError dup = experiment_error(
        f, "name: demo\nscenario: small.yaml\nvariants:\n  - name: a\n  - name: b\n    set:\n      kernel.hz: 100\n"
           "      kernel.hz: 300\n");
    CHECK_THAT(dup.message(), Catch::Contains("duplicate key path"));
  }
}

TEST_CASE("an experiment file's own mistakes point at their line", "[overlay][experiment]") {
  ExperimentFile f("experiment_bad");
  const ConfigError unknown = experiment_error(f, "scenario: small.yaml\nvariant: []\n");
  CHECK(unknown.line() == 2);
  CHECK_THAT(unknown.message(), Catch::Contains("unknown key 'variant'"));
  CHECK_THAT(unknown.message(), Catch::Contains("did you mean 'variants'?"));

  const ConfigError one = experiment_error(f, "scenario: small.yaml\nvariants: [{name: a}]\n");
  CHECK_THAT(one.message(), Catch::Contains("at least two variants"));

  const ConfigError dup = experiment_error(f, "scenario: small.yaml\nvariants: [{name: a}, {name: a}]\n");
  CHECK_THAT(dup.message(), Catch::Contains("duplicate variant name 'a'"));

  const ConfigError missing = experiment_error(f, "scenario: nowhere.yaml\nvariants: [{name: a}, {name: b}]\n");
  CHECK_THAT(missing.message(), Catch::Contains("no scenario file"));

  const ConfigError overlay = experiment_error(f,
                                               "scenario: small.yaml\n"
                                               "variants:\n"
                                               "  - name: a\n"
                                               "  - name: b\n"
                                               "    set:\n"
                                               "      kernel.preemt: none\n");
  CHECK(overlay.file() == (f.dir / "exp.yaml").string());
  CHECK(overlay.line() == 6);
  CHECK(overlay.column() == 7);
  CHECK_THAT(overlay.message(), Catch::Contains("did you mean 'preempt'?"));

  const ConfigError published = experiment_error(f,
                                                 "scenario: small.yaml\n"
                                                 "variants: [{name: a}, {name: b}]\n"
                                                 "published: {task:ui.wakeup_latency.p99: {c: 1}}\n");
  CHECK_THAT(published.message(), Catch::Contains("unknown variant 'c' (variants: a, b)"));
}

TEST_CASE("a sweep grid takes lists and ranges of numbers and durations", "[overlay][sweep]") {
  ExperimentFile f("grid");
  const ExperimentSpec s = load_sweep_file(f.path(
      "scenario: small.yaml\n"
      "grid:\n"
      "  tasks[ui].nice: {from: -10, to: 5, step: 5}\n"
      "  tasks[ui].events[0].run: {from: 1ms, to: 2500us, step: 500us}\n"
      "  kernel.hz: [250, 1000]\n"
      "  kernel.features.RUN_TO_PARITY: [true, false]\n"));
  REQUIRE(s.grid.size() == 4);
  auto texts = [](const SweepAxis& a) {
    std::vector<std::string> t;
    for (const AxisValue& v : a.values) t.push_back(v.text);
    return t;
  };
  CHECK(texts(s.grid[0]) == std::vector<std::string>{"-10", "-5", "0", "5"});
  CHECK(*s.grid[0].values[0].number == -10);
  CHECK(texts(s.grid[1]) == std::vector<std::string>{"1ms", "1500us", "2ms", "2500us"});
  CHECK(s.grid[1].duration);
  CHECK(*s.grid[1].values[1].number == Approx(0.0015));
  CHECK(texts(s.grid[2]) == std::vector<std::string>{"250", "1000"});
  CHECK_FALSE(s.grid[3].values[0].number.has_value());  // booleans are not swept numbers
  REQUIRE(s.variants.size() == 1);
  CHECK(s.variants[0].name == "base");

  // In a flow map, YAML reads '[' as the start of a list: quote such key paths.
  const ExperimentSpec flow = load_sweep_file(
      f.path("scenario: small.yaml\ngrid: {\"tasks[ui].nice\": {from: 0, to: 3, step: 1}, kernel.hz: [100]}\n"));
  CHECK(flow.grid[0].values.size() == 4);
  CHECK(flow.grid[0].path == "tasks[ui].nice");
}

TEST_CASE("sweep grid mistakes are errors at their line", "[overlay][sweep]") {
  ExperimentFile f("grid_bad");
  const ConfigError step = experiment_error(f, "scenario: small.yaml\ngrid:\n  kernel.hz: {from: 1, to: 5, step: 0}\n", true);
  CHECK(step.line() == 3);
  CHECK_THAT(step.message(), Catch::Contains("step 0 never reaches"));
  const ConfigError away =
      experiment_error(f, "scenario: small.yaml\ngrid:\n  tasks[ui].nice: {from: 1, to: 5, step: -1}\n", true);
  CHECK_THAT(away.message(), Catch::Contains("goes away"));
  const ConfigError bad_value = experiment_error(f, "scenario: small.yaml\ngrid:\n  tasks[ui].nice: [0, 99]\n", true);
  CHECK(bad_value.line() == 3);
  CHECK_THAT(bad_value.message(), Catch::Contains("99 is out of range"));
  const ConfigError bad_path = experiment_error(f, "scenario: small.yaml\ngrid:\n  tasks[ui].nise: [0]\n", true);
  CHECK_THAT(bad_path.message(), Catch::Contains("did you mean 'nice'?"));
}

TEST_CASE("the experiment file reference is rendered from the declarations", "[overlay][docs]") {
  const std::string md = experiment_schema_markdown();
  CHECK_THAT(md, Catch::Contains("| `start_jitter` |"));
  CHECK_THAT(md, Catch::Contains("| `grid` |"));
  // docs/experiments.md embeds the current rendering.
  const std::string doc = slurp(repo_path("docs/experiments.md"));
  const std::string begin = "<!-- BEGIN generated by experiment_schema_markdown() -->\n";
  const std::string end = "<!-- END generated -->";
  const size_t b = doc.find(begin), e = doc.find(end);
  REQUIRE(b != std::string::npos);
  REQUIRE(e != std::string::npos);
  CHECK(doc.substr(b + begin.size(), e - b - begin.size()) == md);
}

TEST_CASE("compare with a bad overlay exits 2 naming the experiment file's line and column", "[overlay][cli]") {
  ExperimentFile f("cli_overlay");
  const std::string path = f.path(
      "scenario: small.yaml\n"
      "variants:\n"
      "  - name: a\n"
      "  - name: b\n"
      "    set: {kernel.feature.RUN_TO_PARITY: false}\n");
  const Cli r = run_schedlab(f.dir, "compare " + shell_quote(path));
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::StartsWith("error: " + path + ":5:11: kernel.feature.RUN_TO_PARITY: unknown key 'feature'"));
  CHECK_THAT(r.err, Catch::Contains("did you mean 'features'?"));
  CHECK(r.out.empty());
}

TEST_CASE("a start jitter as long as a run is refused at start_jitter", "[overlay][experiment]") {
  // Tasks delayed past the run's end never run and would vanish from every
  // table, the who-pays one included.
  ExperimentFile f("experiment_jitter");
  const std::string head = "name: demo\nscenario: small.yaml\nduration: 1s\nvariants:\n  - name: a\n  - name: b\n";
  const ConfigError e = experiment_error(f, head + "start_jitter: 1s\n");
  CHECK(e.key_path() == "start_jitter");
  CHECK_THAT(e.message(), Catch::Contains("1s is not shorter than a run (1s)"));
  CHECK(load_experiment_file(f.path(head + "start_jitter: 999ms\n")).start_jitter == Time::ms(999));
}

TEST_CASE("an error inside a whole list set by an overlay names the inner key", "[overlay]") {
  const ConfigError e = error_of({at("tasks", "[{name: x, nice: 50, events: [{run: 1ms}]}]")});
  CHECK(e.file() == "exp.yaml");
  CHECK(e.line() == 7);
  CHECK(e.key_path() == "tasks[0].nice");
  CHECK_THAT(e.message(), Catch::Contains("50 is out of range"));
}

TEST_CASE("overlays below platform reach a platform named or given by file", "[overlay][platform]") {
  SECTION("a shipped platform by name: one key changes, the rest is the file's") {
    const std::string scenario = repo_path("configs/scenarios/ui_gs101.yaml");
    const ScenarioParams plain = load_scenario_file(scenario);
    const ScenarioParams p = load_scenario_with_overlays(
        scenario, {at("platform.clusters[big].rate_limit", "2ms"), at("platform.clusters[big].opps[0].voltage", "600mV")},
        "variant 'x'");
    CHECK(p.platform.name == "gs101");
    REQUIRE(p.platform.clusters.size() == plain.platform.clusters.size());
    const ClusterParams& big = p.platform.clusters[2];
    CHECK(big.name == "big");
    CHECK(big.rate_limit == Time::ms(2));
    CHECK(big.opps[0].voltage_uv == 600000u);
    CHECK(big.opps[1].voltage_uv == plain.platform.clusters[2].opps[1].voltage_uv);
    CHECK(p.platform.clusters[0].rate_limit == plain.platform.clusters[0].rate_limit);
    CHECK(p.platform.sources == plain.platform.sources);
  }
  SECTION("a platform file: an error the overlays cause elsewhere in it names the file and line") {
    ScratchDir dir("overlay_platform_file");
    write_text(dir / "board.yaml",
               "clusters:\n"
               "  - name: a\n"
               "    cpus: 1\n"
               "    opps:\n"
               "      - {freq: 1GHz, power: 100mW}\n"
               "      - {freq: 2GHz, power: 300mW}\n");
    write_text(dir / "s.yaml",
               "platform: {file: board.yaml}\n"
               "tasks:\n"
               "  - {name: t, events: [{run: 1ms}, {sleep: 1ms}]}\n");
    const std::string s = (dir / "s.yaml").string();
    const ScenarioParams ok = load_scenario_with_overlays(
        s, {at("platform.clusters[a].opps[0].idle_power", "2mW"), at("platform.clusters[a].opps[1].idle_power", "3mW")},
        "variant 'x'");
    CHECK(ok.platform.name == "board");  // the file's stem, as without overlays
    // platform.file swaps the file itself (nothing is copied in first).
    write_text(dir / "board2.yaml",
               "clusters:\n"
               "  - {name: b, cpus: 2, opps: [{freq: 1GHz, power: 100mW}]}\n");
    const ScenarioParams swapped = load_scenario_with_overlays(s, {at("platform.file", "board2.yaml")}, "variant 'x'");
    CHECK(swapped.platform.name == "board2");
    CHECK(swapped.platform.clusters.at(0).nr_cpus == 2);
    // A platform an earlier overlay names that does not load: the overlay
    // that needed it is blamed, with the variant.
    try {
      load_scenario_with_overlays(s, {at("platform", "gs10x", 3, 3), at("platform.clusters[a].rate_limit", "2ms", 4, 3)},
                                  "variant 'x'");
      FAIL("no ConfigError");
    } catch (const ConfigError& e) {
      CHECK(e.file() == "exp.yaml");
      CHECK(e.line() == 4);
      CHECK_THAT(e.message(), Catch::Contains("unknown platform 'gs10x'") && Catch::Contains("variant 'x'"));
    }
    CHECK(ok.platform.clusters[0].opps[1].idle_power_mw == 3.0);
    try {
      load_scenario_with_overlays(s, {at("platform.clusters[a].opps[0].idle_power", "2mW")}, "variant 'x'");
      FAIL("no ConfigError");
    } catch (const ConfigError& e) {
      CHECK(e.file() == (dir / "board.yaml").lexically_normal().string());
      CHECK(e.line() == 6);  // the second OPP, without idle_power
      CHECK(e.key_path() == "platform.clusters[0].opps[1]");
      CHECK_THAT(e.message(), Catch::Contains("missing 'idle_power'") && Catch::Contains("variant 'x'"));
    }
  }
}
