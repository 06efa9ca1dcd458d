#include "files/atomic_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <system_error>
#include <utility>

#include "files/linux_limits.h"
#include "files/mapped_file.h"
#include "files/output_target.h"
#include "files/path_safety.h"
#include "files/system_error.h"

namespace iotx::files {
namespace {

// Attempts at finding an unused temporary name before giving up; each name carries 64 random
// bits, so a second attempt is already rare.
constexpr int kTempNameAttempts = 16;


// ".NAME.tmp-<pid>-<counter><random>": hidden, beside the target, unique per process and call.
std::string TempName(const std::string& file_name) {
  static std::atomic<uint64_t> counter{0};
  thread_local std::mt19937_64 rng{std::random_device{}()};
  char suffix[64];
  snprintf(suffix, sizeof(suffix), ".tmp-%ld-%llu-%016llx", static_cast<long>(getpid()),
           static_cast<unsigned long long>(counter.fetch_add(1)),
           static_cast<unsigned long long>(rng()));
  return "." + file_name + suffix;
}

Status CheckRoot(const std::filesystem::path& path, const std::filesystem::path& root) {
  // The directory the temporary file and the rename happen in must be inside the root, and so
  // must whatever a symlink at the final name points to.
  std::filesystem::path dir = path.parent_path().empty() ? "." : path.parent_path();
  IOTX_RETURN_IF_ERROR(ResolveInside(root, dir));
  auto resolved = ResolveInside(root, path);
  if (!resolved) {
    Error error = std::move(resolved).error();
    if (error.code == ErrorCode::kPathUnsafe) {
      error.message = "refusing to write: " + error.message;
    }
    return Fail(std::move(error));
  }
  return Ok();
}

}  // namespace

Expected<AtomicFile> AtomicFile::Create(const std::filesystem::path& path,
                                        const AtomicFileOptions& options) {
  std::string file_name = path.filename().string();
  if (file_name.empty() || file_name == "." || file_name == "..") {
    return Fail(Error(ErrorCode::kIoWrite, "not a file name").InFile(path.string()));
  }
  if (!options.root.empty()) IOTX_RETURN_IF_ERROR(CheckRoot(path, options.root));
  // The rename at Commit() replaces whatever is at the final name: only ever a regular file.
  IOTX_RETURN_IF_ERROR(CheckReplaceable(path));

  std::filesystem::path dir = path.parent_path();
  for (int attempt = 0; attempt < kTempNameAttempts; ++attempt) {
    std::filesystem::path temp_path = dir / TempName(file_name);
    int fd = open(temp_path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) return AtomicFile(path, std::move(temp_path), fd);
    if (errno != EEXIST) {
      return Fail(SystemError(ErrorCode::kIoWrite,
                              "cannot create temporary file '" + temp_path.string() + "'", path,
                              errno));
    }
  }
  return Fail(Error(ErrorCode::kIoWrite, "no unused temporary file name found beside it")
                  .InFile(path.string()));
}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : path_(std::move(other.path_)),
      temp_path_(std::move(other.temp_path_)),
      fd_(std::exchange(other.fd_, -1)),
      map_(std::exchange(other.map_, nullptr)),
      map_size_(std::exchange(other.map_size_, 0)),
      mapped_(std::exchange(other.mapped_, false)),
      written_(std::exchange(other.written_, false)),
      reserved_(std::exchange(other.reserved_, 0)),
      has_reserved_(std::exchange(other.has_reserved_, false)) {}

AtomicFile& AtomicFile::operator=(AtomicFile&& other) noexcept {
  if (this != &other) {
    Discard();
    path_ = std::move(other.path_);
    temp_path_ = std::move(other.temp_path_);
    fd_ = std::exchange(other.fd_, -1);
    map_ = std::exchange(other.map_, nullptr);
    map_size_ = std::exchange(other.map_size_, 0);
    mapped_ = std::exchange(other.mapped_, false);
    written_ = std::exchange(other.written_, false);
    reserved_ = std::exchange(other.reserved_, 0);
    has_reserved_ = std::exchange(other.has_reserved_, false);
  }
  return *this;
}

AtomicFile::~AtomicFile() { Discard(); }

void AtomicFile::Discard() noexcept {
  if (map_ != nullptr) munmap(map_, map_size_);
  map_ = nullptr;
  map_size_ = 0;
  if (fd_ >= 0) {
    close(fd_);
    fd_ = -1;
    unlink(temp_path_.c_str());
  }
}

Error AtomicFile::WriteError(std::string_view what, int errnum) const {
  return SystemError(ErrorCode::kIoWrite, std::string(what) + " '" + temp_path_.string() + "'",
                     path_, errnum);
}

Status AtomicFile::Write(std::span<const std::byte> bytes) {
  if (fd_ < 0) return Fail(ErrorCode::kInternal, "AtomicFile::Write on a spent file");
  if (mapped_) return Fail(ErrorCode::kInternal, "AtomicFile::Write after Map()");
  written_ = true;
  while (!bytes.empty()) {
    size_t chunk = std::min(bytes.size(), kMaxWriteChunk);
    ssize_t n = write(fd_, bytes.data(), chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      Error error = WriteError("cannot write temporary file", errno);
      Discard();
      return Fail(std::move(error));
    }
    bytes = bytes.subspan(static_cast<size_t>(n));
  }
  return Ok();
}

Status AtomicFile::Write(std::string_view bytes) {
  return Write(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())));
}

