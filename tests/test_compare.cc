// schedlab compare: metric names, the bootstrap on known samples, changes
// and their noise marks, determinism across -j, the wake graph.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <cmath>

#include "experiment_test_util.h"
#include "experiments/lib/bootstrap.h"
#include "experiments/lib/compare.h"
#include "experiments/lib/metrics.h"
#include "experiments/lib/report_compare.h"
#include "experiments/lib/runner.h"
#include "experiments/lib/wakegraph.h"
#include "models/config/config.h"
#include "sim/rng.h"
#include "sim/stats.h"

using namespace schedlab;
using namespace schedlab::testing;

TEST_CASE("the percentile interval interpolates linearly between ranks", "[bootstrap]") {
  // 11 values 0, 10, ..., 100: the 2.5th percentile sits at rank 0.25
  // (2.5), the 97.5th at rank 9.75 (97.5).
  std::vector<double> v;
  for (int i = 10; i >= 0; --i) v.push_back(10.0 * i);  // unsorted on purpose
  const Interval ci = percentile_interval(v, 0.95);
  CHECK(ci.low == Approx(2.5));
  CHECK(ci.high == Approx(97.5));
  const Interval ninety = percentile_interval(v, 0.90);  // 5th and 95th percentiles: ranks 0.5 and 9.5
  CHECK(ninety.low == Approx(5.0));
  CHECK(ninety.high == Approx(95.0));
}

TEST_CASE("the paired bootstrap of a relative change, on fixed resamples, by hand", "[bootstrap]") {
  // a = {1, 2, 3}, b = {2, 4, 8}. The four resamples' means (a*, b*):
  // {0,0,0} -> (1, 2): +100%; {0,1,2} -> (2, 14/3): +133.33%;
  // {2,2,2} -> (3, 8): +166.67%; {1,1,2} -> (7/3, 16/3): +128.57%.
  // Sorted 100, 128.571, 133.333, 166.667: the 2.5th percentile is at rank
  // 0.075 -> 100 + 0.075 * 28.571 = 102.143; the 97.5th at rank 2.925 ->
  // 133.333 + 0.925 * 33.333 = 164.167.
  const std::vector<double> a{1, 2, 3}, b{2, 4, 8};
  const std::vector<std::vector<size_t>> resamples{{0, 0, 0}, {0, 1, 2}, {2, 2, 2}, {1, 1, 2}};
  std::vector<double> a_star, b_star;
  bootstrap_means(a, b, resamples, a_star, b_star);
  REQUIRE(a_star.size() == 4);
  CHECK(a_star[3] == Approx(7.0 / 3.0));
  CHECK(b_star[1] == Approx(14.0 / 3.0));
  const std::optional<Interval> ci = relative_change_interval(a_star, b_star);
  REQUIRE(ci);
  CHECK(ci->low == Approx(100.0 + 0.075 * (100.0 * (16.0 / 7.0 - 1.0) - 100.0)));
  CHECK(ci->high == Approx(100.0 * 4.0 / 3.0 + 0.925 * (100.0 * 5.0 / 3.0 - 100.0 * 4.0 / 3.0)));
  // The mean alone: resample means of b are 2, 14/3, 8, 16/3, sorted 2,
  // 14/3, 16/3, 8. Three runs expand 95% to 1 - 2 Phi(-sqrt(3/2) t_2) with
  // t_2 = 4.3027 (z = 5.27): tails of 7e-8, ranks a hair inside 0 and 3.
  const Interval m = bootstrap_mean(b, resamples);
  const double tail = (1.0 - expanded_confidence(3)) / 2.0;
  CHECK(tail == Approx(6.8e-8).epsilon(0.05));
  CHECK(m.low == Approx(2.0 + 3.0 * tail * (14.0 / 3.0 - 2.0)).margin(1e-10));
  CHECK(m.high == Approx(8.0 - 3.0 * tail * (8.0 - 16.0 / 3.0)).margin(1e-10));
  CHECK(bootstrap_mean(b, resamples, 0.95).low > 2.0);
}

TEST_CASE("the expanded percentile levels: Student's t for few runs, the plain 95% for many", "[bootstrap]") {
  // 1 - 2 Phi(-sqrt(n / (n - 1)) t_{n-1, 0.975}), by hand from t tables:
  // n = 20: t_19 = 2.093024, z = sqrt(20/19) 2.093024 = 2.147397, 2 Phi(-z) = 0.031762;
  // n = 10: t_9 = 2.262157, z = 2.384523, 2 Phi(-z) = 0.017101;
  // n = 245: t_244 = 1.969734, z = 1.973766, 2 Phi(-z) = 0.048408.
  CHECK(expanded_confidence(20) == Approx(0.968238).epsilon(1e-5));
  CHECK(expanded_confidence(10) == Approx(0.982899).epsilon(1e-5));
  CHECK(expanded_confidence(245) == Approx(0.951592).epsilon(1e-5));
  CHECK(expanded_confidence(100000) == Approx(0.95).epsilon(1e-4));
  CHECK(expanded_confidence(1) == 0.95);  // nothing to resample: as asked
  CHECK(expanded_confidence(2) == Approx(1.0));  // t_1 = 12.7: the whole range of the resamples
  CHECK(expanded_confidence(20, 1.0) == 1.0);  // out of (0, 1): as asked, no Boost error
  CHECK(expanded_confidence(20, 0.90) < expanded_confidence(20));
  CHECK(expanded_confidence(20, 0.90) > 0.90);
}

