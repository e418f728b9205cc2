#include "sim/simulator.h"

#include <stdexcept>
#include <string>

namespace schedlab {

void Simulator::run_until(Time end) {
  for (;;) {
    if (++instant_steps_ >= kLongInstant) [[unlikely]] {
      // An instant that never ends: tell the hook, again after the probe's
      // steps, then stop the run.
      const bool again = instant_steps_ >= kLongInstant + kLongInstantProbe;
      if (instant_steps_ == kLongInstant || again) {
        if (hook_) hook_->on_long_instant(now_, again);
        if (again)
          throw TimeStalled("time stopped at " + std::to_string(now_.count()) + " ns: " +
                            std::to_string(instant_steps_) + " events in a row take no time");
      }
    }
    bool more_now = !queue_.empty() && queue_.next_time() == now_;
    if (!more_now && hook_ && hook_->on_instant_end()) continue;
    if (queue_.empty() || queue_.next_time() > end) break;
    if (queue_.next_time() != now_) [[likely]] {
      // An event armed in the past is a model bug: time never runs backwards.
      if (queue_.next_time() < now_) [[unlikely]]
        throw std::logic_error("an event was armed at " + std::to_string(queue_.next_time().count()) +
                               " ns, before the current time " + std::to_string(now_.count()) + " ns");
      instant_steps_ = 0;
    }
    now_ = queue_.next_time();
    queue_.dispatch_next();
  }
  if (end > now_) {  // time never runs backwards
    now_ = end;
    instant_steps_ = 0;
  }
}

}  // namespace schedlab
