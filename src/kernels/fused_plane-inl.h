// The walk of one fused plane, Strategy::kFusedTiles (nest.h): rows that span two or three
// dims and columns that span two, found through offset tables; in place band by band, or staged
// through an L1/L2 block when the lines alias.
#if defined(IOTX_KERNELS_FUSED_PLANE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef IOTX_KERNELS_FUSED_PLANE_INL_H_
#undef IOTX_KERNELS_FUSED_PLANE_INL_H_
#else
#define IOTX_KERNELS_FUSED_PLANE_INL_H_
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "hwy/highway.h"
#include "kernels/copy-inl.h"
#include "kernels/nest.h"
#include "kernels/tile-inl.h"

HWY_BEFORE_NAMESPACE();
namespace iotx::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Where row r and column c of a fused plane (Strategy::kFusedTiles, nest.h) start. Rows span
// up to three dims (blocks of rows_inner in groups of rows_mid), columns two.
struct FusedGeometry {
  int64_t rows_inner, src_row_stride, src_outer_row_stride;
  int64_t cols_inner, dst_col_stride, dst_outer_col_stride;
  int64_t rows_mid = INT64_MAX, src_outer2_row_stride = 0;  // one group: no third dim
  int64_t RowSrc(int64_t r) const {
    const int64_t block = r / rows_inner;
    return block / rows_mid * src_outer2_row_stride + block % rows_mid * src_outer_row_stride +
           r % rows_inner * src_row_stride;
  }
  int64_t ColDst(int64_t c) const {
    return c / cols_inner * dst_outer_col_stride + c % cols_inner * dst_col_stride;
  }
};

// The offset tables of a fused plane's strip (rows) and band (columns), kept across the planes
// of one run: every plane of a nest has the same geometry, so the tables of a strip or band
// that starts where the previous plane's did are the same. Planes of one strip and one band
// (135 x 15: every plane of bf16 3x39x4x157x45x15 `3,2,1,5,4,0`) computed them once per
// plane, a quarter of their time. Planes of at most kMaxFusedStripRows rows (columns) keep one
// table for all their strips (bands); a table kept for one band alone was computed again for
// every band of every plane.
struct FusedTables {
  static constexpr size_t kMaxTileRows = 64;  // a tile's rows or columns: 1-byte elements
  int64_t row_off[kMaxFusedStripRows + kMaxTileRows];
  int64_t col_off[kMaxFusedStripRows + kMaxTileRows];
  size_t rows_first = SIZE_MAX, rows_count = 0, cols_first = SIZE_MAX, cols_count = 0;
};

#if HWY_TARGET == HWY_SCALAR
template <size_t kElem, class D>
HWY_NOINLINE void FusedPlane(D, const uint8_t* src, uint8_t* dst, size_t rows, size_t cols,
                             const FusedGeometry& g, size_t, size_t, size_t, size_t, bool,
                             FusedTables*) {
  for (size_t c = 0; c < cols; ++c) {
    for (size_t r = 0; r < rows; ++r) {
      std::memcpy(dst + g.ColDst(static_cast<int64_t>(c)) + r * kElem,
                  src + g.RowSrc(static_cast<int64_t>(r)) + c * kElem, kElem);
    }
  }
}
#else
// Offsets of `count` consecutive fused rows (or columns) from `first` on: tab[k] =
// outer * ((first + k) / inner) + stride * ((first + k) % inner), by increments.
HWY_INLINE void FusedOffsets(int64_t first, size_t count, int64_t inner, int64_t stride,
                             int64_t outer, int64_t* HWY_RESTRICT tab) {
  int64_t q = first / inner;
  int64_t rem = first % inner;
  for (size_t k = 0; k < count; ++k) {
    tab[k] = q * outer + rem * stride;
    if (++rem == inner) {
      rem = 0;
      ++q;
    }
  }
}

