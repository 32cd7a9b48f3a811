#include "core/cpu_isa.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace kiln {

CpuIsa cpu_isa_supported() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();  // may run before the runtime's own initializer (static init order)
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2") &&
                    __builtin_cpu_supports("f16c");
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
