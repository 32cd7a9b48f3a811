// kernels::gemm's entry points: each call runs the variant for this CPU
// (kernels/isa/gemm_isa.cc, compiled once per instruction-set level).
#include "kernels/gemm.h"

#include <atomic>
#include <string>

#include "core/cpu_isa.h"
#include "kernels/blas.h"
#include "kernels/isa_dispatch.h"
#include "kernels/onednn.h"
#include "kiln/cpu.h"

namespace kiln::kernels {

KILN_ISA_DECLARE(template <class T> void gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k,
                                              const T* a, const T* b, T* c))
KILN_ISA_DECLARE(template <class T> void gemm_strided(bool transpose_a, bool transpose_b, int64_t m, int64_t n,
                                                      int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb, T* c,
                                                      int64_t ldc))
KILN_ISA_DECLARE(void eigen_sgemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c))

namespace {
std::atomic<bool> g_use_openblas{true};
}  // namespace

void use_openblas_for_large_gemms(bool use) { g_use_openblas.store(use, std::memory_order_relaxed); }
bool openblas_for_large_gemms() { return g_use_openblas.load(std::memory_order_relaxed); }

template <class T>
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* c) {
  KILN_ISA_CALL(gemm<T>, ta, tb, m, n, k, a, b, c);
}

template <class T>
void gemm_strided(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb,
                  T* c, int64_t ldc) {
  KILN_ISA_CALL(gemm_strided<T>, ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
}
template void gemm_strided<float>(bool, bool, int64_t, int64_t, int64_t, const float*, int64_t, const float*, int64_t,
                                  float*, int64_t);
template void gemm_strided<double>(bool, bool, int64_t, int64_t, int64_t, const double*, int64_t, const double*,
                                   int64_t, double*, int64_t);

template void gemm<float>(bool, bool, int64_t, int64_t, int64_t, const float*, const float*, float*);
template void gemm<double>(bool, bool, int64_t, int64_t, int64_t, const double*, const double*, double*);
template void gemm<int32_t>(bool, bool, int64_t, int64_t, int64_t, const int32_t*, const int32_t*, int32_t*);
template void gemm<int64_t>(bool, bool, int64_t, int64_t, int64_t, const int64_t*, const int64_t*, int64_t*);

const char* large_gemm_backend() {
  static const std::string library =
      blas().sgemm ? std::string("openblas (") + (blas().core ? blas().core : "?") + ")" : std::string("eigen");
  // Float products go to oneDNN where its AVX-512 GEMM runs (kernels/isa/gemm_isa.cc).
  static const std::string onednn_first = std::string(onednn::description()) + " float32, " + library + " float64";
  return cpu_isa() == CpuIsa::kAvx512 && onednn::usable() ? onednn_first.c_str() : library.c_str();
}

SgemmFn openblas_sgemm() { return reinterpret_cast<SgemmFn>(blas().sgemm); }

void eigen_sgemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c) {
  KILN_ISA_CALL(eigen_sgemm, m, n, k, a, b, c);
}

}  // namespace kiln::kernels

namespace kiln::config {
const char* gemm_library() { return kernels::large_gemm_backend(); }
}  // namespace kiln::config
