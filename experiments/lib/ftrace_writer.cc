#include "experiments/lib/ftrace_writer.h"

#include <iterator>

#include "models/kernel/sched/task.h"

namespace schedlab {
namespace {

constexpr size_t kFlushBytes = 1 << 20;

// irqs-off, need-resched, hardirq/softirq, preempt-depth. Scheduler
// tracepoints run with interrupts off under the rq lock.
constexpr const char* kFlagsTask = "d..2";
constexpr const char* kFlagsIrq = "d.h2";

bool is_idle(const Task& p) { return p.is_idle_task || p.pid == 0; }

// sched_switch's prev_state (TP_printk of include/trace/events/sched.h):
// a task switched out while runnable was preempted ("R+", TASK_REPORT_MAX);
// the idle task just stops running ("R").
const char* prev_state_text(const Task& prev, TaskState s) {
  switch (s) {
    case TaskState::kRunning: return is_idle(prev) ? "R" : "R+";
    case TaskState::kInterruptible: return "S";
    case TaskState::kUninterruptible: return "D";
    case TaskState::kDead: return "X";
    case TaskState::kNew: return "R";
  }
  return "R";
}

}  // namespace

std::string FtraceWriter::sanitize_comm(const std::string& comm) {
  if (comm.empty()) return "<...>";
  std::string s = comm;
  for (char& c : s)
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) c = '_';
  return s;
}

FtraceWriter::FtraceWriter(std::ostream& out, Options options) : out_(out), options_(std::move(options)) {
  auto it = std::back_inserter(buf_);
  fmt::format_to(it, "# tracer: nop\n#\n");
  if (!options_.comment.empty() || options_.cpus > 0) {
    std::string comment = options_.comment.empty() ? std::string("schedlab") : options_.comment;
    for (char& c : comment)  // one header line
      if (static_cast<unsigned char>(c) < ' ' || c == 0x7f) c = ' ';
    fmt::format_to(it, "# {}", comment);
    if (options_.cpus > 0) fmt::format_to(it, "   #P:{}", options_.cpus);
    fmt::format_to(it, "\n#\n");
  }
  fmt::format_to(it,
                 "#                                _-----=> irqs-off\n"
                 "#                               / _----=> need-resched\n"
                 "#                              | / _---=> hardirq/softirq\n"
                 "#                              || / _--=> preempt-depth\n"
                 "#                              ||| /     delay\n"
                 "#           TASK-PID     TGID  CPU#  ||||   TIMESTAMP  FUNCTION\n"
                 "#              | |         |     |   ||||      |         |\n");
  if (options_.cpus > 0) curr_.assign(static_cast<size_t>(options_.cpus), nullptr);
}

FtraceWriter::~FtraceWriter() {
  try {
    flush();
  } catch (...) {
  }
}

void FtraceWriter::flush() {
  if (buf_.size() == 0) return;
  out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
  buf_.clear();
}

void FtraceWriter::maybe_flush() {
  if (buf_.size() >= kFlushBytes) flush();
}

const Task* FtraceWriter::current(int cpu) {
  if (cpu < 0) return nullptr;
  if (static_cast<size_t>(cpu) >= curr_.size()) curr_.resize(static_cast<size_t>(cpu) + 1, nullptr);
  return curr_[static_cast<size_t>(cpu)];
}

std::string FtraceWriter::comm_arg(const Task& p, int cpu) const {
  // The kernel's idle tasks are called swapper/<cpu> in event arguments
  // (the line prefix shows them as <idle>).
  if (is_idle(p)) return fmt::format("swapper/{}", cpu);
  return sanitize_comm(p.comm);
}

void FtraceWriter::line_prefix(const Context& ctx, Time t, const char* event) {
  auto it = std::back_inserter(buf_);
  const Task* task = ctx.task && !is_idle(*ctx.task) ? ctx.task : nullptr;
  if (task)
    fmt::format_to(it, "{:>16}-{:<7} ({:>7}) ", sanitize_comm(task->comm), task->pid, task->pid);
  else
    fmt::format_to(it, "{:>16}-{:<7} (-------) ", "<idle>", 0);
  fmt::format_to(it, "[{:03d}] {} ", ctx.cpu, ctx.irq ? kFlagsIrq : kFlagsTask);
  int64_t ns = t.count();
  if (ns < 0) ns = 0;
  if (options_.ns_timestamps)
    fmt::format_to(it, "{:>5}.{:09d}: {}: ", ns / 1000000000, ns % 1000000000, event);
  else {
    int64_t us = (ns + 500) / 1000;  // ns2usecs() rounds
    fmt::format_to(it, "{:>5}.{:06d}: {}: ", us / 1000000, us % 1000000, event);
  }
  ++events_;
}

