// The event queue, timers and the simulation loop: ordering by
// (time, tier, sequence), cancellation, re-arming, a randomized comparison
// against a std::multimap reference model (also across lazy cancels and
// sequence renumberings), allocation-free steady state, the packed heap
// entry's limits, and the end-of-instant hook of Simulator::run_until.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <iterator>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "alloc_counter.h"
#include "sim/event_queue.h"
#include "sim/fifo.h"
#include "sim/rng.h"
#include "sim/simulator.h"
#include "sim/time.h"

using namespace schedlab;
using namespace schedlab::time_literals;
using schedlab::testing::AllocationCounter;

// ---------------------------------------------------------------------------
namespace {

// Appends each event's tag to a log.
class Recorder : public EventHandler {
 public:
  void on_event(uint64_t tag) override { log.push_back(tag); }
  std::vector<uint64_t> log;
};

// Drains the queue and returns the tags in pop order.
std::vector<uint64_t> drain(EventQueue& q, Recorder& r) {
  r.log.clear();
  while (!q.empty()) q.dispatch_next();
  return r.log;
}

using Tags = std::vector<uint64_t>;

}  // namespace

TEST_CASE("The event queue pops events in time order regardless of posting order", "[event_queue]") {
  EventQueue q;
  Recorder r;
  q.post(30_us, 0, &r, 3);
  q.post(10_us, 0, &r, 1);
  q.post(40_us, 0, &r, 4);
  q.post(20_us, 0, &r, 2);
  REQUIRE(q.size() == 4);
  CHECK(q.next_time() == 10_us);
  CHECK(drain(q, r) == Tags{1, 2, 3, 4});
  CHECK(q.empty());
  CHECK(q.dispatched() == 4);
}

TEST_CASE("Events at the same instant pop by tier, then in posting order", "[event_queue]") {
  EventQueue q;
  Recorder r;
  q.post(5_us, 2, &r, 20);
  q.post(5_us, 1, &r, 10);
  q.post(5_us, 2, &r, 21);
  q.post(5_us, 0, &r, 0);
  q.post(5_us, 1, &r, 11);
  q.post(5_us, 2, &r, 22);
  q.post(5_us, -1, &r, 99);  // a lower tier number sorts first, even if negative
  CHECK(drain(q, r) == Tags{99, 0, 10, 11, 20, 21, 22});
}

TEST_CASE("An earlier time beats a lower tier", "[event_queue]") {
  EventQueue q;
  Recorder r;
  q.post(11_us, 0, &r, 2);
  q.post(10_us, 5, &r, 1);
  CHECK(drain(q, r) == Tags{1, 2});
}

TEST_CASE("Many events at the same instant and tier keep posting order", "[event_queue]") {
  // Enough to fill several levels of the 4-ary heap, so sift operations
  // must respect the sequence number, not just the time.
  EventQueue q;
  Recorder r;
  Tags expected;
  for (uint64_t i = 0; i < 500; ++i) {
    q.post(7_us, 0, &r, i);
    expected.push_back(i);
  }
  CHECK(drain(q, r) == expected);
}

TEST_CASE("A cancelled posted event never runs and leaves the others in order", "[event_queue]") {
  EventQueue q;
  Recorder r;
  q.post(1_us, 0, &r, 1);
  SlotId b = q.post(2_us, 0, &r, 2);
  q.post(2_us, 0, &r, 3);
  q.post(3_us, 0, &r, 4);
  REQUIRE(q.armed(b));
  q.cancel(b);
  CHECK_FALSE(q.armed(b));
  CHECK(q.size() == 3);
  q.cancel(b);  // a second cancel of the same pending handle is a no-op
  CHECK(q.size() == 3);
  CHECK(drain(q, r) == Tags{1, 3, 4});
}

TEST_CASE("Cancelling the earliest event exposes the next one", "[event_queue]") {
  EventQueue q;
  Recorder r;
  SlotId a = q.post(1_us, 0, &r, 1);
  q.post(2_us, 0, &r, 2);
  q.cancel(a);
  CHECK(q.next_time() == 2_us);
  CHECK(drain(q, r) == Tags{2});
}

TEST_CASE("Re-arming a timer moves its event to the new time", "[event_queue][timer]") {
  EventQueue q;
  Recorder r;
  Timer t(q, &r, 100, 0);
  t.arm(30_us);
  q.post(20_us, 0, &r, 1);
  REQUIRE(t.armed());
  CHECK(t.when() == 30_us);

  t.arm(10_us);  // earlier
  CHECK(t.when() == 10_us);
  CHECK(q.size() == 2);  // moved, not duplicated
  CHECK(drain(q, r) == Tags{100, 1});
  CHECK_FALSE(t.armed());

  t.arm(10_us);
  q.post(20_us, 0, &r, 1);
  t.arm(50_us);  // later
  CHECK(q.size() == 2);
  CHECK(drain(q, r) == Tags{1, 100});
}

