#include "experiments/lib/report_csv.h"

#include <fmt/format.h>

#include <array>
#include <map>
#include <stdexcept>

#include "experiments/lib/report_format.h"

namespace schedlab {
namespace {

#define SCHEDLAB_DIST_COLUMNS(prefix)                                                                   \
  prefix "_count", prefix "_mean_us", prefix "_min_us", prefix "_p50_us", prefix "_p90_us",              \
      prefix "_p95_us", prefix "_p98_us", prefix "_p99_us", prefix "_max_us"

constexpr std::string_view kColumns[] = {
    "kind", "run", "name", "group", "pid", "policy", "nice", "rt_priority", "prio", "instances", "runs", "elapsed_s",
    "cpu_time_s", "cpu_share", "runnable_time_s", "sleep_time_s", "blocked_time_s",
    "wakeups", "wakeups_per_run", "preemptions", "preemptions_per_run", "switches_in", "switches_in_per_run",
    "migrations", "migrations_per_run", "periods", "periods_per_run", "deadline_misses", "deadline_misses_per_run",
    SCHEDLAB_DIST_COLUMNS("wakeup_latency"), SCHEDLAB_DIST_COLUMNS("runnable_wait"), SCHEDLAB_DIST_COLUMNS("response"),
    "cpu", "busy_s", "idle_s", "busy_pct", "idle_pct", "context_switches", "context_switches_per_run"};

#undef SCHEDLAB_DIST_COLUMNS

// A row under construction: cells by column name, checked against the header.
class Row {
 public:
  Row() {
    for (size_t i = 0; i < std::size(kColumns); ++i) index_.emplace(kColumns[i], i);
    cells_.resize(std::size(kColumns));
  }
  void set(std::string_view column, std::string value) {
    auto it = index_.find(column);
    if (it == index_.end()) throw std::logic_error(fmt::format("CSV: no column '{}'", column));
    cells_[it->second] = std::move(value);
  }
  template <typename T>
  void set_int(std::string_view column, T v) {
    set(column, fmt::format("{}", v));
  }
  std::string line() const {
    std::string out;
    for (size_t i = 0; i < cells_.size(); ++i) {
      if (i) out.push_back(',');
      out += csv_field(cells_[i]);
    }
    out.push_back('\n');
    return out;
  }

