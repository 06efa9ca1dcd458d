// What is at a path a command is about to write, and whether writing there is what the user
// means. The one check every writer makes (AtomicFile::Create, ReplaceSymlink, the commands'
// checks before their first write): a write goes through a temporary file renamed over the
// final name, and rename(2) over a device, a FIFO or a socket would replace the node itself —
// as root, `--output /dev/null` would leave a regular file at /dev/null.
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>
#include <string>

#include "files/atomic_file.h"
#include "iotx/status.h"

namespace iotx::files {

enum class TargetKind {
  kAbsent,     // nothing there, or a dangling symlink: a write creates the file
  kRegular,    // a regular file or a symlink leading to one: a write replaces it
  kDirectory,  // a directory, or a symlink to one
  kStream,     // a FIFO or character device, or a path through a process's descriptors
               // (/dev/stdout, /dev/fd/N, /proc/self/fd/N): bytes go into it, it is never replaced
  kOther,      // a socket (open(2) cannot open one) or a block device: neither replaced nor
               // written into
};

// What `path` is, following symlinks as open(2) would. "What is there" in words for messages:
// DescribeTarget gives "a FIFO (named pipe)", "a character device", "/dev/stdout" style text.
TargetKind ClassifyTarget(const std::filesystem::path& path);
std::string DescribeTarget(const std::filesystem::path& path);

// Ok when `path` is absent or a regular file (a symlink to one included), so a temporary file
// may be renamed over it. A device, FIFO, socket or a path through a process's descriptors is
// kNotRegularFile naming what it is; a directory is kIoWrite ("a directory is in the way").
Status CheckReplaceable(const std::filesystem::path& path);

// `path` is none of `inputs` (the same file by device and inode, whatever the names or
// links lead there): kOutputIsInput naming both. An output directory that holds the inputs
// (or a link into the outputs) would otherwise replace the file being read, and a second run
// would transform the transformed bytes.
Status CheckNotAnInput(const std::filesystem::path& path,
                       std::span<const std::filesystem::path> inputs);

// The output of a command whose single output file the user names (`iotx wrap --output`):
// a FIFO, character device or /dev/stdout gets `bytes` written straight into it
// (piping a module on is what naming one means); anything else is written atomically
// (WriteFileAtomically, after CheckReplaceable). kIoWrite naming the path on a failed write.
Status WriteOutputFile(const std::filesystem::path& path, std::span<const std::byte> bytes,
                       const AtomicFileOptions& options = {});

}  // namespace iotx::files
