// libFuzzer target: the .npy reader (header parser, stored layouts) on arbitrary bytes.
// Whatever it accepts must be writable again (MakeNpyHeader), fully readable and convertible
// to C order (small ones are converted, to fuzz the conversion too).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "io/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto tensor = iotx::io::ParseNpy(std::as_bytes(std::span(data, size)), nullptr, "fuzz.npy");
  if (!tensor) return 0;
  // Reading every byte lets ASan catch a view that points outside the input.
  volatile uint8_t sum = 0;
  for (std::byte b : tensor->stored) sum = sum + static_cast<uint8_t>(b);
  if (tensor->stored.size() != tensor->byte_size()) abort();
  if (!iotx::io::MakeNpyHeader(tensor->descr, tensor->shape)) abort();
  if (tensor->byte_size() <= (size_t{1} << 20) && !iotx::io::ToCOrder(*tensor)) abort();
  return 0;
}
