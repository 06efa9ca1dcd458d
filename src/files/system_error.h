// The one way a failed system call becomes an Error: what was being done, the system's reason
// for errno, and the file it concerned.
#pragma once

#include <cerrno>
#include <filesystem>
#include <string_view>

#include "iotx/status.h"

namespace iotx::files {

// Error(code, "<what>: <strerror(errnum)>").InFile(file) (no file when `file` is empty). Pass
// errno saved right after the failing call (anything in between, even close(), may change it).
Error SystemError(ErrorCode code, std::string_view what, const std::filesystem::path& file,
                  int errnum);

}  // namespace iotx::files
