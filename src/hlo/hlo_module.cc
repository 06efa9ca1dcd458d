#include "hlo/hlo_module.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/stubs/logging.h>

#include <algorithm>
#include <climits>
#include <set>
#include <span>
#include <utility>

#include "files/atomic_file.h"
#include "files/mapped_file.h"
#include "files/output_target.h"
#include "iotx/attributes.h"
#include "hlo/hlo_shape.h"

namespace iotx::hlo {
namespace {

constexpr std::string_view kParameterOpcode = "parameter";

std::string Describe(const xla::HloInstructionProto& instruction) {
  return "\"" + instruction.name() + "\" (id " + std::to_string(instruction.id()) + ")";
}

}  // namespace

Error StructureError(std::string message, const std::string& file) {
  return Error(ErrorCode::kHloStructure, std::move(message)).InFile(file);
}

std::string FrontendName(const xla::HloModuleProto& module,
                         const xla::HloComputationProto& computation,
                         const xla::HloInstructionProto& instruction) {
  const auto& attributes = instruction.frontend_attributes().map();
  if (auto it = attributes.find(std::string(kNeffInputNamesAttr)); it != attributes.end()) {
    return it->second;
  }
  if (!instruction.name().empty()) return instruction.name();
  const int64_t number = instruction.parameter_number();
  for (const xla::ProgramShapeProto* shape :
       {&computation.program_shape(), &module.host_program_shape()}) {
    if (number >= 0 && number < shape->parameter_names_size() &&
        !shape->parameter_names(static_cast<int>(number)).empty()) {
      return shape->parameter_names(static_cast<int>(number));
    }
  }
  return "";
}

Expected<xla::HloModuleProto> ParseModule(std::string_view bytes, const std::string& file) {
  auto not_a_module = [&file](const std::string& why) {
    return Fail(
        Error(ErrorCode::kHloFormat, "not a serialized xla.HloModuleProto: " + why).InFile(file));
  };
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    return not_a_module("protobuf messages are limited to 2 GiB and this file has " +
                        std::to_string(bytes.size()) + " bytes");
  }
  if (bytes.starts_with("HloModule ")) {
    return not_a_module("this is HLO text; pass the binary protobuf (e.g. a *.hlo_module.pb)");
  }
  xla::HloModuleProto module;
  {
    // protobuf logs invalid UTF-8 in string fields itself; our error says it instead.
    google::protobuf::LogSilencer silence_protobuf_log;
    if (!module.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      return not_a_module("the protobuf wire format does not parse as one");
    }
  }
  if (module.computations_size() == 0) {
    return not_a_module("it holds no computations");
  }
  return module;
}

Expected<xla::HloModuleProto> ReadModule(const std::string& path) {
  IOTX_ASSIGN_OR_RETURN(auto file, files::MappedFile::Open(path));
  std::span<const std::byte> bytes = file->bytes();
  return ParseModule(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                     path);
}

namespace {

Expected<size_t> SerializedSize(const xla::HloModuleProto& module) {
  const size_t size = module.ByteSizeLong();
  if (size > static_cast<size_t>(INT_MAX)) {
    return Fail(ErrorCode::kHloFormat, "the module would serialize to " + std::to_string(size) +
                                           " bytes, over protobuf's 2 GiB message limit");
  }
  return size;
}

// Writes the module into `out` (exactly SerializedSize bytes), map entries sorted by key.
void SerializeInto(const xla::HloModuleProto& module, std::span<std::byte> out) {
  google::protobuf::io::ArrayOutputStream stream(out.data(), static_cast<int>(out.size()));
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  module.SerializeWithCachedSizes(&coded);  // sizes cached by ByteSizeLong in SerializedSize
}

}  // namespace

Expected<std::string> SerializeModule(const xla::HloModuleProto& module) {
  IOTX_ASSIGN_OR_RETURN(const size_t size, SerializedSize(module));
  std::string out(size, '\0');
  SerializeInto(module, std::as_writable_bytes(std::span<char>(out.data(), out.size())));
  return out;
}

Status WriteModule(const xla::HloModuleProto& module, const std::string& path) {
  auto size = SerializedSize(module);
  if (!size) return Fail(std::move(size).error().InFile(path));
  if (files::ClassifyTarget(path) == files::TargetKind::kStream) {
    // A FIFO, /dev/stdout or /dev/null: the bytes go into it (files::WriteOutputFile).
    std::string bytes(*size, '\0');
    SerializeInto(module, std::as_writable_bytes(std::span<char>(bytes.data(), bytes.size())));
    return files::WriteOutputFile(path, std::as_bytes(std::span<const char>(bytes)));
  }
  IOTX_ASSIGN_OR_RETURN(files::AtomicFile file, files::AtomicFile::Create(path));
  // Serializing straight into the mapped file keeps one copy of a large NEFF in memory, not two.
  IOTX_ASSIGN_OR_RETURN(std::span<std::byte> out, file.Map(*size));
  SerializeInto(module, out);
  return file.Commit();
}

