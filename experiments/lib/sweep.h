// `schedlab sweep` and `schedlab merge`.
//
// A sweep's points are variants x the cartesian product of its grid (first
// key slowest); each point is replicated `runs` times with the seeds
// derive_seed(seed, run), the same at every point (common random numbers:
// differences between points are not blurred by different jitter draws).
//
// Output folder (docs/experiments.md documents every file and column):
//   manifest.json     the sweep: axes, variants, points, metrics, and a key
//                     (hash of these settings, not of the paths' spelling,
//                     and of the scenario's text)
//   points/<id>.json  one per point, written atomically when its runs are
//                     done: the per-run metric values, exact (and with
//                     --why each run's decision counts)
//   runs.csv, points.csv, sensitivity.csv, sweep.json
//                     (and decisions.csv with --why)
//                     aggregates, always computed from the point files, so
//                     a resumed or merged sweep writes the same bytes
//   shard.json        only in a shard's folder (which slice it holds)
//
// Resume: re-running into the same folder keeps every point file whose key
// and runs match and runs only the rest. Shards: `--shard i/N` runs the
// (point, run) jobs whose index point*runs + run is i mod N and writes only
// point files (with that slice's runs); `merge` unions the shards' runs
// into full point files and writes the aggregates: the same bytes, file for
// file, as one unsharded sweep.
#pragma once

#include <functional>
#include <optional>
#include <string_view>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "experiments/lib/model_version.h"
#include "experiments/lib/sensitivity.h"
#include "models/config/experiment_params.h"
#include "models/kernel/decisions.h"
#include "sim/time.h"

namespace schedlab {

// An output folder that cannot be used (another sweep's, incomplete shards,
// a damaged manifest). The CLI exits with 2.
class SweepError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SweepManifest {
  struct Variant {
    std::string name;
    std::vector<Overlay> overlays;
  };
  struct Point {
    std::string id;              // "p000012"
    size_t variant = 0;
    std::vector<size_t> values;  // index into each axis's values
  };
  std::string key;  // 16 hex digits
  std::string name, source, scenario;
  int runs = 1;
  uint64_t base_seed = 1;
  Time start_jitter = Time::zero();
  std::optional<Time> duration, warmup;
  std::vector<Overlay> common;         // duration, warmup, `set`
  std::vector<std::string> metrics;    // as requested (wildcards unexpanded)
  bool why = false;                    // runs count the kernel's decisions (--why)
  std::vector<SweepAxis> axes;
  std::vector<Variant> variants;
  std::vector<Point> points;

  // Every overlay of a point: common, the variant's, then its grid values.
  std::vector<Overlay> overlays_of(const Point& p) const;
  // The text of a point's value on axis `a` ("-10").
  const std::string& value_text(const Point& p, size_t a) const { return axes[a].values[p.values[a]].text; }
  // "tasks[ui_main].nice=-10, kernel.hz=1000" (the variant is named separately).
  std::string label_of(const Point& p) const;
  // "rtp_off: tasks[ui_main].nice=-10" (the variant alone without axes).
  std::string describe(const Point& p) const;
};

// The sweep a spec describes; `scenario_text` (the base scenario file's
// bytes; run_sweep re-keys with its platform files' too,
// sweep_inputs_text()) and `model` (the build's model_source_hash()) enter
// the key, so editing the scenario or rebuilding a changed model invalidates old
// points; the file paths do not (./x.yaml and /abs/x.yaml are the same
// sweep). `why` (--why) enters it too: points counted with decisions and
// points without are different sweeps.
SweepManifest make_manifest(const ExperimentSpec& spec, const std::string& scenario_text,
                            std::string_view model = model_source_hash(), bool why = false);
// `scenario_text` followed by the text of each distinct platform file the
// points of `m` load (scenario_platform_file()): what run_sweep keys the
// manifest by, so editing configs/platforms/gs101.yaml invalidates a sweep
// on gs101 as editing its scenario does.
std::string sweep_inputs_text(const SweepManifest& m, const std::string& scenario_text);
std::string render_manifest(const SweepManifest& m);
SweepManifest parse_manifest(const std::string& text, const std::string& file);  // throws SweepError

// The metric values of one run of one point, in expansion order.
struct RunRecord {
  int run = 0;
  std::vector<std::pair<std::string, std::optional<double>>> values;
  std::vector<DecisionCount> decisions;  // --why only, in report order
};
struct PointRecord {
  std::vector<RunRecord> runs;  // by run index
};
std::string render_point(const SweepManifest& m, const SweepManifest::Point& p, const PointRecord& rec);
// nullopt (and *why) for a file that is not a valid point of this sweep.
std::optional<PointRecord> parse_point(const std::string& text, const std::string& file, const SweepManifest& m,
                                       const SweepManifest::Point& p, std::string* why);

struct SweepOptions {
  int jobs = 1;
  std::string out;
  int shard = 0, shards = 1;  // this run is shard `shard` of `shards` (0-based)
  bool why = false;           // count the kernel's decisions by reason in every run
  bool progress = false;      // report progress on stderr
  bool tty = false;           // ... as a bar (else plain lines)
  // Each distinct warning of loading the points' scenarios, before any run.
  std::function<void(const std::string&)> warning;
  bool strict = false;  // --strict: a warning stops the command before any run
};

// The aggregate of a complete sweep, as written to the folder.
struct PointStats {
  std::string metric;
  int n = 0;
  double mean = 0, sd = 0, min = 0, max = 0;
  std::optional<std::pair<double, double>> ci;  // 95% bootstrap interval of the mean
};
struct SensitivityRow {
  std::string variant, metric;
  SensitivityFit fit;
};
struct SweepSummary {
  SweepManifest manifest;
  std::string out;
  size_t runs_done = 0, points_skipped = 0, points_written = 0;
  bool complete = false;                          // aggregates written (unsharded or merged)
  std::vector<std::string> metric_names;          // expanded, in first-seen order
  std::vector<std::vector<PointStats>> stats;     // [point][metric] (metric_names order)
  std::vector<SensitivityRow> sensitivity;
  std::vector<std::vector<DecisionCount>> decisions;  // [point], summed over its runs (--why)
};

// Runs (or resumes) a sweep into options.out. Throws ConfigError,
// ModelError, SweepError, OutputError.
SweepSummary run_sweep(const ExperimentSpec& spec, const SweepOptions& options);
// Combines shard folders into `out`. Throws SweepError, OutputError.
SweepSummary merge_sweeps(const std::vector<std::string>& dirs, const std::string& out);

// The terminal summary: what ran, the per-point means, the sensitivities.
std::string render_sweep_summary(const SweepSummary& s);

// "3/8" -> {3, 8}; nullopt for anything else (0 <= i < N).
std::optional<std::pair<int, int>> parse_shard(const std::string& text);

}  // namespace schedlab
