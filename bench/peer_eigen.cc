// Eigen's tensor shuffle (unsupported/Eigen/CXX11/Tensor), ranks 1-6, 1/2/4/8-byte elements.
#define EIGEN_USE_THREADS
#include <unsupported/Eigen/CXX11/Tensor>

#include <array>
#include <memory>

#include "peers.h"

namespace iotx::bench {
namespace {

template <typename T, int R>
PeerRun MakeShuffle(std::span<const int64_t> shape, std::span<const int64_t> perm, int threads) {
  std::array<Eigen::Index, R> in_dims{}, out_dims{}, shuffle{};
  for (int i = 0; i < R; ++i) {
    in_dims[i] = shape[i];
    shuffle[i] = perm[i];
    out_dims[i] = shape[static_cast<size_t>(perm[i])];
  }
  // The device keeps a raw pointer to its pool: own both together.
  struct Threads {
    explicit Threads(int n) : pool(n), device(&pool, n) {}
    Eigen::ThreadPool pool;
    Eigen::ThreadPoolDevice device;
  };
  std::shared_ptr<Threads> pool = threads > 1 ? std::make_shared<Threads>(threads) : nullptr;
  return [pool, in_dims, out_dims, shuffle](const void* src, void* dst) {
    Eigen::TensorMap<const Eigen::Tensor<T, R, Eigen::RowMajor>> in(static_cast<const T*>(src), in_dims);
    Eigen::TensorMap<Eigen::Tensor<T, R, Eigen::RowMajor>> out(static_cast<T*>(dst), out_dims);
    if (pool) {
      out.device(pool->device) = in.shuffle(shuffle);
    } else {
      out = in.shuffle(shuffle);
    }
  };
}

template <typename T>
PeerRun MakeForRank(std::span<const int64_t> shape, std::span<const int64_t> perm, int threads) {
  switch (shape.size()) {
    case 1: return MakeShuffle<T, 1>(shape, perm, threads);
    case 2: return MakeShuffle<T, 2>(shape, perm, threads);
    case 3: return MakeShuffle<T, 3>(shape, perm, threads);
    case 4: return MakeShuffle<T, 4>(shape, perm, threads);
    case 5: return MakeShuffle<T, 5>(shape, perm, threads);
    case 6: return MakeShuffle<T, 6>(shape, perm, threads);
    default: return {};
  }
}

}  // namespace

PeerRun MakeEigenShuffle(std::span<const int64_t> shape, std::span<const int64_t> perm,
                         size_t elem_bytes, int threads) {
  // Only the size matters to a shuffle; integer types of that size keep it a plain move.
  switch (elem_bytes) {
    case 1: return MakeForRank<int8_t>(shape, perm, threads);
    case 2: return MakeForRank<uint16_t>(shape, perm, threads);
    case 4: return MakeForRank<float>(shape, perm, threads);
    case 8: return MakeForRank<double>(shape, perm, threads);
    default: return {};
  }
}

}  // namespace iotx::bench
