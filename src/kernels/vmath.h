// Vectorized transcendental math over contiguous arrays (Eigen's packet math), instantiated
// once here so the rest of the build never parses Eigen.
#pragma once
#include <cstdint>

namespace kiln::kernels {

#define KILN_VMATH(name)                          \
  void name(const float* x, float* y, int64_t n); \
  void name(const double* x, double* y, int64_t n);
KILN_VMATH(vexp)
KILN_VMATH(vlog)
KILN_VMATH(vtanh)
KILN_VMATH(vsigmoid)
KILN_VMATH(vsqrt)
KILN_VMATH(vrsqrt)
#undef KILN_VMATH

}  // namespace kiln::kernels
