// One test per element width of src/kernels/widths.inc (the list is expanded here, so a width
// added there is tested here), on every Highway target compiled into the kernels that this
// CPU supports: for each width, layouts that make the planner pick each tile strategy (the
// test checks the pick in Describe), edge shapes (1 x n, m x 1, non-multiples of the tile,
// identity, zero-size, rank 7-8), both store kinds, 1 and 2 threads, against the naive
// reference (tests/support/reference_transpose.cc), which shares no code with the kernels.
#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <numeric>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/kernel_test_util.h"
#include "kernels/machine.h"

namespace iotx::test {
namespace {

struct WidthParam {
  size_t width;
  int64_t target;
};

class WidthTest : public ::testing::TestWithParam<WidthParam> {
 protected:
  void SetUp() override { hwy::SetSupportedTargetsForTest(GetParam().target); }
  void TearDown() override { hwy::SetSupportedTargetsForTest(0); }

  // The one-thread plan of `shape`/`perm` names `joined` where the `extent` elements its
  // interleaving vectors run along are under 16 bytes of this width and the target has vectors.
  void ExpectJoinedWhereNarrow(std::vector<int64_t> shape, std::vector<int64_t> perm,
                               int64_t extent, const std::string& joined) {
    PlanOptions options;
    options.max_threads = 1;
    auto plan = MakePlan(shape, perm, GetParam().width, options);
    ASSERT_TRUE(plan.has_value());
    const std::string text = iotx::Describe(**plan);
    if (extent * static_cast<int64_t>(GetParam().width) < 16 &&
        kernels::ChosenVectorBytes() >= 16) {
      EXPECT_NE(text.find(joined), std::string::npos) << text;
    }
  }

  // Runs `shape`/`perm` with both store kinds and 1 and 2 threads; when `strategy` is not
  // empty, the plan with ordinary stores must have chosen it (with `wide_only`, only on
  // 64-byte-vector targets).
  void Check(std::vector<int64_t> shape, std::vector<int64_t> perm, const std::string& strategy = "",
             bool wide_only = false) {
    const size_t width = GetParam().width;
    if (!strategy.empty() && (!wide_only || kernels::ChosenVectorBytes() >= 64)) {
      // With ordinary stores: a plan with cache-bypassing ones never stages (StagesTiles).
      PlanOptions regular;
      regular.stores = PlanOptions::Stores::kRegular;
      regular.max_threads = 2;  // the strategy depends on each thread's share (StagesTiles)
      auto plan = MakePlan(shape, perm, width, regular);
      ASSERT_TRUE(plan.has_value());
      const std::string text = iotx::Describe(**plan);
      EXPECT_NE(text.find("strategy: " + strategy + " "), std::string::npos)
          << "width " << width << "\n" << text;
    }
    for (auto stores : {PlanOptions::Stores::kRegular, PlanOptions::Stores::kStreaming}) {
      for (int threads : {1, 2}) {
        Case c;
        c.shape = shape;
        c.perm = perm;
        c.elem = width;
        c.options.stores = stores;
        c.options.max_threads = threads;
        c.threads = threads;
        c.dst_offset = threads == 2 ? 64 : 0;
        c.seed = static_cast<uint64_t>(width * 131);
        CheckCase(c);
        if (HasFatalFailure()) return;
      }
    }
  }

  // Runs `shape`/`perm` with cache-bypassing stores into destinations each of `offsets` bytes
  // past an aligned allocation, in one Execute, in one range and in ranges of a third (each
  // range's plan its own planes, first and last lines), on 1 and 2 threads, against the
  // reference; `seed` seeds the data (one source for all of them: CheckCase computes its
  // reference once).
  // `sized`: each plan is made for the threads it runs on (PlanOptions::max_threads), so that
  // a one-thread run is one item.
  void CheckStreamedAt(const std::vector<int64_t>& shape, const std::vector<int64_t>& perm,
                       const std::vector<size_t>& offsets, uint64_t seed, bool sized = false) {
    const size_t width = GetParam().width;
    size_t bytes = width;
    for (int64_t n : shape) bytes *= static_cast<size_t>(n);
    for (size_t offset : offsets) {
      for (size_t range_bytes : {size_t{0}, bytes, bytes / 3 + 1}) {
        for (int threads : {1, 2}) {
          Case c;
          c.shape = shape;
          c.perm = perm;
          c.elem = width;
          c.options.stores = PlanOptions::Stores::kStreaming;
          if (sized) c.options.max_threads = threads;
          c.threads = threads;
          c.dst_offset = offset;
          c.range_bytes = range_bytes;
          c.seed = seed;
          CheckCase(c);
          if (HasFatalFailure()) return;
        }
      }
    }
  }

