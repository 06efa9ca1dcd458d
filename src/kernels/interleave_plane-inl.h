// The walks of one plane that Strategy::kInterleaveRows and kDeinterleaveCols run (nest.h):
// 2-4 rows (or more, of at most 32 bytes) interleaved into a contiguous destination, or 2-4
// columns of a contiguous source split into rows.
#if defined(IOTX_KERNELS_INTERLEAVE_PLANE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef IOTX_KERNELS_INTERLEAVE_PLANE_INL_H_
#undef IOTX_KERNELS_INTERLEAVE_PLANE_INL_H_
#else
#define IOTX_KERNELS_INTERLEAVE_PLANE_INL_H_
#endif

#include <algorithm>
#include <cstdint>

#include "hwy/highway.h"
#include "kernels/copy-inl.h"
#include "kernels/tiles-inl.h"  // PlaneEdges

HWY_BEFORE_NAMESPACE();
namespace iotx::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET == HWY_SCALAR
template <size_t kElem, class D>
HWY_NOINLINE void InterleavePlane(D, const uint8_t* src, int64_t ss, uint8_t* dst, int64_t ds,
                                  size_t rows, size_t cols, bool) {
  ScalarPlane<kElem>(src, ss, dst, ds, rows, cols);
}
template <size_t kElem, class D>
HWY_NOINLINE void DeinterleavePlane(D, const uint8_t* src, int64_t ss, uint8_t* dst, int64_t ds,
                                    size_t rows, size_t cols, bool) {
  ScalarPlane<kElem>(src, ss, dst, ds, rows, cols);
}
template <size_t kElem, class D>
HWY_INLINE void DeinterleaveJoinedRows(D, const uint8_t* src, uint8_t* dst, int64_t ds, size_t rows,
                                       size_t blocks, size_t cols, int64_t dst_block_stride, bool) {
  for (size_t b = 0; b < blocks; ++b) {
    ScalarPlane<kElem>(src + b * rows * cols * kElem, static_cast<int64_t>(cols * kElem),
                       dst + static_cast<int64_t>(b) * dst_block_stride, ds, rows, cols);
  }
}
template <size_t kElem, class D>
HWY_INLINE void InterleaveJoinedColumns(D, const uint8_t* src, int64_t ss, int64_t src_block_stride,
                                        uint8_t* dst, size_t rows, size_t blocks, size_t cols,
                                        size_t cols_inner, int64_t dst_outer_col_stride, bool) {
  for (size_t b = 0; b < blocks; ++b) {
    for (size_t c = 0; c < cols; c += cols_inner) {
      ScalarPlane<kElem>(src + static_cast<int64_t>(b) * src_block_stride + c * kElem, ss,
                         dst + static_cast<int64_t>(c / cols_inner) * dst_outer_col_stride +
                             b * cols_inner * rows * kElem,
                         static_cast<int64_t>(rows * kElem), rows, std::min(cols_inner, cols - c));
    }
  }
}
#else
// Interleaving and de-interleaving a few rows (NCHW <-> NHWC with 2-4 channels): the tile
// would be mostly edge there, so these use Highway's (Load|Store)Interleaved{2,3,4}, which move
// whole vectors. (Generic path, 32x3x224x224 f32 -> NHWC: 4.9 GB/s; u8: 1.6 GB/s.) More rows,
// up to 32 bytes of them, take the tile's own interleave rounds (InterleaveRowsByRounds,
// InterleaveRowsPadded), which the band walk's 64-byte tile would run mostly on padding.

// The destination-innermost row counts past Highway's four interleaved streams that the
// rounds below serve exactly (InterleaveForm::kRounds): 8, 16 or 32 rows whose columns are 8,
// 16 or 32 bytes (channels-last with 8-32 channels: i8 8, 16, 32, bf16 8, 16, f32 8). The
// band walk's tile holds 64 bytes of rows, so such planes were two to eight parts padding (i8
// 32x8x224x224 `0,2,3,1`).
template <size_t kElem>
constexpr bool InterleavesByRounds(size_t rows) {
  return (rows == 8 || rows == 16 || rows == 32) && rows * kElem >= 8 && rows * kElem <= 32;
}

