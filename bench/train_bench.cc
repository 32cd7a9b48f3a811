// One training step of examples/train_mlp (MLP 784 -> 256 -> 10, batch 64, SGD momentum),
// one thread, eager vs the step under kiln::function.
// Run: ./build/bench/kiln_bench --benchmark_filter=MlpTrainStep
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
