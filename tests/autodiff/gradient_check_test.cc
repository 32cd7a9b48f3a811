// Numerical gradient checks: for every differentiable op, the tape's gradient of
// sum(f(x) * w) (w fixed, not all ones, so each output element weighs differently) is compared
// with central differences in float64, eagerly and with f traced under kiln::function.
#include <cmath>

#include "kiln/op_registry.h"
#include "ops/op_list.h"
#include "test_util.h"
#include "trace/dispatch.h"

namespace kiln {
namespace {

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

// Deterministic values in [lo, hi), none within 0.05 of a kink at `avoid` (relu, abs, max).
Tensor values(std::vector<int64_t> shape, uint32_t seed, double lo = -2, double hi = 2) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(n);
  uint32_t s = seed * 2654435761u + 12345u;
  for (int64_t i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    double u = lo + (hi - lo) * ((s >> 8) / double(1u << 24));
    if (std::abs(u) < 0.05) u += 0.1;
    v[i] = u;
  }
  return constant<double>(v, shape);
}

Tensor with_element(const Tensor& t, int64_t i, double delta) {
  std::vector<double> v = t.to_vector<double>();
  v[i] += delta;
  return constant<double>(v, t.shape().dims());
}

double weighted_sum(const Tensor& y, const Tensor& w) { return reduce_sum(y * w).item<double>(); }

// The analytic gradient of sum(f(x) * w) by a tape around f (eager, or inside a function).
std::vector<Tensor> tape_gradient(const Fn& f, const std::vector<Tensor>& xs, const Tensor& w, bool traced) {
  auto body = [&f, &w](const std::vector<Tensor>& in) {
    GradientTape tape;
    for (const Tensor& x : in) tape.watch(x);
    Tensor loss = reduce_sum(f(in) * w);
    return tape.gradient(loss, in);
  };
  if (!traced) return body(xs);
  return function(body)(xs);
}

void check_gradient(const std::string& name, const Fn& f, const std::vector<Tensor>& xs, double tol = 1e-6) {
  SCOPED_TRACE(name);
  const Tensor y = f(xs);
  const Tensor w = values(y.shape().dims(), 99, 0.5, 1.5);
  const double h = 1e-5;
  for (bool traced : {false, true}) {
    SCOPED_TRACE(traced ? "traced" : "eager");
    const std::vector<Tensor> g = tape_gradient(f, xs, w, traced);
    ASSERT_EQ(g.size(), xs.size());
    for (size_t k = 0; k < xs.size(); ++k) {
      if (xs[k].dtype() != DType::Float64) continue;
      ASSERT_EQ(g[k].shape(), xs[k].shape()) << "input " << k;
      const std::vector<double> got = g[k].to_vector<double>();
      for (int64_t i = 0; i < xs[k].num_elements(); ++i) {
        std::vector<Tensor> plus = xs, minus = xs;
        plus[k] = with_element(xs[k], i, h);
        minus[k] = with_element(xs[k], i, -h);
        const double numeric = (weighted_sum(f(plus), w) - weighted_sum(f(minus), w)) / (2 * h);
        EXPECT_NEAR(got[i], numeric, tol * (1 + std::abs(numeric))) << "input " << k << " element " << i;
      }
    }
  }
}

// Binary ops, with the broadcasting patterns that exercise each reduction path.
void check_binary(const std::string& name, Tensor (*op)(const Tensor&, const Tensor&), double lo = -2, double hi = 2) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
      {{2, 3}, {2, 3}}, {{2, 3}, {3}}, {{2, 1}, {1, 3}}, {{}, {2, 3}}, {{4, 1, 3}, {2, 1}}};
  uint32_t seed = 1;
  for (const auto& [a, b] : shapes)
    check_gradient(name, [op](const std::vector<Tensor>& x) { return op(x[0], x[1]); },
                   {values(a, seed++, lo, hi), values(b, seed++, lo, hi)});
}

TEST(GradientCheck, BinaryOps) {
  check_binary("add", [](const Tensor& a, const Tensor& b) { return a + b; });
  check_binary("sub", [](const Tensor& a, const Tensor& b) { return a - b; });
  check_binary("mul", [](const Tensor& a, const Tensor& b) { return a * b; });
  check_binary(
      "div", [](const Tensor& a, const Tensor& b) { return a / b; }, 0.5, 2);
  check_binary(
      "pow", [](const Tensor& a, const Tensor& b) { return pow(a, b); }, 0.5, 2);
  check_binary("maximum", [](const Tensor& a, const Tensor& b) { return maximum(a, b); });
  check_binary("minimum", [](const Tensor& a, const Tensor& b) { return minimum(a, b); });
  check_binary("squared_difference", [](const Tensor& a, const Tensor& b) { return squared_difference(a, b); });
  check_binary(
      "atan2", [](const Tensor& a, const Tensor& b) { return atan2(a, b); }, 0.5, 2);
  check_binary(
      "floormod", [](const Tensor& a, const Tensor& b) { return floormod(a, b); }, 0.3, 0.9);
}

