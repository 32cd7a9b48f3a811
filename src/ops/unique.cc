// Unique(x): the distinct values of a vector in the order they first appear, and for each
// element the position of its value among them. The count depends on the values, so the
// kernel makes its outputs (kOwnOutputs). Values compare as TensorFlow's hash map compares
// them, with ==: -0.0 and 0.0 are one value, and every NaN is a value of its own.
#include <cstring>
#include <type_traits>
#include <unordered_map>

#include "ops/gradient.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

const int kOutIdx = attr_index(op::Unique(), "out_idx");

void infer_unique(InferContext& c) {
  const DType idx = c.attrs.type(kOutIdx);
  require_type_in(c, "out_idx", idx, {DType::Int32, DType::Int64});
  if (!c.in(0).unknown_rank && c.in(0).dims->size() != 1) c.fail("unique expects a 1D vector.");
  c.kernel_dtype = c.in(0).dtype;
  c.out(0) = {.dtype = c.in(0).dtype, .shape = TensorShape::unknown_dims(1)};
  c.out(1) = {.dtype = idx, .shape = c.in(0).unknown_rank ? TensorShape::unknown_dims(1) : shape_of(c.in(0))};
}

template <class T>
struct UniqueKernel {
  static void run(KernelContext& c) {
    const TensorImpl& x = c.in(0);
    if (x.dims.size() != 1) c.fail("unique expects a 1D vector.");
    const DType idx_dtype = c.attrs.type(kOutIdx);
    const int64_t n = x.num_elements;
    if (idx_dtype == DType::Int32 && n > int64_t{1} << 31)
      c.fail("unique does not support input sizes that exceed 2^31-1 for out_idx int32");
    // 16-bit floats key by their float value (== semantics, as the others).
    using Key = std::conditional_t<is_reduced_float_v<T>, float, T>;
    const T* v = x.as<T>();
    std::unordered_map<Key, int64_t> first;
    std::vector<int64_t> index(static_cast<size_t>(n));
    std::vector<int64_t> firsts;  // the first position of each distinct value
    for (int64_t i = 0; i < n; ++i) {
      auto [it, added] = first.try_emplace(static_cast<Key>(v[i]), static_cast<int64_t>(firsts.size()));
      if (added) firsts.push_back(i);
      index[static_cast<size_t>(i)] = it->second;
    }
    TensorImpl* y = detail::make_concrete(x.dtype, Dims{static_cast<int64_t>(firsts.size())});
    c.outputs[0] = y;
    for (size_t k = 0; k < firsts.size(); ++k) y->as<T>()[k] = v[firsts[k]];
    TensorImpl* idx = detail::make_concrete(idx_dtype, Dims{n});
    c.outputs[1] = idx;
    for (int64_t i = 0; i < n; ++i) {
      if (idx_dtype == DType::Int32)
        idx->as<int32_t>()[i] = static_cast<int32_t>(index[static_cast<size_t>(i)]);
      else
        idx->as<int64_t>()[i] = index[static_cast<size_t>(i)];
    }
  }
};

}  // namespace

const OpDef& op::Unique() {
  static const OpDef def = {.name = "Unique",
                            .num_inputs = 1,
                            .num_outputs = 2,
                            .input_args = {"x"},
                            .traits = kOwnOutputs | kTfjs,
                            .attr_specs = {type_attr("out_idx", DType::Int32)},
                            .infer = infer_unique,
                            .kernels = kernels_for<UniqueKernel, KILN_ALL_TYPES, KILN_STORAGE_INTS, KILN_HALF_TYPES>(),
                            .grad = &no_gradient,
                            .output_args = {"y", "idx"}};
  return def;
}

}  // namespace kiln::ops