TEST_CASE("with 10 runs the expanded interval covers the true mean about 95% of the time, the plain one less",
          "[bootstrap]") {
  // 1000 samples of 10 standard normal values, each with its own 2000
  // resamples; the true mean is 0. Plain percentile intervals of the mean
  // cover about 91% (the bootstrap spread is sqrt((n-1)/n) of the sample's
  // with normal, not t, quantiles); the expanded ones about 95%. Binomial
  // sd over 1000 samples: 0.7 points.
  RngStream rng(2015, "coverage");
  int plain = 0, expanded = 0;
  const int samples = 1000;
  for (int k = 0; k < samples; ++k) {
    std::vector<double> x(10);
    for (double& v : x) v = rng.normal(0, 1);
    const auto resamples = draw_resamples(x.size(), kBootstrapResamples, 1000 + static_cast<uint64_t>(k));
    std::vector<double> means, unused;
    bootstrap_means(x, x, resamples, means, unused);
    plain += percentile_interval(means, 0.95).contains(0.0);
    expanded += bootstrap_mean(x, resamples).contains(0.0);
  }
  const double plain_cover = static_cast<double>(plain) / samples;
  const double expanded_cover = static_cast<double>(expanded) / samples;
  CHECK(plain_cover < 0.93);
  CHECK(expanded_cover > 0.935);
  CHECK(expanded_cover < 0.97);
}

TEST_CASE("a relative change's interval never passes -100% and knows infinite and undefined resamples",
          "[bootstrap]") {
  // A count that drops to 0: every resample's change is -100% or above.
  CHECK(relative_change_pct(4, 0) == -100.0);
  CHECK(relative_change_pct(0, 0) == 0.0);
  CHECK(std::isinf(relative_change_pct(0, 2)));
  CHECK(std::isnan(relative_change_pct(NAN, 2)));
  using V = std::vector<std::optional<double>>;
  const Change drop = compare_runs(V{1, 0, 0, 2, 0, 0, 1, 0}, V{0, 0, 0, 0, 0, 1, 0, 0}, 3);
  REQUIRE(drop.ci_pct);
  CHECK(drop.pct == Approx(-75.0));   // 0.5 -> 0.125 per run
  CHECK(drop.ci_pct->low >= -100.0);
  // 100 resamples: 3 with baseline 0 (+inf) sort to the top: the 97.5th
  // percentile (rank 96.525) reaches them; the 2.5th does not.
  std::vector<double> a_star(100, 2.0), b_star(100, 1.0);
  for (int i = 0; i < 3; ++i) a_star[static_cast<size_t>(i)] = 0, b_star[static_cast<size_t>(i)] = 1;
  std::optional<Interval> ci = relative_change_interval(a_star, b_star);
  REQUIRE(ci);
  CHECK(ci->low == Approx(-50.0));
  CHECK(std::isinf(ci->high));
  Change c = make_change(2, 1, a_star, b_star, 10);
  CHECK(format_interval(c) == "[-50.0, +inf]");
  CHECK(c.noise);  // [-50, inf] holds 0
  // More than 5% undefined (NaN: no samples in the resample): no interval.
  for (int i = 0; i < 6; ++i) a_star[static_cast<size_t>(10 + i)] = NAN;
  CHECK_FALSE(relative_change_interval(a_star, b_star));
}

TEST_CASE("resamples are drawn with replacement from a seeded, portable stream", "[bootstrap]") {
  const auto r1 = draw_resamples(5, 2000, 42);
  const auto r2 = draw_resamples(5, 2000, 42);
  const auto r3 = draw_resamples(5, 2000, 43);
  REQUIRE(r1.size() == 2000);
  CHECK(r1 == r2);
  CHECK(r1 != r3);
  std::vector<int> seen(5, 0);
  for (const auto& r : r1) {
    REQUIRE(r.size() == 5);
    for (size_t i : r) {
      REQUIRE(i < 5);
      ++seen[i];
    }
  }
  for (int s : seen) CHECK(s > 1500);  // each index about 2000 times of 10000 draws
}

