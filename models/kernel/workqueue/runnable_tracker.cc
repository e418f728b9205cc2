#include "models/kernel/workqueue/runnable_tracker.h"

#include <algorithm>
#include <ranges>

#include "models/kernel/sched/task.h"

namespace schedlab {

void RunnableTracker::track(const Task& p) {
  if (states_.size() <= p.index) states_.resize(p.index + 1);
  State& s = states_[p.index];
  if (s.idle_cpu >= 0) --waiting_on_idle_;
  s = State{};
  s.tracked = true;
  s.history.reserve(kMaxHistory);  // its whole length now: the hot loop does not allocate
  s.history.push_back({Time::zero(), {}, false, false});
}

RunnableTracker::State* RunnableTracker::state(const Task& p) {
  if (p.is_idle_task || p.index >= states_.size() || !states_[p.index].tracked) return nullptr;
  return &states_[p.index];
}

const RunnableTracker::State* RunnableTracker::state(const Task& p) const {
  if (p.is_idle_task || p.index >= states_.size() || !states_[p.index].tracked) return nullptr;
  return &states_[p.index];
}

RunnableWait RunnableTracker::cum_at(const State& s, Time t) const {
  // The last breakpoint at or before t: `after` indexes the first one past
  // t (breakpoints are in time order).
  const auto indices = std::views::iota(size_t{0}, s.history.size());
  const size_t after = static_cast<size_t>(
      std::ranges::partition_point(indices, [&](size_t i) { return s.history[i].t <= t; }) - indices.begin());
  // Older than the history kept: counted from its oldest breakpoint on.
  if (after == 0) return s.history.front().cum;
  const Breakpoint& b = s.history[after - 1];
  RunnableWait w = b.cum;
  if (b.runnable) w.runnable += t - b.t;
  if (b.on_idle_cpu) w.on_idle_cpu += t - b.t;
  return w;
}

void RunnableTracker::set_state(State& s, Time t, bool runnable, int idle_cpu) {
  if (s.runnable == runnable && s.idle_cpu == idle_cpu) return;
  waiting_on_idle_ += (idle_cpu >= 0) - (s.idle_cpu >= 0);
  s.runnable = runnable;
  s.idle_cpu = idle_cpu;
  // Two changes in one instant (the CPU leaves idle and switches to the
  // waiter): the later state replaces the earlier, so a wake-up onto an
  // idle CPU costs the history no more breakpoints than any other.
  if (Breakpoint& last = s.history.back(); last.t == t) {
    last.runnable = runnable;
    last.on_idle_cpu = idle_cpu >= 0;
    return;
  }
  RunnableWait cum = cum_at(s, t);
  if (s.history.size() == kMaxHistory) s.history.pop_front();  // the oldest goes first: the ring never grows past it
  s.history.push_back({t, cum, runnable, idle_cpu >= 0});
}

void RunnableTracker::on_wakeup(Time t, const Task& p, int cpu) {
  State* s = state(p);
  if (!s || s->on_cpu) return;  // woken before it switched out: it never left the CPU
  // sched_wakeup onto a CPU still in its idle task: runnable there until
  // that CPU has left idle and switches (try_to_wake_up() with TTWU_QUEUE
  // off, or a wake-up whose IPI has yet to bring the CPU out).
  set_state(*s, t, true, cpu_idle(cpu) ? cpu : -1);
}

void RunnableTracker::on_switch(Time t, int cpu, const Task& prev, TaskState prev_state, const Task& next) {
  if (static_cast<size_t>(cpu) >= cpu_busy_.size()) cpu_busy_.resize(std::max<size_t>(cpu + 1, 64), 0);
  cpu_busy_[cpu] = !next.is_idle_task;
  // The CPU left its idle task: whoever waited for it there now waits for
  // `next` (or runs, below).
  if (prev.is_idle_task && waiting_on_idle_ > 0)
    for (State& s : states_)
      if (s.idle_cpu == cpu) set_state(s, t, s.runnable, -1);
  if (State* s = state(prev)) {
    s->on_cpu = false;
    set_state(*s, t, prev_state == TaskState::kRunning, -1);
  }
  if (State* s = state(next)) {
    s->on_cpu = true;
    set_state(*s, t, false, -1);
  }
}

// A runnable task moved while it waited (an RT push, a balance pass): from
// now on it waits where it went, on a CPU still idle (for its IPI and
// exit) or behind what that CPU runs. A wake-up's own migration comes
// before its sched_wakeup, while the task is not runnable yet: on_wakeup()
// decides then.
void RunnableTracker::on_migrate(Time t, const Task& p, int from_cpu, int to_cpu) {
  State* s = state(p);
  if (s && s->runnable && !s->on_cpu) set_state(*s, t, true, cpu_idle(to_cpu) ? to_cpu : -1);
}

RunnableWait RunnableTracker::wait_between(const Task& p, Time from, Time to) const {
  const State* s = state(p);
  if (!s || to <= from) return {};
  const RunnableWait a = cum_at(*s, to), b = cum_at(*s, from);
  return {a.runnable - b.runnable, a.on_idle_cpu - b.on_idle_cpu};
}

}  // namespace schedlab
