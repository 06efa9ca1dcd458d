// Execute's contract beyond the data movement: argument checks and a plan printing itself.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "iotx/plan.h"
#include "kernels/dispatch.h"
#include "kernels/kernel_test_util.h"
#include "kernels/machine.h"

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

TEST(DescribeTest, ACopyAndAnEmptyOutputAreDescribedAsTheyAre) {
  // A 16-byte copy read "1 item(s) of 65536 contiguous bytes" (the chunk, not the item), and
  // an empty output "0 B per partition per tile (exceeds 212984 B ... into 0 pieces)".
  auto copy = MakePlan(std::vector<int64_t>{4}, std::vector<int64_t>{0}, 4);
  ASSERT_TRUE(copy.has_value());
  const std::string copy_text = Describe(**copy);
  EXPECT_NE(copy_text.find("driver:   1 item(s) of 16 contiguous bytes"), std::string::npos)
      << copy_text;
  auto empty = MakePlan(std::vector<int64_t>{0, 5}, std::vector<int64_t>{1, 0}, 4);
  ASSERT_TRUE(empty.has_value());
  const std::string empty_text = Describe(**empty);
  EXPECT_NE(empty_text.find("an empty output: nothing to map"), std::string::npos) << empty_text;
  EXPECT_EQ(empty_text.find("exceeds"), std::string::npos) << empty_text;
}

// What `iotx plan` prints for an n x n f32 transpose with the given stores.
std::string DescribeTranspose(int64_t n, PlanOptions::Stores stores) {
  PlanOptions options;
  options.stores = stores;
  options.max_threads = 2;  // the strategy depends on each thread's share (StagesTiles)
  auto plan = MakePlan(std::vector<int64_t>{n, n}, std::vector<int64_t>{1, 0}, 4, options);
  EXPECT_TRUE(plan.has_value());
  return plan.has_value() ? Describe(**plan) : std::string();
}

TEST(DescribeTest, SaysAStagedWalkIsForOrdinaryStoresOnly) {
  // 1024 x 1024 f32: destination rows 4 KiB apart alias in L1, so with ordinary stores the
  // walk is staged; with cache-bypassing stores (the output in DRAM) it runs in place and
  // prefetches the next band.
  const std::string regular = DescribeTranspose(1024, PlanOptions::Stores::kRegular);
  EXPECT_NE(regular.find("strategy: staged-tiles"), std::string::npos) << regular;
  EXPECT_NE(regular.find("only with ordinary stores"), std::string::npos) << regular;
  const std::string streaming = DescribeTranspose(1024, PlanOptions::Stores::kStreaming);
  EXPECT_NE(streaming.find("strategy: tiles"), std::string::npos) << streaming;
  EXPECT_NE(streaming.find("same tile of the next band"), std::string::npos) << streaming;
}

TEST(DescribeTest, SaysWhenABandWalkPrefetchesTheNextBand) {
  // 768 x 768 f32 (rows 3 KiB apart: a tile's lines do not alias) with cache-bypassing stores:
  // walked band by band in place, the next band's tiles fetched ahead. With ordinary stores,
  // below half the L2 (Machine::prefetch_ahead_bytes, forced either way here), the same walk
  // without it; past it the plane stages (a band's 768 lines share 4 of the L1's sets), and
  // 600 x 600 (rows 2400 B apart) walks its bands fetching ahead.
  const RestoreMachineOverrides restore;
  const std::string streaming = DescribeTranspose(768, PlanOptions::Stores::kStreaming);
  ASSERT_NE(streaming.find("strategy: tiles"), std::string::npos) << streaming;
  EXPECT_NE(streaming.find("same tile of the next band"), std::string::npos) << streaming;
  kernels::SetPrefetchAheadForTest(false);
  const std::string in_l2 = DescribeTranspose(768, PlanOptions::Stores::kRegular);
  ASSERT_NE(in_l2.find("strategy: tiles"), std::string::npos) << in_l2;
  EXPECT_EQ(in_l2.find("next band"), std::string::npos) << in_l2;
  EXPECT_EQ(in_l2.find("for writing"), std::string::npos) << in_l2;
  kernels::SetPrefetchAheadForTest(true);
  const std::string staged = DescribeTranspose(768, PlanOptions::Stores::kRegular);
  EXPECT_NE(staged.find("strategy: staged-tiles"), std::string::npos) << staged;
  EXPECT_NE(staged.find("each fetching the next run's lines for writing"), std::string::npos)
      << staged;
  const std::string bands = DescribeTranspose(600, PlanOptions::Stores::kRegular);
  ASSERT_NE(bands.find("strategy: tiles"), std::string::npos) << bands;
  EXPECT_NE(bands.find("same tile of the next band and the destination lines"), std::string::npos)
      << bands;
}

