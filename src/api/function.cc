// kiln::ConcreteFunction's methods, GraphView, and kiln::config's function settings: the
// public face of the trace layer's ConcreteImpl and function settings.
#include "kiln/function.h"

#include <algorithm>
#include <set>
#include <string>

#include "api/variable_handle.h"
#include "core/shape_fit.h"
#include "graph/graph_def.h"
#include "graph/graph_view.h"
#include "trace/concrete.h"
#include "trace/dispatch.h"
#include "trace/function_config.h"
#include "trace/op_observer.h"
#include "trace/replay.h"

namespace kiln {

namespace config {
void run_functions_eagerly(bool enabled) { detail::set_functions_run_eagerly(enabled); }
bool functions_run_eagerly() { return detail::functions_run_eagerly(); }
void set_optimizer_options(const OptimizerOptions& options) { detail::set_default_optimizer_options(options); }
OptimizerOptions optimizer_options() { return detail::default_optimizer_options(); }
}  // namespace config

const Operation* GraphView::find(const std::string& name) const {
  for (const Operation& op : operations)
    if (op.name == name) return &op;
  return nullptr;
}

std::vector<Tensor> ConcreteFunction::operator()(const std::vector<Tensor>& inputs) const {
  if (!impl_) throw FailedPreconditionError("Calling an empty ConcreteFunction");
  // A graph call is not an op a tape can see into, nor a node a trace can hold: under a
  // recording tape, or inside another function's trace, the graph's ops run one by one
  // (trace/replay.h), so the tape differentiates them and the trace inlines them.
  const bool replaying = trace::current_trace() || (trace::observers_active() && trace::recording_here());
  // Checked without building TensorShapes: a steady-state call allocates only its result.
  auto fits = [&](const TensorSpec& spec, const Tensor& t) {
    const detail::TensorImpl* impl = t.impl();
    if (!impl || impl->dtype != spec.dtype) return false;
    if (replaying) return spec.shape.is_compatible_with(t.shape());
    return !impl->symbolic && detail::fits_within(impl->dims.data(), static_cast<int>(impl->dims.size()),
                                                  spec.shape.dims().data(), spec.shape.rank());
  };
  for (size_t i = 0; i < inputs.size() && i < impl_->inputs.size(); ++i) {
    const TensorSpec& spec = impl_->inputs[i];
    if (!fits(spec, inputs[i]))
      throw InvalidArgumentError("ConcreteFunction " + impl_->name + ": argument " + spec.name + " expected " +
                                 std::string(dtype_name(spec.dtype)) + " " + spec.shape.str() + ", got " +
                                 (inputs[i].defined()
                                      ? std::string(dtype_name(inputs[i].dtype())) + " " + inputs[i].shape().str()
                                      : std::string("an empty Tensor")));
  }
  if (replaying) {
    if (inputs.size() != impl_->inputs.size())
      throw InvalidArgumentError(impl_->name + " expects " + std::to_string(impl_->inputs.size()) +
                                 " tensor arguments, got " + std::to_string(inputs.size()));
    std::vector<Tensor> feeds = inputs;
    feeds.insert(feeds.end(), impl_->captures.begin(), impl_->captures.end());
    return trace::replay(*impl_->graph, feeds);
  }
  return impl_->call(inputs);
}

namespace {
// Every accessor of an empty handle (a default-constructed ConcreteFunction) is an error.
const detail::ConcreteImpl& checked(const std::shared_ptr<detail::ConcreteImpl>& impl, const char* what) {
  if (!impl) throw FailedPreconditionError(std::string("ConcreteFunction::") + what + " on an empty ConcreteFunction");
  return *impl;
}
}  // namespace

std::string ConcreteFunction::name() const { return impl_ ? impl_->name : ""; }
GraphView ConcreteFunction::graph() const { return graph::make_view(*checked(impl_, "graph").graph); }
GraphView ConcreteFunction::optimized_graph() const {
  return graph::make_view(*checked(impl_, "optimized_graph").optimized);
}
std::vector<std::string> ConcreteFunction::optimization_report() const {
  return checked(impl_, "optimization_report").optimization_report;
}
GraphDef ConcreteFunction::as_graph_def() const { return graph::to_graph_def(*checked(impl_, "as_graph_def").graph); }
std::string ConcreteFunction::to_dot() const {
  const auto& c = checked(impl_, "to_dot");
  return graph::to_dot(*c.graph, c.name);
}
GraphDef ConcreteFunction::optimized_graph_def() const {
  return graph::to_graph_def(*checked(impl_, "optimized_graph_def").optimized);
}
std::string ConcreteFunction::optimized_to_dot() const {
  const auto& c = checked(impl_, "optimized_to_dot");
  return graph::to_dot(*c.optimized, c.name + " (optimized)");
}
std::vector<TensorSpec> ConcreteFunction::input_specs() const { return checked(impl_, "input_specs").inputs; }
std::vector<TensorSpec> ConcreteFunction::output_specs() const { return checked(impl_, "output_specs").outputs; }
std::vector<Tensor> ConcreteFunction::captured_inputs() const { return checked(impl_, "captured_inputs").captures; }
namespace {
// Each variable a graph's nodes name, its bodies' first (depth-first, each body once).
void collect_variables(const graph::Graph& g, std::set<const graph::Graph*>& seen,
                       std::vector<std::shared_ptr<ops::VariableState>>& out) {
  if (!seen.insert(&g).second) return;
  auto add = [&](const std::shared_ptr<Resource>& r) {
    auto state = std::dynamic_pointer_cast<ops::VariableState>(r);
    if (state && std::find(out.begin(), out.end(), state) == out.end()) out.push_back(std::move(state));
  };
  for (const auto& n : g.nodes())
    for (int i = 0; i < n->attrs.size(); ++i) {
      if (const auto* res = std::get_if<ops::ResourceRef>(&n->attrs[i]); res && res->resource) add(res->resource);
      if (const auto* ref = std::get_if<ops::FuncRef>(&n->attrs[i]))
        collect_variables(g.library().get(ref->name), seen, out);
      if (const auto* refs = std::get_if<std::vector<ops::FuncRef>>(&n->attrs[i]))
        for (const auto& r : *refs) collect_variables(g.library().get(r.name), seen, out);
    }
}
}  // namespace

std::vector<Variable> ConcreteFunction::variables() const {
  const detail::ConcreteImpl& impl = checked(impl_, "variables");
  std::set<const graph::Graph*> seen;
  std::vector<std::shared_ptr<ops::VariableState>> states;
  collect_variables(*impl.graph, seen, states);
  std::vector<Variable> out;
  for (auto& s : states)
    out.emplace_back(std::make_shared<detail::VariableHandle>(detail::VariableHandle{std::move(s)}));
  return out;
}

std::string ConcreteFunction::pretty_printed_signature() const {
  return checked(impl_, "pretty_printed_signature").pretty_signature();
}

}  // namespace kiln
