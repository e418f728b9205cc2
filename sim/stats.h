// Sample distributions and their summaries. Percentiles use linear
// interpolation between closest ranks (numpy's default 'linear' method, which
// is what Perfetto-based notebooks report), so P50 of {1,2,3,4} is 2.5.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace schedlab {

struct Summary {
  uint64_t count = 0;
  double mean = 0, p50 = 0, p90 = 0, p95 = 0, p98 = 0, p99 = 0, max = 0, min = 0;
  double sum = 0;
};

// Exact samples (int64, e.g. nanoseconds). Reserve up front to keep the hot
// loop free of allocation.
class Samples {
 public:
  void add(int64_t v) { values_.push_back(v); }
  void reserve(size_t n) { values_.reserve(n); }
  size_t size() const { return values_.size(); }
  bool empty() const { return values_.empty(); }
  const std::vector<int64_t>& values() const { return values_; }
  void clear() { values_.clear(); }
  void append(const Samples& o) { values_.insert(values_.end(), o.values_.begin(), o.values_.end()); }
  uint64_t count_at_least(int64_t threshold) const;
  Summary summarize() const;

 private:
  std::vector<int64_t> values_;
};

// Percentile q in [0,100] of sorted values (linear interpolation).
double percentile_sorted(const std::vector<double>& sorted, double q);
double percentile_sorted(const std::vector<int64_t>& sorted, double q);
Summary summarize(std::vector<double> values);

}  // namespace schedlab
