// What `iotx apply` decides before it writes anything: the spec of every tensor, checked and
// simplified, every output file laid out (its path, header and where each tensor goes), and
// output paths that stay in out_dir.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "files/atomic_file.h"
#include "io/file_layout.h"
#include "io/tensor.h"
#include "iotx/spec.h"
#include "iotx/status.h"
#include "producer/tensor_set.h"
#include "producer/write_pipeline.h"

namespace iotx::producer {

enum class OutputFormat {
  kNpy,          // out_dir/value_<name>.npy per tensor
  kSafetensors,  // one out_dir/<stem>.safetensors, or one per shard of a sharded checkpoint
};

// --shard K/N: the source files at positions K, K + N, K + 2N, ... (from 0, in name order).
struct ShardSelection {
  size_t index = 0;
  size_t count = 1;
};

struct ApplyOptions {
  std::filesystem::path io_transposes;
  std::filesystem::path out_dir;  // created (with parents) when missing
  OutputFormat format = OutputFormat::kNpy;
  files::Durability durability = files::Durability::kDurable;
  // Durable outputs go to the disk with direct I/O where the file system supports it
  // (PipelineOptions::direct_writes); false writes them through the page cache.
  bool direct_writes = true;
  // Outputs written without durability go directly too past this many bytes
  // (PipelineOptions::unsynced_direct_above; nullopt: the kernel's dirty-page limit).
  std::optional<uint64_t> unsynced_direct_above = std::nullopt;
  // Tensors to permute up to this size are read into buffers (PipelineOptions::read_buffer_max).
  uint64_t read_buffer_max = kDefaultReadBufferMax;
  CachedReads cached_reads = CachedReads::kMeasured;  // PipelineOptions::cached_reads
  std::optional<ShardSelection> shard;  // only for a sharded checkpoint
  // Called with (bytes done, bytes total) before the first tensor and after each one, from
  // one thread at a time.
  std::function<void(uint64_t, uint64_t)> progress;
};

// The `__metadata__` key under which every safetensors output of `iotx apply` records the
// transposes applied to its tensors: their simplified specs as io_transposes.json holds them
// (SerializeIoTransposes), in name order, "[]" for none. A re-run that finds a complete shard
// laid out for other specs (a square matrix transposed or not keeps its shape) rewrites it,
// and a file that carries the key is refused as an input (IOTX_E222): its tensors are in
// device layout already.
inline constexpr std::string_view kTransposesMetadataKey = "iotx.io_transposes";

struct PlannedTensor {
  std::optional<TransposeSpec> spec;  // simplified against the tensor's shape; none: a copy
  io::Tensor output;                  // name, the output format's dtype name, device shape
};

struct PlannedOutput {
  std::filesystem::path path;
  io::FileLayout layout;
  std::vector<size_t> tensors;  // in TensorSet::tensors, in the order the layout was made
  size_t source = 0;            // the source file it comes from (sharded checkpoints)
  bool selected = true;         // written by this run (--shard leaves the others to others)
};

struct ApplyPlan {
  std::vector<Warning> warnings;       // e.g. a repeated input_name in the io_transposes file
  std::vector<PlannedTensor> tensors;  // per TensorSet tensor
  // Sharded checkpoint with safetensors output: one per shard, in name order, selected or not
  // (every run checks the others for completeness); otherwise what this run writes.
  std::vector<PlannedOutput> outputs;
  std::filesystem::path index;  // out_dir/<the index's name>; empty unless sharded
};

// The output dir's name for a single safetensors output: "<stem>.safetensors".
std::string SafetensorsOutputName(const TensorSet& inputs);

// The files a run reads: the spec file, every source file and a sharded checkpoint's index.
// No output may be one of them (PlanApply), and the cleanup of killed runs' temporaries
// keeps them whatever their names (Apply).
std::vector<std::filesystem::path> FilesRead(const TensorSet& inputs, const ApplyOptions& options);

// Reads options.io_transposes and checks everything, for every tensor of every file (so each
// host of a fleet fails the same way), before anything is written: every spec names a tensor
// (kUnknownInput) and holds its element count (NCC_IHNW003, naming both shapes), elements are
// whole bytes where a spec permutes them (kUnsupported), every tensor has a dtype name in the
// output format (kUnknownDType), names fit value_<name>.npy (kUnsafeName), output paths stay
// inside out_dir (kPathUnsafe for a symlink leading out), none is a file the run reads
// (kOutputIsInput: an out_dir that holds the inputs) and out_dir is not a file
// (kNotADirectory). A repeated input_name in the file keeps the first element, with a
// warning. Reads only.
Expected<ApplyPlan> PlanApply(const TensorSet& inputs, const ApplyOptions& options);

}  // namespace iotx::producer
