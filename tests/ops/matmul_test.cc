// MatMul and BatchMatMulV2.
#include <cmath>
#include <cstring>

#include "core/parallel.h"
#include "kernels/blas.h"
#include "kernels/gemm.h"
#include "kernels/gemm_short.h"
#include "test_util.h"

using namespace kiln;
using namespace kiln::testing;

namespace {
// Reference: C = op(A) op(B) with doubles.
template <class T>
std::vector<T> reference(const std::vector<T>& a, const std::vector<T>& b, int64_t m, int64_t n, int64_t k, bool ta,
                         bool tb) {
  std::vector<T> c(m * n, 0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p)
        s += double(ta ? a[p * m + i] : a[i * k + p]) * double(tb ? b[j * k + p] : b[p * n + j]);
      c[i * n + j] = static_cast<T>(s);
    }
  return c;
}
template <class T>
std::vector<T> seq(int64_t n, int mod = 7) {
  std::vector<T> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<T>((i * 3) % mod - 3);
  return v;
}
}  // namespace

TEST(MatMul, GuideExample) {
  expect_tensor<float>(matmul(constant<float>({1, 2}, {1, 2}), constant<float>({2, 3}, {2, 1})), {8}, {1, 1});
}

template <class T>
void check_all_layouts(int64_t m, int64_t n, int64_t k) {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      auto a = seq<T>(m * k), b = seq<T>(k * n, 5);
      Tensor A = constant<T>(a, ta ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k});
      Tensor B = constant<T>(b, tb ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n});
      Tensor C = matmul(A, B, ta, tb);
      auto want = reference(a, b, m, n, k, ta, tb);
      if constexpr (std::is_floating_point_v<T>)
        expect_near<T>(C, want, {m, n}, 1e-4);
      else
        expect_tensor<T>(C, want, {m, n});
    }
}

TEST(MatMul, EachDtypeAndTranspose) {
  check_all_layouts<float>(3, 4, 5);
  check_all_layouts<double>(2, 7, 3);
  check_all_layouts<int32_t>(10, 10, 10);
  check_all_layouts<int64_t>(4, 17, 9);
  check_all_layouts<int32_t>(1, 33, 2);
}

// The narrow kernels (one register per row of C for N <= 16; at the AVX2 level one or two,
// rows read and written whole where they fit in the matrix): every width, row counts that
// are and are not multiples of the row blocks (10, 6, 5), K of 1 and beyond the packed-path
// limit. make asan runs this at the AVX2 level (Makefile).
TEST(MatMul, NarrowProductsEveryWidth) {
  for (int64_t n = 1; n <= 17; ++n)
    for (int64_t m : {1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 13})
      for (int64_t k : {1, 6, 70}) {
        check_all_layouts<float>(m, n, k);
        check_all_layouts<int32_t>(m, n, k);
      }
}

// Integer products wrap on overflow, as TensorFlow's do.
TEST(MatMul, Int32Wraps) {
  const int32_t big = 1 << 30;
  Tensor A = constant<int32_t>({big, big, 3, 1}, {2, 2});
  Tensor B = constant<int32_t>({4, 1, 1, 2}, {2, 2});
  // Row 0: 2^30*4 + 2^30*1 = 5*2^30 wraps to 2^30; 2^30*1 + 2^30*2 = 3*2^30 wraps to -2^30.
  expect_tensor<int32_t>(matmul(A, B), {big, -big, 13, 5}, {2, 2});
}

TEST(MatMul, LargeUsesTheBlasPathAndAgrees) {
  check_all_layouts<float>(64, 80, 72);
  check_all_layouts<double>(65, 66, 67);
}

