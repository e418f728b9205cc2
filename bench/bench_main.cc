// schedlab_bench: measures the event core.
//
// The classic "hold" model: with n events pending, repeatedly pop the
// earliest and push a new one at (popped time + random increment). The
// increments are drawn once, up front, into an array so the RNG is not
// timed. The same loop runs against
//   - the event core (sim::EventQueue: slots, handler dispatch, tiers), and
//   - a bare 4-ary heap of {int64 time, uint64 seq} in a std::vector (no
//     slots, no handlers, no indirection): the floor for this shape of work.
// The ratio event-core rate / bare rate says what the event core's features
// cost (target: >= 0.3). The bare rate is the better of two formulations of
// the same heap (see BareHeap). Both loops pop the same times in the same order;
// a checksum over popped times verifies it.
//
// Each measurement runs a fixed number of operations, 3 times, and keeps the
// best. Output is ONE line on stdout:
//   event_core_Mops@16=.. bare_Mops@16=.. ratio@16=.. ... whole-run: ..
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "models/config/config.h"
#include "models/system.h"
#include "sim/event_queue.h"
#include "sim/memory.h"
#include "sim/rng.h"
#include "sim/time.h"

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kSizes[] = {16, 256, 4096};
constexpr uint64_t kDefaultOps = 2'000'000;  // per measurement; whole bench ~3 s on an idle core
constexpr int kDefaultReps = 3;
constexpr size_t kIncrements = 1 << 16;  // power of two: index with a mask

// Increments in ns, exponential with mean 1 us (plus 1 ns so time always
// advances a little, as it does in the simulator).
std::vector<int64_t> make_increments() {
  schedlab::RngStream rng(20240601, "bench.hold");
  std::vector<int64_t> v(kIncrements);
  for (auto& x : v) x = 1 + static_cast<int64_t>(rng.exponential(1000.0));
  return v;
}

struct Result {
  double seconds;
  uint64_t checksum;  // sum of popped times: identical for both loops
};

// ---------------------------------------------------------------------------
// Event core.
class NullHandler : public schedlab::EventHandler {
 public:
  void on_event(uint64_t tag) override { sum += tag; }
  uint64_t sum = 0;
};

Result hold_event_core(int n, uint64_t ops, const std::vector<int64_t>& incr) {
  using schedlab::Time;
  schedlab::EventQueue q;
  q.reserve(static_cast<size_t>(n) + 1);
  NullHandler h;
  const size_t mask = incr.size() - 1;
  size_t k = 0;
  for (int i = 0; i < n; ++i) q.post(Time::ns(incr[k++ & mask]), 0, &h, 1);
  // Warm-up: settle the heap shape and caches; not timed.
  for (uint64_t i = 0; i < 10 * static_cast<uint64_t>(n); ++i) {
    Time now = q.next_time();
    q.dispatch_next();
    q.post(now + Time::ns(incr[k++ & mask]), 0, &h, 1);
  }
  uint64_t checksum = 0;
  auto t0 = Clock::now();
  for (uint64_t i = 0; i < ops; ++i) {
    Time now = q.next_time();
    q.dispatch_next();
    checksum += static_cast<uint64_t>(now.count());
    q.post(now + Time::ns(incr[k++ & mask]), 0, &h, 1);
  }
  auto t1 = Clock::now();
  return {std::chrono::duration<double>(t1 - t0).count(), checksum};
}

// ---------------------------------------------------------------------------
// Bare 4-ary heap: the same ordering rule (time, then posting sequence).
//
// How the child selection is written moves the bare rate by up to 2x:
// GCC -O3 (-fsplit-paths) turns the obvious `a.time != b.time ? .. : ..`
// into unpredictable branches, while clang prefers a branch-free select.
// So the bare figure is the best of two plain formulations, each of which is
// fast on one of the compilers: both branch only on the rare equal-time case
// and pick the earlier time with a conditional move (kMaskSelect: an
// explicit mask, which clang keeps branch-free). The yardstick is then the
// fastest plain heap, not an accident of code generation.
template <bool kMaskSelect>
class BareHeap {
 public:
  struct Item {
    int64_t time;
    uint64_t seq;
  };
  void reserve(size_t n) { v_.reserve(n); }
  const Item& top() const { return v_.front(); }

