// schedlab sweep and merge: points, manifests, exact point files,
// sensitivity fits by hand, and the promises about the output folder:
// identical for every -j, for shards merged, and after an interruption.
#include <catch2/catch.hpp>

#include <fcntl.h>

#include <csignal>
#include <map>
#include <sstream>
#include <thread>

#include "experiment_test_util.h"
#include "experiments/lib/sensitivity.h"
#include "experiments/lib/runner.h"
#include "experiments/lib/sweep.h"
#include "models/config/config.h"
#include "sim/rng.h"

using namespace schedlab;
using namespace schedlab::testing;

namespace {

SweepAxis axis(const std::string& path, std::vector<std::string> values) {
  SweepAxis a;
  a.path = path;
  for (const std::string& v : values) {
    AxisValue av{v, std::nullopt};
    try {
      av.number = std::stod(v);
    } catch (...) {
    }
    a.values.push_back(av);
  }
  return a;
}

ExperimentSpec grid_spec() {
  ExperimentSpec s;
  s.name = "g";
  s.source = "g.yaml";
  s.scenario = "s.yaml";
  s.runs = 2;
  s.variants = {{"v0", "", {}, {}}, {"v1", "", {{"kernel.hz", "1000", {}}}, {}}};
  s.grid = {axis("a", {"1", "2"}), axis("b", {"x", "y", "z"})};
  return s;
}

}  // namespace

TEST_CASE("sweep points are the variants times the grid's cartesian product, first key slowest", "[sweep]") {
  const SweepManifest m = make_manifest(grid_spec(), "scenario text");
  REQUIRE(m.points.size() == 12);
  CHECK(m.points[0].id == "p000000");
  CHECK(m.points[11].id == "p000011");
  const std::vector<std::vector<size_t>> first_variant{{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}};
  for (size_t i = 0; i < 6; ++i) {
    CHECK(m.points[i].variant == 0);
    CHECK(m.points[i].values == first_variant[i]);
    CHECK(m.points[i + 6].variant == 1);
    CHECK(m.points[i + 6].values == first_variant[i]);
  }
  CHECK(m.label_of(m.points[4]) == "a=2, b=y");
  const std::vector<Overlay> ov = m.overlays_of(m.points[10]);
  REQUIRE(ov.size() == 3);  // the variant's, then a and b
  CHECK(ov[0].path == "kernel.hz");
  CHECK(ov[1].value == "2");
  CHECK(ov[2].value == "y");
}

TEST_CASE("a manifest reads back to itself and its key covers the scenario's text", "[sweep]") {
  const SweepManifest m = make_manifest(grid_spec(), "scenario text");
  const std::string text = render_manifest(m);
  CHECK(render_manifest(parse_manifest(text, "manifest.json")) == text);
  CHECK(m.key.size() == 16);
  CHECK(make_manifest(grid_spec(), "scenario text").key == m.key);
  CHECK(make_manifest(grid_spec(), "scenario text, edited").key != m.key);
  // Another build of the model (its source hash) never reuses the points.
  CHECK(make_manifest(grid_spec(), "scenario text", "another model").key != m.key);
  CHECK(make_manifest(grid_spec(), "scenario text", model_source_hash()).key == m.key);
  // --why makes another sweep, and reads back; without it the manifest has
  // no "why" (older folders keep their keys).
  const SweepManifest counted = make_manifest(grid_spec(), "scenario text", model_source_hash(), true);
  CHECK(counted.key != m.key);
  CHECK(parse_manifest(render_manifest(counted), "manifest.json").why);
  CHECK(text.find("\"why\"") == std::string::npos);
  CHECK(model_source_hash().size() == 64);
  ExperimentSpec more = grid_spec();
  more.runs = 3;
  CHECK(make_manifest(more, "scenario text").key != m.key);
  // The same files named another way are the same sweep.
  ExperimentSpec moved = grid_spec();
  moved.source = "/abs/path/g.yaml";
  moved.scenario = "/abs/path/s.yaml";
  CHECK(make_manifest(moved, "scenario text").key == m.key);
  CHECK_THROWS_AS(parse_manifest("{\"format\": \"something else\"}", "x.json"), SweepError);
  // A damaged run count is refused as such (9223372036854775807 once read
  // as a negative int and was reported as 'runs < 1').
  std::string huge = text;
  const std::string runs_field = "\"runs\": 2";
  REQUIRE(huge.find(runs_field) != std::string::npos);
  huge.replace(huge.find(runs_field), runs_field.size(), "\"runs\": 9223372036854775807");
  CHECK_THROWS_WITH(parse_manifest(huge, "manifest.json"), Catch::Contains("runs 9223372036854775807 out of range"));
}

