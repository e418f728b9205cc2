#include "sim/event_queue.h"

#include <cassert>
#include <stdexcept>
#include <string>
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

void EventQueue::check_tier(int tier) {
  if (tier < -128 || tier > 127)
    throw std::out_of_range("event queue: tier " + std::to_string(tier) + " outside [-128, 127]");
}

SlotId EventQueue::post(Time at, int tier, EventHandler* handler, uint64_t tag) {
  check_tier(tier);
  SlotId id = alloc_slot();
  Slot& s = slots_[id];
  s.handler = handler;
  s.tag = tag;
  s.persistent = false;
  push(id, at, tier);
  return id;
}

SlotId EventQueue::make_slot(EventHandler* handler, uint64_t tag, int tier) {
  check_tier(tier);
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
  s.dead = false;
  if (s.heap_pos == kNotQueued) {
    push(slot, at, s.tier);
    return;
  }
  // Re-key in place: one sift instead of a removal and a push. The new
  // sequence number orders it after events already armed for that instant.
  uint32_t pos = s.heap_pos;
  Entry e = make_entry(at, s.tier, slot);
  s.at = at;
  bool earlier = before(e, heap_[pos]);
  heap_[pos] = e;
  if (earlier)
    sift_up(pos);
  else
    sift_down(pos);
}

void EventQueue::cancel_queued(SlotId slot) {
  Slot& s = slots_[slot];
  s.dead = false;
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
  heap_.push_back(make_entry(at, tier, slot));
  sift_up(static_cast<uint32_t>(heap_.size() - 1));
}

void EventQueue::remove_at(uint32_t pos) {
  SlotId victim = heap_[pos].slot;
  slots_[victim].heap_pos = kNotQueued;
  uint32_t last = static_cast<uint32_t>(heap_.size() - 1);
  if (pos != last) {
    Entry moved = heap_[last];
    heap_.pop_back();
    heap_[pos] = moved;
    if (pos > 0 && before(moved, heap_[(pos - 1) / kArity]))
      sift_up(pos);
    else
      sift_down(pos);
  } else {
    heap_.pop_back();
  }
}

// Both sifts move a hole instead of swapping, and leave every slot's
// heap_pos right (the element at `pos` on entry need not have it yet).
void EventQueue::sift_up(uint32_t pos) { place_up(pos, heap_[pos]); }

// Puts e into the hole at pos, moving the hole up past every parent e
// comes before.
void EventQueue::place_up(uint32_t pos, const Entry e) {
  Entry* h = heap_.data();
  while (pos > 0) {
    uint32_t parent = (pos - 1) / kArity;
    if (!before(e, h[parent])) break;
    h[pos] = h[parent];
    slots_[h[pos].slot].heap_pos = pos;
    pos = parent;
  }
  h[pos] = e;
  slots_[e.slot].heap_pos = pos;
}

// The first of the children h[first..] of a node in a heap of n entries.
// A full node is a two-round tournament among its four children.
uint32_t EventQueue::min_child(const Entry* h, uint32_t first, uint32_t n) {
  if (first + kArity <= n) {
    const uint32_t a = before(h[first + 1], h[first]) ? first + 1 : first;
    const uint32_t b = before(h[first + 3], h[first + 2]) ? first + 3 : first + 2;
    return before(h[b], h[a]) ? b : a;
  }
  uint32_t best = first;
  for (uint32_t c = first + 1; c < n; ++c)
    if (before(h[c], h[best])) best = c;
  return best;
}

void EventQueue::sift_down(uint32_t pos) {
  Entry* h = heap_.data();
  const Entry e = h[pos];
  const uint32_t n = static_cast<uint32_t>(heap_.size());
  for (;;) {
    uint32_t first = pos * kArity + 1;
    if (first >= n) break;
    const uint32_t best = min_child(h, first, n);
    if (!before(h[best], e)) break;
    h[pos] = h[best];
    slots_[h[pos].slot].heap_pos = pos;
    pos = best;
  }
  h[pos] = e;
  slots_[e.slot].heap_pos = pos;
}

// Removes the root (Floyd's bottom-up deletion): the hole left at the top
// follows the smaller child down to a leaf, then the last element, which
// usually belongs near the bottom anyway, is sifted up from there. One
// comparison per level fewer than sifting the last element down. The pop
// order is the keys' order (they are unique), whatever the heap's layout.
void EventQueue::pop_root() {
  Entry* h = heap_.data();
  slots_[h[0].slot].heap_pos = kNotQueued;
  const uint32_t n = static_cast<uint32_t>(heap_.size() - 1);  // size after the removal
  if (n == 0) {
    heap_.pop_back();
    return;
  }
  const Entry last = h[n];
  heap_.pop_back();
  uint32_t pos = 0;
  for (;;) {
    uint32_t first = pos * kArity + 1;
    if (first >= n) break;
    const uint32_t best = min_child(h, first, n);
    h[pos] = h[best];
    slots_[h[pos].slot].heap_pos = pos;
    pos = best;
  }
  place_up(pos, last);
}

void EventQueue::dispatch_next() {
  assert(!heap_.empty());
  SlotId slot = heap_.front().slot;
  pop_root();
  Slot& s = slots_[slot];
  if (s.dead) [[unlikely]] {  // cancel_lazy()ed: gone now, as nothing
    s.dead = false;
    return;
  }
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
