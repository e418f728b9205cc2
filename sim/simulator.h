// The simulation loop: pops events in (time, tier, sequence) order and,
// once every event of an instant has run, calls the end-of-instant hook
// (the model uses it for deferred rescheduling: the return from interrupt).
#pragma once

#include <cstdint>

#include "sim/event_queue.h"
#include "sim/time.h"

namespace schedlab {

class InstantEndHook {
 public:
  virtual ~InstantEndHook() = default;
  // Called when the queue holds no more events at now(). Returns true when
  // it did something (it may post new events at now(); the loop then runs
  // them and calls the hook again).
  virtual bool on_instant_end() = 0;
};

class Simulator {
 public:
  Time now() const { return now_; }
  EventQueue& queue() { return queue_; }

  SlotId post(Time at, int tier, EventHandler* h, uint64_t tag) { return queue_.post(at, tier, h, tag); }
  SlotId post_in(Time delay, int tier, EventHandler* h, uint64_t tag) {
    return queue_.post(now_ + delay, tier, h, tag);
  }
  void set_instant_end_hook(InstantEndHook* hook) { hook_ = hook; }

  // Runs every event with time <= end; leaves now() == end.
  void run_until(Time end);
  uint64_t events_dispatched() const { return queue_.dispatched(); }

 private:
  EventQueue queue_;
  Time now_ = Time::zero();
  InstantEndHook* hook_ = nullptr;
};

}  // namespace schedlab
