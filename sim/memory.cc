#include "sim/memory.h"

#include <cstddef>  // defines __GLIBC__ on glibc systems, tested below

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace schedlab {

void retain_freed_memory() {
#if defined(__GLIBC__)
  // Trim only above 1 GiB of free heap top, far above a run's footprint (a
  // 30 s phone run peaks near 10 MB). Blocks up to 32 MiB (glibc's largest
  // allowed threshold on 64-bit; setting it also stops the sliding
  // threshold) come from the heap instead of their own mmap().
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
#endif
}

}  // namespace schedlab
