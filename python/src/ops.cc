// The C++ ops, one binding each. Arguments arrive as tensors and plain attrs: the Python
// layer (kiln/_ops/*.py) gives them TensorFlow's names, keywords and conversions.
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "convert.h"

namespace kiln::python {
namespace {

using Axes = std::optional<std::vector<int64_t>>;

DType dt(nb::handle d) { return dtype_from(d); }

// A Python value as an attr: bool, int, float, str, a tensor, None (an unknown shape), a
// list of ints (a list or a shape), or a dtype.
OpAttrValue attr_value(nb::handle v) {
  if (PyBool_Check(v.ptr())) return nb::cast<bool>(v);
  if (PyLong_Check(v.ptr())) return nb::cast<int64_t>(v);
  if (PyFloat_Check(v.ptr())) return nb::cast<double>(v);
  if (nb::isinstance<nb::str>(v)) return nb::cast<std::string>(v);
  if (nb::isinstance<Tensor>(v)) return nb::cast<Tensor>(v);
  if (nb::isinstance<Variable>(v)) return nb::cast<Variable>(v);
  if (v.is_none()) return TensorShape::unknown();
  if (nb::isinstance<nb::list>(v) || nb::isinstance<nb::tuple>(v)) {
    std::vector<int64_t> list;
    for (nb::handle x : v) list.push_back(nb::cast<int64_t>(x));
    return list;
  }
  return dtype_from(v);
}

}  // namespace

void bind_ops(nb::module_& m) {
  using T = const Tensor&;
  // kiln's op registry, for tests against TensorFlow's: (name, [(attr, type, default or
  // None)], stateful, tfjs, internal) per op.
  m.def("_registered_ops", [] {
    nb::list out;
    for (const OpInfo& op : registered_ops()) {
      nb::list attrs;
      for (const OpAttrInfo& a : op.attrs)
        attrs.append(nb::make_tuple(a.name, a.type,
                                    a.default_value ? nb::object(nb::str(a.default_value->c_str())) : nb::none()));
      out.append(nb::make_tuple(op.name, attrs, op.stateful, op.tfjs, op.internal));
    }
    return out;
  });
  // The registry as the generated front end (kiln.raw_ops) and docs/ops.md read it: one dict
  // per op; inputs (name, list, number attr or None, raw_ops name), attrs (name, type,
  // default text or None, raw_ops name).
  m.def("_op_catalog", [] {
    nb::list out;
    for (const OpInfo& op : registered_ops()) {
      nb::list inputs, attrs, dtypes;
      for (const OpArgInfo& a : op.inputs)
        inputs.append(nb::make_tuple(a.name, a.list,
                                     a.number_attr.empty() ? nb::none() : nb::str(a.number_attr.c_str()), a.api_name));
      for (const OpAttrInfo& a : op.attrs)
        attrs.append(nb::make_tuple(
            a.name, a.type, a.default_value ? nb::object(nb::str(a.default_value->c_str())) : nb::none(), a.api_name));
      for (DType d : op.dtypes) dtypes.append(nb::str(std::string(dtype_name(d)).c_str()));
      const char* gradient = op.gradient == OpGradient::kDefined             ? "yes"
                             : op.gradient == OpGradient::kNotDifferentiable ? "none"
                                                                             : "missing";
      nb::dict d;
      d["name"] = op.name;
      d["inputs"] = inputs;
      d["outputs"] = op.outputs;
      d["list_output"] = op.outputs.size() == 1 && op.num_outputs != 1;
      d["attrs"] = attrs;
      d["dtypes"] = dtypes;
      d["gradient"] = gradient;
      d["runnable"] = op.runnable_by_name;
      d["variable_arg"] = op.variable_arg.empty() ? nb::none() : nb::str(op.variable_arg.c_str());
      nb::list variable_attrs;
      for (const OpAttrInfo& a : op.attrs)
        if (a.from_variable) variable_attrs.append(nb::str(a.name.c_str()));
      d["variable_attrs"] = variable_attrs;
      d["stateful"] = op.stateful;
      d["tfjs"] = op.tfjs;
      d["internal"] = op.internal;
      out.append(d);
    }
    return out;
  });
  // kiln.raw_ops' generic form (and the kernel fuzzer's TensorFlow side): an op by name,
  // attrs by name; Python values become attr kinds as execute_op takes them.
  m.def(
      "execute_op",
      [](const std::string& name, const std::vector<Tensor>& inputs, nb::dict attrs) {
        std::map<std::string, OpAttrValue> values;
        for (auto [key, v] : attrs) values.emplace(nb::cast<std::string>(key), attr_value(v));
        return execute_op(name, inputs, values);
      },
      nb::arg("name"), nb::arg("inputs"), nb::arg("attrs"));
#define KILN_PY_BINARY(fn) m.def(#fn, [](T a, T b) { return fn(a, b); });
  KILN_PY_BINARY(add)
  KILN_PY_BINARY(sub)
  KILN_PY_BINARY(mul)
  KILN_PY_BINARY(div)
  KILN_PY_BINARY(floordiv)
  KILN_PY_BINARY(floormod)
  KILN_PY_BINARY(pow)
  KILN_PY_BINARY(maximum)
  KILN_PY_BINARY(minimum)
  KILN_PY_BINARY(squared_difference)
  KILN_PY_BINARY(atan2)
  KILN_PY_BINARY(equal)
  KILN_PY_BINARY(not_equal)
  KILN_PY_BINARY(greater)
  KILN_PY_BINARY(greater_equal)
  KILN_PY_BINARY(less)
  KILN_PY_BINARY(less_equal)
  KILN_PY_BINARY(logical_and)
  KILN_PY_BINARY(logical_or)
#undef KILN_PY_BINARY
#define KILN_PY_UNARY(fn) m.def(#fn, [](T x) { return fn(x); });
  KILN_PY_UNARY(neg)
  KILN_PY_UNARY(abs)
  KILN_PY_UNARY(sign)
  KILN_PY_UNARY(exp)
  KILN_PY_UNARY(log)
  KILN_PY_UNARY(sqrt)
  KILN_PY_UNARY(rsqrt)
  KILN_PY_UNARY(square)
  KILN_PY_UNARY(floor)
  KILN_PY_UNARY(ceil)
  KILN_PY_UNARY(round)
  KILN_PY_UNARY(tanh)
  KILN_PY_UNARY(sigmoid)
  KILN_PY_UNARY(relu)
  KILN_PY_UNARY(relu6)
  KILN_PY_UNARY(logical_not)
  KILN_PY_UNARY(identity)
  KILN_PY_UNARY(zeros_like)
  KILN_PY_UNARY(ones_like)
  KILN_PY_UNARY(shape_of)
  KILN_PY_UNARY(size_of)
  KILN_PY_UNARY(rank_of)
#undef KILN_PY_UNARY
#define KILN_PY_REDUCE(fn)                                                                               \
  m.def(                                                                                                 \
      #fn, [](T x, Axes axes, bool keepdims) { return fn(x, std::move(axes), keepdims); }, nb::arg("x"), \
      nb::arg("axes").none(), nb::arg("keepdims"));
  KILN_PY_REDUCE(reduce_sum)
  KILN_PY_REDUCE(reduce_mean)
  KILN_PY_REDUCE(reduce_max)
  KILN_PY_REDUCE(reduce_min)
  KILN_PY_REDUCE(reduce_prod)
#undef KILN_PY_REDUCE

  m.def("cast", [](T x, nb::handle d) { return cast(x, dt(d)); });
  m.def("where", [](T c, T a, T b) { return where(c, a, b); });
  m.def("matmul", [](T a, T b, bool ta, bool tb) { return matmul(a, b, ta, tb); });
  m.def("argmax", [](T x, int64_t axis) { return argmax(x, axis); });
  m.def("softmax", [](T x, int64_t axis) { return softmax(x, axis); });
  m.def("bias_add", [](T value, T bias) { return bias_add(value, bias); });
  m.def("conv2d", [](T input, T filters, std::vector<int64_t> strides, std::string padding,
                     std::vector<int64_t> dilations) { return conv2d(input, filters, strides, padding, dilations); });
  m.def("max_pool2d", [](T input, std::vector<int64_t> ksize, std::vector<int64_t> strides, std::string padding) {
    return max_pool2d(input, ksize, strides, padding);
  });
  m.def("avg_pool2d", [](T input, std::vector<int64_t> ksize, std::vector<int64_t> strides, std::string padding) {
    return avg_pool2d(input, ksize, strides, padding);
  });
  m.def("log_softmax", [](T x, int64_t axis) { return log_softmax(x, axis); });
  m.def("sparse_softmax_cross_entropy_with_logits",
        [](T labels, T logits) { return sparse_softmax_cross_entropy_with_logits(labels, logits); });
  m.def("reshape", [](T x, T shape) { return reshape(x, shape); });
  m.def(
      "transpose",
      [](T x, std::optional<std::vector<int64_t>> perm) {
        return perm ? transpose(x, std::move(*perm)) : transpose(x);
      },
      nb::arg("x"), nb::arg("perm").none());
  m.def("concat", [](const std::vector<Tensor>& xs, int64_t axis) { return concat(xs, axis); });
  m.def("stack", [](const std::vector<Tensor>& xs, int64_t axis) { return stack(xs, axis); });
  m.def("slice", [](T x, std::vector<int64_t> begin, std::vector<int64_t> size) {
    return slice(x, std::move(begin), std::move(size));
  });
  m.def("strided_slice",
        [](T x, std::vector<int64_t> begin, std::vector<int64_t> end, std::vector<int64_t> strides, int64_t begin_mask,
           int64_t end_mask, int64_t ellipsis_mask, int64_t new_axis_mask, int64_t shrink_axis_mask) {
          return strided_slice(x, std::move(begin), std::move(end), std::move(strides),
                               StridedSliceMasks{.begin_mask = begin_mask,
                                                 .end_mask = end_mask,
                                                 .ellipsis_mask = ellipsis_mask,
                                                 .new_axis_mask = new_axis_mask,
                                                 .shrink_axis_mask = shrink_axis_mask});
        });
  m.def("gather", [](T x, T indices, int64_t axis) { return gather(x, indices, axis); });
  m.def("expand_dims", [](T x, int64_t axis) { return expand_dims(x, axis); });
  m.def("broadcast_to", [](T x, std::vector<int64_t> shape) { return broadcast_to(x, std::move(shape)); });
  m.def("unsorted_segment_sum", [](T data, T ids, int64_t n) { return unsorted_segment_sum(data, ids, n); });
  m.def("squeeze", [](T x, std::vector<int64_t> axes) { return squeeze(x, std::move(axes)); });
  m.def("tile", [](T x, std::vector<int64_t> multiples) { return tile(x, std::move(multiples)); });

  m.def("zeros", [](std::vector<int64_t> shape, nb::handle d) { return zeros(std::move(shape), dt(d)); });
  m.def("ones", [](std::vector<int64_t> shape, nb::handle d) { return ones(std::move(shape), dt(d)); });
  m.def("fill", [](std::vector<int64_t> shape, T value) {
    return broadcast_to(value, std::move(shape));  // Fill's value is a scalar tensor of any dtype
  });
  m.def("eye", [](int64_t n, nb::handle d) { return eye(n, dt(d)); });
  m.def("range",
        [](double start, double limit, double delta, nb::handle d) { return range(start, limit, delta, dt(d)); });
  m.def("reset_random_streams", &reset_random_streams);
  m.def("range_of_tensors",
        [](const Tensor& start, const Tensor& limit, const Tensor& delta) { return range(start, limit, delta); });
  m.def(
      "random_uniform",
      [](std::vector<int64_t> shape, double lo, double hi, nb::handle d, std::optional<uint64_t> seed) {
        return random_uniform(std::move(shape), lo, hi, dt(d), seed);
      },
      nb::arg("shape"), nb::arg("minval"), nb::arg("maxval"), nb::arg("dtype"), nb::arg("seed").none());
  m.def(
      "random_uniform_int",
      [](std::vector<int64_t> shape, int64_t lo, int64_t hi, nb::handle d, std::optional<uint64_t> seed) {
        return random_uniform_int(std::move(shape), lo, hi, dt(d), seed);
      },
      nb::arg("shape"), nb::arg("minval"), nb::arg("maxval"), nb::arg("dtype"), nb::arg("seed").none());
  m.def(
      "random_normal",
      [](std::vector<int64_t> shape, double mean, double stddev, nb::handle d, std::optional<uint64_t> seed) {
        return random_normal(std::move(shape), mean, stddev, dt(d), seed);
      },
      nb::arg("shape"), nb::arg("mean"), nb::arg("stddev"), nb::arg("dtype"), nb::arg("seed").none());

  // tf.print's text for one tensor: numpy-like, at most `summarize` items per dimension end.
  m.def(
      "dropout", [](T x, double rate, std::optional<uint64_t> seed) { return dropout(x, rate, seed); }, nb::arg("x"),
      nb::arg("rate"), nb::arg("seed").none());
  m.def("print_string", [](T t, int summarize) { return print_string(t, summarize); });
}

}  // namespace kiln::python
