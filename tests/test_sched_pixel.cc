// sched_pixel, the Pixel vendor cpufreq governor (drivers/soc/google/vh/
// kernel/sched/cpufreq_gov.c of the gs101 5.10 tree; model:
// models/kernel/cpufreq/sched_pixel.h), on the gs101 Cortex-X1 OPP table:
// its two rate limits, its margin after uclamp, its FIFO kthread and its
// iowait rule. Every expectation is hand-computed beside it.
#include <catch2/catch.hpp>

#include <vector>

#include "models/kernel/cpufreq/sched_pixel.h"
#include "tests/cpufreq_test_util.h"
#include "tests/sched_test_util.h"

using namespace schedlab;
using namespace schedlab::testing;
using namespace schedlab::time_literals;

namespace {

// gs101's big-cluster tunables (init.gs101.rc): up 500 us, down 20 ms.
GovernorParams pixel_params(unsigned scale_pow = 1) {
  GovernorParams g;
  g.up_rate_limit = 500_us;
  g.down_rate_limit = 20_ms;
  g.down_rate_limit_scale_pow = scale_pow;
  return g;
}

// A two-CPU policy (the shared path: no single-CPU busy hold), CPU 1 idle.
struct Pair {
  SchedPixelGovernor g;
  explicit Pair(const GovernorParams& params) : g(params) { g.start(x1_policy(2), Time::zero()); }
  std::optional<uint64_t> at(Time now, uint64_t util0) {
    const std::vector<CpuUtil> u{cfs(util0), cfs(0)};
    return g.update_util(0, u, now);
  }
};

}  // namespace

TEST_CASE("sched_pixel maps util x util_threshold / 1024 to the lowest OPP at or above", "[cpufreq][sched_pixel]") {
  auto first = [](uint64_t margin, uint64_t util) {
    GovernorParams gp = pixel_params();
    gp.capacity_margin = margin;
    Pair p(gp);
    return p.at(Time::zero(), util);
  };
  // 1280: (2802000 x 1280 >> 10) = 3502500; x 400 / 1024 = 1368164 -> 1426000.
  CHECK(first(1280, 400) == 1426000u);
  // 1100 (powerhint's CAMERA_STREAMING_HIGH): 2802000 x 1100 >> 10 = 3009960;
  // x 400 / 1024 = 1175765 -> 1277000.
  CHECK(first(1100, 400) == 1277000u);
  // 1024: no headroom: 2802000 x 400 / 1024 = 1094531 -> 1106000.
  CHECK(first(1024, 400) == 1106000u);
  // util 1024: 3502500 -> clamped to the policy max, 2802000.
  CHECK(first(1280, 1024) == 2802000u);
}

TEST_CASE("sched_pixel raises after up_rate_limit and cuts after down_rate_limit x f_new / f_old", "[cpufreq][sched_pixel]") {
  Pair p(pixel_params(1));
  CHECK(p.g.min_rate_limit() == 500_us);  // min(up, down)
  // t = 0: util 100 -> 3502500 x 100 / 1024 = 342041 -> 500000 (the limits
  // change of start() skips the rate limits).
  CHECK(p.at(Time::zero(), 100) == 500000u);
  // 300 us later util 400 asks 1426000: not evaluated before min(up, down).
  CHECK(p.at(300_us, 400) == std::nullopt);
  // At 500 us: a raise, allowed once up_rate_limit (500 us) has passed.
  CHECK(p.at(500_us, 400) == 1426000u);
  // A cut to 500000 waits 20 ms x 500000 / 1426000: delta x 1426000 >=
  // 20e6 x 500000 = 1e13, delta >= 7012623 ns, i.e. at 7.5126 ms. A held
  // request leaves the window where it was.
  CHECK(p.at(1_ms, 100) == std::nullopt);
  CHECK(p.at(7500_us, 100) == std::nullopt);  // 7.0e6 x 1426000 = 9.98e12 < 1e13
  CHECK(p.g.next_freq() == 1426000u);
  CHECK(p.at(7520_us, 100) == 500000u);       // 7.02e6 x 1426000 = 1.001e13
}

TEST_CASE("sched_pixel's down_rate_limit_scale_pow 2 lets a deep cut through sooner", "[cpufreq][sched_pixel]") {
  Pair p(pixel_params(2));
  CHECK(p.at(Time::zero(), 100) == 500000u);
  CHECK(p.at(500_us, 400) == 1426000u);
  // comp = 20e6 x 500000 = 1e13; / 1426000 (integer: 7012622) x 500000 =
  // 3506311000000; allowed when delta x 1426000 >= that: delta >= 2458844
  // ns after 500 us, at 2.9588 ms (with scale_pow 1: 7.5126 ms).
  CHECK(p.g.rate_limited(2950_us, 500000));   // 2.45e6 x 1426000 = 3.494e12
  CHECK(!p.g.rate_limited(2960_us, 500000));  // 2.46e6 x 1426000 = 3.508e12
  CHECK(p.at(2950_us, 100) == std::nullopt);
  CHECK(p.at(2960_us, 100) == 500000u);
  // A shallow cut waits longer: 1426000 -> 1277000 (util 370: 3502500 x
  // 370 / 1024 = 1265551) needs delta >= 20 ms x (1277000 / 1426000)^2.
  Pair q(pixel_params(2));
  q.at(Time::zero(), 100);
  q.at(500_us, 400);
  CHECK(q.g.rate_limited(16_ms, 1277000));   // 15.5 ms < ~16.04 ms
  CHECK(!q.g.rate_limited(17_ms, 1277000));  // 16.5 ms
}

