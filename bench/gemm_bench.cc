// 1024^3 float32 GEMM: kiln's matmul against OpenBLAS's own cblas_sgemm and Eigen, in one
// binary. kiln loads OpenBLAS itself so OPENBLAS_CORETYPE cannot pin it to a slower core;
// the OpenBLAS row below calls that same correctly-loaded library directly.
// Run: ./build/bench/kiln_bench --benchmark_filter=Gemm1024
#include <benchmark/benchmark.h>
#include <kiln/kiln.h>

#include <string>
#include <vector>

#include "core/parallel.h"
#include "kernels/gemm.h"
#include "kernels/onednn.h"

using namespace kiln;

namespace {
constexpr int kN = 1024;
void set_flops(benchmark::State& state) {
  state.counters["GFLOPS"] = benchmark::Counter(2.0 * kN * kN * kN * static_cast<double>(state.iterations()) / 1e9,
                                                benchmark::Counter::kIsRate);
  state.SetLabel(kernels::large_gemm_backend());
}
}  // namespace

// Arg: intra-op threads. The 1-thread row is the one to compare with OpenBLAS below.
static void BM_Gemm1024_Kiln(benchmark::State& state) {
  set_intra_op_threads(static_cast<int>(state.range(0)));
  Tensor a = random_uniform({kN, kN}, -1, 1, DType::Float32, 1), b = random_uniform({kN, kN}, -1, 1, DType::Float32, 2);
  for (auto _ : state) benchmark::DoNotOptimize(matmul(a, b));
  set_flops(state);
  set_intra_op_threads(1);
}
BENCHMARK(BM_Gemm1024_Kiln)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

// An LSTM(128) step's recurrent product at batch 32 ([32, 128] by [128, 512]), kiln's matmul
// on one and two threads: about 10 us of work, where a split's cost shows.
static void BM_GemmRecurrentStep(benchmark::State& state) {
  set_intra_op_threads(static_cast<int>(state.range(0)));
  Tensor a = random_uniform({32, 128}, -1, 1, DType::Float32, 1),
         b = random_uniform({128, 512}, -1, 1, DType::Float32, 2);
  for (auto _ : state) benchmark::DoNotOptimize(matmul(a, b));
  state.counters["GFLOPS"] = benchmark::Counter(2.0 * 32 * 128 * 512 * static_cast<double>(state.iterations()) / 1e9,
                                                benchmark::Counter::kIsRate);
  set_intra_op_threads(1);
}
BENCHMARK(BM_GemmRecurrentStep)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);

static void BM_Gemm1024_OpenBLAS(benchmark::State& state) {
  auto sgemm = kernels::openblas_sgemm();
  if (!sgemm) {
    state.SkipWithError("OpenBLAS not installed");
    return;
  }
  // The same random operands kiln's row uses.
  const auto a = random_uniform({kN, kN}, -1, 1, DType::Float32, 1).to_vector<float>();
  const auto b = random_uniform({kN, kN}, -1, 1, DType::Float32, 2).to_vector<float>();
  std::vector<float> c(kN * kN);
  for (auto _ : state) {
    sgemm(101, 111, 111, kN, kN, kN, 1.f, a.data(), kN, b.data(), kN, 0.f, c.data(), kN);
    benchmark::DoNotOptimize(c.data());
  }
  set_flops(state);
}
BENCHMARK(BM_Gemm1024_OpenBLAS)->Unit(benchmark::kMillisecond);

static void BM_Gemm1024_Eigen(benchmark::State& state) {
  const auto a = random_uniform({kN, kN}, -1, 1, DType::Float32, 1).to_vector<float>();
  const auto b = random_uniform({kN, kN}, -1, 1, DType::Float32, 2).to_vector<float>();
  std::vector<float> c(kN * kN);
  for (auto _ : state) {
    kernels::eigen_sgemm(kN, kN, kN, a.data(), b.data(), c.data());
    benchmark::DoNotOptimize(c.data());
  }
  set_flops(state);
}
BENCHMARK(BM_Gemm1024_Eigen)->Unit(benchmark::kMillisecond);

