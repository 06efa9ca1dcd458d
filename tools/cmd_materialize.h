// `iotx materialize`: the compiler's producer job (SPEC section 6) on a work directory.
// The options as command_line.cc parses them, and the job. No CLI11 here.
#pragma once

#include <string>

namespace iotx::cli {

struct MaterializeArgs {
  std::string workdir;
  bool verify = false;
  bool quiet = false;
};

// Runs the command; returns the process exit code (command.h).
int RunMaterialize(const MaterializeArgs& args);

}  // namespace iotx::cli
