// save() and load(): the loaded model gives the original function's outputs, variables
// come back with their values, mismatched calls name what exists, saves are atomic.
#include <filesystem>

#include "random_program.h"

using namespace kiln;
using namespace kiln::testing;
namespace fs = std::filesystem;

namespace {

std::string temp_dir(const std::string& name) { return temp_path("io_" + name); }

}  // namespace

TEST(SaveLoad, MatMulAddFromTheGuide) {
  auto f = function([](Tensor x, Tensor y, Tensor b) { return matmul(x, y) + b; }, {.arg_names = {"x", "y", "b"}});
  Tensor x = constant<float>({1, 2}, {1, 2}), y = constant<float>({2, 3}, {2, 1}), b = constant(4.0f);
  const std::string dir = temp_dir("matmul");
  save(dir, f.get_concrete_function(x, y, b));
  EXPECT_TRUE(fs::exists(dir + "/saved_model.pb"));
  EXPECT_TRUE(fs::exists(dir + "/variables/variables.index"));
  EXPECT_TRUE(fs::exists(dir + "/variables/variables.data-00000-of-00001"));
  LoadedModel m = load(dir);
  EXPECT_EQ(m.signatures(), std::vector<std::string>{"serving_default"});
  expect_tensor<float>(m.call("serving_default", {x, y, b})[0], {12.0f}, {1, 1});
  // By name, as TensorFlow calls signatures.
  const std::map<std::string, Tensor> named = m.call("serving_default", {{"b", b}, {"x", x}, {"y", y}});
  ASSERT_EQ(named.size(), 1u);
  expect_tensor<float>(named.at("output_0"), {12.0f}, {1, 1});
  expect_error<InvalidArgumentError>(
      [&] {
        m.call("serving_default", {{"x", x}, {"y", y}});
      },
      "needs input 'b' (its inputs: x, y, b)");
  expect_error<InvalidArgumentError>(
      [&] {
        m.call("serving_default", {{"b", b}, {"x", x}, {"y", y}, {"z", b}});
      },
      "has no input 'z'");
  EXPECT_NE(m.signature("serving_default").pretty_printed_signature().find("x: float32 Tensor, shape=(1, 2)"),
            std::string::npos);
  fs::remove_all(dir);
}

TEST(SaveLoad, CallWithWrongInputsListsTheSignatures) {
  auto f = function(
      [](Tensor x) { return x * 2; },
      {.arg_names = {"x"}, .input_signature = std::vector<TensorSpec>{{TensorShape({-1, 3}), DType::Float32, "x"}}});
  const std::string dir = temp_dir("mismatch");
  save(dir, f.get_concrete_function(zeros({2, 3})));
  LoadedModel m = load(dir);
  expect_tensor<float>(m.call("serving_default", {ones({1, 3})})[0], {2, 2, 2}, {1, 3});
  expect_error<InvalidArgumentError>(
      [&] {
        m.call("serving_default", {ones({1, 3}, DType::Int32)});
      },
      "input x expected float32 (None, 3), got int32 (1, 3)");
  expect_error<InvalidArgumentError>(
      [&] {
        m.call("serving_default", {ones({1, 4})});
      },
      "Could not find matching function to call loaded from the SavedModel");
  expect_error<InvalidArgumentError>([&] { m.call("serving_default", {}); }, "got 0 inputs, expected 1");
  expect_error<InvalidArgumentError>(
      [&] {
        m.call("predict", {ones({1, 3})});
      },
      "no signature 'predict'. Signatures that exist:\n  serving_default(x: float32 (None, 3))");
  fs::remove_all(dir);
}