// kRp rows from `src` (src_row_stride apart; zeros past the first `rows`) as kG groups of kRg
// rows, each group transposed inside every 128-bit block by log2(kRg) interleave rounds.
template <size_t kRp, size_t kG, class D>
HWY_INLINE void LoadRowsInterleaved(D d, const uint8_t* HWY_RESTRICT src, int64_t src_row_stride,
                                    size_t rows, hn::VFromD<D> (&v)[kG][kRp / kG]) {
  using T = hn::TFromD<D>;
  constexpr size_t kRg = kRp / kG;
  HWY_UNROLL(32)
  for (size_t r = 0; r < kRp; ++r) {
    v[r / kRg][r % kRg] =
        r < rows
            ? hn::LoadU(d,
                        reinterpret_cast<const T*>(src + static_cast<int64_t>(r) * src_row_stride))
            : hn::Zero(d);
  }
  HWY_UNROLL(2)
  for (size_t g = 0; g < kG; ++g) InterleaveRounds(d, v[g]);
}

// kR rows (InterleavesByRounds) x one vector of columns into a contiguous destination (column
// c's rows at out + (c * kR + r) * kElem), as the tile does it (tile-inl.h): groups of up to
// 16 bytes of rows transposed inside each 128-bit block by log2 of their rows interleave rounds,
// after which block k of vector j of group g holds the 16 destination bytes at ((k * kRg + j)
// * kG + g) * 16 (WidthTest.ManyRowsInterleavedByRounds checks the outputs against the
// reference for every width and target); then block transposes across the vectors make whole
// vectors of the destination.
template <size_t kElem, size_t kR, class D>
HWY_INLINE void InterleaveRowsByRounds(D d, const uint8_t* HWY_RESTRICT src, int64_t src_row_stride,
                                       uint8_t* HWY_RESTRICT out) {
  using T = hn::TFromD<D>;
  constexpr size_t kG = kR * kElem > 16 ? kR * kElem / 16 : 1;  // groups of rows
  constexpr size_t kRg = kR / kG;                               // rows per group
  constexpr size_t K = hn::MaxLanes(D()) * sizeof(T) / 16;      // blocks per vector
  hn::VFromD<D> v[kG][kRg];
  LoadRowsInterleaved<kR, kG>(d, src, src_row_stride, kR, v);
  if constexpr (K >= kG) {
    // Vector i of a chunk: group i % kG of column j + i / kG, so that the chunk's block k is
    // K consecutive 16-byte pieces of the destination.
    HWY_UNROLL(16)
    for (size_t j = 0; j < kRg; j += K / kG) {
      hn::VFromD<D> w[K];
      HWY_UNROLL(4)
      for (size_t i = 0; i < K; ++i) w[i] = v[i % kG][j + i / kG];
      TransposeBlocks<K>(d, w);
      HWY_UNROLL(4)
      for (size_t k = 0; k < K; ++k) {
        hn::StoreU(w[k], d, reinterpret_cast<T*>(out + ((k * kRg + j) * kG) * 16));
      }
    }
  } else {  // one block per vector, two groups: each vector is a piece
    HWY_UNROLL(16)
    for (size_t j = 0; j < kRg; ++j) {
      HWY_UNROLL(2)
      for (size_t g = 0; g < kG; ++g) {
        hn::StoreU(v[g][j], d, reinterpret_cast<T*>(out + (j * kG + g) * 16));
      }
    }
  }
}

// The other destination-innermost row counts the rounds serve with padding: more than 4 rows
// of fewer than 32 bytes (i8 5-31 rows, bf16 5-15, f32 5-7) that are not InterleavesByRounds.
template <size_t kElem>
constexpr bool InterleavesPadded(size_t rows) {
  return rows > 4 && rows * kElem < 32 && !InterleavesByRounds<kElem>(rows);
}

// The two above are InterleaveFormOf (nest.h, which the planner and Describe read) written out
// on size_t, so that the compiler sees each padded piece's bound (under 32 bytes) in the
// stores of InterleaveRowsPadded (through the enum it warned of copies past `exact`); this
// keeps them the same rule.
template <size_t kElem>
constexpr bool MatchesInterleaveFormOf() {
  for (size_t rows = 0; rows <= 64; ++rows) {
    const InterleaveForm form = InterleaveFormOf(static_cast<int64_t>(rows), kElem);
    if (InterleavesByRounds<kElem>(rows) != (form == InterleaveForm::kRounds) ||
        InterleavesPadded<kElem>(rows) != (form == InterleaveForm::kPadded)) {
      return false;
    }
  }
  return true;
}
static_assert(MatchesInterleaveFormOf<1>() && MatchesInterleaveFormOf<2>() &&
              MatchesInterleaveFormOf<4>() && MatchesInterleaveFormOf<8>());

