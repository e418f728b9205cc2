// A SchedObserver that writes the run as ftrace text (the "systrace" format
// of /sys/kernel/tracing/trace with record-tgid), which Perfetto's systrace
// importer and catapult's viewer open:
//
//   # tracer: nop
//   ...
//             hog-0-2       (      2) [000] d..2     0.004000000: sched_switch: prev_comm=hog-0 ...
//
// Events: sched_switch, sched_waking, sched_wakeup, sched_wakeup_new,
// sched_migrate_task, sched_pi_setprio, cpu_idle, each printed with the
// kernel's TP_printk format (include/trace/events/sched.h, power.h). The
// line prefix follows kernel/trace/trace_output.c trace_print_context():
// "%16s-%-7d (%7d) [%03d] <4 flags> %5lu.%09lu: ". Timestamps have 9
// decimals (nanoseconds; Perfetto's tokenizer accepts any number of
// decimals) or, with ns_timestamps = false, 6 like ftrace itself. See
// docs/outputs.md for the context each event is attributed to.
//
// Output is buffered and handed to `out` in large chunks; the caller makes
// the file appear atomically (AtomicFile).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "models/kernel/sched/observer.h"
#include "sim/time.h"

namespace schedlab {

class FtraceWriter : public SchedObserver {
 public:
  struct Options {
    bool ns_timestamps = true;  // 9 decimals; false: 6 (microseconds, rounded like ns2usecs)
    int cpus = 0;               // > 0: "#P:<cpus>" in the header comment
    std::string comment;        // one "# <comment>" line in the header (scenario, run, seed)
  };

  explicit FtraceWriter(std::ostream& out) : FtraceWriter(out, Options()) {}
  FtraceWriter(std::ostream& out, Options options);
  ~FtraceWriter() override;
  FtraceWriter(const FtraceWriter&) = delete;
  FtraceWriter& operator=(const FtraceWriter&) = delete;

  // Hands everything buffered to the stream (also done by the destructor).
  void flush();
  uint64_t events() const { return events_; }

  void on_task_new(Time t, const Task& p) override;
  void on_waking(Time t, const Task& p, const Task* waker, int target_cpu) override;
  void on_wakeup(Time t, const Task& p, int cpu) override;
  void on_switch(Time t, int cpu, const Task& prev, TaskState prev_state, const Task& next) override;
  bool wants_cpu_util() const override { return true; }
  void on_cpu_util(Time t, int cpu, uint64_t util_cfs, uint64_t util_rt) override;
  void on_migrate(Time t, const Task& p, int from_cpu, int to_cpu) override;
  void on_cpu_idle(Time t, int cpu, int state) override;
  void on_prio_change(Time t, const Task& p, int old_prio, int new_prio, bool pi) override;
  void on_cpu_frequency(Time t, int cpu, uint64_t freq_khz) override;
  void on_work_item(Time t, const WorkItemEvent& e) override;
  void on_drm_job(Time t, const DrmJobEvent& e) override;
  void on_rpm(Time t, const RpmEvent& e) override;
  void on_frame(Time t, const FrameEvent& e) override;

  // The comm as written: whitespace and control characters become '_' (the
  // format separates fields by spaces), an empty comm becomes "<...>".
  static std::string sanitize_comm(const std::string& comm);

 private:
  // Who a line is attributed to: the task running on `cpu` (nullptr: idle).
  struct Context {
    const Task* task = nullptr;
    int cpu = 0;
    bool irq = false;  // hardirq context (a wakeup without a waker task)
  };
  const Task* current(int cpu);
  void line_prefix(const Context& ctx, Time t, const char* event);
  void maybe_flush();
  std::string comm_arg(const Task& p, int cpu) const;

  std::ostream& out_;
  Options options_;
  fmt::memory_buffer buf_;
  std::vector<const Task*> curr_;                  // per CPU; nullptr = the idle task
  std::vector<std::pair<int64_t, int64_t>> cpu_util_;  // per CPU: last util_cfs, util_rt written (-1: none)
  std::unordered_map<int, Context> waking_ctx_;    // pid -> context of its pending sched_waking
  std::unordered_set<int> new_tasks_;              // pids not woken since on_task_new
  uint64_t events_ = 0;
};

}  // namespace schedlab
