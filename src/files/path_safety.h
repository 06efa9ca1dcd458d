// Path safety: keep writes inside the directory they are meant for.
//
// Symlinks are followed the way the kernel would follow them when the path is opened, so a
// link planted inside a work directory cannot redirect a write elsewhere. The check is made
// when called; a concurrent attacker who swaps components afterwards is out of scope.
#pragma once

#include <filesystem>

#include "iotx/status.h"

namespace iotx::files {

// Resolves `path` (symlinks in every existing component followed, as realpath(3); components
// that do not exist yet appended lexically) and returns it if it lies inside `root` (itself
// resolved; the root counts as inside). kPathUnsafe names both paths otherwise; kNotADirectory
// when `root` is not an existing directory.
Expected<std::filesystem::path> ResolveInside(const std::filesystem::path& root,
                                              const std::filesystem::path& path);

}  // namespace iotx::files
