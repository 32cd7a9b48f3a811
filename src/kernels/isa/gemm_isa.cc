// kernels::gemm for one instruction-set level: compiled once per level (KILN_ISA_SOURCES),
// because Eigen's packets and the narrow kernels' intrinsics are picked by the preprocessor.
// kernels/gemm.cc calls the variant cpu_isa() picked.
#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "core/parallel.h"
#include "core/scratch.h"
#include "kernels/blas.h"
#include "kernels/eigen_core.h"
#include "kernels/gemm.h"
#include "kernels/gemm_short.h"
#include "kernels/onednn.h"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace kiln::kernels::KILN_ISA_NS {
namespace {

// Below this many multiply-adds the plain loop wins: no packing, no library call.
constexpr int64_t kSmallGemmWork = 48 * 48 * 48;

template <class T>
using RowMat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// out[c][r] = in[r][c]
template <class T>
void transpose_into(const T* in, int64_t rows, int64_t cols, T* out) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) out[c * rows + r] = in[r * cols + c];
}

// C = A[M,K] * B[K,N], all contiguous row-major: i-k-j order keeps the inner loop
// contiguous in both B and C so it vectorizes.
template <class T>
void gemm_small(int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* c) {
  for (int64_t i = 0; i < m; ++i) {
    T* ci = c + i * n;
    for (int64_t j = 0; j < n; ++j) ci[j] = T(0);
    const T* ai = a + i * k;
    for (int64_t p = 0; p < k; ++p) {
      const T av = ai[p];
      const T* bp = b + p * n;
      if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;  // wraps on overflow, as TensorFlow
        for (int64_t j = 0; j < n; ++j)
          ci[j] = static_cast<T>(static_cast<U>(ci[j]) + static_cast<U>(av) * static_cast<U>(bp[j]));
      } else {
        for (int64_t j = 0; j < n; ++j) ci[j] += av * bp[j];
      }
    }
  }
}

// Floating point: each row of C in blocks of kBlock vectors that stay in registers over all
// of k, so an element of C is stored once instead of loaded and stored on every step of k,
// as gemm_small's i-k-j loop does (an LSTM(128) step at batch 1, a vector times a 128x512
// matrix, spent 7.7 us there). Each element sums over k in the same order, so the results
// are gemm_small's.
//
// A vector is one register: 64 bytes at AVX-512, 32 at AVX2, 16 (SSE) at the baseline level,
// where GCC had kept 32-byte vectors' sums on the stack. A block is 16 vectors at AVX-512 (half
// its 32 registers) and 8 below (half of 16). Sapphire Rapids-class Xeon, one thread: a vector
// times 128x512 (BM_GemmVectorRow) 3.6 -> 3.0 us at AVX-512, 3.9 -> 3.4 at AVX2, 35 -> 4.4 at
// the baseline level; the served LSTM classifier at batch 1, whose step is that product (best
// of 1,500-3,000 calls, runs alternated), 0.40-0.41 ms before and after at AVX-512, 0.53 ->
// 0.49 at AVX2, 3.0 -> 0.68-0.71 at the baseline level.
template <class T>
void gemm_small_rows(int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* c) {
#if defined(__AVX512F__)
  constexpr int kBytes = 64, kBlock = 16;
#elif defined(__AVX__)
  constexpr int kBytes = 32, kBlock = 8;
#else
  constexpr int kBytes = 16, kBlock = 8;
#endif
  typedef T Vec __attribute__((vector_size(kBytes)));
  constexpr int64_t kLanes = kBytes / sizeof(T);
  for (int64_t i = 0; i < m; ++i) {
    const T* ai = a + i * k;
    T* ci = c + i * n;
    int64_t j = 0;
    for (; j + kBlock * kLanes <= n; j += kBlock * kLanes) {
      Vec acc[kBlock] = {};
      for (int64_t p = 0; p < k; ++p) {
        const T av = ai[p];
        const T* bp = b + p * n + j;
        for (int v = 0; v < kBlock; ++v) {
          Vec bv;
          std::memcpy(&bv, bp + v * kLanes, sizeof(bv));  // an unaligned vector load
          acc[v] += av * bv;
        }
      }
      std::memcpy(ci + j, acc, sizeof(acc));
    }
    for (; j + kLanes <= n; j += kLanes) {
      Vec acc = {};
      for (int64_t p = 0; p < k; ++p) {
        Vec bv;
        std::memcpy(&bv, b + p * n + j, sizeof(bv));
        acc += ai[p] * bv;
      }
      std::memcpy(ci + j, &acc, sizeof(acc));
    }
    if (j == n) continue;
    for (int64_t q = j; q < n; ++q) ci[q] = T(0);
    for (int64_t p = 0; p < k; ++p)
      for (int64_t q = j; q < n; ++q) ci[q] += ai[p] * b[p * n + q];
  }
}

