// One micro-tile in registers, per target, for the widths of widths.inc; the walks that run
// it are in tiles-inl.h, fused_plane-inl.h and interleave_plane-inl.h.
//
// A tile is 64 / elem source rows x one vector of columns; every destination row it touches
// (a column of the tile) receives one whole 64-byte line. Four ways build the lines:
//  - gathered (TransposeTileGathered: 4-byte elements on AVX-512): each vector is loaded as
//    four 16-byte blocks of four rows, so that two interleave rounds alone make whole lines;
//  - in halves (TransposeByteTileHalf: 1-byte elements on AVX-512's 64-byte vectors): 64 rows
//    x 32 columns at a time in 32 vectors, a row and the one 32 below sharing a vector;
//  - in registers (TransposeTileLines: the other widths on AVX-512, 8 and 16 bytes elsewhere):
//    groups of B = 16 / elem rows are transposed inside each 128-bit block by log2(B)
//    InterleaveLower/InterleaveUpper rounds (one shuffle per vector and round), then K x K
//    transposes of 128-bit blocks across the groups assemble whole lines; 1- and 2-byte
//    elements first interleave row pairs into 4-byte lanes (64 shuffles per KiB for 4-byte
//    lanes on AVX-512, 80 for 2-byte and 96 for 1-byte elements).
//  - through 16-byte pieces (TransposeGroup: the narrow widths on 16-register targets, and
//    partial tiles): after the rounds, block k of vector j is a 16-byte piece of destination
//    row k * B + j, stored on its own.
// 16-byte elements run on 8-byte lanes, two per element (zero rounds: pieces are elements).
#if defined(IOTX_KERNELS_TILE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef IOTX_KERNELS_TILE_INL_H_
#undef IOTX_KERNELS_TILE_INL_H_
#else
#define IOTX_KERNELS_TILE_INL_H_
#endif

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "hwy/highway.h"
#include "kernels/copy-inl.h"
#include "kernels/nest.h"

HWY_BEFORE_NAMESPACE();
namespace iotx::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Unsigned lane type for an element of kElem bytes (16-byte elements use 8-byte lanes).
template <size_t kElem>
using LaneT = hwy::UnsignedFromSize<(kElem > 8 ? 8 : kElem)>;

#if HWY_TARGET == HWY_SCALAR
// The portable fallback target: one element at a time (the SIMD targets never come here).
template <size_t kElem>
HWY_INLINE void ScalarPlane(const uint8_t* HWY_RESTRICT src, int64_t src_row_stride,
                            uint8_t* HWY_RESTRICT dst, int64_t dst_row_stride, size_t rows,
                            size_t cols) {
  for (size_t c = 0; c < cols; ++c) {
    for (size_t r = 0; r < rows; ++r) {
      std::memcpy(dst + static_cast<int64_t>(c) * dst_row_stride + r * kElem,
                  src + static_cast<int64_t>(r) * src_row_stride + c * kElem, kElem);
    }
  }
}
#else
// Stores 128-bit block kBlock of v to p (any alignment).
template <size_t kBlock, class D>
HWY_INLINE void StoreBlock(D d, hn::VFromD<D> v, uint8_t* HWY_RESTRICT p) {
  constexpr size_t kVecBytes = hn::MaxLanes(D()) * sizeof(hn::TFromD<D>);
  static_assert(kBlock * 16 < kVecBytes, "block index out of range");
  if constexpr (kVecBytes == 16) {
    const hn::Repartition<uint8_t, D> du8;
    hn::StoreU(hn::BitCast(du8, v), du8, p);
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  } else if constexpr (kVecBytes == 32) {
    const hn::Repartition<uint8_t, D> du8;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                     _mm256_extracti128_si256(hn::BitCast(du8, v).raw, kBlock));
#endif
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  } else if constexpr (kVecBytes == 64) {
    const hn::Repartition<uint32_t, D> du32;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                     _mm512_extracti32x4_epi32(hn::BitCast(du32, v).raw, kBlock));
#endif
  } else {
    static_assert(kVecBytes == 16, "no block store for this vector width");
  }
}

