// while_loop overhead and power with a tensor exponent.
// Run: ./build/bench/kiln_bench --benchmark_filter='While|PowerLoop'
#include <benchmark/benchmark.h>
#include <kiln/kiln.h>

using namespace kiln;

// 1000 iterations of a scalar add: time per call / 1000 = overhead per iteration.
static void BM_While1000ScalarAdds(benchmark::State& state) {
  auto f = function([](Tensor n) {
    auto [i, s] = while_loop([&](Tensor i, Tensor) { return i < n; },
                             [](Tensor i, Tensor s) { return std::make_tuple(i + 1, s + 2); },
                             std::make_tuple(constant(0), constant(0)));
    return s;
  });
  Tensor n = constant(1000);
  (void)f(n);
  for (auto _ : state) benchmark::DoNotOptimize(f(n));
  state.counters["per_iteration"] =
      benchmark::Counter(1000, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_While1000ScalarAdds)->Unit(benchmark::kMicrosecond);

static void BM_PowerLoopTensorY(benchmark::State& state) {
  auto power = function([](Tensor x, Tensor y) {
    auto [i, r] = while_loop([&](Tensor i, Tensor) { return i < y; },
                             [&](Tensor i, Tensor r) { return std::make_tuple(i + 1, matmul(x, r)); },
                             std::make_tuple(constant(0), eye(10, DType::Int32)));
    return r;
  });
  Tensor x = random_uniform({10, 10}, -1, 2, DType::Int32, 1), y = constant(100);
  (void)power(x, y);
  for (auto _ : state) benchmark::DoNotOptimize(power(x, y));
}
BENCHMARK(BM_PowerLoopTensorY)->Unit(benchmark::kMicrosecond);
