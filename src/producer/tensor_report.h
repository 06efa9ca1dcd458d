// What the producer tools did with one tensor, for printing.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "iotx/dims.h"

namespace iotx::producer {

struct TensorReport {
  std::string name;
  Dims shape;                  // as given
  Dims device_shape;           // as written: the simplified spec's output shape, or `shape`
  std::string type;            // the element type as the output names it: "<f2", "BF16"
  uint64_t bytes = 0;          // tensor bytes
  bool transposed = false;     // false: no spec, so the bytes are copied unchanged
  std::filesystem::path file;  // the file written, empty when nothing was written
};

}  // namespace iotx::producer
