#include <gtest/gtest.h>
#include <kiln/kiln.h>

using namespace kiln;

TEST(Smoke, GuideMatmulEagerAndFunction) {
  auto x1 = constant<float>({1, 2}, {1, 2}), y1 = constant<float>({2, 3}, {2, 1}), b1 = constant(4.0f);
  auto f = [](Tensor x, Tensor y, Tensor b) { return matmul(x, y) + b; };
  EXPECT_EQ(f(x1, y1, b1).str(), "kiln.Tensor([[12.]], shape=(1, 1), dtype=float32)");
  auto g = function(f);
  EXPECT_EQ(g(x1, y1, b1).to_vector<float>(), std::vector<float>{12});
  EXPECT_EQ(g.tracing_count(), 1);
}
