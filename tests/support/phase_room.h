// Memory for direct I/O in the tests: a heap buffer starting at a multiple of
// files::kDirectPhase, with `head` bytes before `size` bytes of data. The room
// DirectAppender::AppendInPlace writes from and MappedFile::ReadIntoRoom reads into.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <span>

#include "files/direct_io.h"

namespace iotx::test {

struct PhaseRoom {
  static constexpr size_t kPhase = files::kDirectPhase;

  PhaseRoom(size_t head, size_t size)
      : head(head),
        size(size),
        memory(static_cast<std::byte*>(
            std::aligned_alloc(kPhase, (head + size + kPhase) / kPhase * kPhase))) {}
  // Everything: the head, then the data.
  std::span<std::byte> all() const { return {memory.get(), head + size}; }
  // Where the data starts.
  std::byte* data() const { return memory.get() + head; }

  struct FreeDeleter {
    void operator()(void* p) const { std::free(p); }
  };
  size_t head;
  size_t size;
  std::unique_ptr<std::byte, FreeDeleter> memory;
};

}  // namespace iotx::test
