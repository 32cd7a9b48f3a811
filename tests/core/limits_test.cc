// Limits a server can set (kiln/limits.h): a deadline, cancellation and a memory budget stop
// a call with a typed error, and kiln keeps working afterwards.
#include <atomic>
#include <chrono>
#include <thread>

#include "test_util.h"

using namespace kiln;
using namespace kiln::testing;
using Clock = std::chrono::steady_clock;

namespace {

// A loop whose condition never turns false (as a hostile served model's could).
auto forever() {
  return function([](Tensor x) {
    auto [i, v] = while_loop([](Tensor i, Tensor) { return i >= 0; },
                             [](Tensor i, Tensor v) { return std::make_tuple(i + 1, v * 1.0f); },
                             std::make_tuple(constant(0), x));
    return v;
  });
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

TEST(RunLimits, ALoopThatNeverEndsStopsAtItsDeadline) {
  auto f = forever();
  const auto start = Clock::now();
  {
    RunLimitsScope limits({.timeout = std::chrono::milliseconds(100)});
    expect_error<DeadlineExceededError>([&] { f(constant(1.0f)); }, "deadline");
  }
  EXPECT_LT(seconds_since(start), 2.0);
  // Outside the scope, calls run as before.
  auto g = function([](Tensor x) { return x + 1.0f; });
  EXPECT_EQ(g(constant(1.0f)).item<float>(), 2.0f);
}

TEST(RunLimits, AnotherThreadCancelsACall) {
  auto f = forever();
  CancellationToken stop;
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    stop.cancel();
  });
  const auto start = Clock::now();
  {
    RunLimitsScope limits({.cancellation = stop});
    expect_error<CancelledError>([&] { f(constant(1.0f)); }, "cancelled");
  }
  canceller.join();
  EXPECT_LT(seconds_since(start), 2.0);
}

TEST(RunLimits, AMemoryBudgetRefusesABigTensorAndTheProcessLives) {
  // 2^26 floats (256 MiB) under a 64 MiB budget: refused before any of it is touched.
  auto f = function([](Tensor x) { return tile(x, {1 << 18}); });
  const Tensor x = zeros({256});
  {
    RunLimitsScope limits({.memory_limit_bytes = 64 << 20});
    expect_error<ResourceExhaustedError>([&] { f(x); }, "memory budget");
    // Within the budget, the same scope serves.
    auto small = function([](Tensor x) { return tile(x, {16}); });
    EXPECT_EQ(small(x).num_elements(), 256 * 16);
  }
  EXPECT_EQ(f(x).num_elements(), int64_t{256} << 18);  // no budget: served
}

TEST(RunLimits, TensorsCountAgainstASharedBudgetUntilFreed) {
  MemoryBudget budget(1 << 20);
  Tensor kept;
  {
    RunLimitsScope limits({.shared_memory = budget});
    kept = zeros({100'000});  // 400 KB
    EXPECT_GE(budget.used_bytes(), 400'000);
    Tensor second = zeros({100'000});
    expect_error<ResourceExhaustedError>([&] { (void)zeros({100'000}); }, "memory budget");
  }
  EXPECT_GE(budget.used_bytes(), 400'000);  // `kept` outlives the scope and still counts
  kept = Tensor();
  EXPECT_EQ(budget.used_bytes(), 0);
}

TEST(RunLimits, ScopesNestAndTheInnerDeadlineWins) {
  auto f = forever();
  RunLimitsScope outer({.timeout = std::chrono::seconds(60)});
  const auto start = Clock::now();
  {
    RunLimitsScope inner({.timeout = std::chrono::milliseconds(50)});
    expect_error<DeadlineExceededError>([&] { f(constant(1.0f)); }, "deadline");
  }
  EXPECT_LT(seconds_since(start), 2.0);
}

TEST(RunLimits, ALoadedModelKeepsItsCallsWithinItsLimits) {
  const std::string dir = temp_path("limits_model");
  auto spin = forever();
  save(dir, spin.get_concrete_function(TensorSpec{.shape = TensorShape({}), .dtype = DType::Float32}));
  const LoadedModel served = load(dir, {.call_timeout = std::chrono::milliseconds(100)});
  const auto start = Clock::now();
  expect_error<DeadlineExceededError>([&] { served.call("serving_default", {constant(1.0f)}); }, "deadline");
  EXPECT_LT(seconds_since(start), 2.0);

  auto big = function([](Tensor x) { return tile(x, {1 << 20}); });
  const std::string big_dir = temp_path("limits_big_model");
  save(big_dir, big.get_concrete_function(TensorSpec{.shape = TensorShape({256}), .dtype = DType::Float32}));
  const LoadedModel budgeted = load(big_dir, {.memory_limit_bytes = 32 << 20});
  expect_error<ResourceExhaustedError>([&] { budgeted.call("serving_default", {zeros({256})}); }, "memory budget");
  std::filesystem::remove_all(dir);
  std::filesystem::remove_all(big_dir);
}
