// Read-only memory mapping of a whole file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "files/direct_io.h"
#include "iotx/status.h"

namespace iotx::files {

// A regular file mapped read-only (MAP_PRIVATE). Immutable after Open and safe to share
// between threads; tensors read from it keep the shared_ptr to stay valid. The mapping is
// guarded (files/sigbus_guard.h): if the file is truncated while it is read, or a page cannot
// be read, the reads see zeros instead of the process dying of SIGBUS, and CheckIntact()
// reports it; check it before publishing anything made from the bytes.
class MappedFile {
 public:
  // Maps `path`. Empty files are fine (bytes() is empty). Errors: kIoOpen (missing, not a
  // regular file, no permission), kIoRead (the mapping failed); both name the path.
  static Expected<std::shared_ptr<const MappedFile>> Open(const std::filesystem::path& path);

  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const std::byte> bytes() const noexcept { return {data_, size_}; }
  size_t size() const noexcept { return size_; }
  // The path as given to Open(), for diagnostics.
  const std::string& path() const noexcept { return path_; }

  // kIoRead naming the file when what was read from the mapping cannot be trusted: a read
  // faulted (the file was truncated under us, or a page could not be read), or the file at
  // the path is still the one mapped but its size or modification time changed since Open.
  // Thread-safe.
  Status CheckIntact() const;

  // A new read-only descriptor (the caller closes it) of the file at path() when that is still
  // the file mapped, unchanged (device, inode, size, modification time); -1 otherwise. For
  // copies the kernel makes from file to file (AtomicFile::CopyAt).
  int OpenSameFile() const noexcept;

  // Copies `bytes` (a part of bytes()) into `into` (as large) with pread() from the file at
  // path() when it is still the file mapped, otherwise, and for whatever pread() does not give,
  // from the mapping (guarded as above: check CheckIntact() before publishing the copy). For a
  // tensor read once in full: the kernel copies through its own long-lived mapping of the page
  // cache, where reading through this one maps each 4 KiB page on first touch, which costs more
  // than the copy in virtual machines whose hypervisor builds those page tables (shadow paging:
  // ~1.7 us a page against ~0.16 us copied, docs/performance.md "Sources read, not mapped").
  void ReadInto(std::span<const std::byte> bytes, std::span<std::byte> into) const noexcept;

  // Room ReadIntoRoom needs beyond the bytes it reads.
  static constexpr size_t kRoomSlack = 2 * kDirectPhase;

  // Reads `bytes` (a part of bytes()) like ReadInto, into `room` (starting at a multiple of
  // kDirectPhase, at least bytes.size() + kRoomSlack long), and returns where in it they are.
  // When most of their pages are not in the page cache and the file system can, they are read
  // with O_DIRECT from the disk into `room` at the phase of their file offset: no copy, and
  // the page cache keeps what it held (a checkpoint of hundreds of GB read once would push
  // everything else out). Cached bytes, files whose cache Linux does not report to us (neither
  // ours nor writable: see CachedFraction), pieces under kDirectReadMinBytes and file systems
  // without direct I/O are read with pread() to the start of `room`.
  std::span<const std::byte> ReadIntoRoom(std::span<const std::byte> bytes,
                                          std::span<std::byte> room) const noexcept;
  static constexpr size_t kDirectReadMinBytes = size_t{1} << 20;

  // The fraction of `bytes` (a part of bytes()) in the page cache, when Linux reports it to
  // this process (see CachedFraction: the file is ours or writable by us); else nullopt.
  std::optional<double> CachedFractionOf(std::span<const std::byte> bytes) const noexcept;

  // What identifies the file's content when it was mapped.
  struct Identity {
    uint64_t device = 0, inode = 0, size = 0;
    int64_t mtime_ns = 0;
  };

 private:
  MappedFile(std::string path, const std::byte* data, size_t size, Identity identity)
      : path_(std::move(path)), data_(data), size_(size), identity_(identity) {}

  // Reads `bytes` with O_DIRECT into `room` at their file offset's phase; the returned span is
  // empty when direct I/O is not possible here (nothing was read then).
  std::span<const std::byte> ReadDirect(std::span<const std::byte> bytes,
                                        std::span<std::byte> room) const noexcept;

  std::string path_;
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
  Identity identity_;
  int guard_ = -1;  // the sigbus_guard slot, -1 when unguarded
};

}  // namespace iotx::files
