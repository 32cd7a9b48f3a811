// common_subexpression_elimination: pure nodes with the same op, attrs and inputs (in either
// order for commutative ops) merge into one. Each node's key is a cheap hash, so finding a
// duplicate is a hash lookup, not a scan.
#include "optimize/pass.h"

namespace kiln::optimize {
namespace {

// A node's inputs in key order: swapped for a commutative op whose second input sorts first.
bool swapped(const graph::Node& n) {
  if (!n.op->has(ops::kCommutative) || n.inputs.size() != 2) return false;
  const graph::Output& a = n.inputs[0];
  const graph::Output& b = n.inputs[1];
  return b.node->id != a.node->id ? b.node->id < a.node->id : b.index < a.index;
}
const graph::Output& key_input(const graph::Node& n, bool swap, size_t i) { return n.inputs[swap ? 1 - i : i]; }

size_t key_hash(const graph::Node& n, bool swap) {
  size_t h = std::hash<const void*>()(n.op) ^ (n.attrs.hash() * 31);
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const graph::Output& in = key_input(n, swap, i);
    h = h * 1000003u ^ (static_cast<size_t>(in.node->id) * 8 + static_cast<size_t>(in.index));
  }
  return h;
}

bool same_key(const graph::Node& a, bool swap_a, const graph::Node& b, bool swap_b) {
  if (a.op != b.op || a.inputs.size() != b.inputs.size()) return false;
  for (size_t i = 0; i < a.inputs.size(); ++i)
    if (!(key_input(a, swap_a, i) == key_input(b, swap_b, i))) return false;
  return a.attrs == b.attrs;
}

bool mergeable(const graph::Node& n) {
  return !n.stateful && !n.op->has(ops::kNoKernel) && !n.op->has(ops::kControlFlow) && n.control_inputs.empty() &&
         n.num_outputs() > 0;
}

class CommonSubexpressionElimination : public Pass {
 public:
  const char* name() const override { return "common_subexpression_elimination"; }
  bool run(graph::Graph& g, const PassContext&) override {
    // Keys refer to the nodes themselves (no copies): hash -> first node with it, and a chain
    // through `next` for the rare hashes several keys share. The hash -> first table is open
    // addressing over one array (a node-based map allocated once per distinct key).
    struct Seen {
      graph::Node* node;
      bool swap;
      size_t hash;
      int next;  // index into `seen` of the next node with this hash, -1 at the end
    };
    std::vector<Seen> seen;
    seen.reserve(static_cast<size_t>(g.num_nodes()));
    size_t slots = 16;
    while (slots < 2 * static_cast<size_t>(g.num_nodes())) slots *= 2;
    std::vector<int> first(slots, -1);  // index into `seen`, -1 for an empty slot
    // The slot of hash h: where its chain starts, or the empty slot it would take.
    auto slot_of = [&](size_t h) {
      size_t i = (h ^ (h >> 29)) & (slots - 1);
      while (first[i] >= 0 && seen[static_cast<size_t>(first[i])].hash != h) i = (i + 1) & (slots - 1);
      return i;
    };
    std::vector<graph::Node*> twin_of(static_cast<size_t>(g.num_nodes()), nullptr);  // merged node -> survivor
    bool merged = false;
    for (const auto& up : g.nodes()) {
      graph::Node& n = *up;
      if (!mergeable(n)) continue;
      // Inputs already merged point at their survivors (nodes come in topological order).
      for (auto& in : n.inputs)
        if (graph::Node* t = twin_of[static_cast<size_t>(in.node->id)]) in.node = t;
      const bool swap = swapped(n);
      const size_t h = key_hash(n, swap);
      const size_t slot = slot_of(h);
      graph::Node* twin = nullptr;
      if (first[slot] < 0) {
        first[slot] = static_cast<int>(seen.size());
      } else {
        int at = first[slot];
        for (; !twin; at = seen[static_cast<size_t>(at)].next) {
          const Seen& c = seen[static_cast<size_t>(at)];
          if (same_key(*c.node, c.swap, n, swap)) twin = c.node;
          if (c.next < 0) break;
        }
        if (!twin) seen[static_cast<size_t>(at)].next = static_cast<int>(seen.size());
      }
      if (twin) {
        twin_of[static_cast<size_t>(n.id)] = twin;  // output i of n becomes output i of twin
        merged = true;
      } else {
        seen.push_back(Seen{.node = &n, .swap = swap, .hash = h, .next = -1});
      }
    }
    if (!merged) return false;
    // The rest of the uses: stateful and control-flow nodes' inputs, the graph's outputs. A
    // survivor is never merged itself, so one hop is enough.
    auto fix = [&](graph::Output& o) {
      if (graph::Node* t = twin_of[static_cast<size_t>(o.node->id)]) o.node = t;
    };
    for (const auto& up : g.nodes())
      for (graph::Output& in : up->inputs) fix(in);
    for (graph::Output& o : g.outputs) fix(o);
    return true;
  }
};
}  // namespace

std::unique_ptr<Pass> make_common_subexpression_elimination() {
  return std::make_unique<CommonSubexpressionElimination>();
}

}  // namespace kiln::optimize
