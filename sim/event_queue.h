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
  // [-128, 127] (std::out_of_range otherwise). At most kMaxSlots slots exist
  // at once (std::length_error beyond).
  SlotId post(Time at, int tier, EventHandler* handler, uint64_t tag);
  // A persistent slot for a timer: not released when it fires.
  SlotId make_slot(EventHandler* handler, uint64_t tag, int tier);
  void release_slot(SlotId slot);
  // (Re-)arms a persistent slot; a new sequence number is drawn each time so
  // re-arming orders the event after others already armed for that instant.
  void arm(SlotId slot, Time at);
  void cancel(SlotId slot) {  // no-op when not armed
    if (heap_pos_[slot] != kNotQueued) cancel_queued(slot);
  }
  // Cancels a persistent slot without taking it out of the heap: the entry
  // stays where it is, and fires as nothing (no handler, not counted in
  // dispatched()) unless arm() re-keys it in place first -- one sift
  // instead of a removal now and a push later. For a timer cancelled and
  // re-armed often (the fair server's); the order of events is as if it
  // had been cancelled (re-arming draws a new sequence number either way).
  void cancel_lazy(SlotId slot) {
    if (heap_pos_[slot] != kNotQueued) slots_[slot].dead = true;
  }
  bool armed(SlotId slot) const { return heap_pos_[slot] != kNotQueued && !slots_[slot].dead; }
  Time when(SlotId slot) const { return slots_[slot].at; }

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  Time next_time() const { return Time::ns(static_cast<int64_t>(heap_[0].hi ^ (uint64_t{1} << 63))); }
  // Pops the earliest event and runs its handler.
  void dispatch_next();
  uint64_t dispatched() const { return dispatched_; }
  void reserve(size_t n);

  // Slot ids must fit the 24 bits a heap entry has for them.
  static constexpr uint32_t kMaxSlots = uint32_t{1} << 24;
  // Test hooks: the next sequence number to draw (to reach the renumbering
  // at the 32-bit limit without 2^32 draws; only ever move it forward, past
  // every queued entry's number), and a lower slot limit (to reach the
  // length_error without 2^24 slots). Not for simulation code.
  void set_next_sequence_for_test(uint32_t seq) { next_seq_ = seq; }
  uint32_t next_sequence_for_test() const { return next_seq_; }
  void set_slot_limit_for_test(uint32_t limit) { slot_limit_ = limit < kMaxSlots ? limit : kMaxSlots; }

 private:
  static constexpr uint32_t kNotQueued = UINT32_MAX;
  // Heap element, 16 bytes: the full key packed in two words compared as
  // one 128-bit number. `hi` is the time with its sign bit flipped (signed
  // order becomes unsigned order). `lo` holds, from the top, the tier biased
  // by 128 (8 bits), a 32-bit sequence number and the slot id (24 bits).
  // Ties on (time, tier) go to the lower sequence; sequence numbers are
  // unique among queued entries, so the slot bits never decide an order.
  // When the counter reaches its limit the queued entries are renumbered
  // 0..n-1 in key order (renumber_sequences()), which keeps every order.
  struct Entry {
    uint64_t hi;
    uint64_t lo;
  };
  struct Slot {  // 32 bytes
    EventHandler* handler = nullptr;
    uint64_t tag = 0;
    Time at;
    SlotId next_free = kNoSlot;  // the free list's link, while released
    int8_t tier = 0;
    bool persistent = false;
    bool in_use = false;
    bool dead = false;  // cancel_lazy(): queued, but fires as nothing
  };
  static constexpr unsigned kSlotBits = 24;
  static constexpr unsigned kSeqShift = kSlotBits;
  static constexpr unsigned kTierShift = kSlotBits + 32;
  static constexpr uint64_t kSlotMask = (uint64_t{1} << kSlotBits) - 1;
  static constexpr uint64_t kSeqMask = uint64_t{UINT32_MAX} << kSeqShift;
  // The last sequence number is never drawn: reaching it renumbers. So no
  // entry's key is all ones, which the padding past the last entry uses.
  static constexpr uint32_t kSeqLimit = UINT32_MAX;
  // Padding after the last entry, so that a node's children can always be
  // compared four at a time (min_of4()): a key above every real one.
  static constexpr uint32_t kPad = 3;
  static constexpr Entry kPadEntry{UINT64_MAX, UINT64_MAX};
  static constexpr uint32_t kInitialCapacity = 64;  // entries and slots reserved up front

  static uint64_t time_key(Time at) { return static_cast<uint64_t>(at.count()) ^ (uint64_t{1} << 63); }
  static uint64_t tier_key(int32_t tier) { return static_cast<uint64_t>(tier + 128) << kTierShift; }
  static SlotId slot_of(const Entry& e) { return static_cast<SlotId>(e.lo & kSlotMask); }
  static void check_tier(int tier);  // tiers live in [-128, 127]
  // The caller has made sure next_seq_ is below kSeqLimit.
  Entry make_entry(Time at, int32_t tier, SlotId slot) {
    return Entry{time_key(at), tier_key(tier) | uint64_t{next_seq_++} << kSeqShift | slot};
  }
  // (hi, lo) compared as one unsigned 128-bit number: a compare and a
  // subtract-with-borrow, no branch.
  static bool before(const Entry& a, const Entry& b) {
    using u128 = unsigned __int128;
    return ((u128{a.hi} << 64) | a.lo) < ((u128{b.hi} << 64) | b.lo);
  }
  // Heap positions are byte offsets into heap_ (index * sizeof(Entry)),
  // here and in heap_pos_: x86 addressing scales an index by at most 8, so
  // 16-byte entries would cost a shift and an add at every step, while the
  // offset of a node's first child is 4 * off + 16, one address computation.
  // Stored as 32 bits (kMaxSlots entries of 16 bytes fit), computed on as
  // 64 (no zero-extension at every address).
  using Off = size_t;
  static Entry& entry_at(char* base, size_t off) { return *reinterpret_cast<Entry*>(base + off); }
  char* heap_base() { return reinterpret_cast<char*>(heap_.data()); }

  SlotId alloc_slot();
  SlotId new_slot(EventHandler* handler, uint64_t tag, int tier, bool persistent);
  void push(SlotId slot, Time at);
  [[gnu::noinline]] void push_slow(SlotId slot, Time at);
  void rekey(SlotId slot, Time at);
  [[gnu::noinline]] void rekey_slow(SlotId slot, Time at);
  void remove_at(Off off);
  void cancel_queued(SlotId slot);
  void pop_root();
  void sift_down(Off off, Entry e);
  void place_up(Off off, Entry e);
  static const Entry* min_of4(const Entry* c);
  void free_slot(SlotId slot) {
    slots_[slot].in_use = false;
    slots_[slot].next_free = free_head_;
    free_head_ = slot;
  }
  void grow_heap();
  void renumber_sequences();

  // heap_[0, size_) is the heap; every entry after it is kPadEntry, and
  // there are at least kPad of them (heap_room_ is heap_.size() - kPad).
  // heap_pos_ is per slot, apart from the slot table so the sifts, which
  // write it once per level, touch a dense array. Released slots form a
  // stack linked through Slot::next_free (last released, first reused).
  std::vector<Entry> heap_;
  uint32_t size_ = 0;
  uint32_t heap_room_ = 0;
  uint32_t next_seq_ = 0;
  uint32_t slot_limit_ = kMaxSlots;
  SlotId free_head_ = kNoSlot;
  std::vector<uint32_t> heap_pos_;
  std::vector<Slot> slots_;
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
  // The queue and slot behind the timer, for bookkeeping that looks a
  // timer's state up many times (the kernel's hrtimer bases): the same
  // slot for the timer's life.
  const EventQueue* queue() const { return q_; }
  SlotId slot() const { return slot_; }

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
