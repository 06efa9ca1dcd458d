// The options `iotx plan` and `iotx bench` share: --dtype, --shape, --reshape, --transpose
// (declared to CLI11 in command_line.cc).
#pragma once

#include <optional>
#include <string>

#include "iotx/dims.h"
#include "iotx/dtype.h"
#include "iotx/status.h"

namespace iotx::cli {

struct PermuteArgs {
  std::string dtype = "f32";
  std::string shape;
  std::string reshape;
  std::string transpose;
};

// The permute the options describe: source shape after the reshape, and the permutation.
struct PermuteSpec {
  DType dtype = DType::kF32;
  Dims shape;  // after the reshape
  Dims perm;
};

// A malformed option (not a list of integers, unknown dtype) is a usage error: the message
// goes to stderr and `usage_error` is set. A well-formed but inconsistent one (a reshape whose
// element count differs from the shape's) is returned as an Error with its code.
Expected<PermuteSpec> ResolvePermute(const PermuteArgs& args, bool& usage_error);

// ResolvePermute for a command: on failure prints the diagnostic (a usage error was printed
// already) and sets `exit_code` (kExitUsage or kExitFailure).
std::optional<PermuteSpec> ResolvePermuteOrExit(const PermuteArgs& args, int& exit_code);

}  // namespace iotx::cli
