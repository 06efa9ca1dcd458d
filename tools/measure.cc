#include "measure.h"

#include <sys/mman.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>

namespace iotx::measure {
namespace {
constexpr size_t kHugePage = size_t{2} << 20;
}  // namespace

void Buffer::Free::operator()(std::byte* p) const { std::free(p); }

Buffer::Buffer(size_t bytes, bool huge_pages, unsigned char fill) : size_(bytes) {
  const size_t rounded = (std::max<size_t>(bytes, 1) + kHugePage - 1) / kHugePage * kHugePage;
  auto* p = static_cast<std::byte*>(std::aligned_alloc(kHugePage, rounded));
  if (p == nullptr) throw std::bad_alloc();
  if (huge_pages) madvise(p, rounded, MADV_HUGEPAGE);
  std::memset(p, fill, rounded);
  data_.reset(p);
}

double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

void ParallelMemcpy(void* dst, const void* src, size_t bytes, int threads) {
  if (threads <= 1) {
    std::memcpy(dst, src, bytes);
    return;
  }
  // Parts of whole 4 KiB pages, so no two threads share a line.
  const size_t part = (bytes / static_cast<size_t>(threads) + 4095) / 4096 * 4096;
  tbb::parallel_for(0, threads, [&](int i) {
    const size_t begin = std::min(bytes, part * static_cast<size_t>(i));
    const size_t end = std::min(bytes, begin + part);
    std::memcpy(static_cast<std::byte*>(dst) + begin, static_cast<const std::byte*>(src) + begin,
                end - begin);
  }, tbb::simple_partitioner());
}

}  // namespace iotx::measure
