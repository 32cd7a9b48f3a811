#include "autodiff/builder.h"

#include <string>

#include "autodiff/tape.h"
#include "graph/graph.h"
#include "kiln/control_flow.h"
#include "ops/grad_util.h"
#include "trace/dispatch.h"

namespace kiln::autodiff {

std::vector<Tensor> Builder::emit(const ops::OpDef& op, const Tensor* const* in, int n, const ops::Attrs& attrs) {
  return trace::dispatch(op, in, n, attrs);
}

Tensor Builder::constant(const Tensor& value) { return trace::as_graph_constant(value); }

const ops::TensorImpl* Builder::value_of(const Tensor& t) {
  const ops::TensorImpl* i = t.impl();
  if (!i->symbolic) return i;
  return i->node->const_value();
}

namespace {

// Re-runs a branch body on `inputs` through dispatch (inside the gradient branch being
// traced), so a tape sees its ops. Bodies with state other than variable reads, or with
// nested control flow, are refused: re-running them would repeat their effects.
std::vector<Tensor> replay(const graph::Graph& body, const std::vector<Tensor>& inputs) {
  std::unordered_map<const graph::Node*, std::vector<Tensor>> values;
  for (size_t i = 0; i < body.inputs.size(); ++i) values[body.inputs[i]] = {inputs[i]};
  for (const auto& node : body.nodes()) {
    const graph::Node* n = node.get();
    if (values.count(n)) continue;
    const ops::OpDef& op = *n->op;
    if (op.has(ops::kNoKernel)) throw InternalError("branch body has an unbound placeholder " + n->name);
    if (op.has(ops::kControlFlow))
      throw UnimplementedError("Gradient of a cond/switch_case whose branch contains control flow (" + n->name +
                               ") is not supported inside a traced function");
    if (n->stateful && !op.has(ops::kReadsVariable))
      throw UnimplementedError(std::string("Gradient of a cond/switch_case whose branch has the stateful op ") +
                               op.name + " is not supported inside a traced function");
    if (n->const_value()) {
      values[n] = {trace::as_graph_constant(n->attrs.tensor(ops::kConstValueAttr))};
      continue;
    }
    std::vector<Tensor> in;
    for (const graph::Output& o : n->inputs) in.push_back(values.at(o.node)[o.index]);
    values[n] = trace::dispatch_list(op, in, n->attrs, n->name.c_str());
  }
  std::vector<Tensor> out;
  for (const graph::Output& o : body.outputs) out.push_back(values.at(o.node)[o.index]);
  return out;
}

// Inside a gradient branch: the branch's forward ops again, then their gradient.
std::vector<Tensor> branch_body_gradient(const graph::Graph& body, const std::vector<Tensor>& inputs,
                                         const std::vector<Tensor>& dys) {
  Tape tape(false);
  for (const Tensor& t : inputs) tape.watch(t);
  const std::vector<Tensor> outs = replay(body, inputs);
  std::vector<Source> sources;
  for (const Tensor& t : inputs) sources.push_back(Source{t, nullptr});
  std::vector<Tensor> g = tape.gradient(outs, dys, sources);
  Builder b;
  for (size_t i = 0; i < g.size(); ++i)
    if (!g[i].defined()) g[i] = ops::grad::zeros_like(b, inputs[i]);  // every branch returns the same structure
  return g;
}

}  // namespace

void Builder::branch_gradient(ops::GradContext& c) {
  // The branches live in the library of the graph that holds the forward node.
  const ops::TensorImpl* pred = c.x[0].impl();
  if (!pred || !pred->symbolic) throw InternalError("a branch gradient needs the traced If/Case node");
  const graph::FunctionLibrary& library = pred->node->graph->library();
  std::vector<const graph::Graph*> bodies;
  for (const ops::FuncRef* f : ops::func_refs(c.attrs)) bodies.push_back(&library.get(f->name));
  const std::vector<Tensor> inputs(c.x.begin() + 1, c.x.end());
  std::vector<Tensor> dys = c.dy;
  for (size_t i = 0; i < dys.size(); ++i)
    if (!dys[i].defined()) dys[i] = ops::grad::zeros_like(*this, c.y[i]);
  std::vector<detail::Branch> branches;
  for (const graph::Graph* body : bodies)
    branches.push_back([body, &inputs, &dys] { return branch_body_gradient(*body, inputs, dys); });
  const std::vector<Tensor> g = c.op.has(ops::kControlFlow) && bodies.size() == 2 && c.x[0].dtype() == DType::Bool
                                    ? detail::build_cond(c.x[0], branches[0], branches[1])
                                    : detail::build_case(c.x[0], branches);
  for (size_t i = 0; i < inputs.size(); ++i)
    if (c.needs[i + 1]) c.dx[i + 1] = g[i];
}

}  // namespace kiln::autodiff
