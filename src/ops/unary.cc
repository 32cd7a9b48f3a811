// Unary elementwise ops, Cast, Identity, ZerosLike, OnesLike. One row per op.
#include <cmath>
#include <limits>
#include <type_traits>

#include "core/object_value.h"
#include "core/parallel.h"
#include "kernels/complex_math.h"
#include "kernels/vmath.h"
#include "ops/grad_util.h"
#include "ops/helpers.h"
#include "ops/op_list.h"
#include "ops/unary_kernel.h"

namespace kiln::ops {
namespace {

const int kDstT = attr_index(op::Cast(), "DstT");
const int kTruncate = attr_index(op::Cast(), "Truncate");

template <class T>
T wrap_neg(T a) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<T>(std::make_unsigned_t<T>(0) - static_cast<std::make_unsigned_t<T>>(a));
  else
    return -a;
}

struct InvertF {
  template <class T>
  static T f(T x) {
    return static_cast<T>(~x);
  }
};
#define KILN_BITWISE_TYPES int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
struct NegF {
  static constexpr kernels::LaneOp kLane = kernels::LaneOp::kNeg;  // float32 in registers (kernels::vlanes)
  template <class T>
  static T f(T x) {
    return wrap_neg(x);
  }
};
struct AbsF {
  template <class T>
  static T f(T x) {
    if constexpr (std::is_integral_v<T>)
      return x < 0 ? wrap_neg(x) : x;
    else
      return std::fabs(x);
  }
};
struct SignF {
  template <class T>
  static T f(T x) {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(x)) return x;
    return static_cast<T>((x > 0) - (x < 0));
  }
};
struct SquareF {
  static constexpr kernels::LaneOp kLane = kernels::LaneOp::kSquare;  // float32 in registers (kernels::vlanes)
  template <class T>
  static T f(T x) {
    if constexpr (std::is_integral_v<T>) {
      // In an unsigned type at least int's width: 16-bit operands would be promoted to int,
      // whose product can overflow (65535 * 65535).
      using W = std::common_type_t<std::make_unsigned_t<T>, unsigned>;
      return static_cast<T>(static_cast<W>(x) * static_cast<W>(x));
    } else if constexpr (detail::is_complex_v<T>)
      return kernels::complex_mul(x, x);
    else
      return x * x;
  }
};
struct ReluF {
  static constexpr kernels::LaneOp kLane = kernels::LaneOp::kRelu;  // float32 in registers (kernels::vlanes)
  template <class T>
  static T f(T x) {
    return x < 0 ? T(0) : x;  // as TensorFlow: NaN stays NaN, -0 stays -0
  }
};
struct Relu6F {
  static constexpr kernels::LaneOp kLane = kernels::LaneOp::kRelu6;  // float32 in registers (kernels::vlanes)
  template <class T>
  static T f(T x) {
    return x < T(0) ? T(0) : (x > T(6) ? T(6) : x);  // NaN stays NaN, -0 stays -0, as Relu
  }
};
struct FloorF {
  template <class T>
  static T f(T x) {
    return std::floor(x);
  }
};
struct CeilF {
  template <class T>
  static T f(T x) {
    return std::ceil(x);
  }
};
struct RoundF {
  template <class T>
  static T f(T x) {
    return std::nearbyint(x);
  }
};  // half to even
struct NotF {
  template <class T>
  static T f(T x) {
    return !x;
  }
};
struct IdentityF {
  template <class T>
  static T f(T x) {
    return x;
  }
};
struct ZerosF {
  template <class T>
  static T f(T) {
    return T(0);
  }
};
struct OnesF {
  template <class T>
  static T f(T) {
    return T(1);
  }
};
// Vectorized ones call the Eigen-backed routines.
struct ExpF {
  static constexpr kernels::LaneOp kLane = kernels::LaneOp::kExp;  // float32 in registers (kernels::vlanes)
  template <class T>
  static void vec(const T* x, T* y, int64_t n) {
    kernels::vexp(x, y, n);
  }
};
struct LogF {
  template <class T>
  static void vec(const T* x, T* y, int64_t n) {
    kernels::vlog(x, y, n);
  }
};
struct TanhF {
  static constexpr kernels::LaneOp kLane = kernels::LaneOp::kTanh;  // float32 in registers (kernels::vlanes)
  template <class T>
  static void vec(const T* x, T* y, int64_t n) {
    kernels::vtanh(x, y, n);
  }
};
struct SigmoidF {
  static constexpr kernels::LaneOp kLane = kernels::LaneOp::kSigmoid;  // float32 in registers (kernels::vlanes)
  template <class T>
  static void vec(const T* x, T* y, int64_t n) {
    kernels::vsigmoid(x, y, n);
  }
};
struct SqrtF {
  template <class T>
  static void vec(const T* x, T* y, int64_t n) {
    kernels::vsqrt(x, y, n);
  }
};
struct RsqrtF {
  template <class T>
  static void vec(const T* x, T* y, int64_t n) {
    kernels::vrsqrt(x, y, n);
  }
};

