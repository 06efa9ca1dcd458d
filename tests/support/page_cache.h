// The page cache as the tests see it: how much of a file it holds, and dropping a file from it
// as if the file had never been read.
#pragma once

#include <string>

namespace iotx::test {

// Which of `path`'s pages the page cache holds, as a fraction (mincore of a mapping of our
// own), or -1 when that cannot be told (no such file, the mapping or mincore failed).
double CachedFraction(const std::string& path);

// Writes `path`'s dirty pages back (the kernel does not drop those) and drops all its pages
// from the page cache (POSIX_FADV_DONTNEED); false when a call failed.
bool DropFromPageCache(const std::string& path);

}  // namespace iotx::test
