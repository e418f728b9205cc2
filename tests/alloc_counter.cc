// The test binary's global operator new/delete: plain malloc/free, counted
// while an AllocationCounter (alloc_counter.h) is in scope.
#include "alloc_counter.h"

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
std::atomic<bool> g_count_allocations{false};
std::atomic<uint64_t> g_allocations{0};

// The whole non-aligned family is replaced (array and nothrow forms too), so
// every such allocation is malloc and every deallocation free, also under
// AddressSanitizer, whose own nothrow new would otherwise pair with our
// delete. noinline keeps GCC 12 from inlining these into callers and then
// warning (-Wmismatched-new-delete) that free() gets a pointer from new.
[[gnu::noinline]] void* counted_malloc(std::size_t n) noexcept {
  if (g_count_allocations.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n == 0 ? 1 : n);
}
}  // namespace

namespace schedlab::testing {
AllocationCounter::AllocationCounter() {
  g_allocations.store(0, std::memory_order_relaxed);
  g_count_allocations.store(true, std::memory_order_relaxed);
}
AllocationCounter::~AllocationCounter() { g_count_allocations.store(false, std::memory_order_relaxed); }
uint64_t AllocationCounter::count() const { return g_allocations.load(std::memory_order_relaxed); }
}  // namespace schedlab::testing

[[gnu::noinline]] void* operator new(std::size_t n) {
  if (void* p = counted_malloc(n)) return p;
  throw std::bad_alloc();
}
[[gnu::noinline]] void* operator new[](std::size_t n) {
  if (void* p = counted_malloc(n)) return p;
  throw std::bad_alloc();
}
[[gnu::noinline]] void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return counted_malloc(n); }
[[gnu::noinline]] void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return counted_malloc(n); }
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
