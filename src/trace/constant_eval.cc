#include "trace/constant_eval.h"

#include <map>

#include "eager/execute.h"
#include "graph/graph.h"

namespace kiln::trace {
namespace {

Tensor eval(const graph::Output& o, std::map<const graph::Node*, std::vector<Tensor>>& memo, bool lift) {
  const graph::Node* n = o.node;
  auto it = memo.find(n);
  if (it != memo.end()) return it->second[o.index];
  if (n->const_value()) return n->attrs.tensor(ops::kConstValueAttr);
  // Lifting, a stateful op with outputs (a random draw, a variable read) runs once, now, as
  // TensorFlow lifts an initializer out of the function. An op with effects never runs here.
  if ((n->stateful && !lift) || n->op->has(ops::kSideEffect) || n->op->has(ops::kNoKernel) ||
      n->op->has(ops::kControlFlow))
    throw FailedPreconditionError("the value depends on the function's inputs or on " + n->name + " (" + n->op->name +
                                  ")");
  std::vector<Tensor> inputs;
  std::vector<const ops::TensorImpl*> impls;
  for (const graph::Output& in : n->inputs) inputs.push_back(eval(in, memo, lift));
  for (const Tensor& t : inputs) impls.push_back(t.impl());
  auto outs = eager::execute(*n->op, impls.data(), static_cast<int>(impls.size()), n->attrs);
  memo[n] = outs;
  return outs[o.index];
}

}  // namespace

Tensor evaluate_constant(const Tensor& t) {
  if (!t.is_symbolic()) return t;
  std::map<const graph::Node*, std::vector<Tensor>> memo;
  return eval(graph::Output{t.impl()->node, t.impl()->index}, memo, false);
}

Tensor evaluate_lifted(const Tensor& t) {
  if (!t.is_symbolic()) return t;
  std::map<const graph::Node*, std::vector<Tensor>> memo;
  return eval(graph::Output{t.impl()->node, t.impl()->index}, memo, true);
}

}  // namespace kiln::trace
