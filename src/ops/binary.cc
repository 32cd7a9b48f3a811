// Binary elementwise ops with numpy broadcasting, and SelectV2. One row per op.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "core/object_value.h"
#include "core/parallel.h"
#include "core/scratch.h"
#include "kernels/broadcast.h"
#include "kernels/complex_math.h"
#include "kernels/isa_dispatch.h"
#include "kernels/special_functions.h"
#include "kernels/vmath.h"
#include "ops/channel_vector.h"
#include "ops/grad_util.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

// Contiguous elementwise loops split across threads above this many elements (below it
// they are memory-bound and thread hand-off costs more than it saves).
constexpr int64_t kParallelElements = 256 * 1024;

// Integer arithmetic wraps (as TensorFlow's does) instead of being undefined behavior. It is
// done in an unsigned type of at least int's width: 16-bit operands would otherwise be
// promoted to int, whose product can overflow (65535 * 65535).
template <class T>
using WrapType = std::common_type_t<std::make_unsigned_t<T>, unsigned>;
template <class T>
T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return static_cast<T>(static_cast<WrapType<T>>(a) + static_cast<WrapType<T>>(b));
  else
    return a + b;
}
template <class T>
T wrap_sub(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return static_cast<T>(static_cast<WrapType<T>>(a) - static_cast<WrapType<T>>(b));
  else
    return a - b;
}
template <class T>
T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return static_cast<T>(static_cast<WrapType<T>>(a) * static_cast<WrapType<T>>(b));
  else
    return a * b;
}