// Column j of block kBlock of group vectors v[g][j] (each column's kG pieces of 16 bytes) for
// the columns of that block, stored in column order at out + column * piece: each piece's
// bytes past `piece` spill where the next columns go, which their own stores then overwrite.
// Columns from `whole` on, whose 16 * kG bytes would pass the vector's output, go exactly,
// through a small buffer.
template <size_t kBlock, size_t kG, size_t kRg, class D>
HWY_INLINE void StorePaddedBlock(D d, const hn::VFromD<D> (&v)[kG][kRg], uint8_t* HWY_RESTRICT out,
                                 size_t piece, size_t whole) {
  HWY_UNROLL(16)
  for (size_t j = 0; j < kRg; ++j) {
    const size_t c = kBlock * kRg + j;
    uint8_t* t = out + c * piece;
    if (c < whole) {
      HWY_UNROLL(2)
      for (size_t g = 0; g < kG; ++g) StoreBlock<kBlock>(d, v[g][j], t + 16 * g);
    } else {
      alignas(16) uint8_t exact[16 * kG];
      HWY_UNROLL(2)
      for (size_t g = 0; g < kG; ++g) StoreBlock<kBlock>(d, v[g][j], exact + 16 * g);
      // piece < sizeof(exact) always (InterleavesPadded); the bound tells GCC 12 so, which
      // otherwise, depending on what it inlines, reports CopyBytes' 64-byte path on `exact`
      // as an out-of-bounds read (-Warray-bounds, an error in CI).
      CopyBytes(exact, t, std::min(piece, sizeof(exact)));
    }
  }
}

// `rows` rows (InterleavesPadded) x one vector of columns into a contiguous destination, as
// InterleaveRowsByRounds with the rows padded to kRp (16 or 32 bytes of them) by zeros: after
// the rounds, block k of vector j of group g is piece g of column k * kRg + j, which goes to
// out + column * rows * kElem + 16 * g. The tile held 64 bytes of rows, so an i8 plane of 11
// rows was five parts in six padding there.
template <size_t kElem, size_t kRp, class D>
HWY_INLINE void InterleaveRowsPadded(D d, const uint8_t* HWY_RESTRICT src, int64_t src_row_stride,
                                     uint8_t* HWY_RESTRICT out, size_t rows) {
  using T = hn::TFromD<D>;
  constexpr size_t kG = kRp * kElem / 16;  // groups of rows (1 or 2)
  constexpr size_t kRg = kRp / kG;         // rows per group
  constexpr size_t K = hn::MaxLanes(D()) * sizeof(T) / 16;
  hn::VFromD<D> v[kG][kRg];
  LoadRowsInterleaved<kRp, kG>(d, src, src_row_stride, rows, v);
  const size_t piece = rows * kElem;
  const size_t whole = (K * kRg * piece - 16 * kG) / piece + 1;  // stores within the output
  StorePaddedBlock<0>(d, v, out, piece, whole);
  if constexpr (K >= 2) StorePaddedBlock<1>(d, v, out, piece, whole);
  if constexpr (K >= 4) {
    StorePaddedBlock<2>(d, v, out, piece, whole);
    StorePaddedBlock<3>(d, v, out, piece, whole);
  }
}

