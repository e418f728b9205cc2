#include "experiments/lib/bootstrap.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <tuple>

#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>

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

double expanded_confidence(size_t n, double confidence) {
  if (n < 2 || !(confidence > 0.0 && confidence < 1.0)) return confidence;
  // In double throughout (no promotion to long double, whose width differs
  // between x86-64 and arm64), so the levels do not depend on the machine's
  // long double.
  using Policy = boost::math::policies::policy<boost::math::policies::promote_double<false>>;
  const double df = static_cast<double>(n - 1);
  const double t =
      boost::math::quantile(boost::math::students_t_distribution<double, Policy>(df), (1.0 + confidence) / 2.0);
  const double z = std::sqrt(static_cast<double>(n) / df) * t;
  return 1.0 - 2.0 * boost::math::cdf(boost::math::normal_distribution<double, Policy>(), -z);
}

Interval percentile_interval(std::vector<double> statistics, double confidence) {
  if (statistics.empty()) return {};
  std::sort(statistics.begin(), statistics.end());
  const double tail = (1.0 - confidence) / 2.0 * 100.0;
  // percentile_sorted()'s interpolation, except that a rank touching an
  // infinity gives that infinity (inf - inf would be NaN).
  auto at = [&](double q) {
    const double rank = q / 100.0 * static_cast<double>(statistics.size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(rank));
    const size_t hi = std::min(lo + 1, statistics.size() - 1);
    const double a = statistics[lo], b = statistics[hi];
    if (std::isinf(a) && a < 0) return a;
    if (std::isinf(b) && b > 0) return rank > static_cast<double>(lo) ? b : a;
    return percentile_sorted(statistics, q);
  };
  return {at(tail), at(100.0 - tail)};
}

double relative_change_pct(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return NAN;
  if (a == 0) return b == 0 ? 0.0 : (b > 0 ? INFINITY : -INFINITY);
  return 100.0 * (b - a) / std::fabs(a);
}

std::optional<Interval> relative_change_interval(const std::vector<double>& a_star, const std::vector<double>& b_star,
                                                 double confidence) {
  std::vector<double> changes;
  changes.reserve(a_star.size());
  for (size_t i = 0; i < std::min(a_star.size(), b_star.size()); ++i) {
    const double c = relative_change_pct(a_star[i], b_star[i]);
    if (!std::isnan(c)) changes.push_back(c);
  }
  const size_t undefined = a_star.size() - changes.size();
  if (changes.empty() || static_cast<double>(undefined) > (1.0 - confidence) * static_cast<double>(a_star.size()))
    return std::nullopt;
  return percentile_interval(std::move(changes), confidence);
}

void bootstrap_means(const std::vector<double>& a, const std::vector<double>& b,
                     const std::vector<std::vector<size_t>>& resamples, std::vector<double>& a_star,
                     std::vector<double>& b_star) {
  a_star.clear();
  b_star.clear();
  a_star.reserve(resamples.size());
  b_star.reserve(resamples.size());
  for (const auto& idx : resamples) {
    long double sa = 0, sb = 0;
    for (size_t i : idx) {
      sa += a[i];
      sb += b[i];
    }
    const long double n = static_cast<long double>(idx.size());
    a_star.push_back(static_cast<double>(sa / n));
    b_star.push_back(static_cast<double>(sb / n));
  }
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
  return percentile_interval(std::move(stats), expanded_confidence(values.size(), confidence));
}

uint64_t bootstrap_seed(std::string_view name) { return fnv1a64(name); }

Change make_change(double a, double b, const std::vector<double>& a_star, const std::vector<double>& b_star,
                   int pairs, double confidence) {
  Change c;
  c.pairs = pairs;
  const double level = expanded_confidence(static_cast<size_t>(pairs), confidence);
  const std::optional<Interval> ci =
      a_star.empty() ? std::nullopt : relative_change_interval(a_star, b_star, level);
  if (a == 0) {
    // A relative change from zero is undefined unless nothing changed.
    const bool nothing = b == 0 && (a_star.empty() || (ci && ci->low == 0 && ci->high == 0));
    if (!nothing) return c;
    c.defined = true;
    if (!a_star.empty()) c.ci_pct = Interval{0, 0};
    c.noise = true;
    return c;
  }
  c.defined = true;
  c.pct = relative_change_pct(a, b);
  c.ci_pct = ci;
  c.noise = ci && ci->contains(0.0);
  return c;
}

Change compare_runs(const std::vector<std::optional<double>>& a, const std::vector<std::optional<double>>& b,
                    uint64_t seed, int resamples, double confidence) {
  std::vector<double> pa, pb;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (a[i] && b[i]) {
      pa.push_back(*a[i]);
      pb.push_back(*b[i]);
    }
  }
  if (pa.empty()) return Change{};
  std::vector<double> a_star, b_star;
  if (pa.size() >= 2) bootstrap_means(pa, pb, shared_resamples(pa.size(), resamples, seed), a_star, b_star);
  return make_change(mean_of(pa), mean_of(pb), a_star, b_star, static_cast<int>(pa.size()), confidence);
}

}  // namespace schedlab
