// Reductions, ArgMax, Softmax.
#include <algorithm>
#include <cmath>

#include "test_util.h"

using namespace kiln;
using namespace kiln::testing;

TEST(Reduce, TensorFlowDocExamples) {
  // tf.reduce_sum docs: x = [[1, 1, 1], [1, 1, 1]]
  Tensor x = constant<int32_t>({1, 1, 1, 1, 1, 1}, {2, 3});
  expect_tensor<int32_t>(reduce_sum(x), {6}, {});
  expect_tensor<int32_t>(reduce_sum(x, {0}), {2, 2, 2}, {3});
  expect_tensor<int32_t>(reduce_sum(x, {1}), {3, 3}, {2});
  expect_tensor<int32_t>(reduce_sum(x, {1}, true), {3, 3}, {2, 1});
  expect_tensor<int32_t>(reduce_sum(x, {0, 1}), {6}, {});
  expect_tensor<int32_t>(reduce_sum(x, std::vector<int64_t>{}), {1, 1, 1, 1, 1, 1}, {2, 3});
  // tf.reduce_mean docs: [[1., 1.], [2., 2.]]
  Tensor m = constant<float>({1, 1, 2, 2}, {2, 2});
  expect_tensor<float>(reduce_mean(m), {1.5}, {});
  expect_tensor<float>(reduce_mean(m, {0}), {1.5, 1.5}, {2});
  expect_tensor<float>(reduce_mean(m, {1}), {1, 2}, {2});
  // Integer mean truncates, as TF.
  expect_tensor<int32_t>(reduce_mean(constant<int32_t>({1, 2})), {1}, {});
}

TEST(Reduce, MaxMinProdEachDtype) {
  Tensor x = constant<double>({1, 5, -2, 4, 0, 3}, {2, 3});
  expect_tensor<double>(reduce_max(x, {1}), {5, 4}, {2});
  expect_tensor<double>(reduce_min(x, {0}), {1, 0, -2}, {3});
  expect_tensor<double>(reduce_prod(x, {1}), {-10, 0}, {2});
  expect_tensor<int64_t>(reduce_max(constant<int64_t>({3, 9, 2})), {9}, {});
  expect_tensor<float>(reduce_sum(constant<float>({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2}), {0, 2}), {14, 22}, {2});
  expect_tensor<float>(reduce_sum(constant<float>({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2}), {-1}), {3, 7, 11, 15}, {2, 2});
  expect_tensor<float>(reduce_max(zeros({0, 2}), {0}), {-INFINITY, -INFINITY}, {2});
}

TEST(Reduce, BadInputs) {
  expect_error<InvalidArgumentError>(
      [] {
        reduce_sum(zeros({2, 3}), {2});
      },
      "Invalid reduction dimension 2 for input with 2 dimensions. [Op:Sum]");
  expect_error<InvalidArgumentError>([] { reduce_sum(constant<bool>({true})); }, "Value for attr 'T' of bool");
}

TEST(ArgMax, FirstIndexAmongTies) {
  Tensor x = constant<float>({1, 9, 9, 4, 0, 5}, {2, 3});
  Tensor a = argmax(x, 1);
  EXPECT_EQ(a.dtype(), DType::Int64);
  expect_tensor<int64_t>(a, {1, 2}, {2});
  expect_tensor<int64_t>(argmax(x, 0), {1, 0, 0}, {3});
  expect_tensor<int64_t>(argmax(constant<int32_t>({3, 3, 3})), {0}, {});
  expect_error<InvalidArgumentError>([&] { argmax(x, 2); }, "[Op:ArgMax]");
  expect_error<InvalidArgumentError>([] { argmax(zeros({0})); }, "empty");
}

TEST(Softmax, ValuesAndAxes) {
  Tensor x = constant<float>({1, 2, 3, 1, 1, 1}, {2, 3});
  Tensor s = softmax(x);
  expect_near<float>(s, {0.09003057f, 0.24472848f, 0.66524094f, 1 / 3.f, 1 / 3.f, 1 / 3.f}, {2, 3});
  expect_near<float>(log_softmax(x), {-2.4076059f, -1.4076059f, -0.40760595f, -1.0986123f, -1.0986123f, -1.0986123f},
                     {2, 3});
  expect_near<float>(softmax(x, 0), {0.5f, 0.7310586f, 0.8807971f, 0.5f, 0.26894143f, 0.11920292f}, {2, 3});
  // Stable for large logits.
  expect_near<double>(softmax(constant<double>({1000, 1000})), {0.5, 0.5}, {2});
  expect_error<InvalidArgumentError>([] { softmax(constant(1.0f)); }, "logits must have >= 1 dimension");
  expect_error<InvalidArgumentError>([] { softmax(constant<int32_t>({1, 2})); }, "of int32");
}

