// vmath's public functions: each runs the variant for this CPU (kernels/isa/vmath_isa.cc).
#include "kernels/vmath.h"

#include "kernels/isa_dispatch.h"

namespace kiln::kernels {

#define KILN_VMATH_DISPATCH(name)                                                  \
  KILN_ISA_DECLARE(void name(const float* x, float* y, int64_t n))                 \
  KILN_ISA_DECLARE(void name(const double* x, double* y, int64_t n))               \
  void name(const float* x, float* y, int64_t n) { KILN_ISA_CALL(name, x, y, n); } \
  void name(const double* x, double* y, int64_t n) { KILN_ISA_CALL(name, x, y, n); }
KILN_VMATH_DISPATCH(vexp)
KILN_VMATH_DISPATCH(vlog)
KILN_VMATH_DISPATCH(vtanh)
KILN_VMATH_DISPATCH(vsigmoid)
KILN_VMATH_DISPATCH(vsqrt)
KILN_VMATH_DISPATCH(vrsqrt)
#undef KILN_VMATH_DISPATCH

}  // namespace kiln::kernels