// The source offsets of `count` consecutive fused rows from `first` on (RowSrc), by
// increments: a third dim adds its stride each rows_mid blocks.
HWY_INLINE void FusedRowOffsets(const FusedGeometry& g, int64_t first, size_t count,
                                int64_t* HWY_RESTRICT tab) {
  if (g.rows_mid == INT64_MAX) {
    FusedOffsets(first, count, g.rows_inner, g.src_row_stride, g.src_outer_row_stride, tab);
    return;
  }
  int64_t block = first / g.rows_inner;
  int64_t rem = first % g.rows_inner;
  int64_t base =
      block / g.rows_mid * g.src_outer2_row_stride + block % g.rows_mid * g.src_outer_row_stride;
  int64_t mid = block % g.rows_mid;
  for (size_t k = 0; k < count; ++k) {
    tab[k] = base + rem * g.src_row_stride;
    if (++rem == g.rows_inner) {
      rem = 0;
      base += g.src_outer_row_stride;
      if (++mid == g.rows_mid) {
        mid = 0;
        base += g.src_outer2_row_stride - g.rows_mid * g.src_outer_row_stride;
      }
    }
  }
}

// A partial tile of a fused plane: rows [r0, r0 + n) x columns [c0, c0 + m), n <= kRows,
// m <= kCols, staged through two L1 buffers like TransposeEdge (rows and columns are found
// through the fused geometry, not one stride).
template <size_t kElem, class D>
HWY_NOINLINE void FusedEdge(D d, const uint8_t* HWY_RESTRICT src, uint8_t* HWY_RESTRICT dst,
                            const FusedGeometry& g, size_t r0, size_t n, size_t c0, size_t m) {
  using Shape = TileShape<kElem, D>;
  if constexpr (kEdgeInRegisters<kElem>) {
    int64_t row_off[Shape::kRows] = {};
    int64_t col_off[Shape::kCols] = {};
    FusedRowOffsets(g, static_cast<int64_t>(r0), n, row_off);
    FusedOffsets(static_cast<int64_t>(c0), m, g.cols_inner, g.dst_col_stride,
                 g.dst_outer_col_stride, col_off);
    TransposeTileLines<kElem, false, true, true>(d, src + c0 * kElem, 0, dst + r0 * kElem, 0,
                                                 row_off, col_off, n, m);
    return;
  }
  alignas(64) uint8_t in[Shape::kRows * Shape::kVecBytes];
  alignas(64) uint8_t out[Shape::kCols * kLineBytes];
  for (size_t r = 0; r < n; ++r) {
    CopyBytes(src + g.RowSrc(static_cast<int64_t>(r0 + r)) + c0 * kElem, in + r * Shape::kVecBytes,
              m * kElem);
  }
  const size_t groups = (n + Shape::kB - 1) / Shape::kB;
  TransposeGroups<kElem>(d, in, static_cast<int64_t>(Shape::kVecBytes), out, kLineBytes, groups);
  for (size_t c = 0; c < m; ++c) {
    CopyBytes(out + c * kLineBytes, dst + g.ColDst(static_cast<int64_t>(c0 + c)) + r0 * kElem,
              n * kElem);
  }
}

