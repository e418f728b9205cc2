// cpuidle governors: one select/reflect interface, chosen by name.
//
// Modelled on struct cpuidle_governor (include/linux/cpuidle.h):
//   int  (*select)(drv, dev, bool *stop_tick)   -> select(SelectInput) -> SelectResult
//   void (*reflect)(dev, int index)             -> reflect(IdleExit)
//   int  (*enable)(drv, dev)                    -> enable(state_count)
// Each instance is the per-CPU governor data of ONE CPU (struct teo_cpu /
// struct menu_device). Instances are pure state machines and allocate
// nothing after construction: the simulator supplies the kernel's inputs
// (states, PM QoS latency limit, what tick_nohz_get_sleep_length() would
// report, tick state) and applies the outputs.
//
// As in the kernel, the statistics are updated lazily: reflect() only records
// the wakeup; the next select() runs teo_update()/menu_update() first.
//
// tick_nohz_get_sleep_length(): the caller passes the values the call would
// return (SelectInput::sleep_length and ::delta_next_tick). The governor
// returns SelectResult::queried_sleep_length saying whether it made the call;
// the CPU cost of the call (and of the governor) is the caller's to charge.
// When a governor does not make the call it uses the kernel's fallbacks
// (sleep length = KTIME_MAX, delta_tick = TICK_NSEC / 2).
//
// Kernel references: drivers/cpuidle/governors/menu.c (Linux 6.12 and
// 6.18), drivers/cpuidle/governors/teo.c in six versions (see governors.cc),
// drivers/cpuidle/governors/gov.h (RESIDENCY_THRESHOLD_NS).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/time.h"

namespace schedlab::cpuidle {

// CPUIDLE_STATE_MAX (include/linux/cpuidle.h).
inline constexpr int kStateMax = 10;
// RESIDENCY_THRESHOLD_NS (drivers/cpuidle/governors/gov.h).
inline constexpr Time kResidencyThreshold = Time::us(15);

// One entry of drv->states[] plus dev->states_usage[i].disable.
// Build it from IdleStateParams (models/hw/platform.h) as
// drivers/cpuidle/dt_idle_states.c does: target_residency = min_residency,
// exit_latency = entry_latency + exit_latency (models/kernel/cpuidle/cpuidle.cc).
struct IdleState {
  Time target_residency = Time::zero();  // target_residency_ns
  Time exit_latency = Time::zero();      // exit_latency_ns
  bool polling = false;                  // CPUIDLE_FLAG_POLLING
  bool disabled = false;                 // states_usage[i].disable
};

struct SelectInput {
  std::span<const IdleState> states;     // drv->states, shallow to deep, 1..kStateMax
  Time latency_req = Time::max();        // cpuidle_governor_latency_req() (PM QoS); max = none
  // What tick_nohz_get_sleep_length(&delta_next) would return if called:
  Time sleep_length = Time::max();       // return value: time to the next timer event
                                         // with the tick stopped
  Time delta_next_tick = Time::max();    // *delta_next: time to the next event incl. the tick
  bool tick_stopped = false;             // tick_nohz_tick_stopped()
  bool cpu_utilized = false;             // teo: sched_cpu_util(cpu) > capacity >> 6
  unsigned nr_iowaiters = 0;             // menu: nr_iowait_cpu(cpu)
  Time now = Time::zero();               // ktime_get() at the select (qcom-cpu-lpm's history times)
  // qcom-cpu-lpm: WALT's busy_hyst_end_time of this CPU
  // (sched_lpm_disallowed_time(): WFI until then); zero = none.
  Time lpm_bias_until = Time::zero();
};

struct SelectResult {
  int state = 0;                         // index into states
  bool stop_tick = true;                 // *stop_tick
  bool queried_sleep_length = false;     // tick_nohz_get_sleep_length() was called
  // For --log debug only (the simulation never reads them): the idle
  // duration the choice was made for (the sleep length or the governor's
  // estimate; max = none) and why that state (a static string).
  Time predicted = Time::max();
  const char* why = "";
  // qcom-cpu-lpm only. `timer`: the governor starts an hrtimer pinned to
  // this CPU that long after the select (its prediction timer; max =
  // none). `next_wakeup`: when the CPU chose its deepest state, the wake-up
  // it expects (select time + sleep length), which the cluster governor
  // takes (update_cluster_select(); max = not passed on; a time in the
  // past = no wake-up expected).
  Time timer = Time::max();
  Time next_wakeup = Time::max();
  // qcom-cpu-lpm's bias timer (biastimer_start(), pinned): a WFI chosen for
  // WALT's LPM bias is left when the bias ends (max = none).
  Time bias_timer = Time::max();
};

// What the kernel knows after the wakeup (cpuidle_reflect() time).
struct IdleExit {
  int state = 0;                         // the state entered (cpuidle_reflect index)
  Time residency = Time::zero();         // dev->last_residency_ns (includes exit latency)
  // local_clock() at reflect minus local_clock() at select (teo's
  // time_span_ns); zero = take `residency`.
  Time time_span = Time::zero();
  bool tick_wakeup = false;              // tick_nohz_idle_got_tick(): woken by the tick
  bool poll_time_limit = false;          // dev->poll_time_limit (polling state timed out)
};

class Governor {
 public:
  virtual ~Governor() = default;
  virtual std::string_view name() const = 0;
  // enable callback: resets the per-CPU data. select() also accepts any
  // state count in 1..kStateMax without it.
  virtual void enable() = 0;
  virtual SelectResult select(const SelectInput& in) = 0;
  virtual void reflect(const IdleExit& exit) = 0;
  // call_cpuidle() returned -EBUSY (need_resched before the state was
  // entered): no reflect, and dev->last_residency_ns = 0, which only
  // menu_v6.18 reads outside its update.
  virtual void entry_refused() {}