  void push(int64_t time) {
    Item e{time, seq_++};
    uint32_t pos = static_cast<uint32_t>(v_.size());
    v_.push_back(e);
    while (pos > 0) {
      uint32_t parent = (pos - 1) / 4;
      if (!less(e, v_[parent])) break;
      v_[pos] = v_[parent];
      pos = parent;
    }
    v_[pos] = e;
  }

  void pop() {
    Item e = v_.back();
    v_.pop_back();
    const uint32_t n = static_cast<uint32_t>(v_.size());
    if (n == 0) return;
    uint32_t pos = 0;
    for (;;) {
      uint32_t first = pos * 4 + 1;
      if (first >= n) break;
      uint32_t best = first;
      uint32_t end = first + 4 < n ? first + 4 : n;
      for (uint32_t c = first + 1; c < end; ++c) {
        const Item& a = v_[c];
        const Item& b = v_[best];
        if (a.time == b.time) [[unlikely]] {
          if (a.seq < b.seq) best = c;
        } else if constexpr (kMaskSelect) {
          best += (c - best) & (0u - static_cast<uint32_t>(a.time < b.time));
        } else {
          best = a.time < b.time ? c : best;
        }
      }
      if (!less(v_[best], e)) break;
      v_[pos] = v_[best];
      pos = best;
    }
    v_[pos] = e;
  }

 private:
  static bool less(const Item& a, const Item& b) { return a.time != b.time ? a.time < b.time : a.seq < b.seq; }
  std::vector<Item> v_;
  uint64_t seq_ = 0;
};

template <bool kMaskSelect>
Result hold_bare(int n, uint64_t ops, const std::vector<int64_t>& incr) {
  BareHeap<kMaskSelect> q;
  q.reserve(static_cast<size_t>(n) + 1);
  const size_t mask = incr.size() - 1;
  size_t k = 0;
  for (int i = 0; i < n; ++i) q.push(incr[k++ & mask]);
  for (uint64_t i = 0; i < 10 * static_cast<uint64_t>(n); ++i) {
    int64_t now = q.top().time;
    q.pop();
    q.push(now + incr[k++ & mask]);
  }
  uint64_t checksum = 0;
  auto t0 = Clock::now();
  for (uint64_t i = 0; i < ops; ++i) {
    int64_t now = q.top().time;
    q.pop();
    checksum += static_cast<uint64_t>(now);
    q.push(now + incr[k++ & mask]);
  }
  auto t1 = Clock::now();
  return {std::chrono::duration<double>(t1 - t0).count(), checksum};
}

// ---------------------------------------------------------------------------
// bench_whole_run(): one complete run of a scenario in configs/scenarios
// through the model, best of three, reporting events per wall second and
// simulated seconds per wall second.
struct WholeRunResult {
  std::string scenario;      // which scenario ran
  uint64_t events = 0;       // events dispatched
  double wall_seconds = 0;   // best of the repetitions
  double sim_seconds = 0;    // simulated time covered
};

std::optional<WholeRunResult> bench_whole_run(const char* scenario, schedlab::Time duration) {
  const std::string path = std::string(SCHEDLAB_SOURCE_DIR) + "/configs/scenarios/" + scenario + ".yaml";
  schedlab::ScenarioParams params;
  try {
    params = schedlab::load_scenario_file(path);
    params.duration = duration;  // long enough that set-up does not count
  } catch (const std::exception& e) {
    std::fprintf(stderr, "whole-run: %s\n", e.what());
    return std::nullopt;
  }
  WholeRunResult best;
  best.scenario = scenario;
  best.wall_seconds = 1e300;
  for (int rep = 0; rep < 3; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    schedlab::System sys(params, params.seed);
    sys.run();
    auto t1 = std::chrono::steady_clock::now();
    double wall = std::chrono::duration<double>(t1 - t0).count();
    if (wall < best.wall_seconds) {
      best.wall_seconds = wall;
      best.events = sys.result().events;
      best.sim_seconds = params.duration.to_s();
    }
  }
  return best;
}

