// Invariant checks inside fuzz targets: a violated invariant aborts, which libFuzzer (and the
// corpus replay test) report as a failure with the input that caused it.
#pragma once

#include <cstdio>
#include <cstdlib>

#define IOTX_FUZZ_CHECK(condition)                                                                \
  do {                                                                                            \
    if (!(condition)) {                                                                           \
      std::fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", __FILE__, __LINE__, #condition); \
      std::abort();                                                                               \
    }                                                                                             \
  } while (0)

#include <string>
#include <string_view>

#include "iotx/status.h"

namespace iotx::fuzz {

// What every diagnostic must be (issue 18): printable — no C0 control but none, no DEL, no C1
// control in UTF-8, so a crafted input cannot forge a log line or drive a terminal — and
// bounded, however long the input it echoes (Error::ToString cuts at 4 KiB, plus the parts
// before the message).
inline void CheckDiagnostic(const Error& error) {
  const std::string text = error.ToString();
  IOTX_FUZZ_CHECK(!text.empty());
  IOTX_FUZZ_CHECK(text.size() <= 4096 + 2 * 1024);
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    IOTX_FUZZ_CHECK(c >= 0x20 && c != 0x7f);
    if (c == 0xc2 && i + 1 < text.size()) {
      const auto next = static_cast<unsigned char>(text[i + 1]);
      IOTX_FUZZ_CHECK(next < 0x80 || next > 0x9f);
    }
  }
}

// JSON text never holds a raw NUL (inside a string it must be escaped): a side-file that
// parses holds none, wherever it is (issue 18: "[]\0garbage" validated).
inline void CheckParsedJsonHasNoNul(std::string_view text) {
  IOTX_FUZZ_CHECK(text.find('\0') == std::string_view::npos);
}

}  // namespace iotx::fuzz
