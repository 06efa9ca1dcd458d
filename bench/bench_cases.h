// The benchmark case list (bench/bench-cases.txt): data, read at run time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "iotx/dtype.h"
#include "iotx/status.h"

namespace iotx::bench {

struct BenchCase {
  std::string id;  // stable: tables and scripts key on it
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;  // after the reshape
  std::vector<int64_t> perm;
  int64_t bytes = 0;
};

// Lines "id dtype shape perm" (shape and perm comma-separated); '#' starts a comment.
Expected<std::vector<BenchCase>> ReadBenchCases(const std::string& path);

}  // namespace iotx::bench
