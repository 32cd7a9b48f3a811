// The cost of one intra-op split: parallel_for over a few chunks of almost no work, on one
// and two threads, on kiln's pool and on oneDNN's OpenMP team (which kiln's splits use where
// libdnnl loads). A kernel of a few microseconds (an LSTM step's gates at batch 32) pays this
// once per call; the difference between the rows is what a split must save to pay.
// Run: ./build/bench/kiln_bench --benchmark_filter=ParallelFor
#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>

#include "core/parallel.h"
#include "kernels/onednn.h"

using namespace kiln;

// Arg 0: threads; Arg 1: 1 to use oneDNN's team where it loads, 0 for kiln's pool; Arg 2:
// microseconds the caller works alone between splits (a step's serial kernels).
static void BM_ParallelForEightChunks(benchmark::State& state) {
  const bool team = state.range(1) == 1;
  if (team && !kernels::onednn::usable()) {
    state.SkipWithError("oneDNN not usable");
    return;
  }
  const TeamRunner runner = team_runner();
  if (!team) set_team_runner(nullptr);
  set_intra_op_threads(static_cast<int>(state.range(0)));
  std::atomic<int64_t> sink{0};
  const auto gap = std::chrono::microseconds(state.range(2));
  for (auto _ : state) {
    parallel_for(8, 1, [&](int64_t lo, int64_t hi) { sink.fetch_add(hi - lo, std::memory_order_relaxed); });
    for (const auto until = std::chrono::steady_clock::now() + gap; std::chrono::steady_clock::now() < until;) {
    }
  }
  benchmark::DoNotOptimize(sink.load());
  set_intra_op_threads(1);
  set_team_runner(runner);
}
BENCHMARK(BM_ParallelForEightChunks)->ArgsProduct({{1, 2}, {0, 1}, {0, 5, 20}})->Unit(benchmark::kMicrosecond);
