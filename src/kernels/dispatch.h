// The one door into the per-target kernels (Highway dynamic dispatch, skeleton pattern).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/nest.h"

namespace iotx::kernels {

// Runs items [begin, end) of `nest` from src to dst. Thread-safe; allocates nothing.
using RunItemsFn = void (*)(const Nest& nest, const uint8_t* src, uint8_t* dst, int64_t begin,
                            int64_t end);

// The best compiled kernel for this CPU, resolved by one dynamic dispatch (honours
// hwy::SetSupportedTargetsForTest, so tests can pin each target before planning).
RunItemsFn ChooseRunItems();
// Name of the target ChooseRunItems() would pick now ("AVX3", "AVX2", "SSE4", "EMU128", ...).
const char* ChosenTargetName();
// Bytes of the widest vector the chosen target's kernels use (16, 32 or 64).
size_t ChosenVectorBytes();
// Every target compiled into the kernels that this CPU supports, best first (hwy bit values).
std::vector<int64_t> CompiledTargets();

}  // namespace iotx::kernels
