#include "kiln/dtype.h"

namespace kiln {

std::string_view dtype_name(DType d) {
  switch (d) {
    case DType::Bool:
      return "bool";
    case DType::Int32:
      return "int32";
    case DType::Int64:
      return "int64";
    case DType::Float32:
      return "float32";
    case DType::Float64:
      return "float64";
  }
  return "invalid";
}

bool is_floating(DType d) { return d == DType::Float32 || d == DType::Float64; }
bool is_integer(DType d) { return d == DType::Int32 || d == DType::Int64; }

}  // namespace kiln