// Cast: attr DstT. Float to int truncates toward zero; NaN gives 0 and out-of-range values
// saturate (C++ leaves them undefined; TensorFlow's CPU result is platform-specific).
template <class To, class From>
To cast_one(From v) {
  if constexpr (detail::is_complex_v<From> && detail::is_complex_v<To>)
    return To(static_cast<typename To::value_type>(v.real()), static_cast<typename To::value_type>(v.imag()));
  else if constexpr (detail::is_complex_v<From> && std::is_same_v<To, bool>)
    return v != From(0);
  else if constexpr (detail::is_complex_v<From>)  // to a real type: the real part, as Eigen casts
    return cast_one<To>(v.real());
  else if constexpr (detail::is_complex_v<To>)  // from a real type: imaginary part 0
    return To(static_cast<typename To::value_type>(cast_one<float>(v)), 0);
  else if constexpr (is_reduced_float_v<From>)  // through float32, as TensorFlow (Eigen) converts them
    return cast_one<To>(static_cast<float>(v));
  else if constexpr (is_reduced_float_v<To>)
    return To(v);
  else if constexpr (std::is_same_v<To, bool>)
    return v != From(0);
  else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    if (std::isnan(v)) return 0;
    if (v <= static_cast<From>(std::numeric_limits<To>::min())) return std::numeric_limits<To>::min();
    if (v >= static_cast<From>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    return static_cast<To>(v);
  } else
    return static_cast<To>(v);
}
// Cast's Truncate=true: the mantissa's extra bits are dropped (toward zero) instead of rounded
// to nearest, as TensorFlow does for a narrowing float cast (an overflow is still infinite).
// (A template: the call sits in a branch discarded for other source types, which clang still
// checks inside the dtype visitor's generic lambda.)
template <class From>
float truncate_to_float(From x) {
  const auto v = detail::as_double(x);
  const float r = static_cast<float>(v);
  if (std::isfinite(r) && std::fabs(static_cast<double>(r)) > std::fabs(v)) return std::nextafter(r, 0.0f);
  return r;
}
// The narrowing casts Truncate applies to: float64 to float32 and to complex64, complex128 to
// complex64 (each part).
template <class From, class To>
constexpr bool truncates() {
  return std::is_same_v<From, double> && (std::is_same_v<To, float> || std::is_same_v<To, complex64>)
             ? true
             : std::is_same_v<From, complex128> && std::is_same_v<To, complex64>;
}
// (Templates, with every case behind `if constexpr` on their own parameters: clang checks the
// call in the kernel's discarded branches for every source type too.)
template <class To, class From>
To truncate_cast(From x) {
  if constexpr (detail::is_complex_v<From> && detail::is_complex_v<To>)
    return To(truncate_to_float(x.real()), truncate_to_float(x.imag()));
  else if constexpr (detail::is_complex_v<To>)
    return To(truncate_to_float(x), 0.0f);
  else if constexpr (std::is_same_v<To, float>)
    return truncate_to_float(x);
  else
    return cast_one<To>(x);
}
template <class From>
struct CastKernel {
  static void run(KernelContext& c) {
    const From* x = c.in(0).as<From>();
    const int64_t n = c.out(0).num_elements;
    visit_dtype(c.attrs.type(kDstT), [&](auto to) {
      using To = decltype(to);
      To* y = c.out(0).as<To>();
      if constexpr (truncates<From, To>()) {
        if (c.attrs.b(kTruncate)) {
          for (int64_t i = 0; i < n; ++i) y[i] = truncate_cast<To>(x[i]);
          return;
        }
      }
      for (int64_t i = 0; i < n; ++i) y[i] = cast_one<To>(x[i]);
    });
  }
};
void infer_cast(InferContext& c) {
  const DType src = c.in(0).dtype, dst = c.attrs.type(kDstT);
  if ((src == DType::String) != (dst == DType::String))  // TensorFlow: tf.strings.to_number / as_string
    throw UnimplementedError(std::string("Cast ") + dtype_name(src).data() + " to " + dtype_name(dst).data() +
                             " is not supported [Op:Cast]");
  infer_unary(c);
  c.out(0).dtype = dst;
}

