// The naive reference every kernel and runtime test compares against: one index computation
// per element, written for obviousness, sharing no code with src/kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace iotx::test {

// dst = ascontiguousarray(transpose(src.reshape(shape), perm)) for elements of elem_size bytes.
std::vector<std::byte> ReferenceTranspose(const void* src, std::span<const int64_t> shape,
                                          std::span<const int64_t> perm, size_t elem_size);

// Bytes 0..n-1 of a deterministic pseudo-random pattern (seeded), for test inputs.
std::vector<std::byte> RandomBytes(size_t n, uint64_t seed);

}  // namespace iotx::test
