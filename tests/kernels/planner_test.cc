// The planner's stages, each alone, against values derived by hand from their definitions.
#include "kernels/planner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <utility>

#include "kernels/nest.h"
#include "kernels/problem.h"
#include "kernels/sbuf.h"

namespace iotx::kernels {
namespace {

// The folded problem of a tensor of `shape` (f32 unless `elem` says otherwise) with its axes
// reversed (16^4 `3,2,1,0`; a 2-D one is a transpose); an empty one, after a failed
// expectation, if MakeProblem refuses it.
Problem FoldedReversal(std::vector<int64_t> shape, size_t elem = 4) {
  std::vector<int64_t> perm(shape.size());
  std::iota(perm.rbegin(), perm.rend(), 0);
  auto p = MakeProblem(shape, perm, elem);
  EXPECT_TRUE(p.has_value());
  return p.has_value() ? Fold(*p) : Problem{};
}

// The folded problem of `shape` permuted by `perm`; an empty one, after a failed expectation,
// if MakeProblem refuses it.
Problem Folded(std::vector<int64_t> shape, std::vector<int64_t> perm, size_t elem) {
  auto p = MakeProblem(shape, perm, elem);
  EXPECT_TRUE(p.has_value());
  return p.has_value() ? Fold(*p) : Problem{};
}

TEST(MakeProblemTest, ListsDimsInDestinationOrderWithByteStrides) {
  // src [2,3,4] f32: strides 48, 16, 4 bytes. perm [2,0,1]: dst [4,2,3], strides 24, 12, 4.
  auto p = MakeProblem(std::vector<int64_t>{2, 3, 4}, std::vector<int64_t>{2, 0, 1}, 4);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->elem_bytes, 4);
  EXPECT_FALSE(p->empty);
  ASSERT_EQ(p->dims.size(), 3u);
  EXPECT_EQ(p->dims[0], (Dim{4, 4, 24}));
  EXPECT_EQ(p->dims[1], (Dim{2, 48, 12}));
  EXPECT_EQ(p->dims[2], (Dim{3, 16, 4}));
  EXPECT_EQ(ProblemBytes(*p), 96);
  EXPECT_EQ(SourceInnerDim(*p), 0);
}

TEST(MakeProblemTest, RejectsBadInput) {
  using V = std::vector<int64_t>;
  EXPECT_EQ(MakeProblem(V{2, 3}, V{0, 0}, 4).error().code, ErrorCode::kNotPermutation);
  EXPECT_EQ(MakeProblem(V{2, 3}, V{0, 2}, 4).error().code, ErrorCode::kNotPermutation);
  EXPECT_EQ(MakeProblem(V{2, 3}, V{0}, 4).error().code, ErrorCode::kNotPermutation);
  EXPECT_EQ(MakeProblem(V{2, -3}, V{1, 0}, 4).error().code, ErrorCode::kNegativeDim);
  EXPECT_EQ(MakeProblem(V{int64_t{1} << 40, int64_t{1} << 30}, V{1, 0}, 4).error().code,
            ErrorCode::kDimOverflow);
  // Sizes past 2^62 bytes, zero extents left out as numpy counts them (the planner's
  // roundings overflowed int64 at 2^63 - 1 and printed negative item counts).
  EXPECT_EQ(MakeProblem(V{1, std::numeric_limits<int64_t>::max()}, V{0, 1}, 1).error().code,
            ErrorCode::kDimOverflow);
  EXPECT_EQ(MakeProblem(V{0, int64_t{1} << 61}, V{1, 0}, 4).error().code, ErrorCode::kDimOverflow);
  EXPECT_TRUE(MakeProblem(V{0, int64_t{1} << 60}, V{1, 0}, 4).has_value());
  EXPECT_TRUE(MakeProblem(V{int64_t{1} << 62}, V{0}, 1).has_value());
  EXPECT_EQ(MakeProblem(V{2, 3}, V{1, 0}, 0).error().code, ErrorCode::kInvalidArgument);
  const V big_shape(kMaxRank + 1, 1);
  V big_perm(kMaxRank + 1);
  std::iota(big_perm.begin(), big_perm.end(), 0);
  EXPECT_EQ(MakeProblem(big_shape, big_perm, 4).error().code, ErrorCode::kUnsupported);
}

TEST(MakeProblemTest, ZeroExtentMakesAnEmptyProblem) {
  auto p = MakeProblem(std::vector<int64_t>{4, 0, 2}, std::vector<int64_t>{2, 1, 0}, 2);
  ASSERT_TRUE(p.has_value());
  EXPECT_TRUE(p->empty);
  EXPECT_EQ(ProblemBytes(*p), 0);
}

TEST(FoldStagesTest, DropUnitDimsRemovesOnlyExtentOne) {
  Problem p{{{1, 8, 8}, {5, 4, 4}, {1, 4, 20}}, 4, false};
  EXPECT_EQ(DropUnitDims(p).dims, (std::vector<Dim>{{5, 4, 4}}));
}

TEST(FoldStagesTest, FuseContiguousMergesNeighboursAdjacentOnBothSides) {
  // [n=2 src=12 dst=12][n=3 src=4 dst=4]: 12 = 3*4 on both sides -> one dim of 6.
  Problem fusable{{{2, 12, 12}, {3, 4, 4}}, 4, false};
  EXPECT_EQ(FuseContiguous(fusable).dims, (std::vector<Dim>{{6, 4, 4}}));
  // A transpose: the source side is not adjacent.
  Problem moved{{{3, 4, 8}, {2, 12, 4}}, 4, false};
  EXPECT_EQ(FuseContiguous(moved).dims, moved.dims);
}

TEST(FoldStagesTest, WidenElementFoldsAnUnmovedInnermostDim) {
  // The innermost dim (n=16) is contiguous and innermost on both sides: 16 f32 -> 64 B.
  Problem p{{{8, 64, 1024}, {8, 4096, 64}, {16, 4, 4}}, 4, false};
  const Problem w = WidenElement(p);
  EXPECT_EQ(w.elem_bytes, 64);
  EXPECT_EQ(w.dims, (std::vector<Dim>{{8, 64, 1024}, {8, 4096, 64}}));
  // A moved innermost dim stays.
  Problem t{{{3, 4, 8}, {2, 12, 4}}, 4, false};
  EXPECT_EQ(WidenElement(t), t);
}

TEST(FoldStagesTest, IdentityFoldsToOneContiguousBlock) {
  auto p = MakeProblem(std::vector<int64_t>{3, 1, 5, 7}, std::vector<int64_t>{0, 1, 2, 3}, 2);
  ASSERT_TRUE(p.has_value());
  const Problem f = Fold(*p);
  EXPECT_TRUE(f.dims.empty());
  EXPECT_EQ(f.elem_bytes, 3 * 5 * 7 * 2);
}

TEST(FoldStagesTest, ReshapeExampleFoldsToFourDims) {
  // [3,16,128,2,2,64] f32, perm [0,4,5,3,1,2]. Source strides in elements: 524288, 32768,
  // 256, 128, 64, 1. Axes (4,5) stay adjacent (64 = 64*1) and so do (1,2) (32768 = 128*256).
  auto p = MakeProblem(std::vector<int64_t>{3, 16, 128, 2, 2, 64},
                       std::vector<int64_t>{0, 4, 5, 3, 1, 2}, 4);
  ASSERT_TRUE(p.has_value());
  const Problem f = Fold(*p);
  EXPECT_EQ(f.elem_bytes, 4);
  // Destination [3, 128, 2, 2048], strides 2 MiB, 16 KiB, 8 KiB, 4 bytes.
  ASSERT_EQ(f.dims.size(), 4u);
  EXPECT_EQ(f.dims[0], (Dim{3, 16 * 128 * 256 * 4, 16 * 128 * 256 * 4}));
  EXPECT_EQ(f.dims[1], (Dim{128, 4, 2 * 2048 * 4}));
  EXPECT_EQ(f.dims[2], (Dim{2, 128 * 4, 2048 * 4}));
  EXPECT_EQ(f.dims[3], (Dim{2048, 256 * 4, 4}));
}

// A machine with round numbers, so expected values follow from the definitions by hand:
// 48 KiB 12-way L1 (64 sets), 1 MiB L2, 64-byte vectors.
Machine TestMachine() {
  Machine m;
  m.l1d_bytes = 48 * 1024;
  m.l1d_ways = 12;
  m.l2_bytes = 1 << 20;
  m.vector_bytes = 64;
  m.target = "AVX3";
  m.streaming_bytes = 32 << 20;
  return m;
}

TEST(ChooseStrategyTest, TriesTheCandidatesInOrder) {
  const auto list = StrategyCandidates();
  ASSERT_EQ(list.size(), 7u);
  EXPECT_EQ(list[0].strategy, Strategy::kCopy);
  EXPECT_EQ(list[1].strategy, Strategy::kRowCopy);
  EXPECT_EQ(list[2].strategy, Strategy::kInterleaveRows);
  EXPECT_EQ(list[3].strategy, Strategy::kDeinterleaveCols);
  EXPECT_EQ(list[4].strategy, Strategy::kFusedTiles);
  EXPECT_EQ(list[5].strategy, Strategy::kStagedTiles);
  EXPECT_EQ(list[6].strategy, Strategy::kTiles);

  const Machine m = TestMachine();
  EXPECT_EQ(ChooseStrategy(Problem{{}, 96, false}, m).strategy, Strategy::kCopy);
  // 3 x 2 f32 -> rows n=2 whose columns are consecutive in dst (8 = 2 * 4): interleave.
  EXPECT_EQ(ChooseStrategy(Problem{{{3, 4, 8}, {2, 12, 4}}, 4, false}, m).strategy,
            Strategy::kInterleaveRows);
  // 3 columns of a contiguous source (rows 12 bytes apart): de-interleave.
  EXPECT_EQ(ChooseStrategy(Problem{{{3, 4, 4000}, {1000, 12, 4}}, 4, false}, m).strategy,
            Strategy::kDeinterleaveCols);
  EXPECT_EQ(ChooseStrategy(Problem{{{3, 64, 128}, {2, 192, 64}}, 64, false}, m).strategy,
            Strategy::kRowCopy);
  EXPECT_EQ(ChooseStrategy(Problem{{{3, 12, 24}, {2, 36, 12}}, 12, false}, m).strategy,
            Strategy::kRowCopy);
  // 1000 x 1000 f32: rows 4000 bytes apart (not line-aligned): tiles in place.
  EXPECT_EQ(ChooseStrategy(Problem{{{1000, 4, 4000}, {1000, 4000, 4}}, 4, false}, m).strategy,
            Strategy::kTiles);
  // 1024 x 1024 f32: 4 KiB strides put a tile's 16 lines in one of 64 sets: staged.
  EXPECT_EQ(ChooseStrategy(Problem{{{1024, 4, 4096}, {1024, 4096, 4}}, 4, false}, m).strategy,
            Strategy::kStagedTiles);
  // 768 x 768 f32: 3 KiB strides reach 4 sets (48 lines) for a tile's 16: in place.
  EXPECT_EQ(ChooseStrategy(Problem{{{768, 4, 3072}, {768, 3072, 4}}, 4, false}, m).strategy,
            Strategy::kTiles);
  // 16^4 f32 reversed: 16 x 16 planes; dim 1 continues the columns in the source (64 = 16 *
  // 4), dim 2 the rows in the destination: fused.
  EXPECT_EQ(ChooseStrategy(FoldedReversal({16, 16, 16, 16}), m).strategy, Strategy::kFusedTiles);
  // 28-row planes do not divide the 16-row tile: fused all the same (784 x 784, the kernel
  // computes offsets per strip and band, the last partial tiles take the edge path).
  EXPECT_EQ(ChooseStrategy(FoldedReversal({28, 28, 28}), m).strategy, Strategy::kFusedTiles);
  // A plane of 2 x 3 with nothing continuing it on either side: not fused.
  const Problem lone = FoldedReversal({3, 2});
  ASSERT_FALSE(lone.dims.empty());
  EXPECT_NE(ChooseStrategy(lone, m).strategy, Strategy::kFusedTiles);
}

TEST(ChooseTileTest, InterleavingPlanesTakeTheVectorTheirExtentFills) {
  // The columns interleaved (rows de-interleaved) fill the vector the plane runs on: 64 bytes
  // where they reach it, narrower ones below, 16 bytes at least (the edge path takes the rest).
  const Machine m = TestMachine();
  ASSERT_EQ(m.vector_bytes, 64);
  const auto vector_of = [&](const Problem& p, Strategy s) {
    EXPECT_EQ(ChooseStrategy(p, m).strategy, s);
    return ChooseTile(p, s, m).vector_bytes;
  };
  // f32 3 x 15 `1,0`: 3 rows x 15 columns (60 bytes), 3 x 5 (20 bytes), 3 x 16 (64 bytes).
  EXPECT_EQ(vector_of(Folded({3, 15}, {1, 0}, 4), Strategy::kInterleaveRows), 32);
  EXPECT_EQ(vector_of(Folded({3, 5}, {1, 0}, 4), Strategy::kInterleaveRows), 16);
  EXPECT_EQ(vector_of(Folded({3, 16}, {1, 0}, 4), Strategy::kInterleaveRows), 64);
  // f32 3 x 21 x 465 x 3 `2,1,3,0`: 3 columns (12 bytes, not one vector), continued in the
  // source by the 465-dim: joined into 1395 columns, which fill the widest vector.
  for (int64_t cols : {2, 3}) {
    const Problem joined = Folded({3, 21, 465, cols}, {2, 1, 3, 0}, 4);
    EXPECT_EQ(vector_of(joined, Strategy::kInterleaveRows), 64);
    const Tile tile = ChooseTile(joined, Strategy::kInterleaveRows, m);
    ASSERT_GE(tile.cols2_dim, 0);
    EXPECT_EQ(joined.dims[static_cast<size_t>(tile.cols2_dim)].n, 465);
    EXPECT_EQ(joined.dims[static_cast<size_t>(tile.cols2_dim)].src_stride, cols * 4);
  }
  // 4 columns fill a 16-byte vector alone: nothing joined.
  const Problem apart = Folded({3, 21, 465, 4}, {2, 1, 3, 0}, 4);
  EXPECT_EQ(vector_of(apart, Strategy::kInterleaveRows), 16);
  EXPECT_LT(ChooseTile(apart, Strategy::kInterleaveRows, m).cols2_dim, 0);
  // bf16 32 x 4 x 64 x 16 x 4 `1,2,0,4,3`: 16 rows (32 bytes) x 4 columns.
  EXPECT_EQ(vector_of(Folded({32, 4, 64, 16, 4}, {1, 2, 0, 4, 3}, 2), Strategy::kDeinterleaveCols),
            32);
  EXPECT_EQ(vector_of(Folded({1000, 3}, {1, 0}, 2), Strategy::kDeinterleaveCols), 64);
  EXPECT_EQ(vector_of(Folded({7, 3}, {1, 0}, 1), Strategy::kDeinterleaveCols), 16);
  // i8 100 x 7 x 3 `0,2,1`: 7 rows (7 bytes), continued in the source by the 100-dim (21 B
  // apart): joined into 700 rows, which fill the widest vector.
  const Problem rows_joined = Folded({100, 7, 3}, {0, 2, 1}, 1);
  EXPECT_EQ(vector_of(rows_joined, Strategy::kDeinterleaveCols), 64);
  const Tile rows_tile = ChooseTile(rows_joined, Strategy::kDeinterleaveCols, m);
  ASSERT_GE(rows_tile.rows2_dim, 0);
  EXPECT_EQ(rows_joined.dims[static_cast<size_t>(rows_tile.rows2_dim)].n, 100);
}

TEST(ChooseTileTest, FusionPicksTheSideWithTheMostElementsPerTile) {
  // i8 801x72x387x7 `3,2,0,1` (bench z11): 7 source-innermost columns continued in the source
  // by the 387-dim (stride 7): columns 2709, rows 57672 (not short): columns fused only.
  auto p = MakeProblem(std::vector<int64_t>{801, 72, 387, 7}, std::vector<int64_t>{3, 2, 0, 1}, 1);
  ASSERT_TRUE(p.has_value());
  const Problem f = Fold(*p);
  const Machine m = TestMachine();
  ASSERT_EQ(ChooseStrategy(f, m).strategy, Strategy::kFusedTiles);
  const Tile tile = ChooseTile(f, Strategy::kFusedTiles, m);
  EXPECT_LT(tile.rows2_dim, 0);
  ASSERT_GE(tile.cols2_dim, 0);
  EXPECT_EQ(f.dims[static_cast<size_t>(tile.cols2_dim)].n, 387);
  // Two threads: the long rows are cut into blocks (whole source rows per item).
  const DriverSplit split = SplitDriver(f, tile, PartitionUnit{}, 32, 2);
  EXPECT_EQ(split.blocked_dim, tile.rows_dim);
  const Nest nest = BuildNest(f, Strategy::kFusedTiles, tile, split, false);
  EXPECT_EQ(nest.blocked, Blocked::kRows);
  EXPECT_EQ(nest.cols, 2709);
  EXPECT_EQ(nest.cols_inner, 7);
}

// The nest of a split that cut fused rows by their outer dim: blocks of rows, each `run_rows`
// (the inner dims' rows) times the split's block, out of `rows`.
void ExpectRowsCutInWholeRuns(const Problem& p, const Tile& tile, const DriverSplit& split,
                              int64_t run_rows, int64_t rows) {
  const Nest nest = BuildNest(p, Strategy::kFusedTiles, tile, split, false);
  EXPECT_EQ(nest.blocked, Blocked::kRows);
  EXPECT_EQ(nest.block, split.block * run_rows);
  EXPECT_EQ(nest.blocked_full, rows);
}

TEST(SplitDriverTest, FusedRowsAreCutBetweenWholeInnerRuns) {
  // f32 16^4 reversed: rows 16 x 16 fused; a driver cutting the fused rows blocks their
  // outer dim, so a block is a whole number of 16-row runs and the kernel sees block * 16 rows.
  const Problem p = FoldedReversal({16, 16, 16, 16});
  const Tile tile = ChooseTile(p, Strategy::kFusedTiles, TestMachine());
  ASSERT_EQ(tile.rows2_dim, 2);
  // All four dims belong to the plane: the fused rows' outer dim is the one to cut.
  const DriverSplit split = SplitDriver(p, tile, PartitionUnit{}, 64, 2);
  ASSERT_EQ(split.blocked_dim, tile.rows2_dim);
  ExpectRowsCutInWholeRuns(p, tile, split, 16, 256);
  EXPECT_GE(split.items, 2);
}

TEST(SplitDriverTest, RowsThatShareLinesAcrossBlocksAreCutLast) {
  // bf16 725x548x125 `2,1,0` streamed: 725 rows (1450 B of each destination row) staged with
  // the rows' lines shared across blocks. Cut for 2 threads, the columns' outer dim is cut,
  // not the rows; 57672 rows of i8 (801x72x387x7 `3,2,0,1`) are long enough to cut.
  const Machine m = TestMachine();
  const Problem short_rows = Folded({725, 548, 125}, {2, 1, 0}, 2);
  ASSERT_EQ(ChooseStrategy(short_rows, m, true).strategy, Strategy::kFusedTiles);
  const Tile tile = ChooseTile(short_rows, Strategy::kFusedTiles, m, true);
  ASSERT_TRUE(tile.rows_share_lines);
  const DriverSplit split = SplitDriver(short_rows, tile, PartitionUnit{}, 32, 2);
  EXPECT_GE(split.items, 2);
  EXPECT_NE(split.blocked_dim, tile.rows_dim);
  EXPECT_EQ(split.blocked_dim, tile.cols2_dim);
  // The same walk, were its blocks' lines their own, would cut the rows.
  Tile unshared = tile;
  unshared.rows_share_lines = false;
  EXPECT_EQ(SplitDriver(short_rows, unshared, PartitionUnit{}, 32, 2).blocked_dim, tile.rows_dim);
  const Problem long_rows = Folded({801, 72, 387, 7}, {3, 2, 0, 1}, 1);
  const Tile long_tile = ChooseTile(long_rows, Strategy::kFusedTiles, m, true);
  ASSERT_TRUE(long_tile.rows_share_lines);
  EXPECT_EQ(SplitDriver(long_rows, long_tile, PartitionUnit{}, 32, 2).blocked_dim,
            long_tile.rows_dim);
}

TEST(SplitDriverTest, SharesAreNotCutWhereShortDestinationRunsShareALine) {
  // f64 15x11x13x12x26x5 `4,2,5,0,3,1` (bench z04 with its 2-dim at 12, so that its fused
  // rows, 11 x 12, leave 1056 B runs and take no third dim): in source order the threads' shares
  // fall on the 15-dim, 1056 B apart in the destination: every 15840 B run of the output holds
  // a line both threads write. The dims go in destination order instead: the 13-dim (79200 B
  // apart) is cut first. One thread's plan, and runs of a 256th of the output or longer, keep
  // source order.
  const Machine m = TestMachine();
  const Problem z04 = Folded({15, 11, 13, 12, 26, 5}, {4, 2, 5, 0, 3, 1}, 8);
  const Strategy strategy = ChooseStrategy(z04, m, false, 2).strategy;
  const Tile tile = ChooseTile(z04, strategy, m, false);
  ASSERT_EQ(tile.rows3_dim, -1);
  const DriverSplit split = SplitDriver(z04, tile, PartitionUnit{}, 32, 2);
  ASSERT_GE(split.driver.size(), 1u);
  EXPECT_TRUE(split.dst_order);
  EXPECT_EQ(split.driver.front().dst_stride, 79200);
  const DriverSplit by_source = SplitDriver(z04, tile, PartitionUnit{}, 32, 1);
  EXPECT_FALSE(by_source.dst_order);
  // f64 38x96x2x30x7 `2,1,4,3,0`: cut on the 96-dim, 63840 B apart (not whole lines) in runs
  // of 6 MB: source order.
  const Problem long_runs = Folded({38, 96, 2, 30, 7}, {2, 1, 4, 3, 0}, 8);
  const Strategy long_strategy = ChooseStrategy(long_runs, m, false, 2).strategy;
  const DriverSplit long_split = SplitDriver(
      long_runs, ChooseTile(long_runs, long_strategy, m, false), PartitionUnit{}, 32, 2);
  ASSERT_GE(long_split.driver.size(), 1u);
  EXPECT_FALSE(long_split.dst_order);
  EXPECT_EQ(long_split.driver.front().dst_stride, 63840);
}

TEST(SplitDriverTest, FusedPlanesAreCutOnPartitionTilesToo) {
  // f32 256^3 reversed: the output's dim 0 (256 rows, two partition tiles of 128) is the
  // plane's column dim, its rows are fused. Cutting those columns keeps every item a
  // contiguous output range; the fused rows stay whole.
  const Problem p = FoldedReversal({256, 256, 256});
  const Tile tile = ChooseTile(p, Strategy::kFusedTiles, TestMachine());
  ASSERT_EQ(tile.cols_dim, 0);
  ASSERT_EQ(tile.cols2_dim, -1);
  ASSERT_GE(tile.rows2_dim, 0);
  const DriverSplit split = SplitDriver(p, tile, FindPartitionUnit(p, 256, 128), 32, 2);
  EXPECT_TRUE(split.dst_prefix);
  EXPECT_EQ(split.blocked_dim, 0);
  EXPECT_EQ(split.block % 128, 0);
  EXPECT_EQ(split.items, 2);
  EXPECT_EQ(split.align_items, 1);
  const Nest nest = BuildNest(p, Strategy::kFusedTiles, tile, split, false);
  EXPECT_EQ(nest.blocked, Blocked::kCols);
  EXPECT_EQ(nest.blocked_full, 256);
}

TEST(SplitDriverTest, FusedRowsStayWholeWhenTheLoopsGiveTheItems) {
  // f32 16^6 reversed: rows 16 x 16 and columns 16 x 16 fused, two dims left to the kernel's
  // loops. Threads take whole planes (the loop dims) before cutting the fused rows, whose
  // blocks would halve every destination run.
  const Problem p = FoldedReversal({16, 16, 16, 16, 16, 16});
  const Tile tile = ChooseTile(p, Strategy::kFusedTiles, TestMachine());
  ASSERT_GE(tile.rows2_dim, 0);
  const DriverSplit split = SplitDriver(p, tile, PartitionUnit{}, 32, 2);
  EXPECT_NE(split.blocked_dim, tile.rows2_dim);
  EXPECT_NE(split.blocked_dim, tile.rows_dim);
  ASSERT_FALSE(split.whole.empty());
  for (int i : split.whole) {
    EXPECT_TRUE(i != tile.rows_dim && i != tile.cols_dim && i != tile.rows2_dim &&
                i != tile.cols2_dim)
        << "dim " << i << " of the plane taken whole";
  }
  EXPECT_GE(split.items, 16);
}

TEST(ChooseTileTest, FusedPlanesJoinTheNeighbouringDims) {
  const Problem p = FoldedReversal({16, 16, 16, 16});  // destination order: src dims 3, 2, 1, 0
  ASSERT_EQ(p.dims.size(), 4u);
  const Tile tile = ChooseTile(p, Strategy::kFusedTiles, TestMachine());
  EXPECT_EQ(tile.rows_dim, 3);
  EXPECT_EQ(tile.cols_dim, 0);
  EXPECT_EQ(tile.rows2_dim, 2);  // dst stride 64 = 16 rows of 4 bytes
  EXPECT_EQ(tile.cols2_dim, 1);  // src stride 64 = 16 columns of 4 bytes
  const Nest nest = BuildNest(p, Strategy::kFusedTiles, tile, DriverSplit{}, false);
  EXPECT_EQ(nest.rows, 256);
  EXPECT_EQ(nest.cols, 256);
  EXPECT_EQ(nest.rows_inner, 16);
  EXPECT_EQ(nest.src_outer_row_stride, 16 * 16 * 4);  // source dim 1
  EXPECT_EQ(nest.cols_inner, 16);
  EXPECT_EQ(nest.dst_outer_col_stride, 16 * 16 * 4);  // destination dim 1
  EXPECT_EQ(nest.loop_rank, 0);
}

TEST(ChooseTileTest, ShortFusedRowsTakeAThirdDim) {
  // i8 4x16^5 reversed: rows 4 x 16 leave 64 B destination runs, and the dim continuing them
  // (destination stride 64, source stride 4096) joins as a third: 1024 rows, 1 KiB runs.
  const Problem p = FoldedReversal({4, 16, 16, 16, 16, 16}, 1);
  ASSERT_EQ(p.dims.size(), 6u);
  const Machine m = TestMachine();
  ASSERT_EQ(ChooseStrategy(p, m).strategy, Strategy::kFusedTiles);
  const Tile tile = ChooseTile(p, Strategy::kFusedTiles, m);
  EXPECT_EQ(tile.rows_dim, 5);   // n = 4, source stride 1 MiB
  EXPECT_EQ(tile.rows2_dim, 4);  // destination stride 4
  EXPECT_EQ(tile.rows3_dim, 3);  // destination stride 64
  EXPECT_EQ(tile.OuterRowsDim(), 3);
  EXPECT_TRUE(tile.InPlane(3));
  EXPECT_EQ(FusedRows(p, tile), 1024);
  EXPECT_EQ(PlaneRunBytes(p, tile, /*destination=*/true), 1024);
  const Nest nest = BuildNest(p, Strategy::kFusedTiles, tile, DriverSplit{}, false);
  EXPECT_EQ(nest.rows, 1024);
  EXPECT_EQ(nest.rows_inner, 4);
  EXPECT_EQ(nest.src_row_stride, 1 << 20);
  EXPECT_EQ(nest.rows_mid, 16);
  EXPECT_EQ(nest.src_outer_row_stride, 1 << 16);
  EXPECT_EQ(nest.src_outer2_row_stride, 1 << 12);
  EXPECT_EQ(nest.cols, 256);
  EXPECT_EQ(nest.loop_rank, 1);  // the remaining dim (source stride 256)

  // Cut for threads, the rows, whose runs the third dim is for, come after the columns; here
  // the remaining dim is taken whole (16 items, an even share each), and the columns (256 B of
  // each source row, under the 2 KiB a column block keeps) are not cut below that least block,
  // as a dim with fewer items than threads would be: the rows are, by their outermost dim.
  const DriverSplit split = SplitDriver(p, tile, PartitionUnit{}, 32, 2);
  EXPECT_EQ(split.blocked_dim, tile.rows3_dim);
  EXPECT_EQ(split.items, 32);
  ExpectRowsCutInWholeRuns(p, tile, split, 64, 1024);

  // i8 16^7 reversed (bench t2): rows 16 x 16 leave 256 B runs, so the third dim joins them
  // too: 4096 rows, 4 KiB runs, each plane's blocks continuing the last's destination runs.
  const Problem t2 = FoldedReversal({16, 16, 16, 16, 16, 16, 16}, 1);
  const Tile t2_tile = ChooseTile(t2, Strategy::kFusedTiles, m);
  ASSERT_GE(t2_tile.rows3_dim, 0);
  EXPECT_EQ(FusedRows(t2, t2_tile), 4096);
  EXPECT_EQ(PlaneRunBytes(t2, t2_tile, /*destination=*/true), 4096);

  // i8 4x16x128x64 reversed: rows 4 x 16 x 128 (8 KiB runs), columns 64 and nothing that
  // continues them (the 128-dim does, but joins the rows, where it gives as many full tiles
  // and the rows come first), too few to cut: the rows are blocked by their outermost dim, in
  // whole runs of the two inner ones (64 rows), and the kernel sees block * 64 rows.
  const Problem q = FoldedReversal({4, 16, 128, 64}, 1);
  const Tile q_tile = ChooseTile(q, Strategy::kFusedTiles, m);
  ASSERT_GE(q_tile.rows3_dim, 0);
  EXPECT_EQ(q.dims[static_cast<size_t>(q_tile.rows3_dim)].n, 128);
  EXPECT_EQ(q_tile.cols2_dim, -1);
  const DriverSplit q_split = SplitDriver(q, q_tile, PartitionUnit{}, 8, 2);
  ASSERT_EQ(q_split.blocked_dim, q_tile.rows3_dim);
  ExpectRowsCutInWholeRuns(q, q_tile, q_split, 64, 8192);
}

TEST(SplitDriverTest, RowsAcrossThreeDimsAreCutAfterColumnsThatBalance) {
  const Machine m = TestMachine();
  // f64 15x11x13x2x26x5 `4,2,5,0,3,1` (bench z04): rows 11 x 2 x 15 (the 15-dim joins as a
  // third), columns 5 x 26. Two threads cut the columns' 26-dim, as even as the rows' 15-dim
  // would be, and the runs the third dim joined for stay whole.
  const Problem z04 = Folded({15, 11, 13, 2, 26, 5}, {4, 2, 5, 0, 3, 1}, 8);
  const Tile z04_tile = ChooseTile(z04, ChooseStrategy(z04, m, false, 2).strategy, m, false);
  ASSERT_GE(z04_tile.rows3_dim, 0);
  ASSERT_GE(z04_tile.cols2_dim, 0);
  EXPECT_EQ(SplitDriver(z04, z04_tile, PartitionUnit{}, 32, 2).blocked_dim, z04_tile.cols2_dim);
  // i8 24^5 reversed: rows 24 x 24 x 24, columns 24 x 24, nothing outside the plane. The
  // columns' outer 24-dim can only be cut in blocks of 8 (a 64-column tile over 24-column
  // runs), so 16 + 8 or 8 + 8 + 8 for two threads, one doing two thirds; the rows' third dim in
  // blocks of 1 shares evenly, and it is cut instead.
  const Problem cube = FoldedReversal({24, 24, 24, 24, 24}, 1);
  const Tile cube_tile = ChooseTile(cube, Strategy::kFusedTiles, m);
  ASSERT_GE(cube_tile.rows3_dim, 0);
  const DriverSplit split = SplitDriver(cube, cube_tile, PartitionUnit{}, 32, 2);
  EXPECT_EQ(split.blocked_dim, cube_tile.rows3_dim);
  EXPECT_GE(split.items, 2);
  EXPECT_EQ(split.items % 2, 0);
}

TEST(ChooseTileTest, FusedRowsOfLongRunsTakeNoThirdDim) {
  // f32 16^5 reversed: rows 16 x 16 already leave 1 KiB runs; i8 32^4 reversed, rows 32 x 32,
  // 1 KiB too.
  const Machine m = TestMachine();
  for (const auto& [shape, elem] : {std::pair{std::vector<int64_t>{16, 16, 16, 16, 16}, size_t{4}},
                                    std::pair{std::vector<int64_t>{32, 32, 32, 32}, size_t{1}}}) {
    const Problem p = FoldedReversal(shape, elem);
    ASSERT_EQ(ChooseStrategy(p, m).strategy, Strategy::kFusedTiles);
    const Tile tile = ChooseTile(p, Strategy::kFusedTiles, m);
    EXPECT_GE(tile.rows2_dim, 0);
    EXPECT_EQ(tile.rows3_dim, -1) << shape.size() << " dims of " << elem << " B";
    EXPECT_EQ(BuildNest(p, Strategy::kFusedTiles, tile, DriverSplit{}, false).rows_mid, 0);
  }
}

TEST(ChooseStrategyTest, TileWidthsAreTheListedOnes) {
  for (int64_t w : {1, 2, 4, 8, 16}) EXPECT_TRUE(IsTileWidth(w)) << w;
  for (int64_t w : {3, 6, 12, 32, 64}) EXPECT_FALSE(IsTileWidth(w)) << w;
}

TEST(StrideAliasesTest, CountsTheSetsLinesFallIn) {
  const Machine m = TestMachine();  // 64 sets of 12 ways
  EXPECT_TRUE(StrideAliases(4096, 16, m));   // 1 set
  EXPECT_TRUE(StrideAliases(2048, 64, m));   // 2 sets, 24 ways < 128
  EXPECT_FALSE(StrideAliases(3072, 16, m));  // 4 sets, 48 ways >= 32
  EXPECT_FALSE(StrideAliases(4000, 16, m));  // not line-aligned
  EXPECT_FALSE(StrideAliases(64 * 17, 16, m));  // odd line stride: all 64 sets
}

TEST(ChooseTileTest, RowsAreDestinationInnermostColumnsSourceInnermost) {
  // [n=128 src=4 dst=8192][n=2048 src=512 dst=4]
  Problem p{{{128, 4, 8192}, {2048, 512, 4}}, 4, false};
  const Machine m = TestMachine();
  const Tile tile = ChooseTile(p, Strategy::kTiles, m);
  EXPECT_EQ(tile.rows_dim, 1);
  EXPECT_EQ(tile.cols_dim, 0);
  EXPECT_EQ(tile.tile_rows, 16);  // 64 bytes of f32
  EXPECT_EQ(tile.tile_cols, 16);  // one 64-byte vector
  EXPECT_EQ(tile.vector_bytes, 64);
  // L1d / (2 x 64) = 384 rows, a multiple of 16.
  EXPECT_EQ(tile.strip_rows, 384);
  EXPECT_EQ(tile.row_granule, 384);
  EXPECT_EQ(tile.col_granule, 32);
}

TEST(ChooseTileTest, NarrowPlanesUseNarrowerVectors) {
  // 12 columns of f32 (48 bytes) fill a 32-byte vector but not a 64-byte one.
  Problem p{{{12, 4, 4096}, {1024, 48, 4}}, 4, false};
  const Tile tile = ChooseTile(p, Strategy::kTiles, TestMachine());
  EXPECT_EQ(tile.vector_bytes, 32);
  EXPECT_EQ(tile.tile_cols, 8);
}

TEST(ChooseTileTest, StagedBlocksFitTheBudget) {
  Problem p{{{1024, 4, 4096}, {1024, 4096, 4}}, 4, false};
  const Tile tile = ChooseTile(p, Strategy::kStagedTiles, TestMachine());
  // L2 / 8 = 128 KiB; rows = sqrt(128 KiB / 8) = 128 (a multiple of 16); destination rows
  // 128 * 4 + 64 = 576 bytes apart (9 lines, odd); 128 KiB / 576 = 227 -> 224 columns.
  EXPECT_EQ(tile.strip_rows, 128);
  EXPECT_EQ(tile.stage_pitch, 576);
  EXPECT_EQ(tile.block_cols, 224);
  EXPECT_LE(tile.block_cols * tile.stage_pitch, kMaxStageBytes);
}

TEST(ChooseTileTest, RecordsWhetherTheSourceRowsAlias) {
  // The tile rows' source stride alone decides (StrideAliases over one tile's rows): f32 rows
  // 4 KiB apart fall in one L1 set, 4160 B apart (65 lines) in all 64; the destination's
  // stride does not enter. Fused planes keep their own walk and never set it.
  const Machine m = TestMachine();
  const Problem src_alias{{{1024, 4, 4160}, {1040, 4096, 4}}, 4, false};
  const Problem dst_alias{{{1040, 4, 4096}, {1024, 4160, 4}}, 4, false};
  for (bool streaming : {false, true}) {
    EXPECT_TRUE(ChooseTile(src_alias, Strategy::kTiles, m, streaming).src_rows_alias);
    EXPECT_TRUE(ChooseTile(src_alias, Strategy::kStagedTiles, m, streaming).src_rows_alias);
    EXPECT_FALSE(ChooseTile(dst_alias, Strategy::kTiles, m, streaming).src_rows_alias);
    EXPECT_FALSE(ChooseTile(dst_alias, Strategy::kStagedTiles, m, streaming).src_rows_alias);
  }
  // i8 rows 8 KiB apart (h1): one set for the tile's 64 rows.
  const Problem bytes{{{8192, 1, 16384}, {16384, 8192, 1}}, 1, false};
  EXPECT_TRUE(ChooseTile(bytes, Strategy::kTiles, m, true).src_rows_alias);
  const Problem f = FoldedReversal({16, 16, 16, 16});
  EXPECT_FALSE(ChooseTile(f, Strategy::kFusedTiles, m, true).src_rows_alias);
}

TEST(ChooseStrategyTest, StagesAliasingStridesOnlyWithOrdinaryStores) {
  // 1024 x 1024 f32: rows 4 KiB apart alias in L1. With ordinary stores (a cache-resident
  // output) the tiles go through a stage; cache-bypassing stores never allocate in L1, and
  // then the band walk in place (which prefetches the next band in DRAM) is the faster one.
  const Machine m = TestMachine();
  const Problem p{{{1024, 4, 4096}, {1024, 4096, 4}}, 4, false};
  EXPECT_EQ(ChooseStrategy(p, m, false).strategy, Strategy::kStagedTiles);
  EXPECT_EQ(ChooseStrategy(p, m, true).strategy, Strategy::kTiles);
  const Tile in_place = ChooseTile(p, Strategy::kTiles, m, true);
  EXPECT_EQ(in_place.stage_pitch, 0);
  // A fused plane still stages its aliasing runs either way (16^4 reversed: 256 x 256).
  const Problem f = FoldedReversal({16, 16, 16, 16});
  ASSERT_EQ(ChooseStrategy(f, m, true).strategy, Strategy::kFusedTiles);
  EXPECT_GT(ChooseTile(f, Strategy::kFusedTiles, m, true).stage_pitch, 0);
  EXPECT_EQ(ChooseTile(f, Strategy::kFusedTiles, m, true).block_cols,
            ChooseTile(f, Strategy::kFusedTiles, m, false).block_cols);
}

// With cache-bypassing stores, destination rows that are not whole lines apart and longer
// than a band walk's strip (384 rows of f32 on 48 KiB of L1 and 64-byte vectors) stage, whose
// walk writes every line whole (StagesStreamingRuns); rows a whole number of lines apart, and
// rows of one strip or fewer, keep the band walk; with ordinary stores nothing changes.
TEST(ChooseStrategyTest, StagesStreamingRunsThatShareLines) {
  const Machine m = TestMachine();
  const Problem split_rows = Folded({8001, 8000}, {1, 0}, 4);  // rows 32004 B apart
  EXPECT_EQ(ChooseStrategy(split_rows, m, true).strategy, Strategy::kStagedTiles);
  EXPECT_EQ(ChooseStrategy(split_rows, m, false).strategy, Strategy::kTiles);
  const Tile staged = ChooseTile(split_rows, Strategy::kStagedTiles, m, true);
  // The stage holds a row of tiles past each block, for the lines the block completes.
  EXPECT_GE(staged.stage_pitch, (staged.strip_rows + staged.tile_rows) * 4);
  EXPECT_FALSE(staged.prefetch_ahead);
  EXPECT_EQ(ChooseStrategy(Folded({8000, 8001}, {1, 0}, 4), m, true).strategy, Strategy::kTiles);
  EXPECT_EQ(ChooseStrategy(Folded({384 + 1, 2, 8000}, {2, 1, 0}, 4), m, true).strategy,
            Strategy::kStagedTiles);
  // Rows that follow each other in the destination, few enough for the band walk's dense stage
  // to read 256 B of each per block (StagesTiles), go there instead: 385 x 4 B, 144 columns.
  EXPECT_EQ(ChooseStrategy(Folded({384 + 1, 8000}, {1, 0}, 4), m, true).strategy, Strategy::kTiles);
  EXPECT_EQ(DenseStageBlockCols(385 * 4, 16), 144);
  // Two strips of rows or more stay staged: the driver could cut them between threads, and a
  // plane cut so is not dense (bf16 801 x 68500: 801 rows, strips of 384 on this machine).
  EXPECT_EQ(ChooseStrategy(Folded({801, 68500}, {1, 0}, 2), m, true).strategy,
            Strategy::kStagedTiles);
  // 2001 x 2 B: one band of 32 columns per block (64 B of each row), so staged.
  EXPECT_EQ(ChooseStrategy(Folded({2001, 30000}, {1, 0}, 2), m, true).strategy,
            Strategy::kStagedTiles);
  EXPECT_EQ(ChooseStrategy(Folded({384 - 1, 8000}, {1, 0}, 4), m, true).strategy, Strategy::kTiles);
  // 8- and 16-byte elements on AVX-512, past Machine::realign_rows_bytes, realign such rows in
  // the band walk (RealignsRows), which fetches nothing ahead for its stores; smaller outputs,
  // and a target without AVX-512, stage.
  Machine realigning = m;
  realigning.realign_rows_bytes = 32 << 20;
  realigning.prefetch_ahead_bytes = 1;  // ordinary stores would fetch ahead at any size
  for (const int64_t e : {8, 16}) {
    const Problem wide = Folded({8001, 4000}, {1, 0}, e);  // rows 8001 x e B apart, >= 256 MB
    EXPECT_EQ(ChooseStrategy(wide, realigning, true).strategy, Strategy::kTiles) << e;
    const Tile tile = ChooseTile(wide, Strategy::kTiles, realigning, true);
    EXPECT_TRUE(tile.realign_rows) << e;
    EXPECT_FALSE(tile.prefetch_ahead) << e;
    EXPECT_FALSE(ChooseTile(wide, Strategy::kTiles, realigning, false).realign_rows) << e;
    EXPECT_TRUE(ChooseTile(wide, Strategy::kTiles, realigning, false).prefetch_ahead) << e;
    EXPECT_EQ(ChooseStrategy(wide, m, true).strategy, Strategy::kStagedTiles) << e;  // never
    const Problem cached = Folded({1001, 1200}, {1, 0}, e);  // rows 1001 x e B apart, < 32 MiB
    EXPECT_EQ(ChooseStrategy(cached, realigning, true).strategy, Strategy::kStagedTiles) << e;
    Machine avx2 = realigning;
    avx2.target = "AVX2";
    avx2.vector_bytes = 32;
    EXPECT_EQ(ChooseStrategy(wide, avx2, true).strategy, Strategy::kStagedTiles) << e;
  }
  // A fused plane (i8 801x72x387x7 `3,2,0,1`: 57672 rows, 7 x 387 columns 57672 B apart)
  // stages so too. Its source rows would be copied first (FusedSourceCopy) only where the
  // second stage holds the row of tiles past them: here it would not (320 x 448 B).
  const Problem fused = Folded({801, 72, 387, 7}, {3, 2, 0, 1}, 1);
  ASSERT_EQ(ChooseStrategy(fused, m, true).strategy, Strategy::kFusedTiles);
  const Tile dram = ChooseTile(fused, Strategy::kFusedTiles, m, true);
  EXPECT_GT(dram.stage_pitch, 0);
  EXPECT_GE(dram.stage_pitch, dram.strip_rows + dram.tile_rows);
  EXPECT_EQ(dram.source_pitch, 0);
  EXPECT_EQ(ChooseTile(fused, Strategy::kFusedTiles, m, false).stage_pitch, 0);
}

TEST(ChooseTileTest, CopiesFusedSourceRowsFirstOnlyForBytesInDram) {
  const Machine m = TestMachine();
  // i8 16^4 reversed: one staged block of 256 x 256, 256 B source runs -> rows 5 lines apart
  // (an odd count), 256 x 320 B within the second stage; only with cache-bypassing stores.
  const Problem bytes = FoldedReversal({16, 16, 16, 16}, 1);
  ASSERT_EQ(ChooseStrategy(bytes, m, true).strategy, Strategy::kFusedTiles);
  const Tile dram = ChooseTile(bytes, Strategy::kFusedTiles, m, true);
  ASSERT_GT(dram.stage_pitch, 0);
  EXPECT_EQ(dram.block_cols, 256);
  EXPECT_EQ(dram.source_pitch, 320);
  EXPECT_EQ(dram.source_copy, SourceCopy::kByteTilesInDram);
  EXPECT_LE(dram.strip_rows * dram.source_pitch, kMaxStageBytes);
  EXPECT_EQ(ChooseTile(bytes, Strategy::kFusedTiles, m, false).source_pitch, 0);
  // The same layout of 2- and 4-byte elements reads its source in place.
  EXPECT_EQ(
      ChooseTile(FoldedReversal({16, 16, 16, 16}, 2), Strategy::kFusedTiles, m, true).source_pitch,
      0);
  EXPECT_EQ(
      ChooseTile(FoldedReversal({16, 16, 16, 16}, 4), Strategy::kFusedTiles, m, true).source_pitch,
      0);
  // i8 8^6 reversed: blocks of 64 columns, one line per source row: in place.
  const Tile short_runs =
      ChooseTile(FoldedReversal({8, 8, 8, 8, 8, 8}, 1), Strategy::kFusedTiles, m, true);
  EXPECT_GT(short_runs.stage_pitch, 0);
  EXPECT_EQ(short_runs.source_pitch, 0);
}

TEST(GroupedBandsTest, ShortRunsOfNarrowTilesInGroupsWithinTheBlock) {
  // f32 (16-row tiles) on 64-byte vectors: 1 KiB of each source row (16 bands) while the
  // block of strip rows x group vectors stays within 64 KiB; not for runs over 512 B.
  EXPECT_EQ(GroupedBands(4, 16, 16, 64), 16);
  EXPECT_EQ(GroupedBands(4, 16, 64, 64), 16);  // 64 x 1 KiB = 64 KiB
  EXPECT_EQ(GroupedBands(4, 16, 128, 64), 8);  // 512 B runs: 8 bands
  EXPECT_EQ(GroupedBands(4, 16, 256, 64), 1);  // 1 KiB runs: band by band
  EXPECT_EQ(GroupedBands(8, 8, 32, 64), 16);
  EXPECT_EQ(GroupedBands(8, 8, 128, 64), 1);
  EXPECT_EQ(GroupedBands(4, 16, 64, 32), 32);  // 32-byte vectors: 1 KiB is 32 of them
  // 2- and 1-byte tiles read 32 and 64 rows at once: never grouped.
  EXPECT_EQ(GroupedBands(2, 32, 64, 64), 1);
  EXPECT_EQ(GroupedBands(1, 64, 64, 64), 1);
}

TEST(ChooseTileTest, GroupsBandsOfShortStripsOnlyWithCacheBypassingStores) {
  const Machine m = TestMachine();
  // f32 32x64x64x128 `0,2,3,1` (suite d2): planes of 64 rows, 256 B destination runs.
  const Problem d2 = Folded({32, 64, 64, 128}, {0, 2, 3, 1}, 4);
  ASSERT_EQ(ChooseStrategy(d2, m, true).strategy, Strategy::kTiles);
  const Tile dram = ChooseTile(d2, Strategy::kTiles, m, true);
  EXPECT_EQ(dram.strip_rows, 64);
  EXPECT_EQ(dram.band_group, 16);
  EXPECT_EQ(ChooseTile(d2, Strategy::kTiles, m, false).band_group, 1);
  // Strips of 384 rows (8192^2) keep the band walk; so do bf16 tiles of the same layout.
  EXPECT_EQ(ChooseTile(FoldedReversal({8192, 8192}), Strategy::kTiles, m, true).band_group, 1);
  EXPECT_EQ(
      ChooseTile(Folded({32, 64, 64, 128}, {0, 2, 3, 1}, 2), Strategy::kTiles, m, true).band_group,
      1);
  // Destination rows not a whole number of lines apart keep ordinary stores, and the band walk
  // (f64 58 x 173250: 464 B apart).
  const Problem unaligned = FoldedReversal({58, 173250}, 8);
  ASSERT_EQ(ChooseStrategy(unaligned, m, true).strategy, Strategy::kTiles);
  EXPECT_EQ(ChooseTile(unaligned, Strategy::kTiles, m, true).band_group, 1);
  EXPECT_EQ(ChooseTile(FoldedReversal({64, 173248}, 8), Strategy::kTiles, m, true).band_group, 16);
  // The nest carries it to the kernel.
  const DriverSplit split = SplitDriver(d2, dram, FindPartitionUnit(d2, 32, 128), 1, 1);
  EXPECT_EQ(BuildNest(d2, Strategy::kTiles, dram, split, true).band_group, 16);
}

TEST(ChooseTileTest, ShortStripsWhereTheCalibrationFoundThemFaster) {
  Machine m = TestMachine();
  m.short_strips_bytes = 64 << 20;  // as calibrated: from the streaming threshold
  // Every width: strips of 32 rows (whole tiles: 64 for 1-byte elements), 1 KiB of each
  // source row per row of tiles, with cache-bypassing stores only.
  for (const auto& [elem, strip] :
       std::vector<std::pair<int64_t, int64_t>>{{1, 64}, {2, 32}, {4, 32}, {8, 32}, {16, 32}}) {
    const Problem plane = FoldedReversal({8192, 8192}, elem);
    const Tile dram = ChooseTile(plane, Strategy::kTiles, m, true);
    EXPECT_EQ(dram.strip_rows, strip) << elem;
    EXPECT_EQ(dram.band_group, 1024 / dram.vector_bytes) << elem;
    EXPECT_EQ(dram.row_granule, strip) << elem;
    const Tile cached = ChooseTile(plane, Strategy::kTiles, m, false);
    EXPECT_EQ(cached.band_group, 1) << elem;
    EXPECT_EQ(cached.strip_rows,
              ChooseTile(plane, Strategy::kTiles, TestMachine(), false).strip_rows);
  }
  // A plane of fewer rows than a strip walks them all; destination rows not whole lines apart
  // keep the band walk (they cannot stream in place).
  EXPECT_EQ(ChooseTile(FoldedReversal({16, 1 << 22}), Strategy::kTiles, m, true).strip_rows, 16);
  // Below the size it was measured at (the source in cache) the tall strips stay.
  const Tile cached = ChooseTile(FoldedReversal({1024, 1024}), Strategy::kTiles, m, true);
  EXPECT_EQ(cached.strip_rows, 384);
  EXPECT_EQ(cached.band_group, 1);
  EXPECT_EQ(ChooseTile(FoldedReversal({58, 173250}, 8), Strategy::kTiles, m, true).band_group, 1);
  // Staged and fused plans are not band walks.
  EXPECT_EQ(ChooseTile(FoldedReversal({8192, 8192}), Strategy::kStagedTiles, m, false).band_group,
            1);
}

// Walks with ordinary stores fetch ahead from half the L2 (Machine::prefetch_ahead_bytes, as
// CurrentMachine sets it), band walks and staged ones alike; cache-bypassing stores never (they
// read nothing for the stores, and band walks prefetch their source already).
TEST(ChooseTileTest, PrefetchAheadPastHalfTheL2) {
  Machine m = TestMachine();
  m.prefetch_ahead_bytes = m.l2_bytes / 2;
  const Problem past = FoldedReversal({768, 768});  // 2.25 MiB
  EXPECT_TRUE(ChooseTile(past, Strategy::kTiles, m, false).prefetch_ahead);
  EXPECT_FALSE(ChooseTile(past, Strategy::kTiles, m, true).prefetch_ahead);
  EXPECT_TRUE(
      ChooseTile(FoldedReversal({2048, 2048}, 1), Strategy::kStagedTiles, m, false).prefetch_ahead);
  EXPECT_TRUE(ChooseTile(FoldedReversal({256, 512}), Strategy::kTiles, m, false).prefetch_ahead);
  EXPECT_FALSE(ChooseTile(FoldedReversal({256, 511}), Strategy::kTiles, m, false).prefetch_ahead);
  EXPECT_FALSE(
      ChooseTile(FoldedReversal({256, 256}), Strategy::kStagedTiles, m, false).prefetch_ahead);
  EXPECT_FALSE(ChooseTile(past, Strategy::kRowCopy, m, false).prefetch_ahead);
  // A band walk that streams but whose destination rows are not whole lines apart (4808 B
  // apart: 601 rows of 4 B, and another dim between) stores ordinarily (TilesPlane), so it
  // fetches ahead too; rows that follow each other (3080 B) go through a stage and stream
  // (StagesDenseRows).
  EXPECT_TRUE(
      ChooseTile(Folded({601, 2, 768}, {2, 1, 0}, 4), Strategy::kTiles, m, true).prefetch_ahead);
  EXPECT_FALSE(ChooseTile(FoldedReversal({770, 768}), Strategy::kTiles, m, true).prefetch_ahead);
  m.prefetch_ahead_bytes = 0;  // never
  EXPECT_FALSE(ChooseTile(past, Strategy::kTiles, m, false).prefetch_ahead);
  const Machine current = iotx::kernels::CurrentMachine(false);
  EXPECT_EQ(current.prefetch_ahead_bytes, std::max<int64_t>(1, current.l2_bytes / 2));
}

// Past half the L2, a plane whose source rows are an even number of lines apart stages (its
// band's source lines fall in too few of the L1's sets to stay there until the next band);
// below it, rows not line-aligned, and with cache-bypassing stores, the band walk stays.
TEST(ChooseStrategyTest, StagesPastHalfTheL2WhereABandsLinesAlias) {
  Machine m = TestMachine();
  m.prefetch_ahead_bytes = m.l2_bytes / 2;
  EXPECT_EQ(ChooseStrategy(FoldedReversal({768, 768}), m).strategy, Strategy::kStagedTiles);
  EXPECT_EQ(ChooseStrategy(FoldedReversal({1000, 896}), m).strategy, Strategy::kStagedTiles);
  EXPECT_EQ(ChooseStrategy(FoldedReversal({768, 768}), m, true).strategy, Strategy::kTiles);
  EXPECT_EQ(ChooseStrategy(FoldedReversal({600, 600}), m).strategy, Strategy::kTiles);
  EXPECT_EQ(ChooseStrategy(FoldedReversal({1000, 3000}), m).strategy, Strategy::kTiles);
  EXPECT_EQ(ChooseStrategy(FoldedReversal({256, 256}), m).strategy, Strategy::kTiles);
  // Rows an odd number of lines apart spread over every set.
  EXPECT_EQ(ChooseStrategy(FoldedReversal({768, 784}), m).strategy, Strategy::kTiles);
  m.prefetch_ahead_bytes = 0;
  EXPECT_EQ(ChooseStrategy(FoldedReversal({768, 768}), m).strategy, Strategy::kTiles);
}

// Where each thread's share of the output fits half the L2, only a tile's own lines must fit
// their L1 sets' ways: 8- and 16-byte tiles over rows 4 KiB apart walk in place, 4-byte ones
// (16 rows in one set of 12 ways) still stage; past it the next band's lines count too.
TEST(ChooseStrategyTest, TilesWhoseShareFitsTheL2AliasOnlyByTheirOwnLines) {
  Machine m = TestMachine();  // 1 MiB L2, 48 KiB 12-way L1
  m.prefetch_ahead_bytes = m.l2_bytes / 2;
  const auto strategy = [&](std::vector<int64_t> shape, size_t elem, int threads) {
    return ChooseStrategy(FoldedReversal(shape, elem), m, false, threads).strategy;
  };
  EXPECT_EQ(strategy({128, 512}, 8, 1), Strategy::kTiles);        // 512 KiB
  EXPECT_EQ(strategy({256, 512}, 8, 1), Strategy::kStagedTiles);  // 1 MiB
  EXPECT_EQ(strategy({256, 512}, 8, 2), Strategy::kTiles);        // 512 KiB each
  EXPECT_EQ(strategy({256, 512}, 8, 0), Strategy::kStagedTiles);  // threads not known: one
  EXPECT_EQ(strategy({512, 512}, 8, 2), Strategy::kStagedTiles);  // 1 MiB each
  EXPECT_EQ(strategy({512, 512}, 8, 4), Strategy::kTiles);
  EXPECT_EQ(strategy({128, 256}, 16, 1), Strategy::kTiles);        // 4-row tiles
  EXPECT_EQ(strategy({256, 256}, 16, 1), Strategy::kStagedTiles);  // 1 MiB
  EXPECT_EQ(strategy({128, 1024}, 4, 1), Strategy::kStagedTiles);  // 16 rows 4 KiB apart
  EXPECT_EQ(strategy({128, 512}, 4, 1), Strategy::kTiles);         // 16 rows 2 KiB apart
  EXPECT_EQ(strategy({512, 512}, 4, 1), Strategy::kStagedTiles);   // the same, past half the L2
  EXPECT_EQ(strategy({512, 512}, 4, 2), Strategy::kTiles);
}

TEST(FusedSourceCopyTest, InCacheWhereTileRowsOverfillAnL2Set) {
  const Machine m = TestMachine();
  EXPECT_EQ(FusedSourceCopy(1, 256, 256, false, true).pitch, 5 * 64);
  EXPECT_EQ(FusedSourceCopy(1, 192, 256, false, true).pitch, 0);      // 3 lines: too short
  EXPECT_EQ(FusedSourceCopy(2, 256, 256, false, true).pitch, 0);      // 2-byte tiles: in DRAM only
  EXPECT_EQ(FusedSourceCopy(2, 256, 128, true, true).pitch, 9 * 64);  // 512 B: 8 lines -> 9
  EXPECT_EQ(FusedSourceCopy(2, 256, 256, true, false).pitch, 0);
  EXPECT_EQ(FusedSourceCopy(4, 256, 128, true, true).pitch, 0);
  // The reason recorded is the rule that chose the copy (Describe prints it): 1-byte tiles in
  // DRAM copy whatever their rows' sets, so that rule is named where both hold.
  EXPECT_EQ(FusedSourceCopy(1, 256, 256, false, true).reason, SourceCopy::kRowsOverfillL2Set);
  EXPECT_EQ(FusedSourceCopy(1, 256, 256, true, false).reason, SourceCopy::kByteTilesInDram);
  EXPECT_EQ(FusedSourceCopy(1, 256, 256, true, true).reason, SourceCopy::kByteTilesInDram);
  EXPECT_EQ(FusedSourceCopy(2, 256, 128, true, true).reason, SourceCopy::kRowsOverfillL2Set);
  EXPECT_EQ(FusedSourceCopy(1, 192, 256, true, true).reason, SourceCopy::kNone);  // too short
  EXPECT_EQ(FusedSourceCopy(4, 256, 128, true, true).reason, SourceCopy::kNone);
  // i8 4x16^5 reversed: a tile's 64 rows are 4 x 16 of the rows 1 MiB and 64 KiB apart, all
  // in one of a 1 MiB L2's 1024 sets (of 16 lines); staged in cache, it copies them.
  const Problem aliasing = FoldedReversal({4, 16, 16, 16, 16, 16}, 1);
  const Tile in_cache = ChooseTile(aliasing, Strategy::kFusedTiles, m, false);
  EXPECT_TRUE(TileRowsOverfillAnL2Set(aliasing, in_cache, m));
  EXPECT_GT(in_cache.stage_pitch, 0);
  EXPECT_GT(in_cache.source_pitch, 0);
  EXPECT_EQ(in_cache.source_copy, SourceCopy::kRowsOverfillL2Set);
  // bf16 2x16^6 reversed: a tile's 32 rows, 2 x 16 of the rows 2 MiB and 128 KiB apart, in
  // one set too: copied in DRAM, read in place in cache.
  const Problem bf16 = FoldedReversal({2, 16, 16, 16, 16, 16, 16}, 2);
  const Tile bf16_dram = ChooseTile(bf16, Strategy::kFusedTiles, m, true);
  EXPECT_TRUE(TileRowsOverfillAnL2Set(bf16, bf16_dram, m));
  EXPECT_GT(bf16_dram.source_pitch, 0);
  EXPECT_EQ(bf16_dram.source_copy, SourceCopy::kRowsOverfillL2Set);
  EXPECT_EQ(ChooseTile(bf16, Strategy::kFusedTiles, m, false).source_pitch, 0);
  // i8 32^4 reversed: 32 rows 32 KiB apart x 2 rows 1 KiB apart, four sets of 16 lines each;
  // i8 16^5 reversed: 16 rows 64 KiB apart x 4 rows 4 KiB apart, the same. Read in place.
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{32, 32, 32, 32}, std::vector<int64_t>{16, 16, 16, 16, 16}}) {
    const Problem spread = FoldedReversal(shape, 1);
    const Tile tile = ChooseTile(spread, Strategy::kFusedTiles, m, false);
    EXPECT_FALSE(TileRowsOverfillAnL2Set(spread, tile, m)) << shape.size();
    EXPECT_EQ(tile.source_pitch, 0) << shape.size();
  }
}

