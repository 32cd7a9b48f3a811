// Shared pieces of shape functions and kernels: broadcasting, axis rules, reading small
// int tensors (axes, shapes) and per-dtype kernel tables.
#pragma once
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/dtype_table.h"
#include "core/tensor_impl.h"
#include "ops/op_def.h"
#include "ops/widen.h"

namespace kiln::ops {

using detail::TypeOf;  // the C++ element type -> DType trait (core/dtype_table.h)

// A kernel table with `K<T>::run` for each listed type.
// A table with a float32 kernel also computes float16 and bfloat16 through it (widen.h),
// unless it lists them.
template <template <class> class K, class... Ts>
std::array<KernelFn, kNumDTypes> kernels_for() {
  std::array<KernelFn, kNumDTypes> k{};
  ((k[static_cast<int>(TypeOf<Ts>::value)] = &K<Ts>::run), ...);
  for (DType d : {DType::Float16, DType::BFloat16})
    if (k[static_cast<int>(DType::Float32)] && !k[static_cast<int>(d)]) k[static_cast<int>(d)] = &run_widened;
  return k;
}
// A kernel table with one kernel, for string inputs.
std::array<KernelFn, kNumDTypes> string_kernel(KernelFn k);
// Element i of a string tensor.
std::string_view str_at(const TensorImpl& t, int64_t i);
// Requires input #i to be a string tensor: TensorFlow's "cannot compute X as input #0
// (zero-based) was expected to be a string tensor but is a int32 tensor".
void require_string_input(const InferContext& c, int i);

// The real dtype of a complex one's parts: complex64 -> float32, complex128 -> float64.
inline DType real_of(DType complex) { return complex == DType::Complex64 ? DType::Float32 : DType::Float64; }

#define KILN_FLOATS float, double
#define KILN_NUMERIC int32_t, int64_t, float, double
#define KILN_ALL_TYPES bool, int32_t, int64_t, float, double
// The integer dtypes kiln stores, casts and moves but does not yet compute with.
#define KILN_STORAGE_INTS uint8_t, int8_t, int16_t, uint16_t, uint32_t, uint64_t
// The 16-bit floats: stored and moved as they are; computed with through float32 (widen.h).
#define KILN_HALF_TYPES float16, bfloat16
// complex64 and complex128 (std::complex): moved everywhere, computed by the ops that list them.
#define KILN_COMPLEX_TYPES complex64, complex128
#define KILN_EVERY_TYPE KILN_ALL_TYPES, KILN_STORAGE_INTS, KILN_HALF_TYPES, KILN_COMPLEX_TYPES
#define KILN_NUMERIC_COMPLEX KILN_NUMERIC, KILN_COMPLEX_TYPES
#define KILN_FLOATS_COMPLEX KILN_FLOATS, KILN_COMPLEX_TYPES

// Call f(T{}) with T the C++ type of d (every dtype: core/dtype_table.h).
template <class F>
decltype(auto) visit_dtype(DType d, F&& f) {
  return detail::visit_any_dtype(d, std::forward<F>(f));
}

// Broadcast two partial shapes (numpy rules); fails with "Incompatible shapes: [2,3] vs. [4]".
TensorShape broadcast_shapes(const InferContext& c, const InputInfo& a, const InputInfo& b);
TensorShape shape_of(const InputInfo& in);

// The shape functions of elementwise ops: the output has the (broadcast) shape of the
// inputs and input 0's dtype (bool for comparisons); binary ops require one dtype.
void infer_unary(InferContext& c);
void infer_binary(InferContext& c);
void infer_compare(InferContext& c);
// True when `op`'s shape function is one of those and its concrete inputs agree (one dtype,
// one shape): then what it would compute is known without running it — the output has
// that shape, and *out_dtype (the kernel's dtype is the inputs'). Eager calls skip it.
bool agreeing_elementwise(const OpDef& op, const TensorImpl* const* in, int n, DType* out_dtype);

// Requires every input to have input 0's dtype: TensorFlow's "cannot compute X as input #1
// (zero-based) was expected to be a float tensor but is a int32 tensor".
void require_same_dtypes(const InferContext& c, int first, int last);
const char* tf_type_name(DType d);  // "float", "double", "int32", ...
// A type attr limited to `allowed`, as TensorFlow's OpDef checks it: "Value for attr 'T' of
// string is not in the list of allowed values: int32, int64".
void require_type_in(const InferContext& c, const char* attr, DType t, std::initializer_list<DType> allowed);
// The same for a string attr: "Value for attr 'unit' of \"BAD\" is not in the list of allowed
// values: \"BYTE\", \"UTF8_CHAR\"".
void require_string_in(const InferContext& c, const char* attr, const std::string& value,
                       std::initializer_list<const char*> allowed);

// Normalizes axis into [0, rank); fails with TF's out-of-range message.
int64_t normalize_axis(const InferContext& c, int64_t axis, int64_t rank, const char* what = "axis");

// The values of a small int32/int64 tensor (shape, axes, multiples).
std::vector<int64_t> int_values(const TensorImpl& t);
// The value of an input if known (eager, or folded to a constant); empty if unknown. An
// unknown value is noted (UnseenValueProbe): the output shape was inferred without it.
bool known_ints(const InputInfo& in, std::vector<int64_t>* out);

// Whether a shape function asked for an input's value it could not see (known_ints). A
// shape inferred so, even a fully defined one (a scalar from a shape tensor of length 0), is
// no proof the value is valid: plans re-run such a node's shape function when it runs.
class UnseenValueProbe {
 public:
  UnseenValueProbe();
  ~UnseenValueProbe();
  UnseenValueProbe(const UnseenValueProbe&) = delete;
  UnseenValueProbe& operator=(const UnseenValueProbe&) = delete;
  bool saw_unseen_value() const;

 private:
  bool previous_;
};
void require_int_dtype(const InferContext& c, int input, const char* what);

// Row-major strides.
Dims strides_of(const Dims& dims);

// For kOwnOutputs kernels: a new reference to `t`'s implementation, which the output slot
// it is stored in owns (the caller's handle keeps its own).
inline TensorImpl* hand_out(const Tensor& t) {
  TensorImpl* impl = detail::impl_of(t);
  impl->refs.fetch_add(1, std::memory_order_relaxed);
  return impl;
}

}  // namespace kiln::ops
