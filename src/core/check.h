// Debug assertions for invariants: conditions that hold unless iotx itself has a bug. Bad
// input is never checked this way (it gets an Error with a code); these guard what the code
// relies on after its own checks. Active in builds without NDEBUG (the debug, asan and tsan
// presets), where a failure prints the condition and aborts; compiled out in release.
#pragma once

namespace iotx::detail {
[[noreturn]] void CheckFailed(const char* condition, const char* file, int line) noexcept;
}  // namespace iotx::detail

#ifdef NDEBUG
#define IOTX_DCHECK(condition) static_cast<void>(sizeof(static_cast<bool>(condition)))
#else
#define IOTX_DCHECK(condition)                                                    \
  (static_cast<bool>(condition) ? static_cast<void>(0)                            \
                                : ::iotx::detail::CheckFailed(#condition, __FILE__, __LINE__))
#endif
