// struct mutex with optimistic spinning (models/kernel/sched/kernel_mutex.h,
// kernel/locking/mutex.c 6.12): hand-computed schedules. Every task is
// SCHED_FIFO and pinned to its own CPU (no fair preemption, no placement),
// the kernel has no overheads, CPUs run at capacity 1024 and f_max (a
// microsecond of work takes a microsecond).
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "models/errors.h"
#include "models/kernel/kernel.h"
#include "models/kernel/sched/kernel_mutex.h"
#include "sched_test_util.h"

using namespace schedlab;
using namespace schedlab::testing;

namespace {

struct Step {
  enum class Kind { kRun, kLock, kUnlock, kSleep } kind;
  Time t;  // kRun: work; kSleep: a D sleep of this length
};
Step run(Time t) { return {Step::Kind::kRun, t}; }
Step lock() { return {Step::Kind::kLock, Time::zero()}; }
Step unlock() { return {Step::Kind::kUnlock, Time::zero()}; }
Step sleep(Time t) { return {Step::Kind::kSleep, t}; }

class Rig;

// A task running a script of CPU work, D sleeps, and lock / unlock of the
// rig's mutex; it records when it took the mutex.
class Script final : public TaskBody, public EventHandler {
 public:
  Script(Rig& rig, std::vector<Step> steps);
  Action next(Task& self) override;
  void on_event(uint64_t) override;
  std::vector<Time> acquired;
  Time ended = Time::max();
  Task* task = nullptr;

 private:
  Rig& rig_;
  std::vector<Step> steps_;
  size_t pc_ = 0;
  Timer timer_;
};

class Rig {
 public:
  explicit Rig(int cpus, PreemptModel preempt = PreemptModel::kFull, Time ipi_latency = Time::zero()) {
    ScenarioParams sp = exact_scenario("6.12", 1000, cpus);
    sp.kernel.preempt = preempt;
    sp.kernel.ipi_latency = ipi_latency;
    k = std::make_unique<Kernel>(sp.kernel, sp.platform);
    k->add_observer(&switches);
    mutex = std::make_unique<KernelMutex>(*k, "test_lock");
  }
  // A SCHED_FIFO task pinned to `cpu`, started at `start`.
  Script& add(const std::string& name, int cpu, Time start, std::vector<Step> steps, int prio = 10,
              bool kernel_thread = false) {
    Task& t = k->create_task(name, name, Policy::kFifo, 0, prio, {cpu}, kernel_thread);
    scripts.push_back(std::make_unique<Script>(*this, std::move(steps)));
    Script& s = *scripts.back();
    s.task = &t;
    k->set_body(t, &s);
    k->start_task_at(t, start);
    return s;
  }
  void run_until(Time t) { k->run_until(t); }

  std::unique_ptr<Kernel> k;
  SwitchLog switches;
  std::unique_ptr<KernelMutex> mutex;
  std::vector<std::unique_ptr<Script>> scripts;
};

Script::Script(Rig& rig, std::vector<Step> steps)
    : rig_(rig), steps_(std::move(steps)), timer_(rig.k->sim().queue(), this, 0, kTierTimer) {}

Action Script::next(Task& self) {
  while (pc_ < steps_.size()) {
    const Step& s = steps_[pc_];
    switch (s.kind) {
      case Step::Kind::kRun:
        ++pc_;
        return Action::run(s.t.count());
      case Step::Kind::kLock:
        if (auto wait = rig_.mutex->lock_step(self)) return *wait;
        acquired.push_back(rig_.k->now());
        ++pc_;
        continue;
      case Step::Kind::kUnlock:
        rig_.mutex->unlock(self);
        ++pc_;
        continue;
      case Step::Kind::kSleep:
        ++pc_;
        timer_.arm(rig_.k->now() + s.t);
        return Action::block(TaskState::kUninterruptible);
    }
  }
  ended = rig_.k->now();
  return Action::exit();
}

void Script::on_event(uint64_t) { rig_.k->try_to_wake_up(*task, nullptr, task->cpu); }

// The owner of most tests (CPU 0): takes the mutex at 0, runs 50 us,
// sleeps in D 50 -> 250 us holding it (a firmware wait), runs 30 us and
// unlocks at 280 us.
void add_sleeping_owner(Rig& rig) {
  rig.add("owner", 0, Time::zero(), {lock(), run(Time::us(50)), sleep(Time::us(200)), run(Time::us(30)), unlock()});
}

// The switches on `cpu` in (from, to).
std::vector<SwitchRecord> switches_on(const SwitchLog& log, int cpu, Time from, Time to) {
  std::vector<SwitchRecord> v;
  for (const auto& r : log.log)
    if (r.cpu == cpu && r.t > from && r.t < to) v.push_back(r);
  return v;
}

}  // namespace

