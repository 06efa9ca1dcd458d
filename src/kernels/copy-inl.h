// Per-target byte moves shared by the kernels: short copies without a byte loop, and
// copies that write whole aligned 64-byte lines with cache-bypassing stores.
//
// Per-target include guard (Highway skeleton pattern): this file is included once per target.
#if defined(IOTX_KERNELS_COPY_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef IOTX_KERNELS_COPY_INL_H_
#undef IOTX_KERNELS_COPY_INL_H_
#else
#define IOTX_KERNELS_COPY_INL_H_
#endif

#include <cstdint>
#include <cstring>

#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels/nest.h"

HWY_BEFORE_NAMESPACE();
namespace iotx::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Elements of kElem bytes from `p` up to its line's end: the rows a walk peels so that the
// rest of a destination starting at `p` is whole lines. 0 when `p` starts a line, or when no
// whole number of elements reaches the boundary (`p` is not a multiple of kElem into its line).
template <size_t kElem>
HWY_INLINE size_t ElementsToLine(const void* p) {
  const auto line = static_cast<size_t>(kLineBytes);
  const size_t misalign = reinterpret_cast<uintptr_t>(p) % line;
  return misalign % kElem == 0 ? (line - misalign) % line / kElem : 0;
}

// Widest byte vector of the target; scalable targets are capped at 128 bits, the width the
// kernels' block-local shuffles assume.
#if HWY_HAVE_SCALABLE
using DBytes = hn::Full128<uint8_t>;
#else
using DBytes = hn::ScalableTag<uint8_t>;
#endif

