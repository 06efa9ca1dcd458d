// Cleaning up after killed runs: an atomic write killed midway leaves its hidden temporary
// file beside the target (".NAME.tmp-<pid>-…" from files::AtomicFile, ".NAME.tmp-link-<pid>-…"
// from ReplaceSymlink). Never under a final name, but a work dir that saw many killed runs
// would collect tens of MB each time.
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>
#include <string>

namespace iotx::files {

// Removes the entries of `dir` that are such temporaries of one of `names`, are not
// themselves one of `names`, and whose process <pid> no longer exists (kill(pid, 0) says ESRCH), so
// a run going on in parallel keeps its files. `keep`: files that stay whatever their names
// spell, compared by identity (device and inode, as CheckNotAnInput compares them): the run's
// inputs, and outputs that other runs write (a shard another host converts may be named like
// a temporary of one this run writes; only this run's own outputs go in `names`, since another
// host's live writer is not a process here). Returns how many were removed. Best effort: a
// directory that cannot be listed or an entry that cannot be removed is left as it is.
size_t RemoveStaleTemps(const std::filesystem::path& dir, std::span<const std::string> names,
                        std::span<const std::filesystem::path> keep = {});

}  // namespace iotx::files
