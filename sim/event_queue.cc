#include "sim/event_queue.h"

#include <algorithm>
#include <cassert>
#include <stdexcept>
#include <string>

namespace schedlab {

// Four children per node: shallower than a binary heap, and the children
// of a node are 64 contiguous bytes (design.md measured 4-ary at ~35-55 ns
// per pop+push; bench/bench_main.cc tracks it against a bare heap).
static constexpr size_t kArity = 4;
static constexpr size_t kEntryBytes = 16;  // sizeof(Entry)

EventQueue::EventQueue() { reserve(kInitialCapacity); }

void EventQueue::reserve(size_t n) {
  static_assert(sizeof(Entry) == kEntryBytes);
  if (n > kMaxSlots) n = kMaxSlots;  // never more entries than slots
  if (heap_.size() < n + kPad) heap_.resize(n + kPad, kPadEntry);
  heap_room_ = static_cast<uint32_t>(heap_.size() - kPad);
  heap_pos_.reserve(n);
  slots_.reserve(n);
}

// Doubles the room for entries, the new ones being padding. (The room
// never needs to pass kMaxSlots: every queued entry has its own slot.)
void EventQueue::grow_heap() { reserve(2 * size_t{heap_room_}); }

SlotId EventQueue::alloc_slot() {
  SlotId id;
  if (free_head_ != kNoSlot) {
    id = free_head_;
    free_head_ = slots_[id].next_free;
  } else {
    if (slots_.size() >= slot_limit_)
      throw std::length_error("event queue: more than " + std::to_string(slot_limit_) +
                              " slots at once (a heap entry has 24 bits for the slot id)");
    id = static_cast<SlotId>(slots_.size());
    slots_.emplace_back();
    heap_pos_.push_back(kNotQueued);
  }
  slots_[id].in_use = true;
  return id;
}

void EventQueue::check_tier(int tier) {
  if (tier < -128 || tier > 127)
    throw std::out_of_range("event queue: tier " + std::to_string(tier) + " outside [-128, 127]");
}

// A slot taken from the free stack (or a new one) for a handler. A slot
// is never queued while released, so its heap position is kNotQueued.
SlotId EventQueue::new_slot(EventHandler* handler, uint64_t tag, int tier, bool persistent) {
  check_tier(tier);
  SlotId id = alloc_slot();
  Slot& s = slots_[id];
  s.handler = handler;
  s.tag = tag;
  s.tier = static_cast<int8_t>(tier);
  s.persistent = persistent;
  return id;
}

SlotId EventQueue::post(Time at, int tier, EventHandler* handler, uint64_t tag) {
  SlotId id = new_slot(handler, tag, tier, false);
  push(id, at);
  return id;
}

SlotId EventQueue::make_slot(EventHandler* handler, uint64_t tag, int tier) {
  return new_slot(handler, tag, tier, true);
}

void EventQueue::release_slot(SlotId slot) {
  if (!slots_[slot].in_use) return;  // already released: never free twice
  cancel(slot);
  slots_[slot].handler = nullptr;
  free_slot(slot);
}

// (Only a queued slot can be dead, so push() has no `dead` to clear.)
void EventQueue::arm(SlotId slot, Time at) {
  if (heap_pos_[slot] == kNotQueued)
    push(slot, at);
  else
    rekey(slot, at);
}

// The rare cases (the sequence counter at its limit, the heap array full)
// are dealt with out of line, then the operation starts over: the common
// path then calls nothing, so it saves no registers.
void EventQueue::push_slow(SlotId slot, Time at) {
  if (next_seq_ == kSeqLimit) renumber_sequences();
  if (size_ == heap_room_) grow_heap();
  push(slot, at);
}

void EventQueue::rekey_slow(SlotId slot, Time at) {
  renumber_sequences();
  rekey(slot, at);
}

void EventQueue::push(SlotId slot, Time at) {
  if (next_seq_ == kSeqLimit || size_ == heap_room_) [[unlikely]]
    return push_slow(slot, at);
  Slot& s = slots_[slot];
  s.at = at;
  const Entry e = make_entry(at, s.tier, slot);
  place_up(size_++ * kEntryBytes, e);
}

// Re-key in place: one sift instead of a removal and a push. The new
// sequence number orders it after events already armed for that instant.
void EventQueue::rekey(SlotId slot, Time at) {
  if (next_seq_ == kSeqLimit) [[unlikely]]
    return rekey_slow(slot, at);
  Slot& s = slots_[slot];
  s.at = at;
  s.dead = false;
  const Entry e = make_entry(at, s.tier, slot);
  const Off off = heap_pos_[slot];
  if (before(e, entry_at(heap_base(), off)))
    place_up(off, e);
  else
    sift_down(off, e);
}

void EventQueue::cancel_queued(SlotId slot) {
  Slot& s = slots_[slot];
  s.dead = false;
  remove_at(heap_pos_[slot]);
  if (!s.persistent) free_slot(slot);
}

void EventQueue::remove_at(Off off) {
  char* const base = heap_base();
  heap_pos_[slot_of(entry_at(base, off))] = kNotQueued;
  const Off last = --size_ * kEntryBytes;
  const Entry moved = entry_at(base, last);
  entry_at(base, last) = kPadEntry;
  if (off == last) return;
  if (off > 0 && before(moved, entry_at(base, ((off - kEntryBytes) / kArity) & ~(kEntryBytes - 1))))
    place_up(off, moved);
  else
    sift_down(off, moved);
}

// The sifts move a hole instead of swapping, and leave every slot's
// heap_pos_ right (whatever was at `off` on entry is overwritten). In
// offsets, a node's parent is at ((off - 16) / 4) rounded down to a
// multiple of 16, its first child at 4 * off + 16.

// Puts e into the hole at off, moving the hole up past every parent e
// comes before.
void EventQueue::place_up(Off off, const Entry e) {
  char* const base = heap_base();
  uint32_t* const where = heap_pos_.data();
  while (off > 0) {
    const Off parent = ((off - kEntryBytes) / kArity) & ~(kEntryBytes - 1);
    const Entry& p = entry_at(base, parent);
    if (!before(e, p)) break;
    where[slot_of(p)] = static_cast<uint32_t>(off);
    entry_at(base, off) = p;
    off = parent;
  }
  entry_at(base, off) = e;
  where[slot_of(e)] = static_cast<uint32_t>(off);
}

// The least of the four entries c[0..3], the children of a node: a
// two-round tournament. Children past the end are padding, which never
// wins, so there is no bounds test and no loop. (Written so that GCC picks
// the first round's winners without branching; it branches on the second.)
inline const EventQueue::Entry* EventQueue::min_of4(const Entry* c) {
  const Entry* a = c + before(c[1], c[0]);
  const Entry* b = c + 2 + before(c[3], c[2]);
  return before(*b, *a) ? b : a;
}

// Puts e into the hole at off, moving the hole down past every child that
// comes before e.
void EventQueue::sift_down(Off off, const Entry e) {
  char* const base = heap_base();
  uint32_t* const where = heap_pos_.data();
  const Off inner_end = (size_ + 2) / kArity * kEntryBytes;  // nodes with children end here
  while (off < inner_end) {
    const Entry* best = min_of4(&entry_at(base, kArity * off + kEntryBytes));
    if (!before(*best, e)) break;
    where[slot_of(*best)] = static_cast<uint32_t>(off);
    entry_at(base, off) = *best;
    off = static_cast<Off>(reinterpret_cast<const char*>(best) - base);
  }
  entry_at(base, off) = e;
  where[slot_of(e)] = static_cast<uint32_t>(off);
}

// Removes the root (Floyd's bottom-up deletion): the hole left at the top
// follows the smallest child down to a leaf, then the last element, which
// usually belongs near the bottom anyway, is sifted up from there. One
// comparison per level fewer than sifting the last element down. The pop
// order is the keys' order (they are unique), whatever the heap's layout.
inline void EventQueue::pop_root() {
  char* const base = heap_base();
  uint32_t* const where = heap_pos_.data();
  where[slot_of(entry_at(base, 0))] = kNotQueued;
  const size_t n = --size_;  // size after the removal
  const Off last = n * kEntryBytes;
  // The last entry stays where it is during the descent: the hole may pass
  // it up like any other child, and then it is in place already.
  const Off inner_end = (n + 2) / kArity * kEntryBytes;  // nodes with children end here
  Off off = 0;
  while (off < inner_end) {
    const Entry* best = min_of4(&entry_at(base, kArity * off + kEntryBytes));
    where[slot_of(*best)] = static_cast<uint32_t>(off);
    entry_at(base, off) = *best;
    off = static_cast<Off>(reinterpret_cast<const char*>(best) - base);
  }
  if (off != last) place_up(off, entry_at(base, last));
  entry_at(base, last) = kPadEntry;
}

// The 32-bit sequence counter is at its limit: give the queued entries the
// numbers 0..n-1 in key order. Relative order is all a sequence number
// carries, so every comparison, and the pop order, is as before. An array
// sorted by key is a valid heap, so sorting the heap in place keeps the
// heap property; the rare renumbering costs a sort but nothing allocates.
void EventQueue::renumber_sequences() {
  Entry* h = heap_.data();
  std::sort(h, h + size_, before);
  for (uint32_t i = 0; i < size_; ++i) {
    h[i].lo = (h[i].lo & ~kSeqMask) | uint64_t{i} << kSeqShift;
    heap_pos_[slot_of(h[i])] = static_cast<uint32_t>(i * kEntryBytes);
  }
  next_seq_ = size_;  // at most kMaxSlots: far below the limit
}

void EventQueue::dispatch_next() {
  assert(size_ > 0);
  const SlotId slot = slot_of(heap_[0]);
  pop_root();
  Slot& s = slots_[slot];
  if (s.dead) [[unlikely]] {  // cancel_lazy()ed: gone now, as nothing
    s.dead = false;
    return;
  }
  EventHandler* h = s.handler;
  uint64_t tag = s.tag;
  if (!s.persistent) free_slot(slot);
  ++dispatched_;
  h->on_event(tag);
}

}  // namespace schedlab
