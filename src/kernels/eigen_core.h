// Eigen/Core for kiln's kernels. GCC 12's own AVX-512 intrinsic headers build "undefined"
// vectors as `__m512 __Y = __Y;`, which -Wmaybe-uninitialized (or -Wuninitialized, at the
// sanitizer builds' -O levels) reports wherever Eigen's AVX-512 packets inline them (GCC bug
// 105593, fixed in GCC 13). The warning is about the compiler's header, not our code, so it
// is silenced for these headers only.
#pragma once

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <Eigen/Core>
#pragma GCC diagnostic pop
#else
#include <Eigen/Core>
#endif

// Around the other Eigen headers kiln includes (decompositions, FFT): the same warnings off.
#if defined(__GNUC__) && !defined(__clang__)
#define KILN_EIGEN_HEADERS_BEGIN                                                             \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"") \
      _Pragma("GCC diagnostic ignored \"-Wuninitialized\"")
#define KILN_EIGEN_HEADERS_END _Pragma("GCC diagnostic pop")
#else
#define KILN_EIGEN_HEADERS_BEGIN
#define KILN_EIGEN_HEADERS_END
#endif
