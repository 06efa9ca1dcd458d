// The loop nest a plan hands to the per-target kernels: plain data, no Highway types, so the
// planner (generic C++) and the kernels (compiled once per SIMD target) share it.
//
// Execution model (STYLE: micro-kernel / macro loop / driver):
//   driver  items enumerate the driver dims (outer -> inner, row-major); items are independent
//           and each writes one contiguous range of the destination, in destination order.
//   loops   per item, the kernel loops (outer -> inner) walk the remaining dims; for a row
//           copy one of them walks blocks of `row_block` rows.
//   plane   per loop position, `rows` x `cols` elements: rows are the destination-innermost
//           dim (consecutive rows in src, consecutive elements in dst), columns the
//           source-innermost dim (consecutive elements in src, rows in dst). The strategy the
//           planner chose (below) walks the plane; nothing is decided again at run time.
#pragma once

#include <array>
#include <cstdint>

#include "iotx/dims.h"

#include "kernels/problem.h"

namespace iotx::kernels {

// How a plan moves its bytes, chosen once by the planner (planner.h, KernelCandidates) and
// printed by Describe. Each is run by one per-target function (dispatch.h).
enum class Strategy : uint8_t {
  kCopy,              // one contiguous block: the items are byte ranges of it
  kRowCopy,           // the innermost run is unmoved and not a tile width: rows copied
  kInterleaveRows,    // 2-4 destination-innermost rows: Highway StoreInterleaved{2,3,4};
                      // more, of at most 32 bytes: the tile's interleave rounds
  kDeinterleaveCols,  // 2-4 source-innermost columns: Highway LoadInterleaved{2,3,4}
  kTiles,             // in-register tiles, strips walked band by band, stored in place
  kStagedTiles,       // in-register tiles into an L1 block, written out as destination runs
  kFusedTiles,        // small planes: the next dims join rows and columns (kTiles' walk)
};

// How Strategy::kInterleaveRows interleaves `rows` destination-innermost rows of elem_bytes
// each (interleave_plane-inl.h), the one rule the planner, the kernel and Describe read:
// Highway's interleaved stores for 2-4 rows; the tile's interleave rounds for 8, 16 or 32
// rows of 8-32 bytes (whole destination vectors); the same rounds on rows padded with zeros to
// 16 or 32 bytes for the other counts above 4 of fewer than 32 bytes; none past that.
enum class InterleaveForm : uint8_t { kNone, kHighway, kRounds, kPadded };

constexpr InterleaveForm InterleaveFormOf(int64_t rows, int64_t elem_bytes) {
  const int64_t bytes = rows * elem_bytes;
  if (rows >= 2 && rows <= 4) return InterleaveForm::kHighway;
  if ((rows == 8 || rows == 16 || rows == 32) && bytes >= 8 && bytes <= 32) {
    return InterleaveForm::kRounds;
  }
  if (rows > 4 && bytes < 32) return InterleaveForm::kPadded;
  return InterleaveForm::kNone;
}

// The rows the rounds run on: `rows` itself for kRounds, padded to 16 or 32 bytes for kPadded.
constexpr int64_t InterleaveRoundRows(int64_t rows, int64_t elem_bytes) {
  if (InterleaveFormOf(rows, elem_bytes) != InterleaveForm::kPadded) return rows;
  return (rows * elem_bytes <= 16 ? 16 : 32) / elem_bytes;
}

struct LoopDim {
  int64_t n = 1;
  int64_t src_stride = 0;  // bytes
  int64_t dst_stride = 0;  // bytes
};

// Why a staged fused walk copies each block's source rows into a second buffer before its
// tiles read them (Nest::source_pitch > 0), recorded by the planner (FusedSourceCopy) so that
// Describe names the rule that chose it rather than working it out again.
enum class SourceCopy : uint8_t {
  kNone,               // the tiles read the source in place
  kByteTilesInDram,    // 1-byte tiles with cache-bypassing stores: a tile loads 64 rows at
                       // once, one line of each (twelfth look)
  kRowsOverfillL2Set,  // a tile's source rows put more lines in one L2 set than it holds
                       // (thirtieth and thirty-first looks)
};

// Which kernel extent the innermost driver dim cuts into blocks (its last block may be short).
enum class Blocked : uint8_t { kNone, kLoop, kRows, kCols, kBytes };

struct Nest {
  Strategy strategy = Strategy::kCopy;
  int64_t elem_bytes = 1;
  bool streaming = false;  // cache-bypassing stores for full, aligned 64-byte lines