struct AddF {
  static constexpr kernels::LaneOp kLane = kernels::LaneOp::kAdd;  // float32 in registers (kernels::vlanes)
  template <class T>
  static T f(T a, T b) {
    return wrap_add(a, b);
  }
  // TensorFlow's Add of strings concatenates; the output element owns the new string.
  static detail::StringElement f(detail::StringElement a, detail::StringElement b) {
    std::string joined(a.view());
    joined += b.view();
    return {detail::make_string(std::move(joined))};
  }
};
struct SubF {
  static constexpr kernels::LaneOp kLane = kernels::LaneOp::kSub;  // float32 in registers (kernels::vlanes)
  template <class T>
  static T f(T a, T b) {
    return wrap_sub(a, b);
  }
};
struct MulF {
  static constexpr kernels::LaneOp kLane = kernels::LaneOp::kMul;  // float32 in registers (kernels::vlanes)
  template <class T>
  static T f(T a, T b) {
    if constexpr (detail::is_complex_v<T>)
      return kernels::complex_mul(a, b);
    else
      return wrap_mul(a, b);
  }
};
struct DivF {
  static constexpr kernels::LaneOp kLane = kernels::LaneOp::kDiv;  // float32 in registers (kernels::vlanes)
  template <class T>
  static T f(T a, T b) {
    if constexpr (detail::is_complex_v<T>)
      return kernels::complex_div(a, b);
    else
      return a / b;
  }
};
struct SqDiffF {
  template <class T>
  static T f(T a, T b) {
    T d = wrap_sub(a, b);
    return wrap_mul(d, d);
  }
};
// Atan2(y, x): the angle of the point (x, y), in (-pi, pi], with C's signed zeros.
struct Atan2F {
  template <class T>
  static T f(T y, T x) {
    return std::atan2(y, x);
  }
};
// Zeta(x, q): the Hurwitz zeta function; Polygamma(a, x): the a-th derivative of digamma
// (kernels/special_functions.h, TensorFlow's algorithms in the argument's precision).
struct ZetaF {
  template <class T>
  static T f(T x, T q) {
    return kernels::zeta(x, q);
  }
};
struct PolygammaF {
  template <class T>
  static T f(T a, T x) {
    return kernels::polygamma(a, x);
  }
};
// ReluGrad(gradients, features): the gradient passes where the relu was active.
struct ReluGradF {
  template <class T>
  static T f(T g, T x) {
    return g * (x > T(0) ? T(1) : T(0));  // as TensorFlow: a NaN or Inf gradient stays NaN where x <= 0
  }
};
struct MaxF {
  static constexpr kernels::LaneOp kLane = kernels::LaneOp::kMaximum;  // float32 in registers (kernels::vlanes)
  template <class T>
  static T f(T a, T b) {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(a) || std::isnan(b)) return a + b;
    return a > b ? a : b;
  }
};
struct MinF {
  static constexpr kernels::LaneOp kLane = kernels::LaneOp::kMinimum;  // float32 in registers (kernels::vlanes)
  template <class T>
  static T f(T a, T b) {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(a) || std::isnan(b)) return a + b;
    return a < b ? a : b;
  }
};
struct FloorDivF {
  static constexpr bool kIntDivision = true;
  template <class T>
  static T f(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      return std::floor(a / b);
    } else {
      if constexpr (std::is_signed_v<T>)
        if (b == -1) return wrap_sub(T(0), a);  // avoids INT_MIN / -1 (unsigned: -1 would be the max)
      T q = a / b;
      if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
      return q;
    }
  }
};
struct FloorModF {
  static constexpr bool kIntDivision = true;
  template <class T>
  static T f(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      T r = std::fmod(a, b);
      if (r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    } else {
      if constexpr (std::is_signed_v<T>)
        if (b == -1) return 0;  // avoids INT_MIN % -1
      T r = a % b;
      if (r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    }
  }
};
struct PowF {
  static constexpr bool kIntPower = true;
  template <class T>
  static T f(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      return std::pow(a, b);
    } else {
      T result = 1, base = a;
      for (auto e = b; e > 0; e >>= 1) {
        if (e & 1) result = wrap_mul(result, base);
        base = wrap_mul(base, base);
      }
      return result;
    }
  }
};
struct GreaterF {
  template <class T>
  static bool f(T a, T b) {
    return a > b;
  }
};
struct GreaterEqualF {
  template <class T>
  static bool f(T a, T b) {
    return a >= b;
  }
};
struct LessF {
  template <class T>
  static bool f(T a, T b) {
    return a < b;
  }
};
struct LessEqualF {
  template <class T>
  static bool f(T a, T b) {
    return a <= b;
  }
};
struct EqualF {
  template <class T>
  static bool f(T a, T b) {
    return a == b;
  }
};
struct NotEqualF {
  template <class T>
  static bool f(T a, T b) {
    return a != b;
  }
};
struct AndF {
  template <class T>
  static bool f(T a, T b) {
    return a && b;
  }
};
struct OrF {
  template <class T>
  static bool f(T a, T b) {
    return a || b;
  }
};

// Bitwise ops; a shift count is clamped to [0, bits - 1], as TensorFlow's CPU kernels do (C++
// leaves larger or negative counts undefined), and a left shift drops the bits shifted out.
struct BitAndF {
  template <class T>
  static T f(T a, T b) {
    return static_cast<T>(a & b);
  }
};
struct BitOrF {
  template <class T>
  static T f(T a, T b) {
    return static_cast<T>(a | b);
  }
};
struct BitXorF {
  template <class T>
  static T f(T a, T b) {
    return static_cast<T>(a ^ b);
  }
};
template <class T>
T shift_count(T y) {
  constexpr T kMax = static_cast<T>(sizeof(T) * 8 - 1);
  if constexpr (std::is_signed_v<T>)
    if (y < 0) return 0;
  return y > kMax ? kMax : y;
}
struct LeftShiftF {
  template <class T>
  static T f(T a, T b) {
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) << shift_count(b));
  }
};
struct RightShiftF {
  template <class T>
  static T f(T a, T b) {
    return static_cast<T>(a >> shift_count(b));
  }
};

template <class F>
constexpr bool is_int_division() {
  if constexpr (requires { F::kIntDivision; })
    return true;
  else
    return false;
}
template <class F>
constexpr bool is_int_power() {
  if constexpr (requires { F::kIntPower; })
    return true;
  else
    return false;
}

