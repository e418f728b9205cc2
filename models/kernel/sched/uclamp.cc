// Utilization clamping, Linux 6.12 kernel/sched/core.c and fair.c (see
// uclamp.h).
#include "models/kernel/sched/uclamp.h"

#include <algorithm>

#include "models/kernel/sched/pelt.h"

namespace schedlab {
namespace {

// uclamp_rq_max_value(): the value of the top bucket with tasks; with none,
// uclamp_idle_value(): the max clamp is retained (so blocked util does not
// push the frequency up when the rq idles) and flags the rq idle; the min
// clamp drops to uclamp_none().
uint32_t uclamp_rq_max_value(const UclampSystem& sys, RqUclamp& rq, UclampId id, uint32_t clamp_value) {
  for (int b = sys.buckets - 1; b >= 0; --b) {
    const UclampBucket& bucket = rq.clamp[id].bucket[static_cast<size_t>(b)];
    if (bucket.tasks) return bucket.value;
  }
  if (id == kUclampMax) {
    rq.flag_idle = true;
    return clamp_value;
  }
  return uclamp_none(kUclampMin);
}

}  // namespace

void uclamp_rq_inc_id(const UclampSystem& sys, RqUclamp& rq, UclampId id, const UclampSe& req, UclampSe& eff) {
  eff = sys.eff_get(req, id);  // "Update task effective clamp"
  UclampRq& uc = rq.clamp[id];
  UclampBucket& bucket = uc.bucket[eff.bucket_id];
  ++bucket.tasks;
  eff.active = true;
  // uclamp_idle_reset(): the first runnable task after idle sets the value.
  if (rq.flag_idle) uc.value = eff.value;
  // Local max aggregation within the bucket.
  if (bucket.tasks == 1 || eff.value > bucket.value) bucket.value = eff.value;
  if (eff.value > uc.value) uc.value = eff.value;
}

void uclamp_rq_dec_id(const UclampSystem& sys, RqUclamp& rq, UclampId id, UclampSe& eff) {
  // Not refcounted (uclamp was enabled after it was enqueued): nothing to undo.
  if (!eff.active) return;
  UclampRq& uc = rq.clamp[id];
  UclampBucket& bucket = uc.bucket[eff.bucket_id];
  if (bucket.tasks) --bucket.tasks;
  eff.active = false;
  // Tasks left in the bucket keep its value (possibly over-boosting them).
  if (bucket.tasks) return;
  if (bucket.value >= uc.value) uc.value = uclamp_rq_max_value(sys, rq, id, eff.value);
}

int util_fits_cpu(uint64_t util, uint64_t uclamp_min, uint64_t uclamp_max, uint64_t capacity_of,
                  uint64_t capacity_orig, uint64_t actual_capacity, bool uclamp_used) {
  // The real util, without any boost or cap.
  bool fits = fits_capacity(util, capacity_of);
  if (!uclamp_used) return fits;
  // A uclamp_max at or below the CPU's original capacity makes the task fit
  // (it is capped there anyway), except uclamp_max 1024 on a 1024 CPU: the
  // system is saturated there and must be allowed to become overutilized.
  bool uclamp_max_fits = capacity_orig == kUclampScale && uclamp_max == kUclampScale;
  uclamp_max_fits = !uclamp_max_fits && uclamp_max <= capacity_orig;
  fits = fits || uclamp_max_fits;
  // Boosted (util below uclamp_min, itself limited to uclamp_max): fits only
  // by utilization if the boost is above what the CPU can actually give.
  uclamp_min = std::min(uclamp_min, uclamp_max);
  if (fits && util < uclamp_min && uclamp_min > actual_capacity) return -1;
  return fits ? 1 : 0;
}

}  // namespace schedlab
