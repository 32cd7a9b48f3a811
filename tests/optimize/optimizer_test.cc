// The optimizer passes: node counts after each rewrite, switches, and optimized against
// unoptimized results.
#include <cmath>
#include <cstring>
#include <map>

#include "test_util.h"
#include "trace/concrete.h"

using namespace kiln;
using namespace kiln::testing;

namespace {
// The rewrite passes, without fusion (which would hide the ops they leave).
FunctionOptions no_fusion() {
  OptimizerOptions o;
  o.elementwise_fusion = false;
  return FunctionOptions{.optimizer = o};
}

std::map<std::string, int> op_counts(const GraphView& g) {
  std::map<std::string, int> m;
  for (const auto& op : g.operations) ++m[op.type];
  return m;
}
}  // namespace

TEST(Optimizer, ConstantSubgraphFoldsToOneConst) {
  auto f = function(
      [](Tensor x) {
        return x + (constant(2.0f) * constant(3.0f) + reduce_sum(constant<float>({1, 2})));
      },
      no_fusion());
  auto cf = f.get_concrete_function(TensorSpec{{}, DType::Float32});
  auto counts = op_counts(cf.optimized_graph());
  EXPECT_EQ(counts["Const"], 1);
  EXPECT_EQ(counts["Mul"], 0);
  EXPECT_EQ(counts["Sum"], 0);
  EXPECT_EQ(counts["AddV2"], 1);
  EXPECT_EQ(cf.optimized_graph().size(), 3u);  // Placeholder, Const, AddV2
  EXPECT_EQ(f(constant(1.0f)).item<float>(), 10.0f);
  EXPECT_GT(op_counts(cf.graph())["Const"], 1);  // the traced graph is kept as traced
  EXPECT_FALSE(cf.optimization_report().empty());
}

// StopGradient, PreventGradient and IdentityN pass their inputs through and differ only in
// their gradients, which a function's trace has already built: the optimized graph, which
// only runs, reads their inputs directly; the traced graph keeps them.
TEST(Optimizer, PassThroughOpsLeaveTheOptimizedGraph) {
  auto f = function([](Tensor x) {
    GradientTape tape;
    tape.watch(x);
    const Tensor held = execute_op("StopGradient", {x})[0];
    const std::vector<Tensor> both = execute_op("IdentityN", {x * x, held});
    const Tensor y = both[0] + both[1] * x;  // x^2 + stop(x) * x: the gradient is 3x
    return std::vector<Tensor>{y, tape.gradient(y, {x})[0], execute_op("PreventGradient", {y})[0]};
  });
  auto cf = f.get_concrete_function(TensorSpec{{3}, DType::Float32});
  auto counts = op_counts(cf.optimized_graph());
  EXPECT_EQ(counts["StopGradient"] + counts["IdentityN"] + counts["PreventGradient"], 0);
  auto traced = op_counts(cf.graph());
  EXPECT_EQ(traced["StopGradient"], 1);
  EXPECT_GE(traced["IdentityN"], 1);
  EXPECT_EQ(traced["PreventGradient"], 1);
  const std::vector<Tensor> got = cf(constant<float>({1, -2, 0.5f}, {3}));
  EXPECT_EQ(got[0].to_vector<float>(), (std::vector<float>{2, 8, 0.5f}));
  EXPECT_EQ(got[1].to_vector<float>(), (std::vector<float>{3, -6, 1.5f}));
  EXPECT_EQ(got[2].to_vector<float>(), got[0].to_vector<float>());
}

TEST(Optimizer, DuplicateSubtreesMerge) {
  auto f = function([](Tensor x) { return tanh(x * 2) + tanh(2 * x); }, no_fusion());  // commutative Mul too
  auto cf = f.get_concrete_function(TensorSpec{{3}, DType::Float32});
  auto counts = op_counts(cf.optimized_graph());
  EXPECT_EQ(counts["Tanh"], 1);
  EXPECT_EQ(counts["Mul"], 1);
  expect_near<float>(f(constant<float>({0, 1, -1})), {0, 2 * std::tanh(2.0f), -2 * std::tanh(2.0f)}, {3});
}

TEST(Optimizer, TimesOnePlusZeroDisappears) {
  auto f = function([](Tensor x) { return x * 1 + 0; });
  auto cf = f.get_concrete_function(TensorSpec{{2}, DType::Float32});
  EXPECT_EQ(cf.optimized_graph().size(), 1u);  // just the placeholder
  expect_tensor<float>(f(constant<float>({1.5, -2})), {1.5, -2}, {2});
  // Broadcasting changes the shape: then x * ones is not x.
  auto g = function([](Tensor x) { return x * constant<float>({1, 1}); });
  EXPECT_EQ(op_counts(g.get_concrete_function(TensorSpec{{}, DType::Float32}).optimized_graph())["Mul"], 1);
  expect_tensor<float>(g(constant(3.0f)), {3, 3}, {2});
}

TEST(Optimizer, ArithmeticRewrites) {
  auto f = function(
      [](Tensor a, Tensor b, Tensor i) {
        Tensor t = transpose(transpose(a));  // cancels
        Tensor m = matmul(transpose(a), b);  // becomes transpose_a
        Tensor n = -(-b);                    // cancels
        Tensor d = b / 4.0f;                 // becomes b * 0.25
        Tensor s = b * b;                    // Square
        Tensor c = cast(b, DType::Float32);  // same dtype: gone
        Tensor z = i - i;                    // integer: zeros
        return std::make_tuple(t + m + n + d + s + c, z);
      },
      no_fusion());
  Tensor a = constant<float>({1, 2, 3, 4}, {2, 2}), b = constant<float>({1, 0, 0, 1}, {2, 2});
  auto cf = f.get_concrete_function(a, b, constant<int32_t>({5, 6}));
  auto counts = op_counts(cf.optimized_graph());
  EXPECT_EQ(counts["Transpose"], 0);
  EXPECT_EQ(counts["Neg"], 0);
  EXPECT_EQ(counts["RealDiv"], 0);
  EXPECT_EQ(counts["Cast"], 0);
  EXPECT_EQ(counts["Square"], 1);
  EXPECT_EQ(counts["Sub"], 0);
  const GraphView optimized = cf.optimized_graph();  // keeps the operations alive
  const Operation* mm = nullptr;
  for (const auto& op : optimized.operations)
    if (op.type == "MatMul") mm = &op;
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->attrs.at("transpose_a"), "true");
  auto [r, z] = f(a, b, constant<int32_t>({5, 6}));
  auto eager_r = transpose(transpose(a)) + matmul(transpose(a), b) + b + b / 4.0f + b * b + b;
  EXPECT_EQ(r.to_vector<float>(), eager_r.to_vector<float>());
  EXPECT_EQ(z.to_vector<int32_t>(), (std::vector<int32_t>{0, 0}));
}

// Tensordot transposes by the identity permutation when no axis moves (a Dense layer on a
// 3-D input): the transpose goes, even with unknown dimensions. A rank that does not match
// the permutation keeps it, so the call still fails as TensorFlow's does.
TEST(Optimizer, TransposeByTheIdentityPermutationIsItsInput) {
  auto f = function([](Tensor x) { return transpose(x, {0, 1, 2}) * 2.0f; }, no_fusion());
  auto cf = f.get_concrete_function(TensorSpec{{-1, -1, 3}, DType::Float32});
  EXPECT_EQ(op_counts(cf.optimized_graph())["Transpose"], 0);
  Tensor x = random_uniform({2, 4, 3}, -1, 1, DType::Float32, 7);
  EXPECT_EQ(f(x).to_vector<float>(), (x * 2.0f).to_vector<float>());
  auto any_rank = f.get_concrete_function(TensorSpec{TensorShape::unknown(), DType::Float32});
  EXPECT_EQ(op_counts(any_rank.optimized_graph())["Transpose"], 1);
  kiln::testing::expect_error<InvalidArgumentError>(
      [&] {
        (void)any_rank(constant<float>({1, 2}));
      },
      "transpose expects a vector of size 1");
}

TEST(Optimizer, ShapesOfKnownShapesFold) {
  auto f = function([](Tensor x) { return reshape(x, shape_of(x)) + cast(size_of(x), DType::Float32); });
  auto cf = f.get_concrete_function(TensorSpec{{2, 3}, DType::Float32});
  auto counts = op_counts(cf.optimized_graph());
  EXPECT_EQ(counts["Shape"], 0);
  EXPECT_EQ(counts["Size"], 0);
  expect_tensor<float>(f(zeros({2, 3})), std::vector<float>(6, 6.0f), {2, 3});
  // Unknown dims: Shape stays and runs.
  auto g = function([](Tensor x) { return shape_of(x); },
                    {.input_signature = std::vector<TensorSpec>{{{-1}, DType::Float32}}});
  EXPECT_EQ(op_counts(g.get_concrete_function().optimized_graph())["Shape"], 1);
  expect_tensor<int32_t>(g(zeros({4})), {4}, {1});
}

