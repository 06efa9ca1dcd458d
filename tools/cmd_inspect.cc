// `iotx inspect MODULE.pb`: what a person debugging a compile wants to see of an HLO module —
// the entry parameters with their frontend names and shapes, the root, and every
// AwsNeuronNeff call with its attributes decoded per operand.
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_output.h"
#include "core/text.h"
#include "cmd_inspect.h"
#include "command.h"
#include "iotx/dims.h"
#include "hlo/hlo_module.h"
#include "hlo/module_summary.h"

namespace iotx::cli {
namespace {

using Json = nlohmann::ordered_json;


// Built with += only: GCC 12 reports a false -Wrestrict on "literal" + std::string&& here.
std::string Describe(const hlo::InstructionSummary& instruction) {
  std::string out = "\"";
  out += EscapeControl(instruction.name);
  out += "\" (id ";
  out += std::to_string(instruction.id);
  out += ") ";
  out += EscapeControl(instruction.opcode);
  out += ' ';
  out += instruction.shape;
  return out;
}

std::string DescribeOperand(const hlo::NeffOperandSummary& operand) {
  std::string out;
  if (operand.name.empty()) {
    out = "id ";
    out += std::to_string(operand.id);
  } else {
    out = "\"";
    out += EscapeControl(operand.name);
    out += '"';
  }
  if (!operand.neff_input_name.empty()) {
    out += " as ";
    out += EscapeControl(operand.neff_input_name);
  }
  if (operand.valid) out += *operand.valid ? ": fed" : ": zero-sized, not fed";
  if (operand.transpose) {
    out += ", reshape " + ToString(operand.transpose->reshape) + " transpose " +
           ToString(operand.transpose->transpose);
  } else {
    out += ", no transpose";
  }
  return out;
}

void PrintText(const hlo::ModuleSummary& summary) {
  std::cout << "module \"" << EscapeControl(summary.name) << "\" (id " << summary.id << "), "
            << summary.num_computations << " computations"
            << (summary.has_schedule ? ", scheduled" : "") << '\n';
  std::cout << "entry computation \"" << EscapeControl(summary.entry_name) << "\" (id " << summary.entry_id
            << "): " << summary.parameters.size() << " parameters, " << summary.entry_instructions
            << " instructions\n";
  for (const hlo::ParameterSummary& parameter : summary.parameters) {
    std::cout << "  parameter " << parameter.number << "  \""
              << EscapeControl(parameter.instruction.name) << "\"";
    if (parameter.frontend_name != parameter.instruction.name) {
      std::cout << " as " << EscapeControl(parameter.frontend_name);
    }
    std::cout << "  " << parameter.instruction.shape << '\n';
  }
  std::cout << "root "
            << (summary.root ? Describe(*summary.root) : "(root_id names no instruction)") << '\n';
  for (const hlo::NeffCallSummary& call : summary.neff_calls) {
    std::cout << "AwsNeuronNeff call \"" << EscapeControl(call.instruction.name) << "\" (id "
              << call.instruction.id << ") in \"" << EscapeControl(call.computation) << "\": NEFF "
              << call.neff_bytes << " bytes, " << call.operands.size() << " operands, result "
              << call.instruction.shape << '\n';
    for (const auto& [key, value] : call.attributes) {
      std::cout << "  " << EscapeControl(key) << "=\"" << EscapeControl(value) << "\"\n";
    }
    for (size_t i = 0; i < call.operands.size(); ++i) {
      std::cout << "  operand " << i << " " << DescribeOperand(call.operands[i]) << '\n';
    }
  }
}

Json DimsJson(const Dims& dims) { return Json(std::vector<int64_t>(dims.begin(), dims.end())); }

Json InstructionJson(const hlo::InstructionSummary& instruction) {
  return {{"name", instruction.name},
          {"id", instruction.id},
          {"opcode", instruction.opcode},
          {"shape", instruction.shape}};
}

Json ToJson(const hlo::ModuleSummary& summary) {
  Json parameters = Json::array();
  for (const hlo::ParameterSummary& parameter : summary.parameters) {
    parameters.push_back({{"number", parameter.number},
                          {"name", parameter.instruction.name},
                          {"id", parameter.instruction.id},
                          {"frontend_name", parameter.frontend_name},
                          {"shape", parameter.instruction.shape}});
  }
  Json calls = Json::array();
  for (const hlo::NeffCallSummary& call : summary.neff_calls) {
    Json operands = Json::array();
    for (const hlo::NeffOperandSummary& operand : call.operands) {
      Json entry = {{"id", operand.id}, {"name", operand.name}};
      entry["neff_input_name"] = operand.neff_input_name;
      entry["valid"] = operand.valid ? Json(*operand.valid) : Json(nullptr);
      entry["transpose"] = operand.transpose
                               ? Json{{"reshape", DimsJson(operand.transpose->reshape)},
                                      {"transpose", DimsJson(operand.transpose->transpose)}}
                               : Json(nullptr);
      operands.push_back(std::move(entry));
    }
    Json errors = Json::array();
    for (const Error& error : call.attribute_errors) errors.push_back(error.ToString());
    calls.push_back({{"computation", call.computation},
                     {"instruction", InstructionJson(call.instruction)},
                     {"neff_bytes", call.neff_bytes},
                     {"attributes", Json(call.attributes)},
                     {"operands", std::move(operands)},
                     {"attribute_errors", std::move(errors)}});
  }
  return {{"module",
           {{"name", summary.name},
            {"id", summary.id},
            {"computations", summary.num_computations},
            {"scheduled", summary.has_schedule}}},
          {"entry",
           {{"name", summary.entry_name},
            {"id", summary.entry_id},
            {"instructions", summary.entry_instructions}}},
          {"parameters", std::move(parameters)},
          {"root", summary.root ? InstructionJson(*summary.root) : Json(nullptr)},
          {"neff_calls", std::move(calls)}};
}

}  // namespace

int RunInspect(const InspectOptions& options) {
  auto module = hlo::ReadModule(options.module);
  if (!module) {
    PrintError(module.error());
    return kExitFailure;
  }
  auto summary = hlo::SummarizeModule(*module, options.module);
  if (!summary) {
    PrintError(summary.error());
    return kExitFailure;
  }
  if (options.json) {
    // Names may hold arbitrary bytes; replace invalid UTF-8 rather than throw.
    std::cout << ToJson(*summary).dump(2, ' ', false, Json::error_handler_t::replace) << '\n';
  } else {
    PrintText(*summary);
  }
  // Malformed attributes are shown above and make the command fail, so scripts notice.
  int exit_code = kExitOk;
  for (const hlo::NeffCallSummary& call : summary->neff_calls) {
    for (const Error& error : call.attribute_errors) {
      PrintError(error);
      exit_code = kExitFailure;
    }
  }
  return exit_code;
}

}  // namespace iotx::cli
