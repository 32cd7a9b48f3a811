// The examples of TensorFlow's "Introduction to graphs and tf.function" guide and the
// tf.function API page, in C++, with the guide's observable results.
#include <random>
#include <sstream>

#include "test_util.h"

using namespace kiln;
using namespace kiln::testing;

namespace {
Tensor a_regular_function(Tensor x, Tensor y, Tensor b) {
  x = matmul(x, y);
  x = x + b;
  return x;
}

// Captures std::cout while alive (host side effects of traced code).
struct CoutCapture {
  std::ostringstream buf;
  std::streambuf* old;
  CoutCapture() : old(std::cout.rdbuf(buf.rdbuf())) {}
  ~CoutCapture() { std::cout.rdbuf(old); }
  std::string str() const { return buf.str(); }
};
}  // namespace

TEST(Guide, RegularFunctionAndItsGraphAgree) {
  auto a_function_that_uses_a_graph = function(a_regular_function);
  Tensor x1 = constant<float>({1, 2}, {1, 2}), y1 = constant<float>({2, 3}, {2, 1}), b1 = constant(4.0f);
  Tensor orig_value = a_regular_function(x1, y1, b1);
  Tensor tf_function_value = a_function_that_uses_a_graph(x1, y1, b1);
  EXPECT_EQ(orig_value.to_vector<float>(), tf_function_value.to_vector<float>());
  EXPECT_EQ(tf_function_value.str(), "kiln.Tensor([[12.]], shape=(1, 1), dtype=float32)");
}

TEST(Guide, InnerAndOuterFunction) {
  auto inner_function = function(a_regular_function);
  auto outer_function = function([&](Tensor x) {
    Tensor y = constant<float>({2, 3}, {2, 1});
    Tensor b = constant(4.0f);
    return inner_function(x, y, b);
  });
  EXPECT_EQ(outer_function(constant<float>({1, 2}, {1, 2})).to_vector<float>(), std::vector<float>{12});
  // The inner Function was inlined into the outer graph: one graph, no separate trace.
  EXPECT_EQ(outer_function.tracing_count(), 1);
  EXPECT_EQ(inner_function.tracing_count(), 0);
  auto ops = outer_function.get_concrete_function(TensorSpec{{1, 2}, DType::Float32}).graph();
  EXPECT_NE(ops.find("MatMul"), nullptr);
}

TEST(Guide, MyReluIsPolymorphic) {
  CoutCapture out;
  auto my_relu = function(
      [](Tensor x) {
        std::cout << "Tracing my_relu(x) with: " << x << "\n";
        return maximum(constant(0.0), x);
      },
      {.name = "my_relu", .arg_names = {"x"}});
  EXPECT_EQ(my_relu(constant(5.5)).str(), "kiln.Tensor(5.5, shape=(), dtype=float64)");
  EXPECT_EQ(my_relu(std::vector<double>{1, -1}).str(), "kiln.Tensor([1. 0.], shape=(2,), dtype=float64)");
  EXPECT_EQ(my_relu(constant<double>({3, -3})).str(), "kiln.Tensor([3. 0.], shape=(2,), dtype=float64)");
  EXPECT_EQ(my_relu.tracing_count(), 3);
  // These do not create new graphs.
  EXPECT_EQ(my_relu(constant(-2.5)).str(), "kiln.Tensor(0.0, shape=(), dtype=float64)");
  EXPECT_EQ(my_relu(constant<double>({-1, 1})).str(), "kiln.Tensor([0. 1.], shape=(2,), dtype=float64)");
  EXPECT_EQ(my_relu.tracing_count(), 3);
  EXPECT_EQ(out.str(),
            "Tracing my_relu(x) with: Tensor(\"x:0\", shape=(), dtype=float64)\n"
            "Tracing my_relu(x) with: Tensor(\"Const:0\", shape=(2,), dtype=float64)\n"
            "Tracing my_relu(x) with: Tensor(\"x:0\", shape=(2,), dtype=float64)\n");
  EXPECT_EQ(my_relu.pretty_printed_concrete_signatures(),
            "my_relu(x)\n"
            "  Args:\n"
            "    x: float64 Tensor, shape=()\n"
            "  Returns:\n"
            "    float64 Tensor, shape=()\n"
            "\n"
            "my_relu(x=[1.0, -1.0])\n"
            "  Returns:\n"
            "    float64 Tensor, shape=(2,)\n"
            "\n"
            "my_relu(x)\n"
            "  Args:\n"
            "    x: float64 Tensor, shape=(2,)\n"
            "  Returns:\n"
            "    float64 Tensor, shape=(2,)\n");
}