TEST_CASE("Re-arming a timer orders it after events already armed for the same instant", "[event_queue][timer]") {
  EventQueue q;
  Recorder r;
  Timer t(q, &r, 100, 0);
  t.arm(20_us);           // armed first: would run before 1 and 2 ...
  q.post(20_us, 0, &r, 1);
  q.post(20_us, 0, &r, 2);
  t.arm(20_us);           // ... but re-arming draws a new sequence number
  q.post(20_us, 0, &r, 3);
  CHECK(q.size() == 4);
  CHECK(drain(q, r) == Tags{1, 2, 100, 3});
}

TEST_CASE("A timer's tier is fixed at creation and orders it among same-instant events", "[event_queue][timer]") {
  EventQueue q;
  Recorder r;
  Timer late(q, &r, 200, 2);
  Timer early(q, &r, 100, 0);
  late.arm(5_us);
  q.post(5_us, 1, &r, 1);
  early.arm(5_us);
  CHECK(drain(q, r) == Tags{100, 1, 200});
}

TEST_CASE("Cancelling an unarmed timer is a no-op", "[event_queue][timer]") {
  EventQueue q;
  Recorder r;
  Timer t(q, &r, 100, 0);
  q.post(1_us, 0, &r, 1);
  CHECK_FALSE(t.armed());
  t.cancel();
  t.cancel();
  CHECK(q.size() == 1);

  t.arm(2_us);
  t.cancel();
  CHECK_FALSE(t.armed());
  t.cancel();  // already cancelled
  CHECK(q.size() == 1);

  Timer unbound;  // default-constructed: no queue at all
  unbound.cancel();
  CHECK_FALSE(unbound.armed());

  CHECK(drain(q, r) == Tags{1});
}

TEST_CASE("A timer can be re-armed after it fires and fires again", "[event_queue][timer]") {
  EventQueue q;
  Recorder r;
  Timer t(q, &r, 100, 0);
  t.arm(1_us);
  CHECK(drain(q, r) == Tags{100});
  CHECK_FALSE(t.armed());
  t.arm(2_us);
  CHECK(t.armed());
  CHECK(drain(q, r) == Tags{100});
}

TEST_CASE("Destroying an armed timer removes its event", "[event_queue][timer]") {
  EventQueue q;
  Recorder r;
  q.post(2_us, 0, &r, 1);
  {
    Timer t(q, &r, 100, 0);
    t.arm(1_us);
    CHECK(q.size() == 2);
  }
  CHECK(q.size() == 1);
  CHECK(drain(q, r) == Tags{1});
}

TEST_CASE("A moved timer keeps its event and the moved-from timer is inert", "[event_queue][timer]") {
  EventQueue q;
  Recorder r;
  Timer a(q, &r, 100, 0);
  a.arm(3_us);
  Timer b(std::move(a));
  CHECK(b.armed());
  CHECK_FALSE(a.armed());  // NOLINT(bugprone-use-after-move): moved-from state is specified
  a.cancel();
  CHECK(q.size() == 1);

  Timer c(q, &r, 200, 0);
  c.arm(1_us);
  c = std::move(b);  // c's old event goes away with its slot; b's event stays
  CHECK(q.size() == 1);
  CHECK(c.when() == 3_us);
  CHECK(drain(q, r) == Tags{100});
}

TEST_CASE("A one-shot handler may post new events while it runs", "[event_queue]") {
  EventQueue q;
  struct Chain : EventHandler {
    EventQueue* q;
    Tags log;
    void on_event(uint64_t tag) override {
      log.push_back(tag);
      if (tag < 5) q->post(Time::us(static_cast<int64_t>(tag) + 1), 0, this, tag + 1);
    }
  } chain;
  chain.q = &q;
  q.post(1_us, 0, &chain, 1);
  while (!q.empty()) q.dispatch_next();
  CHECK(chain.log == Tags{1, 2, 3, 4, 5});
}

// ---------------------------------------------------------------------------
// Randomized differential test. The reference model is a std::multimap keyed
// by (time, tier): for equal keys a multimap keeps insertion order, which is
// exactly what the queue's sequence numbers promise, and re-arming is
// erase + insert (to the back of its equal range). A lazily cancelled
// timer's entry stays in the model where it was, marked dead: it still
// counts in size() and next_time(), and pops as nothing.
namespace {

struct HarnessOptions {
  bool lazy_cancels = false;  // some timer cancels are cancel_lazy()
  // Now and then the sequence counter jumps to just below its 32-bit limit
  // (always forward, as the hook requires), so the walk crosses many
  // renumberings.
  bool sequence_wraps = false;
};

class DifferentialHarness : public EventHandler {
 public:
  static constexpr uint64_t kTimerTagBase = 1ULL << 40;
  static constexpr uint64_t kDeadTagBase = 1ULL << 50;  // a lazily cancelled timer's model entry
  static constexpr int kTimers = 8;
  using Model = std::multimap<std::pair<int64_t, int>, uint64_t>;

