// The event queue: an indexed 4-ary min-heap of plain structs, ordered by
// (time, priority tier, sequence). Sequence is a counter, never a pointer,
// so two runs with the same inputs pop events in the same order
// (ns-3 scheduler.h EventKey; gem5 src/sim/eventq.hh).
//
// Every pending event lives in a slot. A slot knows its heap position, so
// cancelling or re-arming is O(log n) with no tombstones left behind, and a
// Timer (hrtimer-like) owns one slot for its whole life. Slots are recycled
// through a free list: after warm-up nothing here allocates.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/time.h"

namespace schedlab {

// Receives events. `tag` is whatever the poster chose (a CPU index, a task
// id, an enum): handlers dispatch on it with a switch, not a closure.
class EventHandler {
 public:
  virtual ~EventHandler() = default;
  virtual void on_event(uint64_t tag) = 0;
};

using SlotId = uint32_t;
inline constexpr SlotId kNoSlot = UINT32_MAX;

class EventQueue {
 public:
  EventQueue();

  // One-shot event; the slot is released when it fires or is cancelled.
  // The returned id is only valid until then (slots are reused): anything
  // that may need cancelling later must be a Timer. Tiers are in
  // [-128, 127] (std::out_of_range otherwise).
  SlotId post(Time at, int tier, EventHandler* handler, uint64_t tag);
  // A persistent slot for a timer: not released when it fires.
  SlotId make_slot(EventHandler* handler, uint64_t tag, int tier);
  void release_slot(SlotId slot);
  // (Re-)arms a persistent slot; a new sequence number is drawn each time so
  // re-arming orders the event after others already armed for that instant.
  void arm(SlotId slot, Time at);
  void cancel(SlotId slot) {  // no-op when not armed
    if (slots_[slot].heap_pos != kNotQueued) cancel_queued(slot);
  }
  // Cancels a persistent slot without taking it out of the heap: the entry
  // stays where it is, and fires as nothing (no handler, not counted in
  // dispatched()) unless arm() re-keys it in place first -- one sift
  // instead of a removal now and a push later. For a timer cancelled and
  // re-armed often (the fair server's); the order of events is as if it
  // had been cancelled (re-arming draws a new sequence number either way).
  void cancel_lazy(SlotId slot) {
    if (slots_[slot].heap_pos != kNotQueued) slots_[slot].dead = true;
  }
  bool armed(SlotId slot) const { return slots_[slot].heap_pos != kNotQueued && !slots_[slot].dead; }
  Time when(SlotId slot) const { return slots_[slot].at; }

  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  Time next_time() const { return Time::ns(static_cast<int64_t>(heap_.front().hi ^ (uint64_t{1} << 63))); }
  // Pops the earliest event and runs its handler.
  void dispatch_next();
  uint64_t dispatched() const { return dispatched_; }
  void reserve(size_t n);

 private:
  static constexpr uint32_t kNotQueued = UINT32_MAX;
  // Heap element: the full key packed in two words compared in turn: `hi`
  // is the time with its sign bit flipped (signed order becomes unsigned
  // order), `lo` the tier biased by 128 in the top byte above a 56-bit
  // sequence number. Ties on (time, tier) go to the lower
  // sequence, as before; 2^56 draws do not wrap in any run.
  struct Entry {
    uint64_t hi;
    uint64_t lo;
    SlotId slot;
  };
  struct Slot {
    EventHandler* handler = nullptr;
    uint64_t tag = 0;
    Time at;
    int32_t tier = 0;
    uint32_t heap_pos = kNotQueued;
    bool persistent = false;
    bool in_use = false;
    bool dead = false;  // cancel_lazy(): queued, but fires as nothing
  };
  static constexpr uint64_t kSeqBits = 56;
  static uint64_t time_key(Time at) { return static_cast<uint64_t>(at.count()) ^ (uint64_t{1} << 63); }
  static uint64_t tier_key(int32_t tier) { return static_cast<uint64_t>(tier + 128) << kSeqBits; }
  static void check_tier(int tier);  // tiers live in [-128, 127]
  Entry make_entry(Time at, int32_t tier, SlotId slot) {
    return Entry{time_key(at), tier_key(tier) | next_seq_++, slot};
  }
  static bool before(const Entry& a, const Entry& b) {
    if (a.hi != b.hi) return a.hi < b.hi;
    return a.lo < b.lo;
  }
  SlotId alloc_slot();
  void push(SlotId slot, Time at, int tier);
  void remove_at(uint32_t pos);
  void cancel_queued(SlotId slot);
  void pop_root();
  void sift_up(uint32_t pos);
  void sift_down(uint32_t pos);
  void place_up(uint32_t pos, Entry e);
  static uint32_t min_child(const Entry* h, uint32_t first, uint32_t n);

  std::vector<Entry> heap_;
  std::vector<Slot> slots_;
  std::vector<SlotId> free_slots_;
  uint64_t next_seq_ = 0;
  uint64_t dispatched_ = 0;
};

// A re-armable timer owning one slot (hrtimer-like). Handles stay valid for
// the timer's life; cancelling an unarmed timer is harmless.
class Timer {
 public:
  Timer() = default;
  Timer(EventQueue& q, EventHandler* handler, uint64_t tag, int tier)
      : q_(&q), slot_(q.make_slot(handler, tag, tier)) {}
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;
  Timer(Timer&& o) noexcept : q_(o.q_), slot_(o.slot_) { o.q_ = nullptr; o.slot_ = kNoSlot; }
  Timer& operator=(Timer&& o) noexcept {
    if (this != &o) {
      reset();
      q_ = o.q_; slot_ = o.slot_;
      o.q_ = nullptr; o.slot_ = kNoSlot;
    }
    return *this;
  }
  ~Timer() { reset(); }

  void arm(Time at) { q_->arm(slot_, at); }
  void cancel() { if (q_) q_->cancel(slot_); }
  void cancel_lazy() { q_->cancel_lazy(slot_); }  // see EventQueue::cancel_lazy()
  bool armed() const { return q_ && q_->armed(slot_); }
  Time when() const { return q_->when(slot_); }

 private:
  void reset() {
    if (q_ && slot_ != kNoSlot) q_->release_slot(slot_);
    q_ = nullptr;
    slot_ = kNoSlot;
  }
  EventQueue* q_ = nullptr;
  SlotId slot_ = kNoSlot;
};

}  // namespace schedlab
