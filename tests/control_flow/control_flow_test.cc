// cond, while_loop, fori_loop, switch_case: eager and traced, and the guides' examples.
#include "test_util.h"

using namespace kiln;
using namespace kiln::testing;

namespace {
Tensor simple_relu_body(Tensor x) {
  return cond(
      greater(x, 0), [&] { return x; }, [&] { return zeros({}, x.dtype()); });
}
}  // namespace

TEST(Cond, SimpleReluBothBranchesEagerAndTraced) {
  auto simple_relu = function(simple_relu_body, {.arg_names = {"x"}});
  for (int v : {3, -3}) {
    EXPECT_EQ(simple_relu_body(constant(v)).item<int32_t>(), std::max(v, 0));
    EXPECT_EQ(simple_relu(constant(v)).item<int32_t>(), std::max(v, 0));
  }
  EXPECT_EQ(simple_relu.tracing_count(), 1);
  GraphView g = simple_relu.concrete_functions()[0].graph();
  const Operation* c = g.find("cond");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->type, "StatelessIf");
  EXPECT_EQ(c->inputs[0], "Greater:0");
  const std::string text = simple_relu.concrete_functions()[0].as_graph_def().str();
  EXPECT_NE(text.find("key: \"then_branch\"\n    value {\n      func {\n        name: \"cond_true_0\""),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("library {\n  function {\n    signature {\n      name: \"cond_true_0\""), std::string::npos);
  EXPECT_NE(text.find("key: \"Tcond\"\n    value {\n      type: DT_BOOL"), std::string::npos);
}

TEST(Cond, GuideSquareOrNegatedHalf) {
  // g(x): x*x if reduce_sum(x) > 0 else -x // 2
  auto g_body = [](Tensor x) {
    return cond(
        reduce_sum(x) > 0, [&] { return x * x; }, [&] { return floordiv(-x, 2); });
  };
  auto g = function(g_body);
  expect_tensor<int32_t>(g(constant<int32_t>({1, 2})), {1, 4}, {2});
  expect_tensor<int32_t>(g(constant<int32_t>({-3, -4})), {1, 2}, {2});
  expect_tensor<int32_t>(g_body(constant<int32_t>({-3, -4})), {1, 2}, {2});
}

TEST(Cond, OnlyTheTakenBranchRuns) {
  // The else branch gathers out of range: it raises only when taken.
  auto f = function([](Tensor x, Tensor i) {
    return cond(
        i < 1, [&] { return gather(x, std::vector<int64_t>{0}); }, [&] { return gather(x, expand_dims(i, 0)); });
  });
  expect_tensor<float>(f(constant<float>({7}), constant(0)), {7}, {1});
  expect_error<InvalidArgumentError>([&] { (void)f(constant<float>({7}), constant(5)); },
                                     "indices[0] = 5 is not in [0, 1)");
  expect_error<InvalidArgumentError>(
      [&] {
        (void)function([](Tensor x) {
          return cond(
              x > 0, [&] { return x; }, [&] { return x; });
        })(constant<int32_t>({1}));
      },
      "pred must be a scalar bool tensor");
}

TEST(Cond, BranchesMustAgree) {
  auto bad = function([](Tensor x) {
    return cond(
        x > 0, [&] { return x; }, [&] { return cast(x, DType::Float32); });
  });
  expect_error<InvalidArgumentError>([&] { (void)bad(constant(1)); },
                                     "output 0 is int32 in branch 0 and float32 in branch 1");
  // Result shapes: the most specific shape both agree on.
  auto shapes = function([](Tensor x) {
    return cond(
        reduce_sum(x) > 0, [&] { return x; },
        [&] {
          return concat({x, x}, 0);
        });
  });
  auto cf = shapes.get_concrete_function(constant<int32_t>({1, 2}));
  EXPECT_EQ(cf.output_specs()[0].shape, TensorShape({-1}));
  expect_tensor<int32_t>(shapes(constant<int32_t>({-1, -2})), {-1, -2, -1, -2}, {4});
}

TEST(Cond, NestedAndCapturing) {
  Tensor outside = constant(100);
  auto f = function([&](Tensor x) {
    return cond(
        x > 0,
        [&] {
          return cond(
              x > 10, [&] { return x + outside; }, [&] { return x * 2; });
        },
        [&] { return -x; });
  });
  EXPECT_EQ(f(constant(20)).item<int32_t>(), 120);
  EXPECT_EQ(f(constant(3)).item<int32_t>(), 6);
  EXPECT_EQ(f(constant(-3)).item<int32_t>(), 3);
  EXPECT_EQ(f.tracing_count(), 1);
}

