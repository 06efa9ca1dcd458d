// numpy type strings ("descr": "<f4", "|u1", "<V2", "<M8[ns]") and how they map to iotx::DType.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "iotx/dtype.h"
#include "iotx/status.h"

namespace iotx::io {

// What a type string says about one element.
struct DescrInfo {
  char byteorder = '|';  // '<' little, '>' big, '|' not applicable, '=' native
  char kind = 'V';       // numpy kind: b i u f c V S U M m, or 'x' for an ml_dtypes name
  size_t itemsize = 0;   // bytes per element
};

// Parses a numpy array-protocol type string: optional byte order, kind letter, size in bytes
// (characters for 'U': 4 bytes each) among those numpy has types for ('|b1', '<f2'..'<f16',
// not '<f3'), and for datetimes a unit ("<M8[ns]"). Also accepts the
// ml_dtypes names numpy writes for its extension types ("bfloat16", "float8_e4m3fn", ...).
// nullopt for anything else — object ('O') and structured (list) dtypes included.
std::optional<DescrInfo> ParseDescr(std::string_view descr);

// The bytes that are swapped as one unit to change an element's byte order: the item size
// for numbers, half of it for complex numbers, 4 for 'U' characters; 1 (nothing to swap) for
// bytes, voids, booleans and ml_dtypes names.
size_t ByteSwapUnit(const DescrInfo& info);

// True when the data is big-endian and elements span more than one byte: readers swap it.
inline bool IsBigEndian(const DescrInfo& info) {
  return info.byteorder == '>' && ByteSwapUnit(info) > 1;
}

// The iotx DType a type string stands for: "<f4" → kF32, "|b1" → kBool, ... Two-byte voids
// ("<V2", "|V2") and "bfloat16" are kBF16: numpy saves ml_dtypes' bfloat16 as "<V2".
// kUnknownDType for the rest, including one-byte voids (float8_e4m3fn and float8_e5m2 both
// save as "|V1", so the descr cannot tell them apart).
Expected<DType> DTypeFromDescr(std::string_view descr);

// The type string numpy writes for `dtype`: "<f4", "|b1", "<V2" for bf16, "|V1" for the
// float8 types.
std::string_view DescrForDType(DType dtype) noexcept;

}  // namespace iotx::io
