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

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>

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

// The same, but through the caller's parallel-for when `external` is set (the C API's
// iotx_parallel_for_fn: external(context, n, task, task_context) calls task(task_context, i)
// for each i and returns when all have returned), so that iotx starts no thread of its own;
// n == 1 runs on the calling thread. Returns false if `external` returned without running
// every index (a broken callback: the caller gets an error instead of a partial output).
template <class Fn, class External>
bool ParallelForEach(int n, const Fn& fn, External external, void* context) {
  if (n <= 0) return true;
  if (n == 1) {
    fn(0);
    return true;
  }
  if (external == nullptr) {
    ParallelForEach(n, fn);
    return true;
  }
  struct Task {
    const Fn* fn;
    std::atomic<size_t> ran{0};
  } task{&fn};
  external(
      context, static_cast<size_t>(n),
      [](void* task_context, size_t i) {
        auto* t = static_cast<Task*>(task_context);
        (*t->fn)(static_cast<int>(i));
        t->ran.fetch_add(1, std::memory_order_acq_rel);
      },
      &task);
  return task.ran.load(std::memory_order_acquire) == static_cast<size_t>(n);
}

// Most tasks ParallelClaims deals shares to: their counters sit on its stack, so a call
// allocates nothing. Callers that name a task count in a message clamp to it first.
inline constexpr int kMaxClaimTasks = 256;

// Runs claim(c) once for every c in [0, count), on min(tasks, count, kMaxClaimTasks) tasks of
// ParallelForEach (oneTBB, or the caller's `external` parallel-for). The claims are dealt in
// equal contiguous shares; each task takes its own share's claims first and then helps the
// others from theirs, so a thread that the machine slows down simply takes fewer, and
// repeated calls on the same buffers keep each part on the same thread and in its cache (with
// one counter in arrival order, parts moved between cores from call to call: on two vCPUs
// whose caches exchange lines slowly, the f32 source example of 6 MiB ran at 0.26x memcpy on
// two threads, 0.40-0.46x with shares; docs/performance.md). Returns false when claims were
// left untaken, which only an `external` that returned before running every task can cause:
// a task that ran took every claim left in every share.
template <class Claim, class External>
bool ParallelClaims(int tasks, int64_t count, const Claim& claim, External external,
                    void* context) {
  tasks = static_cast<int>(std::min<int64_t>({tasks, count, kMaxClaimTasks}));
  if (tasks <= 0) return true;
  // Plain integers claimed through std::atomic_ref: a call sets up only the shares it uses.
  struct alignas(64) Share {
    int64_t next;
    int64_t end;
  };
  Share shares[kMaxClaimTasks];
  for (int i = 0; i < tasks; ++i) {
    shares[i].next = count * i / tasks;
    shares[i].end = count * (i + 1) / tasks;
  }
  ParallelForEach(
      tasks,
      [&](int task) {
        for (int k = 0; k < tasks; ++k) {  // its own share, then the others' in turn
          Share& share = shares[(task + k) % tasks];
          std::atomic_ref<int64_t> next(share.next);
          for (;;) {
            const int64_t c = next.fetch_add(1, std::memory_order_relaxed);
            if (c >= share.end) break;
            claim(c);
          }
        }
      },
      external, context);
  return std::none_of(shares, shares + tasks, [](Share& s) {
    return std::atomic_ref<int64_t>(s.next).load(std::memory_order_relaxed) < s.end;
  });
}

}  // namespace iotx
