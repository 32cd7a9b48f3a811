#include "trace/dispatch.h"

#include <algorithm>
#include <atomic>
#include <string>
#include <utility>

#include "core/tls.h"
#include "eager/execute.h"
#include "ops/op_list.h"
#include "trace/op_observer.h"
#include "trace/trace_context.h"

namespace kiln::trace {
namespace {
KILN_TLS thread_local TraceContext* t_current = nullptr;
// A graph tensor used outside its function: TensorFlow's TypeError words (kiln's
// OperatorNotAllowedInGraphError is a TypeError in Python).
constexpr const char* kOutOfScope =
    " is out of scope and cannot be used here. Use return values, explicit Python locals or TensorFlow "
    "collections to access it.";
KILN_TLS thread_local std::vector<OpObserver*>* t_observers = nullptr;  // null or non-empty

[[noreturn]] void fail_escaped(const ops::OpDef& op, const Tensor& t) {
  throw InvalidArgumentError(
      std::string("An op outside of the function building code is being passed a symbolic tensor ") + t.str() +
      ". A tensor created inside a kiln::function trace exists only there: return it from the function "
      "instead of storing it outside. [Op:" +
      op.name + "]");
}

constexpr int kStackInputs = 8;

// Collects input impls for eager execution; throws on symbolic or empty inputs.
struct EagerInputs {
  const ops::TensorImpl* stack[kStackInputs];
  std::vector<const ops::TensorImpl*> heap;
  const ops::TensorImpl* const* data;
  EagerInputs(const ops::OpDef& op, const Tensor* const* in, int n) {
    const ops::TensorImpl** p = stack;
    if (n > kStackInputs) {
      heap.resize(n);
      p = heap.data();
    }
    for (int i = 0; i < n; ++i) {
      const ops::TensorImpl* t = in[i]->impl();
      if (!t)
        throw InvalidArgumentError(std::string("Input ") + std::to_string(i) + " is an empty Tensor [Op:" + op.name +
                                   "]");
      if (t->symbolic) fail_escaped(op, *in[i]);
      p[i] = t;
    }
    data = p;
  }
};

graph::Node* add_traced(TraceContext& ctx, const ops::OpDef& op, const Tensor* const* in, int n, ops::Attrs attrs,
                        const char* name_hint) {
  std::vector<graph::Output> inputs;
  inputs.reserve(n);
  for (int i = 0; i < n; ++i) {
    if (!in[i]->defined())
      throw InvalidArgumentError(std::string("Input ") + std::to_string(i) + " is an empty Tensor [Op:" + op.name +
                                 "]");
    inputs.push_back(ctx.resolve(*in[i]));
  }
  std::vector<graph::Node*> control;
  const bool stateful = op.is_stateful();  // control flow nodes are added by their builders
  if (stateful && ctx.last_stateful()) control.push_back(ctx.last_stateful());
  graph::Node* node = ctx.graph().add_node(op, name_hint ? name_hint : op.name, std::move(inputs), std::move(attrs),
                                           std::move(control));
  if (stateful) ctx.add_stateful(node);
  return node;
}
}  // namespace

TraceContext* current_trace() { return t_current; }
TraceContext* exchange_current_trace(TraceContext* t) { return std::exchange(t_current, t); }

void add_observer(OpObserver* o) {
  if (!t_observers) t_observers = new std::vector<OpObserver*>();
  t_observers->push_back(o);
}
void remove_observer(OpObserver* o) {
  if (!t_observers) return;
  auto& v = *t_observers;
  v.erase(std::remove(v.begin(), v.end(), o), v.end());
  if (v.empty()) {
    delete t_observers;
    t_observers = nullptr;
  }
}
bool observers_active() { return t_observers != nullptr; }
bool recording_here() {
  if (!t_observers) return false;
  for (OpObserver* o : *t_observers)
    if (o->records_in(t_current)) return true;
  return false;
}
bool watched_here(const std::vector<Tensor>& ts) {
  if (!t_observers) return false;
  for (OpObserver* o : *t_observers)
    if (o->records_in(t_current))
      for (const Tensor& t : ts)
        if (t.defined() && o->watches(t)) return true;
  return false;
}
void notify_observers(const ops::OpDef& op, const Tensor* const* in, int n, const ops::Attrs& attrs,
                      const std::vector<Tensor>& out) {
  if (!t_observers) return;
  const std::vector<OpObserver*> observers = *t_observers;  // an observer may add ops
  for (OpObserver* o : observers)
    if (o->records_in(t_current)) o->on_op(op, in, n, attrs, out);
}

void notify_custom_gradient(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                            const CustomGradientFn& grad) {
  if (!t_observers) return;
  const std::vector<OpObserver*> observers = *t_observers;
  for (OpObserver* o : observers)
    if (o->records_in(t_current)) o->on_custom_gradient(inputs, outputs, grad);
}

SuspendObservers::SuspendObservers() : saved_(t_observers) { t_observers = nullptr; }
SuspendObservers::~SuspendObservers() {
  delete t_observers;  // observers added meanwhile and not removed (none when scopes nest)
  t_observers = saved_;
}

const ops::Attrs& no_attrs() {
  static const ops::Attrs empty;
  return empty;
}

namespace {
std::atomic<uint64_t> g_trace_serial{0};
}  // namespace

TraceContext::TraceContext(graph::Graph* g) : graph_(g), outer_(t_current), serial_(++g_trace_serial) {
  t_current = this;
}
TraceContext::~TraceContext() { t_current = outer_; }

graph::Node* TraceContext::capture_outer(const graph::Output& o) {
  auto key = std::make_pair(static_cast<const graph::Node*>(o.node), o.index);
  auto it = outer_index_.find(key);
  if (it != outer_index_.end()) return it->second;
  graph::Node* ph = graph_->add_placeholder(o.node->out_dtypes[o.index], o.node->out_shapes[o.index], "capture", "");
  captures_.push_back(Capture{Tensor(), o, ph});
  outer_index_[key] = ph;
  return ph;
}

graph::Output TraceContext::resolve(const Tensor& t) {
  const ops::TensorImpl* impl = t.impl();
  if (impl->symbolic) {
    if (impl->graph_serial == graph_->serial()) return graph::Output{impl->node, impl->index};
    if (!graph::graph_alive(impl->graph_serial))  // its graph is gone: the node may not be read
      throw OperatorNotAllowedInGraphError(t.str() + kOutOfScope +
                                           " It leaked out of a traced function that no longer exists.");
    graph::Graph* owner = impl->node->graph;
    if (outer_ && graph_->parent() && (owner == graph_->parent() || owner->is_ancestor_of(graph_->parent()))) {
      const graph::Output in_parent = outer_->resolve(t);  // the parent captures it first if needed
      return graph::Output{capture_outer(in_parent), 0};
    }
    throw OperatorNotAllowedInGraphError(t.str() + kOutOfScope + " It belongs to another traced function.");
  }
  if (graph_->parent() && outer_) {  // an eager tensor used in a branch: the enclosing function captures it
    const graph::Output in_parent = outer_->resolve(t);
    return graph::Output{capture_outer(in_parent), 0};
  }
  auto it = eager_index_.find(impl);
  if (it != eager_index_.end()) return graph::Output{it->second, 0};
  const TensorShape shape(impl->dims);
  graph::Node* ph = graph_->add_placeholder(impl->dtype, shape, "capture", "");
  captures_.push_back(Capture{t, graph::Output{}, ph});
  eager_index_[impl] = ph;
  return graph::Output{ph, 0};
}

std::vector<Tensor> dispatch(const ops::OpDef& op, const Tensor* const* in, int n, ops::Attrs attrs,
                             const char* name_hint) {
  std::vector<Tensor> out;
  if (!t_current) {
    EagerInputs ei(op, in, n);
    out = eager::execute(op, ei.data, n, attrs);
  } else {
    graph::Node* node = add_traced(*t_current, op, in, n, attrs, name_hint);
    for (int i = 0; i < node->num_outputs(); ++i) out.push_back(node->output(i));
  }
  if (t_observers) notify_observers(op, in, n, attrs, out);
  return out;
}

Tensor dispatch1(const ops::OpDef& op, const Tensor* const* in, int n, const ops::Attrs& attrs, const char* name_hint) {
  if (t_observers) return dispatch(op, in, n, attrs, name_hint)[0];
  if (!t_current) {
    EagerInputs ei(op, in, n);
    return eager::execute1(op, ei.data, n, attrs);
  }
  graph::Node* node = add_traced(*t_current, op, in, n, attrs, name_hint);
  return node->output(0);
}

std::vector<Tensor> dispatch_list(const ops::OpDef& op, const std::vector<Tensor>& inputs, ops::Attrs attrs,
                                  const char* name_hint) {
  std::vector<const Tensor*> ptrs;
  ptrs.reserve(inputs.size());
  for (const Tensor& t : inputs) ptrs.push_back(&t);
  return dispatch(op, ptrs.data(), static_cast<int>(ptrs.size()), std::move(attrs), name_hint);
}

Tensor as_graph_constant(Tensor concrete, const char* name_hint) {
  if (!t_current || concrete.is_symbolic()) return concrete;  // a symbolic one is in the graph already
  return t_current->graph().add_const(concrete, name_hint)->output(0);
}

}  // namespace kiln::trace
