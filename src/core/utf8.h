// UTF-8: decoding names read from files, and checking them.
#pragma once

#include <cstddef>
#include <string_view>

namespace iotx {

// What DecodeUtf8 returns for an ill-formed sequence (no code point is this large).
inline constexpr char32_t kInvalidUtf8 = 0xFFFFFFFF;

// Decodes the sequence at text[pos] (pos < text.size()) and advances pos past it. An
// ill-formed sequence gives kInvalidUtf8 and advances past its maximal subpart, Unicode's
// recommended practice and what Python's bytes.decode("utf-8", "replace") does: overlong
// forms, surrogates and values above U+10FFFF are ill-formed.
char32_t DecodeUtf8(std::string_view text, size_t& pos) noexcept;

// True when `text` is well-formed UTF-8 (what Python's strict decoder and JSON parsers accept).
bool IsValidUtf8(std::string_view text) noexcept;

}  // namespace iotx
