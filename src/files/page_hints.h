// Advice to the kernel about the pages of a memory-mapped tensor, so a whole checkpoint can
// stream through mappings with the resident set staying near one tensor.
//
// Every function is a hint: failures are ignored (the data is the same either way), and only
// the whole pages inside the range are touched, never a neighbour's.
#pragma once

#include <cstddef>
#include <span>

namespace iotx::files {

// The source is about to be read once: map all of its pages now (MADV_POPULATE_READ; where
// the kernel lacks it, start readahead with MADV_WILLNEED).
void WillRead(std::span<const std::byte> bytes) noexcept;

// The destination, a writable file mapping, is about to be filled: fault all of its pages in
// (MADV_POPULATE_WRITE, in 4 MiB chunks spread over the calling oneTBB arena's threads)
// instead of one fault per 4 KiB page inside the kernel.
void WillWrite(std::span<std::byte> bytes) noexcept;

// Drops the pages of a *file* mapping from this process (MADV_DONTNEED). The data stays in
// the file and the page cache (dirty pages of a shared mapping are written back as usual), so
// this only lowers the resident set. Never call it on heap or anonymous memory: there it
// would discard the contents.
void ReleaseFilePages(std::span<const std::byte> bytes) noexcept;

}  // namespace iotx::files