// Products large enough to split over threads: tall ones by row blocks, short wide ones by
// column blocks (every layout, so each operand's block strides are exercised). The sizes put
// the split points off the test data's periods (5 and 7), so a wrong block offset shows.
TEST(MatMul, SplitAcrossThreadsAgrees) {
  const int before = configured_threads();
  set_intra_op_threads(2);
  check_all_layouts<float>(203, 70, 151);  // tall: row blocks
  check_all_layouts<float>(41, 298, 183);  // wide: column blocks
  check_all_layouts<double>(31, 262, 271);
  // few rows against a wide matrix (the small path, on one thread): an LSTM step at batch 1,
  // and widths that leave a register block short
  check_all_layouts<float>(1, 512, 128);
  check_all_layouts<float>(3, 200, 100);
  check_all_layouts<double>(2, 130, 129);
  set_intra_op_threads(before);
}

// One thread or two: the same bits. A library GEMM computes the edges past its last whole
// register tile with other micro-kernels, so blocks that began where a thread's share did
// would change the edges' sums (OpenBLAS's Haswell sgemm did, at the AVX2 level: ctest runs
// this at every level). Random operands, so any change of rounding shows.
TEST(MatMul, SameBitsOnAnyThreadCount) {
  const int before = configured_threads();
  struct Shape {
    int64_t m, k, n;
  };
  for (const Shape s :
       {Shape{200, 64, 700}, Shape{97, 300, 1500}, Shape{64, 64, 4096}, Shape{517, 129, 211}, Shape{300, 300, 300},
        Shape{1000, 96, 256}, Shape{1, 128, 512}, Shape{3, 100, 200}, Shape{2, 129, 130}, Shape{1, 64, 600}})
    for (const DType dt : {DType::Float32, DType::Float64}) {
      const Tensor a = random_uniform({s.m, s.k}, -1, 1, dt, 71);
      const Tensor b = random_uniform({s.k, s.n}, -1, 1, dt, 72);
      set_intra_op_threads(1);
      const Tensor one = matmul(a, b);
      set_intra_op_threads(2);
      const Tensor two = matmul(a, b);
      EXPECT_EQ(std::memcmp(one.data(), two.data(), s.m * s.n * dtype_size(dt)), 0)
          << s.m << "x" << s.k << "x" << s.n << " " << dtype_name(dt);
    }
  set_intra_op_threads(before);
}

// The Eigen path, which a machine without OpenBLAS takes, whole and split over threads.
TEST(MatMul, EigenPathAgrees) {
  kernels::use_openblas_for_large_gemms(false);
  const int before = configured_threads();
  set_intra_op_threads(1);
  check_all_layouts<float>(64, 80, 72);
  check_all_layouts<double>(65, 66, 67);
  set_intra_op_threads(2);
  check_all_layouts<float>(203, 70, 151);
  check_all_layouts<float>(41, 298, 183);
  set_intra_op_threads(before);
  kernels::use_openblas_for_large_gemms(true);
}

// OpenBLAS runs the core this CPU should use, whatever OPENBLAS_CORETYPE says and whatever
// the library's own detection would pick (Debian 12's takes some current Xeons for a Prescott).
TEST(MatMul, OpenBlasRunsTheCoreThisCpuShouldUse) {
  const kernels::Blas& b = kernels::blas();
  if (!b.sgemm) GTEST_SKIP() << "OpenBLAS is not installed (large GEMMs use Eigen)";
  const char* wanted = kernels::Blas::core_for_this_cpu();
  if (!wanted) GTEST_SKIP() << "a CPU without AVX2: OpenBLAS chooses its core";
  ASSERT_NE(b.core, nullptr);
  EXPECT_STRCASEEQ(b.core, wanted);
  EXPECT_NE(std::string(kernels::large_gemm_backend()).find(wanted), std::string::npos);
}

TEST(MatMul, EmptyAndZeroK) {
  expect_tensor<float>(matmul(zeros({2, 0}), zeros({0, 3})), {0, 0, 0, 0, 0, 0}, {2, 3});
  expect_tensor<float>(matmul(zeros({0, 4}), zeros({4, 3})), {}, {0, 3});
}