  // Vendor hooks and IPI tracepoints (Android common kernel): only
  // qcom-cpu-lpm registers them; the others keep these defaults.
  // trace_android_vh_cpu_idle_enter(&index) at cpuidle_enter_state()'s
  // start: the state actually entered.
  virtual int enter_state(int state) { return state; }
  // trace_ipi_raise (an IPI sent to this CPU) and trace_ipi_entry (its
  // handler starts on this CPU).
  virtual void ipi_raised(Time /*now*/) {}
  virtual void ipi_handled() {}
  virtual bool ipi_pending() const { return false; }
  // The hrtimer SelectResult::timer (or ::bias_timer) asked for expired.
  virtual void timer_expired(bool /*bias*/) {}
  // clear_cpu_predict_history(): the SoC went to its deepest sleep.
  virtual void clear_history() {}
};

struct GovernorParams {
  Time tick = Time::ms(4);               // TICK_NSEC (HZ=250, the Android arm64 config)
};

// ---- teo ----------------------------------------------------------------

enum class TeoVersion {
  kBaseline,  // "teo": v6.5 teo.c, before the July 2023 fixes series
  kTick,      // "teo_tick": + "cpuidle: teo: Avoid stopping scheduler tick too often" (v3)
  kTickRfc,   // "teo_tick_rfc": + the two RFC/RFT v1 patches (1 Aug 2023)
  kV66,       // "teo_v6.6": the v6.6 file (+ RFT v2, with the tick statistics)
  kV612,      // "teo_v6.12": the v6.12 file (no util-awareness, no recent intercepts)
  kV618,      // "teo_v6.18": the v6.18 file (short-idle and tick-intercept statistics)
};

// struct teo_bin
struct TeoBin {
  unsigned intercepts = 0;
  unsigned hits = 0;
  unsigned recent = 0;
};

class TeoGovernor final : public Governor {
 public:
  static constexpr unsigned kPulse = 1024;   // PULSE
  static constexpr unsigned kDecayShift = 3; // DECAY_SHIFT
  static constexpr int kNrRecent = 9;        // NR_RECENT