TEST(Optimizer, BadConstantsFailAtRunTimeLikeTheOp) {
  auto f = function([] { return gather(constant<float>({0}), std::vector<int64_t>{1}); });
  expect_error<InvalidArgumentError>([&] { (void)f(); }, "indices[0] = 1 is not in [0, 1) [Op:GatherV2]");
  auto unused = function([](Tensor x) {
    (void)gather(constant<float>({0}), std::vector<int64_t>{1});
    return x;
  });
  EXPECT_EQ(unused(constant(1)).item<int32_t>(), 1);
}

// A merged node's every use moves to its survivor: pure users, a stateful user, the graph's
// outputs, and outputs of a two-output op.
TEST(Optimizer, MergedNodesAreReplacedEverywhere) {
  Variable v(zeros({3}));
  auto f = function(
      [&](Tensor x, Tensor labels) {
        Tensor a = tanh(x), b = tanh(x);
        v.assign(b);
        Tensor logits = reshape(x, {1, 3});
        Tensor l1 = sparse_softmax_cross_entropy_with_logits(labels, logits);
        Tensor l2 = sparse_softmax_cross_entropy_with_logits(labels, logits);
        return std::make_tuple(a, b, b * 2.0f, l1 + l2);
      },
      no_fusion());
  const Tensor x = constant<float>({0.5f, -1, 2}), labels = constant<int32_t>({2}, {1});
  auto counts = op_counts(f.get_concrete_function(x, labels).optimized_graph());
  EXPECT_EQ(counts["Tanh"], 1);
  EXPECT_EQ(counts["SparseSoftmaxCrossEntropyWithLogits"], 1);
  auto [a, b, b2, l] = f(x, labels);
  EXPECT_EQ(v.read().to_vector<float>(), tanh(x).to_vector<float>());
  EXPECT_EQ(a.to_vector<float>(), tanh(x).to_vector<float>());
  EXPECT_EQ(b.to_vector<float>(), tanh(x).to_vector<float>());
  EXPECT_EQ(b2.to_vector<float>(), (tanh(x) * 2.0f).to_vector<float>());
  const Tensor l_eager = sparse_softmax_cross_entropy_with_logits(labels, reshape(x, {1, 3}));
  EXPECT_EQ(l.to_vector<float>(), (l_eager + l_eager).to_vector<float>());
}

TEST(Optimizer, StatefulOpsAreNeitherFoldedNorMerged) {
  auto f = function([] {
    print("one", constant(1));
    print("one", constant(1));
    return random_uniform({2}, 0, 1) + random_uniform({2}, 0, 1);  // unseeded: the stateful op
  });
  auto counts = op_counts(f.get_concrete_function().optimized_graph());
  EXPECT_EQ(counts["KilnPrint"], 2);
  EXPECT_EQ(counts["RandomUniform"], 2);
  ::testing::internal::CaptureStderr();
  (void)f();
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "one 1\none 1\n");
}

TEST(Optimizer, SwitchesTurnPassesOff) {
  auto body = [](Tensor x) { return x * 1 + (constant(2.0f) * constant(3.0f)); };
  auto off = function(body, {.optimizer = OptimizerOptions::none()});
  auto on = function(body);
  auto spec = TensorSpec{{}, DType::Float32};
  EXPECT_EQ(off.get_concrete_function(spec).optimized_graph().size(), off.get_concrete_function(spec).graph().size());
  EXPECT_LT(on.get_concrete_function(spec).optimized_graph().size(), on.get_concrete_function(spec).graph().size());
  OptimizerOptions only_folding = OptimizerOptions::none();
  only_folding.constant_folding = true;
  only_folding.prune = true;
  config::set_optimizer_options(only_folding);
  auto global = function(body);
  auto counts = op_counts(global.get_concrete_function(spec).optimized_graph());
  config::set_optimizer_options(OptimizerOptions{});
  EXPECT_EQ(counts["Mul"], 1);  // x * 1 stays: arithmetic simplification is off
  EXPECT_EQ(counts["Const"], 2);
  EXPECT_EQ(off(constant(1.0f)).item<float>(), on(constant(1.0f)).item<float>());
}

TEST(Optimizer, ElementwiseChainFusesIntoOneNode) {
  auto body = [](Tensor x, Tensor y) { return tanh(x * 2.0f + 1.0f) - x * y + sigmoid(y); };
  auto f = function(body);
  auto cf = f.get_concrete_function(TensorSpec{{1000}, DType::Float32}, TensorSpec{{1000}, DType::Float32});
  auto counts = op_counts(cf.optimized_graph());
  EXPECT_EQ(counts["KilnFusedElementwise"], 1);
  EXPECT_EQ(counts["Tanh"] + counts["Mul"] + counts["AddV2"] + counts["Sub"] + counts["Sigmoid"], 0);
  Tensor x = random_uniform({1000}, -2, 2, DType::Float32, 1), y = random_uniform({1000}, -2, 2, DType::Float32, 2);
  EXPECT_EQ(f(x, y).to_vector<float>(), body(x, y).to_vector<float>());  // bit-identical: the ops' own runs
  // A value used outside the chain stays materialized: its producer is not fused away.
  auto g = function([](Tensor x) {
    Tensor a = x * 2.0f;
    return std::make_tuple(tanh(a) + 1.0f, a);
  });
  auto gc = op_counts(g.get_concrete_function(TensorSpec{{8}, DType::Float32}).optimized_graph());
  EXPECT_EQ(gc["Mul"], 1);
  EXPECT_EQ(gc["KilnFusedElementwise"], 1);
  // Broadcast operands other than scalars are not fused.
  auto h = function([](Tensor m, Tensor v) { return tanh(m + v) * 2.0f; });
  Tensor m = random_uniform({3, 4}, -1, 1, DType::Float32, 3), v = random_uniform({4}, -1, 1, DType::Float32, 4);
  EXPECT_EQ(h(m, v).to_vector<float>(), (tanh(m + v) * 2.0f).to_vector<float>());
}

// x / c becomes x * (1/c) only where that is exact: a power of two with a representable
// reciprocal. Elsewhere the rewrite changes results (1e-10f / 1e-40f is 1e30, but 1/1e-40f
// is inf), so the division stays and the function matches eager bit for bit.
TEST(Optimizer, DivisionByAConstantStaysExact) {
  for (float c : {1e-40f, 3.0f, 0.1f, 1e30f, 0.0f, -7.0f}) {
    auto f = function([c](Tensor x) { return x / c; }, no_fusion());
    auto cf = f.get_concrete_function(TensorSpec{{4}, DType::Float32});
    EXPECT_EQ(op_counts(cf.optimized_graph())["RealDiv"], 1) << c;
    const Tensor x = constant<float>({1e-10f, 3.0f, -1e38f, 1.0f});
    const auto got = f(x).to_vector<float>(), want = (x / c).to_vector<float>();
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_EQ(std::memcmp(&got[i], &want[i], sizeof(float)), 0) << x.to_vector<float>()[i] << " / " << c;
  }
  for (double c : {4.0, 0.125, -2.0, 0x1p-1022, 0x1p1023}) {  // exact: rewritten, still bit for bit
    auto f = function([c](Tensor x) { return x / c; }, no_fusion());
    auto cf = f.get_concrete_function(TensorSpec{{3}, DType::Float64});
    EXPECT_EQ(op_counts(cf.optimized_graph())["RealDiv"], 0) << c;
    const Tensor x = constant<double>({1e-300, 3.0, -1e308});
    EXPECT_EQ(f(x).to_vector<double>(), (x / c).to_vector<double>()) << c;
  }
  auto g = function([](Tensor x) { return x / constant<float>({2, 3}); }, no_fusion());  // one inexact element
  EXPECT_EQ(op_counts(g.get_concrete_function(TensorSpec{{2}, DType::Float32}).optimized_graph())["RealDiv"], 1);
}

