// libFuzzer target: the safetensors reader (header length, JSON header, offsets) on arbitrary
// bytes. Accepted tensors must tile the data exactly and lie inside the input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "io/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto file =
      iotx::io::ParseSafetensors(std::as_bytes(std::span(data, size)), nullptr, "fuzz.safetensors");
  if (!file) return 0;
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
