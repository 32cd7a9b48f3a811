// The ops between complex numbers and their parts: Real, Imag, Angle and ComplexAbs (complex
// to its real type, attr Tout), Conj (complex to complex) and Complex (two real tensors,
// broadcast, to complex, attr Tout). complex64 pairs with float32, complex128 with float64.
#include <cmath>

#include "kernels/broadcast.h"
#include "ops/gradient.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

DType complex_of(DType real) { return real == DType::Float32 ? DType::Complex64 : DType::Complex128; }

void require_complex(const InferContext& c, DType t) {
  require_type_in(c, "T", t, {DType::Complex64, DType::Complex128});
}

// Real/Imag/Angle/ComplexAbs: Tout must be the input's real type (TensorFlow registers only
// those pairs).
void infer_part(InferContext& c) {
  const DType t = c.in(0).dtype, out = c.attrs.type(0);
  require_complex(c, t);
  if (out != real_of(t))
    c.fail(std::string("Tout ") + tf_type_name(out) + " does not match the input's real type " +
           tf_type_name(real_of(t)));
  c.kernel_dtype = t;
  c.out(0).dtype = out;
  c.out(0).shape = shape_of(c.in(0));
}

struct RealF {
  template <class C>
  static auto f(C v) {
    return v.real();
  }
};
struct ImagF {
  template <class C>
  static auto f(C v) {
    return v.imag();
  }
};
struct AngleF {
  template <class C>
  static auto f(C v) {
    return std::arg(v);
  }
};
struct ComplexAbsF {
  template <class C>
  static auto f(C v) {
    return std::hypot(v.real(), v.imag());
  }
};
template <class F>
struct PartKernel {
  template <class C>
  struct K {
    static void run(KernelContext& c) {
      const C* x = c.in(0).as<C>();
      auto* y = c.out(0).as<typename C::value_type>();
      for (int64_t i = 0; i < c.in(0).num_elements; ++i) y[i] = F::f(x[i]);
    }
  };
};

void infer_conj(InferContext& c) {
  require_complex(c, c.in(0).dtype);
  infer_unary(c);
}
template <class C>
struct ConjKernel {
  static void run(KernelContext& c) {
    const C* x = c.in(0).as<C>();
    C* y = c.out(0).as<C>();
    for (int64_t i = 0; i < c.in(0).num_elements; ++i) y[i] = std::conj(x[i]);
  }
};

// Complex(real, imag): both float or both double, broadcast; Tout their complex type.
void infer_complex(InferContext& c) {
  const DType t = c.in(0).dtype, out = c.attrs.type(0);
  require_type_in(c, "T", t, {DType::Float32, DType::Float64});
  require_same_dtypes(c, 0, 1);
  if (out != complex_of(t))
    c.fail(std::string("Tout ") + tf_type_name(out) + " does not match the inputs' complex type " +
           tf_type_name(complex_of(t)));
  c.kernel_dtype = t;
  c.out(0).dtype = out;
  c.out(0).shape = broadcast_shapes(c, c.in(0), c.in(1));
}
template <class R>
struct ComplexKernel {
  static void run(KernelContext& c) {
    const R* re = c.in(0).as<R>();
    const R* im = c.in(1).as<R>();
    auto* z = c.out(0).as<std::complex<R>>();
    kernels::BroadcastPlan<2> plan(c.out(0).dims, {&c.in(0).dims, &c.in(1).dims});
    plan.for_each_run([&](const std::array<int64_t, 2>& off, int64_t count, const std::array<int64_t, 2>& st) {
      for (int64_t i = 0; i < count; ++i) z[i] = std::complex<R>(re[off[0] + i * st[0]], im[off[1] + i * st[1]]);
      z += count;
    });
  }
};

}  // namespace

#define KILN_COMPLEX_PART_OP(Name, Functor, InArg, OutArg)                                          \
  const OpDef& op::Name() {                                                                         \
    static const OpDef def = {.name = #Name,                                                        \
                              .num_inputs = 1,                                                      \
                              .num_outputs = 1,                                                     \
                              .input_args = {InArg},                                                \
                              .traits = kElementwise,                                               \
                              .attr_specs = {type_attr("Tout", DType::Float32)},                    \
                              .infer = infer_part,                                                  \
                              .kernels = kernels_for<PartKernel<Functor>::K, KILN_COMPLEX_TYPES>(), \
                              .grad = &no_gradient,                                                 \
                              .output_args = {OutArg}};                                             \
    return def;                                                                                     \
  }
KILN_COMPLEX_PART_OP(Real, RealF, "input", "output")
KILN_COMPLEX_PART_OP(Imag, ImagF, "input", "output")
KILN_COMPLEX_PART_OP(Angle, AngleF, "input", "output")
KILN_COMPLEX_PART_OP(ComplexAbs, ComplexAbsF, "x", "y")

const OpDef& op::Conj() {
  static const OpDef def = {.name = "Conj",
                            .num_inputs = 1,
                            .num_outputs = 1,
                            .input_args = {"input"},
                            .traits = kElementwise,
                            .infer = infer_conj,
                            .kernels = kernels_for<ConjKernel, KILN_COMPLEX_TYPES>(),
                            .grad = &no_gradient};
  return def;
}
const OpDef& op::Complex() {
  static const OpDef def = {.name = "Complex",
                            .num_inputs = 2,
                            .num_outputs = 1,
                            .input_args = {"real", "imag"},
                            .traits = kElementwise,
                            .attr_specs = {type_attr("Tout", DType::Complex64)},
                            .infer = infer_complex,
                            .kernels = kernels_for<ComplexKernel, KILN_FLOATS>(),
                            .grad = &no_gradient,
                            .output_args = {"out"}};
  return def;
}

}  // namespace kiln::ops
