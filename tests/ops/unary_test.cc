// Unary elementwise ops and Cast.
#include <cmath>

#include "test_util.h"

using namespace kiln;
using namespace kiln::testing;

TEST(Unary, Numeric) {
  expect_tensor<int32_t>(-constant<int32_t>({1, -2}), {-1, 2}, {2});
  expect_tensor<int64_t>(abs(constant<int64_t>({-3, 4})), {3, 4}, {2});
  expect_tensor<float>(abs(constant<float>({-3.5, 4})), {3.5, 4}, {2});
  expect_tensor<double>(sign(constant<double>({-3, 0, 2})), {-1, 0, 1}, {3});
  expect_tensor<int32_t>(sign(constant<int32_t>({-3, 0, 2})), {-1, 0, 1}, {3});
  expect_tensor<int32_t>(square(constant<int32_t>({-3, 4})), {9, 16}, {2});
  expect_tensor<float>(relu(constant<float>({-1, 0, 2})), {0, 0, 2}, {3});
  expect_tensor<int64_t>(relu(constant<int64_t>({-1, 2})), {0, 2}, {2});
}

TEST(Unary, Rounding) {
  expect_tensor<float>(floor(constant<float>({-1.5, 1.5})), {-2, 1}, {2});
  expect_tensor<double>(ceil(constant<double>({-1.5, 1.5})), {-1, 2}, {2});
  // Banker's rounding, as tf.round.
  expect_tensor<float>(round(constant<float>({0.5, 1.5, 2.5, -0.5, -1.7})), {0, 2, 2, -0, -2}, {5});
}

TEST(Unary, Transcendental) {
  expect_near<float>(exp(constant<float>({0, 1, -1})), {1, 2.7182817f, 0.36787945f}, {3});
  expect_near<double>(log(constant<double>({1, M_E})), {0, 1}, {2}, 1e-12);
  expect_near<float>(sqrt(constant<float>({4, 9})), {2, 3}, {2});
  expect_near<double>(rsqrt(constant<double>({4, 16})), {0.5, 0.25}, {2}, 1e-12);
  expect_near<float>(tanh(constant<float>({0, 1, -20})), {0, 0.7615942f, -1}, {3});
  expect_near<double>(sigmoid(constant<double>({0, 2})), {0.5, 0.8807970779778823}, {2}, 1e-12);
  // Large inputs run the vectorized path; compare with std.
  std::vector<float> xs(1000);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = -5.0f + 0.01f * static_cast<float>(i);
  auto t = tanh(constant<float>(xs)).to_vector<float>();
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_NEAR(t[i], std::tanh(xs[i]), 2e-6);
  EXPECT_TRUE(std::isnan(log(constant(-1.0)).item<double>()));
}

// IEEE edges, as TensorFlow gives them (the Python oracle tests compare with TF itself).
TEST(Unary, EdgesAndAccuracy) {
  const float inf = INFINITY;
  std::vector<float> edges(64, -inf);  // 64 elements: the vectorized path
  edges[1] = inf;
  edges[2] = -0.0f;
  const auto e = exp(constant<float>(edges)).to_vector<float>();
  EXPECT_EQ(e[0], 0.0f);  // Eigen's clamp gave a denormal
  EXPECT_EQ(e[1], inf);
  EXPECT_EQ(e[2], 1.0f);
  const auto s = sqrt(constant<float>(edges)).to_vector<float>();
  EXPECT_EQ(s[1], inf);  // Eigen's fast sqrt gave NaN
  EXPECT_TRUE(std::signbit(s[2]));
  const auto r = relu(constant<float>({NAN, -0.0f, -1.0f})).to_vector<float>();
  EXPECT_TRUE(std::isnan(r[0]));
  EXPECT_TRUE(std::signbit(r[1]));
  // sigmoid within 4 ulps of the float64 value over [-30, 30] (Eigen's logistic() was
  // thousands of ulps off below -9).
  std::vector<float> xs(601);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = -30.0f + 0.1f * static_cast<float>(i);
  const auto y = sigmoid(constant<float>(xs)).to_vector<float>();
  for (size_t i = 0; i < xs.size(); ++i) {
    const float want = static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(xs[i]))));
    EXPECT_LE(std::fabs(y[i] - want), 4 * (std::nextafter(want, inf) - want)) << "sigmoid(" << xs[i] << ")";
  }
  const auto y_edges = sigmoid(constant<float>(edges)).to_vector<float>();
  EXPECT_EQ(y_edges[0], 0.0f);
  EXPECT_EQ(y_edges[1], 1.0f);
}

