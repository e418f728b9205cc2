// Allocator setting for programs that run many simulations in one process.
#pragma once

namespace schedlab {

// Keep freed memory in the process for the next run instead of handing it
// back to the kernel. By default glibc unmaps blocks above its mmap
// threshold and trims the heap top, so every run's growing sample vectors
// (the recorder's latency samples) fault their pages in afresh: on the
// development VM a 30 s phone_ui_40 run took ~1,500 minor faults and about
// a tenth of its wall time in them. With this set, the second and later
// runs of a thread reuse the pages. Results do not change (no allocation
// decides anything the model computes). A no-op outside glibc.
void retain_freed_memory();

}  // namespace schedlab
