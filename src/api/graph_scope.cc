#include "kiln/graph_scope.h"

#include <memory>
#include <string>

#include "graph/graph.h"
#include "kiln/errors.h"
#include "trace/dispatch.h"
#include "trace/trace_context.h"

namespace kiln {

struct GraphScope::Impl {
  // The graph outlives the context over it (the context is destroyed first).
  std::unique_ptr<graph::Graph> graph = std::make_unique<graph::Graph>();
  std::unique_ptr<trace::TraceContext> context = std::make_unique<trace::TraceContext>(graph.get());
};

GraphScope::GraphScope() : impl_(std::make_unique<Impl>()) {}

GraphScope::~GraphScope() {
  // A TraceContext restores the context that was current when it was made; ending a scope out
  // of order would make a dead context current, so an out-of-order end is a programming error
  // the destructor cannot report: it leaves the thread eager instead of pointing at freed memory.
  if (trace::current_trace() != impl_->context.get()) {
    impl_->context.reset();
    trace::exchange_current_trace(nullptr);
    return;
  }
  impl_->context.reset();
}

bool GraphScope::innermost() const { return trace::current_trace() == impl_->context.get(); }

Tensor GraphScope::placeholder(DType dtype, const TensorShape& shape, const std::string& name) {
  if (!innermost())
    throw FailedPreconditionError("GraphScope::placeholder: the scope is not the innermost graph on this thread");
  graph::Node* ph = impl_->graph->add_placeholder(dtype, shape, name, name);
  impl_->graph->inputs.push_back(ph);
  return ph->output(0);
}

}  // namespace kiln
