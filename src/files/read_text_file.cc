#include "files/read_text_file.h"
#include "files/system_error.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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

Error IoError(ErrorCode code, const std::string& what, const std::string& path, int err) {
  return SystemError(code, what, path, err);
}

}  // namespace

Expected<std::string> ReadTextFile(const std::string& path) {
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return Fail(IoError(ErrorCode::kIoOpen, "cannot open", path, errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    return Fail(IoError(ErrorCode::kIoOpen, "cannot stat", path, errno));
  }
  if (S_ISDIR(st.st_mode)) {
    return Fail(Error(ErrorCode::kIoOpen, "is a directory, expected a JSON file").InFile(path));
  }
  std::string text;
  if (S_ISREG(st.st_mode)) {
    if (st.st_size > kMaxSideFileBytes) {
      return Fail(Error(ErrorCode::kJsonTooLarge,
                        "file has " + std::to_string(st.st_size) + " bytes, more than the " +
                            std::to_string(kMaxSideFileBytes) + " a JSON side-file may have")
                      .InFile(path));
    }
    text.reserve(static_cast<size_t>(st.st_size));
  }
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Fail(IoError(ErrorCode::kIoRead, "read failed", path, errno));
    }
    if (n == 0) break;
    // Pipes and other non-regular files have no size up front; bound them while reading.
    if (static_cast<int64_t>(text.size()) + n > kMaxSideFileBytes) {
      return Fail(Error(ErrorCode::kJsonTooLarge, "file is larger than the " +
                                                      std::to_string(kMaxSideFileBytes) +
                                                      " bytes a JSON side-file may have")
                      .InFile(path));
    }
    text.append(buffer, static_cast<size_t>(n));
  }
  return text;
}

}  // namespace iotx::files
