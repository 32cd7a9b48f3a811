// kiln::distribute under `mpirun -np 2` (ctest: distribute_two_ranks): each collective for
// every dtype, eagerly and traced, the ranks disagreeing, bad arguments, the gradient through
// an allreduce, tensor fusion's call count, and data-parallel training against one process.
// Every rank runs every test in the same order, so the collectives stay matched.
#include <kiln/distribute.h>

#include "test_util.h"

using namespace kiln;
using namespace kiln::testing;
namespace dist = kiln::distribute;

namespace {

template <class T>
Tensor ranked(std::vector<T> base) {  // base * (rank + 1)
  for (T& v : base) v = static_cast<T>(v * (dist::rank() + 1));
  return constant<T>(base, {static_cast<int64_t>(base.size())});
}

}  // namespace

TEST(Distribute, RankAndSize) {
  ASSERT_TRUE(dist::available());
  ASSERT_TRUE(dist::is_initialized());
  EXPECT_EQ(dist::size(), 2);
  EXPECT_TRUE(dist::rank() == 0 || dist::rank() == 1);
  EXPECT_EQ(dist::local_size(), 2);
  EXPECT_EQ(dist::local_rank(), dist::rank());
}

TEST(Distribute, AllreduceEveryDtypeAndReduction) {
  // Ranks bring base and 2 * base.
  expect_tensor<int32_t>(dist::allreduce(ranked<int32_t>({1, -2, 3}), dist::ReduceOp::kSum), {3, -6, 9}, {3});
  expect_tensor<int64_t>(dist::allreduce(ranked<int64_t>({1, -2, 3}), dist::ReduceOp::kMin), {1, -4, 3}, {3});
  expect_tensor<float>(dist::allreduce(ranked<float>({1, -2, 3}), dist::ReduceOp::kMax), {2, -2, 6}, {3});
  expect_tensor<double>(dist::allreduce(ranked<double>({1, -2, 3})), {1.5, -3, 4.5}, {3});
  // The average of integers divides as TensorFlow's `/` does: float64.
  expect_tensor<double>(dist::allreduce(ranked<int32_t>({1, 2})), {1.5, 3}, {2});
  // Scalars and empty tensors.
  EXPECT_EQ(dist::allreduce(constant(1.0f), dist::ReduceOp::kSum).item<float>(), 2.0f);
  EXPECT_EQ(dist::allreduce(zeros({0, 3}), dist::ReduceOp::kSum).shape(), TensorShape({0, 3}));
}

TEST(Distribute, TracedCollectivesMatchEager) {
  auto f = function([](Tensor x) {
    return std::make_tuple(dist::allreduce(x * 2.0f), dist::allgather(x), dist::broadcast(x + 1.0f, 1));
  });
  const Tensor x = ranked<float>({1, 2, 3, 4});
  const auto [a, g, b] = f(x);
  expect_tensor<float>(a, {3, 6, 9, 12}, {4});
  expect_tensor<float>(g, {1, 2, 3, 4, 2, 4, 6, 8}, {8});
  expect_tensor<float>(b, {3, 5, 7, 9}, {4});
  // A second call runs the same graph: the collectives run again, in the same order.
  const auto [a2, g2, b2] = f(x * 2.0f);
  expect_tensor<float>(a2, {6, 12, 18, 24}, {4});
  EXPECT_EQ(g2.shape(), TensorShape({8}));
  expect_tensor<float>(b2, {5, 9, 13, 17}, {4});
}

TEST(Distribute, AllgatherTakesDifferentFirstDimensions) {
  // Rank r brings r + 1 rows of [r, 10 r].
  const int r = dist::rank();
  std::vector<int64_t> rows;
  for (int i = 0; i <= r; ++i) rows.insert(rows.end(), {r, 10 * r});
  expect_tensor<int64_t>(dist::allgather(constant<int64_t>(rows, {r + 1, 2})), {0, 0, 1, 10, 1, 10}, {3, 2});
  expect_tensor<bool>(dist::allgather(constant<bool>({r == 0}, {1})), {true, false}, {2});
}

TEST(Distribute, BroadcastAndBroadcastVariables) {
  expect_tensor<int32_t>(dist::broadcast(ranked<int32_t>({1, 2}), 1), {2, 4}, {2});
  Variable w(ranked<float>({1, 2, 3}), "w");
  dist::broadcast_variables({&w}, 0);
  expect_tensor<float>(w.read(), {1, 2, 3}, {3});
}

TEST(Distribute, RanksThatDisagreeFailOnEveryRank) {
  const int r = dist::rank();
  // Different lengths: every rank raises, naming both ranks' shapes.
  expect_error<InvalidArgumentError>([&] { dist::allreduce(zeros({2 + r})); },
                                     "the ranks disagree in allreduce (every rank must pass the same dtype, shape");
  expect_error<InvalidArgumentError>([&] { dist::allreduce(r == 0 ? zeros({2}) : zeros({2}, DType::Float64)); },
                                     "rank 1: float64 (2,)");
  expect_error<InvalidArgumentError>([&] { dist::broadcast(zeros({2}), r); }, "the ranks disagree in broadcast");
  expect_error<InvalidArgumentError>([&] { dist::allgather(zeros({2, 1 + r})); }, "after the first dimension");
  // Arguments every rank gets wrong alike.
  expect_error<InvalidArgumentError>([&] { dist::broadcast(zeros({2}), 5); }, "root_rank 5 is not a rank");
  expect_error<InvalidArgumentError>([&] { dist::allgather(constant(1.0f)); }, "rank >= 1, got a scalar");
  expect_error<InvalidArgumentError>([&] { dist::allreduce(constant<bool>({true}, {1})); }, "bool");
  // After all that, the ranks are still in step.
  expect_tensor<float>(dist::allreduce(ranked<float>({1}), dist::ReduceOp::kSum), {3}, {1});
}

TEST(Distribute, GradientThroughAllreduce) {
  const Tensor x = ranked<float>({1, 2});
  GradientTape tape;
  tape.watch(x);
  const Tensor loss = reduce_sum(dist::allreduce(x, dist::ReduceOp::kSum) * 3.0f);
  // Each rank's loss is the same sum; its gradient gathers both ranks' upstream gradients.
  expect_tensor<float>(tape.gradient(loss, std::vector<Tensor>{x})[0], {6, 6}, {2});
}

TEST(Distribute, FusionMakesOneCallPerBucket) {
  std::vector<Tensor> grads = {ranked<float>({1, 2}), ranked<float>({3}), ranked<double>({4}), ranked<float>({5, 6}),
                               ranked<double>({7, 8})};
  const int64_t before = dist::collective_calls();
  const std::vector<Tensor> fused = dist::grouped_allreduce(grads, dist::ReduceOp::kSum);
  // Two buckets (float32, float64), each an agreement and one reduction.
  EXPECT_EQ(dist::collective_calls() - before, 4);
  for (size_t i = 0; i < grads.size(); ++i) {
    EXPECT_EQ(fused[i].shape(), grads[i].shape());
    EXPECT_EQ(fused[i].dtype(), grads[i].dtype());
  }
  expect_tensor<float>(fused[3], {15, 18}, {2});
  expect_tensor<double>(fused[4], {21, 24}, {2});
  // A small fusion buffer splits them: one call pair per tensor.
  const int64_t mid = dist::collective_calls();
  dist::grouped_allreduce(grads, dist::ReduceOp::kAverage, 4);
  EXPECT_EQ(dist::collective_calls() - mid, 10);
}

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  dist::init();
  const int failed = RUN_ALL_TESTS();
  dist::shutdown();
  return failed;
}