TEST(MatMul, BadInputs) {
  expect_error<InvalidArgumentError>(
      [] {
        matmul(zeros({2, 3}), zeros({2, 3}));
      },
      "Matrix size-incompatible: In[0]: [2,3], In[1]: [2,3] [Op:MatMul]");
  expect_error<InvalidArgumentError>([] { matmul(zeros({3}), zeros({3, 1})); }, "is not a matrix");
  expect_error<InvalidArgumentError>(
      [] {
        matmul(zeros({2, 2}), zeros({2, 2}, DType::Float64));
      },
      "cannot compute MatMul");
  expect_error<InvalidArgumentError>([] { matmul(zeros({2, 2}, DType::Bool), zeros({2, 2}, DType::Bool)); }, "bool");
}

TEST(BatchMatMul, BroadcastsBatchDims) {
  auto a = seq<float>(2 * 2 * 3);
  auto b = seq<float>(3 * 2, 5);
  Tensor A = constant<float>(a, {2, 2, 3});
  Tensor B = constant<float>(b, {3, 2});
  Tensor B3 = constant<float>(b, {1, 3, 2});
  Tensor C = matmul(A, B3);
  EXPECT_EQ(C.shape(), TensorShape({2, 2, 2}));
  for (int i = 0; i < 2; ++i) {
    std::vector<float> ai(a.begin() + i * 6, a.begin() + (i + 1) * 6);
    auto want = reference(ai, b, 2, 2, 3, false, false);
    auto got = C.to_vector<float>();
    for (int j = 0; j < 4; ++j) EXPECT_FLOAT_EQ(got[i * 4 + j], want[j]);
  }
  Tensor Ct = matmul(A, constant<float>(b, {1, 2, 3}), false, true);  // adj_y with [1,2,3]^T = [3,2]
  EXPECT_EQ(Ct.shape(), TensorShape({2, 2, 2}));
  expect_error<InvalidArgumentError>(
      [&] {
        matmul(A, constant<float>(seq<float>(8), {2, 2, 2}));
      },
      "Matrix size-incompatible");
  (void)B;
}

// kiln's short kernels (kernels/gemm_short.h): each element of op(A) B is one multiply-add
// chain over k from zero, whatever the tiles, remainders and panels.
static int fma_chain_mismatches(bool transpose_a, int64_t m, int64_t n, int64_t k) {
  const auto a =
      random_uniform({transpose_a ? k : m, transpose_a ? m : k}, -2, 2, DType::Float32, 3).to_vector<float>();
  const auto b = random_uniform({k, n}, -2, 2, DType::Float32, 4).to_vector<float>();
  std::vector<float> c(static_cast<size_t>(m * n), NAN);
  kernels::gemm<float>(transpose_a, false, m, n, k, a.data(), b.data(), c.data());
  int wrong = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float want = 0;
      for (int64_t p = 0; p < k; ++p) want = std::fma(transpose_a ? a[p * m + i] : a[i * k + p], b[p * n + j], want);
      wrong += std::memcmp(&want, &c[i * n + j], sizeof want) != 0;
    }
  return wrong;
}

TEST(MatMul, ShortInnerProductIsOneMultiplyAddChainPerElement) {
  if (!kernels::short_inner_tn(true, false, 784, 256, 64)) GTEST_SKIP() << "no AVX-512 in this build";
  struct Shape {
    int64_t m, n, k;
  };
  // Whole tiles, row and column remainders, the narrow (n <= 16) panels, k = 1 and k = 128.
  for (const Shape s : {Shape{784, 256, 64}, Shape{100, 70, 1}, Shape{29, 333, 128}, Shape{300, 16, 7},
                        Shape{64, 64, 5}, Shape{250, 17, 33}, Shape{300, 14, 64}}) {
    ASSERT_TRUE(kernels::short_inner_tn(true, false, s.m, s.n, s.k));
    EXPECT_EQ(fma_chain_mismatches(true, s.m, s.n, s.k), 0) << s.m << "x" << s.n << "x" << s.k;
  }
}

