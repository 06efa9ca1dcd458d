// What a compiler work directory holds, as the producer job sees it (SPEC section 6).
#pragma once

#include <filesystem>
#include <vector>

#include "iotx/status.h"

namespace iotx::producer {

inline constexpr const char* kIoTransposesFile = "io_transposes.json";
inline constexpr const char* kTensorsFile = "inp-000.p";
inline constexpr const char* kTransposedDir = "transposed_inputs";

struct WorkDir {
  // The directory with every symlink resolved (realpath); all paths below are inside it.
  std::filesystem::path root;
  bool has_io_transposes = false;  // root/io_transposes.json exists (following symlinks)
  bool has_tensors = false;        // root/inp-000.p exists (following symlinks)
  // The partition dirs that receive the links: sg*/ and nc*/sg*/ (directories, or symlinks to
  // directories inside root), relative to root, sorted.
  std::vector<std::filesystem::path> partition_dirs;

  std::filesystem::path io_transposes() const { return root / kIoTransposesFile; }
  std::filesystem::path tensors() const { return root / kTensorsFile; }
  std::filesystem::path transposed_dir() const { return root / kTransposedDir; }
};

// Looks at `dir` without changing anything. Errors: kNotADirectory (`dir` is missing or not a
// directory), kIoOpen (a directory cannot be listed), kPathUnsafe (a partition dir is a
// symlink that leads outside the work dir: links written into it would land elsewhere).
Expected<WorkDir> ScanWorkDir(const std::filesystem::path& dir);

}  // namespace iotx::producer
