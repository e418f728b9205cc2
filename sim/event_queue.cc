#include "sim/event_queue.h"

#include <cassert>
#include <utility>

namespace schedlab {

// Four children per node: shallower than a binary heap, and the children
// of a node share a cache line pair (design.md measured 4-ary at ~35-55 ns
// per pop+push; bench/bench_main.cc tracks it against a bare heap).
static constexpr uint32_t kArity = 4;

EventQueue::EventQueue() { reserve(64); }

void EventQueue::reserve(size_t n) {
  heap_.reserve(n);
  slots_.reserve(n);
  free_slots_.reserve(n);
}

SlotId EventQueue::alloc_slot() {
  SlotId id;
  if (!free_slots_.empty()) {
    id = free_slots_.back();
    free_slots_.pop_back();
  } else {
    id = static_cast<SlotId>(slots_.size());
    slots_.emplace_back();
  }
  slots_[id].in_use = true;
  return id;
}

SlotId EventQueue::post(Time at, int tier, EventHandler* handler, uint64_t tag) {
  SlotId id = alloc_slot();
  Slot& s = slots_[id];
  s.handler = handler;
  s.tag = tag;
  s.persistent = false;
  push(id, at, tier);
  return id;
}

SlotId EventQueue::make_slot(EventHandler* handler, uint64_t tag, int tier) {
  SlotId id = alloc_slot();
  Slot& s = slots_[id];
  s.handler = handler;
  s.tag = tag;
  s.tier = tier;
  s.persistent = true;
  s.heap_pos = kNotQueued;
  return id;
}

void EventQueue::release_slot(SlotId slot) {
  if (!slots_[slot].in_use) return;  // already released: never free twice
  cancel(slot);
  slots_[slot].in_use = false;
  slots_[slot].handler = nullptr;
  free_slots_.push_back(slot);
}

void EventQueue::arm(SlotId slot, Time at) {
  Slot& s = slots_[slot];
  if (s.heap_pos == kNotQueued) {
    push(slot, at, s.tier);
    return;
  }
  // Re-key in place: one sift instead of a removal and a push. The new
  // sequence number orders it after events already armed for that instant.
  uint32_t pos = s.heap_pos;
  Entry e{at, s.tier, next_seq_++, slot};
  s.at = at;
  bool earlier = before(e, heap_[pos]);
  heap_[pos] = e;
  if (earlier)
    sift_up(pos);
  else
    sift_down(pos);
}

void EventQueue::cancel(SlotId slot) {
  Slot& s = slots_[slot];
  if (s.heap_pos == kNotQueued) return;
  remove_at(s.heap_pos);
  if (!s.persistent) {
    s.in_use = false;
    free_slots_.push_back(slot);
  }
}

void EventQueue::push(SlotId slot, Time at, int tier) {
  Slot& s = slots_[slot];
  s.at = at;
  s.tier = tier;
  Entry e{at, tier, next_seq_++, slot};
  heap_.push_back(e);
  uint32_t pos = static_cast<uint32_t>(heap_.size() - 1);
  slots_[slot].heap_pos = pos;
  sift_up(pos);
}

void EventQueue::remove_at(uint32_t pos) {
  SlotId victim = heap_[pos].slot;
  slots_[victim].heap_pos = kNotQueued;
  uint32_t last = static_cast<uint32_t>(heap_.size() - 1);
  if (pos != last) {
    Entry moved = heap_[last];
    heap_.pop_back();
    place(pos, moved);
    if (pos > 0 && before(moved, heap_[(pos - 1) / kArity]))
      sift_up(pos);
    else
      sift_down(pos);
  } else {
    heap_.pop_back();
  }
}

void EventQueue::sift_up(uint32_t pos) {
  Entry e = heap_[pos];
  while (pos > 0) {
    uint32_t parent = (pos - 1) / kArity;
    if (!before(e, heap_[parent])) break;
    place(pos, heap_[parent]);
    pos = parent;
  }
  place(pos, e);
}

void EventQueue::sift_down(uint32_t pos) {
  Entry e = heap_[pos];
  const uint32_t n = static_cast<uint32_t>(heap_.size());
  for (;;) {
    uint32_t first = pos * kArity + 1;
    if (first >= n) break;
    uint32_t best = first;
    uint32_t end = first + kArity < n ? first + kArity : n;
    for (uint32_t c = first + 1; c < end; ++c)
      if (before(heap_[c], heap_[best])) best = c;
    if (!before(heap_[best], e)) break;
    place(pos, heap_[best]);
    pos = best;
  }
  place(pos, e);
}

void EventQueue::dispatch_next() {
  assert(!heap_.empty());
  SlotId slot = heap_.front().slot;
  remove_at(0);
  Slot& s = slots_[slot];
  EventHandler* h = s.handler;
  uint64_t tag = s.tag;
  if (!s.persistent) {
    s.in_use = false;
    free_slots_.push_back(slot);
  }
  ++dispatched_;
  h->on_event(tag);
}

}  // namespace schedlab
