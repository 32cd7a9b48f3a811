// A weight gradient's product fused with its variable's update (fuse_weight_update ->
// KilnMatMulUpdate): a traced training step updates its variables bit for bit as the same
// step run eagerly. (The short-inner kernel's own test is in tests/ops/matmul_test.cc.)
#include <map>

#include "kernels/gemm_short.h"
#include "test_util.h"

using namespace kiln;
using namespace kiln::testing;

namespace {

std::map<std::string, int> op_counts(const GraphView& g) {
  std::map<std::string, int> m;
  for (const auto& op : g.operations) ++m[op.type];
  return m;
}

bool fused_kernel_here() { return kernels::short_inner_tn(true, false, 64, 64, 8); }

// Two dense layers trained three steps: eagerly, and as a traced step whose optimizer fuses
// each weight's update into its gradient's product. Every variable ends bit for bit equal.
struct Net {
  Variable w1, w2;
  explicit Net(uint64_t seed)
      : w1(random_uniform({96, 80}, -0.2, 0.2, DType::Float32, seed)),
        w2(random_uniform({80, 70}, -0.2, 0.2, DType::Float32, seed + 1)) {}
};

enum class Update { kSgd, kMomentum, kNesterov, kAssignSub };

void train(Net& net, SGD* opt, Update how, const Tensor& x, const Tensor& y) {
  GradientTape tape;
  Tensor h = tanh(matmul(x, net.w1.read()));
  Tensor loss = reduce_mean(square(matmul(h, net.w2.read()) - y));
  std::vector<Tensor> g = tape.gradient(loss, {&net.w1, &net.w2});
  if (how == Update::kAssignSub) {
    net.w1.assign_sub(constant(0.03f) * g[0]);
    net.w2.assign_sub(g[1] * constant(0.03f));
  } else {
    opt->apply_gradients(g, {&net.w1, &net.w2});
  }
}

TEST(WeightUpdateFusion, TracedStepsEqualEagerStepsBitForBit) {
  const Tensor x = random_normal({64, 96}, 0, 1, DType::Float32, 7);
  const Tensor y = random_normal({64, 70}, 0, 1, DType::Float32, 8);
  for (Update how : {Update::kSgd, Update::kMomentum, Update::kNesterov, Update::kAssignSub}) {
    const double momentum = how == Update::kMomentum || how == Update::kNesterov ? 0.9 : 0.0;
    Net eager(11), traced(11);
    SGD eager_opt(0.05, momentum, how == Update::kNesterov), traced_opt(0.05, momentum, how == Update::kNesterov);
    auto step = function([&](Tensor xs, Tensor ys) {
      train(traced, &traced_opt, how, xs, ys);
      return constant(0);
    });
    for (int i = 0; i < 3; ++i) {
      train(eager, &eager_opt, how, x, y);
      (void)step(x, y);
    }
    const int kind = static_cast<int>(how);
    EXPECT_EQ(traced.w1.read().to_vector<float>(), eager.w1.read().to_vector<float>()) << kind;
    EXPECT_EQ(traced.w2.read().to_vector<float>(), eager.w2.read().to_vector<float>()) << kind;
    const ConcreteFunction cf = step.get_concrete_function(x, y);
    auto counts = op_counts(cf.optimized_graph());
    EXPECT_FALSE(cf.optimized_graph_def().serialized().empty());  // the fused node prints and serializes
    EXPECT_EQ(counts["KilnMatMulUpdate"], fused_kernel_here() ? 2 : 0) << kind;
    if (fused_kernel_here()) {
      EXPECT_EQ(
          counts["ResourceApplyGradientDescent"] + counts["ResourceApplyKerasMomentum"] + counts["AssignSubVariableOp"],
          0)
          << kind;
    }
  }
}

// What stays unfused: a gradient also returned, a long inner dimension, a product without
// transpose_a, and everything when contraction fusion is off.
TEST(WeightUpdateFusion, OnlyAGradientUsedByItsUpdateAloneFuses) {
  if (!fused_kernel_here()) GTEST_SKIP() << "no AVX-512 in this build";
  Variable w(zeros({96, 80}));
  auto count = [&](auto body, const Tensor& x, const Tensor& dy, FunctionOptions o = {}) {
    auto f = function(body, o);
    return op_counts(f.get_concrete_function(x, dy).optimized_graph())["KilnMatMulUpdate"];
  };
  const Tensor x = ones({64, 96}), dy = ones({64, 80}), x_long = ones({200, 96}), dy_long = ones({200, 80});
  auto update = [&](Tensor a, Tensor b) {
    w.assign_sub(constant(0.1f) * matmul(a, b, true));
    return constant(0);
  };
  EXPECT_EQ(count(update, x, dy), 1);
  EXPECT_EQ(count(update, x_long, dy_long), 0);  // 200 > kShortInner: the library GEMM
  EXPECT_EQ(count(
                [&](Tensor a, Tensor b) {
                  Tensor g = matmul(a, b, true);
                  w.assign_sub(constant(0.1f) * g);
                  return g;
                },
                x, dy),
            0);
  EXPECT_EQ(count(
                [&](Tensor a, Tensor b) {
                  w.assign_sub(constant(0.1f) * matmul(a, b));  // a is x^T already: no transpose_a
                  return constant(0);
                },
                ones({96, 64}), dy),
            0);
  OptimizerOptions off;
  off.contraction_fusion = false;
  EXPECT_EQ(count(update, x, dy, {.optimizer = off}), 0);
}

// A product of another shape than the variable is refused as without fusion.
TEST(WeightUpdateFusion, ShapesAreCheckedAsForTheUnfusedOps) {
  if (!fused_kernel_here()) GTEST_SKIP() << "no AVX-512 in this build";
  Variable w(zeros({96, 80}));
  auto f = function([&](Tensor a, Tensor b) {
    w.assign_sub(constant(0.1f) * matmul(a, b, true));
    return constant(0);
  });
  (void)f(ones({64, 96}), ones({64, 80}));
  EXPECT_EQ(w.read().to_vector<float>(), std::vector<float>(96 * 80, -6.4f));
  expect_error<InvalidArgumentError>([&] { (void)f(ones({64, 96}), ones({64, 81})); }, "Cannot update variable");
}

}  // namespace
