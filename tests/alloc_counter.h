// Allocation counting for tests (definitions in alloc_counter.cc, which
// replaces the global operator new/delete family of the test binary).
// Allocations are counted only inside an AllocationCounter's scope, so
// every other test is unaffected: outside it these are plain malloc/free.
#pragma once

#include <cstdint>

namespace schedlab::testing {

class AllocationCounter {
 public:
  AllocationCounter();
  ~AllocationCounter();
  AllocationCounter(const AllocationCounter&) = delete;
  AllocationCounter& operator=(const AllocationCounter&) = delete;
  uint64_t count() const;
};

}  // namespace schedlab::testing
