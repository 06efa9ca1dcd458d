// Everything the producer job decides before it writes anything (SPEC section 6): the gates,
// the specs checked against the tensors and simplified, and every path it will write checked
// to stay inside the work dir. Reading only; nothing in the work dir is changed.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "iotx/spec.h"
#include "iotx/status.h"
#include "producer/fan_out.h"
#include "producer/output_checks.h"
#include "producer/tensor_set.h"
#include "producer/workdir.h"

namespace iotx::producer {

struct MaterializeOptions {
  std::filesystem::path workdir;
  // The verify pipeline: also write transposed_inputs/value_<name>.npy and inp-000.p.
  bool verify = false;
};

struct PlannedInput {
  size_t tensor = 0;                  // in MaterializePlan::tensors
  std::optional<TransposeSpec> spec;  // simplified against the tensor's shape; none: copy
};

struct MaterializePlan {
  WorkDir workdir;
  bool verify = false;
  // Set when a gate found nothing to do (no io_transposes.json, no inp-000.p): the reason.
  // Everything below is empty then.
  std::string nothing_to_do;

  TensorSet tensors;  // inp-000.p's, in the pickle's dict order, views into its mapping
  std::vector<PlannedInput> inputs;  // with verify: every tensor, dict order; else spec'd ones
  SpecMap simplified;                // in io_transposes.json's order
  std::vector<Warning> warnings;     // e.g. a repeated input_name (the first is kept)
  std::string json_text;             // SerializeIoTransposes(simplified)
  bool json_changed = false;         // json_text differs from the file's bytes
};

// Reads the work dir and checks everything. Errors (nothing written): those of ScanWorkDir,
// of reading io_transposes.json (syntax, schema, kUnsafeName for a name unfit for a file name)
// and inp-000.p (kPickle*), kUnknownInput for a spec whose input_name is not a tensor,
// NCC_IHNW003 when a spec does not fit its tensor, and kPathUnsafe / kNotADirectory /
// kIoWrite for a path that would be written outside the work dir or is in the way (a planted
// symlink, transposed_inputs being a file, a directory named like an output).
Expected<MaterializePlan> PlanMaterialize(const MaterializeOptions& options);

}  // namespace iotx::producer
