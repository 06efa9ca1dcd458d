// `iotx wrap`: the hlo-neff-wrapper (SPEC section 5).
// The options as command_line.cc parses them, and the job. No CLI11 here.
#pragma once

#include <string>
#include <vector>

namespace iotx::cli {

struct WrapOptions {
  std::string hlo;
  std::string neff;
  std::string output;
  std::string io_transposes;
  std::vector<std::string> modular;  // each value may itself hold several space-separated files
  std::string netlist = "hlo_netlist.json";
  bool netlist_given = false;
};

// Runs the command; returns the process exit code (command.h).
int RunWrap(const WrapOptions& args);

}  // namespace iotx::cli
