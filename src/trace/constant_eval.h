// Evaluates a symbolic tensor that depends only on constants (e.g. a Variable's initial value
// written inside a traced function), with the ops' own kernels.
#pragma once
#include "kiln/tensor.h"

namespace kiln::trace {

// The value of `t`; FailedPreconditionError if it depends on a placeholder or a stateful op.
Tensor evaluate_constant(const Tensor& t);

}  // namespace kiln::trace