template <typename T>
HWY_INLINE T LoadScalar(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <typename T>
HWY_INLINE void StoreScalar(T v, uint8_t* p) {
  std::memcpy(p, &v, sizeof(T));
}

#if HWY_TARGET == HWY_SCALAR
// The portable fallback target (no SIMD): the C library's copy, ordinary stores.
HWY_INLINE void CopyBytes(const uint8_t* HWY_RESTRICT from, uint8_t* HWY_RESTRICT to, size_t n) {
  std::memcpy(to, from, n);
}
HWY_INLINE void StreamLine(const uint8_t* HWY_RESTRICT from, uint8_t* HWY_RESTRICT to) {
  std::memcpy(to, from, kLineBytes);
}
#else
// Copies n bytes with at most two (overlapping) moves for n <= 32 and full vectors beyond,
// so the short row pieces of edge tiles never fall into a byte-by-byte loop.
HWY_INLINE void CopyBytes(const uint8_t* HWY_RESTRICT from, uint8_t* HWY_RESTRICT to, size_t n) {
  if (n >= 16) {
    const hn::Full128<uint8_t> d16;
    if (n <= 32) {
      const auto head = hn::LoadU(d16, from);
      const auto tail = hn::LoadU(d16, from + n - 16);
      hn::StoreU(head, d16, to);
      hn::StoreU(tail, d16, to + n - 16);
      return;
    }
    const DBytes d;
    const size_t lanes = hn::Lanes(d);
    if (n < lanes) {  // 33..63 bytes on AVX-512: 16-byte steps plus one overlapping tail
      size_t i = 0;
      for (; i + 16 <= n; i += 16) hn::StoreU(hn::LoadU(d16, from + i), d16, to + i);
      hn::StoreU(hn::LoadU(d16, from + n - 16), d16, to + n - 16);
      return;
    }
    size_t i = 0;
    for (; i + lanes <= n; i += lanes) hn::StoreU(hn::LoadU(d, from + i), d, to + i);
    if (i != n) hn::StoreU(hn::LoadU(d, from + n - lanes), d, to + n - lanes);
    return;
  }
  if (n >= 8) {
    const uint64_t head = LoadScalar<uint64_t>(from);
    const uint64_t tail = LoadScalar<uint64_t>(from + n - 8);
    StoreScalar(head, to);
    StoreScalar(tail, to + n - 8);
  } else if (n >= 4) {
    const uint32_t head = LoadScalar<uint32_t>(from);
    const uint32_t tail = LoadScalar<uint32_t>(from + n - 4);
    StoreScalar(head, to);
    StoreScalar(tail, to + n - 4);
  } else if (n >= 2) {
    const uint16_t head = LoadScalar<uint16_t>(from);
    const uint16_t tail = LoadScalar<uint16_t>(from + n - 2);
    StoreScalar(head, to);
    StoreScalar(tail, to + n - 2);
  } else if (n == 1) {
    *to = *from;
  }
}

// Writes one 64-byte line `to` (64-byte aligned) from `from` with cache-bypassing stores.
HWY_INLINE void StreamLine(const uint8_t* HWY_RESTRICT from, uint8_t* HWY_RESTRICT to) {
  const DBytes d;
  const size_t lanes = hn::Lanes(d);
  if (lanes >= static_cast<size_t>(kLineBytes)) {
    hn::Stream(hn::LoadU(d, from), d, to);
  } else {
    for (size_t i = 0; i < static_cast<size_t>(kLineBytes); i += lanes) {
      hn::Stream(hn::LoadU(d, from + i), d, to + i);
    }
  }
}
#endif  // HWY_TARGET == HWY_SCALAR

// Copies one 64-byte line with ordinary stores.
HWY_INLINE void CopyLine(const uint8_t* HWY_RESTRICT from, uint8_t* HWY_RESTRICT to) {
  const DBytes d;
  const size_t lanes = hn::Lanes(d);
  for (size_t i = 0; i < static_cast<size_t>(kLineBytes); i += lanes) {
    hn::StoreU(hn::LoadU(d, from + i), d, to + i);
  }
}

// `rows` pieces of `elem` bytes (at most a vector of `d`) from `src` (src_row_stride apart) to
// `to`, one after another (a row copy's column run, the joined interleaves' group runs): each
// moved as one whole vector, whose bytes past the piece land where the next one goes and are
// overwritten by its store. One load and one store per piece where CopyBytes takes two of
// each, plus its branches: i8 261x11x500x9 `2,1,0,3` (a row copy of 9-byte elements) ran at
// 0.37 of memcpy so, 0.53-0.61 this way (1 thread, Intel Xeon). Only pieces whose vector ends
// within the run move so, the rest take CopyBytes. Their loads stay within the source where
// rows are at least a piece apart (MoveColumnRun checks): each such piece has a vector's worth
// of rows after it.
template <class D>
HWY_INLINE void MoveShortRun(D d, const uint8_t* HWY_RESTRICT src, int64_t src_row_stride,
                             uint8_t* HWY_RESTRICT to, size_t rows, size_t elem) {
  const size_t lanes = hn::Lanes(d);
  size_t r = 0;
  if (rows * elem >= lanes) {
    const size_t whole = (rows * elem - lanes) / elem + 1;
    const uint8_t* f = src;
    for (; r < whole; ++r, f += src_row_stride) hn::StoreU(hn::LoadU(d, f), d, to + r * elem);
  }
  for (; r < rows; ++r) {
    CopyBytes(src + static_cast<int64_t>(r) * src_row_stride, to + r * elem, elem);
  }
}

// A run of `rows` pieces from `src` as MoveShortRun moves it, on the narrowest vector the piece
// fits (less spilled past each). 64-byte vectors only `into_l1` (a
// run buffer): written straight to the destination nearly every one splits across two lines,
// and elements of 33-63 bytes ran slower so than with CopyBytes (1 thread, ratio to memcpy,
// Intel Xeon: f32 894x301x11 `1,0,2` 0.90 -> 0.77, i8 2000x150x37 `1,0,2` 0.90 -> 0.79),
// while into the buffer they gained (i8 3000x200x37 `1,0,2`, streamed, 0.44 -> 0.77).
HWY_INLINE void MoveColumnRun(const uint8_t* HWY_RESTRICT src, int64_t src_row_stride,
                              uint8_t* HWY_RESTRICT to, size_t rows, size_t elem, bool into_l1) {
#if HWY_TARGET != HWY_SCALAR
  const DBytes widest;
  // A strided source's rows may run backwards or repeat (a reversed or broadcast view):
  // there the rows after an element are not further on, and its vector could read past the
  // view's last byte.
  const bool rows_ahead = src_row_stride >= static_cast<int64_t>(elem);
  if (rows_ahead && elem <= 16) {
    return MoveShortRun(hn::Full128<uint8_t>(), src, src_row_stride, to, rows, elem);
  }
  if (rows_ahead && elem <= 32 && hn::Lanes(widest) >= 32) {
    return MoveShortRun(hn::CappedTag<uint8_t, 32>(), src, src_row_stride, to, rows, elem);
  }
  if (rows_ahead && into_l1 && elem <= hn::Lanes(widest)) {
    return MoveShortRun(widest, src, src_row_stride, to, rows, elem);
  }
#else
  (void)into_l1;
#endif
  for (size_t r = 0; r < rows; ++r) {
    CopyBytes(src + static_cast<int64_t>(r) * src_row_stride, to + r * elem, elem);
  }
}

// `rows` pieces of 33-64 bytes from `src` (src_row_stride apart) to `to`, one after another:
// two 32-byte moves each, the second ending on the piece's last byte, where CopyBytes takes
// 16-byte steps and a tail (three moves for 36 bytes). False on targets without 32-byte
// vectors. In cache it pays (the joined interleave's 36-byte groups, f32 3x21x465x3
// `2,1,3,0`: 0.20 -> 0.32 of memcpy, 1 thread, Intel Xeon); a row copy's 37- and 44-byte
// elements straight into a DRAM-sized output ran slower (0.88 -> 0.82), so it keeps CopyBytes.
HWY_INLINE bool MovePiecesInTwoHalves(const uint8_t* HWY_RESTRICT src, int64_t src_row_stride,
                                      uint8_t* HWY_RESTRICT to, size_t rows, size_t elem) {
#if HWY_TARGET != HWY_SCALAR
  const hn::CappedTag<uint8_t, 32> d32;
  if (hn::Lanes(d32) < 32 || elem <= 32 || elem > 64) return false;
  const uint8_t* f = src;
  for (size_t r = 0; r < rows; ++r, f += src_row_stride) {
    uint8_t* t = to + r * elem;
    const auto head = hn::LoadU(d32, f);
    const auto tail = hn::LoadU(d32, f + elem - 32);
    hn::StoreU(head, d32, t);
    hn::StoreU(tail, d32, t + elem - 32);
  }
  return true;
#else
  (void)src, (void)src_row_stride, (void)to, (void)rows, (void)elem;
  return false;
#endif
}

// A destination run of a kStagedTiles block (a few lines) out of its stage, which is in L2
// rather than L1: glibc's memcpy issues all the loads of a run of up to 8 vectors before its
// stores, where CopyBytes' loop alternates them, and the stage's L2 latency then overlaps (1
// thread, alternating in one process, ratio to memcpy: 1024^2 f32 0.37-0.40 -> 0.42-0.52,
// 2048 x 1024 bf16 0.30-0.32 -> 0.36-0.39, 64x128x256 f32 `2,0,1` 0.29-0.33 -> 0.37; i8 and
// f64 unchanged). The fused walk's runs measured slower this way (fused_plane-inl.h, FusedPlane).
HWY_INLINE void CopyRun(const uint8_t* HWY_RESTRICT from, uint8_t* HWY_RESTRICT to, size_t n) {
  std::memcpy(to, from, n);
}

// Copies n bytes; the whole 64-byte lines of `to` are written with cache-bypassing stores,
// the unaligned head and tail with ordinary ones. The caller issues hwy::FlushStream().
HWY_INLINE void StreamBytes(const uint8_t* HWY_RESTRICT from, uint8_t* HWY_RESTRICT to, size_t n) {
  const size_t misalign = reinterpret_cast<uintptr_t>(to) & (kLineBytes - 1);
  size_t head = misalign == 0 ? 0 : static_cast<size_t>(kLineBytes) - misalign;
  if (head >= n) {
    CopyBytes(from, to, n);
    return;
  }
  CopyBytes(from, to, head);
  size_t i = head;
  for (; i + kLineBytes <= n; i += kLineBytes) StreamLine(from + i, to + i);
  CopyBytes(from + i, to + i, n - i);
}

// A staged block's destination run: the `n` bytes at `to` are the block's, `covered` >= n
// bytes are in the stage at `run`. The block writes the lines that start within its bytes,
// whole, with cache-bypassing stores, reading up to a line past its bytes where the stage
// covers them (the next block's first rows, which the caller staged for this); the line it
// starts part-way into is the previous block's, which covered it so. `head_too`: no previous
// block did, so the bytes up to the first line boundary go with ordinary stores, as do those
// of a last line the stage does not cover. With covered == n and head_too, it is StreamBytes.
HWY_INLINE void StreamOwnedLines(const uint8_t* HWY_RESTRICT run, uint8_t* HWY_RESTRICT to,
                                 size_t n, size_t covered, bool head_too) {
  const size_t head =
      (kLineBytes - (reinterpret_cast<uintptr_t>(to) & (kLineBytes - 1))) & (kLineBytes - 1);
  if (head_too) CopyBytes(run, to, std::min(head, n));
  for (size_t i = head; i < n; i += kLineBytes) {
    if (i + kLineBytes > covered) {
      CopyBytes(run + i, to + i, n - i);
      break;
    }
    StreamLine(run + i, to + i);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace iotx::kernels
HWY_AFTER_NAMESPACE();

#endif  // IOTX_KERNELS_COPY_INL_H_