// One vector of columns of `rows` rows (2-4, InterleavesByRounds or InterleavesPadded) into
// `out`.
template <size_t kElem, class D>
HWY_INLINE void InterleaveVector(D d, const uint8_t* HWY_RESTRICT src, int64_t src_row_stride,
                                 uint8_t* HWY_RESTRICT out, size_t rows) {
  using T = hn::TFromD<D>;
  const auto row = [&](size_t r) {
    return reinterpret_cast<const T*>(src + static_cast<int64_t>(r) * src_row_stride);
  };
  T* p = reinterpret_cast<T*>(out);
  switch (rows) {
    case 2:
      hn::StoreInterleaved2(hn::LoadU(d, row(0)), hn::LoadU(d, row(1)), d, p);
      return;
    case 3:
      hn::StoreInterleaved3(hn::LoadU(d, row(0)), hn::LoadU(d, row(1)), hn::LoadU(d, row(2)), d, p);
      return;
    case 4:
      hn::StoreInterleaved4(hn::LoadU(d, row(0)), hn::LoadU(d, row(1)), hn::LoadU(d, row(2)),
                            hn::LoadU(d, row(3)), d, p);
      return;
    case 8:
      if constexpr (InterleavesByRounds<kElem>(8)) {
        InterleaveRowsByRounds<kElem, 8>(d, src, src_row_stride, out);
      }
      return;
    case 16:
      if constexpr (InterleavesByRounds<kElem>(16)) {
        InterleaveRowsByRounds<kElem, 16>(d, src, src_row_stride, out);
      }
      return;
    case 32:
      if constexpr (InterleavesByRounds<kElem>(32)) {
        InterleaveRowsByRounds<kElem, 32>(d, src, src_row_stride, out);
      }
      return;
    default:
      if constexpr (kElem <= 2) {
        if (rows * kElem < 16) {
          return InterleaveRowsPadded<kElem, 16 / kElem>(d, src, src_row_stride, out, rows);
        }
      }
      if constexpr (kElem <= 4) {
        if (InterleavesPadded<kElem>(rows)) {
          return InterleaveRowsPadded<kElem, 32 / kElem>(d, src, src_row_stride, out, rows);
        }
      }
      return;
  }
}

// Rows 0..rows-1 (2-4 of them, or InterleavesByRounds) x columns [0, cols) into a contiguous
// destination (column c's rows at dst + (c * rows + r) * kElem). Returns the columns done
// (whole vectors). Not inlined: one call per plane or per joined chunk of at least 256 bytes a
// row, while InterleaveVector's forms inlined at its four call sites were a third of what was
// left of the 1-byte unit's compile time (54 s -> 34 s, all targets); n1 and the joined bf16
// walks ran 15 % faster, i8 rounds within 4 %.
template <size_t kElem, class D>
HWY_NOINLINE size_t InterleaveRows(D d, const uint8_t* HWY_RESTRICT src, int64_t src_row_stride,
                                   uint8_t* HWY_RESTRICT dst, size_t rows, size_t cols,
                                   bool stream) {
  const size_t lanes = hn::Lanes(d);
  constexpr size_t kBufBytes = 4096;
  alignas(64) uint8_t buf[kBufBytes];
  const size_t chunk = std::max(lanes, kBufBytes / (rows * kElem) / lanes * lanes);
  size_t c = 0;
  while (c + lanes <= cols) {
    const size_t n = std::min(chunk, (cols - c) / lanes * lanes);
    uint8_t* out = stream ? buf : dst + c * rows * kElem;
    for (size_t k = c; k < c + n; k += lanes) {
      InterleaveVector<kElem>(d, src + k * kElem, src_row_stride, out + (k - c) * rows * kElem,
                              rows);
    }
    if (stream) StreamBytes(buf, dst + c * rows * kElem, n * rows * kElem);
    c += n;
  }
  return c;
}

// Rows [0, rows) of a contiguous source with `cols` (2-4) columns (row r's columns at
// src + (r * cols + c) * kElem) into destination rows c. Returns the rows done.
template <size_t kElem, class D>
HWY_INLINE size_t DeinterleaveCols(D d, const uint8_t* HWY_RESTRICT src, uint8_t* HWY_RESTRICT dst,
                                   int64_t dst_row_stride, size_t rows, size_t cols, bool stream) {
  using T = hn::TFromD<D>;
  const size_t lanes = hn::Lanes(d);
  hn::VFromD<D> v[4];
  size_t r = 0;
  for (; r + lanes <= rows; r += lanes) {
    const T* p = reinterpret_cast<const T*>(src + r * cols * kElem);
    if (cols == 2) {
      hn::LoadInterleaved2(d, p, v[0], v[1]);
    } else if (cols == 3) {
      hn::LoadInterleaved3(d, p, v[0], v[1], v[2]);
    } else {
      hn::LoadInterleaved4(d, p, v[0], v[1], v[2], v[3]);
    }
    for (size_t c = 0; c < cols; ++c) {
      T* t = reinterpret_cast<T*>(dst + static_cast<int64_t>(c) * dst_row_stride + r * kElem);
      if (stream) {
        hn::Stream(v[c], d, t);
      } else {
        hn::StoreU(v[c], d, t);
      }
    }
  }
  return r;
}