// The owner (CPU 0) holds the mutex for 100 us of work; the contender
// (CPU 1) asks at 20 us, finds the owner running and spins: its CPU stays
// busy (no switch to idle) until the unlock at 100 us, when it takes the
// mutex, runs its 10 us and exits at 110 us.
TEST_CASE("a mutex contender spins while the owner runs and takes the mutex at the unlock", "[mutex]") {
  Rig rig(2);
  Script& owner = rig.add("owner", 0, Time::zero(), {lock(), run(Time::us(100)), unlock(), run(Time::us(10))});
  Script& waiter = rig.add("waiter", 1, Time::us(20), {lock(), run(Time::us(10)), unlock()});
  rig.run_until(Time::ms(1));
  REQUIRE(owner.acquired == std::vector<Time>{Time::zero()});
  REQUIRE(waiter.acquired == std::vector<Time>{Time::us(100)});
  CHECK(waiter.ended == Time::us(110));
  CHECK(rig.switches.first_run("waiter") == Time::us(20));
  CHECK(switches_on(rig.switches, 1, Time::us(20), Time::us(110)).empty());  // spinning, not idle
  CHECK(waiter.task->work_done == Time::us(90).count());  // 80 us of spin + 10 us of work
  CHECK(rig.mutex->owner() == nullptr);
}

// The owner sleeps in D at 50 us with the mutex held (a firmware wait): the
// spinner's spin ends there (owner_on_cpu() fails), it takes the slow
// path and sleeps in D too; the owner wakes at 250 us, runs 30 us and
// unlocks at 280 us, which wakes the waiter: it takes the mutex then.
TEST_CASE("a mutex contender stops spinning when the owner sleeps and is woken by the unlock", "[mutex]") {
  Rig rig(2);
  add_sleeping_owner(rig);
  Script& waiter = rig.add("waiter", 1, Time::us(20), {lock(), run(Time::us(10)), unlock()});
  rig.run_until(Time::ms(1));
  const auto cpu1 = switches_on(rig.switches, 1, Time::us(20), Time::us(285));
  REQUIRE(cpu1.size() == 2);
  CHECK(cpu1[0] == SwitchRecord{Time::us(50), 1, "waiter", "idle", 'D'});
  CHECK(cpu1[1] == SwitchRecord{Time::us(280), 1, "idle", "waiter", 'R'});
  CHECK(waiter.acquired == std::vector<Time>{Time::us(280)});
  CHECK(waiter.ended == Time::us(290));
}

// HANDOFF (__mutex_trylock_or_handoff(), __mutex_handoff()): as above, and
// a thief on CPU 2 asks at 270 us while the owner runs, so it spins; the
// unlock at 280 us finds it spinning: it takes the mutex, and the woken
// waiter finds it taken. Being the first waiter, it sets HANDOFF and spins
// on the thief. A latecomer on CPU 3 asks at 300 us and spins too. The
// thief's unlock at 320 us hands the mutex to the waiter, not to the
// spinning latecomer (HANDOFF forbids stealing); the latecomer keeps
// spinning on the new owner, which runs, and takes the mutex at its
// unlock at 330 us.
TEST_CASE("a woken mutex waiter that finds the mutex stolen gets it handed off at the next unlock", "[mutex]") {
  Rig rig(4);
  add_sleeping_owner(rig);
  Script& waiter = rig.add("waiter", 1, Time::us(20), {lock(), run(Time::us(10)), unlock()});
  Script& thief = rig.add("thief", 2, Time::us(270), {lock(), run(Time::us(40)), unlock()});
  Script& late = rig.add("late", 3, Time::us(300), {lock(), run(Time::us(10)), unlock()});
  rig.run_until(Time::ms(1));
  CHECK(thief.acquired == std::vector<Time>{Time::us(280)});
  CHECK(waiter.acquired == std::vector<Time>{Time::us(320)});
  CHECK(late.acquired == std::vector<Time>{Time::us(330)});
  CHECK(late.ended == Time::us(340));
  // The waiter woke at 280 us and never slept again: it spun on the thief.
  CHECK(switches_on(rig.switches, 1, Time::us(280), Time::us(330)).empty());
  CHECK(switches_on(rig.switches, 3, Time::us(300), Time::us(340)).empty());
}