TEST(FusedSourceCopyTest, OddLinesApartAndWithinTheStage) {
  EXPECT_EQ(FusedSourceCopy(1, 256, 256, true).pitch, 5 * 64);   // 4 lines -> 5
  EXPECT_EQ(FusedSourceCopy(1, 384, 256, true).pitch, 7 * 64);   // 6 -> 7
  EXPECT_EQ(FusedSourceCopy(1, 300, 128, true).pitch, 5 * 64);   // 4.7 -> 5 (odd already)
  EXPECT_EQ(FusedSourceCopy(1, 192, 256, true).pitch, 0);        // 3 lines: too short
  EXPECT_EQ(FusedSourceCopy(1, 1024, 256, true).pitch, 0);       // 17 lines x 256 rows > 128 KiB
  EXPECT_EQ(FusedSourceCopy(1, 1024, 64, true).pitch, 17 * 64);  // 68 KiB
  EXPECT_EQ(FusedSourceCopy(1, 256, 256, false).pitch, 0);
  EXPECT_EQ(FusedSourceCopy(2, 256, 256, true).pitch, 0);
}

TEST(SplitDriverTest, BlocksTheLeadingDimOnPartitionTiles) {
  // 8192 x 8192 f32 transpose: the folded dim 0 is the output's dim 0 (8192 rows = 64 tiles).
  Problem p{{{8192, 4, 32768}, {8192, 32768, 4}}, 4, false};
  const Tile tile = ChooseTile(p, Strategy::kTiles, TestMachine());
  const PartitionUnit unit = FindPartitionUnit(p, 8192, 128);
  EXPECT_EQ(unit.d0_per_tile, 128);
  const DriverSplit split = SplitDriver(p, tile, unit, 32, 2);
  EXPECT_TRUE(split.dst_prefix);
  EXPECT_EQ(split.blocked_dim, 0);
  EXPECT_EQ(split.block % 128, 0);
  EXPECT_GE(split.block * 4, 2048);  // column blocks keep >= 2 KiB of each source row
  EXPECT_EQ(split.items, (8192 + split.block - 1) / split.block);
  EXPECT_GE(split.items, 2);
  EXPECT_EQ(split.align_items, 1);
}