// Strategy::kInterleaveRows on one plane: `rows` (2-4) rows whose columns are consecutive in
// the destination; planes narrower than a vector through the staged edge path.
template <size_t kElem, class D>
HWY_NOINLINE void InterleavePlane(D d, const uint8_t* HWY_RESTRICT src, int64_t src_row_stride,
                                  uint8_t* HWY_RESTRICT dst, int64_t dst_row_stride, size_t rows,
                                  size_t cols, bool streaming) {
  // With cache-bypassing stores into a destination part-way into a line, the first columns up
  // to where a column starts on a line boundary (if one does within a vector) go as an edge,
  // so that every buffered chunk InterleaveRows streams out is whole lines: a chunk cut at the
  // line's phase left a partial line at each end, written with ordinary stores (f32
  // 32x3x224x224 `0,2,3,1` 16 bytes in: 0.82x the aligned destination's speed).
  size_t first = 0;
  const size_t misalign = reinterpret_cast<uintptr_t>(dst) % kLineBytes;
  if (streaming && misalign != 0) {
    const size_t column_bytes = rows * kElem;
    for (size_t k = 1; k < hn::Lanes(d) && k < cols; ++k) {
      if ((misalign + k * column_bytes) % kLineBytes == 0) {
        first = k;
        break;
      }
    }
    if (first > 0) {
      EdgeTile<kElem>(d, src, src_row_stride, dst, dst_row_stride, rows, first);
    }
  }
  size_t c = first + InterleaveRows<kElem>(d, src + first * kElem, src_row_stride,
                                           dst + static_cast<int64_t>(first) * dst_row_stride, rows,
                                           cols - first, streaming);
  // Columns short of a vector at the end: one more vector that ends on the last column, over
  // columns already written (the same bytes again, with ordinary stores), instead of the edge
  // path's staged tile (f32 3 x 21 x 465 x 15 `2,1,3,0`, planes of 15 columns on 8 lanes).
  const size_t lanes = hn::Lanes(d);
  if (c < cols && cols >= lanes) {
    const size_t at = cols - lanes;
    InterleaveRows<kElem>(d, src + at * kElem, src_row_stride,
                          dst + static_cast<int64_t>(at) * dst_row_stride, rows, lanes, false);
    c = cols;
  }
  for (; c < cols; c += TileShape<kElem, D>::kCols) {
    EdgeTile<kElem>(d, src + c * kElem, src_row_stride,
                    dst + static_cast<int64_t>(c) * dst_row_stride, dst_row_stride, rows,
                    std::min<size_t>(TileShape<kElem, D>::kCols, cols - c));
  }
}

// `blocks` rows of the joined walk's buffer (in_row_stride apart), each `groups` pieces of
// kGroup bytes, into `out` transposed: piece (b, g) to out + g * out_row_stride + b * kGroup.
// The band walk's tiles for elements of kGroup bytes do it in registers, a whole 64-byte line
// per group and tile; copied one piece at a time, a store per 8 bytes held bf16
// 2x56x26x72x2 `2,3,1,4,0` (groups of 2 x 2 elements) at 0.23 of memcpy.
template <size_t kGroup, class D>
HWY_INLINE void TransposeGroupPieces(D d, const uint8_t* HWY_RESTRICT in, int64_t in_row_stride,
                                     uint8_t* HWY_RESTRICT out, int64_t out_row_stride,
                                     size_t blocks, size_t groups) {
  const hn::Repartition<LaneT<kGroup>, D> dg;
  using Shape = TileShape<kGroup, decltype(dg)>;
  const size_t rows_full = blocks / Shape::kRows * Shape::kRows;
  const size_t cols_full = groups / Shape::kCols * Shape::kCols;
  TileBands<kGroup, false, false>(dg, in, in_row_stride, out, out_row_stride, rows_full, cols_full);
  PlaneEdges<kGroup>(dg, in, in_row_stride, out, out_row_stride, blocks, groups, rows_full,
                     cols_full);
}

// TransposeGroupPieces where pieces of `group_bytes` are a tile's width (4, 8 or 16 bytes);
// false where they are not (the caller moves them one by one).
template <class D>
HWY_INLINE bool TransposeGroupsAsTiles(D d, const uint8_t* HWY_RESTRICT in, int64_t in_row_stride,
                                       uint8_t* HWY_RESTRICT out, int64_t out_row_stride,
                                       size_t blocks, size_t groups, size_t group_bytes) {
  switch (group_bytes) {
    case 4:
      TransposeGroupPieces<4>(d, in, in_row_stride, out, out_row_stride, blocks, groups);
      return true;
    case 8:
      TransposeGroupPieces<8>(d, in, in_row_stride, out, out_row_stride, blocks, groups);
      return true;
    case 16:
      TransposeGroupPieces<16>(d, in, in_row_stride, out, out_row_stride, blocks, groups);
      return true;
    default:
      return false;
  }
}

