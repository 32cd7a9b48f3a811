// Public elementwise, matmul and reduction functions: build attrs, call dispatch().
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "api/api_util.h"
#include "kiln/ops.h"
#include "ops/helpers.h"

namespace kiln {
namespace detail {
namespace {
// The Const for a number operand is named after the op it feeds ("Greater/y"), as TF does.
std::string operand_name(const char* op) { return std::string(op) + "/y"; }

Tensor number_tensor(const Tensor& like, const char* op, auto make) {
  if (!like.defined()) throw InvalidArgumentError(std::string("Empty tensor operand [Op:") + op + "]");
  const std::string name = operand_name(op);
  return trace::as_graph_constant(make(like.dtype()), name.c_str());
}
}  // namespace

Tensor number_as(const Tensor& like, double v, const char* op) {
  return number_tensor(like, op, [&](DType d) -> Tensor {
    if (d == DType::Bool)
      throw InvalidArgumentError("Cannot convert " + std::to_string(v) + " to a bool tensor [Op:" + op + "]");
    return api::host_scalar(v, d, op);
  });
}

Tensor number_as(const Tensor& like, int64_t v, const char* op) {
  return number_tensor(like, op, [&](DType d) -> Tensor {
    return ops::visit_dtype(d, [&](auto x) -> Tensor {
      using T = decltype(x);
      if constexpr (std::is_same_v<T, bool>) {
        throw InvalidArgumentError("Cannot convert " + std::to_string(v) + " to a bool tensor [Op:" + op + "]");
      } else {
        if constexpr (std::is_integral_v<T>) {
          if (!std::in_range<T>(v))  // compares across signedness (uint64's max is no int64)
            throw InvalidArgumentError("Can't convert " + std::to_string(v) + " to " + std::string(dtype_name(d)) +
                                       ": out of range [Op:" + op + "]");
        }
        return api::make_host_scalar<T>(static_cast<T>(v));
      }
    });
  });
}

Tensor number_as(const Tensor& like, bool v, const char* op) {
  return number_tensor(like, op, [&](DType d) -> Tensor {
    if (d != DType::Bool)
      throw InvalidArgumentError(std::string("Cannot use a C++ bool with a ") + std::string(dtype_name(d)) +
                                 " tensor [Op:" + op + "]");
    return api::make_host_scalar<bool>(v);
  });
}
}  // namespace detail

namespace op = ops::op;
using ops::Attrs;

#define KILN_BINARY_IMPL(fn, Name, hint)                                    \
  Tensor fn(const Tensor& a, const Tensor& b) {                             \
    return trace::dispatch1(op::Name(), {&a, &b}, trace::no_attrs(), hint); \
  }
KILN_BINARY_IMPL(add, AddV2, "add")
KILN_BINARY_IMPL(sub, Sub, "sub")
KILN_BINARY_IMPL(mul, Mul, "mul")
KILN_BINARY_IMPL(floordiv, FloorDiv, "floordiv")
KILN_BINARY_IMPL(floormod, FloorMod, "mod")
KILN_BINARY_IMPL(pow, Pow, "pow")
KILN_BINARY_IMPL(maximum, Maximum, "Maximum")
KILN_BINARY_IMPL(minimum, Minimum, "Minimum")
KILN_BINARY_IMPL(squared_difference, SquaredDifference, "SquaredDifference")
KILN_BINARY_IMPL(atan2, Atan2, "Atan2")
KILN_BINARY_IMPL(equal, Equal, "Equal")
KILN_BINARY_IMPL(not_equal, NotEqual, "NotEqual")
KILN_BINARY_IMPL(greater, Greater, "Greater")
KILN_BINARY_IMPL(greater_equal, GreaterEqual, "GreaterEqual")
KILN_BINARY_IMPL(less, Less, "Less")
KILN_BINARY_IMPL(less_equal, LessEqual, "LessEqual")
KILN_BINARY_IMPL(logical_and, LogicalAnd, "LogicalAnd")
KILN_BINARY_IMPL(logical_or, LogicalOr, "LogicalOr")
#undef KILN_BINARY_IMPL

// truediv: integer operands are cast to a float first, as TensorFlow's `/` does: 8- and 16-bit
// integers to float32, wider ones to float64.
Tensor div(const Tensor& a, const Tensor& b) {
  if (a.defined() && b.defined() && a.dtype() == b.dtype() && is_integer(a.dtype())) {
    const DType to = dtype_size(a.dtype()) <= 2 ? DType::Float32 : DType::Float64;
    Tensor fa = cast(a, to), fb = cast(b, to);
    return trace::dispatch1(op::RealDiv(), {&fa, &fb}, trace::no_attrs(), "truediv");
  }
  return trace::dispatch1(op::RealDiv(), {&a, &b}, trace::no_attrs(), "truediv");
}

#define KILN_UNARY_IMPL(fn, Name) \
  Tensor fn(const Tensor& x) { return trace::dispatch1(op::Name(), {&x}, trace::no_attrs(), #Name); }
KILN_UNARY_IMPL(neg, Neg)
KILN_UNARY_IMPL(abs, Abs)
KILN_UNARY_IMPL(sign, Sign)
KILN_UNARY_IMPL(exp, Exp)
KILN_UNARY_IMPL(log, Log)
KILN_UNARY_IMPL(sqrt, Sqrt)
KILN_UNARY_IMPL(rsqrt, Rsqrt)
KILN_UNARY_IMPL(square, Square)
KILN_UNARY_IMPL(floor, Floor)
KILN_UNARY_IMPL(ceil, Ceil)
KILN_UNARY_IMPL(round, Round)
KILN_UNARY_IMPL(tanh, Tanh)
KILN_UNARY_IMPL(sigmoid, Sigmoid)
KILN_UNARY_IMPL(relu, Relu)
KILN_UNARY_IMPL(relu6, Relu6)
KILN_UNARY_IMPL(logical_not, LogicalNot)
KILN_UNARY_IMPL(identity, Identity)
KILN_UNARY_IMPL(zeros_like, ZerosLike)
KILN_UNARY_IMPL(ones_like, OnesLike)
#undef KILN_UNARY_IMPL

Tensor cast(const Tensor& x, DType dtype) {
  // One attrs object per target dtype, built once: an eager call constructs no attrs.
#define KILN_CAST_ATTRS(name, size) with_defaults(op::Cast(), Attrs{DType::name}),
  static const Attrs by_dtype[kNumDTypes] = {KILN_DTYPE_LIST(KILN_CAST_ATTRS)};
#undef KILN_CAST_ATTRS
  return trace::dispatch1(op::Cast(), {&x}, by_dtype[static_cast<int>(dtype)], "Cast");
}

Tensor where(const Tensor& c, const Tensor& a, const Tensor& b) {
  return trace::dispatch1(op::SelectV2(), {&c, &a, &b}, trace::no_attrs(), "SelectV2");
}

Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b) {
  // The four attr combinations, built once: an eager call constructs no attrs.
  // MatMul's and BatchMatMulV2's attrs agree in kind and default (transpose/adj, grad hints).
  static const Attrs combos[4] = {
      with_defaults(op::MatMul(), Attrs{false, false}), with_defaults(op::MatMul(), Attrs{false, true}),
      with_defaults(op::MatMul(), Attrs{true, false}), with_defaults(op::MatMul(), Attrs{true, true})};
  const Attrs& attrs = combos[(transpose_a ? 2 : 0) + (transpose_b ? 1 : 0)];
  const bool batched = (a.defined() && a.rank() > 2) || (b.defined() && b.rank() > 2);
  if (batched) return trace::dispatch1(op::BatchMatMulV2(), {&a, &b}, attrs, "MatMul");
  return trace::dispatch1(op::MatMul(), {&a, &b}, attrs, "MatMul");
}

namespace {
// Axes input for a reduction: the given axes, or every axis (Range(0, Rank(x)) if the rank
// is unknown while tracing).
Tensor reduction_axes(const Tensor& x, const std::optional<std::vector<int64_t>>& axes) {
  if (axes) return api::int_list(*axes, "Const");
  const int r = x.rank();
  if (r >= 0) {
    std::vector<int64_t> all(r);
    for (int i = 0; i < r; ++i) all[i] = i;
    return api::int_list(all, "Const");
  }
  Tensor start = api::int_scalar(0), delta = api::int_scalar(1), rank = rank_of(x);
  return trace::dispatch1(op::Range(), {&start, &rank, &delta}, trace::no_attrs(), "range");
}
Tensor reduce(const ops::OpDef& def, const char* hint, const Tensor& x, const std::optional<std::vector<int64_t>>& axes,
              bool keepdims) {
  if (!x.defined()) throw InvalidArgumentError(std::string("Empty tensor [Op:") + def.name + "]");
  Tensor ax = reduction_axes(x, axes);
  static const Attrs keep[2] = {Attrs{false}, Attrs{true}};
  return trace::dispatch1(def, {&x, &ax}, keep[keepdims ? 1 : 0], hint);
}
}  // namespace

Tensor reduce_sum(const Tensor& x, std::optional<std::vector<int64_t>> axes, bool keepdims) {
  return reduce(op::Sum(), "Sum", x, axes, keepdims);
}
Tensor reduce_mean(const Tensor& x, std::optional<std::vector<int64_t>> axes, bool keepdims) {
  return reduce(op::Mean(), "Mean", x, axes, keepdims);
}
Tensor reduce_max(const Tensor& x, std::optional<std::vector<int64_t>> axes, bool keepdims) {
  return reduce(op::Max(), "Max", x, axes, keepdims);
}
Tensor reduce_min(const Tensor& x, std::optional<std::vector<int64_t>> axes, bool keepdims) {
  return reduce(op::Min(), "Min", x, axes, keepdims);
}
Tensor reduce_prod(const Tensor& x, std::optional<std::vector<int64_t>> axes, bool keepdims) {
  return reduce(op::Prod(), "Prod", x, axes, keepdims);
}

Tensor argmax(const Tensor& x, int64_t axis) {
  Tensor a = api::int_scalar(axis, "ArgMax/dimension");
  return trace::dispatch1(op::ArgMax(), {&x, &a}, Attrs{DType::Int64}, "ArgMax");
}

namespace {
// Softmax ops work on the last axis; another axis is moved there and back (as TF does).
Tensor softmax_on_axis(const ops::OpDef& def, const char* hint, const Tensor& x, int64_t axis) {
  const int r = x.defined() ? x.rank() : -1;
  if (r < 0 || axis == -1 || axis == r - 1) return trace::dispatch1(def, {&x}, trace::no_attrs(), hint);
  if (axis < -r || axis >= r)
    throw InvalidArgumentError("axis " + std::to_string(axis) + " is out of range for a tensor of rank " +
                               std::to_string(r) + " [Op:" + def.name + "]");
  const int64_t a = axis < 0 ? axis + r : axis;
  std::vector<int64_t> perm(r);
  for (int i = 0; i < r; ++i) perm[i] = i;
  std::swap(perm[a], perm[r - 1]);
  Tensor moved = transpose(x, perm);
  Tensor y = trace::dispatch1(def, {&moved}, trace::no_attrs(), hint);
  return transpose(y, perm);
}
}  // namespace

Tensor softmax(const Tensor& x, int64_t axis) { return softmax_on_axis(op::Softmax(), "Softmax", x, axis); }
Tensor log_softmax(const Tensor& x, int64_t axis) { return softmax_on_axis(op::LogSoftmax(), "LogSoftmax", x, axis); }

Tensor bias_add(const Tensor& value, const Tensor& bias) {
  static const Attrs nhwc{std::string("NHWC")};
  return trace::dispatch1(op::BiasAdd(), {&value, &bias}, nhwc, "BiasAdd");
}

Tensor fused_batch_norm(const Tensor& x, const Tensor& scale, const Tensor& offset, const Tensor& mean,
                        const Tensor& variance, double epsilon) {
  // TensorFlow's attr is a float32: the epsilon it applies is the float nearest the argument.
  const Attrs attrs{static_cast<double>(static_cast<float>(epsilon)), 1.0, std::string("NHWC"), false};
  return trace::dispatch1(op::FusedBatchNormV3(), {&x, &scale, &offset, &mean, &variance}, attrs, "FusedBatchNormV3");
}

Tensor conv2d(const Tensor& input, const Tensor& filters, const std::vector<int64_t>& strides,
              const std::string& padding, const std::vector<int64_t>& dilations) {
  const Attrs attrs{strides, padding, std::vector<int64_t>{}, std::string("NHWC"), dilations, true};
  return trace::dispatch1(op::Conv2D(), {&input, &filters}, attrs, "Conv2D");
}

Tensor max_pool2d(const Tensor& input, const std::vector<int64_t>& ksize, const std::vector<int64_t>& strides,
                  const std::string& padding) {
  const Attrs attrs{ksize, strides, padding, std::vector<int64_t>{}, std::string("NHWC")};
  return trace::dispatch1(op::MaxPool(), {&input}, attrs, "MaxPool");
}

Tensor avg_pool2d(const Tensor& input, const std::vector<int64_t>& ksize, const std::vector<int64_t>& strides,
                  const std::string& padding) {
  const Attrs attrs{ksize, strides, padding, std::string("NHWC")};
  return trace::dispatch1(op::AvgPool(), {&input}, attrs, "AvgPool");
}

Tensor sparse_softmax_cross_entropy_with_logits(const Tensor& labels, const Tensor& logits) {
  if (!labels.defined() || !logits.defined())
    throw InvalidArgumentError("sparse_softmax_cross_entropy_with_logits: empty Tensor");
  return trace::dispatch(op::SparseSoftmaxCrossEntropyWithLogits(), std::vector<const Tensor*>{&logits, &labels}.data(),
                         2, trace::no_attrs(), "SparseSoftmaxCrossEntropyWithLogits")[0];
}

}  // namespace kiln
