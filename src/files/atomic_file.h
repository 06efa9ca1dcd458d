// Writing a file so that its final name only ever holds a complete file.
//
// The bytes go to a temporary file beside the final path (created with O_EXCL under a unique
// name), which is fsynced, renamed over the final name and followed by an fsync of the
// directory. A process killed at any point leaves either the old file or the new one under
// the final name, never a truncated one (a stray ".NAME.tmp-*" may remain after a kill).
//
// Three ways to produce the content: stream it with Write(); Reserve() its size and WriteAt()
// pieces in any order (pwrite, from any thread but one at a time per file) — how the producer's
// pipeline writes multi-GiB tensors from reusable buffers; or Map() the whole file and fill the
// mapping in place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>

#include "iotx/status.h"

namespace iotx::files {

class MappedFile;

// The longest final name an atomic write can take: its temporary adds "." and a suffix of at
// most 63 bytes (".tmp-<pid>-<counter>-<16 hex digits>"), and NAME_MAX is 255 on Linux file
// systems. (schema's input-name check keeps the same 64 bytes of room.)
inline constexpr size_t kMaxAtomicFileNameBytes = 255 - 64;

// What Commit() promises about the data once the final name holds it.
enum class Durability {
  // fsync of the file before the rename and of the directory after it: the file survives a
  // crash of the machine, not only of the process.
  kDurable,
  // fsync of the file before the rename; the directory's fsync is left to the caller, who
  // renames many files into a few directories and syncs each directory once after them
  // (SyncDirectory). The file is complete under its name after a crash, but the name itself
  // may be lost until the directory is synced.
  kDurableExceptDirectory,
  // Renamed into place without waiting for the disk: complete for every process from the
  // moment it appears, written back by the kernel later (what `cp` leaves behind).
  kNoSync,
};

struct AtomicFileOptions {
  // When not empty, the final path (its directory and, if it is a symlink, the link's target)
  // must resolve inside this directory, else kPathUnsafe and nothing is created.
  std::filesystem::path root;
};

// A file being written under a temporary name. Move-only. Not thread-safe.
class AtomicFile {
 public:
  // Creates the temporary file beside `path` (mode 0666 minus the umask). Errors: kPathUnsafe,
  // kNotADirectory (bad root), kIoWrite (the directory does not exist or is not writable, or a
  // directory is at `path`), kNotRegularFile (a device, FIFO or socket is at `path`, or it
  // leads through a process's descriptors like /dev/stdout: CheckReplaceable).
  static Expected<AtomicFile> Create(const std::filesystem::path& path,
                                     const AtomicFileOptions& options = {});

  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile& operator=(AtomicFile&& other) noexcept;
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  // Without Commit(): unmaps, closes and removes the temporary file; the final path is untouched.
  ~AtomicFile();

  // Appends `bytes` to the file. Not allowed after Map().
  Status Write(std::span<const std::byte> bytes);
  Status Write(std::string_view bytes);

  // Sizes the file to exactly `size` bytes with the disk space allocated (fallocate, or a
  // plain size change where the file system lacks it), so a full disk is an error here and not
  // in the middle of the writes. Only on a file nothing was written to, and only once; then
  // WriteAt fills it.
  Status Reserve(uint64_t size);

  // Writes `bytes` at `offset` (pwrite), inside the reserved size. Not after Map().
  Status WriteAt(uint64_t offset, std::span<const std::byte> bytes);
  Status WriteAt(uint64_t offset, std::string_view bytes);

  // Writes `bytes`, a part of `source`'s mapping, at `offset`, copied from file to file inside
  // the kernel (copy_file_range, as cp copies): the bytes never pass through user memory, and
  // a file system that shares extents may not copy them at all. Where the kernel cannot copy
  // between the two files (another file system, a source replaced since it was mapped), they
  // are written from the mapping as WriteAt does. Not after Map().
  Status CopyAt(uint64_t offset, const MappedFile& source, std::span<const std::byte> bytes);

  // Sizes the file to exactly `size` bytes and maps all of it writable (an empty span for 0).
  // The disk space is reserved here, so a full disk is an error now and never a SIGBUS while
  // the mapping is filled. Only on a file nothing was written to, and only once. The span is
  // valid until Commit() or destruction.
  Expected<std::span<std::byte>> Map(uint64_t size);

  // Flushes the data to disk, renames the file over the final path and syncs the directory
  // (kDurableExceptDirectory: not the directory; kNoSync: only the rename). On failure the
  // temporary file is removed and the final path left as it was (unless the rename already
  // happened: then only the directory sync failed and the error says so). The object is spent
  // either way.
  Status Commit(Durability durability = Durability::kDurable);

  // The final path, as given to Create().
  const std::filesystem::path& path() const noexcept { return path_; }
  // The temporary file's path (in the same directory as path()).
  const std::filesystem::path& temp_path() const noexcept { return temp_path_; }
  // The temporary file's descriptor (-1 once spent), for a writer that streams into it
  // (DirectAppender); the file keeps owning it.
  int descriptor() const noexcept { return fd_; }

 private:
  AtomicFile(std::filesystem::path path, std::filesystem::path temp_path, int fd)
      : path_(std::move(path)), temp_path_(std::move(temp_path)), fd_(fd) {}
  // Unmaps, closes and unlinks the temporary file (if any).
  void Discard() noexcept;
  Error WriteError(std::string_view what, int errnum) const;

  std::filesystem::path path_;
  std::filesystem::path temp_path_;
  int fd_ = -1;
  std::byte* map_ = nullptr;
  size_t map_size_ = 0;
  bool mapped_ = false;
  bool written_ = false;
  uint64_t reserved_ = 0;
  bool has_reserved_ = false;
};

// fsync of the directory `dir` (empty: the current one), making the renames into it durable.
// kIoWrite on failure, naming `renamed` (the file renamed into it; `dir` when empty): "...
// renamed into place, but syncing directory '<dir>' failed: <reason>".
Status SyncDirectory(const std::filesystem::path& dir, const std::filesystem::path& renamed = {});

// Writes `bytes` to `path` atomically (see AtomicFile). Errors are kIoWrite with the path and
// the system's reason ("No space left on device"), or those of AtomicFile::Create.
Status WriteFileAtomically(const std::filesystem::path& path, std::span<const std::byte> bytes,
                           const AtomicFileOptions& options = {});
Status WriteFileAtomically(const std::filesystem::path& path, std::string_view bytes,
                           const AtomicFileOptions& options = {});

}  // namespace iotx::files
