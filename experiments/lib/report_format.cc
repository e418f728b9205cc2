#include "experiments/lib/report_format.h"

#include <fmt/format.h>

#include <cmath>

#include "experiments/lib/json_writer.h"

namespace schedlab {
namespace {

std::string fixed(double v, int decimals) {
  if (!std::isfinite(v)) return {};
  return json_number(v, decimals);
}

}  // namespace

std::string seconds_text(Time t) {
  int64_t v = t.count();
  const char* sign = v < 0 ? "-" : "";
  uint64_t a = v < 0 ? static_cast<uint64_t>(-(v + 1)) + 1 : static_cast<uint64_t>(v);
  return fmt::format("{}{}.{:09d}", sign, a / 1000000000u, a % 1000000000u);
}

std::string us_text(double ns) { return fixed(ns / 1e3, kUsDecimals); }
std::string fraction_text(double v) { return fixed(v, kFractionDecimals); }
std::string pct_text(double fraction) { return fixed(fraction * 100.0, kPctDecimals); }
std::string per_run_text(double v) { return fixed(v, kPerRunDecimals); }

}  // namespace schedlab
