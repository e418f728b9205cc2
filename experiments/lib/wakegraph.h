// Who wakes whom: an observer that records, for every (waker, wakee) pair,
// how many wakeups there were and their wakeup latencies (sched_waking ->
// switched in, the recorder's definition), and a Graphviz writer built on
// Boost.Graph's write_graphviz. Chains such as ui -> kworker -> ui show up
// as cycles. A wakeup without a waker task (a timer or an interrupt) comes
// from the node "(timer/irq)".
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "models/kernel/sched/observer.h"
#include "sim/stats.h"
#include "sim/time.h"

namespace schedlab {

inline constexpr const char* kNoWaker = "(timer/irq)";

struct WakeEdge {
  uint64_t count = 0;
  Samples latency;  // ns
};

struct WakeGraph {
  int runs = 0;
  std::map<std::pair<std::string, std::string>, WakeEdge> edges;  // (waker comm, wakee comm)
  // Adds another run's (or graph's) edges; merge in run order for determinism.
  void merge(const WakeGraph& other);
};

// One run's wake graph. Only wakeups whose wakee is switched in inside the
// measured window [warmup, end] count, like the recorder's latency samples.
class WakeGraphRecorder final : public SchedObserver {
 public:
  explicit WakeGraphRecorder(Time warmup) : warmup_(warmup) {}
  void on_waking(Time t, const Task& p, const Task* waker, int target_cpu) override;
  void on_switch(Time t, int cpu, const Task& prev, TaskState prev_state, const Task& next) override;
  // The graph so far, as one run.
  WakeGraph graph() const;

 private:
  struct Pending {
    bool sleeping = false;
    bool waking = false;
    Time since;
    std::string waker;
  };
  Pending& pending(const Task& p);
  Time warmup_;
  std::vector<Pending> tasks_;  // by pid
  WakeGraph graph_;
};

// Graphviz text for one or more titled graphs (compare writes one per
// variant into the same file; `dot -Tpng -O FILE` renders each). Edges are
// labelled "N/run, mean X us, P99 Y us" and drawn thicker for more wakeups.
std::string render_wakegraph_dot(const std::vector<std::pair<std::string, const WakeGraph*>>& graphs);

}  // namespace schedlab
