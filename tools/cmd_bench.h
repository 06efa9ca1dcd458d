// `iotx bench`: time the kernel on one case next to memcpy of the same bytes.
// The options as command_line.cc parses them, and the job. No CLI11 here.
#pragma once

#include <string>

#include "permute_args.h"

namespace iotx::cli {

struct BenchArgs {
  PermuteArgs permute;
  int threads = 1;
  int reps = 11;
  double min_seconds = 0.02;
  bool json = false;
  bool no_huge_pages = false;
  bool check = false;           // compare the output with the naive permute before timing
  std::string stores = "auto";  // the kernel's stores: auto, regular or streaming
};

// Runs the command; returns the process exit code (command.h).
int RunBench(const BenchArgs& args);

}  // namespace iotx::cli
