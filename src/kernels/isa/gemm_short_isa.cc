// Compiled with -ffp-contract=off, as training_ops.cc: the vector rules below round exactly
// as the scalar ones in gemm_short.h (only the inner sums use fused multiply-adds, explicitly).
// Compiled once per instruction-set level (KILN_ISA_SOURCES); the AVX-512 level has all the
// kernels, the AVX2 level the few-rows product, and kernels/gemm_short.cc calls them only
// when the CPU runs at such a level.
#include <algorithm>
#include <stdexcept>
#include <utility>

#include "core/parallel.h"
#include "kernels/gemm_short.h"

#if defined(__AVX2__)
#include <immintrin.h>
#endif
#include <cmath>

namespace kiln::kernels::KILN_ISA_NS {
namespace {

#if defined(__AVX512F__)
// The vector form of each rule: 16 columns at once, `mask` selecting the real ones.
template <class Rule>
struct VectorRule;

// Prefetches row i's columns [j, j + 32) of what a rule reads: the tile's sums take long
// enough that the lines are in L1 by the time the rule runs (without it the momentum rule
// waited on memory for most of its time).
inline void prefetch_row(const float* base, int64_t ld, int64_t i, int64_t j) {
  const char* p = reinterpret_cast<const char*>(base + i * ld + j);
  _mm_prefetch(p, _MM_HINT_T0);
  _mm_prefetch(p + 64, _MM_HINT_T0);
}

template <>
struct VectorRule<StoreRule> {
  static void prefetch(const StoreRule&, int64_t, int64_t) {}
  static void apply(const StoreRule& r, int64_t i, int64_t j, __m512 c, __mmask16 mask) {
    _mm512_mask_storeu_ps(r.out + i * r.ld + j, mask, c);
  }
};
template <>
struct VectorRule<GradientDescentRule> {
  static void prefetch(const GradientDescentRule& r, int64_t i, int64_t j) { prefetch_row(r.var, r.ld, i, j); }
  static void apply(const GradientDescentRule& r, int64_t i, int64_t j, __m512 c, __mmask16 mask) {
    float* p = r.var + i * r.ld + j;
    const __m512 v = _mm512_maskz_loadu_ps(mask, p);
    _mm512_mask_storeu_ps(p, mask, _mm512_sub_ps(v, _mm512_mul_ps(_mm512_set1_ps(r.alpha), c)));
  }
};
template <>
struct VectorRule<KerasMomentumRule> {
  static void prefetch(const KerasMomentumRule& r, int64_t i, int64_t j) {
    prefetch_row(r.var, r.ld, i, j);
    prefetch_row(r.accum, r.ld, i, j);
  }
  static void apply(const KerasMomentumRule& r, int64_t i, int64_t j, __m512 c, __mmask16 mask) {
    float* pv = r.var + i * r.ld + j;
    float* pa = r.accum + i * r.ld + j;
    const __m512 step = _mm512_mul_ps(_mm512_set1_ps(r.lr), c);
    const __m512 m = _mm512_set1_ps(r.momentum);
    const __m512 accum = _mm512_sub_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(mask, pa), m), step);
    const __m512 v = _mm512_maskz_loadu_ps(mask, pv);
    _mm512_mask_storeu_ps(pa, mask, accum);
    const __m512 delta = r.nesterov ? _mm512_sub_ps(_mm512_mul_ps(accum, m), step) : accum;
    _mm512_mask_storeu_ps(pv, mask, _mm512_add_ps(v, delta));
  }
};

// The lanes of a 16-column vector that fall before column count (none, some or all).
__mmask16 lanes(int64_t count) {
  if (count <= 0) return 0;
  return count >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << count) - 1);
}

// Where A's element (row i of op(A), inner index p) is: A^T stored [K,M], or A stored [M,K].
enum class ALayout { kTransposed, kPlain };

