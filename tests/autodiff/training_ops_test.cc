// TensorFlow's fused optimizer ops (ResourceApplyGradientDescent, ResourceApplyKerasMomentum,
// ResourceApplyAdam): values against TensorFlow's formulas for each dtype, in-place updates
// that never change a snapshot, every bad input, eager against traced, the GraphDef they
// print, and concurrent updates.
#include <cmath>
#include <thread>

#include "api/variable_handle.h"
#include "ops/op_list.h"
#include "test_util.h"
#include "trace/dispatch.h"

namespace kiln {
namespace {

using testing::expect_error;
using testing::expect_near;

ops::ResourceRef res(const Variable& v) { return ops::ResourceRef{v.handle()->state}; }

void apply(const ops::OpDef& op, const std::vector<Tensor>& inputs, ops::Attrs attrs) {
  trace::dispatch_list(op, inputs, std::move(attrs), op.name);
}
void gradient_descent(Variable& var, const Tensor& alpha, const Tensor& delta) {
  apply(ops::op::ResourceApplyGradientDescent(), {alpha, delta}, ops::Attrs{res(var), false});
}
void keras_momentum(Variable& var, Variable& accum, const Tensor& lr, const Tensor& grad, const Tensor& momentum,
                    bool nesterov = false) {
  apply(ops::op::ResourceApplyKerasMomentum(), {lr, grad, momentum}, ops::Attrs{res(var), res(accum), false, nesterov});
}
void adam(Variable& var, Variable& m, Variable& v, const std::vector<Tensor>& scalars, const Tensor& grad,
          bool nesterov = false) {
  std::vector<Tensor> in = scalars;
  in.push_back(grad);
  apply(ops::op::ResourceApplyAdam(), in, ops::Attrs{res(var), res(m), res(v), false, nesterov});
}

template <class T>
class TrainingOps : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(TrainingOps, FloatTypes);

TYPED_TEST(TrainingOps, GradientDescentValues) {
  using T = TypeParam;
  Variable var(constant<T>({1, 2, 3}, {3}));
  gradient_descent(var, constant(T(0.5)), constant<T>({2, 2, -2}, {3}));  // var -= alpha * delta
  testing::expect_tensor<T>(var.read(), {0, 1, 4}, {3});
}

TYPED_TEST(TrainingOps, KerasMomentumValues) {
  using T = TypeParam;
  // accum = accum * momentum - lr * grad; var += accum
  Variable var(constant<T>({1, 2}, {2})), accum(constant<T>({0.5, -1}, {2}));
  keras_momentum(var, accum, constant(T(0.1)), constant<T>({1, 2}, {2}), constant(T(0.9)));
  expect_near<T>(accum.read(), {0.35, -1.1}, {2}, 1e-6);
  expect_near<T>(var.read(), {1.35, 0.9}, {2}, 1e-6);
  // Nesterov: var += accum * momentum - lr * grad, with the new accum
  Variable w(constant<T>({1, 2}, {2})), a(constant<T>({0.5, -1}, {2}));
  keras_momentum(w, a, constant(T(0.1)), constant<T>({1, 2}, {2}), constant(T(0.9)), true);
  expect_near<T>(a.read(), {0.35, -1.1}, {2}, 1e-6);
  expect_near<T>(w.read(), {1 + 0.35 * 0.9 - 0.1, 2 - 1.1 * 0.9 - 0.2}, {2}, 1e-6);
}

TYPED_TEST(TrainingOps, AdamValues) {
  using T = TypeParam;
  const double lr = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-7;
  std::vector<double> w = {1, -2, 3}, m = {0.1, 0.2, -0.3}, v = {0.01, 0.02, 0.03};
  const std::vector<double> g = {0.5, -1, 2};
  const double b1p = b1 * b1, b2p = b2 * b2;  // the third step: powers of the step before
  Variable var(constant<T>({w.begin(), w.end()}, {3})), mv(constant<T>({m.begin(), m.end()}, {3})),
      vv(constant<T>({v.begin(), v.end()}, {3}));
  adam(var, mv, vv,
       {constant(T(b1p)), constant(T(b2p)), constant(T(lr)), constant(T(b1)), constant(T(b2)), constant(T(eps))},
       constant<T>({g.begin(), g.end()}, {3}));
  const double lr_t = lr * std::sqrt(1 - b2p) / (1 - b1p);
  for (int i = 0; i < 3; ++i) {
    m[i] += (g[i] - m[i]) * (1 - b1);
    v[i] += (g[i] * g[i] - v[i]) * (1 - b2);
    w[i] -= lr_t * m[i] / (std::sqrt(v[i]) + eps);
  }
  const double tol = std::is_same_v<T, float> ? 1e-5 : 1e-12;
  expect_near<T>(mv.read(), {T(m[0]), T(m[1]), T(m[2])}, {3}, tol);
  expect_near<T>(vv.read(), {T(v[0]), T(v[1]), T(v[2])}, {3}, tol);
  expect_near<T>(var.read(), {T(w[0]), T(w[1]), T(w[2])}, {3}, tol);
}

// The update is in place only when nobody holds the value: snapshots and views keep what
// they saw, eagerly and inside a function.
TEST(TrainingOps, UpdatesNeverChangeSnapshots) {
  Variable var(constant<float>({1, 2}, {2})), accum(constant<float>({0, 0}, {2}));
  Tensor snap = var.read(), accum_snap = accum.read();
  Tensor view = reshape(var.read(), {2, 1});
  keras_momentum(var, accum, constant(1.0f), constant<float>({1, 1}, {2}), constant(0.5f));
  EXPECT_EQ(snap.to_vector<float>(), (std::vector<float>{1, 2}));
  EXPECT_EQ(view.to_vector<float>(), (std::vector<float>{1, 2}));
  EXPECT_EQ(accum_snap.to_vector<float>(), (std::vector<float>{0, 0}));
  EXPECT_EQ(var.read().to_vector<float>(), (std::vector<float>{0, 1}));
  // A gradient that is the variable's own value (shares its buffer) reads the old value.
  Variable w(constant<float>({3, 4}, {2}));
  gradient_descent(w, constant(1.0f), w.read());
  EXPECT_EQ(w.read().to_vector<float>(), (std::vector<float>{0, 0}));
  auto f = function([&](const Tensor& g) {
    Tensor before = var.read();
    gradient_descent(var, constant(1.0f), g);
    return before;  // read before the update, in program order
  });
  const Tensor g = constant<float>({1, 1}, {2});
  EXPECT_EQ(f(g).to_vector<float>(), (std::vector<float>{0, 1}));
  EXPECT_EQ(f(g).to_vector<float>(), (std::vector<float>{-1, 0}));
  EXPECT_EQ(var.read().to_vector<float>(), (std::vector<float>{-2, -1}));
}

TEST(TrainingOps, BadInputs) {
  Variable var(constant<float>({1, 2}, {2}), "var"), accum(constant<float>({0, 0}, {2}), "accum");
  Variable wide(constant<float>({0, 0, 0}, {3})), d64(constant<double>({0, 0}, {2})),
      ints(constant<int32_t>({1, 2}, {2}));
  const Tensor lr = constant(0.1f), m = constant(0.9f), g = constant<float>({1, 1}, {2});
  expect_error<InvalidArgumentError>(
      [&] {
        keras_momentum(var, accum, constant<float>({1, 2}, {2}), g, m);
      },
      "lr is not a scalar: [2]");
  expect_error<InvalidArgumentError>([&] { keras_momentum(var, accum, lr, g, constant<float>({1}, {1})); },
                                     "momentum is not a scalar: [1]");
  expect_error<InvalidArgumentError>(
      [&] {
        keras_momentum(var, accum, lr, constant<float>({1, 1, 1}, {3}), m);
      },
      "var and grad do not have the same shape[2] [3]");
  expect_error<InvalidArgumentError>([&] { keras_momentum(var, wide, lr, g, m); },
                                     "var and accum do not have the same shape[2] [3]");
  expect_error<InvalidArgumentError>([&] { keras_momentum(var, var, lr, g, m); },
                                     "var and accum must be different variables");
  expect_error<InvalidArgumentError>([&] { keras_momentum(var, d64, lr, g, m); },
                                     "var and accum have different dtypes: float vs. double");
  expect_error<InvalidArgumentError>(
      [&] {
        keras_momentum(var, accum, lr, constant<double>({1, 1}, {2}), m);
      },
      "input #3(zero-based) was expected to be a float tensor but is a double tensor");
  expect_error<InvalidArgumentError>(
      [&] {
        gradient_descent(ints, constant(1), constant<int32_t>({1, 1}, {2}));
      },
      "only float and double variables can be trained");
  expect_error<InvalidArgumentError>(
      [&] {
        gradient_descent(var, constant<float>({1, 1}, {2}), g);
      },
      "alpha is not a scalar: [2]");
  Variable mv(constant<float>({0, 0}, {2})), vv(constant<float>({0, 0}, {2}));
  const Tensor s = constant(0.5f);
  expect_error<InvalidArgumentError>(
      [&] {
        adam(var, mv, vv, {s, s, s, s, constant<float>({1, 1}, {2}), s}, g);
      },
      "beta2 is not a scalar: [2]");
  expect_error<InvalidArgumentError>(
      [&] {
        adam(var, mv, mv, {s, s, s, s, s, s}, g);
      },
      "m and v must be different variables");
  expect_error<InvalidArgumentError>(
      [&] {
        adam(var, mv, var, {s, s, s, s, s, s}, g);
      },
      "var and v must be different variables");
  // A gradient of unknown shape at trace time is checked when the function runs.
  auto f = function([&](const Tensor& grad) { gradient_descent(var, constant(1.0f), grad); },
                    {.input_signature = std::vector<TensorSpec>{{{-1}, DType::Float32}}});
  expect_error<InvalidArgumentError>(
      [&] {
        f(constant<float>({1, 1, 1}, {3}));
      },
      "var and grad do not have the same shape[2] [3]");
  // Failed updates changed nothing.
  EXPECT_EQ(var.read().to_vector<float>(), (std::vector<float>{1, 2}));
  EXPECT_EQ(accum.read().to_vector<float>(), (std::vector<float>{0, 0}));
}

// The optimizers, float64, eagerly and as a function from the same start: same variables.
TEST(TrainingOps, OptimizersEagerAndTracedAgree) {
  for (int which = 0; which < 4; ++which) {
    SCOPED_TRACE(which);
    std::vector<std::vector<double>> finals;
    for (bool traced : {false, true}) {
      Variable w(constant<double>({0.5, -1, 2}, {3})), b(constant(0.25));
      SGD plain(0.1), momentum(0.1, 0.9), nesterov(0.1, 0.9, true);
      Adam adam_opt(0.05);
      auto step = [&](const Tensor& x) {
        GradientTape tape;
        Tensor loss = reduce_sum(square(w * x + b));
        auto grads = tape.gradient(loss, {&w, &b});
        std::vector<Variable*> vars = {&w, &b};
        if (which == 0) plain.apply_gradients(grads, vars);
        if (which == 1) momentum.apply_gradients(grads, vars);
        if (which == 2) nesterov.apply_gradients(grads, vars);
        if (which == 3) adam_opt.apply_gradients(grads, vars);
        return loss;
      };
      auto f = function(step);
      const Tensor x = constant<double>({1, 2, -1}, {3});
      for (int i = 0; i < 4; ++i) traced ? f(x) : step(x);
      std::vector<double> v = w.read().to_vector<double>();
      v.push_back(b.read().item<double>());
      finals.push_back(v);
    }
    for (size_t i = 0; i < finals[0].size(); ++i) EXPECT_NEAR(finals[0][i], finals[1][i], 1e-12) << i;
  }
}

// As TensorFlow writes them: the variables' handles first, then the data inputs, and the
// T, use_locking and use_nesterov attrs.
TEST(TrainingOps, GraphDefMatchesTensorFlow) {
  Variable w(constant<float>({1, 2}, {2}), "w");
  SGD opt(0.1, 0.9, true);
  auto f = function([&](const Tensor& g) { opt.apply_gradients({g}, {&w}); }, {.arg_names = {"g"}});
  const std::string text = f.get_concrete_function(constant<float>({1, 1}, {2})).as_graph_def().str();
  const size_t at = text.find("op: \"ResourceApplyKerasMomentum\"");
  ASSERT_NE(at, std::string::npos) << text;
  const std::string node = text.substr(text.rfind("node {", at), 700);
  const size_t var = node.find("input: \"w\""), accum = node.find("input: \"w_momentum\""),
               lr = node.find("input: \"learning_rate\""), grad = node.find("input: \"g\""),
               mom = node.find("input: \"momentum\"");
  ASSERT_TRUE(var != std::string::npos && accum != std::string::npos && lr != std::string::npos &&
              grad != std::string::npos && mom != std::string::npos)
      << node;
  EXPECT_TRUE(var < accum && accum < lr && lr < grad && grad < mom) << node;
  EXPECT_NE(node.find("key: \"use_nesterov\"\n    value {\n      b: true"), std::string::npos) << node;
  EXPECT_NE(node.find("key: \"T\"\n    value {\n      type: DT_FLOAT"), std::string::npos) << node;
}

// Concurrent updates of the same variables (two threads naming them in opposite roles)
// neither lose an update nor deadlock.
TEST(TrainingOps, ConcurrentUpdates) {
  Variable a(constant<float>({0, 0}, {2})), b(constant<float>({0, 0}, {2}));
  const Tensor one = constant(1.0f), zero = constant(0.0f), g = constant<float>({1, 1}, {2});
  constexpr int kSteps = 2000;
  std::thread t1([&] {
    for (int i = 0; i < kSteps; ++i) keras_momentum(a, b, one, g, zero);  // b = -1; a += -1
  });
  std::thread t2([&] {
    for (int i = 0; i < kSteps; ++i) keras_momentum(b, a, zero, g, one);  // a unchanged; b += a
  });
  t1.join();
  t2.join();
  EXPECT_EQ(a.read().to_vector<float>(), (std::vector<float>{-kSteps, -kSteps}));
  // With accum = identity (momentum 1, lr 0), t2 only adds a's current value to b: any
  // interleaving leaves b a finite, non-positive number.
  for (float x : b.read().to_vector<float>()) EXPECT_LE(x, 0.0f);
  Variable c(constant(0.0));
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) gradient_descent(c, constant(1.0), constant(-1.0));
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(c.read().item<double>(), 4000.0);
}

}  // namespace
}  // namespace kiln