// The joined walk's chunk out of its buffer: `blocks` rows (in_row_stride apart) of `groups`
// pieces of group_bytes, piece (b, g) to out + g * out_row_stride + b * group_bytes, each
// group's blocks one run; with cache-bypassing stores assembled in an L1 buffer first and
// streamed.
template <class D>
HWY_NOINLINE void GroupsOut(D d, const uint8_t* HWY_RESTRICT in, int64_t in_row_stride,
                            uint8_t* HWY_RESTRICT out, int64_t out_row_stride, size_t blocks,
                            size_t groups, size_t group_bytes, bool streaming) {
  constexpr size_t kRunBytes = 16384;  // a chunk's bytes at most (InterleaveJoinedColumns)
  alignas(64) uint8_t run[kRunBytes];
  const size_t run_bytes = blocks * group_bytes;
  if (!streaming && TransposeGroupsAsTiles(d, in, in_row_stride, out, out_row_stride, blocks,
                                           groups, group_bytes)) {
    return;
  }
  if (streaming &&
      TransposeGroupsAsTiles(d, in, in_row_stride, run, static_cast<int64_t>(run_bytes), blocks,
                             groups, group_bytes)) {
    for (size_t g = 0; g < groups; ++g, out += out_row_stride) {
      StreamBytes(run + g * run_bytes, out, run_bytes);
    }
    return;
  }
  for (size_t g = 0; g < groups; ++g, out += out_row_stride) {
    // A group's blocks, in_row_stride apart in the buffer, one after another in its run.
    if (streaming) {
      MoveColumnRun(in + g * group_bytes, in_row_stride, run, blocks, group_bytes, true);
      StreamBytes(run, out, run_bytes);
    } else if (!MovePiecesInTwoHalves(in + g * group_bytes, in_row_stride, out, blocks,
                                      group_bytes)) {
      MoveColumnRun(in + g * group_bytes, in_row_stride, out, blocks, group_bytes, false);
    }
  }
}

