// Writing JSON byte-identical to Python's json.dumps with default arguments
// (ensure_ascii=True, separators ", " and ": ").
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace iotx::schema {

// Appends `text` (UTF-8) as a Python json string literal: '"' and '\\' escaped, \b \f \n \r \t
// by name, every other character outside ' '..'~' as \uXXXX with lowercase hex, characters
// beyond the BMP as a surrogate pair. Bytes that are not valid UTF-8 become \ufffd, one per
// maximal invalid subpart, as Python's bytes.decode("utf-8", "replace") would decode them.
void AppendPythonJsonString(std::string& out, std::string_view text);

}  // namespace iotx::schema
