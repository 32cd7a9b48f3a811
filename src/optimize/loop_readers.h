// What the loop passes (hoist_loop_products, hoist_concat_products) ask of a graph: what an
// output is through Identity nodes, who reads each node, and its loops one by one.
#pragma once
#include <utility>
#include <vector>

#include "optimize/pass.h"

namespace kiln::optimize {

// The value an output is, through Identity nodes (their control inputs order, not change).
inline Output through_identities(Output o) {
  while (o.node->op == &op::Identity() && o.node->inputs.size() == 1) o = o.node->inputs[0];
  return o;
}

// Who reads each node's outputs: data inputs (node, input index) and graph outputs.
struct Readers {
  std::vector<std::vector<std::pair<Node*, int>>> data;  // by node id
  std::vector<std::vector<int>> outputs;                 // graph output indices, by node id
  std::vector<char> awaited;                             // a control input of some node
  explicit Readers(const Graph& g) : data(g.num_nodes()), outputs(g.num_nodes()), awaited(g.num_nodes(), 0) {
    for (const auto& n : g.nodes()) {
      for (int i = 0; i < static_cast<int>(n->inputs.size()); ++i) data[n->inputs[i].node->id].push_back({n.get(), i});
      for (const Node* c : n->control_inputs) awaited[c->id] = 1;
    }
    for (int i = 0; i < static_cast<int>(g.outputs.size()); ++i) outputs[g.outputs[i].node->id].push_back(i);
  }
  bool output_read(const Node& n, int index) const {
    for (const auto& [user, slot] : data[n.id])
      if (user->inputs[slot].index == index) return true;
    for (int o : outputs[n.id])
      if (n.graph->outputs[o].index == index) return true;
    return false;
  }
};

inline const int kLoopCond = ops::attr_index(op::While(), "cond");
inline const int kLoopBody = ops::attr_index(op::While(), "body");

// Runs visit(loop, body, cond, outer) for each While of `g` whose body and condition take one
// argument per loop variable and whose body returns one result per variable; `outer` is who
// reads what in `g`. Returns whether any visit changed the graph (each says). A graph without
// a loop costs one scan.
template <class Visit>
bool rewrite_loops(Graph& g, Visit visit) {
  const int n = g.num_nodes();
  bool any_loop = false;
  for (int id = 0; id < n && !any_loop; ++id) any_loop = g.node(id)->op->has(ops::kLoop);
  if (!any_loop) return false;
  const Readers outer(g);
  bool changed = false;
  for (int id = 0; id < n; ++id) {
    Node& loop = *g.node(id);
    if (!loop.op->has(ops::kLoop)) continue;
    const Graph& body = g.library().get(loop.attrs.func(kLoopBody).name);
    const Graph& cond = g.library().get(loop.attrs.func(kLoopCond).name);
    const size_t vars = loop.inputs.size();
    if (body.inputs.size() != vars || body.outputs.size() != vars || cond.inputs.size() != vars ||
        loop.out_shapes.size() != vars)
      continue;
    changed |= visit(loop, body, cond, outer);
  }
  return changed;
}

}  // namespace kiln::optimize
