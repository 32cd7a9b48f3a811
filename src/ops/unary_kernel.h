// The kernel of an elementwise unary op, from a functor: `f<T>(x)` per element, or
// `vec<T>(x, y, n)` over a run (vectorized math). Shared by the unary op families.
#pragma once
#include <cstdint>

#include "core/parallel.h"
#include "kernels/isa_dispatch.h"
#include "ops/helpers.h"

namespace kiln::ops {

// Element counts above which a kernel splits across threads: transcendental functions cost
// ~10 ns per 8 elements, plain arithmetic is bound by memory and pays off only when large.
constexpr int64_t kParallelTranscendental = 32 * 1024;
constexpr int64_t kParallelSimple = 256 * 1024;

// y[i] = f(x[i]) over a run, built for each instruction-set level (kernels/isa_dispatch.h).
template <class F, class T>
KILN_ISA_BODY void unary_loop_body(const T* x, T* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = F::template f<T>(x[i]);
}
template <class F, class T>
void unary_loop(const T* x, T* y, int64_t n) {
  KILN_ISA_DISPATCH((unary_loop_body<F, T>(x, y, n)));
}

template <class F>
struct UnaryKernel {
  template <class T>
  struct K {
    static void run(KernelContext& c) {
      const T* x = c.in(0).as<T>();
      T* y = c.out(0).as<T>();
      const int64_t n = c.out(0).num_elements;
      if constexpr (requires { F::template vec<T>(x, y, n); }) {
        parallel_for(n, kParallelTranscendental,
                     [&](int64_t b, int64_t e) { F::template vec<T>(x + b, y + b, e - b); });
      } else {
        parallel_for(n, kParallelSimple, [&](int64_t b, int64_t e) { unary_loop<F, T>(x + b, y + b, e - b); });
      }
    }
  };
};

// The op over a run of elements, for fused kernels (same functor as the op's kernel).
template <class F, class T>
void unary_run(const void* a, bool sa, void* out, int64_t n) {
  const T* pa = static_cast<const T*>(a);
  T* po = static_cast<T*>(out);
  if constexpr (requires { F::template vec<T>(pa, po, n); }) {
    if (sa) {
      T v;
      F::template vec<T>(pa, &v, 1);
      for (int64_t i = 0; i < n; ++i) po[i] = v;
    } else {
      F::template vec<T>(pa, po, n);
    }
  } else {
    if (sa) {
      const T v = F::template f<T>(pa[0]);
      for (int64_t i = 0; i < n; ++i) po[i] = v;
    } else {
      unary_loop<F, T>(pa, po, n);
    }
  }
}
// Only the dtypes the op supports are instantiated.
template <class F, class... Ts>
void unary_chunk(DType d, const void* a, bool sa, const void*, bool, void* out, int64_t n) {
  ((d == TypeOf<Ts>::value ? unary_run<F, Ts>(a, sa, out, n) : void()), ...);
}

}  // namespace kiln::ops
