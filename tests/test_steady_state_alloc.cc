// The hot loop does not allocate: every shipped scenario, once warm, runs
// on with no heap allocation. Measured before the recorder's window opens
// (the scenario's warm-up is moved past the end), so the latency samples'
// storage, which grows with the window by design, is not what is counted.
// Warm-up: long enough for every queue to have reached its longest length.
// A window in which a task is created (a kworker forked later: a real fork
// allocates, as it should) is left out.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "alloc_counter.h"
#include "models/config/config.h"
#include "models/kernel/kernel.h"
#include "models/system.h"

using namespace schedlab;
using schedlab::testing::AllocationCounter;

TEST_CASE("Every shipped scenario, once warm, runs without allocating", "[alloc]") {
  const Time warm = Time::s(6), measured = Time::s(3);
  std::vector<std::filesystem::path> scenarios;
  for (const auto& e : std::filesystem::directory_iterator(std::string(SCHEDLAB_SOURCE_DIR) + "/configs/scenarios"))
    if (e.path().extension() == ".yaml") scenarios.push_back(e.path());
  std::sort(scenarios.begin(), scenarios.end());
  REQUIRE(scenarios.size() >= 10);
  for (const auto& path : scenarios) {
    INFO(path.filename().string());
    ScenarioParams p = load_scenario_file(path.string());
    p.duration = warm + measured + Time::s(1);
    p.warmup = p.duration;  // the recorder's window never opens
    System sys(p, 1);
    sys.kernel().run_until(warm);
    // Six half-second windows; one in which a task was created (a
    // workqueue pool forking a kworker: a real fork allocates) is not
    // counted, and at least one window must be.
    int counted = 0;
    for (int w = 0; w < 6; ++w) {
      const size_t tasks_before = sys.kernel().tasks().size();
      const uint64_t events_before = sys.kernel().sim().events_dispatched();
      uint64_t allocations = 0;
      {
        AllocationCounter counter;
        sys.kernel().run_until(warm + measured * (w + 1) / 6);
        allocations = counter.count();
      }
      CHECK(sys.kernel().sim().events_dispatched() > events_before);  // it did run
      if (sys.kernel().tasks().size() != tasks_before) continue;
      ++counted;
      INFO("window " << w);
      CHECK(allocations == 0);
    }
    CHECK(counted >= 1);
  }
}

TEST_CASE("Groups on eight CPUs, once warm, run without allocating", "[alloc][cgroup]") {
  // configs/experiments/cgroups_gs101.yaml's aosp_groups variant: the
  // leaf-list walks, the balancer's descent through group entities and
  // the shares run in the hot loop too.
  const ExperimentSpec e =
      load_experiment_file(std::string(SCHEDLAB_SOURCE_DIR) + "/configs/experiments/cgroups_gs101.yaml");
  const auto v = std::find_if(e.variants.begin(), e.variants.end(),
                              [](const VariantSpec& x) { return x.name == "aosp_groups"; });
  REQUIRE(v != e.variants.end());
  ScenarioParams p = load_scenario_with_overlays(e.scenario, v->overlays, v->name);
  REQUIRE(p.kernel.cgroups.size() == 3);
  const Time warm = Time::s(6), measured = Time::s(2);
  p.duration = warm + measured + Time::s(1);
  p.warmup = p.duration;
  System sys(p, 1);
  sys.kernel().run_until(warm);
  const uint64_t events_before = sys.kernel().sim().events_dispatched();
  uint64_t allocations = 0;
  {
    AllocationCounter counter;
    sys.kernel().run_until(warm + measured);
    allocations = counter.count();
  }
  CHECK(sys.kernel().sim().events_dispatched() > events_before);
  CHECK(allocations == 0);
}
