#include "core/utf8.h"

namespace iotx {

char32_t DecodeUtf8(std::string_view text, size_t& pos) noexcept {
  const auto lead = static_cast<unsigned char>(text[pos++]);
  if (lead < 0x80) return lead;
  size_t length = 0;
  unsigned char second_lo = 0x80;
  unsigned char second_hi = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) second_lo = 0xA0;  // overlong below U+0800
    if (lead == 0xED) second_hi = 0x9F;  // surrogates U+D800..U+DFFF
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) second_lo = 0x90;  // overlong below U+10000
    if (lead == 0xF4) second_hi = 0x8F;  // past U+10FFFF
  } else {
    return kInvalidUtf8;  // a stray continuation byte, C0, C1 or F5..FF
  }
  char32_t cp = lead & (length == 2 ? 0x1F : length == 3 ? 0x0F : 0x07);
  for (size_t i = 1; i < length; ++i) {
    if (pos >= text.size()) return kInvalidUtf8;
    const auto c = static_cast<unsigned char>(text[pos]);
    const bool ok = i == 1 ? (c >= second_lo && c <= second_hi) : (c & 0xC0) == 0x80;
    if (!ok) return kInvalidUtf8;  // c starts the next sequence
    cp = (cp << 6) | (c & 0x3F);
    ++pos;
  }
  return cp;
}

bool IsValidUtf8(std::string_view text) noexcept {
  for (size_t pos = 0; pos < text.size();) {
    if (DecodeUtf8(text, pos) == kInvalidUtf8) return false;
  }
  return true;
}

}  // namespace iotx