template <size_t kBlock, size_t kBlocks, size_t kB, class D>
HWY_INLINE void StorePieces(D d, const hn::VFromD<D> (&v)[kB], uint8_t* HWY_RESTRICT dst,
                            int64_t dst_row_stride) {
  if constexpr (kBlock < kBlocks) {
    HWY_UNROLL(16)
    for (size_t j = 0; j < kB; ++j) {
      StoreBlock<kBlock>(d, v[j], dst + static_cast<int64_t>(kBlock * kB + j) * dst_row_stride);
    }
    StorePieces<kBlock + 1, kBlocks>(d, v, dst, dst_row_stride);
  }
}

// Geometry of the tile transpose for kElem-byte elements on vector tag D.
template <size_t kElem, class D>
struct TileShape {
  static constexpr size_t kVecBytes = hn::MaxLanes(D()) * sizeof(hn::TFromD<D>);
  static constexpr size_t kB = 16 / kElem;            // rows per group
  static constexpr size_t kBlocks = kVecBytes / 16;   // 128-bit blocks per vector
  static constexpr size_t kCols = kVecBytes / kElem;  // columns per vector
  static constexpr size_t kRows = 4 * kB;             // rows whose pieces fill a 64-byte line
};

// In-place block-local transpose of kB vectors (log2(kB) interleave rounds: round s pairs
// row i with row i + kB/2; afterwards vector j holds column j of every block, as the tests
// check against the naive reference for every width).
template <class D, size_t kB>
HWY_INLINE void InterleaveRounds(D d, hn::VFromD<D> (&v)[kB]) {
  for (size_t round = 1; round < kB; round *= 2) {
    hn::VFromD<D> w[kB];
    HWY_UNROLL(16)
    for (size_t i = 0; i < kB / 2; ++i) {
      w[2 * i] = hn::InterleaveLower(d, v[i], v[i + kB / 2]);
      w[2 * i + 1] = hn::InterleaveUpper(d, v[i], v[i + kB / 2]);
    }
    HWY_UNROLL(16)
    for (size_t i = 0; i < kB; ++i) v[i] = w[i];
  }
}

// One group: kB rows (src, src_row_stride apart) x kCols columns -> kCols pieces of 16 bytes,
// stored at dst + c * dst_row_stride for column c.
template <size_t kElem, class D>
HWY_INLINE void TransposeGroup(D d, const uint8_t* HWY_RESTRICT src, int64_t src_row_stride,
                               uint8_t* HWY_RESTRICT dst, int64_t dst_row_stride) {
  using Shape = TileShape<kElem, D>;
  constexpr size_t kB = Shape::kB;
  using T = hn::TFromD<D>;
  hn::VFromD<D> v[kB];
  HWY_UNROLL(16)
  for (size_t r = 0; r < kB; ++r) {
    v[r] = hn::LoadU(d, reinterpret_cast<const T*>(src + static_cast<int64_t>(r) * src_row_stride));
  }
  InterleaveRounds(d, v);
  StorePieces<0, Shape::kBlocks>(d, v, dst, dst_row_stride);
}

// `groups` groups of rows (groups * kB <= kRows) x kCols columns.
template <size_t kElem, class D>
HWY_INLINE void TransposeGroups(D d, const uint8_t* HWY_RESTRICT src, int64_t src_row_stride,
                                uint8_t* HWY_RESTRICT dst, int64_t dst_row_stride, size_t groups) {
  constexpr size_t kB = TileShape<kElem, D>::kB;
  for (size_t g = 0; g < groups; ++g) {
    TransposeGroup<kElem>(d, src + static_cast<int64_t>(g * kB) * src_row_stride, src_row_stride,
                          dst + g * 16, dst_row_stride);
  }
}

