// Everything kiln knows about each dtype, one row per dtype: the names it goes by (kiln's,
// TensorFlow's messages', TensorFlow.js's), TensorFlow's DataType number, its size and kind,
// and its C++ element type (TypeOf). Other code reads this table instead of keeping its own.
#pragma once
#include <array>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "kiln/dtype.h"

namespace kiln::detail {

struct DTypeInfo {
  DType dtype = DType::Float32;
  std::string_view name;            // kiln's and numpy's: "float32"
  const char* tf_name = nullptr;    // in TensorFlow's error messages: "float"
  int tf_proto = 0;                 // TensorFlow's DataType enum (types.proto): DT_FLOAT = 1
  const char* tfjs_name = nullptr;  // TensorFlow.js's dtype, or null when it has none
  size_t size = 0;                  // bytes per element
  bool floating = false, integer = false;
};

inline constexpr std::array<DTypeInfo, kNumDTypes> kDTypes = {{
    {.dtype = DType::Bool, .name = "bool", .tf_name = "bool", .tf_proto = 10, .tfjs_name = "bool", .size = 1},
    {.dtype = DType::Int32,
     .name = "int32",
     .tf_name = "int32",
     .tf_proto = 3,
     .tfjs_name = "int32",
     .size = 4,
     .integer = true},
    {.dtype = DType::Int64, .name = "int64", .tf_name = "int64", .tf_proto = 9, .size = 8, .integer = true},
    {.dtype = DType::Float32,
     .name = "float32",
     .tf_name = "float",
     .tf_proto = 1,
     .tfjs_name = "float32",
     .size = 4,
     .floating = true},
    {.dtype = DType::Float64, .name = "float64", .tf_name = "double", .tf_proto = 2, .size = 8, .floating = true},
}};

constexpr const DTypeInfo& dtype_info(DType d) { return kDTypes[static_cast<int>(d)]; }

// The kiln dtype of a TensorFlow DataType number; false for one kiln lacks.
constexpr bool dtype_from_proto(int tf_proto, DType* out) {
  for (const DTypeInfo& i : kDTypes)
    if (i.tf_proto == tf_proto) {
      *out = i.dtype;
      return true;
    }
  return false;
}

// The DType of a C++ element type (only the five kiln has).
template <class T>
struct TypeOf {
  static_assert(std::is_same_v<T, bool> || std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t> ||
                    std::is_same_v<T, float> || std::is_same_v<T, double>,
                "kiln has no dtype for this C++ type");
  static constexpr DType value = std::is_same_v<T, bool>      ? DType::Bool
                                 : std::is_same_v<T, int32_t> ? DType::Int32
                                 : std::is_same_v<T, int64_t> ? DType::Int64
                                 : std::is_same_v<T, float>   ? DType::Float32
                                                              : DType::Float64;
};

static_assert([] {
  for (int d = 0; d < kNumDTypes; ++d)
    if (static_cast<int>(kDTypes[d].dtype) != d || kDTypes[d].size != dtype_size(kDTypes[d].dtype)) return false;
  return true;
}());

}  // namespace kiln::detail
