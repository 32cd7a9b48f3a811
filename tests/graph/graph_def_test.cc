// GraphDef text and binary, GraphView, DOT.
#include "test_util.h"

using namespace kiln;
using namespace kiln::testing;

TEST(GraphDef, MatchesTensorFlowTextForGreater) {
  auto f = function([](Tensor x) { return greater(x, 0); }, {.arg_names = {"x"}});
  std::string text = f.get_concrete_function(constant(1)).as_graph_def().str();
  // The nodes the TensorFlow guide prints for simple_relu's condition, verbatim.
  const std::string placeholder =
      "node {\n  name: \"x\"\n  op: \"Placeholder\"\n  attr {\n    key: \"_user_specified_name\"\n    value {\n"
      "      s: \"x\"\n    }\n  }\n  attr {\n    key: \"dtype\"\n    value {\n      type: DT_INT32\n    }\n  }\n"
      "  attr {\n    key: \"shape\"\n    value {\n      shape {\n      }\n    }\n  }\n}\n";
  const std::string constant_y =
      "node {\n  name: \"Greater/y\"\n  op: \"Const\"\n  attr {\n    key: \"dtype\"\n    value {\n      type: "
      "DT_INT32\n"
      "    }\n  }\n  attr {\n    key: \"value\"\n    value {\n      tensor {\n        dtype: DT_INT32\n"
      "        tensor_shape {\n        }\n        int_val: 0\n      }\n    }\n  }\n}\n";
  const std::string greater =
      "node {\n  name: \"Greater\"\n  op: \"Greater\"\n  input: \"x\"\n  input: \"Greater/y\"\n  attr {\n    key: "
      "\"T\"\n"
      "    value {\n      type: DT_INT32\n    }\n  }\n}\n";
  EXPECT_NE(text.find(placeholder), std::string::npos) << text;
  EXPECT_NE(text.find(constant_y), std::string::npos) << text;
  EXPECT_NE(text.find(greater), std::string::npos) << text;
  EXPECT_NE(text.find("node {\n  name: \"Identity\"\n  op: \"Identity\"\n  input: \"Greater\""), std::string::npos);
  EXPECT_NE(text.find("versions {\n  producer: "), std::string::npos);
  EXPECT_FALSE(f.get_concrete_function(constant(1)).as_graph_def().serialized().empty());
}

TEST(GraphDef, AttrsOfMatMulAndReductions) {
  auto f = function([](Tensor a, Tensor b) { return reduce_sum(matmul(a, b, true, false), {0}); });
  std::string text = f.get_concrete_function(zeros({2, 2}), zeros({2, 2})).as_graph_def().str();
  EXPECT_NE(text.find("key: \"transpose_a\"\n    value {\n      b: true"), std::string::npos) << text;
  EXPECT_NE(text.find("key: \"Tidx\"\n    value {\n      type: DT_INT32"), std::string::npos);
  EXPECT_NE(text.find("key: \"keep_dims\"\n    value {\n      b: false"), std::string::npos);
  EXPECT_NE(text.find("tensor_content: "), std::string::npos);  // the [0] axes vector
}

TEST(GraphView, OperationsAndDot) {
  auto f = function([](Tensor x) { return x * 2 + 1; }, {.name = "affine", .arg_names = {"x"}});
  auto cf = f.get_concrete_function(TensorSpec{{-1, 3}, DType::Float32});
  GraphView g = cf.graph();
  const Operation* mul = g.find("mul");
  ASSERT_NE(mul, nullptr);
  EXPECT_EQ(mul->type, "Mul");
  EXPECT_EQ(mul->inputs, (std::vector<std::string>{"x:0", "Mul/y:0"}));
  EXPECT_EQ(mul->outputs[0], "mul:0 float32 [?,3]");
  std::string dot = cf.to_dot();
  EXPECT_NE(dot.find("digraph \"affine\""), std::string::npos);
  EXPECT_NE(dot.find("label=\"float32 [?,3]\""), std::string::npos);
  EXPECT_EQ(
      cf.pretty_printed_signature(),
      "affine(x)\n  Args:\n    x: float32 Tensor, shape=(None, 3)\n  Returns:\n    float32 Tensor, shape=(None, 3)\n");
}

TEST(Graph, NamesAreUniquedLikeTensorFlow) {
  auto f = function([](Tensor x) { return matmul(matmul(x, x), x); });
  GraphView g = f.get_concrete_function(zeros({2, 2})).graph();
  EXPECT_NE(g.find("MatMul"), nullptr);
  EXPECT_NE(g.find("MatMul_1"), nullptr);
}
