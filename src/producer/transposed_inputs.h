// The verify pipeline's files in transposed_inputs/ (the original's dumpTransposedFiles).
#pragma once

#include "iotx/status.h"
#include "producer/materialize_plan.h"
#include "producer/tensor_report.h"

namespace iotx::producer {

// Writes transposed_inputs/value_<name>.npy for one planned input: the device layout of its
// simplified spec, or the tensor unchanged when it has none (a copy, not a link: the inputs
// live inside inp-000.p, so there is no original .npy to link to, and a copy keeps the
// folder self-contained). The kernel writes straight into the mapped output file, which is
// published atomically; the pages of both are released afterwards.
Expected<TensorReport> WriteValueFile(const MaterializePlan& plan, const PlannedInput& input);

// Writes transposed_inputs/inp-000.p: the pickle's dict in its order with every tensor
// replaced by its value_<name>.npy (so the transposed ones carry their device shape), as a
// protocol 4 pickle Python's pickle.load reads with numpy. The arrays are streamed from the
// mapped .npy files. Call after WriteValueFile for every tensor.
Status WriteTransposedPickle(const MaterializePlan& plan);

}  // namespace iotx::producer
