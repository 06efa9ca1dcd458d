// Whether two byte ranges share a byte; used where a permute-copy refuses
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

// The same for ranges of different lengths: [a, a + a_bytes) and [b, b + b_bytes) (a strided
// source and its contiguous destination).
inline bool RangesOverlap(const void* a, size_t a_bytes, const void* b, size_t b_bytes) {
  const auto pa = reinterpret_cast<uintptr_t>(a);
  const auto pb = reinterpret_cast<uintptr_t>(b);
  return pa < pb + b_bytes && pb < pa + a_bytes;
}

}  // namespace iotx
