#include "producer/device_transform.h"

#include <string>

namespace iotx::producer {

Expected<DeviceTransform> DeviceTransform::Build(
    std::span<const io::Tensor* const> tensors,
    std::span<const std::optional<TransposeSpec>> specs) {
  // Tensors are named by their position: names need not suit the transformer (an empty
  // pickle key, say), and every spec was matched to its tensor already.
  std::vector<ParameterDesc> parameters;
  parameters.reserve(tensors.size());
  SpecMap map;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const io::Tensor& tensor = *tensors[i];
    ParameterDesc parameter;
    parameter.name = std::to_string(i);
    parameter.element_size = tensor.element_size();
    if (tensor.element_bits % 8 == 0) {
      parameter.shape = tensor.shape;
    } else {
      parameter.shape = Dims{static_cast<int64_t>(tensor.byte_size())};
    }
    if (specs[i]) map.TryEmplace(parameter.name, *specs[i]);
    parameters.push_back(std::move(parameter));
  }
  DeviceTransform transform;
  IOTX_ASSIGN_OR_RETURN(InputTransformer transformer,
                        InputTransformer::FromSpecs(map, parameters));
  transform.transformer_.emplace(std::move(transformer));
  for (size_t i = 0; i < tensors.size(); ++i) transform.changes_.push_back(specs[i].has_value());
  return transform;
}

Status DeviceTransform::Apply(size_t index, std::span<const std::byte> src,
                              std::span<std::byte> dst) const {
  return transformer_->Apply(index, {src.data(), src.size()}, {dst.data(), dst.size()});
}

Status DeviceTransform::ApplyRange(size_t index, std::span<const std::byte> src, size_t offset,
                                   std::span<std::byte> dst) const {
  return transformer_->ApplyRange(index, {src.data(), src.size()}, offset,
                                  {dst.data(), dst.size()});
}

size_t DeviceTransform::range_granule(size_t index) const {
  return transformer_->range_granule(index).value_or(0);
}

}  // namespace iotx::producer
