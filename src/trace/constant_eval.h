// Evaluates a symbolic tensor of a trace that depends on no placeholder, with the ops' own
// kernels: a condition known while tracing, or a Variable's initial value lifted out of the
// function as TensorFlow lifts it.
#pragma once
#include "kiln/tensor.h"

namespace kiln::trace {

// The value of `t` if it depends only on constants (no placeholder, no stateful op), else
// FailedPreconditionError.
Tensor evaluate_constant(const Tensor& t);
// The same, but stateful ops with outputs run once, now: random ops draw, variable reads read
// (FailedPreconditionError for a variable not yet initialized). Ops with effects (print,
// assert), placeholders and control flow still fail.
Tensor evaluate_lifted(const Tensor& t);

}  // namespace kiln::trace
