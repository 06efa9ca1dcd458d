#include "producer/fan_out.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

#include "core/text.h"
#include "files/output_target.h"
#include "files/path_safety.h"
#include "files/system_error.h"

namespace iotx::producer {
namespace {

bool IsLinkSourceName(const std::string& name) {
  if (name.starts_with(".")) return false;
  return name.ends_with(".npy") || name.ends_with(".npy.meta");
}

Status SyncDirectory(const std::filesystem::path& dir) {
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || fsync(fd) != 0) {
    const int errnum = errno;
    if (fd >= 0) close(fd);
    return Fail(files::SystemError(ErrorCode::kIoWrite,
                            "links made, but syncing the directory failed", dir, errnum));
  }
  close(fd);
  return Ok();
}

}  // namespace

Expected<std::vector<LinkSource>> ListLinkSources(const std::filesystem::path& root,
                                                  const std::filesystem::path& dir) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::symlink_status(dir, ec);
  if (status.type() == std::filesystem::file_type::not_found) return std::vector<LinkSource>{};
  IOTX_RETURN_IF_ERROR(files::ResolveInside(root, dir));
  if (!std::filesystem::is_directory(dir, ec)) {
    return Fail(Error(ErrorCode::kNotADirectory, "expected a directory of transposed inputs")
                    .InFile(dir.string()));
  }
  std::vector<LinkSource> sources;
  std::filesystem::directory_iterator it(dir, ec);
  for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (!IsLinkSourceName(name)) continue;
    auto real = files::ResolveInside(root, it->path());
    if (!real) {
      Error error = std::move(real).error();
      error.message = "refusing to link it into the partition dirs: " + error.message;
      return Fail(std::move(error));
    }
    sources.push_back({std::move(name), std::move(*real)});
  }
  if (ec) {
    return Fail(
        Error(ErrorCode::kIoOpen, "cannot list directory: " + ec.message()).InFile(dir.string()));
  }
  std::sort(sources.begin(), sources.end(),
            [](const LinkSource& a, const LinkSource& b) { return a.name < b.name; });
  return sources;
}

Expected<std::vector<LinkMade>> FanOut(const WorkDir& workdir, std::span<const LinkSource> sources,
                                       std::vector<Warning>* notes) {
  std::vector<LinkMade> made;
  if (sources.empty()) return made;
  for (const std::filesystem::path& dir : workdir.partition_dirs) {
    // Where the dir really is: a link placed at real_dir / name is the file real_dir / name.
    std::error_code ec;
    const std::filesystem::path real_dir = std::filesystem::canonical(workdir.root / dir, ec);
    if (ec) {
      return Fail(Error(ErrorCode::kIoOpen, "cannot resolve partition directory: " + ec.message())
                      .InFile((workdir.root / dir).string()));
    }
    std::vector<std::string> skipped;
    for (const LinkSource& source : sources) {
      const std::filesystem::path link = dir / source.name;
      if (real_dir / source.name == source.real_path) {
        skipped.push_back(source.name);
        continue;
      }
      IOTX_ASSIGN_OR_RETURN(files::LinkOutcome outcome,
                            files::ReplaceSymlink(source.real_path, workdir.root / link));
      made.push_back({link, source.real_path, outcome});
    }
    if (!skipped.empty() && notes != nullptr) {
      notes->push_back(
          Warning(ErrorCode::kSelfLink,
                  std::to_string(skipped.size()) + " file(s) not linked: the directory resolves to '" +
                      real_dir.string() + "', where they already are (" +
                      ListFirstNames(skipped, [](const std::string& s) { return s; }) +
                      "); a link there would replace each file with a link to itself")
              .InFile((workdir.root / dir).string()));
    }
    IOTX_RETURN_IF_ERROR(SyncDirectory(workdir.root / dir));
  }
  return made;
}

Status CheckFanOutTargets(const WorkDir& workdir, std::span<const std::string> names) {
  for (const std::filesystem::path& dir : workdir.partition_dirs) {
    for (const std::string& name : names) {
      const std::filesystem::path link = workdir.root / dir / name;
      std::error_code ec;
      const auto type = std::filesystem::symlink_status(link, ec).type();
      if (type == std::filesystem::file_type::not_found ||
          type == std::filesystem::file_type::symlink) {
        continue;  // created, or a link replaced
      }
      IOTX_RETURN_IF_ERROR(files::CheckReplaceable(link));
    }
  }
  return Ok();
}

}  // namespace iotx::producer
