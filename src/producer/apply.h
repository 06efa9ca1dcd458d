// `iotx apply`: put a set of tensors into device layout on the host, as .npy files or one
// safetensors file, from an io_transposes file.
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
  std::vector<TensorReport> tensors;         // in the input's order
  std::vector<std::filesystem::path> files;  // written, in order
  uint64_t total_bytes = 0;
};

// PlanApply, then creates out_dir and writes: each tensor moved by the parallel kernel from
// its input mapping straight into the output mapping, pages released after each, so memory
// stays near one tensor whatever the checkpoint's size. Every file goes through a temporary
// renamed into place, so a failure or a kill never leaves a truncated file under a final name
// (a failure also removes the temporary). Safetensors output is all or nothing; with npy
// output the files completed before an I/O failure stay, each complete.
Expected<ApplyReport> Apply(const TensorSet& inputs, const ApplyOptions& options);

}  // namespace iotx::producer
