#include "kernels/vmath.h"

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
KILN_VMATH_IMPL(vexp, a.exp())
KILN_VMATH_IMPL(vlog, a.log())
KILN_VMATH_IMPL(vtanh, a.tanh())
KILN_VMATH_IMPL(vsigmoid, a.logistic())
KILN_VMATH_IMPL(vsqrt, a.sqrt())
KILN_VMATH_IMPL(vrsqrt, a.rsqrt())
#undef KILN_VMATH_IMPL

}  // namespace kiln::kernels
