// The training kit: initializers, Dense, SGD/Adam against Keras's documented numbers, the
// loss op, and whole training steps eagerly and under kiln::function.
#include <cmath>

#include "test_util.h"

namespace kiln {
namespace {

using testing::expect_error;
using testing::expect_near;

TEST(Train, GlorotUniformBoundsAndSeed) {
  Tensor a = glorot_uniform({784, 256}, 7);
  EXPECT_EQ(a.shape(), TensorShape({784, 256}));
  const double limit = std::sqrt(6.0 / (784 + 256));
  double lo = 1, hi = -1, mean = 0;
  for (float v : a.to_vector<float>()) {
    lo = std::min<double>(lo, v);
    hi = std::max<double>(hi, v);
    mean += v;
  }
  mean /= 784 * 256;
  EXPECT_GE(lo, -limit);
  EXPECT_LE(hi, limit);
  EXPECT_GT(hi, 0.95 * limit);  // the range is used
  EXPECT_NEAR(mean, 0, 0.01);
  EXPECT_EQ(glorot_uniform({3, 4}, 5).to_vector<float>(), glorot_uniform({3, 4}, 5).to_vector<float>());
  expect_error<InvalidArgumentError>([] { glorot_uniform({}); }, "at least one dimension");
}

TEST(Train, DenseComputesActivationOfAffine) {
  Dense layer(2, 3, relu, 1, "layer");
  layer.kernel.assign(constant<float>({1, -1, 2, 0, 1, -3}, {2, 3}));
  layer.bias.assign(constant<float>({0.5f, 0, 0}, {3}));
  Tensor y = layer(constant<float>({1, 2}, {1, 2}));
  testing::expect_tensor<float>(y, {1.5f, 1, 0}, {1, 3});  // [1, 1, -4] + b, relu
  EXPECT_EQ(layer.kernel.name(), "layer/kernel");
  EXPECT_EQ(layer.trainable_variables().size(), 2u);
}

// Keras's SGD documentation: lr 0.1, momentum 0.9, loss var^2/2 from 1.0: 0.9, then 0.72.
TEST(Train, SgdMomentumMatchesKeras) {
  Variable var(constant(1.0f));
  SGD opt(0.1, 0.9);
  std::vector<float> seen;
  for (int i = 0; i < 2; ++i) {
    GradientTape tape;
    Tensor loss = var * var / 2.0f;
    opt.apply_gradients(tape.gradient(loss, {&var}), {&var});
    seen.push_back(var.read().item<float>());
  }
  EXPECT_NEAR(seen[0], 0.9f, 1e-6);
  EXPECT_NEAR(seen[1], 0.72f, 1e-6);
}

TEST(Train, PlainSgdAndNesterov) {
  Variable a(constant(1.0f)), b(constant(1.0f));
  SGD plain(0.5), nesterov(0.1, 0.9, true);
  plain.apply_gradients({constant(1.0f)}, {&a});
  EXPECT_FLOAT_EQ(a.read().item<float>(), 0.5f);
  nesterov.apply_gradients({constant(1.0f)}, {&b});  // v = -0.1; w += 0.9 * -0.1 - 0.1
  EXPECT_NEAR(b.read().item<float>(), 0.81f, 1e-6);
}

// Keras's Adam documentation: lr 0.1, loss var1^2/2 from 10.0: one step gives 9.9.
TEST(Train, AdamMatchesKeras) {
  Variable var1(constant(10.0f));
  Adam opt(0.1);
  GradientTape tape;
  Tensor loss = var1 * var1 / 2.0f;
  opt.apply_gradients(tape.gradient(loss, {&var1}), {&var1});
  EXPECT_NEAR(var1.read().item<float>(), 9.9f, 1e-5);
  EXPECT_EQ(opt.iterations().item<int64_t>(), 1);
}

TEST(Train, OptimizerErrors) {
  Variable a(constant(1.0f)), i(constant(int32_t(1)));
  SGD sgd(0.1, 0.5);
  expect_error<InvalidArgumentError>([&] { sgd.apply_gradients({}, {&a}); }, "0 gradients for 1 variables");
  expect_error<InvalidArgumentError>([&] { sgd.apply_gradients({Tensor()}, {&a}); }, "no gradient for variable");
  expect_error<InvalidArgumentError>([&] { sgd.apply_gradients({constant(1.0)}, {&a}); }, "is float64 but variable");
  expect_error<InvalidArgumentError>([&] { sgd.apply_gradients({constant(1.0f)}, {nullptr}); }, "is null");
  sgd.apply_gradients({constant(1.0f)}, {&a});
  Variable b(constant(1.0f));
  expect_error<InvalidArgumentError>(
      [&] {
        sgd.apply_gradients({constant(1.0f), constant(1.0f)}, {&a, &b});
      },
      "slots were made for 1");
  expect_error<InvalidArgumentError>([] { SGD(0.1, 1.5); }, "momentum must be in [0, 1]");
}

TEST(Train, SparseSoftmaxCrossEntropyValuesAndStability) {
  Tensor logits = constant<float>({1, 2, 3, 1000, 0, -1000}, {2, 3});
  Tensor labels = constant<int64_t>({2, 1}, {2});
  Tensor loss = sparse_softmax_cross_entropy_with_logits(labels, logits);
  const double l0 = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0)) - 3;
  expect_near<float>(loss, {static_cast<float>(l0), 1000.0f}, {2}, 1e-5);
  expect_error<InvalidArgumentError>(
      [&] {
        sparse_softmax_cross_entropy_with_logits(constant<int32_t>({0, 3}, {2}), logits);
      },
      "Received a label value of 3 which is outside the valid range of [0, 3).  Label values: 0 3");
  expect_error<InvalidArgumentError>(
      [&] { sparse_softmax_cross_entropy_with_logits(constant<int32_t>({0}, {1}), logits); }, "same first dimension");
  expect_error<InvalidArgumentError>(
      [&] {
        sparse_softmax_cross_entropy_with_logits(constant<float>({0, 1}, {2}), logits);
      },
      "labels must be int32 or int64");
  expect_error<InvalidArgumentError>(
      [&] {
        sparse_softmax_cross_entropy_with_logits(labels, constant<int32_t>({1, 2}, {1, 2}));
      },
      "features must be float or double");
  expect_error<InvalidArgumentError>(
      [&] {
        sparse_softmax_cross_entropy_with_logits(labels, constant<float>({1, 2}, {2}));
      },
      "logits must be 2-D");
}