TEST(SplitDriverTest, PartitionTilesAloneWhereTheColumnGranuleWouldLeaveOneBlock) {
  // i8 261x11x500x9 `2,1,0,3`: a row copy of 9-byte elements whose output's 500 rows are the
  // source-inner dim. Its column granule (15, for 128 B of each source row) times the
  // partition tile (128) is 1920 rows, more than there are: blocks of whole partition tiles.
  Problem p{{{500, 9, 25839}, {11, 4500, 2349}, {261, 49500, 9}}, 9, false};
  const Tile tile = ChooseTile(p, Strategy::kRowCopy, TestMachine());
  const PartitionUnit unit = FindPartitionUnit(p, 500, 128);
  ASSERT_EQ(unit.d0_per_tile, 128);
  const DriverSplit split = SplitDriver(p, tile, unit, 8, 2);
  EXPECT_TRUE(split.dst_prefix);
  EXPECT_EQ(split.blocked_dim, 0);
  EXPECT_GE(split.items, 2);
  EXPECT_EQ(split.block % 128, 0);
  EXPECT_EQ(split.align_items, 1);
}

TEST(SplitDriverTest, LargestShareIsWhatTheBusiestThreadClaims) {
  // 281 rows in blocks of 256 on two threads: 256 and 25; in blocks of 128: 128 + 25 and 128.
  EXPECT_EQ(LargestShare(281, 256, 1, 2), 256);
  EXPECT_EQ(LargestShare(281, 128, 1, 2), 153);
  EXPECT_EQ(LargestShare(281, 281, 1, 1), 281);
  // Blocks of 768, 768 and 512 rows, three times over, each to the less loaded thread (the
  // first on ties): the first thread ends with 768 + 512 + 768 + 768 + 512.
  EXPECT_EQ(LargestShare(2048, 768, 3, 2), 3328);
  // More threads than blocks: the largest share is one block; 3 x 4 blocks of 100 on 5
  // threads: two threads get three.
  EXPECT_EQ(LargestShare(1000, 10, 1, 256), 10);
  EXPECT_EQ(LargestShare(400, 100, 3, 5), 300);
  // Blocks of 128 instead of 256 when they share better; the larger block among equals.
  EXPECT_EQ(BalancedBlock(281, 256, 128, 128, 1, 2), 128);
  EXPECT_EQ(BalancedBlock(512, 256, 128, 128, 1, 2), 256);
  // Never below min_block, and never more than four items per thread.
  EXPECT_EQ(BalancedBlock(281, 256, 128, 256, 1, 2), 256);
  EXPECT_EQ(BalancedBlock(2048, 768, 384, 384, 3, 2), 768);
}