// Conv2D -> BiasAdd -> Relu / Relu6 becomes one KilnFusedConv2D; results stay bit for bit
// those of the three ops run eagerly (shapes that cross the kernel's block size and split
// over threads, a 1x1 convolution, padding and strides).
TEST(Optimizer, ConvolutionBiasAndActivationFuse) {
  struct Case {
    std::vector<int64_t> x, k;
    std::vector<int64_t> strides;
    std::string padding;
    int activation;  // 0 none, 1 Relu, 2 Relu6
  };
  const std::vector<Case> cases = {{{64, 28, 28, 1}, {3, 3, 1, 32}, {1, 1, 1, 1}, "VALID", 1},
                                   {{2, 9, 7, 5}, {3, 2, 5, 6}, {1, 2, 1, 1}, "SAME", 2},
                                   {{3, 6, 6, 8}, {1, 1, 8, 4}, {1, 1, 1, 1}, "VALID", 0},
                                   {{1, 5, 5, 3}, {5, 5, 3, 2}, {1, 1, 1, 1}, "SAME", 1}};
  int seed = 1;
  for (const Case& t : cases) {
    auto body = [&](Tensor x, Tensor k, Tensor b) {
      Tensor y = bias_add(conv2d(x, k, t.strides, t.padding), b);
      return t.activation == 1 ? relu(y) : t.activation == 2 ? relu6(y) : y;
    };
    auto f = function(body);
    const Tensor x = random_uniform(t.x, -3, 3, DType::Float32, seed++);
    const Tensor k = random_uniform(t.k, -1, 1, DType::Float32, seed++);
    const Tensor b = random_uniform({t.k[3]}, -1, 1, DType::Float32, seed++);
    auto counts = op_counts(f.get_concrete_function(x, k, b).optimized_graph());
    EXPECT_EQ(counts["KilnFusedConv2D"], 1) << t.padding;
    EXPECT_EQ(counts["Conv2D"] + counts["BiasAdd"] + counts["Relu"] + counts["Relu6"], 0);
    EXPECT_EQ(f(x, k, b).to_vector<float>(), body(x, k, b).to_vector<float>()) << t.padding;
  }
  // A convolution whose raw output is also returned is not fused away.
  auto g = function([](Tensor x, Tensor k, Tensor b) {
    Tensor c = conv2d(x, k, {1, 1, 1, 1}, "VALID");
    return std::make_tuple(relu(bias_add(c, b)), c);
  });
  auto gc = op_counts(g.get_concrete_function(TensorSpec{{1, 4, 4, 2}, DType::Float32},
                                              TensorSpec{{2, 2, 2, 3}, DType::Float32}, TensorSpec{{3}, DType::Float32})
                          .optimized_graph());
  EXPECT_EQ(gc["KilnFusedConv2D"], 0);
  EXPECT_EQ(gc["Conv2D"], 1);
  // The switch turns it off.
  OptimizerOptions off;
  off.contraction_fusion = false;
  auto h = function(
      [](Tensor x, Tensor k, Tensor b) {
        return relu(bias_add(conv2d(x, k, {1, 1, 1, 1}, "SAME"), b));
      },
      {.optimizer = off});
  auto hc = op_counts(h.get_concrete_function(TensorSpec{{1, 4, 4, 2}, DType::Float32},
                                              TensorSpec{{2, 2, 2, 3}, DType::Float32}, TensorSpec{{3}, DType::Float32})
                          .optimized_graph());
  EXPECT_EQ(hc["KilnFusedConv2D"], 0);
  EXPECT_EQ(hc["Conv2D"], 1);
  EXPECT_EQ(hc["BiasAdd"] + hc["KilnFusedElementwise"], 1);  // the bias and ReLU: elementwise fusion's
}

// A residual block's end: convolution, bias, BatchNormalization's Mul and AddV2, then the
// AddV2 of the block's shortcut (a tensor of the output's shape) and a ReLU, as ResNet's
// blocks end (MobileNetV2's and EfficientNet's without the ReLU): one fused node whose
// epilogue adds the shortcut, bit for bit the separate ops run eagerly, NaN included, in
// float32 and float64, with a known or unknown batch; and where the batches differ at run time
// the AddV2's broadcasting or its error.
TEST(Optimizer, ConvolutionResidualAddFuses) {
  struct Case {
    std::vector<int64_t> x, k;
    bool depthwise, shortcut_first, activation;
    DType dtype;
  };
  const std::vector<Case> cases = {{{2, 9, 7, 5}, {3, 3, 5, 6}, false, false, true, DType::Float32},
                                   {{3, 6, 6, 8}, {1, 1, 8, 8}, false, true, false, DType::Float32},
                                   {{1, 12, 10, 8}, {3, 3, 8, 1}, true, false, false, DType::Float32},
                                   {{2, 5, 5, 3}, {3, 3, 3, 4}, false, true, true, DType::Float64},
                                   {{1, 56, 56, 64}, {1, 1, 64, 64}, false, false, true, DType::Float32}};  // oneDNN's
  int seed = 700;
  for (const Case& t : cases) {
    const int64_t channels = t.depthwise ? t.k[2] * t.k[3] : t.k[3];
    auto body = [&](Tensor x, Tensor k, Tensor scale, Tensor shift, Tensor shortcut) {
      Tensor y = t.depthwise
                     ? execute_op("DepthwiseConv2dNative", {x, k},
                                  {{"strides", std::vector<int64_t>{1, 1, 1, 1}}, {"padding", std::string("SAME")}})[0]
                     : conv2d(x, k, {1, 1, 1, 1}, "SAME");
      y = bias_add(y, shift) * scale + shift;
      y = t.shortcut_first ? shortcut + y : y + shortcut;
      return t.activation ? relu(y) : y;
    };
    auto f = function(body);
    std::vector<int64_t> out = t.x;
    out[3] = channels;
    const Tensor x = random_uniform(t.x, -3, 3, t.dtype, seed++);
    const Tensor k = random_uniform(t.k, -1, 1, t.dtype, seed++);
    const Tensor scale = random_uniform({channels}, -2, 2, t.dtype, seed++);
    const Tensor shift = random_uniform({channels}, -1, 1, t.dtype, seed++);
    Tensor shortcut = random_uniform(out, -2, 2, t.dtype, seed++);
    if (t.dtype == DType::Float32) {  // a NaN and an infinity in the shortcut
      std::vector<float> v = shortcut.to_vector<float>();
      v[3] = std::nanf("");
      v[v.size() / 2] = -INFINITY;
      shortcut = constant(v, out);
    }
    const std::string fused_name = t.depthwise ? "KilnFusedDepthwiseConv2dNative" : "KilnFusedConv2D";
    for (bool unknown_batch : {false, true}) {
      std::vector<int64_t> x_dims = t.x, out_dims = out;
      if (unknown_batch) x_dims[0] = out_dims[0] = -1;
      auto cf = f.get_concrete_function(TensorSpec{x_dims, t.dtype}, TensorSpec{t.k, t.dtype},
                                        TensorSpec{{channels}, t.dtype}, TensorSpec{{channels}, t.dtype},
                                        TensorSpec{out_dims, t.dtype});
      auto counts = op_counts(cf.optimized_graph());
      EXPECT_EQ(counts[fused_name], 1) << fused_name << " unknown batch " << unknown_batch;
      EXPECT_EQ(counts["AddV2"] + counts["Relu"] + counts["KilnFusedElementwise"], 0)
          << "unknown batch " << unknown_batch;
      const Tensor got = cf(x, k, scale, shift, shortcut)[0], want = body(x, k, scale, shift, shortcut);
      if (t.dtype == DType::Float64) {
        EXPECT_EQ(got.to_vector<double>(), want.to_vector<double>());
        continue;
      }
      const std::vector<float> g = got.to_vector<float>(), w = want.to_vector<float>();
      ASSERT_EQ(g.size(), w.size());
      for (size_t i = 0; i < g.size(); ++i)
        ASSERT_TRUE(std::isnan(w[i]) ? std::isnan(g[i]) : g[i] == w[i]) << fused_name << " at " << i;
    }
  }
  // A ResNet block whose shortcut is a convolution too: both convolutions fuse with their
  // BatchNormalization, and the addition and ReLU join one of them.
  auto projection = function([](Tensor x, Tensor k1, Tensor k2, Tensor scale, Tensor shift) {
    Tensor main = conv2d(x, k1, {1, 1, 1, 1}, "SAME") * scale + shift;
    Tensor shortcut = conv2d(x, k2, {1, 1, 1, 1}, "SAME") * scale + shift;
    return relu(main + shortcut);
  });
  {
    const Tensor x = random_uniform({2, 6, 6, 4}, -1, 1, DType::Float32, 710);
    const Tensor k1 = random_uniform({3, 3, 4, 8}, -1, 1, DType::Float32, 711);
    const Tensor k2 = random_uniform({1, 1, 4, 8}, -1, 1, DType::Float32, 712);
    const Tensor scale = random_uniform({8}, -2, 2, DType::Float32, 713);
    const Tensor shift = random_uniform({8}, -1, 1, DType::Float32, 714);
    auto counts = op_counts(projection.get_concrete_function(x, k1, k2, scale, shift).optimized_graph());
    EXPECT_EQ(counts["KilnFusedConv2D"], 2);
    EXPECT_EQ(counts["Conv2D"] + counts["AddV2"] + counts["Relu"] + counts["KilnFusedElementwise"], 0);
    EXPECT_EQ(projection(x, k1, k2, scale, shift).to_vector<float>(),
              relu((conv2d(x, k1, {1, 1, 1, 1}, "SAME") * scale + shift) +
                   (conv2d(x, k2, {1, 1, 1, 1}, "SAME") * scale + shift))
                  .to_vector<float>());
  }
  // A shortcut that broadcasts where the graph can see it stays an AddV2: [1, H, W, C] against a batch of 2, and a
  // batch the graph knows against one it does not.
  auto g = function([](Tensor x, Tensor k, Tensor s) { return relu(conv2d(x, k, {1, 1, 1, 1}, "SAME") + s); });
  for (const std::vector<int64_t>& s :
       {std::vector<int64_t>{1, 4, 4, 3}, std::vector<int64_t>{-1, 4, 4, 3}, std::vector<int64_t>{4, 4, 3}}) {
    auto counts =
        op_counts(g.get_concrete_function(TensorSpec{{2, 4, 4, 2}, DType::Float32},
                                          TensorSpec{{1, 1, 2, 3}, DType::Float32}, TensorSpec{s, DType::Float32})
                      .optimized_graph());
    EXPECT_EQ(counts["KilnFusedConv2D"], 0) << s.size();
    EXPECT_EQ(counts["Conv2D"], 1) << s.size();
  }
  // Unknown batches that differ when it runs: one image (of either operand) broadcasts as the
  // AddV2 does; two batches of more than one image fail as it does.
  auto cf = g.get_concrete_function(TensorSpec{{-1, 4, 4, 2}, DType::Float32}, TensorSpec{{1, 1, 2, 3}, DType::Float32},
                                    TensorSpec{{-1, 4, 4, 3}, DType::Float32});
  EXPECT_EQ(op_counts(cf.optimized_graph())["KilnFusedConv2D"], 1);
  const Tensor k = random_uniform({1, 1, 2, 3}, -1, 1, DType::Float32, 720);
  for (const auto& [xb, sb] : {std::pair<int64_t, int64_t>{3, 1}, {1, 3}, {1, 0}, {0, 1}}) {
    const Tensor x = random_uniform({xb, 4, 4, 2}, -1, 1, DType::Float32, 721);
    const Tensor s = random_uniform({sb, 4, 4, 3}, -1, 1, DType::Float32, 722);
    const Tensor got = cf(x, k, s)[0];
    const Tensor want = relu(conv2d(x, k, {1, 1, 1, 1}, "SAME") + s);
    EXPECT_EQ(got.shape().dims(), want.shape().dims()) << xb << " " << sb;
    EXPECT_EQ(got.to_vector<float>(), want.to_vector<float>()) << xb << " " << sb;
  }
  kiln::testing::expect_error<InvalidArgumentError>(
      [&] {
        (void)cf(random_uniform({2, 4, 4, 2}, -1, 1, DType::Float32, 723), k,
                 random_uniform({3, 4, 4, 3}, -1, 1, DType::Float32, 724));
      },
      "Incompatible shapes");
}

