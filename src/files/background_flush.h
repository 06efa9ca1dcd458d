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

#include "iotx/status.h"

namespace iotx::files {

// One background thread running posted jobs one at a time, in order. Not copyable.
class BackgroundFlush {
 public:
  // At most `max_queued` jobs wait at a time (each may hold an open file and its mapping):
  // Post blocks beyond that, which is the back-pressure of a disk slower than the kernel.
  explicit BackgroundFlush(size_t max_queued);
  // Waits for the queued jobs (their errors are dropped: call Drain() to see them).
  ~BackgroundFlush();
  BackgroundFlush(const BackgroundFlush&) = delete;
  BackgroundFlush& operator=(const BackgroundFlush&) = delete;

  // Queues `job` (waiting while max_queued jobs wait). After a job has failed, later ones
  // are dropped without running.
  void Post(std::function<Status()> job);
  // Waits until every queued job has run; returns the first failure.
  Status Drain();

 private:
  void Run();

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::function<Status()>> queue_;
  const size_t max_queued_;
  bool busy_ = false;
  bool stopping_ = false;
  Status first_failure_;
  std::thread thread_;
};

// Writes the dirty pages of `mapping` (a shared, writable file mapping that starts on a page
// boundary) to disk and waits for them: msync(MS_SYNC). kIoWrite on failure.
Status SyncMapping(std::span<std::byte> mapping);

}  // namespace iotx::files
