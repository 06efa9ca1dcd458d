#include "tensor_lines.h"

#include <array>
#include <cstdio>

namespace iotx::cli {

std::string FormatBytes(uint64_t bytes) {
  static constexpr std::array<const char*, 5> kUnits = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < kUnits.size()) {
    value /= 1024;
    ++unit;
  }
  std::string text = std::to_string(bytes) + " bytes";
  if (unit > 0) {
    char scaled[32];
    std::snprintf(scaled, sizeof(scaled), " (%.1f %s)", value, kUnits[unit]);
    text += scaled;
  }
  return text;
}

std::string DescribeTensor(const producer::TensorReport& tensor,
                           const std::filesystem::path& base) {
  std::string line = tensor.name + ": " + ToString(tensor.shape) + " " + tensor.type;
  if (tensor.transposed) line += " -> " + ToString(tensor.device_shape);
  line += ", " + FormatBytes(tensor.bytes) + ", ";
  line += tensor.transposed ? "transposed" : "copied unchanged (no spec)";
  if (!tensor.file.empty()) line += " -> " + tensor.file.lexically_relative(base).string();
  return line;
}

}  // namespace iotx::cli
