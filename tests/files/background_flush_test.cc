// BackgroundFlush: jobs run in order on another thread (at once on several), the first failure
// is kept and stops the rest, Post waits when the queue is full.
#include "files/background_flush.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

namespace iotx::files {
namespace {

TEST(BackgroundFlushTest, RunsJobsInOrderOffTheCallingThread) {
  std::mutex mutex;
  std::vector<int> order;
  std::atomic<bool> other_thread{true};
  const std::thread::id caller = std::this_thread::get_id();
  BackgroundFlush flush(2);
  for (int i = 0; i < 20; ++i) {
    flush.Post([&, i]() -> Status {
      if (std::this_thread::get_id() == caller) other_thread = false;
      std::lock_guard<std::mutex> lock(mutex);
      order.push_back(i);
      return Ok();
    });
  }
  EXPECT_TRUE(flush.Drain());
  std::vector<int> expected(20);
  for (int i = 0; i < 20; ++i) expected[i] = i;
  EXPECT_EQ(order, expected);
  EXPECT_TRUE(other_thread);
}

TEST(BackgroundFlushTest, KeepsTheFirstFailureAndDropsLaterJobs) {
  std::atomic<int> ran{0};
  BackgroundFlush flush(8);
  flush.Post([&]() -> Status {
    ++ran;
    return Ok();
  });
  flush.Post([&]() -> Status {
    ++ran;
    return Fail(ErrorCode::kIoWrite, "first");
  });
  flush.Post([&]() -> Status {
    ++ran;
    return Fail(ErrorCode::kIoRead, "second");
  });
  flush.Post([&]() -> Status {
    ++ran;
    return Ok();
  });
  Status status = flush.Drain();
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().message, "first");
  EXPECT_EQ(ran, 2);
}

TEST(BackgroundFlushTest, PostWaitsWhileTheQueueIsFull) {
  std::atomic<bool> release{false};
  std::atomic<int> posted{0};
  BackgroundFlush flush(1);
  flush.Post([&]() -> Status {  // runs and blocks
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return Ok();
  });
  std::thread poster([&] {
    for (int i = 0; i < 3; ++i) {
      flush.Post([]() -> Status { return Ok(); });
      ++posted;
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  // The first job may not have started yet, so one or two posts can have been queued.
  EXPECT_LE(posted, 2);
  release = true;
  poster.join();
  EXPECT_EQ(posted, 3);
  EXPECT_TRUE(flush.Drain());
}

TEST(BackgroundFlushTest, DestructionWaitsForQueuedJobs) {
  std::atomic<int> ran{0};
  {
    BackgroundFlush flush(4);
    for (int i = 0; i < 4; ++i) {
      flush.Post([&]() -> Status {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        ++ran;
        return Ok();
      });
    }
  }
  EXPECT_EQ(ran, 4);
}

// With three threads, three jobs run at once: each waits until all three have started, which
// one thread (or two) could never let happen; Drain waits for the last of them.
TEST(BackgroundFlushTest, SeveralThreadsRunJobsAtOnce) {
  std::atomic<int> started{0};
  std::atomic<int> finished{0};
  std::atomic<bool> all_met{true};
  BackgroundFlush flush(3, 3);
  for (int i = 0; i < 3; ++i) {
    flush.Post([&]() -> Status {
      ++started;
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (started < 3) {
        if (std::chrono::steady_clock::now() > deadline) {
          all_met = false;
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      ++finished;
      return Ok();
    });
  }
  EXPECT_TRUE(flush.Drain());
  EXPECT_EQ(finished, 3);
  EXPECT_TRUE(all_met) << "the three jobs never ran at the same time";
}

}  // namespace
}  // namespace iotx::files
