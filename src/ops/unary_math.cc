// The rest of TensorFlow's elementwise math on one tensor: trigonometric and hyperbolic
// functions, log1p/expm1, the error and gamma functions, activations (Softplus, Softsign, Elu,
// Selu, LeakyRelu) and the float classifiers (IsNan, IsInf, IsFinite). One row per op.
#include <cmath>
#include <limits>
#include <numbers>
#include <type_traits>

#include "kernels/special_functions.h"
#include "kernels/vmath.h"
#include "ops/grad_util.h"
#include "ops/helpers.h"
#include "ops/op_list.h"
#include "ops/unary_kernel.h"

namespace kiln::ops {
namespace {

#define KILN_STD_FUNCTOR(Functor, expr) \
  struct Functor {                      \
    template <class T>                  \
    static T f(T x) {                   \
      return expr;                      \
    }                                   \
  };
KILN_STD_FUNCTOR(SinF, std::sin(x))
KILN_STD_FUNCTOR(CosF, std::cos(x))
KILN_STD_FUNCTOR(TanF, std::tan(x))
KILN_STD_FUNCTOR(AsinF, std::asin(x))
KILN_STD_FUNCTOR(AcosF, std::acos(x))
KILN_STD_FUNCTOR(AtanF, std::atan(x))
KILN_STD_FUNCTOR(SinhF, std::sinh(x))
KILN_STD_FUNCTOR(CoshF, std::cosh(x))
KILN_STD_FUNCTOR(AsinhF, std::asinh(x))
KILN_STD_FUNCTOR(AcoshF, std::acosh(x))
KILN_STD_FUNCTOR(AtanhF, std::atanh(x))
KILN_STD_FUNCTOR(Log1pF, std::log1p(x))
KILN_STD_FUNCTOR(Expm1F, std::expm1(x))
KILN_STD_FUNCTOR(LgammaF, std::lgamma(x))
KILN_STD_FUNCTOR(RintF, std::nearbyint(x))  // half to even, as Round
KILN_STD_FUNCTOR(SoftsignF, x / (T(1) + std::fabs(x)))
KILN_STD_FUNCTOR(EluF, x < T(0) ? std::exp(x) - T(1) : x)  // exp - 1, as TensorFlow computes it
KILN_STD_FUNCTOR(ErfF, std::erf(x))
#undef KILN_STD_FUNCTOR

// Erfc: float32 runs vectorized (kernels/vmath.h: glibc's vector math, within 3 ulps of the
// scalar erfcf), other dtypes per element.
struct ErfcF {
  template <class T>
  static T f(T x) {
    return std::erfc(x);
  }
  template <class T>
  requires std::is_same_v<T, float>
  static void vec(const T* x, T* y, int64_t n) { kernels::verfc(x, y, n); }
};

// Selu's constants (Klambauer et al.), as TensorFlow's kernel spells them.
constexpr double kSeluScale = 1.0507009873554804934193349852946;
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
struct SeluF {
  template <class T>
  static T f(T x) {
    return x < T(0) ? T(kSeluScale * kSeluAlpha) * (std::exp(x) - T(1)) : T(kSeluScale) * x;
  }
};
// log(1 + e^x) without overflow: x itself above a threshold, e^x below its negative (where
// log1p(e^x) rounds to e^x), as TensorFlow's kernel splits it.
struct SoftplusF {
  template <class T>
  static T f(T x) {
    const T threshold = std::log(std::numeric_limits<T>::epsilon()) + T(2);
    if (x > -threshold) return x;
    if (x < threshold) return std::exp(x);
    return std::log1p(std::exp(x));
  }
};
// Digamma (psi): kernels/special_functions.h.
struct DigammaF {
  template <class T>
  static T f(T x) {
    return kernels::digamma(x);
  }
};
// The inverse error function: Giles' single-precision approximation, refined by Newton steps in
// double on erf (or, in the tails, on erfc against 1 - |x|, which is exact there), so float32
// and float64 both land within a few ulps. Odd: computed for |x| and signed.
struct ErfinvF {
  template <class T>
  static T f(T x) {
    const double sign = x < 0 ? -1.0 : 1.0, y = std::fabs(static_cast<double>(x));
    if (std::isnan(y) || y > 1) return std::numeric_limits<T>::quiet_NaN();
    if (y == 1) return static_cast<T>(sign * std::numeric_limits<double>::infinity());
    double w = -std::log((1.0 - y) * (1.0 + y)), p;
    if (w < 5.0) {
      w -= 2.5;
      p = 2.81022636e-08;
      for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503, -0.00417768164,
                       0.246640727, 1.50140941})
        p = c + p * w;
    } else {
      w = std::sqrt(w) - 3.0;
      p = -0.000200214257;
      for (double c : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047,
                       1.00167406, 2.83297682})
        p = c + p * w;
    }
    double r = p * y;
    const double tail = 1.0 - y;  // exact for y >= 0.5
    for (int i = 0; i < 3; ++i) {
      const double slope = 2.0 / std::sqrt(std::numbers::pi) * std::exp(-r * r);  // erf'(r)
      if (slope == 0) break;
      r -= (y <= 0.5 ? std::erf(r) - y : tail - std::erfc(r)) / slope;
    }
    return static_cast<T>(sign * r);
  }
};

