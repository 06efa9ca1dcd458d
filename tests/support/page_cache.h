// The page cache as the tests see it: how much of a file it holds, and dropping a file from it
// as if the file had never been read.
#pragma once

#include <cstdint>
#include <string>

namespace iotx::test {

// Which of the pages of `path` (or of its `length` bytes from `offset`; 0: to the end) the page
// cache holds, as a fraction (mincore of a mapping of our own), or -1 when that cannot be told
// (no such file, an empty range, the mapping or mincore failed).
double CachedFraction(const std::string& path, uint64_t offset = 0, uint64_t length = 0);

// Writes `path`'s dirty pages back (the kernel does not drop those) and drops its pages (or
// those of its `length` bytes from `offset`; 0: to the end) from the page cache
// (POSIX_FADV_DONTNEED); false when a call failed.
bool DropFromPageCache(const std::string& path, uint64_t offset = 0, uint64_t length = 0);

// Reads `length` bytes of `path` from `offset` into the page cache without the kernel's
// readahead (POSIX_FADV_RANDOM), so that no page past them is cached or marked for
// asynchronous readahead; false when a call failed.
bool CacheWithoutReadahead(const std::string& path, uint64_t offset, uint64_t length);

}  // namespace iotx::test
