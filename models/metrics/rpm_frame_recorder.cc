#include "models/metrics/rpm_frame_recorder.h"

#include <algorithm>

#include "models/kernel/sched/task.h"

namespace schedlab {

namespace {
constexpr int kRpmActive = 0, kRpmResuming = 1, kRpmSuspended = 2;

// The group a sleeping task is reported under: its TaskSpec name, or
// "kworker" for every workqueue worker (kworker/u16:2 and its siblings are
// one pool's interchangeable threads).
std::string group_of(const Task& p) {
  if (p.comm.rfind("kworker/", 0) == 0) return "kworker";
  return p.group.empty() ? p.comm : p.group;
}
}  // namespace

void RpmFrameRecorder::on_rpm(Time t, const RpmEvent& e) {
  if (e.kind == RpmEvent::Kind::kDSleep) {
    if (e.start < warmup_ || e.task == nullptr) return;
    const std::string group = group_of(*e.task);
    const bool by_task = e.waker != nullptr;
    auto key = std::make_tuple(group, std::string(e.device), e.in_resume, by_task);
    auto [it, fresh] = sleeps_.try_emplace(key);
    if (fresh) {
      it->second.group = group;
      it->second.device = std::string(e.device);
      it->second.in_resume = e.in_resume;
      it->second.woken_by_task = by_task;
    }
    it->second.d_state.add(e.d_state.count());
    it->second.waker_wait.add(e.waker_wait.count());
    return;
  }
  auto it = devices_.find(e.device);
  if (it == devices_.end()) {
    it = devices_.emplace(std::string(e.device), DeviceState{}).first;
    it->second.m.name = std::string(e.device);
  }
  DeviceState& d = it->second;
  const Time at = std::max(t, warmup_);
  const Time from = std::max(d.since, warmup_);
  if (d.status == kRpmSuspended && at > from) d.m.suspended_time += at - from;
  if (t >= warmup_ && d.seen) {  // the first event is the boot status, not a transition
    if (e.status == kRpmSuspended) ++d.m.suspends;
    if (e.status == kRpmActive && d.status == kRpmResuming) ++d.m.resumes;
  }
  d.status = e.status;
  d.since = t;
  d.seen = true;
}

void RpmFrameRecorder::on_frame(Time t, const FrameEvent& e) {
  if (e.vsync < warmup_) return;
  auto it = frames_.find(e.layer);
  if (it == frames_.end()) {
    it = frames_.emplace(std::string(e.layer), FrameMetrics{}).first;
    it->second.layer = std::string(e.layer);
  }
  FrameMetrics& f = it->second;
  ++f.frames;
  f.app_missed += e.app_missed;
  f.sf_missed += e.sf_missed;
  f.buffer_stuffing += e.buffer_stuffing;
  f.dropped += e.dropped;
  f.janky += e.janky;
  f.app_time.add((e.app_end - e.vsync).count());
  if (!e.dropped) f.present_delay.add(std::max<int64_t>(0, (e.present - e.expected_present).count()));
}

void RpmFrameRecorder::fill(RunResult& r, Time end) const {
  for (const auto& [k, s] : sleeps_) r.rpm_sleeps.push_back(s);
  for (const auto& [name, d] : devices_) {
    RpmDeviceMetrics m = d.m;
    const Time from = std::max(d.since, warmup_);
    if (d.status == kRpmSuspended && end > from) m.suspended_time += end - from;
    r.rpm_devices.push_back(std::move(m));
  }
  for (const auto& [name, f] : frames_) r.frames.push_back(f);
}

}  // namespace schedlab
