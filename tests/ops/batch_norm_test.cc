// FusedBatchNormV3 in inference mode and Relu6: values by hand, eager vs traced, bad inputs.
// (Against TensorFlow itself: python/tests/test_tf_saved_model.py serves a TF-written model.)
#include <cmath>

#include "test_util.h"

using namespace kiln;
using namespace kiln::testing;

TEST(FusedBatchNorm, ByHand) {
  // Two channels: y = (x - mean) / sqrt(variance + epsilon) * scale + offset.
  const Tensor x = constant<float>({1, 10, 3, 20}, {1, 1, 2, 2});
  const Tensor y = fused_batch_norm(x, constant<float>({2, 1}), constant<float>({1, 0}), constant<float>({1, 10}),
                                    constant<float>({3.5f, 99.5f}), 0.5);
  expect_near<float>(y, {1, 0, 3, 1}, {1, 1, 2, 2});
}

TEST(FusedBatchNorm, EagerAndTracedAgree) {
  const Tensor x = random_uniform({2, 5, 3, 7}, -4, 4, DType::Float32, 1);
  const Tensor scale = random_uniform({7}, 0.5, 2, DType::Float32, 2);
  const Tensor offset = random_uniform({7}, -1, 1, DType::Float32, 3);
  const Tensor mean = random_uniform({7}, -1, 1, DType::Float32, 4);
  const Tensor variance = random_uniform({7}, 0.1, 3, DType::Float32, 5);
  auto f = function([&](Tensor a) { return fused_batch_norm(a, scale, offset, mean, variance); });
  EXPECT_EQ(f(x).to_vector<float>(), fused_batch_norm(x, scale, offset, mean, variance).to_vector<float>());
  // No channels: an empty result, as TensorFlow.
  const Tensor none = zeros({0});
  EXPECT_EQ(fused_batch_norm(zeros({1, 2, 2, 0}), none, none, none, none).shape(), TensorShape({1, 2, 2, 0}));
}

TEST(FusedBatchNorm, BadInputs) {
  const Tensor x = ones({1, 2, 2, 3});
  const Tensor c = ones({3});
  expect_error<InvalidArgumentError>(
      [&] {
        fused_batch_norm(ones({2, 3}), c, c, c, c);
      },
      "input must be 4-dimensional[2,3]");
  expect_error<InvalidArgumentError>([&] { fused_batch_norm(x, ones({2}), c, c, c); },
                                     "scale must have the same number of elements as the channels of x, got 2 and 3");
  expect_error<InvalidArgumentError>(
      [&] {
        fused_batch_norm(x, c, c, ones({3, 1}), c);
      },
      "estimated_mean must be 1-dimensional[3,1]");
  expect_error<InvalidArgumentError>(
      [&] { fused_batch_norm(x, c, c, c, ones({4})); },
      "When is_training=false, variance must have the same number of elements as the channels of x, got 4 and 3");
  expect_error<InvalidArgumentError>([&] { fused_batch_norm(cast(x, DType::Float64), c, c, c, c); },
                                     "x must be float32, got double");
}

TEST(Relu6, ValuesAndEdges) {
  const auto r = relu6(constant<float>({NAN, -0.0f, -1.0f, 3.0f, 6.0f, 7.0f, INFINITY})).to_vector<float>();
  EXPECT_TRUE(std::isnan(r[0]));
  EXPECT_TRUE(std::signbit(r[1]));
  EXPECT_EQ(std::vector<float>(r.begin() + 2, r.end()), (std::vector<float>{0, 3, 6, 6, 6}));
  expect_tensor<int32_t>(relu6(constant<int32_t>({-3, 7, 3})), {0, 6, 3}, {3});
  expect_tensor<int64_t>(relu6(constant<int64_t>({-3, 7, 3})), {0, 6, 3}, {3});
  expect_tensor<double>(relu6(constant<double>({-3, 7, 3})), {0, 6, 3}, {3});
  // The gradient passes strictly inside (0, 6), as TensorFlow's Relu6Grad.
  const Tensor x = constant<float>({-1, 0, 3, 6, 7});
  GradientTape tape;
  tape.watch(x);
  const Tensor y = reduce_sum(relu6(x));
  expect_tensor<float>(tape.gradient(y, std::vector<Tensor>{x})[0], {0, 0, 1, 0, 0}, {5});
}
