#include "hlo/hlo_shape.h"

#include <array>
#include <span>

#include "iotx/dims.h"

namespace iotx::hlo {
namespace {

// Indexed by the PrimitiveType value (xla_data.proto); FACTS.md section 1 lists the spellings.
constexpr std::array<std::string_view, 35> kTypeNames = {
    "invalid",    "pred",       "s8",    "s16",    "s32",      "s64",    "u8",     "u16",
    "u32",        "u64",        "f16",   "f32",    "f64",      "tuple",  "opaque", "c64",
    "bf16",       "token",      "c128",  "f8e5m2", "f8e4m3fn", "s4",     "u4",     "f8e4m3b11fnuz",
    "f8e5m2fnuz", "f8e4m3fnuz", "s2",    "u2",     "f8e4m3",   "f8e3m4", "s1",     "u1",
    "f4e2m1fn",   "f8e8m0fnu",  "buffer"};

}  // namespace

std::string PrimitiveTypeName(int element_type) {
  if (element_type >= 0 && static_cast<size_t>(element_type) < kTypeNames.size()) {
    return std::string(kTypeNames[static_cast<size_t>(element_type)]);
  }
  return "type" + std::to_string(element_type);
}

std::string ShapeToString(const xla::ShapeProto& shape) {
  if (shape.element_type() == xla::TUPLE) {
    std::string out = "(";
    for (int i = 0; i < shape.tuple_shapes_size(); ++i) {
      if (i > 0) out += ", ";
      out += ShapeToString(shape.tuple_shapes(i));
    }
    return out + ")";
  }
  std::string out = PrimitiveTypeName(shape.element_type()) + "[";
  for (int i = 0; i < shape.dimensions_size(); ++i) {
    if (i > 0) out += ',';
    // A dynamic dimension is a bound, written "<=10" as XLA's printer does.
    if (i < shape.is_dynamic_dimension_size() && shape.is_dynamic_dimension(i)) out += "<=";
    out += std::to_string(shape.dimensions(i));
  }
  return out + "]";
}

bool IsArray(const xla::ShapeProto& shape) {
  switch (shape.element_type()) {
    case xla::TUPLE:
    case xla::TOKEN:
    case xla::OPAQUE_TYPE:
    case xla::PRIMITIVE_TYPE_INVALID:
      return false;
    default:
      return true;
  }
}

std::optional<int64_t> ArrayElementCount(const xla::ShapeProto& shape) {
  if (!IsArray(shape)) return std::nullopt;
  std::span<const int64_t> dims(shape.dimensions().data(),
                                static_cast<size_t>(shape.dimensions_size()));
  return CheckedProduct(dims);
}

}  // namespace iotx::hlo
