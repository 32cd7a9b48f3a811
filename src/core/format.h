// Text of concrete tensor values: numpy-style for Tensor::str(), TensorFlow's tf.print
// style for kiln::print.
#pragma once
#include <string>
#include <string_view>

#include "core/tensor_impl.h"

namespace kiln::detail {

// "[[1. 2.]\n [3. 4.]]": numpy's layout (aligned columns, summarized beyond 1000 elements).
std::string format_values(const TensorImpl& t);
// tf.print's layout: "[[1 2]\n [3 4]]", no padding, `summarize` elements per edge.
std::string format_values_tf_print(const TensorImpl& t, int summarize = 3);
// Python's repr of bytes, as numpy and TensorFlow's messages show a string element: b'ab\xff'.
std::string bytes_repr(std::string_view s);
// One element as text ("12.", "0.5", "True", "-3").
std::string format_scalar(const TensorImpl& t, int64_t index);

}  // namespace kiln::detail