// The epilogue's vectorized loops over a row's channels (ops/conv_epilogue.cc, compiled per
// instruction-set level) end in remainders that depend on the channel count and the level's
// vector width: every count from 1 to 70 and a wide one, in float32 and float64 (CI runs this
// suite at AVX2 and baseline too), each element bit for bit the separate ops' value: NaN,
// infinities and -0 in the shortcut, a NaN channel, results on both sides of 0 and 6.
TEST(Optimizer, ConvolutionEpilogueEveryChannelCount) {
  int seed = 900;
  std::vector<int64_t> counts_checked;
  for (DType dtype : {DType::Float32, DType::Float64}) {
    for (int64_t c = 1; c <= 71; ++c) {
      const int64_t channels = c == 71 ? 200 : c;
      const bool six = channels % 2 == 0;
      auto body = [&](Tensor x, Tensor k, Tensor b, Tensor m, Tensor s, Tensor r) {
        Tensor y = ((bias_add(conv2d(x, k, {1, 1, 1, 1}, "VALID"), b) * m) - s) + r;
        return six ? relu6(y) : relu(y);
      };
      auto f = function(body);
      const std::vector<int64_t> out = {1, 2, 3, channels};
      const Tensor x = random_uniform({1, 2, 3, 3}, -3, 3, dtype, seed++);
      const Tensor k = random_uniform({1, 1, 3, channels}, -2, 2, dtype, seed++);
      const Tensor b = random_uniform({channels}, -2, 2, dtype, seed++);
      Tensor m = random_uniform({channels}, -4, 4, dtype, seed++);
      const Tensor s = random_uniform({channels}, -2, 2, dtype, seed++);
      std::vector<double> rv = random_uniform(out, -8, 8, DType::Float64, seed++).to_vector<double>();
      const double special[] = {NAN, INFINITY, -INFINITY, -0.0, 6.0, 0.0};
      for (size_t i = 0; i < rv.size(); i += 5) rv[i] = special[(i / 5) % 6];
      Tensor r = cast(constant(rv, out), dtype);
      if (channels > 3) {
        std::vector<double> mv = cast(m, DType::Float64).to_vector<double>();
        mv[channels - 2] = NAN;
        m = cast(constant(mv, {channels}), dtype);
      }
      auto cf = f.get_concrete_function(x, k, b, m, s, r);
      auto counts = op_counts(cf.optimized_graph());
      EXPECT_EQ(counts["KilnFusedConv2D"], 1) << channels;
      EXPECT_EQ(counts["Conv2D"] + counts["Sub"] + counts["AddV2"] + counts["KilnFusedElementwise"], 0) << channels;
      const std::vector<double> got = cast(cf(x, k, b, m, s, r)[0], DType::Float64).to_vector<double>();
      const std::vector<double> want = cast(body(x, k, b, m, s, r), DType::Float64).to_vector<double>();
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_TRUE(std::isnan(want[i]) ? std::isnan(got[i])
                                        : got[i] == want[i] && std::signbit(got[i]) == std::signbit(want[i]))
            << dtype_name(dtype) << " channels " << channels << " at " << i << ": " << got[i] << " vs " << want[i];
    }
  }
}

// The one-pass epilogue (ops/conv_epilogue.cc) stands an exact no-op in for each step a chain
// lacks (adding -0, multiplying by 1) and adds a Sub's negated vector: chains without a bias,
// a scale or a shift, a Sub alone, each with zeros of both signs (a zero input pixel times a
// negative scale), infinities and NaN in the vectors, float32 and float64, stay bit for bit
// the separate ops' (CI runs this suite at AVX2 and baseline too).
TEST(Optimizer, ConvolutionEpilogueChainsWithoutSomeSteps) {
  int seed = 1300;
  for (DType dtype : {DType::Float32, DType::Float64}) {
    for (int chain = 0; chain < 5; ++chain) {
      const int64_t channels = 19;
      auto body = [&](Tensor x, Tensor k, Tensor b, Tensor m, Tensor s, Tensor r) {
        Tensor c = conv2d(x, k, {1, 1, 1, 1}, "VALID");
        switch (chain) {
          case 0:
            return relu6(c * m + s);  // MobileNetV2's: no bias
          case 1:
            return bias_add(c, b);
          case 2:
            return relu(bias_add(c, b) + r);  // no scale or shift
          case 3:
            return c - s;
          default:
            return c * m;  // a scale alone
        }
      };
      auto f = function(body);
      std::vector<double> xv = random_uniform({1, 3, 4, 3}, -3, 3, DType::Float64, seed++).to_vector<double>();
      for (int i = 0; i < 3; ++i) xv[i] = 0;  // a zero pixel: +0 products, -0 after a negative scale
      const Tensor x = cast(constant(xv, {1, 3, 4, 3}), dtype);
      const Tensor k = random_uniform({1, 1, 3, channels}, -2, 2, dtype, seed++);
      const double special[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0, 6.0, -1.5};
      auto vector_with_specials = [&](int offset) {
        std::vector<double> v = random_uniform({channels}, -4, 4, DType::Float64, seed++).to_vector<double>();
        for (int i = 0; i < 7; ++i) v[(i * 3 + offset) % channels] = special[i];
        return cast(constant(v, {channels}), dtype);
      };
      const Tensor b = vector_with_specials(0), m = vector_with_specials(1), s = vector_with_specials(2);
      const Tensor r = random_uniform({1, 3, 4, channels}, -8, 8, dtype, seed++);
      auto cf = f.get_concrete_function(x, k, b, m, s, r);
      EXPECT_EQ(op_counts(cf.optimized_graph())["KilnFusedConv2D"], 1) << chain;
      const std::vector<double> got = cast(cf(x, k, b, m, s, r)[0], DType::Float64).to_vector<double>();
      const std::vector<double> want = cast(body(x, k, b, m, s, r), DType::Float64).to_vector<double>();
      ASSERT_EQ(got.size(), want.size());
      int negative_zeros = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        negative_zeros += want[i] == 0 && std::signbit(want[i]);
        ASSERT_TRUE(std::isnan(want[i]) ? std::isnan(got[i])
                                        : got[i] == want[i] && std::signbit(got[i]) == std::signbit(want[i]))
            << dtype_name(dtype) << " chain " << chain << " at " << i << ": " << got[i] << " vs " << want[i];
      }
      if (chain == 4) {
        EXPECT_GT(negative_zeros, 0) << "the scale alone never made a -0";
      }
    }
  }
}

