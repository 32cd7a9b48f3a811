// Input values for `kiln run`: JSON (a number or nested arrays) or a NumPy .npy file.
#pragma once
#include <kiln/kiln.h>

#include <string>

namespace kiln::tools {

// A tensor of `dtype` from JSON text; the shape is the nesting of the arrays.
Tensor tensor_from_json(const std::string& text, DType dtype);
// A tensor from a .npy file (little-endian bool/int32/int64/float32/float64, C order).
Tensor tensor_from_npy(const std::string& path);

}  // namespace kiln::tools
