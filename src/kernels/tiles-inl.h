// The walks of one plane that Strategy::kTiles and kStagedTiles run (nest.h): strips walked
// band by band with the tile in place, or blocks staged through an L1/L2 buffer whose
// destination rows leave as runs; the plane's partial tiles at its edges.
#if defined(IOTX_KERNELS_TILES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef IOTX_KERNELS_TILES_INL_H_
#undef IOTX_KERNELS_TILES_INL_H_
#else
#define IOTX_KERNELS_TILES_INL_H_
#endif

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels/copy-inl.h"
#include "kernels/nest.h"
#include "kernels/tile-inl.h"

HWY_BEFORE_NAMESPACE();
namespace iotx::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET == HWY_SCALAR
template <size_t kElem, class D>
HWY_NOINLINE void TilesPlane(D, const uint8_t* src, int64_t ss, uint8_t* dst, int64_t ds,
                             size_t rows, size_t cols, size_t, bool, bool, size_t, bool, bool) {
  ScalarPlane<kElem>(src, ss, dst, ds, rows, cols);
}
template <size_t kElem, class D>
HWY_NOINLINE void StagedPlane(D, const uint8_t* src, int64_t ss, uint8_t* dst, int64_t ds,
                              size_t rows, size_t cols, size_t, size_t, size_t, bool, bool, bool) {
  ScalarPlane<kElem>(src, ss, dst, ds, rows, cols);
}
#else
// The source lines of the tile at `p` (rows `stride` apart), fetched ahead: one prefetch per
// row (a tile's row is one vector), into L1, or into L2 only (kL2) where the rows alias in L1:
// a strip's lines there all fall in one or a few of the L1's sets, which cannot keep them until
// the next band comes (ratio to memcpy, next band into L1 / L2, alternating in one process,
// 1 thread: f32 8192^2 0.71 / 0.78, bf16 8192^2 0.56 / 0.63, f64 4096^2 0.83 / 0.88, f32
// 1024^2 in cache 0.53 / 0.59; not aliasing, f32 8000^2 0.91 / 0.89).
template <size_t kRows, bool kL2>
HWY_INLINE void PrefetchTileRows(const uint8_t* p, int64_t stride) {
  for (size_t k = 0; k < kRows; ++k) {
    const uint8_t* line = p + static_cast<int64_t>(k) * stride;
    if constexpr (kL2) {
      __builtin_prefetch(line, /*rw=*/0, /*locality=*/2);  // prefetcht1 on x86
    } else {
      hwy::Prefetch(line);
    }
  }
}