  explicit DifferentialHarness(uint64_t seed, HarnessOptions options = {})
      : rng_(seed, "event-queue-differential"), options_(options) {
    for (int i = 0; i < kTimers; ++i) {
      timers_.push_back(std::make_unique<Timer>(q_, this, kTimerTagBase + i, i % 3));
      timer_model_.emplace_back();
      dead_model_.emplace_back();
    }
  }

  void on_event(uint64_t tag) override { fired_.push_back(tag); }

  void step() {
    int64_t op = rng_.uniform_int(0, 99);
    if (op < 35) {
      post();
    } else if (op < 45) {
      cancel_post();
    } else if (op < 65) {
      arm_timer();
    } else if (op < 70) {
      if (options_.lazy_cancels && op >= 67)
        cancel_timer_lazily();
      else
        cancel_timer();
    } else {
      pop();
    }
    if (options_.sequence_wraps) maybe_jump_sequence();
    check_front();
  }

  void drain_and_compare() {
    while (!model_.empty()) pop();
    REQUIRE(q_.empty());
  }

  uint64_t pops() const { return pops_; }
  size_t max_pending() const { return max_pending_; }
  uint64_t dead_pops() const { return dead_pops_; }
  uint64_t renumberings() const { return renumberings_; }

 private:
  void post() {
    int64_t t = now_ + rng_.uniform_int(0, 20);  // narrow range: many ties
    int tier = static_cast<int>(rng_.uniform_int(0, 2));
    uint64_t tag = next_tag_++;
    SlotId id = q_.post(Time::ns(t), tier, this, tag);
    auto it = model_.emplace(std::make_pair(t, tier), tag);
    live_posts_.emplace(tag, LivePost{id, it, live_tags_.size()});
    live_tags_.push_back(tag);
  }

  void cancel_post() {
    if (live_tags_.empty()) return;
    uint64_t tag = live_tags_[static_cast<size_t>(rng_.uniform_int(0, static_cast<int64_t>(live_tags_.size()) - 1))];
    LivePost lp = live_posts_.at(tag);
    REQUIRE(q_.armed(lp.slot));
    q_.cancel(lp.slot);
    model_.erase(lp.it);
    forget_post(tag);
  }

  void arm_timer() {
    int i = static_cast<int>(rng_.uniform_int(0, kTimers - 1));
    int64_t t = now_ + rng_.uniform_int(0, 20);
    timers_[i]->arm(Time::ns(t));
    if (timer_model_[i]) model_.erase(*timer_model_[i]);
    forget_dead(i);  // a dead entry is re-keyed: gone from where it was
    timer_model_[i] = model_.emplace(std::make_pair(t, i % 3), kTimerTagBase + i);
  }

  void cancel_timer() {
    int i = static_cast<int>(rng_.uniform_int(0, kTimers - 1));
    timers_[i]->cancel();  // often unarmed: must then be a no-op
    if (timer_model_[i]) {
      model_.erase(*timer_model_[i]);
      timer_model_[i].reset();
    }
    forget_dead(i);  // a dead entry is removed by a real cancel
  }

  // The entry stays in place (same model node, so same place among equal
  // keys) but pops as nothing.
  void cancel_timer_lazily() {
    int i = static_cast<int>(rng_.uniform_int(0, kTimers - 1));
    timers_[i]->cancel_lazy();
    if (timer_model_[i]) {
      (*timer_model_[i])->second = kDeadTagBase + i;
      dead_model_[i] = *timer_model_[i];
      timer_model_[i].reset();
    }
  }

  void forget_dead(int i) {
    if (dead_model_[i]) {
      model_.erase(*dead_model_[i]);
      dead_model_[i].reset();
    }
  }

  void maybe_jump_sequence() {
    const uint32_t seq = q_.next_sequence_for_test();
    if (seq < last_seq_) ++renumberings_;  // the counter went back: it renumbered
    if (seq < (1u << 20) && rng_.uniform_int(0, 99) == 0)
      q_.set_next_sequence_for_test(UINT32_MAX - static_cast<uint32_t>(rng_.uniform_int(1, 40)));
    last_seq_ = q_.next_sequence_for_test();
  }

  void pop() {
    if (model_.empty()) {
      REQUIRE(q_.empty());
      return;
    }
    auto front = model_.begin();
    uint64_t expected = front->second;
    now_ = front->first.first;
    model_.erase(front);
    fired_.clear();
    const uint64_t dispatched = q_.dispatched();
    q_.dispatch_next();
    if (expected >= kDeadTagBase) {  // pops as nothing, uncounted
      REQUIRE(fired_.empty());
      REQUIRE(q_.dispatched() == dispatched);
      dead_model_[expected - kDeadTagBase].reset();
      ++dead_pops_;
      return;
    }
    REQUIRE(fired_.size() == 1);
    REQUIRE(fired_[0] == expected);
    REQUIRE(q_.dispatched() == dispatched + 1);
    ++pops_;
    if (expected >= kTimerTagBase) {
      timer_model_[expected - kTimerTagBase].reset();
    } else {
      forget_post(expected);
    }
  }