// mutex_spin_on_owner() ends on need_resched(): a FIFO 50 task woken on
// the spinner's CPU at 50 us; the spinner calls schedule() runnable (R)
// and the task runs 100 us. The owner holds the mutex to 200 us. At
// 150 us the spinner runs again and takes the slow path (the kernel's
// fail path: no second spin for a task not yet on the wait list): it
// sleeps in D although the owner runs, and the unlock wakes it at 200 us.
TEST_CASE("a preempted mutex spinner does not spin again: it sleeps until the unlock", "[mutex]") {
  Rig rig(2);
  rig.add("owner", 0, Time::zero(), {lock(), run(Time::us(200)), unlock()});
  Script& spinner = rig.add("spinner", 1, Time::us(20), {lock(), run(Time::us(10)), unlock()});
  rig.add("hog", 1, Time::us(50), {run(Time::us(100))}, 50);
  rig.run_until(Time::ms(1));
  const auto cpu1 = switches_on(rig.switches, 1, Time::us(20), Time::us(205));
  REQUIRE(cpu1.size() == 4);
  CHECK(cpu1[0] == SwitchRecord{Time::us(50), 1, "spinner", "hog", 'R'});
  CHECK(cpu1[1] == SwitchRecord{Time::us(150), 1, "hog", "spinner", 'X'});
  CHECK(cpu1[2] == SwitchRecord{Time::us(150), 1, "spinner", "idle", 'D'});
  CHECK(cpu1[3] == SwitchRecord{Time::us(200), 1, "idle", "spinner", 'R'});
  CHECK(spinner.acquired == std::vector<Time>{Time::us(200)});
}

TEST_CASE("unlocking a mutex one does not hold is a model error naming both tasks", "[mutex]") {
  Rig rig(2);
  rig.add("owner", 0, Time::zero(), {lock(), run(Time::us(100)), unlock()});
  rig.add("other", 1, Time::us(10), {unlock()});
  CHECK_THROWS_WITH(rig.run_until(Time::ms(1)),
                    Catch::Contains("task other unlocks mutex 'test_lock', which owner holds"));
}

// need_resched() is polled by the spin, so it ends the spin at once
// whatever the preemption model: under PREEMPT_NONE and VOLUNTARY a
// kernel thread is not preempted, but a spinning one calls schedule()
// itself (mutex_optimistic_spin()'s fail path). A FIFO 50 task woken on
// the kthread spinner's CPU at 50 us runs then, under all three models;
// the spinner then sleeps on the wait list (150 us) and takes the mutex
// at the unlock (500 us).
TEST_CASE("a mutex spinner leaves its spin for a pending reschedule under every preemption model", "[mutex]") {
  for (PreemptModel pm : {PreemptModel::kNone, PreemptModel::kVoluntary, PreemptModel::kFull}) {
    Rig rig(2, pm);
    rig.add("owner", 0, Time::zero(), {lock(), run(Time::us(500)), unlock()});
    Script& spinner = rig.add("kspin", 1, Time::us(20), {lock(), run(Time::us(10)), unlock()}, 10, true);
    rig.add("rt", 1, Time::us(50), {run(Time::us(100))}, 50);
    rig.run_until(Time::ms(1));
    const auto cpu1 = switches_on(rig.switches, 1, Time::us(20), Time::us(505));
    REQUIRE(cpu1.size() == 4);
    CHECK(cpu1[0] == SwitchRecord{Time::us(50), 1, "kspin", "rt", 'R'});
    CHECK(cpu1[2] == SwitchRecord{Time::us(150), 1, "kspin", "idle", 'D'});
    CHECK(cpu1[3] == SwitchRecord{Time::us(500), 1, "idle", "kspin", 'R'});
    CHECK(spinner.acquired == std::vector<Time>{Time::us(500)});
  }
}

