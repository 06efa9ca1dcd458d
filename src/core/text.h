// Small text helpers every diagnostic and report shares, so each is written once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace iotx {

// Bytes in binary units for people: "512 B", "64 KiB", "1.5 MiB", "2.25 GiB".
std::string FormatBytes(uint64_t bytes);

// The first `shown` names of `items` (name_of(item) -> string-like), joined by ", ", with
// ", ..." when there are more, or "none": how a message lists what was there instead.
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
    out += std::string_view(name_of(item));
  }
  return out.empty() ? "none" : out;
}

}  // namespace iotx
