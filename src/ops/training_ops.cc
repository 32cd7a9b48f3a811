// TensorFlow's fused optimizer updates (its training_ops): ResourceApplyGradientDescent,
// ResourceApplyKerasMomentum, ResourceApplyAdam. Each updates its variables in one pass
// over memory and in place when nobody holds their values. The same rules written with
// plain ops make a new tensor per step and walk the weights several times, which dominates
// a small model's training step (the MLP's momentum update: two passes and a fresh 800 KB
// buffer, against one pass here).
// Variables are resource attrs, in TensorFlow's input order (GraphDef: the VarHandleOps are
// the first inputs); the scalars and the gradient are data inputs of the variables' dtype.
#include <cmath>

#include "core/parallel.h"
#include "kernels/gemm_short.h"
#include "kernels/isa_dispatch.h"
#include "ops/gradient.h"
#include "ops/helpers.h"
#include "ops/op_list.h"
#include "ops/variable_state.h"

namespace kiln::ops {
namespace {

// Updates split over threads from this size, lower than plain elementwise ops: the gradient
// they read was just written by a product split over the same threads, and the weights were
// read by both. Walking them from one core would first move most of them between cores (on
// the 2-core machine here that made a 2-thread MLP step twice as slow as a 1-thread one).
constexpr int64_t kParallelElements = 32 * 1024;

VariableState& var_at(const Attrs& a, int k) { return *static_cast<VariableState*>(a.resource(k)); }

// The variables lead each row's attrs (TensorFlow's input order); then the flags.
const int kVar = attr_index({{&op::ResourceApplyGradientDescent(), "_resource"},
                             {&op::ResourceApplyKerasMomentum(), "_resource"},
                             {&op::ResourceApplyAdam(), "_resource"}});
const int kAccum = attr_index(op::ResourceApplyKerasMomentum(), "_accum");
const int kMomentumNesterov = attr_index(op::ResourceApplyKerasMomentum(), "use_nesterov");
const int kAdamM = attr_index(op::ResourceApplyAdam(), "_m");
const int kAdamV = attr_index(op::ResourceApplyAdam(), "_v");
const int kAdamNesterov = attr_index(op::ResourceApplyAdam(), "use_nesterov");
const int kUpdateVar = attr_index(op::KilnMatMulUpdate(), "_resource");
const int kUpdateAccum = attr_index(op::KilnMatMulUpdate(), "_accum");
const int kUpdateRule = attr_index(op::KilnMatMulUpdate(), "rule");
const int kUpdateNesterov = attr_index(op::KilnMatMulUpdate(), "use_nesterov");

// Checks shared by the shape functions. `num_vars` resource attrs come first, named in
// `var_names` (TensorFlow's input names); data input `grad` must have the variables' shape
// and every other data input is a scalar, all of the variables' dtype.
void infer_apply(InferContext& c, int num_vars, const std::vector<const char*>& var_names,
                 const std::vector<const char*>& input_names, int grad) {
  const VariableState& var = var_at(c.attrs, kVar);
  // Distinct variables: the kernel locks them all at once, and one mutex cannot be taken twice.
  for (int k = 1; k < num_vars; ++k)
    for (int j = 0; j < k; ++j)
      if (c.attrs.resource(j) == c.attrs.resource(k))
        c.fail(std::string(var_names[j]) + " and " + var_names[k] + " must be different variables");
  for (int k = 1; k < num_vars; ++k) {
    const VariableState& other = var_at(c.attrs, k);
    if (other.dtype() != var.dtype())
      c.fail(std::string("var and ") + var_names[k] + " have different dtypes: " + tf_type_name(var.dtype()) + " vs. " +
             tf_type_name(other.dtype()));
    if (other.shape() != var.shape())
      c.fail(std::string("var and ") + var_names[k] + " do not have the same shape" + dims_text(var.shape().dims()) +
             " " + dims_text(other.shape().dims()));
  }
  if (!is_floating(var.dtype()))
    c.fail(std::string("var '") + var.resource_name() + "' is " + tf_type_name(var.dtype()) +
           "; only float and double variables can be trained");
  for (int i = 0; i < c.num_inputs; ++i) {
    const InputInfo& in = c.in(i);
    if (in.dtype != var.dtype())
      c.fail(std::string("cannot compute ") + c.op.name + " as input #" + std::to_string(i + num_vars) +
             "(zero-based) was expected to be a " + tf_type_name(var.dtype()) + " tensor but is a " +
             tf_type_name(in.dtype) + " tensor");
    if (in.unknown_rank) continue;
    const Dims& d = *in.dims;
    if (i != grad) {
      if (!d.empty()) c.fail(std::string(input_names[i]) + " is not a scalar: " + dims_text(d));
      continue;
    }
    const auto& want = var.shape().dims();
    bool ok = d.size() == want.size();
    for (size_t j = 0; ok && j < d.size(); ++j) ok = d[j] < 0 || d[j] == want[j];
    if (!ok) c.fail("var and grad do not have the same shape" + dims_text(Dims(want)) + " " + dims_text(d));
  }
  c.kernel_dtype = var.dtype();
}

// The run-time half of the checks (shapes unknown while tracing).
void check_grad(const KernelContext& c, const TensorImpl& var, const TensorImpl& grad) {
  if (grad.dims != var.dims)
    c.fail("var and grad do not have the same shape" + dims_text(var.dims) + " " + dims_text(grad.dims));
}
template <class T>
T scalar(const KernelContext& c, int i) {
  return c.in(i).as<T>()[0];
}

// The updates' loops over [lo, hi), built per instruction set (kernels/isa_dispatch.h). The
// file has no multiply-add contraction at any level, so every level rounds alike.
template <class T>
KILN_ISA_BODY void gradient_descent_body(T* __restrict w, const T* __restrict d, T alpha, int64_t lo, int64_t hi) {
  for (int64_t i = lo; i < hi; ++i) w[i] = kernels::gradient_descent_rule(w[i], alpha, d[i]);
}
template <class T, bool kNesterov>
KILN_ISA_BODY void keras_momentum_body(T* __restrict w, T* __restrict a, const T* __restrict g, T lr, T momentum,
                                       int64_t lo, int64_t hi) {
  for (int64_t i = lo; i < hi; ++i) kernels::keras_momentum_rule(w[i], a[i], lr, momentum, kNesterov, g[i]);
}

// var -= alpha * delta. Inputs: alpha, delta.
void infer_gradient_descent(InferContext& c) { infer_apply(c, 1, {"var"}, {"alpha", "delta"}, 1); }
template <class T>
struct GradientDescentKernel {
  static void run(KernelContext& c) {
    const T alpha = scalar<T>(c, 0);
    const TensorImpl& delta = c.in(1);
    VariableState::update_in_place(
        [&](TensorImpl& var) {
          check_grad(c, var, delta);
          T* __restrict w = var.as<T>();
          const T* __restrict d = delta.as<T>();  // writable values share memory with nothing
          parallel_for(var.num_elements, kParallelElements, [&](int64_t lo, int64_t hi) {
            KILN_ISA_DISPATCH((gradient_descent_body(w, d, alpha, lo, hi)));
          });
        },
        var_at(c.attrs, kVar));
  }
};

// accum = accum * momentum - lr * grad; var += accum (Nesterov: var += accum * momentum -
// lr * grad). Inputs: lr, grad, momentum. Keras's SGD rule.
void infer_keras_momentum(InferContext& c) { infer_apply(c, 2, {"var", "accum"}, {"lr", "grad", "momentum"}, 1); }
template <class T>
struct KerasMomentumKernel {
  static void run(KernelContext& c) {
    const T lr = scalar<T>(c, 0), momentum = scalar<T>(c, 2);
    const TensorImpl& grad = c.in(1);
    const bool nesterov = c.attrs.b(kMomentumNesterov);
    VariableState::update_in_place(
        [&](TensorImpl& var, TensorImpl& accum) {
          check_grad(c, var, grad);
          T* __restrict w = var.as<T>();
          T* __restrict a = accum.as<T>();
          const T* __restrict g = grad.as<T>();
          parallel_for(var.num_elements, kParallelElements, [&](int64_t lo, int64_t hi) {
            if (nesterov)
              KILN_ISA_DISPATCH((keras_momentum_body<T, true>(w, a, g, lr, momentum, lo, hi)));
            else
              KILN_ISA_DISPATCH((keras_momentum_body<T, false>(w, a, g, lr, momentum, lo, hi)));
          });
        },
        var_at(c.attrs, kVar), var_at(c.attrs, kAccum));
  }
};

// lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power); m += (grad - m) * (1 - beta1);
// v += (grad^2 - v) * (1 - beta2); var -= lr_t * m / (sqrt(v) + epsilon) (Nesterov:
// lr_t * (grad * (1 - beta1) + beta1 * m) / (sqrt(v) + epsilon)). Inputs: beta1_power,
// beta2_power, lr, beta1, beta2, epsilon, grad. Keras's Adam rule.
void infer_adam(InferContext& c) {
  infer_apply(c, 3, {"var", "m", "v"}, {"beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon", "grad"}, 6);
}
template <class T>
struct AdamKernel {
  static void run(KernelContext& c) {
    const T beta1_power = scalar<T>(c, 0), beta2_power = scalar<T>(c, 1), lr = scalar<T>(c, 2);
    const T beta1 = scalar<T>(c, 3), beta2 = scalar<T>(c, 4), epsilon = scalar<T>(c, 5);
    const TensorImpl& grad = c.in(6);
    const bool nesterov = c.attrs.b(kAdamNesterov);
    const T lr_t = lr * std::sqrt(T(1) - beta2_power) / (T(1) - beta1_power);
    VariableState::update_in_place(
        [&](TensorImpl& var, TensorImpl& m_t, TensorImpl& v_t) {
          check_grad(c, var, grad);
          T* __restrict w = var.as<T>();
          T* __restrict m = m_t.as<T>();
          T* __restrict v = v_t.as<T>();
          const T* __restrict g = grad.as<T>();
          parallel_for(var.num_elements, kParallelElements, [&](int64_t lo, int64_t hi) {
            for (int64_t i = lo; i < hi; ++i) {
              m[i] += (g[i] - m[i]) * (T(1) - beta1);
              v[i] += (g[i] * g[i] - v[i]) * (T(1) - beta2);
              const T step = nesterov ? g[i] * (T(1) - beta1) + beta1 * m[i] : m[i];
              w[i] -= lr_t * step / (std::sqrt(v[i]) + epsilon);
            }
          });
        },
        var_at(c.attrs, kVar), var_at(c.attrs, kAdamM), var_at(c.attrs, kAdamV));
  }
};

// KilnMatMulUpdate(a, b, scalars...): an update whose gradient is MatMul(a, b,
// transpose_a=true), the product computed tile by tile with the update applied to each tile
// while it is in registers (kernels/gemm_short.h). Made by the optimizer's fuse_weight_update
// from MatMul -> ResourceApplyGradientDescent or -> Mul by a scalar -> AssignSubVariableOp
// (rule "gradient_descent", scalar: the rate), and from MatMul -> ResourceApplyKerasMomentum
// (rule "keras_momentum", scalars: lr, momentum). Bit for bit the ops it replaces: MatMul
// sends the same products to the same kernel, and the rules are the ops' own.
struct UpdateRule {
  enum Kind { kGradientDescent, kKerasMomentum } kind;
  int scalars;
};
UpdateRule update_rule(const std::string& name) {
  if (name == "gradient_descent") return {UpdateRule::kGradientDescent, 1};
  if (name == "keras_momentum") return {UpdateRule::kKerasMomentum, 2};
  throw InvalidArgumentError("KilnMatMulUpdate: unknown rule '" + name + "'");
}

void infer_matmul_update(InferContext& c) {
  const UpdateRule rule = update_rule(c.attrs.s(kUpdateRule));
  if (c.num_inputs != 2 + rule.scalars) c.fail("KilnMatMulUpdate: wrong number of inputs");
  const VariableState& var = var_at(c.attrs, kUpdateVar);
  for (int i = 0; i < c.num_inputs; ++i)
    if (c.in(i).dtype != DType::Float32 || var.dtype() != DType::Float32) c.fail("KilnMatMulUpdate is float32 only");
  if (rule.kind == UpdateRule::kKerasMomentum && c.attrs.resource(kUpdateAccum) == c.attrs.resource(kUpdateVar))
    c.fail("var and accum must be different variables");
  c.kernel_dtype = DType::Float32;
}

void run_matmul_update(KernelContext& c) {
  const UpdateRule rule = update_rule(c.attrs.s(kUpdateRule));
  const TensorImpl& a = c.in(0);
  const TensorImpl& b = c.in(1);
  if (a.dims.size() != 2 || b.dims.size() != 2 || a.dims[0] != b.dims[0])
    c.fail("KilnMatMulUpdate: a and b must be matrices with equal rows");
  const int64_t k = a.dims[0], m = a.dims[1], n = b.dims[1];
  const float s0 = scalar<float>(c, 2), s1 = rule.scalars > 1 ? scalar<float>(c, 3) : 0.0f;
  auto check = [&](const TensorImpl& v) {
    if (v.dims.size() != 2 || v.dims[0] != m || v.dims[1] != n)
      c.fail("var and grad do not have the same shape" + dims_text(v.dims) + " " + dims_text(Dims{m, n}));
  };
  if (!kernels::short_inner_tn(true, false, m, n, k))
    c.fail("KilnMatMulUpdate: a [" + std::to_string(k) + "," + std::to_string(m) +
           "] product the fused kernel does "
           "not take (the optimizer fuses only short inner dimensions)");
  switch (rule.kind) {
    case UpdateRule::kGradientDescent:
      VariableState::update_in_place(
          [&](TensorImpl& var) {
            check(var);
            kernels::gemm_tn_short(m, n, k, a.as<float>(), b.as<float>(),
                                   kernels::GradientDescentRule{.var = var.as<float>(), .ld = n, .alpha = s0});
          },
          var_at(c.attrs, kUpdateVar));
      return;
    case UpdateRule::kKerasMomentum:
      VariableState::update_in_place(
          [&](TensorImpl& var, TensorImpl& accum) {
            check(var);
            check(accum);
            kernels::gemm_tn_short(m, n, k, a.as<float>(), b.as<float>(),
                                   kernels::KerasMomentumRule{.var = var.as<float>(),
                                                              .accum = accum.as<float>(),
                                                              .ld = n,
                                                              .lr = s0,
                                                              .momentum = s1,
                                                              .nesterov = c.attrs.b(kUpdateNesterov)});
          },
          var_at(c.attrs, kUpdateVar), var_at(c.attrs, kUpdateAccum));
      return;
  }
}

}  // namespace

// No gradients: they have no outputs (a tape never records them).
const OpDef& op::ResourceApplyGradientDescent() {
  static const OpDef def = {.name = "ResourceApplyGradientDescent",
                            .num_inputs = 2,
                            .num_outputs = 0,
                            .input_args = {"alpha", "delta"},
                            .traits = kStateful,
                            .attr_specs = {resource_attr("_resource", "var"), bool_attr("use_locking", false)},
                            .infer = infer_gradient_descent,
                            .kernels = kernels_for<GradientDescentKernel, KILN_FLOATS>(),
                            .grad = &no_gradient};
  return def;
}
const OpDef& op::ResourceApplyKerasMomentum() {
  static const OpDef def = {.name = "ResourceApplyKerasMomentum",
                            .num_inputs = 3,
                            .num_outputs = 0,
                            .input_args = {"lr", "grad", "momentum"},
                            .traits = kStateful,
                            .attr_specs = {resource_attr("_resource"), resource_attr("_accum"),
                                           bool_attr("use_locking", false), bool_attr("use_nesterov", false)},
                            .infer = infer_keras_momentum,
                            .kernels = kernels_for<KerasMomentumKernel, KILN_FLOATS>(),
                            .grad = &no_gradient};
  return def;
}
const OpDef& op::KilnMatMulUpdate() {
  static const OpDef def = {.name = "KilnMatMulUpdate",
                            .num_inputs = -1,
                            .num_outputs = 0,
                            .input_args = {list_arg("inputs")},
                            .traits = kStateful | kInternal,
                            .attr_specs = {resource_attr("_resource"), resource_attr("_accum"), string_attr("rule"),
                                           bool_attr("use_nesterov", false)},
                            .infer = infer_matmul_update,
                            .any_dtype_kernel = &run_matmul_update,
                            .type_attr = nullptr,
                            .grad = &no_gradient};
  return def;
}
const OpDef& op::ResourceApplyAdam() {
  static const OpDef def = {.name = "ResourceApplyAdam",
                            .num_inputs = 7,
                            .num_outputs = 0,
                            .input_args = {"beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon", "grad"},
                            .traits = kStateful,
                            .attr_specs = {resource_attr("_resource"), resource_attr("_m"), resource_attr("_v"),
                                           bool_attr("use_locking", false), bool_attr("use_nesterov", false)},
                            .infer = infer_adam,
                            .kernels = kernels_for<AdamKernel, KILN_FLOATS>(),
                            .grad = &no_gradient};
  return def;
}

}  // namespace kiln::ops
