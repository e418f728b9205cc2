#include "experiments/lib/bootstrap.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <tuple>

#include "sim/rng.h"
#include "sim/stats.h"

namespace schedlab {

double mean_of(const std::vector<double>& v) {
  if (v.empty()) return 0;
  // long double and index order: the same values give the same bits on every run.
  long double sum = 0;
  for (double x : v) sum += x;
  return static_cast<double>(sum / static_cast<long double>(v.size()));
}

double sample_sd(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const double m = mean_of(v);
  long double ss = 0;
  for (double x : v) ss += (x - m) * (x - m);
  return std::sqrt(static_cast<double>(ss / static_cast<long double>(v.size() - 1)));
}

std::vector<std::vector<size_t>> draw_resamples(size_t n, int resamples, uint64_t seed) {
  std::vector<std::vector<size_t>> out;
  if (n == 0 || resamples <= 0) return out;
  RngStream rng(seed, "bootstrap");
  boost::random::uniform_int_distribution<size_t> pick(0, n - 1);
  out.resize(static_cast<size_t>(resamples));
  for (auto& r : out) {
    r.resize(n);
    for (size_t& i : r) i = pick(rng.engine());
  }
  return out;
}

const std::vector<std::vector<size_t>>& shared_resamples(size_t n, int resamples, uint64_t seed) {
  // Every metric of a variant (sweep point) uses the same seed, so the same
  // resamples: draw them once. Entries are never changed after insertion
  // and std::map nodes do not move, so references stay valid; the lock only
  // guards the map itself.
  static std::mutex mu;
  static std::map<std::tuple<size_t, int, uint64_t>, std::vector<std::vector<size_t>>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto key = std::make_tuple(n, resamples, seed);
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, draw_resamples(n, resamples, seed)).first;
  return it->second;
}

Interval percentile_interval(std::vector<double> statistics, double confidence) {
  if (statistics.empty()) return {};
  std::sort(statistics.begin(), statistics.end());
  const double tail = (1.0 - confidence) / 2.0 * 100.0;
  return {percentile_sorted(statistics, tail), percentile_sorted(statistics, 100.0 - tail)};
}

Interval bootstrap_mean_diff(const std::vector<double>& a, const std::vector<double>& b,
                             const std::vector<std::vector<size_t>>& resamples, double confidence) {
  std::vector<double> stats;
  stats.reserve(resamples.size());
  for (const auto& idx : resamples) {
    long double sa = 0, sb = 0;
    for (size_t i : idx) {
      sa += a[i];
      sb += b[i];
    }
    const long double n = static_cast<long double>(idx.size());
    stats.push_back(static_cast<double>(sb / n - sa / n));
  }
  return percentile_interval(std::move(stats), confidence);
}

Interval bootstrap_mean(const std::vector<double>& values, const std::vector<std::vector<size_t>>& resamples,
                        double confidence) {
  std::vector<double> stats;
  stats.reserve(resamples.size());
  for (const auto& idx : resamples) {
    long double s = 0;
    for (size_t i : idx) s += values[i];
    stats.push_back(static_cast<double>(s / static_cast<long double>(idx.size())));
  }
  return percentile_interval(std::move(stats), confidence);
}

uint64_t bootstrap_seed(std::string_view name) { return fnv1a64(name); }

Change compare_runs(const std::vector<std::optional<double>>& a, const std::vector<std::optional<double>>& b,
                    uint64_t seed, int resamples, double confidence) {
  std::vector<double> pa, pb;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (a[i] && b[i]) {
      pa.push_back(*a[i]);
      pb.push_back(*b[i]);
    }
  }
  Change c;
  c.pairs = static_cast<int>(pa.size());
  if (pa.empty()) return c;
  const double ma = mean_of(pa), mb = mean_of(pb);
  const double diff = mb - ma;
  std::optional<Interval> ci;
  if (pa.size() >= 2) ci = bootstrap_mean_diff(pa, pb, shared_resamples(pa.size(), resamples, seed), confidence);
  if (ma == 0) {
    // A relative change from zero is undefined unless nothing changed.
    const bool nothing = diff == 0 && (!ci || (ci->low == 0 && ci->high == 0));
    if (!nothing) return c;
    c.defined = true;
    c.pct = 0;
    if (ci) c.ci_pct = Interval{0, 0};
    c.noise = true;
    return c;
  }
  const double scale = 100.0 / std::fabs(ma);
  c.defined = true;
  c.pct = diff * scale;
  if (ci) {
    c.ci_pct = Interval{ci->low * scale, ci->high * scale};
    c.noise = ci->contains(0.0);
  }
  return c;
}

}  // namespace schedlab
