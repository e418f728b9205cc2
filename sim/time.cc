#include "sim/time.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>

namespace schedlab {
namespace {

// Splits "1.5ms" into number and unit; the number is parsed exactly as an
// integer part and up to 9 fractional digits so "0.1ms" is 100000 ns, not
// 99999.99... through double rounding. Further digits are dropped: nine is
// already below a nanosecond for every unit, and keeping more would overflow
// frac_num * scale (up to 1e9 * 1e9 < 2^63 with nine).
bool split_number(std::string_view text, bool& negative, int64_t& int_part, int64_t& frac_num,
                  int64_t& frac_den, std::string_view& unit, bool* overflowed = nullptr) {
  if (overflowed) *overflowed = false;
  size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  negative = false;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) {
    negative = text[i] == '-';
    ++i;
  }
  size_t digits_start = i;
  int_part = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    const int digit = text[i] - '0';
    // More than int64 holds: with `overflowed` the caller can say "too
    // large" (the rest of the number is still read), else not a number.
    if (int_part > (std::numeric_limits<int64_t>::max() - digit) / 10) {
      if (!overflowed) return false;
      *overflowed = true;
    } else if (!(overflowed && *overflowed)) {
      int_part = int_part * 10 + digit;
    }
    ++i;
  }
  bool any_digit = i > digits_start;
  frac_num = 0;
  frac_den = 1;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      if (frac_den < 1000000000LL) {
        frac_num = frac_num * 10 + (text[i] - '0');
        frac_den *= 10;
      }
      any_digit = true;
      ++i;
    }
  }
  if (!any_digit) return false;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  size_t unit_start = i;
  size_t end = text.size();
  while (end > unit_start && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  unit = text.substr(unit_start, end - unit_start);
  return true;
}

}  // namespace

static std::string too_large(std::string_view text) {
  return fmt::format("'{}' is too large (at most 365 days, {}s)", text, kMaxInputDuration.count() / 1000000000);
}

std::optional<Time> parse_duration(std::string_view text, std::string* why) {
  bool negative;
  int64_t ip, fn, fd;
  std::string_view unit;
  bool overflowed = false;
  if (!split_number(text, negative, ip, fn, fd, unit, &overflowed)) {
    if (why) *why = fmt::format("'{}' is not a duration (expected a number with a unit: ns, us, ms, s)", text);
    return std::nullopt;
  }
  if (overflowed) {
    if (why) *why = too_large(text);
    return std::nullopt;
  }
  int64_t scale;
  if (unit == "ns") scale = 1;
  else if (unit == "us") scale = 1000;
  else if (unit == "ms") scale = 1000000;
  else if (unit == "s") scale = 1000000000;
  else if (unit.empty() && ip == 0 && fn == 0) scale = 1;
  else {
    if (why) {
      if (unit.empty())
        *why = fmt::format("'{}' has no unit (expected one of: ns, us, ms, s)", text);
      else
        *why = fmt::format("'{}' has unknown unit '{}' (expected one of: ns, us, ms, s)", text, unit);
    }
    return std::nullopt;
  }
  const int64_t frac = (fn * scale) / fd;  // < scale, no overflow (see split_number)
  if (ip > (std::numeric_limits<int64_t>::max() - frac) / scale) {
    if (why) *why = too_large(text);
    return std::nullopt;
  }
  int64_t v = ip * scale + frac;
  // Digits below a nanosecond are truncated; a non-zero value that would
  // truncate to nothing (0.5ns) is refused rather than read as 0.
  if (v == 0 && fn != 0) {
    if (why) *why = fmt::format("'{}' is below the simulator's 1 ns resolution", text);
    return std::nullopt;
  }
  if (v > kMaxInputDuration.count()) {
    if (why) *why = too_large(text);
    return std::nullopt;
  }
  return Time::ns(negative ? -v : v);
}

std::optional<double> parse_frequency_hz(std::string_view text, std::string* why) {
  bool negative;
  int64_t ip, fn, fd;
  std::string_view unit;
  if (!split_number(text, negative, ip, fn, fd, unit) || negative) {
    if (why) *why = fmt::format("'{}' is not a frequency (expected a number with a unit: Hz, kHz, MHz, GHz)", text);
    return std::nullopt;
  }
  double scale;
  if (unit == "Hz") scale = 1;
  else if (unit == "kHz") scale = 1e3;
  else if (unit == "MHz") scale = 1e6;
  else if (unit == "GHz") scale = 1e9;
  else {
    if (why)
      *why = fmt::format("'{}' has {} (expected one of: Hz, kHz, MHz, GHz)", text,
                         unit.empty() ? std::string("no unit") : fmt::format("unknown unit '{}'", unit));
    return std::nullopt;
  }
  return (static_cast<double>(ip) + static_cast<double>(fn) / static_cast<double>(fd)) * scale;
}

std::string format_time(Time t) {
  int64_t v = t.count();
  int64_t a = v < 0 ? -v : v;
  if (a >= 1000000000) return fmt::format("{:.3f}s", t.to_s());
  if (a >= 1000000) return fmt::format("{:.3f}ms", t.to_ms());
  if (a >= 1000) return fmt::format("{:.3f}us", t.to_us());
  return fmt::format("{}ns", v);
}

}  // namespace schedlab