constexpr uint32_t kEw = kElementwise;

// ---- gradients (TensorFlow's math_grad), in terms of the op's input x and output y ----
using namespace grad;  // NOLINT: the shorthands read as math
void neg_grad(GradContext& c) { c.dx[0] = neg(c.b, c.dy[0]); }
void abs_grad(GradContext& c) { c.dx[0] = mul(c.b, c.dy[0], sign(c.b, c.x[0])); }
void square_grad(GradContext& c) { c.dx[0] = mul(c.b, c.dy[0], mul(c.b, scalar(c.b, c.x[0], 2), c.x[0])); }
void relu_grad(GradContext& c) { c.dx[0] = emit1(c.b, op::ReluGrad(), {&c.dy[0], &c.y[0]}); }
// The gradient passes where 0 < x < 6 (TensorFlow's Relu6Grad).
void relu6_grad(GradContext& c) {
  const Tensor above_zero = greater(c.b, c.x[0], scalar(c.b, c.x[0], 0));
  const Tensor below_six = greater(c.b, scalar(c.b, c.x[0], 6), c.x[0]);
  const Tensor inside = emit1(c.b, op::LogicalAnd(), {&above_zero, &below_six});
  c.dx[0] = where(c.b, inside, c.dy[0], scalar(c.b, c.dy[0], 0));
}
void exp_grad(GradContext& c) { c.dx[0] = mul(c.b, c.dy[0], c.y[0]); }
void log_grad(GradContext& c) { c.dx[0] = div(c.b, c.dy[0], c.x[0]); }
void tanh_grad(GradContext& c) {
  c.dx[0] = mul(c.b, c.dy[0], sub(c.b, scalar(c.b, c.y[0], 1), mul(c.b, c.y[0], c.y[0])));
}
void sigmoid_grad(GradContext& c) {
  c.dx[0] = mul(c.b, mul(c.b, c.dy[0], c.y[0]), sub(c.b, scalar(c.b, c.y[0], 1), c.y[0]));
}
void sqrt_grad(GradContext& c) { c.dx[0] = div(c.b, mul(c.b, c.dy[0], scalar(c.b, c.y[0], 0.5)), c.y[0]); }
void rsqrt_grad(GradContext& c) {
  const Tensor& y = c.y[0];
  c.dx[0] = mul(c.b, mul(c.b, c.dy[0], scalar(c.b, y, -0.5)), mul(c.b, y, mul(c.b, y, y)));
}
void identity_grad(GradContext& c) { c.dx[0] = c.dy[0]; }
// Between floating dtypes the gradient is cast back; integer ends carry none.
void cast_grad(GradContext& c) {
  if (is_floating(c.x[0].dtype()) && is_floating(c.y[0].dtype())) c.dx[0] = cast(c.b, c.dy[0], c.x[0].dtype());
}

#define KILN_UNARY_OP(Name, Functor, Types, Grad, In, Out)                              \
  const OpDef& op::Name() {                                                             \
    static const OpDef def = {.name = #Name,                                            \
                              .num_inputs = 1,                                          \
                              .num_outputs = 1,                                         \
                              .input_args = {In},                                       \
                              .traits = kEw | kTfjs,                                    \
                              .infer = infer_unary,                                     \
                              .kernels = kernels_for<UnaryKernel<Functor>::K, Types>(), \
                              .chunk = &unary_chunk<Functor, Types>,                    \
                              .lane = kernels::lane_of<Functor>(),                      \
                              .grad = Grad,                                             \
                              .output_args = {Out}};                                    \
    return def;                                                                         \
  }
}  // namespace