// z[i] = f(x[i], y[i]) over a run; a side marked scalar is read once. Built for each
// instruction-set level (kernels/isa_dispatch.h).
template <class F, class T, class R>
KILN_ISA_BODY void binary_span_body(const T* x, bool x_scalar, const T* y, bool y_scalar, R* z, int64_t n) {
  if (!x_scalar && !y_scalar) {
    for (int64_t i = 0; i < n; ++i) z[i] = F::f(x[i], y[i]);
  } else if (y_scalar && !x_scalar) {
    const T s = y[0];
    for (int64_t i = 0; i < n; ++i) z[i] = F::f(x[i], s);
  } else if (x_scalar && !y_scalar) {
    const T s = x[0];
    for (int64_t i = 0; i < n; ++i) z[i] = F::f(s, y[i]);
  } else {
    const R v = F::f(x[0], y[0]);
    for (int64_t i = 0; i < n; ++i) z[i] = v;
  }
}
template <class F, class T, class R>
void binary_span(const T* x, bool x_scalar, const T* y, bool y_scalar, R* z, int64_t n) {
  // float32 by one divisor (x / 3): multiply-adds instead of the divider, with division's
  // results (kernels/vmath.h).
  if constexpr (std::is_same_v<F, DivF> && std::is_same_v<T, float> && std::is_same_v<R, float>)
    if (y_scalar && !x_scalar) return kernels::vdivide_by_scalar(x, y[0], z, n);
  KILN_ISA_DISPATCH((binary_span_body<F, T, R>(x, x_scalar, y, y_scalar, z, n)));
}

// One operand repeats a row over the middle dimensions of the other, full one: dims
// [outer..., 1..., inner...] against the output's [outer..., middle..., inner...], as
// squeeze-and-excitation's [N,H,W,C] * [N,1,1,C] or a bias [C] over [N,H,W,C].
struct RowBroadcast {
  int64_t outer = 1, middle = 1, inner = 1;
};
// Rows longer than this already run as long spans on the general path; rows shorter than
// kShortRow are slow there even on one thread.
constexpr int64_t kMaxRepeatedRow = 2048;
constexpr int64_t kShortRow = 128;
// About this many elements per task of the repeated-row loop (its copy stays in L1).
constexpr int64_t kRepeatedSpan = 4096;

bool row_broadcast(const Dims& small, const Dims& out, RowBroadcast& rb) {
  const size_t rank = out.size();
  if (small.size() > rank) return false;
  const size_t pad = rank - small.size();
  auto dim = [&](size_t k) { return k < pad ? int64_t{1} : small[k - pad]; };
  size_t k = rank;
  rb = RowBroadcast{};
  for (; k > 0 && dim(k - 1) == out[k - 1]; --k) rb.inner *= out[k - 1];
  for (; k > 0 && dim(k - 1) == 1; --k) rb.middle *= out[k - 1];
  for (; k > 0 && dim(k - 1) == out[k - 1]; --k) rb.outer *= out[k - 1];
  return k == 0 && rb.middle > 1 && rb.inner > 1 && rb.inner <= kMaxRepeatedRow;
}

// z = f(full, row) (or f(row, full) when the row is the first operand), the row copied to a
// span's length once per task so that each step is one long span (the general path takes
// one row at a time: 12,544 calls of 16 elements for EfficientNet's first block).
// Elementwise the same f on the same values: the results are those of the general path.
template <class F, class T, class R>
void repeated_row_loop(const T* full, const T* row, bool row_first, const RowBroadcast& rb, R* z) {
  const int64_t L = rb.inner, reps = std::max<int64_t>(1, kRepeatedSpan / L), span = L * reps;
  const int64_t block = rb.middle * L;  // one outer index's elements
  const int64_t per_outer = (rb.middle + reps - 1) / reps;
  parallel_for(rb.outer * per_outer, std::max<int64_t>(2, kParallelElements / span), [&](int64_t lo, int64_t hi) {
    T* tile = detail::scratch<T>(detail::kBroadcastScratch, static_cast<size_t>(span));
    int64_t tiled = -1;  // the outer index whose row the copy holds
    for (int64_t t = lo; t < hi; ++t) {
      const int64_t o = t / per_outer, start = (t % per_outer) * span;
      if (o != tiled) {
        repeat_row(tile, row + o * L, L * static_cast<int64_t>(sizeof(T)), span * static_cast<int64_t>(sizeof(T)));
        tiled = o;
      }
      const int64_t off = o * block + start, count = std::min(span, block - start);
      if (row_first)
        binary_span<F, T, R>(tile, false, full + off, false, z + off, count);
      else
        binary_span<F, T, R>(full + off, false, tile, false, z + off, count);
    }
  });
}

