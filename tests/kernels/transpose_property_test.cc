// Property tests of Execute against the naive reference, on every Highway target compiled
// into the kernels that this CPU supports: every permutation of ranks 1-4, random ones up to
// rank 8, every element size (1, 2, 4, 8, 16 and odd ones), misaligned buffers, forced
// streaming stores, zero-size tensors; guard bytes around the output must stay untouched.
#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <string_view>

#include "kernels/dispatch.h"
#include "kernels/kernel_test_util.h"

namespace iotx::test {
namespace {

constexpr size_t kElemSizes[] = {1, 2, 3, 4, 8, 12, 16};

class TransposeTargetTest : public ::testing::TestWithParam<int64_t> {
 protected:
  void SetUp() override { hwy::SetSupportedTargetsForTest(GetParam()); }
  void TearDown() override { hwy::SetSupportedTargetsForTest(0); }
};

TEST_P(TransposeTargetTest, DispatchUsesThePinnedTarget) {
  EXPECT_STREQ(kernels::ChosenTargetName(), hwy::TargetName(GetParam()));
}

TEST_P(TransposeTargetTest, EveryPermutationOfRanksOneToFour) {
  std::mt19937_64 rng(static_cast<uint64_t>(GetParam()) ^ 0x5eed);
  for (size_t rank = 1; rank <= 4; ++rank) {
    std::vector<int64_t> perm(rank);
    std::iota(perm.begin(), perm.end(), 0);
    do {
      for (size_t elem : kElemSizes) {
        Case c;
        c.shape = RandomShape(rng, rank, 6000, /*allow_zero=*/false);
        c.perm = perm;
        c.elem = elem;
        c.seed = rng();
        CheckCase(c);
        if (HasFatalFailure()) return;
      }
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
}

TEST_P(TransposeTargetTest, RandomRanksUpToEight) {
  std::mt19937_64 rng(static_cast<uint64_t>(GetParam()) ^ 0xabc);
  for (int i = 0; i < 60; ++i) {
    Case c;
    const size_t rank = 1 + rng() % 8;
    c.shape = RandomShape(rng, rank, 8000, /*allow_zero=*/true);
    c.perm = RandomPerm(rng, rank);
    c.elem = kElemSizes[rng() % std::size(kElemSizes)];
    c.seed = rng();
    CheckCase(c);
    if (HasFatalFailure()) return;
  }
}

TEST_P(TransposeTargetTest, FullTilesAndRemaindersOfEveryWidth) {
  // 2-D transposes whose sides straddle the tile sizes (64 / elem rows, one vector of columns).
  for (size_t elem : {1, 2, 4, 8, 16}) {
    for (int64_t rows : {1, 2, 3, 4, 16, 31, 64, 65, 130}) {
      for (int64_t cols : {1, 2, 3, 4, 5, 16, 33, 64, 100}) {
        Case c;
        c.shape = {rows, cols};
        c.perm = {1, 0};
        c.elem = elem;
        c.seed = static_cast<uint64_t>(rows * 1000 + cols);
        CheckCase(c);
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST_P(TransposeTargetTest, RowCopiesOfElementsNoTileWidthFits) {
  // Elements of no tile width transposed as wholes: a row copy, which moves each element as
  // one vector where its run and its source row leave room past it (row_copy-inl.h,
  // MoveColumnRun). Widths on both sides of each vector width, runs shorter and longer than a
  // vector, both store kinds (cache-bypassing ones gather runs in an L1 buffer), 1 and 2
  // threads, destinations part-way into a line.
  for (size_t elem : {3, 5, 7, 9, 13, 15, 17, 24, 31, 33, 37, 44, 63, 65, 100}) {
    std::vector<std::vector<int64_t>> shapes = {{1, 40}, {2, 3}, {37, 23}, {130, 9}};
    // Large enough for two threads' items: blocks of the source-inner dim, each a strip whose
    // last columns may not read past it.
    if (elem == 9 || elem == 37) shapes.push_back({261, 500});
    for (const auto& shape : shapes) {
      for (auto stores : {PlanOptions::Stores::kRegular, PlanOptions::Stores::kStreaming}) {
        for (int threads : {1, 2}) {
          Case c;
          c.shape = shape;
          c.perm = {1, 0};
          c.elem = elem;
          c.options.stores = stores;
          c.options.max_threads = threads;
          c.threads = threads;
          c.dst_offset = elem % 11;
          c.src_fenced = true;  // the moves read past an element only inside the source
          c.seed = elem * 977 + static_cast<uint64_t>(shape[0] + threads);
          CheckCase(c);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

TEST_P(TransposeTargetTest, MisalignedBuffersWithEachStoreMode) {
  std::mt19937_64 rng(static_cast<uint64_t>(GetParam()) ^ 0x0ff5e7);
  for (auto stores : {PlanOptions::Stores::kRegular, PlanOptions::Stores::kStreaming}) {
    for (size_t src_offset : {0, 1, 4, 24}) {
      for (size_t dst_offset : {0, 2, 8, 40}) {
        for (int i = 0; i < 3; ++i) {
          Case c;
          const size_t rank = 2 + rng() % 3;
          c.shape = RandomShape(rng, rank, 20000, /*allow_zero=*/false);
          c.perm = RandomPerm(rng, rank);
          c.elem = kElemSizes[rng() % std::size(kElemSizes)];
          c.options.stores = stores;
          c.src_offset = src_offset;
          c.dst_offset = dst_offset;
          c.seed = rng();
          CheckCase(c);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

TEST_P(TransposeTargetTest, StreamingStoresOnWholeLines) {
  // Outputs whose rows are whole, aligned 64-byte lines, so the cache-bypassing path runs.
  const std::vector<std::vector<int64_t>> shapes = {{64, 256}, {3, 128, 2, 64}, {16, 16, 16, 16}};
  for (size_t elem : {1, 2, 4, 8, 16, 64}) {
    for (const auto& shape : shapes) {
      std::vector<int64_t> perm(shape.size());
      std::iota(perm.begin(), perm.end(), 0);
      std::reverse(perm.begin(), perm.end());
      Case c;
      c.shape = shape;
      c.perm = perm;
      c.elem = elem;
      c.options.stores = PlanOptions::Stores::kStreaming;
      CheckCase(c);
      if (HasFatalFailure()) return;
    }
  }
}

TEST_P(TransposeTargetTest, TwoToFourChannelsInterleavedAndBack) {
  // NCHW <-> NHWC with 2-4 channels runs on (Load|Store)Interleaved; long enough for whole
  // vectors plus remainders, with both store modes.
  for (size_t elem : {1, 2, 4, 8}) {
    for (int64_t channels : {2, 3, 4}) {
      for (auto stores : {PlanOptions::Stores::kRegular, PlanOptions::Stores::kStreaming}) {
        Case to_last;
        to_last.shape = {2, channels, 9, 37};
        to_last.perm = {0, 2, 3, 1};
        to_last.elem = elem;
        to_last.options.stores = stores;
        CheckCase(to_last);
        Case to_first;
        to_first.shape = {2, 9, 37, channels};
        to_first.perm = {0, 3, 1, 2};
        to_first.elem = elem;
        to_first.options.stores = stores;
        CheckCase(to_first);
        if (HasFatalFailure()) return;
      }
    }
  }
}

// A layout checked against the reference with each store mode, on one and two threads (the
// latter into a destination `two_thread_dst_offset` bytes into a line), whole and in ranges of
// `range_bytes` (ExecuteRange).
struct Layout {
  std::vector<int64_t> shape, perm;
  size_t elem;
};

// The layout's plan with `options` exists and its description contains `text`.
void ExpectPlanDescribes(const Layout& l, const PlanOptions& options, std::string_view text) {
  auto plan = MakePlan(l.shape, l.perm, l.elem, options);
  ASSERT_TRUE(plan.has_value());
  ASSERT_NE(Describe(**plan).find(text), std::string::npos) << Describe(**plan);
}

void CheckEachStoreModeAndThreadCount(const Layout& l, size_t two_thread_dst_offset,
                                      size_t range_bytes) {
  for (auto stores : {PlanOptions::Stores::kRegular, PlanOptions::Stores::kStreaming}) {
    for (int threads : {1, 2}) {
      Case c;
      c.shape = l.shape;
      c.perm = l.perm;
      c.elem = l.elem;
      c.options.stores = stores;
      c.options.max_threads = threads;
      c.threads = threads;
      c.dst_offset = threads == 2 ? two_thread_dst_offset : 0;
      CheckCase(c);
      c.range_bytes = range_bytes;
      CheckCase(c);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

TEST_P(TransposeTargetTest, LoopsContinuingTheDestinationWalkedInnermost) {
  // Layouts whose kernel loops walk the dim continuing the destination runs innermost rather
  // than in source order (DestinationLoopDim): fused planes (f64 z04 reshaped so its rows leave
  // 1056 B runs, which take no third dim; c128; bf16) and de-interleaved columns (f64
  // whole-line runs, f32 16 B runs, i8 290 B runs), with each store mode, one and two threads, and
  // in ranges (ExecuteRange). The bf16 plane is sized so its source runs come back within half of a
  // 1 MiB L2 too (an AMD EPYC's; with 208 rows rather than 104 they would not, and source order
  // stays there).
  const std::vector<Layout> layouts = {
      {{2, 11, 7, 12, 52, 5}, {4, 2, 5, 0, 3, 1}, 8},
      {{4, 11, 5, 16, 50}, {4, 2, 1, 0, 3}, 16},
      {{5, 9, 11, 104, 53}, {4, 2, 1, 0, 3}, 2},
      {{96, 114, 8, 2}, {3, 1, 0, 2}, 8},
      {{2, 16, 16, 32, 4, 4}, {2, 3, 5, 0, 1, 4}, 4},
      {{5, 11, 80, 145, 2, 3}, {2, 5, 0, 1, 3, 4}, 1},
  };
  for (const Layout& l : layouts) {
    // Ordinary stores: whether the automatic choice streams these 1-6 MB outputs on one
    // thread is the machine's (Machine::one_thread_streaming_bytes), and whole-line runs keep
    // source order when they stream.
    PlanOptions one_thread;
    one_thread.max_threads = 1;
    one_thread.stores = PlanOptions::Stores::kRegular;
    auto plan = MakePlan(l.shape, l.perm, l.elem, one_thread);
    ASSERT_TRUE(plan.has_value());
    // With one-byte vectors nothing fuses, so the z04 plane's source runs are the shorter.
    if (GetParam() != HWY_SCALAR) {
      ASSERT_NE(Describe(**plan).find("innermost: it continues the plane's"), std::string::npos)
          << Describe(**plan);
    }
    CheckEachStoreModeAndThreadCount(l, 8, 100000 + 8 * l.elem);
    if (HasFatalFailure()) return;
  }
}

TEST_P(TransposeTargetTest, FusedRowsAcrossThreeDims) {
  // Layouts whose two innermost destination dims leave runs shorter than 1 KiB, so that a
  // third dim joins the fused rows on AVX-512 (Tile::rows3_dim): staged reversals (i8 4x16^5,
  // bf16 2x16^5, 4 MiB each) and ones walked in place (f64 z04 of the random benchmark list,
  // reversals of odd extents whose rows end part-way into a tile), with each store mode, one
  // and two threads (which cut the columns, or the rows by that third dim where the columns
  // cannot be cut: i8 4x16x128x64), misaligned outputs and in ranges.
  const std::vector<Layout> layouts = {
      {{4, 16, 16, 16, 16, 16}, {5, 4, 3, 2, 1, 0}, 1},
      {{2, 16, 16, 16, 16, 16}, {5, 4, 3, 2, 1, 0}, 2},
      {{15, 11, 13, 2, 26, 5}, {4, 2, 5, 0, 3, 1}, 8},
      {{5, 7, 9, 11, 13, 3}, {5, 4, 3, 2, 1, 0}, 1},
      {{3, 7, 9, 11, 13, 17}, {5, 4, 3, 2, 1, 0}, 2},
      {{4, 16, 128, 64}, {3, 2, 1, 0}, 1},
  };
  // i8 4x16^5's tiles read 64 source rows 1 MiB and 64 KiB apart, all in one L2 set: with
  // ordinary stores too, its staged walk copies them first (TileRowsOverfillAnL2Set).
  const bool avx3 = std::string_view(hwy::TargetName(GetParam())).starts_with("AVX3");
  if (avx3) {
    PlanOptions regular;
    regular.stores = PlanOptions::Stores::kRegular;
    ExpectPlanDescribes(layouts[0], regular, "lines in one set of the L2");
    // With cache-bypassing stores it copies them as every 1-byte staged plane does, and the
    // plan names that rule (Nest::source_copy).
    PlanOptions streaming;
    streaming.stores = PlanOptions::Stores::kStreaming;
    ExpectPlanDescribes(layouts[0], streaming, "in DRAM, a 1-byte tile loads 64 rows at once");
    // bf16 2x16^5's 32 tile rows share one set too: with cache-bypassing stores it copies them.
    ExpectPlanDescribes(layouts[1], streaming, "in DRAM, a tile's 32 source rows");
    if (HasFatalFailure()) return;
  }
  for (const Layout& l : layouts) {
    if (avx3) {  // 64-byte vectors
      ExpectPlanDescribes(l, PlanOptions{}, " B runs, where two dims left ");
      if (HasFatalFailure()) return;
    }
    CheckEachStoreModeAndThreadCount(l, 24, 300000 + 3 * l.elem);
    if (HasFatalFailure()) return;
  }
}

TEST_P(TransposeTargetTest, ZeroSizeAndScalarTensors) {
  for (const auto& shape : std::vector<std::vector<int64_t>>{{0}, {5, 0, 3}, {0, 0}, {}, {1}, {1, 1, 1}}) {
    std::vector<int64_t> perm(shape.size());
    std::iota(perm.begin(), perm.end(), 0);
    std::reverse(perm.begin(), perm.end());
    Case c;
    c.shape = shape;
    c.perm = perm;
    c.elem = 4;
    CheckCase(c);
    if (HasFatalFailure()) return;
  }
}

std::string TargetParamName(const ::testing::TestParamInfo<int64_t>& info) {
  return hwy::TargetName(info.param);
}

INSTANTIATE_TEST_SUITE_P(Targets, TransposeTargetTest,
                         ::testing::ValuesIn(kernels::CompiledTargets()), TargetParamName);

}  // namespace
}  // namespace iotx::test
