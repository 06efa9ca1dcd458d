// The one walk over an io_transposes.json document that both the parser (first problem) and
// `iotx validate` (every problem) use.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "iotx/io_transposes.h"

namespace iotx::schema {

struct IoTransposesCheck {
  SpecMap specs;                  // the elements that passed every check, first of a name kept
  std::vector<Error> errors;      // the problems, in element order (kMaxListedErrors at most)
  std::vector<Warning> warnings;  // a repeated name, unless options make it an error (as many)
  size_t errors_not_listed = 0;   // problems found beyond those listed
  size_t warnings_not_listed = 0;
};

// Checks every element of `json_text`: shape and JSON types, CheckInputName, ValidateSpec,
// repeated names. Diagnostics name `file`, the element index and the key. With
// `first_error_only` no element is checked after the first error (the text is still read to
// its end: a syntax error anywhere is the error then). No JSON document is built: memory is
// what the specs take. Out of memory is one kOutOfMemory error, never an exception.
IoTransposesCheck CheckIoTransposes(std::string_view json_text, const std::string& file,
                                    const ParseOptions& options, bool first_error_only = false);

}  // namespace iotx::schema