  explicit TeoGovernor(TeoVersion version, GovernorParams params = {});
  std::string_view name() const override;
  void enable() override;
  SelectResult select(const SelectInput& in) override;
  void reflect(const IdleExit& exit) override;

  // Inspection (tests, traces).
  TeoVersion version() const { return version_; }
  const TeoBin& bin(int i) const { return bins_.at(static_cast<size_t>(i)); }
  unsigned total() const { return total_; }
  unsigned tick_hits() const { return tick_hits_; }  // always 0 but in teo_v6.6 and teo_v6.12
  unsigned tick_intercepts() const { return tick_intercepts_; }  // teo_v6.18 only
  unsigned short_idles() const { return short_idles_; }          // teo_v6.18 only
  Time sleep_length() const { return Time::ns(sleep_length_ns_); }  // as saved by the last select
  bool update_pending() const { return last_state_idx_ >= 0; }

 private:
  void update(std::span<const IdleState> st);
  void update_v618(std::span<const IdleState> st);
  int find_shallower(std::span<const IdleState> st, int idx, int64_t duration_ns, bool no_poll) const;
  SelectResult select_baseline_or_tick(const SelectInput& in);
  SelectResult select_rfc(const SelectInput& in);
  static SelectResult teo_out_tick(SelectResult r, int idx, int64_t duration_ns);
  SelectResult teo_end(std::span<const IdleState> st, bool stopped, SelectResult r, int idx, int idx0,
                       int64_t duration_ns, int64_t delta_tick) const;
  // "Gather statistics regarding whether or not to stop the tick"
  // (2662342079f5, RFT v2 3/3): the v6.6 and v6.12 files have it.
  bool tick_statistics() const { return version_ == TeoVersion::kV66 || version_ == TeoVersion::kV612; }
  // The utilization check and the NR_RECENT "recent intercepts" metric:
  // every version before v6.12's file (2024 removed both).
  bool has_util_and_recent() const { return version_ != TeoVersion::kV612 && version_ != TeoVersion::kV618; }

  TeoVersion version_;
  int64_t tick_ns_;
  // struct teo_cpu
  int64_t time_span_ns_ = 0;
  int64_t sleep_length_ns_ = INT64_MAX;
  std::array<TeoBin, kStateMax> bins_{};
  unsigned total_ = 0;
  int next_recent_idx_ = 0;
  std::array<int, kNrRecent> recent_idx_{};
  unsigned tick_hits_ = 0;
  // v6.18's struct teo_cpu: tick_intercepts, short_idles, artificial_wakeup.
  unsigned tick_intercepts_ = 0;
  unsigned short_idles_ = 0;
  bool artificial_wakeup_ = false;
  // dev->last_state_idx, dev->last_residency_ns, tick_nohz_idle_got_tick()
  int last_state_idx_ = -1;
  int64_t last_residency_ns_ = 0;
};

// ---- menu ---------------------------------------------------------------

enum class MenuVersion {
  kV612,  // "menu": the v6.12 file (12 buckets, iowait performance multiplier)
  kV618,  // "menu_v6.18": the v6.18 file (6 buckets, no iowait, outlier trimming on both sides)
};

class MenuGovernor final : public Governor {
 public:
  static constexpr int kBuckets = 12;        // BUCKETS in v6.12 (v6.18: 6; the array holds the larger)
  static constexpr int kIntervals = 8;       // INTERVALS
  static constexpr unsigned kResolution = 1024;
  static constexpr unsigned kDecay = 8;
  static constexpr int64_t kMaxInterestingNs = 50'000'000;  // MAX_INTERESTING

  explicit MenuGovernor(GovernorParams params = {}, MenuVersion version = MenuVersion::kV612);
  std::string_view name() const override { return version_ == MenuVersion::kV618 ? "menu_v6.18" : "menu"; }
  void enable() override;
  SelectResult select(const SelectInput& in) override;
  void reflect(const IdleExit& exit) override;
  void entry_refused() override { last_residency_ns_ = 0; }

