// Graph rewriting never fails silently: a cycle made by a rewrite is an InternalError that
// leaves the graph whole, and an empty ConcreteFunction handle refuses every accessor.
#include "graph/graph.h"
#include "ops/op_list.h"
#include "test_util.h"

using namespace kiln;
using namespace kiln::testing;

namespace {

struct TwoAdds {
  graph::Graph g;
  graph::Node *x, *a, *b;
  TwoAdds() {
    x = g.add_placeholder(DType::Float32, TensorShape(), "x", "x");
    g.inputs.push_back(x);
    a = g.add_node(ops::op::AddV2(), "a", {{x, 0}, {x, 0}}, {});
    b = g.add_node(ops::op::AddV2(), "b", {{a, 0}, {x, 0}}, {});
    g.outputs.push_back({b, 0});
  }
};

TEST(GraphRewrite, ReplacementCycleIsAnInternalError) {
  TwoAdds t;
  std::map<std::pair<const graph::Node *, int>, graph::Output> cycle{{{t.a, 0}, {t.b, 0}}, {{t.b, 0}, {t.a, 0}}};
  expect_error<InternalError>([&] { t.g.replace_uses(cycle); }, "form a cycle");
  // A long chain is not a cycle: a -> b is followed to its end.
  TwoAdds u;
  u.g.replace_uses({{{u.b, 0}, {u.a, 0}}});
  EXPECT_EQ(u.g.outputs[0].node, u.a);
}

TEST(GraphRewrite, CompactOrderRefusesACycleAndKeepsEveryNode) {
  TwoAdds t;
  t.a->inputs[1] = {t.b, 0};  // a reads b, b reads a
  expect_error<InternalError>([&] { t.g.compact_order(true); }, "2 live nodes are on a cycle");
  ASSERT_EQ(t.g.num_nodes(), 3);
  for (int i = 0; i < 3; ++i) {
    ASSERT_NE(t.g.node(i), nullptr);
    EXPECT_EQ(t.g.node(i)->id, i);
  }
}

TEST(GraphRewrite, EmptyConcreteFunctionRefusesEveryAccessor) {
  ConcreteFunction cf;
  const std::string msg = "on an empty ConcreteFunction";
  expect_error<FailedPreconditionError>([&] { cf.graph(); }, msg);
  expect_error<FailedPreconditionError>([&] { cf.optimized_graph(); }, msg);
  expect_error<FailedPreconditionError>([&] { cf.as_graph_def(); }, msg);
  expect_error<FailedPreconditionError>([&] { cf.optimized_graph_def(); }, msg);
  expect_error<FailedPreconditionError>([&] { cf.to_dot(); }, msg);
  expect_error<FailedPreconditionError>([&] { cf.optimized_to_dot(); }, msg);
  expect_error<FailedPreconditionError>([&] { cf.input_specs(); }, msg);
  expect_error<FailedPreconditionError>([&] { cf.output_specs(); }, msg);
  expect_error<FailedPreconditionError>([&] { cf.captured_inputs(); }, msg);
  expect_error<FailedPreconditionError>([&] { cf.optimization_report(); }, msg);
  expect_error<FailedPreconditionError>([&] { cf.pretty_printed_signature(); }, msg);
  expect_error<FailedPreconditionError>([&] { cf(std::vector<Tensor>{}); }, "empty ConcreteFunction");
  EXPECT_EQ(cf.name(), "");
}

}  // namespace