// The MLP step's forward product (64x784 by 784x256, one thread): OpenBLAS against Eigen on
// the shape that decides the step (Arg 0: OpenBLAS, 1: Eigen).
static void BM_GemmMlpForward(benchmark::State& state) {
  constexpr int m = 64, k = 784, n = 256;
  const auto a = random_uniform({m, k}, -1, 1, DType::Float32, 1).to_vector<float>();
  const auto b = random_uniform({k, n}, -1, 1, DType::Float32, 2).to_vector<float>();
  std::vector<float> c(m * n);
  auto sgemm = kernels::openblas_sgemm();
  if (state.range(0) == 0 && !sgemm) {
    state.SkipWithError("OpenBLAS not installed");
    return;
  }
  for (auto _ : state) {
    if (state.range(0) == 0)
      sgemm(101, 111, 111, m, n, k, 1.f, a.data(), k, b.data(), n, 0.f, c.data(), n);
    else
      kernels::eigen_sgemm(m, n, k, a.data(), b.data(), c.data());
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOPS"] =
      benchmark::Counter(2.0 * m * n * k * static_cast<double>(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_GemmMlpForward)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// kiln's short kernels (kernels/gemm_short.h) against OpenBLAS on the shapes they serve, one
// thread: Arg 0 is kiln::kernels::gemm (what MatMul runs), Arg 1 OpenBLAS's own sgemm.
static void short_gemm(benchmark::State& state, bool transpose_a, int m, int n, int k) {
  const auto a =
      random_uniform({transpose_a ? k : m, transpose_a ? m : k}, -1, 1, DType::Float32, 1).to_vector<float>();
  const auto b = random_uniform({k, n}, -1, 1, DType::Float32, 2).to_vector<float>();
  std::vector<float> c(static_cast<size_t>(m) * n);
  auto sgemm = kernels::openblas_sgemm();
  if (state.range(0) == 1 && !sgemm) {
    state.SkipWithError("OpenBLAS not installed");
    return;
  }
  set_intra_op_threads(1);
  for (auto _ : state) {
    if (state.range(0) == 0)
      kernels::gemm<float>(transpose_a, false, m, n, k, a.data(), b.data(), c.data());
    else
      sgemm(101, transpose_a ? 112 : 111, 111, m, n, k, 1.f, a.data(), transpose_a ? m : k, b.data(), n, 0.f, c.data(),
            n);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOPS"] =
      benchmark::Counter(2.0 * m * n * k * static_cast<double>(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
}
// The MLP step's weight gradient x^T * dh (x 64x784, dh 64x256): a short inner dimension.
static void BM_GemmWeightGradient(benchmark::State& state) { short_gemm(state, true, 784, 256, 64); }
BENCHMARK(BM_GemmWeightGradient)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
// A recurrent cell's product [x, h] * W (8x96 by 96x256): few rows.
static void BM_GemmShortRows(benchmark::State& state) { short_gemm(state, false, 8, 256, 96); }
BENCHMARK(BM_GemmShortRows)->Arg(0)->Arg(1);
// An LSTM(128) step at batch 1: h * U, a vector times a 128x512 matrix (and 4 rows of it).
static void BM_GemmVectorRow(benchmark::State& state) { short_gemm(state, false, 1, 512, 128); }
BENCHMARK(BM_GemmVectorRow)->Arg(0)->Arg(1);
static void BM_GemmFourRows(benchmark::State& state) { short_gemm(state, false, 4, 512, 128); }
BENCHMARK(BM_GemmFourRows)->Arg(0)->Arg(1);

// The large-GEMM library on the products of a Transformer encoder (batch 32 x 128 tokens,
// model 256, feed-forward 1024) and of classifier heads, one thread: Arg 1 picks OpenBLAS (0)
// or oneDNN's sgemm (1), which kiln's AVX-512 level uses where libdnnl loads
// (docs/perf/dispatch.md). Arg 0 indexes kLibraryShapes.
constexpr int kLibraryShapes[][3] = {{4096, 256, 256}, {4096, 1024, 256}, {4096, 256, 1024},
                                     {49, 512, 2048},  {196, 768, 768},   {128, 128, 64},
                                     {32, 512, 128},   {32, 256, 128},    {16, 512, 128}};
static void BM_GemmLibrary(benchmark::State& state) {
  const auto [m, n, k] = kLibraryShapes[state.range(0)];
  const auto a = random_uniform({m, k}, -1, 1, DType::Float32, 1).to_vector<float>();
  const auto b = random_uniform({k, n}, -1, 1, DType::Float32, 2).to_vector<float>();
  std::vector<float> c(static_cast<size_t>(m) * n);
  auto sgemm = kernels::openblas_sgemm();
  const bool onednn = state.range(1) == 1;
  if (onednn ? !kernels::onednn::usable() : !sgemm) {
    state.SkipWithError(onednn ? "oneDNN not usable" : "OpenBLAS not installed");
    return;
  }
  for (auto _ : state) {
    if (onednn)
      kernels::onednn::sgemm(false, false, m, n, k, a.data(), k, b.data(), n, c.data(), n);
    else
      sgemm(101, 111, 111, m, n, k, 1.f, a.data(), k, b.data(), n, 0.f, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOPS"] =
      benchmark::Counter(2.0 * m * n * k * static_cast<double>(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
  state.SetLabel(std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
                 (onednn ? " onednn" : " openblas"));
}
BENCHMARK(BM_GemmLibrary)->ArgsProduct({{0, 1, 2, 3, 4, 5, 6, 7, 8}, {0, 1}})->Unit(benchmark::kMicrosecond);
