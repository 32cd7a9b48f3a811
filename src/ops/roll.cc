// Roll(input, shift, axis): elements shifted along axes, wrapping around; element i of an axis
// moves to (i + shift) mod n. A repeated axis adds its shifts (TensorFlow's rule).
#include <algorithm>  // std::copy
#include <string>

#include "ops/grad_util.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

// The net shift of each axis, in [0, n): TensorFlow's kernel messages.
template <class Fail>
std::vector<int64_t> net_shifts(const Dims& dims, const std::vector<int64_t>& shift, const std::vector<int64_t>& axis,
                                Fail fail) {
  const auto rank = static_cast<int64_t>(dims.size());
  std::vector<int64_t> net(dims.size(), 0);
  for (size_t i = 0; i < axis.size(); ++i) {
    int64_t a = axis[i];
    if (a < 0) a += rank;
    if (a < 0 || a >= rank) fail("axis " + std::to_string(a) + " is out of range");
    const int64_t n = dims[a];
    if (n <= 0) continue;  // empty, or unknown while tracing
    net[a] = ((net[a] + shift[i] % n) % n + n) % n;
  }
  return net;
}

void infer_roll(InferContext& c) {
  require_int_dtype(c, 1, "shift");
  require_int_dtype(c, 2, "axis");
  const InputInfo& x = c.in(0);
  if (!x.unknown_rank && x.dims->empty()) c.fail("input must be 1-D or higher");
  for (int i : {1, 2})
    if (!c.in(i).unknown_rank && c.in(i).dims->size() > 1)
      c.fail(std::string(i == 1 ? "shift" : "axis") +
             " must be a scalar or a 1-D vector. Found: " + dims_text(*c.in(i).dims));
  // One shape, not only one size: a [1] shift with a scalar axis is an error (TensorFlow's rule).
  if (!c.in(1).unknown_rank && !c.in(2).unknown_rank) {
    const Dims &s = *c.in(1).dims, &a = *c.in(2).dims;
    bool differ = s.size() != a.size();
    for (size_t i = 0; !differ && i < s.size(); ++i) differ = s[i] >= 0 && a[i] >= 0 && s[i] != a[i];
    if (differ) c.fail("shift and axis must have the same size");
  }
  std::vector<int64_t> shift, axis;
  const bool shifts_known = known_ints(c.in(1), &shift), axes_known = known_ints(c.in(2), &axis);
  if (shifts_known && axes_known && !x.unknown_rank)
    net_shifts(*x.dims, shift, axis, [&](const std::string& m) { c.fail(m); });
  c.out(0).dtype = x.dtype;
  c.out(0).shape = shape_of(x);
  c.kernel_dtype = x.dtype;
}

template <class T>
struct RollKernel {
  static void run(KernelContext& c) {
    const TensorImpl& x = c.in(0);
    if (x.dims.empty()) c.fail("input must be 1-D or higher");
    for (int i : {1, 2})
      if (c.in(i).dims.size() > 1)
        c.fail(std::string(i == 1 ? "shift" : "axis") +
               " must be a scalar or a 1-D vector. Found: " + dims_text(c.in(i).dims));
    const std::vector<int64_t> shift = int_values(c.in(1)), axis = int_values(c.in(2));
    if (c.in(1).dims != c.in(2).dims) c.fail("shift and axis must have the same size");
    const std::vector<int64_t> net = net_shifts(x.dims, shift, axis, [&](const std::string& m) { c.fail(m); });
    const int64_t n = x.num_elements;
    if (n == 0) return;
    const T* src = x.as<T>();
    T* dst = c.out(0).as<T>();
    // Rows of the last axis: each output row is a source row rotated by the last axis's
    // shift (two contiguous copies); the source row comes from the outer axes' shifts.
    const auto rank = static_cast<int64_t>(x.dims.size());
    const int64_t inner = x.dims[rank - 1], s = net[rank - 1];
    const Dims strides = strides_of(x.dims);
    std::vector<int64_t> idx(rank, 0);  // the output row's outer index
    for (int64_t row = 0; row < n / inner; ++row) {
      int64_t from = 0;
      for (int64_t d = 0; d + 1 < rank; ++d) from += ((idx[d] - net[d] + x.dims[d]) % x.dims[d]) * strides[d];
      const T* in_row = src + from;
      T* out_row = dst + row * inner;
      std::copy(in_row + (inner - s), in_row + inner, out_row);
      std::copy(in_row, in_row + (inner - s), out_row + s);
      for (int64_t d = rank - 2; d >= 0; --d) {
        if (++idx[d] < x.dims[d]) break;
        idx[d] = 0;
      }
    }
  }
};

// Rolling back by the same shifts.
void roll_grad(GradContext& c) {
  const Tensor back = grad::neg(c.b, c.x[1]);
  c.dx[0] = grad::emit1(c.b, op::Roll(), {&c.dy[0], &back, &c.x[2]});
}

}  // namespace

const OpDef& op::Roll() {
  static const OpDef def = {.name = "Roll",
                            .num_inputs = 3,
                            .num_outputs = 1,
                            .input_args = {"input", "shift", "axis"},
                            .traits = kMovesElements,
                            .infer = infer_roll,
                            .kernels = kernels_for<RollKernel, KILN_EVERY_TYPE>(),
                            .index_type_attrs = {{"Tshift", 1}, {"Taxis", 2}},
                            .grad = &roll_grad};
  return def;
}

}  // namespace kiln::ops
