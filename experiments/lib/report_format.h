// Number spellings shared by the JSON and CSV reports (docs/outputs.md):
// fixed decimals, so equal input gives equal bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "sim/time.h"

namespace schedlab {

// A double with fixed decimals ("{:.Nf}", -0 as 0); empty text for NaN,
// infinities and nullopt (the JSON writer's number_text() writes null for
// it, CSV leaves the cell empty).
std::string fixed_text(double v, int decimals);
std::string fixed_text(const std::optional<double>& v, int decimals);

// Seconds from nanoseconds, exact: 9 decimals from integer arithmetic
// ("1.500000000"), never through a double.
std::string seconds_text(Time t);
// Microseconds from nanoseconds, 3 decimals ("12.500"); "null"-free: NaN and
// infinities print as empty text (the JSON writer maps them to null).
std::string us_text(double ns);
// Fractions (cpu_share) with 6 decimals, percentages and per-run means with 3.
std::string fraction_text(double v);
std::string pct_text(double fraction);
std::string per_run_text(double v);

inline constexpr int kUsDecimals = 3;
inline constexpr int kFractionDecimals = 6;
inline constexpr int kPctDecimals = 3;
inline constexpr int kPerRunDecimals = 3;

}  // namespace schedlab
