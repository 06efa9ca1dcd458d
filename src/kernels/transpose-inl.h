// Per-target tile transposes for 1-, 2-, 4-, 8- and 16-byte elements.
//
// The micro-kernel works on "groups": B = 16 / element-bytes source rows, one vector each.
// log2(B) rounds of InterleaveLower/InterleaveUpper transpose every 128-bit block of the B
// vectors in place (the shuffles stay inside blocks, which x86 does in one instruction per
// vector, p5, 1/cycle); afterwards block k of vector j is a 16-byte piece of destination row
// k*B + j. Each piece is stored with one 16-byte store (an extract-to-memory on AVX2/AVX-512,
// which costs no shuffle port). Four groups give every destination row of the tile one full
// 64-byte line, so a tile reads 64/elem rows x one vector and writes whole lines.
// Per vector byte this is log2(B)/W shuffles: AVX-512 moves 16 (1-byte) to 64 (8-byte)
// bytes per shuffle, above what one core's memory bandwidth asks for (~5 bytes/cycle here).
//
// 16-byte elements run on 8-byte lanes, two per element (zero rounds: pieces are elements).
#if defined(IOTX_KERNELS_TRANSPOSE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef IOTX_KERNELS_TRANSPOSE_INL_H_
#undef IOTX_KERNELS_TRANSPOSE_INL_H_
#else
#define IOTX_KERNELS_TRANSPOSE_INL_H_
#endif

#include <cstdint>
#include <algorithm>
#include <cstring>

#include "hwy/highway.h"
#include "kernels/copy-inl.h"

HWY_BEFORE_NAMESPACE();
namespace iotx::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Unsigned lane type for an element of kElem bytes (16-byte elements use 8-byte lanes).
template <size_t kElem>
using LaneT = hwy::UnsignedFromSize<(kElem > 8 ? 8 : kElem)>;

#if HWY_TARGET == HWY_SCALAR
// The portable fallback target: one element at a time (the SIMD targets never come here).
template <size_t kElem, class D>
HWY_INLINE void TransposeStrip(D /*d*/, const uint8_t* HWY_RESTRICT src, int64_t src_row_stride,
                               uint8_t* HWY_RESTRICT dst, int64_t dst_row_stride, size_t rows,
                               size_t cols, bool /*streaming*/, size_t /*stream_lines*/) {
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
  // Round s pairs row i with row i + kB/2; after log2(kB) rounds, vector j holds column j of
  // every block (checked against the naive reference in tests for every width).
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
    CopyBytes(src + static_cast<int64_t>(r) * src_row_stride, in + r * Shape::kVecBytes, cols * kElem);
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

// In-place block-local transpose of kB vectors (log2(kB) interleave rounds, see TransposeGroup).
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

// Four groups after their interleave rounds: block k of v[g][j] is the 16-byte piece g of the
// line of column k*kB + j. K x K block transposes across groups assemble each line as whole
// vectors, stored at line(column) (64 bytes; `stream`: aligned, cache-bypassing).
template <size_t kB, class D, class Line>
HWY_INLINE void StoreLines(D d, hn::VFromD<D> (&v)[4][kB], const Line& line, bool stream) {
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
        T* p = reinterpret_cast<T*>(line(k * kB + j) + q * kVecBytes);
        if (stream) {
          hn::Stream(w[k], d, p);
        } else {
          hn::StoreU(w[k], d, p);
        }
      }
    }
  }
}

