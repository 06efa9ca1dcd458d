// Durability work moved off the critical path: while the kernel fills the next tensor, a
// background thread writes the finished ones to disk (msync of the output mapping, or the
// commit of a finished file), so the final fsync finds little left to do.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "iotx/status.h"

namespace iotx::files {

// Background threads running posted jobs, started in the order posted: with one thread, one
// at a time; with several, up to that many at once (fsyncs of different files then share the
// file system's journal commits). Not copyable.
class BackgroundFlush {
 public:
  // At most `max_queued` jobs wait at a time (each may hold an open file and its mapping):
  // Post blocks beyond that, which is the back-pressure of a disk slower than the kernel.
  explicit BackgroundFlush(size_t max_queued, size_t threads = 1);
  // Waits for the queued jobs (their errors are dropped: call Drain() to see them).
  ~BackgroundFlush();
  BackgroundFlush(const BackgroundFlush&) = delete;
  BackgroundFlush& operator=(const BackgroundFlush&) = delete;

  // Queues `job` (waiting while max_queued jobs wait). After a job has failed, the jobs not
  // yet started are dropped without running.
  void Post(std::function<Status()> job);
  // Waits until every queued job has run; returns the first failure.
  Status Drain();

 private:
  void Run();
  // Lets the threads finish the queued jobs and joins them.
  void StopAndJoin() noexcept;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::function<Status()>> queue_;
  const size_t max_queued_;
  size_t busy_ = 0;  // jobs running
  bool stopping_ = false;
  Status first_failure_;
  std::vector<std::thread> threads_;
};

// Writes the dirty pages of `mapping` (a shared, writable file mapping that starts on a page
// boundary) to disk and waits for them: msync(MS_SYNC). kIoWrite on failure.
Status SyncMapping(std::span<std::byte> mapping);

}  // namespace iotx::files