  void check_front() {
    REQUIRE(q_.size() == model_.size());
    max_pending_ = std::max(max_pending_, model_.size());
    if (!model_.empty()) REQUIRE(q_.next_time().count() == model_.begin()->first.first);
    for (int i = 0; i < kTimers; ++i) {
      REQUIRE(timers_[i]->armed() == timer_model_[i].has_value());
      if (timer_model_[i]) REQUIRE(timers_[i]->when().count() == (*timer_model_[i])->first.first);
    }
  }

  void forget_post(uint64_t tag) {
    auto node = live_posts_.find(tag);
    size_t idx = node->second.index;
    uint64_t last = live_tags_.back();
    live_tags_[idx] = last;
    live_posts_.at(last).index = idx;
    live_tags_.pop_back();
    live_posts_.erase(node);
  }

  struct LivePost {
    SlotId slot;
    Model::iterator it;
    size_t index;  // position in live_tags_
  };

  RngStream rng_;
  HarnessOptions options_;
  EventQueue q_;
  Model model_;
  std::vector<std::unique_ptr<Timer>> timers_;
  std::vector<std::optional<Model::iterator>> timer_model_;
  std::vector<std::optional<Model::iterator>> dead_model_;  // a lazily cancelled timer's entry
  std::unordered_map<uint64_t, LivePost> live_posts_;
  std::vector<uint64_t> live_tags_;
  std::vector<uint64_t> fired_;
  int64_t now_ = 0;
  uint64_t next_tag_ = 0;
  uint64_t pops_ = 0;
  size_t max_pending_ = 0;
  uint64_t dead_pops_ = 0;
  uint32_t last_seq_ = 0;
  uint64_t renumberings_ = 0;
};

}  // namespace

TEST_CASE("The event queue pops in the same order as a std::multimap reference model", "[event_queue][differential]") {
  for (uint64_t seed : {1ULL, 2ULL, 0xdecafbadULL}) {
    CAPTURE(seed);
    DifferentialHarness h(seed);
    for (int i = 0; i < 50000; ++i) h.step();
    h.drain_and_compare();
    // The walk really exercised the queue: many pops, a non-trivial heap.
    CHECK(h.pops() > 10000);
    CHECK(h.max_pending() > 16);
  }
}

TEST_CASE("The event queue matches the reference model across lazy cancels and sequence renumberings",
          "[event_queue][differential]") {
  for (uint64_t seed : {3ULL, 4ULL, 0xfeedfaceULL}) {
    CAPTURE(seed);
    DifferentialHarness h(seed, HarnessOptions{.lazy_cancels = true, .sequence_wraps = true});
    for (int i = 0; i < 50000; ++i) h.step();
    h.drain_and_compare();
    CHECK(h.pops() > 10000);
    CHECK(h.max_pending() > 16);
    CHECK(h.dead_pops() > 100);      // dead entries really reached the front
    CHECK(h.renumberings() > 20);    // and the counter really wrapped, often
  }
}

// ---------------------------------------------------------------------------
namespace {
class CountingHandler : public EventHandler {
 public:
  void on_event(uint64_t) override { ++fired; }
  uint64_t fired = 0;
};
}  // namespace

TEST_CASE("After warm-up the event queue reuses slots and allocates nothing", "[event_queue][alloc]") {
  // A hold model with posts, cancels and timer re-arms at a steady number of
  // pending events. Slot ids are indices into the slot table, so the largest
  // id ever handed out bounds the table's size.
  constexpr size_t kPending = 1000;
  constexpr int kTimers = 16;
  EventQueue q;
  CountingHandler h;
  std::vector<Timer> timers;
  for (int i = 0; i < kTimers; ++i) timers.emplace_back(q, &h, 1000000 + i, 1);
  RngStream rng(7, "slot-reuse");
  std::vector<int64_t> incr(4096);
  for (auto& x : incr) x = rng.uniform_int(1, 1000);

  int64_t now = 0;
  size_t k = 0;
  SlotId max_id = 0;
  SlotId to_cancel = kNoSlot;
  auto run = [&](int iterations) {
    for (int i = 0; i < iterations; ++i) {
      now = q.next_time().count();
      q.dispatch_next();
      while (q.size() < kPending + kTimers / 2) {  // refill; timers may be disarmed
        SlotId id = q.post(Time::ns(now + incr[k++ % incr.size()]), 0, &h, 0);
        max_id = std::max(max_id, id);
        if (i % 7 == 0) to_cancel = id;
      }
      if (to_cancel != kNoSlot && i % 7 == 3) {
        if (q.armed(to_cancel)) q.cancel(to_cancel);
        to_cancel = kNoSlot;
      }
      timers[static_cast<size_t>(i) % kTimers].arm(Time::ns(now + incr[k++ % incr.size()]));
      if (i % 11 == 0) timers[static_cast<size_t>(i + 5) % kTimers].cancel();
    }
  };
  for (size_t i = 0; i < kPending; ++i) q.post(Time::ns(incr[k++ % incr.size()]), 0, &h, 0);
  run(20000);  // warm-up
  const SlotId warm_max_id = max_id;
  const size_t warm_size = q.size();

  uint64_t allocations;
  {
    AllocationCounter counter;
    run(200000);
    allocations = counter.count();
  }
  CHECK(allocations == 0);
  CHECK(max_id == warm_max_id);  // the slot table stopped growing
  CHECK(q.size() <= warm_size + kTimers);
  CHECK(h.fired > 200000);
}

