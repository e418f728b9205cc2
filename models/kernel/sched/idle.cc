// The idle class (kernel/sched/idle.c): each CPU's idle task, picked when
// no other class has work. Entering and leaving idle states is the cpuidle
// model's business (the cpuidle issue); here idle is a single state 0.
#include "models/kernel/kernel.h"
#include "models/kernel/sched/classes.h"

namespace schedlab {
namespace {

class IdleClass final : public SchedClass {
 public:
  using SchedClass::SchedClass;
  const char* name() const override { return "idle"; }
  void enqueue_task(Rq&, Task&, int) override {}
  bool dequeue_task(Rq&, Task&, int) override { return true; }
  Task* pick_task(Rq& rq) override { return rq.idle; }
};

}  // namespace

std::unique_ptr<SchedClass> make_idle_class(Kernel& k) { return std::make_unique<IdleClass>(k); }

}  // namespace schedlab
