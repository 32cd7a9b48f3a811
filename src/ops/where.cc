// Where(input): the coordinates of the true (non-zero) elements, one row each in row-major
// order, as int64 [count, rank]. The row count depends on the values, so the kernel makes
// its output (kOwnOutputs).
#include "ops/gradient.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

void infer_where(InferContext& c) {
  c.kernel_dtype = c.in(0).dtype;
  c.out(0).dtype = DType::Int64;
  const InputInfo& x = c.in(0);
  if (!x.unknown_rank && x.dims->empty()) c.fail("WhereOp : Unhandled input dimensions: 0");
  c.out(0).shape =
      x.unknown_rank ? TensorShape::unknown_dims(2) : TensorShape(Dims{-1, static_cast<int64_t>(x.dims->size())});
}

template <class T>
struct WhereKernel {
  static void run(KernelContext& c) {
    const TensorImpl& x = c.in(0);
    if (x.dims.empty()) c.fail("WhereOp : Unhandled input dimensions: 0");  // as TensorFlow's kernel
    const T* v = x.as<T>();
    int64_t count = 0;
    for (int64_t i = 0; i < x.num_elements; ++i) count += v[i] != T(0);
    const auto rank = static_cast<int64_t>(x.dims.size());
    TensorImpl* out = detail::make_concrete(DType::Int64, Dims{count, rank});
    c.outputs[0] = out;
    int64_t* dst = out->as<int64_t>();
    const Dims strides = strides_of(x.dims);
    for (int64_t i = 0; i < x.num_elements; ++i) {
      if (!(v[i] != T(0))) continue;
      int64_t rest = i;
      for (int64_t d = 0; d < rank; ++d) {
        *dst++ = rest / strides[d];
        rest %= strides[d];
      }
    }
  }
};

}  // namespace

const OpDef& op::Where() {
  static const OpDef def = {.name = "Where",
                            .num_inputs = 1,
                            .num_outputs = 1,
                            .input_args = {renamed_arg("input", "condition")},
                            .traits = kOwnOutputs | kTfjs,
                            .infer = infer_where,
                            .kernels = kernels_for<WhereKernel, KILN_ALL_TYPES, KILN_STORAGE_INTS>(),
                            .grad = &no_gradient,
                            .output_args = {"index"}};
  return def;
}

}  // namespace kiln::ops
