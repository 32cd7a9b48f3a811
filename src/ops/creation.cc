// Ops that make tensors from attrs or small inputs: Const, Placeholder, Fill, Range.
#include <cmath>
#include <cstring>

#include "ops/grad_util.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

const int kPlaceholderDtype = attr_index(op::Placeholder(), "dtype");
const int kPlaceholderShape = attr_index(op::Placeholder(), "shape");

// Const: attrs (dtype, value).
void infer_const(InferContext& c) {
  const TensorImpl* v = c.attrs.tensor(kConstValueAttr).impl();
  c.out(0).dtype = v->dtype;
  c.out(0).shape = TensorShape(Dims(v->dims));
  c.kernel_dtype = v->dtype;
}
template <class T>
struct ConstKernel {
  static void run(KernelContext& c) {
    const TensorImpl* v = c.attrs.tensor(kConstValueAttr).impl();
    std::memcpy(c.out(0).data, v->data, v->nbytes());
  }
};

// Placeholder: attrs (dtype, shape, _user_specified_name). Fed, never run.
void infer_placeholder(InferContext& c) {
  const TensorShape& s = c.attrs.shape(kPlaceholderShape);
  c.out(0).dtype = c.attrs.type(kPlaceholderDtype);
  c.out(0).shape = s;
  c.kernel_dtype = c.attrs.type(kPlaceholderDtype);
}

// Fill(dims, value).
void infer_fill(InferContext& c) {
  require_int_dtype(c, 0, "dims");
  if (c.in(0).dims->size() > 1 && !c.in(0).unknown_rank)  // a scalar is a one-dim shape, as in TensorFlow
    c.fail("dims must represent a vector, got shape " + dims_text(*c.in(0).dims));
  if (!c.in(1).unknown_rank && !c.in(1).dims->empty())
    c.fail("value must be a scalar, got shape " + dims_text(*c.in(1).dims));
  c.out(0).dtype = c.in(1).dtype;
  c.kernel_dtype = c.in(1).dtype;
  std::vector<int64_t> dims;
  if (known_ints(c.in(0), &dims)) {
    for (int64_t d : dims)
      if (d < 0) c.fail("dims must be non-negative, got " + std::to_string(d));
    detail::checked_num_elements(dims.data(), dims.size());
    c.out(0).shape = TensorShape(Dims(dims));
  } else if (!c.in(0).unknown_rank && (c.in(0).dims->empty() || (*c.in(0).dims)[0] >= 0)) {
    const int64_t rank = c.in(0).dims->empty() ? 1 : (*c.in(0).dims)[0];
    c.out(0).shape = TensorShape::unknown_dims(static_cast<int>(rank));
  } else {
    c.out(0).shape = TensorShape::unknown();
  }
}
template <class T>
struct FillKernel {
  static void run(KernelContext& c) {
    const T v = c.in(1).as<T>()[0];
    T* o = c.out(0).as<T>();
    for (int64_t i = 0; i < c.out(0).num_elements; ++i) o[i] = v;
  }
};

// Range(start, limit, delta): attrs (Tidx).
template <class T>
double scalar_as_double(const TensorImpl& t) {
  return detail::as_double(t.as<T>()[0]);
}
double scalar_double(const TensorImpl& t) {
  return visit_dtype(t.dtype, [&](auto x) { return scalar_as_double<decltype(x)>(t); });
}
int64_t range_size(const InferContext& c, double start, double limit, double delta) {
  if (delta == 0) c.fail("Requires delta != 0: " + std::to_string(delta));
  if (delta > 0 && start > limit)
    c.fail("Requires start <= limit when delta > 0: " + std::to_string(start) + "/" + std::to_string(limit));
  if (delta < 0 && start < limit)
    c.fail("Requires start >= limit when delta < 0: " + std::to_string(start) + "/" + std::to_string(limit));
  const double n = is_integer(c.in(0).dtype) ? std::ceil(std::fabs(limit - start) / std::fabs(delta))
                                             : std::ceil(std::fabs((limit - start) / delta));
  if (!(n < 9e15)) c.fail("Requires the size of the range to be representable");
  return static_cast<int64_t>(n);
}
void infer_range(InferContext& c) {
  require_same_dtypes(c, 0, 2);
  if (c.in(0).dtype == DType::Bool) c.fail("Range does not support bool");
  for (int i = 0; i < 3; ++i)
    if (!c.in(i).unknown_rank && !c.in(i).dims->empty()) c.fail("Range arguments must be scalars");
  c.out(0).dtype = c.in(0).dtype;
  c.kernel_dtype = c.in(0).dtype;
  if (c.in(0).value && c.in(1).value && c.in(2).value) {
    const int64_t n =
        range_size(c, scalar_double(*c.in(0).value), scalar_double(*c.in(1).value), scalar_double(*c.in(2).value));
    c.out(0).shape = TensorShape(Dims{n});
  } else {
    c.out(0).shape = TensorShape(Dims{-1});
  }
}
template <class T>
struct RangeKernel {
  static void run(KernelContext& c) {
    const T start = c.in(0).as<T>()[0], delta = c.in(2).as<T>()[0];
    T* o = c.out(0).as<T>();
    for (int64_t i = 0; i < c.out(0).num_elements; ++i) o[i] = static_cast<T>(start + static_cast<T>(i) * delta);
  }
};