// Keras's swish (tf.nn.silu: x * sigmoid(beta * x), its custom gradient's IdentityN passing
// the result, x and beta) after a convolution and its BatchNormalization or bias joins the
// convolution's epilogue, as does x * sigmoid(x) written by hand: every channel count up to
// 40, a few around and past the epilogue's 256-value pieces, float32 and float64, each
// element bit for bit the separate ops' (NaN and infinite channels, values deep in both of
// the sigmoid's tails), with a known and an unknown batch.
TEST(Optimizer, ConvolutionSwishEpilogue) {
  int seed = 1300;
  for (DType dtype : {DType::Float32, DType::Float64}) {
    for (int64_t channels : {1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 23, 31, 32, 33, 40, 255, 256, 257, 600}) {
      for (int form = 0; form < 3; ++form) {  // Keras's with BatchNorm; by hand; depthwise with a bias
        const bool depthwise = form == 2;
        auto body = [&](Tensor x, Tensor k, Tensor m, Tensor s, Tensor beta) {
          Tensor y = depthwise
                         ? bias_add(execute_op("DepthwiseConv2dNative", {x, k},
                                               {{"strides", std::vector<int64_t>{1, 1, 1, 1}}, {"padding", "SAME"}})[0],
                                    s)
                         : conv2d(x, k, {1, 1, 1, 1}, "SAME") * m + s;
          if (form == 1) return sigmoid(y) * y;
          Tensor swish = y * sigmoid(beta * y);
          return execute_op("IdentityN", {swish, y, beta})[0];
        };
        auto f = function(body);
        const int64_t in_channels = depthwise ? channels : 3;
        const std::vector<int64_t> x_dims = {2, 3, 4, in_channels};
        const std::vector<int64_t> k_dims = {3, 3, in_channels, depthwise ? 1 : channels};
        const Tensor x = random_uniform(x_dims, -3, 3, dtype, seed++);
        const Tensor k = random_uniform(k_dims, -1, 1, dtype, seed++);
        std::vector<double> mv = random_uniform({channels}, -40, 40, DType::Float64, seed++).to_vector<double>();
        std::vector<double> sv = random_uniform({channels}, -2, 2, DType::Float64, seed++).to_vector<double>();
        if (channels > 4) {
          mv[1] = NAN;
          sv[3] = -INFINITY;
          sv[channels - 1] = INFINITY;
        }
        const Tensor m = cast(constant(mv, {channels}), dtype), s = cast(constant(sv, {channels}), dtype);
        const Tensor beta = cast(constant(channels % 2 ? 1.0 : 1.5), dtype);
        const std::string fused_name = depthwise ? "KilnFusedDepthwiseConv2dNative" : "KilnFusedConv2D";
        for (bool unknown_batch : {false, true}) {
          std::vector<int64_t> spec_dims = x_dims;
          if (unknown_batch) spec_dims[0] = -1;
          auto cf = f.get_concrete_function(TensorSpec{spec_dims, dtype}, TensorSpec{k_dims, dtype},
                                            TensorSpec{{channels}, dtype}, TensorSpec{{channels}, dtype},
                                            TensorSpec{{}, dtype});
          auto counts = op_counts(cf.optimized_graph());
          const std::string what = std::string(dtype_name(dtype)) + " channels " + std::to_string(channels) + " form " +
                                   std::to_string(form) + " unknown batch " + std::to_string(unknown_batch);
          EXPECT_EQ(counts[fused_name], 1) << what;
          EXPECT_EQ(counts["Sigmoid"] + counts["Mul"] + counts["IdentityN"] + counts["KilnFusedElementwise"], 0)
              << what;
          const std::vector<double> got = cast(cf(x, k, m, s, beta)[0], DType::Float64).to_vector<double>();
          // A plan that runs the batch image by image (exec/batch_split.h) is compared with the
          // separate ops image by image: kiln's own convolution (KILN_ONEDNN=0) may sum a
          // pixel differently for a batch of one than for two.
          std::vector<double> want;
          const int64_t images = cf.impl()->plan->splits_batches() ? x_dims[0] : 1;
          for (int64_t b = 0; b < images; ++b) {
            const Tensor part = images == 1 ? x : slice(x, {b, 0, 0, 0}, {1, -1, -1, -1});
            for (double v : cast(body(part, k, m, s, beta), DType::Float64).to_vector<double>()) want.push_back(v);
          }
          ASSERT_EQ(got.size(), want.size());
          for (size_t i = 0; i < got.size(); ++i)
            ASSERT_TRUE(std::isnan(want[i]) ? std::isnan(got[i])
                                            : got[i] == want[i] && std::signbit(got[i]) == std::signbit(want[i]))
                << what << " at " << i << ": " << got[i] << " vs " << want[i];
        }
      }
    }
  }
  // An empty batch: the fused convolution and its swish give the empty result.
  {
    auto swish_conv = function([](Tensor x, Tensor k) {
      Tensor y = conv2d(x, k, {1, 1, 1, 1}, "SAME");
      return y * sigmoid(y);
    });
    const Tensor empty = zeros({0, 5, 5, 3}, DType::Float32);
    const Tensor k = random_uniform({1, 1, 3, 4}, -1, 1, DType::Float32, 1389);
    auto cf = swish_conv.get_concrete_function(empty, k);
    EXPECT_EQ(op_counts(cf.optimized_graph())["KilnFusedConv2D"], 1);
    EXPECT_EQ(cf(empty, k)[0].shape().dims(), (std::vector<int64_t>{0, 5, 5, 4}));
  }
  // The swish's value read by a third op, or its Mul by a vector instead of a scalar beta,
  // is not Keras's swish: the convolution's chain ends before it.
  auto also_read = function([](Tensor x, Tensor k) {
    Tensor y = conv2d(x, k, {1, 1, 1, 1}, "SAME");
    return y * sigmoid(y) + y;
  });
  auto by_vector = function([](Tensor x, Tensor k, Tensor v) {
    Tensor y = conv2d(x, k, {1, 1, 1, 1}, "SAME");
    return y * sigmoid(v * y);
  });
  const Tensor x = random_uniform({1, 4, 4, 2}, -1, 1, DType::Float32, 1390);
  const Tensor k = random_uniform({1, 1, 2, 3}, -1, 1, DType::Float32, 1391);
  const Tensor v = random_uniform({3}, -1, 1, DType::Float32, 1392);
  EXPECT_EQ(op_counts(also_read.get_concrete_function(x, k).optimized_graph())["KilnFusedConv2D"], 0);
  EXPECT_EQ(op_counts(by_vector.get_concrete_function(x, k, v).optimized_graph())["KilnFusedConv2D"], 0);
  EXPECT_EQ(also_read(x, k).to_vector<float>(),
            (conv2d(x, k, {1, 1, 1, 1}, "SAME") * sigmoid(conv2d(x, k, {1, 1, 1, 1}, "SAME")) +
             conv2d(x, k, {1, 1, 1, 1}, "SAME"))
                .to_vector<float>());
}

// Attention's scaled scores: Softmax(x * c) with a scalar c (either operand order, rank 0 or
// all ones) becomes one KilnScaledSoftmax, bit for bit the two ops: rows of every length up
// to 40 and long ones, float32 and float64, NaN and infinities in the logits and a negative,
// a zero and an infinite scale, a known and an unknown batch; a scale that is a vector, a
// Mul read twice, or a scale of rank above the logits' is left alone.
TEST(Optimizer, SoftmaxScaleFuses) {
  int seed = 1400;
  for (DType dtype : {DType::Float32, DType::Float64}) {
    for (int64_t n : {1, 2, 3, 7, 8, 15, 16, 17, 31, 32, 33, 40, 128, 1000, 1500}) {
      const std::vector<int64_t> dims = {3, 2, n};
      std::vector<double> xv = random_uniform(dims, -30, 30, DType::Float64, seed++).to_vector<double>();
      if (n > 3) {
        xv[1] = NAN;
        xv[n + 2] = INFINITY;
        xv[2 * n + 1] = -INFINITY;
      }
      const Tensor x = cast(constant(xv, dims), dtype);
      for (double scale : {0.125, -0.3, 0.0, double(INFINITY), 1.7}) {
        const bool scale_first = n % 2 == 0;
        const std::vector<int64_t> scale_dims = n % 3 == 0 ? std::vector<int64_t>{1, 1} : std::vector<int64_t>{};
        const Tensor c = cast(constant(std::vector<double>{scale}, scale_dims), dtype);
        auto body = [&](Tensor x, Tensor c) { return softmax(scale_first ? c * x : x * c); };
        auto f = function(body);
        for (bool unknown_batch : {false, true}) {
          std::vector<int64_t> spec = dims;
          if (unknown_batch) spec[0] = -1;
          auto cf = f.get_concrete_function(TensorSpec{spec, dtype}, TensorSpec{scale_dims, dtype});
          auto counts = op_counts(cf.optimized_graph());
          const std::string what = std::string(dtype_name(dtype)) + " n " + std::to_string(n) + " scale " +
                                   std::to_string(scale) + " unknown batch " + std::to_string(unknown_batch);
          EXPECT_EQ(counts["KilnScaledSoftmax"], 1) << what;
          EXPECT_EQ(counts["Softmax"] + counts["Mul"] + counts["KilnFusedElementwise"], 0) << what;
          const std::vector<double> got = cast(cf(x, c)[0], DType::Float64).to_vector<double>();
          const std::vector<double> want = cast(body(x, c), DType::Float64).to_vector<double>();
          ASSERT_EQ(got.size(), want.size());
          for (size_t i = 0; i < got.size(); ++i)
            ASSERT_TRUE(std::isnan(want[i]) ? std::isnan(got[i]) : got[i] == want[i])
                << what << " at " << i << ": " << got[i] << " vs " << want[i];
        }
      }
    }
  }
  const Tensor x = random_uniform({2, 5}, -3, 3, DType::Float32, 1490);
  auto by_vector = function([](Tensor x, Tensor v) { return softmax(x * v); });
  auto read_twice = function([](Tensor x, Tensor c) {
    Tensor y = x * c;
    return softmax(y) + y;
  });
  auto higher_rank = function([](Tensor x, Tensor c) { return softmax(x * c); });
  const Tensor v = random_uniform({5}, -1, 1, DType::Float32, 1491);
  const Tensor c = constant(0.5f), c3 = constant(std::vector<float>{0.5f}, {1, 1, 1});
  EXPECT_EQ(op_counts(by_vector.get_concrete_function(x, v).optimized_graph())["KilnScaledSoftmax"], 0);
  EXPECT_EQ(op_counts(read_twice.get_concrete_function(x, c).optimized_graph())["KilnScaledSoftmax"], 0);
  EXPECT_EQ(op_counts(higher_rank.get_concrete_function(x, c3).optimized_graph())["KilnScaledSoftmax"], 0);
  EXPECT_EQ(read_twice(x, c).to_vector<float>(), (softmax(x * c) + x * c).to_vector<float>());
  EXPECT_EQ(higher_rank(x, c3).shape().dims(), (std::vector<int64_t>{1, 2, 5}));
  // Zero-sized logits (no rows, rows of no elements) fuse and give the empty result the ops do.
  auto scaled = function([](Tensor x, Tensor c) { return softmax(x * c); });
  for (const std::vector<int64_t>& dims :
       {std::vector<int64_t>{0, 5}, std::vector<int64_t>{3, 0}, std::vector<int64_t>{2, 0, 4}}) {
    const Tensor empty = zeros(dims, DType::Float32);
    auto cf = scaled.get_concrete_function(empty, c);
    EXPECT_EQ(op_counts(cf.optimized_graph())["KilnScaledSoftmax"], 1) << dims.size();
    EXPECT_EQ(cf(empty, c)[0].shape().dims(), dims);
  }
}