void FtraceWriter::on_task_new(Time, const Task& p) { new_tasks_.insert(p.pid); }

void FtraceWriter::on_waking(Time t, const Task& p, const Task* waker, int target_cpu) {
  Context ctx;
  if (waker && !is_idle(*waker)) {
    ctx.task = waker;
    ctx.cpu = waker->cpu;
  } else {
    // No waker task: a timer (or other interrupt) on the CPU the task last
    // ran on, interrupting whatever runs there.
    ctx.cpu = p.cpu;
    ctx.task = current(p.cpu);
    ctx.irq = true;
  }
  waking_ctx_[p.pid] = ctx;
  line_prefix(ctx, t, "sched_waking");
  fmt::format_to(std::back_inserter(buf_), "comm={} pid={} prio={} target_cpu={:03d}\n", comm_arg(p, target_cpu), p.pid,
                 p.prio, target_cpu);
  maybe_flush();
}

void FtraceWriter::on_wakeup(Time t, const Task& p, int cpu) {
  Context ctx;
  auto it = waking_ctx_.find(p.pid);
  const bool had_waking = it != waking_ctx_.end();
  if (had_waking) {
    ctx = it->second;
    waking_ctx_.erase(it);
    // A wake-list wake-up completes on the target CPU, in the scheduler
    // IPI's handler (sched_ttwu_pending()), interrupting what runs there.
    if (p.ttwu_enqueue_cpu != ctx.cpu && p.ttwu_enqueue_cpu == cpu) {
      ctx.cpu = cpu;
      ctx.task = current(cpu);
      ctx.irq = true;
    }
  }
  const bool is_new = new_tasks_.erase(p.pid) > 0;
  if (!had_waking) {
    // wake_up_new_task() runs in the parent, on the CPU it forks on (its
    // target_cpu is where the child goes); any other wake-up without a
    // sched_waking line was completed on the target CPU.
    ctx.cpu = is_new ? kForkCpu : cpu;
    ctx.task = current(ctx.cpu);
  }
  line_prefix(ctx, t, is_new ? "sched_wakeup_new" : "sched_wakeup");
  fmt::format_to(std::back_inserter(buf_), "comm={} pid={} prio={} target_cpu={:03d}\n", comm_arg(p, cpu), p.pid, p.prio,
                 cpu);
  maybe_flush();
}

void FtraceWriter::on_switch(Time t, int cpu, const Task& prev, TaskState prev_state, const Task& next) {
  Context ctx;
  ctx.cpu = cpu;
  ctx.task = &prev;
  line_prefix(ctx, t, "sched_switch");
  fmt::format_to(std::back_inserter(buf_),
                 "prev_comm={} prev_pid={} prev_prio={} prev_state={} ==> next_comm={} next_pid={} next_prio={}\n",
                 comm_arg(prev, cpu), prev.pid, prev.prio, prev_state_text(prev, prev_state), comm_arg(next, cpu),
                 next.pid, next.prio);
  // A fair task's PELT signals as it leaves the CPU (put_prev_task() has
  // just updated them), as systrace counters Perfetto draws as a track per
  // task: util_avg and util_est (task_util(), _task_util_est()), the
  // values misfit, EAS and schedutil read. Android kernels show the same
  // through vendor tracepoints (sched_pelt_se, sched_util_est_se), which
  // text traces cannot carry in a form Perfetto reads.
  if (!is_idle(prev) && prev.sched_class == SchedClassId::kFair) {
    for (auto [name, value] : {std::pair<const char*, uint64_t>{"util_avg", prev.se.avg.util_avg},
                               {"util_est", prev.se.avg.util_est.value()}}) {
      line_prefix(ctx, t, "tracing_mark_write");
      fmt::format_to(std::back_inserter(buf_), "C|{}|{}|{}\n", prev.pid, name, value);
    }
  }
  current(cpu);  // grow the table
  curr_[static_cast<size_t>(cpu)] = is_idle(next) ? nullptr : &next;
  maybe_flush();
}

