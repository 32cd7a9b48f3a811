// ReverseV2(tensor, axis): the elements in reverse order along each listed axis.
#include <string>

#include "ops/grad_util.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

// Which axes flip, from the axis values, in TensorFlow's words.
template <class Fail>
std::vector<bool> flipped_axes(const std::vector<int64_t>& axes, int64_t rank, Fail fail) {
  std::vector<bool> flip(static_cast<size_t>(rank), false);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axes[i];
    if (a < -rank || a >= rank)
      fail("'axis'[" + std::to_string(i) + "] = " + std::to_string(a) + " is out of valid range [0, " +
           std::to_string(rank - 1));
    if (a < 0) a += rank;
    if (flip[a]) fail("axis " + std::to_string(a) + " specified more than once.");
    flip[a] = true;
  }
  return flip;
}

// TensorFlow's kernel returns a scalar or an empty tensor as it is, before looking at axis.
bool nothing_to_reverse(const InputInfo& in) {
  if (in.unknown_rank) return false;
  if (in.dims->empty()) return true;
  for (int64_t d : *in.dims)
    if (d == 0) return true;
  return false;
}

void infer_reverse(InferContext& c) {
  require_int_dtype(c, 1, "axis");
  c.out(0).dtype = c.in(0).dtype;
  c.out(0).shape = shape_of(c.in(0));
  c.kernel_dtype = c.in(0).dtype;
  if (nothing_to_reverse(c.in(0))) return;
  if (!c.in(1).unknown_rank && c.in(1).dims->size() != 1)
    c.fail("'dims' must be 1-dimension, not " + std::to_string(c.in(1).dims->size()));
  std::vector<int64_t> axes;
  if (!c.in(0).unknown_rank && known_ints(c.in(1), &axes))
    flipped_axes(axes, static_cast<int64_t>(c.in(0).dims->size()), [&](const std::string& m) { c.fail(m); });
}

template <class T>
struct ReverseKernel {
  static void run(KernelContext& c) {
    const TensorImpl& x = c.in(0);
    if (x.dims.empty()) {
      c.out(0).as<T>()[0] = x.as<T>()[0];
      return;
    }
    if (x.num_elements == 0) return;
    if (c.in(1).dims.size() != 1) c.fail("'dims' must be 1-dimension");
    const auto rank = static_cast<int64_t>(x.dims.size());
    const std::vector<bool> flip = flipped_axes(int_values(c.in(1)), rank, [&](const std::string& m) { c.fail(m); });
    const T* src = x.as<T>();
    T* dst = c.out(0).as<T>();
    const int64_t n = x.num_elements;
    if (n == 0) return;
    // Walk the output in order; the source offset steps back along flipped axes.
    const Dims strides = strides_of(x.dims);
    std::vector<int64_t> step(rank), idx(rank, 0);
    int64_t off = 0;
    for (int64_t d = 0; d < rank; ++d) {
      step[d] = flip[d] ? -strides[d] : strides[d];
      if (flip[d]) off += (x.dims[d] - 1) * strides[d];
    }
    for (int64_t i = 0; i < n; ++i) {
      dst[i] = src[off];
      for (int64_t d = rank - 1; d >= 0; --d) {
        off += step[d];
        if (++idx[d] < x.dims[d]) break;
        off -= step[d] * x.dims[d];
        idx[d] = 0;
      }
    }
  }
};

void reverse_grad(GradContext& c) { c.dx[0] = grad::emit1(c.b, op::ReverseV2(), {&c.dy[0], &c.x[1]}); }

}  // namespace

const OpDef& op::ReverseV2() {
  static const OpDef def = {.name = "ReverseV2",
                            .num_inputs = 2,
                            .num_outputs = 1,
                            .input_args = {"tensor", "axis"},
                            .traits = kTfjs | kMovesElements,
                            .infer = infer_reverse,
                            .kernels = kernels_for<ReverseKernel, KILN_EVERY_TYPE>(),
                            .index_type_attrs = {{"Tidx", 1}},
                            .grad = &reverse_grad};
  return def;
}

}  // namespace kiln::ops
