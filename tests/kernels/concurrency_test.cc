// Multi-threaded execution (label `concurrency`, also run under ThreadSanitizer): one plan
// shared by several callers, plans large enough that two oneTBB threads share their items on
// every compiled target, and PlanOptions::max_threads below the arena's size.
#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <random>
#include <thread>
#include <vector>

#include "iotx/plan.h"
#include "kernels/dispatch.h"
#include "kernels/kernel_test_util.h"
#include "support/reference_transpose.h"

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

std::string TargetParamName(const ::testing::TestParamInfo<int64_t>& info) {
  return hwy::TargetName(info.param);
}

INSTANTIATE_TEST_SUITE_P(Targets, TwoThreadTargetTest,
                         ::testing::ValuesIn(kernels::CompiledTargets()), TargetParamName);

}  // namespace
}  // namespace iotx::test
