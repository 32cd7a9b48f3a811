// dispatch(): the one place that chooses eager or graph. No trace active and concrete
// inputs: run the kernel now. A trace active: add a node to the graph being built.
#pragma once
#include <initializer_list>
#include <vector>

#include "graph/graph.h"

namespace kiln::trace {

class TraceContext;

// The innermost active trace on this thread, or null (eager).
TraceContext* current_trace();
// Makes `t` this thread's current trace (null: eager) and returns the one it replaces
// (kiln::InitScope lifts ops out of a trace with it).
TraceContext* exchange_current_trace(TraceContext* t);

// The attrs of an op that has none (shared, so a call builds no temporary).
const ops::Attrs& no_attrs();

// Inputs are passed as pointers so that a call copies no handles (no refcount traffic).
std::vector<Tensor> dispatch(const ops::OpDef& op, const Tensor* const* inputs, int num_inputs, ops::Attrs attrs,
                             const char* name_hint = nullptr);
Tensor dispatch1(const ops::OpDef& op, const Tensor* const* inputs, int num_inputs, const ops::Attrs& attrs,
                 const char* name_hint = nullptr);
inline Tensor dispatch1(const ops::OpDef& op, std::initializer_list<const Tensor*> inputs,
                        const ops::Attrs& attrs = no_attrs(), const char* name_hint = nullptr) {
  return dispatch1(op, inputs.begin(), static_cast<int>(inputs.size()), attrs, name_hint);
}
// For variadic ops (ConcatV2, Pack, KilnPrint).
std::vector<Tensor> dispatch_list(const ops::OpDef& op, const std::vector<Tensor>& inputs, ops::Attrs attrs,
                                  const char* name_hint = nullptr);

// A concrete value made by a factory (constant, zeros, eye...): returned as is when eager,
// as a Const node of the graph when tracing.
Tensor as_graph_constant(Tensor concrete, const char* name_hint = "Const");

}  // namespace kiln::trace