TEST_CASE("a change is the difference of means in % of the baseline, paired by run", "[bootstrap]") {
  using V = std::vector<std::optional<double>>;
  SECTION("a constant factor has a point interval and is not noise") {
    const Change c = compare_runs(V{10, 20, 30}, V{12.5, 25, 37.5}, 1);
    REQUIRE(c.defined);
    CHECK(c.pct == Approx(25.0));  // x 1.25 in every run
    REQUIRE(c.ci_pct);
    CHECK(c.ci_pct->low == Approx(25.0));
    CHECK(c.ci_pct->high == Approx(25.0));
    CHECK_FALSE(c.noise);
    CHECK(format_change(c) == "+25.0%");
    CHECK(format_interval(c) == "[+25.0, +25.0]");
  }
  SECTION("a constant shift is a relative change that depends on the resampled baseline") {
    const Change c = compare_runs(V{10, 20, 30}, V{15, 25, 35}, 1);
    CHECK(c.pct == Approx(25.0));  // +5 on a mean of 20
    REQUIRE(c.ci_pct);
    CHECK(c.ci_pct->low >= Approx(5.0 / 30.0 * 100.0));   // +5 on the largest resampled mean
    CHECK(c.ci_pct->high <= Approx(5.0 / 10.0 * 100.0));  // +5 on the smallest
    CHECK(c.ci_pct->low < 25.0);
    CHECK(c.ci_pct->high > 25.0);
  }
  SECTION("identical variants are noise") {
    const Change c = compare_runs(V{1, 2, 3}, V{1, 2, 3}, 1);
    CHECK(c.pct == 0);
    CHECK(c.noise);
    CHECK(format_change(c) == "~+0.0%");
  }
  SECTION("changes of both signs across runs give an interval around 0") {
    const Change c = compare_runs(V{10, 10, 10, 10, 10, 10}, V{12, 8, 11, 9, 12, 8}, 7);
    CHECK(c.pct == Approx(0.0).margin(1e-12));
    REQUIRE(c.ci_pct);
    CHECK(c.ci_pct->low < 0);
    CHECK(c.ci_pct->high > 0);
    CHECK(c.noise);
  }
  SECTION("runs without a value in either variant are left out of the pairs") {
    const Change c = compare_runs(V{10, std::nullopt, 30, 40}, V{20, 5, std::nullopt, 50}, 1);
    CHECK(c.pairs == 2);          // runs 0 and 3
    CHECK(c.pct == Approx(40.0));  // means 25 -> 35
  }
  SECTION("a change from a zero baseline is undefined unless nothing changed") {
    CHECK_FALSE(compare_runs(V{0, 0}, V{1, 2}, 1).defined);
    CHECK(format_change(compare_runs(V{0, 0}, V{1, 2}, 1)) == "n/a");
    CHECK(compare_runs(V{0, 0}, V{0, 0}, 1).defined);
  }
  SECTION("one run has no interval") {
    const Change c = compare_runs(V{10}, V{11}, 1);
    CHECK(c.pct == Approx(10.0));
    CHECK_FALSE(c.ci_pct);
    CHECK(format_interval(c) == "-");
    CHECK(format_change(c) == "+10.0%");  // no interval, no noise mark
  }
}

TEST_CASE("a metric row gives each variant's mean, sd and range over its runs", "[compare]") {
  const Metric m{{MetricScope::kTask, "ui", "wakeup_latency.p99"}, MetricUnit::kMicroseconds, "task:ui.wakeup_latency.p99"};
  const MetricRow row = summarize_metric(m, {{2.0, 4.0, 6.0}, {3.0, std::nullopt, 9.0}}, {"a", "b"});
  REQUIRE(row.cells.size() == 2);
  CHECK(row.cells[0].n == 3);
  CHECK(row.cells[0].mean == Approx(4.0));
  CHECK(row.cells[0].sd == Approx(2.0));
  CHECK(row.cells[0].min == 2.0);
  CHECK(row.cells[0].max == 6.0);
  CHECK(row.cells[1].n == 2);
  CHECK(row.cells[1].mean == Approx(6.0));
  CHECK(row.cells[1].change.pairs == 2);
  CHECK(row.cells[1].change.pct == Approx(50.0));  // runs 0 and 2: mean 4 -> 6
}

TEST_CASE("metric names are scope:object.field and unknown parts list the valid ones", "[metrics]") {
  std::string why;
  auto m = parse_metric_name("task:ui_main.wakeup_latency.p99", &why);
  REQUIRE(m);
  CHECK(m->scope == MetricScope::kTask);
  CHECK(m->object == "ui_main");
  CHECK(m->field == "wakeup_latency.p99");
  CHECK(metric_unit(*m) == MetricUnit::kMicroseconds);
  CHECK(parse_metric_name("group:bg.cpu_share", &why)->scope == MetricScope::kGroup);
  CHECK(parse_metric_name("cpu:*.busy_pct", &why)->object == "*");
  CHECK(parse_metric_name("total.energy_mj", &why)->field == "energy_mj");

  CHECK_FALSE(parse_metric_name("task:ui.wakeup_latency.p100", &why));
  CHECK_THAT(why, Catch::Contains("unknown task field 'wakeup_latency.p100'"));
  CHECK_THAT(why, Catch::Contains("wakeup_latency.p99"));
  CHECK_FALSE(parse_metric_name("thread:ui.cpu_share", &why));
  CHECK_THAT(why, Catch::Contains("valid: task, group, cpu, cluster, drm, wq, rpm, frames, total"));
  CHECK_FALSE(parse_metric_name("cpu:one.busy_pct", &why));
  CHECK_FALSE(parse_metric_name("total.joules", &why));
  CHECK_THAT(why, Catch::Contains("energy_mj"));
}

