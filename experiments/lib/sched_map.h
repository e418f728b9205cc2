// A SchedObserver that writes a run's context switches in the layout of
// `perf sched map` (tools/perf/builtin-sched.c, map_switch_event()), the
// view kernel engineers use to see at a glance which task each CPU runs:
//
//     *A0  .   .   .          0.000500 secs A0 => ui_thread:3 (nice -10)
//      A0 *B0  .   .          0.001000 secs B0 => surfaceflinger:4 (SCHED_FIFO 2)
//      A0  B0 *.   .          0.001250 secs
//
// One line per sched_switch, a column per CPU (cpu0 first): the short name
// of the task it runs, "." for idle; "*" marks the CPU that switched, and
// a task's first switch-in names it ("A0 => comm:pid"). As in perf, short
// names run A0..Z0, A1..Z1, ..., Z9; beyond those 260 this writer goes on
// with A10..Z99 (perf wraps around and reuses names), which widens the
// columns of the lines that show them. The legend adds the policy where it
// is not SCHED_OTHER at nice 0 (perf prints comm:pid only), so a teaching
// run shows who may preempt whom. Timestamps are seconds with 6 decimals,
// perf's "%12s secs".
//
// Output is buffered and handed to `out` in large chunks; the caller makes
// the file appear atomically (AtomicFile).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/kernel/sched/observer.h"
#include "sim/time.h"

namespace schedlab {

class SchedMapWriter : public SchedObserver {
 public:
  struct Options {
    int cpus = 1;         // columns
    std::string comment;  // one "# <comment>" line at the top (scenario, run, seed)
  };

  SchedMapWriter(std::ostream& out, Options options);
  ~SchedMapWriter() override;
  SchedMapWriter(const SchedMapWriter&) = delete;
  SchedMapWriter& operator=(const SchedMapWriter&) = delete;

  // Hands everything buffered to the stream (also done by the destructor).
  void flush();
  uint64_t switches() const { return switches_; }

  void on_switch(Time t, int cpu, const Task& prev, TaskState prev_state, const Task& next) override;

  // The n-th short name (0-based): A0, B0, ..., Z0, A1, ..., Z9, A10, ...
  static std::string short_name(size_t n);

 private:
  std::ostream& out_;
  Options options_;
  std::string buf_;
  uint64_t switches_ = 0;
  std::vector<std::string> curr_;                   // per CPU: the running task's short name ("." idle)
  std::unordered_map<int, std::string> names_;      // pid -> short name
};

}  // namespace schedlab
