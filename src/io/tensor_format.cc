#include "io/tensor_format.h"

#include <cstdint>
#include <cstring>
#include <string_view>

namespace iotx::io {
namespace {

constexpr std::string_view kNpyMagic = "\x93NUMPY";
constexpr std::byte kPickleProto{0x80};  // PROTO, the first opcode of protocols 2-5
constexpr size_t kLengthBytes = 8;       // safetensors' little-endian u64 header length

bool HasSafetensorsStructure(std::span<const std::byte> bytes) {
  if (bytes.size() < kLengthBytes + 2) return false;
  uint64_t length = 0;
  for (size_t i = kLengthBytes; i-- > 0;) length = (length << 8) | static_cast<uint8_t>(bytes[i]);
  if (length < 2 || length > bytes.size() - kLengthBytes) return false;
  const std::span<const std::byte> header = bytes.subspan(kLengthBytes, length);
  // JSON may have whitespace around the object (the writers pad with spaces after it).
  const auto is_space = [](std::byte b) {
    return b == std::byte{' '} || b == std::byte{'\t'} || b == std::byte{'\n'} ||
           b == std::byte{'\r'};
  };
  size_t begin = 0;
  size_t end = header.size();
  while (begin < end && is_space(header[begin])) ++begin;
  while (end > begin && is_space(header[end - 1])) --end;
  return end - begin >= 2 && header[begin] == std::byte{'{'} && header[end - 1] == std::byte{'}'};
}

}  // namespace

TensorFileFormat DetectTensorFileFormat(std::span<const std::byte> bytes,
                                        const std::filesystem::path& path) {
  if (bytes.size() >= kNpyMagic.size() &&
      std::memcmp(bytes.data(), kNpyMagic.data(), kNpyMagic.size()) == 0) {
    return TensorFileFormat::kNpy;
  }
  if (HasSafetensorsStructure(bytes)) return TensorFileFormat::kSafetensors;
  if (!bytes.empty() && bytes[0] == kPickleProto) return TensorFileFormat::kPickle;
  if (path.extension() == ".safetensors") return TensorFileFormat::kSafetensors;
  return TensorFileFormat::kPickle;
}

}  // namespace iotx::io
