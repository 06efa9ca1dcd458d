// What `iotx apply` decides before it writes anything: the spec of every tensor, checked and
// simplified, the output dtype names and shapes, and output paths that stay in out_dir.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "iotx/spec.h"
#include "iotx/status.h"
#include "producer/tensor_set.h"

namespace iotx::producer {

enum class OutputFormat {
  kNpy,          // out_dir/value_<name>.npy per tensor
  kSafetensors,  // out_dir/<stem>.safetensors holding every tensor
};

struct ApplyOptions {
  std::filesystem::path io_transposes;
  std::filesystem::path out_dir;  // created (with parents) when missing
  OutputFormat format = OutputFormat::kNpy;
  // Called with (bytes done, bytes total) before the first tensor and after each one.
  std::function<void(uint64_t, uint64_t)> progress;
};

struct PlannedTensor {
  const Tensor* tensor = nullptr;
  std::optional<TransposeSpec> spec;  // simplified against the tensor's shape; none: copy
  Dims out_shape;                     // the device shape
  std::string out_type;               // the output's name for the dtype: "<V2" or "BF16"
};

struct ApplyPlan {
  std::vector<PlannedTensor> tensors;        // in the input's order
  std::vector<Warning> warnings;             // e.g. a repeated input_name in the io_transposes file
  std::vector<std::filesystem::path> files;  // npy: one per tensor, in order; else one
  uint64_t total_bytes = 0;
};

// "<stem>.safetensors": the safetensors output's name inside out_dir.
std::string SafetensorsOutputName(const TensorSet& inputs);

// Reads options.io_transposes and checks everything before anything is written: every spec
// names a given tensor (kUnknownInput) and holds its element count (NCC_IHNW003, naming both
// shapes), elements are whole bytes where a spec permutes them (kUnsupported), every tensor
// has a dtype name in the output format (kUnknownDType), names fit value_<name>.npy
// (kUnsafeName), output paths stay inside out_dir (kPathUnsafe for a symlink leading out) and
// out_dir is not a file (kNotADirectory). A repeated input_name in the file keeps the first
// element, with a warning. Reads only.
Expected<ApplyPlan> PlanApply(const TensorSet& inputs, const ApplyOptions& options);

}  // namespace iotx::producer