// N <= W: each row of C accumulates in a fixed-width local array, so the compiler keeps it
// in vector registers and fully vectorizes the update (no scalar remainder loop for N=10).
template <class T, bool = std::is_integral_v<T>>
struct Accum {
  using type = T;
};
template <class T>
struct Accum<T, true> {
  using type = std::make_unsigned_t<T>;
};  // integers wrap

// Writes the first n lanes of a row of vectors.
template <class T, class U, class Vec>
void store_row(const Vec* acc, int64_t n, T* dst) {
  const U* lanes = reinterpret_cast<const U*>(acc);
  for (int64_t j = 0; j < n; ++j) dst[j] = static_cast<T>(lanes[j]);
}

template <class T, int W>
void gemm_narrow(int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* c) {
  using U = typename Accum<T>::type;
  // A row of W lanes is NV vectors of 32 bytes (one AVX register each). Wider GCC vectors
  // get spilled through the stack, so the row is kept as an array the compiler unrolls.
  typedef U Vec __attribute__((vector_size(32)));
  constexpr int kLanes = 32 / sizeof(U);
  constexpr int NV = (W + kLanes - 1) / kLanes;
  constexpr int64_t kMaxK = 64;
  if (k > kMaxK) return gemm_small(m, n, k, a, b, c);
  Vec bpad[kMaxK][NV];  // B with rows padded to NV vectors (zeros beyond n)
  for (int64_t p = 0; p < k; ++p) {
    U lanes[NV * kLanes];
    for (int j = 0; j < NV * kLanes; ++j) lanes[j] = j < n ? static_cast<U>(b[p * n + j]) : U(0);
    std::memcpy(static_cast<void*>(bpad[p]), lanes, sizeof(lanes));  // fixed size: a register move
  }
  // Rows go in blocks of kRows so that kRows * NV independent accumulators hide the FMA
  // latency (one row alone is a dependency chain of length k).
  constexpr int kRows = 5;
  int64_t i = 0;
  for (; i + kRows <= m; i += kRows) {
    Vec acc[kRows][NV] = {};
    for (int64_t p = 0; p < k; ++p)
      for (int r = 0; r < kRows; ++r) {
        const U av = static_cast<U>(a[(i + r) * k + p]);
        for (int v = 0; v < NV; ++v) acc[r][v] += av * bpad[p][v];
      }
    for (int r = 0; r < kRows; ++r) store_row<T, U>(acc[r], n, c + (i + r) * n);
  }
  for (; i < m; ++i) {
    Vec acc[NV] = {};
    for (int64_t p = 0; p < k; ++p) {
      const U av = static_cast<U>(a[i * k + p]);
      for (int v = 0; v < NV; ++v) acc[v] += av * bpad[p][v];
    }
    store_row<T, U>(acc, n, c + i * n);
  }
}