TEST_CASE("a point file keeps every value exactly and refuses other sweeps' files", "[sweep]") {
  const SweepManifest m = make_manifest(grid_spec(), "s");
  PointRecord rec;
  rec.runs.push_back({0, {{"task:a.cpu_share", 0.1 + 0.2}, {"task:a.wakeup_latency.p99", std::nullopt}}, {}});
  rec.runs.push_back({1, {{"task:a.cpu_share", 1e-300}, {"task:a.wakeup_latency.p99", 12345.678901234567}}, {}});
  const std::string text = render_point(m, m.points[3], rec);
  std::string why;
  auto back = parse_point(text, "p.json", m, m.points[3], &why);
  REQUIRE(back);
  REQUIRE(back->runs.size() == 2);
  CHECK(back->runs[0].values == rec.runs[0].values);  // bit for bit
  CHECK(back->runs[1].values == rec.runs[1].values);
  CHECK(render_point(m, m.points[3], *back) == text);

  CHECK_FALSE(parse_point(text, "p.json", m, m.points[4], &why));
  CHECK_THAT(why, Catch::Contains("names another point"));
  const SweepManifest other = make_manifest(grid_spec(), "another scenario");
  CHECK_FALSE(parse_point(text, "p.json", other, other.points[3], &why));
  CHECK_THAT(why, Catch::Contains("key mismatch"));
  CHECK_FALSE(parse_point(text.substr(0, text.size() / 2), "p.json", m, m.points[3], &why));
  CHECK_THAT(why, Catch::Contains("JSON syntax error"));

  // With --why each run carries its decision counts, which read back; a
  // file without them is not a point of that sweep.
  const SweepManifest counted = make_manifest(grid_spec(), "s", model_source_hash(), true);
  PointRecord with = rec;
  with.runs[0].decisions = {{"pick", "ui", "eevdf: earliest eligible deadline, \"quoted\"", 7},
                            {"idle state", "cpu1", "WFI, tick kept: rule", 3}};
  const std::string counted_text = render_point(counted, counted.points[3], with);
  auto counted_back = parse_point(counted_text, "p.json", counted, counted.points[3], &why);
  REQUIRE(counted_back);
  REQUIRE(counted_back->runs[0].decisions.size() == 2);
  CHECK(counted_back->runs[0].decisions[0].reason == with.runs[0].decisions[0].reason);
  CHECK(counted_back->runs[0].decisions[1].count == 3);
  CHECK(counted_back->runs[1].decisions.empty());
  CHECK(render_point(counted, counted.points[3], *counted_back) == counted_text);
  std::string stripped = counted_text;
  const size_t at = stripped.find("\"decisions\"");
  REQUIRE(at != std::string::npos);
  stripped.replace(at, 11, "\"elsewhere\"");
  CHECK_FALSE(parse_point(stripped, "p.json", counted, counted.points[3], &why));
  CHECK_THAT(why, Catch::Contains("without decision counts"));
  std::string bad_kind = counted_text;
  bad_kind.replace(bad_kind.find("\"pick\""), 6, "\"nope\"");
  CHECK_FALSE(parse_point(bad_kind, "p.json", counted, counted.points[3], &why));
  CHECK_THAT(why, Catch::Contains("malformed decision count"));
}

TEST_CASE("shards are written i/N with 0 <= i < N", "[sweep]") {
  CHECK(parse_shard("0/1") == std::pair{0, 1});
  CHECK(parse_shard("3/8") == std::pair{3, 8});
  for (const char* bad : {"8/8", "-1/4", "1/0", "1", "1/", "/4", "a/4", "1/4x", ""}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_shard(bad));
  }
}