  MenuVersion version() const { return version_; }
  int buckets() const { return version_ == MenuVersion::kV618 ? 6 : kBuckets; }
  // get_typical_interval(): microseconds, UINT32_MAX when none.
  unsigned typical_interval_us() const;
  unsigned correction_factor(int bucket) const { return correction_factor_.at(static_cast<size_t>(bucket)); }
  int bucket() const { return bucket_; }
  // For tests / warm starts: set the 8 recorded intervals (us).
  void set_intervals_us(const std::array<unsigned, kIntervals>& v) { intervals_ = v; }
  const std::array<unsigned, kIntervals>& intervals_us() const { return intervals_; }

 private:
  void update(std::span<const IdleState> st);
  void update_intervals(unsigned interval_us);  // menu_update_intervals() (v6.18's name)
  unsigned typical_interval_v612() const;
  unsigned typical_interval_v618() const;
  int which_bucket(int64_t duration_ns, unsigned nr_iowaiters) const;

  MenuVersion version_;
  int64_t tick_ns_;
  bool needs_update_ = false;
  bool tick_wakeup_ = false;
  bool poll_time_limit_ = false;
  int last_state_idx_ = -1;
  int64_t last_residency_ns_ = 0;  // dev->last_residency_ns (0 until the first reflect)
  int64_t next_timer_ns_ = 0;
  int bucket_ = 0;
  std::array<unsigned, kBuckets> correction_factor_{};
  std::array<unsigned, kIntervals> intervals_{};
  int interval_ptr_ = 0;
};

// ---- qcom-cpu-lpm ---------------------------------------------------------

// Qualcomm's cpuidle governor "qcom-cpu-lpm" (drivers/cpuidle/governors/
// qcom-lpm.c and qcom-lpm.h, the Snapdragon vendor kernels: la_kernel_qcom,
// read in the realme GT8 Pro Android 16 source, 2025). Rating 50 beats menu
// (20) and teo (19): a Snapdragon phone that loads the module runs it.
// lpm_select(): the deepest enabled state whose exit latency meets the PM
// QoS limit, whose target residency fits the sleep length, and (once one
// does, cpu_predict()) whose target residency is within the predicted idle
// time, if any. The prediction, from five samples of this CPU's past:
//  1. the residency pattern (find_deviation()): the average of the last
//     five idle residencies (less exit latency) when they are tight
//     (standard deviation <= 500 us, or average > 6 sigma with at most the
//     largest sample dropped), below the sleep length and the deepest
//     state's target residency;
//  2. premature exits: 3 of the 5 samples left state j before its target
//     residency -> their average;
//  3. the IPI pattern: find_deviation() over the intervals between IPIs
//     sent to this CPU.
// A predicted shallow choice with a much longer sleep length arms the
// prediction timer (start_prediction_timer(): the prediction + 100 us,
// capped at the next deeper state's residency - 1 us): if it fires the CPU
// wakes, the next select does not predict, and the two idle periods are
// merged into one history sample. The tick is always stopped (*stop_tick is
// left true). lpm_idle_enter() (android_vh_cpu_idle_enter) enters WFI
// instead while an IPI sent to this CPU is pending; lpm_idle_exit()
// cancels the prediction timer unless it has expired.
// WALT's LPM bias (lpm_disallowed() -> sched_lpm_disallowed_time()): while
// the CPU's busy hysteresis lasts (SelectInput::lpm_bias_until, kept by the
// kernel model from kernel.cpuidle.walt_* keys), WFI, last_idx 0, and the
// bias timer wakes the CPU when it ends. Not modelled: WALT's reserved CPUs
// (core control), suspend, the sysfs switches (the module starts with
// sleep_disabled Y, which the vendor's userspace init writes N, as the
// model takes it; prediction_disabled stays N).
class QcomLpmGovernor final : public Governor {
 public:
  static constexpr int kMaxSamples = 5;             // MAXSAMPLES
  static constexpr uint64_t kPredTimerAddUs = 100;  // PRED_TIMER_ADD
  static constexpr unsigned kPredPrematureCnt = 3;  // PRED_PREMATURE_CNT
  static constexpr uint64_t kPredRefStddevUs = 500; // PRED_REF_STDDEV
  enum class PredType : uint8_t { kReset, kResidencyPattern, kPrematureExits, kIpiPattern };  // LPM_PRED_*

