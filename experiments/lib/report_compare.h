// Reports of a Comparison (docs/experiments.md documents every column and
// field): the terminal tables, shaped like the seed threads' A/B tables,
// JSON and CSV for machines, and the data the plot script draws.
#pragma once

#include <string>

#include "experiments/lib/compare.h"

namespace schedlab {

inline constexpr const char* kCompareJsonFormat = "schedlab.compare";
inline constexpr int kCompareJsonFormatVersion = 1;

// "-8.8%", "~+1.6%" (the interval contains 0), "n/a".
std::string format_change(const Change& c);
// "[-10.1, -7.4]" in %, or "-" without an interval.
std::string format_interval(const Change& c);

// Header lines, the metric table and the who-pays table.
std::string render_compare_report(const Comparison& c);
// `schedlab compare --why`: the decision counts of every variant side by
// side; empty when none were counted.
std::string render_compare_decisions(const Comparison& c);
std::string render_compare_json(const Comparison& c);
std::string render_compare_csv(const Comparison& c);
// Input of experiments/plots/compare_plots.py: per variant, the latency
// quantiles of every group with wakeups (pooled over runs), and every
// metric's change with its interval.
std::string render_compare_plot_data(const Comparison& c);

}  // namespace schedlab
