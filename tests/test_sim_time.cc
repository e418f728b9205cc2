// Simulated time: literals, arithmetic, parsing of durations and
// frequencies from configuration text, and formatting for humans.
#include <catch2/catch.hpp>

#include <string>

#include "sim/time.h"

using namespace schedlab;
using namespace schedlab::time_literals;

TEST_CASE("Time literals and factories count whole nanoseconds", "[time]") {
  CHECK((3_ms).count() == 3000000);
  CHECK((750_us).count() == 750000);
  CHECK((2_s).count() == 2000000000);
  CHECK((12_ns).count() == 12);
  CHECK(Time::ms(3) == 3_ms);
  CHECK(Time::zero().count() == 0);
  CHECK(Time().count() == 0);
}

TEST_CASE("Time arithmetic is exact integer arithmetic", "[time]") {
  CHECK(1_ms + 500_us == Time::us(1500));
  CHECK(1_ms - 1_ns == Time::ns(999999));
  CHECK(-(3_ms) == Time::ns(-3000000));
  CHECK(4_ms * 3 == 12_ms);
  CHECK(10_ms / 4 == Time::us(2500));
  CHECK(10_ms / 3_ms == 3);
  CHECK(10_ms % 3_ms == 1_ms);
  Time t = 1_ms;
  t += 2_ms;
  CHECK(t == 3_ms);
  t -= 500_us;
  CHECK(t == 2500_us);
  CHECK(min(1_ms, 2_ms) == 1_ms);
  CHECK(max(1_ms, 2_ms) == 2_ms);
  CHECK(999_us < 1_ms);
  CHECK(Time::max() > 1000000_s);
}

TEST_CASE("Time converts to fractional units for reporting", "[time]") {
  CHECK((1500_us).to_ms() == 1.5);
  CHECK((1500_ns).to_us() == 1.5);
  CHECK((2500_ms).to_s() == 2.5);
}

TEST_CASE("parse_duration accepts a number with an explicit unit", "[time][parse]") {
  CHECK(parse_duration("3ms") == Time::ns(3000000));
  CHECK(parse_duration("750us") == Time::ns(750000));
  CHECK(parse_duration("1.5s") == Time::ns(1500000000));
  CHECK(parse_duration("20ns") == Time::ns(20));
  CHECK(parse_duration("2s") == Time::ns(2000000000));
}

TEST_CASE("parse_duration reads decimal fractions exactly, without double rounding", "[time][parse]") {
  // 0.1 has no exact binary representation; 0.1 * 1e6 through double would
  // risk 99999 ns. The parser works in integers.
  auto t = parse_duration("0.1ms");
  REQUIRE(t.has_value());
  CHECK(t->count() == 100000);
  CHECK(parse_duration("0.3ms")->count() == 300000);
  CHECK(parse_duration("2.675us")->count() == 2675);
  CHECK(parse_duration(".5ms")->count() == 500000);
  CHECK(parse_duration("0.000000001s")->count() == 1);
  // Digits below a nanosecond are truncated, never rounded up.
  CHECK(parse_duration("1.9ns")->count() == 1);
  // ... but a non-zero value below 1 ns is not silently 0.
  std::string why;
  CHECK_FALSE(parse_duration("0.5ns", &why));
  CHECK(why == "'0.5ns' is below the simulator's 1 ns resolution");
  CHECK(parse_duration("0.0s") == Time::zero());
}

TEST_CASE("parse_duration keeps long fractions from overflowing", "[time][parse]") {
  // Twelve fractional digits of seconds: the fraction times 1e9 would not
  // fit in int64 if every digit were kept; the parser keeps nanoseconds.
  auto t = parse_duration("1.999999999999s");
  REQUIRE(t.has_value());
  CHECK(t->count() == 1999999999);
}

TEST_CASE("parse_duration accepts zero without a unit", "[time][parse]") {
  CHECK(parse_duration("0") == Time::zero());
  CHECK(parse_duration("0ms") == Time::zero());
}

TEST_CASE("parse_duration tolerates surrounding and inner whitespace and signs", "[time][parse]") {
  CHECK(parse_duration(" 3ms ") == 3_ms);
  CHECK(parse_duration("3 ms") == 3_ms);
  CHECK(parse_duration("-2us") == Time::ns(-2000));
  CHECK(parse_duration("+2us") == Time::ns(2000));
}

TEST_CASE("parse_duration rejects a bare non-zero number and says units are needed", "[time][parse]") {
  std::string why;
  CHECK_FALSE(parse_duration("5", &why).has_value());
  CHECK_THAT(why, Catch::Contains("no unit"));
  CHECK_THAT(why, Catch::Contains("ns, us, ms, s"));
}

