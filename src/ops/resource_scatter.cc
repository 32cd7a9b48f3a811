// ResourceScatterAdd/Sub/Mul/Div/Min/Max/Update(resource, indices, updates): rows of a
// variable combined in place with `updates` (what tf.Variable.scatter_add(IndexedSlices) and
// its siblings, and tf.compat.v1.scatter_* on a resource variable, emit). `updates` has shape
// indices.shape + variable.shape[1:], or is a scalar applied to every indexed row. Repeated
// indices combine in order. The variable is attr "_resource", as for the other variable ops.
// Every index is checked before any row changes, so a bad index leaves the variable as it was
// (TensorFlow's kernel has updated the rows before it by then).
#include <complex>
#include <string>
#include <type_traits>

#include "kernels/complex_math.h"
#include "ops/gradient.h"
#include "ops/helpers.h"
#include "ops/op_list.h"
#include "ops/variable_state.h"

namespace kiln::ops {
namespace {

enum class Combine { kAdd, kSub, kMul, kDiv, kMin, kMax, kUpdate };

const int kDtype = attr_index(op::ResourceScatterAdd(), "dtype");
const int kResource = attr_index(op::ResourceScatterAdd(), "_resource");

VariableState& variable(const Attrs& a) { return *static_cast<VariableState*>(a.resource(kResource)); }

// Integers combine with wrap-around (TensorFlow's kernels); 16-bit floats in float32, then
// rounded once.
template <class T, class = void>
struct WideOf {
  using type = T;
};
template <class T>
struct WideOf<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>> {
  using type = std::make_unsigned_t<T>;
};
template <>
struct WideOf<float16> {
  using type = float;
};
template <>
struct WideOf<bfloat16> {
  using type = float;
};
template <class T>
using Wide = typename WideOf<T>::type;

// Which dtypes each combination has kernels for, as TensorFlow registers them: arithmetic
// for numbers (complex too), min/max for real numbers, update for every dtype with values
// (strings are objects: not yet).
template <Combine K, class T>
constexpr bool supports() {
  if constexpr (std::is_same_v<T, bool>) return K == Combine::kUpdate;
  if constexpr (detail::is_complex_v<T>) return K != Combine::kMin && K != Combine::kMax;
  return std::is_arithmetic_v<T> || is_reduced_float_v<T>;
}

template <Combine K, class T>
T combine(const KernelContext& c, T a, T b) {
  if constexpr (K == Combine::kUpdate) {
    return b;
  } else if constexpr (K == Combine::kMin) {
    return b < a ? b : a;  // Eigen's mini: a NaN in the variable stays, a NaN update is ignored
  } else if constexpr (K == Combine::kMax) {
    return a < b ? b : a;
  } else if constexpr (std::is_integral_v<T> && K == Combine::kDiv) {
    if (b == 0) c.fail("Integer division by zero");
    if constexpr (std::is_signed_v<T>)
      if (b == T(-1)) return static_cast<T>(Wide<T>(0) - static_cast<Wide<T>>(a));  // no trap on INT_MIN / -1
    return static_cast<T>(a / b);
  } else if constexpr (detail::is_complex_v<T> && (K == Combine::kMul || K == Combine::kDiv)) {
    return K == Combine::kMul ? kernels::complex_mul(a, b) : kernels::complex_div(a, b);  // TensorFlow's rounding
  } else {
    using W = Wide<T>;
    const W x = static_cast<W>(a), y = static_cast<W>(b);
    if constexpr (K == Combine::kAdd) return static_cast<T>(x + y);
    if constexpr (K == Combine::kSub) return static_cast<T>(x - y);
    if constexpr (K == Combine::kMul) return static_cast<T>(x * y);
    if constexpr (K == Combine::kDiv) return static_cast<T>(x / y);
  }
}

const char* combine_name(Combine k) {
  static const char* const kNames[] = {"add", "sub", "mul", "div", "min", "max", "update"};
  return kNames[static_cast<int>(k)];
}

template <Combine K>
bool dtype_supported(DType d) {
  bool ok = false;
  visit_dtype(d, [&](auto zero) { ok = supports<K, decltype(zero)>(); });
  return ok;
}

std::string shapes_text(const Dims& updates, const Dims& indices, const Dims& params) {
  return "got updates.shape " + dims_text(updates) + ", indices.shape " + dims_text(indices) + ", params.shape " +
         dims_text(params);
}

template <Combine K>
void infer_scatter(InferContext& c) {
  require_int_dtype(c, 0, "indices");
  const VariableState& v = variable(c.attrs);
  if (c.attrs.type(kDtype) != v.dtype() || c.in(1).dtype != v.dtype())
    c.fail(std::string("Trying to scatter a ") + tf_type_name(c.in(1).dtype) + " tensor into a variable of dtype " +
           tf_type_name(v.dtype()));
  if (!dtype_supported<K>(v.dtype()))
    c.fail(std::string("scatter_") + combine_name(K) + " does not support variables of dtype " +
           tf_type_name(v.dtype()));
  const TensorShape& s = v.shape();
  if (!s.unknown_rank() && s.dims().empty()) c.fail("params must be at least 1-D, got " + dims_text(s.dims()));
  if (!s.unknown_rank() && !c.in(0).unknown_rank && !c.in(1).unknown_rank && !c.in(1).dims->empty()) {
    Dims want = *c.in(0).dims;
    for (size_t i = 1; i < s.dims().size(); ++i) want.push_back(s.dims()[i]);
    const Dims& got = *c.in(1).dims;
    bool ok = got.size() == want.size();
    for (size_t i = 0; ok && i < got.size(); ++i) ok = got[i] < 0 || want[i] < 0 || got[i] == want[i];
    if (!ok)
      c.fail("Must have updates.shape = indices.shape + params.shape[1:] or updates.shape = [], " +
             shapes_text(got, *c.in(0).dims, s.dims()));
  }
}

template <Combine K>
struct ScatterKernel {
  static void run(KernelContext& c) {
    const TensorImpl& indices = c.in(0);
    const TensorImpl& updates = c.in(1);
    const std::vector<int64_t> idx = int_values(indices);
    VariableState::update_in_place(
        [&](TensorImpl& v) {
          if (v.dims.empty()) c.fail("params must be at least 1-D, got " + dims_text(v.dims));
          if (updates.dtype != v.dtype) c.fail("updates and the variable have different dtypes");
          const int64_t limit = v.dims[0], row = limit ? v.num_elements / limit : 0;
          const bool scalar = updates.dims.empty();
          if (!scalar) {
            Dims want = indices.dims;
            for (size_t i = 1; i < v.dims.size(); ++i) want.push_back(v.dims[i]);
            if (updates.dims != want)
              c.fail("Must have updates.shape = indices.shape + params.shape[1:] or updates.shape = [], " +
                     shapes_text(updates.dims, indices.dims, v.dims));
          }
          for (size_t i = 0; i < idx.size(); ++i)
            if (idx[i] < 0 || idx[i] >= limit)
              c.fail("indices[" + std::to_string(i) + "] = " + std::to_string(idx[i]) + " is not in [0, " +
                     std::to_string(limit) + ")");
          visit_dtype(v.dtype, [&](auto zero) {
            using T = decltype(zero);
            if constexpr (supports<K, T>()) {
              T* p = v.as<T>();
              const T* u = updates.as<T>();
              for (size_t i = 0; i < idx.size(); ++i) {
                T* dst = p + idx[i] * row;
                for (int64_t j = 0; j < row; ++j)
                  dst[j] = combine<K, T>(c, dst[j], scalar ? u[0] : u[static_cast<int64_t>(i) * row + j]);
              }
            } else {
              c.fail(std::string("scatter_") + combine_name(K) + " does not support variables of dtype " +
                     tf_type_name(v.dtype));
            }
          });
        },
        variable(c.attrs));
  }
};

template <Combine K>
OpDef scatter_def(const char* name) {
  return {.name = name,
          .num_inputs = 2,
          .num_outputs = 0,
          .input_args = {"indices", "updates"},
          .traits = kStateful,
          .attr_specs = {variable_dtype_attr("dtype"), resource_attr("_resource")},
          .infer = infer_scatter<K>,
          .any_dtype_kernel = &ScatterKernel<K>::run,
          .type_attr = nullptr,
          .index_type_attrs = {{"Tindices", 0}},
          .grad = &no_gradient};
}

}  // namespace

#define KILN_SCATTER_ROW(Name, K)                            \
  const OpDef& op::Name() {                                  \
    static const OpDef def = scatter_def<Combine::K>(#Name); \
    return def;                                              \
  }
KILN_SCATTER_ROW(ResourceScatterAdd, kAdd)
KILN_SCATTER_ROW(ResourceScatterSub, kSub)
KILN_SCATTER_ROW(ResourceScatterMul, kMul)
KILN_SCATTER_ROW(ResourceScatterDiv, kDiv)
KILN_SCATTER_ROW(ResourceScatterMin, kMin)
KILN_SCATTER_ROW(ResourceScatterMax, kMax)
KILN_SCATTER_ROW(ResourceScatterUpdate, kUpdate)
#undef KILN_SCATTER_ROW

}  // namespace kiln::ops