// A full tile (kRows rows x kCols columns) in registers, each destination row leaving as whole
// vectors: no pieces, no buffer. 4-, 8- and 16-byte elements: rows are loaded as groups and
// interleaved in blocks. 2- and 1-byte elements first interleave pairs of rows (twice for
// bytes), which turns every 4 consecutive rows into one row of 4-byte elements, and then run
// the 4-byte tile on those: a 64-byte destination line is always 16 four-byte pieces.
// Shuffles per KiB on AVX-512: 64 (4-byte), 80 (2-byte), 96 (1-byte).
template <size_t kElem, class D>
HWY_INLINE void TransposeTileLines(D d, const uint8_t* HWY_RESTRICT src, int64_t src_row_stride,
                                   uint8_t* HWY_RESTRICT dst, int64_t dst_row_stride,
                                   bool stream) {
  using Shape = TileShape<kElem, D>;
  using T = hn::TFromD<D>;
  const auto row = [&](size_t r) {
    return reinterpret_cast<const T*>(src + static_cast<int64_t>(r) * src_row_stride);
  };
  if constexpr (kElem >= 4) {
    constexpr size_t kB = Shape::kB;
    hn::VFromD<D> v[4][kB];
    HWY_UNROLL(4)
    for (size_t g = 0; g < 4; ++g) {
      HWY_UNROLL(16)
      for (size_t r = 0; r < kB; ++r) v[g][r] = hn::LoadU(d, row(g * kB + r));
      InterleaveRounds(d, v[g]);
    }
    StoreLines<kB>(d, v, [&](size_t col) { return dst + static_cast<int64_t>(col) * dst_row_stride; },
                   stream);
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
        const auto a = hn::LoadU(d, row(2 * i));
        const auto b = hn::LoadU(d, row(2 * i + 1));
        hn::Store(hn::BitCast(d8, hn::InterleaveLower(d, a, b)), d8, scratch[0][i]);
        hn::Store(hn::BitCast(d8, hn::InterleaveUpper(d, a, b)), d8, scratch[1][i]);
      } else {
        const auto r0 = hn::LoadU(d, row(4 * i));
        const auto r1 = hn::LoadU(d, row(4 * i + 1));
        const auto r2 = hn::LoadU(d, row(4 * i + 2));
        const auto r3 = hn::LoadU(d, row(4 * i + 3));
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
      StoreLines<4>(d32, z, [&](size_t lane) {
        const size_t col = (lane / 4) * kPerBlock + offset + lane % 4;
        return dst + static_cast<int64_t>(col) * dst_row_stride;
      }, stream);
    }
  }
}

// Full tiles of kRows rows, one vector of columns each, stored straight to the destination
// (in registers) or through an L1 buffer of pieces (widths that do not fit the registers).
// Pieces stored straight to the destination would keep kCols lines half-written at once:
// with ordinary stores, rows a power of two apart share one L1 set and evict each other
// between pieces (512 x 512 f32 measured 4.3 GB/s that way, 11 GB/s through the buffer).
template <size_t kElem, class D>
HWY_INLINE size_t TransposeFullTiles(D d, const uint8_t* HWY_RESTRICT src, int64_t src_row_stride,
                                     uint8_t* HWY_RESTRICT dst, int64_t dst_row_stride,
                                     size_t cols, bool stream) {
  using Shape = TileShape<kElem, D>;
  size_t c = 0;
  if constexpr (kTileInRegisters<kElem>) {
    for (; c + Shape::kCols <= cols; c += Shape::kCols) {
      TransposeTileLines<kElem>(d, src + c * kElem, src_row_stride,
                                dst + static_cast<int64_t>(c) * dst_row_stride, dst_row_stride, stream);
    }
  } else {
    alignas(64) uint8_t out[Shape::kCols * kLineBytes];
    for (; c + Shape::kCols <= cols; c += Shape::kCols) {
      uint8_t* t = dst + static_cast<int64_t>(c) * dst_row_stride;
      TransposeGroups<kElem>(d, src + c * kElem, src_row_stride, out, kLineBytes, 4);
      for (size_t i = 0; i < Shape::kCols; ++i) {
        if (stream) {
          StreamLine(out + i * kLineBytes, t + static_cast<int64_t>(i) * dst_row_stride);
        } else {
          CopyLine(out + i * kLineBytes, t + static_cast<int64_t>(i) * dst_row_stride);
        }
      }
    }
  }
  return c;
}