// A float classifier: bool output.
template <class F>
struct ClassifyKernel {
  template <class T>
  struct K {
    static void run(KernelContext& c) {
      const T* x = c.in(0).as<T>();
      bool* y = c.out(0).as<bool>();
      const int64_t n = c.out(0).num_elements;
      parallel_for(n, kParallelSimple, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) y[i] = F::f(x[i]);
      });
    }
  };
};
struct IsNanF {
  template <class T>
  static bool f(T x) {
    return std::isnan(x);
  }
};
struct IsInfF {
  template <class T>
  static bool f(T x) {
    return std::isinf(x);
  }
};
struct IsFiniteF {
  template <class T>
  static bool f(T x) {
    return std::isfinite(x);
  }
};
void infer_classify(InferContext& c) {
  infer_unary(c);
  c.out(0).dtype = DType::Bool;
}

const int kLeakyAlpha = attr_index(op::LeakyRelu(), "alpha");
template <class T>
KILN_ISA_BODY void leaky_relu_body(const T* x, T* y, T alpha, int64_t b, int64_t e) {
  for (int64_t i = b; i < e; ++i) y[i] = x[i] > T(0) ? x[i] : x[i] * alpha;
}
template <class T>
struct LeakyReluKernel {
  static void run(KernelContext& c) {
    const T* x = c.in(0).as<T>();
    T* y = c.out(0).as<T>();
    const T alpha = static_cast<T>(c.attrs.f(kLeakyAlpha));
    parallel_for(c.out(0).num_elements, kParallelSimple,
                 [&](int64_t b, int64_t e) { KILN_ISA_DISPATCH((leaky_relu_body(x, y, alpha, b, e))); });
  }
};

// ---- gradients (TensorFlow's math_grad / nn_grad), in terms of x, y and dy ----
using namespace grad;  // NOLINT: the shorthands read as math
Tensor un(GradBuilder& b, const OpDef& op, const Tensor& x) { return emit1(b, op, {&x}); }
Tensor one_minus_square(GradBuilder& b, const Tensor& x) { return sub(b, scalar(b, x, 1), mul(b, x, x)); }

