#include "iotx/dtype.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

namespace iotx {
namespace {

struct DTypeEntry {
  DType dtype;
  std::string_view name;       // canonical short name
  std::string_view long_name;  // numpy's name
  uint8_t size;
};

constexpr std::array<DTypeEntry, 17> kDTypes = {{
    {DType::kBool, "bool", "bool_", 1},
    {DType::kI8, "i8", "int8", 1},
    {DType::kU8, "u8", "uint8", 1},
    {DType::kI16, "i16", "int16", 2},
    {DType::kU16, "u16", "uint16", 2},
    {DType::kI32, "i32", "int32", 4},
    {DType::kU32, "u32", "uint32", 4},
    {DType::kI64, "i64", "int64", 8},
    {DType::kU64, "u64", "uint64", 8},
    {DType::kF16, "f16", "float16", 2},
    {DType::kBF16, "bf16", "bfloat16", 2},
    {DType::kF32, "f32", "float32", 4},
    {DType::kF64, "f64", "float64", 8},
    {DType::kC64, "c64", "complex64", 8},
    {DType::kC128, "c128", "complex128", 16},
    {DType::kF8E4M3FN, "f8e4m3fn", "float8_e4m3fn", 1},
    {DType::kF8E5M2, "f8e5m2", "float8_e5m2", 1},
}};

constexpr std::array<DType, kDTypes.size()> MakeAllDTypes() {
  std::array<DType, kDTypes.size()> all{};
  for (size_t i = 0; i < kDTypes.size(); ++i) all[i] = kDTypes[i].dtype;
  return all;
}
constexpr auto kAllDTypes = MakeAllDTypes();

const DTypeEntry& Entry(DType dtype) noexcept { return kDTypes[static_cast<size_t>(dtype)]; }

}  // namespace

size_t ElementSize(DType dtype) noexcept { return Entry(dtype).size; }
std::string_view DTypeName(DType dtype) noexcept { return Entry(dtype).name; }
std::span<const DType> AllDTypes() noexcept { return kAllDTypes; }

Expected<DType> ParseDType(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  // XLA spells signed integers s8..s64 and booleans pred.
  if (lower.size() >= 2 && lower[0] == 's' && std::isdigit(static_cast<unsigned char>(lower[1]))) {
    lower[0] = 'i';
  }
  if (lower == "pred") lower = "bool";
  for (const DTypeEntry& e : kDTypes) {
    if (lower == e.name || lower == e.long_name) return e.dtype;
  }
  std::string known;
  for (const DTypeEntry& e : kDTypes) {
    if (!known.empty()) known += ", ";
    known += e.name;
  }
  return Fail(ErrorCode::kUnknownDType,
              "unknown element type '" + std::string(name) + "'; expected one of " + known);
}

}  // namespace iotx
