// Variables, automatic control dependencies, assert_that, dropout, and the guides' examples.
#include <optional>
#include <thread>

#include "test_util.h"

using namespace kiln;
using namespace kiln::testing;

TEST(Variable, EagerReadsAreSnapshots) {
  Variable v(constant<float>({1, 2}), "v");
  Tensor before = v.read();
  v.assign(constant<float>({5, 6}));
  v.assign_add(constant<float>({1, 1}));
  v.assign_sub(constant<float>({1, 1}));
  EXPECT_EQ(before.to_vector<float>(), (std::vector<float>{1, 2}));
  EXPECT_EQ(v.read().to_vector<float>(), (std::vector<float>{5, 6}));
  Variable s(constant(1.5));
  s.assign_add(2);  // a C++ number takes the variable's dtype
  s.assign_sub(0.5);
  EXPECT_EQ(s.read().item<double>(), 3.0);
  Variable copy = v;  // copies share one variable
  copy.assign_add(constant<float>({1, 1}));
  EXPECT_EQ(v.read().to_vector<float>(), (std::vector<float>{6, 7}));
  EXPECT_EQ(v.name(), "v");
  EXPECT_EQ(v.shape(), TensorShape({2}));
  expect_error<InvalidArgumentError>(
      [&] {
        v.assign(constant<float>({1, 2, 3}));
      },
      "Cannot update variable 'v' with shape [2] using a Tensor with shape [3], shapes must be equal.");
  expect_error<InvalidArgumentError>([&] { v.assign(constant<int32_t>({1, 2})); }, "int32");
}

// assign_add updates in place only when no snapshot of the value is alive.
TEST(Variable, InPlaceUpdatesNeverChangeSnapshots) {
  Variable w(constant<float>({1, 2}, {2}));
  w.assign_add(constant<float>({1, 1}, {2}));  // nothing holds the value: in place
  Tensor snap = w.read();
  Tensor view = reshape(w.read(), {2, 1});
  w.assign_add(constant<float>({10, 10}, {2}));
  EXPECT_EQ(snap.to_vector<float>(), (std::vector<float>{2, 3}));
  EXPECT_EQ(view.to_vector<float>(), (std::vector<float>{2, 3}));
  EXPECT_EQ(w.read().to_vector<float>(), (std::vector<float>{12, 13}));
  auto f = function([&](const Tensor& d) {
    Tensor before = w.read();
    w.assign_add(d);
    return before;  // the read before the update, as TensorFlow orders it
  });
  const Tensor d = constant<float>({1, 1}, {2});
  EXPECT_EQ(f(d).to_vector<float>(), (std::vector<float>{12, 13}));
  EXPECT_EQ(f(d).to_vector<float>(), (std::vector<float>{13, 14}));
  EXPECT_EQ(w.read().to_vector<float>(), (std::vector<float>{14, 15}));
}

TEST(Variable, GuideCounter) {
  Variable c(constant(0));
  auto f = function([&](Tensor x) {
    c.assign_add(1);
    return x + cast(c.read(), DType::Float32);
  });
  EXPECT_EQ(c.read().item<int32_t>(), 0);
  EXPECT_EQ(f(constant(1.0f)).item<float>(), 2.0f);
  EXPECT_EQ(c.read().item<int32_t>(), 1);
  EXPECT_EQ(f(constant(1.0f)).item<float>(), 3.0f);
  EXPECT_EQ(c.read().item<int32_t>(), 2);
  // Assignments made outside between calls are seen inside.
  c.assign(constant(10));
  EXPECT_EQ(f(constant(1.0f)).item<float>(), 12.0f);
  EXPECT_EQ(f.tracing_count(), 1);
}

TEST(Variable, DenseInstancesKeepDistinctVariables) {
  struct Dense {
    Variable W{random_uniform({10, 10}, -1, 1), "W"};
    Variable b{zeros({10}), "b"};
    Function<std::function<Tensor(Tensor)>> compute{[this](Tensor x) { return matmul(x, W.read()) + b.read(); }, {}};
  };
  Dense d1, d2;
  Tensor x = random_uniform({10, 10}, 0, 1);
  EXPECT_NE(d1.compute(x).to_vector<float>(), d2.compute(x).to_vector<float>());
}

TEST(Variable, ModelWithTrainingFlagTracesTwice) {
  Variable w(fill({4, 4}, 0.5));
  auto call = function([&](Tensor inputs, bool training) {
    Tensor y = matmul(inputs, w.read());
    if (training) return dropout(y, 0.5);
    return y;
  });
  Tensor x = ones({4, 4});
  Tensor eval1 = call(x, false), eval2 = call(x, false);
  EXPECT_EQ(eval1.to_vector<float>(), eval2.to_vector<float>());
  EXPECT_EQ(eval1.to_vector<float>(), std::vector<float>(16, 2.0f));
  Tensor t1 = call(x, true);
  for (float v : t1.to_vector<float>()) EXPECT_TRUE(v == 0.0f || v == 4.0f);
  EXPECT_EQ(call.tracing_count(), 2);
}

