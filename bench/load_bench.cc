// Loading a saved 1000-node model: read and verify the files, parse, import, optimize and
// plan (everything load() does before the first call).
// ./build/bench/kiln_bench --benchmark_filter=Load
#include <benchmark/benchmark.h>
#include <kiln/kiln.h>

#include <filesystem>

using namespace kiln;

static void BM_Load1000NodeModel(benchmark::State& state) {
  // About 1000 nodes: a chain of elementwise ops and small matmuls with constants.
  auto f = function(
      [](Tensor x) {
        Tensor y = x;
        for (int i = 0; i < 250; ++i) y = tanh(matmul(y, x) * static_cast<float>(i % 7 + 1)) + x;
        return y;
      },
      {.arg_names = {"x"}});
  const auto cf = f.get_concrete_function(ones({4, 4}));
  const std::string dir = (std::filesystem::temp_directory_path() / "kiln_bench_load").string();
  save(dir, cf);
  size_t nodes = 0;
  for (auto _ : state) {
    LoadedModel m = load(dir);
    nodes = m.signature("serving_default").graph().size();
    benchmark::DoNotOptimize(m);
  }
  state.counters["nodes"] = static_cast<double>(nodes);
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_Load1000NodeModel)->Unit(benchmark::kMillisecond);
