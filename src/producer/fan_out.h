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
// A link location that resolves to its own source — a partition dir that is a symlink to
// transposed_inputs/, transposed_inputs/ a symlink to a partition dir, a source that is a
// symlink into a partition dir — already holds the file: it is skipped, never replaced by a
// link to itself, and each partition dir with skips gets a note (kSelfLink) in `notes`.
Expected<std::vector<LinkMade>> FanOut(const WorkDir& workdir, std::span<const LinkSource> sources,
                                       std::vector<Warning>* notes = nullptr);

// The fan-out's link locations that hold something it may not replace: for every partition
// dir and name, an existing entry that is not a symlink must be a regular file
// (files::CheckReplaceable: kNotRegularFile for a device, FIFO or socket, kIoWrite for a
// directory). Checked before the first write, as the fan-out itself would refuse them.
Status CheckFanOutTargets(const WorkDir& workdir, std::span<const std::string> names);

}  // namespace iotx::producer
