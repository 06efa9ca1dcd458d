#include "core/text.h"

#include <fmt/format.h>

#include "core/utf8.h"

namespace iotx {

std::string FormatBytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  size_t unit = 0;
  double value = static_cast<double>(bytes);
  while (value >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  if (unit == 0) return fmt::format("{} B", bytes);
  // Exact multiples read best without decimals (a 64 KiB tile); others get enough to compare.
  if (value == static_cast<double>(static_cast<uint64_t>(value))) {
    return fmt::format("{} {}", static_cast<uint64_t>(value), kUnits[unit]);
  }
  if (value < 10) return fmt::format("{:.2f} {}", value, kUnits[unit]);
  return fmt::format("{:.1f} {}", value, kUnits[unit]);
}

std::string EscapeControl(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const size_t start = pos;
    const char32_t cp = DecodeUtf8(text, pos);
    if (cp == kInvalidUtf8) {
      // Each byte of the ill-formed part on its own: \xff\xfe.
      for (size_t i = start; i < pos; ++i) {
        out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[i]));
      }
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp < 0x20 || cp == 0x7f) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned>(cp));
    } else if (cp >= 0x80 && cp <= 0x9f) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(cp));
    } else {
      out.append(text.substr(start, pos - start));
    }
  }
  return out;
}

std::string Excerpt(std::string_view text) {
  size_t cut = text.size();
  if (cut > kMaxEchoBytes) {
    cut = kMaxEchoBytes;
    // Back up to the start of a UTF-8 sequence, so the cut never splits a character.
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  }
  // Appended, not `"\"" + ...`: GCC 12 reports a false -Wrestrict on that operator+ at -O3.
  std::string out = "\"";
  out += EscapeControl(text.substr(0, cut));
  out += '"';
  if (cut < text.size()) out += fmt::format("... ({} bytes)", text.size());
  return out;
}

std::string_view JsonErrorText(std::string_view what) {
  if (what.starts_with("[json.exception.")) {
    if (const size_t close = what.find("] "); close != std::string_view::npos) {
      return what.substr(close + 2);
    }
  }
  return what;
}

std::string ShortList(std::span<const int64_t> values) {
  std::string out = "[";
  const bool cut = values.size() > kListedValues;
  const size_t head = cut ? kListedValues - 1 : values.size();
  for (size_t i = 0; i < head; ++i) {
    if (i != 0) out += ", ";
    out += std::to_string(values[i]);
  }
  if (cut) out += fmt::format(", ..., {}] ({} values)", values.back(), values.size());
  else out += ']';
  return out;
}

}  // namespace iotx
