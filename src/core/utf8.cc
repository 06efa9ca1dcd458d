#include "core/utf8.h"

#include <cstdint>

namespace iotx {

bool IsValidUtf8(std::string_view text) noexcept {
  size_t i = 0;
  const size_t n = text.size();
  while (i < n) {
    const auto b0 = static_cast<uint8_t>(text[i]);
    if (b0 < 0x80) {
      ++i;
      continue;
    }
    size_t length;
    uint32_t min_code;
    uint32_t code;
    if ((b0 & 0xE0) == 0xC0) {
      length = 2, min_code = 0x80, code = b0 & 0x1F;
    } else if ((b0 & 0xF0) == 0xE0) {
      length = 3, min_code = 0x800, code = b0 & 0x0F;
    } else if ((b0 & 0xF8) == 0xF0) {
      length = 4, min_code = 0x10000, code = b0 & 0x07;
    } else {
      return false;
    }
    if (n - i < length) return false;
    for (size_t k = 1; k < length; ++k) {
      const auto b = static_cast<uint8_t>(text[i + k]);
      if ((b & 0xC0) != 0x80) return false;
      code = (code << 6) | (b & 0x3F);
    }
    if (code < min_code || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return false;
    i += length;
  }
  return true;
}

}  // namespace iotx
