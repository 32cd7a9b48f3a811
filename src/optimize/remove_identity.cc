// remove_identity: uses of a pure forwarding node (Identity) read its input directly, and so
// do uses of a node that passes its inputs through and differs only in its gradient
// (StopGradient, IdentityN: ops::kPassesThrough), since the optimized graph is never
// differentiated (trace/concrete.cc keeps the traced graph for that).
#include "optimize/pass.h"

namespace kiln::optimize {
namespace {
class RemoveIdentity : public Pass {
 public:
  const char* name() const override { return "remove_identity"; }
  bool run(graph::Graph& g, const PassContext&) override {
    Replacements repl;
    for (const auto& n : g.nodes())
      if (n->op->has(ops::kForwardsInput) && !n->stateful && n->inputs.size() == 1 && n->control_inputs.empty())
        repl[{n.get(), 0}] = n->inputs[0];
      else if (n->op->has(ops::kPassesThrough) && !n->stateful && n->control_inputs.empty())
        for (size_t i = 0; i < n->inputs.size(); ++i) repl[{n.get(), static_cast<int>(i)}] = n->inputs[i];
    if (repl.empty()) return false;
    // Only report a change if some use really moved.
    bool used = false;
    for (const auto& n : g.nodes())
      for (const auto& in : n->inputs) used |= repl.count({in.node, in.index}) > 0;
    for (const auto& o : g.outputs) used |= repl.count({o.node, o.index}) > 0;
    g.replace_uses(repl);
    return used;
  }
};
}  // namespace

std::unique_ptr<Pass> make_remove_identity() { return std::make_unique<RemoveIdentity>(); }

}  // namespace kiln::optimize
