#include "producer/materialize.h"

#include <string>
#include <system_error>
#include <vector>

#include "files/atomic_file.h"
#include "files/stale_temps.h"
#include "producer/transposed_inputs.h"

namespace iotx::producer {
namespace {

Status MakeTransposedDir(const WorkDir& workdir) {
  std::error_code ec;
  std::filesystem::create_directory(workdir.transposed_dir(), ec);
  if (ec) {
    return Fail(Error(ErrorCode::kIoWrite, "cannot create directory: " + ec.message())
                    .InFile(workdir.transposed_dir().string()));
  }
  return Ok();
}

// The files of transposed_inputs/ this run writes, whose temporaries a killed run may have
// left behind.
std::vector<std::string> VerifyOutputNames(const MaterializePlan& plan) {
  std::vector<std::string> names{kTensorsFile};
  for (const PlannedInput& input : plan.inputs) {
    names.push_back(ValueFileName(plan.tensors.tensors[input.tensor].name));
  }
  return names;
}

TensorReport PlannedReport(const MaterializePlan& plan, const PlannedInput& input) {
  const io::Tensor& tensor = plan.tensors.tensors[input.tensor];
  return {tensor.name,
          tensor.shape,
          input.spec ? DeviceShape(*input.spec) : tensor.shape,
          tensor.descr,
          tensor.byte_size(),
          input.spec.has_value(),
          {}};
}

}  // namespace

Expected<MaterializeReport> Materialize(const MaterializeOptions& options) {
  IOTX_ASSIGN_OR_RETURN(const MaterializePlan plan, PlanMaterialize(options));
  MaterializeReport report;
  report.root = plan.workdir.root;
  report.nothing_to_do = plan.nothing_to_do;
  report.warnings = plan.warnings;
  if (!plan.nothing_to_do.empty()) return report;
  report.spec_count = plan.simplified.size();
  const WorkDir& workdir = plan.workdir;
  // The inputs stay, however their names look like a dead writer's temporaries.
  std::vector<std::filesystem::path> inputs;
  for (const SourceFile& file : plan.tensors.files) inputs.push_back(file.path);

  if (plan.verify) {
    IOTX_RETURN_IF_ERROR(MakeTransposedDir(workdir));
    report.stale_temps_removed +=
        files::RemoveStaleTemps(workdir.transposed_dir(), VerifyOutputNames(plan), inputs);
    IOTX_ASSIGN_OR_RETURN(report.inputs,
                          WriteTransposedInputs(plan, files::Durability::kDurable));
    report.pickle_written = true;
  } else {
    for (const PlannedInput& input : plan.inputs) {
      report.inputs.push_back(PlannedReport(plan, input));
    }
  }

  if (plan.json_changed) {
    const std::string names[] = {kIoTransposesFile};
    report.stale_temps_removed += files::RemoveStaleTemps(workdir.root, names, inputs);
    IOTX_RETURN_IF_ERROR(
        files::WriteFileAtomically(workdir.io_transposes(), plan.json_text, {.root = workdir.root}));
    report.json_rewritten = true;
  }

  IOTX_ASSIGN_OR_RETURN(const std::vector<LinkSource> sources,
                        ListLinkSources(workdir.root, workdir.transposed_dir()));
  std::vector<std::string> link_names;
  for (const LinkSource& source : sources) link_names.push_back(source.name);
  for (const std::filesystem::path& dir : workdir.partition_dirs) {
    report.stale_temps_removed += files::RemoveStaleTemps(workdir.root / dir, link_names, inputs);
  }
  IOTX_ASSIGN_OR_RETURN(report.links, FanOut(workdir, sources, &report.warnings));
  return report;
}

}  // namespace iotx::producer