// Keras's BatchNormalization at inference exports as Mul(scale) and AddV2(shift) by vectors
// of the channels ([1, 1, 1, C] after a Reshape): a convolution, its bias, that pair and the
// activation become one fused node (DepthwiseConv2dNative's too), bit for bit the separate
// ops run eagerly, with a known or unknown batch.
TEST(Optimizer, ConvolutionBatchNormChainsFuse) {
  struct Case {
    std::vector<int64_t> x, k;
    std::vector<int64_t> strides;
    std::string padding;
    bool depthwise, bias, vectors_first, channels_only;
    int activation;  // 0 none, 1 Relu, 2 Relu6, 3 a Sub instead of the AddV2 and no activation
  };
  const std::vector<Case> cases = {
      {{64, 28, 28, 1}, {3, 3, 1, 32}, {1, 1, 1, 1}, "VALID", false, true, false, false, 1},
      {{2, 9, 7, 5}, {3, 2, 5, 6}, {1, 2, 1, 1}, "SAME", false, false, true, true, 2},
      {{3, 6, 6, 8}, {1, 1, 8, 4}, {1, 1, 1, 1}, "VALID", false, true, true, false, 0},
      {{1, 5, 5, 3}, {5, 5, 3, 2}, {1, 1, 1, 1}, "SAME", false, false, false, true, 3},
      {{2, 12, 10, 8}, {3, 3, 8, 1}, {1, 2, 2, 1}, "SAME", true, false, false, false, 2},
      {{1, 7, 7, 4}, {3, 3, 4, 2}, {1, 1, 1, 1}, "VALID", true, true, true, true, 1}};
  int seed = 100;
  for (const Case& t : cases) {
    const int64_t channels = t.depthwise ? t.k[2] * t.k[3] : t.k[3];
    const std::vector<int64_t> vector_shape =
        t.channels_only ? std::vector<int64_t>{channels} : std::vector<int64_t>{1, 1, 1, channels};
    auto body = [&](Tensor x, Tensor k, Tensor b, Tensor variance, Tensor mean) {
      Tensor y = t.depthwise
                     ? execute_op("DepthwiseConv2dNative", {x, k}, {{"strides", t.strides}, {"padding", t.padding}})[0]
                     : conv2d(x, k, t.strides, t.padding);
      if (t.bias) y = bias_add(y, b);
      // Keras's arithmetic: scale = rsqrt(variance + epsilon), shift = mean * -scale.
      Tensor scale = reshape(rsqrt(variance + 0.001f), vector_shape);
      Tensor shift = reshape(mean * -rsqrt(variance + 0.001f), vector_shape);
      y = t.vectors_first ? scale * y : y * scale;
      if (t.activation == 3) return y - shift;
      y = t.vectors_first ? shift + y : y + shift;
      return t.activation == 1 ? relu(y) : t.activation == 2 ? relu6(y) : y;
    };
    auto f = function(body);
    const Tensor x = random_uniform(t.x, -3, 3, DType::Float32, seed++);
    const Tensor k = random_uniform(t.k, -1, 1, DType::Float32, seed++);
    const Tensor b = random_uniform({channels}, -1, 1, DType::Float32, seed++);
    const Tensor variance = random_uniform({channels}, 0, 2, DType::Float32, seed++);
    const Tensor mean = random_uniform({channels}, -1, 1, DType::Float32, seed++);
    const std::string fused_name = t.depthwise ? "KilnFusedDepthwiseConv2dNative" : "KilnFusedConv2D";
    for (bool unknown_batch : {false, true}) {
      std::vector<int64_t> x_dims = t.x;
      if (unknown_batch) x_dims[0] = -1;
      auto cf = f.get_concrete_function(TensorSpec{x_dims, DType::Float32}, TensorSpec{t.k, DType::Float32},
                                        TensorSpec{{channels}, DType::Float32}, TensorSpec{{channels}, DType::Float32},
                                        TensorSpec{{channels}, DType::Float32});
      auto counts = op_counts(cf.optimized_graph());
      EXPECT_EQ(counts[fused_name], 1) << t.padding << " unknown batch " << unknown_batch;
      EXPECT_EQ(
          counts["Conv2D"] + counts["DepthwiseConv2dNative"] + counts["BiasAdd"] + counts["Relu"] + counts["Relu6"], 0);
    }
    EXPECT_EQ(f(x, k, b, variance, mean).to_vector<float>(), body(x, k, b, variance, mean).to_vector<float>())
        << t.padding;
  }
}

