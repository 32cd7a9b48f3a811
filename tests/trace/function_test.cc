// kiln::function: argument and return kinds, trace keys, diagnostics, footguns.
#include <sstream>

#include "test_util.h"

using namespace kiln;
using namespace kiln::testing;

TEST(Function, ArgumentAndReturnKinds) {
  auto f = function([](std::vector<Tensor> xs, double scale, std::string mode) -> std::tuple<Tensor, Tensor> {
    Tensor s = xs[0];
    for (size_t i = 1; i < xs.size(); ++i) s = s + xs[i];
    if (mode == "neg") s = -s;
    return {s * scale, reduce_sum(s)};
  });
  auto [a, b] = f(std::vector<Tensor>{constant(1.0), constant(2.0)}, 2.0, std::string("id"));
  EXPECT_EQ(a.item<double>(), 6.0);
  EXPECT_EQ(b.item<double>(), 3.0);
  auto [c, d] = f(std::vector<Tensor>{constant(1.0), constant(2.0)}, 2.0, std::string("neg"));
  EXPECT_EQ(c.item<double>(), -6.0);
  (void)d;
  EXPECT_EQ(f.tracing_count(), 2);
  (void)f(std::vector<Tensor>{constant(1.0), constant(2.0), constant(3.0)}, 2.0, std::string("neg"));
  EXPECT_EQ(f.tracing_count(), 3);
  auto log = f.trace_log();
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log[0], "first call");
  EXPECT_EQ(log[1], "argument arg2: value 'neg', cached traces have 'id'");
  EXPECT_EQ(log[2], "argument arg0: list of 3 tensors, cached traces have 2");
}

TEST(Function, VectorResultAndPair) {
  auto f = function([](Tensor x) { return std::vector<Tensor>{x, x * 2, x * 3}; });
  auto v = f(constant(1));
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[2].item<int32_t>(), 3);
  auto g = function([](Tensor x) { return std::pair<Tensor, Tensor>{x + 1, x - 1}; });
  auto [p, q] = g(constant(5));
  EXPECT_EQ(p.item<int32_t>() + q.item<int32_t>(), 10);
}

TEST(Function, VoidFunctionRunsItsStatefulOps) {
  auto f = function([](Tensor x) { print("value:", x); });
  ::testing::internal::CaptureStderr();
  f(constant(7));
  f(constant(8));
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "value: 7\nvalue: 8\n");
}

TEST(Function, RetraceReasonsNameTheArgument) {
  auto f = function([](Tensor x, int y) { return x * y; }, {.arg_names = {"x", "y"}});
  (void)f(constant<int32_t>({1, 2}), 2);
  (void)f(constant<int32_t>({1, 2}), 3);
  (void)f(constant<int32_t>({1, 2, 3}), 3);
  auto log = f.trace_log();
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log[1], "argument y: value 3, cached traces have 2");
  EXPECT_EQ(log[2], "argument x: shape (3,) does not match (2,)");
}

TEST(Function, RetracingWarningOnceWithReasons) {
  auto f = function([](Tensor x, int y) { return x + y; }, {.name = "hot"});
  ::testing::internal::CaptureStderr();
  for (int i = 0; i < 12; ++i) (void)f(constant(1), i);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("out of the last 10 calls to hot triggered kiln::function retracing"), std::string::npos);
  EXPECT_NE(err.find("argument arg1: value"), std::string::npos);
  EXPECT_EQ(err.find("WARNING", err.find("WARNING") + 1), std::string::npos);  // once
}

TEST(Function, CacheIsBoundedAndClearable) {
  auto f = function([](Tensor x, int y) { return x + y; }, {.max_traces = 3});
  for (int i = 0; i < 5; ++i) (void)f(constant(1), i);
  EXPECT_EQ(f.concrete_functions().size(), 3u);
  EXPECT_EQ(f.tracing_count(), 5);
  (void)f(constant(1), 0);  // evicted: traces again
  EXPECT_EQ(f.tracing_count(), 6);
  f.clear_cache();
  EXPECT_EQ(f.concrete_functions().size(), 0u);
}