TEST(Variable, LoopOverRowsPrintsAndAssigns) {
  // for i in x: print(i); v.assign(i)  — over the rows, with a while_loop.
  Variable v(zeros({2}, DType::Int32));
  auto g = function([&](Tensor x) {
    Tensor rows = strided_slice(shape_of(x), {0}, {1}, {1}, {.shrink_axis_mask = 1});
    fori_loop(
        0, rows,
        [&](Tensor i, Tensor unused) {
          Tensor row = gather(x, i);
          print(row);
          v.assign(row);
          return unused;
        },
        constant(0));
  });
  ::testing::internal::CaptureStderr();
  g(constant<int32_t>({1, 2, 3, 4, 5, 6}, {3, 2}));
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "[1 2]\n[3 4]\n[5 6]\n");
  EXPECT_EQ(v.read().to_vector<int32_t>(), (std::vector<int32_t>{5, 6}));
}

TEST(Variable, CreatedOnFirstTraceOnly) {
  std::optional<Variable> v;
  auto f = function([&](Tensor x) {
    if (!v) v.emplace(zeros({}), "lazy");  // created once, on the first trace
    v->assign_add(reduce_sum(x));
    return v->read();
  });
  EXPECT_EQ(f(constant<float>({1, 2})).item<float>(), 3.0f);
  EXPECT_EQ(f(constant<float>({1, 2, 3})).item<float>(), 9.0f);  // a second trace, no new variable
  EXPECT_EQ(f.tracing_count(), 2);
  auto g = function([](Tensor x) {
    Variable fresh(constant(1.0f));  // a new variable on every trace
    return x + fresh.read();
  });
  EXPECT_EQ(g(constant(1.0f)).item<float>(), 2.0f);
  expect_error<FailedPreconditionError>([&] { (void)g(constant<float>({1, 2})); }, "created on the first call");
}

TEST(Variable, StatefulOpsRunEvenWhenNoOutputNeedsThem) {
  Variable counter(constant(0));
  auto f = function([&](Tensor x) {
    counter.assign_add(1);  // nothing returned depends on it
    return x;
  });
  (void)f(constant(1));
  (void)f(constant(1));
  EXPECT_EQ(counter.read().item<int32_t>(), 2);
}

TEST(Variable, ProgramOrderIsKept) {
  Variable v(constant(1));
  auto f = function([&] {
    Tensor a = v.read();
    v.assign(constant(5));
    Tensor b = v.read();
    v.assign_add(constant(1));
    return std::make_tuple(a, b, v.read());
  });
  auto [a, b, c] = f();
  EXPECT_EQ(a.item<int32_t>(), 1);
  EXPECT_EQ(b.item<int32_t>(), 5);
  EXPECT_EQ(c.item<int32_t>(), 6);
}

TEST(Variable, ConcurrentAssignAddLosesNothing) {
  Variable v(constant(int64_t{0}));
  auto f = function([&](Tensor d) { v.assign_add(d); });
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) f(constant(int64_t{1}));
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(v.read().item<int64_t>(), 1600);
}

TEST(Assert, RaisesWithTheMessageAtRunTime) {
  auto f = function([](Tensor x) {
    assert_that(x > 0, "x must be positive");
    return x;
  });
  EXPECT_EQ(f(constant(1)).item<int32_t>(), 1);
  expect_error<InvalidArgumentError>([&] { (void)f(constant(-1)); }, "x must be positive");
  expect_error<InvalidArgumentError>([] { assert_that(constant(false), "eager too"); }, "eager too");
}

TEST(Random, AddNoiseBothWays) {
  // Stateful random ops give new numbers on every call of a function.
  auto noisy = function([] { return random_uniform({3}, 0, 1); });
  EXPECT_NE(noisy().to_vector<float>(), noisy().to_vector<float>());
}

// tf.Variable(x * 2) inside a tf.function: TensorFlow lifts the initializer and runs it on the
// first call, with that call's inputs; later calls keep (and may update) the value.
TEST(Variable, InitialValueFromTheFunctionsInputs) {
  std::optional<Variable> v;
  auto f = function([&](Tensor x) {
    if (!v) v.emplace(x * 2.0f, "from_x");
    v->assign_add(constant<float>({1, 1}));
    return v->read();
  });
  EXPECT_EQ(f(constant<float>({1, 2})).to_vector<float>(), (std::vector<float>{3, 5}));    // 2*x + 1
  EXPECT_EQ(f(constant<float>({10, 20})).to_vector<float>(), (std::vector<float>{4, 6}));  // not re-initialized
  EXPECT_EQ(v->read().to_vector<float>(), (std::vector<float>{4, 6}));
  EXPECT_EQ(f.tracing_count(), 1);
  const std::string text = f.concrete_functions()[0].as_graph_def().str();
  EXPECT_NE(text.find("VarIsInitializedOp"), std::string::npos);
  // A trace that is not the first may not create one, from inputs or not.
  auto g = function([](Tensor x) {
    Variable fresh(x + 1.0f);
    return fresh.read();
  });
  EXPECT_EQ(g(constant(1.0f)).item<float>(), 2.0f);
  expect_error<FailedPreconditionError>([&] { (void)g(constant<float>({1, 2})); }, "created on the first call");
}

