#include "models/kernel/sched/weights.h"

#include <bit>

namespace schedlab {

// Published constants of kernel/sched/core.c (each step is ~1.25x, so one
// nice level is ~10% of CPU between two competing tasks).
static constexpr uint64_t kPrioToWeight[40] = {
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916,
    9548,  7620,  6100,  4904,  3906,  3121,  2501,  1991,  1586,  1277,
    1024,  820,   655,   526,   423,   335,   272,   215,   172,   137,
    110,   87,    70,    56,    45,    36,    29,    23,    18,    15,
};
// 2^32 / weight, as published beside the weights.
static constexpr uint32_t kPrioToWmult[40] = {
    48388,     59856,     76040,     92818,     118348,    147320,    184698,    229616,
    287308,    360437,    449829,    563644,    704093,    875809,    1099582,   1376151,
    1717300,   2157191,   2708050,   3363326,   4194304,   5237765,   6557202,   8165337,
    10153587,  12820798,  15790321,  19976592,  24970740,  31350126,  39045157,  49367440,
    61356676,  76695844,  95443717,  119304647, 148102320, 186737708, 238609294, 286331153,
};

uint64_t nice_to_weight(int nice) { return kPrioToWeight[nice + 20]; }
uint32_t nice_to_wmult(int nice) { return kPrioToWmult[nice + 20]; }

static int fls32(uint32_t x) { return x == 0 ? 0 : 32 - std::countl_zero(x); }

uint64_t calc_delta(uint64_t delta, uint64_t weight, uint64_t lw_weight, uint32_t lw_inv_weight) {
  uint32_t inv = lw_inv_weight;
  if (inv == 0) {
    if (lw_weight >= kWmultConst) inv = 1;
    else if (lw_weight == 0) inv = kWmultConst;
    else inv = static_cast<uint32_t>(kWmultConst / lw_weight);
  }
  uint64_t fact = weight;
  int shift = kWmultShift;
  // Keep the multiplier within 32 bits, trading shift for precision, as
  // __calc_delta() does.
  if (uint32_t hi = static_cast<uint32_t>(fact >> 32)) {
    int fs = fls32(hi);
    shift -= fs;
    fact >>= fs;
  }
  fact = static_cast<uint64_t>(static_cast<uint32_t>(fact)) * inv;
  if (uint32_t hi = static_cast<uint32_t>(fact >> 32)) {
    int fs = fls32(hi);
    shift -= fs;
    fact >>= fs;
  }
  unsigned __int128 prod = static_cast<unsigned __int128>(delta) * static_cast<uint32_t>(fact);
  return static_cast<uint64_t>(prod >> shift);
}

}  // namespace schedlab
