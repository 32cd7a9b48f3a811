// Builders for kiln::cond, while_loop, fori_loop and switch_case inside a trace: each body is
// traced into a function of the graph's library, then one If/While/Case node calls them.
#include "kiln/control_flow.h"

#include <limits>
#include <optional>
#include <string>

#include "ops/op_list.h"
#include "trace/constant_eval.h"
#include "trace/dispatch.h"
#include "trace/op_observer.h"
#include "trace/trace_context.h"

namespace kiln::detail {
namespace {

using graph::Graph;
using graph::Node;
using graph::Output;
using trace::TraceContext;

struct ArgSpec {
  DType dtype;
  TensorShape shape;
  std::string name;
};

// One traced body: its graph, which outer outputs it captured, its results.
struct TracedBody {
  Graph* g = nullptr;
  std::vector<Output> captured;      // in the parent graph
  std::vector<Node*> capture_nodes;  // the placeholders in g
  bool stateful = false;
  std::vector<DType> dtypes;
  std::vector<TensorShape> shapes;
};

TracedBody trace_body(TraceContext& parent, const std::string& name, const std::vector<ArgSpec>& args,
                      const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& fn) {
  TracedBody b;
  b.g = parent.graph().new_function(name);
  std::vector<Tensor> results;
  {
    TraceContext ctx(b.g);
    ctx.allow_variable_creation = parent.allow_variable_creation;
    std::vector<Tensor> placeholders;
    for (const ArgSpec& a : args) {
      Node* ph = b.g->add_placeholder(a.dtype, a.shape, a.name, "");
      b.g->inputs.push_back(ph);
      placeholders.push_back(ph->output(0));
    }
    results = fn(placeholders);
    for (const Tensor& r : results) {
      if (!r.defined()) throw InvalidArgumentError(name + " returned an empty Tensor");
      const Tensor* in[] = {&r};
      Tensor out = trace::dispatch1(ops::op::Identity(), in, 1, trace::no_attrs(), "Identity");
      b.g->outputs.push_back(Output{out.impl()->node, 0});
      b.dtypes.push_back(out.dtype());
      b.shapes.push_back(out.impl()->node->out_shapes[0]);
    }
    for (const auto& c : ctx.captures()) {
      b.captured.push_back(c.outer);
      b.capture_nodes.push_back(c.node);
    }
    b.stateful = !ctx.stateful_nodes().empty();
    parent.resources.insert(parent.resources.end(), ctx.resources.begin(), ctx.resources.end());
  }
  return b;
}

// Every body takes the same inputs: its own arguments, then the union of all captures.
std::vector<Output> unify_captures(std::vector<TracedBody>& bodies) {
  std::vector<Output> all;
  for (const auto& b : bodies)
    for (const Output& o : b.captured)
      if (std::find(all.begin(), all.end(), o) == all.end()) all.push_back(o);
  for (auto& b : bodies)
    for (const Output& o : all) {
      Node* ph = nullptr;
      for (size_t i = 0; i < b.captured.size(); ++i)
        if (b.captured[i] == o) ph = b.capture_nodes[i];
      if (!ph) ph = b.g->add_placeholder(o.node->out_dtypes[o.index], o.node->out_shapes[o.index], "capture", "");
      b.g->inputs.push_back(ph);
    }
  return all;
}

// Adds the control-flow node to the parent graph, ordered after earlier stateful ops.
std::vector<Tensor> add_node(TraceContext& parent, const ops::OpDef& stateless, const ops::OpDef& stateful_op,
                             bool stateful, const std::string& name, std::vector<Output> inputs, ops::Attrs attrs,
                             std::vector<DType> dtypes, std::vector<TensorShape> shapes) {
  const ops::OpDef& op = stateful ? stateful_op : stateless;
  std::vector<Node*> control;
  if (stateful && parent.last_stateful()) control.push_back(parent.last_stateful());
  Node* n = parent.graph().add_node_with_outputs(op, name, std::move(inputs), std::move(attrs), std::move(dtypes),
                                                 std::move(shapes), std::move(control));
  if (stateful) parent.add_stateful(n);
  std::vector<Tensor> out;
  for (int i = 0; i < n->num_outputs(); ++i) out.push_back(n->output(i));
  if (trace::observers_active()) {  // a GradientTape sees the node like any op
    std::vector<Tensor> in;
    for (const Output& o : n->inputs) in.push_back(o.node->output(o.index));
    std::vector<const Tensor*> ptrs;
    for (const Tensor& t : in) ptrs.push_back(&t);
    trace::notify_observers(op, ptrs.data(), static_cast<int>(ptrs.size()), n->attrs, out);
  }
  return out;
}

TraceContext& current() {
  TraceContext* ctx = trace::current_trace();
  if (!ctx) throw InternalError("control flow builder called outside a trace");
  return *ctx;
}

// Checks that branches agree on outputs; returns the most specific common shapes.
std::vector<TensorShape> merge_outputs(const std::vector<TracedBody>& bodies, const char* what) {
  const TracedBody& first = bodies[0];
  for (size_t b = 1; b < bodies.size(); ++b) {
    if (bodies[b].dtypes.size() != first.dtypes.size())
      throw InvalidArgumentError(std::string(what) +
                                 ": branches must return the same number of tensors; branch 0 returns " +
                                 std::to_string(first.dtypes.size()) + ", branch " + std::to_string(b) + " returns " +
                                 std::to_string(bodies[b].dtypes.size()));
    for (size_t i = 0; i < first.dtypes.size(); ++i)
      if (bodies[b].dtypes[i] != first.dtypes[i])
        throw InvalidArgumentError(std::string(what) + ": branches must return the same dtypes; output " +
                                   std::to_string(i) + " is " + std::string(dtype_name(first.dtypes[i])) +
                                   " in branch 0 and " + std::string(dtype_name(bodies[b].dtypes[i])) + " in branch " +
                                   std::to_string(b));
  }
  std::vector<TensorShape> shapes = first.shapes;
  for (size_t b = 1; b < bodies.size(); ++b)
    for (size_t i = 0; i < shapes.size(); ++i) shapes[i] = shapes[i].most_specific_common(bodies[b].shapes[i]);
  return shapes;
}

// The value of a scalar bool known while tracing (it depends only on constants), if so.
std::optional<bool> known_bool(const Tensor& t) {
  try {
    return trace::evaluate_constant(t).item<bool>();
  } catch (const FailedPreconditionError&) {
    return std::nullopt;
  }
}

Tensor checked_cond(const LoopCond& cond, const std::vector<Tensor>& vars) {
  Tensor c = cond(vars);
  if (!c.defined() || c.dtype() != DType::Bool || c.rank() != 0)
    throw InvalidArgumentError("while_loop: cond must return a scalar bool tensor");
  return c;
}

// Under a GradientTape, a loop is unrolled into the graph being traced so that the tape
// records every iteration (a While node keeps no per-iteration values to differentiate):
// - exactly, while the condition is known at trace time (a counted loop over constants);
// - then, given maximum_iterations, as that many conditional iterations, each a cond whose
//   true branch is the body (so nothing runs past the end and cond's gradient applies).
// Returns false, with `vars` advanced by the iterations already unrolled, when neither
// holds; the caller then builds a While node for the rest.
constexpr int64_t kMaxUnrolledIterations = 1000;
bool unroll_for_tape(const LoopCond& cond, const LoopBody& body, std::vector<Tensor>& vars, const WhileOptions& options,
                     int64_t* done) {
  const int64_t limit = options.maximum_iterations.value_or(std::numeric_limits<int64_t>::max());
  int64_t& it = *done;
  auto step = [&] {
    std::vector<Tensor> next = body(vars);
    if (next.size() != vars.size())
      throw InvalidArgumentError("while_loop: body returned " + std::to_string(next.size()) +
                                 " loop variables, expected " + std::to_string(vars.size()));
    for (size_t i = 0; i < next.size(); ++i)
      if (!next[i].defined() || next[i].dtype() != vars[i].dtype())
        throw InvalidArgumentError("while_loop: loop variable " + std::to_string(i) + " enters the loop as " +
                                   std::string(dtype_name(vars[i].dtype())) + " but the body returns " +
                                   (next[i].defined() ? std::string(dtype_name(next[i].dtype())) : "an empty Tensor"));
    return next;
  };
  for (; it < limit; ++it) {
    if (it >= kMaxUnrolledIterations) return false;
    const std::optional<bool> more = known_bool(checked_cond(cond, vars));
    if (!more) break;
    if (!*more) return true;
    vars = step();
  }
  if (it == limit) return true;
  if (!options.maximum_iterations || limit - it > kMaxUnrolledIterations) return false;
  for (; it < limit; ++it) {
    const Tensor c = checked_cond(cond, vars);
    vars = build_cond(c, step, [&] { return vars; });
  }
  return true;
}

}  // namespace

std::vector<Tensor> build_cond(const Tensor& pred, const Branch& then_fn, const Branch& else_fn) {
  TraceContext& parent = current();
  if (!pred.defined() || pred.dtype() != DType::Bool || (pred.rank() > 0))
    throw InvalidArgumentError("kiln::cond: pred must be a scalar bool tensor, got " +
                               (pred.defined() ? pred.str() : std::string("an empty Tensor")));
  const Output p = parent.resolve(pred);
  std::vector<TracedBody> bodies;
  bodies.push_back(trace_body(parent, "cond_true", {}, [&](const std::vector<Tensor>&) { return then_fn(); }));
  bodies.push_back(trace_body(parent, "cond_false", {}, [&](const std::vector<Tensor>&) { return else_fn(); }));
  const auto shapes = merge_outputs(bodies, "kiln::cond");
  std::vector<Output> inputs = unify_captures(bodies);
  inputs.insert(inputs.begin(), p);
  const bool stateful = bodies[0].stateful || bodies[1].stateful;
  ops::Attrs attrs{ops::FuncRef{bodies[0].g->function_name()}, ops::FuncRef{bodies[1].g->function_name()}};
  return add_node(parent, ops::op::StatelessIf(), ops::op::If(), stateful, "cond", std::move(inputs), std::move(attrs),
                  bodies[0].dtypes, shapes);
}

std::vector<Tensor> build_case(const Tensor& index, const std::vector<Branch>& branches) {
  TraceContext& parent = current();
  if (branches.empty()) throw InvalidArgumentError("switch_case needs at least one branch");
  if (!index.defined() || index.dtype() != DType::Int32 || index.rank() > 0)
    throw InvalidArgumentError("switch_case: branch_index must be a scalar int32 tensor");
  const Output idx = parent.resolve(index);
  std::vector<TracedBody> bodies;
  for (size_t i = 0; i < branches.size(); ++i)
    bodies.push_back(trace_body(parent, "switch_case_branch" + std::to_string(i), {},
                                [&](const std::vector<Tensor>&) { return branches[i](); }));
  const auto shapes = merge_outputs(bodies, "kiln::switch_case");
  std::vector<Output> inputs = unify_captures(bodies);
  inputs.insert(inputs.begin(), idx);
  bool stateful = false;
  std::vector<ops::FuncRef> refs;
  for (const auto& b : bodies) {
    stateful |= b.stateful;
    refs.push_back(ops::FuncRef{b.g->function_name()});
  }
  return add_node(parent, ops::op::StatelessCase(), ops::op::Case(), stateful, "switch_case", std::move(inputs),
                  ops::Attrs{std::move(refs)}, bodies[0].dtypes, shapes);
}

namespace {
std::vector<Tensor> build_while_node(const LoopCond& cond, const LoopBody& body, const std::vector<Tensor>& vars_in,
                                     const WhileOptions& options);
}  // namespace

std::vector<Tensor> build_while(const LoopCond& cond, const LoopBody& body, const std::vector<Tensor>& vars_in,
                                const WhileOptions& options) {
  std::vector<Tensor> vars = vars_in;
  WhileOptions rest = options;
  if (trace::recording_here()) {
    int64_t done = 0;
    if (unroll_for_tape(cond, body, vars, options, &done)) return vars;
    if (rest.maximum_iterations) *rest.maximum_iterations -= done;
    return build_while_node(cond, body, vars, rest);
  }
  return build_while_node(cond, body, vars, options);
}

namespace {
std::vector<Tensor> build_while_node(const LoopCond& cond, const LoopBody& body, const std::vector<Tensor>& vars_in,
                                     const WhileOptions& options) {
  TraceContext& parent = current();
  std::vector<Tensor> vars = vars_in;
  // maximum_iterations: a counter loop variable in front, as TensorFlow builds it.
  const bool counted = options.maximum_iterations.has_value();
  if (counted) vars.insert(vars.begin(), constant(int64_t{0}));
  const size_t first = counted ? 1 : 0;
  if (!options.shape_invariants.empty() && options.shape_invariants.size() != vars_in.size())
    throw InvalidArgumentError("while_loop: shape_invariants must have one shape per loop variable");
  std::vector<ArgSpec> specs;
  std::vector<Output> var_outputs;
  for (size_t i = 0; i < vars.size(); ++i) {
    if (!vars[i].defined()) throw InvalidArgumentError("while_loop: loop variable " + std::to_string(i) + " is empty");
    var_outputs.push_back(parent.resolve(vars[i]));
    const Output& o = var_outputs.back();
    TensorShape shape = o.node->out_shapes[o.index];
    if (i >= first && !options.shape_invariants.empty()) {
      const TensorShape& inv = options.shape_invariants[i - first];
      if (!inv.is_compatible_with(shape))
        throw InvalidArgumentError("while_loop: shape invariant " + inv.str() + " does not fit loop variable " +
                                   std::to_string(i - first) + " of shape " + shape.str());
      shape = inv;
    }
    specs.push_back(ArgSpec{o.node->out_dtypes[o.index], shape, "loop_var"});
  }
  const int64_t max_iter = options.maximum_iterations.value_or(0);
  std::vector<TracedBody> parts;
  parts.push_back(trace_body(parent, "while_cond", specs, [&](const std::vector<Tensor>& v) {
    std::vector<Tensor> user(v.begin() + first, v.end());
    Tensor c = cond(user);
    if (!c.defined() || c.dtype() != DType::Bool)
      throw InvalidArgumentError("while_loop: cond must return a bool tensor");
    if (counted) c = logical_and(less(v[0], constant(max_iter)), c);
    return std::vector<Tensor>{c};
  }));
  parts.push_back(trace_body(parent, "while_body", specs, [&](const std::vector<Tensor>& v) {
    std::vector<Tensor> user(v.begin() + first, v.end());
    std::vector<Tensor> next = body(user);
    if (next.size() != user.size())
      throw InvalidArgumentError("while_loop: body returned " + std::to_string(next.size()) +
                                 " loop variables, expected " + std::to_string(user.size()));
    for (size_t i = 0; i < next.size(); ++i) {
      if (next[i].dtype() != user[i].dtype())
        throw InvalidArgumentError("while_loop: loop variable " + std::to_string(i) + " enters the loop as " +
                                   std::string(dtype_name(user[i].dtype())) + " but the body returns " +
                                   std::string(dtype_name(next[i].dtype())));
      const TensorShape want = specs[i + first].shape;
      if (!want.is_compatible_with(next[i].shape()) || (want.rank() >= 0 && next[i].shape().rank() < 0))
        throw InvalidArgumentError("while_loop: loop variable " + std::to_string(i) + " enters the loop with shape " +
                                   want.str() + ", but has shape " + next[i].shape().str() +
                                   " after one iteration. To allow the shape to vary across iterations, use "
                                   "WhileOptions::shape_invariants to specify a less-specific shape.");
    }
    if (counted) next.insert(next.begin(), v[0] + int64_t{1});
    return next;
  }));
  // Captures become extra loop variables that the body passes through unchanged.
  std::vector<Output> captured = unify_captures(parts);
  for (size_t k = 0; k < captured.size(); ++k) {
    Graph* g = parts[1].g;
    Node* ph = g->inputs[vars.size() + k];
    const Tensor t = ph->output(0);
    TraceContext ctx(g);  // a pass-through Identity in the body
    const Tensor* in[] = {&t};
    Tensor out = trace::dispatch1(ops::op::Identity(), in, 1, trace::no_attrs(), "Identity");
    g->outputs.push_back(Output{out.impl()->node, 0});
  }
  std::vector<Output> inputs = var_outputs;
  inputs.insert(inputs.end(), captured.begin(), captured.end());
  std::vector<DType> dtypes;
  std::vector<TensorShape> shapes;
  for (const ArgSpec& s : specs) {
    dtypes.push_back(s.dtype);
    shapes.push_back(s.shape);
  }
  for (const Output& o : captured) {
    dtypes.push_back(o.node->out_dtypes[o.index]);
    shapes.push_back(o.node->out_shapes[o.index]);
  }
  const bool stateful = parts[0].stateful || parts[1].stateful;
  ops::Attrs attrs{ops::FuncRef{parts[0].g->function_name()}, ops::FuncRef{parts[1].g->function_name()}};
  std::vector<Tensor> out = add_node(parent, ops::op::StatelessWhile(), ops::op::While(), stateful, "while",
                                     std::move(inputs), std::move(attrs), dtypes, shapes);
  return std::vector<Tensor>(out.begin() + first, out.begin() + vars.size());
}
}  // namespace

Tensor loop_bound_tensor(const LoopBound& b) {
  if (b.tensor.defined()) return b.tensor.dtype() == DType::Int32 ? b.tensor : cast(b.tensor, DType::Int32);
  return constant(static_cast<int32_t>(b.value));
}
int64_t loop_bound_value(const LoopBound& b) {
  if (!b.tensor.defined()) return b.value;
  return b.tensor.dtype() == DType::Int64 ? b.tensor.item<int64_t>() : b.tensor.item<int32_t>();
}

}  // namespace kiln::detail
