// The producer job (SPEC section 6; the compiler's StaticIOTranspose): simplify the work
// dir's specs against the tensors, rewrite io_transposes.json, with verify materialize the
// transposed inputs, and fan them out into the partition dirs.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "iotx/status.h"
#include "producer/fan_out.h"
#include "producer/materialize_plan.h"
#include "producer/tensor_report.h"

namespace iotx::producer {

struct MaterializeReport {
  std::filesystem::path root;  // the work dir, symlinks resolved
  // Set when a gate found nothing to do; nothing was touched then.
  std::string nothing_to_do;
  std::vector<Warning> warnings;
  size_t spec_count = 0;
  // Without verify: the inputs that have a spec (no file written). With verify: every input,
  // each written to transposed_inputs/value_<name>.npy.
  std::vector<TensorReport> inputs;
  bool json_rewritten = false;  // false when the file already held the simplified list
  bool pickle_written = false;  // transposed_inputs/inp-000.p (verify only)
  size_t stale_temps_removed = 0;
  std::vector<LinkMade> links;
};

// Runs the job. Everything is checked before the first write (PlanMaterialize); then, with
// verify, transposed_inputs/ is created and filled (value_<name>.npy in the pickle's order,
// then inp-000.p), io_transposes.json is replaced if its bytes change, and the fan-out links
// every *.npy / *.npy.meta of transposed_inputs/ into every sg*/ and nc*/sg*/. Every file is
// written atomically and every link replaced atomically, so a run killed at any point leaves
// complete files under final names, and a re-run (which also removes the killed run's
// temporaries) finishes the job; re-running a finished job changes no byte.
Expected<MaterializeReport> Materialize(const MaterializeOptions& options);

}  // namespace iotx::producer
