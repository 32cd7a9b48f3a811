// One training step of examples/train_mlp (MLP 784 -> 256 -> 10, batch 64, SGD momentum),
// one thread, eager vs the step under kiln::function.
// Run: ./build/bench/kiln_bench --benchmark_filter=MlpTrainStep (the GemmsOnly line is the floor)
#include <benchmark/benchmark.h>

#include "core/parallel.h"
#include "mlp.h"

using namespace kiln;

static void BM_MlpTrainStepEager(benchmark::State& state) {
  set_intra_op_threads(1);
  mlp::Model model(42);
  SGD opt(0.05, 0.9);
  const mlp::Batch b = mlp::make_batch(mlp::teacher(), 100);
  for (auto _ : state) benchmark::DoNotOptimize(mlp::train_step(model, opt, b.x, b.labels));
}
BENCHMARK(BM_MlpTrainStepEager)->Unit(benchmark::kMillisecond);

static void BM_MlpTrainStepFunction(benchmark::State& state) {
  set_intra_op_threads(1);
  mlp::Model model(42);
  SGD opt(0.05, 0.9);
  const mlp::Batch b = mlp::make_batch(mlp::teacher(), 100);
  auto step = function([&](const Tensor& x, const Tensor& y) { return mlp::train_step(model, opt, x, y); });
  (void)step(b.x, b.labels);  // trace outside the timed loop
  for (auto _ : state) benchmark::DoNotOptimize(step(b.x, b.labels));
}
BENCHMARK(BM_MlpTrainStepFunction)->Unit(benchmark::kMillisecond);

// The floor under the step: only its five matrix products (forward x·W1, h·W2; backward
// h^T·dlogits, dlogits·W2^T, x^T·dh), one thread. The step's time over this one is its overhead.
static void BM_MlpTrainStepGemmsOnly(benchmark::State& state) {
  set_intra_op_threads(1);
  Tensor x = random_normal({64, 784}), w1 = random_normal({784, 256}), h = random_normal({64, 256});
  Tensor w2 = random_normal({256, 10}), dl = random_normal({64, 10}), dh = random_normal({64, 256});
  auto gemms = function([&](const Tensor& a) {
    return std::vector<Tensor>{matmul(a, w1), matmul(h, w2), matmul(h, dl, true), matmul(dl, w2, false, true),
                               matmul(a, dh, true)};
  });
  (void)gemms(x);
  for (auto _ : state) benchmark::DoNotOptimize(gemms(x));
}
BENCHMARK(BM_MlpTrainStepGemmsOnly)->Unit(benchmark::kMillisecond);
