// Binary elementwise ops: values, each dtype, broadcasting, bad inputs.
#include <cmath>

#include "test_util.h"

using namespace kiln;
using namespace kiln::testing;

TEST(Binary, ArithmeticEachDtype) {
  expect_tensor<float>(constant<float>({1, 2}) + constant<float>({3, 4}), {4, 6}, {2});
  expect_tensor<double>(constant<double>({1, 2}) - constant<double>({3, 5}), {-2, -3}, {2});
  expect_tensor<int32_t>(constant<int32_t>({2, 3}) * constant<int32_t>({4, -5}), {8, -15}, {2});
  expect_tensor<int64_t>(add(constant<int64_t>({1}), constant<int64_t>({2})), {3}, {1});
  expect_tensor<float>(maximum(constant<float>({1, 5}), constant<float>({3, 2})), {3, 5}, {2});
  expect_tensor<int32_t>(minimum(constant<int32_t>({1, 5}), constant<int32_t>({3, 2})), {1, 2}, {2});
  expect_tensor<float>(squared_difference(constant<float>({1, 5}), constant<float>({3, 2})), {4, 9}, {2});
  expect_tensor<int64_t>(squared_difference(constant<int64_t>({1}), constant<int64_t>({4})), {9}, {1});
}

TEST(Binary, IntegerArithmeticWraps) {
  expect_tensor<int32_t>(constant<int32_t>({2147483647}) + 1, {-2147483647 - 1}, {1});
}

TEST(Binary, TrueDivision) {
  expect_tensor<float>(constant<float>({1, 3}) / constant<float>({2, 4}), {0.5f, 0.75f}, {2});
  // Integer operands give float64, as TensorFlow's truediv.
  Tensor q = constant<int32_t>({7, -7}) / 2;
  EXPECT_EQ(q.dtype(), DType::Float64);
  expect_tensor<double>(q, {3.5, -3.5}, {2});
  EXPECT_EQ((constant<int64_t>({1}) / constant<int64_t>({4})).to_vector<double>(), std::vector<double>{0.25});
  // Float division by zero is inf, as IEEE.
  EXPECT_TRUE(std::isinf((constant(1.0f) / 0.0f).item<float>()));
}

TEST(Binary, FloorDivisionAndModFollowPython) {
  expect_tensor<int32_t>(floordiv(constant<int32_t>({7, -7, 7, -7}), constant<int32_t>({2, 2, -2, -2})), {3, -4, -4, 3},
                         {4});
  expect_tensor<int32_t>(constant<int32_t>({7, -7, 7, -7}) % constant<int32_t>({2, 2, -2, -2}), {1, 1, -1, -1}, {4});
  expect_tensor<float>(floordiv(constant<float>({7.5, -7.5}), 2.0f), {3, -4}, {2});
  expect_tensor<double>(floormod(constant<double>({7.5, -7.5}), 2.0), {1.5, 0.5}, {2});
  expect_tensor<int64_t>(floordiv(constant<int64_t>({-9}), int64_t{4}), {-3}, {1});
  expect_tensor<int32_t>(floordiv(constant<int32_t>({-2147483647 - 1}), -1), {-2147483647 - 1}, {1});
}

TEST(Binary, IntegerDivisionByZeroRaises) {
  expect_error<InvalidArgumentError>(
      [] {
        floordiv(constant<int32_t>({1, 2}), constant<int32_t>({1, 0}));
      },
      "Integer division by zero [Op:FloorDiv]");
  expect_error<InvalidArgumentError>([] { floormod(constant<int64_t>({1}), int64_t{0}); }, "Integer division by zero");
}

TEST(Binary, Pow) {
  expect_tensor<int32_t>(pow(constant<int32_t>({2, 3, -2}), constant<int32_t>({10, 0, 3})), {1024, 1, -8}, {3});
  expect_near<float>(pow(constant<float>({4, 2}), constant<float>({0.5, -1})), {2, 0.5}, {2});
  expect_error<InvalidArgumentError>([] { pow(constant<int32_t>({2}), constant<int32_t>({-1})); },
                                     "Integers to negative integer powers are not allowed");
}

TEST(Binary, Comparisons) {
  Tensor a = constant<float>({1, 2, 3}), b = constant<float>({2, 2, 2});
  expect_tensor<bool>(a > b, {false, false, true}, {3});
  expect_tensor<bool>(a >= b, {false, true, true}, {3});
  expect_tensor<bool>(a < b, {true, false, false}, {3});
  expect_tensor<bool>(a <= b, {true, true, false}, {3});
  expect_tensor<bool>(a == b, {false, true, false}, {3});
  expect_tensor<bool>(a != b, {true, false, true}, {3});
  expect_tensor<bool>(equal(constant<bool>({true, false}), constant<bool>({true, true})), {true, false}, {2});
  expect_tensor<bool>(greater(constant<int64_t>({5}), int64_t{4}), {true}, {1});
  expect_tensor<bool>(constant<int32_t>({1, 5}) > 2, {false, true}, {2});
  expect_tensor<bool>(2 < constant<int32_t>({1, 5}), {false, true}, {2});
}

