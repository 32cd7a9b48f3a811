// A ConcreteFunction called under a GradientTape runs its graph's ops one by one
// (trace/replay.h): the tape differentiates them, If/Case/While nodes included, and the
// variables the graph reads. Inside another trace the call is inlined.
#include "test_util.h"

namespace kiln {
namespace {

using testing::expect_error;
using testing::expect_near;

TEST(ConcreteFunctionTape, GradientThroughTheGraphsOps) {
  Variable w(constant<double>({2.0}, {1}));
  auto f = function([&](const Tensor& x) { return std::vector<Tensor>{x * x * w.read()}; });
  ConcreteFunction cf = f.get_concrete_function(constant<double>({1, 2}, {2}));
  Tensor x = constant<double>({3, 4}, {2});
  GradientTape tape;
  tape.watch(x);
  Tensor y = reduce_sum(cf({x})[0]);
  auto g = tape.gradient(y, {x});
  expect_near<double>(g[0], {12, 16}, {2});  // 2xw
  GradientTape tape2;
  Tensor y2 = reduce_sum(cf({x})[0]);
  auto gw = tape2.gradient(y2, {&w});
  expect_near<double>(gw[0], {25}, {1});  // sum x^2
}

TEST(ConcreteFunctionTape, CondAndWhileNodesAreReplayed) {
  auto f = function([](const Tensor& x) {
    Tensor y = cond(
        reduce_sum(x) > 0.0, [&] { return x * x; }, [&] { return x * 3.0; });
    auto out = while_loop([](const std::vector<Tensor>& v) { return reduce_sum(v[0] * v[0]) < 100.0; },
                          [](const std::vector<Tensor>& v) { return std::vector<Tensor>{v[0] * 2.0}; },
                          std::vector<Tensor>{y});
    return std::vector<Tensor>{out[0]};
  });
  ConcreteFunction cf = f.get_concrete_function(constant<double>({1}, {1}));
  for (double v : {3.0, -5.0}) {
    Tensor x = constant<double>({v}, {1});
    GradientTape tape;
    tape.watch(x);
    Tensor y = cf({x})[0];
    auto g = tape.gradient(y, {x});
    // x=3: y0=9 (81 < 100), doubled once to 18: dy/dx = 2 * 2x = 12. x=-5: y0=-15 (225 >= 100),
    // not doubled: dy/dx = 3.
    expect_near<double>(g[0], {v > 0 ? 12.0 : 3.0}, {1});
    expect_near<double>(y, {v > 0 ? 18.0 : -15.0}, {1});
  }
}

TEST(ConcreteFunctionTape, CalledInsideAnotherTraceIsInlined) {
  auto inner = function([](const Tensor& x) { return std::vector<Tensor>{x * 2.0 + 1.0}; });
  ConcreteFunction cf = inner.get_concrete_function(constant<double>({1, 2}, {2}));
  auto outer = function([&](const Tensor& x) { return std::vector<Tensor>{cf({x})[0] * x}; });
  expect_near<double>(outer(constant<double>({1, 2}, {2}))[0], {3, 10}, {2});
  ConcreteFunction outer_cf = outer.get_concrete_function(constant<double>({1, 2}, {2}));
  expect_near<double>(outer_cf({constant<double>({3, 4}, {2})})[0], {21, 36}, {2});
}

TEST(ConcreteFunctionTape, WrongArgumentsAreStillErrors) {
  auto f = function([](const Tensor& x) { return std::vector<Tensor>{x * 2.0}; });
  ConcreteFunction cf = f.get_concrete_function(constant<double>({1, 2}, {2}));
  GradientTape tape;
  expect_error<InvalidArgumentError>([&] { cf({constant<float>({1, 2}, {2})}); }, "expected float64");
  expect_error<InvalidArgumentError>([&] { cf({constant<double>({1, 2, 3}, {3})}); }, "expected float64");
  expect_error<InvalidArgumentError>([&] { cf({}); }, "expects 1 tensor arguments");
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// A loop that never ends, replayed under a tape, stops at the limits in force as a plan's does.
TEST(ConcreteFunctionTape, ARunLimitStopsAReplayedLoop) {
  auto f = function([](const Tensor& x) {
    return while_loop([](const std::vector<Tensor>& v) { return reduce_sum(v[0]) > -1.0; },
                      [](const std::vector<Tensor>& v) { return std::vector<Tensor>{v[0] + 1.0}; },
                      std::vector<Tensor>{x});
  });
  ConcreteFunction cf = f.get_concrete_function(constant<double>({1}, {1}));
  Tensor x = constant<double>({0}, {1});
  GradientTape tape;
  tape.watch(x);
  RunLimitsScope limits({.timeout = std::chrono::milliseconds(100)});
  EXPECT_THROW(cf({x}), DeadlineExceededError);
}

}  // namespace
}  // namespace kiln