TEST(GradientCheck, Where) {
  const Tensor c = constant<bool>({true, false, true}, {3});
  check_gradient("where", [c](const std::vector<Tensor>& x) { return where(c, x[0], x[1]); },
                 {values({2, 3}, 1), values({3}, 2)});
  check_gradient("where scalar", [c](const std::vector<Tensor>& x) { return where(c, x[0], x[1]); },
                 {values({}, 3), values({2, 1}, 4)});
}

TEST(GradientCheck, UnaryOps) {
  const std::vector<std::pair<std::string, Tensor (*)(const Tensor&)>> any = {
      {"neg", [](const Tensor& x) { return -x; }},
      {"abs", [](const Tensor& x) { return abs(x); }},
      {"square", [](const Tensor& x) { return square(x); }},
      {"relu", [](const Tensor& x) { return relu(x); }},
      {"exp", [](const Tensor& x) { return exp(x); }},
      {"tanh", [](const Tensor& x) { return tanh(x); }},
      {"sigmoid", [](const Tensor& x) { return sigmoid(x); }},
      {"identity", [](const Tensor& x) { return identity(x); }},
      {"sign (zero gradient)", [](const Tensor& x) { return sign(x) * x; }},
      {"floor (zero gradient)", [](const Tensor& x) { return floor(x) + x; }},
      {"cast float32 round trip", [](const Tensor& x) { return cast(cast(x, DType::Float32), DType::Float64); }}};
  for (const auto& [name, op] : any)
    check_gradient(
        name, [op = op](const std::vector<Tensor>& x) { return op(x[0]); }, {values({2, 3}, 7)},
        name.rfind("cast", 0) == 0 ? 1e-3 : 1e-6);
  const std::vector<std::pair<std::string, Tensor (*)(const Tensor&)>> positive = {
      {"log", [](const Tensor& x) { return log(x); }},
      {"sqrt", [](const Tensor& x) { return sqrt(x); }},
      {"rsqrt", [](const Tensor& x) { return rsqrt(x); }}};
  for (const auto& [name, op] : positive)
    check_gradient(name, [op = op](const std::vector<Tensor>& x) { return op(x[0]); }, {values({2, 3}, 8, 0.5, 3)});
  // Both of relu6's kinks inside the range.
  check_gradient("relu6", [](const std::vector<Tensor>& x) { return relu6(x[0]); }, {values({3, 4}, 9, -3, 9)});
}

// The elementwise math rows (unary_math.cc), run by name, each over a range inside its domain
// and away from kinks.
TEST(GradientCheck, UnaryMathOps) {
  struct Case {
    const char* op;
    double lo, hi;
  };
  const Case cases[] = {{"Sin", -2, 2},      {"Cos", -2, 2},      {"Tan", -1, 1},       {"Asin", -0.9, 0.9},
                        {"Acos", -0.9, 0.9}, {"Atan", -2, 2},     {"Sinh", -2, 2},      {"Cosh", -2, 2},
                        {"Asinh", -2, 2},    {"Acosh", 1.2, 3},   {"Atanh", -0.9, 0.9}, {"Log1p", -0.5, 2},
                        {"Expm1", -2, 2},    {"Erf", -2, 2},      {"Erfc", -2, 2},      {"Erfinv", -0.9, 0.9},
                        {"Lgamma", 0.5, 3},  {"Softplus", -2, 2}, {"Softsign", -2, 2},  {"Elu", -2, 2},
                        {"Selu", -2, 2},     {"LeakyRelu", -2, 2}};
  uint32_t seed = 20;
  for (const Case& c : cases) {
    const std::string op = c.op;
    check_gradient(op, [op](const std::vector<Tensor>& x) { return execute_op(op, {x[0]})[0]; },
                   {values({2, 3}, seed++, c.lo, c.hi)});
  }
  // Nothing flows back through StopGradient: d/dx (x * stop(x)) is stop(x), eager and traced.
  const Tensor x = values({2, 3}, 40);
  for (bool traced : {false, true}) {
    const std::vector<Tensor> g =
        tape_gradient([](const std::vector<Tensor>& in) { return in[0] * execute_op("StopGradient", {in[0]})[0]; }, {x},
                      ones_like(x), traced);
    EXPECT_EQ(g[0].to_vector<double>(), x.to_vector<double>()) << (traced ? "traced" : "eager");
  }
  // IdentityN passes each gradient to its own input.
  check_gradient("IdentityN",
                 [](const std::vector<Tensor>& x) {
                   const std::vector<Tensor> y = execute_op("IdentityN", {x[0], x[1]});
                   return y[0] * y[1];
                 },
                 {values({2, 3}, 41), values({2, 3}, 42)});
}