Status AtomicFile::Reserve(uint64_t size) {
  if (fd_ < 0) return Fail(ErrorCode::kInternal, "AtomicFile::Reserve on a spent file");
  if (mapped_ || written_ || has_reserved_) {
    return Fail(ErrorCode::kInternal, "AtomicFile::Reserve on a file already written or sized");
  }
  has_reserved_ = true;
  reserved_ = size;
  if (size == 0) return Ok();
  if (size > static_cast<uint64_t>(std::numeric_limits<off_t>::max())) {
    Error error = WriteError("cannot size temporary file", EFBIG);
    Discard();
    return Fail(std::move(error));
  }
  // fallocate, not posix_fallocate: where the file system cannot allocate without writing,
  // glibc's fallback writes every block, which would double the writes.
  if (fallocate(fd_, 0, 0, static_cast<off_t>(size)) != 0) {
    const int errnum = errno;
    if (errnum != EOPNOTSUPP && errnum != ENOSYS) {
      Error error = WriteError("cannot reserve " + std::to_string(size) + " bytes for", errnum);
      Discard();
      return Fail(std::move(error));
    }
    if (ftruncate(fd_, static_cast<off_t>(size)) != 0) {
      Error error = WriteError("cannot size temporary file", errno);
      Discard();
      return Fail(std::move(error));
    }
  }
  return Ok();
}

Status AtomicFile::WriteAt(uint64_t offset, std::span<const std::byte> bytes) {
  if (fd_ < 0) return Fail(ErrorCode::kInternal, "AtomicFile::WriteAt on a spent file");
  if (mapped_) return Fail(ErrorCode::kInternal, "AtomicFile::WriteAt after Map()");
  written_ = true;
  while (!bytes.empty()) {
    const size_t chunk = std::min(bytes.size(), kMaxWriteChunk);
    const ssize_t n = pwrite(fd_, bytes.data(), chunk, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Fail(WriteError("cannot write temporary file", errno));
    }
    // No progress and no error would loop for ever.
    if (n == 0) return Fail(WriteError("cannot write temporary file", EIO));
    bytes = bytes.subspan(static_cast<size_t>(n));
    offset += static_cast<uint64_t>(n);
  }
  return Ok();
}

Status AtomicFile::WriteAt(uint64_t offset, std::string_view bytes) {
  return WriteAt(offset, std::as_bytes(std::span<const char>(bytes.data(), bytes.size())));
}

