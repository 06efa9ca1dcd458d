#include "hlo/module_summary.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "hlo/hlo_module.h"
#include "hlo/hlo_shape.h"
#include "iotx/attributes.h"
#include "iotx/spec.h"

namespace iotx::hlo {
namespace {

InstructionSummary Summarize(const xla::HloInstructionProto& instruction) {
  return {instruction.name(), instruction.id(), instruction.opcode(),
          instruction.has_shape() ? ShapeToString(instruction.shape()) : std::string("(none)")};
}

// Decodes the three attributes of one call onto its operands; a missing attribute leaves its
// fields empty, a malformed one is recorded with the call's file.
void DecodeAttributes(NeffCallSummary& call, const std::string& file) {
  const size_t n = call.operands.size();
  auto record = [&](Error error) {
    error.file = file;
    call.attribute_errors.push_back(std::move(error));
  };
  auto find = [&call](std::string_view key) -> const std::string* {
    auto it = call.attributes.find(std::string(key));
    return it == call.attributes.end() ? nullptr : &it->second;
  };
  if (const std::string* text = find(kValidInputsAttr)) {
    if (auto valid = ParseValidInputs(*text, n)) {
      for (size_t i = 0; i < n; ++i) call.operands[i].valid = (*valid)[i];
    } else {
      record(std::move(valid).error());
    }
  }
  if (const std::string* text = find(kRequiredTransposeAttr)) {
    if (auto specs = ParseRequiredTranspose(*text, n)) {
      for (size_t i = 0; i < n; ++i) call.operands[i].transpose = std::move((*specs)[i]);
    } else {
      record(std::move(specs).error());
    }
  }
  if (const std::string* text = find(kNeffInputNamesAttr)) {
    if (auto names = ParseNeffInputNames(*text, n)) {
      for (size_t i = 0; i < n; ++i) call.operands[i].neff_input_name = std::move((*names)[i]);
    } else {
      record(std::move(names).error());
    }
  }
}

NeffCallSummary SummarizeCall(const xla::HloComputationProto& computation,
                              const xla::HloInstructionProto& instruction,
                              const std::string& file) {
  NeffCallSummary call;
  call.computation = computation.name();
  call.instruction = Summarize(instruction);
  call.neff_bytes = instruction.backend_config().size();
  for (const auto& [key, value] : instruction.frontend_attributes().map()) {
    call.attributes.emplace(key, value);
  }
  std::vector<const xla::HloInstructionProto*> found;
  for (int64_t id : instruction.operand_ids()) {
    NeffOperandSummary operand;
    operand.id = id;
    const int index = FindInstruction(computation, id);
    found.push_back(index >= 0 ? &computation.instructions(index) : nullptr);
    if (found.back() != nullptr) operand.name = found.back()->name();
    call.operands.push_back(std::move(operand));
  }
  DecodeAttributes(call, file);
  // A spec that does not fit its operand parses, but the runtime refuses it (NCC_IHNW003, as
  // InputTransformer::FromAttributes would): reported with the attributes' errors.
  for (size_t i = 0; i < call.operands.size(); ++i) {
    const NeffOperandSummary& operand = call.operands[i];
    if (!operand.transpose || found[i] == nullptr || !IsArray(found[i]->shape())) continue;
    const auto& dims = found[i]->shape().dimensions();
    const std::vector<int64_t> shape(dims.begin(), dims.end());
    const std::string& name =
        operand.neff_input_name.empty() ? operand.name : operand.neff_input_name;
    if (Status fits = CheckSpecFits(*operand.transpose, shape, name); !fits) {
      Error error = std::move(fits).error();
      error.file = file;
      call.attribute_errors.push_back(std::move(error));
    }
  }
  return call;
}

}  // namespace

Expected<ModuleSummary> SummarizeModule(const xla::HloModuleProto& module,
                                        const std::string& file) {
  IOTX_ASSIGN_OR_RETURN(const int entry_index, FindEntryComputation(module, file));
  const xla::HloComputationProto& entry = module.computations(entry_index);

  ModuleSummary summary;
  summary.name = module.name();
  summary.id = module.id();
  summary.num_computations = static_cast<size_t>(module.computations_size());
  summary.entry_name = entry.name();
  summary.entry_id = entry.id();
  summary.entry_instructions = static_cast<size_t>(entry.instructions_size());
  summary.has_schedule = module.has_schedule();
  for (const xla::HloInstructionProto& instruction : entry.instructions()) {
    if (instruction.opcode() != "parameter") continue;
    summary.parameters.push_back({instruction.parameter_number(), Summarize(instruction),
                                  FrontendName(module, entry, instruction)});
  }
  std::stable_sort(
      summary.parameters.begin(), summary.parameters.end(),
      [](const ParameterSummary& a, const ParameterSummary& b) { return a.number < b.number; });
  if (int root = FindInstruction(entry, entry.root_id()); root >= 0) {
    summary.root = Summarize(entry.instructions(root));
  }
  for (const xla::HloComputationProto& computation : module.computations()) {
    for (const xla::HloInstructionProto& instruction : computation.instructions()) {
      if (instruction.opcode() == "custom-call" &&
          instruction.custom_call_target() == kAwsNeuronNeffTarget) {
        summary.neff_calls.push_back(SummarizeCall(computation, instruction, file));
      }
    }
  }
  return summary;
}

}  // namespace iotx::hlo
