#include "sim/stats.h"

#include <algorithm>
#include <cmath>

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

Summary Samples::summarize() const {
  std::vector<int64_t> sorted = values_;
  std::sort(sorted.begin(), sorted.end());
  return summarize_sorted(sorted);
}

uint64_t Samples::count_at_least(int64_t threshold) const {
  return static_cast<uint64_t>(std::count_if(values_.begin(), values_.end(), [&](int64_t v) { return v >= threshold; }));
}

Summary summarize(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return summarize_sorted(values);
}

}  // namespace schedlab