// The destination lines of the tile at `t` (columns `stride` apart, one line each), fetched
// for writing ahead of its stores (Nest::prefetch_ahead).
template <size_t kCols>
HWY_INLINE void PrefetchTileStores(uint8_t* t, int64_t stride) {
  for (size_t j = 0; j < kCols; ++j) {
    __builtin_prefetch(t + static_cast<int64_t>(j) * stride, /*rw=*/1, /*locality=*/3);
  }
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// TileBands for 1-byte tiles built in halves (HalvesByteTiles, nest.h): each band of 64
// columns is walked twice, top to bottom, first every tile's half of the band's first 32
// columns, then the other half, so its stores keep 32 destination rows open at a time rather
// than 64. A standalone loop streaming only the band walk's stores into rows 16 KiB apart ran
// at 12-14 GB/s with 64 rows per band and 35 with 32 (39-41 with 24 or fewer); rows 16000 B
// apart, 32 either way (AMD EPYC Zen 5, docs/performance.md, twenty-sixth look). The second
// pass reads the lines the first brought in (a strip's are half the L1) and fetches the next
// band's.
template <bool kStream, bool kSrcAlias, bool kPrefetchAhead, class D>
HWY_INLINE void ByteTileHalfBands(D d, const uint8_t* HWY_RESTRICT src, int64_t src_row_stride,
                                  uint8_t* HWY_RESTRICT dst, int64_t dst_row_stride, size_t rows,
                                  size_t cols) {
  using Shape = TileShape<1, D>;
  for (size_t c = 0; c < cols; c += Shape::kCols) {
    const uint8_t* s = src + c;
    uint8_t* t = dst + static_cast<int64_t>(c) * dst_row_stride;
    const auto pass = [&](auto half) {
      constexpr size_t kHalf = decltype(half)::value;
      for (size_t r = 0; r < rows; r += Shape::kRows) {
        const uint8_t* tile = s + static_cast<int64_t>(r) * src_row_stride;
        if constexpr (kHalf == 1 && (kStream || kPrefetchAhead)) {
          if (c + Shape::kCols < cols) {
            PrefetchTileRows<Shape::kRows, kSrcAlias>(tile + Shape::kCols, src_row_stride);
          }
        }
        if constexpr (kPrefetchAhead) {
          if (r + kStoreTilesAhead * Shape::kRows < rows) {
            PrefetchTileStores<Shape::kCols / 2>(
                t + static_cast<int64_t>(32 * kHalf) * dst_row_stride + r +
                    kStoreTilesAhead * Shape::kRows,
                dst_row_stride);
          }
        }
        TransposeByteTileHalf<kHalf, kStream, false>(
            d, [&](size_t k) { return tile + static_cast<int64_t>(k) * src_row_stride; },
            [&](size_t col) { return t + static_cast<int64_t>(col) * dst_row_stride + r; });
      }
    };
    pass(std::integral_constant<size_t, 0>());
    pass(std::integral_constant<size_t, 1>());
  }
}
#endif

// Full tiles of `rows` rows (a multiple of kRows) x `cols` columns (a multiple of kCols),
// walked band by band: all tiles of one band of kCols columns, top to bottom, then the next.
// Each destination row of the band so receives rows * kElem bytes in one sequential run, and
// each source row is read one vector further per band. The old order (16 rows at a time
// along whole source rows, one line per destination row and visit) measured 0.40x memcpy on
// 768^2 f32 in cache and 0.31-0.49x at 8192^2 / 8000^2 in DRAM; bands of 384 rows 0.70 and
// 0.69-0.85 (docs/performance.md, "where the time went").
// kSrcAlias: the source rows alias in L1 (Nest::src_rows_alias), which decides the tile
// (GathersTileRows) and where the next band is fetched (PrefetchTileRows). kPrefetchAhead
// (ordinary stores only, Nest::prefetch_ahead): each tile fetches the same tile of the next
// band (as with cache-bypassing stores) and the destination lines of the tile kStoreTilesAhead
// further down the band for writing.
template <size_t kElem, bool kStream, bool kSrcAlias, class D, bool kPrefetchAhead = false>
HWY_INLINE void TileBands(D d, const uint8_t* HWY_RESTRICT src, int64_t src_row_stride,
                          uint8_t* HWY_RESTRICT dst, int64_t dst_row_stride, size_t rows,
                          size_t cols) {
  using Shape = TileShape<kElem, D>;
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  if constexpr (HalvesByteTiles(true, kElem, Shape::kVecBytes)) {
    ByteTileHalfBands<kStream, kSrcAlias, kPrefetchAhead>(d, src, src_row_stride, dst,
                                                          dst_row_stride, rows, cols);
    return;
  }
#endif
  for (size_t c = 0; c < cols; c += Shape::kCols) {
    const uint8_t* s = src + c * kElem;
    uint8_t* t = dst + static_cast<int64_t>(c) * dst_row_stride;
    for (size_t r = 0; r < rows; r += Shape::kRows) {
      // In DRAM, and in cache past L2, the same tile of the next band fetched ahead: a strip of
      // hundreds of rows is more streams than the hardware prefetcher follows (1 thread,
      // ratio to memcpy, alternating in one process: bf16 64x256x56x56 `0,2,3,1` 0.61-0.67 ->
      // 0.94-1.07; 8000^2, 2048^2 c128, 401x60x1493 f32 `2,1,0` unchanged). Past L2 with
      // ordinary stores, the destination lines a little ahead too (Nest::prefetch_ahead).
      if ((kStream || kPrefetchAhead) && c + Shape::kCols < cols) {
        PrefetchTileRows<Shape::kRows, kSrcAlias>(
            s + static_cast<int64_t>(r) * src_row_stride + Shape::kCols * kElem, src_row_stride);
      }
      if (kPrefetchAhead && r + kStoreTilesAhead * Shape::kRows < rows) {
        PrefetchTileStores<Shape::kCols>(t + (r + kStoreTilesAhead * Shape::kRows) * kElem,
                                         dst_row_stride);
      }
      TransposeTile<kElem, kStream, kSrcAlias>(d, s + static_cast<int64_t>(r) * src_row_stride,
                                               src_row_stride, t + r * kElem, dst_row_stride);
    }
  }
}

// Full tiles as TileBands walks them, with cache-bypassing stores, but `group` bands at a time
// (Nest::band_group, GroupedBands in planner_tile.cc): each row of tiles crosses the group's bands,
// reading group vectors of each of its source rows at once, before the next row of tiles.
template <size_t kElem, bool kSrcAlias, class D>
HWY_INLINE void TileBandGroups(D d, const uint8_t* HWY_RESTRICT src, int64_t src_row_stride,
                               uint8_t* HWY_RESTRICT dst, int64_t dst_row_stride, size_t rows,
                               size_t cols, size_t group) {
  using Shape = TileShape<kElem, D>;
  const size_t group_cols = group * Shape::kCols;
  for (size_t c0 = 0; c0 < cols; c0 += group_cols) {
    const size_t c_end = std::min(cols, c0 + group_cols);
    for (size_t r = 0; r < rows; r += Shape::kRows) {
      const uint8_t* s = src + static_cast<int64_t>(r) * src_row_stride;
      uint8_t* t = dst + r * kElem;
      for (size_t c = c0; c < c_end; c += Shape::kCols) {
        TransposeTile<kElem, true, kSrcAlias>(d, s + c * kElem, src_row_stride,
                                              t + static_cast<int64_t>(c) * dst_row_stride,
                                              dst_row_stride);
      }
    }
  }
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// Lanes `a` from lane `first` on, then `b`'s first lanes: the 64 bytes that start `first`
// lanes into `a` where `b` follows it in memory (one two-source permute).
template <class D>
HWY_INLINE hn::VFromD<D> JoinLanes(D d, hn::VFromD<D> a, hn::VFromD<D> b, __m512i index) {
  using T = hn::TFromD<D>;
  const hn::RebindToUnsigned<D> du;
  const __m512i x = hn::BitCast(du, a).raw, y = hn::BitCast(du, b).raw;
  static_assert(sizeof(T) == 8, "8-byte lanes: 8- and 16-byte elements (BandWalkRealigns)");
  return hn::BitCast(d, hn::VFromD<decltype(du)>{_mm512_permutex2var_epi64(x, index, y)});
}

// Full tiles as TileBands walks them, with cache-bypassing stores, into destination rows that
// are not whole lines apart (BandWalkRealigns, nest.h): each destination row of a band starts
// part-way into a line of its own, so its tiles' 64-byte pieces straddle two lines each. The
// tiles go to two L1 buffers in turn (this tile's lines and the last one's), and each row's
// line between its last two pieces leaves whole and aligned, one permute of the two
// (JoinLanes); a run's first and last partial lines take byte-masked ordinary stores, which
// leave the bytes beside them (another strip's, another thread's) untouched, their lines
// fetched for writing a band ahead. The staged walk it replaces moves each byte through the
// cache twice.
template <size_t kElem, bool kSrcAlias, class D>
HWY_INLINE void TileBandsRealigned(D d, const uint8_t* HWY_RESTRICT src, int64_t src_row_stride,
                                   uint8_t* HWY_RESTRICT dst, int64_t dst_row_stride, size_t rows,
                                   size_t cols) {
  using Shape = TileShape<kElem, D>;
  using T = hn::TFromD<D>;
  static_assert(Shape::kVecBytes == kLineBytes, "one vector per destination line");
  const hn::Repartition<uint8_t, D> d8;
  const hn::RebindToUnsigned<D> du;
  using TU = hn::TFromD<decltype(du)>;
  alignas(64) uint8_t lines[2][Shape::kCols * kLineBytes];
  // Per row of the band: the bytes before its first line boundary (0: the row starts on one).
  size_t head[Shape::kCols];
  for (size_t c = 0; c < cols; c += Shape::kCols) {
    const uint8_t* s = src + c * kElem;
    uint8_t* t = dst + static_cast<int64_t>(c) * dst_row_stride;
    const size_t last = rows / Shape::kRows - 1;
    for (size_t j = 0; j < Shape::kCols; ++j) {
      uint8_t* run = t + static_cast<int64_t>(j) * dst_row_stride;
      const auto into = static_cast<size_t>(reinterpret_cast<uintptr_t>(run) % kLineBytes);
      head[j] = (kLineBytes - into) % kLineBytes;
      if (head[j] == 0) continue;
      // The partial lines take ordinary stores, and one that misses holds every later store up
      // until its line arrives: this band's last lines and the next band's first are fetched
      // for writing now, a band ahead of their stores.
      __builtin_prefetch(run + last * kLineBytes + head[j], /*rw=*/1, /*locality=*/3);
      if (c + Shape::kCols < cols) {
        __builtin_prefetch(run + static_cast<int64_t>(Shape::kCols) * dst_row_stride, 1, 3);
      }
    }
    for (size_t r = 0, k = 0; r < rows; r += Shape::kRows, ++k) {
      if (c + Shape::kCols < cols) {
        PrefetchTileRows<Shape::kRows, kSrcAlias>(
            s + static_cast<int64_t>(r) * src_row_stride + Shape::kCols * kElem, src_row_stride);
      }
      uint8_t* now = lines[k & 1];
      const uint8_t* before = lines[(k + 1) & 1];
      TransposeTile<kElem, false, kSrcAlias>(d, s + static_cast<int64_t>(r) * src_row_stride,
                                             src_row_stride, now, kLineBytes);
      for (size_t j = 0; j < Shape::kCols; ++j) {
        uint8_t* piece = t + static_cast<int64_t>(j) * dst_row_stride + r * kElem;
        const auto v = hn::Load(d, reinterpret_cast<const T*>(now + j * kLineBytes));
        if (head[j] == 0) {
          hn::Stream(v, d, reinterpret_cast<T*>(piece));
        } else if (k == 0) {
          hn::BlendedStore(hn::BitCast(d8, v), hn::FirstN(d8, head[j]), d8, piece);
        } else {
          const auto index =
              hn::Add(hn::Iota(du, 0), hn::Set(du, static_cast<TU>(head[j] / sizeof(T))));
          const auto prev = hn::Load(d, reinterpret_cast<const T*>(before + j * kLineBytes));
          hn::Stream(JoinLanes(d, prev, v, index.raw), d,
                     reinterpret_cast<T*>(piece - (kLineBytes - head[j])));
        }
      }
    }
    // Each run's last partial line: the last piece's bytes past its last line boundary.
    for (size_t j = 0; j < Shape::kCols; ++j) {
      if (head[j] == 0) continue;
      uint8_t* piece = t + static_cast<int64_t>(j) * dst_row_stride + last * kLineBytes;
      const auto v = hn::Load(d8, lines[last & 1] + j * kLineBytes);
      hn::BlendedStore(v, hn::Not(hn::FirstN(d8, head[j])), d8, piece);
    }
  }
}
#endif

// The parts of a plane outside its full tiles: columns [cols_full, cols) of rows [0,
// rows_full), and rows [rows_full, rows) of every column.
template <size_t kElem, class D>
HWY_NOINLINE void PlaneEdges(D d, const uint8_t* HWY_RESTRICT src, int64_t src_row_stride,
                             uint8_t* HWY_RESTRICT dst, int64_t dst_row_stride, size_t rows,
                             size_t cols, size_t rows_full, size_t cols_full) {
  using Shape = TileShape<kElem, D>;
  if (cols_full < cols) {
    for (size_t r = 0; r < rows_full; r += Shape::kRows) {
      EdgeTile<kElem>(d, src + static_cast<int64_t>(r) * src_row_stride + cols_full * kElem,
                      src_row_stride,
                      dst + static_cast<int64_t>(cols_full) * dst_row_stride + r * kElem,
                      dst_row_stride, Shape::kRows, cols - cols_full);
    }
  }
  if constexpr (kEdgeInRegisters<kElem>) {
    for (size_t c = 0; rows_full < rows && c < cols; c += Shape::kCols) {
      EdgeTile<kElem>(d, src + static_cast<int64_t>(rows_full) * src_row_stride + c * kElem,
                      src_row_stride, dst + static_cast<int64_t>(c) * dst_row_stride + rows_full * kElem,
                      dst_row_stride, rows - rows_full, std::min<size_t>(Shape::kCols, cols - c));
    }
    return;
  }
  if (rows_full < rows) {
    const uint8_t* s = src + static_cast<int64_t>(rows_full) * src_row_stride;
    uint8_t* t = dst + rows_full * kElem;
    const size_t c = TransposeShortRows<kElem>(d, s, src_row_stride, t, dst_row_stride,
                                               rows - rows_full, cols);
    if (c < cols) {
      TransposeEdge<kElem>(d, s + c * kElem, src_row_stride,
                           t + static_cast<int64_t>(c) * dst_row_stride, dst_row_stride,
                           rows - rows_full, cols - c);
    }
  }
}

// A plane whose destination rows follow each other (dst_row_stride == rows * kElem, a whole
// number of lines) but start part-way into a line: each destination row's last `tail` rows and
// the next row's first `lead` rows (lead + tail = kRows) share one line. One tile per band of
// columns takes exactly those rows (per-row offsets, as the fused walk's tiles do: source rows
// rows - tail .. rows - 1 of column c, then rows 0 .. lead - 1 of column c + 1) and streams
// those lines whole; only the plane's first lead and last tail are partial lines. The caller
// walks the rows between. Peeled instead, 64-row planes (f32 32x64x64x128 `0,2,3,1`, 16 bytes
// in) spent a quarter of their rows in partial tiles: 0.57-0.69x the aligned speed.
template <size_t kElem, class D>
HWY_INLINE void SeamTiles(D d, const uint8_t* HWY_RESTRICT src, int64_t src_row_stride,
                          uint8_t* HWY_RESTRICT dst, int64_t dst_row_stride, size_t rows,
                          size_t cols, size_t lead) {
  using Shape = TileShape<kElem, D>;
  const size_t tail = Shape::kRows - lead;
  EdgeTile<kElem>(d, src, src_row_stride, dst, dst_row_stride, lead, 1);
  EdgeTile<kElem>(d, src + static_cast<int64_t>(rows - tail) * src_row_stride + (cols - 1) * kElem,
                  src_row_stride,
                  dst + static_cast<int64_t>(cols - 1) * dst_row_stride + (rows - tail) * kElem,
                  dst_row_stride, tail, 1);
  int64_t row_off[Shape::kRows];
  int64_t col_off[Shape::kCols];
  for (size_t k = 0; k < Shape::kRows; ++k) {
    row_off[k] = k < tail ? static_cast<int64_t>(rows - tail + k) * src_row_stride
                          : static_cast<int64_t>(k - tail) * src_row_stride + kElem;
  }
  for (size_t j = 0; j < Shape::kCols; ++j) col_off[j] = static_cast<int64_t>(j) * dst_row_stride;
  uint8_t* t = dst + (rows - tail) * kElem;
  for (size_t c = 0; c + 1 < cols; c += Shape::kCols) {
    const size_t m = std::min<size_t>(Shape::kCols, cols - 1 - c);
    const uint8_t* s = src + c * kElem;
    uint8_t* line = t + static_cast<int64_t>(c) * dst_row_stride;
    if (m == Shape::kCols) {
      TransposeTileLines<kElem, true, true>(d, s, 0, line, 0, row_off, col_off);
    } else {
      TransposeTileLines<kElem, false, true, true>(d, s, 0, line, 0, row_off, col_off, Shape::kRows,
                                                   m);
    }
  }
}

// Declared ahead: DenseStagedPlane walks its stage with it.
template <size_t kElem, class D>
HWY_NOINLINE void TilesPlane(D d, const uint8_t* HWY_RESTRICT src, int64_t src_row_stride,
                             uint8_t* HWY_RESTRICT dst, int64_t dst_row_stride, size_t rows,
                             size_t cols, size_t strip_rows, bool streaming, bool src_rows_alias,
                             size_t band_group, bool prefetch_ahead, bool realign_rows);

// A plane whose destination rows follow each other but are not whole lines long, with
// cache-bypassing stores (StagesDenseRows in nest.h): its destination is one block whose
// lines straddle its rows, which the band walk stored ordinarily. Blocks of whole columns are
// walked into a stage laid out as the destination, a line's worth of bands past the block, and
// each block streams the lines that start within its bytes (StreamOwnedLines); only the
// plane's first and last partial lines take ordinary stores. An Intel Xeon, 1 / 2 threads,
// ratio to memcpy, band walk -> staged: f64 58 x 173250 `1,0` 0.70 / 0.75 -> 1.19 / 1.13, f32
// 24 x 1000000 0.47 / 0.53 -> 1.25 / 1.23, i8 100 x 1000000 0.50 / 0.52 -> 0.77 / 0.81, f32
// 100 x 200000 0.61 / 0.63 -> 0.65 / 0.96, bf16 300 x 100000 0.68 / 0.60 -> 0.72 / 0.73.
// The stage is walked a row of tiles at a time across the block's bands, so each row of tiles
// reads the block's run of each of its source rows at once: walked in the band walk's tall
// strips, band by band, every source row was read a line at a time, hundreds of rows at once
// (the sixteenth look's finding, docs/performance.md), and f32 100 x 200000 ran at 0.58, bf16
// 300 x 100000 at 0.72 (now 1.0-1.2 and 0.9-1.1, 1 thread, same machine).
template <size_t kElem, class D>
HWY_NOINLINE void DenseStagedPlane(D d, const uint8_t* HWY_RESTRICT src, int64_t src_row_stride,
                                   uint8_t* HWY_RESTRICT dst, size_t rows, size_t cols,
                                   bool src_rows_alias) {
  using Shape = TileShape<kElem, D>;
  const size_t row_bytes = rows * kElem;
  const auto halo = static_cast<size_t>(
      DenseStageHaloCols(static_cast<int64_t>(row_bytes), static_cast<int64_t>(Shape::kCols)));
  const auto block = static_cast<size_t>(
      DenseStageBlockCols(static_cast<int64_t>(row_bytes), static_cast<int64_t>(Shape::kCols)));
  alignas(64) uint8_t stage[kMaxDenseStageBytes];
  for (size_t c0 = 0, m = 0; c0 < cols; c0 += m) {
    // Fewer columns left past this block than the halo would leave its last line to a next
    // block that writes no line it does not start: they join this one (block + halo fit), and
    // the walk ends with it.
    m = cols - c0 < block + halo ? cols - c0 : block;
    const size_t covered = std::min(m + halo, cols - c0);
    TilesPlane<kElem>(d, src + c0 * kElem, src_row_stride, stage, static_cast<int64_t>(row_bytes),
                      rows, covered, Shape::kRows, false, src_rows_alias, 1, false, false);
    StreamOwnedLines(stage, dst + c0 * row_bytes, m * row_bytes, covered * row_bytes, c0 == 0);
  }
}

// Strategy::kTiles on one plane: strips of `strip_rows` rows, each walked by TileBands (or,
// with cache-bypassing stores and band_group > 1, by TileBandGroups); `prefetch_ahead`:
// ordinary-store walks fetch ahead (Nest::prefetch_ahead).
// Cache-bypassing stores need every destination line whole and aligned: the tiles write
// whole lines (kRows * kElem = 64 bytes per row) at dst + c * stride + r * kElem, aligned
// when dst and the stride are (or once dst's first rows are peeled off, below); destination
// rows that follow each other go through DenseStagedPlane; otherwise the plane uses ordinary
// stores.
template <size_t kElem, class D>
HWY_NOINLINE void TilesPlane(D d, const uint8_t* HWY_RESTRICT src, int64_t src_row_stride,
                             uint8_t* HWY_RESTRICT dst, int64_t dst_row_stride, size_t rows,
                             size_t cols, size_t strip_rows, bool streaming, bool src_rows_alias,
                             size_t band_group, bool prefetch_ahead, bool realign_rows) {
  using Shape = TileShape<kElem, D>;
  // A destination that starts part-way into a line (rows a whole number of lines apart, all
  // starting at the same offset in theirs) gets the source rows up to its first line boundary
  // as an edge, and the rest of the plane from there, where every tile's lines are aligned.
  // Such destinations are common: a safetensors file's tensors start 8-byte aligned, and
  // `iotx apply` permutes each into a buffer at its file offset's phase to write it from
  // there directly. Left to ordinary stores in place, bf16 4096^2 `1,0` in 16 MiB ranges on
  // two threads ran at 0.41x of the same ranges into an aligned buffer, 0.75x peeled.
  const bool lines_apart = BandWalkStreams(dst_row_stride);
  // Rows not whole lines apart realign their runs (TileBandsRealigned) where the planner said
  // so (Nest::realign_rows) and this destination starts a whole number of lanes into a line,
  // except rows that follow each other few enough for the dense stage (DenseStageBeatsBands).
  bool realign = false;
  (void)realign_rows;  // read on AVX-512 targets only
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  if constexpr (Shape::kVecBytes == kLineBytes && kElem >= 8) {
    realign =
        realign_rows && reinterpret_cast<uintptr_t>(dst) % 8 == 0 &&
        !DenseStageBeatsBands(dst_row_stride, static_cast<int64_t>(rows), kElem,
                              static_cast<int64_t>(Shape::kCols), static_cast<int64_t>(strip_rows));
  }
#endif
  if (streaming && !realign &&
      StagesDenseRows(dst_row_stride, static_cast<int64_t>(rows), kElem,
                      static_cast<int64_t>(Shape::kCols))) {
    DenseStagedPlane<kElem>(d, src, src_row_stride, dst, rows, cols, src_rows_alias);
    return;
  }
  const size_t lead = ElementsToLine<kElem>(dst);
  if (streaming && lines_apart && lead != 0 && lead < rows) {
    bool seamed = false;
    if constexpr (kEdgeInRegisters<kElem>) {
      // Destination rows that follow each other: the lines across them as whole tiles.
      seamed = dst_row_stride == static_cast<int64_t>(rows * kElem) && cols >= 2;
    }
    if (seamed) {
      SeamTiles<kElem>(d, src, src_row_stride, dst, dst_row_stride, rows, cols, lead);
    } else {
      PlaneEdges<kElem>(d, src, src_row_stride, dst, dst_row_stride, lead, cols, 0, cols);
    }
    src += static_cast<int64_t>(lead) * src_row_stride;
    dst += lead * kElem;
    rows -= seamed ? Shape::kRows : lead;  // seamed: the tails are done too
  }
  const bool stream =
      streaming && lines_apart && reinterpret_cast<uintptr_t>(dst) % kLineBytes == 0;
  const size_t rows_full = rows / Shape::kRows * Shape::kRows;
  const size_t cols_full = cols / Shape::kCols * Shape::kCols;
  // Ordinary stores over aliasing rows walk in place only where the planner did not stage
  // them (planes too narrow for a block, StagesTiles); there the alias decides the tile alone,
  // which it does for the gathered widths only, so the others keep one walk.
  constexpr bool kAliasTile = kTileGathered<kElem, D, false>;
  for (size_t r = 0; r < rows_full; r += strip_rows) {
    const uint8_t* s = src + static_cast<int64_t>(r) * src_row_stride;
    uint8_t* t = dst + r * kElem;
    const size_t n = std::min(strip_rows, rows_full - r);
    if (realign) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
      if constexpr (Shape::kVecBytes == kLineBytes && kElem >= 8) {
        if (src_rows_alias) {
          TileBandsRealigned<kElem, true>(d, s, src_row_stride, t, dst_row_stride, n, cols_full);
        } else {
          TileBandsRealigned<kElem, false>(d, s, src_row_stride, t, dst_row_stride, n, cols_full);
        }
      }
#endif
    } else if (stream && band_group > 1) {
      if (src_rows_alias) {
        TileBandGroups<kElem, true>(d, s, src_row_stride, t, dst_row_stride, n, cols_full,
                                    band_group);
      } else {
        TileBandGroups<kElem, false>(d, s, src_row_stride, t, dst_row_stride, n, cols_full,
                                     band_group);
      }
    } else if (stream) {
      if (src_rows_alias) {
        TileBands<kElem, true, true>(d, s, src_row_stride, t, dst_row_stride, n, cols_full);
      } else {
        TileBands<kElem, true, false>(d, s, src_row_stride, t, dst_row_stride, n, cols_full);
      }
    } else if (kAliasTile && src_rows_alias) {
      if (prefetch_ahead) {
        TileBands<kElem, false, kAliasTile, D, true>(d, s, src_row_stride, t, dst_row_stride, n,
                                                     cols_full);
      } else {
        TileBands<kElem, false, kAliasTile>(d, s, src_row_stride, t, dst_row_stride, n, cols_full);
      }
    } else if (prefetch_ahead) {
      TileBands<kElem, false, false, D, true>(d, s, src_row_stride, t, dst_row_stride, n,
                                              cols_full);
    } else {
      TileBands<kElem, false, false>(d, s, src_row_stride, t, dst_row_stride, n, cols_full);
    }
  }
  if (rows_full < rows || cols_full < cols) {
    PlaneEdges<kElem>(d, src, src_row_stride, dst, dst_row_stride, rows, cols, rows_full,
                      cols_full);
  }
}

// Strategy::kStagedTiles on one plane, for strides that alias in L1 (a power of two apart:
// every destination line of a tile falls in one set): blocks of block_rows x block_cols are
// transposed tile by tile into an L1 buffer whose rows are `pitch` bytes apart (a stride
// that spreads over the sets), then each destination row's run of block_rows * kElem bytes
// is written in one go, so the lines in flight are consecutive and never share a set.
// 1024^2 f32 in cache: 0.33-0.37x memcpy written in place, 0.51-0.64x staged. Only plans
// with ordinary stores stage (StagesTiles in planner_strategy.cc): cache-bypassing ones run in
// place. `prefetch_ahead` (Nest::prefetch_ahead): each run fetches the next run's lines for writing
// before it is copied (one run ahead measured best: i8 2048^2 0.41 -> 0.61 of memcpy on an Intel
// Xeon, two runs 0.58, four 0.55).
template <size_t kElem, class D>
HWY_NOINLINE void StagedPlane(D d, const uint8_t* HWY_RESTRICT src, int64_t src_row_stride,
                              uint8_t* HWY_RESTRICT dst, int64_t dst_row_stride, size_t rows,
                              size_t cols, size_t block_rows, size_t block_cols, size_t pitch,
                              bool src_rows_alias, bool prefetch_ahead, bool streaming) {
  using Shape = TileShape<kElem, D>;
  alignas(64) uint8_t stage[kMaxStageBytes];
  const size_t rows_full = rows / Shape::kRows * Shape::kRows;
  const size_t cols_full = cols / Shape::kCols * Shape::kCols;
  // The columns are cut into blocks of nearly equal width, none wider than block_cols: a
  // narrow last block would be staged for few columns (8192^2 f32 in items of 512 columns:
  // 224 + 224 + 64), and written in place its tiles' lines alias like any other's.
  const size_t blocks = (cols_full + block_cols - 1) / block_cols;
  const size_t even_cols =
      blocks == 0 ? block_cols
                  : (cols_full / blocks + Shape::kCols - 1) / Shape::kCols * Shape::kCols;
  // Cache-bypassing stores (StagesStreamingRuns in planner_strategy.cc): where a run's first or
  // last line is shared with the block above or below, each block writes the lines that start
  // within its rows, its stage covering one row of tiles more (StreamOwnedLines).
  const bool halo =
      streaming &&
      (!BandWalkStreams(dst_row_stride) || reinterpret_cast<uintptr_t>(dst) % kLineBytes != 0) &&
      (block_rows + Shape::kRows) * kElem <= pitch;
  for (size_t r0 = 0; r0 < rows_full; r0 += block_rows) {
    const size_t n = std::min(block_rows, rows_full - r0);
    const size_t covered = halo && r0 + n < rows_full ? n + Shape::kRows : n;
    const uint8_t* s = src + static_cast<int64_t>(r0) * src_row_stride;
    uint8_t* t = dst + r0 * kElem;
    for (size_t c0 = 0; c0 < cols_full; c0 += even_cols) {
      const size_t m = std::min(even_cols, cols_full - c0);
      // The tiles into the stage read the source's own rows: where those alias, the 4-byte
      // tile loads whole rows (TransposeTile's kSrcAlias; the 1-byte one does in every staged
      // walk).
      const auto tiles = [&](auto src_alias) {
        for (size_t r = 0; r < covered; r += Shape::kRows) {
          for (size_t c = 0; c < m; c += Shape::kCols) {
            TransposeTile<kElem, false, decltype(src_alias)::value>(
                d, s + static_cast<int64_t>(r) * src_row_stride + (c0 + c) * kElem, src_row_stride,
                stage + c * pitch + r * kElem, static_cast<int64_t>(pitch));
          }
        }
      };
      if (kTileGathered<kElem, D, false> && src_rows_alias) {
        tiles(std::true_type());
      } else {
        tiles(std::false_type());
      }
      for (size_t j = 0; j < m; ++j) {
        if (prefetch_ahead && j + 1 < m) {
          uint8_t* next = t + static_cast<int64_t>(c0 + j + 1) * dst_row_stride;
          for (size_t b = 0; b < n * kElem; b += static_cast<size_t>(kLineBytes)) {
            __builtin_prefetch(next + b, /*rw=*/1, /*locality=*/3);
          }
        }
        if (streaming) {
          StreamOwnedLines(stage + j * pitch, t + static_cast<int64_t>(c0 + j) * dst_row_stride,
                           n * kElem, covered * kElem, r0 == 0 || !halo);
        } else {
          CopyRun(stage + j * pitch, t + static_cast<int64_t>(c0 + j) * dst_row_stride, n * kElem);
        }
      }
    }
  }
  if (rows_full < rows || cols_full < cols) {
    PlaneEdges<kElem>(d, src, src_row_stride, dst, dst_row_stride, rows, cols, rows_full,
                      cols_full);
  }
}
#endif  // HWY_TARGET == HWY_SCALAR

}  // namespace HWY_NAMESPACE
}  // namespace iotx::kernels
HWY_AFTER_NAMESPACE();

#endif  // IOTX_KERNELS_TILES_INL_H_