// Rows [i, i + kRows) by columns [j, j + 16 * kCols) (masked to n): the inner sum of each
// element in one register lane, k from 0 up.
template <int kRows, int kCols, ALayout kA, class Rule>
void tile(int64_t i, int64_t j, int64_t m, int64_t n, int64_t k, const float* a, const float* b, const Rule& rule) {
  __mmask16 mask[kCols];
#pragma GCC unroll 4
  for (int c = 0; c < kCols; ++c) mask[c] = lanes(n - j - 16 * c);
  __m512 acc[kRows][kCols];
#pragma GCC unroll 28
  for (int r = 0; r < kRows; ++r)
#pragma GCC unroll 4
    for (int c = 0; c < kCols; ++c) acc[r][c] = _mm512_setzero_ps();
  for (int64_t p = 0; p < k; ++p) {
    if (p < kRows) VectorRule<Rule>::prefetch(rule, i + p, j);
    const float* bp = b + p * n + j;
    __m512 bv[kCols];
#pragma GCC unroll 4
    for (int c = 0; c < kCols; ++c) bv[c] = _mm512_maskz_loadu_ps(mask[c], bp + 16 * c);
#pragma GCC unroll 28
    for (int r = 0; r < kRows; ++r) {
      const __m512 av = _mm512_set1_ps(kA == ALayout::kTransposed ? a[p * m + i + r] : a[(i + r) * k + p]);
#pragma GCC unroll 4
      for (int c = 0; c < kCols; ++c) acc[r][c] = _mm512_fmadd_ps(av, bv[c], acc[r][c]);
    }
  }
#pragma GCC unroll 28
  for (int r = 0; r < kRows; ++r)
#pragma GCC unroll 4
    for (int c = 0; c < kCols; ++c)
      if (mask[c]) VectorRule<Rule>::apply(rule, i + r, j + 16 * c, acc[r][c], mask[c]);
}

// Columns [j, j + 16 * kCols): row blocks of kRows, then the rest as one smaller block.
template <int kRows, int kCols, ALayout kA, class Rule>
void column_panel(int64_t j, int64_t m, int64_t n, int64_t k, const float* a, const float* b, const Rule& rule) {
  int64_t i = 0;
  for (; i + kRows <= m; i += kRows) tile<kRows, kCols, kA>(i, j, m, n, k, a, b, rule);
  const int64_t rest = m - i;
  if (rest == 0) return;
  // Instantiations for every remainder: one block, not one latency chain per row.
  [&]<int... R>(std::integer_sequence<int, R...>) {
    ((rest == R + 1 ? tile<R + 1, kCols, kA>(i, j, m, n, k, a, b, rule) : void()), ...);
  }
  (std::make_integer_sequence<int, kRows - 1>{});
}

// Column panels, split over the intra-op threads when the product is large enough to pay
// for waking them (where the library GEMM path splits too), or when B is: with a few rows,
// reading B is the cost, and each core reads its panels into caches of its own (a batch-1
// classifier's 1x1280 by 1280x1000 product).
constexpr int64_t kParallelWork = int64_t{128} * 128 * 128;
constexpr int64_t kParallelB = int64_t{1} << 18;

template <ALayout kA, class Rule>
void panels(int64_t m, int64_t n, int64_t k, const float* a, const float* b, const Rule& rule) {
  // 14 rows x 32 columns keep 28 sums in registers (of 32); a narrow C, 28 rows x 16; a
  // product of at most 4 rows, 4 x 64, so that one row still has 4 chains of multiply-adds
  // in flight (4 x 32 left a batch-1 recurrent step latency-bound).
  const int64_t width = n <= 16 ? 16 : m <= 4 ? 64 : 32;
  const int64_t count = (n + width - 1) / width;
  const bool parallel = m * n * k >= kParallelWork || k * n >= kParallelB;
  parallel_for(count, parallel ? 2 : count + 1, [&](int64_t lo, int64_t hi) {
    for (int64_t p = lo; p < hi; ++p) {
      if (width == 16)
        column_panel<28, 1, kA>(p * width, m, n, k, a, b, rule);
      else if (width == 64)
        column_panel<4, 4, kA>(p * width, m, n, k, a, b, rule);
      else
        column_panel<14, 2, kA>(p * width, m, n, k, a, b, rule);
    }
  });
}
#elif defined(__AVX2__) && defined(__FMA__)
// The AVX2 level (16 registers of 8 floats): rows [i, i + kRows) by columns [j, j + 8 * kCols)
// of C = A B, the sums in registers over all of k. Each element is one fused multiply-add
// chain over k from zero, as in the AVX-512 tiles, so both levels give the same bits; B is
// read in place, where OpenBLAS would first copy it into panels (a recurrent step's 8 x 64
// by 64 x 256 product spent 45% of its time in that copy).
template <int kRows, int kCols>
void tile8(int64_t i, int64_t j, int64_t n, int64_t k, const float* a, const float* b, float* c) {
  __m256 acc[kRows][kCols];
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r)
#pragma GCC unroll 4
    for (int q = 0; q < kCols; ++q) acc[r][q] = _mm256_setzero_ps();
  for (int64_t p = 0; p < k; ++p) {
    const float* bp = b + p * n + j;
    __m256 bv[kCols];
#pragma GCC unroll 4
    for (int q = 0; q < kCols; ++q) bv[q] = _mm256_loadu_ps(bp + 8 * q);
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      const __m256 av = _mm256_broadcast_ss(a + (i + r) * k + p);
#pragma GCC unroll 4
      for (int q = 0; q < kCols; ++q) acc[r][q] = _mm256_fmadd_ps(av, bv[q], acc[r][q]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r)
#pragma GCC unroll 4
    for (int q = 0; q < kCols; ++q) _mm256_storeu_ps(c + (i + r) * n + j + 8 * q, acc[r][q]);
}

