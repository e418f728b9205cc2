#include "sim/stats.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace schedlab {

template <typename T>
static double percentile_impl(const std::vector<T>& sorted, double q) {
  if (sorted.empty()) return 0.0;
  q = std::clamp(q, 0.0, 100.0);  // out-of-range q would index outside the vector
  double rank = q / 100.0 * static_cast<double>(sorted.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(rank));
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  double frac = rank - static_cast<double>(lo);
  return static_cast<double>(sorted[lo]) + frac * (static_cast<double>(sorted[hi]) - static_cast<double>(sorted[lo]));
}

double percentile_sorted(const std::vector<double>& sorted, double q) { return percentile_impl(sorted, q); }
double percentile_sorted(const std::vector<int64_t>& sorted, double q) { return percentile_impl(sorted, q); }

template <typename T>
static Summary summarize_sorted(const std::vector<T>& v) {
  Summary s;
  s.count = v.size();
  if (v.empty()) return s;
  long double sum = 0;
  for (T x : v) sum += static_cast<long double>(x);
  s.sum = static_cast<double>(sum);
  s.mean = static_cast<double>(sum / static_cast<long double>(v.size()));
  s.p50 = percentile_impl(v, 50);
  s.p90 = percentile_impl(v, 90);
  s.p95 = percentile_impl(v, 95);
  s.p98 = percentile_impl(v, 98);
  s.p99 = percentile_impl(v, 99);
  s.min = static_cast<double>(v.front());
  s.max = static_cast<double>(v.back());
  return s;
}

// percentile_impl() from the two order statistics it reads.
static double interpolate(size_t n, double q, int64_t at_lo, int64_t at_hi) {
  double rank = q / 100.0 * static_cast<double>(n - 1);
  size_t lo = static_cast<size_t>(std::floor(rank));
  double frac = rank - static_cast<double>(lo);
  return static_cast<double>(at_lo) + frac * (static_cast<double>(at_hi) - static_cast<double>(at_lo));
}

Summary Samples::summarize() const {
  // Selection instead of a full sort when that gives the very same
  // numbers: the percentiles only need the order statistics at their
  // ranks, and the sum of non-negative values whose total stays below
  // 2^64 is exact in long double (64-bit mantissa) in any order, so it
  // equals the sorted-order sum summarize_sorted() computes.
  const size_t n = values_.size();
  bool fast = n >= 64;
  unsigned __int128 total = 0;
  int64_t lo_v = 0, hi_v = 0;
  if (fast) {
    lo_v = hi_v = values_.front();
    for (int64_t v : values_) {
      if (v < 0) {
        fast = false;
        break;
      }
      total += static_cast<uint64_t>(v);
      lo_v = std::min(lo_v, v);
      hi_v = std::max(hi_v, v);
    }
    if (total >> 64) fast = false;
  }
  std::vector<int64_t> w = values_;
  if (!fast) {
    std::sort(w.begin(), w.end());
    return summarize_sorted(w);
  }
  Summary s;
  s.count = n;
  const long double sum = static_cast<long double>(static_cast<uint64_t>(total));
  s.sum = static_cast<double>(sum);
  s.mean = static_cast<double>(sum / static_cast<long double>(n));
  s.min = static_cast<double>(lo_v);
  s.max = static_cast<double>(hi_v);
  // Ranks in increasing order: each selection works on what lies above the
  // previous one (nth_element leaves [lo + 1, n) holding exactly the
  // sorted suffix's values).
  const double qs[] = {50, 90, 95, 98, 99};
  double* out[] = {&s.p50, &s.p90, &s.p95, &s.p98, &s.p99};
  size_t from = 0;        // w[from, n) holds the sorted suffix from `from` on
  size_t done = SIZE_MAX;  // the last rank selected
  int64_t at_lo = 0, at_hi = 0;
  for (int i = 0; i < 5; ++i) {
    const double rank = qs[i] / 100.0 * static_cast<double>(n - 1);
    const size_t lo = static_cast<size_t>(std::floor(rank));
    const size_t hi = std::min(lo + 1, n - 1);
    if (lo != done) {
      std::nth_element(w.begin() + static_cast<std::ptrdiff_t>(from), w.begin() + static_cast<std::ptrdiff_t>(lo),
                       w.end());
      at_lo = w[lo];
      at_hi = hi == lo ? at_lo : *std::min_element(w.begin() + static_cast<std::ptrdiff_t>(hi), w.end());
      done = lo;
      from = hi;
    }
    *out[i] = interpolate(n, qs[i], at_lo, at_hi);
  }
  return s;
}

uint64_t Samples::count_at_least(int64_t threshold) const {
  return static_cast<uint64_t>(std::count_if(values_.begin(), values_.end(), [&](int64_t v) { return v >= threshold; }));
}

Summary summarize(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return summarize_sorted(values);
}

}  // namespace schedlab
