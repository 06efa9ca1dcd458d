#include "files/read_text_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

#include "core/text.h"
#include "files/output_target.h"
#include "files/system_error.h"

namespace iotx::files {
namespace {

// Closes the descriptor on every return path.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

Error TooLarge(const std::string& path, const std::string& what) {
  return Error(ErrorCode::kJsonTooLarge,
               what + "; a JSON side-file may have at most " + FormatBytes(kMaxSideFileBytes) +
                   " (these files hold a few hundred specs or names)")
      .InFile(path);
}

}  // namespace

Expected<std::string> ReadTextFile(const std::string& path) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer; it is refused
  // below, before anything is read.
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) return Fail(SystemError(ErrorCode::kIoOpen, "cannot open", path, errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    return Fail(SystemError(ErrorCode::kIoOpen, "cannot stat", path, errno));
  }
  if (S_ISDIR(st.st_mode)) {
    return Fail(Error(ErrorCode::kIoOpen, "is a directory, expected a JSON file").InFile(path));
  }
  if (!S_ISREG(st.st_mode)) {
    return Fail(Error(ErrorCode::kIoOpen, "is " + DescribeTarget(path) +
                                              ", not a regular file; a JSON side-file is read "
                                              "only from a regular file")
                    .InFile(path));
  }
  if (st.st_size > kMaxSideFileBytes) {
    return Fail(TooLarge(path, "file has " + FormatBytes(static_cast<uint64_t>(st.st_size))));
  }
  std::string text;
  try {
    text.reserve(static_cast<size_t>(st.st_size));
    char buffer[65536];
    for (;;) {
      const ssize_t n = ::read(fd.get(), buffer, sizeof(buffer));
      if (n < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        return Fail(SystemError(ErrorCode::kIoRead, "read failed", path, errno));
      }
      if (n == 0) break;
      // A file that grows while it is read is bounded all the same.
      if (static_cast<int64_t>(text.size()) + n > kMaxSideFileBytes) {
        return Fail(TooLarge(path, "file grew past the limit while being read"));
      }
      text.append(buffer, static_cast<size_t>(n));
    }
  } catch (const std::bad_alloc&) {
    return Fail(Error(ErrorCode::kOutOfMemory, "out of memory reading " +
                                                   FormatBytes(static_cast<uint64_t>(st.st_size)))
                    .InFile(path));
  }
  return text;
}

}  // namespace iotx::files
