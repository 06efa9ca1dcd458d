// Moving one tensor into its device layout with the parallel kernel (never a naive loop).
#pragma once

#include <cstddef>
#include <span>

#include "iotx/spec.h"
#include "iotx/status.h"

namespace iotx::producer {

// dst = np.ascontiguousarray(np.transpose(src.reshape(spec->reshape), spec->transpose)) for
// elements of `element_size` bytes, or a plain copy when `spec` is null. `src` and `dst` must
// both hold exactly product(reshape) * element_size bytes (for a copy: the same size), else
// kBufferSize. Runs MakePlan + Execute: large tensors use every core of the calling oneTBB
// arena, and outputs far larger than the cache are written with streaming stores.
Status PermuteCopy(const TransposeSpec* spec, std::span<const std::byte> src, size_t element_size,
                   std::span<std::byte> dst);

}  // namespace iotx::producer
