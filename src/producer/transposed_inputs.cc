#include "producer/transposed_inputs.h"

#include <utility>
#include <vector>

#include "io/npy.h"
#include "io/pickle.h"
#include "producer/permute_copy.h"
#include "producer/tensor_output.h"

namespace iotx::producer {

Expected<TensorReport> WriteValueFile(const MaterializePlan& plan, const PlannedInput& input) {
  const io::NamedArray& tensor = *input.tensor;
  const io::Array& array = tensor.array;
  const TransposeSpec* spec = input.spec ? &*input.spec : nullptr;
  TensorReport report{tensor.name, array.shape, spec ? DeviceShape(*spec) : array.shape,
                      array.descr,  array.data.size(), spec != nullptr,
                      plan.workdir.transposed_dir() / ValueFileName(tensor.name)};
  const TensorMove move{spec, array.data, array.itemsize,
                        InMapping(array.data, *plan.tensors_file)};
  Status written = WriteTensorNpy(report.file, plan.workdir.root, array.descr,
                                  report.device_shape, move);
  if (!written) {
    Error error = std::move(written).error();
    if (error.file.empty()) error.InFile(report.file.string());
    if (error.key.empty()) error.AtKey(tensor.name);
    return Fail(std::move(error));
  }
  return report;
}

Status WriteTransposedPickle(const MaterializePlan& plan) {
  std::vector<io::NamedArray> arrays;
  arrays.reserve(plan.tensors.size());
  for (const io::NamedArray& tensor : plan.tensors) {
    IOTX_ASSIGN_OR_RETURN(io::Array array,
                          io::ReadNpy(plan.workdir.transposed_dir() / ValueFileName(tensor.name)));
    arrays.push_back({tensor.name, std::move(array)});
  }
  return io::WritePickle(plan.workdir.transposed_dir() / kTensorsFile, arrays,
                         {.root = plan.workdir.root});
}

}  // namespace iotx::producer
