// Timing helpers shared by `iotx bench` and the benchmark suite (bench/): buffers as a runtime
// would allocate them for large tensors, a memcpy baseline split over threads, medians.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace iotx::measure {

// `bytes` (at least 1) aligned to 2 MiB, advised to use transparent huge pages when
// `huge_pages` (Linux madvise; the 4 KiB-page TLB would otherwise miss on almost every line
// a transpose touches far apart), filled with `fill` so every page is mapped before timing.
class Buffer {
 public:
  Buffer(size_t bytes, bool huge_pages, unsigned char fill);
  std::byte* data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(std::byte* p) const;
  };
  std::unique_ptr<std::byte, Free> data_;
  size_t size_;
};

double NowSeconds();
double Median(std::vector<double> values);

// glibc memcpy of `bytes`, cut into `threads` contiguous parts run on the calling oneTBB arena.
void ParallelMemcpy(void* dst, const void* src, size_t bytes, int threads);

}  // namespace iotx::measure