TEST(SplitDriverTest, PartitionTileBlocksAreSharedEvenly) {
  // f64 4 x 281 x 548 `1,2,0` (bench z08): 281 output rows in partition tiles of 128 on two
  // threads. Blocks of two tiles (256 rows and 25) left one thread 91 % of the work; three
  // items of one tile each share as 153 and 128 rows.
  auto p = MakeProblem(std::vector<int64_t>{4, 281, 548}, std::vector<int64_t>{1, 2, 0}, 8);
  ASSERT_TRUE(p.has_value());
  const Problem f = Fold(*p);
  const Machine m = TestMachine();
  const StrategyCandidate& strategy = ChooseStrategy(f, m);
  const Tile tile = ChooseTile(f, strategy.strategy, m);
  const PartitionUnit unit = FindPartitionUnit(f, 281, 128);
  ASSERT_EQ(unit.d0_per_tile, 128 * 548);
  const DriverSplit split = SplitDriver(f, tile, unit, TargetItems(4 * 281 * 548 * 8, 2), 2);
  ASSERT_EQ(split.blocked_dim, 0);
  EXPECT_EQ(split.block, unit.d0_per_tile);
  EXPECT_EQ(split.items, 3);
  EXPECT_EQ(split.align_items, 1);
}

// Columns too few for kMinRunBytes per thread are cut one block per thread, then in smaller
// blocks of whole partition tiles where those keep half of kMinRunBytes together or cut the
// busiest thread's share by an eighth: f32 528^2 (4 tiles of 128 output rows and 16) as 256 +
// 256 + 16 rather than 384 + 144, f32 100000 x 528 alike; bf16 7361 x 372 stays 256 + 116
// (128-column blocks would read 256 B of each row for a share 5 % smaller).
TEST(SplitDriverTest, ColumnsShortOfTheRunLengthAreSharedEvenly) {
  const Machine m = TestMachine();
  for (const int64_t rows : {int64_t{528}, int64_t{100000}}) {
    SCOPED_TRACE(rows);
    const Problem f = FoldedReversal({rows, 528});
    const Tile tile = ChooseTile(f, ChooseStrategy(f, m, false, 2).strategy, m);
    const PartitionUnit unit = FindPartitionUnit(f, 528, 128);
    ASSERT_EQ(unit.d0_per_tile, 128);
    const DriverSplit split = SplitDriver(f, tile, unit, TargetItems(rows * 528 * 4, 2), 2);
    ASSERT_EQ(split.blocked_dim, 0);
    EXPECT_EQ(split.block, 256);
    EXPECT_EQ(split.items, 3);
    EXPECT_EQ(LargestShare(528, split.block, 1, 2), 272);
  }
  // Finer blocks on the output's leading dim are whole partition tiles even where that dim
  // holds fewer than two (its granule is then not the tile): f32 3626 x 207 keeps 128 + 79
  // (96-column blocks would share better but end inside the first tile).
  for (const auto& [shape, elem] : {std::pair{std::vector<int64_t>{3626, 207}, size_t{4}},
                                    std::pair{std::vector<int64_t>{6281, 151}, size_t{2}}}) {
    const Problem f = FoldedReversal(shape, elem);
    const Tile t = ChooseTile(f, ChooseStrategy(f, m, false, 2).strategy, m);
    const DriverSplit s =
        SplitDriver(f, t, FindPartitionUnit(f, shape[1], 128), TargetItems(ProblemBytes(f), 2), 2);
    SCOPED_TRACE(shape[1]);
    ASSERT_EQ(s.blocked_dim, 0);
    EXPECT_EQ(s.block % 128, 0);
  }
  const Problem bf16 = FoldedReversal({7361, 372}, 2);
  const Tile tile = ChooseTile(bf16, ChooseStrategy(bf16, m, false, 2).strategy, m);
  const DriverSplit split =
      SplitDriver(bf16, tile, FindPartitionUnit(bf16, 372, 128), TargetItems(7361 * 372 * 2, 2), 2);
  ASSERT_EQ(split.blocked_dim, 0);
  EXPECT_EQ(split.block, 256);
}

