#include "models/kernel/workqueue/runnable_tracker.h"

#include <algorithm>

#include "models/kernel/sched/task.h"

namespace schedlab {

void RunnableTracker::track(const Task& p) {
  if (states_.size() <= p.index) states_.resize(p.index + 1);
  State& s = states_[p.index];
  s.tracked = true;
  s.history.clear();
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
  // The last breakpoint at or before t.
  auto it = std::upper_bound(s.history.begin(), s.history.end(), t,
                             [](Time v, const Breakpoint& b) { return v < b.t; });
  // Older than the history kept: counted from its oldest breakpoint on.
  if (it == s.history.begin()) return s.history.front().cum;
  const Breakpoint& b = *std::prev(it);
  return b.cum + (b.runnable ? t - b.t : Time::zero());
}

void RunnableTracker::set_runnable(State& s, Time t, bool runnable) {
  if (s.runnable == runnable) return;
  Time cum = cum_at(s, t);
  s.runnable = runnable;
  s.history.push_back({t, cum, runnable});
  if (s.history.size() > kMaxHistory) s.history.pop_front();
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
