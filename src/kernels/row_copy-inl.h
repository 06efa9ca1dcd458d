// Per-target strided row copy: the innermost dim stayed innermost, so every element is a
// contiguous row of elem_bytes bytes in both source and destination (after WidenElement).
#if defined(IOTX_KERNELS_ROW_COPY_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef IOTX_KERNELS_ROW_COPY_INL_H_
#undef IOTX_KERNELS_ROW_COPY_INL_H_
#else
#define IOTX_KERNELS_ROW_COPY_INL_H_
#endif

#include <cstdint>

#include "hwy/highway.h"
#include "kernels/copy-inl.h"

HWY_BEFORE_NAMESPACE();
namespace iotx::kernels {
namespace HWY_NAMESPACE {

// A strip of `rows` x `cols` elements of `elem` bytes. For each column, the `rows` elements
// are consecutive in the destination; rows is at most ceil(64 / elem) (the planner's row
// block), so a short element still fills a whole destination line per column.
HWY_INLINE void RowCopyStrip(const uint8_t* HWY_RESTRICT src, int64_t src_row_stride,
                             uint8_t* HWY_RESTRICT dst, int64_t dst_row_stride, size_t rows,
                             size_t cols, size_t elem, bool streaming) {
  if (streaming && elem >= static_cast<size_t>(kLineBytes)) {
    for (size_t c = 0; c < cols; ++c) {
      for (size_t r = 0; r < rows; ++r) {
        StreamBytes(src + static_cast<int64_t>(r) * src_row_stride + c * elem,
                    dst + static_cast<int64_t>(c) * dst_row_stride + r * elem, elem);
      }
    }
    return;
  }
  if (streaming && rows * elem >= static_cast<size_t>(kLineBytes)) {
    // Gather one destination segment (< 128 bytes) in L1, then write its whole lines at once.
    alignas(64) uint8_t line[2 * kLineBytes];
    for (size_t c = 0; c < cols; ++c) {
      for (size_t r = 0; r < rows; ++r) {
        CopyBytes(src + static_cast<int64_t>(r) * src_row_stride + c * elem, line + r * elem, elem);
      }
      StreamBytes(line, dst + static_cast<int64_t>(c) * dst_row_stride, rows * elem);
    }
    return;
  }
  for (size_t c = 0; c < cols; ++c) {
    uint8_t* t = dst + static_cast<int64_t>(c) * dst_row_stride;
    for (size_t r = 0; r < rows; ++r) {
      CopyBytes(src + static_cast<int64_t>(r) * src_row_stride + c * elem, t + r * elem, elem);
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace iotx::kernels
HWY_AFTER_NAMESPACE();

#endif  // IOTX_KERNELS_ROW_COPY_INL_H_