// Float sums are pairwise (Eigen's, hence TensorFlow's, error growth): 3e7 ones sum to 3e7
// in float32, where a running sum stops at 2^24 = 16777216. Rows and columns alike.
TEST(Reduce, FloatSumsArePairwise) {
  const Tensor ones_row = ones({30'000'000});
  EXPECT_EQ(reduce_sum(ones_row).item<float>(), 3e7f);
  EXPECT_EQ(reduce_mean(ones_row).item<float>(), 1.0f);
  const Tensor ones_cols = ones({15'000'000, 2});
  EXPECT_EQ(reduce_sum(ones_cols, {0}).to_vector<float>(), (std::vector<float>{1.5e7f, 1.5e7f}));
  EXPECT_EQ(reduce_sum(ones({20'000'000, 1}), {0}).to_vector<float>(), std::vector<float>{2e7f});
  // Small sums are unchanged, and the result does not depend on eager or graph.
  const Tensor x = random_uniform({3, 1000}, -1, 1, DType::Float32, 5);
  auto f = function([](Tensor t) { return std::make_tuple(reduce_sum(t, {1}), reduce_sum(t, {0}), reduce_sum(t)); });
  const auto [a, b, c] = f(x);
  EXPECT_EQ(a.to_vector<float>(), reduce_sum(x, {1}).to_vector<float>());
  EXPECT_EQ(b.to_vector<float>(), reduce_sum(x, {0}).to_vector<float>());
  EXPECT_EQ(c.item<float>(), reduce_sum(x).item<float>());
  double exact = 0;
  for (float v : x.to_vector<float>()) exact += v;
  EXPECT_NEAR(reduce_sum(x).item<float>(), exact, 1e-4);
}

// The exact order of a row's float sum (8 lanes, each a running sum over every 8th element,
// combined ((0+1)+(2+3))+((4+5)+(6+7)), then the tail), which the kernels compute in the
// instruction-set level's vectors (kernels/lane_vectors.h): every row length from 1 to 80 and a
// long one, float32 and float64, random values with infinities and NaNs, bit for bit this
// reference (CI runs the suite at AVX2 and baseline too). Softmax's row max runs in 16 such
// lanes: a spike of +1000 at every position in turn must be found (missing it overflows exp).
template <class T>
T reference_leaf_sum(const T* p, int64_t n) {
  T lane[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) lane[k] += p[i + k];
  T tail = 0;
  for (; i < n; ++i) tail += p[i];
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7])) + tail;
}
template <class T>
void expect_lane_order(DType dtype) {
  for (int64_t n = 1; n <= 81; ++n) {
    const int64_t len = n == 81 ? 1000 : n, rows = 3;
    std::vector<double> v =
        random_uniform({rows, len}, -100, 100, DType::Float64, static_cast<int>(n)).to_vector<double>();
    if (n % 7 == 0) v[static_cast<size_t>(len + n / 2)] = INFINITY;  // row 1
    if (n % 11 == 0) v[static_cast<size_t>(2 * len + n / 3)] = NAN;  // row 2
    const Tensor x = cast(constant(v, {rows, len}), dtype);
    const std::vector<T> xs = x.to_vector<T>(), sums = reduce_sum(x, {1}).to_vector<T>();
    for (int64_t r = 0; r < rows; ++r) {
      const T want = reference_leaf_sum(xs.data() + r * len, len), got = sums[static_cast<size_t>(r)];
      ASSERT_TRUE(std::isnan(want) ? std::isnan(got) : got == want) << dtype_name(dtype) << " length " << len;
    }
    for (int64_t spike = 0; spike < len && len < 1000; ++spike) {
      std::vector<double> row =
          random_uniform({len}, -1, 1, DType::Float64, static_cast<int>(spike)).to_vector<double>();
      row[static_cast<size_t>(spike)] = 1000;
      const std::vector<T> s = softmax(cast(constant(row, {len}), dtype)).to_vector<T>();
      for (int64_t i = 0; i < len; ++i)
        ASSERT_NEAR(s[static_cast<size_t>(i)], i == spike ? 1.0 : 0.0, 1e-6)
            << dtype_name(dtype) << " length " << len << " spike " << spike << " at " << i;
    }
  }
}
TEST(Reduce, RowSumLaneOrderAndSoftmaxRowMax) {
  expect_lane_order<float>(DType::Float32);
  expect_lane_order<double>(DType::Float64);
}
