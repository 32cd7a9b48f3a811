// Random programs (chains and DAGs of ops over random shapes and dtypes, with broadcasting)
// run eagerly and as a kiln::function: the results must agree.
#include "random_program.h"

using namespace kiln;
using namespace kiln::testing;

TEST(Differential, RandomProgramsAgreeEagerAndTraced) {
  std::mt19937 rng(20261122);
  constexpr int kPrograms = 300;
  for (int k = 0; k < kPrograms; ++k) {
    Program p = generate(rng);
    std::vector<Tensor> inputs = random_inputs(p, rng);
    const std::vector<Tensor> eager = run(p, inputs);
    auto fn = function([&p](std::vector<Tensor> xs) { return run(p, xs); });
    const std::vector<Tensor> traced = fn(inputs);
    ASSERT_EQ(eager.size(), traced.size());
    for (size_t i = 0; i < eager.size(); ++i) expect_same(eager[i], traced[i], "program " + std::to_string(k));
    // A second call reuses the trace and still agrees.
    const std::vector<Tensor> again = fn(inputs);
    for (size_t i = 0; i < eager.size(); ++i)
      expect_same(eager[i], again[i], "program " + std::to_string(k) + " again");
    EXPECT_EQ(fn.tracing_count(), 1);
    if (::testing::Test::HasFailure()) break;
  }
}

TEST(Differential, OptimizedAgreesWithUnoptimized) {
  std::mt19937 rng(7);
  for (int k = 0; k < 200; ++k) {
    Program p = generate(rng);
    std::vector<Tensor> inputs = random_inputs(p, rng);
    auto plain = function([&p](std::vector<Tensor> xs) { return run(p, xs); }, {.optimizer = OptimizerOptions::none()});
    auto optimized = function([&p](std::vector<Tensor> xs) { return run(p, xs); });
    const auto a = plain(inputs), b = optimized(inputs);
    for (size_t i = 0; i < a.size(); ++i) expect_same(a[i], b[i], "program " + std::to_string(k));
    if (::testing::Test::HasFailure()) break;
  }
}

// NaN, +-Inf, -0, denormals and the extremes: eager and traced run the same kernels, so they
// agree bit for bit (the exact-rewrite rule of the optimizer is what this checks).
TEST(Differential, SpecialValuesAgreeBitForBit) {
  std::mt19937 rng(424242);
  for (int k = 0; k < 300; ++k) {
    Program p = generate(rng);
    std::vector<Tensor> inputs = special_inputs(p, rng);
    const std::vector<Tensor> eager = run(p, inputs);
    auto fn = function([&p](std::vector<Tensor> xs) { return run(p, xs); });
    const std::vector<Tensor> traced = fn(inputs);
    ASSERT_EQ(eager.size(), traced.size());
    for (size_t i = 0; i < eager.size(); ++i) expect_identical(eager[i], traced[i], "program " + std::to_string(k));
    auto plain = function([&p](std::vector<Tensor> xs) { return run(p, xs); }, {.optimizer = OptimizerOptions::none()});
    const std::vector<Tensor> unoptimized = plain(inputs);
    for (size_t i = 0; i < eager.size(); ++i)
      expect_identical(eager[i], unoptimized[i], "program " + std::to_string(k) + " unoptimized");
    if (::testing::Test::HasFailure()) break;
  }
}

// Shapes past the intra-op thresholds and the fused kernel's chunk size (tens of thousands
// of elements): multi-chunk, multi-thread and inter-op parallel paths against eager.
TEST(Differential, LargeShapesAgree) {
  std::mt19937 rng(99);
  for (int k = 0; k < 40; ++k) {
    Program p = generate(rng, false, 20000);
    std::vector<Tensor> inputs = random_inputs(p, rng);
    const std::vector<Tensor> eager = run(p, inputs);
    auto fn = function([&p](std::vector<Tensor> xs) { return run(p, xs); });
    const std::vector<Tensor> traced = fn(inputs);
    for (size_t i = 0; i < eager.size(); ++i) expect_same(eager[i], traced[i], "large program " + std::to_string(k));
    if (::testing::Test::HasFailure()) break;
  }
}
