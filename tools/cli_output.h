// Printing diagnostics the same way from every subcommand.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "iotx/status.h"

namespace iotx::cli {

// "iotx: error: IOTX_E103 file: element 1, key "reshape": type must be number, but is string"
void PrintError(const Error& error);
void PrintWarning(const Warning& warning);

// Problems of a file found beyond those a check lists.
struct NotListedCount {
  std::string file;
  size_t count = 0;
};

// One JSON object per diagnostic: {"severity", "code", "message", "file", "element", "key"};
// a file with problems beyond those listed adds {"severity": "error", "code": null,
// "message": "N more problems not listed", "file", "not_listed": N}.
std::string DiagnosticsToJson(const std::vector<Error>& errors,
                              const std::vector<Warning>& warnings,
                              const std::vector<NotListedCount>& not_listed = {});

}  // namespace iotx::cli
