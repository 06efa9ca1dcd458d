#include "schema/python_json.h"

namespace iotx::schema {
namespace {

constexpr char32_t kReplacementChar = 0xFFFD;

// Decodes one UTF-8 sequence at text[pos], advancing pos. An invalid sequence yields one
// U+FFFD per maximal subpart (Unicode's recommended practice, and what Python's
// bytes.decode("utf-8", "replace") does), so a name that is not UTF-8 is written as Python
// would write the string it decodes to.
char32_t DecodeUtf8(std::string_view text, size_t& pos) {
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
    return kReplacementChar;  // a stray continuation byte, C0, C1 or F5..FF
  }
  char32_t cp = lead & (length == 2 ? 0x1F : length == 3 ? 0x0F : 0x07);
  for (size_t i = 1; i < length; ++i) {
    if (pos >= text.size()) return kReplacementChar;
    const auto c = static_cast<unsigned char>(text[pos]);
    const bool ok = i == 1 ? (c >= second_lo && c <= second_hi) : (c & 0xC0) == 0x80;
    if (!ok) return kReplacementChar;  // c starts the next sequence
    cp = (cp << 6) | (c & 0x3F);
    ++pos;
  }
  return cp;
}

void AppendUnicodeEscape(std::string& out, char32_t unit) {
  static constexpr char kHex[] = "0123456789abcdef";  // Python writes lowercase hex digits
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(unit >> shift) & 0xF];
}

}  // namespace

void AppendPythonJsonString(std::string& out, std::string_view text) {
  out += '"';
  size_t pos = 0;
  while (pos < text.size()) {
    const char32_t cp = DecodeUtf8(text, pos);
    switch (cp) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\b':
        out += "\\b";
        continue;
      case '\f':
        out += "\\f";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\t':
        out += "\\t";
        continue;
      default:
        break;
    }
    if (cp >= 0x20 && cp <= 0x7E) {
      out += static_cast<char>(cp);
    } else if (cp < 0x10000) {
      AppendUnicodeEscape(out, cp);
    } else {
      const char32_t v = cp - 0x10000;
      AppendUnicodeEscape(out, 0xD800 | (v >> 10));
      AppendUnicodeEscape(out, 0xDC00 | (v & 0x3FF));
    }
  }
  out += '"';
}

void AppendPythonJsonIntList(std::string& out, std::span<const int64_t> values) {
  out += '[';
  for (size_t i = 0; i < values.size(); ++i) {
    if (i != 0) out += ", ";
    out += std::to_string(values[i]);
  }
  out += ']';
}

}  // namespace iotx::schema