// The CPU's util at each switch, as counters "cpuN util_cfs" and "cpuN
// util_rt" (what schedutil and EAS read), written when they changed.
void FtraceWriter::on_cpu_util(Time t, int cpu, uint64_t util_cfs, uint64_t util_rt) {
  if (cpu_util_.size() <= static_cast<size_t>(cpu)) cpu_util_.resize(static_cast<size_t>(cpu) + 1, {-1, -1});
  auto& last = cpu_util_[static_cast<size_t>(cpu)];
  Context ctx;
  ctx.cpu = cpu;
  ctx.task = current(cpu);
  auto write = [&](const char* name, uint64_t value, int64_t& written) {
    if (static_cast<int64_t>(value) == written) return;
    written = static_cast<int64_t>(value);
    line_prefix(ctx, t, "tracing_mark_write");
    fmt::format_to(std::back_inserter(buf_), "C|0|cpu{} {}|{}\n", cpu, name, value);
  };
  write("util_cfs", util_cfs, last.first);
  write("util_rt", util_rt, last.second);
  maybe_flush();
}

void FtraceWriter::on_migrate(Time t, const Task& p, int from_cpu, int to_cpu) {
  // set_task_cpu() runs in the waker during a wakeup, otherwise (load
  // balancing pulls) on the destination CPU.
  Context ctx;
  auto it = waking_ctx_.find(p.pid);
  if (it != waking_ctx_.end()) {
    ctx = it->second;
  } else {
    ctx.cpu = to_cpu;
    ctx.task = current(to_cpu);
  }
  line_prefix(ctx, t, "sched_migrate_task");
  fmt::format_to(std::back_inserter(buf_), "comm={} pid={} prio={} orig_cpu={} dest_cpu={}\n", comm_arg(p, from_cpu),
                 p.pid, p.prio, from_cpu, to_cpu);
  maybe_flush();
}

void FtraceWriter::on_cpu_idle(Time t, int cpu, int state) {
  Context ctx;  // the idle task
  ctx.cpu = cpu;
  line_prefix(ctx, t, "cpu_idle");
  // state is a u32 printed with %lu: PWR_EVENT_EXIT (-1) is 4294967295.
  fmt::format_to(std::back_inserter(buf_), "state={} cpu_id={}\n", static_cast<uint32_t>(state), cpu);
  maybe_flush();
}

// power:cpu_frequency (include/trace/events/power.h): "state=%lu cpu_id=%lu",
// the frequency in kHz; Perfetto's systrace importer turns it into the CPU
// frequency tracks.
void FtraceWriter::on_cpu_frequency(Time t, int cpu, uint64_t freq_khz) {
  Context ctx;
  ctx.cpu = cpu;
  ctx.task = current(cpu);
  line_prefix(ctx, t, "cpu_frequency");
  fmt::format_to(std::back_inserter(buf_), "state={} cpu_id={}\n", freq_khz, cpu);
  maybe_flush();
}

// workqueue:workqueue_queue_work / _execute_start / _execute_end
// (include/trace/events/workqueue.h), with the work item's name where the
// kernel prints its function.
void FtraceWriter::on_work_item(Time t, const WorkItemEvent& e) {
  auto it = std::back_inserter(buf_);
  Context ctx;
  ctx.cpu = e.cpu < 0 ? 0 : e.cpu;
  switch (e.phase) {
    case WorkItemEvent::Phase::kQueue:
      ctx.task = current(ctx.cpu);
      line_prefix(ctx, t, "workqueue_queue_work");
      fmt::format_to(it, "work struct={} function={} workqueue={} req_cpu={} cpu={}\n", sanitize_comm(std::string(e.work)),
                     sanitize_comm(std::string(e.work)), sanitize_comm(std::string(e.workqueue)),
                     e.req_cpu < 0 ? 8192 : e.req_cpu, ctx.cpu);
      break;
    case WorkItemEvent::Phase::kStart:
    case WorkItemEvent::Phase::kEnd:
      ctx.task = e.worker;
      line_prefix(ctx, t, e.phase == WorkItemEvent::Phase::kStart ? "workqueue_execute_start" : "workqueue_execute_end");
      fmt::format_to(it, "work struct {}: function {}\n", sanitize_comm(std::string(e.work)), sanitize_comm(std::string(e.work)));
      break;
    default:
      return;
  }
  maybe_flush();
}

