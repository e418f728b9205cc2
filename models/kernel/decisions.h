// How often the kernel model took a decision for one reason
// (`schedlab run --why`): the reasons --log debug prints, counted.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace schedlab {

struct DecisionCount {
  std::string kind;    // one of kDecisionKinds
  std::string group;   // the task group (for idle states: the CPU, "cpu3")
  std::string reason;
  uint64_t count = 0;
  bool operator==(const DecisionCount&) const = default;
};

// The kinds, in the order reports list them: placement of a woken task;
// the preemption check of a task woken, migrated or changing class
// (wakeup_preempt()); a tick's reschedule; a pick among several; an idle
// state; a load-balance pass (newly idle, idle or busy), per CPU; where
// in its slack window a range hrtimer (a sleep, the autosuspend timer)
// ran, per task group or device.
inline constexpr std::array<std::string_view, 7> kDecisionKinds = {"placement", "preemption check", "tick", "pick",
                                                                   "idle state", "balance", "timer slack"};

// Sums counts by (kind, group, reason) and lists them in report order:
// kind, group, count descending, reason. Used by the kernel for one run
// and by the reports for many.
class DecisionTally {
 public:
  void add(std::string_view kind, const std::string& group, const std::string& reason, uint64_t n) {
    counts_[{rank(kind), group, reason}] += n;
  }
  void add(const std::vector<DecisionCount>& counts) {
    for (const DecisionCount& d : counts) add(d.kind, d.group, d.reason, d.count);
  }
  bool empty() const { return counts_.empty(); }
  std::vector<DecisionCount> sorted() const {
    std::vector<DecisionCount> out;
    out.reserve(counts_.size());
    for (const auto& [key, n] : counts_) {
      const auto& [kind, group, reason] = key;
      out.push_back({std::string(kDecisionKinds[kind]), group, reason, n});
    }
    // counts_ is ordered by (kind, group, reason): a stable sort by count
    // within each (kind, group) keeps the reasons' order among equals.
    std::stable_sort(out.begin(), out.end(), [](const DecisionCount& a, const DecisionCount& b) {
      if (a.kind != b.kind) return rank(a.kind) < rank(b.kind);
      if (a.group != b.group) return a.group < b.group;
      return a.count > b.count;
    });
    return out;
  }

  static size_t rank(std::string_view kind) {
    size_t i = 0;
    while (i < kDecisionKinds.size() && kDecisionKinds[i] != kind) ++i;
    return i;
  }
  // Each (kind, group)'s decisions in all, what a reason's share is of.
  using GroupTotals = std::map<std::pair<std::string, std::string>, uint64_t>;
  static GroupTotals group_totals(const std::vector<DecisionCount>& counts) {
    GroupTotals totals;
    for (const DecisionCount& d : counts) totals[{d.kind, d.group}] += d.count;
    return totals;
  }

 private:
  std::map<std::tuple<size_t, std::string, std::string>, uint64_t> counts_;
};

}  // namespace schedlab
