// Checks made on every file the producer tools will write, before the first one is written.
#pragma once

#include <filesystem>
#include <span>
#include <string>

#include "iotx/status.h"

namespace iotx::producer {

// "value_<name>.npy"
std::string ValueFileName(const std::string& input_name);

// The name is fit for value_<name>.npy: CheckInputName (not empty, ".", ".."; no '/', '\\',
// NUL; short enough that the file and the temporary it is written through stay within
// NAME_MAX), kUnsafeName otherwise.
Status CheckValueFileName(const std::string& input_name);

// `path`'s file name leaves room for the temporary an atomic write goes through
// (files::kMaxAtomicFileNameBytes): kIoWrite naming it and its length otherwise. Asked of names
// that come from the input files (a safetensors output, the shards, the index) before
// anything is written, where the write itself would fail only on reaching them.
Status CheckOutputName(const std::filesystem::path& path);

// `path` resolves inside `root` — a symlink at `path` or on the way that leads out is
// kPathUnsafe, as the write would land outside — and is not a directory (kIoWrite) nor a
// device, FIFO or socket (kNotRegularFile, files::CheckReplaceable), nor one of the files the
// run reads, `inputs` (kOutputIsInput, files::CheckNotAnInput).
Status CheckOutputFile(const std::filesystem::path& root, const std::filesystem::path& path,
                       std::span<const std::filesystem::path> inputs = {});

}  // namespace iotx::producer
