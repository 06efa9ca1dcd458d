// `iotx simplify`: the producer's dim-folding rule (SPEC section 2) on one spec.
// The options as command_line.cc parses them, and the job. No CLI11 here.
#pragma once

#include <string>

namespace iotx::cli {

struct SimplifyOptions {
  std::string shape;
  std::string reshape;
  std::string transpose;
};

// Runs the command; returns the process exit code (command.h).
int RunSimplify(const SimplifyOptions& args);

}  // namespace iotx::cli
