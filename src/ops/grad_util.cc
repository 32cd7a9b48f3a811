#include "ops/grad_util.h"

#include <algorithm>

#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {

void no_gradient(GradContext&) {}

namespace grad {

Tensor emit1(GradBuilder& b, const OpDef& op, std::initializer_list<const Tensor*> in, const Attrs& attrs) {
  return b.emit(op, in.begin(), static_cast<int>(in.size()), attrs)[0];
}

Tensor add(GradBuilder& b, const Tensor& x, const Tensor& y) { return emit1(b, op::AddV2(), {&x, &y}); }
Tensor sub(GradBuilder& b, const Tensor& x, const Tensor& y) { return emit1(b, op::Sub(), {&x, &y}); }
Tensor mul(GradBuilder& b, const Tensor& x, const Tensor& y) { return emit1(b, op::Mul(), {&x, &y}); }
Tensor div(GradBuilder& b, const Tensor& x, const Tensor& y) { return emit1(b, op::RealDiv(), {&x, &y}); }
Tensor neg(GradBuilder& b, const Tensor& x) { return emit1(b, op::Neg(), {&x}); }
Tensor exp(GradBuilder& b, const Tensor& x) { return emit1(b, op::Exp(), {&x}); }
Tensor log(GradBuilder& b, const Tensor& x) { return emit1(b, op::Log(), {&x}); }
Tensor sign(GradBuilder& b, const Tensor& x) { return emit1(b, op::Sign(), {&x}); }
Tensor greater(GradBuilder& b, const Tensor& x, const Tensor& y) { return emit1(b, op::Greater(), {&x, &y}); }
Tensor greater_equal(GradBuilder& b, const Tensor& x, const Tensor& y) {
  return emit1(b, op::GreaterEqual(), {&x, &y});
}
Tensor less_equal(GradBuilder& b, const Tensor& x, const Tensor& y) { return emit1(b, op::LessEqual(), {&x, &y}); }
Tensor equal(GradBuilder& b, const Tensor& x, const Tensor& y) { return emit1(b, op::Equal(), {&x, &y}); }
Tensor where(GradBuilder& b, const Tensor& c, const Tensor& x, const Tensor& y) {
  return emit1(b, op::SelectV2(), {&c, &x, &y});
}
Tensor cast(GradBuilder& b, const Tensor& x, DType to) {
  if (x.dtype() == to) return x;
  return emit1(b, op::Cast(), {&x}, with_defaults(op::Cast(), Attrs{to}));
}
Tensor zeros_like(GradBuilder& b, const Tensor& x) { return emit1(b, op::ZerosLike(), {&x}); }
Tensor matmul(GradBuilder& b, const Tensor& x, const Tensor& y, bool ta, bool tb, bool batch) {
  const OpDef& op = batch ? op::BatchMatMulV2() : op::MatMul();
  return emit1(b, op, {&x, &y}, with_defaults(op, Attrs{ta, tb}));
}
Tensor transpose(GradBuilder& b, const Tensor& x, const std::vector<int64_t>& perm) {
  const Tensor p = ints(b, perm);
  return emit1(b, op::Transpose(), {&x, &p});
}

Tensor band(GradBuilder& b, const Tensor& x, int64_t lower, int64_t upper) {
  const Tensor lo = int_scalar(b, lower), up = int_scalar(b, upper);
  return emit1(b, op::MatrixBandPart(), {&x, &lo, &up});
}

Tensor matrix_transpose(GradBuilder& b, const Tensor& x, const char* op) {
  Dims d;
  if (!static_dims(x, &d) || d.size() < 2)
    throw UnimplementedError(std::string("the gradient of ") + op + " needs its input's rank while tracing");
  std::vector<int64_t> perm(d.size());
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
  std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
  return transpose(b, x, perm);
}

Tensor scalar(GradBuilder& b, const Tensor& like, double v) {
  Tensor t(detail::make_concrete(like.dtype(), Dims{}));
  visit_dtype(like.dtype(), [&](auto z) { *t.impl()->as<decltype(z)>() = static_cast<decltype(z)>(v); });
  return b.constant(t);
}

Tensor int_scalar(GradBuilder& b, int64_t v) {
  Tensor t(detail::make_concrete(DType::Int32, Dims{}));
  t.impl()->as<int32_t>()[0] = static_cast<int32_t>(v);
  return b.constant(t);
}

Tensor ints(GradBuilder& b, const std::vector<int64_t>& v) {
  Tensor t(detail::make_concrete(DType::Int32, Dims{static_cast<int64_t>(v.size())}));
  for (size_t i = 0; i < v.size(); ++i) t.impl()->as<int32_t>()[i] = static_cast<int32_t>(v[i]);
  return b.constant(t);
}

Tensor sum(GradBuilder& b, const Tensor& x, const std::vector<int64_t>& axes, bool keep_dims) {
  const Tensor a = ints(b, axes);
  return emit1(b, op::Sum(), {&x, &a}, Attrs{keep_dims});
}

bool static_dims(const Tensor& t, Dims* out) {
  const detail::TensorImpl* i = t.impl();
  if (i->symbolic && i->unknown_rank) return false;
  *out = i->dims;
  return true;
}

namespace {
bool fully_known(const Dims& d) {
  return std::all_of(d.begin(), d.end(), [](int64_t v) { return v >= 0; });
}
}  // namespace

Tensor shape(GradBuilder& b, const Tensor& x) {
  Dims d;
  if (static_dims(x, &d) && fully_known(d)) return ints(b, d.to_vector());
  return emit1(b, op::Shape(), {&x}, Attrs{DType::Int32});
}

Tensor reshape_like(GradBuilder& b, const Tensor& x, const Tensor& like) {
  Dims dx, dl;
  if (static_dims(x, &dx) && static_dims(like, &dl) && dx == dl && fully_known(dx)) return x;
  const Tensor s = shape(b, like);
  return emit1(b, op::Reshape(), {&x, &s});
}

Tensor broadcast_like(GradBuilder& b, const Tensor& x, const Tensor& like) {
  Dims dx, dl;
  if (static_dims(x, &dx) && static_dims(like, &dl) && dx == dl && fully_known(dx)) return x;
  const Tensor s = shape(b, like);
  return emit1(b, op::BroadcastTo(), {&x, &s});
}

Tensor sum_to(GradBuilder& b, const Tensor& g, const Tensor& x) {
  Dims gd, xd;
  if (static_dims(g, &gd) && static_dims(x, &xd) && xd.size() <= gd.size()) {
    if (gd == xd && fully_known(gd)) return g;
    std::vector<int64_t> axes;
    bool dynamic = false;
    const size_t lead = gd.size() - xd.size();
    for (size_t i = 0; i < gd.size(); ++i) {
      if (i < lead) {
        axes.push_back(static_cast<int64_t>(i));
        continue;
      }
      const int64_t xi = xd[i - lead], gi = gd[i];
      if (xi == 1 && gi != 1)
        axes.push_back(static_cast<int64_t>(i));
      else if (xi < 0 && gi != 1)
        dynamic = true;  // x's dim may be 1 (broadcast) or not
    }
    if (!dynamic) {
      if (axes.empty()) return reshape_like(b, g, x);
      return reshape_like(b, sum(b, g, axes, true), x);
    }
  }
  // Shapes known only when running: BroadcastGradientArgs picks the axes.
  const Tensor sx = shape(b, x), sg = shape(b, g);
  const Tensor* in[] = {&sx, &sg};
  const Tensor axes = b.emit(op::BroadcastGradientArgs(), in, 2, Attrs{})[0];
  const Tensor s = emit1(b, op::Sum(), {&g, &axes}, Attrs{false});
  return emit1(b, op::Reshape(), {&s, &sx});
}

Tensor unreduce(GradBuilder& b, const Tensor& dy, const std::vector<int64_t>& axes, bool keep_dims) {
  if (keep_dims) return dy;
  Tensor out = dy;
  for (int64_t a : axes) {  // ascending, so each axis lands where it was reduced
    const Tensor ax = int_scalar(b, a);
    out = emit1(b, op::ExpandDims(), {&out, &ax});
  }
  return out;
}

std::vector<int64_t> known_input_ints(const GradContext& c, int input, const char* what) {
  const TensorImpl* v = c.b.value_of(c.x[input]);
  if (!v)
    throw UnimplementedError(std::string("The gradient of ") + c.op.name + " needs its " + what +
                             " to be known when the gradient is built (a constant), but it is computed");
  return int_values(*v);
}

}  // namespace grad
}  // namespace kiln::ops
