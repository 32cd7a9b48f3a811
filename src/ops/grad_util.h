// Shorthands for writing gradient functions: each emits one op (or a few) through the
// GradBuilder, so a gradient reads like the math it implements. Shapes are taken statically
// when known (eager always; traces usually) and computed with Shape ops otherwise.
#pragma once
#include <vector>

#include "ops/gradient.h"

namespace kiln::ops::grad {

Tensor emit1(GradBuilder& b, const OpDef& op, std::initializer_list<const Tensor*> in, const Attrs& attrs = {});

Tensor add(GradBuilder& b, const Tensor& x, const Tensor& y);
Tensor sub(GradBuilder& b, const Tensor& x, const Tensor& y);
Tensor mul(GradBuilder& b, const Tensor& x, const Tensor& y);
Tensor div(GradBuilder& b, const Tensor& x, const Tensor& y);
Tensor neg(GradBuilder& b, const Tensor& x);
Tensor exp(GradBuilder& b, const Tensor& x);
Tensor log(GradBuilder& b, const Tensor& x);
Tensor sign(GradBuilder& b, const Tensor& x);
Tensor greater(GradBuilder& b, const Tensor& x, const Tensor& y);
Tensor greater_equal(GradBuilder& b, const Tensor& x, const Tensor& y);
Tensor less_equal(GradBuilder& b, const Tensor& x, const Tensor& y);
Tensor equal(GradBuilder& b, const Tensor& x, const Tensor& y);
Tensor where(GradBuilder& b, const Tensor& c, const Tensor& x, const Tensor& y);
Tensor cast(GradBuilder& b, const Tensor& x, DType to);
Tensor zeros_like(GradBuilder& b, const Tensor& x);
Tensor matmul(GradBuilder& b, const Tensor& x, const Tensor& y, bool ta, bool tb, bool batch);
Tensor transpose(GradBuilder& b, const Tensor& x, const std::vector<int64_t>& perm);
// A scalar of x's dtype.
Tensor scalar(GradBuilder& b, const Tensor& like, double v);
// An int32 scalar constant.
Tensor int_scalar(GradBuilder& b, int64_t v);
// An int32 vector constant.
Tensor ints(GradBuilder& b, const std::vector<int64_t>& v);
Tensor sum(GradBuilder& b, const Tensor& x, const std::vector<int64_t>& axes, bool keep_dims);
Tensor reshape_like(GradBuilder& b, const Tensor& x, const Tensor& like);
Tensor broadcast_like(GradBuilder& b, const Tensor& x, const Tensor& like);
Tensor shape(GradBuilder& b, const Tensor& x);
// MatrixBandPart(x, lower, upper): the band of each matrix (-1 keeps a whole triangle).
Tensor band(GradBuilder& b, const Tensor& x, int64_t lower, int64_t upper);
// The last two axes swapped (a real matrix's adjoint); UnimplementedError naming `op` when
// x's rank is unknown while tracing.
Tensor matrix_transpose(GradBuilder& b, const Tensor& x, const char* op);

// The gradient `g` of a broadcast result, summed back to the shape of operand `x`.
Tensor sum_to(GradBuilder& b, const Tensor& g, const Tensor& x);
// The upstream gradient of a reduction over `axes` (normalized, sorted) with keep_dims
// false, given back the reduced dims as size 1 so it broadcasts against the input.
Tensor unreduce(GradBuilder& b, const Tensor& dy, const std::vector<int64_t>& axes, bool keep_dims);

// The int values of an input whose value is known (eager, or a Const in a trace), else
// UnimplementedError naming the op (a gradient that needs, say, static reduction axes).
std::vector<int64_t> known_input_ints(const GradContext& c, int input, const char* what);
// Static dims of a tensor (-1 unknown); false when the rank is unknown.
bool static_dims(const Tensor& t, Dims* out);

}  // namespace kiln::ops::grad
