// UTF-8 validation for names read from files.
#pragma once

#include <string_view>

namespace iotx {

// True when `text` is well-formed UTF-8: no overlong forms, no surrogates, nothing above
// U+10FFFF (what Python's strict decoder and JSON parsers accept).
bool IsValidUtf8(std::string_view text) noexcept;

}  // namespace iotx
