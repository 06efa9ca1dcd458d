// What `iotx inspect` shows of a module: the entry computation's parameters and root, and
// every AwsNeuronNeff custom-call with its frontend attributes decoded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "iotx/spec.h"
#include "iotx/status.h"
#include "hlo/hlo.pb.h"

namespace iotx::hlo {

struct InstructionSummary {
  std::string name;
  int64_t id = 0;
  std::string opcode;
  std::string shape;  // HLO text without layout: "f32[6144,256]", "(f32[2], s32[])"
};

struct ParameterSummary {
  int64_t number = 0;
  InstructionSummary instruction;
  std::string frontend_name;  // FrontendName(): what specs match
};

// One operand of an AwsNeuronNeff call, with what the attributes say about it.
struct NeffOperandSummary {
  int64_t id = 0;
  std::string name;                        // the operand instruction's name, "" if it is not found
  std::string neff_input_name;             // from neff_input_names, "" if absent or malformed
  std::optional<bool> valid;               // from valid_inputs
  std::optional<TransposeSpec> transpose;  // from required_transpose
};

struct NeffCallSummary {
  std::string computation;
  InstructionSummary instruction;
  size_t neff_bytes = 0;  // size of backend_config
  std::vector<NeffOperandSummary> operands;
  std::map<std::string, std::string> attributes;  // every frontend attribute, as stored
  std::vector<Error> attribute_errors;  // attributes that do not parse, specs that do not fit
};

struct ModuleSummary {
  std::string name;
  int64_t id = 0;
  size_t num_computations = 0;
  std::string entry_name;
  int64_t entry_id = 0;
  size_t entry_instructions = 0;
  bool has_schedule = false;
  std::vector<ParameterSummary> parameters;  // in parameter-number order
  std::optional<InstructionSummary> root;    // nullopt when root_id names no instruction
  std::vector<NeffCallSummary> neff_calls;   // in every computation
};

// Describes `module` without judging it beyond what is needed to find the entry computation
// (FindEntryComputation's errors); malformed attributes land in attribute_errors.
Expected<ModuleSummary> SummarizeModule(const xla::HloModuleProto& module, const std::string& file);

}  // namespace iotx::hlo