template <class F, class T, class R>
void binary_loop(const TensorImpl& a, const TensorImpl& b, TensorImpl& out) {
  const T* x = a.as<T>();
  const T* y = b.as<T>();
  R* z = out.as<R>();
  const int64_t n = out.num_elements;
  if (n == 1) {  // scalars (both inputs then have one element): skip the vector loop's set-up
    *z = F::f(*x, *y);
    return;
  }
  const bool xs = a.num_elements == 1, ys = b.num_elements == 1;
  if ((xs || a.num_elements == n) && (ys || b.num_elements == n)) {
    parallel_for(n, kParallelElements, [&](int64_t lo, int64_t hi) {
      binary_span<F, T, R>(xs ? x : x + lo, xs, ys ? y : y + lo, ys, z + lo, hi - lo);
    });
  } else {
    if constexpr (std::is_trivially_copyable_v<T>) {
      // Worth it for short rows (one call per row costs more than the row's work) or when
      // the work can be split over threads (the general path below runs on one). Long rows
      // on one thread ran 20% slower through the copy (144 channels: 151 against 124 us).
      const bool splits = n >= kParallelElements && intra_op_threads() > 1;
      RowBroadcast rb;
      if (a.num_elements == n && row_broadcast(b.dims, out.dims, rb) && (rb.inner < kShortRow || splits))
        return repeated_row_loop<F, T, R>(x, y, false, rb, z);
      if (b.num_elements == n && row_broadcast(a.dims, out.dims, rb) && (rb.inner < kShortRow || splits))
        return repeated_row_loop<F, T, R>(y, x, true, rb, z);
    }
    // The innermost run's strides are 1 (walks the operand) or 0 (broadcasts it) in practice.
    kernels::BroadcastPlan<2> plan(out.dims, {&a.dims, &b.dims});
    R* zp = z;
    plan.for_each_run([&](const std::array<int64_t, 2>& off, int64_t count, const std::array<int64_t, 2>& st) {
      const T* xp = x + off[0];
      const T* yp = y + off[1];
      if (st[0] <= 1 && st[1] <= 1)
        binary_span<F, T, R>(xp, st[0] == 0, yp, st[1] == 0, zp, count);
      else
        for (int64_t i = 0; i < count; ++i) zp[i] = F::f(xp[i * st[0]], yp[i * st[1]]);
      zp += count;
    });
  }
}

template <class F, bool Compare>
struct BinaryKernel {
  template <class T>
  struct K {
    static void run(KernelContext& c) {
      const TensorImpl& a = c.in(0);
      const TensorImpl& b = c.in(1);
      if constexpr (std::is_integral_v<T> && is_int_division<F>()) {
        const T* y = b.as<T>();
        for (int64_t i = 0; i < b.num_elements; ++i)
          if (y[i] == 0) c.fail("Integer division by zero");
      }
      if constexpr (std::is_integral_v<T> && is_int_power<F>()) {
        const T* y = b.as<T>();
        for (int64_t i = 0; i < b.num_elements; ++i)
          if (y[i] < 0) c.fail("Integers to negative integer powers are not allowed");
      }
      if constexpr (Compare)
        binary_loop<F, T, bool>(a, b, c.out(0));
      else
        binary_loop<F, T, T>(a, b, c.out(0));
    }
  };
};

