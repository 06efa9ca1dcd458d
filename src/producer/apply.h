// `iotx apply`: put a set of tensors into device layout on the host, as .npy files, one
// safetensors file, or a sharded checkpoint's shards and index, from an io_transposes file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "iotx/status.h"
#include "producer/apply_plan.h"
#include "producer/tensor_report.h"
#include "producer/tensor_set.h"

namespace iotx::producer {

struct ApplyReport {
  std::vector<Warning> warnings;
  std::vector<TensorReport> tensors;           // written by this run, in the order written
  std::vector<std::filesystem::path> files;    // written by this run, in order
  std::vector<std::filesystem::path> skipped;  // shards found complete already, not rewritten
  uint64_t total_bytes = 0;                    // tensor bytes written by this run
  // Sharded checkpoints with safetensors output:
  size_t shards = 0;                              // shards in the checkpoint
  std::vector<std::filesystem::path> incomplete;  // shard outputs still missing after this run
  std::filesystem::path index;                    // the output index, when written
};

// PlanApply, then creates out_dir and writes through the pipeline (write_pipeline.h): every
// tensor read, permuted and written with the stages overlapping, memory bounded by a few
// tensors whatever the checkpoint's size. Every file goes through a temporary renamed into
// place, so a failure or a kill never leaves a truncated file under a final name (a failure
// also removes the temporary); files completed before a failure stay, each complete.
//
// A sharded checkpoint (safetensors output) keeps its shard layout: each selected shard whose
// output is not complete already (a regular file of the expected size whose header is the
// expected one) is written; the others are skipped, so a killed run is finished by running it
// again. Then, if every shard's output is complete (this run's or another host's), the index
// is written: the input's, unchanged.
Expected<ApplyReport> Apply(const TensorSet& inputs, const ApplyOptions& options);

// For a sharded checkpoint: writes the output index when every shard's output in out_dir is
// complete, else fails with kShardedCheckpoint naming the shards missing. Writes no tensor.
Expected<ApplyReport> FinishIndex(const TensorSet& inputs, const ApplyOptions& options);

}  // namespace iotx::producer