TEST(Footguns, BoolOfASymbolicTensor) {
  auto f = function([](Tensor x) {
    if (x > 0) return x;  // C++ `if` on a traced value
    return -x;
  });
  expect_error<OperatorNotAllowedInGraphError>([&] { (void)f(constant(1)); }, "kiln::cond");
  EXPECT_EQ(f.tracing_count(), 0);
}

TEST(Footguns, LeakedSymbolicTensor) {
  Tensor leaked;
  auto f = function([&](Tensor x) {
    leaked = x * 2;
    return x;
  });
  (void)f(constant(1));
  EXPECT_TRUE(leaked.is_symbolic());
  EXPECT_EQ(leaked.name(), "mul:0");
  expect_error<InvalidArgumentError>([&] { (void)(leaked + 1); }, "being passed a symbolic tensor");
  expect_error<InvalidArgumentError>([&] { leaked.to_vector<int32_t>(); }, "is symbolic");
}

TEST(Footguns, HostValuesAreBakedIntoTheTrace) {
  int counter = 0;
  auto f = function([&](Tensor x) { return x + (++counter); });
  EXPECT_EQ(f(constant(0)).item<int32_t>(), 1);
  EXPECT_EQ(f(constant(0)).item<int32_t>(), 1);  // the C++ increment ran once, while tracing
  EXPECT_EQ(counter, 1);
}

TEST(Footguns, CapturedEagerTensorsAreFedAtCallTime) {
  Tensor w = constant<float>({1, 2});
  auto f = function([&](Tensor x) { return x * w; });
  expect_tensor<float>(f(constant<float>({3, 3})), {3, 6}, {2});
  auto cf = f.concrete_functions()[0];
  ASSERT_EQ(cf.captured_inputs().size(), 1u);
  EXPECT_EQ(cf.captured_inputs()[0].impl(), w.impl());
}

TEST(Footguns, ShapeErrorsRaiseAtTraceTime) {
  auto f = function([](Tensor x) { return x + constant<float>({1, 2, 3}); });
  expect_error<InvalidArgumentError>([&] { (void)f(constant<float>({1, 2})); }, "Incompatible shapes: [2] vs. [3]");
  expect_tensor<float>(f(constant<float>({1, 1, 1})), {2, 3, 4}, {3});
}

TEST(Footguns, RuntimeErrorsNameTheNode) {
  auto f = function([](Tensor x, Tensor i) { return gather(x, i); });
  expect_error<InvalidArgumentError>(
      [&] {
        (void)f(constant<float>({1, 2}), constant<int32_t>({5}));
      },
      "indices[0] = 5 is not in [0, 2) [Op:GatherV2]\n\t [[{{node GatherV2}}]]");
}

TEST(Function, UnknownDimsRunWithRuntimeShapes) {
  auto f = function(
      [](Tensor x) {
        return reshape(x, {-1, 2}) * 2;
      },
      {.input_signature = std::vector<TensorSpec>{{{-1}, DType::Float32}}});
  expect_tensor<float>(f(constant<float>({1, 2, 3, 4})), {2, 4, 6, 8}, {2, 2});
  expect_tensor<float>(f(constant<float>({1, 2})), {2, 4}, {1, 2});
  expect_error<InvalidArgumentError>(
      [&] {
        (void)f(constant<float>({1, 2, 3}));
      },
      "requested shape requires a multiple of 2");
}

TEST(Function, SymbolicTensorsPrintTheirNode) {
  std::string seen;
  auto f = function(
      [&](Tensor x) {
        seen = x.str();
        return x;
      },
      {.arg_names = {"x"}});
  (void)f(constant(1.0));
  EXPECT_EQ(seen, "Tensor(\"x:0\", shape=(), dtype=float64)");
}
