#include "experiments/lib/report_format.h"

#include <fmt/format.h>

#include <cmath>

#include "experiments/lib/json_writer.h"

namespace schedlab {

std::string fixed_text(double v, int decimals) {
  if (!std::isfinite(v)) return {};
  return json_number(v, decimals);
}

std::string fixed_text(const std::optional<double>& v, int decimals) { return v ? fixed_text(*v, decimals) : ""; }

std::string seconds_text(Time t) {
  int64_t v = t.count();
  const char* sign = v < 0 ? "-" : "";
  uint64_t a = v < 0 ? static_cast<uint64_t>(-(v + 1)) + 1 : static_cast<uint64_t>(v);
  return fmt::format("{}{}.{:09d}", sign, a / 1000000000u, a % 1000000000u);
}

std::string us_text(double ns) { return fixed_text(ns / 1e3, kUsDecimals); }
std::string fraction_text(double v) { return fixed_text(v, kFractionDecimals); }
std::string pct_text(double fraction) { return fixed_text(fraction * 100.0, kPctDecimals); }
std::string per_run_text(double v) { return fixed_text(v, kPerRunDecimals); }

}  // namespace schedlab