Status AtomicFile::CopyAt(uint64_t offset, const MappedFile& source,
                          std::span<const std::byte> bytes) {
  if (fd_ < 0) return Fail(ErrorCode::kInternal, "AtomicFile::CopyAt on a spent file");
  if (mapped_) return Fail(ErrorCode::kInternal, "AtomicFile::CopyAt after Map()");
  const std::span<const std::byte> all = source.bytes();
  if (bytes.data() < all.data() || bytes.data() + bytes.size() > all.data() + all.size()) {
    return Fail(ErrorCode::kInternal, "AtomicFile::CopyAt: the bytes are not in the mapping");
  }
  written_ = true;
  const int from = source.OpenSameFile();
  if (from >= 0) {
    auto in = static_cast<off_t>(bytes.data() - all.data());
    auto out = static_cast<off_t>(offset);
    while (!bytes.empty()) {
      const ssize_t n =
          copy_file_range(from, &in, fd_, &out, std::min(bytes.size(), kMaxWriteChunk), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // the kernel cannot (EXDEV, EOPNOTSUPP, ...) or the source shrank
      bytes = bytes.subspan(static_cast<size_t>(n));
      offset += static_cast<uint64_t>(n);
    }
    close(from);
  }
  // What the kernel did not copy comes from the mapping, whose guard turns a shrunk source
  // into zeros and a failed CheckIntact.
  return WriteAt(offset, bytes);
}

Expected<std::span<std::byte>> AtomicFile::Map(uint64_t size) {
  if (fd_ < 0) return Fail(ErrorCode::kInternal, "AtomicFile::Map on a spent file");
  if (mapped_ || written_) {
    return Fail(ErrorCode::kInternal, "AtomicFile::Map on a file already written or mapped");
  }
  mapped_ = true;
  if (size == 0) return std::span<std::byte>();
  if (size > static_cast<uint64_t>(std::numeric_limits<off_t>::max())) {
    Error error = WriteError("cannot size temporary file", EFBIG);
    Discard();
    return Fail(std::move(error));
  }
  // posix_fallocate allocates the blocks now: writing into a mapping of a sparse file on a
  // full disk would otherwise kill the process with SIGBUS.
  int rc = posix_fallocate(fd_, 0, static_cast<off_t>(size));
  if (rc != 0) {
    Error error = WriteError("cannot reserve " + std::to_string(size) + " bytes for", rc);
    Discard();
    return Fail(std::move(error));
  }
  void* map = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (map == MAP_FAILED) {
    Error error = WriteError("cannot map temporary file", errno);
    Discard();
    return Fail(std::move(error));
  }
  map_ = static_cast<std::byte*>(map);
  map_size_ = size;
  return std::span<std::byte>(map_, map_size_);
}

Status SyncDirectory(const std::filesystem::path& dir, const std::filesystem::path& renamed) {
  const std::filesystem::path where = dir.empty() ? "." : dir;
  int dir_fd = open(where.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0 || fsync(dir_fd) != 0) {
    int errnum = errno;
    if (dir_fd >= 0) close(dir_fd);
    return Fail(SystemError(ErrorCode::kIoWrite,
                            std::string(renamed.empty() ? "files" : "file") +
                                " renamed into place, but syncing directory '" + where.string() +
                                "' failed",
                            renamed.empty() ? where : renamed, errnum));
  }
  close(dir_fd);
  return Ok();
}

Status AtomicFile::Commit(Durability durability) {
  if (fd_ < 0) return Fail(ErrorCode::kInternal, "AtomicFile::Commit on a spent file");
  const bool durable = durability != Durability::kNoSync;  // the file's data, at least
  // Linux keeps a shared mapping's dirty pages in the page cache, so fsync below writes them.
  if (map_ != nullptr) munmap(map_, map_size_);
  map_ = nullptr;
  map_size_ = 0;
  if (durable && fsync(fd_) != 0) {
    Error error = WriteError("cannot flush temporary file", errno);
    Discard();
    return Fail(std::move(error));
  }
  if (close(fd_) != 0) {
    int errnum = errno;
    fd_ = -1;
    unlink(temp_path_.c_str());
    return Fail(WriteError("cannot close temporary file", errnum));
  }
  fd_ = -1;
  if (rename(temp_path_.c_str(), path_.c_str()) != 0) {
    int errnum = errno;
    unlink(temp_path_.c_str());
    return Fail(SystemError(ErrorCode::kIoWrite,
                            "cannot rename '" + temp_path_.string() + "' into place", path_,
                            errnum));
  }
  if (durability != Durability::kDurable) return Ok();
  return SyncDirectory(path_.parent_path(), path_);
}

Status WriteFileAtomically(const std::filesystem::path& path, std::span<const std::byte> bytes,
                           const AtomicFileOptions& options) {
  IOTX_ASSIGN_OR_RETURN(AtomicFile file, AtomicFile::Create(path, options));
  IOTX_RETURN_IF_ERROR(file.Write(bytes));
  return file.Commit();
}

Status WriteFileAtomically(const std::filesystem::path& path, std::string_view bytes,
                           const AtomicFileOptions& options) {
  return WriteFileAtomically(path, std::as_bytes(std::span<const char>(bytes.data(), bytes.size())),
                             options);
}

}  // namespace iotx::files