// Padding, splitting and scans, run by name with constant paddings, sizes and axes.
TEST(GradientCheck, PadSplitAndScan) {
  const Tensor pads = constant<int32_t>({1, 2, 0, 1}, {2, 2});
  check_gradient("Pad",
                 [&](const std::vector<Tensor>& x) {
                   return execute_op("Pad", {x[0], pads})[0];
                 },
                 {values({2, 3}, 50)});
  check_gradient("PadV2",
                 [&](const std::vector<Tensor>& x) {
                   return execute_op("PadV2", {x[0], pads, constant(1.5)})[0];
                 },
                 {values({2, 3}, 51)});
  // Each part weighs differently; a part left unused contributes zeros.
  check_gradient("Split",
                 [](const std::vector<Tensor>& x) {
                   const std::vector<Tensor> p = execute_op("Split", {constant(1), x[0]}, {{"num_split", int64_t{3}}});
                   return p[0] * 2.0 + p[2];
                 },
                 {values({2, 6}, 52)});
  check_gradient("SplitV",
                 [](const std::vector<Tensor>& x) {
                   const std::vector<Tensor> p = execute_op(
                       "SplitV", {x[0], constant<int32_t>({1, -1}, {2}), constant(0)}, {{"num_split", int64_t{2}}});
                   return reduce_sum(p[0]) * p[1];
                 },
                 {values({3, 2}, 53)});
  check_gradient(
      "Unpack",
      [](const std::vector<Tensor>& x) {
        const std::vector<Tensor> p = execute_op("Unpack", {x[0]}, {{"num", int64_t{3}}, {"axis", int64_t{1}}});
        return p[0] * p[1] - p[2];
      },
      {values({2, 3, 2}, 54)});
  for (bool exclusive : {false, true})
    for (bool reverse : {false, true}) {
      const std::map<std::string, OpAttrValue> attrs = {{"exclusive", exclusive}, {"reverse", reverse}};
      check_gradient("Cumsum",
                     [&](const std::vector<Tensor>& x) {
                       return execute_op("Cumsum", {x[0], constant(1)}, attrs)[0];
                     },
                     {values({2, 4}, 55)});
      check_gradient("Cumprod",
                     [&](const std::vector<Tensor>& x) {
                       return execute_op("Cumprod", {x[0], constant(0)}, attrs)[0];
                     },
                     {values({3, 2}, 56, 0.5, 2)});
    }
}

TEST(GradientCheck, ReverseV2) {
  check_gradient("ReverseV2",
                 [](const std::vector<Tensor>& x) {
                   return execute_op("ReverseV2", {x[0], constant<int32_t>({0, 2}, {2})})[0];
                 },
                 {values({2, 3, 2}, 60)});
}

TEST(GradientCheck, Einsum) {
  const auto two = [](const char* equation) {
    return [equation](const std::vector<Tensor>& x) {
      return execute_op("Einsum", {x[0], x[1]}, {{"equation", std::string(equation)}, {"N", int64_t{2}}})[0];
    };
  };
  check_gradient("ij,jk->ik", two("ij,jk->ik"), {values({2, 3}, 70), values({3, 4}, 71)});
  check_gradient("bij,bkj->bik", two("bij,bkj->bik"), {values({2, 3, 4}, 72), values({2, 5, 4}, 73)});
  check_gradient("...ij,...jk->...ik", two("...ij,...jk->...ik"), {values({2, 2, 3}, 74), values({2, 3, 2}, 75)});
  check_gradient("ij->ji",
                 [](const std::vector<Tensor>& x) {
                   return execute_op("Einsum", {x[0]}, {{"equation", std::string("ij->ji")}, {"N", int64_t{1}}})[0];
                 },
                 {values({2, 3}, 76)});
  // A label summed in one operand only has no gradient yet: a clear error, not a wrong one.
  GradientTape tape;
  const Tensor a = values({2, 3}, 77), b = values({4}, 78);
  tape.watch(a);
  const Tensor y =
      reduce_sum(execute_op("Einsum", {a, b}, {{"equation", std::string("ij,k->ik")}, {"N", int64_t{2}}})[0]);
  EXPECT_THROW(tape.gradient(y, {a}), UnimplementedError);
}