// An element's sigmoid depends on its value only, not on where it sits in the array: the
// vector body, the tail and a one-element array give the same bits (a convolution's swish
// epilogue takes the sigmoid a row at a time and must match the op over the whole tensor).
template <class T>
void expect_sigmoid_independent_of_position(DType dtype) {
  std::vector<double> v = random_uniform({1000}, -100, 100, DType::Float64, 31).to_vector<double>();
  const double special[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1e-310, -88.5, -103.0, 88.7, 89.0, 710.0, -745.0};
  for (size_t i = 0; i < std::size(special); ++i) v[i * 37] = special[i];
  for (size_t i = 500; i < 600; ++i) v[i] *= 0.05;  // the sigmoid's curve, not its tails
  const Tensor x = cast(constant(v, {1000}), dtype);
  const std::vector<T> whole = sigmoid(x).template to_vector<T>();
  auto same = [](T a, T b) { return std::isnan(a) ? std::isnan(b) : a == b; };
  for (int64_t i = 0; i < 1000; ++i)
    ASSERT_TRUE(same(whole[i], sigmoid(slice(x, {i}, {1})).template to_vector<T>()[0]))
        << dtype_name(dtype) << " alone at " << i << ": " << v[i];
  for (int64_t start : {1, 3, 7, 13}) {
    const int64_t len = 1000 - 2 * start;
    const std::vector<T> part = sigmoid(slice(x, {start}, {len})).template to_vector<T>();
    for (int64_t i = 0; i < len; ++i)
      ASSERT_TRUE(same(whole[start + i], part[i])) << dtype_name(dtype) << " from " << start << " at " << i;
  }
}
TEST(Unary, SigmoidIndependentOfPosition) {
  expect_sigmoid_independent_of_position<float>(DType::Float32);
  expect_sigmoid_independent_of_position<double>(DType::Float64);
}

TEST(Unary, FloatOnlyOpsRejectIntegers) {
  expect_error<InvalidArgumentError>(
      [] { sqrt(constant<int32_t>({4})); },
      "Value for attr 'T' of int32 is not in the list of allowed values: float, double, half, bfloat16 [Op:Sqrt]");
  expect_error<InvalidArgumentError>([] { exp(constant<int64_t>({4})); }, "[Op:Exp]");
  expect_error<InvalidArgumentError>([] { tanh(constant<bool>({true})); }, "of bool");
  expect_error<InvalidArgumentError>([] { neg(constant<bool>({true})); }, "of bool");
  expect_error<InvalidArgumentError>([] { logical_not(constant<float>({1})); }, "allowed values: bool");
}

TEST(Unary, Cast) {
  expect_tensor<int32_t>(cast(constant<float>({1.7f, -1.7f}), DType::Int32), {1, -1}, {2});
  expect_tensor<double>(cast(constant<int32_t>({3}), DType::Float64), {3.0}, {1});
  expect_tensor<bool>(cast(constant<float>({0, 2}), DType::Bool), {false, true}, {2});
  expect_tensor<int64_t>(cast(constant<bool>({true, false}), DType::Int64), {1, 0}, {2});
  expect_tensor<int32_t>(cast(constant<float>({NAN, 1e20f, -1e20f}), DType::Int32), {0, 2147483647, -2147483647 - 1},
                         {3});
  EXPECT_EQ(cast(constant(1.5f), DType::Float32).item<float>(), 1.5f);
}

TEST(Unary, IdentityAndLikes) {
  expect_tensor<int32_t>(identity(constant<int32_t>({1, 2})), {1, 2}, {2});
  expect_tensor<float>(zeros_like(constant<float>({1, 2})), {0, 0}, {2});
  expect_tensor<bool>(ones_like(constant<bool>({false})), {true}, {1});
  expect_tensor<int64_t>(ones_like(constant<int64_t>({5, 6}, {1, 2})), {1, 1}, {1, 2});
}
