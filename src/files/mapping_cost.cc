#include "files/mapping_cost.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <memory>

namespace iotx::files {
namespace {

constexpr size_t kProbeBytes = size_t{1} << 20;
constexpr size_t kPage = 4096;

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

bool Measure() noexcept {
  const int fd = memfd_create("iotx-mapping-probe", MFD_CLOEXEC);
  if (fd < 0) return false;
  std::unique_ptr<std::byte[]> buffer(new (std::nothrow) std::byte[kProbeBytes]);
  bool cheaper = false;
  if (buffer != nullptr && ftruncate(fd, kProbeBytes) == 0) {
    std::fill_n(buffer.get(), kProbeBytes, std::byte{1});
    // The file's pages exist before either is timed (as a cached source's do), and the copy's
    // destination is touched (as reused source buffers are).
    if (pwrite(fd, buffer.get(), kProbeBytes, 0) == static_cast<ssize_t>(kProbeBytes) &&
        pread(fd, buffer.get(), kProbeBytes, 0) == static_cast<ssize_t>(kProbeBytes)) {
      // Best of two each: the first pread warmed the copy's path, a mapping is new every time.
      double mapped = 1e30, copied = 1e30;
      for (int round = 0; round < 2; ++round) {
        void* map = mmap(nullptr, kProbeBytes, PROT_READ, MAP_SHARED, fd, 0);
        if (map == MAP_FAILED) break;
        const auto t0 = std::chrono::steady_clock::now();
        const auto* bytes = static_cast<const volatile std::byte*>(map);
        std::byte sum{0};
        for (size_t at = 0; at < kProbeBytes; at += kPage) sum ^= bytes[at];
        mapped = std::min(mapped, Seconds(t0));
        munmap(map, kProbeBytes);
        buffer[0] = sum;  // keeps the reads
        const auto t1 = std::chrono::steady_clock::now();
        if (pread(fd, buffer.get(), kProbeBytes, 0) != static_cast<ssize_t>(kProbeBytes)) break;
        copied = std::min(copied, Seconds(t1));
      }
      // Both timed, or the probe did not run (a failed mmap or pread leaves its side unset).
      cheaper = mapped < 1e30 && copied < 1e30 && mapped < copied;
    }
  }
  close(fd);
  return cheaper;
}

}  // namespace

bool MappingCheaperThanCopy() noexcept {
  static const bool cheaper = Measure();
  return cheaper;
}

}  // namespace iotx::files
