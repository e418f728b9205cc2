// cpuidle governors menu (two versions) and teo (six versions) and their
// registry.
//
// Own code mirroring, function by function:
//   menu: drivers/cpuidle/governors/menu.c, Linux 6.12 (wishday/linux-6.12.y):
//     which_bucket, performance_multiplier, get_typical_interval,
//     menu_select, menu_reflect, menu_update, menu_enable_device.
//   menu_v6.18: the v6.18 file (6.18.35): six buckets and no iowait
//     performance multiplier (both gone since 6.15), get_typical_interval in
//     one pass trimming outliers from either side and ignoring UINT_MAX
//     samples, menu_update_intervals(UINT_MAX) when select() runs with no
//     update pending and dev->last_residency_ns == 0 (a rejected state; in
//     the model only before the first idle period), the sleep length always
//     queried with the tick stopped, and the state loop that checks the
//     exit latency first and leaves a polling state for a physical one only
//     below RESIDENCY_THRESHOLD_NS.
//   teo:  drivers/cpuidle/governors/teo.c, the variants of the teo seed
//         thread (Kajetan Puchalski's Pixel 6 runs, 1-3 Aug 2023) and v6.6:
//     kV66      = the v6.6 file (lxdklp/linux-6.6.y): v6.5 + the fixes
//                 series + the RFT v2 series (5712331.DvuYhMxLoT@kreacher)
//                 as merged: teo_update (with tick_hits), teo_state_ok,
//                 teo_find_shallower_state, teo_select (statistics first,
//                 then tick_nohz_get_sleep_length() unless the candidate is
//                 state 0 or state 0 polls and the candidate's target
//                 residency is below RESIDENCY_THRESHOLD_NS), teo_reflect,
//                 teo_enable_device.
//     kBaseline = v6.5 teo_select: sleep length queried first; candidate =
//                 deepest state within it; teo_middle_of_bin/teo_time_ok for the
//                 intercept-driven search; early bail-outs leave the tick
//                 decision to duration_ns; a utilized CPU with two states
//                 takes the shallowest non-polling state with duration_ns
//                 still the sleep length (so the tick stops when the next
//                 timer is a tick away); no tick_hits.
//     kTick     = kBaseline + the fixes series "[PATCH v3 0/3] cpuidle: teo:
//                 Avoid stopping scheduler tick too often"
//                 (4515817.LvFx2qVVIh@kreacher, 31 Jul 2023; 3f0b0966b309,
//                 04bae4e2267d, 9a41e16f1110): (1) "Update idle duration
//                 estimate when choosing shallower state" (utilized paths set
//                 duration_ns to the middle of the chosen, or with two states
//                 the first, state's bin), (2)
//                 "Avoid stopping the tick unnecessarily when bailing out"
//                 (state 0 bail-outs -> out_tick, single enabled state uses
//                 its target residency as duration), (3) "Drop utilized from
//                 struct teo_cpu" (no change in behaviour). No tick_hits.
//     kTickRfc  = kTick + "[RFC/RFT][PATCH v1 0/2] cpuidle: teo: Do not check
//                 timers unconditionally every time" (4511619.LvFx2qVVIh@
//                 kreacher, 1 Aug 2023), the seed's "teo_tick_rfc": kV66's
//                 select without the tick statistics (RFT v2 3/3,
//                 2662342079f5: the tick_hits bin and the "intercepts > 5/8 of
//                 all: keep the tick" rule), and v1's utilized two-state path
//                 (duration_ns = state 1's target residency / 2 throughout;
//                 v2 sets the whole residency before `end`). v1 2/2 is v2 2/3
//                 unchanged.
//     kV612     = the v6.12 file (wishday/linux-6.12.y, 6.12.19; the same
//                 from 6.12.15 to 6.12.63): kV66's
//                 statistics-first select and tick statistics, without the
//                 utilization check and the "recent" intercepts (removed in
//                 2024), and with the sleep length queried when the
//                 intercepts alone bring the candidate down to state 0 (so
//                 the next teo_update() can tell a hit from an intercept).
//     kV618     = the v6.18 file (6.18.35): the 2025 rework. teo_update keeps
//                 a decaying count of short idle periods (measured below
//                 RESIDENCY_THRESHOLD_NS), a total that decays by itself
//                 (no longer the bins' sum) and "tick_intercepts" in place
//                 of the tick_hits bin; teo_reflect flags a safety-net
//                 wakeup (artificial_wakeup) instead of measuring
//                 time_span_ns; teo_select skips the sleep length for a
//                 shallow candidate only when short idles are at least half
//                 of the total or the PM QoS limit is below
//                 LATENCY_THRESHOLD_NS, and keeps the tick when
//                 tick_intercepts exceed 5/8 of the total.
// Simplifications / reconstructions (stated):
//   * kBaseline and kTick were rebuilt from the v6.6 file and the series'
//     changelogs; patch 1/3's removed and added lines were checked against
//     its mail (13332551.uLZWGnKmhe@kreacher). kTickRfc's select is kV66's
//     with the RFC v1 differences checked against the v1 and v2 mails
//     (1870608.tdWV9SEqCh, 4836344.GXAFRqVoOG; 13328817.uLZWGnKmhe,
//     2167194.irdbgypaU6). Until session 19 teo_tick and teo_tick_rfc
//     wrongly carried the tick statistics of RFT v2 3/3.
//   * teo_update(): when the tick_hits path is taken the v6.6 code leaves the
//     recent_idx slot holding an already-decremented bin index (it can be
//     decremented again NR_RECENT updates later); here the slot is cleared.
//     In the kernel the u32 count can wrap below 0, after which the recent-
//     intercepts search (2 * recent_sum > idx_recent_sum) never picks the
//     shallower state on a two-state CPU until enough intercepts land there;
//     the model does not reproduce that (session 53 review: the path chose
//     WFI 7 times in ~11,300 Geekbench selections, 5 in ~8,400 JetNews).
//   * Times are ns in int64_t; KTIME_MAX / U64_MAX = INT64_MAX.
//   * teo's util-awareness takes cpu_utilized as an input.
#include "models/kernel/cpuidle/governor.h"

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <string>

