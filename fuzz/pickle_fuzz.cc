// libFuzzer target: the safe pickle reader on arbitrary bytes. It must never crash, read out
// of bounds or allocate without bound; every tensor it returns must describe exactly its
// stored bytes and convert to C order (small ones are converted, to fuzz the conversion too).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "io/pickle.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto tensors = iotx::io::ParsePickle(std::as_bytes(std::span(data, size)), nullptr, "fuzz.p");
  if (!tensors) return 0;
  volatile uint8_t sum = 0;
  for (const iotx::io::Tensor& tensor : *tensors) {
    for (std::byte b : tensor.stored) sum = sum + static_cast<uint8_t>(b);
    if (!tensor.layout.latin1 && tensor.stored.size() != tensor.byte_size()) abort();
    if (tensor.byte_size() <= (size_t{1} << 20) && !iotx::io::ToCOrder(tensor)) abort();
  }
  return 0;
}
