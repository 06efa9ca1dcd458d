// Printing diagnostics the same way from every subcommand.
#pragma once

#include <string>
#include <vector>

#include "iotx/status.h"

namespace iotx::cli {

// "iotx: error: IOTX_E103 file: element 1, key "reshape": type must be number, but is string"
void PrintError(const Error& error);
void PrintWarning(const Warning& warning);

// One JSON object per diagnostic: {"severity", "code", "message", "file", "element", "key"}.
std::string DiagnosticsToJson(const std::vector<Error>& errors,
                              const std::vector<Warning>& warnings);

}  // namespace iotx::cli