// A zero Pad of the spatial dims before a VALID (or EXPLICIT) convolution becomes the
// convolution's explicit padding (Keras's ZeroPadding2D before a strided convolution), the
// same values as the padded input's convolution run eagerly: small shapes (kiln's kernels)
// and large ones (oneDNN's, where installed), Conv2D and depthwise, symmetric and one-sided
// pads. A Pad of the batch or channels, another Pad's user, or a SAME convolution stay.
TEST(Optimizer, ZeroPadBeforeAConvolutionBecomesItsPadding) {
  struct Case {
    std::vector<int64_t> x, k;
    std::vector<int64_t> paddings;  // [[0,0],[top,bottom],[left,right],[0,0]], flattened
    std::vector<int64_t> strides;
    bool depthwise;
    std::string padding = "VALID";
  };
  const std::vector<Case> cases = {
      {{1, 9, 9, 3}, {3, 3, 3, 4}, {0, 0, 1, 1, 1, 1, 0, 0}, {1, 2, 2, 1}, false},
      {{2, 8, 6, 4}, {3, 3, 4, 1}, {0, 0, 0, 1, 0, 1, 0, 0}, {1, 2, 2, 1}, true},
      {{1, 7, 7, 3}, {3, 3, 3, 2}, {0, 0, 2, 0, 1, 3, 0, 0}, {1, 1, 1, 1}, true},
      {{1, 56, 56, 32}, {3, 3, 32, 1}, {0, 0, 0, 1, 0, 1, 0, 0}, {1, 2, 2, 1}, true},
      {{1, 57, 57, 24}, {3, 3, 24, 32}, {0, 0, 1, 1, 1, 1, 0, 0}, {1, 2, 2, 1}, false},
      {{1, 10, 10, 8}, {3, 3, 8, 8}, {0, 0, 1, 2, 0, 1, 0, 0}, {1, 1, 1, 1}, false, "EXPLICIT"}};
  int seed = 300;
  for (const Case& t : cases) {
    auto body = [&](Tensor x, Tensor k) {
      Tensor padded = execute_op("Pad", {x, constant(t.paddings, {4, 2})}, {})[0];
      std::map<std::string, OpAttrValue> attrs = {{"strides", t.strides}, {"padding", t.padding}};
      if (t.padding == "EXPLICIT") attrs["explicit_paddings"] = std::vector<int64_t>{0, 0, 1, 0, 2, 1, 0, 0};
      return execute_op(t.depthwise ? "DepthwiseConv2dNative" : "Conv2D", {padded, k}, attrs)[0];
    };
    auto f = function(body);
    const Tensor x = random_uniform(t.x, -3, 3, DType::Float32, seed++);
    const Tensor k = random_uniform(t.k, -1, 1, DType::Float32, seed++);
    auto counts = op_counts(f.get_concrete_function(x, k).optimized_graph());
    EXPECT_EQ(counts["Pad"], 0) << t.x[1];
    EXPECT_EQ(counts[t.depthwise ? "DepthwiseConv2dNative" : "Conv2D"], 1) << t.x[1];
    const std::vector<float> got = f(x, k).to_vector<float>(), want = body(x, k).to_vector<float>();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], want[i]) << "case " << t.x[1] << " element " << i;
  }
  auto count_after = [](auto body, std::vector<int64_t> paddings, const std::string& conv_padding) {
    auto f = function([&](Tensor x, Tensor k) { return body(x, k, paddings, conv_padding); });
    const int64_t depth = 2 + paddings[6] + paddings[7];  // the filter's: the padded input's channels
    return op_counts(
        f.get_concrete_function(TensorSpec{{1, 6, 6, 2}, DType::Float32}, TensorSpec{{3, 3, depth, 2}, DType::Float32})
            .optimized_graph())["Pad"];
  };
  auto pad_conv = [](Tensor x, Tensor k, std::vector<int64_t> p, const std::string& padding) {
    Tensor padded = execute_op("Pad", {x, constant(p, {4, 2})}, {})[0];
    return execute_op("Conv2D", {padded, k}, {{"strides", std::vector<int64_t>{1, 1, 1, 1}}, {"padding", padding}})[0];
  };
  auto pad_used_twice = [&](Tensor x, Tensor k, std::vector<int64_t> p, const std::string& padding) {
    Tensor padded = execute_op("Pad", {x, constant(p, {4, 2})}, {})[0];
    Tensor y =
        execute_op("Conv2D", {padded, k}, {{"strides", std::vector<int64_t>{1, 1, 1, 1}}, {"padding", padding}})[0];
    return std::make_tuple(y, padded);
  };
  EXPECT_EQ(count_after(pad_conv, {0, 0, 1, 1, 1, 1, 0, 0}, "VALID"), 0);
  EXPECT_EQ(count_after(pad_conv, {0, 0, 1, 1, 1, 1, 0, 0}, "SAME"), 1);
  EXPECT_EQ(count_after(pad_conv, {1, 0, 1, 1, 1, 1, 0, 0}, "VALID"), 1);  // the batch
  EXPECT_EQ(count_after(pad_conv, {0, 0, 1, 1, 1, 1, 0, 1}, "VALID"), 1);  // the channels
  EXPECT_EQ(count_after(pad_used_twice, {0, 0, 1, 1, 1, 1, 0, 0}, "VALID"), 1);
}

// Elementwise chains over a shape with an unknown batch (a served model's) fuse, with single
// elements and per-channel vectors as operands: a BatchNormalization and its ReLU before a
// convolution (DenseNet's), a swish, a residual connection. Channel counts that do and do not
// divide the kernel's chunk; batches of 1 and 7; bit for bit the eager ops.
TEST(Optimizer, ElementwiseChainsOverAnUnknownBatchFuse) {
  for (int64_t channels : {6, 64}) {
    auto body = [](Tensor x, Tensor scale, Tensor shift) { return relu(x * scale + shift); };
    auto f = function(body);
    auto cf = f.get_concrete_function(TensorSpec{{-1, 5, 3, channels}, DType::Float32},
                                      TensorSpec{{1, 1, 1, channels}, DType::Float32},
                                      TensorSpec{{channels}, DType::Float32});
    auto counts = op_counts(cf.optimized_graph());
    EXPECT_EQ(counts["KilnFusedElementwise"], 1) << channels;
    EXPECT_EQ(counts["Mul"] + counts["AddV2"] + counts["Relu"], 0) << channels;
    const Tensor scale = random_uniform({1, 1, 1, channels}, -2, 2, DType::Float32, 31);
    const Tensor shift = random_uniform({channels}, -1, 1, DType::Float32, 32);
    for (int64_t batch : {1, 7}) {
      const Tensor x = random_uniform({batch, 5, 3, channels}, -3, 3, DType::Float32, 33);
      const Tensor got = cf(x, scale, shift)[0];
      EXPECT_EQ(got.shape().dims(), (Dims{batch, 5, 3, channels}));
      EXPECT_EQ(got.to_vector<float>(), body(x, scale, shift).to_vector<float>()) << channels << " " << batch;
    }
  }
  auto swish = function([](Tensor x) { return x * sigmoid(x); });
  auto scf = swish.get_concrete_function(TensorSpec{{-1, 10}, DType::Float32});
  EXPECT_EQ(op_counts(scf.optimized_graph())["KilnFusedElementwise"], 1);
  const Tensor x = random_uniform({3, 10}, -5, 5, DType::Float32, 34);
  EXPECT_EQ(scf(x)[0].to_vector<float>(), (x * sigmoid(x)).to_vector<float>());
  // Two tensors of an unknown batch (a residual connection's AddV2 and its Relu) fuse too;
  // if their batches differ at run time, the fused kernel broadcasts as the separate ops do,
  // and fails where they fail.
  auto add = function([](Tensor a, Tensor b) { return relu(a + b); });
  auto acf = add.get_concrete_function(TensorSpec{{-1, 4}, DType::Float32}, TensorSpec{{-1, 4}, DType::Float32});
  EXPECT_EQ(op_counts(acf.optimized_graph())["KilnFusedElementwise"], 1);
  EXPECT_THROW(
      acf(random_uniform({2, 4}, -1, 1, DType::Float32, 39), random_uniform({3, 4}, -1, 1, DType::Float32, 40)),
      InvalidArgumentError);
  const Tensor a = random_uniform({1, 4}, -1, 1, DType::Float32, 35),
               b = random_uniform({3, 4}, -1, 1, DType::Float32, 36);
  const Tensor sum = acf(a, b)[0];
  EXPECT_EQ(sum.shape().dims(), (Dims{3, 4}));
  EXPECT_EQ(sum.to_vector<float>(), relu(a + b).to_vector<float>());
  // A known shape takes per-channel vectors too.
  auto known = function([](Tensor x, Tensor v) { return x * v + 1.0f; });
  auto kcf = known.get_concrete_function(TensorSpec{{2, 3, 5}, DType::Float32}, TensorSpec{{5}, DType::Float32});
  EXPECT_EQ(op_counts(kcf.optimized_graph())["KilnFusedElementwise"], 1);
  const Tensor kx = random_uniform({2, 3, 5}, -1, 1, DType::Float32, 37),
               kv = random_uniform({5}, -1, 1, DType::Float32, 38);
  EXPECT_EQ(kcf(kx, kv)[0].to_vector<float>(), (kx * kv + 1.0f).to_vector<float>());
}

// A layer norm as Keras writes it (moments with keepdims, then x * (rsqrt(var + eps) * gamma)
// + (beta - mean * that)): its one-per-row operands ([B, T, 1] against [B, T, C]) join the
// fused chain, with an unknown batch. Rows shorter than the kernel's chunk and longer (300
// crosses chunk ends); batches of 1 and 7; bit for bit the eager ops. More row operands than
// the kernel spreads on its stack are broadcast into copies first, with the same result.
TEST(Optimizer, RowOperandsOfALayerNormFuse) {
  auto layer_norm = [](Tensor x, Tensor gamma, Tensor beta) {
    const Tensor mean = reduce_mean(x, {-1}, true);
    const Tensor var = reduce_mean(squared_difference(x, mean), {-1}, true);
    const Tensor scale = rsqrt(var + 1e-3f) * gamma;
    return x * scale + (neg(mean) * scale + beta);
  };
  for (int64_t channels : {6, 300}) {
    auto cf =
        function(layer_norm)
            .get_concrete_function(TensorSpec{{-1, 5, channels}, DType::Float32},
                                   TensorSpec{{channels}, DType::Float32}, TensorSpec{{channels}, DType::Float32});
    auto counts = op_counts(cf.optimized_graph());
    EXPECT_EQ(counts["Mul"] + counts["AddV2"], 0) << channels;  // in the chain, or with rsqrt
    const Tensor gamma = random_uniform({channels}, 0.5, 2, DType::Float32, 41);
    const Tensor beta = random_uniform({channels}, -1, 1, DType::Float32, 42);
    for (int64_t batch : {1, 7}) {
      const Tensor x = random_uniform({batch, 5, channels}, -3, 3, DType::Float32, 43);
      const Tensor got = cf(x, gamma, beta)[0];
      EXPECT_EQ(got.shape().dims(), (Dims{batch, 5, channels}));
      EXPECT_EQ(got.to_vector<float>(), layer_norm(x, gamma, beta).to_vector<float>()) << channels << " " << batch;
    }
  }
  auto five_rows = [](Tensor x, Tensor r) {
    Tensor y = x;
    for (int k = 0; k < 5; ++k) y = y * (r + static_cast<float>(k)) + 1.0f;
    return y;
  };
  auto many = function(five_rows).get_concrete_function(TensorSpec{{-1, 3, 40}, DType::Float32},
                                                        TensorSpec{{-1, 3, 1}, DType::Float32});
  EXPECT_EQ(op_counts(many.optimized_graph())["Mul"], 0);
  const Tensor x = random_uniform({2, 3, 40}, -1, 1, DType::Float32, 44),
               r = random_uniform({2, 3, 1}, -1, 1, DType::Float32, 45);
  EXPECT_EQ(many(x, r)[0].to_vector<float>(), five_rows(x, r).to_vector<float>());
  // An unknown batch the row operand does not share at run time broadcasts, or fails, as the
  // separate ops do.
  const Tensor r1 = random_uniform({1, 3, 1}, -1, 1, DType::Float32, 46);
  EXPECT_EQ(many(x, r1)[0].to_vector<float>(), five_rows(x, r1).to_vector<float>());
  EXPECT_THROW(many(x, random_uniform({3, 3, 1}, -1, 1, DType::Float32, 47)), InvalidArgumentError);
}

