// hoist_concat_products: a loop's matmul(concat([x, h], 1), w) with x and w unchanged by the
// loop multiplies x's share once before the loop. The rewritten loop agrees with the
// unoptimized one (to rounding: the product is summed in two parts), in a function with one
// such loop and in one with two.
#include <string>

#include "test_util.h"

using namespace kiln;
using namespace kiln::testing;

namespace {

constexpr int64_t kBatch = 3, kInputs = 4, kUnits = 6;

Tensor cell_loop(const Tensor& x, const Tensor& w, int steps) {
  auto [i, x_out, h] = while_loop([steps](Tensor i, Tensor, Tensor) { return i < steps; },
                                  [&w](Tensor i, Tensor x, Tensor h) {
                                    return std::make_tuple(i + 1, x, tanh(matmul(concat({x, h}, 1), w)));
                                  },
                                  std::make_tuple(constant(0), x, zeros({kBatch, kUnits}, DType::Float32)));
  (void)i, (void)x_out;
  return h;
}

bool reports(const ConcreteFunction& cf, const std::string& pass) {
  for (const auto& line : cf.optimization_report())
    if (line.find(pass) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST(HoistConcatProducts, AgreesWithTheLoopAsWritten) {
  const Tensor w = random_uniform({kInputs + kUnits, kUnits}, -0.5, 0.5, DType::Float32, 1);
  const Tensor x = random_uniform({kBatch, kInputs}, -1, 1, DType::Float32, 2);
  auto body = [&w](Tensor x) { return cell_loop(x, w, 25); };
  auto on = function(body);
  auto off = function(body, {.optimizer = OptimizerOptions::none()});
  auto cf = on.get_concrete_function(x);
  EXPECT_TRUE(reports(cf, "hoist_concat_products"));
  const auto got = cf(x)[0].to_vector<float>(), want = off(x).to_vector<float>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << i;
}

TEST(HoistConcatProducts, TwoLoopsEachHoistTheirShare) {
  // The same cell over two inputs: each loop gets its own hoisted share.
  const Tensor w = random_uniform({kInputs + kUnits, kUnits}, -0.5, 0.5, DType::Float32, 3);
  const Tensor a = random_uniform({kBatch, kInputs}, -1, 1, DType::Float32, 4);
  const Tensor b = random_uniform({kBatch, kInputs}, -1, 1, DType::Float32, 5);
  auto body = [&w](Tensor a, Tensor b) { return cell_loop(a, w, 9) - cell_loop(b, w, 9); };
  auto on = function(body);
  auto off = function(body, {.optimizer = OptimizerOptions::none()});
  EXPECT_TRUE(reports(on.get_concrete_function(a, b), "hoist_concat_products"));
  const auto got = on(a, b).to_vector<float>(), want = off(a, b).to_vector<float>();
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << i;
}