TEST_CASE("the sensitivity fit matches least squares done by hand", "[sensitivity]") {
  SECTION("an exact line: slope, R^2 = 1, elasticity at the means") {
    // y = 3 + 2x at x = 1..4: mean x 2.5, mean y 8, elasticity 2 * 2.5 / 8.
    const SensitivityFit f = fit_sensitivity({"x"}, {{1}, {2}, {3}, {4}}, {5.0, 7.0, 9.0, 11.0});
    REQUIRE(f.ok());
    CHECK(f.intercept == Approx(3.0));
    CHECK(f.parameters[0].slope == Approx(2.0));
    CHECK(*f.r2 == Approx(1.0));
    CHECK(*f.parameters[0].elasticity == Approx(0.625));
    CHECK(*f.parameters[0].standardized == Approx(1.0));
  }
  SECTION("a metric that never moves has slope 0 exactly, and no R^2") {
    // 17.74 six times (a median the swept value does not touch): the QR
    // solve alone leaves a slope of about -1e-11.
    for (double v : {17.74, 17.739375, 1.0 / 3.0, 123.456, 0.1}) {
      CAPTURE(v);
      const SensitivityFit f =
          fit_sensitivity({"x"}, {{0}, {25e-6}, {50e-6}, {100e-6}, {200e-6}, {400e-6}}, {v, v, v, v, v, v});
      REQUIRE(f.ok());
      CHECK(f.parameters[0].slope == 0.0);
      CHECK(f.intercept == v);
      CHECK_FALSE(f.r2);
      CHECK(*f.parameters[0].elasticity == 0.0);
      CHECK_FALSE(f.parameters[0].standardized);
    }
  }
  SECTION("a noisy line") {
    // x = 0..3, y = 1, 3, 2, 5: Sxy = 5.5, Sxx = 5 -> slope 1.1, intercept
    // 2.75 - 1.1 * 1.5 = 1.1; residuals -0.1, 0.8, -1.3, 0.6 -> SSE 2.7,
    // SST 8.75 -> R^2 = 1 - 2.7 / 8.75; elasticity 1.1 * 1.5 / 2.75 = 0.6.
    const SensitivityFit f = fit_sensitivity({"x"}, {{0}, {1}, {2}, {3}}, {1.0, 3.0, 2.0, 5.0});
    REQUIRE(f.ok());
    CHECK(f.parameters[0].slope == Approx(1.1));
    CHECK(f.intercept == Approx(1.1));
    CHECK(*f.r2 == Approx(1.0 - 2.7 / 8.75));
    CHECK(*f.parameters[0].elasticity == Approx(0.6));
    CHECK(f.points == 4);
  }
  SECTION("no elasticity off a ratio scale") {
    // y = 10 + x at nice-like x = -20..10 (mean -5): b x mean(x) / mean(y)
    // would be -1, though y rises with x.
    const SensitivityFit f = fit_sensitivity({"nice"}, {{-20}, {-10}, {0}, {10}}, {-10.0, 0.0, 10.0, 20.0});
    REQUIRE(f.ok());
    CHECK(f.parameters[0].slope == Approx(1.0));
    CHECK_FALSE(f.parameters[0].elasticity);
    CHECK(*f.parameters[0].standardized == Approx(1.0));
  }
  SECTION("two parameters") {
    // y = 1 + 2a - b on the grid a in {0, 1}, b in {0, 1, 2}.
    std::vector<std::vector<double>> x;
    std::vector<std::optional<double>> y;
    for (int a = 0; a <= 1; ++a)
      for (int b = 0; b <= 2; ++b) {
        x.push_back({double(a), double(b)});
        y.push_back(1.0 + 2 * a - b);
      }
    const SensitivityFit f = fit_sensitivity({"a", "b"}, x, y);
    REQUIRE(f.ok());
    CHECK(f.parameters[0].slope == Approx(2.0));
    CHECK(f.parameters[1].slope == Approx(-1.0));
  }
  SECTION("a parameter centred on 0 has no elasticity but a standardized coefficient") {
    const SensitivityFit f = fit_sensitivity({"nice"}, {{-10}, {0}, {10}}, {1.0, 2.0, 3.5});
    REQUIRE(f.ok());
    CHECK_FALSE(f.parameters[0].elasticity);
    CHECK(f.parameters[0].standardized);
  }
  SECTION("too few points, points without values, collinear parameters") {
    CHECK_THAT(fit_sensitivity({"x"}, {{1}, {2}}, {1.0, 2.0}).note, Catch::Contains("a fit needs 3"));
    CHECK_THAT(fit_sensitivity({"x"}, {{1}, {2}, {3}}, {1.0, std::nullopt, 2.0}).note, Catch::Contains("2 points"));
    CHECK_THAT(fit_sensitivity({"a", "b"}, {{1, 1}, {2, 2}, {3, 3}, {4, 4}}, {1.0, 2.0, 3.0, 5.0}).note,
               Catch::Contains("collinear"));
    CHECK_FALSE(fit_sensitivity({"x"}, {{1}, {2}, {3}}, {2.0, 2.0, 2.0}).r2);  // nothing to explain
  }
}

namespace {

std::string small_sweep(const ScratchDir& dir, int runs, const std::string& nice_values = "[-10, 0, 10]",
                        bool two_variants = true, const std::string& duration = "1s") {
  const std::string path = (dir / "sweep.yaml").string();
  std::string text = "name: small_nice\n"
                     "scenario: " + repo_path("configs/scenarios/mixed_2cpu.yaml") + "\n"
                     "runs: " + std::to_string(runs) + "\n"
                     "duration: " + duration + "\n"
                     "warmup: 200ms\n"
                     "start_jitter: 16ms\n"
                     "grid:\n"
                     "  tasks[ui_main].nice: " + nice_values + "\n"
                     "metrics: [task:ui_main.wakeup_latency.mean, task:ui_main.wakeup_latency.p99, group:bg_hog.cpu_share]\n";
  if (two_variants)
    text += "variants:\n  - name: on\n  - name: off\n    set: {kernel.features.RUN_TO_PARITY: false}\n";
  write_text(path, text);
  return path;
}

Cli sweep(const ScratchDir& dir, const std::string& file, const std::string& out, const std::string& extra = "") {
  const Cli r = run_schedlab(dir, "sweep " + shell_quote(file) + " --out " + shell_quote(out) + " " + extra);
  INFO(r.err);
  REQUIRE(r.code == 0);
  return r;
}

}  // namespace

TEST_CASE("a sweep writes the same folder with -j 1 and -j 2", "[sweep][cli]") {
  ScratchDir dir("sweep_jobs");
  const std::string file = small_sweep(dir, 3);
  const Cli one = sweep(dir, file, (dir / "j1").string(), "-j 1");
  sweep(dir, file, (dir / "j2").string(), "-j 2 -q");
  const auto a = folder_contents(dir / "j1"), b = folder_contents(dir / "j2");
  CHECK(file_names(a) == std::vector<std::string>{"manifest.json", "points.csv", "points/p000000.json",
                                                  "points/p000001.json", "points/p000002.json", "points/p000003.json",
                                                  "points/p000004.json", "points/p000005.json", "runs.csv",
                                                  "sensitivity.csv", "sweep.json"});
  CHECK(a == b);
  CHECK_THAT(one.out, Catch::Contains("small_nice: 6 points (2 variants x 3 grid values) x 3 runs"));
  CHECK_THAT(one.out, Catch::Contains("sensitivity:"));
  // Not a terminal: plain progress lines on stderr.
  CHECK_THAT(one.err, Catch::Contains("point p000005 done (off: tasks[ui_main].nice=10, 3 runs)"));
  CHECK_THAT(a.at("runs.csv"), Catch::StartsWith("point,variant,tasks[ui_main].nice,run,seed,"
                                                 "task:ui_main.wakeup_latency.mean,"));
  CHECK_THAT(a.at("points.csv"),
             Catch::StartsWith("point,variant,tasks[ui_main].nice,metric,unit,runs,mean,sd,min,max,ci_low,ci_high\n"));
  CHECK_THAT(a.at("sensitivity.csv"),
             Catch::StartsWith("variant,metric,points,r2,parameter,slope,elasticity,standardized,note\n"));
}

