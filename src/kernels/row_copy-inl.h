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

// L1 buffer for gathering short elements into whole destination lines.
inline constexpr size_t kRunBufferBytes = 2048;

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
