// Everything kiln knows about each dtype, one row per dtype: the names it goes by (kiln's,
// TensorFlow's messages', TensorFlow.js's), TensorFlow's DataType number, its size and kind,
// and its C++ element type (TypeOf). Other code reads this table instead of keeping its own;
// adding a dtype is a line in include/kiln/dtype.h's KILN_DTYPE_LIST and a row here.
#pragma once
#include <array>
#include <complex>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "kiln/dtype.h"
#include "kiln/half.h"

namespace kiln {
// TensorFlow's complex64 and complex128 (pairs of float32 / float64, real part first).
using complex64 = std::complex<float>;
using complex128 = std::complex<double>;
}  // namespace kiln

namespace kiln::detail {

// X(enumerator, C++ element type), in KILN_DTYPE_LIST's order: every dtype whose elements are
// values (all but Variant, whose elements are object pointers: core/object_value.h).
#define KILN_DTYPE_TYPES(X) \
  X(Bool, bool)             \
  X(Int32, int32_t)         \
  X(Int64, int64_t)         \
  X(Float32, float)         \
  X(Float64, double)        \
  X(UInt8, uint8_t)         \
  X(Int8, int8_t)           \
  X(Int16, int16_t)         \
  X(UInt16, uint16_t)       \
  X(UInt32, uint32_t)       \
  X(UInt64, uint64_t)       \
  X(Float16, float16)       \
  X(BFloat16, bfloat16)     \
  X(Complex64, complex64)   \
  X(Complex128, complex128)

struct DTypeInfo {
  DType dtype = DType::Float32;
  std::string_view name;            // kiln's and numpy's: "float32"
  const char* tf_name = nullptr;    // in TensorFlow's error messages: "float"
  int tf_proto = 0;                 // TensorFlow's DataType enum (types.proto): DT_FLOAT = 1
  const char* tfjs_name = nullptr;  // TensorFlow.js's dtype, or null when it has none
  size_t size = 0;                  // bytes per element
  bool floating = false, integer = false, complex = false;
  bool is_unsigned = false;
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
    {.dtype = DType::UInt8,
     .name = "uint8",
     .tf_name = "uint8",
     .tf_proto = 4,
     .size = 1,
     .integer = true,
     .is_unsigned = true},
    {.dtype = DType::Int8, .name = "int8", .tf_name = "int8", .tf_proto = 6, .size = 1, .integer = true},
    {.dtype = DType::Int16, .name = "int16", .tf_name = "int16", .tf_proto = 5, .size = 2, .integer = true},
    {.dtype = DType::UInt16,
     .name = "uint16",
     .tf_name = "uint16",
     .tf_proto = 17,
     .size = 2,
     .integer = true,
     .is_unsigned = true},
    {.dtype = DType::UInt32,
     .name = "uint32",
     .tf_name = "uint32",
     .tf_proto = 22,
     .size = 4,
     .integer = true,
     .is_unsigned = true},
    {.dtype = DType::UInt64,
     .name = "uint64",
     .tf_name = "uint64",
     .tf_proto = 23,
     .size = 8,
     .integer = true,
     .is_unsigned = true},
    {.dtype = DType::Variant, .name = "variant", .tf_name = "variant", .tf_proto = 21, .size = 8},
    {.dtype = DType::Float16,
     .name = "float16",
     .tf_name = "half",
     .tf_proto = 19,
     .tfjs_name = nullptr,
     .size = 2,
     .floating = true},
    {.dtype = DType::BFloat16, .name = "bfloat16", .tf_name = "bfloat16", .tf_proto = 14, .size = 2, .floating = true},
    {.dtype = DType::String, .name = "string", .tf_name = "string", .tf_proto = 7, .size = 8},
    {.dtype = DType::Complex64, .name = "complex64", .tf_name = "complex64", .tf_proto = 8, .size = 8, .complex = true},
    {.dtype = DType::Complex128,
     .name = "complex128",
     .tf_name = "complex128",
     .tf_proto = 18,
     .size = 16,
     .complex = true},
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

// The DType of a C++ element type (only those kiln has).
template <class T>
struct TypeOf {
  static_assert(sizeof(T) == 0, "kiln has no dtype for this C++ type");
};
#define KILN_DTYPE_TYPEOF(name, type)           \
  template <>                                   \
  struct TypeOf<type> {                         \
    static constexpr DType value = DType::name; \
  };
KILN_DTYPE_TYPES(KILN_DTYPE_TYPEOF)
#undef KILN_DTYPE_TYPEOF

// InvalidArgumentError: a String or Variant tensor's elements are objects, not numbers.
[[noreturn]] void fail_has_no_values(DType d);

// Calls f(T{}) with T the C++ type of d; throws InvalidArgumentError for String and Variant,
// whose elements are objects.
template <class F>
decltype(auto) visit_any_dtype(DType d, F&& f) {
  switch (d) {
#define KILN_DTYPE_CASE(name, type) \
  case DType::name:                 \
    return f(type{});
    KILN_DTYPE_TYPES(KILN_DTYPE_CASE)
#undef KILN_DTYPE_CASE
    case DType::Variant:
    case DType::String:
      break;
  }
  fail_has_no_values(d);
}

template <class T>
inline constexpr bool is_complex_v = false;
template <class T>
inline constexpr bool is_complex_v<std::complex<T>> = true;
// An element as double, for the code that reads numbers generically (scalars, axes, ranges):
// a complex value by its real part (code that means the whole value refuses complex first).
template <class T>
double as_double(T v) {
  if constexpr (is_complex_v<T>)
    return static_cast<double>(v.real());
  else
    return static_cast<double>(v);
}

// True for the dtypes whose elements are numeric values (all but String and Variant).
constexpr bool has_values(DType d) { return d != DType::Variant && d != DType::String; }

static_assert([] {
  for (int d = 0; d < kNumDTypes; ++d)
    if (static_cast<int>(kDTypes[d].dtype) != d || kDTypes[d].size != dtype_size(kDTypes[d].dtype)) return false;
  return true;
}());
#define KILN_DTYPE_SAME_ORDER(name, type) \
  static_assert(sizeof(type) == dtype_size(DType::name), "KILN_DTYPE_TYPES and KILN_DTYPE_LIST disagree");
KILN_DTYPE_TYPES(KILN_DTYPE_SAME_ORDER)
#undef KILN_DTYPE_SAME_ORDER

}  // namespace kiln::detail
