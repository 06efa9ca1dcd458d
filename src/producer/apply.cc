#include "producer/apply.h"

#include <algorithm>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "core/text.h"
#include "files/stale_temps.h"
#include "producer/device_transform.h"
#include "producer/output_status.h"
#include "producer/write_pipeline.h"

namespace iotx::producer {
namespace {

Status MakeOutDir(const std::filesystem::path& out_dir) {
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) {
    return Fail(Error(ErrorCode::kIoWrite, "cannot create --out-dir: " + ec.message())
                    .InFile(out_dir.string()));
  }
  return Ok();
}

TensorReport ReportOf(const io::Tensor& tensor, const PlannedTensor& planned,
                      const std::filesystem::path& file) {
  const io::Tensor& out = planned.output;
  return {tensor.name,       tensor.shape,          out.shape, out.dtype.empty() ? out.descr : out.dtype,
          tensor.byte_size(), planned.spec.has_value(), file};
}

// Checks every shard's output in out_dir; writes the index when all are complete.
Status FinishShards(const TensorSet& inputs, const ApplyPlan& plan, const ApplyOptions& options,
                    ApplyReport& report) {
  report.shards = plan.outputs.size();
  report.incomplete.clear();
  for (const PlannedOutput& output : plan.outputs) {
    if (!OutputComplete(output.path, output.layout)) report.incomplete.push_back(output.path);
  }
  if (!report.incomplete.empty()) return Ok();
  IOTX_RETURN_IF_ERROR(
      WriteWhole(plan.index, inputs.index->text, options.out_dir, options.durability));
  report.index = plan.index;
  return Ok();
}

}  // namespace

Expected<ApplyReport> Apply(const TensorSet& inputs, const ApplyOptions& options) {
  IOTX_ASSIGN_OR_RETURN(const ApplyPlan plan, PlanApply(inputs, options));
  ApplyReport report;
  report.warnings = plan.warnings;
  IOTX_RETURN_IF_ERROR(MakeOutDir(options.out_dir));

  // Temporaries that a run killed while writing these outputs left behind (never under a
  // final name); those whose writer is gone are removed, so repeated kills do not pile up.
  // Never an input, nor an output another host writes, whatever its name spells. The index's
  // only where no other host may be writing it (a writer's pid means nothing on another host).
  std::vector<std::string> names;
  std::vector<std::filesystem::path> keep = FilesRead(inputs, options);
  for (const PlannedOutput& output : plan.outputs) {
    if (output.selected) names.push_back(output.path.filename().string());
    keep.push_back(output.path);
  }
  if (!plan.index.empty() && !options.shard) names.push_back(plan.index.filename().string());
  files::RemoveStaleTemps(options.out_dir, names, keep);

  // What this run writes, each file's tensors in file order so files are written front to
  // back; a shard whose output is complete already is left as it is.
  std::vector<PipelineFile> files;
  std::vector<PipelineJob> jobs;
  std::vector<const io::Tensor*> job_tensors;
  std::vector<std::optional<TransposeSpec>> job_specs;
  for (const PlannedOutput& output : plan.outputs) {
    if (!output.selected) continue;
    if (inputs.index && OutputComplete(output.path, output.layout)) {
      report.skipped.push_back(output.path);
      continue;
    }
    std::vector<size_t> order(output.tensors.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&output](size_t a, size_t b) {
      return output.layout.data_offsets[a] < output.layout.data_offsets[b];
    });
    for (size_t i : order) {
      const size_t t = output.tensors[i];
      jobs.push_back({t, jobs.size(), {{files.size(), output.layout.data_offsets[i]}}});
      job_tensors.push_back(&inputs.tensors[t]);
      job_specs.push_back(plan.tensors[t].spec);
      report.tensors.push_back(ReportOf(inputs.tensors[t], plan.tensors[t], output.path));
      report.total_bytes += inputs.tensors[t].byte_size();
    }
    files.push_back({output.path, output.layout});
  }
  IOTX_ASSIGN_OR_RETURN(const DeviceTransform transform,
                        DeviceTransform::Build(job_tensors, job_specs));
  std::vector<size_t> committed;
  const Status ran = RunPipeline(inputs, transform, files, jobs,
                                 {.durability = options.durability,
                                  .direct_writes = options.direct_writes,
                                  .unsynced_direct_above = options.unsynced_direct_above,
                                  .read_buffer_max = options.read_buffer_max,
                                  .cached_reads = options.cached_reads,
                                  .root = options.out_dir,
                                  .progress = options.progress},
                                 &committed);
  std::sort(committed.begin(), committed.end());
  for (size_t file : committed) report.files.push_back(files[file].path);
  IOTX_RETURN_IF_ERROR(ran);
  if (inputs.index && options.format == OutputFormat::kSafetensors) {
    IOTX_RETURN_IF_ERROR(FinishShards(inputs, plan, options, report));
  }
  return report;
}

Expected<ApplyReport> FinishIndex(const TensorSet& inputs, const ApplyOptions& options) {
  if (!inputs.index || options.format != OutputFormat::kSafetensors) {
    return Fail(Error(ErrorCode::kInvalidArgument,
                      "--finish-index needs a sharded checkpoint's index as --inputs and "
                      "safetensors output")
                    .InFile(options.out_dir.string()));
  }
  ApplyOptions all = options;
  all.shard.reset();
  IOTX_ASSIGN_OR_RETURN(const ApplyPlan plan, PlanApply(inputs, all));
  ApplyReport report;
  report.warnings = plan.warnings;
  IOTX_RETURN_IF_ERROR(FinishShards(inputs, plan, options, report));
  if (!report.incomplete.empty()) {
    return Fail(Error(ErrorCode::kShardedCheckpoint,
                      std::to_string(report.incomplete.size()) + " of " +
                          std::to_string(report.shards) +
                          " shards are not written completely yet: " +
                          ListFirstNames(report.incomplete,
                                         [](const std::filesystem::path& p) {
                                           return p.filename().string();
                                         }) +
                          "; run iotx apply for them first")
                    .InFile(options.out_dir.string()));
  }
  return report;
}

}  // namespace iotx::producer
