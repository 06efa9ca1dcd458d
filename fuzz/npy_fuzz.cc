// libFuzzer target: the .npy reader (header parser, layout conversion) on arbitrary bytes.
// Whatever it accepts must be writable again (MakeNpyHeader) and fully readable.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "fuzz_check.h"
#include "io/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto array = iotx::io::ParseNpy(std::as_bytes(std::span(data, size)), nullptr, "fuzz.npy");
  if (!array) {
    iotx::fuzz::CheckDiagnostic(array.error());
    return 0;
  }
  // Reading every byte lets ASan catch a view that points outside the input or buffer.
  volatile uint8_t sum = 0;
  for (std::byte b : array->data) sum = sum + static_cast<uint8_t>(b);
  if (array->data.size() != static_cast<size_t>(array->num_elements()) * array->itemsize) {
    abort();
  }
  if (!iotx::io::MakeNpyHeader(array->descr, array->shape)) abort();
  return 0;
}
