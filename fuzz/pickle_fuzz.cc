// libFuzzer target: the safe pickle reader on arbitrary bytes. It must never crash, read out
// of bounds or allocate without bound, and every array it returns must hold exactly its bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "fuzz_check.h"
#include "io/pickle.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto arrays = iotx::io::ParsePickle(std::as_bytes(std::span(data, size)), nullptr, "fuzz.p");
  if (!arrays) {
    iotx::fuzz::CheckDiagnostic(arrays.error());
    return 0;
  }
  volatile uint8_t sum = 0;
  for (const iotx::io::NamedArray& entry : *arrays) {
    for (std::byte b : entry.array.data) sum = sum + static_cast<uint8_t>(b);
    if (entry.array.data.size() !=
        static_cast<size_t>(entry.array.num_elements()) * entry.array.itemsize) {
      abort();
    }
  }
  return 0;
}
