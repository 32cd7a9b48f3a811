// The model of examples/train_mlp (also timed by bench/train_bench.cc): an MLP
// 784 -> 256 (relu) -> 10 on synthetic data, trained with SGD with momentum.
#pragma once
#include <kiln/kiln.h>

namespace mlp {

struct Model {
  kiln::Dense hidden;
  kiln::Dense out;
  explicit Model(uint64_t seed)
      : hidden(784, 256, kiln::relu, seed, "hidden"), out(256, 10, nullptr, seed + 1, "out") {}
  std::vector<kiln::Variable*> variables() { return {&hidden.kernel, &hidden.bias, &out.kernel, &out.bias}; }
  kiln::Tensor logits(const kiln::Tensor& x) const { return out(hidden(x)); }
};

// One step: forward, mean cross-entropy, gradients, update. Returns the loss before the update.
inline kiln::Tensor train_step(Model& m, kiln::SGD& opt, const kiln::Tensor& x, const kiln::Tensor& labels) {
  kiln::GradientTape tape;
  kiln::Tensor loss = kiln::reduce_mean(kiln::sparse_softmax_cross_entropy_with_logits(labels, m.logits(x)));
  opt.apply_gradients(tape.gradient(loss, m.variables()), m.variables());
  return loss;
}

// A learnable synthetic task: 784-feature inputs labelled by a fixed random linear "teacher".
struct Batch {
  kiln::Tensor x, labels;
};
inline kiln::Tensor teacher() { return kiln::random_normal({784, 10}, 0, 1, kiln::DType::Float32, 1234); }
inline Batch make_batch(const kiln::Tensor& teacher, uint64_t seed, int64_t batch = 64) {
  kiln::Tensor x = kiln::random_normal({batch, 784}, 0, 1, kiln::DType::Float32, seed);
  kiln::Tensor labels = kiln::cast(kiln::argmax(kiln::matmul(x, teacher), 1), kiln::DType::Int32);
  return {x, labels};
}

}  // namespace mlp