Expected<int> FindEntryComputation(const xla::HloModuleProto& module, const std::string& file) {
  const int64_t id = module.entry_computation_id();
  const std::string& name = module.entry_computation_name();
  int by_id = -1;
  int by_name = -1;
  for (int i = 0; i < module.computations_size(); ++i) {
    const xla::HloComputationProto& computation = module.computations(i);
    if (by_id < 0 && computation.id() == id) by_id = i;
    if (by_name < 0 && !name.empty() && computation.name() == name) by_name = i;
  }
  const bool id_may_be_unset = id == 0 && !name.empty();
  int found = id_may_be_unset ? (by_name >= 0 ? by_name : by_id) : (by_id >= 0 ? by_id : by_name);
  if (found >= 0) return found;

  std::string listing;
  for (const xla::HloComputationProto& computation : module.computations()) {
    if (!listing.empty()) listing += ", ";
    listing += "\"" + computation.name() + "\" (id " + std::to_string(computation.id()) + ")";
  }
  return Fail(StructureError("no entry computation: no computation has entry_computation_id " +
                                 std::to_string(id) + " or entry_computation_name \"" + name +
                                 "\"; the module has " + listing,
                             file));
}

int FindInstruction(const xla::HloComputationProto& computation, int64_t id) {
  for (int i = 0; i < computation.instructions_size(); ++i) {
    if (computation.instructions(i).id() == id) return i;
  }
  return -1;
}

Expected<std::vector<EntryParameter>> EntryParameters(const xla::HloModuleProto& module,
                                                      const xla::HloComputationProto& computation,
                                                      const std::string& file) {
  std::vector<EntryParameter> parameters;
  for (int i = 0; i < computation.instructions_size(); ++i) {
    const xla::HloInstructionProto& instruction = computation.instructions(i);
    if (instruction.opcode() != kParameterOpcode) continue;
    const std::string where = "parameter " + Describe(instruction);
    if (!instruction.has_shape()) return Fail(StructureError(where + " has no shape", file));
    if (instruction.shape().element_type() == xla::PRIMITIVE_TYPE_INVALID) {
      return Fail(StructureError(where + " has a shape without an element type", file));
    }
    if (instruction.parameter_number() < 0) {
      return Fail(StructureError(where + " has parameter_number " +
                                     std::to_string(instruction.parameter_number()) +
                                     "; expected 0 or more",
                                 file));
    }
    EntryParameter parameter;
    parameter.instruction_index = i;
    parameter.number = instruction.parameter_number();
    parameter.id = instruction.id();
    if (IsArray(instruction.shape())) {
      parameter.element_count = ArrayElementCount(instruction.shape());
      if (!parameter.element_count) {
        return Fail(StructureError(where + " has shape " + ShapeToString(instruction.shape()) +
                                       ", whose element count is negative or overflows int64",
                                   file));
      }
    }
    parameter.frontend_name = FrontendName(module, computation, instruction);
    if (parameter.frontend_name.empty()) {
      return Fail(StructureError(where + " has no name: no neff_input_names attribute, "
                                         "instruction name or program shape parameter name",
                                 file));
    }
    if (parameter.frontend_name.find(',') != std::string::npos) {
      return Fail(StructureError(where + " is named \"" + parameter.frontend_name +
                                     "\", but neff_input_names joins names with ','",
                                 file));
    }
    parameters.push_back(std::move(parameter));
  }

  std::stable_sort(
      parameters.begin(), parameters.end(),
      [](const EntryParameter& a, const EntryParameter& b) { return a.number < b.number; });
  std::set<std::string_view> names;
  for (size_t k = 0; k < parameters.size(); ++k) {
    const auto& instruction = computation.instructions(parameters[k].instruction_index);
    if (k > 0 && parameters[k].number == parameters[k - 1].number) {
      const auto& first = computation.instructions(parameters[k - 1].instruction_index);
      return Fail(StructureError("duplicate parameter number " +
                                     std::to_string(parameters[k].number) + ": parameters " +
                                     Describe(first) + " and " + Describe(instruction),
                                 file));
    }
    if (parameters[k].number != static_cast<int64_t>(k)) {
      return Fail(StructureError(
          "parameter numbers must run 0.." + std::to_string(parameters.size() - 1) +
              ", but parameter " + std::to_string(k) + " is missing (parameter " +
              Describe(instruction) + " has number " + std::to_string(parameters[k].number) + ")",
          file));
    }
    if (!names.insert(parameters[k].frontend_name).second) {
      return Fail(StructureError("two parameters share the frontend name \"" +
                                     parameters[k].frontend_name +
                                     "\"; specs match parameters by name",
                                 file));
    }
  }
  return parameters;
}

}  // namespace iotx::hlo
