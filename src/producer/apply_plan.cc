#include "producer/apply_plan.h"

#include <system_error>
#include <unordered_map>
#include <utility>

#include "io/descr.h"
#include "io/safetensors.h"
#include "iotx/io_transposes.h"
#include "producer/output_checks.h"
#include "producer/permute_copy.h"
#include "core/text.h"
#include "schema/unknown_input.h"

namespace iotx::producer {
namespace {

Error MissingInput(const std::string& name, const ApplyOptions& options, const TensorSet& inputs) {
  return UnknownInputError(name, "the inputs given",
                           ListFirstNames(inputs.tensors, [](const Tensor& t) { return t.name; }))
      .InFile(options.io_transposes.string());
}

// The device layout of `tensor` under `spec`, checked against the tensor.
Expected<TransposeSpec> SpecFor(const Tensor& tensor, const TransposeSpec& spec,
                                const ApplyOptions& options) {
  const auto located = [&](Error error) {
    return Fail(std::move(error).InFile(options.io_transposes.string()).AtKey(tensor.name));
  };
  if (Status fits = CheckSpecFits(spec, tensor.shape, tensor.name); !fits) {
    return located(std::move(fits).error());
  }
  if (tensor.element_bits % 8 != 0) {
    return located(Error(ErrorCode::kUnsupported,
                         "cannot permute " + tensor.dtype + " elements (" +
                             std::to_string(tensor.element_bits) +
                             " bits each); only whole-byte element types can be transposed"));
  }
  auto simplified = Simplify(spec, tensor.shape);
  if (!simplified) return located(std::move(simplified).error());
  return std::move(*simplified);
}

// The output format's name for the tensor's element type.
Expected<std::string> OutputType(const Tensor& tensor, OutputFormat format) {
  if (format == OutputFormat::kNpy) {
    if (!tensor.descr.empty()) return tensor.descr;
    return Fail(Error(ErrorCode::kUnknownDType,
                      "dtype " + tensor.dtype +
                          " has no numpy type string, so it cannot be written as .npy; use "
                          "--format safetensors")
                    .InFile(tensor.source.string())
                    .AtKey(tensor.name));
  }
  if (!tensor.dtype.empty()) return tensor.dtype;
  Expected<DType> dtype = io::DTypeFromDescr(tensor.descr);
  Expected<std::string_view> name = Fail(ErrorCode::kUnknownDType, "");
  if (dtype) name = io::SafetensorsDTypeName(*dtype);
  if (!name) {
    return Fail(Error(ErrorCode::kUnknownDType,
                      "numpy type " + tensor.descr +
                          " has no safetensors dtype, so it cannot be written as safetensors; "
                          "use --format npy")
                    .InFile(tensor.source.string())
                    .AtKey(tensor.name));
  }
  return std::string(*name);
}

Status CheckOutDir(const std::filesystem::path& out_dir) {
  std::error_code ec;
  if (std::filesystem::exists(out_dir, ec) && !std::filesystem::is_directory(out_dir, ec)) {
    return Fail(Error(ErrorCode::kNotADirectory, "--out-dir exists and is not a directory")
                    .InFile(out_dir.string()));
  }
  return Ok();
}

}  // namespace

std::string SafetensorsOutputName(const TensorSet& inputs) { return inputs.stem + ".safetensors"; }

Expected<ApplyPlan> PlanApply(const TensorSet& inputs, const ApplyOptions& options) {
  ApplyPlan plan;
  IOTX_ASSIGN_OR_RETURN(IoTransposes specs, ReadIoTransposes(options.io_transposes.string()));
  plan.warnings = std::move(specs.warnings);

  std::unordered_map<std::string_view, const Tensor*> by_name;
  for (const Tensor& tensor : inputs.tensors) by_name.emplace(tensor.name, &tensor);
  for (const NamedSpec& named : specs.specs) {
    if (!by_name.contains(named.input_name)) {
      return Fail(MissingInput(named.input_name, options, inputs));
    }
  }

  IOTX_RETURN_IF_ERROR(CheckOutDir(options.out_dir));
  const bool npy = options.format == OutputFormat::kNpy;
  for (const Tensor& tensor : inputs.tensors) {
    PlannedTensor planned{&tensor, std::nullopt, tensor.shape, {}};
    if (const TransposeSpec* spec = specs.specs.Find(tensor.name)) {
      IOTX_ASSIGN_OR_RETURN(planned.spec, SpecFor(tensor, *spec, options));
      planned.out_shape = DeviceShape(*planned.spec);
    }
    IOTX_ASSIGN_OR_RETURN(planned.out_type, OutputType(tensor, options.format));
    if (npy) {
      if (Status fit = CheckValueFileName(tensor.name); !fit) {
        return Fail(std::move(fit).error().InFile(tensor.source.string()));
      }
      plan.files.push_back(options.out_dir / ValueFileName(tensor.name));
    }
    plan.total_bytes += tensor.data.size();
    plan.tensors.push_back(std::move(planned));
  }
  if (!npy) plan.files.push_back(options.out_dir / SafetensorsOutputName(inputs));

  std::error_code ec;
  if (std::filesystem::is_directory(options.out_dir, ec)) {
    for (const std::filesystem::path& file : plan.files) {
      IOTX_RETURN_IF_ERROR(CheckOutputFile(options.out_dir, file));
    }
  }
  return plan;
}

}  // namespace iotx::producer