// Strategy::kInterleaveRows on a plane whose columns span two dims (Nest::cols_inner columns
// consecutive in the destination, then the next group of them dst_outer_col_stride bytes on),
// all consecutive in the source: the columns of a plane too narrow for a vector, joined by the
// dim that continues them in the source (i8 2048x4x256x4 `2,0,3,1`: planes of 4 rows x 4
// columns, 16 bytes, each the edge path's alone, ran at 0.02 of memcpy). `blocks` blocks of
// the `rows` rows (src_block_stride apart in the source) come from the dim that continues each
// group in the destination (Tile::rows2_dim; 1 where none does): block b of group g goes to
// dst + g * dst_outer_col_stride + b * (its group's bytes). Chunks of whole groups and at least
// a vector of columns are interleaved, block after block, into an L1 buffer (a last chunk
// short of a vector as the vector that ends on the last column); then each group's blocks
// leave as one run.
template <size_t kElem, class D>
HWY_NOINLINE void InterleaveJoinedColumns(D d, const uint8_t* HWY_RESTRICT src,
                                          int64_t src_row_stride, int64_t src_block_stride,
                                          uint8_t* HWY_RESTRICT dst, size_t rows, size_t blocks,
                                          size_t cols, size_t cols_inner,
                                          int64_t dst_outer_col_stride, bool streaming) {
  const size_t lanes = hn::Lanes(d);
  const size_t column_bytes = rows * kElem;
  const size_t group_bytes = cols_inner * column_bytes;
  if (cols < lanes) {  // not one vector: each group's columns through the edge path
    for (size_t b = 0; b < blocks; ++b) {
      for (size_t c = 0; c < cols; c += cols_inner) {
        EdgeTile<kElem>(
            d, src + static_cast<int64_t>(b) * src_block_stride + c * kElem, src_row_stride,
            dst + static_cast<int64_t>(c / cols_inner) * dst_outer_col_stride + b * group_bytes,
            static_cast<int64_t>(column_bytes), rows, std::min(cols_inner, cols - c));
      }
    }
    return;
  }
  constexpr size_t kBufBytes = 16384;
  alignas(64) uint8_t buf[kBufBytes];
  // Chunks of 256 B of each source row (a vector at least), rounded up to whole groups: chunks
  // of one vector read a line and a part of each row per block (f32 3x21x465x3 `2,1,3,0`, 72
  // bytes: 0.20 of memcpy; walked plane by plane along whole rows, 0.24).
  const size_t chunk = (std::max(lanes, 256 / kElem) + cols_inner - 1) / cols_inner * cols_inner;
  const size_t chunk_bytes = chunk * column_bytes;  // < 16 bytes of columns: a few KiB at most
  const size_t per_buf = std::max<size_t>(1, kBufBytes / chunk_bytes);
  for (size_t c0 = 0; c0 < cols; c0 += chunk) {
    const size_t n = std::min(chunk, cols - c0);       // whole groups
    const size_t at = n >= lanes ? c0 : cols - lanes;  // the columns interleaved from
    const size_t span = std::max(n, lanes);
    const uint8_t* first = buf + (c0 - at) * column_bytes;
    uint8_t* group0 = dst + static_cast<int64_t>(c0 / cols_inner) * dst_outer_col_stride;
    for (size_t b0 = 0; b0 < blocks; b0 += per_buf) {
      const size_t nb = std::min(per_buf, blocks - b0);
      for (size_t b = 0; b < nb; ++b) {
        const uint8_t* from = src + static_cast<int64_t>(b0 + b) * src_block_stride + at * kElem;
        uint8_t* to = buf + b * chunk_bytes;
        if (InterleaveRows<kElem>(d, from, src_row_stride, to, rows, span, false) < span) {
          InterleaveRows<kElem>(d, from + (span - lanes) * kElem, src_row_stride,
                                to + (span - lanes) * column_bytes, rows, lanes, false);
        }
      }
      GroupsOut(d, first, static_cast<int64_t>(chunk_bytes), group0 + b0 * group_bytes,
                dst_outer_col_stride, nb, n / cols_inner, group_bytes, streaming);
    }
  }
}

// Strategy::kDeinterleaveCols on a plane whose rows span two dims: `blocks` blocks of
// `rows` rows, one run of the source (each row `cols` elements), block b's rows of column c
// going to dst + b * dst_block_stride + c * dst_row_stride (Tile::rows2_dim: rows too few for
// a vector, joined by the dim that continues them in the source). Chunks of whole blocks and
// at least a vector of rows are de-interleaved into an L1 buffer, a column's rows after each
// other (a last chunk short of a vector as the vector that ends on the last row), then each
// block's rows of each column leave for their place.
template <size_t kElem, class D>
HWY_NOINLINE void DeinterleaveJoinedRows(D d, const uint8_t* HWY_RESTRICT src,
                                         uint8_t* HWY_RESTRICT dst, int64_t dst_row_stride,
                                         size_t rows, size_t blocks, size_t cols,
                                         int64_t dst_block_stride, bool streaming) {
  const size_t lanes = hn::Lanes(d);
  const size_t total = rows * blocks;
  const size_t block_bytes = rows * kElem;  // one block's rows of one column
  const size_t src_row_bytes = cols * kElem;
  if (total < lanes) {  // not one vector: each block through the edge path
    for (size_t b = 0; b < blocks; ++b) {
      PlaneEdges<kElem>(d, src + b * rows * src_row_bytes, static_cast<int64_t>(src_row_bytes),
                        dst + static_cast<int64_t>(b) * dst_block_stride, dst_row_stride, rows,
                        cols, 0, 0);
    }
    return;
  }
  constexpr size_t kBufBytes = 8192;
  alignas(64) uint8_t buf[kBufBytes];
  // With cache-bypassing stores, where the blocks' columns and the blocks follow each other in
  // the destination, a chunk's output is assembled here and streamed; elsewhere each block's
  // column (under 16 bytes) goes with an ordinary store.
  const bool dense = streaming && dst_row_stride == static_cast<int64_t>(block_bytes) &&
                     dst_block_stride == static_cast<int64_t>(cols * block_bytes);
  alignas(64) uint8_t run[kBufBytes];
  // Chunks of whole blocks, at least a vector and at most the buffer's rows.
  const size_t per_chunk = std::max((lanes + rows - 1) / rows, kBufBytes / (cols * block_bytes));
  for (size_t b0 = 0; b0 < blocks; b0 += per_chunk) {
    const size_t nb = std::min(per_chunk, blocks - b0);
    const size_t n = nb * rows;
    const size_t first = b0 * rows;
    const size_t at = n >= lanes ? first : total - lanes;  // the rows de-interleaved from
    const size_t span = std::max(n, lanes);
    // Column c's rows [at, at + span) at buf + c * span * kElem: DeinterleaveCols into rows
    // span elements apart, then the vector that ends on the last row where span is not whole
    // vectors.
    const auto column_pitch = static_cast<int64_t>(span * kElem);
    const auto to = [&](size_t c, size_t r) { return buf + (c * span + r) * kElem; };
    const uint8_t* from = src + at * src_row_bytes;
    if (DeinterleaveCols<kElem>(d, from, buf, column_pitch, span, cols, false) < span) {
      DeinterleaveCols<kElem>(d, from + (span - lanes) * src_row_bytes, to(0, span - lanes),
                              column_pitch, lanes, cols, false);
    }
    if (dense) {  // the chunk's destination is one run: assembled, then streamed
      for (size_t b = 0; b < nb; ++b) {
        for (size_t c = 0; c < cols; ++c) {
          CopyBytes(to(c, first - at + b * rows), run + (b * cols + c) * block_bytes, block_bytes);
        }
      }
      StreamBytes(run, dst + static_cast<int64_t>(b0) * dst_block_stride, nb * cols * block_bytes);
      continue;
    }
    for (size_t b = 0; b < nb; ++b) {
      uint8_t* out = dst + static_cast<int64_t>(b0 + b) * dst_block_stride;
      for (size_t c = 0; c < cols; ++c) {
        CopyBytes(to(c, first - at + b * rows), out + static_cast<int64_t>(c) * dst_row_stride,
                  block_bytes);
      }
    }
  }
}