TEST(SplitDriverTest, TakesWholeOuterDimsAndCountsItemsPerTile) {
  // [n=256 (not a tile dim)][n=128 cols][n=64 rows]: 256 items, partition tile = 128 of them.
  Problem p{{{256, 64 * 128 * 4, 64 * 128 * 4}, {128, 4, 64 * 4}, {64, 128 * 4, 4}}, 4, false};
  const Tile tile = ChooseTile(p, Strategy::kTiles, TestMachine());
  const DriverSplit split = SplitDriver(p, tile, FindPartitionUnit(p, 256, 128), 64, 2);
  EXPECT_EQ(split.whole, std::vector<int>{0});
  EXPECT_EQ(split.blocked_dim, -1);
  EXPECT_EQ(split.items, 256);
  EXPECT_EQ(split.align_items, 128);
}

TEST(SplitDriverTest, SmallLeadingDimIsOnePartitionTile) {
  Problem p{{{3, 1 << 20, 1 << 20}, {128, 4, 8192}, {2048, 512, 4}}, 4, false};
  EXPECT_EQ(FindPartitionUnit(p, 3, 128).d0_per_tile, 0);
  const DriverSplit split =
      SplitDriver(p, ChooseTile(p, Strategy::kTiles, TestMachine()), FindPartitionUnit(p, 3, 128), 32, 2);
  EXPECT_EQ(split.align_items, 0);
  EXPECT_FALSE(split.dst_prefix);
  // The outer dim whole (3 items), then blocks of rows in whole 384-row strips: at most
  // 2048 / 384 = 5 blocks, rounded down to a multiple of the 2 threads (4), so 512 rows
  // rounded up to the granule: 3 blocks of 768.
  EXPECT_EQ(split.whole, std::vector<int>{0});
  EXPECT_EQ(split.blocked_dim, 2);
  EXPECT_EQ(split.block, 768);
  EXPECT_EQ(split.items, 3 * 3);
}

