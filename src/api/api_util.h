// Helpers shared by the public op functions.
#pragma once
#include <vector>

#include "ops/op_list.h"
#include "trace/dispatch.h"

namespace kiln::api {

using ops::Attrs;
namespace op = ops::op;

// A concrete tensor from host values.
template <class T>
Tensor make_host(const std::vector<T>& values, const std::vector<int64_t>& dims);
// A host int vector as an int32 tensor (Const node when tracing), for axes/shapes/perms.
Tensor int_list(const std::vector<int64_t>& values, const char* name_hint = "Const");
Tensor int_scalar(int64_t v, const char* name_hint = "Const");
// A concrete scalar holding v, without make_host's vectors: every scalar the API makes
// (a number operand, constant(v), int_scalar), one per number when tracing.
template <class T>
Tensor make_host_scalar(T v);
// A concrete scalar of dtype d holding v; InvalidArgumentError (ending in " [Op:<op>]" when
// op is given; the message is built only then) if v is not representable: a fraction for an
// integer dtype, out of range, or other than 0/1 for bool.
Tensor host_scalar(double v, DType d, const char* op);

}  // namespace kiln::api