// A band walk in a streaming plan whose destination rows are not whole lines apart (f32
// 200 x 136 reversed: 800 B) cannot stream (TilesPlane): Describe says it stores ordinarily,
// and names the fetching ahead that such walks do (Tile::prefetch_ahead), not the streaming
// walk's.
TEST(DescribeTest, SaysABandWalkWhoseRowsFollowEachOtherGoesThroughAStage) {
  // Destination rows of 800 B that follow each other, streamed: not whole lines, so a stage
  // laid out as the destination (StagesDenseRows), which streams and fetches nothing ahead.
  const RestoreMachineOverrides restore;
  kernels::SetPrefetchAheadForTest(true);
  PlanOptions options;
  options.stores = PlanOptions::Stores::kStreaming;
  auto plan = MakePlan(std::vector<int64_t>{200, 136}, std::vector<int64_t>{1, 0}, 4, options);
  ASSERT_TRUE(plan.has_value());
  const std::string text = Describe(**plan);
  ASSERT_NE(text.find("strategy: tiles"), std::string::npos) << text;
  EXPECT_NE(text.find("whole columns through a buffer of at most"), std::string::npos) << text;
  EXPECT_NE(text.find("because destination rows follow each other (800 B each, not whole "
                      "lines)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("stores ordinarily"), std::string::npos) << text;
  EXPECT_EQ(text.find("and the destination lines of the tile"), std::string::npos) << text;
}

// The line of `text` that starts with `key` (e.g. "tile:"), or all of it when there is none.
std::string Line(const std::string& text, const std::string& key) {
  const size_t at = text.find("\n" + key);
  return at == std::string::npos ? text : text.substr(at + 1, text.find('\n', at + 1) - at - 1);
}

TEST(DescribeTest, AliasingSourceRowsLoadWholeRowsAndPrefetchIntoL2) {
  // f32 1040 x 1024: source rows 4 KiB apart (one L1 set per tile); 1024 x 1040: 4160 B apart
  // (all sets), the destination's rows aliasing instead. With cache-bypassing stores both walk
  // in place; only the first loads each source row whole and fetches the next band into L2.
  const auto describe = [](int64_t rows, int64_t cols, PlanOptions::Stores stores) {
    PlanOptions options;
    options.stores = stores;
    auto plan = MakePlan(std::vector<int64_t>{rows, cols}, std::vector<int64_t>{1, 0}, 4, options);
    EXPECT_TRUE(plan.has_value());
    return plan.has_value() ? Describe(**plan) : std::string();
  };
  const std::string src_alias = describe(1040, 1024, PlanOptions::Stores::kStreaming);
  const std::string dst_alias = describe(1024, 1040, PlanOptions::Stores::kStreaming);
  ASSERT_NE(src_alias.find("strategy: tiles"), std::string::npos) << src_alias;
  ASSERT_NE(dst_alias.find("strategy: tiles"), std::string::npos) << dst_alias;
  EXPECT_NE(Line(src_alias, "walk:").find("next band into L2"), std::string::npos) << src_alias;
  EXPECT_NE(Line(dst_alias, "walk:").find("same tile of the next band"), std::string::npos)
      << dst_alias;
  EXPECT_EQ(Line(dst_alias, "walk:").find("into L2"), std::string::npos) << dst_alias;
  // The staged walk (ordinary stores) reads the same source rows: the same tile.
  const std::string staged = describe(1040, 1024, PlanOptions::Stores::kRegular);
  ASSERT_NE(staged.find("strategy: staged-tiles"), std::string::npos) << staged;
  for (const std::string* text : {&src_alias, &staged}) {
    EXPECT_EQ(Line(*text, "tile:").find("rows gathered by 128-bit blocks"), std::string::npos)
        << *text;
  }
  if (kernels::ChosenVectorBytes() >= 64 &&
      std::string_view(kernels::ChosenTargetName()).starts_with("AVX3")) {
    for (const std::string* text : {&src_alias, &staged}) {
      EXPECT_NE(Line(*text, "tile:").find("each source row loaded once: rows 4096 B apart"),
                std::string::npos)
          << *text;
    }
    EXPECT_NE(Line(dst_alias, "tile:").find("rows gathered by 128-bit blocks"), std::string::npos)
        << dst_alias;
  }
}

TEST(DescribeTest, NamesTheOneByteTileEachWalkRuns) {
  // On 64-byte vectors of an AVX-512 target 1-byte tiles are built in halves of 32 columns in
  // every walk (2000^2: tiles in place, whose bands are walked a half at a time; 2048^2: rows 2
  // KiB apart, staged with ordinary stores, which automatic stores may leave for streaming in
  // place), as HalvesByteTiles tells the kernels; no 1-byte tile gathers its rows.
  const auto describe = [](int64_t n) {
    PlanOptions options;
    options.stores = PlanOptions::Stores::kRegular;
    auto plan = MakePlan(std::vector<int64_t>{n, n}, std::vector<int64_t>{1, 0}, 1, options);
    EXPECT_TRUE(plan.has_value());
    return plan.has_value() ? Describe(**plan) : std::string();
  };
  const std::string in_place = describe(2000);
  const std::string staged = describe(2048);
  ASSERT_NE(in_place.find("strategy: tiles "), std::string::npos) << in_place;
  ASSERT_NE(staged.find("strategy: staged-tiles "), std::string::npos) << staged;
  for (const std::string* text : {&in_place, &staged}) {
    EXPECT_EQ(Line(*text, "tile:").find("gathered"), std::string::npos) << *text;
  }
  const bool halves = kernels::ChosenVectorBytes() >= 64 &&
                      std::string_view(kernels::ChosenTargetName()).starts_with("AVX3");
  for (const std::string* text : {&in_place, &staged}) {
    EXPECT_EQ(Line(*text, "tile:").find("two halves of 32 columns") != std::string::npos, halves)
        << *text;
  }
  EXPECT_EQ(Line(in_place, "walk:").find("each band is walked twice") != std::string::npos, halves)
      << in_place;
  EXPECT_EQ(Line(staged, "walk:").find("each band is walked twice"), std::string::npos) << staged;
}

}  // namespace
}  // namespace iotx::test
