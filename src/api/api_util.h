// Helpers shared by the public op functions.
#pragma once
#include <vector>

#include "ops/op_list.h"
#include "trace/dispatch.h"

namespace kiln::api {

using ops::Attrs;
namespace op = ops::op;

// A concrete tensor from host values.
template <class T> Tensor make_host(const std::vector<T>& values, const std::vector<int64_t>& dims);
// A host int vector as an int32 tensor (Const node when tracing), for axes/shapes/perms.
Tensor int_list(const std::vector<int64_t>& values, const char* name_hint = "Const");
Tensor int_scalar(int64_t v, const char* name_hint = "Const");

}  // namespace kiln::api
