#include "producer/apply.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "io/npy.h"
#include "io/safetensors.h"
#include "files/background_flush.h"
#include "files/stale_temps.h"
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
  return {tensor.name,      tensor.shape,       planned.out_shape,
          planned.out_type, tensor.data.size(), planned.spec.has_value(),
          std::move(file)};
}

// Files whose commit may wait in the background at a time (each holds a descriptor and a
// mapping).
constexpr size_t kMaxQueuedCommits = 4;
// Bytes moved between two background flushes of a safetensors output: large enough that the
// flushes (each a journal commit) stay few, small enough to overlap most of the writeback.
constexpr uint64_t kFlushBytes = uint64_t{64} << 20;

// The page-aligned range of the writer's mapping that holds every tensor region.
std::span<std::byte> MappedHull(const io::SafetensorsWriter& writer, size_t count) {
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uintptr_t begin = UINTPTR_MAX, end = 0;
  for (size_t i = 0; i < count; ++i) {
    const std::span<std::byte> region = writer.data(i);
    if (region.empty()) continue;
    begin = std::min(begin, reinterpret_cast<uintptr_t>(region.data()));
    end = std::max(end, reinterpret_cast<uintptr_t>(region.data() + region.size()));
  }
  if (end == 0) return {};
  begin = begin / page * page;  // the mapping starts at file offset 0, a page boundary
  return {reinterpret_cast<std::byte*>(begin), end - begin};
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
  // Each finished file is committed (fsync + rename) in the background while the kernel
  // fills the next one.
  files::BackgroundFlush flush(kMaxQueuedCommits);
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    const PlannedTensor& planned = plan.tensors[i];
    const std::filesystem::path& file = plan.files[i];
    const std::string& name = planned.tensor->name;
    auto writer =
        io::NpyWriter::Create(file, planned.out_type, planned.out_shape, {.root = options.out_dir});
    if (!writer) return Fail(Located(std::move(writer).error(), file, name));
    if (Status moved = MoveTensor(MoveOf(planned), writer->data()); !moved) {
      return Fail(Located(std::move(moved).error(), file, name));
    }
    auto pending = std::make_shared<io::NpyWriter>(std::move(*writer));
    flush.Post([pending, file, name]() -> Status {
      Status committed = pending->Commit();
      if (!committed) return Fail(Located(std::move(committed).error(), file, name));
      return Ok();
    });
    report.tensors.push_back(ReportOf(planned, file));
    report.files.push_back(file);
    progress.Add(planned.tensor->data.size());
  }
  return flush.Drain();
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
  // Every kFlushBytes moved, the pages written so far go to disk in the background while the
  // kernel goes on, so Commit's fsync finds little left.
  const std::span<std::byte> mapping = MappedHull(writer, plan.tensors.size());
  files::BackgroundFlush flush(/*max_queued=*/1);
  uint64_t unflushed = 0;
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    const PlannedTensor& planned = plan.tensors[i];
    if (Status moved = MoveTensor(MoveOf(planned), writer.data(i)); !moved) {
      return Fail(Located(std::move(moved).error(), file, planned.tensor->name));
    }
    report.tensors.push_back(ReportOf(planned, file));
    progress.Add(planned.tensor->data.size());
    unflushed += planned.tensor->data.size();
    if (unflushed >= kFlushBytes) {
      flush.Post([mapping] { return files::SyncMapping(mapping); });
      unflushed = 0;
    }
  }
  if (Status flushed = flush.Drain(); !flushed) {
    return Fail(Located(std::move(flushed).error(), file, ""));
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
  // Temporaries that a run killed while writing these outputs left behind (never under a
  // final name); those whose writer is gone are removed, so repeated kills do not pile up.
  std::vector<std::string> names;
  for (const std::filesystem::path& file : plan.files) names.push_back(file.filename().string());
  files::RemoveStaleTemps(options.out_dir, names);
  if (options.format == OutputFormat::kNpy) {
    IOTX_RETURN_IF_ERROR(WriteNpyFiles(plan, options, report));
  } else {
    IOTX_RETURN_IF_ERROR(WriteSafetensorsFile(plan, inputs, options, report));
  }
  return report;
}

}  // namespace iotx::producer
