#include "tensor_lines.h"

#include "core/text.h"

namespace iotx::cli {

std::string BytesWithUnit(uint64_t bytes) {
  std::string text = std::to_string(bytes) + " bytes";
  if (bytes >= 1024) text += " (" + FormatBytes(bytes) + ")";
  return text;
}

std::string DescribeTensor(const producer::TensorReport& tensor,
                           const std::filesystem::path& base) {
  std::string line = tensor.name + ": " + ToString(tensor.shape) + " " + tensor.type;
  if (tensor.transposed) line += " -> " + ToString(tensor.device_shape);
  line += ", " + BytesWithUnit(tensor.bytes) + ", ";
  line += tensor.transposed ? "transposed" : "copied unchanged (no spec)";
  if (!tensor.file.empty()) line += " -> " + tensor.file.lexically_relative(base).string();
  // Names and dtype strings come from the files: escaped so none can forge a line.
  return EscapeControl(line);
}

}  // namespace iotx::cli
