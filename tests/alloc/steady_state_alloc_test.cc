// A steady-state call of a static-shape function allocates nothing but what it returns.
// This binary replaces the global operator new to count heap allocations.
#include <gtest/gtest.h>
#include <kiln/kiln.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "core/buffer.h"

namespace {
std::atomic<long> g_news{0};
}  // namespace

void* operator new(std::size_t n) {
  g_news.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
// GCC cannot see that the replaced operator new above got this memory from malloc.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

using namespace kiln;

TEST(SteadyState, ConcreteFunctionCallAllocatesOnlyItsResult) {
  Variable w(random_uniform({8, 16}, -1, 1, DType::Float32, 1));
  auto f = function([&](Tensor x) { return tanh(matmul(x, w.read()) + 1.0f) * 2.0f; });
  Tensor x = random_uniform({64, 8}, -1, 1, DType::Float32, 2);
  ConcreteFunction cf = f.get_concrete_function(x);
  const std::vector<Tensor> inputs{x};
  for (int i = 0; i < 5; ++i) (void)cf(inputs);  // warm the buffer pool
  const long news_before = g_news.load();
  const auto buffers_before = buffer_stats().system_allocations;
  constexpr int kCalls = 100;
  for (int i = 0; i < kCalls; ++i) {
    std::vector<Tensor> out = cf(inputs);
    ASSERT_EQ(out.size(), 1u);
  }
  const long news = g_news.load() - news_before;
  EXPECT_EQ(buffer_stats().system_allocations - buffers_before, 0);  // every buffer from the pool
  EXPECT_LE(news, kCalls * 1) << "heap allocations per call: " << static_cast<double>(news) / kCalls
                              << " (only the returned std::vector is allowed)";
}

// A cached kiln::Function call builds its key on the stack and looks it up without
// allocating: what is left is the vector of tensor arguments and the returned vector, as
// for a ConcreteFunction call.
TEST(SteadyState, CachedFunctionCallAllocatesLikeAConcreteFunctionCall) {
  auto f = function([](Tensor x, Tensor y, int scale) { return (x + y) * static_cast<float>(scale); });
  Tensor x = random_uniform({4, 4}, -1, 1, DType::Float32, 1), y = random_uniform({4, 4}, -1, 1, DType::Float32, 2);
  for (int i = 0; i < 5; ++i) (void)f(x, y, 3);  // trace, warm the pools
  constexpr int kCalls = 100;
  const long before = g_news.load();
  for (int i = 0; i < kCalls; ++i) (void)f(x, y, 3);
  const long news = g_news.load() - before;
  EXPECT_LE(news, kCalls * 2) << "heap allocations per cached call: " << static_cast<double>(news) / kCalls;
  ConcreteFunction cf = f.get_concrete_function(x, y, 3);
  const long before_cf = g_news.load();
  for (int i = 0; i < kCalls; ++i) (void)cf(x, y);
  std::printf("heap allocations per call: Function %.2f, ConcreteFunction %.2f\n", static_cast<double>(news) / kCalls,
              static_cast<double>(g_news.load() - before_cf) / kCalls);
}

// A tensor's shape is a value with its dims inline: asking for it does not allocate.
TEST(SteadyState, AskingATensorForItsShapeDoesNotAllocate) {
  Tensor x = random_uniform({2, 3, 4}, -1, 1, DType::Float32, 1);
  const long before = g_news.load();
  int64_t sum = 0;
  for (int i = 0; i < 100; ++i) sum += x.shape().dims()[2] + x.shape().rank();
  EXPECT_EQ(g_news.load() - before, 0);
  EXPECT_EQ(sum, 700);
}