// A partial tile (rows <= kRows, cols <= kCols): staged through two L1 buffers so the same
// vector code runs; only the valid rows and columns are read and written, with short copies.
template <size_t kElem, class D>
HWY_NOINLINE void TransposeEdge(D d, const uint8_t* HWY_RESTRICT src, int64_t src_row_stride,
                                uint8_t* HWY_RESTRICT dst, int64_t dst_row_stride, size_t rows,
                                size_t cols) {
  using Shape = TileShape<kElem, D>;
  alignas(64) uint8_t in[Shape::kRows * Shape::kVecBytes];
  alignas(64) uint8_t out[Shape::kCols * kLineBytes];
  for (size_t r = 0; r < rows; ++r) {
    CopyBytes(src + static_cast<int64_t>(r) * src_row_stride, in + r * Shape::kVecBytes,
              cols * kElem);
  }
  const size_t groups = (rows + Shape::kB - 1) / Shape::kB;
  TransposeGroups<kElem>(d, in, static_cast<int64_t>(Shape::kVecBytes), out, kLineBytes, groups);
  for (size_t c = 0; c < cols; ++c) {
    CopyBytes(out + c * kLineBytes, dst + static_cast<int64_t>(c) * dst_row_stride, rows * kElem);
  }
}

// Transposes the 128-bit blocks of K vectors: afterwards w[k] holds block k of the original
// w[0], w[1], ..., w[K-1], in that order.
template <size_t K, class D>
HWY_INLINE void TransposeBlocks(D d, hn::VFromD<D> (&w)[K]) {
  if constexpr (K == 2) {
    const auto lo = hn::ConcatLowerLower(d, w[1], w[0]);
    const auto hi = hn::ConcatUpperUpper(d, w[1], w[0]);
    w[0] = lo;
    w[1] = hi;
  } else if constexpr (K == 4) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
    const hn::Repartition<uint32_t, D> du32;
    // [w0.b0 w0.b1 w1.b0 w1.b1], [w0.b2 w0.b3 w1.b2 w1.b3], the same for w2, w3 ...
    const auto t0 = hn::BitCast(du32, hn::ConcatLowerLower(d, w[1], w[0])).raw;
    const auto t1 = hn::BitCast(du32, hn::ConcatUpperUpper(d, w[1], w[0])).raw;
    const auto t2 = hn::BitCast(du32, hn::ConcatLowerLower(d, w[3], w[2])).raw;
    const auto t3 = hn::BitCast(du32, hn::ConcatUpperUpper(d, w[3], w[2])).raw;
    // ... then the even and the odd blocks of each pair.
    w[0] = hn::BitCast(d, hn::VFromD<decltype(du32)>{_mm512_shuffle_i32x4(t0, t2, 0x88)});
    w[1] = hn::BitCast(d, hn::VFromD<decltype(du32)>{_mm512_shuffle_i32x4(t0, t2, 0xDD)});
    w[2] = hn::BitCast(d, hn::VFromD<decltype(du32)>{_mm512_shuffle_i32x4(t1, t3, 0x88)});
    w[3] = hn::BitCast(d, hn::VFromD<decltype(du32)>{_mm512_shuffle_i32x4(t1, t3, 0xDD)});
#else
    static_assert(K != 4, "4-block vectors exist only on AVX-512");
#endif
  }
}

// Whether a full tile is transposed in registers (below) rather than staged through an L1
// buffer: 16 live vectors plus temporaries fit AVX-512's 32 registers for every width; on the
// 16-register targets only 8- and 16-byte elements (8 and 4 live vectors) do.
template <size_t kElem>
constexpr bool kTileInRegisters =
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
    true;
#else
    kElem >= 8;
#endif

