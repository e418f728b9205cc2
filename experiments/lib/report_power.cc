#include "experiments/lib/report_power.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "experiments/lib/metrics.h"
#include "experiments/lib/report_table.h"
#include "experiments/lib/text_table.h"

namespace schedlab {
namespace {

std::string mhz(uint64_t khz) { return fmt::format("{}", khz / 1000); }

// "1766:62% 1197:30% 300:8%": the OPPs a CPU ran at (MHz), most time first,
// as shares of its busy time.
std::string opp_residency(const std::vector<RunResult>& runs, size_t cpu) {
  const CpuMetrics& first = runs.front().cpus[cpu];
  std::vector<Time> at(first.opp_khz.size());
  Time busy;
  for (const auto& r : runs) {
    const CpuMetrics& c = r.cpus[cpu];
    for (size_t i = 0; i < at.size() && i < c.busy_at_opp.size(); ++i) at[i] += c.busy_at_opp[i];
    busy += c.busy;
  }
  std::vector<size_t> order(at.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return at[a] > at[b]; });
  std::string out;
  int shown = 0;
  for (size_t i : order) {
    if (at[i] == Time::zero() || shown == 3) break;
    double pct = busy > Time::zero() ? 100.0 * static_cast<double>(at[i].count()) / static_cast<double>(busy.count()) : 0;
    if (shown > 0 && pct < 0.5) break;  // "851:0%" says nothing
    out += fmt::format("{}{}:{:.0f}%", out.empty() ? "" : " ", mhz(first.opp_khz[i]), pct);
    ++shown;
  }
  return out.empty() ? "-" : out;
}

// Idle-state residency per cluster and state, seconds per run summed over
// the cluster's CPUs (the layout of the seed's cpu_idle tables: state -1 =
// running). Only when a cpuidle governor took some CPU deeper than state 0.
std::string idle_residency_table(const std::vector<RunResult>& runs) {
  const RunResult& first = runs.front();
  bool deeper = false;
  size_t nr_states = 0;
  for (const auto& r : runs)
    for (const auto& c : r.cpus) {
      nr_states = std::max(nr_states, c.cpuidle_residency.size());
      for (size_t i = 1; i < c.cpuidle_residency.size(); ++i) deeper |= c.cpuidle_residency[i] > Time::zero();
    }
  if (!deeper) return "";
  TextTable t;
  t.add_column("cluster", true);
  t.add_column("idle_state");
  t.add_column(runs.size() > 1 ? "time (s/run)" : "time (s)");
  const double n = static_cast<double>(runs.size());
  for (size_t k = 0; k < first.clusters.size(); ++k) {
    for (int st = -1; st < static_cast<int>(nr_states); ++st) {
      Time sum;
      for (const auto& r : runs) sum += cluster_idle_time(r, r.clusters[k], st);
      if (st >= 0 && sum == Time::zero()) continue;  // states never entered (or absent here)
      t.add_row({first.clusters[k].name, fmt::format("{}", st), fmt::format("{:.3f}", sum.to_s() / n)});
    }
  }
  return t.render();
}

Samples pooled(const std::vector<const Samples*>& parts) {
  Samples s;
  for (const Samples* p : parts) s.append(*p);
  return s;
}

}  // namespace

