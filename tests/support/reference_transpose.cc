#include "support/reference_transpose.h"

#include <cstring>
#include <random>
#include <stdexcept>

namespace iotx::test {

std::vector<std::byte> ReferenceTranspose(const void* src, std::span<const int64_t> shape,
                                          std::span<const int64_t> perm, size_t elem_size) {
  const size_t rank = shape.size();
  if (perm.size() != rank) throw std::invalid_argument("perm rank differs from shape rank");
  size_t count = 1;
  for (int64_t d : shape) count *= static_cast<size_t>(d);
  std::vector<std::byte> dst(count * elem_size);
  if (count == 0) return dst;

  // Row-major strides of the source, in elements.
  std::vector<size_t> src_stride(rank, 1);
  for (size_t i = rank; i-- > 1;) src_stride[i - 1] = src_stride[i] * static_cast<size_t>(shape[i]);

  // Walk the destination in order; its axis k is the source's axis perm[k].
  std::vector<size_t> index(rank, 0);
  const auto* in = static_cast<const std::byte*>(src);
  for (size_t out = 0; out < count; ++out) {
    size_t offset = 0;
    for (size_t k = 0; k < rank; ++k) offset += index[k] * src_stride[static_cast<size_t>(perm[k])];
    std::memcpy(dst.data() + out * elem_size, in + offset * elem_size, elem_size);
    for (size_t k = rank; k-- > 0;) {
      if (++index[k] < static_cast<size_t>(shape[static_cast<size_t>(perm[k])])) break;
      index[k] = 0;
    }
  }
  return dst;
}

std::vector<std::byte> RandomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::byte> bytes(n);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t v = rng();
    std::memcpy(bytes.data() + i, &v, 8);
  }
  uint64_t v = rng();
  if (i < n) std::memcpy(bytes.data() + i, &v, n - i);  // n == 0: data() may be null
  return bytes;
}

}  // namespace iotx::test