namespace schedlab::cpuidle {

namespace {

constexpr int64_t kInf = INT64_MAX;

void check_states(std::span<const IdleState> st) {
  if (st.empty() || st.size() > static_cast<size_t>(kStateMax))
    throw std::invalid_argument("cpuidle: state count must be in 1.." + std::to_string(kStateMax));
}

int64_t tr(std::span<const IdleState> st, int i) { return st[static_cast<size_t>(i)].target_residency.count(); }
int64_t el(std::span<const IdleState> st, int i) { return st[static_cast<size_t>(i)].exit_latency.count(); }
bool dis(std::span<const IdleState> st, int i) { return st[static_cast<size_t>(i)].disabled; }
bool poll(std::span<const IdleState> st, int i) { return st[static_cast<size_t>(i)].polling; }

}  // namespace

// ===================================================================== teo

TeoGovernor::TeoGovernor(TeoVersion version, GovernorParams params)
    : version_(version), tick_ns_(params.tick.count()) {
  if (tick_ns_ <= 0) throw std::invalid_argument("teo: tick must be > 0");
  enable();
}

std::string_view TeoGovernor::name() const {
  switch (version_) {
    case TeoVersion::kBaseline: return "teo";
    case TeoVersion::kTick: return "teo_tick";
    case TeoVersion::kTickRfc: return "teo_tick_rfc";
    case TeoVersion::kV66: return "teo_v6.6";
    case TeoVersion::kV612: return "teo_v6.12";
    case TeoVersion::kV618: return "teo_v6.18";
  }
  return "teo";
}

// teo_enable_device()
void TeoGovernor::enable() {
  time_span_ns_ = 0;
  sleep_length_ns_ = kInf;
  bins_ = {};
  total_ = 0;
  next_recent_idx_ = 0;
  recent_idx_.fill(-1);
  tick_hits_ = 0;
  tick_intercepts_ = 0;
  short_idles_ = 0;
  artificial_wakeup_ = false;
  last_state_idx_ = -1;
  last_residency_ns_ = 0;
}

// teo_reflect()
void TeoGovernor::reflect(const IdleExit& exit) {
  last_state_idx_ = exit.state;
  last_residency_ns_ = exit.residency.count();
  const bool safety_net = exit.poll_time_limit || (exit.tick_wakeup && sleep_length_ns_ > tick_ns_);
  if (version_ == TeoVersion::kV618) {
    // v6.18 flags the wakeup instead of measuring time_span_ns.
    artificial_wakeup_ = safety_net;
    return;
  }
  if (safety_net) {
    time_span_ns_ = sleep_length_ns_;
  } else {
    time_span_ns_ = exit.time_span > Time::zero() ? exit.time_span.count() : exit.residency.count();
  }
}

// teo_update()
void TeoGovernor::update(std::span<const IdleState> st) {
  const int n = static_cast<int>(st.size());
  int idx_timer = 0, idx_duration = 0;
  int64_t measured_ns;
  if (version_ == TeoVersion::kV618) {
    update_v618(st);
    return;
  }
  if (time_span_ns_ >= sleep_length_ns_) {
    measured_ns = kInf;  // safety net or wakeup close to the timer: discard
  } else {
    const int64_t lat_ns = el(st, std::min(last_state_idx_, n - 1));
    measured_ns = last_residency_ns_;
    if (measured_ns >= lat_ns)
      measured_ns -= lat_ns / 2;
    else
      measured_ns /= 2;
  }

  total_ = 0;
  int64_t target_residency_ns = 0;
  for (int i = 0; i < n; i++) {
    TeoBin& b = bins_[static_cast<size_t>(i)];
    b.hits -= b.hits >> kDecayShift;
    b.intercepts -= b.intercepts >> kDecayShift;
    total_ += b.hits + b.intercepts;
    target_residency_ns = tr(st, i);
    if (target_residency_ns <= sleep_length_ns_) {
      idx_timer = i;
      if (target_residency_ns <= measured_ns) idx_duration = i;
    }
  }

  // The recent ring (before v6.12): the slot this update overwrites gives
  // its bin's recent count back. v6.12 keeps no ring (slot stays -1).
  int slot = -1;
  if (has_util_and_recent()) {
    slot = next_recent_idx_++;
    if (next_recent_idx_ >= kNrRecent) next_recent_idx_ = 0;
    if (recent_idx_[static_cast<size_t>(slot)] >= 0)
      bins_[static_cast<size_t>(recent_idx_[static_cast<size_t>(slot)])].recent--;
  }
  auto set_recent = [&](int bin) {
    if (slot >= 0) recent_idx_[static_cast<size_t>(slot)] = bin;
  };

  if (tick_statistics() && target_residency_ns < tick_ns_) {
    // The extra hits-only bin beyond the deepest state (RFT v2 3/3).
    tick_hits_ -= tick_hits_ >> kDecayShift;
    total_ += tick_hits_;
    if (tick_ns_ <= sleep_length_ns_) {
      idx_timer = n;
      if (tick_ns_ <= measured_ns) {
        tick_hits_ += kPulse;
        set_recent(-1);  // deviation: see the file comment
        total_ += kPulse;
        return;
      }
    }
  }

  if (idx_timer == idx_duration) {
    bins_[static_cast<size_t>(idx_timer)].hits += kPulse;
    set_recent(-1);
  } else {
    bins_[static_cast<size_t>(idx_duration)].intercepts += kPulse;
    if (slot >= 0) bins_[static_cast<size_t>(idx_duration)].recent++;
    set_recent(idx_duration);
  }
  total_ += kPulse;
}

// teo_update() of v6.18: a decaying count of short idle periods, a total
// that decays on its own (no longer the sum of the bins), and intercepts
// counted against the tick instead of the v6.6 extra hits-only bin.
void TeoGovernor::update_v618(std::span<const IdleState> st) {
  const int n = static_cast<int>(st.size());
  int idx_timer = 0, idx_duration = 0;
  int64_t measured_ns;
  short_idles_ -= short_idles_ >> kDecayShift;
  if (artificial_wakeup_) {
    measured_ns = kInf;  // a safety net: assume a long sleep
  } else {
    const int64_t lat_ns = el(st, std::min(last_state_idx_, n - 1));
    measured_ns = last_residency_ns_;
    if (measured_ns >= lat_ns) {
      measured_ns -= lat_ns / 2;
      if (measured_ns < kResidencyThreshold.count()) short_idles_ += kPulse;
    } else {
      measured_ns /= 2;
      short_idles_ += kPulse;
    }
  }
  for (int i = 0; i < n; i++) {
    TeoBin& b = bins_[static_cast<size_t>(i)];
    b.hits -= b.hits >> kDecayShift;
    b.intercepts -= b.intercepts >> kDecayShift;
    const int64_t target_residency_ns = tr(st, i);
    if (target_residency_ns <= sleep_length_ns_) {
      idx_timer = i;
      if (target_residency_ns <= measured_ns) idx_duration = i;
    }
  }
  tick_intercepts_ -= tick_intercepts_ >> kDecayShift;
  if (idx_timer == idx_duration) {
    bins_[static_cast<size_t>(idx_timer)].hits += kPulse;
  } else {
    bins_[static_cast<size_t>(idx_duration)].intercepts += kPulse;
    // As in the 6.18 file (6.18.35): intercepts at or beyond the tick are
    // counted, though the file's own comment and teo_select() speak of
    // intercepts before it. Mainline later inverted the test; the model
    // follows the 6.18 code.
    if (tick_ns_ <= measured_ns) tick_intercepts_ += kPulse;
  }
  total_ -= total_ >> kDecayShift;
  total_ += kPulse;
}

// --log debug: whether teo's statistics moved the choice below the deepest
// candidate, and the PM QoS cap ("if (idx > constraint_idx)").
// `by_sleep_length`: v6.5's candidate is the deepest state the sleep
// length allows; 6.6's (RFC) the deepest enabled one, checked against the
// sleep length later.
static const char* teo_why(bool alt_recent, bool alt_intercepts, bool moved, bool by_sleep_length) {
  if (moved)
    return alt_recent ? "recent wake-ups came early (intercepts): a shallower state"
                      : "intercepts outweigh hits: a shallower state";
  if (alt_recent || alt_intercepts) return "intercepts weigh, but no shallower state suits: the deepest candidate";
  return by_sleep_length ? "the deepest state the sleep length allows (hits outweigh intercepts)"
                         : "the deepest state (hits outweigh intercepts)";
}
// A utilized CPU with two states (the three teo versions word it the
// same, so their choices compare side by side).
constexpr const char* kUtilizedShallow = "the CPU is utilized: a shallow state";
// The tick is kept and the state chosen must end before it
// (tick_nohz_get_sleep_length()'s delta_next).
constexpr const char* kTickKeptShallower = "a shallower state, whose target residency ends before the kept tick";
static void cap_at_constraint(int& idx, int constraint_idx, SelectResult& r) {
  if (idx <= constraint_idx) return;
  idx = constraint_idx;
  r.why = "the PM QoS latency limit caps the state";
}

// teo_find_shallower_state()
int TeoGovernor::find_shallower(std::span<const IdleState> st, int state_idx, int64_t duration_ns,
                                bool no_poll) const {
  for (int i = state_idx - 1; i >= 0; i--) {
    if (dis(st, i) || (no_poll && poll(st, i))) continue;
    state_idx = i;
    if (tr(st, i) <= duration_ns) break;
  }
  return state_idx;
}

SelectResult TeoGovernor::select(const SelectInput& in) {
  check_states(in.states);
  if (last_state_idx_ >= 0) {
    update(in.states);
    last_state_idx_ = -1;
  }
  return version_ == TeoVersion::kBaseline || version_ == TeoVersion::kTick ? select_baseline_or_tick(in)
                                                                            : select_rfc(in);
}

// teo_select() of v6.5 (kBaseline) and v6.5 + the fixes series (kTick).
SelectResult TeoGovernor::select_baseline_or_tick(const SelectInput& in) {
  const auto st = in.states;
  const int n = static_cast<int>(st.size());
  const bool fixes = version_ == TeoVersion::kTick;
  const int64_t latency_req = in.latency_req.count();
  const bool stopped = in.tick_stopped;
  auto time_ok = [&](int64_t interval_ns) { return !stopped || interval_ns >= tick_ns_; };  // teo_time_ok
  // teo_middle_of_bin(). For the deepest state the kernel reads the unused
  // drv->states[state_count] entry (CPUIDLE_STATE_MAX slots, zeroed): a
  // target residency of 0, so half the deepest state's.
  auto middle_of_bin = [&](int idx) { return (tr(st, idx) + (idx + 1 < n ? tr(st, idx + 1) : 0)) / 2; };

  SelectResult r;
  r.queried_sleep_length = true;
  int64_t duration_ns = in.sleep_length.count();
  int64_t delta_tick = in.delta_next_tick.count();
  sleep_length_ns_ = duration_ns;

  unsigned idx_intercept_sum = 0, intercept_sum = 0, idx_recent_sum = 0, recent_sum = 0;
  unsigned idx_hit_sum = 0, hit_sum = 0;
  int constraint_idx = 0, idx0 = 0, idx = -1, i;
  bool cpu_utilized = false, alt_intercepts, alt_recent;
  bool out_tick = false;

  auto finish = [&]() -> SelectResult {
    if (!out_tick) {
      if (fixes) {
        // The fixes series gave v6.5's `end` the shape every later teo keeps.
        return teo_end(st, stopped, r, idx, idx0, duration_ns, delta_tick);
      } else if ((poll(st, idx) || duration_ns < tick_ns_) && !stopped) {
        if (idx > 0 && tr(st, idx) > delta_tick) {
          idx = find_shallower(st, idx, delta_tick, false);
          r.why = kTickKeptShallower;
        }
        out_tick = true;
      }
    }
    r.state = idx;
    r.stop_tick = !out_tick;
    r.predicted = Time::ns(duration_ns);
    return r;
  };

  if (n < 2) {
    idx = 0;
    out_tick = fixes;
    r.why = "a single state";
    return finish();
  }
  if (!dis(st, 0)) {
    idx = 0;
    if (tr(st, 1) > duration_ns) {
      out_tick = fixes;
      r.why = "the next timer comes before state 1's target residency";
      return finish();
    }
  }

  cpu_utilized = in.cpu_utilized;
  if (n < 3 && cpu_utilized && !fixes) {
    // v6.5: a utilized CPU with two states takes the shallowest
    // non-polling one and goes to `end` with duration_ns still the sleep
    // length, so the tick is stopped whenever the next timer is a tick or
    // more away. Patch 1/3 of the fixes series ("Update idle duration
    // estimate when choosing shallower state", 13332551.uLZWGnKmhe@kreacher)
    // replaced this with the block below.
    for (i = 0; i < n; ++i)
      if (!dis(st, i) && !poll(st, i)) {
        idx = i;
        r.why = kUtilizedShallow;
        return finish();
      }
  }
  if (n < 3 && cpu_utilized && fixes) {
    r.why = kUtilizedShallow;
    duration_ns = middle_of_bin(0);  // the CPU is utilized: assume a short idle duration
    if ((!idx && !poll(st, 0) && time_ok(duration_ns)) || dis(st, 1)) {
      idx = 0;
      out_tick = fixes;
      return finish();
    }
    idx = 1;  // duration_ns stays the middle of bin 0 (3f0b0966b309)
    return finish();
  }

  for (i = 1; i < n; i++) {
    const TeoBin& prev = bins_[static_cast<size_t>(i - 1)];
    intercept_sum += prev.intercepts;
    hit_sum += prev.hits;
    recent_sum += prev.recent;
    if (dis(st, i)) continue;
    if (idx < 0) {
      idx = i;  // first enabled state
      idx0 = i;
    }
    if (tr(st, i) > duration_ns) break;
    idx = i;
    if (el(st, i) <= latency_req) constraint_idx = i;
    idx_intercept_sum = intercept_sum;
    idx_hit_sum = hit_sum;
    idx_recent_sum = recent_sum;
  }

  if (idx < 0) {
    idx = 0;  // no states enabled, must use 0
    out_tick = fixes;
    r.why = "no state enabled";
    return finish();
  }
  if (idx == idx0) {
    if (fixes) duration_ns = tr(st, idx);
    r.why = "the first enabled state (no deeper one fits the sleep length)";
    return finish();
  }

  const int by_sleep_length = idx;

  alt_intercepts = 2 * idx_intercept_sum > total_ - idx_hit_sum;
  alt_recent = idx_recent_sum > kNrRecent / 2;
  if (alt_recent || alt_intercepts) {
    int64_t first_suitable_span_ns = duration_ns;
    int first_suitable_idx = idx;
    intercept_sum = 0;
    recent_sum = 0;
    for (i = idx - 1; i >= 0; i--) {
      const TeoBin& b = bins_[static_cast<size_t>(i)];
      intercept_sum += b.intercepts;
      recent_sum += b.recent;
      const int64_t span_ns = middle_of_bin(i);
      if ((!alt_recent || 2 * recent_sum > idx_recent_sum) &&
          (!alt_intercepts || 2 * intercept_sum > idx_intercept_sum)) {
        if (time_ok(span_ns) && !dis(st, i)) {
          idx = i;
          duration_ns = span_ns;
        } else {
          idx = first_suitable_idx;
          duration_ns = first_suitable_span_ns;
        }
        break;
      }
      if (dis(st, i)) continue;
      if (!time_ok(span_ns)) {
        if (first_suitable_idx != idx) continue;
        break;
      }
      first_suitable_span_ns = span_ns;
      first_suitable_idx = i;
    }
  }
  r.why = teo_why(alt_recent, alt_intercepts, idx != by_sleep_length, true);
  cap_at_constraint(idx, constraint_idx, r);

  if (cpu_utilized) {
    const int before = idx;
    if (fixes) {
      // 3f0b0966b309: the shallower state's bin middle, checked against a
      // stopped tick and taken as the idle duration.
      i = find_shallower(st, idx, duration_ns, true);
      const int64_t span_ns = middle_of_bin(i);
      if (time_ok(span_ns)) {
        idx = i;
        duration_ns = span_ns;
      }
    } else {
      idx = find_shallower(st, idx, duration_ns, true);
    }
    if (idx != before) r.why = "the CPU is utilized: a shallower state";
  }

  return finish();
}

// The two exits of teo_select() from v6.6 on. out_tick: keep the tick.
SelectResult TeoGovernor::teo_out_tick(SelectResult r, int idx, int64_t duration_ns) {
  r.state = idx;
  r.stop_tick = false;
  if (duration_ns > 0) r.predicted = Time::ns(duration_ns);
  return r;
}

// end: stop the tick unless the state polls or the expected idle duration
// is below TICK_NSEC (or it is stopped already); a kept tick needs a state
// whose target residency ends before it.
SelectResult TeoGovernor::teo_end(std::span<const IdleState> st, bool stopped, SelectResult r, int idx, int idx0,
                                  int64_t duration_ns, int64_t delta_tick) const {
  if ((!poll(st, idx) && duration_ns >= tick_ns_) || stopped) {
    r.state = idx;
    r.stop_tick = true;
    r.predicted = Time::ns(duration_ns);
    return r;
  }
  if (idx > idx0 && tr(st, idx) > delta_tick) {
    idx = find_shallower(st, idx, delta_tick, false);
    r.why = kTickKeptShallower;
  }
  return teo_out_tick(r, idx, duration_ns);
}

// LATENCY_THRESHOLD_NS (teo.c, v6.18): with a PM QoS limit below it the
// state is shallow whatever wakes the CPU, so the sleep length is not needed.
constexpr int64_t kTeoLatencyThresholdNs = kResidencyThreshold.count() / 2;

// teo_select() of v6.6 (and the RFC, v6.12 and v6.18): statistics first,
// then (maybe) the sleep length. v6.18 has neither the utilization check
// nor recent intercepts (as v6.12) and its own timer check and tick rule.
SelectResult TeoGovernor::select_rfc(const SelectInput& in) {
  const auto st = in.states;
  const int n = static_cast<int>(st.size());
  const int64_t latency_req = in.latency_req.count();
  const bool stopped = in.tick_stopped;
  auto state_ok = [&](int k) { return !stopped || tr(st, k) >= tick_ns_; };  // teo_state_ok

  SelectResult r;
  int64_t delta_tick = tick_ns_ / 2;
  unsigned tick_intercept_sum = 0, idx_intercept_sum = 0, intercept_sum = 0;
  unsigned idx_recent_sum = 0, recent_sum = 0, idx_hit_sum = 0, hit_sum = 0;
  int constraint_idx = 0, idx0 = 0, idx = -1, i;
  int64_t duration_ns = 0;
  bool alt_intercepts, alt_recent;

  sleep_length_ns_ = kInf;  // in case of an early return

  auto out_tick = [&]() { return teo_out_tick(r, idx, duration_ns); };
  auto end = [&]() { return teo_end(st, stopped, r, idx, idx0, duration_ns, delta_tick); };

  if (n < 2) {
    idx = 0;
    r.why = "a single state";
    return out_tick();
  }
  if (!dis(st, 0)) idx = 0;

  const bool cpu_utilized = has_util_and_recent() && in.cpu_utilized;
  if (n < 3 && cpu_utilized) {
    r.why = kUtilizedShallow;
    // RFC v1 assumes half of state 1's target residency from here on; v2
    // (v6.6) sets the whole of it before `end`, so that the tick stops
    // whenever that residency is a tick or more.
    const bool rfc_v1 = version_ == TeoVersion::kTickRfc;
    if (rfc_v1) duration_ns = tr(st, 1) / 2;
    if ((!idx && !poll(st, 0) && state_ok(0)) || dis(st, 1)) {
      idx = 0;
      return out_tick();
    }
    idx = 1;
    if (!rfc_v1) duration_ns = tr(st, 1);
    return end();
  }

  for (i = 1; i < n; i++) {
    const TeoBin& prev = bins_[static_cast<size_t>(i - 1)];
    intercept_sum += prev.intercepts;
    hit_sum += prev.hits;
    recent_sum += prev.recent;
    if (dis(st, i)) continue;
    if (idx < 0) idx0 = i;  // first enabled state
    idx = i;
    if (el(st, i) <= latency_req) constraint_idx = i;
    idx_intercept_sum = intercept_sum;
    idx_hit_sum = hit_sum;
    idx_recent_sum = recent_sum;
  }

  if (idx < 0) {
    idx = 0;
    r.why = "no state enabled";
    return out_tick();
  }
  if (idx == idx0) {
    duration_ns = tr(st, idx);
    r.why = "a single enabled state";
    return end();
  }

  tick_intercept_sum = intercept_sum + bins_[static_cast<size_t>(n - 1)].intercepts;
  const int by_statistics = idx;

  alt_intercepts = 2 * idx_intercept_sum > total_ - idx_hit_sum;
  alt_recent = has_util_and_recent() && idx_recent_sum > kNrRecent / 2;
  if (alt_recent || alt_intercepts) {
    int first_suitable_idx = idx;
    intercept_sum = 0;
    recent_sum = 0;
    for (i = idx - 1; i >= 0; i--) {
      const TeoBin& b = bins_[static_cast<size_t>(i)];
      intercept_sum += b.intercepts;
      recent_sum += b.recent;
      if ((!alt_recent || 2 * recent_sum > idx_recent_sum) &&
          (!alt_intercepts || 2 * intercept_sum > idx_intercept_sum)) {
        if (state_ok(i) && !dis(st, i))
          idx = i;
        else
          idx = first_suitable_idx;
        break;
      }
      if (dis(st, i)) continue;
      if (!state_ok(i)) {
        if (first_suitable_idx != idx) continue;
        break;
      }
      first_suitable_idx = i;
    }
  }
  r.why = teo_why(alt_recent, alt_intercepts, idx != by_statistics, false);
  // v6.12: intercepts that brought a deeper candidate down to state 0 still
  // want the sleep length ("otherwise we don't know after wakeup if our
  // guess was correct"); the tick is kept. Before the latency cap.
  if (version_ == TeoVersion::kV612 && !idx && by_statistics) {
    r.queried_sleep_length = true;
    duration_ns = in.sleep_length.count();
    sleep_length_ns_ = duration_ns;
    return out_tick();
  }
  cap_at_constraint(idx, constraint_idx, r);

  if (version_ == TeoVersion::kV618) {
    // The sleep length is skipped for a shallow candidate only when short
    // idle periods are at least half of all wakeups (mostly non-timer
    // wakeups) or the latency limit forces a shallow state anyway.
    if ((!idx || tr(st, idx) < kResidencyThreshold.count()) &&
        (2 * short_idles_ >= total_ || latency_req < kTeoLatencyThresholdNs)) {
      if (2 * short_idles_ >= total_) r.why = "short idle periods dominate: a shallow state, no timer check";
      return out_tick();
    }
    r.queried_sleep_length = true;
    duration_ns = in.sleep_length.count();
    delta_tick = in.delta_next_tick.count();
    sleep_length_ns_ = duration_ns;
    if (!idx) return out_tick();
    if (tr(st, idx) > duration_ns) {
      idx = find_shallower(st, idx, duration_ns, false);
      r.why = "the next timer comes before the chosen state's target residency: a shallower one";
    }
    if (tr(st, idx) < tick_ns_ && tick_intercepts_ > total_ / 2 + total_ / 8) duration_ns = tick_ns_ / 2;
    return end();
  }

  if (cpu_utilized) {
    i = find_shallower(st, idx, kInf, true);
    if (state_ok(i) && i != idx) {
      idx = i;
      r.why = "the CPU is utilized: a shallower state";
    }
  }

  // RFC 2/2: skip the timers check when the candidate is state 0, or state 0
  // polls and the candidate's target residency is below the threshold.
  if (!idx) return out_tick();
  if (poll(st, 0) && tr(st, idx) < kResidencyThreshold.count()) return out_tick();

  // RFC 1/2: tick_nohz_get_sleep_length() only after the preliminary selection.
  r.queried_sleep_length = true;
  duration_ns = in.sleep_length.count();
  delta_tick = in.delta_next_tick.count();
  sleep_length_ns_ = duration_ns;

  if (tr(st, idx) > duration_ns) {
    i = find_shallower(st, idx, duration_ns, false);
    if (state_ok(i) && i != idx) {
      idx = i;
      r.why = "the next timer comes before the chosen state's target residency: a shallower one";
    }
  }

  if (tick_statistics() && tr(st, idx) < tick_ns_ && tick_intercept_sum > total_ / 2 + total_ / 8)
    duration_ns = tick_ns_ / 2;

  return end();
}

// ==================================================================== menu

MenuGovernor::MenuGovernor(GovernorParams params, MenuVersion version)
    : version_(version), tick_ns_(params.tick.count()) {
  if (tick_ns_ <= 0) throw std::invalid_argument("menu: tick must be > 0");
  enable();
}

// menu_enable_device()
void MenuGovernor::enable() {
  needs_update_ = false;
  tick_wakeup_ = false;
  poll_time_limit_ = false;
  last_state_idx_ = -1;
  last_residency_ns_ = 0;
  next_timer_ns_ = 0;
  bucket_ = 0;
  correction_factor_.fill(0);
  std::fill_n(correction_factor_.begin(), buckets(), kResolution * kDecay);
  intervals_.fill(0);
  interval_ptr_ = 0;
}

// which_bucket(): v6.12 keeps a second set of six buckets for CPUs with
// I/O waiters; v6.18 (since 6.15 dropped iowait from menu) has one set.
int MenuGovernor::which_bucket(int64_t duration_ns, unsigned nr_iowaiters) const {
  int bucket = version_ == MenuVersion::kV612 && nr_iowaiters ? kBuckets / 2 : 0;
  if (duration_ns < 10'000) return bucket;
  if (duration_ns < 100'000) return bucket + 1;
  if (duration_ns < 1'000'000) return bucket + 2;
  if (duration_ns < 10'000'000) return bucket + 3;
  if (duration_ns < 100'000'000) return bucket + 4;
  return bucket + 5;
}

namespace {
unsigned performance_multiplier(unsigned nr_iowaiters) { return 1 + 10 * nr_iowaiters; }  // v6.12 only
}  // namespace

// menu_update_intervals(): the ring of the last 8 idle durations (us).
void MenuGovernor::update_intervals(unsigned interval_us) {
  intervals_[static_cast<size_t>(interval_ptr_++)] = interval_us;
  if (interval_ptr_ >= kIntervals) interval_ptr_ = 0;
}

// get_typical_interval()
unsigned MenuGovernor::typical_interval_us() const {
  return version_ == MenuVersion::kV618 ? typical_interval_v618() : typical_interval_v612();
}

// v6.12: average, then variance around it; outliers are trimmed from the
// top only (thresh = max - 1).
unsigned MenuGovernor::typical_interval_v612() const {
  unsigned thresh = INT_MAX;
  for (;;) {
    unsigned min = UINT_MAX, max = 0;
    uint64_t sum = 0;
    int divisor = 0;
    for (unsigned v : intervals_) {
      if (v <= thresh) {
        sum += v;
        divisor++;
        max = std::max(max, v);
        min = std::min(min, v);
      }
    }
    if (!max) return UINT_MAX;
    const unsigned avg = static_cast<unsigned>(divisor == kIntervals ? sum >> 3 : sum / static_cast<uint64_t>(divisor));
    uint64_t variance = 0;
    for (unsigned v : intervals_) {
      if (v <= thresh) {
        const int64_t diff = static_cast<int64_t>(v) - avg;
        variance += static_cast<uint64_t>(diff * diff);
      }
    }
    variance = divisor == kIntervals ? variance >> 3 : variance / static_cast<uint64_t>(divisor);
    if (variance <= UINT64_MAX / 36) {
      if ((static_cast<uint64_t>(avg) * avg > variance * 36 && divisor * 4 >= kIntervals * 3) ||
          variance <= 400)
        return avg;
    }
    if (divisor * 4 <= kIntervals * 3) return UINT_MAX;
    thresh = max - 1;
  }
}

// v6.18: one pass (sum and sum of squares, in u64 as the kernel's, wrapping
// alike); samples at UINT_MAX (a rejected state) never count; an outlier is
// trimmed from whichever side lies further from the average.
unsigned MenuGovernor::typical_interval_v618() const {
  int64_t min_thresh = -1, max_thresh = UINT_MAX;
  for (;;) {
    unsigned min = UINT_MAX, max = 0, divisor = 0;
    uint64_t avg = 0, variance = 0;
    for (unsigned u : intervals_) {
      const int64_t value = u;
      if (value <= min_thresh || value >= max_thresh) continue;
      divisor++;
      avg += static_cast<uint64_t>(value);
      variance += static_cast<uint64_t>(value) * static_cast<uint64_t>(value);
      max = std::max(max, u);
      min = std::min(min, u);
    }
    if (!max) return UINT_MAX;
    if (divisor == kIntervals) {
      avg >>= 3;
      variance >>= 3;
    } else {
      avg /= divisor;
      variance /= divisor;
    }
    const uint64_t avg_sq = avg * avg;
    variance -= avg_sq;
    if (variance <= UINT64_MAX / 36) {
      if ((avg_sq > variance * 36 && divisor * 4 >= kIntervals * 3) || variance <= 400)
        return static_cast<unsigned>(avg);
    }
    if (divisor * 4 <= kIntervals * 3) return UINT_MAX;
    if (avg - min > max - avg)
      min_thresh = min;
    else
      max_thresh = max;
  }
}

// menu_reflect()
void MenuGovernor::reflect(const IdleExit& exit) {
  last_state_idx_ = exit.state;
  last_residency_ns_ = exit.residency.count();
  needs_update_ = true;
  tick_wakeup_ = exit.tick_wakeup;
  poll_time_limit_ = exit.poll_time_limit;
}

// menu_update() (the same in v6.12 and v6.18)
void MenuGovernor::update(std::span<const IdleState> st) {
  const int last_idx = std::min(last_state_idx_, static_cast<int>(st.size()) - 1);
  int64_t measured_ns;
  if (tick_wakeup_ && next_timer_ns_ > tick_ns_) {
    measured_ns = 9 * kMaxInterestingNs / 10;
  } else if (poll(st, last_idx) && poll_time_limit_) {
    measured_ns = next_timer_ns_;
  } else {
    measured_ns = last_residency_ns_;
    if (measured_ns > 2 * el(st, last_idx))
      measured_ns -= el(st, last_idx);
    else
      measured_ns /= 2;
  }
  if (measured_ns > next_timer_ns_) measured_ns = next_timer_ns_;

  unsigned new_factor = correction_factor_[static_cast<size_t>(bucket_)];
  new_factor -= new_factor / kDecay;
  if (next_timer_ns_ > 0 && measured_ns < kMaxInterestingNs)
    new_factor += static_cast<unsigned>(static_cast<uint64_t>(kResolution) * static_cast<uint64_t>(measured_ns) /
                                        static_cast<uint64_t>(next_timer_ns_));
  else
    new_factor += kResolution;
  correction_factor_[static_cast<size_t>(bucket_)] = new_factor;

  update_intervals(static_cast<unsigned>(measured_ns / 1000));
}

// For --log debug: menu's predicted idle time; get_typical_interval()'s
// UINT_MAX (no pattern) times 1000 is no prediction.
static Time menu_predicted(uint64_t predicted_ns) {
  return predicted_ns >= uint64_t{UINT_MAX} * 1000u ? Time::max() : Time::ns(static_cast<int64_t>(predicted_ns));
}

// menu_select(): v6.12, and v6.18 where `v618` says so.
SelectResult MenuGovernor::select(const SelectInput& in) {
  const auto st = in.states;
  check_states(st);
  const bool v618 = version_ == MenuVersion::kV618;
  if (needs_update_) {
    update(st);
    needs_update_ = false;
  } else if (v618 && last_residency_ns_ == 0) {
    // v6.18: the driver rejected the last state (or no idle period yet):
    // record an interval that get_typical_interval() ignores.
    update_intervals(UINT_MAX);
  }
  const int n = static_cast<int>(st.size());
  const bool stopped = in.tick_stopped;
  int64_t latency_req = in.latency_req.count();
  SelectResult r;
  int64_t delta_tick;

  const unsigned typical = typical_interval_us();
  uint64_t predicted_ns = static_cast<uint64_t>(typical) * 1000u;
  // v6.18 also asks for the sleep length whenever the tick is stopped.
  if (predicted_ns > static_cast<uint64_t>(kResidencyThreshold.count()) || (v618 && stopped)) {
    r.queried_sleep_length = true;
    int64_t delta = in.sleep_length.count();
    delta_tick = in.delta_next_tick.count();
    if (delta < 0) {
      delta = 0;
      delta_tick = 0;
    }
    next_timer_ns_ = delta;
    bucket_ = which_bucket(next_timer_ns_, in.nr_iowaiters);
    // Round up the result for half microseconds (menu.c).
    const unsigned __int128 num = static_cast<unsigned __int128>(kResolution) * kDecay * 1000u / 2 +
                                  static_cast<unsigned __int128>(next_timer_ns_) *
                                      correction_factor_[static_cast<size_t>(bucket_)];
    const uint64_t timer_us = static_cast<uint64_t>(num / (static_cast<uint64_t>(kResolution) * kDecay * 1000u));
    predicted_ns = std::min(timer_us * 1000u, predicted_ns);
    if (v618 && stopped && predicted_ns < static_cast<uint64_t>(tick_ns_))
      predicted_ns = static_cast<uint64_t>(next_timer_ns_);
  } else {
    next_timer_ns_ = kInf;
    delta_tick = tick_ns_ / 2;
    bucket_ = v618 ? buckets() - 1 : which_bucket(kInf, in.nr_iowaiters);
  }

  r.predicted = menu_predicted(predicted_ns);
  if (n <= 1 || latency_req == 0 ||
      ((next_timer_ns_ < tr(st, 1) || latency_req < el(st, 1)) && !dis(st, 0))) {
    r.state = 0;
    r.stop_tick = !poll(st, 0);
    r.why = n <= 1                          ? "a single state"
            : next_timer_ns_ < tr(st, 1) ? "the next timer comes before state 1's target residency"
                                            : "the PM QoS latency limit allows state 0 only";
    return r;
  }

  if (!v618) {
    if (stopped) {
      if (predicted_ns < static_cast<uint64_t>(tick_ns_)) predicted_ns = static_cast<uint64_t>(next_timer_ns_);
    } else {
      const uint64_t interactivity_req = predicted_ns / performance_multiplier(in.nr_iowaiters);
      if (static_cast<uint64_t>(latency_req) > interactivity_req) latency_req = static_cast<int64_t>(interactivity_req);
    }
  }

  auto stopped_tick_choice = [&](int idx, int i) {
    if (tr(st, idx) < tick_ns_ && tr(st, i) <= delta_tick) idx = i;
    r.state = idx;
    r.stop_tick = true;
    r.predicted = menu_predicted(predicted_ns);
    r.why = "the tick is stopped: the deepest state the predicted idle duration allows";
    return r;
  };
  constexpr const char* kLatencyLimit = "the exit latency limit (PM QoS, or the predicted duration / performance multiplier)";

  int idx = -1;
  for (int i = 0; i < n; i++) {
    if (dis(st, i)) continue;
    if (idx == -1) idx = i;
    // v6.18 checks the exit latency before the residency; v6.12 only for a
    // state whose residency fits the prediction.
    if (v618 && el(st, i) > latency_req) {
      r.why = "the exit latency limit (PM QoS)";
      break;
    }
    if (static_cast<uint64_t>(tr(st, i)) <= predicted_ns) {
      if (!v618 && el(st, i) > latency_req) {
        r.why = kLatencyLimit;
        break;
      }
      idx = i;
      continue;
    }
    // A physical state instead of busy polling: v6.12 when its exit
    // latency is within the limit; v6.18 only below RESIDENCY_THRESHOLD_NS
    // and with its exit latency within the prediction. Both: before the
    // next timer.
    const bool leave_polling =
        tr(st, i) <= next_timer_ns_ &&
        (v618 ? tr(st, i) < kResidencyThreshold.count() && static_cast<uint64_t>(el(st, i)) <= predicted_ns
              : el(st, i) <= latency_req);
    if (poll(st, idx) && leave_polling) {
      predicted_ns = static_cast<uint64_t>(tr(st, i));
      idx = i;
      break;
    }
    if (predicted_ns < static_cast<uint64_t>(tick_ns_)) break;
    if (!stopped) {
      predicted_ns = static_cast<uint64_t>(tr(st, idx));
      break;
    }
    return stopped_tick_choice(idx, i);
  }
  if (idx == -1) idx = 0;
  if (!*r.why) r.why = "the deepest state the predicted idle duration allows";
  r.predicted = menu_predicted(predicted_ns);

  r.stop_tick = true;
  if ((poll(st, idx) || predicted_ns < static_cast<uint64_t>(tick_ns_)) && !stopped) {
    r.stop_tick = false;
    if (idx > 0 && tr(st, idx) > delta_tick) {
      r.why = kTickKeptShallower;
      for (int i = idx - 1; i >= 0; i--) {
        if (dis(st, i)) continue;
        idx = i;
        if (tr(st, i) <= delta_tick) break;
      }
    }
  }
  r.state = idx;
  return r;
}

// ================================================================ registry

namespace {
constexpr std::array<std::string_view, 9> kNames = {"menu",      "menu_v6.18", "teo",       "teo_tick",
                                                    "teo_tick_rfc", "teo_v6.6", "teo_v6.12", "teo_v6.18",
                                                    "qcom-cpu-lpm"};
}

std::span<const std::string_view> governor_names() { return kNames; }

std::unique_ptr<Governor> make_governor(std::string_view name, GovernorParams params) {
  if (name == "menu") return std::make_unique<MenuGovernor>(params);
  if (name == "menu_v6.18") return std::make_unique<MenuGovernor>(params, MenuVersion::kV618);
  if (name == "teo") return std::make_unique<TeoGovernor>(TeoVersion::kBaseline, params);
  if (name == "teo_tick") return std::make_unique<TeoGovernor>(TeoVersion::kTick, params);
  if (name == "teo_tick_rfc") return std::make_unique<TeoGovernor>(TeoVersion::kTickRfc, params);
  if (name == "teo_v6.6") return std::make_unique<TeoGovernor>(TeoVersion::kV66, params);
  if (name == "teo_v6.12") return std::make_unique<TeoGovernor>(TeoVersion::kV612, params);
  if (name == "teo_v6.18") return std::make_unique<TeoGovernor>(TeoVersion::kV618, params);
  if (name == "qcom-cpu-lpm") return std::make_unique<QcomLpmGovernor>();
  std::string msg = "unknown cpuidle governor '";
  msg.append(name).append("'; valid:");
  for (auto n : kNames) msg.append(" ").append(n);
  throw std::invalid_argument(msg);
}

}  // namespace schedlab::cpuidle