// FusedPlane's unstaged walk: strips of strip_rows rows, band by band, tile by tile, the
// row offsets of a strip and the column offsets of a band kept in `tab` across the planes of
// a run. Where partial tiles run in registers (kEdgeInRegisters) they run here too, on the
// same offsets; elsewhere the walk stops at the last whole tile and FusedPlane sends the rest
// through FusedEdge. Through FusedEdge, each partial tile computed its own offsets (two
// divisions and a pass over its rows), and planes narrower than a tile are nothing but
// partial tiles: bf16 3x39x4x157x45x15 `3,2,1,5,4,0`, 135 x 15 planes, ran at 0.09x memcpy in
// cache and 0.2x in DRAM, its time in FusedEdge's offsets and reloads.
template <size_t kElem, class D>
HWY_INLINE void FusedWalk(D d, const uint8_t* HWY_RESTRICT src, uint8_t* HWY_RESTRICT dst,
                          size_t rows, size_t cols, const FusedGeometry& g, size_t strip_rows,
                          bool streaming, FusedTables& tab) {
  using Shape = TileShape<kElem, D>;
  static_assert(Shape::kRows <= FusedTables::kMaxTileRows &&
                Shape::kCols <= FusedTables::kMaxTileRows);
  constexpr bool kPartialTiles = kEdgeInRegisters<kElem>;
  if constexpr (!kPartialTiles) {
    rows = rows / Shape::kRows * Shape::kRows;
    cols = cols / Shape::kCols * Shape::kCols;
  }
  int64_t* HWY_RESTRICT row_off = tab.row_off;
  int64_t* HWY_RESTRICT col_off = tab.col_off;
  const bool stream = streaming && reinterpret_cast<uintptr_t>(dst) % kLineBytes == 0 &&
                      g.dst_col_stride % kLineBytes == 0 &&
                      g.dst_outer_col_stride % kLineBytes == 0;
  const auto walk = [&](auto stream_tag) {
    constexpr bool kStream = decltype(stream_tag)::value;
    // A plane of at most kMaxFusedStripRows rows keeps one table for all its strips (429-row
    // planes in strips of 384 and 45 recomputed both per plane), a taller one a table per
    // strip; so do the columns for the bands.
    const bool whole = rows <= static_cast<size_t>(kMaxFusedStripRows);
    const bool whole_cols = cols <= static_cast<size_t>(kMaxFusedStripRows);
    for (size_t r0 = 0; r0 < rows; r0 += strip_rows) {
      const size_t n = std::min(strip_rows, rows - r0);
      const size_t n_full = n / Shape::kRows * Shape::kRows;
      const size_t first = whole ? 0 : r0;
      const size_t count = whole ? rows : n;
      if (tab.rows_first != first || tab.rows_count != count) {
        FusedRowOffsets(g, static_cast<int64_t>(first), count, row_off);
        // strip_rows is a multiple of the tile's rows (planner_tile.cc), so the last tile reads at
        // most kRows - 1 entries past the rows: zeros, never dereferenced (masked off).
        std::fill(row_off + count, row_off + count + Shape::kRows, int64_t{0});
        tab.rows_first = first;
        tab.rows_count = count;
      }
      const int64_t* HWY_RESTRICT strip_off = row_off + (r0 - first);
      uint8_t* t = dst + r0 * kElem;
      for (size_t c = 0; c < cols; c += Shape::kCols) {
        const size_t m = std::min<size_t>(Shape::kCols, cols - c);
        const size_t cols_first = whole_cols ? 0 : c;
        const size_t cols_count = whole_cols ? cols : m;
        if (tab.cols_first != cols_first || tab.cols_count != cols_count) {
          FusedOffsets(static_cast<int64_t>(cols_first), cols_count, g.cols_inner, g.dst_col_stride,
                       g.dst_outer_col_stride, col_off);
          // A partial band reads the entries past its columns: zeros, masked off.
          std::fill(col_off + cols_count, col_off + cols_count + Shape::kCols, int64_t{0});
          tab.cols_first = cols_first;
          tab.cols_count = cols_count;
        }
        const int64_t* HWY_RESTRICT band_off = col_off + (c - cols_first);
        const uint8_t* s = src + c * kElem;
        if (m == Shape::kCols) {
          for (size_t r = 0; r < n_full; r += Shape::kRows) {
            TransposeTileLines<kElem, kStream, true>(d, s, 0, t + r * kElem, 0, strip_off + r,
                                                     band_off);
          }
        }
        if constexpr (kPartialTiles) {
          if (m < Shape::kCols) {
            for (size_t r = 0; r < n_full; r += Shape::kRows) {
              TransposeTileLines<kElem, false, true, true>(d, s, 0, t + r * kElem, 0, strip_off + r,
                                                           band_off, Shape::kRows, m);
            }
          }
          if (n_full < n) {
            TransposeTileLines<kElem, false, true, true>(
                d, s, 0, t + n_full * kElem, 0, strip_off + n_full, band_off, n - n_full, m);
          }
        }
      }
    }
  };
  if (stream) {
    walk(std::true_type());
  } else {
    walk(std::false_type());
  }
}

