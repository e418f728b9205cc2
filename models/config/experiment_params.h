// Experiments and sweeps, typed: what models/config builds from
// configs/experiments/*.yaml and configs/sweeps/*.yaml, and what the
// experiment engine (experiments/lib) runs. Plain data, no YAML: an
// overlay's value is kept as YAML text and only models/config parses it.
//
// An experiment variant, a sweep point and the duration/warmup overrides
// are all the same thing: a list of overlays (key path -> value) applied to
// the base scenario's YAML tree before it is loaded (design.md: "one
// mechanism for all three").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/time.h"

namespace schedlab {

// Where something was written, for messages ("file:line:column").
struct SourcePos {
  std::string file;
  int line = 0, column = 0;  // 1-based; 0 when unknown
};

// One key path set to one value: `kernel.features.RUN_TO_PARITY: false`,
// `tasks[ui_main].nice: -5` (a list element by its `name`), `tasks[0].cpus: [1]`
// (by index). `value` is YAML text in flow style ("false", "-5", "[1]").
struct Overlay {
  std::string path;
  std::string value;
  SourcePos origin;  // the experiment or sweep file line that set it
};

struct VariantSpec {
  std::string name;
  std::string description;
  std::vector<Overlay> overlays;
  SourcePos origin;
};

// A metric as the user named it ("task:ui_main.wakeup_latency.p99"); the
// engine parses and expands it (experiments/lib/metrics.h).
struct MetricRequest {
  std::string name;
  SourcePos origin;
};

// A published figure to print beside the simulated one, as written ("1,867 us").
struct PublishedValue {
  std::string metric, variant, text;
  SourcePos origin;
};

// One value of a swept key path: its YAML text and, for numbers and
// durations, a number (durations in seconds) used by fits and plots.
struct AxisValue {
  std::string text;
  std::optional<double> number;
};

struct SweepAxis {
  std::string path;
  std::vector<AxisValue> values;
  bool duration = false;  // values are durations (number = seconds)
  SourcePos origin;
};

// An experiment (compare) or a sweep. A sweep's points are
// variants x cartesian product of `grid` (first axis slowest).
struct ExperimentSpec {
  std::string source;          // the experiment/sweep file as given
  std::string name;            // `name`, else the file's stem
  std::string description;
  std::string scenario;        // the base scenario, resolved against the file's directory
  std::string scenario_as_written;
  int runs = 10;               // replications per variant (per point)
  uint64_t seed = 1;           // base seed: run i uses derive_seed(seed, i) in every variant
  std::optional<Time> duration, warmup;  // also present in `common` as overlays
  Time start_jitter = Time::zero();      // per-run random start delay of each task, [0, jitter)
  SourcePos start_jitter_origin;         // where the file sets it (for check_start_jitter())
  std::vector<Overlay> common;           // applied to every variant first (duration, warmup, `set`)
  // `--set-file` files, in order, and their overlays (also at the end of
  // `common`): reports name them, so a what-if's output says it is one.
  struct SetFile {
    std::string file;
    std::vector<Overlay> overlays;
  };
  std::vector<SetFile> set_files;
  std::vector<VariantSpec> variants;     // variants[0] is the baseline
  std::vector<MetricRequest> metrics;    // empty: the engine's defaults
  std::vector<PublishedValue> published;
  std::vector<SweepAxis> grid;           // sweeps only
};

}  // namespace schedlab
