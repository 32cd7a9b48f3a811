// Automatic differentiation. A GradientTape records the ops run while it is alive (eagerly,
// or into the graph being traced when it is created inside a kiln::function) and computes
// gradients from each op's own gradient definition. Inside a function the gradient ops join
// the same graph, so a whole training step is one optimized graph.
#pragma once
#include <functional>
#include <initializer_list>
#include <memory>
#include <vector>

#include "kiln/variable.h"

namespace kiln {

namespace autodiff {
class Tape;
}
namespace trace {
class SuspendObservers;
class TraceContext;
}  // namespace trace

enum class UnconnectedGradients { kZero, kNone };

// One source of a gradient: a tensor, or a variable (every read of it while recording).
struct GradientSource {
  Tensor tensor;
  const Variable* variable = nullptr;
};

class GradientTape {
 public:
  // A non-persistent tape computes one set of gradients; a persistent one any number.
  explicit GradientTape(bool persistent = false);
  // watch_accessed_variables false: a variable's reads are recorded only once watch(variable)
  // asked for them (TensorFlow's watch_accessed_variables=False).
  GradientTape(bool persistent, bool watch_accessed_variables);
  ~GradientTape();
  GradientTape(const GradientTape&) = delete;
  GradientTape& operator=(const GradientTape&) = delete;

  // Records ops on `t` from now on (variables are watched automatically when read).
  void watch(const Tensor& t);
  void watch(const Variable& v);
  // Recording stops (tf.GradientTape.stop_recording) until set_recording(true).
  void set_recording(bool on);
  // Forgets everything recorded and watched; recording goes on (tf.GradientTape.reset).
  void reset();
  // The variables watched so far, in the order they were first watched or read.
  std::vector<Variable> watched_variables() const;

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
  // Tensors and variables together; output_gradient may be empty (ones).
  std::vector<Tensor> gradient(const Tensor& target, const std::vector<GradientSource>& sources,
                               const Tensor& output_gradient,
                               UnconnectedGradients unconnected = UnconnectedGradients::kZero);

 private:
  std::unique_ptr<autodiff::Tape> tape_;
};

// While alive, no tape records (TensorFlow's stop_recording for every tape on this thread);
// a tape created inside records as usual. tf.custom_gradient runs its function under this.
class StopRecording {
 public:
  StopRecording();
  ~StopRecording();
  StopRecording(const StopRecording&) = delete;
  StopRecording& operator=(const StopRecording&) = delete;

 private:
  std::unique_ptr<trace::SuspendObservers> suspended_;
};

// tf.init_scope: while alive, ops on this thread run eagerly even inside a trace (computed
// now, once, when the function is traced) and no tape records; the trace resumes after. A
// symbolic tensor of the trace cannot be used inside.
class InitScope {
 public:
  InitScope();
  ~InitScope();
  InitScope(const InitScope&) = delete;
  InitScope& operator=(const InitScope&) = delete;

 private:
  trace::TraceContext* lifted_trace_;  // restored on exit
  StopRecording paused_;
};

// dy (one per output, zeros where nothing flowed) -> one gradient per input (empty: none).
using CustomGradient = std::function<std::vector<Tensor>(const std::vector<Tensor>& dy)>;

// tf.custom_gradient: `outputs` were computed from `inputs` under StopRecording. Returns them
// passed through (IdentityN), recorded by the tapes recording here as one step whose gradient
// is `grad`, eagerly or inside a traced function.
std::vector<Tensor> record_custom_gradient(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                                           CustomGradient grad);

}  // namespace kiln