// TensorFlow registers Neg, Abs and Sign for int8 and int16 too, and Square for every integer.
#define KILN_NUMERIC_SMALL_SIGNED KILN_NUMERIC, int8_t, int16_t
#define KILN_NUMERIC_COMPLEX_INTS KILN_NUMERIC_COMPLEX, KILN_STORAGE_INTS
#define KILN_NUMERIC_COMPLEX_SMALL_SIGNED KILN_NUMERIC_COMPLEX, int8_t, int16_t
KILN_UNARY_OP(Neg, NegF, KILN_NUMERIC_COMPLEX_SMALL_SIGNED, &neg_grad, "x", "y")
const OpDef& op::Invert() {
  static const OpDef def = {.name = "Invert",
                            .num_inputs = 1,
                            .num_outputs = 1,
                            .input_args = {"x"},
                            .traits = kEw,
                            .infer = infer_unary,
                            .kernels = kernels_for<UnaryKernel<InvertF>::K, KILN_BITWISE_TYPES>(),
                            .chunk = &unary_chunk<InvertF, KILN_BITWISE_TYPES>,
                            .grad = &no_gradient};
  return def;
}
KILN_UNARY_OP(Abs, AbsF, KILN_NUMERIC_SMALL_SIGNED, &abs_grad, "x", "y")
KILN_UNARY_OP(Sign, SignF, KILN_NUMERIC_SMALL_SIGNED, &no_gradient, "x", "y")
KILN_UNARY_OP(Square, SquareF, KILN_NUMERIC_COMPLEX_INTS, &square_grad, "x", "y")
KILN_UNARY_OP(Relu, ReluF, KILN_NUMERIC, &relu_grad, "features", "activations")
KILN_UNARY_OP(Relu6, Relu6F, KILN_NUMERIC, &relu6_grad, "features", "activations")
KILN_UNARY_OP(Floor, FloorF, KILN_FLOATS, &no_gradient, "x", "y")
KILN_UNARY_OP(Ceil, CeilF, KILN_FLOATS, &no_gradient, "x", "y")
KILN_UNARY_OP(Round, RoundF, KILN_FLOATS, &no_gradient, "x", "y")
KILN_UNARY_OP(Exp, ExpF, KILN_FLOATS, &exp_grad, "x", "y")
KILN_UNARY_OP(Log, LogF, KILN_FLOATS, &log_grad, "x", "y")
KILN_UNARY_OP(Tanh, TanhF, KILN_FLOATS, &tanh_grad, "x", "y")
KILN_UNARY_OP(Sigmoid, SigmoidF, KILN_FLOATS, &sigmoid_grad, "x", "y")
KILN_UNARY_OP(Sqrt, SqrtF, KILN_FLOATS, &sqrt_grad, "x", "y")
KILN_UNARY_OP(Rsqrt, RsqrtF, KILN_FLOATS, &rsqrt_grad, "x", "y")
KILN_UNARY_OP(LogicalNot, NotF, bool, &no_gradient, "x", "y")
namespace {
// Identity of a string or variant: the output holds the same objects, one more reference
// each. (A forwarded output is the input itself and gains nothing.)
void identity_objects(KernelContext& c) {
  if (&c.in(0) == &c.out(0)) return;
  const auto* in = c.in(0).as<detail::ObjectValue*>();
  auto* out = c.out(0).as<detail::ObjectValue*>();
  for (int64_t i = 0; i < c.in(0).num_elements; ++i) {
    detail::object_retain(in[i]);
    out[i] = in[i];
  }
}
std::array<KernelFn, kNumDTypes> identity_kernels() {
  auto k = kernels_for<UnaryKernel<IdentityF>::K, KILN_EVERY_TYPE>();
  k[static_cast<int>(DType::Variant)] = &identity_objects;
  k[static_cast<int>(DType::String)] = &identity_objects;
  return k;
}
}  // namespace

const OpDef& op::Identity() {
  static const OpDef def = {.name = "Identity",
                            .num_inputs = 1,
                            .num_outputs = 1,
                            .input_args = {"input"},
                            .traits = kEw | kForwardsInput | kTfjs,
                            .infer = infer_unary,
                            .kernels = identity_kernels(),
                            .grad = &identity_grad};
  return def;
}
KILN_UNARY_OP(ZerosLike, ZerosF, KILN_EVERY_TYPE, &no_gradient, "x", "y")
KILN_UNARY_OP(OnesLike, OnesF, KILN_EVERY_TYPE, &no_gradient, "x", "y")

const OpDef& op::Cast() {
  static const OpDef def = {.name = "Cast",
                            .num_inputs = 1,
                            .num_outputs = 1,
                            .input_args = {"x"},
                            .traits = kEw | kTfjs,
                            .attr_specs = {type_attr("DstT"), bool_attr("Truncate", false)},
                            .infer = infer_cast,
                            .kernels = kernels_for<CastKernel, KILN_EVERY_TYPE>(),
                            .type_attr = "SrcT",
                            .grad = &cast_grad,
                            .output_args = {"y"}};
  return def;
}

}  // namespace kiln::ops
