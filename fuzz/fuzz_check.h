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
