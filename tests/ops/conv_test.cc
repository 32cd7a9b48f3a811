// Conv2D, MaxPool, AvgPool: small cases computed by hand, and bad inputs. (Every shape,
// stride, padding and dilation against TensorFlow: python/tests/test_ops_oracle.py.)
#include "test_util.h"

using namespace kiln;
using namespace kiln::testing;

TEST(Conv2D, ByHand) {
  // One 3x3 image, one 2x2 filter of ones: each output is the sum of a 2x2 window.
  const Tensor x = constant<float>({1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 3, 3, 1});
  const Tensor k = constant<float>({1, 1, 1, 1}, {2, 2, 1, 1});
  expect_tensor<float>(conv2d(x, k, {1, 1, 1, 1}, "VALID"), {12, 16, 24, 28}, {1, 2, 2, 1});
  // SAME pads after (the odd pixel goes at the end), as TensorFlow.
  expect_tensor<float>(conv2d(x, k, {1, 1, 1, 1}, "SAME"), {12, 16, 9, 24, 28, 15, 15, 17, 9}, {1, 3, 3, 1});
  expect_tensor<float>(conv2d(x, k, {1, 2, 2, 1}, "SAME"), {12, 9, 15, 9}, {1, 2, 2, 1});
  // Dilation 2 with a 2x2 filter reads the corners.
  expect_tensor<float>(conv2d(x, k, {1, 1, 1, 1}, "VALID", {1, 2, 2, 1}), {20}, {1, 1, 1, 1});
}

TEST(Conv2D, EagerAndTracedAgree) {
  const Tensor x = random_uniform({2, 7, 6, 3}, -1, 1, DType::Float32, 1);
  const Tensor k = random_uniform({3, 2, 3, 4}, -1, 1, DType::Float32, 2);
  auto f = function([](Tensor a, Tensor b) { return conv2d(a, b, {1, 2, 1, 1}, "SAME"); });
  const auto eager = conv2d(x, k, {1, 2, 1, 1}, "SAME").to_vector<float>();
  EXPECT_EQ(f(x, k).to_vector<float>(), eager);
}

TEST(Conv2D, BadInputs) {
  const Tensor x = ones({1, 4, 4, 3});
  expect_error<InvalidArgumentError>(
      [&] {
        conv2d(x, ones({3, 3, 2, 1}), {1, 1, 1, 1}, "VALID");
      },
      "input depth must be evenly divisible by filter depth: 3 vs 2");
  expect_error<InvalidArgumentError>(
      [&] {
        conv2d(ones({4, 4, 3}), ones({1, 1, 3, 1}), {1, 1, 1, 1}, "VALID");
      },
      "input must be 4-dimensional");
  expect_error<InvalidArgumentError>(
      [&] {
        conv2d(x, ones({5, 5, 3, 1}), {1, 1, 1, 1}, "VALID");
      },
      "Computed output size would be negative");
  expect_error<InvalidArgumentError>(
      [&] {
        conv2d(x, ones({1, 1, 3, 1}), {2, 1, 1, 1}, "VALID");
      },
      "strides in the batch and depth dimensions");
  expect_error<InvalidArgumentError>(
      [&] {
        conv2d(x, ones({1, 1, 3, 1}), {1, 1, 1}, "VALID");
      },
      "strides field must specify 4 dimensions");
  expect_error<InvalidArgumentError>(
      [&] {
        conv2d(x, ones({1, 1, 3, 1}), {1, 1, 1, 1}, "FULL");
      },
      "padding must be SAME, VALID or EXPLICIT");
  expect_error<InvalidArgumentError>(
      [&] {
        conv2d(x, ones({1, 1, 3, 1}, DType::Float64), {1, 1, 1, 1}, "VALID");
      },
      "was expected to be a float tensor");
  expect_error<InvalidArgumentError>(
      [&] {
        conv2d(ones({1, 2, 2, 1}, DType::Int32), ones({1, 1, 1, 1}, DType::Int32), {1, 1, 1, 1}, "VALID");
      },
      "supports float and double");
}

TEST(Pooling, ByHand) {
  const Tensor x = constant<float>({1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 3, 3, 1});
  expect_tensor<float>(max_pool2d(x, {1, 2, 2, 1}, {1, 1, 1, 1}, "VALID"), {5, 6, 8, 9}, {1, 2, 2, 1});
  // SAME: the windows at the edge hold fewer pixels; the mean divides by those only.
  expect_tensor<float>(avg_pool2d(x, {1, 2, 2, 1}, {1, 2, 2, 1}, "SAME"), {3, 4.5f, 7.5f, 9}, {1, 2, 2, 1});
  expect_tensor<float>(max_pool2d(x, {1, 2, 2, 1}, {1, 2, 2, 1}, "SAME"), {5, 6, 8, 9}, {1, 2, 2, 1});
  expect_tensor<int32_t>(
      max_pool2d(constant<int32_t>({-5, -3, -9, -1}, {1, 2, 2, 1}), {1, 2, 2, 1}, {1, 1, 1, 1}, "VALID"), {-1},
      {1, 1, 1, 1});
  expect_error<InvalidArgumentError>(
      [&] {
        max_pool2d(x, {1, 4, 4, 1}, {1, 1, 1, 1}, "VALID");
      },
      "Computed output size would be negative");
  expect_error<InvalidArgumentError>(
      [&] {
        max_pool2d(x, {2, 2, 2, 1}, {1, 1, 1, 1}, "VALID");
      },
      "Pooling is not yet supported on the batch nor depth dimensions");
  expect_error<InvalidArgumentError>(
      [&] {
        avg_pool2d(constant<int32_t>({1}, {1, 1, 1, 1}), {1, 1, 1, 1}, {1, 1, 1, 1}, "VALID");
      },
      "AvgPool supports float and double");
}