TEST(Guide, GetMSEPrintsOnlyWhileTracing) {
  Tensor y_true = random_uniform({5}, 0, 10, DType::Int32, 1);
  Tensor y_pred = random_uniform({5}, 0, 10, DType::Int32, 2);
  auto get_MSE = function([](Tensor t, Tensor p) {
    std::cout << "Calculating MSE!\n";
    Tensor sq_diff = pow(t - p, 2);
    return reduce_mean(sq_diff);
  });
  {
    CoutCapture out;
    Tensor e1 = get_MSE(y_true, y_pred), e2 = get_MSE(y_true, y_pred), e3 = get_MSE(y_true, y_pred);
    EXPECT_EQ(out.str(), "Calculating MSE!\n");
    EXPECT_EQ(e1.to_vector<int32_t>(), e3.to_vector<int32_t>());
  }
  config::run_functions_eagerly(true);
  {
    CoutCapture out;
    for (int i = 0; i < 3; ++i) (void)get_MSE(y_true, y_pred);
    EXPECT_EQ(out.str(), "Calculating MSE!\nCalculating MSE!\nCalculating MSE!\n");
  }
  config::run_functions_eagerly(false);
  EXPECT_FALSE(config::functions_run_eagerly());
}

TEST(Guide, NonStrictExecutionSkipsUnusedOps) {
  auto unused_return_eager = [](Tensor x) {
    (void)gather(x, std::vector<int64_t>{1});  // unused
    return x;
  };
  expect_error<InvalidArgumentError>([&] { unused_return_eager(constant<float>({0})); },
                                     "indices[0] = 1 is not in [0, 1)");
  auto unused_return_graph = function(unused_return_eager);
  EXPECT_EQ(unused_return_graph(constant<float>({0})).str(), "kiln.Tensor([0.], shape=(1,), dtype=float32)");
}

TEST(Guide, PythonSideEffectRunsPerTrace) {
  CoutCapture out;
  auto a_function_with_python_side_effect = function([](Tensor x) {
    std::cout << "Tracing!\n";
    return x * x + constant(2);
  });
  std::ostringstream results;
  results << a_function_with_python_side_effect(constant(2)) << "\n";
  results << a_function_with_python_side_effect(constant(3)) << "\n";
  results << a_function_with_python_side_effect(2) << "\n";
  results << a_function_with_python_side_effect(3) << "\n";
  EXPECT_EQ(out.str(), "Tracing!\nTracing!\nTracing!\n");
  EXPECT_EQ(results.str(),
            "kiln.Tensor(6, shape=(), dtype=int32)\nkiln.Tensor(11, shape=(), dtype=int32)\n"
            "kiln.Tensor(6, shape=(), dtype=int32)\nkiln.Tensor(11, shape=(), dtype=int32)\n");
  EXPECT_EQ(a_function_with_python_side_effect.tracing_count(), 3);
}

TEST(Guide, PrintRunsOnEveryCall) {
  auto f = function([](Tensor x) {
    print("x is", x);
    return x + 1;
  });
  ::testing::internal::CaptureStderr();
  (void)f(constant<int32_t>({1, 2}));
  (void)f(constant<int32_t>({3, 4}));
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "x is [1 2]\nx is [3 4]\n");
  EXPECT_EQ(f.tracing_count(), 1);
}

TEST(Guide, InputSignatureWithUnknownRankTracesOnce) {
  auto f = function([](Tensor x) { return x + 1; },
                    {.input_signature = std::vector<TensorSpec>{{TensorShape::unknown(), DType::Int32}}});
  expect_tensor<int32_t>(f(constant(1)), {2}, {});
  expect_tensor<int32_t>(f(constant<int32_t>({1, 2})), {2, 3}, {2});
  expect_tensor<int32_t>(f(constant<int32_t>({1, 2, 3, 4}, {2, 2})), {2, 3, 4, 5}, {2, 2});
  EXPECT_EQ(f.tracing_count(), 1);
  expect_error<InvalidArgumentError>([&] { f(constant(1.0f)); }, "argument arg0 was float32 with shape ()");
}

TEST(Guide, InputSignatureWithPartialShape) {
  auto next_collatz =
      function([](Tensor x) { return x * 3 + 1; },
               {.name = "next_collatz", .input_signature = std::vector<TensorSpec>{{{-1}, DType::Int32}}});
  expect_tensor<int32_t>(next_collatz(constant<int32_t>({1, 2, 3})), {4, 7, 10}, {3});
  expect_tensor<int32_t>(next_collatz(constant<int32_t>({5})), {16}, {1});
  EXPECT_EQ(next_collatz.tracing_count(), 1);
  expect_error<InvalidArgumentError>(
      [&] {
        next_collatz(constant<int32_t>({1, 2}, {1, 2}));
      },
      "does not fit TensorSpec(shape=(None,), dtype=int32)");
  expect_error<InvalidArgumentError>([&] { next_collatz(constant<int64_t>({1})); }, "int64");
  EXPECT_NE(next_collatz.pretty_printed_concrete_signatures().find("arg0: int32 Tensor, shape=(None,)"),
            std::string::npos);
}

TEST(Guide, FunctionsDoNotShareTraces) {
  auto body = [](Tensor x) { return x * 2; };
  auto f1 = function(body), f2 = function(body);
  (void)f1(constant(1.0f));
  (void)f1(constant(2.0f));
  (void)f2(constant(1.0f));
  EXPECT_EQ(f1.tracing_count(), 1);
  EXPECT_EQ(f2.tracing_count(), 1);
  auto f1_copy = f1;  // copies share one cache
  (void)f1_copy(constant(3.0f));
  EXPECT_EQ(f1.tracing_count(), 1);
}