TEST_CASE("shards merged give byte for byte the folder of one unsharded sweep", "[sweep][cli]") {
  ScratchDir dir("sweep_shards");
  const std::string file = small_sweep(dir, 3);
  sweep(dir, file, (dir / "whole").string(), "-q");
  std::string shard_dirs;
  for (int i = 0; i < 3; ++i) {
    const std::string out = (dir / ("shard" + std::to_string(i))).string();
    sweep(dir, file, out, "-q -j 1 --shard " + std::to_string(i) + "/3");
    CHECK(fs::exists(fs::path(out) / "shard.json"));
    CHECK_FALSE(fs::exists(fs::path(out) / "sweep.json"));  // a shard alone has no aggregates
    shard_dirs += " " + shell_quote(out);
  }
  // In any order.
  const Cli merged = run_schedlab(dir, "merge" + shard_dirs + " --out " + shell_quote((dir / "merged").string()));
  INFO(merged.err);
  REQUIRE(merged.code == 0);
  CHECK(folder_contents(dir / "merged") == folder_contents(dir / "whole"));

  const Cli missing = run_schedlab(dir, "merge " + shell_quote((dir / "shard0").string()) + " " +
                                        shell_quote((dir / "shard2").string()) + " --out " +
                                        shell_quote((dir / "incomplete").string()));
  CHECK(missing.code == 2);
  CHECK_THAT(missing.err, Catch::Contains("point p000000 lacks run 1: a shard is missing or unfinished"));
  CHECK_FALSE(fs::exists(dir / "incomplete"));

  // The same shard twice would hide a missing one: refused.
  const std::string shard0 = shell_quote((dir / "shard0").string());
  const Cli twice = run_schedlab(dir, "merge" + shard_dirs + " " + shard0 + " --out " +
                                      shell_quote((dir / "twice").string()));
  CHECK(twice.code == 2);
  CHECK_THAT(twice.err, Catch::Contains("is given twice"));
  CHECK_FALSE(fs::exists(dir / "twice"));
}

TEST_CASE("a sweep resumed after lost or damaged point files ends with the same folder", "[sweep][cli]") {
  ScratchDir dir("sweep_resume");
  const std::string file = small_sweep(dir, 3);
  const std::string out = (dir / "out").string();
  sweep(dir, file, out, "-q");
  const auto complete = folder_contents(out);
  fs::remove(fs::path(out) / "points" / "p000001.json");
  const std::string p4 = (fs::path(out) / "points" / "p000004.json").string();
  const std::string text = slurp(p4);
  write_text(p4, text.substr(0, text.size() / 3));  // as if cut off (atomic writes prevent this; disks do not)
  fs::remove(fs::path(out) / "sweep.json");
  const Cli again = sweep(dir, file, out);
  CHECK_THAT(again.out, Catch::Contains("ran 6 runs, wrote 2 point files, kept 4 finished points"));
  CHECK_THAT(again.err, Catch::Contains("redoing"));
  CHECK(folder_contents(out) == complete);
  const Cli nothing = sweep(dir, file, out);
  CHECK_THAT(nothing.out, Catch::Contains("ran 0 runs, wrote 0 point files, kept 6 finished points"));
  CHECK(folder_contents(out) == complete);
}

