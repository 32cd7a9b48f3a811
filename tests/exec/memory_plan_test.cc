// The static memory plan: dead intermediates' arena blocks are reused, results are not in the
// frame, and concurrent calls get separate frames.
#include <algorithm>
#include <thread>

#include "core/parallel.h"
#include "test_util.h"
#include "trace/concrete.h"

using namespace kiln;
using namespace kiln::testing;

TEST(MemoryPlan, DeadIntermediatesShareArenaBlocks) {
  auto f = function(
      [](Tensor x) {
        for (int i = 0; i < 100; ++i) x = tanh(x) + 1.0f;
        return x;
      },
      {.optimizer = OptimizerOptions::none()});
  ConcreteFunction cf = f.get_concrete_function(TensorSpec{{1000}, DType::Float32});
  const size_t arena = cf.impl()->plan->arena_bytes();
  EXPECT_GT(arena, 0u);
  EXPECT_LE(arena, 3u * 4096u) << "200 intermediates of 4000 bytes should reuse a few blocks";
  // Values that reuse a block with the same dtype and shape reuse its tensor header too.
  EXPECT_LE(cf.impl()->plan->frame_headers(), 3u);
  // And the numbers are right.
  Tensor x = random_uniform({1000}, -1, 1, DType::Float32, 4);
  Tensor want = x;
  for (int i = 0; i < 100; ++i) want = tanh(want) + 1.0f;
  EXPECT_EQ(cf(x)[0].to_vector<float>(), want.to_vector<float>());
}

TEST(MemoryPlan, ResultsOutliveTheFrame) {
  auto f = function([](Tensor x) { return std::make_tuple(x * 2.0f, (x * 2.0f) + 1.0f); });
  auto [a1, b1] = f(constant<float>({1, 2}));
  auto [a2, b2] = f(constant<float>({5, 6}));  // reuses the frame
  EXPECT_EQ(a1.to_vector<float>(), (std::vector<float>{2, 4}));
  EXPECT_EQ(b1.to_vector<float>(), (std::vector<float>{3, 5}));
  EXPECT_EQ(a2.to_vector<float>(), (std::vector<float>{10, 12}));
}

TEST(MemoryPlan, AssignedValuesAreNotFrameMemory) {
  Variable v(zeros({3}));
  auto f = function([&](Tensor x) { v.assign(x * 2.0f + 1.0f); });
  f(constant<float>({1, 2, 3}));
  Tensor kept = v.read();
  f(constant<float>({7, 7, 7}));  // would overwrite the frame if the variable aliased it
  EXPECT_EQ(kept.to_vector<float>(), (std::vector<float>{3, 5, 7}));
  EXPECT_EQ(v.read().to_vector<float>(), (std::vector<float>{15, 15, 15}));
}

TEST(MemoryPlan, ConcurrentCallsUseSeparateFrames) {
  auto f = function([](Tensor x) { return reduce_sum(tanh(x * 3.0f) * x, {0}); });
  ConcreteFunction cf = f.get_concrete_function(TensorSpec{{256, 4}, DType::Float32});
  std::vector<Tensor> xs;
  std::vector<std::vector<float>> want;
  for (int t = 0; t < 8; ++t) {
    xs.push_back(random_uniform({256, 4}, -1, 1, DType::Float32, 100 + t));
    want.push_back(cf(xs.back())[0].to_vector<float>());
  }
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i)
        if (cf(xs[t])[0].to_vector<float>() != want[t]) wrong.fetch_add(1);
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

namespace {
// Two independent chains of six 192x192 MatMul + Tanh, joined: a plan that runs side by side.
Tensor two_branches(Tensor a, Tensor b, Tensor w) {
  for (int i = 0; i < 6; ++i) {
    a = tanh(matmul(a, w));
    b = tanh(matmul(b, w));
  }
  return a + b;
}
std::vector<Tensor> two_branch_inputs() {
  return {random_uniform({192, 192}, -0.1, 0.1, DType::Float32, 1),
          random_uniform({192, 192}, -0.1, 0.1, DType::Float32, 2),
          random_uniform({192, 192}, -0.1, 0.1, DType::Float32, 3)};
}
}  // namespace