namespace {

// A hand-made run: tasks a (group a), b-0 and b-1 (group b), two CPUs.
RunResult made_up_run() {
  RunResult r;
  r.window_start = Time::zero();
  r.window_end = Time::s(1);
  r.tasks.push_back(task_metrics(1, "a", "a", {1000, 2000, 3000, 4000}, Time::ms(250)));
  r.tasks.push_back(task_metrics(2, "b-0", "b", {10000}, Time::ms(500)));
  r.tasks.push_back(task_metrics(3, "b-1", "b", {}, Time::ms(500)));
  r.cpus.push_back(cpu_metrics(Time::ms(750), Time::ms(250), 10));
  r.cpus.push_back(cpu_metrics(Time::ms(500), Time::ms(500), 20));
  return r;
}

}  // namespace

TEST_CASE("a run's metric values come from its tasks, groups and CPUs", "[metrics]") {
  const RunResult r = made_up_run();
  const RunMetrics m(r);
  std::string why;
  auto v = [&](const char* name) { return m.value(*parse_metric_name(name, &why)); };
  CHECK(*v("task:a.wakeup_latency.mean") == Approx(2.5));   // us
  CHECK(*v("task:a.wakeup_latency.p50") == Approx(2.5));
  CHECK(*v("task:a.wakeup_latency.max") == Approx(4.0));
  CHECK(*v("task:a.wakeup_latency.count") == 4);
  CHECK(*v("task:a.cpu_share") == Approx(0.25));
  CHECK(*v("group:b.cpu_share") == Approx(1.0));
  CHECK(*v("group:b.wakeup_latency.p99") == Approx(10.0));   // one sample pooled over both tasks
  CHECK_FALSE(v("task:b-1.wakeup_latency.p99"));            // no samples: nothing to report
  CHECK(*v("cpu:0.busy_pct") == Approx(75.0));
  CHECK(*v("cpu:1.context_switches") == 20);
  CHECK(*v("total.busy_pct") == Approx(62.5));
  CHECK(*v("total.context_switches") == 30);
  CHECK(*v("total.wakeups") == 5);
  // No power model in this run: energy and power are n/a, not 0.
  CHECK_FALSE(v("total.energy_mj"));
  CHECK_FALSE(v("total.avg_power_mw"));
}

TEST_CASE("energy and power come from the platform's power model, per run", "[metrics]") {
  RunResult r = made_up_run();  // a 1 s window
  ClusterMetrics little, big;
  little.name = "little";
  little.cpu_energy_mj = 100;
  little.static_energy_mj = 20;
  big.name = "big";
  big.cpu_energy_mj = 300;
  r.clusters = {little, big};
  const RunMetrics m(r);
  std::string why;
  CHECK(*m.value(*parse_metric_name("total.energy_mj", &why)) == Approx(420.0));     // 100 + 20 + 300 mJ
  CHECK(*m.value(*parse_metric_name("total.avg_power_mw", &why)) == Approx(420.0));  // over 1 s
  r.window_end = Time::ms(500);  // the same energy in half the time: twice the power
  CHECK(*RunMetrics(r).value(*parse_metric_name("total.avg_power_mw", &why)) == Approx(840.0));
}

TEST_CASE("wildcards expand to every task, group or CPU and unknown names list the valid ones", "[metrics]") {
  const RunResult r = made_up_run();
  std::vector<MetricRequest> req{{"task:*.cpu_share", {"e.yaml", 3, 5}}, {"cpu:*.busy_pct", {"e.yaml", 4, 5}},
                                 {"group:b.cpu_share", {"e.yaml", 5, 5}}, {"task:a.cpu_share", {"e.yaml", 6, 5}}};
  const std::vector<Metric> m = expand_metrics(req, r);
  std::vector<std::string> names;
  for (const Metric& x : m) names.push_back(x.text);
  CHECK(names == std::vector<std::string>{"task:a.cpu_share", "task:b-0.cpu_share", "task:b-1.cpu_share",
                                          "cpu:0.busy_pct", "cpu:1.busy_pct", "group:b.cpu_share"});
  try {
    expand_metrics({{"task:c.cpu_share", {"e.yaml", 7, 5}}}, r);
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(e.line() == 7);
    CHECK_THAT(e.message(), Catch::Contains("no task 'c' in the scenario (tasks: a, b-0, b-1)"));
  }
  CHECK_THROWS_WITH(expand_metrics({{"cpu:2.busy_pct", {}}}, r), Catch::Contains("CPUs: 0, 1"));

  // compare: a task only a variant has may be named; wildcards stay the baseline's.
  RunResult variant = r;
  variant.tasks[0].name = variant.tasks[0].group = "c";
  const Aggregate base = aggregate_runs({r}), other = aggregate_runs({variant});
  const std::vector<Metric> both = expand_metrics({{"task:c.cpu_share", {}}, {"task:*.wakeups", {}}}, base, {&other});
  REQUIRE(both.size() == 4);
  CHECK(both[0].text == "task:c.cpu_share");
  CHECK(both[1].text == "task:a.wakeups");
}

