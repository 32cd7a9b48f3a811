// kiln: element types.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kiln {

// Every dtype kiln has, once: X(enumerator, bytes per element). The enum's values follow this
// order (new dtypes are appended); everything else kiln knows about a dtype (its names,
// TensorFlow's DataType number, its C++ type) is one row of src/core/dtype_table.h.
// Variant is TensorFlow's DT_VARIANT: each element is an opaque, refcounted object (a
// TensorList) that only the ops made for it read; it has no numeric value. String is
// DT_STRING: each element is a refcounted, immutable byte string (Tensor::string_at).
#define KILN_DTYPE_LIST(X) \
  X(Bool, 1)               \
  X(Int32, 4)              \
  X(Int64, 8)              \
  X(Float32, 4)            \
  X(Float64, 8)            \
  X(UInt8, 1)              \
  X(Int8, 1)               \
  X(Int16, 2)              \
  X(UInt16, 2)             \
  X(UInt32, 4)             \
  X(UInt64, 8)             \
  X(Variant, 8)            \
  X(Float16, 2)            \
  X(BFloat16, 2)           \
  X(String, 8)             \
  X(Complex64, 8)          \
  X(Complex128, 16)

#define KILN_DTYPE_ENUMERATOR(name, size) name,
enum class DType : uint8_t { KILN_DTYPE_LIST(KILN_DTYPE_ENUMERATOR) };
#undef KILN_DTYPE_ENUMERATOR
#define KILN_DTYPE_COUNT(name, size) +1
inline constexpr int kNumDTypes = 0 KILN_DTYPE_LIST(KILN_DTYPE_COUNT);
#undef KILN_DTYPE_COUNT

// "bool", "int32", "int64", "float32", "float64", "uint8", "int8", "int16", "uint16",
// "uint32", "uint64", "variant", "float16", "bfloat16", "string", "complex64", "complex128".
std::string_view dtype_name(DType);
// Bytes per element.
constexpr size_t dtype_size(DType d) {
#define KILN_DTYPE_SIZE(name, size) size,
  constexpr size_t sizes[kNumDTypes] = {KILN_DTYPE_LIST(KILN_DTYPE_SIZE)};
#undef KILN_DTYPE_SIZE
  return sizes[static_cast<int>(d)];
}
bool is_floating(DType);
bool is_integer(DType);
bool is_complex(DType);

}  // namespace kiln
