// The one walk over an io_transposes.json document that both the parser (first problem) and
// `iotx validate` (every problem) use.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "iotx/io_transposes.h"

namespace iotx::schema {

struct IoTransposesCheck {
  SpecMap specs;                  // the elements that passed every check, first of a name kept
  std::vector<Error> errors;      // every problem, in element order
  std::vector<Warning> warnings;  // a repeated name, unless options make it an error
};

// Checks every element of `json_text`: shape and JSON types, CheckInputName, ValidateSpec,
// repeated names. Diagnostics name `file`, the element index and the key. With
// `first_error_only` the walk stops at the element with the first error.
IoTransposesCheck CheckIoTransposes(std::string_view json_text, const std::string& file,
                                    const ParseOptions& options, bool first_error_only = false);

}  // namespace iotx::schema
