// kiln::DynamicFunction: the front-end layer's trace cache, keyed by what a binding walks.
#include "kiln/frontend.h"

#include "test_util.h"

using namespace kiln;
using namespace kiln::testing;

namespace {
// A toy front end: a call is (tensor x, host value scale), the function is x * scale + 1.
struct ToyCall {
  Tensor x;
  double scale;
  void walk(CallArgs& a) const {
    a.tensor(x, "x");
    a.value("float", std::to_string(scale), std::to_string(scale), "scale");
  }
};

DynamicFunction::Result call(DynamicFunction& f, const ToyCall& c, int* traces) {
  return f.call([&](CallArgs& a) { c.walk(a); },
                [&](const std::vector<Tensor>& ph) {
                  ++*traces;
                  EXPECT_TRUE(ph[0].is_symbolic());
                  return std::vector<Tensor>{ph[0] * c.scale + 1.0};
                });
}
}  // namespace

TEST(DynamicFunction, TracesOncePerSignatureAndRunsTheGraph) {
  DynamicFunction f(FunctionOptions{.name = "toy", .retracing_warning = false});
  int traces = 0;
  auto r = call(f, {constant(2.0), 3.0}, &traces);
  EXPECT_TRUE(r.traced);
  EXPECT_EQ(r.outputs[0].item<double>(), 7.0);
  r = call(f, {constant(5.0), 3.0}, &traces);  // same signature: the graph runs, no trace
  EXPECT_FALSE(r.traced);
  EXPECT_EQ(r.outputs[0].item<double>(), 16.0);
  EXPECT_EQ(traces, 1);
  call(f, {constant(5.0), 4.0}, &traces);                        // a new host value retraces
  call(f, {constant(std::vector<double>{1, 2}), 4.0}, &traces);  // a new shape retraces
  EXPECT_EQ(traces, 3);
  EXPECT_EQ(f.tracing_count(), 3);
  EXPECT_EQ(f.concrete_functions().size(), 3u);
  const std::string sigs = f.pretty_printed_concrete_signatures();
  EXPECT_NE(sigs.find("toy(x, scale=3.000000)"), std::string::npos) << sigs;
  EXPECT_NE(sigs.find("x: float64 Tensor, shape=(2,)"), std::string::npos) << sigs;
  EXPECT_EQ(f.trace_log().size(), 3u);
  f.clear_cache();
  EXPECT_EQ(f.concrete_functions().size(), 0u);
}

TEST(DynamicFunction, ConcreteFromSpecsAndStructureKeys) {
  DynamicFunction f(FunctionOptions{.retracing_warning = false});
  auto trace = [](const std::vector<Tensor>& ph) { return std::vector<Tensor>{ph[0] + ph[1]}; };
  auto r = f.concrete(
      [](CallArgs& a) {
        a.structure("list", 2, "xs");
        a.spec(TensorSpec{.shape = TensorShape({-1}), .dtype = DType::Float32}, "xs_0");
        a.spec(TensorSpec{.shape = TensorShape({-1}), .dtype = DType::Float32}, "xs_1");
      },
      trace);
  EXPECT_FALSE(r.outputs.size());
  ASSERT_EQ(r.concrete.input_specs().size(), 2u);
  EXPECT_EQ(r.concrete.output_specs()[0].shape, TensorShape({-1}));
  // A call needs tensors, not specs.
  EXPECT_THROW(f.call([](CallArgs& a) { a.spec(TensorSpec{}, "x"); }, trace), InvalidArgumentError);
}

TEST(DynamicFunction, RefusesSymbolicTensorsFromOutsideAndPassesTraceErrors) {
  DynamicFunction f(FunctionOptions{.retracing_warning = false});
  Tensor x = constant(1.0f);
  EXPECT_THROW(f.call([&](CallArgs& a) { a.tensor(x, "x"); },
                      [](const std::vector<Tensor>&) -> std::vector<Tensor> { throw InvalidArgumentError("mine"); }),
               InvalidArgumentError);
  EXPECT_EQ(f.concrete_functions().size(), 0u);  // a failed trace is not cached
  EXPECT_THROW(f.call([](CallArgs& a) { a.tensor(Tensor(), "x"); }, nullptr), InvalidArgumentError);
  EXPECT_FALSE(DynamicFunction::must_call_directly());
  config::run_functions_eagerly(true);
  EXPECT_TRUE(DynamicFunction::must_call_directly());
  config::run_functions_eagerly(false);
}
