// Moving rows between tensors for the stages that slice and stack (from_tensor_slices,
// batch, unbatch, padded_batch). Copies bytes for numeric dtypes and references for string
// and variant ones, so it serves every dtype without a kernel per dtype.
#pragma once
#include <cstdint>
#include <vector>

#include "kiln/tensor.h"

namespace kiln::data::detail {

// Row i of t (t's first dimension), as a tensor of t's shape without that dimension: a view
// of t's memory where t holds plain values in a buffer and the row outgrows a tensor's inline
// bytes (no copy), else a copy.
Tensor row_of(const Tensor& t, int64_t i);
// Rows [begin, end) of t as one tensor, a view or a copy as row_of decides.
Tensor rows_of(const Tensor& t, int64_t begin, int64_t end);
// The rows stacked along a new first dimension; all must have the same dtype and shape
// (InvalidArgumentError naming `component` otherwise).
Tensor stack_rows(const std::vector<Tensor>& rows, int component);
// As stack_rows, each row placed at the origin of a `shape`-sized slot filled with
// `padding` (a scalar of the rows' dtype); rows must fit.
Tensor stack_padded(const std::vector<Tensor>& rows, const std::vector<int64_t>& shape, const Tensor& padding);

}  // namespace kiln::data::detail
