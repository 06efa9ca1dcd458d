#include "files/page_hints.h"

#include <sys/mman.h>
#include <tbb/parallel_for.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>

namespace iotx::files {
namespace {

// Populating is split into chunks of this many bytes (a multiple of any page size), enough
// to keep each madvise call's overhead negligible.
constexpr size_t kPopulateChunk = size_t{4} << 20;

// The largest page-aligned range inside `bytes` (empty when there is none), so advice never
// reaches a page shared with a neighbouring tensor or the file header.
std::span<std::byte> WholePages(std::span<const std::byte> bytes) {
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(bytes.data());
  const uintptr_t end = begin + bytes.size();
  const uintptr_t first = (begin + page - 1) / page * page;
  const uintptr_t last = end / page * page;
  if (bytes.empty() || first >= last) return {};
  return {reinterpret_cast<std::byte*>(first), last - first};
}

// madvise on the whole pages of `bytes`; true when it succeeded (or there was nothing to do).
bool Advise(std::span<const std::byte> bytes, int advice) noexcept {
  std::span<std::byte> pages = WholePages(bytes);
  return pages.empty() || madvise(pages.data(), pages.size(), advice) == 0;
}

}  // namespace

// One madvise per tensor instead of a page fault per 4 KiB page: 262144 faults per GiB on each
// side, taken inside the kernel's parallel loop otherwise. On the 1 GiB benchmark checkpoint
// (docs/performance.md), 8 alternating runs gave a median of 1.5 s with both hints and 2.6 s
// without; the shared 2-core VM it ran on is noisy enough that another batch came out the
// other way, so the case rests on the fault count. Kernels before 5.14 lack MADV_POPULATE_*:
// reads then get readahead only.
void WillRead(std::span<const std::byte> bytes) noexcept {
#ifdef MADV_POPULATE_READ
  if (Advise(bytes, MADV_POPULATE_READ)) return;
#endif
  Advise(bytes, MADV_WILLNEED);
}

void WillWrite(std::span<std::byte> bytes) noexcept {
#ifdef MADV_POPULATE_WRITE
  // The kernel zeroes every page it populates (the file's blocks are unwritten): 60-80% of
  // `iotx apply`'s CPU samples on the 1 GiB benchmark checkpoint. Split across the arena's
  // threads it runs in parallel: 8 alternating runs on 2 cores took a median 2.0 s instead
  // of 4.4 s.
  const std::span<std::byte> pages = WholePages(bytes);
  const size_t chunks = (pages.size() + kPopulateChunk - 1) / kPopulateChunk;
  tbb::parallel_for(size_t{0}, chunks, [pages](size_t i) {
    const size_t begin = i * kPopulateChunk;
    madvise(pages.data() + begin, std::min(kPopulateChunk, pages.size() - begin),
            MADV_POPULATE_WRITE);
  });
#else
  (void)bytes;
#endif
}

void ReleaseFilePages(std::span<const std::byte> bytes) noexcept { Advise(bytes, MADV_DONTNEED); }

}  // namespace iotx::files
