#include "experiments/lib/sched_map.h"

#include <iterator>

#include <fmt/format.h>

#include "experiments/lib/aggregate.h"
#include "experiments/lib/ftrace_writer.h"
#include "models/kernel/sched/task.h"

namespace schedlab {
namespace {

constexpr size_t kFlushBytes = 1 << 20;

bool is_idle(const Task& p) { return p.is_idle_task || p.pid == 0; }

// What the legend adds after comm:pid: the policy, unless SCHED_OTHER at nice 0.
std::string policy_note(const Task& p) {
  const int nice = p.static_prio - kDefaultPrio;
  switch (p.policy) {
    case Policy::kFifo:
    case Policy::kRr: return fmt::format(" ({} {})", policy_long_name(p.policy), p.rt_priority);
    case Policy::kNormal: return nice == 0 ? std::string() : fmt::format(" (nice {})", nice);
    default: return fmt::format(" ({}{})", policy_long_name(p.policy), nice == 0 ? "" : fmt::format(" nice {}", nice));
  }
}

}  // namespace

std::string SchedMapWriter::short_name(size_t n) {
  return fmt::format("{}{}", static_cast<char>('A' + n % 26), n / 26);
}

SchedMapWriter::SchedMapWriter(std::ostream& out, Options options)
    : out_(out), options_(std::move(options)), curr_(static_cast<size_t>(std::max(options_.cpus, 1)), ".") {
  std::string comment = options_.comment.empty() ? std::string("schedlab") : options_.comment;
  for (char& c : comment)  // one header line
    if (static_cast<unsigned char>(c) < ' ' || c == 0x7f) c = ' ';
  fmt::format_to(std::back_inserter(buf_),
                 "# {}\n"
                 "# sched map (the layout of `perf sched map`): one line per context switch, a column per CPU\n"
                 "# (cpu0 first) with the task it runs, . = idle, * = the CPU that switched; a task's first\n"
                 "# switch-in names it (short name => comm:pid, and its policy unless SCHED_OTHER at nice 0).\n",
                 comment);
}

SchedMapWriter::~SchedMapWriter() { flush(); }

void SchedMapWriter::flush() {
  if (buf_.empty()) return;
  out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
  buf_.clear();
}

void SchedMapWriter::on_switch(Time t, int cpu, const Task& /*prev*/, TaskState /*prev_state*/, const Task& next) {
  if (cpu < 0 || static_cast<size_t>(cpu) >= curr_.size()) return;
  ++switches_;
  bool named_now = false;
  if (is_idle(next)) {
    curr_[static_cast<size_t>(cpu)] = ".";
  } else {
    auto [it, fresh] = names_.try_emplace(next.pid);
    if (fresh) it->second = short_name(names_.size() - 1);
    named_now = fresh;
    curr_[static_cast<size_t>(cpu)] = it->second;
  }
  auto out = std::back_inserter(buf_);
  for (size_t c = 0; c < curr_.size(); ++c)
    fmt::format_to(out, "{}{:<2} ", static_cast<int>(c) == cpu ? '*' : ' ', curr_[c]);
  const int64_t ns = t.count();  // perf's timestamp__scnprintf_usec(): microseconds, truncated
  fmt::format_to(out, "  {:>12} secs", fmt::format("{}.{:06}", ns / 1000000000, (ns % 1000000000) / 1000));
  if (named_now)
    fmt::format_to(out, " {} => {}:{}{}", curr_[static_cast<size_t>(cpu)], FtraceWriter::sanitize_comm(next.comm),
                   next.pid, policy_note(next));
  buf_ += '\n';
  if (buf_.size() >= kFlushBytes) flush();
}

}  // namespace schedlab
