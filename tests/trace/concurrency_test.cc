// One Function called from many threads: racing first calls trace once per signature, and
// every call gets its own correct result.
#include <atomic>
#include <thread>

#include "test_util.h"

using namespace kiln;

TEST(Concurrency, RacingFirstCallsTraceOncePerSignature) {
  std::atomic<int> traces{0};
  auto f = function([&](Tensor x, int k) {
    traces.fetch_add(1);
    return matmul(x, x) + k;
  });
  constexpr int kThreads = 8;
  std::atomic<bool> go{false};
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      while (!go.load()) std::this_thread::yield();
      for (int i = 0; i < 50; ++i) {
        const int k = i % 2;  // two signatures
        const float v = static_cast<float>(t + i);
        Tensor x = fill({4, 4}, v);
        const float want = 4 * v * v + k;
        for (float got : f(x, k).to_vector<float>())
          if (got != want) wrong.fetch_add(1);
      }
    });
  go.store(true);
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(f.tracing_count(), 2);
  EXPECT_EQ(traces.load(), 2);
}

TEST(Concurrency, OneConcreteFunctionFromManyThreads) {
  auto f = function([](Tensor x) { return reduce_sum(tanh(x) * 2 + x, {0}); });
  ConcreteFunction cf = f.get_concrete_function(TensorSpec{{64, 8}, DType::Float64});
  Tensor x = random_uniform({64, 8}, -1, 1, DType::Float64, 3);
  const std::vector<double> want = cf(x)[0].to_vector<double>();
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i)
        if (cf(x)[0].to_vector<double>() != want) wrong.fetch_add(1);
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(Concurrency, IntraOpParallelKernelsFromManyThreads) {
  // Big enough that tanh and the GEMM split across the thread pool.
  Tensor x = random_uniform({1 << 16}, -2, 2, DType::Float32, 9);
  Tensor a = random_uniform({192, 192}, -1, 1, DType::Float32, 10);
  const std::vector<float> want_t = tanh(x).to_vector<float>();
  const std::vector<float> want_m = matmul(a, a).to_vector<float>();
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 5; ++i) {
        if (tanh(x).to_vector<float>() != want_t) wrong.fetch_add(1);
        if (matmul(a, a).to_vector<float>() != want_m) wrong.fetch_add(1);
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}
