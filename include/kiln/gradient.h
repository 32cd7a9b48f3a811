// Automatic differentiation. A GradientTape records the ops run while it is alive (eagerly,
// or into the graph being traced when it is created inside a kiln::function) and computes
// gradients from each op's own gradient definition. Inside a function the gradient ops join
// the same graph, so a whole training step is one optimized graph.
#pragma once
#include <initializer_list>
#include <memory>
#include <vector>

#include "kiln/variable.h"

namespace kiln {

namespace autodiff {
class Tape;
}

enum class UnconnectedGradients { kZero, kNone };

class GradientTape {
 public:
  // A non-persistent tape computes one set of gradients; a persistent one any number.
  explicit GradientTape(bool persistent = false);
  ~GradientTape();
  GradientTape(const GradientTape&) = delete;
  GradientTape& operator=(const GradientTape&) = delete;

  // Records ops on `t` from now on (variables are watched automatically when read).
  void watch(const Tensor& t);

  // d target / d source. A non-scalar target is summed first (TensorFlow's rule). A source
  // the target does not depend on, or of an integer dtype, gets zeros of its shape, or an
  // empty Tensor with UnconnectedGradients::kNone (TensorFlow's unconnected_gradients).
  std::vector<Tensor> gradient(const Tensor& target, const std::vector<Tensor>& sources,
                               UnconnectedGradients unconnected = UnconnectedGradients::kZero);
  std::vector<Tensor> gradient(const Tensor& target, const std::vector<Variable*>& sources,
                               UnconnectedGradients unconnected = UnconnectedGradients::kZero);
  // `tape.gradient(loss, {&w, &b})` (a braced list of Variable* would also read as an
  // iterator range for std::vector<Tensor>).
  std::vector<Tensor> gradient(const Tensor& target, std::initializer_list<Variable*> sources,
                               UnconnectedGradients unconnected = UnconnectedGradients::kZero) {
    return gradient(target, std::vector<Variable*>(sources), unconnected);
  }
  // With an upstream gradient for the target (default ones): d sum(target * output_gradient).
  std::vector<Tensor> gradient(const Tensor& target, const std::vector<Tensor>& sources, const Tensor& output_gradient,
                               UnconnectedGradients unconnected = UnconnectedGradients::kZero);

 private:
  std::unique_ptr<autodiff::Tape> tape_;
};

}  // namespace kiln
