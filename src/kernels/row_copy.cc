// The row copy's translation unit (Strategy::kRowCopy), compiled once per SIMD target
// (Highway foreach_target): the innermost run stayed in place, so every element is a
// contiguous row of elem_bytes bytes moved to its new place.
#include "kernels/dispatch.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/row_copy.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels/row_copy-inl.h"
#include "kernels/run-inl.h"

HWY_BEFORE_NAMESPACE();
namespace iotx::kernels {
namespace HWY_NAMESPACE {

HWY_NOINLINE void RunRowCopy(const Nest& nest, const uint8_t* src, uint8_t* dst, int64_t begin,
                             int64_t end) {
  const bool streaming = nest.streaming;
  const int64_t ss = nest.src_row_stride;
  const int64_t ds = nest.dst_row_stride;
  const auto elem = static_cast<size_t>(nest.elem_bytes);
  ForEachItem(nest, src, dst, begin, end, [&](const uint8_t* s, uint8_t* t, const ItemExtents& ext) {
    RunLoops(nest, ext, s, t, [&](const uint8_t* s2, uint8_t* t2, int64_t rows, int64_t cols) {
      RowCopyStrip(s2, ss, t2, ds, static_cast<size_t>(rows), static_cast<size_t>(cols), elem,
                   streaming);
    });
  });
  if (streaming) hwy::FlushStream();
}

RunItemsFn GetRowCopyRun() { return &RunRowCopy; }

}  // namespace HWY_NAMESPACE
}  // namespace iotx::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace iotx::kernels {

HWY_EXPORT(GetRowCopyRun);

RunItemsFn ChooseRowCopyRun() { return HWY_DYNAMIC_DISPATCH(GetRowCopyRun)(); }

}  // namespace iotx::kernels
#endif  // HWY_ONCE
