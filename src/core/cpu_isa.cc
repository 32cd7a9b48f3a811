#include "core/cpu_isa.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace kiln {

CpuIsa cpu_isa_supported() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();  // may run before the runtime's own initializer (static init order)
  // What the AVX2 level's code may use (x86-64-v3, kernels/isa_dispatch.h): the compiler's
  // checks where both GCC and Clang 14 have them (they include the OS's saving of the vector
  // registers), CPUID bits for the rest.
  unsigned a = 0, b = 0, c = 0, d = 0;
  const bool leaf1 = __get_cpuid(1, &a, &b, &c, &d);
  const bool f16c = leaf1 && (c & bit_F16C), movbe = leaf1 && (c & bit_MOVBE), popcnt = leaf1 && (c & bit_POPCNT);
  const bool lzcnt = __get_cpuid(0x80000001, &a, &b, &c, &d) && (c & bit_LZCNT);
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi") &&
                    __builtin_cpu_supports("bmi2") && f16c && movbe && popcnt && lzcnt;
  const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
                      __builtin_cpu_supports("avx512cd");
  return avx512 ? CpuIsa::kAvx512 : avx2 ? CpuIsa::kAvx2 : CpuIsa::kBaseline;
#else
  return CpuIsa::kBaseline;
#endif
}

const char* cpu_isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kAvx512:
      return "avx512";
    case CpuIsa::kAvx2:
      return "avx2";
    case CpuIsa::kBaseline:
      break;
  }
  return "baseline";
}

namespace detail {
CpuIsa pick_cpu_isa(CpuIsa cpu, const char* requested, bool* unknown) {
  *unknown = false;
  if (!requested || !*requested) return cpu;
  for (CpuIsa want : {CpuIsa::kBaseline, CpuIsa::kAvx2, CpuIsa::kAvx512})
    if (std::strcmp(requested, cpu_isa_name(want)) == 0) return want < cpu ? want : cpu;
  *unknown = true;
  return cpu;
}
}  // namespace detail

namespace {
CpuIsa pick() {
  const CpuIsa cpu = cpu_isa_supported();
  const char* env = std::getenv("KILN_CPU_ISA");
  bool unknown = false;
  const CpuIsa isa = detail::pick_cpu_isa(cpu, env, &unknown);
  // Said once, at load: a misspelt level must not silently test the wrong variant.
  if (unknown)
    std::fprintf(stderr, "kiln: KILN_CPU_ISA=%s is not one of baseline, avx2, avx512; running at %s\n", env,
                 cpu_isa_name(cpu));
  return isa;
}
}  // namespace

namespace detail {
// Read before this initializer has run (another file's static initializer), it is zero: the
// baseline, which is correct on every CPU.
const CpuIsa g_cpu_isa = pick();
}  // namespace detail

CpuIsa cpu_isa() { return detail::g_cpu_isa; }

}  // namespace kiln
