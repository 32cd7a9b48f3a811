// Register-tiled float GEMMs for products too short for the library GEMM's packing to pay:
// a short inner dimension, C = A^T B (A: [K,M], B: [K,N], K <= kShortInner; the product a
// weight gradient is, x^T dy over a batch), and few rows, C = A B (M <= 14). Each tile of C
// keeps its whole inner sum in registers, in k order from zero, and is then handed to an
// output rule while still there: stored, or applied to a variable as a training update, so
// an update fused into its gradient product costs no pass of its own and equals the two ops
// bit for bit. Every element is one fused multiply-add chain over k from zero, whatever the
// tiling or the threads.
#pragma once
#include <cstdint>

#include "core/cpu_isa.h"

namespace kiln::kernels {

inline constexpr int64_t kShortInner = 128;

// Whether MatMul sends a float product here, and so whether the optimizer may fuse an
// update into it. On CPUs running at the AVX-512 level only (core/cpu_isa.h): elsewhere the
// library GEMM runs and nothing fuses.
inline bool short_inner_tn(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k) {
  // Up to 4M outputs: beyond, A^T is re-read from far caches for every column panel and the
  // library GEMM's blocking wins (not measured there: kept to the sizes that were).
  return ::kiln::detail::g_cpu_isa == ::kiln::CpuIsa::kAvx512 && transpose_a && !transpose_b && k >= 1 &&
         k <= kShortInner && m * n >= 64 * 64 && m * n <= (int64_t{1} << 22);
}

// A few rows times a wide matrix, C = A B (A [M,K] with 1 <= M <= 14, 16 at AVX2, N > 16, row-major):
// a recurrent cell's, a small batch's or a served model's batch-1 product, whose M is too
// short for the library GEMM's packing to pay (it copies all of B to read it once: a 1x1280
// times 1280x1000 classifier took 414 us through OpenBLAS, 187 here). All M rows of a
// 32-column panel stay in registers over k.
// At the AVX2 level (16 registers: 6 rows at a time), up to 8 rows and a B of at most 1 MB,
// or up to 16 rows and a B of at most 256 KB, which stays in cache across the row blocks
// that each read it.
inline bool short_rows_nn(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k) {
  if (transpose_a || transpose_b || m < 1 || n <= 16) return false;
  switch (::kiln::detail::g_cpu_isa) {
    case ::kiln::CpuIsa::kAvx512:
      return m <= 14;
    case ::kiln::CpuIsa::kAvx2:
      // Up to 16 rows where B (at most 256 KB) stays in L2 across the three row blocks that
      // each read it: an LSTM(128) step's 16x128 by 128x512 took 29.9 us through OpenBLAS and
      // 20.8 here, 12 rows 24.5 and 15.3 (Xeon at this level, one thread).
      return (m <= 8 && k * n <= (int64_t{1} << 18)) || (m <= 16 && k * n <= (int64_t{1} << 16));
    default:
      return false;
  }
}
void gemm_short_rows(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c);

// The training updates, written once for the ops' own kernels and for the fused epilogue.
// Their files compile without multiply-add contraction, so every form rounds alike.
// ResourceApplyGradientDescent, and a Mul by a scalar then AssignSubVariableOp: two roundings.
template <class T>
T gradient_descent_rule(T var, T alpha, T grad) {
  return var - alpha * grad;
}
template <class T>  // ResourceApplyKerasMomentum; Nesterov: var += accum * momentum - lr * grad
void keras_momentum_rule(T& var, T& accum, T lr, T momentum, bool nesterov, T grad) {
  const T step = lr * grad;
  accum = accum * momentum - step;
  var += nesterov ? accum * momentum - step : accum;
}

// What happens to C[i][j] = c.
struct StoreRule {
  float* out;
  int64_t ld;
  void apply(int64_t i, int64_t j, float c) const { out[i * ld + j] = c; }
};
struct GradientDescentRule {
  float* var;
  int64_t ld;
  float alpha;
  void apply(int64_t i, int64_t j, float c) const {
    var[i * ld + j] = gradient_descent_rule(var[i * ld + j], alpha, c);
  }
};
struct KerasMomentumRule {
  float* var;
  float* accum;
  int64_t ld;
  float lr, momentum;
  bool nesterov;
  void apply(int64_t i, int64_t j, float c) const {
    keras_momentum_rule(var[i * ld + j], accum[i * ld + j], lr, momentum, nesterov, c);
  }
};

// C = A^T B handed to `rule`, 16 columns at a time (vector forms of the rules above), split
// over the intra-op threads by column blocks. Only where short_inner_tn can be true.
template <class Rule>
void gemm_tn_short(int64_t m, int64_t n, int64_t k, const float* a, const float* b, const Rule& rule);

}  // namespace kiln::kernels
