// Small text helpers every diagnostic and report shares, so each is written once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace iotx {

// Bytes in binary units for people: "512 B", "64 KiB", "1.5 MiB", "2.25 GiB".
std::string FormatBytes(uint64_t bytes);

// The first `shown` names of `items` (name_of(item) -> string-like), joined by ", ", with
// ", ..." when there are more, or "none" when there are no items: how a message lists what
// was there instead. An empty name is written "" (a tensor may be named so).
template <class Items, class NameOf>
std::string ListFirstNames(const Items& items, NameOf name_of, size_t shown = 8) {
  std::string out;
  size_t i = 0;
  for (const auto& item : items) {
    if (i == shown) {
      out += ", ...";
      break;
    }
    if (i++ > 0) out += ", ";
    const auto& named = name_of(item);  // a temporary string lives as long as this reference
    const std::string_view name(named);
    out += name.empty() ? std::string_view("\"\"") : name;
  }
  return i == 0 ? "none" : out;
}

// `text` safe to print on a terminal or in a log: every control character becomes a visible
// escape, so a crafted name cannot forge a log line or drive the terminal. C0 controls and
// DEL become \n, \r, \t or \xNN (ESC is \x1b), C1 controls (U+0080..U+009F, which some
// terminals obey as CSI and friends) \u0080..\u009f, and bytes that are not UTF-8 \xNN.
// Printable text, including non-ASCII UTF-8 and backslashes, is kept as it is, so the result
// of an escaped text is itself (idempotent). The one place diagnostics are escaped:
// Error::ToString() and the tool's report lines go through it.
std::string EscapeControl(std::string_view text);

// How much of an input a message echoes: names, attribute strings and lists can be megabytes
// long, a diagnostic should not be.
inline constexpr size_t kMaxEchoBytes = 200;

// `text` in double quotes, cut to kMaxEchoBytes on a UTF-8 boundary, with "... (N bytes)"
// after the quote when it was cut: "abc", "aaaa...aaa"... (1048576 bytes).
std::string Excerpt(std::string_view text);

// nlohmann's exception text without its bracketed id: "[json.exception.parse_error.101] parse
// error at line 1, column 5: ..." becomes "parse error at line 1, column 5: ...". The id means
// nothing to a user; the rest says where and what.
std::string_view JsonErrorText(std::string_view what);

// Python's list repr of `values` ("[3, 2048, 2, 128]", as ToString in iotx/dims.h), but a
// list of more than kListedValues values shows its first ones and says how many there are:
// "[1, 1, 1, ..., 1] (1000000 values)".
inline constexpr size_t kListedValues = 16;
std::string ShortList(std::span<const int64_t> values);

}  // namespace iotx