TEST_CASE("The allocation counter does see the event queue allocate inside its scope", "[event_queue][alloc]") {
  // Guards the test above against a counter that silently counts nothing.
  // (An EventQueue, not a local new-expression: compilers may elide those.)
  uint64_t allocations;
  {
    AllocationCounter counter;
    EventQueue q;  // reserves its heap, slot table and free list
    CountingHandler h;
    for (int i = 0; i < 1000; ++i) q.post(Time::ns(i), 0, &h, 0);  // outgrows the reservation
    allocations = counter.count();
  }
  CHECK(allocations >= 4);
}

// ---------------------------------------------------------------------------
// Simulator::run_until and the end-of-instant hook.
namespace {

// Shared log of "e<tag>@<us>" and "hook@<us>" entries.
struct Trace {
  Simulator* sim = nullptr;
  std::vector<std::string> log;
  void add(const std::string& what) { log.push_back(what + "@" + std::to_string(sim->now().count() / 1000)); }
};

class TracingHandler : public EventHandler {
 public:
  explicit TracingHandler(Trace& t) : trace_(t) {}
  void on_event(uint64_t tag) override {
    std::string what = "e";
    what += std::to_string(tag);
    trace_.add(what);
  }

 private:
  Trace& trace_;
};

// Records each call; on the first call at `post_at` it posts `tag` at the
// current instant and reports that it did something.
class TracingHook : public InstantEndHook {
 public:
  TracingHook(Trace& t, EventHandler* h) : trace_(t), handler_(h) {}
  bool on_instant_end() override {
    Time now = trace_.sim->now();
    trace_.add("hook");
    if (post_at_ && now == *post_at_) {
      post_at_.reset();
      trace_.sim->post(now, 0, handler_, post_tag_);
      return true;
    }
    return false;
  }
  void post_once_at(Time t, uint64_t tag) {
    post_at_ = t;
    post_tag_ = tag;
  }

 private:
  Trace& trace_;
  EventHandler* handler_;
  std::optional<Time> post_at_;
  uint64_t post_tag_ = 0;
};

using Log = std::vector<std::string>;

}  // namespace

TEST_CASE("run_until calls the instant-end hook once all events at an instant have run", "[simulator]") {
  Simulator sim;
  Trace trace{&sim, {}};
  TracingHandler h(trace);
  TracingHook hook(trace, &h);
  sim.set_instant_end_hook(&hook);
  sim.post(0_us, 0, &h, 1);
  sim.post(0_us, 1, &h, 2);
  sim.post(10_us, 1, &h, 4);
  sim.post(10_us, 0, &h, 3);
  sim.post(20_us, 0, &h, 5);
  sim.run_until(30_us);
  CHECK(trace.log == Log{"e1@0", "e2@0", "hook@0", "e3@10", "e4@10", "hook@10", "e5@20", "hook@20"});
  CHECK(sim.now() == 30_us);
  CHECK(sim.events_dispatched() == 5);
}

TEST_CASE("run_until runs events the hook posts at the same instant, then calls the hook again", "[simulator]") {
  Simulator sim;
  Trace trace{&sim, {}};
  TracingHandler h(trace);
  TracingHook hook(trace, &h);
  sim.set_instant_end_hook(&hook);
  sim.post(0_us, 0, &h, 1);
  sim.post(10_us, 0, &h, 2);
  sim.post(20_us, 0, &h, 3);
  hook.post_once_at(10_us, 9);
  sim.run_until(30_us);
  CHECK(trace.log == Log{"e1@0", "hook@0", "e2@10", "hook@10", "e9@10", "hook@10", "e3@20", "hook@20"});
  CHECK(sim.now() == 30_us);
}

TEST_CASE("run_until calls the hook again at the same instant for as long as it reports doing something",
          "[simulator]") {
  // A hook may act without posting anything (e.g. pick the next task); the
  // loop calls it again until it reports a quiet instant.
  Simulator sim;
  struct Busy : InstantEndHook {
    Simulator* sim;
    std::vector<int64_t> calls;  // now() in us at each call
    int busy_calls_left = 2;
    bool on_instant_end() override {
      calls.push_back(sim->now().count() / 1000);
      return busy_calls_left-- > 0;
    }
  } hook;
  hook.sim = &sim;
  Trace trace{&sim, {}};
  TracingHandler h(trace);
  sim.set_instant_end_hook(&hook);
  sim.post(0_us, 0, &h, 1);
  sim.post(5_us, 0, &h, 2);
  sim.run_until(10_us);
  CHECK(hook.calls == std::vector<int64_t>{0, 0, 0, 5});
  CHECK(trace.log == Log{"e1@0", "e2@5"});
}

