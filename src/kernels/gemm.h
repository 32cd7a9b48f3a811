// Row-major GEMM: C[M,N] = op(A) * op(B), op = transpose when the flag is set
// (A is [K,M] when transpose_a, B is [N,K] when transpose_b).
#pragma once
#include <cstdint>

namespace kiln::kernels {

template <class T>
void gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* c);

// The same product with leading dimensions (float and double), in the calling thread: A, B
// and C may be strided views of larger tensors (Einsum reads attention's heads in place).
// Element (r, c) of a row-major operand with leading dimension ld is at r * ld + c.
template <class T>
void gemm_strided(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
                  const T* b, int64_t ldb, T* c, int64_t ldc);

// Which implementation large float GEMMs use: "openblas (<core>)" or "eigen".
const char* large_gemm_backend();

// For tests: large GEMMs take the Eigen path even when OpenBLAS is loaded (the path of a
// machine without OpenBLAS), until called again with true.
void use_openblas_for_large_gemms(bool use);
bool openblas_for_large_gemms();

// For benchmarks: OpenBLAS's own cblas_sgemm, loaded so that OPENBLAS_CORETYPE cannot
// pin it to a slower core; null when OpenBLAS is not installed.
using SgemmFn = void (*)(int order, int ta, int tb, int m, int n, int k, float alpha, const float* a, int lda,
                         const float* b, int ldb, float beta, float* c, int ldc);
SgemmFn openblas_sgemm();
// Eigen's GEMM, for the same comparison.
void eigen_sgemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c);

}  // namespace kiln::kernels
