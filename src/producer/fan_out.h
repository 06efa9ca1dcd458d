// The fan-out (the original's link_root_npys_to_sg): every *.npy and *.npy.meta of
// transposed_inputs/ symlinked, to its real path, into every partition dir.
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "iotx/status.h"
#include "files/atomic_symlink.h"
#include "producer/workdir.h"

namespace iotx::producer {

struct LinkSource {
  std::string name;                 // file name in the source dir, e.g. "value_p0.npy"
  std::filesystem::path real_path;  // where it leads with every symlink followed
};

// The entries of `dir` that glob("*.npy") and glob("*.npy.meta") match (hidden names are not
// matched, so temporary files never are), sorted by name. A missing `dir` has none. Errors,
// all before anything is linked: kNotADirectory (`dir` is a file), kPathUnsafe (`dir` or an
// entry leads outside `root`, e.g. a planted symlink to /etc/passwd), kIoOpen.
Expected<std::vector<LinkSource>> ListLinkSources(const std::filesystem::path& root,
                                                  const std::filesystem::path& dir);

struct LinkMade {
  std::filesystem::path link;  // relative to the work dir, e.g. "nc0/sg00/value_p0.npy"
  std::filesystem::path target;
  files::LinkOutcome outcome;
};

// Makes workdir.root/<dir>/<name> a symlink to real_path for every partition dir and source,
// each replaced atomically (files::ReplaceSymlink), then syncs each partition dir. Stops at the first
// failure (links made so far stay: each is complete, and a re-run finishes the rest).
Expected<std::vector<LinkMade>> FanOut(const WorkDir& workdir, std::span<const LinkSource> sources);

}  // namespace iotx::producer