// The op over a run of elements, for fused kernels (same functor as the op's kernel).
template <class F, class T>
void binary_run(const void* a, bool sa, const void* b, bool sb, void* out, int64_t n) {
  binary_span<F, T, T>(static_cast<const T*>(a), sa, static_cast<const T*>(b), sb, static_cast<T*>(out), n);
}
// Only the dtypes the op supports are instantiated.
template <class F, class... Ts>
void binary_chunk(DType d, const void* a, bool sa, const void* b, bool sb, void* out, int64_t n) {
  ((d == TypeOf<Ts>::value ? binary_run<F, Ts>(a, sa, b, sb, out, n) : void()), ...);
}

constexpr uint32_t kEw = kElementwise;
constexpr uint32_t kEwC = kElementwise | kCommutative;

// ---- gradients (TensorFlow's math_grad): each operand's share, summed back over the axes
// it was broadcast along. Only the wanted ones are built.
template <class FX, class FY>
void binary_grad(GradContext& c, FX fx, FY fy) {
  if (c.needs[0]) c.dx[0] = grad::sum_to(c.b, fx(), c.x[0]);
  if (c.needs[1]) c.dx[1] = grad::sum_to(c.b, fy(), c.x[1]);
}
using namespace grad;  // NOLINT: the shorthands read as math
void add_grad(GradContext& c) {
  binary_grad(
      c, [&] { return c.dy[0]; }, [&] { return c.dy[0]; });
}
void sub_grad(GradContext& c) {
  binary_grad(
      c, [&] { return c.dy[0]; }, [&] { return neg(c.b, c.dy[0]); });
}
void mul_grad(GradContext& c) {
  binary_grad(
      c, [&] { return mul(c.b, c.dy[0], c.x[1]); }, [&] { return mul(c.b, c.x[0], c.dy[0]); });
}
void div_grad(GradContext& c) {
  binary_grad(
      c, [&] { return div(c.b, c.dy[0], c.x[1]); },
      [&] { return neg(c.b, mul(c.b, c.dy[0], div(c.b, div(c.b, c.x[0], c.x[1]), c.x[1]))); });
}
void floormod_grad(GradContext& c) {
  binary_grad(
      c, [&] { return c.dy[0]; },
      [&] {
        return mul(c.b, c.dy[0], neg(c.b, emit1(c.b, op::FloorDiv(), {&c.x[0], &c.x[1]})));
      });
}
void pow_grad(GradContext& c) {
  const Tensor& x = c.x[0];
  const Tensor& y = c.x[1];
  binary_grad(
      c,
      [&] {
        const Tensor ym1 = sub(c.b, y, scalar(c.b, y, 1));
        return mul(c.b, mul(c.b, c.dy[0], y), emit1(c.b, op::Pow(), {&x, &ym1}));
      },
      [&] {  // log(x) where x > 0, else 0 (TensorFlow's choice at x <= 0)
        const Tensor zero = scalar(c.b, x, 0);
        const Tensor log_x = where(c.b, greater(c.b, x, zero), log(c.b, x), zeros_like(c.b, x));
        return mul(c.b, mul(c.b, c.dy[0], c.y[0]), log_x);
      });
}
// d/dy atan2(y, x) = x / (x^2 + y^2), d/dx = -y / (x^2 + y^2).
void atan2_grad(GradContext& c) {
  const Tensor& y = c.x[0];
  const Tensor& x = c.x[1];
  const Tensor scale = div(c.b, c.dy[0], add(c.b, mul(c.b, x, x), mul(c.b, y, y)));
  binary_grad(
      c, [&] { return mul(c.b, scale, x); }, [&] { return neg(c.b, mul(c.b, scale, y)); });
}
// d zeta(x, q) / dq = -x zeta(x + 1, q); TensorFlow has no gradient for x either.
void zeta_grad(GradContext& c) {
  if (!c.needs[1]) return;
  const Tensor& x = c.x[0];
  const Tensor x1 = add(c.b, x, scalar(c.b, x, 1));
  const Tensor z = emit1(c.b, op::Zeta(), {&x1, &c.x[1]});
  c.dx[1] = sum_to(c.b, mul(c.b, c.dy[0], neg(c.b, mul(c.b, x, z))), c.x[1]);
}
// d polygamma(a, x) / dx = polygamma(a + 1, x); none for the order a (TensorFlow's).
void polygamma_grad(GradContext& c) {
  if (!c.needs[1]) return;
  const Tensor& a = c.x[0];
  const Tensor a1 = add(c.b, a, scalar(c.b, a, 1));
  c.dx[1] = sum_to(c.b, mul(c.b, c.dy[0], emit1(c.b, op::Polygamma(), {&a1, &c.x[1]})), c.x[1]);
}
template <bool kMax>
void extremum_grad(GradContext& c) {
  const Tensor mask = kMax ? greater_equal(c.b, c.x[0], c.x[1]) : less_equal(c.b, c.x[0], c.x[1]);
  const Tensor zero = scalar(c.b, c.dy[0], 0);
  binary_grad(
      c, [&] { return where(c.b, mask, c.dy[0], zero); }, [&] { return where(c.b, mask, zero, c.dy[0]); });
}
void sqdiff_grad(GradContext& c) {
  const Tensor d = mul(c.b, mul(c.b, scalar(c.b, c.dy[0], 2), sub(c.b, c.x[0], c.x[1])), c.dy[0]);
  binary_grad(
      c, [&] { return d; }, [&] { return neg(c.b, d); });
}
// ReluGrad is linear in its gradients input; its features only pick where it passes.
void relu_grad_grad(GradContext& c) {
  if (c.needs[0]) c.dx[0] = emit1(c.b, op::ReluGrad(), {&c.dy[0], &c.x[1]});
}
void select_grad(GradContext& c) {
  const Tensor zero = scalar(c.b, c.dy[0], 0);
  if (c.needs[1]) c.dx[1] = sum_to(c.b, where(c.b, c.x[0], c.dy[0], zero), c.x[1]);
  if (c.needs[2]) c.dx[2] = sum_to(c.b, where(c.b, c.x[0], zero, c.dy[0]), c.x[2]);
}

