// The machine-readable report of a RunSet as JSON (docs/outputs.md lists
// every field). Deterministic: fixed key order, fixed decimals, no
// timestamps, host names or paths other than the scenario source as given.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "experiments/lib/aggregate.h"
#include "models/config/experiment_params.h"

namespace schedlab {

inline constexpr const char* kJsonFormat = "schedlab.run";
inline constexpr int kJsonFormatVersion = 1;

std::string render_json(const RunSet& set);

class JsonWriter;
// The "bootstrap" object compare and sweep files carry: `method`, the
// resample count and the confidence level.
void write_bootstrap_json(JsonWriter& w, std::string_view method);
// Under `key`, the overlays as [{"path": ..., "value": ...}] (a variant's in
// compare files, the sweep's and its variants' in sweep files).
void write_overlays_json(JsonWriter& w, std::string_view key, const std::vector<Overlay>& overlays);
// "decisions": [{kind, group, reason, count}] (--why).
void write_decisions_json(JsonWriter& w, const std::vector<DecisionCount>& decisions);

}  // namespace schedlab
