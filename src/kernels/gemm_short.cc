// The short GEMMs' entry points: the kernels exist at the AVX-512 level (and the few-rows
// product at AVX2 too; kernels/isa/gemm_short_isa.cc), and short_inner_tn / short_rows_nn
// send work here only when the CPU runs at such a level.
#include "kernels/gemm_short.h"

#include <stdexcept>
#include <string>

#include "kernels/isa_dispatch.h"

namespace kiln::kernels {

KILN_ISA_DECLARE(void gemm_short_rows(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c))
KILN_ISA_DECLARE(template <class Rule>
                 void gemm_tn_short(int64_t m, int64_t n, int64_t k, const float* a, const float* b, const Rule& rule))

namespace {
[[noreturn]] void no_kernel(const char* what) {
  throw std::logic_error(std::string(what) + " has no kernel at this level (its predicate is false here)");
}
}  // namespace

void gemm_short_rows(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c) {
#if defined(KILN_HAVE_ISA_VARIANTS)
  if (::kiln::detail::g_cpu_isa == CpuIsa::kAvx512) return isa_avx512::gemm_short_rows(m, n, k, a, b, c);
  if (::kiln::detail::g_cpu_isa == CpuIsa::kAvx2) return isa_avx2::gemm_short_rows(m, n, k, a, b, c);
#endif
  (void)m, (void)n, (void)k, (void)a, (void)b, (void)c;
  no_kernel("gemm_short_rows");
}

template <class Rule>
void gemm_tn_short(int64_t m, int64_t n, int64_t k, const float* a, const float* b, const Rule& rule) {
#if defined(KILN_HAVE_ISA_VARIANTS)
  if (::kiln::detail::g_cpu_isa == CpuIsa::kAvx512) return isa_avx512::gemm_tn_short(m, n, k, a, b, rule);
#endif
  (void)m, (void)n, (void)k, (void)a, (void)b, (void)rule;
  no_kernel("gemm_tn_short");
}

template void gemm_tn_short<StoreRule>(int64_t, int64_t, int64_t, const float*, const float*, const StoreRule&);
template void gemm_tn_short<GradientDescentRule>(int64_t, int64_t, int64_t, const float*, const float*,
                                                 const GradientDescentRule&);
template void gemm_tn_short<KerasMomentumRule>(int64_t, int64_t, int64_t, const float*, const float*,
                                               const KerasMomentumRule&);

}  // namespace kiln::kernels