TEST_CASE("parse_duration rejects an unknown unit and names the valid ones", "[time][parse]") {
  std::string why;
  CHECK_FALSE(parse_duration("3 parsecs", &why).has_value());
  CHECK_THAT(why, Catch::Contains("unknown unit 'parsecs'"));
  CHECK_THAT(why, Catch::Contains("ns, us, ms, s"));

  why.clear();
  CHECK_FALSE(parse_duration("3Ms", &why).has_value());  // units are case-sensitive
  CHECK_THAT(why, Catch::Contains("unknown unit 'Ms'"));
}

TEST_CASE("parse_duration rejects text that is not a number and names the valid units", "[time][parse]") {
  std::string why;
  CHECK_FALSE(parse_duration("abc", &why).has_value());
  CHECK_THAT(why, Catch::Contains("'abc'"));
  CHECK_THAT(why, Catch::Contains("ns, us, ms, s"));
  CHECK_FALSE(parse_duration("").has_value());
  CHECK_FALSE(parse_duration("ms").has_value());
  CHECK_FALSE(parse_duration(".ms").has_value());
}

TEST_CASE("parse_duration rejects values too large for int64 nanoseconds, and beyond 365 days", "[time][parse]") {
  std::string why;
  // 2^63 ns is about 9223372036.85 s.
  CHECK_FALSE(parse_duration("9223372037s", &why).has_value());
  CHECK_THAT(why, Catch::Contains("too large"));
  // The integer part fits but adding the fraction would not.
  CHECK_FALSE(parse_duration("9223372036.9s").has_value());
  // These fit int64 nanoseconds, but a sum of two would not: inputs stop at
  // 365 days (kMaxInputDuration), which stays exact through the model's
  // sums and small multiples.
  for (const char* big : {"9223372036.854775807s", "9223372036854775807ns", "9223372036854775808ns",
                          "99999999999999999999s", "31536000.000000001s", "-31536001s"}) {
    std::string why;
    CHECK_FALSE(parse_duration(big, &why));
    CHECK(why == std::string("'") + big + "' is too large (at most 365 days, 31536000s)");
  }
  CHECK(parse_duration("31536000s") == kMaxInputDuration);
  CHECK(parse_duration("-31536000s") == Time::zero() - kMaxInputDuration);
  CHECK(kMaxInputDuration.count() < std::numeric_limits<int64_t>::max() / 100);
  CHECK_FALSE(parse_duration("99999999999999999999999ns").has_value());
}

TEST_CASE("parse_duration works without a why string", "[time][parse]") {
  CHECK_FALSE(parse_duration("5").has_value());
  CHECK_FALSE(parse_duration("3 parsecs").has_value());
}

TEST_CASE("parse_frequency_hz accepts Hz, kHz, MHz and GHz", "[time][parse]") {
  CHECK(parse_frequency_hz("120Hz") == 120.0);
  CHECK(parse_frequency_hz("500kHz") == 500000.0);
  CHECK(parse_frequency_hz("2000MHz") == 2000000000.0);
  auto f = parse_frequency_hz("1.8GHz");
  REQUIRE(f.has_value());
  CHECK(*f == Approx(1.8e9).epsilon(1e-12));
}

TEST_CASE("parse_frequency_hz rejects missing or unknown units and negative values", "[time][parse]") {
  std::string why;
  CHECK_FALSE(parse_frequency_hz("120", &why).has_value());
  CHECK_THAT(why, Catch::Contains("no unit"));
  CHECK_THAT(why, Catch::Contains("Hz, kHz, MHz, GHz"));

  why.clear();
  CHECK_FALSE(parse_frequency_hz("3 parsecs", &why).has_value());
  CHECK_THAT(why, Catch::Contains("unknown unit 'parsecs'"));

  why.clear();
  CHECK_FALSE(parse_frequency_hz("-5Hz", &why).has_value());
  CHECK_THAT(why, Catch::Contains("not a frequency"));

  CHECK_FALSE(parse_frequency_hz("fast").has_value());
}

TEST_CASE("format_time picks the largest unit that keeps the value at least 1", "[time][format]") {
  CHECK(format_time(12_ns) == "12ns");
  CHECK(format_time(0_ns) == "0ns");
  CHECK(format_time(999_ns) == "999ns");
  CHECK(format_time(1000_ns) == "1.000us");
  CHECK(format_time(750_us) == "750.000us");
  CHECK(format_time(Time::ns(1234567)) == "1.235ms");
  CHECK(format_time(3_ms) == "3.000ms");
  CHECK(format_time(1500_ms) == "1.500s");
  CHECK(format_time(-(3_ms)) == "-3.000ms");
  CHECK(format_time(Time::ns(-12)) == "-12ns");
}
