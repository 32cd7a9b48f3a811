// BroadcastTo and BroadcastGradientArgs: making a broadcast explicit, and (for gradients)
// finding which axes a broadcast expanded so they can be summed back.
#include "kernels/broadcast.h"
#include "ops/grad_util.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

// Whether `from` broadcasts to `to` (right-aligned; unknown dims accepted).
bool broadcasts_to(const Dims& from, const Dims& to) {
  if (from.size() > to.size()) return false;
  const size_t lead = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i) {
    const int64_t f = from[i], t = to[i + lead];
    if (f != 1 && f >= 0 && t >= 0 && f != t) return false;
  }
  return true;
}

// BroadcastTo(input, shape).
void infer_broadcast_to(InferContext& c) {
  require_int_dtype(c, 1, "shape");
  if (!c.in(1).unknown_rank && c.in(1).dims->size() != 1)
    c.fail("shape must be a vector of {int32,int64}, got shape " + dims_text(*c.in(1).dims));
  c.out(0).dtype = c.in(0).dtype;
  c.kernel_dtype = c.in(0).dtype;
  std::vector<int64_t> s;
  if (!known_ints(c.in(1), &s)) {
    const Dims* sd = c.in(1).dims;
    c.out(0).shape = (c.in(1).unknown_rank || sd->size() != 1 || (*sd)[0] < 0)
                         ? TensorShape::unknown()
                         : TensorShape::unknown_dims(static_cast<int>((*sd)[0]));
    return;
  }
  for (int64_t d : s)
    if (d < 0) c.fail("BroadcastTo: shape must be non-negative, got " + dims_text(Dims(s)));
  if (!c.in(0).unknown_rank && !broadcasts_to(*c.in(0).dims, Dims(s)))
    c.fail("Unable to broadcast tensor of shape " + dims_text(*c.in(0).dims) + " to tensor of shape " +
           dims_text(Dims(s)));
  detail::checked_num_elements(s.data(), s.size());
  c.out(0).shape = TensorShape(Dims(s));
}
template <class T>
struct BroadcastToKernel {
  static void run(KernelContext& c) {
    const TensorImpl& x = c.in(0);
    TensorImpl& y = c.out(0);
    if (y.num_elements == 0) return;
    kernels::BroadcastPlan<1> plan(y.dims, {&x.dims});
    const T* src = x.as<T>();
    T* dst = y.as<T>();
    plan.for_each_run([&](const std::array<int64_t, 1>& off, int64_t n, const std::array<int64_t, 1>& st) {
      const T* p = src + off[0];
      if (st[0] == 0)
        std::fill(dst, dst + n, *p);
      else
        for (int64_t j = 0; j < n; ++j) dst[j] = p[j * st[0]];
      dst += n;
    });
  }
};
void broadcast_to_grad(GradContext& c) { c.dx[0] = grad::sum_to(c.b, c.dy[0], c.x[0]); }

// BroadcastGradientArgs(s0, s1) -> (r0, r1): the axes of the broadcast shape that each
// operand was expanded along (leading axes it lacks, and its size-1 dims facing n != 1).
bool gradient_axes(const std::vector<int64_t>& s0, const std::vector<int64_t>& s1, std::vector<int64_t>* r0,
                   std::vector<int64_t>* r1, std::string* err) {
  const size_t r = std::max(s0.size(), s1.size());
  const size_t lead0 = r - s0.size(), lead1 = r - s1.size();
  // TensorFlow's BCast: identical shapes reduce nothing; otherwise every axis where an
  // operand is 1 (after padding with leading 1s) is one its gradient sums over, even where
  // the other operand is 1 too.
  const bool same = s0 == s1;
  for (size_t i = 0; i < r; ++i) {
    const int64_t a = i < lead0 ? 1 : s0[i - lead0];
    const int64_t b = i < lead1 ? 1 : s1[i - lead1];
    if (a != b && a != 1 && b != 1) {
      *err = "Incompatible shapes: " + dims_text(Dims(s0)) + " vs. " + dims_text(Dims(s1));
      return false;
    }
    if (same) continue;
    if (a == 1) r0->push_back(static_cast<int64_t>(i));
    if (b == 1) r1->push_back(static_cast<int64_t>(i));
  }
  return true;
}

void infer_bga(InferContext& c) {
  require_int_dtype(c, 0, "s0");
  require_int_dtype(c, 1, "s1");
  if (c.in(0).dtype != c.in(1).dtype) c.fail("s0 and s1 must have the same dtype");
  for (int i = 0; i < 2; ++i)
    if (!c.in(i).unknown_rank && c.in(i).dims->size() != 1)
      c.fail("In[" + std::to_string(i) + "] must be a vector." + dims_text(*c.in(i).dims));
  c.kernel_dtype = c.in(0).dtype;
  std::vector<int64_t> s0, s1, r0, r1;
  std::string err;
  const bool known = known_ints(c.in(0), &s0) && known_ints(c.in(1), &s1);
  if (known && !gradient_axes(s0, s1, &r0, &r1, &err)) c.fail(err);
  for (int i = 0; i < 2; ++i) {
    c.out(i).dtype = c.in(0).dtype;
    c.out(i).shape = TensorShape(Dims{known ? static_cast<int64_t>((i == 0 ? r0 : r1).size()) : -1});
  }
}
template <class T>
struct BgaKernel {
  static void run(KernelContext& c) {
    std::vector<int64_t> r[2];
    std::string err;
    if (!gradient_axes(int_values(c.in(0)), int_values(c.in(1)), &r[0], &r[1], &err)) c.fail(err);
    for (int k = 0; k < 2; ++k)
      for (size_t j = 0; j < r[k].size(); ++j) c.out(k).as<T>()[j] = static_cast<T>(r[k][j]);
  }
};

}  // namespace

const OpDef& op::BroadcastTo() {
  static const OpDef def = {.name = "BroadcastTo",
                            .num_inputs = 2,
                            .num_outputs = 1,
                            .input_args = {"input", "shape"},
                            .traits = kPure | kTfjs | kMovesElements,
                            .infer = infer_broadcast_to,
                            .shape_input = 1,
                            .kernels = kernels_for<BroadcastToKernel, KILN_EVERY_TYPE>(),
                            .index_type_attrs = {{"Tidx", 1}},
                            .grad = &broadcast_to_grad};
  return def;
}
const OpDef& op::BroadcastGradientArgs() {
  static const OpDef def = {.name = "BroadcastGradientArgs",
                            .num_inputs = 2,
                            .num_outputs = 2,
                            .input_args = {"s0", "s1"},
                            .traits = kPure,
                            .infer = infer_bga,
                            .kernels = kernels_for<BgaKernel, int32_t, int64_t>(),
                            .grad = &no_gradient,
                            .output_args = {"r0", "r1"}};
  return def;
}

}  // namespace kiln::ops