// A fused plane's source rows [0, n) (at src + row_off[r]), `run` bytes each, copied into
// `to`, rows `pitch` bytes apart, the runs kSourceRowsAhead rows on fetched as each is copied.
HWY_INLINE void CopySourceRows(const uint8_t* HWY_RESTRICT src, const int64_t* row_off, size_t n,
                               size_t run, uint8_t* HWY_RESTRICT to, size_t pitch) {
  for (size_t r = 0; r < n; ++r) {
    if (r + static_cast<size_t>(kSourceRowsAhead) < n) {
      const uint8_t* ahead = src + row_off[r + static_cast<size_t>(kSourceRowsAhead)];
      for (size_t i = 0; i < run; i += kLineBytes) hwy::Prefetch(ahead + i);
    }
    CopyBytes(src + row_off[r], to + r * pitch, run);
  }
}

// A fused plane's full tiles (rows_full x cols_full) staged: blocks of strip_rows x
// block_cols are transposed tile by tile into a stage whose destination rows are `pitch`
// bytes apart, then leave as destination runs. kSourceStaged (Nest::source_pitch): each
// block's source rows are first copied as runs into a second stage, `source_pitch` bytes
// apart, and the tiles read that. `halo`: the runs' first and last lines are shared with the
// strips above and below (StreamOwnedLines).
template <size_t kElem, bool kSourceStaged, class D>
HWY_NOINLINE void FusedBlocks(D d, const uint8_t* HWY_RESTRICT src, uint8_t* HWY_RESTRICT dst,
                              size_t rows_full, size_t cols_full, const FusedGeometry& g,
                              size_t strip_rows, size_t block_cols, size_t pitch,
                              size_t source_pitch, bool streaming, bool halo) {
  using Shape = TileShape<kElem, D>;
  alignas(64) uint8_t stage[kMaxStageBytes];
  alignas(64) uint8_t source_stage[kSourceStaged ? kMaxStageBytes : kLineBytes];
  int64_t row_off[kMaxFusedStripRows + FusedTables::kMaxTileRows];
  // The stage's destination rows, for the tiles that read the source in place (the copied
  // rows need no table).
  [[maybe_unused]] int64_t col_off[Shape::kCols];
  if constexpr (!kSourceStaged) {
    for (size_t j = 0; j < Shape::kCols; ++j) col_off[j] = static_cast<int64_t>(j * pitch);
  }
  // `halo` (cache-bypassing stores where a run's first or last line is shared with the strip
  // above or below, FusedPlane): each strip writes the lines that start within its rows, its
  // stage covering one row of tiles more (StreamOwnedLines), as StagedPlane's blocks do.
  halo = halo && streaming && (strip_rows + Shape::kRows) * kElem <= pitch;
  for (size_t r0 = 0; r0 < rows_full; r0 += strip_rows) {
    const size_t n = std::min(strip_rows, rows_full - r0);
    const size_t covered = halo && r0 + n < rows_full ? n + Shape::kRows : n;
    FusedRowOffsets(g, static_cast<int64_t>(r0), covered, row_off);
    for (size_t c0 = 0; c0 < cols_full; c0 += block_cols) {
      const size_t m = std::min(block_cols, cols_full - c0);
      if constexpr (kSourceStaged) {
        // The copied rows are one stride apart: the tiles of a staged 2-D plane, no tables.
        CopySourceRows(src + c0 * kElem, row_off, covered, m * kElem, source_stage, source_pitch);
        if (streaming) {
          // A column of tiles completes its destination runs, which stream out before the next
          // column is tiled: the cache-bypassing stores drain while the next tiles' shuffles
          // run instead of all after them. Builds before and after alternated on 8-10
          // reversals of bytes in DRAM (rank 4-7, 1 and 2 threads, three rounds each; AMD EPYC
          // Zen 5): new / old 1.19 and 1.07 (geometric means of two runs), 0.94 the least; i8
          // 16^7 reversed 0.22-0.27 -> 0.25-0.34 of memcpy. Only here, where the tiles read the
          // copied rows: tiles that read the source in place (the other widths) would read
          // each source row a line at a time instead of a block's width (f32 16^6 reversed
          // 0.48-0.50 -> 0.24-0.29), and the staged 2-D walks ran no faster so (i8 2048^2,
          // 4001 x 30000).
          for (size_t c = 0; c < m; c += Shape::kCols) {
            for (size_t r = 0; r < covered; r += Shape::kRows) {
              TransposeTileLines<kElem, false, false, false>(
                  d, source_stage + r * source_pitch + c * kElem,
                  static_cast<int64_t>(source_pitch), stage + c * pitch + r * kElem,
                  static_cast<int64_t>(pitch));
            }
            for (size_t j = c; j < c + Shape::kCols; ++j) {
              StreamOwnedLines(stage + j * pitch,
                               dst + g.ColDst(static_cast<int64_t>(c0 + j)) + r0 * kElem, n * kElem,
                               covered * kElem, r0 == 0 || !halo);
            }
          }
          continue;
        }
        for (size_t r = 0; r < covered; r += Shape::kRows) {
          for (size_t c = 0; c < m; c += Shape::kCols) {
            TransposeTileLines<kElem, false, false, false>(
                d, source_stage + r * source_pitch + c * kElem, static_cast<int64_t>(source_pitch),
                stage + c * pitch + r * kElem, static_cast<int64_t>(pitch));
          }
        }
      } else {
        for (size_t r = 0; r < covered; r += Shape::kRows) {
          for (size_t c = 0; c < m; c += Shape::kCols) {
            TransposeTileLines<kElem, false, true, false>(d, src + (c0 + c) * kElem, 0,
                                                          stage + c * pitch + r * kElem, 0,
                                                          row_off + r, col_off);
          }
        }
      }
      for (size_t j = 0; j < m; ++j) {
        uint8_t* run = dst + g.ColDst(static_cast<int64_t>(c0 + j)) + r0 * kElem;
        if (streaming) {
          StreamOwnedLines(stage + j * pitch, run, n * kElem, covered * kElem, r0 == 0 || !halo);
        } else {
          // Not CopyRun: here glibc's memcpy ran slower (16^5 f32 reversed, in cache:
          // 0.35-0.39 -> 0.25x memcpy, alternating in one process).
          CopyBytes(stage + j * pitch, run, n * kElem);
        }
      }
    }
  }
}

