// A GPU as the DRM scheduler sees it: it accepts jobs (ops->run_job() rang
// the doorbell), executes up to `slots` of them at once in hand-over order,
// each for a service time (the job's own, or drawn from a distribution on a
// component-named RngStream), and raises the job interrupt on `irq_cpu`
// `irq_latency` after a job ends. The interrupt calls back the job's owner
// (the drm_gpu_scheduler), in interrupt context on that CPU.
//
// Not modelled: GPU frequency (devfreq), power states, preemption between
// jobs, the firmware's own scheduling (panthor's CSF groups): a job's
// service time is all the GPU does to it.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "models/devices/device_params.h"
#include "models/kernel/workqueue/work.h"
#include "sim/event_queue.h"
#include "sim/rng.h"

namespace schedlab {

class Kernel;

// Receives the job interrupt.
class GpuClient {
 public:
  virtual ~GpuClient() = default;
  // The job `cookie` ended; runs in interrupt context (ctx.task == nullptr).
  virtual void gpu_job_done(uint64_t cookie, QueueContext irq) = 0;
};

class Gpu final : public EventHandler {
 public:
  Gpu(Kernel& k, std::string name, const GpuParams& params, uint64_t seed);
  const std::string& name() const { return name_; }
  // Hands a job over; service <= 0 draws one from the distribution.
  void run(GpuClient& owner, uint64_t cookie, Time service);
  int busy_slots() const;
  uint64_t jobs_done() const { return done_; }
  Time busy_time() const { return busy_; }  // summed over slots
  void on_event(uint64_t tag) override;

 private:
  struct Job {
    GpuClient* owner = nullptr;
    uint64_t cookie = 0;
    Time service;
  };
  struct Slot {
    bool busy = false;
    Job job;
    Timer timer;
  };
  void start(size_t slot, const Job& job);
  Kernel& k_;
  std::string name_;
  GpuParams params_;
  RngStream rng_;
  std::vector<Slot> slots_;
  std::deque<Job> waiting_;
  std::deque<Job> irq_queue_;  // ended, interrupt not yet delivered
  uint64_t done_ = 0;
  Time busy_;
};

}  // namespace schedlab
