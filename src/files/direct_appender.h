// Writing a file front to back with O_DIRECT: from the caller's memory to the device, without
// a copy into the page cache.
//
// For an output that is fsynced anyway (a durable multi-GiB checkpoint), the page cache adds a
// copy of every byte (the system time of a buffered write) and pushes whatever else the machine
// had cached out of memory; the fsync then waits for the same writes to reach the disk. Direct
// writes skip both (docs/performance.md, "iotx apply", has the measurement).
//
// O_DIRECT wants the file offset, the length and the memory address of every write aligned;
// statx (STATX_DIOALIGN) says by how much, per file, and says nothing where the file system
// cannot do it (then Open returns null and the caller writes through the page cache). Bytes
// reach the file in order. What does not fill a whole block yet waits in a small aligned
// staging buffer for the bytes after it. A caller that places its data in memory at the file
// position's phase (AppendInPlace) has every whole block written straight from its memory;
// other bytes are copied through the staging buffer (Append).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "files/atomic_file.h"
#include "files/direct_io.h"
#include "iotx/status.h"

namespace iotx::files {

class DirectAppender {
 public:
  // AppendInPlace wants the data at an address congruent to the file position modulo this.
  // The alignments Linux file systems report divide it; a file system asking for more is
  // written through the page cache.
  static constexpr size_t kPhase = kDirectPhase;
  // AppendInPlace copies pieces smaller than this into the staging buffer like Append: many
  // small tensors then leave in one large write instead of a synchronous write each.
  static constexpr size_t kInPlaceMinBytes = size_t{1} << 20;

  // An appender writing `file` from offset 0, or null when its file system cannot do direct
  // I/O at alignments dividing kPhase. `file` must outlive the appender and get no other
  // writes until Finish(). Errors: kIoWrite (the descriptor refused O_DIRECT after statx
  // allowed it), kOutOfMemory (the staging buffer).
  static Expected<std::unique_ptr<DirectAppender>> Open(AtomicFile& file);

  ~DirectAppender();
  DirectAppender(const DirectAppender&) = delete;
  DirectAppender& operator=(const DirectAppender&) = delete;

  // Appends a copy of `bytes`.
  Status Append(std::span<const std::byte> bytes);

  // Appends room[head, head + size). `room` must start at a multiple of kPhase and `head` be
  // congruent to position() modulo kPhase; the bytes before `head` are overwritten with the
  // staged ones (the start of the block the data begins in), so the whole blocks go to the
  // disk from `room` itself (from kInPlaceMinBytes on; smaller pieces are copied).
  Status AppendInPlace(std::span<std::byte> room, size_t head, size_t size);

  // Writes what is still staged (the last block padded, then the file cut back to position())
  // and turns O_DIRECT off. The file's fsync (AtomicFile::Commit) makes it durable.
  Status Finish();

  // Bytes appended so far.
  uint64_t position() const noexcept { return position_; }
  // The alignment in force (the larger of the file system's memory and offset alignments).
  size_t alignment() const noexcept { return align_; }

 private:
  DirectAppender(AtomicFile& file, size_t align, std::byte* staging);
  // Writes staging_[0, whole blocks of staged_) and keeps the rest at its front.
  Status FlushWholeBlocks();

  AtomicFile& file_;
  size_t align_;
  std::byte* staging_;  // kStagingBytes, aligned to kPhase
  size_t staged_ = 0;   // bytes in staging_, which start at file offset position_ - staged_
  uint64_t position_ = 0;
};

}  // namespace iotx::files
