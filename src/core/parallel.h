// The one place iotx hands work to oneTBB.
//
// ThreadSanitizer cannot see the synchronization inside libtbb.so (Debian's is not built with
// -fsanitize=thread): every task would seem to race with the thread that spawned it, and
// oneTBB's reuse of its own task objects would look like races too. So in a TSan build the
// tasks run on plain std::threads, whose start and join TSan understands; the code inside the
// tasks — all of iotx's own concurrency — is then checked exactly as it runs with oneTBB.
#pragma once

#if defined(__SANITIZE_THREAD__)
#define IOTX_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define IOTX_TSAN 1
#endif
#endif

#ifdef IOTX_TSAN
#include <thread>
#include <vector>
#else
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#endif

namespace iotx {

// Runs fn(i) for every i in [0, n), each index a task of its own on the calling thread's
// oneTBB task arena (the caller takes part). Returns once all have run.
template <class Fn>
void ParallelForEach(int n, const Fn& fn) {
#ifdef IOTX_TSAN
  std::vector<std::thread> threads;
  for (int i = 1; i < n; ++i) threads.emplace_back([&fn, i] { fn(i); });
  if (n > 0) fn(0);
  for (std::thread& t : threads) t.join();
#else
  tbb::parallel_for(0, n, fn, tbb::simple_partitioner());
#endif
}

}  // namespace iotx
