// Human-readable tables for stdout, shaped like the tables of the kernel
// threads the project grew from (docs/outputs.md shows an example): one row
// per task, one per task group when a group has several instances, one per
// CPU with the conservation check busy + idle = elapsed.
#pragma once

#include <string>
#include <vector>

#include "experiments/lib/aggregate.h"

namespace schedlab {

// "two_hogs: kernel 6.12 (HZ=250, preempt=full), 2 CPUs, duration 10.000s, 3 runs, seed 1"
std::string format_run_header(const ScenarioInfo& scenario, int runs, uint64_t base_seed);
std::string format_run_header(const RunSet& set);
// One line ("note: ...\n") when the scenario models no context-switch,
// wake-up or IPI cost, else empty: latencies of exactly 0 then mean no
// wait, not a measured zero.
std::string overheads_note(const ScenarioInfo& scenario);

std::string render_task_table(const RunSet& set);
// The groups with more than one instance; empty when there are none.
std::string render_group_table(const RunSet& set);
std::string render_cpu_table(const RunSet& set);
// The three tables, separated by blank lines.
// `schedlab run --why`: each decision kind's reasons per task group, with
// counts and shares; empty when no run counted decisions.
std::string render_decision_table(const RunSet& set);
// Decision counts of several sets of runs (compare's variants, a sweep's
// points) side by side: a row per (kind, group, reason), a column per set
// whose cell is the reason's share of the group's decisions of that kind
// in that set and its count per run ("-" where the set has none). Rows
// follow the first column that has the group; reasons only later columns
// have come after. Empty when no column has a decision.
struct DecisionColumn {
  std::string name;
  std::vector<DecisionCount> decisions;  // summed over the set's runs, in report order
  size_t runs = 1;
};
std::string render_decisions_side_by_side(const std::vector<DecisionColumn>& columns);
std::string render_report(const RunSet& set);

// Table cells, exposed for tests: microseconds from nanoseconds with two
// decimals below 100 us and one above ("-" when there are no samples).
std::string format_us_cell(double ns, uint64_t count);
// Exact seconds from a Time: "1.500000000s".
std::string format_seconds_exact(Time t);

}  // namespace schedlab
