// Moving rows between tensors for the stages that slice and stack (from_tensor_slices,
// batch, unbatch, padded_batch). Copies bytes for numeric dtypes and references for string
// and variant ones, so it serves every dtype without a kernel per dtype.
#pragma once
#include <cstdint>
#include <vector>

#include "kiln/tensor.h"

namespace kiln::data::detail {

// Row i of t (t's first dimension), as a new tensor of t's shape without that dimension.
Tensor row_of(const Tensor& t, int64_t i);
// The rows stacked along a new first dimension; all must have the same dtype and shape
// (InvalidArgumentError naming `component` otherwise).
Tensor stack_rows(const std::vector<Tensor>& rows, int component);
// As stack_rows, each row placed at the origin of a `shape`-sized slot filled with
// `padding` (a scalar of the rows' dtype); rows must fit.
Tensor stack_padded(const std::vector<Tensor>& rows, const std::vector<int64_t>& shape, const Tensor& padding);

}  // namespace kiln::data::detail
