// The report of a RunSet as one CSV table (RFC 4180; docs/outputs.md lists
// every column). One row per task, task group and CPU (`kind`); aggregate
// rows have run = "all", and with more than one run each run adds its own
// task and cpu rows (run = 0, 1, ...). Cells that do not apply to a row's
// kind are empty. The header is fixed: columns are only ever appended.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "experiments/lib/aggregate.h"

namespace schedlab {

// The header, in order.
std::span<const std::string_view> csv_columns();
std::string render_csv(const RunSet& set);
// One field, quoted when it holds a comma, quote, CR or LF.
std::string csv_field(std::string_view s);

}  // namespace schedlab
