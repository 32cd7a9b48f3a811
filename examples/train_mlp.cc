// Trains an MLP 784 -> 256 -> 10 (relu, batch 64, synthetic data) twice from the same
// initial weights: eagerly, and with the whole training step under kiln::function (one
// optimized graph: forward, loss, gradients, SGD-momentum update). Prints both loss curves
// and the time per step; exits non-zero unless the loss falls and both modes agree.
//   ./build/examples/train_mlp [steps]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "mlp.h"

using namespace kiln;

namespace {
struct Run {
  std::vector<float> losses;
  double ms_per_step;
};

Run train(bool as_function, int steps) {
  mlp::Model model(42);
  SGD opt(0.05, 0.9);
  const Tensor teacher = mlp::teacher();
  std::vector<mlp::Batch> data;
  for (int i = 0; i < 8; ++i) data.push_back(mlp::make_batch(teacher, 100 + i));
  auto step = function([&](const Tensor& x, const Tensor& y) { return mlp::train_step(model, opt, x, y); });
  Run run;
  auto start = std::chrono::steady_clock::now();
  for (int s = 0; s < steps; ++s) {
    const mlp::Batch& b = data[s % data.size()];
    Tensor loss = as_function ? step(b.x, b.labels) : mlp::train_step(model, opt, b.x, b.labels);
    run.losses.push_back(loss.item<float>());
    if (s == 0) start = std::chrono::steady_clock::now();  // the first step traces: not timed
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  run.ms_per_step = steps > 1 ? ms / (steps - 1) : 0;
  return run;
}
}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 200;
  if (steps < 2) {
    std::fprintf(stderr, "usage: train_mlp [steps >= 2]\n");
    return 2;
  }
  const Run eager = train(false, steps);
  const Run graph = train(true, steps);
  std::printf("step   eager loss   function loss\n");
  float worst = 0;
  for (int s = 0; s < steps; ++s) {
    const float e = eager.losses[s], g = graph.losses[s];
    worst = std::max(worst, std::abs(e - g) / (1 + std::abs(e)));
    if (s < 5 || s % (steps / 10 > 0 ? steps / 10 : 1) == 0 || s == steps - 1)
      std::printf("%4d   %10.5f   %13.5f\n", s, e, g);
  }
  std::printf("time per step: eager %.3f ms, function %.3f ms\n", eager.ms_per_step, graph.ms_per_step);
  std::printf("largest relative difference between the modes: %.2e\n", worst);
  const bool falls = eager.losses.back() < 0.5f * eager.losses.front();
  const bool agree = worst < 1e-3f;
  if (!falls) std::printf("FAIL: the loss did not fall by half\n");
  if (!agree) std::printf("FAIL: eager and function losses differ\n");
  return falls && agree ? 0 : 1;
}