// Four groups after their interleave rounds: block k of v[g][j] is the 16-byte piece g of the
// line of column k*kB + j. K x K block transposes across groups assemble each line as whole
// vectors, stored at line(column) (64 bytes; `stream`: aligned, cache-bypassing).
//
// kPartial (a partial tile, kEdgeInRegisters): line(column) is null for the columns past the
// tile's last, and each line gets only its first line_bytes bytes (masked stores).
template <size_t kB, bool kStream, bool kPartial = false, class D, class Line>
HWY_INLINE void StoreLines(D d, hn::VFromD<D> (&v)[4][kB], const Line& line,
                           size_t line_bytes = 0) {
  constexpr size_t kVecBytes = hn::MaxLanes(D()) * sizeof(hn::TFromD<D>);
  constexpr size_t K = kVecBytes / 16;
  using T = hn::TFromD<D>;
  HWY_UNROLL(16)
  for (size_t j = 0; j < kB; ++j) {
    HWY_UNROLL(4)
    for (size_t q = 0; q < 4 / K; ++q) {
      hn::VFromD<D> w[K];
      HWY_UNROLL(4)
      for (size_t k = 0; k < K; ++k) w[k] = v[q * K + k][j];
      TransposeBlocks<K>(d, w);
      HWY_UNROLL(4)
      for (size_t k = 0; k < K; ++k) {
        if constexpr (kPartial) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
          uint8_t* line_start = line(k * kB + j);
          if (line_start == nullptr || q * kVecBytes >= line_bytes) continue;
          const hn::Repartition<uint8_t, D> d8;
          hn::BlendedStore(hn::BitCast(d8, w[k]), hn::FirstN(d8, line_bytes - q * kVecBytes), d8,
                           line_start + q * kVecBytes);
#endif
          continue;
        }
        T* p = reinterpret_cast<T*>(line(k * kB + j) + q * kVecBytes);
        if constexpr (kStream) {
          hn::Stream(w[k], d, p);
        } else {
          hn::StoreU(w[k], d, p);
        }
      }
    }
  }
}

