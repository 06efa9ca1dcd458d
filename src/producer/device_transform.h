// The one pipeline that applies specs to tensors: the runtime's InputTransformer, built from
// the simplified specs with the producer's tensors as its parameters. The producer reaches the
// transformer only through this class.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "io/tensor.h"
#include "iotx/runtime.h"
#include "iotx/spec.h"
#include "iotx/status.h"

namespace iotx::producer {

class DeviceTransform {
 public:
  // One transformer input per tensor, in order, with its simplified spec (none: a copy).
  // Packed sub-byte tensors (never given a spec) are copied as bytes. Every spec must have
  // been checked against its tensor (CheckSpecFits); the transformer's errors pass through.
  static Expected<DeviceTransform> Build(std::span<const io::Tensor* const> tensors,
                                         std::span<const std::optional<TransposeSpec>> specs);

  DeviceTransform() = default;

  size_t size() const noexcept { return changes_.size(); }
  // False when the device bytes are the C-order bytes: the tensor is written as it is.
  bool changes_layout(size_t index) const { return changes_[index]; }
  // dst = the device layout of input `index` from its C-order bytes `src`, both
  // byte_size() bytes, on the calling oneTBB arena (every core for a large tensor).
  Status Apply(size_t index, std::span<const std::byte> src, std::span<std::byte> dst) const;
  // Device bytes [offset, offset + dst.size()) of input `index` into dst, from all of `src`.
  Status ApplyRange(size_t index, std::span<const std::byte> src, size_t offset,
                    std::span<std::byte> dst) const;
  // The bytes a range of input `index` should span to cost about its share of Apply.
  size_t range_granule(size_t index) const;

 private:
  std::optional<InputTransformer> transformer_;  // set by Build
  std::vector<bool> changes_;
};

}  // namespace iotx::producer
