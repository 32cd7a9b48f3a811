// Graph mode: the guide's power(x, 100), eager vs function, and the cost of tracing.
// Run: ./build/bench/kiln_bench --benchmark_filter='Power|Trace'
#include <benchmark/benchmark.h>
#include <kiln/kiln.h>

#include "core/parallel.h"

using namespace kiln;

namespace {
Tensor power(Tensor x, int y) {
  Tensor result = eye(10, x.dtype());
  for (int i = 0; i < y; ++i) result = matmul(x, result);
  return result;
}
}  // namespace

// Single-threaded kernels unless a benchmark's Arg says otherwise.
[[maybe_unused]] static const int kOneThread = [] {
  set_intra_op_threads(1);
  return 1;
}();

static void BM_PowerEager(benchmark::State& state) {
  Tensor x = random_uniform({10, 10}, -1, 2, DType::Int32, 1);
  for (auto _ : state) benchmark::DoNotOptimize(power(x, 100));
}
BENCHMARK(BM_PowerEager)->Unit(benchmark::kMicrosecond);

static void BM_PowerFunction(benchmark::State& state) {
  Tensor x = random_uniform({10, 10}, -1, 2, DType::Int32, 1);
  auto power_as_graph = function(power);
  (void)power_as_graph(x, 100);  // trace outside the timed loop
  for (auto _ : state) benchmark::DoNotOptimize(power_as_graph(x, 100));
}
BENCHMARK(BM_PowerFunction)->Unit(benchmark::kMicrosecond);

// The same in float32 (the goal: <= 5 us).
static void BM_PowerFunctionF32(benchmark::State& state) {
  Tensor x = random_uniform({10, 10}, -1, 1, DType::Float32, 1);
  auto power_as_graph = function(power);
  (void)power_as_graph(x, 100);
  for (auto _ : state) benchmark::DoNotOptimize(power_as_graph(x, 100));
}
BENCHMARK(BM_PowerFunctionF32)->Unit(benchmark::kMicrosecond);

// Tracing plus first-call preparation (plan compile) of a 1000-op function, per op.
static void BM_TraceCost1000Ops(benchmark::State& state) {
  constexpr int kOps = 1000;
  Tensor x = constant(1.0f);
  for (auto _ : state) {
    auto f = function([](Tensor v) {
      for (int i = 0; i < kOps; ++i) v = v * 1.0001f;
      return v;
    });
    benchmark::DoNotOptimize(f.get_concrete_function(x));
  }
  // Seconds per traced op (printed with an SI prefix: 1.8u = 1.8 us).
  state.counters["per_op"] =
      benchmark::Counter(kOps, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_TraceCost1000Ops)->Unit(benchmark::kMillisecond);

// Executor overhead per node: a 10,000-node chain of scalar adds, optimizer off.
static void BM_ExecutorChain10000ScalarAdds(benchmark::State& state) {
  constexpr int kNodes = 10000;
  auto f = function(
      [](Tensor x) {
        for (int i = 0; i < kNodes; ++i) x = x + x;
        return x;
      },
      {.optimizer = OptimizerOptions::none()});
  Tensor x = constant(0.0f);
  (void)f(x);
  for (auto _ : state) benchmark::DoNotOptimize(f(x));
  state.counters["per_node"] =
      benchmark::Counter(kNodes, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_ExecutorChain10000ScalarAdds)->Unit(benchmark::kMicrosecond);

// Two independent chains of 20 MatMuls of 256x256 float32, joined at the end; Arg: threads.
// (The 2-thread speed-up comes from intra-op GEMM splitting; kiln has no inter-op scheduler yet.)
static void BM_TwoMatMulChains(benchmark::State& state) {
  set_intra_op_threads(static_cast<int>(state.range(0)));
  auto f = function([](Tensor a, Tensor b, Tensor w) {
    for (int i = 0; i < 20; ++i) {
      a = matmul(a, w);
      b = matmul(b, w);
    }
    return a + b;
  });
  Tensor a = random_uniform({256, 256}, -0.1, 0.1, DType::Float32, 1);
  Tensor b = random_uniform({256, 256}, -0.1, 0.1, DType::Float32, 2);
  Tensor w = random_uniform({256, 256}, -0.1, 0.1, DType::Float32, 3);
  (void)f(a, b, w);
  for (auto _ : state) benchmark::DoNotOptimize(f(a, b, w));
  set_intra_op_threads(1);
}
BENCHMARK(BM_TwoMatMulChains)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// Elementwise fusion: tanh(x * 2 + 1) - x * y + sigmoid(y) over 1M floats, fused vs not.
static void BM_ElementwiseChain1M(benchmark::State& state) {
  OptimizerOptions o;
  o.elementwise_fusion = state.range(0) != 0;
  auto f = function([](Tensor x, Tensor y) { return tanh(x * 2.0f + 1.0f) - x * y + sigmoid(y); }, {.optimizer = o});
  Tensor x = random_uniform({1 << 20}, -2, 2, DType::Float32, 1),
         y = random_uniform({1 << 20}, -2, 2, DType::Float32, 2);
  (void)f(x, y);
  for (auto _ : state) benchmark::DoNotOptimize(f(x, y));
}
BENCHMARK(BM_ElementwiseChain1M)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// The cost of a cached call: kiln::Function (build the key, look it up, run) against the
// ConcreteFunction it finds (run only), on one small tensor. Goal: the first within 1.2x.
static void BM_FunctionCallCached(benchmark::State& state) {
  auto f = function([](Tensor x) { return x + 1.0f; });
  Tensor x = constant<float>({1, 2, 3, 4});
  (void)f(x);
  for (auto _ : state) benchmark::DoNotOptimize(f(x));
}
BENCHMARK(BM_FunctionCallCached);

static void BM_ConcreteFunctionCall(benchmark::State& state) {
  auto f = function([](Tensor x) { return x + 1.0f; });
  Tensor x = constant<float>({1, 2, 3, 4});
  ConcreteFunction cf = f.get_concrete_function(x);
  const std::vector<Tensor> in{x};
  for (auto _ : state) benchmark::DoNotOptimize(cf(in));
}
BENCHMARK(BM_ConcreteFunctionCall);