// `lines` (2..kMaxStreamLines) stacked full tiles per vector of columns, gathered in an L1
// buffer so each destination row receives `lines` consecutive lines back to back. Rows that
// are not line-aligned (`aligned` false) still stream their whole lines; the partial first
// and last line of each segment take ordinary stores.
template <size_t kElem, class D>
HWY_INLINE size_t TransposeStreamTiles(D d, const uint8_t* HWY_RESTRICT src,
                                       int64_t src_row_stride, uint8_t* HWY_RESTRICT dst,
                                       int64_t dst_row_stride, size_t cols, size_t lines,
                                       bool aligned) {
  using Shape = TileShape<kElem, D>;
  constexpr size_t kMaxSegment = kMaxStreamLines * kLineBytes;
  alignas(64) uint8_t buf[Shape::kCols * kMaxSegment];
  size_t c = 0;
  for (; c + Shape::kCols <= cols; c += Shape::kCols) {
    for (size_t q = 0; q < lines; ++q) {
      TransposeFullTiles<kElem>(d, src + static_cast<int64_t>(q * Shape::kRows) * src_row_stride + c * kElem,
                                src_row_stride, buf + q * kLineBytes, kMaxSegment, Shape::kCols,
                                /*stream=*/false);
    }
    uint8_t* t = dst + static_cast<int64_t>(c) * dst_row_stride;
    for (size_t i = 0; i < Shape::kCols; ++i) {
      uint8_t* row = t + static_cast<int64_t>(i) * dst_row_stride;
      if (aligned) {
        for (size_t l = 0; l < lines; ++l) StreamLine(buf + i * kMaxSegment + l * kLineBytes, row + l * kLineBytes);
      } else {
        StreamBytes(buf + i * kMaxSegment, row, lines * kLineBytes);
      }
    }
  }
  return c;
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

// Interleaving and de-interleaving a few rows (NCHW <-> NHWC with 2-4 channels): the tile
// would be mostly edge there, so these use Highway's (Load|Store)Interleaved{2,3,4}, which move
// whole vectors. (Generic path, 32x3x224x224 f32 -> NHWC: 4.9 GB/s; u8: 1.6 GB/s.)

// Rows 0..rows-1 (2-4 of them) x columns [0, cols) into a contiguous destination (column c's
// rows at dst + (c * rows + r) * kElem). Returns the columns done (whole vectors).
template <size_t kElem, class D>
HWY_INLINE size_t InterleaveRows(D d, const uint8_t* HWY_RESTRICT src, int64_t src_row_stride,
                                 uint8_t* HWY_RESTRICT dst, size_t rows, size_t cols, bool stream) {
  using T = hn::TFromD<D>;
  const size_t lanes = hn::Lanes(d);
  constexpr size_t kBufBytes = 4096;
  alignas(64) uint8_t buf[kBufBytes];
  const size_t chunk = std::max(lanes, kBufBytes / (rows * kElem) / lanes * lanes);
  const auto row = [&](size_t r, size_t c) {
    return reinterpret_cast<const T*>(src + static_cast<int64_t>(r) * src_row_stride + c * kElem);
  };
  size_t c = 0;
  while (c + lanes <= cols) {
    const size_t n = std::min(chunk, (cols - c) / lanes * lanes);
    uint8_t* out = stream ? buf : dst + c * rows * kElem;
    for (size_t k = c; k < c + n; k += lanes) {
      T* p = reinterpret_cast<T*>(out + (k - c) * rows * kElem);
      if (rows == 2) {
        hn::StoreInterleaved2(hn::LoadU(d, row(0, k)), hn::LoadU(d, row(1, k)), d, p);
      } else if (rows == 3) {
        hn::StoreInterleaved3(hn::LoadU(d, row(0, k)), hn::LoadU(d, row(1, k)),
                              hn::LoadU(d, row(2, k)), d, p);
      } else {
        hn::StoreInterleaved4(hn::LoadU(d, row(0, k)), hn::LoadU(d, row(1, k)),
                              hn::LoadU(d, row(2, k)), hn::LoadU(d, row(3, k)), d, p);
      }
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

// A strip of `rows` rows x `cols` columns, walked one vector of columns at a time so the
// source rows are read as sequential streams. (Prefetching each tile's lines one large strip
// ahead was measured and dropped: 128 MiB of i8 went from 6.3 to 3.1-4.1 GB/s with it; small
// strips are prefetched whole by RunTranspose instead.)
template <size_t kElem, class D>
HWY_INLINE void TransposeStrip(D d, const uint8_t* HWY_RESTRICT src, int64_t src_row_stride,
                               uint8_t* HWY_RESTRICT dst, int64_t dst_row_stride, size_t rows,
                               size_t cols, bool streaming, size_t stream_lines) {
  using Shape = TileShape<kElem, D>;
  // Cache-bypassing stores need whole aligned lines; the whole strip shares one alignment.
  const bool stream = streaming && (reinterpret_cast<uintptr_t>(dst) % kLineBytes) == 0 &&
                      dst_row_stride % kLineBytes == 0;
  size_t r = 0;
  if constexpr (kElem <= 8) {
    const auto e = static_cast<int64_t>(kElem);
    if (rows >= 2 && rows <= 4 && dst_row_stride == static_cast<int64_t>(rows) * e) {
      const size_t c = InterleaveRows<kElem>(d, src, src_row_stride, dst, rows, cols, streaming);
      if (c < cols) {
        TransposeEdge<kElem>(d, src + c * kElem, src_row_stride,
                             dst + static_cast<int64_t>(c) * dst_row_stride, dst_row_stride, rows,
                             cols - c);
      }
      return;
    }
    if (cols >= 2 && cols <= 4 && src_row_stride == static_cast<int64_t>(cols) * e) {
      r = DeinterleaveCols<kElem>(d, src, dst, dst_row_stride, rows, cols,
                                  stream && hn::Lanes(d) * kElem == kLineBytes);
    }
  }
  const auto row_src = [&](size_t row) { return src + static_cast<int64_t>(row) * src_row_stride; };
  const auto row_dst = [&](size_t row) { return dst + row * kElem; };
  // Columns past the last full vector, for rows [r0, r1).
  const auto edge_cols = [&](size_t r0, size_t r1, size_t c) {
    for (size_t e = r0; e < r1; e += Shape::kRows) {
      const size_t n = std::min(Shape::kRows, r1 - e);
      TransposeEdge<kElem>(d, row_src(e) + c * kElem, src_row_stride,
                           row_dst(e) + static_cast<int64_t>(c) * dst_row_stride, dst_row_stride, n,
                           cols - c);
    }
  };
  if (streaming && stream_lines > 1) {
    const size_t segment_rows = stream_lines * Shape::kRows;
    for (; r + segment_rows <= rows; r += segment_rows) {
      const size_t c = TransposeStreamTiles<kElem>(d, row_src(r), src_row_stride, row_dst(r),
                                                   dst_row_stride, cols, stream_lines, stream);
      if (c < cols) edge_cols(r, r + segment_rows, c);
    }
  }
  for (; r + Shape::kRows <= rows; r += Shape::kRows) {
    const size_t c = TransposeFullTiles<kElem>(d, row_src(r), src_row_stride, row_dst(r),
                                               dst_row_stride, cols, stream);
    if (c < cols) edge_cols(r, r + Shape::kRows, c);
  }
  if (r < rows) {
    const size_t c = TransposeShortRows<kElem>(d, row_src(r), src_row_stride, row_dst(r),
                                               dst_row_stride, rows - r, cols);
    if (c < cols) edge_cols(r, rows, c);
  }
}

#endif  // HWY_TARGET == HWY_SCALAR

}  // namespace HWY_NAMESPACE
}  // namespace iotx::kernels
HWY_AFTER_NAMESPACE();

#endif  // IOTX_KERNELS_TRANSPOSE_INL_H_
