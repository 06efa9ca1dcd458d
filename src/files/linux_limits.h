// Limits of the Linux calls the file layer makes, shared by its writers and path walks.
#pragma once

#include <cstddef>

namespace iotx::files {

// read(2) and write(2) move at most 0x7ffff000 bytes per call on Linux; larger transfers go
// in pieces of this size, well below.
inline constexpr size_t kMaxWriteChunk = size_t{1} << 30;

// Linux gives up after 40 symlinks in one lookup (MAXSYMLINKS); so do our own walks.
inline constexpr int kMaxSymlinkHops = 40;

}  // namespace iotx::files
