// libFuzzer target: the valid_inputs / required_transpose / neff_input_names parsers on
// arbitrary text. The first byte picks the parameter count (0..15). Invariant: whatever
// parses, formats to text that parses to the same value.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "iotx/attributes.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t n = data[0] % 16;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);

  if (auto valid = iotx::ParseValidInputs(text, n)) {
    auto again = iotx::ParseValidInputs(iotx::FormatValidInputs(*valid), n);
    if (!again || *again != *valid) std::abort();
  }
  if (auto specs = iotx::ParseRequiredTranspose(text, n)) {
    auto again = iotx::ParseRequiredTranspose(iotx::FormatRequiredTranspose(*specs), n);
    if (!again || *again != *specs) std::abort();
  }
  if (auto names = iotx::ParseNeffInputNames(text, n)) {
    auto again = iotx::ParseNeffInputNames(iotx::FormatNeffInputNames(*names), n);
    if (!again || *again != *names) std::abort();
  }
  return 0;
}
