#include "files/background_flush.h"
#include "files/system_error.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <exception>
#include <new>
#include <string>
#include <system_error>
#include <utility>

namespace iotx::files {

BackgroundFlush::BackgroundFlush(size_t max_queued, size_t threads)
    : max_queued_(max_queued == 0 ? 1 : max_queued) {
  try {
    for (size_t i = 0; i < std::max<size_t>(threads, 1); ++i) {
      threads_.emplace_back([this] { Run(); });
    }
  } catch (...) {
    // A thread could not start: the ones that did are joined before the members go (a
    // joinable std::thread destroyed ends the process).
    StopAndJoin();
    throw;
  }
}

BackgroundFlush::~BackgroundFlush() { StopAndJoin(); }

void BackgroundFlush::StopAndJoin() noexcept {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (std::thread& thread : threads_) thread.join();
}

void BackgroundFlush::Post(std::function<Status()> job) {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return queue_.size() < max_queued_; });
    queue_.push_back(std::move(job));
  }
  changed_.notify_all();
}

Status BackgroundFlush::Drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [this] { return queue_.empty() && busy_ == 0; });
  return first_failure_;
}

namespace {

// An exception must not leave this thread (std::terminate): out of memory inside a job (its
// error message, a commit's path) becomes its failure like any other.
Status RunJob(const std::function<Status()>& job) noexcept {
  try {
    return job();
  } catch (const std::bad_alloc&) {
    return Fail(ErrorCode::kOutOfMemory, "out of memory while writing a finished file to disk");
  } catch (const std::exception& e) {
    return Fail(ErrorCode::kInternal, std::string("background write failed: ") + e.what());
  }
}

}  // namespace

void BackgroundFlush::Run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and nothing left
    std::function<Status()> job = std::move(queue_.front());
    queue_.pop_front();
    changed_.notify_all();  // room for a waiting Post
    if (!first_failure_) {  // after a failure the rest is dropped
      lock.unlock();
      job = nullptr;  // releases what it holds (an uncommitted file is removed)
      lock.lock();
      changed_.notify_all();
      continue;
    }
    ++busy_;
    lock.unlock();
    Status status = RunJob(job);
    lock.lock();
    --busy_;
    if (!status && first_failure_) first_failure_ = std::move(status);
    changed_.notify_all();
  }
}

Status SyncMapping(std::span<std::byte> mapping) {
  if (mapping.empty() || msync(mapping.data(), mapping.size(), MS_SYNC) == 0) return Ok();
  const int errnum = errno;
  return Fail(SystemError(ErrorCode::kIoWrite, "cannot write the output's pages to disk", {},
                          errnum));
}

}  // namespace iotx::files