void sin_grad(GradContext& c) { c.dx[0] = mul(c.b, c.dy[0], un(c.b, op::Cos(), c.x[0])); }
void cos_grad(GradContext& c) { c.dx[0] = neg(c.b, mul(c.b, c.dy[0], un(c.b, op::Sin(), c.x[0]))); }
void tan_grad(GradContext& c) {  // 1 / cos^2 x
  const Tensor cosx = un(c.b, op::Cos(), c.x[0]);
  c.dx[0] = div(c.b, c.dy[0], mul(c.b, cosx, cosx));
}
void asin_grad(GradContext& c) { c.dx[0] = div(c.b, c.dy[0], un(c.b, op::Sqrt(), one_minus_square(c.b, c.x[0]))); }
void acos_grad(GradContext& c) {
  c.dx[0] = neg(c.b, div(c.b, c.dy[0], un(c.b, op::Sqrt(), one_minus_square(c.b, c.x[0]))));
}
void atan_grad(GradContext& c) {
  c.dx[0] = div(c.b, c.dy[0], add(c.b, scalar(c.b, c.x[0], 1), mul(c.b, c.x[0], c.x[0])));
}
void sinh_grad(GradContext& c) { c.dx[0] = mul(c.b, c.dy[0], un(c.b, op::Cosh(), c.x[0])); }
void cosh_grad(GradContext& c) { c.dx[0] = mul(c.b, c.dy[0], un(c.b, op::Sinh(), c.x[0])); }
void asinh_grad(GradContext& c) { c.dx[0] = div(c.b, c.dy[0], un(c.b, op::Cosh(), c.y[0])); }
void acosh_grad(GradContext& c) { c.dx[0] = div(c.b, c.dy[0], un(c.b, op::Sinh(), c.y[0])); }
void atanh_grad(GradContext& c) { c.dx[0] = div(c.b, c.dy[0], one_minus_square(c.b, c.x[0])); }
void log1p_grad(GradContext& c) { c.dx[0] = div(c.b, c.dy[0], add(c.b, scalar(c.b, c.x[0], 1), c.x[0])); }
void expm1_grad(GradContext& c) { c.dx[0] = mul(c.b, c.dy[0], add(c.b, c.y[0], scalar(c.b, c.y[0], 1))); }
// d/dx erf(x) = 2/sqrt(pi) e^{-x^2}.
Tensor erf_slope(GradBuilder& b, const Tensor& x) {
  return mul(b, scalar(b, x, 2 / std::sqrt(std::numbers::pi)), exp(b, neg(b, mul(b, x, x))));
}
void erf_grad(GradContext& c) { c.dx[0] = mul(c.b, c.dy[0], erf_slope(c.b, c.x[0])); }
void erfc_grad(GradContext& c) { c.dx[0] = neg(c.b, mul(c.b, c.dy[0], erf_slope(c.b, c.x[0]))); }
// d/dx erfinv(x) = sqrt(pi)/2 e^{y^2}.
void erfinv_grad(GradContext& c) {
  const Tensor& y = c.y[0];
  c.dx[0] = mul(c.b, c.dy[0], mul(c.b, scalar(c.b, y, std::sqrt(std::numbers::pi) / 2), exp(c.b, mul(c.b, y, y))));
}
void lgamma_grad(GradContext& c) { c.dx[0] = mul(c.b, c.dy[0], un(c.b, op::Digamma(), c.x[0])); }
void digamma_grad(GradContext& c) {  // trigamma: polygamma(1, x)
  const Tensor one = scalar(c.b, c.x[0], 1);
  c.dx[0] = mul(c.b, c.dy[0], emit1(c.b, op::Polygamma(), {&one, &c.x[0]}));
}
void softplus_grad(GradContext& c) { c.dx[0] = mul(c.b, c.dy[0], un(c.b, op::Sigmoid(), c.x[0])); }
void softsign_grad(GradContext& c) {
  const Tensor d = add(c.b, scalar(c.b, c.x[0], 1), un(c.b, op::Abs(), c.x[0]));
  c.dx[0] = div(c.b, c.dy[0], mul(c.b, d, d));
}
// Where the output is negative the slope is e^x = y + 1 (Elu) or scale*alpha*e^x (Selu).
void elu_grad(GradContext& c) {
  const Tensor& y = c.y[0];
  const Tensor positive = greater(c.b, y, scalar(c.b, y, 0));
  c.dx[0] = where(c.b, positive, c.dy[0], mul(c.b, c.dy[0], add(c.b, y, scalar(c.b, y, 1))));
}
void selu_grad(GradContext& c) {
  const Tensor& y = c.y[0];
  const Tensor positive = greater(c.b, y, scalar(c.b, y, 0));
  c.dx[0] = where(c.b, positive, mul(c.b, c.dy[0], scalar(c.b, y, kSeluScale)),
                  mul(c.b, c.dy[0], add(c.b, y, scalar(c.b, y, kSeluScale * kSeluAlpha))));
}
void leaky_relu_grad(GradContext& c) {
  const Tensor& x = c.x[0];
  const Tensor positive = greater(c.b, x, scalar(c.b, x, 0));
  c.dx[0] = where(c.b, positive, c.dy[0], mul(c.b, c.dy[0], scalar(c.b, x, c.attrs.f(kLeakyAlpha))));
}