TEST(SplitDriverTest, OneItemWhenNotParallel) {
  Problem p{{{128, 4, 8192}, {2048, 512, 4}}, 4, false};
  const DriverSplit split =
      SplitDriver(p, ChooseTile(p, Strategy::kTiles, TestMachine()), FindPartitionUnit(p, 128, 128), 1, 2);
  EXPECT_EQ(split.items, 1);
  EXPECT_TRUE(split.driver.empty());
}

TEST(SplitDriverTest, FewBlocksAreRoundedToTheThreadCount) {
  // 768 x 768 f32 transpose, 6 partition tiles: 2 KiB column blocks (512) would leave one
  // block, so each of the 2 threads gets one: blocks of 384, a multiple of 128.
  Problem p{{{768, 4, 3072}, {768, 3072, 4}}, 4, false};
  const DriverSplit split = SplitDriver(p, ChooseTile(p, Strategy::kTiles, TestMachine()),
                                        FindPartitionUnit(p, 768, 128), 32, 2);
  EXPECT_EQ(split.block, 384);
  EXPECT_EQ(split.items, 2);
  EXPECT_EQ(split.align_items, 1);
}

TEST(SplitDriverTest, SingleTileTwoDimSplitsRows) {
  // (4096, 100) -> (100, 4096): output dim 0 = 100 rows, one partition tile; rows in blocks.
  Problem p{{{100, 4, 16384}, {4096, 400, 4}}, 4, false};
  const DriverSplit split = SplitDriver(p, ChooseTile(p, Strategy::kTiles, TestMachine()),
                                        FindPartitionUnit(p, 100, 128), 32, 2);
  EXPECT_FALSE(split.dst_prefix);
  // 4096 / 384 = 10 blocks at most: ceil(4096 / 10) rounded up to 384 rows = 768, 6 items.
  EXPECT_EQ(split.blocked_dim, 1);
  EXPECT_EQ(split.block, 768);
  EXPECT_EQ(split.items, 6);
}

TEST(SplitCopyTest, ChunksEndOnPartitionTiles) {
  // 1024 rows of 4 KiB: a partition tile is 512 KiB.
  const DriverSplit split = SplitCopy(int64_t{4} << 20, 1024, 128, 8);
  EXPECT_EQ(split.items * split.block >= (int64_t{4} << 20), true);
  EXPECT_EQ((split.block * split.align_items) % (512 * 1024), 0);
}

TEST(TargetItemsTest, OneItemBelowTheParallelThreshold) {
  EXPECT_EQ(TargetItems(kParallelMinBytes - 1, 8), 1);
  EXPECT_EQ(TargetItems(int64_t{1} << 30, 1), 1);
  EXPECT_GT(TargetItems(int64_t{1} << 30, 2), 2);
}

// ChooseStreaming's answer as one value, so that each expectation states the stores and why.
std::pair<bool, StoresReason> Stores(StoresChoice c) { return {c.streaming, c.reason}; }
constexpr std::pair kForcedRegular{false, StoresReason::kForced};
constexpr std::pair kForcedStreaming{true, StoresReason::kForced};
constexpr std::pair kLarge{true, StoresReason::kLargeOutput};
constexpr std::pair kWouldStage{true, StoresReason::kWouldStage};
constexpr std::pair kByteTilesInPlace{true, StoresReason::kByteTilesInPlace};
constexpr std::pair kSmall{false, StoresReason::kSmallOutput};
constexpr std::pair kOneThread{true, StoresReason::kOneThread};
constexpr std::pair kOneThreadWideStaged{true, StoresReason::kOneThreadWideStaged};

TEST(ChooseStreamingTest, OptionsOverrideTheMachinesThreshold) {
  const Machine m = TestMachine();
  const Problem p = FoldedReversal({4096, 4096});
  EXPECT_EQ(Stores(ChooseStreaming(PlanOptions::Stores::kRegular, p, int64_t{1} << 40, m, 2)),
            kForcedRegular);
  EXPECT_EQ(Stores(ChooseStreaming(PlanOptions::Stores::kStreaming, p, 64, m, 2)),
            kForcedStreaming);
  EXPECT_EQ(Stores(ChooseStreaming(PlanOptions::Stores::kAuto, p, m.streaming_bytes - 1, m, 2)),
            kSmall);
  EXPECT_EQ(Stores(ChooseStreaming(PlanOptions::Stores::kAuto, p, m.streaming_bytes, m, 2)),
            kLarge);
  Machine unasked = m;
  unasked.streaming_bytes = 0;
  EXPECT_EQ(Stores(ChooseStreaming(PlanOptions::Stores::kAuto, p, int64_t{1} << 40, unasked, 2)),
            kSmall);
}

// A contiguous copy (no dims left after folding) and a row copy of a width with no tile are
// no tile planes: the staged threshold's rules pass them by without asking for their columns
// (the copy's were read past the end of an empty vector, which AddressSanitizer caught in an
// apply whose tensors kept their layout).
TEST(ChooseStreamingTest, PlansWithoutTilesKeepTheCopysThreshold) {
  Machine m = TestMachine();
  m.staged_streaming_bytes = 2 << 20;
  auto identity = MakeProblem(std::vector<int64_t>{1024, 4096}, std::vector<int64_t>{0, 1}, 4);
  ASSERT_TRUE(identity.has_value());
  const Problem copy = Fold(*identity);
  ASSERT_TRUE(copy.dims.empty());
  EXPECT_EQ(Stores(ChooseStreaming(PlanOptions::Stores::kAuto, copy, 16 << 20, m, 2)), kSmall);
  const Problem rows = FoldedReversal({2048, 1024}, 3);
  ASSERT_FALSE(rows.dims.empty());
  EXPECT_EQ(Stores(ChooseStreaming(PlanOptions::Stores::kAuto, rows, ProblemBytes(rows), m, 2)),
            kSmall);
}

