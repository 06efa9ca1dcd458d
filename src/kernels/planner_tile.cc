// The planner's tile stage (planner.h: ChooseTile): the plane, the micro-tile and the walk
// that moves it (strips, staged blocks, fused dims, grouped bands), and the plane's extents
// that the later stages read.
#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "kernels/planner.h"
#include "kernels/planner_internal.h"

namespace iotx::kernels {
namespace {

// Destination bytes a row-copy strip writes in one sequential run per column.
constexpr int64_t kRowCopyRunBytes = 1024;

// An L2 block for a staged walk: as many bytes as an eighth of the L2 (the block, the source
// lines in flight and the destination lines leaving share it), at most kMaxStageBytes, shaped
// so source runs are twice the destination runs, destination rows an odd number of lines
// apart so they spread over every L1 set. Measured on 8192^2 f32 (DRAM) / 1024^2 f32 (cache):
// blocks of 176 x 32 (L1-sized) 0.49 / 0.41x memcpy, 128 rows x 256 columns 0.71 / 0.61,
// 256 x 128 0.68 / 0.48, 64 x 512 0.68 / 0.31.
void StageBlock(Tile& tile, int64_t e, int64_t cols, int64_t rows_cap, const Machine& m) {
  const int64_t budget = std::min(m.l2_bytes / 8, kMaxStageBytes);
  int64_t rows_fit =
      static_cast<int64_t>(std::sqrt(static_cast<double>(budget) / (2.0 * static_cast<double>(e))));
  rows_fit = std::clamp(rows_fit / tile.tile_rows * tile.tile_rows, tile.tile_rows, rows_cap);
  tile.stage_pitch = OddLinePitch(rows_fit * e + kLineBytes);  // at least a line of slack
  const int64_t cols_cap = std::max(tile.tile_cols, cols / tile.tile_cols * tile.tile_cols);
  tile.block_cols = std::clamp(budget / tile.stage_pitch / tile.tile_cols * tile.tile_cols,
                               tile.tile_cols, cols_cap);
  while (tile.block_cols * tile.stage_pitch > kMaxStageBytes && tile.block_cols > tile.tile_cols) {
    tile.block_cols -= tile.tile_cols;
  }
  tile.strip_rows = rows_fit;
}

}  // namespace

SourceRowsCopy FusedSourceCopy(int64_t elem_bytes, int64_t block_cols, int64_t block_rows,
                               bool streaming, bool rows_overfill_l2) {
  // In one process, alternating, ratio to memcpy, 1 / 2 threads (AMD EPYC Zen 5), in place
  // -> copied: i8 16^7 reversed (256 B runs) 0.13 / 0.25 -> 0.23 / 0.39, 64^5 (384 B) 0.18 /
  // 0.37 -> 0.29 / 0.63, 32^5 0.17 / 0.49 -> 0.30 / 0.64, 256x16^3x256 0.14 / 0.24 -> 0.27 /
  // 0.41, 16x64^3x16 `0,4,3,2,1` 0.27 / 0.55 -> 0.33 / 0.64. Not for runs of one or two lines
  // (i8 8^9 reversed, 64 B: 0.17 -> 0.13; 128 B within +-0.02), nor in cache (an extra copy:
  // i8 16^5 reversed 0.20 -> 0.19, 128^3 0.19 -> 0.17), nor for wider elements, whose tiles
  // load 32 rows or fewer: bf16 32x16^5 0.38 / 0.70 either way, bf16 64^5 0.28 / 0.61 ->
  // 0.30 / 0.55, f32 16^6 0.42 -> 0.35, f64 16^6 0.74 -> 0.60. In cache, only where a tile's
  // rows overfill an L2 set (thirtieth look: i8 2x16^5 reversed 0.15-0.16 -> 0.21-0.23, i8
  // 3x16^5 0.14-0.17 -> 0.24-0.25, 1 thread). 2-byte tiles with cache-bypassing stores where
  // their 32 rows overfill an L2 set (thirty-first look, 1 / 2 threads: bf16 16^6 reversed 0.25
  // / 0.28-0.30 -> 0.30-0.37 / 0.31-0.32, 32^5 0.22-0.25 / 0.21-0.22 -> 0.33-0.36 / 0.31-0.35,
  // 32x16^5 0.24-0.27 / 0.25-0.27 -> 0.27-0.33 / 0.28-0.31), not with ordinary stores in cache
  // (bf16 2x16^5 0.26 -> 0.22-0.24).
  const int64_t run = block_cols * elem_bytes;
  // 1-byte tiles in DRAM copy whatever their rows' sets; the L2 set is the reason where that
  // is not.
  const SourceCopy reason = elem_bytes == 1 && streaming ? SourceCopy::kByteTilesInDram
                            : rows_overfill_l2 && (elem_bytes == 1 || streaming)
                                ? SourceCopy::kRowsOverfillL2Set
                                : SourceCopy::kNone;
  if (reason == SourceCopy::kNone || !CopiesFusedSourceRows(elem_bytes) || run < 4 * kLineBytes) {
    return {};
  }
  const int64_t pitch = OddLinePitch(run);
  if (block_rows * pitch > kMaxStageBytes) return {};
  return {pitch, reason};
}

bool TileRowsOverfillAnL2Set(const Problem& folded, const Tile& tile, const Machine& machine) {
  if (tile.rows_dim < 0) return false;
  const int64_t sets = std::max<int64_t>(1, machine.l2_bytes / (kLineBytes * kMostL2Ways));
  // The rows' dims, innermost first, as FusedRowOffsets walks them.
  std::vector<const Dim*> dims = {&folded.dims[static_cast<size_t>(tile.rows_dim)]};
  for (int i : {tile.rows2_dim, tile.rows3_dim}) {
    if (i >= 0) dims.push_back(&folded.dims[static_cast<size_t>(i)]);
  }
  // The set of each of the tile's rows (at most 64), sorted so that a set's lines are adjacent.
  std::vector<int64_t> row_sets;
  for (int64_t r = 0; r < tile.tile_rows; ++r) {
    int64_t offset = 0;
    int64_t rest = r;
    for (const Dim* d : dims) {
      offset += (rest % d->n) * d->src_stride;
      rest /= d->n;
    }
    if (rest > 0) break;  // a plane of fewer rows than a tile
    row_sets.push_back((offset / kLineBytes) % sets);
  }
  std::sort(row_sets.begin(), row_sets.end());
  for (size_t i = 0; i + kMostL2Ways < row_sets.size(); ++i) {
    if (row_sets[i] == row_sets[i + kMostL2Ways]) return true;  // kMostL2Ways + 1 in one set
  }
  return false;
}

namespace {

// In DRAM the band walk reads one vector of each of a strip's rows per band. Where the
// strip's destination runs are short (its rows are few: a plane of 16-128 rows, as
// channels-last conversions of 16-128 channels have), bands are walked several at a time
// instead: each row of tiles reads kGroupedRunBytes of each of its source rows before the next
// row of tiles, runs the hardware prefetcher follows, and writes one line of each of the
// group's destination rows, which the rows below complete. In one process, alternating, ratio
// to memcpy, 1 / 2 threads (AMD EPYC Zen 5), band by band -> grouped: f32 32x64x64x128
// `0,2,3,1` 0.53 / 1.43 -> 0.79 / 2.00 (2 threads against one thread's memcpy), 128x64x8192
// `0,2,1` 0.75 / 1.43 -> 1.04 / 1.81, 64x64x12544 `0,2,1` 1.91 -> 2.33 (2 threads), 512x16x8192
// 0.74 -> 0.88, 64x128x8192 (8 bands) 0.84 -> 0.93, f64 256x32x4096 0.90 / 1.72 -> 1.03 / 2.05.
// Only for tiles of at most kGroupedTileRows rows: a bf16 or i8 tile reads 32 or 64 rows at
// once, more streams than the prefetcher follows (bf16 128x64x8192 0.77 -> 0.78, 64x128x8192
// 0.86 -> 0.75, i8 256x64x8192 0.67 -> 0.53); and only for destination runs of at most
// kGroupedDstRunBytes: f32 32x256x8192 (1 KiB runs) 0.87 -> 0.79 with 4 bands, 0.44 with 16,
// f64 64x128x4096 0.90 -> 0.47 with 16. A group's block stays within kGroupedBlockBytes (f32
// 64x128x8192: 8 bands 0.93, 16 bands 0.87).
constexpr int64_t kGroupedTileRows = 16;
constexpr int64_t kGroupedDstRunBytes = 512;
constexpr int64_t kGroupedRunBytes = 1024;
constexpr int64_t kGroupedBlockBytes = 64 * 1024;
// Machine::short_strips_bytes: strips of 32 rows (one 32- or 64-row tile of 2- and 1-byte elements)
// read the same 1 KiB of each source row. On the Intel Xeon of the sixteenth look, strips of
// 16-48 rows with groups of 16-64 bands ran within 0.04 of each other (f32 8192^2), 64 and
// 128 rows 0.61 and 0.49.
constexpr int64_t kShortStripRows = 32;

}  // namespace

bool ShortStrips(const Problem& folded, const Machine& machine) {
  return machine.short_strips_bytes > 0 && ProblemBytes(folded) >= machine.short_strips_bytes;
}

int64_t GroupedBands(int64_t elem_bytes, int64_t tile_rows, int64_t strip_rows,
                     int64_t vector_bytes) {
  if (tile_rows > kGroupedTileRows || strip_rows * elem_bytes > kGroupedDstRunBytes) return 1;
  return std::max<int64_t>(1, std::min(kGroupedRunBytes / vector_bytes,
                                       kGroupedBlockBytes / (strip_rows * vector_bytes)));
}

namespace {

// An interleave-rows plane whose columns fill no vector (under 16 bytes) is joined by the
// dim that continues its columns in the source, if one does (InterleaveJoinedColumns): i8
// 2048x4x256x4 `2,0,3,1`, planes of 4 x 4 bytes, became 4 x 1024 (1 thread, ratio to memcpy:
// 0.02 -> 0.26; f32 3x21x465x3 `2,1,3,0` 0.04 -> 0.25). Columns that fill a vector stay apart:
// the joined plane goes through a buffer (f32 3x21x465x15, 60 B of columns, on 32-byte vectors
// 0.70, joined 0.67). The dim that continues each group of columns in the destination, if one
// does, is then walked inside the plane (Tile::rows2_dim), so that a group's pieces leave one
// after the other (i8 2048x4x256x4: the 2048-dim, 16 B apart): one piece per group and plane,
// each its own line 32 KiB from the next, ran at 0.23 / 0.20 of memcpy on 1 / 2 threads, a
// group's pieces as runs 0.54 / 0.52 (i8 2000x4x250x4 0.32 / 0.22 -> 0.53 / 0.51, bf16
// 64x3x512x2 `2,0,3,1` 0.10 / 0.08 -> 0.25 / 0.19). Returns the plane's columns.
int64_t JoinNarrowColumns(const Problem& folded, const Machine& machine, Tile& tile) {
  const int64_t e = folded.elem_bytes;
  const Dim& rows = folded.dims[static_cast<size_t>(tile.rows_dim)];
  const Dim& cols = folded.dims[static_cast<size_t>(tile.cols_dim)];
  if (cols.n * e >= 16 || machine.vector_bytes < 16) return cols.n;
  const auto other = [&](int i) { return i != tile.rows_dim && i != tile.cols_dim; };
  for (int i = 0; i < static_cast<int>(folded.dims.size()); ++i) {
    if (other(i) && folded.dims[static_cast<size_t>(i)].src_stride == cols.n * e) {
      tile.cols2_dim = i;
      break;
    }
  }
  if (tile.cols2_dim < 0) return cols.n;
  for (int i = 0; i < static_cast<int>(folded.dims.size()); ++i) {
    if (other(i) && i != tile.cols2_dim &&
        folded.dims[static_cast<size_t>(i)].dst_stride == cols.n * rows.n * e) {
      tile.rows2_dim = i;
      break;
    }
  }
  return cols.n * folded.dims[static_cast<size_t>(tile.cols2_dim)].n;
}

// The same for a deinterleave-cols plane whose rows fill no vector: joined by the dim that
// continues them in the source (whose source is then one run), each block of rows copied to
// its place (DeinterleaveJoinedRows). 1 / 2 threads, ratio to memcpy: i8 100000x7x3 `0,2,1`
// (planes of 7 rows x 3 columns, all edge path before) 0.03 / 0.02 -> 0.39 / 0.19, bf16
// 100000x5x4 `0,2,1` 0.23 / 0.21 -> 0.61 / 0.54. Returns the plane's rows.
int64_t JoinNarrowRows(const Problem& folded, const Machine& machine, Tile& tile) {
  const int64_t e = folded.elem_bytes;
  const Dim& rows = folded.dims[static_cast<size_t>(tile.rows_dim)];
  if (rows.n * e >= 16 || machine.vector_bytes < 16) return rows.n;
  for (int i = 0; i < static_cast<int>(folded.dims.size()); ++i) {
    const Dim& d = folded.dims[static_cast<size_t>(i)];
    if (i != tile.rows_dim && i != tile.cols_dim && d.src_stride == rows.n * rows.src_stride) {
      tile.rows2_dim = i;
      return rows.n * d.n;
    }
  }
  return rows.n;
}

}  // namespace

Tile ChooseTile(const Problem& folded, Strategy strategy, const Machine& machine, bool streaming) {
  Tile tile;
  if (strategy == Strategy::kCopy || folded.dims.empty()) return tile;
  const int64_t e = folded.elem_bytes;
  tile.rows_dim = static_cast<int>(folded.dims.size()) - 1;
  tile.cols_dim = SourceInnerDim(folded);
  const Dim& rows = folded.dims[static_cast<size_t>(tile.rows_dim)];
  const Dim& cols = folded.dims[static_cast<size_t>(tile.cols_dim)];
  tile.col_granule = std::max<int64_t>(1, CeilDiv(128, e));
  if (strategy == Strategy::kRowCopy) {
    // A row copy's strip writes each column's rows as one sequential destination run; runs
    // of 1 KiB (16 lines) keep the writes sequential where a line per row would scatter them.
    tile.row_block = std::max<int64_t>(1, CeilDiv(kRowCopyRunBytes, e));
    tile.row_granule = tile.row_block;
    return tile;
  }
  tile.row_block = rows.n;
  // Interleaving planes too narrow for any vector are joined with their neighbours first.
  const int64_t interleaved_cols =
      strategy == Strategy::kInterleaveRows ? JoinNarrowColumns(folded, machine, tile) : cols.n;
  const int64_t deinterleaved_rows =
      strategy == Strategy::kDeinterleaveCols ? JoinNarrowRows(folded, machine, tile) : rows.n;
  // The band walks pick a narrower vector for narrow planes, and so do the interleaving ones
  // for the extent their vectors run along (columns interleaved, rows de-interleaved): on
  // 64-byte vectors, f32 planes of 3 rows x 15 columns and bf16 ones of 16 rows x 4 columns
  // had not one whole vector and ran entirely through the edge path (0.42 and 0.11 of memcpy).
  // The fused strategy uses the target's widest (tiles_width-inl.h compiles it for that alone).
  tile.vector_bytes =
      strategy == Strategy::kTiles || strategy == Strategy::kStagedTiles
          ? BandVectorBytes(cols.n * e, machine)
      : strategy == Strategy::kInterleaveRows   ? BandVectorBytes(interleaved_cols * e, machine)
      : strategy == Strategy::kDeinterleaveCols ? BandVectorBytes(deinterleaved_rows * e, machine)
                                                : machine.vector_bytes;
  tile.tile_rows = TileRows(e);
  tile.tile_cols = std::max<int64_t>(1, tile.vector_bytes / e);
  const int64_t rows_cap = RoundUp(rows.n, tile.tile_rows);
  const bool src_rows_alias =
      StrideAliases(rows.src_stride, std::min(tile.tile_rows, rows.n), machine);
  // Only the band and staged walks read it; a fused plane stages instead (below).
  tile.src_rows_alias =
      src_rows_alias && (strategy == Strategy::kTiles || strategy == Strategy::kStagedTiles);
  if (strategy == Strategy::kStagedTiles) {
    StageBlock(tile, e, cols.n, rows_cap, machine);
    tile.rows_share_lines = streaming && !BandWalkStreams(cols.dst_stride);
  } else if (strategy == Strategy::kTiles || strategy == Strategy::kFusedTiles) {
    if (strategy == Strategy::kFusedTiles) {
      const Fusion f = FindFusion(folded, machine);
      tile.fused = true;
      tile.rows2_dim = f.rows2;
      tile.cols2_dim = f.cols2;
      tile.rows3_dim = f.rows3;
      tile.vector_bytes = machine.vector_bytes;
      tile.tile_cols = std::max<int64_t>(1, tile.vector_bytes / e);
      // Fused dims are far apart by nature (16^6: 4 MiB): stage as kStagedTiles does when
      // a tile's lines alias.
      const int64_t fused_rows = FusedRows(folded, tile);
      const int64_t fused_strip_rows = std::min(
          BandStripRows(tile.tile_rows, machine.vector_bytes, machine), kMaxFusedStripRows);
      const int64_t fused_cols =
          f.cols2 >= 0 ? cols.n * folded.dims[static_cast<size_t>(f.cols2)].n : cols.n;
      // As StagesTiles, only planes of whole tiles across: narrower ones would leave all their
      // tiles to the edge path (i8 9x286x429x3x3x13 `4,1,0,3,5,2`, 429 x 39 planes: 0.58 of
      // memcpy walked, 0.37 so staged).
      const bool stages_runs =
          streaming && fused_cols >= 2 * tile.tile_cols &&
          (StagesStreamingRuns(cols, fused_rows, fused_strip_rows) ||
           (f.cols2 >= 0 && StagesStreamingRuns(folded.dims[static_cast<size_t>(f.cols2)],
                                                fused_rows, fused_strip_rows)));
      if (StrideAliases(cols.dst_stride, std::min(tile.tile_cols, cols.n), machine) ||
          src_rows_alias || stages_runs) {
        StageBlock(tile, e, fused_cols, RoundUp(fused_rows, tile.tile_rows), machine);
        tile.strip_rows = std::min(tile.strip_rows, kMaxFusedStripRows);
        // With stages_runs the stage holds a row of tiles past the strip (FusedBlocks' halo).
        // The L2 sets are counted only for the widths that may copy (the count walks the
        // tile's rows); FusedSourceCopy checks the width again for its other callers.
        const SourceRowsCopy copy = FusedSourceCopy(
            e, tile.block_cols, tile.strip_rows + (stages_runs ? tile.tile_rows : 0), streaming,
            CopiesFusedSourceRows(e) && TileRowsOverfillAnL2Set(folded, tile, machine));
        tile.source_pitch = copy.pitch;
        tile.source_copy = copy.reason;
        tile.row_granule = tile.strip_rows;
        tile.col_granule = std::max(tile.col_granule, tile.tile_cols);
        tile.rows_share_lines = stages_runs;
        return tile;
      }
    }
    const int64_t plane_rows = FusedRows(folded, tile);
    tile.strip_rows = BandStripRows(tile.tile_rows, tile.vector_bytes, machine);
    tile.strip_rows = std::min(tile.strip_rows, RoundUp(plane_rows, tile.tile_rows));
    if (tile.fused) tile.strip_rows = std::min(tile.strip_rows, kMaxFusedStripRows);
    // Only where whole aligned lines can bypass the cache (TilesPlane): destination rows a
    // whole number of lines apart.
    if (strategy == Strategy::kTiles && streaming && BandWalkStreams(cols.dst_stride)) {
      if (ShortStrips(folded, machine)) {
        // Where the calibration found the memory serving short strips faster (an Intel
        // Xeon: f32 8192^2 0.21 -> 0.67 of memcpy, bf16 0.46 -> 1.19, i8 16384 x 8192 0.49
        // -> 1.09; walk_calibration.h), each row of tiles reads 1 KiB of its source rows. Only
        // past the streaming threshold, where it was measured: with the source in cache the
        // tall strips stay faster there too (f32 1024^2 0.50 / 0.35, f32 3x2048x2x128
        // `0,3,2,1` 0.79 / 0.53 with cache-bypassing stores).
        tile.strip_rows =
            std::min(RoundUp(std::max(tile.tile_rows, kShortStripRows), tile.tile_rows),
                     RoundUp(plane_rows, tile.tile_rows));
        tile.band_group = std::max<int64_t>(1, kGroupedRunBytes / tile.vector_bytes);
      } else {
        tile.band_group = GroupedBands(e, tile.tile_rows, tile.strip_rows, tile.vector_bytes);
      }
    }
  } else {
    tile.strip_rows = tile.tile_rows;
  }
  // In cache, past L2 (an Intel Xeon, ratio to memcpy, alternating in one process, 1 / 2
  // threads: f32 768^2 0.53 -> 0.67 / 0.79 -> 1.25, f32 1000^2 0.48 -> 0.76 / 0.58 -> 1.09,
  // f32 1000 x 3000 0.70 -> 0.83 / 0.99 -> 1.40; staged, the stores only: i8 2048^2 0.47 ->
  // 0.58 / 1.01 -> 1.34; in L2, f32 256^2, the prefetches only cost: 0.72 -> 0.66). With
  // cache-bypassing stores nothing is read for the stores, and the band walks prefetch their
  // source already.
  // A band walk whose destination rows are not whole lines apart stores ordinarily even in a
  // plan that streams (TilesPlane), so it fetches ahead there too, unless it realigns them
  // (RealignsRows) or they follow each other and go through a stage (StagesDenseRows).
  tile.realign_rows =
      strategy == Strategy::kTiles && RealignsRows(folded, machine, tile.vector_bytes, streaming);
  const bool ordinary_stores =
      !streaming ||
      (strategy == Strategy::kTiles && !BandWalkStreams(cols.dst_stride) && !tile.realign_rows &&
       !StagesDenseRows(cols.dst_stride, rows.n, e, tile.tile_cols));
  tile.prefetch_ahead = ordinary_stores && machine.prefetch_ahead_bytes > 0 &&
                        (strategy == Strategy::kTiles || strategy == Strategy::kStagedTiles) &&
                        ProblemBytes(folded) >= machine.prefetch_ahead_bytes;
  tile.row_granule = tile.strip_rows;
  tile.col_granule = std::max(tile.col_granule, tile.tile_cols);
  return tile;
}

int64_t FusedRows(const Problem& folded, const Tile& tile) {
  int64_t rows = 1;
  for (const int i : {tile.rows_dim, tile.rows2_dim, tile.rows3_dim}) {
    if (i >= 0) rows *= folded.dims[static_cast<size_t>(i)].n;
  }
  return rows;
}

int64_t PlaneRunBytes(const Problem& folded, const Tile& tile, bool destination) {
  const std::array<int, 5> order =
      destination
          ? std::array{tile.rows_dim, tile.rows2_dim, tile.rows3_dim, tile.cols_dim, tile.cols2_dim}
          : std::array{tile.cols_dim, tile.cols2_dim, tile.rows_dim, tile.rows2_dim,
                       tile.rows3_dim};
  int64_t run = folded.elem_bytes;
  for (const int i : order) {
    if (i < 0) continue;
    const Dim& d = folded.dims[static_cast<size_t>(i)];
    if ((destination ? d.dst_stride : d.src_stride) != run) break;
    run *= d.n;
  }
  return run;
}

}  // namespace iotx::kernels