TEST_CASE("a limits change lets sched_pixel's next update skip both rate limits", "[cpufreq][sched_pixel]") {
  Pair p(pixel_params());
  CHECK(p.at(Time::zero(), 400) == 1426000u);
  CHECK(p.at(1_ms, 100) == std::nullopt);  // a cut within 20 ms x 500/1426
  CHECK(p.g.set_limits(0, 0, 1_ms) == std::nullopt);  // fast switch: nothing clamped now
  CHECK(p.at(1_ms, 100) == 500000u);
}

TEST_CASE("sched_pixel adds its margin after uclamp: a uclamp_min of X asks 1.25 X", "[cpufreq][sched_pixel]") {
  GovernorParams gp = pixel_params();
  gp.uclamp_used = true;
  SchedPixelGovernor g(gp);
  g.start(x1_policy(1), Time::zero());
  CpuUtil u = cfs(50);
  u.uclamp_min = 300;
  const std::vector<CpuUtil> us{u};
  // 5.10: util clamped to 300, then 3502500 x 300 / 1024 = 1026123 ->
  // 1106000. (6.12 schedutil: max(300, 1.25 x 50) = 300 -> 851000.)
  CHECK(g.update_util(0, us, Time::zero()) == 1106000u);
  CHECK(g.raw_freq() == 1026123u);
}

TEST_CASE("a runnable RT task sends sched_pixel to fmax only while uclamp is unused", "[cpufreq][sched_pixel]") {
  for (const bool uclamp : {false, true}) {
    CAPTURE(uclamp);
    GovernorParams gp = pixel_params();
    gp.uclamp_used = uclamp;
    SchedPixelGovernor g(gp);
    g.start(x1_policy(1), Time::zero());
    CpuUtil u = cfs(100);
    u.rt_runnable = true;
    const std::vector<CpuUtil> us{u};
    CHECK(g.update_util(0, us, Time::zero()) == (uclamp ? 500000u : 2802000u));
  }
}

TEST_CASE("a shared sched_pixel policy follows its busiest CPU", "[cpufreq][sched_pixel]") {
  SchedPixelGovernor g(pixel_params());
  g.start(x1_policy(2), Time::zero());
  const std::vector<CpuUtil> us{cfs(100), cfs(400)};
  CHECK(g.update_util(0, us, Time::zero()) == 1426000u);  // CPU 1's 400
  CHECK(g.cpu_util(0) == 100u);
  CHECK(g.cpu_util(1) == 400u);
}

TEST_CASE("sched_pixel keeps a single CPU's frequency until that CPU has been idle", "[cpufreq][sched_pixel]") {
  SchedPixelGovernor g(pixel_params());
  g.start(x1_policy(1), Time::zero());
  auto at = [&](Time now, uint64_t util, uint64_t idle_calls) {
    const std::vector<CpuUtil> us{cfs(util, idle_calls)};
    return g.update_util(0, us, now);
  };
  CHECK(at(Time::zero(), 400, 0) == 1426000u);  // after the limits change: no hold
  CHECK(at(30_ms, 100, 0) == std::nullopt);     // not idle since: held
  CHECK(at(60_ms, 100, 1) == 500000u);          // idle since
}

TEST_CASE("sched_pixel's rate limits default to the policy's transition delay", "[cpufreq][sched_pixel]") {
  GovernorParams gp;  // no tunables: sugov_init()'s defaults
  gp.transition_delay = TransitionDelayRule::kLatencyX1000Cap10ms;
  SchedPixelGovernor g(gp);
  g.start(x1_policy(1), Time::zero());
  CHECK(g.up_rate_delay() == 10_ms);  // 500 us x 1000, capped at 10 ms
  CHECK(g.down_rate_delay() == 10_ms);
  GovernorParams bad;
  bad.down_rate_limit_scale_pow = 0;
  CHECK_THROWS_AS(SchedPixelGovernor(bad), std::invalid_argument);
}

// In the kernel model: the toy platform's little policy without fast
// switch. sched_pixel's sugov:0 is SCHED_FIFO 50 (schedutil's is
// SCHED_DEADLINE), does the driver's work and the time adds up.
TEST_CASE("sched_pixel's slow path switches through a SCHED_FIFO 50 sugov:N kthread", "[biglittle][cpufreq][sched_pixel]") {
  ScenarioParams p = exact_scenario("6.12", 250);
  p.platform = toy_big_little("sched_pixel");
  for (ClusterParams& c : p.platform.clusters) {
    c.up_rate_limit = 500_us;
    c.down_rate_limit = 500_us;
  }
  ClusterParams& little = p.platform.clusters[0];
  little.fast_switch = false;
  little.slow_switch_work = 10_us;
  little.transition_latency = 100_us;
  // w starts at half the CPU's util (post_init_entity_util_avg()), which
  // asks the top OPP; as its util decays to its duty cycle the policy comes
  // down to 500 MHz, through the kthread.
  p.duration = 300_ms;
  p.tasks = {on_cpus(task("w", {ev_run(100_us), ev_sleep(5_ms)}), {0})};
  {
    System sys(p, 1);
    Task& sugov = find_task(sys.kernel(), "sugov:0");
    CHECK(sugov.policy == Policy::kFifo);
    CHECK(sugov.rt_priority == 50);
    // Mainline EAS stands in for the vendor module's placement.
    CHECK(sys.kernel().sched_energy_enabled());
  }
  const RunResult r = run_result(p);
  check_conservation(r, &p.platform);
  const auto it = std::find_if(r.tasks.begin(), r.tasks.end(), [](const auto& t) { return t.name == "sugov:0"; });
  REQUIRE(it != r.tasks.end());
  CHECK(it->cpu_time > Time::zero());
  CHECK(busy_at(r, 0, 0) > Time::zero());  // w ran at 500 MHz
}
