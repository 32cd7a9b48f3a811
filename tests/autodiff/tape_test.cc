// GradientTape semantics (TensorFlow's autodiff guide), eagerly and inside functions.
#include "test_util.h"

namespace kiln {
namespace {

using testing::expect_error;
using testing::expect_near;
using testing::expect_tensor;

TEST(GradientTape, GuideSquare) {
  // x = tf.Variable(3.0); y = x**2; dy/dx = 6
  Variable x(constant(3.0f));
  GradientTape tape;
  Tensor y = x * x;
  auto g = tape.gradient(y, {&x});
  expect_tensor<float>(g[0], {6.0f}, {});
}

TEST(GradientTape, GuideDenseLayer) {
  // w: (3,2), b: (2,), x: [[1,2,3]]; loss = reduce_mean(y**2); gradients have the variables' shapes
  Variable w(constant<float>({0.1f, -0.2f, 0.3f, 0.4f, -0.5f, 0.6f}, {3, 2}), "w");
  Variable b(constant<float>({0.5f, -0.5f}, {2}), "b");
  Tensor x = constant<float>({1, 2, 3}, {1, 3});
  GradientTape tape(true);
  Tensor y = matmul(x, w) + b;
  Tensor loss = reduce_mean(y * y);
  auto g = tape.gradient(loss, {&w, &b});
  // y = [0.1+0.6-1.5+0.5, -0.2+0.8+1.8-0.5] = [-0.3, 1.9]; dloss/dy = y (mean over 2 of y^2)
  expect_near<float>(g[1], {-0.3f, 1.9f}, {2}, 1e-5);
  expect_near<float>(g[0], {-0.3f, 1.9f, -0.6f, 3.8f, -0.9f, 5.7f}, {3, 2}, 1e-5);
  // Persistent: a second gradient from the same tape.
  auto g2 = tape.gradient(loss, std::vector<Variable*>{&b});
  expect_near<float>(g2[0], {-0.3f, 1.9f}, {2}, 1e-5);
}

TEST(GradientTape, WatchConstantTensor) {
  Tensor x = constant(3.0);
  GradientTape tape;
  tape.watch(x);
  Tensor y = x * x;
  expect_tensor<double>(tape.gradient(y, {x})[0], {6.0}, {});
}

TEST(GradientTape, UnwatchedConstantGetsZeros) {
  Tensor x = constant<float>({1, 2}, {2});
  GradientTape tape;
  Tensor y = x * x;
  expect_tensor<float>(tape.gradient(y, {x})[0], {0, 0}, {2});
}

TEST(GradientTape, NonScalarTargetIsSummed) {
  Tensor x = constant<float>({1, 2, 3}, {3});
  GradientTape tape;
  tape.watch(x);
  Tensor y = x * x;  // d sum(y) / dx = 2x
  expect_tensor<float>(tape.gradient(y, {x})[0], {2, 4, 6}, {3});
}

TEST(GradientTape, UnconnectedVariableGetsZeros) {
  Variable a(constant<float>({1, 2}, {2}));
  Variable unused(constant<float>({5, 5, 5}, {3}));
  GradientTape tape;
  Tensor y = reduce_sum(a * 2.0f);
  auto g = tape.gradient(y, {&a, &unused});
  expect_tensor<float>(g[0], {2, 2}, {2});
  expect_tensor<float>(g[1], {0, 0, 0}, {3});
}

TEST(GradientTape, UnconnectedNoneGivesEmptyTensors) {
  Variable a(constant(1.0f)), unused(constant(2.0f));
  Tensor x = constant(3.0f);
  GradientTape tape(true);
  Tensor y = a * 2.0f;
  auto g = tape.gradient(y, {&a, &unused}, UnconnectedGradients::kNone);
  EXPECT_TRUE(g[0].defined());
  EXPECT_FALSE(g[1].defined());
  EXPECT_FALSE(tape.gradient(y, {x}, UnconnectedGradients::kNone)[0].defined());
}

TEST(GradientTape, IntegerSourceGetsZeros) {
  Tensor x = constant<int32_t>({1, 2}, {2});
  GradientTape tape;
  tape.watch(x);
  Tensor y = x * x;
  expect_tensor<int32_t>(tape.gradient(y, {x})[0], {0, 0}, {2});
}

TEST(GradientTape, NonPersistentTapeIsUsedOnce) {
  Tensor x = constant(2.0f);
  GradientTape tape;
  tape.watch(x);
  Tensor y = x * x;
  tape.gradient(y, {x});
  expect_error<FailedPreconditionError>([&] { tape.gradient(y, {x}); }, "non-persistent GradientTape");
}

TEST(GradientTape, OpsBeforeTheTapeAreNotRecorded) {
  Variable v(constant(2.0f));
  Tensor before = v * 3.0f;  // read before the tape exists
  GradientTape tape;
  Tensor y = before * v;  // only the second read is recorded
  expect_tensor<float>(tape.gradient(y, {&v})[0], {6.0f}, {});
}

TEST(GradientTape, ValueReadBeforeTheTapeIsAConstant) {
  Variable v(constant(2.0f));
  Tensor before = v.read();  // not recorded: d(before * v)/dv is before, not 2v
  GradientTape tape;
  Tensor y = before * v;
  expect_tensor<float>(tape.gradient(y, {&v})[0], {2.0f}, {});
}

TEST(GradientTape, VariableUsedTwiceAccumulates) {
  Variable v(constant(3.0f));
  GradientTape tape;
  Tensor y = v * v + v;  // 2v + 1
  expect_tensor<float>(tape.gradient(y, {&v})[0], {7.0f}, {});
}

TEST(GradientTape, SecondOrderWithNestedTapes) {
  Tensor x = constant(3.0);
  GradientTape outer;
  outer.watch(x);
  Tensor dy;
  {
    GradientTape inner;
    inner.watch(x);
    Tensor y = x * x * x;
    dy = inner.gradient(y, {x})[0];  // 3x^2 = 27
  }
  expect_tensor<double>(dy, {27.0}, {});
  expect_tensor<double>(outer.gradient(dy, {x})[0], {18.0}, {});  // 6x
}

TEST(GradientTape, EmptyInputsAreErrors) {
  GradientTape tape(true);
  expect_error<InvalidArgumentError>([&] { tape.watch(Tensor()); }, "empty Tensor");
  Tensor x = constant(1.0f);
  expect_error<InvalidArgumentError>([&] { tape.gradient(Tensor(), {x}); }, "target is an empty Tensor");
  expect_error<InvalidArgumentError>([&] { tape.gradient(x, {Tensor()}); }, "source is an empty Tensor");
  expect_error<InvalidArgumentError>([&] { tape.gradient(x, std::vector<Variable*>{nullptr}); }, "null");
}

TEST(GradientTape, OutputGradientWeightsTheTarget) {
  Tensor x = constant<float>({1, 2}, {2});
  GradientTape tape;
  tape.watch(x);
  Tensor y = x * x;
  expect_tensor<float>(tape.gradient(y, {x}, constant<float>({1, 10}, {2}))[0], {2, 40}, {2});
}

// ---- the same program eagerly and as a function ----

std::vector<Tensor> square_step(Variable& w, const Tensor& x) {
  GradientTape tape;
  Tensor loss = reduce_sum(square(matmul(x, w)));
  auto g = tape.gradient(loss, {&w});
  return {loss, g[0]};
}

TEST(GradientTape, InsideAFunctionMatchesEager) {
  Variable w(constant<float>({1, 2, 3, 4}, {2, 2}));
  Tensor x = constant<float>({1, -1, 2, 0.5f}, {2, 2});
  auto eager = square_step(w, x);
  auto f = function([&](const Tensor& xs) { return square_step(w, xs); });
  auto traced = f(x);
  expect_near<float>(traced[0], eager[0].to_vector<float>(), {}, 1e-6);
  expect_near<float>(traced[1], eager[1].to_vector<float>(), {2, 2}, 1e-6);
  // The gradient is part of the traced graph: a second call with a new w uses the new value.
  w.assign(constant<float>({0, 1, 0, 1}, {2, 2}));
  auto eager2 = square_step(w, x);
  auto traced2 = f(x);
  expect_near<float>(traced2[1], eager2[1].to_vector<float>(), {2, 2}, 1e-6);
}

TEST(GradientTape, TrainingStepUnderFunctionUpdatesVariables) {
  Variable w(constant<float>({0.5f}, {1}));
  auto step = function([&](const Tensor& x, const Tensor& y) {
    GradientTape tape;
    Tensor loss = reduce_mean(square(x * w - y));
    auto g = tape.gradient(loss, {&w});
    w.assign_sub(g[0] * 0.1f);
    return loss;
  });
  Tensor x = constant<float>({1, 2, 3}, {3}), y = constant<float>({2, 4, 6}, {3});
  float first = step(x, y).item<float>(), last = first;
  for (int i = 0; i < 20; ++i) last = step(x, y).item<float>();
  EXPECT_LT(last, first * 0.01f);
  EXPECT_NEAR(w.read().to_vector<float>()[0], 2.0f, 0.05f);
}

// TensorFlow differentiates a tf.function called under a tape; here the Function runs its
// ops one by one while an eager tape records, so the tape sees them.
TEST(GradientTape, FunctionCalledUnderAnEagerTape) {
  Variable w(constant<float>({2, 3}, {2}));
  auto f = function([&](const Tensor& x) { return reduce_sum(x * w); });
  Tensor x = constant<float>({1, 4}, {2});
  (void)f(x);  // traced and cached before the tape
  GradientTape tape;
  tape.watch(x);
  Tensor y = f(x);
  auto g = tape.gradient(y, {x});
  expect_tensor<float>(g[0], {2, 3}, {2});
  GradientTape tape2;
  expect_tensor<float>(tape2.gradient(f(x), {&w})[0], {1, 4}, {2});
}

TEST(GradientTape, ConcreteFunctionOnAWatchedInputIsDifferentiated) {
  auto f = function([](const Tensor& x) { return x * x; });
  Tensor x = constant(3.0f);
  ConcreteFunction cf = f.get_concrete_function(x);
  GradientTape tape;
  tape.watch(x);
  Tensor y = cf(x)[0];  // its ops run one by one under the tape (trace/replay.h)
  expect_near<float>(tape.gradient(y, {x})[0], {6.0f}, {});
  Tensor other = constant(1.0f);
  EXPECT_NO_THROW(cf(other));  // unwatched inputs run as usual
}

TEST(GradientTape, GradientMustBeTakenWhereTheTapeWasCreated) {
  std::unique_ptr<GradientTape> tape;  // made inside the trace, asked outside it
  auto f = function([&](const Tensor& a) {
    tape = std::make_unique<GradientTape>();
    tape->watch(a);
    return a * a;
  });
  Tensor x = constant(2.0f);
  (void)f(x);
  expect_error<InvalidArgumentError>([&] { tape->gradient(x, {x}); }, "where the tape was created");
}

TEST(Tape, StopsRecordingWatchesChosenVariablesAndMixesSources) {
  Variable x(constant(std::vector<float>{1, 2}, {2})), w(constant(3.0f));
  Tensor c = constant(std::vector<float>{4, 5}, {2});
  GradientTape tape(/*persistent=*/true, /*watch_accessed_variables=*/false);
  tape.watch(x);
  tape.watch(c);
  Tensor y = reduce_sum(x.read() * c * w.read());
  tape.set_recording(false);
  Tensor unrecorded = reduce_sum(x.read() * 7.0f);
  tape.set_recording(true);
  std::vector<Tensor> g =
      tape.gradient(y,
                    {GradientSource{.tensor = Tensor(), .variable = &x}, GradientSource{.tensor = c},
                     GradientSource{.tensor = Tensor(), .variable = &w}},
                    Tensor(), UnconnectedGradients::kNone);
  EXPECT_EQ(g[0].to_vector<float>(), (std::vector<float>{12, 15}));
  EXPECT_EQ(g[1].to_vector<float>(), (std::vector<float>{3, 6}));
  EXPECT_FALSE(g[2].defined());  // w was read, but not watched
  EXPECT_FALSE(tape.gradient(unrecorded, {GradientSource{.tensor = Tensor(), .variable = &x}}, Tensor(),
                             UnconnectedGradients::kNone)[0]
                   .defined());
  ASSERT_EQ(tape.watched_variables().size(), 1u);
  EXPECT_EQ(tape.watched_variables()[0].identity(), x.identity());
  tape.reset();
  EXPECT_TRUE(tape.watched_variables().empty());
}

// tf.custom_gradient's guide example: log(1 + e^x) with a stable gradient. The forward runs
// under StopRecording, so only the custom step connects y to x.
std::vector<Tensor> log1pexp(const Tensor& x) {
  Tensor e, y;
  {
    StopRecording quiet;
    e = exp(x);
    y = log(e + constant(1.0f));
  }
  return record_custom_gradient({x}, {y}, [e](const std::vector<Tensor>& dy) {
    return std::vector<Tensor>{dy[0] * (constant(1.0f) - constant(1.0f) / (e + constant(1.0f)))};
  });
}

TEST(CustomGradient, ReplacesTheOpsGradientEagerly) {
  Tensor x = constant(100.0f);
  GradientTape tape;
  tape.watch(x);
  Tensor y = log1pexp(x)[0];
  expect_tensor<float>(tape.gradient(y, {x})[0], {1.0f}, {});  // the ops' own gradient is NaN here
}

TEST(CustomGradient, InsideAFunctionAndNested) {
  auto f = function([](const Tensor& x) {
    GradientTape tape;
    tape.watch(x);
    Tensor y = log1pexp(x)[0];
    return tape.gradient(y, {x})[0];
  });
  expect_near<float>(f(constant<float>({0.0f, 100.0f}, {2})), {0.5f, 1.0f}, {2}, 1e-6);
}

TEST(CustomGradient, StopRecordingHidesOpsFromEveryTape) {
  Tensor x = constant(2.0f);
  GradientTape outer(true);
  outer.watch(x);
  Tensor y;
  {
    StopRecording quiet;
    GradientTape inner;  // a tape made inside records
    inner.watch(x);
    y = x * x;
    expect_tensor<float>(inner.gradient(y, {x})[0], {4.0f}, {});
  }
  EXPECT_FALSE(outer.gradient(y, {x}, UnconnectedGradients::kNone)[0].defined());
}

TEST(CustomGradient, BadArguments) {
  Tensor x = constant(1.0f);
  auto one = [](const std::vector<Tensor>& dy) { return dy; };
  expect_error<InvalidArgumentError>([&] { record_custom_gradient({x}, {Tensor()}, one); }, "an output is an empty");
  expect_error<InvalidArgumentError>([&] { record_custom_gradient({x}, {x}, nullptr); }, "no gradient function");
  GradientTape tape;
  tape.watch(x);
  Tensor y = record_custom_gradient({x}, {x * x}, [](const std::vector<Tensor>& dy) {
    return std::vector<Tensor>{dy[0], dy[0]};
  })[0];
  expect_error<InvalidArgumentError>([&] { tape.gradient(y, {x}); }, "expected to return 1 gradients, but returned 2");
}

TEST(GradientTape, NonTrainableVariablesAreWatchedOnlyWhenAsked) {
  Variable w(constant(3.0f)), frozen(constant(3.0f));
  frozen.set_trainable(false);
  EXPECT_FALSE(frozen.trainable());
  GradientTape tape(true);
  Tensor y = w * w + frozen * frozen;
  auto g = tape.gradient(y, {&w, &frozen}, UnconnectedGradients::kNone);
  expect_tensor<float>(g[0], {6.0f}, {});
  EXPECT_FALSE(g[1].defined());
  GradientTape asked;
  asked.watch(frozen);
  expect_tensor<float>(asked.gradient(frozen * frozen, {&frozen})[0], {6.0f}, {});
}

}  // namespace
}  // namespace kiln
