// Integer lists on the command line: --shape 6144,256 (or a pasted Python list "[6144, 256]").
#pragma once

#include <CLI/CLI.hpp>
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

// A CLI11 check that rejects what ParseIntList rejects, so a malformed list is a usage error
// (exit 2) reported by CLI11 with the option's name.
CLI::Validator IntListValidator();

}  // namespace iotx::cli
