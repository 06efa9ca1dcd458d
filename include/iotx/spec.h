// A static IO transpose: fold the flat tensor into `reshape`, then permute the axes by
// `transpose`. The device layout is numpy's
//   np.ascontiguousarray(np.transpose(a.reshape(reshape), transpose)).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "iotx/dims.h"
#include "iotx/export.h"
#include "iotx/status.h"

namespace iotx {

struct IOTX_API TransposeSpec {
  Dims reshape;
  Dims transpose;

  friend bool operator==(const TransposeSpec& a, const TransposeSpec& b) noexcept {
    return a.reshape == b.reshape && a.transpose == b.transpose;
  }
};

struct IOTX_API NamedSpec {
  std::string input_name;
  TransposeSpec spec;
};

// input_name -> spec, in insertion order (the order of the JSON array). The first spec stored
// under a name stays: TryEmplace of a present name changes nothing, like the original
// consumer's StringMap::try_emplace.
class IOTX_API SpecMap {
 public:
  // Stores (name, spec) unless `name` is present. Returns whether it was stored.
  bool TryEmplace(std::string name, TransposeSpec spec);
  // The spec stored under `name`, or nullptr.
  const TransposeSpec* Find(std::string_view name) const;
  bool Contains(std::string_view name) const { return Find(name) != nullptr; }
  // Replaces the spec of a present name in place (order kept). Returns false if absent.
  bool Replace(std::string_view name, TransposeSpec spec);

  size_t size() const noexcept { return entries_.size(); }
  bool empty() const noexcept { return entries_.empty(); }
  const std::vector<NamedSpec>& entries() const noexcept { return entries_; }
  std::vector<NamedSpec>::const_iterator begin() const noexcept { return entries_.begin(); }
  std::vector<NamedSpec>::const_iterator end() const noexcept { return entries_.end(); }

 private:
  std::vector<NamedSpec> entries_;
  std::unordered_map<std::string, size_t> index_;
};

// SPEC section 1 semantic checks on one spec: at most kMaxRank reshape dims (kTooManyDims),
// `transpose` is a permutation of 0..len(reshape)-1, every reshape dim is >= 0, and the
// product fits in int64. Messages show at most 16 values of a long list.
IOTX_API Status ValidateSpec(const TransposeSpec& spec);

// Whether `spec` can be applied to a tensor of `shape`: the spec is valid (ValidateSpec, its
// code) and product(reshape) equals the tensor's element count, else NCC_IHNW003
// ("Reshape size mismatch for input: <name>: illegal static io reshape from <shape> to
// <reshape> (...)"). The one check every command and the runtime make; `input_name` may be
// empty (then "Reshape size mismatch: illegal static io reshape ...").
IOTX_API Status CheckSpecFits(const TransposeSpec& spec, std::span<const int64_t> shape,
                              std::string_view input_name);

// The device-side shape, that of np.transpose(a.reshape(spec.reshape), spec.transpose):
// reshape[transpose[k]] for each k. `spec` must be valid (ValidateSpec).
IOTX_API Dims DeviceShape(const TransposeSpec& spec);

// Refuses names that cannot be used inside a file name (value_<name>.npy): empty, ".", "..",
// containing '/', '\\' or NUL, or longer than 181 bytes (value_<name>.npy and the temporary
// it is written through must fit in NAME_MAX, 255 bytes). kUnsafeName.
IOTX_API Status CheckInputName(std::string_view name);

// SPEC section 2: merges reshape dims i, i+1 that are neighbours (i, i+1) in `transpose`
// unless their boundary is an interior boundary of `orig_shape`, and renumbers the transpose.
// Validates the spec first; product(reshape) != product(orig_shape) is kIllegalReshape.
// Idempotent: Simplify(Simplify(s, o), o) == Simplify(s, o).
IOTX_API Expected<TransposeSpec> Simplify(const TransposeSpec& spec,
                                          std::span<const int64_t> orig_shape);

// "{"reshape": [3, 2048, 2, 128], "transpose": [0, 3, 2, 1]}" (Python json.dumps of the dict).
IOTX_API std::string ToJson(const TransposeSpec& spec);

}  // namespace iotx