TEST_CASE("a sweep interrupted by SIGINT leaves no partial file and resumes to the same folder", "[sweep][cli]") {
  ScratchDir dir("sweep_interrupt");
  // 5 points x 30 runs of 10 s: about 0.2 s of simulation per point in a
  // release build, so the 4 points left after the first is on disk take
  // far longer than the 1 ms poll below needs to send the signal.
  const std::string file = small_sweep(dir, 30, "[-10, -5, 0, 5, 10]", false, "10s");
  const std::string out = (dir / "out").string();
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execl(SCHEDLAB_BINARY, "schedlab", "sweep", file.c_str(), "--out", out.c_str(), "-j", "1",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Finished point files (not atomic_file temporaries) in points/.
  const fs::path points = fs::path(out) / "points";
  const auto finished_points = [&] {
    int n = 0;
    std::error_code ec;
    for (fs::directory_iterator it(points, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (name.find(".tmp-") == std::string::npos && name.size() > 5 &&
          name.compare(name.size() - 5, 5, ".json") == 0)
        ++n;
    }
    return n;
  };
  // Interrupt as soon as the first point is on disk. The sweep must still
  // be running then: it ending first (or the poll running out, 60 s) fails
  // the test instead of skipping the interrupt path.
  bool exited_early = false;
  bool saw_point = false;
  for (int i = 0; i < 60'000; ++i) {  // 1 ms steps: 60 s at most
    if (finished_points() >= 1) {
      saw_point = true;
      break;
    }
    int early = 0;
    if (::waitpid(pid, &early, WNOHANG) == pid) {
      exited_early = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!exited_early) ::kill(pid, SIGINT);
  int status = 0;
  if (!exited_early) ::waitpid(pid, &status, 0);
  REQUIRE_FALSE(exited_early);
  REQUIRE(saw_point);
  // install_cleanup_signal_handlers(): the handler removes temporaries, then
  // re-raises SIGINT with its default action, so the sweep dies by SIGINT.
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGINT);
  // Mid-sweep: at least the point we saw, not all 5, and no aggregates.
  const int on_disk = finished_points();
  CHECK(on_disk >= 1);
  CHECK(on_disk < 5);
  CHECK_FALSE(fs::exists(fs::path(out) / "sweep.json"));
  for (const auto& [name, bytes] : folder_contents(out)) {
    CAPTURE(name);
    CHECK(name.find(".tmp-") == std::string::npos);
  }
  const Cli resumed = sweep(dir, file, out);
  CHECK_THAT(resumed.out, Catch::Contains("kept " + std::to_string(on_disk) + " finished point"));  // "point" or "points"
  sweep(dir, file, (dir / "fresh").string(), "-q");
  CHECK(folder_contents(out) == folder_contents(dir / "fresh"));
}

TEST_CASE("sweep --why: each run's decision counts are run --why's, summed per point, and shards merge to the same folder", "[sweep][cli][why]") {
  ScratchDir dir("sweep_why");
  const std::string file = small_sweep(dir, 2);
  const std::string out = (dir / "whole").string();
  const Cli whole = sweep(dir, file, out, "--why -j 1");
  const auto files = folder_contents(out);
  REQUIRE(files.count("decisions.csv"));
  CHECK_THAT(files.at("decisions.csv"),
             Catch::StartsWith("point,variant,tasks[ui_main].nice,decision,group,reason,count,per_run,share_pct\n"));
  // Six points in one table: a column per point, named by variant and value.
  CHECK_THAT(whole.out, Catch::Contains("why: decisions by reason (share of the group's decisions of that kind, and "
                                        "count per run); columns: variant, tasks[ui_main].nice"));
  CHECK_THAT(whole.out, Catch::Contains("on -10"));
  CHECK_THAT(whole.out, Catch::Contains("off 10"));
  CHECK_THAT(whole.out, Catch::Contains("sweep.json, decisions.csv"));

  // Point p000004 (RUN_TO_PARITY off, nice 0), run 1: the counts are those
  // of the same scenario simulated with --why for the same seed.
  const SweepManifest m = parse_manifest(files.at("manifest.json"), "manifest.json");
  REQUIRE(m.why);
  const SweepManifest::Point& pt = m.points[4];
  std::string why;
  const auto rec = parse_point(files.at("points/p000004.json"), "p000004.json", m, pt, &why);
  REQUIRE(rec);
  REQUIRE(rec->runs.size() == 2);
  const uint64_t seed = derive_seed(m.base_seed, 1);
  const ScenarioParams params = load_scenario_with_overlays(m.scenario, m.overlays_of(pt), "test");
  const RunResult direct = simulate_run(with_start_jitter(params, m.start_jitter, seed), seed, {}, nullptr, {}, true);
  REQUIRE_FALSE(direct.decisions.empty());
  REQUIRE(rec->runs[1].decisions.size() == direct.decisions.size());
  for (size_t i = 0; i < direct.decisions.size(); ++i) {
    CHECK(rec->runs[1].decisions[i].kind == direct.decisions[i].kind);
    CHECK(rec->runs[1].decisions[i].group == direct.decisions[i].group);
    CHECK(rec->runs[1].decisions[i].reason == direct.decisions[i].reason);
    CHECK(rec->runs[1].decisions[i].count == direct.decisions[i].count);
  }

  // decisions.csv sums the point's runs: every (kind, group, reason) row of
  // p000004 is run 0 + run 1, per_run is half of it, and each group's
  // shares of one kind add up to 100%.
  std::map<std::string, uint64_t> expected;  // "kind|group|reason"
  for (const RunRecord& r : rec->runs)
    for (const DecisionCount& d : r.decisions) expected[d.kind + "|" + d.group + "|" + d.reason] += d.count;
  std::map<std::string, uint64_t> got;
  std::map<std::string, double> share;  // "kind|group"
  std::istringstream csv(files.at("decisions.csv"));
  std::string line;
  std::getline(csv, line);
  while (std::getline(csv, line)) {
    if (line.rfind("p000004,", 0) != 0) continue;
    // point,variant,nice,kind,group,"reason",count,per_run,share: the reason
    // may be quoted and hold commas; the last three fields never do.
    std::vector<std::string> tail;
    std::string rest = line;
    for (int k = 0; k < 3; ++k) {
      const size_t c = rest.rfind(',');
      tail.insert(tail.begin(), rest.substr(c + 1));
      rest.resize(c);
    }
    std::vector<std::string> head;
    for (int k = 0; k < 5; ++k) {
      const size_t c = rest.find(',');
      head.push_back(rest.substr(0, c));
      rest.erase(0, c + 1);
    }
    std::string reason = rest;
    if (reason.size() >= 2 && reason.front() == '"') {
      reason = reason.substr(1, reason.size() - 2);
      for (size_t q = reason.find("\"\""); q != std::string::npos; q = reason.find("\"\"", q + 1)) reason.erase(q, 1);
    }
    CHECK(head[1] == "off");
    CHECK(head[2] == "0");
    const uint64_t count = std::stoull(tail[0]);
    got[head[3] + "|" + head[4] + "|" + reason] = count;
    CHECK(std::stod(tail[1]) == Approx(count / 2.0).margin(0.0005));
    share[head[3] + "|" + head[4]] += std::stod(tail[2]);
  }
  CHECK(got == expected);
  REQUIRE_FALSE(share.empty());
  for (const auto& [group, total] : share) {
    CAPTURE(group);
    CHECK(total == Approx(100.0).margin(0.01 * 20));  // each share is rounded to 0.001
  }

  // Shards with --why merge to the same bytes.
  std::string shard_dirs;
  for (int i = 0; i < 2; ++i) {
    const std::string shard = (dir / ("shard" + std::to_string(i))).string();
    sweep(dir, file, shard, "--why -q -j 1 --shard " + std::to_string(i) + "/2");
    shard_dirs += " " + shell_quote(shard);
  }
  const Cli merged = run_schedlab(dir, "merge" + shard_dirs + " --out " + shell_quote((dir / "merged").string()));
  INFO(merged.err);
  REQUIRE(merged.code == 0);
  CHECK(folder_contents(dir / "merged") == files);

  // Counting decisions makes another sweep: a folder without them is not
  // resumed with --why, nor the other way round.
  const std::string plain = (dir / "plain").string();
  sweep(dir, file, plain, "-q");
  CHECK_FALSE(fs::exists(fs::path(plain) / "decisions.csv"));
  CHECK(folder_contents(plain).at("manifest.json").find("\"why\"") == std::string::npos);
  const Cli resumed = run_schedlab(dir, "sweep " + shell_quote(file) + " --why --out " + shell_quote(plain));
  CHECK(resumed.code == 2);
  CHECK_THAT(resumed.err, Catch::Contains("holds another sweep"));
  const Cli unwhy = run_schedlab(dir, "sweep " + shell_quote(file) + " --out " + shell_quote(out));
  CHECK(unwhy.code == 2);
  CHECK_THAT(unwhy.err, Catch::Contains("holds another sweep"));
}

// A sweep's points read its platform files too: their text enters the key
// (an edited configs/platforms/gs101.yaml is another sweep), their paths do
// not, and a scenario with an inline platform keys by its own text alone.
TEST_CASE("a sweep's key covers the text of the platform files its points load", "[sweep][config]") {
  ScratchDir dir("sweep_platform_key");
  const std::string gs101 = slurp(repo_path("configs/platforms/gs101.yaml"));
  const std::string rk3588 = slurp(repo_path("configs/platforms/rk3588.yaml"));
  write_text(dir / "a.yaml", gs101);
  write_text(dir / "b.yaml", rk3588);
  const std::string scenario_text =
      "name: s\nduration: 100ms\nplatform: {file: a.yaml}\n"
      "tasks:\n  - name: t\n    events: [{run: 1ms}, {sleep: 4ms}]\n";
  write_text(dir / "s.yaml", scenario_text);
  ExperimentSpec spec;
  spec.name = "k";
  spec.source = (dir / "k.yaml").string();
  spec.scenario = (dir / "s.yaml").string();
  spec.variants = {{"base", "", {}, {}}};
  spec.grid = {axis("tasks[t].nice", {"0", "5"})};

  const SweepManifest m = make_manifest(spec, scenario_text);
  const std::string inputs = sweep_inputs_text(m, scenario_text);
  CHECK(inputs.starts_with(scenario_text));
  CHECK(inputs.ends_with(gs101));
  CHECK(inputs.find(rk3588) == std::string::npos);
  const std::string key = make_manifest(spec, inputs).key;
  CHECK(key != m.key);

  SECTION("an edited platform file is another sweep") {
    write_text(dir / "a.yaml", gs101 + "# edited\n");
    CHECK(make_manifest(spec, sweep_inputs_text(m, scenario_text)).key != key);
  }
  SECTION("the same platform under another path is the same sweep") {
    fs::create_directories(dir / "sub");
    write_text(dir / "sub" / "a.yaml", gs101);
    const std::string moved = "name: s\nduration: 100ms\nplatform: {file: sub/a.yaml}\n"
                              "tasks:\n  - name: t\n    events: [{run: 1ms}, {sleep: 4ms}]\n";
    write_text(dir / "s.yaml", moved);
    // The scenario's own text changed with the path; the platform's part did not.
    CHECK(sweep_inputs_text(m, moved) == moved + inputs.substr(scenario_text.size()));
  }
  SECTION("an axis over platform files takes in each file once") {
    ExperimentSpec both = spec;
    both.grid = {axis("platform.file", {"a.yaml", "b.yaml"}), axis("tasks[t].nice", {"0", "5"})};
    const std::string text = sweep_inputs_text(make_manifest(both, scenario_text), scenario_text);
    CHECK(text.find(gs101) != std::string::npos);
    CHECK(text.find(rk3588) != std::string::npos);
    CHECK(text.size() < scenario_text.size() + 2 * (gs101.size() + rk3588.size()));
  }
  SECTION("an overlay below platform copies the same file in") {
    ExperimentSpec tuned = spec;
    tuned.grid = {axis("platform.clusters[big].rate_limit", {"1ms", "4ms"})};
    CHECK(sweep_inputs_text(make_manifest(tuned, scenario_text), scenario_text) == inputs);
  }
  SECTION("an inline platform adds nothing") {
    const std::string inline_text = "name: s\nduration: 100ms\nplatform: {cpus: 2}\n"
                                    "tasks:\n  - name: t\n    events: [{run: 1ms}, {sleep: 4ms}]\n";
    write_text(dir / "s.yaml", inline_text);
    CHECK(sweep_inputs_text(m, inline_text) == inline_text);
  }
}

TEST_CASE("a sweep refuses a folder that holds another sweep or a shard", "[sweep][cli]") {
  ScratchDir dir("sweep_refuse");
  const std::string out = (dir / "out").string();
  sweep(dir, small_sweep(dir, 2), out, "-q");
  const std::string other = small_sweep(dir, 3);  // same file, other settings
  const Cli r = run_schedlab(dir, "sweep " + shell_quote(other) + " --out " + shell_quote(out));
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("holds another sweep"));
  const Cli shard = run_schedlab(dir, "sweep " + shell_quote(other) + " --shard 0/2 --out " + shell_quote(out));
  CHECK(shard.code == 2);
  const Cli bad = run_schedlab(dir, "sweep " + shell_quote(other) + " --shard 2/2");
  CHECK(bad.code == 2);
  CHECK_THAT(bad.err, Catch::Contains("--shard expects i/N"));
  // A folder with someone else's files and no sweep: neither sweep nor
  // merge writes into it (an empty one, or one with empty folders, is fine).
  const fs::path junk = dir / "junk";
  fs::create_directories(junk);
  write_text(junk / "notes.txt", "mine\n");
  for (const std::string& cmd : {"sweep " + shell_quote(other) + " --out " + shell_quote(junk.string()),
                                 "merge " + shell_quote(out) + " --out " + shell_quote(junk.string())}) {
    const Cli r = run_schedlab(dir, cmd);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains("holds files but no sweep") && Catch::Contains("notes.txt"));
  }
  CHECK(slurp(junk / "notes.txt") == "mine\n");
  CHECK_FALSE(fs::exists(junk / "manifest.json"));
  fs::create_directories(dir / "empty" / "plots");
  CHECK(run_schedlab(dir, "merge " + shell_quote(out) + " -q --out " + shell_quote((dir / "empty").string())).code == 0);
}

