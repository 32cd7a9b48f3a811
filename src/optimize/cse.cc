// common_subexpression_elimination: pure nodes with the same op, attrs and inputs (in either
// order for commutative ops) merge into one. Each node's key is a cheap hash, so finding a
// duplicate is a hash lookup, not a scan.
#include <unordered_map>

#include "optimize/pass.h"

namespace kiln::optimize {
namespace {

struct Key {
  std::vector<graph::Output> inputs;
  size_t hash;
};

Key key_of(const graph::Node& n) {
  Key k{n.inputs, 0};
  if (n.op->has(ops::kCommutative) && k.inputs.size() == 2) {
    auto less = [](const graph::Output& a, const graph::Output& b) {
      return a.node->id != b.node->id ? a.node->id < b.node->id : a.index < b.index;
    };
    if (less(k.inputs[1], k.inputs[0])) std::swap(k.inputs[0], k.inputs[1]);
  }
  size_t h = std::hash<const void*>()(n.op) ^ (n.attrs.hash() * 31);
  for (const auto& in : k.inputs)
    h = h * 1000003u ^ (static_cast<size_t>(in.node->id) * 8 + static_cast<size_t>(in.index));
  k.hash = h;
  return k;
}

bool mergeable(const graph::Node& n) {
  return !n.stateful && !n.op->has(ops::kNoKernel) && !n.op->has(ops::kControlFlow) && n.control_inputs.empty() &&
         n.num_outputs() > 0;
}

class CommonSubexpressionElimination : public Pass {
 public:
  const char* name() const override { return "common_subexpression_elimination"; }
  bool run(graph::Graph& g, const PassContext&) override {
    std::unordered_multimap<size_t, std::pair<graph::Node*, Key>> seen;
    Replacements repl;
    for (const auto& up : g.nodes()) {
      graph::Node& n = *up;
      if (!mergeable(n)) continue;
      // Inputs already merged point at their survivors (nodes come in topological order).
      for (auto& in : n.inputs) {
        auto it = repl.find({in.node, in.index});
        if (it != repl.end()) in = it->second;
      }
      Key k = key_of(n);
      graph::Node* twin = nullptr;
      auto range = seen.equal_range(k.hash);
      for (auto it = range.first; it != range.second && !twin; ++it) {
        graph::Node* c = it->second.first;
        if (c->op == n.op && it->second.second.inputs == k.inputs && c->attrs == n.attrs) twin = c;
      }
      if (twin) {
        for (int i = 0; i < n.num_outputs(); ++i) repl[{&n, i}] = graph::Output{twin, i};
      } else {
        seen.emplace(k.hash, std::make_pair(&n, std::move(k)));
      }
    }
    g.replace_uses(repl);
    return !repl.empty();
  }
};
}  // namespace

std::unique_ptr<Pass> make_common_subexpression_elimination() {
  return std::make_unique<CommonSubexpressionElimination>();
}

}  // namespace kiln::optimize
