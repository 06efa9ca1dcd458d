#include "io/descr.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <initializer_list>
#include <string>

namespace iotx::io {
namespace {

struct NamedType {
  std::string_view name;
  size_t itemsize;
};

// ml_dtypes' extension types, as numpy names them in a descr when the dtype has no type
// string of its own. Sub-byte types (int4, float4_e2m1fn) still take a whole byte in numpy.
constexpr std::array<NamedType, 16> kMlDtypesNames = {{
    {"bfloat16", 2},
    {"float8_e3m4", 1},
    {"float8_e4m3", 1},
    {"float8_e4m3b11fnuz", 1},
    {"float8_e4m3fn", 1},
    {"float8_e4m3fnuz", 1},
    {"float8_e5m2", 1},
    {"float8_e5m2fnuz", 1},
    {"float8_e8m0fnu", 1},
    {"float4_e2m1fn", 1},
    {"float6_e2m3fn", 1},
    {"float6_e3m2fn", 1},
    {"int2", 1},
    {"int4", 1},
    {"uint2", 1},
    {"uint4", 1},
}};

struct DescrDType {
  std::string_view descr;
  DType dtype;
};

// Type strings with exactly one DType (voids are handled apart: they carry no kind).
constexpr std::array<DescrDType, 14> kDescrDTypes = {{
    {"|b1", DType::kBool},
    {"|i1", DType::kI8},
    {"|u1", DType::kU8},
    {"<i2", DType::kI16},
    {"<u2", DType::kU16},
    {"<i4", DType::kI32},
    {"<u4", DType::kU32},
    {"<i8", DType::kI64},
    {"<u8", DType::kU64},
    {"<f2", DType::kF16},
    {"<f4", DType::kF32},
    {"<f8", DType::kF64},
    {"<c8", DType::kC64},
    {"<c16", DType::kC128},
}};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

std::optional<DescrInfo> ParseDescr(std::string_view descr) {
  for (const NamedType& named : kMlDtypesNames) {
    if (descr == named.name) return DescrInfo{'|', 'x', named.itemsize};
  }
  DescrInfo info;
  size_t pos = 0;
  if (pos < descr.size() &&
      (descr[pos] == '<' || descr[pos] == '>' || descr[pos] == '|' || descr[pos] == '=')) {
    info.byteorder = descr[pos++];
  }
  if (pos >= descr.size()) return std::nullopt;
  info.kind = descr[pos++];
  if (std::string_view("biufcVSUMm").find(info.kind) == std::string_view::npos) {
    return std::nullopt;
  }
  size_t digits_end = pos;
  while (digits_end < descr.size() && IsDigit(descr[digits_end])) ++digits_end;
  // At most 9 digits: keeps the size and the 'U' multiplication far from overflow.
  if (digits_end == pos || digits_end - pos > 9) return std::nullopt;
  size_t count = 0;
  std::from_chars(descr.data() + pos, descr.data() + digits_end, count);
  pos = digits_end;
  // The sizes numpy has types for ('<f3' or '|b2' do not load); flexible kinds take any.
  auto size_in = [count](std::initializer_list<size_t> sizes) {
    return std::find(sizes.begin(), sizes.end(), count) != sizes.end();
  };
  switch (info.kind) {
    case 'b':
      if (!size_in({1})) return std::nullopt;
      break;
    case 'i':
    case 'u':
      if (!size_in({1, 2, 4, 8})) return std::nullopt;
      break;
    case 'f':
      if (!size_in({2, 4, 8, 12, 16})) return std::nullopt;
      break;
    case 'c':
      if (!size_in({8, 16, 24, 32})) return std::nullopt;
      break;
    case 'M':
    case 'm':
      if (!size_in({8})) return std::nullopt;
      break;
    default:
      break;  // V, S, U
  }
  if (info.kind == 'M' || info.kind == 'm') {
    // Datetimes are 8 bytes with an optional unit: "<M8", "<M8[ns]", "<m8[25s]".
    if (pos < descr.size()) {
      // "[" [multiplier] unit "]" with numpy's datetime units.
      if (descr[pos] != '[' || descr.back() != ']') return std::nullopt;
      std::string_view unit = descr.substr(pos + 1, descr.size() - pos - 2);
      // At most 10 digits of multiplier: keeps every accepted descr short (MakeNpyHeader
      // relies on it to stay within a version 1.0 header).
      for (int digits = 0; !unit.empty() && IsDigit(unit.front()); ++digits) {
        if (digits == 10) return std::nullopt;
        unit.remove_prefix(1);
      }
      constexpr std::string_view kUnits[] = {"Y",  "M",  "W",  "D",  "h",  "m",  "s",
                                             "ms", "us", "ns", "ps", "fs", "as", "generic"};
      if (std::find(std::begin(kUnits), std::end(kUnits), unit) == std::end(kUnits)) {
        return std::nullopt;
      }
      pos = descr.size();
    }
  }
  if (pos != descr.size()) return std::nullopt;
  info.itemsize = info.kind == 'U' ? count * 4 : count;
  return info;
}

size_t ByteSwapUnit(const DescrInfo& info) {
  switch (info.kind) {
    case 'i':
    case 'u':
    case 'f':
    case 'M':
    case 'm':
      return info.itemsize;
    case 'c':
      return info.itemsize / 2;
    case 'U':
      return 4;
    default:
      return 1;
  }
}

Expected<DType> DTypeFromDescr(std::string_view descr) {
  std::optional<DescrInfo> info = ParseDescr(descr);
  if (info && info->kind == 'V' && info->itemsize == 2) return DType::kBF16;
  if (info && info->kind == 'x') {
    // "bfloat16", "float8_e4m3fn", "float8_e5m2" are also iotx's long names.
    auto parsed = ParseDType(descr);
    if (parsed) return *parsed;
  } else if (info && !(info->kind == 'V' && info->itemsize == 1)) {
    // Compare in the canonical spelling: native is little-endian here, and one-byte types
    // take '|' whatever the file said.
    char order = info->itemsize == 1 ? '|' : info->byteorder == '=' ? '<' : info->byteorder;
    std::string canonical = order + std::string(descr.substr(descr.find(info->kind)));
    for (const DescrDType& entry : kDescrDTypes) {
      if (canonical == entry.descr) return entry.dtype;
    }
  }
  return Fail(ErrorCode::kUnknownDType,
              "numpy type '" + std::string(descr) +
                  "' has no iotx element type (one-byte voids are ambiguous: float8_e4m3fn "
                  "and float8_e5m2 both save as '|V1')");
}

std::string_view DescrForDType(DType dtype) noexcept {
  switch (dtype) {
    case DType::kBool:
      return "|b1";
    case DType::kI8:
      return "|i1";
    case DType::kU8:
      return "|u1";
    case DType::kI16:
      return "<i2";
    case DType::kU16:
      return "<u2";
    case DType::kI32:
      return "<i4";
    case DType::kU32:
      return "<u4";
    case DType::kI64:
      return "<i8";
    case DType::kU64:
      return "<u8";
    case DType::kF16:
      return "<f2";
    case DType::kBF16:
      return "<V2";
    case DType::kF32:
      return "<f4";
    case DType::kF64:
      return "<f8";
    case DType::kC64:
      return "<c8";
    case DType::kC128:
      return "<c16";
    case DType::kF8E4M3FN:
    case DType::kF8E5M2:
      return "|V1";
  }
  return "|V1";  // not reached: the switch covers every DType (-Wswitch checks it)
}

}  // namespace iotx::io
