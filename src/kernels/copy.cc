// The contiguous copy's translation unit (Strategy::kCopy), compiled once per SIMD target
// (Highway foreach_target): each item is a byte range, copied by the C library or, with
// cache-bypassing stores, in whole aligned lines. Also reports the dispatch's target and
// vector width for the planner.
#include "kernels/dispatch.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/copy.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <cstring>

#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels/copy-inl.h"
#include "kernels/run-inl.h"

HWY_BEFORE_NAMESPACE();
namespace iotx::kernels {
namespace HWY_NAMESPACE {

HWY_NOINLINE void RunCopy(const Nest& nest, const uint8_t* src, uint8_t* dst, int64_t begin,
                          int64_t end) {
  const bool streaming = nest.streaming;
  ForEachItem(nest, src, dst, begin, end, [&](const uint8_t* s, uint8_t* t, const ItemExtents& ext) {
    if (streaming) {
      StreamBytes(s, t, static_cast<size_t>(ext.bytes));
    } else {
      std::memcpy(t, s, static_cast<size_t>(ext.bytes));
    }
  });
  if (streaming) hwy::FlushStream();
}

RunItemsFn GetCopyRun() { return &RunCopy; }
const char* GetTargetName() { return hwy::TargetName(HWY_TARGET); }
size_t GetVectorBytes() { return hn::Lanes(DBytes()); }

}  // namespace HWY_NAMESPACE
}  // namespace iotx::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace iotx::kernels {

HWY_EXPORT(GetCopyRun);
HWY_EXPORT(GetTargetName);
HWY_EXPORT(GetVectorBytes);

RunItemsFn ChooseCopyRun() { return HWY_DYNAMIC_DISPATCH(GetCopyRun)(); }

const char* ChosenTargetName() { return HWY_DYNAMIC_DISPATCH(GetTargetName)(); }

size_t ChosenVectorBytes() { return HWY_DYNAMIC_DISPATCH(GetVectorBytes)(); }

}  // namespace iotx::kernels
#endif  // HWY_ONCE
