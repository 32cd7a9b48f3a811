// The safetensors format for variable values: an 8-byte little-endian header length, a
// JSON header {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}},
// then the raw little-endian data. Reading checks every field: the file is untrusted.
#pragma once
#include <map>
#include <string>

#include "kiln/tensor.h"

namespace kiln::io {

std::string write_safetensors(const std::map<std::string, Tensor>& tensors);
// Throws DataLossError naming what is wrong.
std::map<std::string, Tensor> read_safetensors(const std::string& bytes);

}  // namespace kiln::io
