#include "producer/apply.h"

#include <system_error>
#include <utility>

#include "io/safetensors.h"
#include "producer/tensor_output.h"

namespace iotx::producer {
namespace {

TensorMove MoveOf(const PlannedTensor& planned) {
  const Tensor& tensor = *planned.tensor;
  // Packed sub-byte data (never permuted: PlanApply refuses a spec on it) is copied as bytes.
  const size_t element_size = tensor.element_bits % 8 == 0 ? tensor.element_bits / 8 : 1;
  return {planned.spec ? &*planned.spec : nullptr, tensor.data, element_size,
          tensor.in_file_mapping};
}

TensorReport ReportOf(const PlannedTensor& planned, std::filesystem::path file) {
  const Tensor& tensor = *planned.tensor;
  return {tensor.name,       tensor.shape,        planned.out_shape,  planned.out_type,
          tensor.data.size(), planned.spec.has_value(), std::move(file)};
}

Error Located(Error error, const std::filesystem::path& file, const std::string& name) {
  if (error.file.empty()) error.InFile(file.string());
  if (error.key.empty()) error.AtKey(name);
  return error;
}

class Progress {
 public:
  Progress(const ApplyOptions& options, uint64_t total) : options_(options), total_(total) {
    Report();
  }
  void Add(uint64_t bytes) {
    done_ += bytes;
    Report();
  }

 private:
  void Report() const {
    if (options_.progress) options_.progress(done_, total_);
  }
  const ApplyOptions& options_;
  uint64_t total_;
  uint64_t done_ = 0;
};

Status WriteNpyFiles(const ApplyPlan& plan, const ApplyOptions& options, ApplyReport& report) {
  Progress progress(options, plan.total_bytes);
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    const PlannedTensor& planned = plan.tensors[i];
    const std::filesystem::path& file = plan.files[i];
    Status written = WriteTensorNpy(file, options.out_dir, planned.out_type, planned.out_shape,
                                    MoveOf(planned));
    if (!written) return Fail(Located(std::move(written).error(), file, planned.tensor->name));
    report.tensors.push_back(ReportOf(planned, file));
    report.files.push_back(file);
    progress.Add(planned.tensor->data.size());
  }
  return Ok();
}

Status WriteSafetensorsFile(const ApplyPlan& plan, const TensorSet& inputs,
                            const ApplyOptions& options, ApplyReport& report) {
  const std::filesystem::path& file = plan.files.front();
  std::vector<io::SafetensorsTensor> layout;
  layout.reserve(plan.tensors.size());
  for (const PlannedTensor& planned : plan.tensors) {
    layout.push_back({planned.tensor->name, planned.out_type, planned.out_shape, {}});
  }
  IOTX_ASSIGN_OR_RETURN(
      io::SafetensorsWriter writer,
      io::SafetensorsWriter::Create(file, layout, inputs.metadata, {.root = options.out_dir}));
  Progress progress(options, plan.total_bytes);
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    const PlannedTensor& planned = plan.tensors[i];
    if (Status moved = MoveTensor(MoveOf(planned), writer.data(i)); !moved) {
      return Fail(Located(std::move(moved).error(), file, planned.tensor->name));
    }
    report.tensors.push_back(ReportOf(planned, file));
    progress.Add(planned.tensor->data.size());
  }
  IOTX_RETURN_IF_ERROR(writer.Commit());
  report.files.push_back(file);
  return Ok();
}

}  // namespace

Expected<ApplyReport> Apply(const TensorSet& inputs, const ApplyOptions& options) {
  IOTX_ASSIGN_OR_RETURN(const ApplyPlan plan, PlanApply(inputs, options));
  ApplyReport report;
  report.warnings = plan.warnings;
  report.total_bytes = plan.total_bytes;
  std::error_code ec;
  std::filesystem::create_directories(options.out_dir, ec);
  if (ec) {
    return Fail(Error(ErrorCode::kIoWrite, "cannot create --out-dir: " + ec.message())
                    .InFile(options.out_dir.string()));
  }
  if (options.format == OutputFormat::kNpy) {
    IOTX_RETURN_IF_ERROR(WriteNpyFiles(plan, options, report));
  } else {
    IOTX_RETURN_IF_ERROR(WriteSafetensorsFile(plan, inputs, options, report));
  }
  return report;
}

}  // namespace iotx::producer
