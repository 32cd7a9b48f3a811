// A graph's node names: unique however many nodes its table grows to, found by name, kept
// by a clone, and never given again after their node is pruned. (TensorFlow's rule for
// colliding names is checked against TensorFlow itself in test_graph_api_oracle.py.)
#include <set>

#include "graph/graph.h"
#include "ops/op_list.h"
#include "test_util.h"

using namespace kiln;
using namespace kiln::testing;

namespace {

graph::Node* add(graph::Graph& g, graph::Node* x, const std::string& hint) {
  return g.add_node(ops::op::AddV2(), hint, {{x, 0}, {x, 0}}, {});
}

TEST(GraphNames, UniqueAndFoundThroughManyNodes) {
  graph::Graph g;
  graph::Node* x = g.add_placeholder(DType::Float32, TensorShape(), "x", "x");
  g.inputs.push_back(x);
  std::vector<graph::Node*> nodes;
  // Hints repeated (add, add_1, ...) and names a repeated hint would give, asked for directly.
  for (int i = 0; i < 3000; ++i) {
    nodes.push_back(add(g, x, i % 3 == 0 ? "add" : i % 3 == 1 ? "add_" + std::to_string(i) : "Add"));
  }
  std::set<std::string> names{"x"};
  for (graph::Node* n : nodes) {
    EXPECT_TRUE(names.insert(n->name).second) << n->name;
    EXPECT_EQ(g.find(n->name), n) << n->name;
  }
  EXPECT_EQ(g.find("x"), x);
  EXPECT_EQ(g.find("add_999999"), nullptr);
  EXPECT_EQ(g.find(""), nullptr);
  // The hint's own name first, then the next unused suffix: "add_1" was asked for directly.
  EXPECT_EQ(nodes[0]->name, "add");
  EXPECT_EQ(nodes[1]->name, "add_1");
  EXPECT_EQ(nodes[3]->name, "add_2");
  EXPECT_EQ(nodes[2]->name, "Add");

  g.outputs.push_back({nodes.back(), 0});
  auto copy = g.clone();
  for (const auto& n : copy->nodes()) EXPECT_EQ(copy->find(n->name), n.get()) << n->name;

  // Pruned nodes are no longer found, and their names are not given again.
  const std::string dead = nodes[0]->name;
  EXPECT_GT(g.compact_order(true), 0);
  EXPECT_EQ(g.find(dead), nullptr);
  EXPECT_EQ(g.find(nodes.back()->name), nodes.back());
  EXPECT_NE(add(g, x, dead)->name, dead);
  // The clone is a graph of its own.
  EXPECT_NE(copy->find(dead), nullptr);
}

TEST(GraphNames, ScopesPrefixAndClaimNames) {
  graph::Graph g;
  graph::Node* x = g.add_placeholder(DType::Float32, TensorShape(), "x", "x");
  g.push_scope("block");
  graph::Node* a = add(g, x, "add");
  g.pop_scope();
  g.push_scope("block");  // a second scope of the same name is block_1
  graph::Node* b = add(g, x, "add");
  g.pop_scope();
  EXPECT_EQ(a->name, "block/add");
  EXPECT_EQ(b->name, "block_1/add");
  EXPECT_EQ(add(g, x, "block")->name, "block_2");
  // A hint that is a name given out before counts on from it, as TensorFlow's unique_name.
  EXPECT_EQ(add(g, x, "c")->name, "c");
  EXPECT_EQ(add(g, x, "c")->name, "c_1");
  EXPECT_EQ(add(g, x, "c_1")->name, "c_1_1");
  EXPECT_EQ(add(g, x, "c_1")->name, "c_1_2");
}

// Names longer than a word, alike in their first words and their lengths (the table hashes
// eight bytes at a time), and a hint counted on across many growths of the table.
TEST(GraphNames, LongNamesThatShareTheirFirstWords) {
  graph::Graph g;
  graph::Node* x = g.add_placeholder(DType::Float32, TensorShape(), "x", "x");
  const std::string stem = "model/encoder/layer_norm/moments/";  // four whole words
  std::vector<graph::Node*> nodes;
  for (char c = 'a'; c <= 'z'; ++c) nodes.push_back(add(g, x, stem + c + "q"));
  for (char c = 'a'; c <= 'z'; ++c) nodes.push_back(add(g, x, stem + "q" + c));
  for (int i = 0; i < 5000; ++i) nodes.push_back(add(g, x, stem + "mean"));
  std::set<std::string> names{"x"};
  for (graph::Node* n : nodes) {
    EXPECT_TRUE(names.insert(n->name).second) << n->name;
    EXPECT_EQ(g.find(n->name), n) << n->name;
  }
  EXPECT_EQ(nodes[0]->name, stem + "aq");
  EXPECT_EQ(nodes[26]->name, stem + "qa");
  EXPECT_EQ(nodes[52]->name, stem + "mean");
  EXPECT_EQ(nodes.back()->name, stem + "mean_4999");
  EXPECT_EQ(g.find(stem + "mean_5000"), nullptr);
  EXPECT_EQ(g.find(stem), nullptr);
  // The hint's count survived every growth: the next one goes on from it.
  EXPECT_EQ(add(g, x, stem + "mean")->name, stem + "mean_5000");
}

}  // namespace
