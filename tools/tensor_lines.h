// Printing what the producer commands did with each tensor, the same way in each.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "producer/tensor_report.h"

namespace iotx::cli {

// "3145728 bytes (3.0 MiB)"
std::string BytesWithUnit(uint64_t bytes);

// "p0: [6144, 256] <f2 -> [3, 128, 2, 2048], 3145728 bytes (3.0 MiB), transposed"
// ("copied unchanged (no spec)" for an input without a spec), then " -> FILE" with FILE
// relative to `base` when a file was written.
std::string DescribeTensor(const producer::TensorReport& tensor, const std::filesystem::path& base);

}  // namespace iotx::cli