  // Describe of the plan with cache-bypassing stores (the planner's sign of a DRAM-sized
  // output), which names the walk the kernels run there.
  std::string StreamingDescription(const std::vector<int64_t>& shape,
                                   const std::vector<int64_t>& perm) {
    PlanOptions streaming;
    streaming.stores = PlanOptions::Stores::kStreaming;
    auto plan = MakePlan(shape, perm, GetParam().width, streaming);
    EXPECT_TRUE(plan.has_value());
    return plan.has_value() ? iotx::Describe(**plan) : std::string();
  }

  // Whether this target's band walk can realign destination rows `dst_row_stride` bytes apart
  // (BandWalkRealigns in nest.h), as the planner asks it past Machine::realign_rows_bytes.
  bool RealignsRows(int64_t dst_row_stride) const {
    return kernels::BandWalkRealigns(
        std::string_view(kernels::ChosenTargetName()).starts_with("AVX3"),
        kernels::ChosenVectorBytes(), static_cast<int64_t>(GetParam().width), dst_row_stride);
  }
};

using Layouts = std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>;

TEST_P(WidthTest, TilesWalkedInBands) {
  // Not a power of two apart: in place. Sides straddle the tile (64 / width rows, one vector).
  Check({200, 136}, {1, 0});
  Check({67, 129}, {1, 0});
}

// Planes of few rows in DRAM walk several bands at a time (Nest::band_group) with
// cache-bypassing stores, for the widths whose tiles have at most 16 rows: rows of 64 and 16,
// a last group of fewer bands, and columns past the last whole tile.
TEST_P(WidthTest, BandsInGroups) {
  const size_t width = GetParam().width;
  const int64_t band = kernels::ChosenVectorBytes() / static_cast<int64_t>(width);
  for (const auto& [shape, perm] : Layouts{
           {{3, 64, 16 * band + 3 * band + 5}, {0, 2, 1}},
           {{2, 16, 40 * band}, {0, 2, 1}},
       }) {
    const std::string text = StreamingDescription(shape, perm);
    if (text.empty()) return;  // MakePlan failed (recorded)
    const bool grouped = text.find("bands of") != std::string::npos;
    if (width >= 4 && kernels::ChosenVectorBytes() >= 32 &&
        shape[1] * static_cast<int64_t>(width) <= 512) {
      EXPECT_TRUE(grouped) << "width " << width << "\n" << text;
    } else if (width <= 2) {
      EXPECT_FALSE(grouped) << "width " << width << "\n" << text;
    }
    Check(shape, perm);
    if (HasFatalFailure()) return;
  }
}

// The walk a machine's calibration picks for planes past the cache where short strips read
// faster (Machine::short_strips_bytes, walk_calibration.h): strips of 32 rows (one tile of 1- and
// 2-byte elements), 1 KiB of each source row at a time, for every width, with a last group
// of fewer bands, a last strip of fewer rows, columns past the last whole tile and rows not a
// power of two apart; the calibration of this machine is overridden both ways.
TEST_P(WidthTest, ShortStripsInGroups) {
  const size_t width = GetParam().width;
  const auto w = static_cast<int64_t>(width);
  const int64_t band = kernels::ChosenVectorBytes() / w;
  // The calibration's choice comes back however the test ends (a fatal failure returns early).
  const RestoreMachineOverrides restore;
  for (const bool short_strips : {true, false}) {
    kernels::SetShortStripsForTest(short_strips);
    for (const auto& [shape, perm] : Layouts{
             {{160, 24 * band + 3}, {1, 0}},      // rows 5 strips, a group and a half
             {{2, 96, 17 * band}, {0, 2, 1}},     // a partial strip per plane
             {{512 / w + 64, 4096 / w}, {1, 0}},  // rows 4 KiB apart
         }) {
      const std::string text = StreamingDescription(shape, perm);
      if (text.empty()) break;  // MakePlan failed (recorded)
      const bool named = text.find("short strips:") != std::string::npos;
      // Only tile walks whose destination rows are whole lines apart stream in place.
      const bool streams_in_place = text.find("strategy: tiles ") != std::string::npos &&
                                    shape[shape.size() - 2] * w % 64 == 0;
      if (streams_in_place) {
        EXPECT_EQ(named, short_strips) << "width " << width << "\n" << text;
      }
      Check(shape, perm);
      if (HasFatalFailure()) return;
    }
  }
}

// Destinations that start part-way into a line (as `iotx apply`'s buffers at a file offset's
// phase do), with cache-bypassing stores: each plane's first rows up to a line boundary are
// peeled as an edge (TilesPlane, DeinterleavePlane; InterleavePlane peels columns up to one
// that starts on a line), and the row blocks of a range's plan (one partition tile: the
// planner cuts source rows) move their boundaries onto lines (LineRowShift), whole and in
// ranges, at offsets that are multiples of the width and ones that are not (ordinary stores).
TEST_P(WidthTest, DestinationsPartWayIntoALine) {
  const size_t width = GetParam().width;
  const auto rows_per_line = static_cast<int64_t>(64 / width);
  std::vector<size_t> offsets = {width, 64 - width, 40 / width * width};
  if (width > 1) offsets.push_back(width + 1);
  for (const auto& [shape, perm] : Layouts{
           {{24 * rows_per_line, 4096 / static_cast<int64_t>(width) + 5}, {1, 0}},
           {{1024, 2048 / static_cast<int64_t>(width) + 3}, {1, 0}},
           {{3, 17 * rows_per_line, 1024 / static_cast<int64_t>(width) + 3}, {0, 2, 1}},
           {{rows_per_line * ((1 << 13) + 3), 3}, {1, 0}},  // deinterleave-cols
           {{3, rows_per_line * ((1 << 12) + 3)}, {1, 0}},  // interleave-rows
           {{4, rows_per_line * (1 << 12) + 5}, {1, 0}},
       }) {
    CheckStreamedAt(shape, perm, offsets, width * 7);
    if (HasFatalFailure()) return;
  }
}

// Cache-bypassing stores where destination rows are not whole lines apart and longer than a
// band walk's strip (StagesStreamingRuns in planner_strategy.cc): blocks through a stage, each
// writing the lines its rows start whole and completing the last from one row of tiles of the next
// block (StreamOwnedLines); the plane's first and last partial lines with ordinary stores. A
// 2-D plane (staged tiles) and a fused one (z11 of bench-cases-random.txt, scaled: 7 x 38
// columns, 972 rows), destinations aligned and part-way into a line (CheckStreamedAt).
TEST_P(WidthTest, StreamedRunsWhoseLinesBlocksShare) {
  const size_t width = GetParam().width;
  const auto w = static_cast<int64_t>(width);
  const int64_t band = kernels::ChosenVectorBytes() / w;
  const int64_t rows = 4001;  // odd: rows * width is never a whole number of lines
  const auto& machine = kernels::CurrentMachine(false);
  const int64_t strip_rows = machine.l1d_bytes / (2 * kernels::ChosenVectorBytes());
  for (const auto& [shape, perm] : Layouts{
           {{rows, 3 * band + 5}, {1, 0}},
           {{81, 12, 38, 7}, {3, 2, 0, 1}},
       }) {
    const std::string text = StreamingDescription(shape, perm);
    if (text.empty()) return;  // MakePlan failed (recorded)
    if (shape.size() == 2 && rows > strip_rows && width <= 8) {
      EXPECT_NE(text.find("strategy: staged-tiles "), std::string::npos) << text;
      EXPECT_EQ(text.find("stores ordinarily though the plan streams"), std::string::npos) << text;
    }
    if (text.find("strategy: staged-tiles ") != std::string::npos ||
        (text.find("strategy: fused-tiles ") != std::string::npos &&
         text.find("walk:     blocks of") != std::string::npos)) {
      EXPECT_NE(text.find("are not whole lines apart: a band walk's strips"), std::string::npos)
          << text;
    }
    CheckStreamedAt(shape, perm, {0, 3 * width}, width * 11);
    if (HasFatalFailure()) return;
  }
}

// Cache-bypassing stores where destination rows are not whole lines apart, on AVX-512 for 8-
// and 16-byte elements (BandWalkRealigns, nest.h): the band walk realigns each row's run
// (TileBandsRealigned), streaming the lines between its tiles whole and writing each run's
// first and last partial lines with byte-masked stores; at any size here (the planner's
// Machine::realign_rows_bytes, past the cache, set to 1). Rows of several strips (so strips
// meet part-way into lines) and a partial tile of them, columns past the last whole band, rows
// that follow each other (2-D, past the dense stage's two strips) and rows far apart (3-D
// `2,1,0`), destinations 0, 8 and 40 bytes into a line, 1 and 2 threads, whole and in ranges:
// every byte against the reference, so a wrong join, a masked store past its bytes or a line
// left out shows. Elsewhere the same layouts take the staged walk, checked the same way.
TEST_P(WidthTest, RealignedRunsOfRowsNotWholeLinesApart) {
  const RestoreMachineOverrides restore;
  kernels::SetRealignRowsForTest(true);
  const size_t width = GetParam().width;
  const auto w = static_cast<int64_t>(width);
  const int64_t band = kernels::ChosenVectorBytes() / w;
  const auto& machine = kernels::CurrentMachine(false);
  const int64_t strip_rows = machine.l1d_bytes / (2 * kernels::ChosenVectorBytes());
  const int64_t rows = 2 * strip_rows + 9;
  for (const auto& [shape, perm] : Layouts{
           {{rows, 5 * band + 3}, {1, 0}},
           {{rows, 3, 5 * band + 1}, {2, 1, 0}},
       }) {
    const std::string text = StreamingDescription(shape, perm);
    if (text.empty()) return;  // MakePlan failed (recorded)
    const int64_t dst_row_stride = w * (shape.size() == 2 ? rows : 3 * rows);
    ASSERT_NE(dst_row_stride % kernels::kLineBytes, 0);
    if (RealignsRows(dst_row_stride)) {
      EXPECT_NE(text.find("strategy: tiles "), std::string::npos) << text;
      EXPECT_NE(text.find("each row's line between its last two tiles leaves whole"),
                std::string::npos)
          << text;
    } else {
      EXPECT_EQ(text.find("each row's line between its last two tiles"), std::string::npos) << text;
    }
    CheckStreamedAt(shape, perm, {0, 8, 40}, width * 13);
    if (HasFatalFailure()) return;
  }
}

// Cache-bypassing stores where destination rows follow each other but are not whole lines
// long (StagesDenseRows in nest.h): blocks of whole columns through a stage laid out as the
// destination, each streaming the lines its bytes start and completing the last from one band
// past it (DenseStagedPlane). 58 rows (never whole lines, a partial tile of rows), columns for
// three stages and a partial band; one plane and three planes that follow each other; 5 rows,
// and 5 rows with one column past a stage's block; 725 rows, longer than a band walk's strip,
// which the planner walks so rather than staged (StagesTiles: each block reads 256 B of every
// source row); destinations aligned and part-way into a line (CheckStreamedAt).
TEST_P(WidthTest, DenseRowsThroughAStage) {
  const size_t width = GetParam().width;
  const auto w = static_cast<int64_t>(width);
  const int64_t rows = 58;
  const int64_t cols = 3 * (kernels::kMaxDenseStageBytes / (rows * w)) + 5;
  // Rows of 5 elements (shorter than a line: the halo spans several bands), one column past a
  // whole stage's block: too few for the halo, so they join the block (a review found their
  // line left unwritten when they made a block of their own).
  const int64_t band = std::max<int64_t>(1, kernels::ChosenVectorBytes() / w);
  const int64_t block = kernels::DenseStageBlockCols(5 * w, band);
  for (const auto& [shape, perm] : Layouts{
           {{rows, cols}, {1, 0}},
           {{3, rows, cols / 3}, {0, 2, 1}},
           {{5, 4099}, {1, 0}},
           {{5, block + 1}, {1, 0}},
           {{3, 5, block + 1}, {0, 2, 1}},
           {{725, 700}, {1, 0}},
       }) {
    const std::string text = StreamingDescription(shape, perm);
    if (text.empty()) return;  // MakePlan failed (recorded)
    if (text.find("strategy: tiles ") != std::string::npos) {
      EXPECT_NE(text.find("destination rows follow each other"), std::string::npos) << text;
      EXPECT_NE(text.find("whole columns through a buffer"), std::string::npos) << text;
    } else if (shape[0] == 725 && width == 2 && kernels::ChosenVectorBytes() >= 64) {
      ADD_FAILURE() << "bf16 725-row planes stream through the band walk's dense stage\n" << text;
    }
    CheckStreamedAt(shape, perm, {0, width, 5 * width}, width * 13);
    if (HasFatalFailure()) return;
  }
}

// Cache-bypassing stores for fused planes whose rows follow each other in the destination
// but are not whole lines apart (Nest::stage_planes, FusedPlaneThroughStage): each plane
// through a stage laid out as its runs, whose whole lines stream. z10 of
// bench-cases-random.txt scaled (planes of 135 x 15, one run each) and z15 scaled (planes of
// 429 rows x 13 x 3 columns, three runs each), on plans sized for the threads they run on;
// and z10's planes in a layout whose output's first dim spans two partition tiles, so that
// two threads' items are blocks of it (their boundaries part-way into lines). Destinations
// aligned and part-way into a line, whole and in ranges, against the naive reference.
TEST_P(WidthTest, FusedPlanesThroughAStage) {
  const size_t width = GetParam().width;
  for (const auto& [shape, perm] : Layouts{
           {{3, 39, 2, 5, 45, 15}, {3, 2, 1, 5, 4, 0}},
           {{3, 10, 429, 3, 3, 13}, {4, 1, 0, 3, 5, 2}},
           {{3, 4, 2, 130, 45, 15}, {3, 2, 1, 5, 4, 0}},
       }) {
    const std::string text = StreamingDescription(shape, perm);
    if (text.empty()) return;  // MakePlan failed (recorded)
    // bf16 on 64-byte vectors fuses these planes (narrower vectors walk them as tiles).
    if (width == 2 && kernels::ChosenVectorBytes() >= 64) {
      EXPECT_NE(text.find("strategy: fused-tiles "), std::string::npos) << text;
      EXPECT_NE(text.find("\nstage:    each plane through a buffer"), std::string::npos) << text;
    }
    CheckStreamedAt(shape, perm, {0, 3 * width}, width * 17, true);
    if (HasFatalFailure()) return;
  }
}

// Walks with ordinary stores past half the L2 fetch ahead (Nest::prefetch_ahead): the band
// walk the next band's source and the destination lines kStoreTilesAhead tiles down, the
// staged walk the next run's lines; both forced on for small planes, so that the prefetches
// near a strip's or block's end are exercised for every width, against the naive reference.
TEST_P(WidthTest, WalksThatFetchAhead) {
  const size_t width = GetParam().width;
  const auto n = static_cast<int64_t>(4096 / width);
  const RestoreMachineOverrides restore;
  kernels::SetPrefetchAheadForTest(true);
  for (const auto& [shape, perm] : Layouts{
           {{200, 136}, {1, 0}},       // band walk, rows and columns past whole tiles
           {{3, 67, 129}, {0, 2, 1}},  // three planes
           {{n / 4, n}, {1, 0}},       // staged where the vectors fill the plane
           {{n + 16, n}, {1, 0}},      // a partial block of rows
       }) {
    PlanOptions regular;
    regular.stores = PlanOptions::Stores::kRegular;
    auto plan = MakePlan(shape, perm, width, regular);
    ASSERT_TRUE(plan.has_value());
    const std::string text = iotx::Describe(**plan);
    if (text.find("strategy: tiles ") != std::string::npos) {
      EXPECT_NE(text.find("and the destination lines of the tile"), std::string::npos) << text;
    } else if (text.find("strategy: staged-tiles ") != std::string::npos) {
      EXPECT_NE(text.find("each fetching the next run's lines"), std::string::npos) << text;
    }
    Check(shape, perm);
    if (HasFatalFailure()) return;
  }
}

TEST_P(WidthTest, StagedTilesForAliasingStrides) {
  // Rows 4 KiB apart alias in L1: the staged walk (on targets whose vectors fill the plane).
  // 8-byte tiles stage only where each thread's share leaves half the L2 (StagesTiles): 8 MiB.
  const auto n = static_cast<int64_t>(4096 / GetParam().width);
  const std::string staged = GetParam().width <= 8 ? "staged-tiles" : "";
  const int64_t rows = GetParam().width >= 8 ? 4 * n : n / 4;
  Check({rows, n}, {1, 0}, staged, true);
  Check({rows + 16, n}, {1, 0}, staged, true);  // a partial block of rows
}

TEST_P(WidthTest, FusedTilesForSmallPlanes) {
  // 16-wide dims reversed: planes of 16 x 16 joined with their neighbours.
  Check({16, 16, 16, 16}, {3, 2, 1, 0}, "fused-tiles", true);
  Check({4, 16, 8, 16}, {3, 2, 1, 0}, "fused-tiles", true);
  Check({64, 3, 64}, {2, 1, 0}, "fused-tiles", true);
  // Inner extents that do not divide the tile (tiles straddle them; partial tiles at the
  // fused plane's ends), one side fused or both (shapes of bench-cases-random.txt, scaled).
  Check({28, 28, 28}, {2, 1, 0}, "fused-tiles", true);
  Check({13, 9, 31, 7}, {3, 2, 0, 1}, "fused-tiles", true);
  Check({5, 3, 37, 6, 11}, {2, 4, 3, 1, 0}, "fused-tiles", true);
  Check({3, 5, 4, 11, 9, 15}, {3, 2, 1, 5, 4, 0}, "fused-tiles", true);
  Check({7, 11, 13, 2, 6, 5}, {4, 2, 5, 0, 3, 1}, "fused-tiles", true);
  Check({3, 130, 5, 67}, {3, 2, 0, 1});  // 2 threads cut the fused 5 x 67 columns
}

// With cache-bypassing stores (the planner's sign of a DRAM-sized output), staged fused planes
// of 1-byte elements copy each block's source rows first (Nest::source_pitch): one block, two
// blocks a side, and blocks around partial tiles in 16 items. The other widths read in place.
TEST_P(WidthTest, FusedSourceRowsCopiedFirst) {
  const Layouts layouts = {
      {{16, 16, 16, 16}, {3, 2, 1, 0}},
      {{40, 16, 16, 40}, {3, 2, 1, 0}},
      {{3, 40, 16, 16, 37}, {4, 3, 2, 1, 0}},
  };
  const size_t width = GetParam().width;
  for (const auto& [shape, perm] : layouts) {
    const std::string text = StreamingDescription(shape, perm);
    if (text.empty()) return;  // MakePlan failed (recorded)
    const bool copied = text.find("source rows first copied") != std::string::npos;
    // Blocks of 256 columns or more (4 lines of bytes) need a stage of 128 KiB: L2 / 8.
    if (width == 1 && kernels::ChosenVectorBytes() >= 64 &&
        kernels::CurrentMachine(false).l2_bytes >= (1 << 20)) {
      EXPECT_TRUE(copied) << text;
      // With cache-bypassing stores each column of tiles streams its runs out before the next.
      EXPECT_NE(text.find("a column of tiles at a time"), std::string::npos) << text;
    } else if (width != 1) {
      EXPECT_FALSE(copied) << "width " << width << "\n" << text;
    }
    if (width <= 2) Check(shape, perm);  // wider elements take the fused walks checked above
    if (HasFatalFailure()) return;
  }
}

// 1-byte tiles on AVX-512's 64-byte vectors are built in halves of 32 columns, and the band
// walk takes each band's halves in turn (HalvesByteTiles): full and partial tiles (rows and
// columns past the last whole tile, the partial columns in the first half alone or in both),
// destination rows a power of two apart or not, both store kinds, against the reference; other
// widths run the same layouts through their own tiles.
TEST_P(WidthTest, ByteTilesInHalves) {
  const Layouts layouts = {
      {{448, 4096}, {1, 0}},       // destination rows 448 B (x width) apart, whole tiles
      {{512, 1000}, {1, 0}},       // destination rows a power of two apart; 40 columns past
      {{130, 250}, {1, 0}},        // 2 rows and 58 columns past the last whole tile
      {{8, 131, 200}, {0, 2, 1}},  // streamed through a stage: destination rows follow each other
  };
  const bool halves = GetParam().width == 1 && kernels::ChosenVectorBytes() >= 64 &&
                      std::string_view(kernels::ChosenTargetName()).starts_with("AVX3");
  for (const auto& [shape, perm] : layouts) {
    const std::string text = StreamingDescription(shape, perm);
    if (text.empty()) return;  // MakePlan failed (recorded)
    if (halves && text.find("strategy: tiles ") != std::string::npos) {
      EXPECT_NE(text.find("two halves of 32 columns"), std::string::npos) << text;
      // The band walk (destination rows that follow each other stream through a stage instead).
      if (text.find("each walked band by band") != std::string::npos) {
        EXPECT_NE(text.find("each band is walked twice, 32 columns at a time"), std::string::npos)
            << text;
      }
    }
    Check(shape, perm);
    if (HasFatalFailure()) return;
  }
}

// A plan cut for several threads, run by one: one kernel call walks planes whose fused sides
// were cut into blocks of different extents, so offsets kept from one plane for the next
// (FusedTables) must be those of the same rows and columns, not only of the same start.
TEST_P(WidthTest, FusedBlocksOfUnequalExtentsOnOneThread) {
  const Layouts layouts = {
      // A fused side's outer dim (50, 40) in blocks, the last shorter, inside a whole dim
      // taken first: a short block's plane comes before a whole one's in one call.
      {{4, 40, 50, 60}, {0, 3, 2, 1}},
      {{2, 60, 40, 60}, {0, 3, 2, 1}},
      {{3, 5, 4, 41, 45, 15}, {3, 2, 1, 5, 4, 0}},
  };
  for (const auto& [shape, perm] : layouts) {
    for (int planned : {2, 3, 5}) {
      Case c;
      c.shape = shape;
      c.perm = perm;
      c.elem = GetParam().width;
      c.options.max_threads = planned;  // items cut for `planned` threads ...
      c.threads = 1;                    // ... all run by one kernel call
      c.seed = static_cast<uint64_t>(planned);
      CheckCase(c);
      if (HasFatalFailure()) return;
    }
  }
}

TEST_P(WidthTest, InterleaveAndDeinterleave) {
  if (GetParam().width > 8) return;  // 16-byte elements take the tile path
  Check({3, 1000}, {1, 0}, "interleave-rows");
  Check({1000, 3}, {1, 0}, "deinterleave-cols");
}

TEST_P(WidthTest, NarrowInterleavedPlanes) {
  if (GetParam().width > 8) return;  // 16-byte elements take the tile path
  // Planes narrower than the target's vector take a narrower one, and the columns (rows) past
  // their last whole vector one more vector that ends on the last one, over those before:
  // extents around 16, 32 and 64 bytes of elements, several planes of each.
  const auto e = static_cast<int64_t>(GetParam().width);
  for (int64_t n :
       {16 / e - 1, 16 / e, 16 / e + 1, 32 / e - 1, 32 / e + 1, 64 / e - 1, 64 / e + 3}) {
    if (n < 2) continue;
    for (int64_t few : {2, 3, 4}) {
      // Both strategies could take a plane of 2-4 rows and 2-4 columns: no check of which.
      Check({5, few, n}, {0, 2, 1}, n > 4 ? "interleave-rows" : "");
      Check({5, n, few}, {0, 2, 1}, n > 4 ? "deinterleave-cols" : "");
      if (HasFatalFailure()) return;
    }
  }
}

TEST_P(WidthTest, ManyRowsInterleavedByRounds) {
  if (GetParam().width > 8) return;  // 16-byte elements take the tile path
  // More than 4 destination-innermost rows of at most 32 bytes (channels-last with that many
  // channels) interleave by the tile's rounds into whole vectors of the destination (8, 16
  // or 32 rows), or padded to 16 or 32 bytes into pieces stored in column order: column
  // counts around a vector's lanes (the overlapping last vector, planes narrower than one),
  // several planes, and a joined plane (columns under 16 bytes: the outer dim continues them).
  const auto e = static_cast<int64_t>(GetParam().width);
  bool any = false;
  // 8, 16 and 32 rows exactly; the other counts above 4 with fewer than 32 bytes padded.
  for (int64_t rows : {8, 16, 32, 5, 6, 7, 9, 11, 12, 15, 17, 24, 31}) {
    const bool exact = (rows == 8 || rows == 16 || rows == 32) && rows * e >= 8 && rows * e <= 32;
    if (!exact && rows * e >= 32) continue;
    any = true;
    for (int64_t cols : {64 / e - 1, 64 / e, 64 / e + 5, 3 * 64 / e + 7, int64_t{1000}}) {
      Check({3, rows, cols}, {0, 2, 1}, cols * e >= 16 ? "interleave-rows" : "");
      if (HasFatalFailure()) return;
    }
    Check({rows, 37, 4}, {1, 2, 0}, "interleave-rows");  // the 4-column planes joined by 37
    if (HasFatalFailure()) return;
  }
  // 32 bytes of rows and more keep the band walk's tile.
  if (!any) return;
  Check({3, 36 / e + 1, 200}, {0, 2, 1}, "tiles");
}

TEST_P(WidthTest, InterleavedColumnsJoinedAcrossADim) {
  if (GetParam().width > 8) return;  // 16-byte elements take the tile path
  // [outer, rows, groups, cols] -> [groups, outer, cols, rows]: planes of 2-4 rows x a few
  // columns, joined by the groups dim (which continues the columns in the source, not in the
  // destination) into one plane of groups x cols columns, the outer dim (which continues each
  // group in the destination) walked in it; group counts around a vector's lanes so that whole
  // vectors, the overlapping last one, and planes narrower than a vector all run.
  const auto e = static_cast<int64_t>(GetParam().width);
  for (int64_t rows : {2, 3, 4}) {
    for (int64_t cols : {2, 3, 5, 7}) {
      for (int64_t groups : {int64_t{3}, 64 / e / cols + 1, 64 / e + 3}) {
        Check({9, rows, groups, cols}, {2, 0, 3, 1}, "interleave-rows");
        if (HasFatalFailure()) return;
      }
    }
  }
  // The outer dim continues each group in the destination and is walked in the plane: more of
  // its blocks than one L1 buffer holds (up to 16 KiB of them per chunk of columns).
  Check({700, 2, 64 / e + 5, 2}, {2, 0, 3, 1}, "interleave-rows");
  ExpectJoinedWhereNarrow({2048, 4, 256, 4}, {2, 0, 3, 1}, 4,
                          "joined:   columns = 4 x 256 (dim 0 continues dim 2");
}

TEST_P(WidthTest, DeinterleavedRowsJoinedAcrossADim) {
  if (GetParam().width > 8) return;  // 16-byte elements take the tile path
  // [outer, rows, cols] -> [outer, cols, rows] with rows too few for a vector: joined by the
  // outer dim (one run of the source); [b, a, rows, cols] -> [a, b, cols, rows]: joined by b,
  // whose blocks are not consecutive in the destination. Outer extents around a vector's
  // lanes and past one buffer's blocks, both store modes (Check).
  const auto e = static_cast<int64_t>(GetParam().width);
  for (int64_t rows : {int64_t{5}, 15 / e}) {
    if (rows < 5) continue;  // 2-4 rows are an interleave's
    for (int64_t cols : {2, 3, 4}) {
      for (int64_t outer : {int64_t{2}, 64 / e / rows + 1, int64_t{1500}}) {
        Check({outer, rows, cols}, {0, 2, 1}, "deinterleave-cols");
        Check({outer, 3, rows, cols}, {1, 0, 3, 2}, "deinterleave-cols");
        if (HasFatalFailure()) return;
      }
    }
  }
  ExpectJoinedWhereNarrow({1000, 7, 3}, {0, 2, 1}, 7,
                          "joined:   rows = 7 x 1000 (dim 0 continues dim 2");
}

TEST_P(WidthTest, EdgeShapes) {
  Check({1, 300}, {1, 0});
  Check({300, 1}, {1, 0});
  Check({5, 7}, {1, 0});
  Check({17, 33, 65}, {2, 0, 1});
  Check({6, 5, 4}, {0, 1, 2});  // identity: a copy
  Check({0, 7}, {1, 0});        // nothing to move
  Check({2, 3, 2, 3, 2, 3, 2}, {6, 5, 4, 3, 2, 1, 0});
  Check({2, 1, 3, 2, 1, 3, 2, 2}, {7, 1, 5, 3, 6, 0, 2, 4});
}

std::vector<WidthParam> AllWidthsAndTargets() {
  std::vector<WidthParam> params;
  for (int64_t target : kernels::CompiledTargets()) {
#define IOTX_TILE_WIDTH(bytes) params.push_back({bytes, target});
#include "kernels/widths.inc"
  }
  return params;
}

std::string ParamName(const ::testing::TestParamInfo<WidthParam>& info) {
  return std::string(hwy::TargetName(info.param.target)) + "_w" + std::to_string(info.param.width);
}

INSTANTIATE_TEST_SUITE_P(WidthsTargets, WidthTest, ::testing::ValuesIn(AllWidthsAndTargets()),
                         ParamName);

}  // namespace
}  // namespace iotx::test