 private:
  std::map<std::string_view, size_t> index_;
  std::vector<std::string> cells_;
};

void set_distribution(Row& row, const std::string& prefix, const Summary& s) {
  row.set_int(prefix + "_count", s.count);
  if (s.count == 0) return;  // statistics of nothing are left empty
  row.set(prefix + "_mean_us", us_text(s.mean));
  row.set(prefix + "_min_us", us_text(s.min));
  row.set(prefix + "_p50_us", us_text(s.p50));
  row.set(prefix + "_p90_us", us_text(s.p90));
  row.set(prefix + "_p95_us", us_text(s.p95));
  row.set(prefix + "_p98_us", us_text(s.p98));
  row.set(prefix + "_p99_us", us_text(s.p99));
  row.set(prefix + "_max_us", us_text(s.max));
}

void set_count(Row& row, const std::string& name, uint64_t total, const TaskStats& s, bool per_run) {
  row.set_int(name, total);
  if (per_run) row.set(name + "_per_run", per_run_text(s.per_run(total)));
}

void set_stats(Row& row, const TaskStats& s, bool per_run) {
  row.set_int("runs", s.runs);
  row.set("elapsed_s", seconds_text(s.elapsed));
  row.set("cpu_time_s", seconds_text(s.cpu_time));
  row.set("cpu_share", fraction_text(s.cpu_share()));
  row.set("runnable_time_s", seconds_text(s.runnable_time));
  row.set("sleep_time_s", seconds_text(s.sleep_time));
  row.set("blocked_time_s", seconds_text(s.blocked_time));
  set_count(row, "wakeups", s.wakeups, s, per_run);
  set_count(row, "preemptions", s.preemptions, s, per_run);
  set_count(row, "switches_in", s.switches_in, s, per_run);
  set_count(row, "migrations", s.migrations, s, per_run);
  set_count(row, "periods", s.periods, s, per_run);
  set_count(row, "deadline_misses", s.deadline_misses, s, per_run);
  set_distribution(row, "wakeup_latency", s.wakeup_latency);
  set_distribution(row, "runnable_wait", s.runnable_wait);
  set_distribution(row, "response", s.response);
}

void set_identity(Row& row, Policy policy, int nice, int rt_priority) {
  row.set("policy", policy_long_name(policy));
  row.set_int("nice", nice);
  row.set_int("rt_priority", rt_priority);
  row.set_int("prio", kernel_prio(policy, nice, rt_priority));
}

}  // namespace

std::span<const std::string_view> csv_columns() { return kColumns; }

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

std::string render_csv(const RunSet& set) {
  std::string out;
  for (size_t i = 0; i < std::size(kColumns); ++i) {
    if (i) out.push_back(',');
    out += kColumns[i];
  }
  out.push_back('\n');

  const Aggregate& a = set.aggregate;
  for (const TaskAggregate& t : a.tasks) {
    Row row;
    row.set("kind", "task");
    row.set("run", "all");
    row.set("name", t.name);
    row.set("group", t.group);
    row.set_int("pid", t.pid);
    set_identity(row, t.policy, t.nice, t.rt_priority);
    set_stats(row, t.stats, true);
    out += row.line();
  }
  for (const GroupAggregate& g : a.groups) {
    Row row;
    row.set("kind", "group");
    row.set("run", "all");
    row.set("name", g.name);
    row.set("group", g.name);
    if (g.mixed_policy)
      row.set("policy", "mixed");
    else
      set_identity(row, g.policy, g.nice, g.rt_priority);
    row.set_int("instances", g.instances);
    set_stats(row, g.stats, true);
    out += row.line();
  }
  for (const CpuAggregate& c : a.cpus) {
    Row row;
    row.set("kind", "cpu");
    row.set("run", "all");
    row.set("name", fmt::format("cpu{}", c.cpu));
    row.set_int("cpu", c.cpu);
    row.set_int("runs", c.runs);
    row.set("elapsed_s", seconds_text(c.elapsed));
    row.set("busy_s", seconds_text(c.busy));
    row.set("idle_s", seconds_text(c.idle));
    row.set("busy_pct", pct_text(c.busy_fraction()));
    row.set("idle_pct", pct_text(c.idle_fraction()));
    row.set_int("context_switches", c.context_switches);
    row.set("context_switches_per_run", per_run_text(c.per_run(c.context_switches)));
    out += row.line();
  }

  if (set.runs.size() > 1) {
    for (size_t r = 0; r < set.runs.size(); ++r) {
      const RunResult& run = set.runs[r];
      for (const TaskMetrics& m : run.tasks) {
        Row row;
        row.set("kind", "task");
        row.set_int("run", r);
        row.set("name", m.name);
        row.set("group", m.group.empty() ? m.name : m.group);
        row.set_int("pid", m.pid);
        set_identity(row, m.policy, m.nice, m.rt_priority);
        set_stats(row, task_stats(m, run.elapsed()), false);
        out += row.line();
      }
      for (size_t c = 0; c < run.cpus.size(); ++c) {
        const CpuMetrics& cm = run.cpus[c];
        const Time elapsed = run.elapsed();
        auto frac = [&](Time t) {
          return elapsed.count() > 0 ? static_cast<double>(t.count()) / static_cast<double>(elapsed.count()) : 0.0;
        };
        Row row;
        row.set("kind", "cpu");
        row.set_int("run", r);
        row.set("name", fmt::format("cpu{}", c));
        row.set_int("cpu", c);
        row.set_int("runs", 1);
        row.set("elapsed_s", seconds_text(elapsed));
        row.set("busy_s", seconds_text(cm.busy));
        row.set("idle_s", seconds_text(cm.idle));
        row.set("busy_pct", pct_text(frac(cm.busy)));
        row.set("idle_pct", pct_text(frac(cm.idle)));
        row.set_int("context_switches", cm.context_switches);
        out += row.line();
      }
    }
  }
  return out;
}

}  // namespace schedlab