TEST_CASE("an instant that never ends stops the run: the hook is told and then TimeStalled is thrown", "[simulator]") {
  // A handler that posts itself again at the same instant forever: time
  // would never advance. The hook hears of it at kLongInstant steps and
  // again kLongInstantProbe later; then the loop throws.
  Simulator sim;
  struct Again : EventHandler {
    Simulator* sim;
    uint64_t n = 0;
    void on_event(uint64_t) override {
      ++n;
      sim->post(sim->now(), 0, this, 0);
    }
  } again;
  again.sim = &sim;
  struct Hook : InstantEndHook {
    std::vector<std::pair<int64_t, bool>> calls;
    bool on_instant_end() override { return false; }
    void on_long_instant(Time now, bool second) override { calls.emplace_back(now.count(), second); }
  } hook;
  sim.set_instant_end_hook(&hook);
  sim.post(7_us, 0, &again, 0);
  CHECK_THROWS_AS(sim.run_until(1_ms), TimeStalled);
  REQUIRE(hook.calls.size() == 2);
  CHECK(hook.calls[0] == std::pair<int64_t, bool>{7000, false});
  CHECK(hook.calls[1] == std::pair<int64_t, bool>{7000, true});
  CHECK(sim.now() == 7_us);
  // Every step but the first few was one of its events.
  CHECK(again.n + 8 > Simulator::kLongInstant + Simulator::kLongInstantProbe);
  // Many events at one instant are fine while they end.
  Simulator ok;
  struct Count : EventHandler {
    uint64_t n = 0;
    void on_event(uint64_t) override { ++n; }
  } count;
  for (int i = 0; i < 1000; ++i) ok.post(5_us, 0, &count, 0);
  ok.run_until(10_us);
  CHECK(count.n == 1000);
}

TEST_CASE("run_until runs events at exactly the end time, leaves later ones pending and sets now to the end",
          "[simulator]") {
  Simulator sim;
  Trace trace{&sim, {}};
  TracingHandler h(trace);
  sim.post(0_us, 0, &h, 1);
  sim.post(30_us, 0, &h, 2);
  sim.post(31_us, 0, &h, 3);
  sim.run_until(30_us);
  CHECK(trace.log == Log{"e1@0", "e2@30"});
  CHECK(sim.now() == 30_us);
  CHECK(sim.queue().size() == 1);

  // now() == end even when nothing happened at the end.
  sim.run_until(30500_ns);
  CHECK(sim.now() == 30500_ns);
  CHECK(trace.log.size() == 2);

  // post_in is relative to now().
  sim.post_in(200_ns, 0, &h, 4);  // at 30.7 us
  sim.run_until(40_us);
  CHECK(trace.log == Log{"e1@0", "e2@30", "e4@30", "e3@31"});
  CHECK(sim.now() == 40_us);
  CHECK(sim.queue().empty());
}

TEST_CASE("A periodic timer re-armed from its handler fires once per period under run_until", "[simulator][timer]") {
  Simulator sim;
  struct Tick : EventHandler {
    Simulator* sim;
    Timer timer;
    std::vector<int64_t> at;
    void on_event(uint64_t) override {
      at.push_back(sim->now().count());
      timer.arm(sim->now() + 4_ms);
    }
  } tick;
  tick.sim = &sim;
  tick.timer = Timer(sim.queue(), &tick, 0, 0);
  tick.timer.arm(4_ms);
  sim.run_until(10_ms);
  CHECK(tick.at == std::vector<int64_t>{4000000, 8000000});
  CHECK(tick.timer.armed());
  CHECK(tick.timer.when() == 12_ms);
}

TEST_CASE("A lazily cancelled timer fires as nothing, and re-armed it orders as a cancel and a fresh arm", "[event_queue]") {
  EventQueue q;
  Recorder r;
  Timer t(q, &r, 100, 0);
  t.arm(10_us);
  q.post(20_us, 0, &r, 2);
  t.cancel_lazy();
  CHECK_FALSE(t.armed());
  CHECK(drain(q, r) == Tags{2});
  CHECK(q.dispatched() == 1);  // the dead entry is not counted
  // Re-armed for the instant of an event posted after the lazy cancel: it
  // comes after it, as a cancel followed by arm() would.
  t.arm(30_us);
  q.post(40_us, 0, &r, 4);
  t.cancel_lazy();
  q.post(40_us, 0, &r, 5);
  t.arm(40_us);
  CHECK(t.armed());
  CHECK(drain(q, r) == Tags{4, 5, 100});
  CHECK(q.dispatched() == 4);
}

// ---------------------------------------------------------------------------
// The packed heap entry: a 32-bit sequence number renumbered at its limit,
// and a 24-bit slot id.

