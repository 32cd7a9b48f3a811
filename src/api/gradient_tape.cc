// kiln::GradientTape over autodiff::Tape: sources as tensors or variables, and zeros for
// sources the target does not reach.
#include "api/variable_handle.h"
#include "autodiff/tape.h"
#include "kiln/gradient.h"

namespace kiln {

GradientTape::GradientTape(bool persistent) : tape_(std::make_unique<autodiff::Tape>(persistent)) {}
GradientTape::~GradientTape() = default;

void GradientTape::watch(const Tensor& t) { tape_->watch(t); }

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

}  // namespace kiln