TEST_CASE("a sweep refuses its folder once the platform file it loads is edited", "[sweep][cli]") {
  ScratchDir dir("sweep_refuse_platform");
  write_text(dir / "p.yaml", "cpus: 2\n");
  write_text(dir / "s.yaml", "name: s\nplatform: {file: p.yaml}\n"
                             "tasks:\n  - name: t\n    events: [{run: 1ms}, {sleep: 4ms}]\n");
  write_text(dir / "k.yaml", "name: k\nscenario: s.yaml\nruns: 1\nduration: 50ms\n"
                             "grid:\n  tasks[t].nice: [0, 5]\nmetrics: [task:t.wakeup_latency.mean]\n");
  const std::string file = (dir / "k.yaml").string(), out = (dir / "out").string();
  sweep(dir, file, out, "-q");
  const Cli again = sweep(dir, file, out, "-q");  // unchanged: resumes, nothing to redo
  write_text(dir / "p.yaml", "cpus: 3\n");
  const Cli r = run_schedlab(dir, "sweep " + shell_quote(file) + " --out " + shell_quote(out));
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("holds another sweep") && Catch::Contains("platform file"));
}

TEST_CASE("a sweep or compare that fails before its first result leaves no files behind", "[sweep][cli]") {
  ScratchDir dir("sweep_fail_early");
  // A metric naming no task of the scenario: found once the first run
  // ends, after the folder was made. The new folder goes again, and the
  // corrected sweep then runs into it.
  const std::string file = small_sweep(dir, 2);
  std::string text = slurp(file);
  const std::string good = "task:ui_main.wakeup_latency.mean";
  text.replace(text.find(good), good.size(), "task:nobody.wakeup_latency.mean");
  const std::string bad = (dir / "bad.yaml").string();
  write_text(bad, text);
  const std::string out = (dir / "out").string();
  const Cli r = run_schedlab(dir, "sweep " + shell_quote(bad) + " -j 1 --out " + shell_quote(out));
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("no task 'nobody' in the scenario"));
  CHECK_FALSE(fs::exists(out));
  sweep(dir, file, out, "-q");
  CHECK(fs::exists(fs::path(out) / "sweep.json"));
  // A misspelt workqueue (compare's check, at each point's first run).
  std::string wq_text = slurp(file);
  wq_text.replace(wq_text.find(good), good.size(), "wq:evnts.items");
  write_text(bad, wq_text);
  const std::string out_wq = (dir / "out_wq").string();
  const Cli w = run_schedlab(dir, "sweep " + shell_quote(bad) + " -j 1 --out " + shell_quote(out_wq));
  CHECK(w.code == 2);
  CHECK_THAT(w.err, Catch::Contains("no workqueue 'evnts' in the experiment") && Catch::Contains("events"));
  CHECK_FALSE(fs::exists(out_wq));

  // compare --plot into a path that cannot be a folder: refused before any
  // run, so neither --json nor --csv is written.
  const std::string exp = (dir / "exp.yaml").string();
  write_text(exp, "scenario: " + repo_path("configs/scenarios/mixed_2cpu.yaml") +
                      "\nruns: 2\nduration: 200ms\nwarmup: 0s\n"
                      "variants: [{name: a}, {name: b, set: {kernel.features.RUN_TO_PARITY: false}}]\n");
  const std::string json = (dir / "c.json").string(), csv = (dir / "c.csv").string();
  const Cli c = run_schedlab(dir, "compare " + shell_quote(exp) + " -q --json " + shell_quote(json) + " --csv " +
                                      shell_quote(csv) + " --plot " + shell_quote(file + "/plots"));
  CHECK(c.code == 2);
  CHECK_THAT(c.err, Catch::Contains("cannot create"));
  CHECK_FALSE(fs::exists(json));
  CHECK_FALSE(fs::exists(csv));
  // sweep --plot likewise, before its folder.
  const std::string out2 = (dir / "out2").string();
  const Cli s2 = run_schedlab(dir, "sweep " + shell_quote(file) + " -q --out " + shell_quote(out2) + " --plot " +
                                       shell_quote(file + "/plots"));
  CHECK(s2.code == 2);
  CHECK_FALSE(fs::exists(out2));
}