// Whether a full tile is built from rows gathered by 128-bit blocks (TransposeTileGathered)
// rather than whole rows and block transposes (GathersTileRows, nest.h). Measured against the
// block transposes in one process, alternating (1 thread, AMD EPYC Zen 5): f32 768^2 0.49 ->
// 0.70x memcpy, 1000x3000 0.41 -> 0.53, 8192^2 0.45 -> 0.54, 32x64x64x128 `0,3,1,2` 0.50 ->
// 0.63, no f32 case slower; 8- and 16-byte elements ran 0.89-1.00x as fast
// gathered (one interleave round or none leaves little to save), and 2-byte elements mixed
// (2000^2 bf16 0.50 -> 0.54, 8000^2 0.92 -> 0.80). Not where the source rows alias (kSrcAlias):
// the gathered tile reads each source line four times, once per block, and rows a power of two
// apart share one L1 set (eleventh look, ratio to memcpy, gathered / whole rows, in one
// process: f32 8192^2 0.71 / 0.73, 2048^2 0.62 / 0.65). 1-byte tiles on these targets are
// built in halves instead (TransposeByteTileHalf), which ran as fast as gathered ones or faster.
template <size_t kElem, class D, bool kSrcAlias>
constexpr bool kTileGathered = GathersTileRows((HWY_ARCH_X86 != 0) && (HWY_TARGET <= HWY_AVX3),
                                               kElem, hn::MaxLanes(D()) * sizeof(hn::TFromD<D>),
                                               kSrcAlias);

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// A full tile whose rows are gathered by 128-bit blocks: vector q of group g holds block g of
// rows q, q + kB, q + 2 kB and q + 3 kB (one 16-byte load and three inserts from memory), so
// the in-block interleave rounds alone leave vector j of group g holding the whole line of
// column g * kB + j, with no transposes of blocks across vectors. 4-byte elements: 32
// shuffles and 48 inserts per KiB against 64 shuffles. row(r) is where tile row r starts,
// line(c) where column c's 64-byte line goes.
template <size_t kElem, bool kStream, class D, class Row, class Line>
HWY_INLINE void TransposeTileGathered(D d, const Row& row, const Line& line) {
  constexpr size_t kB = TileShape<kElem, D>::kB;
  using T = hn::TFromD<D>;
  HWY_UNROLL(4)
  for (size_t g = 0; g < 4; ++g) {
    hn::VFromD<D> v[kB];
    HWY_UNROLL(16)
    for (size_t q = 0; q < kB; ++q) {
      const auto block = [&](size_t k) {
        return _mm_loadu_si128(reinterpret_cast<const __m128i*>(
            reinterpret_cast<const uint8_t*>(row(q + k * kB)) + g * 16));
      };
      __m512i x = _mm512_castsi128_si512(block(0));
      x = _mm512_inserti32x4(x, block(1), 1);
      x = _mm512_inserti32x4(x, block(2), 2);
      x = _mm512_inserti32x4(x, block(3), 3);
      v[q] = hn::VFromD<D>{x};
    }
    InterleaveRounds(d, v);
    HWY_UNROLL(16)
    for (size_t j = 0; j < kB; ++j) {
      T* p = reinterpret_cast<T*>(line(g * kB + j));
      if constexpr (kStream) {
        hn::Stream(v[j], d, p);
      } else {
        hn::StoreU(v[j], d, p);
      }
    }
  }
}
#endif

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// Half kHalf (columns 32 * kHalf .. + 31) of a 1-byte tile of 64 rows x 64 columns on 64-byte
// vectors (HalvesByteTiles, nest.h): vector i of group a holds those 32 bytes of row i in its
// lower 256 bits and of row i + 32 in its upper, group b the same of rows i + 16 and i + 48, so
// InterleaveRounds transposes every 16 x 16 block of both, leaving vector j of a group with
// columns j and 16 + j of its rows in alternate 16-byte blocks; one two-source permute per
// column joins the four pieces of its line (rows 0-15, 16-31, 32-47, 48-63). 32 vectors: the
// half is built in registers (the 4-byte-lane path needs all 64 rows and waited in an L1
// scratch), and its 32 lines leave before the other half's, which lets a band walk keep 32
// destination rows open at a time rather than 64 (TileBands).
// row(r) is where tile row r starts, line(c) where column c's 64-byte line goes (kPartial:
// null for absent columns); kPartial reads rows [0, n_rows) x columns [0, n_cols) only (masked
// loads; the rest are zero) and writes n_rows bytes of each present line (masked stores).
template <size_t kHalf, bool kStream, bool kPartial, class D, class Row, class Line>
HWY_INLINE void TransposeByteTileHalf(D d, const Row& row, const Line& line, size_t n_rows = 0,
                                      size_t n_cols = 0) {
  static_assert(hn::MaxLanes(D()) * sizeof(hn::TFromD<D>) == 64, "a half fills 64-byte lines");
  constexpr size_t kCol0 = 32 * kHalf;
  if constexpr (kPartial) {
    if (n_cols <= kCol0) return;
  }
  const __mmask32 cols_mask =
      kPartial ? _bzhi_u32(~0u, static_cast<unsigned>(std::min<size_t>(32, n_cols - kCol0)))
               : ~__mmask32{0};
  const auto load = [&](size_t r) {
    const auto* p = reinterpret_cast<const uint8_t*>(row(r)) + kCol0;
    if constexpr (kPartial) {
      return r < n_rows ? _mm256_maskz_loadu_epi8(cols_mask, p) : _mm256_setzero_si256();
    } else {
      (void)cols_mask;
      return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    }
  };
  hn::VFromD<D> a[16], b[16];
  HWY_UNROLL(16)
  for (size_t i = 0; i < 16; ++i) {
    a[i] = hn::VFromD<D>{_mm512_inserti64x4(_mm512_castsi256_si512(load(i)), load(i + 32), 1)};
    b[i] = hn::VFromD<D>{_mm512_inserti64x4(_mm512_castsi256_si512(load(i + 16)), load(i + 48), 1)};
  }
  InterleaveRounds(d, a);
  InterleaveRounds(d, b);
  // 64-bit lanes of a then b: the first 16-byte block of each 32 bytes, then the second.
  const __m512i first_blocks = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13);
  const __m512i second_blocks = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
  const auto store = [&](__m512i v, size_t col) {
    uint8_t* p = line(col);
    if constexpr (kPartial) {
      if (p != nullptr) _mm512_mask_storeu_epi8(p, _bzhi_u64(~uint64_t{0}, n_rows), v);
    } else if constexpr (kStream) {
      hn::Stream(hn::VFromD<D>{v}, d, p);
    } else {
      hn::StoreU(hn::VFromD<D>{v}, d, p);
    }
  };
  HWY_UNROLL(16)
  for (size_t j = 0; j < 16; ++j) {
    store(_mm512_permutex2var_epi64(a[j].raw, first_blocks, b[j].raw), kCol0 + j);
    store(_mm512_permutex2var_epi64(a[j].raw, second_blocks, b[j].raw), kCol0 + 16 + j);
  }
}
#endif