// Division-like ops (integer division by zero raises) are not fused: their kernels check.
#define KILN_BINARY_OP(Name, Functor, Traits, Types, Grad, Out) \
  KILN_BINARY_OP_INFER(Name, Functor, Traits, Grad, Out, "x", "y", infer_binary, Types)
// The same with its own input names and shape function; the dtypes (a list) come last.
#define KILN_BINARY_OP_INFER(Name, Functor, Traits, Grad, Out, In0, In1, Infer, ...)                  \
  const OpDef& op::Name() {                                                                           \
    static const OpDef def = {.name = #Name,                                                          \
                              .num_inputs = 2,                                                        \
                              .num_outputs = 1,                                                       \
                              .input_args = {In0, In1},                                               \
                              .traits = Traits,                                                       \
                              .infer = Infer,                                                         \
                              .kernels = kernels_for<BinaryKernel<Functor, false>::K, __VA_ARGS__>(), \
                              .chunk = is_int_division<Functor>() || is_int_power<Functor>()          \
                                           ? nullptr                                                  \
                                           : &binary_chunk<Functor, __VA_ARGS__>,                     \
                              .lane = kernels::lane_of<Functor>(),                                    \
                              .grad = Grad,                                                           \
                              .output_args = {Out}};                                                  \
    return def;                                                                                       \
  }
#define KILN_COMPARE_OP(Name, Functor, Traits, ...)                                                  \
  const OpDef& op::Name() {                                                                          \
    static const OpDef def = {.name = #Name,                                                         \
                              .num_inputs = 2,                                                       \
                              .num_outputs = 1,                                                      \
                              .input_args = {"x", "y"},                                              \
                              .traits = Traits,                                                      \
                              .infer = infer_compare,                                                \
                              .kernels = kernels_for<BinaryKernel<Functor, true>::K, __VA_ARGS__>(), \
                              .grad = &no_gradient,                                                  \
                              .output_args = {"z"}};                                                 \
    return def;                                                                                      \
  }

}  // namespace

