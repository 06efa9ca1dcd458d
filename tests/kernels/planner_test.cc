// The planner's stages, each alone, against values derived by hand from their definitions.
#include <gtest/gtest.h>

#include <numeric>

#include "kernels/nest.h"
#include "kernels/planner.h"
#include "kernels/problem.h"
#include "kernels/sbuf.h"

namespace iotx::kernels {
namespace {

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

TEST(ChooseKernelTest, TriesCopyRowCopyTransposeInOrder) {
  const auto kinds = KernelCandidates();
  ASSERT_EQ(kinds.size(), 3u);
  EXPECT_EQ(kinds[0].kind, KernelKind::kCopy);
  EXPECT_EQ(kinds[1].kind, KernelKind::kRowCopy);
  EXPECT_EQ(kinds[2].kind, KernelKind::kTranspose);

  EXPECT_EQ(ChooseKernel(Problem{{}, 96, false}).kind, KernelKind::kCopy);
  EXPECT_EQ(ChooseKernel(Problem{{{3, 4, 8}, {2, 12, 4}}, 4, false}).kind, KernelKind::kTranspose);
  EXPECT_EQ(ChooseKernel(Problem{{{3, 16, 32}, {2, 48, 16}}, 16, false}).kind,
            KernelKind::kTranspose);
  EXPECT_EQ(ChooseKernel(Problem{{{3, 64, 128}, {2, 192, 64}}, 64, false}).kind,
            KernelKind::kRowCopy);
  EXPECT_EQ(ChooseKernel(Problem{{{3, 12, 24}, {2, 36, 12}}, 12, false}).kind,
            KernelKind::kRowCopy);
}

TEST(ChooseTileTest, RowsAreDestinationInnermostColumnsSourceInnermost) {
  // [n=128 src=4 dst=8192][n=2048 src=512 dst=4]
  Problem p{{{128, 4, 8192}, {2048, 512, 4}}, 4, false};
  const Tile regular = ChooseTile(p, KernelKind::kTranspose, /*streaming=*/false);
  EXPECT_EQ(regular.rows_dim, 1);
  EXPECT_EQ(regular.cols_dim, 0);
  EXPECT_EQ(regular.row_block, 16);  // 64 bytes of f32
  EXPECT_EQ(regular.col_granule, 32);
  const Tile streaming = ChooseTile(p, KernelKind::kTranspose, /*streaming=*/true);
  EXPECT_EQ(streaming.row_block, 16 * StreamLines(4));
  EXPECT_EQ(streaming.stream_lines, StreamLines(4));
}

TEST(SplitDriverTest, BlocksTheLeadingDimOnPartitionTiles) {
  // 8192 x 8192 f32 transpose: the folded dim 0 is the output's dim 0 (8192 rows = 64 tiles).
  Problem p{{{8192, 4, 32768}, {8192, 32768, 4}}, 4, false};
  const Tile tile = ChooseTile(p, KernelKind::kTranspose, true);
  const PartitionUnit unit = FindPartitionUnit(p, 8192);
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

TEST(SplitDriverTest, TakesWholeOuterDimsAndCountsItemsPerTile) {
  // [n=256 (not a tile dim)][n=128 cols][n=64 rows]: 256 items, partition tile = 128 of them.
  Problem p{{{256, 64 * 128 * 4, 64 * 128 * 4}, {128, 4, 64 * 4}, {64, 128 * 4, 4}}, 4, false};
  const Tile tile = ChooseTile(p, KernelKind::kTranspose, false);
  const DriverSplit split = SplitDriver(p, tile, FindPartitionUnit(p, 256), 64, 2);
  EXPECT_EQ(split.whole, std::vector<int>{0});
  EXPECT_EQ(split.blocked_dim, -1);
  EXPECT_EQ(split.items, 256);
  EXPECT_EQ(split.align_items, 128);
}

TEST(SplitDriverTest, SmallLeadingDimIsOnePartitionTile) {
  Problem p{{{3, 1 << 20, 1 << 20}, {128, 4, 8192}, {2048, 512, 4}}, 4, false};
  EXPECT_EQ(FindPartitionUnit(p, 3).d0_per_tile, 0);
  const DriverSplit split =
      SplitDriver(p, ChooseTile(p, KernelKind::kTranspose, false), FindPartitionUnit(p, 3), 32, 2);
  EXPECT_EQ(split.align_items, 0);
  EXPECT_FALSE(split.dst_prefix);
  // The outer dim whole (3 items), then blocks of rows: 11 blocks of 192 rows (16-row granule).
  EXPECT_EQ(split.whole, std::vector<int>{0});
  EXPECT_EQ(split.blocked_dim, 2);
  EXPECT_EQ(split.block, 192);
  EXPECT_EQ(split.items, 3 * 11);
}

TEST(SplitDriverTest, OneItemWhenNotParallel) {
  Problem p{{{128, 4, 8192}, {2048, 512, 4}}, 4, false};
  const DriverSplit split =
      SplitDriver(p, ChooseTile(p, KernelKind::kTranspose, false), FindPartitionUnit(p, 128), 1, 2);
  EXPECT_EQ(split.items, 1);
  EXPECT_TRUE(split.driver.empty());
}

TEST(SplitDriverTest, FewBlocksAreRoundedToTheThreadCount) {
  // 768 x 768 f32 transpose, 6 partition tiles: 2 KiB column blocks (512) would leave one
  // block, so each of the 2 threads gets one: blocks of 384, a multiple of 128.
  Problem p{{{768, 4, 3072}, {768, 3072, 4}}, 4, false};
  const DriverSplit split = SplitDriver(p, ChooseTile(p, KernelKind::kTranspose, true),
                                        FindPartitionUnit(p, 768), 32, 2);
  EXPECT_EQ(split.block, 384);
  EXPECT_EQ(split.items, 2);
  EXPECT_EQ(split.align_items, 1);
}

TEST(SplitDriverTest, SingleTileTwoDimSplitsRows) {
  // (4096, 100) -> (100, 4096): output dim 0 = 100 rows, one partition tile; rows in blocks.
  Problem p{{{100, 4, 16384}, {4096, 400, 4}}, 4, false};
  const DriverSplit split = SplitDriver(p, ChooseTile(p, KernelKind::kTranspose, false),
                                        FindPartitionUnit(p, 100), 32, 2);
  EXPECT_FALSE(split.dst_prefix);
  EXPECT_EQ(split.blocked_dim, 1);
  EXPECT_EQ(split.block, 128);
  EXPECT_EQ(split.items, 32);
}

TEST(SplitCopyTest, ChunksEndOnPartitionTiles) {
  // 1024 rows of 4 KiB: a partition tile is 512 KiB.
  const DriverSplit split = SplitCopy(int64_t{4} << 20, 1024, 8);
  EXPECT_EQ(split.items * split.block >= (int64_t{4} << 20), true);
  EXPECT_EQ((split.block * split.align_items) % (512 * 1024), 0);
}

TEST(TargetItemsTest, OneItemBelowTheParallelThreshold) {
  EXPECT_EQ(TargetItems(kParallelMinBytes - 1, 8), 1);
  EXPECT_EQ(TargetItems(int64_t{1} << 30, 1), 1);
  EXPECT_GT(TargetItems(int64_t{1} << 30, 2), 2);
}

TEST(ChooseStreamingTest, OptionsOverrideTheSizeRule) {
  EXPECT_FALSE(ChooseStreaming(PlanOptions::Stores::kRegular, int64_t{1} << 40));
  EXPECT_TRUE(ChooseStreaming(PlanOptions::Stores::kStreaming, 64));
  EXPECT_FALSE(ChooseStreaming(PlanOptions::Stores::kAuto, StreamingThresholdBytes() - 1));
  EXPECT_TRUE(ChooseStreaming(PlanOptions::Stores::kAuto, StreamingThresholdBytes()));
}

TEST(BuildNestTest, LoopsWalkTheSourceInMemoryOrder) {
  // [n=3 src=1MiB dst=1MiB][n=128 cols][n=2 src=512 dst=8192][n=2048 rows]
  Problem p{{{3, 1 << 20, 1 << 20}, {128, 4, 16384}, {2, 512, 8192}, {2048, 1024, 4}}, 4, false};
  const Tile tile = ChooseTile(p, KernelKind::kTranspose, false);
  const DriverSplit split = SplitDriver(p, tile, FindPartitionUnit(p, 3), 3, 2);
  ASSERT_EQ(split.whole, std::vector<int>{0});
  const Nest nest = BuildNest(p, KernelKind::kTranspose, tile, split, false);
  EXPECT_EQ(nest.items, 3);
  EXPECT_EQ(nest.rows, 2048);
  EXPECT_EQ(nest.src_row_stride, 1024);
  EXPECT_EQ(nest.cols, 128);
  EXPECT_EQ(nest.dst_row_stride, 16384);
  ASSERT_EQ(nest.loop_rank, 2);
  // Row blocks of 16 rows step 16 KiB in the source, the middle dim 512 B: blocks outside.
  EXPECT_EQ(nest.row_block_loop, 0);
  EXPECT_EQ(nest.loops[0].n, 2048 / 16);
  EXPECT_EQ(nest.loops[1].n, 2);
  EXPECT_EQ(nest.loops[1].src_stride, 512);
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