TEST(SaveLoad, ControlFlowSimpleReluAndPowerLoop) {
  auto simple_relu = function(
      [](Tensor x) {
        return cond(
            x > 0, [&] { return x; }, [&] { return zeros_like(x); });
      },
      {.arg_names = {"x"}});
  auto power = function(
      [](Tensor x, Tensor y) {
        auto [i, r] = while_loop([&](Tensor i, Tensor) { return i < y; },
                                 [&](Tensor i, Tensor r) { return std::make_tuple(i + 1, matmul(x, r)); },
                                 std::make_tuple(constant(0), eye(3, DType::Int32)));
        return r;
      },
      {.arg_names = {"x", "y"}});
  Tensor x = random_uniform({3, 3}, -2, 3, DType::Int32, 5);
  const std::string dir = temp_dir("control_flow");
  save(dir, {{"relu", simple_relu.get_concrete_function(constant(1.0f))},
             {"power", power.get_concrete_function(x, constant(4))}});
  LoadedModel m = load(dir);
  EXPECT_EQ(m.call("relu", {constant(3.0f)})[0].item<float>(), 3.0f);
  EXPECT_EQ(m.call("relu", {constant(-3.0f)})[0].item<float>(), 0.0f);
  for (int y : {0, 1, 5})
    EXPECT_EQ(m.call("power", {x, constant(y)})[0].to_vector<int32_t>(), power(x, constant(y)).to_vector<int32_t>());
  EXPECT_EQ(m.signature("power").graph().find("while")->type, "StatelessWhile");
  fs::remove_all(dir);
}

