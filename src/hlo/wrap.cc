#include "hlo/wrap.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>

#include "iotx/attributes.h"
#include "hlo/hlo_module.h"
#include "hlo/hlo_shape.h"
#include "core/text.h"

namespace iotx::hlo {
namespace {

constexpr std::string_view kCustomCallOpcode = "custom-call";
constexpr size_t kNamesListedInNotes = 8;

std::string ListNames(const std::vector<EntryParameter>& parameters) {
  return ListFirstNames(
      parameters, [](const EntryParameter& p) { return p.frontend_name; }, kNamesListedInNotes);
}

// Checks `spec` against the parameter it names (SPEC section 5, NCC_IHNW003).
Status CheckAgainstParameter(const NamedSpec& named, const xla::HloInstructionProto& parameter,
                             const std::optional<int64_t>& element_count, const std::string& file) {
  const std::string& name = named.input_name;
  if (!element_count) {
    return Fail(StructureError("io_transpose for input \"" + name + "\": the parameter has shape " +
                                   ShapeToString(parameter.shape()) +
                                   "; a transpose needs an array",
                               file)
                    .AtKey(name));
  }
  const auto& dims = parameter.shape().dimensions();
  const std::vector<int64_t> shape(dims.begin(), dims.end());
  if (Status fits = CheckSpecFits(named.spec, shape, name); !fits) {
    return Fail(std::move(fits).error().InFile(file));
  }
  return Ok();
}

// A name no instruction of the module has, starting from `base`.
std::string UniqueName(const xla::HloModuleProto& module, const std::string& base) {
  std::set<std::string_view> taken;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation.instructions()) taken.insert(instruction.name());
  }
  std::string name = base;
  for (int suffix = 1; taken.count(name) != 0; ++suffix) name = base + "." + std::to_string(suffix);
  return name;
}

int64_t LargestInstructionId(const xla::HloModuleProto& module) {
  int64_t largest = 0;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation.instructions()) {
      largest = std::max(largest, instruction.id());
    }
  }
  return largest;
}

}  // namespace

Status CheckNeffSize(const xla::HloModuleProto& module, uint64_t neff_bytes,
                     const std::string& neff_file) {
  // The wrapped module keeps everything but the entry computation's instructions (and the
  // schedule), so its size is at least what is kept plus the NEFF.
  uint64_t kept = module.ByteSizeLong();
  const uint64_t limit = static_cast<uint64_t>(std::numeric_limits<int32_t>::max());
  if (Expected<int> entry = FindEntryComputation(module, neff_file)) {
    const uint64_t entry_bytes = module.computations(*entry).ByteSizeLong();
    kept -= std::min(kept, entry_bytes + module.schedule().ByteSizeLong());
  }
  if (neff_bytes > limit || kept + neff_bytes > limit) {
    return Fail(Error(ErrorCode::kHloFormat,
                      "the NEFF has " + FormatBytes(neff_bytes) +
                          ", so the wrapped module would have more than protobuf's 2 GiB "
                          "message limit (" +
                          FormatBytes(kept) + " of the module are kept besides it)")
                    .InFile(neff_file));
  }
  return Ok();
}

Expected<WrapResult> WrapModule(xla::HloModuleProto module, std::string neff, const SpecMap& specs,
                                const std::string& module_file) {
  IOTX_ASSIGN_OR_RETURN(const int entry_index, FindEntryComputation(module, module_file));
  IOTX_ASSIGN_OR_RETURN(std::vector<EntryParameter> parameters,
                        EntryParameters(module, module.computations(entry_index), module_file));
  const xla::HloComputationProto& entry = module.computations(entry_index);

  WrapResult result;
  result.num_parameters = parameters.size();
  std::unordered_map<std::string_view, size_t> by_name;
  for (size_t k = 0; k < parameters.size(); ++k) by_name.emplace(parameters[k].frontend_name, k);

  std::vector<std::optional<TransposeSpec>> transposes(parameters.size());
  for (const NamedSpec& named : specs) {
    auto it = by_name.find(named.input_name);
    if (it == by_name.end()) {
      result.notes.push_back(Warning(ErrorCode::kUnknownInput,
                                     "io_transpose for \"" + named.input_name +
                                         "\" names no entry parameter; ignored (parameters: " +
                                         ListNames(parameters) + ")")
                                 .InFile(module_file)
                                 .AtKey(named.input_name));
      continue;
    }
    const EntryParameter& parameter = parameters[it->second];
    IOTX_RETURN_IF_ERROR(CheckAgainstParameter(named,
                                               entry.instructions(parameter.instruction_index),
                                               parameter.element_count, module_file));
    transposes[it->second] = named.spec;
    ++result.num_transposed;
  }
  std::vector<bool> valid_inputs;
  std::vector<std::string> names;
  for (const EntryParameter& parameter : parameters) {
    valid_inputs.push_back(!parameter.zero_sized());
    names.push_back(parameter.frontend_name);
    if (parameter.zero_sized()) ++result.num_zero_sized;
  }
  if (result.num_transposed == 0 && result.num_zero_sized == 0) {
    result.module = std::move(module);
    return result;
  }

  const int root_index = FindInstruction(entry, entry.root_id());
  if (root_index < 0) {
    return Fail(StructureError("entry computation \"" + entry.name() + "\" has root_id " +
                                   std::to_string(entry.root_id()) + ", which names no instruction",
                               module_file));
  }
  const xla::HloInstructionProto& root = entry.instructions(root_index);
  if (!root.has_shape()) {
    return Fail(
        StructureError("root instruction \"" + root.name() + "\" has no shape", module_file));
  }

  xla::HloInstructionProto call;
  call.set_opcode(std::string(kCustomCallOpcode));
  call.set_custom_call_target(std::string(kAwsNeuronNeffTarget));
  *call.mutable_shape() = root.shape();
  // Only our three attributes: the old root's (whatever its frontend put there) described an
  // instruction that is gone, and a runtime reading the call must see the wrapper's alone.
  if (root.opcode() == "parameter") {
    // The parameter stays, so the call cannot take over its id or name.
    call.set_id(LargestInstructionId(module) + 1);
    call.set_name(
        UniqueName(module, std::string(kCustomCallOpcode) + "." + std::to_string(call.id())));
  } else {
    call.set_id(root.id());
    call.set_name(root.name());
  }
  for (const EntryParameter& parameter : parameters) call.add_operand_ids(parameter.id);
  auto& attributes = *call.mutable_frontend_attributes()->mutable_map();
  attributes[std::string(kValidInputsAttr)] = FormatValidInputs(valid_inputs);
  attributes[std::string(kRequiredTransposeAttr)] = FormatRequiredTranspose(transposes);
  attributes[std::string(kNeffInputNamesAttr)] = FormatNeffInputNames(names);
  call.set_backend_config(std::move(neff));

  // Parameters keep their place in the instruction list (operands before users still holds:
  // they have none), then the call.
  std::vector<int> kept;
  for (const EntryParameter& parameter : parameters) kept.push_back(parameter.instruction_index);
  std::sort(kept.begin(), kept.end());
  xla::HloComputationProto& mutable_entry = *module.mutable_computations(entry_index);
  google::protobuf::RepeatedPtrField<xla::HloInstructionProto> instructions;
  for (int index : kept) {
    *instructions.Add() = std::move(*mutable_entry.mutable_instructions(index));
  }
  mutable_entry.set_root_id(call.id());
  *instructions.Add() = std::move(call);
  mutable_entry.mutable_instructions()->Swap(&instructions);
  module.clear_schedule();

  result.produced = true;
  result.module = std::move(module);
  return result;
}

}  // namespace iotx::hlo
