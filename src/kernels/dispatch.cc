// The translation unit compiled once per SIMD target (Highway's foreach_target). It exports
// each target's RunItems; ChooseRunItems() dispatches once, at planning.
#include "kernels/dispatch.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/dispatch.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "kernels/run-inl.h"

HWY_BEFORE_NAMESPACE();
namespace iotx::kernels {
namespace HWY_NAMESPACE {

RunItemsFn GetRunItems() { return &RunItems; }
const char* GetTargetName() { return hwy::TargetName(HWY_TARGET); }
size_t GetVectorBytes() { return hwy::HWY_NAMESPACE::Lanes(DBytes()); }

}  // namespace HWY_NAMESPACE
}  // namespace iotx::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace iotx::kernels {

HWY_EXPORT(GetRunItems);
HWY_EXPORT(GetTargetName);
HWY_EXPORT(GetVectorBytes);

RunItemsFn ChooseRunItems() { return HWY_DYNAMIC_DISPATCH(GetRunItems)(); }

const char* ChosenTargetName() { return HWY_DYNAMIC_DISPATCH(GetTargetName)(); }

size_t ChosenVectorBytes() { return HWY_DYNAMIC_DISPATCH(GetVectorBytes)(); }

std::vector<int64_t> CompiledTargets() {
  std::vector<int64_t> targets;
  for (int64_t bits = hwy::SupportedTargets() & HWY_TARGETS; bits != 0; bits &= bits - 1) {
    targets.push_back(bits & -bits);
  }
  return targets;
}

}  // namespace iotx::kernels
#endif  // HWY_ONCE
