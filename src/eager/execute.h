// Eager execution: validate and infer with the op's shape function, allocate, run the kernel.
#pragma once
#include <vector>

#include "ops/op_def.h"

namespace kiln::eager {

// Runs `op` now on concrete inputs. Returns its outputs.
std::vector<Tensor> execute(const ops::OpDef& op, const ops::TensorImpl* const* inputs, int num_inputs,
                            const ops::Attrs& attrs);
// The same for an op with exactly one output (no vector on the hot path).
Tensor execute1(const ops::OpDef& op, const ops::TensorImpl* const* inputs, int num_inputs, const ops::Attrs& attrs);

// Shared with the graph executor: fill InputInfo for concrete inputs and run the shape
// function; checks that a kernel exists for the chosen dtype.
void infer_concrete(ops::InferContext& ctx);
// Allocate output i of a finished InferContext (concrete shape).
ops::TensorImpl* allocate_output(const ops::InferContext& ctx, int i);
[[noreturn]] void fail_unsupported_dtype(const ops::OpDef& op, DType d);

}  // namespace kiln::eager
