// Reading a whole side-file into memory, refusing what cannot be one.
#pragma once

#include <cstdint>
#include <string>

#include "iotx/status.h"

namespace iotx::files {

// JSON side-files are kilobytes; a bound keeps a wrong path (a device, a tensor dump) from
// being slurped into memory.
inline constexpr int64_t kMaxSideFileBytes = int64_t{256} << 20;

// The bytes of `path`. kIoOpen if it cannot be opened or is a directory, kIoRead if reading
// fails, kJsonTooLarge past kMaxSideFileBytes.
Expected<std::string> ReadTextFile(const std::string& path);

}  // namespace iotx::files
