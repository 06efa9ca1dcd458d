// The peers the suite compares against, where they support a case: Eigen's tensor shuffle and
// oneDNN's reorder. Each is built when its package is found (IOTX_BUILD_PEERS).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

namespace iotx::bench {

// A prepared peer run: dst = transpose(src.reshape(shape), perm) on `threads` threads. Empty
// when the peer does not support the case (element size, rank).
using PeerRun = std::function<void(const void* src, void* dst)>;

PeerRun MakeEigenShuffle(std::span<const int64_t> shape, std::span<const int64_t> perm,
                         size_t elem_bytes, int threads);
PeerRun MakeOneDnnReorder(std::span<const int64_t> shape, std::span<const int64_t> perm,
                          size_t elem_bytes, int threads);

}  // namespace iotx::bench
