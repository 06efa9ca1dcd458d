// Reading XLA shapes: element counts and the HLO text spelling ("f32[6144,256]").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "hlo/hlo.pb.h"

namespace iotx::hlo {

// The HLO text name of a primitive type ("f32", "bf16", "pred", "token"); "type<N>" for a
// value this schema does not list.
std::string PrimitiveTypeName(int element_type);

// "f32[6144,256]", "s32[]", "(f32[2], token[])", "f32[<=10,4]" (a dynamic dimension is
// printed as its bound): HLO text without layouts.
std::string ShapeToString(const xla::ShapeProto& shape);

// True for an array shape: neither a tuple nor token / opaque.
bool IsArray(const xla::ShapeProto& shape);

// The number of elements of an array shape, or nullopt for a tuple, token or opaque shape,
// a negative dimension or a count that overflows int64.
std::optional<int64_t> ArrayElementCount(const xla::ShapeProto& shape);

}  // namespace iotx::hlo