TEST(GradientCheck, MatMul) {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      const std::vector<int64_t> a = ta ? std::vector<int64_t>{4, 3} : std::vector<int64_t>{3, 4};
      const std::vector<int64_t> b = tb ? std::vector<int64_t>{2, 4} : std::vector<int64_t>{4, 2};
      check_gradient("matmul " + std::to_string(ta) + std::to_string(tb),
                     [ta, tb](const std::vector<Tensor>& x) { return matmul(x[0], x[1], ta, tb); },
                     {values(a, 1), values(b, 2)});
    }
  check_gradient("batch matmul, broadcast batch", [](const std::vector<Tensor>& x) { return matmul(x[0], x[1]); },
                 {values({2, 1, 3, 4}, 3), values({3, 4, 2}, 4)});
  check_gradient("batch matmul, adjoints", [](const std::vector<Tensor>& x) { return matmul(x[0], x[1], true, true); },
                 {values({2, 4, 3}, 5), values({2, 2, 4}, 6)});
}

TEST(GradientCheck, BiasAdd) {
  check_gradient("bias_add rank 2", [](const std::vector<Tensor>& x) { return bias_add(x[0], x[1]); },
                 {values({3, 4}, 21), values({4}, 22)});
  check_gradient("bias_add rank 4", [](const std::vector<Tensor>& x) { return bias_add(x[0], x[1]); },
                 {values({2, 2, 3, 2}, 23), values({2}, 24)});
}

TEST(GradientCheck, Reductions) {
  const Tensor x = values({2, 3, 4}, 11);
  for (bool keep : {false, true}) {
    const std::string k = keep ? " keepdims" : "";
    check_gradient("sum all" + k, [keep](const std::vector<Tensor>& v) { return reduce_sum(v[0], std::nullopt, keep); },
                   {x});
    check_gradient("sum 1" + k, [keep](const std::vector<Tensor>& v) { return reduce_sum(v[0], {1}, keep); }, {x});
    check_gradient("mean 0,2" + k,
                   [keep](const std::vector<Tensor>& v) {
                     return reduce_mean(v[0], {0, -1}, keep);
                   },
                   {x});
    check_gradient("max 2" + k, [keep](const std::vector<Tensor>& v) { return reduce_max(v[0], {2}, keep); }, {x});
    check_gradient("min 0" + k, [keep](const std::vector<Tensor>& v) { return reduce_min(v[0], {0}, keep); }, {x});
    check_gradient("prod 1" + k, [keep](const std::vector<Tensor>& v) { return reduce_prod(v[0], {1}, keep); }, {x});
  }
  // Prod with zeros: one zero in a row gives that element the product of the rest.
  const Tensor z = constant<double>({0, 2, 3, 0, 0, 5, 1, 2, 4}, {3, 3});
  GradientTape tape;
  tape.watch(z);
  Tensor p = reduce_prod(z, {1});
  testing::expect_near<double>(tape.gradient(p, {z})[0], {6, 0, 0, 0, 0, 0, 8, 4, 2}, {3, 3});
  // Max with ties shares the gradient.
  const Tensor t = constant<double>({1, 3, 3}, {3});
  GradientTape tape2;
  tape2.watch(t);
  testing::expect_near<double>(tape2.gradient(reduce_max(t), {t})[0], {0, 0.5, 0.5}, {3});
}

TEST(GradientCheck, SoftmaxAndLoss) {
  check_gradient("softmax", [](const std::vector<Tensor>& v) { return softmax(v[0]); }, {values({3, 4}, 12)});
  check_gradient("softmax axis 0", [](const std::vector<Tensor>& v) { return softmax(v[0], 0); }, {values({3, 4}, 13)});
  check_gradient("log_softmax", [](const std::vector<Tensor>& v) { return log_softmax(v[0]); }, {values({3, 4}, 14)});
  const Tensor labels = constant<int32_t>({2, 0, 3}, {3});
  check_gradient(
      "sparse_softmax_cross_entropy_with_logits",
      [labels](const std::vector<Tensor>& v) { return sparse_softmax_cross_entropy_with_logits(labels, v[0]); },
      {values({3, 4}, 15)});
}