// A BiasAdd the MatMul before it cannot take (Keras's Dense on a sequence has a Reshape
// between them) joins the elementwise chain after it as an AddV2 of a per-channel vector: the
// bias, the residual Add and the activation in one pass, bit for bit the eager ops.
TEST(Optimizer, ABiasAddJoinsTheElementwiseChainAfterIt) {
  auto body = [](Tensor x, Tensor w, Tensor b, Tensor skip) {
    const Tensor y = reshape(matmul(reshape(x, {-1, 8}), w), {-1, 5, 16});
    return relu(bias_add(y, b) + skip);
  };
  auto cf =
      function(body).get_concrete_function(TensorSpec{{-1, 5, 8}, DType::Float32}, TensorSpec{{8, 16}, DType::Float32},
                                           TensorSpec{{16}, DType::Float32}, TensorSpec{{-1, 5, 16}, DType::Float32});
  auto counts = op_counts(cf.optimized_graph());
  EXPECT_EQ(counts["BiasAdd"] + counts["AddV2"] + counts["Relu"], 0);
  EXPECT_EQ(counts["KilnFusedElementwise"], 1);
  const Tensor x = random_uniform({3, 5, 8}, -1, 1, DType::Float32, 51),
               w = random_uniform({8, 16}, -1, 1, DType::Float32, 52),
               b = random_uniform({16}, -1, 1, DType::Float32, 53),
               skip = random_uniform({3, 5, 16}, -1, 1, DType::Float32, 54);
  EXPECT_EQ(cf(x, w, b, skip)[0].to_vector<float>(), body(x, w, b, skip).to_vector<float>());
}

// Keras's Dense on a sequence (Tensordot) reshapes by a shape it builds at run time: Shape,
// a GatherV2 of the free dimensions, a ConcatV2 (or Pack) with the units. Its dimensions are
// known but the batch, as Grappler's shape refinement finds, so the BiasAdd and activation
// after it fuse; results match the eager ops. (The traced signature's output spec says
// [?, ?, 16], as TensorFlow's shape inference does: it does not evaluate a GatherV2.) A shape
// arithmetic kiln does not evaluate (an index out of range) leaves the shape unknown and
// fails at run time.
// The shape the optimized graph gives the last operation of `type`, as GraphView prints it.
std::string optimized_shape_of(const ConcreteFunction& cf, const std::string& type) {
  std::string shape = "none";
  for (const Operation& op : cf.optimized_graph().operations)
    if (op.type == type && !op.outputs.empty()) shape = op.outputs[0].substr(op.outputs[0].rfind(' ') + 1);
  return shape;
}

TEST(Optimizer, ShapesBuiltFromShapeTensorsAreKnownWhereTheyAre) {
  auto dense = [](Tensor x, Tensor w, Tensor b) {
    const Tensor free = gather(shape_of(x), std::vector<int64_t>{0, 1});
    const Tensor units = constant(std::vector<int32_t>{16}, {1});
    const Tensor y = reshape(matmul(reshape(x, {-1, 8}), w), concat({free, units}, 0));
    return relu(bias_add(y, b));
  };
  auto cf = function(dense).get_concrete_function(
      TensorSpec{{-1, 5, 8}, DType::Float32}, TensorSpec{{8, 16}, DType::Float32}, TensorSpec{{16}, DType::Float32});
  auto counts = op_counts(cf.optimized_graph());
  EXPECT_EQ(counts["BiasAdd"] + counts["Relu"], 0);
  EXPECT_EQ(counts["KilnFusedElementwise"], 1);
  EXPECT_EQ(optimized_shape_of(cf, "Reshape"), "[?,5,16]");
  ASSERT_EQ(cf.output_specs().size(), 1u);
  EXPECT_EQ(cf.output_specs()[0].shape.dims(), (Dims{-1, -1, 16}));
  const Tensor x = random_uniform({3, 5, 8}, -1, 1, DType::Float32, 61),
               w = random_uniform({8, 16}, -1, 1, DType::Float32, 62),
               b = random_uniform({16}, -1, 1, DType::Float32, 63);
  EXPECT_EQ(cf(x, w, b)[0].to_vector<float>(), dense(x, w, b).to_vector<float>());
  // A Pack of a gathered scalar and a constant: [-1, 40].
  auto packed = function([](Tensor x) {
    return reshape(x, stack({gather(shape_of(x), constant(int32_t{0})), constant(int32_t{40})}));
  });
  EXPECT_EQ(optimized_shape_of(packed.get_concrete_function(TensorSpec{{-1, 5, 8}, DType::Float32}), "Reshape"),
            "[?,40]");
  auto bad = function([](Tensor x) {
    const Tensor free = gather(shape_of(x), std::vector<int64_t>{0, 3});  // rank 3: no dimension 3
    return reshape(x, concat({free, constant(std::vector<int32_t>{-1}, {1})}, 0));
  });
  auto bcf = bad.get_concrete_function(TensorSpec{{-1, 5, 8}, DType::Float32});
  EXPECT_EQ(optimized_shape_of(bcf, "Reshape"), "[?,?,?]");
  EXPECT_THROW(bcf(x), InvalidArgumentError);
}

// What does not broadcast along the channels alone stays a separate op: a Sub whose
// convolution is the subtrahend, a product with a tensor of the output's shape, a vector
// along another dimension, and a BiasAdd after an op that is not part of the chain.
TEST(Optimizer, ConvolutionChainsStopAtWhatIsNotPerChannel) {
  const TensorSpec xs{{2, 6, 6, 3}, DType::Float32}, ks{{3, 3, 3, 4}, DType::Float32};
  auto counts_of = [&](auto body, TensorSpec third) {
    return op_counts(function(body).get_concrete_function(xs, ks, third).optimized_graph());
  };
  auto sub_from = counts_of(
      [](Tensor x, Tensor k, Tensor v) {
        return v - conv2d(x, k, {1, 1, 1, 1}, "SAME");
      },
      TensorSpec{{4}, DType::Float32});
  EXPECT_EQ(sub_from["KilnFusedConv2D"], 0);
  auto full = counts_of(
      [](Tensor x, Tensor k, Tensor v) {
        return conv2d(x, k, {1, 1, 1, 1}, "SAME") * v;
      },
      TensorSpec{{2, 6, 6, 4}, DType::Float32});
  EXPECT_EQ(full["KilnFusedConv2D"], 0);
  auto rows = counts_of(
      [](Tensor x, Tensor k, Tensor v) {
        return conv2d(x, k, {1, 1, 1, 1}, "SAME") * v;
      },
      TensorSpec{{1, 6, 1, 4}, DType::Float32});
  EXPECT_EQ(rows["KilnFusedConv2D"], 0);
  // The chain ends at the first step that is not per-channel; the steps before it fuse.
  auto partial = counts_of(
      [](Tensor x, Tensor k, Tensor v) {
        return relu((conv2d(x, k, {1, 1, 1, 1}, "SAME") + v) * 2.0f);
      },
      TensorSpec{{4}, DType::Float32});
  EXPECT_EQ(partial["KilnFusedConv2D"], 1);
  EXPECT_EQ(partial["Conv2D"] + partial["AddV2"], 0);
  EXPECT_EQ(partial["Mul"] + partial["KilnFusedElementwise"], 1);  // the scalar's Mul (and the Relu) outside
  const Tensor x = random_uniform({2, 6, 6, 3}, -3, 3, DType::Float32, 7);
  const Tensor k = random_uniform({3, 3, 3, 4}, -1, 1, DType::Float32, 8);
  const Tensor v = random_uniform({1, 6, 1, 4}, -1, 1, DType::Float32, 9);
  auto g = function([](Tensor x, Tensor k, Tensor v) { return relu(conv2d(x, k, {1, 1, 1, 1}, "SAME") * v); });
  EXPECT_EQ(g(x, k, v).to_vector<float>(), relu(conv2d(x, k, {1, 1, 1, 1}, "SAME") * v).to_vector<float>());
}
