#pragma once
// Whether this test binary runs under AddressSanitizer: statistical bounds
// and whole-trace runs that take minutes there are left to the unsanitized
// build, which runs the same code.
namespace vramsim::testing_support {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

}  // namespace vramsim::testing_support
