#include "producer/apply_plan.h"

#include <algorithm>
#include <system_error>
#include <unordered_map>
#include <utility>

#include "core/text.h"
#include "io/descr.h"
#include "io/npy.h"
#include "io/safetensors.h"
#include "iotx/io_transposes.h"
#include "producer/output_checks.h"
#include "schema/unknown_input.h"

namespace iotx::producer {
namespace {

Error MissingInput(const std::string& name, const ApplyOptions& options, const TensorSet& inputs) {
  return UnknownInputError(
             name, inputs.index ? "the checkpoint's tensors" : "the inputs given",
             ListFirstNames(inputs.tensors, [](const io::Tensor& t) { return t.name; }))
      .InFile(options.io_transposes.string());
}

// The spec of `tensor`, checked against it and simplified.
Expected<TransposeSpec> SpecFor(const io::Tensor& tensor, const TransposeSpec& spec,
                                const ApplyOptions& options) {
  const auto located = [&](Error error) {
    return Fail(std::move(error).InFile(options.io_transposes.string()).AtKey(tensor.name));
  };
  if (Status fits = CheckSpecFits(spec, tensor.shape, tensor.name); !fits) {
    return located(std::move(fits).error());
  }
  // An empty tensor's reshape may name any extents beside its zero; its output must still be
  // an array a reader can make (numpy refuses one whose other extents hold more than 2^63
  // bytes, so np.load of the output would fail).
  int64_t bytes = std::max<int64_t>(tensor.element_bits / 8, 1);
  for (int64_t dim : spec.reshape) {
    if (dim != 0 && __builtin_mul_overflow(bytes, dim, &bytes)) {
      return located(Error(ErrorCode::kDimOverflow,
                           "the reshape " + ShortList(spec.reshape) +
                               " is empty, but its other extents span more than 2^63 bytes of " +
                               std::to_string(tensor.element_bits / 8) +
                               "-byte elements: no reader can make that array (numpy refuses "
                               "it)"));
    }
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

// The output's description of `tensor`: the output format's name for its dtype and its
// device shape (no data).
Expected<io::Tensor> OutputOf(const io::Tensor& tensor, const std::optional<TransposeSpec>& spec,
                              OutputFormat format) {
  io::Tensor out;
  out.name = tensor.name;
  out.element_bits = tensor.element_bits;
  out.shape = spec ? DeviceShape(*spec) : tensor.shape;
  if (format == OutputFormat::kNpy) {
    if (tensor.descr.empty()) {
      return Fail(Error(ErrorCode::kUnknownDType,
                        "dtype " + tensor.dtype +
                            " has no numpy type string, so it cannot be written as .npy; use "
                            "--format safetensors")
                      .InFile(tensor.file)
                      .AtKey(tensor.name));
    }
    out.descr = tensor.descr;
    return out;
  }
  auto dtype = io::SafetensorsDTypeOf(tensor);
  if (!dtype) {
    return Fail(Error(ErrorCode::kUnknownDType,
                      "numpy type " + tensor.descr +
                          " has no safetensors dtype, so it cannot be written as safetensors; "
                          "use --format npy")
                    .InFile(tensor.file)
                    .AtKey(tensor.name));
  }
  out.dtype = std::move(*dtype);
  return out;
}

// A source file that an earlier `iotx apply` wrote (its __metadata__ records the transposes
// applied): its tensors are in device layout, and converting them again would permute them
// twice (and record only the second spec).
Status CheckNotConverted(const TensorSet& inputs) {
  for (const SourceFile& file : inputs.files) {
    if (!file.metadata) continue;
    for (const auto& [key, value] : *file.metadata) {
      if (key != kTransposesMetadataKey) continue;
      return Fail(Error(ErrorCode::kAlreadyInDeviceLayout,
                        "its __metadata__ records \"" + std::string(kTransposesMetadataKey) +
                            "\": an iotx apply output, whose tensors are in device layout "
                            "already; converting it again would permute them twice (give the "
                            "original checkpoint)")
                      .InFile(file.path.string()));
    }
  }
  return Ok();
}

Status CheckOutDir(const std::filesystem::path& out_dir) {
  std::error_code ec;
  if (std::filesystem::exists(out_dir, ec) && !std::filesystem::is_directory(out_dir, ec)) {
    return Fail(Error(ErrorCode::kNotADirectory, "--out-dir exists and is not a directory")
                    .InFile(out_dir.string()));
  }
  return Ok();
}

bool Selected(const TensorSet& inputs, size_t file, const ApplyOptions& options) {
  if (!inputs.index || !options.shard) return true;
  return file % options.shard->count == options.shard->index;
}

// The outputs' descriptions of `tensors`, in order.
std::vector<io::Tensor> OutputsOf(const ApplyPlan& plan, const std::vector<size_t>& tensors) {
  std::vector<io::Tensor> outs;
  outs.reserve(tensors.size());
  for (size_t t : tensors) outs.push_back(plan.tensors[t].output);
  return outs;
}

// An output's __metadata__: the source's, then kTransposesMetadataKey recording the specs of
// `tensors`.
io::SafetensorsMetadata OutputMetadata(const ApplyPlan& plan, const std::vector<size_t>& tensors,
                                       const std::optional<io::SafetensorsMetadata>& source) {
  std::vector<size_t> by_name = tensors;
  std::sort(by_name.begin(), by_name.end(), [&plan](size_t a, size_t b) {
    return plan.tensors[a].output.name < plan.tensors[b].output.name;
  });
  SpecMap applied;
  for (size_t t : by_name) {
    if (plan.tensors[t].spec)
      applied.TryEmplace(plan.tensors[t].output.name, *plan.tensors[t].spec);
  }
  io::SafetensorsMetadata metadata = source.value_or(io::SafetensorsMetadata{});
  metadata.emplace_back(kTransposesMetadataKey, SerializeIoTransposes(applied));
  return metadata;
}

Expected<PlannedOutput> SafetensorsOutput(const ApplyPlan& plan, std::filesystem::path path,
                                          std::vector<size_t> tensors,
                                          const std::optional<io::SafetensorsMetadata>& metadata) {
  auto layout =
      io::SafetensorsLayout(OutputsOf(plan, tensors), OutputMetadata(plan, tensors, metadata));
  if (!layout) return Fail(std::move(layout).error().InFile(path.string()));
  return PlannedOutput{std::move(path), std::move(*layout), std::move(tensors), 0, true};
}

Status PlanOutputs(const TensorSet& inputs, const ApplyOptions& options, ApplyPlan& plan) {
  if (options.format == OutputFormat::kNpy) {
    for (size_t file = 0; file < inputs.files.size(); ++file) {
      if (!Selected(inputs, file, options)) continue;
      for (size_t t : inputs.files[file].tensors) {
        const io::Tensor& tensor = inputs.tensors[t];
        if (Status fit = CheckValueFileName(tensor.name); !fit) {
          return Fail(std::move(fit).error().InFile(tensor.file));
        }
        const std::filesystem::path path = options.out_dir / ValueFileName(tensor.name);
        const io::Tensor& out = plan.tensors[t].output;
        auto layout = io::NpyLayout(out.descr, out.shape);
        if (!layout) return Fail(std::move(layout).error().InFile(path.string()).AtKey(tensor.name));
        plan.outputs.push_back({path, std::move(*layout), {t}, file, true});
      }
    }
    return Ok();
  }
  if (inputs.index) {
    // The shard layout: each shard's tensors into a file of the same name, its metadata kept.
    for (size_t file = 0; file < inputs.files.size(); ++file) {
      const SourceFile& shard = inputs.files[file];
      IOTX_ASSIGN_OR_RETURN(
          PlannedOutput output,
          SafetensorsOutput(plan, options.out_dir / shard.path.filename(), shard.tensors,
                            shard.metadata));
      output.source = file;
      output.selected = Selected(inputs, file, options);
      plan.outputs.push_back(std::move(output));
    }
    plan.index = options.out_dir / inputs.index->path.filename();
    return Ok();
  }
  std::vector<size_t> all(inputs.tensors.size());
  for (size_t t = 0; t < all.size(); ++t) all[t] = t;
  std::optional<io::SafetensorsMetadata> metadata;
  if (inputs.files.size() == 1) metadata = inputs.files.front().metadata;
  IOTX_ASSIGN_OR_RETURN(PlannedOutput output,
                        SafetensorsOutput(plan, options.out_dir / SafetensorsOutputName(inputs),
                                          std::move(all), metadata));
  plan.outputs.push_back(std::move(output));
  return Ok();
}

}  // namespace

std::string SafetensorsOutputName(const TensorSet& inputs) { return inputs.stem + ".safetensors"; }

std::vector<std::filesystem::path> FilesRead(const TensorSet& inputs, const ApplyOptions& options) {
  std::vector<std::filesystem::path> read{options.io_transposes};
  for (const SourceFile& file : inputs.files) read.push_back(file.path);
  if (inputs.index) read.push_back(inputs.index->path);
  return read;
}

Expected<ApplyPlan> PlanApply(const TensorSet& inputs, const ApplyOptions& options) {
  ApplyPlan plan;
  // First: whatever the specs say, they were not written for tensors in device layout.
  IOTX_RETURN_IF_ERROR(CheckNotConverted(inputs));
  IOTX_ASSIGN_OR_RETURN(IoTransposes specs, ReadIoTransposes(options.io_transposes.string()));
  plan.warnings = std::move(specs.warnings);

  std::unordered_map<std::string_view, size_t> by_name;
  for (size_t t = 0; t < inputs.tensors.size(); ++t) by_name.emplace(inputs.tensors[t].name, t);
  for (const NamedSpec& named : specs.specs) {
    if (!by_name.contains(named.input_name)) {
      return Fail(MissingInput(named.input_name, options, inputs));
    }
  }
  IOTX_RETURN_IF_ERROR(CheckOutDir(options.out_dir));

  for (const io::Tensor& tensor : inputs.tensors) {
    PlannedTensor planned;
    if (const TransposeSpec* spec = specs.specs.Find(tensor.name)) {
      IOTX_ASSIGN_OR_RETURN(planned.spec, SpecFor(tensor, *spec, options));
    }
    IOTX_ASSIGN_OR_RETURN(planned.output, OutputOf(tensor, planned.spec, options.format));
    plan.tensors.push_back(std::move(planned));
  }
  IOTX_RETURN_IF_ERROR(PlanOutputs(inputs, options, plan));
  for (const PlannedOutput& output : plan.outputs) {
    if (output.selected) IOTX_RETURN_IF_ERROR(CheckOutputName(output.path));
  }
  if (!plan.index.empty()) IOTX_RETURN_IF_ERROR(CheckOutputName(plan.index));

  std::error_code ec;
  if (std::filesystem::is_directory(options.out_dir, ec)) {
    const std::vector<std::filesystem::path> read = FilesRead(inputs, options);
    for (const PlannedOutput& output : plan.outputs) {
      if (output.selected)
        IOTX_RETURN_IF_ERROR(CheckOutputFile(options.out_dir, output.path, read));
    }
    if (!plan.index.empty())
      IOTX_RETURN_IF_ERROR(CheckOutputFile(options.out_dir, plan.index, read));
  }
  return plan;
}

}  // namespace iotx::producer
