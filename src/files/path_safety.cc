#include "files/path_safety.h"

#include <system_error>
#include <vector>

#include "files/linux_limits.h"

namespace iotx::files {
namespace {

// True when `inner` equals `outer` or lies below it, compared component by component (so
// "/a/bc" is not inside "/a/b"). Both are canonical: absolute, no "." or "..", no trailing "/".
bool IsWithin(const std::filesystem::path& outer, const std::filesystem::path& inner) {
  auto inner_it = inner.begin();
  for (const std::filesystem::path& component : outer) {
    if (inner_it == inner.end() || *inner_it != component) return false;
    ++inner_it;
  }
  return true;
}


// Like realpath(3), but components that do not exist are kept (lexically normalized) instead
// of failing, and a dangling symlink is still followed to where it points — where a write
// through it would land.
Expected<std::filesystem::path> Resolve(const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::path absolute =
      path.is_absolute() ? path : std::filesystem::current_path(ec) / path;
  if (ec) {
    return Fail(
        Error(ErrorCode::kIoOpen, "cannot resolve path: " + ec.message()).InFile(path.string()));
  }
  // Components still to walk, the next one last.
  std::vector<std::filesystem::path> pending;
  auto push_components = [&pending](const std::filesystem::path& p) {
    std::filesystem::path relative = p.relative_path();
    std::vector<std::filesystem::path> parts(relative.begin(), relative.end());
    pending.insert(pending.end(), parts.rbegin(), parts.rend());
  };
  push_components(absolute);
  std::filesystem::path current = absolute.root_path();
  int hops = 0;
  while (!pending.empty()) {
    std::filesystem::path component = std::move(pending.back());
    pending.pop_back();
    if (component.empty() || component == ".") continue;
    if (component == "..") {
      current = current.parent_path();  // `current` holds no symlinks, so this is exact
      continue;
    }
    std::filesystem::path candidate = current / component;
    if (std::filesystem::symlink_status(candidate, ec).type() ==
        std::filesystem::file_type::symlink) {
      std::filesystem::path target = std::filesystem::read_symlink(candidate, ec);
      if (ec || ++hops > kMaxSymlinkHops) {
        return Fail(Error(ErrorCode::kPathUnsafe,
                          "cannot resolve symlink '" + candidate.string() + "': " +
                              (ec ? ec.message() : std::string("too many levels of symlinks")))
                        .InFile(path.string()));
      }
      if (target.is_absolute()) current = target.root_path();
      push_components(target);
      continue;
    }
    current = std::move(candidate);
  }
  return current;
}

}  // namespace

Expected<std::filesystem::path> ResolveInside(const std::filesystem::path& root,
                                              const std::filesystem::path& path) {
  std::error_code ec;
  IOTX_ASSIGN_OR_RETURN(std::filesystem::path real_root, Resolve(root));
  if (!std::filesystem::is_directory(real_root, ec)) {
    return Fail(Error(ErrorCode::kNotADirectory,
                      "root '" + root.string() + "' is not an existing directory")
                    .InFile(path.string()));
  }
  IOTX_ASSIGN_OR_RETURN(std::filesystem::path resolved, Resolve(path));
  if (!IsWithin(real_root, resolved)) {
    return Fail(Error(ErrorCode::kPathUnsafe, "resolves to '" + resolved.string() +
                                                  "', which is outside '" + real_root.string() +
                                                  "'")
                    .InFile(path.string()));
  }
  return resolved;
}

}  // namespace iotx::files
