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
                               size_t cols, bool /*streaming*/) {
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

// Whether a full tile of kElem-byte elements fits the register file when kept whole: 64 / kElem
// rows of one vector each, plus as many temporaries. AVX-512 has 32 vector registers, the
// others 16.
template <size_t kElem>
constexpr bool kTileInRegisters =
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
    kElem >= 4;
#else
    kElem >= 8;
#endif

// A full tile (kRows rows x kCols columns) kept in registers: block-local rounds per group,
// then K x K block transposes across groups, so each destination row leaves as whole vectors
// (a 64-byte line per row): no pieces, no buffer. 16x16 f32 on AVX-512: 32 + 32 shuffles and
// 16 full-line stores per KiB.
template <size_t kElem, class D>
HWY_INLINE void TransposeTileLines(D d, const uint8_t* HWY_RESTRICT src, int64_t src_row_stride,
                                   uint8_t* HWY_RESTRICT dst, int64_t dst_row_stride,
                                   bool stream) {
  using Shape = TileShape<kElem, D>;
  constexpr size_t kB = Shape::kB;
  constexpr size_t K = Shape::kBlocks;
  using T = hn::TFromD<D>;
  hn::VFromD<D> v[4][kB];
  HWY_UNROLL(4)
  for (size_t g = 0; g < 4; ++g) {
    HWY_UNROLL(16)
    for (size_t r = 0; r < kB; ++r) {
      v[g][r] = hn::LoadU(d, reinterpret_cast<const T*>(src + static_cast<int64_t>(g * kB + r) * src_row_stride));
    }
    for (size_t round = 1; round < kB; round *= 2) {
      hn::VFromD<D> w[kB];
      HWY_UNROLL(16)
      for (size_t i = 0; i < kB / 2; ++i) {
        w[2 * i] = hn::InterleaveLower(d, v[g][i], v[g][i + kB / 2]);
        w[2 * i + 1] = hn::InterleaveUpper(d, v[g][i], v[g][i + kB / 2]);
      }
      HWY_UNROLL(16)
      for (size_t i = 0; i < kB; ++i) v[g][i] = w[i];
    }
  }
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
        T* p = reinterpret_cast<T*>(dst + static_cast<int64_t>(k * kB + j) * dst_row_stride +
                                    q * Shape::kVecBytes);
        if (stream) {
          hn::Stream(w[k], d, p);
        } else {
          hn::StoreU(w[k], d, p);
        }
      }
    }
  }
}

// Writes one 64-byte line from an L1 buffer with an ordinary (full-line) store.
HWY_INLINE void CopyLine(const uint8_t* HWY_RESTRICT from, uint8_t* HWY_RESTRICT to) {
  const DBytes d;
  const size_t lanes = hn::Lanes(d);
  for (size_t i = 0; i < static_cast<size_t>(kLineBytes); i += lanes) {
    hn::StoreU(hn::Load(d, from + i), d, to + i);
  }
}

// A strip of `rows` (<= kRows) rows x `cols` columns, walked one vector of columns at a time
// so the source rows are read as sequential streams. (Software prefetch of the next strip's
// lines was measured and dropped: 128 MiB of i8 went from 6.3 to 3.1-4.1 GB/s with it, as the
// 64 rows of a 1-byte tile exhaust the line-fill buffers; f32 lost ~10%.)
//
// Full tiles are transposed into an L1 buffer and leave as whole 64-byte lines. Pieces stored
// straight to the destination would keep kCols lines half-written at once: with streaming
// stores more than the CPU's write-combining buffers (about 12) hold, so lines would reach
// memory in parts; with ordinary stores, destination rows a power-of-two apart share one L1
// set and evict each other between pieces (512x512 f32 measured 4.3 GB/s direct).
template <size_t kElem, class D>
HWY_INLINE void TransposeStrip(D d, const uint8_t* HWY_RESTRICT src, int64_t src_row_stride,
                               uint8_t* HWY_RESTRICT dst, int64_t dst_row_stride, size_t rows,
                               size_t cols, bool streaming) {
  using Shape = TileShape<kElem, D>;
  size_t c = 0;
  if (rows == Shape::kRows && kTileInRegisters<kElem>) {
    // Cache-bypassing stores need aligned lines; the whole strip shares one alignment.
    const bool stream = streaming && (reinterpret_cast<uintptr_t>(dst) % kLineBytes) == 0 &&
                        dst_row_stride % kLineBytes == 0;
    for (; c + Shape::kCols <= cols; c += Shape::kCols) {
      const uint8_t* s = src + c * kElem;
      TransposeTileLines<kElem>(d, s, src_row_stride, dst + static_cast<int64_t>(c) * dst_row_stride,
                                dst_row_stride, stream);
    }
  } else if (rows == Shape::kRows) {
    alignas(64) uint8_t out[Shape::kCols * kLineBytes];
    for (; c + Shape::kCols <= cols; c += Shape::kCols) {
      const uint8_t* s = src + c * kElem;
      uint8_t* t = dst + static_cast<int64_t>(c) * dst_row_stride;
      TransposeGroups<kElem>(d, s, src_row_stride, out, kLineBytes, 4);
      if (streaming) {
        for (size_t i = 0; i < Shape::kCols; ++i) {
          StoreLine(out + i * kLineBytes, t + static_cast<int64_t>(i) * dst_row_stride);
        }
      } else {
        for (size_t i = 0; i < Shape::kCols; ++i) {
          CopyLine(out + i * kLineBytes, t + static_cast<int64_t>(i) * dst_row_stride);
        }
      }
    }
  } else {
    const size_t full_groups = rows / Shape::kB;
    const size_t rest_rows = rows % Shape::kB;
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
  }
  if (c < cols) {
    TransposeEdge<kElem>(d, src + c * kElem, src_row_stride,
                         dst + static_cast<int64_t>(c) * dst_row_stride, dst_row_stride, rows,
                         cols - c);
  }
}

#endif  // HWY_TARGET == HWY_SCALAR

}  // namespace HWY_NAMESPACE
}  // namespace iotx::kernels
HWY_AFTER_NAMESPACE();

#endif  // IOTX_KERNELS_TRANSPOSE_INL_H_
