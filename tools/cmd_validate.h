// `iotx validate`: check io_transposes.json and hlo_netlist.json files, report every problem.
// The options as command_line.cc parses them, and the job. No CLI11 here.
#pragma once

#include <string>
#include <vector>

namespace iotx::cli {

struct ValidateOptions {
  std::vector<std::string> files;
  std::string netlist;
  std::vector<std::string> modular;
  bool json = false;
};

// Runs the command; returns the process exit code (command.h).
int RunValidate(const ValidateOptions& args);

}  // namespace iotx::cli
