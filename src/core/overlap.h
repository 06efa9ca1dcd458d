// Whether two byte ranges of the same length share a byte; used where a permute-copy refuses
// aliasing buffers (the kernel's Execute and the runtime's argument checks).
#pragma once

#include <cstddef>
#include <cstdint>

namespace iotx {

inline bool RangesOverlap(const void* a, const void* b, size_t bytes) {
  const auto pa = reinterpret_cast<uintptr_t>(a);
  const auto pb = reinterpret_cast<uintptr_t>(b);
  return pa < pb + bytes && pb < pa + bytes;
}

}  // namespace iotx
