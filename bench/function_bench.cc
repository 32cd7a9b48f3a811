// Graph mode: the guide's power(x, 100), eager vs function, and the cost of tracing.
// Run: ./build/bench/kiln_bench --benchmark_filter='Power|Trace'
#include <benchmark/benchmark.h>
#include <kiln/kiln.h>

using namespace kiln;

namespace {
Tensor power(Tensor x, int y) {
  Tensor result = eye(10, DType::Int32);
  for (int i = 0; i < y; ++i) result = matmul(x, result);
  return result;
}
}  // namespace

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
  state.counters["per_op"] = benchmark::Counter(kOps, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_TraceCost1000Ops)->Unit(benchmark::kMillisecond);
