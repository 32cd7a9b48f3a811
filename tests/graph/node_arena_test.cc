// A graph's nodes live in its arena's chunks, and full-size chunks go back to a process-wide
// pool when the graph dies, for the next graphs (graph/graph.h, NodeArena). Graphs that live
// at once, one after another and on two threads each keep their own nodes intact.
#include <thread>

#include "graph/graph.h"
#include "ops/op_list.h"
#include "test_util.h"

using namespace kiln;

namespace {

// A chain x -> add -> add -> ... of n nodes, checked link by link after it is built.
void build_and_check(int n) {
  graph::Graph g;
  graph::Node* prev = g.add_placeholder(DType::Float32, TensorShape(), "x", "x");
  std::vector<graph::Node*> nodes{prev};
  for (int i = 0; i < n; ++i) {
    prev = g.add_node(ops::op::AddV2(), "add", {{prev, 0}, {prev, 0}}, {});
    nodes.push_back(prev);
  }
  for (int i = 1; i <= n; ++i) {
    ASSERT_EQ(nodes[i]->inputs.size(), 2u);
    ASSERT_EQ(nodes[i]->inputs[0].node, nodes[i - 1]) << i;
    ASSERT_EQ(nodes[i]->id, i);
    ASSERT_EQ(g.find(nodes[i]->name), nodes[i]);
  }
  g.outputs.push_back({prev, 0});
  auto copy = g.clone();  // a second arena alive beside the first
  ASSERT_EQ(copy->num_nodes(), n + 1);
  for (int i = 1; i <= n; ++i) ASSERT_EQ(copy->find(nodes[i]->name)->inputs[0].node->name, nodes[i - 1]->name);
}

}  // namespace

TEST(NodeArena, GraphsAfterGraphsAndSideBySideKeepTheirNodes) {
  for (int round = 0; round < 3; ++round) build_and_check(20000);  // 78 full-size chunks each
  // A graph alive while others come and go.
  graph::Graph keep;
  graph::Node* x = keep.add_placeholder(DType::Float32, TensorShape(), "x", "x");
  graph::Node* last = x;
  for (int i = 0; i < 3000; ++i) last = keep.add_node(ops::op::Neg(), "neg", {{last, 0}}, {});
  build_and_check(5000);
  int length = 0;
  for (graph::Node* n = last; n != x; n = n->inputs[0].node) {
    ASSERT_EQ(n->op, &ops::op::Neg());
    ++length;
  }
  EXPECT_EQ(length, 3000);
}

TEST(NodeArena, TwoThreadsBuildGraphsAtOnce) {
  std::thread other([] {
    for (int round = 0; round < 4; ++round) build_and_check(4000);
  });
  for (int round = 0; round < 4; ++round) build_and_check(4000);
  other.join();
}
