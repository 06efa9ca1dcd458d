// What direct I/O (O_DIRECT) needs to know about a file, shared by the direct writer
// (direct_appender.h) and the direct reads of MappedFile::ReadIntoRoom.
#pragma once

#include <cstddef>
#include <optional>
#include <span>

namespace iotx::files {

// Every direct transfer of iotx starts at a file offset and a memory address with the same
// remainder modulo this; the alignments Linux file systems report divide it.
inline constexpr size_t kDirectPhase = 4096;

// The direct I/O alignment of `fd`'s file (the larger of its memory and offset alignments,
// statx STATX_DIOALIGN), or 0 when the file system reports none or one that does not divide
// kDirectPhase.
size_t DirectIoAlignment(int fd) noexcept;

// The fraction of the pages under `bytes` (a part of a file mapping) that the page cache holds
// (mincore), or nullopt when it cannot be told: Linux answers only for the pages this process
// has mapped unless it may write the file or owns it (`trusted` false), and the call can fail.
std::optional<double> CachedFraction(std::span<const std::byte> bytes, bool trusted) noexcept;

}  // namespace iotx::files
