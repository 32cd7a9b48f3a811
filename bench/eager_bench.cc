// Eager op overhead and kernel speed. Run: ./build/bench/kiln_bench --benchmark_filter=Eager
#include <benchmark/benchmark.h>
#include <kiln/kiln.h>

#include "core/parallel.h"

using namespace kiln;

// Benchmarks run single-threaded unless an Arg says otherwise.
[[maybe_unused]] static const int kSingleThreaded = [] {
  set_intra_op_threads(1);
  return 1;
}();

static void BM_EagerAddScalarF32(benchmark::State& state) {
  Tensor a = constant(1.0f), b = constant(2.0f);
  for (auto _ : state) benchmark::DoNotOptimize(a + b);
}
BENCHMARK(BM_EagerAddScalarF32);

static void BM_EagerMatMul10x10F32(benchmark::State& state) {
  Tensor a = random_uniform({10, 10}, -1, 1, DType::Float32, 1), b = random_uniform({10, 10}, -1, 1, DType::Float32, 2);
  for (auto _ : state) benchmark::DoNotOptimize(matmul(a, b));
}
BENCHMARK(BM_EagerMatMul10x10F32);

static void BM_EagerMatMul10x10I32(benchmark::State& state) {
  Tensor a = random_uniform({10, 10}, -1, 2, DType::Int32, 1), b = random_uniform({10, 10}, -1, 2, DType::Int32, 2);
  for (auto _ : state) benchmark::DoNotOptimize(matmul(a, b));
}
BENCHMARK(BM_EagerMatMul10x10I32);

// Arg: intra-op threads (1 = single-threaded kernel).
static void BM_EagerTanh1M(benchmark::State& state) {
  set_intra_op_threads(static_cast<int>(state.range(0)));
  Tensor x = random_uniform({1 << 20}, -3, 3, DType::Float32, 1);
  for (auto _ : state) benchmark::DoNotOptimize(tanh(x));
  state.SetBytesProcessed(state.iterations() * (int64_t{1} << 20) * 4);
  set_intra_op_threads(1);
}
BENCHMARK(BM_EagerTanh1M)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);