TEST(InterOpParallel, IndependentHeavyBranchesRunConcurrentlyAndAgree) {
  auto body = [](Tensor a, Tensor b, Tensor w) { return two_branches(a, b, w); };
  auto f = function(body);
  const std::vector<Tensor> in = two_branch_inputs();
  const Tensor &a = in[0], &b = in[1], &w = in[2];
  ConcreteFunction cf = f.get_concrete_function(a, b, w);
  EXPECT_TRUE(cf.impl()->plan->runs_in_parallel());
  const auto want = body(a, b, w).to_vector<float>();
  for (int i = 0; i < 5; ++i) EXPECT_EQ(f(a, b, w).to_vector<float>(), want);
  // Small graphs stay on the calling thread.
  auto small = function([](Tensor x) { return x + 1; });
  EXPECT_FALSE(small.get_concrete_function(constant(1)).impl()->plan->runs_in_parallel());
  // Errors inside a parallel run surface with the node name.
  auto failing = function([&](Tensor i) {
    Tensor x = matmul(a, w), y = matmul(b, w);
    return std::make_tuple(x + y, gather(a, i));
  });
  EXPECT_TRUE(failing.get_concrete_function(constant<int32_t>({0})).impl()->plan->runs_in_parallel());
  kiln::testing::expect_error<InvalidArgumentError>([&] { (void)failing(constant<int32_t>({500})); },
                                                    "indices[0] = 500 is not in [0, 192)");
}

// tf.config.threading's inter-op setting: 1 runs a parallel plan's steps one at a time (each
// with the intra-op threads), 0 and n > 1 side by side; the results are the same bits.
TEST(InterOpParallel, TheInterOpSettingTurnsSideBySideRunsOff) {
  if (kiln::default_intra_op_threads() < 2) GTEST_SKIP() << "one CPU: nothing runs side by side";
  auto body = [](Tensor a, Tensor b, Tensor w) { return two_branches(a, b, w); };
  auto f = function(body);
  const std::vector<Tensor> in = two_branch_inputs();
  const Tensor &a = in[0], &b = in[1], &w = in[2];
  ConcreteFunction cf = f.get_concrete_function(a, b, w);
  const auto& plan = *cf.impl()->plan;
  ASSERT_TRUE(plan.runs_in_parallel());
  const auto want = body(a, b, w).to_vector<float>();
  EXPECT_EQ(kiln::config::get_inter_op_parallelism_threads(), 0);
  EXPECT_TRUE(plan.will_run_in_parallel());
  for (int n : {1, 2, -3, 0}) {
    kiln::config::set_inter_op_parallelism_threads(n);
    EXPECT_EQ(kiln::config::get_inter_op_parallelism_threads(), n);
    EXPECT_EQ(plan.will_run_in_parallel(), n != 1) << n;
    EXPECT_EQ(f(a, b, w).to_vector<float>(), want) << n;
  }
  // One intra-op thread runs nothing side by side either.
  kiln::config::set_intra_op_parallelism_threads(1);
  EXPECT_FALSE(plan.will_run_in_parallel());
  kiln::config::set_intra_op_parallelism_threads(0);
}

