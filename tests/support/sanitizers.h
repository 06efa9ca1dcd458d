// Whether this test binary runs under a sanitizer: memory, time and stack then include the
// sanitizer's own, so tests that bound them hold for an unsanitized build only.
#pragma once

namespace iotx::test {

// True in a build under AddressSanitizer or ThreadSanitizer.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

}  // namespace iotx::test