// A full tile (kRows rows x kCols columns) in registers, each destination row leaving as whole
// vectors: no pieces, no buffer. 4-, 8- and 16-byte elements: rows are loaded as groups and
// interleaved in blocks. 2- and 1-byte elements first interleave pairs of rows (twice for
// bytes), which turns every 4 consecutive rows into one row of 4-byte elements, and then run
// the 4-byte tile on those: a 64-byte destination line is always 16 four-byte pieces.
// Shuffles per KiB on AVX-512: 64 (4-byte), 80 (2-byte), 96 (1-byte; on 64-byte vectors 1-byte
// tiles are built in halves instead, TransposeByteTileHalf: 80 shuffles and 16 inserts, no L1
// scratch).
//
// kTable: the rows and columns of a fused plane (Strategy::kFusedTiles) are not one stride
// apart; row k of the tile is at src + row_off[k] and column j's line at dst + col_off[j].
//
// kPartial (kEdgeInRegisters targets): only rows [0, n_rows) x columns [0, n_cols) exist; rows
// are read with masked loads (the rest are zero) and lines written with masked stores, so a
// partial tile runs as a full one instead of through L1 copies.
//
// kSrcAlias: the tile's source rows alias in L1, which decides whether the tile gathers its
// rows (kTileGathered).
template <size_t kElem, bool kStream, bool kTable = false, bool kPartial = false,
          bool kSrcAlias = false, class D>
HWY_INLINE void TransposeTileLines(D d, const uint8_t* HWY_RESTRICT src, int64_t src_row_stride,
                                   uint8_t* HWY_RESTRICT dst, int64_t dst_row_stride,
                                   const int64_t* row_off = nullptr,
                                   const int64_t* col_off = nullptr, size_t n_rows = 0,
                                   size_t n_cols = 0) {
  using Shape = TileShape<kElem, D>;
  using T = hn::TFromD<D>;
  const hn::Repartition<uint8_t, D> d8_load;
  const auto row_mask = hn::FirstN(d8_load, kPartial ? n_cols * kElem : 0);
  const auto load = [&](const T* p, size_t r) {
    if constexpr (kPartial) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
      if (r >= n_rows) return hn::Zero(d);
      return hn::BitCast(d, hn::MaskedLoad(row_mask, d8_load, reinterpret_cast<const uint8_t*>(p)));
#else
      (void)r;
      return hn::LoadU(d, p);
#endif
    } else {
      (void)r;
      (void)row_mask;
      return hn::LoadU(d, p);
    }
  };
  const auto row = [&](size_t r) {
    if constexpr (kTable) {
      return reinterpret_cast<const T*>(src + row_off[r]);
    } else {
      return reinterpret_cast<const T*>(src + static_cast<int64_t>(r) * src_row_stride);
    }
  };
  const auto line = [&](size_t col) -> uint8_t* {
    if constexpr (kPartial) {
      if (col >= n_cols) return nullptr;
    }
    if constexpr (kTable) {
      return dst + col_off[col];
    } else {
      return dst + static_cast<int64_t>(col) * dst_row_stride;
    }
  };
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  if constexpr (HalvesByteTiles(true, kElem, Shape::kVecBytes)) {
    TransposeByteTileHalf<0, kStream, kPartial>(d, row, line, n_rows, n_cols);
    TransposeByteTileHalf<1, kStream, kPartial>(d, row, line, n_rows, n_cols);
    return;
  }