  QcomLpmGovernor() = default;
  std::string_view name() const override { return "qcom-cpu-lpm"; }
  void enable() override;
  SelectResult select(const SelectInput& in) override;
  void reflect(const IdleExit& exit) override { last_residency_ns_ = exit.residency.count(); }
  void entry_refused() override { last_residency_ns_ = 0; }
  int enter_state(int state) override { return state != 0 && ipi_pending_ ? 0 : state; }
  void ipi_raised(Time now) override;
  void ipi_handled() override { ipi_pending_ = false; }
  bool ipi_pending() const override { return ipi_pending_; }
  // histtimer_fn() marks the history; biastimer_fn() does nothing (its
  // interrupt only wakes the CPU to select again).
  void timer_expired(bool bias) override {
    if (!bias) history_invalid_ = true;
  }
  void clear_history() override;

  // Inspection (tests, traces).
  uint64_t predicted_us() const { return predicted_; }
  PredType pred_type() const { return pred_type_; }
  int nsamp() const { return nsamp_; }
  uint32_t sample_us(int i) const { return resi_.at(static_cast<size_t>(i)); }
  int sample_mode(int i) const { return mode_.at(static_cast<size_t>(i)); }
  int last_idx() const { return last_idx_; }

 private:
  void update_cpu_history(std::span<const IdleState> st);
  void cpu_predict(std::span<const IdleState> st, uint64_t duration_ns);
  uint64_t find_deviation(std::span<const IdleState> st, const std::array<uint32_t, kMaxSamples>& samples,
                          uint64_t duration_ns) const;

  // struct lpm_cpu, struct history_lpm, struct history_ipi
  int last_idx_ = -1;
  uint64_t predicted_ = 0;  // us
  bool history_invalid_ = false;
  bool htmr_wkup_ = false;
  PredType pred_type_ = PredType::kReset;
  bool ipi_pending_ = false;
  std::array<uint32_t, kMaxSamples> resi_{};  // us
  std::array<int, kMaxSamples> mode_{};
  int nsamp_ = 0;
  int samples_idx_ = 0;
  std::array<uint32_t, kMaxSamples> ipi_interval_{};  // us
  int ipi_ptr_ = 0;
  int64_t last_ipi_ns_ = 0;  // cpu_idle_resched_ts (0 at boot)
  int64_t last_residency_ns_ = 0;  // dev->last_residency_ns
};

// The cluster half of qcom-cpu-lpm (drivers/cpuidle/governors/
// qcom-cluster-lpm.c, same source): one per cluster power domain, a genpd
// notifier plus GENPD_FLAG_MIN_RESIDENCY.
//  * Each CPU choosing its deepest state passes its expected wake-up; their
//    earliest is the domain device's next wake-up (dev_pm_genpd_set_next_
//    wakeup()), which genpd's governor honours besides its own check
//    (next_wakeup_allows_state(); a value already past is ignored).
//  * GENPD_NOTIFY_PRE_OFF (cluster_power_cb()): the power-off is refused
//    while an IPI is pending to any of its CPUs, when the PM QoS limit is
//    below the state's power-on latency, or at or below the state the
//    prediction restricts (restrict_idx); a prediction arms the cluster
//    timer (the next deeper state's residency + 100 us) that lifts it.
//  * GENPD_NOTIFY_ON: the residency is recorded (five samples; a timer
//    wake-up merges two) and the next one predicted (cluster_predict()):
//    after a shallower state the average of the five (restrict the deepest
//    if it is within its residency); else 3 premature exits from a state
//    restrict it. Samples older than 40 ms drop out of the count. After a
//    full residency in the deepest state of a domain holding every CPU,
//    every CPU's and cluster's history is cleared.
// Kept as the source has it: the average of premature exits accumulates
// over the states it scans; restrict_idx survives a round with no
// prediction. Not modelled: the cluster bias timer (DT
// qcom,use-cluster-bias-timer; absent here), the sysfs state switches, the
// pred_wakeup test of cluster_power_down() (pred_wakeup is always KTIME_MAX
// in this source).
struct GenpdState {
  Time power_off_latency;  // entry-latency-us
  Time power_on_latency;   // exit-latency-us
  Time residency;          // min-residency-us
};

class QcomClusterGovernor {
 public:
  static constexpr int kMaxSamples = QcomLpmGovernor::kMaxSamples;
  static constexpr int64_t kSampleInvalidUs = 40000;  // CLUST_SMPL_INVLD_TIME (DT qcom,sample-invalid-time)
  static constexpr uint32_t kPredPrematureCnt = 3;    // PRED_PREMATURE_CNT (DT qcom,pred-prem-cnt)