TEST_CASE("compare and sweep draw their plots as PNG files", "[plots][cli]") {
  ScratchDir dir("plots");
  const std::string out = (dir / "out").string();
  sweep(dir, small_sweep(dir, 2), out, "-q --plot " + shell_quote((dir / "sp").string()));
  const std::string png_magic = "\x89PNG\r\n\x1a\n";
  CHECK(slurp(dir / "sp" / "sweep_curves.png").substr(0, 8) == png_magic);
  CHECK_FALSE(fs::exists(dir / "sp" / "sweep_why.png"));  // no --why, no reasons to draw
  // With --why, the reasons that move: ui_main's wake-ups preempt less
  // often as its nice value rises.
  sweep(dir, small_sweep(dir, 2), (dir / "why").string(), "-q --why --plot " + shell_quote((dir / "wp").string()));
  CHECK(slurp(dir / "wp" / "sweep_why.png").substr(0, 8) == png_magic);

  const std::string exp = (dir / "exp.yaml").string();
  write_text(exp, "scenario: " + repo_path("configs/scenarios/mixed_2cpu.yaml") +
                      "\nruns: 3\nduration: 1s\nwarmup: 200ms\nstart_jitter: 16ms\n"
                      "variants: [{name: a}, {name: b, set: {kernel.features.RUN_TO_PARITY: false}}]\n");
  const Cli c = run_schedlab(dir, "compare " + shell_quote(exp) + " -q --plot " + shell_quote((dir / "cp").string()));
  INFO(c.err);
  REQUIRE(c.code == 0);
  CHECK(slurp(dir / "cp" / "latency_cdf.png").substr(0, 8) == png_magic);
  CHECK(slurp(dir / "cp" / "changes.png").substr(0, 8) == png_magic);
  CHECK_THAT(slurp(dir / "cp" / "compare_data.json"), Catch::Contains("\"format\": \"schedlab.compare.plotdata\""));
}

