// Independent jobs on a few std::threads. Results are gathered by job
// index, never by completion order, so output does not depend on -j.
#pragma once

#include <cstddef>
#include <functional>

namespace schedlab {

// std::thread::hardware_concurrency(), at least 1.
int default_jobs();

// Calls job(i) for every i in [0, n) on up to `threads` threads (the calling
// thread is one of them when threads == 1). Jobs are handed out in index
// order. After each job, done(i) runs under a lock (progress, bookkeeping).
// If jobs throw, no new job starts, running ones finish, and the exception
// of the lowest failing index is rethrown here.
void parallel_for(size_t n, int threads, const std::function<void(size_t)>& job,
                  const std::function<void(size_t)>& done = {});

}  // namespace schedlab