TEST_CASE("Same-instant events keep posting order when the sequence counter reaches its limit", "[event_queue][sequence]") {
  EventQueue q;
  Recorder r;
  q.set_next_sequence_for_test(UINT32_MAX - 3);  // three draws left before the limit
  Tags expected;
  for (uint64_t i = 0; i < 10; ++i) {  // the 4th draw renumbers the three queued ones
    q.post(5_us, 0, &r, i);
    expected.push_back(i);
  }
  // Renumbered: the counter now follows the 3 renumbered + 7 new entries.
  // Had it wrapped to 0 instead, posts 3..9 would come before 0..2.
  CHECK(q.next_sequence_for_test() == 10);
  CHECK(q.size() == 10);
  CHECK(drain(q, r) == expected);
}

TEST_CASE("Renumbering keeps the order of every queued event, re-armed, cancelled and dead ones included",
          "[event_queue][sequence]") {
  EventQueue q;
  Recorder r;
  Timer a(q, &r, 100, 0);
  Timer b(q, &r, 200, 1);
  Timer c(q, &r, 300, 0);
  q.post(7_us, 0, &r, 1);
  a.arm(7_us);
  q.post(7_us, 1, &r, 2);
  SlotId gone = q.post(7_us, 0, &r, 3);
  b.arm(7_us);
  c.arm(9_us);
  q.post(3_us, 0, &r, 4);
  q.post(7_us, 0, &r, 5);
  q.cancel(gone);
  c.cancel_lazy();  // stays queued at 9 us, as nothing
  // The next draw is the last one allowed; the one after renumbers.
  q.set_next_sequence_for_test(UINT32_MAX - 1);
  q.post(7_us, 0, &r, 6);  // draws UINT32_MAX - 1
  CHECK(q.next_sequence_for_test() == UINT32_MAX);
  a.arm(7_us);  // re-keyed in place, after the renumbering: after 1, 5 and 6
  CHECK(q.next_sequence_for_test() == 9);  // 8 queued entries renumbered, then one draw
  q.post(7_us, 0, &r, 7);
  CHECK(q.size() == 9);  // the dead timer's entry included
  // 4 at 3 us; at 7 us tier 0 in posting (or re-arming) order, then tier 1;
  // the dead entry at 9 us pops as nothing.
  CHECK(drain(q, r) == Tags{4, 1, 5, 6, 100, 7, 2, 200});
  CHECK_FALSE(c.armed());
}

TEST_CASE("Slot ids never decide the order of same-instant events", "[event_queue][sequence]") {
  // Reused slots come off a stack: cancelling 0..4 in that order makes the
  // next posts get ids 4, 3, 2, 1, 0 -- descending while sequence numbers
  // ascend. The slot bits sit below the sequence in the key.
  EventQueue q;
  Recorder r;
  std::vector<SlotId> ids;
  for (uint64_t i = 0; i < 5; ++i) ids.push_back(q.post(1_us, 0, &r, 99));
  for (SlotId id : ids) q.cancel(id);
  std::vector<SlotId> reused;
  for (uint64_t i = 0; i < 5; ++i) reused.push_back(q.post(2_us, 0, &r, i));
  REQUIRE(reused == std::vector<SlotId>{ids[4], ids[3], ids[2], ids[1], ids[0]});
  CHECK(drain(q, r) == Tags{0, 1, 2, 3, 4});
}

TEST_CASE("Slot ids past the heap entry's 24 bits are refused with length_error", "[event_queue][slots]") {
  STATIC_REQUIRE(EventQueue::kMaxSlots == (1u << 24));
  // The limit itself is lowered for the test (2^24 slots would take
  // gigabytes); the check that throws is the same.
  EventQueue q;
  Recorder r;
  q.set_slot_limit_for_test(4);
  Timer t(q, &r, 100, 0);
  SlotId a = q.post(3_us, 0, &r, 1);
  q.post(2_us, 0, &r, 2);
  q.make_slot(&r, 3, 0);
  CHECK_THROWS_AS(q.post(1_us, 0, &r, 4), std::length_error);
  CHECK_THROWS_AS(q.make_slot(&r, 5, 0), std::length_error);
  CHECK_THROWS_AS(Timer(q, &r, 6, 0), std::length_error);
  // Nothing was half-done: the queue is as it was, and a released slot is
  // reused without reaching the limit.
  CHECK(q.size() == 2);
  q.cancel(a);
  q.post(4_us, 0, &r, 7);
  t.arm(5_us);
  CHECK(drain(q, r) == Tags{2, 7, 100});
  q.set_slot_limit_for_test(EventQueue::kMaxSlots);  // back to the real limit
  q.post(1_us, 0, &r, 8);  // reuses slot 1
  q.post(1_us, 0, &r, 9);  // reuses slot 2
  CHECK(q.post(1_us, 0, &r, 10) == 4);  // a fifth slot now
}

