// The call cache: keys hold no tensors, the key map is bounded, and tracing holds no lock
// across user code (different signatures trace concurrently, the same one traces once, a
// body may clear the cache or call another Function).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "core/read_epoch.h"
#include "core/tensor_impl.h"
#include "test_util.h"

using namespace kiln;
using namespace kiln::testing;

namespace {

int refs(const Tensor& t) { return t.impl()->refs.load(); }

TEST(CallCache, KeysKeepNoArgumentAlive) {
  auto f = function([](Tensor x) { return reduce_sum(x); });
  Tensor big = zeros({1000, 1000});
  EXPECT_EQ(f(big).item<float>(), 0.0f);
  EXPECT_EQ(refs(big), 1);  // only this handle: the cache keeps a key, not the tensor
  auto g = function([](Tensor x) { return x * 2.0f; }, {.reduce_retracing = true, .max_traces = 2});
  std::vector<Tensor> args;
  for (int n = 1; n <= 50; ++n) {
    args.push_back(ones({n}));
    EXPECT_EQ(g(args.back()).shape(), TensorShape({n}));
  }
  for (const Tensor& a : args) EXPECT_EQ(refs(a), 1);
  EXPECT_LE(g.tracing_count(), 2);  // (1), then (None,)
}

// A call borrows its tensor arguments (no reference-count traffic) and keeps what it makes
// itself: many arguments (beyond the inline ones), a vector of them, TensorSpecs standing
// for some, and a function whose captured value is fed after the arguments.
TEST(CallCache, ArgumentsAreBorrowedForTheCall) {
  Tensor bias = constant(100.0f);
  auto f = function([&](std::vector<Tensor> xs, Tensor a, Tensor b) {
    Tensor s = a * b + bias;
    for (const Tensor& x : xs) s = s + x;
    return s;
  });
  std::vector<Tensor> xs;
  for (int i = 0; i < 9; ++i) xs.push_back(constant(static_cast<float>(i)));
  Tensor a = constant(2.0f), b = constant(3.0f);
  for (int round = 0; round < 2; ++round) EXPECT_EQ(f(xs, a, b).item<float>(), 100 + 6 + 36);
  for (const Tensor& x : xs) EXPECT_EQ(refs(x), 1);  // nothing kept past the call
  EXPECT_EQ(refs(a), 1);
  ConcreteFunction cf = f.get_concrete_function(xs, TensorSpec{{}, DType::Float32}, b);
  std::vector<Tensor> flat = xs;
  flat.push_back(constant(5.0f));
  flat.push_back(b);
  EXPECT_EQ(cf(flat)[0].item<float>(), 100 + 15 + 36);
}

TEST(CallCache, KeyMapIsBounded) {
  // Every shape is its own key; the map keeps at most max_cached_calls of them, and an
  // evicted key costs a lookup of the traces, not a new trace.
  auto f = function([](Tensor x) { return x + 1.0f; }, {.reduce_retracing = true, .max_cached_calls = 8});
  for (int round = 0; round < 3; ++round)
    for (int n = 1; n <= 40; ++n) EXPECT_EQ(f(ones({n})).to_vector<float>(), std::vector<float>(n, 2.0f));
  EXPECT_EQ(f.tracing_count(), 2);
}

TEST(CallCache, ValuesAndTypesAreDistinctKeys) {
  std::atomic<int> traced{0};
  auto f = function([&](Tensor x, double s, std::string tag, std::vector<int> v) {
    ++traced;
    return x * s + static_cast<float>(tag.size() + v.size());
  });
  Tensor x = constant(1.0f);
  (void)f(x, 2.0, std::string("a"), std::vector<int>{1});
  (void)f(x, 2.0, std::string("a"), std::vector<int>{1});
  EXPECT_EQ(traced.load(), 1);
  (void)f(x, 2.5, std::string("a"), std::vector<int>{1});
  (void)f(x, 2.0, std::string("ab"), std::vector<int>{1});
  (void)f(x, 2.0, std::string("a"), std::vector<int>{1, 2});
  (void)f(x, 2.0, std::string("a"), std::vector<int>{2});
  (void)f(x, 2.0, std::string("a\0b", 3), std::vector<int>{1});
  EXPECT_EQ(traced.load(), 6);
  (void)f(constant<float>({1, 2}), 2.0, std::string("a"), std::vector<int>{1});  // a new shape
  (void)f(constant(1.0), 2.0, std::string("a"), std::vector<int>{1});            // a new dtype
  EXPECT_EQ(traced.load(), 8);
  EXPECT_EQ(f.tracing_count(), 8);
}

TEST(CallCache, DifferentSignaturesTraceConcurrently) {
  // Each trace waits until the other has started: with one lock around tracing, the second
  // would never start and both would time out.
  std::mutex mu;
  std::condition_variable cv;
  int started = 0;
  std::atomic<bool> overlapped{true};
  auto f = function([&](Tensor x) {
    std::unique_lock lock(mu);
    ++started;
    cv.notify_all();
    if (!cv.wait_for(lock, std::chrono::seconds(10), [&] { return started >= 2; })) overlapped = false;
    return x + 1.0f;
  });
  std::thread a([&] { (void)f(constant(1.0f)); });
  std::thread b([&] { (void)f(constant(1.0)); });
  a.join();
  b.join();
  EXPECT_TRUE(overlapped.load());
  EXPECT_EQ(f.tracing_count(), 2);
}

TEST(CallCache, ConcurrentFirstCallsWithOneSignatureTraceOnce) {
  std::atomic<int> traced{0};
  auto f = function([&](Tensor x) {
    ++traced;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return x * 3.0f;
  });
  std::vector<std::thread> threads;
  std::atomic<int> right{0};
  for (int i = 0; i < 8; ++i) threads.emplace_back([&] { right += f(constant(2.0f)).item<float>() == 6.0f; });
  for (auto& t : threads) t.join();
  EXPECT_EQ(traced.load(), 1);
  EXPECT_EQ(right.load(), 8);
}

TEST(CallCache, ABodyMayClearTheCacheOrCallOtherFunctions) {
  auto inner = function([](Tensor x) { return x * 2.0f; });
  std::function<void()> clear;
  auto f = function([&](Tensor x) {
    clear();                 // would deadlock if tracing held the cache's lock
    return inner(x) + 1.0f;  // inlined into this trace
  });
  clear = [&] { f.clear_cache(); };
  EXPECT_EQ(f(constant(1.0f)).item<float>(), 3.0f);
  EXPECT_EQ(f(constant(2.0f)).item<float>(), 5.0f);
}

TEST(CallCache, AFailedTraceIsRetriedByTheNextCall) {
  int calls = 0;
  auto f = function([&](Tensor x) {
    if (++calls == 1) throw InvalidArgumentError("first trace fails");
    return x;
  });
  expect_error<InvalidArgumentError>([&] { f(constant(1.0f)); }, "first trace fails");
  EXPECT_EQ(f(constant(1.0f)).item<float>(), 1.0f);
}

// Cached calls read the cache without a lock: what they find stays allocated until every
// read section that could see it has ended, and no longer.
TEST(CallCache, ReadSectionsNestAndHoldBackOnlyWhatTheyCouldSee) {
  EXPECT_EQ(detail::oldest_reader_epoch(), UINT64_MAX);  // no section on any thread
  const uint64_t before = detail::retire_stamp();
  {
    detail::ReadSection outer;
    const uint64_t held = detail::oldest_reader_epoch();
    EXPECT_GT(held, before);  // entered after that stamp: what it retired may go
    {
      detail::ReadSection inner;  // nested: keeps the outer section's epoch
      (void)detail::retire_stamp();
      EXPECT_EQ(detail::oldest_reader_epoch(), held);
    }
    EXPECT_EQ(detail::oldest_reader_epoch(), held);
  }
  EXPECT_EQ(detail::oldest_reader_epoch(), UINT64_MAX);
}

TEST(CallCache, ClearingTheCacheFreesTracesAtOnce) {
  Tensor w = constant<float>({1, 2, 3});
  auto f = function([&](Tensor x) { return x * w; });  // the trace captures w
  EXPECT_EQ(f(ones({3})).to_vector<float>(), std::vector<float>({1, 2, 3}));
  EXPECT_GT(refs(w), 1);
  f.clear_cache();
  EXPECT_EQ(refs(w), 1);  // no call running: the trace is gone now
}

// A trace cleared while another thread runs it stays alive until that call returns, and is
// freed by the next change to the cache after.
TEST(CallCache, ClearingWhileAnotherThreadRunsTheTraceIsSafe) {
  Tensor w = constant(1.0f);
  auto f = function([&](Tensor n) {
    auto [i, acc] = while_loop([](Tensor i, Tensor) { return less(i, constant(200000)); },
                               [&](Tensor i, Tensor acc) {
                                 return std::pair{i + 1, acc + w};
                               },
                               std::pair{constant(0), constant(0.0f)});
    return acc + cast(n, DType::Float32);
  });
  EXPECT_EQ(f(constant(0)).item<float>(), 200000.0f);  // traced
  std::atomic<bool> started{false};
  float result = 0;
  std::thread runner([&] {
    started = true;
    result = f(constant(5)).item<float>();  // a cached call, some milliseconds long
  });
  while (!started) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  f.clear_cache();
  runner.join();
  EXPECT_EQ(result, 200005.0f);
  EXPECT_EQ(f(constant(1)).item<float>(), 200001.0f);  // traces again; the old trace is freed
  f.clear_cache();
  EXPECT_EQ(refs(w), 1);
}

// Many threads call while the cache evicts (tiny bounds) and another thread clears it:
// every result is right (ASan and TSan run this too).
TEST(CallCache, CallsRaceEvictionAndClearing) {
  auto f = function([](Tensor x) { return x * 2.0f + 1.0f; }, {.max_traces = 3, .max_cached_calls = 2});
  std::atomic<bool> stop{false};
  std::atomic<int> wrong{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 3; ++t)
    callers.emplace_back([&, t] {
      for (int k = 0; k < 60; ++k) {
        const int n = 1 + (k + t) % 5;  // five shapes: keys come and go
        const std::vector<float> got = f(ones({n})).to_vector<float>();
        if (got != std::vector<float>(n, 3.0f)) ++wrong;
      }
    });
  std::thread clearer([&] {
    while (!stop) {
      f.clear_cache();
      std::this_thread::yield();
    }
  });
  for (auto& c : callers) c.join();
  stop = true;
  clearer.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