TEST_CASE("a sweep's variants are checked together with the grid they run with", "[sweep][config]") {
  // The variant makes hog_a SCHED_FIFO, whose priority only the grid gives:
  // alone the variant would be refused ("needs 'priority'"), but every
  // point the engine runs has a priority. A bad grid value is still
  // refused at load, naming its point.
  ScratchDir dir("sweep_variant_grid");
  write_text(dir / "s.yaml", "platform: {cpus: 1}\ntasks:\n  - {name: hog_a, events: [{run: 1ms}]}\n");
  const std::string sweep = (dir / "sweep.yaml").string();
  const std::string head = "name: fifo_prio\nscenario: s.yaml\nruns: 1\nvariants:\n  - name: fifo\n    set:\n"
                           "      \"tasks[hog_a].policy\": SCHED_FIFO\n";
  const ExperimentSpec ok = load_sweep_yaml(head + "grid:\n  tasks[hog_a].priority: [1, 50]\n", sweep);
  CHECK(ok.grid.at(0).values.size() == 2);
  try {
    load_sweep_yaml(head + "grid:\n  tasks[hog_a].priority: [1, 500]\n", sweep);
    FAIL("a priority of 500 was accepted");
  } catch (const ConfigError& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("variant 'fifo', tasks[hog_a].priority=500"));
  }
  // A value listed twice would run the same points twice under two ids.
  try {
    load_sweep_yaml(head + "grid:\n  tasks[hog_a].priority: [1, 50, 1]\n", sweep);
    FAIL("a repeated grid value was accepted");
  } catch (const ConfigError& e) {
    CHECK_THAT(std::string(e.what()),
               Catch::Contains("grid.tasks[hog_a].priority[2]: '1' is listed twice (first at grid.tasks[hog_a].priority[0])"));
  }
}
