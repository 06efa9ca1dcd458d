// Reading a whole side-file into memory, refusing what cannot be one.
#pragma once

#include <cstdint>
#include <string>

#include "iotx/status.h"

namespace iotx::files {

// The most bytes a JSON side-file (io_transposes.json, hlo_netlist.json) may have. These
// files hold a few hundred specs or names: an io_transposes.json of 500 rank-6 specs is about
// 60 KiB, and even 500 specs of 64 dims of 19-digit numbers stay under 1.5 MiB. 16 MiB leaves
// room for netlists of 100,000+ names while bounding what a wrong path (a tensor dump, a
// generated file gone wrong) can cost: parsing takes at most about 12x the file's bytes
// (docs/robustness.md has the measured worst cases), so a side-file never needs more than
// about 200 MiB.
inline constexpr int64_t kMaxSideFileBytes = int64_t{16} << 20;

// The bytes of `path`. Only a regular file (or a symlink to one) is read: a FIFO, a device or
// a socket is kIoOpen without reading (a FIFO would block until a writer came, /dev/zero never
// ends), as is a directory. kIoRead if reading fails, kJsonTooLarge past kMaxSideFileBytes,
// kOutOfMemory if the bytes do not fit in memory.
Expected<std::string> ReadTextFile(const std::string& path);

}  // namespace iotx::files
