// OneHot(indices, depth, on_value, off_value): attr axis (-1: last). An index outside
// [0, depth) gives a row of off_value.
#include <functional>
#include <string>
#include <type_traits>

#include "ops/gradient.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

const int kOneHotAxis = attr_index(op::OneHot(), "axis");

void infer_one_hot(InferContext& c) {
  const DType ti = c.in(0).dtype;  // TensorFlow's TI: uint8, int8, int32, int64
  if (ti != DType::UInt8 && ti != DType::Int8 && ti != DType::Int32 && ti != DType::Int64)
    c.fail(std::string("indices must be uint8, int8, int32 or int64, got ") + tf_type_name(ti));
  if (c.in(1).dtype != DType::Int32) c.fail(std::string("depth must be int32, got ") + tf_type_name(c.in(1).dtype));
  if (c.in(2).dtype != c.in(3).dtype)
    c.fail(std::string("cannot compute OneHot as input #3(zero-based) was expected to be a ") +
           tf_type_name(c.in(2).dtype) + " tensor but is a " + tf_type_name(c.in(3).dtype) + " tensor");
  for (int i : {1, 2, 3})
    if (!c.in(i).unknown_rank && !c.in(i).dims->empty())
      c.fail(std::string(i == 1   ? "depth"
                         : i == 2 ? "on_value"
                                  : "off_value") +
             " must be a scalar, but got: " + dims_text(*c.in(i).dims));
  c.out(0).dtype = c.in(2).dtype;
  c.kernel_dtype = c.in(2).dtype;
  const int64_t axis = c.attrs.i(kOneHotAxis);
  if (c.in(0).unknown_rank) {
    c.out(0).shape = TensorShape::unknown();
    return;
  }
  const Dims& d = *c.in(0).dims;
  const auto rank = static_cast<int64_t>(d.size());
  if (axis < -1 || axis > rank)
    c.fail("Expected axis to be -1 or between [0, " + std::to_string(rank + 1) +
           ").  But received: " + std::to_string(axis));
  std::vector<int64_t> depth;
  int64_t depth_dim = -1;
  if (known_ints(c.in(1), &depth) && depth.size() == 1) {
    if (depth[0] < 0) c.fail("depth must be non-negative, got: " + std::to_string(depth[0]));
    depth_dim = depth[0];
  }
  Dims out = d;
  out.insert_at(static_cast<size_t>(axis == -1 ? rank : axis), depth_dim);
  c.out(0).shape = TensorShape(std::move(out));
}

template <class T>
struct OneHotKernel {
  static void run(KernelContext& c) {
    const TensorImpl& indices = c.in(0);
    const int64_t depth = int_values(c.in(1)).at(0);
    if (depth < 0) c.fail("depth must be non-negative, got: " + std::to_string(depth));
    const auto rank = static_cast<int64_t>(indices.dims.size());
    int64_t axis = c.attrs.i(kOneHotAxis);
    if (axis == -1) axis = rank;
    if (axis < 0 || axis > rank) c.fail("axis is out of range");
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < axis; ++i) outer *= indices.dims[i];
    for (int64_t i = axis; i < rank; ++i) inner *= indices.dims[i];
    if (c.out(0).num_elements != outer * depth * inner) c.fail("the output's shape does not match depth");
    const T on = c.in(2).as<T>()[0], off = c.in(3).as<T>()[0];
    T* out = c.out(0).as<T>();
    visit_dtype(indices.dtype, [&](auto zero) {
      using I = decltype(zero);
      if constexpr (std::is_integral_v<I> && !std::is_same_v<I, bool>) {
        const I* index = indices.as<I>();
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t k = 0; k < depth; ++k)
            for (int64_t j = 0; j < inner; ++j)
              out[(o * depth + k) * inner + j] = static_cast<int64_t>(index[o * inner + j]) == k ? on : off;
      }
    });
  }
};

}  // namespace

const OpDef& op::OneHot() {
  static const OpDef def = {.name = "OneHot",
                            .num_inputs = 4,
                            .num_outputs = 1,
                            .input_args = {"indices", "depth", "on_value", "off_value"},
                            .traits = kTfjs,
                            .attr_specs = {int_attr("axis", -1)},
                            .infer = infer_one_hot,
                            .kernels = kernels_for<OneHotKernel, KILN_EVERY_TYPE>(),
                            .type_attr_input = 2,
                            .index_type_attrs = {{"TI", 0}},
                            .grad = &no_gradient};
  return def;
}

}  // namespace kiln::ops
