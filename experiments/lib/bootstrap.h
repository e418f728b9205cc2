// Uncertainty over runs: the expanded percentile bootstrap.
//
// A comparison's change is the difference of the variants' means over runs.
// Runs are paired: run i of every variant uses the same seed (hence the same
// start jitter), so a resample draws run indices and takes both variants'
// values at those indices; the statistic is mean(b*) - mean(a*). B = 2000
// resamples, and the 95% interval is a pair of percentiles of the B
// statistics (linear interpolation, as everywhere in schedlab).
//
// Which percentiles: the plain percentile interval (2.5th, 97.5th) is too
// narrow for few runs, because the bootstrap's spread is the sample's
// n-denominator spread read with normal quantiles instead of Student's t.
// The expanded percentile interval (Hesterberg, "What teachers should know
// about the bootstrap", The American Statistician 69(4), 2015, section 4.3)
// widens the levels so that the normal quantile of the tail equals
// sqrt(n / (n - 1)) t_{n-1}: with 20 runs the 1.59th and 98.41st
// percentiles, with 245 runs the 2.42nd and 97.58th. Measured on the
// studies' own experiments at 40-125 base seeds
// (experiments/interval_coverage/README.md): with 20 runs per variant the
// plain intervals held the all-seed value 92% of the time and the expanded
// ones 93%; with 60 and 245 runs both about 95%.
// Resampling uses its own seeded stream (Boost's mt19937_64 and
// uniform_int_distribution, which are portable), seeded from the variant's
// name (a sweep point's id): every metric of a variant is resampled with
// the same run indices (a joint bootstrap, so task:ui and group:ui of a
// one-task group get the same interval), and nothing depends on -j,
// shards or order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace schedlab {

inline constexpr int kBootstrapResamples = 2000;
inline constexpr double kConfidence = 0.95;

struct Interval {
  double low = 0, high = 0;
  bool contains(double v) const { return low <= v && v <= high; }
};

double mean_of(const std::vector<double>& v);        // 0 for an empty vector
double sample_sd(const std::vector<double>& v);      // n - 1 denominator; 0 below 2 values

// Sets s.n to the number of values and, when there are any, s.mean, s.sd,
// s.min and s.max (a comparison's MetricCell, a sweep point's PointStats).
template <typename Stats>
void summarize_values(Stats& s, const std::vector<double>& values) {
  s.n = static_cast<int>(values.size());
  if (values.empty()) return;
  s.mean = mean_of(values);
  s.sd = sample_sd(values);
  s.min = *std::min_element(values.begin(), values.end());
  s.max = *std::max_element(values.begin(), values.end());
}

// B resamples of n indices, each drawn uniformly from [0, n) with
// replacement, from a stream seeded with `seed`.
std::vector<std::vector<size_t>> draw_resamples(size_t n, int resamples, uint64_t seed);

// draw_resamples(), memoized for the life of the process (thread-safe):
// the resamples of one seed are shared by every metric that uses it.
const std::vector<std::vector<size_t>>& shared_resamples(size_t n, int resamples, uint64_t seed);

// The percentile level that expands `confidence` for n resampled runs
// (Hesterberg's expanded percentile interval): 1 - 2 Phi(-sqrt(n / (n - 1))
// t_{n-1, (1 + confidence) / 2}). n < 2 (nothing to resample), or a
// confidence outside (0, 1), returns `confidence`.
double expanded_confidence(size_t n, double confidence = kConfidence);

// The percentile interval at `confidence` of the statistics (sorted here).
// Infinite statistics sort to the ends; a bound that falls on or next to
// one is that infinity.
Interval percentile_interval(std::vector<double> statistics, double confidence = kConfidence);

// The relative change 100 (b - a) / |a| of one resample's statistics:
// 0 when both are 0, +-infinity when only a is 0, NaN when either is
// missing (NaN).
double relative_change_pct(double a, double b);

// A change's interval from the statistic of each resample, a_star[i] and
// b_star[i] (NaN: missing in that resample): the percentile interval of the
// resamples' relative changes at `confidence` as given (callers expand it).
// nullopt when more than 1 - confidence of them are undefined (too few to
// bound the change).
std::optional<Interval> relative_change_interval(const std::vector<double>& a_star, const std::vector<double>& b_star,
                                                 double confidence = kConfidence);

// Paired bootstrap of the means of a and b (one value per run, same
// length): each resample's (mean(a*), mean(b*)); `resamples` as from
// draw_resamples (tests pass their own).
void bootstrap_means(const std::vector<double>& a, const std::vector<double>& b,
                     const std::vector<std::vector<size_t>>& resamples, std::vector<double>& a_star,
                     std::vector<double>& b_star);
// Bootstrap of the mean of one sample (sweep points): the expanded
// percentile interval for values.size() runs.
Interval bootstrap_mean(const std::vector<double>& values, const std::vector<std::vector<size_t>>& resamples,
                        double confidence = kConfidence);

// The resampling seed for a name ("compare/rtp_off", "sweep/p000003").
uint64_t bootstrap_seed(std::string_view name);

// A change against a baseline, in % of the baseline's statistic.
struct Change {
  bool defined = false;   // false: baseline 0 with a non-zero difference, or no paired runs
  double pct = 0;         // 100 * (b - a) / |a|
  // The expanded percentile bootstrap interval of the same relative change
  // (each resample's statistics); nullopt with a single pair (nothing to
  // resample) or when too many resamples leave it undefined. A bound may
  // be infinite (resamples whose baseline is 0).
  std::optional<Interval> ci_pct;
  bool noise = false;     // the interval contains 0: "~" in tables
  int pairs = 0;          // runs where both variants have a value
};

// The change from statistic a to b, with the interval from each
// resample's statistics (empty: no interval), expanded for `pairs` runs
// resampled. Undefined when a is 0 and b
// is not; "nothing changed" (a point interval at 0) when both are 0 and
// so is every resample.
Change make_change(double a, double b, const std::vector<double>& a_star, const std::vector<double>& b_star,
                   int pairs, double confidence = kConfidence);

// The change of the mean of b against the mean of a over the runs where
// both have a value (paired by run index), with its bootstrap interval.
// nullopt entries are runs without a value (e.g. no wakeups, so no P99).
Change compare_runs(const std::vector<std::optional<double>>& a, const std::vector<std::optional<double>>& b,
                    uint64_t seed, int resamples = kBootstrapResamples, double confidence = kConfidence);

}  // namespace schedlab