std::string render_power_tables(const RunSet& set) {
  if (set.runs.empty() || !set.runs.front().has_power()) return "";
  const auto& runs = set.runs;
  const double n = static_cast<double>(runs.size());
  const RunResult& first = runs.front();
  TextTable cpus;
  for (const char* h : {"cpu", "cluster"}) cpus.add_column(h, true);
  // Energies and counts are means per run, said in the header as the CPU
  // table's "switches/run" does (its busy and idle seconds are sums).
  const bool many = runs.size() > 1;
  for (const char* h : {many ? "energy (mJ/run)" : "energy (mJ)", "avg power (mW)",
                        many ? "freq changes/run" : "freq changes"})
    cpus.add_column(h);
  cpus.add_column("busy time at OPP (MHz:share, top 3)", true);
  for (size_t c = 0; c < first.cpus.size(); ++c) {
    double energy = 0;
    uint64_t changes = 0;
    for (const auto& r : runs) {
      energy += r.cpus[c].energy_mj();
      changes += r.cpus[c].frequency_changes;
    }
    energy /= n;
    int cl = first.cpus[c].cluster;
    cpus.add_row({fmt::format("cpu{}", c), cl >= 0 ? first.clusters[static_cast<size_t>(cl)].name : "-",
                  fmt::format("{:.1f}", energy), fmt::format("{:.1f}", energy / first.elapsed().to_s()),
                  fmt::format("{:.0f}", static_cast<double>(changes) / n), opp_residency(runs, c)});
  }
  TextTable clusters;
  clusters.add_column("cluster", true);
  for (const char* h : {"CPUs", many ? "CPU energy (mJ/run)" : "CPU energy (mJ)", many ? "static (mJ/run)" : "static (mJ)",
                        many ? "energy (mJ/run)" : "energy (mJ)", "avg power (mW)"})
    clusters.add_column(h);
  for (size_t k = 0; k < first.clusters.size(); ++k) {
    double cpu_e = 0, stat = 0;
    for (const auto& r : runs) {
      cpu_e += r.clusters[k].cpu_energy_mj;
      stat += r.clusters[k].static_energy_mj;
    }
    cpu_e /= n;
    stat /= n;
    clusters.add_row({first.clusters[k].name, fmt::format("{}", first.clusters[k].cpus.size()), fmt::format("{:.1f}", cpu_e),
                      fmt::format("{:.1f}", stat), fmt::format("{:.1f}", cpu_e + stat),
                      fmt::format("{:.1f}", (cpu_e + stat) / first.elapsed().to_s())});
  }
  double total = 0, migrations = 0;
  for (const auto& r : runs) {
    total += r.total_energy_mj();
    migrations += static_cast<double>(r.migrations());
  }
  total /= n;
  std::string out = cpus.render() + "\n" + clusters.render();
  if (std::string idle = idle_residency_table(runs); !idle.empty()) out += "\n" + idle;
  out += fmt::format("total: energy {:.1f} mJ, average power {:.1f} mW over {:.3f}s, {:.0f} migrations{}\n", total,
                     total / first.elapsed().to_s(), first.elapsed().to_s(), migrations / n,
                     runs.size() > 1 ? " (means per run)" : "");
  return out + idle_power_note(first);
}

std::string idle_power_note(const RunResult& r) {
  std::vector<std::string> unknown;
  bool with_static = false;  // some of them bill a cluster static power
  for (const ClusterMetrics& cl : r.clusters)
    if (!cl.idle_power_known) {
      unknown.push_back(cl.name);
      with_static |= cl.static_energy_mj > 0;
    }
  if (unknown.empty()) return "";
  return fmt::format(
      "note: the platform gives no idle-state power for {} (0 mW): there energy counts running time only{}, so "
      "idle states and governors compare by residency, not by energy\n",
      unknown.size() == r.clusters.size() ? "any cluster" : fmt::format("{}", fmt::join(unknown, ", ")),
      with_static ? " and the cluster's static power (which no CPU idle state lowers)" : "");
}

std::string render_workqueue_table(const RunSet& set) {
  std::map<std::string, std::vector<const WorkQueueMetrics*>> by_name;
  for (const auto& r : set.runs)
    for (const auto& w : r.workqueues) by_name[w.name].push_back(&w);
  if (by_name.empty()) return "";
  TextTable t;
  t.add_column("workqueue / kthread_worker", true);
  for (const char* h : {"items/run", "CPU wait mean (us)", "P99", "max", "worker runnable P99",
                        "of it on a CPU leaving idle, mean (us)", "exec mean (us)"})
    t.add_column(h);
  for (const auto& [name, parts] : by_name) {
    std::vector<const Samples*> wait, runnable, idle_exit, exec;
    uint64_t items = 0;
    for (const auto* w : parts) {
      wait.push_back(&w->cpu_wait);
      runnable.push_back(&w->runnable_wait);
      idle_exit.push_back(&w->idle_exit_wait);
      exec.push_back(&w->exec);
      items += w->items;
    }
    Summary sw = pooled(wait).summarize(), sr = pooled(runnable).summarize(), si = pooled(idle_exit).summarize(),
            se = pooled(exec).summarize();
    t.add_row({name, fmt::format("{:.1f}", static_cast<double>(items) / static_cast<double>(set.runs.size())),
               format_us_cell(sw.mean, sw.count), format_us_cell(sw.p99, sw.count), format_us_cell(sw.max, sw.count),
               format_us_cell(sr.p99, sr.count), format_us_cell(si.mean, si.count), format_us_cell(se.mean, se.count)});
  }
  return t.render();
}

std::string render_drm_table(const RunSet& set) {
  std::map<std::string, std::vector<const Samples*>> by_name;
  std::map<std::string, uint64_t> jobs;
  for (const auto& r : set.runs)
    for (const auto& d : r.drm_entities) {
      by_name[d.name].push_back(&d.push_to_run);
      jobs[d.name] += d.jobs;
    }
  if (by_name.empty()) return "";
  TextTable t;
  t.add_column("DRM entity (push_job -> run_job)", true);
  for (const char* h : {"jobs/run", "median (us)", "95%", "98%", "99%", "max"}) t.add_column(h);
  for (const auto& [name, parts] : by_name) {
    Summary s = pooled(parts).summarize();
    t.add_row({name, fmt::format("{:.1f}", static_cast<double>(jobs[name]) / static_cast<double>(set.runs.size())),
               format_us_cell(s.p50, s.count), format_us_cell(s.p95, s.count), format_us_cell(s.p98, s.count),
               format_us_cell(s.p99, s.count), format_us_cell(s.max, s.count)});
  }
  return t.render();
}

