// The vocabulary of gradient functions. Each differentiable op's row carries a GradFn that
// says, in ops, how upstream gradients become input gradients. The ops it emits go through
// a GradBuilder that the autodiff layer implements with dispatch(): an eager tape computes
// the gradient values now, a tape inside a trace adds the gradient ops to the same graph.
#pragma once
#include <functional>
#include <vector>

#include "ops/op_def.h"

namespace kiln::ops {

struct GradContext;

class GradBuilder {
 public:
  virtual ~GradBuilder() = default;
  // Runs (eager) or adds (trace) one op.
  virtual std::vector<Tensor> emit(const OpDef& op, const Tensor* const* in, int n, const Attrs& attrs) = 0;
  // A concrete value as an operand (itself when eager, a Const node when tracing).
  virtual Tensor constant(const Tensor& value) = 0;
  // The value of a tensor when it is known now (concrete, or a Const in a trace), else null.
  virtual const TensorImpl* value_of(const Tensor& t) = 0;
  // The gradient of an If/Case node: a node of the same kind with the same selector whose
  // branches compute each branch's gradient.
  virtual void branch_gradient(GradContext& c) = 0;
};

// What a gradient function sees: the forward op's inputs, outputs and attrs, the gradients
// flowing into each output (undefined for an output nothing depends on), and which input
// gradients are wanted. It fills dx (left undefined: no gradient for that input).
struct GradContext {
  GradBuilder& b;
  const OpDef& op;
  const Attrs& attrs;
  const std::vector<Tensor>& x;
  const std::vector<Tensor>& y;
  const std::vector<Tensor>& dy;
  std::vector<bool> needs;
  std::vector<Tensor> dx;
};

using GradFn = void (*)(GradContext&);

// For ops whose outputs carry no gradient (comparisons, Floor, random numbers): recorded,
// but nothing flows back through them, as TensorFlow's NotDifferentiable.
void no_gradient(GradContext& c);

}  // namespace kiln::ops
