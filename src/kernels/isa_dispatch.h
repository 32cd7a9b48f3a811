// Runtime CPU dispatch for hot loops written once. A kernel's body is an always-inline
// function; KILN_ISA_DISPATCH(call) compiles the statement `call` three times, each inlined
// into a lambda built for one instruction-set level, and runs the one cpu_isa() picked (a
// load and a switch per call; a value comes out through a captured reference,
// `(r = body(x))`). The vectorizer sees the body inside each lambda, so the same C++ loop
// becomes SSE2, AVX2+FMA and AVX-512 code. Code that picks its instructions with the
// preprocessor (Eigen's packets, intrinsics under #ifdef __AVX512F__) cannot be dispatched
// this way: such files are compiled once per level instead (CMakeLists.txt, KILN_ISA_SOURCES).
#pragma once

#include "core/cpu_isa.h"

// Feature lists rather than arch=x86-64-v3: Clang 14 takes no ISA-level names, and GCC's
// target_clones("arch=...") resolves by CPU model, which picks the baseline on AMD.
#define KILN_TARGET_AVX2_FEATURES "avx2,fma,bmi,bmi2,f16c,lzcnt,movbe,popcnt"
#define KILN_TARGET_AVX512_FEATURES KILN_TARGET_AVX2_FEATURES ",avx512f,avx512bw,avx512dq,avx512vl,avx512cd"

// Each variant also defines `kIsaVectorBytes`, the width of its level's vector registers (64,
// 32, 16), for bodies written with GCC's vector types (kernels/lane_vectors.h): a vector type
// wider than the registers goes through memory.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KILN_ISA_VARIANT_(features, bytes, call)            \
  [&]() __attribute__((target(features))) {                 \
    [[maybe_unused]] constexpr int kIsaVectorBytes = bytes; \
    call;                                                   \
  }                                                         \
  ()
#define KILN_ISA_DISPATCH(call)                                   \
  do {                                                            \
    switch (::kiln::detail::g_cpu_isa) {                          \
      case ::kiln::CpuIsa::kAvx512:                               \
        KILN_ISA_VARIANT_(KILN_TARGET_AVX512_FEATURES, 64, call); \
        break;                                                    \
      case ::kiln::CpuIsa::kAvx2:                                 \
        KILN_ISA_VARIANT_(KILN_TARGET_AVX2_FEATURES, 32, call);   \
        break;                                                    \
      case ::kiln::CpuIsa::kBaseline: {                           \
        [[maybe_unused]] constexpr int kIsaVectorBytes = 16;      \
        call;                                                     \
        break;                                                    \
      }                                                           \
    }                                                             \
  } while (0)
#else
#define KILN_ISA_DISPATCH(call)                          \
  do {                                                   \
    [[maybe_unused]] constexpr int kIsaVectorBytes = 16; \
    call;                                                \
  } while (0)
#endif
// A kernel body the dispatcher inlines into each variant.
#define KILN_ISA_BODY [[gnu::always_inline]] inline

// Files compiled once per level (KILN_ISA_SOURCES) define their functions in namespace
// kiln::kernels::KILN_ISA_NS (isa_baseline, isa_avx2, isa_avx512). KILN_ISA_DECLARE declares
// a function in all three; KILN_ISA_CALL calls the one for cpu_isa(). Where only the
// baseline is built (not x86-64), that is the one called.
#define KILN_ISA_DECLARE(...) \
  namespace isa_baseline {    \
  __VA_ARGS__;                \
  }                           \
  namespace isa_avx2 {        \
  __VA_ARGS__;                \
  }                           \
  namespace isa_avx512 {      \
  __VA_ARGS__;                \
  }
#if defined(KILN_HAVE_ISA_VARIANTS)
#define KILN_ISA_CALL(fn, ...)            \
  switch (::kiln::detail::g_cpu_isa) {    \
    case ::kiln::CpuIsa::kAvx512:         \
      return isa_avx512::fn(__VA_ARGS__); \
    case ::kiln::CpuIsa::kAvx2:           \
      return isa_avx2::fn(__VA_ARGS__);   \
    case ::kiln::CpuIsa::kBaseline:       \
      break;                              \
  }                                       \
  return isa_baseline::fn(__VA_ARGS__)
#else
#define KILN_ISA_CALL(fn, ...) return isa_baseline::fn(__VA_ARGS__)
#endif
