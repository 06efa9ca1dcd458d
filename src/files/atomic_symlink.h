// Pointing a symlink at a target with no moment where the link is missing.
#pragma once

#include <filesystem>

#include "iotx/status.h"

namespace iotx::files {

enum class LinkOutcome {
  kCreated,    // nothing was at the link path
  kReplaced,   // something else was there (another link, a file) and was replaced
  kUnchanged,  // it already was a symlink to exactly `target`
};

// Makes `link` a symlink to `target`: a temporary symlink is created beside it under a hidden
// unique name (".NAME.tmp-link-<pid>-<n>") and renamed over `link`, which rename(2) does
// atomically — whatever was at `link` is replaced, never written through. An existing
// directory at `link` is an error (kIoWrite naming it), as is a device, FIFO or socket
// (kNotRegularFile), the very file `target` names (kSelfLink: it would become a link to itself)
// and any failure of symlink(2) or rename(2); the temporary link is removed then.
Expected<LinkOutcome> ReplaceSymlink(const std::filesystem::path& target,
                                     const std::filesystem::path& link);

}  // namespace iotx::files