TEST(InterOpParallel, AStemAndAJoinRunAloneWithTheIntraOpThreads) {
  // One chain in, two branches, one join: the chain's and the join's steps have nothing
  // beside them, the branches' steps do.
  auto body = [](Tensor x, Tensor w) {
    Tensor stem = tanh(matmul(x, w));
    Tensor a = stem, b = stem;
    for (int i = 0; i < 6; ++i) {
      a = tanh(matmul(a, w));
      b = sigmoid(matmul(b, w));
    }
    return a + b;
  };
  auto f = function(body, {.optimizer = OptimizerOptions::none()});
  Tensor x = random_uniform({192, 192}, -0.1, 0.1, DType::Float32, 1);
  Tensor w = random_uniform({192, 192}, -0.1, 0.1, DType::Float32, 3);
  ConcreteFunction cf = f.get_concrete_function(x, w);
  const auto& plan = *cf.impl()->plan;
  ASSERT_TRUE(plan.runs_in_parallel());
  const std::vector<char>& alone = plan.alone_steps();
  ASSERT_EQ(alone.size(), 2u + 4u * 6u + 1u);
  EXPECT_TRUE(alone[0]);      // the stem's MatMul
  EXPECT_TRUE(alone[1]);      // and its Tanh
  EXPECT_TRUE(alone.back());  // the join
  EXPECT_EQ(std::count(alone.begin(), alone.end(), char{1}), 3);
  const auto want = body(x, w).to_vector<float>();
  for (int threads : {2, 1, 0}) {  // 0: the default again
    kiln::config::set_intra_op_parallelism_threads(threads);
    EXPECT_EQ(f(x, w).to_vector<float>(), want);
  }
}

TEST(InterOpParallel, BranchesOfLargeConvolutionsSplitEachStepInstead) {
  // Each convolution is ~5e8 multiply-adds, which its kernel splits over the threads better
  // than two single-threaded branches side by side (measured on InceptionV3): no inter-op
  // run. (Costed by the elements they read, as before convolutions had a cost, the graph
  // looked like 10M elements of work in two equal branches, and ran side by side.)
  auto body = [](Tensor x, Tensor w) {
    Tensor a = x, b = x;
    for (int i = 0; i < 3; ++i) {
      a = relu(conv2d(a, w, {1, 1, 1, 1}, "SAME"));
      b = tanh(conv2d(b, w, {1, 1, 1, 1}, "SAME"));
    }
    return a + b;
  };
  auto f = function(body);
  Tensor x = random_uniform({1, 112, 112, 64}, -0.1, 0.1, DType::Float32, 1);
  Tensor w = random_uniform({3, 3, 64, 64}, -0.1, 0.1, DType::Float32, 2);
  EXPECT_FALSE(f.get_concrete_function(x, w).impl()->plan->runs_in_parallel());
  // The same graph with an unknown batch (a loaded signature's): still costed, still serial.
  EXPECT_FALSE(
      f.get_concrete_function(TensorSpec{{-1, 112, 112, 64}, DType::Float32}, w).impl()->plan->runs_in_parallel());
}

TEST(InterOpParallel, AFedBatchLargeEnoughToSplitEachStepRunsThemOneAtATime) {
  // Planned with an unknown batch (counted as 1), each 192x192 product looks small: the plan
  // runs the branches side by side. Fed a batch of 8, each product is ~6e7 multiply-adds,
  // which its kernel splits over the threads better: from its first run at that size on
  // (which measures), the plan runs the steps one at a time. A batch of 1 stays side by side.
  if (kiln::default_intra_op_threads() < 2) GTEST_SKIP() << "one CPU: nothing runs side by side";
  auto body = [](Tensor a, Tensor b, Tensor w) { return two_branches(a, b, w); };
  auto f = function(body);
  const TensorSpec batch{{-1, 192, 192}, DType::Float32};
  Tensor w = random_uniform({192, 192}, -0.1, 0.1, DType::Float32, 3);
  ConcreteFunction cf = f.get_concrete_function(batch, batch, w);
  const auto& plan = *cf.impl()->plan;
  ASSERT_TRUE(plan.runs_in_parallel());
  for (int64_t n : {1, 8}) {
    Tensor a = random_uniform({n, 192, 192}, -0.1, 0.1, DType::Float32, 1);
    Tensor b = random_uniform({n, 192, 192}, -0.1, 0.1, DType::Float32, 2);
    EXPECT_FALSE(plan.will_run_in_parallel({a, b, w})) << n;  // not measured yet: the next run measures
    const auto want = body(a, b, w).to_vector<float>();
    for (int i = 0; i < 3; ++i) EXPECT_EQ(cf(a, b, w)[0].to_vector<float>(), want) << n;
    EXPECT_EQ(plan.will_run_in_parallel({a, b, w}), n == 1) << n;
  }
}
