// kiln: element types.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kiln {

enum class DType : uint8_t { Bool, Int32, Int64, Float32, Float64 };
inline constexpr int kNumDTypes = 5;

// "bool", "int32", "int64", "float32", "float64".
std::string_view dtype_name(DType);
// Bytes per element.
constexpr size_t dtype_size(DType d) {
  constexpr size_t sizes[kNumDTypes] = {1, 4, 8, 4, 8};
  return sizes[static_cast<int>(d)];
}
bool is_floating(DType);
bool is_integer(DType);

}  // namespace kiln