  int driver_rank = 0;
  std::array<LoopDim, kMaxRank> driver{};
  int64_t items = 1;
  Blocked blocked = Blocked::kNone;
  int blocked_loop = -1;     // with Blocked::kLoop: index into `loops`
  int64_t block = 0;         // extent of one block
  int64_t blocked_full = 0;  // extent of the blocked dim before blocking

  int loop_rank = 0;
  std::array<LoopDim, kMaxRank + 1> loops{};
  int row_block_loop = -1;  // kRowCopy: index into `loops` of the row-block loop (n derived)

  int64_t rows = 1;
  int64_t src_row_stride = 0;
  int64_t cols = 1;
  int64_t dst_row_stride = 0;
  int64_t row_block = 1;     // kRowCopy: rows per strip

  // Tile strategies: the vector the tiles use (16, 32 or 64 bytes; its columns are one band)
  // and the walk. kTiles: `strip_rows` rows are walked band by band, so each destination row
  // gets strip_rows * elem_bytes bytes in one run. kStagedTiles (and kFusedTiles with
  // stage_pitch > 0): blocks of strip_rows x block_cols go through a buffer whose destination
  // rows are `stage_pitch` bytes apart, then leave as destination runs.
  int64_t vector_bytes = 16;
  int64_t strip_rows = 1;
  int64_t block_cols = 1;
  int64_t stage_pitch = 0;
  // kFusedTiles, staged: > 0 when each block's source rows are first copied as runs into a
  // second buffer, `source_pitch` bytes apart, which the tiles then read (Tile::source_pitch),
  // for the reason `source_copy` names.
  int64_t source_pitch = 0;
  SourceCopy source_copy = SourceCopy::kNone;
  // kTiles and kStagedTiles: the tile's source rows alias in L1 (Tile::src_rows_alias).
  bool src_rows_alias = false;
  // kTiles with cache-bypassing stores: bands walked `band_group` at a time, each row of tiles
  // crossing all of them (Tile::band_group, GroupedBands); 1: band by band.
  int64_t band_group = 1;
  // kTiles and kStagedTiles with ordinary stores, past half the L2: the walk fetches ahead
  // what it will read and write (Tile::prefetch_ahead).
  bool prefetch_ahead = false;
  // kTiles with cache-bypassing stores: destination rows not whole lines apart have their runs
  // realigned in place (Tile::realign_rows, TileBandsRealigned).
  bool realign_rows = false;
  // kFusedTiles: `rows` is rows_inner rows (src_row_stride apart) times rows / rows_inner
  // blocks (src_outer_row_stride apart; with rows_mid > 0, below, rows_mid of them in each of
  // rows / (rows_inner * rows_mid) groups), consecutive in the destination; `cols` is cols_inner
  // columns (dst_row_stride apart) times cols / cols_inner blocks (dst_outer_col_stride
  // apart), consecutive in the source.
  int64_t rows_inner = 1;
  int64_t src_outer_row_stride = 0;
  // kFusedTiles with a third dim joining the rows (Tile::rows3_dim): the blocks of rows_inner
  // rows come in groups of rows_mid, src_outer2_row_stride apart; 0: one group (no third dim).
  int64_t rows_mid = 0;
  int64_t src_outer2_row_stride = 0;
  // kDeinterleaveCols with rows joined (Tile::rows2_dim): where each block of rows_inner rows
  // goes in the destination (its rows follow each other in the source).
  int64_t dst_outer_row_stride = 0;
  int64_t cols_inner = 1;
  int64_t dst_outer_col_stride = 0;
  // kFusedTiles with cache-bypassing stores, planes whose destination runs are not whole
  // lines: each plane goes through a stage laid out as its runs and leaves with their whole
  // lines streamed (FusedPlaneThroughStage, FusedPlaneRuns).
  bool stage_planes = false;