TEST(SaveLoad, VariablesComeBackWithTheirValues) {
  Variable w(constant<float>({1, 2, 3, 4}, {2, 2}), "dense/kernel");
  Variable b(constant<float>({0.5f, -0.5f}, {2}), "dense/bias");
  Variable count(constant(0), "count");
  auto dense = function([&](Tensor x) { return relu(matmul(x, w.read()) + b.read()); }, {.arg_names = {"x"}});
  auto step = function(
      [&](Tensor x) {
        count.assign_add(1);
        w.assign_add(x);
        return count.read();
      },
      {.arg_names = {"x"}});
  Tensor x = constant<float>({1, -1}, {1, 2});
  const Tensor expected = dense(x);
  const std::string dir = temp_dir("variables");
  save(dir, {{"serving_default", dense.get_concrete_function(x)}, {"step", step.get_concrete_function(zeros({2, 2}))}});
  LoadedModel m = load(dir);
  auto vars = m.variables();
  ASSERT_EQ(vars.size(), 3u);
  EXPECT_EQ(vars.at("dense/kernel").to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(vars.at("dense/bias").to_vector<float>(), (std::vector<float>{0.5f, -0.5f}));
  expect_tensor<float>(m.call("serving_default", {x})[0], expected.to_vector<float>(), {1, 2});
  // The loaded model owns its variables: updates there leave the original alone.
  EXPECT_EQ(m.call("step", {ones({2, 2})})[0].item<int32_t>(), 1);
  EXPECT_EQ(m.call("step", {ones({2, 2})})[0].item<int32_t>(), 2);
  EXPECT_EQ(m.variables().at("dense/kernel").to_vector<float>(), (std::vector<float>{3, 4, 5, 6}));
  EXPECT_EQ(count.read().item<int32_t>(), 0);
  expect_tensor<float>(m.call("serving_default", {x})[0], {0, 0}, {1, 2});  // relu(-2 - 2 + 0.5, ...)
  fs::remove_all(dir);
}

TEST(SaveLoad, CapturedTensorsBecomeConstants) {
  Tensor scale = constant<float>({1, 10, 100}, {3});
  auto f = function([&](Tensor x) { return x * scale; }, {.arg_names = {"x"}});
  const std::string dir = temp_dir("captures");
  save(dir, f.get_concrete_function(ones({3})));
  expect_tensor<float>(load(dir).call("serving_default", {constant<float>({1, 2, 3}, {3})})[0], {1, 20, 300}, {3});
  fs::remove_all(dir);
}

TEST(SaveLoad, SavingReplacesAnExistingModelAtomically) {
  auto f1 = function([](Tensor x) { return x + 1; }, {.arg_names = {"x"}});
  auto f2 = function([](Tensor x) { return x + 2; }, {.arg_names = {"x"}});
  const std::string dir = temp_dir("replace");
  save(dir, f1.get_concrete_function(constant(0)));
  EXPECT_EQ(load(dir).call("serving_default", {constant(1)})[0].item<int32_t>(), 2);
  save(dir, f2.get_concrete_function(constant(0)));
  EXPECT_EQ(load(dir).call("serving_default", {constant(1)})[0].item<int32_t>(), 3);
  // A save that fails part-way (a bad signature name) leaves the old model in place.
  expect_error<InvalidArgumentError>(
      [&] {
        save(dir,
             {{"ok", f1.get_concrete_function(constant(0))}, {"bad name!", f1.get_concrete_function(constant(0))}});
      },
      "signature name 'bad name!'");
  EXPECT_EQ(load(dir).call("serving_default", {constant(1)})[0].item<int32_t>(), 3);
  // Nothing is left beside the target.
  int entries = 0;
  for (const auto& e : fs::directory_iterator(fs::path(dir).parent_path()))
    if (e.path().filename().string().rfind(fs::path(dir).filename().string(), 0) == 0) ++entries;
  EXPECT_EQ(entries, 1);
  fs::remove_all(dir);
}

TEST(SaveLoad, RandomProgramsAgreeAfterLoading) {
  std::mt19937 rng(606);
  const std::string dir = temp_dir("random");
  for (int k = 0; k < 60; ++k) {
    Program p = generate(rng);
    std::vector<Tensor> inputs = random_inputs(p, rng);
    auto fn = function([&p](std::vector<Tensor> xs) { return run(p, xs); });
    const std::vector<Tensor> want = fn(inputs);
    save(dir, fn.get_concrete_function(inputs));
    const std::vector<Tensor> got = load(dir).call("serving_default", inputs);
    ASSERT_EQ(want.size(), got.size());
    for (size_t i = 0; i < want.size(); ++i) expect_same(want[i], got[i], "program " + std::to_string(k));
    if (::testing::Test::HasFailure()) break;
  }
  fs::remove_all(dir);
}

TEST(SaveLoad, OutputsNamedAsGiven) {
  auto f = function([](Tensor x) { return std::make_tuple(x + 1.0f, x * 2.0f); }, {.arg_names = {"x"}});
  const ConcreteFunction cf = f.get_concrete_function(constant(3.0f));
  const std::string dir = temp_dir("named_outputs");
  save(dir, {{"serving_default", cf}}, {{"serving_default", {"plus", "times"}}});
  const auto out = load(dir).call("serving_default", std::map<std::string, Tensor>{{"x", constant(3.0f)}});
  EXPECT_EQ(out.at("plus").item<float>(), 4.0f);
  EXPECT_EQ(out.at("times").item<float>(), 6.0f);
  expect_error<InvalidArgumentError>(
      [&] {
        save(dir, {{"serving_default", cf}}, {{"serving_default", {"a", "a"}}});
      },
      "its output names must be as many, unique and not empty");
  expect_error<InvalidArgumentError>(
      [&] {
        save(dir, {{"serving_default", cf}}, {{"serving_default", {"a"}}});
      },
      "has 2 outputs");
  expect_error<InvalidArgumentError>(
      [&] {
        save(dir, {{"serving_default", cf}}, {{"other", {"a", "b"}}});
      },
      "'other', which is not a signature");
  fs::remove_all(dir);
}

// A module's objects, as the Python front end saves a kiln.Module: a tree of objects, variables
// and functions with their traces, loaded back as the same tree.
TEST(SaveLoad, ObjectsVariablesAndFunctionTraces) {
  Variable w(constant<float>({2, 3}, {2}), "w");
  auto scale = function([&](Tensor x) { return x * w.read(); }, {.arg_names = {"x"}});
  auto set = function(
      [&](Tensor v) {
        w.assign(v);
        return std::vector<Tensor>{};
      },
      {.arg_names = {"v"}});
  const ConcreteFunction scale_trace = scale.get_concrete_function(ones({2}));
  const ConcreteFunction set_trace = set.get_concrete_function(ones({2}));
  const std::string spec = R"({"tensor": {"name": "x", "shape": [2], "dtype": "float32"}})";
  const std::string graph = R"({"nodes": [
      {"kind": "object", "children": [["layer", 1], ["scale", 3], ["set", 4]]},
      {"kind": "object", "children": [["w", 2]]},
      {"kind": "variable", "variable": 0},
      {"kind": "function", "args": ["x"], "traces": [{"function": 0, "inputs": {"tuple": [{"tuple": [)" +
                            spec + R"(]}, {"dict": {}}]}, "outputs": )" + spec + R"(}]},
      {"kind": "function", "args": ["v"], "traces": [{"function": 1, "inputs": {"tuple": [{"tuple": [)" +
                            spec + R"(]}, {"dict": {}}]}, "outputs": null}]}]})";
  const std::string dir = temp_dir("objects");
  save(dir, {}, {}, SavedObjects{.graph = graph, .variables = {w}, .functions = {scale_trace, set_trace}});
  LoadedModel m = load(dir);
  EXPECT_TRUE(m.signatures().empty());
  const std::string tree = m.objects();
  EXPECT_NE(tree.find(R"(["layer",1])"), std::string::npos) << tree;
  EXPECT_NE(tree.find(R"("variable":"layer/w")"), std::string::npos) << tree;
  const size_t first = tree.find(R"("function":")") + 12;
  const std::string scale_name = tree.substr(first, tree.find('"', first) - first);
  const size_t second = tree.find(R"("function":")", first) + 12;
  const std::string set_name = tree.substr(second, tree.find('"', second) - second);
  expect_tensor<float>(m.function(scale_name)({constant<float>({1, 2}, {2})})[0], {2, 6}, {2});
  m.function(set_name)({constant<float>({-1, 5}, {2})});  // writes the loaded variable, not `w`
  expect_tensor<float>(m.variable("layer/w").read(), {-1, 5}, {2});
  expect_tensor<float>(m.function(scale_name)({ones({2})})[0], {-1, 5}, {2});
  expect_tensor<float>(w.read(), {2, 3}, {2});
  expect_error<InvalidArgumentError>([&] { m.function("nope"); }, "has no function 'nope'");
  expect_error<InvalidArgumentError>([&] { m.variable("nope"); }, "has no variable 'nope'");
  // A tree that is not one: bad JSON, a child that is no object, a variable not given.
  for (const std::string& bad :
       {std::string("[1, 2"), std::string(R"({"nodes": [{"kind": "object", "children": [["a", 7]]}]})"),
        std::string(R"({"nodes": [{"kind": "object", "children": [["a", 1]]}, {"kind": "variable", "variable": 3}]})"),
        std::string(R"({"nodes": [{"kind": "function"}]})")})
    EXPECT_THROW(save(temp_dir("bad_objects"), {}, {}, SavedObjects{.graph = bad, .variables = {w}, .functions = {}}),
                 InvalidArgumentError)
        << bad;
  fs::remove_all(dir);
}

TEST(SaveLoad, ObjectGraphsOfTheWrongShapeAreInvalidArguments) {
  Variable w(constant(1.0f), "w");
  for (const std::string& bad : {std::string(R"({"nodes": [{"kind": "object", "children": [7]}]})"),
                                 std::string(R"({"nodes": [{"kind": "object", "children": [[1, "a"]]}]})"),
                                 std::string(R"({"nodes": [{"kind": "object"}, {"kind": 3}]})")})
    EXPECT_THROW(save(temp_dir("wrong_shape"), {}, {}, SavedObjects{.graph = bad, .variables = {w}, .functions = {}}),
                 InvalidArgumentError)
        << bad;
}