// Below the streaming threshold, a plan that would stage its tiles (rows or columns a power
// of two apart, ordinary stores) streams from staged_streaming_bytes instead when its tiles
// are 1-, 2- or 4-byte on 64-byte vectors; one that would walk in place keeps ordinary stores.
TEST(ChooseStreamingTest, PlansThatWouldStageStreamFromTheirOwnThreshold) {
  Machine m = TestMachine();
  m.staged_streaming_bytes = 2 << 20;
  const auto stores = [&](std::vector<int64_t> shape, size_t elem) {
    const Problem p = FoldedReversal(shape, elem);
    return Stores(ChooseStreaming(PlanOptions::Stores::kAuto, p, ProblemBytes(p), m, 2));
  };
  ASSERT_EQ(ChooseStrategy(FoldedReversal({1024, 1024}), m, false).strategy,
            Strategy::kStagedTiles);
  EXPECT_EQ(stores({1024, 1024}, 4), kWouldStage);  // 4 MiB, staged with ordinary stores
  EXPECT_EQ(stores({1024, 512}, 4), kWouldStage);   // 2 MiB: the threshold itself
  EXPECT_EQ(stores({512, 512}, 4), kSmall);         // 1 MiB, below it
  EXPECT_EQ(stores({1000, 1000}, 4), kSmall);  // 4 MB, rows that do not alias: in place already
  EXPECT_EQ(stores({2048, 2048}, 1), kWouldStage);  // 1-byte tiles in halves on AVX-512 too
  EXPECT_EQ(stores({2048, 1024}, 2), kWouldStage);
  // 1-byte tiles in halves that walk in place (rows 1984 B apart) stream from it too; wider
  // ones in place keep ordinary stores, as do 1-byte rows not whole lines apart.
  ASSERT_EQ(ChooseStrategy(FoldedReversal({1984, 2112}, 1), m, false).strategy, Strategy::kTiles);
  EXPECT_EQ(stores({1984, 2112}, 1), kByteTilesInPlace);
  EXPECT_EQ(stores({1984, 512}, 1), kSmall);   // 1 MB, below the threshold
  EXPECT_EQ(stores({2000, 2000}, 1), kSmall);  // rows 2000 B apart: in place, could not stream
  // Staged too, but its destination rows (4120 B apart) are not whole lines apart: in place it
  // could not stream, so it keeps the stage and ordinary stores.
  ASSERT_EQ(ChooseStrategy(FoldedReversal({1030, 1024}), m, false).strategy,
            Strategy::kStagedTiles);
  EXPECT_EQ(stores({1030, 1024}, 4), kSmall);
  EXPECT_EQ(stores({4096, 4096}, 4), kLarge);  // 64 MiB: past the general threshold first
  EXPECT_EQ(Stores(ChooseStreaming(PlanOptions::Stores::kRegular, FoldedReversal({1024, 1024}),
                                   4 << 20, m, 2)),
            kForcedRegular);
  // 32-byte vectors (AVX2): staged, 4- and 8-byte tiles alike.
  Machine avx2 = m;
  avx2.vector_bytes = 32;
  avx2.target = "AVX2";
  const Problem f32 = FoldedReversal({1024, 1024});
  const Problem f64 = FoldedReversal({1024, 512}, 8);
  ASSERT_EQ(ChooseStrategy(f32, avx2, false).strategy, Strategy::kStagedTiles);
  ASSERT_EQ(ChooseStrategy(f64, avx2, false).strategy, Strategy::kStagedTiles);
  EXPECT_FALSE(StagedTilesMayStream(4, avx2));
  EXPECT_FALSE(StagedTilesMayStream(1, avx2));  // no halves on 32-byte vectors
  EXPECT_TRUE(StagedTilesMayStream(1, m));
  EXPECT_FALSE(StagedTilesMayStream(8, m));
  EXPECT_EQ(Stores(ChooseStreaming(PlanOptions::Stores::kAuto, f32, ProblemBytes(f32), avx2, 2)),
            kSmall);
  EXPECT_EQ(Stores(ChooseStreaming(PlanOptions::Stores::kAuto, f64, ProblemBytes(f64), avx2, 2)),
            kSmall);
  ASSERT_EQ(ChooseStrategy(f64, m, false).strategy, Strategy::kStagedTiles);
  EXPECT_EQ(stores({1024, 512}, 8), kSmall);  // 8-byte tiles on 64-byte vectors stay staged too
  m.staged_streaming_bytes = 0;  // not asked (outputs below twice the L2)
  EXPECT_EQ(stores({1024, 1024}, 4), kSmall);
}

// A plan for one thread whose writes scatter (tiles, staged, fused, row copies) streams from
// half the copy's threshold; one for more threads, a copy and the interleaving strategies keep
// the copy's threshold.
TEST(ChooseStreamingTest, OneThreadsScatteredWritesStreamFromHalfTheThreshold) {
  Machine m = TestMachine();
  m.streaming_bytes = 16 << 20;
  m.staged_streaming_bytes = m.streaming_bytes;  // only the one-thread rule below it
  const auto stores = [&](const Problem& p, int threads) {
    return Stores(ChooseStreaming(PlanOptions::Stores::kAuto, p, ProblemBytes(p), m, threads));
  };
  const Problem tiles = FoldedReversal({1008, 3008});         // 11.6 MiB, rows in place
  const Problem staged = FoldedReversal({1024, 2048});        // 8 MiB, staged
  const Problem fused = FoldedReversal({200, 60, 130}, 8);    // 11.9 MiB
  const Problem half_below = FoldedReversal({1024, 2047});    // 4 bytes short of 8 MiB
  const Problem rows = Folded({96, 128, 256}, {1, 0, 2}, 4);  // 12 MiB of 1 KiB runs
  const Problem copy = Folded({12 << 20}, {0}, 1);
  const Problem interleave = Folded({24, 3, 224, 224}, {0, 2, 3, 1}, 4);  // 13.8 MiB
  ASSERT_EQ(ChooseStrategy(tiles, m, false).strategy, Strategy::kTiles);
  ASSERT_EQ(ChooseStrategy(staged, m, false).strategy, Strategy::kStagedTiles);
  ASSERT_EQ(ChooseStrategy(fused, m, false).strategy, Strategy::kFusedTiles);
  ASSERT_EQ(ChooseStrategy(rows, m, false).strategy, Strategy::kRowCopy);
  ASSERT_EQ(ChooseStrategy(copy, m, false).strategy, Strategy::kCopy);
  ASSERT_EQ(ChooseStrategy(interleave, m, false).strategy, Strategy::kInterleaveRows);
  for (const Problem* p : {&tiles, &staged, &fused, &rows}) {
    EXPECT_EQ(stores(*p, 1), kOneThread);
    EXPECT_EQ(stores(*p, 2), kSmall);
    EXPECT_EQ(stores(*p, 0), kSmall);  // no hint: not known to be one thread
  }
  EXPECT_EQ(stores(half_below, 1), kSmall);
  EXPECT_EQ(stores(copy, 1), kSmall);
  EXPECT_EQ(stores(interleave, 1), kSmall);
  EXPECT_EQ(stores(FoldedReversal({2048, 2048}), 1), kLarge);  // 16 MiB: the copy's threshold
  EXPECT_EQ(
      Stores(ChooseStreaming(PlanOptions::Stores::kRegular, tiles, ProblemBytes(tiles), m, 1)),
      kForcedRegular);
  m.streaming_bytes = 0;  // not asked (outputs below twice the L2)
  EXPECT_EQ(stores(tiles, 1), kSmall);
}

// Where one thread's copies leave its cache before half the copy's threshold, one thread's
// plans that would stage 8- or 16-byte tiles in destination runs of at least 2 KiB stream from
// there (and walk in place); their 1- to 4-byte, unstaged, few-row and many-thread plans keep
// the other rules.
TEST(ChooseStreamingTest, OneThreadsWideStagedTilesStreamWhereItsCopiesLeaveTheCache) {
  Machine m = TestMachine();                // 1 MiB L2
  m.prefetch_ahead_bytes = m.l2_bytes / 2;  // as CurrentMachine has it
  m.streaming_bytes = 16 << 20;
  m.staged_streaming_bytes = m.streaming_bytes;
  m.one_thread_streaming_bytes = 1 << 20;
  const auto stores = [&](const Problem& p, int threads) {
    return Stores(ChooseStreaming(PlanOptions::Stores::kAuto, p, ProblemBytes(p), m, threads));
  };
  const Problem f64 = FoldedReversal({512, 512}, 8);       // 2 MiB, rows 4 KiB apart
  const Problem c128 = FoldedReversal({256, 512}, 16);     // 2 MiB
  const Problem below = FoldedReversal({512, 248}, 8);     // 992 KiB
  const Problem f32 = FoldedReversal({1024, 512}, 4);      // 2 MiB, staged 4-byte tiles
  const Problem in_place = FoldedReversal({600, 600}, 8);  // 2.7 MiB, rows that do not alias
  const Problem ragged = FoldedReversal({515, 512}, 8);    // destination rows 4120 B apart
  const Problem few_rows = FoldedReversal({32, 16384}, 8);  // 4 MiB of 256 B runs
  for (const Problem* p : {&f64, &c128, &below, &f32, &ragged, &few_rows}) {
    ASSERT_EQ(ChooseStrategy(*p, m, false).strategy, Strategy::kStagedTiles);
  }
  ASSERT_EQ(ChooseStrategy(in_place, m, false).strategy, Strategy::kTiles);
  EXPECT_EQ(stores(f64, 1), kOneThreadWideStaged);
  EXPECT_EQ(ChooseStrategy(f64, m, true).strategy, Strategy::kTiles);  // in place, streaming
  EXPECT_EQ(stores(c128, 1), kOneThreadWideStaged);
  EXPECT_EQ(stores(f64, 2), kSmall);
  EXPECT_EQ(stores(f64, 0), kSmall);
  EXPECT_EQ(stores(below, 1), kSmall);
  EXPECT_EQ(stores(f32, 1), kSmall);
  EXPECT_EQ(stores(in_place, 1), kSmall);
  EXPECT_EQ(stores(ragged, 1), kSmall);  // in place it could not stream
  EXPECT_EQ(stores(few_rows, 1), kSmall);  // the stage writes short runs faster
  // A contiguous copy folds to no dims: the rule must not ask for its rows.
  EXPECT_EQ(stores(Folded({4 << 20}, {0}, 1), 1), kSmall);
  Machine avx2 = m;  // 32-byte vectors: in place ran slower there
  avx2.vector_bytes = 32;
  avx2.target = "AVX2";
  EXPECT_EQ(Stores(ChooseStreaming(PlanOptions::Stores::kAuto, f64, ProblemBytes(f64), avx2, 1)),
            kSmall);
  m.one_thread_streaming_bytes = 0;      // regular copies never the slower
  EXPECT_EQ(stores(f64, 1), kSmall);
  m.one_thread_streaming_bytes = 16 << 20;  // not before half the copy's threshold's rule
  EXPECT_EQ(stores(FoldedReversal({1024, 1024}, 8), 1), kOneThread);
}

TEST(BuildNestTest, LoopsWalkTheSourceInMemoryOrder) {
  // [n=3 src=1MiB dst=1MiB][n=128 cols][n=2 src=512 dst=8192][n=2048 rows]
  Problem p{{{3, 1 << 20, 1 << 20}, {128, 4, 16384}, {2, 512, 8192}, {2048, 1024, 4}}, 4, false};
  const Tile tile = ChooseTile(p, Strategy::kTiles, TestMachine());
  const DriverSplit split = SplitDriver(p, tile, FindPartitionUnit(p, 3, 128), 3, 2);
  ASSERT_EQ(split.whole, std::vector<int>{0});
  const Nest nest = BuildNest(p, Strategy::kTiles, tile, split, false);
  EXPECT_EQ(nest.strategy, Strategy::kTiles);
  EXPECT_EQ(nest.items, 3);
  EXPECT_EQ(nest.rows, 2048);
  EXPECT_EQ(nest.src_row_stride, 1024);
  EXPECT_EQ(nest.cols, 128);
  EXPECT_EQ(nest.dst_row_stride, 16384);
  EXPECT_EQ(nest.strip_rows, 384);
  // The tile strategies walk all rows of a plane: one kernel loop, the middle dim.
  ASSERT_EQ(nest.loop_rank, 1);
  EXPECT_EQ(nest.row_block_loop, -1);
  EXPECT_EQ(nest.loops[0].n, 2);
  EXPECT_EQ(nest.loops[0].src_stride, 512);
}