#endif
  if constexpr (!kPartial && kTileGathered<kElem, D, kSrcAlias>) {
    TransposeTileGathered<kElem, kStream>(d, row, line);
    return;
  }
  if constexpr (kElem >= 4) {
    constexpr size_t kB = Shape::kB;
    hn::VFromD<D> v[4][kB];
    // Row addresses by increments: computed as src + r * stride, the 16 addresses of an f32
    // tile were kept on the stack and reloaded (perf: ~20% of the tile's samples on them).
    const uint8_t* p = src;
    HWY_UNROLL(4)
    for (size_t g = 0; g < 4; ++g) {
      HWY_UNROLL(16)
      for (size_t r = 0; r < kB; ++r) {
        if constexpr (kTable) {
          v[g][r] = load(row(g * kB + r), g * kB + r);
        } else {
          v[g][r] = load(reinterpret_cast<const T*>(p), g * kB + r);
          p += src_row_stride;
        }
      }
      InterleaveRounds(d, v[g]);
    }
    StoreLines<kB, kStream, kPartial>(d, v, line, n_rows * kElem);
  } else {
    const hn::Repartition<uint8_t, D> d8;
    const hn::Repartition<uint16_t, D> d16;
    const hn::Repartition<uint32_t, D> d32;
    // Columns per 128-bit block of the source vectors; the 4-byte tile sees 4 per block.
    constexpr size_t kPerBlock = 16 / kElem;
    constexpr size_t kHalves = kElem == 2 ? 2 : 4;  // interleave halves taken, lower/upper
    // Each source row is loaded once and the 4-byte rows of every half wait in an L1 scratch.
    // Loading the rows again per half missed L1 when rows lie a power of two apart (one L1
    // set): 16384x8192 i8 ran at 4.7-5.0 GB/s that way, 5.4-7.2 with a non-power-of-two stride.
    alignas(64) uint8_t scratch[kHalves][16][Shape::kVecBytes];
    HWY_UNROLL(16)
    for (size_t i = 0; i < 16; ++i) {
      if constexpr (kElem == 2) {
        const auto a = load(row(2 * i), 2 * i);
        const auto b = load(row(2 * i + 1), 2 * i + 1);
        hn::Store(hn::BitCast(d8, hn::InterleaveLower(d, a, b)), d8, scratch[0][i]);
        hn::Store(hn::BitCast(d8, hn::InterleaveUpper(d, a, b)), d8, scratch[1][i]);
      } else {
        const auto r0 = load(row(4 * i), 4 * i);
        const auto r1 = load(row(4 * i + 1), 4 * i + 1);
        const auto r2 = load(row(4 * i + 2), 4 * i + 2);
        const auto r3 = load(row(4 * i + 3), 4 * i + 3);
        const auto y0l = hn::BitCast(d16, hn::InterleaveLower(d, r0, r1));
        const auto y1l = hn::BitCast(d16, hn::InterleaveLower(d, r2, r3));
        const auto y0u = hn::BitCast(d16, hn::InterleaveUpper(d, r0, r1));
        const auto y1u = hn::BitCast(d16, hn::InterleaveUpper(d, r2, r3));
        hn::Store(hn::BitCast(d8, hn::InterleaveLower(d16, y0l, y1l)), d8, scratch[0][i]);
        hn::Store(hn::BitCast(d8, hn::InterleaveUpper(d16, y0l, y1l)), d8, scratch[1][i]);
        hn::Store(hn::BitCast(d8, hn::InterleaveLower(d16, y0u, y1u)), d8, scratch[2][i]);
        hn::Store(hn::BitCast(d8, hn::InterleaveUpper(d16, y0u, y1u)), d8, scratch[3][i]);
      }
    }
    HWY_UNROLL(4)
    for (size_t h = 0; h < kHalves; ++h) {
      hn::VFromD<decltype(d32)> z[4][4];
      HWY_UNROLL(16)
      for (size_t i = 0; i < 16; ++i) {
        z[i / 4][i % 4] = hn::BitCast(d32, hn::Load(d8, scratch[h][i]));
      }
      HWY_UNROLL(4)
      for (size_t g = 0; g < 4; ++g) InterleaveRounds(d32, z[g]);
      // 4-byte lane l of block k holds column k*kPerBlock + (half offset) + l%4: the lower and
      // upper interleaves took the first and second half of each block's columns.
      const size_t offset = kElem == 2 ? 4 * h : 8 * (h >> 1) + 4 * (h & 1);
      StoreLines<4, kStream, kPartial>(
          d32, z, [&](size_t lane) { return line((lane / 4) * kPerBlock + offset + lane % 4); },
          n_rows * kElem);
    }
  }
}

// Whether a partial tile runs in registers with masked loads and stores (AVX-512: byte masks
// for every width) rather than through TransposeEdge's L1 buffers and short copies. A plane
// of 11 x 5 f64 (bench z04) is all edge: staged, its tiles ran at 0.1-0.2x memcpy.
template <size_t kElem>
constexpr bool kEdgeInRegisters =
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
    kTileInRegisters<kElem>;
