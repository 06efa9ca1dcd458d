#include "files/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <system_error>

#include "files/direct_io.h"
#include "files/linux_limits.h"
#include "files/sigbus_guard.h"
#include "files/system_error.h"

namespace iotx::files {
namespace {

MappedFile::Identity IdentityOf(const struct stat& st) {
  return {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
          static_cast<uint64_t>(st.st_size),
          static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
}

}  // namespace

Expected<std::shared_ptr<const MappedFile>> MappedFile::Open(const std::filesystem::path& path) {
  auto fail = [&path](ErrorCode code, const std::string& what, int errnum) {
    return Fail(SystemError(code, what, path, errnum));
  };
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer; it is refused
  // below as not a regular file.
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return fail(ErrorCode::kIoOpen, "cannot open", errno);
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int errnum = errno;
    close(fd);
    return fail(ErrorCode::kIoOpen, "cannot stat", errnum);
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return Fail(Error(ErrorCode::kIoOpen, "not a regular file").InFile(path.string()));
  }
  size_t size = static_cast<size_t>(st.st_size);
  const std::byte* data = nullptr;
  if (size > 0) {
    void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      int errnum = errno;
      close(fd);
      return fail(ErrorCode::kIoRead, "cannot map " + std::to_string(size) + " bytes", errnum);
    }
    data = static_cast<const std::byte*>(map);
  }
  close(fd);  // the mapping stays valid without the descriptor
  auto* file = new MappedFile(path.string(), data, size, IdentityOf(st));
  file->guard_ = GuardMapping(data, size);
  return std::shared_ptr<const MappedFile>(file);
}

MappedFile::~MappedFile() {
  UnguardMapping(guard_);
  if (data_ != nullptr) munmap(const_cast<std::byte*>(data_), size_);
}

int MappedFile::OpenSameFile() const noexcept {
  const int fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return -1;
  struct stat st;
  if (fstat(fd, &st) == 0) {
    const Identity now = IdentityOf(st);
    if (now.device == identity_.device && now.inode == identity_.inode &&
        now.size == identity_.size && now.mtime_ns == identity_.mtime_ns) {
      return fd;
    }
  }
  close(fd);
  return -1;
}

void MappedFile::ReadInto(std::span<const std::byte> bytes,
                          std::span<std::byte> into) const noexcept {
  size_t done = 0;
  const int fd = bytes.empty() ? -1 : OpenSameFile();
  if (fd >= 0) {
    const auto at = static_cast<off_t>(bytes.data() - data_);
    while (done < bytes.size()) {
      const ssize_t n = pread(fd, into.data() + done, std::min(bytes.size() - done, kMaxWriteChunk),
                              at + static_cast<off_t>(done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // an I/O error or a file that shrank: the mapping's guard reports it
      done += static_cast<size_t>(n);
    }
    close(fd);
  }
  if (done < bytes.size()) {
    std::memcpy(into.data() + done, bytes.data() + done, bytes.size() - done);
  }
}

std::optional<double> MappedFile::CachedFractionOf(
    std::span<const std::byte> bytes) const noexcept {
  struct stat st;
  const bool trusted =
      stat(path_.c_str(), &st) == 0 && (st.st_uid == geteuid() || access(path_.c_str(), W_OK) == 0);
  return CachedFraction(bytes, trusted);
}

std::span<const std::byte> MappedFile::ReadIntoRoom(std::span<const std::byte> bytes,
                                                    std::span<std::byte> room) const noexcept {
  if (bytes.size() >= kDirectReadMinBytes) {
    const std::optional<double> cached = CachedFractionOf(bytes);
    if (cached && *cached < 0.5) {
      const std::span<const std::byte> read = ReadDirect(bytes, room);
      if (!read.empty()) return read;
    }
  }
  ReadInto(bytes, room.first(bytes.size()));
  return room.first(bytes.size());
}

std::span<const std::byte> MappedFile::ReadDirect(std::span<const std::byte> bytes,
                                                  std::span<std::byte> room) const noexcept {
  const int fd = OpenSameFile();
  if (fd < 0) return {};
  const size_t align = DirectIoAlignment(fd);
  const int flags = fcntl(fd, F_GETFL);
  if (align == 0 || flags < 0 || fcntl(fd, F_SETFL, flags | O_DIRECT) != 0) {
    close(fd);
    return {};
  }
  const auto offset = static_cast<size_t>(bytes.data() - data_);
  const size_t head = offset % kDirectPhase;
  const size_t want = head + bytes.size();
  // Whole blocks from the one the bytes start in to the one they end in (the last may run
  // past the end of the file: the read then stops there).
  const size_t length = (want + align - 1) / align * align;
  size_t done = 0;
  while (done < want) {
    const ssize_t n = pread(fd, room.data() + done, std::min(length - done, kMaxWriteChunk),
                            static_cast<off_t>(offset - head + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // an I/O error or a file that shrank: the rest from the mapping
    done += static_cast<size_t>(n);
    if (done % align != 0) break;  // short of a block: the end of the file
  }
  close(fd);
  if (done < want) {
    const size_t from = std::max(done, head);
    std::memcpy(room.data() + from, bytes.data() + (from - head), want - from);
  }
  return room.subspan(head, bytes.size());
}

Status MappedFile::CheckIntact() const {
  if (MappingDamaged(guard_)) {
    return Fail(Error(ErrorCode::kIoRead,
                      "the file changed while it was read: it was truncated, or a page of it "
                      "could not be read; nothing made from it is kept")
                    .InFile(path_));
  }
  struct stat st;
  if (stat(path_.c_str(), &st) != 0) return Ok();  // gone (renamed or removed): ours is intact
  const Identity now = IdentityOf(st);
  if (now.device != identity_.device || now.inode != identity_.inode) return Ok();  // replaced
  if (now.size != identity_.size || now.mtime_ns != identity_.mtime_ns) {
    return Fail(Error(ErrorCode::kIoRead,
                      "the file changed while it was read (size " +
                          std::to_string(identity_.size) + " -> " + std::to_string(now.size) +
                          " bytes, or a newer modification time); nothing made from it is kept")
                    .InFile(path_));
  }
  return Ok();
}

}  // namespace iotx::files