// The planner's loop-order stage on one thread (no driver dims) with ordinary stores unless
// `streaming`; ChooseTile's tile gets the result, as MakePlan's does.
Tile TileWithLoopOrder(const Problem& p, const Machine& m, bool streaming = false) {
  const Strategy strategy = ChooseStrategy(p, m, streaming, 1).strategy;
  Tile tile = ChooseTile(p, strategy, m, streaming);
  const DriverSplit split = SplitDriver(p, tile, PartitionUnit{}, 1, 1);
  tile.dst_loop_dim = DestinationLoopDim(p, strategy, tile, split, m, streaming);
  return tile;
}

TEST(BuildNestTest, WalksTheDimContinuingShortDestinationRunsInnermost) {
  const Machine m = TestMachine();
  // f64 15x11x13x12x52x5 `4,2,5,0,3,1` (z04 of bench-cases-random.txt with its 2-dim at 12 and
  // its 26-dim doubled: runs under 1 KiB, as z04's own 176 B, take the 15-dim into the fused
  // rows, ShortFusedRowsTakeAThirdDim): fused planes of 132 rows (11 x 12) x 260 columns (5 x
  // 52). Destination runs 132 x 8 = 1056 B, continued by the 15-dim (destination stride 1056);
  // source runs 260 x 8 = 2080 B (the fused rows' inner twelve of them are what the 13-dim
  // continues). Source order walks the 13 planes (13 x 274 KB, past half the L1) before the
  // 15-dim's next step completes the runs' shared lines, so the 15-dim goes innermost.
  const Problem z04 = Folded({15, 11, 13, 12, 52, 5}, {4, 2, 5, 0, 3, 1}, 8);
  ASSERT_EQ(ChooseStrategy(z04, m).strategy, Strategy::kFusedTiles);
  const Tile tile = TileWithLoopOrder(z04, m);
  EXPECT_EQ(tile.rows3_dim, -1);
  EXPECT_EQ(PlaneRunBytes(z04, tile, /*destination=*/true), 1056);
  EXPECT_EQ(PlaneRunBytes(z04, tile, /*destination=*/false), 2080);
  ASSERT_GE(tile.dst_loop_dim, 0);
  EXPECT_EQ(z04.dims[static_cast<size_t>(tile.dst_loop_dim)], (Dim{15, 3569280, 1056}));
  const Nest nest = BuildNest(z04, Strategy::kFusedTiles, tile,
                              SplitDriver(z04, tile, PartitionUnit{}, 1, 1), false);
  ASSERT_EQ(nest.loop_rank, 2);
  EXPECT_EQ(nest.loops[0].n, 13);  // source order would have put it innermost
  EXPECT_EQ(nest.loops[1].n, 15);

  // Whole-line destination runs shorter than the source's move too, however few planes lie
  // between: f64 384x114x8x2 `3,1,0,2` deinterleaves 2 columns into 8-row runs of 64 B (one
  // line), continued by the 384-dim; its source runs, 2 x 8 x 8 = 128 B, by the 114-dim.
  const Problem lines = Folded({384, 114, 8, 2}, {3, 1, 0, 2}, 8);
  const Tile lines_tile = TileWithLoopOrder(lines, m);
  EXPECT_EQ(PlaneRunBytes(lines, lines_tile, true), 64);
  EXPECT_EQ(PlaneRunBytes(lines, lines_tile, false), 128);
  ASSERT_GE(lines_tile.dst_loop_dim, 0);
  EXPECT_EQ(lines.dims[static_cast<size_t>(lines_tile.dst_loop_dim)].n, 384);
  // Cache-bypassing stores fetch nothing for writing: whole lines then keep source order.
  EXPECT_EQ(TileWithLoopOrder(lines, m, /*streaming=*/true).dst_loop_dim, -1);

  // Source order stays where the destination runs are the longer side (i8 28x29x10x5x7x44
  // `5,3,2,0,1,4`: 5684 B against 308 B), and where they are partial lines that source order
  // completes within half the L1 (f64 9x40x2x15x10 `4,2,1,0,3`: 1080 B runs continued by the
  // 40-dim, 2 planes of 10800 B inner to it; runs under 1 KiB, as f32 4x86x4x18x20's 288 B,
  // would take the 40-dim into the fused rows).
  const Problem longer = Folded({28, 29, 10, 5, 7, 44}, {5, 3, 2, 0, 1, 4}, 1);
  const Tile longer_tile = TileWithLoopOrder(longer, m);
  EXPECT_EQ(PlaneRunBytes(longer, longer_tile, true), 5684);
  EXPECT_EQ(PlaneRunBytes(longer, longer_tile, false), 308);
  EXPECT_EQ(longer_tile.dst_loop_dim, -1);
  const Problem near = Folded({9, 40, 2, 15, 10}, {4, 2, 1, 0, 3}, 8);
  const Tile near_tile = TileWithLoopOrder(near, m);
  EXPECT_EQ(near_tile.rows3_dim, -1);
  EXPECT_EQ(PlaneRunBytes(near, near_tile, true), 1080);
  EXPECT_EQ(PlaneRunBytes(near, near_tile, false), 1200);
  EXPECT_EQ(near_tile.dst_loop_dim, -1);
  // With a quarter of the L1, the same 2 planes lie past half of it.
  Machine small_l1 = m;
  small_l1.l1d_bytes = 12 * 1024;
  EXPECT_GE(TileWithLoopOrder(near, small_l1).dst_loop_dim, 0);

  // Whole-line destination runs against source runs that are not whole lines: c128
  // 15x4x237x5x7 `3,2,0,4,1` writes 448 B runs continued by the 15-dim and reads 560 B ones
  // continued by the 237-dim; with the 15-dim innermost the source's shared lines wait 15
  // planes of 2240 B, within half the L2, so it moves. f32 12x134x5x53x4 `3,2,1,4,0` (192 B
  // against 848 B) would make them wait 134 planes of 10176 B, past half the L2: it stays.
  const Problem within = Folded({15, 4, 237, 5, 7}, {3, 2, 0, 4, 1}, 16);
  const Tile within_tile = TileWithLoopOrder(within, m);
  EXPECT_EQ(PlaneRunBytes(within, within_tile, true), 448);
  EXPECT_EQ(PlaneRunBytes(within, within_tile, false), 560);
  ASSERT_GE(within_tile.dst_loop_dim, 0);
  EXPECT_EQ(within.dims[static_cast<size_t>(within_tile.dst_loop_dim)].n, 15);
  const Problem past = Folded({12, 134, 5, 53, 4}, {3, 2, 1, 4, 0}, 4);
  const Tile past_tile = TileWithLoopOrder(past, m);
  EXPECT_EQ(PlaneRunBytes(past, past_tile, true), 192);
  EXPECT_EQ(PlaneRunBytes(past, past_tile, false), 848);
  EXPECT_EQ(past_tile.dst_loop_dim, -1);

  // Only the kernel's own loops lie between: f64 5x36x14x19x13x2 `3,0,5,2,1,4` de-interleaves
  // planes of 208 B whose 104 B destination runs the 36-dim continues. On one thread the 19-
  // and 14-dims (53 KB of planes) lie between in source order, and it moves; on two the
  // driver takes the 14-dim (and the 5-dim), leaving 19 planes (4 KB): it stays.
  const Problem split_apart = Folded({5, 36, 14, 19, 13, 2}, {3, 0, 5, 2, 1, 4}, 8);
  const Tile one = TileWithLoopOrder(split_apart, m);
  ASSERT_GE(one.dst_loop_dim, 0);
  EXPECT_EQ(split_apart.dims[static_cast<size_t>(one.dst_loop_dim)].n, 36);
  const DriverSplit two = SplitDriver(split_apart, one, PartitionUnit{}, 32, 2);
  ASSERT_NE(std::find(two.whole.begin(), two.whole.end(), 3), two.whole.end());
  EXPECT_EQ(DestinationLoopDim(split_apart, Strategy::kDeinterleaveCols, one, two, m, false), -1);
}

TEST(BuildNestTest, StagesFusedPlanesWhoseRunsShareLines) {
  const Machine m = TestMachine();
  // bf16 3x39x4x157x45x15 `3,2,1,5,4,0` (z10 of bench-cases-random.txt): planes of 135 rows
  // (3 x 45) x 15 columns, rows 270 B apart, so each plane's destination is one run of 4050 B
  // that starts and ends part-way into lines: staged with cache-bypassing stores only.
  const Problem p = Folded({3, 39, 4, 157, 45, 15}, {3, 2, 1, 5, 4, 0}, 2);
  ASSERT_EQ(ChooseStrategy(p, m, true).strategy, Strategy::kFusedTiles);
  const Tile tile = ChooseTile(p, Strategy::kFusedTiles, m, true);
  ASSERT_EQ(tile.stage_pitch, 0);
  const Nest staged = BuildNest(p, Strategy::kFusedTiles, tile, DriverSplit{}, true);
  EXPECT_TRUE(staged.stage_planes);
  EXPECT_EQ(staged.rows, 135);
  EXPECT_EQ(staged.cols, 15);
  const PlaneRuns one = FusedPlaneRuns(staged.rows, 2, staged.cols, staged.cols_inner,
                                       staged.dst_row_stride, staged.dst_outer_col_stride);
  EXPECT_EQ(one.bytes, 4050);
  EXPECT_EQ(one.count, 1);
  EXPECT_FALSE(BuildNest(p, Strategy::kFusedTiles, tile, DriverSplit{}, false).stage_planes);
  // i8 9x286x429x3x3x13 `4,1,0,3,5,2` (z15): 429 rows x 13 x 3 columns, the outer columns
  // 43 MB apart in the destination: three runs of 5577 B per plane.
  const Problem three = Folded({9, 286, 429, 3, 3, 13}, {4, 1, 0, 3, 5, 2}, 1);
  ASSERT_EQ(ChooseStrategy(three, m, true).strategy, Strategy::kFusedTiles);
  const Tile t3 = ChooseTile(three, Strategy::kFusedTiles, m, true);
  const Nest runs = BuildNest(three, Strategy::kFusedTiles, t3, DriverSplit{}, true);
  EXPECT_TRUE(runs.stage_planes);
  const PlaneRuns pieces = FusedPlaneRuns(runs.rows, 1, runs.cols, runs.cols_inner,
                                          runs.dst_row_stride, runs.dst_outer_col_stride);
  EXPECT_EQ(pieces.bytes, 5577);
  EXPECT_EQ(pieces.count, 3);
  EXPECT_EQ(pieces.stride, 43065594);
  // Rows whole lines apart stream in the walk itself: f32 planes of 16 x 16, rows 64 B apart.
  const Problem lines = FoldedReversal({16, 16, 16, 16, 16, 16}, 4);
  const Tile tl = ChooseTile(lines, Strategy::kFusedTiles, m, true);
  if (tl.stage_pitch == 0) {
    EXPECT_FALSE(BuildNest(lines, Strategy::kFusedTiles, tl, DriverSplit{}, true).stage_planes);
  }
  // Runs shorter than kMinStagedPlaneRunBytes stay in the walk: planes of 27 x 5 bf16 (270 B).
  const Problem shortrun = Folded({3, 20, 2, 130, 9, 5}, {3, 2, 1, 5, 4, 0}, 2);
  if (ChooseStrategy(shortrun, m, true).strategy == Strategy::kFusedTiles) {
    const Tile ts = ChooseTile(shortrun, Strategy::kFusedTiles, m, true);
    EXPECT_FALSE(BuildNest(shortrun, Strategy::kFusedTiles, ts, DriverSplit{}, true).stage_planes);
  }
}

TEST(BuildNestTest, RowCopyWalksRowBlocks) {
  // 64-byte elements: [n=8 src=64 dst=1024][n=100 src=512 dst=64]
  Problem p{{{8, 64, 6400}, {100, 512, 64}}, 64, false};
  const Tile tile = ChooseTile(p, Strategy::kRowCopy, TestMachine());
  EXPECT_EQ(tile.row_block, 16);  // 1 KiB runs
  const Nest nest = BuildNest(p, Strategy::kRowCopy, tile, DriverSplit{}, false);
  ASSERT_EQ(nest.loop_rank, 1);
  EXPECT_EQ(nest.row_block_loop, 0);
  EXPECT_EQ(nest.loops[0].n, 7);  // ceil(100 / 16)
}

TEST(SbufTest, MapsTheLeadingDimOntoPartitionTiles) {
  const SbufMapping m = MapOutput(std::vector<int64_t>{300, 64}, std::vector<int64_t>{0, 1}, 4,
                                  DeviceGeneration::kTrn2);
  EXPECT_EQ(m.leading, 300);
  EXPECT_EQ(m.tiles, 3);
  EXPECT_EQ(m.last_tile_rows, 300 - 256);
  EXPECT_EQ(m.row_bytes, 256);
  EXPECT_EQ(m.rows_per_partition, 212984 / 256);
  EXPECT_EQ(GeometryOf(DeviceGeneration::kTrn1).usable_bytes, 180224);
  EXPECT_EQ(GeometryOf(DeviceGeneration::kTrn3).partition_bytes, 256 * 1024);
}

}  // namespace
}  // namespace iotx::kernels
