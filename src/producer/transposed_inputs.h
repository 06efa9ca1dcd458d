// The verify pipeline's files in transposed_inputs/ (the original's dumpTransposedFiles).
#pragma once

#include <vector>

#include "iotx/status.h"
#include "producer/materialize_plan.h"
#include "producer/tensor_report.h"

namespace iotx::producer {

// Writes, in one pass of the pipeline (write_pipeline.h), transposed_inputs/value_<name>.npy
// for every planned input — the device layout of its simplified spec, or the tensor
// unchanged when it has none (a copy, not a link: the inputs live inside inp-000.p, so there
// is no original .npy to link to, and a copy keeps the folder self-contained) — and
// transposed_inputs/inp-000.p: the pickle's dict in its order with every tensor replaced by
// its device layout, as a protocol 4 pickle Python's pickle.load reads with numpy. Each tensor
// is permuted once and written to both. Every file is published atomically; the .npy files
// finished before a failure stay. Returns what was written, in the pickle's order.
Expected<std::vector<TensorReport>> WriteTransposedInputs(const MaterializePlan& plan,
                                                          files::Durability durability);

}  // namespace iotx::producer
