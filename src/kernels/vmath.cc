// vmath's public functions: each runs the variant for this CPU (kernels/isa/vmath_isa.cc).
#include "kernels/vmath.h"

#include <dlfcn.h>

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

KILN_ISA_DECLARE(void vdivide_by_scalar(const float* x, float s, float* y, int64_t n))
void vdivide_by_scalar(const float* x, float s, float* y, int64_t n) { KILN_ISA_CALL(vdivide_by_scalar, x, s, y, n); }

KILN_ISA_DECLARE(int64_t vlanes(const LaneStep* steps, int num_steps, int num_inputs, const float* const* inputs,
                                const char* scalar, float* out, int64_t n))
int64_t vlanes(const LaneStep* steps, int num_steps, int num_inputs, const float* const* inputs, const char* scalar,
               float* out, int64_t n) {
  KILN_ISA_CALL(vlanes, steps, num_steps, num_inputs, inputs, scalar, out, n);
}

void plan_lanes(LaneStep* steps, int num_steps) {
  for (int s = 0; s < num_steps; ++s) {
    LaneStep& st = steps[s];
    const int prev = s > 0 ? steps[s - 1].dst : -1;
    st.a_prev = st.a == prev;
    st.b_prev = st.b >= 0 && st.b == prev;
    // Kept when a step after the next reads it before a step overwrites its register (the next
    // step reads it from the accumulator; a step reading and writing it reads the old value).
    st.keep = false;
    for (int t = s + 1; t < num_steps && !st.keep; ++t) {
      if (t > s + 1 && (steps[t].a == st.dst || steps[t].b == st.dst)) st.keep = true;
      if (steps[t].dst == st.dst) break;
    }
  }
}

KILN_ISA_DECLARE(void verfc(const float* x, float* y, int64_t n))
void verfc(const float* x, float* y, int64_t n) { KILN_ISA_CALL(verfc, x, y, n); }

const void* libmvec_symbol(const char* name) {
  // Opened once, never closed: the functions stay valid for the process's life.
  static void* const lib = dlopen("libmvec.so.1", RTLD_NOW | RTLD_LOCAL);
  return lib ? dlsym(lib, name) : nullptr;
}

}  // namespace kiln::kernels
