// The machine-readable report of a RunSet as JSON (docs/outputs.md lists
// every field). Deterministic: fixed key order, fixed decimals, no
// timestamps, host names or paths other than the scenario source as given.
#pragma once

#include <string>

#include "experiments/lib/aggregate.h"

namespace schedlab {

inline constexpr const char* kJsonFormat = "schedlab.run";
inline constexpr int kJsonFormatVersion = 1;

std::string render_json(const RunSet& set);

}  // namespace schedlab