// gpu_scheduler: drm_sched_job (push) and drm_run_job, as
// include/drm/gpu_scheduler_trace.h names them.
void FtraceWriter::on_drm_job(Time t, const DrmJobEvent& e) {
  const char* name = e.phase == DrmJobEvent::Phase::kPush  ? "drm_sched_job"
                     : e.phase == DrmJobEvent::Phase::kRun ? "drm_run_job"
                     : e.phase == DrmJobEvent::Phase::kDone ? "drm_sched_process_job"
                                                            : nullptr;
  if (!name) return;
  // The context the tracepoint fires in: the submitter's ioctl at push,
  // the scheduler's worker at run_job, the fence work or the job interrupt
  // (hardirq: the task it interrupted shows) at the fence.
  Context ctx;
  ctx.cpu = e.where.cpu >= 0 ? e.where.cpu : 0;
  ctx.irq = e.where.task == nullptr;
  ctx.task = ctx.irq ? current(ctx.cpu) : e.where.task;
  line_prefix(ctx, t, name);
  fmt::format_to(std::back_inserter(buf_), "entity={} id={} ring={}\n", sanitize_comm(std::string(e.entity)), e.job,
                 sanitize_comm(std::string(e.sched)));
  maybe_flush();
}

// rpm_status (include/trace/events/rpm.h, 5.19+): each runtime status change.
void FtraceWriter::on_rpm(Time t, const RpmEvent& e) {
  if (e.kind != RpmEvent::Kind::kStatus) return;  // the D sleeps are in sched_switch / sched_waking already
  static constexpr const char* kStatus[] = {"RPM_ACTIVE", "RPM_RESUMING", "RPM_SUSPENDED", "RPM_SUSPENDING"};
  Context ctx;
  ctx.task = e.task;
  ctx.cpu = e.task ? e.task->cpu : 0;
  line_prefix(ctx, t, "rpm_status");
  fmt::format_to(std::back_inserter(buf_), "{} status={}\n", sanitize_comm(std::string(e.device)),
                 e.status >= 0 && e.status < 4 ? kStatus[e.status] : "RPM_INVALID");
  maybe_flush();
}

// FrameTimeline's verdict as counters Perfetto draws as tracks (systrace
// tracing_mark_write "C|pid|name|value"): 1 while a presented or dropped
// frame was late, back to 0 with the next on-time one.
void FtraceWriter::on_frame(Time t, const FrameEvent& e) {
  Context ctx;
  ctx.cpu = 0;
  ctx.task = current(0);
  const std::string layer = sanitize_comm(std::string(e.layer));
  for (auto [what, v] : {std::pair{"app_deadline_missed", e.app_missed}, {"sf_deadline_missed", e.sf_missed},
                         {"buffer_stuffing", e.buffer_stuffing}, {"dropped", e.dropped}}) {
    line_prefix(ctx, t, "tracing_mark_write");
    fmt::format_to(std::back_inserter(buf_), "C|0|{} {}|{}\n", layer, what, v ? 1 : 0);
  }
  maybe_flush();
}

void FtraceWriter::on_prio_change(Time t, const Task& p, int old_prio, int new_prio, bool pi) {
  // Only rt_mutex_setprio() traces; a setscheduler change shows in the
  // task's next sched_switch prio.
  if (!pi) return;
  Context ctx;
  ctx.cpu = p.cpu;
  ctx.task = current(p.cpu);
  line_prefix(ctx, t, "sched_pi_setprio");
  fmt::format_to(std::back_inserter(buf_), "comm={} pid={} oldprio={} newprio={}\n", comm_arg(p, p.cpu), p.pid, old_prio,
                 new_prio);
  maybe_flush();
}

}  // namespace schedlab
