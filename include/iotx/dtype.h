// Element types. The kernel only needs an element's size in bytes; the names are carried
// through so files keep their dtype (numpy descr, safetensors dtype, XLA primitive type).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "iotx/export.h"
#include "iotx/status.h"

namespace iotx {

enum class DType : uint8_t {
  kBool,
  kI8,
  kU8,
  kI16,
  kU16,
  kI32,
  kU32,
  kI64,
  kU64,
  kF16,
  kBF16,
  kF32,
  kF64,
  kC64,
  kC128,
  kF8E4M3FN,
  kF8E5M2,
};

// Size of one element in bytes (1, 2, 4, 8 or 16).
IOTX_API size_t ElementSize(DType dtype) noexcept;
// Short lowercase name, as XLA's HLO text spells it: "f32", "bf16", "s8" is "i8" here, ...
IOTX_API std::string_view DTypeName(DType dtype) noexcept;
// Accepts the short names and numpy's long ones, case-insensitively: "f32", "float32",
// "bf16", "bfloat16", "i8", "int8", "u8", "uint8", "bool", "c64", "complex64", ...
IOTX_API Expected<DType> ParseDType(std::string_view name);
// Every dtype, in declaration order.
IOTX_API std::span<const DType> AllDTypes() noexcept;

}  // namespace iotx
