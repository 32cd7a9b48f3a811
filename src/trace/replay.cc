#include "trace/replay.h"

#include <string>

#include "core/run_limits.h"
#include "graph/library.h"
#include "trace/dispatch.h"
#include "trace/op_observer.h"

namespace kiln::trace {
namespace {

std::vector<Tensor> replay_graph(const graph::Graph& g, const std::vector<Tensor>& inputs);

// The nodes that g's outputs need, with every stateful node (it runs on every call) and what
// they need: what a call of the graph runs.
std::vector<bool> needed_nodes(const graph::Graph& g) {
  std::vector<bool> needed(g.num_nodes(), false);
  std::vector<const graph::Node*> stack;
  auto need = [&](const graph::Node* n) {
    if (!needed[n->id]) {
      needed[n->id] = true;
      stack.push_back(n);
    }
  };
  for (const graph::Output& o : g.outputs) need(o.node);
  for (const auto& n : g.nodes())
    if (n->stateful) need(n.get());
  while (!stack.empty()) {
    const graph::Node* n = stack.back();
    stack.pop_back();
    for (const graph::Output& in : n->inputs) need(in.node);
    for (const graph::Node* c : n->control_inputs) need(c);
  }
  return needed;
}

// Runs the bodies of one eager If or Case node by replaying them.
class ReplayBodies final : public ops::SubgraphRunner {
 public:
  ReplayBodies(const graph::Graph& g, const graph::Node& n) : library_(g.library()), refs_(ops::func_refs(n.attrs)) {}
  void run(int body, const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) override {
    outputs = replay_graph(library_.get(refs_.at(body)->name), inputs);
  }
  int num_bodies() const override { return static_cast<int>(refs_.size()); }

 private:
  const graph::FunctionLibrary& library_;
  std::vector<const ops::FuncRef*> refs_;
};

// An eager While: cond and body replayed until cond is false.
std::vector<Tensor> replay_while(const graph::Graph& g, const graph::Node& n, std::vector<Tensor> vars) {
  const std::vector<const ops::FuncRef*> refs = ops::func_refs(n.attrs);  // cond, body
  const graph::Graph& cond = g.library().get(refs.at(0)->name);
  const graph::Graph& body = g.library().get(refs.at(1)->name);
  while (true) {
    detail::check_limits();  // a deadline or an interrupt stops the loop, as in a plan
    const std::vector<Tensor> c = replay_graph(cond, vars);
    if (c.empty()) throw InternalError("the cond of While node '" + n.name + "' has no output");
    if (!ops::condition_truth(c[0])) return vars;
    vars = replay_graph(body, vars);
  }
}

std::vector<Tensor> run_node(const graph::Graph& g, const graph::Node& n, const std::vector<Tensor>& in) {
  if (n.op->has(ops::kConstValue)) return {as_graph_constant(n.attrs.tensor(ops::kConstValueAttr), n.name.c_str())};
  if (n.op->has(ops::kControlFlow)) {
    if (current_trace())
      throw UnimplementedError("Calling a ConcreteFunction whose graph has control flow (node '" + n.name + "', " +
                               n.op->name + ") inside another function's trace: call the kiln.function itself");
    if (n.op->has(ops::kLoop)) return replay_while(g, n, in);
    ReplayBodies bodies(g, n);
    std::vector<Tensor> out;
    n.op->control_flow(n.attrs, in, bodies, out);
    return out;
  }
  std::vector<const Tensor*> ptrs;
  ptrs.reserve(in.size());
  for (const Tensor& t : in) ptrs.push_back(&t);
  return dispatch(*n.op, ptrs.data(), static_cast<int>(ptrs.size()), n.attrs, n.name.c_str());
}

std::vector<Tensor> replay_graph(const graph::Graph& g, const std::vector<Tensor>& inputs) {
  if (inputs.size() != g.inputs.size())
    throw InvalidArgumentError("graph '" + g.function_name() + "' takes " + std::to_string(g.inputs.size()) +
                               " inputs, got " + std::to_string(inputs.size()));
  if (g.has_custom_gradient && observers_active() && recording_here())
    throw UnimplementedError("graph '" + g.function_name() +
                             "' holds a custom gradient (tf.custom_gradient), which kiln cannot apply when it runs a "
                             "ConcreteFunction or a loaded function's ops under a GradientTape; call the kiln.function "
                             "itself under the tape");
  std::vector<std::vector<Tensor>> values(g.num_nodes());
  for (size_t i = 0; i < inputs.size(); ++i) values[g.inputs[i]->id] = {inputs[i]};
  const std::vector<bool> needed = needed_nodes(g);
  for (const auto& node : g.nodes()) {
    const graph::Node& n = *node;
    if (!needed[n.id] || !values[n.id].empty()) continue;
    if (n.op->has(ops::kNoKernel))
      throw InternalError("node '" + n.name + "' (" + n.op->name + ") is not an input of the graph it is in");
    std::vector<Tensor> in;
    in.reserve(n.inputs.size());
    for (const graph::Output& o : n.inputs) in.push_back(values[o.node->id].at(o.index));
    values[n.id] = run_node(g, n, in);
    if (static_cast<int>(values[n.id].size()) != n.num_outputs())
      throw InternalError("replaying node '" + n.name + "' gave " + std::to_string(values[n.id].size()) +
                          " outputs, the graph has " + std::to_string(n.num_outputs()));
  }
  std::vector<Tensor> out;
  out.reserve(g.outputs.size());
  for (const graph::Output& o : g.outputs) out.push_back(values[o.node->id].at(o.index));
  return out;
}

}  // namespace

std::vector<Tensor> replay(const graph::Graph& g, const std::vector<Tensor>& inputs) { return replay_graph(g, inputs); }

}  // namespace kiln::trace
