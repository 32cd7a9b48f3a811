#pragma once

// Whether this translation unit is compiled under AddressSanitizer (KILN_ASAN) or
// ThreadSanitizer (KILN_TSAN). GCC says so with __SANITIZE_ADDRESS__/__SANITIZE_THREAD__;
// Clang before 18 only through __has_feature, and CI's ASan build is Clang's.

#if defined(__SANITIZE_ADDRESS__)
#define KILN_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KILN_ASAN 1
#endif
#endif

#if defined(__SANITIZE_THREAD__)
#define KILN_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define KILN_TSAN 1
#endif
#endif
