// Running sums and products along an axis: Cumsum and Cumprod (attrs exclusive, reverse).
#include <functional>
#include <string>
#include <type_traits>

#include "ops/grad_util.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

const int kExclusive = attr_index({{&op::Cumsum(), "exclusive"}, {&op::Cumprod(), "exclusive"}});
const int kReverse = attr_index({{&op::Cumsum(), "reverse"}, {&op::Cumprod(), "reverse"}});

// The axis, normalized, or a failure in TensorFlow's words.
int64_t scan_axis(const std::function<void(const std::string&)>& fail, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    fail("ScanOp: Expected scan axis in the range [" + std::to_string(-rank) + ", " + std::to_string(rank) +
         "), but got " + std::to_string(axis));
  return axis < 0 ? axis + rank : axis;
}

void infer_scan(InferContext& c) {
  if (c.in(0).dtype == DType::Bool) c.fail(std::string(c.op.name) + " does not support bool tensors");
  require_int_dtype(c, 1, "axis");
  if (!c.in(1).unknown_rank && !c.in(1).dims->empty())
    c.fail("ScanOp: axis must be a scalar, not a tensor of shape " + dims_text(*c.in(1).dims));
  c.out(0).dtype = c.in(0).dtype;
  c.out(0).shape = shape_of(c.in(0));
  c.kernel_dtype = c.in(0).dtype;
  std::vector<int64_t> axis;
  if (!c.in(0).unknown_rank && known_ints(c.in(1), &axis) && axis.size() == 1)
    scan_axis([&](const std::string& m) { c.fail(m); }, axis[0], static_cast<int64_t>(c.in(0).dims->size()));
}

// Integer sums and products wrap, as TensorFlow's do, computed in an unsigned type at least
// int's width (16-bit operands would be promoted to int, whose product can overflow).
template <class T>
using Wrap = std::common_type_t<std::make_unsigned_t<T>, unsigned>;

template <bool Sum>
struct ScanKernel {
  template <class T>
  struct K {
    static void run(KernelContext& c) {
      const TensorImpl& x = c.in(0);
      const std::vector<int64_t> axis_v = int_values(c.in(1));
      if (axis_v.size() != 1) c.fail("ScanOp: axis must be a scalar");
      const auto rank = static_cast<int64_t>(x.dims.size());
      const int64_t axis = scan_axis([&](const std::string& m) { c.fail(m); }, axis_v[0], rank);
      const bool exclusive = c.attrs.b(kExclusive), reverse = c.attrs.b(kReverse);
      int64_t outer = 1, inner = 1;
      for (int64_t i = 0; i < axis; ++i) outer *= x.dims[i];
      for (int64_t i = axis + 1; i < rank; ++i) inner *= x.dims[i];
      const int64_t n = rank == 0 ? 1 : x.dims[axis];
      const T* src = x.as<T>();
      T* dst = c.out(0).as<T>();
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t j = 0; j < inner; ++j) {
          T acc = Sum ? T(0) : T(1);
          for (int64_t s = 0; s < n; ++s) {
            const int64_t k = reverse ? n - 1 - s : s;
            const int64_t at = (o * n + k) * inner + j;
            const T v = src[at];
            if (exclusive) dst[at] = acc;
            if constexpr (Sum) {
              if constexpr (std::is_integral_v<T>)  // wraps, as TensorFlow's int sums do
                acc = static_cast<T>(static_cast<Wrap<T>>(acc) + static_cast<Wrap<T>>(v));
              else
                acc += v;
            } else {
              if constexpr (std::is_integral_v<T>)
                acc = static_cast<T>(static_cast<Wrap<T>>(acc) * static_cast<Wrap<T>>(v));
              else
                acc *= v;
            }
            if (!exclusive) dst[at] = acc;
          }
        }
    }
  };
};

// ---- gradients (TensorFlow's math_grad) ----
using namespace grad;  // NOLINT: the shorthands read as math
Tensor scan(GradBuilder& b, const OpDef& op, const Tensor& x, const Tensor& axis, bool exclusive, bool reverse) {
  return emit1(b, op, {&x, &axis}, Attrs{exclusive, reverse});
}
// The sum of later (earlier, when reversed) gradients: the same scan, run the other way.
void cumsum_grad(GradContext& c) {
  c.dx[0] = scan(c.b, op::Cumsum(), c.dy[0], c.x[1], c.attrs.b(kExclusive), !c.attrs.b(kReverse));
}
// Valid where x has no zeros (TensorFlow's formula): cumsum(prod * dy, reversed) / x.
void cumprod_grad(GradContext& c) {
  const bool exclusive = c.attrs.b(kExclusive), reverse = c.attrs.b(kReverse);
  const Tensor prod = scan(c.b, op::Cumprod(), c.x[0], c.x[1], exclusive, reverse);
  const Tensor summed = scan(c.b, op::Cumsum(), mul(c.b, prod, c.dy[0]), c.x[1], exclusive, !reverse);
  c.dx[0] = div(c.b, summed, c.x[0]);
}

#define KILN_SCAN_OP(Name, Sum, Grad)                                                                        \
  const OpDef& op::Name() {                                                                                  \
    static const OpDef def = {.name = #Name,                                                                 \
                              .num_inputs = 2,                                                               \
                              .num_outputs = 1,                                                              \
                              .input_args = {"x", "axis"},                                                   \
                              .traits = kTfjs,                                                               \
                              .attr_specs = {bool_attr("exclusive", false), bool_attr("reverse", false)},    \
                              .infer = infer_scan,                                                           \
                              .kernels = kernels_for<ScanKernel<Sum>::K, KILN_NUMERIC, KILN_STORAGE_INTS>(), \
                              .index_type_attrs = {{"Tidx", 1}},                                             \
                              .grad = Grad,                                                                  \
                              .output_args = {"out"}};                                                       \
    return def;                                                                                              \
  }
}  // namespace

KILN_SCAN_OP(Cumsum, true, &cumsum_grad)
KILN_SCAN_OP(Cumprod, false, &cumprod_grad)

}  // namespace kiln::ops
