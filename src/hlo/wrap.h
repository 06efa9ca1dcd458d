// The hlo-neff-wrapper (SPEC section 5): replace the body of a module's entry computation by
// one AwsNeuronNeff custom-call that carries the NEFF and the static IO transposes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "iotx/spec.h"
#include "iotx/status.h"
#include "hlo/hlo.pb.h"

namespace iotx::hlo {

// Printed (and nothing written) when the wrapper has nothing to record.
inline constexpr std::string_view kNothingToWrapMessage =
    "There are no io transposes nor zero-sized parameters. Output will not be produced.";

struct WrapResult {
  // False when no spec names an entry parameter and no parameter is zero-sized: then
  // `module` is the input unchanged and no output should be written.
  bool produced = false;
  xla::HloModuleProto module;
  std::vector<Warning> notes;  // a spec naming no entry parameter (kUnknownInput), ignored
  size_t num_parameters = 0;
  size_t num_transposed = 0;
  size_t num_zero_sized = 0;
};

// Wraps `module` (read from `module_file`, used in diagnostics):
// - the entry computation keeps its parameter instructions exactly as they were and gets one
//   new root: opcode "custom-call", target "AwsNeuronNeff", backend_config = `neff`,
//   operand_ids = the parameters in parameter-number order, and the original root's id, name
//   and shape — a tuple result stays the custom-call's own tuple shape, so root_id and the
//   program shapes stay valid without get-tuple-element / tuple instructions;
// - frontend_attributes: valid_inputs, required_transpose and neff_input_names
//   (attributes.h), and nothing else: none of the original root's;
// - specs match parameters by frontend name (hlo_module.h); product(reshape) must equal the
//   parameter's element count, else NCC_IHNW003; a spec on a tuple-shaped parameter is
//   kHloStructure;
// - everything else is kept (other computations, program shapes, unknown fields) except
//   `schedule`, which is cleared: it lists instructions that no longer exist.
// If the root was itself a parameter, the custom-call gets a fresh id and name.
Expected<WrapResult> WrapModule(xla::HloModuleProto module, std::string neff, const SpecMap& specs,
                                const std::string& module_file);

// Whether a NEFF of `neff_bytes` fits in the wrapped `module` at all: the module keeps
// everything but its entry computation's instructions, and protobuf messages are limited to
// 2 GiB. kHloFormat naming `neff_file` otherwise — decided from the size, before the NEFF is
// read (a 2.2 GB NEFF used to be read and copied, 4.5 GB of memory, before this was found).
Status CheckNeffSize(const xla::HloModuleProto& module, uint64_t neff_bytes,
                     const std::string& neff_file);

}  // namespace iotx::hlo