TEST_CASE("table values are formatted by unit, never as -0", "[metrics]") {
  CHECK(format_metric_value(12.345, MetricUnit::kMicroseconds) == "12.35");
  CHECK(format_metric_value(1234.56, MetricUnit::kMicroseconds) == "1234.6");
  CHECK(format_metric_value(0.2401, MetricUnit::kFraction) == "0.240");
  CHECK(format_metric_value(-0.0001, MetricUnit::kPercent) == "0.0");
  CHECK(format_metric_value(NAN, MetricUnit::kPercent) == "n/a");
}

namespace {

std::string small_experiment(const ScratchDir& dir, int runs) {
  const std::string path = (dir / "exp.yaml").string();
  write_text(path, "name: small_rtp\n"
                   "scenario: " + repo_path("configs/scenarios/mixed_2cpu.yaml") + "\n"
                   "runs: " + std::to_string(runs) + "\n"
                   "duration: 1s\n"
                   "warmup: 200ms\n"
                   "start_jitter: 16ms\n"
                   "variants:\n"
                   "  - name: on\n"
                   "  - name: off\n"
                   "    set: {kernel.features.RUN_TO_PARITY: false}\n"
                   "metrics: [task:ui_main.wakeup_latency.p99, group:bg_hog.cpu_share, cpu:*.busy_pct, total.energy_mj]\n"
                   "published:\n"
                   "  task:ui_main.wakeup_latency.p99: {on: '4,000 us'}\n");
  return path;
}

}  // namespace

TEST_CASE("compare gives byte-identical JSON and CSV with -j 1 and -j 2", "[compare][cli]") {
  ScratchDir dir("compare_determinism");
  const std::string exp = small_experiment(dir, 4);
  auto run = [&](int jobs) {
    const std::string tag = std::to_string(jobs);
    const Cli r = run_schedlab(dir, "compare " + shell_quote(exp) + " -j " + tag + " --json " +
                                    shell_quote((dir / ("c" + tag + ".json")).string()) + " --csv " +
                                    shell_quote((dir / ("c" + tag + ".csv")).string()));
    INFO(r.err);
    REQUIRE(r.code == 0);
    return r;
  };
  const Cli one = run(1), two = run(2);
  CHECK(one.out == two.out);
  CHECK(slurp(dir / "c1.json") == slurp(dir / "c2.json"));
  CHECK(slurp(dir / "c1.csv") == slurp(dir / "c2.csv"));

  // The table: a row per metric, the published figure beside, who pays below.
  CHECK_THAT(one.out, Catch::Contains("2 variants x 4 runs"));
  CHECK_THAT(one.out, Catch::Contains("task:ui_main.wakeup_latency.p99"));
  CHECK_THAT(one.out, Catch::Contains("4,000 us"));
  CHECK_THAT(one.out, Catch::Contains("cpu:1.busy_pct"));
  CHECK_THAT(one.out, Catch::Contains("who pays: every task group against 'on'"));
  // A group's CPU time is counted in CPUs (a group of hogs uses several),
  // not as a share that would read as a fraction of the machine.
  CHECK_THAT(one.out, Catch::Contains("wakeup P99 us  CPUs used"));
  CHECK_THAT(one.out, Catch::Contains("total power: n/a (the platform has no power model)"));
  const std::string json = slurp(dir / "c1.json");
  CHECK_THAT(json, Catch::StartsWith("{\n  \"format\": \"schedlab.compare\",\n  \"format_version\": 1,\n"));
  CHECK_THAT(slurp(dir / "c1.csv"),
             Catch::StartsWith("table,metric,unit,variant,baseline,runs,mean,sd,min,max,change_pct,ci_low_pct,"
                               "ci_high_pct,noise,paired_runs,published\n"));
}

