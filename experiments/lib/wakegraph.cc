#include "experiments/lib/wakegraph.h"

// Boost 1.74's graphviz writer walks edges through a boost::optional that
// GCC 12 believes may be uninitialized (a known false positive); silence it
// for this file only rather than for the build.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <fmt/format.h>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/graphviz.hpp>
#include <cmath>
#include <set>
#include <sstream>

#include "models/kernel/sched/task.h"

namespace schedlab {

void WakeGraph::merge(const WakeGraph& other) {
  runs += other.runs;
  for (const auto& [key, e] : other.edges) {
    WakeEdge& mine = edges[key];
    mine.count += e.count;
    mine.latency.append(e.latency);
  }
}

WakeGraphRecorder::Pending& WakeGraphRecorder::pending(const Task& p) {
  const size_t i = static_cast<size_t>(p.pid);
  if (i >= tasks_.size()) tasks_.resize(i + 1);
  return tasks_[i];
}

void WakeGraphRecorder::on_waking(Time t, const Task& p, const Task* waker, int target_cpu) {
  Pending& s = pending(p);
  // A task woken before it left the CPU never slept: not a wakeup (as in the recorder).
  if (!s.sleeping) return;
  s.sleeping = false;
  s.waking = true;
  s.since = t;
  s.waker = (waker == nullptr || waker->is_idle_task) ? std::string(kNoWaker) : waker->comm;
}

void WakeGraphRecorder::on_switch(Time t, int cpu, const Task& prev, TaskState prev_state, const Task& next) {
  if (!prev.is_idle_task)
    pending(prev).sleeping = prev_state == TaskState::kInterruptible || prev_state == TaskState::kUninterruptible;
  if (next.is_idle_task) return;
  Pending& s = pending(next);
  if (!s.waking) return;
  s.waking = false;
  if (t < warmup_) return;
  WakeEdge& e = graph_.edges[{s.waker, next.comm}];
  ++e.count;
  e.latency.add((t - s.since).count());
}

WakeGraph WakeGraphRecorder::graph() const {
  WakeGraph g = graph_;
  g.runs = 1;
  return g;
}

namespace {

struct VertexProps {
  std::string name;
};
struct EdgeProps {
  std::string label;
  double penwidth = 1;
};
using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, VertexProps, EdgeProps>;

// DOT string literal: quotes and backslashes escaped, newlines as DOT's "\n".
std::string dot_quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string us(double ns) {
  const double v = ns / 1e3;
  return std::fabs(v) < 100 ? fmt::format("{:.2f}", v) : fmt::format("{:.1f}", v);
}

}  // namespace

std::string render_wakegraph_dot(const std::vector<std::pair<std::string, const WakeGraph*>>& graphs) {
  std::ostringstream out;
  for (const auto& [title, wg] : graphs) {
    Graph g;
    std::map<std::string, Graph::vertex_descriptor> vertex;
    std::set<std::string> names;
    for (const auto& [key, e] : wg->edges) {
      names.insert(key.first);
      names.insert(key.second);
    }
    for (const std::string& n : names) vertex[n] = boost::add_vertex(VertexProps{n}, g);
    const double runs = wg->runs > 0 ? wg->runs : 1;
    for (const auto& [key, e] : wg->edges) {
      const Summary s = e.latency.summarize();
      const double per_run = static_cast<double>(e.count) / runs;
      EdgeProps p;
      p.label = fmt::format("{}/run\nmean {} us\nP99 {} us",
                            per_run < 100 ? fmt::format("{:.2f}", per_run) : fmt::format("{:.1f}", per_run),
                            us(s.mean), us(s.p99));
      // Width grows with the log of the rate, so busy edges stand out without
      // swamping the picture.
      p.penwidth = 1.0 + std::log10(1.0 + per_run);
      boost::add_edge(vertex[key.first], vertex[key.second], p, g);
    }
    out << "// " << title << "\n";
    boost::write_graphviz(
        out, g,
        [&g](std::ostream& os, Graph::vertex_descriptor v) {
          const std::string& n = g[v].name;
          os << "[label=" << dot_quote(n) << (n == kNoWaker ? ", shape=box, style=dashed" : ", shape=ellipse") << "]";
        },
        [&g](std::ostream& os, Graph::edge_descriptor e) {
          os << "[label=" << dot_quote(g[e].label) << ", penwidth=" << fmt::format("{:.2f}", g[e].penwidth) << "]";
        },
        [&title, &wg](std::ostream& os) {
          os << "label=" << dot_quote(fmt::format("{}: who wakes whom ({} run{})", title, wg->runs,
                                                  wg->runs == 1 ? "" : "s"))
             << ";\nlabelloc=t;\nrankdir=LR;\nnode [fontname=\"Helvetica\"];\nedge [fontname=\"Helvetica\", "
                "fontsize=10];\n";
        });
  }
  return out.str();
}

}  // namespace schedlab