TEST(Binary, Logical) {
  Tensor t = constant<bool>({true, true, false, false}), u = constant<bool>({true, false, true, false});
  expect_tensor<bool>(logical_and(t, u), {true, false, false, false}, {4});
  expect_tensor<bool>(logical_or(t, u), {true, true, true, false}, {4});
  expect_tensor<bool>(logical_not(t), {false, false, true, true}, {4});
  expect_error<InvalidArgumentError>([] { logical_and(constant<int32_t>({1}), constant<int32_t>({1})); },
                                     "Value for attr 'T' of int32 is not in the list of allowed values: bool");
}

TEST(Binary, Broadcasting) {
  Tensor m = constant<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  expect_tensor<int32_t>(m + constant<int32_t>({10, 20, 30}), {11, 22, 33, 14, 25, 36}, {2, 3});
  expect_tensor<int32_t>(m + constant<int32_t>({10, 20}, {2, 1}), {11, 12, 13, 24, 25, 26}, {2, 3});
  expect_tensor<int32_t>(constant<int32_t>({1, 2}, {2, 1}) * constant<int32_t>({1, 2, 3}, {1, 3}), {1, 2, 3, 2, 4, 6},
                         {2, 3});
  expect_tensor<int32_t>(m - 1, {0, 1, 2, 3, 4, 5}, {2, 3});
  expect_tensor<int32_t>(10 - m, {9, 8, 7, 6, 5, 4}, {2, 3});
  // Rank-3 against rank-1 and a size-1 middle dim.
  Tensor a = constant<float>({1, 2, 3, 4}, {2, 1, 2});
  Tensor b = constant<float>({10, 20, 30}, {3, 1});
  expect_tensor<float>(a + b, {11, 12, 21, 22, 31, 32, 13, 14, 23, 24, 33, 34}, {2, 3, 2});
  // Zero-size broadcast.
  expect_tensor<float>(zeros({0, 3}) + constant<float>({1, 2, 3}), {}, {0, 3});
}

// A row repeated over the middle dimensions of a full operand (squeeze-and-excitation's
// [N,H,W,C] * [N,1,1,C], a bias [C]) runs as long spans over a repeated copy: the same
// values as the ops over the explicitly broadcast operand, either operand order, rows that do
// and do not divide the span, work split over threads or not.
TEST(Binary, RepeatedRowsMatchTheExplicitBroadcast) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
      {{2, 5, 7, 16}, {2, 1, 1, 16}},
      {{3, 4, 20}, {20}},
      {{6, 3}, {3}},
      {{1, 112, 112, 24}, {1, 1, 1, 24}},
      {{4, 9, 33, 100}, {4, 1, 1, 100}},
      {{2, 64, 2048}, {2, 1, 2048}},
      {{0, 5, 7, 16}, {0, 1, 1, 16}},  // zero-sized
      {{2, 0, 3, 8}, {2, 1, 1, 8}}};
  int seed = 30;
  for (const auto& [full_shape, row_shape] : shapes) {
    const Tensor full = random_uniform(full_shape, 0.5, 2, DType::Float32, seed++);
    const Tensor row = random_uniform(row_shape, 0.5, 2, DType::Float32, seed++);
    const Tensor wide = broadcast_to(row, full_shape);
    EXPECT_EQ((full * row).to_vector<float>(), (full * wide).to_vector<float>());
    EXPECT_EQ((full - row).to_vector<float>(), (full - wide).to_vector<float>());
    EXPECT_EQ((row / full).to_vector<float>(), (wide / full).to_vector<float>());
    EXPECT_EQ(less(row, full).to_vector<bool>(), less(wide, full).to_vector<bool>());
    const Tensor ints = cast(full * 10, DType::Int64), int_row = cast(row * 10, DType::Int64);
    EXPECT_EQ((int_row - ints).to_vector<int64_t>(), (cast(wide * 10, DType::Int64) - ints).to_vector<int64_t>());
  }
}

TEST(Binary, BadInputs) {
  expect_error<InvalidArgumentError>(
      [] {
        constant<float>({1, 2, 3, 4, 5, 6}, {2, 3}) + constant<float>({1, 2, 3, 4});
      },
      "Incompatible shapes: [2,3] vs. [4] [Op:AddV2]");
  expect_error<InvalidArgumentError>([] { constant<float>({1}) + constant<int32_t>({1}); },
                                     "cannot compute AddV2 as input #1(zero-based) was expected to be a float tensor "
                                     "but is a int32 tensor [Op:AddV2]");
  expect_error<InvalidArgumentError>([] { constant<bool>({true}) + constant<bool>({true}); },
                                     "Value for attr 'T' of bool");
  expect_error<InvalidArgumentError>([] { constant<int32_t>({1}) + 2.5; },
                                     "Cannot convert 2.500000 to EagerTensor of dtype int32");
  expect_error<InvalidArgumentError>([] { constant<int32_t>({1}) + (int64_t{1} << 40); }, "out of range");
  expect_error<InvalidArgumentError>([] { constant<float>({1}) + true; }, "bool");
  expect_error<InvalidArgumentError>([] { Tensor() + constant(1.0f); }, "empty");
  expect_error<InvalidArgumentError>([] { where(constant<int32_t>({1}), constant(1.0f), constant(2.0f)); },
                                     "condition must be a bool tensor");
}