// Fill(dims, value): every element came from the one value.
void fill_grad(GradContext& c) {
  Dims d;
  if (!grad::static_dims(c.dy[0], &d)) throw UnimplementedError("The gradient of Fill needs a result of known rank");
  std::vector<int64_t> axes;
  for (size_t i = 0; i < d.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  c.dx[1] = grad::sum(c.b, c.dy[0], axes, false);
}

// LinSpace(start, stop, num): num evenly spaced values from start to stop, the last exactly
// stop (TensorFlow's kernel: start + i * step before it).
void infer_lin_space(InferContext& c) {
  require_same_dtypes(c, 0, 1);
  require_int_dtype(c, 2, "num");
  c.out(0).dtype = c.in(0).dtype;
  c.kernel_dtype = c.in(0).dtype;
  const char* names[3] = {"start", "stop", "num"};
  for (int i = 0; i < 3; ++i)
    if (!c.in(i).unknown_rank && !c.in(i).dims->empty())
      c.fail(std::string(names[i]) + " must be a scalar, not shape " + dims_text(*c.in(i).dims));
  std::vector<int64_t> num;
  if (!known_ints(c.in(2), &num)) {
    c.out(0).shape = TensorShape::unknown_dims(1);
    return;
  }
  if (num[0] <= 0) c.fail("Requires num > 0: " + std::to_string(num[0]));
  c.out(0).shape = TensorShape({num[0]});
}
template <class T>
struct LinSpaceKernel {
  static void run(KernelContext& c) {
    const char* names[3] = {"start", "stop", "num"};
    for (int i = 0; i < 3; ++i)
      if (!c.in(i).dims.empty())
        c.fail(std::string(names[i]) + " must be a scalar, not shape " + dims_text(c.in(i).dims));
    const int64_t num = int_values(c.in(2))[0];
    if (num <= 0) c.fail("Requires num > 0: " + std::to_string(num));
    const T start = c.in(0).as<T>()[0], stop = c.in(1).as<T>()[0];
    T* out = c.out(0).as<T>();
    if (num == 1) {
      out[0] = start;
      return;
    }
    const T step = (stop - start) / static_cast<T>(num - 1);
    for (int64_t i = 0; i < num - 1; ++i) out[i] = start + step * static_cast<T>(i);
    out[num - 1] = stop;
  }
};

}  // namespace

const OpDef& op::Const() {
  static const OpDef def = {.name = "Const",
                            .num_inputs = 0,
                            .num_outputs = 1,
                            .input_args = {},
                            .traits = kConstValue | kTfjs | kMovesElements,
                            .attr_specs = {type_attr("dtype"), tensor_attr("value")},
                            .infer = infer_const,
                            .kernels = kernels_for<ConstKernel, KILN_EVERY_TYPE>(),
                            .type_attr = nullptr};
  return def;
}
const OpDef& op::Placeholder() {
  static const OpDef def = {.name = "Placeholder",
                            .num_inputs = 0,
                            .num_outputs = 1,
                            .input_args = {},
                            .traits = kNoKernel | kTfjs,
                            .attr_specs = {type_attr("dtype"), shape_attr("shape", TensorShape::unknown()),
                                           string_attr("_user_specified_name")},
                            .infer = infer_placeholder,
                            .type_attr = nullptr};
  return def;
}
const OpDef& op::Fill() {
  static const OpDef def = {.name = "Fill",
                            .num_inputs = 2,
                            .num_outputs = 1,
                            .input_args = {"dims", "value"},
                            .traits = kPure | kTfjs | kMovesElements,
                            .infer = infer_fill,
                            .shape_input = 0,
                            .kernels = kernels_for<FillKernel, KILN_EVERY_TYPE>(),
                            .type_attr_input = 1,
                            .index_type_attrs = {{"index_type", 0}},
                            .grad = &fill_grad};
  return def;
}
const OpDef& op::Range() {
  static const OpDef def = {.name = "Range",
                            .num_inputs = 3,
                            .num_outputs = 1,
                            .input_args = {"start", "limit", "delta"},
                            .traits = kPure | kTfjs,
                            .infer = infer_range,
                            .kernels = kernels_for<RangeKernel, KILN_NUMERIC>(),
                            .type_attr = "Tidx",
                            .grad = &no_gradient};
  return def;
}

const OpDef& op::LinSpace() {
  static const OpDef def = {.name = "LinSpace",
                            .num_inputs = 3,
                            .num_outputs = 1,
                            .input_args = {"start", "stop", "num"},
                            .traits = kPure | kTfjs,
                            .infer = infer_lin_space,
                            .kernels = kernels_for<LinSpaceKernel, KILN_FLOATS>(),
                            .index_type_attrs = {{"Tidx", 2}},
                            .grad = &no_gradient};
  return def;
}

}  // namespace kiln::ops
