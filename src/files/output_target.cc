#include "files/output_target.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string_view>
#include <system_error>

#include "files/linux_limits.h"
#include "files/system_error.h"

namespace iotx::files {
namespace {


bool IsDescriptorPath(std::string_view path) {
  return path.starts_with("/proc/") || path.starts_with("/dev/fd/") || path == "/dev/fd" ||
         path == "/dev/stdout" || path == "/dev/stderr" || path == "/dev/stdin";
}

// True when `path`, or a symlink on the way from it (its last component followed hop by hop),
// names one of a process's descriptors: /dev/stdout -> /proc/self/fd/1 -> whatever fd 1 is.
// Renaming over such a name would replace the symlink in /dev, not the file behind it.
bool ThroughDescriptor(const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::path current = std::filesystem::absolute(path, ec).lexically_normal();
  if (ec) return false;
  for (int hop = 0; hop <= kMaxSymlinkHops; ++hop) {
    if (IsDescriptorPath(current.string())) return true;
    if (std::filesystem::symlink_status(current, ec).type() !=
        std::filesystem::file_type::symlink) {
      return false;
    }
    const std::filesystem::path target = std::filesystem::read_symlink(current, ec);
    if (ec) return false;
    current = (target.is_absolute() ? target : current.parent_path() / target).lexically_normal();
  }
  return false;
}

}  // namespace

TargetKind ClassifyTarget(const std::filesystem::path& path) {
  if (ThroughDescriptor(path)) return TargetKind::kStream;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return TargetKind::kAbsent;  // absent, or a dangling link
  if (S_ISREG(st.st_mode)) return TargetKind::kRegular;
  if (S_ISDIR(st.st_mode)) return TargetKind::kDirectory;
  if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) return TargetKind::kStream;
  // A socket cannot be opened (open(2) gives ENXIO) and a block device is a disk: neither is
  // written into nor replaced.
  return TargetKind::kOther;
}

std::string DescribeTarget(const std::filesystem::path& path) {
  if (ThroughDescriptor(path)) return "one of the process's descriptors (like /dev/stdout)";
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "nothing";
  if (S_ISREG(st.st_mode)) return "a regular file";
  if (S_ISDIR(st.st_mode)) return "a directory";
  if (S_ISFIFO(st.st_mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(st.st_mode)) return "a socket";
  if (S_ISCHR(st.st_mode)) return "a character device";
  if (S_ISBLK(st.st_mode)) return "a block device";
  return "not a regular file";
}

Status CheckReplaceable(const std::filesystem::path& path) {
  switch (ClassifyTarget(path)) {
    case TargetKind::kAbsent:
    case TargetKind::kRegular:
      return Ok();
    case TargetKind::kDirectory:
      return Fail(Error(ErrorCode::kIoWrite, "a directory is in the way of this output file")
                      .InFile(path.string()));
    case TargetKind::kStream:
    case TargetKind::kOther:
      break;
  }
  return Fail(Error(ErrorCode::kNotRegularFile,
                    "is " + DescribeTarget(path) +
                        ", not a regular file; refusing to write it (an output is written "
                        "through a temporary file renamed into place, which would replace the "
                        "node itself)")
                  .InFile(path.string()));
}

Status WriteOutputFile(const std::filesystem::path& path, std::span<const std::byte> bytes,
                       const AtomicFileOptions& options) {
  const TargetKind kind = ClassifyTarget(path);
  if (kind != TargetKind::kStream) {
    IOTX_RETURN_IF_ERROR(CheckReplaceable(path));
    return WriteFileAtomically(path, bytes, options);
  }
  // O_TRUNC matters only where the descriptor path leads to a regular file (`> out.pb` behind
  // /dev/stdout): the module replaces its content as a shell redirection would.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_TRUNC);
  if (fd < 0) return Fail(SystemError(ErrorCode::kIoWrite, "cannot open for writing", path, errno));
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), std::min(bytes.size(), kMaxWriteChunk));
    if (n < 0) {
      if (errno == EINTR) continue;
      const int errnum = errno;
      ::close(fd);
      return Fail(SystemError(ErrorCode::kIoWrite, "write failed", path, errnum));
    }
    bytes = bytes.subspan(static_cast<size_t>(n));
  }
  if (::close(fd) != 0 && errno != EINTR) {
    return Fail(SystemError(ErrorCode::kIoWrite, "write failed", path, errno));
  }
  return Ok();
}

Status CheckNotAnInput(const std::filesystem::path& path,
                       std::span<const std::filesystem::path> inputs) {
  for (const std::filesystem::path& input : inputs) {
    std::error_code ec;  // either missing: not the same file
    if (std::filesystem::equivalent(path, input, ec) && !ec) {
      return Fail(Error(ErrorCode::kOutputIsInput,
                        "this output is the input file " + input.string() +
                            ": writing it would replace what is being read; write to another "
                            "directory")
                      .InFile(path.string()));
    }
  }
  return Ok();
}

}  // namespace iotx::files
