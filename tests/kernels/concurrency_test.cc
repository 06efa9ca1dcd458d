// Multi-threaded execution (label `concurrency`, also run under ThreadSanitizer): one plan
// shared by several callers, plans large enough that two oneTBB threads share their items on
// every compiled target, and PlanOptions::max_threads below the arena's size.
#include <gtest/gtest.h>
#include <hwy/targets.h>
#include <pthread.h>

#include <random>
#include <thread>
#include <vector>

#include "iotx/plan.h"
#include "kernels/dispatch.h"
#include "kernels/kernel_test_util.h"
#include "support/reference_transpose.h"
#include "support/sanitizers.h"

namespace iotx::test {
namespace {

TEST(ConcurrentExecuteTest, OnePlanManyCallers) {
  const std::vector<int64_t> shape = {96, 70, 33};
  const std::vector<int64_t> perm = {2, 0, 1};
  auto plan = MakePlan(shape, perm, 4);
  ASSERT_TRUE(plan.has_value());
  const size_t bytes = PlanBytes(**plan);
  const std::vector<std::byte> src = RandomBytes(bytes, 7);
  const std::vector<std::byte> expected = ReferenceTranspose(src.data(), shape, perm, 4);
  std::vector<std::vector<std::byte>> outs(4, std::vector<std::byte>(bytes));
  std::vector<std::thread> threads;
  std::vector<int> ok(outs.size(), 0);
  for (size_t i = 0; i < outs.size(); ++i) {
    threads.emplace_back([&, i] { ok[i] = Execute(**plan, src.data(), outs[i].data()).has_value(); });
  }
  for (auto& t : threads) t.join();
  for (size_t i = 0; i < outs.size(); ++i) {
    EXPECT_TRUE(ok[i]);
    EXPECT_TRUE(outs[i] == expected) << "caller " << i;
  }
}

TEST(ConcurrentExecuteTest, TwoThreadsOnLargePlans) {
  std::mt19937_64 rng(42);
  constexpr size_t kElemSizes[] = {1, 2, 4, 8, 12, 16};
  for (int i = 0; i < 12; ++i) {
    Case c;
    const size_t rank = 2 + rng() % 3;
    c.elem = kElemSizes[rng() % std::size(kElemSizes)];
    // Above the single-thread threshold (512 KiB) so two threads share the items: a random
    // small shape times a leading extent that brings it to about 700 KiB.
    c.shape = RandomShape(rng, rank - 1, 4000, /*allow_zero=*/false);
    int64_t n = static_cast<int64_t>(c.elem);
    for (int64_t d : c.shape) n *= d;
    c.shape.insert(c.shape.begin(), (700 * 1024 + n - 1) / n);
    c.perm = RandomPerm(rng, rank);
    c.threads = 2;
    c.options.stores = i % 3 == 0 ? PlanOptions::Stores::kRegular : PlanOptions::Stores::kAuto;
    c.seed = rng();
    CheckCase(c);
    if (HasFatalFailure()) return;
  }
}

TEST(ConcurrentExecuteTest, MaxThreadsBelowTheArena) {
  // A 4-thread arena, plans bounded to 1 and 2 threads: results must not depend on it.
  for (int max_threads : {1, 2}) {
    Case c;
    c.shape = {1024, 300};
    c.perm = {1, 0};
    c.elem = 4;
    c.threads = 4;
    c.options.max_threads = max_threads;
    CheckCase(c);
    if (HasFatalFailure()) return;
  }
}

class TwoThreadTargetTest : public ::testing::TestWithParam<int64_t> {
 protected:
  void SetUp() override { hwy::SetSupportedTargetsForTest(GetParam()); }
  void TearDown() override { hwy::SetSupportedTargetsForTest(0); }
};

TEST_P(TwoThreadTargetTest, RandomPermutationsAboveTheParallelThreshold) {
  std::mt19937_64 rng(static_cast<uint64_t>(GetParam()) ^ 0x2222);
  constexpr size_t kElemSizes[] = {1, 2, 4, 8, 16};
  for (int i = 0; i < 5; ++i) {
    Case c;
    const size_t rank = 2 + rng() % 5;
    c.elem = kElemSizes[rng() % std::size(kElemSizes)];
    c.shape = RandomShape(rng, rank - 1, 3000, /*allow_zero=*/false);
    int64_t n = static_cast<int64_t>(c.elem);
    for (int64_t d : c.shape) n *= d;
    c.shape.insert(c.shape.begin() + static_cast<int64_t>(rng() % rank), (600 * 1024 + n - 1) / n);
    c.perm = RandomPerm(rng, rank);
    c.threads = 2;
    c.options.stores = i % 2 ? PlanOptions::Stores::kStreaming : PlanOptions::Stores::kRegular;
    c.dst_offset = i == 3 ? 8 : 0;
    c.seed = rng();
    CheckCase(c);
    if (HasFatalFailure()) return;
  }
}

// plan.h and iotx.h promise that 384 KiB of stack is enough for a thread that executes by
// itself or runs a caller's parallel-for task: the kernels keep their staging blocks there.
// The walks with the largest blocks run on a thread with exactly that stack (they need about
// 300 KiB here: 288 KiB overflowed; the rest is room for other compilers and flags): a fused plane
// of bytes that copies its source rows first (two blocks, with cache-bypassing stores), a staged
// 2-D plane and a staged fused plane of f32 (one block each, ordinary stores).
TEST(StackTest, StagedWalksRunOnTheDocumentedStack) {
  if (kSanitized) GTEST_SKIP() << "a sanitizer's frames are larger than the kernels' own";
  std::vector<Case> cases(3);
  cases[0].shape = {16, 16, 16, 16};
  cases[0].perm = {3, 2, 1, 0};
  cases[0].elem = 1;
  cases[0].options.stores = PlanOptions::Stores::kStreaming;
  cases[1].shape = {512, 1024};
  cases[1].perm = {1, 0};
  cases[1].options.stores = PlanOptions::Stores::kRegular;
  cases[2].shape = {16, 16, 16, 16};
  cases[2].perm = {3, 2, 1, 0};
  cases[2].options.stores = PlanOptions::Stores::kRegular;
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, 384 * 1024), 0);
  pthread_t thread;
  const auto run = [](void* arg) -> void* {
    for (const Case& c : *static_cast<std::vector<Case>*>(arg)) CheckCase(c);
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&thread, &attr, run, &cases), 0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
}

std::string TargetParamName(const ::testing::TestParamInfo<int64_t>& info) {
  return hwy::TargetName(info.param);
}

INSTANTIATE_TEST_SUITE_P(Targets, TwoThreadTargetTest,
                         ::testing::ValuesIn(kernels::CompiledTargets()), TargetParamName);

}  // namespace
}  // namespace iotx::test
