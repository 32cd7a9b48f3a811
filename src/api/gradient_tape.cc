// kiln::GradientTape over autodiff::Tape: sources as tensors or variables, and zeros for
// sources the target does not reach.
#include "api/variable_handle.h"
#include "autodiff/tape.h"
#include "kiln/gradient.h"
#include "ops/op_list.h"
#include "ops/variable_state.h"
#include "trace/dispatch.h"
#include "trace/op_observer.h"
#include "trace/trace_context.h"

namespace kiln {

GradientTape::GradientTape(bool persistent) : tape_(std::make_unique<autodiff::Tape>(persistent)) {}
GradientTape::GradientTape(bool persistent, bool watch_accessed_variables)
    : tape_(std::make_unique<autodiff::Tape>(persistent, watch_accessed_variables)) {}
GradientTape::~GradientTape() = default;

void GradientTape::watch(const Tensor& t) { tape_->watch(t); }
void GradientTape::watch(const Variable& v) { tape_->watch_variable(v.handle()->state); }
void GradientTape::set_recording(bool on) { tape_->set_paused(!on); }
void GradientTape::reset() { tape_->reset(); }

std::vector<Variable> GradientTape::watched_variables() const {
  std::vector<Variable> out;
  for (const std::shared_ptr<Resource>& r : tape_->watched_variables()) {
    auto state = std::dynamic_pointer_cast<ops::VariableState>(r);
    if (!state) continue;
    auto handle = std::make_shared<detail::VariableHandle>();
    handle->state = std::move(state);
    out.emplace_back(std::move(handle));
  }
  return out;
}

std::vector<Tensor> GradientTape::gradient(const Tensor& target, const std::vector<GradientSource>& sources,
                                           const Tensor& output_gradient, UnconnectedGradients unconnected) {
  std::vector<autodiff::Source> s;
  for (const GradientSource& src : sources) {
    if (src.variable)
      s.push_back(autodiff::Source{Tensor(), src.variable->handle()->state.get()});
    else if (src.tensor.defined())
      s.push_back(autodiff::Source{src.tensor, nullptr});
    else
      throw InvalidArgumentError("GradientTape.gradient: a source is an empty Tensor");
  }
  std::vector<Tensor> g = tape_->gradient({target}, {output_gradient}, s);
  if (unconnected == UnconnectedGradients::kZero)
    for (size_t i = 0; i < g.size(); ++i)
      if (!g[i].defined()) g[i] = zeros_like(sources[i].variable ? sources[i].variable->read() : sources[i].tensor);
  return g;
}

std::vector<Tensor> GradientTape::gradient(const Tensor& target, const std::vector<Tensor>& sources,
                                           const Tensor& output_gradient, UnconnectedGradients unconnected) {
  std::vector<autodiff::Source> s;
  for (const Tensor& t : sources) {
    if (!t.defined()) throw InvalidArgumentError("GradientTape.gradient: a source is an empty Tensor");
    s.push_back(autodiff::Source{t, nullptr});
  }
  std::vector<Tensor> g = tape_->gradient({target}, {output_gradient}, s);
  if (unconnected == UnconnectedGradients::kZero)
    for (size_t i = 0; i < g.size(); ++i)
      if (!g[i].defined()) g[i] = zeros_like(sources[i]);
  return g;
}

std::vector<Tensor> GradientTape::gradient(const Tensor& target, const std::vector<Tensor>& sources,
                                           UnconnectedGradients unconnected) {
  return gradient(target, sources, Tensor(), unconnected);
}

std::vector<Tensor> GradientTape::gradient(const Tensor& target, const std::vector<Variable*>& sources,
                                           UnconnectedGradients unconnected) {
  std::vector<autodiff::Source> s;
  for (const Variable* v : sources) {
    if (!v) throw InvalidArgumentError("GradientTape.gradient: a source Variable is null");
    s.push_back(autodiff::Source{Tensor(), v->handle()->state.get()});
  }
  std::vector<Tensor> g = tape_->gradient({target}, {}, s);
  if (unconnected == UnconnectedGradients::kZero)
    for (size_t i = 0; i < g.size(); ++i)
      if (!g[i].defined()) g[i] = zeros_like(sources[i]->read());
  return g;
}

StopRecording::StopRecording() : suspended_(std::make_unique<trace::SuspendObservers>()) {}
StopRecording::~StopRecording() = default;

InitScope::InitScope() : lifted_trace_(trace::exchange_current_trace(nullptr)) {}
InitScope::~InitScope() { trace::exchange_current_trace(lifted_trace_); }

std::vector<Tensor> record_custom_gradient(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                                           CustomGradient grad) {
  if (!grad) throw InvalidArgumentError("record_custom_gradient: no gradient function");
  for (const Tensor& t : inputs)
    if (!t.defined()) throw InvalidArgumentError("record_custom_gradient: an input is an empty Tensor");
  for (const Tensor& t : outputs)
    if (!t.defined()) throw InvalidArgumentError("record_custom_gradient: an output is an empty Tensor");
  if (outputs.empty()) return {};
  std::vector<Tensor> passed;
  {
    StopRecording quiet;  // the pass-through is the custom step itself, not an op to differentiate
    passed = trace::dispatch_list(ops::op::IdentityN(), outputs, ops::Attrs{}, "IdentityN");
  }
  if (trace::TraceContext* t = trace::current_trace()) t->graph().has_custom_gradient = true;
  trace::notify_custom_gradient(inputs, passed, grad);
  return passed;
}

}  // namespace kiln
