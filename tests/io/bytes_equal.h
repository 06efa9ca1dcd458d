// Byte comparison for tests that also holds for empty views (whose data() may be null, which
// memcmp may not be given).
#pragma once

#include <cstddef>
#include <cstring>
#include <span>

namespace iotx::test {

inline bool BytesEqual(std::span<const std::byte> a, const void* b, size_t size) {
  return a.size() == size && (size == 0 || std::memcmp(a.data(), b, size) == 0);
}

}  // namespace iotx::test
