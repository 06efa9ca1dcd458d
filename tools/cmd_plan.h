// `iotx plan`: plan a permute and print what the planner decided (SPEC section 8).
// The options as command_line.cc parses them, and the job. No CLI11 here.
#pragma once

#include <string>

#include "permute_args.h"

namespace iotx::cli {

struct PlanArgs {
  PermuteArgs permute;
  int threads = 0;
  std::string stores = "auto";  // auto, regular or streaming
  std::string device = "trn2";  // trn1, trn2 or trn3
};

// Runs the command; returns the process exit code (command.h).
int RunPlan(const PlanArgs& args);

}  // namespace iotx::cli
