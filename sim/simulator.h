// The simulation loop: pops events in (time, tier, sequence) order and,
// once every event of an instant has run, calls the end-of-instant hook
// (the model uses it for deferred rescheduling: the return from interrupt).
#pragma once

#include <cstdint>
#include <stdexcept>

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
  // Called when one instant has taken Simulator::kLongInstant steps (events
  // and hook calls), and again kLongInstantProbe steps later: time is
  // not advancing, so the run would never end. The model may watch the
  // steps in between (the first call) and then throw, saying what loops
  // (the second call); if it does not, the simulator throws TimeStalled.
  virtual void on_long_instant(Time /*now*/, bool /*again*/) {}
};

// A run whose time stopped advancing (see InstantEndHook::on_long_instant).
class TimeStalled : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Simulator {
 public:
  Time now() const { return now_; }
  EventQueue& queue() { return queue_; }
  const EventQueue& queue() const { return queue_; }

  SlotId post(Time at, int tier, EventHandler* h, uint64_t tag) { return queue_.post(at, tier, h, tag); }
  SlotId post_in(Time delay, int tier, EventHandler* h, uint64_t tag) {
    return queue_.post(now_ + delay, tier, h, tag);
  }
  void set_instant_end_hook(InstantEndHook* hook) { hook_ = hook; }

  // Runs every event with time <= end; leaves now() == end. Throws
  // TimeStalled (or what the hook throws) when an instant never ends.
  void run_until(Time end);
  // Steps (events and end-of-instant hook calls) of one instant after
  // which the run is declared stalled: far above any real scenario (an
  // 8-CPU phone instant takes tens), and a fraction of a second of work.
  static constexpr uint64_t kLongInstant = 2'000'000;
  static constexpr uint64_t kLongInstantProbe = 20'000;
  uint64_t events_dispatched() const { return queue_.dispatched(); }

 private:
  EventQueue queue_;
  Time now_ = Time::zero();
  InstantEndHook* hook_ = nullptr;
  uint64_t instant_steps_ = 0;  // steps taken at now_
};

}  // namespace schedlab