// Strategy::kFusedTiles on one plane: rows and columns each span two dims (FusedGeometry), so
// a plane of 16 x 16 f32 (16^6 reversed) becomes 256 x 256, and 801x72x387x7 i8 `3,2,0,1`
// (7 columns) 57672 x 2709; rows whose two dims leave short runs span three (i8 4x16^5
// reversed: 1024 x 256, planner_strategy.cc FindFusion). It is walked like kTiles: strips of
// strip_rows rows band by band, destination rows written in runs across the dims
// (FusedWalk), or block by block through an L1 stage where rows alias (pitch > 0). Row and
// column offsets are tables over the dims (any inner extents: a tile may straddle an inner
// dim's end); partial tiles run in the walk where they fit in registers, through FusedEdge
// elsewhere.
// (16^6 f32 reversed, one 16 x 16 plane per kernel-loop position: 0.25x memcpy; fused planes
// whose inner extents do not divide the tile took the element-wise edge path: 0.05-0.2x.)
template <size_t kElem, class D>
HWY_NOINLINE void FusedPlane(D d, const uint8_t* HWY_RESTRICT src, uint8_t* HWY_RESTRICT dst,
                             size_t rows, size_t cols, const FusedGeometry& g, size_t strip_rows,
                             size_t block_cols, size_t pitch, size_t source_pitch, bool streaming,
                             FusedTables* tables) {
  using Shape = TileShape<kElem, D>;
  if constexpr (kTileInRegisters<kElem>) {
    const size_t rows_full = rows / Shape::kRows * Shape::kRows;
    const size_t cols_full = cols / Shape::kCols * Shape::kCols;
    strip_rows = std::min<size_t>(strip_rows, kMaxFusedStripRows);
    // The planner sets source_pitch for the widths CopiesFusedSourceRows names and sizes the
    // stage (FusedSourceCopy); the others compile no copying walk, and a nest built otherwise,
    // whose rows would not fit the stage, reads the source in place.
    constexpr bool kMayCopySource = CopiesFusedSourceRows(kElem);
    // Runs whose first or last lines the strips above or below share (FusedBlocks' halo).
    const bool lines_shared = g.dst_col_stride % kLineBytes != 0 ||
                              g.dst_outer_col_stride % kLineBytes != 0 ||
                              reinterpret_cast<uintptr_t>(dst) % kLineBytes != 0;
    constexpr auto kStage = static_cast<size_t>(kMaxStageBytes);
    if (kMayCopySource && pitch > 0 && source_pitch >= block_cols * kElem &&
        strip_rows * source_pitch <= kStage) {
      // The source stage holds the halo's rows too, or the strips go without it.
      const bool halo = lines_shared && (strip_rows + Shape::kRows) * source_pitch <= kStage;
      FusedBlocks<kElem, kMayCopySource>(d, src, dst, rows_full, cols_full, g, strip_rows,
                                         block_cols, pitch, source_pitch, streaming, halo);
    } else if (pitch > 0) {
      FusedBlocks<kElem, false>(d, src, dst, rows_full, cols_full, g, strip_rows, block_cols, pitch,
                                0, streaming, lines_shared);
    } else {
      FusedWalk<kElem>(d, src, dst, rows, cols, g, strip_rows, streaming, *tables);
      if constexpr (kEdgeInRegisters<kElem>) return;  // its partial tiles ran in the walk
    }
    for (size_t r = 0; r < rows_full && cols_full < cols; r += Shape::kRows) {
      FusedEdge<kElem>(d, src, dst, g, r, Shape::kRows, cols_full, cols - cols_full);
    }
    for (size_t c = 0; rows_full < rows && c < cols; c += Shape::kCols) {
      FusedEdge<kElem>(d, src, dst, g, rows_full, rows - rows_full, c,
                       std::min<size_t>(Shape::kCols, cols - c));
    }
  } else {
    (void)d;
    (void)strip_rows;
    (void)block_cols;
    (void)pitch;
    (void)source_pitch;
    (void)streaming;
    for (size_t c = 0; c < cols; ++c) {
      for (size_t r = 0; r < rows; ++r) {
        CopyBytes(src + g.RowSrc(static_cast<int64_t>(r)) + c * kElem,
                  dst + g.ColDst(static_cast<int64_t>(c)) + r * kElem, kElem);
      }
    }
  }
}
#endif  // HWY_TARGET == HWY_SCALAR