TEST(Cond, TupleAndVoidResults) {
  auto f = function([](Tensor x) {
    auto [a, b] = cond(
        x > 0, [&] { return std::make_tuple(x, x + 1); }, [&] { return std::make_tuple(-x, x); });
    cond(
        x > 5, [&] { print("big", x); }, [] {});
    return a * b;
  });
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(f(constant(2)).item<int32_t>(), 6);
  EXPECT_EQ(f(constant(7)).item<int32_t>(), 56);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "big 7\n");
}

TEST(WhileLoop, EagerAndTracedAgree) {
  auto body = [](Tensor i, Tensor acc) { return std::make_tuple(i + 1, acc + i); };
  auto cond_fn = [](Tensor i, Tensor) { return i < 10; };
  auto [i0, s0] = while_loop(cond_fn, body, std::make_tuple(constant(0), constant(0)));
  EXPECT_EQ(s0.item<int32_t>(), 45);
  auto f = function([&](Tensor n) {
    auto [i, s] = while_loop([&](Tensor i, Tensor) { return i < n; }, body, std::make_tuple(constant(0), constant(0)));
    return s;
  });
  EXPECT_EQ(f(constant(10)).item<int32_t>(), 45);
  EXPECT_EQ(f(constant(100)).item<int32_t>(), 4950);
  EXPECT_EQ(f.tracing_count(), 1);
  EXPECT_EQ(f.concrete_functions()[0].graph().find("while")->type, "StatelessWhile");
  (void)i0;
}

// The cond borrows the loop variables it reads (moved in and back each iteration): a cond
// that returns a loop variable itself, or reads one the body forwards into its result, must
// still see and keep the right values.
TEST(WhileLoop, CondThatReturnsOrReadsALoopVariable) {
  auto f = function([](Tensor x) {
    auto [go, v, n] = while_loop([](Tensor go, Tensor, Tensor) { return go; },
                                 [](Tensor, Tensor v, Tensor n) {
                                   Tensor next = v * 2.0f;
                                   return std::make_tuple(reduce_sum(next) < 100.0f, next, n + 1);
                                 },
                                 std::make_tuple(constant(true), x, constant(0)));
    return std::make_tuple(go, v, n);
  });
  const auto [go, v, n] = f(constant<float>({1, 2}, {2}));
  EXPECT_FALSE(go.item<bool>());
  expect_tensor<float>(v, {64, 128}, {2});
  EXPECT_EQ(n.item<int32_t>(), 6);
  // A cond reading the vector the body doubles in place (buffer forwarding in the body).
  auto g = function([](Tensor x) {
    auto [v] = while_loop([](Tensor v) { return reduce_max(v) < 50.0f; },
                          [](Tensor v) { return std::make_tuple(v * 3.0f); }, std::make_tuple(x));
    return v;
  });
  expect_tensor<float>(g(constant<float>({1, 2, 0.5f}, {3})), {27, 54, 13.5f}, {3});
}

// A cond's computed result lives in the cond's frame (no allocation per iteration): steps
// after it (a random draw with a static shape) must not reuse its block before the loop
// reads it.
TEST(WhileLoop, CondResultInTheFrameSurvivesLaterSteps) {
  auto f = function([](Tensor limit) {
    auto [i, s] = while_loop(
        [&](Tensor, Tensor s) {
          Tensor go = reduce_sum(s * 2.0f) < limit;
          // Stateful, so kept and run after `go`: its int32 256 would read as false from a
          // block it took over.
          (void)random_uniform({1}, 256, 257, DType::Int32, 7);
          return go;
        },
        [](Tensor i, Tensor s) { return std::make_tuple(i + 1, s + 1.0f); }, std::make_tuple(constant(0), zeros({4})));
    return std::make_tuple(i, s);
  });
  for (float limit : {1.0f, 40.0f, 500.0f}) {
    int eager_i = 0;
    Tensor s = zeros({4});
    while (reduce_sum(s * 2.0f).item<float>() < limit) {
      s = s + 1.0f;
      ++eager_i;
    }
    const auto [i, traced_s] = f(constant(limit));
    EXPECT_EQ(i.item<int32_t>(), eager_i) << limit;
    EXPECT_EQ(traced_s.to_vector<float>(), s.to_vector<float>());
  }
}

