#include "producer/device_transform.h"

#include <string>
#include <vector>

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
  for (size_t i = 0; i < tensors.size(); ++i) {
    transform.changes_.push_back(specs[i].has_value());
    transform.slices_.push_back(SlicesOf(tensors[i]->byte_size(), tensors[i]->element_size(),
                                         specs[i] ? &*specs[i] : nullptr));
  }
  return transform;
}

DeviceTransform::Slices DeviceTransform::SlicesOf(size_t total, size_t element_size,
                                                  const TransposeSpec* spec) {
  Slices slices{total, total, element_size, {}};
  if (spec == nullptr) return slices;
  const size_t rank = spec->transpose.size();
  size_t kept = 0;
  while (kept < rank && spec->transpose[kept] == static_cast<int64_t>(kept)) ++kept;
  if (kept == 0 || kept == rank) return slices;
  int64_t elements = 1;
  std::vector<int64_t> reshape, transpose{0};
  reshape.push_back(0);  // the piece's slice count, set per piece
  for (size_t d = kept; d < rank; ++d) {
    elements *= spec->reshape[d];
    reshape.push_back(spec->reshape[d]);
    transpose.push_back(spec->transpose[d] - static_cast<int64_t>(kept) + 1);
  }
  if (elements == 0) return slices;
  slices.bytes = static_cast<size_t>(elements) * element_size;
  slices.rest = TransposeSpec{Dims(reshape), Dims(transpose)};
  return slices;
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

Status DeviceTransform::ApplySlices(size_t index, std::span<const std::byte> src, size_t offset,
                                    std::span<std::byte> dst) const {
  const Slices& slices = slices_[index];
  if (offset == 0 && src.size() == slices.total) return Apply(index, src, dst);  // empty too
  if (src.size() != dst.size() || slices.bytes == 0 || offset % slices.bytes != 0 ||
      src.size() % slices.bytes != 0 || offset + src.size() > slices.total) {
    return Fail(ErrorCode::kInternal, "a piece of " + std::to_string(src.size()) + " bytes at " +
                                          std::to_string(offset) + " is not whole " +
                                          std::to_string(slices.bytes) + "-byte slices of the " +
                                          std::to_string(slices.total) + "-byte tensor");
  }
  const size_t count = src.size() / slices.bytes;
  std::shared_ptr<const InputTransformer> piece;
  {
    std::lock_guard<std::mutex> lock(pieces_->mutex);
    std::shared_ptr<const InputTransformer>& built = pieces_->built[{index, count}];
    if (!built) {
      TransposeSpec spec = slices.rest;
      spec.reshape[0] = static_cast<int64_t>(count);
      SpecMap map;
      map.TryEmplace("0", spec);
      ParameterDesc parameter;
      parameter.name = "0";
      parameter.element_size = slices.element_size;
      parameter.shape = Dims{static_cast<int64_t>(src.size() / slices.element_size)};
      IOTX_ASSIGN_OR_RETURN(InputTransformer transformer,
                            InputTransformer::FromSpecs(map, std::span(&parameter, 1)));
      built = std::make_shared<const InputTransformer>(std::move(transformer));
    }
    piece = built;
  }
  return piece->Apply(0, {src.data(), src.size()}, {dst.data(), dst.size()});
}

}  // namespace iotx::producer
