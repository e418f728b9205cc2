// Sample summaries: percentiles by linear interpolation between closest
// ranks (numpy's default 'linear' method), mean, extremes and threshold
// counts. Expected values are worked out by hand in the comments.
#include <catch2/catch.hpp>

#include <vector>

#include "sim/stats.h"

using namespace schedlab;

namespace {
Samples samples_of(std::initializer_list<int64_t> values) {
  Samples s;
  for (int64_t v : values) s.add(v);
  return s;
}
Samples one_to(int64_t n) {
  Samples s;
  for (int64_t v = n; v >= 1; --v) s.add(v);  // deliberately unsorted
  return s;
}
}  // namespace

TEST_CASE("P50 of an even-sized sample interpolates between the two middle values", "[stats]") {
  // rank = 0.5 * (4 - 1) = 1.5 -> halfway between sorted[1]=2 and sorted[2]=3.
  CHECK(samples_of({4, 1, 3, 2}).summarize().p50 == 2.5);
  CHECK(percentile_sorted(std::vector<int64_t>{1, 2, 3, 4}, 50) == 2.5);
  CHECK(percentile_sorted(std::vector<double>{1, 2, 3, 4}, 50) == 2.5);
}

TEST_CASE("P50 of an odd-sized sample is the middle value", "[stats]") {
  CHECK(samples_of({9, 1, 5}).summarize().p50 == 5.0);
}

TEST_CASE("Percentiles of 1..100 follow numpy's linear method", "[stats]") {
  Summary s = one_to(100).summarize();
  // P99: rank = 0.99 * 99 = 98.01 -> sorted[98]=99 + 0.01 * (100 - 99) = 99.01.
  CHECK(s.p99 == Approx(99.01).margin(1e-9));
  // P90: rank = 89.1 -> 90 + 0.1 = 90.1. P95: rank = 94.05 -> 95.05.
  CHECK(s.p90 == Approx(90.1).margin(1e-9));
  CHECK(s.p95 == Approx(95.05).margin(1e-9));
  // P98: rank = 97.02 -> 98.02. P50: rank = 49.5 -> 50.5.
  CHECK(s.p98 == Approx(98.02).margin(1e-9));
  CHECK(s.p50 == Approx(50.5).margin(1e-9));
}

TEST_CASE("A summary reports count, sum, mean, min and max", "[stats]") {
  Summary s = one_to(100).summarize();
  CHECK(s.count == 100);
  CHECK(s.sum == 5050.0);
  CHECK(s.mean == 50.5);
  CHECK(s.min == 1.0);
  CHECK(s.max == 100.0);

  Summary t = samples_of({10, 20, 60}).summarize();
  CHECK(t.mean == 30.0);
  CHECK(t.max == 60.0);
  CHECK(t.min == 10.0);
}

TEST_CASE("P0 is the minimum and P100 the maximum", "[stats]") {
  std::vector<int64_t> v{3, 7, 11};
  CHECK(percentile_sorted(v, 0) == 3.0);
  CHECK(percentile_sorted(v, 100) == 11.0);
}

TEST_CASE("Percentiles outside 0..100 clamp to the extremes instead of reading out of bounds", "[stats]") {
  std::vector<int64_t> v{3, 7, 11};
  CHECK(percentile_sorted(v, 150) == 11.0);
  CHECK(percentile_sorted(v, -5) == 3.0);
}

TEST_CASE("A single sample is every percentile", "[stats]") {
  Summary s = samples_of({42}).summarize();
  CHECK(s.count == 1);
  CHECK(s.p50 == 42.0);
  CHECK(s.p99 == 42.0);
  CHECK(s.min == 42.0);
  CHECK(s.max == 42.0);
  CHECK(s.mean == 42.0);
}

TEST_CASE("An empty sample summarizes to zeros", "[stats]") {
  Samples s;
  CHECK(s.empty());
  Summary sum = s.summarize();
  CHECK(sum.count == 0);
  CHECK(sum.mean == 0.0);
  CHECK(sum.p99 == 0.0);
  CHECK(sum.max == 0.0);
  CHECK(percentile_sorted(std::vector<double>{}, 50) == 0.0);
  CHECK(s.count_at_least(0) == 0);
}

TEST_CASE("count_at_least counts samples greater than or equal to the threshold", "[stats]") {
  Samples s = samples_of({5, 10, 10, 20});
  CHECK(s.count_at_least(10) == 3);  // inclusive
  CHECK(s.count_at_least(11) == 1);
  CHECK(s.count_at_least(5) == 4);
  CHECK(s.count_at_least(21) == 0);
  CHECK(s.count_at_least(-1000) == 4);
}

TEST_CASE("Summarizing does not reorder the stored samples", "[stats]") {
  Samples s = samples_of({3, 1, 2});
  s.summarize();
  CHECK(s.values() == std::vector<int64_t>{3, 1, 2});
}

TEST_CASE("append concatenates samples and clear empties them", "[stats]") {
  Samples a = samples_of({1, 2});
  Samples b = samples_of({3, 4});
  a.append(b);
  CHECK(a.size() == 4);
  CHECK(a.summarize().p50 == 2.5);
  a.clear();
  CHECK(a.empty());
}

TEST_CASE("summarize of doubles uses the same interpolation", "[stats]") {
  // Sorted {0.5, 1.5, 2.0, 4.0}: P50 rank 1.5 -> 1.5 + 0.5 * 0.5 = 1.75;
  // mean = 8 / 4 = 2.
  Summary s = summarize({4.0, 0.5, 2.0, 1.5});
  CHECK(s.p50 == 1.75);
  CHECK(s.mean == 2.0);
  CHECK(s.min == 0.5);
  CHECK(s.max == 4.0);
}