// sim/fifo.h: first in, first out across wrap-around and growth, keeping
// its storage (no allocation once it has held its largest size).
TEST_CASE("Fifo keeps FIFO order across wrap-around and growth", "[event_queue]") {
  Fifo<int> q;
  CHECK(q.empty());
  int next_in = 0, next_out = 0;
  // Fill to 3, drain 2, repeatedly: the ring wraps; then push 9 more with
  // 3 queued so growth happens with the head mid-ring.
  for (int round = 0; round < 10; ++round) {
    while (q.size() < 3) q.push_back(next_in++);
    for (int i = 0; i < 2; ++i) {
      REQUIRE(q.front() == next_out);
      q.pop_front();
      ++next_out;
    }
  }
  for (int i = 0; i < 9; ++i) q.push_back(next_in++);
  CHECK(q.size() == 10);
  while (!q.empty()) {
    REQUIRE(q.front() == next_out);
    q.pop_front();
    ++next_out;
  }
  CHECK(next_out == next_in);
  // Steady state: cycling through a queue that held 10 allocates nothing
  // (std::deque would take a new block every few elements).
  AllocationCounter allocs;
  for (int i = 0; i < 1000; ++i) {
    q.push_back(i);
    q.pop_front();
  }
  CHECK(allocs.count() == 0);
}

TEST_CASE("Fifo indexes, iterates, reserves and clears in FIFO order", "[event_queue]") {
  Fifo<int> q;
  q.reserve(5);
  // Wrap the ring: 3 in, 2 out, 4 in (5 slots, head at 2).
  for (int i = 0; i < 3; ++i) q.push_back(i);
  q.pop_front();
  q.pop_front();
  for (int i = 3; i < 7; ++i) q.push_back(i);
  REQUIRE(q.size() == 5);
  CHECK(q.front() == 2);
  CHECK(q.back() == 6);
  for (size_t i = 0; i < q.size(); ++i) CHECK(q[i] == static_cast<int>(i) + 2);
  std::vector<int> seen;
  for (int v : q) seen.push_back(v);
  CHECK(seen == std::vector<int>{2, 3, 4, 5, 6});
  const Fifo<int>& cq = q;
  seen.clear();
  for (int v : cq) seen.push_back(v);
  CHECK(seen == std::vector<int>{2, 3, 4, 5, 6});
  // Reserved and full at 5: cycling allocates nothing; clear() keeps the
  // storage too.
  {
    AllocationCounter allocs;
    for (int i = 0; i < 100; ++i) {
      q.pop_front();
      q.push_back(i);
    }
    q.clear();
    for (int i = 0; i < 5; ++i) q.push_back(i);
    CHECK(allocs.count() == 0);
  }
  CHECK(q[4] == 4);
  q.clear();
  CHECK(q.empty());
  // A move-only element type (the DRM scheduler queues unique_ptrs).
  Fifo<std::unique_ptr<int>> owned;
  for (int i = 0; i < 9; ++i) owned.push_back(std::make_unique<int>(i));
  owned.pop_front();
  CHECK(*owned.front() == 1);
  CHECK(*owned[7] == 8);
}

TEST_CASE("Fifo removes an element from the middle of a wrapped ring, keeping the order", "[event_queue]") {
  Fifo<int> q;
  q.reserve(5);
  for (int i = 0; i < 3; ++i) q.push_back(i);
  q.pop_front();
  q.pop_front();
  for (int i = 3; i < 7; ++i) q.push_back(i);  // 2 3 4 5 6, head at slot 2: the ring wraps
  auto items = [&q] {
    std::vector<int> v;
    for (int x : q) v.push_back(x);
    return v;
  };
  q.remove_at(1);                              // 3
  CHECK(items() == std::vector<int>{2, 4, 5, 6});
  q.remove_at(3);                              // the back
  q.remove_at(0);                              // the front
  CHECK(items() == std::vector<int>{4, 5});
  q.push_back(7);
  CHECK(q.back() == 7);
  CHECK(q.size() == 3);
  CHECK(q.remove(5));        // by value: the first equal element
  CHECK_FALSE(q.remove(5));  // none left
  CHECK(items() == std::vector<int>{4, 7});
  // Insertion before an element, at the front and at the back (a flush
  // work after the queued work, or at the list's head).
  q.insert_at(1, 8);
  q.insert_at(0, 9);
  q.insert_at(q.size(), 10);
  CHECK(items() == std::vector<int>{9, 4, 8, 7, 10});
}

TEST_CASE("run_until refuses an event armed before the current time", "[simulator]") {
  // Time never runs backwards: an event in the past is a model bug, and
  // the loop says so instead of moving the clock back.
  Simulator sim;
  Trace trace{&sim, {}};
  TracingHandler h(trace);
  sim.post(10_us, 0, &h, 1);
  sim.run_until(20_us);
  sim.post(15_us, 0, &h, 2);
  CHECK_THROWS_AS(sim.run_until(30_us), std::logic_error);
  CHECK(sim.now() == 20_us);
  CHECK(trace.log == Log{"e1@10"});
}