#if defined(__AVX2__) && defined(__FMA__)
// N <= 16 with 32-bit elements: one row of C is one vector (a 512-bit register, or two
// 256-bit ones at the AVX2 level; one when N <= 8). B's rows are read with masked loads
// straight from the caller's buffer (no packing: building padded rows with scalar stores and
// reading them back as vectors stalled store forwarding, which was half the time of a 10x10
// product), and C's rows are written with masked stores. kMaxRows rows go at once, as many
// as keep accumulators and B's row in the 16 or 32 vector registers.
#if defined(__AVX512F__)
struct Lanes16F {
  using Vec = __m512;
  using Mask = __mmask16;
  static constexpr int kMaxRows = 10, kWidth = 16;
  static Mask mask(int64_t n) { return static_cast<__mmask16>((1u << n) - 1); }
  static Vec load(Mask m, const float* p) { return _mm512_maskz_loadu_ps(m, p); }
  static Vec load_spill(Mask m, const float* p) { return load(m, p); }
  static void store(float* p, Mask m, Vec v) { _mm512_mask_storeu_ps(p, m, v); }
  static void store_spill(float* p, Mask m, Vec v) { store(p, m, v); }
  static Vec zero() { return _mm512_setzero_ps(); }
  static Vec madd(Vec acc, float a, Vec b) { return _mm512_fmadd_ps(_mm512_set1_ps(a), b, acc); }
};
struct Lanes16I {  // wraps on overflow, as TensorFlow
  using Vec = __m512i;
  using Mask = __mmask16;
  static constexpr int kMaxRows = 10, kWidth = 16;
  static Mask mask(int64_t n) { return static_cast<__mmask16>((1u << n) - 1); }
  static Vec load(Mask m, const int32_t* p) { return _mm512_maskz_loadu_epi32(m, p); }
  static Vec load_spill(Mask m, const int32_t* p) { return load(m, p); }
  static void store(int32_t* p, Mask m, Vec v) { _mm512_mask_storeu_epi32(p, m, v); }
  static void store_spill(int32_t* p, Mask m, Vec v) { store(p, m, v); }
  static Vec zero() { return _mm512_setzero_si512(); }
  static Vec madd(Vec acc, int32_t a, Vec b) {
    return _mm512_add_epi32(acc, _mm512_mullo_epi32(_mm512_set1_epi32(a), b));
  }
};
#endif
// AVX2 masks: lane j is on when j < n (the sign bit of each 32-bit lane). Masked loads and
// stores are slow on AMD's cores (microcoded), so rows whose full width stays inside the
// matrix are read and written whole (load_spill, store_spill): the lanes past a row of C
// land on the next rows, which are written after it.
inline __m256i avx2_mask(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
struct Lanes8F {  // N <= 8
  using Vec = __m256;
  using Mask = __m256i;
  static constexpr int kMaxRows = 10, kWidth = 8;
  static Mask mask(int64_t n) { return avx2_mask(n); }
  static Vec load(Mask m, const float* p) { return _mm256_maskload_ps(p, m); }
  static Vec load_spill(Mask, const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, Mask m, Vec v) { _mm256_maskstore_ps(p, m, v); }
  static void store_spill(float* p, Mask, Vec v) { _mm256_storeu_ps(p, v); }
  static Vec zero() { return _mm256_setzero_ps(); }
  static Vec madd(Vec acc, float a, Vec b) { return _mm256_fmadd_ps(_mm256_set1_ps(a), b, acc); }
};
struct Lanes8I {  // N <= 8; wraps on overflow, as TensorFlow
  using Vec = __m256i;
  using Mask = __m256i;
  static constexpr int kMaxRows = 10, kWidth = 8;
  static Mask mask(int64_t n) { return avx2_mask(n); }
  static Vec load(Mask m, const int32_t* p) { return _mm256_maskload_epi32(reinterpret_cast<const int*>(p), m); }
  static Vec load_spill(Mask, const int32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static void store(int32_t* p, Mask m, Vec v) { _mm256_maskstore_epi32(reinterpret_cast<int*>(p), m, v); }
  static void store_spill(int32_t* p, Mask, Vec v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
  static Vec zero() { return _mm256_setzero_si256(); }
  static Vec madd(Vec acc, int32_t a, Vec b) {
    return _mm256_add_epi32(acc, _mm256_mullo_epi32(_mm256_set1_epi32(a), b));
  }
};
// 8 < N <= 16 at the AVX2 level: a row is two 256-bit vectors.
template <class L8>
struct Pair {
  struct Vec {
    typename L8::Vec lo, hi;
  };
  struct Mask {
    typename L8::Mask lo, hi;
  };
  static constexpr int kMaxRows = 6, kWidth = 16;  // 12 accumulators, B's two halves: 16 registers
  static Mask mask(int64_t n) { return {L8::mask(n), L8::mask(n - 8)}; }
  template <class T>
  static Vec load(const Mask& m, const T* p) {
    return {L8::load_spill(m.lo, p), L8::load(m.hi, p + 8)};
  }
  template <class T>
  static Vec load_spill(const Mask& m, const T* p) {
    return {L8::load_spill(m.lo, p), L8::load_spill(m.hi, p + 8)};
  }
  template <class T>
  static void store(T* p, const Mask& m, const Vec& v) {
    L8::store_spill(p, m.lo, v.lo);  // n > 8: the low half is inside the row
    L8::store(p + 8, m.hi, v.hi);
  }
  template <class T>
  static void store_spill(T* p, const Mask& m, const Vec& v) {
    L8::store_spill(p, m.lo, v.lo);
    L8::store_spill(p + 8, m.hi, v.hi);
  }
  static Vec zero() { return {L8::zero(), L8::zero()}; }
  template <class T>
  static Vec madd(const Vec& acc, T a, const Vec& b) {
    return {L8::madd(acc.lo, a, b.lo), L8::madd(acc.hi, a, b.hi)};
  }
};

// kRows (<= 10) rows of C at once: independent accumulators hide the multiply-add latency
// (a 10x10 product is one block). They are named variables, not an array: GCC stored an
// accumulator array to the stack on every step of k, which halved the speed.
template <class L, int kRows, class T>
void narrow_rows(int64_t i, int64_t m, int64_t n, int64_t k, const typename L::Mask& mask, const T* a, const T* b,
                 T* c) {
  static_assert(kRows >= 1 && kRows <= 10);
  using Vec = typename L::Vec;
  Vec c0 = L::zero(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0, c8 = c0, c9 = c0;
  const T* ar = a + i * k;
  for (int64_t p = 0; p < k; ++p) {
    // Lanes past a row of B read the next rows (they reach only lanes of C that are not
    // kept); a row whose full width would pass B's end is read masked.
    const Vec bp = p * n + L::kWidth <= k * n ? L::load_spill(mask, b + p * n) : L::load(mask, b + p * n);
#define KILN_ROW(r) \
  if constexpr (kRows > r) c##r = L::madd(c##r, ar[r * k + p], bp);
    KILN_ROW(0)
    KILN_ROW(1) KILN_ROW(2) KILN_ROW(3) KILN_ROW(4) KILN_ROW(5) KILN_ROW(6) KILN_ROW(7) KILN_ROW(8) KILN_ROW(9)
#undef KILN_ROW
  }
  T* cr = c + i * n;
#define KILN_ROW(r)                           \
  if constexpr (kRows > r) {                  \
    if ((i + r) * n + L::kWidth > m * n)      \
      L::store(cr + r * n, mask, c##r);       \
    else                                      \
      L::store_spill(cr + r * n, mask, c##r); \
  }
  KILN_ROW(0)
  KILN_ROW(1) KILN_ROW(2) KILN_ROW(3) KILN_ROW(4) KILN_ROW(5) KILN_ROW(6) KILN_ROW(7) KILN_ROW(8) KILN_ROW(9)
#undef KILN_ROW
}

// The last `left` (< L::kMaxRows) rows as one block too, so they do not run one latency
// chain each.
template <class L, int kRows, class T>
void narrow_rest(int64_t left, int64_t i, int64_t n, int64_t k, const typename L::Mask& mask, const T* a, const T* b,
                 T* c) {
  if constexpr (kRows >= 1) {
    if (left == kRows) return narrow_rows<L, kRows>(i, i + left, n, k, mask, a, b, c);
    narrow_rest<L, kRows - 1>(left, i, n, k, mask, a, b, c);
  }
}

template <class L, class T>
void gemm_narrow_masked(int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* c) {
  const typename L::Mask mask = L::mask(n);
  constexpr int R = L::kMaxRows;
  int64_t i = 0;
  for (; i + R <= m; i += R) narrow_rows<L, R>(i, m, n, k, mask, a, b, c);
  narrow_rest<L, R - 1>(m - i, i, n, k, mask, a, b, c);
}

// C = A B for N <= 16 and 32-bit elements with this level's vectors; false if not such.
template <class T>
bool gemm_narrow_vector(int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* c) {
  if (n > 16) return false;
#if defined(__AVX512F__)
  if constexpr (std::is_same_v<T, float>) return gemm_narrow_masked<Lanes16F>(m, n, k, a, b, c), true;
  if constexpr (std::is_same_v<T, int32_t>) return gemm_narrow_masked<Lanes16I>(m, n, k, a, b, c), true;
#else
  if constexpr (std::is_same_v<T, float>) {
    if (n <= 8) return gemm_narrow_masked<Lanes8F>(m, n, k, a, b, c), true;
    return gemm_narrow_masked<Pair<Lanes8F>>(m, n, k, a, b, c), true;
  }
  if constexpr (std::is_same_v<T, int32_t>) {
    if (n <= 8) return gemm_narrow_masked<Lanes8I>(m, n, k, a, b, c), true;
    return gemm_narrow_masked<Pair<Lanes8I>>(m, n, k, a, b, c), true;
  }
#endif
  return false;
}
#else
template <class T>
bool gemm_narrow_vector(int64_t, int64_t, int64_t, const T*, const T*, T*) {
  return false;  // the baseline level: gemm_narrow's portable vectors
}
#endif

// Eigen's GEMM; leading dimensions let A, B and C be blocks of larger matrices.
template <class T>
void gemm_eigen(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb,
                T* c, int64_t ldc) {
  using Stride = Eigen::OuterStride<>;
  Eigen::Map<RowMat<T>, 0, Stride> C(c, m, n, Stride(ldc));
  Eigen::Map<const RowMat<T>, 0, Stride> A(a, ta ? k : m, ta ? m : k, Stride(lda));
  Eigen::Map<const RowMat<T>, 0, Stride> B(b, tb ? n : k, tb ? k : n, Stride(ldb));
  if (!ta && !tb)
    C.noalias() = A * B;
  else if (ta && !tb)
    C.noalias() = A.transpose() * B;
  else if (!ta && tb)
    C.noalias() = A * B.transpose();
  else
    C.noalias() = A.transpose() * B.transpose();
}

}  // namespace

// One single-threaded library GEMM on a block of the product: explicit leading dimensions
// let A, B and C be row or column blocks of larger matrices.
template <class T>
void gemm_large(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb,
                T* c, int64_t ldc) {
  static const Blas none{};
  const Blas& lib = openblas_for_large_gemms() ? blas() : none;
  const int tA = ta ? kCblasTrans : kCblasNoTrans, tB = tb ? kCblasTrans : kCblasNoTrans;
  const bool fits =
      m < (1 << 30) && n < (1 << 30) && k < (1 << 30) && lda < (1 << 30) && ldb < (1 << 30) && ldc < (1 << 30);
  if constexpr (std::is_same_v<T, float>) {
#if defined(__AVX512F__)
    // oneDNN's AVX-512 GEMM was 10-35% faster than OpenBLAS's SkylakeX kernels on the products
    // of a Transformer and a classifier head; at AVX2 the two were even (docs/perf/dispatch.md).
    if (openblas_for_large_gemms() && onednn::sgemm(ta, tb, m, n, k, a, lda, b, ldb, c, ldc)) return;
#endif
    if (lib.sgemm && fits) return lib.sgemm(kCblasRowMajor, tA, tB, m, n, k, 1.f, a, lda, b, ldb, 0.f, c, ldc);
  } else {
    if (lib.dgemm && fits) return lib.dgemm(kCblasRowMajor, tA, tB, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, ldc);
  }
  gemm_eigen(ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
}

// A large product is a fixed set of blocks of C, by rows when it is tall, else by columns, and
// threads take whole blocks. The blocks depend on the shape and the machine's CPUs alone,
// never on the configured thread count: a library GEMM computes the rows and columns past its
// last whole register tile with other micro-kernels, whose sums round differently (OpenBLAS's
// Haswell sgemm), so where a thread's share began would change an element's bits. With the
// same blocks on one thread or many (or inside an inter-op plan's step, which runs serially),
// each element goes through the same call: the product is the same bit for bit. One thread
// pays a call and a packing of the shared operand per block, a few percent (docs/perf/dispatch.md).
// Each block packs only the operand block it multiplies, so a short, wide product (a batch
// times a weight matrix) does not pack the whole weight matrix per thread.
constexpr int64_t kBlockAlign = 32;                  // block edges on whole register tiles
constexpr int64_t kMinBlockWork = int64_t{1} << 20;  // multiply-adds: a block outweighs its call
constexpr int64_t kMaxBlocks = 16;                   // the calls one thread may have to make

int64_t gemm_blocks(int64_t m, int64_t n, int64_t k) {
  static const int64_t cpus = default_intra_op_threads();  // once: blocks stay fixed in a process
  const int64_t by_work = m * n * k / kMinBlockWork, by_span = std::max(m, n) / kBlockAlign;
  return std::max<int64_t>(1, std::min({kMaxBlocks, cpus, by_work, by_span}));
}

template <class T>
void gemm_blocked(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* c) {
  const int64_t lda = ta ? m : k, ldb = tb ? k : n;
  const bool by_rows = m >= n;
  const int64_t span = by_rows ? m : n, blocks = gemm_blocks(m, n, k);
  // Block i covers [start(i), start(i + 1)): near-even shares rounded to kBlockAlign.
  const int64_t units = (span + kBlockAlign - 1) / kBlockAlign;
  auto start = [&](int64_t i) { return std::min(span, units * i / blocks * kBlockAlign); };
  parallel_for(blocks, 2, [&](int64_t first, int64_t last) {
    for (int64_t i = first; i < last; ++i) {
      const int64_t lo = start(i), hi = start(i + 1);
      if (by_rows) {
        const int64_t row_a = ta ? 1 : k;  // stride between rows of op(A) in A
        gemm_large<T>(ta, tb, hi - lo, n, k, a + lo * row_a, lda, b, ldb, c + lo * n, n);
      } else {
        const int64_t col_b = tb ? k : 1;  // stride between columns of op(B) in B
        gemm_large<T>(ta, tb, m, hi - lo, k, a, lda, b + lo * col_b, ldb, c + lo, n);
      }
    }
  });
}

template <class T>
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* c) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    std::memset(c, 0, sizeof(T) * m * n);
    return;
  }
  const int64_t work = m * n * k;
  if constexpr (std::is_same_v<T, float>) {  // no packing, C written once (kernels/gemm_short.h)
    if (short_inner_tn(ta, tb, m, n, k)) return gemm_tn_short(m, n, k, a, b, StoreRule{.out = c, .ld = n});
    if (work >= kSmallGemmWork && short_rows_nn(ta, tb, m, n, k)) return gemm_short_rows(m, n, k, a, b, c);
  }
  if constexpr (std::is_floating_point_v<T>) {
    if (work >= kSmallGemmWork) return gemm_blocked<T>(ta, tb, m, n, k, a, b, c);
  }
  // Small or integer: bring both operands to plain row-major, then the i-k-j loop.
  if (ta) {
    T* pack_a = detail::scratch<T>(detail::kGemmScratchA, static_cast<size_t>(m * k));
    transpose_into(a, k, m, pack_a);
    a = pack_a;
  }
  if (tb) {
    T* pack_b = detail::scratch<T>(detail::kGemmScratchB, static_cast<size_t>(k * n));
    transpose_into(b, n, k, pack_b);
    b = pack_b;
  }
  if (gemm_narrow_vector(m, n, k, a, b, c)) return;
  if (n <= 8) return gemm_narrow<T, 8>(m, n, k, a, b, c);
  if (n <= 16) return gemm_narrow<T, 16>(m, n, k, a, b, c);
  if constexpr (std::is_floating_point_v<T>) {
    // One thread: a few rows against a wide B (an LSTM(128) step at batch 1, a vector times
    // 128x512) is about 1 us of work, and split between two threads by column blocks it was
    // slower: on a Xeon (AVX-512, and at the AVX2 level) the batch-1 LSTM classifier took
    // 0.52-0.53 ms a call against 0.42-0.43 on two threads (0.60-0.62 against 0.60 at AVX2);
    // on a Zen 3 the model's gain was within the host's noise.
    return gemm_small_rows(m, n, k, a, b, c);
  }
  gemm_small(m, n, k, a, b, c);
}

template <class T>
void gemm_strided(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb,
                  T* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t r = 0; r < m; ++r) std::memset(c + r * ldc, 0, sizeof(T) * n);
    return;
  }
  gemm_large<T>(ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
}
template void gemm_strided<float>(bool, bool, int64_t, int64_t, int64_t, const float*, int64_t, const float*, int64_t,
                                  float*, int64_t);
template void gemm_strided<double>(bool, bool, int64_t, int64_t, int64_t, const double*, int64_t, const double*,
                                   int64_t, double*, int64_t);

template void gemm<float>(bool, bool, int64_t, int64_t, int64_t, const float*, const float*, float*);
template void gemm<double>(bool, bool, int64_t, int64_t, int64_t, const double*, const double*, double*);
template void gemm<int32_t>(bool, bool, int64_t, int64_t, int64_t, const int32_t*, const int32_t*, int32_t*);
template void gemm<int64_t>(bool, bool, int64_t, int64_t, int64_t, const int64_t*, const int64_t*, int64_t*);

void eigen_sgemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c) {
  gemm_eigen(false, false, m, n, k, a, k, b, n, c, n);
}

}  // namespace kiln::kernels::KILN_ISA_NS
