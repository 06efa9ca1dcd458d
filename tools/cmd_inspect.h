// `iotx inspect`: summarize an HLO module and its AwsNeuronNeff calls.
// The options as command_line.cc parses them, and the job. No CLI11 here.
#pragma once

#include <string>

namespace iotx::cli {

struct InspectOptions {
  std::string module;
  bool json = false;
};

// Runs the command; returns the process exit code (command.h).
int RunInspect(const InspectOptions& args);

}  // namespace iotx::cli
