// Integer lists on the command line: --shape 6144,256 (or a pasted Python list "[6144, 256]").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "iotx/status.h"

namespace iotx::cli {

// "6144,256", "6144, 256", "[6144, 256]" -> {6144, 256}; "" or "[]" -> {} (a scalar's shape).
// Each item is a decimal int64, possibly negative (semantic checks come later).
// kInvalidArgument naming the offending item otherwise.
Expected<std::vector<int64_t>> ParseIntList(std::string_view text);

}  // namespace iotx::cli