constexpr uint32_t kEw = kElementwise;

#define KILN_MATH_OP(Name, Functor, Grad, In, Out)                                            \
  const OpDef& op::Name() {                                                                   \
    static const OpDef def = {.name = #Name,                                                  \
                              .num_inputs = 1,                                                \
                              .num_outputs = 1,                                               \
                              .input_args = {In},                                             \
                              .traits = kEw,                                                  \
                              .infer = infer_unary,                                           \
                              .kernels = kernels_for<UnaryKernel<Functor>::K, KILN_FLOATS>(), \
                              .chunk = &unary_chunk<Functor, KILN_FLOATS>,                    \
                              .grad = Grad,                                                   \
                              .output_args = {Out}};                                          \
    return def;                                                                               \
  }
#define KILN_CLASSIFY_OP(Name, Functor)                                                          \
  const OpDef& op::Name() {                                                                      \
    static const OpDef def = {.name = #Name,                                                     \
                              .num_inputs = 1,                                                   \
                              .num_outputs = 1,                                                  \
                              .input_args = {"x"},                                               \
                              .traits = kEw,                                                     \
                              .infer = infer_classify,                                           \
                              .kernels = kernels_for<ClassifyKernel<Functor>::K, KILN_FLOATS>(), \
                              .grad = &no_gradient,                                              \
                              .output_args = {"y"}};                                             \
    return def;                                                                                  \
  }
}  // namespace

KILN_MATH_OP(Sin, SinF, &sin_grad, "x", "y")
KILN_MATH_OP(Cos, CosF, &cos_grad, "x", "y")
KILN_MATH_OP(Tan, TanF, &tan_grad, "x", "y")
KILN_MATH_OP(Asin, AsinF, &asin_grad, "x", "y")
KILN_MATH_OP(Acos, AcosF, &acos_grad, "x", "y")
KILN_MATH_OP(Atan, AtanF, &atan_grad, "x", "y")
KILN_MATH_OP(Sinh, SinhF, &sinh_grad, "x", "y")
KILN_MATH_OP(Cosh, CoshF, &cosh_grad, "x", "y")
KILN_MATH_OP(Asinh, AsinhF, &asinh_grad, "x", "y")
KILN_MATH_OP(Acosh, AcoshF, &acosh_grad, "x", "y")
KILN_MATH_OP(Atanh, AtanhF, &atanh_grad, "x", "y")
KILN_MATH_OP(Log1p, Log1pF, &log1p_grad, "x", "y")
KILN_MATH_OP(Expm1, Expm1F, &expm1_grad, "x", "y")
KILN_MATH_OP(Erf, ErfF, &erf_grad, "x", "y")
KILN_MATH_OP(Erfc, ErfcF, &erfc_grad, "x", "y")
KILN_MATH_OP(Erfinv, ErfinvF, &erfinv_grad, "x", "y")
KILN_MATH_OP(Lgamma, LgammaF, &lgamma_grad, "x", "y")
KILN_MATH_OP(Digamma, DigammaF, &digamma_grad, "x", "y")
KILN_MATH_OP(Rint, RintF, &no_gradient, "x", "y")
KILN_MATH_OP(Softplus, SoftplusF, &softplus_grad, "features", "activations")
KILN_MATH_OP(Softsign, SoftsignF, &softsign_grad, "features", "activations")
KILN_MATH_OP(Elu, EluF, &elu_grad, "features", "activations")
KILN_MATH_OP(Selu, SeluF, &selu_grad, "features", "activations")
KILN_CLASSIFY_OP(IsNan, IsNanF)
KILN_CLASSIFY_OP(IsInf, IsInfF)
KILN_CLASSIFY_OP(IsFinite, IsFiniteF)

const OpDef& op::LeakyRelu() {
  static const OpDef def = {.name = "LeakyRelu",
                            .num_inputs = 1,
                            .num_outputs = 1,
                            .input_args = {"features"},
                            .traits = kEw,
                            .attr_specs = {float_attr("alpha", static_cast<double>(0.2f))},
                            .infer = infer_unary,
                            .kernels = kernels_for<LeakyReluKernel, KILN_FLOATS>(),
                            .grad = &leaky_relu_grad,
                            .output_args = {"activations"}};
  return def;
}

}  // namespace kiln::ops