std::string render_rpm_table(const RunSet& set) {
  struct Acc {
    std::vector<const Samples*> d_all, d_woken, waker;
    uint64_t woken = 0;
  };
  std::map<std::pair<std::string, std::string>, Acc> sleeps;  // (group, device), resume sleeps
  std::map<std::string, RpmDeviceMetrics> devices;
  for (const auto& r : set.runs) {
    for (const auto& s : r.rpm_sleeps) {
      if (!s.in_resume) continue;
      Acc& a = sleeps[{s.group, s.device}];
      a.d_all.push_back(&s.d_state);
      if (s.woken_by_task) {
        a.d_woken.push_back(&s.d_state);
        a.waker.push_back(&s.waker_wait);
        a.woken += s.d_state.size();
      }
    }
    for (const auto& d : r.rpm_devices) {
      RpmDeviceMetrics& m = devices[d.name];
      m.suspends += d.suspends;
      m.resumes += d.resumes;
      m.suspended_time += d.suspended_time;
    }
  }
  if (sleeps.empty() && devices.empty()) return "";
  const double n = static_cast<double>(set.runs.size());
  std::string out;
  if (!sleeps.empty()) {
    TextTable t;
    t.add_column("rpm_resume() D sleeps: group / device", true);
    for (const char* h : {"sleeps/run", "D P90 (us)", "max", "woken by a task/run", "D P90", "waker wait P90", "max"})
      t.add_column(h);
    for (const auto& [key, a] : sleeps) {
      Summary all = pooled(a.d_all).summarize(), d = pooled(a.d_woken).summarize(), w = pooled(a.waker).summarize();
      t.add_row({key.first + " / " + key.second, fmt::format("{:.2f}", static_cast<double>(all.count) / n),
                 format_us_cell(all.p90, all.count), format_us_cell(all.max, all.count),
                 fmt::format("{:.2f}", static_cast<double>(a.woken) / n), format_us_cell(d.p90, d.count),
                 format_us_cell(w.p90, w.count), format_us_cell(w.max, w.count)});
    }
    out += t.render();
  }
  if (!devices.empty()) {
    TextTable t;
    t.add_column("runtime PM device", true);
    for (const char* h : {"suspends/run", "resumes/run", "suspended %"}) t.add_column(h);
    const double window = set.runs.empty() ? 0 : set.runs.front().elapsed().to_s() * n;
    for (const auto& [name, m] : devices)
      t.add_row({name, fmt::format("{:.1f}", static_cast<double>(m.suspends) / n),
                 fmt::format("{:.1f}", static_cast<double>(m.resumes) / n),
                 window > 0 ? fmt::format("{:.1f}", 100.0 * m.suspended_time.to_s() / window) : "n/a"});
    if (!out.empty()) out += '\n';
    out += t.render();
  }
  return out;
}

std::string render_frame_table(const RunSet& set) {
  std::map<std::string, FrameMetrics> layers;
  for (const auto& r : set.runs)
    for (const auto& f : r.frames) {
      FrameMetrics& m = layers[f.layer];
      m.frames += f.frames, m.app_missed += f.app_missed, m.sf_missed += f.sf_missed, m.dropped += f.dropped;
      m.buffer_stuffing += f.buffer_stuffing, m.janky += f.janky;
    }
  if (layers.empty()) return "";
  const double n = static_cast<double>(set.runs.size());
  TextTable t;
  t.add_column("FrameTimeline layer", true);
  for (const char* h : {"frames/run", "app missed/run", "SF missed/run", "stuffed/run", "dropped/run", "jank %"})
    t.add_column(h);
  for (const auto& [name, m] : layers)
    t.add_row({name, fmt::format("{:.1f}", static_cast<double>(m.frames) / n),
               fmt::format("{:.2f}", static_cast<double>(m.app_missed) / n),
               fmt::format("{:.2f}", static_cast<double>(m.sf_missed) / n),
               fmt::format("{:.2f}", static_cast<double>(m.buffer_stuffing) / n),
               fmt::format("{:.2f}", static_cast<double>(m.dropped) / n),
               m.frames ? fmt::format("{:.2f}", 100.0 * static_cast<double>(m.janky) / static_cast<double>(m.frames))
                        : "n/a"});
  return t.render();
}

}  // namespace schedlab
