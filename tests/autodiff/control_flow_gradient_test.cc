// Gradients through cond, switch_case and while_loop, eagerly and traced (where a tape
// sees an If node and differentiates its branches, and unrolls loops it watches).
#include <cmath>

#include "test_util.h"

namespace kiln {
namespace {

using testing::expect_error;
using testing::expect_near;

// Runs body eagerly and under a function; both must agree with `want`.
void both_modes(const std::function<std::vector<Tensor>(const Tensor&)>& body, const Tensor& x,
                const std::vector<double>& want) {
  auto eager = body(x);
  expect_near<double>(eager[0], want, x.shape().dims());
  auto traced = function([&](const Tensor& a) { return body(a); })(x);
  expect_near<double>(traced[0], want, x.shape().dims());
}

std::vector<Tensor> cond_grad(const Tensor& x) {
  GradientTape tape;
  tape.watch(x);
  Tensor y = cond(
      reduce_sum(x) > 0.0, [&] { return x * x; }, [&] { return x * 3.0; });
  return tape.gradient(reduce_sum(y), {x});
}

TEST(ControlFlowGradient, CondTakesTheTakenBranch) {
  both_modes(cond_grad, constant<double>({1, 2}, {2}), {2, 4});    // 2x
  both_modes(cond_grad, constant<double>({-1, -2}, {2}), {3, 3});  // 3
}

TEST(ControlFlowGradient, CondWithVariableReadOutside) {
  Variable w(constant(2.0));
  auto step = [&](const Tensor& x) {
    GradientTape tape;
    Tensor wv = w.read();
    Tensor y = cond(
        x > 0.0, [&] { return wv * x; }, [&] { return wv * wv; });
    return tape.gradient(y, {&w});
  };
  for (double v : {1.5, -1.0}) {
    const Tensor x = constant(v);
    const double want = v > 0 ? v : 4.0;
    expect_near<double>(step(x)[0], {want}, {});
    expect_near<double>(function(step)(x)[0], {want}, {});
  }
}

TEST(ControlFlowGradient, SwitchCase) {
  auto body = [](const Tensor& x, int branch) {
    GradientTape tape;
    tape.watch(x);
    Tensor y = switch_case(constant(int32_t(branch)),
                           {[&] { return x * 2.0; }, [&] { return exp(x); }, [&] { return x * x * x; }});
    return tape.gradient(y, {x});
  };
  const Tensor x = constant(1.5);
  const std::vector<double> want = {2.0, std::exp(1.5), 3 * 1.5 * 1.5};
  for (int b = 0; b < 3; ++b) {
    expect_near<double>(body(x, b)[0], {want[b]}, {});
    auto f = function([&](const Tensor& a, const Tensor& i) {
      GradientTape tape;
      tape.watch(a);
      Tensor y = switch_case(i, {[&] { return a * 2.0; }, [&] { return exp(a); }, [&] { return a * a * a; }});
      return tape.gradient(y, {a});
    });
    expect_near<double>(f(x, constant(int32_t(b)))[0], {want[b]}, {});
  }
}

// x^5 by a loop with a trip count known when tracing: unrolled, so differentiable.
std::vector<Tensor> power_grad(const Tensor& x) {
  GradientTape tape;
  tape.watch(x);
  auto [i, p] = while_loop([](const Tensor& i, const Tensor&) { return i < 5; },
                           [&](const Tensor& i, const Tensor& p) { return std::make_tuple(i + 1, p * x); },
                           std::make_tuple(constant(int32_t(0)), ones_like(x)));
  (void)i;
  return tape.gradient(p, {x});
}

TEST(ControlFlowGradient, WhileLoopWithKnownTripCount) {
  both_modes(power_grad, constant<double>({1, 2}, {2}), {5, 80});  // 5x^4
}

TEST(ControlFlowGradient, ForiLoop) {
  auto body = [](const Tensor& x) {
    GradientTape tape;
    tape.watch(x);
    Tensor y = fori_loop(
        0, 3, [&](const Tensor&, const Tensor& acc) { return acc * x + 1.0; }, x);
    return tape.gradient(y, {x});  // y = x^4 + x^2 + x  (acc: x -> x^2+1 -> x^3+x+1 -> x^4+x^2+x+1)
  };
  both_modes(body, constant<double>({2}, {1}), {4 * 8 + 2 * 2 + 1});
}

// A data-dependent trip count with maximum_iterations: each unrolled iteration is a cond.
std::vector<Tensor> halve_grad(const Tensor& x) {
  GradientTape tape;
  tape.watch(x);
  WhileOptions opts;
  opts.maximum_iterations = 10;
  Tensor y =
      while_loop([](const Tensor& v) { return reduce_sum(v) > 1.0; }, [](const Tensor& v) { return v * 0.5; }, x, opts);
  return tape.gradient(reduce_sum(y), {x});
}

TEST(ControlFlowGradient, WhileLoopBoundedByMaximumIterations) {
  both_modes(halve_grad, constant<double>({3.0}, {1}), {0.25});  // 3 -> 1.5 -> 0.75: two halvings
  both_modes(halve_grad, constant<double>({0.5}, {1}), {1.0});   // no iteration
}

TEST(ControlFlowGradient, UnboundedDataDependentLoopIsAClearError) {
  auto f = function([](const Tensor& x) {
    GradientTape tape;
    tape.watch(x);
    Tensor y =
        while_loop([](const Tensor& v) { return reduce_sum(v) > 1.0; }, [](const Tensor& v) { return v * 0.5; }, x);
    return tape.gradient(reduce_sum(y), {x});
  });
  expect_error<UnimplementedError>([&] { f(constant<double>({3.0}, {1})); }, "maximum_iterations");
}

TEST(ControlFlowGradient, UnrolledLoopChecksTheBody) {
  auto f = function([](const Tensor& x) {
    GradientTape tape;
    tape.watch(x);
    return fori_loop(
        0, 2, [](const Tensor& i, const Tensor&) { return cast(i, DType::Float64); }, x);
  });
  expect_error<InvalidArgumentError>([&] { f(constant(1.0f)); },
                                     "enters the loop as float32 but the body returns float64");
}

TEST(ControlFlowGradient, EagerLoopIsRecordedIterationByIteration) {
  Tensor x = constant(3.0);
  GradientTape tape;
  tape.watch(x);
  Tensor y = while_loop([](const Tensor& v) { return v < 100.0; }, [](const Tensor& v) { return v * v; }, x);
  // 3 -> 9 -> 81 -> 6561: y = x^8, dy/dx = 8 x^7
  expect_near<double>(tape.gradient(y, {x})[0], {8 * std::pow(3.0, 7)}, {});
}

}  // namespace
}  // namespace kiln