TEST(GradientCheck, ShapesAndLayout) {
  const Tensor x = values({2, 3, 2}, 21);
  check_gradient("reshape", [](const std::vector<Tensor>& v) { return reshape(v[0], {3, -1}); }, {x});
  check_gradient("expand_dims", [](const std::vector<Tensor>& v) { return expand_dims(v[0], 1); }, {x});
  check_gradient("squeeze", [](const std::vector<Tensor>& v) { return squeeze(v[0]); }, {values({2, 1, 3}, 22)});
  check_gradient("transpose", [](const std::vector<Tensor>& v) { return transpose(v[0], {2, 0, 1}); }, {x});
  check_gradient("concat",
                 [](const std::vector<Tensor>& v) {
                   return concat({v[0], v[1], v[0]}, 1);
                 },
                 {values({2, 2}, 23), values({2, 3}, 24)});
  check_gradient("stack",
                 [](const std::vector<Tensor>& v) {
                   return stack({v[0], v[1]}, 1);
                 },
                 {values({2, 3}, 25), values({2, 3}, 26)});
  check_gradient("tile", [](const std::vector<Tensor>& v) { return tile(v[0], {2, 3}); }, {values({2, 2}, 27)});
  check_gradient("broadcast_to",
                 [](const std::vector<Tensor>& v) {
                   return broadcast_to(v[0], {2, 3, 2});
                 },
                 {values({3, 1}, 28)});
}

TEST(GradientCheck, Slicing) {
  const Tensor x = values({4, 5}, 31);
  check_gradient("slice", [](const std::vector<Tensor>& v) { return slice(v[0], {1, 2}, {2, -1}); }, {x});
  check_gradient("strided_slice",
                 [](const std::vector<Tensor>& v) {
                   return strided_slice(v[0], {3, 0}, {0, 5}, {-1, 2});
                 },
                 {x});
  StridedSliceMasks shrink;
  shrink.shrink_axis_mask = 1;
  check_gradient("strided_slice shrink",
                 [shrink](const std::vector<Tensor>& v) {
                   return strided_slice(v[0], {2, 1}, {3, 4}, {1, 1}, shrink);
                 },
                 {x});
  check_gradient("gather axis 0, repeated", [](const std::vector<Tensor>& v) { return gather(v[0], {3, 0, 3}); }, {x});
  check_gradient("gather axis 1", [](const std::vector<Tensor>& v) { return gather(v[0], {4, 1}, 1); }, {x});
  check_gradient("gather 2-D indices axis 1",
                 [](const std::vector<Tensor>& v) {
                   return gather(v[0], constant<int32_t>({0, 1, 1, 4}, {2, 2}), 1);
                 },
                 {values({2, 5, 3}, 32)});
  const Tensor ids = constant<int32_t>({1, 0, 1}, {3});
  check_gradient("unsorted_segment_sum",
                 [ids](const std::vector<Tensor>& v) { return unsorted_segment_sum(v[0], ids, 3); },
                 {values({3, 2}, 33)});
}

TEST(GradientCheck, Fill) {
  check_gradient("fill",
                 [](const std::vector<Tensor>& v) {
                   Tensor dims = constant<int32_t>({2, 3}, {2});
                   return trace::dispatch1(ops::op::Fill(), {&dims, &v[0]});
                 },
                 {values({}, 41)});
}

// The gradient ops themselves (for second derivatives): an inner tape's gradient is a
// function of the upstream weights v[1], differentiated by the outer check.
TEST(GradientCheck, GradientOpsAreDifferentiable) {
  auto inner = [](Tensor (*op)(const Tensor&)) {
    return [op](const std::vector<Tensor>& v) {
      GradientTape tape;
      tape.watch(v[0]);
      return tape.gradient(reduce_sum(op(v[0]) * v[1]), {v[0]})[0];
    };
  };
  check_gradient("ReluGrad", inner([](const Tensor& x) { return relu(x); }), {values({2, 3}, 61), values({2, 3}, 62)});
  check_gradient("StridedSliceGrad", inner([](const Tensor& x) {
                   return strided_slice(x, {0, 2}, {2, 0}, {1, -1});
                 }),
                 {values({2, 3}, 63), values({2, 2}, 64)});
  check_gradient("tanh (second order)", inner([](const Tensor& x) { return tanh(x); }),
                 {values({3}, 65), values({3}, 66)});
}

// A composite: the MLP forward the training example uses, in float64.
TEST(GradientCheck, TwoLayerNetwork) {
  const Tensor labels = constant<int32_t>({1, 0}, {2});
  check_gradient("mlp",
                 [labels](const std::vector<Tensor>& v) {
                   Tensor h = relu(matmul(v[0], v[1]) + v[2]);
                   return reduce_mean(sparse_softmax_cross_entropy_with_logits(labels, matmul(h, v[3]) + v[4]));
                 },
                 {values({2, 4}, 51), values({4, 3}, 52), values({3}, 53), values({3, 2}, 54), values({2}, 55)});
}

}  // namespace
}  // namespace kiln
