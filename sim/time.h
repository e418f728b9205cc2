// Simulated time: a strong type over int64 nanoseconds (never double).
// Instants and durations share the type, as in ns-3's Time
// (src/core/model/nstime.h); arithmetic is exact and saturates nowhere, so
// callers keep values well inside +-292 years.
#pragma once

#include <compare>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace schedlab {

class Time {
 public:
  constexpr Time() = default;
  static constexpr Time ns(int64_t v) { return Time(v); }
  static constexpr Time us(int64_t v) { return Time(v * 1000); }
  static constexpr Time ms(int64_t v) { return Time(v * 1000000); }
  static constexpr Time s(int64_t v) { return Time(v * 1000000000); }
  static constexpr Time max() { return Time(std::numeric_limits<int64_t>::max()); }
  static constexpr Time zero() { return Time(0); }

  constexpr int64_t count() const { return ns_; }  // nanoseconds
  constexpr double to_us() const { return static_cast<double>(ns_) / 1e3; }
  constexpr double to_ms() const { return static_cast<double>(ns_) / 1e6; }
  constexpr double to_s() const { return static_cast<double>(ns_) / 1e9; }

  constexpr auto operator<=>(const Time&) const = default;
  constexpr Time operator+(Time o) const { return Time(ns_ + o.ns_); }
  constexpr Time operator-(Time o) const { return Time(ns_ - o.ns_); }
  constexpr Time operator-() const { return Time(-ns_); }
  constexpr Time& operator+=(Time o) { ns_ += o.ns_; return *this; }
  constexpr Time& operator-=(Time o) { ns_ -= o.ns_; return *this; }
  constexpr Time operator*(int64_t k) const { return Time(ns_ * k); }
  constexpr Time operator/(int64_t k) const { return Time(ns_ / k); }
  constexpr int64_t operator/(Time o) const { return ns_ / o.ns_; }
  constexpr Time operator%(Time o) const { return Time(ns_ % o.ns_); }

 private:
  explicit constexpr Time(int64_t v) : ns_(v) {}
  int64_t ns_ = 0;
};

constexpr Time min(Time a, Time b) { return a < b ? a : b; }
constexpr Time max(Time a, Time b) { return a < b ? b : a; }

namespace time_literals {
constexpr Time operator""_ns(unsigned long long v) { return Time::ns(static_cast<int64_t>(v)); }
constexpr Time operator""_us(unsigned long long v) { return Time::us(static_cast<int64_t>(v)); }
constexpr Time operator""_ms(unsigned long long v) { return Time::ms(static_cast<int64_t>(v)); }
constexpr Time operator""_s(unsigned long long v) { return Time::s(static_cast<int64_t>(v)); }
}  // namespace time_literals

// The longest duration an input may give, either sign: 365 days. Beyond
// any simulation, and far enough from int64 overflow in ns that sums and
// small multiples of inputs (a slice times 3, a period added to a time)
// stay exact.
inline constexpr Time kMaxInputDuration = Time::s(365LL * 24 * 3600);

// Parses a duration with an explicit unit: "3ms", "750us", "1.5s", "20ns",
// "0". A bare number other than 0 is rejected (units are explicit in YAML),
// as is one longer than kMaxInputDuration.
// Returns nullopt and fills *why on failure.
std::optional<Time> parse_duration(std::string_view text, std::string* why = nullptr);

// Parses a frequency: "120Hz", "1.8GHz", "2000MHz", "500kHz"; returns Hz.
std::optional<double> parse_frequency_hz(std::string_view text, std::string* why = nullptr);

// Formats for humans: "3.000ms", "750.000us", "12ns".
std::string format_time(Time t);

}  // namespace schedlab