#else
    false;
#endif

// A partial tile (rows <= kRows, cols <= kCols) at src into dst. Not inlined: a call per
// edge tile costs nothing measurable (z04, all edges: unchanged), while its masked body inlined
// at every walk's edges made up a third of the 1-byte unit's compile time (tiles_w1.cc, all
// targets: 71 s inlined, 54 s not).
template <size_t kElem, class D>
HWY_NOINLINE void EdgeTile(D d, const uint8_t* HWY_RESTRICT src, int64_t src_row_stride,
                           uint8_t* HWY_RESTRICT dst, int64_t dst_row_stride, size_t rows,
                           size_t cols) {
  if constexpr (kEdgeInRegisters<kElem>) {
    TransposeTileLines<kElem, false, false, true>(d, src, src_row_stride, dst, dst_row_stride,
                                                  nullptr, nullptr, rows, cols);
  } else {
    TransposeEdge<kElem>(d, src, src_row_stride, dst, dst_row_stride, rows, cols);
  }
}

// Rows [0, rows) x columns [0, cols) where rows < kRows: groups of kB rows as pieces, the
// last partial group through the staged edge path.
template <size_t kElem, class D>
HWY_INLINE size_t TransposeShortRows(D d, const uint8_t* HWY_RESTRICT src, int64_t src_row_stride,
                                     uint8_t* HWY_RESTRICT dst, int64_t dst_row_stride, size_t rows,
                                     size_t cols) {
  using Shape = TileShape<kElem, D>;
  const size_t full_groups = rows / Shape::kB;
  const size_t rest_rows = rows % Shape::kB;
  size_t c = 0;
  for (; c + Shape::kCols <= cols; c += Shape::kCols) {
    const uint8_t* s = src + c * kElem;
    uint8_t* t = dst + static_cast<int64_t>(c) * dst_row_stride;
    TransposeGroups<kElem>(d, s, src_row_stride, t, dst_row_stride, full_groups);
    if (rest_rows != 0) {
      TransposeEdge<kElem>(d, s + static_cast<int64_t>(full_groups * Shape::kB) * src_row_stride,
                           src_row_stride, t + full_groups * 16, dst_row_stride, rest_rows,
                           Shape::kCols);
    }
  }
  return c;
}

// One full tile (kRows rows x kCols columns) at src into dst: in registers where the tile fits
// them, else through an L1 buffer of 16-byte pieces copied out as whole lines. Pieces stored
// straight to the destination would keep kCols lines half-written at once: with ordinary
// stores, rows a power of two apart share one L1 set and evict each other between pieces
// (512 x 512 f32 measured 4.3 GB/s that way, 11 GB/s through the buffer).
template <size_t kElem, bool kStream, bool kSrcAlias = false, class D>
HWY_INLINE void TransposeTile(D d, const uint8_t* HWY_RESTRICT src, int64_t src_row_stride,
                              uint8_t* HWY_RESTRICT dst, int64_t dst_row_stride) {
  using Shape = TileShape<kElem, D>;
  if constexpr (kTileInRegisters<kElem>) {
    TransposeTileLines<kElem, kStream, false, false, kSrcAlias>(d, src, src_row_stride, dst,
                                                                dst_row_stride);
  } else {
    alignas(64) uint8_t out[Shape::kCols * kLineBytes];
    TransposeGroups<kElem>(d, src, src_row_stride, out, kLineBytes, 4);
    for (size_t i = 0; i < Shape::kCols; ++i) {
      if constexpr (kStream) {
        StreamLine(out + i * kLineBytes, dst + static_cast<int64_t>(i) * dst_row_stride);
      } else {
        CopyLine(out + i * kLineBytes, dst + static_cast<int64_t>(i) * dst_row_stride);
      }
    }
  }
}
#endif  // HWY_TARGET == HWY_SCALAR

}  // namespace HWY_NAMESPACE
}  // namespace iotx::kernels
HWY_AFTER_NAMESPACE();

#endif  // IOTX_KERNELS_TILE_INL_H_
