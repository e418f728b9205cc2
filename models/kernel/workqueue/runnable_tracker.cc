#include "models/kernel/workqueue/runnable_tracker.h"

#include <algorithm>
#include <ranges>

#include "models/kernel/sched/task.h"

namespace schedlab {

void RunnableTracker::track(const Task& p) {
  if (states_.size() <= p.index) states_.resize(p.index + 1);
  State& s = states_[p.index];
  s.tracked = true;
  s.history.clear();
  s.history.reserve(kMaxHistory);  // its whole length now: the hot loop does not allocate
  s.history.push_back({Time::zero(), Time::zero(), false});
}

RunnableTracker::State* RunnableTracker::state(const Task& p) {
  if (p.is_idle_task || p.index >= states_.size() || !states_[p.index].tracked) return nullptr;
  return &states_[p.index];
}

const RunnableTracker::State* RunnableTracker::state(const Task& p) const {
  if (p.is_idle_task || p.index >= states_.size() || !states_[p.index].tracked) return nullptr;
  return &states_[p.index];
}

Time RunnableTracker::cum_at(const State& s, Time t) const {
  // The last breakpoint at or before t: `after` indexes the first one past
  // t (breakpoints are in time order).
  const auto indices = std::views::iota(size_t{0}, s.history.size());
  const size_t after = static_cast<size_t>(
      std::ranges::partition_point(indices, [&](size_t i) { return s.history[i].t <= t; }) - indices.begin());
  // Older than the history kept: counted from its oldest breakpoint on.
  if (after == 0) return s.history.front().cum;
  const Breakpoint& b = s.history[after - 1];
  return b.cum + (b.runnable ? t - b.t : Time::zero());
}

void RunnableTracker::set_runnable(State& s, Time t, bool runnable) {
  if (s.runnable == runnable) return;
  Time cum = cum_at(s, t);
  s.runnable = runnable;
  if (s.history.size() == kMaxHistory) s.history.pop_front();  // the oldest goes first: the ring never grows past it
  s.history.push_back({t, cum, runnable});
}

void RunnableTracker::on_wakeup(Time t, const Task& p, int cpu) {
  State* s = state(p);
  if (!s || s->on_cpu) return;  // woken before it switched out: it never left the CPU
  set_runnable(*s, t, true);
}

void RunnableTracker::on_switch(Time t, int cpu, const Task& prev, TaskState prev_state, const Task& next) {
  if (State* s = state(prev)) {
    s->on_cpu = false;
    set_runnable(*s, t, prev_state == TaskState::kRunning);
  }
  if (State* s = state(next)) {
    s->on_cpu = true;
    set_runnable(*s, t, false);
  }
}

Time RunnableTracker::runnable_between(const Task& p, Time from, Time to) const {
  const State* s = state(p);
  if (!s || to <= from) return Time::zero();
  return cum_at(*s, to) - cum_at(*s, from);
}

}  // namespace schedlab
