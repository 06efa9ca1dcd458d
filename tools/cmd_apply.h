// `iotx apply`: put tensors into device layout on the host, per an io_transposes file.
// The options as command_line.cc parses them, and the job. No CLI11 here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace iotx::cli {

// --read-buffer-mib's default: producer::kDefaultReadBufferMax (checked in cmd_apply.cc).
inline constexpr uint64_t kDefaultReadBufferMib = 512;

struct ApplyArgs {
  std::string io_transposes;
  std::vector<std::string> input;  // NAME=FILE.npy
  std::string inputs;              // inp-000.p, model.safetensors or model.safetensors.index.json
  std::string out_dir;
  std::string format;  // "", "npy" or "safetensors"
  std::string shard;   // "K/N", or empty for every shard
  bool no_sync = false;
  bool buffered_writes = false;
  bool direct_writes = false;
  uint64_t read_buffer_mib = kDefaultReadBufferMib;
  std::string cached_reads = "auto";  // "auto", "map" or "copy"
  bool finish_index = false;
  bool quiet = false;
};

// Runs the command; returns the process exit code (command.h).
int RunApply(const ApplyArgs& args);

}  // namespace iotx::cli