  QcomClusterGovernor(std::vector<GenpdState> states, int nr_cpus, bool spans_all_cpus);
  // update_cluster_select(): CPU `slot` of the domain chose its deepest state.
  void cpu_select(int slot, Time next_wakeup) { cpu_next_wakeup_.at(static_cast<size_t>(slot)) = next_wakeup; }
  // The domain's next wake-up as genpd reads it (update_domain_next_wakeup()):
  // max when none, or when it is already past.
  Time next_wakeup(Time now) const;
  struct PreOff {
    bool allow = true;
    Time start_timer = Time::max();  // the cluster timer, relative to now (max: none)
  };
  // GENPD_NOTIFY_PRE_OFF for genpd's state `state`.
  PreOff pre_off(Time now, int state, Time cpus_latency_req, bool ipi_pending);
  // GENPD_NOTIFY_ON after state `state`: true when every CPU's history is to
  // be cleared (clear_cpu_predict_history(); this domain's is cleared here).
  bool power_on(Time now, int state);
  void timer_expired();  // clusttimer_fn()
  void clear_history();  // clear_cluster_history()

  // Inspection (tests).
  int restrict_idx() const { return restrict_idx_; }
  bool predicted() const { return predicted_; }
  uint64_t pred_residency_us() const { return pred_residency_; }
  int nsamp() const { return nsamp_; }

 private:
  void update_history(Time now, int state);
  void predict(Time now, int state);

  std::vector<GenpdState> states_;
  bool spans_all_cpus_;
  std::vector<Time> cpu_next_wakeup_;
  struct Sample {
    uint64_t residency = 0;  // us
    int mode = -1;
    int64_t entry_time = 0;  // us
  };
  std::array<Sample, kMaxSamples> history_{};
  int samples_idx_ = 0;
  int nsamp_ = 0;
  bool history_invalid_ = false;
  bool htmr_wkup_ = false;
  int entry_idx_ = -1;
  int64_t entry_time_ns_ = 0;
  int restrict_idx_ = -1;
  bool predicted_ = false;
  uint64_t pred_residency_ = 0;  // us
  // (The source's is_timer_expired only gates a cancel before a re-arm,
  // which hrtimer_start() does anyway.)
};

// ---- registry -----------------------------------------------------------

// "menu", "menu_v6.18", "teo", "teo_tick", "teo_tick_rfc", "teo_v6.6",
// "teo_v6.12", "teo_v6.18", "qcom-cpu-lpm".
std::span<const std::string_view> governor_names();
// Unknown name -> std::invalid_argument listing the valid names.
std::unique_ptr<Governor> make_governor(std::string_view name, GovernorParams params = {});

}  // namespace schedlab::cpuidle