TEST_CASE("compare's runs are those of run, variant by variant", "[compare]") {
  // Run i of a variant uses derive_seed(seed, i) and the same start jitter
  // as `run` would: the comparison's values are the runs' own.
  ScratchDir dir("compare_runs");
  const ExperimentSpec spec = load_experiment_file(small_experiment(dir, 3));
  CompareOptions opt;
  opt.jobs = 2;
  const Comparison c = run_comparison(spec, opt);
  REQUIRE(c.results.size() == 2);
  REQUIRE(c.results[1].size() == 3);
  std::vector<Overlay> overlays = spec.common;
  overlays.insert(overlays.end(), spec.variants[1].overlays.begin(), spec.variants[1].overlays.end());
  const ScenarioParams off = load_scenario_with_overlays(spec.scenario, overlays);
  RunOptions ro;
  ro.runs = 3;
  ro.seed = spec.seed;
  ro.start_jitter = spec.start_jitter;
  const RunSet set = run_scenario(off, ro);
  for (size_t i = 0; i < 3; ++i) {
    CHECK(c.results[1][i].seed == set.runs[i].seed);
    CHECK(c.results[1][i].tasks[0].wakeup_latency.values() == set.runs[i].tasks[0].wakeup_latency.values());
  }
  // Jitter makes runs differ (the model itself is deterministic).
  CHECK(c.results[0][0].tasks[0].wakeup_latency.values() != c.results[0][1].tasks[0].wakeup_latency.values());
  // Energy is n/a without a power model: no run has a value.
  const MetricRow& energy = c.metrics.back();
  CHECK(energy.metric.text == "total.energy_mj");
  CHECK(energy.cells[0].n == 0);
}

TEST_CASE("start jitter delays each task by a seeded amount below the jitter", "[compare]") {
  ScenarioParams p = load_scenario_file(repo_path("configs/scenarios/mixed_2cpu.yaml"));
  const ScenarioParams a = with_start_jitter(p, Time::ms(10), 5), b = with_start_jitter(p, Time::ms(10), 5);
  const ScenarioParams c = with_start_jitter(p, Time::ms(10), 6);
  bool any_differs = false;
  for (size_t i = 0; i < p.tasks.size(); ++i) {
    CHECK(a.tasks[i].delay >= p.tasks[i].delay);
    CHECK(a.tasks[i].delay < p.tasks[i].delay + Time::ms(10));
    CHECK(a.tasks[i].delay == b.tasks[i].delay);
    any_differs |= a.tasks[i].delay != c.tasks[i].delay;
  }
  CHECK(any_differs);
  CHECK(with_start_jitter(p, Time::zero(), 5).tasks[0].delay == p.tasks[0].delay);

  SECTION("a task with start_jitter: false keeps its start; the others draw as before") {
    const ScenarioParams q = load_scenario_yaml_with_overlays(
        slurp(repo_path("configs/scenarios/mixed_2cpu.yaml")), "mixed_2cpu.yaml",
        {{"tasks[0].start_jitter", "false", {}}, {"tasks[0].delay", "3ms", {}}}, "");
    REQUIRE_FALSE(q.tasks[0].start_jitter);
    const ScenarioParams d = with_start_jitter(q, Time::ms(10), 5);
    CHECK(d.tasks[0].delay == Time::ms(3));
    for (size_t i = 1; i < q.tasks.size(); ++i) CHECK(d.tasks[i].delay == a.tasks[i].delay);
  }
}

TEST_CASE("every wakeup in the wake graph is one of the recorder's wakeup latency samples", "[wakegraph]") {
  std::vector<Overlay> ov{{"duration", "1s", {}}, {"warmup", "200ms", {}}};
  const ScenarioParams p = load_scenario_with_overlays(repo_path("configs/scenarios/mixed_2cpu.yaml"), ov);
  WakeGraph g;
  const RunResult r = simulate_run(p, 1, {}, &g);
  CHECK(g.runs == 1);
  std::map<std::string, uint64_t> incoming;
  for (const auto& [key, e] : g.edges) {
    CHECK(e.count == e.latency.size());
    incoming[key.second] += e.count;
  }
  for (const TaskMetrics& t : r.tasks) {
    CAPTURE(t.name);
    CHECK(incoming[t.name] == t.wakeup_latency.size());
  }
  // The mutex pair wake each other; timers wake the periodic tasks.
  CHECK(g.edges.count({"db_writer", "db_reader"}) + g.edges.count({"db_reader", "db_writer"}) > 0);
  CHECK(g.edges.count({kNoWaker, "ui_main"}) == 1);

  const std::string dot = render_wakegraph_dot({{"base", &g}});
  CHECK_THAT(dot, Catch::StartsWith("// base\ndigraph G {\n"));
  CHECK_THAT(dot, Catch::Contains("label=\"base: who wakes whom (1 run)\""));
  CHECK_THAT(dot, Catch::Contains("[label=\"ui_main\", shape=ellipse]"));
  CHECK_THAT(dot, Catch::Contains("/run\\nmean "));
}

