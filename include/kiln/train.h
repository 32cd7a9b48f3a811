// A small training kit over kiln::Variable: initializers, a Dense layer, and the SGD and
// Adam optimizers with TensorFlow/Keras update rules. Everything is ordinary ops, so a
// training step written with a GradientTape runs eagerly or, under kiln::function, as one
// optimized graph (forward, loss, gradients and updates).
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/gradient.h"

namespace kiln {

// Glorot (Xavier) uniform for a [fan_in, fan_out] kernel: U(-l, l), l = sqrt(6 / (fan_in + fan_out)).
// Shapes of other ranks use Keras's fans (receptive field times the last two dims).
Tensor glorot_uniform(std::vector<int64_t> shape, std::optional<uint64_t> seed = {}, DType dtype = DType::Float32);

// y = activation(x · kernel + bias), kernel [in, out] glorot-uniform, bias zeros.
class Dense {
 public:
  using Activation = std::function<Tensor(const Tensor&)>;
  Dense(int64_t in_features, int64_t out_features, Activation activation = nullptr, std::optional<uint64_t> seed = {},
        const std::string& name = "dense", DType dtype = DType::Float32);
  Tensor operator()(const Tensor& x) const;
  std::vector<Variable*> trainable_variables() { return {&kernel, &bias}; }

  Variable kernel;
  Variable bias;

 private:
  Activation activation_;
};

// Optimizers apply gradients to variables, gradient i to variable i. Their slot variables
// (momentum, Adam's moments and step) are made on the first apply_gradients, which inside
// a function is its first trace, as TensorFlow requires.
class SGD {
 public:
  // w -= lr * g; with momentum: v = momentum * v - lr * g; w += v (Nesterov: w += momentum * v - lr * g).
  explicit SGD(double learning_rate = 0.01, double momentum = 0.0, bool nesterov = false);
  void apply_gradients(const std::vector<Tensor>& gradients, const std::vector<Variable*>& variables);

 private:
  double lr_, momentum_;
  bool nesterov_;
  std::vector<std::unique_ptr<Variable>> velocity_;
};

class Adam {
 public:
  // Keras's Adam: m = b1 m + (1-b1) g; v = b2 v + (1-b2) g²;
  // w -= lr · sqrt(1-b2^t)/(1-b1^t) · m / (sqrt(v) + epsilon).
  explicit Adam(double learning_rate = 0.001, double beta_1 = 0.9, double beta_2 = 0.999, double epsilon = 1e-7);
  void apply_gradients(const std::vector<Tensor>& gradients, const std::vector<Variable*>& variables);
  // Steps taken so far (a variable: inside a function it advances on every call).
  Tensor iterations() const;

 private:
  double lr_, beta_1_, beta_2_, epsilon_;
  std::unique_ptr<Variable> iterations_;
  std::vector<std::unique_ptr<Variable>> m_, v_;
};

}  // namespace kiln
