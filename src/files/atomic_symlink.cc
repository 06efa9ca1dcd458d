#include "files/atomic_symlink.h"
#include "files/output_target.h"
#include "files/system_error.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <string>
#include <system_error>

namespace iotx::files {
namespace {

// symlink(2) fails with EEXIST only if another process picked the same name; a few
// attempts with the next counter value settle that.
constexpr int kLinkNameAttempts = 16;

std::string TempLinkName(const std::filesystem::path& link) {
  static std::atomic<uint64_t> counter{0};
  std::string name(1, '.');
  name += link.filename().string();
  name += ".tmp-link-";
  name += std::to_string(getpid());
  name += '-';
  name += std::to_string(counter.fetch_add(1));
  return name;
}

Error LinkError(const std::filesystem::path& link, const std::string& what, int errnum) {
  return SystemError(ErrorCode::kIoWrite, what, link, errnum);
}

}  // namespace

Expected<LinkOutcome> ReplaceSymlink(const std::filesystem::path& target,
                                     const std::filesystem::path& link) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::symlink_status(link, ec);
  LinkOutcome outcome = LinkOutcome::kCreated;
  if (status.type() == std::filesystem::file_type::directory) {
    return Fail(Error(ErrorCode::kIoWrite,
                      "a directory is in the way of the link to '" + target.string() + "'")
                    .InFile(link.string()));
  }
  if (status.type() == std::filesystem::file_type::symlink) {
    if (std::filesystem::read_symlink(link, ec) == target && !ec) return LinkOutcome::kUnchanged;
    outcome = LinkOutcome::kReplaced;
  } else if (std::filesystem::exists(status)) {
    // Only a regular file is ever renamed over; a device, FIFO or socket stays.
    IOTX_RETURN_IF_ERROR(CheckReplaceable(link));
    // The file the link would lead to, reached through an aliased directory (a partition dir
    // that is a link to the source dir): replacing it by a link to itself would lose it.
    if (std::filesystem::equivalent(link, target, ec) && !ec) {
      return Fail(Error(ErrorCode::kSelfLink,
                        "is the very file the link would point to ('" + target.string() +
                            "'); replacing it with a link to itself would lose it")
                      .InFile(link.string()));
    }
    outcome = LinkOutcome::kReplaced;
  }

  const std::filesystem::path dir = link.parent_path();
  for (int attempt = 0; attempt < kLinkNameAttempts; ++attempt) {
    const std::filesystem::path temp = dir / TempLinkName(link);
    if (symlink(target.c_str(), temp.c_str()) != 0) {
      if (errno == EEXIST) continue;
      return Fail(LinkError(link, "cannot create temporary link '" + temp.string() + "'", errno));
    }
    if (rename(temp.c_str(), link.c_str()) != 0) {
      const int errnum = errno;
      unlink(temp.c_str());
      return Fail(LinkError(link, "cannot rename '" + temp.string() + "' into place", errnum));
    }
    return outcome;
  }
  return Fail(Error(ErrorCode::kIoWrite, "no unused temporary link name found beside it")
                  .InFile(link.string()));
}

}  // namespace iotx::files
