#include "producer/workdir.h"

#include <algorithm>
#include <string>
#include <system_error>

#include "files/path_safety.h"

namespace iotx::producer {
namespace {

// The entries of `dir` whose name starts with `prefix` and that are directories once symlinks
// are followed — what Python's glob("<prefix>*/") yields — as names, sorted.
Expected<std::vector<std::string>> MatchingDirs(const std::filesystem::path& dir,
                                                const std::string& prefix) {
  std::vector<std::string> names;
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code type_ec;
    if (name.starts_with(prefix) && std::filesystem::is_directory(it->path(), type_ec)) {
      names.push_back(name);
    }
  }
  if (ec) {
    return Fail(
        Error(ErrorCode::kIoOpen, "cannot list directory: " + ec.message()).InFile(dir.string()));
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

Expected<WorkDir> ScanWorkDir(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return Fail(Error(ErrorCode::kNotADirectory,
                      "work directory does not exist or is not a "
                      "directory")
                    .InFile(dir.string()));
  }
  WorkDir workdir;
  workdir.root = std::filesystem::canonical(dir, ec);
  if (ec) {
    return Fail(Error(ErrorCode::kIoOpen, "cannot resolve work directory: " + ec.message())
                    .InFile(dir.string()));
  }
  workdir.has_io_transposes = std::filesystem::exists(workdir.io_transposes(), ec);
  workdir.has_tensors = std::filesystem::exists(workdir.tensors(), ec);

  std::vector<std::filesystem::path> candidates;
  IOTX_ASSIGN_OR_RETURN(std::vector<std::string> sg_dirs, MatchingDirs(workdir.root, "sg"));
  for (const std::string& sg : sg_dirs) candidates.emplace_back(sg);
  IOTX_ASSIGN_OR_RETURN(std::vector<std::string> nc_dirs, MatchingDirs(workdir.root, "nc"));
  for (const std::string& nc : nc_dirs) {
    IOTX_ASSIGN_OR_RETURN(std::vector<std::string> nested, MatchingDirs(workdir.root / nc, "sg"));
    for (const std::string& sg : nested) candidates.push_back(std::filesystem::path(nc) / sg);
  }
  for (std::filesystem::path& relative : candidates) {
    auto inside = files::ResolveInside(workdir.root, workdir.root / relative);
    if (!inside) {
      Error error = std::move(inside).error();
      error.message =
          "partition directory leads outside the work directory; links written "
          "there would land elsewhere (" +
          error.message + ")";
      return Fail(std::move(error));
    }
    workdir.partition_dirs.push_back(std::move(relative));
  }
  std::sort(workdir.partition_dirs.begin(), workdir.partition_dirs.end());
  return workdir;
}

}  // namespace iotx::producer
