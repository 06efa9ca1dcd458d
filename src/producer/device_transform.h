// The one pipeline that applies specs to tensors: the runtime's InputTransformer, built from
// the simplified specs with the producer's tensors as its parameters. The producer reaches the
// transformer only through this class.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <utility>
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

  // Bytes of one slice of input `index` along the leading dims its spec keeps in place (dim 0
  // of `0,2,1,3`): the device bytes of slices [a, b) are the transform of the source bytes of
  // the same slices alone, so such a tensor can be read and permuted a piece at a time. Its
  // byte_size() when the spec moves its first dim, keeps every dim, or there is none.
  size_t slice_bytes(size_t index) const { return slices_[index].bytes; }
  // Device bytes [offset, offset + src.size()) of input `index` from its source bytes at the
  // same place, `src` alone: offset and src.size() (= dst.size()) are whole slices.
  Status ApplySlices(size_t index, std::span<const std::byte> src, size_t offset,
                     std::span<std::byte> dst) const;

 private:
  // An input's slices: their bytes, and the spec of one piece with its leading kept dims
  // folded into one (set before ApplySlices prepends the piece's slice count).
  struct Slices {
    size_t bytes = 0;
    size_t total = 0;
    size_t element_size = 0;
    TransposeSpec rest;  // the dims after the kept ones, transpose renumbered from 1
  };
  // Transformers of pieces, one per (input, slice count): a tensor's pieces are of at most two
  // sizes (whole chunks and the last).
  struct PieceTransformers {
    std::mutex mutex;
    std::map<std::pair<size_t, size_t>, std::shared_ptr<const InputTransformer>> built;
  };

  static Slices SlicesOf(size_t total, size_t element_size, const TransposeSpec* spec);

  std::optional<InputTransformer> transformer_;  // set by Build
  std::vector<bool> changes_;
  std::vector<Slices> slices_;
  std::shared_ptr<PieceTransformers> pieces_ = std::make_shared<PieceTransformers>();
};

}  // namespace iotx::producer