TEST(Guide, GetConcreteFunctionTracesOnce) {
  auto f = function([](Tensor x) { return x * x; }, {.arg_names = {"x"}});
  ConcreteFunction cf = f.get_concrete_function(TensorSpec{{}, DType::Float32});
  ConcreteFunction again = f.get_concrete_function(constant(2.0f));
  EXPECT_EQ(f.tracing_count(), 1);
  EXPECT_EQ(cf(constant(3.0f))[0].item<float>(), 9.0f);
  EXPECT_EQ(again.impl(), cf.impl());
  EXPECT_EQ(cf.input_specs()[0].name, "x");
  EXPECT_EQ(cf.output_specs()[0].shape, TensorShape({}));
  expect_error<InvalidArgumentError>([&] { cf(constant(3.0)); }, "argument x expected float32 ()");
}

TEST(Guide, ReduceRetracingGeneralizesShapes) {
  auto f = function([](Tensor x) { return x + 1; }, {.reduce_retracing = true});
  (void)f(constant<int32_t>({1, 2, 3}));
  (void)f(constant<int32_t>({1, 2, 3, 4, 5}));
  (void)f(constant<int32_t>({1, 2, 3, 4, 5, 6, 7}));
  expect_tensor<int32_t>(f(constant<int32_t>({1, 2, 3, 4, 5, 6, 7, 8, 9})), {2, 3, 4, 5, 6, 7, 8, 9, 10}, {9});
  EXPECT_EQ(f.tracing_count(), 2);
  auto cfs = f.concrete_functions();
  ASSERT_EQ(cfs.size(), 2u);
  EXPECT_EQ(cfs[0].input_specs()[0].shape, TensorShape({3}));
  EXPECT_EQ(cfs[1].input_specs()[0].shape, TensorShape({-1}));
}

TEST(Guide, PowerAgreesEagerAndAsGraph) {
  auto power = [](Tensor x, int y) {
    Tensor result = eye(10, DType::Int32);
    for (int i = 0; i < y; ++i) result = matmul(x, result);
    return result;
  };
  Tensor x = random_uniform({10, 10}, -1, 2, DType::Int32, 42);
  auto power_as_graph = function(power);
  EXPECT_EQ(power(x, 100).to_vector<int32_t>(), power_as_graph(x, 100).to_vector<int32_t>());
  (void)power_as_graph(x, 100);
  (void)power_as_graph(x, 50);
  EXPECT_EQ(power_as_graph.tracing_count(), 2);
}

// The tf.function API page's examples that need no control flow or variables.
TEST(ApiPage, FunctionAndGraphAgreeAndCapture) {
  auto f = [](Tensor x, Tensor y) { return reduce_mean(mul(pow(x, 2.0f), 3.0f) + y); };
  auto g = function(f);
  Tensor x = constant<float>({2, 3}, {1, 2}), y = constant<float>({3, -2}, {1, 2});
  EXPECT_EQ(f(x, y).item<float>(), g(x, y).item<float>());
  // Tensors used by the function are captured in the graph.
  auto h = function([&] { return f(x, y); });
  EXPECT_EQ(h().item<float>(), f(x, y).item<float>());
  EXPECT_EQ(h.concrete_functions()[0].captured_inputs().size(), 2u);
}

TEST(ApiPage, OneGraphPerShape) {
  auto f = function([](Tensor x) { return add(x, 1.0f); });
  (void)f(constant(1.0f));
  (void)f(constant<float>({1, 1}));
  (void)f(constant<float>({3}, {1, 1}));
  EXPECT_EQ(f.tracing_count(), 3);
  auto g = function([](Tensor x) { return add(x, 1.0f); },
                    {.input_signature = std::vector<TensorSpec>{{TensorShape::unknown(), DType::Float32}}});
  (void)g(constant(1.0f));
  (void)g(constant<float>({1, 1}));
  (void)g(constant<float>({3}, {1, 1}));
  EXPECT_EQ(g.tracing_count(), 1);
}

TEST(ApiPage, HostRandomnessIsBakedInWhileKilnRandomnessIsNot) {
  std::mt19937 host_rng(1);
  auto add_noise = [&] {
    std::normal_distribution<float> normal;
    std::vector<float> noise(25);
    for (float& v : noise) v = normal(host_rng);  // like np.random.randn: runs in C++, at trace time
    return eye(5) + constant<float>(noise, {5, 5});
  };
  auto traced = function(add_noise);
  EXPECT_EQ(traced().to_vector<float>(), traced().to_vector<float>());  // a constant of the graph
  EXPECT_NE(add_noise().to_vector<float>(), add_noise().to_vector<float>());
  auto kiln_noise = function([] { return eye(5) + random_normal({5, 5}); });
  EXPECT_NE(kiln_noise().to_vector<float>(), kiln_noise().to_vector<float>());  // a random op runs per call
}