TEST(Variable, LiftedInitializerRunsOnTheFirstCallNotAtTrace) {
  std::optional<Variable> v;
  auto f = function([&](Tensor x) {
    if (!v) v.emplace(reduce_sum(x), "sum");
    return v->read() + x;
  });
  ConcreteFunction cf = f.get_concrete_function(TensorSpec{{2}, DType::Float32});  // traced, never called
  expect_error<FailedPreconditionError>([&] { (void)v->read(); }, "Could not find variable sum");
  expect_error<FailedPreconditionError>([&] { v->assign_add(constant(1.0f)); }, "not initialized");
  EXPECT_EQ(cf(constant<float>({1, 2}))[0].to_vector<float>(), (std::vector<float>{4, 5}));
  EXPECT_EQ(cf(constant<float>({0, 0}))[0].to_vector<float>(), (std::vector<float>{3, 3}));
  EXPECT_EQ(v->read().item<float>(), 3.0f);
}

TEST(Variable, LiftedInitializerNeedsAStaticShape) {
  std::optional<Variable> v;
  auto f = function(
      [&](Tensor x) {
        if (!v) v.emplace(x, "dynamic");
        return v->read();
      },
      {.input_signature = std::vector<TensorSpec>{TensorSpec{{-1}, DType::Float32}}});
  expect_error<InvalidArgumentError>([&] { (void)f(constant<float>({1, 2})); }, "needs a static shape");
}

// An initial value from random ops (or reads of other variables) and no input is lifted out of
// the function as TensorFlow lifts it: it runs once, at the trace, so a function traced and
// never called (a SavedModel's signature) already has its variables.
TEST(Variable, InitializerWithoutInputsRunsAtTheTrace) {
  std::optional<Variable> w, twice_w;
  auto f = function([&](Tensor x) {
    if (!w) {
      w.emplace(random_uniform({2}, -1.0, 1.0), "w");  // no seed: a stateful op
      twice_w.emplace(w->read() * 2.0f, "twice_w");
    }
    return x + w->read();
  });
  ConcreteFunction cf = f.get_concrete_function(TensorSpec{{2}, DType::Float32});  // traced, never called
  const std::vector<float> value = w->read().to_vector<float>();
  ASSERT_EQ(value.size(), 2u);
  for (float e : value) EXPECT_TRUE(e >= -1.0f && e < 1.0f) << e;
  EXPECT_EQ(twice_w->read().to_vector<float>(), (std::vector<float>{value[0] * 2, value[1] * 2}));
  EXPECT_EQ(cf(constant<float>({0, 0}))[0].to_vector<float>(), value);  // the call does not re-initialize
  EXPECT_EQ(cf(constant<float>({1, 1}))[0].to_vector<float>(), (std::vector<float>{value[0] + 1, value[1] + 1}));
}

// A condition that depends on a random draw is not known while tracing: it is never folded.
TEST(Variable, RandomConditionsAreNotFoldedAtTheTrace) {
  auto f = function([] {
    return cond(
        random_uniform({}, 0.0, 1.0) < constant(0.5f), [] { return constant(1); }, [] { return constant(2); });
  });
  const std::string text = f.get_concrete_function().as_graph_def().str();
  EXPECT_NE(text.find("If\""), std::string::npos) << text;  // If or StatelessIf
}

// ConcreteFunction::variables: what the graph reads or writes, a branch body's included, each
// once, in order of first use; an unused variable is not among them.
TEST(Variable, ConcreteFunctionListsTheVariablesItUses) {
  Variable a(constant(1.0f), "a"), b(constant(2.0f), "b"), unused(constant(3.0f), "unused");
  auto f = function([&](Tensor x) {
    Tensor y = x * a.read();
    return cond(
        x > constant(0.0f),
        [&] {
          b.assign_add(constant(1.0f));
          return y + a.read();
        },
        [&] { return y; });
  });
  const auto vars = f.get_concrete_function(TensorSpec{.shape = {}, .dtype = DType::Float32}).variables();
  ASSERT_EQ(vars.size(), 2u);
  EXPECT_EQ(vars[0].identity(), a.identity());
  EXPECT_EQ(vars[1].identity(), b.identity());
  EXPECT_EQ(function([](Tensor x) { return x * 2.0f; })
                .get_concrete_function(TensorSpec{.shape = {}, .dtype = DType::Float32})
                .variables()
                .size(),
            0u);
}
