#include "producer/materialize_plan.h"

#include <system_error>
#include <unordered_map>
#include <utility>

#include "core/text.h"
#include "files/read_text_file.h"
#include "iotx/io_transposes.h"
#include "producer/output_checks.h"
#include "schema/unknown_input.h"

namespace iotx::producer {
namespace {

// kUnknownInput naming the spec's input and a few of the tensors there are.
Error UnknownInput(const std::string& name, const WorkDir& workdir,
                   const std::vector<io::Tensor>& tensors) {
  const std::string known = ListFirstNames(tensors, [](const io::Tensor& t) { return t.name; });
  return UnknownInputError(name, std::string("the tensors of ") + kTensorsFile, known)
      .InFile(workdir.io_transposes().string());
}

}  // namespace

Expected<MaterializePlan> PlanMaterialize(const MaterializeOptions& options) {
  MaterializePlan plan;
  plan.verify = options.verify;
  IOTX_ASSIGN_OR_RETURN(plan.workdir, ScanWorkDir(options.workdir));
  const WorkDir& workdir = plan.workdir;
  if (!workdir.has_io_transposes) {
    plan.nothing_to_do = std::string("no ") + kIoTransposesFile + " in " + workdir.root.string();
    return plan;
  }
  if (!workdir.has_tensors) {
    plan.nothing_to_do =
        std::string("no ") + kTensorsFile + " (input tensors) in " + workdir.root.string();
    return plan;
  }

  // The specs, each checked; a repeated input_name keeps the first (SPEC section 1).
  IOTX_ASSIGN_OR_RETURN(const std::string json_in,
                        files::ReadTextFile(workdir.io_transposes().string()));
  IOTX_ASSIGN_OR_RETURN(IoTransposes parsed,
                        ParseIoTransposes(json_in, workdir.io_transposes().string()));
  plan.warnings = std::move(parsed.warnings);

  // The tensors: views into the mapped pickle, converted (byte order, Fortran order, protocol
  // 2 strings) only when written, one at a time.
  IOTX_ASSIGN_OR_RETURN(plan.tensors, LoadPickleFile(workdir.tensors()));
  const std::vector<io::Tensor>& tensors = plan.tensors.tensors;
  std::unordered_map<std::string_view, const io::Tensor*> by_name;
  for (const io::Tensor& tensor : tensors) by_name.emplace(tensor.name, &tensor);

  // Every spec names a tensor and fits it; simplified against the tensor's real shape.
  for (const NamedSpec& named : parsed.specs) {
    const auto it = by_name.find(named.input_name);
    if (it == by_name.end()) {
      return Fail(UnknownInput(named.input_name, workdir, tensors));
    }
    if (Status fits = CheckSpecFits(named.spec, it->second->shape, named.input_name); !fits) {
      return Fail(std::move(fits).error().InFile(workdir.io_transposes().string()));
    }
    Expected<TransposeSpec> simplified = Simplify(named.spec, it->second->shape);
    if (!simplified) {
      return Fail(std::move(simplified)
                      .error()
                      .InFile(workdir.io_transposes().string())
                      .AtKey(named.input_name));
    }
    plan.simplified.TryEmplace(named.input_name, std::move(*simplified));
  }
  plan.json_text = SerializeIoTransposes(plan.simplified);
  plan.json_changed = plan.json_text != json_in;

  for (size_t t = 0; t < tensors.size(); ++t) {
    const TransposeSpec* spec = plan.simplified.Find(tensors[t].name);
    if (spec == nullptr && !options.verify) continue;
    plan.inputs.push_back({t, spec ? std::optional<TransposeSpec>(*spec) : std::nullopt});
  }

  // Every path that will be written, checked before the first write.
  if (plan.json_changed) {
    IOTX_RETURN_IF_ERROR(CheckOutputFile(workdir.root, workdir.io_transposes()));
  }
  // transposed_inputs/ and what is in it already (it is fanned out too) stay inside root.
  IOTX_ASSIGN_OR_RETURN(const std::vector<LinkSource> present,
                        ListLinkSources(workdir.root, workdir.transposed_dir()));
  std::vector<std::string> link_names;
  for (const LinkSource& source : present) link_names.push_back(source.name);
  if (options.verify) {
    // An inp-000.p that is a link into transposed_inputs/ would be replaced by its own
    // transpose, and the next run would transpose that again.
    const std::filesystem::path read[] = {workdir.tensors()};
    for (const PlannedInput& input : plan.inputs) {
      const std::string& name = tensors[input.tensor].name;
      if (Status fit = CheckValueFileName(name); !fit) {
        return Fail(std::move(fit).error().InFile(workdir.tensors().string()));
      }
      IOTX_RETURN_IF_ERROR(
          CheckOutputFile(workdir.root, workdir.transposed_dir() / ValueFileName(name), read));
      link_names.push_back(ValueFileName(name));
    }
    IOTX_RETURN_IF_ERROR(
        CheckOutputFile(workdir.root, workdir.transposed_dir() / kTensorsFile, read));
  }
  // Where the fan-out will put links: nothing there it may not replace.
  IOTX_RETURN_IF_ERROR(CheckFanOutTargets(workdir, link_names));
  return plan;
}

}  // namespace iotx::producer