std::string format_whole_run(const std::optional<WholeRunResult>& r) {
  if (!r) return "whole-run: n/a";
  char buf[256];
  std::snprintf(buf, sizeof buf, "whole-run: scenario=%s events=%llu wall_s=%.3f Mevents_per_s=%.2f sim_s_per_wall_s=%.2f",
                r->scenario.c_str(), static_cast<unsigned long long>(r->events), r->wall_seconds,
                r->wall_seconds > 0 ? static_cast<double>(r->events) / r->wall_seconds / 1e6 : 0.0,
                r->wall_seconds > 0 ? r->sim_seconds / r->wall_seconds : 0.0);
  return buf;
}

void usage(FILE* out) {
  std::fprintf(out,
               "usage: schedlab_bench [--ops N] [--reps N] [--whole-run-only] [--help]\n"
               "\n"
               "Measures the event core with the hold model (pop the earliest event, push one\n"
               "at now + a pre-drawn random increment) at 16, 256 and 4096 pending events, next\n"
               "to a bare 4-ary heap of {time, seq} doing the same work (best of two plain\n"
               "formulations). Each figure is the best of --reps runs of --ops pop+push\n"
               "operations (defaults: %d x %llu).\n"
               "\n"
               "Prints one line: event_core_Mops@N= bare_Mops@N= ratio@N= for each N (ratio =\n"
               "event core rate / bare rate; target >= 0.3), then the whole-run figures.\n"
               "--whole-run-only skips the event-core figures (for profiling a whole run).\n",
               kDefaultReps, static_cast<unsigned long long>(kDefaultOps));
}

bool parse_positive(const char* s, uint64_t& out) {
  char* end = nullptr;
  unsigned long long v = std::strtoull(s, &end, 10);
  if (end == s || *end != '\0' || v == 0) return false;
  out = v;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t ops = kDefaultOps;
  uint64_t reps = kDefaultReps;
  bool whole_run_only = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--whole-run-only")) {
      whole_run_only = true;
      continue;
    }
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      usage(stdout);
      return 0;
    }
    if ((!std::strcmp(argv[i], "--ops") || !std::strcmp(argv[i], "--reps")) && i + 1 < argc) {
      uint64_t& target = argv[i][2] == 'o' ? ops : reps;
      if (!parse_positive(argv[++i], target)) {
        std::fprintf(stderr, "schedlab_bench: %s needs a positive integer\n", argv[i - 1]);
        return 2;
      }
      continue;
    }
    std::fprintf(stderr, "schedlab_bench: unknown argument '%s'\n", argv[i]);
    usage(stderr);
    return 2;
  }

  schedlab::retain_freed_memory();  // as the schedlab CLI does: later runs reuse the pages
  const std::vector<int64_t> incr = make_increments();
  std::string line;
  char buf[160];
  for (int n : whole_run_only ? std::vector<int>{} : std::vector<int>(std::begin(kSizes), std::end(kSizes))) {
    double best_core = 1e300, best_bare = 1e300;
    for (uint64_t r = 0; r < reps; ++r) {
      Result core = hold_event_core(n, ops, incr);
      Result bare_cmov = hold_bare<false>(n, ops, incr);
      Result bare_mask = hold_bare<true>(n, ops, incr);
      if (core.checksum != bare_cmov.checksum || core.checksum != bare_mask.checksum) {
        std::fprintf(stderr, "schedlab_bench: event core and bare heap popped different times at n=%d\n", n);
        return 1;
      }
      best_core = std::min(best_core, core.seconds);
      best_bare = std::min({best_bare, bare_cmov.seconds, bare_mask.seconds});
    }
    double core_mops = static_cast<double>(ops) / best_core / 1e6;
    double bare_mops = static_cast<double>(ops) / best_bare / 1e6;
    std::snprintf(buf, sizeof buf, "%sevent_core_Mops@%d=%.2f bare_Mops@%d=%.2f ratio@%d=%.2f", line.empty() ? "" : " ",
                  n, core_mops, n, bare_mops, n, core_mops / bare_mops);
    line += buf;
  }
  line += " ";
  // The foundation's standard 2-CPU, 10-task scenario (target >= 2000x)
  // and the 8-CPU phone with ~40 tasks (target >= 1000x).
  line += format_whole_run(bench_whole_run("mixed_2cpu", schedlab::Time::s(60)));
  line += " ";
  line += format_whole_run(bench_whole_run("phone_ui_40", schedlab::Time::s(30)));
  std::printf("%s\n", line.c_str());
  return 0;
}
