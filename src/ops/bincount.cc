// Bincount(arr, size, weights): out[v] counts (or, with weights, sums the weights of) the
// elements of arr equal to v, for v in [0, size); values >= size are ignored. T is the weights'
// dtype (an empty weights tensor means "count", in T).
#include <functional>

#include "ops/gradient.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

int64_t size_of(const std::function<void(const std::string&)>& fail, const TensorImpl& size) {
  if (!size.dims.empty()) fail("Shape must be rank 0 but is rank " + std::to_string(size.dims.size()));
  const int64_t n = size.as<int32_t>()[0];
  if (n < 0) fail("size (" + std::to_string(n) + ") must be non-negative");
  return n;
}

void infer_bincount(InferContext& c) {
  if (c.in(0).dtype != DType::Int32 || c.in(1).dtype != DType::Int32)
    c.fail("cannot compute Bincount as input #" + std::to_string(c.in(0).dtype != DType::Int32 ? 0 : 1) +
           "(zero-based) was expected to be a int32 tensor but is a " +
           tf_type_name(c.in(0).dtype != DType::Int32 ? c.in(0).dtype : c.in(1).dtype) + " tensor");
  const DType t = c.in(2).dtype;
  require_type_in(c, "T", t, {DType::Int32, DType::Int64, DType::Float32, DType::Float64});
  if (!c.in(1).unknown_rank && !c.in(1).dims->empty())
    c.fail("Shape must be rank 0 but is rank " + std::to_string(c.in(1).dims->size()));
  int64_t n = -1;
  if (c.in(1).value) n = size_of([&](const std::string& m) { c.fail(m); }, *c.in(1).value);
  c.kernel_dtype = t;
  c.out(0).dtype = t;
  c.out(0).shape = TensorShape(Dims{n});
}

template <class T>
struct BincountKernel {
  static void run(KernelContext& c) {
    const auto fail = [&](const std::string& m) { c.fail(m); };
    const int64_t n = size_of(fail, c.in(1));
    const TensorImpl& arr = c.in(0);
    const TensorImpl& w = c.in(2);
    const int32_t* v = arr.as<int32_t>();
    for (int64_t i = 0; i < arr.num_elements; ++i)
      if (v[i] < 0) fail("Input arr must be non-negative!");
    if (w.num_elements != 0 && w.num_elements != arr.num_elements)
      fail("Input indices and weights must have the same size.");
    TensorImpl* out = detail::make_concrete(c.in(2).dtype, Dims{n});
    c.outputs[0] = out;
    T* o = out->as<T>();
    for (int64_t k = 0; k < n; ++k) o[k] = T(0);
    const T* wv = w.as<T>();
    for (int64_t i = 0; i < arr.num_elements; ++i)
      if (v[i] < n) o[v[i]] += w.num_elements ? wv[i] : T(1);
  }
};

}  // namespace

const OpDef& op::Bincount() {
  static const OpDef def = {.name = "Bincount",
                            .num_inputs = 3,
                            .num_outputs = 1,
                            .input_args = {"arr", "size", "weights"},
                            .traits = kOwnOutputs,  // the size is read by the kernel
                            .infer = infer_bincount,
                            .kernels = kernels_for<BincountKernel, int32_t, int64_t, float, double>(),
                            .type_attr_input = 2,
                            .grad = &no_gradient,
                            .output_args = {"bins"}};
  return def;
}

}  // namespace kiln::ops
