#include "schema/python_json.h"

#include "core/utf8.h"

namespace iotx::schema {
namespace {

// A name that is not UTF-8 is written as Python writes bytes.decode("utf-8", "replace") of
// it: one U+FFFD per invalid sequence (DecodeUtf8 splits them as Python does).
constexpr char32_t kReplacementChar = 0xFFFD;

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
    char32_t cp = DecodeUtf8(text, pos);
    if (cp == kInvalidUtf8) cp = kReplacementChar;
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

}  // namespace iotx::schema
