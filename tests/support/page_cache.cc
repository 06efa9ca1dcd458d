#include "support/page_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <vector>

namespace iotx::test {

double CachedFraction(const std::string& path, uint64_t offset, uint64_t length) {
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(path, ec);
  if (ec || offset >= size) return -1;
  if (length == 0 || length > size - offset) length = size - offset;
  const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t start = offset / page * page;  // mmap's offset: a multiple of the page
  const auto span = static_cast<size_t>(offset + length - start);
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  void* map = mmap(nullptr, span, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(start));
  close(fd);
  if (map == MAP_FAILED) return -1;
  std::vector<unsigned char> cached((span + page - 1) / page);
  const int rc = mincore(map, span, cached.data());
  munmap(map, span);
  if (rc != 0) return -1;
  return static_cast<double>(std::count_if(cached.begin(), cached.end(),
                                           [](unsigned char c) { return (c & 1) != 0; })) /
         static_cast<double>(cached.size());
}

bool DropFromPageCache(const std::string& path, uint64_t offset, uint64_t length) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool dropped =
      fdatasync(fd) == 0 && posix_fadvise(fd, static_cast<off_t>(offset),
                                          static_cast<off_t>(length), POSIX_FADV_DONTNEED) == 0;
  close(fd);
  return dropped;
}

bool CacheWithoutReadahead(const std::string& path, uint64_t offset, uint64_t length) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool read_all = posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM) == 0;
  std::vector<char> buffer(size_t{1} << 20);
  for (uint64_t at = offset; read_all && at < offset + length;) {
    const size_t want =
        static_cast<size_t>(std::min<uint64_t>(buffer.size(), offset + length - at));
    const ssize_t got = pread(fd, buffer.data(), want, static_cast<off_t>(at));
    read_all = got > 0;
    if (read_all) at += static_cast<uint64_t>(got);
  }
  close(fd);
  return read_all;
}

}  // namespace iotx::test