// Strategy::kDeinterleaveCols on one plane: `cols` (2-4) columns of a contiguous source;
// planes of fewer rows than a vector through the tile path's edges.
template <size_t kElem, class D>
HWY_NOINLINE void DeinterleavePlane(D d, const uint8_t* HWY_RESTRICT src, int64_t src_row_stride,
                                    uint8_t* HWY_RESTRICT dst, int64_t dst_row_stride, size_t rows,
                                    size_t cols, bool streaming) {
  const bool lines =
      streaming && dst_row_stride % kLineBytes == 0 && hn::Lanes(d) * kElem == kLineBytes;
  // A destination part-way into a line: its rows up to the first line boundary as an edge,
  // the rest streamed (as TilesPlane peels; f32 4000000 x 3 `1,0` 16 bytes into a line took
  // 1.28x the aligned destination's time with ordinary stores).
  const size_t lead = ElementsToLine<kElem>(dst);
  if (lines && lead != 0 && lead < rows) {
    PlaneEdges<kElem>(d, src, src_row_stride, dst, dst_row_stride, lead, cols, 0, 0);
    src += static_cast<int64_t>(lead) * src_row_stride;
    dst += lead * kElem;
    rows -= lead;
  }
  const bool stream = lines && reinterpret_cast<uintptr_t>(dst) % kLineBytes == 0;
  size_t r = DeinterleaveCols<kElem>(d, src, dst, dst_row_stride, rows, cols, stream);
  // Rows short of a vector at the end: one more vector that ends on the last row, over rows
  // already written (the same bytes again, with ordinary stores), as InterleavePlane does.
  const size_t lanes = hn::Lanes(d);
  if (r < rows && rows >= lanes) {
    const size_t at = rows - lanes;
    DeinterleaveCols<kElem>(d, src + static_cast<int64_t>(at) * src_row_stride, dst + at * kElem,
                            dst_row_stride, lanes, cols, false);
    r = rows;
  }
  if (r < rows) {
    PlaneEdges<kElem>(d, src + static_cast<int64_t>(r) * src_row_stride, src_row_stride,
                      dst + r * kElem, dst_row_stride, rows - r, cols, 0, 0);
  }
}
#endif  // HWY_TARGET == HWY_SCALAR

}  // namespace HWY_NAMESPACE
}  // namespace iotx::kernels
HWY_AFTER_NAMESPACE();

#endif  // IOTX_KERNELS_INTERLEAVE_PLANE_INL_H_
