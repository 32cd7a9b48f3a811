// kiln::host_function: a host callable in a traced function, run every time the function runs
// (tf.py_function for C++; kiln.py_function is built on it).
#pragma once
#include <functional>
#include <vector>

#include "kiln/tensor.h"

namespace kiln {

// Calls f(inputs). Eagerly, now. While tracing, the graph gets a node that calls f with the
// node's inputs whenever the function runs; its outputs have `output_dtypes` (f must return
// tensors of those) and shapes unknown to the graph. Such a graph cannot be saved (f is not
// part of it). f may run on any of kiln's threads.
std::vector<Tensor> host_function(std::function<std::vector<Tensor>(const std::vector<Tensor>&)> f,
                                  const std::vector<Tensor>& inputs, const std::vector<DType>& output_dtypes);

}  // namespace kiln
