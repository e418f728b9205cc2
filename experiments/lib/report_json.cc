#include "experiments/lib/report_json.h"

#include <fmt/format.h>

#include "experiments/lib/bootstrap.h"

#include "experiments/lib/json_writer.h"
#include "experiments/lib/report_format.h"

namespace schedlab {
namespace {

void write_seconds(JsonWriter& w, const char* key, Time t) { w.number_field(key, seconds_text(t)); }

// {"count": n, "mean_us": ..., ...}; the statistics are null without samples.
void write_distribution(JsonWriter& w, const char* key, const Summary& s) {
  w.key(key);
  w.begin_object();
  w.field("count", s.count);
  const std::pair<const char*, double> stats[] = {{"mean_us", s.mean}, {"min_us", s.min}, {"p50_us", s.p50},
                                                  {"p90_us", s.p90},   {"p95_us", s.p95}, {"p98_us", s.p98},
                                                  {"p99_us", s.p99},   {"max_us", s.max}};
  for (const auto& [k, v] : stats) {
    w.key(k);
    if (s.count == 0)
      w.null();
    else
      w.number_text(us_text(v));
  }
  w.end_object();
}

void write_count(JsonWriter& w, const char* key, uint64_t total, const TaskStats& s, bool per_run) {
  w.field(key, total);
  if (per_run) {
    w.number_field(std::string(key) + "_per_run", per_run_text(s.per_run(total)));
  }
}

// The members every task and group object carries.
void write_stats(JsonWriter& w, const TaskStats& s, bool per_run) {
  w.field("runs", s.runs);
  write_seconds(w, "elapsed_s", s.elapsed);
  write_seconds(w, "cpu_time_s", s.cpu_time);
  w.number_field("cpu_share", fraction_text(s.cpu_share()));
  write_seconds(w, "runnable_time_s", s.runnable_time);
  write_seconds(w, "sleep_time_s", s.sleep_time);
  write_seconds(w, "blocked_time_s", s.blocked_time);
  write_count(w, "wakeups", s.wakeups, s, per_run);
  write_count(w, "preemptions", s.preemptions, s, per_run);
  write_count(w, "switches_in", s.switches_in, s, per_run);
  write_count(w, "migrations", s.migrations, s, per_run);
  write_count(w, "periods", s.periods, s, per_run);
  write_count(w, "deadline_misses", s.deadline_misses, s, per_run);
  write_distribution(w, "wakeup_latency", s.wakeup_latency);
  write_distribution(w, "runnable_wait", s.runnable_wait);
  write_distribution(w, "response", s.response);
}

void write_identity(JsonWriter& w, Policy policy, int nice, int rt_priority) {
  w.field("policy", policy_long_name(policy));
  w.field("nice", nice);
  w.field("rt_priority", rt_priority);
  w.field("prio", kernel_prio(policy, nice, rt_priority));
}

void write_scenario(JsonWriter& w, const ScenarioInfo& s) {
  w.key("scenario");
  w.begin_object();
  w.field("name", s.name);
  w.field("source", s.source);
  w.field("kernel_version", s.kernel_version);
  w.field("hz", s.hz);
  w.field("preempt", s.preempt);
  w.field("cpus", s.cpus);
  write_seconds(w, "duration_s", s.duration);
  write_seconds(w, "warmup_s", s.warmup);
  w.end_object();
}

// A CPU's members on a platform with a power model: energy, OPP and
// cpuidle residency.
void write_cpu_power(JsonWriter& w, const CpuMetrics& cm) {
  w.field("cluster", cm.cluster);
  w.field("energy_mj", cm.energy_mj(), 3);
  w.field("busy_energy_mj", cm.busy_energy_mj, 3);
  w.field("idle_energy_mj", cm.idle_energy_mj, 3);
  w.field("frequency_changes", cm.frequency_changes);
  w.key("busy_at_opp");
  w.begin_array();
  for (size_t i = 0; i < cm.opp_khz.size(); ++i) {
    w.begin_object();
    w.field("freq_khz", cm.opp_khz[i]);
    write_seconds(w, "busy_s", cm.busy_at_opp[i]);
    w.end_object();
  }
  w.end_array();
  // cpuidle residency: time outside any idle state (cpu_idle -1) and in
  // each state, indexed as cpu_idle numbers them.
  write_seconds(w, "cpuidle_running_s", cm.cpuidle_running);
  w.key("cpuidle_residency_s");
  w.begin_array();
  for (Time t : cm.cpuidle_residency) w.number_text(seconds_text(t));
  w.end_array();
}

void write_run(JsonWriter& w, size_t index, const RunResult& r) {
  w.begin_object();
  w.field("run", static_cast<uint64_t>(index));
  w.field("seed", r.seed);
  write_seconds(w, "window_start_s", r.window_start);
  write_seconds(w, "window_end_s", r.window_end);
  write_seconds(w, "elapsed_s", r.elapsed());
  w.field("events", r.events);
  w.object_array("tasks", r.tasks, [&](const TaskMetrics& m) {
    w.field("name", m.name);
    w.field("group", m.group.empty() ? m.name : m.group);
    w.field("pid", m.pid);
    write_identity(w, m.policy, m.nice, m.rt_priority);
    write_stats(w, task_stats(m, r.elapsed()), false);
  });
  w.key("cpus");
  w.begin_array();
  for (size_t c = 0; c < r.cpus.size(); ++c) {
    const CpuMetrics& cm = r.cpus[c];
    w.begin_object();
    w.field("cpu", static_cast<uint64_t>(c));
    write_seconds(w, "busy_s", cm.busy);
    write_seconds(w, "idle_s", cm.idle);
    w.field("context_switches", cm.context_switches);
    if (r.has_power()) write_cpu_power(w, cm);
    w.end_object();
  }
  w.end_array();
  w.field("migrations", r.migrations());
  if (r.has_power()) {
    w.object_array("clusters", r.clusters, [&](const ClusterMetrics& cl) {
      w.field("name", cl.name);
      w.field("cpu_energy_mj", cl.cpu_energy_mj, 3);
      w.field("static_energy_mj", cl.static_energy_mj, 3);
      w.field("energy_mj", cl.energy_mj(), 3);
    });
    w.field("total_energy_mj", r.total_energy_mj(), 3);
    w.field("avg_power_mw", r.avg_power_mw(), 3);
  }
  auto write_us = [&](const char* prefix, const Samples& s) {
    Summary sum = s.summarize();
    for (auto [name, v] : {std::pair{"mean", sum.mean}, {"p50", sum.p50}, {"p95", sum.p95}, {"p98", sum.p98},
                           {"p99", sum.p99}, {"max", sum.max}})
      w.field(std::string(prefix) + "_" + name + "_us", v / 1000.0, 3);
  };
  if (!r.workqueues.empty())
    w.object_array("workqueues", r.workqueues, [&](const WorkQueueMetrics& q) {
      w.field("name", q.name);
      w.field("items", q.items);
      write_us("cpu_wait", q.cpu_wait);
      write_us("runnable_wait", q.runnable_wait);
      write_us("idle_exit_wait", q.idle_exit_wait);
      write_us("exec", q.exec);
    });
  if (!r.drm_entities.empty())
    w.object_array("drm_entities", r.drm_entities, [&](const DrmEntityMetrics& d) {
      w.field("name", d.name);
      w.field("jobs", d.jobs);
      write_us("push_to_run", d.push_to_run);
    });
  // D sleeps in rpm_resume()/rpm_suspend() per group, device, kind.
  if (!r.rpm_sleeps.empty())
    w.object_array("rpm_sleeps", r.rpm_sleeps, [&](const RpmSleepMetrics& z) {
      w.field("group", z.group);
      w.field("device", z.device);
      w.field("in", z.in_resume ? "rpm_resume" : "rpm_suspend");
      w.field("woken_by_task", z.woken_by_task);
      w.field("sleeps", static_cast<uint64_t>(z.d_state.size()));
      const Summary d = z.d_state.summarize(), k = z.waker_wait.summarize();
      w.field("d_state_p90_us", d.p90 / 1000.0, 3);
      w.field("waker_wait_p90_us", k.p90 / 1000.0, 3);
      write_us("d_state", z.d_state);
      write_us("waker_wait", z.waker_wait);
    });
  if (!r.rpm_devices.empty())
    w.object_array("rpm_devices", r.rpm_devices, [&](const RpmDeviceMetrics& d) {
      w.field("name", d.name);
      w.field("suspends", d.suspends);
      w.field("resumes", d.resumes);
      write_seconds(w, "suspended_s", d.suspended_time);
    });
  if (!r.frames.empty())  // FrameTimeline per layer
    w.object_array("frames", r.frames, [&](const FrameMetrics& f) {
      w.field("layer", f.layer);
      w.field("frames", f.frames);
      w.field("app_missed", f.app_missed);
      w.field("sf_missed", f.sf_missed);
      w.field("buffer_stuffing", f.buffer_stuffing);
      w.field("janky", f.janky);
      w.field("dropped", f.dropped);
    });
  if (!r.decisions.empty()) write_decisions_json(w, r.decisions);  // run --why
  w.end_object();
}

void write_aggregate(JsonWriter& w, const Aggregate& a) {
  w.key("aggregate");
  w.begin_object();
  w.field("runs", a.runs);
  write_seconds(w, "elapsed_s", a.elapsed);
  w.object_array("tasks", a.tasks, [&](const TaskAggregate& t) {
    w.field("name", t.name);
    w.field("group", t.group);
    w.field("pid", t.pid);
    write_identity(w, t.policy, t.nice, t.rt_priority);
    write_stats(w, t.stats, true);
  });
  w.object_array("groups", a.groups, [&](const GroupAggregate& g) {
    w.field("name", g.name);
    w.field("instances", g.instances);
    w.field("mixed_policy", g.mixed_policy);
    write_identity(w, g.policy, g.nice, g.rt_priority);
    write_stats(w, g.stats, true);
  });
  w.object_array("cpus", a.cpus, [&](const CpuAggregate& c) {
    w.field("cpu", c.cpu);
    w.field("runs", c.runs);
    write_seconds(w, "elapsed_s", c.elapsed);
    write_seconds(w, "busy_s", c.busy);
    write_seconds(w, "idle_s", c.idle);
    w.number_field("busy_pct", pct_text(c.busy_fraction()));
    w.number_field("idle_pct", pct_text(c.idle_fraction()));
    w.field("context_switches", c.context_switches);
    w.number_field("context_switches_per_run", per_run_text(c.per_run(c.context_switches)));
  });
  w.key("check");
  w.begin_object();
  w.field("busy_plus_idle_equals_elapsed", a.check.holds);
  w.field("max_error_ns", a.check.max_error_ns);
  w.end_object();
  w.end_object();
}

}  // namespace

std::string render_json(const RunSet& set) {
  JsonWriter w;
  w.begin_object();
  w.field("format", kJsonFormat);
  w.field("format_version", kJsonFormatVersion);
  write_scenario(w, set.scenario);
  w.field("base_seed", set.base_seed);
  if (set.start_jitter > Time::zero()) write_seconds(w, "start_jitter_s", set.start_jitter);  // run --start-jitter
  w.key("runs");
  w.begin_array();
  for (size_t i = 0; i < set.runs.size(); ++i) write_run(w, i, set.runs[i]);
  w.end_array();
  write_aggregate(w, set.aggregate);
  w.end_object();
  return w.str();
}

void write_bootstrap_json(JsonWriter& w, std::string_view method) {
  w.key("bootstrap");
  w.begin_object();
  w.field("method", method);
  w.field("resamples", kBootstrapResamples);
  w.number_field("confidence", fmt::format("{:.2f}", kConfidence));
  w.end_object();
}

void write_decisions_json(JsonWriter& w, const std::vector<DecisionCount>& decisions) {
  w.object_array("decisions", decisions, [&](const DecisionCount& d) {
    w.field("kind", d.kind);
    w.field("group", d.group);
    w.field("reason", d.reason);
    w.field("count", d.count);
  });
}

void write_overlays_json(JsonWriter& w, std::string_view key, const std::vector<Overlay>& overlays) {
  w.object_array(key, overlays, [&](const Overlay& o) {
    w.field("path", o.path);
    w.field("value", o.value);
  });
}

}  // namespace schedlab