// TIF_NEED_RESCHED is set before the resched IPI is sent: with a 20 us IPI
// the spinner still leaves at 50 us (a preemption proper would wait for
// the IPI, to 70 us).
TEST_CASE("a mutex spinner sees need_resched before the resched IPI arrives", "[mutex]") {
  Rig rig(2, PreemptModel::kFull, Time::us(20));
  rig.add("owner", 0, Time::zero(), {lock(), run(Time::us(500)), unlock()});
  rig.add("spinner", 1, Time::us(20), {lock(), run(Time::us(10)), unlock()});
  rig.add("rt", 1, Time::us(50), {run(Time::us(100))}, 50);
  rig.run_until(Time::ms(1));
  CHECK(rig.switches.first_run("rt") == Time::us(50));
}

// The first waiter's spin ended by a reschedule: the kernel's wait loop
// runs on in TASK_RUNNING, and the waiter spins again while the owner
// runs. As in the handoff test, the waiter (CPU 1) is woken at 280 us,
// finds the mutex taken by the thief (CPU 2, holding it to 480 us), sets
// HANDOFF and spins; a FIFO 50 task on CPU 1 runs 300 -> 350 us. At
// 350 us the waiter runs again and spins (no D sleep) until the thief's
// unlock hands it the mutex at 480 us.
TEST_CASE("a first mutex waiter preempted while spinning spins again when it runs", "[mutex]") {
  Rig rig(3);
  add_sleeping_owner(rig);
  Script& waiter = rig.add("waiter", 1, Time::us(20), {lock(), run(Time::us(10)), unlock()});
  rig.add("thief", 2, Time::us(270), {lock(), run(Time::us(200)), unlock()});
  rig.add("hog", 1, Time::us(300), {run(Time::us(50))}, 50);
  rig.run_until(Time::ms(1));
  const auto cpu1 = switches_on(rig.switches, 1, Time::us(280), Time::us(485));
  REQUIRE(cpu1.size() == 2);
  CHECK(cpu1[0] == SwitchRecord{Time::us(300), 1, "waiter", "hog", 'R'});
  CHECK(cpu1[1] == SwitchRecord{Time::us(350), 1, "hog", "waiter", 'X'});
  CHECK(waiter.acquired == std::vector<Time>{Time::us(480)});
}

// A lock attempt's state does not outlive it: the first waiter is
// preempted while spinning (300 us) and handed the mutex while off its CPU
// (the thief's unlock at 320 us); it picks it up at 400 us. Its next
// mutex_lock() at 910 us, with owner2 running on CPU 3 (900 -> 1000 us),
// spins again (no D sleep) and takes the mutex at 1000 us.
TEST_CASE("a mutex handed to a preempted waiter leaves no trace on its next lock", "[mutex]") {
  Rig rig(4);
  add_sleeping_owner(rig);
  Script& waiter = rig.add("waiter", 1, Time::us(20),
                           {lock(), run(Time::us(10)), unlock(), sleep(Time::us(500)), lock(), run(Time::us(10)), unlock()});
  rig.add("thief", 2, Time::us(270), {lock(), run(Time::us(40)), unlock()});
  rig.add("hog", 1, Time::us(300), {run(Time::us(100))}, 50);
  rig.add("owner2", 3, Time::us(900), {lock(), run(Time::us(100)), unlock()});
  rig.run_until(Time::ms(2));
  CHECK(waiter.acquired == std::vector<Time>{Time::us(400), Time::us(1000)});
  CHECK(switches_on(rig.switches, 1, Time::us(910), Time::us(1000)).empty());  // spinning, not asleep
}

TEST_CASE("locking a mutex one holds is a model error (it would wait for itself)", "[mutex]") {
  Rig rig(1);
  rig.add("owner", 0, Time::zero(), {lock(), run(Time::us(10)), lock(), run(Time::us(10)), unlock()});
  CHECK_THROWS_WITH(rig.run_until(Time::ms(1)),
                    Catch::Contains("task owner locks mutex 'test_lock', which it holds already"));
}