TEST_CASE("run and compare write the wake graph as Graphviz", "[wakegraph][cli]") {
  ScratchDir dir("wakegraph_cli");
  const Cli r = run_schedlab(dir, "run " + shell_quote(repo_path("configs/scenarios/mixed_2cpu.yaml")) +
                                  " --duration 1s --runs 2 -q --wakegraph " + shell_quote((dir / "w.dot").string()));
  INFO(r.err);
  REQUIRE(r.code == 0);
  const std::string dot = slurp(dir / "w.dot");
  CHECK_THAT(dot, Catch::Contains("who wakes whom (2 runs)"));
  CHECK_THAT(dot, Catch::Contains("\"(timer/irq)\""));
  const Cli c = run_schedlab(dir, "compare " + shell_quote(small_experiment(dir, 2)) + " -q --wakegraph " +
                                  shell_quote((dir / "c.dot").string()));
  REQUIRE(c.code == 0);
  const std::string cdot = slurp(dir / "c.dot");
  CHECK_THAT(cdot, Catch::StartsWith("// on\ndigraph G {"));
  CHECK_THAT(cdot, Catch::Contains("// off\ndigraph G {"));
}

TEST_CASE("docs/experiments.md names every metric field", "[metrics][docs]") {
  const std::string doc = slurp(repo_path("docs/experiments.md"));
  for (MetricScope scope : {MetricScope::kTask, MetricScope::kCpu, MetricScope::kTotal}) {
    for (const MetricField& f : metric_fields(scope)) {
      CAPTURE(f.name);
      const size_t dot = f.name.find('.');
      if (dot == std::string::npos) {
        CHECK_THAT(doc, Catch::Contains(fmt::format("`{}`", f.name)));
      } else {  // distributions are documented as DIST.{stat,stat,...}
        CHECK_THAT(doc, Catch::Contains(fmt::format("`{}.{{", f.name.substr(0, dot))));
        CHECK_THAT(doc, Catch::Contains(f.name.substr(dot + 1)));
      }
    }
  }
}

// drm: and wq: metrics read the DRM job and work-item samples of a run:
// push_to_run of every entity of a scheduler pooled, in microseconds.
TEST_CASE("drm and wq metrics read job and work-item latencies of a run", "[compare][metrics]") {
  schedlab::RunResult r;
  r.window_start = schedlab::Time::zero();
  r.window_end = schedlab::Time::s(1);
  schedlab::DrmEntityMetrics a, b;
  a.name = "gpu0/q1";
  b.name = "gpu0/q2";
  for (int64_t v : {10000, 20000}) a.push_to_run.add(v);
  for (int64_t v : {30000, 40000}) b.push_to_run.add(v);
  a.jobs = 2;
  b.jobs = 2;
  r.drm_entities = {a, b};
  schedlab::WorkQueueMetrics w;
  w.name = "pm";
  for (int64_t v : {1000, 3000}) w.cpu_wait.add(v);
  w.runnable_wait = w.cpu_wait;
  w.exec = w.cpu_wait;
  w.items = 2;
  r.workqueues = {w};
  schedlab::RunMetrics m(r);
  auto value = [&](const std::string& text) {
    std::string why;
    auto name = schedlab::parse_metric_name(text, &why);
    INFO(why);
    REQUIRE(name);
    return m.value(*name);
  };
  CHECK(*value("drm:gpu0.push_to_run.mean") == Approx(25.0));   // (10+20+30+40)/4 us
  CHECK(*value("drm:gpu0/q1.push_to_run.max") == Approx(20.0));
  CHECK(*value("drm:gpu0.jobs") == Approx(4.0));
  CHECK(*value("wq:pm.cpu_wait.p50") == Approx(2.0));            // 1 and 3 us: P50 = 2
  CHECK_FALSE(value("wq:absent.cpu_wait.p50").has_value());      // n/a, not 0
  std::string why;
  CHECK_FALSE(schedlab::parse_metric_name("drm:gpu0.push_to_run.p100", &why));
  CHECK_THAT(why, Catch::Contains("push_to_run.p99"));
}

