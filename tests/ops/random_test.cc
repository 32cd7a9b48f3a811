// Random ops: seeded calls repeat, unseeded calls differ, ranges hold; a stateful op's
// seeded stream advances on every call until reset_random_streams().
#include <cmath>

#include "kiln/op_registry.h"
#include "test_util.h"

using namespace kiln;
using namespace kiln::testing;

TEST(Random, SeededCallsRepeat) {
  EXPECT_EQ(random_uniform({5}, 0, 1, DType::Float32, 7).to_vector<float>(),
            random_uniform({5}, 0, 1, DType::Float32, 7).to_vector<float>());
  EXPECT_NE(random_uniform({5}, 0, 1, DType::Float32, 7).to_vector<float>(),
            random_uniform({5}, 0, 1, DType::Float32, 8).to_vector<float>());
  EXPECT_EQ(random_normal({4}, 0, 1, DType::Float64, 3).to_vector<double>(),
            random_normal({4}, 0, 1, DType::Float64, 3).to_vector<double>());
}

TEST(Random, UnseededCallsDiffer) {
  EXPECT_NE(random_uniform({8}, 0, 1).to_vector<float>(), random_uniform({8}, 0, 1).to_vector<float>());
  EXPECT_NE(random_normal({8}).to_vector<float>(), random_normal({8}).to_vector<float>());
}

TEST(Random, RangesAndMoments) {
  auto u = random_uniform({10000}, -1, 2, DType::Float64, 1).to_vector<double>();
  double sum = 0;
  for (double v : u) {
    EXPECT_GE(v, -1);
    EXPECT_LT(v, 2);
    sum += v;
  }
  EXPECT_NEAR(sum / u.size(), 0.5, 0.05);
  auto n = random_normal({10000}, 3, 2, DType::Float32, 2).to_vector<float>();
  double m = 0, s2 = 0;
  for (float v : n) m += v;
  m /= n.size();
  for (float v : n) s2 += (v - m) * (v - m);
  EXPECT_NEAR(m, 3, 0.1);
  EXPECT_NEAR(std::sqrt(s2 / n.size()), 2, 0.1);
  auto ints = random_uniform({1000}, -1, 2, DType::Int32, 5).to_vector<int32_t>();
  for (int32_t v : ints) {
    EXPECT_GE(v, -1);
    EXPECT_LT(v, 2);
  }
  EXPECT_EQ(random_uniform_int({3}, 0, 10, DType::Int64).dtype(), DType::Int64);
}

TEST(Random, BadInputs) {
  expect_error<InvalidArgumentError>([] { random_uniform_int({3}, 5, 5); }, "Need minval < maxval");
  expect_error<InvalidArgumentError>([] { random_uniform({-1}, 0, 1); }, ">= 0");
  expect_error<InvalidArgumentError>([] { random_normal({2}, 0, 1, DType::Int32); }, "float32 or float64");
  expect_error<InvalidArgumentError>([] { random_uniform({2}, 1, 0); }, "minval < maxval");
}

TEST(Random, SeededStatefulOpsAdvanceUntilReset) {
  const auto draw = [] {
    return execute_op("RandomUniform", {constant(std::vector<int32_t>{6}, {1})},
                      {{"dtype", DType::Float64}, {"seed", int64_t{4}}, {"seed2", int64_t{9}}})[0]
        .to_vector<double>();
  };
  reset_random_streams();
  const auto first = draw(), second = draw();
  EXPECT_NE(first, second);
  reset_random_streams();
  EXPECT_EQ(draw(), first);
  EXPECT_EQ(draw(), second);
}

TEST(Random, StatelessOpsRepeatAndCheckTheirSeeds) {
  const auto draw = [](std::vector<int64_t> seed) {
    return execute_op("StatelessRandomNormal",
                      {constant(std::vector<int32_t>{5}, {1}), constant(seed, {static_cast<int64_t>(seed.size())})})[0];
  };
  EXPECT_EQ(draw({1, 2}).to_vector<float>(), draw({1, 2}).to_vector<float>());
  EXPECT_NE(draw({1, 2}).to_vector<float>(), draw({2, 1}).to_vector<float>());
  expect_error<InvalidArgumentError>([&] { draw({1, 2, 3}); }, "seed must have shape [2], not [3]");
}
