#include "producer/transposed_inputs.h"

#include <utility>

#include "io/npy.h"
#include "io/pickle.h"
#include "producer/device_transform.h"
#include "producer/write_pipeline.h"

namespace iotx::producer {

Expected<std::vector<TensorReport>> WriteTransposedInputs(const MaterializePlan& plan,
                                                          files::Durability durability) {
  const std::vector<io::Tensor>& tensors = plan.tensors.tensors;
  const std::filesystem::path dir = plan.workdir.transposed_dir();
  std::vector<TensorReport> reports;
  std::vector<PipelineFile> files;
  std::vector<PipelineJob> jobs;
  std::vector<io::Tensor> outputs;  // the device layouts' descriptions, for the pickle
  std::vector<const io::Tensor*> job_tensors;
  std::vector<std::optional<TransposeSpec>> job_specs;
  for (const PlannedInput& input : plan.inputs) {
    const io::Tensor& tensor = tensors[input.tensor];
    io::Tensor out;
    out.name = tensor.name;
    out.descr = tensor.descr;
    out.element_bits = tensor.element_bits;
    out.shape = input.spec ? DeviceShape(*input.spec) : tensor.shape;
    const std::filesystem::path path = dir / ValueFileName(tensor.name);
    auto layout = io::NpyLayout(out.descr, out.shape);
    if (!layout) return Fail(std::move(layout).error().InFile(path.string()).AtKey(tensor.name));
    jobs.push_back({input.tensor, jobs.size(), {{files.size(), layout->data_offsets[0]}}});
    files.push_back({path, std::move(*layout)});
    reports.push_back({tensor.name, tensor.shape, out.shape, out.descr, tensor.byte_size(),
                       input.spec.has_value(), path});
    job_tensors.push_back(&tensor);
    job_specs.push_back(input.spec);
    outputs.push_back(std::move(out));
  }
  const std::filesystem::path pickle_path = dir / kTensorsFile;
  auto pickle = io::PickleLayout(outputs);
  if (!pickle) return Fail(std::move(pickle).error().InFile(pickle_path.string()));
  for (size_t i = 0; i < jobs.size(); ++i) {
    jobs[i].destinations.push_back({files.size(), pickle->data_offsets[i]});
  }
  files.push_back({pickle_path, std::move(*pickle)});

  IOTX_ASSIGN_OR_RETURN(const DeviceTransform transform,
                        DeviceTransform::Build(job_tensors, job_specs));
  IOTX_RETURN_IF_ERROR(RunPipeline(plan.tensors, transform, files, jobs,
                                   {.durability = durability, .root = plan.workdir.root,
                                    .progress = {}},
                                   nullptr));
  return reports;
}

}  // namespace iotx::producer
