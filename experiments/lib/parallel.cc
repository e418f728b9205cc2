#include "experiments/lib/parallel.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace schedlab {

int default_jobs() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

void parallel_for(size_t n, int threads, const std::function<void(size_t)>& job,
                  const std::function<void(size_t)>& done) {
  if (n == 0) return;
  const size_t workers = std::min<size_t>(n, static_cast<size_t>(std::max(1, threads)));
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mu;
  std::exception_ptr error;
  size_t error_index = n;

  auto work = [&] {
    for (;;) {
      if (failed.load()) return;
      const size_t i = next.fetch_add(1);
      if (i >= n) return;
      try {
        job(i);
        if (done) {
          std::lock_guard<std::mutex> lock(mu);
          done(i);
        }
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (i < error_index) {
          error_index = i;
          error = std::current_exception();
        }
        failed.store(true);
      }
    }
  };

  std::vector<std::thread> pool;
  pool.reserve(workers - 1);
  for (size_t t = 1; t < workers; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace schedlab
