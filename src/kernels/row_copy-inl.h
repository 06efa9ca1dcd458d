// Per-target strided row copy: the innermost dim stayed innermost, so every element is a
// contiguous row of elem_bytes bytes in both source and destination (after WidenElement).
#if defined(IOTX_KERNELS_ROW_COPY_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef IOTX_KERNELS_ROW_COPY_INL_H_
#undef IOTX_KERNELS_ROW_COPY_INL_H_
#else
#define IOTX_KERNELS_ROW_COPY_INL_H_
#endif

#include <algorithm>
#include <cstdint>

#include "hwy/highway.h"
#include "kernels/copy-inl.h"

HWY_BEFORE_NAMESPACE();
namespace iotx::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// L1 buffer for gathering short elements into whole destination lines.
inline constexpr size_t kRunBufferBytes = 2048;

// Rows [0, rows) of one column, elements of `elem` bytes (at most a vector of `d`) from `src`
// (src_row_stride apart) to `to`, one after another: each moved as one whole vector, whose
// bytes past the element land where the next one goes and are overwritten by its store. One
// load and one store per element where CopyBytes takes two of each, plus its branches: i8
// 261x11x500x9 `2,1,0,3` (9-byte elements) ran at 0.37 of memcpy so, 0.61 this way (1
// thread, Intel Xeon). Only elements whose vector ends within the run move so, the rest take
// CopyBytes. Their loads stay within the source where rows are at least an element apart
// (MoveColumnRun checks): each such element has a vector's worth of rows after it.
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

// One column's run (`rows` elements from `src`) as MoveShortRun moves it, on the narrowest
// vector the element fits (less spilled past each element). 64-byte vectors only `into_l1` (a
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
  if (rows_ahead && elem <= 16)
    return MoveShortRun(hn::Full128<uint8_t>(), src, src_row_stride, to, rows, elem);
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

// A strip of `rows` x `cols` elements of `elem` bytes. For each column, the `rows` elements
// are consecutive in the destination and are written in order, one sequential run.
HWY_INLINE void RowCopyStrip(const uint8_t* HWY_RESTRICT src, int64_t src_row_stride,
                             uint8_t* HWY_RESTRICT dst, int64_t dst_row_stride, size_t rows,
                             size_t cols, size_t elem, bool streaming) {
  const auto line = static_cast<size_t>(kLineBytes);
  if (elem % line == 0 && reinterpret_cast<uintptr_t>(dst) % line == 0 &&
      dst_row_stride % kLineBytes == 0) {
    // Every element is whole aligned destination lines (the common case: rows of 16 f32 and
    // up): a tight loop of line moves. The generic per-element path below costs ~30 cycles
    // per 64-byte element, which alone held 64 MiB of them to 5-6 GB/s.
    const size_t lines = elem / line;
    for (size_t c = 0; c < cols; ++c) {
      uint8_t* t = dst + static_cast<int64_t>(c) * dst_row_stride;
      for (size_t r = 0; r < rows; ++r) {
        const uint8_t* f = src + static_cast<int64_t>(r) * src_row_stride + c * elem;
        if (streaming) {
          for (size_t l = 0; l < lines; ++l) StreamLine(f + l * line, t + l * line);
        } else {
          for (size_t l = 0; l < lines; ++l) CopyLine(f + l * line, t + l * line);
        }
        t += elem;
      }
    }
    return;
  }
  if (streaming && elem >= line) {
    for (size_t c = 0; c < cols; ++c) {
      for (size_t r = 0; r < rows; ++r) {
        StreamBytes(src + static_cast<int64_t>(r) * src_row_stride + c * elem,
                    dst + static_cast<int64_t>(c) * dst_row_stride + r * elem, elem);
      }
    }
    return;
  }
  if (streaming && rows * elem >= static_cast<size_t>(kLineBytes)) {
    // Gather one destination run in L1 (elements shorter than a line), then write its whole
    // lines at once.
    alignas(64) uint8_t run[kRunBufferBytes];
    const size_t per_run = std::max<size_t>(1, kRunBufferBytes / elem);
    for (size_t c = 0; c < cols; ++c) {
      uint8_t* t = dst + static_cast<int64_t>(c) * dst_row_stride;
      for (size_t r0 = 0; r0 < rows; r0 += per_run) {
        const size_t n = std::min(per_run, rows - r0);
        MoveColumnRun(src + static_cast<int64_t>(r0) * src_row_stride + c * elem, src_row_stride,
                      run, n, elem, /*into_l1=*/true);
        StreamBytes(run, t + r0 * elem, n * elem);
      }
    }
    return;
  }
  for (size_t c = 0; c < cols; ++c) {
    MoveColumnRun(src + c * elem, src_row_stride, dst + static_cast<int64_t>(c) * dst_row_stride,
                  rows, elem, /*into_l1=*/false);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace iotx::kernels
HWY_AFTER_NAMESPACE();

#endif  // IOTX_KERNELS_ROW_COPY_INL_H_
