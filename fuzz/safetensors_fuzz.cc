// libFuzzer target: the safetensors reader (header length, JSON header, offsets) on arbitrary
// bytes. Accepted tensors must tile the data exactly and lie inside the input; every accepted
// file is told apart from a pickle as a safetensors file, whatever its header length (issue 18:
// lengths 128, 384, ... start with the pickle opcode 0x80); diagnostics are printable.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "fuzz_check.h"
#include "io/safetensors.h"
#include "io/tensor_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const std::byte> bytes = std::as_bytes(std::span(data, size));
  auto file = iotx::io::ParseSafetensors(bytes, nullptr, "fuzz.safetensors");
  if (!file) {
    iotx::fuzz::CheckDiagnostic(file.error());
    return 0;
  }
  IOTX_FUZZ_CHECK(iotx::io::DetectTensorFileFormat(bytes, "fuzz.bin") ==
                  iotx::io::TensorFileFormat::kSafetensors);
  volatile uint8_t sum = 0;
  size_t total = 0;
  for (const iotx::io::Tensor& t : file->tensors) {
    for (std::byte b : t.stored) sum = sum + static_cast<uint8_t>(b);
    if (!t.is_c_order() || t.stored.size() != t.byte_size()) abort();
    total += t.stored.size();
  }
  if (total > size) abort();
  return 0;
}
