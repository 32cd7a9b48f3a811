#include "kernels/vmath.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "kernels/eigen_core.h"

namespace kiln::kernels {
namespace {
template <class T>
using Arr = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;
template <class T>
using OutArr = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
}  // namespace

#define KILN_VMATH_IMPL(name, expr)                  \
  void name(const float* x, float* y, int64_t n) {   \
    auto a = Arr<float>(x, n);                       \
    OutArr<float>(y, n) = expr;                      \
  }                                                  \
  void name(const double* x, double* y, int64_t n) { \
    auto a = Arr<double>(x, n);                      \
    OutArr<double>(y, n) = expr;                     \
  }
KILN_VMATH_IMPL(vlog, a.log())
KILN_VMATH_IMPL(vtanh, a.tanh())
KILN_VMATH_IMPL(vrsqrt, a.rsqrt())
#undef KILN_VMATH_IMPL

namespace {
// Eigen's vector exp clamps its argument below at about ln(smallest normal) (-88.38 for float,
// -709.78 for double), so exp(-inf) came out as a denormal instead of 0. Elements below the
// clamp are recomputed with the C library, whose results there are IEEE's (denormals, then 0).
template <class T>
constexpr T kExpClamp = std::is_same_v<T, float> ? T(-88.3762626647949) : T(-709.436139303);

template <class T>
void exp_impl(const T* x, T* y, int64_t n) {
  OutArr<T>(y, n) = Arr<T>(x, n).exp();
  for (int64_t i = 0; i < n; ++i)
    if (x[i] < kExpClamp<T>) y[i] = std::exp(x[i]);
}
// sigmoid(x) = 1 / (1 + exp(-x)) over the accurate exp above: within 2 ulps everywhere. Eigen's
// own logistic() returns exp(x) below x = -9 for float, thousands of ulps from the true value.
template <class T>
void sigmoid_impl(const T* x, T* y, int64_t n) {
  constexpr int64_t kChunk = 256;
  T minus_x[kChunk];
  for (int64_t start = 0; start < n; start += kChunk) {
    const int64_t m = std::min(kChunk, n - start);
    for (int64_t i = 0; i < m; ++i) minus_x[i] = -x[start + i];
    exp_impl(minus_x, y + start, m);
    OutArr<T>(y + start, m) = (T(1) + OutArr<T>(y + start, m)).inverse();
  }
}
// A correctly rounded square root, as IEEE (and TensorFlow) give it: Eigen's fast-math
// packet sqrt is an rsqrt estimate with a Newton step, 1 ulp off and NaN for +inf. The file
// is compiled with -fno-math-errno, so this loop becomes vsqrtps/vsqrtpd.
template <class T>
void sqrt_impl(const T* x, T* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::sqrt(x[i]);
}
}  // namespace

void vexp(const float* x, float* y, int64_t n) { exp_impl(x, y, n); }
void vexp(const double* x, double* y, int64_t n) { exp_impl(x, y, n); }
void vsigmoid(const float* x, float* y, int64_t n) { sigmoid_impl(x, y, n); }
void vsigmoid(const double* x, double* y, int64_t n) { sigmoid_impl(x, y, n); }
void vsqrt(const float* x, float* y, int64_t n) { sqrt_impl(x, y, n); }
void vsqrt(const double* x, double* y, int64_t n) { sqrt_impl(x, y, n); }

}  // namespace kiln::kernels