// Columns [j, j + 8 * kCols) for all m rows: blocks of up to 6 rows for 16 columns (12 sums,
// B's two vectors and a broadcast fill 15 of the 16 registers) or of 2 for 32 columns, the
// rows shared evenly among the blocks. A block of one or two rows has too few chains of
// multiply-adds in flight to hide their latency: 8 rows as 6 + 2 took 18.4 us for 8x128 by
// 128x512 on a Xeon at this level, as 4 + 4 14.7 us (the same sums: each element one chain).
template <int kCols>
void column_panel8(int64_t j, int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c) {
  constexpr int kRows = kCols == 4 ? 2 : 6;
  const int64_t blocks = (m + kRows - 1) / kRows;
  for (int64_t block = 0, i = 0; block < blocks; ++block) {
    const int64_t rows = (m - i) / (blocks - block);  // sizes differ by at most one
    [&]<int... R>(std::integer_sequence<int, R...>) {
      ((rows == R + 1 ? tile8<R + 1, kCols>(i, j, n, k, a, b, c) : void()), ...);
    }
    (std::make_integer_sequence<int, kRows>{});
    i += rows;
  }
}

constexpr int64_t kParallelWork = int64_t{128} * 128 * 128;
constexpr int64_t kParallelB = int64_t{1} << 18;  // as at the AVX-512 level

void short_rows_avx2(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c) {
  // 16-column panels (32 for one or two rows, so that a row still has four chains of
  // multiply-adds in flight: with two, a 1x256 by 256x1024 product waited on their latency),
  // then one of 16 or 8, then single columns.
  const int64_t width = m <= 2 ? 32 : 16;
  const int64_t panels = n / width;
  const bool parallel = m * n * k >= kParallelWork || k * n >= kParallelB;
  parallel_for(panels, parallel ? 2 : panels + 1, [&](int64_t lo, int64_t hi) {
    for (int64_t p = lo; p < hi; ++p)
      width == 32 ? column_panel8<4>(width * p, m, n, k, a, b, c) : column_panel8<2>(width * p, m, n, k, a, b, c);
  });
  int64_t j = width * panels;
  if (n - j >= 16) {
    column_panel8<2>(j, m, n, k, a, b, c);
    j += 16;
  }
  if (n - j >= 8) {
    column_panel8<1>(j, m, n, k, a, b, c);
    j += 8;
  }
  // The last n % 8 columns: the same chain per element, one lane at a time.
  for (int64_t i = 0; i < m; ++i)
    for (int64_t q = j; q < n; ++q) {
      float sum = 0.f;
      for (int64_t p = 0; p < k; ++p) sum = std::fma(a[i * k + p], b[p * n + q], sum);
      c[i * n + q] = sum;
    }
}
#endif

}  // namespace

void gemm_short_rows(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c) {
#if defined(__AVX512F__)
  panels<ALayout::kPlain>(m, n, k, a, b, StoreRule{.out = c, .ld = n});
#elif defined(__AVX2__) && defined(__FMA__)
  short_rows_avx2(m, n, k, a, b, c);
#else
  (void)m, (void)n, (void)k, (void)a, (void)b, (void)c;
  throw std::logic_error("gemm_short_rows needs AVX2 (short_rows_nn is false here)");
#endif
}

template <class Rule>
void gemm_tn_short(int64_t m, int64_t n, int64_t k, const float* a, const float* b, const Rule& rule) {
#if defined(__AVX512F__)
  panels<ALayout::kTransposed>(m, n, k, a, b, rule);
#else
  (void)m, (void)n, (void)k, (void)a, (void)b, (void)rule;
  throw std::logic_error("gemm_tn_short needs AVX-512 (short_inner_tn is false here)");
#endif
}

template void gemm_tn_short<StoreRule>(int64_t, int64_t, int64_t, const float*, const float*, const StoreRule&);
template void gemm_tn_short<GradientDescentRule>(int64_t, int64_t, int64_t, const float*, const float*,
                                                 const GradientDescentRule&);
template void gemm_tn_short<KerasMomentumRule>(int64_t, int64_t, int64_t, const float*, const float*,
                                               const KerasMomentumRule&);

}  // namespace kiln::kernels::KILN_ISA_NS