// A small classifier trained eagerly and with the step under function: same losses.
struct Model {
  Dense hidden{4, 8, relu, 1, "hidden"};
  Dense out{8, 3, nullptr, 2, "out"};
  std::vector<Variable*> vars() { return {&hidden.kernel, &hidden.bias, &out.kernel, &out.bias}; }
};

template <class Opt>
std::vector<float> train(bool traced, Opt opt) {
  Model m;
  Tensor x = random_normal({16, 4}, 0, 1, DType::Float32, 3);
  Tensor y = random_uniform_int({16}, 0, 3, DType::Int32, 4);
  auto step = [&](const Tensor& xs, const Tensor& ys) {
    GradientTape tape;
    Tensor loss = reduce_mean(sparse_softmax_cross_entropy_with_logits(ys, m.out(m.hidden(xs))));
    opt.apply_gradients(tape.gradient(loss, m.vars()), m.vars());
    return loss;
  };
  auto f = function(step);
  std::vector<float> losses;
  for (int i = 0; i < 30; ++i) losses.push_back((traced ? f(x, y) : step(x, y)).template item<float>());
  return losses;
}

TEST(Train, EagerAndFunctionTrainTheSame) {
  for (int which = 0; which < 2; ++which) {
    SCOPED_TRACE(which == 0 ? "SGD momentum" : "Adam");
    auto eager = which == 0 ? train(false, SGD(0.1, 0.9)) : train(false, Adam(0.01));
    auto traced = which == 0 ? train(true, SGD(0.1, 0.9)) : train(true, Adam(0.01));
    ASSERT_EQ(eager.size(), traced.size());
    for (size_t i = 0; i < eager.size(); ++i) EXPECT_NEAR(eager[i], traced[i], 1e-4 * (1 + eager[i])) << "step " << i;
    EXPECT_LT(eager.back(), eager.front() * 0.7f);  // it learns
  }
}

// A saved training step is a program of its own: loaded, each call trains the saved variables.
TEST(Train, SavedTrainingStepKeepsTraining) {
  Model m;
  SGD opt(0.1, 0.9);
  Tensor x = random_normal({16, 4}, 0, 1, DType::Float32, 3);
  Tensor y = random_uniform_int({16}, 0, 3, DType::Int32, 4);
  auto step = function([&](const Tensor& xs, const Tensor& ys) {
    GradientTape tape;
    Tensor loss = reduce_mean(sparse_softmax_cross_entropy_with_logits(ys, m.out(m.hidden(xs))));
    opt.apply_gradients(tape.gradient(loss, m.vars()), m.vars());
    return loss;
  });
  const std::string dir = testing::temp_path("train_step");
  save(dir, step.get_concrete_function(x, y));
  LoadedModel loaded = load(dir);
  std::vector<float> losses;
  for (int i = 0; i < 20; ++i) losses.push_back(loaded.call("serving_default", {x, y})[0].item<float>());
  EXPECT_LT(losses.back(), losses.front() * 0.7f);
  // The original variables are untouched: the loaded model trains its own copies.
  EXPECT_NEAR(step(x, y).item<float>(), losses.front(), 1e-5);
}

}  // namespace
}  // namespace kiln
