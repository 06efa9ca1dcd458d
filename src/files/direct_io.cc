#include "files/direct_io.h"

#include <fcntl.h>
// <linux/stat.h>, not <sys/stat.h>: glibc 2.36's struct statx lacks the direct I/O fields.
#include <linux/stat.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

namespace iotx::files {

size_t DirectIoAlignment(int fd) noexcept {
  struct statx stx = {};
  if (syscall(SYS_statx, fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) != 0) return 0;
  // Zero alignments: the file system answered, but does not do direct I/O on this file.
  if ((stx.stx_mask & STATX_DIOALIGN) == 0 || stx.stx_dio_mem_align == 0 ||
      stx.stx_dio_offset_align == 0) {
    return 0;
  }
  const size_t align = std::max<size_t>(stx.stx_dio_mem_align, stx.stx_dio_offset_align);
  if (!std::has_single_bit(align) || align > kDirectPhase) return 0;
  return align;
}

std::optional<double> CachedFraction(std::span<const std::byte> bytes, bool trusted) noexcept {
  if (!trusted || bytes.empty()) return std::nullopt;
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t first = reinterpret_cast<uintptr_t>(bytes.data()) / page * page;
  const uintptr_t end = reinterpret_cast<uintptr_t>(bytes.data() + bytes.size());
  const size_t pages = (end - first + page - 1) / page;
  try {
    std::vector<unsigned char> resident(pages);
    if (mincore(reinterpret_cast<void*>(first), end - first, resident.data()) != 0) {
      return std::nullopt;
    }
    const auto cached = std::count_if(resident.begin(), resident.end(),
                                      [](unsigned char c) { return (c & 1) != 0; });
    return static_cast<double>(cached) / static_cast<double>(pages);
  } catch (...) {  // the vector: no memory, no answer
    return std::nullopt;
  }
}

}  // namespace iotx::files