TEST_CASE("who pays lists the groups only another variant has", "[compare]") {
  // With WQ_HIGHPRI the work runs on a nice -20 pool the baseline does
  // not have: its kworkers are listed too, after the baseline's groups,
  // with no change but their own values ("only here"); the nice 0 pool
  // (events_unbound's work) is the same group in both.
  ScratchDir dir("compare_groups");
  const std::string scenario = (dir / "wq.yaml").string();
  write_text(scenario,
             "duration: 200ms\nplatform: {cpus: 2}\n"
             "workqueues: [{name: w, flags: [WQ_UNBOUND]}]\n"
             "tasks:\n"
             "  - name: q\n"
             "    events: [{queue_work: {wq: w, work: a, cost: 200us}},\n"
             "             {queue_work: {wq: events_unbound, work: b, cost: 100us}}, {sleep: 5ms}]\n");
  const std::string exp = (dir / "exp.yaml").string();
  write_text(exp, "name: groups\nscenario: " + scenario +
                      "\nruns: 2\nvariants:\n  - name: nice0\n  - name: highpri\n"
                      "    set:\n      workqueues[w].flags: [WQ_UNBOUND, WQ_HIGHPRI]\n"
                      "metrics: [group:q.cpu_share]\n");
  CompareOptions opt;
  opt.jobs = 2;
  const Comparison c = run_comparison(load_experiment_file(exp), opt);
  std::vector<std::string> groups;
  for (const GroupTradeoff& g : c.who_pays) groups.push_back(g.group);
  CHECK(groups == std::vector<std::string>{"q", "kworkers/unbound-nice0", "kworkers/unbound-nice-20"});
  const GroupTradeoff& hp = c.who_pays.back();
  CHECK(hp.cpu_share.cells[0].n == 0);  // the baseline has no such pool
  CHECK(hp.cpu_share.cells[1].n == 2);
  CHECK_FALSE(hp.cpu_share.cells[1].change.defined);
  // The table's row: n/a on the baseline side, the variant's own values.
  const std::string text = render_compare_report(c);
  const size_t at = text.find("kworkers/unbound-nice-20");
  REQUIRE(at != std::string::npos);
  const std::string row = text.substr(at, text.find('\n', at) - at);
  CHECK_THAT(row, Catch::Contains(" n/a "));
  CHECK_THAT(row, Catch::Contains(" (only here)"));
  CHECK_THAT(row, !Catch::Contains("none here"));
}

TEST_CASE("compare refuses a misspelt workqueue or layer or cluster or DRM or runtime PM object", "[compare][cli]") {
  // These objects come from the runs (a workqueue's row appears with its
  // first item); one that no run and no scenario has is a misspelling that
  // would read n/a in every row. The pm_wq scenario's real ones pass.
  ScratchDir dir("compare_objects");
  const std::string head = "scenario: " + repo_path("configs/scenarios/shade_swipe.yaml") +
                           "\nruns: 1\nduration: 100ms\nwarmup: 0s\nvariants: [{name: a}, {name: b}]\nmetrics:\n";
  auto compare = [&](const std::string& metric) {
    const std::string exp = (dir / "exp.yaml").string();
    write_text(exp, head + "  - " + metric + "\n");
    return run_schedlab(dir, "compare " + shell_quote(exp) + " -q -j 1");
  };
  for (const char* ok : {"wq:pm.items", "wq:events.items", "frames:NotificationShade.app_missed",
                         "rpm:ndroid.systemui.resume_waits", "rpm:ndroid.systemui/gpu.resume_waits"}) {
    CAPTURE(ok);
    const Cli r = compare(ok);
    INFO(r.err);
    CHECK(r.code == 0);
  }
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"wq:pn.items", "no workqueue 'pn' in the experiment ("},
      {"frames:NotificationShad.app_missed", "no display layer 'NotificationShad' in the experiment (NotificationShade)"},
      {"rpm:nobody.resume_waits", "no task group (or group/device) with runtime PM sleeps 'nobody'"},
      {"rpm:ndroid.systemui/gpx.resume_waits", "'ndroid.systemui/gpx'"},
      {"drm:gfx.push_to_run.p99", "no DRM scheduler or entity 'gfx' in the experiment (none)"},
      {"cluster:litle.energy_mj", "no cluster 'litle' in the experiment (little, mid, prime)"},
  };
  for (const auto& [metric, message] : bad) {
    CAPTURE(metric);
    const Cli r = compare(metric);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains(message) && Catch::Contains("exp.yaml:7:5: metrics:"));
  }
}

// The first A/B a kernel engineer tries: a nice task made SCHED_FIFO by an
// overlay. The task keeps its nice key from the scenario; the overlay sets
// it to 0, which an RT policy accepts (any other nice is an error that
// says so).
TEST_CASE("an overlay turns a nice task into a SCHED_FIFO one", "[compare][config]") {
  const std::string scenario = repo_path("configs/scenarios/mixed_2cpu.yaml");
  std::vector<Overlay> ov{{"tasks[ui_main].policy", "SCHED_FIFO", {}}, {"tasks[ui_main].priority", "1", {}}};
  CHECK_THROWS_WITH(load_scenario_with_overlays(scenario, ov),
                    Catch::Contains("tasks[0].nice") && Catch::Contains("nice: 0 is accepted"));
  ov.push_back({"tasks[ui_main].nice", "0", {}});
  const ScenarioParams p = load_scenario_with_overlays(scenario, ov);
  CHECK(p.tasks[0].name == "ui_main");
  CHECK(p.tasks[0].policy == Policy::kFifo);
  CHECK(p.tasks[0].rt_priority == 1);
  CHECK(p.tasks[0].nice == 0);
}
