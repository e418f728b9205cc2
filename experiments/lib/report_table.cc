#include "experiments/lib/report_table.h"

#include "experiments/lib/report_power.h"

#include "experiments/lib/text_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string_view>
#include <tuple>
#include <vector>

namespace schedlab {
namespace {

std::string pct_cell(double fraction) { return fmt::format("{:.1f}", fraction * 100.0); }

// n of total as a percentage; a share that rounds to 0 but is not shows
// as "<0.1".
std::string share_cell(uint64_t n, uint64_t total) {
  const double pct = 100.0 * static_cast<double>(n) / static_cast<double>(total);
  return n > 0 && pct < 0.05 ? "<0.1" : fmt::format("{:.1f}", pct);
}

// A count: the total for one run, the mean per run for several (two
// decimals below 100, one above, like the latency cells).
std::string count_cell(uint64_t total, int runs) {
  if (runs <= 1) return fmt::format("{}", total);
  const double mean = static_cast<double>(total) / runs;
  return mean < 100.0 ? fmt::format("{:.2f}", mean) : fmt::format("{:.1f}", mean);
}

std::string count_header(std::string_view name, int runs) {
  return runs <= 1 ? std::string(name) : fmt::format("{}/run", name);
}

// The columns shared by the task and group tables, after the identity columns.
void add_stat_columns(TextTable& t, int runs) {
  t.add_column("CPU%");
  t.add_column(count_header("wakeups", runs));
  for (const char* h : {"mean", "P50", "P90", "P99", "max"}) t.add_column(h);
  for (const char* h : {"mean", "P99"}) t.add_column(h);
  t.add_column(count_header("periods", runs));
  t.add_column(count_header("misses", runs));
}

void add_stat_cells(std::vector<std::string>& row, const TaskStats& s, int runs) {
  row.push_back(pct_cell(s.cpu_share()));
  row.push_back(count_cell(s.wakeups, runs));
  const Summary& w = s.wakeup_latency;
  for (double v : {w.mean, w.p50, w.p90, w.p99, w.max}) row.push_back(format_us_cell(v, w.count));
  const Summary& r = s.runnable_wait;
  for (double v : {r.mean, r.p99}) row.push_back(format_us_cell(v, r.count));
  row.push_back(count_cell(s.periods, runs));
  row.push_back(count_cell(s.deadline_misses, runs));
}

}  // namespace

std::string format_us_cell(double ns, uint64_t count) {
  if (count == 0 || !std::isfinite(ns)) return "-";
  double us = ns / 1e3;
  return std::fabs(us) < 100.0 ? fmt::format("{:.2f}", us) : fmt::format("{:.1f}", us);
}

std::string format_seconds_exact(Time t) {
  int64_t v = t.count();
  const char* sign = v < 0 ? "-" : "";
  uint64_t a = v < 0 ? static_cast<uint64_t>(-(v + 1)) + 1 : static_cast<uint64_t>(v);
  return fmt::format("{}{}.{:09d}s", sign, a / 1000000000u, a % 1000000000u);
}

std::string format_run_header(const ScenarioInfo& s, int runs, uint64_t base_seed) {
  std::string warmup = s.warmup.count() > 0 ? fmt::format(" (warmup {})", format_time(s.warmup)) : std::string();
  return fmt::format("{}: kernel {} (HZ={}, preempt={}), {} CPU{}, duration {}{}, {} run{}, seed {}", s.name,
                     s.kernel_version, s.hz, s.preempt, s.cpus, s.cpus == 1 ? "" : "s", format_time(s.duration),
                     warmup, runs, runs == 1 ? "" : "s", base_seed);
}

std::string overheads_note(const ScenarioInfo& s) {
  if (s.overheads_modelled) return "";
  return "note: no scheduling overheads modelled (kernel.overheads: context switch, wake-up and IPI cost 0): a "
         "task woken where it can run at once shows 0 us of wakeup latency\n";
}

std::string format_run_header(const RunSet& set) {
  return format_run_header(set.scenario, static_cast<int>(set.runs.size()), set.base_seed);
}

std::string render_task_table(const RunSet& set) {
  const Aggregate& a = set.aggregate;
  TextTable t;
  t.add_span("", 5);
  t.add_span("wakeup latency (us)", 5);
  t.add_span("runnable (us)", 2);
  t.add_span("", 2);
  t.add_column("task", true);
  t.add_column("pid");
  t.add_column("policy", true);
  add_stat_columns(t, a.runs);
  for (const TaskAggregate& ta : a.tasks) {
    std::vector<std::string> row{ta.name, fmt::format("{}", ta.pid), policy_prio_label(ta.policy, ta.nice, ta.rt_priority)};
    add_stat_cells(row, ta.stats, a.runs);
    t.add_row(std::move(row));
  }
  return t.render();
}

std::string render_group_table(const RunSet& set) {
  const Aggregate& a = set.aggregate;
  if (!a.any_group_with_instances()) return {};
  TextTable t;
  t.add_span("", 5);
  t.add_span("wakeup latency (us)", 5);
  t.add_span("runnable (us)", 2);
  t.add_span("", 2);
  t.add_column("group", true);
  t.add_column("tasks");
  t.add_column("policy", true);
  add_stat_columns(t, a.runs);
  for (const GroupAggregate& g : a.groups) {
    if (g.instances < 2) continue;  // a lone task is already a row of the task table
    std::vector<std::string> row{g.name, fmt::format("{}", g.instances),
                                 g.mixed_policy ? std::string("mixed") : policy_prio_label(g.policy, g.nice, g.rt_priority)};
    add_stat_cells(row, g.stats, a.runs);
    t.add_row(std::move(row));
  }
  return t.render();
}

std::string render_cpu_table(const RunSet& set) {
  const Aggregate& a = set.aggregate;
  TextTable t;
  const bool several = a.runs > 1;
  t.add_column("cpu", true);
  t.add_column(several ? "busy (s, sum)" : "busy (s)");
  t.add_column(several ? "idle (s, sum)" : "idle (s)");
  t.add_column("busy%");
  t.add_column("idle%");
  t.add_column(count_header("switches", a.runs));
  Time busy, idle, elapsed;
  for (const CpuAggregate& c : a.cpus) {
    t.add_row({fmt::format("cpu{}", c.cpu), fmt::format("{:.6f}", c.busy.to_s()), fmt::format("{:.6f}", c.idle.to_s()),
               pct_cell(c.busy_fraction()), pct_cell(c.idle_fraction()), count_cell(c.context_switches, a.runs)});
    busy += c.busy;
    idle += c.idle;
    elapsed += c.elapsed;
  }
  std::string out = t.render();
  const ConservationCheck& k = a.check;
  if (k.holds) {
    out += fmt::format("check: busy + idle = elapsed on every CPU in every run ({} CPU{} x {} run{}): {} + {} = {}  OK\n",
                       a.cpus.size(), a.cpus.size() == 1 ? "" : "s", a.runs, a.runs == 1 ? "" : "s",
                       format_seconds_exact(busy), format_seconds_exact(idle), format_seconds_exact(elapsed));
  } else {
    out += fmt::format("check FAILED: busy + idle != elapsed: run {} cpu{}: {} + {} = {} but elapsed is {} (max error {} ns)\n",
                       k.run, k.cpu, format_seconds_exact(k.busy), format_seconds_exact(k.idle),
                       format_seconds_exact(k.busy + k.idle), format_seconds_exact(k.elapsed), k.max_error_ns);
  }
  return out;
}

std::string render_decision_table(const RunSet& set) {
  // Summed over runs; shares are of the group's decisions of that kind.
  DecisionTally tally;
  for (const RunResult& r : set.runs) tally.add(r.decisions);
  if (tally.empty()) return "";
  const std::vector<DecisionCount> rows = tally.sorted();
  auto totals = DecisionTally::group_totals(rows);
  const int runs = static_cast<int>(set.runs.size());
  TextTable t;
  t.add_column("decision", true);
  t.add_column("group", true);
  t.add_column("reason (--log debug shows each one)", true);
  t.add_column(count_header("count", runs));
  t.add_column("share%");
  const DecisionCount* last = nullptr;
  for (const DecisionCount& d : rows) {
    const bool new_kind = !last || d.kind != last->kind;
    const bool new_group = new_kind || d.group != last->group;
    t.add_row({new_kind ? d.kind : "", new_group ? d.group : "", d.reason, count_cell(d.count, runs),
               share_cell(d.count, totals[{d.kind, d.group}])});
    last = &d;
  }
  return "why: the kernel's decisions in the measured window, by reason\n" + t.render();
}

std::string render_decisions_side_by_side(const std::vector<DecisionColumn>& columns) {
  using Group = std::pair<size_t, std::string>;              // kind rank, group
  using Key = std::tuple<size_t, std::string, std::string>;  // and reason
  const size_t nc = columns.size();
  std::vector<std::map<Key, uint64_t>> counts(nc);
  std::vector<DecisionTally::GroupTotals> totals(nc);
  std::map<Group, size_t> first_column;  // every group, and the first column that has it
  for (size_t c = 0; c < nc; ++c) {
    totals[c] = DecisionTally::group_totals(columns[c].decisions);
    for (const DecisionCount& d : columns[c].decisions) {
      const size_t rank = DecisionTally::rank(d.kind);
      counts[c][{rank, d.group, d.reason}] = d.count;
      first_column.emplace(Group{rank, d.group}, c);
    }
  }
  if (first_column.empty()) return "";
  // Rows: each group's reasons in the order of the first column that has
  // it (the baseline, unless the group is a variant's own, e.g. a
  // WQ_HIGHPRI pool), then the reasons only later columns have.
  std::vector<Key> rows;
  for (const auto& [group, ref] : first_column) {
    const size_t begin = rows.size();
    for (const DecisionCount& d : columns[ref].decisions)
      if (DecisionTally::rank(d.kind) == group.first && d.group == group.second)
        rows.emplace_back(group.first, d.group, d.reason);
    std::set<std::string> extra;
    for (size_t c = ref + 1; c < nc; ++c)
      for (const auto& [key, n] : counts[c])
        if (std::get<0>(key) == group.first && std::get<1>(key) == group.second &&
            std::find(rows.begin() + static_cast<std::ptrdiff_t>(begin), rows.end(), key) == rows.end())
          extra.insert(std::get<2>(key));
    for (const std::string& reason : extra) rows.emplace_back(group.first, group.second, reason);
  }
  TextTable t;
  t.add_column("decision", true);
  t.add_column("group", true);
  t.add_column("reason", true);
  for (const DecisionColumn& c : columns) t.add_column(c.name);
  const Key* last = nullptr;
  for (const Key& key : rows) {
    const auto& [rank, group, reason] = key;
    const bool new_kind = !last || std::get<0>(*last) != rank;
    const bool new_group = new_kind || std::get<1>(*last) != group;
    std::vector<std::string> row = {new_kind ? std::string(kDecisionKinds[rank]) : "", new_group ? group : "", reason};
    for (size_t c = 0; c < nc; ++c) {
      const auto n = counts[c].find(key);
      if (n == counts[c].end()) {
        row.push_back("-");
        continue;
      }
      const double per_run = static_cast<double>(n->second) / static_cast<double>(columns[c].runs);
      const uint64_t total = totals[c][{std::string(kDecisionKinds[rank]), group}];
      row.push_back(fmt::format("{}% ({:.1f})", share_cell(n->second, total), per_run));
    }
    t.add_row(std::move(row));
    last = &key;
  }
  return t.render();
}

std::string render_report(const RunSet& set) {
  std::string out = render_task_table(set);
  std::string groups = render_group_table(set);
  if (!groups.empty()) {
    out += '\n';
    out += groups;
  }
  out += '\n';
  out += render_cpu_table(set);
  for (const std::string& extra : {render_power_tables(set), render_workqueue_table(set), render_drm_table(set),
                                   render_rpm_table(set), render_frame_table(set), render_decision_table(set)})
    if (!extra.empty()) {
      out += '\n';
      out += extra;
    }
  return out;
}

}  // namespace schedlab