TEST(Binary, NumbersTakeTheTensorDtype) {
  EXPECT_EQ((constant<float>({1}) + 1).dtype(), DType::Float32);
  EXPECT_EQ((constant<int64_t>({1}) * 2).dtype(), DType::Int64);
  EXPECT_EQ((2.0 * constant<double>({1})).dtype(), DType::Float64);
  expect_tensor<float>(constant<float>({1}) + 0.5, {1.5f}, {1});
}

TEST(Binary, NanPropagatesThroughMaxMin) {
  Tensor n = constant<float>({NAN, 1});
  auto v = maximum(n, constant<float>({0, 2})).to_vector<float>();
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_EQ(v[1], 2);
}

TEST(Select, WhereBroadcasts) {
  Tensor c = constant<bool>({true, false, true});
  expect_tensor<int32_t>(where(c, constant<int32_t>({1, 2, 3}), constant<int32_t>({-1, -2, -3})), {1, -2, 3}, {3});
  expect_tensor<float>(where(constant<bool>({true, false}, {2, 1}), constant<float>({1, 2}), constant(0.0f)),
                       {1, 2, 0, 0}, {2, 2});
  expect_tensor<bool>(where(c, constant<bool>({false, false, false}), constant(true)), {false, true, false}, {3});
  expect_error<InvalidArgumentError>(
      [&] {
        where(c, constant<int32_t>({1, 2}), constant<int32_t>({1, 2}));
      },
      "Incompatible shapes");
}

// Atan2(y, x): quadrants, signed zeros and infinities as C's atan2 (TensorFlow's kernel),
// float and double, broadcasting; integer inputs and mixed dtypes are refused.
TEST(Binary, Atan2) {
  const std::vector<float> y{1, 1, -1, -1, 0.0f, -0.0f, 0.0f, -0.0f, INFINITY, 1, NAN};
  const std::vector<float> x{1, -1, 1, -1, 1, 1, -1, -1, INFINITY, 0, 1};
  const auto got = atan2(constant<float>(y), constant<float>(x)).to_vector<float>();
  for (size_t i = 0; i < y.size(); ++i) {
    const float want = std::atan2(y[i], x[i]);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got[i]));
    } else {
      EXPECT_EQ(got[i], want) << i;
      EXPECT_EQ(std::signbit(got[i]), std::signbit(want)) << i;
    }
  }
  expect_tensor<double>(atan2(constant<double>({1, -1}), 0.0), {M_PI / 2, -M_PI / 2}, {2});
  expect_near<float>(atan2(constant<float>({1, 2}, {2, 1}), constant<float>({1, -1})),
                     {std::atan2(1.0f, 1.0f), std::atan2(1.0f, -1.0f), std::atan2(2.0f, 1.0f), std::atan2(2.0f, -1.0f)},
                     {2, 2});
  expect_error<InvalidArgumentError>([] { atan2(constant<int32_t>({1}), constant<int32_t>({1})); }, "Atan2");
  expect_error<InvalidArgumentError>([] { atan2(constant<float>({1}), constant<double>({1})); }, "Atan2");
  expect_error<InvalidArgumentError>(
      [] {
        atan2(constant<float>({1, 2}), constant<float>({1, 2, 3}));
      },
      "Incompatible shapes");
  auto f = function([](Tensor a, Tensor b) { return atan2(a, b); });
  const Tensor a = constant<float>({0.5f, -3, 0}), b = constant<float>({-2, 0.25f, -0.0f});
  EXPECT_EQ(f(a, b).to_vector<float>(), atan2(a, b).to_vector<float>());  // the same kernel, bit for bit
}

// An empty operand broadcast against a full one gives an empty result and writes nothing
// (the broadcasting walk once ran one row into a zero-sized output: heap corruption).
TEST(Binary, EmptyTensorsBroadcastToEmptyResults) {
  const Tensor row = constant<float>(std::vector<float>(32, 1.0f), {32});
  for (int repeat = 0; repeat < 100; ++repeat) {
    EXPECT_EQ((zeros({0, 32}) + row).shape(), TensorShape({0, 32}));
    EXPECT_EQ((row - zeros({0, 32})).shape(), TensorShape({0, 32}));
    EXPECT_EQ((zeros({0, 4, 4, 32}) * row).shape(), TensorShape({0, 4, 4, 32}));
    EXPECT_EQ(maximum(zeros({4, 0, 32}), row).shape(), TensorShape({4, 0, 32}));
    EXPECT_EQ(where(zeros({0, 1}, DType::Bool), zeros({0, 32}), row).shape(), TensorShape({0, 32}));
  }
  auto f = function([&](Tensor x) { return x * row + 1.0f; });
  EXPECT_EQ(f(zeros({0, 32})).shape(), TensorShape({0, 32}));
}