// TensorFlow registers these for the 8-, 16- and unsigned integer dtypes too (Keras's int8
// quantization subtracts zero points and scales in them).
KILN_BINARY_OP_INFER(AddV2, AddF, kEwC | kTfjs, &add_grad, "z", "x", "y", infer_binary, KILN_NUMERIC,
                     KILN_COMPLEX_TYPES, KILN_STORAGE_INTS, detail::StringElement)
KILN_BINARY_OP_INFER(Sub, SubF, kEw | kTfjs, &sub_grad, "z", "x", "y", infer_binary, KILN_NUMERIC_COMPLEX,
                     KILN_STORAGE_INTS)
KILN_BINARY_OP_INFER(Mul, MulF, kEwC | kTfjs, &mul_grad, "z", "x", "y", infer_binary, KILN_NUMERIC_COMPLEX,
                     KILN_STORAGE_INTS)
KILN_BINARY_OP(RealDiv, DivF, kEw | kTfjs, KILN_FLOATS_COMPLEX, &div_grad, "z")
KILN_BINARY_OP_INFER(FloorDiv, FloorDivF, kEw | kTfjs, &no_gradient, "z", "x", "y", infer_binary, KILN_NUMERIC,
                     KILN_STORAGE_INTS)
KILN_BINARY_OP(FloorMod, FloorModF, kEw | kTfjs, KILN_NUMERIC, &floormod_grad, "z")
KILN_BINARY_OP(Pow, PowF, kEw | kTfjs, KILN_NUMERIC, &pow_grad, "z")
KILN_BINARY_OP_INFER(Maximum, MaxF, kEwC | kTfjs, &extremum_grad<true>, "z", "x", "y", infer_binary, KILN_NUMERIC,
                     KILN_STORAGE_INTS)
KILN_BINARY_OP_INFER(Minimum, MinF, kEwC | kTfjs, &extremum_grad<false>, "z", "x", "y", infer_binary, KILN_NUMERIC,
                     KILN_STORAGE_INTS)
KILN_BINARY_OP(SquaredDifference, SqDiffF, kEwC | kTfjs, KILN_NUMERIC, &sqdiff_grad, "z")
#define KILN_BITWISE_TYPES int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
KILN_BINARY_OP(BitwiseAnd, BitAndF, kEwC, KILN_BITWISE_TYPES, &no_gradient, "z")
KILN_BINARY_OP(BitwiseOr, BitOrF, kEwC, KILN_BITWISE_TYPES, &no_gradient, "z")
KILN_BINARY_OP(BitwiseXor, BitXorF, kEwC, KILN_BITWISE_TYPES, &no_gradient, "z")
KILN_BINARY_OP(LeftShift, LeftShiftF, kEw, KILN_BITWISE_TYPES, &no_gradient, "z")
KILN_BINARY_OP(RightShift, RightShiftF, kEw, KILN_BITWISE_TYPES, &no_gradient, "z")
KILN_BINARY_OP_INFER(Atan2, Atan2F, kEw | kTfjs, &atan2_grad, "z", "y", "x", infer_binary, KILN_FLOATS)
KILN_BINARY_OP_INFER(Zeta, ZetaF, kEw, &zeta_grad, "z", "x", "q", infer_binary, KILN_FLOATS)
KILN_BINARY_OP_INFER(Polygamma, PolygammaF, kEw, &polygamma_grad, "z", "a", "x", infer_binary, KILN_FLOATS)
// ReluGrad does not broadcast: TensorFlow requires gradients and features of one shape.
void infer_relu_grad(InferContext& c) {
  bool differ = false;
  if (!c.in(0).unknown_rank && !c.in(1).unknown_rank) {
    const Dims& a = *c.in(0).dims;
    const Dims& b = *c.in(1).dims;
    differ = a.size() != b.size();
    for (size_t i = 0; !differ && i < a.size(); ++i) differ = a[i] >= 0 && b[i] >= 0 && a[i] != b[i];
  }
  if (differ)
    c.fail("Inputs to operation ReluGrad of type ReluGrad must have the same size and shape.  Input 0: " +
           dims_text(*c.in(0).dims) + " != input 1: " + dims_text(*c.in(1).dims));
  infer_binary(c);
}
KILN_BINARY_OP_INFER(ReluGrad, ReluGradF, kEw, &relu_grad_grad, "backprops", "gradients", "features", infer_relu_grad,
                     KILN_NUMERIC)
