#include "support/page_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <vector>

namespace iotx::test {

double CachedFraction(const std::string& path) {
  std::error_code ec;
  const auto size = static_cast<size_t>(std::filesystem::file_size(path, ec));
  if (ec || size == 0) return -1;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  void* map = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (map == MAP_FAILED) return -1;
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> cached((size + page - 1) / page);
  const int rc = mincore(map, size, cached.data());
  munmap(map, size);
  if (rc != 0) return -1;
  return static_cast<double>(std::count_if(cached.begin(), cached.end(),
                                           [](unsigned char c) { return (c & 1) != 0; })) /
         static_cast<double>(cached.size());
}

bool DropFromPageCache(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool dropped = fdatasync(fd) == 0 && posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0;
  close(fd);
  return dropped;
}

}  // namespace iotx::test
