// Looking at outputs a run (this one, an earlier one, another host's) left in the out dir, and
// writing a small whole file with the chosen durability.
#pragma once

#include <filesystem>
#include <string_view>

#include "files/atomic_file.h"
#include "io/file_layout.h"
#include "iotx/status.h"

namespace iotx::producer {

// True when `path` is a regular file (or a link to one) of exactly layout.size bytes that
// starts with the layout's first literal (a safetensors file's length and header): written
// completely under the same layout. Outputs appear under their final names only once
// complete, so this is what an interrupted run leaves for a re-run to skip. Reads only the
// header.
bool OutputComplete(const std::filesystem::path& path, const io::FileLayout& layout);

// Writes `text` to `path` atomically, inside `root`, with `durability`.
Status WriteWhole(const std::filesystem::path& path, std::string_view text,
                  const std::filesystem::path& root, files::Durability durability);

}  // namespace iotx::producer
