#include "core/check.h"

#include <cstdio>
#include <cstdlib>

namespace iotx::detail {

void CheckFailed(const char* condition, const char* file, int line) noexcept {
  std::fprintf(stderr, "iotx: internal check failed at %s:%d: %s\n", file, line, condition);
  std::abort();
}

}  // namespace iotx::detail
