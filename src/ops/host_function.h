// The host functions KilnHostFunction nodes call (tf.py_function's Python function, a C++
// callable of kiln::host_function), by token. Registered functions live as long as the process:
// a traced graph may be run (or copied) after its tracer is gone.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "kiln/tensor.h"

namespace kiln::ops {

using HostCallable = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

// A new token naming `f`.
std::string register_host_function(HostCallable f);
// The function of a token; NotFoundError when no function has it.
HostCallable host_function_of(const std::string& token);

}  // namespace kiln::ops
