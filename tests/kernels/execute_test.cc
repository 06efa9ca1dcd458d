// Execute's contract beyond the data movement: argument checks and a plan printing itself.
#include <gtest/gtest.h>

#include <vector>

#include "iotx/plan.h"

namespace iotx::test {
namespace {

TEST(ExecuteTest, RejectsOverlappingAndNullBuffers) {
  auto plan = MakePlan(std::vector<int64_t>{8, 8}, std::vector<int64_t>{1, 0}, 4);
  ASSERT_TRUE(plan.has_value());
  std::vector<std::byte> buf(512);
  EXPECT_EQ(Execute(**plan, buf.data(), buf.data() + 100).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(Execute(**plan, nullptr, buf.data()).error().code, ErrorCode::kInvalidArgument);
  EXPECT_TRUE(Execute(**plan, buf.data(), buf.data() + 256).has_value());
}

TEST(ExecuteTest, EmptyPlansAcceptNullBuffers) {
  auto plan = MakePlan(std::vector<int64_t>{8, 0}, std::vector<int64_t>{1, 0}, 4);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(PlanBytes(**plan), 0u);
  EXPECT_TRUE(Execute(**plan, nullptr, nullptr).has_value());
}

TEST(ExecuteTest, RejectsNegativeMaxThreads) {
  PlanOptions options;
  options.max_threads = -1;
  EXPECT_EQ(MakePlan(std::vector<int64_t>{8}, std::vector<int64_t>{0}, 4, options).error().code,
            ErrorCode::kInvalidArgument);
}

TEST(DescribeTest, NamesEveryDecision) {
  auto plan = MakePlan(std::vector<int64_t>{3, 16, 128, 2, 2, 64},
                       std::vector<int64_t>{0, 4, 5, 3, 1, 2}, 4);
  ASSERT_TRUE(plan.has_value());
  const std::string text = Describe(**plan);
  for (const char* part : {"output [3, 2, 64, 2, 16, 128]", "folded:", "strategy: ", "machine:", "walk:",
                           "tile:", "driver:", "threads:", "stores:", "sbuf:", "trn2",
                           "dim 0 = 3 rows"}) {
    EXPECT_NE(text.find(part), std::string::npos) << part << "\n" << text;
  }
}

// What `iotx plan` prints for an n x n f32 transpose with the given stores.
std::string DescribeTranspose(int64_t n, PlanOptions::Stores stores) {
  PlanOptions options;
  options.stores = stores;
  auto plan = MakePlan(std::vector<int64_t>{n, n}, std::vector<int64_t>{1, 0}, 4, options);
  EXPECT_TRUE(plan.has_value());
  return plan.has_value() ? Describe(**plan) : std::string();
}

TEST(DescribeTest, SaysWhenAStagedWalkPrefetchesTheNextBlock) {
  // 1024 x 1024 f32: destination rows 4 KiB apart alias in L1, so the walk is staged; only
  // with cache-bypassing stores (the output in DRAM) does it fetch the next block ahead.
  for (auto stores : {PlanOptions::Stores::kStreaming, PlanOptions::Stores::kRegular}) {
    const std::string text = DescribeTranspose(1024, stores);
    ASSERT_NE(text.find("staged-tiles"), std::string::npos) << text;
    const bool streaming = stores == PlanOptions::Stores::kStreaming;
    EXPECT_EQ(text.find("prefetches the same tile of the next block") != std::string::npos,
              streaming)
        << text;
    EXPECT_EQ(text.find("two blocks share the buffer") != std::string::npos, streaming) << text;
  }
}

TEST(DescribeTest, SaysWhenABandWalkPrefetchesTheNextBand) {
  // 768 x 768 f32 (rows 3 KiB apart, no aliasing): walked band by band in place; the next
  // band's tiles are fetched ahead only with cache-bypassing stores.
  for (auto stores : {PlanOptions::Stores::kStreaming, PlanOptions::Stores::kRegular}) {
    const std::string text = DescribeTranspose(768, stores);
    ASSERT_NE(text.find("strategy: tiles"), std::string::npos) << text;
    EXPECT_EQ(text.find("same tile of the next band") != std::string::npos,
              stores == PlanOptions::Stores::kStreaming)
        << text;
  }
}

}  // namespace
}  // namespace iotx::test