TEST(WhileLoop, PowerWithATensorExponentTracesOnce) {
  auto power = function([](Tensor x, Tensor y) {
    Tensor result = eye(10, DType::Int32);
    auto [i, r] = while_loop([&](Tensor i, Tensor) { return i < y; },
                             [&](Tensor i, Tensor r) { return std::make_tuple(i + 1, matmul(x, r)); },
                             std::make_tuple(constant(0), result));
    return r;
  });
  Tensor x = random_uniform({10, 10}, -1, 2, DType::Int32, 3);
  Tensor unrolled = eye(10, DType::Int32);
  for (int k = 0; k < 7; ++k) unrolled = matmul(x, unrolled);
  EXPECT_EQ(power(x, constant(7)).to_vector<int32_t>(), unrolled.to_vector<int32_t>());
  (void)power(x, constant(100));
  (void)power(x, constant(3));
  EXPECT_EQ(power.tracing_count(), 1);
}

TEST(WhileLoop, MaximumIterationsAndShapeInvariants) {
  auto f = function([](Tensor x) {
    return while_loop([](Tensor v) { return reduce_sum(v) < 1000; }, [](Tensor v) { return v * 2; }, x,
                      {.maximum_iterations = 3});
  });
  expect_tensor<int32_t>(f(constant<int32_t>({1, 1})), {8, 8}, {2});
  expect_tensor<int32_t>(while_loop([](Tensor v) { return reduce_sum(v) < 1000; }, [](Tensor v) { return v * 2; },
                                    constant<int32_t>({1, 1}), {.maximum_iterations = 3}),
                         {8, 8}, {2});
  // A loop variable whose shape changes: an error naming it, unless shape_invariants relax it.
  auto grow = [](Tensor v) {
    return while_loop([](Tensor v) { return size_of(v) < 8; }, [](Tensor v) { return concat({v, v}, 0); }, v);
  };
  expect_error<InvalidArgumentError>(
      [&] { (void)function(grow)(constant<int32_t>({1})); },
      "loop variable 0 enters the loop with shape (1,), but has shape (2,) after one iteration");
  auto grow_ok = function([](Tensor v) {
    return while_loop([](Tensor v) { return size_of(v) < 8; },
                      [](Tensor v) {
                        return concat({v, v}, 0);
                      },
                      v, {.shape_invariants = {TensorShape({-1})}});
  });
  expect_tensor<int32_t>(grow_ok(constant<int32_t>({1})), {1, 1, 1, 1, 1, 1, 1, 1}, {8});
}

TEST(WhileLoop, VectorVarsAndDtypeChecks) {
  auto f = function([](Tensor x) {
    auto out = while_loop([](std::vector<Tensor> v) { return v[0] < 5; },
                          [](std::vector<Tensor> v) {
                            return std::vector<Tensor>{v[0] + 1, v[1] * 2.0f};
                          },
                          std::vector<Tensor>{constant(0), x});
    return out[1];
  });
  EXPECT_EQ(f(constant(1.0f)).item<float>(), 32.0f);
  auto bad = function([](Tensor x) {
    return while_loop([](Tensor v) { return v < 5; }, [](Tensor v) { return cast(v, DType::Int64); }, x);
  });
  expect_error<InvalidArgumentError>([&] { (void)bad(constant(1)); },
                                     "enters the loop as int32 but the body returns int64");
}

TEST(ForiLoop, SumsIndices) {
  auto body = [](Tensor i, Tensor acc) { return acc + i; };
  EXPECT_EQ(fori_loop(0, 5, body, constant(0)).item<int32_t>(), 10);
  auto f = function([&](Tensor n) { return fori_loop(0, n, body, constant(0)); });
  EXPECT_EQ(f(constant(5)).item<int32_t>(), 10);
  EXPECT_EQ(f(constant(101)).item<int32_t>(), 5050);
}

TEST(SwitchCase, OutOfRangeRunsTheLastBranch) {
  auto body = [](Tensor i) {
    return switch_case(i, {[] { return constant(10); }, [] { return constant(20); }, [] { return constant(30); }});
  };
  auto f = function(body);
  for (int i : {0, 1, 2, 7, -1}) {
    const int want = (i == 0 ? 10 : i == 1 ? 20 : 30);
    EXPECT_EQ(body(constant(i)).item<int32_t>(), want);
    EXPECT_EQ(f(constant(i)).item<int32_t>(), want);
  }
  EXPECT_EQ(f.concrete_functions()[0].graph().find("switch_case")->type, "StatelessCase");
}