  int64_t copy_bytes = 0;  // kCopy: total bytes
};

// Whether full tiles gather their rows by 128-bit blocks (TransposeTileGathered in
// tile-inl.h) rather than transposing whole rows: on the 64-byte vectors of an AVX-512 target,
// for 4-byte elements whose source rows do not alias in L1 (`src_rows_alias`: the gathered
// tile reads each source line four times, once per 16-byte block, and rows a power of two
// apart share one set, so each read misses); the other widths measured slower gathered, and
// 1-byte tiles there are built in halves (HalvesByteTiles). The kernels and Describe both ask.
constexpr bool GathersTileRows(bool avx512, int64_t elem_bytes, int64_t vector_bytes,
                               bool src_rows_alias) {
  return avx512 && vector_bytes == 64 && !src_rows_alias && elem_bytes == 4;
}

// Whether a 1-byte tile (64 rows x 64 columns) is built as two halves of 32 columns
// (TransposeByteTileHalf in tile-inl.h): on the 64-byte vectors of an AVX-512 target, where a
// half is 64 rows x 32 bytes in 32 vectors, all in registers, and leaves as 32 whole lines. A
// band walk then takes each band twice, a half at a time (TileBands), so 32 destination rows
// take lines at once rather than 64: 64 rows a power of two apart streamed at half the rate
// (docs/performance.md, twenty-sixth look). The kernels and Describe both ask.
constexpr bool HalvesByteTiles(bool avx512, int64_t elem_bytes, int64_t vector_bytes) {
  return avx512 && vector_bytes == 64 && elem_bytes == 1;
}

// A cache line: the unit of the L1's sets, of the stages, and of what the streaming stores
// complete (64 bytes on every x86 CPU). The planner, the kernels and Describe all use this one.
inline constexpr int64_t kLineBytes = 64;

// Whether a band walk (kTiles) can store its tiles' destination lines bypassing the cache: its
// destination rows are a whole number of 64-byte lines apart, so every tile writes whole lines
// (TilesPlane). Elsewhere it stores ordinarily whatever the plan's stores; the planner (short
// strips, fetching ahead, which staged plans may stream instead) and Describe ask too.
constexpr bool BandWalkStreams(int64_t dst_row_stride) { return dst_row_stride % kLineBytes == 0; }

// Whether a band walk (kTiles) with cache-bypassing stores writes destination rows that are
// not whole lines apart as whole lines anyway, realigning each row's run (TileBandsRealigned in
// tiles-inl.h): on AVX-512, whose two-source lane permutes join a row's consecutive tiles into
// the line between them, and whose byte-masked stores write a run's partial first and last
// lines without touching the bytes beside them. For 8- and 16-byte elements, whose tiles write
// 8 and 4 lines through the walk's L1 buffers: in DRAM, 1 / 2 threads, ratio to memcpy, staged
// -> realigned (AMD EPYC Zen 5, docs/performance.md, thirty-fourth look): f64 1001 x 20000
// `1,0` 0.61-0.64 / 0.68-0.70 -> 0.80-0.81 / 0.74-0.81, c128 1001 x 8000 0.56-0.57 / 0.55-0.61
// -> 0.68-0.72 / 0.66-0.67. Narrower tiles write 16-64 lines each through the buffers, which
// cost more than the stage saves (f32 401x60x1493 `2,1,0` 0.62 -> 0.41, bf16 3000 x 10000 on
// 2 threads 0.46-0.50 -> 0.34-0.37), so they stage. The rows must be a whole number of 8-byte
// lanes apart, so that each starts a whole number of lanes into its line; elsewhere such a walk
// stores ordinarily or stages (the planner's StagesTiles).
constexpr bool BandWalkRealigns(bool avx512, int64_t vector_bytes, int64_t elem_bytes,
                                int64_t dst_row_stride) {
  return avx512 && vector_bytes == 64 && elem_bytes >= 8 && !BandWalkStreams(dst_row_stride) &&
         dst_row_stride % 8 == 0;
}

// The largest block a staged walk uses: a stack buffer of the kernels (oneTBB workers have
// 4 MiB stacks, the main thread 8 MiB); the planner sizes blocks from the L2 below it. A
// fused walk that copies its source rows first (Nest::source_pitch) keeps a second one.
inline constexpr int64_t kMaxStageBytes = 128 * 1024;

// The columns past each block that DenseStagedPlane stages to complete the block's last line:
// whole bands of `tile_cols` covering at least one line.
constexpr int64_t DenseStageHaloCols(int64_t row_bytes, int64_t tile_cols) {
  return ((64 + row_bytes - 1) / row_bytes + tile_cols - 1) / tile_cols * tile_cols;
}

// The stage of DenseStagedPlane (a stack buffer, as the other stages are): twice theirs, so
// that a block of 725-row bf16 columns (1450 B each in the destination) keeps four bands, 256 B
// of each source row, where 128 KiB kept one band (64 B) and read at half the speed.
inline constexpr int64_t kMaxDenseStageBytes = 2 * kMaxStageBytes;

// The columns of a DenseStagedPlane block, rows `row_bytes` long in the destination: the
// whole bands of `tile_cols` the stage holds besides the halo's (0: not even one).
constexpr int64_t DenseStageBlockCols(int64_t row_bytes, int64_t tile_cols) {
  const int64_t fit = kMaxDenseStageBytes / row_bytes;
  const int64_t halo = DenseStageHaloCols(row_bytes, tile_cols);
  return fit < tile_cols + halo ? 0 : (fit - halo) / tile_cols * tile_cols;
}

// Whether a band walk with cache-bypassing stores takes its plane through a stage laid out as
// the destination (DenseStagedPlane in tiles-inl.h): destination rows that follow each other
// (dst_row_stride == rows * elem) but are not whole lines long, so the plane's destination is
// one block whose lines straddle its rows, where a stage holds a band of `tile_cols` columns
// and the halo past it. The kernels (for each plane), the planner and Describe ask.
constexpr bool StagesDenseRows(int64_t dst_row_stride, int64_t rows, int64_t elem_bytes,
                               int64_t tile_cols) {
  return !BandWalkStreams(dst_row_stride) && rows > 0 && dst_row_stride == rows * elem_bytes &&
         DenseStageBlockCols(dst_row_stride, tile_cols) > 0;
}

// The least of each source row a dense stage's block must read for a band walk to take it
// (DenseStagedPlane) rather than stage or realign its rows.
inline constexpr int64_t kDenseStageRunBytes = 256;

// Whether a band walk with cache-bypassing stores goes through DenseStagedPlane where it could
// also realign its rows (BandWalkRealigns): rows that follow each other (StagesDenseRows),
// fewer than two strips of them (from there the driver may cut the rows between threads, and a
// plane cut so is no longer dense), each block reading kDenseStageRunBytes of every source row.
// The dense stage writes the lines across rows whole, where a realigned band walk would leave
// each row's first and last lines to ordinary stores. The kernels and the planner both ask.
constexpr bool DenseStageBeatsBands(int64_t dst_row_stride, int64_t rows, int64_t elem_bytes,
                                    int64_t tile_cols, int64_t strip_rows) {
  return rows < 2 * strip_rows && StagesDenseRows(dst_row_stride, rows, elem_bytes, tile_cols) &&
         DenseStageBlockCols(dst_row_stride, tile_cols) * elem_bytes >= kDenseStageRunBytes;
}

// A fused plane's destination as `count` runs of `bytes` each, `stride` apart: its rows follow
// each other in the destination (rows x element = dst_row_stride), so each inner block of
// columns is one run, and the whole plane is one where those blocks follow each other too.
// {0, 0, 0} when the rows leave gaps.
struct PlaneRuns {
  int64_t bytes = 0;
  int64_t count = 0;
  int64_t stride = 0;
};
constexpr PlaneRuns FusedPlaneRuns(int64_t rows, int64_t elem_bytes, int64_t cols,
                                   int64_t cols_inner, int64_t dst_row_stride,
                                   int64_t dst_outer_col_stride) {
  if (rows * elem_bytes != dst_row_stride || cols_inner <= 0 || cols % cols_inner != 0) return {};
  const int64_t inner = cols_inner * dst_row_stride;
  if (cols == cols_inner || dst_outer_col_stride == inner) return {cols * dst_row_stride, 1, 0};
  return {inner, cols / cols_inner, dst_outer_col_stride};
}

// The shortest run a staged fused plane (Nest::stage_planes) leaves in: its first and last
// lines, which it shares with other planes, go with ordinary stores, so at least 14 of its 16
// lines stream.
inline constexpr int64_t kMinStagedPlaneRunBytes = 1024;

// A band walk that fetches ahead (Nest::prefetch_ahead) fetches the destination lines of the
// tile this many tiles further down the band: one tile ahead and two measured alike (f32
// 768^2, 1000^2, 1000 x 3000 on an Intel Xeon, within 0.03), four and eight a little slower.
inline constexpr size_t kStoreTilesAhead = 2;

// The element widths whose staged fused walks may copy their source rows first
// (Nest::source_pitch): the planner asks (FusedSourceCopy), and the kernels compile that walk
// for these widths only. 1-byte tiles load 64 rows at once, one line of each; 2-byte tiles 32,
// which pays in DRAM only where those rows overfill an L2 set (thirty-first look); the wider
// tiles load 16 rows or fewer and read in place faster (docs/performance.md, twelfth look).
constexpr bool CopiesFusedSourceRows(int64_t elem_bytes) { return elem_bytes <= 2; }

// A fused walk that copies its source rows first (Nest::source_pitch) fetches the runs of the
// rows this far ahead of the one it copies: 256 B runs from rows 1 MiB apart read at 9.6 GB/s
// without, 14.6-16.5 GB/s fetching 8-16 rows ahead (a standalone loop, AMD EPYC Zen 5;
// sequential reads 19 GB/s).
inline constexpr int64_t kSourceRowsAhead = 16;

// The most rows a fused strip walks at once: the kernel keeps their source offsets in a
// stack table (8 KiB); the planner's strips (L1d / (2 x vector), or a staged block's rows)
// stay below it on caches up to 64 KiB with 32-byte vectors.
inline constexpr int64_t kMaxFusedStripRows = 1024;

}  // namespace iotx::kernels