TEST(MatMul, ShortRowsProductIsOneMultiplyAddChainPerElement) {
  if (!kernels::short_rows_nn(false, false, 8, 256, 96)) GTEST_SKIP() << "no AVX2 or AVX-512 at this level";
  struct Shape {
    int64_t m, n, k;
  };
  // One row too: a served model's batch-1 dense layer (a classifier's 1x1280 x 1280x1000). Products
  // of at most 4 rows take 64-column panels at AVX-512: whole, and with a masked last one. At AVX2
  // (up to 8 rows, 16 for a B of 256 KB): 32-column panels for one or two rows, 16- and 8-column
  // panels, blocks of up to 6 rows shared evenly, and the last n % 8 columns one by one. A shape a
  // level does not send here is skipped. The shapes of more than one row have at least 48^3
  // multiply-adds: below that the small kernels take a product, and their sums are not this kernel's
  // chain in every build (13x100x64's were not under Clang). On two threads, products with a B of 1
  // MB or more (the classifier's) split their columns.
  const int before = configured_threads();
  int checked = 0;
  for (const int threads : {1, 2}) {
    set_intra_op_threads(threads);
    for (const Shape s :
         {Shape{8, 256, 96}, Shape{2, 1000, 64}, Shape{14, 33, 300}, Shape{5, 17, 2000}, Shape{1, 1000, 1280},
          Shape{1, 17, 3}, Shape{4, 512, 128}, Shape{3, 100, 400}, Shape{4, 65, 500}, Shape{8, 256, 64},
          Shape{7, 43, 400}, Shape{6, 24, 800}, Shape{8, 31, 500}, Shape{1, 57, 2000}, Shape{1, 1003, 700},
          Shape{16, 512, 128}, Shape{11, 40, 300}, Shape{13, 100, 96}}) {
      if (!kernels::short_rows_nn(false, false, s.m, s.n, s.k)) continue;
      EXPECT_EQ(fma_chain_mismatches(false, s.m, s.n, s.k), 0)
          << s.m << "x" << s.n << "x" << s.k << " on " << threads << " threads";
      ++checked;
    }
  }
  set_intra_op_threads(before);
  EXPECT_GE(checked, 20);
}

// Small floating-point products (below the library's size, wider than the narrow kernels)
// keep each row of C in registers over k (gemm_small_rows): whole blocks, one-vector blocks
// and scalar tails, against a double-precision sum, at every instruction-set level the
// kernel tests run under (a block is 256 floats at AVX-512, 64 at AVX2, 32 at the baseline
// level: 2x301 has whole blocks, single vectors and a tail at each).
TEST(MatMul, SmallProductsKeepRowsInRegistersAndAgree) {
  struct Shape {
    int64_t m, n, k;
  };
  for (const Shape s : {Shape{1, 512, 128}, Shape{1, 17, 5}, Shape{2, 100, 3}, Shape{3, 65, 40}, Shape{1, 31, 1},
                        Shape{5, 64, 64}, Shape{1, 200, 300}, Shape{2, 301, 7}}) {
    for (const DType dt : {DType::Float32, DType::Float64}) {
      const Tensor a = random_uniform({s.m, s.k}, -1, 1, dt, 5), b = random_uniform({s.k, s.n}, -1, 1, dt, 6);
      const auto got = cast(matmul(a, b), DType::Float64).to_vector<double>();
      const auto av = cast(a, DType::Float64).to_vector<double>(), bv = cast(b, DType::Float64).to_vector<double>();
      for (int64_t i = 0; i < s.m; ++i)
        for (int64_t j = 0; j < s.n; ++j) {
          double want = 0;
          for (int64_t p = 0; p < s.k; ++p) want += av[i * s.k + p] * bv[p * s.n + j];
          ASSERT_NEAR(got[i * s.n + j], want, 1e-5 * (1 + std::sqrt(static_cast<double>(s.k))))
              << s.m << "x" << s.n << "x" << s.k << " " << dtype_name(dt) << " at " << i << "," << j;
        }
    }
  }
}