// Strategy::kFusedTiles with Nest::stage_planes: the plane is walked with ordinary stores into
// a stage laid out as its destination runs (FusedPlaneRuns), one after the other, and each run
// then leaves with cache-bypassing stores for its whole lines, ordinary ones for its first and
// last partial lines. A plane the planner did not size for (its runs would not fit the stage)
// streams in place as FusedPlane does; its column offsets are the destination's, not the
// stage's, so the ones FusedTables keeps are dropped on the way in and out.
template <size_t kElem, class D>
HWY_NOINLINE void FusedPlaneThroughStage(D d, const uint8_t* HWY_RESTRICT src,
                                         uint8_t* HWY_RESTRICT dst, size_t rows, size_t cols,
                                         const FusedGeometry& g, size_t strip_rows,
                                         FusedTables* tables) {
  const PlaneRuns runs = FusedPlaneRuns(static_cast<int64_t>(rows), static_cast<int64_t>(kElem),
                                        static_cast<int64_t>(cols), g.cols_inner, g.dst_col_stride,
                                        g.dst_outer_col_stride);
  if (runs.count == 0 || runs.count * runs.bytes > kMaxStageBytes) {
    tables->cols_first = SIZE_MAX;
    FusedPlane<kElem>(d, src, dst, rows, cols, g, strip_rows, 1, 0, 0, true, tables);
    tables->cols_first = SIZE_MAX;
    return;
  }
  alignas(64) uint8_t stage[kMaxStageBytes];
  FusedGeometry staged = g;
  staged.dst_outer_col_stride = g.cols_inner * g.dst_col_stride;  // runs back to back
  FusedPlane<kElem>(d, src, stage, rows, cols, staged, strip_rows, 1, 0, 0, false, tables);
  const auto bytes = static_cast<size_t>(runs.bytes);
  for (int64_t k = 0; k < runs.count; ++k) {
    StreamBytes(stage + static_cast<size_t>(k) * bytes, dst + k * runs.stride, bytes);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace iotx::kernels
HWY_AFTER_NAMESPACE();

#endif  // IOTX_KERNELS_FUSED_PLANE_INL_H_