// TensorFlow registers the comparisons for the 8-, 16- and unsigned integer dtypes too.
KILN_COMPARE_OP(Greater, GreaterF, kEw | kTfjs, KILN_NUMERIC, KILN_STORAGE_INTS)
KILN_COMPARE_OP(GreaterEqual, GreaterEqualF, kEw | kTfjs, KILN_NUMERIC, KILN_STORAGE_INTS)
KILN_COMPARE_OP(Less, LessF, kEw | kTfjs, KILN_NUMERIC, KILN_STORAGE_INTS)
KILN_COMPARE_OP(LessEqual, LessEqualF, kEw | kTfjs, KILN_NUMERIC, KILN_STORAGE_INTS)
KILN_COMPARE_OP(Equal, EqualF, kEwC | kTfjs, KILN_ALL_TYPES, KILN_COMPLEX_TYPES, KILN_STORAGE_INTS,
                detail::StringElement)
KILN_COMPARE_OP(NotEqual, NotEqualF, kEwC | kTfjs, KILN_ALL_TYPES, KILN_COMPLEX_TYPES, KILN_STORAGE_INTS,
                detail::StringElement)
KILN_COMPARE_OP(LogicalAnd, AndF, kEwC | kTfjs, bool)
KILN_COMPARE_OP(LogicalOr, OrF, kEwC | kTfjs, bool)

// SelectV2(condition, t, e): all three broadcast together.
namespace {
template <class T>
struct SelectKernel {
  static void run(KernelContext& c) {
    const TensorImpl& cond = c.in(0);
    const TensorImpl& a = c.in(1);
    const TensorImpl& b = c.in(2);
    TensorImpl& out = c.out(0);
    const bool* p = cond.as<bool>();
    const T* x = a.as<T>();
    const T* y = b.as<T>();
    T* z = out.as<T>();
    const int64_t n = out.num_elements;
    if (cond.num_elements == n && a.num_elements == n && b.num_elements == n) {
      for (int64_t i = 0; i < n; ++i) z[i] = p[i] ? x[i] : y[i];
      return;
    }
    kernels::BroadcastPlan<3> plan(out.dims, {&cond.dims, &a.dims, &b.dims});
    plan.for_each_run([&](const std::array<int64_t, 3>& off, int64_t count, const std::array<int64_t, 3>& st) {
      for (int64_t i = 0; i < count; ++i) z[i] = p[off[0] + i * st[0]] ? x[off[1] + i * st[1]] : y[off[2] + i * st[2]];
      z += count;
    });
  }
};

void infer_select(InferContext& c) {
  if (c.in(0).dtype != DType::Bool)
    c.fail(std::string("condition must be a bool tensor, got ") + tf_type_name(c.in(0).dtype));
  require_same_dtypes(c, 1, 2);
  const TensorShape ab = broadcast_shapes(c, c.in(1), c.in(2));
  const InputInfo abi{c.in(1).dtype, &ab.dims(), ab.unknown_rank(), nullptr};
  c.out(0).shape = broadcast_shapes(c, c.in(0), abi);
  c.out(0).dtype = c.in(1).dtype;
  c.kernel_dtype = c.in(1).dtype;
}
}  // namespace

const OpDef& op::SelectV2() {
  static const OpDef def = {.name = "SelectV2",
                            .num_inputs = 3,
                            .num_outputs = 1,
                            .input_args = {"condition", "t", "e"},
                            .traits = kElementwise | kTfjs | kMovesElements,
                            .infer = infer_select,
                            .kernels = kernels_for<SelectKernel, KILN_EVERY_TYPE>(),
                            .type_attr_input = 1,
                            .grad = &select_grad};
  return def;
}

}  // namespace kiln::ops
